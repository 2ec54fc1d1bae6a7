/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Numbers from text: see evmon/parse.h. */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "evmon/parse.h"

int parse_u64(const char *s, uint64_t *ret) {
        unsigned long long v;
        char *end;

        /* strtoull() takes "-1" as 2^64-1 and "" as 0: neither is a count. */
        if (!s || !*s || *s == '-' || !ret)
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 0);
        if (errno != 0 || *end != '\0')
                return -EINVAL;
        *ret = v;
        return 0;
}

int parse_pid(const char *s, pid_t *ret) {
        unsigned long v = 0;

        /* Digits only: a /proc entry's name, never " 1" or "+1". */
        if (!s || !*s || !ret)
                return -EINVAL;
        for (; *s; s++) {
                if (*s < '0' || *s > '9')
                        return -EINVAL;
                v = v * 10 + (unsigned long) (*s - '0');
                if (v > INT32_MAX)
                        return -EINVAL;
        }
        if (v == 0)
                return -EINVAL;
        *ret = (pid_t) v;
        return 0;
}
