/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* src/daemon/aggregate.c without a daemon: the tables, the buckets and
 * the line, at edge values (0, negative, INT64_MAX, max_keys full). */

#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <json-c/json.h>
#include <linux/perf_event.h>

#include "aggregate.h"
#include "evmon/cleanup.h"
#include "evmon/encode-perf.h"
#include "evmon/json.h"
#include "evmon/tracefs.h"

static const char format_text[] =
        "name: t\n"
        "ID: 1\n"
        "format:\n"
        "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
        "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
        "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
        "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
        "\n"
        "\tfield:long v;\toffset:8;\tsize:8;\tsigned:1;\n"
        "\tfield:char name[16];\toffset:16;\tsize:16;\tsigned:0;\n"
        "\tfield:unsigned long u;\toffset:32;\tsize:8;\tsigned:0;\n"
        "\n"
        "print fmt: \"v=%ld\", REC->v\n";

static struct format *format;
static const char *const names[] = { "t:start", "t:end" };

struct rec {
        uint8_t header[8];
        int64_t v;
        char name[16];
        uint64_t u;
};

static int setup(void **state) {
        return format_parse(format_text, "t", &format) < 0 ? -1 : 0;
}

static int teardown(void **state) {
        format_free(format);
        return 0;
}

static struct aggregate *make(struct agg_spec *spec, char **ret_error) {
        const struct agg_event_info info[2] = { { .name = names[0], .format = format },
                                                { .name = names[1], .format = format } };
        uint64_t start = 1, end = spec->op == AGG_OP_LATENCY ? 2 : 3;
        struct aggregate *a = NULL;

        if (agg_new(spec, info, 2, &start, &end, &a, ret_error) < 0)
                return NULL;
        return a;
}

static void fold(struct aggregate *a, unsigned idx, uint32_t pid, const char *comm, int64_t v, uint64_t time) {
        struct rec r = { .v = v, .u = (uint64_t) v };
        const struct agg_sample s = {
                .idx = idx, .pid = pid, .tid = pid, .time = time, .raw = &r, .raw_size = sizeof(r),
                .comm = comm, .uid = -1,
        };

        if (comm)
                strncpy(r.name, comm, sizeof(r.name) - 1);
        agg_fold(a, &s);
}

/* The window's line, parsed. */
static json_object *emit(struct aggregate *a) {
        struct jbuf b = {};
        json_object *o;

        assert_int_equal(agg_emit(a, &b, 2000, 0, names, 2, false), 0);
        assert_true(b.len > 0 && b.data[b.len - 1] == '\n');
        /* A jbuf holds no NUL. */
        {
                json_tokener *tok = json_tokener_new();

                o = json_tokener_parse_ex(tok, b.data, (int) b.len - 1);
                json_tokener_free(tok);
        }
        assert_non_null(o);
        jbuf_done(&b);
        return o;
}

static json_object *get(json_object *o, const char *key) {
        json_object *v = NULL;

        assert_true(json_object_object_get_ex(o, key, &v));
        return v;
}

static json_object *entry(json_object *o, size_t i) {
        json_object *e = get(o, "entries");

        assert_true(i < json_object_array_length(e));
        return json_object_array_get_idx(e, i);
}

static size_t n_entries(json_object *o) {
        return json_object_array_length(get(o, "entries"));
}

/* Bucket I of entry E: its low (INT64_MIN for null), high (-1 for null) and count. */
static void bucket(json_object *e, size_t i, int64_t *low, int64_t *high, int64_t *count) {
        json_object *b = json_object_array_get_idx(get(e, "buckets"), i), *v;

        assert_non_null(b);
        v = get(b, "low");
        *low = json_object_is_type(v, json_type_null) ? INT64_MIN : json_object_get_int64(v);
        v = get(b, "high");
        *high = json_object_is_type(v, json_type_null) ? -1 : json_object_get_int64(v);
        *count = json_object_get_int64(get(b, "count"));
}

static void test_count_by_comm(void **state) {
        struct agg_spec spec = { .n_by = 1, .by = { { .kind = AGG_KEY_COMM } }, .op = AGG_OP_COUNT };
        struct aggregate *a = make(&spec, NULL);
        json_object *o;

        assert_non_null(a);
        fold(a, 0, 1, "a", 0, 1);
        fold(a, 1, 2, "b", 0, 1);
        fold(a, 0, 3, "b", 0, 1);
        fold(a, 0, 4, "b\x1b[31m", 0, 1);
        fold(a, 0, 5, NULL, 0, 1);
        o = emit(a);
        assert_int_equal(json_object_get_int64(get(o, "events")), 5);
        assert_int_equal(n_entries(o), 4);
        /* Biggest first; a string as it was (the line is JSON), unknown as null. */
        assert_string_equal(json_object_get_string(get(get(entry(o, 0), "key"), "comm")), "b");
        assert_int_equal(json_object_get_int64(get(entry(o, 0), "count")), 2);
        for (size_t i = 1; i < 4; i++)
                assert_int_equal(json_object_get_int64(get(entry(o, i), "count")), 1);
        json_object_put(o);

        /* The next window starts empty. */
        o = emit(a);
        assert_int_equal(n_entries(o), 0);
        assert_int_equal(json_object_get_int64(get(o, "events")), 0);
        json_object_put(o);
        agg_free(a);
}

static void test_hist_edges(void **state) {
        struct agg_spec spec = { .op = AGG_OP_HIST, .field = (char *) "v" };
        struct aggregate *a = make(&spec, NULL);
        int64_t low, high, count;
        json_object *o, *e;

        assert_non_null(a);
        fold(a, 0, 1, NULL, 0, 1);
        fold(a, 0, 1, NULL, -5, 1);
        fold(a, 0, 1, NULL, INT64_MIN, 1);
        fold(a, 0, 1, NULL, 1, 1);
        fold(a, 0, 1, NULL, 7, 1);
        fold(a, 0, 1, NULL, INT64_MAX, 1);
        fold(a, 0, 1, NULL, INT64_MAX, 1);
        o = emit(a);
        e = entry(o, 0);
        assert_int_equal(json_object_get_int64(get(e, "count")), 7);
        assert_int_equal(json_object_get_int64(get(e, "min")), INT64_MIN);
        assert_int_equal(json_object_get_int64(get(e, "max")), INT64_MAX);
        assert_int_equal(json_object_array_length(get(e, "buckets")), 5);
        bucket(e, 0, &low, &high, &count);      /* negatives */
        assert_true(low == INT64_MIN && high == 0 && count == 2);
        bucket(e, 1, &low, &high, &count);
        assert_true(low == 0 && high == 1 && count == 1);
        bucket(e, 2, &low, &high, &count);
        assert_true(low == 1 && high == 2 && count == 1);
        bucket(e, 3, &low, &high, &count);
        assert_true(low == 4 && high == 8 && count == 1);
        bucket(e, 4, &low, &high, &count);
        assert_int_equal(low, INT64_C(1) << 62);
        /* 2^63 is past int64: read back as json-c's u64. */
        assert_int_equal(json_object_get_uint64(get(json_object_array_get_idx(get(e, "buckets"), 4), "high")),
                         UINT64_C(1) << 63);
        assert_int_equal(count, 2);
        json_object_put(o);
        agg_free(a);
}

static void test_unsigned_and_sum_saturate(void **state) {
        struct agg_spec spec = { .op = AGG_OP_SUM, .field = (char *) "u" };
        struct aggregate *a = make(&spec, NULL);
        json_object *o;

        assert_non_null(a);
        fold(a, 0, 1, NULL, -1, 1);     /* u = 2^64 - 1: taken as INT64_MAX */
        fold(a, 0, 1, NULL, 5, 1);
        o = emit(a);
        assert_int_equal(json_object_get_int64(get(entry(o, 0), "value")), INT64_MAX);
        json_object_put(o);
        agg_free(a);
}

static void test_lhist(void **state) {
        struct agg_spec spec = { .op = AGG_OP_LHIST, .field = (char *) "v", .lmin = 0, .lmax = 100, .lstep = 10 };
        struct aggregate *a = make(&spec, NULL);
        int64_t low, high, count;
        json_object *o, *e;

        assert_non_null(a);
        fold(a, 0, 1, NULL, -1, 1);
        fold(a, 0, 1, NULL, 0, 1);
        fold(a, 0, 1, NULL, 55, 1);
        fold(a, 0, 1, NULL, 99, 1);
        fold(a, 0, 1, NULL, 100, 1);
        fold(a, 0, 1, NULL, INT64_MAX, 1);
        o = emit(a);
        e = entry(o, 0);
        bucket(e, 0, &low, &high, &count);
        assert_true(low == INT64_MIN && high == 0 && count == 1);
        bucket(e, 1, &low, &high, &count);
        assert_true(low == 0 && high == 10 && count == 1);
        bucket(e, 2, &low, &high, &count);
        assert_true(low == 50 && high == 60 && count == 1);
        bucket(e, 3, &low, &high, &count);
        assert_true(low == 90 && high == 100 && count == 1);
        bucket(e, 4, &low, &high, &count);
        assert_true(low == 100 && high == -1 && count == 2);
        json_object_put(o);
        agg_free(a);
}

static void test_max_keys(void **state) {
        struct agg_spec spec = { .n_by = 1, .by = { { .kind = AGG_KEY_PID } }, .op = AGG_OP_COUNT, .max_keys = 2,
                                 .cumulative = true };
        struct aggregate *a = make(&spec, NULL);
        json_object *o;

        assert_non_null(a);
        fold(a, 0, 1, NULL, 0, 1);
        fold(a, 0, 2, NULL, 0, 1);
        fold(a, 0, 3, NULL, 0, 1);
        fold(a, 0, 1, NULL, 0, 1);
        fold(a, 0, 4, NULL, 0, 1);
        o = emit(a);
        assert_int_equal(n_entries(o), 2);
        assert_int_equal(json_object_get_int64(get(o, "keys_dropped")), 2);
        assert_int_equal(json_object_get_int64(get(get(entry(o, 0), "key"), "pid")), 1);
        assert_int_equal(json_object_get_int64(get(entry(o, 0), "count")), 2);
        json_object_put(o);
        /* Cumulative: the next line holds it all again. */
        o = emit(a);
        assert_int_equal(n_entries(o), 2);
        json_object_put(o);
        agg_free(a);
}

static void test_field_keys(void **state) {
        struct agg_spec spec = { .n_by = 2, .by = { { .kind = AGG_KEY_FIELD, .field = (char *) "name" },
                                                    { .kind = AGG_KEY_FIELD, .field = (char *) "v" } },
                                 .op = AGG_OP_COUNT };
        struct aggregate *a = make(&spec, NULL);
        json_object *o, *k;

        assert_non_null(a);
        fold(a, 0, 1, "x", -1, 1);
        fold(a, 0, 1, "x", -1, 1);
        fold(a, 0, 1, "x", 2, 1);
        o = emit(a);
        assert_int_equal(n_entries(o), 2);
        k = get(entry(o, 0), "key");
        assert_string_equal(json_object_get_string(get(k, "name")), "x");
        assert_int_equal(json_object_get_int64(get(k, "v")), -1);
        json_object_put(o);
        agg_free(a);
}

static void test_latency(void **state) {
        struct agg_spec spec = { .op = AGG_OP_LATENCY, .match = { .kind = AGG_KEY_TID } };
        struct aggregate *a = make(&spec, NULL);
        int64_t low, high, count;
        json_object *o, *e;

        assert_non_null(a);
        fold(a, 0, 5, NULL, 0, 100);
        fold(a, 0, 6, NULL, 0, 100);
        fold(a, 1, 5, NULL, 0, 1100);   /* 1000 ns: [512, 1024) */
        fold(a, 1, 7, NULL, 0, 1200);   /* no start */
        fold(a, 1, 5, NULL, 0, 1300);   /* its start was taken */
        o = emit(a);
        assert_int_equal(json_object_get_int64(get(o, "unmatched")), 2);
        assert_int_equal(n_entries(o), 1);
        e = entry(o, 0);
        bucket(e, 0, &low, &high, &count);
        assert_true(low == 512 && high == 1024 && count == 1);
        json_object_put(o);
        /* A start pending over a window is matched in the next. */
        fold(a, 1, 6, NULL, 0, 100 + 5000000);
        o = emit(a);
        assert_int_equal(n_entries(o), 1);
        bucket(entry(o, 0), 0, &low, &high, &count);
        assert_true(low == 4194304 && count == 1);
        json_object_put(o);
        agg_free(a);
}

static const uint64_t chain[] = { (uint64_t) PERF_CONTEXT_KERNEL, 0xffff1000, 0xffff2000,
                                  (uint64_t) PERF_CONTEXT_USER, 0x401000 };
static const struct encode_frame chain_frames[] = {
        {}, { .sym = "vfs_read", .off = 0x1a }, { .sym = "ksys_read", .off = 0x4 }, {}, {},
};
static int frames_asked;

static const struct encode_frame *get_frames(void *userdata) {
        frames_asked++;
        return chain_frames;
}

static void test_stacks(void **state) {
        const struct agg_event_info info[2] = {
                { .name = names[0], .format = format, .sample_type = PERF_SAMPLE_CALLCHAIN },
                { .name = names[1], .format = format, .sample_type = PERF_SAMPLE_CALLCHAIN },
        };
        struct agg_spec spec = { .n_by = 4, .by = { { .kind = AGG_KEY_STACK }, { .kind = AGG_KEY_KSTACK },
                                                    { .kind = AGG_KEY_USTACK }, { .kind = AGG_KEY_FRAME } } };
        const struct agg_sample s = { .idx = 0, .pid = 1, .tid = 1, .uid = -1, .n_ips = 5, .ips = chain,
                                      .frames = get_frames };
        uint64_t bits = 3;
        struct aggregate *a = NULL;
        json_object *o, *k, *st;

        assert_int_equal(agg_new(&spec, info, 2, &bits, &bits, &a, NULL), 0);
        frames_asked = 0;
        for (int i = 0; i < 3; i++)
                agg_fold(a, &s);
        /* Symbolized once per stack key and window, not per event. */
        assert_int_equal(frames_asked, 4);
        o = emit(a);
        assert_int_equal(n_entries(o), 1);
        assert_int_equal(json_object_get_int64(get(entry(o, 0), "count")), 3);
        k = get(entry(o, 0), "key");
        /* Root first: the user frame (no symbol: its address), then the kernel's. */
        st = get(k, "stack");
        assert_int_equal(json_object_array_length(st), 3);
        assert_string_equal(json_object_get_string(json_object_array_get_idx(st, 0)), "0x401000");
        assert_string_equal(json_object_get_string(json_object_array_get_idx(st, 1)), "ksys_read+0x4");
        assert_string_equal(json_object_get_string(json_object_array_get_idx(st, 2)), "vfs_read+0x1a");
        st = get(k, "kstack");
        assert_int_equal(json_object_array_length(st), 2);
        assert_string_equal(json_object_get_string(json_object_array_get_idx(st, 1)), "vfs_read+0x1a");
        st = get(k, "ustack");
        assert_int_equal(json_object_array_length(st), 1);
        assert_string_equal(json_object_get_string(get(k, "frame")), "vfs_read+0x1a");
        json_object_put(o);
        agg_free(a);
}

static void test_errors(void **state) {
        struct agg_spec spec = { .op = AGG_OP_HIST, .field = (char *) "nope" };
        _cleanup_(freep) char *error = NULL, *error2 = NULL, *error3 = NULL;

        assert_null(make(&spec, &error));
        assert_string_equal(error, "aggregate: t:start has no integer field \"nope\" (evmonctl describe EVENT lists "
                                   "its fields)");
        spec.field = (char *) "name";
        assert_null(make(&spec, &error2));
        assert_non_null(strstr(error2, "it is a string"));
        spec = (struct agg_spec) { .n_by = 1, .by = { { .kind = AGG_KEY_STACK } } };
        assert_null(make(&spec, &error3));
        assert_non_null(strstr(error3, "has no callchain"));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_count_by_comm),
                cmocka_unit_test(test_hist_edges),
                cmocka_unit_test(test_unsigned_and_sum_saturate),
                cmocka_unit_test(test_lhist),
                cmocka_unit_test(test_max_keys),
                cmocka_unit_test(test_field_keys),
                cmocka_unit_test(test_latency),
                cmocka_unit_test(test_stacks),
                cmocka_unit_test(test_errors),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
