/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Private to src/monitor/: a bounds-checked reader over the bytes of one
 * record, shared by sample.c and record.c. Every take fails with -EBADMSG
 * rather than step past the end. */

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "evmon/monitor.h"

struct cursor {
        const uint8_t *p, *end;
};

static inline struct cursor cursor_make(const void *p, size_t n) {
        return (struct cursor) { .p = p, .end = (const uint8_t *) p + n };
}

static inline size_t cursor_left(const struct cursor *c) {
        return (size_t) (c->end - c->p);
}

/* N bytes in place; *ret may be NULL to just skip them. */
static inline int cursor_take(struct cursor *c, uint64_t n, const void **ret) {
        if (n > cursor_left(c))
                return -EBADMSG;
        if (ret)
                *ret = c->p;
        c->p += n;
        return 0;
}

/* NR elements of SIZE bytes, without overflowing NR * SIZE. */
static inline int cursor_take_array(struct cursor *c, uint64_t nr, size_t size, const void **ret) {
        if (nr > cursor_left(c) / size)
                return -EBADMSG;
        return cursor_take(c, nr * size, ret);
}

#define DEFINE_CURSOR_GET(name, type)                                   \
        static inline int cursor_##name(struct cursor *c, type *ret) {  \
                if (cursor_left(c) < sizeof(type))                      \
                        return -EBADMSG;                                \
                memcpy(ret, c->p, sizeof(type));                        \
                c->p += sizeof(type);                                   \
                return 0;                                               \
        }

DEFINE_CURSOR_GET(u8, uint8_t)
DEFINE_CURSOR_GET(u16, uint16_t)
DEFINE_CURSOR_GET(u32, uint32_t)
DEFINE_CURSOR_GET(u64, uint64_t)

/* Skips to the next multiple of 8 from START (the kernel pads RAW, AUX and
 * user stack data so that what follows stays u64-aligned). */
static inline int cursor_align8(struct cursor *c, const void *start) {
        size_t used = (size_t) (c->p - (const uint8_t *) start);

        return cursor_take(c, (8 - used % 8) % 8, NULL);
}

/* A NUL-terminated string that must end inside the cursor; consumes the
 * rest (the strings of records are last in their body, padded). */
static inline int cursor_string_rest(struct cursor *c, const char **ret) {
        if (!memchr(c->p, 0, cursor_left(c)))
                return -EBADMSG;
        *ret = (const char *) c->p;
        c->p = c->end;
        return 0;
}

/* struct read_format of READ_FORMAT, shared by PERF_SAMPLE_READ and
 * PERF_RECORD_READ (sample.c). */
int read_format_parse(struct cursor *c, uint64_t read_format, struct perf_read *ret);
