/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* evmon-forward's open batches: lines of one subject gathered into one
 * message (NDJSON, each line ending in '\n'), one batch open per subject,
 * closed when the next line would pass the size limit, when it is older
 * than the caller's time limit, or to make room for another subject. The
 * batch's id is the id of its first line ("TAG.FIRST"), so a batch sent
 * again is the same message. Buffers are allocated once; nothing per
 * line. Not thread-safe: the main thread's. */

#include <stddef.h>
#include <stdint.h>

#define BATCH_SUBJECT_MAX 512
#define BATCH_ID_MAX 512

struct batch {
        uint64_t hash;          /* of SUBJECT; 0 when the slot is free */
        int64_t opened;         /* when its first line came (caller's clock) */
        size_t len;
        unsigned lines;
        char subject[BATCH_SUBJECT_MAX];
        char id[BATCH_ID_MAX];
        char *data;             /* CAPACITY bytes */
};

/* What takes a closed batch: DATA (LEN bytes, LINES lines each ending in
 * '\n') with its SUBJECT and ID. */
typedef void (*batch_close_t)(void *userdata, const char *subject, const char *id, const char *data, size_t len,
                              unsigned lines);

struct batcher {
        struct batch *slots;
        unsigned n_slots;
        size_t capacity;        /* bytes a batch can hold */
        batch_close_t close;
        void *userdata;
        struct batch *last;     /* the last line's batch: most lines repeat its subject */
};

/* N_SLOTS subjects open at once, each batch at most CAPACITY bytes. 0 or
 * -ENOMEM. */
int batcher_init(struct batcher *b, unsigned n_slots, size_t capacity, batch_close_t close, void *userdata);
void batcher_done(struct batcher *b);

/* Adds LINE (LEN bytes, no newline) on SUBJECT, numbered NUMBER in the
 * lines named TAG, to its subject's batch: first the batch is closed when
 * LINE would take it past LIMIT bytes (at most the capacity). Returns 0,
 * or -E2BIG when LINE alone (with its newline) passes LIMIT: not taken,
 * the caller sends it alone. */
int batcher_add(struct batcher *b, const char *subject, const char *tag, uint64_t number, const char *line,
                size_t len, size_t limit, int64_t now);

/* Closes the batches opened before DEADLINE (all: INT64_MAX). Returns the
 * time the oldest batch left open was opened, or INT64_MAX when none is. */
int64_t batcher_flush(struct batcher *b, int64_t deadline);
