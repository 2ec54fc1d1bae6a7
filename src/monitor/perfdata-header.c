/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* perf.data's header: the attrs and their ids, the feature sections
 * (tracing data, event names, clock data), and the tree of the header
 * line (perfdata_header()). */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "perfdata-int.h"

/* trace-cmd's tracing data (util/trace-event-info.c). */
static const char tracing_magic[] = { 0x17, 0x08, 'D', 't', 'r', 'a', 'c', 'i', 'n', 'g' };

/* A NUL-terminated string that ends inside the cursor. */
static int cursor_cstr(struct cursor *c, const char **ret) {
        const uint8_t *nul = memchr(c->p, 0, cursor_left(c));

        if (!nul)
                return -EBADMSG;
        *ret = (const char *) c->p;
        c->p = nul + 1;
        return 0;
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

struct perfdata_event *event_by_id(const struct perfdata *pd, uint64_t id) {
        const struct id_entry *e;

        if (pd->n_ids == 0)
                return NULL;
        e = id_slot(pd, pd->ids, pd->ids_cap, id);
        return e->event ? pd->events[e->event - 1] : NULL;
}

/* Adds an event with ATTR (host order) and N_IDS ids at IDS (file order). */
int add_event(struct perfdata *pd, const struct perf_event_attr *attr, const uint8_t *ids, size_t n_ids) {
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
int read_attr(const struct perfdata *pd, const uint8_t *p, size_t room, struct perf_event_attr *ret) {
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
void setup_id_positions(struct perfdata *pd) {
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

int read_attrs(struct perfdata *pd, const struct file_header *h) {
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
int read_feature_table(struct perfdata *pd, const struct file_header *h) {
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

int read_tracing_data(struct perfdata *pd, const uint8_t *p, size_t size) {
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

int use_features(struct perfdata *pd) {
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
int build_header(struct perfdata *pd) {
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
