/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A client's bounded queue: spans of lines in the shared store, written
 * out in order. Plain memory, no fds: tests drive it directly. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "lines.h"

struct line_queue {
        struct line_store *store;
        struct line_span *q;          /* a ring of spans; cap is a power of two */
        size_t head, len, cap;
        size_t queued;                /* bytes not yet written */
        size_t limit;                 /* bytes: lines past it are dropped (clients.queue_kib) */
        uint32_t head_done;           /* bytes of q[head] already written */
        uint64_t dropped;             /* lines dropped since the last "dropped" line */
        uint64_t dropped_lost;        /* the records those of them that were "lost" lines told of */
        uint64_t dropped_lost_lines;  /* how many of them were "lost" lines */
        uint64_t dropped_total;
        uint64_t lines;               /* lines queued in all */
};

/* 0 or -ENOMEM. */
int line_queue_init(struct line_queue *q, struct line_store *st, size_t limit);
/* Drops every reference the queue holds. */
void line_queue_done(struct line_queue *q);

/* Queues SP (taking a reference), or counts a drop when it would pass the
 * limit. Once a queue drops, it drops everything until its owner closes
 * the gap with a "dropped" line (line_queue_take_dropped(), once the
 * queue is no longer line_queue_dropping()), so that line marks exactly
 * where the gap is. LOST is the count of a "lost" line (0 for others): a
 * dropped one's count goes into the "dropped" line, so a client can still
 * account for every record. True when queued. */
bool line_queue_push(struct line_queue *q, const struct line_span *sp, uint64_t lost);
/* Queues a reply, which must not be lost: past the limit by one reply at
 * the most. -ENOBUFS when the queue is over its limit already (its client
 * does not read its replies), -ENOMEM. */
int line_queue_push_reply(struct line_queue *q, const struct line_span *sp);
/* What the "dropped" line says once the queue has drained: *RET_COUNT
 * the lines dropped but "lost" lines, whose records are *RET_LOST (so
 * events + count + lost account for every record, each once). Closes the
 * gap. */
void line_queue_take_dropped(struct line_queue *q, uint64_t *ret_count, uint64_t *ret_lost);
/* Counts a line lost for this queue (it could not be stored). */
void line_queue_drop(struct line_queue *q);
/* N lines dropped at once (what a scan counted: server_drop_event()). */
void line_queue_drop_n(struct line_queue *q, uint64_t n);

/* A gap is open and the queue still holds more than half its limit:
 * whatever comes now is dropped, and is not worth making. Below half, the
 * gap closes with the next line (client_push()), so that a client that
 * fell behind still has half a queue to read while new lines come, and
 * never waits on an empty socket for the queue to drain whole (which,
 * with evmond busy in long looks, made what a client got fall as the
 * load grew, issue 33). */
static inline bool line_queue_dropping(const struct line_queue *q) {
        return q->dropped > 0 && q->queued > q->limit / 2;
}
/* A line for Q, not made when Q is dropping: its drop counted. True when
 * the line is wanted. */
static inline bool line_queue_wants(struct line_queue *q) {
        if (!line_queue_dropping(q))
                return true;
        line_queue_drop(q);
        return false;
}

/* At or over the limit: its client is not read until it drains. */
static inline bool line_queue_full(const struct line_queue *q) {
        return q->queued >= q->limit;
}
static inline bool line_queue_empty(const struct line_queue *q) {
        return q->len == 0;
}

/* The next bytes to write, as up to N iovecs; returns how many. */
size_t line_queue_iov(const struct line_queue *q, struct iovec *iov, size_t n);
/* N bytes were written: forgets them, dropping the spans written in full. */
void line_queue_advance(struct line_queue *q, size_t n);
