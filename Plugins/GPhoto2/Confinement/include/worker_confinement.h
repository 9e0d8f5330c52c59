// The camera worker's confinement: what the process gives up before libgphoto2 loads.
// See Plugins/GPhoto2/README.md ("The confined worker") and docs/security.md.
#ifndef SHUTTERPIPE_WORKER_CONFINEMENT_H
#define SHUTTERPIPE_WORKER_CONFINEMENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/// What to confine the calling process to. Paths are absolute or relative to the current
/// folder; the process must have a single thread.
struct sp_confinement {
    /// Switch to this user and group (with `groups` as the supplementary groups) when
    /// running as root; `switch_user` 0 keeps the current user.
    int switch_user;
    uid_t uid;
    gid_t gid;
    const gid_t *groups;
    size_t group_count;
    /// Folders and files only read (and executed): the libraries, the camera drivers.
    const char *const *read_paths;
    size_t read_count;
    /// Folders read and written: the worker's settings folder.
    const char *const *write_paths;
    size_t write_count;
    /// Device nodes read, written and driven by ioctl: /dev/bus/usb.
    const char *const *device_paths;
    size_t device_count;
    /// TCP ports the worker may connect to (a PTP/IP camera's); none: no TCP at all, and
    /// no IPv4 or IPv6 sockets.
    const uint16_t *tcp_ports;
    size_t tcp_port_count;
};

/// What was applied, one bit each.
enum {
    SP_CONFINED_USER = 1 << 0,          // switched to the unprivileged user
    SP_CONFINED_CAPABILITIES = 1 << 1,  // no capabilities, bounding set empty where it could be
    SP_CONFINED_NO_NEW_PRIVS = 1 << 2,
    SP_CONFINED_LANDLOCK = 1 << 3,      // file rules (and TCP ports from ABI 4, scopes from ABI 6)
    SP_CONFINED_SECCOMP = 1 << 4,       // the system-call filter
};

/// Confines the calling process, as far as the kernel allows. Returns the bits applied;
/// `landlock_abi` gets the kernel's Landlock ABI (0: none). Each part that could not be
/// applied adds a sentence to `report` (what and why); a part the kernel lacks is
/// skipped, never an error. -1: a step failed half-way (the process must not go on).
int sp_confine(const struct sp_confinement *confinement, int *landlock_abi, char *report, size_t report_size);

/// The number of system calls the filter allows by name (for the log).
size_t sp_confinement_allowed_syscall_count(void);

#endif
