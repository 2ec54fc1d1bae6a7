/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * busy: a CPU-bound program with a call stack worth unwinding, for the
 * sampling benchmark (bench/sampling).
 *
 *   busy SECONDS      prints {"ready":true,"pid":P}, waits for a line on
 *                     stdin, then spins SECONDS of CPU time six calls deep
 *
 * Built with frame pointers, so perf's and evmond's callchains unwind.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

static double cpu_seconds(void) {
        struct timespec t;

        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
        return (double) t.tv_sec + (double) t.tv_nsec / 1e9;
}

__attribute__((noinline)) static void spin(int depth) {
        volatile uint64_t x = sink;

        if (depth > 0) {
                spin(depth - 1);
                return;
        }
        for (int i = 0; i < 100000; i++)
                x = x * 6364136223846793005ULL + 1;
        sink = x;
}

int main(int argc, char **argv) {
        double seconds = argc > 1 ? atof(argv[1]) : 1.0, end;
        char line[16];

        printf("{\"ready\":true,\"pid\":%d}\n", (int) getpid());
        fflush(stdout);
        if (!fgets(line, sizeof(line), stdin))
                return 1;
        end = cpu_seconds() + seconds;
        while (cpu_seconds() < end)
                spin(5);
        return 0;
}
