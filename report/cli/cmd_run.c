/*
 * cmd_run.c: `infprof run [-o FILE] [--force] [--] PROGRAM [ARGS]`: profile a program.
 *
 * Sets LD_PRELOAD (prepended to any the caller has) and INFPROF_OUTPUT, runs the program, and
 * returns its exit status (128+N when signal N killed it). The output file is checked before the
 * program starts: an existing one is an error unless --force, an unwritable directory is an error.
 * Afterwards the program's exit status is written into the database and its path printed on
 * stderr, with the databases of any programs it executed.
 */
#include "commands.h"
#include "../base/cli.h"
#include "../base/db.h"
#include "../base/table.h"
#include "../../profiler/output.h"
#include "run_asan.h"

#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void run_usage(FILE *out)
{
    fprintf(
        out,
        "usage: infprof run [-o FILE] [--force] [--] PROGRAM [ARGS...]\n\n"
        "Profile PROGRAM into an SQLite database (default infprof.db, then infprof-2.db, ...).\n"
        "  -o FILE    the database (%%p pid, %%h host); an existing FILE is an error\n"
        "  --force    overwrite an existing FILE\n"
        "Settings come from INFPROF_* variables: see 'infprof info'.\n");
}

static void find_library(char *out, size_t n)
{
    const char *env = getenv("INFPROF_LIB");
    if (env && *env) {
        if (access(env, R_OK) != 0) cli_fail("INFPROF_LIB=%s: %s", env, strerror(errno));
        snprintf(out, n, "%s", env);
        return;
    }
    const char *dir = cli_self_dir();
    const char *tries[] = {"%s/../lib/libinfprof.so", "%s/libinfprof.so"};
    for (int i = 0; i < 2; i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, tries[i], dir);
        if (realpath(path, out) && access(out, R_OK) == 0) return;
    }
    cli_fail("cannot find libinfprof.so (looked in %s/../lib); set INFPROF_LIB to its path", dir);
}

static void remove_db(const char *path)
{
    char side[PATH_MAX + 8];
    unlink(path);
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
}

static void check_output(const char *path, int force)
{
    struct stat st;
    if (stat(path, &st) == 0) {
        if (!force)
            cli_fail("%s exists; choose another name with -o, or add --force to overwrite it",
                     path);
        if (S_ISDIR(st.st_mode)) cli_fail("%s is a directory", path);
        remove_db(path);
    }
    char copy[PATH_MAX];
    snprintf(copy, sizeof copy, "%s", path);
    const char *dir = dirname(copy);
    if (access(dir, W_OK) != 0)
        cli_fail("cannot write %s: directory %s: %s (choose another path with -o)", path, dir,
                 strerror(errno));
}

/* Record the program's exit status in its database. */
static void note_exit(const char *path, int status)
{
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK) {
        sqlite3_busy_timeout(db, 2000);
        char sql[128];
        snprintf(sql, sizeof sql,
                 "INSERT OR REPLACE INTO meta(key, value) VALUES ('exit_status', %d)", status);
        sqlite3_exec(db, sql, NULL, NULL, NULL);
    }
    sqlite3_close(db);
}

/* Databases of the programs it ran: STEM-PID.EXT next to the main one, written since start. */
static int child_databases(const char *path, time_t since, char *list, size_t n)
{
    char copy[PATH_MAX], base_copy[PATH_MAX];
    snprintf(copy, sizeof copy, "%s", path);
    snprintf(base_copy, sizeof base_copy, "%s", path);
    const char *dir = dirname(copy), *base = basename(base_copy);
    const char *dot = strrchr(base, '.');
    size_t stem = dot && dot != base ? (size_t)(dot - base) : strlen(base);
    const char *ext = dot && dot != base ? dot : "";
    DIR *d = opendir(dir);
    if (!d) return 0;
    int count = 0;
    size_t o = 0;
    list[0] = 0;
    for (struct dirent *e; (e = readdir(d));) {
        const char *name = e->d_name;
        if (strncmp(name, base, stem) != 0 || name[stem] != '-') continue;
        const char *p = name + stem + 1;
        if (*p < '0' || *p > '9') continue;
        while (*p >= '0' && *p <= '9') p++;
        if (strcmp(p, ext) != 0) continue;
        char full[PATH_MAX * 2];
        struct stat st;
        snprintf(full, sizeof full, "%s/%s", dir, name);
        if (stat(full, &st) != 0 || st.st_mtime < since) continue;
        if (count < 3 && o + strlen(name) + 3 < n)
            o += (size_t)snprintf(list + o, n - o, "%s%s", count ? ", " : "", name);
        count++;
    }
    closedir(d);
    return count;
}

int cmd_run(int argc, char **argv)
{
    const char *output = NULL;
    int force = 0, i = 1;
    for (; i < argc; i++) {
        if (!strcmp(argv[i], "--")) {
            i++;
            break;
        }
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            run_usage(stdout);
            return 0;
        }
        if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) {
            if (++i == argc) cli_fail("-o needs a file name");
            output = argv[i];
        } else if (!strncmp(argv[i], "--output=", 9)) {
            output = argv[i] + 9;
        } else if (!strcmp(argv[i], "--force")) {
            force = 1;
        } else if (argv[i][0] == '-') {
            cli_fail("unknown option '%s' (try 'infprof run --help')", argv[i]);
        } else {
            break;
        }
    }
    if (i >= argc) cli_fail("no program to run (usage: infprof run [-o FILE] [--] PROGRAM)");
    if (!output) output = getenv("INFPROF_OUTPUT");
    if (output && !*output) output = NULL;

    char lib[PATH_MAX], path[PATH_MAX];
    find_library(lib, sizeof lib);
    int pattern = output && strchr(output, '%');
    if (!output) {
        snprintf(path, sizeof path, "infprof.db");
        if (access(path, F_OK) == 0 && ip_output_fresh_name("infprof.db", path, sizeof path) != 0)
            cli_fail("cannot find a free name next to infprof.db; use -o");
        check_output(path, 0);
    } else if (!pattern) {
        snprintf(path, sizeof path, "%s", output);
        check_output(path, force);
    } else {
        snprintf(path, sizeof path, "%s", output);
    }

    time_t started = time(NULL);
    /* An AddressSanitizer program needs its runtime first, before us. */
    char asan[PATH_MAX];
    int with_asan = run_asan_runtime(argv[i], asan, sizeof asan) == 0;
    if (with_asan)
        fprintf(stderr, "infprof: %s is built with AddressSanitizer: preloading %s first\n",
                argv[i], asan);
    pid_t pid = fork();
    if (pid < 0) cli_fail("cannot fork: %s", strerror(errno));
    if (pid == 0) {
        const char *old = getenv("LD_PRELOAD");
        char preload[PATH_MAX * 3];
        snprintf(preload, sizeof preload, "%s%s%s%s%s", with_asan ? asan : "", with_asan ? ":" : "",
                 lib, old && *old ? ":" : "", old ? old : "");
        setenv("LD_PRELOAD", preload, 1);
        setenv("INFPROF_OUTPUT", path, 1);
        unsetenv("INFPROF_SESSION");
        execvp(argv[i], argv + i);
        fprintf(stderr, "infprof: cannot run %s: %s\n", argv[i], strerror(errno));
        _exit(errno == ENOENT ? 127 : 126);
    }
    /* Like a shell waiting for a job: the keyboard's signals are for the program. */
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);

    char final[PATH_MAX];
    if (pattern) {
        if (ip_output_expand(path, (int)pid, final, sizeof final) != 0) final[0] = 0;
    } else {
        snprintf(final, sizeof final, "%s", path);
    }
    struct stat st;
    if (!final[0] || stat(final, &st) != 0 || st.st_size == 0) {
        fprintf(stderr, "infprof: no database was written for %s (see the messages above)\n",
                argv[i]);
        return code;
    }
    note_exit(final, code);
    /* The nsys-named views' kernel names (demangled, base): SQL for nsys runs as is. */
    char err[256];
    int names;
    if (views_write(final, &names, err, sizeof err) != 0)
        fprintf(stderr,
                "infprof: the kernel names of the nsys views were not filled in (%s);"
                " 'infprof views %s' does it\n",
                err, final);
    char children[512];
    int nchild = child_databases(final, started, children, sizeof children);
    if (nchild)
        fprintf(stderr,
                "infprof: wrote %s (and %d for programs it ran: %s%s); read it with:"
                " infprof report %s\n",
                final, nchild, children, nchild > 3 ? ", ..." : "", final);
    else
        fprintf(stderr, "infprof: wrote %s; read it with: infprof report %s\n", final, final);
    return code;
}
