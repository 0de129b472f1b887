/*
 * sec_phases_lines.c: the first screen's lines that the phases section answers
 * (sections.h, summary_line): how iterations were found where no mark or module call said,
 * which phase is fastest and by how much against the baseline (with its band), inference_mode
 * against no_grad and what the warm-up cost. Every figure comes from
 * the same computations as the tables below them.
 */
#include "sections.h"
#include "../run/detect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A run with no iteration: a DataLoader worker has none of its own (it makes batches), and the
 * advice on marking forwards is not for it. */
static const char *no_iteration_words(const struct run_phases *p, int first)
{
    if (p->dataloader_worker && !first) return "none here: a DataLoader worker (no iterations)";
    return p->dataloader_worker ? "none here: a DataLoader worker makes batches, the model's"
                                  " iterations are its main process's (report them together:"
                                  " infprof report NAME.db NAME-*.db)"
                                : "no iteration was seen: see the phase table's note";
}

/* The phase of lowest p50 among those that are one configuration: a phase that pools several
 * series has a p50 of none of them (in an fp32 + int8 run, the int8 series' p95), so it is not
 * ranked; *pooled gets the first such phase. */
static const struct phase_info *fastest(const struct run_phases *p,
                                        const struct phase_info **pooled, int *ranked)
{
    const struct phase_info *best = NULL;
    *pooled = NULL, *ranked = 0;
    for (int i = 0; i < p->n; i++) {
        const struct phase_info *ph = &p->v[i];
        if (ph->transient || !ph->nsteady) continue;
        if (ph->nseries > 1) {
            if (!*pooled) *pooled = ph;
            continue;
        }
        ++*ranked;
        if (!best || ph->lat_p50 < best->lat_p50) best = ph;
    }
    return best;
}

/* ", no verdict: no_grad/off shifted 714us -> 479us mid-run": what stands in for a verdict
 * against a phase whose steady iterations shift level (docs/report.md, "Verdicts the run cannot
 * support"); alone (no phase to compare it with): "; it shifted ... (the p50 is of both
 * levels)"; beside a verdict past the shift's ratio (phases_band_outlasts): ", more than
 * no_grad/off's shift 714us -> 479us mid-run". */
enum shift_how { SHIFT_WITHHOLDS, SHIFT_ALONE, SHIFT_OUTLASTED };

static size_t shift_words(const struct phase_info *ph, enum shift_how how, char *out, size_t n)
{
    char l[32], a[32], b[32];
    phase_short_label(ph, l, sizeof l);
    fmt_ns(a, sizeof a, (double)ph->shift_before);
    fmt_ns(b, sizeof b, (double)ph->shift_after);
    int w =
        how == SHIFT_ALONE
            ? snprintf(out, n, "; it shifted %s -> %s mid-run (the p50 is of both levels)", a, b)
        : how == SHIFT_OUTLASTED
            ? snprintf(out, n, ", more than %s's shift %s -> %s mid-run", l, a, b)
            : snprintf(out, n, ", no verdict: %s shifted %s -> %s mid-run", l, a, b);
    return w < 0 ? 0 : (size_t)w < n ? (size_t)w : n - 1;
}

/* " (caution: 2 of 19 inference/off iterations at grad/off's 514us)": some of the faster phase's
 * iterations ran at the slower one's speed. */
static size_t overlap_words(const struct phase_info *fast, const struct phase_info *slow, char *out,
                            size_t n)
{
    size_t k = phases_overlap(fast, slow);
    if (!k || !n) return 0;
    char f[32], s[32], x[32];
    phase_short_label(fast, f, sizeof f);
    phase_short_label(slow, s, sizeof s);
    fmt_ns(x, sizeof x, (double)slow->lat_p50);
    int w = snprintf(out, n, " (caution: %zu of %zu %s iterations at %s's %s)", k, fast->nsteady, f,
                     s, x);
    return w < 0 ? 0 : (size_t)w < n ? (size_t)w : n - 1;
}

/* The words for a phase that pools several series: where each one's figures are ("not ranked"
 * first: "no_grad/off pools 2 series" under Fastest phase read as naming it fastest). */
static void pooled_words(const struct run_phases *p, const struct phase_info *ph, char *out,
                         size_t n)
{
    struct series_pick k;
    int line = series_pick(p, (int)(ph - p->v), &k); /* else no Series line */
    char a[64];
    phase_short_label(ph, a, sizeof a);
    snprintf(out, n,
             "not ranked: %s pools %d series, whose p50 mixes them (the %s has"
             " each)",
             a, ph->nseries, line ? "Series line" : "Series table");
}

/* x and y whose one series ran at other batch sizes: a call's latency says nothing of the mode
 * or phase (batch 16 against batch 8 read "1.34x no_grad, faster"), the p50 per item compares
 * them: ": not compared by latency, batch 16 against no_grad's 8; per item at p50 2.64x
 * (378.79us against 1.00ms an item)" appended to out; 0 (nothing written) when they ran one
 * batch size. The p50, as every latency the Summary compares: a rate from the mean let a
 * DataLoader's restart every 20th batch turn 1.28x faster into "0.68x its rate". */
static int batch_words(const struct run_phases *p, const struct phase_info *x,
                       const struct phase_info *y, const char *yname, char *out, size_t n)
{
    const struct series_info *sx = phase_only_series(p, x), *sy = phase_only_series(p, y);
    if (!series_batches_differ(sx, sy)) return 0;
    size_t o = strlen(out);
    double a = sx->nsteady ? (double)sx->lat_p50 / (double)sx->batch : 0;
    double b = sy->nsteady ? (double)sy->lat_p50 / (double)sy->batch : 0;
    snprintf(out + o, n - o, ": not compared by latency, batch %lld against %s's %lld",
             (long long)sx->batch, yname, (long long)sy->batch);
    o = strlen(out);
    if (a > 0 && b > 0) {
        char x[32], y[32];
        fmt_ns(x, sizeof x, a), fmt_ns(y, sizeof y, b);
        snprintf(out + o, n - o, "; per item at p50 %.2fx (%s against %s an item)", b / a, x, y);
    }
    return 1;
}

/* x and y whose one series ran other models (series_models_differ): ": not compared, it ran A
 * and no_grad B" appended to out; 0 (nothing written) when not. */
static int model_words(const struct run_phases *p, const struct phase_info *x,
                       const struct phase_info *y, const char *yname, char *out, size_t n)
{
    const struct series_info *sx = phase_only_series(p, x), *sy = phase_only_series(p, y);
    size_t o = strlen(out);
    /* Iterations detected in both, of forwards that differ: no model name says so, the
     * allocations do (a fresh-eyes check's two threads, model A in inference_mode and a smaller
     * model B under no_grad, read "0.05x no_grad, slower"). */
    if (phases_work_differs(x, y)) {
        snprintf(out + o, n - o,
                 ": not compared, its forwards and %s's do other work (%d against %d %s a"
                 " forward): other models or inputs",
                 yname, x->detected.unit_len, y->detected.unit_len,
                 x->detected.from == DETECT_KERNELS     ? "kernels"
                 : x->detected.from == DETECT_OPERATORS ? "operators"
                                                        : "allocator reports");
        return 1;
    }
    if (!series_models_differ(sx, sy)) return 0;
    if (sx->model_none)
        snprintf(out + o, n - o, ": not compared, no model ran inside its marks and %s ran %s",
                 yname, sy->model);
    else if (sy->model_none)
        snprintf(out + o, n - o,
                 ": not compared, it ran model %s and no model ran inside %s's marks", sx->model,
                 yname);
    else
        snprintf(out + o, n - o, ": not compared, it ran model %s and %s ran %s", sx->model, yname,
                 sy->model);
    return 1;
}

/* Fastest phase: its p50 and how it compares with the baseline, with the 95% band; phases that
 * pool several series are neither ranked nor compared (pooled_words). */
static void fill_fastest(const struct section_ctx *c, struct summary_out *so)
{
    const struct run_phases *p = c->p;
    const struct phase_info *base = c->base;
    char buf[1024];
    char a[64], b[64];
    char x[32];
    const struct phase_info *pooled;
    int ranked; /* phases of one series: the ones a p50 ranks */
    const struct phase_info *f = fastest(p, &pooled, &ranked);
    if (!f && pooled) {
        pooled_words(p, pooled, buf, sizeof buf);
        summary_set(so, buf);
    } else if (f && base && base->nsteady) {
        summary_named(so, f, a, sizeof a);
        summary_named(so, base, b, sizeof b);
        fmt_ns(x, sizeof x, (double)f->lat_p50);
        int against = f != base && base->nseries == 1; /* a pooled baseline: no ratio */
        double lo, hi;
        const struct phase_info *sh = against ? phases_shifted(f, base) : NULL;
        int band = against && phases_pair_band(f, base, phases_apart(f, base), &lo, &hi) == 1;
        enum verdict v =
            band ? iterations_verdict(lo, hi, (double)base->lat_p50 / (double)f->lat_p50)
                 : VERDICT_UNCLEAR;
        snprintf(buf, sizeof buf, "%s, p50 %s%s", a, x, f == base ? " (the baseline)" : "");
        if (against && batch_words(p, f, base, b, buf, sizeof buf)) against = band = 0, sh = NULL;
        if (against && model_words(p, f, base, b, buf, sizeof buf)) against = band = 0, sh = NULL;
        if (against)
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf), ": %.2fx %s%s",
                     (double)base->lat_p50 / (double)f->lat_p50, b,
                     !band                  ? ""
                     : v == VERDICT_SAME    ? " (the same within 1%)"
                     : v == VERDICT_UNCLEAR ? " (no clear difference)"
                                            : "");
        if (band && (v == VERDICT_FASTER || v == VERDICT_SLOWER))
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf), " (95%%: %.2f-%.2fx, one run)",
                     lo, hi);
        if (sh)
            shift_words(sh, band ? SHIFT_OUTLASTED : SHIFT_WITHHOLDS, buf + strlen(buf),
                        sizeof buf - strlen(buf));
        if (!against && f->shift_before) /* no ratio to withhold: the shift said all the same */
            shift_words(f, SHIFT_ALONE, buf + strlen(buf), sizeof buf - strlen(buf));
        if (against) overlap_words(f, base, buf + strlen(buf), sizeof buf - strlen(buf));
        /* A phase that pools configurations has a p50 of none of them (the Series line has
         * each): said first, and the one-series phase is the fastest of the others, not of all
         * ("inference/bf16, p50 43.88ms; not ranked: ..." named bf16 fastest at 8x no_grad's
         * batch-8 latency, a fresh-eyes check). */
        const struct phase_info *mixed = f != base && base->nseries > 1 ? base : pooled;
        if (mixed) {
            char w[1400];
            pooled_words(p, mixed, w, sizeof w);
            snprintf(w + strlen(w), sizeof w - strlen(w), "; %s%s",
                     ranked > 1 ? "the fastest of the others " : "the other phase ", buf);
            summary_set(so, w);
            return;
        }
        summary_set(so, buf);
    } else if (p->n) {
        summary_set(so, no_iteration_words(p, 1));
    }
}

/* Why the inference_mode line has no answer. */
static const char *why_no_inference(const struct run_phases *p)
{
    if (p->dataloader_worker) return no_iteration_words(p, 0);
    int inf = 0, steady = 0;
    for (int i = 0; i < p->n; i++)
        if (!strcmp(p->v[i].grad_mode, "inference_mode") && !p->v[i].transient)
            inf = 1, steady |= p->v[i].nsteady > 0;
    return !inf      ? "no inference_mode phase ran"
           : !steady ? "no iteration was seen in inference_mode: see the phase table's note"
                     : "no no_grad phase with iterations at the same autocast setting";
}

/* A mode's series took many more page faults an iteration than the other's at their p50s, the
 * latencies compared (series_cpu.c, the advice rule page_faults): the memory handed back and
 * faulted in again, by the allocator's state, may make the difference rather than the mode. A
 * user loop's inference_mode read "0.56x no_grad, slower" at 2,856 faults a forward against
 * no_grad's 1,194, and "1.66x" at 9 in another run of the same program; one whose no_grad
 * faulted in every second forward read "0.41x no_grad, slower" with 2,856 faults an inference_mode
 * forward against no_grad's mean of 1,715, which the means did not set apart (no_grad's p50, the
 * fast level, took 9). Appends to out. */
static size_t faults_words(const struct series_info *inf, const struct series_info *ng, char *out,
                           size_t n)
{
    if (!inf || !ng || inf->faults_at_p50 < 0 || ng->faults_at_p50 < 0) return 0;
    double a = inf->faults_at_p50, b = ng->faults_at_p50;
    double hi = a > b ? a : b, lo = a > b ? b : a;
    /* 64 more and half as many again: a loop's no_grad at 999 faults a forward against
     * inference_mode's 520 read "1.19x no_grad, faster", its whole difference the faults' system
     * time, where twice as many was asked (a fresh-eyes check). */
    if (hi - lo < 64 || hi < 1.5 * lo) return 0;
    int w = snprintf(out, n,
                     " (page faults an iteration at the p50: %.0f in inference_mode, %.0f in"
                     " no_grad: memory handed back and faulted in again, which may make the"
                     " difference, not the mode; page_faults)",
                     a, b);
    return w < 0 ? 0 : (size_t)w < n ? (size_t)w : n - 1;
}

/* The inference_mode line's words for a verdict (iterations_verdict), after its ratio. */
static const char *const verdict_words[] = {[VERDICT_SAME] = ", the same within 1%",
                                            [VERDICT_FASTER] = ", faster",
                                            [VERDICT_SLOWER] = ", slower",
                                            [VERDICT_UNCLEAR] = ", no clear difference"};

/* A phase that pools series has no p50 of its own, but the same model may have run in both modes
 * (the fresh-eyes check: an fp32 MLP and its int8 copy under no_grad, the fp32 MLP under
 * inference_mode, "not compared"): each series of `inf` against `ng`'s series of the same name
 * (less its batch=N) and batch, its p50s' ratio and verdict, as the phases' would be. Appends to
 * out; how many were matched. */
static int series_words(const struct run_phases *p, const struct phase_info *inf,
                        const struct phase_info *ng, char *out, size_t n, size_t *o)
{
    int matched = 0, ii = (int)(inf - p->v), ni = (int)(ng - p->v);
    for (int a = 0; a < p->series.n; a++) {
        const struct series_info *x = &p->series.v[a];
        if (x->phase != ii || !x->nsteady || x->lat_p50 <= 0) continue;
        for (int b = 0; b < p->series.n; b++) {
            const struct series_info *y = &p->series.v[b];
            /* By the name less its "batch=N" (which one phase's name carries where it ran
             * several batch sizes, the other's not) and the batch itself. */
            if (y->phase != ni || !y->nsteady || y->lat_p50 <= 0 || y->batch != x->batch ||
                strcmp(y->rest, x->rest))
                continue;
            /* Its verdict as the Series line gives one (a shift of either withholds it there,
             * and did not here). */
            if (*o + 96 < n) {
                *o += (size_t)snprintf(out + *o, n - *o, "%s%s %.2fx no_grad",
                                       matched ? "; " : ": ", x->name[0] ? x->name : "(unnamed)",
                                       (double)y->lat_p50 / (double)x->lat_p50);
                if (*o + 1 < n) *o += series_pair_words(x, y, out + *o, n - *o);
            }
            if (*o + 1 < n) *o += faults_words(x, y, out + *o, n - *o);
            matched++;
            break;
        }
    }
    return matched;
}

/* inference_mode against no_grad, two phases of one series each: the ratio of their p50s, the
 * band, and its verdict where a band stands (a shift withholds it unless outlasted). */
static void mode_verdict(const struct phase_info *inf, const struct phase_info *ng,
                         struct mode_verdict *mv)
{
    *mv = (struct mode_verdict){0};
    snprintf(mv->autocast, sizeof mv->autocast, "%s", inf->autocast);
    mv->ratio = (double)ng->lat_p50 / (double)inf->lat_p50;
    mv->band = phases_pair_band(inf, ng, phases_apart(inf, ng), &mv->lo, &mv->hi) == 1;
    mv->v = mv->band ? iterations_verdict(mv->lo, mv->hi, mv->ratio) : VERDICT_UNCLEAR;
}

int mode_verdicts(const struct run_phases *p, struct mode_verdict *out, int max)
{
    int n = 0;
    char scratch[512];
    for (int i = 0; i < p->n && n < max; i++) {
        const struct phase_info *inf = &p->v[i];
        if (strcmp(inf->grad_mode, "inference_mode") || !inf->nsteady) continue;
        const struct phase_info *ng = phase_twin(p, inf, "no_grad");
        if (!ng || inf->nseries > 1 || ng->nseries > 1) continue; /* as the line: no ratio */
        scratch[0] = 0;
        if (batch_words(p, inf, ng, "no_grad", scratch, sizeof scratch) ||
            model_words(p, inf, ng, "no_grad", scratch, sizeof scratch))
            continue;
        mode_verdict(inf, ng, &out[n++]);
    }
    return n;
}

/* inference_mode: each inference_mode phase against its no_grad twin. */
static void fill_inference(const struct section_ctx *c, struct summary_out *so)
{
    const struct run_phases *p = c->p;
    char buf[1024];
    size_t o;
    o = 0;
    buf[0] = 0;
    for (int i = 0; i < p->n; i++) {
        const struct phase_info *inf = &p->v[i];
        if (strcmp(inf->grad_mode, "inference_mode") || !inf->nsteady) continue;
        const struct phase_info *ng = phase_twin(p, inf, "no_grad");
        if (!ng || o + 80 > sizeof buf) continue;
        if (inf->nseries > 1 || ng->nseries > 1) { /* pooled: a p50 of no configuration */
            const struct phase_info *pooled = inf->nseries > 1 ? inf : ng;
            size_t at = o;
            o += (size_t)snprintf(buf + o, sizeof buf - o, "%sautocast %s, per series",
                                  o ? "; " : "", inf->autocast);
            if (series_words(p, inf, ng, buf, sizeof buf, &o)) continue;
            o = at, buf[o] = 0;
            o += (size_t)snprintf(buf + o, sizeof buf - o,
                                  "%sautocast %s: not compared, %s pools %d series (the Series"
                                  " table has each)",
                                  o ? "; " : "", inf->autocast,
                                  pooled == inf ? "inference_mode" : "no_grad", pooled->nseries);
            continue;
        }
        /* Another batch size: a call's latency says nothing of the mode (batch 16 against
         * batch 8 read "1.34x no_grad, faster"): the rate per item compares them. */
        char lead[64];
        snprintf(lead, sizeof lead, "%sautocast %s", o ? "; " : "", inf->autocast);
        memcpy(buf + o, lead, strlen(lead) + 1);
        if (batch_words(p, inf, ng, "no_grad", buf, sizeof buf) ||
            model_words(p, inf, ng, "no_grad", buf, sizeof buf)) {
            o = strlen(buf);
            continue;
        }
        buf[o] = 0;
        struct mode_verdict mv;
        mode_verdict(inf, ng, &mv);
        double lo = mv.lo, hi = mv.hi, r = mv.ratio;
        const struct phase_info *sh = phases_shifted(inf, ng);
        int band = mv.band;
        int bad = inf->suspect || ng->suspect;
        so->hit |= bad;
        enum verdict v = mv.v;
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%sautocast %s: %.2fx no_grad%s%s%s",
                              o ? "; " : "", inf->autocast, r, band ? verdict_words[v] : "",
                              band && (v == VERDICT_FASTER || v == VERDICT_SLOWER)
                                  ? pool_printf(" (95%%: %.2f-%.2fx, one run)", lo, hi)
                                  : "",
                              bad ? " (suspect)" : "");
        if (sh && o < sizeof buf)
            o += shift_words(sh, band ? SHIFT_OUTLASTED : SHIFT_WITHHOLDS, buf + o, sizeof buf - o);
        if (o + 1 < sizeof buf)
            o += faults_words(phase_only_series(p, inf), phase_only_series(p, ng), buf + o,
                              sizeof buf - o);
        if (o < sizeof buf)
            o += inf->lat_p50 < ng->lat_p50 ? overlap_words(inf, ng, buf + o, sizeof buf - o)
                                            : overlap_words(ng, inf, buf + o, sizeof buf - o);
    }
    summary_set(so, buf);
    if (!o && p->n) summary_set(so, why_no_inference(p));
}

/* Warm-up: the phases with warm-up iterations and their time, or why none. */
static void fill_warmup(const struct section_ctx *c, struct summary_out *so)
{
    const struct run_phases *p = c->p;
    char buf[1024];
    char x[32];
    int warm = 0;
    int64_t warm_ns = 0;
    for (int i = 0; i < p->n; i++) warm += p->v[i].warmup > 0, warm_ns += p->v[i].warmup_ns;
    if (warm) {
        fmt_ns(x, sizeof x, (double)warm_ns);
        snprintf(buf, sizeof buf, "%d %s, %s in all, left out of every figure (table below)", warm,
                 warm == 1 ? "phase" : "phases", x);
        summary_set(so, buf);
    } else if (p->n) {
        int iters = 0, detected = 0, level = 0;
        for (int i = 0; i < p->n; i++)
            iters |= p->v[i].iterations > 0, detected |= p->v[i].detected.period > 0,
                level |= p->v[i].detected.by_level;
        summary_set(
            so, !iters     ? no_iteration_words(p, 0)
                : level    ? "none found among the iterations (those cut where the allocated total"
                             " came back to its level include the first forwards; at other sizes a"
                             " first forward's time moves with its size too)"
                : detected ? "none among the iterations: those detected without a mark start where"
                             " the loop repeats exactly, so a first forward that differs (a slow"
                             " warm-up) is left out, not counted"
                           : "none: every phase's first iterations were as fast as the rest");
    }
}

/* Iterations: where any phase's were detected without a mark, which and from what, so that a
 * reader knows what an iteration is before reading its figures; and why a Python process's
 * module calls were not the iterations (a fresh-eyes check's copy of the library without its
 * sitecustomize.py read "loop 3 71.54ms" and merged two models into one, saying why only in the
 * Run table). Null when every iteration was marked or a module call. */
static void fill_iterations(const struct section_ctx *c, struct summary_out *so)
{
    const struct run_phases *p = c->p;
    char buf[1024], l[32];
    size_t o = 0;
    int split = 0, from = 0, threads = 1, missed = 0, sizes = 0;
    for (int i = 0; i < p->n && o + 40 < sizeof buf; i++) {
        const struct phase_info *ph = &p->v[i];
        if (!ph->detected.period || ph->transient) continue;
        phase_short_label(ph, l, sizeof l);
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s", o ? ", " : "", l);
        split |= ph->detected.pieces > 1;
        sizes |= ph->detected.sizes_vary;
        from |= 1 << ph->detected.from;
        if (ph->detected.threads > threads) threads = ph->detected.threads;
        missed += ph->detected.threads_missed;
    }
    if (!o) return;
    const char *src = from == 1 << DETECT_KERNELS     ? "its kernel sequence"
                      : from == 1 << DETECT_OPERATORS ? "its operator sequence"
                      : from == 1 << DETECT_ALLOCATIONS
                          ? "the allocator's reports (each from the loop body's first"
                            " allocation to its last: the forward, and any preparation or"
                            " post-processing that allocates)"
                          : "its kernels, operators or allocations (the phase table's note)";
    o += (size_t)snprintf(buf + o, sizeof buf - o, ": detected without a mark, from %s%s%s", src,
                          split ? "; a period of several forwards cut into them" : "",
                          sizes ? "; forwards at other sizes (another batch or input length)"
                                  " matched by their allocations' order, not their sizes"
                                : "");
    if (threads > 1 && o < sizeof buf)
        o += (size_t)snprintf(buf + o, sizeof buf - o,
                              "; on up to %d threads, every thread's forwards counted", threads);
    if (missed && o < sizeof buf)
        o += (size_t)snprintf(buf + o, sizeof buf - o,
                              "; %d other thread%s with as many allocator reports: no forward"
                              " found, not counted (the phase table's note)",
                              missed, missed > 1 ? "s" : "");
    if (p->py_hooks_off[0] && o < sizeof buf)
        snprintf(buf + o, sizeof buf - o,
                 "; Python's module hooks were off (%s), so model calls are not the iterations and"
                 " no model is named",
                 p->py_hooks_off);
    else if (o < sizeof buf)
        snprintf(buf + o, sizeof buf - o,
                 "; a mark around the forward (an NVTX range or record_function scope named"
                 " iteration) times exactly it");
    summary_set(so, buf);
}

static const struct summary_line line_fastest = {
    .key = "fastest", .title = "Fastest phase", .rank = 10, .fill = fill_fastest};
static const struct summary_line line_inference = {
    .key = "inference_vs_no_grad", .title = "inference_mode", .rank = 30, .fill = fill_inference};
static const struct summary_line line_warmup = {
    .key = "warmup", .title = "Warm-up", .rank = 60, .fill = fill_warmup};
static const struct summary_line line_iterations = {
    .key = "iterations_detected", .title = "Iterations", .rank = 8, .fill = fill_iterations};

const struct summary_line *const phases_summary[] = {&line_iterations, &line_fastest,
                                                     &line_inference, &line_warmup, NULL};
