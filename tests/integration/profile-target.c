/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The program tests/integration/test-profile.py profiles through evmond.
 *
 *   evmon-profile-target SECONDS [COMM]
 *
 * takes COMM as its name (prctl; a hostile one tests the escaping),
 * prints {"pid":P}, waits for a line on stdin, then spins SECONDS of CPU
 * time in evmon_profile_outer(), which calls evmon_profile_hot() for two
 * units of work and evmon_profile_warm() for one, by turns: a flame graph
 * of it shows hot twice as wide as warm, both above outer. Built with
 * frame pointers, so the callchains unwind. */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

void evmon_profile_hot(void);
void evmon_profile_warm(void);
void evmon_profile_outer(double end);

static volatile uint64_t sink;

static double cpu_seconds(void) {
        struct timespec t;

        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
        return (double) t.tv_sec + (double) t.tv_nsec / 1e9;
}

__attribute__((noinline)) static void work(int units) {
        volatile uint64_t x = sink;

        for (int i = 0; i < units * 200000; i++)
                x = x * 6364136223846793005ULL + 1;
        sink = x;
}

__attribute__((noinline, used)) void evmon_profile_hot(void) {
        work(2);
        __asm__ volatile("" ::: "memory");     /* not a tail call: this frame stays */
}

__attribute__((noinline, used)) void evmon_profile_warm(void) {
        work(1);
        __asm__ volatile("" ::: "memory");
}

__attribute__((noinline, used)) void evmon_profile_outer(double end) {
        while (cpu_seconds() < end) {
                evmon_profile_hot();
                evmon_profile_warm();
        }
}

int main(int argc, char **argv) {
        double seconds = argc > 1 ? atof(argv[1]) : 1.0;
        char line[16];

        if (argc > 2)
                (void) prctl(PR_SET_NAME, argv[2], 0, 0, 0);
        printf("{\"pid\":%d}\n", (int) getpid());
        fflush(stdout);
        if (!fgets(line, sizeof(line), stdin))
                return 1;
        evmon_profile_outer(cpu_seconds() + seconds);
        return 0;
}
