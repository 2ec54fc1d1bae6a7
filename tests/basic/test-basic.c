/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* src/basic/: number parsing, error messages, whole-file and sysfs reads,
 * string vectors, the connection to a Unix socket, kallsyms lines, the
 * clocks. */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>

#include "evmon/cleanup.h"
#include "evmon/clock.h"
#include "evmon/connect.h"
#include "evmon/error.h"
#include "evmon/io.h"
#include "evmon/kallsyms.h"
#include "evmon/parse.h"
#include "evmon/protocol.h"
#include "evmon/strv.h"

static void test_parse_u64(void **state) {
        static const struct { const char *s; int r; uint64_t v; } cases[] = {
                { "0", 0, 0 },
                { "42", 0, 42 },
                { "0x1a2", 0, 0x1a2 },
                { "010", 0, 8 },
                { "18446744073709551615", 0, UINT64_MAX },
                { "18446744073709551616", -EINVAL, 0 },
                { "", -EINVAL, 0 },
                { "-1", -EINVAL, 0 },
                { "12abc", -EINVAL, 0 },
                { "0x", -EINVAL, 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                uint64_t v = 7;

                assert_int_equal(parse_u64(cases[i].s, &v), cases[i].r);
                assert_true(v == (cases[i].r == 0 ? cases[i].v : 7));
        }
        assert_int_equal(parse_u64(NULL, &(uint64_t) {0}), -EINVAL);
}

static void test_parse_pid(void **state) {
        static const char *const bad[] = { "", "0", "-1", "+1", " 1", "1x", ".", "..", "self",
                                           "2147483648", "99999999999999999999" };
        pid_t pid = 0;

        assert_int_equal(parse_pid("1", &pid), 0);
        assert_int_equal(pid, 1);
        assert_int_equal(parse_pid("2147483647", &pid), 0);
        assert_int_equal(pid, INT32_MAX);
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                assert_int_equal(parse_pid(bad[i], &pid), -EINVAL);
}

static void test_error_set(void **state) {
        _cleanup_(freep) char *e = NULL;

        assert_int_equal(error_set(&e, -ENOENT, "no %s", "thing"), -ENOENT);
        assert_string_equal(e, "no thing");
        /* An old message is replaced, not leaked (ASan says). */
        assert_int_equal(error_set(&e, -EINVAL, "bad %d", 3), -EINVAL);
        assert_string_equal(e, "bad 3");
        assert_int_equal(error_set(NULL, -EIO, "dropped"), -EIO);
}

static void test_read_full(void **state) {
        _cleanup_(freep) char *text = NULL;
        _cleanup_(freep) char *big = malloc(100000);
        size_t len = 0;
        int p[2];

        assert_non_null(big);
        memset(big, 'x', 100000);
        /* A pipe has no size: read until the end, across buffer growth. */
        assert_int_equal(pipe(p), 0);
        if (fork() == 0) {
                close(p[0]);
                _exit(loop_write(p[1], big, 100000) < 0);
        }
        close(p[1]);
        assert_int_equal(read_full(p[0], 0, &text, &len), 0);
        close(p[0]);
        assert_int_equal(len, 100000);
        assert_int_equal(text[len], '\0');
        assert_memory_equal(text, big, len);

        assert_int_equal(pipe(p), 0);
        assert_int_equal(loop_write(p[1], "0123456789", 10), 0);
        close(p[1]);
        free(TAKE_PTR(text));
        assert_int_equal(read_full(p[0], 5, &text, &len), -EFBIG);
        assert_null(text);
        close(p[0]);
}

static void put(const char *dir, const char *name, const char *text) {
        char path[PATH_MAX];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        assert_non_null(f = fopen(path, "we"));
        fputs(text, f);
        fclose(f);
}

static void test_sysfs(void **state) {
        char dir[] = "/tmp/evmon-test-basic-XXXXXX", path[PATH_MAX], buf[8];
        uint32_t type = 0;

        assert_non_null(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/msr", dir);
        assert_int_equal(mkdir(path, 0700), 0);
        put(path, "type", "12 \n");
        snprintf(path, sizeof(path), "%s/bad", dir);
        assert_int_equal(mkdir(path, 0700), 0);
        put(path, "type", "msr\n");

        snprintf(path, sizeof(path), "%s/msr/type", dir);
        assert_int_equal(sysfs_read_small(path, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "12");
        assert_int_equal(sysfs_read_small(path, buf, 3), -E2BIG);

        assert_int_equal(sysfs_pmu_type(dir, "msr", &type), 0);
        assert_int_equal(type, 12);
        assert_int_equal(sysfs_pmu_type(dir, "bad", &type), -EBADMSG);
        assert_int_equal(sysfs_pmu_type(dir, "none", &type), -ENOENT);

        snprintf(path, sizeof(path), "rm -rf '%s'", dir);
        assert_int_equal(system(path), 0);
}

static void test_connect(void **state) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        char dir[] = "/tmp/evmon-test-basic-XXXXXX", path[PATH_MAX], lng[200];
        _cleanup_(closep) int listener = -1, fd = -1;

        assert_non_null(mkdtemp(dir));
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/s.sock", dir);
        assert_true((listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) >= 0);
        assert_int_equal(bind(listener, (struct sockaddr *) &sa, sizeof(sa)), 0);
        assert_int_equal(listen(listener, 1), 0);

        fd = evmon_connect(sa.sun_path);
        assert_true(fd >= 0);
        assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);

        snprintf(path, sizeof(path), "%s/none.sock", dir);
        assert_int_equal(evmon_connect(path), -ENOENT);

        /* --socket, then $EVMON_SOCKET, then the default; "" is unset. */
        assert_string_equal(evmon_socket_path("/a.sock"), "/a.sock");
        assert_int_equal(setenv("EVMON_SOCKET", "/b.sock", 1), 0);
        assert_string_equal(evmon_socket_path(NULL), "/b.sock");
        assert_int_equal(setenv("EVMON_SOCKET", "", 1), 0);
        assert_string_equal(evmon_socket_path(NULL), EVMON_SOCKET_PATH_DEFAULT);
        assert_string_equal(evmon_socket_path(""), EVMON_SOCKET_PATH_DEFAULT);
        assert_int_equal(unsetenv("EVMON_SOCKET"), 0);
        memset(lng, 'a', sizeof(lng) - 1);
        lng[sizeof(lng) - 1] = '\0';
        assert_int_equal(evmon_connect(lng), -ENAMETOOLONG);

        snprintf(path, sizeof(path), "rm -rf '%s'", dir);
        assert_int_equal(system(path), 0);
}

/* Each line as the kernel writes it, and the lines that are no symbol. */
static void test_kallsyms_lines(void **state) {
        static const char text[] =
                "ffffffff81000000 T _stext\n"
                "ffffffffc0001000 t helper\t[ext4]\n"
                "0000000000000000 D jiffies\n"
                "ffffffff8100000 Tx bad_separator\n"
                "zz T no_address\n"
                "ffffffff81000010 t broken\t[ext4\n"
                "ffffffff81000020 W last";
        const char *p = text, *end = text + strlen(text);
        struct kallsyms_line l;

        assert_int_equal(kallsyms_line_next(&p, end, &l), 1);
        assert_true(l.addr == 0xffffffff81000000ULL && l.type == 'T' && !l.module);
        assert_memory_equal(l.name, "_stext", l.name_len);
        assert_int_equal(kallsyms_line_next(&p, end, &l), 1);
        assert_int_equal(l.module_len, 4);
        assert_memory_equal(l.module, "ext4", 4);
        assert_memory_equal(l.name, "helper", l.name_len);
        assert_int_equal(kallsyms_line_next(&p, end, &l), 1);
        assert_true(l.addr == 0 && l.type == 'D');
        assert_int_equal(kallsyms_line_next(&p, end, &l), 0);
        assert_int_equal(kallsyms_line_next(&p, end, &l), 0);
        assert_int_equal(kallsyms_line_next(&p, end, &l), 0);
        assert_int_equal(kallsyms_line_next(&p, end, &l), 1);
        assert_memory_equal(l.name, "last", l.name_len);
        assert_true(p > end - 1);
}

static void test_strv(void **state) {
        _cleanup_(strv_freep) char **l = NULL, **c = NULL, **empty = NULL;
        _cleanup_(strv_builder_done) struct strv_builder b = {};
        static const char *const words[] = { "pmu", "cpu", "msr", "breakpoint", "kprobe", "uprobe",
                                             "software", "tracepoint", "power", "cstate_core", "cstate_pkg",
                                             "intel_pt", "uncore_imc", "uncore_cbox_0", "uncore_cbox_1",
                                             "i915", "amd_iommu" };

        for (size_t i = 0; i < ELEMENTSOF(words); i++)
                assert_int_equal(strv_builder_add(&b, strdup(words[i])), 0);
        strv_sort(b.l, b.n);
        assert_int_equal(strv_builder_finish(&b, &l), 0);
        assert_null(b.l);
        assert_int_equal(strv_length(l), ELEMENTSOF(words));
        for (size_t i = 1; l[i]; i++)
                assert_true(strcmp(l[i - 1], l[i]) < 0);
        assert_true(strv_contains(l, "msr"));
        assert_false(strv_contains(l, "ms"));

        assert_int_equal(strv_copy(l, &c), 0);
        assert_true(c != l && strv_equal(l, c));
        free(c[3]);
        assert_non_null(c[3] = strdup("other"));
        assert_false(strv_equal(l, c));

        assert_int_equal(strv_builder_finish(&b, &empty), 0);
        assert_non_null(empty);
        assert_int_equal(strv_length(empty), 0);
        assert_true(strv_equal(empty, NULL));
        assert_false(strv_equal(l, NULL));
        strv_free(TAKE_PTR(c));
        assert_int_equal(strv_copy(NULL, &c), 0);
        assert_null(c);
}

static void test_clock(void **state) {
        uint64_t a = now_ns(CLOCK_MONOTONIC), us = now_usec();
        int64_t ms = now_ms();

        assert_true(now_ns(CLOCK_MONOTONIC) >= a);
        assert_true(us >= a / NSEC_PER_USEC);
        assert_true((uint64_t) ms >= a / NSEC_PER_MSEC);
        assert_true(now_ns(CLOCK_REALTIME) > 1700000000 * NSEC_PER_SEC);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse_u64),
                cmocka_unit_test(test_parse_pid),
                cmocka_unit_test(test_error_set),
                cmocka_unit_test(test_read_full),
                cmocka_unit_test(test_sysfs),
                cmocka_unit_test(test_connect),
                cmocka_unit_test(test_kallsyms_lines),
                cmocka_unit_test(test_strv),
                cmocka_unit_test(test_clock),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
