/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Private to src/monitor/perfdata*.c: the reader's state, the byte-order
 * aware cursor, the value-tree builder. */

#include <byteswap.h>
#include <zstd.h>

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

/* Fields of a record or of one element of a list, in file order. */
enum field_kind_pd { F_U32, F_S32, F_U64, F_S64, F_HEX64, F_STR };

struct field_spec {
        const char *key;
        enum field_kind_pd kind;
};

/* perfdata-values.c: a value read from C into the tree under PARENT as KEY;
 * counts checked against the bytes left (MIN bytes an element). */
int put_string(struct tree *t, uint32_t parent, const char *key, struct pcur *c);
int put_u32(struct tree *t, uint32_t parent, const char *key, struct pcur *c);
int put_s32(struct tree *t, uint32_t parent, const char *key, struct pcur *c);
int put_hex64(struct tree *t, uint32_t parent, const char *key, struct pcur *c);
int put_u64(struct tree *t, uint32_t parent, const char *key, struct pcur *c);
int get_count32(struct pcur *c, size_t min, uint32_t *ret);
int get_count64(struct pcur *c, size_t min, uint64_t *ret);
int put_string_list(struct tree *t, uint32_t parent, const char *key, struct pcur *c);
int put_fields(struct tree *t, uint32_t o, struct pcur *c, const struct field_spec *f, size_t n);
int put_list(struct tree *t, uint32_t parent, const char *key, struct pcur *c, size_t min,
             const struct field_spec *f, size_t n);

/* ---- the reader's state, shared by perfdata*.c ------------------------ */

/* "PERFILE2" as perf writes it: a native-order u64 (util/header.c
 * __perf_magic2), so the other byte order reads as its byte swap. */
#define MAGIC2 0x32454c4946524550ULL
#define MAGIC1 "PERFFILE"

struct file_section {
        uint64_t offset, size;
};

struct file_header {
        uint64_t magic;
        uint64_t size;                  /* of this header */
        uint64_t attr_size;             /* of one attrs entry: attr + ids section */
        struct file_section attrs, data, event_types;
        uint64_t features[PERFDATA_FEAT_MAX / 64];
};

/* Pipe mode starts with { magic, size = 16 } and sends the rest in-band. */
#define PIPE_HEADER_SIZE 16

#define ID_BITS (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | \
                 PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

/* A record's size is a u16. */
#define BOUNCE_SIZE 65536

/* What one compressed record may expand to: perf compresses at most one
 * mmap's worth (HEADER_COMPRESSED mmap_len) into a record; anything that
 * expands past this is damage, not data. */
#define DECOMP_MAX (256u << 20)

/* The time-order queue copies records that cannot stay in place into
 * chunks; past QUEUE_MAX_CHUNKS, half the queue is flushed (as perf does
 * past its ordered-events memory limit, OE_FLUSH__HALF). */
#define CHUNK_SIZE (1u << 20)
#define QUEUE_MAX_CHUNKS 256

/* perf record --threads writes a directory: "data", a perf.data file whose
 * header has HEADER_DIR_FORMAT, and one data.N file of bare records per
 * writer thread. perf reads them in turn, 2 MiB from each
 * (util/session.c __perf_session__process_dir_events, READER_MAX_SIZE),
 * into one ordered-events queue. */
#define PERFDATA_FEAT_DIR_FORMAT 24
#define DIR_READER_MAX_SIZE (2u << 20)
#define DIR_MAX_FILES 4096

/* A stream: read() at most this much at a time; a record with its extra
 * payload (AUXTRACE, tracing data) larger than STREAM_RECORD_MAX, or a
 * header (the records before the first kernel record) larger than
 * STREAM_HEADER_MAX, is damage, not data. */
#define STREAM_READ (64u << 10)
#define STREAM_RECORD_MAX (64u << 20)
#define STREAM_HEADER_MAX (64u << 20)
/* A stream idle this long after a FINISHED_ROUND gives out what waits in
 * the time-order queue: perf writes a round at once, and the next one
 * may be minutes away (a live perf record waits for events). */
#define STREAM_IDLE_MS 200


struct id_entry {
        uint64_t id;
        size_t event;                   /* index + 1; 0: an empty slot */
};

struct chunk {
        uint8_t *mem;
        size_t used, refs;
};

/* A queued record: where its bytes are, and what parsing them gave. */
struct slot {
        struct perfdata_record pr;
        int chunk;                      /* -1: in place in the file */
};

struct pending {
        uint64_t time, seq;
        uint32_t slot;
};

/* One record as found, in host order and 8-byte aligned. */
struct raw {
        const struct perf_event_header *h;
        uint64_t offset;
        bool compressed;
        bool stable;                    /* in place in the file: valid while pd lives */
        const struct perfdata_event *layout;    /* whose attr lays it out; NULL: not parsed */
};

/* A file of records: the data section of the perf.data file, or one
 * data.N file of a --threads directory (read whole, from byte 0). */
struct source {
        const uint8_t *base;
        uint64_t start, end, pos;
        bool truncated, done;
        void *map;                      /* owned (data.N) */
        size_t map_size;
        unsigned n;                     /* data.N */
        /* Each writer thread compresses with a context of its own: one
         * zstd stream per file (perf: a decompressor per reader). Owned
         * here while another source is read, by pd->zstd while this one is. */
        ZSTD_DStream *zstd;
};

struct perfdata {
        const uint8_t *base;
        size_t size;
        void *map;                      /* owned mapping (perfdata_open) */
        size_t map_size;
        void *buf;                      /* owned copy of what could not be mapped */
        bool swap, pipe;

        struct perfdata_event **events;
        size_t n_events;
        struct id_entry *ids;           /* a hash table of ids_cap slots (a power of 2) */
        size_t n_ids, ids_cap;
        uint64_t id_seed;
        struct format **formats;        /* owned; events point at them */
        size_t n_formats;
        size_t n_bad_formats;

        int sample_id_pos;              /* u64 index of the id in a sample body, -1: none */
        int trailer_id_pos;             /* u64 index back from the end of other records (1: last) */
        bool trailer_uniform;           /* every attr lays the sample_id trailer out alike */
        bool layout_bad;                /* the attrs disagree on where ids are */

        uint64_t features[PERFDATA_FEAT_MAX / 64];
        struct { const uint8_t *p; size_t size; } feat[PERFDATA_FEAT_MAX];
        uint64_t feature_damage;
        bool has_clock;
        struct perfdata_clock clock;
        struct tree header;
        uint64_t data_offset, data_size;

        /* reading: pos and data_end are those of the source being read,
         * rbase its bytes from offset rbase_off on */
        const uint8_t *rbase;
        uint64_t rbase_off;
        uint64_t data_start, data_end, pos;
        struct source *srcs;            /* [0] the data section, then the data.N files; NULL: just it */
        size_t n_srcs, cur_src;
        uint64_t src_bytes;             /* read from the current source since it became current */
        uint64_t *bounce;
        struct tree user;
        int error;                      /* what stopped the reading, sticky */
        uint64_t error_offset;
        bool at_end;
        bool truncated;                 /* the data section runs past the end of the file */

        /* zstd: one stream across all COMPRESSED records (perf compresses
         * with one context and flushes, util/zstd.c) */
        ZSTD_DStream *zstd;
        uint8_t *dbuf;
        size_t dcap, dlen, dpos;
        uint64_t doff;                  /* the COMPRESSED record being expanded */

        /* ordering */
        enum perfdata_order order;
        struct chunk *chunks;
        size_t n_chunks;
        int cur_chunk;
        struct slot *slots;
        size_t n_slots, cap_slots;
        uint32_t *free_slots;
        size_t n_free;
        struct pending *pend;
        size_t n_pend, cap_pend, pend_head;
        uint64_t seq, max_time, next_flush, flush_limit;
        bool flushing;
        bool held;                      /* a FINISHED_ROUND waits for the flush it caused */
        struct perfdata_record held_pr;

        /* a stream (pipe mode on a pipe): bytes [win_off, win_off +
         * win_len) of it in win */
        bool stream, in_eof, round_seen;
        bool win_hold;                  /* keep what is before pos (the header is read) */
        int in_fd;
        bool in_fd_owned;
        uint8_t *win;
        size_t win_len, win_cap;
        uint64_t win_off;
        perfdata_wait_t wait;
        void *wait_userdata;
};

static inline bool section_ok(const struct perfdata *pd, const struct file_section *s) {
        return s->offset <= pd->size && s->size <= pd->size - s->offset;
}

static inline uint64_t load_u64(const uint8_t *p) {
        uint64_t v;

        memcpy(&v, p, sizeof(v));
        return v;
}

static inline uint64_t file_u64(const struct perfdata *pd, const uint8_t *p) {
        uint64_t v = load_u64(p);

        return pd->swap ? bswap_64(v) : v;
}

/* Stops the reading with error R at OFFSET (sticky); returns R. */
static inline int pd_fail(struct perfdata *pd, int r, uint64_t offset) {
        pd->error = r;
        pd->error_offset = offset;
        return r;
}

static inline void read_header(const struct perfdata *pd, const uint8_t *p, struct perf_event_header *h) {
        memcpy(h, p, sizeof(*h));
        if (pd->swap) {
                h->type = bswap_32(h->type);
                h->misc = bswap_16(h->misc);
                h->size = bswap_16(h->size);
        }
}

/* perfdata.c */
int stream_open(struct perfdata *pd, int fd);

/* perfdata-header.c */
struct perfdata_event *event_by_id(const struct perfdata *pd, uint64_t id);
int add_event(struct perfdata *pd, const struct perf_event_attr *attr, const uint8_t *ids, size_t n_ids);
int read_attr(const struct perfdata *pd, const uint8_t *p, size_t room, struct perf_event_attr *ret);
void setup_id_positions(struct perfdata *pd);
int read_attrs(struct perfdata *pd, const struct file_header *h);
int read_feature_table(struct perfdata *pd, const struct file_header *h);
int read_tracing_data(struct perfdata *pd, const uint8_t *p, size_t size);
int use_features(struct perfdata *pd);
int build_header(struct perfdata *pd);

/* perfdata-read.c */
int record_payload(const struct perfdata *pd, const struct perf_event_header *h, const uint8_t *p,
                   uint64_t *ret);
bool stream_ready(struct perfdata *pd, int timeout_ms);
int stream_want(struct perfdata *pd, uint64_t need);
int stream_record(struct perfdata *pd);
int read_one(struct perfdata *pd, struct perfdata_record *ret, struct raw *raw);
int parse_record(struct perfdata *pd, struct perfdata_record *pr, const struct perfdata_event *layout);

/* perfdata-order.c */
void queue_clear(struct perfdata *pd);

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

/* ---- perfdata-feature.c: feature sections; perfdata-user.c: perf's records */

/* Decodes feature FEAT (SIZE bytes at P) into an object added under
 * PARENT with the feature's name as key (or into "unknown_features").
 * -EBADMSG when the section does not parse. */
int feature_decode(struct tree *t, uint32_t parent, unsigned feat, const void *p, size_t size, bool swap);
/* The same, with the number of available CPUs (HEADER_NRCPUS), which
 * HEADER_CPU_TOPOLOGY's per-CPU part needs. */
int feature_decode_nrcpus(struct tree *t, uint32_t parent, unsigned feat, const void *p, size_t size,
                          bool swap, uint32_t nr_cpus);
const char *feature_name(unsigned feat);
/* An attr of SIZE stored bytes at P into a host-order, zero-extended copy. */
int attr_read(const void *p, size_t size, bool swap, struct perf_event_attr *ret);
/* A build_id_event's body (BODY bytes of C, MISC its header's) under PARENT. */
int build_id_decode(struct tree *t, uint32_t parent, struct pcur *c, uint16_t misc, size_t body);
/* perf's own record H (its header in host order, the body in the file's
 * order: SWAP) into T. */
int user_record_decode(struct tree *t, const struct perf_event_header *h, bool swap);
/* A perf_event_attr (host order, SIZE bytes valid) under PARENT. */
void attr_decode(struct tree *t, uint32_t parent, const struct perf_event_attr *a);
/* cpu map data (perf_record_cpu_map_data) as an array of CPU numbers. */
int cpu_map_decode(struct tree *t, uint32_t parent, const char *key, struct pcur *c);
