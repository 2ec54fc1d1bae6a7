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
#include "config.h"
#include "targets.h"
#include "evmon/error.h"
#include "evmon/log.h"
#include "evmon/parse.h"

static int prepare_cgroups(struct targets *t, const struct config *c, char **ret_error) {
        size_t n = 0;
        int r;

        while (c->cgroups[n])
                n++;
        if (!t->cgroup_mount)
                return error_set(ret_error, -EINVAL, "%s: no cgroup2 file system is mounted: cgroup targets need cgroup v2",
                                 c->cgroups_where[0]);
        t->cgroup_fds = calloc(n, sizeof(int));
        if (!t->cgroup_fds)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                _cleanup_(freep) char *dir = NULL;
                int fd;

                r = cgroup_resolve(t->cgroup_mount, c->cgroups[i], &dir);
                if (r < 0)
                        return error_set(ret_error, -EINVAL, "%s: \"%s\" is not a cgroup path under %s",
                                         c->cgroups_where[i], c->cgroups[i], t->cgroup_mount);
                fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fd < 0)
                        return error_set(ret_error, -EINVAL, "%s: no cgroup %s (%s): create it, or fix the path (relative to %s)",
                                         c->cgroups_where[i], dir, strerror(errno), t->cgroup_mount);
                t->cgroup_fds[t->n_cgroup_fds++] = fd;
        }
        return 0;
}

/* PID's threads as they are now, appended to t->pids (room for *CAP).
 * An event opened for one task with inherit sees that task and what it
 * forks or clones afterwards, not the threads the process has already:
 * each of those is opened too, as perf record -p does. -ESRCH when PID is
 * not running. */
static int add_threads(struct targets *t, size_t *cap, pid_t pid) {
        char path[64];
        struct dirent *de;
        DIR *dir;

        snprintf(path, sizeof(path), "/proc/%d/task", (int) pid);
        dir = opendir(path);
        if (!dir)
                return errno == ENOENT ? -ESRCH : -errno;
        while ((de = readdir(dir))) {
                pid_t tid;

                if (parse_pid(de->d_name, &tid) < 0)
                        continue;
                if (t->n_pids == *cap) {
                        pid_t *p = reallocarray(t->pids, *cap * 2, sizeof(pid_t));

                        if (!p) {
                                closedir(dir);
                                return -ENOMEM;
                        }
                        t->pids = p;
                        *cap *= 2;
                }
                t->pids[t->n_pids++] = (pid_t) tid;
        }
        closedir(dir);
        return 0;
}

static int prepare_pids(struct targets *t, const struct config *c, char **ret_error) {
        size_t cap = c->n_pids;
        int r;

        t->pids = calloc(cap, sizeof(pid_t));
        if (!t->pids)
                return -ENOMEM;
        for (size_t i = 0; i < c->n_pids; i++) {
                r = add_threads(t, &cap, c->pids[i]);
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
        if (t->n_pids == 0 && !t->n_cgroup_fds)
                return error_set(ret_error, -EINVAL, "%s: none of targets.pids is running: nothing to watch", c->path);
        return 0;
}

int targets_prepare(struct targets *t, const struct config *c, char **ret_error) {
        int r;

        r = cgroup_find_mount(&t->cgroup_mount);
        if (r < 0 && r != -ENOENT)
                return r;
        if (c->cgroups && c->cgroups[0]) {
                r = prepare_cgroups(t, c, ret_error);
                if (r < 0)
                        return r;
        }
        if (c->n_pids > 0)
                return prepare_pids(t, c, ret_error);
        return 0;
}

void targets_done(struct targets *t) {
        for (size_t i = 0; i < t->n_cgroup_fds; i++)
                safe_close(t->cgroup_fds[i]);
        free(t->cgroup_fds);
        t->cgroup_fds = NULL;
        t->n_cgroup_fds = 0;
        free(t->cgroup_mount);
        t->cgroup_mount = NULL;
        free(t->pids);
        t->pids = NULL;
        t->n_pids = 0;
}
