/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "peer.h"
#include "evmon/cleanup.h"

int peer_from_fd(int fd, struct peer *ret) {
        socklen_t len = sizeof(ret->cred);

        *ret = (struct peer) {};
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &ret->cred, &len) < 0)
                return -errno;
        len = sizeof(ret->groups);
        /* More groups than fit (ERANGE), or none told (a kernel before
         * 4.13): a group left out may deny what "other" allows (mode 0604
         * of that group), so nothing is judged for such a peer
         * (peer_may_read() refuses); its groups that fit still count
         * for what they grant elsewhere. */
        if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, ret->groups, &len) < 0) {
                ret->groups_unknown = true;
                len = errno == ERANGE ? sizeof(ret->groups) : 0;
        }
        ret->n_groups = len / sizeof(gid_t);
        return 0;
}

bool peer_in_group(const struct peer *p, gid_t gid) {
        if (p->cred.gid == gid)
                return true;
        for (size_t i = 0; i < p->n_groups; i++)
                if (p->groups[i] == gid)
                        return true;
        return false;
}

/* The rwx bits of ST's mode that apply to P (owner, group or other class,
 * as the kernel's acl_permission_check() picks them without an ACL). */
static unsigned class_bits(const struct peer *p, const struct stat *st) {
        if (st->st_uid == p->cred.uid)
                return (st->st_mode >> 6) & 7;
        if (peer_in_group(p, st->st_gid))
                return (st->st_mode >> 3) & 7;
        return st->st_mode & 7;
}

static bool has_acl(const char *path) {
        /* An ACL's named entries can grant, or deny, what the class bits
         * say; then the bits alone do not tell what P may do. */
        return lgetxattr(path, "system.posix_acl_access", NULL, 0) >= 0;
}

static int fail_at(const char *component, int r, char **ret_component) {
        *ret_component = strdup(component);
        return r;
}

int peer_may_read(const struct peer *p, const char *path, char **ret_component) {
        _cleanup_(freep) char *buf = NULL;
        struct stat dir, st;

        *ret_component = NULL;
        if (p->groups_unknown)
                return fail_at("/", -E2BIG, ret_component);
        /* A realpath(3): absolute, no "//", ".", ".." or trailing '/'. */
        if (path[0] != '/' || strstr(path, "//") || strstr(path, "/./") || strstr(path, "/../") ||
            (strlen(path) > 1 && path[strlen(path) - 1] == '/'))
                return -EINVAL;
        buf = strdup(path);
        if (!buf)
                return -ENOMEM;
        if (lstat("/", &dir) < 0)
                return fail_at("/", -errno, ret_component);
        if (has_acl("/"))
                return fail_at("/", -EOPNOTSUPP, ret_component);
        if (!(class_bits(p, &dir) & 1))
                return fail_at("/", -EACCES, ret_component);
        for (char *s = buf + 1; *s;) {
                char *end = strchrnul(s, '/'), saved = *end;
                bool last = saved == 0;

                *end = 0;
                if (lstat(buf, &st) < 0)
                        return fail_at(buf, -errno, ret_component);
                if (has_acl(buf))
                        return fail_at(buf, -EOPNOTSUPP, ret_component);
                /* P may write the directory that holds this component (or
                 * owns it, and may chmod it so): it could rename the
                 * component away and put another in its place between
                 * this check and the kernel's lookup, unless the sticky
                 * bit keeps it to what P owns. */
                if (dir.st_uid == p->cred.uid ||
                    ((class_bits(p, &dir) & 2) && (!(dir.st_mode & S_ISVTX) || st.st_uid == p->cred.uid)))
                        return fail_at(buf, -EPERM, ret_component);
                if (!last) {
                        if (!S_ISDIR(st.st_mode))
                                return fail_at(buf, -ENOTDIR, ret_component);
                        if (!(class_bits(p, &st) & 1))
                                return fail_at(buf, -EACCES, ret_component);
                } else {
                        if (S_ISDIR(st.st_mode))
                                return fail_at(buf, -EISDIR, ret_component);
                        if (!S_ISREG(st.st_mode) || !(class_bits(p, &st) & 4))
                                return fail_at(buf, -EACCES, ret_component);
                }
                *end = saved;
                dir = st;
                s = last ? end : end + 1;
        }
        return 0;
}
