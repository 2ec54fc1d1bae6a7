/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* perf.data's records in time order, as perf's ordered events give them
 * (tools/perf/util/ordered-events.c): records queue until a
 * FINISHED_ROUND says which of them nothing later can precede, and a
 * queued record goes out after every one queued before it with a time
 * not later than its own (perf's queue_event() inserts after equal
 * times), so records of one time keep the order they were read in. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perfdata-int.h"

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

/* What a flush under way gives next, then the FINISHED_ROUND that started
 * it: 1 with *RET set, 0 when there is nothing more to give. */
static int flush_take(struct perfdata *pd, struct perfdata_record *ret) {
        if (!pd->flushing)
                return 0;
        if (flush_next(pd, ret) > 0)
                return 1;
        if (pd->held) {
                pd->held = false;
                *ret = pd->held_pr;
                return 1;
        }
        return 0;
}

/* A live stream after a round: what waits is given out once perf has
 * nothing more to say for a while, not when its next round comes (the
 * next event). True when that flush started. */
static bool stream_idle(struct perfdata *pd) {
        if (!(pd->stream && pd->round_seen && pd->n_pend > 0 &&
              pd->win_off + pd->win_len - pd->pos < sizeof(struct perf_event_header) &&
              !stream_ready(pd, STREAM_IDLE_MS)))
                return false;
        pd->round_seen = false;
        flush_start(pd, UINT64_MAX);
        pd->next_flush = pd->max_time;
        return true;
}

/* A FINISHED_ROUND (PR): util/ordered-events.c OE_FLUSH__ROUND, up to the
 * newest time seen before the previous round; PR itself goes out after
 * what that flush gives. */
static void round_end(struct perfdata *pd, const struct perfdata_record *pr) {
        if (pd->order == PERFDATA_ORDER_TIME) {
                flush_start(pd, pd->next_flush);
                pd->next_flush = pd->max_time;
        } else
                flush_start(pd, UINT64_MAX);
        pd->held = true;
        pd->held_pr = *pr;
}

/* Kernel record PR (as RAW) into the queue, or, when it has no time, out
 * at once: perf delivers what has no time at once (session.c:
 * perf_session__queue_event gives -ETIME). 1 with *RET set, 0 when
 * queued. The time is peeked without copying: parsed where it is. */
static int queue_record(struct perfdata *pd, struct perfdata_record *pr, const struct raw *raw,
                        struct perfdata_record *ret) {
        int r;

        if (raw->stable || pd->order == PERFDATA_ORDER_FILE) {
                r = parse_record(pd, pr, raw->layout);
                if (r < 0)
                        return r;
                if (pr->time == 0) {
                        *ret = *pr;
                        return 1;
                }
        } else {
                struct perfdata_record probe = *pr;

                r = parse_record(pd, &probe, raw->layout);
                if (r < 0)
                        return r;
                if (probe.time == 0) {
                        *ret = probe;
                        return 1;
                }
        }
        return enqueue(pd, pr, raw);
}

/* Too much waiting to queue PR: flush the older half (ordered-events.c
 * OE_FLUSH__HALF), and read PR again after the flush. */
static void flush_half(struct perfdata *pd, const struct perfdata_record *pr) {
        uint64_t lo = UINT64_MAX, hi = 0;

        for (size_t i = 0; i < pd->n_pend; i++) {
                lo = pd->pend[i].time < lo ? pd->pend[i].time : lo;
                hi = pd->pend[i].time > hi ? pd->pend[i].time : hi;
        }
        pd->seq--;
        flush_start(pd, lo + (hi - lo) / 2);
        if (pr->compressed)
                pd->dpos -= pr->header->size;
        else {
                pd->pos = pr->offset;
                pd->src_bytes -= pr->header->size;
        }
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

                if (flush_take(pd, ret) > 0)
                        return 1;
                if (pd->at_end)
                        return pd->error;
                if (stream_idle(pd))
                        continue;

                r = read_one(pd, &pr, &raw);
                if (r <= 0) {
                        /* The end, or damage: first everything before it. */
                        pd->at_end = true;
                        flush_start(pd, UINT64_MAX);
                        continue;
                }
                pd->round_seen = pr.rec.type == PERFDATA_RECORD_FINISHED_ROUND;
                if (pr.rec.type == PERFDATA_RECORD_FINISHED_ROUND) {
                        round_end(pd, &pr);
                        continue;
                }
                if (pr.rec.type >= PERFDATA_RECORD_USER_TYPE_START || !raw.layout) {
                        *ret = pr;
                        return 1;
                }
                r = queue_record(pd, &pr, &raw, ret);
                if (r == -ENOBUFS) {
                        flush_half(pd, &pr);
                        continue;
                }
                if (r < 0)
                        return pd_fail(pd, r, pr.offset);
                if (r > 0)
                        return 1;
        }
}

void queue_clear(struct perfdata *pd) {
        pd->n_pend = pd->pend_head = 0;
        pd->n_free = 0;
        pd->n_slots = 0;
        for (size_t i = 0; i < pd->n_chunks; i++)
                pd->chunks[i].used = pd->chunks[i].refs = 0;
        pd->cur_chunk = -1;
        pd->seq = pd->max_time = pd->next_flush = 0;
        pd->flushing = pd->held = false;
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


int perfdata_set_order(struct perfdata *pd, enum perfdata_order order) {
        if (!pd || (unsigned) order > PERFDATA_ORDER_TIME)
                return -EINVAL;
        pd->order = order;
        return 0;
}
