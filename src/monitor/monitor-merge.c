/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The time-ordered drain: a k-way merge of the rings.
 *
 * perf's ordered events (tools/perf/util/ordered-events.c) sort what perf
 * record wrote and flush at each FINISHED_ROUND: what every ring had been
 * read past in the round before. Live, the rings themselves are the queue:
 * a record stays where the kernel wrote it until it may go, so the merge
 * copies and allocates nothing. Each ring's records come in time order
 * (the kernel writes a CPU's records as it takes their times), so the
 * next record of every ring, in a heap by time, gives the oldest of all.
 * What it may not yet hand out is a record that another CPU may still
 * overtake: a ring read to its head can still get records at most HOLD
 * older than the clock read before the heads were loaded (taken, not yet
 * published), and none older than what it gave last. */

#include <string.h>

#include "monitor-int.h"

bool record_time_attr(const struct perf_event_attr *attr, const struct perf_event_header *h, uint64_t *ret) {
        uint64_t off;

        if (!(attr->sample_type & PERF_SAMPLE_TIME) || !(attr->sample_type & PERF_SAMPLE_IDENTIFIER))
                return false;
        if (h->type == PERF_RECORD_SAMPLE) {
                /* IDENTIFIER, IP, TID, TIME (perf_event_open(2)). */
                off = sizeof(*h) + 8 + (attr->sample_type & PERF_SAMPLE_IP ? 8 : 0) +
                      (attr->sample_type & PERF_SAMPLE_TID ? 8 : 0);
                if (off + 8 > h->size)
                        return false;
        } else {
                /* sample_id: TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER,
                 * read from the end. */
                uint64_t back = 8 + 8 + (attr->sample_type & PERF_SAMPLE_CPU ? 8 : 0) +
                                (attr->sample_type & PERF_SAMPLE_STREAM_ID ? 8 : 0) +
                                (attr->sample_type & PERF_SAMPLE_ID ? 8 : 0);

                if (!attr->sample_id_all || back + sizeof(*h) > h->size)
                        return false;
                off = h->size - back;
        }
        memcpy(ret, (const uint8_t *) h + off, sizeof(*ret));
        return true;
}

/* The time of record H, from its sample or its sample_id trailer; false
 * when it has none (an event without sample_id_all, an unknown id). */
static bool record_time(const struct monitor *m, const struct perf_event_header *h, uint64_t *ret,
                        const struct id_entry **ret_entry) {
        const struct perf_event_attr *attr = NULL;
        const struct id_entry *e;
        uint64_t id;

        if (ret_entry)
                *ret_entry = NULL;
        if (h->size < sizeof(*h) + sizeof(id))
                return false;
        if (h->type == PERF_RECORD_SAMPLE)
                memcpy(&id, h + 1, sizeof(id));
        else
                memcpy(&id, (const uint8_t *) h + h->size - sizeof(id), sizeof(id));
        e = index_find(m, id);
        if (ret_entry)
                *ret_entry = e;
        if (e)
                attr = &m->handles[e->handle].attr;
        else if (h->type != PERF_RECORD_SAMPLE)
                attr = &m->attr;        /* the ring owner's own records */
        return attr && record_time_attr(attr, h, ret);
}

/* Looks at ring C's next record below its head: false when there is none. */
static bool order_peek(struct monitor *m, struct perf_cpu *c) {
        uint64_t t;

        c->cur = ring_peek(&c->ring, &c->pos, c->head);
        if (!c->cur)
                return false;
        /* A time after the clock this pass read (plus the hold) is none
         * the kernel wrote before we loaded the head: a clock stepped back
         * (realtime, tai) or a malformed record. Taken as it stands it
         * would hold its ring until the clock got there. */
        if (!record_time(m, c->cur, &t, &c->entry) || t > m->order_limit) {
                /* No time: it goes right after the record before it. */
                c->time = 0;
                c->key = c->last;
                return true;
        }
        c->time = t;
        c->key = t > c->last ? t : c->last;
        /* Timed before the last pass read its clock and not there when it
         * loaded the head: in flight in the kernel that long at least. */
        if ((int64_t) (c->pos - c->seen) >= 0 && m->order_now > t &&
            m->order_now - t > m->order.in_flight_max_ns)
                m->order.in_flight_max_ns = m->order_now - t;
        return true;
}

static bool heap_less(const struct monitor *m, size_t a, size_t b) {
        const struct perf_cpu *x = &m->cpus[a], *y = &m->cpus[b];

        return x->key < y->key || (x->key == y->key && a < b);
}

static void heap_down(struct monitor *m, size_t n, size_t i) {
        for (;;) {
                size_t l = 2 * i + 1, r = l + 1, min = i, t;

                if (l < n && heap_less(m, m->heap[l], m->heap[min]))
                        min = l;
                if (r < n && heap_less(m, m->heap[r], m->heap[min]))
                        min = r;
                if (min == i)
                        return;
                t = m->heap[i], m->heap[i] = m->heap[min], m->heap[min] = t;
                i = min;
        }
}

static void heap_up(struct monitor *m, size_t i) {
        while (i > 0) {
                size_t p = (i - 1) / 2, t;

                if (!heap_less(m, m->heap[i], m->heap[p]))
                        return;
                t = m->heap[i], m->heap[i] = m->heap[p], m->heap[p] = t;
                i = p;
        }
}

int monitor_drain_ordered(struct monitor *m, const struct monitor_order *o, unsigned budget,
                          const struct monitor_handler *h, void *ctx, uint64_t *ret_held) {
        uint64_t floor, bound = UINT64_MAX;
        size_t n_heap = 0;
        unsigned n = 0;
        struct drain d;

        if (!m || !o)
                return -EINVAL;
        floor = o->now > o->hold_ns ? o->now - o->hold_ns : 0;
        m->order_limit = o->now + o->hold_ns;
        d = (struct drain) { .m = m, .h = h, .ctx = ctx };

        /* A ring that is down writes nothing and bounds nothing. */
        for (size_t k = 0; k < m->n_up; k++) {
                size_t i = m->up[k];
                struct perf_cpu *c = &m->cpus[i];

                /* What scans skipped since the last pass was read too. */
                c->n_pass = c->n_skipped;
                c->n_pass_quiet = 0;
                d.skipped += c->n_skipped;
                c->n_skipped = 0;
                c->head = ring_head(&c->ring);
                c->pos = scan_first(c);
                scan_place(m, c);
                ring_look(m, c, c->head);
                if (order_peek(m, c)) {
                        m->heap[n_heap] = i;
                        heap_up(m, n_heap++);
                } else if ((c->last > floor ? c->last : floor) < bound)
                        /* Empty: its next record may be as old as this. */
                        bound = c->last > floor ? c->last : floor;
        }

        while (n_heap > 0 && n < budget) {
                struct perf_cpu *c = &m->cpus[m->heap[0]];
                unsigned quiet = d.quiet;

                if (!o->all && c->key > bound)
                        break;
                d.c = c;
                d.hint = c->entry;
                d.note = scan_note(c);
                (void) drain_one(c->cur, &d);
                n++;
                c->n_pass++;
                c->n_pass_quiet += d.quiet - quiet;
                if (c->time != 0) {
                        if (c->time < m->order.emitted)
                                m->order.late++;
                        else
                                m->order.emitted = c->time;
                }
                c->last = c->key;
                scan_step(c, c->cur);
                if (order_peek(m, c))
                        heap_down(m, n_heap, 0);
                else {
                        if ((c->last > floor ? c->last : floor) < bound)
                                bound = c->last > floor ? c->last : floor;
                        m->heap[0] = m->heap[--n_heap];
                        heap_down(m, n_heap, 0);
                }
        }
        m->order.held = 0;
        m->order.held_newest = 0;
        for (size_t k = 0; k < n_heap; k++) {
                struct perf_cpu *c = &m->cpus[m->heap[k]];
                uint64_t pos = c->pos, t, bad;
                const struct perf_event_header *hd;

                /* Records below this ring's head stay for the next pass. */
                m->order.held++;
                /* The newest of them, so that one release takes them all:
                 * what the hold keeps is little (at 1M records/s, 200 µs
                 * is 200), but a budget cut leaves a ring full. */
                if (n >= budget)
                        continue;
                bad = c->ring.n_bad;    /* the next pass counts a malformed one */
                while ((hd = ring_peek(&c->ring, &pos, c->head))) {
                        if (record_time(m, hd, &t, NULL) && t <= m->order_limit && t > m->order.held_newest)
                                m->order.held_newest = t;
                        pos += hd->size;
                }
                c->ring.n_bad = bad;
                if (c->key > m->order.held_newest)
                        m->order.held_newest = c->key;
        }
        if (ret_held)
                *ret_held = n_heap > 0 ? m->cpus[m->heap[0]].key : UINT64_MAX;
        for (size_t k = 0; k < m->n_up; k++) {
                struct perf_cpu *c = &m->cpus[m->up[k]];

                c->tail_prev = c->ring.page->data_tail;
                ring_consume(&c->ring, c->pos);
                c->seen = c->head;
                scan_place(m, c);
                scan_settle(c);
        }
        m->drain_skipped = d.skipped;
        m->order_now = o->now;
        m->order.passes++;
        m->drain_quiet = d.quiet;
        return (int) n;
}

const struct monitor_order_stats *monitor_order_stats(const struct monitor *m) {
        return m ? &m->order : NULL;
}

unsigned monitor_ring_n_pass(const struct monitor *m, size_t i) {
        if (!m || i >= m->n_cpus)
                return 0;
        return m->cpus[i].n_pass;
}

uint64_t monitor_ring_last(const struct monitor *m, size_t i) {
        if (!m || i >= m->n_cpus)
                return 0;
        return m->cpus[i].last;
}

unsigned monitor_ring_n_pass_quiet(const struct monitor *m, size_t i) {
        if (!m || i >= m->n_cpus)
                return 0;
        return m->cpus[i].n_pass_quiet;
}
