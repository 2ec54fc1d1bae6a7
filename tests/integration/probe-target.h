/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The calls evmon-probe-target makes, shared with test-probes.c. */

#include <stdio.h>
#include <string.h>

#define PROBE_TARGET_MAX_CALLS 10000

struct probe_target_call {
        char s[64];     /* evmon_probe_target's string: quotes, a backslash, UTF-8 */
        long n;         /* its number: negative and positive, beyond 32 bits */
        long ret;       /* what it returns */
        char a[24];     /* the string passed to atoi */
};

static inline void probe_target_values(int i, struct probe_target_call *c) {
        snprintf(c->s, sizeof(c->s), "call \"%d\" \\ \xc3\xa9t\xc3\xa9 #%d", i, i * 31);
        c->n = ((long) i - 50) * 100000007L;
        c->ret = c->n * 2 + (long) strlen(c->s);
        snprintf(c->a, sizeof(c->a), "%d", 7000 + i * 13);
}
