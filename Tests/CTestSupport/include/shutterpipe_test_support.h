#ifndef SHUTTERPIPE_TEST_SUPPORT_H
#define SHUTTERPIPE_TEST_SUPPORT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/// The process groups of the children a test process started, kept where a signal
/// handler can read them: when the test process is interrupted (Ctrl-C, SIGTERM from a
/// runner, a closed terminal) or exits, every group still tracked is killed, so no
/// `shutterpipe run`, camera, broker or browser outlives the tests that started it.

/// Opens a pseudo-terminal (a serial line a test plays the other end of): returns its
/// master's descriptor and writes the path of its slave (/dev/pts/N) into `name`; -1 and
/// errno on failure.
int shutterpipe_test_open_pty(char *name, size_t size);

/// Starts tracking `group` (a child started as the leader of its own process group).
/// Returns 0, or -1 when the table is full (the group is then not tracked).
int shutterpipe_test_track_group(pid_t group);

/// Stops tracking `group`.
void shutterpipe_test_untrack_group(pid_t group);

/// Sends `signal` to every tracked group; returns how many groups it reached.
int shutterpipe_test_signal_tracked_groups(int signal);

/// Installs the handlers once: SIGINT, SIGTERM, SIGHUP and SIGQUIT kill every tracked
/// group and then end the process with the signal's default action; exit() kills them too.
/// Under scripts/test-runner (SHUTTERPIPE_TEST_RUNNER_PID), a thread also waits for the
/// runner's end: if it dies, even by SIGKILL, the groups are killed and this process ends.
void shutterpipe_test_install_cleanup(void);

/// The pool watch (Tests/TestSupport/PoolWatchAll.swift):
///
/// The file of the module holding `frame` and where it was loaded; 0 when none is known.
int shutterpipe_test_frame_module(const void *frame, const char **file, uintptr_t *base);

/// The calling thread's id (gettid).
pid_t shutterpipe_test_thread_id(void);

#endif
