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
 * range. fields_dispatch() refuses keys the table lacks, checks each
 * value's type and hands it to its row's parser, so every object gets the
 * same FILE:LINE: KEY: messages. A table's order is the order of its
 * "known here" list and of its checks; it ends with a row whose key is
 * NULL. */
struct field;
typedef int (*field_parse_t)(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
                             const struct field *f);

enum {
        FIELD_REQUIRED = 1 << 0, /* absent: fail with ARG as the message */
        FIELD_KIND = 1 << 1,     /* an event kind ("tracepoint"), read by parse_event() */
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
#define F_UINT(k, st, m, lo, hi) { .key = k, .type = json_type_int, .parse = field_uint, FIELD_AT(st, m), .min = lo, .max = hi }
#define F_BOOL(k, st, m) { .key = k, .type = json_type_boolean, .parse = field_bool, FIELD_AT(st, m) }
#define F_STRING(k, st, m) { .key = k, .type = json_type_string, .parse = field_string, FIELD_AT(st, m) }
#define F_NAMES(k, st, m) { .key = k, .type = json_type_null, .parse = field_names, FIELD_AT(st, m) }
#define F_OBJECT(k, table) { .key = k, .type = json_type_object, .parse = field_object, .arg = table }
#define F_CUSTOM(k, t, fn) { .key = k, .type = t, .parse = fn }
#define F_KIND(k) { .key = k, .flags = FIELD_KIND }
#define F_OUTSIDE(k) { .key = k }

static inline void *field_ptr(void *base, const struct field *f) {
        return (uint8_t *) base + f->offset;
}

void parser_done(struct parser *ps);
int scan_value(struct parser *ps, const char *path, unsigned depth);
unsigned parser_line_of(const struct parser *ps, const char *path);
_printf_(3, 4) int fail(struct parser *ps, const char *path, const char *fmt, ...);
const char *json_type_name(json_object *o);
char *path_join(const char *path, const char *key);
char *path_index(const char *path, size_t i);
int check_keys(struct parser *ps, json_object *o, const char *path, const struct field *table);
int fields_walk(struct parser *ps, const char *path, json_object *o, const struct field *table, void *base);
int fields_dispatch(struct parser *ps, const char *path, json_object *o, const struct field *table,
                    void *base);
int check_range(struct parser *ps, const char *path, json_object *v, uint64_t min, uint64_t max,
                uint64_t *ret);
void store_uint(void *p, size_t size, uint64_t v);
int dup_string(json_object *o, char **ret);
int field_uint(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
               const struct field *f);
int field_bool(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
               const struct field *f);
int field_string(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
                 const struct field *f);
int field_object(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
                 const struct field *f);
int field_names(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
                const struct field *f);
int field_word(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
               const struct field *f);

/* config-event.c */
int parse_event(struct parser *ps, size_t idx, json_object *o, struct event_config *e);
int field_events(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
                 const struct field *f);
void event_config_done(struct event_config *e);
