/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lines.h"

/* Kept for reuse at the most: a burst's chunks beyond it go back to malloc. */
#define LINE_CHUNK_FREE_MAX 32

static struct line_chunk *chunk_get(struct line_store *st, size_t need) {
        struct line_chunk *c;

        if (need <= LINE_CHUNK_SIZE && st->free_chunks) {
                c = st->free_chunks;
                st->free_chunks = c->next_free;
                st->n_free--;
        } else {
                size_t cap = need > LINE_CHUNK_SIZE ? need : LINE_CHUNK_SIZE;

                c = malloc(sizeof(*c) + cap);
                if (!c)
                        return NULL;
                c->cap = cap;
        }
        c->refs = 1;
        c->len = 0;
        c->next_free = NULL;
        return c;
}

void line_chunk_unref(struct line_store *st, struct line_chunk *c) {
        if (!c || --c->refs > 0)
                return;
        if (c->cap == LINE_CHUNK_SIZE && st->n_free < LINE_CHUNK_FREE_MAX) {
                c->next_free = st->free_chunks;
                st->free_chunks = c;
                st->n_free++;
        } else
                free(c);
}

int line_store_put(struct line_store *st, const char *line, size_t len, struct line_span *ret) {
        if (len > UINT32_MAX)
                return -E2BIG;
        if (!st->cur || st->cur->cap - st->cur->len < len) {
                struct line_chunk *c = chunk_get(st, len);

                if (!c)
                        return -ENOMEM;
                line_chunk_unref(st, st->cur);
                st->cur = c;
        }
        memcpy(st->cur->data + st->cur->len, line, len);
        *ret = (struct line_span) { st->cur, (uint32_t) st->cur->len, (uint32_t) len };
        st->cur->len += len;
        return 0;
}

void line_store_done(struct line_store *st) {
        line_chunk_unref(st, st->cur);
        st->cur = NULL;
        while (st->free_chunks) {
                struct line_chunk *c = st->free_chunks;

                st->free_chunks = c->next_free;
                free(c);
        }
        st->n_free = 0;
}
