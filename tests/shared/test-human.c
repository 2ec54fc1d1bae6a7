/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* human_print(): the readable line evmonctl watch prints on a terminal. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>

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
               "12:03:11.482913 cpu1 [4242] sched:sched_process_exec filename=/usr/bin/true pid=4242 old_pid=4242\n");
        /* A thread, and a name from the print fmt. */
        expect("{\"type\":\"event\",\"event\":\"sched:sched_switch\",\"time\":\"2026-11-21T12:03:11.482913021Z\","
               "\"cpu\":0,\"pid\":7,\"tid\":8,\"fields\":{\"prev_state\":1},\"symbols\":{\"prev_state\":\"S\"}}",
               "12:03:11.482913 cpu0 [7/8] sched:sched_switch prev_state=S\n");
        /* A perf event: its sample fields after the trace fields (none
         * were shown), objects and arrays as JSON, the callchain below,
         * a frame a line. */
        expect("{\"type\":\"event\",\"event\":\"software:cpu-clock\",\"time\":\"2026-11-21T10:23:00.200000123Z\","
               "\"cpu\":0,\"pid\":4242,\"tid\":4242,\"sample\":{\"ip\":\"0x401136\",\"period\":1000000,"
               "\"read\":{\"group\":false},"
               "\"callchain\":[{\"context\":\"user\",\"ips\":[\"0x401136\"]}]}}",
               "10:23:00.200000 cpu0 [4242] software:cpu-clock ip=0x401136 period=1000000 read={\"group\":false}\n"
               "                  401136\n");
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
               "12:03:11.482913 cpu0 [1] sched:sched_process_exec filename="
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
               "\\x1b]0;owned\\x07\\x1b[2J cpu0 [1] x:y\n");
        expect("{\"type\":\"event\",\"event\":\"x:y\",\"time\":\"\\u009b2J\",\"pid\":1}",
               "\\x9b2J [1] x:y\n");
        /* evmon-forward --read: the host first, escaped too. */
        expect("{\"type\":\"lost\",\"host\":\"web\\u001b1\",\"cpu\":1,\"count\":2}",
               "web\\x1b1 -- {\"type\":\"lost\",\"host\":\"web\\u001b1\",\"cpu\":1,\"count\":2}\n");
}

/* Who: comm[pid] from "proc", the container by its runtime's name, else
 * by the 12 digits docker ps shows; a comm or container name that holds
 * ESC (anyone may name a process so: prctl(PR_SET_NAME)) is escaped. */
static void test_context(void **state) {
        expect("{\"type\":\"event\",\"event\":\"syscalls:sys_enter_getppid\",\"time\":\"2026-11-21T12:03:11.482913021Z\","
               "\"cpu\":3,\"pid\":4242,\"tid\":4243,\"proc\":{\"comm\":\"nginx\",\"exe\":\"/usr/sbin/nginx\"},"
               "\"container\":\"3f2a1b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a\","
               "\"container_info\":{\"name\":\"web\"},\"fields\":{\"__syscall_nr\":110}}",
               "12:03:11.482913 cpu3 nginx[4242/4243] @web syscalls:sys_enter_getppid __syscall_nr=110\n");
        expect("{\"type\":\"event\",\"event\":\"x:y\",\"time\":\"2026-11-21T12:03:11.000000001Z\",\"cpu\":0,\"pid\":5,"
               "\"tid\":5,\"proc\":{\"comm\":\"a\\u001b[2Jb\"},"
               "\"container\":\"3f2a1b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a\"}",
               "12:03:11.000000 cpu0 a\\x1b[2Jb[5] @3f2a1b9c8d7e x:y\n");
        expect("{\"type\":\"event\",\"event\":\"x:y\",\"time\":\"2026-11-21T12:03:11Z\",\"pid\":5,"
               "\"container\":\"box\\u001b\",\"container_info\":{\"name\":\"\\u009b1m\"}}",
               "12:03:11.000000 [5] @\\x9b1m x:y\n");
}

/* The time is the local one, as date prints it. */
static void test_local_time(void **state) {
        setenv("TZ", "EST5", 1);
        tzset();
        expect("{\"type\":\"event\",\"event\":\"x:y\",\"time\":\"2026-11-21T02:03:11.482913999Z\",\"pid\":1}",
               "21:03:11.482913 [1] x:y\n");
        setenv("TZ", "UTC", 1);
        tzset();
        /* Not a time: shown as it is, escaped. */
        expect("{\"type\":\"event\",\"event\":\"x:y\",\"time\":\"2026-11-21T02:03:11.Z\",\"pid\":1}",
               "02:03:11.Z [1] x:y\n");
}

/* A callchain: one frame a line, indented, symbol and module where the
 * line has them, [unknown] and evmond's reason where it has none. */
static void test_callchain(void **state) {
        expect("{\"type\":\"event\",\"event\":\"software:cpu-clock\",\"time\":\"2026-11-21T10:23:00.200000123Z\","
               "\"cpu\":1,\"pid\":9,\"tid\":9,\"proc\":{\"comm\":\"loop\"},\"sample\":{\"callchain\":["
               "{\"context\":\"kernel\",\"ips\":[\"0xffffffffa1e0c6f1\"],"
               "\"syms\":[{\"sym\":\"do_syscall_64+0x5c\",\"module\":\"[kernel.kallsyms]\"}]},"
               "{\"context\":\"user\",\"ips\":[\"0x401136\",\"0x7f00\",\"0x7f01\"],"
               "\"syms\":[{\"sym\":\"main+0x16\",\"module\":\"/usr/bin/lo\\u001bop\"},null,"
               "{\"module\":\"/lib/libc.so.6\",\"symbols\":\"symbols pending\"}]},"
               "{\"context\":\"guest\",\"ips\":[\"0x1\"]}]}}",
               "10:23:00.200000 cpu1 loop[9] software:cpu-clock\n"
               "        ffffffffa1e0c6f1 do_syscall_64+0x5c ([kernel.kallsyms])\n"
               "                  401136 main+0x16 (/usr/bin/lo\\x1bop)\n"
               "                    7f00 [unknown]\n"
               "                    7f01 [unknown] (/lib/libc.so.6) (symbols pending)\n"
               "        [guest]\n"
               "                       1\n");
}

/* Counter lines as a table: the header once per run of them, the rate
 * from the delta over the time since the event's last line, the
 * running/enabled share. */
static void test_counters(void **state) {
        struct human h;
        char *out = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&out, &n);
        static const char *const lines[] = {
                "{\"type\":\"counter\",\"event\":\"pmu:msr/tsc/\",\"time\":\"2026-11-21T10:23:01.000000000Z\","
                "\"ts\":1000000000,\"value\":2400000000,\"delta\":2400000000,\"enabled\":1000000000,\"running\":1000000000}",
                "{\"type\":\"counter\",\"event\":\"hardware:cycles\\u001b\",\"time\":\"2026-11-21T10:23:01.000000000Z\","
                "\"ts\":1000000000,\"value\":5,\"delta\":5,\"enabled\":1000,\"running\":250}",
                "{\"type\":\"counter\",\"event\":\"pmu:msr/tsc/\",\"time\":\"2026-11-21T10:23:03.000000000Z\","
                "\"ts\":3000000000,\"value\":2400004000,\"delta\":4000,\"enabled\":3000000000,\"running\":3000000000}",
                "{\"type\":\"lost\",\"cpu\":1,\"count\":17}",
                "{\"type\":\"counter\",\"event\":\"pmu:msr/tsc/\",\"time\":\"2026-11-21T10:23:04.000000000Z\","
                "\"ts\":4000000000,\"value\":2400004000,\"delta\":0,\"enabled\":0,\"running\":0}",
        };

        assert_non_null(f);
        human_init(&h, 0);
        for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
                json_object *o = json_tokener_parse(lines[i]);

                assert_non_null(o);
                human_line(&h, f, o);
                json_object_put(o);
        }
        human_done(&h);
        assert_int_equal(fclose(f), 0);
        if (strcmp(out,
                   "TIME            EVENT                                           VALUE                DELTA     RATE/s    RUN%\n"
                   "10:23:01.000000 pmu:msr/tsc/                               2400000000           2400000000          -  100.0%\n"
                   "10:23:01.000000 hardware:cycles\\x1b                                 5                    5          -   25.0%\n"
                   "10:23:03.000000 pmu:msr/tsc/                               2400004000                 4000      2.00K  100.0%\n"
                   "-- {\"type\":\"lost\",\"cpu\":1,\"count\":17}\n"
                   "TIME            EVENT                                           VALUE                DELTA     RATE/s    RUN%\n"
                   "10:23:04.000000 pmu:msr/tsc/                               2400004000                    0          0       -\n") != 0)
                fail_msg("counter table:\n%s", out);
        free(out);
}

/* Colour: the time dim, the comm and the event coloured, each reset;
 * what is escaped stays escaped inside the colour. */
static void test_color(void **state) {
        struct human h;
        char *out = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&out, &n);
        json_object *o = json_tokener_parse("{\"type\":\"event\",\"event\":\"x:y\",\"time\":\"2026-11-21T10:23:00.2Z\","
                                            "\"pid\":1,\"tid\":1,\"proc\":{\"comm\":\"s\\u001bh\"}}");
        unsigned flags;

        assert_non_null(o);
        assert_non_null(f);
        human_init(&h, HUMAN_COLOR);
        human_line(&h, f, o);
        human_done(&h);
        json_object_put(o);
        assert_int_equal(fclose(f), 0);
        assert_string_equal(out, "\033[2m10:23:00.200000\033[0m \033[32ms\\x1bh\033[0m[1] \033[1;36mx:y\033[0m\n");
        free(out);

        /* auto: on a terminal only, not with NO_COLOR (set, not empty)
         * nor TERM=dumb; always and never as said. */
        unsetenv("NO_COLOR");
        setenv("TERM", "xterm", 1);
        assert_int_equal(human_color_flags("auto", true, &flags), 0);
        assert_int_equal(flags, HUMAN_COLOR);
        assert_int_equal(human_color_flags(NULL, false, &flags), 0);
        assert_int_equal(flags, 0);
        setenv("NO_COLOR", "", 1);
        assert_int_equal(human_color_flags(NULL, true, &flags), 0);
        assert_int_equal(flags, HUMAN_COLOR);
        setenv("NO_COLOR", "1", 1);
        assert_int_equal(human_color_flags("auto", true, &flags), 0);
        assert_int_equal(flags, 0);
        assert_int_equal(human_color_flags("always", false, &flags), 0);
        assert_int_equal(flags, HUMAN_COLOR);
        unsetenv("NO_COLOR");
        setenv("TERM", "dumb", 1);
        assert_int_equal(human_color_flags("auto", true, &flags), 0);
        assert_int_equal(flags, 0);
        assert_int_equal(human_color_flags("never", true, &flags), 0);
        assert_int_equal(flags, 0);
        assert_int_equal(human_color_flags("yes", true, &flags), -EINVAL);
}

/* human_escape(): cut short where it does not fit, never mid-escape. */
static void test_escape(void **state) {
        char buf[16];

        assert_string_equal(human_escape(buf, sizeof(buf), "ab\033cd"), "ab\\x1bcd");
        assert_string_equal(human_escape(buf, 6, "ab\033cd"), "ab");
        assert_string_equal(human_escape(buf, sizeof(buf), "\xc2\x9b\\"), "\\x9b\\\\");
        /* A lone 8-bit CSI, a cut sequence, an overlong one: escaped;
         * valid UTF-8 stays. */
        assert_string_equal(human_escape(buf, sizeof(buf), "\x9b" "1\xc3\xa9\xe2\x82"), "\\x9b1\xc3\xa9\\xe2\\x82");
        assert_string_equal(human_escape(buf, sizeof(buf), "\xc0\xaf"), "\\xc0\\xaf");
}

/* status and describe on a terminal: members aligned, objects as
 * indented sections, arrays of objects as tables (numbers right-aligned,
 * no blanks after a row's last cell), strings escaped, doubles short. */
static void test_object(void **state) {
        json_object *o = json_tokener_parse(
                "{\"type\":\"status\",\"config\":\"/etc/e\\u001b.json\",\"uptime_s\":259.86398700000001,"
                "\"events\":[{\"event\":\"sched:sched_process_exec\",\"count\":12},{\"event\":\"x:y\",\"count\":1234,\"note\":\"n\"}],"
                "\"ring\":{\"pages\":256,\"doorbell\":true},\"names\":[\"a\",\"b\"],\"empty\":{}}");
        char *out = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&out, &n);

        assert_non_null(o);
        assert_non_null(f);
        human_object(f, o, 0);
        assert_int_equal(fclose(f), 0);
        json_object_put(o);
        if (strcmp(out, "config:   /etc/e\\x1b.json\n"
                        "uptime_s: 259.864\n"
                        "events:\n"
                        "  event                     count  note\n"
                        "  sched:sched_process_exec     12\n"
                        "  x:y                        1234  n\n"
                        "ring:\n"
                        "  pages:    256\n"
                        "  doorbell: true\n"
                        "names:    a, b\n"
                        "empty:    {}\n") != 0)
                fail_msg("human_object():\n%s", out);
        free(out);
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
        /* What json-c lets through unchecked: a lone 0x9b byte. */
        f = open_memstream(&out, &n);
        assert_non_null(f);
        human_put_json(f, "\"\x9b[2J\"", 6);
        assert_int_equal(fclose(f), 0);
        assert_string_equal(out, "\"\\u009b[2J\"");
        free(out);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_event),
                cmocka_unit_test(test_context),
                cmocka_unit_test(test_local_time),
                cmocka_unit_test(test_callchain),
                cmocka_unit_test(test_counters),
                cmocka_unit_test(test_color),
                cmocka_unit_test(test_escape),
                cmocka_unit_test(test_object),
                cmocka_unit_test(test_control_characters),
                cmocka_unit_test(test_json_line),
        };
        /* The times in the lines above are UTC's: so are the ones
         * expected, but where a test sets another zone. */
        setenv("TZ", "UTC", 1);
        tzset();
        return cmocka_run_group_tests_name("human", tests, NULL, NULL);
}
