/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The JSON writer under every line evmon writes (src/encode/json.c).
 *
 * Lines are written straight into a reusable buffer: a caller reserves a
 * worst-case bound once, then writes without further checks. Nothing here
 * allocates per line or calls printf. The json_put_*() primitives write at
 * P (which must have room, see the bounds below) and return the new end. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline bool json_utf8_cont(uint8_t c) {
        return (c & 0xc0) == 0x80;
}

/* Length of the well-formed UTF-8 sequence at S (S[0] >= 0x80, N >= 1 bytes
 * available), or 0: the JSON writer's test, and the terminal view's
 * (src/shared/human.c). Well-formed per RFC 3629 section 4 / Unicode
 * table 3-7: no overlong forms (C0, C1, E0 80..9F, F0 80..8F), no
 * surrogates (ED A0..BF), nothing above U+10FFFF (F4 90.., F5..FF). */
static inline size_t json_utf8_len(const uint8_t *s, size_t n) {
        uint8_t c = s[0], lo = 0x80, hi = 0xbf;

        if (c < 0xc2)
                return 0;
        if (c < 0xe0)
                return n >= 2 && json_utf8_cont(s[1]) ? 2 : 0;
        if (c < 0xf0) {
                if (n < 3 || !json_utf8_cont(s[2]))
                        return 0;
                if (c == 0xe0)
                        lo = 0xa0;
                else if (c == 0xed)
                        hi = 0x9f;
                return s[1] >= lo && s[1] <= hi ? 3 : 0;
        }
        if (c < 0xf5) {
                if (n < 4 || !json_utf8_cont(s[2]) || !json_utf8_cont(s[3]))
                        return 0;
                if (c == 0xf0)
                        lo = 0x90;
                else if (c == 0xf4)
                        hi = 0x8f;
                return s[1] >= lo && s[1] <= hi ? 4 : 0;
        }
        return 0;
}

/* ---- the line buffer ------------------------------------------------- */

/* Reusable output buffer: grows, never shrinks. Zero-initialise it. */
struct jbuf {
        char *data;
        size_t len, cap;
};

/* Ensures cap - len >= EXTRA. 0 or -ENOMEM (the buffer is unchanged then). */
int jbuf_reserve(struct jbuf *b, size_t extra);
/* Frees the storage; B may be reused (it is zeroed). */
void jbuf_done(struct jbuf *b);

static inline void jbuf_donep(struct jbuf *b) {
        jbuf_done(b);
}

/* Raw appends without bounds checks: only after jbuf_reserve(). */
static inline char *jbuf_end(const struct jbuf *b) {
        return b->data + b->len;
}

/* Commits everything written up to END (from jbuf_end()). */
static inline void jbuf_set_end(struct jbuf *b, const char *end) {
        b->len = (size_t) (end - b->data);
}

static inline void jbuf_put_bytes(struct jbuf *b, const void *p, size_t n) {
        memcpy(b->data + b->len, p, n);
        b->len += n;
}

static inline void jbuf_put_char(struct jbuf *b, char c) {
        b->data[b->len++] = c;
}

/* LIT must be a string literal. */
#define jbuf_put_literal(b, lit) jbuf_put_bytes((b), "" lit, sizeof(lit) - 1)

/* Same at a raw pointer: returns the new end. */
static inline char *json_put_bytes(char *p, const void *s, size_t n) {
        memcpy(p, s, n);
        return p + n;
}

#define json_put_literal(p, lit) json_put_bytes((p), "" lit, sizeof(lit) - 1)

/* ---- primitives -------------------------------------------------------- */

/* Longest json_put_u64()/json_put_i64() output: "-9223372036854775808". */
#define JSON_INT_MAX 20u
/* json_put_hex(): "\"0x" + 16 digits + "\"". */
#define JSON_HEX_MAX 20u
/* json_put_time(): "\"YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ\"" (every u64 falls
 * before the year 10000). */
#define JSON_TIME_LEN 32u

/* Worst-case json_put_string() output for N input bytes (quotes included). */
size_t json_escaped_max(size_t n);

/* Writes S (N bytes, any bytes, NULs included) as a JSON string with its
 * quotes. Valid UTF-8 passes through raw; see encode.c for how invalid
 * bytes are escaped. Needs json_escaped_max(N) bytes at P. */
char *json_put_string(char *p, const char *s, size_t n);

char *json_put_u64(char *p, uint64_t v);
char *json_put_i64(char *p, int64_t v);
/* "\"0x1f\"": lower-case, no leading zeros ("\"0x0\"" for 0). */
char *json_put_hex(char *p, uint64_t v);
/* "\"2026-11-21T10:23:00.123456789Z\"" for REALTIME_NS since the epoch
 * (UTC, no leap seconds, as CLOCK_REALTIME counts). Always JSON_TIME_LEN
 * bytes. Caches the formatted seconds of the last call (per thread). */
char *json_put_time(char *p, uint64_t realtime_ns);

