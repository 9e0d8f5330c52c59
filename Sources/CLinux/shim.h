// Linux system calls and macros that Swift's Glibc module does not import.
#ifndef SHUTTERPIPE_CLINUX_SHIM_H
#define SHUTTERPIPE_CLINUX_SHIM_H
// No _GNU_SOURCE here: defining it changes glibc's struct layouts (fd_set) against the
// SwiftGlibc module and breaks clean builds. Everything below is in the default feature set.
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <linux/fs.h>
#include <linux/input.h>

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

/// open(O_TMPFILE): an unnamed file in `directory` that exists only once linked, so a
/// crash leaves nothing behind. (O_TMPFILE is defined only under _GNU_SOURCE; its value,
/// __O_TMPFILE | O_DIRECTORY, is the same on every Linux architecture glibc supports but
/// alpha, parisc and sparc.) Fails with EOPNOTSUPP, EISDIR or EINVAL where the file
/// system has no unnamed files (exFAT, NFS, FAT, old kernels).
static inline int sp_open_unnamed(const char *directory, int mode) {
    return open(directory, 020000000 | O_DIRECTORY | O_WRONLY | O_CLOEXEC, mode);
}

/// Gives the unnamed file `descriptor` the name `path`, failing with EEXIST if the name
/// is taken: linkat through /proc/self/fd, which needs no privilege (AT_EMPTY_PATH
/// would need CAP_DAC_READ_SEARCH).
static inline int sp_link_unnamed(int descriptor, const char *path) {
    char source[64];
    snprintf(source, sizeof source, "/proc/self/fd/%d", descriptor);
    return linkat(AT_FDCWD, source, AT_FDCWD, path, AT_SYMLINK_FOLLOW);
}

/// EVIOCGRAB: 1 takes the device for this process alone (keys no longer reach the
/// desktop), 0 releases it.
static inline int sp_evdev_grab(int fd, int grab) { return ioctl(fd, EVIOCGRAB, (void *)(long)grab); }

/// EVIOCSCLOCKID: event timestamps from CLOCK_MONOTONIC, comparable with "now".
static inline int sp_evdev_use_monotonic_clock(int fd) { int clock = CLOCK_MONOTONIC; return ioctl(fd, EVIOCSCLOCKID, &clock); }

/// EVIOCGNAME: the device's name into `buffer`.
static inline int sp_evdev_name(int fd, char *buffer, int length) { return ioctl(fd, EVIOCGNAME(length), buffer); }

/// Fixes malloc's mmap threshold at `bytes`: every larger block gets a mapping of its
/// own, returned to the system when freed (glibc otherwise raises the threshold after the
/// first large free, and keeps the heap pages of later ones). Returns 1 on success.
static inline int sp_fix_mmap_threshold(int bytes) { return mallopt(M_MMAP_THRESHOLD, bytes); }

/// CLOCK_MONOTONIC now, in microseconds.
static inline long long sp_monotonic_microseconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000000LL + now.tv_nsec / 1000;
}
#endif
