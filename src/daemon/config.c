/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "metrics.h"
#include "evmon/attr.h"
#include "evmon/cleanup.h"
#include "evmon/error.h"
#include "evmon/io.h"
#include "evmon/jsonc.h"

const char config_builtin[] =
        "{\n"
        "  \"events\": [\n"
        "    {\"tracepoint\": \"sched:sched_process_exec\"},\n"
        "    {\"tracepoint\": \"sched:sched_process_exit\"},\n"
        "    {\"tracepoint\": \"sched:sched_process_fork\"}\n"
        "  ]\n"
        "}\n";

static const char *const event_kind_table[_EVENT_KIND_MAX] = {
        [EVENT_TRACEPOINT] = "tracepoint",
        [EVENT_KPROBE] = "kprobe",
        [EVENT_KRETPROBE] = "kretprobe",
        [EVENT_UPROBE] = "uprobe",
        [EVENT_URETPROBE] = "uretprobe",
        [EVENT_SOFTWARE] = "software",
        [EVENT_HARDWARE] = "hardware",
        [EVENT_CACHE] = "cache",
        [EVENT_RAW] = "raw",
        [EVENT_BREAKPOINT] = "breakpoint",
        [EVENT_PMU] = "pmu",
};

const char *event_kind_to_string(enum event_kind k) {
        return k < _EVENT_KIND_MAX ? event_kind_table[k] : NULL;
}

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

static void parser_done(struct parser *ps) {
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
 * each turn of the loops below must consume input or fail. */
static int scan_separator(struct parser *ps, char close) {
        scan_space(ps);
        if (*ps->p == ',') {
                ps->p++;
                return 0;
        }
        return *ps->p == close ? 0 : -EINVAL;
}

static int scan_value(struct parser *ps, const char *path, unsigned depth) {
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
                        r = scan_value(ps, ps->keys[ps->n_keys - 1].path, depth + 1);
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
                        r = scan_value(ps, ps->keys[ps->n_keys - 1].path, depth + 1);
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

static unsigned parser_line_of(const struct parser *ps, const char *path) {
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

                line = parser_line_of(ps, p);
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

_printf_(3, 4) static int fail(struct parser *ps, const char *path, const char *fmt, ...) {
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

static const char *json_type_name(json_object *o) {
        return json_type_to_name(json_object_get_type(o));
}

/* Checks that every key of object O at PATH is one of ALLOWED. */
static int check_keys(struct parser *ps, json_object *o, const char *path, const char *const *allowed) {
        json_object_object_foreach(o, key, val) {
                bool ok = false;
                (void) val;
                for (const char *const *a = allowed; *a; a++)
                        if (strcmp(*a, key) == 0)
                                ok = true;
                if (!ok) {
                        _cleanup_(freep) char *child = NULL;
                        _cleanup_(freep) char *list = NULL;
                        size_t n = 0;

                        for (const char *const *a = allowed; *a; a++)
                                n += strlen(*a) + 2;
                        list = calloc(1, n + 1);
                        if (!list)
                                return -ENOMEM;
                        for (const char *const *a = allowed; *a; a++) {
                                if (a != allowed)
                                        strcat(list, ", ");
                                strcat(list, *a);
                        }
                        if (asprintf(&child, "%s%s%s", path, *path ? "." : "", key) < 0)
                                return -ENOMEM;
                        return fail(ps, child, "unknown key \"%s\" (known here: %s)", key, list);
                }
        }
        return 0;
}

static int get_typed(struct parser *ps, json_object *parent, const char *path, const char *key,
                     json_type type, json_object **ret) {
        _cleanup_(freep) char *child = NULL;
        json_object *o;

        *ret = NULL;
        if (!json_object_object_get_ex(parent, key, &o))
                return 0;
        if (asprintf(&child, "%s%s%s", path, *path ? "." : "", key) < 0)
                return -ENOMEM;
        if (!json_object_is_type(o, type))
                return fail(ps, child, "expected %s, got %s", json_type_to_name(type), json_type_name(o));
        *ret = o;
        return 1;
}

static int get_uint(struct parser *ps, json_object *parent, const char *path, const char *key,
                    uint64_t min, uint64_t max, uint64_t *val) {
        _cleanup_(freep) char *child = NULL;
        json_object *o;
        int64_t v;
        int r;

        r = get_typed(ps, parent, path, key, json_type_int, &o);
        if (r <= 0)
                return r;
        if (asprintf(&child, "%s%s%s", path, *path ? "." : "", key) < 0)
                return -ENOMEM;
        v = json_object_get_int64(o);
        if (v < 0 || (uint64_t) v < min || (uint64_t) v > max)
                return fail(ps, child, "%" PRIi64 " is out of range (%" PRIu64 "..%" PRIu64 ")", v, min, max);
        *val = (uint64_t) v;
        return 1;
}

static int dup_string(json_object *o, char **ret) {
        char *s = strdup(json_object_get_string(o));
        if (!s)
                return -ENOMEM;
        free(*ret);
        *ret = s;
        return 0;
}

static int get_names(struct parser *ps, json_object *o, const char *path, const char *key, const char ***ret);
static int get_bool(struct parser *ps, json_object *o, const char *path, const char *key, bool *ret);

/* socket.admin_add: {"kinds": [KIND...], "paths": [PATTERN...], "fetch": BOOL}. */
static int parse_admin_add(struct parser *ps, struct config *c, json_object *o) {
        static const char *const keys[] = { "kinds", "paths", "fetch", NULL };
        _cleanup_(freep) const char **kinds = NULL, **paths = NULL;
        struct admin_add *a = &c->admin_add;
        char child[128];
        int r;

        r = check_keys(ps, o, "socket.admin_add", keys);
        if (r < 0)
                return r;
        if ((r = get_names(ps, o, "socket.admin_add", "kinds", &kinds)) < 0 ||
            (r = get_names(ps, o, "socket.admin_add", "paths", &paths)) < 0 ||
            (r = get_bool(ps, o, "socket.admin_add", "fetch", &a->fetch)) < 0)
                return r;
        for (size_t i = 0; kinds && kinds[i]; i++) {
                size_t k;

                for (k = 0; k < _EVENT_KIND_MAX; k++)
                        if (strcmp(kinds[i], event_kind_table[k]) == 0)
                                break;
                snprintf(child, sizeof(child), "socket.admin_add.kinds[%zu]", i);
                if (k == _EVENT_KIND_MAX)
                        return fail(ps, child, "unknown event kind \"%s\" (known: tracepoint, kprobe, kretprobe, "
                                    "uprobe, uretprobe, software, hardware, cache, raw, breakpoint, pmu)", kinds[i]);
                a->kinds |= 1u << k;
        }
        if (paths) {
                size_t n = 0;

                while (paths[n])
                        n++;
                a->paths = calloc(n + 1, sizeof(char *));
                if (!a->paths)
                        return -ENOMEM;
                for (size_t i = 0; i < n; i++) {
                        snprintf(child, sizeof(child), "socket.admin_add.paths[%zu]", i);
                        /* Matched against the binary's real path: a
                         * relative pattern would match nothing. */
                        if (paths[i][0] != '/')
                                return fail(ps, child, "\"%s\" must be an absolute path or pattern such as "
                                            "\"/usr/bin/*\"", paths[i]);
                        a->paths[i] = strdup(paths[i]);
                        if (!a->paths[i])
                                return -ENOMEM;
                }
        }
        if ((a->kinds & (1u << EVENT_UPROBE | 1u << EVENT_URETPROBE)) && !a->paths)
                return fail(ps, "socket.admin_add.paths", "uprobes are in socket.admin_add.kinds, but no \"paths\" "
                            "says which binaries (e.g. [\"/usr/bin/*\"])");
        return 0;
}

static int parse_socket(struct parser *ps, struct config *c, json_object *o) {
        static const char *const keys[] = { "path", "mode", "group", "admin_group", "admin_add", NULL };
        json_object *v;
        int r;

        r = check_keys(ps, o, "socket", keys);
        if (r < 0)
                return r;
        r = get_typed(ps, o, "socket", "path", json_type_string, &v);
        if (r < 0)
                return r;
        if (v) {
                const char *s = json_object_get_string(v);
                if (s[0] != '/' || strlen(s) >= 108)
                        return fail(ps, "socket.path", "\"%s\" must be an absolute path shorter than 108 bytes", s);
                r = dup_string(v, &c->socket_path);
                if (r < 0)
                        return r;
        }
        if (json_object_object_get_ex(o, "mode", &v)) {
                const char *s;
                char *end;
                unsigned long m;

                if (!json_object_is_type(v, json_type_string))
                        return fail(ps, "socket.mode", "expected an octal string such as \"0660\", got %s", json_type_name(v));
                s = json_object_get_string(v);
                errno = 0;
                m = strtoul(s, &end, 8);
                /* strtoul() would take " 660" and "+660" too. */
                if (!*s || s[strspn(s, "01234567")] || *end || errno || m > 0777)
                        return fail(ps, "socket.mode", "\"%s\" is not an octal file mode such as \"0660\"", s);
                c->socket_mode = (mode_t) m;
        }
        r = get_typed(ps, o, "socket", "group", json_type_string, &v);
        if (r < 0)
                return r;
        if (v) {
                r = dup_string(v, &c->socket_group);
                if (r < 0)
                        return r;
        }
        r = get_typed(ps, o, "socket", "admin_group", json_type_string, &v);
        if (r < 0)
                return r;
        if (v) {
                r = dup_string(v, &c->socket_admin_group);
                if (r < 0)
                        return r;
        }
        r = get_typed(ps, o, "socket", "admin_add", json_type_object, &v);
        if (r < 0)
                return r;
        if (v) {
                if (!c->socket_admin_group)
                        return fail(ps, "socket.admin_add", "there is no socket.admin_group for it to limit");
                r = parse_admin_add(ps, c, v);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ring.KEY, a period that starts from flush_ms and grows (HOW): never
 * below flush_ms; unset, DEF or flush_ms when that is longer. */
static int get_ring_period(struct parser *ps, json_object *o, const char *key, unsigned def, const char *how,
                           const struct config *c, unsigned *ret) {
        _cleanup_(freep) char *path = NULL;
        uint64_t v;
        int r;

        r = get_uint(ps, o, "ring", key, 1, 10000, &v);
        if (r < 0)
                return r;
        if (r == 0) {
                *ret = c->flush_ms > def ? c->flush_ms : def;
                return 0;
        }
        if (v < c->flush_ms) {
                if (asprintf(&path, "ring.%s", key) < 0)
                        return -ENOMEM;
                return fail(ps, path, "%" PRIu64 " is below ring.flush_ms (%u): the reader %s", v, c->flush_ms, how);
        }
        *ret = (unsigned) v;
        return 0;
}

static int parse_ring(struct parser *ps, struct config *c, json_object *o) {
        static const char *const keys[] = { "pages", "latency_ms", "flush_ms", "busy_flush_ms", "idle_flush_ms",
                                            "doorbell", NULL };
        bool latency = false;
        json_object *b;
        uint64_t v;
        int r;

        r = check_keys(ps, o, "ring", keys);
        if (r < 0)
                return r;
        r = get_uint(ps, o, "ring", "pages", 1, 1u << 16, &v);
        if (r < 0)
                return r;
        if (r > 0) {
                if (v & (v - 1))
                        return fail(ps, "ring.pages", "%" PRIu64 " is not a power of two (try %" PRIu64 ")",
                                    v, (uint64_t) 1 << (63 - __builtin_clzll(v)));
                c->ring_pages = (unsigned) v;
        }
        /* The latency budget: how long a record of a flowing stream may
         * wait in its ring (the look while records flow); flush_ms is its
         * old name. A lone record, or a burst's first, rings its doorbell
         * whatever this says. */
        r = get_uint(ps, o, "ring", "latency_ms", 1, 1000, &v);
        if (r < 0)
                return r;
        if (r > 0) {
                c->flush_ms = (unsigned) v;
                latency = true;
        }
        r = get_uint(ps, o, "ring", "flush_ms", 1, 1000, &v);
        if (r < 0)
                return r;
        if (r > 0 && latency)
                return fail(ps, "ring.flush_ms",
                            "is the old name of ring.latency_ms, which is set too: keep only ring.latency_ms");
        if (r > 0)
                c->flush_ms = (unsigned) v;
        r = get_ring_period(ps, o, "idle_flush_ms", CONFIG_DEFAULT_IDLE_FLUSH_MS,
                            "backs off from flush_ms to idle_flush_ms when the rings are quiet", c, &c->idle_flush_ms);
        if (r < 0)
                return r;
        r = get_ring_period(ps, o, "busy_flush_ms", CONFIG_DEFAULT_BUSY_FLUSH_MS,
                            "stretches its look from flush_ms up to busy_flush_ms while records pour in", c,
                            &c->busy_flush_ms);
        if (r < 0)
                return r;
        r = get_typed(ps, o, "ring", "doorbell", json_type_boolean, &b);
        if (r < 0)
                return r;
        if (r > 0)
                c->doorbell = json_object_get_boolean(b);
        return 0;
}

static int parse_clients(struct parser *ps, struct config *c, json_object *o) {
        static const char *const keys[] = { "max", "max_per_uid", "queue_kib", NULL };
        uint64_t v;
        int r;

        r = check_keys(ps, o, "clients", keys);
        if (r < 0)
                return r;
        r = get_uint(ps, o, "clients", "max", 1, 4096, &v);
        if (r < 0)
                return r;
        if (r > 0)
                c->max_clients = (unsigned) v;
        r = get_uint(ps, o, "clients", "max_per_uid", 1, 4096, &v);
        if (r < 0)
                return r;
        if (r > 0)
                c->max_clients_per_uid = (unsigned) v;
        r = get_uint(ps, o, "clients", "queue_kib", 64, 1u << 20, &v);
        if (r < 0)
                return r;
        if (r > 0)
                c->client_queue_bytes = (size_t) v * 1024;
        return 0;
}

static int parse_targets(struct parser *ps, struct config *c, json_object *o) {
        static const char *const keys[] = { "cgroups", "pids", NULL };
        json_object *a;
        size_t n;
        int r;

        r = check_keys(ps, o, "targets", keys);
        if (r < 0)
                return r;
        r = get_typed(ps, o, "targets", "cgroups", json_type_array, &a);
        if (r < 0)
                return r;
        if (a) {
                n = json_object_array_length(a);
                c->cgroups = calloc(n + 1, sizeof(char *));
                c->cgroups_where = calloc(n + 1, sizeof(char *));
                if (!c->cgroups || !c->cgroups_where)
                        return -ENOMEM;
                for (size_t i = 0; i < n; i++) {
                        json_object *e = json_object_array_get_idx(a, i);
                        char path[64];

                        snprintf(path, sizeof(path), "targets.cgroups[%zu]", i);
                        if (!json_object_is_type(e, json_type_string))
                                return fail(ps, path, "expected a cgroup path string, got %s", json_type_name(e));
                        c->cgroups[i] = strdup(json_object_get_string(e));
                        if (!c->cgroups[i] ||
                            asprintf(&c->cgroups_where[i], "%s:%u: %s", ps->file, parser_line_of(ps, path), path) < 0)
                                return -ENOMEM;
                }
        }
        r = get_typed(ps, o, "targets", "pids", json_type_array, &a);
        if (r < 0)
                return r;
        if (a) {
                n = json_object_array_length(a);
                c->pids = calloc(n ? n : 1, sizeof(pid_t));
                if (!c->pids)
                        return -ENOMEM;
                for (size_t i = 0; i < n; i++) {
                        json_object *e = json_object_array_get_idx(a, i);
                        char path[64];
                        int64_t v;

                        snprintf(path, sizeof(path), "targets.pids[%zu]", i);
                        if (!json_object_is_type(e, json_type_int))
                                return fail(ps, path, "expected a process id, got %s", json_type_name(e));
                        v = json_object_get_int64(e);
                        if (v <= 0 || v > INT32_MAX)
                                return fail(ps, path, "%" PRIi64 " is not a valid process id", v);
                        c->pids[c->n_pids++] = (pid_t) v;
                }
        }
        return 0;
}

/* Whether S holds a C0 control, DEL or a C1 control (U+0080..U+009F,
 * 0xc2 0x80..0x9f in UTF-8: U+009B is CSI to many terminals). */
static bool has_control(const char *s) {
        for (const unsigned char *p = (const unsigned char *) s; *p; p++)
                if (*p < 0x20 || *p == 0x7f || (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f))
                        return true;
        return false;
}

static bool valid_name(const char *s) {
        if (!*s || !(isalpha((unsigned char) *s) || *s == '_'))
                return false;
        for (; *s; s++)
                if (!isalnum((unsigned char) *s) && *s != '_')
                        return false;
        return true;
}

static void event_config_done(struct event_config *e) {
        free(e->wire_name);
        free(e->system);
        free(e->name);
        free(e->target);
        strv_free(e->fetch);
        free(e->filter);
        free(e->where);
        free(e->filter_where);
        free(e->group);
}

/* A list of names at PATH.KEY into a NULL-terminated vector of pointers
 * into O (valid while O lives); absent: *RET stays NULL. */
static int get_names(struct parser *ps, json_object *o, const char *path, const char *key, const char ***ret) {
        char child[128];
        json_object *v;
        size_t n;

        *ret = NULL;
        if (!json_object_object_get_ex(o, key, &v))
                return 0;
        snprintf(child, sizeof(child), "%s.%s", path, key);
        if (!json_object_is_type(v, json_type_array))
                return fail(ps, child, "expected an array of names, got %s", json_type_name(v));
        n = json_object_array_length(v);
        *ret = calloc(n + 1, sizeof(char *));
        if (!*ret)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *a = json_object_array_get_idx(v, i);

                if (!json_object_is_type(a, json_type_string)) {
                        snprintf(child, sizeof(child), "%s.%s[%zu]", path, key, i);
                        return fail(ps, child, "expected a name, got %s", json_type_name(a));
                }
                (*ret)[i] = json_object_get_string(a);
        }
        return 0;
}

static int get_bool(struct parser *ps, json_object *o, const char *path, const char *key, bool *ret) {
        json_object *v;
        int r;

        r = get_typed(ps, o, path, key, json_type_boolean, &v);
        if (r > 0)
                *ret = json_object_get_boolean(v);
        return r < 0 ? r : 0;
}

/* A u64 given as a number or as a "0x..." string (config words). */
static int get_u64(struct parser *ps, json_object *o, const char *path, const char *key, bool *ret_has,
                   uint64_t *ret) {
        char child[128];
        json_object *v;

        if (!json_object_object_get_ex(o, key, &v))
                return 0;
        snprintf(child, sizeof(child), "%s.%s", path, key);
        if (json_object_is_type(v, json_type_int) && json_object_get_int64(v) >= 0)
                *ret = (uint64_t) json_object_get_int64(v);
        else if (json_object_is_type(v, json_type_string)) {
                const char *s = json_object_get_string(v);
                char *end;

                errno = 0;
                *ret = strtoull(s, &end, 0);
                if (!*s || *s == '-' || errno != 0 || *end)
                        return fail(ps, child, "\"%s\" is not a number (0x... for hex)", s);
        } else
                return fail(ps, child, "expected a number or a \"0x...\" string, got %s", json_type_name(v));
        if (ret_has)
                *ret_has = true;
        return 0;
}

/* The perf_event_attr options of any perf event entry (DESIGN.md, "Every
 * perf event"), built with attr_from_spec() so that a bad name is a config
 * error naming its key; what the kernel refuses is found at open time. */
/* "callchain": {"max_stack", "kernel", "user"}. */
static int parse_callchain(struct parser *ps, const char *path, json_object *o, struct attr_spec *spec) {
        static const char *const cc_keys[] = { "max_stack", "kernel", "user", NULL };
        bool kernel = true, user = true;
        char child[128];
        json_object *v;
        uint64_t u = 0;
        int r;

        r = get_typed(ps, o, path, "callchain", json_type_object, &v);
        if (r < 0 || !v)
                return r;
        snprintf(child, sizeof(child), "%s.callchain", path);
        if ((r = check_keys(ps, v, child, cc_keys)) < 0 ||
            (r = get_uint(ps, v, child, "max_stack", 1, UINT16_MAX, &u)) < 0 ||
            (r = get_bool(ps, v, child, "kernel", &kernel)) < 0 ||
            (r = get_bool(ps, v, child, "user", &user)) < 0)
                return r;
        spec->callchain = true;
        spec->max_stack = (unsigned) u;
        spec->callchain_no_kernel = !kernel;
        spec->callchain_no_user = !user;
        return 0;
}

static int parse_perf_attr(struct parser *ps, const char *path, json_object *o, const struct attr_spec *spec,
                           struct event_config *e);

static int parse_perf_event(struct parser *ps, const char *path, json_object *o, struct event_config *e) {
        _cleanup_(freep) const char **sample = NULL, **read = NULL, **regs_user = NULL, **regs_intr = NULL,
                                    **branch = NULL, **exclude = NULL, **records = NULL;
        struct attr_spec spec = { .kind = (enum attr_kind) (e->kind - EVENT_SOFTWARE), .name = e->target,
                                  .inherit = true };
        json_object *v;
        uint64_t u;
        int r;

        r = get_typed(ps, o, path, "access", json_type_string, &v);
        if (r < 0)
                return r;
        if (v)
                spec.access = json_object_get_string(v);
        u = 0;
        r = get_uint(ps, o, path, "len", 1, 8, &u);
        if (r < 0)
                return r;
        spec.len = (unsigned) u;
        if ((spec.access || spec.len) && e->kind != EVENT_BREAKPOINT)
                return fail(ps, path, "\"access\" and \"len\" are for breakpoints");

        if ((r = get_bool(ps, o, path, "count", &spec.count)) < 0 ||
            (r = get_uint(ps, o, path, "period", 1, UINT64_MAX >> 1, &spec.period)) < 0 ||
            (r = get_uint(ps, o, path, "freq", 1, UINT32_MAX, &spec.freq)) < 0 ||
            (r = get_names(ps, o, path, "sample", &sample)) < 0 ||
            (r = get_names(ps, o, path, "read", &read)) < 0 ||
            (r = get_names(ps, o, path, "regs_user", &regs_user)) < 0 ||
            (r = get_names(ps, o, path, "regs_intr", &regs_intr)) < 0 ||
            (r = get_names(ps, o, path, "branch", &branch)) < 0 ||
            (r = get_names(ps, o, path, "exclude", &exclude)) < 0 ||
            (r = get_names(ps, o, path, "records", &records)) < 0 ||
            (r = get_bool(ps, o, path, "inherit", &spec.inherit)) < 0 ||
            (r = get_bool(ps, o, path, "inherit_thread", &spec.inherit_thread)) < 0 ||
            (r = get_bool(ps, o, path, "pinned", &spec.pinned)) < 0 ||
            (r = get_bool(ps, o, path, "exclusive", &spec.exclusive)) < 0 ||
            (r = get_bool(ps, o, path, "enable_on_exec", &spec.enable_on_exec)) < 0 ||
            (r = get_bool(ps, o, path, "remove_on_exec", &spec.remove_on_exec)) < 0 ||
            (r = get_u64(ps, o, path, "config1", &spec.has_config1, &spec.config1)) < 0 ||
            (r = get_u64(ps, o, path, "config2", &spec.has_config2, &spec.config2)) < 0 ||
            (r = get_u64(ps, o, path, "config3", &spec.has_config3, &spec.config3)) < 0)
                return r;
        spec.sample = sample;
        spec.read = read;
        spec.regs_user = regs_user;
        spec.regs_intr = regs_intr;
        spec.branch = branch;
        spec.exclude = exclude;
        spec.records = records;

        u = 0;
        r = get_uint(ps, o, path, "stack_user", 8, UINT32_MAX, &u);
        if (r < 0)
                return r;
        spec.stack_user = (uint32_t) u;
        u = 0;
        r = get_uint(ps, o, path, "precise_ip", 0, 3, &u);
        if (r < 0)
                return r;
        spec.precise_ip = (unsigned) u;

        r = parse_callchain(ps, path, o, &spec);
        if (r < 0)
                return r;
        r = get_typed(ps, o, path, "group", json_type_string, &v);
        if (r < 0)
                return r;
        if (v) {
                char key[96];

                snprintf(key, sizeof(key), "%s.group", path);
                if (!*json_object_get_string(v) || has_control(json_object_get_string(v)))
                        return fail(ps, key, "must be a non-empty name without control characters (it goes into "
                                    "counter lines)");
                if (!(e->group = strdup(json_object_get_string(v))))
                        return -ENOMEM;
        }
        return parse_perf_attr(ps, path, o, &spec, e);
}

/* The attr from SPEC (attr.c judges the options together), then
 * "symbols", which needs callchains. */
static int parse_perf_attr(struct parser *ps, const char *path, json_object *o, const struct attr_spec *spec,
                           struct event_config *e) {
        struct attr_error err = {};
        char child[128];
        int r;

        r = attr_from_spec(spec, NULL, &e->attr, &err);
        if (r < 0) {
                if (strcmp(err.key, "name") == 0)
                        snprintf(child, sizeof(child), "%s.%s", path, event_kind_table[e->kind]);
                else
                        snprintf(child, sizeof(child), "%s.%s", path, err.key);
                return fail(ps, child, "%s%s%s%s", err.value ? "\"" : "", err.value ?: "", err.value ? "\": " : "",
                            err.reason);
        }
        e->count = spec->count;
        r = get_bool(ps, o, path, "symbols", &e->symbols);
        if (r < 0)
                return r;
        if (e->symbols && !(e->attr.sample_type & PERF_SAMPLE_CALLCHAIN)) {
                snprintf(child, sizeof(child), "%s.symbols", path);
                return fail(ps, child, "names callchain frames, and this event samples none: add \"callchain\" to "
                            "\"sample\" (or a \"callchain\" object)");
        }
        return 0;
}

/* A perf event entry: KIND:NAME on the wire unless "name" says otherwise. */
static int parse_perf_entry(struct parser *ps, const char *path, const char *child, json_object *o,
                            json_object *kind_val, struct event_config *e) {
        const char *s = json_object_get_string(kind_val);
        char key[96];
        json_object *v;
        int r;

        if (!*s)
                return fail(ps, child, "empty event name (`evmonctl list` shows them)");
        e->target = strdup(s);
        e->system = strdup(event_kind_table[e->kind]);
        e->name = strdup(s);
        if (!e->target || !e->system || !e->name)
                return -ENOMEM;
        if (json_object_object_get_ex(o, "fetch", &v)) {
                snprintf(key, sizeof(key), "%s.fetch", path);
                return fail(ps, key, "only probes take fetch-args");
        }
        if (json_object_object_get_ex(o, "filter", &v)) {
                snprintf(key, sizeof(key), "%s.filter", path);
                return fail(ps, key, "ftrace filters are for tracepoints and probes");
        }
        r = get_typed(ps, o, path, "name", json_type_string, &v);
        if (r < 0)
                return r;
        if (v) {
                const char *n = json_object_get_string(v);

                snprintf(key, sizeof(key), "%s.name", path);
                if (!*n || strpbrk(n, " \"") || has_control(n))
                        return fail(ps, key, "must be a non-empty name without spaces, quotes or control characters");
                e->wire_name = strdup(n);
        } else if (asprintf(&e->wire_name, "%s:%s", event_kind_table[e->kind], s) < 0)
                e->wire_name = NULL;
        if (!e->wire_name)
                return -ENOMEM;
        return parse_perf_event(ps, path, o, e);
}

static int parse_tracepoint_entry(struct parser *ps, const char *path, const char *child, json_object *o,
                                  json_object *kind_val, struct event_config *e) {
        const char *s = json_object_get_string(kind_val), *colon = strchr(s, ':');
        char key[96];
        json_object *v;

        if (!colon || colon == s || !colon[1] || strchr(colon + 1, ':') || strchr(s, '/'))
                return fail(ps, child, "\"%s\" is not SYSTEM:NAME (for example \"sched:sched_process_exec\"; `evmonctl list` shows them)", s);
        e->system = strndup(s, colon - s);
        e->name = strdup(colon + 1);
        e->wire_name = strdup(s);
        if (!e->system || !e->name || !e->wire_name)
                return -ENOMEM;
        if (json_object_object_get_ex(o, "fetch", &v)) {
                snprintf(key, sizeof(key), "%s.fetch", path);
                return fail(ps, key, "only probes take fetch-args; a tracepoint's fields come from its format");
        }
        if (json_object_object_get_ex(o, "name", &v)) {
                snprintf(key, sizeof(key), "%s.name", path);
                return fail(ps, key, "a tracepoint is named by its SYSTEM:NAME; \"name\" is for probes");
        }
        return 0;
}

/* A probe's "fetch": "NAME=FETCHARG" strings, as the kernel takes them. */
static int parse_fetch(struct parser *ps, const char *path, json_object *v, struct event_config *e) {
        char child[96];
        size_t n;

        snprintf(child, sizeof(child), "%s.fetch", path);
        if (!json_object_is_type(v, json_type_array))
                return fail(ps, child, "expected an array of \"NAME=FETCHARG\" strings, got %s", json_type_name(v));
        n = json_object_array_length(v);
        e->fetch = calloc(n + 1, sizeof(char *));
        if (!e->fetch)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *a = json_object_array_get_idx(v, i);
                const char *s2, *eq;
                char achild[128];

                snprintf(achild, sizeof(achild), "%s.fetch[%zu]", path, i);
                if (!json_object_is_type(a, json_type_string))
                        return fail(ps, achild, "expected a \"NAME=FETCHARG\" string, got %s", json_type_name(a));
                s2 = json_object_get_string(a);
                eq = strchr(s2, '=');
                if (!eq || eq == s2 || !eq[1] || strpbrk(s2, " \t\n"))
                        return fail(ps, achild, "\"%s\" is not NAME=FETCHARG (for example \"path=+0(%%si):string\")", s2);
                e->fetch[i] = strdup(s2);
                if (!e->fetch[i])
                        return -ENOMEM;
        }
        return 0;
}

static int parse_probe_entry(struct parser *ps, const char *path, const char *child, json_object *o,
                             json_object *kind_val, struct event_config *e) {
        const char *s = json_object_get_string(kind_val);
        const char *kind = event_kind_table[e->kind];
        char key[96];
        json_object *v;

        if (!*s)
                return fail(ps, child, "empty probe target");
        e->target = strdup(s);
        if (!e->target)
                return -ENOMEM;
        snprintf(key, sizeof(key), "%s.name", path);
        if (!json_object_object_get_ex(o, "name", &v))
                return fail(ps, path, "a %s needs a \"name\" (letters, digits, _): it is served as \"%s:NAME\"",
                            kind, kind);
        if (!json_object_is_type(v, json_type_string) || !valid_name(json_object_get_string(v)))
                return fail(ps, key, "must be a name of letters, digits and _ that does not start with a digit");
        e->name = strdup(json_object_get_string(v));
        e->system = strdup(kind);
        if (!e->name || !e->system || asprintf(&e->wire_name, "%s:%s", e->system, e->name) < 0)
                return -ENOMEM;
        if (json_object_object_get_ex(o, "fetch", &v))
                return parse_fetch(ps, path, v, e);
        return 0;
}

static int parse_filter(struct parser *ps, const char *path, json_object *o, struct event_config *e) {
        char child[96];
        json_object *v;
        unsigned line;
        int r;

        r = get_typed(ps, o, path, "filter", json_type_string, &v);
        if (r <= 0 || !v)
                return r;
        snprintf(child, sizeof(child), "%s.filter", path);
        line = parser_line_of(ps, child);
        e->filter = strdup(json_object_get_string(v));
        if (!e->filter || asprintf(&e->filter_where, line ? "%s:%u: %s" : "%s%.0u: %s", ps->file, line, child) < 0)
                return -ENOMEM;
        return 0;
}

/* Which kind the entry is (exactly one of the kind keys), into *RET_KIND
 * and *RET_VAL; its keys checked against what that kind takes. */
static int parse_event_kind(struct parser *ps, const char *path, json_object *o, int *ret_kind, json_object **ret_val) {
        static const char *const keys[] = { "tracepoint", "kprobe", "kretprobe", "uprobe", "uretprobe",
                                            "name", "fetch", "filter", NULL };
        static const char *const keys_perf[] = { "software", "hardware", "cache", "raw", "breakpoint", "pmu",
                                                 "name", "access", "len", "count", "period", "freq", "sample",
                                                 "read", "callchain", "regs_user", "regs_intr", "stack_user",
                                                 "branch", "precise_ip", "exclude", "inherit", "inherit_thread",
                                                 "pinned", "exclusive", "enable_on_exec", "remove_on_exec",
                                                 "records", "config1", "config2", "config3", "group", "symbols",
                                                 NULL };
        char child[96];
        json_object *v;
        int kind = -1;

        if (!json_object_is_type(o, json_type_object))
                return fail(ps, path, "expected an object such as {\"tracepoint\": \"sched:sched_process_exec\"}, got %s",
                            json_type_name(o));
        for (int k = 0; k < _EVENT_KIND_MAX; k++) {
                if (!json_object_object_get_ex(o, event_kind_table[k], &v))
                        continue;
                if (kind >= 0)
                        return fail(ps, path, "has both \"%s\" and \"%s\": one event per entry",
                                    event_kind_table[kind], event_kind_table[k]);
                kind = k;
                *ret_val = v;
        }
        if (kind < 0)
                return fail(ps, path, "needs one of \"tracepoint\", \"kprobe\", \"kretprobe\", \"uprobe\", "
                            "\"uretprobe\", \"software\", \"hardware\", \"cache\", \"raw\", \"breakpoint\", \"pmu\"");
        if (!event_kind_is_perf(kind))
                for (const char *const *k = keys_perf + 6; *k; k++)
                        if (strcmp(*k, "name") != 0 && json_object_object_get_ex(o, *k, &v)) {
                                snprintf(child, sizeof(child), "%s.%s", path, *k);
                                return fail(ps, child, "is a perf event option: for software, hardware, cache, "
                                            "raw, breakpoint and pmu entries");
                        }
        *ret_kind = kind;
        return check_keys(ps, o, path, event_kind_is_perf(kind) ? keys_perf : keys);
}

static int parse_event(struct parser *ps, size_t idx, json_object *o, struct event_config *e) {
        char path[64], child[96];
        json_object *kind_val = NULL;
        int kind = -1, r;
        unsigned line;

        snprintf(path, sizeof(path), "events[%zu]", idx);
        r = parse_event_kind(ps, path, o, &kind, &kind_val);
        if (r < 0)
                return r;
        e->kind = kind;
        snprintf(child, sizeof(child), "%s.%s", path, event_kind_table[kind]);
        if (!json_object_is_type(kind_val, json_type_string))
                return fail(ps, child, "expected a string, got %s", json_type_name(kind_val));
        line = parser_line_of(ps, child);
        if (asprintf(&e->where, line ? "%s:%u: %s" : "%s%.0u: %s", ps->file, line, child) < 0)
                return -ENOMEM;

        if (event_kind_is_perf(kind))
                return parse_perf_entry(ps, path, child, o, kind_val, e);
        if (kind == EVENT_TRACEPOINT)
                r = parse_tracepoint_entry(ps, path, child, o, kind_val, e);
        else
                r = parse_probe_entry(ps, path, child, o, kind_val, e);
        if (r < 0)
                return r;
        return parse_filter(ps, path, o, e);
}

static int parse_clock(struct parser *ps, struct config *c, json_object *o) {
        static const struct { const char *name; clockid_t id; } clocks[] = {
                { "monotonic", CLOCK_MONOTONIC },
                { "monotonic_raw", CLOCK_MONOTONIC_RAW },
                { "boottime", CLOCK_BOOTTIME },
                { "realtime", CLOCK_REALTIME },
                { "tai", CLOCK_TAI },
        };
        const char *s = json_object_get_string(o);

        for (size_t i = 0; i < ELEMENTSOF(clocks); i++)
                if (strcmp(s, clocks[i].name) == 0) {
                        c->clockid = clocks[i].id;
                        return dup_string(o, &c->clock_name);
                }
        return fail(ps, "clock", "\"%s\" is not one of monotonic, monotonic_raw, boottime, realtime, tai", s);
}

bool config_clock_nmi_safe(clockid_t clock) {
        return clock == CLOCK_MONOTONIC || clock == CLOCK_MONOTONIC_RAW;
}

bool event_kind_takes_any_clock(enum event_kind k) {
        /* The software PMUs (perf_swevent, cpu_clock, task_clock) are
         * PERF_PMU_CAP_NO_NMI; a "pmu" entry is judged when it opens. */
        return k == EVENT_SOFTWARE || k == EVENT_PMU;
}

/* perf_event_set_clock(): the kernel stamps an event with a clock that is
 * not NMI-safe (realtime, boottime, tai) only when its PMU says it never
 * fires in NMI; tracepoints, probes, breakpoints and hardware events get
 * EINVAL from perf_event_open (perf record -k tai -e sched:...: "wrong
 * clockid"). */
static int check_clock(struct parser *ps, const struct config *c) {
        if (config_clock_nmi_safe(c->clockid))
                return 0;
        for (size_t i = 0; i < c->n_events; i++)
                if (!event_kind_takes_any_clock(c->events[i].kind))
                        return fail(ps, "clock", "\"%s\" is a clock the kernel stamps software events with only (it is "
                                    "not NMI-safe), and events[%zu] (%s) is a %s: use \"monotonic\" (the default) "
                                    "or \"monotonic_raw\"; \"time\" on every line is wall-clock time anyway",
                                    c->clock_name, i, c->events[i].wire_name, event_kind_table[c->events[i].kind]);
        return 0;
}

/* "events": each entry, and no wire name twice. */
static int parse_events(struct parser *ps, struct config *c, json_object *o) {
        size_t n = json_object_array_length(o);
        int r;

        if (n == 0)
                return fail(ps, "events", "is empty: list the tracepoints and probes to serve");
        c->events = calloc(n, sizeof(*c->events));
        if (!c->events)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                r = parse_event(ps, i, json_object_array_get_idx(o, i), &c->events[i]);
                c->n_events = i + 1;
                if (r < 0)
                        return r;
                for (size_t j = 0; j < i; j++)
                        if (strcmp(c->events[j].wire_name, c->events[i].wire_name) == 0) {
                                char path[64];
                                snprintf(path, sizeof(path), "events[%zu]", i);
                                return fail(ps, path, "\"%s\" is already listed as events[%zu]",
                                            c->events[i].wire_name, j);
                        }
        }
        return 0;
}

/* "metrics": {"path": "/var/lib/prometheus/node-exporter/evmon.prom",
 * "interval_ms": 5000}; path "" or false: no metrics file. */
static int parse_metrics(struct parser *ps, struct config *c, json_object *o) {
        static const char *const keys[] = { "path", "interval_ms", NULL };
        json_object *p;
        uint64_t v;
        int r;

        r = check_keys(ps, o, "metrics", keys);
        if (r < 0)
                return r;
        if (json_object_object_get_ex(o, "path", &p)) {
                bool off = (json_object_is_type(p, json_type_boolean) && !json_object_get_boolean(p)) ||
                           (json_object_is_type(p, json_type_string) && json_object_get_string_len(p) == 0);

                if (off) {
                        free(c->metrics_path);
                        c->metrics_path = NULL;
                } else if (!json_object_is_type(p, json_type_string))
                        return fail(ps, "metrics.path", "expected a file path string (or \"\" or false for no metrics file), got %s",
                                    json_type_name(p));
                else {
                        const char *s = json_object_get_string(p);

                        if (s[0] != '/' || s[strlen(s) - 1] == '/')
                                return fail(ps, "metrics.path", "\"%s\" must be an absolute file path, such as \"%s\"",
                                            s, METRICS_DEFAULT_PATH);
                        r = dup_string(p, &c->metrics_path);
                        if (r < 0)
                                return r;
                }
        }
        /* Written on the daemon's once-a-second tick: whole seconds. */
        r = get_uint(ps, o, "metrics", "interval_ms", 1000, 3600000, &v);
        if (r < 0)
                return r;
        if (r > 0)
                c->metrics_interval_ms = (unsigned) v;
        return 0;
}

static int parse_root(struct parser *ps, struct config *c, json_object *root) {
        static const char *const keys[] = { "socket", "ring", "clients", "targets", "events", "clock", "counters",
                                            "context", "metrics", "order", NULL };
        json_object *o;
        int r;

        if (!json_object_is_type(root, json_type_object))
                return fail(ps, "", "the config must be a JSON object, got %s", json_type_name(root));
        r = check_keys(ps, root, "", keys);
        if (r < 0)
                return r;
        r = get_typed(ps, root, "", "socket", json_type_object, &o);
        if (r < 0 || (o && (r = parse_socket(ps, c, o)) < 0))
                return r;
        r = get_typed(ps, root, "", "ring", json_type_object, &o);
        if (r < 0 || (o && (r = parse_ring(ps, c, o)) < 0))
                return r;
        r = get_typed(ps, root, "", "clients", json_type_object, &o);
        if (r < 0 || (o && (r = parse_clients(ps, c, o)) < 0))
                return r;
        r = get_typed(ps, root, "", "metrics", json_type_object, &o);
        if (r < 0 || (o && (r = parse_metrics(ps, c, o)) < 0))
                return r;
        r = get_typed(ps, root, "", "targets", json_type_object, &o);
        if (r < 0 || (o && (r = parse_targets(ps, c, o)) < 0))
                return r;
        r = get_typed(ps, root, "", "counters", json_type_object, &o);
        if (r < 0)
                return r;
        if (o) {
                static const char *const counter_keys[] = { "interval_ms", NULL };
                uint64_t ms = c->counter_interval_ms;

                r = check_keys(ps, o, "counters", counter_keys);
                if (r < 0 || (r = get_uint(ps, o, "counters", "interval_ms", 10, 3600000, &ms)) < 0)
                        return r;
                c->counter_interval_ms = (unsigned) ms;
        }
        r = get_bool(ps, root, "", "context", &c->context);
        if (r < 0)
                return r;
        r = get_typed(ps, root, "", "clock", json_type_string, &o);
        if (r < 0 || (o && (r = parse_clock(ps, c, o)) < 0))
                return r;
        r = get_typed(ps, root, "", "order", json_type_string, &o);
        if (r < 0)
                return r;
        if (o) {
                const char *s = json_object_get_string(o);

                if (strcmp(s, "time") == 0)
                        c->order_time = true;
                else if (strcmp(s, "arrival") == 0)
                        c->order_time = false;
                else
                        return fail(ps, "order", "\"%s\" is neither \"time\" (lines in ts order across CPUs, the "
                                    "default) nor \"arrival\" (as read, at the lowest latency)", s);
        }
        r = get_typed(ps, root, "", "events", json_type_array, &o);
        if (r < 0)
                return r;
        if (!o)
                return fail(ps, "events", "missing: list the tracepoints and probes to serve");
        r = parse_events(ps, c, o);
        if (r < 0)
                return r;
        return check_clock(ps, c);
}

int config_parse_entry(json_object *o, size_t idx, const char *file, struct event_config *ret, char **ret_error) {
        struct parser ps = { .file = file };
        struct event_config e = {};
        int r;

        r = parse_event(&ps, idx, o, &e);
        if (r < 0) {
                event_config_done(&e);
                *ret_error = TAKE_PTR(ps.error);
                parser_done(&ps);
                return r;
        }
        parser_done(&ps);
        *ret = e;
        return 0;
}

static int strdup_or_null(const char *s, char **ret) {
        *ret = s ? strdup(s) : NULL;
        return s && !*ret ? -ENOMEM : 0;
}

static int strv_copy(char **l, char ***ret) {
        size_t n = 0;

        *ret = NULL;
        if (!l)
                return 0;
        while (l[n])
                n++;
        *ret = calloc(n + 1, sizeof(char *));
        if (!*ret)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (!((*ret)[i] = strdup(l[i])))
                        return -ENOMEM;
        return 0;
}

int event_config_copy(const struct event_config *src, struct event_config *ret) {
        struct event_config e = *src;
        int r = 0;

        e.wire_name = e.system = e.name = e.target = e.filter = e.where = e.filter_where = e.group = NULL;
        e.fetch = NULL;
        if (strdup_or_null(src->wire_name, &e.wire_name) < 0 || strdup_or_null(src->system, &e.system) < 0 ||
            strdup_or_null(src->name, &e.name) < 0 || strdup_or_null(src->target, &e.target) < 0 ||
            strdup_or_null(src->filter, &e.filter) < 0 || strdup_or_null(src->where, &e.where) < 0 ||
            strdup_or_null(src->filter_where, &e.filter_where) < 0 || strdup_or_null(src->group, &e.group) < 0 ||
            strv_copy(src->fetch, &e.fetch) < 0)
                r = -ENOMEM;
        if (r < 0) {
                event_config_done(&e);
                return r;
        }
        *ret = e;
        return 0;
}

void event_config_clear(struct event_config *e) {
        event_config_done(e);
        *e = (struct event_config) {};
}

int config_copy(const struct config *src, size_t extra, struct config **ret) {
        _cleanup_(config_freep) struct config *c = calloc(1, sizeof(*c));

        if (!c)
                return -ENOMEM;
        *c = *src;
        c->path = c->socket_path = c->socket_group = c->socket_admin_group = c->clock_name = c->metrics_path = NULL;
        c->cgroups = c->cgroups_where = NULL;
        c->admin_add.paths = NULL;
        c->pids = NULL;
        c->events = NULL;
        c->n_events = 0;
        if (strdup_or_null(src->path, &c->path) < 0 || strdup_or_null(src->socket_path, &c->socket_path) < 0 ||
            strdup_or_null(src->socket_group, &c->socket_group) < 0 ||
            strdup_or_null(src->socket_admin_group, &c->socket_admin_group) < 0 ||
            strdup_or_null(src->clock_name, &c->clock_name) < 0 ||
            strdup_or_null(src->metrics_path, &c->metrics_path) < 0 || strv_copy(src->cgroups, &c->cgroups) < 0 ||
            strv_copy(src->admin_add.paths, &c->admin_add.paths) < 0 ||
            strv_copy(src->cgroups_where, &c->cgroups_where) < 0)
                return -ENOMEM;
        if (src->n_pids) {
                c->pids = malloc(src->n_pids * sizeof(pid_t));
                if (!c->pids)
                        return -ENOMEM;
                memcpy(c->pids, src->pids, src->n_pids * sizeof(pid_t));
        }
        c->events = calloc(src->n_events + extra + 1, sizeof(*c->events));
        if (!c->events)
                return -ENOMEM;
        for (size_t i = 0; i < src->n_events; i++) {
                if (event_config_copy(&src->events[i], &c->events[i]) < 0)
                        return -ENOMEM;
                c->n_events = i + 1;
        }
        *ret = TAKE_PTR(c);
        return 0;
}

struct config *config_free(struct config *c) {
        if (!c)
                return NULL;
        free(c->path);
        free(c->socket_path);
        free(c->socket_group);
        free(c->socket_admin_group);
        free(c->clock_name);
        free(c->metrics_path);
        strv_free(c->cgroups);
        strv_free(c->cgroups_where);
        strv_free(c->admin_add.paths);
        free(c->pids);
        for (size_t i = 0; i < c->n_events; i++)
                event_config_done(&c->events[i]);
        free(c->events);
        free(c);
        return NULL;
}


int config_parse(const char *text, const char *path, struct config **ret, char **ret_error) {
        _cleanup_(config_freep) struct config *c = NULL;
        _cleanup_(json_object_putp) json_object *root = NULL;
        _cleanup_(json_tokener_freep) json_tokener *tok = NULL;
        struct parser ps = { .text = text, .p = text, .line = 1, .file = path };
        size_t len = strlen(text), end;
        int r;

        *ret_error = NULL;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->path = strdup(path);
        c->socket_path = strdup(EVMON_SOCKET_PATH_DEFAULT);
        c->socket_group = strdup("evmon");
        c->clock_name = strdup("monotonic");
        c->metrics_path = strdup(METRICS_DEFAULT_PATH);
        if (!c->path || !c->socket_path || !c->socket_group || !c->clock_name || !c->metrics_path)
                return -ENOMEM;
        c->metrics_interval_ms = METRICS_DEFAULT_INTERVAL_MS;
        c->socket_mode = 0660;
        c->ring_pages = CONFIG_DEFAULT_RING_PAGES;
        c->flush_ms = CONFIG_DEFAULT_FLUSH_MS;
        c->idle_flush_ms = CONFIG_DEFAULT_IDLE_FLUSH_MS;
        c->busy_flush_ms = CONFIG_DEFAULT_BUSY_FLUSH_MS;
        c->doorbell = true;
        c->context = true;
        c->order_time = true;
        c->counter_interval_ms = CONFIG_DEFAULT_COUNTER_INTERVAL_MS;
        c->clockid = CLOCK_MONOTONIC;
        c->max_clients = 64;
        c->max_clients_per_uid = 16;
        c->client_queue_bytes = 8u << 20;

        tok = json_tokener_new();
        if (!tok)
                return -ENOMEM;
        root = json_tokener_parse_ex(tok, text, (int) len);
        end = json_tokener_get_parse_end(tok);
        /* A NULL root with success is the text "null": parse_root() says
         * what it is ("invalid JSON: success" said nothing). */
        if (json_tokener_get_error(tok) != json_tokener_success) {
                enum json_tokener_error err = json_tokener_get_error(tok);
                unsigned line = 1;

                for (size_t i = 0; i < end && i < len; i++)
                        line += text[i] == '\n';
                return error_set(ret_error, -EINVAL, "%s:%u: invalid JSON: %s", path, line,
                                 err == json_tokener_continue ? "unexpected end of file" : json_tokener_error_desc(err));
        }
        /* json-c accepted the text; where our scanner is stricter it only
         * loses line numbers past that point. */
        r = scan_value(&ps, "", 0);
        if (r == -ENOMEM)
                goto finish;
        for (const char *p = text + end; *p; p++)
                if (!isspace((unsigned char) *p)) {
                        unsigned line = 1;
                        for (const char *q = text; q < p; q++)
                                line += *q == '\n';
                        parser_done(&ps);
                        return error_set(ret_error, -EINVAL, "%s:%u: invalid JSON: text after the end of the config object",
                                         path, line);
                }

        r = parse_root(&ps, c, root);
finish:
        if (r < 0) {
                *ret_error = TAKE_PTR(ps.error);
                parser_done(&ps);
                return r;
        }
        parser_done(&ps);
        *ret = TAKE_PTR(c);
        return 0;
}

int config_load(const char *path, struct config **ret, char **ret_error) {
        _cleanup_(freep) char *text = NULL;
        _cleanup_(closep) int fd = -1;
        size_t n;
        int r;

        *ret_error = NULL;
        fd = open(path ?: CONFIG_DEFAULT_PATH, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0 && !path && errno == ENOENT)
                return config_parse(config_builtin, "<built-in default>", ret, ret_error);
        path = path ?: CONFIG_DEFAULT_PATH;
        if (fd < 0) {
                r = -errno;
                return error_set(ret_error, r, "%s: cannot open: %s", path, strerror(-r));
        }
        r = read_full(fd, 64u << 20, &text, &n);
        if (r == -EFBIG)
                return error_set(ret_error, r, "%s: larger than 64 MiB, not a config file", path);
        if (r < 0)
                return error_set(ret_error, r, "%s: failed to read: %s", path, strerror(-r));
        if (memchr(text, 0, n))
                return error_set(ret_error, -EINVAL, "%s: contains NUL bytes, not a JSON config", path);
        return config_parse(text, path, ret, ret_error);
}
