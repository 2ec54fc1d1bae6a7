/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "queue.h"

/* Record header; subject, id and data follow, each with its NUL, and the
 * whole is padded to 8 bytes. SIZE 0 marks the unused end of the arena
 * before a wrap (a record never straddles it). */
struct rec_hdr {
        uint32_t size;
        uint16_t subject_len;
        uint16_t id_len;
        uint32_t data_len;
        uint32_t lines;
};

#define ALIGN8(x) (((x) + 7) & ~(size_t) 7)

int queue_init(struct queue *q, size_t size) {
        *q = (struct queue) {};
        size &= ~(size_t) 7;
        if (size < 4096)
                size = 4096;
        q->mem = malloc(size);
        if (!q->mem)
                return -ENOMEM;
        q->size = size;
        return 0;
}

void queue_done(struct queue *q) {
        free(q->mem);
        *q = (struct queue) {};
}

int queue_push(struct queue *q, const char *subject, const char *id, const char *data, size_t len, unsigned lines) {
        size_t sl = strlen(subject), il = strlen(id);
        size_t need = ALIGN8(sizeof(struct rec_hdr) + sl + 1 + il + 1 + len + 1);
        size_t off = (size_t) (q->tail % q->size), gap = 0;
        struct rec_hdr *h;
        char *p;

        if (need > q->size / 2 || sl > UINT16_MAX || il > UINT16_MAX || len > UINT32_MAX)
                return -E2BIG;
        if (off + need > q->size)
                gap = q->size - off;   /* skip the end: the record goes to 0 */
        if (queue_used(q) + gap + need > q->size)
                return -ENOSPC;
        if (gap > 0) {
                ((struct rec_hdr *) (q->mem + off))->size = 0;
                q->tail += gap;
                off = 0;
        }
        h = (struct rec_hdr *) (q->mem + off);
        *h = (struct rec_hdr) {
                .size = (uint32_t) need,
                .subject_len = (uint16_t) sl,
                .id_len = (uint16_t) il,
                .data_len = (uint32_t) len,
                .lines = lines,
        };
        p = (char *) (h + 1);
        memcpy(p, subject, sl + 1);
        p += sl + 1;
        memcpy(p, id, il + 1);
        p += il + 1;
        memcpy(p, data, len);
        p[len] = '\0';
        q->tail += need;
        q->tail_seq++;
        return 0;
}

/* The header at POS, past a wrap marker (moving POS to 0 of the next lap). */
static const struct rec_hdr *rec_at(const struct queue *q, uint64_t *pos) {
        const struct rec_hdr *h;

        if (*pos == q->tail)
                return NULL;
        h = (const struct rec_hdr *) (q->mem + *pos % q->size);
        /* A wrap marker needs 8 bytes; a shorter tail end is skipped too. */
        if (q->size - *pos % q->size < sizeof(struct rec_hdr) || h->size == 0) {
                *pos += q->size - *pos % q->size;
                if (*pos == q->tail)
                        return NULL;
                h = (const struct rec_hdr *) q->mem;
        }
        return h;
}

int queue_peek(const struct queue *q, uint64_t *pos, struct queue_rec *ret) {
        const struct rec_hdr *h = rec_at(q, pos);
        const char *p;

        if (!h)
                return 0;
        p = (const char *) (h + 1);
        ret->subject = p;
        ret->id = p + h->subject_len + 1;
        ret->data = ret->id + h->id_len + 1;
        ret->len = h->data_len;
        ret->lines = h->lines;
        *pos += h->size;
        return 1;
}

int queue_pop(struct queue *q) {
        const struct rec_hdr *h = rec_at(q, &q->head);

        if (!h)
                return -ENOENT;
        q->head += h->size;
        q->head_seq++;
        return 0;
}

bool queue_rewind(struct queue *q) {
        if (q->head != q->tail || q->tail % q->size == 0)
                return false;
        q->tail += q->size - q->tail % q->size;
        q->head = q->tail;
        return true;
}
