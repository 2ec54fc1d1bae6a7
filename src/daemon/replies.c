/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The daemon's answers to what clients ask through the server: the event
 * names, status and reload. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "daemon.h"
#include "replies.h"
#include "follow.h"
#include "hotplug.h"
#include "evmon/async.h"
#include "evmon/log.h"

void daemon_status_text(struct daemon *d, char *buf, size_t size) {
        snprintf(buf, size, "Serving %zu events to %zu clients; %" PRIu64 " lost in the kernel, %" PRIu64 " dropped for slow clients",
                 d->n_events, server_n_clients(d->server), d->lost_total, server_dropped_total(d->server));
}

const char **daemon_event_names(struct daemon *d) {
        const char **names = calloc(d->n_events ?: 1, sizeof(char *));

        for (size_t i = 0; names && i < d->n_events; i++)
                names[i] = d->events[i]->wire_name;
        return names;
}

static size_t ops_n_events(void *userdata) {
        struct daemon *d = userdata;
        return d->n_events;
}

static const char *ops_event_name(void *userdata, size_t i) {
        struct daemon *d = userdata;
        return d->events[i]->wire_name;
}

/* The process table's and the symbols' part of the status line. */
static void status_context(struct daemon *d, struct encode_status_context *ret) {
        struct ctx_stats cs;

        context_stats(d->ctx.table, &cs);
        *ret = (struct encode_status_context) {
                .procs = cs.procs, .retired = cs.retired, .cgroups = cs.cgroups,
                .strings = cs.strings, .string_bytes = cs.string_bytes,
                .hits = cs.hits, .misses = cs.misses, .full = cs.full, .bound_bytes = cs.bound_bytes,
        };
        if (d->ctx.symbols) {
                struct ctx_symbols_stats ss;

                ctx_symbols_stats(d->ctx.symbols, &ss);
                ret->symbols = true;
                ret->sym_modules = ss.modules;
                ret->sym_procs = ss.procs;
                ret->sym_named = ss.named;
                ret->sym_unnamed = ss.unnamed;
                ret->sym_cache_bytes = ss.cache_bytes;
                ret->sym_helper_starts = ss.helper_starts;
                ret->sym_helper_timeouts = ss.helper_timeouts;
                ret->sym_helper_crashes = ss.helper_crashes;
                ret->sym_refused = ss.refused;
        }
}

static int ops_status(void *userdata, struct jbuf *line) {
        struct daemon *d = userdata;
        size_t n_rings = monitor_n_rings(d->monitor);
        _cleanup_(freep) struct encode_status_event *events = NULL;
        _cleanup_(freep) struct encode_status_cpu *cpus = NULL;
        _cleanup_(freep) struct encode_status_client *clients = NULL;
        struct encode_status_context ctx;
        size_t closing_jobs, closing_fds;
        struct encode_status st = {
                .config = d->config->path,
                .probe_group = d->probe_group,
                .uptime_s = (now_ns(CLOCK_MONOTONIC) / 1000 - d->start_usec) / 1e6,
                /* What the rings run with now (pages stay as they were at start until a restart). */
                .ring_pages = d->config->ring_pages,
                .flush_ms = d->config->flush_ms,
                .busy_flush_ms = d->config->busy_flush_ms,
                .idle_flush_ms = d->config->idle_flush_ms,
                .doorbell = d->config->doorbell,
                .doorbell_rings = reader_n_doorbells(d->reader),
                .ticks = reader_n_ticks(d->reader),
                .swept = reader_n_swept(d->reader),
                .flushed = reader_n_flushes(d->reader),
                .order_time = d->config->order_time,
                .order_hold_us = (unsigned) daemon_reader_opts(d).hold_usec,
                .order_releases = reader_n_releases(d->reader),
                .n_events = d->n_events,
        };
        int r;

        async_stats(&closing_jobs, &closing_fds);
        st.closing_jobs = closing_jobs;
        st.closing_fds = closing_fds;
        if (monitor_order_stats(d->monitor)) {
                st.order_late = monitor_order_stats(d->monitor)->late;
                st.order_in_flight_max_ns = monitor_order_stats(d->monitor)->in_flight_max_ns;
        }
        events = calloc(d->n_events ?: 1, sizeof(*events));
        cpus = calloc(n_rings ?: 1, sizeof(*cpus));
        if (!events || !cpus)
                return -ENOMEM;
        for (size_t i = 0; i < d->n_events; i++)
                events[i] = (struct encode_status_event) {
                        .event = d->events[i]->wire_name,
                        .count = d->events[i]->count,
                        .undecodable = d->events[i]->bad,
                        .runtime = d->events[i]->runtime,
                        .disabled = d->events[i]->disabled,
                        .files = follow_n_attached(d->events[i]->follow),
                        .missing = follow_missing(d->events[i]->follow),
                };
        /* The present CPUs: a host's room for hot-added ones is no news. */
        for (size_t i = 0; i < n_rings; i++)
                if (hotplug_cpu_listed(d, i))
                        cpus[st.n_cpus++] = (struct encode_status_cpu) {
                                .cpu = monitor_ring_cpu(d->monitor, i),
                                .lost = monitor_ring_lost(d->monitor, i),
                                .malformed = monitor_ring_bad(d->monitor, i),
                                .offline = !monitor_ring_up(d->monitor, i),
                                .gaps = hotplug_cpu_gaps(d, i),
                        };
        if (d->ctx.table) {
                status_context(d, &ctx);
                st.context = &ctx;
        }
        r = server_clients_status(d->server, &clients, &st.n_clients);
        if (r < 0)
                return r;
        st.events = events;
        st.cpus = cpus;
        st.clients = clients;
        return encode_status(line, &st);
}


static int ops_reload(void *userdata, const struct ucred *cred, struct jbuf *line) {
        struct daemon *d = userdata;
        _cleanup_(freep) char *error = NULL;
        _cleanup_(freep) const char **names = NULL;
        int r;

        log_info("Reload of %s asked by uid %u (pid %d)", d->config->path, (unsigned) cred->uid, (int) cred->pid);
        r = daemon_reload_notify(d, &error);
        names = daemon_event_names(d);
        if (!names)
                return -ENOMEM;
        return encode_reload(line, r >= 0, error, names, d->n_events);
}

static int ops_control(void *userdata, const struct request *req, const struct peer *peer, struct jbuf *line,
                       char **ret_error) {
        return daemon_control(userdata, req, peer, line, ret_error);
}

const struct server_ops daemon_server_ops = {
        .n_events = ops_n_events,
        .event_name = ops_event_name,
        .status = ops_status,
        .reload = ops_reload,
        .control = ops_control,
};
