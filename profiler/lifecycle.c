/*
 * lifecycle.c: start, the one finish, fork, and the signal handlers that flush before the
 * default action happens (lifecycle.h).
 *
 * Signals: handlers are installed only where the disposition is still the default, and
 * preload.c's sigaction()/signal() hide them from the program (it reads SIG_DFL, as it would
 * without us) and give way as soon as the program installs its own.
 */
#include "lifecycle.h"
#include "clock.h"
#include "config.h"
#include "fdguard.h"
#include "futex.h"
#include "log.h"
#include "phase.h"
#include "ring.h"
#include "rlimits.h"
#include "runinfo.h"
#include "runsig.h"
#include "thread.h"
#include "writer.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static _Atomic uint32_t life_signals_ours; /* bit per signal number < 32 */
static const char *life_output;

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
static sigaction_fn life_sigaction;

static const struct {
    int sig;
    const char *reason;
} life_signals[] = {
    {SIGTERM, "signal SIGTERM"},     {SIGINT, "signal SIGINT"},   {SIGHUP, "signal SIGHUP"},
    {SIGQUIT, "signal SIGQUIT"},     {SIGABRT, "signal SIGABRT"}, {SIGSEGV, "signal SIGSEGV"},
    {SIGBUS, "signal SIGBUS"},       {SIGFPE, "signal SIGFPE"},   {SIGILL, "signal SIGILL"},
    {SIGPIPE, "signal SIGPIPE"},     {SIGALRM, "signal SIGALRM"}, {SIGUSR1, "signal SIGUSR1"},
    {SIGUSR2, "signal SIGUSR2"},     {SIGXCPU, "signal SIGXCPU"}, {SIGXFSZ, "signal SIGXFSZ"},
    {SIGVTALRM, "signal SIGVTALRM"},
};

int ip_lifecycle_library_path(char *out, size_t n)
{
    Dl_info info;
    char self[PATH_MAX], exe[PATH_MAX];
    if (!dladdr((void *)ip_lifecycle_library_path, &info) || !info.dli_fname ||
        !realpath(info.dli_fname, self) || !realpath("/proc/self/exe", exe) || !strcmp(self, exe))
        return -1;
    snprintf(out, n, "%s", self);
    return 0;
}

void ip_lifecycle_exit_now(void)
{
    /* A thread with a ring of its own only: making one (pthread_once, pthread_setspecific) is
     * not safe in a signal handler, and _exit may be called from one. */
    if (!ip_active() || !ip_process_owns() || !ip_self.ring || !ip_hook_enter()) return;
    for (int i = 0; i < ip_collector_count(); i++)
        if (ip_collector_at(i) && ip_collector_at(i)->exit_now) ip_collector_at(i)->exit_now();
    ip_hook_leave();
}

static void life_on_signal(int sig, siginfo_t *si, void *uc);

int ip_lifecycle_signal_is_ours(int sig)
{
    if (sig <= 0 || sig >= 32 || !(atomic_load(&life_signals_ours) & (1u << sig))) return 0;
    /* The program may have replaced it past our hooks (a raw rt_sigaction, a libc entry we do
     * not hook): then its handler is what it reads back, and ours is forgotten. */
    struct sigaction cur;
    if (life_sigaction && life_sigaction(sig, NULL, &cur) == 0 &&
        (!(cur.sa_flags & SA_SIGINFO) || cur.sa_sigaction != life_on_signal)) {
        atomic_fetch_and(&life_signals_ours, ~(1u << sig));
        return 0;
    }
    return 1;
}

void ip_lifecycle_signal_released(int sig)
{
    if (sig > 0 && sig < 32) atomic_fetch_and(&life_signals_ours, ~(1u << sig));
}

int ip_lifecycle_signal_keep(int sig)
{
    if (!ip_active() || !life_sigaction || sig <= 0 || sig >= 32) return 0;
    int watched = 0;
    for (size_t i = 0; i < sizeof life_signals / sizeof life_signals[0]; i++)
        watched |= life_signals[i].sig == sig;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = life_on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (!watched || life_sigaction(sig, &sa, NULL) != 0) return 0;
    atomic_fetch_or(&life_signals_ours, 1u << sig);
    return 1;
}

static uint64_t finish_timeout(int from_signal)
{
    /* A fatal signal: the process dies within this, written or not (the last commit stands). */
    uint64_t t = (uint64_t)ip_cfg_int(IP_CFG_FINISH_TIMEOUT_MS);
    return from_signal && t > IP_SIGNAL_FINISH_MS ? IP_SIGNAL_FINISH_MS : t;
}

void ip_lifecycle_finish(const char *reason, int from_signal)
{
    if (!ip_process_owns()) return; /* a vfork child: the memory is the parent's */
    int expect = IP_STATE_ACTIVE;
    ip_finisher = 1; /* this thread's last records still count; no other thread's do */
    if (!atomic_compare_exchange_strong(&ip_state_v, &expect, IP_STATE_FINISHING)) {
        ip_finisher = 0;
        /* Someone else is finishing (an exit racing a signal): give them the same time. */
        if (expect == IP_STATE_FINISHING) ip_writer_stop(reason, finish_timeout(from_signal));
        return;
    }
    if (!from_signal) {
        ip_phase_emit_end();
        for (int i = ip_collector_count() - 1; i >= 0; i--)
            if (ip_collector_at(i) && ip_collector_at(i)->stop) ip_collector_at(i)->stop();
    }
    if (ip_writer_stop(reason, finish_timeout(from_signal)) != 0)
        ip_info("the last events were not all written before exit (%s)", reason);
    atomic_store(&ip_state_v, IP_STATE_DONE);
    ip_finisher = 0;
}

/* The status of the _exit whose finish is under way, -1 none (ip_lifecycle_exit_begins). */
static _Atomic int life_exit_status = -1;

void ip_lifecycle_exit_begins(int status)
{
    atomic_store(&life_exit_status, status & 0xff);
}

static void life_on_signal(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    int saved = errno;
    runsig_note(sig, si); /* `infprof run` need not pass it on: it came */
    int fault = sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL;
    int status = atomic_load(&life_exit_status);
    if (status >= 0 && ip_process_owns() && !(fault && si && si->si_code > 0)) {
        /* The program called _exit, and our finish holds it: without us it would be gone with
         * that status, and the signal never felt (a multiprocessing Pool's terminate() sends
         * SIGTERM to the workers it still finds alive; they read -15 where they read 0). The
         * finish written (this handler's own where the signal came before the _exit's began; a
         * wait for it where it is under way), the process leaves as its _exit would. */
        ip_lifecycle_finish("_exit", 1);
        for (;;) syscall(SYS_exit_group, status);
    }
    const char *reason = "signal";
    for (size_t i = 0; i < sizeof life_signals / sizeof life_signals[0]; i++)
        if (life_signals[i].sig == sig) reason = life_signals[i].reason;
    ip_lifecycle_exit_now(); /* what threads hold for themselves, unless a hook was interrupted */
    ip_lifecycle_finish(reason, 1);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    life_sigaction(sig, &dfl, NULL);
    ip_lifecycle_signal_released(sig);
    /* A fault raised by the CPU repeats when we return, now with the default action. Anything
     * sent (kill, raise, abort) is sent again; it is delivered when the handler returns. */
    if (!fault || si == NULL || si->si_code <= 0) raise(sig);
    errno = saved;
}

static void life_install_signals(void)
{
    life_sigaction = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
    if (!life_sigaction) life_sigaction = sigaction;
    for (size_t i = 0; i < sizeof life_signals / sizeof life_signals[0]; i++) {
        int sig = life_signals[i].sig;
        struct sigaction old, sa;
        if (life_sigaction(sig, NULL, &old) != 0 || old.sa_handler != SIG_DFL ||
            (old.sa_flags & SA_SIGINFO))
            continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = life_on_signal;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        if (life_sigaction(sig, &sa, NULL) == 0) atomic_fetch_or(&life_signals_ours, 1u << sig);
    }
}

/* After every destructor (registered from ours, during exit: glibc runs an exit function
 * registered while the others run): what came after the finish (a library's destructor and the
 * atexit handlers it registered, which glibc runs with its destructors) is counted in the file. */
static void life_after_destructors(void *arg)
{
    (void)arg;
    ip_writer_count_late();
}

/* With no DSO handle, as the program's own: atexit() from a library ties the function to that
 * library, whose finalisation (during our destructor) would run it too early. */
int __cxa_atexit(void (*fn)(void *), void *arg, void *dso);

void ip_lifecycle_exit_finish(void)
{
    if (!ip_process_owns()) return;
    int was_active = atomic_load(&ip_state_v) == IP_STATE_ACTIVE;
    ip_lifecycle_finish("exit", 0);
    if (was_active) __cxa_atexit(life_after_destructors, NULL, NULL);
}

void ip_lifecycle_wait_finished(void)
{
    uint64_t until = ip_clock_now() + (uint64_t)ip_cfg_int(IP_CFG_FINISH_TIMEOUT_MS) * 1000000ull;
    for (;;) {
        int s = atomic_load(&ip_state_v);
        if ((s != IP_STATE_ACTIVE && s != IP_STATE_FINISHING) || ip_clock_now() >= until) return;
        nanosleep(&(struct timespec){0, 1000000}, NULL); /* not a program thread's hot path */
    }
}

static void life_fork_prepare(void)
{
    ip_writer_atfork_prepare();
}

static void life_fork_parent(void)
{
    ip_writer_atfork_parent();
}

void ip_lifecycle_main_begins(void)
{
    ip_process_main_began();
    if (!ip_active()) return;
    for (int i = 0; i < ip_collector_count(); i++)
        if (ip_collector_at(i) && ip_collector_at(i)->main_begins)
            ip_collector_at(i)->main_begins();
}

static void life_fork_child(void)
{
    ip_fdguard_atfork_child(); /* first: the child may close what was the parent's */
    ip_writer_atfork_child();
    ip_clock_atfork_child();
    ip_thread_atfork_child();
    ip_ring_atfork_child();
    ip_process_take();
    int state = atomic_load(&ip_state_v);
    if (state != IP_STATE_ACTIVE || ip_cfg_int(IP_CFG_FORK) != 0) {
        atomic_store(&ip_state_v, state == IP_STATE_UNINIT ? IP_STATE_UNINIT : IP_STATE_OFF);
        return;
    }
    for (int i = 0; i < ip_collector_count(); i++)
        if (ip_collector_at(i) && ip_collector_at(i)->atfork_child)
            ip_collector_at(i)->atfork_child();
    ip_process_begin(ip_clock_now(), IP_ROLE_FORK_CHILD);
    ip_process_forget_exit_status();
    atomic_store(&life_exit_status, -1);
    if (ip_writer_start(life_output, IP_ROLE_FORK_CHILD, 1, ip_t0()) != 0)
        atomic_store(&ip_state_v, IP_STATE_OFF);
}

/* Decide who we are in the session from INFPROF_SESSION (set by the first process). */
static int life_session_role(void)
{
    const char *session = getenv("INFPROF_SESSION");
    char pid[24];
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    if (session && *session) return IP_ROLE_DESCENDANT;
    setenv("INFPROF_SESSION", pid, 1);
    return IP_ROLE_ROOT;
}

/* The program's resource limits or disk leave no room for us (rlimits.h): off, one line. */
static int life_limits_forbid(void)
{
    /* Not on the stack: this runs on the program's main thread, whose stack may be 16 KiB
     * (`ulimit -s 16`); the start runs once, so one copy is enough. */
    static char dir[PATH_MAX], why[400];
    snprintf(dir, sizeof dir, "%s", life_output && *life_output ? life_output : "infprof.db");
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = 0;
    else
        *slash = 0;
    if (ip_limits_check(dir, why, sizeof why) == 0) return 0;
    ip_warn("profiling off: %s", why);
    return 1;
}

/* ---- start on a thread of our own --------------------------------------------------------
 * The constructor runs on the program's main thread, whose stack may be tiny (`ulimit -s 16`)
 * and where a file-size limit's SIGXFSZ would kill the program: the start runs on a short-lived
 * thread with a stack of its own and every signal blocked, while the constructor waits. */
static int life_checked;   /* configuration and limits read by ip_lifecycle_start_aside */
static int life_in_loader; /* the start ran inside a dlopen (lifecycle.h) */

int ip_lifecycle_started_in_loader(void)
{
    return life_in_loader;
}

/* The boot thread's progress: it first takes the loader's lock once (a lookup). A constructor
 * run inside a dlopen (a library's NVTX loading us by path) holds that lock: the boot thread
 * would wait for it and the constructor for the boot thread. Whoever moves the phase first
 * decides: the boot thread starts the run, or the constructor, seeing no progress, starts it
 * itself and the boot thread leaves. */
enum { BOOT_PROBING, BOOT_RUNNING, BOOT_ABANDONED, BOOT_DONE };
static struct life_boot {
    const struct ip_start_opts *opts;
    int rc;
    _Atomic uint32_t phase;
} life_boot; /* static: an abandoned boot thread still reads it */

static void *life_boot_main(void *arg)
{
    (void)arg;
    dlsym(RTLD_DEFAULT, "infprof_boot_probe");
    uint32_t expect = BOOT_PROBING;
    if (!atomic_compare_exchange_strong(&life_boot.phase, &expect, BOOT_RUNNING)) return NULL;
    ip_futex_wake(&life_boot.phase);
    life_boot.rc = ip_lifecycle_start(life_boot.opts);
    atomic_store(&life_boot.phase, BOOT_DONE);
    ip_futex_wake(&life_boot.phase);
    return NULL;
}

int ip_lifecycle_start_aside(const struct ip_start_opts *opts)
{
    if (atomic_load(&ip_state_v) != IP_STATE_UNINIT) return 0;
    /* The limits first, here: a thread of ours, even short-lived, counts against them. */
    ip_cfg_load();
    life_checked = 1;
    if (!ip_cfg_int(IP_CFG_ENABLE)) {
        atomic_store(&ip_state_v, IP_STATE_OFF);
        return 0;
    }
    life_output = opts->output ? opts->output : ip_cfg_str(IP_CFG_OUTPUT);
    if (life_limits_forbid()) {
        atomic_store(&ip_state_v, IP_STATE_OFF);
        return 0;
    }
    life_boot.opts = opts;
    atomic_store(&life_boot.phase, BOOT_PROBING);
    /* Joinable: once it has started the run it is joined, so that no thread of ours but the
     * writer is left when main begins (Python 3.12 counts the threads at a fork and warns on
     * the program's stderr; a detached boot thread still exiting was seen once under load). */
    pthread_t boot;
    if (ip_thread_spawn(&boot, life_boot_main, NULL, 0) != 0)
        return ip_lifecycle_start(opts); /* here, then */
    uint64_t deadline = ip_clock_now() + 200000000ull;
    while (atomic_load(&life_boot.phase) == BOOT_PROBING && ip_clock_now() < deadline)
        ip_futex_wait(&life_boot.phase, BOOT_PROBING, 10);
    uint32_t expect = BOOT_PROBING;
    if (atomic_compare_exchange_strong(&life_boot.phase, &expect, BOOT_ABANDONED)) {
        pthread_detach(boot); /* it waits for the loader's lock this thread holds: let it go */
        life_in_loader = 1; /* this thread holds the loader's lock: no thread of ours can load */
        return ip_lifecycle_start(opts);
    }
    while (atomic_load(&life_boot.phase) != BOOT_DONE)
        ip_futex_wait(&life_boot.phase, BOOT_RUNNING, 100);
    pthread_join(boot, NULL);
    return life_boot.rc;
}

int ip_lifecycle_start(const struct ip_start_opts *opts)
{
    if (atomic_load(&ip_state_v) != IP_STATE_UNINIT) return 0;
    if (!life_checked) ip_cfg_load();
    ip_process_take();
    ip_collectors_use(opts->collectors, opts->n_collectors);
    for (int i = 0; i < ip_collector_count(); i++)
        if (ip_collector_at(i)) ip_cfg_group_load(ip_collector_at(i)->settings);
    if (!ip_cfg_int(IP_CFG_ENABLE)) {
        atomic_store(&ip_state_v, IP_STATE_OFF);
        return 0;
    }
    life_output = opts->output ? opts->output : ip_cfg_str(IP_CFG_OUTPUT);
    if (opts->install_process_hooks && !life_checked && life_limits_forbid()) {
        atomic_store(&ip_state_v, IP_STATE_OFF);
        return 0;
    }
    int role = opts->install_process_hooks ? life_session_role() : IP_ROLE_ROOT;
    ip_process_begin(ip_clock_now(), (enum ip_role)role);
    if (opts->install_process_hooks) {
        if (role == IP_ROLE_DESCENDANT && !ip_cfg_int(IP_CFG_FOLLOW_EXEC)) {
            atomic_store(&ip_state_v, IP_STATE_OFF);
            return 0;
        }
    }
    ip_runinfo_capture();
    ip_ring_configure((size_t)ip_cfg_int(IP_CFG_BUFFER_MB) << 20,
                      (uint64_t)ip_cfg_int(IP_CFG_BUFFER_WAIT_MS));
    for (int i = 0; i < ip_collector_count(); i++)
        if (ip_collector_at(i) && ip_collector_at(i)->init) ip_collector_at(i)->init();
    atomic_store(&ip_state_v, IP_STATE_ACTIVE);
    if (ip_writer_start(life_output, (enum ip_role)role, 0, ip_t0()) != 0) {
        atomic_store(&ip_state_v, IP_STATE_OFF);
        return -1;
    }
    if (opts->install_process_hooks) {
        pthread_atfork(life_fork_prepare, life_fork_parent, life_fork_child);
        life_install_signals();
    }
    for (int i = 0; i < ip_collector_count(); i++)
        if (ip_collector_at(i) && ip_collector_at(i)->start) ip_collector_at(i)->start();
    return 0;
}
