/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* When evmond reads its rings.
 *
 * The rings wake us by bytes (an eighth of a ring), which keeps full rate
 * cheap but says nothing about a lone record. Each ring has doorbells
 * (src/monitor/doorbell.c) that wake us at the first record after a quiet
 * spell. So:
 *
 *   idle      every doorbell armed, no timer: nothing wakes evmond.
 *   lone      a doorbell fd is readable, and that ring's doorbell last
 *             rang more than a tick (BELL_GAP_FLUSHES) ago, or it is the
 *             second or third of such a spell and its copies are counted
 *             (BELL_BURST): read the ring and leave the doorbell armed
 *             (its own ring emptied). Pausable doorbells only
 *             (monitor_doorbells_pausable()): one wakeup, no ioctl per
 *             lone record.
 *   rung      a doorbell fd is readable again past that (a burst, a
 *             stream), or doorbells that disarm by an IPI: disarm that
 *             ring's doorbells (a flowing ring must not cost an interrupt
 *             per record), read the ring, and start the tick.
 *   ticking   every flush_usec (ring.latency_ms, 4) read every ring. At a
 *             tick that found every ring quiet, nothing timed within half
 *             a tick (the second such in a row after a stream:
 *             STREAM_TICKS) and no ring owed records its doorbells rang
 *             for (on_bell()), the rings are armed
 *             again and then read once more: a record written between
 *             that look and the arm did not ring, and would otherwise
 *             wait for the next one. While one ring flows, the others
 *             stay disarmed: the tick reads them. Once every ring is
 *             armed the tick stops.
 *   busy      while ticks find more than BUSY_RECORDS_PER_S, each tick
 *             comes twice as late, up to busy_usec: batches of hundreds of
 *             records per wakeup keep the CPU per record at full rate, at
 *             the price of up to busy_usec of latency at such rates. In
 *             time order a watermark's look reads every ring, and pushes
 *             the busy tick a period on.
 *
 * Without doorbells (ring.doorbell false, or an event the kernel would not
 * copy into one) the tick never stops: a tick that finds nothing comes
 * twice as late, up to idle_usec, as evmond did before doorbells.
 *
 * In time order ("order": "time", the default) every one of these looks
 * reads all rings at once, merged by time (monitor_drain_ordered()); the
 * newest records, which another CPU may still overtake, stay in their
 * rings for hold_usec at most. A ring holding records is not empty, so
 * the tick goes on while records flow and hands them out. What a
 * doorbell's look holds (a lone event, the start of a burst) gets a
 * release timer, when the newest of it may go; what a release look holds
 * in turn gets one more (RELEASE_CHAIN), then waits for the tick. What a
 * tick holds waits for the next tick when that comes within flush_usec
 * more, as it does while records flow (release_schedule()); a busy tick,
 * stretched more than once, takes what it holds itself (busy()). Idle,
 * nothing is held and nothing more wakes.
 *
 * A time-order look that finds SCAN_BYTES or more no scan has seen first
 * has the rings scanned (scan_rings(), monitor_scan()), by the
 * ring.threads workers and the loop: samples the handler's scan() skips
 * (no client wants them) are counted there, those whose lines it encodes
 * there are kept with their lines, and the merge hands out all it kept
 * in time order. Below that, and idle, no worker wakes. */

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "reader.h"
#include "evmon/cleanup.h"
#include "evmon/clock.h"
#include "evmon/workers.h"

/* Records read per look before the loop turns to the sockets again: from
 * one ring in arrival order, from all of them merged in time order. A
 * client reads what its socket holds between two looks; a look of 4,096
 * records per CPU made a 16-CPU host's looks 65,536 records long (some 20
 * ms), and what a client got fell as the load grew (issue 33). */
#define DRAIN_BUDGET 4096u

/* Above this rate ticks stretch. 1,000/s in 1 ms ticks is a record or two
 * per tick, a 64-record burst is read in one or two ticks and is over
 * before the stretch matters; at a uprobe's ~90,000/s 1 ms ticks would
 * cost 1,000 wakeups a second for ~90 records each. */
#define BUSY_RECORDS_PER_S 32000u

/* Doorbells of one ring that ring closer together than this many ticks
 * (flush_usec, ring.latency_ms) are a spell: more than a record per tick,
 * a tick batches them. Further apart, each ring is one wakeup and the
 * doorbell stays armed, where the tick would cost a look more per record.
 * A doorbell's look may find fewer records than rang for them: the
 * kernel writes a record's doorbell copy first when the copy comes first
 * on the tracepoint's list, and a look between the two finds the copy
 * without its record (the early bell, on_bell()), which then rings
 * nothing. Where the copies are one a record (tracepoints and probes:
 * monitor_ring_bell_copies()), a look counts them against what it found
 * and looks again a hold later for what is owed, so up to BELL_BURST
 * doorbells of a spell are read lone: a process's fork, exec and exit
 * are three wakeups, not five. Without a count (a cpu-clock's copies
 * sample on their own timer) the second doorbell switches to the tick:
 * a look between the copies of two records and the second record itself
 * sees one doorbell for both, and that record waited for the sweep in
 * about one run of three of test-latency's bursts. */
#define BELL_GAP_FLUSHES 1u
#define BELL_BURST 3u

/* How late a timer may fire: a fraction of the 1 ms tick. */
#define TICK_ACCURACY_USEC 100u

struct reader_ring {
        struct reader *reader;
        size_t index;
        sd_event_source *io;            /* the ring's own fd: its watermark */
        sd_event_source **bells;        /* its doorbells' fds */
        size_t n_bells;
        uint64_t last_bell;             /* CLOCK_MONOTONIC usec of its last doorbell, 0: none yet */
        unsigned n_flow;                /* records read disarmed since the last tick */
        unsigned n_lone;                /* doorbells of its spell read lone */
        int owed;                       /* records its doorbells rang for that no look found yet, less
                                         * records looks found before their copies were counted */
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
        unsigned flow_ticks;            /* ticks in a row that found records */
        bool settling;                  /* a stream's first quiet tick: the next one arms */

        uint64_t n_doorbells, n_ticks, n_swept, n_releases, n_flushes;
        uint64_t n_early;               /* doorbells whose look found fewer records than rang */
        sd_event_source *release;       /* time order: for held records, when no tick comes first */
        uint64_t held, held_now;        /* the last pass's oldest record left, and its clock */
        unsigned n_chain;               /* releases since the last tick or doorbell */
        unsigned owed_tries;            /* looks (releases, ticks) since new copies that found records owed */
        bool in_tick;                   /* the tick is rescheduled after its passes */
        struct workers *workers;        /* opts.threads > 1: the threads that scan */
        struct reader_scan scan;
        const size_t *scan_rings;       /* the rings a scan hands out, one a job */
        struct monitor_scan_opts scan_opts;
        uint64_t n_scans, n_scanned;
        unsigned arm_delay_usec;        /* EVMON_TEST_ARM_DELAY_USEC, tests only */
};

/* The tick stretched more than once: a rate above BUSY_RECORDS_PER_S that
 * goes on (a burst is read in a tick or two). Held records then wait for
 * the tick, within busy_usec as every record at such rates: a release
 * timer per tick (and one more, RELEASE_CHAIN) tripled the wakeups that
 * the stretch saves (the uprobe workload of bench/run, 95,000 records/s:
 * 290 wakeups/s against 185, evmond's CPU per record 0.345 µs against
 * 0.285, medians of 8 runs). */
static bool busy(const struct reader *r) {
        return !r->backoff && r->period > 2 * r->opts.flush_usec;
}

/* Releases in a row without a tick: a burst that goes on past the first
 * release is still let out within a few holds, while records that keep
 * coming (a steady stream under the busy rate) wait for the tick rather
 * than wake evmond every hold. */
#define RELEASE_CHAIN 2u

/* Looks (releases a hold apart, ticks) that look again for records
 * doorbells rang for (tick_owed()), before the status tick's sweep is
 * left to find them. */
#define OWED_TRIES 8u

/* Time order: what the last pass left in the rings goes once nothing can
 * overtake it any more, HOLD after its time (the newest's: one release
 * for them all); by the tick if that comes first, else by the release
 * timer. AFTER_TICK: a tick's look, whose held records also wait for the
 * next tick when it comes at most flush_usec after they may go (they
 * then reach a client within hold + flush_usec of their time). A release
 * timer per tick of a steady stream tripled its wakeups: at 10,000
 * records/s, 2,600 wakeups/s against 880, and 10 % of a CPU against 3.7 %
 * (bench/run's steady 10,000/s, 2 runs each). */
static void release_schedule(struct reader *r, uint64_t held, uint64_t now, bool after_tick) {
        const struct monitor_order_stats *st = monitor_order_stats(r->monitor);
        uint64_t due_ns, at, tick_at = 0, hold_ns = r->opts.hold_usec * 1000u;
        int enabled = SD_EVENT_OFF;

        if (held == UINT64_MAX) {
                (void) sd_event_source_set_enabled(r->release, SD_EVENT_OFF);
                return;
        }
        if (st && st->held_newest > held)
                held = st->held_newest;
        due_ns = held + hold_ns;
        due_ns = due_ns > now ? due_ns - now : 0;
        if (due_ns > 2 * hold_ns)
                due_ns = 2 * hold_ns;
        at = now_ns(CLOCK_MONOTONIC) / 1000u + (due_ns + 999u) / 1000u + 1;
        (void) sd_event_source_get_enabled(r->timer, &enabled);
        if (enabled != SD_EVENT_OFF && sd_event_source_get_time(r->timer, &tick_at) >= 0 &&
            (tick_at <= at || busy(r) || (after_tick && tick_at <= at + r->opts.flush_usec)))
                return;
        (void) sd_event_source_set_time(r->release, at);
        (void) sd_event_source_set_enabled(r->release, SD_EVENT_ONESHOT);
}

/* Looks between two ticks that read this many records of one disarmed
 * ring (a stream of ~64,000 records/s or more at the busy tick, or a
 * burst of thousands) put its doorbells to rest, off the tracepoints'
 * lists, until a quiet tick arms them again: a migration to the ring's
 * CPU and back each way, once per spell. Counted across looks: a time
 * order look shares its budget among the rings. */
#define REST_RECORDS 1024u

static void rest_if_flowing(struct reader *r, size_t i, unsigned n) {
        struct reader_ring *rr = &r->rings[i];

        if (!r->opts.doorbell || monitor_ring_armed(r->monitor, i)) {
                rr->n_flow = 0;
                return;
        }
        rr->n_flow += n;
        if (rr->n_flow >= REST_RECORDS) {
                rr->n_flow = 0;
                (void) monitor_ring_rest(r->monitor, i);
        }
}

/* FOUND of ring I's records that ring doorbells (not quiet sources')
 * were read: what its doorbells rang for and no look had found yet. A
 * record read before its copy was counted (written between an arm and
 * the look after it) is a credit against that copy; the balance starts
 * again at each disarm and each arm by a tick. A credit is owed by a
 * copy still in a doorbell's ring, which the next arm counts: more credit
 * than such copies is for records no armed doorbell announced, which will
 * never be paid, and it swallowed the copy of a later early bell, whose
 * record then waited for the sweep (owed -3 with none pending, in 2 runs
 * of 9 of test-latency's bursts with the other CPU busy). */
static void owed_found(struct reader *r, size_t i, unsigned found) {
        struct reader_ring *rr = &r->rings[i];
        unsigned pending;

        rr->owed -= (int) found;
        if (rr->owed >= 0)
                return;
        pending = monitor_ring_pending_copies(r->monitor, i);
        if (pending > DRAIN_BUDGET)
                pending = DRAIN_BUDGET;         /* UINT_MAX too: the floor bounds it */
        if (pending < (unsigned) -rr->owed)
                rr->owed = -(int) pending;
}

/* Whether a ring that is up still waits for records its doorbells rang
 * for (a look found their copies first): a release and the tick look
 * again for them, up to OWED_TRIES looks since the last copies came;
 * then the status tick's sweep is left to find them. */
static bool tick_owed(struct reader *r) {
        bool owing = false;
        size_t n_up;
        const size_t *up = monitor_rings_up(r->monitor, &n_up);

        for (size_t k = 0; k < n_up; k++)
                owing |= r->rings[up[k]].owed > 0;
        if (!owing) {
                r->owed_tries = 0;
                return false;
        }
        if (++r->owed_tries <= OWED_TRIES)
                return true;
        for (size_t k = 0; k < n_up; k++)
                r->rings[up[k]].owed = 0;
        r->owed_tries = 0;
        return false;
}

/* A look that finds at least this much in the rings has them scanned
 * first (monitor-scan.c), by the reader threads, or by the loop where
 * there are none: some 1,300 records, a few hundred microseconds of one
 * thread's work, against the tens a wakeup of the threads costs. A scan
 * is cheaper per record than the merge (no heap, no parse: 2M samples
 * no client wanted cost evmond 0.20 s merged, 0.09 s scanned by two
 * threads), and the merge is left with what clients want. Below it the
 * loop merges alone, and an idle or quiet host wakes no thread. */
#define SCAN_BYTES (64u * 1024u)

static void scan_job(size_t job, unsigned worker, void *userdata) {
        struct reader *r = userdata;
        int n = monitor_scan(r->monitor, r->scan_rings[job], &r->scan_opts, r->handler, r->ctx, worker);

        if (n > 0)
                __atomic_fetch_add(&r->n_scanned, (uint64_t) n, __ATOMIC_RELAXED);
}

/* Time order: the rings scanned before the merge when they hold much
 * (see SCAN_BYTES), one a job, by the reader threads and the loop. */
static void scan_rings(struct reader *r) {
        size_t n_up;
        const size_t *up;
        uint64_t pending = 0;

        if (!r->opts.order || !r->scan.begin || !r->handler->scan)
                return;
        up = monitor_rings_up(r->monitor, &n_up);
        for (size_t k = 0; k < n_up && pending < SCAN_BYTES; k++)
                pending += monitor_ring_unscanned(r->monitor, up[k]);
        if (pending < SCAN_BYTES || !r->scan.begin(r->ctx, r->workers ? workers_n(r->workers) : 1))
                return;
        /* A ring keeps no more than its share of what the merge after
         * hands out: what scan() decides holds for that merge. */
        r->scan_opts = (struct monitor_scan_opts) {
                .max_kept = n_up > 0 && DRAIN_BUDGET / n_up > 64 ? DRAIN_BUDGET / (unsigned) n_up : 64,
                .time_limit = now_ns(r->opts.clock) + r->opts.hold_usec * 1000u,
        };
        r->scan_rings = up;
        workers_run(r->workers, n_up, scan_job, r);
        r->n_scans++;
        r->scan.end(r->ctx);
}

/* Time order: one merged look at every ring; ALL hands out everything
 * read; SCHEDULE: a release timer for what it holds, unless the tick
 * comes first. Returns the records read but quiet sources', as
 * ring_drain(). */
static int order_pass(struct reader *r, bool all, bool schedule, bool *more) {
        struct monitor_order o = {
                .hold_ns = r->opts.hold_usec * 1000u,
                .all = all,
        };
        uint64_t held = UINT64_MAX;
        unsigned skipped;
        size_t n_up;
        const size_t *up;
        int n;

        scan_rings(r);
        /* After the scan, which may take a millisecond: the merge takes
         * a record timed past this clock (and the hold) for one without a
         * time, and hands it out at once. */
        o.now = now_ns(r->opts.clock);
        n = monitor_drain_ordered(r->monitor, &o, DRAIN_BUDGET, r->handler, r->ctx, &held);
        skipped = monitor_drain_skipped(r->monitor);
        up = monitor_rings_up(r->monitor, &n_up);
        for (size_t k = 0; k < n_up; k++) {
                rest_if_flowing(r, up[k], monitor_ring_n_pass(r->monitor, up[k]));
                owed_found(r, up[k], monitor_ring_n_pass(r->monitor, up[k]) -
                                             monitor_ring_n_pass_quiet(r->monitor, up[k]));
        }

        r->held = held;
        r->held_now = o.now;
        if (n >= (int) DRAIN_BUDGET)
                *more = true;   /* the defer source comes at once */
        else if (schedule && !r->in_tick)
                release_schedule(r, held, o.now, false);
        /* What the scans skipped was read as much as what went out. */
        n = (n > 0 ? n - (int) monitor_drain_quiet(r->monitor) : 0) + (int) skipped;
        r->n_since_tick += (uint64_t) n;
        return n;
}

/* Returns the records read but for quiet sources' (the process table's):
 * those alone do not keep the tick going, or the side records of a busy
 * host would keep an idle evmond awake. */
static int ring_drain(struct reader *r, size_t i, bool *more) {
        int n = monitor_drain(r->monitor, i, DRAIN_BUDGET, r->handler, r->ctx);

        rest_if_flowing(r, i, n > 0 ? (unsigned) n : 0);

        if (n >= (int) DRAIN_BUDGET)
                *more = true;
        if (n <= 0)
                return 0;
        n -= (int) monitor_drain_quiet(r->monitor);
        owed_found(r, i, (unsigned) n);
        r->n_since_tick += (uint64_t) n;
        return n;
}

static void after_drain(struct reader *r, bool more) {
        if (r->flush)
                r->flush(r->ctx);
        if (more)
                (void) sd_event_source_set_enabled(r->defer, SD_EVENT_ONESHOT);
}

void reader_drain_ring(struct reader *r, size_t i) {
        bool more = true;

        if (!r || i >= r->n_rings)
                return;
        while (more) {
                more = false;
                /* In time order, everything goes, merged: the other rings'
                 * held records may be older than this one's. */
                if (r->opts.order)
                        (void) order_pass(r, true, false, &more);
                else
                        (void) ring_drain(r, i, &more);
                if (r->flush)
                        r->flush(r->ctx);
        }
}

/* One look at every ring; *MORE when one filled its budget. Returns the
 * records read, as ring_drain(). */
static uint64_t look_all(struct reader *r, bool all, bool *more) {
        uint64_t n = 0;
        size_t n_up;
        const size_t *up = monitor_rings_up(r->monitor, &n_up);

        if (r->opts.order)
                return (uint64_t) order_pass(r, all, true, more);
        for (size_t k = 0; k < n_up; k++)
                n += (uint64_t) ring_drain(r, up[k], more);
        return n;
}

static bool drain_all(struct reader *r, bool all) {
        bool more = false;
        uint64_t n = look_all(r, all, &more);

        after_drain(r, more);
        return n > 0;
}

/* Looks one reader_drain_all() makes at most: a million records, more
 * than full rings of the default size hold on a large host. */
#define DRAIN_ALL_LOOKS 256u

bool reader_drain_all(struct reader *r) {
        bool any = false, more = true;

        if (!r)
                return false;
        /* Everything, not a look's budget: a reload closes the events of
         * what it reads, and their records must not stay behind them.
         * The clients are flushed between looks. */
        for (unsigned k = 0; more && k < DRAIN_ALL_LOOKS; k++) {
                if (k > 0 && r->flush)
                        r->flush(r->ctx);
                more = false;
                any |= look_all(r, true, &more) > 0;
        }
        after_drain(r, more);
        return any;
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

/* A busy tick after a watermark's look in time order: a period from now.
 * The look read every ring (in arrival order it reads its own), and the
 * tick would find only what came since. What the look holds waits for
 * the tick, within busy_usec as every record at such rates; the tick's
 * rate counts every look since it last ran. The kernel wakes us every
 * watermark's bytes written, read or not, so a tick that comes just
 * before one still makes two looks of that batch. At the uprobe
 * workload's ~97,000 records/s (1/8 watermark every ~17 ms, 16 ms tick):
 * 1,205 against 954 wakeups for 1M records, 0.361 against 0.333 µs of
 * CPU per record (medians of 5, interleaved). */
static void tick_postpone(struct reader *r) {
        uint64_t now;

        if (sd_event_now(r->event, CLOCK_MONOTONIC, &now) >= 0)
                (void) sd_event_source_set_time(r->timer, now + r->period);
}

static bool all_armed(struct reader *r) {
        size_t n_up;
        const size_t *up = monitor_rings_up(r->monitor, &n_up);

        for (size_t k = 0; k < n_up; k++)
                if (!monitor_ring_armed(r->monitor, up[k]))
                        return false;
        return true;
}

static int on_bell(sd_event_source *es, int fd, uint32_t revents, void *userdata) {
        struct reader_ring *rr = userdata;
        struct reader *r = rr->reader;
        bool more = false, lone, gap;
        uint64_t now;

        /* A targeted task and all its children exited: this doorbell can
         * never ring again, and would poll HUP forever. That HUP is its
         * last ring when copies wait in its ring: perf_poll() reports a
         * gone task's event as HUP alone, even with the wakeup of the
         * records it wrote just before it exited still pending, and those
         * would wait for the sweep. The target's doorbells on every CPU
         * HUP at once; only a ring that holds copies is looked at. */
        if (revents & (EPOLLHUP | EPOLLERR)) {
                (void) sd_event_source_set_enabled(es, SD_EVENT_OFF);
                if (monitor_ring_pending_copies(r->monitor, rr->index) != 0)
                        revents |= EPOLLIN;
        }
        if (!(revents & EPOLLIN))
                return 0;

        r->n_doorbells++;
        r->n_chain = 0;
        if (sd_event_now(r->event, CLOCK_MONOTONIC, &now) < 0)
                now = 0;
        gap = rr->last_bell == 0 || now - rr->last_bell >= BELL_GAP_FLUSHES * r->opts.flush_usec;
        if (gap)
                rr->n_lone = 0;
        lone = now > 0 && monitor_ring_armed(r->monitor, rr->index) && monitor_doorbells_pausable(r->monitor) &&
               (gap || (rr->n_lone < BELL_BURST && monitor_ring_bell_copies(r->monitor, rr->index) != UINT_MAX));
        rr->last_bell = now;
        if (lone) {
                /* Armed it stays; its doorbell's ring is emptied first, so
                 * a record written during this look rings again. In time
                 * order, with every ring armed, all that is read goes now
                 * rather than after the hold (a second wakeup per lone
                 * record, its release): a record another CPU timed
                 * earlier and writes only after this look rings its own
                 * doorbell then, and comes late (order.late counts it),
                 * which at the rates of lone records takes two CPUs
                 * making one within the microseconds of a write. */
                unsigned copies, found;
                bool held = false, early, pending = false;

                rr->n_lone++;
                (void) monitor_ring_arm(r->monitor, rr->index);
                copies = monitor_ring_bell_copies(r->monitor, rr->index);
                if (copies == UINT_MAX)
                        rr->owed = 0;
                else if (copies > 0) {
                        rr->owed += (int) copies;
                        r->owed_tries = 0;
                }
                if (r->opts.order) {
                        (void) order_pass(r, all_armed(r), true, &more);
                        /* Quiet sources' records ring no doorbell: they
                         * say nothing of the one that rang. */
                        found = monitor_ring_n_pass(r->monitor, rr->index) -
                                monitor_ring_n_pass_quiet(r->monitor, rr->index);
                        held = r->held != UINT64_MAX;
                        pending = monitor_ring_pending(r->monitor, rr->index) > 0;
                } else {
                        int n = ring_drain(r, rr->index, &more);

                        found = n > 0 ? (unsigned) n : 0;
                }
                /* It rang for more than this look found, and the look
                 * held nothing that a release would read again: the rest
                 * is written just after its copy (or was, after the look
                 * loaded the ring's head), and rings nothing. A look a
                 * hold later (the tick in arrival order) takes it, where
                 * it waited for the status tick's sweep (issue 27's lone
                 * p99 of 16 ms). Without a count (a cpu-clock's copy
                 * samples on its own timer, whose next copy rings for
                 * what this one missed): when it found nothing but quiet
                 * records, and nothing came after. */
                if (copies == UINT_MAX)
                        early = found == 0 && !pending;
                else
                        early = rr->owed > 0 && !held;
                if (early) {
                        r->n_early++;
                        if (r->opts.order)
                                release_schedule(r, r->held_now, r->held_now, false);
                        else
                                tick_start(r);
                }
                after_drain(r, more);
                return 0;
        }
        rr->owed = 0;   /* the tick reads what is left */
        (void) monitor_ring_disarm(r->monitor, rr->index);
        /* The tick first: a record held now waits for it when it comes
         * soon enough (release_schedule()), else a release timer lets a
         * burst's tail out within a few holds (bursts of 64: p99 1.1 ms
         * against 4.9 when it waited for the tick). */
        tick_start(r);
        if (r->opts.order)
                (void) order_pass(r, false, true, &more);
        else
                (void) ring_drain(r, rr->index, &more);
        after_drain(r, more);
        return 0;
}

static int on_ring(sd_event_source *es, int fd, uint32_t revents, void *userdata) {
        struct reader_ring *rr = userdata;
        struct reader *r = rr->reader;
        bool more = false;

        /* A watermark: records pour in, the tick runs (below) and takes
         * what this look holds; a release timer would only split the
         * batches. */
        int n = r->opts.order ? order_pass(r, false, false, &more) : ring_drain(r, rr->index, &more);

        /* ... but a watermark of quiet records alone starts no tick. */
        if (r->opts.order && n == 0 && !more)
                release_schedule(r, r->held, r->held_now, false);
        after_drain(r, more);
        /* Even on an armed ring (whose doorbell should have rung too): if
         * it ever does not, the tick still comes for the rest. A watermark
         * reached by quiet records alone (a busy host's forks and exits)
         * starts nothing. */
        if (n > 0 && r->opts.order && busy(r))
                tick_postpone(r);
        else if (n > 0)
                tick_start(r);
        return 0;
}

static int on_defer(sd_event_source *es, void *userdata) {
        (void) drain_all(userdata, false);
        return 0;
}

static int on_release(sd_event_source *es, uint64_t usec, void *userdata) {
        struct reader *r = userdata;
        bool more = false;

        int ticking = SD_EVENT_OFF;

        r->n_releases++;
        /* What this look holds in turn: a release more, or the tick. With
         * no tick running (a lone record read at its doorbell, the ring
         * left armed) nothing else would come for it. */
        (void) sd_event_source_get_enabled(r->timer, &ticking);
        (void) order_pass(r, false, ++r->n_chain < RELEASE_CHAIN || ticking == SD_EVENT_OFF, &more);
        /* A record whose doorbell rang is written just after its copy,
         * but a host that takes the CPU from its writer between the two
         * (a VM's vCPU held off) delays it: a hold more, a few times. */
        if (tick_owed(r))
                release_schedule(r, r->held_now, r->held_now, false);
        after_drain(r, more);
        return 0;
}

/* Ring I was found quiet: if it was (nearly) full since, the kernel may
 * hold a count of records it dropped there, which it writes only with the
 * next record on that CPU (monitor_ring_flush_lost()): a burst that
 * overflowed the ring and stopped would be lost unsaid. Asks for that
 * record; true when asked, and the ring must be looked at again (its
 * doorbell does not ring for it), so the tick goes on. */
static bool flush_lost(struct reader *r, size_t i) {
        if (monitor_ring_flush_lost(r->monitor, i) <= 0)
                return false;
        r->n_flushes++;
        return true;
}

/* Ticks in a row that found records, from which a spell is a stream: its
 * rings are armed only at the second quiet tick in a row. A stream on a
 * shared host has gaps of a tick (its thread held off the CPU), and each
 * armed the rings, whose doorbells then rang twice at its next records.
 * A shorter spell (a process's fork, exec and exit) is armed at its
 * first quiet tick: a tick more per spell would be a wakeup more per
 * process. */
#define STREAM_TICKS 4u

/* Whether a tick that found every ring quiet (!FLOWING) arms them. */
static bool tick_quiet_enough(struct reader *r, bool flowing) {
        r->settling = false;
        if (flowing) {
                if (r->flow_ticks < STREAM_TICKS)
                        r->flow_ticks++;
                return false;
        }
        if (r->flow_ticks >= STREAM_TICKS) {
                r->flow_ticks = 0;
                r->settling = true;
                return false;
        }
        r->flow_ticks = 0;
        return true;
}

/* A quiet tick while a ring is owed records: no arm, and the tick comes
 * again as soon (as a stream's first quiet tick: settling), rather than
 * backing off or stopping with every ring armed. */
static bool tick_owing(struct reader *r) {
        if (!tick_owed(r))
                return false;
        r->settling = true;
        return true;
}

/* After a tick armed the rings and looked once more: what that look read
 * was written while they were disarmed, with no copies, so it is no
 * credit against copies to come. */
static void tick_armed(struct reader *r) {
        for (size_t i = 0; i < r->n_rings; i++)
                if (r->rings[i].owed < 0)
                        r->rings[i].owed = 0;
}

/* Arms ring I at a tick that found every ring quiet; false when it stays
 * disarmed. */
static bool tick_arm(struct reader *r, size_t i) {
        if (!r->opts.doorbell || monitor_ring_armed(r->monitor, i))
                return false;
        if (r->arm_delay_usec > 0)
                (void) usleep(r->arm_delay_usec);
        return monitor_ring_arm(r->monitor, i) >= 0;
}

/* A tick's look in time order: every ring merged. When every ring was
 * quiet and none is owed records (tick_owing()), each is armed (then
 * looked at once more); while one ring flows
 * the tick goes on and reads the others too, so they stay disarmed: a
 * stream that moves between CPUs with its thread rang the doorbell of
 * the ring it came to, and its look held what it read for a release
 * (10,000 records/s: 107 doorbells and 110 releases a second beside 243
 * ticks). Returns whether the tick goes on: a ring left unarmed, or a
 * quiet tick that armed nothing yet (settling). */
static bool tick_order(struct reader *r, bool *more) {
        bool armed = false, disarmed = false, flowing = false, arm;
        uint64_t quiet_ns = r->opts.flush_usec * 500u;
        size_t n_up;
        const size_t *up = monitor_rings_up(r->monitor, &n_up);

        (void) order_pass(r, false, true, more);
        /* Quiet: nothing left, and nothing timed within half a tick. A
         * ring read empty could have been flowing until just now; a tick
         * that hands out a process's exit, written a few milliseconds
         * before, ends its spell, where "nothing read" took a tick more:
         * a process's fork, exec and exit then cost five wakeups, now
         * four. A ring that is down counts as armed. */
        for (size_t k = 0; k < n_up; k++) {
                size_t i = up[k];
                uint64_t last = monitor_ring_last(r->monitor, i);
                /* A last record ahead of now: the clock (realtime, tai)
                 * was stepped back, and the merge's keys do not follow. */
                bool quiet = monitor_ring_pending(r->monitor, i) == 0 &&
                             (last + quiet_ns <= r->held_now || last > r->held_now + quiet_ns);

                if (!quiet || flush_lost(r, i))
                        flowing = true;
        }
        arm = tick_quiet_enough(r, flowing) && !tick_owing(r);
        for (size_t k = 0; arm && k < n_up; k++)
                armed |= tick_arm(r, up[k]);
        for (size_t k = 0; k < n_up; k++)
                if (!monitor_ring_armed(r->monitor, up[k]))
                        disarmed = true;
        if (armed) {
                (void) order_pass(r, false, true, more);
                tick_armed(r);
        }
        return disarmed || r->settling;
}

/* The same in arrival order: each ring read on its own. */
static bool tick_arrival(struct reader *r, bool *more) {
        bool disarmed = false, flowing = false, arm;
        size_t n_up;
        const size_t *up = monitor_rings_up(r->monitor, &n_up);

        for (size_t k = 0; k < n_up; k++) {
                size_t i = up[k];

                if (ring_drain(r, i, more) > 0 || flush_lost(r, i))
                        flowing = true;
        }
        arm = tick_quiet_enough(r, flowing) && !tick_owing(r);
        for (size_t k = 0; k < n_up; k++) {
                size_t i = up[k];

                /* Records written before the arm did not ring. */
                if (arm && tick_arm(r, i))
                        (void) ring_drain(r, i, more);
                if (!monitor_ring_armed(r->monitor, i))
                        disarmed = true;
        }
        if (arm)
                tick_armed(r);
        return disarmed || r->settling;
}

static int tick(sd_event_source *es, uint64_t usec, struct reader *r) {
        bool more = false, disarmed;
        uint64_t n, now, elapsed;
        size_t n_up;
        const size_t *up = monitor_rings_up(r->monitor, &n_up);

        if (sd_event_now(r->event, CLOCK_MONOTONIC, &now) < 0)
                now = usec;
        elapsed = now > r->last_tick ? now - r->last_tick : r->period;
        r->last_tick = now;
        r->n_ticks++;
        for (size_t j = 0; j < n_up; j++)
                r->rings[up[j]].n_flow = 0;
        disarmed = r->opts.order ? tick_order(r, &more) : tick_arrival(r, &more);
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
                /* Pausable doorbells are enabled after the start only
                 * from their own CPU (member enables, a wake after a
                 * rest): our own arms move nothing on those lists, and
                 * the status tick's sweep is left for other tools'
                 * enables. */
                if (r->confirm >= ELEMENTSOF(confirm_usec) || monitor_doorbells_pausable(r->monitor)) {
                        r->confirm = 0;
                        r->flow_ticks = 0;
                        return sd_event_source_set_enabled(es, SD_EVENT_OFF);
                }
                (void) sd_event_source_set_time(es, now + confirm_usec[r->confirm++]);
                return sd_event_source_set_enabled(es, SD_EVENT_ON);
        }
        r->confirm = 0;

        /* A stream's first quiet tick: the next comes as soon. */
        r->backoff = n == 0 && !r->settling;
        if (r->backoff)
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

static int on_tick(sd_event_source *es, uint64_t usec, void *userdata) {
        struct reader *r = userdata;
        int k;

        r->in_tick = true;
        r->n_chain = 0;
        k = tick(es, usec, r);
        r->in_tick = false;
        /* Now that the next tick's time is known. */
        if (r->opts.order)
                release_schedule(r, r->held, r->held_now, true);
        return k;
}

static void ring_unwatch(struct reader_ring *rr) {
        rr->io = sd_event_source_disable_unref(rr->io);
        for (size_t k = 0; k < rr->n_bells; k++)
                sd_event_source_disable_unref(rr->bells[k]);
        free(rr->bells);
        rr->bells = NULL;
        rr->n_bells = 0;
}

/* Ring I's fd and its doorbells' on the loop; nothing for a ring that is
 * down (its CPU offline). */
static int ring_watch(struct reader *r, size_t i) {
        struct reader_ring *rr = &r->rings[i];
        size_t nb = monitor_ring_n_doorbells(r->monitor, i);
        int fd = monitor_ring_fd(r->monitor, i), k;

        if (fd == -ENODEV)
                return 0;
        if (fd < 0)
                return fd;
        k = sd_event_add_io(r->event, &rr->io, fd, EPOLLIN, on_ring, rr);
        if (k < 0)
                return k;
        if (nb == 0)
                return 0;
        rr->bells = calloc(nb, sizeof(*rr->bells));
        if (!rr->bells)
                return -ENOMEM;
        for (; rr->n_bells < nb; rr->n_bells++) {
                k = sd_event_add_io(r->event, &rr->bells[rr->n_bells],
                                    monitor_ring_doorbell_fd(r->monitor, i, rr->n_bells), EPOLLIN, on_bell, rr);
                if (k < 0)
                        return k;
        }
        return 0;
}

int reader_ring_changed(struct reader *r, size_t i) {
        int k;

        if (!r || i >= r->n_rings)
                return -EINVAL;
        ring_unwatch(&r->rings[i]);
        r->rings[i].owed = 0;
        r->rings[i].n_lone = 0;
        k = ring_watch(r, i);
        /* A ring that came up is disarmed: the tick reads and arms it. */
        reader_kick(r);
        return k;
}

struct reader *reader_free(struct reader *r) {
        if (!r)
                return NULL;
        for (size_t i = 0; i < r->n_rings; i++)
                ring_unwatch(&r->rings[i]);
        free(r->rings);
        sd_event_source_disable_unref(r->defer);
        sd_event_source_disable_unref(r->timer);
        sd_event_source_disable_unref(r->release);
        workers_free(r->workers);
        free(r);
        return NULL;
}

/* The reader threads opts.threads asks for (none for 1, or in arrival
 * order). A pool that cannot start leaves the loop reading alone. */
static int workers_set(struct reader *r, const struct reader_opts *opts) {
        unsigned n = opts->order && opts->threads > 1 ? opts->threads : 1;

        if (workers_n(r->workers) == n || (!r->workers && n == 1))
                return 0;
        r->workers = workers_free(r->workers);
        if (n == 1)
                return 0;
        return workers_new(n, &r->workers);
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
                .held = UINT64_MAX,
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
                r->rings[i] = (struct reader_ring) { .reader = r, .index = i };
                k = ring_watch(r, i);
                if (k < 0)
                        return k;
        }

        k = sd_event_add_defer(e, &r->defer, on_defer, r);
        if (k < 0)
                return k;
        (void) sd_event_source_set_enabled(r->defer, SD_EVENT_OFF);

        /* The first tick arms the doorbells of the rings it finds empty. */
        k = sd_event_add_time_relative(e, &r->timer, CLOCK_MONOTONIC, r->period, TICK_ACCURACY_USEC, on_tick, r);
        if (k < 0)
                return k;
        /* Within a few microseconds: its whole point is a short wait. */
        k = sd_event_add_time(e, &r->release, CLOCK_MONOTONIC, 0, 1, on_release, r);
        if (k < 0)
                return k;
        (void) sd_event_source_set_enabled(r->release, SD_EVENT_OFF);

        /* Without them the loop reads alone (reader_n_threads() says so). */
        (void) workers_set(r, opts);

        *ret = TAKE_PTR(r);
        return 0;
}

void reader_set_opts(struct reader *r, const struct reader_opts *opts) {
        if (!r || !opts || opts->flush_usec == 0)
                return;
        /* From time order to arrival: what it holds goes first. */
        if (r->opts.order && !opts->order)
                (void) drain_all(r, true);
        r->opts = *opts;
        (void) workers_set(r, opts);
        reader_kick(r);
}

void reader_set_scan(struct reader *r, const struct reader_scan *scan) {
        if (r && scan)
                r->scan = *scan;
}

unsigned reader_n_threads(const struct reader *r) {
        return r && r->workers ? workers_n(r->workers) : 1;
}

uint64_t reader_n_scans(const struct reader *r) {
        return r ? r->n_scans : 0;
}

uint64_t reader_n_scanned(const struct reader *r) {
        return r ? r->n_scanned : 0;
}

void reader_kick(struct reader *r) {
        if (!r)
                return;
        r->backoff = true;      /* so that tick_start() moves even a running tick */
        tick_start(r);
}

uint64_t reader_sweep(struct reader *r) {
        int enabled = SD_EVENT_OFF;
        bool more = false, flushed = false;
        uint64_t n;
        size_t n_up;
        const size_t *up;

        if (!r)
                return 0;
        (void) sd_event_source_get_enabled(r->timer, &enabled);
        if (enabled != SD_EVENT_OFF)
                return 0;       /* ticking: it looks anyway */
        (void) sd_event_source_get_enabled(r->release, &enabled);
        if (enabled != SD_EVENT_OFF)
                return 0;       /* held records of a lone look: their release looks */
        n = look_all(r, false, &more);
        after_drain(r, more);
        if (n > 0)
                r->n_swept += n;
        up = monitor_rings_up(r->monitor, &n_up);
        /* Every ring is armed, so none was found full by a tick: one that
         * filled unannounced shows here. */
        for (size_t k = 0; k < n_up; k++)
                if (flush_lost(r, up[k]))
                        flushed = true;
        if (n > 0 || flushed)
                tick_start(r);
        return n;
}

uint64_t reader_n_swept(const struct reader *r) {
        return r ? r->n_swept : 0;
}

uint64_t reader_n_doorbells(const struct reader *r) {
        return r ? r->n_doorbells : 0;
}

uint64_t reader_n_releases(const struct reader *r) {
        return r ? r->n_releases : 0;
}

uint64_t reader_n_ticks(const struct reader *r) {
        return r ? r->n_ticks : 0;
}

uint64_t reader_n_early(const struct reader *r) {
        return r ? r->n_early : 0;
}

uint64_t reader_n_flushes(const struct reader *r) {
        return r ? r->n_flushes : 0;
}
