/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config-parse.h"
#include "evmon/attr.h"
#include "evmon/cleanup.h"

/* The "events" entries of the config, and one entry on its own
 * (config_parse_entry(), for runtime control): tracepoints and probes
 * read by hand, perf events from the perf_fields table into an attr_spec. */

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

void event_config_done(struct event_config *e) {
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

/* A perf event entry being read: the options (DESIGN.md, "Every perf
 * event") go into SPEC, which attr_from_spec() turns into the attr, so
 * that a bad name is a config error naming its key; what the kernel
 * refuses is found at open time. */
struct perf_entry {
        const char *path;
        struct event_config *e;
        struct attr_spec spec;
};

static void perf_entry_done(struct perf_entry *p) {
        free((void *) p->spec.sample);
        free((void *) p->spec.read);
        free((void *) p->spec.regs_user);
        free((void *) p->spec.regs_intr);
        free((void *) p->spec.branch);
        free((void *) p->spec.exclude);
        free((void *) p->spec.records);
}

static int field_access(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
                        const struct field *f) {
        struct perf_entry *p = base;

        if (p->e->kind != EVENT_BREAKPOINT)
                return config_fail(ps, p->path, "\"access\" and \"len\" are for breakpoints");
        p->spec.access = json_object_get_string(v);
        return 0;
}

static int field_len(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
                     const struct field *f) {
        struct perf_entry *p = base;
        int r;

        r = config_field_uint(ps, path, o, v, base, f);
        if (r < 0)
                return r;
        if (p->e->kind != EVENT_BREAKPOINT)
                return config_fail(ps, p->path, "\"access\" and \"len\" are for breakpoints");
        return 0;
}

/* "callchain": {"max_stack", "kernel", "user", "stack_bytes"}; "user" is
 * true, false or "dwarf". */
struct callchain_in {
        unsigned max_stack;
        bool kernel, user, dwarf;
        unsigned stack_bytes;
};

static int field_callchain_user(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
                                const struct field *f) {
        struct callchain_in *in = base;

        if (json_object_is_type(v, json_type_boolean)) {
                in->user = json_object_get_boolean(v);
                return 0;
        }
        if (json_object_is_type(v, json_type_string) && strcmp(json_object_get_string(v), "dwarf") == 0) {
                in->user = in->dwarf = true;
                return 0;
        }
        return config_fail(ps, path, "expected true, false or \"dwarf\" (perf --call-graph dwarf), got %s",
                           json_object_is_type(v, json_type_string) ? json_object_get_string(v) : config_type_name(v));
}

static const struct field callchain_fields[] = {
        F_UINT("max_stack", struct callchain_in, max_stack, 1, UINT16_MAX),
        F_BOOL("kernel", struct callchain_in, kernel),
        F_CUSTOM("user", json_type_null, field_callchain_user),
        F_UINT("stack_bytes", struct callchain_in, stack_bytes, 8, 65528),
        {}
};

static int field_callchain(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
                           const struct field *f) {
        struct attr_spec *spec = &((struct perf_entry *) base)->spec;
        struct callchain_in in = { .kernel = true, .user = true };
        int r;

        r = config_fields_dispatch(ps, path, v, callchain_fields, &in);
        if (r < 0)
                return r;
        spec->callchain = true;
        spec->max_stack = in.max_stack;
        spec->callchain_no_kernel = !in.kernel;
        spec->callchain_no_user = !in.user;
        spec->callchain_dwarf = in.dwarf;
        spec->dwarf_stack = in.stack_bytes;
        ((struct perf_entry *) base)->e->dwarf = in.dwarf;
        if (in.stack_bytes && !in.dwarf) {
                _cleanup_(freep) char *child = config_path_join(path, "stack_bytes");
                return child ? config_fail(ps, child, "is for \"user\": \"dwarf\"") : -ENOMEM;
        }
        return 0;
}

static int field_group(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
                       const struct field *f) {
        struct perf_entry *p = base;
        const char *s = json_object_get_string(v);

        if (!*s || has_control(s))
                return config_fail(ps, path, "must be a non-empty name without control characters (it goes into "
                                   "counter lines)");
        p->e->group = strdup(s);
        return p->e->group ? 0 : -ENOMEM;
}

#define P_UINT(k, m, lo, hi) F_UINT(k, struct perf_entry, spec.m, lo, hi)
#define P_BOOL(k) F_BOOL(#k, struct perf_entry, spec.k)
#define P_NAMES(k) F_NAMES(#k, struct perf_entry, spec.k)
#define P_WORD(k) { .key = #k, .type = json_type_null, .parse = config_field_word, \
                    FIELD_AT(struct perf_entry, spec.k), \
                    .offset_has = offsetof(struct perf_entry, spec.has_##k), .flags = FIELD_HAS }

/* The keys of a perf event entry: its kind, "name" (parse_perf_entry()),
 * the options after them, "symbols" (parse_perf_attr(), after the attr). */
#define PERF_OPTIONS 7
static const struct field perf_fields[] = {
        F_KIND("software"), F_KIND("hardware"), F_KIND("cache"), F_KIND("raw"), F_KIND("breakpoint"), F_KIND("pmu"),
        F_OUTSIDE("name"),
        F_CUSTOM("access", json_type_string, field_access),
        { .key = "len", .type = json_type_int, .parse = field_len, FIELD_AT(struct perf_entry, spec.len),
          .min = 1, .max = 8 },
        P_BOOL(count),
        P_UINT("period", period, 1, UINT64_MAX >> 1),
        P_UINT("freq", freq, 1, UINT32_MAX),
        P_NAMES(sample),
        P_NAMES(read),
        F_CUSTOM("callchain", json_type_object, field_callchain),
        P_NAMES(regs_user),
        P_NAMES(regs_intr),
        P_UINT("stack_user", stack_user, 8, UINT32_MAX),
        P_NAMES(branch),
        P_UINT("precise_ip", precise_ip, 0, 3),
        P_NAMES(exclude),
        P_BOOL(inherit),
        P_BOOL(inherit_thread),
        P_BOOL(pinned),
        P_BOOL(exclusive),
        P_BOOL(enable_on_exec),
        P_BOOL(remove_on_exec),
        P_NAMES(records),
        P_WORD(config1),
        P_WORD(config2),
        P_WORD(config3),
        F_CUSTOM("group", json_type_string, field_group),
        F_OUTSIDE("symbols"),
        {}
};

/* The attr from SPEC (attr.c judges the options together), then
 * "symbols", which needs callchains. */
static int parse_perf_attr(struct parser *ps, const char *path, json_object *o, const struct attr_spec *spec,
                           struct event_config *e) {
        _cleanup_(freep) char *child = NULL;
        struct attr_error err = {};
        json_object *v;
        int r;

        r = attr_from_spec(spec, NULL, &e->attr, &err);
        if (r < 0) {
                child = config_path_join(path, strcmp(err.key, "name") == 0 ? event_kind_to_string(e->kind) : err.key);
                if (!child)
                        return -ENOMEM;
                return config_fail(ps, child, "%s%s%s%s", err.value ? "\"" : "", err.value ?: "",
                                   err.value ? "\": " : "", err.reason);
        }
        e->count = spec->count;
        child = config_path_join(path, "symbols");
        if (!child)
                return -ENOMEM;
        if (!json_object_object_get_ex(o, "symbols", &v))
                return 0;
        if (!json_object_is_type(v, json_type_boolean))
                return config_fail(ps, child, "expected boolean, got %s", config_type_name(v));
        e->symbols = json_object_get_boolean(v);
        if (e->symbols && !(e->attr.sample_type & PERF_SAMPLE_CALLCHAIN))
                return config_fail(ps, child, "names callchain frames, and this event samples none: add "
                                   "\"callchain\" to \"sample\" (or a \"callchain\" object)");
        return 0;
}

static int parse_perf_event(struct parser *ps, const char *path, json_object *o, struct event_config *e) {
        struct perf_entry p = {
                .path = path,
                .e = e,
                .spec = { .inherit = true },
        };
        int r;

        if (event_kind_is_perf(e->kind)) {
                p.spec.kind = (enum attr_kind) (e->kind - EVENT_SOFTWARE);
                p.spec.name = e->target;
        } else {
                /* A trace event: its type and config come from tracefs
                 * when it is set up (events.c). */
                p.spec.trace = true;
                e->perf_options = true;
        }

        r = config_fields_walk(ps, path, o, perf_fields, &p);
        if (r >= 0)
                r = parse_perf_attr(ps, path, o, &p.spec, e);
        perf_entry_done(&p);
        return r;
}

/* A perf event entry: KIND:NAME on the wire unless "name" says otherwise. */
static int parse_perf_entry(struct parser *ps, const char *path, const char *child, json_object *o,
                            json_object *kind_val, struct event_config *e) {
        const char *s = json_object_get_string(kind_val);
        json_object *v;

        if (!*s)
                return config_fail(ps, child, "empty event name (`evmonctl list` shows them)");
        e->target = strdup(s);
        e->system = strdup(event_kind_to_string(e->kind));
        e->name = strdup(s);
        if (!e->target || !e->system || !e->name)
                return -ENOMEM;
        if (json_object_object_get_ex(o, "name", &v)) {
                _cleanup_(freep) char *key = config_path_join(path, "name");
                const char *n = json_object_get_string(v);

                if (!key)
                        return -ENOMEM;
                if (!json_object_is_type(v, json_type_string))
                        return config_fail(ps, key, "expected string, got %s", config_type_name(v));
                if (!*n || strpbrk(n, " \"") || has_control(n))
                        return config_fail(ps, key, "must be a non-empty name without spaces, quotes or control "
                                           "characters");
                e->wire_name = strdup(n);
        } else if (asprintf(&e->wire_name, "%s:%s", event_kind_to_string(e->kind), s) < 0)
                e->wire_name = NULL;
        if (!e->wire_name)
                return -ENOMEM;
        return parse_perf_event(ps, path, o, e);
}

static int parse_tracepoint_entry(struct parser *ps, const char *path, const char *child, json_object *o,
                                  json_object *kind_val, struct event_config *e) {
        const char *s = json_object_get_string(kind_val), *colon = strchr(s, ':');
        _cleanup_(freep) char *fetch = config_path_join(path, "fetch"), *name = config_path_join(path, "name");

        if (!fetch || !name)
                return -ENOMEM;
        if (!colon || colon == s || !colon[1] || strchr(colon + 1, ':') || strchr(s, '/'))
                return config_fail(ps, child, "\"%s\" is not SYSTEM:NAME (for example \"sched:sched_process_exec\"; "
                                   "`evmonctl list` shows them)", s);
        e->system = strndup(s, colon - s);
        e->name = strdup(colon + 1);
        e->wire_name = strdup(s);
        if (!e->system || !e->name || !e->wire_name)
                return -ENOMEM;
        if (json_object_object_get_ex(o, "fetch", NULL))
                return config_fail(ps, fetch, "only probes take fetch-args; a tracepoint's fields come from its "
                                   "format");
        if (json_object_object_get_ex(o, "name", NULL))
                return config_fail(ps, name, "a tracepoint is named by its SYSTEM:NAME; \"name\" is for probes");
        return 0;
}

/* A probe's "fetch": "NAME=FETCHARG" strings, as the kernel takes them. */
static int parse_fetch(struct parser *ps, const char *path, json_object *v, struct event_config *e) {
        _cleanup_(freep) char *child = config_path_join(path, "fetch");
        size_t n;

        if (!child)
                return -ENOMEM;
        if (!json_object_is_type(v, json_type_array))
                return config_fail(ps, child, "expected an array of \"NAME=FETCHARG\" strings, got %s",
                                   config_type_name(v));
        n = json_object_array_length(v);
        e->fetch = calloc(n + 1, sizeof(char *));
        if (!e->fetch)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *a = json_object_array_get_idx(v, i);
                _cleanup_(freep) char *achild = config_path_index(child, i);
                const char *s, *eq;

                if (!achild)
                        return -ENOMEM;
                if (!json_object_is_type(a, json_type_string))
                        return config_fail(ps, achild, "expected a \"NAME=FETCHARG\" string, got %s",
                                           config_type_name(a));
                s = json_object_get_string(a);
                eq = strchr(s, '=');
                if (!eq || eq == s || !eq[1] || strpbrk(s, " \t\n"))
                        return config_fail(ps, achild, "\"%s\" is not NAME=FETCHARG (for example "
                                           "\"path=+0(%%si):string\")", s);
                e->fetch[i] = strdup(s);
                if (!e->fetch[i])
                        return -ENOMEM;
        }
        return 0;
}

static int parse_probe_entry(struct parser *ps, const char *path, const char *child, json_object *o,
                             json_object *kind_val, struct event_config *e) {
        const char *s = json_object_get_string(kind_val);
        const char *kind = event_kind_to_string(e->kind);
        _cleanup_(freep) char *key = config_path_join(path, "name");
        json_object *v;

        if (!key)
                return -ENOMEM;
        if (!*s)
                return config_fail(ps, child, "empty probe target");
        e->target = strdup(s);
        if (!e->target)
                return -ENOMEM;
        if (!json_object_object_get_ex(o, "name", &v))
                return config_fail(ps, path, "a %s needs a \"name\" (letters, digits, _): it is served as \"%s:NAME\"",
                                   kind, kind);
        if (!json_object_is_type(v, json_type_string) || !valid_name(json_object_get_string(v)))
                return config_fail(ps, key, "must be a name of letters, digits and _ that does not start with a digit");
        e->name = strdup(json_object_get_string(v));
        e->system = strdup(kind);
        if (!e->name || !e->system || asprintf(&e->wire_name, "%s:%s", e->system, e->name) < 0)
                return -ENOMEM;
        if (json_object_object_get_ex(o, "fetch", &v))
                return parse_fetch(ps, path, v, e);
        return 0;
}

static int field_filter(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
                        const struct field *f) {
        struct event_config *e = base;
        unsigned line = config_line_of(ps, path);

        e->filter = strdup(json_object_get_string(v));
        if (!e->filter || asprintf(&e->filter_where, line ? "%s:%u: %s" : "%s%.0u: %s", ps->file, line, path) < 0)
                return -ENOMEM;
        return 0;
}

/* The keys of a tracepoint or probe entry: its kind, "name" and "fetch"
 * (parse_tracepoint_entry(), parse_probe_entry()), "filter". */
static const struct field trace_fields[] = {
        F_KIND("tracepoint"), F_KIND("kprobe"), F_KIND("kretprobe"), F_KIND("uprobe"), F_KIND("uretprobe"),
        F_OUTSIDE("name"),
        F_OUTSIDE("fetch"),
        F_CUSTOM("filter", json_type_string, field_filter),
        {}
};

static const struct field *find_key(const struct field *table, const char *key) {
        for (const struct field *f = table; f->key; f++)
                if (strcmp(f->key, key) == 0)
                        return f;
        return NULL;
}

/* Whether O, a trace event entry, has one of the perf options. */
static bool has_perf_option(json_object *o) {
        for (const struct field *f = perf_fields + PERF_OPTIONS; f->key; f++)
                if (json_object_object_get_ex(o, f->key, NULL))
                        return true;
        return false;
}

/* A trace event's keys: its own (trace_fields) and the perf options,
 * which attr_from_spec() judges for a trace event (no config words, no
 * branch stack or precise_ip: a trace event is a software count). */
static int check_trace_keys(struct parser *ps, json_object *o, const char *path) {
        json_object_object_foreach(o, key, val) {
                _cleanup_(freep) char *child = NULL;

                (void) val;
                if (find_key(trace_fields, key) || find_key(perf_fields + PERF_OPTIONS, key))
                        continue;
                child = config_path_join(path, key);
                if (!child)
                        return -ENOMEM;
                return config_fail(ps, child, "unknown key \"%s\" (known here: tracepoint, kprobe, kretprobe, "
                                   "uprobe, uretprobe, name, fetch, filter, and the perf options: count, period, "
                                   "freq, sample, read, callchain, regs_user, regs_intr, stack_user, exclude, "
                                   "inherit, inherit_thread, pinned, exclusive, enable_on_exec, remove_on_exec, "
                                   "records, group, symbols)", key);
        }
        return 0;
}

/* Which kind the entry is (exactly one of the kind keys), into *RET_KIND
 * and *RET_VAL; its keys checked against what that kind takes. */
static int parse_event_kind(struct parser *ps, const char *path, json_object *o, int *ret_kind, json_object **ret_val) {
        json_object *v;
        int kind = -1;

        if (!json_object_is_type(o, json_type_object))
                return config_fail(ps, path, "expected an object such as {\"tracepoint\": "
                                   "\"sched:sched_process_exec\"}, got %s", config_type_name(o));
        for (int k = 0; k < _EVENT_KIND_MAX; k++) {
                if (!json_object_object_get_ex(o, event_kind_to_string(k), &v))
                        continue;
                if (kind >= 0)
                        return config_fail(ps, path, "has both \"%s\" and \"%s\": one event per entry",
                                           event_kind_to_string(kind), event_kind_to_string(k));
                kind = k;
                *ret_val = v;
        }
        if (kind < 0)
                return config_fail(ps, path, "needs one of \"tracepoint\", \"kprobe\", \"kretprobe\", \"uprobe\", "
                                   "\"uretprobe\", \"software\", \"hardware\", \"cache\", \"raw\", \"breakpoint\", "
                                   "\"pmu\"");
        *ret_kind = kind;
        return event_kind_is_perf(kind) ? config_check_keys(ps, o, path, perf_fields) : check_trace_keys(ps, o, path);
}

int config_parse_event(struct parser *ps, size_t idx, json_object *o, struct event_config *e) {
        _cleanup_(freep) char *path = NULL, *child = NULL;
        json_object *kind_val = NULL;
        int kind = -1, r;
        unsigned line;

        if (asprintf(&path, "events[%zu]", idx) < 0)
                return -ENOMEM;
        r = parse_event_kind(ps, path, o, &kind, &kind_val);
        if (r < 0)
                return r;
        e->kind = kind;
        child = config_path_join(path, event_kind_to_string(kind));
        if (!child)
                return -ENOMEM;
        if (!json_object_is_type(kind_val, json_type_string))
                return config_fail(ps, child, "expected a string, got %s", config_type_name(kind_val));
        line = config_line_of(ps, child);
        if (asprintf(&e->where, line ? "%s:%u: %s" : "%s%.0u: %s", ps->file, line, child) < 0)
                return -ENOMEM;

        if (event_kind_is_perf(kind))
                return parse_perf_entry(ps, path, child, o, kind_val, e);
        if (kind == EVENT_TRACEPOINT)
                r = parse_tracepoint_entry(ps, path, child, o, kind_val, e);
        else
                r = parse_probe_entry(ps, path, child, o, kind_val, e);
        if (r >= 0)
                r = config_fields_walk(ps, path, o, trace_fields, e);
        if (r < 0 || !has_perf_option(o))
                return r;
        /* The perf options, as a perf event takes them: the same table,
         * the same checks (attr.c), the RAW data its fields come from
         * kept. */
        return parse_perf_event(ps, path, o, e);
}

/* "events": each entry, and no wire name twice. */
int config_field_events(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
                        const struct field *f) {
        struct config *c = base;
        size_t n = json_object_array_length(v);
        int r;

        if (n == 0)
                return config_fail(ps, path, "is empty: list the tracepoints and probes to serve");
        c->events = calloc(n, sizeof(*c->events));
        if (!c->events)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                r = config_parse_event(ps, i, json_object_array_get_idx(v, i), &c->events[i]);
                c->n_events = i + 1;
                if (r < 0)
                        return r;
                for (size_t j = 0; j < i; j++)
                        if (strcmp(c->events[j].wire_name, c->events[i].wire_name) == 0) {
                                _cleanup_(freep) char *child = config_path_index(path, i);
                                return child ? config_fail(ps, child, "\"%s\" is already listed as events[%zu]",
                                                           c->events[i].wire_name, j) : -ENOMEM;
                        }
        }
        return 0;
}

int config_parse_entry(json_object *o, size_t idx, const char *file, struct event_config *ret, char **ret_error) {
        struct parser ps = { .file = file };
        struct event_config e = {};
        int r;

        r = config_parse_event(&ps, idx, o, &e);
        if (r < 0) {
                event_config_done(&e);
                *ret_error = TAKE_PTR(ps.error);
                config_parser_done(&ps);
                return r;
        }
        config_parser_done(&ps);
        *ret = e;
        return 0;
}
