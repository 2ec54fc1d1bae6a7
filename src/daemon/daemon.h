/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>
#include <time.h>

/* The daemon, the way systemd splits a service: daemon.c the manager (the
 * loop, start and stop), emit.c the per-record handlers of the hot path,
 * replies.c what clients ask, stats.c the one snapshot that status and
 * the metrics file read, events.c and probes.c the events' and probes'
 * lifecycle, reload.c the config applied again. The parts that keep
 * state own it in a struct of their own, as annotate.c does: targets.c
 * (the cgroups and pids), hotplug.c, stats.c (the metrics file). */

#include "annotate.h"
#include "config.h"
#include "events.h"
#include "evmon/clock.h"
#include "evmon/encode.h"
#include "reader.h"
#include "request.h"
#include "server.h"
#include "stats.h"
#include "targets.h"
#include "evmon/monitor.h"
#include "evmon/probe.h"
#include "evmon/tracefs.h"

struct daemon_args {
        const char *config_path;      /* NULL: the default file or the built-in config */
        const char *socket_path;      /* overrides socket.path */
        const char *tracefs_dir;      /* overrides finding tracefs */
};

/* Our probes in tracefs, probes.c's: made by daemon_probe_setup(),
 * freed by daemon_probes_done(). */
struct daemon_probes {
        struct format *reference;     /* any tracefs format: the common header of PMU probes */
        char *group;                  /* our tracefs group */
        char *record;                 /* the record of our probe groups, beside the socket */
        bool cleaned;                 /* stale probes of an earlier instance are gone */
};

/* SOCKET.lock, held (fd) while we serve; path NULL when not held. */
struct daemon_lock {
        char *path;
        int fd;
};

/* What the reader threads' scan() reads and counts during a scan
 * (emit.c): a snapshot of the events some client wants, taken on the
 * loop's thread before the scan, and each worker's counts, added to the
 * events after it. */
enum daemon_scan_mode {
        SCAN_KEEP,                    /* a client wants it: the merge's */
        SCAN_COUNT,                   /* no client wants it: counted */
        SCAN_DROP,                    /* only clients that drop every line of it now: counted, and
                                       * a drop for each of them (server_event_only_dropping()) */
        SCAN_LINE,                    /* its line encoded on the thread but the context, which
                                       * the merge splices in; matched and queued there (emit.c) */
};

/* A reader thread's own: the line it encodes. A cache line each, so
 * that threads do not share one. */
struct daemon_scan_worker {
        struct jbuf line;
} __attribute__((aligned(64)));

struct daemon_scan {
        uint8_t *mode;                /* enum daemon_scan_mode, by event index */
        size_t n;                     /* events in the snapshot */
        uint64_t *counts;             /* per worker a row of counts and one of drops, by event index */
        size_t stride, cap;           /* a row's length (whole cache lines), the counts' room */
        unsigned n_workers;
        bool check_self;              /* evmond's own samples are no client's line (config self false) */
        struct daemon_scan_worker *workers;     /* cap_workers, of which this scan's n_workers */
        unsigned cap_workers;
        uint64_t self_gen;            /* server_self_gen() at the scan */
        bool merge_parses;            /* the merge parses SCAN_LINE samples too (for the context) */
        uint64_t n_lines;             /* lines the threads encoded that the merge queued (status) */
};

struct daemon {
        struct daemon_args args;
        sd_event *event;
        struct config *config;
        struct tracefs *tracefs;
        struct monitor *monitor;
        struct daemon_event **events;
        size_t n_events;
        struct reader *reader;        /* when the rings are read */
        sd_event_source *tick_timer, *counter_timer;
        struct server *server;
        struct jbuf line;
        int64_t realtime_offset;      /* realtime - event clock, ns */
        uint64_t start_usec;
        uint64_t start_realtime_ns;   /* for the hello line and the metrics */
        uint64_t lost_total;
        struct daemon_probes probes;  /* our tracefs probes (probes.c) */
        struct daemon_lock lock;      /* SOCKET.lock (daemon.c) */
        bool check_only;              /* --check-config: touch nothing a running daemon owns */
        uint64_t reloads, reload_failures;
        struct metrics_file metrics;  /* metrics.path, written from the tick (stats.c) */
        struct targets targets;       /* the cgroups and pids watched (targets.c) */
        struct daemon_context ctx;    /* process and container context (annotate.c) */
        struct hotplug *hotplug;      /* CPUs going and coming (hotplug.c) */
        struct daemon_scan scan;      /* the reader threads' (emit.c) */
};

/* Loads the config and builds every event's decoder without opening a perf
 * fd: what --check-config runs. On a config error returns -EINVAL and sets
 * *ret_error to a message naming the file, line and key. */
int daemon_prepare(struct daemon *d, char **ret_error);
/* Opens every event on every CPU without enabling it, so the kernel judges
 * probes and filters, then closes them again: the rest of --check-config. */
int daemon_check_open(struct daemon *d, char **ret_error);
/* Opens the events, the rings and the socket, and tells systemd READY=1. */
int daemon_start(struct daemon *d);
/* Reads the config again and applies the difference: new events are open
 * before those gone are closed; events in both keep their fds. On failure
 * the running config stays, and *ret_error says why. */
int daemon_reload(struct daemon *d, char **ret_error);
int daemon_run(struct daemon *d);
/* --cleanup: removes the probes a killed evmond of this config (or
 * --socket) left in tracefs, and its metrics file (metrics.path), as its
 * unit's ExecStopPost= does; -EBUSY, naming it, while that evmond still
 * runs. *ret_removed counts the probes, *ret_metrics_removed the files. */
int daemon_cleanup(struct daemon *d, unsigned *ret_removed, unsigned *ret_metrics_removed, char **ret_error);
void daemon_done(struct daemon *d);

/* Shared by the daemon's files. */

/* Loads the config file (d->args.config_path) into *RET, with --socket
 * applied. */
int daemon_config_load(struct daemon *d, struct config **ret, char **ret_error);
/* The ring reader's periods from the config. */
struct reader_opts daemon_reader_opts(const struct daemon *d);
/* Logs once when the reader threads RO asked for could not start (the
 * loop then reads the rings alone). */
void daemon_reader_threads_check(struct daemon *d, const struct reader_opts *ro);
bool daemon_has_counters(const struct daemon *d);
/* Applies NC (taken) as reload does: new events open before those gone
 * close, events in both keep their fds. FROM_FILE: a reload of the file,
 * which undoes run-time changes. WHAT starts the log line. */
int daemon_apply(struct daemon *d, struct config *nc, bool from_file, const char *what, char **ret_error);
/* Tells every client the events now served (a config line). */
void daemon_announce(struct daemon *d);
/* Runtime control (runtime.c): REQ (add, remove, enable, disable,
 * filter) from the admin PEER, applied; its result line in LINE. An add
 * from a PEER that is not root is held to socket.admin_add. Errors for
 * the client in *ret_error. */
int daemon_control(struct daemon *d, const struct request *req, const struct peer *peer, struct jbuf *line,
                   char **ret_error);
/* daemon_reload() with systemd told (RELOADING=1, then READY=1 and the
 * status) and a failure logged. */
int daemon_reload_notify(struct daemon *d, char **ret_error);
