/*
 * series.c: a series' own figures beyond its latency (docs/report.md, "Series"): the kernels its
 * steady iterations launched and their GPU time (kernel_rows.iter ties each kernel to the
 * iteration whose host call launched it), and its peak allocated tensor memory on the run's
 * memory device (memory.c: the first GPU, else the CPU) while its iterations ran, warm-up
 * included (a first forward that sets the peak is this series' peak). A phase's figures pool its
 * series; these tell them apart.
 */
#include "run.h"
#include "memrows.h"
#include "kernrows.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

struct win {
    int64_t start, end;
    int series;
};

static int cmp_win(const void *a, const void *b)
{
    const struct win *x = a, *y = b;
    return (x->start > y->start) - (x->start < y->start);
}

struct idx {
    int64_t id;
    int series;
};

static int cmp_idx(const void *a, const void *b)
{
    const struct idx *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

/* Kernels of the steady iterations of every series, by iteration id. */
static void kernels_of(sqlite3 *db, struct run_phases *p)
{
    if (!db_has_column(db, "kernel_rows", "iter")) return;
    size_t n = 0;
    for (int i = 0; i < p->series.n; i++) n += p->series.v[i].nits;
    struct idx *v = malloc((n ? n : 1) * sizeof *v);
    if (!v) cli_fail("out of memory");
    n = 0;
    for (int i = 0; i < p->series.n; i++)
        for (size_t k = 0; k < p->series.v[i].nits; k++)
            if (p->series.v[i].its[k].steady) v[n++] = (struct idx){p->series.v[i].its[k].id, i};
    qsort(v, n, sizeof *v, cmp_idx);
    const struct kern_rows *kr = n ? kern_rows_get(db, p) : NULL; /* no steady one: none */
    for (size_t j = 0; kr && j < kr->n; j++) {
        if (kr->v[j].iter == KROW_NO_ITER) continue;
        struct idx key = {kr->v[j].iter, 0};
        struct idx *x = bsearch(&key, v, n, sizeof *v, cmp_idx);
        if (!x) continue;
        struct series_info *se = &p->series.v[x->series];
        if (se->kernels < 0) se->kernels = se->gpu_time = 0;
        se->kernels++;
        se->gpu_time += kr->v[j].dur;
    }
    free(v);
}

/* The window of w (sorted by start) that holds t: the last one starting at or before t, or one
 * a little before it when windows overlap (iterations on several threads). */
static const struct win *window_of(const struct win *w, size_t n, int64_t t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (w[mid].start <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t k = lo; k-- > 0 && lo - k <= 4;)
        if (t <= w[k].end) return &w[k];
    return NULL;
}

static void peaks_of(sqlite3 *db, struct run_phases *p)
{
    int dev = run_memory_device(&p->devices);
    if (dev < 0) return;
    const struct mem_rows *m = mem_rows_get(db, p);
    size_t n = 0;
    for (int i = 0; i < p->series.n; i++) n += p->series.v[i].nits;
    struct win *w = malloc((n ? n : 1) * sizeof *w);
    if (!w) cli_fail("out of memory");
    n = 0;
    for (int i = 0; i < p->series.n; i++)
        for (size_t k = 0; k < p->series.v[i].nits; k++)
            w[n++] = (struct win){p->series.v[i].its[k].start, p->series.v[i].its[k].end, i};
    qsort(w, n, sizeof *w, cmp_win);
    for (size_t i = 0; i < m->n; i++) {
        const struct mem_row *r = &m->v[i];
        if (r->type != p->devices.type[dev] || r->index != p->devices.index[dev]) continue;
        const struct win *x = window_of(w, n, r->ts);
        if (!x) continue;
        struct series_info *se = &p->series.v[x->series];
        if (r->allocated > se->peak_alloc) se->peak_alloc = r->allocated;
    }
    free(w);
}

/* name less its "batch=N" token and the spaces around it. */
static void rest_of(const char *name, char *out, size_t n)
{
    size_t o = 0;
    for (const char *c = name; *c && o + 1 < n;) {
        if ((c == name || c[-1] == ' ') && !strncmp(c, "batch=", 6)) {
            c += 6;
            while (*c && *c != ' ') c++;
            while (*c == ' ') c++;
            continue;
        }
        out[o++] = *c++;
    }
    while (o && out[o - 1] == ' ') o--;
    out[o] = 0;
}

void series_figures(struct sqlite3 *db, struct run_phases *p)
{
    for (int i = 0; i < p->series.n; i++) {
        rest_of(p->series.v[i].name, p->series.v[i].rest, sizeof p->series.v[i].rest);
        p->series.v[i].kernels = p->series.v[i].gpu_time = -1;
        p->series.v[i].peak_alloc = -1;
    }
    if (db_has_table(db, "kernel_rows")) kernels_of(db, p);
    peaks_of(db, p);
}

double series_items_per_s(const struct series_info *s)
{
    if (!s->nsteady || s->lat_mean <= 0 || !s->items) return 0;
    return (double)s->items / (double)s->nsteady * 1e9 / (double)s->lat_mean;
}

int series_batches_differ(const struct series_info *x, const struct series_info *y)
{
    return x && y && x->batch > 0 && y->batch > 0 && x->batch != y->batch;
}

void series_mark_mixed_peaks(struct run_phases *p)
{
    for (int i = 0; i < p->series.n; i++)
        for (int j = i + 1; j < p->series.n; j++) {
            const struct series_info *x = &p->series.v[i], *y = &p->series.v[j];
            if (x->phase == y->phase && x->nsteady && y->nsteady &&
                (series_models_differ(x, y) || series_batches_differ(x, y)))
                p->v[x->phase].peak_mixed = 1;
        }
}

int series_models_differ(const struct series_info *x, const struct series_info *y)
{
    if (!x || !y) return 0;
    if (x->model_none || y->model_none) /* none against a model */
        return x->model_none != y->model_none && (x->model[0] || y->model[0]);
    return x->model[0] && y->model[0] && strcmp(x->model, y->model) != 0;
}

/* A model's name less what the Python hooks add for a configuration of it (collectors/python:
 * " quantized", its dtype, " traced", " scripted", " frozen", " train()"); " #2" stays: another
 * instance is another model. */
static void model_family(const char *m, char *out, size_t n)
{
    static const char *const configs[] = {"quantized", "traced", "scripted", "frozen", "train()"};
    size_t o = 0;
    out[0] = 0;
    for (const char *w = m; *w;) {
        size_t len = strcspn(w, " ");
        /* a torch dtype's name: "float16", "bfloat16", "int8", "complex64" (letters, digits) */
        size_t letters = strspn(w, "abcdefghijklmnopqrstuvwxyz");
        int skip =
            w != m && letters < len && strspn(w + letters, "0123456789") == len - letters &&
            ((letters == 5 && !strncmp(w, "float", 5)) ||
             (letters == 6 && !strncmp(w, "bfloat", 6)) ||
             (letters == 7 && !strncmp(w, "complex", 7)) ||
             (letters == 3 && !strncmp(w, "int", 3)) || (letters == 4 && !strncmp(w, "uint", 4)));
        for (size_t k = 0; w != m && k < sizeof configs / sizeof *configs; k++)
            skip |= strlen(configs[k]) == len && !strncmp(w, configs[k], len);
        if (!skip && o + len + 2 < n)
            o += (size_t)snprintf(out + o, n - o, "%s%.*s", o ? " " : "", (int)len, w);
        w += len;
        while (*w == ' ') w++;
    }
}

int series_families_differ(const struct series_info *x, const struct series_info *y)
{
    if (!x || !y || x->model_none || y->model_none || !x->model[0] || !y->model[0])
        return series_models_differ(x, y);
    char a[sizeof x->model], b[sizeof y->model];
    model_family(x->model, a, sizeof a);
    model_family(y->model, b, sizeof b);
    return strcmp(a, b) != 0;
}

const char *series_model_text(const struct series_info *s)
{
    return s->model_none ? "none" : s->model;
}

const struct series_info *phase_only_series(const struct run_phases *p, const struct phase_info *ph)
{
    const struct series_info *one = NULL;
    for (int i = 0; i < p->series.n; i++) {
        if (&p->v[p->series.v[i].phase] != ph) continue;
        if (one) return NULL;
        one = &p->series.v[i];
    }
    return one;
}

/* Whether series se runs an iteration on thread tid (past SERIES_TIDS threads of its own: any). */
static int series_on_thread(const struct series_info *se, int64_t tid)
{
    if (se->ntids > SERIES_TIDS) return 1;
    for (int j = 0; j < se->ntids; j++)
        if (se->tids[j] == tid) return 1;
    return 0;
}

static void span_add(struct interval **v, size_t *n, size_t *cap, int64_t a, int64_t b)
{
    if (b <= a) return;
    if (*n == *cap && !(*v = realloc(*v, (*cap = *cap ? 2 * *cap : 256) * sizeof **v)))
        cli_fail("out of memory");
    (*v)[(*n)++] = (struct interval){a, b};
}

/* An iteration of any series on one of se's threads: its window and series. */
struct turn {
    int64_t start, end;
    int series;
};

static int cmp_turn(const void *a, const void *b)
{
    const struct turn *x = a, *y = b;
    if (x->start != y->start) return (x->start > y->start) - (x->start < y->start);
    return (x->series > y->series) - (x->series < y->series);
}

/* The time on se's threads that is not its turn, as disjoint spans in time order (*n): the other
 * series' iterations there, and the waits inside their loops (between two of one other series'
 * iterations with nothing begun between them on those threads), less what overlaps se's own
 * iterations (requests open at once on an event loop's thread are its turn too). A loop run in
 * blocks between other configurations' blocks (a sweep's rounds, fp32 and int8 in turn) so loses
 * the other blocks, waits included (an int8 loop read 1,726 items/s where its blocks ran at
 * 60,000-90,000, a sweep's loops 15-20% under the program's own, a fresh-eyes check); a wait
 * between two series' iterations (a pipeline's loading before each image's models) stays in
 * both. */
static struct interval *not_its_turn(const struct run_phases *p, const struct series_info *se,
                                     size_t *out_n)
{
    struct turn *t = NULL;
    size_t nt = 0, capt = 0;
    int self = (int)(se - p->series.v);
    for (int j = 0; j < p->series.n; j++) {
        const struct series_info *x = &p->series.v[j];
        if (x->end <= se->start || x->start >= se->end) continue;
        for (size_t k = 0; k < x->nits; k++) {
            if (x != se && !series_on_thread(se, x->its[k].tid)) continue;
            if (nt == capt && !(t = realloc(t, (capt = capt ? 2 * capt : 256) * sizeof *t)))
                cli_fail("out of memory");
            t[nt++] = (struct turn){x->its[k].start, x->its[k].end, j};
        }
    }
    if (nt) qsort(t, nt, sizeof *t, cmp_turn);
    struct interval *o = NULL, *own = NULL;
    size_t no = 0, capo = 0, nown = 0, capown = 0;
    for (size_t i = 0; i < nt; i++) {
        if (t[i].series == self) {
            span_add(&own, &nown, &capown, t[i].start, t[i].end);
            continue;
        }
        span_add(&o, &no, &capo, t[i].start, t[i].end);
        if (i + 1 < nt && t[i + 1].series == t[i].series) /* a wait inside its loop */
            span_add(&o, &no, &capo, t[i].end, t[i + 1].start);
    }
    free(t);
    no = intervals_merge(o, no);
    nown = intervals_merge(own, nown);
    /* o less own: each span of o cut by the own spans it meets */
    struct interval *r = NULL;
    size_t nr = 0, capr = 0, j = 0;
    for (size_t i = 0; i < no; i++) {
        int64_t a = o[i].start, b = o[i].end;
        while (j < nown && own[j].end <= a) j++;
        for (size_t q = j; q < nown && own[q].start < b && a < b; q++) {
            span_add(&r, &nr, &capr, a, own[q].start);
            if (own[q].end > a) a = own[q].end;
        }
        span_add(&r, &nr, &capr, a, b);
    }
    free(o), free(own);
    *out_n = nr;
    return r;
}

/* How much of [from, to) the disjoint spans v (time order) cover, from v[*at] on (advanced). */
static int64_t covered(const struct interval *v, size_t n, size_t *at, int64_t from, int64_t to)
{
    while (*at < n && v[*at].end <= from) (*at)++;
    int64_t c = 0;
    for (size_t i = *at; i < n && v[i].start < to; i++) {
        int64_t a = v[i].start > from ? v[i].start : from, b = v[i].end < to ? v[i].end : to;
        if (b > a) c += b - a;
    }
    return c;
}

/* The wall time of each series' steady iterations, first start to last end, less the time on its
 * threads that was not its turn (not_its_turn): two models called in turn, each one's loop is its
 * own time; a loop in blocks, its blocks. */
void series_loop_walls(struct run_phases *p)
{
    for (int i = 0; i < p->series.n; i++) {
        struct series_info *se = &p->series.v[i];
        int64_t first = -1, last = -1, n = 0;
        for (size_t k = 0; k < se->nits; k++) {
            if (!se->its[k].steady && !se->its[k].captured) continue; /* the loop ran them */
            if (first < 0) first = se->its[k].start;
            if (se->its[k].end > last) last = se->its[k].end;
            n++;
        }
        se->loop_n = n;
        se->loop_wall = n >= 2 && last > first ? last - first : 0;
        /* A pool's series (its iterations on several threads) shares them with the others at
         * once: its rate is over the wall (two models served by one pool: 2,100 and 2,495
         * items/s with the other's turns taken out, where each delivered about 1,550 over the
         * run, a fresh-eyes check). */
        if (!se->loop_wall || se->ntids > 1) continue;
        size_t nv, at = 0;
        struct interval *v = not_its_turn(p, se, &nv);
        se->loop_wall -= covered(v, nv, &at, first, last);
        free(v);
    }
}

size_t series_cycles(const struct run_phases *p, const struct series_info *s, int64_t *out)
{
    size_t n = 0, nv = 0, at = 0;
    struct interval *v = s->ntids > 1 ? NULL : not_its_turn(p, s, &nv); /* a pool's: none taken */
    int64_t prev = -1;
    for (size_t k = 0; k < s->nits; k++) {
        if (!s->its[k].steady && !s->its[k].captured) continue; /* the loop's rhythm */
        int64_t t = s->its[k].start;
        if (prev >= 0 && t > prev && n < s->nsteady) {
            int64_t c = t - prev - covered(v, nv, &at, prev, t);
            if (c > 0) out[n++] = c;
        }
        prev = t;
    }
    free(v);
    return n;
}

double series_delivered_per_s(const struct series_info *s, int *items)
{
    *items = s->items > 0;
    if (s->loop_n < 2 || s->loop_wall <= 0) return 0;
    /* Items of the loop's iterations (the captured ones too): the steady ones' mean batch. */
    double done = s->items > 0 && s->nsteady
                      ? (double)s->items / (double)s->nsteady * (double)s->loop_n
                      : (double)s->loop_n;
    return done * 1e9 / (double)s->loop_wall;
}

int series_pick(const struct run_phases *p, int phase, struct series_pick *out)
{
    memset(out, 0, sizeof *out);
    const struct series_info *v[REPORT_MAX_SERIES];
    int n = 0;
    for (int i = 0; i < p->series.n; i++) {
        const struct series_info *s = &p->series.v[i];
        if (s->phase == phase && s->nsteady && s->lat_p50 > 0) v[n++] = s;
    }
    /* The batch and model most series share: configurations of one model at one batch (two
     * models' latencies are no configurations of one thing: "TextClassifier fastest: 49.33x
     * MobileNetV3", a fresh-eyes check; its fp32 and int8 copies are). */
    int64_t at = -1;
    int best = 0, of = -1;
    for (int i = 0; i < n; i++) {
        int c = 0;
        for (int j = 0; j < n; j++)
            c += v[j]->batch == v[i]->batch && !series_families_differ(v[i], v[j]);
        if (c > best || (c == best && v[i]->batch > at)) best = c, at = v[i]->batch, of = i;
    }
    for (int i = 0; best >= 2 && i < n; i++) {
        if (v[i]->batch != at || series_families_differ(v[i], v[of])) continue;
        if (!out->fast || v[i]->lat_p50 < out->fast->lat_p50) out->fast = v[i];
        if (!out->slow || v[i]->lat_p50 > out->slow->lat_p50) out->slow = v[i];
    }
    /* Of the groups alike but for the batch with two batches or more, the one whose best batch
     * gives the most items/s (the configuration worth batching). */
    for (int i = 0; i < n; i++) {
        const struct series_info *small = NULL, *most = NULL;
        for (int j = 0; j < n; j++) {
            if (strcmp(v[j]->rest, v[i]->rest) || v[j]->batch <= 0 || series_items_per_s(v[j]) <= 0)
                continue;
            if (!small || v[j]->batch < small->batch) small = v[j];
            if (!most || series_items_per_s(v[j]) > series_items_per_s(most)) most = v[j];
        }
        int batches = 0;
        for (int j = 0; j < n; j++)
            batches += !strcmp(v[j]->rest, v[i]->rest) && v[j]->batch > 0 && small &&
                       v[j]->batch != small->batch;
        /* The smallest batch the best: against the largest one instead. */
        if (small && most == small) {
            const struct series_info *largest = small;
            for (int j = 0; j < n; j++)
                if (!strcmp(v[j]->rest, v[i]->rest) && v[j]->batch > largest->batch &&
                    series_items_per_s(v[j]) > 0)
                    largest = v[j];
            small = largest;
        }
        if (small && most && batches &&
            (!out->most || series_items_per_s(most) > series_items_per_s(out->most))) {
            out->small = small, out->most = most, out->next = NULL;
            out->items_ratio = series_items_per_s(most) / series_items_per_s(small);
            for (int j = 0; j < n; j++) /* the runner-up: does the best batch pay? */
                if (v[j] != most && !strcmp(v[j]->rest, v[i]->rest) && v[j]->batch > 0 &&
                    v[j]->batch != most->batch && series_items_per_s(v[j]) > 0 &&
                    (!out->next || series_items_per_s(v[j]) > series_items_per_s(out->next)))
                    out->next = v[j];
        }
    }
    return out->fast || out->most;
}

int64_t series_captured_as(const struct series_info *s, int64_t lat)
{
    return s && s->capture_f > 1 ? (int64_t)((double)lat / s->capture_f) : lat;
}

size_t series_steady_latencies(const struct series_info *s, int64_t *out)
{
    size_t n = 0;
    for (size_t k = 0; k < s->nits; k++) {
        int64_t lat = s->its[k].end - s->its[k].start;
        if (s->its[k].steady)
            out[n++] = lat;
        else if (s->its[k].captured)
            out[n++] = series_captured_as(s, lat);
    }
    return n;
}
