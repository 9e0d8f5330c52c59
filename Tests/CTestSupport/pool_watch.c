// The pool watch's C half: it starts the watch's thread as the test process loads (before
// any test runs, whichever suite comes first), and names the module of a code address.

#define _GNU_SOURCE
#include "shutterpipe_test_support.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

// Defined in TestSupport (Swift, @_cdecl); weak, so a test binary without it still links.
extern void shutterpipe_test_pool_watch_run(void) __attribute__((weak));

int shutterpipe_test_frame_module(const void *frame, const char **file, uintptr_t *base) {
    Dl_info info;
    if (dladdr(frame, &info) == 0 || !info.dli_fname || !info.dli_fbase) return 0;
    *file = info.dli_fname;
    *base = (uintptr_t)info.dli_fbase;
    return 1;
}

pid_t shutterpipe_test_thread_id(void) { return (pid_t)syscall(SYS_gettid); }

static void *run_watch(void *argument) {
    (void)argument;
    shutterpipe_test_pool_watch_run();
    return NULL;
}

__attribute__((constructor)) static void start_pool_watch(void) {
    if (!shutterpipe_test_pool_watch_run) return;
    pthread_t thread;
    if (pthread_create(&thread, NULL, run_watch, NULL) == 0) pthread_detach(thread);
}
