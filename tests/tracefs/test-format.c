/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* format_parse() on real format files of kernel 6.18 (fixtures/NAME.format)
 * and on hand-written ones for what that kernel lacks: __rel_loc fields
 * (foo_rel_loc.format, the shape of samples/trace_events) and a file
 * without signed: (sched_wakeup_old.format, as kernels before 2.6.33
 * wrote them). */

#define _GNU_SOURCE 1

#include "test-util.h"

static void assert_field(const struct format *f, const char *name, const char *type, uint32_t offset,
                         uint32_t size, enum field_kind kind, unsigned elem_size, bool elem_signed) {
        const struct format_field *x = format_field_by_name(f, name);

        assert_string_equal(x->type, type);
        assert_int_equal(x->offset, offset);
        assert_int_equal(x->size, size);
        if (x->kind != kind)
                fail_msg("%s.%s: kind %s, expected %s", f->name, name, field_kind_to_string(x->kind),
                         field_kind_to_string(kind));
        assert_int_equal(x->elem_size, elem_size);
        if (x->elem_signed != elem_signed)
                fail_msg("%s.%s: elem_signed %d, expected %d", f->name, name, x->elem_signed, elem_signed);
}

static void assert_common(const struct format *f) {
        assert_true(f->n_common >= 4);
        assert_string_equal(f->fields[0].name, "common_type");
        assert_int_equal(f->fields[0].kind, FIELD_INT);
        assert_int_equal(f->fields[0].elem_size, 2);
        assert_false(f->fields[0].elem_signed);
        for (size_t i = 0; i < f->n_fields; i++)
                assert_int_equal(f->fields[i].common, i < f->n_common);
        assert_string_equal(f->fields[3].name, "common_pid");
        assert_true(f->fields[3].elem_signed);
}

static void test_sched_process_exec(void **state) {
        _cleanup_(format_freep) struct format *f = fixture_format("sched_process_exec", "sched");

        assert_string_equal(f->system, "sched");
        assert_string_equal(f->name, "sched_process_exec");
        assert_int_equal(f->id, 365);
        assert_int_equal(f->n_fields, 7);
        assert_int_equal(f->n_common, 4);
        assert_int_equal(f->min_size, 20);
        assert_common(f);

        assert_field(f, "filename", "__data_loc char[]", 8, 4, FIELD_DYN_STRING, 1, false);
        assert_false(format_field_by_name(f, "filename")->rel);
        assert_false(format_field_by_name(f, "filename")->flex);
        assert_field(f, "pid", "pid_t", 12, 4, FIELD_INT, 4, true);
        assert_field(f, "old_pid", "pid_t", 16, 4, FIELD_INT, 4, true);
}

static void test_sys_enter_openat(void **state) {
        _cleanup_(format_freep) struct format *f = fixture_format("sys_enter_openat", "syscalls");

        assert_int_equal(f->id, 782);
        assert_int_equal(f->n_common, 4);
        assert_int_equal(f->min_size, 48);
        assert_common(f);

        assert_field(f, "__syscall_nr", "int", 8, 4, FIELD_INT, 4, true);
        /* "int dfd; size:8; signed:0": the type decides. */
        assert_field(f, "dfd", "int", 16, 8, FIELD_INT, 4, true);
        assert_false(format_field_by_name(f, "dfd")->is_signed);
        assert_field(f, "filename", "const char *", 24, 8, FIELD_POINTER, 8, false);
        assert_field(f, "flags", "int", 32, 8, FIELD_INT, 4, true);
        /* umode_t: a typedef we do not know, so the slot and signed:. */
        assert_field(f, "mode", "umode_t", 40, 8, FIELD_INT, 8, false);
}

static void test_sched_switch(void **state) {
        _cleanup_(format_freep) struct format *f = fixture_format("sched_switch", "sched");

        assert_int_equal(f->id, 372);
        assert_int_equal(f->min_size, 64);
        assert_field(f, "prev_comm", "char[16]", 8, 16, FIELD_CHARS, 1, false);
        assert_field(f, "prev_pid", "pid_t", 24, 4, FIELD_INT, 4, true);
        assert_field(f, "prev_state", "long", 32, 8, FIELD_INT, 8, true);
        assert_field(f, "next_comm", "char[16]", 40, 16, FIELD_CHARS, 1, false);
        assert_field(f, "next_prio", "int", 60, 4, FIELD_INT, 4, true);
}

static void test_inet_sock_set_state(void **state) {
        _cleanup_(format_freep) struct format *f = fixture_format("inet_sock_set_state", "sock");

        assert_int_equal(f->min_size, 72);
        assert_field(f, "skaddr", "const void *", 8, 8, FIELD_POINTER, 8, false);
        assert_field(f, "sport", "__u16", 24, 2, FIELD_INT, 2, false);
        assert_field(f, "saddr", "__u8[4]", 32, 4, FIELD_ARRAY, 1, false);
        assert_field(f, "saddr_v6", "__u8[16]", 40, 16, FIELD_ARRAY, 1, false);
        assert_field(f, "daddr_v6", "__u8[16]", 56, 16, FIELD_ARRAY, 1, false);
}

static void test_raw_sys_enter(void **state) {
        _cleanup_(format_freep) struct format *f = fixture_format("sys_enter", "raw_syscalls");

        assert_field(f, "id", "long", 8, 8, FIELD_INT, 8, true);
        assert_field(f, "args", "unsigned long[6]", 16, 48, FIELD_ARRAY, 8, false);
        assert_int_equal(f->min_size, 64);
}

static void test_dma_map_sg(void **state) {
        _cleanup_(format_freep) struct format *f = fixture_format("dma_map_sg", "dma");

        assert_field(f, "device", "__data_loc char[]", 8, 4, FIELD_DYN_STRING, 1, false);
        assert_field(f, "truncated", "bool", 20, 1, FIELD_BOOL, 1, false);
        assert_field(f, "phys_addrs", "__data_loc u64[]", 24, 4, FIELD_DYN_ARRAY, 8, false);
        assert_field(f, "dma_addrs", "__data_loc u64[]", 28, 4, FIELD_DYN_ARRAY, 8, false);
        assert_field(f, "lengths", "__data_loc unsigned int[]", 32, 4, FIELD_DYN_ARRAY, 4, false);
        assert_field(f, "dir", "enum dma_data_direction", 36, 4, FIELD_INT, 4, false);
        assert_field(f, "attrs", "unsigned long", 40, 8, FIELD_INT, 8, false);
        assert_int_equal(f->min_size, 48);
}

static void test_ftrace_print(void **state) {
        _cleanup_(format_freep) struct format *f = fixture_format("print", "ftrace");
        const struct format_field *buf;

        assert_int_equal(f->id, 5);
        assert_field(f, "ip", "unsigned long", 8, 8, FIELD_INT, 8, false);
        assert_field(f, "buf", "char[]", 16, 0, FIELD_DYN_STRING, 1, false);
        buf = format_field_by_name(f, "buf");
        assert_true(buf->flex);
        assert_false(buf->rel);
        assert_int_equal(f->min_size, 16);
}

static void test_ftrace_function(void **state) {
        _cleanup_(format_freep) struct format *f = fixture_format("function", "ftrace");

        assert_field(f, "args", "unsigned long[]", 24, 0, FIELD_DYN_ARRAY, 8, false);
        assert_true(format_field_by_name(f, "args")->flex);
        assert_int_equal(f->min_size, 24);
}

static void test_ipi_send_cpumask(void **state) {
        _cleanup_(format_freep) struct format *f = fixture_format("ipi_send_cpumask", "ipi");

        assert_field(f, "cpumask", "__data_loc cpumask_t", 8, 4, FIELD_DYN_ARRAY, 8, false);
        assert_field(f, "callsite", "void *", 16, 8, FIELD_POINTER, 8, false);
        assert_int_equal(f->min_size, 32);
}

static void test_xfs(void **state) {
        _cleanup_(format_freep) struct format *a = fixture_format("xfs_inode_set_eofblocks_tag", "xfs");
        _cleanup_(format_freep) struct format *b = fixture_format("xfs_agfl_free_deferred", "xfs");

        assert_field(a, "dev", "dev_t", 8, 4, FIELD_INT, 4, false);
        assert_field(a, "ino", "xfs_ino_t", 16, 8, FIELD_INT, 8, false);
        assert_field(b, "type", "enum xfs_group_type", 12, 1, FIELD_INT, 1, false);
        assert_field(b, "agno", "xfs_agnumber_t", 16, 4, FIELD_INT, 4, false);
}

static void test_rel_loc(void **state) {
        _cleanup_(format_freep) struct format *f = fixture_format("foo_rel_loc", NULL);

        assert_null(f->system);
        assert_int_equal(f->id, 1537);
        assert_field(f, "foo", "__rel_loc char[]", 8, 4, FIELD_DYN_STRING, 1, false);
        assert_field(f, "bitmask", "__rel_loc unsigned long[]", 16, 4, FIELD_DYN_ARRAY, 8, false);
        assert_field(f, "cpumask", "__rel_loc cpumask_t", 20, 4, FIELD_DYN_ARRAY, 8, false);
        assert_field(f, "deltas", "__rel_loc s16[]", 24, 4, FIELD_DYN_ARRAY, 2, true);
        for (size_t i = f->n_common; i < f->n_fields; i++)
                assert_int_equal(f->fields[i].rel, strcmp(f->fields[i].name, "bar") != 0);
        assert_int_equal(f->min_size, 28);
}

static void test_old_no_signed(void **state) {
        _cleanup_(format_freep) struct format *f = fixture_format("sched_wakeup_old", "sched");

        assert_int_equal(f->id, 60);
        assert_int_equal(f->n_common, 5);
        assert_string_equal(f->fields[4].name, "common_tgid");
        for (size_t i = 0; i < f->n_fields; i++)
                assert_false(f->fields[i].is_signed);

        /* Sign from the type where it says one. */
        assert_field(f, "common_pid", "int", 4, 4, FIELD_INT, 4, true);
        assert_field(f, "comm", "char[TASK_COMM_LEN]", 12, 16, FIELD_CHARS, 1, CHAR_MIN < 0);
        assert_field(f, "pid", "pid_t", 28, 4, FIELD_INT, 4, true);
        assert_field(f, "prio", "int", 32, 4, FIELD_INT, 4, true);
        assert_field(f, "dev", "dev_t", 40, 4, FIELD_INT, 4, false);
        assert_field(f, "delta", "long", 48, 8, FIELD_INT, 8, true);
        assert_field(f, "flag", "char", 56, 1, FIELD_INT, 1, CHAR_MIN < 0);
        assert_int_equal(f->min_size, 57);
}

/* One declared type in a slot of SIZE with the kernel's SIGNED, and what
 * the parser must make of it. */
struct type_case {
        const char *decl;
        unsigned size;
        int is_signed;
        enum field_kind kind;
        unsigned elem_size;
        bool elem_signed;
};

static const struct type_case type_cases[] = {
        { "char c", 1, 1, FIELD_INT, 1, true },
        { "char c", 1, 0, FIELD_INT, 1, false },
        { "signed char c", 1, 1, FIELD_INT, 1, true },
        { "unsigned char c", 1, 0, FIELD_INT, 1, false },
        { "short s", 2, 1, FIELD_INT, 2, true },
        { "short int s", 2, 1, FIELD_INT, 2, true },
        { "unsigned short s", 2, 0, FIELD_INT, 2, false },
        { "int i", 4, 1, FIELD_INT, 4, true },
        { "signed i", 4, 1, FIELD_INT, 4, true },
        { "unsigned u", 4, 0, FIELD_INT, 4, false },
        { "unsigned u", 8, 0, FIELD_INT, 4, false },
        { "unsigned int u", 8, 0, FIELD_INT, 4, false },
        { "const int i", 8, 0, FIELD_INT, 4, true },
        { "long l", 8, 1, FIELD_INT, 8, true },
        { "long l", 4, 1, FIELD_INT, 4, true },
        { "long int l", 8, 1, FIELD_INT, 8, true },
        { "unsigned long l", 8, 0, FIELD_INT, 8, false },
        { "long unsigned int l", 8, 0, FIELD_INT, 8, false },
        { "long long ll", 8, 1, FIELD_INT, 8, true },
        { "unsigned long long ll", 8, 0, FIELD_INT, 8, false },
        { "u8 x", 1, 0, FIELD_INT, 1, false },
        { "s8 x", 8, 0, FIELD_INT, 1, true },
        { "u16 x", 2, 0, FIELD_INT, 2, false },
        { "s16 x", 2, 1, FIELD_INT, 2, true },
        { "u32 x", 8, 0, FIELD_INT, 4, false },
        { "s32 x", 4, 1, FIELD_INT, 4, true },
        { "u64 x", 8, 0, FIELD_INT, 8, false },
        { "s64 x", 8, 1, FIELD_INT, 8, true },
        { "__u8 x", 1, 0, FIELD_INT, 1, false },
        { "__s16 x", 8, 0, FIELD_INT, 2, true },
        { "__s32 x", 8, 0, FIELD_INT, 4, true },
        { "__u64 x", 8, 0, FIELD_INT, 8, false },
        { "uint8_t x", 1, 0, FIELD_INT, 1, false },
        { "int16_t x", 2, 1, FIELD_INT, 2, true },
        { "int32_t x", 4, 1, FIELD_INT, 4, true },
        { "uint64_t x", 8, 0, FIELD_INT, 8, false },
        { "size_t x", 8, 0, FIELD_INT, 8, false },
        { "const size_t x", 8, 0, FIELD_INT, 8, false },
        { "ssize_t x", 8, 1, FIELD_INT, 8, true },
        { "pid_t x", 8, 0, FIELD_INT, 4, true },
        { "uid_t x", 8, 0, FIELD_INT, 4, false },
        { "loff_t x", 8, 1, FIELD_INT, 8, true },
        { "const clockid_t x", 8, 0, FIELD_INT, 4, true },
        { "key_serial_t x", 8, 0, FIELD_INT, 4, true },
        { "bool b", 1, 0, FIELD_BOOL, 1, false },
        { "_Bool b", 1, 0, FIELD_BOOL, 1, false },
        { "dev_t d", 4, 0, FIELD_INT, 4, false },
        { "gfp_t g", 4, 0, FIELD_INT, 4, false },
        { "umode_t m", 2, 0, FIELD_INT, 2, false },
        { "enum foo e", 4, 1, FIELD_INT, 4, true },
        { "enum foo e", 4, 0, FIELD_INT, 4, false },
        { "local_t t", 8, 1, FIELD_INT, 8, true },
        { "void * p", 8, 0, FIELD_POINTER, 8, false },
        { "const char * p", 8, 0, FIELD_POINTER, 8, false },
        { "const char *const * p", 8, 0, FIELD_POINTER, 8, false },
        { "struct file * p", 8, 0, FIELD_POINTER, 8, false },
        { "struct iocb * * p", 8, 0, FIELD_POINTER, 8, false },
        { "void __seg_gs * p", 8, 0, FIELD_POINTER, 8, false },
        { "const void *const p", 8, 0, FIELD_POINTER, 8, false },
        { "char name[32]", 32, 0, FIELD_CHARS, 1, false },
        { "const char name[8]", 8, 1, FIELD_CHARS, 1, true },
        { "unsigned char mac[6]", 6, 0, FIELD_ARRAY, 1, false },
        { "u8 addr[16]", 16, 0, FIELD_ARRAY, 1, false },
        { "long vals[3]", 24, 1, FIELD_ARRAY, 8, true },
        { "unsigned int regs[10]", 40, 0, FIELD_ARRAY, 4, false },
        { "unsigned long args[16]", 128, 0, FIELD_ARRAY, 8, false },
        { "xfs_fsblock_t blocks[2]", 16, 0, FIELD_ARRAY, 8, false },
        { "u32 ids[]", 0, 0, FIELD_DYN_ARRAY, 4, false },
        { "__data_loc u8[] bytes", 4, 0, FIELD_DYN_ARRAY, 1, false },
        { "__data_loc s32[] vals", 4, 0, FIELD_DYN_ARRAY, 4, true },
        { "__data_loc struct foo[] foos", 4, 0, FIELD_DYN_ARRAY, 1, false },
        { "__rel_loc char[] s", 4, 0, FIELD_DYN_STRING, 1, false },
        { "__data_loc const char[] s", 4, 0, FIELD_DYN_STRING, 1, false },
        /* By-value structs and odd widths: their bytes. */
        { "struct foo f", 12, 0, FIELD_ARRAY, 1, false },
        { "u64 odd", 3, 0, FIELD_ARRAY, 1, false },
};

static void test_types(void **state) {
        for (size_t i = 0; i < ELEMENTSOF(type_cases); i++) {
                const struct type_case *c = &type_cases[i];
                _cleanup_(format_freep) struct format *f = NULL;
                _cleanup_(freep) char *text = NULL;
                const struct format_field *x;
                int r;

                assert_true(asprintf(&text,
                                     "name: t\nID: 1\nformat:\n"
                                     "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\n"
                                     "\tfield:%s;\toffset:8;\tsize:%u;\tsigned:%d;\n\nprint fmt: \"\"\n",
                                     c->decl, c->size, c->is_signed) >= 0);
                r = format_parse(text, "test", &f);
                if (r < 0)
                        fail_msg("\"%s\" size %u: %s", c->decl, c->size, strerror(-r));
                assert_int_equal(f->n_fields, 2);
                x = &f->fields[1];
                if (x->kind != c->kind || x->elem_size != c->elem_size || x->elem_signed != c->elem_signed)
                        fail_msg("\"%s\" size %u signed %d: got %s/%u/%d, expected %s/%u/%d", c->decl, c->size,
                                 c->is_signed, field_kind_to_string(x->kind), x->elem_size, x->elem_signed,
                                 field_kind_to_string(c->kind), c->elem_size, c->elem_signed);
                assert_int_equal(x->size, c->size);
                assert_int_equal(x->is_signed, c->is_signed);
        }
}

static void test_names(void **state) {
        _cleanup_(format_freep) struct format *f = NULL;

        assert_int_equal(format_parse("name: n\nID: 7\nformat:\n"
                                      "\tfield:char comm[TASK_COMM_LEN];\toffset:8;\tsize:16;\n"
                                      "\tfield:__data_loc char[] name;\toffset:24;\tsize:4;\n"
                                      "\tfield:unsigned long args[6];\toffset:32;\tsize:48;\n",
                                      NULL, &f),
                         0);
        assert_int_equal(f->n_fields, 3);
        assert_int_equal(f->n_common, 0);
        assert_string_equal(f->fields[0].name, "comm");
        assert_string_equal(f->fields[0].type, "char[TASK_COMM_LEN]");
        assert_string_equal(f->fields[1].name, "name");
        assert_string_equal(f->fields[2].name, "args");
        assert_string_equal(f->fields[2].type, "unsigned long[6]");
        assert_int_equal(f->min_size, 80);
}

static void test_kind_names(void **state) {
        assert_string_equal(field_kind_to_string(FIELD_INT), "int");
        assert_string_equal(field_kind_to_string(FIELD_BOOL), "bool");
        assert_string_equal(field_kind_to_string(FIELD_POINTER), "pointer");
        assert_string_equal(field_kind_to_string(FIELD_CHARS), "chars");
        assert_string_equal(field_kind_to_string(FIELD_ARRAY), "array");
        assert_string_equal(field_kind_to_string(FIELD_DYN_STRING), "dyn_string");
        assert_string_equal(field_kind_to_string(FIELD_DYN_ARRAY), "dyn_array");
        assert_null(field_kind_to_string(_FIELD_KIND_MAX));
        assert_null(field_kind_to_string((enum field_kind) -1));
}

static void test_invalid(void **state) {
        static const char *const bad[] = {
                "",
                "hello\n",
                /* header_page: fields but no name, ID or format: */
                "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n",
                "name: x\nformat:\n\tfield:int a;\toffset:0;\tsize:4;\tsigned:1;\n",
                "ID: 3\nformat:\n\tfield:int a;\toffset:0;\tsize:4;\tsigned:1;\n",
                "name: x\nID: 3\n",
                "name: x\nID: three\nformat:\n",
                "name: x\nID: 3\nformat:\n\tfield:int a;\tsize:4;\tsigned:1;\n",
                "name: x\nID: 3\nformat:\n\tfield:int a;\toffset:0;\tsigned:1;\n",
                "name: x\nID: 3\nformat:\n\tfield:int a;\toffset:-1;\tsize:4;\n",
                "name: x\nID: 3\nformat:\n\tfield:int a;\toffset:0;\tsize:4x;\n",
                "name: x\nID: 3\nformat:\n\tfield:int a;\toffset:99999999999;\tsize:4;\n",
                "name: x\nID: 3\nformat:\n\tfield:int a;\toffset:4294967295;\tsize:4;\n",
                /* Past the largest perf record (65,535 bytes). */
                "name: x\nID: 3\nformat:\n\tfield:int a;\toffset:65534;\tsize:4;\n",
                "name: x\nID: 3\nformat:\n\tfield:char s[1111111111];\toffset:0;\tsize:1111111111;\n",
                "name: x\nID: 3\nformat:\n\tfield:int a\toffset:0;\tsize:4;\n",
                "name: x\nID: 3\nformat:\n\tfield:a;\toffset:0;\tsize:4;\n",
                "name: x\nID: 3\nformat:\n\tfield:;\toffset:0;\tsize:4;\n",
                "name: x\nID: 3\nformat:\n\tfield:int a];\toffset:0;\tsize:4;\n",
                "name: x\nID: 3\nformat:\n\tfield:int a;\toffset:0;\tsize:0;\n",
                "name: x\nID: 3\nformat:\n\tfield:__data_loc char[] s;\toffset:0;\tsize:2;\n",
                "name: x\nID: 3\nformat:\n\tfield:__data_loc s;\toffset:0;\tsize:4;\n",
                "name: x\nID: 3\nformat:\n\tnot a field\n",
                "name: x\nID: 3\nformat:\n\tfield:int a;\toffset:0;\tsize:4;\tjunk;\n",
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                struct format *f = NULL;
                int r = format_parse(bad[i], "s", &f);

                if (r != -EINVAL)
                        fail_msg("case %zu: %d, expected -EINVAL", i, r);
                assert_null(f);
        }

        assert_int_equal(format_parse(NULL, "s", &(struct format *) { NULL }), -EINVAL);
        assert_null(format_free(NULL));
}

static void test_unknown_keys(void **state) {
        _cleanup_(format_freep) struct format *f = NULL;

        /* A later kernel may add items; they must not break us. */
        assert_int_equal(format_parse("name: x\nID: 3\nformat:\n"
                                      "\tfield:int a;\toffset:0;\tsize:4;\tsigned:1;\tfuture:1;\n"
                                      "print fmt: \"%d\", REC->a\n"
                                      "field:int ignored;\toffset:0;\tsize:4;\n",
                                      "s", &f),
                         0);
        assert_int_equal(f->n_fields, 1);
        assert_true(f->fields[0].elem_signed);
}

static const char *const fixtures[] = {
        "sched_process_exec", "sys_enter_openat", "sched_switch", "inet_sock_set_state", "sys_enter",
        "dma_map_sg", "print", "function", "ipi_send_cpumask", "xfs_inode_set_eofblocks_tag",
        "xfs_agfl_free_deferred", "foo_rel_loc", "sched_wakeup_old",
};

static void parse_mutant(const char *text) {
        struct format *f = NULL;
        int r = format_parse(text, "m", &f);

        if (r == 0) {
                /* Whatever parsed must be self-consistent. */
                assert_non_null(f);
                assert_true(f->n_common <= f->n_fields);
                for (size_t i = 0; i < f->n_fields; i++) {
                        assert_true((unsigned) f->fields[i].kind < _FIELD_KIND_MAX);
                        assert_true((uint64_t) f->fields[i].offset + f->fields[i].size <= f->min_size);
                        assert_true(f->fields[i].elem_size >= 1 && f->fields[i].elem_size <= 8);
                }
                format_free(f);
        } else {
                if (r != -EINVAL)
                        fail_msg("%d on \"%s\"", r, text);
                assert_null(f);
        }
}

/* Every fixture cut at every byte, and with bytes replaced by ones that
 * matter to the parser: it parses or says -EINVAL, and never reads past
 * the text (run under ASan to see that). */
static void test_mutations(void **state) {
        static const char subst[] = { '\0', ';', ':', '[', ']', '*', ' ', '\n', '9', 'x' };
        uint32_t seed = 1;

        for (size_t k = 0; k < ELEMENTSOF(fixtures); k++) {
                _cleanup_(freep) char *file = NULL, *text = NULL;
                size_t len;

                assert_true(asprintf(&file, "%s.format", fixtures[k]) >= 0);
                text = fixture_text(file);
                len = strlen(text);

                for (size_t cut = 0; cut < len; cut++) {
                        _cleanup_(freep) char *t = strndup(text, cut);

                        assert_non_null(t);
                        parse_mutant(t);
                }
                for (size_t n = 0; n < 4 * len; n++) {
                        _cleanup_(freep) char *t = strdup(text);

                        assert_non_null(t);
                        seed = seed * 1103515245 + 12345;
                        t[(seed >> 8) % len] = subst[(seed >> 20) % ELEMENTSOF(subst)];
                        parse_mutant(t);
                }
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_sched_process_exec),
                cmocka_unit_test(test_sys_enter_openat),
                cmocka_unit_test(test_sched_switch),
                cmocka_unit_test(test_inet_sock_set_state),
                cmocka_unit_test(test_raw_sys_enter),
                cmocka_unit_test(test_dma_map_sg),
                cmocka_unit_test(test_ftrace_print),
                cmocka_unit_test(test_ftrace_function),
                cmocka_unit_test(test_ipi_send_cpumask),
                cmocka_unit_test(test_xfs),
                cmocka_unit_test(test_rel_loc),
                cmocka_unit_test(test_old_no_signed),
                cmocka_unit_test(test_types),
                cmocka_unit_test(test_names),
                cmocka_unit_test(test_kind_names),
                cmocka_unit_test(test_invalid),
                cmocka_unit_test(test_unknown_keys),
                cmocka_unit_test(test_mutations),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
