/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

static uint64_t *walk_ids;
static size_t walk_n, walk_cap;
static int walk_error;

static int walk_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        uint64_t id;

        if (flag != FTW_D)
                return 0;
        if (cgroup_id(path, &id) < 0)
                return 0;  /* gone while we walked */
        if (walk_n == walk_cap) {
                size_t cap = walk_cap ? walk_cap * 2 : 64;
                uint64_t *ids = realloc(walk_ids, cap * sizeof(uint64_t));
                if (!ids) {
                        walk_error = -ENOMEM;
                        return 1;
                }
                walk_ids = ids;
                walk_cap = cap;
        }
        walk_ids[walk_n++] = id;
        return 0;
}

static int cmp_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
        return x < y ? -1 : x > y;
}

int cgroup_subtree_ids(const char *dir, uint64_t **ret, size_t *ret_n) {
        struct stat st;
        int r;

        if (stat(dir, &st) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode))
                return -ENOTDIR;
        /* nftw has no user pointer; the loop is single-threaded. */
        walk_ids = NULL;
        walk_n = walk_cap = 0;
        walk_error = 0;
        r = nftw(dir, walk_one, 16, FTW_PHYS | FTW_MOUNT);
        if (r < 0 || walk_error < 0 || walk_n == 0) {
                free(walk_ids);
                return walk_error < 0 ? walk_error : r < 0 ? -errno : -ENOENT;
        }
        qsort(walk_ids, walk_n, sizeof(uint64_t), cmp_u64);
        *ret = walk_ids;
        *ret_n = walk_n;
        walk_ids = NULL;
        return 0;
}
