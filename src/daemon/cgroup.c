/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "evmon/cleanup.h"

int cgroup_find_mount(char **ret) {
        _cleanup_(fclosep) FILE *f = fopen("/proc/mounts", "re");
        char line[4096];

        if (!f)
                return -errno;
        while (fgets(line, sizeof(line), f)) {
                char dev[256], dir[2048], type[64];
                if (sscanf(line, "%255s %2047s %63s", dev, dir, type) != 3 || strcmp(type, "cgroup2") != 0)
                        continue;
                /* /proc/mounts escapes spaces as \040; cgroup mounts have none. */
                *ret = strdup(dir);
                return *ret ? 0 : -ENOMEM;
        }
        return -ENOENT;
}

int cgroup_resolve(const char *mount, const char *path, char **ret) {
        size_t n = strlen(mount);
        char *s;

        /* An absolute path under the mount stays; anything else is
         * relative to the mount ("/system.slice/x.service" included). */
        if (strncmp(path, mount, n) == 0 && (path[n] == '/' || path[n] == 0))
                s = strdup(path);
        else if (asprintf(&s, "%s/%s", mount, path + strspn(path, "/")) < 0)
                s = NULL;
        if (!s)
                return -ENOMEM;
        /* No trailing slash, so prefixes compare cleanly. */
        for (size_t k = strlen(s); k > 1 && s[k - 1] == '/'; k--)
                s[k - 1] = 0;
        if (strstr(s, "/../") || (strlen(s) >= 3 && strcmp(s + strlen(s) - 3, "/..") == 0)) {
                free(s);
                return -EINVAL;
        }
        *ret = s;
        return 0;
}

int cgroup_id(const char *dir, uint64_t *ret) {
        struct {
                struct file_handle fh;
                uint64_t id;
        } h = { .fh.handle_bytes = sizeof(uint64_t) };
        int mnt;

        /* The handle of a cgroup2 directory is its kernfs id, which is what
         * PERF_SAMPLE_CGROUP reports. */
        if (name_to_handle_at(AT_FDCWD, dir, &h.fh, &mnt, 0) < 0)
                return -errno;
        if (h.fh.handle_bytes != sizeof(uint64_t))
                return -EOPNOTSUPP;
        memcpy(ret, h.fh.f_handle, sizeof(uint64_t));
        return 0;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(DIR *, closedir);

/* The id of the directory open at FD (AT_EMPTY_PATH: no lookup). */
static int cgroup_id_fd(int fd, uint64_t *ret) {
        struct {
                struct file_handle fh;
                uint64_t id;
        } h = { .fh.handle_bytes = sizeof(uint64_t) };
        int mnt;

        if (name_to_handle_at(fd, "", &h.fh, &mnt, AT_EMPTY_PATH) < 0)
                return -errno;
        if (h.fh.handle_bytes != sizeof(uint64_t))
                return -EOPNOTSUPP;
        memcpy(ret, h.fh.f_handle, sizeof(uint64_t));
        return 0;
}

struct walk {
        uint64_t *ids;
        size_t n, cap, max;
};

static int walk_push(struct walk *w, uint64_t id) {
        if (w->n >= w->max)
                return -E2BIG;
        if (w->n == w->cap) {
                size_t cap = w->cap ? w->cap * 2 : 64;
                uint64_t *ids = realloc(w->ids, cap * sizeof(uint64_t));

                if (!ids)
                        return -ENOMEM;
                w->ids = ids;
                w->cap = cap;
        }
        w->ids[w->n++] = id;
        return 0;
}

/* Takes FD (a cgroup directory). Only directories are looked at: kernfs
 * gives d_type, so the ~30 control files of each cgroup cost no stat (the
 * nftw() walk this replaces stat'ed each of them: 52 ms for 1,008
 * cgroups, and a subscribe naming "/" 64 times walked it 64 times). */
static int walk_dir(struct walk *w, int fd, unsigned depth) {
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        uint64_t id = 0;
        int r;

        r = cgroup_id_fd(fd, &id);
        if (r < 0) {
                close(fd);
                return r == -ENOENT || r == -ESTALE ? 0 : r;  /* gone while we walked */
        }
        r = walk_push(w, id);
        if (r < 0) {
                close(fd);
                return r;
        }
        d = fdopendir(fd);
        if (!d) {
                r = -errno;
                close(fd);
                return r;
        }
        while ((errno = 0, de = readdir(d))) {
                int cfd;

                if (de->d_type != DT_DIR || strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                /* One open directory per level: a user who may make
                 * cgroups (a delegated subtree) decides the depth. */
                if (depth + 1 >= CGROUP_WALK_DEPTH_MAX)
                        return -ELOOP;
                cfd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (cfd < 0) {
                        if (errno == ENOENT)
                                continue;  /* removed since readdir() */
                        return -errno;
                }
                r = walk_dir(w, cfd, depth + 1);
                if (r < 0)
                        return r;
        }
        return errno > 0 ? -errno : 0;
}

static int cmp_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
        return x < y ? -1 : x > y;
}

int cgroup_subtree_ids(const char *dir, size_t max, uint64_t **ret, size_t *ret_n) {
        struct walk w = { .max = max };
        int fd, r;

        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = walk_dir(&w, fd, 0);
        if (r >= 0 && w.n == 0)
                r = -ENOENT;
        if (r < 0) {
                free(w.ids);
                return r;
        }
        qsort(w.ids, w.n, sizeof(uint64_t), cmp_u64);
        *ret = w.ids;
        *ret_n = w.n;
        return 0;
}
