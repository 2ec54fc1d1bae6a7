/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* human_print(): the readable line evmonctl watch prints on a terminal. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "evmon/human.h"

/* LINE (one of evmond's JSON lines) as human_print() writes it (caller
 * frees). */
static char *human(const char *line) {
        json_object *o = json_tokener_parse(line);
        char *out = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&out, &n);

        assert_non_null(o);
        assert_non_null(f);
        human_print(f, o);
        assert_int_equal(fclose(f), 0);
        json_object_put(o);
        return out;
}

static void expect(const char *line, const char *want) {
        char *got = human(line);

        if (strcmp(got, want) != 0)
                fail_msg("human_print(%s):\ngot    \"%s\"\nwanted \"%s\"", line, got, want);
        free(got);
}

static void test_event(void **state) {
        expect("{\"type\":\"event\",\"event\":\"sched:sched_process_exec\",\"time\":\"2026-11-21T12:03:11.482913021Z\","
               "\"ts\":81522913021,\"cpu\":1,\"pid\":4242,\"tid\":4242,"
               "\"fields\":{\"filename\":\"/usr/bin/true\",\"pid\":4242,\"old_pid\":4242}}",
               "12:03:11.482913 cpu1 4242 sched:sched_process_exec filename=/usr/bin/true pid=4242 old_pid=4242\n");
        /* A thread, and a name from the print fmt. */
        expect("{\"type\":\"event\",\"event\":\"sched:sched_switch\",\"time\":\"2026-11-21T12:03:11.482913021Z\","
               "\"cpu\":0,\"pid\":7,\"tid\":8,\"fields\":{\"prev_state\":1},\"symbols\":{\"prev_state\":\"S\"}}",
               "12:03:11.482913 cpu0 7/8 sched:sched_switch prev_state=S\n");
        /* A perf event: its sample fields after the trace fields (none
         * were shown), objects and arrays as JSON. */
        expect("{\"type\":\"event\",\"event\":\"software:cpu-clock\",\"time\":\"2026-11-21T10:23:00.200000123Z\","
               "\"cpu\":0,\"pid\":4242,\"tid\":4242,\"sample\":{\"ip\":\"0x401136\",\"period\":1000000,"
               "\"callchain\":[{\"context\":\"user\",\"ips\":[\"0x401136\"]}]}}",
               "10:23:00.200000 cpu0 4242 software:cpu-clock ip=0x401136 period=1000000 "
               "callchain=[{\"context\":\"user\",\"ips\":[\"0x401136\"]}]\n");
        /* Lines other than events, as JSON; hello, subscribed and schema
         * not at all. */
        expect("{\"type\":\"lost\",\"cpu\":1,\"count\":17}", "-- {\"type\":\"lost\",\"cpu\":1,\"count\":17}\n");
        expect("{\"type\":\"hello\",\"version\":1,\"events\":[]}", "");
}

/* A file name (or comm) is anyone's to choose: its control characters
 * reach the terminal escaped, never as themselves. An ESC [ sequence
 * coloured (or worse) the watcher's terminal, a newline forged a second
 * line; invalid UTF-8 bytes 0x80..0x9f, which evmond sends as
 * \u0080..\u009f, came out as C1 controls (0x9b: CSI). */
static void test_control_characters(void **state) {
        expect("{\"type\":\"event\",\"event\":\"sched:sched_process_exec\",\"time\":\"2026-11-21T12:03:11.482913021Z\","
               "\"cpu\":0,\"pid\":1,\"tid\":1,\"fields\":{\"filename\":"
               "\"/tmp/a\\u00ff\\u009b\\u001b[31mRED\\u001b[0m\\nforged b\\u00e9\\t\\r\\\\x\\u007f\\u0001\"}}",
               "12:03:11.482913 cpu0 1 sched:sched_process_exec filename="
               "/tmp/a\xc3\xbf\\x9b\\x1b[31mRED\\x1b[0m\\nforged b\xc3\xa9\\t\\r\\\\x\\x7f\\x01\n");
        /* In a line shown as JSON: C0 is escaped by JSON itself, DEL and
         * C1 as \u00NN, so it stays JSON. */
        expect("{\"type\":\"probe\",\"path\":\"/tmp/\\u009b\\u007f\\u001b\\n\"}",
               "-- {\"type\":\"probe\",\"path\":\"/tmp/\\u009b\\u007f\\u001b\\n\"}\n");
        /* evmon-forward --read shows what anyone who may publish on NATS
         * wrote: a "time" of ESC ]0;title BEL ESC [2J set the terminal's
         * title and cleared its screen. Every string is escaped, the
         * time too. */
        expect("{\"type\":\"event\",\"event\":\"x:y\",\"time\":\"T\\u001b]0;owned\\u0007\\u001b[2J\",\"cpu\":0,\"pid\":1}",
               "\\x1b]0;owned\\x07\\x1b[2J cpu0 1 x:y\n");
        expect("{\"type\":\"event\",\"event\":\"x:y\",\"time\":\"\\u009b2J\",\"pid\":1}",
               "\\x9b2J 1 x:y\n");
        /* evmon-forward --read: the host first, escaped too. */
        expect("{\"type\":\"lost\",\"host\":\"web\\u001b1\",\"cpu\":1,\"count\":2}",
               "web\\x1b1 -- {\"type\":\"lost\",\"host\":\"web\\u001b1\",\"cpu\":1,\"count\":2}\n");
}

/* evmonctl watch --json on a terminal: evmond's line, the same JSON,
 * with the C1 controls and DEL it passes through (valid UTF-8 U+009B is
 * CSI to a terminal that takes C1) escaped. */
static void test_json_line(void **state) {
        static const char line[] = "{\"s\":\"a\xc2\x9b[31mb\x7f\xc3\xa9\\u001b\"}\n";
        char *out = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&out, &n);
        json_object *a, *b;

        assert_non_null(f);
        human_put_json(f, line, strlen(line));
        assert_int_equal(fclose(f), 0);
        assert_string_equal(out, "{\"s\":\"a\\u009b[31mb\\u007f\xc3\xa9\\u001b\"}\n");
        a = json_tokener_parse(line);
        b = json_tokener_parse(out);
        assert_non_null(a);
        assert_non_null(b);
        assert_true(json_object_equal(a, b));
        json_object_put(a);
        json_object_put(b);
        free(out);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_event),
                cmocka_unit_test(test_control_characters),
                cmocka_unit_test(test_json_line),
        };
        return cmocka_run_group_tests_name("human", tests, NULL, NULL);
}
