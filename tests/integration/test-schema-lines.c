/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Schema lines from a live evmond (doc/protocol.md "schema").
 *
 * A client that subscribes to nothing gets, after hello, the schema line
 * of each event before its first line of that event, once, and every
 * line's "fields" and "sample" keys are those its schema names. A client
 * subscribed to one event gets that event's schema and no other. After a
 * reload that changes two events (a filter on the tracepoint, a sample
 * field more on cpu-clock) and keeps a third, the changed events' new
 * schema lines come before their first new lines (the new cpu-clock schema
 * names "period", which only the new lines carry), and the kept event's
 * schema is not sent again. Root and tracefs, else 77. */

#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "itest.h"

#define GETPPID "syscalls:sys_enter_getppid"
#define GETSID "syscalls:sys_enter_getsid"
#define CLOCK "software:cpu-clock"

static const char config_v1[] =
        "{\"events\": [\n"
        " {\"tracepoint\": \"" GETPPID "\"},\n"
        " {\"tracepoint\": \"" GETSID "\"},\n"
        " {\"software\": \"cpu-clock\", \"freq\": 200, \"sample\": [\"ip\", \"tid\", \"time\", \"cpu\"]}\n"
        "]}\n";
static const char config_v2[] =
        "{\"events\": [\n"
        " {\"tracepoint\": \"" GETPPID "\", \"filter\": \"__syscall_nr >= 0\"},\n"
        " {\"tracepoint\": \"" GETSID "\"},\n"
        " {\"software\": \"cpu-clock\", \"freq\": 200, \"sample\": [\"ip\", \"tid\", \"time\", \"cpu\", \"period\"]}\n"
        "]}\n";

static struct itest_daemon daemon_;

static uint64_t now_mono_ns(void) {
        struct timespec t;

        clock_gettime(CLOCK_MONOTONIC, &t);
        return (uint64_t) t.tv_sec * 1000000000ull + (uint64_t) t.tv_nsec;
}

struct lines {
        json_object **v;
        size_t n, cap;
};

static void collect(json_object *o, void *userdata) {
        struct lines *l = userdata;

        if (l->n == l->cap) {
                l->cap = l->cap ? l->cap * 2 : 256;
                l->v = realloc(l->v, l->cap * sizeof(*l->v));
                assert_non_null(l->v);
        }
        l->v[l->n++] = json_object_get(o);
}

static void lines_done(struct lines *l) {
        for (size_t i = 0; i < l->n; i++)
                json_object_put(l->v[i]);
        free(l->v);
        *l = (struct lines) {};
}

static void read_lines(struct itest_client *c, struct lines *l) {
        size_t len;
        char *text = itest_client_slurp(c, 700, 4000, &len);

        assert_non_null(text);
        itest_for_each_line(text, len, collect, l);
        free(text);
}

static const char *type_of(json_object *o) {
        return itest_str(o, "type") ?: "";
}

/* Reads C's lines into L up to its "subscribed" reply; returns the reply's
 * index. Until evmond reads the subscribe request the client has no
 * subscription, which means every event (doc/protocol.md): on a busy
 * machine other processes' lines, each after its schema line, may come
 * between hello and the reply. */
static size_t read_until_subscribed(struct itest_client *c, struct lines *l) {
        for (;;) {
                json_object *o = itest_client_next(c, 5000);

                if (!o)
                        fail_msg("no \"subscribed\" reply after %zu lines", l->n);
                collect(o, l);
                json_object_put(o);
                if (strcmp(type_of(l->v[l->n - 1]), "subscribed") == 0)
                        return l->n - 1;
        }
}

/* Whether the names of the schema's entries "in":IN are exactly the keys
 * of OBJ (NULL: none), or with SUBSET, include them. */
static void check_keys(json_object *schema, const char *in, json_object *obj, const char *what) {
        json_object *fields;
        size_t n_in = 0;

        assert_true(json_object_object_get_ex(schema, "fields", &fields));
        for (size_t i = 0; i < json_object_array_length(fields); i++) {
                json_object *f = json_object_array_get_idx(fields, i);

                if (strcmp(itest_str(f, "in"), in) != 0)
                        continue;
                n_in++;
                if (!obj || !json_object_object_get_ex(obj, itest_str(f, "name"), NULL))
                        fail_msg("%s: schema names %s.%s, the line has no such key", what, in, itest_str(f, "name"));
        }
        if ((obj ? (size_t) json_object_object_length(obj) : 0) != n_in)
                fail_msg("%s: the line's %s has %d keys, its schema %zu: %s", what, in,
                         obj ? json_object_object_length(obj) : 0, n_in, json_object_to_json_string(schema));
}

static bool schema_has(json_object *schema, const char *name) {
        json_object *fields;

        assert_true(json_object_object_get_ex(schema, "fields", &fields));
        for (size_t i = 0; i < json_object_array_length(fields); i++)
                if (strcmp(itest_str(json_object_array_get_idx(fields, i), "name"), name) == 0)
                        return true;
        return false;
}

/* Each line about an event comes after that event's schema line, whose
 * fields are the line's; a schema line comes once per event (FROM..TO of
 * L, the schemas seen so far in SEEN, by event name). Returns the number
 * of event lines. */
struct seen {
        char name[64];
        json_object *schema;
        size_t count;
};

static size_t check_order(struct lines *l, size_t from, size_t to, struct seen *seen, size_t n_seen,
                          const char *const *allowed, bool replace) {
        size_t n_events = 0;

        for (size_t i = from; i < to; i++) {
                json_object *o = l->v[i], *fields = NULL, *sample = NULL;
                const char *type = type_of(o), *ev = itest_str(o, "event");
                struct seen *s = NULL;

                if (!ev || (strcmp(type, "schema") != 0 && strcmp(type, "event") != 0))
                        continue;
                for (size_t k = 0; k < n_seen; k++)
                        if (strcmp(seen[k].name, ev) == 0)
                                s = &seen[k];
                if (!s) {
                        bool ok = false;

                        for (size_t k = 0; allowed[k]; k++)
                                ok = ok || strcmp(allowed[k], ev) == 0;
                        if (!ok)
                                fail_msg("line %zu is about %s, which this client did not ask for: %s", i, ev,
                                         json_object_to_json_string(o));
                        fail_msg("line %zu: no seen-slot for %s", i, ev);
                }
                if (strcmp(type, "schema") == 0) {
                        if (s->schema && !replace)
                                fail_msg("line %zu: a second schema line for %s with no change", i, ev);
                        s->schema = o;
                        continue;
                }
                if (!s->schema)
                        fail_msg("line %zu: %s's line before its schema line: %s", i, ev, json_object_to_json_string(o));
                json_object_object_get_ex(o, "fields", &fields);
                json_object_object_get_ex(o, "sample", &sample);
                check_keys(s->schema, "fields", fields, ev);
                check_keys(s->schema, "sample", sample, ev);
                s->count++;
                n_events++;
        }
        return n_events;
}

/* From this process, which the clients subscribe to (the machine may be
 * busy with other tests' calls): 50 getppid, 5 getsid (not getpid, which
 * the sanitizers' runtime calls too), and 300 ms on the CPU for cpu-clock
 * samples. */
static void make_events(void) {
        uint64_t end = now_mono_ns() + 300 * 1000000ull;
        volatile uint64_t spin = 0;

        for (int i = 0; i < 50; i++)
                syscall(SYS_getppid);
        for (int i = 0; i < 5; i++)
                syscall(SYS_getsid, 0);
        while (now_mono_ns() < end)
                spin++;
}

static void test_schema_lines(void **state) {
        static const char *const all[] = { GETPPID, GETSID, CLOCK, NULL };
        static const char *const one[] = { GETPPID, NULL };
        struct itest_client *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b)), *c = calloc(1, sizeof(*c));
        struct seen seen_a[3] = { { GETPPID }, { GETSID }, { CLOCK } }, seen_b[1] = { { GETPPID } };
        struct seen seen_b_before[3] = { { GETPPID }, { GETSID }, { CLOCK } };
        size_t sub_a, sub_b;
        struct lines la = {}, lb = {};
        size_t reload_at = SIZE_MAX, first_period = SIZE_MAX, first_new_getppid = SIZE_MAX;
        size_t new_clock_schema = SIZE_MAX, new_getppid_schema = SIZE_MAX;
        json_object *o, *v;
        char req[256];
        uint64_t reloaded;
        FILE *f;

        assert_non_null(a);
        assert_non_null(b);
        assert_non_null(c);
        assert_int_equal(itest_daemon_start(&daemon_, config_v1), 0);
        assert_int_equal(itest_client_connect(a, daemon_.socket), 0);
        assert_int_equal(itest_client_connect(b, daemon_.socket), 0);
        snprintf(req, sizeof(req), "{\"type\":\"subscribe\",\"pids\":[%d],\"self\":true}\n", (int) getpid());
        assert_int_equal(itest_client_send(a, req), 0);
        snprintf(req, sizeof(req), "{\"type\":\"subscribe\",\"events\":[\"" GETPPID "\"],\"pids\":[%d],\"self\":true}\n",
                 (int) getpid());
        assert_int_equal(itest_client_send(b, req), 0);
        sub_b = read_until_subscribed(b, &lb);
        usleep(200 * 1000);     /* A's subscription is in too */

        make_events();
        sub_a = read_until_subscribed(a, &la);
        read_lines(a, &la);
        read_lines(b, &lb);

        /* A: hello first, then each event's schema before its lines:
         * other processes' lines before the subscribed reply, this one's
         * after it. */
        assert_true(la.n > sub_a + 1);
        assert_string_equal(type_of(la.v[0]), "hello");
        check_order(&la, 1, sub_a, seen_a, 3, all, false);
        for (size_t k = 0; k < 3; k++)
                seen_a[k].count = 0;
        check_order(&la, sub_a + 1, la.n, seen_a, 3, all, false);
        for (size_t k = 0; k < 3; k++)
                if (!seen_a[k].schema || seen_a[k].count == 0)
                        fail_msg("client A got %zu lines of %s (schema %s)", seen_a[k].count, seen_a[k].name,
                                 seen_a[k].schema ? "sent" : "missing");
        assert_int_equal(seen_a[0].count, 50);
        assert_int_equal(seen_a[1].count, 5);
        /* B: after its reply, the one event it subscribed to. */
        check_order(&lb, 0, sub_b, seen_b_before, 3, all, false);
        seen_b[0].schema = seen_b_before[0].schema;
        check_order(&lb, sub_b + 1, lb.n, seen_b, 1, one, false);
        assert_true(seen_b[0].schema);
        assert_int_equal(seen_b[0].count, 50);
        assert_false(schema_has(seen_a[2].schema, "period"));

        /* The reload: getppid gets a filter, cpu-clock a sample field,
         * exec stays as it was. */
        f = fopen(daemon_.config, "we");
        assert_non_null(f);
        assert_true(fputs(config_v2, f) >= 0);
        assert_int_equal(fclose(f), 0);
        /* C asks for the reload and waits for its answer; lines after
         * that (by their ts, CLOCK_MONOTONIC) are the new definitions'. */
        assert_int_equal(itest_client_connect(c, daemon_.socket), 0);
        assert_int_equal(itest_client_send(c, "{\"type\":\"subscribe\",\"events\":[\"" GETSID "\"]}\n"), 0);
        o = itest_client_expect(c, "subscribed", 5000);
        assert_non_null(o);
        json_object_put(o);
        assert_int_equal(itest_client_send(c, "{\"type\":\"reload\"}\n"), 0);
        o = itest_client_expect(c, "reload", 10000);
        assert_non_null(o);
        if (!json_object_object_get_ex(o, "ok", &v) || !json_object_get_boolean(v))
                fail_msg("reload refused: %s", json_object_to_json_string(o));
        json_object_put(o);
        reloaded = now_mono_ns();
        size_t before = la.n;
        make_events();
        read_lines(a, &la);

        for (size_t i = before; i < la.n; i++) {
                json_object *x = la.v[i], *sample;
                const char *type = type_of(x), *ev = itest_str(x, "event");

                if (strcmp(type, "config") == 0 && reload_at == SIZE_MAX)
                        reload_at = i;
                else if (strcmp(type, "schema") == 0) {
                        if (strcmp(ev, GETSID) == 0)
                                fail_msg("line %zu: %s did not change, yet its schema came again", i, GETSID);
                        if (strcmp(ev, CLOCK) == 0 && new_clock_schema == SIZE_MAX && schema_has(x, "period"))
                                new_clock_schema = i;
                        if (strcmp(ev, GETPPID) == 0 && new_getppid_schema == SIZE_MAX)
                                new_getppid_schema = i;
                } else if (strcmp(type, "event") == 0 && ev) {
                        if (strcmp(ev, CLOCK) == 0 && first_period == SIZE_MAX &&
                            json_object_object_get_ex(x, "sample", &sample) &&
                            json_object_object_get_ex(sample, "period", NULL))
                                first_period = i;
                        if (strcmp(ev, GETPPID) == 0 && first_new_getppid == SIZE_MAX &&
                            (uint64_t) itest_int(x, "ts") > reloaded)
                                first_new_getppid = i;
                }
        }
        /* Every line after the reload has the keys of its latest schema. */
        check_order(&la, before, la.n, seen_a, 3, all, true);
        print_message("after the reload: config line at %zu, getppid schema at %zu, first new getppid line at %zu, "
                      "cpu-clock schema with period at %zu, first line with period at %zu\n",
                      reload_at, new_getppid_schema, first_new_getppid, new_clock_schema, first_period);
        if (first_new_getppid == SIZE_MAX || first_period == SIZE_MAX)
                fail_msg("the new lines are missing");
        if (new_getppid_schema == SIZE_MAX || new_getppid_schema > first_new_getppid)
                fail_msg("getppid's new schema (line %zu) did not come before its first new line (%zu)",
                         new_getppid_schema, first_new_getppid);
        if (new_clock_schema == SIZE_MAX || new_clock_schema > first_period)
                fail_msg("cpu-clock's new schema with period (line %zu) did not come before the first line with "
                         "period (%zu)", new_clock_schema, first_period);

        lines_done(&la);
        lines_done(&lb);
        itest_client_close(a);
        itest_client_close(b);
        itest_client_close(c);
        free(a);
        free(b);
        free(c);
        assert_int_equal(itest_daemon_stop(&daemon_), 0);
}

int main(void) {
        static const char *const need[] = { "syscalls/sys_enter_getppid", "syscalls/sys_enter_getsid", NULL };
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_schema_lines),
        };
        int r;

        itest_require(need);
        r = cmocka_run_group_tests_name("schema lines", tests, NULL, NULL);
        itest_daemon_cleanup(&daemon_);
        return r;
}
