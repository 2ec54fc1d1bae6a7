/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* src/basic/io.c: whole files and small sysfs attributes, for every
 * module (library modules and programs alike). */

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
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
 * (0: no bound). 0 or -errno. */
int read_full(int fd, size_t max, char **ret, size_t *ret_len);

/* Reads a small sysfs or tracefs attribute at PATH whole into BUF (SIZE
 * bytes), NUL-terminated, trailing newlines and spaces dropped. -E2BIG
 * when it does not fit. */
int sysfs_read_small(const char *path, char *buf, size_t size);

/* The perf type number of PMU (DEVICES/PMU/type, DEVICES being
 * /sys/bus/event_source/devices or a test's copy): the one reader of it
 * for monitor's PMU events and tracefs' kprobe/uprobe PMUs. 0, -ENOENT
 * when there is no such PMU, -EBADMSG when the file is not a 32-bit
 * number, or another -errno. */
int sysfs_pmu_type(const char *devices, const char *pmu, uint32_t *ret);
