/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* evmonctl top's table (src/cli/top.c) on canned aggregate lines: the
 * window's counts and rates, totals over windows, the sorts, one event
 * or all of them, keys escaped, and lines that are no aggregate. */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/cli/top.h"

static void feed(struct top_model *m, const char *line) {
        json_object *o = json_tokener_parse(line);

        assert_non_null(o);
        assert_int_equal(top_model_feed(m, o), 0);
        json_object_put(o);
}

/* Two windows of 2 s and 1 s, counts by comm and event. */
static const char w1[] =
        "{\"type\":\"aggregate\",\"ts\":3000000000,\"start_ts\":1000000000,\"interval_ms\":2000,\"by\":[\"comm\",\"event\"],"
        "\"op\":\"count\",\"events\":1700,\"lost\":3,\"keys_dropped\":1,\"entries\":["
        "{\"key\":{\"comm\":\"bash\",\"event\":\"syscalls:sys_enter_getppid\"},\"count\":1000},"
        "{\"key\":{\"comm\":\"evtop\",\"event\":\"syscalls:sys_enter_getppid\"},\"count\":600},"
        "{\"key\":{\"comm\":\"evtop\",\"event\":\"syscalls:sys_enter_openat\"},\"count\":60},"
        "{\"key\":{\"comm\":\"a\\u001b[2J\",\"event\":\"syscalls:sys_enter_openat\"},\"count\":40}]}";
static const char w2[] =
        "{\"type\":\"aggregate\",\"ts\":4000000000,\"start_ts\":3000000000,\"interval_ms\":1000,\"by\":[\"comm\",\"event\"],"
        "\"op\":\"count\",\"events\":900,\"lost\":0,\"keys_dropped\":0,\"entries\":["
        "{\"key\":{\"comm\":\"evtop\",\"event\":\"syscalls:sys_enter_getppid\"},\"count\":800},"
        "{\"key\":{\"comm\":\"bash\",\"event\":\"syscalls:sys_enter_getppid\"},\"count\":100}]}";

static void test_windows(void **state) {
        struct top_model m;
        struct top_row *rows;
        int n;

        assert_int_equal(top_model_init(&m, "comm"), 0);
        feed(&m, w1);
        assert_true(m.window_s == 2.0);
        assert_int_equal(m.folded, 1700);
        assert_int_equal(m.lost, 3);
        assert_int_equal(m.keys_dropped, 1);
        /* Every event: evtop's two added up; by rate. */
        n = top_model_rows(&m, NULL, TOP_SORT_RATE, &rows);
        assert_int_equal(n, 3);
        assert_string_equal(rows[0].key, "bash");
        assert_int_equal(rows[0].count, 1000);
        assert_true(rows[0].rate == 500.0);
        assert_string_equal(rows[1].key, "evtop");
        assert_int_equal(rows[1].count, 660);
        assert_true(rows[1].rate == 330.0);
        /* The comm's ESC escaped: it is drawn on the terminal. */
        assert_string_equal(rows[2].key, "a\\x1b[2J");
        assert_true(rows[0].share > 0.58 && rows[0].share < 0.59);
        free(rows);

        /* The next window: evtop on top by rate, bash still by total. */
        feed(&m, w2);
        assert_true(m.window_s == 1.0);
        n = top_model_rows(&m, NULL, TOP_SORT_RATE, &rows);
        assert_int_equal(n, 3);
        assert_string_equal(rows[0].key, "evtop");
        assert_true(rows[0].rate == 800.0);
        assert_int_equal(rows[0].total, 1460);
        assert_string_equal(rows[1].key, "bash");
        assert_int_equal(rows[2].count, 0);     /* gone quiet: 0 this window */
        free(rows);
        n = top_model_rows(&m, NULL, TOP_SORT_TOTAL, &rows);
        assert_string_equal(rows[0].key, "evtop");
        assert_int_equal(rows[0].total, 1460);
        assert_string_equal(rows[1].key, "bash");
        assert_int_equal(rows[1].total, 1100);
        free(rows);
        n = top_model_rows(&m, NULL, TOP_SORT_KEY, &rows);
        assert_int_equal(n, 3);
        assert_string_equal(rows[0].key, "a\\x1b[2J");
        assert_string_equal(rows[1].key, "bash");
        assert_string_equal(rows[2].key, "evtop");
        free(rows);

        /* One event: its rows alone. */
        assert_int_equal(m.n_events, 2);
        assert_string_equal(m.events[0], "syscalls:sys_enter_getppid");
        assert_string_equal(m.events[1], "syscalls:sys_enter_openat");
        assert_null(m.events[2]);
        n = top_model_rows(&m, "syscalls:sys_enter_openat", TOP_SORT_TOTAL, &rows);
        assert_int_equal(n, 2);
        assert_string_equal(rows[0].key, "evtop");
        assert_int_equal(rows[0].total, 60);
        assert_string_equal(rows[1].key, "a\\x1b[2J");
        free(rows);
        top_model_done(&m);
}

/* By event, by pid (numbers), by stack (frames joined): the key's text. */
static void test_keys(void **state) {
        struct top_model m;
        struct top_row *rows;

        assert_int_equal(top_model_init(&m, "event"), 0);
        feed(&m, "{\"type\":\"aggregate\",\"interval_ms\":500,\"entries\":["
                 "{\"key\":{\"event\":\"sched:sched_switch\"},\"count\":10},"
                 "{\"key\":{\"event\":\"sched:sched_wakeup\"},\"count\":20}]}");
        assert_true(m.window_s == 0.5);
        assert_int_equal(top_model_rows(&m, NULL, TOP_SORT_RATE, &rows), 2);
        assert_string_equal(rows[0].key, "sched:sched_wakeup");
        assert_true(rows[0].rate == 40.0);
        free(rows);
        /* By event, 'e' narrows to one: its own row. */
        assert_int_equal(top_model_rows(&m, "sched:sched_switch", TOP_SORT_RATE, &rows), 1);
        free(rows);
        top_model_done(&m);

        assert_int_equal(top_model_init(&m, "pid"), 0);
        feed(&m, "{\"type\":\"aggregate\",\"interval_ms\":1000,\"entries\":["
                 "{\"key\":{\"pid\":4242,\"event\":\"x:y\"},\"count\":1},{\"key\":{\"pid\":7},\"count\":2},"
                 "{\"count\":5},{\"key\":\"no object\",\"count\":5}]}");
        assert_int_equal(top_model_rows(&m, NULL, TOP_SORT_KEY, &rows), 2);
        assert_string_equal(rows[0].key, "4242");
        assert_string_equal(rows[1].key, "7");
        free(rows);
        top_model_done(&m);

        assert_int_equal(top_model_init(&m, "stack"), 0);
        feed(&m, "{\"type\":\"aggregate\",\"interval_ms\":1000,\"entries\":["
                 "{\"key\":{\"stack\":[\"main+0x10\",\"f\\n+0x2\"]},\"count\":3}]}");
        assert_int_equal(top_model_rows(&m, NULL, TOP_SORT_RATE, &rows), 1);
        assert_string_equal(rows[0].key, "main+0x10;f\\n+0x2");
        free(rows);
        top_model_done(&m);
}

/* What is no aggregate line is refused, the model unchanged. */
static void test_not_aggregate(void **state) {
        static const char *const lines[] = {
                "{\"type\":\"event\",\"entries\":[]}",
                "{\"type\":\"aggregate\"}",
                "{\"type\":\"aggregate\",\"entries\":{}}",
                "{\"type\":1,\"entries\":[]}",
                "[]",
        };
        struct top_model m;

        assert_int_equal(top_model_init(&m, "comm"), 0);
        for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
                json_object *o = json_tokener_parse(lines[i]);

                assert_non_null(o);
                assert_int_equal(top_model_feed(&m, o), -EINVAL);
                json_object_put(o);
        }
        assert_int_equal(m.windows, 0);
        assert_int_equal(m.n_entries, 0);
        top_model_done(&m);
        /* A key name longer than the model keeps. */
        assert_int_equal(top_model_init(&m, "field:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),
                         -EINVAL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_windows),
                cmocka_unit_test(test_keys),
                cmocka_unit_test(test_not_aggregate),
        };
        return cmocka_run_group_tests_name("top", tests, NULL, NULL);
}
