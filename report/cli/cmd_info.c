/*
 * cmd_info.c: `infprof info`: every INFPROF_* setting with its default and meaning (from the
 * library's own configuration table), or, given a database, its metadata and schema version.
 */
#include "../../collectors/registry.h"
#include "../sections/advice.h"
#include "../base/cli.h"
#include "../base/db.h"
#include "../base/table.h"
#include "../../profiler/config.h"
#include "../../profiler/runinfo.h"

#include <sqlite3.h>
#include <string.h>

static void print_wrapped(const char *text, int indent, int width)
{
    int col = indent;
    printf("%*s", indent, "");
    const char *p = text;
    while (*p) {
        const char *space = strchr(p, ' ');
        int len = space ? (int)(space - p) : (int)strlen(p);
        if (col > indent && col + 1 + len > width) {
            printf("\n%*s", indent, "");
            col = indent;
        } else if (col > indent) {
            putchar(' ');
            col++;
        }
        printf("%.*s", len, p);
        col += len;
        p += len;
        while (*p == ' ') p++;
    }
    putchar('\n');
}

static void info_group(const struct ip_cfg_group *g)
{
    for (int i = 0; i < g->n; i++) {
        const struct ip_cfg_entry *e = &g->entries[i];
        const char *type = e->type == IP_CFG_BOOL    ? "0|1"
                           : e->type == IP_CFG_ENUM  ? e->choices
                           : e->type == IP_CFG_STR   ? "text"
                           : e->type == IP_CFG_MILLI ? "decimal"
                                                     : "number";
        printf("%s=%s  (%s)\n", e->name, *e->dflt ? e->dflt : "\"\"", type);
        print_wrapped(e->doc, 4, 100);
    }
}

/* The core's settings, then each collector's (its descriptor names them: collector.h). */
static int info_settings(void)
{
    printf("infprof %s settings (environment variables; 'infprof run' passes them on):\n\n",
           INFPROF_VERSION);
    info_group(&ip_cfg_core);
    for (int i = 0; i < IP_COLLECTOR_COUNT; i++) {
        const struct ip_collector *c = ip_collectors[i];
        if (!c || !c->settings) continue;
        printf("\n%s (collector '%s'):\n", c->title, c->name);
        info_group(c->settings);
    }
    return 0;
}

static int info_database(const char *path)
{
    sqlite3 *db = db_open(path);
    char buf[4096];
    fmt_escape(buf, sizeof buf, path); /* a file name may hold anything */
    printf("%s: infprof database, schema version %lld (this infprof reads up to %d)\n\n", buf,
           (long long)db_int(db, "PRAGMA user_version", 0), INFPROF_SCHEMA_VERSION);
    sqlite3_stmt *st = db_prepare(db, "SELECT key, value FROM meta ORDER BY key");
    while (db_step(st)) {
        fmt_escape(buf, sizeof buf, (const char *)sqlite3_column_text(st, 1));
        printf("  %-32s %s\n", (const char *)sqlite3_column_text(st, 0), buf);
    }
    sqlite3_finalize(st);
    printf("\nrows:\n");
    st = db_prepare(db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
    while (db_step(st)) {
        char sql[256];
        snprintf(sql, sizeof sql, "SELECT count(*) FROM \"%s\"", sqlite3_column_text(st, 0));
        printf("  %-32s %lld\n", (const char *)sqlite3_column_text(st, 0),
               (long long)db_int(db, sql, 0));
    }
    sqlite3_finalize(st);
    db_close(db);
    return 0;
}

/* The advice rules, by their rank on the first screen, with when each fires. */
static int info_rules(void)
{
    static const char *const stages[] = {
        [ADVICE_BEFORE] = "run", [ADVICE_PHASE] = "phase", [ADVICE_AFTER] = "run"};
    printf("infprof %s advice rules, by their rank on the first screen (per phase or per run;\n"
           "docs/report.md, \"Advice\", has the details):\n\n",
           INFPROF_VERSION);
    int done[64] = {0}, n = advice_rule_count < 64 ? advice_rule_count : 64;
    for (int shown = 0; shown < n; shown++) {
        int best = -1;
        for (int i = 0; i < n; i++)
            if (!done[i] && (best < 0 || advice_rules[i]->rank < advice_rules[best]->rank))
                best = i;
        done[best] = 1;
        const struct advice_rule *r = advice_rules[best];
        printf("%3d  %s (%s)\n", r->rank, r->name, stages[r->stage]);
        print_wrapped(r->when, 5, 100);
    }
    return 0;
}

int cmd_info(int argc, char **argv)
{
    int help = 0;
    for (int i = 1; i < argc; i++) help |= !strcmp(argv[i], "--help") || !strcmp(argv[i], "-h");
    if (help) {
        printf("usage: infprof info [DATABASE | --rules]\n\n"
               "Without a database: every INFPROF_* setting, its default and meaning.\n"
               "With one: its metadata, schema version and row counts.\n"
               "--rules: the advice rules, their rank on the first screen and when each fires.\n");
        return 0;
    }
    if (argc == 2 && !strcmp(argv[1], "--rules")) return info_rules();
    if (argc > 2)
        cli_fail("info takes one database or --rules, not both nor more (try 'infprof info"
                 " --help')");
    if (argc == 2) {
        if (argv[1][0] == '-') cli_fail("unknown option '%s' (try 'infprof info --help')", argv[1]);
        return info_database(argv[1]);
    }
    return info_settings();
}
