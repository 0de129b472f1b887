/*
 * store_vfs.h: the guarded VFS of the writer's database (store_vfs.c).
 */
#ifndef INFPROF_STORE_VFS_H
#define INFPROF_STORE_VFS_H

/* Its name, registered on first use (not as the default); NULL when it cannot be. */
const char *ip_store_vfs(void);
/* Register the database's descriptors with the guard, where opening them did not already (a
 * listing of /proc/self/fd: a descriptor of its own, for a moment). */
void ip_store_vfs_protect(const char *path);

#endif
