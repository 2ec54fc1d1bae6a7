/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Private to src/monitor/monitor*.c: the monitor's state and what its
 * pieces share. The pieces, as libperf keeps mmap, evsel and evlist apart:
 *   monitor.c         new and free
 *   monitor-ring.c    the per-CPU rings: owner, canary, flush, doorbells
 *   monitor-handle.c  event handles, the id index, retired handles
 *   monitor-open.c    an event's attr, its fds on every CPU: add, remove
 *   monitor-enable.c  enable/disable from each CPU, CPU hotplug
 *   monitor-drain.c   one ring's records to the handler
 *   monitor-merge.c   the rings merged in time order */

#include <sched.h>
#include <stdlib.h>

#include "evmon/monitor.h"
#include "doorbell.h"

/* One layout for all our events, so one attr parses every sample. */
#define MONITOR_SAMPLE_TYPE \
        (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_RAW)

/* A kept record's note: LEN bytes at OFF in its ring's notes; OFF is
 * NOTE_NONE for a record scan() kept without one. */
#define NOTE_NONE UINT32_MAX
struct kept_note {
        uint32_t off, len;
};

struct perf_cpu {
        int cpu;
        int fd;                 /* ring owner (PERF_COUNT_SW_DUMMY), owns the mmap; -1 while the CPU is down */
        int canary;             /* an enabled dummy: see canary_open() */
        uint64_t canary_enabled; /* its time_enabled at the last look */
        int flush;              /* a cpu-clock event into the ring, off: see flush_open() */
        uint64_t flush_id;
        bool flush_counts;      /* its read(2) gives its own lost samples (PERF_FORMAT_LOST) */
        uint64_t flush_lost;    /* ... those already taken out of LOST counts */
        uint64_t tail_prev;     /* data_tail before the last look released: see ring_look() */
        bool full;              /* the kernel may hold a loss it has not written: see ring_look() */
        void *base;
        size_t map_size;
        struct ring ring;
        uint64_t lost;          /* sum of PERF_RECORD_LOST counts */
        uint64_t bad;           /* records that did not parse, samples with unknown ids */
        struct monitor_malformed malformed;     /* the first of them, kept */
        bool malformed_kept, malformed_taken;
        struct doorbell *bells; /* opts->doorbell: one per pid target, then a CPU-wide one if needed */
        size_t n_bells;
        bool armed;

        /* monitor_drain_ordered(): this ring's place in the merge. */
        uint64_t head, pos;     /* the head loaded this pass; the record looked at */
        const struct perf_event_header *cur;
        uint64_t key;           /* cur's time, never below last (the merge's order) */
        uint64_t time;          /* cur's own time, or 0 when it has none */
        uint64_t last;          /* the latest key handed out from this ring */
        uint64_t seen;          /* the head of the pass before: what lies past it is new */
        unsigned n_pass;        /* records this ring gave in the last pass */
        unsigned n_pass_quiet;  /* of them, quiet sources' */
        const struct id_entry *entry;   /* cur's id in the index, or NULL */

        /* monitor_scan(): while SCANNING, the records in [data_tail,
         * scanned) are either kept (their positions, oldest first, from
         * i_kept on) for the merge, or were skipped and are gone; those
         * past scanned are not seen yet. */
        bool scanning;
        uint64_t scanned;
        uint64_t *kept;
        struct kept_note *kept_notes;   /* beside kept: what scan() noted of each */
        size_t n_kept, i_kept, cap_kept;
        char *notes;            /* the notes' bytes, in kept order */
        size_t notes_len, notes_cap;
        unsigned n_skipped;     /* skipped since the last ordered pass */
        uint64_t skip_last;     /* the latest time among them */
};

enum handle_state {
        HANDLE_FREE,
        HANDLE_ACTIVE,
        HANDLE_CLOSING,         /* disabled, fds with the async worker: see monitor_remove() */
        HANDLE_RETIRED,         /* fds closed, samples may still be in the rings */
};

struct handle {
        enum handle_state state;
        void *userdata;
        struct perf_event_attr attr;    /* as opened: the layout of its samples and records */
        size_t n;               /* events opened: n fds, then n ids */
        int *fds;               /* NULL once closed */
        int *bell_fds;          /* each fd's doorbell member, or -errno without one */
        size_t n_unbelled;      /* fds without a doorbell member */
        bool quiet;             /* monitor_source.quiet */
        bool enabled;           /* monitor_enable()d and not disabled since: a CPU that comes up enables it */
        bool started;           /* monitor_enable()d once: see its enable_on_exec */
        char *filter;           /* monitor_source.filter, for a CPU that comes up */
        int group;              /* the leader's handle, or -1 */
        uint64_t *ids;          /* the sample id of each event (0 on a CPU that is down) */
        uint64_t *heads;        /* RETIRED: each ring's data_head after the fds closed */
        uint64_t close_ticket;  /* CLOSING: the async job that closes them */
};

struct id_entry {
        uint64_t id;
        size_t handle;
};

struct monitor {
        struct perf_event_attr attr;    /* template of every event, and the parsing layout */
        uint64_t n_rests;               /* monitor_ring_rests() */
        size_t page_size, data_size;
        uint64_t full_bytes;            /* ring_look(): this much pending may have cost a record */

        int *cgroup_fds;                /* ours (dup'ed) */
        size_t n_cgroups;
        pid_t *pids;
        size_t n_pids;

        struct perf_cpu *cpus;          /* one per possible CPU, ascending */
        size_t n_cpus;
        size_t *up;                     /* the indexes of the rings that are up, ascending */
        size_t n_up;

        struct handle *handles;         /* indexed by handle; a FREE one is taken again */
        size_t n_handles;

        struct id_entry *index;         /* sorted by id, for lookup per sample */
        size_t n_index;

        bool doorbell;
        unsigned drain_quiet;           /* monitor_drain_quiet() */
        unsigned drain_skipped;         /* monitor_drain_skipped() */

        size_t *heap;                   /* monitor_drain_ordered(): rings by key, n_cpus slots */
        struct monitor_order_stats order;
        uint64_t order_now;             /* the clock the last ordered pass read */
        uint64_t order_limit;           /* this pass: no record is timed later */
};

/* What one drain hands each record with. */
struct drain {
        struct monitor *m;
        struct perf_cpu *c;
        const struct monitor_handler *h;
        void *ctx;
        unsigned quiet;         /* records of quiet sources */
        unsigned skipped;       /* records scans skipped, counted into this pass */
        const struct id_entry *hint;    /* the ordered drain found the record's id already */
        const struct kept_note *note;   /* what a scan noted of the record, or NULL */
};

static inline int cmp_id_entry(const void *a, const void *b) {
        const struct id_entry *x = a, *y = b;

        return (x->id > y->id) - (x->id < y->id);
}

/* A sample's event by its id, once per record in the drain and the merge:
 * inline there, as glibc's bsearch() is, not a call. */
static inline const struct id_entry *index_find(const struct monitor *m, uint64_t id) {
        struct id_entry key = { .id = id };

        if (m->n_index == 0)
                return NULL;
        return bsearch(&key, m->index, m->n_index, sizeof(*m->index), cmp_id_entry);
}

/* A CPU that is down has no ring: 0 for both, which a retired handle's
 * head of 0 there (set in monitor_cpu_down()) is never behind. */
static inline uint64_t cpu_tail(const struct perf_cpu *c) {
        return c->fd >= 0 ? c->ring.page->data_tail : 0;
}

static inline uint64_t cpu_head(const struct perf_cpu *c) {
        return c->fd >= 0 ? __atomic_load_n(&c->ring.page->data_head, __ATOMIC_ACQUIRE) : 0;
}

/* At the start of a look at ring C, HEAD just loaded: whether the kernel
 * may have dropped a record there since the look before last. It drops
 * one when the space past data_tail is too small for it; the data_tail it
 * saw was the one the last look released, or, for a record dropped while
 * that look ran, the one before (tail_prev), and the head it had then is
 * at most the head now. So a ring that never had full_bytes pending past
 * tail_prev has lost nothing unsaid; one that had may hold a loss for its
 * next record, which monitor_ring_flush_lost() brings out. */
static inline void ring_look(const struct monitor *m, struct perf_cpu *c, uint64_t head) {
        if (head - c->tail_prev >= m->full_bytes)
                c->full = true;
}

/* The time of record H laid out by ATTR, from its sample or its
 * sample_id trailer; false when it has none. */
bool record_time_attr(const struct perf_event_attr *attr, const struct perf_event_header *h, uint64_t *ret);

/* monitor-scan.c: a scanning ring's first record for the merge, and the
 * one after it. */
static inline uint64_t scan_first(const struct perf_cpu *c) {
        if (!c->scanning)
                return c->ring.page->data_tail;
        return c->i_kept < c->n_kept ? c->kept[c->i_kept] : c->scanned;
}
/* The note kept with the record at the merge's place in C, or NULL. */
static inline const struct kept_note *scan_note(const struct perf_cpu *c) {
        if (!c->scanning || c->i_kept >= c->n_kept || c->kept_notes[c->i_kept].off == NOTE_NONE)
                return NULL;
        return &c->kept_notes[c->i_kept];
}
void scan_step(struct perf_cpu *c, const struct perf_event_header *cur);
/* Once a scanning ring's kept records went (at a pass's start or end),
 * its place in the merge is past what its scans skipped too. */
void scan_place(const struct monitor *m, struct perf_cpu *c);
/* After a pass: a scan whose kept records all went is over. */
void scan_settle(struct perf_cpu *c);
void scan_done(struct perf_cpu *c);

/* monitor-ring.c */
int perf_cpu_open(struct monitor *m, struct perf_cpu *c);
void perf_cpu_done(struct perf_cpu *c);
void up_rebuild(struct monitor *m);

/* monitor-handle.c */
void handle_done(struct handle *h);
/* An ACTIVE handle H, or NULL. */
struct handle *handle_get(struct monitor *m, int h);
bool handle_leads(const struct monitor *m, int h);
void handle_count_unbelled(struct handle *hd);
int index_rebuild(struct monitor *m);
void retired_prune(struct monitor *m);

/* monitor-open.c */
int handle_open_cpu(struct monitor *m, struct handle *hd, const struct handle *leader, size_t ci);

/* monitor-enable.c */
cpu_set_t *affinity_save(size_t *ret_size);
int on_cpu(int cpu);

/* monitor-drain.c: one record of D's ring to D's handler. */
int drain_one(const struct perf_event_header *hdr, void *userdata);
