/*
 * advice_build.c: what the advice rules (advice_rules.c) build findings with (advice.h): a new
 * finding, its evidence as JSON members, and the wording helpers.
 */
#include "advice.h"
#include "../base/json.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct advice *advice_add(struct advice_list *l, const char *rule, const struct phase_info *ph)
{
    if (l->n == (int)(sizeof l->v / sizeof l->v[0])) return NULL;
    struct advice *a = &l->v[l->n++];
    memset(a, 0, sizeof *a);
    a->rule = rule;
    a->phase = ph;
    a->saving_ns = a->saving_bytes = -1;
    return a;
}

/* Append to out, all or nothing: a member that does not fit is left out whole, so evidence stays
 * valid JSON and sentences never end mid-word. Returns whether it was appended. */
int advice_append(char *out, size_t n, const char *fmt, ...)
{
    size_t len = strlen(out);
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(out + len, n - len, fmt, ap);
    va_end(ap);
    if (w >= 0 && (size_t)w < n - len) return 1;
    out[len] = 0;
    return 0;
}

/* Evidence members: `"key": value`, comma-separated, inside braces added at the end. */
void advice_ev_int(struct advice *a, const char *key, int64_t v)
{
    advice_append(a->evidence, sizeof a->evidence, "%s\"%s\": %lld", a->evidence[0] ? ", " : "",
                  key, (long long)v);
}

void advice_ev_num(struct advice *a, const char *key, double v)
{
    advice_append(a->evidence, sizeof a->evidence, "%s\"%s\": %.6g", a->evidence[0] ? ", " : "",
                  key, v);
}

void advice_ev_text(struct advice *a, const char *key, const char *s)
{
    size_t len;
    char *q = json_quote(s, strlen(s), &len);
    if (!q) cli_fail("out of memory");
    advice_append(a->evidence, sizeof a->evidence, "%s\"%s\": %s", a->evidence[0] ? ", " : "", key,
                  q);
    free(q);
}

const char *advice_ns_text(char *buf, size_t n, double ns)
{
    fmt_ns(buf, n, ns);
    return buf;
}

const char *advice_bytes_text(char *buf, size_t n, double b)
{
    fmt_bytes(buf, n, b);
    return buf;
}

const char *advice_series_name(const struct run_phases *p, const struct series_info *s, char *buf,
                               size_t n)
{
    char label[32];
    phase_short_label(&p->v[s->phase], label, sizeof label);
    snprintf(buf, n, "%s%s%s", label, s->name[0] ? " " : "", s->name);
    return buf;
}

double advice_pct(int64_t part, int64_t whole)
{
    return whole > 0 ? 100.0 * (double)part / (double)whole : 0;
}

/* "1 copy", "2 copies". */
const char *advice_plural(int64_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

int advice_has(const char *s, const char *word)
{
    return strstr(s, word) != NULL;
}

/* ---- tables ------------------------------------------------------------------------------- */

/* Greedy word wrap of `s` into rows of the view, each at most `width` characters after
 * `indent` spaces. */
