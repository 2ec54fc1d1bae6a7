/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Kprobes through probe.c, run inside the VM (tests/vm/vm-run) on Debian's
 * stock kernel, which has them (this build host has not). Adds a kprobe on
 * do_sys_openat2 with fetch-args and a kretprobe, checks their formats,
 * checks the values by tracing an open() in a private trace instance,
 * counts opens through the kprobe PMU, and removes everything. */

#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "evmon/cleanup.h"
#include "evmon/probe.h"
#include "evmon/tracefs.h"

#define GROUP "evmonvm"
#define OPEN_PATH "/tmp/evmon-vm-kprobe-marker"

static struct tracefs *tfs;

static void assert_contains(const char *haystack, const char *needle) {
        if (!haystack || !strstr(haystack, needle))
                fail_msg("\"%s\" does not contain \"%s\"", haystack ? haystack : "(null)", needle);
}

static void write_tracefs(const char *rel, const char *text) {
        _cleanup_(freep) char *path = NULL;
        _cleanup_(closep) int fd = -1;

        assert_true(asprintf(&path, "%s/%s", tracefs_path(tfs), rel) > 0);
        fd = open(path, O_WRONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, strlen(text)), (ssize_t) strlen(text));
}

static void print_format(const struct format *f) {
        printf("%s:%s id=%" PRIu32 "\n", f->system, f->name, f->id);
        for (size_t i = f->n_common; i < f->n_fields; i++)
                printf("  %s %s offset=%" PRIu32 " size=%" PRIu32 " kind=%s signed=%d\n", f->fields[i].type,
                       f->fields[i].name, f->fields[i].offset, f->fields[i].size,
                       field_kind_to_string(f->fields[i].kind), f->fields[i].is_signed);
}

static void test_kprobe(void **state) {
        _cleanup_(format_freep) struct format *entry = NULL, *ret = NULL;
        _cleanup_(freep) char *err = NULL, *trace = NULL, *inst = NULL, *dir = NULL;
        char *entry_args[] = { "path=+0(%si):ustring", "dfd=%di:s32" };
        char *ret_args[] = { "ret=$retval:s32" };
        struct probe_spec open_p = { PROBE_KPROBE, "open", "do_sys_openat2", entry_args, 2 };
        struct probe_spec ret_p = { PROBE_KRETPROBE, "open_ret", "do_sys_openat2", ret_args, 1 };
        const struct format_field *f;
        size_t len;
        int r, fd;

        r = probe_add(tfs, GROUP, &open_p, &entry, &err);
        if (r < 0)
                fail_msg("kprobe: %s: %s", strerror(-r), err ? err : "");
        r = probe_add(tfs, GROUP, &ret_p, &ret, &err);
        if (r < 0)
                fail_msg("kretprobe: %s: %s", strerror(-r), err ? err : "");
        print_format(entry);
        print_format(ret);

        assert_true(entry->id > 0);
        f = format_field_find(entry, "path");
        assert_non_null(f);
        assert_int_equal(f->kind, FIELD_DYN_STRING);
        f = format_field_find(entry, "dfd");
        assert_non_null(f);
        assert_int_equal(f->kind, FIELD_INT);
        assert_int_equal(f->size, 4);
        assert_true(f->is_signed);
        assert_non_null(format_field_find(entry, "__probe_ip"));
        f = format_field_find(ret, "ret");
        assert_non_null(f);
        assert_int_equal(f->size, 4);
        assert_true(f->is_signed);
        assert_non_null(format_field_find(ret, "__probe_ret_ip"));

        /* Values, in a private instance: an openat() of a path that does
         * not exist gives dfd AT_FDCWD (-100) and ret -ENOENT (-2). */
        assert_true(asprintf(&inst, "instances/evmonvm") > 0);
        assert_true(asprintf(&dir, "%s/%s", tracefs_path(tfs), inst) > 0);
        assert_int_equal(mkdir(dir, 0700), 0);
        write_tracefs("instances/evmonvm/events/" GROUP "/enable", "1");
        fd = open(OPEN_PATH, O_RDONLY);
        assert_int_equal(fd, -1);
        write_tracefs("instances/evmonvm/events/" GROUP "/enable", "0");
        assert_int_equal(tracefs_read(tfs, "instances/evmonvm/trace", &trace, &len), 0);
        assert_int_equal(rmdir(dir), 0);
        assert_contains(trace, "path=\"" OPEN_PATH "\" dfd=-100");
        assert_contains(trace, "ret=-2");

        /* A bad fetch-arg: the kernel's own words come back. */
        {
                _cleanup_(freep) char *why = NULL;
                char *bad[] = { "x=%nosuchreg" };
                struct probe_spec p = { PROBE_KPROBE, "bad", "do_sys_openat2", bad, 1 };

                assert_int_equal(probe_add(tfs, GROUP, &p, NULL, &why), -EINVAL);
                printf("kernel refusal: %s\n", why);
                assert_contains(why, "trace_kprobe: error:");
                assert_contains(why, "Command: p:" GROUP "/bad");
        }
        /* And a symbol the kernel does not have. */
        {
                _cleanup_(freep) char *why = NULL;
                struct probe_spec p = { PROBE_KPROBE, "nosym", "evmon_no_such_function", NULL, 0 };

                r = probe_add(tfs, GROUP, &p, NULL, &why);
                assert_true(r < 0);
                printf("kernel refusal: %s\n", why);
                assert_non_null(why);
        }

        assert_int_equal(probe_remove(tfs, GROUP, PROBE_KPROBE, "open"), 0);
        assert_int_equal(probe_remove(tfs, GROUP, PROBE_KRETPROBE, "open_ret"), 0);
        assert_int_equal(tracefs_event_format(tfs, GROUP, "open", &(struct format *) { NULL }), -ENOENT);
}

static void test_remove_group(void **state) {
        struct probe_spec a = { PROBE_KPROBE, "a", "do_sys_openat2", NULL, 0 };
        struct probe_spec b = { PROBE_KRETPROBE, "b", "do_sys_openat2", NULL, 0 };
        unsigned n = 0;

        assert_int_equal(probe_add(tfs, GROUP, &a, NULL, NULL), 0);
        assert_int_equal(probe_add(tfs, GROUP, &b, NULL, NULL), 0);
        assert_int_equal(probe_add(tfs, GROUP "foreign", &a, NULL, NULL), 0);
        assert_int_equal(probe_remove_group(tfs, GROUP, &n), 0);
        assert_int_equal(n, 2);
        assert_int_equal(probe_remove_group(tfs, GROUP "foreign", &n), 0);
        assert_int_equal(n, 1);
}

static void count_opens(enum probe_kind kind) {
        _cleanup_(freep) char *err = NULL;
        struct probe_pmu pmu = {};
        struct perf_event_attr attr = {};
        uint64_t count = 0;
        int fd, r;

        r = probe_pmu_attr(NULL, &(struct probe_spec) { kind, "pmu", "do_sys_openat2", NULL, 0 }, &pmu, &err);
        if (r < 0)
                fail_msg("probe_pmu_attr: %s: %s", strerror(-r), err ? err : "");
        attr.size = sizeof(attr);
        attr.type = pmu.type;
        attr.config = pmu.config;
        attr.config1 = pmu.config1;
        attr.config2 = pmu.config2;
        fd = (int) syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
        if (fd < 0)
                fail_msg("perf_event_open(kprobe PMU type %u): %m", pmu.type);
        probe_pmu_done(&pmu);

        for (int i = 0; i < 5; i++)
                assert_int_equal(open(OPEN_PATH, O_RDONLY), -1);
        assert_int_equal(read(fd, &count, sizeof(count)), sizeof(count));
        close(fd);
        printf("%s PMU counted %" PRIu64 " opens\n", probe_kind_to_string(kind), count);
        assert_int_equal(count, 5);
}

static void test_pmu_kprobe(void **state) {
        count_opens(PROBE_KPROBE);
}

static void test_pmu_kretprobe(void **state) {
        count_opens(PROBE_KRETPROBE);
}

static uint64_t kallsyms_address(const char *symbol) {
        _cleanup_(freep) char *line = NULL;
        size_t cap = 0;
        uint64_t result = 0;
        FILE *f = fopen("/proc/kallsyms", "re");

        assert_non_null(f);
        while (getline(&line, &cap, f) > 0) {
                unsigned long long a;
                char type, name[256];

                if (sscanf(line, "%llx %c %255s", &a, &type, name) == 3 && strcmp(name, symbol) == 0) {
                        result = a;
                        break;
                }
        }
        fclose(f);
        return result;
}

/* One PERF_SAMPLE_RAW sample of a kprobe PMU event, decoded with
 * probe_pmu_format(): the probe address is do_sys_openat2's (past its
 * endbr64 when the kernel has IBT, hence the small window). */
static void check_pmu_raw(enum probe_kind kind) {
        _cleanup_(freep) char *err = NULL;
        _cleanup_(format_freep) struct format *ref = NULL, *fmt = NULL;
        struct probe_pmu pmu = {};
        struct perf_event_attr attr = {};
        struct perf_event_mmap_page *page;
        const struct perf_event_header *h;
        const struct format_field *f;
        struct field_value v;
        long psize = sysconf(_SC_PAGESIZE);
        const uint8_t *data;
        uint32_t raw_size;
        uint64_t want = kallsyms_address("do_sys_openat2");
        int fd;

        assert_true(want != 0);
        assert_int_equal(tracefs_event_format(tfs, "sched", "sched_process_exec", &ref), 0);
        assert_int_equal(probe_pmu_format(ref, kind, "pmu", &fmt), 0);
        assert_int_equal(probe_pmu_attr(NULL, &(struct probe_spec) { kind, "pmu", "do_sys_openat2", NULL, 0 },
                                        &pmu, &err),
                         0);
        attr.size = sizeof(attr);
        attr.type = pmu.type;
        attr.config = pmu.config;
        attr.config1 = pmu.config1;
        attr.config2 = pmu.config2;
        attr.sample_period = 1;
        attr.sample_type = PERF_SAMPLE_RAW;
        fd = (int) syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
        probe_pmu_done(&pmu);
        assert_true(fd >= 0);
        page = mmap(NULL, (size_t) psize * 2, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        assert_true(page != MAP_FAILED);

        assert_int_equal(open(OPEN_PATH, O_RDONLY), -1);

        assert_true(__atomic_load_n(&page->data_head, __ATOMIC_ACQUIRE) >= sizeof(*h));
        data = (const uint8_t *) page + psize;
        h = (const struct perf_event_header *) data;
        assert_int_equal(h->type, PERF_RECORD_SAMPLE);
        memcpy(&raw_size, data + sizeof(*h), sizeof(raw_size));
        assert_true(raw_size >= fmt->min_size);

        f = format_field_find(fmt, probe_kind_is_return(kind) ? "__probe_func" : "__probe_ip");
        assert_non_null(f);
        assert_int_equal(field_decode(f, data + sizeof(*h) + 4, raw_size, &v), 0);
        printf("%s PMU: %s=0x%" PRIx64 ", do_sys_openat2=0x%" PRIx64 "\n", probe_kind_to_string(kind), f->name,
               v.u, want);
        assert_true(v.u >= want && v.u < want + 16);

        munmap(page, (size_t) psize * 2);
        close(fd);
}

static void test_pmu_raw_kprobe(void **state) {
        check_pmu_raw(PROBE_KPROBE);
}

static void test_pmu_raw_kretprobe(void **state) {
        check_pmu_raw(PROBE_KRETPROBE);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_kprobe),
                cmocka_unit_test(test_remove_group),
                cmocka_unit_test(test_pmu_kprobe),
                cmocka_unit_test(test_pmu_kretprobe),
                cmocka_unit_test(test_pmu_raw_kprobe),
                cmocka_unit_test(test_pmu_raw_kretprobe),
        };
        int r;

        r = tracefs_open(NULL, &tfs);
        if (r < 0) {
                fprintf(stderr, "no tracefs: %s\n", strerror(-r));
                return 1;
        }
        if (access("/sys/kernel/tracing/kprobe_events", W_OK) < 0) {
                fprintf(stderr, "this kernel has no kprobe_events\n");
                return 1;
        }
        (void) probe_remove_group(tfs, GROUP, NULL);
        r = cmocka_run_group_tests(tests, NULL, NULL);
        (void) probe_remove_group(tfs, GROUP, NULL);
        (void) probe_remove_group(tfs, GROUP "foreign", NULL);
        tracefs_free(tfs);
        return r;
}
