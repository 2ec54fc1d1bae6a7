/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* evmond's numbers about itself: one snapshot (struct daemon_stats) that
 * status and the metrics file both read, and the metrics file written
 * from it on the tick. */

#include <errno.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "emit.h"
#include "follow.h"
#include "hotplug.h"
#include "metrics.h"
#include "stats.h"
#include "evmon/async.h"
#include "evmon/cleanup.h"
#include "evmon/log.h"

static void stats_events(struct daemon *d, struct daemon_stats *s) {
        for (size_t i = 0; i < d->n_events; i++) {
                const struct daemon_event *ev = d->events[i];
                const char *missing = follow_missing(ev->follow);

                s->events[i] = (struct encode_status_event) {
                        .event = ev->wire_name,
                        .count = ev->count,
                        .undecodable = ev->bad,
                        .runtime = ev->runtime,
                        .disabled = ev->disabled,
                        .files = follow_n_attached(ev->follow),
                        .missing = missing,
                };
                s->events_more[i] = (struct daemon_stats_event) {
                        .kind = event_kind_to_string(ev->cfg->kind),
                        /* Open on every CPU and not disabled at run time
                         * ({"type":"disable"}, evmonctl disable). */
                        .enabled = ev->handle >= 0 && !ev->disabled,
                        .symbol_missing = ev->follow ? missing != NULL : -1,
                        .follow_refused = follow_n_refused(ev->follow),
                        .follow_detached = follow_n_detached(ev->follow),
                        .counting = ev->cfg->count,
                        .counter_value = ev->counter_last,
                        .counter_enabled_ns = ev->counter_last_enabled,
                        .counter_running_ns = ev->counter_last_running,
                        .counter_scaled = ev->counter_last_scaled,
                };
        }
        s->status.events = s->events;
        s->status.n_events = d->n_events;
}

static void stats_cpus(struct daemon *d, struct daemon_stats *s) {
        size_t n_rings = monitor_n_rings(d->monitor);

        /* The present CPUs: a host's room for hot-added ones is no news. */
        for (size_t i = 0; i < n_rings; i++)
                if (hotplug_cpu_listed(d, i))
                        s->cpus[s->status.n_cpus++] = (struct encode_status_cpu) {
                                .cpu = monitor_ring_cpu(d->monitor, i),
                                .lost = monitor_ring_lost(d->monitor, i),
                                .malformed = monitor_ring_bad(d->monitor, i),
                                .offline = !monitor_ring_up(d->monitor, i),
                                .gaps = hotplug_cpu_gaps(d, i),
                        };
        s->status.cpus = s->cpus;
}

/* The process table's part (status only when there is one) and the
 * symbols' (whenever symbols are in use: callchains without "context"). */
static void stats_context(struct daemon *d, struct daemon_stats *s) {
        struct encode_status_context *c = &s->context;

        if (d->ctx.table) {
                struct ctx_stats cs;

                context_stats(d->ctx.table, &cs);
                *c = (struct encode_status_context) {
                        .procs = cs.procs, .retired = cs.retired, .cgroups = cs.cgroups,
                        .strings = cs.strings, .string_bytes = cs.string_bytes,
                        .hits = cs.hits, .misses = cs.misses, .first_sight = cs.first_sight, .full = cs.full, .bound_bytes = cs.bound_bytes,
                };
                s->status.context = c;
        }
        if (d->ctx.table && d->ctx.runstate) {
                struct ctx_runstate_stats rs;

                ctx_runstate_stats(d->ctx.runstate, &rs);
                c->containers = true;
                c->ctr_known = rs.known;
                c->ctr_verified = rs.verified;
                c->ctr_unverified = rs.unverified;
                c->ctr_reads = rs.reads;
                c->ctr_refused = rs.refused;
                c->ctr_evicted = rs.evicted;
        }
        if (d->ctx.symbols) {
                struct ctx_symbols_stats ss;

                ctx_symbols_stats(d->ctx.symbols, &ss);
                c->symbols = true;
                c->sym_modules = ss.modules;
                c->sym_procs = ss.procs;
                c->sym_named = ss.named;
                c->sym_unnamed = ss.unnamed;
                c->sym_cache_bytes = ss.cache_bytes;
                c->sym_helper_starts = ss.helper_starts;
                c->sym_helper_timeouts = ss.helper_timeouts;
                c->sym_helper_crashes = ss.helper_crashes;
                c->sym_refused = ss.refused;
                c->sym_unwound = ss.unwound;
                c->sym_unwind_skipped = ss.unwind_skipped;
        }
}

int daemon_stats_take(struct daemon *d, struct daemon_stats *ret) {
        const struct monitor_order_stats *os = monitor_order_stats(d->monitor);
        size_t n_rings = monitor_n_rings(d->monitor), closing_jobs, closing_fds;
        struct daemon_stats *s = ret;
        int r;

        *s = (struct daemon_stats) {
                .status = {
                        .config = d->config->path,
                        .probe_group = d->probes.group,
                        .uptime_s = (now_ns(CLOCK_MONOTONIC) / 1000 - d->start_usec) / 1e6,
                        /* What the rings run with now (pages stay as they
                         * were at start until a restart). */
                        .ring_pages = d->config->ring_pages,
                        .flush_ms = d->config->flush_ms,
                        .busy_flush_ms = d->config->busy_flush_ms,
                        .idle_flush_ms = d->config->idle_flush_ms,
                        .doorbell = d->config->doorbell,
                        .doorbell_rings = reader_n_doorbells(d->reader),
                        .doorbell_rests = monitor_ring_rests(d->monitor),
                        .early_bells = reader_n_early(d->reader),
                        .ticks = reader_n_ticks(d->reader),
                        .swept = reader_n_swept(d->reader),
                        .flushed = reader_n_flushes(d->reader),
                        .ring_threads = reader_n_threads(d->reader),
                        .scans = reader_n_scans(d->reader),
                        .scanned = reader_n_scanned(d->reader),
                        .encoded = daemon_emit_scan_lines(d),
                        .order_time = d->config->order_time,
                        .order_hold_us = (unsigned) daemon_reader_opts(d).hold_usec,
                        .order_releases = reader_n_releases(d->reader),
                        .order_late = os ? os->late : 0,
                        .order_in_flight_max_ns = os ? os->in_flight_max_ns : 0,
                },
                .order_known = os != NULL,
                .dropped_total = server_dropped_total(d->server),
                .reloads = d->reloads,
                .reload_failures = d->reload_failures,
                .start_realtime_usec = d->start_realtime_ns / 1000,
        };
        async_stats(&closing_jobs, &closing_fds);
        s->status.closing_jobs = closing_jobs;
        s->status.closing_fds = closing_fds;
        s->events = calloc(d->n_events ?: 1, sizeof(*s->events));
        s->events_more = calloc(d->n_events ?: 1, sizeof(*s->events_more));
        s->cpus = calloc(n_rings ?: 1, sizeof(*s->cpus));
        if (!s->events || !s->events_more || !s->cpus)
                return -ENOMEM;
        stats_events(d, s);
        stats_cpus(d, s);
        stats_context(d, s);
        r = server_clients_status(d->server, &s->clients, &s->status.n_clients);
        if (r < 0)
                return r;
        s->status.clients = s->clients;
        return server_client_series(d->server, &s->client_series, &s->n_client_series);
}

void daemon_stats_done(struct daemon_stats *s) {
        free(s->events);
        free(s->events_more);
        free(s->cpus);
        free(s->clients);
        free(s->client_series);
        *s = (struct daemon_stats) {};
}

int daemon_stats_metrics(const struct daemon_stats *s, char **ret, size_t *ret_size) {
        const struct encode_status *st = &s->status;
        size_t n_events = st->n_events, n_cpus = st->n_cpus, n_clients = s->n_client_series;
        _cleanup_(freep) struct metrics_event *events = calloc(n_events ?: 1, sizeof(*events));
        _cleanup_(freep) struct metrics_cpu *cpus = calloc(n_cpus ?: 1, sizeof(*cpus));
        _cleanup_(freep) struct metrics_client *clients = calloc(n_clients ?: 1, sizeof(*clients));

        if (!events || !cpus || !clients)
                return -ENOMEM;
        for (size_t i = 0; i < n_events; i++)
                events[i] = (struct metrics_event) {
                        .name = st->events[i].event,
                        .kind = s->events_more[i].kind,
                        .count = st->events[i].count,
                        .undecodable = st->events[i].undecodable,
                        .enabled = s->events_more[i].enabled,
                        .symbol_missing = s->events_more[i].symbol_missing,
                        .follow_refused = s->events_more[i].follow_refused,
                        .follow_detached = s->events_more[i].follow_detached,
                        .counting = s->events_more[i].counting,
                        .counter_value = s->events_more[i].counter_value,
                        .counter_enabled_ns = s->events_more[i].counter_enabled_ns,
                        .counter_running_ns = s->events_more[i].counter_running_ns,
                        .counter_scaled = s->events_more[i].counter_scaled,
                };
        for (size_t i = 0; i < n_cpus; i++)
                cpus[i] = (struct metrics_cpu) {
                        .cpu = st->cpus[i].cpu,
                        .lost = st->cpus[i].lost,
                        .malformed = st->cpus[i].malformed,
                        .offline = st->cpus[i].offline,
                        .gaps = st->cpus[i].gaps,
                };
        for (size_t i = 0; i < n_clients; i++)
                clients[i] = (struct metrics_client) {
                        .name = s->client_series[i].name,
                        .uid = s->client_series[i].uid,
                        .connected = s->client_series[i].connected,
                        .dropped = s->client_series[i].dropped,
                };
        return metrics_format(&(struct metrics) {
                        .events = events,
                        .n_events = n_events,
                        .cpus = cpus,
                        .n_cpus = n_cpus,
                        .n_clients = st->n_clients,
                        .client_series = clients,
                        .n_client_series = n_clients,
                        .dropped_total = s->dropped_total,
                        .reloads = s->reloads,
                        .reload_failures = s->reload_failures,
                        .start_time_usec = s->start_realtime_usec,
                        /* "context": false keeps no table. */
                        .process_table = st->context ? (int64_t) st->context->procs : -1,
                        .order_late = st->order_time && s->order_known ? (int64_t) st->order_late : -1,
                        .closing_fds = st->closing_fds,
                        .containers = s->context.containers,
                        .ctr_known = s->context.ctr_known,
                        .ctr_verified = s->context.ctr_verified,
                        .ctr_unverified = s->context.ctr_unverified,
                        .ctr_refused = s->context.ctr_refused,
                        .symbols = s->context.symbols,
                        .sym_modules = s->context.sym_modules,
                        .sym_cache_bytes = s->context.sym_cache_bytes,
                        .sym_helper_starts = s->context.sym_helper_starts,
                        .sym_helper_timeouts = s->context.sym_helper_timeouts,
                        .sym_helper_crashes = s->context.sym_helper_crashes,
                }, ret, ret_size);
}

static int metrics_text(struct daemon *d, char **ret, size_t *ret_size) {
        struct daemon_stats s;
        int r;

        r = daemon_stats_take(d, &s);
        if (r >= 0)
                r = daemon_stats_metrics(&s, ret, ret_size);
        daemon_stats_done(&s);
        return r;
}

void metrics_file_init(struct metrics_file *mf) {
        mf->error = 1;  /* not tried yet: the first outcome is logged */
}

/* metrics.path every metrics.interval_ms, from the tick. A failure is
 * logged once, until writing works again: a host without
 * prometheus-node-exporter has no /var/lib/prometheus/node-exporter, and
 * that deserves one line, not one every few seconds. */
void metrics_file_tick(struct metrics_file *mf, struct daemon *d, uint64_t now_usec) {
        const char *path = d->config->metrics_path;
        _cleanup_(freep) char *text = NULL;
        size_t size;
        int r;

        if (mf->written && (!path || strcmp(path, mf->written) != 0)) {
                /* A reload changed metrics.path: the old file goes, and
                 * the new path's trouble, if any, is said afresh. */
                (void) unlink(mf->written);
                free(mf->written);
                mf->written = NULL;
                mf->error = 1;
        }
        if (!path || now_usec < mf->next_usec)
                return;
        mf->next_usec = now_usec + d->config->metrics_interval_ms * 1000ull;
        r = metrics_text(d, &text, &size);
        if (r >= 0)
                r = metrics_write_file(path, text, size);
        if (r == mf->error)
                return;
        if (r == -ENOENT)
                log_notice("Not writing metrics to %s: its directory does not exist (prometheus-node-exporter makes "
                           "/var/lib/prometheus/node-exporter; metrics.path names another file, \"\" turns metrics off)",
                           path);
        else if (r < 0)
                log_warning_errno(r, "Failed to write metrics to %s (metrics.path): %m", path);
        else
                log_info("Writing metrics to %s every %u ms", path, d->config->metrics_interval_ms);
        mf->error = r;
        if (r >= 0 && !mf->written)
                mf->written = strdup(path);
}

void metrics_file_done(struct metrics_file *mf) {
        /* Counters of an evmond that stopped are no one's: gone with it,
         * so the textfile collector stops serving them. */
        if (mf->written)
                (void) unlink(mf->written);
        free(mf->written);
        mf->written = NULL;
}

/* PATH as a glob(3) pattern that matches PATH alone, then SUFFIX as it
 * is: unescaped, a '*', '?', '[' or '\\' of PATH would match (and
 * --cleanup remove) other files. */
static char *glob_literal(const char *path, const char *suffix) {
        char *pattern = malloc(2 * strlen(path) + strlen(suffix) + 1), *q = pattern;

        if (!pattern)
                return NULL;
        for (const char *c = path; *c; c++) {
                if (strchr("*?[\\", *c))
                        *q++ = '\\';
                *q++ = *c;
        }
        strcpy(q, suffix);
        return pattern;
}

/* A killed evmond (SIGKILL, the stop timeout, a crash) leaves its metrics
 * file, and the textfile collector would serve its last counters for good,
 * flat, as if evmond were alive and idle; the temporary file of a write it
 * was killed in stays too. Returns how many files went. */
unsigned metrics_file_remove_stale(const char *path) {
        _cleanup_(freep) char *pattern = NULL;
        unsigned n = 0;
        glob_t g;

        if (!path || !*path)
                return 0;
        if (unlink(path) == 0)
                n++;
        /* metrics_write_file()'s mkostemp() names: PATH.XXXXXX. */
        pattern = glob_literal(path, ".??????");
        if (!pattern)
                return n;
        if (glob(pattern, GLOB_NOSORT, NULL, &g) == 0) {
                for (size_t i = 0; i < g.gl_pathc; i++)
                        if (unlink(g.gl_pathv[i]) == 0)
                                n++;
                globfree(&g);
        }
        return n;
}
