/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Thin edges: the perf_event_open syscall and the list of online CPUs. */

#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "evmon/cleanup.h"
#include "evmon/monitor.h"

/* Far more CPUs than Linux supports (CONFIG_NR_CPUS max is 8192): rejects
 * absurd ranges before they become huge allocations. */
#define CPU_MAX 65536

int perf_event_open_fd(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd, unsigned long flags) {
        long fd;

        if (!attr)
                return -EINVAL;
        if (attr->size == 0)
                attr->size = sizeof(*attr);

        /* No glibc wrapper. Close-on-exec from the start: the daemon may
         * spawn helpers, and they must not keep our events alive. */
        fd = syscall(__NR_perf_event_open, attr, pid, cpu, group_fd, flags | PERF_FLAG_FD_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        return (int) fd;
}

static int cmp_int(const void *a, const void *b) {
        int x = *(const int *) a, y = *(const int *) b;

        return (x > y) - (x < y);
}

static int parse_cpu(const char **p, int *ret) {
        char *end;
        long v;

        if (**p < '0' || **p > '9')
                return -EINVAL;
        errno = 0;
        v = strtol(*p, &end, 10);
        if (errno != 0 || v >= CPU_MAX)
                return -EINVAL;
        *p = end;
        *ret = (int) v;
        return 0;
}

int perf_parse_cpu_list(const char *s, int **ret, size_t *ret_n) {
        _cleanup_(freep) int *cpus = NULL;
        size_t n = 0, allocated = 0, k;
        const char *p = s;
        int r;

        if (!s || !ret || !ret_n)
                return -EINVAL;

        p += strspn(p, " \t\n");
        while (*p != '\0') {      /* an empty list is valid ("offline" often is) */
                int lo, hi;

                r = parse_cpu(&p, &lo);
                if (r < 0)
                        return r;
                hi = lo;
                if (*p == '-') {
                        p++;
                        r = parse_cpu(&p, &hi);
                        if (r < 0)
                                return r;
                        if (hi < lo)
                                return -EINVAL;
                }

                for (int cpu = lo; cpu <= hi; cpu++) {
                        if (n == allocated) {
                                size_t na = allocated ? allocated * 2 : 16;
                                int *q;

                                if (na > CPU_MAX * 2)
                                        return -EINVAL;
                                q = realloc(cpus, na * sizeof(*cpus));
                                if (!q)
                                        return -ENOMEM;
                                cpus = q;
                                allocated = na;
                        }
                        cpus[n++] = cpu;
                }

                if (*p == ',') {
                        p++;
                        if (*p < '0' || *p > '9')
                                return -EINVAL;
                        continue;
                }
                p += strspn(p, " \t\n");
                if (*p != '\0')
                        return -EINVAL;
        }

        if (n > 0) {
                qsort(cpus, n, sizeof(*cpus), cmp_int);
                k = 1;
                for (size_t i = 1; i < n; i++)
                        if (cpus[i] != cpus[k - 1])
                                cpus[k++] = cpus[i];
                n = k;
        }

        *ret = TAKE_PTR(cpus);
        *ret_n = n;
        return 0;
}

int perf_online_cpus(int **ret, size_t *ret_n) {
        return perf_cpu_list("online", ret, ret_n);
}

int perf_cpu_list(const char *which, int **ret, size_t *ret_n) {
        _cleanup_(closep) int fd = -1;
        char buf[4096], path[64];
        ssize_t n;

        if (!which || !ret || !ret_n)
                return -EINVAL;

        snprintf(path, sizeof(path), "/sys/devices/system/cpu/%s", which);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();

        /* A sysfs attribute is read whole in one read. */
        n = read(fd, buf, sizeof(buf) - 1);
        if (n < 0)
                return negative_errno();
        if ((size_t) n == sizeof(buf) - 1)
                return -E2BIG;
        buf[n] = '\0';

        return perf_parse_cpu_list(buf, ret, ret_n);
}
