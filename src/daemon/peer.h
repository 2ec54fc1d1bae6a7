/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Who is at the other end of a client socket, and what that peer could
 * read itself: evmond runs with CAP_DAC_READ_SEARCH, so a file a client
 * names must be judged by the client's credentials, not evmond's. */

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

#define PEER_GROUPS_MAX 256

struct peer {
        struct ucred cred;              /* SO_PEERCRED */
        gid_t groups[PEER_GROUPS_MAX];  /* SO_PEERGROUPS: supplementary groups */
        size_t n_groups;
        bool groups_unknown;            /* in more groups than fit, or not told */
};

/* The credentials the kernel fixed when the client on FD connected. */
int peer_from_fd(int fd, struct peer *ret);

bool peer_in_group(const struct peer *p, gid_t gid);

/* Whether P may read the regular file at PATH (absolute, with no symlink:
 * a realpath(3)), judged by mode bits along the path as the kernel would
 * for P: search on every directory, read on the file. -EACCES when not,
 * -EPERM when P could swap a component after this check (it may write a
 * directory on the path and the sticky bit does not stop it), -EOPNOTSUPP
 * when a component has a POSIX ACL (mode bits would not tell), -E2BIG
 * when P's groups are not all known (more than PEER_GROUPS_MAX), -ENOTDIR
 * or -EISDIR or -ENOENT as lstat() finds; *ret_component names the path
 * up to the component that failed (caller frees; NULL on success). */
int peer_may_read(const struct peer *p, const char *path, char **ret_component);
