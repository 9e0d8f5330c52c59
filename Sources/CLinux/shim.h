// Linux system calls and macros that Swift's Glibc module does not import.
#ifndef SHUTTERPIPE_CLINUX_SHIM_H
#define SHUTTERPIPE_CLINUX_SHIM_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/fs.h>

/// rename(2) that fails with EEXIST instead of replacing `to`. Falls back to link+unlink
/// where the file system has no renameat2 (errno EINVAL/ENOSYS), which is also atomic.
/// Returns 0 on success, -1 with errno set.
static inline int sp_rename_noreplace(const char *from, const char *to) {
    long result = syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE);
    if (result == 0) return 0;
    if (errno != EINVAL && errno != ENOSYS) return -1;
    if (link(from, to) != 0) return -1;
    unlink(from);
    return 0;
}
#endif
