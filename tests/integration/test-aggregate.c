/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Aggregation in a real evmond on the real kernel (issue 30): counts by
 * comm and by pid equal to the calls a child made, a log2 histogram of
 * read sizes the test chose, bucket by bucket, a latency histogram of
 * sleeps the test chose, and an unknown key refused with no lines after.
 * Root and the syscall tracepoints, else 77. */

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <stdint.h>
#include <unistd.h>
#include <cmocka.h>

#include "itest.h"

#define N_CALLS 3000
#define COMM "evagg-child"

static const char config[] =
        "{\n"
        "  \"events\": [\n"
        "    {\"tracepoint\": \"syscalls:sys_enter_getppid\"},\n"
        "    {\"tracepoint\": \"syscalls:sys_enter_read\"},\n"
        "    {\"tracepoint\": \"syscalls:sys_enter_nanosleep\"},\n"
        "    {\"tracepoint\": \"syscalls:sys_exit_nanosleep\"},\n"
        "    {\"software\": \"cpu-clock\", \"freq\": 999, \"callchain\": {\"max_stack\": 32}, \"symbols\": true}\n"
        "  ]\n"
        "}\n";

static struct itest_daemon daemon_;

static int setup(void **state) {
        static const char *const need[] = {
                "syscalls/sys_enter_getppid", "syscalls/sys_enter_read", "syscalls/sys_enter_nanosleep",
                "syscalls/sys_exit_nanosleep", NULL,
        };

        itest_require(need);
        return itest_daemon_start(&daemon_, config) == 0 ? 0 : -1;
}

static int teardown(void **state) {
        itest_daemon_cleanup(&daemon_);
        return 0;
}

/* LINE and its newline. */
static int send_line(struct itest_client *c, const char *line) {
        int r = itest_client_send(c, line);

        return r < 0 ? r : itest_client_send(c, "\n");
}

/* Connects and sends REQUEST; the "aggregating" answer checked. */
static void agg_connect(struct itest_client *c, const char *request) {
        json_object *o;

        assert_int_equal(itest_client_connect(c, daemon_.socket), 0);
        json_object_put(itest_client_expect(c, "hello", 5000));
        assert_int_equal(send_line(c, request), 0);
        o = itest_client_expect(c, "aggregating", 5000);
        assert_non_null(o);
        json_object_put(o);
}

/* The entry of line O whose key KEY is the string S (or, S NULL, the
 * integer I); NULL when there is none. */
static json_object *find_entry(json_object *o, const char *key, const char *s, int64_t i) {
        json_object *entries, *e, *k, *v;

        if (!json_object_object_get_ex(o, "entries", &entries))
                return NULL;
        for (size_t j = 0; j < json_object_array_length(entries); j++) {
                e = json_object_array_get_idx(entries, j);
                if (!json_object_object_get_ex(e, "key", &k) || !json_object_object_get_ex(k, key, &v))
                        continue;
                if (s ? json_object_is_type(v, json_type_string) && strcmp(json_object_get_string(v), s) == 0
                      : json_object_is_type(v, json_type_int) && json_object_get_int64(v) == i)
                        return e;
        }
        return NULL;
}

/* Flushes until the entry (KEY = S or I) counts WANT, or 10 s passed
 * (evmond reads the rings on its own schedule; a cumulative request
 * makes every flush the total). Returns the last aggregate line. */
static json_object *flush_until(struct itest_client *c, const char *key, const char *s, int64_t i, int64_t want) {
        json_object *o = NULL;

        for (int tries = 0; tries < 100; tries++) {
                json_object *e;

                json_object_put(o);
                assert_int_equal(send_line(c, "{\"type\":\"flush\"}"), 0);
                o = itest_client_expect(c, "aggregate", 5000);
                assert_non_null(o);
                e = find_entry(o, key, s, i);
                if (e && itest_int(e, "count") >= want)
                        return o;
                usleep(100 * 1000);
        }
        return o;
}

static pid_t spawn(void (*fn)(void), int *ret_gate) {
        pid_t pid = test_fork_gated(ret_gate);

        if (pid == 0) {
                (void) prctl(PR_SET_NAME, COMM);
                fn();
                _exit(0);
        }
        return pid;
}

static void make_getppid(void) {
        for (int i = 0; i < N_CALLS; i++)
                syscall(SYS_getppid);
}

static void test_count_by_comm_and_pid(void **state) {
        struct itest_client by_comm, by_pid, not_it;
        json_object *o, *e;
        char request[256];
        int gate;
        pid_t pid;

        agg_connect(&by_comm, "{\"type\":\"aggregate\",\"events\":[\"syscalls:sys_enter_getppid\"],\"by\":[\"comm\"],"
                              "\"interval_ms\":0,\"cumulative\":true}");
        pid = spawn(make_getppid, &gate);
        /* The same count through the request's own filter; another
         * that leaves the child out folds none of its calls. */
        snprintf(request, sizeof(request), "{\"type\":\"aggregate\",\"events\":[\"syscalls:sys_enter_getppid\"],"
                 "\"by\":[\"pid\"],\"interval_ms\":0,\"cumulative\":true,\"filter\":\"pid == %d\"}", (int) pid);
        agg_connect(&by_pid, request);
        snprintf(request, sizeof(request), "{\"type\":\"aggregate\",\"events\":[\"syscalls:sys_enter_getppid\"],"
                 "\"by\":[\"pid\"],\"interval_ms\":0,\"filter\":\"pid != %d\"}", (int) pid);
        agg_connect(&not_it, request);
        itest_release(gate);
        itest_reap(pid);

        o = flush_until(&by_pid, "pid", NULL, pid, N_CALLS);
        e = find_entry(o, "pid", NULL, pid);
        assert_non_null(e);
        assert_int_equal(itest_int(e, "count"), N_CALLS);
        assert_int_equal(itest_int(o, "lost"), 0);
        assert_int_equal(itest_int(o, "keys_dropped"), 0);
        json_object_put(o);

        o = flush_until(&by_comm, "comm", COMM, 0, N_CALLS);
        e = find_entry(o, "comm", COMM, 0);
        assert_non_null(e);
        assert_int_equal(itest_int(e, "count"), N_CALLS);
        json_object_put(o);
        assert_int_equal(send_line(&not_it, "{\"type\":\"flush\"}"), 0);
        o = itest_client_expect(&not_it, "aggregate", 5000);
        assert_non_null(o);
        assert_null(find_entry(o, "pid", NULL, pid));
        json_object_put(o);
        itest_client_close(&by_comm);
        itest_client_close(&by_pid);
        itest_client_close(&not_it);
}

/* Reads of sizes we choose from /dev/zero: 0 (bucket [0,1)), 1 ([1,2)),
 * 100 x3 ([64,128)), 5000 x5 ([4096,8192)), 1 MiB x2 ([1M,2M)). */
static void make_reads(void) {
        static char buf[1 << 20];
        static const size_t sizes[] = { 0, 1, 100, 100, 100, 5000, 5000, 5000, 5000, 5000, 1 << 20, 1 << 20 };
        int fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);

        if (fd < 0)
                _exit(1);
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
                if (read(fd, buf, sizes[i]) < 0)
                        _exit(1);
        close(fd);
}

static int64_t bucket(json_object *e, int64_t low) {
        json_object *b, *x, *v;

        if (!json_object_object_get_ex(e, "buckets", &b))
                return -1;
        for (size_t i = 0; i < json_object_array_length(b); i++) {
                x = json_object_array_get_idx(b, i);
                if (json_object_object_get_ex(x, "low", &v) && json_object_is_type(v, json_type_int) &&
                    json_object_get_int64(v) == low)
                        return itest_int(x, "count");
        }
        return 0;
}

static void test_hist_of_read_sizes(void **state) {
        struct itest_client c;
        char req[512];
        json_object *o, *e, *b;
        int gate;
        pid_t pid;

        pid = spawn(make_reads, &gate);
        /* By comm: the child's read of its gate comes before it takes
         * its name, and is not one of ours. */
        snprintf(req, sizeof(req), "{\"type\":\"aggregate\",\"events\":[\"syscalls:sys_enter_read\"],\"by\":[\"comm\"],"
                 "\"value\":{\"op\":\"hist\",\"field\":\"count\"},\"pids\":[%d],\"interval_ms\":0,\"cumulative\":true}",
                 (int) pid);
        agg_connect(&c, req);
        itest_release(gate);
        itest_reap(pid);
        o = flush_until(&c, "comm", COMM, 0, 12);
        e = find_entry(o, "comm", COMM, 0);
        assert_non_null(e);
        assert_int_equal(itest_int(e, "count"), 12);
        assert_int_equal(bucket(e, 0), 1);
        assert_int_equal(bucket(e, 1), 1);
        assert_int_equal(bucket(e, 64), 3);
        assert_int_equal(bucket(e, 4096), 5);
        assert_int_equal(bucket(e, 1 << 20), 2);
        assert_true(json_object_object_get_ex(e, "buckets", &b));
        assert_int_equal(json_object_array_length(b), 5);
        assert_int_equal(itest_int(e, "min"), 0);
        assert_int_equal(itest_int(e, "max"), 1 << 20);
        assert_int_equal(itest_int(e, "sum"), 1 + 300 + 25000 + (2 << 20));
        json_object_put(o);
        itest_client_close(&c);
}

/* 5 sleeps of 20 ms by the raw syscall (glibc's nanosleep() is
 * clock_nanosleep). */
static void make_sleeps(void) {
        struct timespec ts = { 0, 20 * 1000 * 1000 };

        for (int i = 0; i < 5; i++)
                syscall(SYS_nanosleep, &ts, NULL);
}

static void test_latency_of_sleeps(void **state) {
        struct itest_client c;
        char req[512];
        json_object *o, *e;
        int gate;
        pid_t pid;

        pid = spawn(make_sleeps, &gate);
        snprintf(req, sizeof(req), "{\"type\":\"aggregate\",\"value\":{\"op\":\"latency\",\"start\":"
                 "\"syscalls:sys_enter_nanosleep\",\"end\":\"syscalls:sys_exit_nanosleep\",\"match\":\"tid\"},"
                 "\"by\":[\"comm\"],\"pids\":[%d],\"interval_ms\":0,\"cumulative\":true}", (int) pid);
        agg_connect(&c, req);
        itest_release(gate);
        itest_reap(pid);
        o = flush_until(&c, "comm", COMM, 0, 5);
        e = find_entry(o, "comm", COMM, 0);
        assert_non_null(e);
        assert_int_equal(itest_int(e, "count"), 5);
        /* 20 ms is in [16M, 32M) ns; a loaded machine may oversleep, not
         * by 12 ms five times. */
        assert_int_equal(bucket(e, 16777216), 5);
        assert_true(itest_int(e, "min") >= 20 * 1000 * 1000);
        assert_int_equal(itest_int(o, "unmatched"), 0);
        json_object_put(o);
        itest_client_close(&c);
}

/* 300 ms on the CPU in user space. */
static void make_spin(void) {
        struct timespec t0, t;
        volatile uint64_t x = 0;

        clock_gettime(CLOCK_MONOTONIC, &t0);
        do {
                for (int i = 0; i < 100000; i++)
                        x += (uint64_t) i;
                clock_gettime(CLOCK_MONOTONIC, &t);
        } while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 300 * 1000000L);
}

static void test_frames_of_a_busy_child(void **state) {
        struct itest_client c;
        json_object *o = NULL, *entries;
        char req[512];
        int64_t total = 0;
        int gate;
        pid_t pid;

        pid = spawn(make_spin, &gate);
        snprintf(req, sizeof(req), "{\"type\":\"aggregate\",\"events\":[\"software:cpu-clock\"],\"by\":[\"frame\"],"
                 "\"pids\":[%d],\"interval_ms\":0,\"cumulative\":true}", (int) pid);
        agg_connect(&c, req);
        itest_release(gate);
        itest_reap(pid);
        for (int tries = 0; tries < 50 && total < 30; tries++) {
                json_object_put(o);
                usleep(100 * 1000);
                assert_int_equal(send_line(&c, "{\"type\":\"flush\"}"), 0);
                o = itest_client_expect(&c, "aggregate", 5000);
                assert_non_null(o);
                total = itest_int(o, "events");
        }
        /* ~300 samples at 999 Hz; a loaded machine gives fewer. */
        assert_true(total >= 30);
        assert_true(json_object_object_get_ex(o, "entries", &entries));
        assert_true(json_object_array_length(entries) > 0);
        for (size_t i = 0; i < json_object_array_length(entries); i++) {
                json_object *k, *f;

                assert_true(json_object_object_get_ex(json_object_array_get_idx(entries, i), "key", &k));
                assert_true(json_object_object_get_ex(k, "frame", &f));
                /* A symbol and offset, or an address where none was found. */
                assert_true(json_object_is_type(f, json_type_string));
                assert_true(strstr(json_object_get_string(f), "+0x") || strncmp(json_object_get_string(f), "0x", 2) == 0);
        }
        json_object_put(o);
        itest_client_close(&c);
}

static void test_unknown_key_is_an_error_and_no_lines(void **state) {
        struct itest_client c;
        json_object *o;
        size_t len;
        char *text;
        int gate;
        pid_t pid;

        assert_int_equal(itest_client_connect(&c, daemon_.socket), 0);
        json_object_put(itest_client_expect(&c, "hello", 5000));
        assert_int_equal(send_line(&c, "{\"type\":\"aggregate\",\"events\":[\"syscalls:sys_enter_getppid\"],"
                                               "\"by\":[\"comm\",\"colour\"]}"), 0);
        o = itest_client_expect(&c, "error", 5000);
        assert_non_null(o);
        assert_non_null(strstr(itest_str(o, "error"), "unknown key \"colour\""));
        json_object_put(o);
        /* After the error: nothing, not every event of the host. */
        pid = spawn(make_getppid, &gate);
        itest_release(gate);
        itest_reap(pid);
        text = itest_client_slurp(&c, 500, 3000, &len);
        assert_null(strstr(text, "\"type\":\"event\""));
        free(text);

        /* A field the event lacks, and a stack of an event with no callchain. */
        assert_int_equal(send_line(&c, "{\"type\":\"aggregate\",\"events\":[\"syscalls:sys_enter_getppid\"],"
                                               "\"value\":{\"op\":\"hist\",\"field\":\"nope\"}}"), 0);
        o = itest_client_expect(&c, "error", 5000);
        assert_non_null(o);
        assert_non_null(strstr(itest_str(o, "error"), "no integer field \"nope\""));
        json_object_put(o);
        assert_int_equal(send_line(&c, "{\"type\":\"aggregate\",\"events\":[\"syscalls:sys_enter_getppid\"],"
                                               "\"by\":[\"stack\"]}"), 0);
        o = itest_client_expect(&c, "error", 5000);
        assert_non_null(o);
        assert_non_null(strstr(itest_str(o, "error"), "has no callchain"));
        json_object_put(o);

        /* A filter on a field the event lacks. */
        assert_int_equal(send_line(&c, "{\"type\":\"aggregate\",\"events\":[\"syscalls:sys_enter_getppid\"],"
                                               "\"filter\":\"fd > 2\"}"), 0);
        o = itest_client_expect(&c, "error", 5000);
        assert_non_null(o);
        assert_non_null(strstr(itest_str(o, "error"), "has a field \"fd\""));
        json_object_put(o);

        /* An aggregating client gets no event lines, whatever happens. */
        assert_int_equal(send_line(&c, "{\"type\":\"aggregate\",\"events\":[\"syscalls:sys_enter_getppid\"],"
                                               "\"interval_ms\":0}"), 0);
        json_object_put(itest_client_expect(&c, "aggregating", 5000));
        pid = spawn(make_getppid, &gate);
        itest_release(gate);
        itest_reap(pid);
        text = itest_client_slurp(&c, 500, 3000, &len);
        assert_null(strstr(text, "\"type\":\"event\""));
        assert_null(strstr(text, "\"type\":\"aggregate\""));
        free(text);
        itest_client_close(&c);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_count_by_comm_and_pid),
                cmocka_unit_test(test_hist_of_read_sizes),
                cmocka_unit_test(test_latency_of_sleeps),
                cmocka_unit_test(test_frames_of_a_busy_child),
                cmocka_unit_test(test_unknown_key_is_an_error_and_no_lines),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
