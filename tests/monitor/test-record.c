/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* record_parse() on raw bytes of every PERF_RECORD_* type
 * (fixtures/records.h): bodies, the sample_id trailer found from the end,
 * strings that must end inside the body, truncations. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "evmon/monitor.h"
#include "fixtures/records.h"

static uint64_t buf[8192];

static const struct perf_event_attr attr_sid = {
        .sample_type = RECORD_SAMPLE_TYPE,
        .sample_id_all = 1,
        .read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_ID,
};

static const struct perf_event_attr attr_nosid = {
        .sample_type = RECORD_SAMPLE_TYPE,
};

static const struct perf_event_header *copy(const uint8_t *bytes, size_t n, uint16_t size) {
        struct perf_event_header *h = (struct perf_event_header *) buf;

        assert_true(n <= sizeof(buf));
        memset(buf, 0x5a, sizeof(buf));
        memcpy(buf, bytes, n);
        h->size = size;
        return h;
}

#define PARSE(fx, attr, rec)                                                            \
        assert_int_equal(record_parse(attr, copy(fx, sizeof(fx), sizeof(fx)), rec), 0)

static void check_sid(const struct perf_record *r) {
        assert_true(r->has_sid);
        assert_int_equal(r->sid.pid, 7);
        assert_int_equal(r->sid.tid, 8);
        assert_int_equal(r->sid.time, 9000);
        assert_int_equal(r->sid.id, 0x1d);
        assert_int_equal(r->sid.stream_id, 0x57);
        assert_int_equal(r->sid.cpu, 3);
        assert_int_equal(r->sid.identifier, 0x1de);
}

static void test_all_fixtures_and_truncations(void **state) {
        for (size_t i = 0; i < sizeof(record_fixtures) / sizeof(record_fixtures[0]); i++) {
                const struct record_fixture *f = &record_fixtures[i];
                const struct perf_event_attr *attr = f->sid ? &attr_sid : &attr_nosid;
                const struct perf_event_header *h = (const struct perf_event_header *) f->bytes;
                struct perf_record r;

                if (h->size != f->size)
                        fail_msg("%s: header.size %u, %zu bytes", f->name, h->size, f->size);

                h = copy(f->bytes, f->size, (uint16_t) f->size);
                if (record_parse(attr, h, &r) != 0)
                        fail_msg("%s does not parse", f->name);
                assert_int_equal(r.type, h->type);
                assert_int_equal(r.misc, h->misc);
                assert_int_equal(r.has_sid, f->sid);
                if (f->sid)
                        check_sid(&r);
                assert_non_null(record_type_to_string(r.type));

                for (size_t size = 8; size < f->size; size += 8) {
                        h = copy(f->bytes, size, (uint16_t) size);
                        if (record_parse(attr, h, &r) != -EBADMSG)
                                fail_msg("%s cut to %zu bytes: not -EBADMSG", f->name, size);
                }
        }
}

static void test_mmap_comm(void **state) {
        struct perf_record r;

        PARSE(rec_mmap, &attr_sid, &r);
        assert_int_equal(r.mmap.pid, 10);
        assert_int_equal(r.mmap.tid, 11);
        assert_int_equal(r.mmap.addr, 0x400000);
        assert_int_equal(r.mmap.len, 0x1000);
        assert_string_equal(r.mmap.filename, "/bin/ls");

        PARSE(rec_comm, &attr_sid, &r);
        assert_int_equal(r.misc, PERF_RECORD_MISC_COMM_EXEC);
        assert_int_equal(r.comm.pid, 13);
        assert_string_equal(r.comm.comm, "bash");

        PARSE(rec_comm_nosid, &attr_nosid, &r);
        assert_false(r.has_sid);
        assert_string_equal(r.comm.comm, "bash");
        /* NULL attr: no sample_id_all. */
        PARSE(rec_comm_nosid, NULL, &r);
        assert_string_equal(r.comm.comm, "bash");
}

static void test_mmap2(void **state) {
        struct perf_record r;

        PARSE(rec_mmap2, &attr_sid, &r);
        assert_false(r.mmap2.has_build_id);
        assert_int_equal(r.mmap2.pid, 21);
        assert_int_equal(r.mmap2.pgoff, 0x1000);
        assert_int_equal(r.mmap2.maj, 8);
        assert_int_equal(r.mmap2.min, 1);
        assert_int_equal(r.mmap2.ino, 123456);
        assert_int_equal(r.mmap2.ino_generation, 2);
        assert_int_equal(r.mmap2.prot, 5);
        assert_int_equal(r.mmap2.flags, 2);
        assert_string_equal(r.mmap2.filename, "/lib/x.so");

        PARSE(rec_mmap2_build_id, &attr_sid, &r);
        assert_true(r.mmap2.has_build_id);
        assert_int_equal(r.mmap2.build_id_size, 20);
        assert_int_equal(r.mmap2.build_id[0], 0x01);
        assert_int_equal(r.mmap2.build_id[19], 0xdd);
        assert_int_equal(r.mmap2.prot, 5);
        assert_string_equal(r.mmap2.filename, "/lib/x.so");

        /* A build-id size past its 20 bytes is a lie. */
        copy(rec_mmap2_build_id, sizeof(rec_mmap2_build_id), sizeof(rec_mmap2_build_id));
        ((uint8_t *) buf)[40] = 21;
        assert_int_equal(record_parse(&attr_sid, (struct perf_event_header *) buf, &r), -EBADMSG);
}

static void test_lost(void **state) {
        struct perf_record r;

        PARSE(rec_lost, &attr_sid, &r);
        assert_int_equal(r.lost.id, 0x1d);
        assert_int_equal(r.lost.lost, 12);

        PARSE(rec_lost_nosid, &attr_nosid, &r);
        assert_int_equal(r.lost.lost, 99);

        PARSE(rec_lost_samples, &attr_sid, &r);
        assert_int_equal(r.lost_samples.lost, 25);
}

static void test_task(void **state) {
        struct perf_record r;

        PARSE(rec_exit, &attr_sid, &r);
        assert_int_equal(r.task.pid, 15);
        assert_int_equal(r.task.ppid, 1);
        assert_int_equal(r.task.tid, 16);
        assert_int_equal(r.task.ptid, 2);
        assert_int_equal(r.task.time, 8000);

        PARSE(rec_fork, &attr_sid, &r);
        assert_int_equal(r.task.pid, 17);
        assert_int_equal(r.task.ptid, 16);
        assert_int_equal(r.task.time, 8300);

        PARSE(rec_throttle, &attr_sid, &r);
        assert_int_equal(r.throttle.time, 8100);
        assert_int_equal(r.throttle.id, 0x1d);
        assert_int_equal(r.throttle.stream_id, 0x57);
        PARSE(rec_unthrottle, &attr_sid, &r);
        assert_int_equal(r.type, PERF_RECORD_UNTHROTTLE);
        assert_int_equal(r.throttle.time, 8200);
}

static void test_read(void **state) {
        struct perf_read_value v;
        struct perf_record r;

        PARSE(rec_read, &attr_sid, &r);
        assert_int_equal(r.read.pid, 19);
        assert_int_equal(r.read.tid, 20);
        assert_int_equal(r.read.values.nr, 1);
        assert_int_equal(r.read.values.time_enabled, 6000);
        assert_int_equal(perf_read_get(&r.read.values, 0, &v), 0);
        assert_int_equal(v.value, 77);
        assert_int_equal(v.id, 0x1d);
}

static void test_aux_itrace_switch(void **state) {
        struct perf_record r;

        PARSE(rec_aux, &attr_sid, &r);
        assert_int_equal(r.aux.aux_offset, 0x10000);
        assert_int_equal(r.aux.aux_size, 0x800);
        assert_int_equal(r.aux.flags, PERF_AUX_FLAG_TRUNCATED);

        PARSE(rec_itrace_start, &attr_sid, &r);
        assert_int_equal(r.itrace_start.pid, 23);
        assert_int_equal(r.itrace_start.tid, 24);

        PARSE(rec_switch, &attr_sid, &r);
        assert_int_equal(r.misc, PERF_RECORD_MISC_SWITCH_OUT);

        PARSE(rec_switch_cpu_wide, &attr_sid, &r);
        assert_int_equal(r.switch_cpu_wide.next_prev_pid, 26);
        assert_int_equal(r.switch_cpu_wide.next_prev_tid, 27);

        PARSE(rec_aux_output_hw_id, &attr_sid, &r);
        assert_int_equal(r.aux_output_hw_id.hw_id, 0x42);
}

static void test_namespaces(void **state) {
        struct perf_record r;

        PARSE(rec_namespaces, &attr_sid, &r);
        assert_int_equal(r.namespaces.pid, 28);
        assert_int_equal(r.namespaces.nr, 2);
        assert_int_equal(r.namespaces.dev_ino[0], 4);
        assert_int_equal(r.namespaces.dev_ino[1], 4026531840);
        assert_int_equal(r.namespaces.dev_ino[3], 4026531841);

        /* An nr whose size wraps around. */
        copy(rec_namespaces, sizeof(rec_namespaces), sizeof(rec_namespaces));
        buf[2] = 1ULL << 60;
        assert_int_equal(record_parse(&attr_sid, (struct perf_event_header *) buf, &r), -EBADMSG);
}

static void test_ksymbol_bpf_cgroup(void **state) {
        struct perf_record r;

        PARSE(rec_ksymbol, &attr_sid, &r);
        assert_int_equal(r.ksymbol.addr, 0xffffffffc0000000);
        assert_int_equal(r.ksymbol.len, 0x80);
        assert_int_equal(r.ksymbol.ksym_type, PERF_RECORD_KSYMBOL_TYPE_BPF);
        assert_int_equal(r.ksymbol.flags, 0);
        assert_string_equal(r.ksymbol.name, "bpf_prog_x");

        PARSE(rec_bpf_event, &attr_sid, &r);
        assert_int_equal(r.bpf_event.type, PERF_BPF_EVENT_PROG_LOAD);
        assert_int_equal(r.bpf_event.id, 31);
        assert_int_equal(r.bpf_event.tag[0], 0xde);
        assert_int_equal(r.bpf_event.tag[7], 0x33);

        PARSE(rec_cgroup, &attr_sid, &r);
        assert_int_equal(r.cgroup.id, 0x1234);
        assert_string_equal(r.cgroup.path, "/system.slice");

        /* A string without its NUL inside the body (the trailer follows
         * it, and must not be read as the string's end). */
        copy(rec_cgroup, sizeof(rec_cgroup), sizeof(rec_cgroup));
        memset((uint8_t *) buf + 16, 'x', 16);
        assert_int_equal(record_parse(&attr_sid, (struct perf_event_header *) buf, &r), -EBADMSG);
}

static void test_text_poke(void **state) {
        struct perf_record r;

        PARSE(rec_text_poke, &attr_sid, &r);
        assert_int_equal(r.text_poke.addr, 0xffffffff81001000);
        assert_int_equal(r.text_poke.old_len, 3);
        assert_int_equal(r.text_poke.new_len, 2);
        assert_int_equal(r.text_poke.bytes[0], 0x0f);
        assert_int_equal(r.text_poke.bytes[3], 0xe9);
        assert_int_equal(r.text_poke.bytes[4], 0x90);

        /* Lengths past the body. */
        copy(rec_text_poke, sizeof(rec_text_poke), sizeof(rec_text_poke));
        ((uint8_t *) buf)[16] = 0xff;
        assert_int_equal(record_parse(&attr_sid, (struct perf_event_header *) buf, &r), -EBADMSG);
}

static void test_callchain_deferred(void **state) {
        struct perf_record r;

        PARSE(rec_callchain_deferred, &attr_sid, &r);
        assert_int_equal(r.type, 22);
        assert_int_equal(r.callchain_deferred.cookie, 0xc00c1e);
        assert_int_equal(r.callchain_deferred.nr, 2);
        assert_int_equal(r.callchain_deferred.ips[1], 0x401100);
        assert_string_equal(record_type_to_string(22), "CALLCHAIN_DEFERRED");
}

static void test_sample_and_unknown(void **state) {
        const struct sample_fixture *f = &sample_fixtures[0];
        struct perf_record r;

        /* A sample goes through sample_parse(), without a trailer. */
        assert_int_equal(record_parse(&f->attr, copy(f->bytes, f->size, (uint16_t) f->size), &r), 0);
        assert_int_equal(r.type, PERF_RECORD_SAMPLE);
        assert_false(r.has_sid);
        assert_int_equal(r.sample.id, 0x1111);
        assert_int_equal(r.sample.tid, 101);
        assert_int_equal(record_parse(NULL, (struct perf_event_header *) buf, &r), -EINVAL);

        /* Unknown: type and misc, nothing else, no error. */
        PARSE(rec_unknown, &attr_sid, &r);
        assert_int_equal(r.type, 99);
        assert_int_equal(r.misc, 0x55);
        assert_false(r.has_sid);
        assert_null(record_type_to_string(99));

        /* Shorter than a header. */
        copy(rec_lost, sizeof(rec_lost), 4);
        assert_int_equal(record_parse(&attr_sid, (struct perf_event_header *) buf, &r), -EBADMSG);
}

static void test_type_names(void **state) {
        assert_string_equal(record_type_to_string(PERF_RECORD_MMAP), "MMAP");
        assert_string_equal(record_type_to_string(PERF_RECORD_SAMPLE), "SAMPLE");
        assert_string_equal(record_type_to_string(PERF_RECORD_AUX_OUTPUT_HW_ID), "AUX_OUTPUT_HW_ID");
        assert_null(record_type_to_string(0));
        assert_null(record_type_to_string(23));
        assert_null(record_type_to_string(UINT32_MAX));
}

/* Only IDENTIFIER in the trailer: it is also the id. */
static void test_sid_identifier_only(void **state) {
        static const struct perf_event_attr attr = {
                .sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TIME,
                .sample_id_all = 1,
        };
        FIXTURE(lost) = {
                HDR(PERF_RECORD_LOST, 0, 40),
                B64(0x99), B64(3),
                B64(777),               /* time */
                B64(0x99),              /* identifier */
        };
        struct perf_record r;

        PARSE(lost, &attr, &r);
        assert_int_equal(r.lost.lost, 3);
        assert_int_equal(r.sid.time, 777);
        assert_int_equal(r.sid.identifier, 0x99);
        assert_int_equal(r.sid.id, 0x99);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_all_fixtures_and_truncations),
                cmocka_unit_test(test_mmap_comm),
                cmocka_unit_test(test_mmap2),
                cmocka_unit_test(test_lost),
                cmocka_unit_test(test_task),
                cmocka_unit_test(test_read),
                cmocka_unit_test(test_aux_itrace_switch),
                cmocka_unit_test(test_namespaces),
                cmocka_unit_test(test_ksymbol_bpf_cgroup),
                cmocka_unit_test(test_text_poke),
                cmocka_unit_test(test_callchain_deferred),
                cmocka_unit_test(test_sample_and_unknown),
                cmocka_unit_test(test_type_names),
                cmocka_unit_test(test_sid_identifier_only),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
