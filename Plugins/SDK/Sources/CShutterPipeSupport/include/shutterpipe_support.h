// The few C calls ShutterPipeSupport needs that Swift's Glibc module does not import.
//
// glibc declares them only under _GNU_SOURCE, which a header Swift imports must not
// define (it changes glibc's struct layouts against the SwiftGlibc module), so they are
// wrapped in support.c, which defines it for itself.
#ifndef SHUTTERPIPE_SUPPORT_H
#define SHUTTERPIPE_SUPPORT_H
#include <spawn.h>

/// posix_spawn file action: close every descriptor from `from` up in the child.
int shutterpipe_spawn_close_from(posix_spawn_file_actions_t *actions, int from);

/// posix_spawn file action: change to `directory` in the child before it runs.
int shutterpipe_spawn_chdir(posix_spawn_file_actions_t *actions, const char *directory);

/// prctl(PR_SET_TIMERSLACK): how late the kernel may wake the calling thread's timers,
/// in nanoseconds (prctl is variadic, which Swift cannot call).
int shutterpipe_set_timer_slack(unsigned long nanoseconds);

/// getrusage(RUSAGE_THREAD): the calling thread's CPU time (user and system) and how many
/// times it gave up the processor by itself (slept, waited for I/O or a lock). 0, or -1.
int shutterpipe_thread_usage(long long *cpu_nanoseconds, long long *voluntary_switches);

/// pipe2(O_CLOEXEC): a pipe whose ends no child inherits by accident.
int shutterpipe_pipe_cloexec(int descriptors[2]);

/// memfd_create(MFD_CLOEXEC | MFD_ALLOW_SEALING): an anonymous file in memory, to hand
/// bytes to another process without a copy; whoever receives it can seal its size.
int shutterpipe_memfd(const char *name);

/// Seals the size of the memfd `descriptor` (F_SEAL_SHRINK | F_SEAL_GROW), so that the
/// process that sent it can no longer shrink it under a mapping (which would make reading
/// the mapping raise SIGBUS). 0, or -1 when it cannot be sealed (not a memfd, or one made
/// without sealing).
int shutterpipe_seal_size(int descriptor);

/// sync_file_range(SYNC_FILE_RANGE_WRITE): starts writing `length` bytes of the file at
/// `offset` to its disk, without waiting and without making them durable (an fsync still
/// must). 0, or -1 with errno (a pipe, or a file system that does not do it).
int shutterpipe_start_writeback(int descriptor, long long offset, long long length);

/// statfs: the magic number of the file system holding `path` (f_type), or -1.
long long shutterpipe_file_system_type(const char *path);

/// socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC): two connected ends that keep each
/// message whole.
int shutterpipe_seqpacket_pair(int ends[2]);

/// Sends one message with `count` descriptors attached (SCM_RIGHTS), MSG_NOSIGNAL.
/// Returns the bytes sent, or -1 with errno.
long shutterpipe_send_message(int socket, const void *bytes, unsigned long length, const int *descriptors, int count);

/// Receives one message into `buffer` and up to `capacity` descriptors (close-on-exec).
/// Returns the bytes received (0 at end of input), or -1 with errno; `received` is the
/// number of descriptors that came; `truncated` is set when the message did not fit.
long shutterpipe_receive_message(int socket, void *buffer, unsigned long length, int *descriptors, int capacity, int *received, int *truncated);

/// The user ID of the process at the other end of a Unix socket (SO_PEERCRED); 0 or -1.
int shutterpipe_peer_uid(int socket, unsigned int *uid);


/// Binds `socket` to the AF_UNIX path `path` with the file mode 0666 & ~`mask`, from a
/// thread of its own whose umask is private (unshare(CLONE_FS)): the process's umask,
/// which every other thread's files and folders get, never changes. 0, or -1 with errno.
int shutterpipe_bind_unix_masked(int socket, const char *path, unsigned int mask);

/// renameat2(RENAME_NOREPLACE): moves `from` (in the folder `fromDirectory`) to `to` (in
/// `toDirectory`), failing with EEXIST instead of replacing a file; where the file system
/// has no renameat2 (EINVAL, ENOSYS), a hard link and an unlink, which never replace
/// either. 0, or -1 with errno.
int shutterpipe_renameat_noreplace(int fromDirectory, const char *from, int toDirectory, const char *to);

/// A piece of a message: its bytes and how many.
typedef struct {
    const void *bytes;
    unsigned long length;
} shutterpipe_piece;

/// Whether this CPU has the SHA extensions (and SSSE3, SSE4.1) that
/// `shutterpipe_sha256_pair` runs on.
int shutterpipe_sha256_pair_supported(void);

/// Whether `shutterpipe_sha256_pair` is also faster than hashing one message after the
/// other here: supported, and this file compiled optimised.
int shutterpipe_sha256_pair_fast(void);

/// The SHA-256 of two messages, each given as pieces in order, hashed together on one
/// core: about twice the bytes a second of hashing them one after the other. Only when
/// `shutterpipe_sha256_pair_supported()`.
void shutterpipe_sha256_pair(const shutterpipe_piece *a, int aCount, const shutterpipe_piece *b, int bCount,
                             unsigned char aDigest[32], unsigned char bDigest[32]);
#endif
