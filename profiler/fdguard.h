/*
 * fdguard.h: the database's file descriptors, kept ours (fdguard.c says how and why).
 */
#ifndef INFPROF_FDGUARD_H
#define INFPROF_FDGUARD_H

/* Register the open descriptors of the database at `path` (and its -wal, -shm) not registered
 * yet. */
void ip_fdguard_protect(const char *path);
/* Register one descriptor of the database (the store's VFS, as SQLite opens it). */
void ip_fdguard_add(int fd);
/* Forget them (before the store closes them itself); a takeover already seen stays seen. */
void ip_fdguard_release(void);
/* Forget them and any takeover: a new store begins. */
void ip_fdguard_reset(void);
/* One of ours: the program's close() must leave it open. Lock-free. */
int ip_fdguard_is_ours(int fd);
int ip_fdguard_count(void);
int ip_fdguard_fd(int i);
/* Every registered descriptor still names the file it named; once one does not, never again. */
int ip_fdguard_intact(void);
void ip_fdguard_atfork_child(void);
/* Close a descriptor the library opened for its own short use (a /proc file), by the system
 * call itself: past the program-facing close hook (preload/preload.c), which has nothing to
 * decide for it. */
void ip_fdguard_close_own(int fd);

#endif
