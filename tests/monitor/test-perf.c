/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* perf.c: the cpulist parser on text, the real online list, and the
 * syscall wrapper on a harmless event (our own task clock). */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "evmon/monitor.h"

static void check_list(const char *text, const int *want, size_t n_want) {
        int *cpus = NULL;
        size_t n = 0;

        if (perf_parse_cpu_list(text, &cpus, &n) != 0)
                fail_msg("\"%s\" does not parse", text);
        assert_int_equal(n, n_want);
        for (size_t i = 0; i < n; i++)
                assert_int_equal(cpus[i], want[i]);
        free(cpus);
}

static void test_parse_cpu_list(void **state) {
        static const char *const bad[] = {
                "x", "0-", "-1", "3-1", "0,,1", "0,", "1 2", "0-3x", "99999999", "0-70000",
        };
        int *cpus = NULL;
        size_t n = 7;

        check_list("0\n", (const int[]) { 0 }, 1);
        check_list("0-3,5\n", (const int[]) { 0, 1, 2, 3, 5 }, 5);
        check_list("8,0-1,4-5", (const int[]) { 0, 1, 4, 5, 8 }, 5);
        check_list("2,2,1-2", (const int[]) { 1, 2 }, 2);
        check_list("127", (const int[]) { 127 }, 1);

        /* An empty list is valid (that is what "offline" usually holds). */
        assert_int_equal(perf_parse_cpu_list("\n", &cpus, &n), 0);
        assert_int_equal(n, 0);
        free(cpus);

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                cpus = NULL;
                if (perf_parse_cpu_list(bad[i], &cpus, &n) != -EINVAL)
                        fail_msg("\"%s\" was accepted", bad[i]);
                assert_null(cpus);
        }
}

static void test_online_cpus(void **state) {
        int *cpus = NULL;
        size_t n = 0;

        if (access("/sys/devices/system/cpu/online", R_OK) < 0)
                skip();

        assert_int_equal(perf_online_cpus(&cpus, &n), 0);
        assert_int_equal(n, (size_t) sysconf(_SC_NPROCESSORS_ONLN));
        for (size_t i = 1; i < n; i++)
                assert_true(cpus[i] > cpus[i - 1]);
        free(cpus);
}

static void test_event_open(void **state) {
        struct perf_event_attr attr = {
                .type = PERF_TYPE_SOFTWARE,
                .config = PERF_COUNT_SW_TASK_CLOCK,
                .exclude_kernel = 1,
                .exclude_hv = 1,
        };
        int fd;

        fd = perf_event_open_fd(&attr, 0, -1, -1, 0);
        if (fd == -EACCES || fd == -EPERM || fd == -ENOSYS) {
                print_message("perf_event_open not allowed here (%s)\n", strerror(-fd));
                skip();
        }
        assert_true(fd >= 0);
        assert_int_equal(attr.size, sizeof(attr));
        /* Close-on-exec whatever the caller passed. */
        assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
        close(fd);

        /* Errors come back as -errno, untouched: no such PMU. */
        attr.type = 0x7ffffff0;
        assert_int_equal(perf_event_open_fd(&attr, 0, -1, -1, 0), -ENOENT);
        assert_int_equal(perf_event_open_fd(NULL, 0, -1, -1, 0), -EINVAL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse_cpu_list),
                cmocka_unit_test(test_online_cpus),
                cmocka_unit_test(test_event_open),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
