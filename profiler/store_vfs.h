/*
 * store_vfs.h: the guarded VFS of the writer's database (store_vfs.c).
 */
#ifndef INFPROF_STORE_VFS_H
#define INFPROF_STORE_VFS_H

/* Its name, registered on first use (not as the default); NULL when it cannot be. */
const char *ip_store_vfs(void);

#endif
