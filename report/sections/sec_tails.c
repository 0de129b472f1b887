/*
 * sec_tails.c: the Slow iterations section (figures from report/run/tails.c; docs/report.md):
 * for every series with a tail, which iterations were slow (their indices in the series, and
 * whether they recur), how much slower than its typical iterations, and what they did that those
 * did not, cause by cause with the share of the extra latency each explains and the share none
 * does. Tables tails (one row a series), tail_causes (one a cause), slow_iterations (one a slow
 * iteration: the HTML page colours them); a text view; the Summary's Tail line.
 */
#include "sections.h"
#include "../run/tails.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

/* tails_table's columns, in the order it declares them (asserted there). */
enum {
    TL_PHASE,
    TL_SHORT,
    TL_SERIES,
    TL_JUDGED_ITERATIONS,
    TL_SLOW_ITERATIONS,
    TL_SLOW_INDICES,
    TL_PATTERN,
    TL_LATENCY_P50_NS,
    TL_LATENCY_P99_NS,
    TL_SLOW_MEAN_NS,
    TL_TYPICAL_MEAN_NS,
    TL_EXTRA_NS,
    TL_TAIL_PCT,
    TL_CAUSES,
    TL_UNEXPLAINED_PCT,
    TL_GUESS,
    TL_WRITER_CYCLE_GAPS,
    TL_BESIDE_SERIES,
    TL_BESIDE_SLOW_PCT,
    TL_BESIDE_TYPICAL_PCT,
    TL_NCOLS
};

/* causes_table's columns, in the order it declares them (asserted there). */
enum {
    TC_PHASE,
    TC_SHORT,
    TC_SERIES,
    TC_CAUSE,
    TC_EXTRA_NS,
    TC_SHARE_PCT,
    TC_TOP,
    TC_DETAIL,
    TC_NCOLS
};

/* slow_table's columns, in the order it declares them (asserted there). */
enum { TS_PHASE, TS_SHORT, TS_SERIES, TS_INDEX, TS_START_NS, TS_LATENCY_NS, TS_NCOLS };

/* text_view's columns, in the order it declares them (asserted there). */
enum { TV_SERIES, TV_SLOW, TV_EXTRA, TV_SHARE, TV_WHAT, TV_NCOLS };

/* The first three columns of tails, tail_causes and slow_iterations: the series (the same
 * three in each: asserted where each is built). */
static void series_cells(struct table *t, const struct run_phases *p, const struct series_tail *x)
{
    const struct series_info *se = &p->series.v[x->series];
    phase_cells(t, &p->v[se->phase], TL_PHASE, TL_SHORT);
    table_set_text(t, TL_SERIES, se->name[0] ? se->name : "(unnamed)");
}

static void indices_text(const struct series_tail *x, char *out, size_t n)
{
    out[0] = 0;
    int64_t i = 0;
    for (; i < x->nslow && strlen(out) + 24 < n; i++)
        snprintf(out + strlen(out), n - strlen(out), "%s#%lld", i ? ", " : "",
                 (long long)x->slow_index[i]);
    /* "..." only where some were left out (a complete list of 11 once ended in it). */
    if (i < x->nslow) snprintf(out + strlen(out), n - strlen(out), ", ...");
}

static void causes_text(const struct series_tail *x, char *out, size_t n)
{
    out[0] = 0;
    for (int i = 0; i < x->ncauses; i++)
        snprintf(out + strlen(out), n - strlen(out), "%s%s %.0f%%", i ? "; " : "", x->c[i].key,
                 100 * x->c[i].share);
}

/* "; 42 of the 59 gaps between them a multiple of infprof's writer cycle (100 ms): ..." where
 * the slow iterations keep its time (tails.c, writer_cadence); nothing where they do not. */
static void writer_words(const struct series_tail *x, char *out, size_t n)
{
    if (!x->writer_hits || !n) return;
    snprintf(out, n,
             "; %lld of the %lld gaps between them a multiple of infprof's writer cycle (%.0f ms):"
             " the profile's own work took the CPU from the program (INFPROF_FLUSH_MS sets the"
             " cycle)",
             (long long)x->writer_hits, (long long)x->writer_gaps, x->writer_period_ns / 1e6);
}

/* "no_grad/off MobileNetV3": the series beside the slow iterations (tails.h), "" none. */
static void beside_name(const struct run_phases *p, const struct series_tail *x, char *out,
                        size_t n)
{
    out[0] = 0;
    if (x->beside_series < 0 || x->beside_series >= p->series.n) return;
    const struct series_info *o = &p->series.v[x->beside_series];
    char label[32] = "";
    phase_short_label(&p->v[o->phase], label, sizeof label);
    snprintf(out, n, "%s %s", label, o->name[0] ? o->name : "(unnamed)");
}

/* "; beside them: X ran on another thread through 60% of the slow iterations' time against 13%
 * of the typical ones' (...)" where another series did (tails.h); nothing where none did. */
static void beside_words(const struct run_phases *p, const struct series_tail *x, char *out,
                         size_t n)
{
    char name[400];
    beside_name(p, x, name, sizeof name);
    if (!name[0] || !n) return;
    snprintf(out, n,
             "; beside them: %s ran on another thread through %.0f%% of the slow iterations'"
             " time against %.0f%% of the typical ones' (the two take turns on the CPUs and share"
             " the memory's bandwidth)",
             name, 100 * x->beside_slow, 100 * x->beside_typical);
}

static struct table *tails_table(const struct run_phases *p, const struct run_tails *r)
{
    struct table *t = table_new("tails", NULL);
    table_col(t, "phase", NULL, COL_TEXT);
    table_col(t, NULL, "Phase", COL_TEXT);
    table_col(t, "series", "Series", COL_NAME);
    /* The iterations judged: the steady ones and the captured ones (their latency divided by the
     * capture's cost), the Series table's Iters + Captured. */
    table_col(t, "judged_iterations", NULL, COL_INT);
    table_col(t, "slow_iterations", "Slow", COL_INT);
    table_col(t, "slow_indices", NULL, COL_TEXT);
    table_col(t, "pattern", "When", COL_TEXT);
    table_col(t, "latency_p50_ns", "p50", COL_NS);
    table_col(t, "latency_p99_ns", "p99", COL_NS);
    table_col(t, "slow_mean_ns", "Slow mean", COL_NS);
    table_col(t, "typical_mean_ns", NULL, COL_NS);
    table_col(t, "extra_ns", "Extra", COL_NS);
    table_col(t, "tail_pct", "Of its time", COL_PCT);
    table_col(t, "causes", NULL, COL_TEXT);
    table_col(t, "unexplained_pct", "Unexplained", COL_PCT);
    table_col(t, "guess", NULL, COL_TEXT);
    table_col(t, "writer_cycle_gaps", NULL, COL_INT);
    table_col(t, "beside_series", NULL, COL_TEXT);
    table_col(t, "beside_slow_pct", NULL, COL_PCT);
    table_col(t, "beside_typical_pct", NULL, COL_PCT);
    assert(t->ncols == TL_NCOLS);
    char buf[1024];
    for (int i = 0; i < r->n; i++) {
        const struct series_tail *x = &r->v[i];
        table_row(t);
        series_cells(t, p, x);
        table_set_int(t, TL_JUDGED_ITERATIONS, x->steady);
        table_set_int(t, TL_SLOW_ITERATIONS, x->nslow);
        indices_text(x, buf, 400);
        table_set_text(t, TL_SLOW_INDICES, buf);
        table_set_text(t, TL_PATTERN, x->pattern);
        table_set_int(t, TL_LATENCY_P50_NS, x->p50);
        table_set_int(t, TL_LATENCY_P99_NS, x->p99);
        table_set_int(t, TL_SLOW_MEAN_NS, (int64_t)x->slow_mean);
        table_set_int(t, TL_TYPICAL_MEAN_NS, (int64_t)x->typical_mean);
        table_set_int(t, TL_EXTRA_NS, (int64_t)x->extra);
        table_set_num(t, TL_TAIL_PCT, x->cost_pct);
        causes_text(x, buf, sizeof buf);
        table_set_text(t, TL_CAUSES, buf);
        table_set_num(t, TL_UNEXPLAINED_PCT, 100 * x->unexplained);
        if (x->guess[0]) table_set_text(t, TL_GUESS, x->guess);
        if (x->writer_hits) table_set_int(t, TL_WRITER_CYCLE_GAPS, x->writer_hits);
        beside_name(p, x, buf, sizeof buf);
        if (buf[0]) {
            table_set_text(t, TL_BESIDE_SERIES, buf);
            table_set_num(t, TL_BESIDE_SLOW_PCT, 100 * x->beside_slow);
            table_set_num(t, TL_BESIDE_TYPICAL_PCT, 100 * x->beside_typical);
        }
    }
    return t;
}

static struct table *causes_table(const struct run_phases *p, const struct run_tails *r)
{
    struct table *t = table_new("tail_causes", NULL);
    table_col(t, "phase", NULL, COL_TEXT);
    table_col(t, NULL, "Phase", COL_TEXT);
    table_col(t, "series", NULL, COL_NAME);
    table_col(t, "cause", NULL, COL_TEXT);
    table_col(t, "extra_ns", NULL, COL_NS);
    table_col(t, "share_pct", NULL, COL_PCT);
    table_col(t, "top", NULL, COL_NAME);
    table_col(t, "detail", NULL, COL_TEXT);
    assert(t->ncols == TC_NCOLS);
    _Static_assert((int)TC_SERIES == (int)TL_SERIES && (int)TC_SHORT == (int)TL_SHORT,
                   "series_cells");
    for (int i = 0; i < r->n; i++)
        for (int k = 0; k < r->v[i].ncauses; k++) {
            const struct tail_cause_figure *c = &r->v[i].c[k];
            table_row(t);
            series_cells(t, p, &r->v[i]);
            table_set_text(t, TC_CAUSE, c->key);
            table_set_int(t, TC_EXTRA_NS, (int64_t)(c->share * r->v[i].extra));
            table_set_num(t, TC_SHARE_PCT, 100 * c->share);
            if (c->top[0]) table_set_text(t, TC_TOP, c->top);
            table_set_text(t, TC_DETAIL, c->detail);
        }
    return t;
}

static struct table *slow_table(const struct run_phases *p, const struct run_tails *r)
{
    struct table *t = table_new("slow_iterations", NULL);
    table_col(t, "phase", NULL, COL_TEXT);
    table_col(t, NULL, "Phase", COL_TEXT);
    table_col(t, "series", NULL, COL_NAME);
    table_col(t, "index", NULL, COL_INT);
    table_col(t, "start_ns", NULL, COL_NS);
    table_col(t, "latency_ns", NULL, COL_NS);
    assert(t->ncols == TS_NCOLS);
    _Static_assert((int)TS_SERIES == (int)TL_SERIES && (int)TS_SHORT == (int)TL_SHORT,
                   "series_cells");
    for (int i = 0; i < r->n; i++)
        for (int64_t k = 0; k < r->v[i].nslow; k++) {
            table_row(t);
            series_cells(t, p, &r->v[i]);
            table_set_int(t, TS_INDEX, r->v[i].slow_index[k]);
            table_set_int(t, TS_START_NS, r->v[i].slow_start[k]);
            table_set_int(t, TS_LATENCY_NS, r->v[i].slow_lat[k]);
        }
    return t;
}

/* Text: per series a line, then its causes, then what none explains. */
static struct table *text_view(const struct run_phases *p, const struct run_tails *r)
{
    struct table *v =
        table_new(NULL, "Slow iterations (1.25x the median of the 11 around them and 4 robust"
                        " deviations, or a slow kind)");
    table_col(v, NULL, "Series", COL_TEXT);
    table_col(v, NULL, "Slow", COL_TEXT);
    table_col(v, NULL, "Extra", COL_NS);
    table_col(v, NULL, "Share", COL_PCT);
    table_col(v, NULL, "What", COL_TEXT);
    assert(v->ncols == TV_NCOLS);
    char name[400], label[32], idx[200], what[1400], b1[32], b2[32];
    for (int i = 0; i < r->n; i++) {
        const struct series_tail *x = &r->v[i];
        const struct series_info *se = &p->series.v[x->series];
        phase_short_label(&p->v[se->phase], label, sizeof label);
        snprintf(name, sizeof name, "%s%s%.40s", label, se->name[0] ? " " : "", se->name);
        indices_text(x, idx, 80);
        table_row(v);
        table_set_text(v, TV_SERIES, name);
        snprintf(what, sizeof what, "%lld of %lld", (long long)x->nslow, (long long)x->steady);
        table_set_text(v, TV_SLOW, what);
        table_set_int(v, TV_EXTRA, (int64_t)x->extra);
        fmt_ns(b1, sizeof b1, x->slow_mean);
        fmt_ns(b2, sizeof b2, x->typical_mean);
        snprintf(what, sizeof what, "%s: %s; %s vs %s typical, %.1f%% of the series' time",
                 x->pattern, idx, b1, b2, x->cost_pct);
        writer_words(x, what + strlen(what), sizeof what - strlen(what));
        beside_words(p, x, what + strlen(what), sizeof what - strlen(what));
        table_set_text(v, TV_WHAT, what);
        for (int k = 0; k < x->ncauses; k++) {
            table_row(v);
            /* Its share of the row's extra (the cause's own measure is in its words): a cause
             * of 2.22 ms under a series' 1.84 ms read as more than all of it. */
            table_set_int(v, TV_EXTRA, (int64_t)(x->c[k].share * x->extra));
            table_set_num(v, TV_SHARE, 100 * x->c[k].share);
            table_set_text(v, TV_WHAT, x->c[k].detail);
        }
        table_row(v);
        table_set_num(v, TV_SHARE, 100 * x->unexplained);
        snprintf(what, sizeof what, "unexplained%s%s%s",
                 x->overlap ? " (the causes overlap: one may be another's effect, or host and"
                              " GPU work ran together)"
                            : "",
                 !x->guess[0]                                  ? ""
                 : !strncmp(x->guess, "no recorded cause", 17) ? ": "
                                                               : "; a guess: ",
                 x->guess);
        table_set_text(v, TV_WHAT, what);
    }
    int sizes = 0; /* phases whose forwards came at other sizes: not judged (tails.c) */
    for (int i = 0; i < p->n; i++) sizes |= p->v[i].detected.sizes_vary && !p->v[i].transient;
    if (!r->n)
        v->note = sizes ? "no series has a tail: none ran slow iterations (a series is judged"
                          " from 10 steady iterations on; one whose iterations were found at"
                          " other sizes, another batch, input or its preparation, is not: a"
                          " larger one may take longer for its size alone)"
                        : "no series has a tail: none ran slow iterations (a series is judged from"
                          " 10 steady iterations on)";
    else
        v->note = "Extra: per slow iteration, over the median of the 11 steady iterations around"
                  " it (of the fast ones among them, where slow ones alternate with fast); Share:"
                  " of that extra time (a cause is named when it explains 10% or more; causes"
                  " compare the slow iterations with the typical ones, nearest their neighbours'"
                  " median); #N: the iteration's index in its series, warm-up"
                  " counted from 0; Slow: of the Series table's Iters and Captured (a captured"
                  " iteration at its latency divided by the capture's cost); a slow kind: a"
                  " minority allocating 1.5x the others' bytes or more, slower as a group (its"
                  " median 1.25x theirs, the slower of a pair 8 times in 10), each of it 1.25x"
                  " their median";
    return v;
}

static int tails_build(const struct section_ctx *c, struct table **out, int max)
{
    (void)max;
    const struct run_tails *r = run_tails(c->db, c->p);
    out[0] = tails_table(c->p, r);
    out[1] = text_view(c->p, r); /* right after its data: the page's id for it (table-tails) */
    out[2] = causes_table(c->p, r);
    out[3] = slow_table(c->p, r);
    return 4;
}

/* What a user does about a cause that explains most of a tail (issue 52: the first screen names
 * it in words a user acts on); NULL: the cause's detail says it. */
static const char *tail_action(int cause)
{
    switch (cause) {
    case TAIL_CUDNN_SEARCH:
        return "fix the input size, or turn cudnn.benchmark off for this model";
    case TAIL_CUDA_MALLOC:
        return "the caching allocator grew: run the largest input once before the loop";
    case TAIL_SYNC:
        return "a synchronisation waited: look for .item(), .cpu() or a synchronize in the loop";
    case TAIL_COPIES:
        return "a blocking copy: pin the host tensor and copy with non_blocking=True";
    case TAIL_GPU_CLOCK:
        return "the GPU throttled: the Energy section names the reasons";
    case TAIL_PAGE_FAULTS:
        return "its memory is faulted in afresh each time: reuse the large tensor, or keep freed"
               " memory in the process (MALLOC_MMAP_THRESHOLD_=16777216"
               " MALLOC_TRIM_THRESHOLD_=268435456; not where the program hands it back itself,"
               " malloc_trim or a cache emptied)";
    default:
        return NULL;
    }
}

/* No tail found: where a series' forwards came at other sizes (no tail is judged among them,
 * tails.c), its spread said as theirs. */
static void fill_sizes_vary(const struct section_ctx *c, struct summary_out *o)
{
    const struct run_phases *p = c->p;
    for (int s = 0; s < p->series.n; s++) {
        const struct series_info *se = &p->series.v[s];
        if (!p->v[se->phase].detected.sizes_vary || se->lat_p50 <= 0 ||
            (double)se->lat_p99 < 1.3 * (double)se->lat_p50)
            continue;
        char label[96], line[1024], b1[32], b2[32];
        summary_named(o, &p->v[se->phase], label, sizeof label);
        fmt_ns(b1, sizeof b1, (double)se->lat_p99);
        fmt_ns(b2, sizeof b2, (double)se->lat_p50);
        snprintf(line, sizeof line,
                 "%s%s%s: p99 %s, %.2fx the p50 %s: its iterations were found at other sizes"
                 " (another batch, input or its preparation)%s; no tail is judged among them,"
                 " a larger one may take longer for its size alone (mark the forwards, naming"
                 " the size or model, for a series each)",
                 label, se->name[0] ? " " : "", se->name, b1,
                 (double)se->lat_p99 / (double)se->lat_p50, b2,
                 p->v[se->phase].detected.by_level
                     ? " and in more than one order of allocations (another path, or another"
                       " model)"
                     : "");
        summary_set(o, line);
        return;
    }
}

/* The Summary's Tail line: the series whose slow iterations cost the most, past TAIL_FINDING. */
static void fill_tail(const struct section_ctx *c, struct summary_out *o)
{
    const struct run_tails *r = run_tails(c->db, c->p);
    const struct series_tail *x = NULL;
    for (int i = 0; i < r->n; i++)
        if (r->v[i].cost_pct >= TAIL_FINDING && (!x || r->v[i].cost_pct > x->cost_pct))
            x = &r->v[i];
    if (!x) {
        fill_sizes_vary(c, o);
        return;
    }
    const struct series_info *se = &c->p->series.v[x->series];
    char label[96], line[1400], b1[32], b2[32], b3[32];
    summary_named(o, &c->p->v[se->phase], label, sizeof label);
    fmt_ns(b1, sizeof b1, (double)x->slow_mean);
    fmt_ns(b2, sizeof b2, (double)x->p50);
    fmt_ns(b3, sizeof b3, (double)x->p99);
    /* The p99 too: what the program's own timer reports, the question asked ("why is my p99
     * twice my p50?"; a fresh-eyes check found it in no text line). */
    snprintf(line, sizeof line,
             "%s%s%s: %lld of %lld iterations slow (%s), %s vs p50 %s (p99 %s, %.2fx), %.0f%%"
             " of its time; ",
             label, se->name[0] ? " " : "", se->name, (long long)x->nslow, (long long)x->steady,
             x->pattern, b1, b2, b3, x->p50 > 0 ? (double)x->p99 / (double)x->p50 : 0, x->cost_pct);
    if (x->ncauses)
        snprintf(line + strlen(line), sizeof line - strlen(line), "%s: %.0f%% of the extra",
                 x->c[0].title, 100 * x->c[0].share);
    else
        snprintf(line + strlen(line), sizeof line - strlen(line),
                 "no recorded cause explains the extra");
    /* Page faults inside the first cause's time (the operators longer for them): how it went. */
    for (int i = 1; i < x->ncauses; i++)
        if (x->c[i].cause == TAIL_PAGE_FAULTS && x->c[i].share >= 0.5)
            snprintf(line + strlen(line), sizeof line - strlen(line), ", page faults %.0f%%",
                     100 * x->c[i].share);
    /* Most of it unexplained: said, with the guess where there is one (a minor cause alone
     * would read as the answer). */
    if (x->ncauses && x->unexplained >= 0.5)
        snprintf(line + strlen(line), sizeof line - strlen(line), ", %.0f%% unexplained",
                 100 * x->unexplained);
    if (x->unexplained >= 0.5 && x->guess[0])
        /* "no recorded cause; INFPROF_OPERATORS=1 ..." is no guess: after "no recorded cause
         * explains the extra", its hint alone (it read "...; a guess: no recorded cause; ..."). */
        snprintf(line + strlen(line), sizeof line - strlen(line), "%s%s",
                 strncmp(x->guess, "no recorded cause", 17) ? "; a guess: "
                 : x->ncauses                               ? ": "
                                                            : "",
                 strncmp(x->guess, "no recorded cause", 17) || x->ncauses ? x->guess
                                                                          : x->guess + 17);
    else if (x->ncauses && x->c[0].cause == TAIL_PAGE_FAULTS && x->guess[0])
        snprintf(line + strlen(line), sizeof line - strlen(line), "; a guess at what faulted: %s",
                 x->guess); /* what brought the fresh memory (tails.c) */
    else if (x->ncauses && x->c[0].share >= 0.5 && tail_action(x->c[0].cause))
        snprintf(line + strlen(line), sizeof line - strlen(line), "; %s",
                 tail_action(x->c[0].cause));
    writer_words(x, line + strlen(line), sizeof line - strlen(line));
    beside_words(c->p, x, line + strlen(line), sizeof line - strlen(line));
    snprintf(line + strlen(line), sizeof line - strlen(line), " (Slow iterations below)");
    summary_set(o, line);
}

static const struct summary_line line_tail = {
    .key = "tail", .title = "Tail", .rank = 65, .fill = fill_tail};
static const struct summary_line *const tails_summary[] = {&line_tail, NULL};

const struct report_section sec_tails = {
    .key = "tails", .summary = tails_summary, .build = tails_build, .shown_empty = 0};
