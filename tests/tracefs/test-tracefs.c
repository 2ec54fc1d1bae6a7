/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tracefs.c on a fixture tree (fixtures/tree: an events/ directory laid
 * out as tracefs lays it out, with the files that are not events, such as
 * header_page and enable, among them) and tracefs_find_mount() on
 * /proc/mounts texts. The real mount is test-kernel.c's. */

#define _GNU_SOURCE 1

#include <errno.h>

#include "test-util.h"

static void test_open_tree(void **state) {
        _cleanup_(tracefs_freep) struct tracefs *t = NULL;
        _cleanup_(freep) char *tree = fixture_path("tree");

        assert_int_equal(tracefs_open(tree, &t), 0);
        assert_non_null(t);
        assert_string_equal(tracefs_path(t), tree);
        assert_null(tracefs_path(NULL));
}

static void test_open_missing(void **state) {
        _cleanup_(freep) char *fixtures = fixture_path("");
        _cleanup_(freep) char *nowhere = fixture_path("no-such-dir");
        _cleanup_(freep) char *file = fixture_path("print.format");
        _cleanup_(freep) char *events = fixture_path("tree/events");
        struct tracefs *t = NULL;

        /* A directory without events/ is no tracefs. */
        assert_int_equal(tracefs_open(fixtures, &t), -ENOENT);
        assert_null(t);
        /* events/ itself has no events/ in it. */
        assert_int_equal(tracefs_open(events, &t), -ENOENT);
        assert_int_equal(tracefs_open(nowhere, &t), -ENOENT);
        assert_int_equal(tracefs_open(file, &t), -ENOTDIR);
        assert_null(t);
        assert_null(tracefs_free(NULL));
}

static void test_read(void **state) {
        _cleanup_(tracefs_freep) struct tracefs *t = NULL;
        _cleanup_(freep) char *tree = fixture_path("tree");
        _cleanup_(freep) char *text = NULL, *expected = fixture_text("sched_process_exec.format");
        char *none = NULL;
        size_t len = 0;

        assert_int_equal(tracefs_open(tree, &t), 0);

        assert_int_equal(tracefs_read(t, "events/sched/sched_process_exec/id", &text, &len), 0);
        assert_string_equal(text, "365\n");
        assert_int_equal(len, 4);
        free(text);
        text = NULL;

        assert_int_equal(tracefs_read(t, "events/sched/sched_process_exec/format", &text, NULL), 0);
        assert_string_equal(text, expected);

        assert_int_equal(tracefs_read(t, "events/nope", &none, &len), -ENOENT);
        assert_null(none);
        assert_int_equal(tracefs_read(t, "/etc/passwd", &none, &len), -EINVAL);
        assert_int_equal(tracefs_read(t, "events", &none, &len), -EISDIR);
}

static void test_event_format(void **state) {
        _cleanup_(tracefs_freep) struct tracefs *t = NULL;
        _cleanup_(freep) char *tree = fixture_path("tree");
        _cleanup_(format_freep) struct format *f = NULL;
        struct format *none = NULL;

        assert_int_equal(tracefs_open(tree, &t), 0);

        assert_int_equal(tracefs_event_format(t, "sched", "sched_process_exec", &f), 0);
        assert_string_equal(f->system, "sched");
        assert_string_equal(f->name, "sched_process_exec");
        assert_int_equal(f->id, 365);
        assert_int_equal(f->n_fields, 7);
        f = format_free(f);

        assert_int_equal(tracefs_event_format(t, "ftrace", "print", &f), 0);
        assert_string_equal(f->system, "ftrace");
        assert_true(format_field_by_name(f, "buf")->flex);

        assert_int_equal(tracefs_event_format(t, "sched", "sched_nope", &none), -ENOENT);
        assert_int_equal(tracefs_event_format(t, "nope", "sched_switch", &none), -ENOENT);
        /* A directory that is no event. */
        assert_int_equal(tracefs_event_format(t, "sched", "enable", &none), -ENOTDIR);
        /* Names are one path component. */
        assert_int_equal(tracefs_event_format(t, "sched/../sched", "sched_switch", &none), -EINVAL);
        assert_int_equal(tracefs_event_format(t, "..", "events", &none), -EINVAL);
        assert_int_equal(tracefs_event_format(t, "sched", "", &none), -EINVAL);
        assert_int_equal(tracefs_event_format(t, NULL, "sched_switch", &none), -EINVAL);
        assert_null(none);
}

static void test_list_events(void **state) {
        _cleanup_(tracefs_freep) struct tracefs *t = NULL;
        _cleanup_(freep) char *tree = fixture_path("tree");
        _cleanup_(strv_freep) char **l = NULL;
        static const char *const expected[] = {
                "ftrace:print",
                "sched:sched_process_exec",
                "sched:sched_switch",
                "syscalls:sys_enter_openat",
        };

        assert_int_equal(tracefs_open(tree, &t), 0);
        assert_int_equal(tracefs_list_events(t, &l), (int) ELEMENTSOF(expected));
        for (size_t i = 0; i < ELEMENTSOF(expected); i++)
                assert_string_equal(l[i], expected[i]);
        assert_null(l[ELEMENTSOF(expected)]);
}

static void test_find_mount(void **state) {
        static const struct {
                const char *mounts;
                const char *expected;
        } cases[] = {
                { "sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0\n"
                  "nodev /sys/kernel/tracing tracefs rw,relatime 0 0\n",
                  "/sys/kernel/tracing" },
                /* The usual place wins over debugfs's automount and others,
                 * wherever it is listed. */
                { "tracefs /mnt/t tracefs rw 0 0\n"
                  "tracefs /sys/kernel/debug/tracing tracefs rw 0 0\n"
                  "nodev /sys/kernel/tracing tracefs rw,relatime 0 0",
                  "/sys/kernel/tracing" },
                { "debugfs /sys/kernel/debug debugfs rw 0 0\n"
                  "tracefs /mnt/t tracefs rw 0 0\n"
                  "tracefs /sys/kernel/debug/tracing tracefs rw 0 0\n",
                  "/sys/kernel/debug/tracing" },
                { "tracefs /mnt/first tracefs rw 0 0\ntracefs /mnt/second tracefs rw 0 0\n", "/mnt/first" },
                /* Octal escapes of /proc/mounts. */
                { "tracefs /mnt/with\\040space\\011tab tracefs rw 0 0\n", "/mnt/with space\ttab" },
                /* Only the type counts, not the device name. */
                { "tracefs /mnt/notrace debugfs rw 0 0\nnone /mnt/real tracefs rw 0 0\n", "/mnt/real" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(freep) char *p = NULL;

                assert_int_equal(tracefs_find_mount(cases[i].mounts, &p), 0);
                assert_string_equal(p, cases[i].expected);
        }

        char *p = NULL;
        assert_int_equal(tracefs_find_mount("", &p), -ENOENT);
        assert_int_equal(tracefs_find_mount("proc /proc proc rw 0 0\n\n  \nbroken\n", &p), -ENOENT);
        assert_int_equal(tracefs_find_mount("debugfs /sys/kernel/debug debugfs rw 0 0\n", &p), -ENOENT);
        assert_null(p);
        assert_int_equal(tracefs_find_mount(NULL, &p), -EINVAL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_open_tree),
                cmocka_unit_test(test_open_missing),
                cmocka_unit_test(test_read),
                cmocka_unit_test(test_event_format),
                cmocka_unit_test(test_list_events),
                cmocka_unit_test(test_find_mount),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
