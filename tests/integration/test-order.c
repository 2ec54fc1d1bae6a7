/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The time-ordered stream (issue 11): two threads pinned to two CPUs make
 * getpgid() calls at full rate, and a client reading evmond's lines as
 * they come sees every event's ts non-decreasing ("order": "time", the
 * default), with every call delivered or reported lost. With "order":
 * "arrival" the inversions such a client sees are printed, not asserted.
 * With reader threads ("ring": {"threads": 2}) and a second event no
 * client wants, whose samples the threads count and take no further
 * (monitor-scan.c), the stream is as complete and as ordered, and the
 * count exact; so it is with "context" off, where the threads encode the
 * lines the client takes and the merge queues them. Nothing here is timed. Needs root, two online CPUs and
 * syscall tracepoints (else 77). */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "itest.h"

#define N_CALLS 150000

/* The calls' argument: a pid no process has, the event's filter. */
static long magic;
static pthread_barrier_t go;
static bool also_getsid;        /* the workers call getsid() beside each getpgid() */
static bool context_off;        /* the config's "context": false */
static bool late_subscribed;    /* the late client subscribed (atomic): the calls' last quarter may go */
static int halfway;             /* workers through their first half (atomic) */

struct worker {
        pthread_t thread;
        int cpu;
};

static void *worker_main(void *userdata) {
        struct worker *w = userdata;
        cpu_set_t one;

        CPU_ZERO(&one);
        CPU_SET(w->cpu, &one);
        if (sched_setaffinity(0, sizeof(one), &one) < 0)
                abort();
        pthread_barrier_wait(&go);
        for (int i = 0; i < N_CALLS; i++) {
                if (i == N_CALLS / 2)
                        __atomic_add_fetch(&halfway, 1, __ATOMIC_ACQ_REL);
                if (i == 3 * N_CALLS / 4)
                        while (!__atomic_load_n(&late_subscribed, __ATOMIC_ACQUIRE))
                                usleep(1000);
                syscall(SYS_getpgid, magic);
                if (also_getsid)
                        syscall(SYS_getsid, magic);
        }
        return NULL;
}

struct order_tally {
        struct itest_tally t;
        int64_t last_ts;
        int64_t inversions;
        int64_t worst_ns;       /* the largest step back */
        int64_t cpus[2];        /* events from the workers' two CPUs */
        int cpu[2];
        int last_cpu;
        int64_t wrong_fields;   /* getpgid lines whose fields.pid is not the calls' */
        int64_t wrong_comm;     /* ... whose context does not name this program (context on) */
};

static char my_comm[32];        /* /proc/self/comm */

static void order_line(json_object *o, void *userdata) {
        struct order_tally *ot = userdata;
        const char *type = itest_str(o, "type");
        int64_t ts;

        itest_tally_line(o, &ot->t);
        if (strcmp(type, "event") != 0 && strcmp(type, "record") != 0)
                return;
        if (strcmp(type, "event") == 0 && strcmp(itest_str(o, "event"), "syscalls:sys_enter_getpgid") == 0) {
                json_object *f;

                if (!json_object_object_get_ex(o, "fields", &f) || itest_int(f, "pid") != magic)
                        ot->wrong_fields++;
                if (!context_off && (!json_object_object_get_ex(o, "proc", &f) ||
                                     strcmp(itest_str(f, "comm"), my_comm) != 0))
                        ot->wrong_comm++;
        }
        ts = itest_int(o, "ts");
        if (ts < ot->last_ts) {
                if (ot->inversions < 10 && getenv("DEBUG_INV"))
                        fprintf(stderr, "inv: last %" PRId64 " now %" PRId64 " cpu %" PRId64 " (lastcpu %d) at %" PRId64 "\n", ot->last_ts, ts, itest_int(o, "cpu"), ot->last_cpu, ot->t.events);
                ot->inversions++;
                if (ot->last_ts - ts > ot->worst_ns)
                        ot->worst_ns = ot->last_ts - ts;
        } else {
                ot->last_ts = ts;
                ot->last_cpu = (int) itest_int(o, "cpu");
        }
        for (int k = 0; k < 2; k++)
                if (itest_int(o, "cpu") == ot->cpu[k])
                        ot->cpus[k]++;
}

/* A client that subscribes once the calls are halfway, while they go on
 * (at three quarters they wait for it), with a filter on one CPU: a
 * match that needs the sample.
 * From then on the threads encode nothing of the event, and the lines
 * they had encoded that the merge had not taken yet go the way of every
 * sample (on_noted()'s fallback): were they queued as encoded, with no
 * sample to filter by, the client would get the other CPU's lines too. */
struct late_client {
        pthread_t thread;
        const char *socket;
        int cpu;
        int64_t events, wrong_fields, wrong_cpu;
};

static void late_line(json_object *o, void *userdata) {
        struct late_client *l = userdata;
        json_object *f;

        if (strcmp(itest_str(o, "type"), "event") != 0)
                return;
        l->events++;
        if (!json_object_object_get_ex(o, "fields", &f) || itest_int(f, "pid") != magic)
                l->wrong_fields++;
        if (itest_int(o, "cpu") != l->cpu)
                l->wrong_cpu++;
}

static void *late_client_main(void *userdata) {
        struct late_client *l = userdata;
        struct itest_client *c = calloc(1, sizeof(*c));
        char line[256];
        json_object *o;
        char *text;
        size_t len;

        /* Connected from the start (a client that comes changes which
         * pids are evmond's own, and that alone sends what was encoded
         * to the fallback), on a subscription that takes nothing. */
        if (!c || itest_client_connect(c, l->socket) < 0)
                abort();
        json_object_put(itest_client_expect(c, "hello", 5000));
        if (itest_client_send(c, "{\"type\":\"subscribe\",\"events\":[\"syscalls:sys_enter_getsid\"],"
                                 "\"filter\":\"cpu < 0\"}\n") < 0)
                abort();
        o = itest_client_expect(c, "subscribed", 5000);
        if (!o)
                abort();
        json_object_put(o);
        while (__atomic_load_n(&halfway, __ATOMIC_ACQUIRE) < 2)
                usleep(100);
        snprintf(line, sizeof(line), "{\"type\":\"subscribe\",\"events\":[\"syscalls:sys_enter_getpgid\"],"
                 "\"filter\":\"cpu == %d\"}\n", l->cpu);
        if (itest_client_send(c, line) < 0)
                abort();
        o = itest_client_expect(c, "subscribed", 5000);
        if (!o)
                abort();
        json_object_put(o);
        __atomic_store_n(&late_subscribed, true, __ATOMIC_RELEASE);
        text = itest_client_slurp(c, 1000, 120000, &len);
        if (text)
                itest_for_each_line(text, len, late_line, l);
        free(text);
        itest_client_close(c);
        free(c);
        return NULL;
}

/* Runs the workers against an evmond with ORDER ("time", "arrival") and
 * tallies what one client got. THREADS: ring.threads, and getsid()
 * served too, which the client does not take. */
static void run_threads(const char *order, unsigned threads, struct order_tally *ot, json_object **ret_status) {
        struct late_client late = {};
        struct itest_daemon d = {};
        struct itest_client *c = calloc(1, sizeof(*c));
        struct worker w[2] = { { .cpu = ot->cpu[0] }, { .cpu = ot->cpu[1] } };
        char config[768];
        char *text;
        size_t len;
        json_object *o;

        if (threads > 0)
                snprintf(config, sizeof(config),
                         "{\"order\": \"%s\", \"self\": true, \"ring\": {\"threads\": %u}, %s\"events\": ["
                         "{\"tracepoint\": \"syscalls:sys_enter_getpgid\", \"filter\": \"pid == %ld\"},"
                         "{\"tracepoint\": \"syscalls:sys_enter_getsid\", \"filter\": \"pid == %ld\"}]}\n",
                         order, threads, context_off ? "\"context\": false, " : "", magic, magic);
        else
                snprintf(config, sizeof(config),
                         "{\"order\": \"%s\", \"self\": true, \"events\": [{\"tracepoint\": "
                         "\"syscalls:sys_enter_getpgid\", \"filter\": \"pid == %ld\"}]}\n", order, magic);
        also_getsid = threads > 0;
        assert_non_null(c);
        assert_int_equal(itest_daemon_start(&d, config), 0);
        assert_int_equal(itest_client_connect(c, d.socket), 0);
        o = itest_client_expect(c, "hello", 5000);
        assert_non_null(o);
        json_object_put(o);
        if (threads > 0) {
                assert_int_equal(itest_client_send(c, "{\"type\":\"subscribe\",\"events\":"
                                                      "[\"syscalls:sys_enter_getpgid\"]}\n"), 0);
                o = itest_client_expect(c, "subscribed", 5000);
                assert_non_null(o);
                json_object_put(o);
        }

        assert_int_equal(pthread_barrier_init(&go, NULL, 3), 0);
        for (int k = 0; k < 2; k++)
                assert_int_equal(pthread_create(&w[k].thread, NULL, worker_main, &w[k]), 0);
        __atomic_store_n(&late_subscribed, !context_off, __ATOMIC_RELEASE);
        __atomic_store_n(&halfway, 0, __ATOMIC_RELEASE);
        pthread_barrier_wait(&go);
        if (context_off) {
                late.socket = d.socket;
                late.cpu = ot->cpu[0];
                assert_int_equal(pthread_create(&late.thread, NULL, late_client_main, &late), 0);
        }
        /* Read as they come, as a client does: the lines of 300,000
         * calls would not fit in the client's queue. A ring the workers
         * leave full keeps the kernel's count of what it dropped until a
         * next record there: evmond has one written (nothing here does). */
        text = itest_client_slurp(c, 1000, 120000, &len);
        for (int k = 0; k < 2; k++)
                assert_int_equal(pthread_join(w[k].thread, NULL), 0);
        pthread_barrier_destroy(&go);
        if (context_off) {
                assert_int_equal(pthread_join(late.thread, NULL), 0);
                fprintf(stderr, "late client with a filter on CPU %d: %" PRId64 " events, %" PRId64
                        " of another CPU\n", late.cpu, late.events, late.wrong_cpu);
                assert_true(late.events > 0);
                assert_int_equal(late.wrong_fields, 0);
                assert_int_equal(late.wrong_cpu, 0);
        }
        assert_non_null(text);
        itest_for_each_line(text, len, order_line, ot);
        free(text);

        assert_int_equal(itest_client_send(c, "{\"type\":\"status\"}\n"), 0);
        *ret_status = itest_client_expect(c, "status", 5000);
        assert_non_null(*ret_status);

        itest_client_close(c);
        free(c);
        assert_int_equal(itest_daemon_stop(&d), 0);
        itest_daemon_cleanup(&d);

        fprintf(stderr, "order %s: %" PRId64 " events (%" PRId64 " on CPU %d, %" PRId64 " on CPU %d), "
                "%" PRId64 " lost, %" PRId64 " dropped; %" PRId64
                " ts inversions at the client (largest %.1f us)\n",
                order, ot->t.events, ot->cpus[0], ot->cpu[0], ot->cpus[1], ot->cpu[1], ot->t.lost,
                ot->t.dropped, ot->inversions, (double) ot->worst_ns / 1e3);
        /* Every call delivered or reported lost (the ring's loss may count
         * the process table's records too: at least as many). */
        assert_true(ot->t.events + ot->t.dropped <= 2 * N_CALLS);
        assert_true(ot->t.events + ot->t.dropped + ot->t.lost >= 2 * N_CALLS);
        /* Both CPUs' rings had a share to merge. */
        assert_true(ot->cpus[0] > 0 && ot->cpus[1] > 0);
        assert_int_equal(ot->wrong_fields, 0);
        assert_int_equal(ot->wrong_comm, 0);
}

static void run(const char *order, struct order_tally *ot, json_object **ret_status) {
        run_threads(order, 0, ot, ret_status);
}

static void pick_cpus(struct order_tally *ot) {
        cpu_set_t all;

        assert_int_equal(test_cpus(ot->cpu, 2, &all), 2);
}

static void test_time_order(void **state) {
        struct order_tally ot = {};
        json_object *st, *order;

        pick_cpus(&ot);
        run("time", &ot, &st);
        assert_true(json_object_object_get_ex(st, "order", &order));
        fprintf(stderr, "status order: %s\n", json_object_to_json_string(order));
        assert_string_equal(itest_str(order, "mode"), "time");
        assert_int_equal(ot.inversions, 0);
        /* evmond saw none either. */
        assert_int_equal(itest_int(order, "late"), 0);
        json_object_put(st);
        itest_tally_done(&ot.t);
}

/* The count of event NAME in status ST. */
static int64_t status_count(json_object *st, const char *name) {
        json_object *events;

        assert_true(json_object_object_get_ex(st, "events", &events));
        for (size_t i = 0; i < json_object_array_length(events); i++) {
                json_object *e = json_object_array_get_idx(events, i);

                if (strcmp(itest_str(e, "event"), name) == 0)
                        return itest_int(e, "count");
        }
        fail_msg("no %s in status", name);
        return -1;
}

/* Reader threads: the getsid() samples, which no client wants, are
 * counted by the threads' scans, every one of them once; the getpgid()
 * samples between them in the same rings go to the client in time
 * order, every one delivered or reported lost, their lines encoded by
 * the threads and their context (this program's comm) spliced in by
 * the loop. */
static void test_time_order_threads(void **state) {
        struct order_tally ot = {};
        json_object *st, *order, *ring;
        int64_t getsid_count;

        pick_cpus(&ot);
        run_threads("time", 2, &ot, &st);
        assert_true(json_object_object_get_ex(st, "order", &order));
        assert_true(json_object_object_get_ex(st, "ring", &ring));
        getsid_count = status_count(st, "syscalls:sys_enter_getsid");
        fprintf(stderr, "status ring: %s\norder: %s\ngetsid counted %" PRId64 " of %d\n",
                json_object_to_json_string(ring), json_object_to_json_string(order), getsid_count, 2 * N_CALLS);
        assert_int_equal(itest_int(ring, "threads"), 2);
        assert_true(itest_int(ring, "scans") > 0);
        assert_true(itest_int(ring, "encoded") > 0);
        assert_true(itest_int(ring, "scanned") > 0);
        assert_true(itest_int(ring, "scanned") <= getsid_count);
        /* Counted once each: never more than were made; all of them
         * when the kernel lost none. */
        assert_true(getsid_count <= 2 * N_CALLS);
        if (ot.t.lost == 0)
                assert_int_equal(getsid_count, 2 * N_CALLS);
        /* None of them reached the client. */
        assert_int_equal(itest_tally_get(&ot.t, 0, "syscalls:sys_enter_getsid"), 0);
        /* As in test_time_order_encoded: the reader thread encodes here
         * too (since f53ec8e), five busy threads on two CPUs, and a call
         * held off its CPU between its time and its record reaches the
         * ring past the hold (late 1, in flight 634 and 721 us, in 2 of
         * the last 3 suites). evmond counts each; the client sees no
         * inversion evmond did not count. */
        assert_true(ot.inversions <= itest_int(order, "late"));
        json_object_put(st);
        itest_tally_done(&ot.t);
}

/* With "context" off a getpgid() line needs nothing the loop keeps: the
 * reader threads encode it where they scan, and the merge matches and
 * queues it. Every call still comes once, whole, in time order, to the
 * first client, while a second one with a filter comes (late_client). */
static void test_time_order_encoded(void **state) {
        struct order_tally ot = {};
        json_object *st, *order, *ring;
        int64_t getsid_count;

        pick_cpus(&ot);
        context_off = true;
        run_threads("time", 2, &ot, &st);
        context_off = false;
        assert_true(json_object_object_get_ex(st, "order", &order));
        assert_true(json_object_object_get_ex(st, "ring", &ring));
        getsid_count = status_count(st, "syscalls:sys_enter_getsid");
        fprintf(stderr, "status ring: %s\norder: %s\n", json_object_to_json_string(ring),
                json_object_to_json_string(order));
        assert_true(itest_int(ring, "encoded") > 0);
        assert_true(itest_int(ring, "encoded") <= ot.t.events + ot.t.dropped);
        assert_true(itest_int(ring, "scanned") > 0);
        if (ot.t.lost == 0) {
                assert_int_equal(getsid_count, 2 * N_CALLS);
                assert_int_equal(status_count(st, "syscalls:sys_enter_getpgid"), 2 * N_CALLS);
        }
        assert_int_equal(itest_tally_get(&ot.t, 0, "syscalls:sys_enter_getsid"), 0);
        /* Five busy threads on two CPUs: a call preempted between its
         * time and its record may reach the ring later than the hold
         * (in_flight_max_us). evmond counts each such record as late;
         * the client sees no inversion evmond did not count. */
        assert_true(ot.inversions <= itest_int(order, "late"));
        json_object_put(st);
        itest_tally_done(&ot.t);
}

static void test_arrival_order(void **state) {
        struct order_tally ot = {};
        json_object *st, *order;

        pick_cpus(&ot);
        run("arrival", &ot, &st);
        assert_true(json_object_object_get_ex(st, "order", &order));
        assert_string_equal(itest_str(order, "mode"), "arrival");
        /* Reported, not asserted: how often the kernel's two rings,
         * read one after the other, interleave. */
        fprintf(stderr, "arrival order: %" PRId64 " inversions (not asserted)\n", ot.inversions);
        json_object_put(st);
        itest_tally_done(&ot.t);
}

int main(void) {
        static const char *const need[] = { "syscalls/sys_enter_getpgid", "syscalls/sys_enter_getsid", NULL };
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_time_order),
                cmocka_unit_test(test_time_order_threads),
                cmocka_unit_test(test_time_order_encoded),
                cmocka_unit_test(test_arrival_order),
        };
        cpu_set_t all;

        itest_require(need);
        if (sched_getaffinity(0, sizeof(all), &all) < 0 || CPU_COUNT(&all) < 2) {
                fprintf(stderr, "test-order needs two CPUs to run on\n");
                return ITEST_SKIP;
        }
        /* Above pid_max (4194304 at most): no process has it. */
        magic = 0x7e000000L + getpid();
        {
                FILE *f = fopen("/proc/self/comm", "re");

                if (!f || !fgets(my_comm, sizeof(my_comm), f))
                        return 1;
                my_comm[strcspn(my_comm, "\n")] = 0;
                fclose(f);
        }
        return cmocka_run_group_tests(tests, NULL, NULL);
}
