/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* evmonctl top's table: what evmond's aggregate lines say (one per
 * interval, each the window since the last), kept per key and event,
 * and the rows a screen shows, sorted. No terminal here (cli-top.c
 * draws it), so a unit test feeds it canned lines. */

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

enum top_sort {
        TOP_SORT_RATE,          /* this window's count per second, the default */
        TOP_SORT_TOTAL,         /* the count since top started */
        TOP_SORT_KEY,           /* the key's text */
        _TOP_SORT_MAX,
};

#define TOP_KEY_MAX 256         /* bytes of a key's text, escaped, kept */
#define TOP_ENTRIES_MAX 65536   /* (key, event) pairs kept; more are left out */

struct top_entry {
        char key[TOP_KEY_MAX];
        char *event;            /* one of top_model.events */
        uint64_t count;         /* in the last window */
        uint64_t total;         /* in every window since the start */
};

struct top_model {
        char by[64];            /* the key the rows are by: "comm", ..., "event" */
        struct top_entry *entries;
        size_t n_entries, cap;
        size_t entries_dropped; /* pairs past TOP_ENTRIES_MAX */
        char **events;          /* the events seen, in order (NULL-terminated) */
        size_t n_events;
        double window_s;        /* the last window's length */
        uint64_t windows;
        uint64_t folded, lost, keys_dropped;    /* the last window's, as evmond says */
};

struct top_row {
        const char *key;
        uint64_t count, total;
        double rate;            /* count / window_s */
        double share;           /* of the window's count of the rows shown, 0..1 */
};

/* BY is the key the model's rows are by (the first of the request's
 * "by"; "event" when the rows are events). */
int top_model_init(struct top_model *m, const char *by);
void top_model_done(struct top_model *m);
/* Takes one of evmond's aggregate lines: the window's counts replace
 * the last's, each key's total grows. -EINVAL when O is no aggregate
 * line, -ENOMEM. */
int top_model_feed(struct top_model *m, json_object *o);
/* The rows of EVENT (NULL: every event, a key's counts added up), sorted
 * by SORT (ties: rate, total, key); *RET_ROWS is the caller's to free,
 * its keys M's. The number of rows, or -ENOMEM. */
int top_model_rows(const struct top_model *m, const char *event, enum top_sort sort, struct top_row **ret_rows);
const char *top_sort_to_string(enum top_sort s);
