/*
 * settings.c: the libtorch settings each iteration ran with (table settings, schema 4: each
 * change the program made to cudnn.benchmark, cudnn.allow_tf32 or the float32 matmul precision;
 * collectors/torch_settings.c). A setting whose value differs between the run's iterations tells
 * series apart ("batch=8 cudnn.benchmark=on"); one every iteration ran with the same set value is
 * said once, in the run header. Before the program sets one, it has libtorch's default (the same
 * in 1.13 and 2.x): cudnn.benchmark off, cudnn.allow_tf32 on, matmul.precision highest.
 */
#include "run.h"

#include <sqlite3.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAMES 8

struct change {
    int64_t t;
    int name;
    char value[16];
};

struct log {
    int nnames;
    char name[NAMES][32];
    char deflt[NAMES][16];
    size_t n;
    struct change *v;
    const char *(*after)[NAMES]; /* every setting's value after change i */
};

static const char *default_of(const char *name)
{
    if (!strcmp(name, "cudnn.benchmark")) return "off";
    if (!strcmp(name, "cudnn.allow_tf32")) return "on";
    if (!strcmp(name, "matmul.precision")) return "highest";
    return "default";
}

static void log_load(sqlite3 *db, struct log *l)
{
    memset(l, 0, sizeof *l);
    if (!db_has_table(db, "settings")) return;
    size_t cap = (size_t)db_int(db, "SELECT count(*) FROM settings", 0);
    if (!cap) return;
    l->v = calloc(cap, sizeof *l->v);
    if (!l->v) cli_fail("out of memory");
    sqlite3_stmt *st =
        db_prepare(db, "SELECT t, n.value, v.value FROM settings"
                       " JOIN strings n ON n.id = name_id"
                       " JOIN strings v ON v.id = value_id ORDER BY t, settings.rowid");
    while (db_step(st) && l->n < cap) {
        const char *name = (const char *)sqlite3_column_text(st, 1);
        const char *value = (const char *)sqlite3_column_text(st, 2);
        if (!name || !value) continue;
        int k = 0;
        while (k < l->nnames && strcmp(l->name[k], name)) k++;
        if (k == l->nnames) {
            if (k == NAMES) continue; /* more names than this reader knows of: left out */
            snprintf(l->name[k], sizeof l->name[k], "%s", name);
            snprintf(l->deflt[k], sizeof l->deflt[k], "%s", default_of(name));
            l->nnames++;
        }
        struct change *c = &l->v[l->n++];
        c->t = sqlite3_column_int64(st, 0);
        c->name = k;
        snprintf(c->value, sizeof c->value, "%s", value);
    }
    sqlite3_finalize(st);
    l->after = calloc(l->n ? l->n : 1, sizeof *l->after);
    if (!l->after) cli_fail("out of memory");
    for (size_t i = 0; i < l->n; i++) {
        for (int k = 0; k < l->nnames; k++) l->after[i][k] = i ? l->after[i - 1][k] : l->deflt[k];
        l->after[i][l->v[i].name] = l->v[i].value;
    }
}

/* The settings an iteration [a, b] ran with (pointers into l): those in effect at its middle.
 * A program that changes one inside the mark (`with torch.backends.cudnn.flags(...)` around the
 * forward sets all four of its settings just after the start and restores them just before the
 * end) ran the forward with those; one that changes them between iterations, with the ones set
 * before. */
static void values_at(const struct log *l, int64_t a, int64_t b, const char **out)
{
    int64_t t = a + (b - a) / 2;
    /* the first change after t */
    size_t lo = rstats_upper_i64(l->v, l->n, sizeof *l->v, offsetof(struct change, t), t);
    for (int k = 0; k < l->nnames; k++) out[k] = lo ? l->after[lo - 1][k] : l->deflt[k];
}

static void append(char *out, size_t n, const char *name, const char *value)
{
    size_t o = strlen(out);
    if (o < n) snprintf(out + o, n - o, "%s%s=%s", o ? " " : "", name, value);
}

void settings_of_iterations(sqlite3 *db, const int64_t *start, const int64_t *end, size_t n,
                            int *combo, struct run_settings *s)
{
    memset(s, 0, sizeof *s);
    for (size_t k = 0; k < n; k++) combo[k] = 0;
    struct log l;
    log_load(db, &l);
    if (!l.n) {
        free(l.v);
        free(l.after);
        return;
    }
    const char *first[NAMES], *now[NAMES];
    int varies[NAMES] = {0}, set_before[NAMES] = {0};
    if (n) values_at(&l, start[0], end[0], first);
    for (size_t k = 1; k < n; k++) {
        values_at(&l, start[k], end[k], now);
        for (int j = 0; j < l.nnames; j++) varies[j] |= strcmp(now[j], first[j]) != 0;
    }
    /* A setting set by the middle of the first iteration (or at all, in a run without any). */
    for (size_t i = 0; i < l.n; i++)
        if (!n || l.v[i].t <= start[0] + (end[0] - start[0]) / 2) set_before[l.v[i].name] = 1;
    if (!n) values_at(&l, INT64_MAX, INT64_MAX, first); /* the end of the run */
    for (int j = 0; j < l.nnames; j++) {
        if (varies[j]) {
            size_t o = strlen(s->varying);
            snprintf(s->varying + o, sizeof s->varying - o, "%s%s", o ? ", " : "", l.name[j]);
        } else if (set_before[j])
            append(s->constant, sizeof s->constant, l.name[j], first[j]);
    }
    for (size_t k = 0; k < n; k++) {
        char text[SETTINGS_TEXT] = "";
        values_at(&l, start[k], end[k], now);
        for (int j = 0; j < l.nnames; j++)
            if (varies[j]) append(text, sizeof text, l.name[j], now[j]);
        if (!text[0]) continue;
        int c = 0;
        while (c < s->n && strcmp(s->combo[c], text)) c++;
        if (c == s->n) {
            if (c == SETTINGS_MAX_COMBOS) continue; /* counted in none: told apart by label only */
            snprintf(s->combo[c], sizeof s->combo[c], "%s", text);
            s->n++;
        }
        combo[k] = c + 1;
    }
    free(l.v);
    free(l.after);
}
