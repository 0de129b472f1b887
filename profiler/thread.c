/*
 * thread.c: the per-thread state (thread.h) and the cached kernel thread id.
 */
#include "thread.h"

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
}
