/*
 * process.c: the process facts of process.h, in one place below every module that reads them.
 */
#include "process.h"

#include <unistd.h>

_Atomic int ip_state_v = IP_STATE_UNINIT;
__thread int ip_finisher __attribute__((tls_model("initial-exec")));
_Atomic uint64_t ip_events_after_end;
_Atomic int ip_our_threads;

static uint64_t proc_t0;
static int proc_role;
static _Atomic int proc_pid;
static _Atomic int proc_exit_status = -1;
static _Atomic int proc_in_main;

uint64_t ip_t0(void)
{
    return proc_t0;
}

enum ip_role ip_role(void)
{
    return (enum ip_role)proc_role;
}

void ip_process_begin(uint64_t t0, enum ip_role role)
{
    proc_t0 = t0;
    proc_role = role;
}

void ip_process_take(void)
{
    atomic_store(&proc_pid, (int)getpid());
}

int ip_process_owns(void)
{
    return atomic_load(&proc_pid) == (int)getpid();
}

void ip_process_set_exit_status(int status)
{
    atomic_store(&proc_exit_status, status & 0xff);
}

void ip_process_forget_exit_status(void)
{
    atomic_store(&proc_exit_status, -1);
}

int ip_process_exit_status(void)
{
    return atomic_load(&proc_exit_status);
}

void ip_process_main_began(void)
{
    atomic_store(&proc_in_main, 1);
}

int ip_process_in_main(void)
{
    return atomic_load_explicit(&proc_in_main, memory_order_relaxed);
}
