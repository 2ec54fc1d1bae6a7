/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <errno.h>
#include <stddef.h>
#include <unistd.h>

/* Writes all N bytes of BUF to the blocking FD, across short writes and
 * EINTR (systemd's loop_write()). 0 or -errno. */
static inline int loop_write(int fd, const void *buf, size_t n) {
        const char *p = buf;

        while (n > 0) {
                ssize_t w = write(fd, p, n);
                if (w < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                p += w;
                n -= (size_t) w;
        }
        return 0;
}

/* Reads the blocking FD to its end (procfs, sysfs and tracefs files say
 * size 0; pipes have none) into a buffer that doubles as it fills, with a
 * NUL after the data (not counted in *RET_LEN). -EFBIG past MAX bytes
 * (0: no bound). 0 or -errno; defined in src/tracefs/tracefs.c, beside
 * error_set(), for every module and program. */
int read_full(int fd, size_t max, char **ret, size_t *ret_len);
