/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* probe.c on the real kernel, with uprobes (this host has no kprobes; the
 * VM test covers those). Needs root and uprobe_events; exits 77 otherwise.
 *
 * Probes go into the test's own groups (evmontest_PID), never "evmon", so
 * that a daemon under test elsewhere is not disturbed. Fetched values are checked by
 * enabling the events in a private trace instance and running the target. */

#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../host-tracing.h"
#include "evmon/cleanup.h"
#include "evmon/probe.h"
#include "evmon/tracefs.h"
#include "../test-util.h"

/* Per process, so that two test runs at once (two build trees) do not
 * remove each other's probes. test_foreign starts like test_group on
 * purpose. */
static char test_group[32], test_foreign[48];

static struct tracefs *tfs;
static char *target_sym;        /* "PROBE_TARGET:evmon_target" */

static void assert_contains(const char *haystack, const char *needle) {
        if (!haystack || !strstr(haystack, needle))
                fail_msg("\"%s\" does not contain \"%s\"", haystack ? haystack : "(null)", needle);
}

static int write_tracefs(const char *rel, const char *text) {
        _cleanup_(freep) char *path = NULL;
        _cleanup_(closep) int fd = -1;

        assert_true(asprintf(&path, "%s/%s", tracefs_path(tfs), rel) > 0);
        fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (write(fd, text, strlen(text)) < 0)
                return -errno;
        return 0;
}

static bool event_exists(const char *group, const char *name) {
        _cleanup_(format_freep) struct format *f = NULL;
        int r = tracefs_event_format(tfs, group, name, &f);

        assert_true(r == 0 || r == -ENOENT);
        return r == 0;
}

static void add_ok(const char *group, enum probe_kind kind, const char *name, const char *target,
                   char **fetch, size_t n_fetch, struct format **ret) {
        _cleanup_(freep) char *err = NULL;
        struct probe_spec p = { kind, name, target, fetch, n_fetch };
        int r;

        r = probe_add(tfs, group, &p, ret, &err);
        if (r < 0)
                fail_msg("probe_add(%s/%s): %s: %s", group, name, strerror(-r), err ? err : "");
        assert_null(err);
}

/* Runs the target with the events of group enabled in a private trace
 * instance; returns what the instance recorded. */
static char *trace_target(const char *const *names, size_t n, const char *arg_s, const char *arg_n) {
        _cleanup_(freep) char *inst = NULL, *dir = NULL;
        char *text = NULL;
        size_t len;
        pid_t pid;
        int status;

        assert_true(asprintf(&inst, "instances/evmontest_%d", (int) getpid()) > 0);
        assert_true(asprintf(&dir, "%s/%s", tracefs_path(tfs), inst) > 0);
        assert_int_equal(mkdir(dir, 0700), 0);

        for (size_t i = 0; i < n; i++) {
                _cleanup_(freep) char *rel = NULL;

                assert_true(asprintf(&rel, "%s/events/%s/%s/enable", inst, test_group, names[i]) > 0);
                assert_int_equal(write_tracefs(rel, "1"), 0);
        }

        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                execl(test_env("PROBE_TARGET"), "probe-target", arg_s, arg_n, (char *) NULL);
                _exit(127);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));

        for (size_t i = 0; i < n; i++) {
                _cleanup_(freep) char *rel = NULL;

                assert_true(asprintf(&rel, "%s/events/%s/%s/enable", inst, test_group, names[i]) > 0);
                assert_int_equal(write_tracefs(rel, "0"), 0);
        }
        free(inst);
        assert_true(asprintf(&inst, "instances/evmontest_%d/trace", (int) getpid()) > 0);
        assert_int_equal(tracefs_read(tfs, inst, &text, &len), 0);
        assert_int_equal(rmdir(dir), 0);
        return text;
}

static void test_uprobe_fetch_args(void **state) {
        _cleanup_(format_freep) struct format *entry = NULL, *ret = NULL;
        _cleanup_(freep) char *trace = NULL;
        char *entry_args[] = { "s=+0(%di):string", "n=%si:s64" };
        char *ret_args[] = { "ret=$retval:s64" };
        const char *const names[] = { "target_entry", "target_ret" };
        const struct format_field *f;

        add_ok(test_group, PROBE_UPROBE, "target_entry", target_sym, entry_args, 2, &entry);
        add_ok(test_group, PROBE_URETPROBE, "target_ret", target_sym, ret_args, 1, &ret);

        assert_string_equal(entry->system, test_group);
        assert_string_equal(entry->name, "target_entry");
        assert_true(entry->id > 0);
        assert_true(ret->id > 0 && ret->id != entry->id);

        f = format_field_find(entry, "s");
        assert_non_null(f);
        assert_int_equal(f->kind, FIELD_DYN_STRING);
        f = format_field_find(entry, "n");
        assert_non_null(f);
        assert_int_equal(f->kind, FIELD_INT);
        assert_int_equal(f->size, 8);
        assert_true(f->is_signed);
        assert_non_null(format_field_find(entry, "__probe_ip"));

        f = format_field_find(ret, "ret");
        assert_non_null(f);
        assert_int_equal(f->kind, FIELD_INT);
        assert_true(f->is_signed);
        assert_non_null(format_field_find(ret, "__probe_func"));
        assert_non_null(format_field_find(ret, "__probe_ret_ip"));

        /* The probes sit on the right instruction and fetch the right
         * values: evmon_target("evmon-hello", -7) returns 11 - 7. */
        trace = trace_target(names, 2, "evmon-hello", "-7");
        assert_contains(trace, "target_entry: (");
        assert_contains(trace, "s=\"evmon-hello\" n=-7");
        assert_contains(trace, "target_ret: (");
        assert_contains(trace, "ret=4");

        assert_int_equal(probe_remove(tfs, test_group, PROBE_UPROBE, "target_entry"), 0);
        assert_int_equal(probe_remove(tfs, test_group, PROBE_URETPROBE, "target_ret"), 0);
        assert_false(event_exists(test_group, "target_entry"));
        assert_false(event_exists(test_group, "target_ret"));
        assert_int_equal(probe_remove(tfs, test_group, PROBE_UPROBE, "target_entry"), -ENOENT);
}

static void test_kernel_refusal(void **state) {
        _cleanup_(freep) char *err = NULL;
        char *bad[] = { "x=%zz" };
        struct probe_spec p = { PROBE_UPROBE, "bad", target_sym, bad, 1 };
        struct format *f = NULL;

        assert_int_equal(probe_add(tfs, test_group, &p, &f, &err), -EINVAL);
        assert_null(f);
        /* The kernel's error_log entry, caret and all. */
        assert_contains(err, "trace_uprobe: error:");
        {
                _cleanup_(freep) char *cmd = NULL;

                assert_true(asprintf(&cmd, "Command: p:%s/bad ", test_group) > 0);
                assert_contains(err, cmd);
        }
        assert_contains(err, "x=%zz");
        assert_contains(err, "^");
        assert_false(event_exists(test_group, "bad"));
}

static void test_exists(void **state) {
        _cleanup_(freep) char *err = NULL;
        struct probe_spec p = { PROBE_UPROBE, "twice", target_sym, NULL, 0 };

        add_ok(test_group, PROBE_UPROBE, "twice", target_sym, NULL, 0, NULL);
        assert_int_equal(probe_add(tfs, test_group, &p, NULL, &err), -EEXIST);
        assert_non_null(err);
        assert_int_equal(probe_remove(tfs, test_group, PROBE_UPROBE, "twice"), 0);
}

static int perf_open(struct perf_event_attr *attr, pid_t pid, int cpu) {
        return (int) syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static void test_busy(void **state) {
        _cleanup_(format_freep) struct format *f = NULL;
        struct perf_event_attr attr = {};
        int fd;

        add_ok(test_group, PROBE_UPROBE, "busy", target_sym, NULL, 0, &f);
        attr.size = sizeof(attr);
        attr.type = PERF_TYPE_TRACEPOINT;
        attr.config = f->id;
        attr.disabled = 1;
        fd = perf_open(&attr, -1, 0);
        assert_true(fd >= 0);

        /* A perf fd holds the event: close fds before deleting probes. */
        assert_int_equal(probe_remove(tfs, test_group, PROBE_UPROBE, "busy"), -EBUSY);
        close(fd);
        assert_int_equal(probe_remove(tfs, test_group, PROBE_UPROBE, "busy"), 0);
}

static void test_remove_group(void **state) {
        unsigned n = 99;

        add_ok(test_group, PROBE_UPROBE, "a", target_sym, NULL, 0, NULL);
        add_ok(test_group, PROBE_URETPROBE, "b", target_sym, NULL, 0, NULL);
        /* A group whose name starts like ours is not ours. */
        add_ok(test_foreign, PROBE_UPROBE, "a", target_sym, NULL, 0, NULL);

        assert_int_equal(probe_remove_group(tfs, test_group, &n), 0);
        assert_int_equal(n, 2);
        assert_false(event_exists(test_group, "a"));
        assert_false(event_exists(test_group, "b"));
        assert_true(event_exists(test_foreign, "a"));

        assert_int_equal(probe_remove_group(tfs, test_group, &n), 0);
        assert_int_equal(n, 0);
        assert_int_equal(probe_remove_group(tfs, test_foreign, &n), 0);
        assert_int_equal(n, 1);
        assert_false(event_exists(test_foreign, "a"));
}

static void test_record_cleanup(void **state) {
        _cleanup_(freep) char *path = NULL;
        char dir[] = "/tmp/evmon-test-probe-XXXXXX";
        unsigned n = 0;

        assert_non_null(mkdtemp(dir));
        assert_true(asprintf(&path, "%s/evmon/probes", dir) > 0);

        assert_int_equal(probe_record_group(path, test_foreign), 0);
        add_ok(test_foreign, PROBE_UPROBE, "left_over", target_sym, NULL, 0, NULL);
        add_ok(test_group, PROBE_UPROBE, "not_recorded", target_sym, NULL, 0, NULL);

        assert_int_equal(probe_record_cleanup(tfs, path, &n), 0);
        assert_int_equal(n, 1);
        assert_false(event_exists(test_foreign, "left_over"));
        assert_true(event_exists(test_group, "not_recorded"));
        assert_int_equal(access(path, F_OK), -1);

        assert_int_equal(probe_remove(tfs, test_group, PROBE_UPROBE, "not_recorded"), 0);
        rmdir(path);
        *strrchr(path, '/') = 0;
        rmdir(path);
        rmdir(dir);
}

/* Probed through the uprobe PMU in this very process. */
__attribute__((noinline, used)) int evmon_self_target(int x);
__attribute__((noinline, used)) int evmon_self_target(int x) {
        __asm__ volatile("" ::: "memory");
        return x + 1;
}

static void count_pmu_hits(enum probe_kind kind) {
        _cleanup_(freep) char *target = NULL, *err = NULL;
        struct probe_pmu pmu = {};
        struct perf_event_attr attr = {};
        int (*volatile fn)(int) = evmon_self_target;
        uint64_t count = 0;
        int fd, r;

        assert_true(asprintf(&target, "/proc/self/exe:evmon_self_target") > 0);
        r = probe_pmu_attr(NULL, &(struct probe_spec) { kind, "self", target, NULL, 0 }, &pmu, &err);
        if (r == -EOPNOTSUPP) {
                probe_pmu_done(&pmu);
                skip();
        }
        if (r < 0)
                fail_msg("probe_pmu_attr: %s: %s", strerror(-r), err ? err : "");

        attr.size = sizeof(attr);
        attr.type = pmu.type;
        attr.config = pmu.config;
        attr.config1 = pmu.config1;
        attr.config2 = pmu.config2;
        attr.exclude_kernel = 1;
        fd = perf_open(&attr, 0, -1);
        if (fd < 0)
                fail_msg("perf_event_open(uprobe PMU type %u, %s+0x%" PRIx64 "): %m", pmu.type, pmu.string,
                         pmu.config2);
        probe_pmu_done(&pmu);

        for (int i = 0; i < 3; i++)
                (void) fn(i);
        assert_int_equal(read(fd, &count, sizeof(count)), sizeof(count));
        close(fd);
        assert_int_equal(count, 3);
}

static void test_pmu_uprobe(void **state) {
        count_pmu_hits(PROBE_UPROBE);
}

static void test_pmu_uretprobe(void **state) {
        count_pmu_hits(PROBE_URETPROBE);
}

/* A PMU-created probe's raw record decodes with probe_pmu_format(): the
 * uprobe's __probe_ip is the function's address in this process, and a
 * uretprobe's __probe_func the same. Reads one PERF_SAMPLE_RAW sample
 * straight from the mmap ring. */
static void check_pmu_raw(enum probe_kind kind) {
        _cleanup_(freep) char *err = NULL;
        _cleanup_(strv_freep) char **events = NULL;
        _cleanup_(format_freep) struct format *ref = NULL, *fmt = NULL;
        struct probe_pmu pmu = {};
        struct perf_event_attr attr = {};
        struct perf_event_mmap_page *page;
        const struct perf_event_header *h;
        const struct format_field *f;
        struct field_value v;
        int (*volatile fn)(int) = evmon_self_target;
        long psize = sysconf(_SC_PAGESIZE);
        const uint8_t *data;
        uint32_t raw_size;
        uint64_t head;
        char *sep;
        int fd, r;

        /* Any event's format gives the common header. */
        assert_true(tracefs_list_events(tfs, &events) > 0);
        assert_non_null(events[0]);
        sep = strchr(events[0], ':');
        assert_non_null(sep);
        *sep = 0;
        assert_int_equal(tracefs_event_format(tfs, events[0], sep + 1, &ref), 0);
        assert_int_equal(probe_pmu_format(ref, kind, "self", &fmt), 0);

        r = probe_pmu_attr(NULL, &(struct probe_spec) { kind, "self", "/proc/self/exe:evmon_self_target", NULL, 0 },
                           &pmu, &err);
        if (r == -EOPNOTSUPP)
                skip();
        assert_int_equal(r, 0);
        attr.size = sizeof(attr);
        attr.type = pmu.type;
        attr.config = pmu.config;
        attr.config1 = pmu.config1;
        attr.config2 = pmu.config2;
        attr.sample_period = 1;
        attr.sample_type = PERF_SAMPLE_RAW;
        attr.exclude_kernel = 1;
        fd = perf_open(&attr, 0, -1);
        probe_pmu_done(&pmu);
        assert_true(fd >= 0);
        page = mmap(NULL, (size_t) psize * 2, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        assert_true(page != MAP_FAILED);

        (void) fn(1);

        head = __atomic_load_n(&page->data_head, __ATOMIC_ACQUIRE);
        assert_true(head >= sizeof(*h));
        data = (const uint8_t *) page + psize;
        h = (const struct perf_event_header *) data;
        assert_int_equal(h->type, PERF_RECORD_SAMPLE);
        memcpy(&raw_size, data + sizeof(*h), sizeof(raw_size));
        assert_true(raw_size >= fmt->min_size);

        f = format_field_find(fmt, probe_kind_is_return(kind) ? "__probe_func" : "__probe_ip");
        assert_non_null(f);
        assert_int_equal(field_decode(f, data + sizeof(*h) + 4, raw_size, &v), 0);
        assert_int_equal(v.u, (uintptr_t) evmon_self_target);
        if (probe_kind_is_return(kind)) {
                /* The return address lies in count's caller: some code of
                 * this program after the call. */
                f = format_field_find(fmt, "__probe_ret_ip");
                assert_non_null(f);
                assert_int_equal(field_decode(f, data + sizeof(*h) + 4, raw_size, &v), 0);
                assert_true(v.u != 0 && v.u != (uintptr_t) evmon_self_target);
        }

        munmap(page, (size_t) psize * 2);
        close(fd);
}

static void test_pmu_raw_uprobe(void **state) {
        check_pmu_raw(PROBE_UPROBE);
}

static void test_pmu_raw_uretprobe(void **state) {
        check_pmu_raw(PROBE_URETPROBE);
}

static int setup(void **state) {
        (void) probe_remove_group(tfs, test_group, NULL);
        (void) probe_remove_group(tfs, test_foreign, NULL);
        return 0;
}

int main(void) {
        host_tracing_require_usable();
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_uprobe_fetch_args, setup, setup),
                cmocka_unit_test_setup_teardown(test_kernel_refusal, setup, setup),
                cmocka_unit_test_setup_teardown(test_exists, setup, setup),
                cmocka_unit_test_setup_teardown(test_busy, setup, setup),
                cmocka_unit_test_setup_teardown(test_remove_group, setup, setup),
                cmocka_unit_test_setup_teardown(test_record_cleanup, setup, setup),
                cmocka_unit_test(test_pmu_uprobe),
                cmocka_unit_test(test_pmu_uretprobe),
                cmocka_unit_test(test_pmu_raw_uprobe),
                cmocka_unit_test(test_pmu_raw_uretprobe),
        };
        _cleanup_(freep) char *path = NULL;
        int r;

        if (geteuid() != 0) {
                printf("SKIP: adding probes needs root\n");
                return 77;
        }
        r = tracefs_open(NULL, &tfs);
        if (r < 0) {
                printf("SKIP: no tracefs: %s\n", strerror(-r));
                return 77;
        }
        assert_true(asprintf(&path, "%s/uprobe_events", tracefs_path(tfs)) > 0);
        if (access(path, W_OK) < 0) {
                printf("SKIP: this kernel has no %s (CONFIG_UPROBE_EVENTS)\n", path);
                tracefs_free(tfs);
                return 77;
        }
        assert_true(asprintf(&target_sym, "%s:evmon_target", test_env("PROBE_TARGET")) > 0);
        snprintf(test_group, sizeof(test_group), "evmontest_%d", (int) getpid());
        snprintf(test_foreign, sizeof(test_foreign), "%sforeign", test_group);

        r = cmocka_run_group_tests(tests, NULL, NULL);

        free(target_sym);
        tracefs_free(tfs);
        return r;
}
