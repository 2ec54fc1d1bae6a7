/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "line.h"

static void subject_of(const char *host, const char *line, const char *want) {
        struct line_info li;
        char buf[256];

        assert_int_equal(line_scan(line, strlen(line), &li), 0);
        assert_int_equal(line_subject(host, &li, buf, sizeof(buf)), (int) strlen(want));
        assert_string_equal(buf, want);
}

static void test_subjects(void **state) {
        subject_of("web1", "{\"type\":\"event\",\"event\":\"sched:sched_process_exec\",\"cpu\":1}\n",
                   "evmon.web1.sched.sched_process_exec");
        /* "event" after nested values, and strings with escaped quotes */
        subject_of("web1", "{\"fields\":{\"a\":[1,{\"b\":\"}\\\"\"}]},\"s\":\"x\\\"y\",\"event\":\"kprobe:open\",\"type\":\"event\"}",
                   "evmon.web1.kprobe.open");
        subject_of("web1", "{\"type\":\"lost\",\"cpu\":0,\"count\":3}", "evmon.web1._.lost");
        subject_of("web1", "{\"type\":\"counter\",\"event\":\"software:cpu-clock\"}", "evmon.web1._.counter");
        /* '.', '*', '>' and whitespace inside a part become '_' */
        subject_of("h.1 *x>", "{\"type\":\"event\",\"event\":\"pmu:msr/tsc/ a.b\"}", "evmon.h_1__x_.pmu.msr/tsc/_a_b");
        subject_of("web1", "{\"type\":\"event\",\"event\":\"noColon\"}", "evmon.web1._.noColon");
        subject_of("web1", "{\"type\":\"\"}", "evmon.web1._._");
        /* The name, not its JSON text: escapes undone (a surrogate pair
         * as one character), then control bytes '_' */
        subject_of("web1", "{\"type\":\"event\",\"event\":\"a\\\\b:c\\u0001\\u00e9\\ud83d\\ude00\\/x\\\"\"}",
                   "evmon.web1.a\\b.c_\xc3\xa9\xf0\x9f\x98\x80/x\"");
        subject_of("web1", "{\"type\":\"event\",\"event\":\"s:\\ud800x\\u0000\"}", "evmon.web1.s._x_");
        /* A broken escape: as it is */
        subject_of("web1", "{\"type\":\"event\",\"event\":\"s:n\\u12\"}", "evmon.web1.s.n\\u12");
}

static void test_unescape(void **state) {
        char buf[8];

        assert_int_equal(line_unescape("a\\tb", 4, buf, sizeof(buf)), 3);
        assert_memory_equal(buf, "a\tb", 3);
        assert_int_equal(line_unescape("\\u00e9", 6, buf, 1), -ENOBUFS);
        assert_int_equal(line_unescape("\\u00e", 5, buf, sizeof(buf)), -EINVAL);
        /* A backslash that ends the text stays */
        assert_int_equal(line_unescape("x\\", 2, buf, sizeof(buf)), 2);
        assert_memory_equal(buf, "x\\", 2);
}

static void test_scan_rejects(void **state) {
        struct line_info li;

        assert_int_equal(line_scan("[1]", 3, &li), -EINVAL);
        assert_int_equal(line_scan("{\"event\":\"a:b\"}", 15, &li), -EINVAL);
        assert_int_equal(line_scan("{\"type\":\"ev", 11, &li), -EINVAL);
        assert_int_equal(line_scan("", 0, &li), -EINVAL);
        /* Ends right after a colon (found by fuzz-forward-line). */
        assert_int_equal(line_scan("{\"type\":", 8, &li), -EINVAL);
        assert_int_equal(line_scan("{\"type\": ", 9, &li), -EINVAL);
}

static void test_small_buffer(void **state) {
        struct line_info li = { .type = "event", .type_len = 5, .event = "sched:x", .event_len = 7 };
        /* Room for all it may write: it is told less (AddressSanitizer
         * caught the size of 18 given for a 16-byte buffer). */
        char buf[32];

        assert_int_equal(line_subject("web1", &li, buf, 16), -ENOBUFS);
        assert_int_equal(line_subject("web1", &li, buf, 18), -ENOBUFS);
        assert_int_equal(line_subject("web1", &li, buf, 0), -ENOBUFS);
}

static void test_with_host(void **state) {
        char buf[128];

        assert_int_equal(line_with_host("{\"type\":\"lost\"}\n", 16, "\"web1\"", buf, sizeof(buf)), 29);
        assert_string_equal(buf, "{\"host\":\"web1\",\"type\":\"lost\"}");
        assert_int_equal(line_with_host("{}", 2, "\"a\\\"b\"", buf, sizeof(buf)), 15);
        assert_string_equal(buf, "{\"host\":\"a\\\"b\"}");
        assert_int_equal(line_with_host("{\"type\":\"lost\"}", 15, "\"web1\"", buf, 29), -ENOBUFS);
        assert_int_equal(line_with_host("nope", 4, "\"web1\"", buf, sizeof(buf)), -EINVAL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_subjects),
                cmocka_unit_test(test_unescape),
                cmocka_unit_test(test_scan_rejects),
                cmocka_unit_test(test_small_buffer),
                cmocka_unit_test(test_with_host),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
