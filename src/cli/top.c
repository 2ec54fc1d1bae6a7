/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evmon/human.h"

#include "top.h"

int top_model_init(struct top_model *m, const char *by) {
        *m = (struct top_model) {};
        if (strlen(by) >= sizeof(m->by))
                return -EINVAL;
        strcpy(m->by, by);
        m->events = calloc(1, sizeof(char *));
        return m->events ? 0 : -ENOMEM;
}

void top_model_done(struct top_model *m) {
        for (size_t i = 0; i < m->n_events; i++)
                free(m->events[i]);
        free(m->events);
        free(m->entries);
        *m = (struct top_model) {};
}

static json_object *get(json_object *o, const char *key) {
        json_object *v;

        return o && json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

/* A key's value as text, escaped for a terminal: a string as it is, a
 * number in decimal, a stack's frames joined by ';' (root first, as
 * flame graphs fold them). */
static void key_text(json_object *v, char buf[static TOP_KEY_MAX]) {
        if (!v) {
                strcpy(buf, "?");
                return;
        }
        if (json_object_is_type(v, json_type_array)) {
                size_t n = json_object_array_length(v), len = 0;

                buf[0] = '\0';
                for (size_t i = 0; i < n && len + 1 < TOP_KEY_MAX; i++) {
                        json_object *f = json_object_array_get_idx(v, i);

                        if (i > 0)
                                buf[len++] = ';';
                        human_escape(buf + len, TOP_KEY_MAX - len, f ? json_object_get_string(f) : "?");
                        len += strlen(buf + len);
                }
                buf[len] = '\0';
                return;
        }
        if (json_object_is_type(v, json_type_null)) {
                strcpy(buf, "-");
                return;
        }
        human_escape(buf, TOP_KEY_MAX, json_object_get_string(v));
}

/* EVENT's name as the model keeps it (one copy per event). */
static char *intern_event(struct top_model *m, const char *event) {
        char **grown;

        for (size_t i = 0; i < m->n_events; i++)
                if (strcmp(m->events[i], event) == 0)
                        return m->events[i];
        grown = realloc(m->events, (m->n_events + 2) * sizeof(char *));
        if (!grown)
                return NULL;
        m->events = grown;
        m->events[m->n_events] = strdup(event);
        if (!m->events[m->n_events])
                return NULL;
        m->events[++m->n_events] = NULL;
        return m->events[m->n_events - 1];
}

static struct top_entry *find_entry(struct top_model *m, const char *key, const char *event) {
        struct top_entry *e;

        /* Linear: evmond sends at most "top" entries a line (cli-top.c
         * asks for a few hundred). */
        for (size_t i = 0; i < m->n_entries; i++)
                if (m->entries[i].event == event && strcmp(m->entries[i].key, key) == 0)
                        return &m->entries[i];
        if (m->n_entries == TOP_ENTRIES_MAX) {
                m->entries_dropped++;
                return NULL;
        }
        if (m->n_entries == m->cap) {
                size_t cap = m->cap ? m->cap * 2 : 64;
                struct top_entry *grown = realloc(m->entries, cap * sizeof(*grown));

                if (!grown)
                        return NULL;
                m->entries = grown;
                m->cap = cap;
        }
        e = &m->entries[m->n_entries++];
        *e = (struct top_entry) { .event = (char *) event };
        strcpy(e->key, key);
        return e;
}

static uint64_t get_u64(json_object *o, const char *key) {
        json_object *v = get(o, key);
        int64_t n = v ? json_object_get_int64(v) : 0;

        return n > 0 ? (uint64_t) n : 0;
}

int top_model_feed(struct top_model *m, json_object *o) {
        json_object *t = get(o, "type"), *entries = get(o, "entries"), *v;
        bool by_event = strcmp(m->by, "event") == 0;
        int64_t ts, start;
        size_t n;

        if (!t || !json_object_is_type(t, json_type_string) || strcmp(json_object_get_string(t), "aggregate") != 0 ||
            !entries || !json_object_is_type(entries, json_type_array))
                return -EINVAL;
        for (size_t i = 0; i < m->n_entries; i++)
                m->entries[i].count = 0;
        /* The window: from its start to its end, else as asked. */
        ts = (v = get(o, "ts")) ? json_object_get_int64(v) : 0;
        start = (v = get(o, "start_ts")) ? json_object_get_int64(v) : 0;
        if (ts > start && start > 0)
                m->window_s = (double) (ts - start) / 1e9;
        else if ((v = get(o, "interval_ms")) && json_object_get_int64(v) > 0)
                m->window_s = (double) json_object_get_int64(v) / 1e3;
        m->folded = get_u64(o, "events");
        m->lost = get_u64(o, "lost");
        m->keys_dropped = get_u64(o, "keys_dropped");
        m->windows++;
        n = json_object_array_length(entries);
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(entries, i), *key = get(e, "key"), *ev;
                char text[TOP_KEY_MAX], name[TOP_KEY_MAX];
                struct top_entry *entry;
                const char *event;
                uint64_t count = get_u64(e, "count");

                if (!key || !json_object_is_type(key, json_type_object))
                        continue;
                key_text(get(key, by_event ? "event" : m->by), text);
                /* Each event of the key apart, so 'e' can show one. */
                ev = by_event ? NULL : get(key, "event");
                if (ev)
                        key_text(ev, name);
                event = intern_event(m, by_event ? text : ev ? name : "");
                if (!event)
                        return -ENOMEM;
                entry = find_entry(m, text, event);
                if (!entry) {
                        if (m->n_entries < TOP_ENTRIES_MAX)
                                return -ENOMEM;
                        continue;
                }
                entry->count += count;
                entry->total += count;
        }
        return 0;
}

static enum top_sort sort_by;

static int cmp_u64(uint64_t a, uint64_t b) {
        return a < b ? 1 : a > b ? -1 : 0;     /* biggest first */
}

static int row_cmp(const void *x, const void *y) {
        const struct top_row *a = x, *b = y;
        int r = 0;

        switch (sort_by) {
        case TOP_SORT_KEY:
                r = strcmp(a->key, b->key);
                break;
        case TOP_SORT_TOTAL:
                r = cmp_u64(a->total, b->total);
                break;
        default:
                break;
        }
        if (r == 0)
                r = cmp_u64(a->count, b->count);
        if (r == 0)
                r = cmp_u64(a->total, b->total);
        return r ?: strcmp(a->key, b->key);
}

static int key_cmp(const void *x, const void *y) {
        return strcmp(((const struct top_row *) x)->key, ((const struct top_row *) y)->key);
}

int top_model_rows(const struct top_model *m, const char *event, enum top_sort sort, struct top_row **ret_rows) {
        struct top_row *rows = calloc(m->n_entries + 1, sizeof(*rows));
        uint64_t sum = 0;
        size_t n = 0;

        if (!rows)
                return -ENOMEM;
        for (size_t i = 0; i < m->n_entries; i++) {
                const struct top_entry *e = &m->entries[i];

                if (event && strcmp(e->event, event) != 0)
                        continue;
                rows[n++] = (struct top_row) { .key = e->key, .count = e->count, .total = e->total };
                sum += e->count;
        }
        /* Every event: a key's counts added up (sorted by key, equal
         * neighbours merged). */
        if (!event && n > 1) {
                size_t k = 0;

                qsort(rows, n, sizeof(*rows), key_cmp);
                for (size_t i = 1; i < n; i++)
                        if (strcmp(rows[i].key, rows[k].key) == 0) {
                                rows[k].count += rows[i].count;
                                rows[k].total += rows[i].total;
                        } else
                                rows[++k] = rows[i];
                n = k + 1;
        }
        for (size_t k = 0; k < n; k++) {
                rows[k].rate = m->window_s > 0 ? (double) rows[k].count / m->window_s : 0;
                rows[k].share = sum > 0 ? (double) rows[k].count / (double) sum : 0;
        }
        sort_by = sort;
        qsort(rows, n, sizeof(*rows), row_cmp);
        *ret_rows = rows;
        return (int) n;
}

const char *top_sort_to_string(enum top_sort s) {
        static const char *const names[_TOP_SORT_MAX] = {
                [TOP_SORT_RATE] = "rate",
                [TOP_SORT_TOTAL] = "total",
                [TOP_SORT_KEY] = "key",
        };

        return s >= 0 && s < _TOP_SORT_MAX ? names[s] : "?";
}
