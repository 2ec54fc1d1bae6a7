/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "evmon/encode.h"

struct server_client_series;

struct daemon;

/* What the metrics file says of an event beyond what status says. */
struct daemon_stats_event {
        const char *kind;             /* "tracepoint", "kprobe", ... */
        bool enabled;                 /* open on every CPU and not disabled at run time */
        int symbol_missing;           /* a uprobe that follows its binary: 1 while the file at its
                                       * path lacks the symbol, else 0; < 0: not such a probe */
        uint64_t follow_refused, follow_detached;
        bool counting;                /* "count": true: the values of its last counter line */
        uint64_t counter_value, counter_enabled_ns, counter_running_ns, counter_scaled;
};

/* One snapshot of evmond's numbers, read from the daemon and its parts
 * once: status (replies.c) sends .status as it is, and the metrics file
 * (daemon_stats_metrics()) formats the same numbers, so the two cannot
 * drift apart. The strings stay the daemon's: use the snapshot before the
 * loop runs again. */
struct daemon_stats {
        struct encode_status status;           /* its arrays are the ones below */
        struct encode_status_context context;  /* status.context points here when there is a
                                                * process table; the symbols' part is filled
                                                * whenever symbols are in use */
        struct encode_status_event *events;    /* n: status.n_events */
        struct daemon_stats_event *events_more; /* beside events, for the metrics file */
        struct encode_status_cpu *cpus;        /* the present CPUs (n: status.n_cpus) */
        struct encode_status_client *clients;  /* n: status.n_clients */
        struct server_client_series *client_series;  /* the metrics' per-client series */
        size_t n_client_series;
        bool order_known;                      /* the monitor keeps time-order statistics */
        uint64_t dropped_total;                /* lines dropped for slow clients, gone ones too */
        uint64_t reloads, reload_failures;
        uint64_t start_realtime_usec;
};

/* Fills *RET (zeroed first) from D: 0 or -ENOMEM. daemon_stats_done()
 * frees its arrays either way. */
int daemon_stats_take(struct daemon *d, struct daemon_stats *ret);
void daemon_stats_done(struct daemon_stats *s);
/* S in Prometheus' text format (metrics_format()): 0 and the text in
 * *RET (caller frees), its length in *RET_SIZE, or -ENOMEM. */
int daemon_stats_metrics(const struct daemon_stats *s, char **ret, size_t *ret_size);

/* The metrics file (metrics.path) the daemon writes from the tick; its
 * state is stats.c's. */
struct metrics_file {
        char *written;                /* the file we write, removed on stop or when metrics.path changes */
        uint64_t next_usec;           /* CLOCK_MONOTONIC: the next metrics file is due */
        int error;                    /* the last write's -errno, 0 when it worked, 1 before the first:
                                       * each change is logged once */
};

/* Before the first metrics_file_tick(): its first outcome is logged. */
void metrics_file_init(struct metrics_file *mf);
/* Writes D's metrics to metrics.path when metrics.interval_ms has passed
 * by NOW_USEC (CLOCK_MONOTONIC); a reload that changed the path has the
 * old file removed. */
void metrics_file_tick(struct metrics_file *mf, struct daemon *d, uint64_t now_usec);
/* Removes the file written (an evmond that stopped has no counters to
 * serve) and frees the state. */
void metrics_file_done(struct metrics_file *mf);
/* A killed evmond's metrics file at PATH and the temporary files of a
 * write it was killed in, removed (--cleanup): how many went. */
unsigned metrics_file_remove_stale(const char *path);
