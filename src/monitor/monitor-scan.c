/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Scans: the rings' first look, made by several threads at once.
 *
 * One thread merging every ring in time order reads some 9 M records a
 * second; a 16-CPU host makes 28 M (issue 33). Most of what a busy host
 * writes no client asked for, and such a record needs nothing of the
 * merge: it is counted, and gone. So before a merged pass, a caller with
 * threads (src/basic/workers.c) has each ring scanned by one of them:
 * monitor_scan() walks the ring from where its last scan stopped towards
 * its head, hands each sample's event to the handler's skip(), and keeps the
 * position of every record it does not skip (side records, samples of
 * the events a client wants, anything that does not parse). The records
 * stay where the kernel wrote them: the ring's tail does not move until
 * the merge has handed out every kept record before it, so nothing is
 * copied and the kernel overwrites nothing still kept. The merge then
 * takes a scanning ring's kept records in order, and goes on from where
 * the scan stopped (scan_first(), scan_step()). A scan stops where the
 * ring keeps as many records as the merge that follows hands out
 * (max_kept): skip() decides by what clients want now (a client's queue
 * that drops, one that subscribes), and a sample timed well past what
 * that merge reaches would be judged by a state a later one no longer
 * has. A skipped sample is not parsed: one the kernel wrote too short
 * for its sample_type (it writes none) counts as its event's, not as
 * malformed as the merge would count it.
 *
 * Scans of different rings share nothing they write: each touches its
 * own ring's state, and reads the id index and the handles, which only
 * monitor_add() and monitor_remove() change, never during a scan. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "monitor-int.h"

void scan_step(struct perf_cpu *c, const struct perf_event_header *cur) {
        if (c->scanning && c->i_kept < c->n_kept) {
                c->i_kept++;
                c->pos = c->i_kept < c->n_kept ? c->kept[c->i_kept] : c->scanned;
                return;
        }
        c->pos += cur->size;
}

void scan_place(const struct monitor *m, struct perf_cpu *c) {
        if (c->scanning && c->i_kept == c->n_kept && c->skip_last > c->last && c->skip_last <= m->order_limit)
                c->last = c->skip_last;
}

void scan_settle(struct perf_cpu *c) {
        if (c->scanning && c->i_kept == c->n_kept) {
                c->scanning = false;
                c->n_kept = c->i_kept = 0;
        }
}

void scan_done(struct perf_cpu *c) {
        free(c->kept);
        c->kept = NULL;
        c->cap_kept = c->n_kept = c->i_kept = 0;
        c->scanning = false;
        c->n_skipped = 0;
        c->skip_last = 0;
}

/* Room for one more kept position: doubling, up to one per 8 bytes of the
 * ring (the smallest record); never per record. */
static int kept_grow(struct perf_cpu *c) {
        size_t cap = c->cap_kept ? 2 * c->cap_kept : 1024, max = c->ring.size / 8;
        uint64_t *k;

        if (c->cap_kept >= max)
                return -ENOBUFS;
        if (cap > max)
                cap = max;
        k = realloc(c->kept, cap * sizeof(*k));
        if (!k)
                return -ENOMEM;
        c->kept = k;
        c->cap_kept = cap;
        return 0;
}

/* Whether sample H goes no further than SKIP: its event is known and
 * active, not a quiet source (the process table's, which the merge must
 * give in order), and the handler counted it. */
static bool scan_skips(struct monitor *m, struct perf_cpu *c, const struct perf_event_header *h,
                       const struct monitor_scan_opts *o, const struct monitor_handler *hd_fn, void *ctx,
                       unsigned worker) {
        const struct id_entry *e;
        const struct handle *hd;
        uint64_t id, t;

        if (h->size < sizeof(*h) + sizeof(id))
                return false;
        memcpy(&id, h + 1, sizeof(id));
        if (id == c->flush_id && c->flush >= 0)
                return false;
        e = index_find(m, id);
        if (!e)
                return false;
        hd = &m->handles[e->handle];
        if (hd->state != HANDLE_ACTIVE || hd->quiet || !hd_fn->skip(hd->userdata, &hd->attr, h, worker, ctx))
                return false;
        if (record_time_attr(&hd->attr, h, &t) && t > c->skip_last && t <= o->time_limit)
                c->skip_last = t;
        return true;
}

int monitor_scan(struct monitor *m, size_t i, const struct monitor_scan_opts *o, const struct monitor_handler *h,
                 void *ctx, unsigned worker) {
        const struct perf_event_header *hdr;
        struct perf_cpu *c;
        uint64_t head, pos;
        unsigned n = 0;

        if (!m || i >= m->n_cpus || !o || !h || !h->skip)
                return -EINVAL;
        c = &m->cpus[i];
        if (c->fd < 0)
                return 0;
        if (!c->scanning) {
                c->scanning = true;
                c->scanned = c->ring.page->data_tail;
                c->n_kept = c->i_kept = 0;
        } else if (c->i_kept > 0) {
                memmove(c->kept, c->kept + c->i_kept, (c->n_kept - c->i_kept) * sizeof(*c->kept));
                c->n_kept -= c->i_kept;
                c->i_kept = 0;
        }
        head = ring_head(&c->ring);
        pos = c->scanned;
        while ((o->max_kept == 0 || c->n_kept < o->max_kept) && (hdr = ring_peek(&c->ring, &pos, head))) {
                if (hdr->type == PERF_RECORD_SAMPLE && scan_skips(m, c, hdr, o, h, ctx, worker)) {
                        n++;
                        pos += hdr->size;
                        continue;
                }
                /* Out of room: the rest waits for the merge, unseen. */
                if (c->n_kept == c->cap_kept && kept_grow(c) < 0)
                        break;
                c->kept[c->n_kept++] = pos;
                pos += hdr->size;
        }
        c->scanned = pos;
        c->n_skipped += n;
        return (int) n;
}

unsigned monitor_drain_skipped(const struct monitor *m) {
        return m ? m->drain_skipped : 0;
}

uint64_t monitor_ring_unscanned(const struct monitor *m, size_t i) {
        const struct perf_cpu *c;

        if (!m || i >= m->n_cpus || m->cpus[i].fd < 0)
                return 0;
        c = &m->cpus[i];
        return cpu_head(c) - (c->scanning ? c->scanned : c->ring.page->data_tail);
}
