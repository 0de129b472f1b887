/*
 * run_list.c: `infprof run` gives its program a file (INFPROF_RUN_LIST) where the library, in the
 * program and in every program it runs, appends the path of each database it creates; after the
 * program ends, the run prints those paths and removes the file.
 *
 * A run killed by SIGKILL cannot remove it (a service manager's stop left one in /tmp at each
 * kill). So a run holds an flock on its list for as long as it lives, which the kernel releases
 * at its death, and each new run removes the lists in its directory that no one holds: files of
 * our name (infprof-run- and the six characters mkstemp chose), made as mkstemp makes them (our
 * user, a plain file of one link, mode 0600), unchanged for a minute (a run that has just made
 * its list has not locked it yet), and holding what a list holds: nothing, or absolute paths (a
 * fresh-eyes check's aged hard link named so, holding "hello", was removed before).
 */
#include "run_list.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LIST_PREFIX  "infprof-run-"
#define LIST_FRESH_S 60
#define LIST_MAX     (1 << 20) /* 64 databases' paths and far more: no list is larger */

/* LIST_PREFIX and the six characters of mkstemp's template, nothing else. */
static int list_name(const char *name)
{
    size_t p = sizeof LIST_PREFIX - 1;
    if (strncmp(name, LIST_PREFIX, p) != 0 || strlen(name) != p + 6) return 0;
    for (const char *c = name + p; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9')))
            return 0;
    return 1;
}

/* Remove the lists in dir that a killed run left. */
static void list_sweep(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    time_t now = time(NULL);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!list_name(e->d_name)) continue;
        int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0) continue;
        struct stat st;
        char first = '/';
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
            st.st_nlink == 1 && (st.st_mode & 07777) == 0600 && st.st_size < LIST_MAX &&
            st.st_mtime + LIST_FRESH_S < now &&
            (st.st_size == 0 || (pread(fd, &first, 1, 0) == 1 && first == '/')) &&
            flock(fd, LOCK_EX | LOCK_NB) == 0) {
            /* The name may have been replaced since it was opened: remove it only if it is
             * still this file. */
            struct stat now_st;
            if (fstatat(dirfd(d), e->d_name, &now_st, AT_SYMLINK_NOFOLLOW) == 0 &&
                now_st.st_ino == st.st_ino && now_st.st_dev == st.st_dev)
                unlinkat(dirfd(d), e->d_name, 0);
        }
        close(fd);
    }
    closedir(d);
}

static int list_make(const char *dir, char *out, size_t n)
{
    if ((size_t)snprintf(out, n, "%s/" LIST_PREFIX "XXXXXX", dir) >= n) return -1;
    list_sweep(dir);
    int fd = mkostemp(out, O_CLOEXEC);
    if (fd < 0) return -1;
    /* On a file system without locks this fails, and there the sweep's lock fails too: no list
     * is ever removed by another run. */
    (void)flock(fd, LOCK_EX | LOCK_NB);
    return fd;
}

int run_list_create(char *out, size_t n)
{
    const char *tmpdir = getenv("TMPDIR");
    int fd = -1;
    if (tmpdir && tmpdir[0] == '/') fd = list_make(tmpdir, out, n);
    if (fd < 0) fd = list_make("/tmp", out, n);
    if (fd < 0 && n) out[0] = 0;
    return fd;
}

int run_listed(const char *list, char names[][PATH_MAX], int max, int *total)
{
    *total = 0;
    FILE *f = fopen(list, "r");
    if (!f) return 0;
    int n = 0;
    char line[PATH_MAX + 2];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        int seen = !line[0];
        for (int k = 0; k < n && !seen; k++) seen = !strcmp(names[k], line);
        struct stat st;
        if (seen || strlen(line) >= PATH_MAX || stat(line, &st) != 0 || st.st_size == 0) continue;
        (*total)++;
        if (n < max) memcpy(names[n++], line, strlen(line) + 1);
    }
    fclose(f);
    return n;
}
