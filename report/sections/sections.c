/*
 * sections.c: the report's core sections as tables: the run header, the phase table and the
 * kernel summary (nsys cuda_gpu_kern_sum columns).
 */
#include "sections.h"
#include "../run/operators.h"
#include "../run/runfacts.h"
#include "../run/timeline.h"
#include "../../collectors/registry.h"

#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

void phase_cells(struct table *t, const struct phase_info *ph, int full, int shrt)
{
    char s[32] = "(no phase)";
    if (ph) phase_short_label(ph, s, sizeof s);
    table_set_text(t, full, ph ? ph->label : "(no phase)");
    table_set_text(t, shrt, s);
}

static void meta_text_col(struct table *t, const struct runfacts *r, int col, const char *key)
{
    const char *v = runfacts_text(r, key);
    if (v) table_set_text(t, col, v);
}

static int meta_int_col(struct table *t, const struct runfacts *r, int col, const char *key)
{
    int64_t v;
    if (!runfacts_int(r, key, &v)) return 0;
    table_set_int(t, col, v);
    return 1;
}

static void version_text(int64_t v, char *out, size_t n)
{
    snprintf(out, n, "%lld.%lld", (long long)(v / 1000), (long long)(v % 1000 / 10));
}

static void warnings_text(const struct runfacts *r, const struct run_bounds *b, char *out, size_t n)
{
    size_t o = 0;
    int64_t v;
    out[0] = 0;
#define WARN(...) (o += (size_t)snprintf(out + o, o < n ? n - o : 0, __VA_ARGS__))
    int64_t pid = 0;
    const char *host = runfacts_text(r, "host");
    char here[256] = "";
    if ((!runfacts_int(r, "finished", &v) || !v) && runfacts_int(r, "pid", &pid) && pid > 0 &&
        host && !gethostname(here, sizeof here - 1) && !strcmp(host, here) &&
        kill((pid_t)pid, 0) == 0)
        WARN("%sthe run is still going (process %lld): figures cover what it has written so"
             " far (it commits at least every second)",
             o ? "; " : "", (long long)pid);
    else if (!runfacts_int(r, "finished", &v) || !v)
        WARN("%sthe run did not finish writing (killed, or still running): figures cover what"
             " was committed",
             o ? "; " : "");
    if (runfacts_int(r, "dropped_events", &v) && v && runfacts_stop_fix(r))
        WARN("%s%lld events dropped, recording having stopped (below)%s%s", o ? "; " : "",
             (long long)v, r->drops[0] ? ": " : "", r->drops);
    else if (runfacts_int(r, "dropped_events", &v) && v)
        WARN("%s%lld events dropped, the writer falling behind (%s%sraise INFPROF_BUFFER_MB or"
             " INFPROF_BUFFER_WAIT_MS)",
             o ? "; " : "", (long long)v, r->drops, r->drops[0] ? "; " : "");
    if (runfacts_int(r, "cupti_dropped_records", &v) && v)
        WARN("%s%lld CUPTI records dropped (raise INFPROF_CUPTI_BUFFERS or _BUFFER_KB)",
             o ? "; " : "", (long long)v);
    if (runfacts_int(r, "cupti_buffers_refused", &v) && v)
        WARN("%s%lld CUPTI buffer requests refused: the pool was empty", o ? "; " : "",
             (long long)v);
    if (runfacts_int(r, "cupti_buffer_errors", &v) && v)
        WARN("%s%lld CUPTI buffers could not be read to the end (their last records are lost)",
             o ? "; " : "", (long long)v);
    if (runfacts_int(r, "cupti_records_not_stored", &v) && v)
        WARN("%s%lld CUPTI records could not be stored", o ? "; " : "", (long long)v);
    if (runfacts_int(r, "disk_reserve_stop_ns", &v))
        WARN("%srecording stopped %.1f s into the run: the disk fell below the free space left to"
             " the program (INFPROF_DISK_RESERVE_MB); what followed is counted as dropped",
             o ? "; " : "", v / 1e9);
    if (runfacts_int(r, "file_size_stop_ns", &v))
        WARN("%srecording stopped %.1f s into the run: the database came near the file-size limit"
             " (ulimit -f), with room kept for the run's end; what followed is counted as dropped",
             o ? "; " : "", v / 1e9);
    if (runfacts_int(r, "finish_cut_ns", &v))
        WARN("%sthe finish ran out of time (INFPROF_FINISH_TIMEOUT_MS) at %.1f s: the events still"
             " buffered then are counted as dropped, not stored",
             o ? "; " : "", v / 1e9);
    if (runfacts_int(r, "events_after_end", &v) && v)
        WARN("%s%lld NVTX ranges, marks or iterations came after the run ended (a library's"
             " destructor or atexit handler, other threads during exit or a signal): counted, not"
             " stored",
             o ? "; " : "", (long long)v);
    if (runfacts_int(r, "duplicate_rows", &v) && v)
        WARN("%s%lld rows with a duplicate key were not stored", o ? "; " : "", (long long)v);
    if (runfacts_int(r, "write_errors", &v) && v) {
        int64_t rows = 0;
        runfacts_int(r, "rows_not_written", &rows);
        WARN("%s%lld database writes failed", o ? "; " : "", (long long)v);
        if (rows)
            WARN(" (%lld rows not written: a full disk or a file size limit?)", (long long)rows);
    }
    if (b->power) {
        WARN("%s%lld power readings above the GPU's ", o ? "; " : "", (long long)b->power);
        if (b->power_limit_w > 0)
            WARN("%.0f W limit", b->power_limit_w);
        else
            WARN("limit");
        WARN(" were left out of every figure");
    }
    if (b->cpu)
        WARN("%s%lld CPU time readings above the %.0f CPUs online were left out of every figure",
             o ? "; " : "", (long long)b->cpu, b->cpus_online);
    if (b->memory)
        WARN("%s%lld allocator reports above their GPU's memory were left out of every figure",
             o ? "; " : "", (long long)b->memory);
    if (runfacts_int(r, "cpu_memory_untracked_blocks", &v) && v) {
        int64_t bytes = 0;
        runfacts_int(r, "cpu_memory_untracked_bytes", &bytes);
        WARN("%s%lld CPU blocks (%.2f MiB) found infprof's table of live blocks full and were"
             " left out of the CPU memory figures (about 240,000 held at once)",
             o ? "; " : "", (long long)v, bytes / 1048576.0);
    }
    if (r->missing[0])
        WARN("%stables missing from the database: %s (edited, or cut short): what they held is"
             " not in this report",
             o ? "; " : "", r->missing);
    const char *cupti = runfacts_text(r, "collector.cupti");
    /* A program that never used CUDA lost nothing; anything else off or passive is a gap. */
    if (cupti && strncmp(cupti, "on", 2) != 0 && !strstr(cupti, "did not initialise CUDA"))
        WARN("%sCUDA activity not recorded (%s)", o ? "; " : "", cupti);
#undef WARN
}

/* What the Python module hooks add to each forward (the global pre-hook's slow path, our hooks,
 * the iteration's edges), measured apart, not within a run: bench/python_hooks.py reads 2.0-2.4
 * us a forward of one module, bench/mlp_cost.py about 3.5 us on a 20-layer MLP
 * (docs/performance.md). */
#define OBSERVER_HOOKS_LO_NS 2000.0
#define OBSERVER_HOOKS_HI_NS 4000.0
/* What a CPU allocation and its free add with their reports (INFPROF_CPU_MEMORY, on by default),
 * measured apart: infprof-bench-torch cpu_fold 69-85 ns a pair inside an iteration, cpu_alloc_free
 * 74-133 ns outside one (docs/performance.md). On a 20-layer MLP's 40 allocations a forward that
 * is most of what the defaults add (about 3 of 4-4.5 us, by perf): the hooks' 2-4 us alone
 * stated a third of what a small model paid. */
#define OBSERVER_CPU_ALLOC_LO_NS 70.0
#define OBSERVER_CPU_ALLOC_HI_NS 135.0

/* The CPU allocations of phase ph an iteration (its CPU devices' allocations over its iterations,
 * warm-up ones too); 0 none recorded. */
static double observer_cpu_allocs(const struct run_phases *p, const struct phase_info *ph)
{
    int64_t n = 0;
    for (int k = 0; k < p->devices.n && k < REPORT_MAX_DEVICES; k++)
        if (p->devices.type[k] == 0) n += ph->dev_allocs[k];
    return ph->iterations > 0 ? (double)n / (double)ph->iterations : 0;
}

/* The fastest series whose iterations are the Python module hooks' (source 5): the one their
 * cost weighs on most; NULL none. */
static const struct series_info *observer_module_series(const struct run_phases *p)
{
    const struct series_info *fast = NULL;
    for (size_t i = 0; i < p->niters; i++) {
        const struct run_iter *it = &p->iters[i];
        if (it->source != 5 || it->series < 0 || it->series >= p->series.n) continue;
        const struct series_info *s = &p->series.v[it->series];
        if (s->nsteady && s->lat_p50 > 0 && (!fast || s->lat_p50 < fast->lat_p50)) fast = s;
    }
    return fast;
}

/* What infprof cost the run, as the run itself measured it (issue 48 item 4): the captured
 * iterations against the others (the factor each series shows, report/run/iterations.c), and
 * the CPU time of our writer thread (every one: cpu_samples), of which the energy sampler's
 * readings (a tick on the writer: energy_sampler_cpu_ns is part of it, not more).
 * The launch path's cost is not measurable inside a run: said so. "" when nothing is known. */
static void observer_text(const struct runfacts *r, const struct run_phases *p,
                          const struct run_bounds *b, char *out, size_t n)
{
    size_t o = 0;
    out[0] = 0;
    double added = 0, total = 0, worst = 1;
    int64_t captured = 0;
    int capped = 0; /* the worst is the most its calls could cost, not what was measured */
    int nser = 0;   /* series with captures: the worst is one median among several */
    for (int i = 0; i < p->series.n; i++) {
        const struct series_info *s = &p->series.v[i];
        if (!s->nsteady || s->lat_mean <= 0) continue;
        double f = s->capture_f > 1 && s->captured_apart ? s->capture_f : 1;
        added += (f - 1) * (double)s->lat_mean * (double)s->captured_apart;
        total += (double)s->lat_mean * ((double)s->nsteady + f * (double)s->captured_apart);
        if (f > worst) capped = s->capture_capped;
        captured += s->captured_apart, worst = f > worst ? f : worst;
        nser += s->captured_apart > 0;
    }
    if (captured && total > 0 && worst < 1.005)
        o += (size_t)snprintf(out + o, n - o,
                              "the %lld iterations whose operators were captured ran no slower"
                              " than the others around them (set apart from the latencies)",
                              (long long)captured);
    else if (captured && total > 0 && capped)
        o += (size_t)snprintf(out + o, n - o,
                              "the %lld iterations whose operators were captured ran at most %.0f%%"
                              " slower, what recording their calls can cost (their neighbours"
                              " differ by more; set apart from the latencies): at most %.1f%% of"
                              " the steady and captured iterations' time",
                              (long long)captured, 100 * (worst - 1), 100 * added / total);
    else if (captured && total > 0) /* "up to": the slowest series' median (a fresh-eyes check
                                       read it as the largest of one series' captures) */
        o += (size_t)snprintf(out + o, n - o,
                              "the %lld iterations whose operators were captured ran %s%.0f%%"
                              " slower (%s against their neighbours; set apart from the"
                              " latencies): %.1f%% of the steady and captured iterations' time",
                              (long long)captured, nser > 1 ? "up to " : "", 100 * (worst - 1),
                              nser > 1 ? "the slowest series' median" : "the median",
                              100 * added / total);
    int64_t dur = 0, sampler = 0;
    runfacts_int(r, "duration_ns", &dur);
    runfacts_int(r, "energy_sampler_cpu_ns", &sampler);
    double ours = b->ours_cpu_ns > (double)sampler ? b->ours_cpu_ns : (double)sampler;
    if (dur > 0 && ours > 0 && o + 80 < n)
        o += (size_t)snprintf(out + o, n - o,
                              "%sinfprof's writer thread used %.1f%% of a core (%.2f s",
                              o ? "; " : "", 100 * ours / (double)dur, ours / 1e9);
    if (dur > 0 && ours > 0 && sampler >= 5000000 && o + 60 < n) /* 0.00 s says nothing */
        o += (size_t)snprintf(out + o, n - o, ", %.2f s of it reading energy",
                              (double)sampler / 1e9);
    if (dur > 0 && ours > 0 && o + 2 < n) o += (size_t)snprintf(out + o, n - o, ")");
    /* A tiny forward pays the module hooks' few microseconds in every latency it reports: said
     * with its share (an 18 us MLP ran 16% slower under us while this line read 0.2%). */
    const struct series_info *fast = observer_module_series(p);
    if (fast && o + 400 < n) {
        char p50[32], label[32] = "", mem[160] = "";
        fmt_ns(p50, sizeof p50, (double)fast->lat_p50);
        phase_short_label(&p->v[fast->phase], label, sizeof label);
        double allocs = observer_cpu_allocs(p, &p->v[fast->phase]);
        double lo_ns = OBSERVER_HOOKS_LO_NS, hi_ns = OBSERVER_HOOKS_HI_NS;
        if (allocs >= 1) {
            double a_lo = allocs * OBSERVER_CPU_ALLOC_LO_NS,
                   a_hi = allocs * OBSERVER_CPU_ALLOC_HI_NS;
            snprintf(mem, sizeof mem,
                     ", its CPU allocations' reports about %.1f-%.1f us more (%.0f an iteration,"
                     " 70-135 ns each with its free)",
                     a_lo / 1e3, a_hi / 1e3, allocs);
            lo_ns += a_lo, hi_ns += a_hi;
        }
        double lo = 100 * lo_ns / (double)fast->lat_p50, hi = 100 * hi_ns / (double)fast->lat_p50;
        int digits = hi < 1 ? 2 : hi < 10 ? 1 : 0; /* "0.1-0.1%" said no range */
        o += (size_t)snprintf(out + o, n - o,
                              "%sthe Python module hooks add about 2-4 us to each forward's"
                              " latency%s, measured apart (bench/python_hooks.py%s), and more to"
                              " the loop around it (a quarter to half as much again, between"
                              " iterations): %.*f-%.*f%% of %s%s%s's p50 %s",
                              o ? "; " : "", mem, mem[0] ? ", infprof-bench-torch" : "", digits, lo,
                              digits, hi, label, fast->name[0] ? " " : "", fast->name, p50);
    }
    if (o && o + 96 < n)
        o += (size_t)snprintf(out + o, n - o,
                              "; the cost on each launch and operator call is not measured"
                              " within a run (bench/overhead.py)");
    /* Memory handed back and faulted in again every iteration (series_faults.c): glibc trims or
     * not by the heap's layout, which our own work moves; not a cost this line can measure, and
     * it may be most of the latency (a conv net's forward 1.6-2.5x slower under us, a fresh-eyes
     * check): said with the series, never "0.0%" alone. */
    const struct series_info *hf = NULL;
    for (int i = 0; i < p->series.n && !hf; i++)
        if (p->series.v[i].heap_faults) hf = &p->series.v[i];
    if (hf && o + 200 < n) {
        char label[32] = "", sys[32] = "";
        phase_short_label(&p->v[hf->phase], label, sizeof label);
        if (hf->sys_mean >= 0 && hf->lat_mean > 0)
            snprintf(sys, sizeof sys, ", %.0f%% of its latency",
                     100.0 * (double)hf->sys_mean / (double)hf->lat_mean);
        snprintf(out + o, n - o,
                 "%snot counted: %s%s%s's %.0f page faults an iteration%s, which may be more"
                 " or fewer than the program alone would take (page_faults below)",
                 o ? "; " : "", label, hf->name[0] ? " " : "", hf->name, hf->faults_mean, sys);
    }
}

/* How the PyTorch operators were recorded (INFPROF_OPERATORS), in a process with libtorch: every
 * output names the mode its operator figures come from. "" none (no libtorch, an older run). */
static void operators_text(const struct runfacts *r, const struct run_phases *p, char *out,
                           size_t n)
{
    out[0] = 0;
    const char *mode = runfacts_text(r, "torch_operators_mode");
    const char *set = runfacts_text(r, "config.INFPROF_OPERATORS");
    int64_t every = 0, windows = 0;
    if (mode && !strcmp(mode, "all"))
        snprintf(out, n, "every call (INFPROF_OPERATORS=1)");
    else if (mode && !strcmp(mode, "sampled") && runfacts_int(r, "torch_operators_every", &every) &&
             (!runfacts_int(r, "torch_operator_windows", &windows) || !windows))
        snprintf(out, n, "sampled, none captured: no iteration was seen live (a Python module"
                         " call, a TorchScript call, a mark; INFPROF_OPERATORS=1: every call)");
    else if (mode && !strcmp(mode, "sampled") && every > 0) {
        int64_t spaced = 0, milli = 0, pct = 0;
        runfacts_int(r, "torch_operator_windows_spaced", &spaced);
        int has_milli = runfacts_int(r, "torch_operators_budget_milli", &milli);
        int has_pct = runfacts_int(r, "torch_operators_budget_pct", &pct);
        int64_t budget = operators_budget(has_milli, milli, has_pct, pct);
        /* The count the tables' Captured columns sum to, and the rest by name: captures in a
         * warm-up (the phase's second iteration always is one) are warm-up there. */
        runfacts_int(r, "torch_operator_windows", &windows);
        int64_t apart = phases_captured_apart(p);
        snprintf(out, n,
                 "sampled: every call of %s, %lld captured%s (INFPROF_OPERATORS=1: every call)",
                 operators_rate_words(every, spaced, budget), (long long)windows,
                 windows > apart && apart > 0
                     ? pool_printf(", %lld of them warm-up or outside the iterations counted",
                                   (long long)(windows - apart))
                     : "");
    } else if (set && !strcmp(set, "0") && runfacts_text(r, "torch_api"))
        snprintf(out, n, "off (INFPROF_OPERATORS=0)");
}

/* How the run's events were timed (meta clock_source, from 2026-11-29; nothing before). */
static void clock_text(const struct runfacts *r, char *out, size_t n)
{
    const char *source = runfacts_text(r, "clock_source");
    int64_t err = 0, steps = 0;
    out[0] = 0;
    if (!source) return;
    runfacts_int(r, "clock_max_error_ns", &err);
    runfacts_int(r, "clock_steps", &steps);
    if (!strcmp(source, "tsc") && steps < 2) /* on, and never checked since */
        snprintf(out, n, "CLOCK_MONOTONIC read through the TSC");
    else if (!strcmp(source, "tsc"))
        snprintf(out, n,
                 "CLOCK_MONOTONIC read through the TSC (within %lld ns of it at every check%s)",
                 (long long)err, err > 50000 ? ": its rate was changed while the run lasted" : "");
    else if (strstr(source, "given up"))
        snprintf(out, n,
                 "CLOCK_MONOTONIC through the TSC, then clock_gettime: the TSC parted from it by"
                 " %lld ns (times around then may be off by that much)",
                 (long long)err);
    else
        snprintf(out, n, "CLOCK_MONOTONIC (clock_gettime)");
}

struct table *section_run(struct sqlite3 *db, const struct run_phases *p)
{
    const struct runfacts *r = run_facts(db, p);
    struct table *t = table_new("run", "Run");
    t->object = 1;
    static const struct {
        const char *key, *title;
        enum col_type type;
    } cols[] = {
        {"command", "Command", COL_TEXT},
        {"pid", "PID", COL_INT},
        {"host", "Host", COL_TEXT},
        {"start_time", "Started", COL_TEXT},
        {"start_unix_ns", NULL, COL_INT},
        {"duration_ns", "Duration", COL_NS},
        {"end_reason", "Ended by", COL_TEXT},
        {"exit_status", "Exit status", COL_INT},
        {"finished", NULL, COL_INT},
        {"gpus", "GPU", COL_TEXT},
        {"cuda_driver", "CUDA driver", COL_TEXT},
        {"cuda_runtime", "CUDA runtime", COL_TEXT},
        {"torch_api", NULL, COL_TEXT},  /* long: JSON only; "libtorch hooks" says on or off */
        {"collectors", NULL, COL_TEXT}, /* one column per collector (collectors/registry.c) */
        {"python_module_hooks", "Python modules", COL_TEXT},
        {"operators", "Operators", COL_TEXT},
        {"observer_cost", "Our cost", COL_TEXT},
        {"clock", "Clock", COL_TEXT},
        {"settings", "Settings", COL_TEXT},
        {"events_recorded", "Events", COL_INT},
        {"kernels", "Kernels", COL_INT},
        {"dropped_events", "Dropped events", COL_INT},
        {"cupti_dropped_records", "Dropped CUPTI records", COL_INT},
        {"cupti_buffers_refused", NULL, COL_INT},
        {"write_errors", NULL, COL_INT},
        /* The CPUs the process had (JSON and CSV; text says them in "CPU time" where they
         * matter): online, allowed to it, its cgroup's quota in thousandths of a core, and
         * the quota's periods recorded and those in which it held the process back. */
        {"cpus_online", NULL, COL_INT},
        {"cpus_allowed", NULL, COL_INT},
        {"cpu_quota_milli", NULL, COL_INT},
        {"cpu_periods", NULL, COL_INT},
        {"cpu_throttled_periods", NULL, COL_INT},
        {"cpu_throttled_ns", NULL, COL_NS},
        {"warnings", "Warnings", COL_TEXT},
        {"infprof_version", NULL, COL_TEXT},
        {"output_path", NULL, COL_TEXT},
    };
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++) {
        if (strcmp(cols[i].key, "collectors") != 0) {
            table_col(t, cols[i].key, cols[i].title, cols[i].type);
            continue;
        }
        /* Each collector's state line, under the title its descriptor gives it. */
        static char keys[IP_COLLECTOR_COUNT][48]; /* the table keeps the pointer */
        for (int k = 0; k < IP_COLLECTOR_COUNT; k++) {
            if (!ip_collectors[k]) continue;
            snprintf(keys[k], sizeof keys[k], "collector_%s", ip_collectors[k]->name);
            table_col(t, keys[k], ip_collectors[k]->title, COL_TEXT);
        }
    }
    table_row(t);
    char buf[2048];
    int c = 0;
    meta_text_col(t, r, c++, "command");
    meta_int_col(t, r, c++, "pid");
    meta_text_col(t, r, c++, "host");
    int64_t start;
    if (runfacts_int(r, "start_unix_ns", &start)) {
        time_t secs = (time_t)(start / 1000000000);
        struct tm tm;
        strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S %z", localtime_r(&secs, &tm));
        table_set_text(t, c, buf);
        table_set_int(t, c + 1, start);
    }
    c += 2;
    meta_int_col(t, r, c++, "duration_ns");
    meta_text_col(t, r, c++, "end_reason");
    meta_int_col(t, r, c++, "exit_status");
    if (!meta_int_col(t, r, c, "finished")) table_set_int(t, c, 0);
    c++;
    if (r->gpus[0]) table_set_text(t, c, r->gpus);
    c++;
    int64_t v;
    if (runfacts_int(r, "cuda_driver_version", &v))
        version_text(v, buf, sizeof buf), table_set_text(t, c, buf);
    c++;
    if (runfacts_int(r, "cuda_runtime_version", &v))
        version_text(v, buf, sizeof buf), table_set_text(t, c, buf);
    c++;
    meta_text_col(t, r, c++, "torch_api");
    for (int k = 0; k < IP_COLLECTOR_COUNT; k++) {
        char key[64];
        if (!ip_collectors[k]) continue;
        snprintf(key, sizeof key, "collector.%s", ip_collectors[k]->name);
        meta_text_col(t, r, c++, key);
    }
    meta_text_col(t, r, c++, "python_module_hooks"); /* Python processes only */
    operators_text(r, p, buf, sizeof buf); /* how they were recorded, where libtorch was */
    if (buf[0]) table_set_text(t, c, buf);
    c++;
    struct run_bounds bounds;
    run_bounds(db, p, &bounds);
    observer_text(r, p, &bounds, buf, sizeof buf); /* what infprof itself cost, as measured */
    if (buf[0]) table_set_text(t, c, buf);
    c++;
    clock_text(r, buf, sizeof buf); /* how events were timed (profiler/clock.h) */
    if (buf[0]) table_set_text(t, c, buf);
    c++;
    /* The libtorch settings the program set (report/run/settings.c). */
    const struct run_settings *set = &p->settings;
    if (set->constant[0] || set->varying[0]) {
        snprintf(buf, sizeof buf, "%s%s%s%s", set->constant,
                 set->constant[0] && set->varying[0] ? "; " : "",
                 set->varying[0] ? "changed between iterations (in a series' name where it tells"
                                   " two series apart; each series' settings in JSON and CSV): "
                                 : "",
                 set->varying);
        table_set_text(t, c, buf);
    }
    c++;
    meta_int_col(t, r, c++, "events_recorded");
    table_set_int(t, c++, r->kernels);
    meta_int_col(t, r, c++, "dropped_events");
    meta_int_col(t, r, c++, "cupti_dropped_records");
    meta_int_col(t, r, c++, "cupti_buffers_refused");
    meta_int_col(t, r, c++, "write_errors");
    static const char *const cpus[] = {"cpus_online", "cpus_allowed",          "cpu_quota_milli",
                                       "cpu_periods", "cpu_throttled_periods", "cpu_throttled_ns"};
    for (size_t i = 0; i < sizeof cpus / sizeof cpus[0]; i++) meta_int_col(t, r, c++, cpus[i]);
    warnings_text(r, &bounds, buf, sizeof buf);
    if (buf[0]) table_set_text(t, c, buf);
    c++;
    meta_text_col(t, r, c++, "infprof_version");
    meta_text_col(t, r, c++, "output_path");
    return t;
}

/* Lost: what the run lost (events, records, rows, Python module calls not timed), or nothing. */
static void fill_lost(const struct section_ctx *c, struct summary_out *so)
{
    const struct run_phases *p = c->p;
    char buf[1024];
    size_t o;
    int64_t dropped = p->lost[RUN_LOST_EVENTS], cupti = p->lost[RUN_LOST_CUPTI_RECORDS];
    int64_t errors = p->lost[RUN_LOST_WRITE_ERRORS], unwritten = p->lost[RUN_LOST_ROWS], late;
    if (errors) {
        /* The database itself is incomplete (a full disk, a file size limit): every figure. */
        if (unwritten)
            snprintf(buf, sizeof buf,
                     "%lld database writes failed, %lld rows not written: every figure below is"
                     " incomplete; see Warnings",
                     (long long)errors, (long long)unwritten);
        else
            snprintf(buf, sizeof buf,
                     "%lld database writes failed: figures may be incomplete; see Warnings",
                     (long long)errors);
        summary_set(so, buf);
    } else if (dropped || cupti) {
        o = (size_t)snprintf(buf, sizeof buf,
                             "%lld events and %lld CUDA records dropped: see Warnings",
                             (long long)dropped, (long long)cupti);
        if (p->marks_dropped) /* not among the Warnings: said here too */
            snprintf(buf + o, sizeof buf - o,
                     "; %lld iteration mark%s not recorded (a thread had"
                     " 16 open at once)",
                     (long long)p->marks_dropped, p->marks_dropped == 1 ? "" : "s");
        summary_set(so, buf);
    } else if (p->py_unseen || p->py_open_at_end || p->py_late_n || p->marks_dropped) {
        /* Nothing dropped, but Python module calls the hooks could not time (docs/python.md),
         * or marks given up (collectors/torch_iterations.c). */
        o = (size_t)snprintf(buf, sizeof buf, "no event dropped; ");
        if (p->marks_dropped)
            o += (size_t)snprintf(buf + o, sizeof buf - o,
                                  "%lld iteration mark%s not recorded (a thread had 16 open at"
                                  " once: overlapping requests of an event loop)%s",
                                  (long long)p->marks_dropped, p->marks_dropped == 1 ? "" : "s",
                                  p->py_late_n || p->py_unseen || p->py_open_at_end ? "; " : "");
        if (p->py_late_n) {
            char late[32];
            fmt_ns(late, sizeof late, (double)p->py_late_ns);
            o += (size_t)snprintf(buf + o, sizeof buf - o,
                                  "module calls of other threads not seen for %s (made while one"
                                  " thread's forward ran, before every thread was watched)%s",
                                  late, p->py_unseen || p->py_open_at_end ? "; " : "");
        }
        if (p->py_unseen && o < sizeof buf)
            o += (size_t)snprintf(buf + o, sizeof buf - o,
                                  "at least %lld module call%s not timed (begun on a thread"
                                  " before it was watched: a model run from several threads)%s",
                                  (long long)p->py_unseen, p->py_unseen == 1 ? "" : "s",
                                  p->py_open_at_end ? "; " : "");
        /* Ended by a signal or _exit: what was open then was cut short, not raised. */
        int cut = p->end_reason[0] && strcmp(p->end_reason, "exit") != 0;
        if (p->py_open_at_end && o < sizeof buf && cut)
            snprintf(buf + o, sizeof buf - o,
                     "%lld module call%s still open when the program ended (%s)",
                     (long long)p->py_open_at_end, p->py_open_at_end == 1 ? " was" : "s were",
                     p->end_reason);
        else if (p->py_open_at_end && o < sizeof buf)
            snprintf(buf + o, sizeof buf - o,
                     "%lld module call%s never ended (it raised: before PyTorch 2.1 the calls"
                     " after it go unseen until that module runs again; or the program ended"
                     " inside it)",
                     (long long)p->py_open_at_end, p->py_open_at_end == 1 ? "" : "s");
        summary_set(so, buf);
    } else if (runfacts_int(run_facts(c->db, p), "events_after_end", &late) && late > 0) {
        /* Ended after the run did (other threads during an exit or a signal): not stored. */
        snprintf(buf, sizeof buf,
                 "no event dropped; %lld came after the run ended (NVTX ranges,"
                 " or iterations other threads ended during the exit or the signal): see Warnings",
                 (long long)late);
        summary_set(so, buf);
    } else {
        summary_set(so, "nothing");
    }
}

static const struct summary_line line_lost = {
    .key = "lost", .title = "Lost", .rank = 70, .fill = fill_lost};
static const struct summary_line *const run_summary[] = {&line_lost, NULL};

/* ---- descriptor (sections.h) ------------------------------------------------------------- */

static int run_build(const struct section_ctx *c, struct table **out, int max)
{
    (void)max;
    out[0] = section_run(c->db, c->p);
    return 1;
}

const struct report_section sec_run = {
    .summary = run_summary, .key = "run", .build = run_build, .shown_empty = 1, .compare = NULL};
