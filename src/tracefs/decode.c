/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Decoding one field of a raw tracepoint record (the PERF_SAMPLE_RAW
 * payload, which starts at common_type).
 *
 * This runs per field per event: no allocation, no string compares. The
 * format parser settled kind, widths and sign already. Every read is
 * bounds-checked against the record size first and done with memcpy(),
 * since raw records are only 4-byte aligned inside the ring (u32 size
 * before them) and fields may sit anywhere. */

#include <errno.h>
#include <string.h>

#include "evmon/cleanup.h"
#include "evmon/tracefs.h"

/* An unsigned integer of WIDTH (1, 2, 4, 8) bytes at P, in host byte
 * order: the kernel wrote it as a native integer. */
static inline uint64_t load_uint(const uint8_t *p, unsigned width) {
        switch (width) {
        case 1:
                return *p;
        case 2: {
                uint16_t v;
                memcpy(&v, p, sizeof(v));
                return v;
        }
        case 4: {
                uint32_t v;
                memcpy(&v, p, sizeof(v));
                return v;
        }
        case 8: {
                uint64_t v;
                memcpy(&v, p, sizeof(v));
                return v;
        }
        default:
                return 0;
        }
}

/* The value of a WIDTH-byte type held in V (read as the whole slot): its
 * low-order WIDTH bytes, sign-extended when IS_SIGNED. Taking the
 * low-order bits of the slot as a number, rather than its first bytes in
 * memory, is right on either byte order: the kernel stores a syscall's
 * "int dfd" as (unsigned long) dfd in an 8-byte slot. */
static inline uint64_t narrow(uint64_t v, unsigned width, bool is_signed) {
        switch (width) {
        case 1:
                return is_signed ? (uint64_t) (int64_t) (int8_t) v : (uint8_t) v;
        case 2:
                return is_signed ? (uint64_t) (int64_t) (int16_t) v : (uint16_t) v;
        case 4:
                return is_signed ? (uint64_t) (int64_t) (int32_t) v : (uint32_t) v;
        default:
                return v;
        }
}

int field_decode(const struct format_field *f, const void *rec, size_t size, struct field_value *ret) {
        const uint8_t *base = rec;
        uint64_t field_end = (uint64_t) f->offset + f->size;
        const uint8_t *p;
        uint64_t start, len;

        if (_unlikely_(field_end > size))
                return -EBADMSG;

        p = base + f->offset;
        ret->kind = f->kind;

        switch (f->kind) {
        case FIELD_INT: {
                uint64_t v = narrow(load_uint(p, f->size), f->elem_size, f->elem_signed);

                if (f->elem_signed)
                        ret->i = (int64_t) v;
                else
                        ret->u = v;
                return 0;
        }

        case FIELD_BOOL:
                ret->b = load_uint(p, f->size) != 0;
                return 0;

        case FIELD_POINTER:
                ret->u = load_uint(p, f->size);
                return 0;

        case FIELD_CHARS:
                ret->str.ptr = (const char *) p;
                ret->str.len = strnlen((const char *) p, f->size);
                return 0;

        case FIELD_ARRAY:
                ret->arr.ptr = p;
                ret->arr.count = f->size / f->elem_size;
                return 0;

        case FIELD_DYN_STRING:
        case FIELD_DYN_ARRAY:
                if (f->flex) {
                        /* "T name[]": everything after the fixed part. */
                        start = f->offset;
                        len = size - start;
                } else {
                        /* (len << 16) | offset; for __rel_loc the offset
                         * counts from the end of the locator itself
                         * (include/trace/stages/stage5_get_offsets.h). */
                        uint32_t loc = (uint32_t) load_uint(p, 4);

                        start = loc & 0xffff;
                        len = loc >> 16;
                        if (f->rel)
                                start += field_end;
                        if (_unlikely_(start + len > size))
                                return -EBADMSG;
                }

                if (f->kind == FIELD_DYN_STRING) {
                        /* The kernel copies the trailing NUL in; stop at
                         * the first one, and never past LEN. */
                        ret->str.ptr = (const char *) base + start;
                        ret->str.len = strnlen(ret->str.ptr, len);
                } else {
                        ret->arr.ptr = base + start;
                        ret->arr.count = len / f->elem_size;
                }
                return 0;

        case _FIELD_KIND_MAX:
        default:
                return -EINVAL;
        }
}

int64_t field_array_get(const struct format_field *f, const struct field_value *v, size_t i) {
        if (v->kind != FIELD_ARRAY && v->kind != FIELD_DYN_ARRAY)
                return 0;
        if (i >= v->arr.count)
                return 0;

        const uint8_t *p = (const uint8_t *) v->arr.ptr + i * f->elem_size;

        return (int64_t) narrow(load_uint(p, f->elem_size), f->elem_size, f->elem_signed);
}
