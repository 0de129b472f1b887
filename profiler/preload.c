/*
 * preload.c: what exists only in the preloaded libinfprof.so: the constructor and destructor,
 * and the libc hooks that keep the lifecycle whole: _exit, _Exit and exit (flush and record the
 * status), the exec family (finish before the image is replaced), sigaction and signal (our
 * flush-on-signal handlers stay invisible to the program).
 *
 * Every hook fails open: it forwards to the real function whatever happens to us.
 */
#include "lifecycle.h"
#include "log.h"

#include <dlfcn.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define IP_EXPORT __attribute__((visibility("default")))

__attribute__((constructor)) static void preload_init(void)
{
    struct ip_start_opts opts = {NULL, 1};
    ip_lifecycle_start(&opts);
}

__attribute__((destructor)) static void preload_fini(void)
{
    ip_lifecycle_finish("exit", 0);
}

static void *real(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

IP_EXPORT void _exit(int status)
{
    if (ip_recording() && ip_lifecycle_owns_process()) {
        ip_lifecycle_set_exit_status(status);
        /* _exit is allowed in signal handlers and vfork children: finish as a signal would. */
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

IP_EXPORT void exit(int status)
{
    if (ip_lifecycle_owns_process()) ip_lifecycle_set_exit_status(status);
    void (*fn)(int) = (void (*)(int))real("exit");
    if (fn) fn(status);
    for (;;) syscall(SYS_exit_group, status);
}

static void before_exec(void)
{
    if (ip_recording() && ip_lifecycle_owns_process()) ip_lifecycle_finish("exec", 0);
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

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);

IP_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    static sigaction_fn fn;
    if (!fn) fn = (sigaction_fn)real("sigaction");
    int ours = ip_lifecycle_signal_is_ours(sig);
    int rc = fn(sig, act, old);
    if (rc == 0 && ours) {
        if (old) {
            memset(old, 0, sizeof *old);
            old->sa_handler = SIG_DFL;
        }
        if (act) ip_lifecycle_signal_released(sig);
    }
    return rc;
}

IP_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
    static sighandler_t (*fn)(int, sighandler_t);
    if (!fn) fn = (sighandler_t(*)(int, sighandler_t))real("signal");
    int ours = ip_lifecycle_signal_is_ours(sig);
    sighandler_t prev = fn(sig, handler);
    if (prev != SIG_ERR && ours) {
        ip_lifecycle_signal_released(sig);
        prev = SIG_DFL;
    }
    return prev;
}
