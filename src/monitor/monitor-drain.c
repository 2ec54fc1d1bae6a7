/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The hot path: one ring's records, each to its event's layout and the
 * caller's handler, with losses and malformed records counted. */


#include <string.h>
#include <unistd.h>

#include "monitor-int.h"

/* A record of D's ring that does not parse: counted, and the first one
 * kept for monitor_ring_take_malformed() (no allocation: a fixed copy). */
static void drain_bad(struct drain *d, const struct perf_event_header *hdr, const char *why) {
        struct perf_cpu *c = d->c;

        c->bad++;
        if (c->malformed_kept)
                return;
        c->malformed = (struct monitor_malformed) {
                .why = why,
                .type = hdr->type,
                .misc = hdr->misc,
                .size = hdr->size,
                .n_bytes = hdr->size < MONITOR_MALFORMED_BYTES ? hdr->size : MONITOR_MALFORMED_BYTES,
        };
        memcpy(c->malformed.bytes, hdr, c->malformed.n_bytes);
        c->malformed_kept = true;
}

static int drain_sample(struct drain *d, const struct perf_event_header *hdr) {
        const struct id_entry *e;
        const struct handle *hd;
        struct perf_sample s;
        uint64_t id;

        /* IDENTIFIER leads every sample whatever else its event asked for
         * (source_attr()): find the event, then parse with its layout. */
        if (hdr->size < sizeof(*hdr) + sizeof(id)) {
                drain_bad(d, hdr, "a sample too short for its id");
                return 0;
        }
        memcpy(&id, hdr + 1, sizeof(id));
        /* The flush's own sample: it only made the kernel write. */
        if (id == d->c->flush_id && d->c->flush >= 0) {
                d->quiet++;
                return 0;
        }
        e = d->hint && d->hint->id == id ? d->hint : index_find(d->m, id);
        if (!e) {
                drain_bad(d, hdr, "a sample of an id no open event has");
                return 0;
        }

        /* A removed source: its userdata may be gone. */
        hd = &d->m->handles[e->handle];
        if (hd->state != HANDLE_ACTIVE)
                return 0;

        d->quiet += hd->quiet;
        /* A scan parsed it, and noted what the handler made of it. */
        if (d->note && d->h && d->h->noted) {
                d->h->noted(hd->userdata, d->c->cpu, &hd->attr, hdr, d->c->notes + d->note->off, d->note->len,
                            d->ctx);
                return 0;
        }
        if (sample_parse(&hd->attr, hdr, &s) < 0) {
                drain_bad(d, hdr, "a sample that does not fit its event's sample_type");
                return 0;
        }

        if (d->h && d->h->sample)
                d->h->sample(hd->userdata, d->c->cpu, &s, d->ctx);
        return 0;
}

static int drain_lost(struct drain *d, const struct perf_event_header *hdr) {
        struct perf_record rec;
        uint64_t lost, v[2];

        if (record_parse(&d->m->attr, hdr, &rec) < 0) {
                drain_bad(d, hdr, "a PERF_RECORD_LOST that does not parse");
                return 0;
        }

        lost = rec.lost.lost;
        /* Our own flush samples among them are no one's loss. */
        if (d->c->flush >= 0 && d->c->flush_counts && read(d->c->flush, v, sizeof(v)) == sizeof(v) &&
            v[1] > d->c->flush_lost) {
                uint64_t own = v[1] - d->c->flush_lost;

                if (own > lost)
                        own = lost;
                d->c->flush_lost += own;
                lost -= own;
        }
        if (lost == 0)
                return 0;
        d->c->lost += lost;
        if (d->h && d->h->lost)
                d->h->lost(d->c->cpu, lost, d->ctx);
        return 0;
}

/* Side records (the records option, THROTTLE, LOST_SAMPLES, ...): with
 * sample_id_all, IDENTIFIER is the record's last u64 (perf_event_open(2),
 * "sample_id"), which names the event and so the trailer's layout. */
static int drain_record(struct drain *d, const struct perf_event_header *hdr) {
        const struct id_entry *e;
        const struct handle *hd;
        struct perf_record rec;
        uint64_t id;

        if (!d->h || !d->h->record)
                return 0;
        if (hdr->size < sizeof(*hdr) + sizeof(id)) {
                drain_bad(d, hdr, "a side record too short for its id");
                return 0;
        }
        memcpy(&id, (const uint8_t *) hdr + hdr->size - sizeof(id), sizeof(id));
        e = d->hint && d->hint->id == id ? d->hint : index_find(d->m, id);
        if (!e)
                return 0;       /* the ring owner's own, or an event gone */
        hd = &d->m->handles[e->handle];
        if (hd->state != HANDLE_ACTIVE)
                return 0;

        d->quiet += hd->quiet;
        if (record_parse(&hd->attr, hdr, &rec) < 0) {
                drain_bad(d, hdr, "a side record that does not parse");
                return 0;
        }
        d->h->record(hd->userdata, d->c->cpu, hdr, &rec, d->ctx);
        return 0;
}

int drain_one(const struct perf_event_header *hdr, void *userdata) {
        struct drain *d = userdata;

        switch (hdr->type) {
        case PERF_RECORD_SAMPLE:
                return drain_sample(d, hdr);
        case PERF_RECORD_LOST:
                /* In-band: the kernel had no room for this many records. */
                return drain_lost(d, hdr);
        default:
                return drain_record(d, hdr);
        }
}

int monitor_drain(struct monitor *m, size_t i, unsigned budget, const struct monitor_handler *h, void *ctx) {
        struct perf_cpu *c;
        struct drain d;
        uint64_t tail;
        unsigned n_scan;
        int r;

        if (!m || i >= m->n_cpus)
                return -EINVAL;
        if (m->cpus[i].fd < 0) {
                m->drain_quiet = 0;
                return 0;
        }

        c = &m->cpus[i];
        d = (struct drain) { .m = m, .c = c, .h = h, .ctx = ctx };
        tail = c->ring.page->data_tail;
        ring_look(m, c, ring_head(&c->ring));
        /* What scans kept (time order's, before the order changed) goes
         * first; what they skipped is gone. */
        n_scan = c->n_skipped;
        c->n_skipped = 0;
        if (c->scanning) {
                uint64_t head = ring_head(&c->ring);

                while (c->i_kept < c->n_kept) {
                        uint64_t pos = c->kept[c->i_kept];
                        const struct perf_event_header *hdr = ring_peek(&c->ring, &pos, head);

                        d.note = scan_note(c);
                        if (hdr)
                                (void) drain_one(hdr, &d);
                        c->i_kept++;
                        n_scan++;
                }
                d.note = NULL;
                ring_consume(&c->ring, c->scanned);
                scan_settle(c);
        }
        r = ring_read(&c->ring, budget, drain_one, &d);
        if (r >= 0)
                r += (int) n_scan;
        c->tail_prev = tail;
        m->drain_quiet = d.quiet;
        return r;
}

unsigned monitor_drain_quiet(const struct monitor *m) {
        return m ? m->drain_quiet : 0;
}
