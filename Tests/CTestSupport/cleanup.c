#include "shutterpipe_test_support.h"

#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

// A fixed table of atomics: a signal handler may read it at any moment, so no lock and
// no allocation. A test process starts a few hundred children at most.
enum { SLOTS = 4096 };
static _Atomic pid_t groups[SLOTS];
static atomic_flag installed = ATOMIC_FLAG_INIT;

int shutterpipe_test_track_group(pid_t group) {
    if (group <= 0) return -1;
    for (int index = 0; index < SLOTS; index++) {
        pid_t empty = 0;
        if (atomic_compare_exchange_strong(&groups[index], &empty, group)) return 0;
    }
    return -1;
}

void shutterpipe_test_untrack_group(pid_t group) {
    for (int index = 0; index < SLOTS; index++) {
        pid_t expected = group;
        if (atomic_compare_exchange_strong(&groups[index], &expected, 0)) return;
    }
}

int shutterpipe_test_signal_tracked_groups(int signal) {
    int reached = 0;
    for (int index = 0; index < SLOTS; index++) {
        pid_t group = atomic_load(&groups[index]);
        if (group > 0 && kill(-group, signal) == 0) reached++;
    }
    return reached;
}

static void on_interrupt(int signal) {
    shutterpipe_test_signal_tracked_groups(SIGKILL);
    // SA_RESETHAND restored the default action: the process ends as the signal says.
    raise(signal);
}

static void at_exit(void) {
    shutterpipe_test_signal_tracked_groups(SIGKILL);
}

// Waits on a pidfd of the test runner (scripts/test-runner), and when the runner is gone
// (killed with SIGKILL, so it could not stop this process itself), kills every tracked
// group and ends this process: nobody would read its results, and a test that hangs
// would otherwise keep it, and what it started, alive for good.
static void *watch_runner(void *argument) {
    int descriptor = (int)(intptr_t)argument;
    struct pollfd ended = {.fd = descriptor, .events = POLLIN};
    while (poll(&ended, 1, -1) < 0 && errno == EINTR) {}
    shutterpipe_test_signal_tracked_groups(SIGKILL);
    _exit(128 + SIGKILL);
    return NULL;
}

static void watch_runner_if_any(void) {
    const char *text = getenv("SHUTTERPIPE_TEST_RUNNER_PID");
    long runner = text ? strtol(text, NULL, 10) : 0;
    if (runner <= 0) return;
    int descriptor = (int)syscall(SYS_pidfd_open, (pid_t)runner, 0);
    if (descriptor < 0) return;  // already gone, or no pidfds: nothing to watch
    pthread_t thread;
    if (pthread_create(&thread, NULL, watch_runner, (void *)(intptr_t)descriptor) == 0) pthread_detach(thread);
}

void shutterpipe_test_install_cleanup(void) {
    if (atomic_flag_test_and_set(&installed)) return;
    watch_runner_if_any();
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_interrupt;
    action.sa_flags = SA_RESETHAND;
    sigemptyset(&action.sa_mask);
    int signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    for (unsigned index = 0; index < sizeof signals / sizeof signals[0]; index++) {
        struct sigaction previous;
        // A signal this process was told to ignore (nohup) stays ignored.
        if (sigaction(signals[index], NULL, &previous) == 0 && previous.sa_handler == SIG_IGN) continue;
        sigaction(signals[index], &action, NULL);
    }
    atexit(at_exit);
}
