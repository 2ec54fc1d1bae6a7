/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* perf.data files written by `perf record` to a file. Layout
 * (tools/perf/Documentation/perf.data-file-format.txt, util/header.c):
 *
 *   struct perf_file_header   magic "PERFILE2", sections, feature bitmap
 *   attrs section             { struct perf_event_attr; section of u64 ids }[]
 *   data section              the records, as the kernel and perf wrote them
 *   feature table             one section per set feature bit, after the data
 *
 * Everything is read in place from the mapped file through bounds-checked
 * cursors; a record is copied only when it is not 8-byte aligned. */

#include <byteswap.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cursor.h"
#include "evmon/perfdata.h"

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

/* PERF_ATTR_SIZE_VER0: the part of perf_event_attr every writer has. */
#define ATTR_SIZE_VER0 64

#define ID_BITS (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | \
                 PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

/* trace-cmd's tracing data (util/trace-event-info.c). */
static const char tracing_magic[] = { 0x17, 0x08, 'D', 't', 'r', 'a', 'c', 'i', 'n', 'g' };

struct id_entry {
        uint64_t id;
        size_t event;
};

struct perfdata {
        const uint8_t *base;
        size_t size;
        void *map;                      /* owned mapping (perfdata_open) */
        size_t map_size;
        void *buf;                      /* owned copy of a file we could not map */

        struct perfdata_event *events;
        size_t n_events;
        struct id_entry *ids;           /* sorted by id */
        size_t n_ids;
        struct format **formats;        /* owned; events point at them */
        size_t n_formats;
        size_t n_bad_formats;

        int sample_id_pos;              /* u64 index of the id in a sample body, -1: none */
        int trailer_id_pos;             /* u64 index back from the end of other records (1: last) */
        bool trailer_uniform;           /* every attr lays the sample_id trailer out alike */

        uint64_t features[PERFDATA_FEAT_MAX / 64];
        struct file_section feat[PERFDATA_FEAT_MAX];
        bool has_clock;
        struct perfdata_clock clock;

        uint64_t data_start, data_end, pos;
        uint64_t *bounce;               /* 64 KiB: a record's size is a u16 */
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

static struct cursor section_cursor(const struct perfdata *pd, const struct file_section *s) {
        return cursor_make(pd->base + s->offset, s->size);
}

bool perfdata_has_feature(const struct perfdata *pd, unsigned feature) {
        if (!pd || feature >= PERFDATA_FEAT_MAX)
                return false;
        return pd->features[feature / 64] & (1ULL << (feature % 64));
}

const char *perfdata_unsupported(const void *head, size_t size) {
        uint64_t magic, hsize;

        if (size < 8)
                return NULL;
        if (memcmp(head, MAGIC1, 8) == 0)
                return "the old perf.data layout (\"PERFFILE\"); record it again with a newer perf";
        memcpy(&magic, head, 8);
        if (magic == bswap_64(MAGIC2))
                return "a perf.data file of the other byte order; decode it on a machine of that byte order";
        if (magic == MAGIC2 && size >= 16) {
                memcpy(&hsize, (const uint8_t *) head + 8, 8);
                if (hsize == PIPE_HEADER_SIZE)
                        return "pipe-mode output (perf record -o - or into a pipe); record into a file with perf record -o FILE";
        }
        return NULL;
}

/* ---- sample ids ------------------------------------------------------ */

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

static int id_cmp(const void *a, const void *b) {
        const struct id_entry *x = a, *y = b;

        return x->id < y->id ? -1 : x->id > y->id;
}

static struct perfdata_event *event_by_id(const struct perfdata *pd, uint64_t id) {
        const struct id_entry key = { .id = id };
        const struct id_entry *e;

        e = bsearch(&key, pd->ids, pd->n_ids, sizeof(*pd->ids), id_cmp);
        return e ? &pd->events[e->event] : NULL;
}

/* Several events share one data section: each record must say whose it is,
 * and all must say it at the same place (perf refuses other files too). */
static int setup_id_positions(struct perfdata *pd) {
        const struct perf_event_attr *a0 = &pd->events[0].attr;

        pd->sample_id_pos = calc_sample_id_pos(a0->sample_type);
        pd->trailer_id_pos = a0->sample_id_all ? calc_trailer_id_pos(a0->sample_type) : -1;
        pd->trailer_uniform = true;

        for (size_t i = 1; i < pd->n_events; i++) {
                const struct perf_event_attr *a = &pd->events[i].attr;

                if ((a->sample_type & ID_BITS) != (a0->sample_type & ID_BITS))
                        pd->trailer_uniform = false;
                if (a->sample_id_all != a0->sample_id_all)
                        return -EBADMSG;
                if (calc_sample_id_pos(a->sample_type) != pd->sample_id_pos)
                        return -EBADMSG;
                if (a->sample_id_all && calc_trailer_id_pos(a->sample_type) != pd->trailer_id_pos)
                        return -EBADMSG;
        }
        if (pd->n_events > 1 && pd->sample_id_pos < 0)
                return -EBADMSG;
        return 0;
}

/* ---- header, attrs, features ----------------------------------------- */

static int read_attrs(struct perfdata *pd, const struct file_header *h) {
        size_t n, n_ids = 0;

        if (!section_ok(pd, &h->attrs))
                return -EBADMSG;
        if (h->attr_size < ATTR_SIZE_VER0 + sizeof(struct file_section) || h->attr_size % 8 != 0)
                return -EBADMSG;
        if (h->attrs.size % h->attr_size != 0)
                return -EBADMSG;
        n = h->attrs.size / h->attr_size;
        if (n == 0)
                return -EBADMSG;

        pd->events = calloc(n, sizeof(*pd->events));
        if (!pd->events)
                return -ENOMEM;
        pd->n_events = n;

        for (size_t i = 0; i < n; i++) {
                const uint8_t *entry = pd->base + h->attrs.offset + i * h->attr_size;
                struct perfdata_event *ev = &pd->events[i];
                size_t room = h->attr_size - sizeof(struct file_section);
                struct file_section ids;
                uint32_t asz;

                /* The attr's own size says how much of it this writer knew;
                 * 0 is the first ABI. Beyond our struct: fields we cannot
                 * use, and none of them changes the record layout. */
                memcpy(&asz, entry + offsetof(struct perf_event_attr, size), sizeof(asz));
                if (asz == 0)
                        asz = ATTR_SIZE_VER0;
                if (asz < ATTR_SIZE_VER0 || asz > room)
                        return -EBADMSG;
                memcpy(&ev->attr, entry, asz < sizeof(ev->attr) ? asz : sizeof(ev->attr));
                ev->attr.size = sizeof(ev->attr);

                memcpy(&ids, entry + room, sizeof(ids));
                if (!section_ok(pd, &ids) || ids.size % 8 != 0)
                        return -EBADMSG;
                ev->n_ids = ids.size / 8;
                if (ev->n_ids > 0) {
                        ev->ids = malloc(ids.size);
                        if (!ev->ids)
                                return -ENOMEM;
                        memcpy(ev->ids, pd->base + ids.offset, ids.size);
                }
                n_ids += ev->n_ids;
        }

        pd->ids = calloc(n_ids ? n_ids : 1, sizeof(*pd->ids));
        if (!pd->ids)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                for (size_t k = 0; k < pd->events[i].n_ids; k++)
                        pd->ids[pd->n_ids++] = (struct id_entry) { .id = pd->events[i].ids[k], .event = i };
        qsort(pd->ids, pd->n_ids, sizeof(*pd->ids), id_cmp);
        for (size_t i = 1; i < pd->n_ids; i++)
                if (pd->ids[i].id == pd->ids[i - 1].id && pd->ids[i].event != pd->ids[i - 1].event)
                        return -EBADMSG;
        return 0;
}

/* The feature sections follow the data, one per set bit, in bit order. */
static int read_feature_table(struct perfdata *pd, const struct file_header *h) {
        struct file_section table = { .offset = h->data.offset + h->data.size };
        unsigned n = 0;
        struct cursor c;

        for (unsigned b = 0; b < PERFDATA_FEAT_MAX; b++)
                if (perfdata_has_feature(pd, b))
                        n++;
        table.size = (uint64_t) n * sizeof(struct file_section);
        if (!section_ok(pd, &table))
                return -EBADMSG;
        c = section_cursor(pd, &table);
        for (unsigned b = 0; b < PERFDATA_FEAT_MAX; b++) {
                struct file_section *s = &pd->feat[b];
                int r;

                if (!perfdata_has_feature(pd, b))
                        continue;
                r = cursor_u64(&c, &s->offset);
                if (r >= 0)
                        r = cursor_u64(&c, &s->size);
                if (r < 0)
                        return r;
                if (!section_ok(pd, s))
                        return -EBADMSG;
        }
        return 0;
}

/* HEADER_TRACING_DATA: trace-cmd's tracing data, of which we want the
 * event format texts (util/trace-event-info.c writes, -read.c reads):
 *   magic, version "0.6\0", u8 big_endian, u8 long_size, u32 page_size,
 *   "header_page\0" u64 size + text, "header_event\0" u64 size + text,
 *   u32 n ftrace formats { u64 size + text },
 *   u32 n systems { "system\0" u32 n { u64 size + format text } },
 *   then kallsyms, printk formats and saved cmdlines, which we skip. */
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

static int skip_named_text(struct cursor *c, const char *name) {
        const char *s;
        uint64_t n;
        int r;

        r = cursor_cstr(c, &s);
        if (r < 0)
                return r;
        if (strcmp(s, name) != 0)
                return -EBADMSG;
        r = cursor_u64(c, &n);
        if (r < 0)
                return r;
        return cursor_take(c, n, NULL);
}

static int read_tracing_data(struct perfdata *pd) {
        struct cursor c = section_cursor(pd, &pd->feat[PERFDATA_FEAT_TRACING_DATA]);
        const char *version;
        const void *magic;
        uint8_t big_endian, long_size;
        uint32_t page_size, n;
        int r;

        r = cursor_take(&c, sizeof(tracing_magic), &magic);
        if (r < 0)
                return r;
        if (memcmp(magic, tracing_magic, sizeof(tracing_magic)) != 0)
                return -EBADMSG;
        r = cursor_cstr(&c, &version);
        if (r >= 0)
                r = cursor_u8(&c, &big_endian);
        if (r >= 0)
                r = cursor_u8(&c, &long_size);
        if (r >= 0)
                r = cursor_u32(&c, &page_size);
        if (r < 0)
                return r;
        /* The numbers below are in the recording machine's order, which
         * the file's magic already said is ours. */
        if (big_endian != (__BYTE_ORDER == __BIG_ENDIAN))
                return -EBADMSG;

        r = skip_named_text(&c, "header_page");
        if (r >= 0)
                r = skip_named_text(&c, "header_event");
        if (r >= 0)
                r = cursor_u32(&c, &n);
        if (r < 0)
                return r;
        for (uint32_t i = 0; i < n; i++) {
                uint64_t size;

                r = cursor_u64(&c, &size);
                if (r >= 0)
                        r = cursor_take(&c, size, NULL);
                if (r < 0)
                        return r;
        }

        r = cursor_u32(&c, &n);
        if (r < 0)
                return r;
        for (uint32_t i = 0; i < n; i++) {
                const char *system;
                uint32_t m;

                r = cursor_cstr(&c, &system);
                if (r >= 0)
                        r = cursor_u32(&c, &m);
                if (r < 0)
                        return r;
                for (uint32_t k = 0; k < m; k++) {
                        const void *text;
                        uint64_t size;

                        r = cursor_u64(&c, &size);
                        if (r >= 0)
                                r = cursor_take(&c, size, &text);
                        if (r >= 0)
                                r = add_format(pd, system, text, size);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

/* HEADER_EVENT_DESC: u32 nr, u32 attr_size, then per event the attr,
 * u32 nr_ids, a perf string (u32 len, len bytes NUL-padded) and the ids. */
static int read_event_desc(struct perfdata *pd) {
        struct cursor c = section_cursor(pd, &pd->feat[PERFDATA_FEAT_EVENT_DESC]);
        uint32_t nr, attr_size;
        int r;

        r = cursor_u32(&c, &nr);
        if (r >= 0)
                r = cursor_u32(&c, &attr_size);
        if (r < 0)
                return r;
        for (uint32_t i = 0; i < nr; i++) {
                struct perfdata_event *ev = NULL;
                const void *name, *ids;
                uint32_t nr_ids, len;

                r = cursor_take(&c, attr_size, NULL);
                if (r >= 0)
                        r = cursor_u32(&c, &nr_ids);
                if (r >= 0)
                        r = cursor_u32(&c, &len);
                if (r >= 0)
                        r = cursor_take(&c, len, &name);
                if (r >= 0)
                        r = cursor_take_array(&c, nr_ids, 8, &ids);
                if (r < 0)
                        return r;
                if (len == 0 || !memchr(name, 0, len))
                        return -EBADMSG;

                /* Whose: by its first id, else by position (both are
                 * written in the order of the attrs). */
                if (nr_ids > 0) {
                        uint64_t id;

                        memcpy(&id, ids, sizeof(id));
                        ev = event_by_id(pd, id);
                }
                if (!ev && nr == pd->n_events)
                        ev = &pd->events[i];
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
        struct cursor c = section_cursor(pd, &pd->feat[PERFDATA_FEAT_CLOCK_DATA]);
        uint32_t version, clockid;
        int r;

        r = cursor_u32(&c, &version);
        if (r >= 0)
                r = cursor_u32(&c, &clockid);
        if (r >= 0)
                r = cursor_u64(&c, &pd->clock.wall_ns);
        if (r >= 0)
                r = cursor_u64(&c, &pd->clock.clock_ns);
        if (r < 0)
                return r;
        if (version < 1)
                return -EBADMSG;
        pd->clock.clockid = (clockid_t) clockid;
        pd->has_clock = true;
        return 0;
}

/* Tracepoint attrs carry the tracepoint id as config: the format with that
 * ID names and decodes the event. */
static int name_events(struct perfdata *pd) {
        for (size_t i = 0; i < pd->n_events; i++) {
                struct perfdata_event *ev = &pd->events[i];

                if (ev->attr.type != PERF_TYPE_TRACEPOINT)
                        continue;
                for (size_t k = 0; k < pd->n_formats; k++) {
                        struct format *f = pd->formats[k];

                        if (f->id != ev->attr.config)
                                continue;
                        ev->format = f;
                        free(ev->name);
                        if (asprintf(&ev->name, "%s:%s", f->system, f->name) < 0) {
                                ev->name = NULL;
                                return -ENOMEM;
                        }
                        break;
                }
        }
        return 0;
}

static int perfdata_parse(struct perfdata *pd) {
        struct file_header h;
        int r;

        if (pd->size < 8)
                return -EBADMSG;
        if (perfdata_unsupported(pd->base, pd->size))
                return -EPROTONOSUPPORT;
        if (pd->size < sizeof(h))
                return -EBADMSG;
        memcpy(&h, pd->base, sizeof(h));
        if (h.magic != MAGIC2 || h.size < sizeof(h) || h.size > pd->size)
                return -EBADMSG;
        memcpy(pd->features, h.features, sizeof(pd->features));

        if (!section_ok(pd, &h.data) || h.data.offset < h.size)
                return -EBADMSG;
        pd->data_start = pd->pos = h.data.offset;
        pd->data_end = h.data.offset + h.data.size;

        r = read_feature_table(pd, &h);
        if (r < 0)
                return r;
        if (perfdata_has_feature(pd, PERFDATA_FEAT_COMPRESSED))
                return -EOPNOTSUPP;

        r = read_attrs(pd, &h);
        if (r < 0)
                return r;
        r = setup_id_positions(pd);
        if (r < 0)
                return r;
        if (perfdata_has_feature(pd, PERFDATA_FEAT_EVENT_DESC)) {
                r = read_event_desc(pd);
                if (r < 0)
                        return r;
        }
        if (perfdata_has_feature(pd, PERFDATA_FEAT_TRACING_DATA)) {
                r = read_tracing_data(pd);
                if (r < 0)
                        return r;
        }
        if (perfdata_has_feature(pd, PERFDATA_FEAT_CLOCK_DATA)) {
                r = read_clock_data(pd);
                if (r < 0)
                        return r;
        }
        r = name_events(pd);
        if (r < 0)
                return r;

        pd->bounce = malloc(1 << 16);
        if (!pd->bounce)
                return -ENOMEM;
        return 0;
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
        *ret = TAKE_PTR(pd);
        return 0;
}

/* For what cannot be mapped (a pipe, /dev/stdin). */
static int read_all(int fd, void **ret, size_t *ret_size) {
        _cleanup_(freep) uint8_t *buf = NULL;
        size_t len = 0, cap = 0;

        for (;;) {
                ssize_t n;

                if (cap - len < 65536) {
                        uint8_t *b;

                        cap = cap ? cap * 2 : 1 << 20;
                        b = realloc(buf, cap);
                        if (!b)
                                return -ENOMEM;
                        buf = b;
                }
                n = read(fd, buf + len, cap - len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        break;
                len += (size_t) n;
        }
        *ret = TAKE_PTR(buf);
        *ret_size = len;
        return 0;
}

int perfdata_open(const char *path, struct perfdata **ret) {
        _cleanup_(perfdata_freep) struct perfdata *pd = NULL;
        _cleanup_(closep) int fd = -1;
        struct stat st;
        int r;

        if (!path || !ret)
                return -EINVAL;
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (S_ISDIR(st.st_mode))
                return -EISDIR;

        pd = calloc(1, sizeof(*pd));
        if (!pd)
                return -ENOMEM;
        if (S_ISREG(st.st_mode)) {
                if (st.st_size == 0)
                        return -EBADMSG;
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
                r = read_all(fd, &pd->buf, &pd->size);
                if (r < 0)
                        return r;
                pd->base = pd->buf;
        }

        r = perfdata_parse(pd);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(pd);
        return 0;
}

struct perfdata *perfdata_free(struct perfdata *pd) {
        if (!pd)
                return NULL;
        for (size_t i = 0; i < pd->n_events; i++) {
                free(pd->events[i].ids);
                free(pd->events[i].name);
        }
        free(pd->events);
        free(pd->ids);
        for (size_t i = 0; i < pd->n_formats; i++)
                format_free(pd->formats[i]);
        free(pd->formats);
        free(pd->bounce);
        if (pd->map)
                munmap(pd->map, pd->map_size);
        free(pd->buf);
        free(pd);
        return NULL;
}

size_t perfdata_n_events(const struct perfdata *pd) {
        return pd ? pd->n_events : 0;
}

const struct perfdata_event *perfdata_event(const struct perfdata *pd, size_t i) {
        if (!pd || i >= pd->n_events)
                return NULL;
        return &pd->events[i];
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

/* ---- the data section ------------------------------------------------ */

void perfdata_rewind(struct perfdata *pd) {
        if (pd)
                pd->pos = pd->data_start;
}

uint64_t perfdata_offset(const struct perfdata *pd) {
        return pd ? pd->pos : 0;
}

static uint64_t load_u64(const uint8_t *p) {
        uint64_t v;

        memcpy(&v, p, sizeof(v));
        return v;
}

int perfdata_next(struct perfdata *pd, struct perfdata_record *ret) {
        const struct perfdata_event *ev = NULL, *layout = NULL;
        struct perf_event_header h;
        const uint8_t *p;
        uint64_t left, total, body;
        int r;

        if (!pd || !ret)
                return -EINVAL;
        if (pd->pos >= pd->data_end)
                return 0;
        left = pd->data_end - pd->pos;
        if (left < sizeof(h))
                return -EBADMSG;
        p = pd->base + pd->pos;
        memcpy(&h, p, sizeof(h));
        if (h.size < sizeof(h) || h.size > left)
                return -EBADMSG;
        total = h.size;
        body = h.size - sizeof(h);

        /* AUXTRACE's payload follows the record and is not counted in its
         * size: the record's first u64 says how long it is. */
        if (h.type == PERFDATA_RECORD_AUXTRACE) {
                uint64_t aux;

                if (body < 8)
                        return -EBADMSG;
                aux = load_u64(p + sizeof(h));
                if (aux > left - total)
                        return -EBADMSG;
                total += aux;
        }
        if (h.type == PERFDATA_RECORD_COMPRESSED || h.type == PERFDATA_RECORD_COMPRESSED2)
                return -EOPNOTSUPP;

        /* Parsers read u64s through pointers into the record. */
        if ((uintptr_t) p % 8 != 0) {
                memcpy(pd->bounce, p, h.size);
                p = (const uint8_t *) pd->bounce;
        }

        *ret = (struct perfdata_record) {
                .offset = pd->pos,
                .header = (const struct perf_event_header *) p,
                .rec = { .type = h.type, .misc = h.misc },
        };

        if (h.type >= PERFDATA_RECORD_USER_TYPE_START) {
                pd->pos += total;
                return 1;
        }

        if (pd->n_events == 1)
                ev = layout = &pd->events[0];
        else if (h.type == PERF_RECORD_SAMPLE) {
                uint64_t at = 8 * (uint64_t) pd->sample_id_pos;

                if (body < at + 8)
                        return -EBADMSG;
                ev = layout = event_by_id(pd, load_u64(p + sizeof(h) + at));
        } else if (pd->trailer_id_pos > 0) {
                uint64_t back = 8 * (uint64_t) pd->trailer_id_pos;

                if (body < back)
                        return -EBADMSG;
                ev = layout = event_by_id(pd, load_u64(p + h.size - back));
                /* perf's synthesized records (the tasks and maps that
                 * existed before recording) carry an id of 0. */
                if (!layout && pd->trailer_uniform)
                        layout = &pd->events[0];
        } else
                layout = &pd->events[0];        /* no trailer to lay out */

        if (layout) {
                r = record_parse(&layout->attr, ret->header, &ret->rec);
                if (r < 0)
                        return r;
                ret->parsed = true;
        }
        ret->event = ev;
        pd->pos += total;
        return 1;
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
