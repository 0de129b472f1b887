/*
 * collector.h: the one interface every collector implements. The core owns it and calls the
 * collectors only through the table it is handed at start (ip_start_opts in lifecycle.h): the
 * preloaded library hands it collectors/registry.c's table, tests and benchmarks their own.
 *
 * App side (any thread):   init, start, main_begins, stop, atfork_child
 * Writer side (one thread): prepare, ingest, flush, finish, tick; all database work happens here.
 */
#ifndef INFPROF_COLLECTOR_H
#define INFPROF_COLLECTOR_H

#include "events.h"

#include <stddef.h>
#include <stdint.h>

struct ip_store;
struct ip_cfg_group;

struct ip_collector {
    const char *name;  /* its metadata key: collector.<name> */
    const char *title; /* the run header's name for it ("CUPTI", "libtorch hooks") */
    /* Its settings (collectors/<name>_config.c): read at start, before init; written to the
     * run's metadata; listed by `infprof info`. NULL: none. */
    const struct ip_cfg_group *settings;
    /* Its tables (collectors/<name>.sql, embedded at build time): created with the database,
     * after the core's schema and before the views. NULL: none. */
    const char *schema;
    /* Constructor time, after the configuration is read: set up what must exist before the
     * program runs (environment for injection). Never touches CUDA, libtorch or SQLite. */
    void (*init)(void);
    /* The pipeline is up: recording may begin. */
    void (*start)(void);
    /* The program's main is about to run: every library loaded at start is initialised (their
     * C++ objects may be used). Not called where main could not be wrapped. */
    void (*main_begins)(void);
    /* Normal exit, on the exiting thread, before the writer's last cycle: hand over whatever a
     * vendor library still holds (CUPTI buffers). Not called on a fatal signal. */
    void (*stop)(void);
    /* _exit (or _Exit), or a fatal signal, on a thread outside every hook of ours, before the
     * finish: write what threads hold for themselves (the libtorch collector's folds). Ring
     * appends on the calling thread only (it may be a signal handler); not called where the
     * handler interrupted a hook of ours. NULL none. */
    void (*exit_now)(void);
    /* In a forked child, before anything else runs there. */
    void (*atfork_child)(void);

    /* Writer thread, at the start of every cycle, before the rings are drained: fix the set of
     * vendor buffers that this cycle's flush will process (so that their launch events, which
     * were appended before the buffers completed, are already drained). */
    void (*snapshot)(void);
    /* Writer thread: prepare statements once the database is open (and reset any state a forked
     * child inherited). */
    void (*prepare)(struct ip_store *s);
    /* Writer thread: one ring event of a type this collector owns. */
    void (*ingest)(struct ip_store *s, uint32_t tid, const struct ip_ev *ev);
    /* Writer thread, every cycle after the rings are drained (final: the last cycle). */
    void (*flush)(struct ip_store *s, int final);
    /* Writer thread, once, before the database is closed: summaries and metadata. */
    void (*finish)(struct ip_store *s);
    /* Writer thread, at every wake-up (a phase change, a period, a ring asking) and once with
     * final set before the last cycle: sampling that needs no thread of its own (energy).
     * Returns the clock reading (ip_clock_now) at which it wants the next call; 0 none. */
    uint64_t (*tick)(uint64_t now, int final);
    /* A recording window opened (1) or closed (0) (window.h), on the thread that did it: turn
     * off outside windows what costs even when hooks return at once (CUPTI's activity). */
    void (*window)(int open);
};

/* A collector's index is the high byte of its event types (events.h); 0 is the core's own. */
enum { IP_COLLECTOR_CORE = 0, IP_COLLECTOR_MAX = 16 };

/* The table the core calls (lifecycle.c sets it once, at start); an empty slot is NULL. */
void ip_collectors_use(const struct ip_collector *const *table, int n);
int ip_collector_count(void);
const struct ip_collector *ip_collector_at(int index);

/* What each collector says about itself, written to the run metadata as
 * collector.<name> = "<state>: <reason>". state: on, off, passive. */
void ip_collector_status(int index, const char *state, const char *reason_fmt, ...)
    __attribute__((format(printf, 3, 4)));
void ip_collector_status_copy(int index, char *out, size_t n);

#endif
