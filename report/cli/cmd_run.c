/*
 * cmd_run.c: `infprof run [-o FILE] [--force] [--] PROGRAM [ARGS]`: profile a program.
 *
 * Sets LD_PRELOAD (prepended to any the caller has) and INFPROF_OUTPUT, runs the program, and
 * returns its exit status (128+N when signal N killed it). The output file is checked before the
 * program starts: an existing one is an error unless --force, an unwritable directory is an error.
 * Afterwards the program's exit status is written into the database and its path printed on
 * stderr, with the databases of any programs it executed.
 *
 * --repeat N runs the program N times, one after another, into FILE, then FILE's stem .2, .3 ...
 * (run.db, run.2.db, run.3.db: never STEM-N, which names the databases of programs a run
 * executed); every name is checked before the first run. It stops at the first run that fails
 * and returns that run's status: `infprof compare` takes the runs of each side (docs/compare.md).
 */
#include "commands.h"
#include "../base/cli.h"
#include "../base/db.h"
#include "../base/table.h"
#include "../../profiler/clock.h"
#include "../../profiler/output.h"
#include "run_asan.h"
#include "run_exec.h"
#include "run_list.h"
#include "run_signals.h"

#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <elf.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void run_usage(FILE *out)
{
    fprintf(
        out,
        "usage: infprof run [-o FILE] [--force] [--repeat N] [--] PROGRAM [ARGS...]\n\n"
        "Profile PROGRAM into an SQLite database (default infprof.db, then infprof-2.db, ...).\n"
        "  -o FILE    the database (%%p pid, %%h host); an existing FILE is an error\n"
        "  --force    overwrite an existing FILE\n"
        "  --repeat N run PROGRAM N times into FILE, FILE.2, ... (run.db, run.2.db): the runs\n"
        "             'infprof compare BASE... -- NEW...' weighs a change against\n"
        "  --delay S  record nothing for S seconds, then open a recording window\n"
        "  --duration S  close each window S seconds after it opened\n"
        "  --closed   record only inside windows: 'infprof window PID start|stop'\n"
        "  --capture-range nvtx:NAME|cudaProfilerApi  the program's own windows\n"
        "Settings come from INFPROF_* variables: see 'infprof info'; windows: docs/windows.md.\n");
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
        if (S_ISDIR(st.st_mode)) cli_fail("%s is a directory: -o names the database file", path);
        /* --force replaces a database, never a device, a pipe or a socket: `-o /dev/null
         * --force` run as root replaced the system's /dev/null with a database (a fresh-eyes
         * check), and every program after it wrote into that file. */
        if (!S_ISREG(st.st_mode))
            cli_fail("%s is not a regular file (a device, pipe or socket): -o names the database"
                     " file to write, which --force may replace; choose another name",
                     path);
        if (!force)
            cli_fail("%s exists; choose another name with -o, or add --force to overwrite it",
                     path);
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

/* ---- a good parent -------------------------------------------------------------------------
 * As timeout(1) and nsys do: the signals a supervisor sends (docker stop's SIGTERM, a kill) are
 * passed on to the program, and its death by a signal is ours too. The terminal's own signals
 * (Ctrl-C, Ctrl-\) already reach the program, which shares our process group: not sent twice;
 * nor one sent to the group (a shell's kill %1, systemd's stop, timeout(1)), which the program
 * notes on a page it shares with us (profiler/runsig.h). */
static volatile sig_atomic_t run_child;
static struct runsig_page *run_sigpage;

static void run_forward(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    if (run_child <= 0 || (si && si->si_code == SI_KERNEL)) return;
    int64_t now = (int64_t)ip_clock_gettime();
    if (si && run_signals_child_got(run_sigpage, (pid_t)run_child, sig, si->si_pid, now)) return;
    kill((pid_t)run_child, sig);
}

static void run_forward_signals(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    for (size_t k = 0; k < sizeof sigs / sizeof sigs[0]; k++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = run_forward;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[k], &sa, NULL);
    }
}

/* Die of the program's signal, without a core file of our own. */
static void run_die_like(int sig)
{
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
}

/* The program's file as execvp would find it; "" when not found. */
static void run_which(const char *prog, char *out, size_t n)
{
    out[0] = 0;
    if (strchr(prog, '/')) {
        snprintf(out, n, "%s", prog);
        return;
    }
    const char *path = getenv("PATH");
    for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char cand[PATH_MAX];
        snprintf(cand, sizeof cand, "%.*s/%s", (int)len, len ? p : ".", prog);
        if (access(cand, X_OK) == 0) {
            snprintf(out, n, "%s", cand);
            return;
        }
        if (!end) break;
        p = end + 1;
    }
}

/* An ELF executable with no program interpreter: LD_PRELOAD never reaches it. */
static int run_is_static(const char *file)
{
    FILE *f = fopen(file, "rb");
    if (!f) return 0;
    Elf64_Ehdr eh;
    int is_static = 0;
    if (fread(&eh, sizeof eh, 1, f) == 1 && !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
        eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_phentsize == sizeof(Elf64_Phdr)) {
        is_static = 1;
        for (int k = 0; k < eh.e_phnum && is_static; k++) {
            Elf64_Phdr ph;
            if (fseek(f, (long)(eh.e_phoff + (Elf64_Off)k * sizeof ph), SEEK_SET) != 0 ||
                fread(&ph, sizeof ph, 1, f) != 1) {
                is_static = 0;
                break;
            }
            if (ph.p_type == PT_INTERP) is_static = 0;
        }
    }
    fclose(f);
    return is_static;
}

static int run_finish(const char *prog, const char *path, int pattern, pid_t pid, int code,
                      time_t started, const char *listpath);

/* s as one shell word: as it is when it holds only safe characters, else in single quotes
 * ('\'' for a quote inside); with a control character, bash's $'...' with \xNN for it (a
 * newline inside single quotes would not paste as one line). */
static void run_shell_quote(const char *s, char *out, size_t n)
{
    int safe = *s != 0, control = 0;
    for (const char *c = s; *c; c++) {
        safe &= (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                strchr("_./+-:@%=,", *c) != NULL;
        control |= (unsigned char)*c < 0x20 || *c == 0x7f;
    }
    if (safe) {
        snprintf(out, n, "%s", s);
        return;
    }
    size_t o = 0;
    if (control) {
        o = (size_t)snprintf(out, n, "$'");
        for (const char *c = s; *c && o + 8 < n; c++) {
            unsigned char u = (unsigned char)*c;
            if (u < 0x20 || u == 0x7f)
                o += (size_t)snprintf(out + o, n - o, "\\x%02x", u);
            else if (u == '\'' || u == '\\')
                o += (size_t)snprintf(out + o, n - o, "\\%c", u);
            else
                out[o++] = *c;
        }
        if (o + 1 < n) out[o++] = '\'';
        out[o] = 0;
        return;
    }
    if (o + 1 < n) out[o++] = '\'';
    for (const char *c = s; *c && o + 6 < n; c++) {
        if (*c == '\'') {
            memcpy(out + o, "'\\''", 4);
            o += 4;
        } else {
            out[o++] = *c;
        }
    }
    if (o + 1 < n) out[o++] = '\'';
    out[o] = 0;
}

/* The options before PROGRAM (the window ones set the program's environment); returns the
 * index of PROGRAM in argv, or -1 after --help. */
static int run_options(int argc, char **argv, const char **output, int *force, int *repeat)
{
    int i = 1;
    for (; i < argc; i++) {
        if (!strcmp(argv[i], "--")) {
            i++;
            break;
        }
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            run_usage(stdout);
            return -1;
        }
        if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) {
            if (++i == argc) cli_fail("-o needs a file name");
            *output = argv[i];
        } else if (!strncmp(argv[i], "--output=", 9)) {
            *output = argv[i] + 9;
        } else if (!strcmp(argv[i], "--force")) {
            *force = 1;
        } else if (!strcmp(argv[i], "--repeat")) {
            char *end;
            long n = ++i < argc ? strtol(argv[i], &end, 10) : 0;
            if (i == argc || argv[i][0] < '0' || argv[i][0] > '9' || *end || n < 1 || n > 1000)
                cli_fail("--repeat needs a number of runs from 1 to 1000, e.g. --repeat 3");
            *repeat = (int)n;
        } else if (!strcmp(argv[i], "--delay") || !strcmp(argv[i], "--duration")) {
            const char *name = argv[i];
            if (++i == argc) cli_fail("%s needs seconds, e.g. %s 10", name, name);
            char *end;
            double sec = strtod(argv[i], &end);
            if (end == argv[i] || *end || !(sec > 0) || sec > 86400)
                cli_fail("%s %s: not a number of seconds in (0, 86400]", name, argv[i]);
            char ms[32];
            snprintf(ms, sizeof ms, "%.0f", sec * 1000);
            setenv(!strcmp(name, "--delay") ? "INFPROF_WINDOW_DELAY_MS"
                                            : "INFPROF_WINDOW_DURATION_MS",
                   ms, 1);
        } else if (!strcmp(argv[i], "--closed")) {
            setenv("INFPROF_WINDOW_START", "closed", 1);
        } else if (!strcmp(argv[i], "--capture-range")) {
            if (++i == argc ||
                (strncmp(argv[i], "nvtx:", 5) && strcmp(argv[i], "cudaProfilerApi")) ||
                !strcmp(argv[i], "nvtx:"))
                cli_fail("--capture-range takes nvtx:NAME or cudaProfilerApi");
            setenv("INFPROF_CAPTURE_RANGE", argv[i], 1);
        } else if (argv[i][0] == '-') {
            cli_fail("unknown option '%s' (try 'infprof run --help')", argv[i]);
        } else {
            break;
        }
    }
    if (i >= argc) cli_fail("no program to run (usage: infprof run [-o FILE] [--] PROGRAM)");
    return i;
}

/* The database's path into path (absolute: a program that changes directory, or its children,
 * still write where the user asked), checked before the program starts; 1 when it is a
 * pattern (%p, %h) the library expands. */
static int run_output_path(const char *output, int force, char *path, size_t size)
{
    if (!output) output = getenv("INFPROF_OUTPUT");
    if (output && !*output) output = NULL;
    int pattern = output && strchr(output, '%');
    if (!output) {
        snprintf(path, size, "infprof.db");
        if (access(path, F_OK) == 0 && ip_output_fresh_name("infprof.db", path, size) != 0)
            cli_fail("cannot find a free name next to infprof.db; use -o");
        check_output(path, 0);
    } else if (!pattern) {
        snprintf(path, size, "%s", output);
        check_output(path, force);
    } else {
        snprintf(path, size, "%s", output);
    }
    if (path[0] != '/') {
        char cwd[PATH_MAX], abs[PATH_MAX * 2];
        if (getcwd(cwd, sizeof cwd)) {
            snprintf(abs, sizeof abs, "%s/%s", cwd, path);
            size_t len = strlen(abs);
            if (len < size) memcpy(path, abs, len + 1);
        }
    }
    return pattern;
}

/* One run of argv into path: the program's exit code; *death the signal that killed it (0). */
static int run_one(char **argv, const char *lib, const char *path, int pattern, int *death)
{
    char listpath[PATH_MAX];
    int list_fd = run_list_create(listpath, sizeof listpath);

    time_t started = time(NULL);
    /* An AddressSanitizer program needs its runtime first, before us. */
    char asan[PATH_MAX];
    int with_asan = run_asan_runtime(argv[0], asan, sizeof asan) == 0;
    if (with_asan)
        fprintf(stderr, "infprof: %s is built with AddressSanitizer: preloading %s first\n",
                argv[0], asan);
    static char sigenv[32]; /* one page for every run of the program */
    if (!run_sigpage) run_sigpage = run_signals_create(sigenv, sizeof sigenv);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) cli_fail("cannot fork: %s", strerror(errno));
    if (pid == 0) {
        /* Killed with us: a service manager that kills the main pid (SIGKILL, which we cannot
         * forward) ends the program, as it would without us, not an orphan holding its port. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) raise(SIGKILL); /* we died before that took */
        const char *old = getenv("LD_PRELOAD");
        char preload[PATH_MAX * 3];
        snprintf(preload, sizeof preload, "%s%s%s%s%s", with_asan ? asan : "", with_asan ? ":" : "",
                 lib, old && *old ? ":" : "", old ? old : "");
        setenv("LD_PRELOAD", preload, 1);
        setenv("INFPROF_OUTPUT", path, 1);
        unsetenv("INFPROF_SESSION");
        if (listpath[0]) setenv("INFPROF_RUN_LIST", listpath, 1);
        if (sigenv[0])
            setenv(RUNSIG_ENV, sigenv, 1);
        else
            unsetenv(RUNSIG_ENV);
        /* NVTX finds us from the first call of any library, even one made before our
         * constructor (a library's own constructor); a tool set before stays chained. */
        const char *nvtx = getenv("NVTX_INJECTION64_PATH");
        if (nvtx && *nvtx && strcmp(nvtx, lib) != 0) setenv("INFPROF_NVTX_NEXT", nvtx, 1);
        if (!getenv("INFPROF_NVTX") || strcmp(getenv("INFPROF_NVTX"), "0") != 0)
            setenv("NVTX_INJECTION64_PATH", lib, 1);
        execvp(argv[0], argv);
        fprintf(stderr, "infprof: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(errno == ENOENT ? 127 : 126);
    }
    run_child = pid;
    run_forward_signals();
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    run_child = 0;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    *death = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    int rc = run_finish(argv[0], path, pattern, pid, code, started, listpath);
    if (listpath[0]) unlink(listpath);
    if (list_fd >= 0) close(list_fd);
    return rc;
}

static void run_repeat_path(const char *path, int r, char *out, size_t n);

/* A run of a --repeat whose database exists already. */
static int repeat_taken(const char *path, int repeat)
{
    char p[PATH_MAX + 16];
    for (int r = 1; r <= repeat; r++) {
        run_repeat_path(path, r, p, sizeof p);
        if (access(p, F_OK) == 0) return 1;
    }
    return 0;
}

/* The database of run r (1-based) of a --repeat: path itself, then STEM.r.EXT. */
static void run_repeat_path(const char *path, int r, char *out, size_t n)
{
    const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
    if (r == 1 || !dot || (slash && dot < slash) || dot == (slash ? slash + 1 : path))
        snprintf(out, n, r == 1 ? "%s" : "%s.%d", path, r);
    else
        snprintf(out, n, "%.*s.%d%s", (int)(dot - path), path, r, dot);
}

int cmd_run(int argc, char **argv)
{
    const char *output = NULL;
    int force = 0, repeat = 1;
    int i = run_options(argc, argv, &output, &force, &repeat);
    if (i < 0) return 0;
    char lib[PATH_MAX], path[PATH_MAX];
    find_library(lib, sizeof lib);
    int pattern = run_output_path(output, force, path, sizeof path);
    if (repeat > 1 && pattern)
        cli_fail("--repeat names its databases after -o FILE: a %%p or %%h pattern cannot be"
                 " repeated (give a plain name, e.g. -o base.db)");
    char(*paths)[PATH_MAX] = calloc((size_t)repeat, sizeof *paths);
    if (!paths) cli_fail("out of memory");
    const char *given = output ? output : getenv("INFPROF_OUTPUT");
    if (repeat > 1 && (!given || !*given)) /* the default name: the first whose runs are free */
        for (int k = 2; k < 1000 && repeat_taken(path, repeat); k++) {
            char name[64];
            snprintf(name, sizeof name, "infprof-%d.db", k);
            if (!repeat_taken(name, repeat)) run_output_path(name, 0, path, sizeof path);
        }
    for (int r = 1; r <= repeat; r++) {
        run_repeat_path(path, r, paths[r - 1], sizeof paths[r - 1]);
        if (r > 1) check_output(paths[r - 1], force); /* every name before the first run */
    }
    char exe[PATH_MAX];
    run_which(argv[i], exe, sizeof exe);
    if (exe[0] && run_is_static(exe)) {
        cli_escape_into(exe, sizeof exe);
        fprintf(stderr,
                "infprof: %s is statically linked: LD_PRELOAD cannot load infprof into it, so"
                " nothing is profiled (it runs as usual)\n",
                exe);
    }
    int rc = 0, death = 0;
    for (int r = 1; r <= repeat; r++) {
        if (repeat > 1) fprintf(stderr, "infprof: run %d of %d\n", r, repeat);
        rc = run_one(argv + i, lib, paths[r - 1], pattern, &death);
        if (rc != 0 && repeat > 1 && r < repeat)
            fprintf(stderr, "infprof: run %d of %d %s %d: the runs after it were not made\n", r,
                    repeat, death ? "was killed by signal" : "exited with status",
                    death ? death : rc);
        if (death) run_die_like(death);
        if (rc != 0) {
            free(paths);
            return rc;
        }
    }
    if (repeat > 1) {
        char q[PATH_MAX * 4 + 8];
        fprintf(stderr,
                "infprof: %d runs: compare them with another side's:"
                " infprof compare",
                repeat);
        for (int r = 1; r <= repeat; r++) {
            run_shell_quote(paths[r - 1], q, sizeof q);
            fprintf(stderr, " %s", q);
        }
        fprintf(stderr, " -- NEW...\n");
    }
    free(paths);
    return rc;
}

/* After the program: its exit status into its database, the nsys views' names, and the list of
 * every database written. Returns the program's exit code. */
static int run_finish(const char *prog, const char *path, int pattern, pid_t pid, int code,
                      time_t started, const char *listpath)
{

    char final[PATH_MAX];
    if (pattern) {
        if (ip_output_expand(path, (int)pid, final, sizeof final) != 0) final[0] = 0;
    } else {
        snprintf(final, sizeof final, "%s", path);
    }
    static char listed[64][PATH_MAX];
    int total = 0;
    int nlisted = listpath[0] ? run_listed(listpath, listed, 64, &total) : 0;
    struct stat st;
    if (!final[0] || stat(final, &st) != 0 || st.st_size == 0) {
        /* The library may have chosen another name (a stale NAME-wal kept beside it). */
        if (nlisted) {
            snprintf(final, sizeof final, "%s", listed[0]);
        } else {
            char shown_prog[PATH_MAX];
            snprintf(shown_prog, sizeof shown_prog, "%s", prog);
            cli_escape_into(shown_prog, sizeof shown_prog);
            fprintf(stderr, "infprof: no database was written for %s (%s)\n", shown_prog,
                    listpath[0] ? "the library did not start in it: see any message above"
                                : "see the messages above");
            return code;
        }
    }
    /* A launcher that exec'd the program (pyenv's shims, env, a shell's exec): the image that
     * ended is what the user ran. */
    char last[PATH_MAX];
    int execs = 0;
    if (run_exec_last(final, pid, listed, nlisted, last, sizeof last, &execs)) {
        char first[PATH_MAX], shown_prog[PATH_MAX];
        snprintf(first, sizeof first, "%s", final);
        snprintf(final, sizeof final, "%s", last);
        snprintf(shown_prog, sizeof shown_prog, "%s", prog);
        cli_escape_into(first, sizeof first);
        cli_escape_into(shown_prog, sizeof shown_prog);
        fprintf(stderr,
                "infprof: %s replaced itself with exec (%d image%s before the last, the first in"
                " %s): the database named below is the last one's, the program that ended\n",
                shown_prog, execs, execs == 1 ? "" : "s", first);
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
    if (nlisted) { /* the library's own list: every one, wherever it went */
        nchild = 0;
        size_t o = 0;
        children[0] = 0;
        int final_listed = 0;
        for (int k = 0; k < nlisted; k++) {
            if (!strcmp(listed[k], final)) {
                final_listed = 1;
                continue;
            }
            if (nchild < 3 && o + strlen(listed[k]) + 3 < sizeof children)
                o += (size_t)snprintf(children + o, sizeof children - o, "%s%s", nchild ? ", " : "",
                                      listed[k]);
            nchild++;
        }
        nchild = total - final_listed; /* past the 64 kept, counted all the same */
    }
    /* The command to paste, its path quoted for a shell where it needs it (from the path itself:
     * the escaped one shown would name another file). */
    char cmd[sizeof final * 4 + 8];
    run_shell_quote(final, cmd, sizeof cmd);
    cli_escape_into(final, sizeof final);
    cli_escape_into(children, sizeof children);
    if (nchild)
        fprintf(stderr,
                "infprof: wrote %s (and %d for the processes it started: %s%s); read it with:"
                " infprof report %s\n",
                final, nchild, children, nchild > 3 ? ", ..." : "", cmd);
    else
        fprintf(stderr, "infprof: wrote %s; read it with: infprof report %s\n", final, cmd);
    return code;
}
