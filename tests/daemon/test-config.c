/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* config.c: every way a config can be wrong gives one message that starts
 * "FILE:LINE: KEY: " with the line a person has to edit, and -EINVAL; every
 * value of a good config lands in struct config. */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "evmon/cleanup.h"

#define FILE_NAME "/etc/evmon/t.json"
#define EV1 "\"events\": [{\"tracepoint\": \"sched:sched_process_exec\"}]"

static char *source_path(const char *rel) {
        const char *root = getenv("EVMON_SOURCE_ROOT");
        char *p;

        assert_true(asprintf(&p, "%s/%s", root ? root : ".", rel) >= 0);
        return p;
}

static struct config *parse_ok(const char *text) {
        struct config *c = NULL;
        _cleanup_(freep) char *error = NULL;
        int r;

        r = config_parse(text, FILE_NAME, &c, &error);
        if (r != 0)
                fprintf(stderr, "config:\n%s\nunexpected error %d: %s\n", text, r, error ?: "(none)");
        assert_int_equal(r, 0);
        assert_null(error);
        assert_non_null(c);
        return c;
}

/* Asserts that TEXT is refused with -EINVAL and one message that starts
 * with PREFIX (e.g. FILE_NAME ":3: ring.pages: ") and contains WHAT. */
static void check_bad(const char *text, const char *prefix, const char *what, int line) {
        struct config *c = NULL;
        _cleanup_(freep) char *error = NULL;
        int r;

        r = config_parse(text, FILE_NAME, &c, &error);
        if (r != -EINVAL || !error || strncmp(error, prefix, strlen(prefix)) != 0 ||
            !strstr(error + strlen(prefix), what) || strchr(error, '\n'))
                fail_msg("test-config.c:%d: config:\n%s\nreturned %d with \"%s\"\nwanted -EINVAL with \"%s...%s...\"",
                         line, text, r, error ?: "(no message)", prefix, what);
        assert_null(c);
}
#define BAD(text, prefix, what) check_bad(text, FILE_NAME prefix, what, __LINE__)

/* ---- good configs -------------------------------------------------- */

static void test_builtin(void **state) {
        _cleanup_(config_freep) struct config *c = NULL;
        _cleanup_(freep) char *error = NULL;
        static const char *const names[] = { "sched_process_exec", "sched_process_exit", "sched_process_fork" };

        assert_int_equal(config_parse(config_builtin, "<built-in default>", &c, &error), 0);
        assert_null(error);
        assert_string_equal(c->path, "<built-in default>");
        assert_string_equal(c->socket_path, EVMON_SOCKET_PATH_DEFAULT);
        assert_int_equal(c->socket_mode, 0660);
        assert_string_equal(c->socket_group, "evmon");
        assert_int_equal(c->ring_pages, CONFIG_DEFAULT_RING_PAGES);
        assert_int_equal(c->flush_ms, 4);
        assert_int_equal(c->busy_flush_ms, 16);
        assert_int_equal(c->idle_flush_ms, 50);
        assert_true(c->doorbell);
        assert_int_equal(c->ring_threads, 0);
        assert_int_equal(c->clockid, CLOCK_MONOTONIC);
        assert_string_equal(c->clock_name, "monotonic");
        assert_int_equal(c->max_clients, 64);
        assert_int_equal(c->client_queue_bytes, 8u << 20);
        assert_null(c->cgroups);
        assert_int_equal(c->n_pids, 0);
        assert_int_equal(c->n_events, 3);
        for (size_t i = 0; i < 3; i++) {
                struct event_config *e = &c->events[i];
                char wire[64], where[96];

                snprintf(wire, sizeof(wire), "sched:%s", names[i]);
                /* config_builtin puts event N on line N + 3. */
                snprintf(where, sizeof(where), "<built-in default>:%zu: events[%zu].tracepoint", i + 3, i);
                assert_int_equal(e->kind, EVENT_TRACEPOINT);
                assert_string_equal(e->system, "sched");
                assert_string_equal(e->name, names[i]);
                assert_string_equal(e->wire_name, wire);
                assert_string_equal(e->where, where);
                assert_null(e->target);
                assert_null(e->fetch);
                assert_null(e->filter);
                assert_null(e->filter_where);
        }
}

/* The config that `meson install` puts in /etc/evmon. */
static void test_shipped(void **state) {
        _cleanup_(config_freep) struct config *c = NULL;
        _cleanup_(freep) char *error = NULL, *path = source_path("conf/evmond.json");

        assert_int_equal(config_load(path, &c, &error), 0);
        assert_null(error);
        assert_string_equal(c->path, path);
        assert_string_equal(c->socket_path, EVMON_SOCKET_PATH_DEFAULT);
        assert_int_equal(c->n_events, 3);
        assert_string_equal(c->events[0].wire_name, "sched:sched_process_exec");
}

static void check_event(const struct event_config *e, enum event_kind kind, const char *wire, const char *system,
                        const char *name, const char *target, const char *where) {
        assert_int_equal(e->kind, kind);
        assert_string_equal(e->wire_name, wire);
        assert_string_equal(e->system, system);
        assert_string_equal(e->name, name);
        if (target)
                assert_string_equal(e->target, target);
        else
                assert_null(e->target);
        assert_string_equal(e->where, where);
}

/* fixtures/full.json: every key, comments holding braces and quotes, an
 * event spread over several lines; each value and each line lands. */
static void test_full(void **state) {
        _cleanup_(config_freep) struct config *c = NULL;
        _cleanup_(freep) char *error = NULL, *path = source_path("tests/daemon/fixtures/full.json");
        _cleanup_(freep) char *where = NULL;
        const struct event_config *e;

        assert_int_equal(config_load(path, &c, &error), 0);
        assert_null(error);
        assert_string_equal(c->socket_path, "/run/evmon-test/evmond.sock");
        assert_int_equal(c->socket_mode, 0640);
        assert_string_equal(c->socket_group, "adm");
        assert_int_equal(c->ring_pages, 16);
        assert_int_equal(c->flush_ms, 20);
        assert_int_equal(c->busy_flush_ms, 40);
        assert_int_equal(c->idle_flush_ms, 200);
        assert_false(c->doorbell);
        assert_int_equal(c->ring_threads, 3);
        assert_int_equal(c->max_clients, 8);
        assert_int_equal(c->client_queue_bytes, 256 * 1024);
        assert_int_equal(c->clockid, CLOCK_MONOTONIC_RAW);
        assert_string_equal(c->clock_name, "monotonic_raw");
        assert_non_null(c->cgroups);
        assert_string_equal(c->cgroups[0], "/system.slice/nginx.service");
        assert_string_equal(c->cgroups[1], "/user.slice");
        assert_null(c->cgroups[2]);
        assert_int_equal(c->n_pids, 2);
        assert_int_equal(c->pids[0], 1);
        assert_int_equal(c->pids[1], 4242);
        assert_int_equal(c->n_events, 6);

#define WHERE(line, key) ({ free(where); assert_true(asprintf(&where, "%s:%d: %s", path, line, key) >= 0); where; })
        assert_string_equal(c->cgroups_where[0], WHERE(14, "targets.cgroups[0]"));
        assert_string_equal(c->cgroups_where[1], WHERE(15, "targets.cgroups[1]"));

        e = &c->events[0];
        check_event(e, EVENT_TRACEPOINT, "sched:sched_process_exec", "sched", "sched_process_exec", NULL,
                    WHERE(19, "events[0].tracepoint"));
        assert_null(e->filter);

        e = &c->events[1];
        check_event(e, EVENT_TRACEPOINT, "syscalls:sys_enter_openat", "syscalls", "sys_enter_openat", NULL,
                    WHERE(20, "events[1].tracepoint"));
        assert_string_equal(e->filter, "dfd == -100 && filename ~ \"/etc/*\" // {");
        assert_string_equal(e->filter_where, WHERE(22, "events[1].filter"));
        assert_null(e->fetch);

        e = &c->events[2];
        check_event(e, EVENT_KPROBE, "kprobe:open", "kprobe", "open", "do_sys_openat2", WHERE(23, "events[2].kprobe"));
        assert_non_null(e->fetch);
        assert_string_equal(e->fetch[0], "dfd=%di");
        assert_string_equal(e->fetch[1], "path=+0(%si):string");
        assert_null(e->fetch[2]);
        assert_null(e->filter);

        e = &c->events[3];
        check_event(e, EVENT_KRETPROBE, "kretprobe:open_ret", "kretprobe", "open_ret", "do_sys_openat2",
                    WHERE(25, "events[3].kretprobe"));
        assert_string_equal(e->fetch[0], "fd=$retval:s32");
        assert_null(e->fetch[1]);

        e = &c->events[4];
        check_event(e, EVENT_UPROBE, "uprobe:readline", "uprobe", "readline", "/usr/bin/bash:readline",
                    WHERE(26, "events[4].uprobe"));
        assert_null(e->fetch);

        e = &c->events[5];
        check_event(e, EVENT_URETPROBE, "uretprobe:readline_ret", "uretprobe", "readline_ret", "/usr/bin/bash:readline",
                    WHERE(29, "events[5].uretprobe"));
        assert_string_equal(e->fetch[0], "line=+0($retval):string");
        assert_null(e->fetch[1]);
#undef WHERE
}

static void test_values(void **state) {
        static const struct { const char *name; clockid_t id; } clocks[] = {
                { "monotonic", CLOCK_MONOTONIC }, { "monotonic_raw", CLOCK_MONOTONIC_RAW },
                { "boottime", CLOCK_BOOTTIME }, { "realtime", CLOCK_REALTIME }, { "tai", CLOCK_TAI },
        };
        static const struct { const char *mode; mode_t m; } modes[] = {
                { "0660", 0660 }, { "660", 0660 }, { "0", 0 }, { "0777", 0777 }, { "600", 0600 },
        };

        for (size_t i = 0; i < ELEMENTSOF(clocks); i++) {
                _cleanup_(freep) char *text = NULL;
                _cleanup_(config_freep) struct config *c = NULL;

                /* Software events take every clock; tracepoints the
                 * NMI-safe ones (test_targets_clock()). */
                assert_true(asprintf(&text, "{\"clock\": \"%s\", \"events\": [{\"software\": \"cpu-clock\"}]}",
                                     clocks[i].name) >= 0);
                c = parse_ok(text);
                assert_int_equal(c->clockid, clocks[i].id);
                assert_string_equal(c->clock_name, clocks[i].name);
        }
        for (size_t i = 0; i < ELEMENTSOF(modes); i++) {
                _cleanup_(freep) char *text = NULL;
                _cleanup_(config_freep) struct config *c = NULL;

                assert_true(asprintf(&text, "{\"socket\": {\"mode\": \"%s\"}, " EV1 "}", modes[i].mode) >= 0);
                c = parse_ok(text);
                assert_int_equal(c->socket_mode, modes[i].m);
        }
        /* Every power of two in range, and the range's ends elsewhere. */
        for (unsigned p = 1; p <= 1u << 16; p <<= 1) {
                _cleanup_(freep) char *text = NULL;
                _cleanup_(config_freep) struct config *c = NULL;

                assert_true(asprintf(&text, "{\"ring\": {\"pages\": %u}, " EV1 "}", p) >= 0);
                c = parse_ok(text);
                assert_int_equal(c->ring_pages, p);
        }
        {
                /* ring.latency_ms, the budget; flush_ms is its old name. */
                _cleanup_(config_freep) struct config *c = parse_ok("{\"ring\": {\"latency_ms\": 2}, " EV1 "}");
                assert_int_equal(c->flush_ms, 2);
        }
        BAD("{\n  \"ring\": {\"latency_ms\": 2,\n    \"flush_ms\": 1},\n  " EV1 "\n}", ":3: ring.flush_ms: ",
            "is the old name of ring.latency_ms, which is set too");
        {
                _cleanup_(config_freep) struct config *c = parse_ok(
                        "{\"ring\": {\"flush_ms\": 1000}, \"clients\": {\"max\": 4096, \"queue_kib\": 64},\n"
                        " \"targets\": {\"pids\": [2147483647], \"cgroups\": []}, " EV1 "}");
                assert_int_equal(c->flush_ms, 1000);
                /* Unset, the idle and busy periods never undercut flush_ms. */
                assert_int_equal(c->idle_flush_ms, 1000);
                assert_int_equal(c->busy_flush_ms, 1000);
                assert_int_equal(c->max_clients, 4096);
                assert_int_equal(c->client_queue_bytes, 64 * 1024);
                assert_int_equal(c->n_pids, 1);
                assert_int_equal(c->pids[0], 2147483647);
                assert_non_null(c->cgroups);
                assert_null(c->cgroups[0]);
        }
        {
                /* An empty socket.group is allowed: the socket stays root's. */
                _cleanup_(config_freep) struct config *c = parse_ok("{\"socket\": {\"group\": \"\"}, " EV1 "}");
                assert_string_equal(c->socket_group, "");
        }
        {
                /* A kprobe and a kretprobe may share a name: their wire names differ. */
                _cleanup_(config_freep) struct config *c = parse_ok(
                        "{\"events\": [{\"kprobe\": \"f\", \"name\": \"x\"}, {\"kretprobe\": \"f\", \"name\": \"x\"},\n"
                        "  {\"uprobe\": \"/bin/sh:main\", \"name\": \"_x9\", \"fetch\": []}]}");
                assert_int_equal(c->n_events, 3);
                assert_string_equal(c->events[0].wire_name, "kprobe:x");
                assert_string_equal(c->events[1].wire_name, "kretprobe:x");
                assert_string_equal(c->events[2].wire_name, "uprobe:_x9");
                assert_non_null(c->events[2].fetch);
                assert_null(c->events[2].fetch[0]);
        }
}

/* Both comment styles, anywhere whitespace may be, and CRLF line ends. */
static void test_comments(void **state) {
        _cleanup_(config_freep) struct config *c = NULL, *crlf = NULL;

        c = parse_ok("// leading comment {\n"
                     "/* block\n"
                     "   comment \" [ */ {\n"
                     "  \"ring\" /* between key and colon */ : // after the colon\n"
                     "     {\"pages\": 8 /* after a value */},\n"
                     "  \"events\": [ // inside an array\n"
                     "    {\"tracepoint\": \"sched:sched_process_exec\"} /* } */\n"
                     "  ]\n"
                     "}\n"
                     "// trailing comment\n"
                     "/* and a trailing block */\n");
        assert_int_equal(c->ring_pages, 8);
        assert_int_equal(c->n_events, 1);
        assert_string_equal(c->events[0].where, FILE_NAME ":7: events[0].tracepoint");

        crlf = parse_ok("{\r\n  // c\r\n  \"events\": [\r\n    {\"tracepoint\": \"a:b\"}\r\n  ]\r\n}\r\n");
        assert_string_equal(crlf->events[0].where, FILE_NAME ":4: events[0].tracepoint");
}

/* ---- bad configs ----------------------------------------------------- */

static void test_invalid_json(void **state) {
        /* The line where json-c stopped. */
        BAD("{\n"
            "  \"ring\": {\"pages\": 64}\n"
            "  \"events\": []\n"
            "}\n",
            ":3: invalid JSON: ", "");
        BAD("{\n"
            "  \"events\": [\n"
            "    {\"tracepoint\": \"sched:sched_process_exec\"},\n"
            "    {\"tracepoint\": sched:sched_process_exit}\n"
            "  ]\n"
            "}\n",
            ":4: invalid JSON: ", "");
        BAD("{\n  \"events\": [\n    {\"tracepoint\": \"a:b\"}\n", ":4: invalid JSON: ", "end of file");
        /* An unterminated string runs to the end of the file. */
        BAD("{\n  \"events\": [\n    {\"tracepoint\": \"a:b\n", ":4: invalid JSON: ", "end of file");
        BAD("{\n  /* never closed\n  \"events\": []\n}\n", ":5: invalid JSON: ", "end of file");
        BAD("", ":1: invalid JSON: ", "end of file");
        BAD("{\n \"ring\": {\"pages\": tru},\n" EV1 "}", ":2: invalid JSON: ", "");
        BAD("{\n \"ring\": {\"pages\": 0x40},\n" EV1 "}", ":2: invalid JSON: ", "");
}

static void test_trailing(void **state) {
        BAD("{" EV1 "} x", ":1: invalid JSON: ", "text after the end of the config object");
        BAD("{\n" EV1 "\n}\n\n{\"ring\": {}}\n", ":5: invalid JSON: ", "text after the end");
        BAD("{\n" EV1 "\n}\n}\n", ":4: invalid JSON: ", "text after the end");
        BAD("{\n" EV1 "\n}\n// a comment\n/* and\n another */\n]\n", ":7: invalid JSON: ", "text after the end");
}

static void test_root(void **state) {
        BAD("\n[]\n", ":2: ", "the config must be a JSON object, got array");
        BAD("\"events\"", ":1: ", "must be a JSON object, got string");
        BAD("null\n", ":1: ", "must be a JSON object, got null");
        BAD("{\n  \"ring\": {\"pages\": 64}\n}\n", ":1: events: ", "missing");
        BAD("// comment\n\n{\n}\n", ":3: events: ", "missing");
        BAD("{\n  \"events\": []\n}\n", ":2: events: ", "is empty");
        BAD("{\n  \"events\": {}\n}\n", ":2: events: ", "expected array, got object");
        BAD("{\n  \"events\": \"sched:sched_process_exec\"\n}\n", ":2: events: ", "expected array, got string");
        BAD("{\n  \"events\": null\n}\n", ":2: events: ", "expected array, got null");
}

/* "context" (on unless false) and an event's "symbols", which needs a
 * callchain to name. */
static void test_context(void **state) {
        _cleanup_(config_freep) struct config *a = NULL, *b = NULL;

        a = parse_ok("{" EV1 "}");
        assert_true(a->context);
        assert_false(a->events[0].symbols);
        b = parse_ok("{\"context\": false, \"events\": [\n"
                     " {\"software\": \"cpu-clock\", \"sample\": [\"callchain\"], \"symbols\": true},\n"
                     " {\"software\": \"task-clock\", \"callchain\": {\"user\": false}, \"symbols\": true}]}");
        assert_false(b->context);
        assert_true(b->events[0].symbols);
        assert_true(b->events[1].symbols);
        BAD("{\n  \"context\": \"yes\",\n  " EV1 "\n}", ":2: context: ", "expected boolean");
        assert_true(a->order_time);
        assert_true(b->order_time);
        config_free(b);
        b = parse_ok("{\"order\": \"arrival\", " EV1 "}");
        assert_false(b->order_time);
        config_free(b);
        b = parse_ok("{\"order\": \"time\", " EV1 "}");
        assert_true(b->order_time);
        BAD("{\n  \"order\": \"sorted\",\n  " EV1 "\n}", ":2: order: ", "neither \"time\"");
        BAD("{\n  \"order\": true,\n  " EV1 "\n}", ":2: order: ", "expected string");
        BAD("{\"events\": [\n {\"software\": \"cpu-clock\",\n  \"symbols\": true}]}", ":3: events[0].symbols: ",
            "add \"callchain\" to \"sample\"");
        BAD("{\"events\": [\n {\"tracepoint\": \"sched:sched_process_exec\", \"symbols\": true}]}",
            ":2: events[0].symbols: ", "add \"callchain\" to \"sample\"");
}

/* socket.admin_add: what a non-root member of socket.admin_group may add
 * at run time (issue 26: that member could add a uprobe with fetch-args
 * on any binary and read root's memory). Unset: nothing. */
static void test_admin_add(void **state) {
        struct config *c;

        c = parse_ok("{\"socket\": {\"admin_group\": \"wheel\"}, " EV1 "}");
        assert_int_equal(c->admin_add.kinds, 0);
        assert_null(c->admin_add.paths);
        assert_false(c->admin_add.fetch);
        config_free(c);
        c = parse_ok("{\"socket\": {\"admin_group\": \"wheel\", \"admin_add\": {\"kinds\": [\"tracepoint\", \"uprobe\"], "
                     "\"paths\": [\"/usr/bin/*\", \"/opt/app/bin/server\"], \"fetch\": true}}, " EV1 "}");
        assert_int_equal(c->admin_add.kinds, 1u << EVENT_TRACEPOINT | 1u << EVENT_UPROBE);
        assert_string_equal(c->admin_add.paths[0], "/usr/bin/*");
        assert_string_equal(c->admin_add.paths[1], "/opt/app/bin/server");
        assert_null(c->admin_add.paths[2]);
        assert_true(c->admin_add.fetch);
        {
                /* A runtime change keeps it (config_copy()). */
                struct config *d = NULL;

                assert_int_equal(config_copy(c, 1, &d), 0);
                assert_int_equal(d->admin_add.kinds, c->admin_add.kinds);
                assert_string_equal(d->admin_add.paths[1], "/opt/app/bin/server");
                assert_true(d->admin_add.paths[1] != c->admin_add.paths[1]);
                config_free(d);
        }
        config_free(c);

        BAD("{\n \"socket\": {\"admin_add\": {\"kinds\": [\"tracepoint\"]}},\n " EV1 "}", ":2: socket.admin_add: ",
            "there is no socket.admin_group for it to limit");
        BAD("{\n \"socket\": {\"admin_group\": \"wheel\",\n  \"admin_add\": {\"kinds\": [\"tracepoint\",\n   \"kprobes\"]}},\n " EV1 "}",
            ":4: socket.admin_add.kinds[1]: ", "unknown event kind \"kprobes\" (known: tracepoint, kprobe,");
        BAD("{\n \"socket\": {\"admin_group\": \"wheel\",\n  \"admin_add\": {\"kinds\": [\"uprobe\"]}},\n " EV1 "}",
            ":3: socket.admin_add", "no \"paths\" says which binaries");
        BAD("{\n \"socket\": {\"admin_group\": \"wheel\",\n  \"admin_add\": {\"kinds\": [\"uprobe\"],\n   \"paths\": [\"bin/*\"]}},\n " EV1 "}",
            ":4: socket.admin_add.paths[0]: ", "must be an absolute path or pattern");
        BAD("{\n \"socket\": {\"admin_group\": \"wheel\",\n  \"admin_add\": {\"fetch\": \"yes\"}},\n " EV1 "}",
            ":3: socket.admin_add.fetch: ", "expected boolean");
        BAD("{\n \"socket\": {\"admin_group\": \"wheel\",\n  \"admin_add\": {\"binaries\": []}},\n " EV1 "}",
            ":3: socket.admin_add.binaries: ", "(known here: kinds, paths, fetch)");
        BAD("{\n \"socket\": {\"admin_group\": \"wheel\",\n  \"admin_add\": true},\n " EV1 "}",
            ":3: socket.admin_add: ", "expected object, got boolean");
}

static void test_unknown_keys(void **state) {
        BAD("{\n  " EV1 ",\n  \"rings\": {}\n}", ":3: rings: ", "unknown key \"rings\" (known here: socket, ring, clients, targets, events, clock, counters, context, metrics, order, self)");
        BAD("{\n  \"socket\": {\"path\": \"/run/x.sock\",\n    \"owner\": \"root\"},\n  " EV1 "\n}",
            ":3: socket.owner: ", "unknown key \"owner\" (known here: path, mode, group, admin_group, admin_add)");
        BAD("{\n  \"ring\": {\n    \"size\": 64\n  },\n  " EV1 "\n}", ":3: ring.size: ", "unknown key \"size\" (known here: pages, latency_ms, flush_ms, busy_flush_ms, idle_flush_ms, doorbell, threads)");
        BAD("{\n  \"clients\": {\"max\": 4, \"queue\": 64},\n  " EV1 "\n}", ":2: clients.queue: ", "(known here: max, max_per_uid, queue_kib)");
        BAD("{\n  \"targets\": {\"pid\": [1]},\n  " EV1 "\n}", ":2: targets.pid: ", "(known here: cgroups, pids, containers, namespaces)");
        BAD("{\n  \"events\": [\n    {\"tracepoint\": \"a:b\"},\n    {\"tracepoint\": \"a:c\",\n     \"filtre\": \"x\"}\n  ]\n}",
            ":5: events[1].filtre: ", "unknown key \"filtre\" (known here: tracepoint, kprobe, kretprobe, uprobe, uretprobe, name, fetch, filter, and "
            "the perf options: count,");
}

static void test_types(void **state) {
        /* Object expected. */
        BAD("{\n \"socket\": [\"/run/x.sock\"],\n " EV1 "}", ":2: socket: ", "expected object, got array");
        BAD("{\n \"ring\": 64,\n " EV1 "}", ":2: ring: ", "expected object, got int");
        BAD("{\n \"clients\": null,\n " EV1 "}", ":2: clients: ", "expected object, got null");
        BAD("{\n \"targets\": [1],\n " EV1 "}", ":2: targets: ", "expected object, got array");
        /* String expected. */
        BAD("{\n \"socket\": {\"path\": 5},\n " EV1 "}", ":2: socket.path: ", "expected string, got int");
        BAD("{\n \"socket\": {\"group\": 0},\n " EV1 "}", ":2: socket.group: ", "expected string, got int");
        BAD("{\n \"socket\": {\"mode\": 660},\n " EV1 "}", ":2: socket.mode: ", "octal string such as \"0660\", got int");
        BAD("{\n \"clock\": 1,\n " EV1 "}", ":2: clock: ", "expected string, got int");
        BAD("{\n \"events\": [{\"tracepoint\": [\"a:b\"]}]}", ":2: events[0].tracepoint: ", "expected a string, got array");
        BAD("{\n \"events\": [{\"kprobe\": 5, \"name\": \"x\"}]}", ":2: events[0].kprobe: ", "expected a string, got int");
        BAD("{\n \"events\": [{\"tracepoint\": \"a:b\",\n   \"filter\": 1}]}", ":3: events[0].filter: ", "expected string, got int");
        BAD("{\n \"targets\": {\"cgroups\": [\"/a\",\n  7]},\n " EV1 "}", ":3: targets.cgroups[1]: ", "expected a cgroup path string, got int");
        BAD("{\n \"targets\": {\"containers\": [\"web\",\n  \"\"]},\n " EV1 "}", ":3: targets.containers[1]: ",
            "expected a container id (or its leading digits), name or name pattern, got an empty string");
        BAD("{\n \"targets\": {\"namespaces\": []},\n " EV1 "}", ":2: targets.namespaces: ",
            "empty: it would match nothing; leave it out to take every namespace");
        BAD("{\n \"context\": false, \"targets\": {\"containers\": [\"web\"]},\n " EV1 "}",
            ":2: targets.containers: ", "needs \"context\": true");
        /* Integer expected. */
        BAD("{\n \"ring\": {\"pages\": \"64\"},\n " EV1 "}", ":2: ring.pages: ", "expected int, got string");
        BAD("{\n \"ring\": {\"pages\": 64.0},\n " EV1 "}", ":2: ring.pages: ", "expected int, got double");
        BAD("{\n \"ring\": {\"pages\": true},\n " EV1 "}", ":2: ring.pages: ", "expected int, got boolean");
        BAD("{\n \"ring\": {\"flush_ms\": \"5\"},\n " EV1 "}", ":2: ring.flush_ms: ", "expected int, got string");
        BAD("{\n \"clients\": {\"max\": [64]},\n " EV1 "}", ":2: clients.max: ", "expected int, got array");
        BAD("{\n \"clients\": {\"queue_kib\": {}},\n " EV1 "}", ":2: clients.queue_kib: ", "expected int, got object");
        BAD("{\n \"targets\": {\"pids\": [1, \"2\"]},\n " EV1 "}", ":2: targets.pids[1]: ", "expected a process id, got string");
        /* Array expected. */
        BAD("{\n \"targets\": {\"pids\": 1},\n " EV1 "}", ":2: targets.pids: ", "expected array, got int");
        BAD("{\n \"targets\": {\"cgroups\": \"/a\"},\n " EV1 "}", ":2: targets.cgroups: ", "expected array, got string");
        BAD("{\n \"events\": [{\"kprobe\": \"f\", \"name\": \"x\",\n  \"fetch\": \"a=b\"}]}", ":3: events[0].fetch: ",
            "expected an array of \"NAME=FETCHARG\" strings, got string");
        BAD("{\n \"events\": [{\"kprobe\": \"f\", \"name\": \"x\",\n  \"fetch\": {\"a\": \"b\"}}]}", ":3: events[0].fetch: ",
            "got object");
        /* Object expected in an array. */
        BAD("{\n \"events\": [\n  \"sched:sched_process_exec\"\n ]}", ":3: events[0]: ", "expected an object such as");
        BAD("{\n \"events\": [{\"tracepoint\": \"a:b\"},\n  []]}", ":3: events[1]: ", "got array");
}

static void test_ring(void **state) {
        BAD("{\n \"ring\": {\n  \"pages\": 3\n },\n " EV1 "}", ":3: ring.pages: ", "3 is not a power of two (try 2)");
        BAD("{\n \"ring\": {\"pages\": 96},\n " EV1 "}", ":2: ring.pages: ", "96 is not a power of two (try 64)");
        BAD("{\n \"ring\": {\"pages\": 65535},\n " EV1 "}", ":2: ring.pages: ", "not a power of two (try 32768)");
        BAD("{\n \"ring\": {\"pages\": 0},\n " EV1 "}", ":2: ring.pages: ", "0 is out of range (1..65536)");
        BAD("{\n \"ring\": {\"pages\": 131072},\n " EV1 "}", ":2: ring.pages: ", "131072 is out of range (1..65536)");
        BAD("{\n \"ring\": {\"pages\": -64},\n " EV1 "}", ":2: ring.pages: ", "-64 is out of range");
        BAD("{\n \"ring\": {\"pages\": 99999999999999999999},\n " EV1 "}", ":2: ring.pages: ", "out of range");
        BAD("{\n \"ring\": {\"flush_ms\": 0},\n " EV1 "}", ":2: ring.flush_ms: ", "0 is out of range (1..1000)");
        BAD("{\n \"ring\": {\"flush_ms\": 1001},\n " EV1 "}", ":2: ring.flush_ms: ", "1001 is out of range (1..1000)");
        BAD("{\n \"ring\": {\"idle_flush_ms\": 0},\n " EV1 "}", ":2: ring.idle_flush_ms: ", "0 is out of range (1..10000)");
        BAD("{\n \"ring\": {\"flush_ms\": 20,\n  \"idle_flush_ms\": 10},\n " EV1 "}", ":3: ring.idle_flush_ms: ",
            "10 is below ring.flush_ms (20)");
        BAD("{\n \"ring\": {\"flush_ms\": 20,\n  \"busy_flush_ms\": 10},\n " EV1 "}", ":3: ring.busy_flush_ms: ",
            "10 is below ring.flush_ms (20)");
        BAD("{\n \"ring\": {\"doorbell\": 1},\n " EV1 "}", ":2: ring.doorbell: ", "expected boolean, got int");
        BAD("{\n \"ring\": {\"threads\": 65},\n " EV1 "}", ":2: ring.threads: ", "65 is out of range (0..64)");
        BAD("{\n \"clients\": {\"max\": 0},\n " EV1 "}", ":2: clients.max: ", "0 is out of range (1..4096)");
        BAD("{\n \"clients\": {\"max\": 4097},\n " EV1 "}", ":2: clients.max: ", "out of range");
        BAD("{\n \"clients\": {\"queue_kib\": 63},\n " EV1 "}", ":2: clients.queue_kib: ", "63 is out of range (64..1048576)");
}

static void test_socket(void **state) {
        static const char *const bad_modes[] = { "0899", "rw-rw----", "", "0x1b0", " 660", "+660", "-1", "01777", "0660 " };
        char long_path[160];

        for (size_t i = 0; i < ELEMENTSOF(bad_modes); i++) {
                _cleanup_(freep) char *text = NULL, *what = NULL;

                assert_true(asprintf(&text, "{\n \"socket\": {\n  \"mode\": \"%s\"}, " EV1 "}", bad_modes[i]) >= 0);
                assert_true(asprintf(&what, "\"%s\" is not an octal file mode such as \"0660\"", bad_modes[i]) >= 0);
                BAD(text, ":3: socket.mode: ", what);
        }
        BAD("{\n \"socket\": {\"path\": \"run/evmond.sock\"},\n " EV1 "}", ":2: socket.path: ",
            "\"run/evmond.sock\" must be an absolute path shorter than 108 bytes");
        BAD("{\n \"socket\": {\"path\": \"\"},\n " EV1 "}", ":2: socket.path: ", "must be an absolute path");
        memset(long_path, 'a', 108);
        long_path[0] = '/';
        long_path[108] = 0;
        {
                _cleanup_(freep) char *text = NULL;
                _cleanup_(config_freep) struct config *c = NULL;

                assert_true(asprintf(&text, "{\n \"socket\": {\"path\": \"%s\"},\n " EV1 "}", long_path) >= 0);
                BAD(text, ":2: socket.path: ", "shorter than 108 bytes");
                /* 107 bytes (and the NUL) fit sun_path. */
                free(text);
                long_path[107] = 0;
                assert_true(asprintf(&text, "{\n \"socket\": {\"path\": \"%s\"},\n " EV1 "}", long_path) >= 0);
                c = parse_ok(text);
                assert_string_equal(c->socket_path, long_path);
        }
}

static void test_events(void **state) {
        BAD("{\n \"events\": [\n  {}\n ]}", ":3: events[0]: ",
            "needs one of \"tracepoint\", \"kprobe\", \"kretprobe\", \"uprobe\", \"uretprobe\"");
        BAD("{\n \"events\": [\n  {\"filter\": \"pid == 1\"}\n ]}", ":3: events[0]: ", "needs one of");
        BAD("{\n \"events\": [\n  {\"tracepoint\": \"a:b\", \"kprobe\": \"f\", \"name\": \"x\"}\n ]}", ":3: events[0]: ",
            "has both \"tracepoint\" and \"kprobe\": one event per entry");
        BAD("{\n \"events\": [{\"tracepoint\": \"a:b\"},\n  {\"uprobe\": \"/bin/sh:main\",\n   \"uretprobe\": \"/bin/sh:main\", \"name\": \"x\"}\n ]}",
            ":3: events[1]: ", "has both \"uprobe\" and \"uretprobe\"");

        /* Tracepoints are SYSTEM:NAME. */
        static const char *const bad_tp[] = { "sched", ":sched_switch", "sched:", "sched:sched:switch", "../sched:x", "" };
        for (size_t i = 0; i < ELEMENTSOF(bad_tp); i++) {
                _cleanup_(freep) char *text = NULL, *what = NULL;

                assert_true(asprintf(&text, "{\n \"events\": [\n  {\"tracepoint\": \"%s\"}]}", bad_tp[i]) >= 0);
                assert_true(asprintf(&what, "\"%s\" is not SYSTEM:NAME", bad_tp[i]) >= 0);
                BAD(text, ":3: events[0].tracepoint: ", what);
        }
        BAD("{\n \"events\": [{\"tracepoint\": \"a:b\",\n  \"fetch\": [\"x=%di\"]}]}", ":3: events[0].fetch: ",
            "only probes take fetch-args");
        BAD("{\n \"events\": [{\"tracepoint\": \"a:b\",\n  \"name\": \"x\"}]}", ":3: events[0].name: ",
            "\"name\" is for probes");

        /* Probes need a name: letters, digits and _, not starting with a digit. */
        BAD("{\n \"events\": [\n  {\"kprobe\": \"do_sys_openat2\"}]}", ":3: events[0]: ",
            "a kprobe needs a \"name\" (letters, digits, _): it is served as \"kprobe:NAME\"");
        BAD("{\n \"events\": [\n  {\"uretprobe\": \"/bin/sh:main\", \"fetch\": []}]}", ":3: events[0]: ",
            "a uretprobe needs a \"name\"");
        static const char *const bad_names[] = { "\"1open\"", "\"open-at\"", "\"\"", "\"kprobe:open\"", "\"a b\"", "5", "null" };
        for (size_t i = 0; i < ELEMENTSOF(bad_names); i++) {
                _cleanup_(freep) char *text = NULL;

                assert_true(asprintf(&text, "{\n \"events\": [{\"kprobe\": \"f\",\n  \"name\": %s}]}", bad_names[i]) >= 0);
                BAD(text, ":3: events[0].name: ", "must be a name of letters, digits and _ that does not start with a digit");
        }
        BAD("{\n \"events\": [\n  {\"kprobe\": \"\", \"name\": \"x\"}]}", ":3: events[0].kprobe: ", "empty probe target");

        /* fetch entries are NAME=FETCHARG. */
        static const char *const bad_fetch[] = { "%di", "=%di", "dfd=", "dfd = %di", "path=+0(%si):\\tstring" };
        for (size_t i = 0; i < ELEMENTSOF(bad_fetch); i++) {
                _cleanup_(freep) char *text = NULL, *what = NULL;

                assert_true(asprintf(&text, "{\n \"events\": [{\"kprobe\": \"f\", \"name\": \"x\", \"fetch\": [\n"
                                     "   \"ok=%%ax\",\n   \"%s\"]}]}", bad_fetch[i]) >= 0);
                /* The message shows the JSON string as the kernel would get it. */
                assert_true(asprintf(&what, "is not NAME=FETCHARG (for example \"path=+0(%%si):string\")") >= 0);
                BAD(text, ":4: events[0].fetch[1]: ", what);
        }
        BAD("{\n \"events\": [{\"kprobe\": \"f\", \"name\": \"x\", \"fetch\": [\n   5]}]}", ":3: events[0].fetch[0]: ",
            "expected a \"NAME=FETCHARG\" string, got int");

        /* Duplicate wire names. */
        BAD("{\n \"events\": [\n  {\"tracepoint\": \"sched:sched_switch\"},\n  {\"tracepoint\": \"sched:sched_wakeup\"},\n"
            "  {\"tracepoint\": \"sched:sched_switch\", \"filter\": \"prev_pid == 1\"}\n ]}",
            ":5: events[2]: ", "\"sched:sched_switch\" is already listed as events[0]");
        BAD("{\n \"events\": [\n  {\"kprobe\": \"f\", \"name\": \"open\"},\n  {\"kprobe\": \"g\", \"name\": \"open\"}\n ]}",
            ":4: events[1]: ", "\"kprobe:open\" is already listed as events[0]");
}

/* Perf event entries: each kind, options into the attr, the wire name, and
 * a bad option named with its key and line. */
/* Trace events take the perf options (issue 29): their attr is built
 * as a perf event's, with a trace event's defaults (every hit, RAW). */
static void test_trace_perf_options(void **state) {
        _cleanup_(config_freep) struct config *c = parse_ok(
                "{\"events\": [\n"
                " {\"tracepoint\": \"sched:sched_switch\", \"callchain\": {\"max_stack\": 32}, \"symbols\": true,\n"
                "  \"filter\": \"prev_pid != 0\"},\n"
                " {\"kprobe\": \"vfs_read\", \"name\": \"r\", \"sample\": [\"ip\"], \"freq\": 100,\n"
                "  \"exclude\": [\"user\"]},\n"
                " {\"uprobe\": \"/bin/true:main\", \"name\": \"u\", \"count\": true, \"group\": \"g\"},\n"
                " {\"tracepoint\": \"sched:sched_process_exec\"}\n"
                "]}");
        const struct perf_event_attr *a;

        assert_int_equal(c->n_events, 4);
        a = &c->events[0].attr;
        assert_true(c->events[0].perf_options);
        assert_true(c->events[0].symbols);
        assert_string_equal(c->events[0].filter, "prev_pid != 0");
        assert_int_equal(a->sample_period, 1);
        assert_false(a->freq);
        assert_int_equal(a->sample_type, PERF_SAMPLE_RAW | PERF_SAMPLE_CALLCHAIN);
        assert_int_equal(a->sample_max_stack, 32);
        assert_true(a->inherit);

        a = &c->events[1].attr;
        assert_int_equal(a->sample_type, PERF_SAMPLE_RAW | PERF_SAMPLE_IP);
        assert_true(a->freq);
        assert_int_equal(a->sample_freq, 100);
        assert_true(a->exclude_user);

        assert_true(c->events[2].count);
        assert_string_equal(c->events[2].group, "g");
        assert_int_equal(c->events[2].attr.sample_period, 0);
        assert_false(c->events[2].attr.sample_type & PERF_SAMPLE_RAW);

        /* No perf option: the monitor's own attr, as before. */
        assert_false(c->events[3].perf_options);
        assert_false(event_config_has_attr(&c->events[3]));
}

/* "callchain": {"user": "dwarf"}: the kernel's frames, the user registers
 * and stack for evmond's unwinding (perf --call-graph dwarf). */
static void test_callchain_dwarf(void **state) {
        _cleanup_(config_freep) struct config *c = parse_ok(
                "{\"events\": [\n"
                " {\"tracepoint\": \"sched:sched_switch\", \"callchain\": {\"user\": \"dwarf\"}},\n"
                " {\"software\": \"cpu-clock\", \"callchain\": {\"user\": \"dwarf\", \"stack_bytes\": 16384}}\n"
                "]}");
        const struct perf_event_attr *a = &c->events[0].attr;

        assert_true(c->events[0].dwarf);
        assert_true(a->exclude_callchain_user);
        assert_int_equal(a->sample_type, PERF_SAMPLE_RAW | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |
                                         PERF_SAMPLE_STACK_USER);
        assert_int_equal(a->sample_stack_user, 8192);
        assert_int_equal(a->sample_regs_user, 0xff01ff);   /* ax..ip, r8..r15 */
        assert_int_equal(c->events[1].attr.sample_stack_user, 16384);

        BAD("{\"events\": [{\"tracepoint\": \"a:b\",\n \"callchain\": {\"user\": \"fp\"}}]}",
            ":2: events[0].callchain.user: ", "expected true, false or \"dwarf\"");
        BAD("{\"events\": [{\"tracepoint\": \"a:b\",\n \"callchain\": {\"stack_bytes\": 64}}]}",
            ":2: events[0].callchain.stack_bytes: ", "is for \"user\": \"dwarf\"");
        BAD("{\"events\": [{\"tracepoint\": \"a:b\",\n \"callchain\": {\"user\": \"dwarf\", \"stack_bytes\": 100}}]}",
            ":2: events[0].callchain: ", "a multiple of 8");
        BAD("{\"events\": [{\"tracepoint\": \"a:b\", \"stack_user\": 64,\n \"callchain\": {\"user\": \"dwarf\"}}]}",
            ":2: events[0].callchain: ", "no \"regs_user\" or \"stack_user\" beside it");
}

static void test_perf_events(void **state) {
        _cleanup_(config_freep) struct config *c = parse_ok(
                "{\"counters\": {\"interval_ms\": 250}, \"events\": [\n"
                " {\"software\": \"cpu-clock\", \"freq\": 999, \"callchain\": {\"max_stack\": 64, \"user\": false},\n"
                "  \"regs_user\": [\"ax\", \"sp\"], \"exclude\": [\"hv\"], \"inherit\": false},\n"
                " {\"software\": \"page-faults\", \"period\": 1, \"sample\": [\"ip\", \"addr\"], \"name\": \"faults\"},\n"
                " {\"hardware\": \"cycles\", \"count\": true, \"group\": \"g\", \"pinned\": true},\n"
                " {\"cache\": \"L1-dcache-load-misses\", \"count\": true, \"group\": \"g\"},\n"
                " {\"raw\": \"0x1a2\", \"config1\": \"0x10\", \"config2\": 3},\n"
                " {\"breakpoint\": \"0x1000\", \"access\": \"w\", \"len\": 8},\n"
                " {\"software\": \"dummy\", \"records\": [\"comm\", \"mmap2\", \"build_id\", \"context_switch\", \"text_poke\"]}\n"
                "]}");
        const struct perf_event_attr *a;

        assert_int_equal(c->n_events, 7);
        assert_int_equal(c->counter_interval_ms, 250);
        assert_string_equal(c->events[0].wire_name, "software:cpu-clock");
        a = &c->events[0].attr;
        assert_int_equal(a->type, PERF_TYPE_SOFTWARE);
        assert_int_equal(a->config, PERF_COUNT_SW_CPU_CLOCK);
        assert_true(a->freq);
        assert_int_equal(a->sample_freq, 999);
        assert_true(a->sample_type & PERF_SAMPLE_CALLCHAIN);
        assert_int_equal(a->sample_max_stack, 64);
        assert_true(a->exclude_callchain_user);
        assert_int_equal(a->sample_regs_user, 1 << 0 | 1 << 7);
        assert_true(a->exclude_hv);
        assert_false(a->inherit);

        assert_string_equal(c->events[1].wire_name, "faults");
        assert_int_equal(c->events[1].attr.sample_period, 1);
        assert_int_equal(c->events[1].attr.sample_type, PERF_SAMPLE_IP | PERF_SAMPLE_ADDR);
        assert_true(c->events[1].attr.inherit);     /* perf's default */

        assert_true(c->events[2].count);
        assert_string_equal(c->events[2].group, "g");
        assert_true(c->events[2].attr.pinned);
        assert_int_equal(c->events[2].attr.sample_period, 0);
        assert_int_equal(c->events[3].attr.type, PERF_TYPE_HW_CACHE);
        assert_int_equal(c->events[3].attr.config, 0x10000);
        assert_string_equal(c->events[4].wire_name, "raw:0x1a2");
        assert_int_equal(c->events[4].attr.config, 0x1a2);
        assert_int_equal(c->events[4].attr.config1, 0x10);
        assert_int_equal(c->events[4].attr.config2, 3);
        assert_int_equal(c->events[5].attr.bp_type, 2);
        assert_int_equal(c->events[5].attr.bp_addr, 0x1000);
        assert_int_equal(c->events[5].attr.bp_len, 8);
        assert_true(c->events[6].attr.comm && c->events[6].attr.mmap2 && c->events[6].attr.build_id &&
                    c->events[6].attr.context_switch && c->events[6].attr.text_poke);

        BAD("{\n \"events\": [\n  {\"software\": \"cpu-clocks\"}]}", ":3: events[0].software: ",
            "\"cpu-clocks\": not a software event");
        BAD("{\n \"events\": [{\"software\": \"cpu-clock\",\n  \"sample\": [\"ip\", \"tidd\"]}]}", ":3: events[0].sample: ",
            "\"tidd\": not a PERF_SAMPLE_* name");
        BAD("{\n \"events\": [{\"software\": \"cpu-clock\",\n  \"period\": 10, \"freq\": 10}]}", ":3: events[0].freq: ",
            "give period or freq, not both");
        BAD("{\n \"events\": [{\"cache\": \"L1-dcache-load-hits\"}]}", ":2: events[0].cache: ", "not a cache event");
        BAD("{\n \"events\": [{\"pmu\": \"nosuchpmu/event=1/\"}]}", ":2: events[0].pmu: ", "no such PMU");
        BAD("{\n \"events\": [{\"software\": \"dummy\",\n  \"records\": [\"forks\"]}]}", ":3: events[0].records: ",
            "\"forks\": not a side-record name");
        /* A trace event takes the perf options but those of a hardware
         * PMU and the config words, which are its tracepoint's or probe's. */
        BAD("{\n \"events\": [{\"tracepoint\": \"a:b\",\n  \"config1\": 1}]}", ":3: events[0].config1: ",
            "a trace event's config words are its tracepoint's or probe's");
        BAD("{\n \"events\": [{\"kprobe\": \"vfs_read\", \"name\": \"r\",\n  \"precise_ip\": 2}]}",
            ":3: events[0].precise_ip: ", "a hardware PMU option");
        BAD("{\n \"events\": [{\"uprobe\": \"/bin/true:main\", \"name\": \"t\",\n  \"access\": \"w\"}]}",
            ":2: events[0]: ", "\"access\" and \"len\" are for breakpoints");
        BAD("{\n \"events\": [{\"tracepoint\": \"a:b\",\n  \"count\": true, \"period\": 2}]}",
            ":3: events[0].period: ", "a counting event does not sample");
        BAD("{\n \"events\": [{\"software\": \"dummy\",\n  \"access\": \"w\"}]}", ":2: events[0]: ",
            "\"access\" and \"len\" are for breakpoints");
        BAD("{\n \"counters\": {\"interval_ms\": 1}, " EV1 "}", ":2: counters.interval_ms: ", "out of range");
        /* A name goes to every client's hello and to evmonctl status on
         * a terminal, and a member of socket.admin_group may choose it
         * (socket.admin_add): no terminal control in it, C1 included
         * (U+009B is CSI). */
        BAD("{\n \"events\": [{\"software\": \"dummy\",\n  \"name\": \"x\\u001b]0;t\\u0007\"}]}",
            ":3: events[0].name: ", "control characters");
        BAD("{\n \"events\": [{\"software\": \"dummy\",\n  \"name\": \"x\\u009b2J\"}]}",
            ":3: events[0].name: ", "control characters");
        BAD("{\n \"events\": [{\"software\": \"dummy\",\n  \"name\": \"x\\r\"}]}", ":3: events[0].name: ",
            "control characters");
        BAD("{\n \"events\": [{\"software\": \"dummy\",\n  \"name\": \"x\\u007f\"}]}",
            ":3: events[0].name: ", "control characters");
        BAD("{\n \"events\": [{\"software\": \"dummy\", \"count\": true,\n  \"group\": \"g\\u009b2J\"}]}",
            ":3: events[0].group: ", "control characters");
}

static void test_targets_clock(void **state) {
        static const char *const bad_pids[] = { "0", "-1", "2147483648", "4294967297" };

        for (size_t i = 0; i < ELEMENTSOF(bad_pids); i++) {
                _cleanup_(freep) char *text = NULL, *what = NULL;

                assert_true(asprintf(&text, "{\n \"targets\": {\"pids\": [\n   1,\n   %s]},\n " EV1 "}", bad_pids[i]) >= 0);
                assert_true(asprintf(&what, "%s is not a valid process id", bad_pids[i]) >= 0);
                BAD(text, ":4: targets.pids[1]: ", what);
        }
        BAD("{\n \"targets\": {\"pids\": [1.5]},\n " EV1 "}", ":2: targets.pids[0]: ", "expected a process id, got double");
        BAD("{\n \"clock\": \"utc\",\n " EV1 "}", ":2: clock: ",
            "\"utc\" is not one of monotonic, monotonic_raw, boottime, realtime, tai");
        BAD("{\n \"clock\": \"CLOCK_MONOTONIC\",\n " EV1 "}", ":2: clock: ", "is not one of");
        BAD("{\n \"clock\": \"\",\n " EV1 "}", ":2: clock: ", "is not one of");
        /* perf_event_set_clock(): clocks that are not NMI-safe stamp
         * software events only; the kernel refuses the rest. */
        BAD("{\n \"clock\": \"tai\",\n " EV1 "}", ":2: clock: ",
            "\"tai\" is a clock the kernel stamps software events with only (it is not NMI-safe), and events[0] "
            "(sched:sched_process_exec) is a tracepoint: use \"monotonic\" (the default) or \"monotonic_raw\"");
        BAD("{\n \"clock\": \"boottime\",\n \"events\": [{\"software\": \"dummy\"},\n"
            "  {\"breakpoint\": \"0x1000\", \"access\": \"w\"}]}", ":2: clock: ", "and events[1] (breakpoint:0x1000) is a breakpoint");
        BAD("{\n \"clock\": \"realtime\",\n \"events\": [{\"uprobe\": \"/bin/sh:main\", \"name\": \"m\"}]}",
            ":2: clock: ", "is a uprobe");
        {
                _cleanup_(config_freep) struct config *c = parse_ok(
                        "{\"clock\": \"monotonic_raw\", " EV1 "}");

                assert_int_equal(c->clockid, CLOCK_MONOTONIC_RAW);
        }
}

static void test_metrics(void **state) {
        _cleanup_(config_freep) struct config *def = parse_ok("{" EV1 "}");
        _cleanup_(config_freep) struct config *set = parse_ok("{\"metrics\": {\"path\": \"/srv/m/evmon.prom\", \"interval_ms\": 15000}, " EV1 "}");
        _cleanup_(config_freep) struct config *off = parse_ok("{\"metrics\": {\"path\": \"\"}, " EV1 "}");
        _cleanup_(config_freep) struct config *off2 = parse_ok("{\"metrics\": {\"path\": false}, " EV1 "}");

        assert_string_equal(def->metrics_path, "/var/lib/prometheus/node-exporter/evmon.prom");
        assert_int_equal(def->metrics_interval_ms, 5000);
        assert_string_equal(set->metrics_path, "/srv/m/evmon.prom");
        assert_int_equal(set->metrics_interval_ms, 15000);
        assert_null(off->metrics_path);
        assert_int_equal(off->metrics_interval_ms, 5000);
        assert_null(off2->metrics_path);
        BAD("{\n \"metrics\": {\"path\": \"evmon.prom\"},\n " EV1 "}", ":2: metrics.path: ", "must be an absolute file path");
        BAD("{\n \"metrics\": {\"path\": \"/var/lib/\"},\n " EV1 "}", ":2: metrics.path: ", "must be an absolute file path");
        BAD("{\n \"metrics\": {\"path\": true},\n " EV1 "}", ":2: metrics.path: ", "expected a file path string");
        BAD("{\n \"metrics\": {\"interval_ms\": 500},\n " EV1 "}", ":2: metrics.interval_ms: ", "out of range (1000..3600000)");
        BAD("{\n \"metrics\": {\"file\": \"/x\"},\n " EV1 "}", ":2: metrics.file: ", "(known here: path, interval_ms)");
        BAD("{\n \"metrics\": \"/x\",\n " EV1 "}", ":2: metrics: ", "expected object, got string");
}

/* Line numbers stay right where a naive count would drift: comments with
 * braces and quotes, strings with comment markers, keys repeated in many
 * events, a key given twice, block comments over several lines. */
static void test_lines(void **state) {
        static const char head[] =
                "// {\"events\": [ \"quote\n"                       /* 1 */
                "/* } ] \" ' { \n"                                   /* 2 */
                "   \"name\": \"1bad\" */\n"                         /* 3 */
                "{\n"                                                /* 4 */
                "  \"socket\": {\"path\": \"/run/a//b/*c*/.sock\",\n" /* 5 */
                "             \"group\": \"a\\\"{\\\\\"},\n"         /* 6 */
                "  \"events\": [\n"                                  /* 7 */
                "    {\"kprobe\": \"f\", \"name\": \"one\"},\n"      /* 8 */
                "    {\"kprobe\": \"g\",\n"                          /* 9 */
                "     \"name\": \"two\"},\n"                         /* 10 */
                "    {\"kprobe\": \"h\",\n"                          /* 11 */
                "     // \"name\": \"x\",\n"                         /* 12 */
                "     \"name\": ";                                   /* 13 */
        _cleanup_(freep) char *text = NULL;
        _cleanup_(config_freep) struct config *c = NULL;

        assert_true(asprintf(&text, "%s\"3rd\"}\n  ]\n}\n", head) >= 0);
        BAD(text, ":13: events[2].name: ", "must be a name");
        free(text);
        assert_true(asprintf(&text, "%s\"three\",\n     \"fetch\": [\"a=%%di\",\n\n       \"b\"]}\n  ]\n}\n", head) >= 0);
        BAD(text, ":16: events[2].fetch[1]: ", "\"b\" is not NAME=FETCHARG");
        free(text);
        assert_true(asprintf(&text, "%s\"three\",\n     \"filter\": \"common_pid != 0\"}\n  ],\n"
                             "  \"ring\": {\"pages\": 64},\n  \"ring\": {\"pages\": 48}\n}\n", head) >= 0);
        /* json-c keeps the last of a repeated key; so does the line. */
        BAD(text, ":17: ring.pages: ", "48 is not a power of two");
        free(text);
        assert_true(asprintf(&text, "%s\"three\",\n     \"filter\": \"common_pid != 0\"}\n  ]\n}\n", head) >= 0);
        c = parse_ok(text);
        assert_string_equal(c->socket_path, "/run/a//b/*c*/.sock");
        assert_string_equal(c->socket_group, "a\"{\\");
        assert_string_equal(c->events[0].where, FILE_NAME ":8: events[0].kprobe");
        assert_string_equal(c->events[1].where, FILE_NAME ":9: events[1].kprobe");
        assert_string_equal(c->events[2].where, FILE_NAME ":11: events[2].kprobe");
        assert_string_equal(c->events[2].filter_where, FILE_NAME ":14: events[2].filter");
        assert_string_equal(c->events[2].wire_name, "kprobe:three");
}

/* Everything else json-c's tokener accepts: single-quoted strings (which
 * once sent the line scanner into an endless, allocating loop: issue 17),
 * trailing commas, comments between any two tokens, NaN and friends. The
 * scanner must finish on each (an alarm turns a hang into a failure) and
 * keep the lines right; past what it does not know it only loses lines. */
static void test_json_c_extensions(void **state) {
        _cleanup_(config_freep) struct config *c = NULL, *d = NULL, *e = NULL, *f = NULL;

        alarm(10);
        f = parse_ok("{\"targets\": {\"cgroups\": ['/system.slice']}, " EV1 "}");
        assert_null(f->cgroups[1]);
        assert_string_equal(f->cgroups[0], "/system.slice");
        assert_string_equal(f->cgroups_where[0], FILE_NAME ":1: targets.cgroups[0]");
        BAD("{\n 'targets':\n {'cgroups': [\n'/x',\n 7]}, " EV1 "}", ":5: targets.cgroups[1]: ", "expected a cgroup path string");
        c = parse_ok("{\n"
                     "  'ring': {'pages': 8,},\n"
                     "  \"events\": [\n"
                     "    {'tracepoint': 'sched:a\"b\\\\'},\n"
                     "    {\"tracepoint\" /* c */ : /* d */ \"x:y\" /* e */ , },\n"
                     "  ],\n"
                     "}\n");
        assert_int_equal(c->ring_pages, 8);
        assert_int_equal(c->n_events, 2);
        assert_string_equal(c->events[0].where, FILE_NAME ":4: events[0].tracepoint");
        assert_string_equal(c->events[1].where, FILE_NAME ":5: events[1].tracepoint");
        /* A string over several lines counts them. */
        d = parse_ok("{\"socket\": {\"group\": 'a\nb'},\n\n" EV1 "}");
        assert_string_equal(d->events[0].where, FILE_NAME ":4: events[0].tracepoint");
        BAD("{\"ring\": {\"pages\": NaN},\n" EV1 "}", ":1: ring.pages: ", "");
        BAD("{\"ring\": {\"pages\": -Infinity},\n" EV1 "}", ":1: ring.pages: ", "");
        BAD("{\"ring\": {\"pages\": TRUE},\n" EV1 "}", ":1: ring.pages: ", "");
        /* Unterminated strings of either kind and nesting beyond json-c's
         * depth are json-c's errors. */
        BAD("{\"events\": ['a:b\n", ":2: invalid JSON: ", "");
        BAD("{\"events\": [\"a:b\n", ":2: invalid JSON: ", "");
        {
                char deep[4096] = "{\"x\": ";
                for (int i = 0; i < 1000; i++)
                        strcat(deep, "[");
                BAD(deep, ":1: invalid JSON: ", "");
        }
        /* A comment right after the root object is still json-c's. */
        e = parse_ok("{" EV1 "}/* x */\n");
        assert_int_equal(e->n_events, 1);
        alarm(0);
}

/* config_load(): the file's name in messages, and files that are no config. */
static void test_load(void **state) {
        char dir[] = "/tmp/evmon-test-config-XXXXXX", path[128];
        struct config *c = NULL;
        _cleanup_(freep) char *error = NULL;
        FILE *f;

        assert_non_null(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/missing.json", dir);
        assert_int_equal(config_load(path, &c, &error), -ENOENT);
        assert_null(c);
        assert_non_null(error);
        assert_true(strncmp(error, path, strlen(path)) == 0);
        assert_non_null(strstr(error, "cannot open"));
        free(error);
        error = NULL;

        snprintf(path, sizeof(path), "%s/bad.json", dir);
        f = fopen(path, "we");
        assert_non_null(f);
        fputs("{\n  \"events\": [\n    {\"tracepoint\": \"sched\"}\n  ]\n}\n", f);
        fclose(f);
        assert_int_equal(config_load(path, &c, &error), -EINVAL);
        assert_null(c);
        {
                _cleanup_(freep) char *want = NULL;
                assert_true(asprintf(&want, "%s:3: events[0].tracepoint: \"sched\" is not SYSTEM:NAME", path) >= 0);
                assert_true(strncmp(error, want, strlen(want)) == 0);
        }
        free(error);
        error = NULL;

        f = fopen(path, "we");
        assert_non_null(f);
        {
                static const char nul[] = "{\"events\": [{\"tracepoint\": \"a:b\"}]}\0\n";
                assert_int_equal(fwrite(nul, 1, sizeof(nul) - 1, f), sizeof(nul) - 1);
        }
        fclose(f);
        assert_int_equal(config_load(path, &c, &error), -EINVAL);
        assert_null(c);
        assert_true(strncmp(error, path, strlen(path)) == 0);
        assert_non_null(strstr(error, "NUL"));
        free(error);
        error = NULL;

        /* A directory opens but does not read. */
        assert_int_equal(config_load(dir, &c, &error), -EISDIR);
        assert_null(c);
        assert_true(strncmp(error, dir, strlen(dir)) == 0);
        assert_non_null(strstr(error, "failed to read"));

        unlink(path);
        rmdir(dir);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_builtin),
                cmocka_unit_test(test_shipped),
                cmocka_unit_test(test_full),
                cmocka_unit_test(test_values),
                cmocka_unit_test(test_comments),
                cmocka_unit_test(test_invalid_json),
                cmocka_unit_test(test_trailing),
                cmocka_unit_test(test_root),
                cmocka_unit_test(test_unknown_keys),
                cmocka_unit_test(test_admin_add),
                cmocka_unit_test(test_types),
                cmocka_unit_test(test_ring),
                cmocka_unit_test(test_socket),
                cmocka_unit_test(test_events),
                cmocka_unit_test(test_perf_events),
                cmocka_unit_test(test_trace_perf_options),
                cmocka_unit_test(test_callchain_dwarf),
                cmocka_unit_test(test_targets_clock),
                cmocka_unit_test(test_metrics),
                cmocka_unit_test(test_lines),
                cmocka_unit_test(test_json_c_extensions),
                cmocka_unit_test(test_load),
                cmocka_unit_test(test_context),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
