/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The whole path on the real kernel: evmond on a temporary socket serving
 * sched_process_exec and sys_enter_getppid; a child makes N getppid calls
 * and execs a uniquely named binary; clients count what they get. */

#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "itest.h"

#define N_GETPPID 100000

static const char config[] =
        "// integration test config\n"
        "{\n"
        "  \"clients\": {\"queue_kib\": 4096},\n"
        "  \"events\": [\n"
        "    {\"tracepoint\": \"sched:sched_process_exec\"},\n"
        "    {\"tracepoint\": \"syscalls:sys_enter_getppid\"}\n"
        "  ]\n"
        "}\n";

static struct itest_daemon daemon_;
static struct itest_daemon counts_;     /* test_exact_counts_with_slow_and_second_client's own */
static struct itest_daemon quiet_;      /* test_quiet_rings_back_off's own */

static int setup(void **state) {
        return itest_daemon_start(&daemon_, config) == 0 ? 0 : -1;
}

static int teardown(void **state) {
        itest_daemon_cleanup(&daemon_);
        itest_daemon_cleanup(&counts_);
        itest_daemon_cleanup(&quiet_);
        return 0;
}

/* Copies /bin/true to a unique name so its exec is ours alone. */
static void make_unique_binary(char *path, size_t size) {
        char cmd[512];
        snprintf(path, size, "%s/evmon-it-%d-%ld", daemon_.dir, getpid(), (long) random());
        snprintf(cmd, sizeof(cmd), "cp /bin/true '%s'", path);
        assert_int_equal(system(cmd), 0);
}

/* A child that waits until itest_release(*RET_GATE), makes N getppid
 * calls and execs BINARY. */
static pid_t spawn_workload(const char *binary, int n, int *ret_gate) {
        pid_t pid = test_fork_gated_with(itest_fork, ret_gate);

        if (pid == 0) {
                for (int i = 0; i < n; i++)
                        syscall(SYS_getppid);
                execl(binary, binary, (char *) NULL);
                _exit(127);
        }
        return pid;
}

static void test_hello_lists_events(void **state) {
        struct itest_client *c = calloc(1, sizeof(*c));
        json_object *o, *events;

        assert_int_equal(itest_client_connect(c, daemon_.socket), 0);
        o = itest_client_next(c, 5000);
        assert_non_null(o);
        assert_string_equal(itest_str(o, "type"), "hello");
        assert_int_equal(itest_int(o, "version"), 1);
        assert_true(json_object_object_get_ex(o, "events", &events));
        assert_int_equal(json_object_array_length(events), 2);
        assert_string_equal(json_object_get_string(json_object_array_get_idx(events, 0)), "sched:sched_process_exec");
        assert_string_equal(json_object_get_string(json_object_array_get_idx(events, 1)), "syscalls:sys_enter_getppid");
        json_object_put(o);
        itest_client_close(c);
        free(c);
}

static void test_bad_lines_get_errors(void **state) {
        struct itest_client *c = calloc(1, sizeof(*c));
        json_object *o;

        assert_int_equal(itest_client_connect(c, daemon_.socket), 0);
        json_object_put(itest_client_expect(c, "hello", 5000));
        assert_int_equal(itest_client_send(c, "this is not json\n"), 0);
        o = itest_client_expect(c, "error", 5000);
        assert_non_null(o);
        json_object_put(o);
        assert_int_equal(itest_client_send(c, "{\"type\":\"subscribe\",\"events\":[\"sched:no_such_event\"]}\n"), 0);
        o = itest_client_expect(c, "error", 5000);
        assert_non_null(o);
        assert_non_null(strstr(itest_str(o, "error"), "sched:no_such_event"));
        json_object_put(o);
        assert_int_equal(itest_client_send(c, "{\"type\":\"subscribe\",\"events\":[\"sched:*\"]}\n"), 0);
        o = itest_client_expect(c, "subscribed", 5000);
        assert_non_null(o);
        json_object_put(o);
        itest_client_close(c);
        free(c);
}

/* A subscribe evmond refuses (a misspelt key, an event not served)
 * leaves the client with no event until one is taken: it asked for
 * less than everything, and before this it got every event on the host. */
static void test_refused_subscribe_gets_nothing(void **state) {
        static const char *const refused[] = {
                "{\"type\":\"subscribe\",\"event\":[\"syscalls:sys_enter_getppid\"]}\n",
                "{\"type\":\"subscribe\",\"events\":[\"sched:no_such_event\"]}\n",
                "{\"type\":\"subscribe\",\"events\":\"syscalls:sys_enter_getppid\"}\n",
        };

        for (size_t k = 0; k < sizeof(refused) / sizeof(refused[0]); k++) {
                struct itest_client *c = calloc(1, sizeof(*c));
                struct itest_tally t = {};
                json_object *o;
                pid_t pid;

                assert_int_equal(itest_client_connect(c, daemon_.socket), 0);
                json_object_put(itest_client_expect(c, "hello", 5000));
                assert_int_equal(itest_client_send(c, refused[k]), 0);
                o = itest_client_expect(c, "error", 5000);
                assert_non_null(o);
                json_object_put(o);
                pid = itest_tally_calls(c, SYS_getppid, 0, 1000, &t);
                assert_int_equal(t.events, 0);
                itest_tally_done(&t);

                /* A valid subscribe after it: the events come. */
                assert_int_equal(itest_client_send(c, "{\"type\":\"subscribe\",\"events\":[\"syscalls:sys_enter_getppid\"]}\n"), 0);
                o = itest_client_expect(c, "subscribed", 5000);
                assert_non_null(o);
                json_object_put(o);
                t = (struct itest_tally) {};
                pid = itest_tally_calls(c, SYS_getppid, 0, 1000, &t);
                assert_int_equal(itest_tally_get(&t, pid, "syscalls:sys_enter_getppid") + t.lost + t.dropped, 1000);
                itest_tally_done(&t);
                itest_client_close(c);
                free(c);
        }
}

/* status's context lookups (hits + misses) and the count of EVENT, asked
 * on C. */
static void status_counts(struct itest_client *c, const char *event, int64_t *ret_lookups, int64_t *ret_count) {
        json_object *o, *ctx, *events;

        assert_int_equal(itest_client_send(c, "{\"type\":\"status\"}\n"), 0);
        o = itest_client_expect(c, "status", 5000);
        assert_non_null(o);
        assert_true(json_object_object_get_ex(o, "context", &ctx));
        *ret_lookups = itest_int(ctx, "hits") + itest_int(ctx, "misses");
        assert_true(json_object_object_get_ex(o, "events", &events));
        *ret_count = -1;
        for (size_t i = 0; i < json_object_array_length(events); i++) {
                json_object *e = json_object_array_get_idx(events, i);

                if (strcmp(itest_str(e, "event"), event) == 0)
                        *ret_count = itest_int(e, "count");
        }
        json_object_put(o);
}

/* Work no client wants is not done: with the only client subscribed to
 * exec, 2,000 getppid calls are counted, and not one of them costs a
 * context lookup (annotate.c), let alone a line. */
static void test_unwanted_event_counted_only(void **state) {
        struct itest_client *c = calloc(1, sizeof(*c));
        int64_t lookups0, lookups1, count0, count1;
        int gate;
        pid_t pid;

        assert_int_equal(itest_client_connect(c, daemon_.socket), 0);
        json_object_put(itest_client_expect(c, "hello", 5000));
        assert_int_equal(itest_client_send(c, "{\"type\":\"subscribe\",\"events\":[\"sched:sched_process_exec\"]}\n"), 0);
        json_object_put(itest_client_expect(c, "subscribed", 5000));
        status_counts(c, "syscalls:sys_enter_getppid", &lookups0, &count0);
        pid = itest_spawn_calls(SYS_getppid, 0, 2000, &gate);
        itest_release(gate);
        itest_reap(pid);
        /* Read within the latency budget; the status tick's sweep within a
         * second at the most. */
        for (int i = 0; i < 40; i++) {
                status_counts(c, "syscalls:sys_enter_getppid", &lookups1, &count1);
                if (count1 - count0 >= 2000)
                        break;
                usleep(50000);
        }
        fprintf(stderr, "getppid counted %" PRId64 ", context lookups %" PRId64 "\n", count1 - count0,
                lookups1 - lookups0);
        assert_true(count1 - count0 >= 2000);
        /* Other programs' execs may come meanwhile, a few lookups each. */
        assert_true(lookups1 - lookups0 < 200);
        itest_client_close(c);
        free(c);
}

/* A subscribe's own "filter" (linefilter.c), evaluated in evmond for this
 * client only: of two processes making getppid calls, only the one the
 * filter names comes, every call of it; a second client without the
 * filter gets both. A filter naming a field no subscribed event has is
 * refused, and the client then gets nothing. */
static void test_subscribe_filter(void **state) {
        struct itest_client *c = calloc(1, sizeof(*c)), *all = calloc(1, sizeof(*all));
        struct itest_tally t = {}, ta = {};
        char line[256];
        int gate_a, gate_b;
        pid_t a, b;
        json_object *o;
        size_t len;
        char *text;

        assert_int_equal(itest_client_connect(c, daemon_.socket), 0);
        json_object_put(itest_client_expect(c, "hello", 5000));
        assert_int_equal(itest_client_send(c, "{\"type\":\"subscribe\",\"events\":[\"syscalls:sys_enter_getppid\"],"
                                              "\"filter\":\"no_such_field == 1\"}\n"), 0);
        o = itest_client_expect(c, "error", 5000);
        assert_non_null(o);
        assert_non_null(strstr(itest_str(o, "error"), "no event of this subscription has a field \"no_such_field\""));
        json_object_put(o);

        a = itest_spawn_calls(SYS_getppid, 0, 1000, &gate_a);
        b = itest_spawn_calls(SYS_getppid, 0, 1000, &gate_b);
        snprintf(line, sizeof(line), "{\"type\":\"subscribe\",\"events\":[\"syscalls:*\"],"
                 "\"filter\":\"tid == %d || (pid == %d && cpu < 0)\"}\n", (int) a, (int) b);
        assert_int_equal(itest_client_send(c, line), 0);
        o = itest_client_expect(c, "subscribed", 5000);
        assert_non_null(o);
        json_object_put(o);
        assert_int_equal(itest_client_connect(all, daemon_.socket), 0);
        json_object_put(itest_client_expect(all, "hello", 5000));
        assert_int_equal(itest_client_send(all, "{\"type\":\"subscribe\",\"events\":[\"syscalls:*\"]}\n"), 0);
        o = itest_client_expect(all, "subscribed", 5000);
        assert_non_null(o);
        json_object_put(o);

        itest_release(gate_a);
        itest_release(gate_b);
        itest_reap(a);
        itest_reap(b);
        text = itest_client_slurp(c, 500, 30000, &len);
        itest_for_each_line(text, len, itest_tally_line, &t);
        free(text);
        text = itest_client_slurp(all, 500, 30000, &len);
        itest_for_each_line(text, len, itest_tally_line, &ta);
        free(text);
        assert_int_equal(itest_tally_get(&t, a, "syscalls:sys_enter_getppid") + t.lost + t.dropped, 1000);
        assert_int_equal(itest_tally_get(&t, b, NULL), 0);
        assert_int_equal(itest_tally_others(&t, &a, 1), 0);
        assert_int_equal(itest_tally_get(&ta, a, "syscalls:sys_enter_getppid") + ta.lost + ta.dropped, 1000);
        assert_int_equal(itest_tally_get(&ta, b, "syscalls:sys_enter_getppid") + ta.lost + ta.dropped, 1000);
        itest_tally_done(&t);
        itest_tally_done(&ta);
        itest_client_close(c);
        itest_client_close(all);
        free(c);
        free(all);
}

struct tally {
        pid_t pid;
        const char *binary;
        int64_t getppid;          /* from the workload's pid */
        int64_t exec;             /* of the unique binary, by the workload's pid */
        int64_t lost;             /* sum of "lost" counts */
        int64_t dropped;          /* sum of "dropped" counts */
        int64_t lines;
};

static void tally_line(json_object *o, void *userdata) {
        struct tally *t = userdata;
        const char *type = itest_str(o, "type");
        json_object *fields;

        t->lines++;
        if (strcmp(type, "lost") == 0) {
                assert_true(itest_int(o, "count") > 0);
                t->lost += itest_int(o, "count");
                return;
        }
        if (strcmp(type, "dropped") == 0) {
                t->dropped += itest_int(o, "count");
                t->lost += itest_dropped_lost(o);
                return;
        }
        if (strcmp(type, "event") != 0)
                return;
        /* Every event line carries the DESIGN.md keys. */
        assert_int_equal(strlen(itest_str(o, "time")), 30);
        assert_true(itest_int(o, "ts") > 0);
        assert_true(itest_int(o, "cpu") >= 0);
        assert_true(json_object_object_get_ex(o, "fields", &fields));
        if (itest_int(o, "pid") != t->pid)
                return;
        if (strcmp(itest_str(o, "event"), "syscalls:sys_enter_getppid") == 0) {
                assert_int_equal(itest_int(o, "tid"), t->pid);
                t->getppid++;
        } else if (strcmp(itest_str(o, "event"), "sched:sched_process_exec") == 0 &&
                   strcmp(itest_str(fields, "filename"), t->binary) == 0) {
                assert_int_equal(itest_int(fields, "pid"), t->pid);
                t->exec++;
        }
}

static void tally_text(struct tally *t, const char *text, size_t len) {
        itest_for_each_line(text, len, tally_line, t);
}

/* evmond's own count of what it dropped for C (status's "clients"),
 * against the "dropped" lines C read: the same lines but the dropped
 * "lost" lines, which T->lost holds the records of. C is the oldest of
 * the three clients the test has open. */
static void check_dropped_status(struct itest_client *c, const struct tally *t) {
        int64_t ids[3] = { -1, -1, -1 }, dropped = -1;
        json_object *o, *clients;
        size_t n;

        o = itest_client_status(c, 10000);
        assert_non_null(o);
        assert_true(json_object_object_get_ex(o, "clients", &clients));
        n = json_object_array_length(clients);
        /* The three newest ids of this process: A, B and the stalled one. */
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(clients, i);
                int64_t id = itest_int(e, "id");

                if (itest_int(e, "pid") != getpid())
                        continue;
                for (size_t k = 0; k < 3; k++)
                        if (id > ids[k]) {
                                int64_t tmp = ids[k];
                                ids[k] = id;
                                id = tmp;
                        }
        }
        assert_true(ids[2] >= 0);
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(clients, i);

                if (itest_int(e, "id") == ids[2])
                        dropped = itest_int(e, "dropped");
        }
        fprintf(stderr, "evmond's status: client A dropped %" PRId64 "\n", dropped);
        assert_true(dropped >= t->dropped);
        assert_true(dropped <= t->dropped + t->lost);
        json_object_put(o);
}

static void test_exact_counts_with_slow_and_second_client(void **state) {
        struct itest_client *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b)), *stalled = calloc(1, sizeof(*stalled));
        char binary[256], config_text[1024];
        json_object *o;
        char *text;
        size_t len;
        pid_t pid;
        int status, gate;

        make_unique_binary(binary, sizeof(binary));
        /* The workload waits at its gate while its own evmond starts with
         * the events filtered to it in the kernel: the other processes of
         * a busy host (another test run's getppid calls at 60,000 a
         * second) neither add to the stream nor keep it from going quiet,
         * which is how A knows it has everything. The clients' queues and
         * the rings are the defaults but for clients.queue_kib. */
        pid = spawn_workload(binary, N_GETPPID, &gate);
        snprintf(config_text, sizeof(config_text),
                 "{\"clients\": {\"queue_kib\": 4096},\n"
                 " \"events\": [{\"tracepoint\": \"sched:sched_process_exec\", \"filter\": \"pid == %d\"},\n"
                 "            {\"tracepoint\": \"syscalls:sys_enter_getppid\", \"filter\": \"common_pid == %d\"}]}\n",
                 (int) pid, (int) pid);
        assert_int_equal(itest_daemon_start(&counts_, config_text), 0);

        assert_int_equal(itest_client_connect(a, counts_.socket), 0);
        json_object_put(itest_client_expect(a, "hello", 5000));
        /* B wants execs only. */
        assert_int_equal(itest_client_connect(b, counts_.socket), 0);
        json_object_put(itest_client_expect(b, "hello", 5000));
        assert_int_equal(itest_client_send(b, "{\"type\":\"subscribe\",\"events\":[\"sched:sched_process_exec\"]}\n"), 0);
        o = itest_client_expect(b, "subscribed", 5000);
        assert_non_null(o);
        json_object_put(o);
        /* The stalled client wants everything and reads nothing after its
         * hello until the end. The hello says evmond has accepted it: a
         * connect() alone returns from the listen backlog, and the first
         * calls' lines would go out before the client was there. */
        assert_int_equal(itest_client_connect(stalled, counts_.socket), 0);
        json_object_put(itest_client_expect(stalled, "hello", 5000));

        /* A burst that ends with its ring full leaves the kernel's count
         * of what it dropped there until that CPU's next record: evmond
         * has it written (monitor_ring_flush_lost()); nothing here helps. */
        itest_release(gate);
        struct tally ta = { .pid = pid, .binary = binary }, tb = ta, ts = ta;

        /* A reads as fast as it can until the stream has been quiet for 2 s. */
        text = itest_client_slurp(a, 2000, 60000, &len);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        tally_text(&ta, text, len);
        free(text);
        fprintf(stderr, "client A: %" PRId64 " getppid of %d, %" PRId64 " exec, %" PRId64 " lost, %" PRId64 " dropped, %" PRId64
                " lines\n", ta.getppid, N_GETPPID, ta.exec, ta.lost, ta.dropped, ta.lines);
        assert_true(ta.exec <= 1);
        assert_true(ta.getppid <= N_GETPPID);
        /* Exactly N and the exec, or the shortfall reported by "lost"
         * lines (the rings are the default size; under emulation the
         * kernel may drop the exec too, and then says so). */
        if (ta.lost == 0 && ta.dropped == 0) {
                assert_int_equal(ta.exec, 1);
                assert_int_equal(ta.getppid, N_GETPPID);
        }
        /* Every line meant for A came, or was counted: lost in the kernel,
         * or dropped by evmond because A's 4 MiB queue filled. A client
         * that reads as fast as it can keeps up with evmond on a quiet
         * host; beside a CPU load (14 busy threads; under TCG, host load
         * 5) it waits for a CPU while evmond encodes, and the queue fills:
         * that is the backpressure clients.queue_kib is for, so the test
         * asks that it be reported exactly, not that it never happen. */
        assert_true(ta.getppid + ta.exec + ta.lost + ta.dropped >= N_GETPPID + 1);
        if (ta.dropped > 0)
                fprintf(stderr, "client A fell behind: %" PRId64 " lines dropped (a busy host)\n", ta.dropped);
        check_dropped_status(a, &ta);

        text = itest_client_slurp(b, 500, 10000, &len);
        tally_text(&tb, text, len);
        free(text);
        /* B has the exec unless the kernel lost it (B is told too), and
         * whatever A has of it. */
        assert_true(tb.exec == 1 || (tb.exec == 0 && tb.lost > 0));
        if (ta.dropped == 0)
                assert_int_equal(tb.exec, ta.exec);
        assert_int_equal(tb.getppid, 0);

        /* The stalled client fell behind by more than its queue: it is told
         * how many lines it missed once it catches up. */
        text = itest_client_slurp(stalled, 1000, 30000, &len);
        tally_text(&ts, text, len);
        free(text);
        fprintf(stderr, "stalled client: %" PRId64 " getppid, %" PRId64 " dropped, %" PRId64 " lost\n",
                ts.getppid, ts.dropped, ts.lost);
        assert_true(ts.dropped > 0);
        assert_true(ts.getppid + ts.dropped + ts.lost >= N_GETPPID);

        itest_client_close(a);
        itest_client_close(b);
        itest_client_close(stalled);
        free(a);
        free(b);
        free(stalled);
        unlink(binary);
        assert_int_equal(itest_daemon_stop(&counts_), 0);
        itest_daemon_cleanup(&counts_);
}

/* A client that reads nothing and takes every getppid line drops them
 * once its queue is full; while it drops, the scans (monitor-scan.c,
 * ring.threads 2) count those samples as its drops on the reader
 * threads, and the loop makes nothing of them. What the client reads at
 * the end adds up: its lines and the drops it is told of are every call
 * the kernel did not lose, the drops are evmond's own count for it, and
 * the event's count is every call. */
static void test_dropping_client_scanned(void **state) {
        struct itest_client *c = calloc(1, sizeof(*c));
        char binary[256], config_text[1024];
        struct tally t;
        json_object *o, *ring, *clients, *events;
        int64_t count = -1, dropped = -1;
        char *text;
        size_t len;
        pid_t pid;
        int status, gate;

        make_unique_binary(binary, sizeof(binary));
        pid = spawn_workload(binary, 3 * N_GETPPID, &gate);
        snprintf(config_text, sizeof(config_text),
                 "{\"clients\": {\"queue_kib\": 256}, \"ring\": {\"threads\": 2},\n"
                 " \"events\": [{\"tracepoint\": \"syscalls:sys_enter_getppid\", \"filter\": \"common_pid == %d\"}]}\n",
                 (int) pid);
        assert_int_equal(itest_daemon_start(&counts_, config_text), 0);
        assert_int_equal(itest_client_connect(c, counts_.socket), 0);
        json_object_put(itest_client_expect(c, "hello", 5000));
        assert_int_equal(itest_client_send(c, "{\"type\":\"subscribe\",\"events\":[\"syscalls:sys_enter_getppid\"]}\n"), 0);
        o = itest_client_expect(c, "subscribed", 5000);
        assert_non_null(o);
        json_object_put(o);

        itest_release(gate);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        usleep(300 * 1000);     /* the last ticks */
        t = (struct tally) { .pid = pid, .binary = binary };
        text = itest_client_slurp(c, 1000, 30000, &len);
        tally_text(&t, text, len);
        free(text);

        o = itest_client_status(c, 10000);
        assert_non_null(o);
        assert_true(json_object_object_get_ex(o, "ring", &ring));
        assert_true(json_object_object_get_ex(o, "clients", &clients));
        assert_true(json_object_object_get_ex(o, "events", &events));
        count = itest_int(json_object_array_get_idx(events, 0), "count");
        for (size_t i = 0; i < json_object_array_length(clients); i++)
                dropped = itest_int(json_object_array_get_idx(clients, i), "dropped");
        fprintf(stderr, "dropping client: %" PRId64 " getppid, %" PRId64 " dropped (status %" PRId64 "), %" PRId64
                " lost; counted %" PRId64 ", scans %" PRId64 ", scanned %" PRId64 "\n", t.getppid, t.dropped, dropped,
                t.lost, count, itest_int(ring, "scans"), itest_int(ring, "scanned"));
        /* The scans took the samples its drops were made of. */
        assert_true(itest_int(ring, "scanned") > 0);
        assert_true(t.dropped > 0);
        /* evmond's count for it: those lines, and lost lines it dropped
         * too (check_dropped_status()). */
        assert_true(dropped >= t.dropped && dropped <= t.dropped + t.lost);
        /* Every call a line, a drop, or lost in the kernel. */
        assert_true(t.getppid + t.dropped <= 3 * N_GETPPID);
        assert_true(t.getppid + t.dropped + t.lost >= 3 * N_GETPPID);
        assert_true(count <= 3 * N_GETPPID);
        if (t.lost == 0) {
                assert_int_equal(t.getppid + t.dropped, 3 * N_GETPPID);
                assert_int_equal(count, 3 * N_GETPPID);
        }
        json_object_put(o);
        itest_client_close(c);
        free(c);
        unlink(binary);
        assert_int_equal(itest_daemon_stop(&counts_), 0);
        itest_daemon_cleanup(&counts_);
}

/* Without doorbells ("doorbell": false; test-latency covers them) and
 * with no samples the reader backs off from flush_ms (5) to idle_flush_ms
 * (50): about 20 timer wakeups a second, and the status tick, where every
 * 5 ms would be 200. A lone sample, far below the wakeup watermark, still
 * arrives by itself. The event is filtered to this process in the kernel,
 * so nothing else on the host wakes the rings. Counts, not times: a loaded
 * host delays the timer, it never makes it fire more often. */
static void test_quiet_rings_back_off(void **state) {
        struct itest_client *c = calloc(1, sizeof(*c));
        char config_text[512];
        uint64_t before, after;
        json_object *o;

        snprintf(config_text, sizeof(config_text),
                 "{\"self\": true, \"ring\": {\"flush_ms\": 5, \"idle_flush_ms\": 50, \"doorbell\": false},\n"
                 " \"events\": [{\"tracepoint\": \"syscalls:sys_enter_getppid\", \"filter\": \"common_pid == %d\"}]}\n",
                 (int) getpid());
        assert_int_equal(itest_daemon_start(&quiet_, config_text), 0);
        assert_int_equal(itest_client_connect(c, quiet_.socket), 0);
        o = itest_client_expect(c, "hello", 5000);
        assert_non_null(o);
        json_object_put(o);

        usleep(500 * 1000);     /* past the backoff: 5+10+20+40 ms */
        before = itest_timeslices(quiet_.pid, NULL);
        usleep(2000 * 1000);
        after = itest_timeslices(quiet_.pid, NULL);
        if (after - before > 60)
                fail_msg("idle evmond woke %" PRIu64 " times in 2 s; backing off to idle_flush_ms 50 makes it ~42",
                         after - before);

        syscall(SYS_getppid);
        o = itest_client_expect(c, "event", 2000);
        if (!o)
                fail_msg("a lone getppid after a quiet spell did not arrive within 2 s");
        assert_string_equal(itest_str(o, "event"), "syscalls:sys_enter_getppid");
        assert_int_equal(itest_int(o, "pid"), getpid());
        json_object_put(o);

        itest_client_close(c);
        free(c);
        assert_int_equal(itest_daemon_stop(&quiet_), 0);
        itest_daemon_cleanup(&quiet_);
}

static void test_sigterm_exits_cleanly(void **state) {
        struct stat st;

        assert_int_equal(stat(daemon_.socket, &st), 0);
        assert_int_equal(itest_daemon_stop(&daemon_), 0);
        assert_int_equal(stat(daemon_.socket, &st), -1);
        assert_int_equal(errno, ENOENT);
}

int main(void) {
        static const char *const need[] = { "sched/sched_process_exec", "syscalls/sys_enter_getppid", NULL };
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_hello_lists_events),
                cmocka_unit_test(test_bad_lines_get_errors),
                cmocka_unit_test(test_refused_subscribe_gets_nothing),
                cmocka_unit_test(test_subscribe_filter),
                cmocka_unit_test(test_unwanted_event_counted_only),
                cmocka_unit_test(test_exact_counts_with_slow_and_second_client),
                cmocka_unit_test(test_dropping_client_scanned),
                cmocka_unit_test(test_quiet_rings_back_off),
                cmocka_unit_test(test_sigterm_exits_cleanly),
        };

        itest_require(need);
        srandom((unsigned) getpid());
        return cmocka_run_group_tests(tests, setup, teardown);
}
