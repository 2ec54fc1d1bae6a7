/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The control lines of the wire protocol: hello, subscribed, error,
 * config, reload, status, result and the requests; counter and gap lines; and
 * evmon-forward's own lines. They are rare (one per request, reload or
 * counter interval), so they are built as json-c objects and serialised
 * once. */
#include <errno.h>
#include <string.h>

#include "evmon/encode.h"
#include "evmon/json.h"
#include "evmon/jsonc.h"
#include "evmon/protocol.h"

int jsonc_append_line(struct jbuf *b, json_object *o) {
        const char *s;
        size_t n;
        int r;

        s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        if (!s)
                return -ENOMEM;
        n = strlen(s);
        r = jbuf_reserve(b, n + 1);
        if (r < 0)
                return r;
        jbuf_put_bytes(b, s, n);
        jbuf_put_char(b, '\n');
        return 0;
}

/* Adds KEY: V to O; false when V could not be made (out of memory). */
static bool add(json_object *o, const char *key, json_object *v) {
        return v && json_object_object_add(o, key, v) == 0;
}

static bool array_add(json_object *a, json_object *v) {
        return v && json_object_array_add(a, v) == 0;
}

static json_object *line_new(const char *type) {
        json_object *o = json_object_new_object();

        if (o && !add(o, "type", json_object_new_string(type)))
                o = (json_object_put(o), NULL);
        return o;
}

static json_object *strings_new(const char *const *s, size_t n) {
        json_object *a = json_object_new_array();

        for (size_t i = 0; a && i < n; i++)
                if (!array_add(a, json_object_new_string(s[i])))
                        a = (json_object_put(a), NULL);
        return a;
}

/* "time" as json_put_time() writes it, without the quotes it adds. */
static json_object *time_new(uint64_t realtime_ns) {
        char t[JSON_TIME_LEN], *end = json_put_time(t, realtime_ns);

        return json_object_new_string_len(t + 1, (int) (end - t - 2));
}

int encode_hello(struct jbuf *b, const char *const *events, size_t n_events, uint64_t start_ns, uint64_t client) {
        _cleanup_(json_object_putp) json_object *o = line_new(EVMON_LINE_HELLO);

        if (!o || !add(o, "version", json_object_new_int(EVMON_PROTOCOL_VERSION)) ||
            !add(o, "events", strings_new(events, n_events)))
                return -ENOMEM;
        if (start_ns > 0 && !add(o, "start", time_new(start_ns)))
                return -ENOMEM;
        if (client > 0 && !add(o, "client", json_object_new_uint64(client)))
                return -ENOMEM;
        return jsonc_append_line(b, o);
}

/* "pids" and "cgroups" of a subscription, each where given. */
static bool add_targets(json_object *o, const pid_t *pids, size_t n_pids, const char *const *cgroups,
                        size_t n_cgroups) {
        if (pids) {
                json_object *a = json_object_new_array();

                if (!add(o, "pids", a))
                        return false;
                for (size_t i = 0; i < n_pids; i++)
                        if (!array_add(a, json_object_new_int(pids[i])))
                                return false;
        }
        return !cgroups || add(o, "cgroups", strings_new(cgroups, n_cgroups));
}

int encode_subscribed(struct jbuf *b, const char *const *events, size_t n_events,
                      const pid_t *pids, size_t n_pids,
                      const char *const *cgroups, size_t n_cgroups) {
        _cleanup_(json_object_putp) json_object *o = line_new(EVMON_LINE_SUBSCRIBED);

        if (!o || !add(o, "events", strings_new(events, n_events)) ||
            !add_targets(o, pids, n_pids, cgroups, n_cgroups))
                return -ENOMEM;
        return jsonc_append_line(b, o);
}

int encode_counter(struct jbuf *b, const struct encode_counter *c) {
        _cleanup_(json_object_putp) json_object *o = line_new(EVMON_LINE_COUNTER);
        json_object *cpus;

        if (!o || !add(o, "event", json_object_new_string(c->event)) ||
            !add(o, "time", time_new(c->ts + (uint64_t) c->realtime_offset_ns)) ||
            !add(o, "ts", json_object_new_int64((int64_t) c->ts)) ||
            !add(o, "value", json_object_new_int64((int64_t) c->value)) ||
            !add(o, "delta", json_object_new_int64((int64_t) c->delta)) ||
            !add(o, "enabled", json_object_new_int64((int64_t) c->enabled)) ||
            !add(o, "running", json_object_new_int64((int64_t) c->running)) ||
            !add(o, "scaled", json_object_new_int64((int64_t) c->scaled)) ||
            (c->group && !add(o, "group", json_object_new_string(c->group))) ||
            !add(o, "cpus", cpus = json_object_new_array()))
                return -ENOMEM;
        for (size_t i = 0; i < c->n_cpus; i++) {
                json_object *e = json_object_new_object();

                if (!array_add(cpus, e) ||
                    !add(e, "cpu", json_object_new_int(c->cpus[i].cpu)) ||
                    !add(e, "value", json_object_new_int64((int64_t) c->cpus[i].value)) ||
                    !add(e, "enabled", json_object_new_int64((int64_t) c->cpus[i].enabled)) ||
                    !add(e, "running", json_object_new_int64((int64_t) c->cpus[i].running)))
                        return -ENOMEM;
        }
        return jsonc_append_line(b, o);
}

int encode_gap(struct jbuf *b, int cpu, const char *reason, uint64_t since, uint64_t ts, int64_t realtime_offset_ns) {
        _cleanup_(json_object_putp) json_object *o = line_new(EVMON_LINE_GAP);

        if (!o || !add(o, "cpu", json_object_new_int(cpu)) ||
            !add(o, "reason", json_object_new_string(reason)) ||
            !add(o, "since", time_new(since + (uint64_t) realtime_offset_ns)) ||
            !add(o, "since_ts", json_object_new_int64((int64_t) since)) ||
            !add(o, "time", time_new(ts + (uint64_t) realtime_offset_ns)) ||
            !add(o, "ts", json_object_new_int64((int64_t) ts)))
                return -ENOMEM;
        return jsonc_append_line(b, o);
}

int encode_error(struct jbuf *b, const char *message) {
        _cleanup_(json_object_putp) json_object *o = line_new(EVMON_LINE_ERROR);

        if (!o || !add(o, "error", json_object_new_string(message)))
                return -ENOMEM;
        return jsonc_append_line(b, o);
}

int encode_config(struct jbuf *b, const char *const *events, size_t n_events) {
        _cleanup_(json_object_putp) json_object *o = line_new(EVMON_LINE_CONFIG);

        if (!o || !add(o, "events", strings_new(events, n_events)))
                return -ENOMEM;
        return jsonc_append_line(b, o);
}

int encode_probe(struct jbuf *b, const struct encode_probe *p) {
        _cleanup_(json_object_putp) json_object *o = line_new(EVMON_LINE_PROBE);

        if (!o || !add(o, "event", json_object_new_string(p->event)) ||
            !add(o, "status", json_object_new_string(p->status)) ||
            !add(o, "path", json_object_new_string(p->path)) ||
            !add(o, "inode", json_object_new_int64((int64_t) p->inode)) ||
            (p->uid >= 0 && !add(o, "uid", json_object_new_int64(p->uid))) ||
            (p->build_id ? !add(o, "build_id", json_object_new_string(p->build_id))
                         : json_object_object_add(o, "build_id", NULL) != 0) ||
            !add(o, "attached", json_object_new_int64((int64_t) p->attachments)))
                return -ENOMEM;
        if (p->error && !add(o, "error", json_object_new_string(p->error)))
                return -ENOMEM;
        return jsonc_append_line(b, o);
}

int encode_reload(struct jbuf *b, bool ok, const char *error, const char *const *events, size_t n_events) {
        _cleanup_(json_object_putp) json_object *o = line_new(EVMON_LINE_RELOAD);

        if (!o || !add(o, "ok", json_object_new_boolean(ok)))
                return -ENOMEM;
        if (!ok && !add(o, "error", json_object_new_string(error ?: "out of memory")))
                return -ENOMEM;
        if (!add(o, "events", strings_new(events, n_events)))
                return -ENOMEM;
        return jsonc_append_line(b, o);
}

int encode_result(struct jbuf *b, const char *request, const char *const *events, size_t n_events) {
        _cleanup_(json_object_putp) json_object *o = line_new(EVMON_LINE_RESULT);

        if (!o || !add(o, "request", json_object_new_string(request)) || !add(o, "ok", json_object_new_boolean(true)) ||
            !add(o, "events", strings_new(events, n_events)))
                return -ENOMEM;
        return jsonc_append_line(b, o);
}

static json_object *status_events(const struct encode_status *st) {
        json_object *a = json_object_new_array();

        for (size_t i = 0; a && i < st->n_events; i++) {
                const struct encode_status_event *ev = &st->events[i];
                json_object *e = json_object_new_object();

                if (!array_add(a, e) ||
                    !add(e, "event", json_object_new_string(ev->event)) ||
                    !add(e, "count", json_object_new_int64((int64_t) ev->count)) ||
                    !add(e, "undecodable", json_object_new_int64((int64_t) ev->undecodable)) ||
                    (ev->runtime && !add(e, "runtime", json_object_new_boolean(true))) ||
                    (ev->disabled && !add(e, "enabled", json_object_new_boolean(false))) ||
                    (ev->files > 1 && !add(e, "files", json_object_new_int64((int64_t) ev->files))) ||
                    (ev->missing && !add(e, "missing", json_object_new_string(ev->missing))))
                        a = (json_object_put(a), NULL);
        }
        return a;
}

static json_object *status_cpus(const struct encode_status *st) {
        json_object *a = json_object_new_array();

        for (size_t i = 0; a && i < st->n_cpus; i++) {
                const struct encode_status_cpu *cpu = &st->cpus[i];
                json_object *e = json_object_new_object();

                if (!array_add(a, e) ||
                    !add(e, "cpu", json_object_new_int(cpu->cpu)) ||
                    !add(e, "lost", json_object_new_int64((int64_t) cpu->lost)) ||
                    !add(e, "malformed", json_object_new_int64((int64_t) cpu->malformed)) ||
                    (cpu->offline && !add(e, "offline", json_object_new_boolean(true))) ||
                    (cpu->gaps > 0 && !add(e, "gaps", json_object_new_int64((int64_t) cpu->gaps))))
                        a = (json_object_put(a), NULL);
        }
        return a;
}

static json_object *status_ring(const struct encode_status *st) {
        json_object *o = json_object_new_object();

        /* latency_ms is the config key; flush_ms, its old name, stays for
         * the clients that read it. */
        if (o && (!add(o, "pages", json_object_new_int((int) st->ring_pages)) ||
                  !add(o, "latency_ms", json_object_new_int((int) st->flush_ms)) ||
                  !add(o, "flush_ms", json_object_new_int((int) st->flush_ms)) ||
                  !add(o, "busy_flush_ms", json_object_new_int((int) st->busy_flush_ms)) ||
                  !add(o, "idle_flush_ms", json_object_new_int((int) st->idle_flush_ms)) ||
                  !add(o, "doorbell", json_object_new_boolean(st->doorbell)) ||
                  !add(o, "doorbell_rings", json_object_new_int64((int64_t) st->doorbell_rings)) ||
                  !add(o, "doorbell_rests", json_object_new_int64((int64_t) st->doorbell_rests)) ||
                  !add(o, "early_bells", json_object_new_int64((int64_t) st->early_bells)) ||
                  !add(o, "ticks", json_object_new_int64((int64_t) st->ticks)) ||
                  !add(o, "swept", json_object_new_int64((int64_t) st->swept)) ||
                  !add(o, "flushed", json_object_new_int64((int64_t) st->flushed)) ||
                  !add(o, "threads", json_object_new_int((int) (st->ring_threads ? st->ring_threads : 1))) ||
                  !add(o, "scans", json_object_new_int64((int64_t) st->scans)) ||
                  !add(o, "scanned", json_object_new_int64((int64_t) st->scanned)) ||
                  !add(o, "encoded", json_object_new_int64((int64_t) st->encoded))))
                o = (json_object_put(o), NULL);
        return o;
}

static json_object *status_order(const struct encode_status *st) {
        json_object *o = json_object_new_object();

        if (o && (!add(o, "mode", json_object_new_string(st->order_time ? "time" : "arrival")) ||
                  (st->order_time &&
                   (!add(o, "hold_us", json_object_new_int((int) st->order_hold_us)) ||
                    !add(o, "late", json_object_new_int64((int64_t) st->order_late)) ||
                    !add(o, "in_flight_max_us", json_object_new_double((double) st->order_in_flight_max_ns / 1e3)) ||
                    !add(o, "releases", json_object_new_int64((int64_t) st->order_releases))))))
                o = (json_object_put(o), NULL);
        return o;
}

static json_object *status_clients(const struct encode_status *st) {
        json_object *a = json_object_new_array();

        for (size_t i = 0; a && i < st->n_clients; i++) {
                const struct encode_status_client *c = &st->clients[i];
                json_object *e = json_object_new_object();

                if (!array_add(a, e) ||
                    !add(e, "id", json_object_new_int64((int64_t) c->id)) ||
                    !add(e, "pid", json_object_new_int(c->pid)) ||
                    !add(e, "uid", json_object_new_int64(c->uid)) ||
                    !add(e, "queued_bytes", json_object_new_int64((int64_t) c->queued_bytes)) ||
                    !add(e, "lines", json_object_new_int64((int64_t) c->lines)) ||
                    !add(e, "dropped", json_object_new_int64((int64_t) c->dropped)))
                        a = (json_object_put(a), NULL);
        }
        return a;
}

static json_object *status_closing(const struct encode_status *st) {
        json_object *o = json_object_new_object();

        if (o && (!add(o, "jobs", json_object_new_int64((int64_t) st->closing_jobs)) ||
                  !add(o, "fds", json_object_new_int64((int64_t) st->closing_fds))))
                o = (json_object_put(o), NULL);
        return o;
}

static json_object *status_context(const struct encode_status_context *c) {
        json_object *o = json_object_new_object(), *s = NULL;

        if (o && (!add(o, "procs", json_object_new_int64((int64_t) c->procs)) ||
                  !add(o, "retired", json_object_new_int64((int64_t) c->retired)) ||
                  !add(o, "cgroups", json_object_new_int64((int64_t) c->cgroups)) ||
                  !add(o, "strings", json_object_new_int64((int64_t) c->strings)) ||
                  !add(o, "string_bytes", json_object_new_int64((int64_t) c->string_bytes)) ||
                  !add(o, "hits", json_object_new_int64((int64_t) c->hits)) ||
                  !add(o, "misses", json_object_new_int64((int64_t) c->misses)) ||
                  !add(o, "first_sight", json_object_new_int64((int64_t) c->first_sight)) ||
                  !add(o, "untracked", json_object_new_int64((int64_t) c->full)) ||
                  !add(o, "bound_bytes", json_object_new_int64((int64_t) c->bound_bytes))))
                return json_object_put(o), NULL;
        if (o && c->containers) {
                s = json_object_new_object();
                if (!add(o, "containers", s) ||
                    !add(s, "known", json_object_new_int64((int64_t) c->ctr_known)) ||
                    !add(s, "verified", json_object_new_int64((int64_t) c->ctr_verified)) ||
                    !add(s, "unverified", json_object_new_int64((int64_t) c->ctr_unverified)) ||
                    !add(s, "reads", json_object_new_int64((int64_t) c->ctr_reads)) ||
                    !add(s, "refused", json_object_new_int64((int64_t) c->ctr_refused)) ||
                    !add(s, "evicted", json_object_new_int64((int64_t) c->ctr_evicted)))
                        return json_object_put(o), NULL;
        }
        if (o && c->symbols) {
                s = json_object_new_object();
                if (!add(o, "symbols", s) ||
                    !add(s, "modules", json_object_new_int64((int64_t) c->sym_modules)) ||
                    !add(s, "procs", json_object_new_int64((int64_t) c->sym_procs)) ||
                    !add(s, "named", json_object_new_int64((int64_t) c->sym_named)) ||
                    !add(s, "unnamed", json_object_new_int64((int64_t) c->sym_unnamed)) ||
                    !add(s, "cache_bytes", json_object_new_int64((int64_t) c->sym_cache_bytes)) ||
                    !add(s, "helper_starts", json_object_new_int64((int64_t) c->sym_helper_starts)) ||
                    !add(s, "helper_timeouts", json_object_new_int64((int64_t) c->sym_helper_timeouts)) ||
                    !add(s, "helper_failures", json_object_new_int64((int64_t) c->sym_helper_crashes)) ||
                    !add(s, "refused", json_object_new_int64((int64_t) c->sym_refused)) ||
                    !add(s, "unwound", json_object_new_int64((int64_t) c->sym_unwound)) ||
                    !add(s, "unwind_skipped", json_object_new_int64((int64_t) c->sym_unwind_skipped)))
                        return json_object_put(o), NULL;
        }
        return o;
}

int encode_status(struct jbuf *b, const struct encode_status *st) {
        _cleanup_(json_object_putp) json_object *o = line_new(EVMON_LINE_STATUS);

        if (!o ||
            !add(o, "config", json_object_new_string(st->config)) ||
            !add(o, "probe_group", json_object_new_string(st->probe_group)) ||
            !add(o, "uptime_s", json_object_new_double(st->uptime_s)) ||
            !add(o, "events", status_events(st)) ||
            !add(o, "cpus", status_cpus(st)) ||
            !add(o, "ring", status_ring(st)) ||
            !add(o, "order", status_order(st)) ||
            !add(o, "clients", status_clients(st)) ||
            !add(o, "closing", status_closing(st)) ||
            (st->context && !add(o, "context", status_context(st->context))))
                return -ENOMEM;
        return jsonc_append_line(b, o);
}

int encode_request(struct jbuf *b, const char *type) {
        _cleanup_(json_object_putp) json_object *o = line_new(type);

        if (!o)
                return -ENOMEM;
        return jsonc_append_line(b, o);
}

int encode_control(struct jbuf *b, const char *type, const char *entry, const char *event, const char *filter,
                   const char *const *events, size_t n_events) {
        _cleanup_(json_object_putp) json_object *o = line_new(type);
        json_object *e;

        if (!o)
                return -ENOMEM;
        if (entry) {
                e = json_tokener_parse(entry);
                if (!e)
                        return -EINVAL;
                if (!add(o, "event", e))
                        return -ENOMEM;
        } else if (event && !add(o, "event", json_object_new_string(event)))
                return -ENOMEM;
        if (filter && !add(o, "filter", json_object_new_string(filter)))
                return -ENOMEM;
        if (events && !add(o, "events", strings_new(events, n_events)))
                return -ENOMEM;
        return jsonc_append_line(b, o);
}

int encode_subscribe_targets(struct jbuf *b, const char *const *events, size_t n_events,
                             const pid_t *pids, size_t n_pids,
                             const char *const *cgroups, size_t n_cgroups) {
        _cleanup_(json_object_putp) json_object *o = line_new(EVMON_REQUEST_SUBSCRIBE);

        if (!o || (events && !add(o, "events", strings_new(events, n_events))) ||
            !add_targets(o, pids, n_pids, cgroups, n_cgroups))
                return -ENOMEM;
        return jsonc_append_line(b, o);
}

int encode_subscribe_context(struct jbuf *b, const char *const *events, size_t n_events,
                             const char *const *containers, size_t n_containers,
                             const char *const *namespaces, size_t n_namespaces) {
        _cleanup_(json_object_putp) json_object *o = line_new(EVMON_REQUEST_SUBSCRIBE);

        if (!o || (events && !add(o, "events", strings_new(events, n_events))) ||
            (n_containers > 0 && !add(o, "containers", strings_new(containers, n_containers))) ||
            (n_namespaces > 0 && !add(o, "namespaces", strings_new(namespaces, n_namespaces))))
                return -ENOMEM;
        return jsonc_append_line(b, o);
}

int encode_subscribe_full(struct jbuf *b, const struct encode_subscribe *s) {
        _cleanup_(json_object_putp) json_object *o = line_new(EVMON_REQUEST_SUBSCRIBE);

        if (!o || (s->events && !add(o, "events", strings_new(s->events, s->n_events))) ||
            !add_targets(o, s->pids, s->n_pids, s->cgroups, s->n_cgroups) ||
            (s->comms && !add(o, "comms", strings_new(s->comms, s->n_comms))) ||
            (s->containers && !add(o, "containers", strings_new(s->containers, s->n_containers))) ||
            (s->namespaces && !add(o, "namespaces", strings_new(s->namespaces, s->n_namespaces))) ||
            (s->self && !add(o, "self", json_object_new_boolean(true))) ||
            (s->client && !add(o, "client", json_object_new_string(s->client))) ||
            (s->filter && !add(o, "filter", json_object_new_string(s->filter))))
                return -ENOMEM;
        return jsonc_append_line(b, o);
}

int encode_add_entry(const char *name, char *buf, size_t size) {
        static const char *const perf_kinds[] = { "software", "hardware", "cache", "pmu" };
        static const char *const probe_kinds[] = { "kprobe", "kretprobe", "uprobe", "uretprobe", "raw", "breakpoint" };
        const char *colon = strchr(name, ':');
        size_t n = strlen(name), sys;
        int k;

        if (!colon || colon == name || !colon[1] || n > 256 ||
            strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:/-") != n)
                return -EINVAL;
        sys = (size_t) (colon - name);
        for (size_t i = 0; i < sizeof(probe_kinds) / sizeof(probe_kinds[0]); i++)
                if (strlen(probe_kinds[i]) == sys && strncmp(name, probe_kinds[i], sys) == 0)
                        return -EINVAL;
        for (size_t i = 0; i < sizeof(perf_kinds) / sizeof(perf_kinds[0]); i++)
                if (strlen(perf_kinds[i]) == sys && strncmp(name, perf_kinds[i], sys) == 0) {
                        k = snprintf(buf, size, "{\"%s\":\"%s\"}", perf_kinds[i], colon + 1);
                        return k < 0 || (size_t) k >= size ? -ENOBUFS : 0;
                }
        /* A tracepoint is SYSTEM:NAME, and only that. */
        if (strchr(colon + 1, ':') || strchr(name, '/'))
                return -EINVAL;
        k = snprintf(buf, size, "{\"tracepoint\":\"%s\"}", name);
        return k < 0 || (size_t) k >= size ? -ENOBUFS : 0;
}

int encode_subscribe(struct jbuf *b, const char *const *events, size_t n_events) {
        return encode_subscribe_targets(b, events, n_events, NULL, 0, NULL, 0);
}

int encode_forwarder(struct jbuf *b, const char *event, uint64_t realtime_ns, const char *socket,
                     const char *detail, uint64_t dropped_total) {
        _cleanup_(json_object_putp) json_object *o = line_new(EVMON_LINE_FORWARDER);

        if (!o || !add(o, "event", json_object_new_string(event)) ||
            !add(o, "time", time_new(realtime_ns)) ||
            !add(o, "socket", json_object_new_string(socket)) ||
            (detail && !add(o, "detail", json_object_new_string(detail))) ||
            !add(o, "dropped_total", json_object_new_uint64(dropped_total)))
                return -ENOMEM;
        return jsonc_append_line(b, o);
}

int encode_forwarder_dropped(struct jbuf *b, uint64_t count) {
        _cleanup_(json_object_putp) json_object *o = line_new(EVMON_LINE_DROPPED);

        if (!o || !add(o, "count", json_object_new_uint64(count)) ||
            !add(o, "source", json_object_new_string(EVMON_SOURCE_FORWARDER)))
                return -ENOMEM;
        return jsonc_append_line(b, o);
}
