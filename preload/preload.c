/*
 * preload.c: what exists only in the preloaded libinfprof.so, the top of the library: the
 * constructor that hands the collectors (collectors/registry.c) to the core and starts it, the
 * destructor, and the libc hooks that keep the lifecycle whole: _exit, _Exit, exit and quick_exit
 * (flush and record the status), the exec family (finish before the image is replaced),
 * sigaction, signal, bsd_signal, sysv_signal and sigset (our flush-on-signal handlers stay
 * invisible to the program; under `infprof run`, the program's handlers of the signals the run
 * passes on noted for it: sigwrap.c), and close, close_range and
 * closefrom (the database's own descriptors stay open when a program closes everything, fdguard.h).
 *
 * Every hook fails open: it forwards to the real function whatever happens to us.
 */
#include "../collectors/registry.h"
#include "../profiler/fdguard.h"
#include "../profiler/lifecycle.h"
#include "../profiler/log.h"
#include "../profiler/runsig.h"
#include "../profiler/writer.h"
#include "sigwrap.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define IP_EXPORT __attribute__((visibility("default")))

/* One active copy per process. Two different files of the library preloaded together (a stale
 * LD_PRELOAD and `infprof run`) each export this name; the process-wide lookup finds the first
 * copy's, and every later copy stays off: its hooks only forward (each checks that recording is
 * on before it does anything else). A copy loaded once under two names is one copy. */
static const char copy_self; /* this copy's own address (a reference to it is never interposed) */
IP_EXPORT const void *const infprof_active_copy = &copy_self;

static void preload_resolve(void);

/* Start once, from our constructor (or earlier, from a library whose constructor runs before ours
 * and initialises NVTX: nvtx_early.c, and collectors/nvtx.c starts the run there). */
void ip_preload_nvtx_early_over(void); /* nvtx_early.c */

__attribute__((constructor)) static void preload_init(void)
{
    ip_preload_nvtx_early_over();
    if (atomic_load(&ip_state_v) != IP_STATE_UNINIT) return;
    preload_resolve();
    const void *const *first = dlsym(RTLD_DEFAULT, "infprof_active_copy");
    if (first && *first != &copy_self) return;
    static const struct ip_start_opts opts = {NULL, 1, ip_collectors, IP_COLLECTOR_COUNT};
    ip_lifecycle_start_aside(&opts);
    /* `infprof run`'s page, where it is our parent: its signals given once even where the
     * profile is off (INFPROF_ENABLE=0, a descriptor limit), as they are `infprof run`'s. */
    if (runsig_attach()) pthread_atfork(NULL, NULL, sigwrap_atfork_child);
}

__attribute__((destructor)) static void preload_fini(void)
{
    ip_lifecycle_exit_finish();
}

static void *real(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

IP_EXPORT void _exit(int status)
{
    if (ip_active() && ip_process_owns()) {
        ip_process_set_exit_status(status);
        ip_lifecycle_exit_begins(status);
        /* _exit is allowed in signal handlers and vfork children: finish as a signal would,
         * after what this thread holds for itself, where that is safe (lifecycle.h). */
        ip_lifecycle_exit_now();
        ip_lifecycle_finish("_exit", 1);
    }
    void (*fn)(int) = (void (*)(int))real("_exit");
    if (fn) fn(status);
    for (;;) syscall(SYS_exit_group, status);
}

IP_EXPORT void _Exit(int status)
{
    _exit(status);
}

/* quick_exit runs the at_quick_exit handlers and then _Exit, past atexit and the destructors:
 * the run finishes first, as at exit (the handlers are the program's; what they record after
 * is counted as after the end). */
IP_EXPORT void quick_exit(int status)
{
    if (ip_active() && ip_process_owns()) {
        ip_process_set_exit_status(status);
        ip_lifecycle_finish("quick_exit", 0);
    }
    void (*fn)(int) = (void (*)(int))real("quick_exit");
    if (fn) fn(status);
    for (;;) syscall(SYS_exit_group, status);
}

/* The first thread of this process in exit(): pid << 32 | tid, 0 none. */
static _Atomic uint64_t exit_first;

IP_EXPORT void exit(int status)
{
    /* Claimed by this process's first exit (a forked child's own, not its parent's). */
    uint64_t pid = (uint64_t)getpid(), me = pid << 32 | (uint32_t)syscall(SYS_gettid);
    uint64_t cur = atomic_load(&exit_first);
    while (cur >> 32 != pid && !atomic_compare_exchange_weak(&exit_first, &cur, me)) {
    }
    if (atomic_load(&exit_first) != me) {
        /* Another thread's exit is finishing the run (workers that fail together): the database
         * first, then this exit as glibc runs it; the first exit's status stands. */
        if (ip_process_owns()) ip_lifecycle_wait_finished();
    } else if (ip_process_owns()) {
        ip_process_set_exit_status(status);
    }
    void (*fn)(int) = (void (*)(int))real("exit");
    if (fn) fn(status);
    for (;;) syscall(SYS_exit_group, status);
}

/* main ending with pthread_exit: the process lives while other threads do; the writer ends it
 * once the program's last thread is gone (writer.h), as glibc's last thread would. */
IP_EXPORT void pthread_exit(void *value)
{
    if (ip_active() && ip_process_owns() && syscall(SYS_gettid) == getpid())
        ip_writer_main_thread_ended();
    void (*fn)(void *) = (void (*)(void *))real("pthread_exit");
    if (fn) fn(value);
    for (;;) syscall(SYS_exit, 0);
}

/* ---- close: the database's descriptors stay ours ------------------------------------------- */

/* The real close family, looked up at start (preload_resolve): a lookup takes the loader's lock,
 * which a dlopen on another thread may hold while it runs our constructor and waits for our
 * writer (whose SQLite closes come through here). */
static int (*real_close)(int);
static int (*real_close_range)(unsigned, unsigned, int);
static void (*real_closefrom)(int);

static void preload_resolve(void)
{
    if (!real_close) real_close = (int (*)(int))real("close");
    if (!real_close_range) real_close_range = (int (*)(unsigned, unsigned, int))real("close_range");
    if (!real_closefrom) real_closefrom = (void (*)(int))real("closefrom");
}

IP_EXPORT int close(int fd)
{
    if (!real_close) preload_resolve();
    int (*fn)(int) = real_close;
    ip_fdguard_close_enter(); /* not while one of ours is on its way up (fdguard.h) */
    int rc = 0;
    if (!ip_fdguard_is_ours(fd)) /* ours: as if closed, the program never knew it */
        rc = fn ? fn(fd) : (int)syscall(SYS_close, fd);
    int saved = errno;
    ip_fdguard_close_leave();
    errno = saved;
    return rc;
}

/* The real close_range over [first, last], skipping our descriptors. */
static int close_range_skipping(unsigned first, unsigned last, int flags)
{
    if (!real_close_range) preload_resolve();
    int (*fn)(unsigned, unsigned, int) = real_close_range;
    int ours[IP_FDGUARD_MAX], n = 0, count = ip_fdguard_count();
    for (int i = 0; i < count && n < IP_FDGUARD_MAX; i++) {
        int fd = ip_fdguard_fd(i);
        if (fd >= 0 && (unsigned)fd >= first && (unsigned)fd <= last) ours[n++] = fd;
    }
    for (int a = 1; a < n; a++) /* ascending */
        for (int b = a; b > 0 && ours[b - 1] > ours[b]; b--) {
            int t = ours[b];
            ours[b] = ours[b - 1];
            ours[b - 1] = t;
        }
    int rc = 0;
    unsigned from = first;
    for (int i = 0; i <= n; i++) {
        unsigned to = i < n ? (unsigned)ours[i] - (ours[i] > 0) : last; /* up to before ours[i] */
        if (from <= to && !(i < n && (unsigned)ours[i] == from)) {
            int r = fn ? fn(from, to, flags) : (int)syscall(SYS_close_range, from, to, flags);
            if (r != 0) rc = r;
        }
        if (i < n) from = (unsigned)ours[i] + 1;
    }
    return rc;
}

static int close_range_gated(unsigned first, unsigned last, int flags)
{
    if (!ip_fdguard_count() || (flags & 4 /* CLOSE_RANGE_CLOEXEC */) || first > last) {
        if (!real_close_range) preload_resolve();
        int (*fn)(unsigned, unsigned, int) = real_close_range;
        return fn ? fn(first, last, flags) : (int)syscall(SYS_close_range, first, last, flags);
    }
    return close_range_skipping(first, last, flags);
}

IP_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
    ip_fdguard_close_enter();
    int rc = close_range_gated(first, last, flags);
    int saved = errno;
    ip_fdguard_close_leave();
    errno = saved;
    return rc;
}

IP_EXPORT void closefrom(int lowfd)
{
    if (lowfd < 0) lowfd = 0;
    int saved = errno;
    ip_fdguard_close_enter();
    if (!real_closefrom) preload_resolve();
    void (*fn)(int) = real_closefrom;
    if (!ip_fdguard_count() && fn)
        fn(lowfd);
    else
        close_range_skipping((unsigned)lowfd, ~0u, 0);
    ip_fdguard_close_leave();
    errno = saved;
}

/* ---- main's return value ---------------------------------------------------------------------
 * A program that returns from main reaches exit() inside libc, past the exit hook: its status is
 * taken from main itself, which __libc_start_main (called by the program's _start through the
 * PLT) is given to run. */
typedef int (*main_fn)(int, char **, char **);
static main_fn program_main;

static int main_returning(int argc, char **argv, char **envp)
{
    ip_lifecycle_main_begins();
    int rc = program_main(argc, argv, envp);
    if (ip_process_owns()) ip_process_set_exit_status(rc);
    return rc;
}

IP_EXPORT int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void),
                                void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
    typedef int (*start_fn)(main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void),
                            void *);
    start_fn fn = (start_fn)real("__libc_start_main");
    program_main = main;
    return fn(main ? main_returning : main, argc, argv, init, fini, rtld_fini, stack_end);
}

static void before_exec(void)
{
    if (ip_active() && ip_process_owns()) ip_lifecycle_finish("exec", 0);
}

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);

IP_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    before_exec();
    return ((execve_fn)real("execve"))(path, argv, envp);
}

IP_EXPORT int execv(const char *path, char *const argv[])
{
    before_exec();
    return ((execv_fn)real("execv"))(path, argv);
}

IP_EXPORT int execvp(const char *file, char *const argv[])
{
    before_exec();
    return ((execv_fn)real("execvp"))(file, argv);
}

IP_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    before_exec();
    return ((execve_fn)real("execvpe"))(file, argv, envp);
}

IP_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    before_exec();
    return ((int (*)(int, char *const[], char *const[]))real("fexecve"))(fd, argv, envp);
}

/* execl, execlp and execle: glibc implements them with its own execve/execvp, past our hooks,
 * so they are hooks of their own. Their arguments become an argv on the stack (as glibc does),
 * then the same path as execv/execvp/execve. */
#define EXECL_ARGV(first, ap, argv, n)                                                             \
    size_t n = 1;                                                                                  \
    va_list ap;                                                                                    \
    va_start(ap, first);                                                                           \
    while (va_arg(ap, const char *)) n++;                                                          \
    va_end(ap);                                                                                    \
    char **argv = __builtin_alloca((n + 1) * sizeof *argv);                                        \
    argv[0] = (char *)(first);                                                                     \
    va_start(ap, first);                                                                           \
    for (size_t i = 1; i <= n; i++) argv[i] = va_arg(ap, char *)

IP_EXPORT int execl(const char *path, const char *arg, ...)
{
    EXECL_ARGV(arg, ap, argv, n);
    va_end(ap);
    return execv(path, argv);
}

IP_EXPORT int execlp(const char *file, const char *arg, ...)
{
    EXECL_ARGV(arg, ap, argv, n);
    va_end(ap);
    return execvp(file, argv);
}

IP_EXPORT int execle(const char *path, const char *arg, ...)
{
    EXECL_ARGV(arg, ap, argv, n);
    char *const *envp = va_arg(ap, char *const *);
    va_end(ap);
    return execve(path, argv, envp);
}

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);

IP_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    static sigaction_fn fn;
    if (!fn) fn = (sigaction_fn)real("sigaction");
    int ours = ip_lifecycle_signal_is_ours(sig);
    int rc = sigwrap_sigaction(fn, sig, act, old);
    if (rc == 0 && ours) {
        if (old) {
            memset(old, 0, sizeof *old);
            old->sa_handler = SIG_DFL;
        }
        if (act) ip_lifecycle_signal_released(sig);
    }
    /* "Clean up, set SIG_DFL, raise again" (and Python's Ctrl-C exit): the default action still
     * comes, after our flush. */
    if (rc == 0 && act && !(act->sa_flags & SA_SIGINFO) && act->sa_handler == SIG_DFL)
        ip_lifecycle_signal_keep(sig);
    return rc;
}

/* signal() and its relatives (bsd_signal is signal; sysv_signal resets after one delivery;
 * sigset may hold the signal instead): the same bookkeeping around the real call. */
static sighandler_t signal_like(const char *name, int sig, sighandler_t handler)
{
    sighandler_t (*fn)(int, sighandler_t) = (sighandler_t(*)(int, sighandler_t))real(name);
    if (!fn) {
        errno = ENOSYS;
        return SIG_ERR;
    }
    int ours = ip_lifecycle_signal_is_ours(sig);
    sighandler_t prev = fn(sig, handler);
    static sigaction_fn sa;
    if (!sa) sa = (sigaction_fn)real("sigaction");
    if (prev != SIG_ERR && sa) prev = sigwrap_after_signal(sa, sig, prev);
    if (prev != SIG_ERR && ours) {
        ip_lifecycle_signal_released(sig);
        prev = SIG_DFL;
    }
    if (prev != SIG_ERR && handler == SIG_DFL) ip_lifecycle_signal_keep(sig);
    return prev;
}

IP_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
    return signal_like("signal", sig, handler);
}

IP_EXPORT sighandler_t bsd_signal(int sig, sighandler_t handler)
{
    return signal_like("bsd_signal", sig, handler);
}

IP_EXPORT sighandler_t sysv_signal(int sig, sighandler_t handler)
{
    return signal_like("sysv_signal", sig, handler);
}

IP_EXPORT sighandler_t sigset(int sig, sighandler_t handler)
{
    return signal_like("sigset", sig, handler);
}
