/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Private to src/encode/: the hand-written JSON writer (struct jbuf and
 * the json_put_*() primitives) that sample.c and record.c write with. One
 * include, so that the writer's home can move without touching them. */

#include <stdbool.h>

#include "evmon/encode-perf.h"
#include "evmon/encode.h"
#include "evmon/json.h"

/* ,"KEY": at P (KEY a string literal without quotes). */
#define json_put_key(p, key) json_put_literal((p), ",\"" key "\":")
/* "KEY": without the comma, for the first member of an object. */
#define json_put_key1(p, key) json_put_literal((p), "\"" key "\":")

static inline char *json_put_bool(char *p, bool v) {
        return v ? json_put_literal(p, "true") : json_put_literal(p, "false");
}

/* A NUL-terminated name as a JSON string. */
static inline char *json_put_cstr(char *p, const char *s) {
        return json_put_string(p, s, strlen(s));
}

/* Bytes as one string of lower-case hex digits, two per byte, no "0x". */
char *json_put_hexbytes(char *p, const void *data, size_t n);
/* N bytes at DATA as a JSON string of their standard base64 (RFC 4648,
 * padded): 4 * ((N + 2) / 3) + 2 bytes at P. */
char *json_put_base64(char *p, const void *data, size_t n);
#define JSON_BASE64_MAX(n) (4u * (((size_t) (n) + 2u) / 3u) + 2u)

/* Shared by sample.c and record.c (PERF_RECORD_READ, CALLCHAIN_DEFERRED):
 * a read_format block and a callchain, with their worst-case sizes. */
size_t encode_read_max(const struct perf_read *r, const struct encode_ids *ids);
char *encode_read_put(char *p, const struct perf_read *r, const struct encode_ids *ids);
size_t encode_callchain_max(uint64_t nr);
char *encode_callchain_put(char *p, const uint64_t *ips, uint64_t nr);
/* With FRAMES (NR entries, or NULL): "syms" beside each segment's "ips". */
size_t encode_frames_max(const struct encode_frame *frames, uint64_t nr);
char *encode_callchain_put_frames(char *p, const uint64_t *ips, uint64_t nr, const struct encode_frame *frames);
