/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linefilter.c: a subscription's own filter, parsed, checked against the
 * events' formats and evaluated on samples (sched_switch-like fields). */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "linefilter.h"
#include "subscription.h"
#include "evmon/cleanup.h"
#include "evmon/monitor.h"

static const char fmt_text[] =
        "name: sched_switch\n"
        "ID: 316\n"
        "format:\n"
        "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
        "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
        "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
        "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
        "\n"
        "\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
        "\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
        "\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
        "\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
        "\n"
        "print fmt: \"prev_comm=%s prev_pid=%d\", REC->prev_comm, REC->prev_pid\n";

struct rec {
        uint16_t type;
        uint8_t flags, preempt;
        int32_t common_pid;
        char prev_comm[16];
        int32_t prev_pid, prev_prio;
        int64_t prev_state;
};

static bool eval(const char *text, const struct format *fmt, const struct perf_sample *s, const struct line_meta *base) {
        _cleanup_(linefilter_freep) struct linefilter *f = NULL;
        _cleanup_(freep) char *error = NULL;
        struct line_meta m = *base;

        if (linefilter_parse(text, &f, &error) < 0)
                fail_msg("%s: %s", text, error);
        if (linefilter_check(f, &fmt, 1, &error) < 0)
                fail_msg("%s: %s", text, error);
        m.sample = s;
        m.format = fmt;
        return linefilter_matches(f, &m);
}

static void test_eval(void **state) {
        _cleanup_(format_freep) struct format *fmt = NULL;
        struct rec r = { .common_pid = 42, .prev_pid = 42, .prev_prio = 120, .prev_state = -1 };
        struct perf_sample s = { .pid = 42, .tid = 43, .cpu = 3 };
        const struct line_meta m = { .pid = 42, .comm = "nginx", .cgroup = 77 };

        assert_int_equal(format_parse(fmt_text, "sched", &fmt), 0);
        strcpy(r.prev_comm, "nginx: worker");
        s.raw.data = &r;
        s.raw.size = sizeof(r);

        assert_true(eval("prev_pid == 42", fmt, &s, &m));
        assert_false(eval("prev_pid != 42", fmt, &s, &m));
        assert_true(eval("prev_prio >= 100 && prev_prio < 0x80", fmt, &s, &m));
        assert_true(eval("prev_state < 0", fmt, &s, &m));
        assert_true(eval("prev_comm ~ \"nginx*\"", fmt, &s, &m));
        assert_true(eval("prev_comm == \"nginx: worker\"", fmt, &s, &m));
        assert_false(eval("prev_comm == nginx", fmt, &s, &m));
        assert_true(eval("comm == nginx && tid == 43 && cpu == 3 && cgroup == 77", fmt, &s, &m));
        assert_true(eval("pid == 1 || (prev_pid == 42 && comm ~ ng*)", fmt, &s, &m));
        assert_false(eval("(pid == 1 || prev_pid == 41) && comm ~ ng*", fmt, &s, &m));
        assert_true(eval("common_pid == 42", fmt, &s, &m));
        assert_true(eval("field:prev_pid > 41", fmt, &s, &m));
        /* Unknown context matches nothing, != included. */
        assert_false(eval("comm != nginx", fmt, &s, &(struct line_meta) { .pid = 42 }));
        assert_true(eval("comm != sshd", fmt, &s, &m));
        /* Lines that are no sample (counter lines) are not filtered. */
        {
                _cleanup_(linefilter_freep) struct linefilter *f = NULL;
                assert_int_equal(linefilter_parse("pid == 1", &f, NULL), 0);
                assert_true(linefilter_matches(f, &(struct line_meta) { .pid = 2 }));
        }
        /* A record cut short: the field does not decode, the leaf is false. */
        s.raw.size = 26;
        assert_false(eval("prev_pid == 42", fmt, &s, &m));
}

static void expect_error(const char *text, const struct format *fmt, const char *want) {
        _cleanup_(linefilter_freep) struct linefilter *f = NULL;
        _cleanup_(freep) char *error = NULL;
        int r = linefilter_parse(text, &f, &error);

        if (r >= 0)
                r = linefilter_check(f, &fmt, 1, &error);
        assert_int_equal(r, -EINVAL);
        if (!strstr(error, want))
                fail_msg("%s: wanted \"%s\" in \"%s\"", text, want, error);
}

static void test_errors(void **state) {
        _cleanup_(format_freep) struct format *fmt = NULL;
        char big[LINEFILTER_TEXT_MAX + 2], many[1024] = "";

        assert_int_equal(format_parse(fmt_text, "sched", &fmt), 0);
        expect_error("", fmt, "a field name expected");
        expect_error("prev_pid", fmt, "an operator expected");
        expect_error("prev_pid ==", fmt, "a value expected");
        expect_error("prev_pid == 1 &&", fmt, "a field name expected");
        expect_error("(prev_pid == 1", fmt, "')' expected");
        expect_error("prev_pid == 1 prev_prio == 2", fmt, "\"&&\", \"||\" or the end expected");
        expect_error("prev_comm == \"x", fmt, "closing");
        expect_error("next_pid == 1", fmt, "no event of this subscription has a field \"next_pid\"");
        expect_error("prev_pid == abc", fmt, "\"prev_pid\" is a number; \"abc\" is not one");
        expect_error("pid == abc", fmt, "\"pid\" is a number");
        expect_error("prev_pid ~ 1*", fmt, "\"~\" takes a string field");
        memset(big, 'a', sizeof(big) - 1);
        big[sizeof(big) - 1] = 0;
        expect_error(big, fmt, "at most 1024 are taken");
        for (int i = 0; i < 33; i++)
                strcat(many, i ? " && pid == 1" : "pid == 1");
        expect_error(many, fmt, "more than 32 comparisons");
        memset(many, '(', 17);
        strcpy(many + 17, "pid == 1");
        expect_error(many, fmt, "nested deeper than 16");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_eval),
                cmocka_unit_test(test_errors),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
