/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The parts of probe.c that need no kernel: names, targets, definition
 * lines, the record file, PMU attributes from a sysfs tree the test makes,
 * and the decoder for PMU-created probes. */

#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "evmon/cleanup.h"
#include "evmon/probe.h"
#include "evmon/tracefs.h"
#include "../test-util.h"

static void test_kinds(void **state) {
        for (int k = 0; k < _PROBE_KIND_MAX; k++)
                assert_int_equal(probe_kind_from_string(probe_kind_to_string(k)), k);
        assert_string_equal(probe_kind_to_string(PROBE_URETPROBE), "uretprobe");
        assert_int_equal(probe_kind_from_string("tracepoint"), _PROBE_KIND_INVALID);
        assert_int_equal(probe_kind_from_string(NULL), _PROBE_KIND_INVALID);
        assert_null(probe_kind_to_string(_PROBE_KIND_MAX));
        assert_true(probe_kind_is_uprobe(PROBE_URETPROBE));
        assert_false(probe_kind_is_uprobe(PROBE_KRETPROBE));
        assert_true(probe_kind_is_return(PROBE_KRETPROBE));
        assert_false(probe_kind_is_return(PROBE_UPROBE));
}

static void test_names(void **state) {
        assert_true(probe_name_is_valid("evmon"));
        assert_true(probe_name_is_valid("_open_ret2"));
        assert_false(probe_name_is_valid(""));
        assert_false(probe_name_is_valid(NULL));
        assert_false(probe_name_is_valid("2open"));
        assert_false(probe_name_is_valid("open-ret"));
        assert_false(probe_name_is_valid("a/b"));
        assert_false(probe_name_is_valid("a b"));
        assert_true(probe_name_is_valid("a123456789012345678901234567890123456789012345678901234567890bc")); /* 63 */
        assert_false(probe_name_is_valid("a123456789012345678901234567890123456789012345678901234567890bcd"));
}

static void expect_target(enum probe_kind k, const char *target, const char *path, const char *symbol,
                          uint64_t offset) {
        _cleanup_(probe_target_done) struct probe_target t = {};
        _cleanup_(freep) char *err = NULL;

        assert_int_equal(probe_parse_target(k, target, &t, &err), 0);
        assert_null(err);
        if (path)
                assert_string_equal(t.path, path);
        else
                assert_null(t.path);
        if (symbol)
                assert_string_equal(t.symbol, symbol);
        else
                assert_null(t.symbol);
        assert_int_equal(t.offset, offset);
}

static void expect_bad_target(enum probe_kind k, const char *target, const char *needle) {
        _cleanup_(probe_target_done) struct probe_target t = {};
        _cleanup_(freep) char *err = NULL;

        assert_int_equal(probe_parse_target(k, target, &t, &err), -EINVAL);
        assert_non_null(err);
        if (!strstr(err, needle))
                fail_msg("error \"%s\" does not mention \"%s\"", err, needle);
        assert_null(t.path);
        assert_null(t.symbol);
}

static void test_parse_target(void **state) {
        expect_target(PROBE_KPROBE, "do_sys_openat2", NULL, "do_sys_openat2", 0);
        expect_target(PROBE_KRETPROBE, "do_sys_openat2+0x10", NULL, "do_sys_openat2", 16);
        expect_target(PROBE_KPROBE, "vfs_read+8", NULL, "vfs_read", 8);
        expect_target(PROBE_KPROBE, "foo.isra.0", NULL, "foo.isra.0", 0);
        expect_target(PROBE_KPROBE, "ext4:ext4_file_open", NULL, "ext4:ext4_file_open", 0);
        expect_target(PROBE_KPROBE, "0xffffffff81000000", NULL, NULL, UINT64_C(0xffffffff81000000));
        expect_target(PROBE_UPROBE, "/usr/bin/bash:readline", "/usr/bin/bash", "readline", 0);
        expect_target(PROBE_URETPROBE, "/usr/bin/bash:readline+4", "/usr/bin/bash", "readline", 4);
        expect_target(PROBE_UPROBE, "/usr/bin/bash:0x8b2a0", "/usr/bin/bash", NULL, 0x8b2a0);
        expect_target(PROBE_UPROBE, "/opt/a:b/bin:main", "/opt/a:b/bin", "main", 0);

        expect_bad_target(PROBE_KPROBE, "", "empty");
        expect_bad_target(PROBE_KPROBE, "do_sys_openat2+", "bad offset");
        expect_bad_target(PROBE_KPROBE, "do_sys_openat2+x", "bad offset");
        expect_bad_target(PROBE_KPROBE, "0x12zz", "bad address");
        expect_bad_target(PROBE_KPROBE, "do sys", "bad symbol");
        expect_bad_target(PROBE_UPROBE, "/usr/bin/bash", "PATH:SYMBOL");
        expect_bad_target(PROBE_UPROBE, "bash:readline", "absolute");
        expect_bad_target(PROBE_UPROBE, "/usr/bin/bash:", "missing");
}

static void test_resolve_target(void **state) {
        _cleanup_(probe_target_done) struct probe_target t = {}, k = {};
        _cleanup_(freep) char *err = NULL, *target = NULL, *real = NULL;
        uint64_t off = 0;

        assert_int_equal(elf_resolve_symbol(test_env("PROBE_TARGET"), "evmon_target", &off, &real, NULL), 0);
        assert_true(asprintf(&target, "%s:evmon_target+4", test_env("PROBE_TARGET")) > 0);
        assert_int_equal(probe_resolve_target(PROBE_UPROBE, target, &t, &err), 0);
        assert_string_equal(t.path, real);
        assert_null(t.symbol);
        assert_int_equal(t.offset, off + 4);

        /* Kernel symbols are the kernel's to resolve. */
        assert_int_equal(probe_resolve_target(PROBE_KPROBE, "do_sys_openat2", &k, &err), 0);
        assert_string_equal(k.symbol, "do_sys_openat2");

        probe_target_done(&t);
        assert_int_equal(probe_resolve_target(PROBE_UPROBE, "/nonexistent/x:main", &t, &err), -ENOENT);
        assert_non_null(err);
}

static void expect_command(const char *group, const struct probe_spec *p, const char *want) {
        _cleanup_(freep) char *line = NULL, *err = NULL;

        assert_int_equal(probe_format_command(group, p, &line, &err), 0);
        assert_null(err);
        assert_string_equal(line, want);
}

static void expect_bad_command(const char *group, const struct probe_spec *p, const char *needle) {
        _cleanup_(freep) char *line = NULL, *err = NULL;

        assert_int_equal(probe_format_command(group, p, &line, &err), -EINVAL);
        assert_null(line);
        assert_non_null(err);
        if (!strstr(err, needle))
                fail_msg("error \"%s\" does not mention \"%s\"", err, needle);
}

static void test_format_command(void **state) {
        char *open_args[] = { "path=+0(%si):ustring", "dfd=%di:s32" };
        char *ret_args[] = { "ret=$retval:s32" };
        char *bad_args[] = { "a=%di", "b=%si c=%dx" };
        _cleanup_(freep) char *target = NULL, *want = NULL, *real = NULL;
        uint64_t off = 0;

        expect_command(NULL,
                       &(struct probe_spec) { PROBE_KPROBE, "open", "do_sys_openat2", open_args, 2 },
                       "p:evmon/open do_sys_openat2 path=+0(%si):ustring dfd=%di:s32");
        expect_command("mine",
                       &(struct probe_spec) { PROBE_KRETPROBE, "open_ret", "do_sys_openat2", ret_args, 1 },
                       "r:mine/open_ret do_sys_openat2 ret=$retval:s32");
        expect_command("g", &(struct probe_spec) { PROBE_KPROBE, "x", "vfs_read+0x8", NULL, 0 },
                       "p:g/x vfs_read+8");
        expect_command("g", &(struct probe_spec) { PROBE_KPROBE, "x", "0xffffffff81000010", NULL, 0 },
                       "p:g/x 0xffffffff81000010");

        assert_int_equal(elf_resolve_symbol(test_env("PROBE_TARGET"), "evmon_target", &off, &real, NULL), 0);
        assert_true(asprintf(&target, "%s:evmon_target", test_env("PROBE_TARGET")) > 0);
        assert_true(asprintf(&want, "r:evmon/t %s:0x%" PRIx64 " ret=$retval:s32", real, off) > 0);
        expect_command(NULL, &(struct probe_spec) { PROBE_URETPROBE, "t", target, ret_args, 1 }, want);

        expect_bad_command("ev-mon", &(struct probe_spec) { PROBE_KPROBE, "x", "f", NULL, 0 }, "group");
        expect_bad_command(NULL, &(struct probe_spec) { PROBE_KPROBE, "x y", "f", NULL, 0 }, "name");
        expect_bad_command(NULL, &(struct probe_spec) { PROBE_KPROBE, "x", "f", bad_args, 2 }, "b=%si c=%dx");
        expect_bad_command(NULL, &(struct probe_spec) { PROBE_KPROBE, "x", "f", NULL, 1 }, "fetch");
        expect_bad_command(NULL, &(struct probe_spec) { PROBE_KPROBE, "x", "", NULL, 0 }, "empty");
}

static char *make_tmpdir(void) {
        char tmpl[] = "/tmp/evmon-test-probe-XXXXXX";

        assert_non_null(mkdtemp(tmpl));
        return strdup(tmpl);
}

static void write_file(const char *dir, const char *rel, const char *text) {
        _cleanup_(freep) char *path = NULL, *cmd = NULL;
        FILE *f;

        assert_true(asprintf(&cmd, "mkdir -p \"$(dirname '%s/%s')\"", dir, rel) > 0);
        assert_int_equal(system(cmd), 0);
        assert_true(asprintf(&path, "%s/%s", dir, rel) > 0);
        f = fopen(path, "we");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
}

static void rm_rf(const char *dir) {
        _cleanup_(freep) char *cmd = NULL;

        assert_true(asprintf(&cmd, "rm -rf '%s'", dir) > 0);
        assert_int_equal(system(cmd), 0);
}

static void test_pmu(void **state) {
        _cleanup_(freep) char *sys = make_tmpdir(), *target = NULL, *real = NULL, *err = NULL;
        struct probe_pmu pmu = {};
        char *args[] = { "a=%di" };
        uint32_t type = 0;
        uint64_t mask = 0, off = 0;

        /* No PMUs at all. */
        assert_int_equal(probe_pmu_type(sys, PROBE_KPROBE, &type, &mask), -EOPNOTSUPP);
        assert_int_equal(probe_pmu_attr(sys, &(struct probe_spec) { PROBE_KPROBE, "x", "vfs_read", NULL, 0 },
                                        &pmu, &err),
                         -EOPNOTSUPP);
        assert_non_null(err);
        free(err);
        err = NULL;

        write_file(sys, "bus/event_source/devices/kprobe/type", "6\n");
        write_file(sys, "bus/event_source/devices/kprobe/format/retprobe", "config:0\n");
        write_file(sys, "bus/event_source/devices/uprobe/type", "7\n");
        write_file(sys, "bus/event_source/devices/uprobe/format/retprobe", "config:3\n");

        assert_int_equal(probe_pmu_type(sys, PROBE_KRETPROBE, &type, &mask), 0);
        assert_int_equal(type, 6);
        assert_int_equal(mask, 1);
        assert_int_equal(probe_pmu_type(sys, PROBE_UPROBE, &type, &mask), 0);
        assert_int_equal(type, 7);
        assert_int_equal(mask, 8);

        assert_int_equal(probe_pmu_attr(sys, &(struct probe_spec) { PROBE_KPROBE, "x", "vfs_read+4", NULL, 0 },
                                        &pmu, &err),
                         0);
        assert_int_equal(pmu.type, 6);
        assert_int_equal(pmu.config, 0);
        assert_string_equal((const char *) (uintptr_t) pmu.config1, "vfs_read");
        assert_ptr_equal((void *) (uintptr_t) pmu.config1, pmu.string);
        assert_int_equal(pmu.config2, 4);
        probe_pmu_done(&pmu);
        assert_null(pmu.string);

        assert_int_equal(probe_pmu_attr(sys,
                                        &(struct probe_spec) { PROBE_KRETPROBE, "x", "0xffffffff81000000", NULL, 0 },
                                        &pmu, &err),
                         0);
        assert_int_equal(pmu.config, 1);
        assert_int_equal(pmu.config1, 0);
        assert_int_equal(pmu.config2, UINT64_C(0xffffffff81000000));
        probe_pmu_done(&pmu);

        assert_int_equal(elf_resolve_symbol(test_env("PROBE_TARGET"), "evmon_target", &off, &real, NULL), 0);
        assert_true(asprintf(&target, "%s:evmon_target", test_env("PROBE_TARGET")) > 0);
        assert_int_equal(probe_pmu_attr(sys, &(struct probe_spec) { PROBE_URETPROBE, "x", target, NULL, 0 },
                                        &pmu, &err),
                         0);
        assert_int_equal(pmu.type, 7);
        assert_int_equal(pmu.config, 8);
        assert_string_equal((const char *) (uintptr_t) pmu.config1, real);
        assert_int_equal(pmu.config2, off);
        probe_pmu_done(&pmu);

        /* The PMUs take no fetch-args. */
        assert_int_equal(probe_pmu_attr(sys, &(struct probe_spec) { PROBE_KPROBE, "x", "vfs_read", args, 1 },
                                        &pmu, &err),
                         -EINVAL);
        assert_non_null(strstr(err, "fetch-args"));

        rm_rf(sys);
}

static const char reference_format[] =
        "name: sched_process_exec\n"
        "ID: 310\n"
        "format:\n"
        "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
        "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
        "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
        "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
        "\n"
        "\tfield:__data_loc char[] filename;\toffset:8;\tsize:4;\tsigned:0;\n"
        "\tfield:pid_t pid;\toffset:12;\tsize:4;\tsigned:1;\n"
        "\tfield:pid_t old_pid;\toffset:16;\tsize:4;\tsigned:1;\n"
        "\n"
        "print fmt: \"filename=%s pid=%d old_pid=%d\", __get_str(filename), REC->pid, REC->old_pid\n";

static void test_pmu_format(void **state) {
        struct format *ref = NULL, *f = NULL;
        const struct format_field *ff;

        assert_int_equal(format_parse(reference_format, "sched", &ref), 0);

        assert_int_equal(probe_pmu_format(ref, PROBE_UPROBE, "readline", &f), 0);
        assert_string_equal(f->name, "readline");
        assert_string_equal(f->system, "uprobes");
        assert_int_equal(f->n_common, 4);
        assert_int_equal(f->n_fields, 5);
        ff = format_field_find(f, "__probe_ip");
        assert_non_null(ff);
        assert_int_equal(ff->offset, 8);
        assert_int_equal(ff->size, 8);
        assert_false(ff->common);
        ff = format_field_find(f, "common_pid");
        assert_non_null(ff);
        assert_int_equal(ff->offset, 4);
        assert_true(ff->is_signed);
        f = format_free(f);

        assert_int_equal(probe_pmu_format(ref, PROBE_KRETPROBE, "open_ret", &f), 0);
        assert_string_equal(f->system, "kprobes");
        assert_int_equal(f->n_fields, 6);
        assert_int_equal(format_field_find(f, "__probe_func")->offset, 8);
        assert_int_equal(format_field_find(f, "__probe_ret_ip")->offset, 16);
        assert_int_equal(f->min_size, 24);
        f = format_free(f);

        assert_int_equal(probe_pmu_format(ref, PROBE_KPROBE, "bad name", &f), -EINVAL);
        format_free(ref);
}

static void test_record(void **state) {
        _cleanup_(freep) char *dir = make_tmpdir(), *path = NULL;
        _cleanup_(strv_freep) char **l = NULL;

        assert_true(asprintf(&path, "%s/run/probes", dir) > 0);

        assert_int_equal(probe_record_load(path, &l), 0);
        assert_null(l[0]);
        l = (strv_free(l), NULL);

        assert_int_equal(probe_record_group(path, "evmon"), 0);
        assert_int_equal(probe_record_group(path, "other"), 0);
        assert_int_equal(probe_record_group(path, "evmon"), 0);
        assert_int_equal(probe_record_group(path, "not valid"), -EINVAL);

        assert_int_equal(probe_record_load(path, &l), 0);
        assert_non_null(l[0]);
        assert_string_equal(l[0], "evmon");
        assert_string_equal(l[1], "other");
        assert_null(l[2]);
        l = (strv_free(l), NULL);

        /* Junk lines are skipped, not trusted. */
        write_file(dir, "run/probes", "evmon\n../../etc\n\nx y\nsecond\n");
        assert_int_equal(probe_record_load(path, &l), 0);
        assert_string_equal(l[0], "evmon");
        assert_string_equal(l[1], "second");
        assert_null(l[2]);

        rm_rf(dir);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_kinds),
                cmocka_unit_test(test_names),
                cmocka_unit_test(test_parse_target),
                cmocka_unit_test(test_resolve_target),
                cmocka_unit_test(test_format_command),
                cmocka_unit_test(test_pmu),
                cmocka_unit_test(test_pmu_format),
                cmocka_unit_test(test_record),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
