/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reading whole files and small sysfs attributes: see evmon/io.h. */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <unistd.h>

#include "evmon/cleanup.h"
#include "evmon/io.h"
#include "evmon/parse.h"

int read_full(int fd, size_t max, char **ret, size_t *ret_len) {
        _cleanup_(freep) char *buf = NULL;
        size_t len = 0, alloc = 0;

        for (;;) {
                ssize_t k;

                if (alloc - len < 4096 + 1) {
                        size_t n = alloc ? alloc * 2 : 8192;
                        char *nb;

                        if (max > 0 && alloc > max + 1)
                                return -EFBIG;
                        nb = realloc(buf, n);
                        if (!nb)
                                return -ENOMEM;
                        buf = nb;
                        alloc = n;
                }
                k = read(fd, buf + len, alloc - len - 1);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (k == 0)
                        break;
                len += (size_t) k;
        }
        if (max > 0 && len > max)
                return -EFBIG;
        buf[len] = '\0';
        *ret = TAKE_PTR(buf);
        if (ret_len)
                *ret_len = len;
        return 0;
}

int sysfs_read_small(const char *path, char *buf, size_t size) {
        _cleanup_(closep) int fd = -1;
        ssize_t n;

        if (!path || !buf || size == 0)
                return -EINVAL;
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        /* A sysfs attribute is read whole in one read. */
        n = read(fd, buf, size - 1);
        if (n < 0)
                return negative_errno();
        if ((size_t) n == size - 1)
                return -E2BIG;
        while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
                n--;
        buf[n] = '\0';
        return 0;
}

int sysfs_pmu_type(const char *devices, const char *pmu, uint32_t *ret) {
        char path[PATH_MAX], buf[32];
        uint64_t t;
        int r;

        if (!devices || !pmu || !ret)
                return -EINVAL;
        if ((size_t) snprintf(path, sizeof(path), "%s/%s/type", devices, pmu) >= sizeof(path))
                return -ENAMETOOLONG;
        r = sysfs_read_small(path, buf, sizeof(buf));
        if (r < 0)
                return r;
        if (parse_u64(buf, &t) < 0 || t > UINT32_MAX)
                return -EBADMSG;
        *ret = (uint32_t) t;
        return 0;
}
