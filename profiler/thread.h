/*
 * thread.h: what the library keeps per application thread, in initial-exec TLS (no allocation,
 * no __tls_get_addr on the hot path): the ring, the kernel thread id, the re-entrancy guard every
 * hook starts with, the thread's phase state and its NVTX range stack.
 */
#ifndef INFPROF_THREAD_H
#define INFPROF_THREAD_H

#include <pthread.h>
#include <stdint.h>

#define IP_NVTX_STACK_MAX 64
/* A range on the stack pushed outside every recording window (window.h): not recorded. */
#define IP_NVTX_UNRECORDED (1ull << 63)

struct ip_ring;

struct ip_thread {
    struct ip_ring *ring;
    uint32_t tid;
    uint8_t in_hook;     /* set while one of our hooks runs on this thread */
    uint8_t ring_failed; /* no ring could be had: stop asking */
    /* Phase tracking (phase.c). */
    uint8_t phase;         /* current phase id, 0 not known yet */
    uint8_t grad;          /* 0 grad, 1 no_grad, 2 inference_mode */
    uint8_t cuda_ac;       /* CUDA autocast dtype code, 0 off (the shadow flag) */
    uint8_t cpu_ac;        /* CPU autocast dtype code, 0 off */
    uint8_t jit_depth;     /* nesting of TorchScript Method calls */
    uint8_t emitted_phase; /* phase of the open emitted NVTX range */
    uint8_t cpu_mem_open;  /* the CPU allocator was told "profiling on" and has not reported */
    uint8_t iter_loose;    /* `iter` may end on another thread (an NVTX start/end range) */
    uint32_t iter;         /* outermost open iteration (iteration.h), 0 none */
    /* The thread's CPU time and context switches (voluntary, involuntary) when `iter` began,
     * read at iter_cpu_from (iteration.c); iter_t0 when `iter` began. */
    int64_t iter_cpu0, iter_vcsw0, iter_ivcsw0;
    uint64_t iter_cpu_from, iter_t0;
    int64_t iter_gap_cpu, iter_gap_vcsw, iter_gap_ivcsw; /* since the last end (-1: not apart) */
    /* The same at the end of the thread's last iteration, read at iter_cpu_at (0: none). */
    int64_t iter_cpu_last, iter_vcsw_last, iter_ivcsw_last;
    uint64_t iter_cpu_at;
    /* The thread's page faults (minor and major) and system time at the same readings: at the
     * begin, at the last end (iteration.c). */
    int64_t iter_flt0, iter_mflt0, iter_sys0, iter_flt_last, iter_mflt_last, iter_sys_last;
    int64_t iter_read_flt, iter_read_mflt, iter_read_sys; /* thread_cpu's last reading */
    uint64_t cudnn_call; /* the recorded cuDNN call in progress (its ext id), 0 none */
    uint64_t emit_range; /* open NVTX range we emitted for the phase, 0 none */
    /* Innermost open PyTorch operator (collectors/torch_ops.c, opname.h), NULL none. */
    const void *op_rf;
    uint32_t op_id; /* its name id once looked up (ip_thread_op), 0 not yet */
    /* NVTX push/pop stack of the application (nvtx collector). */
    uint32_t nvtx_depth;
    uint32_t nvtx_overflow;
    uint32_t nvtx_iter_level; /* 1-based stack level of the push range that began `iter` */
    uint64_t nvtx_iter_ext;   /* the start/end range that began `iter` (the id it returned) */
    uint64_t nvtx_stack[IP_NVTX_STACK_MAX];  /* our range ids, innermost last */
    uint64_t nvtx_domain[IP_NVTX_STACK_MAX]; /* their domain handles (0: default domain) */
};

extern __thread struct ip_thread ip_self __attribute__((tls_model("initial-exec")));

uint32_t ip_thread_tid(void);

/* The re-entrancy guard: a hook records only when ip_hook_enter() returned 1, and then calls
 * ip_hook_leave(). Calls made by our own code (or by a signal handler interrupting a hook) pass
 * straight through. */
static inline int ip_hook_enter(void)
{
    if (ip_self.in_hook) return 0;
    ip_self.in_hook = 1;
    return 1;
}

static inline void ip_hook_leave(void)
{
    ip_self.in_hook = 0;
}

/* The thread's innermost open NVTX push/pop range (our id), 0 none or past the stack. */
static inline uint64_t ip_thread_nvtx_top(void)
{
    uint32_t d = ip_self.nvtx_depth;
    return d && d <= IP_NVTX_STACK_MAX ? ip_self.nvtx_stack[d - 1] & ~IP_NVTX_UNRECORDED : 0;
}

/* In a forked child: forget the parent's thread id. */
void ip_thread_atfork_child(void);

/* Start a thread of ours: every signal blocked (the program's handlers run on its own threads;
 * a file-size limit's SIGXFSZ stays pending here), a stack of IP_THREAD_STACK (not
 * RLIMIT_STACK's 8 MiB, nor too little under `ulimit -s 16`), detached or joinable (out may then
 * be NULL only when detached). 0 or pthread_create's error. */
#define IP_THREAD_STACK (512u << 10)
int ip_thread_spawn(pthread_t *out, void *(*fn)(void *), void *arg, int detached);

#endif
