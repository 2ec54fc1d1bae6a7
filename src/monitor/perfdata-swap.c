/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* perf.data written on a machine of the other byte order, turned into
 * ours in place, field by field, the way perf's util/session.c swaps
 * (perf_event__*_swap, perf_event__attr_swap) and util/evsel.c fixes the
 * u32 pairs of a sample. Strings and byte arrays stay as they are; a
 * tracepoint's raw data is swapped field by field with its format (perf
 * hands libtraceevent the file's order instead: the same values). */

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "perfdata-int.h"

#define SAMPLE_BRANCH_COUNTERS (1ULL << 19)

static void sw16(uint8_t *p) {
        uint16_t v;

        memcpy(&v, p, 2);
        v = bswap_16(v);
        memcpy(p, &v, 2);
}

static void sw32(uint8_t *p) {
        uint32_t v;

        memcpy(&v, p, 4);
        v = bswap_32(v);
        memcpy(p, &v, 4);
}

static void sw64(uint8_t *p) {
        uint64_t v;

        memcpy(&v, p, 8);
        v = bswap_64(v);
        memcpy(p, &v, 8);
}

static uint64_t ld64(const uint8_t *p) {
        uint64_t v;

        memcpy(&v, p, 8);
        return v;
}

static uint8_t revbyte(uint8_t b) {
        b = (uint8_t) ((b & 0xf0) >> 4 | (b & 0x0f) << 4);
        b = (uint8_t) ((b & 0xcc) >> 2 | (b & 0x33) << 2);
        return (uint8_t) ((b & 0xaa) >> 1 | (b & 0x55) << 1);
}

/* Field offsets of struct perf_event_attr and their widths, up to the
 * newest size this uapi knows (the flags at 40 are bitfields). */
static const struct { uint8_t off, width; } attr_fields[] = {
        { 0, 4 }, { 4, 4 }, { 8, 8 }, { 16, 8 }, { 24, 8 }, { 32, 8 },
        { 48, 4 }, { 52, 4 }, { 56, 8 }, { 64, 8 }, { 72, 8 }, { 80, 8 },
        { 88, 4 }, { 92, 4 }, { 96, 8 }, { 104, 4 }, { 108, 2 }, { 110, 2 },
        { 112, 4 }, { 116, 4 }, { 120, 8 }, { 128, 8 },
};

void swap_attr(void *attr, size_t size) {
        uint8_t *p = attr;

        for (size_t i = 0; i < ELEMENTSOF(attr_fields); i++) {
                size_t off = attr_fields[i].off, w = attr_fields[i].width;

                if (off + w > size)
                        break;
                if (w == 2)
                        sw16(p + off);
                else if (w == 4)
                        sw32(p + off);
                else
                        sw64(p + off);
        }
        /* A big-endian compiler allocates bitfields from the top bit down:
         * bit-reverse each byte (session.c swap_bitfield). */
        if (size >= 48)
                for (size_t i = 40; i < 48; i++)
                        p[i] = revbyte(p[i]);
}

void swap_raw(const struct format *f, uint8_t *raw, size_t size) {
        for (size_t i = 0; f && i < f->n_fields; i++) {
                const struct format_field *ff = &f->fields[i];
                size_t w = ff->elem_size, n;

                if (ff->offset > size || ff->size > size - ff->offset)
                        continue;
                switch (ff->kind) {
                case FIELD_INT:
                case FIELD_BOOL:
                case FIELD_POINTER:
                        w = ff->size;
                        n = 1;
                        break;
                case FIELD_ARRAY:
                        n = w ? ff->size / w : 0;
                        break;
                case FIELD_DYN_STRING:
                case FIELD_DYN_ARRAY: {
                        uint32_t loc;
                        size_t start, len;

                        if (ff->flex) {
                                /* "T buf[]": the rest of the record. */
                                start = ff->offset;
                                len = size - ff->offset;
                        } else {
                                if (ff->size != 4)
                                        continue;
                                sw32(raw + ff->offset);
                                memcpy(&loc, raw + ff->offset, 4);
                                start = (loc & 0xffff) + (ff->rel ? ff->offset + 4u : 0u);
                                len = loc >> 16;
                        }
                        if (ff->kind == FIELD_DYN_STRING || w < 2 || start > size || len > size - start)
                                continue;
                        for (size_t k = 0; k + w <= len; k += w)
                                if (w == 2)
                                        sw16(raw + start + k);
                                else if (w == 4)
                                        sw32(raw + start + k);
                                else if (w == 8)
                                        sw64(raw + start + k);
                        continue;
                }
                default:
                        continue;
                }
                for (size_t k = 0; k < n; k++) {
                        uint8_t *p = raw + ff->offset + k * w;

                        if (w == 2)
                                sw16(p);
                        else if (w == 4)
                                sw32(p);
                        else if (w == 8)
                                sw64(p);
                }
        }
}

/* A run of u64s from *AT, N of them, within END. */
static int sw64n(uint8_t **at, const uint8_t *end, uint64_t n) {
        if (n > (uint64_t) (end - *at) / 8)
                return -EBADMSG;
        for (uint64_t i = 0; i < n; i++, *at += 8)
                sw64(*at);
        return 0;
}

/* A u64 slot holding two u32s (pid/tid, cpu/res). */
static int sw32x2(uint8_t **at, const uint8_t *end) {
        if (end - *at < 8)
                return -EBADMSG;
        sw32(*at);
        sw32(*at + 4);
        *at += 8;
        return 0;
}

static int swap_read_format(uint8_t **at, const uint8_t *end, uint64_t rf) {
        uint64_t entry = 1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST);
        uint64_t times = !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) + !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);
        uint64_t nr;
        int r;

        if (!(rf & PERF_FORMAT_GROUP))
                return sw64n(at, end, 1 + times + entry - 1);
        r = sw64n(at, end, 1);
        if (r < 0)
                return r;
        nr = ld64(*at - 8);
        r = sw64n(at, end, times);
        if (r < 0)
                return r;
        if (nr > (uint64_t) (end - *at) / 8 / entry)
                return -EBADMSG;
        return sw64n(at, end, nr * entry);
}

static int swap_regs(uint8_t **at, const uint8_t *end, uint64_t mask) {
        int r = sw64n(at, end, 1);

        if (r < 0)
                return r;
        if (ld64(*at - 8) == PERF_SAMPLE_REGS_ABI_NONE)
                return 0;
        return sw64n(at, end, (uint64_t) __builtin_popcountll(mask));
}

/* A sample's RAW part: u32 size and the data, padded to a u64 boundary. */
static int swap_sample_raw(uint8_t **pp, const uint8_t *end, const struct format *f) {
        uint8_t *p = *pp;
        uint32_t size;

        if (end - p < 4)
                return -EBADMSG;
        sw32(p);
        memcpy(&size, p, 4);
        if (size > (size_t) (end - p) - 4)
                return -EBADMSG;
        swap_raw(f, p + 4, size);
        p += (4 + (size_t) size + 7) / 8 * 8;
        if (p > end)
                return -EBADMSG;
        *pp = p;
        return 0;
}

static int swap_branch_stack(uint8_t **pp, const uint8_t *end, uint64_t branch_sample_type) {
        uint64_t nr;
        uint8_t *p;
        int r;

        r = sw64n(pp, end, 1);
        if (r < 0)
                return r;
        nr = ld64(*pp - 8);
        if ((branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX) && (r = sw64n(pp, end, 1)) < 0)
                return r;
        p = *pp;
        if (nr > (uint64_t) (end - p) / 24)
                return -EBADMSG;
        for (uint64_t i = 0; i < nr; i++) {
                sw64(p);
                sw64(p + 8);
                /* The flags word is bitfields (evsel.c: the same bit
                 * reversal as the attr's). */
                for (int k = 16; k < 24; k++)
                        p[k] = revbyte(p[k]);
                p += 24;
        }
        *pp = p;
        if (branch_sample_type & SAMPLE_BRANCH_COUNTERS)
                return sw64n(pp, end, nr);
        return 0;
}

static int swap_stack_user(uint8_t **pp, const uint8_t *end) {
        uint64_t size;
        int r;

        r = sw64n(pp, end, 1);
        if (r < 0)
                return r;
        size = ld64(*pp - 8);
        if (size > (uint64_t) (end - *pp))
                return -EBADMSG;
        *pp += size;
        if (size)
                return sw64n(pp, end, 1);
        return 0;
}

static int swap_sample(uint8_t *p, const uint8_t *end, const struct perf_event_attr *a, const struct format *f) {
        uint64_t t = a->sample_type;
        int r = 0;

#define S64(bit) if ((t & (bit)) && (r = sw64n(&p, end, 1)) < 0) return r
        S64(PERF_SAMPLE_IDENTIFIER);
        S64(PERF_SAMPLE_IP);
        if ((t & PERF_SAMPLE_TID) && (r = sw32x2(&p, end)) < 0)
                return r;
        S64(PERF_SAMPLE_TIME);
        S64(PERF_SAMPLE_ADDR);
        S64(PERF_SAMPLE_ID);
        S64(PERF_SAMPLE_STREAM_ID);
        if ((t & PERF_SAMPLE_CPU) && (r = sw32x2(&p, end)) < 0)
                return r;
        S64(PERF_SAMPLE_PERIOD);
        if ((t & PERF_SAMPLE_READ) && (r = swap_read_format(&p, end, a->read_format)) < 0)
                return r;
        if (t & PERF_SAMPLE_CALLCHAIN) {
                r = sw64n(&p, end, 1);
                if (r >= 0)
                        r = sw64n(&p, end, ld64(p - 8));
                if (r < 0)
                        return r;
        }
        if ((t & PERF_SAMPLE_RAW) && (r = swap_sample_raw(&p, end, f)) < 0)
                return r;
        if ((t & PERF_SAMPLE_BRANCH_STACK) && (r = swap_branch_stack(&p, end, a->branch_sample_type)) < 0)
                return r;
        if ((t & PERF_SAMPLE_REGS_USER) && (r = swap_regs(&p, end, a->sample_regs_user)) < 0)
                return r;
        if ((t & PERF_SAMPLE_STACK_USER) && (r = swap_stack_user(&p, end)) < 0)
                return r;
        if (t & PERF_SAMPLE_WEIGHT_STRUCT) {
                /* u32 var1_dw, u16 var2_w, u16 var3_w */
                if (end - p < 8)
                        return -EBADMSG;
                sw32(p);
                sw16(p + 4);
                sw16(p + 6);
                p += 8;
        } else
                S64(PERF_SAMPLE_WEIGHT);
        S64(PERF_SAMPLE_DATA_SRC);
        S64(PERF_SAMPLE_TRANSACTION);
        if ((t & PERF_SAMPLE_REGS_INTR) && (r = swap_regs(&p, end, a->sample_regs_intr)) < 0)
                return r;
        S64(PERF_SAMPLE_PHYS_ADDR);
        S64(PERF_SAMPLE_CGROUP);
        S64(PERF_SAMPLE_DATA_PAGE_SIZE);
        S64(PERF_SAMPLE_CODE_PAGE_SIZE);
        if (t & PERF_SAMPLE_AUX) {
                r = sw64n(&p, end, 1);
                if (r < 0)
                        return r;
                if (ld64(p - 8) > (uint64_t) (end - p))
                        return -EBADMSG;
        }
#undef S64
        return 0;
}

/* The sample_id trailer's size for SAMPLE_TYPE (record.c reads it the
 * same way). */
static size_t trailer_size(uint64_t t) {
        return 8 * (size_t) __builtin_popcountll(t & (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
                                                      PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
                                                      PERF_SAMPLE_IDENTIFIER));
}

static int swap_trailer(uint8_t *p, const uint8_t *end, uint64_t t) {
        int r = 0;

        if ((t & PERF_SAMPLE_TID) && (r = sw32x2(&p, end)) < 0)
                return r;
        if ((t & PERF_SAMPLE_TIME) && (r = sw64n(&p, end, 1)) < 0)
                return r;
        if ((t & PERF_SAMPLE_ID) && (r = sw64n(&p, end, 1)) < 0)
                return r;
        if ((t & PERF_SAMPLE_STREAM_ID) && (r = sw64n(&p, end, 1)) < 0)
                return r;
        if ((t & PERF_SAMPLE_CPU) && (r = sw32x2(&p, end)) < 0)
                return r;
        if ((t & PERF_SAMPLE_IDENTIFIER) && (r = sw64n(&p, end, 1)) < 0)
                return r;
        return 0;
}

/* MMAP2: pid, tid, addr, len, pgoff, then maj, min, ino,
 * ino_generation or a build id, then prot, flags. */
static int swap_mmap2(uint8_t *p, const uint8_t *end, uint16_t misc) {
        int r;

        r = sw32x2(&p, end);
        if (r >= 0)
                r = sw64n(&p, end, 3);
        if (r < 0)
                return r;
        if (end - p < 32)
                return -EBADMSG;
        if (!(misc & PERF_RECORD_MISC_MMAP_BUILD_ID)) {
                sw32(p);
                sw32(p + 4);
                sw64(p + 8);
                sw64(p + 16);
        }
        p += 24;
        return sw32x2(&p, end);         /* prot, flags */
}

/* Records whose leading fields pack u16 and u32 values into words. */
static int swap_packed(uint32_t type, uint8_t *p, const uint8_t *end) {
        switch (type) {
        case PERF_RECORD_KSYMBOL:
                if (end - p < 16)
                        return -EBADMSG;
                sw64(p);
                sw32(p + 8);
                sw16(p + 12);
                sw16(p + 14);
                return 0;
        case PERF_RECORD_BPF_EVENT:
                if (end - p < 8)
                        return -EBADMSG;
                sw16(p);
                sw16(p + 2);
                sw32(p + 4);
                return 0;
        case PERF_RECORD_TEXT_POKE:
                if (end - p < 12)
                        return -EBADMSG;
                sw64(p);
                sw16(p + 8);
                sw16(p + 10);
                return 0;
        }
        return 0;
}

int swap_record(struct perf_event_header *h, const struct perf_event_attr *a, const struct format *f) {
        uint8_t *p = (uint8_t *) (h + 1), *end = (uint8_t *) h + h->size;
        int r;

        if (h->type == PERF_RECORD_SAMPLE)
                return swap_sample(p, end, a, f);

        if (a->sample_id_all) {
                size_t ts = trailer_size(a->sample_type);

                if (ts > (size_t) (end - p))
                        return -EBADMSG;
                end -= ts;
                r = swap_trailer(end, end + ts, a->sample_type);
                if (r < 0)
                        return r;
        }

        switch (h->type) {
        case PERF_RECORD_MMAP:
                r = sw32x2(&p, end);
                if (r >= 0)
                        r = sw64n(&p, end, 3);
                return r;
        case PERF_RECORD_MMAP2:
                return swap_mmap2(p, end, h->misc);
        case PERF_RECORD_LOST:
                return sw64n(&p, end, 2);
        case PERF_RECORD_COMM:
        case PERF_RECORD_ITRACE_START:
        case PERF_RECORD_SWITCH_CPU_WIDE:
                return sw32x2(&p, end);
        case PERF_RECORD_EXIT:
        case PERF_RECORD_FORK:
                r = sw32x2(&p, end);
                if (r >= 0)
                        r = sw32x2(&p, end);
                if (r >= 0)
                        r = sw64n(&p, end, 1);
                return r;
        case PERF_RECORD_THROTTLE:
        case PERF_RECORD_UNTHROTTLE:
                return sw64n(&p, end, 3);
        case PERF_RECORD_READ:
                r = sw32x2(&p, end);
                if (r >= 0)
                        r = swap_read_format(&p, end, a->read_format);
                return r;
        case PERF_RECORD_AUX:
                return sw64n(&p, end, 3);
        case PERF_RECORD_LOST_SAMPLES:
        case PERF_RECORD_AUX_OUTPUT_HW_ID:
                return sw64n(&p, end, 1);
        case PERF_RECORD_NAMESPACES:
                r = sw32x2(&p, end);
                if (r >= 0)
                        r = sw64n(&p, end, 1);
                if (r >= 0)
                        r = ld64(p - 8) > (uint64_t) (end - p) / 16 ? -EBADMSG : sw64n(&p, end, 2 * ld64(p - 8));
                return r;
        case PERF_RECORD_KSYMBOL:
        case PERF_RECORD_BPF_EVENT:
        case PERF_RECORD_TEXT_POKE:
                return swap_packed(h->type, p, end);
        case PERF_RECORD_CGROUP:
                return sw64n(&p, end, 1);
        case 22:        /* PERF_RECORD_CALLCHAIN_DEFERRED: cookie, nr, ips */
                r = sw64n(&p, end, 2);
                if (r >= 0)
                        r = sw64n(&p, end, ld64(p - 8));
                return r;
        }
        return 0;
}
