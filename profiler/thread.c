/*
 * thread.c: the per-thread state (thread.h) and the cached kernel thread id.
 */
#include "thread.h"

#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

__thread struct ip_thread ip_self __attribute__((tls_model("initial-exec")));

uint32_t ip_thread_tid(void)
{
    if (!ip_self.tid) ip_self.tid = (uint32_t)syscall(SYS_gettid);
    return ip_self.tid;
}

void ip_thread_atfork_child(void)
{
    ip_self.tid = 0;
    ip_self.emit_range = 0; /* the parent's NVTX range is not ours to end */
    /* The child's CPU account starts at 0: the parent's readings are not its own. */
    ip_self.iter_cpu0 = -1;
    ip_self.iter_cpu_at = 0;
}

int ip_thread_spawn(pthread_t *out, void *(*fn)(void *), void *arg, int detached)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, IP_THREAD_STACK);
    if (detached) pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t t;
    int rc = pthread_create(out ? out : &t, &attr, fn, arg);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}
