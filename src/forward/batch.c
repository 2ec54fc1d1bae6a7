/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"

int batcher_init(struct batcher *b, unsigned n_slots, size_t capacity, batch_close_t close, void *userdata) {
        *b = (struct batcher) { .n_slots = n_slots, .capacity = capacity, .close = close, .userdata = userdata };
        b->slots = calloc(n_slots, sizeof(struct batch));
        if (!b->slots)
                return -ENOMEM;
        for (unsigned i = 0; i < n_slots; i++) {
                b->slots[i].data = malloc(capacity);
                if (!b->slots[i].data)
                        return -ENOMEM;
        }
        return 0;
}

void batcher_done(struct batcher *b) {
        for (unsigned i = 0; b->slots && i < b->n_slots; i++)
                free(b->slots[i].data);
        free(b->slots);
        *b = (struct batcher) {};
}

static void batch_close(struct batcher *b, struct batch *s) {
        if (s->lines > 0)
                b->close(b->userdata, s->subject, s->id, s->data, s->len, s->lines);
        s->hash = 0;
        s->len = 0;
        s->lines = 0;
}

/* FNV-1a, never 0 (0 marks a free slot). */
static uint64_t subject_hash(const char *s, size_t *ret_len) {
        uint64_t h = UINT64_C(0xcbf29ce484222325);
        const char *p;

        for (p = s; *p; p++)
                h = (h ^ (unsigned char) *p) * UINT64_C(0x100000001b3);
        *ret_len = (size_t) (p - s);
        return h ?: 1;
}

/* SUBJECT's open batch, or a free slot, or the oldest batch closed to
 * make one. */
static struct batch *batch_for(struct batcher *b, const char *subject, uint64_t h) {
        struct batch *free_slot = NULL, *oldest = NULL;

        for (unsigned i = 0; i < b->n_slots; i++) {
                struct batch *s = &b->slots[i];

                if (s->hash == h && strcmp(s->subject, subject) == 0)
                        return s;
                if (s->hash == 0) {
                        if (!free_slot)
                                free_slot = s;
                } else if (!oldest || s->opened < oldest->opened)
                        oldest = s;
        }
        if (free_slot)
                return free_slot;
        batch_close(b, oldest);
        return oldest;
}

int batcher_add(struct batcher *b, const char *subject, const char *tag, uint64_t number, const char *line,
                size_t len, size_t limit, int64_t now) {
        struct batch *s = b->last;
        size_t sl = 0;
        uint64_t h = 0;

        if (limit > b->capacity)
                limit = b->capacity;
        if (len + 1 > limit)
                return -E2BIG;
        if (!s || s->hash == 0 || strcmp(s->subject, subject) != 0) {
                h = subject_hash(subject, &sl);
                if (sl >= BATCH_SUBJECT_MAX)
                        return -E2BIG;
                s = batch_for(b, subject, h);
        }
        if (s->lines > 0 && s->len + len + 1 > limit) {
                h = s->hash;
                batch_close(b, s);
        }
        if (s->lines == 0) {
                if (h == 0)
                        h = subject_hash(subject, &sl);
                else if (sl == 0)
                        sl = strlen(subject);
                if (snprintf(s->id, sizeof(s->id), "%s.%" PRIu64, tag, number) >= (int) sizeof(s->id))
                        return -E2BIG;
                memcpy(s->subject, subject, sl + 1);
                s->hash = h;
                s->opened = now;
        }
        b->last = s;
        memcpy(s->data + s->len, line, len);
        s->data[s->len + len] = '\n';
        s->len += len + 1;
        s->lines++;
        return 0;
}

int64_t batcher_flush(struct batcher *b, int64_t deadline) {
        int64_t oldest = INT64_MAX;

        for (unsigned i = 0; i < b->n_slots; i++) {
                struct batch *s = &b->slots[i];

                if (s->hash == 0)
                        continue;
                if (s->opened < deadline)
                        batch_close(b, s);
                else if (s->opened < oldest)
                        oldest = s->opened;
        }
        return oldest;
}
