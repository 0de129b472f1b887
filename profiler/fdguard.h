/*
 * fdguard.h: the database's file descriptors, kept ours (fdguard.c says how and why).
 */
#ifndef INFPROF_FDGUARD_H
#define INFPROF_FDGUARD_H

#include <stddef.h>
#include <sys/types.h>

/* Descriptors registered at most: the database (3), the CPU energy files (12), /proc/self/stat;
 * one past it stays unregistered (a program's close then reaches it). */
#define IP_FDGUARD_MAX 32

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
/* In a forked child: the parent's descriptors are closed and forgotten, the gate reopened. */
void ip_fdguard_atfork_child(void);

/* The gate (fdguard.c): between own_begin and own_end the library opens a descriptor, moves it
 * up and registers it; a program close (the hooks call close_enter/close_leave around the real
 * close) waits for that, so it can never close a number of ours that is not registered yet, nor
 * see us close a number that has become its own. */
void ip_fdguard_own_begin(void);
void ip_fdguard_own_end(void);
void ip_fdguard_close_enter(void);
void ip_fdguard_close_leave(void);
/* The lowest number our descriptors use (0: none, the limit is below 256). */
int ip_fdguard_high_min(void);
/* Inside the gate: fd moved to a high number (the low one closed), or fd where none is free. */
int ip_fdguard_move_up(int fd, int cloexec);
/* Open a file of the library's own (close-on-exec) through the gate: at a high number and
 * registered until ip_fdguard_close_own. -1 and errno on failure. */
int ip_fdguard_open_own(const char *path, int flags, int mode);
/* A small file of the library's own read whole through the gate (ip_fdguard_open_own, one read,
 * closed again), NUL-ended in buf: the bytes read, or -1 (errno kept from the open or the read). */
ssize_t ip_fdguard_read_own(const char *path, char *buf, size_t size);
/* Close a descriptor the library opened for its own use (ip_fdguard_open_own), by the system
 * call itself: past the program-facing close hook (preload/preload.c); it is forgotten first. */
void ip_fdguard_close_own(int fd);

#endif
