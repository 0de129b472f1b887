/*
 * sigwrap.c: under `infprof run`, the program's handlers of the signals the run passes on
 * (RUNSIG_SET) are installed behind a trampoline that notes each delivery on the run's page
 * before calling them (profiler/runsig.h: so that the run does not give the program a signal its
 * process group already gave it). The program reads back its own handler, flags and mask, as
 * without us; its handler gets the same arguments. Outside `infprof run`, or where the page
 * could not be mapped, nothing is wrapped.
 */
#include "sigwrap.h"
#include "../profiler/runsig.h"

#include <dlfcn.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);

/* Per signal, the program's handler in two slots: the trampoline reads the current one while a
 * change is written into the other. */
static struct sigaction sw_prog[32][2];
static _Atomic int sw_cur[32];
static atomic_flag sw_lock = ATOMIC_FLAG_INIT;
/* Bit per signal: its handler is wrapped, and SA_SIGINFO was ours to add (the kernel keeps it
 * once SA_RESETHAND has set the default again, where the program's read would not have it). */
static _Atomic uint32_t sw_added_info;

static void sw_tramp(int sig, siginfo_t *si, void *uc)
{
    runsig_note(sig, si);
    const struct sigaction *a = &sw_prog[sig][atomic_load(&sw_cur[sig])];
    if (a->sa_flags & SA_RESETHAND) runsig_handled(sig, 0); /* the default again, from now */
    if (a->sa_flags & SA_SIGINFO)
        a->sa_sigaction(sig, si, uc);
    else if (a->sa_handler != SIG_DFL && a->sa_handler != SIG_IGN)
        a->sa_handler(sig);
}

static int sw_is_tramp(const struct sigaction *a)
{
    return (a->sa_flags & SA_SIGINFO) && a->sa_sigaction == sw_tramp;
}

/* `was` (the kernel's: its flags with SA_RESTORER, its mask without SIGKILL and SIGSTOP) as the
 * program would read it: its own handler where ours is in, and SA_SIGINFO only where it set it. */
static void sw_as_set(int sig, struct sigaction *was, const struct sigaction *prog)
{
    int added = (atomic_load(&sw_added_info) >> sig) & 1;
    if (sw_is_tramp(was)) {
        int flags = (was->sa_flags & ~SA_SIGINFO) | (prog->sa_flags & SA_SIGINFO);
        if (prog->sa_flags & SA_SIGINFO)
            was->sa_sigaction = prog->sa_sigaction;
        else
            was->sa_handler = prog->sa_handler;
        was->sa_flags = flags;
    } else if (added && (was->sa_handler == SIG_DFL || was->sa_handler == SIG_IGN)) {
        was->sa_flags &= ~SA_SIGINFO; /* SA_RESETHAND set the default again */
    }
}

void sigwrap_atfork_child(void)
{
    atomic_flag_clear(&sw_lock); /* a thread of the parent's may have held it at the fork */
}

/* A handler of the program's own (not the default, not ignored), for a signal the run passes on,
 * in a process attached to the run's page. */
static int sw_wants(int sig, const struct sigaction *act)
{
    return act && sig > 0 && sig < 32 && (RUNSIG_SET & (1u << sig)) && runsig_attached() &&
           act->sa_handler != SIG_DFL && act->sa_handler != SIG_IGN && !sw_is_tramp(act);
}

/* The table is changed with every signal blocked on this thread (a handler that calls sigaction
 * cannot come in while the lock is held) and the lock taken against other threads. */
static void sw_enter(sigset_t *saved)
{
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, saved);
    while (atomic_flag_test_and_set_explicit(&sw_lock, memory_order_acquire)) {
    }
}

static void sw_leave(const sigset_t *saved)
{
    atomic_flag_clear_explicit(&sw_lock, memory_order_release);
    pthread_sigmask(SIG_SETMASK, saved, NULL);
}

/* The trampoline's disposition for the program's act, which goes into the table's other slot
 * (made current by sw_done once the kernel holds it). */
static struct sigaction sw_wrap(int sig, int cur, const struct sigaction *act)
{
    struct sigaction wrapped = *act;
    sw_prog[sig][!cur] = *act;
    wrapped.sa_flags |= SA_SIGINFO;
    wrapped.sa_sigaction = sw_tramp;
    return wrapped;
}

/* The kernel took a new disposition for sig: the program's own behind the trampoline (wrapped:
 * its slot made current, SA_SIGINFO ours where it had none) or not (the default, ignored,
 * held: nothing of ours, the run passes a signal on at once). */
static void sw_done(int sig, int cur, int wrapped)
{
    uint32_t bit = 1u << sig;
    if (wrapped) atomic_store(&sw_cur[sig], !cur);
    runsig_handled(sig, wrapped);
    if (wrapped && !(sw_prog[sig][!cur].sa_flags & SA_SIGINFO))
        atomic_fetch_or(&sw_added_info, bit);
    else
        atomic_fetch_and(&sw_added_info, ~bit);
}

int sigwrap_sigaction(sigaction_fn real, int sig, const struct sigaction *act,
                      struct sigaction *old)
{
    if (!runsig_attached() || sig <= 0 || sig >= 32 || !(RUNSIG_SET & (1u << sig)))
        return real(sig, act, old);
    sigset_t saved;
    sw_enter(&saved);
    int cur = atomic_load(&sw_cur[sig]);
    struct sigaction prev = sw_prog[sig][cur], wrapped;
    int wrap = sw_wants(sig, act);
    if (wrap) {
        wrapped = sw_wrap(sig, cur, act);
        act = &wrapped;
    }
    struct sigaction was;
    int rc = real(sig, act, &was);
    if (rc == 0 && old) {
        sw_as_set(sig, &was, &prev);
        *old = was;
    }
    if (rc == 0 && act) sw_done(sig, cur, wrap);
    sw_leave(&saved);
    return rc;
}

sighandler_t sigwrap_after_signal(sigaction_fn real, int sig, sighandler_t prev)
{
    if (!runsig_attached() || sig <= 0 || sig >= 32 || !(RUNSIG_SET & (1u << sig))) return prev;
    sigset_t saved;
    sw_enter(&saved);
    int cur = atomic_load(&sw_cur[sig]);
    const struct sigaction *p = &sw_prog[sig][cur];
    if (prev == (sighandler_t)(void (*)(void))sw_tramp)
        prev = p->sa_flags & SA_SIGINFO ? (sighandler_t)(void (*)(void))p->sa_sigaction
                                        : p->sa_handler;
    /* signal() and its relatives set the program's handler themselves: wrapped again here. */
    struct sigaction now;
    if (real(sig, NULL, &now) == 0 && sw_wants(sig, &now)) {
        struct sigaction wrapped = sw_wrap(sig, cur, &now);
        if (real(sig, &wrapped, NULL) == 0) sw_done(sig, cur, 1);
    } else {
        sw_done(sig, cur, 0); /* the default, ignored, or held */
    }
    sw_leave(&saved);
    return prev;
}
