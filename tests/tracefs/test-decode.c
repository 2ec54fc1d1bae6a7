/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* field_decode() on raw records: NAME.hex beside NAME.format. The sched,
 * syscalls, raw_syscalls and sock records were captured on kernel 6.18
 * with fixtures/capture-raw.c; the others are hand-assembled on the
 * kernel's layout (their comments say so). Each record also goes through
 * every truncation, in a buffer of exactly that size, so that a read past
 * the end shows under ASan or valgrind. */

#define _GNU_SOURCE 1

#include <errno.h>

#include "test-util.h"

struct record {
        struct format *format;
        uint8_t *data;
        size_t size;
};

static void record_load(struct record *r, const char *name, const char *hex, const char *system) {
        _cleanup_(freep) char *file = NULL;

        r->format = fixture_format(name, system);
        assert_true(asprintf(&file, "%s.hex", hex) >= 0);
        r->data = fixture_hex(file, &r->size);
        assert_true(r->size >= r->format->min_size);
}

static void record_done(struct record *r) {
        r->format = format_free(r->format);
        free(r->data);
}

static struct field_value decode(const struct record *r, const char *name) {
        struct field_value v;
        int k;

        k = field_decode(format_field_by_name(r->format, name), r->data, r->size, &v);
        if (k < 0)
                fail_msg("%s.%s: %s", r->format->name, name, strerror(-k));
        assert_int_equal(v.kind, format_field_by_name(r->format, name)->kind);
        return v;
}

static int64_t decode_i(const struct record *r, const char *name) {
        struct field_value v = decode(r, name);

        assert_int_equal(v.kind, FIELD_INT);
        assert_true(format_field_by_name(r->format, name)->elem_signed);
        return v.i;
}

static uint64_t decode_u(const struct record *r, const char *name) {
        struct field_value v = decode(r, name);

        assert_true(v.kind == FIELD_INT || v.kind == FIELD_POINTER);
        assert_false(format_field_by_name(r->format, name)->elem_signed);
        return v.u;
}

static void assert_str(const struct record *r, const char *name, const char *expected) {
        struct field_value v = decode(r, name);

        assert_true(v.kind == FIELD_CHARS || v.kind == FIELD_DYN_STRING);
        assert_int_equal(v.str.len, strlen(expected));
        assert_memory_equal(v.str.ptr, expected, v.str.len);
        /* It points into the record. */
        assert_true((const uint8_t *) v.str.ptr >= r->data);
        assert_true((const uint8_t *) v.str.ptr + v.str.len <= r->data + r->size);
}

static void assert_array(const struct record *r, const char *name, const int64_t *expected, size_t n) {
        const struct format_field *f = format_field_by_name(r->format, name);
        struct field_value v = decode(r, name);

        assert_true(v.kind == FIELD_ARRAY || v.kind == FIELD_DYN_ARRAY);
        assert_int_equal(v.arr.count, n);
        assert_true((const uint8_t *) v.arr.ptr >= r->data);
        assert_true((const uint8_t *) v.arr.ptr + n * f->elem_size <= r->data + r->size);
        for (size_t i = 0; i < n; i++)
                if (field_array_get(f, &v, i) != expected[i])
                        fail_msg("%s[%zu] = %" PRId64 ", expected %" PRId64, name, i, field_array_get(f, &v, i),
                                 expected[i]);
        /* Past the end: 0, not a read. */
        assert_int_equal(field_array_get(f, &v, n), 0);
}

#define ARRAY(...) (const int64_t[]) { __VA_ARGS__ }, ELEMENTSOF(((const int64_t[]) { __VA_ARGS__ }))

/* Decodes every field of R cut to each shorter length, each time from a
 * heap buffer of exactly that length. A field that ends past the cut, or
 * whose data does, must give -EBADMSG; all others must decode as in the
 * whole record. */
static void assert_truncations(const struct record *r) {
        for (size_t cut = 0; cut <= r->size; cut++) {
                uint8_t *buf = malloc(cut ?: 1);

                assert_non_null(buf);
                memcpy(buf, r->data, cut);
                for (size_t i = 0; i < r->format->n_fields; i++) {
                        const struct format_field *f = &r->format->fields[i];
                        struct field_value whole, part;
                        int k;

                        assert_int_equal(field_decode(f, r->data, r->size, &whole), 0);
                        k = field_decode(f, buf, cut, &part);
                        if ((uint64_t) f->offset + f->size > cut) {
                                if (k != -EBADMSG)
                                        fail_msg("%s.%s cut at %zu: %d", r->format->name, f->name, cut, k);
                                continue;
                        }
                        if (k == -EBADMSG) {
                                /* Only a locator may point past the cut. */
                                assert_true(f->kind == FIELD_DYN_STRING || f->kind == FIELD_DYN_ARRAY);
                                assert_false(f->flex);
                                continue;
                        }
                        assert_int_equal(k, 0);
                        switch (f->kind) {
                        case FIELD_INT:
                        case FIELD_POINTER:
                                assert_int_equal(part.u, whole.u);
                                break;
                        case FIELD_BOOL:
                                assert_int_equal(part.b, whole.b);
                                break;
                        case FIELD_CHARS:
                                assert_int_equal(part.str.len, whole.str.len);
                                break;
                        case FIELD_DYN_STRING:
                                if (!f->flex)
                                        assert_int_equal(part.str.len, whole.str.len);
                                else
                                        assert_true(part.str.len <= whole.str.len);
                                assert_true((const uint8_t *) part.str.ptr + part.str.len <= buf + cut);
                                break;
                        case FIELD_ARRAY:
                        case FIELD_DYN_ARRAY:
                                if (!f->flex)
                                        assert_int_equal(part.arr.count, whole.arr.count);
                                else
                                        assert_true(part.arr.count <= whole.arr.count);
                                assert_true((const uint8_t *) part.arr.ptr + part.arr.count * f->elem_size <=
                                            buf + cut);
                                for (size_t j = 0; j < part.arr.count; j++)
                                        (void) field_array_get(f, &part, j);
                                break;
                        default:
                                fail();
                        }
                }
                free(buf);
        }
}

static void test_sched_process_exec(void **state) {
        struct record r;

        record_load(&r, "sched_process_exec", "sched_process_exec", "sched");
        assert_int_equal(decode_u(&r, "common_type"), r.format->id);
        assert_int_equal(decode_i(&r, "common_pid"), 8324);
        assert_str(&r, "filename", "/bin/true");
        assert_int_equal(decode_i(&r, "pid"), 8324);
        assert_int_equal(decode_i(&r, "old_pid"), 8324);
        assert_truncations(&r);
        record_done(&r);
}

static void test_sched_process_exec_bad(void **state) {
        struct record r;
        struct field_value v;

        record_load(&r, "sched_process_exec", "sched_process_exec-bad", "sched");
        assert_int_equal(field_decode(format_field_by_name(r.format, "filename"), r.data, r.size, &v), -EBADMSG);
        /* The fixed fields are still fine. */
        assert_int_equal(decode_i(&r, "pid"), 8324);
        record_done(&r);
}

static void test_sys_enter_openat(void **state) {
        struct record r;

        record_load(&r, "sys_enter_openat", "sys_enter_openat", "syscalls");
        assert_int_equal(decode_u(&r, "common_type"), r.format->id);
        assert_int_equal(decode_i(&r, "__syscall_nr"), 257);
        /* AT_FDCWD as the program passed it, not 4294967196 (the slot
         * holds it zero-extended) nor 18446744073709551516. */
        assert_int_equal(decode_i(&r, "dfd"), -100);
        assert_int_equal(decode_u(&r, "filename"), UINT64_C(0x7fcb341630b1));
        assert_int_equal(decode_i(&r, "flags"), 0x80000); /* O_CLOEXEC */
        assert_int_equal(decode_u(&r, "mode"), 0);
        assert_truncations(&r);
        record_done(&r);
}

static void test_sched_switch(void **state) {
        struct record r;

        record_load(&r, "sched_switch", "sched_switch", "sched");
        assert_str(&r, "prev_comm", "sleep");
        assert_int_equal(decode_i(&r, "prev_pid"), 8354);
        assert_int_equal(decode_i(&r, "prev_prio"), 120);
        assert_int_equal(decode_i(&r, "prev_state"), 1);
        assert_str(&r, "next_comm", "tracefs-cap");
        assert_int_equal(decode_i(&r, "next_pid"), 8353);
        assert_int_equal(decode_i(&r, "next_prio"), 120);
        assert_truncations(&r);
        record_done(&r);
}

static void test_raw_sys_enter(void **state) {
        struct record r;

        record_load(&r, "sys_enter", "sys_enter", "raw_syscalls");
        assert_int_equal(decode_i(&r, "id"), 12); /* brk */
        assert_array(&r, "args", ARRAY(0, 0x7ffde4ee8bac, 0, 0x37f, 0, 0));
        assert_truncations(&r);
        record_done(&r);
}

static void test_inet_sock_set_state(void **state) {
        struct record r;

        record_load(&r, "inet_sock_set_state", "inet_sock_set_state", "sock");
        assert_int_equal(decode_u(&r, "skaddr"), UINT64_C(0xffff888109dc89c0));
        assert_int_equal(decode_i(&r, "oldstate"), 2); /* TCP_SYN_SENT */
        assert_int_equal(decode_i(&r, "newstate"), 7); /* TCP_CLOSE */
        assert_int_equal(decode_u(&r, "sport"), 46918);
        assert_int_equal(decode_u(&r, "dport"), 9);
        assert_int_equal(decode_u(&r, "family"), 10); /* AF_INET6 */
        assert_int_equal(decode_u(&r, "protocol"), 6);
        assert_array(&r, "saddr", ARRAY(0, 0, 0, 0));
        assert_array(&r, "saddr_v6", ARRAY(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1));
        assert_array(&r, "daddr_v6", ARRAY(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1));
        assert_truncations(&r);
        record_done(&r);
}

static void test_ftrace_print(void **state) {
        struct record r;

        record_load(&r, "print", "print", "ftrace");
        assert_int_equal(decode_u(&r, "ip"), UINT64_C(0xffffffff8152a0b0));
        assert_str(&r, "buf", "hello\n");
        assert_truncations(&r);
        record_done(&r);
}

static void test_ftrace_function(void **state) {
        struct record r;

        record_load(&r, "function", "function", "ftrace");
        /* 16 bytes of args and 4 of padding: two whole elements. */
        assert_array(&r, "args", ARRAY(3, -2));
        assert_truncations(&r);
        record_done(&r);
}

static void test_dma_map_sg(void **state) {
        struct record r;
        struct field_value v;

        record_load(&r, "dma_map_sg", "dma_map_sg", "dma");
        assert_str(&r, "device", "0000:00:1f.2");
        assert_int_equal(decode_i(&r, "full_nents"), 130);
        assert_int_equal(decode_i(&r, "full_ents"), 2);
        v = decode(&r, "truncated");
        assert_true(v.b);
        assert_array(&r, "phys_addrs", ARRAY(0x123456000, (int64_t) UINT64_C(0xfffffffffffff000)));
        assert_array(&r, "dma_addrs", ARRAY(0xfee00000, 0x80000000));
        /* unsigned int elements: not sign-extended. */
        assert_array(&r, "lengths", ARRAY(4096, 0xffffffff));
        assert_int_equal(decode_u(&r, "dir"), 2);
        assert_int_equal(decode_u(&r, "attrs"), 0x22);
        assert_truncations(&r);
        record_done(&r);

        record_load(&r, "dma_map_sg", "dma_map_sg-bad", "dma");
        assert_int_equal(field_decode(format_field_by_name(r.format, "lengths"), r.data, r.size, &v), -EBADMSG);
        assert_array(&r, "dma_addrs", ARRAY(0xfee00000, 0x80000000));
        record_done(&r);
}

static void test_ipi_send_cpumask(void **state) {
        struct record r;

        record_load(&r, "ipi_send_cpumask", "ipi_send_cpumask", "ipi");
        assert_array(&r, "cpumask", ARRAY(0x5));
        assert_int_equal(decode_u(&r, "callsite"), UINT64_C(0xffffffff81234567));
        assert_int_equal(decode_u(&r, "callback"), UINT64_C(0xffffffff81abcdef));
        assert_truncations(&r);
        record_done(&r);
}

static void test_rel_loc(void **state) {
        struct record r;
        struct field_value v;

        record_load(&r, "foo_rel_loc", "foo_rel_loc", NULL);
        assert_str(&r, "foo", "hi");
        assert_int_equal(decode_i(&r, "bar"), -7);
        assert_array(&r, "bitmask", ARRAY((int64_t) UINT64_C(0x8000000000000001)));
        assert_array(&r, "cpumask", ARRAY(0x3));
        assert_array(&r, "deltas", ARRAY(-1, 2, -32768));
        assert_truncations(&r);
        record_done(&r);

        record_load(&r, "foo_rel_loc", "foo_rel_loc-bad", NULL);
        assert_int_equal(field_decode(format_field_by_name(r.format, "foo"), r.data, r.size, &v), -EBADMSG);
        assert_array(&r, "deltas", ARRAY(-1, 2, -32768));
        record_done(&r);
}

static void test_old_no_signed(void **state) {
        struct record r;
        struct field_value v;

        record_load(&r, "sched_wakeup_old", "sched_wakeup_old", "sched");
        assert_int_equal(decode_i(&r, "common_pid"), 1234);
        assert_int_equal(decode_i(&r, "common_tgid"), 1234);
        assert_str(&r, "comm", "bash");
        assert_int_equal(decode_i(&r, "pid"), 1234);
        assert_int_equal(decode_i(&r, "prio"), -5);
        assert_int_equal(decode_i(&r, "success"), 1);
        assert_int_equal(decode_u(&r, "dev"), 0xfff00001);
        assert_int_equal(decode_i(&r, "delta"), -1000);
        v = decode(&r, "flag");
        if (CHAR_MIN < 0)
                assert_int_equal(v.i, -1);
        else
                assert_int_equal(v.u, 0xff);
        assert_truncations(&r);
        record_done(&r);
}

/* Locators built by hand around the edges of a 32-byte record. */
static void test_locator_edges(void **state) {
        _cleanup_(format_freep) struct format *f = NULL;
        const struct format_field *d, *rl;
        uint8_t rec[32] = {};
        struct field_value v;
        uint32_t loc;

        assert_int_equal(format_parse("name: e\nID: 9\nformat:\n"
                                      "\tfield:__data_loc char[] d;\toffset:8;\tsize:4;\tsigned:0;\n"
                                      "\tfield:__rel_loc u8[] r;\toffset:12;\tsize:4;\tsigned:0;\n",
                                      NULL, &f),
                         0);
        d = &f->fields[0];
        rl = &f->fields[1];

        /* Exactly to the end: fine, and no NUL needed. */
        memcpy(rec + 16, "0123456789abcdef", 16);
        loc = (16u << 16) | 16;
        memcpy(rec + 8, &loc, 4);
        assert_int_equal(field_decode(d, rec, sizeof(rec), &v), 0);
        assert_int_equal(v.str.len, 16);
        assert_ptr_equal(v.str.ptr, rec + 16);

        /* One byte past: not. */
        loc = (17u << 16) | 16;
        memcpy(rec + 8, &loc, 4);
        assert_int_equal(field_decode(d, rec, sizeof(rec), &v), -EBADMSG);

        /* Offset past the end with length 0: not either. */
        loc = 33;
        memcpy(rec + 8, &loc, 4);
        assert_int_equal(field_decode(d, rec, sizeof(rec), &v), -EBADMSG);

        /* Empty at the very end: an empty string. */
        loc = 32;
        memcpy(rec + 8, &loc, 4);
        assert_int_equal(field_decode(d, rec, sizeof(rec), &v), 0);
        assert_int_equal(v.str.len, 0);

        /* Largest offset and length a locator can say. */
        loc = 0xffffffffu;
        memcpy(rec + 8, &loc, 4);
        assert_int_equal(field_decode(d, rec, sizeof(rec), &v), -EBADMSG);

        /* __rel_loc: from the end of the locator (16): 16 + 0 .. 16 + 16. */
        loc = (16u << 16) | 0;
        memcpy(rec + 12, &loc, 4);
        assert_int_equal(field_decode(rl, rec, sizeof(rec), &v), 0);
        assert_ptr_equal(v.arr.ptr, rec + 16);
        assert_int_equal(v.arr.count, 16);
        assert_int_equal(field_array_get(rl, &v, 15), 'f');

        /* Relative 1 + 16 bytes overruns, though as a __data_loc
         * (absolute offset 1) it would not. */
        loc = (16u << 16) | 1;
        memcpy(rec + 12, &loc, 4);
        assert_int_equal(field_decode(rl, rec, sizeof(rec), &v), -EBADMSG);
        loc = (15u << 16) | 1;
        memcpy(rec + 12, &loc, 4);
        assert_int_equal(field_decode(rl, rec, sizeof(rec), &v), 0);
        assert_ptr_equal(v.arr.ptr, rec + 17);

        /* Record shorter than the locator itself. */
        assert_int_equal(field_decode(rl, rec, 15, &v), -EBADMSG);
        assert_int_equal(field_decode(d, rec, 0, &v), -EBADMSG);
}

/* Values read from unaligned places of every width and sign. */
static void test_unaligned_widths(void **state) {
        _cleanup_(format_freep) struct format *f = NULL;
        uint8_t buf[64 + 1];
        uint8_t *rec = buf + 1; /* odd address on purpose */
        struct field_value v;
        int64_t s64 = -1234567890123;
        uint64_t u64 = UINT64_C(0xfedcba9876543210);
        int32_t s32 = -123456;
        int16_t s16 = -2;
        uint16_t u16 = 0xfffe;

        assert_int_equal(format_parse("name: w\nID: 9\nformat:\n"
                                      "\tfield:s64 a;\toffset:0;\tsize:8;\tsigned:1;\n"
                                      "\tfield:u64 b;\toffset:8;\tsize:8;\tsigned:0;\n"
                                      "\tfield:int c;\toffset:16;\tsize:4;\tsigned:1;\n"
                                      "\tfield:short d;\toffset:20;\tsize:2;\tsigned:1;\n"
                                      "\tfield:unsigned short e;\toffset:22;\tsize:2;\tsigned:0;\n"
                                      "\tfield:s8 g;\toffset:24;\tsize:1;\tsigned:1;\n"
                                      "\tfield:bool h;\toffset:25;\tsize:1;\tsigned:0;\n"
                                      "\tfield:short i;\toffset:32;\tsize:8;\tsigned:0;\n"
                                      "\tfield:u8 j;\toffset:40;\tsize:8;\tsigned:0;\n"
                                      "\tfield:void * k;\toffset:48;\tsize:4;\tsigned:0;\n"
                                      "\tfield:bool l;\toffset:52;\tsize:4;\tsigned:0;\n",
                                      NULL, &f),
                         0);
        memset(buf, 0, sizeof(buf));
        memcpy(rec + 0, &s64, 8);
        memcpy(rec + 8, &u64, 8);
        memcpy(rec + 16, &s32, 4);
        memcpy(rec + 20, &s16, 2);
        memcpy(rec + 22, &u16, 2);
        rec[24] = 0x80;
        rec[25] = 1;
        /* An 8-byte slot holding a short as the kernel writes it:
         * (unsigned long) (short) -3, then junk above the low bytes. */
        uint64_t slot = UINT64_C(0xdead0000fffd);
        memcpy(rec + 32, &slot, 8);
        slot = UINT64_C(0x12345678000000ab);
        memcpy(rec + 40, &slot, 8);
        uint32_t p32 = 0xc0001000;
        memcpy(rec + 48, &p32, 4);
        uint32_t b32 = 0x100;
        memcpy(rec + 52, &b32, 4);

        assert_int_equal(field_decode(&f->fields[0], rec, 64, &v), 0);
        assert_int_equal(v.i, s64);
        assert_int_equal(field_decode(&f->fields[1], rec, 64, &v), 0);
        assert_int_equal(v.u, u64);
        assert_int_equal(field_decode(&f->fields[2], rec, 64, &v), 0);
        assert_int_equal(v.i, s32);
        assert_int_equal(field_decode(&f->fields[3], rec, 64, &v), 0);
        assert_int_equal(v.i, -2);
        assert_int_equal(field_decode(&f->fields[4], rec, 64, &v), 0);
        assert_int_equal(v.u, 0xfffe);
        assert_int_equal(field_decode(&f->fields[5], rec, 64, &v), 0);
        assert_int_equal(v.i, -128);
        assert_int_equal(field_decode(&f->fields[6], rec, 64, &v), 0);
        assert_true(v.b);
        assert_int_equal(field_decode(&f->fields[7], rec, 64, &v), 0);
        assert_int_equal(v.i, -3);
        assert_int_equal(field_decode(&f->fields[8], rec, 64, &v), 0);
        assert_int_equal(v.u, 0xab);
        assert_int_equal(field_decode(&f->fields[9], rec, 64, &v), 0);
        assert_int_equal(v.kind, FIELD_POINTER);
        assert_int_equal(v.u, 0xc0001000);
        assert_int_equal(field_decode(&f->fields[10], rec, 64, &v), 0);
        assert_true(v.b);
}

/* A char[N] with no NUL stops at N, not past it. */
static void test_chars_unterminated(void **state) {
        _cleanup_(format_freep) struct format *f = NULL;
        const char rec[12] = "abcdefghijkl";
        struct field_value v;

        assert_int_equal(format_parse("name: c\nID: 9\nformat:\n"
                                      "\tfield:char comm[8];\toffset:4;\tsize:8;\tsigned:0;\n",
                                      NULL, &f),
                         0);
        assert_int_equal(field_decode(&f->fields[0], rec, sizeof(rec), &v), 0);
        assert_int_equal(v.kind, FIELD_CHARS);
        assert_int_equal(v.str.len, 8);
        assert_memory_equal(v.str.ptr, "efghijkl", 8);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_sched_process_exec),
                cmocka_unit_test(test_sched_process_exec_bad),
                cmocka_unit_test(test_sys_enter_openat),
                cmocka_unit_test(test_sched_switch),
                cmocka_unit_test(test_raw_sys_enter),
                cmocka_unit_test(test_inet_sock_set_state),
                cmocka_unit_test(test_ftrace_print),
                cmocka_unit_test(test_ftrace_function),
                cmocka_unit_test(test_dma_map_sg),
                cmocka_unit_test(test_ipi_send_cpumask),
                cmocka_unit_test(test_rel_loc),
                cmocka_unit_test(test_old_no_signed),
                cmocka_unit_test(test_locator_edges),
                cmocka_unit_test(test_unaligned_widths),
                cmocka_unit_test(test_chars_unterminated),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
