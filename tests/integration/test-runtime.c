/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Runtime control over the socket (issue 12): an admin adds, removes,
 * disables, enables and filters events while another client watches;
 * every count is exact (the rings are ample for these few calls, and a
 * loss would be reported and fail the count); a non-admin is refused and
 * keeps its connection; bad requests get the reason (the kernel's words
 * for a filter, the unknown key and the known ones) and change nothing; every change reaches the watcher as a
 * config line and is logged with the requester's uid and pid; a reload
 * and a restart serve the file again; a uprobe at a FIFO is refused at
 * once. */

#include <errno.h>
#include <limits.h>
#include <grp.h>
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

#define GETPGID "syscalls:sys_enter_getpgid"
#define GETSID "syscalls:sys_enter_getsid"
#define ARG_PGID 77104
#define ARG_SID 77105
#define ARG_OTHER 77106
#define N_CALLS 3000
#define N_LOAD 100000
#define NOBODY 65534

static struct itest_daemon daemon_ = { .pid = -1 };
static struct itest_client *watcher, *admin;

static int setup(void **state) {
        struct itest_daemon_opts opts = { .log_to_file = true };
        char config[512];

        snprintf(config, sizeof(config),
                 "{\n"
                 "  \"socket\": {\"mode\": \"0666\"},\n"
                 /* Exact delivered + lost: with context on, a ring's loss
                  * counts the process table's records too (README). */
                 "  \"context\": false,\n"
                 /* Room for test_add_under_load's lines while the test
                  * waits for the add's answer before it reads them. */
                 "  \"clients\": {\"queue_kib\": 65536},\n"
                 "  \"events\": [{\"tracepoint\": \"" GETPGID "\", \"filter\": \"pid == %d || pid == %d\"}]\n"
                 "}\n", ARG_PGID, ARG_OTHER);
        if (itest_daemon_start_opts(&daemon_, config, &opts) < 0 || chmod(daemon_.dir, 0755) < 0)
                return -1;
        watcher = calloc(1, sizeof(*watcher));
        admin = calloc(1, sizeof(*admin));
        if (!watcher || !admin || itest_client_connect(watcher, daemon_.socket) < 0 ||
            itest_client_connect(admin, daemon_.socket) < 0)
                return -1;
        json_object_put(itest_client_expect(watcher, "hello", 5000));
        json_object_put(itest_client_expect(admin, "hello", 5000));
        /* The admin wants answers, not events. */
        if (itest_client_send(admin, "{\"type\":\"subscribe\",\"events\":[]}\n") < 0)
                return -1;
        json_object_put(itest_client_expect(admin, "subscribed", 5000));
        return 0;
}

static int teardown(void **state) {
        if (watcher)
                itest_client_close(watcher);
        if (admin)
                itest_client_close(admin);
        free(watcher);
        free(admin);
        itest_daemon_cleanup(&daemon_);
        return 0;
}

/* Sends LINE as the admin; returns the answer (result or error), after
 * skipping what every client gets whatever it subscribed to: config lines,
 * and lost lines (a ring's loss names no event), which a loss in an
 * earlier test can bring late. */
static bool is_answer(json_object *o) {
        const char *type = itest_str(o, "type");

        return strcmp(type, "result") == 0 || strcmp(type, "error") == 0;
}

static json_object *control(const char *line) {
        json_object *o;

        assert_int_equal(itest_client_send(admin, line), 0);
        while ((o = itest_client_next(admin, 10000)) && !is_answer(o))
                json_object_put(o);
        assert_non_null(o);
        return o;
}

static void expect_result(const char *line, const char *request) {
        json_object *o = control(line);

        if (strcmp(itest_str(o, "type"), "result") != 0)
                fail_msg("%s got %s", line, json_object_to_json_string(o));
        assert_string_equal(itest_str(o, "request"), request);
        json_object_put(o);
}

/* Whether EVENT is in config line O's "events". */
static bool config_has(json_object *o, const char *event) {
        json_object *a;

        assert_true(json_object_object_get_ex(o, "events", &a));
        for (size_t i = 0; i < json_object_array_length(a); i++)
                if (strcmp(json_object_get_string(json_object_array_get_idx(a, i)), event) == 0)
                        return true;
        return false;
}

/* expect_result(), the result naming EVENT, then the watcher (another
 * client, idle meanwhile) is told with a config line, whose events have
 * EVENT or, when !SERVED, not. */
static void expect_change(const char *line, const char *request, const char *event, bool served) {
        json_object *o = control(line);

        if (strcmp(itest_str(o, "type"), "result") != 0)
                fail_msg("%s got %s", line, json_object_to_json_string(o));
        assert_string_equal(itest_str(o, "request"), request);
        /* The events it touched: a removed one too (its list was empty). */
        if (!config_has(o, event))
                fail_msg("%s: the result does not name %s: %s", line, event, json_object_to_json_string(o));
        json_object_put(o);
        o = itest_client_expect(watcher, "config", 5000);
        if (!o)
                fail_msg("%s: the watching client got no config line", line);
        if (config_has(o, event) != served)
                fail_msg("%s: the watcher's config line %s %s", line, served ? "lacks" : "still has", event);
        json_object_put(o);
}

static void expect_error(const char *line, const char *want) {
        json_object *o = control(line);

        if (strcmp(itest_str(o, "type"), "error") != 0 || !strstr(itest_str(o, "error"), want))
                fail_msg("%s: wanted an error with \"%s\", got %s", line, want, json_object_to_json_string(o));
        json_object_put(o);
}

/* Config lines the watcher got in the last count_calls(). */
static int64_t last_configs;

/* N calls of NR(ARG) as the watcher sees them: the count, exact. */
static int64_t count_calls(long nr, long arg, const char *event) {
        struct itest_tally t = {};
        pid_t pid = itest_tally_calls(watcher, nr, arg, N_CALLS, &t);
        int64_t got = itest_tally_get(&t, pid, event);

        assert_int_equal(t.lost, 0);
        assert_int_equal(t.dropped, 0);
        last_configs = t.configs;
        itest_tally_done(&t);
        return got;
}

/* The served events, as status says (asked by the admin, so the
 * watcher's own lines stay for the test to read). */
static char *served(void) {
        json_object *o, *a;
        char *s = calloc(1, 1024);

        assert_int_equal(itest_client_send(admin, "{\"type\":\"status\"}\n"), 0);
        o = itest_client_expect(admin, "status", 5000);
        assert_non_null(o);
        assert_true(json_object_object_get_ex(o, "events", &a));
        for (size_t i = 0; i < json_object_array_length(a); i++) {
                json_object *e = json_object_array_get_idx(a, i), *v;

                strcat(s, itest_str(e, "event"));
                if (json_object_object_get_ex(e, "runtime", &v))
                        strcat(s, "(runtime)");
                if (json_object_object_get_ex(e, "enabled", &v))
                        strcat(s, "(disabled)");
                strcat(s, " ");
        }
        json_object_put(o);
        return s;
}

struct schema_order {
        const char *event;
        int64_t schemas, events, before;        /* before: events ahead of the first schema */
};

static void schema_order_line(json_object *o, void *userdata) {
        struct schema_order *so = userdata;
        const char *type = itest_str(o, "type");

        if (strcmp(itest_str(o, "event"), so->event) != 0)
                return;
        if (strcmp(type, "schema") == 0)
                so->schemas++;
        else if (strcmp(type, "event") == 0) {
                so->events++;
                so->before += so->schemas == 0;
        }
}

/* N calls of NR(ARG) by the watcher, the first since EVENT was added: its
 * schema line comes once, before the first of its N lines. */
static void expect_schema_first(long nr, long arg, const char *event) {
        struct schema_order so = { .event = event };
        int gate;
        pid_t pid = itest_spawn_calls(nr, arg, N_CALLS, &gate);
        size_t len;
        char *text;

        itest_release(gate);
        text = itest_client_slurp(watcher, 500, 30000, &len);
        itest_reap(pid);
        itest_for_each_line(text, len, schema_order_line, &so);
        free(text);
        assert_int_equal(so.events, N_CALLS);
        assert_int_equal(so.schemas, 1);
        assert_int_equal(so.before, 0);
}

static void test_add_and_remove(void **state) {
        char line[256];

        assert_int_equal(count_calls(SYS_getsid, ARG_SID, GETSID), 0);
        snprintf(line, sizeof(line), "{\"type\":\"add\",\"event\":{\"tracepoint\":\"" GETSID "\",\"filter\":\"pid == %d\"}}\n",
                 ARG_SID);
        expect_change(line, "add", GETSID, true);
        /* The watcher was told, and the new event serves at once, beside
         * the old one, exactly, its schema line first. */
        expect_schema_first(SYS_getsid, ARG_SID, GETSID);
        assert_int_equal(count_calls(SYS_getsid, ARG_SID, GETSID), N_CALLS);
        assert_int_equal(count_calls(SYS_getpgid, ARG_PGID, GETPGID), N_CALLS);
        expect_error(line, "is served already");
        expect_change("{\"type\":\"remove\",\"event\":\"" GETSID "\"}\n", "remove", GETSID, false);
        assert_int_equal(count_calls(SYS_getsid, ARG_SID, GETSID), 0);
        assert_int_equal(count_calls(SYS_getpgid, ARG_PGID, GETPGID), N_CALLS);
}

/* An event added while the running ones are under load costs them no
 * gap: every one of N_LOAD getpgid calls made across the add arrives or is
 * reported lost by the kernel (a full-rate writer can outrun the rings
 * while evmond opens the new event on every CPU), exactly, as test-reload
 * counts a reload. */
static void test_add_under_load(void **state) {
        struct itest_tally t = {};
        char line[256], *text;
        size_t len;
        int gate;
        pid_t pid = itest_spawn_calls(SYS_getpgid, ARG_PGID, N_LOAD, &gate);

        snprintf(line, sizeof(line), "{\"type\":\"add\",\"event\":{\"tracepoint\":\"" GETSID "\",\"filter\":\"pid == %d\"}}\n",
                 ARG_SID);
        itest_release(gate);
        usleep(5000);   /* the calls are flowing */
        expect_result(line, "add");
        itest_reap(pid);
        text = itest_client_slurp(watcher, 500, 60000, &len);
        itest_for_each_line(text, len, itest_tally_line, &t);
        free(text);
        fprintf(stderr, "add under load: %" PRId64 " of %d getpgid, %" PRId64 " lost, %" PRId64 " dropped\n",
                itest_tally_get(&t, pid, GETPGID), N_LOAD, t.lost, t.dropped);
        assert_int_equal(t.dropped, 0);
        assert_int_equal(itest_tally_get(&t, pid, GETPGID) + t.lost, N_LOAD);
        assert_int_equal(t.configs, 1);         /* the watcher was told */
        itest_tally_done(&t);
        expect_change("{\"type\":\"remove\",\"event\":\"" GETSID "\"}\n", "remove", GETSID, false);
        assert_int_equal(count_calls(SYS_getsid, ARG_SID, GETSID), 0);
}

/* The same for a filter set and a removal of another event while the
 * running one is under load: its count stays exact across both, every
 * call delivered or reported lost. (While evmond closed the removed
 * event's perf fds in its loop, waiting out the kernel's RCU grace
 * period, the pair lost 2-50 % of the burst, all reported; with the
 * close on the async worker it lost none in 5 of 5 runs, and 1 of 6 under
 * ASan on a loaded host, as the add did then: losses stay counted, not
 * asserted away.) */
static void test_filter_remove_under_load(void **state) {
        struct itest_tally t = {};
        char line[256], *text;
        size_t len;
        int gate;
        pid_t pid;

        snprintf(line, sizeof(line), "{\"type\":\"add\",\"event\":{\"tracepoint\":\"" GETSID "\",\"filter\":\"pid == %d\"}}\n",
                 ARG_SID);
        expect_change(line, "add", GETSID, true);
        pid = itest_spawn_calls(SYS_getpgid, ARG_PGID, N_LOAD, &gate);
        itest_release(gate);
        usleep(5000);   /* the calls are flowing */
        snprintf(line, sizeof(line), "{\"type\":\"filter\",\"event\":\"" GETSID "\",\"filter\":\"pid == %d\"}\n",
                 ARG_OTHER);
        expect_result(line, "filter");
        expect_result("{\"type\":\"remove\",\"event\":\"" GETSID "\"}\n", "remove");
        itest_reap(pid);
        /* Quiet for 2 s: lines came more than 500 ms after the answer
         * once (the rest, with the next test's). */
        text = itest_client_slurp(watcher, 2000, 60000, &len);
        itest_for_each_line(text, len, itest_tally_line, &t);
        free(text);
        fprintf(stderr, "filter and remove under load: %" PRId64 " of %d getpgid, %" PRId64 " lost, %" PRId64 " dropped\n",
                itest_tally_get(&t, pid, GETPGID), N_LOAD, t.lost, t.dropped);
        assert_int_equal(t.dropped, 0);
        assert_int_equal(itest_tally_get(&t, pid, GETPGID) + t.lost, N_LOAD);
        assert_int_equal(t.configs, 2);
        itest_tally_done(&t);
        assert_int_equal(count_calls(SYS_getsid, ARG_SID, GETSID), 0);
}

static void test_disable_enable(void **state) {
        char line[256];

        expect_change("{\"type\":\"disable\",\"events\":[\"syscalls:*\"]}\n", "disable", GETPGID, true);
        assert_int_equal(count_calls(SYS_getpgid, ARG_PGID, GETPGID), 0);
        {
                char *s = served();
                assert_non_null(strstr(s, GETPGID "(disabled)"));
                free(s);
        }
        /* A filter change opens the event anew: still disabled (it came
         * back enabled). */
        snprintf(line, sizeof(line), "{\"type\":\"filter\",\"event\":\"" GETPGID "\",\"filter\":\"pid == %d\"}\n",
                 ARG_PGID);
        expect_change(line, "filter", GETPGID, true);
        assert_int_equal(count_calls(SYS_getpgid, ARG_PGID, GETPGID), 0);
        {
                char *s = served();
                assert_non_null(strstr(s, GETPGID "(runtime)(disabled)"));
                free(s);
        }
        expect_change("{\"type\":\"enable\"}\n", "enable", GETPGID, true);
        assert_int_equal(count_calls(SYS_getpgid, ARG_PGID, GETPGID), N_CALLS);
        expect_error("{\"type\":\"disable\",\"events\":[\"nosuch:*\"]}\n", "no event \"nosuch:*\"");
        assert_int_equal(count_calls(SYS_getpgid, ARG_PGID, GETPGID), N_CALLS);
        assert_int_equal(last_configs, 0);      /* a refused request tells no one */
}

static void test_filter(void **state) {
        char line[256];

        snprintf(line, sizeof(line), "{\"type\":\"filter\",\"event\":\"" GETPGID "\",\"filter\":\"pid == %d\"}\n", ARG_OTHER);
        expect_change(line, "filter", GETPGID, true);
        assert_int_equal(count_calls(SYS_getpgid, ARG_PGID, GETPGID), 0);
        assert_int_equal(count_calls(SYS_getpgid, ARG_OTHER, GETPGID), N_CALLS);
        snprintf(line, sizeof(line), "{\"type\":\"filter\",\"event\":\"" GETPGID "\",\"filter\":\"pid == %d || pid == %d\"}\n",
                 ARG_PGID, ARG_OTHER);
        expect_change(line, "filter", GETPGID, true);
        assert_int_equal(count_calls(SYS_getpgid, ARG_PGID, GETPGID), N_CALLS);

        /* "" clears: on getsid, which shells and builds hardly call (an
         * unfiltered getpgid streams all the time on a busy host). */
        snprintf(line, sizeof(line), "{\"type\":\"add\",\"event\":{\"tracepoint\":\"" GETSID "\",\"filter\":\"pid == %d\"}}\n",
                 ARG_SID);
        expect_change(line, "add", GETSID, true);
        {
                char *s = served();
                assert_non_null(strstr(s, GETSID "(runtime)"));
                free(s);
        }
        assert_int_equal(count_calls(SYS_getsid, ARG_OTHER, GETSID), 0);
        expect_change("{\"type\":\"filter\",\"event\":\"" GETSID "\",\"filter\":\"\"}\n", "filter", GETSID, true);
        assert_int_equal(count_calls(SYS_getsid, ARG_OTHER, GETSID), N_CALLS);
        expect_change("{\"type\":\"remove\",\"event\":\"" GETSID "\"}\n", "remove", GETSID, false);
}

/* EVENT's count in status (asked by the admin). */
static int64_t status_count(const char *event) {
        json_object *o, *a;
        int64_t n = -1;

        assert_int_equal(itest_client_send(admin, "{\"type\":\"status\"}\n"), 0);
        o = itest_client_expect(admin, "status", 5000);
        assert_non_null(o);
        assert_true(json_object_object_get_ex(o, "events", &a));
        for (size_t i = 0; i < json_object_array_length(a); i++)
                if (strcmp(itest_str(json_object_array_get_idx(a, i), "event"), event) == 0)
                        n = itest_int(json_object_array_get_idx(a, i), "count");
        json_object_put(o);
        assert_true(n >= 0);
        return n;
}

/* A filter change opens the event anew; its count in status (and so
 * evmon_events_total, a Prometheus counter) goes on from where it was: it
 * started again from 0, which reads as a restart of evmond. */
static void test_filter_keeps_count(void **state) {
        int64_t c0, c1, c2, c3;
        char line[256];

        c0 = status_count(GETPGID);
        assert_int_equal(count_calls(SYS_getpgid, ARG_PGID, GETPGID), N_CALLS);
        c1 = status_count(GETPGID);
        assert_true(c1 >= c0 + N_CALLS);
        /* The same pids in another order: another filter, opened anew. */
        snprintf(line, sizeof(line), "{\"type\":\"filter\",\"event\":\"" GETPGID "\",\"filter\":\"pid == %d || pid == %d\"}\n",
                 ARG_OTHER, ARG_PGID);
        expect_change(line, "filter", GETPGID, true);
        c2 = status_count(GETPGID);
        fprintf(stderr, "count before the filter change %" PRId64 ", after %" PRId64 "\n", c1, c2);
        if (c2 < c1)
                fail_msg("the count of %s went back from %" PRId64 " to %" PRId64 " over a filter change", GETPGID, c1, c2);
        assert_int_equal(count_calls(SYS_getpgid, ARG_PGID, GETPGID), N_CALLS);
        c3 = status_count(GETPGID);
        assert_true(c3 >= c2 + N_CALLS);
        /* And back, for the tests after this one. */
        snprintf(line, sizeof(line), "{\"type\":\"filter\",\"event\":\"" GETPGID "\",\"filter\":\"pid == %d || pid == %d\"}\n",
                 ARG_PGID, ARG_OTHER);
        expect_change(line, "filter", GETPGID, true);
        assert_true(status_count(GETPGID) >= c3);
}

static void test_bad_requests_change_nothing(void **state) {
        char *before = served(), *after;

        expect_error("{\"type\":\"add\",\"event\":{\"nope\":\"x\"}}\n", "needs one of");
        expect_error("{\"type\":\"add\",\"event\":{\"tracepoint\":\"sched:no_such_event\"}}\n", "no tracepoint");
        /* The kernel's own words, from the filter file's parse_error. */
        expect_error("{\"type\":\"add\",\"event\":{\"tracepoint\":\"" GETSID "\",\"filter\":\"pid ==== 1\"}}\n",
                     "the kernel rejected the filter \"pid ==== 1\" of " GETSID ": Invalid value");
        expect_error("{\"type\":\"filter\",\"event\":\"" GETPGID "\",\"filter\":\"nosuchfield == 1\"}\n",
                     "the kernel rejected the filter \"nosuchfield == 1\" of " GETPGID ": Field not found");
        expect_error("{\"type\":\"remove\",\"event\":\"sched:nope\"}\n", "no event \"sched:nope\"");
        expect_error("{\"type\":\"remove\",\"event\":\"" GETPGID "\"}\n", "the only event served");
        after = served();
        assert_string_equal(before, after);
        free(before);
        free(after);
        /* The filter stayed as it was, and no client was told of a change. */
        assert_int_equal(count_calls(SYS_getpgid, ARG_PGID, GETPGID), N_CALLS);
        assert_int_equal(last_configs, 0);
}

/* Every request type refuses a key it does not take, naming it and the
 * keys it takes, and does nothing: status and reload took any key (a
 * reload with a misspelt key reloaded). */
static void test_unknown_keys(void **state) {
        static const struct {
                const char *line, *want;
        } reqs[] = {
                { "{\"type\":\"status\",\"verbose\":true}\n",
                  "status: unknown key \"verbose\" (status takes no key but \"type\")" },
                { "{\"type\":\"reload\",\"config\":\"/nonexistent.json\"}\n",
                  "reload: unknown key \"config\" (reload takes no key but \"type\")" },
                { "{\"type\":\"subscribe\",\"event\":[\"" GETPGID "\"]}\n",
                  "subscribe: unknown key \"event\" (known: events, pids, cgroups, comms, containers, namespaces, format, self, client, filter, stack_bytes)" },
                { "{\"type\":\"add\",\"event\":{\"tracepoint\":\"" GETSID "\"},\"enabled\":false}\n",
                  "add: unknown key \"enabled\" (known: event)" },
                { "{\"type\":\"remove\",\"event\":\"" GETPGID "\",\"force\":true}\n",
                  "remove: unknown key \"force\" (known: event)" },
                { "{\"type\":\"disable\",\"event\":\"" GETPGID "\"}\n", "disable: unknown key \"event\" (known: events)" },
                { "{\"type\":\"enable\",\"event\":\"" GETPGID "\"}\n", "enable: unknown key \"event\" (known: events)" },
                { "{\"type\":\"filter\",\"event\":\"" GETPGID "\",\"filter\":\"\",\"append\":true}\n",
                  "filter: unknown key \"append\" (known: event, filter)" },
        };
        char *before = served(), *after;

        for (size_t i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++)
                expect_error(reqs[i].line, reqs[i].want);
        after = served();
        assert_string_equal(before, after);
        free(before);
        free(after);
        /* No reload, no change: the watcher got no config line, and the
         * filter (disable, filter "") stayed. */
        assert_int_equal(count_calls(SYS_getpgid, ARG_PGID, GETPGID), N_CALLS);
        assert_int_equal(last_configs, 0);
}

/* As uid 65534: each request refused with a reason, the connection
 * still answering. Exit 0 when so. */
static int refused_as_nobody(void) {
        static const char *const reqs[] = {
                "{\"type\":\"add\",\"event\":{\"tracepoint\":\"" GETSID "\"}}\n",
                "{\"type\":\"remove\",\"event\":\"" GETPGID "\"}\n",
                "{\"type\":\"disable\"}\n",
                "{\"type\":\"enable\"}\n",
                "{\"type\":\"filter\",\"event\":\"" GETPGID "\",\"filter\":\"\"}\n",
                NULL,
        };
        struct itest_client *c = calloc(1, sizeof(*c));
        json_object *o;
        int k = 0;

        if (!c || setgroups(0, NULL) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 || setresuid(NOBODY, NOBODY, NOBODY) < 0)
                return 100;
        if (itest_client_connect(c, daemon_.socket) < 0)
                return 101;
        json_object_put(itest_client_expect(c, "hello", 5000));
        /* Answers only, no events in between. */
        if (itest_client_send(c, "{\"type\":\"subscribe\",\"events\":[]}\n") < 0 ||
            !(o = itest_client_expect(c, "subscribed", 5000)))
                return 121;
        json_object_put(o);
        for (const char *const *r = reqs; *r; r++, k++) {
                if (itest_client_send(c, *r) < 0 || !(o = itest_client_next(c, 5000)))
                        return 102 + k;
                if (strcmp(itest_str(o, "type"), "error") != 0 || !strstr(itest_str(o, "error"), "permission denied"))
                        return 110 + k;
                json_object_put(o);
        }
        if (itest_client_send(c, "{\"type\":\"status\"}\n") < 0 || !(o = itest_client_expect(c, "status", 5000)))
                return 120;
        json_object_put(o);
        return 0;
}

static void test_non_admin_refused(void **state) {
        int status;
        pid_t pid = fork();

        assert_true(pid >= 0);
        if (pid == 0)
                _exit(refused_as_nobody());
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        /* Nothing changed. */
        assert_int_equal(count_calls(SYS_getpgid, ARG_PGID, GETPGID), N_CALLS);
        assert_int_equal(last_configs, 0);
}

static void test_reload_serves_the_file(void **state) {
        char line[256], *log, want[64];
        json_object *o;

        snprintf(line, sizeof(line), "{\"type\":\"add\",\"event\":{\"tracepoint\":\"" GETSID "\",\"filter\":\"pid == %d\"}}\n",
                 ARG_SID);
        expect_change(line, "add", GETSID, true);
        expect_change("{\"type\":\"disable\",\"events\":[\"" GETPGID "\"]}\n", "disable", GETPGID, true);
        assert_int_equal(itest_client_send(admin, "{\"type\":\"reload\"}\n"), 0);
        o = itest_client_expect(admin, "reload", 10000);
        assert_non_null(o);
        json_object_put(o);
        assert_int_equal(count_calls(SYS_getsid, ARG_SID, GETSID), 0);
        assert_int_equal(count_calls(SYS_getpgid, ARG_PGID, GETPGID), N_CALLS);
        /* Each change was logged with who asked. */
        log = NULL;
        {
                FILE *f = fopen(daemon_.log, "re");
                size_t n = 0;

                assert_non_null(f);
                assert_true(getdelim(&log, &n, 0, f) > 0);
                fclose(f);
        }
        {
                static const char *const whats[] = {
                        "add " GETSID, "remove " GETSID, "filter " GETPGID, "filter " GETSID, "Disabled", "Enabled",
                };

                for (size_t i = 0; i < sizeof(whats) / sizeof(*whats); i++) {
                        snprintf(want, sizeof(want), "%s by uid 0 (pid %d)", whats[i], (int) getpid());
                        if (!strstr(log, want))
                                fail_msg("the log lacks \"%s\":\n%s", want, log);
                }
        }
        /* And each refusal of the non-admin, with its uid. */
        for (const char *const *r = (const char *const[]) { "add", "remove", "disable", "enable", "filter", NULL }; *r; r++) {
                snprintf(want, sizeof(want), "Refused %s to client ", *r);
                if (!strstr(log, want) || !strstr(strstr(log, want), "uid 65534"))
                        fail_msg("the log lacks \"%s... uid 65534\":\n%s", want, log);
        }
        free(log);
}

static char *read_all(const char *path) {
        char *text = NULL;
        size_t n = 0;
        FILE *f = fopen(path, "re");

        assert_non_null(f);
        assert_true(getdelim(&text, &n, 0, f) >= 0);
        fclose(f);
        return text;
}

/* A restart serves the file: a runtime add is not written to it, and the
 * evmond started anew on it serves only what the file says. Runs last:
 * it replaces the daemon and both clients. */
static void test_restart_serves_the_file(void **state) {
        struct itest_daemon_opts opts = { .log_to_file = true };
        char line[256], *before, *after, *s;
        json_object *o;

        before = read_all(daemon_.config);
        snprintf(line, sizeof(line), "{\"type\":\"add\",\"event\":{\"tracepoint\":\"" GETSID "\",\"filter\":\"pid == %d\"}}\n",
                 ARG_SID);
        expect_change(line, "add", GETSID, true);
        assert_int_equal(count_calls(SYS_getsid, ARG_SID, GETSID), N_CALLS);
        after = read_all(daemon_.config);
        assert_string_equal(before, after);     /* nothing written */
        free(after);

        itest_client_close(watcher);
        itest_client_close(admin);
        assert_int_equal(itest_daemon_stop(&daemon_), 0);
        itest_daemon_cleanup(&daemon_);
        assert_int_equal(itest_daemon_start_opts(&daemon_, before, &opts), 0);
        free(before);
        assert_int_equal(itest_client_connect(watcher, daemon_.socket), 0);
        assert_int_equal(itest_client_connect(admin, daemon_.socket), 0);
        o = itest_client_expect(watcher, "hello", 5000);
        assert_non_null(o);
        assert_false(config_has(o, GETSID));
        assert_true(config_has(o, GETPGID));
        json_object_put(o);
        json_object_put(itest_client_expect(admin, "hello", 5000));
        assert_int_equal(itest_client_send(admin, "{\"type\":\"subscribe\",\"events\":[]}\n"), 0);
        json_object_put(itest_client_expect(admin, "subscribed", 5000));
        s = served();
        assert_string_equal(s, GETPGID " ");    /* neither runtime nor disabled */
        free(s);
        assert_int_equal(count_calls(SYS_getsid, ARG_SID, GETSID), 0);
        assert_int_equal(count_calls(SYS_getpgid, ARG_PGID, GETPGID), N_CALLS);
}

/* Lines of uprobe_events of GROUP with NAME ("p:GROUP/NAME ..."). */
static int probe_lines(const char *group, const char *name) {
        char want[128], *line = NULL;
        size_t n = 0;
        int count = 0;
        FILE *f = fopen("/sys/kernel/tracing/uprobe_events", "re");

        if (!f)
                f = fopen("/sys/kernel/debug/tracing/uprobe_events", "re");
        if (!f)
                return -1;
        snprintf(want, sizeof(want), ":%s/%s ", group, name);
        while (getline(&line, &n, f) > 0)
                count += strstr(line, want) != NULL;
        free(line);
        fclose(f);
        return count;
}

/* A uprobe with fetch-args (made through tracefs, in evmond's group) is
 * added while the watcher is served, and its removal leaves no probe. */
static void test_uprobe_add_remove(void **state) {
        char target[PATH_MAX], line[PATH_MAX + 256], group[64];
        json_object *o;

        itest_build_path("tests/integration/evmon-probe-target", target, sizeof(target));
        assert_int_equal(itest_client_send(admin, "{\"type\":\"status\"}\n"), 0);
        o = itest_client_expect(admin, "status", 5000);
        assert_non_null(o);
        snprintf(group, sizeof(group), "%s", itest_str(o, "probe_group"));
        json_object_put(o);
        if (probe_lines(group, "rtcall") < 0)
                skip();         /* no uprobe_events here: the VM suite has them */
        snprintf(line, sizeof(line), "{\"type\":\"add\",\"event\":{\"uprobe\":\"%s:evmon_probe_target\",\"name\":\"rtcall\","
                 "\"fetch\":[\"n=%%si:s64\"]}}\n", target);
        expect_change(line, "add", "uprobe:rtcall", true);
        assert_int_equal(probe_lines(group, "rtcall"), 1);
        /* The other events lost nothing meanwhile. */
        assert_int_equal(count_calls(SYS_getpgid, ARG_PGID, GETPGID), N_CALLS);
        expect_change("{\"type\":\"remove\",\"event\":\"uprobe:rtcall\"}\n", "remove", "uprobe:rtcall", false);
        /* evmond's worker removes it after the answer, once the last
         * perf fd closed (README: removing an event): soon, not at once. */
        for (int i = 0; i < 500 && probe_lines(group, "rtcall") > 0; i++)
                usleep(10000);
        assert_int_equal(probe_lines(group, "rtcall"), 0);
        /* A missing symbol: the kernel's or the ELF reader's reason, and nothing made. */
        snprintf(line, sizeof(line), "{\"type\":\"add\",\"event\":{\"uprobe\":\"%s:no_such_symbol\",\"name\":\"rtbad\","
                 "\"fetch\":[\"n=%%si:s64\"]}}\n", target);
        expect_error(line, "no_such_symbol");
        assert_int_equal(probe_lines(group, "rtbad"), 0);
}

/* Issue 26 hole 8: an admin "add" of a uprobe whose path is a FIFO is an
 * error naming it, at once (dd1d0cc blocked the loop in open() until a
 * writer came: no answer in control()'s 10 s), whether the target names a
 * symbol or a file offset; a "status" is answered right after. */
static void test_uprobe_add_fifo(void **state) {
        char fifo[128], line[512];
        json_object *o;

        snprintf(fifo, sizeof(fifo), "%s/prog", daemon_.dir);
        assert_int_equal(mkfifo(fifo, 0644), 0);
        snprintf(line, sizeof(line), "{\"type\":\"add\",\"event\":{\"uprobe\":\"%s:evmon_probe_target\",\"name\":\"rtfifo\","
                 "\"fetch\":[\"n=%%si:s64\"]}}\n", fifo);
        expect_error(line, "is a FIFO, not a regular file");
        snprintf(line, sizeof(line), "{\"type\":\"add\",\"event\":{\"uprobe\":\"%s:evmon_probe_target\",\"name\":\"rtfifo\"}}\n",
                 fifo);
        expect_error(line, "is a FIFO, not a regular file");
        snprintf(line, sizeof(line), "{\"type\":\"add\",\"event\":{\"uprobe\":\"%s:0x1000\",\"name\":\"rtfifo\"}}\n", fifo);
        expect_error(line, "is a FIFO, not a regular file");
        assert_int_equal(itest_client_send(admin, "{\"type\":\"status\"}\n"), 0);
        o = itest_client_expect(admin, "status", 1000);
        assert_non_null(o);
        json_object_put(o);
        unlink(fifo);
}

/* A counting software event added at run time: its counter lines start
 * (the counter timer follows the events now served). */
static void test_software_counter(void **state) {
        json_object *o;
        int64_t counters = 0;

        expect_result("{\"type\":\"add\",\"event\":{\"software\":\"task-clock\",\"count\":true}}\n", "add");
        for (int i = 0; i < 50 && counters == 0; i++) {
                o = itest_client_next(watcher, 200);
                if (o && strcmp(itest_str(o, "type"), "counter") == 0 &&
                    strcmp(itest_str(o, "event"), "software:task-clock") == 0)
                        counters++;
                json_object_put(o);
        }
        assert_true(counters > 0);
        expect_result("{\"type\":\"remove\",\"event\":\"software:task-clock\"}\n", "remove");
        /* Drain what came meanwhile. */
        {
                size_t len;
                free(itest_client_slurp(watcher, 1500, 10000, &len));
        }
}

/* evmonctl speaks it: add, filter, disable, enable, remove. */
static void test_evmonctl(void **state) {
        char evmonctl[512], *out = NULL;
        const char *add[] = { evmonctl, "--socket", daemon_.socket, "add", "{\"tracepoint\":\"" GETSID "\"}", NULL };
        const char *filter[] = { evmonctl, "--socket", daemon_.socket, "filter", GETSID, "pid == 77105", NULL };
        const char *disable[] = { evmonctl, "--socket", daemon_.socket, "disable", GETSID, NULL };
        const char *enable[] = { evmonctl, "--socket", daemon_.socket, "enable", NULL };
        const char *remove[] = { evmonctl, "--socket", daemon_.socket, "remove", GETSID, NULL };
        const char *bad[] = { evmonctl, "--socket", daemon_.socket, "remove", "sched:nope", NULL };

        itest_build_path("evmonctl", evmonctl, sizeof(evmonctl));
        assert_int_equal(itest_run(add, 10000, &out), 0);
        assert_non_null(strstr(out, "\"request\": \"add\""));
        free(out);
        assert_int_equal(itest_run(filter, 10000, NULL), 0);
        assert_int_equal(count_calls(SYS_getsid, ARG_SID, GETSID), N_CALLS);
        assert_int_equal(last_configs, 2);      /* the add's and the filter's */
        assert_int_equal(itest_run(disable, 10000, NULL), 0);
        assert_int_equal(count_calls(SYS_getsid, ARG_SID, GETSID), 0);
        assert_int_equal(last_configs, 1);
        assert_int_equal(itest_run(enable, 10000, NULL), 0);
        assert_int_equal(count_calls(SYS_getsid, ARG_SID, GETSID), N_CALLS);
        assert_int_equal(last_configs, 1);
        assert_int_equal(itest_run(remove, 10000, NULL), 0);
        assert_int_equal(count_calls(SYS_getsid, ARG_SID, GETSID), 0);
        assert_int_equal(last_configs, 1);
        assert_int_equal(itest_run(bad, 10000, &out), 1);
        assert_non_null(strstr(out, "no event \"sched:nope\""));
        free(out);
}

int main(void) {
        static const char *const need[] = { "syscalls/sys_enter_getpgid", "syscalls/sys_enter_getsid", NULL };
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_add_and_remove),
                cmocka_unit_test(test_add_under_load),
                cmocka_unit_test(test_filter_remove_under_load),
                cmocka_unit_test(test_disable_enable),
                cmocka_unit_test(test_filter),
                cmocka_unit_test(test_filter_keeps_count),
                cmocka_unit_test(test_bad_requests_change_nothing),
                cmocka_unit_test(test_unknown_keys),
                cmocka_unit_test(test_non_admin_refused),
                cmocka_unit_test(test_uprobe_add_remove),
                cmocka_unit_test(test_uprobe_add_fifo),
                cmocka_unit_test(test_software_counter),
                cmocka_unit_test(test_evmonctl),
                cmocka_unit_test(test_reload_serves_the_file),
                cmocka_unit_test(test_restart_serves_the_file),
        };

        itest_require(need);
        return cmocka_run_group_tests(tests, setup, teardown);
}
