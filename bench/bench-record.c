/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* encode_record(): record lines of eight PERF_RECORD_* types in turn
 * (mmap2 with a build id, comm on exec, fork, exit, switch_cpu_wide,
 * namespaces, bpf_event, lost), each with a sample_id trailer.
 *
 *   bench-record [RECORDS]   (default 2000000 records a run, median of 5 runs)
 *   bench-record --print     one line of each type, to compare output
 *
 * Times are the thread's CPU time, which holds better than the wall
 * clock on a shared machine. */

#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "evmon/encode-perf.h"
#include "evmon/json.h"
#include "evmon/monitor.h"

#define RUNS 5

static uint64_t cpu_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;

        return (x > y) - (x < y);
}

static size_t records(struct perf_record *r) {
        static const uint8_t build_id[20] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 };
        static const uint64_t dev_ino[4] = { 1, 2, 3, 4 };
        static const uint8_t tag[8] = { 9, 8, 7, 6, 5, 4, 3, 2 };
        size_t n = 0;

        r[n].type = PERF_RECORD_MMAP2;
        r[n].misc = PERF_RECORD_MISC_USER;
        r[n].mmap2.pid = 100;
        r[n].mmap2.tid = 101;
        r[n].mmap2.addr = 0x7f0000001000;
        r[n].mmap2.len = 20 * 4096;
        r[n].mmap2.filename = "/usr/lib/x86_64-linux-gnu/libc.so.6";
        r[n].mmap2.has_build_id = true;
        r[n].mmap2.build_id = build_id;
        r[n++].mmap2.build_id_size = sizeof(build_id);
        r[n].type = PERF_RECORD_COMM;
        r[n].misc = PERF_RECORD_MISC_COMM_EXEC;
        r[n].comm.pid = r[n].comm.tid = 100;
        r[n++].comm.comm = "bash";
        for (int exit = 0; exit < 2; exit++) {
                r[n].type = exit ? PERF_RECORD_EXIT : PERF_RECORD_FORK;
                r[n].task.pid = r[n].task.tid = 100;
                r[n].task.ppid = r[n].task.ptid = 99;
                r[n++].task.time = 123456789;
        }
        r[n].type = PERF_RECORD_SWITCH_CPU_WIDE;
        r[n].misc = PERF_RECORD_MISC_SWITCH_OUT;
        r[n].switch_cpu_wide.next_prev_pid = 5;
        r[n++].switch_cpu_wide.next_prev_tid = 6;
        r[n].type = PERF_RECORD_NAMESPACES;
        r[n].namespaces.pid = r[n].namespaces.tid = 1;
        r[n].namespaces.nr = 2;
        r[n++].namespaces.dev_ino = dev_ino;
        r[n].type = PERF_RECORD_BPF_EVENT;
        r[n].bpf_event.type = 1;
        r[n].bpf_event.id = 7;
        r[n++].bpf_event.tag = tag;
        r[n].type = PERF_RECORD_LOST;
        r[n].lost.id = 7;
        r[n++].lost.lost = 1000;
        for (size_t i = 0; i < n; i++) {
                r[i].has_sid = true;
                r[i].sid.time = 1000000 + i;
                r[i].sid.cpu = 3;
                r[i].sid.pid = 100;
                r[i].sid.tid = 101;
        }
        return n;
}

int main(int argc, char **argv) {
        const struct encode_record_opts o = {
                .sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_TID | PERF_SAMPLE_CPU,
                .event = "sched:sched_switch",
        };
        const struct perf_event_header h = { .size = 128 };
        struct perf_record r[8] = {};
        struct jbuf b = {};
        double ns[RUNS];
        size_t n_types = records(r), n = 2000000;

        if (argc > 1 && strcmp(argv[1], "--print") == 0) {
                for (size_t i = 0; i < n_types; i++)
                        if (encode_record(&b, &h, &r[i], &o) < 0)
                                return 1;
                fwrite(b.data, 1, b.len, stdout);
                jbuf_done(&b);
                return 0;
        }
        if (argc > 1)
                n = strtoul(argv[1], NULL, 0);
        if (n == 0)
                return 2;
        for (int run = 0; run < RUNS; run++) {
                uint64_t t0 = cpu_ns();

                for (size_t i = 0; i < n; i++) {
                        b.len = 0;
                        if (encode_record(&b, &h, &r[i % n_types], &o) < 0)
                                return 1;
                }
                ns[run] = (double) (cpu_ns() - t0) / (double) n;
        }
        qsort(ns, RUNS, sizeof(ns[0]), cmp_double);
        printf("encode_record: %.1f ns/record (median of %d runs of %zu; min %.1f, max %.1f)\n",
               ns[RUNS / 2], RUNS, n, ns[0], ns[RUNS - 1]);
        jbuf_done(&b);
        return 0;
}
