/*
 * store_vfs.c: the VFS the writer opens its database with: SQLite's default VFS, with every
 * write and truncation held back unless the database's descriptors are still ours
 * (fdguard.h). A program that took one over (a raw close, a dup2 onto it) gets none of our pages
 * in its file; the store sees an I/O error and stops.
 *
 * The database's descriptors are also kept out of the low numbers the program would be given
 * (SQLite's own "open" system call is replaced for paths that begin with our database's): the
 * program's first file is fd 3 with us as without, and after it closes everything too. They are
 * registered with the guard right there, as they are opened, so no listing of /proc/self/fd (a
 * descriptor of its own, taken from the program's low numbers for a moment) is needed.
 */
#include "store_vfs.h"
#include "fdguard.h"
#include "ring.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

/* ---- descriptors above the program's ------------------------------------------------------ */

/* Our database's path (the -wal, -shm and -journal files begin with it), published by its length
 * after the bytes. SQLite's system-call table is shared with a program using the same libsqlite3,
 * whose other files pass through untouched. */
static char our_path[PATH_MAX];
static _Atomic size_t our_path_len;
static int (*real_open)(const char *, int, int);

static int high_open(const char *path, int flags, int mode)
{
    size_t n = atomic_load(&our_path_len);
    int ours = n && !strncmp(path, our_path, n);
    /* The writer's other opens (the directory it syncs, /dev/urandom) go up too: a moment at a low
     * number is a number the program's next open would not get. */
    if (!ours && !ip_ring_is_writer()) return real_open(path, flags, mode);
    ip_fdguard_own_begin(); /* no program close until it is up there and registered */
    int fd = real_open(path, flags, mode);
    int err = errno;
    fd = ip_fdguard_move_up(fd, (flags & O_CLOEXEC) != 0);
    /* The database, its WAL and its index are guarded; a rollback journal comes and goes. */
    if (fd >= 0 && ours && (!path[n] || !strcmp(path + n, "-wal") || !strcmp(path + n, "-shm")))
        ip_fdguard_add(fd);
    ip_fdguard_own_end();
    errno = err;
    return fd;
}

/* SQLite's "open" replaced by high_open, where its VFS allows. */
static void high_fd_install(sqlite3_vfs *base)
{
    if (base->iVersion < 3 || !base->xSetSystemCall) return;
    real_open = (int (*)(const char *, int, int))base->xGetSystemCall(base, "open");
    if (!real_open) return;
    if (base->xSetSystemCall(base, "open", (sqlite3_syscall_ptr)high_open) != SQLITE_OK)
        real_open = NULL;
}

static void high_fd_path(const char *name)
{
    size_t n = strlen(name);
    if (n >= sizeof our_path) return;
    atomic_store(&our_path_len, 0);
    memcpy(our_path, name, n + 1);
    atomic_store(&our_path_len, n);
}

void ip_store_vfs_protect(const char *path)
{
    if (!real_open) ip_fdguard_protect(path); /* else registered as they were opened */
}

/* ---- the guarded file --------------------------------------------------------------------- */

struct guard_file {
    sqlite3_file base;
    sqlite3_file *real; /* the default VFS's file, right after this struct */
    const char *name;   /* valid while the file is open (SQLite's rule for xOpen's name) */
    int shm_guarded;
};

#define REAL(f) (((struct guard_file *)(f))->real)

static int g_close(sqlite3_file *f)
{
    int rc = REAL(f)->pMethods ? REAL(f)->pMethods->xClose(REAL(f)) : SQLITE_OK;
    return rc;
}
static int g_read(sqlite3_file *f, void *b, int n, sqlite3_int64 o)
{
    return REAL(f)->pMethods->xRead(REAL(f), b, n, o);
}
static int g_write(sqlite3_file *f, const void *b, int n, sqlite3_int64 o)
{
    if (!ip_fdguard_intact()) return SQLITE_IOERR_WRITE;
    return REAL(f)->pMethods->xWrite(REAL(f), b, n, o);
}
static int g_truncate(sqlite3_file *f, sqlite3_int64 size)
{
    if (!ip_fdguard_intact()) return SQLITE_IOERR_TRUNCATE;
    return REAL(f)->pMethods->xTruncate(REAL(f), size);
}
static int g_sync(sqlite3_file *f, int flags)
{
    return REAL(f)->pMethods->xSync(REAL(f), flags);
}
static int g_size(sqlite3_file *f, sqlite3_int64 *size)
{
    return REAL(f)->pMethods->xFileSize(REAL(f), size);
}
static int g_lock(sqlite3_file *f, int l)
{
    return REAL(f)->pMethods->xLock(REAL(f), l);
}
static int g_unlock(sqlite3_file *f, int l)
{
    return REAL(f)->pMethods->xUnlock(REAL(f), l);
}
static int g_check(sqlite3_file *f, int *out)
{
    return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out);
}
static int g_control(sqlite3_file *f, int op, void *arg)
{
    return REAL(f)->pMethods->xFileControl(REAL(f), op, arg);
}
static int g_sector(sqlite3_file *f)
{
    return REAL(f)->pMethods->xSectorSize(REAL(f));
}
static int g_caps(sqlite3_file *f)
{
    return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f));
}
static int g_shm_map(sqlite3_file *f, int pg, int sz, int extend, void volatile **pp)
{
    if (extend && !ip_fdguard_intact()) return SQLITE_IOERR_SHMMAP;
    int rc = REAL(f)->pMethods->xShmMap(REAL(f), pg, sz, extend, pp);
    struct guard_file *g = (struct guard_file *)f;
    if (rc == SQLITE_OK && !g->shm_guarded && g->name) { /* the index is open now: ours */
        g->shm_guarded = 1;
        ip_store_vfs_protect(g->name);
    }
    return rc;
}
static int g_shm_lock(sqlite3_file *f, int off, int n, int flags)
{
    return REAL(f)->pMethods->xShmLock(REAL(f), off, n, flags);
}
static void g_shm_barrier(sqlite3_file *f)
{
    REAL(f)->pMethods->xShmBarrier(REAL(f));
}
static int g_shm_unmap(sqlite3_file *f, int del)
{
    return REAL(f)->pMethods->xShmUnmap(REAL(f), del);
}
static int g_fetch(sqlite3_file *f, sqlite3_int64 o, int n, void **pp)
{
    return REAL(f)->pMethods->xFetch(REAL(f), o, n, pp);
}
static int g_unfetch(sqlite3_file *f, sqlite3_int64 o, void *p)
{
    return REAL(f)->pMethods->xUnfetch(REAL(f), o, p);
}

static const sqlite3_io_methods g_methods = {
    .iVersion = 3,
    .xClose = g_close,
    .xRead = g_read,
    .xWrite = g_write,
    .xTruncate = g_truncate,
    .xSync = g_sync,
    .xFileSize = g_size,
    .xLock = g_lock,
    .xUnlock = g_unlock,
    .xCheckReservedLock = g_check,
    .xFileControl = g_control,
    .xSectorSize = g_sector,
    .xDeviceCharacteristics = g_caps,
    .xShmMap = g_shm_map,
    .xShmLock = g_shm_lock,
    .xShmBarrier = g_shm_barrier,
    .xShmUnmap = g_shm_unmap,
    .xFetch = g_fetch,
    .xUnfetch = g_unfetch,
};

static sqlite3_vfs g_vfs;

static int g_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out)
{
    sqlite3_vfs *base = vfs->pAppData;
    struct guard_file *g = (struct guard_file *)f;
    g->real = (sqlite3_file *)(g + 1);
    memset(g->real, 0, (size_t)base->szOsFile);
    if (name && (flags & SQLITE_OPEN_MAIN_DB)) high_fd_path(name);
    int rc = base->xOpen(base, name, g->real, flags, out);
    /* The method table is set even on failure when the file must be closed (SQLite's rule). */
    f->pMethods = g->real->pMethods ? &g_methods : NULL;
    g->name = name;
    g->shm_guarded = 0;
    /* Registered at once: a program closing everything cannot take it before we do. */
    if (rc == SQLITE_OK && name && (flags & (SQLITE_OPEN_MAIN_DB | SQLITE_OPEN_WAL)))
        ip_store_vfs_protect(name);
    return rc;
}

/* The rest of the VFS: the default one's, called with itself (its methods may read their own
 * VFS's data). */
#define BASE(v) ((sqlite3_vfs *)(v)->pAppData)
static int v_delete(sqlite3_vfs *v, const char *n, int sync)
{
    return BASE(v)->xDelete(BASE(v), n, sync);
}
static int v_access(sqlite3_vfs *v, const char *n, int flags, int *out)
{
    return BASE(v)->xAccess(BASE(v), n, flags, out);
}
static int v_full(sqlite3_vfs *v, const char *n, int len, char *out)
{
    return BASE(v)->xFullPathname(BASE(v), n, len, out);
}
static int v_random(sqlite3_vfs *v, int n, char *out)
{
    return BASE(v)->xRandomness(BASE(v), n, out);
}
static int v_sleep(sqlite3_vfs *v, int us)
{
    return BASE(v)->xSleep(BASE(v), us);
}
static int v_time(sqlite3_vfs *v, double *out)
{
    return BASE(v)->xCurrentTime(BASE(v), out);
}
static int v_error(sqlite3_vfs *v, int n, char *out)
{
    return BASE(v)->xGetLastError ? BASE(v)->xGetLastError(BASE(v), n, out) : 0;
}
static int v_time64(sqlite3_vfs *v, sqlite3_int64 *out)
{
    return BASE(v)->xCurrentTimeInt64(BASE(v), out);
}

const char *ip_store_vfs(void)
{
    if (g_vfs.zName) return g_vfs.zName;
    sqlite3_vfs *base = sqlite3_vfs_find(NULL);
    if (!base) return NULL;
    memset(&g_vfs, 0, sizeof g_vfs);
    g_vfs.iVersion = 2;
    g_vfs.szOsFile = (int)sizeof(struct guard_file) + base->szOsFile;
    g_vfs.mxPathname = base->mxPathname;
    g_vfs.zName = "infprof-guard";
    g_vfs.pAppData = base;
    g_vfs.xOpen = g_open;
    g_vfs.xDelete = v_delete;
    g_vfs.xAccess = v_access;
    g_vfs.xFullPathname = v_full;
    g_vfs.xRandomness = v_random;
    g_vfs.xSleep = v_sleep;
    g_vfs.xCurrentTime = v_time;
    g_vfs.xGetLastError = v_error;
    g_vfs.xCurrentTimeInt64 = v_time64;
    if (base->iVersion < 2 || !base->xCurrentTimeInt64) return NULL;
    if (sqlite3_vfs_register(&g_vfs, 0) != SQLITE_OK) {
        g_vfs.zName = NULL;
        return NULL;
    }
    high_fd_install(base);
    return g_vfs.zName;
}
