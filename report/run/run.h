/*
 * run.h: the run model: the report's view of one run, read once from its database (phases.c,
 * iterations.c, summaries.c) and handed to every section (sections.h), the multi-run and
 * compare reports and the trace export: the phases with their ids, labels and short labels,
 * devices, iterations and their series, peaks and precision mix.
 *
 * Invariants (phases_load ends with run_check, which asserts them in debug builds):
 *   1. 0 <= n <= REPORT_MAX_PHASES, phase ids distinct; 0 <= series.n <= REPORT_MAX_SERIES.
 *   2. A phase: warmup <= iterations, nsteady + captured_apart == iterations - warmup (the
 *      steady ones whose operators were captured may be set apart from the latencies),
 *      module_iterations <= iterations; with steady iterations lat_p50 <= lat_p95 <= lat_p99.
 *   3. A phase's memory device mem_dev is -1 or a device of devices (0 <= mem_dev < devices.n).
 *   4. A series' phase is one of v; its warm-up, steady and captured-apart iterations add up to
 *      its iterations (nits == iterations); gap_data, when known (>= 0), is at most gap_total.
 *   5. Every run_iter's phase is one of v, its series -1 or one of series.v; niters is the sum
 *      of the phases' iterations.
 */
#ifndef INFPROF_RUN_H
#define INFPROF_RUN_H

#include "classify.h"
#include "detect.h"
#include "../base/cli.h"
#include "../base/db.h"
#include "../base/rstats.h"
#include "../base/table.h"

#include <stdint.h>

#define REPORT_MAX_PHASES  16
#define REPORT_MAX_DEVICES 17
#define REPORT_MAX_SERIES  128

struct run_devices {
    int n;
    int type[REPORT_MAX_DEVICES], index[REPORT_MAX_DEVICES]; /* c10::DeviceType, index */
};

struct phase_info {
    int id;
    char grad_mode[16], autocast[8], label[64];
    char short_as[32]; /* the short label where not grad_mode/autocast's ("" those): compare's
                        * pairing of two runs' phases ("no_grad->inference/off") */
    int cuda_autocast; /* autocast was on for CUDA in one of its spans (not the CPU's alone) */
    int64_t start, end, wall; /* ns since t0; wall: union of the phase's spans */
    int has_kernels, has_memory, has_reserved, has_iterations;
    int64_t kernels, gpu_time;
    int has_busy;
    int64_t gpu_busy; /* union of the phase's GPU work intervals (phase_gpu) */
    /* Peaks on the memory device (memory.c: the run's first GPU, else the CPU; never a sum
     * over devices); mem_dev: its index in run_devices, -1 when no memory was recorded. */
    int64_t peak_alloc, peak_reserved;
    int mem_dev;
    int64_t dev_peak_alloc[REPORT_MAX_DEVICES], dev_peak_reserved[REPORT_MAX_DEVICES];
    int64_t dev_reserved_at_peak[REPORT_MAX_DEVICES]; /* reserved when allocated peaked */
    int64_t dev_allocs[REPORT_MAX_DEVICES], dev_alloc_bytes[REPORT_MAX_DEVICES]; /* by the phase */
    int64_t dev_largest[REPORT_MAX_DEVICES][3]; /* its three largest allocations */
    /* What stayed held after the phase's peak, to the end of that stretch of it (the lowest total
     * from the peak on, each device, and on the memory device): weights, inputs, what was kept
     * from before, not what its iterations made and let go; dev_span_floor and span_peaked: the
     * sweep's. */
    int64_t dev_entry_alloc[REPORT_MAX_DEVICES], entry_alloc;
    int64_t dev_span_floor[REPORT_MAX_DEVICES];
    uint32_t span_peaked; /* a bit a device: the stretch set the phase's peak there */
    uint32_t dev_held;    /* a bit a device: a thread that allocates there was in the phase */
    /* Iterations (iterations.c): all of them; the warm-up ones apart; the figures of the
     * steady state, latency to GPU completion (gpu_latency 0: host time only, none known). */
    int64_t iterations, warmup, warmup_ns;
    char warmup_cause[200];
    int gpu_latency;
    int64_t lat_p50, lat_p95, lat_p99, lat_mean, host_p50;
    int64_t lat_all_p50; /* every iteration, warm-up included (what a plain timer's p50 says) */
    int64_t *steady;     /* the steady iterations' latencies, in time order */
    int64_t *steady_start, *steady_batch; /* their start (ns since t0) and batch (-1 unknown) */
    /* The latencies its figures are over, in time order: the steady ones, and the captured ones
     * as the figures count them (their time over what a capture adds: iterations.c, captured_as);
     * the bands, and a pool of phases, read these. */
    int64_t *counted_lat;
    size_t ncounted;
    size_t nsteady;
    int64_t items; /* items of the steady iterations when every batch is known, else 0 */
    int64_t busy;  /* union of the iterations' host intervals */
    int transient; /* no iteration, no kernel, under 1 ms: folded away from the tables */
    /* steady.c: over the steady iterations only: the kernels launched in their windows, their
     * GPU time, the union of that work and of the windows (has_steady_gpu 0: no figure). */
    int has_steady_gpu;
    int64_t steady_kernels, steady_gpu_time, steady_gpu_busy, steady_window;
    /* suspect.c: figures that lost events (its drops, kernels per iteration out of line with
     * its twins); suspect_why says how, for every line that quotes the phase. */
    int suspect;
    char suspect_why[192];
    int64_t mix[OP_COUNT][PREC_COUNT]; /* kernel ns by operation class and compute type */
    int64_t triton_compute_ns; /* of it, Triton GEMM, conv and attention (compute type unknown) */
    int nseries; /* its series (run_series), 1 when every iteration has the same mark name */
    int peak_mixed; /* its series ran other models or batch sizes: its peak is one of theirs */
    struct detect_info detected; /* iterations found without a mark (detect.c; period 0 none) */
    int64_t module_iterations; /* of its iterations, Python module calls (source 5) */
    int64_t captured_apart;    /* steady ones whose operators were all recorded (sampled
                                * operators): slower for it, set apart from the latencies */
    /* The steady iterations shift level mid-run (iterations.c): their median before and after
     * the shift, 0 when they do not. A ratio against such a phase is no verdict. */
    int64_t shift_before, shift_after;
};

/* A series (iterations.c): the iterations of one phase that carry the same mark name (the NVTX
 * range's or record_function scope's text, schema 4): one configuration a program tries
 * ("iteration batch=8", "iteration int8"). Warm-up is judged within the series. Latencies as
 * the phase's (to GPU completion where known). */
struct interval {
    int64_t start, end;
};

#define SERIES_TIDS 8
struct series_iter {
    int64_t id, start, end; /* iterations.id; its window, start to GPU completion (ns) */
    int steady;             /* steady, its latency counted */
    int captured; /* steady, its operators recorded: in the loop's rate, not its latencies */
    int64_t tid;  /* its thread */
};

struct series_info {
    int phase;      /* index in run_phases.v */
    char name[352]; /* the mark's text beyond "iteration", then the settings that tell it apart
                       from a series of the same name and batch in its phase (settings.c), ""
                       none */
    const char *settings; /* the varying settings it ran with (in its name or not), "" none */
    int64_t batch;  /* the batch every iteration had, -1 mixed or unknown */
    int64_t iterations, warmup, warmup_ns;
    int64_t captured_apart; /* steady, set apart from Iters (the latencies count them as
                               series_captured_as says) */
    double capture_f;       /* how much slower the capture made them (those set apart), 1 none */
    int capture_capped;     /* capture_f is the most their calls could cost, not the measure */
    int64_t lat_p50, lat_p95, lat_p99, lat_mean, host_p50;
    int64_t items; /* items of the steady iterations when every batch is known, else 0 */
    size_t nsteady;
    int64_t start, end; /* first iteration's start, last one's end (ns since t0) */
    /* Between iterations (between.c): the host time from the end of each steady iteration to
     * the start of its thread's next one of the same series and phase: how many, their p50 and
     * sum, the host time of those iterations (share = gap_total / (gap_total + gap_host)), each
     * gap, and the GPU time busy inside them (-1 unknown: no kernels recorded). */
    int64_t gaps, gap_p50, gap_total, gap_host, gap_gpu_busy;
    int gap_threads; /* the threads those gaps are on: several wait side by side (a pool's) */
    struct interval *gapv;
    /* Of gap_total, the time the program waited for a DataLoader's next batch (input_waits;
     * -1 unknown: no wait in the run, no DataLoader, or a database before schema 5). */
    int64_t gap_data;
    /* series.c: the wall time of its steady iterations, first start to last end, less the time
     * on its threads that was not its turn (other series' iterations and the waits inside their
     * loops), and how many there were (the loop rate's, below). */
    int64_t loop_wall, loop_n;
    /* series.c: its steady iterations' kernels and GPU time (-1 unknown: no kernel rows tied to
     * iterations), and its peak allocated tensor bytes on the run's memory device over all its
     * iterations' windows (-1 unknown: no reports there). */
    int64_t kernels, gpu_time, peak_alloc;
    /* series_cpu.c: per steady iteration, the mean time its thread ran on the CPU and the mean
     * host time off it (-1 unknown: no iteration_cpu reading). */
    int64_t cpu_mean, off_cpu_mean;
    /* series_cpu.c: per steady iteration, the mean page faults (minor and major) of its thread
     * and the mean system time (-1 unknown: no such reading, before 2026-11-29 session 16; the
     * system time also where the CPU split is unknown). */
    double faults_mean;
    int64_t sys_mean;
    /* series_cpu.c: the mean page faults of its steady iterations whose latency lies within 10%
     * of its p50, what the p50 a verdict compares ran with (a loop faulting every second
     * iteration reads half its mean at its p50's fast level, or twice it); -1 unknown. */
    double faults_at_p50;
    /* series_faults.c: its steady iterations fault in memory the allocator handed back after
     * the one before (the advice rule page_faults, the Our cost line): 64 faults or more each,
     * with system time a tenth of the mean latency (256 faults where it is unknown), the memory
     * not kept. 0 otherwise or unknown. */
    int heap_faults;
    char rest[352]; /* the name less its "batch=N": series alike but for the batch share it */
    /* The model its iterations ran: a module call's series name (its class, precision, mode,
     * " #2"), or the one model its marks held (marks.c); "" unknown (no module call seen: a C++
     * program, the hooks off) or several; model_none: marks that held no module call in a run
     * whose module calls were seen (a server's front thread whose worker's calls were not
     * tied to its requests). Two phases' series of different models are not compared
     * (series_models_differ). */
    char model[128];
    int model_none;
    /* The threads its iterations ran on: ntids of them, past SERIES_TIDS many (iterations.c). */
    int64_t tids[SERIES_TIDS];
    int ntids;
    struct series_iter *its; /* its iterations, time order */
    size_t nits;
};

struct run_series {
    int n;
    struct series_info *v; /* room for REPORT_MAX_SERIES (phases_load; run_lazy_drop frees it) */
    int64_t left_out; /* iterations of series past REPORT_MAX_SERIES (in their phase's row only) */
};

/* settings.c: the libtorch settings the program set (table settings). */
#define SETTINGS_MAX_COMBOS 32
#define SETTINGS_TEXT       96
struct run_settings {
    char constant[256]; /* "cudnn.benchmark=on": set, the same in every iteration ("" none) */
    char varying[128];  /* names of those that differ between iterations ("" none) */
    int n;
    char combo[SETTINGS_MAX_COMBOS][SETTINGS_TEXT]; /* each distinct value of the varying ones */
};
/* For iterations [start[k], end[k]] (k < n): combo[k] = 1 + the index in s->combo of the
 * varying settings it ran with, 0 none (no setting varies); s filled. */
void settings_of_iterations(struct sqlite3 *db, const int64_t *start, const int64_t *end, size_t n,
                            int *combo, struct run_settings *s);

/* One iteration the report counts (iterations.c), marked, a module call or detected, in time
 * order within its phase: where it begins and ends, so that tables and traces show them. */
struct run_iter {
    int64_t id;                    /* iterations.id; 0 detected */
    int64_t tid, start, host, lat; /* its thread; start (ns since t0); host time; latency */
    int64_t batch;                 /* -1 unknown */
    int phase;                     /* index in run_phases.v */
    int series;                    /* index in run_series.v, -1 past the cap */
    int source;   /* iterations.source; 0 detected (the phase's detected.from says from what) */
    int steady;   /* 0: warm-up, or captured (below) */
    int captured; /* its operators were all recorded (sampled): set apart from latencies */
};

/* The run's loss counters (run_phases.lost) and their metadata keys (run_lost_key). */
enum {
    RUN_LOST_EVENTS,           /* dropped_events */
    RUN_LOST_CUPTI_RECORDS,    /* cupti_dropped_records */
    RUN_LOST_CUPTI_REFUSED,    /* cupti_buffers_refused */
    RUN_LOST_CUPTI_ERRORS,     /* cupti_buffer_errors */
    RUN_LOST_CUPTI_NOT_STORED, /* cupti_records_not_stored */
    RUN_LOST_WRITE_ERRORS,     /* write_errors */
    RUN_LOST_ROWS,             /* rows_not_written */
    RUN_LOST_COUNT
};
const char *run_lost_key(int which);

struct run_phases;
/* A part of the run model read on first use, by its getter (run_cuda, kern_rows_get, ...), and
 * kept with the model: its file defines the getter and this descriptor, and report/run/lazy.c
 * lists it (two lines: its declaration and its entry). run_lazy_drop and run_rows_drop loop over
 * that list. */
struct run_model {
    const char *name;
    void (*drop)(void *); /* frees what the getter loaded; NULL: kept to the end */
    int rows;             /* rows read once for the figures (memrows, kernrows, operators_iters):
                             run_rows_drop lets them go */
};
#define RUN_LAZY_MAX 24
/* Held behind a pointer so that the getters, given a const run model, fill it. */
struct run_lazy {
    void *slot[RUN_LAZY_MAX]; /* by the model's place in lazy.c's list; each NULL until first use */
};
/* Where model m of p is kept: NULL until its getter fills it (lazy.c). */
void **run_lazy_slot(const struct run_phases *p, const struct run_model *m);

/* What the report's options ask of the run model, carried into it by phases_load: no loader
 * reads an option from anywhere else. */
struct run_options {
    int warmup_given, warmup; /* --warmup N: the first N iterations of each series are warm-up;
                                 not given: found from the data */
    int detect; /* --detect: the source searched first for unmarked loops (detect.h DETECT_*; 0:
                   kernels) */
    int window; /* --window N (1-based): only the iterations inside recording window N; 0 all */
    int64_t window_start, window_end; /* that window's span (phases_load fills them) */
};
/* The defaults, all zero (a zeroed struct is the defaults): warm-up found, kernels first, every
 * window. */
#define RUN_OPTIONS_DEFAULT ((struct run_options){0, 0, 0, 0, 0, 0})

struct run_phases {
    struct run_options opts; /* as phases_load was given them */
    int n;
    struct phase_info *v;   /* room for REPORT_MAX_PHASES (phases_load; run_lazy_drop keeps n) */
    struct run_iter *iters; /* every iteration the report counts, phase by phase */
    size_t niters;
    int dataloader_worker; /* a DataLoader worker process (meta python_module_hooks): no
                              iterations of its own, no inference advice */
    char py_hooks_off[200]; /* why a Python process's module hooks were off ("" on, or none) */
    /* Python module calls not timed: begun on a thread before it was watched (a model run from
     * several threads), and still open at the end (one raised before PyTorch 2.1 and hid the
     * calls after it, or the program ended inside it). 0 none, or an older database. */
    int64_t py_unseen, py_open_at_end;
    /* Iteration marks not recorded: a thread had 16 open at once (torch_marks_dropped; 0 none). */
    int64_t marks_dropped;
    /* Another Python thread did torch work while the one watched thread's forward was open (the
     * hooks disarmed: its module calls neither timed nor counted), and for how long in all until
     * every thread was watched. 0 none, or an older database. */
    int64_t py_late_n, py_late_ns;
    char end_reason[64]; /* meta end_reason: "exit", "signal SIGTERM", ...; "" not recorded */
    /* What the run lost (run metadata; 0 in databases without the counter): indexes as
     * RUN_LOST_* below, read once for the Summary's Lost line and the advice records_dropped. */
    int64_t lost[7];
    char cupti_status[256]; /* collector.cupti, "" none */
    struct run_lazy *lazy;  /* phases_load allocates it */
    struct run_devices devices;
    struct run_series series;     /* every phase's, in phase order */
    struct run_settings settings; /* the run's, and what tells its series apart */
};

/* The run model of db under the options o (NULL: RUN_OPTIONS_DEFAULT); --window N names a
 * window the run does not have: exits 2 naming those there are. */
void phases_load(struct sqlite3 *db, struct run_phases *p, const struct run_options *o);
/* Let go of what only sections use, once they are built: every lazy part with a drop (lazy.c),
 * the series (0 of them after) and every iteration (iters and each phase's steady arrays NULL;
 * nsteady stays their count): a report of many processes keeps each run model's phase figures,
 * not what its sections were built from. The invariants no longer hold after it. */
void run_lazy_drop(struct run_phases *p);
/* Only the lazy parts that are rows read once for the figures (memrows, kernrows,
 * operators_iters): the figures made, a report of several processes keeps no process's rows. */
void run_rows_drop(struct run_phases *p);
/* The invariants above, asserted (phase_util.c; nothing in builds with NDEBUG). */
void run_check(const struct run_phases *p);
/* The run's captured iterations set apart from the latencies, every phase's (the Captured
 * columns' sum). */
int64_t phases_captured_apart(const struct run_phases *p);
/* iterations.c: each phase's iterations (phases_load calls it). */
void iterations_load(struct sqlite3 *db, struct run_phases *p);
/* The rows of table iterations the report counts, as an SQL condition on its columns: a mark
 * wins (where the program marks its iterations, an NVTX range or a record_function scope, the
 * Python module calls inside are no iterations of their own); "1" all of them. */
const char *iterations_counted(struct sqlite3 *db);
/* Marks that another thread's module calls ran inside (a server's request, marked on its front
 * thread, its model run on a worker: marks.c): how many. Each takes the phase of its first such
 * call and their operators; its own thread's operator calls in it count as outside iterations. */
int64_t iterations_moved(struct sqlite3 *db);
/* db_operator_calls with those calls' iter the mark's; torch_operator_windows (its columns, start
 * to every) the same, the marks' own windows left out; the iterations' phase as an SQL expression
 * on table iterations (unaliased). The plain ones where no mark moved. A call of a moved mark's own
 * thread inside it reads iter -1 (no iteration's, counted apart: op_iters.moved); a mark whose
 * calls were captured in part weighs those calls' figures by its calls over those captured (its
 * calls, self and dur then REAL). */
const char *iterations_operator_calls(struct sqlite3 *db);
const char *iterations_operator_windows(struct sqlite3 *db);
const char *iterations_phase(struct sqlite3 *db);
/* For the traces: a TEMP table `iterations`, shadowing the database's, that holds p->iters, the
 * iterations the report counts (detected ones with source 0 and no id of the database's), with
 * two columns more: series (run_series index, -1 none) and name (its name, NULL unnamed). */
void iterations_shadow(struct sqlite3 *db, const struct run_phases *p);
/* iterations.source in words: "python module call", "nvtx range", ...; 0 "detected". */
const char *iterations_source_text(int source);
/* The same for one iteration, a detected one with what it was detected from. */
const char *iterations_source_name(const struct run_phases *p, const struct run_iter *x);
/* How many leading iterations of lat[0..n) (latencies in time order) are warm-up: `fixed` when
 * it is 0 or more (--warmup), else found from the data (iterations.c). */
size_t iterations_warmup(int fixed, const int64_t *lat, size_t n);
/* 95% interval of median(b) / median(a), bootstrap with a fixed seed (band.c); 0 when too few. */
int iterations_ratio_ci(const int64_t *a, size_t na, const int64_t *b, size_t nb, double *lo,
                        double *hi);
/* The band every speed-up is read with (band.c): iterations_ratio_ci widened to the band of
 * the medians of each set's eight stretches in time order (band.c's drift band; a set of
 * fewer than 48 has the iterations' band alone), what each set's wandering level allows.
 * a and b in time order. */
int iterations_band(const int64_t *a, size_t na, const int64_t *b, size_t nb, double *lo,
                    double *hi);
/* The same of mean(b) / mean(a): for a rate over wall time (a loop's delivered throughput), which
 * a rare long wait moves as much as its length, where a median would not see it. */
int iterations_mean_ratio_ci(const int64_t *a, size_t na, const int64_t *b, size_t nb, double *lo,
                             double *hi);
/* The same band for mean(b) / mean(a) (band.c): the iterations' widened by the means of each
 * set's eight stretches; a rate's band (series_rate_verdict). */
int iterations_mean_band(const int64_t *a, size_t na, const int64_t *b, size_t nb, double *lo,
                         double *hi);
/* What a 95% band [lo, hi] of a speed-up r says, in a run and between runs alike: faster or
 * slower only where the band clears RUN_NOISE_FLOOR (3%) that way; the same within 1% where r
 * is and the band stays within the floor; else no clear difference (iterations.c). */
#define RUN_NOISE_FLOOR 1.03
enum verdict { VERDICT_SAME, VERDICT_FASTER, VERDICT_SLOWER, VERDICT_UNCLEAR };
enum verdict iterations_verdict(double lo, double hi, double r);
/* A level shift in steady latencies (time order): 1 and the medians before and after it (a
 * machine that changed speed mid-way: a band over them all would read confident), else 0. */
int iterations_level_shift(const int64_t *v, size_t n, int64_t *before, int64_t *after);
/* Whether a band [lo, hi] of a speed-up clears the ratio of a shift x -> y of either side
 * (squared where the two sets ran one after the other, apart; and the floor beyond it): a
 * verdict a shift cannot undo, which stands beside the shift's words; else the shift withholds
 * the verdict. */
int iterations_band_outlasts_shift(double lo, double hi, int64_t x, int64_t y, int apart);
/* The first of a and b whose steady iterations shift level (a slow stretch, a clock change), or
 * NULL: a comparison with it says so instead of a verdict. */
const struct phase_info *phases_shifted(const struct phase_info *a, const struct phase_info *b);
/* Whether a band [lo, hi] between phases a and b outlasts the shift of each that shifted
 * (iterations_band_outlasts_shift): 1 where neither shifted. */
int phases_band_outlasts(const struct phase_info *a, const struct phase_info *b, double lo,
                         double hi, int apart);
/* Two phases of one run ran one after the other: their spans do not overlap. */
int phases_apart(const struct phase_info *a, const struct phase_info *b);
/* The band every speed-up of phase a over phase b is read with (iterations_band of their counted
 * latencies: median(b) / median(a)), as a shift of either allows it (phases_band_outlasts; apart:
 * phases_apart within a run, 1 between runs): 1 it stands, 0 too few for one, -1 a shift
 * withholds it. The Fastest phase and inference_mode lines, the phases and inference_mode
 * tables, compare's phase rows. */
int phases_pair_band(const struct phase_info *a, const struct phase_info *b, int apart, double *lo,
                     double *hi);
/* Of two phases whose p50 differ by more than 15%: how many steady iterations of the faster ran
 * at the slower one's speed (within 10% of its p50, or slower). Two or more (and 10% of them)
 * say the machine's speed may have changed between the phases: a verdict then carries that
 * caution. 0 when the p50 are closer or none did. */
size_t phases_overlap(const struct phase_info *fast, const struct phase_info *slow);
/* The phase that ran with ph's autocast setting in `grad_mode`, with steady iterations, or NULL
 * (inference_mode's no_grad twin). */
const struct phase_info *phase_twin(const struct run_phases *p, const struct phase_info *ph,
                                    const char *grad_mode);

/* An iteration's time off the CPU, from its row of iteration_cpu (profiler/iteration.c): its
 * host time less its CPU time where a context switch took it off, none where no switch did (it
 * ran throughout). Its CPU time is the scheduler's account at its edges, a tick behind at most,
 * and a switch brings the account up to date: iterations without one read too little CPU, those
 * with one too much (a loop of 1.8 ms iterations under load read 1.59 ms off the CPU in those
 * without a switch, 0.08 of a switch each). */
static inline double run_off_cpu(double host, double cpu, double vcsw, double ivcsw)
{
    if (cpu < 0 || (vcsw <= 0 && ivcsw <= 0)) return 0;
    double off = host - cpu;
    return off < 0 ? 0 : off > host ? host : off;
}
/* Length of the union of n time intervals, overlaps counted once (sorts them). */
int64_t union_length(struct interval *v, size_t n);
/* v sorted by start and merged into disjoint intervals, in place; how many there are. */
size_t intervals_merge(struct interval *v, size_t n);
/* A run that did not finish has no kernel summary: compute it once from the rows into a TEMP
 * table of the same name (summaries.c), which every section then reads. */
void summaries_complete(struct sqlite3 *db);
/* The phase with this id (phase.h's fixed ids), or NULL. */
const struct phase_info *phase_by_id(const struct run_phases *p, int id);
/* "inference/bf16": a phase's label in the few columns text can spare. */
void phase_short_label(const struct phase_info *ph, char *out, size_t n);
/* Index of the phase named `want` (its label or short label, "inference_mode/bf16" too), or -1. */
int phases_match(const struct run_phases *p, const char *want);
/* The same, or exit 2 naming `option` and the phases there are. */
int phases_find(const struct run_phases *p, const char *want, const char *option);
/* The label of the phase --phase names among the phases of several runs (exit 2 when none has
 * it, listing those they have). */
const char *phase_resolve(const struct run_phases *const *runs, int n, const char *want);
/* Of a phase's peak on device k, what was still held after it (dev_entry_alloc: weights, inputs,
 * data kept; not what its iterations made and let go), the Summary's and the memory table's;
 * -1 none (no thread of the phase allocated there, nothing held). */
int64_t memory_held_after_peak(const struct phase_info *ph, int k);
/* memory.c: the device memory figures speak for (the first GPU, else the CPU; -1 none); each
 * phase's peaks on it (phases_load calls it); what `ph` saves against `base` on it, in bytes
 * and % of base's peak (0 when there is no figure, or when the two began holding amounts apart
 * by over a quarter of it: memory_entry_moved, what one began holding more, 0 where not). */
int run_memory_device(const struct run_devices *d);
void phases_memory_peaks(struct run_phases *p);
/* The largest batch of ph's steady iterations (-1 none known); whether a's and b's are both
 * known and differ (memory_saving then says nothing). */
int64_t memory_largest_batch(const struct phase_info *ph);
int memory_batches_differ(const struct phase_info *a, const struct phase_info *b);
int memory_saving(const struct phase_info *base, const struct phase_info *ph, int64_t *bytes,
                  double *pct);
int64_t memory_entry_moved(const struct phase_info *base, const struct phase_info *ph);
/* steady.c: each phase's steady-state GPU figures (phases_load calls it). */
void phases_steady_gpu(struct sqlite3 *db, struct run_phases *p);
/* series.c: each series' kernels, GPU time and peak memory (phases_load calls it). */
void series_figures(struct sqlite3 *db, struct run_phases *p);
/* What the first screen says of a phase's series (series.c). Configurations: among the series
 * run at one batch size (the one most series share, the largest on a tie; any batch when none
 * is known), the fastest and slowest by p50, when there are two. Batch: among series alike but
 * for their batch size (the same rest), of the groups with two batches or more the one whose
 * best batch gives the most items/s: that best one and the batch it is compared with (`small`:
 * the smallest, or the largest when the smallest is the best), and their items/s ratio. 0 when
 * neither exists. */
struct series_pick {
    const struct series_info *fast, *slow;  /* NULL: no two configurations at one batch */
    const struct series_info *small, *most; /* NULL: no batch sweep */
    const struct series_info *next;         /* the batch with the most items/s after most's */
    double items_ratio;
};
int series_pick(const struct run_phases *p, int phase, struct series_pick *out);
/* series_verdict.c: what the band of slow's steady latencies over fast's says (the Series line
 * and its line across runs): ratio slow p50 / fast p50; has_band 0 where there are too few for a
 * band or a shift withholds it (withheld 1: shifted's levels shift_before -> shift_after); where
 * a band stands beside a shift, shifted is set too. */
struct pair_verdict {
    double ratio, lo, hi;
    int has_band, withheld;
    enum verdict v;
    const struct series_info *shifted;
    int64_t shift_before, shift_after;
};
void series_pair_verdict(const struct series_info *fast, const struct series_info *slow,
                         struct pair_verdict *out);
/* The same of two batch sizes' items/s (series_items_per_s: items over mean latency): ratio
 * most's over other's, its band the mean latencies' (iterations_mean_band) times their items an
 * iteration; no shift rule (series_verdict.c). */
void series_rate_verdict(const struct series_info *most, const struct series_info *other,
                         struct pair_verdict *out);
/* between.c: each series' GPU time busy between its iterations (phases_load calls it). */
void series_between_gpu(struct sqlite3 *db, struct run_phases *p);
/* What a captured iteration of series s counts for in the latency figures (its p50s, bands,
 * tails): its time over what a capture added in its series (capture_f, at least 1). Captures are
 * no even sample of a run, so they are counted, not left out (iterations.c). */
int64_t series_captured_as(const struct series_info *s, int64_t lat);
/* The latencies a series' figures are over, in time order, into out (room for s->nits): its
 * steady iterations', and its captured ones' over what a capture adds (the rule of
 * phase_info.counted_lat); returns how many. */
size_t series_steady_latencies(const struct series_info *s, int64_t *out);
/* Each series' CPU time and time off the CPU per steady iteration (series_cpu.c; phases_load). */
void series_cpu(struct sqlite3 *db, struct run_phases *p);
/* Each series' heap_faults (series_faults.c; phases_load, after series_cpu). */
void series_heap_faults(struct sqlite3 *db, struct run_phases *p);
/* The warm-up's Likely cause, where its iterations were off the CPU more (series_cpu.c). */
void phases_warmup_off_cpu(struct sqlite3 *db, struct run_phases *p);
/* The share of a series' wall time spent between iterations, in percent (-1 none measured). */
double series_between_pct(const struct series_info *s);
/* The share of the same wall time in the gaps past their median (their time over the p50 each):
 * a loop's own overhead is in every gap, a wait that comes in bursts (a queue that fills, every
 * 10th batch read from disk) only in some; 0 where none, -1 as above. */
double series_between_long_pct(const struct series_info *s);
/* The series waits between its iterations: `pct` of its wall time or more between them, and
 * either gaps of p50 `ns` or more, or gaps whose time past the median is itself `pct` of the wall
 * time, on average a tenth of `ns` and 4 times their median or more (the bursts: a p50 of
 * microseconds hid half a program's time, issue 49's fresh-eyes check). */
int series_between_waits(const struct series_info *s, double pct, int64_t ns);
/* Items a second over the series' steady iterations (0 unknown): the Series line's and the
 * tables' one figure. */
double series_items_per_s(const struct series_info *s);
/* The phase's one series, or NULL (none, or several: the phase pools them). */
const struct series_info *phase_only_series(const struct run_phases *p,
                                            const struct phase_info *ph);
/* Two series whose batch sizes are both known and differ: a call's latency then says nothing
 * of the mode or the change, the p50 per item compares them (the Summary, the phase tables,
 * compare). 0 when either is NULL. */
int series_batches_differ(const struct series_info *x, const struct series_info *y);
/* Two series that ran other models, both known (series_info.model): model A under no_grad and
 * model B under inference_mode read "1.44x no_grad, faster" (a fresh-eyes check); no ratio
 * between them anywhere. 0 when either is NULL or its model unknown. */
int series_models_differ(const struct series_info *x, const struct series_info *y);
/* Each phase's peak_mixed: two of its series ran other models or batch sizes (series.c;
 * phases_load calls it; memory_saving reads it). */
void series_mark_mixed_peaks(struct run_phases *p);
/* Two phases whose iterations were both detected (from the same source) and whose repeated
 * forwards differ (detect_info.unit_sig): other work, where no model name can say so (two C++
 * threads, model A in inference_mode and a smaller B under no_grad, read "0.05x no_grad,
 * slower"); no ratio between them anywhere (phase_util.c). */
int phases_work_differs(const struct phase_info *x, const struct phase_info *y);
/* Two series whose models are not configurations of one (series_models_differ, but a quantized,
 * TorchScript or other-dtype copy is its model's: fp32 against int8 is the question). */
int series_families_differ(const struct series_info *x, const struct series_info *y);
/* Its model in words: the model, "none" (model_none), "" unknown. */
const char *series_model_text(const struct series_info *s);
/* What the loop delivered: items (iterations when the batch is unknown: *items 0, else 1) a
 * second over loop_wall, the waits between its iterations included. 0 when fewer than two steady
 * iterations. */
double series_delivered_per_s(const struct series_info *s, int *items);
/* The cycles of a series' loop: from the start of each steady iteration to the start of its next
 * one, less the time that was not its turn (what loop_wall takes out), into out (room for
 * s->nsteady); returns how many (at most steady iterations - 1). Their mean is what the loop rate
 * is the inverse of, so a band of the loop rate comes from them. */
size_t series_cycles(const struct run_phases *p, const struct series_info *s, int64_t *out);
void series_loop_walls(struct run_phases *p);
/* between.c: each series' time waiting for a DataLoader inside its gaps (phases_load calls it). */
void series_between_data(struct sqlite3 *db, struct run_phases *p);
/* suspect.c: mark the phases whose figures lost events (phases_load calls it). */
void phases_suspect(struct sqlite3 *db, struct run_phases *p);
/* "cpu", "cuda:0", ... */
void device_name(int type, int index, char *out, size_t n);

#endif
