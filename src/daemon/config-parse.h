/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The config reader's tools, shared by config.c (the top-level objects)
 * and config-event.c (the event entries); not for other modules. */

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "evmon/cleanup.h"

/* json-c keeps no positions, so a small scanner walks the same text and
 * remembers the line of every key and array element by its path
 * ("events[2].fetch[0]"). Messages then name the line a user must edit. */
struct keyline {
        char *path;
        unsigned line;
};

struct parser {
        const char *text, *p;
        unsigned line;
        struct keyline *keys;
        size_t n_keys;
        const char *file;
        char *error;
};

/* The config is read from tables, as systemd reads its own
 * (ConfigTableItem, sd_json_dispatch_field): one table per JSON object,
 * a row per key with the type its value must have, the function that
 * stores it at OFFSET into the struct the table fills, and for numbers the
 * range. config_fields_dispatch() refuses keys the table lacks, checks each
 * value's type and hands it to its row's parser, so every object gets the
 * same FILE:LINE: KEY: messages. A table's order is the order of its
 * "known here" list and of its checks; it ends with a row whose key is
 * NULL. */
struct field;
typedef int (*field_parse_t)(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
                             const struct field *f);

enum {
        FIELD_REQUIRED = 1 << 0, /* absent: config_fail with ARG as the message */
        FIELD_KIND = 1 << 1,     /* an event kind ("tracepoint"), read by config_parse_event() */
        FIELD_HAS = 1 << 2,      /* set the bool at OFFSET_HAS too */
};

struct field {
        const char *key;
        json_type type;          /* json_type_null: PARSE judges the type itself */
        field_parse_t parse;     /* NULL: a known key read outside the table walk */
        size_t offset, size, offset_has;
        uint64_t min, max;
        const void *arg;         /* a sub-table, a message */
        unsigned flags;
};

#define FIELD_AT(st, m) .offset = offsetof(st, m), .size = sizeof(((st *) 0)->m)
#define F_UINT(k, st, m, lo, hi) { .key = k, .type = json_type_int, .parse = config_field_uint, FIELD_AT(st, m), \
                                  .min = lo, .max = hi }
#define F_BOOL(k, st, m) { .key = k, .type = json_type_boolean, .parse = config_field_bool, FIELD_AT(st, m) }
#define F_STRING(k, st, m) { .key = k, .type = json_type_string, .parse = config_field_string, FIELD_AT(st, m) }
#define F_NAMES(k, st, m) { .key = k, .type = json_type_null, .parse = config_field_names, FIELD_AT(st, m) }
#define F_OBJECT(k, table) { .key = k, .type = json_type_object, .parse = config_field_object, .arg = table }
#define F_CUSTOM(k, t, fn) { .key = k, .type = t, .parse = fn }
#define F_KIND(k) { .key = k, .flags = FIELD_KIND }
#define F_OUTSIDE(k) { .key = k }

static inline void *field_ptr(void *base, const struct field *f) {
        return (uint8_t *) base + f->offset;
}

/* The scanner: frees what it remembered; walks TEXT from ps->p
 * remembering each key's line (0 or -EINVAL where it gives up, -ENOMEM);
 * the line of PATH, 0 when unseen. */
void config_parser_done(struct parser *ps);
int config_scan(struct parser *ps, const char *path, unsigned depth);
unsigned config_line_of(const struct parser *ps, const char *path);
/* Sets ps->error to "FILE:LINE: PATH: message" (the line of PATH or of
 * its nearest parent seen); returns -EINVAL, or -ENOMEM. */
_printf_(3, 4) int config_fail(struct parser *ps, const char *path, const char *fmt, ...);
const char *config_type_name(json_object *o);
/* "PATH.KEY" and "PATH[I]" (KEY alone at the root), or NULL. */
char *config_path_join(const char *path, const char *key);
char *config_path_index(const char *path, size_t i);
/* Every key of O known to TABLE; then each row with a parser, in order
 * (dispatch does both). */
int config_check_keys(struct parser *ps, json_object *o, const char *path, const struct field *table);
int config_fields_walk(struct parser *ps, const char *path, json_object *o, const struct field *table, void *base);
int config_fields_dispatch(struct parser *ps, const char *path, json_object *o, const struct field *table,
                           void *base);
/* V, an int, within MIN..MAX into *RET, or an error naming PATH. */
int config_check_range(struct parser *ps, const char *path, json_object *v, uint64_t min, uint64_t max,
                       uint64_t *ret);
/* V into the unsigned of SIZE (4 or 8) bytes at P. */
void config_store_uint(void *p, size_t size, uint64_t v);
/* O's string, copied, replacing *RET. */
int config_dup_string(json_object *o, char **ret);

/* Row parsers for plain values, stored at the row's offset: unsigned in
 * the row's range, bool, string (copied), a sub-object (its table in ARG),
 * names (a vector into V, the caller frees the vector), a config word (a
 * number or "0x..." string; sets the OFFSET_HAS bool with FIELD_HAS). */
int config_field_uint(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
                      const struct field *f);
int config_field_bool(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
                      const struct field *f);
int config_field_string(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
                        const struct field *f);
int config_field_object(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
                        const struct field *f);
int config_field_names(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
                       const struct field *f);
int config_field_word(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
                      const struct field *f);

/* config-event.c: events[IDX] into *E (freed by event_config_done()),
 * and the "events" row of the root table. */
int config_parse_event(struct parser *ps, size_t idx, json_object *o, struct event_config *e);
int config_field_events(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
                        const struct field *f);
void event_config_done(struct event_config *e);
