/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* When evmond reads its rings.
 *
 * The rings wake us by bytes (an eighth of a ring), which keeps full rate
 * cheap but says nothing about a lone record. Each ring has doorbells
 * (src/monitor/doorbell.c) that wake us at the first record after a quiet
 * spell. So:
 *
 *   idle      every doorbell armed, no timer: nothing wakes evmond.
 *   rung      a doorbell fd is readable: disarm that ring's doorbells (a
 *             flowing ring must not cost an interrupt per record), read
 *             the ring, and start the tick.
 *   ticking   every flush_usec (1 ms) read every ring. A ring that had
 *             nothing is armed again and then read once more: a record
 *             written between that look and the arm did not ring, and
 *             would otherwise wait for the next one. Once every ring is
 *             armed the tick stops.
 *   busy      while ticks find more than BUSY_RECORDS_PER_S, each tick
 *             comes twice as late, up to busy_usec: batches of hundreds of
 *             records per wakeup keep the CPU per record at full rate, at
 *             the price of up to busy_usec of latency at such rates.
 *
 * Without doorbells (ring.doorbell false, or an event the kernel would not
 * copy into one) the tick never stops: a tick that finds nothing comes
 * twice as late, up to idle_usec, as evmond did before doorbells. */

#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "reader.h"
#include "evmon/cleanup.h"

/* Records read from one ring per wakeup before the loop turns to the
 * sockets again: one busy CPU must not starve the clients. */
#define DRAIN_BUDGET 4096u

/* Above this rate ticks stretch. 1,000/s in 1 ms ticks is a record or two
 * per tick, a 64-record burst is read in one or two ticks and is over
 * before the stretch matters; at a uprobe's ~90,000/s 1 ms ticks would
 * cost 1,000 wakeups a second for ~90 records each. */
#define BUSY_RECORDS_PER_S 32000u

/* How late a timer may fire: a fraction of the 1 ms tick. */
#define TICK_ACCURACY_USEC 100u

struct reader_ring {
        struct reader *reader;
        size_t index;
        sd_event_source *io;            /* the ring's own fd: its watermark */
        sd_event_source **bells;        /* its doorbells' fds */
        size_t n_bells;
};

struct reader {
        sd_event *event;
        struct monitor *monitor;
        const struct monitor_handler *handler;
        void *ctx;
        void (*flush)(void *ctx);
        struct reader_opts opts;

        struct reader_ring *rings;
        size_t n_rings;
        sd_event_source *defer;         /* more than a budget was waiting */
        sd_event_source *timer;         /* the tick; off while every ring is armed */
        uint64_t period;
        uint64_t n_since_tick;          /* records read since the last tick, by any wakeup */
        uint64_t last_tick;             /* CLOCK_MONOTONIC usec */
        bool backoff;                   /* the period grew on ticks that found nothing */
        unsigned confirm;               /* looks made since every ring was armed */

        uint64_t n_doorbells, n_ticks, n_swept;
        unsigned arm_delay_usec;        /* EVMON_TEST_ARM_DELAY_USEC, tests only */
};

/* Returns the records read but for quiet sources' (the process table's):
 * those alone do not keep the tick going, or the side records of a busy
 * host would keep an idle evmond awake. */
static int ring_drain(struct reader *r, size_t i, bool *more) {
        int n = monitor_drain(r->monitor, i, DRAIN_BUDGET, r->handler, r->ctx);

        if (n >= (int) DRAIN_BUDGET)
                *more = true;
        if (n <= 0)
                return 0;
        n -= (int) monitor_drain_quiet(r->monitor);
        r->n_since_tick += (uint64_t) n;
        return n;
}

static void after_drain(struct reader *r, bool more) {
        if (r->flush)
                r->flush(r->ctx);
        if (more)
                (void) sd_event_source_set_enabled(r->defer, SD_EVENT_ONESHOT);
}

bool reader_drain_all(struct reader *r) {
        bool more = false;
        uint64_t n = 0;

        if (!r)
                return false;
        for (size_t i = 0; i < r->n_rings; i++)
                n += ring_drain(r, i, &more);
        after_drain(r, more);
        return n > 0;
}

/* Records flow: makes the tick come within flush_usec, unless it runs
 * already (a stretched busy tick stays as it is: the rings' watermark
 * serves a busy host, and pulling the tick in would double its wakeups). */
static void tick_start(struct reader *r) {
        int enabled = SD_EVENT_OFF;
        uint64_t now;

        (void) sd_event_source_get_enabled(r->timer, &enabled);
        if (enabled != SD_EVENT_OFF && !r->backoff && r->confirm == 0)
                return;
        if (sd_event_now(r->event, CLOCK_MONOTONIC, &now) < 0)
                return;
        r->period = r->opts.flush_usec;
        r->backoff = false;
        r->confirm = 0;
        (void) sd_event_source_set_time(r->timer, now + r->period);
        (void) sd_event_source_set_enabled(r->timer, SD_EVENT_ON);
}

static int on_bell(sd_event_source *es, int fd, uint32_t revents, void *userdata) {
        struct reader_ring *rr = userdata;
        struct reader *r = rr->reader;
        bool more = false;

        /* A targeted task and all its children exited: this doorbell can
         * never ring again, and would poll HUP forever. */
        if (revents & (EPOLLHUP | EPOLLERR))
                (void) sd_event_source_set_enabled(es, SD_EVENT_OFF);
        if (!(revents & EPOLLIN))
                return 0;

        r->n_doorbells++;
        (void) monitor_ring_disarm(r->monitor, rr->index);
        (void) ring_drain(r, rr->index, &more);
        after_drain(r, more);
        tick_start(r);
        return 0;
}

static int on_ring(sd_event_source *es, int fd, uint32_t revents, void *userdata) {
        struct reader_ring *rr = userdata;
        struct reader *r = rr->reader;
        bool more = false;

        int n = ring_drain(r, rr->index, &more);

        after_drain(r, more);
        /* Even on an armed ring (whose doorbell should have rung too): if
         * it ever does not, the tick still comes for the rest. A watermark
         * reached by quiet records alone (a busy host's forks and exits)
         * starts nothing. */
        if (n > 0)
                tick_start(r);
        return 0;
}

static int on_defer(sd_event_source *es, void *userdata) {
        (void) reader_drain_all(userdata);
        return 0;
}

static int on_tick(sd_event_source *es, uint64_t usec, void *userdata) {
        struct reader *r = userdata;
        bool more = false, disarmed = false;
        uint64_t n, now, elapsed;

        if (sd_event_now(r->event, CLOCK_MONOTONIC, &now) < 0)
                now = usec;
        elapsed = now > r->last_tick ? now - r->last_tick : r->period;
        r->last_tick = now;
        r->n_ticks++;
        for (size_t i = 0; i < r->n_rings; i++) {
                int k = ring_drain(r, i, &more);

                if (k == 0 && r->opts.doorbell && !monitor_ring_armed(r->monitor, i) &&
                    (r->arm_delay_usec == 0 || usleep(r->arm_delay_usec) >= 0) &&
                    monitor_ring_arm(r->monitor, i) >= 0)
                        /* Records written before the arm did not ring. */
                        (void) ring_drain(r, i, &more);
                if (!monitor_ring_armed(r->monitor, i))
                        disarmed = true;
        }
        after_drain(r, more);
        /* The rate since the last tick, whoever read it (the rings'
         * watermark serves much of a busy host). */
        n = r->n_since_tick;
        r->n_since_tick = 0;

        if (n > 0)
                r->confirm = 0;
        if (!disarmed && r->opts.doorbell && monitor_doorbells_cover(r->monitor)) {
                /* Every ring armed. Two more looks, 10 and 100 ms on,
                 * before sleeping: records were seen sitting unannounced
                 * in an armed ring (a live reload beside another evmond
                 * here, a cgroup target on Debian's 6.1 in the VM), and
                 * these bound their wait; the status tick's sweep bounds
                 * it again to a second. One cause is known: a tracepoint
                 * event enabled from another CPU makes the kernel rebuild
                 * that CPU's list of the tracepoint's events in an IPI,
                 * and a handler walking the list then may skip a doorbell
                 * member (or a main event: a record lost unsaid).
                 * monitor_enable() enables from each event's own CPU, but
                 * another tool on the host (an older evmond, perf) may
                 * not. */
                static const uint64_t confirm_usec[] = { 10000, 100000 };

                r->period = r->opts.flush_usec;
                r->backoff = false;
                if (r->confirm >= ELEMENTSOF(confirm_usec)) {
                        r->confirm = 0;
                        return sd_event_source_set_enabled(es, SD_EVENT_OFF);
                }
                (void) sd_event_source_set_time(es, now + confirm_usec[r->confirm++]);
                return sd_event_source_set_enabled(es, SD_EVENT_ON);
        }
        r->confirm = 0;

        r->backoff = n == 0;
        if (n == 0)
                /* Only without a (complete) doorbell: back off. */
                r->period = r->period * 2 < r->opts.idle_usec ? r->period * 2 : r->opts.idle_usec;
        else if (n * 1000000u >= (uint64_t) BUSY_RECORDS_PER_S * elapsed)
                r->period = r->period * 2 < r->opts.busy_usec ? r->period * 2 : r->opts.busy_usec;
        else
                r->period = r->opts.flush_usec;
        if (r->period < r->opts.flush_usec)
                r->period = r->opts.flush_usec;

        /* From now, not from when it was due: a late tick on a loaded host
         * must not be followed by a burst of catch-up ticks. */
        (void) sd_event_source_set_time(es, now + r->period);
        /* Time sources are one-shot by default. */
        return sd_event_source_set_enabled(es, SD_EVENT_ON);
}

struct reader *reader_free(struct reader *r) {
        if (!r)
                return NULL;
        for (size_t i = 0; i < r->n_rings; i++) {
                struct reader_ring *rr = &r->rings[i];

                rr->io = sd_event_source_disable_unref(rr->io);
                for (size_t k = 0; k < rr->n_bells; k++)
                        sd_event_source_disable_unref(rr->bells[k]);
                free(rr->bells);
        }
        free(r->rings);
        sd_event_source_disable_unref(r->defer);
        sd_event_source_disable_unref(r->timer);
        free(r);
        return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(struct reader *, reader_free);

int reader_new(sd_event *e, struct monitor *m, const struct monitor_handler *h, void *ctx,
               void (*flush)(void *ctx), const struct reader_opts *opts, struct reader **ret) {
        _cleanup_(reader_freep) struct reader *r = NULL;
        int k;

        if (!e || !m || !opts || !ret || opts->flush_usec == 0)
                return -EINVAL;

        r = calloc(1, sizeof(*r));
        if (!r)
                return -ENOMEM;
        *r = (struct reader) {
                .event = e, .monitor = m, .handler = h, .ctx = ctx, .flush = flush,
                .opts = *opts,
                .period = opts->flush_usec,
        };

        /* test-latency widens the window between the look that found a
         * ring empty and the arm, which the read after the arm closes. */
        const char *e_delay = getenv("EVMON_TEST_ARM_DELAY_USEC");
        if (e_delay)
                r->arm_delay_usec = (unsigned) strtoul(e_delay, NULL, 10);

        r->n_rings = monitor_n_rings(m);
        r->rings = calloc(r->n_rings, sizeof(*r->rings));
        if (!r->rings)
                return -ENOMEM;
        for (size_t i = 0; i < r->n_rings; i++) {
                struct reader_ring *rr = &r->rings[i];
                size_t nb = monitor_ring_n_doorbells(m, i);

                *rr = (struct reader_ring) { .reader = r, .index = i };
                k = sd_event_add_io(e, &rr->io, monitor_ring_fd(m, i), EPOLLIN, on_ring, rr);
                if (k < 0)
                        return k;
                if (nb == 0)
                        continue;
                rr->bells = calloc(nb, sizeof(*rr->bells));
                if (!rr->bells)
                        return -ENOMEM;
                for (; rr->n_bells < nb; rr->n_bells++) {
                        k = sd_event_add_io(e, &rr->bells[rr->n_bells], monitor_ring_doorbell_fd(m, i, rr->n_bells),
                                            EPOLLIN, on_bell, rr);
                        if (k < 0)
                                return k;
                }
        }

        k = sd_event_add_defer(e, &r->defer, on_defer, r);
        if (k < 0)
                return k;
        (void) sd_event_source_set_enabled(r->defer, SD_EVENT_OFF);

        /* The first tick arms the doorbells of the rings it finds empty. */
        k = sd_event_add_time_relative(e, &r->timer, CLOCK_MONOTONIC, r->period, TICK_ACCURACY_USEC, on_tick, r);
        if (k < 0)
                return k;

        *ret = TAKE_PTR(r);
        return 0;
}

void reader_set_opts(struct reader *r, const struct reader_opts *opts) {
        if (!r || !opts || opts->flush_usec == 0)
                return;
        r->opts = *opts;
        reader_kick(r);
}

void reader_kick(struct reader *r) {
        if (!r)
                return;
        r->backoff = true;      /* so that tick_start() moves even a running tick */
        tick_start(r);
}

uint64_t reader_sweep(struct reader *r) {
        int enabled = SD_EVENT_OFF;
        bool more = false;
        uint64_t n = 0;

        if (!r)
                return 0;
        (void) sd_event_source_get_enabled(r->timer, &enabled);
        if (enabled != SD_EVENT_OFF)
                return 0;       /* ticking: it looks anyway */
        for (size_t i = 0; i < r->n_rings; i++)
                n += ring_drain(r, i, &more);
        after_drain(r, more);
        if (n > 0) {
                r->n_swept += n;
                tick_start(r);
        }
        return n;
}

uint64_t reader_n_swept(const struct reader *r) {
        return r ? r->n_swept : 0;
}

uint64_t reader_n_doorbells(const struct reader *r) {
        return r ? r->n_doorbells : 0;
}

uint64_t reader_n_ticks(const struct reader *r) {
        return r ? r->n_ticks : 0;
}
