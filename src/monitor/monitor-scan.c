/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Scans: the rings' first look, made by several threads at once.
 *
 * One thread merging every ring in time order reads some 9 M records a
 * second; a 16-CPU host makes 28 M (issue 33). Most of what a busy host
 * writes no client asked for, and such a record needs nothing of the
 * merge: it is counted, and gone. So before a merged pass, a caller with
 * threads (src/basic/workers.c) has each ring scanned by one of them:
 * monitor_scan() walks the ring from where its last scan stopped towards
 * its head, hands each sample's event to the handler's scan(), and keeps
 * the position of every record it does not skip (side records, samples
 * of the events a client wants, anything that does not parse). A kept
 * sample may come with a note: bytes the handler made of it on the
 * thread (its line, encoded there), which the monitor copies into the
 * ring's notes and the merge hands to noted() in place of a parse. The records
 * stay where the kernel wrote them: the ring's tail does not move until
 * the merge has handed out every kept record before it, so nothing is
 * copied and the kernel overwrites nothing still kept. The merge then
 * takes a scanning ring's kept records in order, and goes on from where
 * the scan stopped (scan_first(), scan_step()). A scan stops where the
 * ring keeps as many records as the merge that follows hands out
 * (max_kept): scan() decides by what clients want now (a client's queue
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
                c->notes_len = 0;
        }
}

void scan_done(struct perf_cpu *c) {
        free(c->kept);
        free(c->kept_notes);
        free(c->notes);
        c->kept = NULL;
        c->kept_notes = NULL;
        c->notes = NULL;
        c->notes_len = c->notes_cap = 0;
        c->cap_kept = c->n_kept = c->i_kept = 0;
        c->scanning = false;
        c->n_skipped = 0;
        c->skip_last = 0;
}

/* Room for one more kept position: doubling, up to one per 8 bytes of the
 * ring (the smallest record); never per record. */
static int kept_grow(struct perf_cpu *c) {
        size_t cap = c->cap_kept ? 2 * c->cap_kept : 1024, max = c->ring.size / 8;
        struct kept_note *kn;
        uint64_t *k;

        if (c->cap_kept >= max)
                return -ENOBUFS;
        if (cap > max)
                cap = max;
        k = realloc(c->kept, cap * sizeof(*k));
        if (!k)
                return -ENOMEM;
        c->kept = k;
        kn = realloc(c->kept_notes, cap * sizeof(*kn));
        if (!kn)
                return -ENOMEM;
        c->kept_notes = kn;
        c->cap_kept = cap;
        return 0;
}

/* A ring's notes take no more than this: a scan keeps a few thousand
 * records (max_kept), lines of a few hundred bytes; past it a record is
 * kept without its note, and the merge makes it again. */
#define NOTES_MAX (4u * 1024u * 1024u)

/* N's bytes kept for the record about to be kept, or none (no room). */
static struct kept_note note_keep(struct perf_cpu *c, const struct monitor_note *n) {
        size_t need = c->notes_len + n->len;

        if (n->len > MONITOR_NOTE_MAX || need > NOTES_MAX)
                return (struct kept_note) { NOTE_NONE, 0 };
        if (need > c->notes_cap) {
                size_t cap = c->notes_cap ? 2 * c->notes_cap : 64 * 1024;
                char *p;

                while (cap < need)
                        cap *= 2;
                p = realloc(c->notes, cap);
                if (!p)
                        return (struct kept_note) { NOTE_NONE, 0 };
                c->notes = p;
                c->notes_cap = cap;
        }
        memcpy(c->notes + c->notes_len, n->data, n->len);
        c->notes_len = need;
        return (struct kept_note) { (uint32_t) (need - n->len), (uint32_t) n->len };
}

/* A scan goes on from where the merge is: the kept records it handed out
 * and their notes are dropped from the lists' fronts. */
static void kept_compact(struct perf_cpu *c) {
        size_t n = c->n_kept - c->i_kept;
        uint32_t from = NOTE_NONE;

        memmove(c->kept, c->kept + c->i_kept, n * sizeof(*c->kept));
        memmove(c->kept_notes, c->kept_notes + c->i_kept, n * sizeof(*c->kept_notes));
        c->n_kept = n;
        c->i_kept = 0;
        for (size_t k = 0; k < n && from == NOTE_NONE; k++)
                from = c->kept_notes[k].off;
        if (from == NOTE_NONE) {
                c->notes_len = 0;
                return;
        }
        memmove(c->notes, c->notes + from, c->notes_len - from);
        c->notes_len -= from;
        for (size_t k = 0; k < n; k++)
                if (c->kept_notes[k].off != NOTE_NONE)
                        c->kept_notes[k].off -= from;
}

/* What the handler makes of sample H (enum monitor_scan_verdict): only
 * of a known, active event that is no quiet source (the process table's,
 * which the merge must give in order). */
static int scan_sample(struct monitor *m, struct perf_cpu *c, const struct perf_event_header *h,
                       const struct monitor_scan_opts *o, const struct monitor_handler *hd_fn, void *ctx,
                       unsigned worker, struct monitor_note *note) {
        const struct id_entry *e;
        const struct handle *hd;
        uint64_t id, t;
        int v;

        if (h->size < sizeof(*h) + sizeof(id))
                return MONITOR_SCAN_KEEP;
        memcpy(&id, h + 1, sizeof(id));
        if (id == c->flush_id && c->flush >= 0)
                return MONITOR_SCAN_KEEP;
        e = index_find(m, id);
        if (!e)
                return MONITOR_SCAN_KEEP;
        hd = &m->handles[e->handle];
        if (hd->state != HANDLE_ACTIVE || hd->quiet)
                return MONITOR_SCAN_KEEP;
        v = hd_fn->scan(hd->userdata, &hd->attr, h, worker, note, ctx);
        if (v == MONITOR_SCAN_NOTE && !hd_fn->noted)
                return MONITOR_SCAN_KEEP;
        if (v == MONITOR_SCAN_SKIP && record_time_attr(&hd->attr, h, &t) && t > c->skip_last &&
            t <= o->time_limit)
                c->skip_last = t;
        return v;
}

int monitor_scan(struct monitor *m, size_t i, const struct monitor_scan_opts *o, const struct monitor_handler *h,
                 void *ctx, unsigned worker) {
        const struct perf_event_header *hdr;
        struct perf_cpu *c;
        uint64_t head, pos;
        unsigned n = 0;

        if (!m || i >= m->n_cpus || !o || !h || !h->scan)
                return -EINVAL;
        c = &m->cpus[i];
        if (c->fd < 0)
                return 0;
        if (!c->scanning) {
                c->scanning = true;
                c->scanned = c->ring.page->data_tail;
                c->n_kept = c->i_kept = 0;
                c->notes_len = 0;
        } else if (c->i_kept > 0)
                kept_compact(c);
        head = ring_head(&c->ring);
        pos = c->scanned;
        while ((o->max_kept == 0 || c->n_kept < o->max_kept) && (hdr = ring_peek(&c->ring, &pos, head))) {
                struct monitor_note note = {};
                int v = MONITOR_SCAN_KEEP;

                /* Out of room: the rest waits for the merge, unseen. */
                if (c->n_kept == c->cap_kept && kept_grow(c) < 0)
                        break;
                if (hdr->type == PERF_RECORD_SAMPLE)
                        v = scan_sample(m, c, hdr, o, h, ctx, worker, &note);
                if (v == MONITOR_SCAN_SKIP) {
                        n++;
                        pos += hdr->size;
                        continue;
                }
                c->kept_notes[c->n_kept] = v == MONITOR_SCAN_NOTE ? note_keep(c, &note)
                                                                  : (struct kept_note) { NOTE_NONE, 0 };
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
