/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sample_parse() on raw PERF_RECORD_SAMPLE bytes (fixtures/samples.h) for
 * many sample_type combinations, and on every truncation of them. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "evmon/monitor.h"
#include "fixtures/samples.h"

static uint64_t buf[8192];

/* A private, aligned copy whose header.size is SIZE. */
static const struct perf_event_header *copy(const uint8_t *bytes, size_t n, uint16_t size) {
        struct perf_event_header *h = (struct perf_event_header *) buf;

        assert_true(n <= sizeof(buf));
        memset(buf, 0x5a, sizeof(buf));
        memcpy(buf, bytes, n);
        h->size = size;
        return h;
}

static const struct sample_fixture *fixture(const char *name) {
        for (size_t i = 0; i < sizeof(sample_fixtures) / sizeof(sample_fixtures[0]); i++)
                if (strcmp(sample_fixtures[i].name, name) == 0)
                        return &sample_fixtures[i];
        fail_msg("no fixture %s", name);
        return NULL;
}

static void parse(const char *name, struct perf_sample *s) {
        const struct sample_fixture *f = fixture(name);
        const struct perf_event_header *h = copy(f->bytes, f->size, (uint16_t) f->size);

        assert_int_equal(sample_parse(&f->attr, h, s), 0);
        assert_int_equal(s->sample_type, f->attr.sample_type);
}

/* Every fixture: header.size matches the bytes, it parses, and every
 * shorter size (the record cut at any u64 boundary) is -EBADMSG, never a
 * read past header.size (the tail of buf is poison). */
static void test_all_fixtures_and_truncations(void **state) {
        for (size_t i = 0; i < sizeof(sample_fixtures) / sizeof(sample_fixtures[0]); i++) {
                const struct sample_fixture *f = &sample_fixtures[i];
                const struct perf_event_header *h;
                struct perf_sample s;

                h = (const struct perf_event_header *) f->bytes;
                if (h->size != f->size)
                        fail_msg("%s: header.size %u, %zu bytes", f->name, h->size, f->size);
                assert_int_equal(h->type, PERF_RECORD_SAMPLE);

                h = copy(f->bytes, f->size, (uint16_t) f->size);
                if (sample_parse(&f->attr, h, &s) != 0)
                        fail_msg("%s does not parse", f->name);

                for (size_t size = 8; size < f->size; size += 8) {
                        /* Only what is within size is copied: the rest is poison. */
                        h = copy(f->bytes, size, (uint16_t) size);
                        if (sample_parse(&f->attr, h, &s) != -EBADMSG)
                                fail_msg("%s cut to %zu bytes: not -EBADMSG", f->name, size);
                }
        }
}

static void test_monitor_layout(void **state) {
        struct perf_sample s;
        const uint8_t *raw;

        parse("sample_monitor", &s);
        assert_int_equal(s.id, 0x1111);
        assert_int_equal(s.pid, 100);
        assert_int_equal(s.tid, 101);
        assert_int_equal(s.time, 123456789);
        assert_int_equal(s.cpu, 1);
        assert_int_equal(s.raw.size, 20);
        raw = s.raw.data;
        assert_ptr_equal(raw, (const uint8_t *) buf + 44);
        assert_int_equal(raw[0] | raw[1] << 8, 300);
        assert_int_equal(raw[4], 101);
        assert_int_equal(raw[8], 110);
}

/* evmond's layout with PERF_SAMPLE_CGROUP after RAW (its fast path):
 * the id lands, and every cut is -EBADMSG. */
static void test_monitor_layout_cgroup(void **state) {
        const struct sample_fixture *f = fixture("sample_monitor");
        struct perf_event_attr attr = f->attr;
        uint8_t bytes[512];
        uint64_t cgroup = 0x123456789abcdefULL;
        const struct perf_event_header *h;
        struct perf_sample s;

        assert_true(f->size + 8 <= sizeof(bytes));
        memcpy(bytes, f->bytes, f->size);
        memcpy(bytes + f->size, &cgroup, 8);
        attr.sample_type |= PERF_SAMPLE_CGROUP;

        h = copy(bytes, f->size + 8, (uint16_t) (f->size + 8));
        assert_int_equal(sample_parse(&attr, h, &s), 0);
        assert_int_equal(s.cgroup, cgroup);
        assert_int_equal(s.tid, 101);
        assert_int_equal(s.raw.size, 20);
        assert_int_equal(s.sample_type, attr.sample_type);
        for (size_t cut = 8; cut < f->size + 8; cut += 8) {
                h = copy(bytes, cut, (uint16_t) cut);
                assert_int_equal(sample_parse(&attr, h, &s), -EBADMSG);
        }
}

static void test_basic(void **state) {
        struct perf_sample s;

        parse("sample_basic", &s);
        assert_int_equal(s.ip, 0x401000);
        assert_int_equal(s.pid, 200);
        assert_int_equal(s.tid, 201);
        assert_int_equal(s.time, 5000);
        assert_int_equal(s.addr, 0x7ffd0000);
        assert_int_equal(s.id, 0x2222);
        assert_int_equal(s.stream_id, 0x3333);
        assert_int_equal(s.cpu, 3);
        assert_int_equal(s.period, 17);
}

/* PERF_SAMPLE_READ, one counter or a group: what each fixture holds. */
struct read_case {
        const char *fixture;
        uint64_t tid, id;               /* 0: not checked */
        uint64_t nr, time_enabled, time_running;
        struct perf_read_value values[2];
};

static const struct read_case read_cases[] = {
        { "sample_read", 301, 0, 1, 1000, 900, { { .value = 42, .id = 0x4444, .lost = 5 } } },
        { "sample_read_group", 0, 0x5555, 2, 2000, 0,
          { { .value = 10, .id = 0x5555, .lost = 1 }, { .value = 20, .id = 0x5556, .lost = 2 } } },
};

static void test_read_case(void **state) {
        const struct read_case *c = *state;
        struct perf_read_value v;
        struct perf_sample s;

        parse(c->fixture, &s);
        if (c->tid)
                assert_int_equal(s.tid, c->tid);
        if (c->id)
                assert_int_equal(s.id, c->id);
        assert_int_equal(s.read.nr, c->nr);
        assert_int_equal(s.read.time_enabled, c->time_enabled);
        assert_int_equal(s.read.time_running, c->time_running);
        for (uint64_t i = 0; i < c->nr; i++) {
                assert_int_equal(perf_read_get(&s.read, i, &v), 0);
                assert_int_equal(v.value, c->values[i].value);
                assert_int_equal(v.id, c->values[i].id);
                assert_int_equal(v.lost, c->values[i].lost);
        }
        assert_int_equal(perf_read_get(&s.read, c->nr, &v), -ERANGE);
}

static void test_callchain(void **state) {
        struct perf_sample s;

        parse("sample_callchain", &s);
        assert_int_equal(s.ip, 0x401234);
        assert_int_equal(s.callchain.nr, 3);
        assert_true(s.callchain.ips[0] == (uint64_t) PERF_CONTEXT_KERNEL);
        assert_true(s.callchain.ips[2] == 0xffffffff81000010);
}

static void test_branch(void **state) {
        struct perf_sample s;

        parse("sample_branch", &s);
        assert_int_equal(s.branch_stack.nr, 2);
        assert_true(s.branch_stack.has_hw_idx);
        assert_int_equal(s.branch_stack.hw_idx, 7);
        assert_int_equal(s.branch_stack.entries[0].from, 0x1000);
        assert_int_equal(s.branch_stack.entries[1].to, 0x4000);
        assert_non_null(s.branch_stack.counters);
        assert_int_equal(s.branch_stack.counters[1], 0xc2);

        parse("sample_branch_plain", &s);
        assert_int_equal(s.branch_stack.nr, 1);
        assert_false(s.branch_stack.has_hw_idx);
        assert_null(s.branch_stack.counters);
        assert_int_equal(s.branch_stack.entries[0].from, 0x5000);
        assert_int_equal(s.branch_stack.entries[0].to, 0x6000);
}

static void test_regs_stack(void **state) {
        struct perf_sample s;
        const uint8_t *stack;

        parse("sample_regs_stack", &s);
        assert_int_equal(s.regs_user.abi, PERF_SAMPLE_REGS_ABI_64);
        assert_int_equal(s.regs_user.mask, 0xb);
        assert_int_equal(s.regs_user.regs[0], 0xa0);
        assert_int_equal(s.regs_user.regs[2], 0xa3);
        assert_int_equal(s.stack_user.size, 16);
        stack = s.stack_user.data;
        assert_int_equal(stack[0], 0);
        assert_int_equal(stack[15], 15);
        assert_int_equal(s.stack_user.dyn_size, 12);

        parse("sample_regs_none", &s);
        assert_int_equal(s.regs_user.abi, PERF_SAMPLE_REGS_ABI_NONE);
        assert_null(s.regs_user.regs);
        assert_int_equal(s.stack_user.size, 0);
        assert_null(s.stack_user.data);
        assert_int_equal(s.stack_user.dyn_size, 0);
}

static void test_weight_struct(void **state) {
        struct perf_sample s;

        parse("sample_weight_struct", &s);
        /* The full u64; its parts are var1_dw, var2_w, var3_w low to high. */
        assert_true(s.weight == (0x30ULL << 48 | 0x20ULL << 32 | 0x10));
        assert_int_equal(s.data_src, 0x68100142);
}

static void test_raw_padding(void **state) {
        struct perf_sample s;
        const uint8_t *raw;

        parse("sample_raw_padded", &s);
        assert_int_equal(s.raw.size, 3);
        raw = s.raw.data;
        assert_int_equal(raw[2], 0xcc);
        assert_int_equal(s.branch_stack.nr, 1);
        assert_int_equal(s.branch_stack.entries[0].to, 0x8000);
}

static void test_all_fields(void **state) {
        struct perf_read_value v;
        struct perf_sample s;
        const uint32_t *raw;

        parse("sample_all", &s);
        assert_int_equal(s.id, 0xa01);
        assert_int_equal(s.ip, 0xa02);
        assert_int_equal(s.pid, 0xa03);
        assert_int_equal(s.tid, 0xa04);
        assert_int_equal(s.time, 0xa05);
        assert_int_equal(s.addr, 0xa06);
        assert_int_equal(s.stream_id, 0xa07);
        assert_int_equal(s.cpu, 1);
        assert_int_equal(s.period, 0xa08);
        assert_int_equal(perf_read_get(&s.read, 0, &v), 0);
        assert_int_equal(v.value, 0xa09);
        assert_int_equal(v.id, 0xa01);
        assert_int_equal(s.callchain.nr, 1);
        assert_int_equal(s.callchain.ips[0], 0xa0a);
        assert_int_equal(s.raw.size, 4);
        raw = s.raw.data;
        assert_int_equal(*raw, 0xa0b0a0b);
        assert_int_equal(s.branch_stack.nr, 1);
        assert_int_equal(s.branch_stack.hw_idx, 0xa0c);
        assert_int_equal(s.branch_stack.entries[0].from, 0xa0d);
        assert_int_equal(s.branch_stack.entries[0].to, 0xa0e);
        assert_int_equal(s.regs_user.regs[0], 0xa10);
        assert_int_equal(s.stack_user.size, 8);
        assert_int_equal(*(const uint64_t *) s.stack_user.data, 0xa11);
        assert_int_equal(s.stack_user.dyn_size, 8);
        assert_int_equal(s.weight, 0xa12);
        assert_int_equal(s.data_src, 0xa13);
        assert_int_equal(s.transaction, 0xa14);
        assert_int_equal(s.regs_intr.abi, PERF_SAMPLE_REGS_ABI_64);
        assert_int_equal(s.regs_intr.mask, 0x6);
        assert_int_equal(s.regs_intr.regs[0], 0xa15);
        assert_int_equal(s.regs_intr.regs[1], 0xa16);
        assert_int_equal(s.phys_addr, 0xa17);
        assert_int_equal(s.cgroup, 0xa18);
        assert_int_equal(s.data_page_size, 4096);
        assert_int_equal(s.code_page_size, 2097152);
        assert_int_equal(s.aux.size, 8);
        assert_int_equal(*(const uint64_t *) s.aux.data, 0xa19);
        assert_ptr_equal(s.aux.data, (const uint8_t *) buf + 288);
}

/* Counts that would overflow nr * size, or sizes past the end. */
static void test_hostile_counts(void **state) {
        const struct sample_fixture *f;
        struct perf_event_header *h;
        struct perf_sample s;

        f = fixture("sample_callchain");
        h = (struct perf_event_header *) copy(f->bytes, f->size, (uint16_t) f->size);
        buf[2] = 1ULL << 61;    /* nr: nr * 8 wraps to 0 */
        assert_int_equal(sample_parse(&f->attr, h, &s), -EBADMSG);
        buf[2] = UINT64_MAX;
        assert_int_equal(sample_parse(&f->attr, h, &s), -EBADMSG);

        f = fixture("sample_monitor");
        h = (struct perf_event_header *) copy(f->bytes, f->size, (uint16_t) f->size);
        memcpy((uint8_t *) buf + 40, &(uint32_t) { UINT32_MAX }, 4);     /* raw size */
        assert_int_equal(sample_parse(&f->attr, h, &s), -EBADMSG);
        memcpy((uint8_t *) buf + 40, &(uint32_t) { 21 }, 4);     /* no room for padding */
        assert_int_equal(sample_parse(&f->attr, h, &s), -EBADMSG);

        f = fixture("sample_branch");
        h = (struct perf_event_header *) copy(f->bytes, f->size, (uint16_t) f->size);
        buf[1] = (UINT64_MAX / 24) + 1;
        assert_int_equal(sample_parse(&f->attr, h, &s), -EBADMSG);

        f = fixture("sample_read_group");
        h = (struct perf_event_header *) copy(f->bytes, f->size, (uint16_t) f->size);
        buf[2] = 3;             /* three members, room for two */
        assert_int_equal(sample_parse(&f->attr, h, &s), -EBADMSG);

        f = fixture("sample_regs_stack");
        h = (struct perf_event_header *) copy(f->bytes, f->size, (uint16_t) f->size);
        buf[5] = 1ULL << 40;    /* stack size */
        assert_int_equal(sample_parse(&f->attr, h, &s), -EBADMSG);
}

static void test_misuse(void **state) {
        const struct sample_fixture *f = fixture("sample_basic");
        struct perf_event_attr attr = f->attr;
        struct perf_event_header *h;
        struct perf_sample s;

        h = (struct perf_event_header *) copy(f->bytes, f->size, (uint16_t) f->size);

        /* A sample_type bit we do not know the layout of. */
        attr.sample_type |= 1ULL << 40;
        assert_int_equal(sample_parse(&attr, h, &s), -EOPNOTSUPP);

        /* Not a sample. */
        h->type = PERF_RECORD_COMM;
        assert_int_equal(sample_parse(&f->attr, h, &s), -EINVAL);
        h->type = PERF_RECORD_SAMPLE;

        /* Shorter than its own header. */
        h->size = 4;
        assert_int_equal(sample_parse(&f->attr, h, &s), -EBADMSG);

        assert_int_equal(sample_parse(NULL, h, &s), -EINVAL);

        /* No fields: just the header is a valid empty sample. */
        attr = (struct perf_event_attr) {};
        h->size = 8;
        assert_int_equal(sample_parse(&attr, h, &s), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_all_fixtures_and_truncations),
                cmocka_unit_test(test_monitor_layout),
                cmocka_unit_test(test_monitor_layout_cgroup),
                cmocka_unit_test(test_basic),
                { "test_read", test_read_case, NULL, NULL, (void *) &read_cases[0] },
                { "test_read_group", test_read_case, NULL, NULL, (void *) &read_cases[1] },
                cmocka_unit_test(test_callchain),
                cmocka_unit_test(test_branch),
                cmocka_unit_test(test_regs_stack),
                cmocka_unit_test(test_weight_struct),
                cmocka_unit_test(test_raw_padding),
                cmocka_unit_test(test_all_fields),
                cmocka_unit_test(test_hostile_counts),
                cmocka_unit_test(test_misuse),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
