/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* monitor.c on the real kernel: syscalls:sys_enter_getppid sampled on
 * every CPU into per-CPU rings, while this thread calls getppid() a known
 * number of times. Needs root, tracefs and perf_event_open; exits 77 with
 * the reason otherwise. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <linux/perf_event.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../host-tracing.h"
#include "../test-util.h"

/* monitor_new() takes no defaults: these are the tests' (64 pages, woken
 * at a quarter). */
#define WAKEUP_QUARTER(pages) ((uint32_t) ((pages) * (size_t) sysconf(_SC_PAGESIZE) / 4))
#define DEFAULT_OPTS ((const struct monitor_opts) { .ring_pages = 64, .wakeup_bytes = WAKEUP_QUARTER(64), \
                                                    .clockid = CLOCK_MONOTONIC })
#include "evmon/async.h"
#include "evmon/monitor.h"
#include "evmon/workers.h"

#define N 1000

static const char *const tracefs_roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };

static uint64_t tp_id;
static pid_t my_tid, my_pid;     /* whose samples count as ours */

/* What one source saw of this thread's getppid() calls. */
struct source {
        unsigned n;             /* samples from our thread */
        unsigned others;        /* samples from anyone else */
        unsigned broken;        /* ours, but with a field that is wrong */
};

struct run {
        uint64_t t0, t1;        /* CLOCK_MONOTONIC around the calls */
        uint64_t last[4096];    /* per CPU: time of the last sample of ours */
        unsigned out_of_order;
        uint64_t lost;
        unsigned lost_calls;
};

static uint64_t now_ns(void) {
        struct timespec ts;

        assert_int_equal(clock_gettime(CLOCK_MONOTONIC, &ts), 0);
        return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

static void on_sample(void *event, int cpu, const struct perf_sample *s, void *ctx) {
        struct source *src = event;
        struct run *run = ctx;
        const uint8_t *raw = s->raw.data;
        uint16_t common_type;
        int32_t common_pid;
        int64_t nr;

        if (s->tid != (uint32_t) my_tid) {
                src->others++;
                return;
        }
        src->n++;

        if (s->pid != (uint32_t) my_pid || s->cpu != (uint32_t) cpu ||
            s->time < run->t0 || s->time > run->t1 || s->raw.size < 16) {
                src->broken++;
                return;
        }

        /* The tracepoint's own data: common_type, common_pid at 4, and
         * __syscall_nr at 8 (events/syscalls/sys_enter_getppid/format). */
        memcpy(&common_type, raw, sizeof(common_type));
        memcpy(&common_pid, raw + 4, sizeof(common_pid));
        memcpy(&nr, raw + 8, sizeof(nr));
        if (common_type != (uint16_t) tp_id || common_pid != my_tid || (int32_t) nr != SYS_getppid)
                src->broken++;

        /* One thread: on any one CPU its samples come in time order. */
        if (cpu >= 0 && cpu < 4096) {
                if (s->time < run->last[cpu])
                        run->out_of_order++;
                run->last[cpu] = s->time;
        }
}

static void on_lost(int cpu, uint64_t count, void *ctx) {
        struct run *run = ctx;

        run->lost += count;
        run->lost_calls++;
}

static const struct monitor_handler handler = {
        .sample = on_sample,
        .lost = on_lost,
};

static void drain_all(struct monitor *m, struct run *run) {
        for (size_t i = 0; i < monitor_n_rings(m); i++) {
                int r;

                do {
                        r = monitor_drain(m, i, 64, &handler, run);
                        assert_true(r >= 0);
                } while (r == 64);
                assert_int_equal(monitor_ring_bad(m, i), 0);
        }
}

static uint64_t total_lost(struct monitor *m) {
        uint64_t sum = 0;

        for (size_t i = 0; i < monitor_n_rings(m); i++)
                sum += monitor_ring_lost(m, i);
        return sum;
}

static void call_getppid(struct run *run, unsigned n) {
        run->t0 = now_ns();
        for (unsigned i = 0; i < n; i++)
                syscall(SYS_getppid);
        run->t1 = now_ns();
}

static struct monitor_source getppid_source(struct source *s) {
        return (struct monitor_source) {
                .type = PERF_TYPE_TRACEPOINT,
                .config = tp_id,
                .userdata = s,
        };
}

/* The first CPU this thread may run on; *ALL gets its affinity. */
static int first_cpu(cpu_set_t *all) {
        assert_int_equal(sched_getaffinity(0, sizeof(*all), all), 0);
        for (int c = 0; c < CPU_SETSIZE; c++)
                if (CPU_ISSET(c, all))
                        return c;
        fail_msg("no CPU in this thread's affinity");
        return -1;
}

/* getppid_source(A) added to M and enabled: its handle. */
static int add_getppid(struct monitor *m, struct source *a) {
        struct monitor_source src = getppid_source(a);
        int h = monitor_add(m, &src);

        assert_true(h >= 0);
        assert_int_equal(monitor_enable(m, h), 0);
        return h;
}

/* SRC filtered in the kernel to this thread's calls, added to M and
 * enabled: its handle. */
static int add_mine(struct monitor *m, struct monitor_source *src) {
        static char filter[64];
        int h;

        snprintf(filter, sizeof(filter), "common_pid == %d", (int) my_tid);
        src->filter = filter;
        h = monitor_add(m, src);
        assert_true(h >= 0);
        assert_int_equal(monitor_enable(m, h), 0);
        return h;
}

static void test_count(void **state) {
        _cleanup_(monitor_freep) struct monitor *m = NULL;
        _cleanup_(freep) int *possible = NULL;
        struct monitor_source src;
        struct source a = {};
        struct run run = {};
        size_t n_possible = 0, n_up = 0;
        const size_t *up;
        int h, online;

        assert_int_equal(monitor_new(&DEFAULT_OPTS, &m), 0);
        online = (int) sysconf(_SC_NPROCESSORS_ONLN);
        /* A ring slot per possible CPU (a hot-added one has its slot);
         * those online are up, and monitor_rings_up() lists them. */
        assert_int_equal(perf_cpu_list("possible", &possible, &n_possible), 0);
        assert_int_equal(monitor_n_rings(m), n_possible);
        up = monitor_rings_up(m, &n_up);
        assert_int_equal(n_up, online);
        for (size_t i = 0, k = 0; i < monitor_n_rings(m); i++) {
                assert_int_equal(monitor_ring_cpu(m, i), possible[i]);
                if (monitor_ring_fd(m, i) == -ENODEV) {
                        assert_false(monitor_ring_up(m, i));
                        continue;
                }
                assert_true(monitor_ring_fd(m, i) >= 0);
                assert_true(k < n_up && up[k++] == i);
        }
        assert_int_equal(monitor_ring_fd(m, monitor_n_rings(m)), -EINVAL);

        src = getppid_source(&a);
        h = monitor_add(m, &src);
        assert_true(h >= 0);

        /* Disabled until enabled. */
        call_getppid(&run, 10);
        drain_all(m, &run);
        assert_int_equal(a.n, 0);

        assert_int_equal(monitor_enable(m, h), 0);
        call_getppid(&run, N);
        drain_all(m, &run);

        print_message("%u samples of ours, %u of others, %" PRIu64 " lost\n", a.n, a.others, run.lost);
        assert_int_equal(run.lost, total_lost(m));
        if (run.lost == 0)
                assert_int_equal(a.n, N);
        else
                assert_true(a.n < N && a.n + run.lost >= N);
        assert_int_equal(a.broken, 0);
        assert_int_equal(run.out_of_order, 0);
}

/* monitor_drain_ordered(): one thread's calls on alternating CPUs come
 * out in time order across the rings, the budget splits a pass without
 * breaking it, and what is newer than the clock minus the hold stays in
 * the rings (held) until a later pass. */
struct ordered {
        struct run run;
        uint64_t last;
        unsigned n, inversions;
};

static void on_ordered(void *event, int cpu, const struct perf_sample *s, void *ctx) {
        struct ordered *o = ctx;

        on_sample(event, cpu, s, &o->run);
        if (s->tid != (uint32_t) my_tid)
                return;
        if (s->time < o->last)
                o->inversions++;
        o->last = s->time;
        o->n++;
}

static const struct monitor_handler ordered_handler = {
        .sample = on_ordered,
        .lost = on_lost,
};

static void test_ordered(void **state) {
        _cleanup_(monitor_freep) struct monitor *m = NULL;
        struct monitor_source src;
        struct source a = {};
        struct ordered o = {};
        cpu_set_t all, one;
        uint64_t held, mid = 0;
        int k, cpus[2];

        if (test_cpus(cpus, 2, &all) < 2)
                skip();
        assert_int_equal(monitor_new(&DEFAULT_OPTS, &m), 0);
        /* Ours alone: another process's getppid() on CPU A after round
         * 7 is newer than it, and lets it go (seen beside a second run
         * of this test). */
        src = getppid_source(&a);
        (void) add_mine(m, &src);

        o.run.t0 = now_ns();
        for (int round = 0; round < 8; round++) {
                CPU_ZERO(&one);
                CPU_SET(cpus[round % 2], &one);
                assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
                if (round == 7)
                        mid = now_ns();
                for (int i = 0; i < 100; i++)
                        syscall(SYS_getppid);
        }
        o.run.t1 = now_ns();
        assert_int_equal(sched_setaffinity(0, sizeof(all), &all), 0);

        /* A hold longer than the calls took: once CPU A's ring (rounds
         * 0, 2, 4, 6) is read out, CPU B's round 7 is newer than all A
         * gave, and A might still get a record that old: it waits. */
        k = monitor_drain_ordered(m, &(struct monitor_order) { .now = now_ns(), .hold_ns = 10000000000ull }, 100000,
                                  &ordered_handler, &o, &held);
        assert_true(k >= 0);
        if (o.run.lost == 0)
                assert_int_equal(o.n, 700);
        assert_true(held != UINT64_MAX && held > mid && held >= o.last);
        /* Now the rest, 50 at a time. */
        do {
                k = monitor_drain_ordered(m, &(struct monitor_order) { .now = now_ns() }, 50, &ordered_handler, &o,
                                          &held);
                assert_true(k >= 0);
        } while (k == 50);
        assert_int_equal(held, UINT64_MAX);
        print_message("%u samples in time order across 2 CPUs, %u inversions, %" PRIu64 " lost\n", o.n, o.inversions,
                      o.run.lost);
        if (o.run.lost == 0)
                assert_int_equal(o.n, 800);
        assert_int_equal(o.inversions, 0);
        assert_int_equal(a.broken, 0);
        assert_int_equal(monitor_order_stats(m)->late, 0);
        for (size_t i = 0; i < monitor_n_rings(m); i++)
                assert_int_equal(monitor_ring_pending(m, i), 0);
}

/* A quiet source's records are counted apart per ring in a pass: the
 * reader tells by them whether a doorbell's look found what rang. 10
 * calls on one CPU, seen by a quiet and a loud copy of getppid. */
static void test_ordered_quiet(void **state) {
        _cleanup_(monitor_freep) struct monitor *m = NULL;
        struct source a = {}, b = {};
        struct monitor_source loud = getppid_source(&a), quiet = getppid_source(&b);
        struct ordered o = {};
        cpu_set_t all, one;
        uint64_t held;
        size_t n_up;
        const size_t *up;
        unsigned n = 0, n_quiet = 0;
        int cpu;

        cpu = first_cpu(&all);
        assert_int_equal(monitor_new(&DEFAULT_OPTS, &m), 0);
        quiet.quiet = true;
        (void) add_mine(m, &loud);
        (void) add_mine(m, &quiet);
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
        for (int i = 0; i < 10; i++)
                syscall(SYS_getppid);
        assert_int_equal(sched_setaffinity(0, sizeof(all), &all), 0);
        o.run.t0 = 0;
        o.run.t1 = UINT64_MAX;
        assert_true(monitor_drain_ordered(m, &(struct monitor_order) { .now = now_ns(), .all = true }, 100000,
                                          &ordered_handler, &o, &held) >= 0);
        up = monitor_rings_up(m, &n_up);
        for (size_t k = 0; k < n_up; k++) {
                n += monitor_ring_n_pass(m, up[k]);
                n_quiet += monitor_ring_n_pass_quiet(m, up[k]);
        }
        if (o.run.lost == 0) {
                assert_int_equal(n, 20);
                assert_int_equal(n_quiet, 10);
                assert_int_equal(monitor_drain_quiet(m), 10);
        }
}

/* Scans (monitor-scan.c): two getppid sources write interleaved into
 * the rings of two CPUs; threads scan the rings and skip one source's
 * samples (counted per worker), and the merge hands out the other's, all
 * of them, in time order, the skipped ones never. A scan may leave kept
 * records behind (held by the hold) and scan again on top of them. */
struct scan_ctx {
        struct source *skipped;
        struct source *noted;           /* its samples get a note: their time, tid and some bytes */
        unsigned by_worker[2];
        unsigned noted_by_worker[2];
        struct { uint64_t time; uint32_t tid, fill; uint8_t bytes[200]; } note[2];
        struct ordered *o;              /* what noted() hands on to */
        unsigned n_noted, bad_notes;
};

static int scan_skip(void *event, const struct perf_event_attr *attr, const struct perf_event_header *h,
                     unsigned worker, struct monitor_note *note, void *ctx) {
        struct scan_ctx *x = ctx;

        if (event == x->noted) {
                struct perf_sample s;

                if (sample_parse(attr, h, &s) < 0)
                        return MONITOR_SCAN_KEEP;
                /* Lengths that differ, so that notes do not line up. */
                x->note[worker].time = s.time;
                x->note[worker].tid = s.tid;
                x->note[worker].fill = (uint32_t) (s.time % 200);
                memset(x->note[worker].bytes, (int) (s.time & 0xff), x->note[worker].fill);
                note->data = &x->note[worker];
                note->len = offsetof(typeof(x->note[0]), bytes) + x->note[worker].fill;
                x->noted_by_worker[worker]++;
                return MONITOR_SCAN_NOTE;
        }
        if (event != x->skipped)
                return MONITOR_SCAN_KEEP;
        x->by_worker[worker]++;
        return MONITOR_SCAN_SKIP;
}

/* A noted sample: its note is the one its scan made of it, whole. */
static void scan_noted(void *event, int cpu, const struct perf_event_attr *attr, const struct perf_event_header *h,
                       const void *note, size_t len, void *ctx) {
        struct scan_ctx *x = ctx;
        typeof(x->note[0]) n = {};
        struct perf_sample s;
        bool ok;

        assert_true(len <= sizeof(n));
        memcpy(&n, note, len);
        ok = sample_parse(attr, h, &s) >= 0 && s.time == n.time && s.tid == n.tid &&
             len == offsetof(typeof(n), bytes) + n.fill;
        for (uint32_t i = 0; ok && i < n.fill; i++)
                ok = n.bytes[i] == (uint8_t) (n.time & 0xff);
        x->bad_notes += !ok;
        x->n_noted++;
        on_ordered(event, cpu, &s, x->o);
}

struct scan_job {
        struct monitor_scan_opts o;
        struct monitor *m;
        const size_t *up;
        const struct monitor_handler *h;
        struct scan_ctx *x;
};

static void scan_ring(size_t job, unsigned worker, void *userdata) {
        struct scan_job *j = userdata;

        assert_true(monitor_scan(j->m, j->up[job], &j->o, j->h, j->x, worker) >= 0);
}

static void scan_all_opts(struct workers *w, struct monitor *m, const struct monitor_handler *h, struct scan_ctx *x,
                          const struct monitor_scan_opts *o) {
        size_t n_up;
        struct scan_job j = { .o = *o, .m = m, .h = h, .x = x };

        j.up = monitor_rings_up(m, &n_up);
        workers_run(w, n_up, scan_ring, &j);
}

static void scan_all(struct workers *w, struct monitor *m, const struct monitor_handler *h, struct scan_ctx *x) {
        scan_all_opts(w, m, h, x, &(struct monitor_scan_opts) { .time_limit = UINT64_MAX });
}

static void calls_on(int cpu, unsigned n) {
        cpu_set_t one;

        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
        for (unsigned i = 0; i < n; i++)
                syscall(SYS_getppid);
}

static void test_scan(void **state) {
        _cleanup_(monitor_freep) struct monitor *m = NULL;
        _cleanup_(workers_freep) struct workers *w = NULL;
        struct source a = {}, b = {};
        struct monitor_source sa = getppid_source(&a), sb = getppid_source(&b);
        struct scan_ctx x = { .skipped = &a };
        struct monitor_handler h = ordered_handler;
        struct ordered o = {};
        cpu_set_t all;
        uint64_t held, mid = 0;
        int k, cpus[2];
        unsigned skipped, passed = 0;
        size_t n_up;
        const size_t *up;

        if (test_cpus(cpus, 2, &all) < 2)
                skip();
        h.scan = scan_skip;
        assert_int_equal(workers_new(2, &w), 0);
        assert_int_equal(monitor_new(&DEFAULT_OPTS, &m), 0);
        (void) add_mine(m, &sa);
        (void) add_mine(m, &sb);

        o.run.t0 = now_ns();
        for (int round = 0; round < 8; round++) {
                if (round == 7)
                        mid = now_ns();
                calls_on(cpus[round % 2], 100);
        }
        o.run.t1 = now_ns();
        assert_int_equal(sched_setaffinity(0, sizeof(all), &all), 0);

        scan_all(w, m, &h, &x);
        skipped = x.by_worker[0] + x.by_worker[1];
        /* Held by a long hold: round 7 (CPU B) waits for CPU A. */
        k = monitor_drain_ordered(m, &(struct monitor_order) { .now = now_ns(), .hold_ns = 10000000000ull }, 100000,
                                  &h, &o, &held);
        assert_true(k >= 0);
        assert_int_equal(monitor_drain_skipped(m), skipped);
        up = monitor_rings_up(m, &n_up);
        for (size_t i = 0; i < n_up; i++)
                passed += monitor_ring_n_pass(m, up[i]);
        assert_int_equal(passed, (unsigned) k + skipped);
        if (o.run.lost == 0) {
                assert_int_equal(skipped, 800);
                assert_int_equal(o.n, 700);
        }
        assert_true(held != UINT64_MAX && held > mid);

        /* More on CPU A, scanned on top of what B still keeps. */
        calls_on(cpus[0], 100);
        o.run.t1 = now_ns();
        assert_int_equal(sched_setaffinity(0, sizeof(all), &all), 0);
        scan_all(w, m, &h, &x);
        do {
                k = monitor_drain_ordered(m, &(struct monitor_order) { .now = now_ns() }, 50, &h, &o, &held);
                assert_true(k >= 0);
        } while (k == 50);
        assert_int_equal(held, UINT64_MAX);
        skipped = x.by_worker[0] + x.by_worker[1];
        print_message("%u skipped by the scans (%u, %u by worker), %u handed out in time order, %" PRIu64 " lost\n",
                      skipped, x.by_worker[0], x.by_worker[1], o.n, o.run.lost);
        if (o.run.lost == 0) {
                assert_int_equal(skipped, 900);
                assert_int_equal(o.n, 900);
        }
        assert_int_equal(a.n + a.others, 0);
        assert_int_equal(b.n, o.n);
        assert_int_equal(o.inversions, 0);
        assert_int_equal(a.broken + b.broken, 0);
        assert_int_equal(monitor_order_stats(m)->late, 0);
        for (size_t i = 0; i < monitor_n_rings(m); i++)
                assert_int_equal(monitor_ring_pending(m, i), 0);

        /* A scan that kept records, then a drain in arrival order (the
         * config's order changed): the kept go first, the skipped never. */
        calls_on(cpus[1], 50);
        assert_int_equal(sched_setaffinity(0, sizeof(all), &all), 0);
        scan_all(w, m, &h, &x);
        o.run.t1 = now_ns();
        for (size_t i = 0; i < monitor_n_rings(m); i++)
                while (monitor_drain(m, i, 64, &h, &o) == 64)
                        ;
        if (o.run.lost == 0) {
                assert_int_equal(x.by_worker[0] + x.by_worker[1], 950);
                assert_int_equal(o.n, 950);
        }
        assert_int_equal(a.n + a.others, 0);
        for (size_t i = 0; i < monitor_n_rings(m); i++)
                assert_int_equal(monitor_ring_pending(m, i), 0);
}

/* A scan stops where its ring keeps max_kept records: what skip()
 * decides is for the merge that follows. 100 calls seen by a skipped
 * and a kept source, max_kept 10: about 10 skipped, the rest of both
 * handed out by the merge, each record once. */
static void test_scan_bounded(void **state) {
        _cleanup_(monitor_freep) struct monitor *m = NULL;
        struct source a = {}, b = {};
        struct monitor_source sa = getppid_source(&a), sb = getppid_source(&b);
        struct scan_ctx x = { .skipped = &a };
        struct monitor_handler h = ordered_handler;
        struct monitor_scan_opts so = { .max_kept = 10, .time_limit = UINT64_MAX };
        struct ordered o = {};
        cpu_set_t all;
        uint64_t held;
        int cpu = first_cpu(&all), n;
        unsigned skipped;

        h.scan = scan_skip;
        assert_int_equal(monitor_new(&DEFAULT_OPTS, &m), 0);
        (void) add_mine(m, &sa);
        (void) add_mine(m, &sb);
        o.run.t0 = now_ns();
        calls_on(cpu, 100);
        o.run.t1 = now_ns();
        assert_int_equal(sched_setaffinity(0, sizeof(all), &all), 0);
        for (size_t i = 0; i < monitor_n_rings(m); i++)
                assert_true(monitor_scan(m, i, &so, &h, &x, 0) >= 0);
        skipped = x.by_worker[0];
        n = monitor_drain_ordered(m, &(struct monitor_order) { .now = now_ns(), .all = true }, 100000, &h, &o, &held);
        print_message("max_kept 10: %u skipped, %d merged\n", skipped, n);
        assert_true(skipped == 9 || skipped == 10);
        assert_int_equal(monitor_drain_skipped(m), skipped);
        if (o.run.lost == 0) {
                assert_int_equal((unsigned) n + skipped, 200);
                assert_int_equal(b.n, 100);
                assert_int_equal(a.n, 100 - skipped);
        }
        assert_int_equal(a.broken + b.broken, 0);
}

/* Notes: with three sources on the same calls, scans on two threads skip
 * the first's samples, note the second's (each its time, tid and bytes
 * of a length of its own) and keep the third's. The merge hands each
 * noted sample to noted() with its own note, in time order among the
 * third's, none twice, none lost; scans bounded by max_kept go on from
 * what the merge left, notes and all, in time order and in arrival
 * order. */
static void notes_sample(void *event, int cpu, const struct perf_sample *s, void *ctx) {
        on_ordered(event, cpu, s, ((struct scan_ctx *) ctx)->o);
}

static void notes_lost(int cpu, uint64_t count, void *ctx) {
        on_lost(cpu, count, &((struct scan_ctx *) ctx)->o->run);
}

static void test_scan_notes(void **state) {
        _cleanup_(monitor_freep) struct monitor *m = NULL;
        _cleanup_(workers_freep) struct workers *w = NULL;
        struct source a = {}, b = {}, c = {};
        struct monitor_source sa = getppid_source(&a), sb = getppid_source(&b), sc = getppid_source(&c);
        struct ordered o = {};
        struct scan_ctx x = { .skipped = &a, .noted = &b, .o = &o };
        const struct monitor_handler h = {
                .sample = notes_sample, .lost = notes_lost, .scan = scan_skip, .noted = scan_noted,
        };
        const struct monitor_scan_opts so = { .max_kept = 30, .time_limit = UINT64_MAX };
        cpu_set_t all;
        uint64_t held;
        int k, cpus[2], passes = 0;
        unsigned skipped;

        if (test_cpus(cpus, 2, &all) < 2)
                skip();
        assert_int_equal(workers_new(2, &w), 0);
        assert_int_equal(monitor_new(&DEFAULT_OPTS, &m), 0);
        (void) add_mine(m, &sa);
        (void) add_mine(m, &sb);
        (void) add_mine(m, &sc);

        o.run.t0 = now_ns();
        for (int round = 0; round < 6; round++)
                calls_on(cpus[round % 2], 50);
        o.run.t1 = now_ns();
        assert_int_equal(sched_setaffinity(0, sizeof(all), &all), 0);
        /* A scan keeps 30 a ring, the merge takes 25: each scan after the
         * first goes on from kept records and notes the merge left. */
        do {
                scan_all_opts(w, m, &h, &x, &so);
                k = monitor_drain_ordered(m, &(struct monitor_order) { .now = now_ns(), .all = true }, 25, &h, &x,
                                          &held);
                assert_true(k >= 0);
                passes++;
        } while (k > 0 || held != UINT64_MAX);
        skipped = x.by_worker[0] + x.by_worker[1];
        print_message("%d passes: %u skipped, %u noted (%u, %u by worker), %u handed out in time order, "
                      "%" PRIu64 " lost\n", passes, skipped, x.n_noted, x.noted_by_worker[0], x.noted_by_worker[1], o.n,
                      o.run.lost);
        if (o.run.lost == 0) {
                assert_int_equal(skipped, 300);
                assert_int_equal(x.n_noted, 300);
                assert_int_equal(b.n, 300);
                assert_int_equal(c.n, 300);
                assert_true(passes > 10);
        }
        assert_int_equal(x.noted_by_worker[0] + x.noted_by_worker[1], x.n_noted);
        assert_int_equal(x.bad_notes, 0);
        assert_int_equal(a.n + a.others, 0);
        assert_int_equal(o.inversions, 0);
        assert_int_equal(a.broken + b.broken + c.broken, 0);

        /* Kept with their notes, then a drain in arrival order. */
        calls_on(cpus[1], 50);
        assert_int_equal(sched_setaffinity(0, sizeof(all), &all), 0);
        o.run.t1 = now_ns();
        scan_all_opts(w, m, &h, &x, &so);
        /* The kept come on top of the budget. */
        for (size_t i = 0; i < monitor_n_rings(m); i++)
                while (monitor_drain(m, i, 64, &h, &x) >= 64)
                        ;
        if (o.run.lost == 0) {
                /* Past the scan's 30 kept, the drain parsed them. */
                assert_true(x.n_noted > 300 && x.n_noted < 350);
                assert_int_equal(b.n, 350);
                assert_int_equal(c.n, 350);
        }
        assert_int_equal(x.bad_notes, 0);
        for (size_t i = 0; i < monitor_n_rings(m); i++)
                assert_int_equal(monitor_ring_pending(m, i), 0);
}

static void test_remove(void **state) {
        _cleanup_(monitor_freep) struct monitor *m = NULL;
        struct monitor_source src;
        struct source a = {}, b = {}, c = {};
        struct run run = {};
        int ha, hb, hc;

        assert_int_equal(monitor_new(&DEFAULT_OPTS, &m), 0);
        src = getppid_source(&a);
        ha = monitor_add(m, &src);
        src = getppid_source(&b);
        hb = monitor_add(m, &src);
        assert_true(ha >= 0 && hb >= 0 && ha != hb);
        assert_int_equal(monitor_enable(m, ha), 0);
        assert_int_equal(monitor_enable(m, hb), 0);

        call_getppid(&run, N);
        drain_all(m, &run);
        assert_int_equal(run.lost, 0);
        assert_int_equal(a.n, N);
        assert_int_equal(b.n, N);

        /* A goes (a live reload), B keeps counting into the same rings. */
        assert_int_equal(monitor_remove(m, ha), 0);
        assert_int_equal(monitor_remove(m, ha), -ENOENT);
        assert_int_equal(monitor_enable(m, ha), -ENOENT);
        call_getppid(&run, N);
        drain_all(m, &run);
        assert_int_equal(a.n, N);
        assert_int_equal(b.n, 2 * N);

        /* B removed with its samples still in the rings: they are dropped,
         * not handed to B's (maybe freed) userdata, not counted as bad. */
        call_getppid(&run, N);
        assert_int_equal(monitor_remove(m, hb), 0);
        drain_all(m, &run);
        assert_int_equal(b.n, 2 * N);

        /* And a new source after all that. */
        src = getppid_source(&c);
        hc = monitor_add(m, &src);
        assert_true(hc >= 0);
        assert_int_equal(monitor_enable(m, hc), 0);
        call_getppid(&run, N);
        drain_all(m, &run);
        assert_int_equal(c.n, N);
        assert_int_equal(a.broken + b.broken + c.broken, 0);
        assert_int_equal(run.out_of_order, 0);
}

/* Sources added and removed again and again (a reload or a runtime add
 * and remove now and then, for months) take back the slots of the gone
 * ones once they are closed and read past: the table does not grow with
 * every add (it did, one slot each, for good), and each handle still
 * delivers to its own source. */
static void test_handles_reused(void **state) {
        _cleanup_(monitor_freep) struct monitor *m = NULL;
        struct monitor_source src;
        struct source s[2] = {};
        struct run run = {};
        int h, max = -1;

        assert_int_equal(monitor_new(&DEFAULT_OPTS, &m), 0);
        for (int i = 0; i < 200; i++) {
                src = getppid_source(&s[i % 2]);
                h = monitor_add(m, &src);
                assert_true(h >= 0);
                max = h > max ? h : max;
                assert_int_equal(monitor_enable(m, h), 0);
                call_getppid(&run, 10);
                drain_all(m, &run);
                assert_int_equal(monitor_remove(m, h), 0);
                /* Its fds closed, so the next add finds it done. */
                async_wait(0);
        }
        assert_int_equal(run.lost, 0);
        assert_int_equal(s[0].n, 100 * 10);
        assert_int_equal(s[1].n, 100 * 10);
        assert_int_equal(s[0].broken + s[1].broken, 0);
        assert_true(max <= 1);
}

static void test_filter(void **state) {
        _cleanup_(monitor_freep) struct monitor *m = NULL;
        struct monitor_source src;
        struct source a = {}, bad = {};
        struct run run = {};
        char filter[64];
        int h;

        assert_int_equal(monitor_new(&DEFAULT_OPTS, &m), 0);

        /* The kernel drops everyone else's samples. */
        snprintf(filter, sizeof(filter), "common_pid == %d", (int) my_tid);
        src = getppid_source(&a);
        src.filter = filter;
        h = monitor_add(m, &src);
        assert_true(h >= 0);
        assert_int_equal(monitor_enable(m, h), 0);

        /* A child calling getppid() as well. */
        pid_t child = fork();
        assert_true(child >= 0);
        if (child == 0) {
                for (int i = 0; i < 100; i++)
                        syscall(SYS_getppid);
                _exit(0);
        }
        call_getppid(&run, N);
        assert_int_equal(waitpid(child, NULL, 0), child);
        run.t1 = now_ns();
        drain_all(m, &run);
        assert_int_equal(a.n, N);
        assert_int_equal(a.others, 0);
        assert_int_equal(a.broken, 0);

        /* A filter the kernel refuses: an error, no handle. */
        src = getppid_source(&bad);
        src.filter = "no_such_field ==== 1";
        assert_int_equal(monitor_add(m, &src), -EINVAL);
}

static void test_bad_event(void **state) {
        _cleanup_(monitor_freep) struct monitor *m = NULL;
        struct monitor_source src = {
                .type = PERF_TYPE_TRACEPOINT,
                .config = 0x7ffffff0,           /* no such tracepoint */
        };
        int r;

        assert_int_equal(monitor_new(&DEFAULT_OPTS, &m), 0);
        r = monitor_add(m, &src);
        assert_true(r == -ENOENT || r == -EINVAL);
        assert_int_equal(monitor_remove(m, 0), -ENOENT);
}

/* Only this process (inherit), in a one-page ring we do not drain while
 * 1000 samples of ~64 bytes arrive: the kernel must say what it dropped.
 * The test runs on one CPU: the kernel reports a ring's loss only with
 * that ring's next record, so a thread that migrated mid-run would leave
 * the first CPU's count unsaid (seen: 127 kept + 612 lost of 1001). */
static void test_pid_target_and_loss(void **state) {
        _cleanup_(monitor_freep) struct monitor *m = NULL;
        pid_t self = getpid();
        cpu_set_t all;
        struct monitor_opts opts = {
                .ring_pages = 1,
                .wakeup_bytes = WAKEUP_QUARTER(1),
                .clockid = CLOCK_MONOTONIC,
                .pids = &self,
                .n_pids = 1,
        };
        struct source a = {};
        struct run run = {};

        test_pin(&all);

        assert_int_equal(monitor_new(&opts, &m), 0);
        add_getppid(m, &a);

        call_getppid(&run, N);
        drain_all(m, &run);
        /* The kernel reports a loss in-band with the next record that
         * fits: make one. */
        call_getppid(&run, 1);
        drain_all(m, &run);
        test_unpin(&all);

        print_message("%u samples kept, %" PRIu64 " lost in %u records\n", a.n, run.lost, run.lost_calls);
        assert_true(run.lost > 0);
        assert_true(run.lost_calls > 0);
        assert_int_equal(run.lost, total_lost(m));
        assert_int_equal(a.others, 0);
        assert_int_equal(a.broken, 0);
        assert_int_equal(a.n + run.lost, N + 1);
}

/* As above, but nothing else is written to the ring after the burst that
 * overflowed it: the kernel keeps that count until a next record there,
 * and monitor_ring_flush_lost() makes one. Every call is then a sample or
 * in a LOST count, exactly. A ring that was never near full is not
 * flushed (0), and the flush's own sample is no one's (no bad record). */
static void test_lost_flushed(void **state) {
        _cleanup_(monitor_freep) struct monitor *m = NULL;
        pid_t self = getpid();
        cpu_set_t all;
        struct monitor_opts opts = {
                .ring_pages = 2,
                .wakeup_bytes = WAKEUP_QUARTER(2),
                .clockid = CLOCK_MONOTONIC,
                .pids = &self,
                .n_pids = 1,
        };
        struct source a = {};
        struct run run = {};
        unsigned flushed = 0;

        test_pin(&all);

        assert_int_equal(monitor_new(&opts, &m), 0);
        add_getppid(m, &a);

        /* Room for all: nothing to flush anywhere. */
        call_getppid(&run, 10);
        drain_all(m, &run);
        for (size_t i = 0; i < monitor_n_rings(m); i++)
                assert_int_equal(monitor_ring_flush_lost(m, i), 0);
        assert_int_equal(a.n, 10);

        /* ~64 KB into 8 KB, read only afterwards. */
        call_getppid(&run, N);
        drain_all(m, &run);
        assert_true(a.n < 10 + N);
        /* Only this thread writes there, and it is done. */
        assert_int_equal(run.lost, 0);
        for (size_t i = 0; i < monitor_n_rings(m); i++) {
                int r = monitor_ring_flush_lost(m, i);

                assert_true(r >= 0);
                flushed += r;
        }
        assert_int_equal(flushed, 1);
        /* Written from the CPU's hrtimer within microseconds; a loaded
         * host may take longer to run it: wait for the count, not a time. */
        for (int k = 0; k < 5000 && a.n + run.lost < 10 + N; k++) {
                usleep(1000);
                drain_all(m, &run);
        }
        test_unpin(&all);

        print_message("%u samples kept, %" PRIu64 " lost in %u records, after the flush\n", a.n, run.lost,
                      run.lost_calls);
        assert_int_equal(run.lost_calls, 1);
        assert_int_equal(run.lost, total_lost(m));
        assert_int_equal(a.others, 0);
        assert_int_equal(a.broken, 0);
        assert_int_equal(a.n + run.lost, 10 + N);
        /* Asked once, done: the flush's record left nothing to flush. */
        for (size_t i = 0; i < monitor_n_rings(m); i++)
                assert_int_equal(monitor_ring_flush_lost(m, i), 0);
}

/* A flush whose sample finds the ring full again (a burst that went on)
 * is itself dropped, and the kernel counts it in the next LOST: that one
 * is no call of ours and must not be counted (it made delivered + lost one
 * more than made, 3 runs of 3 of a 4-page ring under a full-rate loop).
 * Here the flush is asked with the ring full, so its sample is dropped for
 * sure; a second flush, into the emptied ring, brings the count out. */
static void test_lost_flush_own(void **state) {
        _cleanup_(monitor_freep) struct monitor *m = NULL;
        pid_t self = getpid();
        cpu_set_t all;
        int cpu;
        struct monitor_opts opts = {
                .ring_pages = 2,
                .wakeup_bytes = WAKEUP_QUARTER(2),
                .clockid = CLOCK_MONOTONIC,
                .pids = &self,
                .n_pids = 1,
        };
        struct source a = {};
        struct run run = {};
        size_t ring = SIZE_MAX;
        uint64_t bad = 0;

        cpu = test_pin(&all);

        assert_int_equal(monitor_new(&opts, &m), 0);
        for (size_t i = 0; i < monitor_n_rings(m); i++)
                if (monitor_ring_cpu(m, i) == cpu)
                        ring = i;
        assert_true(ring != SIZE_MAX);
        add_getppid(m, &a);

        /* Overflow, read (the look sees it full), overflow again: the
         * ring is full when the flush's sample comes. */
        call_getppid(&run, N);
        drain_all(m, &run);
        call_getppid(&run, N);
        assert_int_equal(monitor_ring_flush_lost(m, ring), 1);
        /* Its sample comes from an hrtimer 10 µs on, in hard interrupt
         * context. Were it later than this, it would land in the emptied
         * ring below and the counts would still add up: the test would
         * miss its case, not fail. */
        usleep(10000);
        drain_all(m, &run);
        assert_int_equal(monitor_ring_flush_lost(m, ring), 1);
        for (int k = 0; k < 5000 && a.n + run.lost < 2 * N; k++) {
                usleep(1000);
                drain_all(m, &run);
        }
        /* Anything more would be the count coming late: give it a look. */
        usleep(20000);
        drain_all(m, &run);
        test_unpin(&all);
        for (size_t i = 0; i < monitor_n_rings(m); i++)
                bad += monitor_ring_bad(m, i);

        print_message("%u samples kept, %" PRIu64 " lost in %u records, the first flush's sample dropped\n", a.n,
                      run.lost, run.lost_calls);
        assert_int_equal(bad, 0);
        assert_int_equal(a.others, 0);
        assert_int_equal(a.broken, 0);
        assert_int_equal(run.lost, total_lost(m));
        assert_int_equal(a.n + run.lost, 2 * N);
}

/* The ring fd polls readable once wakeup_bytes are pending, not before. */
static void test_wakeup(void **state) {
        _cleanup_(monitor_freep) struct monitor *m = NULL;
        pid_t self = getpid();
        struct monitor_opts opts = {
                .ring_pages = 32,
                .wakeup_bytes = 4096,
                .clockid = CLOCK_MONOTONIC,
                .pids = &self,
                .n_pids = 1,
        };
        struct source a = {};
        struct run run = {};
        struct pollfd *pfd;
        size_t n;
        int ready = 0;

        assert_int_equal(monitor_new(&opts, &m), 0);
        add_getppid(m, &a);

        n = monitor_n_rings(m);
        pfd = calloc(n, sizeof(*pfd));
        assert_non_null(pfd);
        for (size_t i = 0; i < n; i++)
                pfd[i] = (struct pollfd) { .fd = monitor_ring_fd(m, i), .events = POLLIN };

        /* A few samples (< 4096 bytes on any CPU): no wakeup. */
        call_getppid(&run, 10);
        assert_int_equal(poll(pfd, n, 0), 0);

        /* 1000 samples, ~64 KB: at least one ring crosses its watermark. */
        call_getppid(&run, N);
        ready = poll(pfd, n, 1000);
        assert_true(ready >= 1);
        free(pfd);

        run.t0 = 0;
        drain_all(m, &run);
        assert_int_equal(a.n, N + 10);
}

/* How many doorbell fds of M poll readable within TIMEOUT ms. */
static int bells_ready(struct monitor *m, int timeout) {
        struct pollfd pfd[64];
        size_t n = 0;
        int r;

        for (size_t i = 0; i < monitor_n_rings(m); i++)
                for (size_t k = 0; k < monitor_ring_n_doorbells(m, i); k++) {
                        assert_true(n < ELEMENTSOF(pfd));
                        pfd[n++] = (struct pollfd) { .fd = monitor_ring_doorbell_fd(m, i, k), .events = POLLIN };
                }
        assert_true(n > 0);
        r = poll(pfd, n, timeout);
        assert_true(r >= 0);
        return r;
}

static void arm_all(struct monitor *m, bool arm) {
        for (size_t i = 0; i < monitor_n_rings(m); i++) {
                assert_int_equal(arm ? monitor_ring_arm(m, i) : monitor_ring_disarm(m, i), 0);
                assert_true(monitor_ring_armed(m, i) == arm);
        }
}

/* The doorbell of a task target: armed, it rings at the first record and
 * not before; disarmed, it stays silent; a doorbell whose own ring filled
 * up rings again after the next arm; the main ring gets every sample. */
static void test_doorbell(void **state) {
        _cleanup_(monitor_freep) struct monitor *m = NULL;
        pid_t self = getpid();
        struct monitor_opts opts = {
                .ring_pages = 64,
                .wakeup_bytes = WAKEUP_QUARTER(64),
                .clockid = CLOCK_MONOTONIC,
                .pids = &self,
                .n_pids = 1,
                .doorbell = true,
        };
        struct monitor_source src;
        struct source a = {};
        struct run run = {};
        int h;

        assert_int_equal(monitor_new(&opts, &m), 0);
        for (size_t i = 0; i < monitor_n_rings(m); i++) {
                assert_int_equal(monitor_ring_n_doorbells(m, i), 1);
                assert_false(monitor_ring_armed(m, i));
        }
        src = getppid_source(&a);
        h = monitor_add(m, &src);
        assert_true(h >= 0);
        assert_true(monitor_doorbells_cover(m));
        assert_int_equal(monitor_enable(m, h), 0);

        /* Disarmed (as opened): records flow into the ring, nothing rings. */
        call_getppid(&run, 10);
        assert_int_equal(bells_ready(m, 0), 0);

        /* Armed and idle: silent. The first record rings, once. */
        arm_all(m, true);
        assert_int_equal(bells_ready(m, 50), 0);
        call_getppid(&run, 1);
        assert_int_equal(bells_ready(m, 1000), 1);

        /* Fill the doorbell's one page (a record per call, 8 bytes each),
         * disarm, and arm again: the arm empties it, so it rings again. */
        call_getppid(&run, N);
        (void) bells_ready(m, 0);
        arm_all(m, false);
        call_getppid(&run, 10);
        assert_int_equal(bells_ready(m, 0), 0);
        arm_all(m, true);
        assert_int_equal(bells_ready(m, 0), 0);
        call_getppid(&run, 1);
        assert_int_equal(bells_ready(m, 1000), 1);

        /* The main ring saw every call, the doorbell took none of them. */
        run.t0 = 0;
        drain_all(m, &run);
        assert_int_equal(run.lost, 0);
        assert_int_equal(a.n, 10 + 1 + N + 10 + 1);
        assert_int_equal(a.broken, 0);
}

/* A system-wide doorbell with a filter: records the kernel filters out of
 * the main ring do not ring it either. */
static void test_doorbell_filter(void **state) {
        _cleanup_(monitor_freep) struct monitor *m = NULL;
        struct monitor_opts opts = { .ring_pages = 64, .wakeup_bytes = WAKEUP_QUARTER(64),
                                     .clockid = CLOCK_MONOTONIC, .doorbell = true };
        struct monitor_source src;
        struct source a = {};
        struct run run = {};
        char filter[64];
        pid_t child;
        int h;

        assert_int_equal(monitor_new(&opts, &m), 0);
        snprintf(filter, sizeof(filter), "common_pid == %d", (int) my_tid);
        src = getppid_source(&a);
        src.filter = filter;
        h = monitor_add(m, &src);
        assert_true(h >= 0);
        assert_true(monitor_doorbells_cover(m));
        assert_int_equal(monitor_enable(m, h), 0);
        arm_all(m, true);

        child = fork();
        assert_true(child >= 0);
        if (child == 0) {
                for (int i = 0; i < 100; i++)
                        syscall(SYS_getppid);
                _exit(0);
        }
        assert_int_equal(waitpid(child, NULL, 0), child);
        assert_int_equal(bells_ready(m, 50), 0);

        call_getppid(&run, 1);
        assert_true(bells_ready(m, 1000) >= 1);
        arm_all(m, false);
        run.t0 = 0;
        drain_all(m, &run);
        assert_int_equal(a.n, 1);
        assert_int_equal(a.others, 0);
}

/* A record that does not parse is kept for the daemon to log once: here
 * a sample of an id no event of the monitor has (another tool's event
 * that SET_OUTPUTs into our ring; a record of an event closed since looks
 * the same). Before, it was only counted, and a user saw
 * evmon_malformed_records_total rise with nothing saying what it was. */
static void test_malformed_kept(void **state) {
        _cleanup_(monitor_freep) struct monitor *m = NULL;
        _cleanup_(closep) int fd = -1;
        struct perf_event_attr attr = {
                .type = PERF_TYPE_TRACEPOINT,
                .size = sizeof(attr),
                .config = tp_id,
                .sample_period = 1,
                .sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TIME,
                .use_clockid = 1,
                .clockid = CLOCK_MONOTONIC,
                .disabled = 1,
        };
        size_t ring = SIZE_MAX;
        struct monitor_malformed mf;
        struct run run = {};
        cpu_set_t all, one;
        char filter[64];
        uint64_t id;
        int cpu = -1;

        cpu = first_cpu(&all);
        assert_int_equal(monitor_new(&DEFAULT_OPTS, &m), 0);
        for (size_t i = 0; i < monitor_n_rings(m); i++)
                if (monitor_ring_cpu(m, i) == cpu && monitor_ring_fd(m, i) >= 0)
                        ring = i;
        if (ring == SIZE_MAX)
                skip();

        fd = (int) syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, monitor_ring_fd(m, ring)), 0);
        snprintf(filter, sizeof(filter), "common_pid == %d", (int) my_tid);
        assert_int_equal(ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter), 0);
        assert_int_equal(ioctl(fd, PERF_EVENT_IOC_ID, &id), 0);
        assert_int_equal(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);

        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
        call_getppid(&run, 3);
        assert_int_equal(sched_setaffinity(0, sizeof(all), &all), 0);
        assert_int_equal(ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0);

        assert_false(monitor_ring_take_malformed(m, ring, &mf));
        assert_int_equal(monitor_drain(m, ring, 64, &handler, &run), 3);
        assert_int_equal(monitor_ring_bad(m, ring), 3);
        assert_true(monitor_ring_take_malformed(m, ring, &mf));
        assert_non_null(strstr(mf.why, "id"));
        assert_int_equal(mf.type, PERF_RECORD_SAMPLE);
        assert_int_equal(mf.size, sizeof(struct perf_event_header) + 2 * sizeof(uint64_t));
        assert_int_equal(mf.n_bytes, mf.size);
        assert_memory_equal(mf.bytes + sizeof(struct perf_event_header), &id, sizeof(id));
        /* Once: the other two are only counted. */
        assert_false(monitor_ring_take_malformed(m, ring, &mf));
}

/* A pinned (or exclusive) event gets its doorbell too: the copy is a
 * group member, which the kernel refuses pinned, so the copy is not. */
static void test_doorbell_pinned(void **state) {
        _cleanup_(monitor_freep) struct monitor *m = NULL;
        struct monitor_opts opts = { .ring_pages = 64, .wakeup_bytes = WAKEUP_QUARTER(64),
                                     .clockid = CLOCK_MONOTONIC, .doorbell = true };
        struct perf_event_attr attr = {
                .type = PERF_TYPE_TRACEPOINT,
                .size = sizeof(attr),
                .config = tp_id,
                .sample_period = 1,
                .sample_type = PERF_SAMPLE_RAW,
                .pinned = 1,
        };
        struct monitor_source src;
        struct source a = {};
        struct run run = {};
        char filter[64];
        int h;

        assert_int_equal(monitor_new(&opts, &m), 0);
        snprintf(filter, sizeof(filter), "common_pid == %d", (int) my_tid);
        src = getppid_source(&a);
        src.attr = &attr;
        src.filter = filter;
        h = monitor_add(m, &src);
        assert_true(h >= 0);
        assert_true(monitor_doorbells_cover(m));
        assert_int_equal(monitor_enable(m, h), 0);
        arm_all(m, true);
        assert_int_equal(bells_ready(m, 50), 0);
        call_getppid(&run, 1);
        assert_true(bells_ready(m, 1000) >= 1);
        arm_all(m, false);
        run.t0 = 0;
        drain_all(m, &run);
        assert_int_equal(a.n, 1);
}

/* The cgroup v2 mount point, from mountinfo. */
static int cgroup2_mount(char *ret, size_t size) {
        char line[1024], mnt[512], fstype[64];
        FILE *f = fopen("/proc/self/mountinfo", "re");
        int r = -ENOENT;

        if (!f)
                return -errno;
        while (fgets(line, sizeof(line), f)) {
                const char *dash = strstr(line, " - ");

                if (!dash || sscanf(dash, " - %63s", fstype) != 1 || strcmp(fstype, "cgroup2") != 0)
                        continue;
                if (sscanf(line, "%*s %*s %*s %*s %511s", mnt) == 1) {
                        snprintf(ret, size, "%s", mnt);
                        r = 0;
                        break;
                }
        }
        fclose(f);
        return r;
}

/* Our cgroup v2 path ("0::/path" in /proc/self/cgroup). */
static int cgroup2_self(char *ret, size_t size) {
        char line[1024];
        FILE *f = fopen("/proc/self/cgroup", "re");
        int r = -ENOENT;

        if (!f)
                return -errno;
        while (fgets(line, sizeof(line), f))
                if (strncmp(line, "0::", 3) == 0) {
                        line[strcspn(line, "\n")] = '\0';
                        snprintf(ret, size, "%s", line + 3);
                        r = 0;
                        break;
                }
        fclose(f);
        return r;
}

static int write_pid(const char *dir, pid_t pid) {
        char path[1024];
        FILE *f;
        int r;

        snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
        f = fopen(path, "we");
        if (!f)
                return -errno;
        r = fprintf(f, "%d\n", (int) pid) < 0 ? -EIO : 0;
        if (fclose(f) != 0 && r == 0)
                r = -errno;
        return r;
}

/* Events targeted at a cgroup (PERF_FLAG_PID_CGROUP): we move into a
 * fresh cgroup, call getppid() there, and move back. */
static void test_cgroup_target(void **state) {
        _cleanup_(monitor_freep) struct monitor *m = NULL;
        char mnt[512], self[1024], home[1600], dir[1700];
        struct monitor_opts opts = { .ring_pages = 64, .wakeup_bytes = WAKEUP_QUARTER(64),
                                     .clockid = CLOCK_MONOTONIC, .doorbell = true };
        struct source a = {};
        struct run run = {};
        int fd, r;

        if (cgroup2_mount(mnt, sizeof(mnt)) < 0 || cgroup2_self(self, sizeof(self)) < 0) {
                print_message("no cgroup v2 hierarchy here\n");
                skip();
        }
        snprintf(home, sizeof(home), "%s%s", mnt, strcmp(self, "/") == 0 ? "" : self);
        snprintf(dir, sizeof(dir), "%s/evmon-test-%d", home, (int) getpid());
        if (mkdir(dir, 0755) < 0) {
                print_message("cannot create %s: %s\n", dir, strerror(errno));
                skip();
        }

        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd >= 0);
        opts.cgroup_fds = &fd;
        opts.n_cgroups = 1;
        assert_int_equal(monitor_new(&opts, &m), 0);
        close(fd);      /* the monitor keeps its own */

        add_getppid(m, &a);

        /* Outside the cgroup: nothing, and no doorbell either. */
        assert_true(monitor_doorbells_cover(m));
        arm_all(m, true);
        call_getppid(&run, 10);
        assert_int_equal(bells_ready(m, 50), 0);
        assert_int_equal(write_pid(dir, 0), 0);
        call_getppid(&run, N);
        assert_true(bells_ready(m, 1000) >= 1);
        r = write_pid(home, 0);
        drain_all(m, &run);
        assert_int_equal(r, 0);
        assert_int_equal(rmdir(dir), 0);

        assert_int_equal(a.n, N);
        assert_int_equal(a.others, 0);
        assert_int_equal(a.broken, 0);
}

/* What the kernel does on an enable must not cost the events already
 * running a record. Enabling an event reschedules the running events of
 * its PMU on that CPU, and from another CPU (an IPI) that can land while
 * a tracepoint handler there walks the list it rebuilds: the running
 * event then misses the record in flight, silently (monitor_enable()).
 * A child calls getppid() on one CPU as fast as it can while this thread
 * adds, enables and removes another getppid event (whose filter matches
 * nothing) as often as it can for 4 s: the child's event has every call,
 * once. With the enables made from another CPU, two runs of three failed
 * (6 records missing in one; one record twice in another: the walk can
 * also come back over events it has seen). */
static void test_enable_beside_running(void **state) {
        _cleanup_(monitor_freep) struct monitor *m = NULL;
        struct monitor_opts opts = DEFAULT_OPTS;
        struct source a = {}, none = {};
        struct monitor_source src, quiet = getppid_source(&none);
        volatile uint64_t *shared;
        struct run run = {};
        char filter[64];
        int gate[2], h, cpu, n_cycles = 0;
        cpu_set_t one;
        pid_t child;

        if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
                skip();
        opts.ring_pages = 1024;
        opts.wakeup_bytes = WAKEUP_QUARTER(1024);
        /* [0]: calls made, [1]: stop */
        shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        assert_true(shared != MAP_FAILED);
        cpu = (int) sysconf(_SC_NPROCESSORS_ONLN) - 1;
        assert_int_equal(pipe2(gate, O_CLOEXEC), 0);
        child = fork();
        assert_true(child >= 0);
        if (child == 0) {
                char c;

                CPU_ZERO(&one);
                CPU_SET(cpu, &one);
                if (sched_setaffinity(0, sizeof(one), &one) < 0 || read(gate[0], &c, 1) != 1)
                        _exit(1);
                while (!__atomic_load_n(&shared[1], __ATOMIC_ACQUIRE)) {
                        syscall(SYS_getppid);
                        __atomic_store_n(&shared[0], shared[0] + 1, __ATOMIC_RELEASE);
                }
                _exit(0);
        }
        close(gate[0]);

        assert_int_equal(monitor_new(&opts, &m), 0);
        snprintf(filter, sizeof(filter), "common_pid == %d", (int) child);
        src = getppid_source(&a);
        src.filter = filter;
        quiet.filter = "common_pid == 0";
        h = monitor_add(m, &src);
        assert_true(h >= 0);
        assert_int_equal(monitor_enable(m, h), 0);
        my_tid = my_pid = child;
        run.t0 = now_ns();
        run.t1 = UINT64_MAX;
        assert_int_equal(write(gate[1], "x", 1), 1);
        close(gate[1]);
        for (uint64_t end = now_ns() + 4000000000ull; n_cycles < 5000 && now_ns() < end; n_cycles++) {
                int q = monitor_add(m, &quiet);

                assert_true(q >= 0);
                assert_int_equal(monitor_enable(m, q), 0);
                assert_int_equal(monitor_remove(m, q), 0);
                drain_all(m, &run);
        }
        __atomic_store_n(&shared[1], 1, __ATOMIC_RELEASE);
        assert_int_equal(waitpid(child, NULL, 0), child);
        drain_all(m, &run);
        /* A late drain can leave the ring full when the child stops: the
         * kernel's count of what it dropped then waits for a next record
         * there (2,936,402 seen + 0 lost of 3,168,929 under a loaded
         * host), which the flush writes. */
        for (size_t i = 0; i < monitor_n_rings(m); i++)
                assert_true(monitor_ring_flush_lost(m, i) >= 0);
        for (int k = 0; k < 5000 && a.n + run.lost < shared[0]; k++) {
                usleep(1000);
                drain_all(m, &run);
        }
        my_tid = (pid_t) syscall(SYS_gettid);
        my_pid = getpid();

        print_message("%u of %" PRIu64 " calls seen (%u others, %u broken, %u+%u on the quiet one), %" PRIu64 " lost, over %d enables beside them\n", a.n,
                      shared[0], a.others, a.broken, none.n, none.others, run.lost, n_cycles);
        /* Under qemu's TCG (the VM suite) ~70 in 4 s. */
        assert_true(n_cycles >= 20);
        /* Every call seen once, or counted lost in the kernel's LOST
         * records: a drain late under load (ASan beside CI's parallel
         * tests lost 3,600-280,000 of ~3.8M, the code before 05979f7
         * too) is reported, which is not what this is about; a skipped
         * or repeated record is silent. */
        assert_int_equal(a.n + run.lost, shared[0]);
        assert_int_equal(a.others + a.broken + none.n + none.others, 0);
        munmap((void *) shared, 4096);
}

static int find_tracepoint(void) {
        char path[256], buf[32];
        ssize_t n;
        int fd = -1;

        for (size_t i = 0; i < sizeof(tracefs_roots) / sizeof(tracefs_roots[0]) && fd < 0; i++) {
                snprintf(path, sizeof(path), "%s/events/syscalls/sys_enter_getppid/id", tracefs_roots[i]);
                fd = open(path, O_RDONLY | O_CLOEXEC);
        }
        if (fd < 0)
                return -errno;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return -EIO;
        buf[n] = '\0';
        tp_id = strtoull(buf, NULL, 10);
        return tp_id > 0 ? 0 : -EIO;
}

/* CPU hotplug's half that runs on any host: a ring closed as for a CPU
 * that went offline (monitor_cpu_down()) takes nothing, and opened again
 * (monitor_cpu_up()) has the handle's events back with their filter, their
 * doorbell and their enabled state; the canary says the ring is alive
 * while it is. Taking a CPU offline for real is tests/vm/hotplug.sh. */
static void test_cpu_down_up(void **state) {
        _cleanup_(monitor_freep) struct monitor *m = NULL;
        struct monitor_opts opts = DEFAULT_OPTS;
        struct monitor_source src;
        struct source a = {};
        struct run run = {};
        cpu_set_t saved, one;
        char filter[64];
        const size_t *up;
        size_t n_up, k;
        int h, cpu;

        opts.doorbell = true;
        assert_int_equal(monitor_new(&opts, &m), 0);
        assert_true(monitor_ring_up(m, 0));
        cpu = monitor_ring_cpu(m, 0);
        assert_int_equal(sched_getaffinity(0, sizeof(saved), &saved), 0);
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        if (sched_setaffinity(0, sizeof(one), &one) < 0)
                skip();

        snprintf(filter, sizeof(filter), "common_pid == %d", (int) my_tid);
        src = getppid_source(&a);
        src.filter = filter;
        h = monitor_add(m, &src);
        assert_true(h >= 0);
        assert_int_equal(monitor_enable(m, h), 0);
        usleep(10000);
        assert_true(monitor_ring_alive(m, 0));

        call_getppid(&run, N);
        drain_all(m, &run);
        assert_int_equal(a.n, N);

        /* Down: no ring, nothing captured, as good as armed, not among
         * the rings up. */
        n_up = 0;
        (void) monitor_rings_up(m, &n_up);
        assert_int_equal(monitor_cpu_down(m, 0), 0);
        assert_false(monitor_ring_up(m, 0));
        up = monitor_rings_up(m, &k);
        assert_int_equal(k, n_up - 1);
        for (size_t j = 0; j < k; j++)
                assert_true(up[j] != 0);
        assert_false(monitor_ring_alive(m, 0));
        assert_int_equal(monitor_ring_fd(m, 0), -ENODEV);
        assert_int_equal(monitor_ring_n_doorbells(m, 0), 0);
        assert_true(monitor_ring_armed(m, 0));
        call_getppid(&run, N);
        drain_all(m, &run);
        assert_int_equal(a.n, N);

        /* Up: the event is back, filtered and enabled, with a doorbell. */
        assert_int_equal(monitor_cpu_up(m, 0), 0);
        assert_true(monitor_ring_up(m, 0));
        up = monitor_rings_up(m, &k);
        assert_int_equal(k, n_up);
        assert_int_equal(up[0], 0);
        assert_true(monitor_ring_fd(m, 0) >= 0);
        assert_true(monitor_ring_n_doorbells(m, 0) > 0);
        assert_true(monitor_doorbells_cover(m));
        assert_int_equal(monitor_ring_arm(m, 0), 0);
        call_getppid(&run, N);
        drain_all(m, &run);
        assert_int_equal(a.n, 2 * N);
        assert_int_equal(a.others, 0);
        assert_int_equal(a.broken, 0);
        usleep(10000);
        assert_true(monitor_ring_alive(m, 0));

        /* A disabled handle comes back disabled, and enables as before. */
        assert_int_equal(monitor_disable(m, h), 0);
        assert_int_equal(monitor_cpu_down(m, 0), 0);
        assert_int_equal(monitor_cpu_up(m, 0), 0);
        call_getppid(&run, N);
        drain_all(m, &run);
        assert_int_equal(a.n, 2 * N);
        assert_int_equal(monitor_enable(m, h), 0);
        call_getppid(&run, N);
        drain_all(m, &run);
        assert_int_equal(a.n, 3 * N);

        assert_int_equal(sched_setaffinity(0, sizeof(saved), &saved), 0);
}

int main(void) {
        host_tracing_require_usable();
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_count),
                cmocka_unit_test(test_remove),
                cmocka_unit_test(test_handles_reused),
                cmocka_unit_test(test_filter),
                cmocka_unit_test(test_bad_event),
                cmocka_unit_test(test_pid_target_and_loss),
                cmocka_unit_test(test_lost_flushed),
                cmocka_unit_test(test_lost_flush_own),
                cmocka_unit_test(test_wakeup),
                cmocka_unit_test(test_cgroup_target),
                cmocka_unit_test(test_doorbell),
                cmocka_unit_test(test_doorbell_filter),
                cmocka_unit_test(test_doorbell_pinned),
                cmocka_unit_test(test_malformed_kept),
                cmocka_unit_test(test_enable_beside_running),
                cmocka_unit_test(test_ordered),
                cmocka_unit_test(test_ordered_quiet),
                cmocka_unit_test(test_scan),
                cmocka_unit_test(test_scan_bounded),
                cmocka_unit_test(test_scan_notes),
                cmocka_unit_test(test_cpu_down_up),
        };
        struct monitor *m = NULL;
        int r;

        if (geteuid() != 0) {
                printf("SKIP: needs root (system-wide perf events on tracepoints)\n");
                return 77;
        }
        r = find_tracepoint();
        if (r < 0) {
                printf("SKIP: no syscalls:sys_enter_getppid in tracefs (%s): "
                       "tracefs not mounted or no syscall tracepoints\n", strerror(-r));
                return 77;
        }
        r = monitor_new(&DEFAULT_OPTS, &m);
        if (r == -EACCES || r == -EPERM || r == -ENOSYS || r == -ENOENT) {
                printf("SKIP: perf_event_open/mmap not available here: %s\n", strerror(-r));
                return 77;
        }
        if (r < 0) {
                printf("monitor_new: %s\n", strerror(-r));
                return 1;
        }
        monitor_free(m);

        my_tid = (pid_t) syscall(SYS_gettid);
        my_pid = getpid();
        return cmocka_run_group_tests(tests, NULL, NULL);
}
