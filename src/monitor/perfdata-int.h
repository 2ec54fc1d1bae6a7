/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Private to src/monitor/perfdata*.c: the reader's state, the byte-order
 * aware cursor, the value-tree builder. */

#include <byteswap.h>

#include "cursor.h"
#include "evmon/perfdata.h"

/* ---- a cursor that reads the file's byte order ----------------------- */

struct pcur {
        struct cursor c;
        bool swap;
};

static inline struct pcur pcur_make(const void *p, size_t n, bool swap) {
        return (struct pcur) { .c = cursor_make(p, n), .swap = swap };
}

static inline int pcur_u16(struct pcur *c, uint16_t *ret) {
        int r = cursor_u16(&c->c, ret);

        if (r >= 0 && c->swap)
                *ret = bswap_16(*ret);
        return r;
}

static inline int pcur_u32(struct pcur *c, uint32_t *ret) {
        int r = cursor_u32(&c->c, ret);

        if (r >= 0 && c->swap)
                *ret = bswap_32(*ret);
        return r;
}

static inline int pcur_u64(struct pcur *c, uint64_t *ret) {
        int r = cursor_u64(&c->c, ret);

        if (r >= 0 && c->swap)
                *ret = bswap_64(*ret);
        return r;
}

/* ---- value trees ------------------------------------------------------ */

struct tree {
        struct perfdata_node *nodes;
        size_t n, cap;
        uint32_t *last;                 /* per node: its last child, for appending */
        size_t last_cap;
        bool oom;                       /* a node could not be added: the tree is incomplete */
};

void tree_reset(struct tree *t);
void tree_done(struct tree *t);
/* Adds a node under PARENT (an object or array index); returns its index,
 * or 0 when out of memory (t->oom is then set, and adding under 0 is
 * harmless). The first call makes the root (index 0, an object). */
uint32_t tree_add(struct tree *t, uint32_t parent, const char *key, enum perfdata_node_kind kind);
void tree_u64(struct tree *t, uint32_t parent, const char *key, uint64_t v);
void tree_s64(struct tree *t, uint32_t parent, const char *key, int64_t v);
void tree_hex(struct tree *t, uint32_t parent, const char *key, uint64_t v);
void tree_bool(struct tree *t, uint32_t parent, const char *key, bool v);
void tree_double(struct tree *t, uint32_t parent, const char *key, double v);
/* A string of at most LEN bytes, ending at the first NUL (perf pads). */
void tree_str(struct tree *t, uint32_t parent, const char *key, const void *p, size_t len);
void tree_bytes(struct tree *t, uint32_t parent, const char *key, const void *p, size_t len);
struct perfdata_tree tree_get(const struct tree *t);

/* perf's string: u32 len, then len bytes, NUL-padded. */
int pcur_perf_string(struct pcur *c, const char **ret, size_t *ret_len);

/* ---- perfdata-swap.c: the other byte order --------------------------- */

/* perf_event_attr as stored, SIZE bytes, to this machine's order
 * (session.c perf_event__attr_swap: every field, and each byte of the
 * flag bitfields bit-reversed, as a big-endian compiler allocates
 * bitfields from the top). */
void swap_attr(void *attr, size_t size);
/* Record HEADER (type, misc, size already swapped) and its body, in
 * place. ATTR lays kernel records out (NULL for perf's own); FORMAT, when
 * given, says how to swap a tracepoint's raw data. -EBADMSG when a count
 * in the record runs past it. */
int swap_record(struct perf_event_header *h, const struct perf_event_attr *attr, const struct format *format);
/* A tracepoint's raw data (SIZE bytes) per FORMAT, in place. */
void swap_raw(const struct format *format, uint8_t *raw, size_t size);

/* ---- perfdata-feature.c: feature sections and user records ----------- */

/* Decodes feature FEAT (SIZE bytes at P) into an object added under
 * PARENT with the feature's name as key (or into "unknown_features").
 * -EBADMSG when the section does not parse. */
int feature_decode(struct tree *t, uint32_t parent, unsigned feat, const void *p, size_t size, bool swap);
/* The same, with the number of available CPUs (HEADER_NRCPUS), which
 * HEADER_CPU_TOPOLOGY's per-CPU part needs. */
int feature_decode_nrcpus(struct tree *t, uint32_t parent, unsigned feat, const void *p, size_t size,
                          bool swap, uint32_t nr_cpus);
const char *feature_name(unsigned feat);
/* perf's own record H (its header in host order, the body in the file's
 * order: SWAP) into T. */
int user_record_decode(struct tree *t, const struct perf_event_header *h, bool swap);
/* A perf_event_attr (host order, SIZE bytes valid) under PARENT. */
void attr_decode(struct tree *t, uint32_t parent, const struct perf_event_attr *a);
/* cpu map data (perf_record_cpu_map_data) as an array of CPU numbers. */
int cpu_map_decode(struct tree *t, uint32_t parent, const char *key, struct pcur *c);
