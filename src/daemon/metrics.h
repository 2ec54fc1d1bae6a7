/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Where prometheus-node-exporter's textfile collector reads on Debian
 * (its --collector.textfile.directory in /etc/default/prometheus-node-exporter). */
#define METRICS_DEFAULT_PATH "/var/lib/prometheus/node-exporter/evmon.prom"
#define METRICS_DEFAULT_INTERVAL_MS 5000u

struct metrics_event {
        const char *name;             /* the wire name */
        const char *kind;             /* "tracepoint", "kprobe", ... */
        uint64_t count;               /* samples received */
        uint64_t undecodable;         /* samples that did not decode */
        bool enabled;                 /* its perf fds are enabled */
        int symbol_missing;           /* a uprobe that follows its binary: 1 while the file at its
                                       * path lacks the symbol, else 0; < 0: not such a probe */
        uint64_t follow_refused;      /* such a probe: files found at its path and refused */
        uint64_t follow_detached;     /* such a probe: files no longer probed, past the limit */
        /* A counting event ("count": true): its value at its last counter
         * line, the kernel's time enabled and running (ns: it was
         * multiplexed when running < enabled), and the value scaled by
         * enabled / running, as perf stat estimates it. */
        bool counting;
        uint64_t counter_value, counter_enabled_ns, counter_running_ns, counter_scaled;
};

struct metrics_cpu {
        int cpu;
        uint64_t lost;                /* records the kernel could not write */
        uint64_t malformed;           /* records evmond rejected */
        bool offline;                 /* its events are closed: the CPU is offline */
        uint64_t gaps;                /* gap lines sent for it */
};

/* One series per uid and client name (not per connection: a pid label
 * made a new series at each connection). */
struct metrics_client {
        const char *name;             /* subscribe's "client", sanitized, or "uid-N" */
        uid_t uid;
        unsigned connected;           /* its clients connected now */
        uint64_t dropped;             /* lines dropped because they fell behind, gone ones too */
};

/* One snapshot of evmond's counters; metrics_format() reads it only. */
struct metrics {
        const struct metrics_event *events;
        size_t n_events;
        const struct metrics_cpu *cpus;
        size_t n_cpus;
        size_t n_clients;             /* connected */
        const struct metrics_client *client_series;
        size_t n_client_series;
        uint64_t dropped_total;       /* all clients since start, gone ones too */
        uint64_t reloads, reload_failures;
        uint64_t start_time_usec;     /* CLOCK_REALTIME */
        int64_t process_table;        /* entries; < 0: there is no process table */
        int64_t order_late;           /* lines handed out after a later one; < 0: arrival order */
        uint64_t closing_fds;         /* removed events' fds the worker thread has yet to close */
        bool containers;              /* the runtimes' state is read (context on) */
        uint64_t ctr_known, ctr_verified, ctr_unverified, ctr_refused;
        bool symbols;                 /* the symbolizer below is in use */
        uint64_t sym_modules, sym_cache_bytes;
        uint64_t sym_helper_starts, sym_helper_timeouts, sym_helper_crashes;
};

/* Formats M in Prometheus' text exposition format (version 0.0.4): a
 * # HELP and # TYPE line per metric, label values escaped. Returns 0 and
 * the text in *ret (caller frees) with its length in *ret_size, or
 * -ENOMEM. */
int metrics_format(const struct metrics *m, char **ret, size_t *ret_size);

/* Replaces PATH with TEXT atomically: writes a temporary file beside it
 * (PATH.XXXXXX, which the textfile collector ignores: it reads *.prom),
 * makes it 0644 (node-exporter runs as its own user), and renames it over
 * PATH, so a reader sees the old file or the new one, never half of one.
 * 0 or -errno (-ENOENT: the directory does not exist). */
int metrics_write_file(const char *path, const char *text, size_t size);
