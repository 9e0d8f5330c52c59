// The camera worker's confinement, in the order the kernel needs it: capabilities' bounding
// set (needs CAP_SETPCAP), the user (needs CAP_SETUID), the remaining capabilities,
// no_new_privs, Landlock, and the system-call filter last (it does not allow the calls
// before it).
#define _GNU_SOURCE
#include "worker_confinement.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <sched.h>
#include <seccomp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

// Landlock, from the kernel's uapi (Debian 12's headers stop at ABI 2, the kernel may have 7).
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif
#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_RULE_NET_PORT 2
#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_REMOVE_DIR (1ULL << 4)
#define LL_FS_REMOVE_FILE (1ULL << 5)
#define LL_FS_MAKE_CHAR (1ULL << 6)
#define LL_FS_MAKE_DIR (1ULL << 7)
#define LL_FS_MAKE_REG (1ULL << 8)
#define LL_FS_MAKE_SOCK (1ULL << 9)
#define LL_FS_MAKE_FIFO (1ULL << 10)
#define LL_FS_MAKE_BLOCK (1ULL << 11)
#define LL_FS_MAKE_SYM (1ULL << 12)
#define LL_FS_REFER (1ULL << 13)     // ABI 2
#define LL_FS_TRUNCATE (1ULL << 14)  // ABI 3
#define LL_FS_IOCTL_DEV (1ULL << 15) // ABI 5
#define LL_NET_BIND_TCP (1ULL << 0)  // ABI 4
#define LL_NET_CONNECT_TCP (1ULL << 1)
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)  // ABI 6
#define LL_SCOPE_SIGNAL (1ULL << 1)

struct ll_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
};
struct ll_path_beneath_attr {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));
struct ll_net_port_attr {
    uint64_t allowed_access;
    uint64_t port;
};

#define LL_FILE_RIGHTS (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)

static void say(char *report, size_t size, const char *format, ...) {
    size_t used = strnlen(report, size);
    if (used + 1 >= size) return;
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(report + used, size - used, format, arguments);
    va_end(arguments);
}

// MARK: capabilities and user

static int last_capability(void) {
    FILE *file = fopen("/proc/sys/kernel/cap_last_cap", "re");
    int last = CAP_LAST_CAP;
    if (file) {
        if (fscanf(file, "%d", &last) != 1) last = CAP_LAST_CAP;
        fclose(file);
    }
    return last;
}

static int drop_bounding_set(void) {
    int last = last_capability();
    for (int capability = 0; capability <= last; capability++) {
        if (prctl(PR_CAPBSET_READ, capability, 0, 0, 0) == 1 && prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0) return -1;
    }
    return 0;
}

static int clear_capabilities(void) {
    struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct data[2];
    memset(data, 0, sizeof data);
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    return (int)syscall(SYS_capset, &header, data);
}

static int switch_user(const struct sp_confinement *c) {
    if (setgroups(c->group_count, c->groups) != 0) return -1;
    if (setresgid(c->gid, c->gid, c->gid) != 0) return -1;
    if (setresuid(c->uid, c->uid, c->uid) != 0) return -1;
    // Verify: no way back.
    if (setuid(0) == 0 && c->uid != 0) return -1;
    return 0;
}

// MARK: Landlock

static int landlock_abi(void) {
    long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
    return abi < 0 ? 0 : (int)abi;
}

static uint64_t handled_fs(int abi) {
    uint64_t access = LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_READ_DIR | LL_FS_REMOVE_DIR | LL_FS_REMOVE_FILE |
                      LL_FS_MAKE_CHAR | LL_FS_MAKE_DIR | LL_FS_MAKE_REG | LL_FS_MAKE_SOCK | LL_FS_MAKE_FIFO | LL_FS_MAKE_BLOCK |
                      LL_FS_MAKE_SYM;
    if (abi >= 2) access |= LL_FS_REFER;
    if (abi >= 3) access |= LL_FS_TRUNCATE;
    if (abi >= 5) access |= LL_FS_IOCTL_DEV;
    return access;
}

// One path rule; a missing path is no rule (the camera drivers' folder of another version).
static int add_path(int ruleset, const char *path, uint64_t access, uint64_t handled, char *report, size_t size) {
    int descriptor = open(path, O_PATH | O_CLOEXEC);
    if (descriptor < 0) return errno == ENOENT || errno == EACCES ? 0 : -1;
    struct stat info;
    if (fstat(descriptor, &info) != 0) {
        close(descriptor);
        return -1;
    }
    if (!S_ISDIR(info.st_mode)) access &= LL_FILE_RIGHTS;
    struct ll_path_beneath_attr rule = {.allowed_access = access & handled, .parent_fd = descriptor};
    long added = syscall(__NR_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &rule, 0);
    int saved = errno;
    close(descriptor);
    if (added != 0) {
        say(report, size, "Landlock refused the rule for %s (%s). ", path, strerror(saved));
        errno = saved;
        return -1;
    }
    return 0;
}

static int apply_landlock(const struct sp_confinement *c, int abi, char *report, size_t size) {
    struct ll_ruleset_attr attributes = {.handled_access_fs = handled_fs(abi)};
    size_t attributes_size = sizeof attributes.handled_access_fs;
    if (abi >= 4) {
        attributes.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
        attributes_size = offsetof(struct ll_ruleset_attr, scoped);
    }
    if (abi >= 6) {
        attributes.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
        attributes_size = sizeof attributes;
    }
    int ruleset = (int)syscall(__NR_landlock_create_ruleset, &attributes, attributes_size, 0);
    if (ruleset < 0) {
        say(report, size, "Landlock could not make a ruleset (%s). ", strerror(errno));
        return -1;
    }
    uint64_t handled = attributes.handled_access_fs;
    uint64_t read = LL_FS_EXECUTE | LL_FS_READ_FILE | LL_FS_READ_DIR;
    uint64_t write = handled & ~(LL_FS_EXECUTE | LL_FS_MAKE_CHAR | LL_FS_MAKE_BLOCK | LL_FS_IOCTL_DEV);
    uint64_t device = LL_FS_READ_FILE | LL_FS_READ_DIR | LL_FS_WRITE_FILE | LL_FS_IOCTL_DEV;
    int failed = 0;
    for (size_t i = 0; i < c->read_count && !failed; i++) failed = add_path(ruleset, c->read_paths[i], read, handled, report, size);
    for (size_t i = 0; i < c->write_count && !failed; i++) failed = add_path(ruleset, c->write_paths[i], write, handled, report, size);
    for (size_t i = 0; i < c->device_count && !failed; i++) failed = add_path(ruleset, c->device_paths[i], device, handled, report, size);
    for (size_t i = 0; i < c->tcp_port_count && !failed && abi >= 4; i++) {
        struct ll_net_port_attr rule = {.allowed_access = LL_NET_CONNECT_TCP, .port = c->tcp_ports[i]};
        if (syscall(__NR_landlock_add_rule, ruleset, LL_RULE_NET_PORT, &rule, 0) != 0) {
            say(report, size, "Landlock refused TCP port %u (%s). ", c->tcp_ports[i], strerror(errno));
            failed = 1;
        }
    }
    if (!failed && syscall(__NR_landlock_restrict_self, ruleset, 0) != 0) {
        say(report, size, "Landlock could not restrict the worker (%s). ", strerror(errno));
        failed = 1;
    }
    close(ruleset);
    return failed ? -1 : 0;
}

// MARK: the system-call filter

// What libgphoto2 (USB through libusb, PTP/IP over TCP), the Swift runtime, Foundation and
// the worker protocol call, measured with strace over the camera tests, and their
// siblings (the same call in its other forms). Everything else kills the worker: exec,
// fork, ptrace, mount, bpf, keyrings, modules, namespaces, process_vm_*.
static const char *const allowed[] = {
    // memory
    "brk", "mmap", "munmap", "mremap", "mprotect", "madvise", "mincore", "membarrier", "set_mempolicy", "get_mempolicy",
    // files and descriptors (Landlock says which files)
    "read", "write", "readv", "writev", "pread64", "pwrite64", "preadv", "pwritev", "preadv2", "pwritev2", "lseek",
    "open", "openat", "openat2", "close", "close_range", "dup", "dup2", "dup3", "fcntl", "ioctl", "flock",
    "stat", "fstat", "lstat", "newfstatat", "statx", "statfs", "fstatfs", "access", "faccessat", "faccessat2",
    "readlink", "readlinkat", "getdents", "getdents64", "getcwd", "chdir", "fchdir",
    "mkdir", "mkdirat", "rmdir", "unlink", "unlinkat", "rename", "renameat", "renameat2",
    "ftruncate", "fallocate", "fsync", "fdatasync", "sync_file_range", "fchmod", "umask", "utimensat",
    "memfd_create", "pipe", "pipe2", "eventfd", "eventfd2", "timerfd_create", "timerfd_settime", "timerfd_gettime",
    "poll", "ppoll", "select", "pselect6", "epoll_create", "epoll_create1", "epoll_ctl", "epoll_wait", "epoll_pwait", "epoll_pwait2",
    // sockets (socket() itself is filtered by family below)
    "socketpair", "connect", "bind", "getsockname", "getpeername", "setsockopt", "getsockopt", "shutdown",
    "sendto", "sendmsg", "sendmmsg", "recvfrom", "recvmsg", "recvmmsg",
    // threads, signals, time
    "futex", "futex_waitv", "set_robust_list", "get_robust_list", "rseq", "set_tid_address", "gettid", "getpid", "getppid",
    "sched_yield", "sched_getaffinity", "sched_setaffinity", "sched_getscheduler", "sched_setscheduler", "sched_getparam",
    "sched_setparam", "sched_get_priority_max", "sched_get_priority_min", "getpriority", "setpriority",
    "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigtimedwait", "rt_sigpending", "rt_sigsuspend", "sigaltstack",
    "restart_syscall", "exit", "exit_group", "nanosleep", "clock_nanosleep", "clock_gettime", "clock_getres", "gettimeofday", "time",
    // identity and the machine
    "getuid", "geteuid", "getgid", "getegid", "getgroups", "getresuid", "getresgid", "uname", "sysinfo", "getrandom",
    "prlimit64", "getrlimit", "getrusage", "arch_prctl", "prctl",
};

size_t sp_confinement_allowed_syscall_count(void) { return sizeof allowed / sizeof allowed[0]; }

static int apply_seccomp(int allow_inet, char *report, size_t size) {
    scmp_filter_ctx filter = seccomp_init(SCMP_ACT_KILL_PROCESS);
    if (filter == NULL) {
        say(report, size, "seccomp could not start a filter. ");
        return -1;
    }
    int failed = 0;
    for (size_t i = 0; i < sizeof allowed / sizeof allowed[0] && !failed; i++) {
        int number = seccomp_syscall_resolve_name(allowed[i]);
        if (number == __NR_SCMP_ERROR) continue;  // not on this architecture
        failed = seccomp_rule_add(filter, SCMP_ACT_ALLOW, number, 0) != 0;
    }
    // Threads only: clone with CLONE_THREAD; clone3 (whose flags a filter cannot read)
    // says ENOSYS, and the C library falls back to clone.
    failed = failed || seccomp_rule_add(filter, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD)) != 0;
    failed = failed || seccomp_rule_add(filter, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0) != 0;
    // Signals to itself only (abort, the runtime's thread signals).
    pid_t self = getpid();
    failed = failed || seccomp_rule_add(filter, SCMP_ACT_ALLOW, SCMP_SYS(kill), 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)self)) != 0;
    failed = failed || seccomp_rule_add(filter, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)self)) != 0;
    // Sockets: local ones (the protocol, libusb's hotplug netlink); the network only for a
    // PTP/IP camera.
    int families[] = {AF_UNIX, AF_NETLINK, AF_INET, AF_INET6};
    size_t family_count = allow_inet ? 4 : 2;
    for (size_t i = 0; i < family_count && !failed; i++) {
        failed = seccomp_rule_add(filter, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)families[i])) != 0;
    }
    failed = failed || seccomp_attr_set(filter, SCMP_FLTATR_CTL_TSYNC, 1) != 0;
    // A binary tree of the allowed calls (libseccomp 2.5): a handful of comparisons per
    // system call instead of a walk down the list. Not fatal where unsupported.
    (void)seccomp_attr_set(filter, SCMP_FLTATR_CTL_OPTIMIZE, 2);
    if (failed) {
        say(report, size, "seccomp could not build the filter. ");
        seccomp_release(filter);
        return -1;
    }
    int loaded = seccomp_load(filter);
    seccomp_release(filter);
    if (loaded != 0) {
        say(report, size, "seccomp could not load the filter (%s). ", strerror(-loaded));
        return -1;
    }
    return 0;
}

// MARK: all of it

int sp_confine(const struct sp_confinement *c, int *abi_out, char *report, size_t size) {
    int applied = 0;
    if (size > 0) report[0] = 0;
    // A worker killed by the filter leaves no core file with the camera's data.
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    int root = geteuid() == 0;
    int bounded = root && drop_bounding_set() == 0;
    if (c->switch_user && root) {
        if (switch_user(c) != 0) {
            say(report, size, "could not switch to user %u (%s). ", (unsigned)c->uid, strerror(errno));
            return -1;
        }
        applied |= SP_CONFINED_USER;
    }
    if (clear_capabilities() == 0 && (bounded || !root)) applied |= SP_CONFINED_CAPABILITIES;
    else say(report, size, "could not drop every capability (%s). ", strerror(errno));
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        say(report, size, "no_new_privs failed (%s). ", strerror(errno));
        return -1;
    }
    applied |= SP_CONFINED_NO_NEW_PRIVS;
    int abi = landlock_abi();
    if (abi_out) *abi_out = abi;
    if (abi == 0) say(report, size, "this kernel has no Landlock (%s): no file and network rules. ", strerror(errno));
    else if (apply_landlock(c, abi, report, size) == 0) applied |= SP_CONFINED_LANDLOCK;
    if (apply_seccomp(c->tcp_port_count > 0, report, size) == 0) applied |= SP_CONFINED_SECCOMP;
    return applied;
}
