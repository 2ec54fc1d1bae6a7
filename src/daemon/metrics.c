/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "metrics.h"
#include "evmon/cleanup.h"

/* Label values escape backslash, double quote and line feed; nothing
 * else (https://prometheus.io/docs/instrumenting/exposition_formats/). */
static void put_label_value(FILE *f, const char *s) {
        fputc('"', f);
        for (; s && *s; s++) {
                if (*s == '\\')
                        fputs("\\\\", f);
                else if (*s == '"')
                        fputs("\\\"", f);
                else if (*s == '\n')
                        fputs("\\n", f);
                else
                        fputc(*s, f);
        }
        fputc('"', f);
}

static void put_family(FILE *f, const char *name, const char *type, const char *help) {
        fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Per event: what it received, what did not decode, whether it is on. */
static void put_events(FILE *f, const struct metrics *m) {
        put_family(f, "evmon_events_total", "counter", "Samples received, per event.");
        for (size_t i = 0; i < m->n_events; i++) {
                fputs("evmon_events_total{event=", f);
                put_label_value(f, m->events[i].name);
                fprintf(f, "} %" PRIu64 "\n", m->events[i].count);
        }
        put_family(f, "evmon_undecodable_total", "counter", "Samples that did not decode, per event.");
        for (size_t i = 0; i < m->n_events; i++) {
                fputs("evmon_undecodable_total{event=", f);
                put_label_value(f, m->events[i].name);
                fprintf(f, "} %" PRIu64 "\n", m->events[i].undecodable);
        }
        put_family(f, "evmon_event_enabled", "gauge",
                   "1 for an event served with its perf fds enabled, 0 for one open but disabled.");
        for (size_t i = 0; i < m->n_events; i++) {
                fputs("evmon_event_enabled{event=", f);
                put_label_value(f, m->events[i].name);
                fputs(",kind=", f);
                put_label_value(f, m->events[i].kind);
                fprintf(f, "} %d\n", m->events[i].enabled ? 1 : 0);
        }
}

/* Per uprobe that follows its binary (symbol_missing >= 0). */
static void put_follow(FILE *f, const struct metrics *m) {
        put_family(f, "evmon_probe_symbol_missing", "gauge",
                   "1 while the file at a followed uprobe's path (replaced since) lacks its symbol, else 0.");
        for (size_t i = 0; i < m->n_events; i++) {
                if (m->events[i].symbol_missing < 0)
                        continue;
                fputs("evmon_probe_symbol_missing{event=", f);
                put_label_value(f, m->events[i].name);
                fprintf(f, "} %d\n", m->events[i].symbol_missing > 0 ? 1 : 0);
        }
        put_family(f, "evmon_probe_follow_refused_total", "counter",
                   "Files found at a followed uprobe's path and not probed: not a regular file (a link, a FIFO), "
                   "owned by neither root nor the configured file's owner, or past the limit of files probed.");
        for (size_t i = 0; i < m->n_events; i++) {
                if (m->events[i].symbol_missing < 0)
                        continue;
                fputs("evmon_probe_follow_refused_total{event=", f);
                put_label_value(f, m->events[i].name);
                fprintf(f, "} %" PRIu64 "\n", m->events[i].follow_refused);
        }
        put_family(f, "evmon_probe_follow_detached_total", "counter",
                   "Files a followed uprobe was taken out of because more than 16 were probed at once.");
        for (size_t i = 0; i < m->n_events; i++) {
                if (m->events[i].symbol_missing < 0)
                        continue;
                fputs("evmon_probe_follow_detached_total{event=", f);
                put_label_value(f, m->events[i].name);
                fprintf(f, "} %" PRIu64 "\n", m->events[i].follow_detached);
        }
}

/* Per CPU: its ring's losses and rejects, offline, gaps. */
static void put_cpus(FILE *f, const struct metrics *m) {
        put_family(f, "evmon_lost_total", "counter", "Records the kernel could not write to the CPU's ring.");
        for (size_t i = 0; i < m->n_cpus; i++)
                fprintf(f, "evmon_lost_total{cpu=\"%d\"} %" PRIu64 "\n", m->cpus[i].cpu, m->cpus[i].lost);
        put_family(f, "evmon_malformed_records_total", "counter", "Records of the CPU's ring rejected as malformed.");
        for (size_t i = 0; i < m->n_cpus; i++)
                fprintf(f, "evmon_malformed_records_total{cpu=\"%d\"} %" PRIu64 "\n", m->cpus[i].cpu, m->cpus[i].malformed);
        put_family(f, "evmon_cpu_offline", "gauge", "1 while the CPU is offline and its events are closed.");
        for (size_t i = 0; i < m->n_cpus; i++)
                fprintf(f, "evmon_cpu_offline{cpu=\"%d\"} %d\n", m->cpus[i].cpu, m->cpus[i].offline ? 1 : 0);
        put_family(f, "evmon_cpu_gaps_total", "counter",
                   "Times the CPU's events were opened again after it was offline (gap lines).");
        for (size_t i = 0; i < m->n_cpus; i++)
                fprintf(f, "evmon_cpu_gaps_total{cpu=\"%d\"} %" PRIu64 "\n", m->cpus[i].cpu, m->cpus[i].gaps);
}

static void put_client_labels(FILE *f, const char *metric, const struct metrics_client *c) {
        fprintf(f, "%s{client=", metric);
        put_label_value(f, c->name);
        fprintf(f, ",uid=\"%u\"}", (unsigned) c->uid);
}

/* The clients connected, and per uid and client name how many are and
 * what was dropped for them. */
static void put_clients(FILE *f, const struct metrics *m) {
        put_family(f, "evmon_clients", "gauge", "Clients connected.");
        fprintf(f, "evmon_clients %zu\n", m->n_clients);
        put_family(f, "evmon_client_connections", "gauge",
                   "Clients connected, per uid and client name (subscribe's \"client\", else uid-N).");
        for (size_t i = 0; i < m->n_client_series; i++) {
                put_client_labels(f, "evmon_client_connections", &m->client_series[i]);
                fprintf(f, " %u\n", m->client_series[i].connected);
        }
        put_family(f, "evmon_client_dropped_total", "counter",
                   "Lines dropped for clients that fell behind, per uid and client name, gone ones too.");
        for (size_t i = 0; i < m->n_client_series; i++) {
                put_client_labels(f, "evmon_client_dropped_total", &m->client_series[i]);
                fprintf(f, " %" PRIu64 "\n", m->client_series[i].dropped);
        }
}

/* Counting events' values: what their counter lines say, for a scraper.
 * Typed gauge, as their names carry no _total (issue 30 names them so):
 * each only grows while the event is served (a reload or filter change
 * goes on from it), and PromQL's rate() takes them all the same. */
static void put_counters(FILE *f, const struct metrics *m) {
        bool any = false;
        static const struct {
                const char *name, *type, *help;
        } families[] = {
                { "evmon_counter_value", "gauge",
                  "A counting event's value at its last counter line, as the kernel counted it (not scaled)." },
                { "evmon_counter_scaled", "gauge",
                  "The same value scaled by enabled/running time (perf stat's estimate when multiplexed)." },
                { "evmon_counter_enabled_seconds", "gauge", "Time the counting event was enabled." },
                { "evmon_counter_running_seconds", "gauge",
                  "Time it ran on a PMU (less than enabled when multiplexed)." },
        };

        for (size_t i = 0; i < m->n_events && !any; i++)
                any = m->events[i].counting;
        for (size_t k = 0; any && k < sizeof(families) / sizeof(families[0]); k++) {
                put_family(f, families[k].name, families[k].type, families[k].help);
                for (size_t i = 0; i < m->n_events; i++) {
                        const struct metrics_event *e = &m->events[i];

                        if (!e->counting)
                                continue;
                        fprintf(f, "%s{event=", families[k].name);
                        put_label_value(f, e->name);
                        if (k == 0)
                                fprintf(f, "} %" PRIu64 "\n", e->counter_value);
                        else if (k == 1)
                                fprintf(f, "} %" PRIu64 "\n", e->counter_scaled);
                        else {
                                uint64_t ns = k == 2 ? e->counter_enabled_ns : e->counter_running_ns;

                                fprintf(f, "} %" PRIu64 ".%09" PRIu64 "\n", ns / 1000000000, ns % 1000000000);
                        }
                }
        }
}

/* Daemon-wide counters; the process table and order only where they exist. */
static void put_totals(FILE *f, const struct metrics *m) {
        put_family(f, "evmon_dropped_total", "counter", "Lines dropped for slow clients, all clients since start.");
        fprintf(f, "evmon_dropped_total %" PRIu64 "\n", m->dropped_total);
        put_family(f, "evmon_reloads_total", "counter", "Config reloads applied.");
        fprintf(f, "evmon_reloads_total %" PRIu64 "\n", m->reloads);
        put_family(f, "evmon_reload_failures_total", "counter", "Config reloads refused (the running config stayed).");
        fprintf(f, "evmon_reload_failures_total %" PRIu64 "\n", m->reload_failures);
        if (m->process_table >= 0) {
                put_family(f, "evmon_process_table_entries", "gauge", "Processes in evmond's process table.");
                fprintf(f, "evmon_process_table_entries %" PRId64 "\n", m->process_table);
        }
        if (m->order_late >= 0) {
                put_family(f, "evmon_order_late_total", "counter",
                           "Lines handed out after one with a later ts (time order: written by the kernel later than the hold).");
                fprintf(f, "evmon_order_late_total %" PRId64 "\n", m->order_late);
        }
        put_family(f, "evmon_closing_fds", "gauge",
                   "Perf fds of removed events that the worker thread has yet to close.");
        fprintf(f, "evmon_closing_fds %" PRIu64 "\n", m->closing_fds);
}

/* The containers whose runtime state evmond keeps (issue 31). */
static void put_containers(FILE *f, const struct metrics *m) {
        put_family(f, "evmon_containers", "gauge",
                   "Containers evmond keeps the runtime's state of, by whether that state names them (verified).");
        fprintf(f, "evmon_containers{verified=\"true\"} %" PRIu64 "\n", m->ctr_verified);
        fprintf(f, "evmon_containers{verified=\"false\"} %" PRIu64 "\n", m->ctr_unverified);
        put_family(f, "evmon_container_state_refused_total", "counter",
                   "Runtime state files refused: not a regular file of root's, too large, or a link on the way.");
        fprintf(f, "evmon_container_state_refused_total %" PRIu64 "\n", m->ctr_refused);
}

/* The symbolizer, when symbols are in use. */
static void put_symbols(FILE *f, const struct metrics *m) {
        put_family(f, "evmon_symbols_modules", "gauge", "ELF files whose symbol tables evmond keeps.");
        fprintf(f, "evmon_symbols_modules %" PRIu64 "\n", m->sym_modules);
        put_family(f, "evmon_symbols_cache_bytes", "gauge", "Bytes those symbol tables hold.");
        fprintf(f, "evmon_symbols_cache_bytes %" PRIu64 "\n", m->sym_cache_bytes);
        put_family(f, "evmon_symbolizer_starts_total", "counter",
                   "Times evmond started its sandboxed symbolizer (evmon-symbolizer).");
        fprintf(f, "evmon_symbolizer_starts_total %" PRIu64 "\n", m->sym_helper_starts);
        put_family(f, "evmon_symbolizer_timeouts_total", "counter",
                   "Times the symbolizer was killed for answering late (its file's frames lost their names).");
        fprintf(f, "evmon_symbolizer_timeouts_total %" PRIu64 "\n", m->sym_helper_timeouts);
        put_family(f, "evmon_symbolizer_failures_total", "counter",
                   "Times the symbolizer died or answered nonsense (its file's frames lost their names).");
        fprintf(f, "evmon_symbolizer_failures_total %" PRIu64 "\n", m->sym_helper_crashes);
}

int metrics_format(const struct metrics *m, char **ret, size_t *ret_size) {
        char *text = NULL;
        size_t size = 0;
        FILE *f;

        f = open_memstream(&text, &size);
        if (!f)
                return -ENOMEM;

        put_events(f, m);
        put_counters(f, m);
        put_follow(f, m);
        put_cpus(f, m);
        put_clients(f, m);
        put_totals(f, m);
        if (m->containers)
                put_containers(f, m);
        if (m->symbols)
                put_symbols(f, m);
        put_family(f, "evmon_start_time_seconds", "gauge", "When evmond started, in seconds since 1970.");
        fprintf(f, "evmon_start_time_seconds %" PRIu64 ".%06" PRIu64 "\n",
                m->start_time_usec / 1000000, m->start_time_usec % 1000000);

        if (fclose(f) != 0 || !text) {
                free(text);
                return -ENOMEM;
        }
        *ret = text;
        *ret_size = size;
        return 0;
}

int metrics_write_file(const char *path, const char *text, size_t size) {
        _cleanup_(freep) char *tmp = NULL;
        _cleanup_(closep) int fd = -1;
        size_t done = 0;

        if (asprintf(&tmp, "%s.XXXXXX", path) < 0)
                return -ENOMEM;
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return -errno;
        while (done < size) {
                ssize_t k = write(fd, text + done, size - done);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        goto fail;
                }
                done += (size_t) k;
        }
        if (fchmod(fd, 0644) < 0)
                goto fail;
        if (rename(tmp, path) < 0)
                goto fail;
        return 0;
fail:;
        int r = -errno;
        (void) unlink(tmp);
        return r;
}
