/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <sys/types.h>

struct config;

/* The cgroups and pids every perf fd is opened for (none: system-wide),
 * owned by targets.c; the daemon and its parts read them. */
struct targets {
        char *cgroup_mount;           /* the cgroup2 mount, NULL when there is none */
        int *cgroup_fds;              /* targets.cgroups, open */
        size_t n_cgroup_fds;
        pid_t *pids;                  /* the threads of targets.pids running at start */
        size_t n_pids;
};

/* Finds the cgroup2 mount, opens C's targets.cgroups (a missing one is a
 * config error, in *ret_error) and keeps the targets.pids that run now
 * (the others are left out with a warning; none left is an error: never
 * system-wide by accident). */
int targets_prepare(struct targets *t, const struct config *c, char **ret_error);
/* Closes the cgroup fds and frees the targets; T is empty again. */
void targets_done(struct targets *t);
