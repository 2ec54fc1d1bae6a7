/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config-parse.h"
#include "evmon/cleanup.h"
#include "evmon/parse.h"

/* The config reader's tools: the position scanner (lines for messages),
 * config_fail(), and the table walk with the parsers of plain values. */

void config_parser_done(struct parser *ps) {
        for (size_t i = 0; i < ps->n_keys; i++)
                free(ps->keys[i].path);
        free(ps->keys);
        free(ps->error);
}

static void scan_space(struct parser *ps) {
        for (;;) {
                if (*ps->p == '\n') {
                        ps->line++;
                        ps->p++;
                } else if (isspace((unsigned char) *ps->p))
                        ps->p++;
                else if (ps->p[0] == '/' && ps->p[1] == '/') {
                        while (*ps->p && *ps->p != '\n')
                                ps->p++;
                } else if (ps->p[0] == '/' && ps->p[1] == '*') {
                        ps->p += 2;
                        while (*ps->p && !(ps->p[0] == '*' && ps->p[1] == '/')) {
                                if (*ps->p == '\n')
                                        ps->line++;
                                ps->p++;
                        }
                        if (*ps->p)
                                ps->p += 2;
                } else
                        return;
        }
}

static int scan_remember(struct parser *ps, char *path) {
        struct keyline *k;

        if (!path)
                return -ENOMEM;
        k = realloc(ps->keys, (ps->n_keys + 1) * sizeof(*k));
        if (!k) {
                free(path);
                return -ENOMEM;
        }
        ps->keys = k;
        ps->keys[ps->n_keys++] = (struct keyline) { .path = path, .line = ps->line };
        return 0;
}

/* Returns the string body's length, leaves p after the closing quote.
 * json-c also takes single-quoted strings (its tokener's non-strict mode),
 * so either quote opens one and only the same quote closes it. */
static int scan_string(struct parser *ps, const char **ret_start, size_t *ret_len) {
        const char *s;
        char quote = *ps->p;

        if (quote != '"' && quote != '\'')
                return -EINVAL;
        s = ++ps->p;
        while (*ps->p && *ps->p != quote) {
                if (*ps->p == '\\' && ps->p[1])
                        ps->p++;
                if (*ps->p == '\n')
                        ps->line++;
                ps->p++;
        }
        if (!*ps->p)
                return -EINVAL;
        *ret_start = s;
        *ret_len = ps->p - s;
        ps->p++;
        return 0;
}

/* After a member or an element: a comma (json-c allows one before the
 * closing bracket too) or the closing bracket itself. Anything else is
 * text the scanner does not know, and it gives up rather than guess:
 * each turn of the loops below must consume input or config_fail. */
static int scan_separator(struct parser *ps, char close) {
        scan_space(ps);
        if (*ps->p == ',') {
                ps->p++;
                return 0;
        }
        return *ps->p == close ? 0 : -EINVAL;
}

int config_scan(struct parser *ps, const char *path, unsigned depth) {
        const char *start;
        int r;

        if (depth > 64)
                return -EINVAL;
        scan_space(ps);
        /* The root's own line, for messages about a key that is missing. */
        if (depth == 0) {
                r = scan_remember(ps, strdup(""));
                if (r < 0)
                        return r;
        }
        if (*ps->p == '{') {
                ps->p++;
                for (;;) {
                        const char *k;
                        size_t n;
                        char *child;

                        scan_space(ps);
                        if (*ps->p == '}') {
                                ps->p++;
                                return 0;
                        }
                        r = scan_string(ps, &k, &n);
                        if (r < 0)
                                return r;
                        if (asprintf(&child, "%s%s%.*s", path, *path ? "." : "", (int) n, k) < 0)
                                return -ENOMEM;
                        /* The line where the key starts; scan_string counts
                         * no newlines in a normal key. */
                        r = scan_remember(ps, child);
                        if (r < 0)
                                return r;
                        scan_space(ps);
                        if (*ps->p != ':')
                                return -EINVAL;
                        ps->p++;
                        r = config_scan(ps, ps->keys[ps->n_keys - 1].path, depth + 1);
                        if (r < 0)
                                return r;
                        r = scan_separator(ps, '}');
                        if (r < 0)
                                return r;
                }
        }
        if (*ps->p == '[') {
                ps->p++;
                for (size_t i = 0;; i++) {
                        char *child;

                        scan_space(ps);
                        if (*ps->p == ']') {
                                ps->p++;
                                return 0;
                        }
                        if (asprintf(&child, "%s[%zu]", path, i) < 0)
                                return -ENOMEM;
                        r = scan_remember(ps, child);
                        if (r < 0)
                                return r;
                        r = config_scan(ps, ps->keys[ps->n_keys - 1].path, depth + 1);
                        if (r < 0)
                                return r;
                        r = scan_separator(ps, ']');
                        if (r < 0)
                                return r;
                }
        }
        if (*ps->p == '"' || *ps->p == '\'') {
                const char *s;
                size_t n;
                return scan_string(ps, &s, &n);
        }
        /* A number or a literal (true, NaN, -Infinity): at least one byte. */
        start = ps->p;
        while (*ps->p && !strchr(",]}:\"'", *ps->p) && !isspace((unsigned char) *ps->p) && *ps->p != '/')
                ps->p++;
        return ps->p > start ? 0 : -EINVAL;
}

unsigned config_line_of(const struct parser *ps, const char *path) {
        /* The scanner saw the whole text in order, so the last match is the
         * one json-c kept when a key repeats. */
        for (size_t i = ps->n_keys; i > 0; i--)
                if (strcmp(ps->keys[i - 1].path, path) == 0)
                        return ps->keys[i - 1].line;
        return 0;
}

/* The line of PATH, or of its closest parent the scanner saw: a key that
 * is missing is reported at the object that lacks it. */
static unsigned parser_line_near(const struct parser *ps, const char *path) {
        _cleanup_(freep) char *p = strdup(path);
        unsigned line;

        if (!p)
                return 0;
        for (;;) {
                char *cut = strrchr(p, '.'), *bracket = strrchr(p, '[');

                line = config_line_of(ps, p);
                if (line > 0 || !*p)
                        return line;
                if (!cut || (bracket && bracket > cut))
                        cut = bracket;
                if (cut)
                        *cut = 0;
                else
                        *p = 0;
        }
}

_printf_(3, 4) int config_fail(struct parser *ps, const char *path, const char *fmt, ...) {
        _cleanup_(freep) char *msg = NULL;
        unsigned line = path ? parser_line_near(ps, path) : 0;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&msg, fmt, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;
        free(ps->error);
        ps->error = NULL;
        if (line > 0 && !*path)
                r = asprintf(&ps->error, "%s:%u: %s", ps->file, line, msg);
        else if (line > 0)
                r = asprintf(&ps->error, "%s:%u: %s: %s", ps->file, line, path, msg);
        else if (path && *path)
                r = asprintf(&ps->error, "%s: %s: %s", ps->file, path, msg);
        else
                r = asprintf(&ps->error, "%s: %s", ps->file, msg);
        if (r < 0)
                ps->error = NULL;
        return -EINVAL;
}

const char *config_type_name(json_object *o) {
        return json_type_to_name(json_object_get_type(o));
}

char *config_path_join(const char *path, const char *key) {
        char *s;

        return asprintf(&s, "%s%s%s", path, *path ? "." : "", key) < 0 ? NULL : s;
}

char *config_path_index(const char *path, size_t i) {
        char *s;

        return asprintf(&s, "%s[%zu]", path, i) < 0 ? NULL : s;
}

static const struct field *field_find(const struct field *table, const char *key) {
        for (const struct field *f = table; f->key; f++)
                if (strcmp(f->key, key) == 0)
                        return f;
        return NULL;
}

/* Checks that every key of object O at PATH has a row in TABLE. */
int config_check_keys(struct parser *ps, json_object *o, const char *path, const struct field *table) {
        json_object_object_foreach(o, key, val) {
                _cleanup_(freep) char *child = NULL, *list = NULL;
                size_t n = 1;

                if (field_find(table, key))
                        continue;
                for (const struct field *f = table; f->key; f++)
                        n += strlen(f->key) + 2;
                list = calloc(1, n);
                child = config_path_join(path, key);
                if (!list || !child)
                        return -ENOMEM;
                for (const struct field *f = table; f->key; f++) {
                        if (f != table)
                                strcat(list, ", ");
                        strcat(list, f->key);
                }
                return config_fail(ps, child, "unknown key \"%s\" (known here: %s)", key, list);
        }
        return 0;
}

/* Each row of TABLE with a parser, in order, whose key O has. */
int config_fields_walk(struct parser *ps, const char *path, json_object *o, const struct field *table, void *base) {
        for (const struct field *f = table; f->key; f++) {
                _cleanup_(freep) char *child = NULL;
                json_object *v;
                int r;

                if (!f->parse)
                        continue;
                child = config_path_join(path, f->key);
                if (!child)
                        return -ENOMEM;
                if (!json_object_object_get_ex(o, f->key, &v)) {
                        if (f->flags & FIELD_REQUIRED)
                                return config_fail(ps, child, "%s", (const char *) f->arg);
                        continue;
                }
                if (f->type != json_type_null && !json_object_is_type(v, f->type))
                        return config_fail(ps, child, "expected %s, got %s", json_type_to_name(f->type),
                                           config_type_name(v));
                r = f->parse(ps, child, o, v, base, f);
                if (r < 0)
                        return r;
        }
        return 0;
}

int config_fields_dispatch(struct parser *ps, const char *path, json_object *o, const struct field *table,
                           void *base) {
        int r = config_check_keys(ps, o, path, table);
        return r < 0 ? r : config_fields_walk(ps, path, o, table, base);
}

int config_check_range(struct parser *ps, const char *path, json_object *v, uint64_t min, uint64_t max,
                       uint64_t *ret) {
        int64_t n = json_object_get_int64(v);

        if (n < 0 || (uint64_t) n < min || (uint64_t) n > max)
                return config_fail(ps, path, "%" PRIi64 " is out of range (%" PRIu64 "..%" PRIu64 ")", n, min, max);
        *ret = (uint64_t) n;
        return 0;
}

void config_store_uint(void *p, size_t size, uint64_t v) {
        if (size == sizeof(uint64_t))
                *(uint64_t *) p = v;
        else
                *(uint32_t *) p = (uint32_t) v;
}

int config_field_uint(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
                      const struct field *f) {
        uint64_t n = 0;
        int r;

        r = config_check_range(ps, path, v, f->min, f->max, &n);
        if (r < 0)
                return r;
        config_store_uint(field_ptr(base, f), f->size, n);
        return 0;
}

int config_field_bool(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
                      const struct field *f) {
        *(bool *) field_ptr(base, f) = json_object_get_boolean(v);
        return 0;
}

int config_dup_string(json_object *o, char **ret) {
        char *s = strdup(json_object_get_string(o));
        if (!s)
                return -ENOMEM;
        free(*ret);
        *ret = s;
        return 0;
}

int config_field_string(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
                        const struct field *f) {
        return config_dup_string(v, field_ptr(base, f));
}

int config_field_object(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
                        const struct field *f) {
        return config_fields_dispatch(ps, path, v, f->arg, base);
}

/* A list of names into a NULL-terminated vector of pointers into V (valid
 * while V lives), stored as a const char ** the caller frees. */
int config_field_names(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
                       const struct field *f) {
        const char ***ret = field_ptr(base, f);
        size_t n;

        if (!json_object_is_type(v, json_type_array))
                return config_fail(ps, path, "expected an array of names, got %s", config_type_name(v));
        n = json_object_array_length(v);
        free(*ret);
        *ret = calloc(n + 1, sizeof(char *));
        if (!*ret)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *a = json_object_array_get_idx(v, i);

                if (!json_object_is_type(a, json_type_string)) {
                        _cleanup_(freep) char *child = config_path_index(path, i);
                        return child ? config_fail(ps, child, "expected a name, got %s", config_type_name(a)) : -ENOMEM;
                }
                (*ret)[i] = json_object_get_string(a);
        }
        return 0;
}

/* A u64 given as a number or as a "0x..." string (config words). */
int config_field_word(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
                      const struct field *f) {
        uint64_t *ret = field_ptr(base, f);

        if (json_object_is_type(v, json_type_int) && json_object_get_int64(v) >= 0)
                *ret = (uint64_t) json_object_get_int64(v);
        else if (json_object_is_type(v, json_type_string)) {
                const char *s = json_object_get_string(v);

                if (parse_u64(s, ret) < 0)
                        return config_fail(ps, path, "\"%s\" is not a number (0x... for hex)", s);
        } else
                return config_fail(ps, path, "expected a number or a \"0x...\" string, got %s", config_type_name(v));
        if (f->flags & FIELD_HAS)
                *(bool *) ((uint8_t *) base + f->offset_has) = true;
        return 0;
}
