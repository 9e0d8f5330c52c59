// The few C calls ShutterPipeSupport needs that Swift's Glibc module does not import.
//
// glibc declares them only under _GNU_SOURCE, which a header Swift imports must not
// define (it changes glibc's struct layouts against the SwiftGlibc module), so they are
// wrapped in spawn.c, which defines it for itself.
#ifndef SHUTTERPIPE_SUPPORT_H
#define SHUTTERPIPE_SUPPORT_H
#include <spawn.h>

/// posix_spawn file action: close every descriptor from `from` up in the child.
int shutterpipe_spawn_close_from(posix_spawn_file_actions_t *actions, int from);

/// posix_spawn file action: change to `directory` in the child before it runs.
int shutterpipe_spawn_chdir(posix_spawn_file_actions_t *actions, const char *directory);

/// pipe2(O_CLOEXEC): a pipe whose ends no child inherits by accident.
int shutterpipe_pipe_cloexec(int descriptors[2]);

#endif
