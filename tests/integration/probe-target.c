/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The program tests/integration/test-probes.c probes through evmond.
 *
 *   evmon-probe-target K
 *
 * prints "ready PID ADDR ATOI" (where evmon_probe_target and atoi are), waits
 * for a line on stdin, then makes K calls of evmon_probe_target(S_i, N_i)
 * and K calls of libc's atoi(A_i), prints "done" and exits 0. The values
 * come from probe_target_values() in probe-target.h, which the test uses
 * too, so both sides agree on them. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probe-target.h"

/* test-follow.c renames other builds over this program: one that differs
 * (another build id) and one without the probed function. */
#ifndef PROBE_TARGET_BUILD
#define PROBE_TARGET_BUILD "1"
#endif
#ifdef PROBE_TARGET_NO_SYMBOL
#define evmon_probe_target evmon_probe_target_renamed
#endif

long evmon_probe_target(const char *s, long n);

/* Out of line and used, so the symbol exists and every call enters it. */
__attribute__((noinline, used)) long evmon_probe_target(const char *s, long n) {
        return n * 2 + (long) strlen(s);
}

/* Called through a volatile pointer: no compiler may inline atoi (glibc's
 * headers inline it into strtol when optimising), so each call enters
 * libc's own atoi. */
static int (*volatile atoi_fn)(const char *) = atoi;

int main(int argc, char **argv) {
        char line[64];
        long sum = 0;
        long k;

        /* Not atoi: the test counts the atoi calls. */
        if (argc != 2 || (k = strtol(argv[1], NULL, 10)) <= 0 || k > PROBE_TARGET_MAX_CALLS) {
                fprintf(stderr, "usage: evmon-probe-target K (1..%d) (build %s)\n", PROBE_TARGET_MAX_CALLS,
                        PROBE_TARGET_BUILD);
                return 2;
        }
        printf("ready %d %p %p\n", (int) getpid(), (void *) evmon_probe_target, (void *) atoi_fn);
        fflush(stdout);
        if (!fgets(line, sizeof(line), stdin))
                return 3;
        for (int i = 0; i < (int) k; i++) {
                struct probe_target_call c;

                probe_target_values(i, &c);
                sum += evmon_probe_target(c.s, c.n);
        }
        for (int i = 0; i < (int) k; i++) {
                struct probe_target_call c;

                probe_target_values(i, &c);
                sum += atoi_fn(c.a);
        }
        printf("done %ld\n", sum);
        fflush(stdout);
        return 0;
}
