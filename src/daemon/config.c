/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "config-parse.h"
#include "metrics.h"
#include "evmon/cleanup.h"
#include "evmon/connect.h"
#include "evmon/error.h"
#include "evmon/io.h"
#include "evmon/jsonc.h"
#include "evmon/strv.h"

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


/* ---- socket ---------------------------------------------------------- */

/* socket.admin_add: {"kinds": [KIND...], "paths": [PATTERN...], "fetch": BOOL}. */
struct admin_add_in {
        const char **kinds, **paths;
        bool fetch;
};

static const struct field admin_add_fields[] = {
        F_NAMES("kinds", struct admin_add_in, kinds),
        F_NAMES("paths", struct admin_add_in, paths),
        F_BOOL("fetch", struct admin_add_in, fetch),
        {}
};

static int admin_add_kinds(struct parser *ps, const char *path, const char *const *kinds, unsigned *ret) {
        for (size_t i = 0; kinds && kinds[i]; i++) {
                size_t k;

                for (k = 0; k < _EVENT_KIND_MAX; k++)
                        if (strcmp(kinds[i], event_kind_table[k]) == 0)
                                break;
                if (k == _EVENT_KIND_MAX) {
                        _cleanup_(freep) char *child = NULL;

                        if (asprintf(&child, "%s.kinds[%zu]", path, i) < 0)
                                return -ENOMEM;
                        return config_fail(ps, child, "unknown event kind \"%s\" (known: tracepoint, kprobe, "
                                           "kretprobe, uprobe, uretprobe, software, hardware, cache, raw, breakpoint, "
                                           "pmu)", kinds[i]);
                }
                *ret |= 1u << k;
        }
        return 0;
}

static int admin_add_paths(struct parser *ps, const char *path, const char *const *paths, char ***ret) {
        size_t n = 0;

        while (paths[n])
                n++;
        *ret = calloc(n + 1, sizeof(char *));
        if (!*ret)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                /* Matched against the binary's real path: a relative
                 * pattern would match nothing. */
                if (paths[i][0] != '/') {
                        _cleanup_(freep) char *child = NULL;

                        if (asprintf(&child, "%s.paths[%zu]", path, i) < 0)
                                return -ENOMEM;
                        return config_fail(ps, child, "\"%s\" must be an absolute path or pattern such as "
                                           "\"/usr/bin/*\"", paths[i]);
                }
                (*ret)[i] = strdup(paths[i]);
                if (!(*ret)[i])
                        return -ENOMEM;
        }
        return 0;
}

static int field_admin_add(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
                           const struct field *f) {
        struct config *c = base;
        struct admin_add *a = &c->admin_add;
        struct admin_add_in in = {};
        int r;

        if (!c->socket_admin_group)
                return config_fail(ps, path, "there is no socket.admin_group for it to limit");
        r = config_fields_dispatch(ps, path, v, admin_add_fields, &in);
        a->fetch = in.fetch;
        if (r >= 0)
                r = admin_add_kinds(ps, path, in.kinds, &a->kinds);
        if (r >= 0 && in.paths)
                r = admin_add_paths(ps, path, in.paths, &a->paths);
        free(in.kinds);
        free(in.paths);
        if (r < 0)
                return r;
        if ((a->kinds & (1u << EVENT_UPROBE | 1u << EVENT_URETPROBE)) && !a->paths)
                return config_fail(ps, "socket.admin_add.paths", "uprobes are in socket.admin_add.kinds, but no "
                                   "\"paths\" says which binaries (e.g. [\"/usr/bin/*\"])");
        return 0;
}

static int field_socket_path(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
                             const struct field *f) {
        const char *s = json_object_get_string(v);

        if (s[0] != '/' || strlen(s) > EVMON_SOCKET_PATH_MAX)
                return config_fail(ps, path, "\"%s\" must be an absolute path shorter than %zu bytes", s,
                                   EVMON_SOCKET_PATH_MAX + 1);
        return config_dup_string(v, &((struct config *) base)->socket_path);
}

static int field_socket_mode(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
                             const struct field *f) {
        const char *s;
        char *end;
        unsigned long m;

        if (!json_object_is_type(v, json_type_string))
                return config_fail(ps, path, "expected an octal string such as \"0660\", got %s", config_type_name(v));
        s = json_object_get_string(v);
        errno = 0;
        m = strtoul(s, &end, 8);
        /* strtoul() would take " 660" and "+660" too. */
        if (!*s || s[strspn(s, "01234567")] || *end || errno || m > 0777)
                return config_fail(ps, path, "\"%s\" is not an octal file mode such as \"0660\"", s);
        ((struct config *) base)->socket_mode = (mode_t) m;
        return 0;
}

static const struct field socket_fields[] = {
        F_CUSTOM("path", json_type_string, field_socket_path),
        F_CUSTOM("mode", json_type_null, field_socket_mode),
        F_STRING("group", struct config, socket_group),
        F_STRING("admin_group", struct config, socket_admin_group),
        F_CUSTOM("admin_add", json_type_object, field_admin_add),
        {}
};

/* ---- ring, clients, metrics, counters -------------------------------- */

static int field_ring_pages(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
                            const struct field *f) {
        uint64_t n = 0;
        int r;

        r = config_check_range(ps, path, v, 1, 1u << 16, &n);
        if (r < 0)
                return r;
        if (n & (n - 1))
                return config_fail(ps, path, "%" PRIu64 " is not a power of two (try %" PRIu64 ")",
                                   n, (uint64_t) 1 << (63 - __builtin_clzll(n)));
        ((struct config *) base)->ring_pages = (unsigned) n;
        return 0;
}

/* The latency budget: how long a record of a flowing stream may wait in
 * its ring (the look while records flow); flush_ms is its old name. A lone
 * record, or a burst's first, rings its doorbell whatever this says. */
static int field_flush_ms(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
                          const struct field *f) {
        if (json_object_object_get_ex(o, "latency_ms", NULL))
                return config_fail(ps, path, "is the old name of ring.latency_ms, which is set too: keep only "
                                   "ring.latency_ms");
        return config_field_uint(ps, path, o, v, base, f);
}

/* ring.busy_flush_ms and ring.idle_flush_ms, periods that start from
 * flush_ms and grow (ARG says how): never below flush_ms. */
static int field_ring_period(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
                             const struct field *f) {
        struct config *c = base;
        uint64_t n = 0;
        int r;

        r = config_check_range(ps, path, v, 1, 10000, &n);
        if (r < 0)
                return r;
        if (n < c->flush_ms)
                return config_fail(ps, path, "%" PRIu64 " is below ring.flush_ms (%u): the reader %s", n, c->flush_ms,
                                   (const char *) f->arg);
        config_store_uint(field_ptr(base, f), f->size, n);
        return 0;
}

static const struct field ring_fields[] = {
        F_CUSTOM("pages", json_type_int, field_ring_pages),
        F_UINT("latency_ms", struct config, flush_ms, 1, 1000),
        { .key = "flush_ms", .type = json_type_int, .parse = field_flush_ms, FIELD_AT(struct config, flush_ms),
          .min = 1, .max = 1000 },
        { .key = "busy_flush_ms", .type = json_type_int, .parse = field_ring_period,
          FIELD_AT(struct config, busy_flush_ms),
          .arg = "stretches its look from flush_ms up to busy_flush_ms while records pour in" },
        { .key = "idle_flush_ms", .type = json_type_int, .parse = field_ring_period,
          FIELD_AT(struct config, idle_flush_ms),
          .arg = "backs off from flush_ms to idle_flush_ms when the rings are quiet" },
        F_BOOL("doorbell", struct config, doorbell),
        F_UINT("threads", struct config, ring_threads, 0, CONFIG_RING_THREADS_MAX),
        {}
};

/* An unset period is its default, or flush_ms when that is longer. */
static int field_ring(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
                      const struct field *f) {
        struct config *c = base;
        int r;

        r = config_fields_dispatch(ps, path, v, ring_fields, c);
        if (r < 0)
                return r;
        if (!json_object_object_get_ex(v, "idle_flush_ms", NULL))
                c->idle_flush_ms = c->flush_ms > CONFIG_DEFAULT_IDLE_FLUSH_MS ? c->flush_ms :
                                                                                 CONFIG_DEFAULT_IDLE_FLUSH_MS;
        if (!json_object_object_get_ex(v, "busy_flush_ms", NULL))
                c->busy_flush_ms = c->flush_ms > CONFIG_DEFAULT_BUSY_FLUSH_MS ? c->flush_ms :
                                                                                 CONFIG_DEFAULT_BUSY_FLUSH_MS;
        return 0;
}

static int field_queue_kib(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
                           const struct field *f) {
        uint64_t n = 0;
        int r;

        r = config_check_range(ps, path, v, 64, 1u << 20, &n);
        if (r < 0)
                return r;
        ((struct config *) base)->client_queue_bytes = (size_t) n * 1024;
        return 0;
}

static const struct field clients_fields[] = {
        F_UINT("max", struct config, max_clients, 1, 4096),
        F_UINT("max_per_uid", struct config, max_clients_per_uid, 1, 4096),
        F_CUSTOM("queue_kib", json_type_int, field_queue_kib),
        {}
};

/* "metrics": {"path": "/var/lib/prometheus/node-exporter/evmon.prom",
 * "interval_ms": 5000}; path "" or false: no metrics file. */
static int field_metrics_path(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
                              const struct field *f) {
        struct config *c = base;
        const char *s;

        if ((json_object_is_type(v, json_type_boolean) && !json_object_get_boolean(v)) ||
            (json_object_is_type(v, json_type_string) && json_object_get_string_len(v) == 0)) {
                free(c->metrics_path);
                c->metrics_path = NULL;
                return 0;
        }
        if (!json_object_is_type(v, json_type_string))
                return config_fail(ps, path, "expected a file path string (or \"\" or false for no metrics file), "
                                   "got %s", config_type_name(v));
        s = json_object_get_string(v);
        if (s[0] != '/' || s[strlen(s) - 1] == '/')
                return config_fail(ps, path, "\"%s\" must be an absolute file path, such as \"%s\"", s,
                                   METRICS_DEFAULT_PATH);
        return config_dup_string(v, &c->metrics_path);
}

static const struct field metrics_fields[] = {
        F_CUSTOM("path", json_type_null, field_metrics_path),
        /* Written on the daemon's once-a-second tick: whole seconds. */
        F_UINT("interval_ms", struct config, metrics_interval_ms, 1000, 3600000),
        {}
};

static const struct field counters_fields[] = {
        F_UINT("interval_ms", struct config, counter_interval_ms, 10, 3600000),
        {}
};

/* ---- targets --------------------------------------------------------- */

static int field_cgroups(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
                         const struct field *f) {
        struct config *c = base;
        size_t n = json_object_array_length(v);

        c->cgroups = calloc(n + 1, sizeof(char *));
        c->cgroups_where = calloc(n + 1, sizeof(char *));
        if (!c->cgroups || !c->cgroups_where)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(v, i);
                _cleanup_(freep) char *child = config_path_index(path, i);

                if (!child)
                        return -ENOMEM;
                if (!json_object_is_type(e, json_type_string))
                        return config_fail(ps, child, "expected a cgroup path string, got %s", config_type_name(e));
                c->cgroups[i] = strdup(json_object_get_string(e));
                if (!c->cgroups[i] ||
                    asprintf(&c->cgroups_where[i], "%s:%u: %s", ps->file, config_line_of(ps, child), child) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static int field_pids(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
                      const struct field *f) {
        struct config *c = base;
        size_t n = json_object_array_length(v);

        c->pids = calloc(n ? n : 1, sizeof(pid_t));
        if (!c->pids)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(v, i);
                _cleanup_(freep) char *child = config_path_index(path, i);
                int64_t pid;

                if (!child)
                        return -ENOMEM;
                if (!json_object_is_type(e, json_type_int))
                        return config_fail(ps, child, "expected a process id, got %s", config_type_name(e));
                pid = json_object_get_int64(e);
                if (pid <= 0 || pid > INT32_MAX)
                        return config_fail(ps, child, "%" PRIi64 " is not a valid process id", pid);
                c->pids[c->n_pids++] = (pid_t) pid;
        }
        return 0;
}

/* targets.containers and targets.namespaces: as a subscribe's lists
 * (the same bound, the same matching), for every client. */
static int field_context_targets(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
                                 const struct field *f) {
        struct config *c = base;
        bool ns = strcmp(f->key, "namespaces") == 0;
        char ***list = ns ? &c->target_namespaces : &c->target_containers;
        size_t n = json_object_array_length(v);

        if (n == 0)
                return config_fail(ps, path, "empty: it would match nothing; leave it out to take every %s",
                                   ns ? "namespace" : "container");
        if (n > TARGETS_CONTEXT_MAX)
                return config_fail(ps, path, "%zu entries, more than %u: each is tried on every event", n,
                                   TARGETS_CONTEXT_MAX);
        *list = calloc(n + 1, sizeof(char *));
        if (!*list)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(v, i);
                _cleanup_(freep) char *child = config_path_index(path, i);
                const char *s;

                if (!child)
                        return -ENOMEM;
                if (!json_object_is_type(e, json_type_string) || !*(s = json_object_get_string(e)))
                        return config_fail(ps, child, "expected %s, got %s",
                                           ns ? "a namespace or an fnmatch(3) pattern of one"
                                              : "a container id (or its leading digits), name or name pattern",
                                           json_object_is_type(e, json_type_string) ? "an empty string"
                                                                                    : config_type_name(e));
                (*list)[i] = strdup(s);
                if (!(*list)[i])
                        return -ENOMEM;
        }
        return 0;
}

static const struct field targets_fields[] = {
        F_CUSTOM("cgroups", json_type_array, field_cgroups),
        F_CUSTOM("pids", json_type_array, field_pids),
        F_CUSTOM("containers", json_type_array, field_context_targets),
        F_CUSTOM("namespaces", json_type_array, field_context_targets),
        {}
};

/* ---- the root -------------------------------------------------------- */

static int field_clock(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
                       const struct field *f) {
        static const struct { const char *name; clockid_t id; } clocks[] = {
                { "monotonic", CLOCK_MONOTONIC },
                { "monotonic_raw", CLOCK_MONOTONIC_RAW },
                { "boottime", CLOCK_BOOTTIME },
                { "realtime", CLOCK_REALTIME },
                { "tai", CLOCK_TAI },
        };
        struct config *c = base;
        const char *s = json_object_get_string(v);

        for (size_t i = 0; i < ELEMENTSOF(clocks); i++)
                if (strcmp(s, clocks[i].name) == 0) {
                        c->clockid = clocks[i].id;
                        return config_dup_string(v, &c->clock_name);
                }
        return config_fail(ps, path, "\"%s\" is not one of monotonic, monotonic_raw, boottime, realtime, tai", s);
}

static int field_order(struct parser *ps, const char *path, json_object *o, json_object *v, void *base,
                       const struct field *f) {
        struct config *c = base;
        const char *s = json_object_get_string(v);

        if (strcmp(s, "time") == 0)
                c->order_time = true;
        else if (strcmp(s, "arrival") == 0)
                c->order_time = false;
        else
                return config_fail(ps, path, "\"%s\" is neither \"time\" (lines in ts order across CPUs, the "
                                   "default) nor \"arrival\" (as read, at the lowest latency)", s);
        return 0;
}

static const struct field root_fields[] = {
        F_OBJECT("socket", socket_fields),
        F_CUSTOM("ring", json_type_object, field_ring),
        F_OBJECT("clients", clients_fields),
        F_OBJECT("targets", targets_fields),
        { .key = "events", .type = json_type_array, .parse = config_field_events, .flags = FIELD_REQUIRED,
          .arg = "missing: list the tracepoints and probes to serve" },
        F_CUSTOM("clock", json_type_string, field_clock),
        F_OBJECT("counters", counters_fields),
        F_BOOL("context", struct config, context),
        F_OBJECT("metrics", metrics_fields),
        F_CUSTOM("order", json_type_string, field_order),
        F_BOOL("self", struct config, self),
        {}
};

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
                        return config_fail(ps, "clock", "\"%s\" is a clock the kernel stamps software events "
                                           "with only (it is not NMI-safe), and events[%zu] (%s) is a %s: use "
                                           "\"monotonic\" (the default) or \"monotonic_raw\"; \"time\" on every "
                                           "line is wall-clock time anyway", c->clock_name, i,
                                           c->events[i].wire_name, event_kind_table[c->events[i].kind]);
        return 0;
}

static int parse_root(struct parser *ps, struct config *c, json_object *root) {
        int r;

        if (!json_object_is_type(root, json_type_object))
                return config_fail(ps, "", "the config must be a JSON object, got %s", config_type_name(root));
        r = config_fields_dispatch(ps, "", root, root_fields, c);
        if (r < 0)
                return r;
        if ((c->target_containers || c->target_namespaces) && !c->context)
                return config_fail(ps, c->target_containers ? "targets.containers" : "targets.namespaces",
                                   "needs \"context\": true (containers and namespaces are known from it)");
        return check_clock(ps, c);
}

static int strdup_or_null(const char *s, char **ret) {
        *ret = s ? strdup(s) : NULL;
        return s && !*ret ? -ENOMEM : 0;
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
        c->cgroups = c->cgroups_where = c->target_containers = c->target_namespaces = NULL;
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
            strv_copy(src->cgroups_where, &c->cgroups_where) < 0 ||
            strv_copy(src->target_containers, &c->target_containers) < 0 ||
            strv_copy(src->target_namespaces, &c->target_namespaces) < 0)
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
        strv_free(c->target_containers);
        strv_free(c->target_namespaces);
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
        r = config_scan(&ps, "", 0);
        if (r == -ENOMEM)
                goto finish;
        for (const char *p = text + end; *p; p++)
                if (!isspace((unsigned char) *p)) {
                        unsigned line = 1;
                        for (const char *q = text; q < p; q++)
                                line += *q == '\n';
                        config_parser_done(&ps);
                        return error_set(ret_error, -EINVAL, "%s:%u: invalid JSON: text after the end of the config object",
                                         path, line);
                }

        r = parse_root(&ps, c, root);
finish:
        if (r < 0) {
                *ret_error = TAKE_PTR(ps.error);
                config_parser_done(&ps);
                return r;
        }
        config_parser_done(&ps);
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
