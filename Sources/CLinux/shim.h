// Linux system calls and macros that Swift's Glibc module does not import.
#ifndef SHUTTERPIPE_CLINUX_SHIM_H
#define SHUTTERPIPE_CLINUX_SHIM_H
// No _GNU_SOURCE here: defining it changes glibc's struct layouts (fd_set) against the
// SwiftGlibc module and breaks clean builds. Everything below is in the default feature set.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <linux/fs.h>
#include <linux/input.h>
#include <spawn.h>

/* glibc 2.34+ declares this only with _GNU_SOURCE, which this header must not define. */
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);

/// posix_spawn file action: close every descriptor from `from` up in the child.
static inline int sp_spawn_close_from(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

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

/// EVIOCGRAB: 1 takes the device for this process alone (keys no longer reach the
/// desktop), 0 releases it.
static inline int sp_evdev_grab(int fd, int grab) { return ioctl(fd, EVIOCGRAB, (void *)(long)grab); }

/// EVIOCSCLOCKID: event timestamps from CLOCK_MONOTONIC, comparable with "now".
static inline int sp_evdev_use_monotonic_clock(int fd) { int clock = CLOCK_MONOTONIC; return ioctl(fd, EVIOCSCLOCKID, &clock); }

/// EVIOCGNAME: the device's name into `buffer`.
static inline int sp_evdev_name(int fd, char *buffer, int length) { return ioctl(fd, EVIOCGNAME(length), buffer); }

/// CLOCK_MONOTONIC now, in microseconds.
static inline long long sp_monotonic_microseconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000000LL + now.tv_nsec / 1000;
}
#endif
