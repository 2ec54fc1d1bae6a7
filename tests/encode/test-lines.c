/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The control lines and record lines of src/encode/: the exact bytes each
 * line type puts on the wire (DESIGN.md "Wire protocol"). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "evmon/encode.h"
#include "evmon/protocol.h"

static const char *const events[] = { "sched:sched_process_exec", "kprobe:open" };

/* B holds exactly EXPECTED; B is emptied for the next line. */
static void check_line(struct jbuf *b, const char *expected) {
        assert_int_equal(b->len, strlen(expected));
        assert_memory_equal(b->data, expected, b->len);
        b->len = 0;
}

static void test_hello(void **state) {
        _cleanup_(jbuf_donep) struct jbuf b = {};

        assert_int_equal(encode_hello(&b, events, 2, 0, 0), 0);
        check_line(&b, "{\"type\":\"hello\",\"version\":1,\"events\":[\"sched:sched_process_exec\",\"kprobe:open\"]}\n");
        /* 2026-11-21T10:23:00.123456789Z */
        assert_int_equal(encode_hello(&b, events, 1, UINT64_C(1795256580123456789), 3), 0);
        check_line(&b, "{\"type\":\"hello\",\"version\":1,\"events\":[\"sched:sched_process_exec\"],"
                       "\"start\":\"2026-11-21T10:23:00.123456789Z\",\"client\":3}\n");
        assert_int_equal(encode_hello(&b, NULL, 0, 0, 0), 0);
        check_line(&b, "{\"type\":\"hello\",\"version\":1,\"events\":[]}\n");
}

static void test_subscribed(void **state) {
        _cleanup_(jbuf_donep) struct jbuf b = {};
        static const pid_t pids[] = { 1, 4242 };
        static const char *const cgroups[] = { "/system.slice" };

        assert_int_equal(encode_subscribed(&b, events, 1, NULL, 0, NULL, 0), 0);
        check_line(&b, "{\"type\":\"subscribed\",\"events\":[\"sched:sched_process_exec\"]}\n");
        assert_int_equal(encode_subscribed(&b, events, 2, pids, 2, cgroups, 1), 0);
        check_line(&b, "{\"type\":\"subscribed\",\"events\":[\"sched:sched_process_exec\",\"kprobe:open\"],"
                       "\"pids\":[1,4242],\"cgroups\":[\"/system.slice\"]}\n");
        /* An empty list is kept: it matches nothing, unlike no list. */
        assert_int_equal(encode_subscribed(&b, NULL, 0, pids, 0, cgroups, 0), 0);
        check_line(&b, "{\"type\":\"subscribed\",\"events\":[],\"pids\":[],\"cgroups\":[]}\n");
}

static void test_error(void **state) {
        _cleanup_(jbuf_donep) struct jbuf b = {};

        assert_int_equal(encode_error(&b, "subscribe: no event \"x\" is served here"), 0);
        check_line(&b, "{\"type\":\"error\",\"error\":\"subscribe: no event \\\"x\\\" is served here\"}\n");
}

static void test_config_reload(void **state) {
        _cleanup_(jbuf_donep) struct jbuf b = {};

        assert_int_equal(encode_config(&b, events, 2), 0);
        check_line(&b, "{\"type\":\"config\",\"events\":[\"sched:sched_process_exec\",\"kprobe:open\"]}\n");
        assert_int_equal(encode_reload(&b, true, NULL, events, 1), 0);
        check_line(&b, "{\"type\":\"reload\",\"ok\":true,\"events\":[\"sched:sched_process_exec\"]}\n");
        assert_int_equal(encode_reload(&b, false, "/etc/evmon/evmond.json:3: bad", events, 1), 0);
        check_line(&b, "{\"type\":\"reload\",\"ok\":false,\"error\":\"/etc/evmon/evmond.json:3: bad\","
                       "\"events\":[\"sched:sched_process_exec\"]}\n");
        assert_int_equal(encode_reload(&b, false, NULL, NULL, 0), 0);
        check_line(&b, "{\"type\":\"reload\",\"ok\":false,\"error\":\"out of memory\",\"events\":[]}\n");
}

static void test_status(void **state) {
        _cleanup_(jbuf_donep) struct jbuf b = {};
        static const struct encode_status_event ev[] = { { "sched:sched_process_exec", 12, 1 } };
        static const struct encode_status_cpu cpus[] = { { 0, 3, 0 }, { 1, 0, 2 } };
        static const struct encode_status_client cl[] = { { 7, 4242, 1000, 128, 9, 5 } };
        struct encode_status st = {
                .config = "/etc/evmon/evmond.json", .probe_group = "evmon_1234abcd", .uptime_s = 1.5,
                .events = ev, .n_events = 1, .cpus = cpus, .n_cpus = 2,
                .ring_pages = 256, .flush_ms = 5, .busy_flush_ms = 1, .idle_flush_ms = 50,
                .doorbell = true, .doorbell_rings = 2, .doorbell_rests = 1, .early_bells = 3, .ticks = 7, .swept = 0,
                .ring_threads = 4, .scans = 9, .scanned = 12000, .encoded = 7000,
                .order_time = true, .order_hold_us = 200, .order_late = 0, .order_in_flight_max_ns = 1500,
                .order_releases = 3,
                .clients = cl, .n_clients = 1,
                .closing_jobs = 3, .closing_fds = 8,
        };

        assert_int_equal(encode_status(&b, &st), 0);
        check_line(&b, "{\"type\":\"status\",\"config\":\"/etc/evmon/evmond.json\",\"probe_group\":\"evmon_1234abcd\","
                       "\"uptime_s\":1.5,\"events\":[{\"event\":\"sched:sched_process_exec\",\"count\":12,\"undecodable\":1}],"
                       "\"cpus\":[{\"cpu\":0,\"lost\":3,\"malformed\":0},{\"cpu\":1,\"lost\":0,\"malformed\":2}],"
                       "\"ring\":{\"pages\":256,\"latency_ms\":5,\"flush_ms\":5,\"busy_flush_ms\":1,\"idle_flush_ms\":50,"
                       "\"doorbell\":true,\"doorbell_rings\":2,\"doorbell_rests\":1,\"early_bells\":3,\"ticks\":7,\"swept\":0,\"flushed\":0,"
                       "\"threads\":4,\"scans\":9,\"scanned\":12000,\"encoded\":7000},"
                       "\"order\":{\"mode\":\"time\",\"hold_us\":200,\"late\":0,\"in_flight_max_us\":1.5,\"releases\":3},"
                       "\"clients\":[{\"id\":7,\"pid\":4242,\"uid\":1000,\"queued_bytes\":128,\"lines\":9,\"dropped\":5}],"
                       "\"closing\":{\"jobs\":3,\"fds\":8}}\n");
}

static void test_requests(void **state) {
        _cleanup_(jbuf_donep) struct jbuf b = {};

        assert_int_equal(encode_request(&b, EVMON_REQUEST_STATUS), 0);
        check_line(&b, "{\"type\":\"status\"}\n");
        assert_int_equal(encode_subscribe(&b, events, 2), 0);
        check_line(&b, "{\"type\":\"subscribe\",\"events\":[\"sched:sched_process_exec\",\"kprobe:open\"]}\n");
}

/* evmon-forward's subscription: events, pids and cgroups each only where
 * given (no "events": every event). */
static void test_subscribe_targets(void **state) {
        _cleanup_(jbuf_donep) struct jbuf b = {};
        static const pid_t pids[] = { 4242 };
        static const char *const cgroups[] = { "/system.slice/nginx.service", "/user.slice" };

        assert_int_equal(encode_subscribe_targets(&b, NULL, 0, NULL, 0, NULL, 0), 0);
        check_line(&b, "{\"type\":\"subscribe\"}\n");
        assert_int_equal(encode_subscribe_targets(&b, events, 1, pids, 1, NULL, 0), 0);
        check_line(&b, "{\"type\":\"subscribe\",\"events\":[\"sched:sched_process_exec\"],\"pids\":[4242]}\n");
        assert_int_equal(encode_subscribe_targets(&b, NULL, 0, NULL, 0, cgroups, 2), 0);
        check_line(&b, "{\"type\":\"subscribe\",\"cgroups\":[\"/system.slice/nginx.service\",\"/user.slice\"]}\n");
        /* evmonctl watch --container / --namespace (issue 31). */
        static const char *const ctrs[] = { "payments-*", "3f2a" }, *const nss[] = { "prod" };
        assert_int_equal(encode_subscribe_context(&b, NULL, 0, ctrs, 2, nss, 1), 0);
        check_line(&b, "{\"type\":\"subscribe\",\"containers\":[\"payments-*\",\"3f2a\"],\"namespaces\":[\"prod\"]}\n");
        assert_int_equal(encode_subscribe_context(&b, events, 1, NULL, 0, nss, 1), 0);
        check_line(&b, "{\"type\":\"subscribe\",\"events\":[\"sched:sched_process_exec\"],\"namespaces\":[\"prod\"]}\n");
}

/* A counting event's line, a group member with two CPUs. */
static void test_counter(void **state) {
        _cleanup_(jbuf_donep) struct jbuf b = {};
        static const struct encode_counter_cpu cpus[] = { { 0, 10, 2000, 1000 }, { 1, 5, 2000, 2000 } };
        struct encode_counter c = {
                .event = "software:task-clock", .group = "sched",
                /* 2026-11-21T10:23:00.123456789Z on the realtime clock */
                .ts = 1000, .realtime_offset_ns = INT64_C(1795256580123455789),
                .value = 15, .delta = 7, .enabled = 4000, .running = 3000, .scaled = 25,
                .cpus = cpus, .n_cpus = 2,
        };

        assert_int_equal(encode_counter(&b, &c), 0);
        check_line(&b, "{\"type\":\"counter\",\"event\":\"software:task-clock\",\"time\":\"2026-11-21T10:23:00.123456789Z\","
                       "\"ts\":1000,\"value\":15,\"delta\":7,\"enabled\":4000,\"running\":3000,\"scaled\":25,"
                       "\"group\":\"sched\",\"cpus\":[{\"cpu\":0,\"value\":10,\"enabled\":2000,\"running\":1000},"
                       "{\"cpu\":1,\"value\":5,\"enabled\":2000,\"running\":2000}]}\n");
        c.group = NULL;
        c.n_cpus = 0;
        assert_int_equal(encode_counter(&b, &c), 0);
        check_line(&b, "{\"type\":\"counter\",\"event\":\"software:task-clock\",\"time\":\"2026-11-21T10:23:00.123456789Z\","
                       "\"ts\":1000,\"value\":15,\"delta\":7,\"enabled\":4000,\"running\":3000,\"scaled\":25,"
                       "\"cpus\":[]}\n");
}

/* A CPU's gap: the example of doc/protocol.md "gap". */
static void test_gap(void **state) {
        _cleanup_(jbuf_donep) struct jbuf b = {};

        /* ts 0 on the event clock is 2026-11-21T10:23:00.000000000Z */
        assert_int_equal(encode_gap(&b, 1, "offline", 120000000, UINT64_C(5130000000), INT64_C(1795256580000000000)), 0);
        check_line(&b, "{\"type\":\"gap\",\"cpu\":1,\"reason\":\"offline\",\"since\":\"2026-11-21T10:23:00.120000000Z\","
                       "\"since_ts\":120000000,\"time\":\"2026-11-21T10:23:05.130000000Z\",\"ts\":5130000000}\n");
}

/* evmon-forward's own lines (doc/protocol.md "evmon-forward"). */
static void test_forwarder(void **state) {
        _cleanup_(jbuf_donep) struct jbuf b = {};

        /* 2026-11-21T10:23:00.123456789Z */
        assert_int_equal(encode_forwarder(&b, "connected", UINT64_C(1795256580123456789), "/run/evmon/evmond.sock",
                                          NULL, 0), 0);
        check_line(&b, "{\"type\":\"forwarder\",\"event\":\"connected\",\"time\":\"2026-11-21T10:23:00.123456789Z\","
                       "\"socket\":\"/run/evmon/evmond.sock\",\"dropped_total\":0}\n");
        assert_int_equal(encode_forwarder(&b, "disconnected", UINT64_C(1795256580000000001), "/tmp/a.sock",
                                          "evmond closed the connection", UINT64_MAX), 0);
        check_line(&b, "{\"type\":\"forwarder\",\"event\":\"disconnected\",\"time\":\"2026-11-21T10:23:00.000000001Z\","
                       "\"socket\":\"/tmp/a.sock\",\"detail\":\"evmond closed the connection\","
                       "\"dropped_total\":18446744073709551615}\n");
        assert_int_equal(encode_forwarder_dropped(&b, 1200), 0);
        check_line(&b, "{\"type\":\"dropped\",\"count\":1200,\"source\":\"evmon-forward\"}\n");
}

/* Lines append: one buffer holds several in order (the daemon batches). */
static void test_lines_append(void **state) {
        _cleanup_(jbuf_donep) struct jbuf b = {};

        assert_int_equal(encode_dropped(&b, 3, 0), 0);
        assert_int_equal(encode_error(&b, "x"), 0);
        check_line(&b, "{\"type\":\"dropped\",\"count\":3}\n{\"type\":\"error\",\"error\":\"x\"}\n");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_hello),
                cmocka_unit_test(test_subscribed),
                cmocka_unit_test(test_error),
                cmocka_unit_test(test_config_reload),
                cmocka_unit_test(test_status),
                cmocka_unit_test(test_requests),
                cmocka_unit_test(test_subscribe_targets),
                cmocka_unit_test(test_forwarder),
                cmocka_unit_test(test_counter),
                cmocka_unit_test(test_gap),
                cmocka_unit_test(test_lines_append),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
