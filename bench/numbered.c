/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * numbered: COUNT numbered calls for bench/stress, call K being
 * getpgid(BASE + K) (no such pid: ESRCH, nothing else happens), in a cycle
 * of three arrival shapes, so that a consumer can count each call once:
 *
 *   lone     100 calls, 300 us apart (each alone in evmond's rings)
 *   burst    4,096 calls in bursts of 64, 1 ms apart
 *   steady   4,096 calls back to back
 *
 *   numbered --count C [--base B]
 *
 * Prints {"ready":true,"pid":P} and starts on a line on stdin; prints
 * {"calls":C} when done.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static void pause_us(long us) {
        struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = (us % 1000000) * 1000 };

        nanosleep(&ts, NULL);
}

int main(int argc, char **argv) {
        uint64_t count = 1000000, base = 1000000000, k = 0;
        char line[16];

        for (int i = 1; i + 1 < argc; i += 2) {
                if (strcmp(argv[i], "--count") == 0)
                        count = strtoull(argv[i + 1], NULL, 10);
                else if (strcmp(argv[i], "--base") == 0)
                        base = strtoull(argv[i + 1], NULL, 10);
                else {
                        fprintf(stderr, "numbered: unknown option %s\n", argv[i]);
                        return 2;
                }
        }
        printf("{\"ready\":true,\"pid\":%d}\n", (int) getpid());
        fflush(stdout);
        if (!fgets(line, sizeof(line), stdin))
                return 1;

        while (k < count) {
                for (unsigned i = 0; i < 100 && k < count; i++) {
                        syscall(SYS_getpgid, (pid_t) (base + k++));
                        pause_us(300);
                }
                for (unsigned i = 0; i < 4096 && k < count; i++) {
                        syscall(SYS_getpgid, (pid_t) (base + k++));
                        if (i % 64 == 63)
                                pause_us(1000);
                }
                for (unsigned i = 0; i < 4096 && k < count; i++)
                        syscall(SYS_getpgid, (pid_t) (base + k++));
        }
        printf("{\"calls\":%" PRIu64 "}\n", k);
        return 0;
}
