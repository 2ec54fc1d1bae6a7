/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* perf.data as `perf record` writes it. Layout
 * (tools/perf/Documentation/perf.data-file-format.txt, util/header.c):
 *
 *   file mode: struct perf_file_header   magic "PERFILE2", sections, feature bitmap
 *              attrs section             { struct perf_event_attr; section of u64 ids }[]
 *              data section              the records, as the kernel and perf wrote them
 *              feature table             one section per set feature bit, after the data
 *   pipe mode: { magic, size = 16 }, then records only: the attrs come as
 *              HEADER_ATTR, the tracing data as HEADER_TRACING_DATA, the
 *              features as HEADER_FEATURE records (util/header.c
 *              perf_event__synthesize_*).
 *
 * Everything is read in place from the mapped (or read) file through
 * bounds-checked cursors; a record is copied only when it is not 8-byte
 * aligned, must be byte-swapped, or waits in the time-order queue after
 * coming out of a compressed record.
 *
 * A pipe-mode stream that cannot be mapped (perf record -o - | ...) is
 * read as it arrives: the records up to the first kernel record (attrs,
 * tracing data, features) make the header, the rest goes through a window
 * that holds the record being read and what read() brought after it; a
 * record waiting in the time-order queue is copied out of it. Memory is
 * the header, the largest record and the time-order queue, not the
 * input. */

#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "evmon/io.h"
#include "perfdata-int.h"

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

/* trace-cmd's tracing data (util/trace-event-info.c). */
static const char tracing_magic[] = { 0x17, 0x08, 'D', 't', 'r', 'a', 'c', 'i', 'n', 'g' };

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

/* A NUL-terminated string that ends inside the cursor. */
static int cursor_cstr(struct cursor *c, const char **ret) {
        const uint8_t *nul = memchr(c->p, 0, cursor_left(c));

        if (!nul)
                return -EBADMSG;
        *ret = (const char *) c->p;
        c->p = nul + 1;
        return 0;
}

static bool section_ok(const struct perfdata *pd, const struct file_section *s) {
        return s->offset <= pd->size && s->size <= pd->size - s->offset;
}

static uint64_t load_u64(const uint8_t *p) {
        uint64_t v;

        memcpy(&v, p, sizeof(v));
        return v;
}

static uint64_t file_u64(const struct perfdata *pd, const uint8_t *p) {
        uint64_t v = load_u64(p);

        return pd->swap ? bswap_64(v) : v;
}

bool perfdata_has_feature(const struct perfdata *pd, unsigned feature) {
        if (!pd || feature >= PERFDATA_FEAT_MAX)
                return false;
        return pd->features[feature / 64] & (1ULL << (feature % 64));
}

static void set_feature(struct perfdata *pd, unsigned feature) {
        pd->features[feature / 64] |= 1ULL << (feature % 64);
}

const char *perfdata_unsupported(const void *head, size_t size) {
        const uint8_t *h = head;

        if (size >= 8 && memcmp(head, MAGIC1, 8) == 0)
                return "the old perf.data layout (\"PERFFILE\"); record it again with a newer perf";
        /* HEADER_DIR_FORMAT in struct perf_file_header's feature bitmap
         * (bit 24 of the u64 at byte 72), in either byte order. */
        if (size >= sizeof(struct file_header) && (load_u64(h) == MAGIC2 || load_u64(h) == bswap_64(MAGIC2))) {
                uint64_t w = load_u64(h + offsetof(struct file_header, features));

                if (load_u64(h) != MAGIC2)
                        w = bswap_64(w);
                if (w & (1ULL << PERFDATA_FEAT_DIR_FORMAT))
                        return "a perf record --threads header file read from standard input (its samples "
                               "are in the data.N files beside it: name the directory or its data file)";
        }
        return NULL;
}

int perfdata_order_from_string(const char *s) {
        if (!s)
                return -EINVAL;
        if (strcmp(s, "file") == 0)
                return PERFDATA_ORDER_FILE;
        if (strcmp(s, "causal") == 0)
                return PERFDATA_ORDER_CAUSAL;
        if (strcmp(s, "time") == 0)
                return PERFDATA_ORDER_TIME;
        return -EINVAL;
}

/* ---- events and sample ids ------------------------------------------- */

/* Where perf finds a record's id (util/evsel.c __evsel__calc_id_pos and
 * __evsel__calc_is_pos): IDENTIFIER is always first in a sample and last
 * in the trailer; ID sits after the fields before it. */
static int calc_sample_id_pos(uint64_t t) {
        if (t & PERF_SAMPLE_IDENTIFIER)
                return 0;
        if (!(t & PERF_SAMPLE_ID))
                return -1;
        return __builtin_popcountll(t & (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR));
}

static int calc_trailer_id_pos(uint64_t t) {
        if (t & PERF_SAMPLE_IDENTIFIER)
                return 1;
        if (!(t & PERF_SAMPLE_ID))
                return -1;
        return 1 + __builtin_popcountll(t & (PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU));
}

/* Ids to events in a hash table: the file says how many attrs and ids
 * there are (a pipe header of 64 MiB holds ~466,000 attrs), and a sorted
 * array sorted again for each attr took 37 s for 32,000. The ids are the
 * file's to choose, so the hash is seeded per process (AT_RANDOM) and a
 * file cannot aim its ids at one chain. */
static uint64_t id_hash(const struct perfdata *pd, uint64_t id) {
        uint64_t z = id ^ pd->id_seed;

        /* splitmix64's finalizer */
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
}

static struct id_entry *id_slot(const struct perfdata *pd, struct id_entry *ids, size_t cap, uint64_t id) {
        for (size_t i = id_hash(pd, id) & (cap - 1);; i = (i + 1) & (cap - 1))
                if (!ids[i].event || ids[i].id == id)
                        return &ids[i];
}

static int id_add(struct perfdata *pd, uint64_t id, size_t event) {
        struct id_entry *e;

        /* At most half full: a probe stays short. */
        if (2 * (pd->n_ids + 1) > pd->ids_cap) {
                size_t cap = pd->ids_cap ? 2 * pd->ids_cap : 64;
                struct id_entry *ids;

                if (cap > SIZE_MAX / sizeof(*ids))
                        return -ENOMEM;
                ids = calloc(cap, sizeof(*ids));
                if (!ids)
                        return -ENOMEM;
                if (pd->ids_cap == 0) {
                        const uint8_t *rnd = (const uint8_t *) getauxval(AT_RANDOM);

                        if (rnd)
                                memcpy(&pd->id_seed, rnd + 8, sizeof(pd->id_seed));
                }
                for (size_t i = 0; i < pd->ids_cap; i++)
                        if (pd->ids[i].event)
                                *id_slot(pd, ids, cap, pd->ids[i].id) = pd->ids[i];
                free(pd->ids);
                pd->ids = ids;
                pd->ids_cap = cap;
        }
        e = id_slot(pd, pd->ids, pd->ids_cap, id);
        if (e->event)
                /* Twice in one attr is harmless; in two, no sample of it
                 * can be told apart. */
                return e->event == event + 1 ? 0 : -EBADMSG;
        *e = (struct id_entry) { .id = id, .event = event + 1 };
        pd->n_ids++;
        return 0;
}

static struct perfdata_event *event_by_id(const struct perfdata *pd, uint64_t id) {
        const struct id_entry *e;

        if (pd->n_ids == 0)
                return NULL;
        e = id_slot(pd, pd->ids, pd->ids_cap, id);
        return e->event ? pd->events[e->event - 1] : NULL;
}

/* Adds an event with ATTR (host order) and N_IDS ids at IDS (file order). */
static int add_event(struct perfdata *pd, const struct perf_event_attr *attr, const uint8_t *ids, size_t n_ids) {
        struct perfdata_event **a, *ev;
        int r;

        a = realloc(pd->events, (pd->n_events + 1) * sizeof(*a));
        if (!a)
                return -ENOMEM;
        pd->events = a;
        ev = calloc(1, sizeof(*ev));
        if (!ev)
                return -ENOMEM;
        pd->events[pd->n_events++] = ev;
        ev->attr = *attr;
        ev->attr.size = sizeof(ev->attr);
        if (n_ids > 0) {
                ev->ids = malloc(n_ids * sizeof(*ev->ids));
                if (!ev->ids)
                        return -ENOMEM;
                for (size_t i = 0; i < n_ids; i++)
                        ev->ids[i] = file_u64(pd, ids + 8 * i);
                ev->n_ids = n_ids;
        }

        for (size_t i = 0; i < n_ids; i++) {
                r = id_add(pd, ev->ids[i], pd->n_events - 1);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* An attr of SIZE bytes as stored to a host-order, zero-extended copy. */
static int read_attr(const struct perfdata *pd, const uint8_t *p, size_t room, struct perf_event_attr *ret) {
        uint8_t buf[sizeof(*ret)] = {};
        uint32_t asz;

        if (room < PERF_ATTR_SIZE_VER0)
                return -EBADMSG;
        /* The attr's own size says how much of it this writer knew; 0 is
         * the first ABI. Beyond our struct: fields we cannot use, and none
         * of them changes the record layout. */
        memcpy(&asz, p + offsetof(struct perf_event_attr, size), sizeof(asz));
        if (pd->swap)
                asz = bswap_32(asz);
        if (asz == 0)
                asz = PERF_ATTR_SIZE_VER0;
        if (asz < PERF_ATTR_SIZE_VER0 || asz > room)
                return -EBADMSG;
        memcpy(buf, p, asz < sizeof(buf) ? asz : sizeof(buf));
        if (pd->swap)
                swap_attr(buf, asz < sizeof(buf) ? asz : sizeof(buf));
        memcpy(ret, buf, sizeof(*ret));
        return 0;
}

/* Several events share one data section: each record must say whose it is,
 * and all must say it at the same place (perf refuses other files too). */
static void setup_id_positions(struct perfdata *pd) {
        const struct perf_event_attr *a0;

        pd->layout_bad = false;
        pd->sample_id_pos = pd->trailer_id_pos = -1;
        pd->trailer_uniform = true;
        if (pd->n_events == 0)
                return;
        a0 = &pd->events[0]->attr;
        pd->sample_id_pos = calc_sample_id_pos(a0->sample_type);
        pd->trailer_id_pos = a0->sample_id_all ? calc_trailer_id_pos(a0->sample_type) : -1;

        for (size_t i = 1; i < pd->n_events; i++) {
                const struct perf_event_attr *a = &pd->events[i]->attr;

                if ((a->sample_type & ID_BITS) != (a0->sample_type & ID_BITS))
                        pd->trailer_uniform = false;
                if (a->sample_id_all != a0->sample_id_all ||
                    calc_sample_id_pos(a->sample_type) != pd->sample_id_pos ||
                    (a->sample_id_all && calc_trailer_id_pos(a->sample_type) != pd->trailer_id_pos))
                        pd->layout_bad = true;
        }
        if (pd->n_events > 1 && pd->sample_id_pos < 0)
                pd->layout_bad = true;
}

/* ---- header, attrs, features ----------------------------------------- */

static int read_attrs(struct perfdata *pd, const struct file_header *h) {
        size_t n;

        if (!section_ok(pd, &h->attrs))
                return -EBADMSG;
        if (h->attr_size < PERF_ATTR_SIZE_VER0 + sizeof(struct file_section) || h->attr_size % 8 != 0)
                return -EBADMSG;
        if (h->attrs.size % h->attr_size != 0)
                return -EBADMSG;
        n = h->attrs.size / h->attr_size;
        if (n == 0)
                return -EBADMSG;

        for (size_t i = 0; i < n; i++) {
                const uint8_t *entry = pd->base + h->attrs.offset + i * h->attr_size;
                size_t room = h->attr_size - sizeof(struct file_section);
                struct perf_event_attr attr;
                struct file_section ids;
                int r;

                r = read_attr(pd, entry, room, &attr);
                if (r < 0)
                        return r;
                ids.offset = file_u64(pd, entry + room);
                ids.size = file_u64(pd, entry + room + 8);
                if (!section_ok(pd, &ids) || ids.size % 8 != 0)
                        return -EBADMSG;
                r = add_event(pd, &attr, pd->base + ids.offset, ids.size / 8);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The feature sections follow the data, one per set bit, in bit order. A
 * section out of bounds is dropped (and remembered), not fatal: the
 * records are still there. */
static int read_feature_table(struct perfdata *pd, const struct file_header *h) {
        struct file_section table = { .offset = h->data.offset + h->data.size };
        unsigned n = 0;
        struct pcur c;

        for (unsigned b = 0; b < PERFDATA_FEAT_MAX; b++)
                if (perfdata_has_feature(pd, b))
                        n++;
        table.size = (uint64_t) n * sizeof(struct file_section);
        if (!section_ok(pd, &table)) {
                pd->feature_damage = table.offset;
                memset(pd->features, 0, sizeof(pd->features));
                return 0;
        }
        c = pcur_make(pd->base + table.offset, table.size, pd->swap);
        for (unsigned b = 0; b < PERFDATA_FEAT_MAX; b++) {
                struct file_section s;

                if (!perfdata_has_feature(pd, b))
                        continue;
                if (pcur_u64(&c, &s.offset) < 0 || pcur_u64(&c, &s.size) < 0)
                        return -EBADMSG;
                if (!section_ok(pd, &s)) {
                        if (!pd->feature_damage)
                                pd->feature_damage = table.offset + 16 * (uint64_t) b;
                        pd->features[b / 64] &= ~(1ULL << (b % 64));
                        continue;
                }
                pd->feat[b].p = pd->base + s.offset;
                pd->feat[b].size = s.size;
        }
        return 0;
}

/* HEADER_TRACING_DATA: trace-cmd's tracing data, of which we want the
 * event format texts (util/trace-event-info.c writes, -read.c reads):
 *   magic, version "0.6\0", u8 big_endian, u8 long_size, u32 page_size,
 *   "header_page\0" u64 size + text, "header_event\0" u64 size + text,
 *   u32 n ftrace formats { u64 size + text },
 *   u32 n systems { "system\0" u32 n { u64 size + format text } },
 *   then kallsyms, printk formats and saved cmdlines, which we skip.
 * Its numbers are in the recording machine's order, which big_endian
 * says. */
static int add_format(struct perfdata *pd, const char *system, const void *text, uint64_t size) {
        _cleanup_(freep) char *copy = NULL;
        struct format **a, *f = NULL;
        int r;

        copy = strndup(text, size);
        if (!copy)
                return -ENOMEM;
        r = format_parse(copy, system, &f);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                pd->n_bad_formats++;
                return 0;
        }
        a = realloc(pd->formats, (pd->n_formats + 1) * sizeof(*a));
        if (!a) {
                format_free(f);
                return -ENOMEM;
        }
        pd->formats = a;
        pd->formats[pd->n_formats++] = f;
        return 0;
}

static int skip_named_text(struct pcur *c, const char *name) {
        const char *s;
        uint64_t n;
        int r;

        r = cursor_cstr(&c->c, &s);
        if (r < 0)
                return r;
        if (strcmp(s, name) != 0)
                return -EBADMSG;
        r = pcur_u64(c, &n);
        if (r < 0)
                return r;
        return cursor_take(&c->c, n, NULL);
}

static int read_tracing_data(struct perfdata *pd, const uint8_t *p, size_t size) {
        struct pcur c = pcur_make(p, size, false);
        const char *version;
        const void *magic;
        uint8_t big_endian, long_size;
        uint32_t page_size, n;
        int r;

        r = cursor_take(&c.c, sizeof(tracing_magic), &magic);
        if (r < 0)
                return r;
        if (memcmp(magic, tracing_magic, sizeof(tracing_magic)) != 0)
                return -EBADMSG;
        r = cursor_cstr(&c.c, &version);
        if (r >= 0)
                r = cursor_u8(&c.c, &big_endian);
        if (r >= 0)
                r = cursor_u8(&c.c, &long_size);
        if (r < 0)
                return r;
        c.swap = !!big_endian != (__BYTE_ORDER == __BIG_ENDIAN);
        r = pcur_u32(&c, &page_size);
        if (r >= 0)
                r = skip_named_text(&c, "header_page");
        if (r >= 0)
                r = skip_named_text(&c, "header_event");
        if (r >= 0)
                r = pcur_u32(&c, &n);
        if (r < 0)
                return r;
        for (uint32_t i = 0; i < n; i++) {
                uint64_t sz;

                r = pcur_u64(&c, &sz);
                if (r >= 0)
                        r = cursor_take(&c.c, sz, NULL);
                if (r < 0)
                        return r;
        }

        r = pcur_u32(&c, &n);
        if (r < 0)
                return r;
        for (uint32_t i = 0; i < n; i++) {
                const char *system;
                uint32_t m;

                r = cursor_cstr(&c.c, &system);
                if (r >= 0)
                        r = pcur_u32(&c, &m);
                if (r < 0)
                        return r;
                for (uint32_t k = 0; k < m; k++) {
                        const void *text;
                        uint64_t sz;

                        r = pcur_u64(&c, &sz);
                        if (r >= 0)
                                r = cursor_take(&c.c, sz, &text);
                        if (r >= 0)
                                r = add_format(pd, system, text, sz);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

/* HEADER_EVENT_DESC: u32 nr, u32 attr_size, then per event the attr,
 * u32 nr_ids, a perf string (u32 len, len bytes NUL-padded) and the ids. */
static int read_event_desc(struct perfdata *pd) {
        struct pcur c = pcur_make(pd->feat[PERFDATA_FEAT_EVENT_DESC].p, pd->feat[PERFDATA_FEAT_EVENT_DESC].size,
                                  pd->swap);
        uint32_t nr, attr_size;
        int r;

        r = pcur_u32(&c, &nr);
        if (r >= 0)
                r = pcur_u32(&c, &attr_size);
        if (r < 0)
                return r;
        for (uint32_t i = 0; i < nr; i++) {
                struct perfdata_event *ev = NULL;
                const void *ids;
                const char *name;
                uint32_t nr_ids;
                size_t len;

                r = cursor_take(&c.c, attr_size, NULL);
                if (r >= 0)
                        r = pcur_u32(&c, &nr_ids);
                if (r >= 0)
                        r = pcur_perf_string(&c, &name, &len);
                if (r >= 0)
                        r = cursor_take_array(&c.c, nr_ids, 8, &ids);
                if (r < 0)
                        return r;
                if (len == 0 || !memchr(name, 0, len))
                        return -EBADMSG;

                /* Whose: by its first id, else by position (both are
                 * written in the order of the attrs). */
                if (nr_ids > 0)
                        ev = event_by_id(pd, file_u64(pd, ids));
                if (!ev && nr == pd->n_events)
                        ev = pd->events[i];
                if (!ev || ev->name)
                        continue;
                ev->name = strdup(name);
                if (!ev->name)
                        return -ENOMEM;
        }
        return 0;
}

/* HEADER_CLOCK_DATA: u32 version (1), u32 clockid, u64 wall-clock ns,
 * u64 clockid ns, taken together (util/header.c write_clock_data). */
static int read_clock_data(struct perfdata *pd) {
        struct pcur c = pcur_make(pd->feat[PERFDATA_FEAT_CLOCK_DATA].p, pd->feat[PERFDATA_FEAT_CLOCK_DATA].size,
                                  pd->swap);
        uint32_t version, clockid;
        int r;

        r = pcur_u32(&c, &version);
        if (r >= 0)
                r = pcur_u32(&c, &clockid);
        if (r >= 0)
                r = pcur_u64(&c, &pd->clock.wall_ns);
        if (r >= 0)
                r = pcur_u64(&c, &pd->clock.clock_ns);
        if (r < 0)
                return r;
        if (version < 1)
                return -EBADMSG;
        pd->clock.clockid = (clockid_t) clockid;
        pd->has_clock = true;
        return 0;
}

struct format_ref {
        uint64_t id;
        size_t k;               /* index in pd->formats: the first wins */
};

static int format_ref_cmp(const void *a, const void *b) {
        const struct format_ref *x = a, *y = b;

        if (x->id != y->id)
                return x->id < y->id ? -1 : 1;
        return x->k < y->k ? -1 : x->k > y->k;
}

/* Tracepoint attrs carry the tracepoint id as config: the format with that
 * ID names and decodes the event (the first, where the tracing data has
 * two). Found in the formats sorted by id: the file says how many attrs
 * and formats there are, and each attr looking through every format took
 * 8.4 s for 30,000 of each (about 9 minutes for the 64 MiB a pipe header
 * may hold). */
static int name_events(struct perfdata *pd) {
        _cleanup_(freep) struct format_ref *refs = NULL;

        if (pd->n_formats == 0)
                return 0;
        refs = calloc(pd->n_formats, sizeof(*refs));
        if (!refs)
                return -ENOMEM;
        for (size_t k = 0; k < pd->n_formats; k++)
                refs[k] = (struct format_ref) { .id = pd->formats[k]->id, .k = k };
        qsort(refs, pd->n_formats, sizeof(*refs), format_ref_cmp);
        for (size_t i = 0; i < pd->n_events; i++) {
                struct perfdata_event *ev = pd->events[i];
                size_t lo = 0, hi = pd->n_formats;
                struct format *f;

                if (ev->attr.type != PERF_TYPE_TRACEPOINT)
                        continue;
                /* The first ref with that id. */
                while (lo < hi) {
                        size_t mid = lo + (hi - lo) / 2;

                        if (refs[mid].id < ev->attr.config)
                                lo = mid + 1;
                        else
                                hi = mid;
                }
                if (lo == pd->n_formats || refs[lo].id != ev->attr.config)
                        continue;
                f = pd->formats[refs[lo].k];
                ev->format = f;
                free(ev->name);
                if (asprintf(&ev->name, "%s:%s", f->system, f->name) < 0) {
                        ev->name = NULL;
                        return -ENOMEM;
                }
        }
        return 0;
}

/* A feature whose section does not parse is left out of what we use and
 * marked in the header; the records are still read. */
static void feature_bad(struct perfdata *pd, unsigned b) {
        if (!pd->feature_damage)
                pd->feature_damage = pd->feat[b].p ? (uint64_t) (pd->feat[b].p - pd->base) : 1;
}

static int use_features(struct perfdata *pd) {
        int r;

        if (perfdata_has_feature(pd, PERFDATA_FEAT_EVENT_DESC)) {
                r = read_event_desc(pd);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        feature_bad(pd, PERFDATA_FEAT_EVENT_DESC);
        }
        if (perfdata_has_feature(pd, PERFDATA_FEAT_TRACING_DATA) && pd->feat[PERFDATA_FEAT_TRACING_DATA].p) {
                r = read_tracing_data(pd, pd->feat[PERFDATA_FEAT_TRACING_DATA].p,
                                      pd->feat[PERFDATA_FEAT_TRACING_DATA].size);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        feature_bad(pd, PERFDATA_FEAT_TRACING_DATA);
        }
        if (perfdata_has_feature(pd, PERFDATA_FEAT_CLOCK_DATA)) {
                r = read_clock_data(pd);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        feature_bad(pd, PERFDATA_FEAT_CLOCK_DATA);
        }
        return name_events(pd);
}

/* The header line's tree: see perfdata_header(). */
static int build_header(struct perfdata *pd) {
        struct tree *t = &pd->header;
        uint32_t root, feats, unknown = 0, evs;
        uint32_t nr_cpus = 0;

        tree_reset(t);
        root = tree_add(t, 0, NULL, PERFDATA_NODE_OBJECT);
        tree_str(t, root, "byte_order", (__BYTE_ORDER == __BIG_ENDIAN) != pd->swap ? "big" : "little", 6);
        tree_bool(t, root, "pipe", pd->pipe);
        if (!pd->pipe) {
                tree_u64(t, root, "data_offset", pd->data_offset);
                tree_u64(t, root, "data_size", pd->data_size);
        }
        if (perfdata_has_feature(pd, 7) && pd->feat[7].size >= 4) {
                struct pcur c = pcur_make(pd->feat[7].p, pd->feat[7].size, pd->swap);

                (void) pcur_u32(&c, &nr_cpus);
        }
        feats = tree_add(t, root, "features", PERFDATA_NODE_OBJECT);
        for (unsigned b = 1; b < PERFDATA_FEAT_MAX; b++) {
                int r;

                if (!perfdata_has_feature(pd, b))
                        continue;
                if (!feature_name(b)) {
                        uint32_t e;

                        if (!unknown)
                                unknown = tree_add(t, root, "unknown_features", PERFDATA_NODE_ARRAY);
                        e = tree_add(t, unknown, NULL, PERFDATA_NODE_OBJECT);
                        tree_u64(t, e, "id", b);
                        tree_u64(t, e, "size", pd->feat[b].size);
                        continue;
                }
                r = feature_decode_nrcpus(t, feats, b, pd->feat[b].p ? pd->feat[b].p : (const uint8_t *) "",
                                          pd->feat[b].size, pd->swap, nr_cpus);
                if (r < 0 && r != -EOPNOTSUPP)
                        feature_bad(pd, b);
        }
        evs = tree_add(t, root, "events", PERFDATA_NODE_ARRAY);
        for (size_t i = 0; i < pd->n_events; i++) {
                const struct perfdata_event *ev = pd->events[i];
                uint32_t e = tree_add(t, evs, NULL, PERFDATA_NODE_OBJECT), ids;

                if (ev->name)
                        tree_str(t, e, "name", ev->name, strlen(ev->name));
                attr_decode(t, e, &ev->attr);
                ids = tree_add(t, e, "ids", PERFDATA_NODE_ARRAY);
                for (size_t k = 0; k < ev->n_ids; k++)
                        tree_u64(t, ids, NULL, ev->ids[k]);
        }
        return t->oom ? -ENOMEM : 0;
}

/* ---- the stream of records -------------------------------------------- */

/* The extra payload that follows some of perf's records and is not
 * counted in their size: AUXTRACE's trace data (its first u64), the
 * tracing data after HEADER_TRACING_DATA (its u32, already padded to 8). */
static int record_payload(const struct perfdata *pd, const struct perf_event_header *h, const uint8_t *p,
                          uint64_t *ret) {
        *ret = 0;
        if (h->type == PERFDATA_RECORD_AUXTRACE) {
                if (h->size < 16)
                        return -EBADMSG;
                *ret = file_u64(pd, p + 8);
        } else if (h->type == PERFDATA_RECORD_HEADER_TRACING_DATA) {
                uint32_t v;

                if (h->size < 12)
                        return -EBADMSG;
                memcpy(&v, p + 8, 4);
                *ret = pd->swap ? bswap_32(v) : v;
        }
        return 0;
}

static void read_header(const struct perfdata *pd, const uint8_t *p, struct perf_event_header *h) {
        memcpy(h, p, sizeof(*h));
        if (pd->swap) {
                h->type = bswap_32(h->type);
                h->misc = bswap_16(h->misc);
                h->size = bswap_16(h->size);
        }
}

static int fail(struct perfdata *pd, int r, uint64_t offset) {
        pd->error = r;
        pd->error_offset = offset;
        return r;
}

static int decompress(struct perfdata *pd, const uint8_t *src, size_t n) {
        ZSTD_inBuffer in = { .src = src, .size = n };

        if (!pd->zstd) {
                pd->zstd = ZSTD_createDStream();
                if (!pd->zstd)
                        return -ENOMEM;
                ZSTD_initDStream(pd->zstd);
        }
        /* A record may straddle two compressed records (util/session.c
         * keeps the rest of the last one): move it to the front. */
        if (pd->dpos > 0)
                memmove(pd->dbuf, pd->dbuf + pd->dpos, pd->dlen - pd->dpos);
        pd->dlen -= pd->dpos;
        pd->dpos = 0;
        for (;;) {
                ZSTD_outBuffer out;
                size_t ret;

                if (pd->dcap - pd->dlen < BOUNCE_SIZE) {
                        size_t cap = pd->dcap ? pd->dcap * 2 : 4 * BOUNCE_SIZE;
                        uint8_t *b;

                        if (cap > DECOMP_MAX)
                                return -EBADMSG;
                        b = realloc(pd->dbuf, cap);
                        if (!b)
                                return -ENOMEM;
                        pd->dbuf = b;
                        pd->dcap = cap;
                }
                out = (ZSTD_outBuffer) { .dst = pd->dbuf + pd->dlen, .size = pd->dcap - pd->dlen };
                ret = ZSTD_decompressStream(pd->zstd, &out, &in);
                if (ZSTD_isError(ret))
                        return -EBADMSG;
                pd->dlen += out.pos;
                if (in.pos == in.size && out.pos < out.size)
                        return 0;
        }
}

/* Goes on with the next source (after the current one, round) that has
 * records left; DONE: the current one has none. False when none has. */
static bool source_rotate(struct perfdata *pd, bool done) {
        struct source *s = &pd->srcs[pd->cur_src];

        s->pos = pd->pos;
        s->done = s->done || done;
        for (size_t k = 1; k <= pd->n_srcs; k++) {
                size_t i = (pd->cur_src + k) % pd->n_srcs;

                if (pd->srcs[i].done)
                        continue;
                pd->srcs[pd->cur_src].zstd = pd->zstd;
                s = &pd->srcs[i];
                pd->zstd = TAKE_PTR(s->zstd);
                pd->cur_src = i;
                pd->rbase = s->base;
                pd->pos = s->pos;
                pd->data_end = s->end;
                pd->truncated = s->truncated;
                pd->src_bytes = 0;
                return true;
        }
        return false;
}

/* ---- a stream ---------------------------------------------------------- */

/* Whether the stream has bytes to read now (or its end), waiting up to
 * TIMEOUT_MS; the caller's wait hook first, when it would wait. */
static bool stream_ready(struct perfdata *pd, int timeout_ms) {
        struct pollfd pfd = { .fd = pd->in_fd, .events = POLLIN };

        if (pd->in_eof)
                return true;
        if (poll(&pfd, 1, 0) > 0)
                return true;
        if (pd->wait)
                pd->wait(pd->wait_userdata);
        return timeout_ms != 0 && poll(&pfd, 1, timeout_ms) != 0;
}

/* Makes the NEED bytes at pd->pos readable (fewer only at the end of the
 * input), reading no more than is there: a live stream is never waited
 * on for bytes the next record does not need. What is before pd->pos is
 * dropped: nothing points there (records that wait in the queue are
 * copies, pd->stable is false for them). */
static int stream_want(struct perfdata *pd, uint64_t need) {
        while (pd->win_off + pd->win_len - pd->pos < need && !pd->in_eof) {
                size_t drop = pd->win_hold ? 0 : (size_t) (pd->pos - pd->win_off);
                uint64_t want;
                ssize_t n;

                if (drop > 0) {
                        memmove(pd->win, pd->win + drop, pd->win_len - drop);
                        pd->win_len -= drop;
                        pd->win_off = pd->pos;
                }
                /* Room for what is held before pd->pos too (the header
                 * while stream_open() reads it): sized by NEED alone, a
                 * window filled to its end read 0 bytes, taken as the
                 * input's end (a header of 128 KiB and more failed). */
                want = (pd->pos - pd->win_off) + need + STREAM_READ;
                if (pd->win_cap < want) {
                        uint8_t *w;

                        /* Doubling: a file-mode perf.data is read whole. */
                        want = want > 2 * (uint64_t) pd->win_cap ? want : 2 * (uint64_t) pd->win_cap;
                        if (want > SIZE_MAX)
                                return -EFBIG;
                        w = realloc(pd->win, want);

                        if (!w)
                                return -ENOMEM;
                        pd->win = w;
                        pd->win_cap = want;
                }
                /* The caller's wait hook, when read() would wait. */
                (void) stream_ready(pd, 0);
                n = read(pd->in_fd, pd->win + pd->win_len, pd->win_cap - pd->win_len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        pd->in_eof = true;
                pd->win_len += (size_t) n;
        }
        pd->rbase = pd->win;
        pd->rbase_off = pd->win_off;
        pd->data_end = pd->win_off + pd->win_len;
        return 0;
}

/* Makes the whole record at pd->pos readable, its extra payload with it,
 * as far as the input holds it; a header that is no record is left to
 * the reader's checks. */
static int stream_record(struct perfdata *pd) {
        struct perf_event_header h;
        uint64_t extra;
        int r;

        r = stream_want(pd, sizeof(h));
        if (r < 0 || pd->data_end - pd->pos < sizeof(h))
                return r;
        read_header(pd, pd->win + (pd->pos - pd->win_off), &h);
        if (h.size < sizeof(h))
                return 0;
        r = stream_want(pd, h.size);
        if (r < 0 || pd->data_end - pd->pos < h.size)
                return r;
        if (record_payload(pd, &h, pd->win + (pd->pos - pd->win_off), &extra) < 0 ||
            extra > STREAM_RECORD_MAX - h.size)
                return 0;
        return extra > 0 ? stream_want(pd, h.size + extra) : 0;
}

/* The next record in file order, COMPRESSED ones expanded; in a --threads
 * directory, from each file in turn as perf reads them. */
static int raw_next(struct perfdata *pd, const uint8_t **ret_p, struct perf_event_header *ret_h,
                    uint64_t *ret_offset, bool *ret_compressed) {
        for (;;) {
                struct perf_event_header h;
                const uint8_t *p;
                uint64_t left, extra;
                int r;

                if (pd->dpos < pd->dlen && pd->dlen - pd->dpos >= sizeof(h)) {
                        p = pd->dbuf + pd->dpos;
                        read_header(pd, p, &h);
                        if (h.size < sizeof(h))
                                return fail(pd, -EBADMSG, pd->doff);
                        if (h.size <= pd->dlen - pd->dpos) {
                                pd->dpos += h.size;
                                *ret_p = p;
                                *ret_h = h;
                                *ret_offset = pd->doff;
                                *ret_compressed = true;
                                return 1;
                        }
                        /* The rest comes with the next COMPRESSED record. */
                }

                if (pd->n_srcs > 1 && pd->src_bytes >= DIR_READER_MAX_SIZE && pd->dpos >= pd->dlen)
                        source_rotate(pd, false);
                if (pd->stream) {
                        r = stream_record(pd);
                        if (r < 0)
                                return fail(pd, r, pd->pos);
                }
                if (pd->pos >= pd->data_end) {
                        if (pd->dpos < pd->dlen)
                                return fail(pd, -EBADMSG, pd->doff);
                        if (pd->truncated)
                                return fail(pd, -EBADMSG, pd->pos);
                        if (pd->n_srcs > 1 && source_rotate(pd, true))
                                continue;
                        /* Records whole, but a feature section was damaged. */
                        if (pd->feature_damage)
                                return fail(pd, -EBADMSG, pd->feature_damage);
                        return 0;
                }
                left = pd->data_end - pd->pos;
                if (left < sizeof(h))
                        return fail(pd, -EBADMSG, pd->pos);
                p = pd->rbase + (pd->pos - pd->rbase_off);
                read_header(pd, p, &h);
                if (h.size < sizeof(h) || h.size > left)
                        return fail(pd, -EBADMSG, pd->pos);
                r = record_payload(pd, &h, p, &extra);
                if (r < 0 || extra > left - h.size)
                        return fail(pd, -EBADMSG, pd->pos);

                if (h.type == PERFDATA_RECORD_COMPRESSED || h.type == PERFDATA_RECORD_COMPRESSED2) {
                        const uint8_t *data = p + sizeof(h);
                        uint64_t n = h.size - sizeof(h);

                        if (h.type == PERFDATA_RECORD_COMPRESSED2) {
                                /* u64 data_size, then the data padded to 8 */
                                if (n < 8)
                                        return fail(pd, -EBADMSG, pd->pos);
                                n = file_u64(pd, data);
                                data += 8;
                                if (n > h.size - sizeof(h) - 8u)
                                        return fail(pd, -EBADMSG, pd->pos);
                        }
                        r = decompress(pd, data, n);
                        if (r < 0)
                                return fail(pd, r, pd->pos);
                        pd->doff = pd->pos;
                        pd->pos += h.size;
                        pd->src_bytes += h.size;
                        continue;
                }
                if (pd->dpos < pd->dlen)
                        /* A record cut off at the end of the compressed data. */
                        return fail(pd, -EBADMSG, pd->doff);

                *ret_p = p;
                *ret_h = h;
                *ret_offset = pd->pos;
                *ret_compressed = false;
                pd->pos += h.size + extra;
                pd->src_bytes += h.size + extra;
                return 1;
        }
}

/* Which event laid a kernel record out (P: the record as stored);
 * -EBADMSG when the record is too short to hold the id that says so. */
static int find_event(const struct perfdata *pd, const uint8_t *p, const struct perf_event_header *h,
                       const struct perfdata_event **ret_ev, const struct perfdata_event **ret_layout) {
        const struct perfdata_event *ev = NULL, *layout = NULL;
        uint64_t body = h->size - sizeof(*h);

        if (pd->n_events == 1)
                ev = layout = pd->events[0];
        else if (pd->n_events == 0 || pd->layout_bad)
                ;
        else if (h->type == PERF_RECORD_SAMPLE) {
                uint64_t at = 8 * (uint64_t) pd->sample_id_pos;

                if (body < at + 8)
                        return -EBADMSG;
                ev = layout = event_by_id(pd, file_u64(pd, p + sizeof(*h) + at));
        } else if (pd->trailer_id_pos > 0) {
                uint64_t back = 8 * (uint64_t) pd->trailer_id_pos, id;

                if (body < back)
                        return -EBADMSG;
                id = file_u64(pd, p + h->size - back);
                ev = layout = event_by_id(pd, id);
                /* perf's synthesized records (the tasks and maps that
                 * existed before recording) carry an id of 0 and the
                 * first event's trailer, zeroed (util/evlist.c
                 * evlist__event2evsel(), evlist__id_hdr_size()), whatever
                 * the other events' trailers are. */
                if (!layout && (id == 0 || pd->trailer_uniform))
                        layout = pd->events[0];
        } else
                layout = pd->events[0];         /* no trailer to lay out */
        *ret_ev = ev;
        *ret_layout = layout;
        return 0;
}

/* The next record in file order, in host order at an aligned address,
 * parsed (kernel records) or decoded (perf's own, into pd->user). */
static int read_one(struct perfdata *pd, struct perfdata_record *ret, struct raw *raw) {
        const struct perfdata_event *ev = NULL, *layout = NULL;
        struct perf_event_header h;
        const uint8_t *p;
        uint64_t offset;
        bool compressed, user;
        int r;

        r = raw_next(pd, &p, &h, &offset, &compressed);
        if (r <= 0)
                return r;

        user = h.type >= PERFDATA_RECORD_USER_TYPE_START;
        if (!user && find_event(pd, p, &h, &ev, &layout) < 0)
                return fail(pd, -EBADMSG, offset);

        /* A stream's window moves on: what waits is copied. */
        *raw = (struct raw) { .offset = offset, .compressed = compressed, .stable = !compressed && !pd->stream };
        if (pd->swap || (uintptr_t) p % 8 != 0) {
                struct perf_event_header *c = (struct perf_event_header *) pd->bounce;

                memcpy(c, p, h.size);
                *c = h;
                if (pd->swap && !user && layout) {
                        r = swap_record(c, &layout->attr, ev ? ev->format : NULL);
                        if (r < 0)
                                return fail(pd, r, offset);
                }
                raw->h = c;
                raw->stable = false;
        } else
                raw->h = (const struct perf_event_header *) p;

        *ret = (struct perfdata_record) {
                .offset = offset,
                .header = raw->h,
                .compressed = compressed,
                .event = ev,
                .rec = { .type = h.type, .misc = h.misc },
        };
        if (user) {
                r = user_record_decode(&pd->user, raw->h, pd->swap);
                if (r == -ENOMEM)
                        return fail(pd, r, offset);
                if (r < 0)
                        return fail(pd, -EBADMSG, offset);
                ret->user = tree_get(&pd->user);
                return 1;
        }
        raw->layout = layout;
        return 1;
}

/* Parses kernel record PR (its header where it stays) with LAYOUT's attr
 * and finds its time (0: none, delivered where it stands). */
static int parse_record(struct perfdata *pd, struct perfdata_record *pr, const struct perfdata_event *layout) {
        uint64_t t;
        int r;

        pr->time = 0;
        if (!layout)
                return 0;
        r = record_parse(&layout->attr, pr->header, &pr->rec);
        if (r < 0)
                return fail(pd, r, pr->offset);
        pr->parsed = true;
        t = layout->attr.sample_type;
        if (pr->rec.type == PERF_RECORD_SAMPLE) {
                if (t & PERF_SAMPLE_TIME)
                        pr->time = pr->rec.sample.time;
        } else if (pr->rec.has_sid && (t & PERF_SAMPLE_TIME))
                pr->time = pr->rec.sid.time;
        return 0;
}

/* ---- the time-order queue --------------------------------------------- */

static void chunk_release(struct perfdata *pd, int i) {
        if (i < 0)
                return;
        if (--pd->chunks[i].refs == 0 && i != pd->cur_chunk)
                pd->chunks[i].used = 0;
}

/* A copy of SIZE bytes that stays until chunk_release(). */
static int chunk_copy(struct perfdata *pd, const void *src, size_t size, const void **ret, int *ret_chunk) {
        size_t need = (size + 7) & ~(size_t) 7;
        struct chunk *c = pd->cur_chunk >= 0 ? &pd->chunks[pd->cur_chunk] : NULL;

        if (!c || CHUNK_SIZE - c->used < need) {
                int found = -1;

                if (c && c->refs == 0)
                        c->used = 0;
                for (size_t i = 0; i < pd->n_chunks; i++)
                        if ((int) i != pd->cur_chunk && pd->chunks[i].refs == 0) {
                                found = (int) i;
                                break;
                        }
                if (found < 0) {
                        struct chunk *a;

                        if (pd->n_chunks >= QUEUE_MAX_CHUNKS)
                                return -ENOBUFS;
                        a = realloc(pd->chunks, (pd->n_chunks + 1) * sizeof(*a));
                        if (!a)
                                return -ENOMEM;
                        pd->chunks = a;
                        a[pd->n_chunks] = (struct chunk) { .mem = malloc(CHUNK_SIZE) };
                        if (!a[pd->n_chunks].mem)
                                return -ENOMEM;
                        found = (int) pd->n_chunks++;
                }
                pd->cur_chunk = found;
                c = &pd->chunks[found];
                c->used = 0;
        }
        memcpy(c->mem + c->used, src, size);
        *ret = c->mem + c->used;
        c->used += need;
        c->refs++;
        *ret_chunk = pd->cur_chunk;
        return 0;
}

static int pending_cmp(const void *a, const void *b) {
        const struct pending *x = a, *y = b;

        if (x->time != y->time)
                return x->time < y->time ? -1 : 1;
        return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int slot_get(struct perfdata *pd, uint32_t *ret) {
        if (pd->n_free > 0) {
                *ret = pd->free_slots[--pd->n_free];
                return 0;
        }
        if (pd->n_slots == pd->cap_slots) {
                size_t cap = pd->cap_slots ? pd->cap_slots * 2 : 1024;
                struct slot *s;
                uint32_t *f;

                if (cap > UINT32_MAX)
                        return -ENOBUFS;
                s = realloc(pd->slots, cap * sizeof(*s));
                if (!s)
                        return -ENOMEM;
                pd->slots = s;
                f = realloc(pd->free_slots, cap * sizeof(*f));
                if (!f)
                        return -ENOMEM;
                pd->free_slots = f;
                pd->cap_slots = cap;
        }
        *ret = (uint32_t) pd->n_slots++;
        return 0;
}

/* Queues kernel record PR (header per RAW) with time PR->time. */
static int enqueue(struct perfdata *pd, struct perfdata_record *pr, const struct raw *raw) {
        struct slot *s;
        uint32_t i;
        int r;

        if (pd->n_pend == pd->cap_pend) {
                size_t cap = pd->cap_pend ? pd->cap_pend * 2 : 1024;
                struct pending *a = realloc(pd->pend, cap * sizeof(*a));

                if (!a)
                        return -ENOMEM;
                pd->pend = a;
                pd->cap_pend = cap;
        }
        r = slot_get(pd, &i);
        if (r < 0)
                return r;
        s = &pd->slots[i];
        s->chunk = -1;
        if (!raw->stable) {
                const void *copy;

                r = chunk_copy(pd, raw->h, raw->h->size, &copy, &s->chunk);
                if (r < 0) {
                        pd->free_slots[pd->n_free++] = i;
                        return r;
                }
                pr->header = copy;
        }
        r = parse_record(pd, pr, raw->layout);
        if (r < 0)
                return r;
        s->pr = *pr;
        pd->pend[pd->n_pend++] = (struct pending) { .time = pr->time, .seq = pd->seq++, .slot = i };
        if (pr->time > pd->max_time)
                pd->max_time = pr->time;
        return 0;
}

/* Starts handing out queued records up to LIMIT, oldest first. */
static void flush_start(struct perfdata *pd, uint64_t limit) {
        if (pd->n_pend > 1)
                qsort(pd->pend, pd->n_pend, sizeof(*pd->pend), pending_cmp);
        pd->pend_head = 0;
        pd->flush_limit = limit;
        pd->flushing = true;
}

/* The next queued record within the flush, or 0 when the flush is done. */
static int flush_next(struct perfdata *pd, struct perfdata_record *ret) {
        struct slot *s;

        if (pd->pend_head < pd->n_pend && pd->pend[pd->pend_head].time <= pd->flush_limit) {
                uint32_t i = pd->pend[pd->pend_head++].slot;

                s = &pd->slots[i];
                *ret = s->pr;
                /* The bytes stay until a later call copies over them. */
                chunk_release(pd, s->chunk);
                pd->free_slots[pd->n_free++] = i;
                return 1;
        }
        if (pd->pend_head > 0)
                memmove(pd->pend, pd->pend + pd->pend_head, (pd->n_pend - pd->pend_head) * sizeof(*pd->pend));
        pd->n_pend -= pd->pend_head;
        pd->pend_head = 0;
        pd->flushing = false;
        return 0;
}

static int next_file_order(struct perfdata *pd, struct perfdata_record *ret) {
        struct raw raw;
        int r;

        r = read_one(pd, ret, &raw);
        if (r <= 0)
                return r;
        if (ret->rec.type < PERFDATA_RECORD_USER_TYPE_START) {
                r = parse_record(pd, ret, raw.layout);
                if (r < 0)
                        return r;
        }
        return 1;
}

int perfdata_next(struct perfdata *pd, struct perfdata_record *ret) {
        int r;

        if (!pd || !ret)
                return -EINVAL;
        if (pd->order == PERFDATA_ORDER_FILE) {
                if (pd->error < 0)
                        return pd->error;
                return next_file_order(pd, ret);
        }

        for (;;) {
                struct perfdata_record pr;
                struct raw raw;

                if (pd->flushing) {
                        if (flush_next(pd, ret) > 0)
                                return 1;
                        if (pd->held) {
                                pd->held = false;
                                *ret = pd->held_pr;
                                return 1;
                        }
                }
                if (pd->at_end)
                        return pd->error;
                /* A live stream after a round: what waits is given out
                 * once perf has nothing more to say for a while, not
                 * when its next round comes (the next event). */
                if (pd->stream && pd->round_seen && pd->n_pend > 0 &&
                    pd->win_off + pd->win_len - pd->pos < sizeof(struct perf_event_header) &&
                    !stream_ready(pd, STREAM_IDLE_MS)) {
                        pd->round_seen = false;
                        flush_start(pd, UINT64_MAX);
                        pd->next_flush = pd->max_time;
                        continue;
                }

                r = read_one(pd, &pr, &raw);
                if (r <= 0) {
                        /* The end, or damage: first everything before it. */
                        pd->at_end = true;
                        flush_start(pd, UINT64_MAX);
                        continue;
                }
                pd->round_seen = pr.rec.type == PERFDATA_RECORD_FINISHED_ROUND;
                if (pr.rec.type >= PERFDATA_RECORD_USER_TYPE_START) {
                        if (pr.rec.type != PERFDATA_RECORD_FINISHED_ROUND) {
                                *ret = pr;
                                return 1;
                        }
                        /* util/ordered-events.c OE_FLUSH__ROUND: up to the
                         * newest time seen before the previous round. */
                        if (pd->order == PERFDATA_ORDER_TIME) {
                                flush_start(pd, pd->next_flush);
                                pd->next_flush = pd->max_time;
                        } else
                                flush_start(pd, UINT64_MAX);
                        pd->held = true;
                        pd->held_pr = pr;
                        continue;
                }
                if (!raw.layout) {
                        *ret = pr;
                        return 1;
                }
                /* perf delivers what has no time at once (session.c:
                 * perf_session__queue_event gives -ETIME). Peek at the
                 * time without copying: parse where it is. */
                if (raw.stable || pd->order == PERFDATA_ORDER_FILE) {
                        r = parse_record(pd, &pr, raw.layout);
                        if (r < 0)
                                return r;
                        if (pr.time == 0) {
                                *ret = pr;
                                return 1;
                        }
                        r = enqueue(pd, &pr, &raw);
                } else {
                        struct perfdata_record probe = pr;

                        r = parse_record(pd, &probe, raw.layout);
                        if (r < 0)
                                return r;
                        if (probe.time == 0) {
                                *ret = probe;
                                return 1;
                        }
                        r = enqueue(pd, &pr, &raw);
                }
                if (r == -ENOBUFS) {
                        /* Too much waiting: flush the older half
                         * (ordered-events.c OE_FLUSH__HALF), then queue. */
                        uint64_t lo = UINT64_MAX, hi = 0;

                        for (size_t i = 0; i < pd->n_pend; i++) {
                                lo = pd->pend[i].time < lo ? pd->pend[i].time : lo;
                                hi = pd->pend[i].time > hi ? pd->pend[i].time : hi;
                        }
                        pd->seq--;
                        flush_start(pd, lo + (hi - lo) / 2);
                        /* The record is read again after the flush. */
                        if (pr.compressed)
                                pd->dpos -= pr.header->size;
                        else {
                                pd->pos = pr.offset;
                                pd->src_bytes -= pr.header->size;
                        }
                        continue;
                }
                if (r < 0)
                        return fail(pd, r, pr.offset);
        }
}

static void queue_clear(struct perfdata *pd) {
        pd->n_pend = pd->pend_head = 0;
        pd->n_free = 0;
        pd->n_slots = 0;
        for (size_t i = 0; i < pd->n_chunks; i++)
                pd->chunks[i].used = pd->chunks[i].refs = 0;
        pd->cur_chunk = -1;
        pd->seq = pd->max_time = pd->next_flush = 0;
        pd->flushing = pd->held = false;
}

void perfdata_rewind(struct perfdata *pd) {
        /* What a stream gave is gone. */
        if (!pd || pd->stream)
                return;
        if (pd->n_srcs > 1) {
                pd->srcs[pd->cur_src].zstd = pd->zstd;
                for (size_t i = 0; i < pd->n_srcs; i++) {
                        pd->srcs[i].pos = pd->srcs[i].start;
                        pd->srcs[i].done = false;
                        if (i > 0 && pd->srcs[i].zstd)
                                ZSTD_initDStream(pd->srcs[i].zstd);
                }
                pd->zstd = TAKE_PTR(pd->srcs[0].zstd);
                pd->cur_src = 0;
                pd->rbase = pd->srcs[0].base;
                pd->data_end = pd->srcs[0].end;
                pd->truncated = pd->srcs[0].truncated;
        }
        pd->pos = pd->data_start;
        pd->src_bytes = 0;
        pd->dpos = pd->dlen = 0;
        if (pd->zstd)
                ZSTD_initDStream(pd->zstd);
        pd->error = 0;
        pd->error_offset = 0;
        pd->at_end = false;
        queue_clear(pd);
}

int perfdata_set_order(struct perfdata *pd, enum perfdata_order order) {
        if (!pd || (unsigned) order > PERFDATA_ORDER_TIME)
                return -EINVAL;
        pd->order = order;
        return 0;
}

uint64_t perfdata_offset(const struct perfdata *pd) {
        if (!pd)
                return 0;
        return pd->error < 0 ? pd->error_offset : pd->pos;
}

int perfdata_offset_file(const struct perfdata *pd) {
        if (!pd || pd->n_srcs < 2 || pd->cur_src == 0)
                return -1;
        return (int) pd->srcs[pd->cur_src].n;
}

/* ---- opening ---------------------------------------------------------- */

/* Pipe mode: the attrs, tracing data, event names and features come as
 * records before the data they describe. Take them all in first, so that
 * the header is whole before the first record is handed out. A damaged
 * stream stops this quietly: reading the records finds the damage. */
static int pipe_prescan(struct perfdata *pd) {
        uint64_t pos = pd->data_start;
        int r;

        while (pos < pd->size && pd->size - pos >= sizeof(struct perf_event_header)) {
                struct perf_event_header h;
                const uint8_t *p = pd->base + pos, *body;
                uint64_t extra, left = pd->size - pos;
                struct pcur c;

                read_header(pd, p, &h);
                if (h.size < sizeof(h) || h.size > left)
                        break;
                if (record_payload(pd, &h, p, &extra) < 0 || extra > left - h.size)
                        break;
                body = p + sizeof(h);
                c = pcur_make(body, h.size - sizeof(h), pd->swap);
                switch (h.type) {
                case PERFDATA_RECORD_HEADER_ATTR: {
                        struct perf_event_attr attr;
                        uint32_t asz;

                        if (h.size - sizeof(h) < PERF_ATTR_SIZE_VER0)
                                return 0;
                        if (read_attr(pd, body, h.size - sizeof(h), &attr) < 0)
                                return 0;
                        memcpy(&asz, body + 4, 4);
                        asz = pd->swap ? bswap_32(asz) : asz;
                        asz = asz ? asz : PERF_ATTR_SIZE_VER0;
                        r = add_event(pd, &attr, body + asz, (h.size - sizeof(h) - asz) / 8);
                        if (r == -ENOMEM)
                                return r;
                        if (r < 0)
                                return 0;
                        break;
                }
                case PERFDATA_RECORD_HEADER_TRACING_DATA:
                        r = read_tracing_data(pd, p + h.size, extra);
                        if (r == -ENOMEM)
                                return r;
                        break;
                case PERFDATA_RECORD_EVENT_UPDATE: {
                        uint64_t type, id;
                        struct perfdata_event *ev;

                        if (pcur_u64(&c, &type) < 0 || pcur_u64(&c, &id) < 0)
                                break;
                        ev = event_by_id(pd, id);
                        if (type != 2 || !ev || ev->name)
                                break;
                        ev->name = strndup((const char *) c.c.p, cursor_left(&c.c));
                        if (!ev->name)
                                return -ENOMEM;
                        break;
                }
                case PERFDATA_RECORD_HEADER_FEATURE: {
                        uint64_t feat;

                        /* An empty one (HEADER_LAST_FEATURE) ends the list
                         * (header.c perf_event__synthesize_features). */
                        if (pcur_u64(&c, &feat) < 0 || feat >= PERFDATA_FEAT_MAX || cursor_left(&c.c) == 0)
                                break;
                        set_feature(pd, (unsigned) feat);
                        pd->feat[feat].p = c.c.p;
                        pd->feat[feat].size = cursor_left(&c.c);
                        break;
                }
                }
                pos += h.size + extra;
        }
        return 0;
}

/* Whether what follows a data section of size 0 at OFFSET is a record
 * (perf record killed before it wrote the size) rather than the feature
 * table of a file without records, whose first u64 is an offset past the
 * header, which read as a record header has a type no record has. */
static bool killed_recording(const struct perfdata *pd, uint64_t offset) {
        struct perf_event_header h;

        if (pd->size - offset < sizeof(h))
                return false;
        read_header(pd, pd->base + offset, &h);
        return h.type != 0 && h.type < 2 * PERFDATA_RECORD_USER_TYPE_START && h.size >= sizeof(h) &&
                h.size <= pd->size - offset;
}

static int perfdata_parse(struct perfdata *pd) {
        struct file_header h;
        uint64_t magic, hsize;
        int r;

        if (pd->size < 16)
                return -EBADMSG;
        if (memcmp(pd->base, MAGIC1, 8) == 0)
                return -EPROTONOSUPPORT;
        magic = load_u64(pd->base);
        if (magic == bswap_64(MAGIC2))
                pd->swap = true;
        else if (magic != MAGIC2)
                return -EBADMSG;
        hsize = file_u64(pd, pd->base + 8);
        pd->rbase = pd->base;

        pd->bounce = aligned_alloc(8, BOUNCE_SIZE);
        if (!pd->bounce)
                return -ENOMEM;
        pd->cur_chunk = -1;

        if (hsize == PIPE_HEADER_SIZE) {
                pd->pipe = true;
                pd->data_start = pd->pos = PIPE_HEADER_SIZE;
                pd->data_end = pd->size;
                r = pipe_prescan(pd);
                if (r < 0)
                        return r;
        } else {
                if (pd->size < sizeof(h))
                        return -EBADMSG;
                memcpy(&h, pd->base, sizeof(h));
                if (pd->swap) {
                        uint64_t *w = (uint64_t *) &h;

                        for (size_t i = 0; i < sizeof(h) / 8; i++)
                                w[i] = bswap_64(w[i]);
                }
                if (h.size < sizeof(h) || h.size > pd->size)
                        return -EBADMSG;
                memcpy(pd->features, h.features, sizeof(pd->features));
                if (h.data.offset < h.size || h.data.offset > pd->size)
                        return -EBADMSG;
                pd->data_start = pd->pos = h.data.offset;
                pd->data_end = h.data.offset + h.data.size;
                if (h.data.size > pd->size - h.data.offset) {
                        /* Cut short (a copy interrupted): the records that
                         * are there, then the error at the end of what is
                         * there. */
                        pd->data_end = pd->size;
                        pd->truncated = true;
                } else if (h.data.size == 0 && killed_recording(pd, h.data.offset)) {
                        /* perf record writes the data size, and the feature
                         * sections after the data, when it finishes: one
                         * killed (SIGKILL, the machine down) left 0 there
                         * and its records up to the end of the file (perf
                         * report: "data size field is 0"). The same. */
                        pd->data_end = pd->size;
                        pd->truncated = true;
                }
                pd->data_offset = h.data.offset;
                pd->data_size = h.data.size;
                if (pd->truncated)
                        memset(pd->features, 0, sizeof(pd->features));
                else {
                        r = read_feature_table(pd, &h);
                        if (r < 0)
                                return r;
                }
                r = read_attrs(pd, &h);
                if (r < 0)
                        return r;
        }
        setup_id_positions(pd);
        if (pd->layout_bad)
                return -EBADMSG;
        r = use_features(pd);
        if (r < 0)
                return r;
        return build_header(pd);
}

int perfdata_new(const void *data, size_t size, struct perfdata **ret) {
        _cleanup_(perfdata_freep) struct perfdata *pd = NULL;
        int r;

        if (!data || !ret)
                return -EINVAL;
        pd = calloc(1, sizeof(*pd));
        if (!pd)
                return -ENOMEM;
        pd->base = data;
        pd->size = size;
        r = perfdata_parse(pd);
        if (r < 0)
                return r;
        /* The data.N files of a --threads directory are not in memory:
         * refuse, rather than give the few records "data" holds. */
        if (!pd->pipe && perfdata_has_feature(pd, PERFDATA_FEAT_DIR_FORMAT))
                return -EPROTONOSUPPORT;
        *ret = TAKE_PTR(pd);
        return 0;
}

static int source_cmp(const void *a, const void *b) {
        const struct source *x = a, *y = b;

        return x->n < y->n ? -1 : x->n > y->n;
}

static void dir_closep(DIR **d) {
        if (*d)
                closedir(*d);
}

/* perf record --threads: after the data section, every data.N file in
 * DIR_FD (perf takes each regular "data.*" file, a symlink to one too,
 * util/data.c perf_data__open_dir, and leaves out empty ones), in N's
 * order. The directory may be anyone's: a data.N that is a FIFO would
 * block open() for good and a device would be read without end, so each
 * is opened with O_NONBLOCK and anything but a regular file (after the
 * link) is refused with -EBADFD, its name in *RET_FAULT. */
static int open_dir_files(struct perfdata *pd, int dir_fd, char **ret_fault) {
        _cleanup_(dir_closep) DIR *d = NULL;
        struct dirent *de;
        int fd;

        fd = fcntl(dir_fd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                return -errno;
        d = fdopendir(fd);
        if (!d) {
                int r = -errno;

                close(fd);
                return r;
        }
        pd->srcs = calloc(1, sizeof(*pd->srcs));
        if (!pd->srcs)
                return -ENOMEM;
        pd->srcs[0] = (struct source) {
                .base = pd->base, .start = pd->data_start, .end = pd->data_end,
                .pos = pd->data_start, .truncated = pd->truncated,
        };
        pd->n_srcs = 1;
        while ((errno = 0, de = readdir(d))) {
                _cleanup_(closep) int ffd = -1;
                struct source *srcs, *src;
                struct stat st;
                char *end;
                unsigned long n;

                if (strncmp(de->d_name, "data.", 5) != 0 || de->d_name[5] < '0' || de->d_name[5] > '9')
                        continue;
                errno = 0;
                n = strtoul(de->d_name + 5, &end, 10);
                if (*end || errno || n > UINT32_MAX)
                        continue;
                ffd = openat(dir_fd, de->d_name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
                if (ffd < 0) {
                        *ret_fault = strdup(de->d_name);
                        return -errno;
                }
                if (fstat(ffd, &st) < 0)
                        return -errno;
                if (!S_ISREG(st.st_mode)) {
                        *ret_fault = strdup(de->d_name);
                        return -EBADFD;
                }
                if (st.st_size == 0)
                        continue;
                if ((uint64_t) st.st_size > SIZE_MAX)
                        return -EFBIG;
                if (pd->n_srcs > DIR_MAX_FILES)
                        return -E2BIG;
                srcs = reallocarray(pd->srcs, pd->n_srcs + 1, sizeof(*srcs));
                if (!srcs)
                        return -ENOMEM;
                pd->srcs = srcs;
                src = &pd->srcs[pd->n_srcs];
                *src = (struct source) { .end = (uint64_t) st.st_size, .n = (unsigned) n };
                src->map = mmap(NULL, (size_t) st.st_size, PROT_READ, MAP_PRIVATE, ffd, 0);
                if (src->map == MAP_FAILED)
                        return -errno;
                src->map_size = (size_t) st.st_size;
                src->base = src->map;
                pd->n_srcs++;
        }
        if (errno != 0)
                return -errno;
        qsort(pd->srcs + 1, pd->n_srcs - 1, sizeof(*pd->srcs), source_cmp);
        return 0;
}

/* What cannot be mapped. Pipe mode is read as it comes: its magic at
 * once (400 MB of zeros failed after all of it was read, 411 MB), the
 * records up to the first kernel record as the header, the rest as the
 * reader asks. A file-mode perf.data needs its feature table at its end:
 * read whole, as before. FD stays the caller's. */
static int stream_open(struct perfdata *pd, int fd) {
        uint64_t magic, pos;
        int r;

        pd->in_fd = fd;
        pd->stream = true;
        pd->win_hold = true;
        r = stream_want(pd, PIPE_HEADER_SIZE);
        if (r < 0)
                return r;
        if (pd->win_len < PIPE_HEADER_SIZE)
                return -EBADMSG;
        if (memcmp(pd->win, MAGIC1, 8) == 0)
                return -EPROTONOSUPPORT;
        magic = load_u64(pd->win);
        if (magic == bswap_64(MAGIC2))
                pd->swap = true;
        else if (magic != MAGIC2)
                return -EBADMSG;
        if (file_u64(pd, pd->win + 8) != PIPE_HEADER_SIZE) {
                /* File mode: all of it. */
                while (!pd->in_eof) {
                        if (pd->win_len > SIZE_MAX / 2)
                                return -EFBIG;
                        r = stream_want(pd, pd->win_len + 1);
                        if (r < 0)
                                return r;
                }
                pd->stream = false;
                pd->in_fd = -1;
                pd->buf = TAKE_PTR(pd->win);
                pd->base = pd->buf;
                pd->size = pd->win_len;
                pd->win_len = pd->win_cap = 0;
                return 0;
        }

        /* The header: perf's own records before the first kernel record
         * (util/header.c perf_event__synthesize_for_pipe writes the attrs,
         * event names, tracing data and features first). */
        for (pos = PIPE_HEADER_SIZE;;) {
                struct perf_event_header h;
                uint64_t extra;

                pd->pos = pos;
                r = stream_record(pd);
                if (r < 0)
                        return r;
                if (pd->data_end - pos < sizeof(h))
                        break;
                read_header(pd, pd->win + pos, &h);
                /* perf's header records end where the records begin (and
                 * a live perf may wait long after FINISHED_INIT). */
                if (h.type < PERFDATA_RECORD_USER_TYPE_START || h.type == PERFDATA_RECORD_FINISHED_ROUND ||
                    h.type == PERFDATA_RECORD_FINISHED_INIT || h.size < sizeof(h) || h.size > pd->data_end - pos ||
                    record_payload(pd, &h, pd->win + pos, &extra) < 0 || extra > pd->data_end - pos - h.size)
                        break;
                pos += h.size + extra;
                if (pos > STREAM_HEADER_MAX)
                        return -EFBIG;
        }
        pd->buf = malloc(pos);
        if (!pd->buf)
                return -ENOMEM;
        memcpy(pd->buf, pd->win, pos);
        pd->base = pd->buf;
        pd->size = pos;
        pd->pos = 0;
        pd->win_hold = false;
        return 0;
}

int perfdata_open(const char *path, struct perfdata **ret) {
        _cleanup_(freep) char *fault = NULL;

        return perfdata_open_full(path, ret, &fault);
}

int perfdata_open_full(const char *path, struct perfdata **ret, char **ret_fault) {
        _cleanup_(perfdata_freep) struct perfdata *pd = NULL;
        _cleanup_(closep) int fd = -1, dir_fd = -1;
        struct stat st;
        int r;

        if (!path || !ret || !ret_fault)
                return -EINVAL;
        *ret_fault = NULL;
        if (strcmp(path, "-") == 0) {
                fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
                if (fd < 0)
                        return -errno;
        } else {
                fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        return -errno;
        }
        if (fstat(fd, &st) < 0)
                return -errno;
        if (S_ISDIR(st.st_mode)) {
                /* perf record --threads or --kcore: a directory, whose
                 * header and first records are in "data". */
                dir_fd = TAKE_FD(fd);
                /* Named by the directory, not by the person: a FIFO or
                 * device there is refused as a data.N is. */
                fd = openat(dir_fd, "data", O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
                if (fd < 0)
                        return errno == ENOENT ? -EISDIR : -errno;
                if (fstat(fd, &st) < 0)
                        return -errno;
                if (!S_ISREG(st.st_mode)) {
                        *ret_fault = strdup("data");
                        return -EBADFD;
                }
        }

        pd = calloc(1, sizeof(*pd));
        if (!pd)
                return -ENOMEM;
        pd->in_fd = -1;
        if (S_ISREG(st.st_mode) && st.st_size > 0) {
                if ((uint64_t) st.st_size > SIZE_MAX)
                        return -EFBIG;
                pd->map = mmap(NULL, (size_t) st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
                if (pd->map == MAP_FAILED) {
                        pd->map = NULL;
                        return -errno;
                }
                pd->map_size = (size_t) st.st_size;
                pd->base = pd->map;
                pd->size = pd->map_size;
        } else {
                /* What cannot be mapped (a pipe, standard input). */
                r = stream_open(pd, fd);
                if (r < 0)
                        return r;
                if (pd->stream) {
                        pd->in_fd = TAKE_FD(fd);
                        pd->in_fd_owned = true;
                }
        }

        r = perfdata_parse(pd);
        if (r < 0)
                return r;
        if (pd->stream) {
                /* Read on from the window, which holds the stream from its
                 * start: the header's records are given as records too. */
                pd->rbase = pd->win;
                pd->rbase_off = pd->win_off;
                pd->data_end = pd->win_off + pd->win_len;
        }
        if (!pd->pipe && perfdata_has_feature(pd, PERFDATA_FEAT_DIR_FORMAT)) {
                /* The samples are in the data.N files beside "data":
                 * read them too, also when "data" itself was named. */
                if (dir_fd < 0) {
                        _cleanup_(freep) char *copy = NULL;

                        if (!S_ISREG(st.st_mode) || strcmp(path, "-") == 0)
                                return -EPROTONOSUPPORT;
                        copy = strdup(path);
                        if (!copy)
                                return -ENOMEM;
                        dir_fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                        if (dir_fd < 0)
                                return -errno;
                }
                r = open_dir_files(pd, dir_fd, ret_fault);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(pd);
        return 0;
}

struct perfdata *perfdata_free(struct perfdata *pd) {
        if (!pd)
                return NULL;
        for (size_t i = 0; i < pd->n_events; i++) {
                if (!pd->events[i])
                        continue;
                free(pd->events[i]->ids);
                free(pd->events[i]->name);
                free(pd->events[i]);
        }
        free(pd->events);
        free(pd->ids);
        for (size_t i = 0; i < pd->n_formats; i++)
                format_free(pd->formats[i]);
        free(pd->formats);
        free(pd->bounce);
        tree_done(&pd->header);
        tree_done(&pd->user);
        if (pd->zstd)
                ZSTD_freeDStream(pd->zstd);
        free(pd->dbuf);
        for (size_t i = 0; i < pd->n_chunks; i++)
                free(pd->chunks[i].mem);
        free(pd->chunks);
        free(pd->slots);
        free(pd->free_slots);
        free(pd->pend);
        for (size_t i = 0; i < pd->n_srcs; i++) {
                if (pd->srcs[i].map && pd->srcs[i].map != MAP_FAILED)
                        munmap(pd->srcs[i].map, pd->srcs[i].map_size);
                if (pd->srcs[i].zstd)
                        ZSTD_freeDStream(pd->srcs[i].zstd);
        }
        free(pd->srcs);
        if (pd->map)
                munmap(pd->map, pd->map_size);
        free(pd->buf);
        free(pd->win);
        if (pd->in_fd_owned)
                safe_close(pd->in_fd);
        free(pd);
        return NULL;
}

void perfdata_set_wait(struct perfdata *pd, perfdata_wait_t wait, void *userdata) {
        if (!pd)
                return;
        pd->wait = wait;
        pd->wait_userdata = userdata;
}

size_t perfdata_n_events(const struct perfdata *pd) {
        return pd ? pd->n_events : 0;
}

const struct perfdata_event *perfdata_event(const struct perfdata *pd, size_t i) {
        if (!pd || i >= pd->n_events)
                return NULL;
        return pd->events[i];
}

int perfdata_clock(const struct perfdata *pd, struct perfdata_clock *ret) {
        if (!pd || !ret)
                return -EINVAL;
        if (!pd->has_clock)
                return -ENODATA;
        *ret = pd->clock;
        return 0;
}

size_t perfdata_n_bad_formats(const struct perfdata *pd) {
        return pd ? pd->n_bad_formats : 0;
}

bool perfdata_swapped(const struct perfdata *pd) {
        return pd && pd->swap;
}

bool perfdata_pipe(const struct perfdata *pd) {
        return pd && pd->pipe;
}

struct perfdata_tree perfdata_header(const struct perfdata *pd) {
        return pd ? tree_get(&pd->header) : (struct perfdata_tree) {};
}

uint64_t perfdata_feature_damage(const struct perfdata *pd) {
        return pd ? pd->feature_damage : 0;
}

static const char *const user_type_table[] = {
        [64 - PERFDATA_RECORD_USER_TYPE_START] = "HEADER_ATTR",
        [65 - PERFDATA_RECORD_USER_TYPE_START] = "HEADER_EVENT_TYPE",
        [66 - PERFDATA_RECORD_USER_TYPE_START] = "HEADER_TRACING_DATA",
        [67 - PERFDATA_RECORD_USER_TYPE_START] = "HEADER_BUILD_ID",
        [68 - PERFDATA_RECORD_USER_TYPE_START] = "FINISHED_ROUND",
        [69 - PERFDATA_RECORD_USER_TYPE_START] = "ID_INDEX",
        [70 - PERFDATA_RECORD_USER_TYPE_START] = "AUXTRACE_INFO",
        [71 - PERFDATA_RECORD_USER_TYPE_START] = "AUXTRACE",
        [72 - PERFDATA_RECORD_USER_TYPE_START] = "AUXTRACE_ERROR",
        [73 - PERFDATA_RECORD_USER_TYPE_START] = "THREAD_MAP",
        [74 - PERFDATA_RECORD_USER_TYPE_START] = "CPU_MAP",
        [75 - PERFDATA_RECORD_USER_TYPE_START] = "STAT_CONFIG",
        [76 - PERFDATA_RECORD_USER_TYPE_START] = "STAT",
        [77 - PERFDATA_RECORD_USER_TYPE_START] = "STAT_ROUND",
        [78 - PERFDATA_RECORD_USER_TYPE_START] = "EVENT_UPDATE",
        [79 - PERFDATA_RECORD_USER_TYPE_START] = "TIME_CONV",
        [80 - PERFDATA_RECORD_USER_TYPE_START] = "HEADER_FEATURE",
        [81 - PERFDATA_RECORD_USER_TYPE_START] = "COMPRESSED",
        [82 - PERFDATA_RECORD_USER_TYPE_START] = "FINISHED_INIT",
        [83 - PERFDATA_RECORD_USER_TYPE_START] = "COMPRESSED2",
};

const char *perfdata_record_type_to_string(uint32_t type) {
        if (type < PERFDATA_RECORD_USER_TYPE_START)
                return record_type_to_string(type);
        type -= PERFDATA_RECORD_USER_TYPE_START;
        if (type >= ELEMENTSOF(user_type_table))
                return NULL;
        return user_type_table[type];
}
