/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The shared line store: each encoded line is copied once, into a
 * reference-counted chunk, and every client queue that takes it holds a
 * (chunk, offset, length) span of it. Chunks are recycled through a free
 * list, so a steady stream allocates nothing. Plain memory: no fds. */

#include <stddef.h>
#include <stdint.h>

#define LINE_CHUNK_SIZE (256u * 1024u)

struct line_chunk {
        unsigned refs;
        size_t len, cap;
        struct line_chunk *next_free;
        char data[];
};

/* One stored line (or a run of consecutive lines of one chunk). */
struct line_span {
        struct line_chunk *chunk;
        uint32_t off, len;
};

struct line_store {
        struct line_chunk *cur;       /* lines are appended here; the store holds one ref */
        struct line_chunk *free_chunks;
        size_t n_free;
};

/* Copies LINE into the store; *ret is its span, holding no reference (the
 * queues that take it do: line_chunk_ref()), so it is good only until the
 * next put. 0 or -ENOMEM. */
int line_store_put(struct line_store *st, const char *line, size_t len, struct line_span *ret);
static inline void line_chunk_ref(struct line_chunk *c) {
        c->refs++;
}
/* Drops one reference; the last returns the chunk to the free list. */
void line_chunk_unref(struct line_store *st, struct line_chunk *c);
/* Frees the current chunk and the free list (chunks still queued somewhere
 * are freed by their last unref). */
void line_store_done(struct line_store *st);
