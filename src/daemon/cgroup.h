/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* cgroup v2 paths for targets and subscriptions. */

#include <stddef.h>
#include <stdint.h>

/* The cgroup2 mount point from /proc/mounts (caller frees). -ENOENT when
 * there is none. */
int cgroup_find_mount(char **ret);

/* Turns PATH, relative to the cgroup2 mount or absolute under it, into the
 * absolute directory (caller frees). Does not check it exists. */
int cgroup_resolve(const char *mount, const char *path, char **ret);

/* The id the kernel puts in PERF_SAMPLE_CGROUP for the cgroup at DIR. */
int cgroup_id(const char *dir, uint64_t *ret);

/* How deep below the cgroup it names a walk goes (an open fd per level). */
#define CGROUP_WALK_DEPTH_MAX 64u

/* The ids of DIR and every cgroup below it, sorted (caller frees).
 * -E2BIG when there are more than MAX, -ELOOP when the tree is deeper
 * than CGROUP_WALK_DEPTH_MAX below DIR, -ENOTDIR, -ENOENT. */
int cgroup_subtree_ids(const char *dir, size_t max, uint64_t **ret, size_t *ret_n);
