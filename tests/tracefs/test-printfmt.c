/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* printfmt_parse() and symbols_name(): the names a print fmt gives, on
 * real format files of kernel 6.18 (fixtures/: sched_switch,
 * softirq_entry, kmalloc, block_rq_complete, ext4_fc_stats) and on
 * hand-written print fmts for each form the parser reads or refuses.
 * What perf script prints for real records is tests/integration/
 * test-print-names.c. */

#define _GNU_SOURCE 1

#include "test-util.h"

static const struct field_symbols *symbols_of(const struct format *f, const char *field) {
        for (size_t i = 0; i < f->n_fields; i++)
                if (strcmp(f->fields[i].name, field) == 0)
                        return format_symbols_find(f, i);
        fail_msg("%s has no field %s", f->name, field);
        return NULL;
}

static void expect_name(const struct field_symbols *s, uint64_t value, const char *want) {
        char buf[SYMBOLS_NAME_MAX];
        size_t n;

        assert_non_null(s);
        n = symbols_name(s, value, buf, sizeof(buf));
        assert_true(n <= s->name_max);
        if (n != strlen(want) || memcmp(buf, want, n) != 0)
                fail_msg("value 0x%" PRIx64 ": \"%.*s\", expected \"%s\"", value, (int) n, buf, want);
}

static void test_sched_switch(void **state) {
        _cleanup_(format_freep) struct format *f = fixture_format("sched_switch", "sched");
        const struct field_symbols *s = symbols_of(f, "prev_state");

        assert_false(f->print_bad);
        assert_int_equal(f->print_unknown, 0);
        assert_int_equal(f->n_symbols, 1);
        /* The state letters, "R" for none, "+" for TASK_REPORT_MAX
         * (0x100: preempted while runnable), as perf script writes them. */
        assert_int_equal(s->n_parts, 2);
        expect_name(s, 0, "R");
        expect_name(s, 1, "S");
        expect_name(s, 2, "D");
        expect_name(s, 0x80, "I");
        expect_name(s, 0x100, "R+");
        expect_name(s, 0x101, "S+");
        expect_name(s, 0x3, "S|D");
        /* Bits above the mask are not the state. */
        expect_name(s, 0x200, "R");
        assert_null(symbols_of(f, "prev_pid"));
}

static void test_softirq(void **state) {
        _cleanup_(format_freep) struct format *f = fixture_format("softirq_entry", "irq");
        const struct field_symbols *s = symbols_of(f, "vec");
        static const char *const names[] = { "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK",
                                             "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU" };

        assert_false(f->print_bad);
        assert_int_equal(f->print_unknown, 0);
        for (unsigned i = 0; i < ELEMENTSOF(names); i++)
                expect_name(s, i, names[i]);
        /* No name: its hex, as perf script prints it. */
        expect_name(s, 10, "0xa");
        expect_name(s, UINT64_MAX, "0xffffffffffffffff");
}

static void test_kmalloc(void **state) {
        _cleanup_(format_freep) struct format *f = fixture_format("kmalloc", "kmem");
        const struct field_symbols *s = symbols_of(f, "gfp_flags");

        assert_false(f->print_bad);
        assert_int_equal(f->print_unknown, 0);
        /* "(REC->gfp_flags) ? __print_flags(...) : "none"", whose table
         * ends in { 0, ((void *)0) } and whose values are casts, shifts
         * and masks of constants. GFP_KERNEL: __GFP_IO | __GFP_FS |
         * __GFP_DIRECT_RECLAIM | __GFP_KSWAPD_RECLAIM (bits 6, 7, 10, 11). */
        expect_name(s, 0, "none");
        expect_name(s, 0xcc0, "GFP_KERNEL");
        expect_name(s, 0xcc0 | 1u << 8, "GFP_KERNEL|__GFP_ZERO");
        expect_name(s, 0xcc0 | 1u << 22, "GFP_KERNEL_ACCOUNT");
        expect_name(s, 1u << 8, "__GFP_ZERO");
        /* A bit no entry names. */
        expect_name(s, 1ull << 40, "0x10000000000");
        expect_name(s, 1u << 8 | 1ull << 40, "__GFP_ZERO|0x10000000000");
        /* "accounted=%s" is "(1 && (REC->gfp_flags & __GFP_ACCOUNT)) ?
         * "true" : "false"", not beside the helper: gfp_flags only. */
        assert_int_equal(f->n_symbols, 1);
}

static void test_block_ioprio(void **state) {
        _cleanup_(format_freep) struct format *f = fixture_format("block_rq_complete", "block");

        /* __print_symbolic((((REC->ioprio) >> 13) & (8 - 1)), { IOPRIO_CLASS_NONE, "none" }, ...):
         * the values are enum names the kernel left unexpanded. Counted,
         * and the field stays a number. */
        assert_false(f->print_bad);
        assert_int_equal(f->print_unknown, 1);
        assert_int_equal(f->n_symbols, 0);
}

static void test_btrfs_root(void **state) {
        _cleanup_(format_freep) struct format *f = fixture_format("btrfs_chunk_alloc", "btrfs");
        const struct field_symbols *s = symbols_of(f, "root_objectid");

        /* "((REC->root_objectid >= -9ULL) || (REC->root_objectid >= 1ULL &&
         * REC->root_objectid <= 8ULL)) ? __print_symbolic(...) : "-"": the
         * test is a program over the value. */
        assert_false(f->print_bad);
        assert_int_equal(f->print_unknown, 0);
        expect_name(s, 1, "ROOT_TREE");
        expect_name(s, 5, "FS_TREE");
        expect_name(s, (uint64_t) -9, "DATA_RELOC_TREE");
        expect_name(s, (uint64_t) -6, "TREE_LOG");
        expect_name(s, (uint64_t) -2, "0xfffffffffffffffe");
        /* Named in the table but outside the test: as the kernel prints it. */
        expect_name(s, 9, "-");
        expect_name(s, 256, "-");
        expect_name(symbols_of(f, "type"), 1 | 4, "DATA|METADATA");
}

static void test_multiline(void **state) {
        _cleanup_(format_freep) struct format *f = fixture_format("ext4_fc_stats", "ext4");

        /* The format string holds a raw newline; __print_symbolic(0, ...)
         * names a constant, not a field. */
        assert_false(f->print_bad);
        assert_true(f->print_unknown > 0);
        assert_int_equal(f->n_symbols, 0);
}

/* A format with fields a, b (int), u (unsigned long), p (pointer), s (string). */
static struct format *parse_with(const char *print_fmt) {
        _cleanup_(freep) char *text = NULL;
        struct format *f = NULL;

        assert_true(asprintf(&text,
                             "name: t\nID: 1\nformat:\n"
                             "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\n"
                             "\tfield:int a;\toffset:8;\tsize:4;\tsigned:1;\n"
                             "\tfield:int b;\toffset:12;\tsize:4;\tsigned:1;\n"
                             "\tfield:unsigned long u;\toffset:16;\tsize:8;\tsigned:0;\n"
                             "\tfield:void * p;\toffset:24;\tsize:8;\tsigned:0;\n"
                             "\tfield:__data_loc char[] s;\toffset:32;\tsize:4;\tsigned:0;\n\n"
                             "print fmt: %s\n", print_fmt) > 0);
        assert_int_equal(format_parse(text, "test", &f), 0);
        return f;
}

static void test_forms(void **state) {
        struct format *f;

        /* Symbolic, with negative, casted and computed values, u64 form. */
        f = parse_with("\"a=%s u=%s\", __print_symbolic(REC->a, { -1, \"NEG\" }, { (int)2, \"TWO\" }, "
                       "{ 1 << 4, \"SIXTEEN\" }, { 0x10 + 1, \"X\\\"Y\" }), "
                       "__print_symbolic_u64(REC->u, { 18446744073709551615ULL, \"MAX\" })");
        assert_false(f->print_bad);
        assert_int_equal(f->print_unknown, 0);
        expect_name(symbols_of(f, "a"), (uint64_t) -1, "NEG");
        expect_name(symbols_of(f, "a"), 2, "TWO");
        expect_name(symbols_of(f, "a"), 16, "SIXTEEN");
        expect_name(symbols_of(f, "a"), 17, "X\"Y");
        expect_name(symbols_of(f, "a"), 3, "0x3");
        expect_name(symbols_of(f, "u"), UINT64_MAX, "MAX");
        f = format_free(f);

        /* Flags: the delimiter, entries of several bits taken first, a zero
         * entry for 0, bits left over in hex, a value shifted and masked. */
        f = parse_with("\"%s %s\", __print_flags(REC->u, \" | \", { 0, \"NONE\" }, { 0x3, \"BOTH\" }, "
                       "{ 0x1, \"ONE\" }, { 0x2, \"TWO\" }), "
                       "__print_flags((REC->a >> 4) & 0x3, \"\", { 1, \"x\" }, { 2, \"y\" })");
        assert_int_equal(f->print_unknown, 0);
        expect_name(symbols_of(f, "u"), 0, "NONE");
        expect_name(symbols_of(f, "u"), 3, "BOTH");
        expect_name(symbols_of(f, "u"), 2, "TWO");
        expect_name(symbols_of(f, "u"), 7, "BOTH | 0x4");
        expect_name(symbols_of(f, "a"), 0x30, "xy");
        expect_name(symbols_of(f, "a"), 0x1f0, "xy");
        expect_name(symbols_of(f, "a"), 0x10, "x");
        expect_name(symbols_of(f, "a"), 0x40, "");
        f = format_free(f);

        /* A conditional with the helper in the else branch, and a test
         * that is no mask: a program. */
        f = parse_with("\"%s\", !REC->a ? \"zero\" : __print_symbolic(REC->a, { 1, \"one\" })");
        assert_int_equal(f->print_unknown, 0);
        expect_name(symbols_of(f, "a"), 0, "zero");
        expect_name(symbols_of(f, "a"), 1, "one");
        expect_name(symbols_of(f, "a"), 2, "0x2");
        f = format_free(f);
        /* Compared as C compares them: a is a signed int. */
        f = parse_with("\"%s\", (REC->a < 0 && REC->a != -2) ? __print_symbolic(REC->a, { -1, \"M1\" }) : \"pos\"");
        assert_int_equal(f->print_unknown, 0);
        expect_name(symbols_of(f, "a"), (uint64_t) -1, "M1");
        expect_name(symbols_of(f, "a"), (uint64_t) -3, "0xfffffffffffffffd");
        expect_name(symbols_of(f, "a"), (uint64_t) -2, "pos");
        expect_name(symbols_of(f, "a"), 5, "pos");
        f = format_free(f);
        /* A test of another field than the helper's names nothing. */
        f = parse_with("\"%s\", REC->b > 3 ? __print_symbolic(REC->a, { 1, \"one\" }) : \"-\"");
        assert_int_equal(f->print_unknown, 1);
        assert_int_equal(f->n_symbols, 0);
        f = format_free(f);
        f = parse_with("\"%s\", REC->a ? __print_symbolic(REC->a, { 1, \"one\" }) : \"zero\"");
        expect_name(symbols_of(f, "a"), 0, "zero");
        expect_name(symbols_of(f, "a"), 1, "one");
        f = format_free(f);

        /* What gives no names, each counted once: a helper over something
         * that is no field (a constant, a pointer field, a shift of a
         * field), a table value that is an unknown name, a function we do
         * not know, a helper inside a statement expression. */
        f = parse_with("\"%s %s %s %s %lu %d %s %s\", __print_symbolic(0, { 0, \"Z\" }), "
                       "__print_symbolic(REC->p, { 0, \"Z\" }), __print_flags(1 << REC->a, \"|\", { 1, \"O\" }), "
                       "__print_symbolic(REC->b, { SOME_ENUM, \"E\" }), jiffies_to_msecs(REC->u), "
                       "({ int x = REC->a; x; }), ({ __print_flags(REC->a, \"|\", { 1, \"O\" }); }), __get_str(s)");
        assert_false(f->print_bad);
        assert_int_equal(f->print_unknown, 6);
        assert_int_equal(f->n_symbols, 0);
        f = format_free(f);

        /* One field, two helpers apart: the first names it, the other is
         * counted. */
        f = parse_with("\"%s %d %s\", __print_symbolic(REC->a, { 1, \"one\" }), REC->b, "
                       "__print_symbolic(REC->a, { 1, \"uno\" })");
        assert_int_equal(f->print_unknown, 1);
        expect_name(symbols_of(f, "a"), 1, "one");
        f = format_free(f);

        /* No expression list at all: print_bad, and the format still parses. */
        static const char *const bad[] = {
                "\"x=%d\", REC->a)", "\"x=%d\", __print_symbolic(REC->a, { 1, \"one\" }",
                "\"unterminated", "REC->a", "\"x\", (REC->a", "\"x\", }",
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                f = parse_with(bad[i]);
                if (!f->print_bad)
                        fail_msg("print fmt %s parsed", bad[i]);
                assert_int_equal(f->n_symbols, 0);
                f = format_free(f);
        }

        /* A print fmt nested beyond the parser's depth: refused, not a
         * stack overflow. */
        {
                _cleanup_(freep) char *deep = malloc(200000);
                char *p = deep;

                assert_non_null(deep);
                p += sprintf(p, "\"%%d\", ");
                for (int i = 0; i < 50000; i++)
                        *p++ = '(';
                p += sprintf(p, "REC->a");
                for (int i = 0; i < 50000; i++)
                        *p++ = ')';
                *p = 0;
                f = parse_with(deep);
                assert_int_equal(f->n_symbols, 0);
                f = format_free(f);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_sched_switch),
                cmocka_unit_test(test_softirq),
                cmocka_unit_test(test_kmalloc),
                cmocka_unit_test(test_block_ioprio),
                cmocka_unit_test(test_btrfs_root),
                cmocka_unit_test(test_multiline),
                cmocka_unit_test(test_forms),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
