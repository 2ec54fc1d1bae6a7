/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "evmon/cleanup.h"
#include "evmon/json.h"

/* ---- the line buffer ------------------------------------------------- */

int jbuf_reserve(struct jbuf *b, size_t extra) {
        size_t need, cap;
        char *d;

        if (_likely_(b->cap - b->len >= extra))
                return 0;
        if (extra > SIZE_MAX - b->len)
                return -ENOMEM;

        need = b->len + extra;
        cap = b->cap > 0 ? b->cap : 4096;
        while (cap < need)
                cap = cap > SIZE_MAX / 2 ? need : cap * 2;

        d = realloc(b->data, cap);
        if (!d)
                return -ENOMEM;
        b->data = d;
        b->cap = cap;
        return 0;
}

void jbuf_done(struct jbuf *b) {
        free(b->data);
        *b = (struct jbuf) {};
}

/* ---- integers ------------------------------------------------------------ */

static const char digits2[200] =
        "0001020304050607080910111213141516171819"
        "2021222324252627282930313233343536373839"
        "4041424344454647484950515253545556575859"
        "6061626364656667686970717273747576777879"
        "8081828384858687888990919293949596979899";

static const char hexdigits[16] = "0123456789abcdef";

static inline char *put2(char *p, unsigned v) {
        return json_put_bytes(p, digits2 + 2 * v, 2);
}

static const uint64_t pow10_u64[20] = {
        1u, 10u, 100u, 1000u, 10000u, 100000u, 1000000u, 10000000u, 100000000u, 1000000000u,
        10000000000u, 100000000000u, 1000000000000u, 10000000000000u, 100000000000000u,
        1000000000000000u, 10000000000000000u, 100000000000000000u, 1000000000000000000u,
        10000000000000000000u,
};

/* Digits of V: log10 from its bit length (1233/4096 ~ log10(2)), one
 * compare to settle the rounding. */
static inline unsigned u64_ndigits(uint64_t v) {
        unsigned t = ((64u - (unsigned) __builtin_clzll(v | 1)) * 1233u) >> 12;

        return t + 1 - ((v | 1) < pow10_u64[t]);
}

/* Eight digits of X (< 10^8) at P: two halves of four, independent of
 * each other, in 32-bit arithmetic. */
static inline void put8(char *p, uint32_t x) {
        uint32_t hi = x / 10000, lo = x % 10000;

        put2(p, hi / 100);
        put2(p + 2, hi % 100);
        put2(p + 4, lo / 100);
        put2(p + 6, lo % 100);
}

/* The hot path's numbers are nanosecond times and addresses of 14 to 16
 * digits: eight digits per 64-bit division, each eight in two chains of
 * 32-bit arithmetic that do not wait on each other. encode_event() writes
 * 8 % more lines/s with it than with a plain two-digits-a-time loop
 * (bench/bench-json, 4 runs each, 9.7M against 10.0-11.2M lines/s). */
char *json_put_u64(char *p, uint64_t v) {
        char *end = p + u64_ndigits(v), *q = end;
        uint32_t w;

        while (v >= 100000000u) {
                q -= 8;
                put8(q, (uint32_t) (v % 100000000u));
                v /= 100000000u;
        }
        w = (uint32_t) v;
        while (w >= 100) {
                q -= 2;
                put2(q, w % 100);
                w /= 100;
        }
        if (w >= 10)
                put2(q - 2, w);
        else
                q[-1] = (char) ('0' + w);
        return end;
}

char *json_put_i64(char *p, int64_t v) {
        if (v >= 0)
                return json_put_u64(p, (uint64_t) v);
        *p++ = '-';
        /* Negate in unsigned arithmetic: INT64_MIN has no positive twin. */
        return json_put_u64(p, 0 - (uint64_t) v);
}

char *json_put_hex(char *p, uint64_t v) {
        unsigned n = v ? (67 - (unsigned) __builtin_clzll(v)) / 4 : 1;

        p = json_put_literal(p, "\"0x");
        for (unsigned i = n; i > 0; i--) {
                p[i - 1] = hexdigits[v & 0xf];
                v >>= 4;
        }
        p += n;
        *p++ = '"';
        return p;
}

/* ---- time ------------------------------------------------------------------ */

/* Days since 1970-01-01 to a proleptic Gregorian date, with the era
 * arithmetic of Howard Hinnant's "chrono-Compatible Low-Level Date
 * Algorithms" (days_from_civil's inverse): years counted from March so the
 * leap day comes last, 400-year eras of 146097 days. Only non-negative
 * days arrive here, so plain unsigned division is right. */
static void civil_from_days(uint64_t days, unsigned *ret_y, unsigned *ret_m, unsigned *ret_d) {
        uint64_t z = days + 719468;                     /* days since 0000-03-01 */
        uint64_t era = z / 146097;
        unsigned doe = (unsigned) (z - era * 146097);   /* [0, 146096] */
        unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;   /* [0, 399] */
        unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);                 /* [0, 365] */
        unsigned mp = (5 * doy + 2) / 153;                                      /* March = 0 */
        unsigned d = doy - (153 * mp + 2) / 5 + 1;
        unsigned m = mp < 10 ? mp + 3 : mp - 9;

        *ret_y = (unsigned) (yoe + era * 400) + (m <= 2);
        *ret_m = m;
        *ret_d = d;
}

/* Lines come in bursts within the same second: keep its text. One per
 * thread, so no locking. */
static _Thread_local struct {
        uint64_t sec;
        bool valid;
        char text[19];          /* YYYY-MM-DDTHH:MM:SS */
} time_cache;

char *json_put_time(char *p, uint64_t realtime_ns) {
        uint64_t sec = realtime_ns / 1000000000u;
        unsigned ns = (unsigned) (realtime_ns % 1000000000u);

        if (_unlikely_(!time_cache.valid || time_cache.sec != sec)) {
                unsigned y, mo, d, sod = (unsigned) (sec % 86400);
                char *q = time_cache.text;

                civil_from_days(sec / 86400, &y, &mo, &d);
                /* UINT64_MAX ns is in 2554: four digits always do. */
                q = put2(q, y / 100);
                q = put2(q, y % 100);
                *q++ = '-';
                q = put2(q, mo);
                *q++ = '-';
                q = put2(q, d);
                *q++ = 'T';
                q = put2(q, sod / 3600);
                *q++ = ':';
                q = put2(q, sod / 60 % 60);
                *q++ = ':';
                put2(q, sod % 60);
                time_cache.sec = sec;
                time_cache.valid = true;
        }

        *p++ = '"';
        p = json_put_bytes(p, time_cache.text, sizeof(time_cache.text));
        *p++ = '.';
        p = put2(p, ns / 10000000);
        p = put2(p, ns / 100000 % 100);
        p = put2(p, ns / 1000 % 100);
        p = put2(p, ns / 10 % 100);
        *p++ = (char) ('0' + ns % 10);
        return json_put_literal(p, "Z\"");
}

/* ---- strings --------------------------------------------------------------- */

/* Per byte: 0 copies it raw, 'u' writes \u00XX, 'U' starts a UTF-8
 * check, anything else is the letter after a backslash. DEL is a control
 * character too; escaping it keeps terminals reading `evmonctl watch` sane. */
static const char json_esc[256] = {
        [0x00 ... 0x07] = 'u',
        ['\b'] = 'b',
        ['\t'] = 't',
        ['\n'] = 'n',
        [0x0b] = 'u',
        ['\f'] = 'f',
        ['\r'] = 'r',
        [0x0e ... 0x1f] = 'u',
        ['"'] = '"',
        ['\\'] = '\\',
        [0x7f] = 'u',
        [0x80 ... 0xff] = 'U',
};

size_t json_escaped_max(size_t n) {
        /* Every byte at worst becomes \u00XX. */
        if (n > (SIZE_MAX - 2) / 6)
                return SIZE_MAX;
        return 6 * n + 2;
}

/* Invalid UTF-8: each byte that does not start a well-formed sequence is
 * written as \u00XX (so the byte 0xff becomes U+00FF) and the scan resumes
 * at the next byte, which is checked afresh. A bad or truncated sequence
 * thus turns into one escape per byte, and a valid character right after
 * it is kept. Nothing is dropped or replaced by U+FFFD, so the kernel's
 * bytes can be recovered: a consumer that sees U+0080..U+00FF where it
 * expects text knows they were raw bytes (real Latin-1 text arrives as
 * two-byte UTF-8 and is passed through unchanged, so the two cases differ
 * only after decoding, which is the price of staying plain JSON). */
char *json_put_string(char *p, const char *s, size_t n) {
        const uint8_t *u = (const uint8_t *) s, *end = u + n;

        *p++ = '"';
        while (u < end) {
                uint8_t c = *u;
                char e = json_esc[c];

                if (_likely_(e == 0)) {
                        *p++ = (char) c;
                        u++;
                        continue;
                }
                if (e == 'U') {
                        size_t l = json_utf8_len(u, (size_t) (end - u));

                        if (l > 0) {
                                p = json_put_bytes(p, u, l);
                                u += l;
                                continue;
                        }
                        e = 'u';
                }
                *p++ = '\\';
                if (e == 'u') {
                        p = json_put_literal(p, "u00");
                        *p++ = hexdigits[c >> 4];
                        *p++ = hexdigits[c & 0xf];
                } else
                        *p++ = e;
                u++;
        }
        *p++ = '"';
        return p;
}
