/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The JSON line writer of the daemon (daemon-private).
 *
 * Events go out as one JSON object per line, written straight into a
 * reusable buffer: encode_event() reserves a worst-case bound once, then
 * writes without further checks. Nothing here allocates per event or calls
 * printf. The json_put_*() primitives write at P (which must have room, see
 * the bounds below) and return the new end. */

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "evmon/monitor.h"
#include "evmon/tracefs.h"

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

/* ---- event lines ------------------------------------------------------- */

/* One event format compiled for output: the pre-escaped line prefix and
 * field keys, and the constants of the worst-case line size. */
struct encoder;

/* Compiles FMT for lines naming EVENT_NAME ("sched:sched_process_exec").
 * FMT must outlive the encoder (its fields are referenced, not copied).
 * FMT NULL (an event that is no trace event: software, hardware, PMU)
 * gives lines without "fields" whose raw data, if any, is in "sample".
 * -EINVAL for a field of unknown kind, -ENOMEM. The caller owns *ret. */
int encoder_new(const char *event_name, const struct format *fmt, struct encoder **ret);
struct encode_ids;
/* Which PERF_SAMPLE_* bits of a sample its "sample" object shows (those
 * of ENCODE_SAMPLE_TOP never are). By default every bit, but RAW when the
 * encoder has a format; the daemon leaves out what it asked the kernel
 * for its own use (such as CGROUP for cgroup targets). */
void encoder_set_sample_show(struct encoder *e, uint64_t sample_show);
/* How read values' ids are named (copied; NULL: ids only). */
void encoder_set_ids(struct encoder *e, const struct encode_ids *ids);
struct encoder *encoder_free(struct encoder *e);
const struct format *encoder_format(const struct encoder *e);

static inline void encoder_freep(struct encoder **e) {
        encoder_free(*e);
}

/* Appends one line, ending in '\n', for sample S (its raw payload decoded
 * with E's format):
 *   {"type":"event","event":NAME,"time":...,"ts":N,"cpu":N,"pid":N,"tid":N,"fields":{...}}
 * "time"/"ts" appear when S has PERF_SAMPLE_TIME ("time" is s->time +
 * REALTIME_OFFSET_NS), "cpu" with PERF_SAMPLE_CPU, "pid"/"tid" with
 * PERF_SAMPLE_TID. "fields" holds the non-common fields (no "fields"
 * without a format), then ,"sample":{...} the other PERF_SAMPLE_* fields
 * encoder_set_sample_show() selects (encode_sample_put()).
 * Returns 0; -EBADMSG when a field does not decode (the line is not
 * written, b->len and the bytes before it are unchanged: the caller counts
 * it); -ENOMEM. */
int encode_event(struct jbuf *b, const struct encoder *e, const struct perf_sample *s,
                 int64_t realtime_offset_ns);

/* {"type":"lost","cpu":N,"count":N}\n */
int encode_lost(struct jbuf *b, int cpu, uint64_t count);
/* {"type":"dropped","count":N}\n */
int encode_dropped(struct jbuf *b, uint64_t count);
