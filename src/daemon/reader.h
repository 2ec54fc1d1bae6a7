/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* When evmond reads its rings: at once when a doorbell rings (the first
 * record after a quiet spell), then on a short tick while records flow,
 * stretched while each tick finds many; nothing at all while idle. See
 * reader.c. */

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "evmon/monitor.h"

struct reader_opts {
        bool doorbell;          /* the monitor was opened with doorbells */
        uint64_t flush_usec;    /* the tick while records flow */
        uint64_t busy_usec;     /* the longest tick while each finds many records */
        uint64_t idle_usec;     /* without a doorbell (off, or refused for an event): the longest look */
        bool order;             /* "order": "time": every look reads all rings, merged by time */
        uint64_t hold_usec;     /* ... and holds what another CPU may still overtake this long */
        clockid_t clock;        /* the rings' clock */
        unsigned threads;       /* time order: threads that scan a busy look's rings (the loop's among them) */
};

struct reader;

/* Time order: a look that finds much in the rings first has them
 * scanned by the reader threads and the loop (monitor_scan(), with the
 * handler's scan()), between BEGIN and END on the loop's thread.
 * BEGIN(CTX, N_WORKERS) readies the scan() for that many workers and
 * says whether it may skip or note anything at all (false: no scan);
 * END(CTX) takes what they counted. */
struct reader_scan {
        bool (*begin)(void *ctx, unsigned n_workers);
        void (*end)(void *ctx);
};
void reader_set_scan(struct reader *r, const struct reader_scan *scan);
/* The threads that scan (1: the loop alone), the scans made, and the
 * records they skipped (evmonctl status). */
unsigned reader_n_threads(const struct reader *r);
uint64_t reader_n_scans(const struct reader *r);
uint64_t reader_n_scanned(const struct reader *r);

/* Watches every ring of M and its doorbells on E; records go to H with
 * CTX, and FLUSH(CTX) follows each batch (the sockets). M must outlive the
 * reader. */
int reader_new(sd_event *e, struct monitor *m, const struct monitor_handler *h, void *ctx,
               void (*flush)(void *ctx), const struct reader_opts *opts, struct reader **ret);
struct reader *reader_free(struct reader *r);

/* New periods (a reload), and a look soon (reader_kick()): events opened
 * since may lack a doorbell, and enabling them disarmed the doorbells. */
void reader_set_opts(struct reader *r, const struct reader_opts *opts);

/* A tick soon: after monitor_enable() (which disarms the doorbells) or
 * anything else that may have left records unannounced. */
void reader_kick(struct reader *r);

/* Ring I went down or came up (monitor_cpu_down()/monitor_cpu_up()): its
 * fds change. Watches the new ones (none for a ring that is down) and
 * kicks the tick, which arms a ring that came up. */
int reader_ring_changed(struct reader *r, size_t i);

/* Reads ring I to the end now (before monitor_cpu_down()). */
void reader_drain_ring(struct reader *r, size_t i);

/* Reads every ring once (within the budget, more follows from the loop);
 * true when any had records. In time order it hands out what it holds
 * too: before events close (a reload) and before lines made elsewhere
 * (counters), which would otherwise come before older events. */
bool reader_drain_all(struct reader *r);

/* The once-a-second look of the status tick, costing no wakeup of its
 * own: with every doorbell armed and no tick running, reads every ring
 * anyway. A record found then is one no doorbell announced; none should
 * be (seen: one record in 200,000 beside a live reload under load, when
 * enables still came from another CPU: see on_tick()), and this bounds
 * its wait to a second. Returns the records found. */
uint64_t reader_sweep(struct reader *r);
uint64_t reader_n_swept(const struct reader *r);

/* Doorbell rings and ticks so far (evmonctl status). */
uint64_t reader_n_doorbells(const struct reader *r);
uint64_t reader_n_ticks(const struct reader *r);
/* Flushes asked of rings found quiet after (nearly) filling up: see
 * monitor_ring_flush_lost(). */
uint64_t reader_n_flushes(const struct reader *r);
/* Doorbells whose look found their ring empty: the record came just after
 * (a second look took it). */
uint64_t reader_n_early(const struct reader *r);
/* Wakeups of the time order's release timer (records held, no tick due). */
uint64_t reader_n_releases(const struct reader *r);
