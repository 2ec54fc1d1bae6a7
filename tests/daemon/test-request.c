/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* request.c and subscription.c: request lines as clients write them, the
 * error each bad one gets, and what a subscription lets through. */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "request.h"
#include "subscription.h"
#include "evmon/cleanup.h"

static const char *const names[] = { "sched:sched_process_exec", "sched:sched_process_exit", "kprobe:open" };

static int parse(const char *line, struct request *req, char **error) {
        return request_parse(line, strlen(line), req, error);
}

static void expect_error(const char *line, const char *message) {
        struct request req;
        _cleanup_(freep) char *error = NULL;

        assert_int_equal(parse(line, &req, &error), -EINVAL);
        assert_non_null(error);
        assert_string_equal(error, message);
}

static void test_types(void **state) {
        struct request req;
        char *error = NULL;

        assert_int_equal(parse("{\"type\":\"status\"}", &req, &error), 1);
        assert_int_equal(req.type, REQUEST_STATUS);
        assert_int_equal(parse("{\"type\":\"reload\"}\r ", &req, &error), 1);
        assert_int_equal(req.type, REQUEST_RELOAD);
        assert_int_equal(parse("  \r", &req, &error), 0);
        assert_int_equal(parse("", &req, &error), 0);
        assert_null(error);
}

static void test_aggregate(void **state) {
        struct request req;
        char *error = NULL;

        assert_int_equal(parse("{\"type\":\"aggregate\",\"events\":[\"sched:*\"],\"by\":[\"comm\",\"field:len\"],"
                               "\"value\":{\"op\":\"lhist\",\"field\":\"len\",\"min\":0,\"max\":100,\"step\":10},"
                               "\"interval_ms\":0,\"cumulative\":true,\"top\":5,\"max_keys\":7,\"pids\":[1]}",
                               &req, &error), 1);
        assert_null(error);
        assert_int_equal(req.type, REQUEST_AGGREGATE);
        assert_string_equal(req.events[0], "sched:*");
        assert_int_equal(req.agg.n_by, 2);
        assert_int_equal(req.agg.by[0].kind, AGG_KEY_COMM);
        assert_int_equal(req.agg.by[1].kind, AGG_KEY_FIELD);
        assert_string_equal(req.agg.by[1].field, "len");
        assert_int_equal(req.agg.op, AGG_OP_LHIST);
        assert_int_equal(req.agg.lstep, 10);
        assert_int_equal(req.agg.interval_ms, 0);
        assert_true(req.agg.cumulative);
        assert_int_equal(req.agg.top, 5);
        assert_int_equal(req.agg.max_keys, 7);
        assert_int_equal(req.n_pids, 1);
        request_done(&req);

        /* Latency takes its events from start and end; tid by default. */
        assert_int_equal(parse("{\"type\":\"aggregate\",\"value\":{\"op\":\"latency\",\"start\":\"a:b\","
                               "\"end\":\"a:c\"}}", &req, &error), 1);
        assert_string_equal(req.events[0], "a:b");
        assert_string_equal(req.events[1], "a:c");
        assert_null(req.events[2]);
        assert_int_equal(req.agg.match.kind, AGG_KEY_TID);
        assert_int_equal(req.agg.interval_ms, 1000);
        assert_int_equal(req.agg.max_keys, AGG_MAX_KEYS_DEFAULT);
        request_done(&req);

        assert_int_equal(parse("{\"type\":\"flush\",\"final\":true}", &req, &error), 1);
        assert_int_equal(req.type, REQUEST_FLUSH);
        assert_true(req.final);
        request_done(&req);
        assert_null(error);
}

static void test_errors(void **state) {
        expect_error("{\"type\":\"status\"", "not a JSON object line: incomplete or trailing text");
        expect_error("{\"type\":\"status\"} x", "not a JSON object line: incomplete or trailing text");
        expect_error("[1,2]", "expected {\"type\":\"subscribe\",...}");
        expect_error("{\"type\":7}", "expected {\"type\":\"subscribe\",...}");
        expect_error("{\"type\":\"nope\"}", "unknown message type \"nope\" (known: subscribe, aggregate, flush, "
                     "status, reload, add, remove, enable, disable, filter)");
        /* Aggregate: an unknown key is an error, never a default. */
        expect_error("{\"type\":\"aggregate\",\"events\":[\"a:b\"],\"by\":[\"comn\"]}",
                     "aggregate: by[0]: unknown key \"comn\" (known: pid, tid, comm, exe, uid, cgroup, container, cpu, "
                     "event, field:NAME, stack, kstack, ustack, frame)");
        expect_error("{\"type\":\"aggregate\",\"by\":[\"comm\"]}",
                     "aggregate: \"events\" is missing (names or patterns of the events to aggregate)");
        expect_error("{\"type\":\"aggregate\",\"events\":[\"a:b\"],\"bye\":[]}",
                     "aggregate: unknown key \"bye\" (known: events, by, value, interval_ms, cumulative, top, max_keys, "
                     "pids, cgroups, comms, containers, namespaces, self, client, filter)");
        expect_error("{\"type\":\"aggregate\",\"events\":[\"a:b\"],\"value\":{\"op\":\"hist\"}}",
                     "aggregate: value: \"field\" is missing");
        expect_error("{\"type\":\"aggregate\",\"events\":[\"a:b\"],\"value\":{\"op\":\"count\",\"field\":\"x\"}}",
                     "aggregate: value \"field\" is no key of op \"count\"");
        expect_error("{\"type\":\"aggregate\",\"events\":[\"a:b\"],\"value\":{\"op\":\"lhist\",\"field\":\"x\","
                     "\"min\":0,\"max\":100000,\"step\":1}}",
                     "aggregate: lhist needs min < max within ±2^61, 0 < step <= max - min and at most 1022 "
                     "buckets ((max - min) / step)");
        /* A span of 2^63 wrapped the bucket count (and the table's size)
         * once: refused, as a step past the span. */
        expect_error("{\"type\":\"aggregate\",\"events\":[\"a:b\"],\"value\":{\"op\":\"lhist\",\"field\":\"x\","
                     "\"min\":-4611686018427387904,\"max\":4611686018427387904,\"step\":1}}",
                     "aggregate: lhist needs min < max within ±2^61, 0 < step <= max - min and at most 1022 "
                     "buckets ((max - min) / step)");
        expect_error("{\"type\":\"aggregate\",\"events\":[\"a:b\"],\"value\":{\"op\":\"lhist\",\"field\":\"x\","
                     "\"min\":0,\"max\":10,\"step\":9223372036854775807}}",
                     "aggregate: lhist needs min < max within ±2^61, 0 < step <= max - min and at most 1022 "
                     "buckets ((max - min) / step)");
        expect_error("{\"type\":\"aggregate\",\"events\":[\"a:b\"],\"by\":[\"pid\",\"tid\",\"cpu\",\"uid\",\"comm\"]}",
                     "aggregate: \"by\" has 5 keys, at most 4 are taken");
        expect_error("{\"type\":\"aggregate\",\"events\":[\"a:b\"],\"max_keys\":0}",
                     "aggregate: \"max_keys\" must be from 1 to 65536");
        expect_error("{\"type\":\"aggregate\",\"events\":[\"a:b\"],\"max_keys\":65537}",
                     "aggregate: \"max_keys\" must be an integer from 0 to 65536");
        expect_error("{\"type\":\"aggregate\",\"value\":{\"op\":\"latency\",\"start\":\"a:b\",\"end\":\"a:c\","
                     "\"match\":\"comm\"}}",
                     "aggregate: value \"match\" must be \"tid\", \"pid\" or \"field:NAME\"");
        expect_error("{\"type\":\"flush\",\"final\":1}", "flush: \"final\" must be true or false");
        expect_error("{\"type\":\"add\",\"event\":\"sched:x\"}", "add: \"event\" must be an object, as an entry of the "
                     "config's \"events\" (for example {\"tracepoint\": \"sched:sched_process_exit\"})");
        expect_error("{\"type\":\"remove\"}", "remove: \"event\" is missing");
        expect_error("{\"type\":\"filter\",\"event\":\"a:b\"}", "filter: \"filter\" is missing");
        expect_error("{\"type\":\"disable\",\"events\":\"a:b\"}",
                     "disable: \"events\" must be an array of event names or patterns");
        expect_error("{\"type\":\"enable\",\"event\":[]}", "enable: unknown key \"event\" (known: events)");
        expect_error("{\"type\":\"subscribe\",\"event\":[]}",
                     "subscribe: unknown key \"event\" (known: events, pids, cgroups, comms, containers, namespaces, format, self, client, filter, stack_bytes)");
        /* Every type refuses a key it does not take, naming what it takes:
         * status and reload took anything. */
        expect_error("{\"type\":\"status\",\"verbose\":true}",
                     "status: unknown key \"verbose\" (status takes no key but \"type\")");
        expect_error("{\"type\":\"reload\",\"config\":\"/etc/x.json\"}",
                     "reload: unknown key \"config\" (reload takes no key but \"type\")");
        expect_error("{\"type\":\"add\",\"event\":{\"tracepoint\":\"a:b\"},\"name\":\"x\"}",
                     "add: unknown key \"name\" (known: event)");
        expect_error("{\"type\":\"remove\",\"events\":[\"a:b\"]}", "remove: unknown key \"events\" (known: event)");
        expect_error("{\"type\":\"disable\",\"event\":\"a:b\"}", "disable: unknown key \"event\" (known: events)");
        expect_error("{\"type\":\"filter\",\"event\":\"a:b\",\"filter\":\"\",\"where\":1}",
                     "filter: unknown key \"where\" (known: event, filter)");
        expect_error("{\"type\":\"subscribe\",\"format\":\"pcap\"}",
                     "subscribe: \"format\" must be \"json\" (lines, the default) or \"perf\" (a perf pipe-mode "
                     "stream, as perf record -o - writes)");
        expect_error("{\"type\":\"subscribe\",\"format\":1}",
                     "subscribe: \"format\" must be \"json\" (lines, the default) or \"perf\" (a perf pipe-mode "
                     "stream, as perf record -o - writes)");
        /* The key is named before its value is judged. */
        expect_error("{\"type\":\"status\",\"events\":7}",
                     "status: unknown key \"events\" (status takes no key but \"type\")");
        expect_error("{\"type\":\"subscribe\",\"comms\":\"nginx\"}",
                     "subscribe: \"comms\" must be an array of a comm pattern such as \"nginx*\" (fnmatch)");
        expect_error("{\"type\":\"subscribe\",\"containers\":[3]}",
                     "subscribe: containers[0] must be a container id, its first digits, or a container name (fnmatch)");
        expect_error("{\"type\":\"subscribe\",\"containers\":[\"\"]}", "subscribe: containers[0] is empty");
        expect_error("{\"type\":\"subscribe\",\"events\":\"kprobe:open\"}",
                     "subscribe: \"events\" must be an array of event names");
        expect_error("{\"type\":\"subscribe\",\"events\":[\"a\",1]}",
                     "subscribe: events[1] must be a string such as \"sched:sched_process_exec\"");
        expect_error("{\"type\":\"subscribe\",\"pids\":[1,0]}", "subscribe: pids[1] is not a process id");
        expect_error("{\"type\":\"subscribe\",\"pids\":[4294967297]}", "subscribe: pids[0] is not a process id");
        expect_error("{\"type\":\"subscribe\",\"pids\":{}}", "subscribe: \"pids\" must be an array of process ids");
        expect_error("{\"type\":\"subscribe\",\"cgroups\":[true]}", "subscribe: cgroups[0] must be a path string");
        expect_error("{\"type\":\"subscribe\",\"cgroups\":\"/\"}",
                     "subscribe: \"cgroups\" must be an array of cgroup paths");
}

/* What a C string cannot hold or a JSON line must not carry: each gets an
 * error saying so, never a request made of part of it. */
static void test_bytes(void **state) {
        static const char nul_line[] = "{\"type\":\"sub\0scribe\"}";
        struct request req;
        _cleanup_(freep) char *error = NULL;

        assert_int_equal(request_parse(nul_line, sizeof(nul_line) - 1, &req, &error), -EINVAL);
        assert_string_equal(error, "not a JSON object line: a NUL byte at byte 12");
        free(error);
        error = NULL;
        expect_error("{\"type\":\"subscribe\\u0000x\"}", "not a JSON object line: a string holds \\u0000 (NUL)");
        expect_error("{\"type\":\"subscribe\",\"events\":[\"sched:*\\u0000x\"]}",
                     "not a JSON object line: a string holds \\u0000 (NUL)");
        expect_error("{\"type\":\"subscribe\",\"events\\u0000x\":[]}",
                     "not a JSON object line: a string holds \\u0000 (NUL)");
        expect_error("{\"type\":\"subscribe\",\"events\":[\"\xff\xfe\"]}", "not a JSON object line: invalid utf-8 string");
        expect_error("{\"type\":\"\xc3(\"}", "not a JSON object line: invalid utf-8 string");
        /* An escaped backslash before "u0000" is no NUL; UTF-8 is. */
        assert_int_equal(parse("{\"type\":\"subscribe\",\"comms\":[\"\\\\u0000\",\"caf\xc3\xa9\"]}", &req, &error), 1);
        assert_string_equal(req.comms[0], "\\u0000");
        assert_string_equal(req.comms[1], "caf\xc3\xa9");
        request_done(&req);
        assert_null(error);
}

static void test_control(void **state) {
        _cleanup_(request_done) struct request req = {};
        _cleanup_(freep) char *error = NULL;

        assert_int_equal(parse("{\"type\":\"add\",\"event\":{\"tracepoint\":\"sched:sched_switch\"}}", &req, &error), 1);
        assert_int_equal(req.type, REQUEST_ADD);
        assert_non_null(req.entry);
        assert_true(request_is_control(req.type));
        request_done(&req);
        assert_int_equal(parse("{\"type\":\"filter\",\"event\":\"a:b\",\"filter\":\"\"}", &req, &error), 1);
        assert_string_equal(req.name, "a:b");
        assert_string_equal(req.filter, "");
        request_done(&req);
        assert_int_equal(parse("{\"type\":\"disable\"}", &req, &error), 1);
        assert_int_equal(req.type, REQUEST_DISABLE);
        assert_null(req.events);
        request_done(&req);
        assert_int_equal(parse("{\"type\":\"enable\",\"events\":[\"sched:*\"]}", &req, &error), 1);
        assert_string_equal(req.events[0], "sched:*");
        request_done(&req);
        assert_int_equal(parse("{\"type\":\"subscribe\",\"format\":\"perf\"}", &req, &error), 1);
        assert_true(req.format_perf);
        request_done(&req);
        assert_int_equal(parse("{\"type\":\"subscribe\",\"format\":\"json\"}", &req, &error), 1);
        assert_false(req.format_perf);
        request_done(&req);
        assert_int_equal(parse("{\"type\":\"status\"}", &req, &error), 1);
        assert_false(request_is_control(req.type));
        assert_null(error);
}

static void test_subscribe(void **state) {
        _cleanup_(request_done) struct request req = {};
        _cleanup_(subscription_done) struct subscription sub = {};
        _cleanup_(freep) char *error = NULL;

        assert_int_equal(parse("{\"type\":\"subscribe\",\"events\":[\"sched:*\"],\"pids\":[42,43],\"cgroups\":null}",
                               &req, &error), 1);
        assert_int_equal(req.type, REQUEST_SUBSCRIBE);
        assert_string_equal(req.events[0], "sched:*");
        assert_null(req.events[1]);
        assert_true(req.has_pids);
        assert_int_equal(req.n_pids, 2);
        assert_null(req.cgroups);
        assert_false(req.format_perf);
        assert_int_equal(subscription_build(&sub, &req, names, 3, NULL, &error), 0);
        assert_true(subscription_has_event(&sub, 0));
        assert_true(subscription_has_event(&sub, 1));
        assert_false(subscription_has_event(&sub, 2));
        assert_true(subscription_matches(&sub, &(struct line_meta) { .idx = 1, .pid = 43 }));
        assert_false(subscription_matches(&sub, &(struct line_meta) { .idx = 1, .pid = 44 }));
        assert_false(subscription_matches(&sub, &(struct line_meta) { .idx = 2, .pid = 42 }));

        /* A reload renames: the pattern is matched again. */
        const char *const after[] = { "kprobe:open", "sched:sched_switch" };
        subscription_resolve(&sub, after, 2);
        assert_false(subscription_has_event(&sub, 0));
        assert_true(subscription_has_event(&sub, 1));
}

/* By comm pattern and container id (context on the line's meta): unknown
 * context matches neither. */
static void test_subscribe_context(void **state) {
        _cleanup_(request_done) struct request req = {};
        _cleanup_(subscription_done) struct subscription sub = {};
        _cleanup_(freep) char *error = NULL;
        const char *id = "3f2a1b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a";

        assert_int_equal(parse("{\"type\":\"subscribe\",\"comms\":[\"ngin*\",\"sshd\"],\"containers\":[\"3f2a1b9c8d7e\"]}",
                               &req, &error), 1);
        assert_int_equal(subscription_build(&sub, &req, names, 3, NULL, &error), 0);
        assert_true(subscription_matches(&sub, &(struct line_meta) { .comm = "nginx", .container = id, .container_uid = -1 }));
        assert_true(subscription_matches(&sub, &(struct line_meta) { .comm = "sshd", .container = id, .container_uid = -1 }));
        assert_false(subscription_matches(&sub, &(struct line_meta) { .comm = "sshd-session", .container = id, .container_uid = -1 }));
        assert_false(subscription_matches(&sub, &(struct line_meta) { .comm = "nginx", .container = "3f2a", .container_uid = -1 }));
        assert_false(subscription_matches(&sub, &(struct line_meta) { .comm = "nginx" }));
        assert_false(subscription_matches(&sub, &(struct line_meta) { .container = id, .container_uid = -1 }));
}

/* A rootless container's id is its user's say (issue 26: uid 1000 names a
 * cgroup "docker-<root's container id>.scope" in its user@1000.service):
 * a plain entry never takes it, only "UID/PREFIX" naming that user. */
static void test_subscribe_rootless_container(void **state) {
        _cleanup_(request_done) struct request req = {};
        _cleanup_(subscription_done) struct subscription sub = {};
        _cleanup_(freep) char *error = NULL;
        const char *id = "3f2a1b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a";

        assert_int_equal(parse("{\"type\":\"subscribe\",\"containers\":[\"3f2a1b9c8d7e\"]}", &req, &error), 1);
        assert_int_equal(subscription_build(&sub, &req, names, 3, NULL, &error), 0);
        assert_true(subscription_matches(&sub, &(struct line_meta) { .container = id, .container_uid = -1 }));
        assert_false(subscription_matches(&sub, &(struct line_meta) { .container = id, .container_uid = 1000 }));
        assert_false(subscription_matches(&sub, &(struct line_meta) { .container = id, .container_uid = 0 }));
        request_done(&req);
        subscription_done(&sub);

        assert_int_equal(parse("{\"type\":\"subscribe\",\"containers\":[\"1000/3f2a\",\"1001/\"]}", &req, &error), 1);
        assert_int_equal(subscription_build(&sub, &req, names, 3, NULL, &error), 0);
        assert_true(subscription_matches(&sub, &(struct line_meta) { .container = id, .container_uid = 1000 }));
        assert_true(subscription_matches(&sub, &(struct line_meta) { .container = id, .container_uid = 1001 }));
        assert_false(subscription_matches(&sub, &(struct line_meta) { .container = id, .container_uid = 100 }));
        assert_false(subscription_matches(&sub, &(struct line_meta) { .container = id, .container_uid = 10001 }));
        assert_false(subscription_matches(&sub, &(struct line_meta) { .container = id, .container_uid = -1 }));
}

static void test_subscribe_refused(void **state) {
        _cleanup_(request_done) struct request req = {};
        struct subscription sub;
        _cleanup_(freep) char *error = NULL;

        assert_int_equal(parse("{\"type\":\"subscribe\",\"events\":[\"kprobe:open\",\"uprobe:x\"]}", &req, &error), 1);
        assert_int_equal(subscription_build(&sub, &req, names, 3, NULL, &error), -EINVAL);
        assert_string_equal(error, "subscribe: no event \"uprobe:x\" is served here (the hello line lists them); root or "
                                   "socket.admin_group adds one with evmonctl add '{\"tracepoint\":\"SYSTEM:NAME\"}' or "
                                   "'{\"kprobe\":\"SYMBOL\",\"name\":\"NAME\"}' (doc/config.md), or to the config's \"events\"");
        request_done(&req);
        free(error);
        error = NULL;
        assert_int_equal(parse("{\"type\":\"subscribe\",\"events\":[\"sched:sched_switch\"]}", &req, &error), 1);
        assert_int_equal(subscription_build(&sub, &req, names, 3, NULL, &error), -EINVAL);
        assert_string_equal(error, "subscribe: no event \"sched:sched_switch\" is served here (the hello line lists "
                                   "them); root or socket.admin_group adds it: evmonctl add "
                                   "'{\"tracepoint\":\"sched:sched_switch\"}' (or evmonctl watch --add), or to the "
                                   "config's \"events\"");
        request_done(&req);
        free(error);
        error = NULL;
        assert_int_equal(parse("{\"type\":\"subscribe\",\"cgroups\":[\"/x\"]}", &req, &error), 1);
        assert_int_equal(subscription_build(&sub, &req, names, 3, NULL, &error), -EINVAL);
        assert_string_equal(error, "subscribe: no cgroup2 file system is mounted on this host");
}

/* Lists tried on every line stay short; a pid list may be long, and is
 * searched, not scanned, whatever order the client gave. */
static void test_subscribe_limits(void **state) {
        _cleanup_(request_done) struct request req = {};
        _cleanup_(subscription_done) struct subscription sub = {};
        _cleanup_(freep) char *error = NULL;
        char line[16384];
        int n;

        for (unsigned k = 0; k < 3; k++) {
                static const char *const keys[] = { "comms", "containers", "cgroups" };
                char expected[128];

                n = snprintf(line, sizeof(line), "{\"type\":\"subscribe\",\"%s\":[", keys[k]);
                for (unsigned i = 0; i <= REQUEST_LIST_MAX; i++)
                        n += snprintf(line + n, sizeof(line) - n, "%s\"x%u\"", i ? "," : "", i);
                snprintf(line + n, sizeof(line) - n, "]}");
                snprintf(expected, sizeof(expected), "subscribe: \"%s\" has %u entries, at most %u are taken", keys[k],
                         REQUEST_LIST_MAX + 1, REQUEST_LIST_MAX);
                expect_error(line, expected);
                /* One less is taken. */
                *strrchr(line, ',') = 0;
                strcat(line, "]}");
                assert_int_equal(parse(line, &req, &error), 1);
                request_done(&req);
        }

        n = snprintf(line, sizeof(line), "{\"type\":\"subscribe\",\"pids\":[");
        for (unsigned i = 0; i < 1000; i++)
                n += snprintf(line + n, sizeof(line) - n, "%s%u", i ? "," : "", (i * 7919) % 1000 * 2 + 2);
        snprintf(line + n, sizeof(line) - n, "]}");
        assert_int_equal(parse(line, &req, &error), 1);
        assert_int_equal(req.n_pids, 1000);
        assert_int_equal(subscription_build(&sub, &req, names, 3, NULL, &error), 0);
        for (pid_t p = 1; p <= 2002; p++)
                assert_int_equal(subscription_matches(&sub, &(struct line_meta) { .idx = 0, .pid = p }),
                                 p % 2 == 0 && p <= 2000);
        assert_null(error);
}

/* Everything before a subscribe; an empty pid list lets nothing through. */
static void test_defaults(void **state) {
        _cleanup_(request_done) struct request req = {};
        _cleanup_(subscription_done) struct subscription sub = {};
        _cleanup_(freep) char *error = NULL;

        subscription_init(&sub);
        assert_true(subscription_matches(&sub, &(struct line_meta) { .idx = 2, .pid = 1 }));
        subscription_done(&sub);
        assert_int_equal(parse("{\"type\":\"subscribe\",\"pids\":[]}", &req, &error), 1);
        assert_int_equal(subscription_build(&sub, &req, names, 3, NULL, &error), 0);
        assert_true(subscription_has_event(&sub, 2));
        assert_false(subscription_matches(&sub, &(struct line_meta) { .idx = 2, .pid = 1 }));
}

/* "self" lets evmond's clients' lines through; "client" is a bounded,
 * sanitized name; a refused subscribe's type is told (the server then
 * gives that client nothing, subscription_none()). */
static void test_subscribe_self_client(void **state) {
        _cleanup_(request_done) struct request req = {};
        _cleanup_(subscription_done) struct subscription sub = {};
        _cleanup_(freep) char *error = NULL;
        const struct line_meta self = { .idx = 0, .pid = 7, .self = true }, other = { .idx = 0, .pid = 8 };

        subscription_init(&sub);
        assert_false(subscription_matches(&sub, &self));
        assert_true(subscription_matches(&sub, &other));
        subscription_none(&sub);
        assert_false(subscription_matches(&sub, &other));

        assert_int_equal(parse("{\"type\":\"subscribe\",\"self\":true,\"client\":\"my exp\u00e9rter\\u001b[1m\"}",
                               &req, &error), 1);
        assert_true(req.self);
        assert_string_equal(req.client, "my_exp__rter__1m");
        assert_int_equal(subscription_build(&sub, &req, names, 3, NULL, &error), 0);
        assert_true(subscription_matches(&sub, &self));
        request_done(&req);

        expect_error("{\"type\":\"subscribe\",\"self\":1}", "subscribe: \"self\" must be true or false");
        assert_int_equal(parse("{\"type\":\"subscribe\",\"stack_bytes\":true}", &req, &error), 1);
        assert_true(req.stack_bytes);
        request_done(&req);
        assert_int_equal(parse("{\"type\":\"subscribe\"}", &req, &error), 1);
        assert_false(req.stack_bytes);
        request_done(&req);
        expect_error("{\"type\":\"subscribe\",\"stack_bytes\":\"yes\"}",
                     "subscribe: \"stack_bytes\" must be true or false");
        expect_error("{\"type\":\"subscribe\",\"client\":\"\"}", "subscribe: \"client\" must be 1 to 64 bytes long, not 0");
        expect_error("{\"type\":\"subscribe\",\"client\":[]}",
                     "subscribe: \"client\" must be a string such as \"my-exporter\"");
        assert_int_equal(parse("{\"type\":\"subscribe\",\"evnets\":[]}", &req, &error), -EINVAL);
        assert_int_equal(req.type, REQUEST_SUBSCRIBE);
        free(error);
        error = NULL;
        assert_int_equal(parse("{\"type\":\"status\",\"x\":1}", &req, &error), -EINVAL);
        assert_int_equal(req.type, REQUEST_STATUS);
        free(error);
        error = NULL;
        assert_int_equal(parse("{\"type\":\"subscrib\"}", &req, &error), -EINVAL);
        assert_int_equal(req.type, _REQUEST_TYPE_MAX);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_types),
                cmocka_unit_test(test_aggregate),
                cmocka_unit_test(test_errors),
                cmocka_unit_test(test_bytes),
                cmocka_unit_test(test_control),
                cmocka_unit_test(test_subscribe),
                cmocka_unit_test(test_subscribe_context),
                cmocka_unit_test(test_subscribe_rootless_container),
                cmocka_unit_test(test_subscribe_refused),
                cmocka_unit_test(test_subscribe_limits),
                cmocka_unit_test(test_defaults),
                cmocka_unit_test(test_subscribe_self_client),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
