/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>

#include "queue.h"

#define LINE_QUEUE_CAP_MIN 64

int line_queue_init(struct line_queue *q, struct line_store *st, size_t limit) {
        *q = (struct line_queue) { .store = st, .limit = limit, .cap = LINE_QUEUE_CAP_MIN };
        q->q = calloc(q->cap, sizeof(*q->q));
        return q->q ? 0 : -ENOMEM;
}

void line_queue_done(struct line_queue *q) {
        while (q->len > 0) {
                line_chunk_unref(q->store, q->q[q->head].chunk);
                q->head = (q->head + 1) & (q->cap - 1);
                q->len--;
        }
        free(q->q);
        q->q = NULL;
        q->queued = 0;
}

void line_queue_drop(struct line_queue *q) {
        line_queue_drop_n(q, 1);
}

void line_queue_drop_n(struct line_queue *q, uint64_t n) {
        q->dropped += n;
        q->dropped_total += n;
}

static int queue_grow(struct line_queue *q) {
        size_t cap = q->cap * 2;
        struct line_span *n = malloc(cap * sizeof(*n));

        if (!n)
                return -ENOMEM;
        for (size_t i = 0; i < q->len; i++)
                n[i] = q->q[(q->head + i) & (q->cap - 1)];
        free(q->q);
        q->q = n;
        q->cap = cap;
        q->head = 0;
        return 0;
}

static int queue_append(struct line_queue *q, const struct line_span *sp) {
        if (q->len > 0) {
                struct line_span *last = &q->q[(q->head + q->len - 1) & (q->cap - 1)];

                /* Consecutive lines of one chunk merge into one span. */
                if (last->chunk == sp->chunk && last->off + last->len == sp->off &&
                    (uint64_t) last->len + sp->len <= UINT32_MAX) {
                        last->len += sp->len;
                        q->queued += sp->len;
                        q->lines++;
                        return 0;
                }
        }
        if (q->len == q->cap && queue_grow(q) < 0)
                return -ENOMEM;
        line_chunk_ref(sp->chunk);
        q->q[(q->head + q->len) & (q->cap - 1)] = *sp;
        q->len++;
        q->queued += sp->len;
        q->lines++;
        return 0;
}

bool line_queue_push(struct line_queue *q, const struct line_span *sp, uint64_t lost) {
        if (q->dropped > 0 || q->queued + sp->len > q->limit || queue_append(q, sp) < 0) {
                line_queue_drop(q);
                q->dropped_lost += lost;
                q->dropped_lost_lines += lost > 0;
                return false;
        }
        return true;
}

void line_queue_take_dropped(struct line_queue *q, uint64_t *ret_count, uint64_t *ret_lost) {
        *ret_count = q->dropped - q->dropped_lost_lines;
        *ret_lost = q->dropped_lost;
        q->dropped = q->dropped_lost = q->dropped_lost_lines = 0;
}

int line_queue_push_reply(struct line_queue *q, const struct line_span *sp) {
        if (q->queued > q->limit)
                return -ENOBUFS;
        return queue_append(q, sp);
}

size_t line_queue_iov(const struct line_queue *q, struct iovec *iov, size_t n) {
        size_t k = 0;

        for (; k < q->len && k < n; k++) {
                const struct line_span *sp = &q->q[(q->head + k) & (q->cap - 1)];
                uint32_t skip = k == 0 ? q->head_done : 0;

                iov[k].iov_base = sp->chunk->data + sp->off + skip;
                iov[k].iov_len = sp->len - skip;
        }
        return k;
}

void line_queue_advance(struct line_queue *q, size_t n) {
        q->queued -= n;
        while (n > 0) {
                struct line_span *sp = &q->q[q->head];
                size_t left = sp->len - q->head_done;

                if (n < left) {
                        q->head_done += (uint32_t) n;
                        return;
                }
                n -= left;
                q->head_done = 0;
                line_chunk_unref(q->store, sp->chunk);
                q->head = (q->head + 1) & (q->cap - 1);
                q->len--;
        }
}
