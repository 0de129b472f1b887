/*
 * output.c: choosing and claiming the database file (rules in output.h).
 */
#include "output.h"
#include "fdguard.h"
#include "process.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

int ip_output_expand(const char *pattern, int pid, char *out, size_t n)
{
    size_t o = 0;
    for (const char *p = pattern; *p; p++) {
        char buf[256];
        const char *piece = buf;
        if (p[0] == '%' && p[1] == 'p') {
            snprintf(buf, sizeof buf, "%d", pid);
            p++;
        } else if (p[0] == '%' && p[1] == 'h') {
            if (gethostname(buf, sizeof buf) != 0) strcpy(buf, "host");
            buf[sizeof buf - 1] = 0;
            p++;
        } else if (p[0] == '%' && p[1] == '%') {
            strcpy(buf, "%");
            p++;
        } else {
            buf[0] = *p;
            buf[1] = 0;
        }
        size_t len = strlen(piece);
        if (o + len + 1 > n) return -1;
        memcpy(out + o, piece, len);
        o += len;
    }
    out[o] = 0;
    return 0;
}

/* Split "dir/name.db" into the part before the extension and the extension (".db" or ""). */
static const char *ext_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(path, '.');
    if (!dot || (slash && dot < slash) || dot == path || (slash && dot == slash + 1)) return "";
    return dot;
}

static int with_suffix(const char *path, const char *suffix, char *out, size_t n)
{
    const char *ext = ext_of(path);
    int stem = (int)(strlen(path) - strlen(ext));
    int w = snprintf(out, n, "%.*s%s%s", stem, path, suffix, ext);
    return w < 0 || (size_t)w >= n ? -1 : 0;
}

/* A name is taken when the file or any of SQLite's companions of it exists (as anything: a
 * symlink, a directory): opening a database beside someone's NAME-wal or NAME-journal would
 * make SQLite read it as its own and then delete it. */
static const char *const name_sides[] = {"", "-wal", "-shm", "-journal"};

/* 0: free; else 1 + the index in name_sides of the first that exists. */
static int name_taken(const char *path)
{
    char side[PATH_MAX + 16];
    struct stat st;
    for (size_t i = 0; i < sizeof name_sides / sizeof name_sides[0]; i++) {
        snprintf(side, sizeof side, "%s%s", path, name_sides[i]);
        if (lstat(side, &st) == 0) return (int)i + 1; /* else the open below says what's wrong */
    }
    return 0;
}

int ip_output_fresh_name(const char *path, char *out, size_t n)
{
    for (int i = 2; i < 100000; i++) {
        char suffix[16];
        snprintf(suffix, sizeof suffix, "-%d", i);
        if (with_suffix(path, suffix, out, n) != 0) return -1;
        if (!name_taken(out)) return 0;
    }
    return -1;
}

static int claim(const char *path)
{
    if (name_taken(path)) return -EEXIST;
    /* Through the fd guard's gate: never a number the program could close or be given. */
    int fd = ip_fdguard_open_own(path, O_WRONLY | O_CREAT | O_EXCL, 0666);
    if (fd < 0) return -errno;
    /* Under a umask such as 0777 the file would be ours and yet unreadable to SQLite: it keeps
     * at least read and write for its owner (SQLite gives its -wal and -shm the same mode). */
    struct stat st;
    if (fstat(fd, &st) == 0 && (st.st_mode & 0600) != 0600) fchmod(fd, (st.st_mode & 07777) | 0600);
    ip_fdguard_close_own(fd);
    return 0;
}

/* A device, a pipe or a socket is never a database (INFPROF_OUTPUT=/dev/stdout): and a name
 * beside it (/dev/stdout-2) would be a file in /dev. */
static int not_a_file(const char *path)
{
    struct stat st;
    if (!strncmp(path, "/dev/", 5) || !strncmp(path, "/proc/", 6) || !strncmp(path, "/sys/", 5))
        return 1;
    return stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

static void absolute(const char *path, char *out, size_t n)
{
    char cwd[PATH_MAX];
    int len = -1;
    if (path[0] != '/' && getcwd(cwd, sizeof cwd)) len = snprintf(out, n, "%s/%s", cwd, path);
    if (len < 0 || (size_t)len >= n) snprintf(out, n, "%s", path); /* too long: as given */
}

/* The path cut for a message: its first and last characters around "...". */
static const char *shown(const char *path, char *buf, size_t n)
{
    size_t len = strlen(path);
    if (len < 120) return path;
    snprintf(buf, n, "%.50s...%s", path, path + len - 50);
    return buf;
}

static void claim_failed(const char *name, int err)
{
    char cut[128];
    if (err == EMFILE || err == ENFILE) {
        struct rlimit rl;
        long lim = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? (long)rl.rlim_cur : -1;
        ip_warn("too many open files (the limit is %ld) to create %s; profiling off, the program"
                " runs on (raise the limit: ulimit -n)",
                lim, shown(name, cut, sizeof cut));
        return;
    }
    ip_warn("cannot create %s: %s; profiling off, the program runs on (set INFPROF_OUTPUT to a"
            " writable path)",
            shown(name, cut, sizeof cut), strerror(err));
}

int ip_output_claim(const char *pattern, int role, char *path, size_t n)
{
    int explicit_name = pattern && *pattern;
    const char *pat = explicit_name ? pattern : "infprof.db";
    char name[PATH_MAX], alt[PATH_MAX], cut[128];
    if (ip_output_expand(pat, (int)getpid(), name, sizeof name) != 0) {
        ip_warn("INFPROF_OUTPUT is too long (over %d characters); profiling off (give a shorter"
                " path)",
                PATH_MAX - 1);
        return -1;
    }
    if (!strcmp(name, "/dev/null")) {
        ip_info("INFPROF_OUTPUT is /dev/null: profiling off");
        return -1;
    }
    if (not_a_file(name)) {
        ip_warn("INFPROF_OUTPUT=%s is a device or a system path, not a file; profiling off (give"
                " a file path)",
                shown(name, cut, sizeof cut));
        return -1;
    }
    /* A directory gets the database inside it, never a file beside it. */
    struct stat st;
    size_t len = strlen(name);
    if ((len && name[len - 1] == '/') || (stat(name, &st) == 0 && S_ISDIR(st.st_mode))) {
        int w = snprintf(alt, sizeof alt, "%s%sinfprof.db", name,
                         len && name[len - 1] == '/' ? "" : "/");
        if (w < 0 || (size_t)w >= sizeof alt) return -1;
        strcpy(name, alt);
    }
    if (role != IP_ROLE_ROOT && !strstr(pat, "%p")) {
        char suffix[24];
        snprintf(suffix, sizeof suffix, "-%d", (int)getpid());
        if (with_suffix(name, suffix, alt, sizeof alt) != 0) return -1;
        strcpy(name, alt);
    }
    /* SQLite takes paths shorter than 512 bytes, "-journal" after ours included (and a fresh
     * name may add a few characters). */
    absolute(name, alt, sizeof alt);
    if (strlen(alt) > IP_OUTPUT_PATH_LONGEST) {
        ip_warn("the output path is too long (%zu > %d characters): %s; profiling off (give a"
                " shorter INFPROF_OUTPUT)",
                strlen(alt), IP_OUTPUT_PATH_LONGEST, shown(alt, cut, sizeof cut));
        return -1;
    }
    int rc = claim(name);
    if (rc == -EEXIST) {
        if (ip_output_fresh_name(name, alt, sizeof alt) != 0 || (rc = claim(alt)) != 0) {
            if (rc != 0 && rc != -EEXIST) {
                claim_failed(alt, -rc);
                return -1;
            }
            ip_warn("cannot find a free name next to %s; profiling off (set INFPROF_OUTPUT)",
                    shown(name, cut, sizeof cut));
            return -1;
        }
        int side = name_taken(name);
        if (explicit_name && role == IP_ROLE_ROOT && side > 1)
            ip_warn("%s%s exists beside %s and is kept; writing %s instead", name,
                    name_sides[side - 1], name, alt);
        else if (explicit_name && role == IP_ROLE_ROOT)
            ip_warn("%s exists and is kept; writing %s instead", name, alt);
        strcpy(name, alt);
    } else if (rc != 0) {
        claim_failed(name, -rc);
        return -1;
    }
    absolute(name, path, n);
    ip_output_announce(path);
    return 0;
}

void ip_output_announce(const char *path)
{
    /* `infprof run` lists every database its program and the program's children wrote,
     * wherever they went: each one's absolute path is appended to INFPROF_RUN_LIST. */
    const char *list = getenv("INFPROF_RUN_LIST");
    if (!list || list[0] != '/') return;
    int fd = ip_fdguard_open_own(list, O_WRONLY | O_APPEND, 0);
    if (fd < 0) return;
    char line[PATH_MAX + 2];
    int len = snprintf(line, sizeof line, "%s\n", path);
    if (len > 0 && (size_t)len < sizeof line && write(fd, line, (size_t)len) < 0) {
        /* nothing to do: the run's summary just misses this name */
    }
    ip_fdguard_close_own(fd);
}
