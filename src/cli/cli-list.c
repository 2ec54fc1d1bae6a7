/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "evmon/attr.h"
#include "evmon/cleanup.h"
#include "evmon/encode.h"
#include "evmon/human.h"
#include "evmon/json.h"
#include "evmon/jsonc.h"
#include "evmon/log.h"
#include "evmon/tracefs.h"

#include "cli.h"

/* evmonctl list and describe: the events this kernel has, and one
 * event's fields; they read tracefs and sysfs, not evmond. */

static int open_tracefs(struct tracefs **ret) {
        int r = tracefs_open(arg_tracefs, ret);

        if (r == -ENOENT && arg_tracefs && access(arg_tracefs, F_OK) == 0)
                log_error("cannot open tracefs at %s: it has no events/ directory (--tracefs names tracefs' "
                          "mount point, such as /sys/kernel/tracing)", arg_tracefs);
        else if (r < 0)
                log_error("cannot open tracefs%s%s: %s%s", arg_tracefs ? " at " : "",
                        arg_tracefs ? arg_tracefs : "", strerror(-r),
                        r == -EACCES || r == -EPERM ? " (run as root)" : "");
        return r;
}

/* On a terminal each name has its kind beside it, as perf list shows
 * them ([Tracepoint event]); a pipe gets the names alone, one a line,
 * for scripts and completion. */
#define LIST_NAME_WIDTH 48

static void list_put(bool terminal, const char *name, const char *kind) {
        char buf[512];

        if (!terminal) {
                puts(name);
                return;
        }
        /* A PMU's or tracepoint's name is the kernel's (sysfs, tracefs):
         * escaped like any other name shown on a terminal. */
        human_escape(buf, sizeof(buf), name);
        printf("  %-*s [%s]\n", LIST_NAME_WIDTH, buf, kind);
}

static int list_pmu_event(const char *pmu, uint32_t type, const char *event, void *userdata) {
        char name[512];

        if (event) {
                snprintf(name, sizeof(name), "pmu:%s/%s/", pmu, event);
                list_put(*(bool *) userdata, name, "Kernel PMU event");
        }
        return 0;
}

/* describe's answer: text on a terminal (a table of the fields), one
 * line of JSON otherwise (or with --json), for a trace event and a perf
 * event alike. */
/* The names a print fmt table gives (its "values" entries' names and
 * its strings), space-separated into B: what a table cell can show. */
static void symbol_names(json_object *v, struct jbuf *b) {
        if (json_object_is_type(v, json_type_array)) {
                size_t n = json_object_array_length(v);

                for (size_t i = 0; i < n; i++)
                        symbol_names(json_object_array_get_idx(v, i), b);
        } else if (json_object_is_type(v, json_type_object)) {
                json_object_object_foreach(v, key, val) {
                        if ((strcmp(key, "name") == 0 || strcmp(key, "string") == 0) &&
                            json_object_is_type(val, json_type_string) && json_object_get_string_len(val) > 0) {
                                size_t n = (size_t) json_object_get_string_len(val);

                                if (jbuf_reserve(b, n + 1) < 0)
                                        return;
                                if (b->len > 0)
                                        jbuf_put_bytes(b, " ", 1);
                                jbuf_put_bytes(b, json_object_get_string(val), n);
                        } else
                                symbol_names(val, b);
                }
        }
}

static void describe_print(json_object *o) {
        if (arg_json <= 0 && isatty(STDOUT_FILENO)) {
                json_object *fields;

                /* A field's print fmt tables as the names they give
                 * (prev_state: S D T t X Z P I R +), not their JSON. */
                if (json_object_object_get_ex(o, "fields", &fields) && json_object_is_type(fields, json_type_array))
                        for (size_t i = 0; i < json_object_array_length(fields); i++) {
                                json_object *f = json_object_array_get_idx(fields, i), *sym;
                                _cleanup_(jbuf_donep) struct jbuf b = {};

                                if (!json_object_object_get_ex(f, "symbols", &sym))
                                        continue;
                                symbol_names(sym, &b);
                                json_object_object_add(f, "symbols", json_object_new_string_len(b.data ?: "", (int) b.len));
                        }
                human_object(stdout, o, color_flags());
        } else
                puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
}

/* A perf event's attr as the config would build it by default, and the
 * sample fields its lines carry (what evmond adds included). */
static int describe_perf(enum attr_kind kind, const char *event, const char *name) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        struct attr_spec spec = { .kind = kind, .name = name };
        struct perf_event_attr a;
        struct attr_error e = {};
        json_object *fields;
        uint64_t t;
        int r;

        r = attr_from_spec(&spec, NULL, &a, &e);
        if (r < 0) {
                log_error("%s: %s%s%s", event, e.value ? e.value : "", e.value ? ": " : "", e.reason ?: strerror(-r));
                return 1;
        }
        o = json_object_new_object();
        fields = json_object_new_array();
        json_object_object_add(o, "event", json_object_new_string(event));
        json_object_object_add(o, "kind", json_object_new_string(attr_kind_to_string(kind)));
        json_object_object_add(o, "type", json_object_new_int64(a.type));
        json_object_object_add(o, "config", json_object_new_int64((int64_t) a.config));
        if (a.config1)
                json_object_object_add(o, "config1", json_object_new_int64((int64_t) a.config1));
        if (a.config2)
                json_object_object_add(o, "config2", json_object_new_int64((int64_t) a.config2));
        if (a.freq)
                json_object_object_add(o, "freq", json_object_new_int64((int64_t) a.sample_freq));
        else
                json_object_object_add(o, "period", json_object_new_int64((int64_t) a.sample_period));
        /* evmond adds tid, time and cpu to every sample (and identifier,
         * which it keeps to itself). */
        t = a.sample_type | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
        for (unsigned b = 0; b < 64; b++) {
                const char *n = attr_sample_name(1ULL << b);

                if ((t & (1ULL << b)) && n)
                        json_object_array_add(fields, json_object_new_string(n));
        }
        json_object_object_add(o, "sample", fields);
        describe_print(o);
        return 0;
}

/* The hello's "events" into *UD (a char ***); then stop reading. Only
 * names (no byte a terminal or a shell would act on) are taken. */
static int on_served_line(const char *line, size_t len, void *ud) {
        _cleanup_(json_object_putp) json_object *o = parse_line(line, len);
        char ***ret = ud;
        json_object *events;
        size_t n = 0;

        if (!json_object_object_get_ex(o, "events", &events) || !json_object_is_type(events, json_type_array))
                return 1;
        *ret = calloc(json_object_array_length(events) + 1, sizeof(char *));
        if (!*ret)
                return -ENOMEM;
        for (size_t i = 0; i < json_object_array_length(events); i++) {
                const char *s = json_object_get_string(json_object_array_get_idx(events, i));

                if (s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_:./-") == strlen(s) &&
                    !((*ret)[n++] = strdup(s)))
                        return -ENOMEM;
        }
        return 1;
}

int daemon_served(char ***ret) {
        _cleanup_(closep) int fd = connect_daemon();
        char **names = NULL;
        int r;

        if (fd < 0)
                return 1;
        r = read_lines(fd, false, on_served_line, &names);
        if (r == -ENOMEM)
                return log_oom_cli();
        if (r <= 0)
                return read_lines_failed(r, "the served events");
        if (!names && !(names = calloc(1, sizeof(char *))))
                return log_oom_cli();
        *ret = names;
        return 0;
}

/* list --served: what evmond serves (its hello), what `watch` takes. */
static int list_served(void) {
        _cleanup_(strv_freep) char **names = NULL;

        if (daemon_served(&names) != 0)
                return 1;
        for (char **n = names; *n; n++)
                puts(*n);
        return 0;
}

int cmd_list(void) {
        _cleanup_(tracefs_freep) struct tracefs *t = NULL;
        _cleanup_(strv_freep) char **names = NULL;
        bool terminal = arg_json <= 0 && isatty(STDOUT_FILENO);
        int r;

        if (arg_served)
                return list_served();
        if (open_tracefs(&t) < 0)
                return 1;
        r = tracefs_list_events(t, &names);
        if (r < 0) {
                log_error("cannot list events in %s: %s", tracefs_path(t), strerror(-r));
                return 1;
        }
        for (char **n = names; *n; n++)
                list_put(terminal, *n, "Tracepoint event");
        for (enum attr_kind k = ATTR_SOFTWARE; k <= ATTR_CACHE; k++)
                for (const char *const *n = attr_event_names(k); *n; n++) {
                        char name[256];

                        snprintf(name, sizeof(name), "%s:%s", attr_kind_to_string(k), *n);
                        list_put(terminal, name, k == ATTR_SOFTWARE ? "Software event" :
                                                 k == ATTR_HARDWARE ? "Hardware event" : "Hardware cache event");
                }
        /* Each PMU's named events (its sysfs events/ directory). */
        (void) pmu_foreach_event(NULL, list_pmu_event, &terminal);
        return 0;
}

int cmd_describe(const char *event) {
        _cleanup_(tracefs_freep) struct tracefs *t = NULL;
        _cleanup_(format_freep) struct format *f = NULL;
        _cleanup_(json_object_putp) json_object *o = NULL;
        _cleanup_(freep) char *system = NULL;
        const char *colon = strchr(event, ':');
        json_object *fields;
        int r;

        if (!colon || colon == event || !colon[1]) {
                log_error("\"%s\" is not SYSTEM:NAME (for example sched:sched_process_exec)", event);
                return 2;
        }
        system = strndup(event, colon - event);
        if (system) {
                enum attr_kind kind;

                if (attr_kind_from_string(system, &kind) == 0)
                        return describe_perf(kind, event, colon + 1);
        }
        if (!system || open_tracefs(&t) < 0)
                return 1;
        r = tracefs_event_format(t, system, colon + 1, &f);
        if (r == -EINVAL) {
                log_error("\"%s\" is not SYSTEM:NAME: neither holds a '/', nor is '.' or '..' "
                          "(for example sched:sched_process_exec)", event);
                return 2;
        }
        if (r < 0) {
                log_error("%s: %s", event,
                        r == -ENOENT ? "no such event in this kernel (`evmonctl list` shows them)" : strerror(-r));
                return 1;
        }
        o = json_object_new_object();
        fields = json_object_new_array();
        json_object_object_add(o, "event", json_object_new_string(event));
        json_object_object_add(o, "id", json_object_new_int64(f->id));
        for (size_t i = 0; i < f->n_fields; i++) {
                const struct format_field *ff = &f->fields[i];
                json_object *e = json_object_new_object();

                json_object_object_add(e, "name", json_object_new_string(ff->name));
                json_object_object_add(e, "type", json_object_new_string(ff->type));
                json_object_object_add(e, "offset", json_object_new_int64(ff->offset));
                json_object_object_add(e, "size", json_object_new_int64(ff->size));
                /* The sign the decoder gives the value: it follows the
                 * declared type (int in an 8-byte syscall slot is signed),
                 * and only numbers have one (kernels disagree about the
                 * signed: of a __data_loc char[]). */
                json_object_object_add(e, "signed", json_object_new_boolean(
                        (ff->kind == FIELD_INT || ff->kind == FIELD_ARRAY || ff->kind == FIELD_DYN_ARRAY) && ff->elem_signed));
                json_object_object_add(e, "kind", json_object_new_string(field_kind_to_string(ff->kind)));
                if (ff->common)
                        json_object_object_add(e, "common", json_object_new_boolean(true));
                /* The print fmt's tables, as schema lines show them. */
                if (format_symbols_find(f, i))
                        json_object_object_add(e, "symbols", encode_symbols_new(format_symbols_find(f, i)));
                json_object_array_add(fields, e);
        }
        json_object_object_add(o, "fields", fields);
        /* Helpers of the print fmt that name nothing here (printfmt.c). */
        json_object_object_add(o, "print_unknown", json_object_new_int64(f->print_unknown));
        describe_print(o);
        return 0;
}
