/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* evmon-forward's bounded buffer: messages (subject, message id, payload
 * of one or more lines)
 * wait here, in arrival order, from the moment they are read from evmond
 * until NATS acknowledged them. One byte arena allocated at start, records
 * laid end to end and wrapping; nothing is allocated per line. Positions
 * are byte counts that only grow, so "in flight" and "acknowledged" are
 * ranges. Not thread-safe: the caller locks. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct queue_rec {
        const char *subject;    /* NUL-terminated */
        const char *id;         /* NUL-terminated */
        const char *data;       /* NUL-terminated, LEN bytes */
        size_t len;
        unsigned lines;         /* how many lines DATA holds */
};

struct queue {
        char *mem;
        size_t size;            /* a multiple of 8 */
        uint64_t head, tail;    /* byte positions: oldest record, end */
        uint64_t head_seq, tail_seq; /* their record numbers */
};

/* Allocates SIZE bytes (rounded down to a multiple of 8). 0 or -ENOMEM. */
int queue_init(struct queue *q, size_t size);
void queue_done(struct queue *q);

/* Appends a record; -ENOSPC when it does not fit in what is free (the
 * caller counts it dropped), -E2BIG when it could never fit. */
int queue_push(struct queue *q, const char *subject, const char *id, const char *data, size_t len, unsigned lines);

/* The record at byte position *POS (the head, or a position an earlier
 * queue_peek() moved it to): returns 1, fills RET and moves *POS past it;
 * or 0 when *POS is the tail. */
int queue_peek(const struct queue *q, uint64_t *pos, struct queue_rec *ret);

/* Drops the oldest record. 0, or -ENOENT when empty. */
int queue_pop(struct queue *q);

/* When empty, moves head and tail on to the start of the arena's next
 * lap: a queue that keeps up then uses its first pages only (no page
 * faults on fresh pages, a small resident size). Returns whether they
 * moved; positions held by the caller are stale then. */
bool queue_rewind(struct queue *q);

static inline uint64_t queue_count(const struct queue *q) {
        return q->tail_seq - q->head_seq;
}

static inline size_t queue_used(const struct queue *q) {
        return (size_t) (q->tail - q->head);
}
