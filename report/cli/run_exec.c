/*
 * run_exec.c: a program that replaces itself (a launcher script such as pyenv's shims, `env`, a
 * shell's `exec`) writes one database per image of its process: the first one ends "by exec",
 * and what the user ran (python app.py) is in the image that ended by exit or signal. `infprof
 * run` names that one, and writes the exit status there.
 */
#include "run_exec.h"

#include <dirent.h>
#include <libgen.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* A database's process and how its image ended ("" unknown). 0 when readable. */
static int exec_facts(const char *path, long long *pid, char *end, size_t n)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int ok = -1;
    *pid = -1, end[0] = 0;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, "SELECT key, value FROM meta WHERE key IN ('pid', 'end_reason')", -1,
                           &st, NULL) == SQLITE_OK) {
        while (sqlite3_step(st) == SQLITE_ROW) {
            const char *k = (const char *)sqlite3_column_text(st, 0);
            if (k && !strcmp(k, "pid")) *pid = sqlite3_column_int64(st, 1);
            const unsigned char *v = sqlite3_column_text(st, 1);
            if (k && !strcmp(k, "end_reason") && v) snprintf(end, n, "%s", (const char *)v);
        }
        ok = 0;
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return ok;
}

struct exec_best {
    pid_t pid;
    int execs;
    time_t mtime;
    char *out;
    size_t n;
    int found;
};

static void exec_consider(struct exec_best *b, const char *path)
{
    long long pid;
    char end[32];
    struct stat st;
    if (stat(path, &st) != 0 || exec_facts(path, &pid, end, sizeof end) != 0 || pid != b->pid)
        return;
    if (!strcmp(end, "exec")) {
        b->execs++;
        return;
    }
    if (b->found && st.st_mtime < b->mtime) return;
    snprintf(b->out, b->n, "%s", path);
    b->mtime = st.st_mtime, b->found = 1;
}

int run_exec_last(const char *first, pid_t pid, char (*listed)[PATH_MAX], int nlisted, char *out,
                  size_t n, int *execs)
{
    long long first_pid;
    char end[32];
    if (exec_facts(first, &first_pid, end, sizeof end) != 0 || strcmp(end, "exec") != 0) return 0;
    struct exec_best b = {pid, 1, 0, out, n, 0};
    for (int i = 0; i < nlisted; i++)
        if (strcmp(listed[i], first) != 0) exec_consider(&b, listed[i]);
    /* And the images' own names beside it, STEM-PID.EXT and STEM-PID-K.EXT, listed or not. */
    char copy[PATH_MAX], base_copy[PATH_MAX], prefix[PATH_MAX + 32];
    snprintf(copy, sizeof copy, "%s", first);
    snprintf(base_copy, sizeof base_copy, "%s", first);
    const char *dir = dirname(copy), *base = basename(base_copy);
    const char *dot = strrchr(base, '.');
    int stem = dot && dot != base ? (int)(dot - base) : (int)strlen(base);
    snprintf(prefix, sizeof prefix, "%.*s-%d", stem, base, (int)pid);
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t k = strlen(prefix);
        if (strncmp(e->d_name, prefix, k) != 0 || (e->d_name[k] != '.' && e->d_name[k] != '-'))
            continue;
        char full[PATH_MAX * 2];
        snprintf(full, sizeof full, "%s/%s", dir, e->d_name);
        int seen = 0;
        for (int i = 0; i < nlisted && !seen; i++) seen = !strcmp(listed[i], full);
        if (!seen && strcmp(full, first) != 0) exec_consider(&b, full);
    }
    if (d) closedir(d);
    *execs = b.execs;
    return b.found;
}
