/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* targets: the cgroups and pids every perf fd is opened for; none means
 * system-wide. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "daemon.h"
#include "targets.h"
#include "evmon/error.h"
#include "evmon/log.h"

static int prepare_cgroups(struct daemon *d, char **ret_error) {
        struct config *c = d->config;
        size_t n = 0;
        int r;

        while (c->cgroups[n])
                n++;
        if (!d->cgroup_mount)
                return error_set(ret_error, -EINVAL, "%s: no cgroup2 file system is mounted: cgroup targets need cgroup v2",
                                 c->cgroups_where[0]);
        d->cgroup_fds = calloc(n, sizeof(int));
        if (!d->cgroup_fds)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                _cleanup_(freep) char *dir = NULL;
                int fd;

                r = cgroup_resolve(d->cgroup_mount, c->cgroups[i], &dir);
                if (r < 0)
                        return error_set(ret_error, -EINVAL, "%s: \"%s\" is not a cgroup path under %s",
                                         c->cgroups_where[i], c->cgroups[i], d->cgroup_mount);
                fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fd < 0)
                        return error_set(ret_error, -EINVAL, "%s: no cgroup %s (%s): create it, or fix the path (relative to %s)",
                                         c->cgroups_where[i], dir, strerror(errno), d->cgroup_mount);
                d->cgroup_fds[d->n_cgroup_fds++] = fd;
        }
        return 0;
}

/* PID's threads as they are now, appended to d->pids (room for *CAP).
 * An event opened for one task with inherit sees that task and what it
 * forks or clones afterwards, not the threads the process has already:
 * each of those is opened too, as perf record -p does. -ESRCH when PID is
 * not running. */
static int add_threads(struct daemon *d, size_t *cap, pid_t pid) {
        char path[64];
        struct dirent *de;
        DIR *dir;

        snprintf(path, sizeof(path), "/proc/%d/task", (int) pid);
        dir = opendir(path);
        if (!dir)
                return errno == ENOENT ? -ESRCH : -errno;
        while ((de = readdir(dir))) {
                char *end;
                long tid = strtol(de->d_name, &end, 10);

                if (*end || tid <= 0)
                        continue;
                if (d->n_pids == *cap) {
                        pid_t *p = reallocarray(d->pids, *cap * 2, sizeof(pid_t));

                        if (!p) {
                                closedir(dir);
                                return -ENOMEM;
                        }
                        d->pids = p;
                        *cap *= 2;
                }
                d->pids[d->n_pids++] = (pid_t) tid;
        }
        closedir(dir);
        return 0;
}

static int prepare_pids(struct daemon *d, char **ret_error) {
        struct config *c = d->config;
        size_t cap = c->n_pids;
        int r;

        d->pids = calloc(cap, sizeof(pid_t));
        if (!d->pids)
                return -ENOMEM;
        for (size_t i = 0; i < c->n_pids; i++) {
                r = add_threads(d, &cap, c->pids[i]);
                if (r == -ESRCH) {
                        log_warning("%s: targets.pids[%zu]: no process %d is running; left out",
                                    c->path, i, (int) c->pids[i]);
                        continue;
                }
                if (r < 0)
                        return error_set(ret_error, r, "%s: targets.pids[%zu]: cannot list the threads of %d: %s",
                                         c->path, i, (int) c->pids[i], strerror(-r));
        }
        /* Never fall back to system-wide because the targets are gone. */
        if (d->n_pids == 0 && !d->n_cgroup_fds)
                return error_set(ret_error, -EINVAL, "%s: none of targets.pids is running: nothing to watch", c->path);
        return 0;
}

int daemon_prepare_targets(struct daemon *d, char **ret_error) {
        struct config *c = d->config;
        int r;

        r = cgroup_find_mount(&d->cgroup_mount);
        if (r < 0 && r != -ENOENT)
                return r;
        if (c->cgroups && c->cgroups[0]) {
                r = prepare_cgroups(d, ret_error);
                if (r < 0)
                        return r;
        }
        if (c->n_pids > 0)
                return prepare_pids(d, ret_error);
        return 0;
}

void daemon_targets_done(struct daemon *d) {
        for (size_t i = 0; i < d->n_cgroup_fds; i++)
                safe_close(d->cgroup_fds[i]);
        free(d->cgroup_fds);
        d->cgroup_fds = NULL;
        d->n_cgroup_fds = 0;
        free(d->cgroup_mount);
        d->cgroup_mount = NULL;
        free(d->pids);
        d->pids = NULL;
        d->n_pids = 0;
}
