/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

struct daemon;

/* Opens targets.cgroups (a missing one is a config error, in *ret_error)
 * and keeps the targets.pids that run now (the others are left out with a
 * warning; none left is an error: never system-wide by accident). */
int daemon_prepare_targets(struct daemon *d, char **ret_error);
/* Closes the cgroup fds and frees the targets. */
void daemon_targets_done(struct daemon *d);
