#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <fcntl.h>
#include <spawn.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <stdio.h>
#include <unistd.h>
#include "shutterpipe_support.h"

int shutterpipe_spawn_close_from(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

int shutterpipe_spawn_chdir(posix_spawn_file_actions_t *actions, const char *directory) {
    return posix_spawn_file_actions_addchdir_np(actions, directory);
}

int shutterpipe_pipe_cloexec(int descriptors[2]) {
    return pipe2(descriptors, O_CLOEXEC);
}

int shutterpipe_start_writeback(int descriptor, long long offset, long long length) {
    return sync_file_range(descriptor, offset, length, SYNC_FILE_RANGE_WRITE);
}

int shutterpipe_memfd(const char *name) {
    return memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
}

int shutterpipe_seal_size(int descriptor) {
    if (fcntl(descriptor, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) != 0) return -1;
    int seals = fcntl(descriptor, F_GET_SEALS);
    return seals >= 0 && (seals & F_SEAL_SHRINK) ? 0 : -1;
}

int shutterpipe_seqpacket_pair(int ends[2]) {
    return socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ends);
}

long shutterpipe_send_message(int socket, const void *bytes, unsigned long length, const int *descriptors, int count) {
    struct iovec part = { (void *)bytes, length };
    struct msghdr message;
    memset(&message, 0, sizeof message);
    message.msg_iov = &part;
    message.msg_iovlen = 1;
    char control[CMSG_SPACE(sizeof(int) * 64)];
    if (count > 64) { errno = EINVAL; return -1; }
    if (count > 0) {
        memset(control, 0, sizeof control);
        message.msg_control = control;
        message.msg_controllen = CMSG_SPACE(sizeof(int) * count);
        struct cmsghdr *header = CMSG_FIRSTHDR(&message);
        header->cmsg_level = SOL_SOCKET;
        header->cmsg_type = SCM_RIGHTS;
        header->cmsg_len = CMSG_LEN(sizeof(int) * count);
        memcpy(CMSG_DATA(header), descriptors, sizeof(int) * count);
    }
    long sent;
    do { sent = sendmsg(socket, &message, MSG_NOSIGNAL); } while (sent < 0 && errno == EINTR);
    return sent;
}

long shutterpipe_receive_message(int socket, void *buffer, unsigned long length, int *descriptors, int capacity, int *received, int *truncated) {
    struct iovec part = { buffer, length };
    struct msghdr message;
    memset(&message, 0, sizeof message);
    message.msg_iov = &part;
    message.msg_iovlen = 1;
    char control[CMSG_SPACE(sizeof(int) * 64)];
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    long count;
    do { count = recvmsg(socket, &message, MSG_CMSG_CLOEXEC); } while (count < 0 && errno == EINTR);
    *received = 0;
    *truncated = (message.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0;
    if (count < 0) return count;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
        int n = (int)((header->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        int *incoming = (int *)CMSG_DATA(header);
        for (int i = 0; i < n; i++) {
            if (*received < capacity) descriptors[(*received)++] = incoming[i];
            else close(incoming[i]);
        }
    }
    return count;
}

int shutterpipe_peer_uid(int socket, unsigned int *uid) {
    struct ucred credentials;
    socklen_t length = sizeof credentials;
    if (getsockopt(socket, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -1;
    *uid = credentials.uid;
    return 0;
}

#include <sys/prctl.h>

int shutterpipe_set_timer_slack(unsigned long nanoseconds) {
    return prctl(PR_SET_TIMERSLACK, nanoseconds, 0, 0, 0);
}

int shutterpipe_thread_usage(long long *cpu_nanoseconds, long long *voluntary_switches) {
    struct rusage usage;
    if (getrusage(RUSAGE_THREAD, &usage) != 0) return -1;
    *cpu_nanoseconds = ((long long)usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000000000LL
                     + ((long long)usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1000LL;
    *voluntary_switches = usage.ru_nvcsw;
    return 0;
}

struct masked_bind {
    int socket;
    const char *path;
    unsigned int mask;
    int result;
    int error;
};

static void *masked_bind_thread(void *argument) {
    struct masked_bind *job = argument;
    // A private fs context (cwd, root, umask) for this thread alone.
    if (unshare(CLONE_FS) != 0) { job->result = -1; job->error = errno; return NULL; }
    umask(job->mask);
    struct sockaddr_un address;
    memset(&address, 0, sizeof address);
    address.sun_family = AF_UNIX;
    size_t length = strlen(job->path);
    if (length >= sizeof address.sun_path) { job->result = -1; job->error = ENAMETOOLONG; return NULL; }
    memcpy(address.sun_path, job->path, length);
    job->result = bind(job->socket, (struct sockaddr *)&address, sizeof address);
    job->error = job->result == 0 ? 0 : errno;
    return NULL;
}

int shutterpipe_bind_unix_masked(int socket, const char *path, unsigned int mask) {
    struct masked_bind job = { socket, path, mask, -1, 0 };
    pthread_t thread;
    int started = pthread_create(&thread, NULL, masked_bind_thread, &job);
    if (started != 0) { errno = started; return -1; }
    pthread_join(thread, NULL);
    if (job.result != 0) errno = job.error;
    return job.result;
}

int shutterpipe_renameat_noreplace(int fromDirectory, const char *from, int toDirectory, const char *to) {
    if (renameat2(fromDirectory, from, toDirectory, to, RENAME_NOREPLACE) == 0) return 0;
    if (errno != EINVAL && errno != ENOSYS) return -1;
    if (linkat(fromDirectory, from, toDirectory, to, 0) != 0) return -1;
    unlinkat(fromDirectory, from, 0);
    return 0;
}

long long shutterpipe_file_system_type(const char *path) {
    struct statfs info;
    if (statfs(path, &info) != 0) return -1;
    return (long long)(unsigned long)info.f_type & 0xffffffffLL;
}
