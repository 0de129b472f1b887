/*
 * sec_summary.c: the first screen: the questions the report exists for, answered in a line
 * each with their numbers, before any table. Which phase is fastest and by how much against the
 * baseline (with its band), inference_mode against no_grad, which phase sets the memory peak and
 * what the others save, whether autocast ran the GEMMs and convolutions in the type it was
 * asked for, what the warm-up cost, whether anything was lost, and how many findings follow.
 * Every figure comes from the same computations as the tables below it.
 */
#include "advice.h"
#include "sections.h"
#include "../run/energy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The phase of lowest p50 among those that are one configuration: a phase that pools several
 * series has a p50 of none of them (in an fp32 + int8 run, the int8 series' p95), so it is not
 * ranked; *pooled gets the first such phase. */
static const struct phase_info *fastest(const struct run_phases *p,
                                        const struct phase_info **pooled)
{
    const struct phase_info *best = NULL;
    *pooled = NULL;
    for (int i = 0; i < p->n; i++) {
        const struct phase_info *ph = &p->v[i];
        if (ph->transient || !ph->nsteady) continue;
        if (ph->nseries > 1) {
            if (!*pooled) *pooled = ph;
            continue;
        }
        if (!best || ph->lat_p50 < best->lat_p50) best = ph;
    }
    return best;
}

/* A phase's short label, marked when its figures lost events (suspect.c); *hit records that the
 * line quotes a suspect phase. */
static void named(const struct phase_info *ph, char *out, size_t n, int *hit)
{
    phase_short_label(ph, out, n);
    if (!ph->suspect) return;
    *hit = 1;
    size_t o = strlen(out);
    snprintf(out + o, n - o, " (suspect)");
}

static void add(struct table *t, int col, const char *text)
{
    if (text && text[0]) table_set_text(t, col, text);
}

/* The share of a phase's GEMM/conv/attention time in precision `want`, among the time whose
 * type the names say; -1 when there is no such time. *unknown: the share of all that time whose
 * type they do not say (Triton kernels, unknown names), -1 when there is none at all. */
static double compute_share(const struct phase_info *ph, enum precision want, double *unknown)
{
    int64_t total = 0, in = 0, dark = 0;
    static const int ops[] = {OP_GEMM, OP_CONV, OP_ATTENTION};
    for (size_t k = 0; k < 3; k++)
        for (int prec = 0; prec < PREC_COUNT; prec++) {
            int64_t ns = ph->mix[ops[k]][prec];
            if (prec == PREC_UNKNOWN)
                dark += ns;
            else
                total += ns;
            if (prec == (int)want) in += ns;
        }
    *unknown = total + dark ? 100.0 * (double)dark / (double)(total + dark) : -1;
    return total ? 100.0 * (double)in / (double)total : -1;
}

/* Why the inference_mode line has no answer. */
static const char *why_no_inference(const struct run_phases *p)
{
    int inf = 0, steady = 0;
    for (int i = 0; i < p->n; i++)
        if (!strcmp(p->v[i].grad_mode, "inference_mode") && !p->v[i].transient)
            inf = 1, steady |= p->v[i].nsteady > 0;
    return !inf      ? "no inference_mode phase ran"
           : !steady ? "no iteration was seen in inference_mode: see the phase table's note"
                     : "no no_grad phase with iterations at the same autocast setting";
}

/* The Findings line: the top three advice rules, each with the phases it fired in and its
 * finding of most grounded saving (else its first), numbers included; the Advice section below
 * has them all. */
static void findings_line(struct table *t, const struct advice_list *l, int col)
{
    char buf[2048];
    size_t o = 0;
    int shown = 0;
    /* The registered rules by their rank (advice.h): lost data first, then settings that make
     * the answers wrong (a model in train() mode, autograd on, autocast not casting), then
     * speed. Every rule that fired is ranked: none can go missing from this line. */
    const struct advice_rule *order[64];
    int nr = advice_rule_count < 64 ? advice_rule_count : 64;
    for (int r = 0; r < nr; r++) {
        order[r] = advice_rules[r];
        for (int q = r; q > 0 && order[q - 1]->rank > order[q]->rank; q--) {
            const struct advice_rule *x = order[q];
            order[q] = order[q - 1];
            order[q - 1] = x;
        }
    }
    for (int r = 0; r < nr; r++) {
        const struct advice *best = NULL;
        int n = 0;
        for (int i = 0; i < l->n; i++) {
            const struct advice *a = &l->v[i];
            if (strcmp(a->rule, order[r]->name)) continue;
            n++;
            if (!best || a->saving_ns > best->saving_ns) best = a;
        }
        if (!n) continue;
        if (shown == 3) break;
        shown++;
        char text[200];
        size_t len = strlen(best->finding);
        if (len < sizeof text) {
            memcpy(text, best->finding, len + 1);
            if (len && text[len - 1] == '.') text[len - 1] = 0; /* the list goes on */
        } else {                                                /* at a word, marked */
            size_t cut = sizeof text - 4;
            while (cut > 0 && best->finding[cut] != ' ') cut--;
            /* Not inside a parenthesis: before the one left open, at its space. */
            size_t open = 0;
            int depth = 0;
            for (size_t i = 0; i < cut; i++)
                if (best->finding[i] == '(' && depth++ == 0)
                    open = i;
                else if (best->finding[i] == ')' && depth > 0)
                    depth--;
            if (depth && open > 0) cut = open - (best->finding[open - 1] == ' ');
            while (cut > 0 && best->finding[cut - 1] == ',') cut--;
            snprintf(text, sizeof text, "%.*s...", (int)cut, best->finding);
        }
        char times[32] = "";
        if (n > 1) snprintf(times, sizeof times, " (%d phases)", n);
        if (o + 300 < sizeof buf)
            o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s%s: %s", o ? "; " : "", best->rule,
                                  times, text);
    }
    if (!o) {
        table_set_text(t, col, "none: no advice rule fired (Advice below)");
        return;
    }
    snprintf(buf + o, sizeof buf - o, " (Advice below has them all)");
    table_set_text(t, col, buf);
}

/* The Suspect line: which phases lost events, how, and which answers above quote them. */
/* hit: whether the Fastest phase, inference_mode, Peak memory and Autocast answers quote one. */
static void suspect_line(struct table *t, const struct run_phases *p, const int *hit, int col,
                         int col_phases, int col_lines)
{
    static const char *const lines[] = {"fastest", "inference_vs_no_grad", "memory", "autocast"};
    static const char *const titles[] = {"Fastest phase", "inference_mode", "Peak memory",
                                         "Autocast"};
    char buf[1024], js[512], jl[128], a[32];
    size_t o = 0, jo = 0, lo = 0;
    js[0] = jl[0] = 0;
    for (int i = 0; i < p->n; i++) {
        const struct phase_info *ph = &p->v[i];
        if (!ph->suspect || ph->transient || o + 260 > sizeof buf) continue;
        phase_short_label(ph, a, sizeof a);
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s (%s)", o ? ", " : "", a,
                              ph->suspect_why);
        if (jo + 80 < sizeof js)
            jo += (size_t)snprintf(js + jo, sizeof js - jo, "%s\"%s\"", jo ? ", " : "", ph->label);
    }
    if (!o) {
        /* No suspect phase: no line in text (null in JSON), the lists empty. */
        table_set_text(t, col_phases, "[]");
        table_set_text(t, col_lines, "[]");
        return;
    }
    int first = 1;
    for (int k = 0; k < 4; k++) {
        if (!hit[k]) continue;
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s", first ? "; affects: " : ", ",
                              titles[k]);
        lo += (size_t)snprintf(jl + lo, sizeof jl - lo, "%s\"%s\"", first ? "" : ", ", lines[k]);
        first = 0;
    }
    if (first) snprintf(buf + o, sizeof buf - o, "; no answer above quotes them");
    snprintf(buf + strlen(buf), sizeof buf - strlen(buf),
             " (lost events: read these figures with care)");
    table_set_text(t, col, buf);
    char wrap[560];
    snprintf(wrap, sizeof wrap, "[%s]", js);
    table_set_text(t, col_phases, wrap);
    snprintf(wrap, sizeof wrap, "[%s]", jl);
    table_set_text(t, col_lines, wrap);
}

/* ", no verdict: no_grad/off shifted 714us -> 479us mid-run": what stands in for a verdict
 * against a phase whose steady iterations shift level (docs/report.md, "Verdicts the run cannot
 * support"). */
static size_t shift_words(const struct phase_info *ph, char *out, size_t n)
{
    char l[32], a[32], b[32];
    phase_short_label(ph, l, sizeof l);
    fmt_ns(a, sizeof a, (double)ph->shift_before);
    fmt_ns(b, sizeof b, (double)ph->shift_after);
    int w = snprintf(out, n, ", no verdict: %s shifted %s -> %s mid-run", l, a, b);
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

/* The Series line: per phase with several configurations (series.c picks them), the fastest
 * configuration at one batch size against the slowest, then the batch that gives the most
 * items/s against the smallest batch of the same configuration. */
static void series_line(const struct run_phases *p, char *buf, size_t n)
{
    size_t o = 0;
    buf[0] = 0;
    for (int i = 0; i < p->n && o + 300 < n; i++) {
        struct series_pick k;
        if (!series_pick(p, i, &k)) continue;
        char label[32], x[32], y[32];
        phase_short_label(&p->v[i], label, sizeof label);
        o += (size_t)snprintf(buf + o, n - o, "%s%s: ", o ? "; " : "", label);
        if (k.fast) {
            fmt_ns(x, sizeof x, (double)k.fast->lat_p50);
            fmt_ns(y, sizeof y, (double)k.slow->lat_p50);
            char fast[48], slow[48]; /* long names cut on a character, kept apart */
            fmt_label_cut(fast, sizeof fast, k.fast->name[0] ? k.fast->name : "(unnamed)", 40);
            fmt_label_cut(slow, sizeof slow, k.slow->name[0] ? k.slow->name : "(unnamed)", 40);
            o += (size_t)snprintf(buf + o, n - o, "%s fastest, p50 %s: %.2fx %s (%s)", fast, x,
                                  (double)k.slow->lat_p50 / (double)k.fast->lat_p50, slow, y);
        }
        if (k.most && o + 200 < n) {
            fmt_ns(x, sizeof x, (double)k.most->lat_p50);
            o +=
                (size_t)snprintf(buf + o, n - o,
                                 "%s%s%sbatch %lld gives the most items/s, %.2fx batch %lld's, at"
                                 " %.2fx its p50 (%s)",
                                 k.fast ? "; " : "", k.most->rest, k.most->rest[0] ? ": " : "",
                                 (long long)k.most->batch, k.items_ratio, (long long)k.small->batch,
                                 (double)k.most->lat_p50 / (double)k.small->lat_p50, x);
        }
    }
}

enum {
    S_FASTEST,
    S_SERIES,
    S_INFER,
    S_PEAK,
    S_AUTOCAST,
    S_WARMUP,
    S_LOSS,
    S_CLOCKS,
    S_SUSPECT,
    S_FINDINGS,
    S_PEAK_PHASE,
    S_PEAK_DEVICE,
    S_PEAK_BYTES,
    S_SAVED_PHASE,
    S_SAVED_AGAINST,
    S_SAVED_BYTES,
    S_SAVED_PCT,
    S_SUSPECT_PHASES,
    S_SUSPECT_LINES,
    S_COUNT
};

/* The words for a phase that pools several series: where each one's figures are. */
static void pooled_words(const struct run_phases *p, const struct phase_info *ph, char *out,
                         size_t n)
{
    struct series_pick k;
    int line = series_pick(p, (int)(ph - p->v), &k); /* else no Series line */
    char a[64];
    phase_short_label(ph, a, sizeof a);
    snprintf(out, n, "%s pools %d series, so it has no p50 of its own: see the %s", a, ph->nseries,
             line ? "Series line" : "Series table");
}

/* Fastest phase: its p50 and how it compares with the baseline, with the 95% band; phases that
 * pool several series are neither ranked nor compared (pooled_words). */
static void line_fastest(struct table *t, const struct run_phases *p, const struct phase_info *base,
                         int *hit)
{
    char buf[1024];
    char a[64], b[64];
    char x[32];
    const struct phase_info *pooled;
    const struct phase_info *f = fastest(p, &pooled);
    if (!f && pooled) {
        pooled_words(p, pooled, buf, sizeof buf);
        add(t, S_FASTEST, buf);
    } else if (f && base && base->nsteady) {
        named(f, a, sizeof a, &hit[S_FASTEST]);
        named(base, b, sizeof b, &hit[S_FASTEST]);
        fmt_ns(x, sizeof x, (double)f->lat_p50);
        int against = f != base && base->nseries == 1; /* a pooled baseline: no ratio */
        double lo, hi;
        const struct phase_info *sh = against ? phases_shifted(f, base) : NULL;
        int band =
            against && !sh &&
            iterations_ratio_ci(f->steady, f->nsteady, base->steady, base->nsteady, &lo, &hi);
        enum verdict v = band ? iterations_verdict(lo, hi) : VERDICT_UNCLEAR;
        snprintf(buf, sizeof buf, "%s, p50 %s%s", a, x, f == base ? " (the baseline)" : "");
        if (against)
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf), ": %.2fx %s%s",
                     (double)base->lat_p50 / (double)f->lat_p50, b,
                     !band                  ? ""
                     : v == VERDICT_SAME    ? " (the same within 1%)"
                     : v == VERDICT_UNCLEAR ? " (no clear difference)"
                                            : "");
        if (band && (v == VERDICT_FASTER || v == VERDICT_SLOWER))
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf), " (95%%: %.2f-%.2fx)", lo, hi);
        if (sh) shift_words(sh, buf + strlen(buf), sizeof buf - strlen(buf));
        if (against) overlap_words(f, base, buf + strlen(buf), sizeof buf - strlen(buf));
        /* A phase that pools configurations has a p50 of none of them: the Series line has. */
        const struct phase_info *mixed = f != base && base->nseries > 1 ? base : pooled;
        if (mixed) {
            char w[400];
            pooled_words(p, mixed, w, sizeof w);
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "; not ranked: %s", w);
        }
        add(t, S_FASTEST, buf);
    } else if (p->n) {
        add(t, S_FASTEST, "no iteration was seen: see the phase table's note");
    }
}

/* inference_mode: each inference_mode phase against its no_grad twin. */
static void line_inference(struct table *t, const struct run_phases *p, int *hit)
{
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
            o += (size_t)snprintf(buf + o, sizeof buf - o,
                                  "%sautocast %s: not compared, %s pools %d series (the Series"
                                  " table has each)",
                                  o ? "; " : "", inf->autocast,
                                  pooled == inf ? "inference_mode" : "no_grad", pooled->nseries);
            continue;
        }
        static const char *const words[] = {[VERDICT_SAME] = ", the same within 1%",
                                            [VERDICT_FASTER] = ", faster",
                                            [VERDICT_SLOWER] = ", slower",
                                            [VERDICT_UNCLEAR] = ", no clear difference"};
        double lo, hi, r = (double)ng->lat_p50 / (double)inf->lat_p50;
        const struct phase_info *sh = phases_shifted(inf, ng);
        int band = !sh && iterations_ratio_ci(inf->steady, inf->nsteady, ng->steady, ng->nsteady,
                                              &lo, &hi);
        int bad = inf->suspect || ng->suspect;
        hit[S_INFER] |= bad;
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%sautocast %s: %.2fx no_grad%s%s",
                              o ? "; " : "", inf->autocast, r,
                              band ? words[iterations_verdict(lo, hi)] : "",
                              bad ? " (suspect)" : "");
        if (sh && o < sizeof buf) o += shift_words(sh, buf + o, sizeof buf - o);
        if (o < sizeof buf)
            o += inf->lat_p50 < ng->lat_p50 ? overlap_words(inf, ng, buf + o, sizeof buf - o)
                                            : overlap_words(ng, inf, buf + o, sizeof buf - o);
    }
    add(t, S_INFER, buf);
    if (!o && p->n) add(t, S_INFER, why_no_inference(p));
}

/* Peak memory: the phase that sets it, and what the least costly setting saves. */
static void line_memory(struct table *t, const struct run_phases *p, const struct phase_info *base,
                        int *hit)
{
    char buf[1024];
    char a[64], b[64];
    char x[32], y[32];
    /* The peak and the saving: memory.c's figures, the phase table's (per device, never a
     * sum over devices); the saving is against the baseline, as in the table's Saved column. */
    const struct phase_info *top = NULL, *least = NULL;
    for (int i = 0; i < p->n; i++) {
        const struct phase_info *ph = &p->v[i];
        if (!ph->has_memory || ph->transient || ph->mem_dev < 0) continue;
        if (!top || ph->peak_alloc > top->peak_alloc) top = ph;
        /* What a setting saves: among the phases that ran the model, not their setup. */
        if (phase_ran_model(p, ph) && (!least || ph->peak_alloc < least->peak_alloc)) least = ph;
    }
    if (top && top->peak_alloc > 0) {
        char dev[32];
        device_name(p->devices.type[top->mem_dev], p->devices.index[top->mem_dev], dev, sizeof dev);
        named(top, a, sizeof a, &hit[S_PEAK]);
        fmt_bytes(x, sizeof x, (double)top->peak_alloc);
        snprintf(buf, sizeof buf, "%s sets the peak, %s allocated%s%s", a, x,
                 p->devices.n > 1 ? " on " : "", p->devices.n > 1 ? dev : "");
        table_set_text(t, S_PEAK_PHASE, top->label);
        table_set_text(t, S_PEAK_DEVICE, dev);
        table_set_int(t, S_PEAK_BYTES, top->peak_alloc);
        const struct phase_info *against = base && base->has_memory ? base : top;
        int64_t saved;
        double pct;
        if (least && least != against && memory_saving(against, least, &saved, &pct) && saved > 0) {
            named(least, b, sizeof b, &hit[S_PEAK]);
            fmt_bytes(y, sizeof y, (double)saved);
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "; %s needs %s less", b, y);
            if (against != top) {
                named(against, a, sizeof a, &hit[S_PEAK]);
                snprintf(buf + strlen(buf), sizeof buf - strlen(buf), " than %s", a);
            }
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf), " (%.0f%%)", pct);
            table_set_text(t, S_SAVED_PHASE, least->label);
            table_set_text(t, S_SAVED_AGAINST, against->label);
            table_set_int(t, S_SAVED_BYTES, saved);
            table_set_num(t, S_SAVED_PCT, pct);
        }
        add(t, S_PEAK, buf);
    } else if (p->n) {
        add(t, S_PEAK,
            "no allocator report: no tensor memory was recorded (libtorch's allocator"
            " hooks off, or no tensor allocated)");
    }
}

/* Autocast: the share of GEMM and convolution time in the type each autocast phase asked for. */
static void line_autocast(struct table *t, const struct run_phases *p, int *hit)
{
    char buf[1024];
    char a[64];
    size_t o;
    o = 0;
    buf[0] = 0;
    char foot[160];
    size_t fo = 0;
    int triton = 0;
    for (int i = 0; i < p->n; i++) {
        const struct phase_info *ph = &p->v[i];
        if (!strcmp(ph->autocast, "off") || ph->transient || o + 80 > sizeof buf) continue;
        enum precision want = !strcmp(ph->autocast, "bf16") ? PREC_BF16 : PREC_FP16;
        double unknown, share = compute_share(ph, want, &unknown);
        if (unknown < 0) continue;
        named(ph, a, sizeof a, &hit[S_AUTOCAST]);
        if (share < 0)
            o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s unknown*", o ? ", " : "", a);
        else
            o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s %.0f%%%s", o ? ", " : "", a, share,
                                  unknown >= 0.5 ? "*" : "");
        /* The footnote: how much of the time the answer covers, and why not all of it. */
        if (unknown >= 0.5 && fo + 80 < sizeof foot)
            fo += (size_t)snprintf(foot + fo, sizeof foot - fo, "%s%s %.0f%%", fo ? ", " : "", a,
                                   100 - unknown);
        triton |= ph->triton_compute_ns > 0 && unknown >= 0.5;
    }
    if (o)
        o += (size_t)snprintf(buf + o, sizeof buf - o,
                              " of GEMM and convolution time in the type asked for");
    if (o && fo && o + fo + 120 < sizeof buf)
        snprintf(buf + o, sizeof buf - o, "; * of the time whose type the kernel names say: %s%s",
                 foot, triton ? " (the rest is Triton kernels, which name no dtype)" : "");
    add(t, S_AUTOCAST, buf);
    if (!o && p->n) {
        int any = 0, kernels = 0;
        for (int i = 0; i < p->n; i++)
            if (strcmp(p->v[i].autocast, "off") && !p->v[i].transient)
                any = 1, kernels |= p->v[i].has_kernels;
        add(t, S_AUTOCAST,
            !any      ? "no autocast phase ran"
            : kernels ? "no GEMM or convolution kernel ran in the autocast phases"
                      : "no CUDA activity was recorded in the autocast phases");
    }
}

/* Warm-up: the phases with warm-up iterations and their time, or why none. */
static void line_warmup(struct table *t, const struct run_phases *p)
{
    char buf[1024];
    char x[32];
    int warm = 0;
    int64_t warm_ns = 0;
    for (int i = 0; i < p->n; i++) warm += p->v[i].warmup > 0, warm_ns += p->v[i].warmup_ns;
    if (warm) {
        fmt_ns(x, sizeof x, (double)warm_ns);
        snprintf(buf, sizeof buf, "%d %s, %s in all, left out of every figure (table below)", warm,
                 warm == 1 ? "phase" : "phases", x);
        add(t, S_WARMUP, buf);
    } else if (p->n) {
        int iters = 0, detected = 0;
        for (int i = 0; i < p->n; i++)
            iters |= p->v[i].iterations > 0, detected |= p->v[i].detected_period > 0;
        add(t, S_WARMUP,
            !iters     ? "no iteration was seen: see the phase table's note"
            : detected ? "none among the iterations: those detected without a mark start where"
                         " the loop repeats exactly, so a first forward that differs (a slow"
                         " warm-up) is left out, not counted"
                       : "none: every phase's first iterations were as fast as the rest");
    }
}

/* Lost: what the run lost (events, records, rows, Python module calls not timed), or nothing. */
static void line_lost(struct table *t, const struct run_phases *p)
{
    char buf[1024];
    size_t o;
    int64_t dropped = p->lost[RUN_LOST_EVENTS], cupti = p->lost[RUN_LOST_CUPTI_RECORDS];
    int64_t errors = p->lost[RUN_LOST_WRITE_ERRORS], unwritten = p->lost[RUN_LOST_ROWS];
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
        add(t, S_LOSS, buf);
    } else if (dropped || cupti) {
        snprintf(buf, sizeof buf, "%lld events and %lld CUDA records dropped: see Warnings",
                 (long long)dropped, (long long)cupti);
        add(t, S_LOSS, buf);
    } else if (p->py_unseen || p->py_open_at_end) {
        /* Nothing dropped, but Python module calls the hooks could not time (docs/python.md). */
        o = (size_t)snprintf(buf, sizeof buf, "no event dropped; ");
        if (p->py_unseen)
            o += (size_t)snprintf(buf + o, sizeof buf - o,
                                  "at least %lld module call%s not timed (begun on a thread"
                                  " before it was watched: a model run from several threads)%s",
                                  (long long)p->py_unseen, p->py_unseen == 1 ? "" : "s",
                                  p->py_open_at_end ? "; " : "");
        if (p->py_open_at_end && o < sizeof buf)
            snprintf(buf + o, sizeof buf - o,
                     "%lld module call%s never ended (it raised: before PyTorch 2.1 the calls"
                     " after it go unseen until that module runs again; or the program ended"
                     " inside it)",
                     (long long)p->py_open_at_end, p->py_open_at_end == 1 ? "" : "s");
        add(t, S_LOSS, buf);
    } else {
        add(t, S_LOSS, "nothing");
    }
}

struct table *section_summary(struct sqlite3 *db, const struct run_phases *p,
                              const struct phase_info *base, const struct advice_list *advice)
{
    struct table *t = table_new("summary", "Summary");
    t->object = 1;
    int hit[S_COUNT] = {0};
    table_col(t, "fastest", "Fastest phase", COL_TEXT);
    table_col(t, "series", "Series", COL_TEXT);
    table_col(t, "inference_vs_no_grad", "inference_mode", COL_TEXT);
    table_col(t, "memory", "Peak memory", COL_TEXT);
    table_col(t, "autocast", "Autocast", COL_TEXT);
    table_col(t, "warmup", "Warm-up", COL_TEXT);
    table_col(t, "lost", "Lost", COL_TEXT);
    table_col(t, "clocks", "Clocks", COL_TEXT); /* energy.c: throttled, or another clock */
    table_col(t, "suspect", "Suspect", COL_TEXT);
    table_col(t, "findings", "Findings", COL_TEXT);
    /* The numbers beside the prose (JSON and CSV only). */
    table_col(t, "peak_phase", NULL, COL_TEXT);
    table_col(t, "peak_device", NULL, COL_TEXT);
    table_col(t, "peak_allocated_bytes", NULL, COL_BYTES);
    table_col(t, "saved_phase", NULL, COL_TEXT);
    table_col(t, "saved_against_phase", NULL, COL_TEXT);
    table_col(t, "peak_allocated_saved_bytes", NULL, COL_BYTES);
    table_col(t, "peak_allocated_saved_pct", NULL, COL_PCT);
    table_col(t, "suspect_phases", NULL, COL_JSON);
    table_col(t, "suspect_answers", NULL, COL_JSON);
    table_row(t);

    line_fastest(t, p, base, hit);
    char buf[1024];
    series_line(p, buf, sizeof buf);
    add(t, S_SERIES, buf);

    line_inference(t, p, hit);
    line_memory(t, p, base, hit);
    line_autocast(t, p, hit);
    line_warmup(t, p);
    findings_line(t, advice, S_FINDINGS);

    line_lost(t, p);
    char clocks[512];
    if (energy_clock_note(db, p, base, clocks, sizeof clocks)) add(t, S_CLOCKS, clocks);
    /* The answers a suspect phase can touch, in suspect_line's order. */
    const int touched[4] = {hit[S_FASTEST], hit[S_INFER], hit[S_PEAK], hit[S_AUTOCAST]};
    suspect_line(t, p, touched, S_SUSPECT, S_SUSPECT_PHASES, S_SUSPECT_LINES);
    return t;
}

/* ---- descriptor (sections.h) ------------------------------------------------------------- */

static int summary_build(const struct section_ctx *c, struct table **out, int max)
{
    (void)max;
    out[0] = section_summary(c->db, c->p, c->base, c->advice);
    return 1;
}

const struct report_section sec_summary = {
    .key = "summary", .build = summary_build, .shown_empty = 1, .compare = NULL};
