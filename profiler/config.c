/*
 * config.c: the core's settings and the reader of every group of settings (the core's, each
 * collector's). Shared by the preloaded library (which reads the environment once, at start) and
 * the `infprof` CLI (which prints the tables).
 */
#include "config.h"
#include "log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* clang-format off */
static const struct ip_cfg_entry entries[IP_CFG_COUNT] = {
    [IP_CFG_ENABLE] = {"INFPROF_ENABLE", IP_CFG_BOOL, "1", 0, 1, NULL,
        "Master switch: 0 leaves the program completely alone.", NULL},
    [IP_CFG_MODE] = {"INFPROF_MODE", IP_CFG_ENUM, "default", 0, 0, "default|full",
        "'default' records what the report needs at the least cost (docs/performance.md);"
        " 'full' adds every CUDA API call (INFPROF_CUDA_API=1) and an NVTX range per cuDNN call"
        " (INFPROF_CUDNN_NVTX=1), unless those are set themselves.", NULL},
    [IP_CFG_OUTPUT] = {"INFPROF_OUTPUT", IP_CFG_STR, "", 0, 0, NULL,
        "Database path; %p pid, %h host, %% a percent sign. Unset: infprof.db, then infprof-2.db,"
        " ... An existing file is never overwritten (a warning and a fresh name instead).", NULL},
    [IP_CFG_LOG] = {"INFPROF_LOG", IP_CFG_INT, "1", 0, 3, NULL,
        "Messages on stderr: 0 none, 1 warnings (default), 2 info, 3 debug.", NULL},
    [IP_CFG_FORK] = {"INFPROF_FORK", IP_CFG_ENUM, "child", 0, 0, "child|off",
        "A forked child: 'child' profiles it into its own file (NAME-PID.db, created on its first"
        " event), 'off' stops profiling in the child. It never writes the parent's database.",
        NULL},
    [IP_CFG_FOLLOW_EXEC] = {"INFPROF_FOLLOW_EXEC", IP_CFG_BOOL, "1", 0, 1, NULL,
        "Programs the profiled process executes are profiled too, each into NAME-PID.db.", NULL},
    [IP_CFG_BUFFER_MB] = {"INFPROF_BUFFER_MB", IP_CFG_INT, "256", 4, 4096, NULL,
        "Memory for every thread's event buffers together, MiB. A thread's buffer starts at"
        " 16 KiB and grows while the writer is behind; pages are used only as they fill.", NULL},
    [IP_CFG_BUFFER_WAIT_MS] = {"INFPROF_BUFFER_WAIT_MS", IP_CFG_INT, "100", 0, 10000, NULL,
        "When the buffers are full, a thread waits for the writer while it drains; an event is"
        " dropped (counted by phase, shown) only once the writer has been silent this long, ms,"
        " or after ten times this in all. 0: never wait.", NULL},
    [IP_CFG_FLUSH_MS] = {"INFPROF_FLUSH_MS", IP_CFG_INT, "100", 1, 1000, NULL,
        "Writer period, ms: how often buffers are drained (the database is committed at least"
        " every second).", NULL},
    [IP_CFG_FINISH_TIMEOUT_MS] = {"INFPROF_FINISH_TIMEOUT_MS", IP_CFG_INT, "10000", 100,
        600000, NULL, "Longest wait at exit for the last events to be written, ms (100 ms at most"
        " on a fatal signal: the process dies on time, the database keeps its last commit).", NULL},
    [IP_CFG_DISK_RESERVE_MB] = {"INFPROF_DISK_RESERVE_MB", IP_CFG_INT, "256", 0, 1 << 20, NULL,
        "Free space, MiB, that infprof leaves on the disk of its database for the program: it"
        " does not start below twice this, and stops recording (counted, shown) below it.", NULL},
    [IP_CFG_ITERATION_RANGE] = {"INFPROF_ITERATION_RANGE", IP_CFG_STR, "iteration*", 0, 0, NULL,
        "Glob (* and ?) for NVTX ranges and record_function scopes that mark one iteration;"
        " 'batch=N' in the name gives the batch size. Empty: none.", NULL},
    [IP_CFG_BATCH] = {"INFPROF_BATCH", IP_CFG_INT, "0", 0, 1000000000, NULL,
        "Items per iteration, for items/s (0: unknown, unless the range text says batch=N).", NULL},
    [IP_CFG_NVTX_EMIT] = {"INFPROF_NVTX_EMIT", IP_CFG_BOOL, "1", 0, 1, NULL,
        "Emit one NVTX range per phase in domain 'infprof' (seen by Nsight Systems).", NULL},
    [IP_CFG_CLOCK] = {"INFPROF_CLOCK", IP_CFG_ENUM, "auto", 0, 0, "auto|gettime",
        "How events are timed (CLOCK_MONOTONIC either way). 'auto': the TSC through a line the"
        " writer keeps on CLOCK_MONOTONIC, where the kernel's clocksource is the TSC (about 10 ns"
        " a reading instead of 21); 'gettime': clock_gettime always.", NULL},
};
/* clang-format on */

static struct ip_cfg_value values[IP_CFG_COUNT];

const struct ip_cfg_group ip_cfg_core = {"core", entries, values, IP_CFG_COUNT};

static int parse_bool(const char *s, int64_t *out)
{
    static const char *const yes[] = {"1", "yes", "true", "on"};
    static const char *const no[] = {"0", "no", "false", "off"};
    for (unsigned i = 0; i < 4; i++) {
        if (strcasecmp(s, yes[i]) == 0) return *out = 1, 0;
        if (strcasecmp(s, no[i]) == 0) return *out = 0, 0;
    }
    return -1;
}

static int parse_enum(const char *choices, const char *s, int64_t *out)
{
    size_t len = strlen(s);
    int64_t index = 0;
    for (const char *p = choices; *p; index++) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t)(bar - p) : strlen(p);
        if (n == len && strncasecmp(p, s, n) == 0) return *out = index, 0;
        if (!bar) break;
        p = bar + 1;
    }
    return -1;
}

/* "12", "0.25", ".5", "1.125", " 0.2500": thousandths; blanks before it as a whole number may
 * have them, no sign or exponent, nothing but zeros past the third place. */
static int parse_milli(const char *s, int64_t *out)
{
    int64_t v = 0;
    int digits = 0, places = -1; /* places: -1 before the point */
    while (*s == ' ' || *s == '\t') s++;
    for (; *s; s++) {
        if (*s == '.' && places < 0) {
            places = 0;
            continue;
        }
        if (places >= 3 && *s == '0') continue;
        if (*s < '0' || *s > '9' || places >= 3 || v > 1000000000) return -1;
        v = v * 10 + (*s - '0');
        digits++;
        if (places >= 0) places++;
    }
    if (!digits) return -1;
    for (places = places < 0 ? 0 : places; places < 3; places++) v *= 10;
    *out = v;
    return 0;
}

int ip_cfg_entry_parse(const struct ip_cfg_entry *e, const char *text, int64_t *num_out)
{
    int64_t v = 0;
    switch (e->type) {
    case IP_CFG_BOOL:
        if (parse_bool(text, &v) != 0) return -1;
        break;
    case IP_CFG_ENUM:
        if (parse_enum(e->choices, text, &v) != 0) return -1;
        break;
    case IP_CFG_INT: {
        char *end;
        errno = 0;
        long long n = strtoll(text, &end, 10);
        if (errno || end == text || *end || n < e->min || n > e->max) return -1;
        v = n;
        break;
    }
    case IP_CFG_MILLI:
        if (parse_milli(text, &v) != 0 || v < e->min || v > e->max) return -1;
        break;
    case IP_CFG_STR:
        break;
    }
    if (num_out) *num_out = v;
    return 0;
}

static void cfg_warn_bad(const struct ip_cfg_entry *e, const char *value)
{
    switch (e->type) {
    case IP_CFG_BOOL:
        ip_warn("%s='%.64s' is not 0 or 1; using the default %s", e->name, value, e->dflt);
        break;
    case IP_CFG_INT:
        ip_warn("%s='%.64s' is not a whole number in %lld..%lld; using the default %s", e->name,
                value, (long long)e->min, (long long)e->max, e->dflt);
        break;
    case IP_CFG_ENUM:
        ip_warn("%s='%.64s' is not one of %s; using the default %s", e->name, value, e->choices,
                e->dflt);
        break;
    case IP_CFG_MILLI:
        ip_warn("%s='%.64s' is not a number in %g..%g with at most 3 decimals; using the default"
                " %s",
                e->name, value, (double)e->min / 1000, (double)e->max / 1000, e->dflt);
        break;
    case IP_CFG_STR:
        break;
    }
}

static void cfg_read(const struct ip_cfg_group *g, int i)
{
    const struct ip_cfg_entry *e = &g->entries[i];
    struct ip_cfg_value *v = &g->values[i];
    const char *value = getenv(e->name);
    v->present = value != NULL;
    v->text = value ? value : e->dflt;
    ip_cfg_entry_parse(e, e->dflt, &v->num);
    if (value && e->type != IP_CFG_STR && ip_cfg_entry_parse(e, value, &v->num) != 0) {
        cfg_warn_bad(e, value);
        v->text = e->dflt;
    }
    /* Full mode: the costlier records too, unless the program's environment says otherwise. */
    if (e->full && !v->present && values[IP_CFG_MODE].num == 1 &&
        ip_cfg_entry_parse(e, e->full, &v->num) == 0)
        v->text = e->full;
}

void ip_cfg_load(void)
{
    /* INFPROF_LOG first, so that warnings about the others honour it; INFPROF_MODE before the
     * settings it changes. */
    cfg_read(&ip_cfg_core, IP_CFG_LOG);
    ip_log_set_level((int)values[IP_CFG_LOG].num);
    for (int i = 0; i < IP_CFG_COUNT; i++)
        if (i != IP_CFG_LOG) cfg_read(&ip_cfg_core, i);
}

void ip_cfg_group_load(const struct ip_cfg_group *g)
{
    for (int i = 0; g && i < g->n; i++) cfg_read(g, i);
}

int64_t ip_cfg_entry_env(const struct ip_cfg_entry *e)
{
    const char *v = getenv(e->name);
    int64_t n = 0;
    if (!v || ip_cfg_entry_parse(e, v, &n) != 0) ip_cfg_entry_parse(e, e->dflt, &n);
    return n;
}

int64_t ip_cfg_group_int(const struct ip_cfg_group *g, int id)
{
    return g->values[id].num;
}

const char *ip_cfg_group_str(const struct ip_cfg_group *g, int id)
{
    return g->values[id].text ? g->values[id].text : g->entries[id].dflt;
}

int ip_cfg_group_is_set(const struct ip_cfg_group *g, int id)
{
    return g->values[id].present;
}

int ip_cfg_parse(enum ip_cfg_id id, const char *text, int64_t *num_out)
{
    return ip_cfg_entry_parse(&entries[id], text, num_out);
}

int64_t ip_cfg_int(enum ip_cfg_id id)
{
    return ip_cfg_group_int(&ip_cfg_core, id);
}

const char *ip_cfg_str(enum ip_cfg_id id)
{
    return ip_cfg_group_str(&ip_cfg_core, id);
}

int ip_cfg_is_set(enum ip_cfg_id id)
{
    return ip_cfg_group_is_set(&ip_cfg_core, id);
}
