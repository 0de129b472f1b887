/*
 * window.h: recording windows (docs/windows.md). A run that asks for windows records only while
 * one is open: outside, ip_recording() is false and every hook returns at once, while phases,
 * NVTX stacks and open iterations are still kept (a window opens in the right phase). Windows
 * are opened and closed by the window collector's controls (a delay and a duration, a request
 * from `infprof window`, a signal) and by the program itself (an NVTX range of a chosen name,
 * cudaProfilerStart/Stop); each is a row of table windows. Open and close are lock-free and may
 * be called from any thread; a signal handler only asks (ip_window_ask), the writer acts.
 */
#ifndef INFPROF_WINDOW_H
#define INFPROF_WINDOW_H

#include <stdint.h>

#define IP_WINDOW_MAX 4096 /* windows kept; more are counted (ip_window_overflow) */

/* How a window opened or closed (windows.opened_by, closed_by). */
enum ip_window_how {
    IP_WIN_START = 1, /* the run's start */
    IP_WIN_DELAY,     /* INFPROF_WINDOW_DELAY_MS passed */
    IP_WIN_DURATION,  /* INFPROF_WINDOW_DURATION_MS passed */
    IP_WIN_REQUEST,   /* infprof window PID start|stop */
    IP_WIN_SIGNAL,    /* INFPROF_WINDOW_SIGNAL */
    IP_WIN_NVTX,      /* the capture range pushed or popped */
    IP_WIN_PROFILER,  /* cudaProfilerStart/Stop, cuProfilerStart/Stop */
    IP_WIN_END        /* the run's end */
};

struct ip_window {
    uint64_t start, end;          /* our clock; end 0 while open */
    uint8_t opened_by, closed_by; /* enum ip_window_how; closed_by 0 while open */
    int64_t open_at_close;        /* outermost iterations in flight when it closed (not recorded) */
};

/* The run asks for windows: it starts closed (closed 1) or open. Before the collectors start. */
void ip_window_use(int closed);
/* Whether windows are in use. */
int ip_window_used(void);
/* Open or close a window; returns its 1-based number, 0 when it was already so (or past
 * IP_WINDOW_MAX: counted). */
uint32_t ip_window_open(enum ip_window_how how);
uint32_t ip_window_close(enum ip_window_how how);
/* The windows so far (n), copied out; the overflow count. */
int ip_window_list(struct ip_window *out, int max);
uint64_t ip_window_overflow(void);

/* Writer side: whether time ts (our clock) fell inside a window (always, without windows).
 * Records that arrive later than their time (CUPTI's) are kept or dropped by it. */
int ip_window_covers(uint64_t ts);

/* Outermost iterations open now, on every thread (iteration.c keeps it). */
extern _Atomic int64_t ip_iters_open;

#endif
