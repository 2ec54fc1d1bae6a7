/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The JSON line writer: primitives against snprintf/gmtime_r, strings and
 * whole lines against json-c, lines built from real format text. */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "evmon/encode.h"
#include "evmon/cleanup.h"

/* ---- fixtures: format files as this kernel (6.18, x86_64) writes them ---- */

#define COMMON_FIELDS \
        "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" \
        "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" \
        "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
        "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n" \
        "\n"

static const char fmt_exec[] =
        "name: sched_process_exec\n"
        "ID: 365\n"
        "format:\n"
        COMMON_FIELDS
        "\tfield:__data_loc char[] filename;\toffset:8;\tsize:4;\tsigned:0;\n"
        "\tfield:pid_t pid;\toffset:12;\tsize:4;\tsigned:1;\n"
        "\tfield:pid_t old_pid;\toffset:16;\tsize:4;\tsigned:1;\n"
        "\n"
        "print fmt: \"filename=%s pid=%d old_pid=%d\", __get_str(filename), REC->pid, REC->old_pid\n";

static const char fmt_openat[] =
        "name: sys_enter_openat\n"
        "ID: 782\n"
        "format:\n"
        COMMON_FIELDS
        "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
        "\tfield:int dfd;\toffset:16;\tsize:8;\tsigned:0;\n"
        "\tfield:const char * filename;\toffset:24;\tsize:8;\tsigned:0;\n"
        "\tfield:int flags;\toffset:32;\tsize:8;\tsigned:0;\n"
        "\tfield:umode_t mode;\toffset:40;\tsize:8;\tsigned:0;\n"
        "\n"
        "print fmt: \"dfd: 0x%08lx, filename: 0x%08lx, flags: 0x%08lx, mode: 0x%08lx\", "
        "((unsigned long)(REC->dfd)), ((unsigned long)(REC->filename)), "
        "((unsigned long)(REC->flags)), ((unsigned long)(REC->mode))\n";

static const char fmt_switch[] =
        "name: sched_switch\n"
        "ID: 372\n"
        "format:\n"
        COMMON_FIELDS
        "\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
        "\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
        "\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
        "\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
        "\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
        "\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
        "\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n"
        "\n"
        "print fmt: \"prev_comm=%s prev_pid=%d prev_prio=%d ==> next_comm=%s next_pid=%d next_prio=%d\", "
        "REC->prev_comm, REC->prev_pid, REC->prev_prio, REC->next_comm, REC->next_pid, REC->next_prio\n";

static const char fmt_flush[] =
        "name: btrfs_flush_space\n"
        "ID: 1985\n"
        "format:\n"
        COMMON_FIELDS
        "\tfield:u8 fsid[16];\toffset:8;\tsize:16;\tsigned:0;\n"
        "\tfield:u64 flags;\toffset:24;\tsize:8;\tsigned:0;\n"
        "\tfield:u64 num_bytes;\toffset:32;\tsize:8;\tsigned:0;\n"
        "\tfield:int state;\toffset:40;\tsize:4;\tsigned:1;\n"
        "\tfield:int ret;\toffset:44;\tsize:4;\tsigned:1;\n"
        "\tfield:bool for_preempt;\toffset:48;\tsize:1;\tsigned:0;\n"
        "\n"
        "print fmt: \"%pU: state=%d flags=%llu num_bytes=%llu ret=%d for_preempt=%d\", "
        "REC->fsid, REC->state, REC->flags, REC->num_bytes, REC->ret, REC->for_preempt\n";

static const char fmt_dma[] =
        "name: dma_map_sg\n"
        "ID: 431\n"
        "format:\n"
        COMMON_FIELDS
        "\tfield:__data_loc char[] device;\toffset:8;\tsize:4;\tsigned:0;\n"
        "\tfield:int full_nents;\toffset:12;\tsize:4;\tsigned:1;\n"
        "\tfield:int full_ents;\toffset:16;\tsize:4;\tsigned:1;\n"
        "\tfield:bool truncated;\toffset:20;\tsize:1;\tsigned:0;\n"
        "\tfield:__data_loc u64[] phys_addrs;\toffset:24;\tsize:4;\tsigned:0;\n"
        "\tfield:__data_loc u64[] dma_addrs;\toffset:28;\tsize:4;\tsigned:0;\n"
        "\tfield:__data_loc unsigned int[] lengths;\toffset:32;\tsize:4;\tsigned:0;\n"
        "\tfield:enum dma_data_direction dir;\toffset:36;\tsize:4;\tsigned:0;\n"
        "\tfield:unsigned long attrs;\toffset:40;\tsize:8;\tsigned:0;\n"
        "\n"
        "print fmt: \"%s dir=%d\", __get_str(device), REC->dir\n";

/* ---- helpers ----------------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

/* xorshift64*: deterministic, so a failure reproduces. */
static uint64_t rnd(void) {
        rng_state ^= rng_state >> 12;
        rng_state ^= rng_state << 25;
        rng_state ^= rng_state >> 27;
        return rng_state * 0x2545f4914f6cdd1dull;
}

static void put_le(uint8_t *rec, size_t off, uint64_t v, size_t size) {
        for (size_t i = 0; i < size; i++)
                rec[off + i] = (uint8_t) (v >> (8 * i));
}

static uint32_t data_loc(size_t off, size_t len) {
        return (uint32_t) (len << 16 | off);
}

/* UTF-8 of code point CP (< 0x800 is all the tests need here: U+00XX). */
static char *utf8_put(char *q, unsigned cp) {
        if (cp < 0x80)
                *q++ = (char) cp;
        else {
                *q++ = (char) (0xc0 | cp >> 6);
                *q++ = (char) (0x80 | (cp & 0x3f));
        }
        return q;
}

/* The string json-c should give back for bytes S: an independent decoder
 * (code point arithmetic, not the encoder's table) that keeps well-formed
 * UTF-8 and turns every other byte into U+00XX. OUT needs 2*N bytes. */
static size_t expected_decoded(const uint8_t *s, size_t n, char *out) {
        char *q = out;

        for (size_t i = 0; i < n;) {
                uint8_t c = s[i];
                size_t len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
                static const uint32_t min_cp[5] = { 0, 0, 0x80, 0x800, 0x10000 };
                bool ok = len > 0 && i + len <= n;
                uint32_t cp = 0;

                if (ok && len > 1) {
                        cp = c & (0x7f >> len);
                        for (size_t k = 1; k < len; k++) {
                                if ((s[i + k] & 0xc0) != 0x80) {
                                        ok = false;
                                        break;
                                }
                                cp = cp << 6 | (s[i + k] & 0x3f);
                        }
                        if (ok && (cp < min_cp[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)))
                                ok = false;
                }
                if (ok && len == 1) {
                        *q++ = (char) c;
                        i++;
                } else if (ok) {
                        memcpy(q, s + i, len);
                        q += len;
                        i += len;
                } else {
                        q = utf8_put(q, c);
                        i++;
                }
        }
        return (size_t) (q - out);
}

static json_object *parse_json(const char *text, size_t len) {
        json_tokener *tok = json_tokener_new();
        json_object *o;

        assert_non_null(tok);
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
        o = json_tokener_parse_ex(tok, text, (int) len);
        if (json_tokener_get_error(tok) != json_tokener_success || !o) {
                fprintf(stderr, "json-c: %s on: %.*s\n",
                        json_tokener_error_desc(json_tokener_get_error(tok)), (int) len, text);
                fail();
        }
        assert_int_equal(json_tokener_get_parse_end(tok), len);
        json_tokener_free(tok);
        return o;
}

/* Encodes S, checks the bound, parses with json-c and compares with the
 * independent decoder. Returns the encoded text (static storage). */
static const char *check_string(const void *s, size_t n, size_t *ret_len) {
        static char *buf;
        static size_t buf_size;
        char want[2 * 256 + 1];
        size_t want_len, len;
        json_object *o;
        char *end;

        assert_true(n <= 256);
        if (buf_size < json_escaped_max(n) + 16) {
                buf_size = json_escaped_max(n) + 16;
                buf = realloc(buf, buf_size);
                assert_non_null(buf);
        }
        memset(buf, 0xa5, buf_size);
        end = json_put_string(buf, s, n);
        len = (size_t) (end - buf);
        assert_true(len <= json_escaped_max(n));
        assert_true((uint8_t) buf[len] == 0xa5);        /* nothing written past the end */

        o = parse_json(buf, len);
        assert_int_equal(json_object_get_type(o), json_type_string);
        want_len = expected_decoded(s, n, want);
        assert_int_equal(json_object_get_string_len(o), want_len);
        assert_memory_equal(json_object_get_string(o), want, want_len);
        json_object_put(o);

        if (ret_len)
                *ret_len = len;
        return buf;
}

static void check_string_text(const char *s, size_t n, const char *want) {
        size_t len;
        const char *out = check_string(s, n, &len);

        if (len != strlen(want) || memcmp(out, want, len) != 0) {
                fprintf(stderr, "got %.*s, want %s\n", (int) len, out, want);
                fail();
        }
}

#define CHECK_TEXT(lit, want) check_string_text((lit), sizeof(lit) - 1, (want))

/* ---- strings ----------------------------------------------------------- */

static void test_string_controls(void **state) {
        static const char *const named[0x20] = {
                ['\b'] = "\"\\b\"", ['\t'] = "\"\\t\"", ['\n'] = "\"\\n\"",
                ['\f'] = "\"\\f\"", ['\r'] = "\"\\r\"",
        };

        for (unsigned c = 0; c < 0x20; c++) {
                char in = (char) c, want[16];

                if (named[c])
                        snprintf(want, sizeof(want), "%s", named[c]);
                else
                        snprintf(want, sizeof(want), "\"\\u%04x\"", c);
                check_string_text(&in, 1, want);
        }
        CHECK_TEXT("\x7f", "\"\\u007f\"");
        CHECK_TEXT("\"", "\"\\\"\"");
        CHECK_TEXT("\\", "\"\\\\\"");
        CHECK_TEXT("", "\"\"");
        CHECK_TEXT("a\"b\\c\nd\te/f", "\"a\\\"b\\\\c\\nd\\te/f\"");
        /* Embedded NULs survive as \u0000. */
        CHECK_TEXT("a\0b", "\"a\\u0000b\"");
}

static void test_string_all_bytes(void **state) {
        for (unsigned c = 0; c < 256; c++) {
                uint8_t in = (uint8_t) c;
                size_t len;
                const char *out = check_string(&in, 1, &len);

                /* Printable ASCII but " and \ goes out as itself. */
                if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
                        assert_int_equal(len, 3);
                        assert_int_equal((uint8_t) out[1], c);
                } else if (c >= 0x80) {
                        char want[16];

                        snprintf(want, sizeof(want), "\"\\u00%02x\"", c);
                        assert_int_equal(len, strlen(want));
                        assert_memory_equal(out, want, len);
                }
        }

        /* All 256 bytes in one string, and backwards. */
        uint8_t all[256];
        for (unsigned c = 0; c < 256; c++)
                all[c] = (uint8_t) c;
        check_string(all, sizeof(all), NULL);
        for (unsigned c = 0; c < 256; c++)
                all[c] = (uint8_t) (255 - c);
        check_string(all, sizeof(all), NULL);
}

static void test_string_utf8_valid(void **state) {
        static const char *const valid[] = {
                "\xc2\x80",                     /* U+0080, first 2-byte */
                "\xc3\xa9",                     /* é */
                "\xdf\xbf",                     /* U+07FF, last 2-byte */
                "\xe0\xa0\x80",                 /* U+0800, first 3-byte */
                "\xe2\x82\xac",                 /* € */
                "\xed\x9f\xbf",                 /* U+D7FF, before the surrogates */
                "\xee\x80\x80",                 /* U+E000, after them */
                "\xef\xbf\xbf",                 /* U+FFFF */
                "\xf0\x90\x80\x80",             /* U+10000, first 4-byte */
                "\xf0\x9f\x98\x80",             /* 😀 */
                "\xf3\xbf\xbf\xbf",
                "\xf4\x8f\xbf\xbf",             /* U+10FFFF, the last */
                "/usr/bin/caf\xc3\xa9 \xe2\x82\xac\xf0\x9f\x98\x80!",
        };

        for (size_t i = 0; i < ELEMENTSOF(valid); i++) {
                size_t n = strlen(valid[i]), len;
                const char *out = check_string(valid[i], n, &len);

                /* Passed through raw. */
                assert_int_equal(len, n + 2);
                assert_memory_equal(out + 1, valid[i], n);
        }
}

static void test_string_utf8_invalid(void **state) {
        /* Lone continuation bytes. */
        CHECK_TEXT("\x80", "\"\\u0080\"");
        CHECK_TEXT("\xbf", "\"\\u00bf\"");
        /* Overlong forms. */
        CHECK_TEXT("\xc0\x80", "\"\\u00c0\\u0080\"");
        CHECK_TEXT("\xc1\xbf", "\"\\u00c1\\u00bf\"");
        CHECK_TEXT("\xe0\x80\x80", "\"\\u00e0\\u0080\\u0080\"");
        CHECK_TEXT("\xe0\x9f\xbf", "\"\\u00e0\\u009f\\u00bf\"");
        CHECK_TEXT("\xf0\x80\x80\x80", "\"\\u00f0\\u0080\\u0080\\u0080\"");
        CHECK_TEXT("\xf0\x8f\xbf\xbf", "\"\\u00f0\\u008f\\u00bf\\u00bf\"");
        /* Surrogates. */
        CHECK_TEXT("\xed\xa0\x80", "\"\\u00ed\\u00a0\\u0080\"");
        CHECK_TEXT("\xed\xbf\xbf", "\"\\u00ed\\u00bf\\u00bf\"");
        /* Beyond U+10FFFF, and bytes that never lead. */
        CHECK_TEXT("\xf4\x90\x80\x80", "\"\\u00f4\\u0090\\u0080\\u0080\"");
        CHECK_TEXT("\xf5\x80\x80\x80", "\"\\u00f5\\u0080\\u0080\\u0080\"");
        CHECK_TEXT("\xf8\x88\x80\x80\x80", "\"\\u00f8\\u0088\\u0080\\u0080\\u0080\"");
        CHECK_TEXT("\xfe\xff", "\"\\u00fe\\u00ff\"");
        /* Truncated at the end of the string. */
        CHECK_TEXT("\xc3", "\"\\u00c3\"");
        CHECK_TEXT("\xe2\x82", "\"\\u00e2\\u0082\"");
        CHECK_TEXT("\xf0\x9f\x98", "\"\\u00f0\\u009f\\u0098\"");
        /* Truncated by what follows: that is kept. */
        CHECK_TEXT("\xe2\x82" "A", "\"\\u00e2\\u0082A\"");
        CHECK_TEXT("\xe2\x82\xc3\xa9", "\"\\u00e2\\u0082\xc3\xa9\"");
        CHECK_TEXT("\xf0\x9f\x98\xe2\x82\xac", "\"\\u00f0\\u009f\\u0098\xe2\x82\xac\"");
        CHECK_TEXT("\xc3\"", "\"\\u00c3\\\"\"");
        CHECK_TEXT("a\xff" "b\xc3\xa9" "c", "\"a\\u00ffb\xc3\xa9" "c\"");
}

static void test_string_random(void **state) {
        uint8_t s[256];

        for (unsigned iter = 0; iter < 50000; iter++) {
                size_t n = rnd() % 64;
                unsigned mode = iter % 3;

                for (size_t i = 0; i < n; i++) {
                        uint64_t r = rnd();

                        if (mode == 0)
                                s[i] = (uint8_t) r;                     /* anything */
                        else if (mode == 1)
                                s[i] = (uint8_t) (r & 1 ? 0x80 | (r >> 8) : 0x20 + (r >> 8) % 0x60);
                        else    /* mostly lead and continuation bytes */
                                s[i] = (uint8_t) (r % 4 == 0 ? 0xc0 + (r >> 8) % 0x38 : 0x80 + (r >> 8) % 0x40);
                }
                check_string(s, n, NULL);
        }
}

/* ---- integers, hex, time ------------------------------------------------- */

static void check_u64(uint64_t v) {
        char got[32], want[32];
        char *end = json_put_u64(got, v);

        snprintf(want, sizeof(want), "%" PRIu64, v);
        assert_int_equal(end - got, strlen(want));
        assert_memory_equal(got, want, strlen(want));
}

static void check_i64(int64_t v) {
        char got[32], want[32];
        char *end = json_put_i64(got, v);

        snprintf(want, sizeof(want), "%" PRId64, v);
        assert_true((size_t) (end - got) <= JSON_INT_MAX);
        assert_int_equal(end - got, strlen(want));
        assert_memory_equal(got, want, strlen(want));
}

static void check_hex(uint64_t v) {
        char got[32], want[32];
        char *end = json_put_hex(got, v);

        snprintf(want, sizeof(want), "\"0x%" PRIx64 "\"", v);
        assert_true((size_t) (end - got) <= JSON_HEX_MAX);
        assert_int_equal(end - got, strlen(want));
        assert_memory_equal(got, want, strlen(want));
}

static void test_integers(void **state) {
        uint64_t p = 1;

        check_u64(0);
        check_u64(UINT64_MAX);
        check_u64(UINT64_MAX - 1);
        check_i64(0);
        check_i64(INT64_MIN);
        check_i64(INT64_MIN + 1);
        check_i64(INT64_MAX);
        check_i64(-1);
        check_hex(0);
        check_hex(UINT64_MAX);
        check_hex(0x7ffd1234);

        /* Every power of ten and its neighbours: where the digit count changes. */
        for (unsigned k = 0; k < 20; k++, p *= 10) {
                check_u64(p - 1);
                check_u64(p);
                check_u64(p + 1);
                if (p <= (uint64_t) INT64_MAX) {
                        check_i64((int64_t) p);
                        check_i64(-(int64_t) p);
                        check_i64((int64_t) p - 1);
                        check_i64(-(int64_t) p + 1);
                }
        }
        for (unsigned b = 0; b < 64; b++) {
                check_hex(1ull << b);
                check_hex((1ull << b) - 1);
                check_u64(1ull << b);
        }
        for (unsigned i = 0; i < 200000; i++) {
                uint64_t v = rnd() >> (rnd() % 64);

                check_u64(v);
                check_i64((int64_t) v);
                check_i64(-(int64_t) (v >> 1));
                check_hex(v);
        }
}

static void check_time(uint64_t ns) {
        char got[64], want[64];
        time_t sec = (time_t) (ns / 1000000000u);
        struct tm tm;
        char *end;

        assert_non_null(gmtime_r(&sec, &tm));
        snprintf(want, sizeof(want), "\"%04d-%02d-%02dT%02d:%02d:%02d.%09uZ\"",
                 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                 (unsigned) (ns % 1000000000u));
        end = json_put_time(got, ns);
        assert_int_equal(end - got, JSON_TIME_LEN);
        if (memcmp(got, want, JSON_TIME_LEN) != 0) {
                fprintf(stderr, "ns=%" PRIu64 ": got %.*s want %s\n", ns, (int) JSON_TIME_LEN, got, want);
                fail();
        }
}

static uint64_t utc_ns(int y, int mo, int d, int h, int mi, int s, uint64_t ns) {
        struct tm tm = {
                .tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d,
                .tm_hour = h, .tm_min = mi, .tm_sec = s,
        };

        return (uint64_t) timegm(&tm) * 1000000000u + ns;
}

static void test_time(void **state) {
        static const int ends[][3] = {
                { 1970, 1, 1 }, { 1970, 12, 31 }, { 1972, 2, 29 }, { 1999, 12, 31 },
                { 2000, 2, 29 }, { 2000, 3, 1 }, { 2024, 2, 29 }, { 2025, 2, 28 },
                { 2026, 4, 30 }, { 2026, 6, 30 }, { 2026, 9, 30 }, { 2026, 11, 30 },
                { 2038, 1, 19 }, { 2100, 2, 28 }, { 2100, 3, 1 }, { 2400, 2, 29 },
                { 2554, 7, 21 },
        };
        char buf[64];

        assert_int_equal(json_put_time(buf, 0) - buf, JSON_TIME_LEN);
        assert_memory_equal(buf, "\"1970-01-01T00:00:00.000000000Z\"", JSON_TIME_LEN);
        json_put_time(buf, utc_ns(2026, 11, 21, 10, 23, 0, 123456789));
        assert_memory_equal(buf, "\"2026-11-21T10:23:00.123456789Z\"", JSON_TIME_LEN);
        json_put_time(buf, UINT64_MAX);
        assert_memory_equal(buf, "\"2554-07-21T23:34:33.709551615Z\"", JSON_TIME_LEN);

        check_time(0);
        check_time(999999999);
        check_time(1000000000);
        check_time(UINT64_MAX);
        check_time(2147483647ull * 1000000000u + 999999999);   /* 2038-01-19T03:14:07 */
        check_time(2147483648ull * 1000000000u);
        for (size_t i = 0; i < ELEMENTSOF(ends); i++) {
                uint64_t t = utc_ns(ends[i][0], ends[i][1], ends[i][2], 23, 59, 59, 999999999);

                check_time(t);
                check_time(t + 1);              /* the next day's first ns */
                check_time(t - 999999999);
        }
        /* Every day from 1970 into 2430, at a varying time of day. */
        for (uint64_t day = 0; day < 168000; day++)
                check_time((day * 86400 + (day * 7919) % 86400) * 1000000000u + (day * 104729) % 1000000000u);
        /* The per-second cache: same second, then back and forth. */
        for (unsigned i = 0; i < 100000; i++) {
                uint64_t t = rnd();

                check_time(t);
                check_time(t - t % 1000000000u + rnd() % 1000000000u);
                check_time(t / 2);
        }
}

static void test_jbuf(void **state) {
        struct jbuf b = {};

        assert_int_equal(jbuf_reserve(&b, 10), 0);
        assert_true(b.cap >= 10);
        jbuf_put_literal(&b, "abc");
        jbuf_put_char(&b, '!');
        jbuf_put_bytes(&b, "xyz", 3);
        assert_int_equal(b.len, 7);
        assert_memory_equal(b.data, "abc!xyz", 7);
        assert_int_equal(jbuf_reserve(&b, 100000), 0);
        assert_true(b.cap - b.len >= 100000);
        assert_memory_equal(b.data, "abc!xyz", 7);
        assert_int_equal(jbuf_reserve(&b, SIZE_MAX), -ENOMEM);
        assert_int_equal(b.len, 7);
        jbuf_done(&b);
        assert_null(b.data);
        assert_int_equal(b.len + b.cap, 0);
        jbuf_done(&b);

        assert_int_equal(encode_lost(&b, 3, 17), 0);
        assert_int_equal(encode_dropped(&b, UINT64_MAX, 0), 0);
        assert_int_equal(encode_dropped(&b, 2, UINT64_MAX), 0);
        assert_int_equal(encode_lost(&b, -1, 0), 0);
        static const char want[] =
                "{\"type\":\"lost\",\"cpu\":3,\"count\":17}\n"
                "{\"type\":\"dropped\",\"count\":18446744073709551615}\n"
                "{\"type\":\"dropped\",\"count\":2,\"lost\":18446744073709551615}\n"
                "{\"type\":\"lost\",\"cpu\":-1,\"count\":0}\n";
        assert_int_equal(b.len, sizeof(want) - 1);
        assert_memory_equal(b.data, want, b.len);
        jbuf_done(&b);
}

/* ---- event lines ----------------------------------------------------------- */

struct fixture {
        struct format *fmt;
        struct encoder *enc;
};

static void fixture_init(struct fixture *fx, const char *text, const char *system, const char *event) {
        assert_int_equal(format_parse(text, system, &fx->fmt), 0);
        assert_int_equal(encoder_new(event, fx->fmt, &fx->enc), 0);
        assert_ptr_equal(encoder_format(fx->enc), fx->fmt);
}

static void fixture_done(struct fixture *fx) {
        fx->enc = encoder_free(fx->enc);
        fx->fmt = format_free(fx->fmt);
}

static struct perf_sample make_sample(const void *raw, size_t size) {
        return (struct perf_sample) {
                .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_RAW,
                .pid = 4242, .tid = 4243, .time = 123456789, .cpu = 1,
                .raw = { .size = (uint32_t) size, .data = raw },
        };
}

/* Parses the last line of B (starting at FROM), which must end in '\n'
 * and hold nothing else. */
static json_object *parse_line(const struct jbuf *b, size_t from) {
        const char *line = b->data + from;
        size_t len = b->len - from;

        assert_true(len > 0);
        assert_int_equal(line[len - 1], '\n');
        assert_null(memchr(line, '\n', len - 1));
        return parse_json(line, len - 1);
}

static json_object *get(json_object *o, const char *key) {
        json_object *v = NULL;

        if (!json_object_object_get_ex(o, key, &v)) {
                fprintf(stderr, "missing key %s in %s\n", key, json_object_to_json_string(o));
                fail();
        }
        return v;
}

static void expect_keys(json_object *o, const char *const *keys) {
        size_t n = 0;

        for (; keys[n]; n++)
                get(o, keys[n]);
        assert_int_equal(json_object_object_length(o), n);
}

static void expect_i64(json_object *o, const char *key, int64_t v) {
        json_object *x = get(o, key);

        assert_int_equal(json_object_get_type(x), json_type_int);
        assert_int_equal(json_object_get_int64(x), v);
}

static void expect_u64(json_object *o, const char *key, uint64_t v) {
        json_object *x = get(o, key);

        assert_int_equal(json_object_get_type(x), json_type_int);
        assert_int_equal(json_object_get_uint64(x), v);
}

static void expect_str(json_object *o, const char *key, const char *s, size_t n) {
        json_object *x = get(o, key);

        assert_int_equal(json_object_get_type(x), json_type_string);
        assert_int_equal(json_object_get_string_len(x), n);
        assert_memory_equal(json_object_get_string(x), s, n);
}

static void expect_bool(json_object *o, const char *key, bool v) {
        json_object *x = get(o, key);

        assert_int_equal(json_object_get_type(x), json_type_boolean);
        assert_int_equal(json_object_get_boolean(x), v);
}

static void expect_u64_array(json_object *o, const char *key, const uint64_t *v, size_t n) {
        json_object *x = get(o, key);

        assert_int_equal(json_object_get_type(x), json_type_array);
        assert_int_equal(json_object_array_length(x), n);
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(x, i);

                assert_int_equal(json_object_get_type(e), json_type_int);
                assert_int_equal(json_object_get_uint64(e), v[i]);
        }
}

static void test_event_exec(void **state) {
        static const char want[] =
                "{\"type\":\"event\",\"event\":\"sched:sched_process_exec\","
                "\"time\":\"2026-11-21T10:23:00.123456789Z\",\"ts\":123456789,\"cpu\":1,"
                "\"pid\":4242,\"tid\":4243,"
                "\"fields\":{\"filename\":\"/usr/bin/true\",\"pid\":4242,\"old_pid\":4242}}\n";
        static const char *const top_keys[] = { "type", "event", "time", "ts", "cpu", "pid", "tid", "fields", NULL };
        static const char *const field_keys[] = { "filename", "pid", "old_pid", NULL };
        struct fixture fx = {};
        struct jbuf b = {};
        uint8_t rec[40] = {};
        struct perf_sample s;
        int64_t off = (int64_t) utc_ns(2026, 11, 21, 10, 23, 0, 0);
        json_object *o, *f;

        fixture_init(&fx, fmt_exec, "sched", "sched:sched_process_exec");
        put_le(rec, 0, 365, 2);
        put_le(rec, 4, 4242, 4);
        put_le(rec, 8, data_loc(20, 14), 4);
        put_le(rec, 12, 4242, 4);
        put_le(rec, 16, 4242, 4);
        memcpy(rec + 20, "/usr/bin/true", 14);
        s = make_sample(rec, 36);       /* raw data is padded to 8 bytes with its size u32 */

        assert_int_equal(encode_event(&b, fx.enc, &s, off), 0);
        assert_int_equal(b.len, sizeof(want) - 1);
        assert_memory_equal(b.data, want, b.len);

        o = parse_line(&b, 0);
        expect_keys(o, top_keys);
        expect_str(o, "type", "event", 5);
        expect_str(o, "event", "sched:sched_process_exec", 24);
        expect_str(o, "time", "2026-11-21T10:23:00.123456789Z", 30);
        expect_i64(o, "ts", 123456789);
        expect_i64(o, "cpu", 1);
        expect_i64(o, "pid", 4242);
        expect_i64(o, "tid", 4243);
        f = get(o, "fields");
        expect_keys(f, field_keys);
        expect_str(f, "filename", "/usr/bin/true", 13);
        expect_i64(f, "pid", 4242);
        expect_i64(f, "old_pid", 4242);
        json_object_put(o);

        /* A second line appends; the first stays. */
        put_le(rec, 12, (uint32_t) -7, 4);
        memcpy(rec + 20, "/tmp/a\"b\n\xff\xc3\xa9", 12);
        put_le(rec, 8, data_loc(20, 12), 4);
        assert_int_equal(encode_event(&b, fx.enc, &s, off), 0);
        assert_memory_equal(b.data, want, sizeof(want) - 1);
        o = parse_line(&b, sizeof(want) - 1);
        f = get(o, "fields");
        expect_str(f, "filename", "/tmp/a\"b\n\xc3\xbf\xc3\xa9", 13);
        expect_i64(f, "pid", -7);
        json_object_put(o);

        /* Without TIME, CPU, TID in sample_type those keys are left out. */
        size_t from = b.len;
        s.sample_type = PERF_SAMPLE_RAW;
        assert_int_equal(encode_event(&b, fx.enc, &s, off), 0);
        o = parse_line(&b, from);
        expect_keys(o, (const char *const[]) { "type", "event", "fields", NULL });
        json_object_put(o);

        /* A realtime offset that would wrap saturates. */
        from = b.len;
        s = make_sample(rec, 36);
        assert_int_equal(encode_event(&b, fx.enc, &s, INT64_MIN), 0);
        o = parse_line(&b, from);
        expect_str(o, "time", "1970-01-01T00:00:00.000000000Z", 30);
        json_object_put(o);

        jbuf_done(&b);
        fixture_done(&fx);
}

static void test_event_openat(void **state) {
        static const char *const field_keys[] = { "__syscall_nr", "dfd", "filename", "flags", "mode", NULL };
        struct fixture fx = {};
        struct jbuf b = {};
        uint8_t rec[48] = {};
        struct perf_sample s;
        json_object *o, *f;

        fixture_init(&fx, fmt_openat, "syscalls", "syscalls:sys_enter_openat");
        put_le(rec, 0, 782, 2);
        put_le(rec, 4, 4242, 4);
        put_le(rec, 8, 257, 4);
        put_le(rec, 16, (uint64_t) -100, 8);   /* AT_FDCWD in an 8-byte slot declared int */
        put_le(rec, 24, 0x7ffd1234, 8);
        put_le(rec, 32, 0x80000, 8);            /* O_CLOEXEC */
        put_le(rec, 40, 0644, 8);
        s = make_sample(rec, sizeof(rec));

        assert_int_equal(encode_event(&b, fx.enc, &s, 0), 0);
        o = parse_line(&b, 0);
        expect_str(o, "event", "syscalls:sys_enter_openat", 25);
        expect_str(o, "time", "1970-01-01T00:00:00.123456789Z", 30);
        f = get(o, "fields");
        expect_keys(f, field_keys);
        expect_i64(f, "__syscall_nr", 257);
        expect_i64(f, "dfd", -100);
        expect_str(f, "filename", "0x7ffd1234", 10);
        expect_i64(f, "flags", 0x80000);
        expect_i64(f, "mode", 0644);
        json_object_put(o);
        /* The buffer has no NUL: memmem, not strstr (ASan reads past it). */
        {
                static const char want[] = "\"dfd\":-100,\"filename\":\"0x7ffd1234\",";
                assert_non_null(memmem(b.data, b.len, want, sizeof(want) - 1));
        }

        jbuf_done(&b);
        fixture_done(&fx);
}

static void test_event_switch(void **state) {
        /* next_comm fills all 16 bytes, no NUL, with bytes to escape. */
        static const uint8_t next_comm[16] = "a\"b\\c\x01\xff\xc3\xa9xyz\t\xe2\x82\x41";
        char want[64];
        size_t want_len = expected_decoded(next_comm, 16, want);
        struct fixture fx = {};
        struct jbuf b = {};
        uint8_t rec[64] = {};
        struct perf_sample s;
        json_object *o, *f;

        fixture_init(&fx, fmt_switch, "sched", "sched:sched_switch");
        memcpy(rec + 8, "bash", 5);
        put_le(rec, 24, 100, 4);
        put_le(rec, 28, 120, 4);
        put_le(rec, 32, (uint64_t) INT64_MIN, 8);
        memcpy(rec + 40, next_comm, 16);
        put_le(rec, 56, 0, 4);
        put_le(rec, 60, (uint32_t) -1, 4);
        s = make_sample(rec, sizeof(rec));

        assert_int_equal(encode_event(&b, fx.enc, &s, 0), 0);
        o = parse_line(&b, 0);
        f = get(o, "fields");
        expect_keys(f, (const char *const[]) { "prev_comm", "prev_pid", "prev_prio", "prev_state",
                                               "next_comm", "next_pid", "next_prio", NULL });
        expect_str(f, "prev_comm", "bash", 4);
        expect_i64(f, "prev_pid", 100);
        expect_i64(f, "prev_prio", 120);
        expect_i64(f, "prev_state", INT64_MIN);
        expect_str(f, "next_comm", want, want_len);
        expect_i64(f, "next_pid", 0);
        expect_i64(f, "next_prio", -1);
        json_object_put(o);

        jbuf_done(&b);
        fixture_done(&fx);
}

/* Names from the print fmt go into "symbols", beside the number in
 * "fields": sched_switch's state letters (two arguments, "%s%s") and a
 * softirq's vector, with the bound reserved for the longest name. */
static void test_event_symbols(void **state) {
        static const char fmt_softirq[] =
                "name: softirq_entry\n"
                "ID: 223\n"
                "format:\n"
                COMMON_FIELDS
                "\tfield:unsigned int vec;\toffset:8;\tsize:4;\tsigned:0;\n"
                "\n"
                "print fmt: \"vec=%u [action=%s]\", REC->vec, __print_symbolic(REC->vec, { 0, \"HI\" }, "
                "{ 1, \"TIMER\" }, { 2, \"NET_TX\" }, { 3, \"NET_RX\" }, { 4, \"BLOCK\" }, "
                "{ 5, \"IRQ_POLL\" }, { 6, \"TASKLET\" }, { 7, \"SCHED\" }, { 8, \"HRTIMER\" }, "
                "{ 9, \"RCU\" })\n";
        static const char fmt_state[] =
                "name: sched_switch\n"
                "ID: 372\n"
                "format:\n"
                COMMON_FIELDS
                "\tfield:long prev_state;\toffset:8;\tsize:8;\tsigned:1;\n"
                "\tfield:char name[4];\toffset:16;\tsize:4;\tsigned:0;\n"
                "\n"
                "print fmt: \"prev_state=%s%s %s\", (REC->prev_state & 0xff) ? "
                "__print_flags(REC->prev_state & 0xff, \"|\", { 0x01, \"S\" }, { 0x02, \"D\" }, "
                "{ 0x80, \"I\\\"\\\\\" }) : \"R\", REC->prev_state & 0x100 ? \"+\" : \"\", REC->name\n";
        static const struct {
                uint64_t state;
                const char *want;
        } states[] = {
                { 0, "\"R\"" }, { 1, "\"S\"" }, { 0x102, "\"D+\"" }, { 0x83, "\"S|D|I\\\"\\\\\"" },
                { 0x1ff, "\"S|D|I\\\"\\\\|0x7c+\"" },
        };
        struct fixture fx = {};
        struct jbuf b = {};
        uint8_t rec[20] = {};
        struct perf_sample s;
        json_object *o;

        fixture_init(&fx, fmt_softirq, "irq", "irq:softirq_entry");
        put_le(rec, 8, 1, 4);
        s = make_sample(rec, 12);
        s.sample_type = PERF_SAMPLE_RAW;
        assert_int_equal(encode_event(&b, fx.enc, &s, 0), 0);
        assert_int_equal(b.len, strlen("{\"type\":\"event\",\"event\":\"irq:softirq_entry\",\"fields\":{\"vec\":1},"
                                       "\"symbols\":{\"vec\":\"TIMER\"}}\n"));
        assert_memory_equal(b.data, "{\"type\":\"event\",\"event\":\"irq:softirq_entry\",\"fields\":{\"vec\":1},"
                                    "\"symbols\":{\"vec\":\"TIMER\"}}\n", b.len);
        b.len = 0;
        put_le(rec, 8, 12, 4);
        assert_int_equal(encode_event(&b, fx.enc, &s, 0), 0);
        o = parse_line(&b, 0);
        expect_str(get(o, "symbols"), "vec", "0xc", 3);
        json_object_put(o);
        b.len = 0;
        fixture_done(&fx);

        fixture_init(&fx, fmt_state, "sched", "sched:sched_switch");
        memcpy(rec + 16, "abc", 4);
        for (size_t i = 0; i < ELEMENTSOF(states); i++) {
                _cleanup_(freep) char *want = NULL;

                put_le(rec, 8, states[i].state, 8);
                s = make_sample(rec, sizeof(rec));
                s.sample_type = PERF_SAMPLE_RAW;
                assert_true(asprintf(&want, "{\"type\":\"event\",\"event\":\"sched:sched_switch\","
                                     "\"fields\":{\"prev_state\":%" PRIu64 ",\"name\":\"abc\"},"
                                     "\"symbols\":{\"prev_state\":%s}}\n", states[i].state, states[i].want) > 0);
                assert_int_equal(encode_event(&b, fx.enc, &s, 0), 0);
                assert_int_equal(b.len, strlen(want));
                assert_memory_equal(b.data, want, b.len);
                o = parse_line(&b, 0);
                json_object_put(o);
                b.len = 0;
        }
        /* The bound: a line with every flag and leftover bits fits the
         * reserve jbuf_reserve() was asked for (encode_event asserts it). */
        jbuf_done(&b);
        fixture_done(&fx);
}

static void test_event_arrays(void **state) {
        static const uint64_t fsid[16] = { 0, 1, 2, 0x7f, 0x80, 0xff, 6, 7, 8, 9, 10, 11, 12, 13, 14, 255 };
        static const uint64_t phys[2] = { 0x1000, UINT64_MAX }, dma[2] = { 1, 2 };
        static const uint64_t lengths[3] = { 4096, UINT32_MAX, 0 };
        struct fixture fx = {};
        struct jbuf b = {};
        uint8_t rec[112] = {};
        struct perf_sample s;
        json_object *o, *f;

        /* u8[16], u64, int, bool */
        fixture_init(&fx, fmt_flush, "btrfs", "btrfs:btrfs_flush_space");
        for (size_t i = 0; i < 16; i++)
                rec[8 + i] = (uint8_t) fsid[i];
        put_le(rec, 24, UINT64_MAX, 8);
        put_le(rec, 32, 1ull << 40, 8);
        put_le(rec, 40, (uint32_t) -1, 4);
        put_le(rec, 44, (uint32_t) INT32_MIN, 4);
        rec[48] = 1;
        s = make_sample(rec, 56);
        assert_int_equal(encode_event(&b, fx.enc, &s, 0), 0);
        o = parse_line(&b, 0);
        f = get(o, "fields");
        expect_keys(f, (const char *const[]) { "fsid", "flags", "num_bytes", "state", "ret", "for_preempt", NULL });
        expect_u64_array(f, "fsid", fsid, 16);
        expect_u64(f, "flags", UINT64_MAX);
        expect_u64(f, "num_bytes", 1ull << 40);
        expect_i64(f, "state", -1);
        expect_i64(f, "ret", INT32_MIN);
        expect_bool(f, "for_preempt", true);
        json_object_put(o);
        fixture_done(&fx);

        /* __data_loc char[], u64[] and unsigned int[] */
        memset(rec, 0, sizeof(rec));
        b.len = 0;
        fixture_init(&fx, fmt_dma, "dma", "dma:dma_map_sg");
        put_le(rec, 8, data_loc(48, 13), 4);
        memcpy(rec + 48, "0000:00:1f.2", 13);
        put_le(rec, 12, 2, 4);
        put_le(rec, 16, 2, 4);
        rec[20] = 0;
        put_le(rec, 24, data_loc(64, 16), 4);
        put_le(rec, 64, phys[0], 8);
        put_le(rec, 72, phys[1], 8);
        put_le(rec, 28, data_loc(80, 16), 4);
        put_le(rec, 80, dma[0], 8);
        put_le(rec, 88, dma[1], 8);
        put_le(rec, 32, data_loc(96, 12), 4);
        put_le(rec, 96, lengths[0], 4);
        put_le(rec, 100, lengths[1], 4);
        put_le(rec, 104, lengths[2], 4);
        put_le(rec, 36, 1, 4);
        put_le(rec, 40, 1u << 5, 8);
        s = make_sample(rec, 108);
        assert_int_equal(encode_event(&b, fx.enc, &s, 0), 0);
        o = parse_line(&b, 0);
        f = get(o, "fields");
        expect_keys(f, (const char *const[]) { "device", "full_nents", "full_ents", "truncated", "phys_addrs",
                                               "dma_addrs", "lengths", "dir", "attrs", NULL });
        expect_str(f, "device", "0000:00:1f.2", 12);
        expect_i64(f, "full_nents", 2);
        expect_i64(f, "full_ents", 2);
        expect_bool(f, "truncated", false);
        expect_u64_array(f, "phys_addrs", phys, 2);
        expect_u64_array(f, "dma_addrs", dma, 2);
        expect_u64_array(f, "lengths", lengths, 3);
        expect_i64(f, "dir", 1);
        expect_i64(f, "attrs", 32);
        json_object_put(o);

        /* Empty dynamic arrays and string. */
        b.len = 0;
        put_le(rec, 8, data_loc(48, 0), 4);
        put_le(rec, 24, data_loc(64, 0), 4);
        put_le(rec, 28, data_loc(108, 0), 4);
        put_le(rec, 32, data_loc(96, 0), 4);
        assert_int_equal(encode_event(&b, fx.enc, &s, 0), 0);
        o = parse_line(&b, 0);
        f = get(o, "fields");
        expect_str(f, "device", "", 0);
        expect_u64_array(f, "phys_addrs", NULL, 0);
        expect_u64_array(f, "lengths", NULL, 0);
        json_object_put(o);

        jbuf_done(&b);
        fixture_done(&fx);
}

static void test_event_malformed(void **state) {
        static const char prior[] = "{\"type\":\"dropped\",\"count\":1}\n";
        struct fixture fx = {};
        struct jbuf b = {};
        uint8_t rec[40] = {};
        struct perf_sample s;

        fixture_init(&fx, fmt_exec, "sched", "sched:sched_process_exec");
        put_le(rec, 8, data_loc(20, 14), 4);
        memcpy(rec + 20, "/usr/bin/true", 14);
        assert_int_equal(encode_dropped(&b, 1, 0), 0);
        assert_int_equal(b.len, sizeof(prior) - 1);

        /* Locator pointing past the record. */
        put_le(rec, 8, data_loc(30, 14), 4);
        s = make_sample(rec, 36);
        assert_int_equal(encode_event(&b, fx.enc, &s, 0), -EBADMSG);
        assert_int_equal(b.len, sizeof(prior) - 1);
        assert_memory_equal(b.data, prior, b.len);

        /* Offset itself outside. */
        put_le(rec, 8, data_loc(200, 1), 4);
        assert_int_equal(encode_event(&b, fx.enc, &s, 0), -EBADMSG);
        assert_int_equal(b.len, sizeof(prior) - 1);

        /* Record shorter than its fixed fields: the last fields fail after
         * the first were written into the spare room. */
        put_le(rec, 8, data_loc(12, 2), 4);
        s = make_sample(rec, 14);
        assert_int_equal(encode_event(&b, fx.enc, &s, 0), -EBADMSG);
        assert_int_equal(b.len, sizeof(prior) - 1);
        assert_memory_equal(b.data, prior, b.len);

        /* No raw data at all. */
        s = make_sample(NULL, 0);
        assert_int_equal(encode_event(&b, fx.enc, &s, 0), -EBADMSG);
        assert_int_equal(b.len, sizeof(prior) - 1);

        /* Still usable afterwards. */
        put_le(rec, 8, data_loc(20, 14), 4);
        s = make_sample(rec, 36);
        assert_int_equal(encode_event(&b, fx.enc, &s, 0), 0);
        assert_memory_equal(b.data, prior, sizeof(prior) - 1);
        json_object_put(parse_line(&b, sizeof(prior) - 1));

        jbuf_done(&b);
        fixture_done(&fx);
}

/* A string of control bytes filling the record is the worst case the
 * reserved bound must cover (encode_event() asserts it stays inside); and
 * once the buffer is big enough, encoding allocates nothing more. */
static void test_event_worst_case(void **state) {
        enum { SIZE = 4096 };
        struct fixture fx = {};
        struct jbuf b = {};
        uint8_t *rec = calloc(1, SIZE);
        char want[2 * SIZE];
        size_t want_len;
        struct perf_sample s;
        json_object *o;
        char *data;
        size_t cap;

        assert_non_null(rec);
        fixture_init(&fx, fmt_exec, "sched", "sched:sched_process_exec");
        put_le(rec, 8, data_loc(20, SIZE - 20), 4);
        for (size_t i = 20; i < SIZE; i++)
                rec[i] = (uint8_t) (i % 2 ? 0x01 : 0x80);
        want_len = expected_decoded(rec + 20, SIZE - 20, want);
        s = make_sample(rec, SIZE);
        s.pid = s.tid = s.cpu = UINT32_MAX;
        s.time = UINT64_MAX;

        assert_int_equal(encode_event(&b, fx.enc, &s, INT64_MAX), 0);
        assert_true(b.len > 6 * (SIZE - 20));
        o = parse_line(&b, 0);
        expect_str(get(o, "fields"), "filename", want, want_len);
        json_object_put(o);

        data = b.data;
        cap = b.cap;
        for (unsigned i = 0; i < 1000; i++) {
                b.len = 0;
                assert_int_equal(encode_event(&b, fx.enc, &s, 0), 0);
        }
        assert_ptr_equal(b.data, data);
        assert_int_equal(b.cap, cap);

        jbuf_done(&b);
        fixture_done(&fx);
        free(rec);
}

/* Random records: every line that comes out parses, every failure is
 * -EBADMSG and leaves the buffer alone. */
static void fuzz_format(const char *text, const char *system, const char *event, const size_t *loc_offsets,
                        size_t n_locs, unsigned iterations, unsigned *ret_ok) {
        static const char prior[] = "{\"type\":\"lost\",\"cpu\":0,\"count\":1}\n";
        struct fixture fx = {};
        struct jbuf b = {};
        uint8_t rec[160];
        unsigned ok = 0;

        fixture_init(&fx, text, system, event);
        for (unsigned iter = 0; iter < iterations; iter++) {
                size_t size = rnd() % sizeof(rec);
                struct perf_sample s;
                int r;

                for (size_t i = 0; i < size; i++) {
                        uint64_t x = rnd();
                        /* Mostly text-like bytes, some high and control ones. */
                        rec[i] = (uint8_t) (x % 4 ? 0x20 + (x >> 8) % 0x60 : x >> 16);
                }
                /* Half the time, make the locators point inside the record. */
                for (size_t k = 0; k < n_locs && rnd() % 2; k++) {
                        size_t off, len;

                        if (loc_offsets[k] + 4 > size)
                                break;
                        off = size > 0 ? rnd() % (size + 1) : 0;
                        len = rnd() % (size - off + 1);
                        put_le(rec, loc_offsets[k], data_loc(off, len), 4);
                }

                b.len = 0;
                assert_int_equal(jbuf_reserve(&b, sizeof(prior)), 0);
                jbuf_put_bytes(&b, prior, sizeof(prior) - 1);
                s = make_sample(rec, size);
                s.time = rnd();
                s.cpu = (uint32_t) rnd();
                r = encode_event(&b, fx.enc, &s, (int64_t) rnd());
                if (r == 0) {
                        json_object *o = parse_line(&b, sizeof(prior) - 1);

                        assert_int_equal(json_object_get_type(get(o, "fields")), json_type_object);
                        json_object_put(o);
                        ok++;
                } else {
                        assert_int_equal(r, -EBADMSG);
                        assert_int_equal(b.len, sizeof(prior) - 1);
                        assert_memory_equal(b.data, prior, b.len);
                }
        }
        jbuf_done(&b);
        fixture_done(&fx);
        *ret_ok = ok;
}

static void test_event_fuzz(void **state) {
        static const size_t exec_locs[] = { 8 }, dma_locs[] = { 8, 24, 28, 32 };
        unsigned ok;

        fuzz_format(fmt_exec, "sched", "sched:sched_process_exec", exec_locs, 1, 50000, &ok);
        assert_true(ok > 1000);
        fuzz_format(fmt_dma, "dma", "dma:dma_map_sg", dma_locs, 4, 50000, &ok);
        assert_true(ok > 100);
        fuzz_format(fmt_switch, "sched", "sched:sched_switch", NULL, 0, 20000, &ok);
        assert_true(ok > 1000);
        fuzz_format(fmt_flush, "btrfs", "btrfs:btrfs_flush_space", NULL, 0, 20000, &ok);
        assert_true(ok > 1000);
}

static void test_encoder_name_escaped(void **state) {
        struct fixture fx = {};
        struct jbuf b = {};
        uint8_t rec[40] = {};
        struct perf_sample s;
        json_object *o;

        assert_int_equal(format_parse(fmt_exec, "sched", &fx.fmt), 0);
        assert_int_equal(encoder_new("odd:\"name\"\n", fx.fmt, &fx.enc), 0);
        put_le(rec, 8, data_loc(20, 1), 4);
        s = make_sample(rec, 24);
        assert_int_equal(encode_event(&b, fx.enc, &s, 0), 0);
        o = parse_line(&b, 0);
        expect_str(o, "event", "odd:\"name\"\n", 11);
        json_object_put(o);
        jbuf_done(&b);
        fixture_done(&fx);
        assert_null(encoder_free(NULL));
}

/* The context keys with what the runtime says (issue 31): a verified
 * Kubernetes container, an unverified one, the parent's comm; within
 * encode_context_max(). */
static void test_context_container_info(void **state) {
        struct encode_context c = {
                .comm = "api", .exe = "/app", .ppid = 1, .pcomm = "containerd-shim", .uid = 0,
                .container = "3f2a", .container_uid = -1, .pod = "8d4e6f1a-2b3c-4d5e-8f9a-0b1c2d3e4f5a",
                .runtime = "containerd", .name = "api", .image = "reg/api:\"2\"", .pod_name = "api-7d9f8",
                .pod_namespace = "prod", .pod_container = "api", .verified = true,
        };
        char buf[2048], *end;

        (void) state;
        assert_true(encode_context_max(&c) < sizeof(buf));
        end = encode_context_put(buf, &c);
        *end = 0;
        assert_true((size_t) (end - buf) <= encode_context_max(&c));
        assert_string_equal(buf, ",\"proc\":{\"comm\":\"api\",\"exe\":\"/app\",\"ppid\":1,\"pcomm\":\"containerd-shim\",\"uid\":0},"
                                 "\"container\":\"3f2a\",\"container_info\":{\"runtime\":\"containerd\",\"name\":\"api\","
                                 "\"image\":\"reg/api:\\\"2\\\"\",\"pod\":{\"name\":\"api-7d9f8\",\"namespace\":\"prod\","
                                 "\"uid\":\"8d4e6f1a-2b3c-4d5e-8f9a-0b1c2d3e4f5a\",\"container\":\"api\"},\"verified\":true},"
                                 "\"pod\":\"8d4e6f1a-2b3c-4d5e-8f9a-0b1c2d3e4f5a\"");
        c = (struct encode_context) { .ppid = -1, .uid = -1, .container = "3f2a", .container_uid = 1000,
                                      .runtime = "podman" };
        end = encode_context_put(buf, &c);
        *end = 0;
        assert_string_equal(buf, ",\"container\":\"3f2a\",\"container_uid\":1000,"
                                 "\"container_info\":{\"runtime\":\"podman\",\"verified\":false}");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_string_controls),
                cmocka_unit_test(test_string_all_bytes),
                cmocka_unit_test(test_string_utf8_valid),
                cmocka_unit_test(test_string_utf8_invalid),
                cmocka_unit_test(test_string_random),
                cmocka_unit_test(test_integers),
                cmocka_unit_test(test_time),
                cmocka_unit_test(test_jbuf),
                cmocka_unit_test(test_event_exec),
                cmocka_unit_test(test_event_openat),
                cmocka_unit_test(test_event_switch),
                cmocka_unit_test(test_event_symbols),
                cmocka_unit_test(test_event_arrays),
                cmocka_unit_test(test_event_malformed),
                cmocka_unit_test(test_event_worst_case),
                cmocka_unit_test(test_event_fuzz),
                cmocka_unit_test(test_encoder_name_escaped),
                cmocka_unit_test(test_context_container_info),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
