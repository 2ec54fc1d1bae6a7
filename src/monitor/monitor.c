/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Events × CPUs (× cgroups | pids) into one ring per CPU.
 *
 * Each online CPU has a ring owner: a software dummy event that produces
 * nothing itself and owns the mmap. Every event opened on that CPU is
 * redirected into it with PERF_EVENT_IOC_SET_OUTPUT, so the loop polls one
 * fd per CPU however many events there are, and removing an event (live
 * reload) leaves the rings and what other events wrote into them alone.
 * Samples are matched to their source by the id PERF_SAMPLE_IDENTIFIER
 * puts first in every sample. */

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "evmon/async.h"
#include "evmon/cleanup.h"
#include "evmon/monitor.h"
#include "cursor.h"
#include "doorbell.h"


/* One layout for all our events, so one attr parses every sample. */
#define MONITOR_SAMPLE_TYPE \
        (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_RAW)

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
        const struct id_entry *entry;   /* cur's id in the index, or NULL */
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

        size_t *heap;                   /* monitor_drain_ordered(): rings by key, n_cpus slots */
        struct monitor_order_stats order;
        uint64_t order_now;             /* the clock the last ordered pass read */
        uint64_t order_limit;           /* this pass: no record is timed later */
};

static void perf_cpu_done(struct perf_cpu *c) {
        for (size_t i = 0; i < c->n_bells; i++)
                doorbell_close(&c->bells[i]);
        free(c->bells);
        c->bells = NULL;
        c->n_bells = 0;
        ring_done(&c->ring);
        if (c->base && c->base != MAP_FAILED)
                munmap(c->base, c->map_size);
        c->base = NULL;
        c->canary = safe_close(c->canary);
        c->flush = safe_close(c->flush);
        c->flush_id = 0;
        c->flush_counts = false;
        c->flush_lost = 0;
        c->fd = safe_close(c->fd);
        c->armed = false;
        c->full = false;
        c->n_pass = 0;
}

/* The list of rings that are up, after one came up or went down: what
 * each drain walks, so that a host with hundreds of possible CPUs and a
 * few present pays per look for those present only. */
static void up_rebuild(struct monitor *m) {
        m->n_up = 0;
        for (size_t i = 0; i < m->n_cpus; i++)
                if (m->cpus[i].fd >= 0)
                        m->up[m->n_up++] = i;
}

static void handle_close_fds(struct handle *h) {
        if (!h->fds)
                return;
        for (size_t i = 0; i < h->n; i++) {
                safe_close(h->fds[i]);
                if (h->bell_fds)
                        safe_close(h->bell_fds[i]);
        }
        free(h->fds);
        h->fds = NULL;
        free(h->bell_fds);
        h->bell_fds = NULL;
}

static void handle_done(struct handle *h) {
        handle_close_fds(h);
        free(h->ids);
        free(h->heads);
        free(h->filter);
        *h = (struct handle) {};
}

struct monitor *monitor_free(struct monitor *m) {
        if (!m)
                return NULL;

        /* Events first: they write into the rings we unmap below. */
        for (size_t i = 0; i < m->n_handles; i++)
                handle_done(&m->handles[i]);
        free(m->handles);

        for (size_t i = 0; i < m->n_cpus; i++)
                perf_cpu_done(&m->cpus[i]);
        free(m->cpus);
        free(m->up);
        free(m->heap);

        for (size_t i = 0; i < m->n_cgroups; i++)
                safe_close(m->cgroup_fds[i]);
        free(m->cgroup_fds);
        free(m->pids);
        free(m->index);
        free(m);
        return NULL;
}

/* One doorbell per target, in the order monitor_add() opens them (each
 * cgroup, then each pid), or one for system-wide events: a group's members
 * must share its leader's target (the kernel refuses a cgroup member in a
 * CPU-wide group, and a task's events live in the task's context). */
static int perf_cpu_open_bells(struct monitor *m, struct perf_cpu *c) {
        size_t n = m->n_cgroups + m->n_pids ?: 1;
        int r;

        c->bells = calloc(n, sizeof(*c->bells));
        if (!c->bells)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                pid_t target = -1;
                unsigned long flags = 0;

                if (i < m->n_cgroups) {
                        target = m->cgroup_fds[i];
                        flags = PERF_FLAG_PID_CGROUP;
                } else if (i - m->n_cgroups < m->n_pids)
                        target = m->pids[i - m->n_cgroups];

                c->n_bells++;
                r = doorbell_open(&c->bells[i], c->cpu, target, flags, m->attr.use_clockid, m->attr.clockid,
                                  m->page_size);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The canary: whether this CPU's events are still the kernel's. When a
 * CPU goes offline the kernel takes every event off the CPU's context for
 * good (Debian's 6.1 in the VM: they stay open and readable, but count
 * and write nothing again once it is back, and PERF_EVENT_IOC_ENABLE is
 * answered 0 and does nothing): they must be opened again. A CPU that
 * went down and up between two looks at /sys/devices/system/cpu/online
 * shows the same list; the canary tells it. It is an enabled software
 * dummy (it writes nothing), whose time_enabled runs with the clock while
 * it is on the CPU's context and stops for good once taken off (its
 * mmap'ed page is not updated then: only read(2) tells). What was tried
 * and does not work on 6.1: a member of a group whose leader stays off
 * (no read IPI, but its time_enabled never runs: the leader's state is
 * the group's), and the page's lock or times (unchanged by the removal).
 * The price: its read(2) is a function call on that CPU (an IPI), once
 * per CPU per look. */
static int canary_open(struct monitor *m, struct perf_cpu *c) {
        struct perf_event_attr attr = {
                .size = sizeof(attr),
                .type = PERF_TYPE_SOFTWARE,
                .config = PERF_COUNT_SW_DUMMY,
                .read_format = PERF_FORMAT_TOTAL_TIME_ENABLED,
        };
        uint64_t v[2];
        int r;

        r = perf_event_open_fd(&attr, -1, c->cpu, -1, 0);
        if (r < 0)
                return r;
        c->canary = r;
        if (read(c->canary, v, sizeof(v)) != sizeof(v))
                return -EIO;
        c->canary_enabled = v[1];
        return 0;
}

/* The flush: a PERF_RECORD_LOST the kernel holds back. The kernel counts
 * the records it had no room for in the ring (rb->lost) and writes that
 * count as a PERF_RECORD_LOST only at the start of the next record it
 * writes there (__perf_output_begin() in kernel/events/ring_buffer.c). A
 * burst that overflowed a ring we were slow to read, and then stopped,
 * leaves its count in the kernel until the next record on that CPU, which
 * for a filtered or rare event may never come: the records were lost and
 * nobody said so (bench-smoke under ASan on a loaded host: 11,325 of
 * 50,000; evmond stopped by SIGSTOP during a burst: 35,437 of 50,000).
 * So each ring has a cpu-clock event, off, redirected into it: one
 * PERF_EVENT_IOC_REFRESH of 1 enables it for one sample (event_limit:
 * __perf_event_overflow() then disables it), written from its hrtimer on
 * that CPU within FLUSH_PERIOD_NS, and the held count before it. The
 * sample itself is ours alone and goes unseen (drain_sample()). When the
 * ring is full again by then (a burst that went on: a 4-page ring at a
 * full-rate getppid loop, seen), the sample is itself dropped and counted
 * in the next LOST: its own count of lost samples (PERF_FORMAT_LOST,
 * Linux 6.0; older kernels refuse it, and such a loss counts one too
 * many) is taken out of that (drain_lost()). */
#define FLUSH_PERIOD_NS 10000u

static int flush_open(struct monitor *m, struct perf_cpu *c) {
        struct perf_event_attr attr = {
                .size = sizeof(attr),
                .type = PERF_TYPE_SOFTWARE,
                .config = PERF_COUNT_SW_CPU_CLOCK,
                .sample_period = FLUSH_PERIOD_NS,
                /* The ring's layout, so that the LOST record written
                 * under its id parses as the ring owner's do. */
                .sample_type = m->attr.sample_type,
                .sample_id_all = 1,
                .disabled = 1,
                .use_clockid = m->attr.use_clockid,
                .clockid = m->attr.clockid,
                .read_format = PERF_FORMAT_LOST,
        };
        int r;

        r = perf_event_open_fd(&attr, -1, c->cpu, -1, 0);
        if (r == -EINVAL) {
                attr.read_format = 0;
                r = perf_event_open_fd(&attr, -1, c->cpu, -1, 0);
        }
        if (r < 0)
                return r;
        c->flush = r;
        c->flush_counts = attr.read_format != 0;
        c->flush_lost = 0;
        if (ioctl(c->flush, PERF_EVENT_IOC_SET_OUTPUT, c->fd) < 0 ||
            ioctl(c->flush, PERF_EVENT_IOC_ID, &c->flush_id) < 0)
                return negative_errno();
        return 0;
}

static int perf_cpu_open(struct monitor *m, struct perf_cpu *c) {
        struct perf_event_attr attr = {
                .size = sizeof(attr),
                .type = PERF_TYPE_SOFTWARE,
                .config = PERF_COUNT_SW_DUMMY,
                .sample_type = m->attr.sample_type,
                .sample_id_all = 1,
                .disabled = 1,
                /* The kernel refuses SET_OUTPUT between events on
                 * different clocks. */
                .use_clockid = m->attr.use_clockid,
                .clockid = m->attr.clockid,
                /* The ring's wakeup policy is the mmap owner's: wake the
                 * reader once this much is pending, not per event. */
                .watermark = 1,
                .wakeup_watermark = m->attr.wakeup_watermark,
        };
        int r;

        r = perf_event_open_fd(&attr, -1, c->cpu, -1, 0);
        if (r < 0)
                return r;
        c->fd = r;

        /* 1 + 2^n pages. PROT_WRITE lets us publish data_tail, and the
         * kernel then never overwrites what we have not read: it counts
         * PERF_RECORD_LOST instead. */
        c->map_size = m->page_size + m->data_size;
        c->base = mmap(NULL, c->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd, 0);
        if (c->base == MAP_FAILED) {
                c->base = NULL;
                return negative_errno();
        }

        r = ring_init(&c->ring, c->base, m->data_size);
        if (r < 0)
                return r;
        /* A ring opened again starts at 0; its merge keeps its last key. */
        c->head = c->pos = c->seen = c->tail_prev = 0;
        c->cur = NULL;
        c->full = false;

        r = canary_open(m, c);
        if (r < 0)
                return r;
        r = flush_open(m, c);
        if (r < 0)
                return r;

        if (m->doorbell)
                return perf_cpu_open_bells(m, c);
        return 0;
}

int monitor_new(const struct monitor_opts *opts, struct monitor **ret) {
        _cleanup_(monitor_freep) struct monitor *m = NULL;
        _cleanup_(freep) int *cpus = NULL;
        size_t n_cpus = 0, n_up = 0, pages;
        uint64_t wakeup;
        long ps;
        int r;

        /* The caller (the daemon's config) has the one default of each knob. */
        if (!opts || !ret || opts->ring_pages == 0 || opts->wakeup_bytes == 0)
                return -EINVAL;
        pages = opts->ring_pages;
        if ((pages & (pages - 1)) != 0)
                return -EINVAL;
        if ((opts->n_cgroups > 0 && !opts->cgroup_fds) || (opts->n_pids > 0 && !opts->pids))
                return -EINVAL;

        ps = sysconf(_SC_PAGESIZE);
        if (ps <= 0)
                return -EINVAL;
        if (pages > SIZE_MAX / (size_t) ps - 1)
                return -EINVAL;

        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->page_size = (size_t) ps;
        m->data_size = pages * (size_t) ps;
        /* The kernel drops a record when less than its size is free, and
         * a record is at most 64 KiB (header.size is a u16). A ring of 128
         * KiB or less counts as full past its half: a record that misses
         * a ring less than half full would have to be larger than half
         * the ring. */
        m->full_bytes = m->data_size > 2 * 65536u ? m->data_size - 65536u : m->data_size / 2;
        m->doorbell = opts->doorbell;

        wakeup = opts->wakeup_bytes;
        if (wakeup > m->data_size || wakeup > UINT32_MAX)
                return -EINVAL;

        m->attr = (struct perf_event_attr) {
                .size = sizeof(struct perf_event_attr),
                .sample_period = 1,
                .sample_type = MONITOR_SAMPLE_TYPE | (opts->sample_cgroup ? PERF_SAMPLE_CGROUP : 0),
                .sample_id_all = 1,
                .use_clockid = 1,
                .clockid = opts->clockid,
                .disabled = 1,
                .watermark = 1,
                .wakeup_watermark = (uint32_t) wakeup,
        };

        if (opts->n_cgroups > 0) {
                m->cgroup_fds = calloc(opts->n_cgroups, sizeof(int));
                if (!m->cgroup_fds)
                        return -ENOMEM;
                for (size_t i = 0; i < opts->n_cgroups; i++) {
                        /* Ours, so the caller's fds need not outlive us. */
                        int fd = fcntl(opts->cgroup_fds[i], F_DUPFD_CLOEXEC, 3);

                        if (fd < 0)
                                return negative_errno();
                        m->cgroup_fds[m->n_cgroups++] = fd;
                }
        }

        if (opts->n_pids > 0) {
                m->pids = calloc(opts->n_pids, sizeof(pid_t));
                if (!m->pids)
                        return -ENOMEM;
                memcpy(m->pids, opts->pids, opts->n_pids * sizeof(pid_t));
                m->n_pids = opts->n_pids;
        }

        /* A ring slot for every possible CPU: one that is offline, or not
         * even present (a vCPU a hypervisor may hot-add later), has no
         * ring (perf_event_open() there is ENODEV) until monitor_cpu_up().
         * The kernel fixes the possible CPUs at boot (ACPI's disabled
         * processors count), and never brings one online outside them, so
         * a slot is never missing and ring indexes never move. A slot
         * costs about 300 bytes, and 16 per event and target; a drain
         * walks the rings that are up only (up_rebuild()). Where there
         * is no "possible" file, the present CPUs. */
        r = perf_cpu_list("possible", &cpus, &n_cpus);
        if (r < 0)
                r = perf_cpu_list("present", &cpus, &n_cpus);
        if (r < 0)
                return r;
        if (n_cpus == 0)
                return -ENODEV;

        m->cpus = calloc(n_cpus, sizeof(*m->cpus));
        m->up = calloc(n_cpus, sizeof(*m->up));
        m->heap = calloc(n_cpus, sizeof(*m->heap));
        if (!m->cpus || !m->up || !m->heap)
                return -ENOMEM;
        for (size_t i = 0; i < n_cpus; i++) {
                m->cpus[i] = (struct perf_cpu) { .cpu = cpus[i], .fd = -1, .canary = -1, .flush = -1 };
                m->n_cpus++;
                r = perf_cpu_open(m, &m->cpus[i]);
                if (r == -ENODEV) {
                        /* Offline or not present (or gone just now). */
                        perf_cpu_done(&m->cpus[i]);
                        continue;
                }
                if (r < 0)
                        return r;
                n_up++;
        }
        if (n_up == 0)
                return -ENODEV;
        up_rebuild(m);

        *ret = TAKE_PTR(m);
        return 0;
}

static int cmp_id_entry(const void *a, const void *b) {
        const struct id_entry *x = a, *y = b;

        return (x->id > y->id) - (x->id < y->id);
}


/* Rebuilds the id index over active and retired handles. On failure the
 * old index stays; the callers keep it correct in that case (see there). */
static int index_rebuild(struct monitor *m) {
        struct id_entry *index = NULL;
        size_t n = 0, k = 0;

        /* The open ones only: a slot of a CPU that is down (every
         * possible CPU has one) has no id. */
        for (size_t h = 0; h < m->n_handles; h++)
                if (m->handles[h].state != HANDLE_FREE)
                        for (size_t i = 0; i < m->handles[h].n; i++)
                                n += m->handles[h].ids[i] != 0;

        if (n > 0) {
                index = calloc(n, sizeof(*index));
                if (!index)
                        return -ENOMEM;
        }

        for (size_t h = 0; h < m->n_handles; h++) {
                if (m->handles[h].state == HANDLE_FREE)
                        continue;
                for (size_t i = 0; i < m->handles[h].n; i++)
                        if (m->handles[h].ids[i] != 0)
                                index[k++] = (struct id_entry) { .id = m->handles[h].ids[i], .handle = h };
        }
        n = k;

        if (n > 0)
                qsort(index, n, sizeof(*index), cmp_id_entry);
        free(m->index);
        m->index = index;
        m->n_index = n;
        return 0;
}

static const struct id_entry *index_find(const struct monitor *m, uint64_t id) {
        struct id_entry key = { .id = id };

        if (m->n_index == 0)
                return NULL;
        return bsearch(&key, m->index, m->n_index, sizeof(*m->index), cmp_id_entry);
}

/* A CPU that is down has no ring: 0 for both, which a retired handle's
 * head of 0 there (set in monitor_cpu_down()) is never behind. */
static uint64_t cpu_tail(const struct perf_cpu *c) {
        return c->fd >= 0 ? c->ring.page->data_tail : 0;
}

static uint64_t cpu_head(const struct perf_cpu *c) {
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
static void ring_look(const struct monitor *m, struct perf_cpu *c, uint64_t head) {
        if (head - c->tail_prev >= m->full_bytes)
                c->full = true;
}

/* Frees retired handles whose samples every ring has been read past: no
 * record with their ids can come any more. */
static void retired_prune(struct monitor *m) {
        bool changed = false;

        for (size_t h = 0; h < m->n_handles; h++) {
                struct handle *hd = &m->handles[h];
                bool done = true;

                /* Its fds are closed now, so the kernel writes nothing more
                 * for it: the heads read after that bound its last samples. */
                if (hd->state == HANDLE_CLOSING && async_done(hd->close_ticket)) {
                        for (size_t i = 0; i < m->n_cpus; i++)
                                hd->heads[i] = cpu_head(&m->cpus[i]);
                        hd->state = HANDLE_RETIRED;
                }
                if (hd->state != HANDLE_RETIRED)
                        continue;
                for (size_t i = 0; i < m->n_cpus && done; i++)
                        if ((int64_t) (cpu_tail(&m->cpus[i]) - hd->heads[i]) < 0)
                                done = false;
                if (!done)
                        continue;

                /* The index may keep pointing here if the rebuild fails:
                 * a FREE handle is never delivered to, just like a retired
                 * one. */
                free(hd->ids);
                free(hd->heads);
                *hd = (struct handle) { .state = HANDLE_FREE };
                /* The slot is taken again by the next monitor_add(): a
                 * member must not take that one for its leader. */
                for (size_t j = 0; j < m->n_handles; j++)
                        if (m->handles[j].group == (int) h)
                                m->handles[j].group = -1;
                changed = true;
        }

        if (changed)
                (void) index_rebuild(m);
}

/* Whether events of perf TYPE may be opened pinned: see event_open(). */
static bool pin_fits(uint32_t type) {
        return type == PERF_TYPE_TRACEPOINT ||
               (doorbell_fits(type) && type != PERF_TYPE_SOFTWARE && type != PERF_TYPE_BREAKPOINT);
}

/* Opens SRC on C for PID (or a cgroup) into C's ring, and with doorbells
 * its member of C's doorbell for target T into *RET_BELL_FD, or -errno
 * when the kernel refuses the copy (the event then works, only without a
 * doorbell), -EOPNOTSUPP when it needs none (no doorbells, or an event
 * that writes no records, as a counting one). */
static int event_open(struct monitor *m, const char *filter, bool quiet, const struct perf_event_attr *tmpl,
                      struct perf_cpu *c, size_t t, pid_t pid, unsigned long flags, bool inherit, int group_fd,
                      int *ret_fd, uint64_t *ret_id, int *ret_bell_fd) {
        _cleanup_(closep) int fd = -1;
        struct perf_event_attr attr = *tmpl;

        /* Only a task's events follow its children (the kernel refuses
         * inherit on a CPU-wide event). */
        attr.inherit = inherit && attr.inherit;
        if (!attr.inherit)
                attr.inherit_thread = 0;

        /* Group leaders of the tracepoint, kprobe and uprobe PMUs go
         * pinned. The kernel's reschedule for a flexible event's enable
         * (ctx_resched(): another tool's, an evmond's) takes only flexible
         * groups off and back at the head of a tracepoint's list; a
         * handler standing on a moved node walks the list again from the
         * head, and writes the records of the events it had passed once
         * more. A pinned node stays where it was: a walk reaches it once.
         * These PMUs always take an event (perf_trace_add() cannot fail),
         * so a pinned one never lands in the error state a pinned event
         * gets when it cannot be scheduled. Software events (cpu-clock
         * and the like) stay flexible: they lead groups of hardware
         * counters, which a pinned group would put at risk of that error
         * state. Members may not be pinned (EINVAL). */
        if (group_fd < 0 && pin_fits(attr.type))
                attr.pinned = 1;

        /* ENOENT/EINVAL (no such event, bad attr) go back as they are: the
         * caller knows which event it was. */
        fd = perf_event_open_fd(&attr, pid, c->cpu, group_fd, flags);
        if (fd < 0)
                return fd;

        if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, c->fd) < 0)
                return negative_errno();
        if (filter && ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter) < 0)
                return negative_errno();
        if (ioctl(fd, PERF_EVENT_IOC_ID, ret_id) < 0)
                return negative_errno();

        *ret_bell_fd = -EOPNOTSUPP;
        if (!quiet && t < c->n_bells && doorbell_rings_for(&attr))
                *ret_bell_fd = doorbell_member_open(&c->bells[t], &attr, pid, flags, filter);

        *ret_fd = TAKE_FD(fd);
        return 0;
}

/* What the monitor alone chooses, over what the source asks for: samples
 * and records carry IDENTIFIER (first in a sample, last in a record's
 * sample_id: the ring mixes every event's records, and this is how we
 * tell whose layout to parse with), TID, TIME and CPU for the line's
 * header, reads carry ids, and every event shares the ring's clock (the
 * kernel refuses SET_OUTPUT across clocks). */
static int source_attr(const struct monitor *m, const struct monitor_source *src, struct perf_event_attr *ret) {
        struct perf_event_attr a;

        if (!src->attr) {
                a = m->attr;
                a.type = src->type;
                a.config = src->config;
                a.config1 = src->config1;
                a.config2 = src->config2;
                a.inherit = 1;
                *ret = a;
                return 0;
        }

        a = *src->attr;
        if (a.size == 0 || a.size > sizeof(a))
                a.size = sizeof(a);
        a.sample_type |= MONITOR_SAMPLE_TYPE & ~(uint64_t) PERF_SAMPLE_RAW;
        if (m->attr.sample_type & PERF_SAMPLE_CGROUP)
                a.sample_type |= PERF_SAMPLE_CGROUP;
        if (a.read_format || (a.sample_type & PERF_SAMPLE_READ))
                a.read_format |= PERF_FORMAT_ID;
        a.sample_id_all = 1;
        a.disabled = 1;
        a.use_clockid = m->attr.use_clockid;
        a.clockid = m->attr.clockid;
        a.watermark = 0;
        a.wakeup_events = 0;
        *ret = a;
        return 0;
}

static struct handle *handle_get(struct monitor *m, int h);

/* The group leader's fd for our I-th fd (same CPU and target), or -1. */
#define GROUP_FD(leader, i) ((leader) ? ((i) < (leader)->n ? (leader)->fds[i] : -2) : -1)

/* Opens HD's events on ring C (index CI) into slots CI * per-CPU on, the
 * group's leader LEADER (or NULL) already open there. A CPU that is down
 * keeps -1 there. On failure what was opened on C is closed again. */
static int handle_open_cpu(struct monitor *m, struct handle *hd, const struct handle *leader, size_t ci) {
        size_t per_cpu = m->n_cgroups + m->n_pids ?: 1, base = ci * per_cpu;
        struct perf_cpu *c = &m->cpus[ci];
        int r = 0;

        if (c->fd < 0)
                return 0;
        for (size_t t = 0; t < per_cpu; t++) {
                size_t k = base + t;
                pid_t target = -1;
                unsigned long flags = 0;
                bool inherit = false;

                if (t < m->n_cgroups) {
                        target = m->cgroup_fds[t];
                        flags = PERF_FLAG_PID_CGROUP;
                } else if (t - m->n_cgroups < m->n_pids) {
                        /* inherit: threads and children forked later count
                         * too; their samples go to this event's ring and
                         * carry its id. */
                        target = m->pids[t - m->n_cgroups];
                        inherit = true;
                }
                r = event_open(m, hd->filter, hd->quiet, &hd->attr, c, t, target, flags, inherit,
                               GROUP_FD(leader, k), &hd->fds[k], &hd->ids[k], &hd->bell_fds[k]);
                /* A target process that exited since the monitor began:
                 * nothing to watch there any more, the slot stays -1 (as
                 * on a CPU that is down); the live targets still count.
                 * monitor_add() refuses when none is left. */
                if (r == -ESRCH && flags == 0 && target > 0) {
                        r = 0;
                        continue;
                }
                if (r < 0)
                        break;
        }
        if (r < 0)
                for (size_t t = 0; t < per_cpu; t++) {
                        size_t k = base + t;

                        hd->fds[k] = safe_close(hd->fds[k]);
                        safe_close(hd->bell_fds[k]);
                        hd->bell_fds[k] = -EOPNOTSUPP;
                        hd->ids[k] = 0;
                }
        return r;
}

static void handle_count_unbelled(struct handle *hd) {
        hd->n_unbelled = 0;
        for (size_t k = 0; k < hd->n; k++)
                hd->n_unbelled += hd->fds[k] >= 0 && hd->bell_fds[k] < 0 && hd->bell_fds[k] != -EOPNOTSUPP;
}

int monitor_add(struct monitor *m, const struct monitor_source *src) {
        size_t n_targets, n_max, h;
        struct handle hd = {};
        struct handle *handles;
        const struct handle *leader = NULL;
        int r;

        if (!m || !src)
                return -EINVAL;
        if (m->n_handles >= INT_MAX)
                return -ENOSPC;

        retired_prune(m);

        r = source_attr(m, src, &hd.attr);
        if (r < 0)
                return r;
        hd.group = -1;
        if (src->in_group) {
                leader = handle_get(m, src->group);
                if (!leader)
                        return -ENOENT;
                hd.group = src->group;
        }

        /* No targets: system-wide. Otherwise each cgroup and each pid. */
        n_targets = m->n_cgroups + m->n_pids ?: 1;
        n_max = m->n_cpus * n_targets;
        if (leader && leader->n != n_max)
                return -EINVAL;

        hd.fds = malloc(n_max * sizeof(*hd.fds));
        hd.ids = malloc(n_max * sizeof(*hd.ids));
        hd.bell_fds = malloc(n_max * sizeof(*hd.bell_fds));
        if (!hd.fds || !hd.ids || !hd.bell_fds) {
                r = -ENOMEM;
                goto fail;
        }
        /* Every slot, so that a CPU that is down holds -1 and a failure
         * closes what is open. */
        for (size_t k = 0; k < n_max; k++) {
                hd.fds[k] = -1;
                hd.ids[k] = 0;
                hd.bell_fds[k] = -EOPNOTSUPP;
        }
        hd.n = n_max;
        hd.quiet = src->quiet;
        if (src->filter) {
                hd.filter = strdup(src->filter);
                if (!hd.filter) {
                        r = -ENOMEM;
                        goto fail;
                }
        }

        for (size_t i = 0; i < m->n_cpus; i++) {
                r = handle_open_cpu(m, &hd, leader, i);
                if (r < 0)
                        goto fail;
        }
        /* Some CPU is always up, so no fd at all means every target
         * process has exited (handle_open_cpu()). */
        r = -ESRCH;
        for (size_t k = 0; k < n_max && r < 0; k++)
                if (hd.fds[k] >= 0)
                        r = 0;
        if (r < 0)
                goto fail;
        handle_count_unbelled(&hd);

        /* A slot retired_prune() freed first: an add, or a reload that
         * changes an event, now and then for months would otherwise grow
         * the table, and every walk of it, for good. */
        for (h = 0; h < m->n_handles && m->handles[h].state != HANDLE_FREE; h++)
                ;
        if (h == m->n_handles) {
                handles = reallocarray(m->handles, m->n_handles + 1, sizeof(*handles));
                if (!handles) {
                        r = -ENOMEM;
                        goto fail;
                }
                m->handles = handles;
                m->handles[m->n_handles++] = (struct handle) { .state = HANDLE_FREE };
        }

        hd.state = HANDLE_ACTIVE;
        hd.userdata = src->userdata;
        m->handles[h] = hd;

        r = index_rebuild(m);
        if (r < 0) {
                /* Without index entries its samples would count as bad. */
                m->handles[h] = (struct handle) { .state = HANDLE_FREE };
                goto fail;
        }

        return (int) h;

fail:
        handle_done(&hd);
        return r;
}

static struct handle *handle_get(struct monitor *m, int h) {
        if (!m || h < 0 || (size_t) h >= m->n_handles)
                return NULL;
        if (m->handles[h].state != HANDLE_ACTIVE)
                return NULL;
        return &m->handles[h];
}

/* Whether an active handle is in H's group. */
static bool handle_leads(const struct monitor *m, int h) {
        for (size_t i = 0; i < m->n_handles; i++)
                if ((int) i != h && m->handles[i].state == HANDLE_ACTIVE && m->handles[i].group == h)
                        return true;
        return false;
}

int monitor_remove(struct monitor *m, int h) {
        struct handle *hd;
        uint64_t *heads;

        hd = handle_get(m, h);
        if (!hd)
                return -ENOENT;

        /* Allocated first so that removing cannot fail half-way. */
        heads = calloc(m->n_cpus, sizeof(*heads));
        if (!heads)
                return -ENOMEM;

        /* The last close of a tracepoint's fd waits for an RCU grace
         * period (perf_trace_event_unreg() ->
         * tracepoint_synchronize_unregister()), milliseconds in which the
         * loop would read no ring while the other events fill them. So the
         * events stop here (the disable is an IPI per CPU, quick) and the
         * async worker closes them. Its ids stay in the index, mapped to
         * no userdata, until retired_prune() sees the close done: only
         * then does the kernel write nothing more for them (perf_release()
         * detaches them synchronously; an interrupted write of a disabled
         * event is over when the grace period is), and the heads it reads
         * then bound where their last samples can be. A leader whose
         * members still run is not disabled: that would stop them too. */
        if (!handle_leads(m, h))
                for (size_t i = 0; i < hd->n; i++) {
                        if (hd->fds[i] >= 0)
                                (void) ioctl(hd->fds[i], PERF_EVENT_IOC_DISABLE, 0);
                        if (hd->bell_fds && hd->bell_fds[i] >= 0)
                                (void) ioctl(hd->bell_fds[i], PERF_EVENT_IOC_DISABLE, 0);
                }
        (void) async_close_fds(TAKE_PTR(hd->fds), hd->n);
        hd->close_ticket = async_close_fds(TAKE_PTR(hd->bell_fds), hd->n);

        hd->heads = heads;
        hd->userdata = NULL;
        /* Only a CPU that comes up needed it, and opens no retired handle. */
        free(hd->filter);
        hd->filter = NULL;
        hd->state = HANDLE_CLOSING;

        retired_prune(m);
        return 0;
}

/* The calling thread's CPU mask, to put back after on_cpu(); NULL when
 * it cannot be read (the enables then come from wherever we run). */
static cpu_set_t *affinity_save(size_t *ret_size) {
        for (size_t n = 1024;; n *= 2) {
                cpu_set_t *set = CPU_ALLOC(n);
                size_t size = CPU_ALLOC_SIZE(n);

                if (!set)
                        return NULL;
                if (sched_getaffinity(0, size, set) == 0) {
                        *ret_size = size;
                        return set;
                }
                CPU_FREE(set);
                /* EINVAL: the mask is smaller than the kernel's nr_cpu_ids. */
                if (errno != EINVAL || n >= 65536)
                        return NULL;
        }
}

/* Moves the calling thread onto CPU; sched_setaffinity() returns once it
 * runs there. Fails where a cpuset keeps us off CPU. */
static int on_cpu(int cpu) {
        size_t size = CPU_ALLOC_SIZE((size_t) cpu + 1);
        cpu_set_t *set = CPU_ALLOC((size_t) cpu + 1);
        int r = 0;

        if (!set)
                return -ENOMEM;
        CPU_ZERO_S(size, set);
        CPU_SET_S((size_t) cpu, size, set);
        if (sched_setaffinity(0, size, set) < 0)
                r = negative_errno();
        CPU_FREE(set);
        return r;
}

/* Enables HD's K-th fd. A group member whose leader is on goes in with
 * the leader off, then the leader back on: the kernel schedules a member
 * enabled beside a running leader only by rescheduling the member's own
 * PMU (__perf_event_enable()'s ctx_resched()), and where that is not the
 * leader's (page-faults under a cpu-clock or task-clock leader: the
 * software PMU under perf_cpu_clock's) the member stays INACTIVE, on a
 * CPU-wide context for good: counting nothing, its running time 0, its
 * read in every group sample 0. Enabling a leader schedules its whole
 * group in, members included. (perf opens members enabled and enables
 * leaders only, evsel__config(); ours are opened disabled so that the
 * time between open and enable does not count as enabled.) */
static int handle_fd_enable(struct monitor *m, const struct handle *hd, size_t k) {
        const struct handle *leader = hd->group >= 0 ? handle_get(m, hd->group) : NULL;
        int leader_fd = leader && leader->enabled && k < leader->n ? leader->fds[k] : -1;
        int r = 0;

        if (leader_fd >= 0 && ioctl(leader_fd, PERF_EVENT_IOC_DISABLE, 0) < 0)
                return negative_errno();
        if (ioctl(hd->fds[k], PERF_EVENT_IOC_ENABLE, 0) < 0)
                r = negative_errno();
        if (leader_fd >= 0 && ioctl(leader_fd, PERF_EVENT_IOC_ENABLE, 0) < 0 && r == 0)
                r = negative_errno();
        return r;
}

int monitor_disable(struct monitor *m, int h) {
        struct handle *hd = handle_get(m, h);

        if (!hd)
                return -ENOENT;
        hd->enabled = false;
        for (size_t i = 0; i < hd->n; i++) {
                if (hd->fds[i] < 0)
                        continue;       /* its CPU is down */
                if (ioctl(hd->fds[i], PERF_EVENT_IOC_DISABLE, 0) < 0)
                        return negative_errno();
                if (hd->bell_fds[i] >= 0 && ioctl(hd->bell_fds[i], PERF_EVENT_IOC_DISABLE, 0) < 0)
                        return negative_errno();
        }
        return 0;
}

/* Pausable doorbells of C off (HOLD) or on again around enabling members:
 * see doorbell_hold(). All of them, whatever fails; the first error. */
static int cpu_bells_hold(struct perf_cpu *c, bool hold) {
        int r, ret = 0;

        for (size_t k = 0; k < c->n_bells; k++) {
                r = doorbell_hold(&c->bells[k], hold);
                if (r < 0 && ret == 0)
                        ret = r;
        }
        return ret;
}

int monitor_enable(struct monitor *m, int h) {
        cpu_set_t *saved = NULL;
        size_t per_cpu, saved_size = 0;
        struct handle *hd;
        int r = 0, k;

        hd = handle_get(m, h);
        if (!hd)
                return -ENOENT;

        /* Disarmed first: the reader arms (and reads once more) on its
         * next tick. Where doorbells are enabled and disabled, enabling a
         * member below then finds its leader off and reschedules nothing
         * (an enable in a running group would: see below), and the next
         * arm schedules the members in with their leader. A pausable
         * doorbell's leader runs for good: its member's enable reschedules
         * like the main event's, from the same CPU. */
        for (size_t i = 0; i < m->n_cpus; i++) {
                r = monitor_ring_disarm(m, i);
                if (r < 0)
                        return r;
        }

        /* Each CPU's fds are enabled from that CPU. Enabling an event makes
         * the kernel reschedule the running events of its PMU on the
         * event's CPU (ctx_resched(): every flexible group out and back
         * in; for tracepoint, probe and software events each is taken off
         * its tracepoint's or software event's hlist and put back at the
         * head). From another CPU that is an IPI, which may land while a
         * handler on the target CPU walks that very list: the walk then
         * skips (or repeats) events, and an event that runs all along
         * misses the record in flight, with no PERF_RECORD_LOST and no
         * count anywhere. Seen: test-reload's kept getppid event one record
         * short of 200,000 after the reload enabled getpgid; a getppid loop
         * on one CPU while another enabled tracepoint events there lost 12
         * to 47 records per million, and none with the enables made on the
         * loop's own CPU. There the kernel runs the same code directly with
         * interrupts off, and no handler can be part-way through its walk:
         * tracepoint, probe and software event handlers run with
         * preemption off, and interrupt handlers nest above us. Where a
         * cpuset keeps us off a CPU, its enables come from here, as before.
         * Pid targets' events live in their task's context and are
         * rescheduled where the task runs, which this cannot choose. */
        per_cpu = m->n_cgroups + m->n_pids ?: 1;
        saved = affinity_save(&saved_size);
        for (size_t c = 0; c < m->n_cpus && r >= 0; c++) {
                if (m->cpus[c].fd < 0)
                        continue;       /* down: monitor_cpu_up() enables it there */
                if (saved)
                        (void) on_cpu(m->cpus[c].cpu);
                r = cpu_bells_hold(&m->cpus[c], true);
                for (size_t i = c * per_cpu; r >= 0 && i < (c + 1) * per_cpu && i < hd->n; i++) {
                        if (hd->fds[i] < 0)
                                continue;
                        /* An enable_on_exec event of a pid target is the
                         * kernel's to enable, at the task's next exec
                         * (perf_event_enable_on_exec(); children inherit
                         * it off and are enabled at theirs): the first
                         * enable leaves it off, or it counted from evmond's
                         * start. A later enable (a runtime one after a
                         * disable) is the user's. A CPU-wide or cgroup
                         * event is in no task's context: no exec enables
                         * it, so ours does. */
                        if (!hd->started && hd->attr.enable_on_exec && monitor_fd_pid_target(m, i, NULL))
                                continue;
                        r = handle_fd_enable(m, hd, i);
                        if (r < 0)
                                break;
                        /* Counts only while its leader is armed. */
                        if (hd->bell_fds[i] >= 0 && ioctl(hd->bell_fds[i], PERF_EVENT_IOC_ENABLE, 0) < 0) {
                                r = negative_errno();
                                break;
                        }
                }
                k = cpu_bells_hold(&m->cpus[c], false);
                if (k < 0 && r >= 0)
                        r = k;
        }
        if (saved) {
                (void) sched_setaffinity(0, saved_size, saved);
                CPU_FREE(saved);
        }
        if (r >= 0)
                hd->enabled = hd->started = true;
        return r < 0 ? r : 0;
}

bool monitor_ring_up(const struct monitor *m, size_t i) {
        return m && i < m->n_cpus && m->cpus[i].fd >= 0;
}

bool monitor_ring_alive(struct monitor *m, size_t i) {
        struct perf_cpu *c;
        uint64_t v[2];
        bool ran;

        if (!monitor_ring_up(m, i))
                return false;
        c = &m->cpus[i];
        if (read(c->canary, v, sizeof(v)) != sizeof(v))
                return true;    /* cannot tell: do not tear down what may work */
        /* On the context its enabled time runs; taken off, it stands
         * still from then on. Only standing still counts: comparing how
         * far it ran with our clock flagged a working CPU in the VM (the
         * kernel's perf clock is not CLOCK_MONOTONIC). So a CPU taken off
         * after the previous read shows at the read after this one. */
        ran = v[1] != c->canary_enabled;
        c->canary_enabled = v[1];
        return ran;
}

int monitor_cpu_down(struct monitor *m, size_t i) {
        size_t per_cpu;

        if (!m || i >= m->n_cpus)
                return -EINVAL;
        if (m->cpus[i].fd < 0)
                return 0;
        per_cpu = m->n_cgroups + m->n_pids ?: 1;
        for (size_t h = 0; h < m->n_handles; h++) {
                struct handle *hd = &m->handles[h];

                if (hd->state == HANDLE_RETIRED) {
                        hd->heads[i] = 0;       /* see cpu_tail() */
                        continue;
                }
                if (hd->state != HANDLE_ACTIVE)
                        continue;
                for (size_t k = i * per_cpu; k < (i + 1) * per_cpu && k < hd->n; k++) {
                        hd->fds[k] = safe_close(hd->fds[k]);
                        safe_close(hd->bell_fds[k]);
                        hd->bell_fds[k] = -EOPNOTSUPP;
                        hd->ids[k] = 0;
                }
                handle_count_unbelled(hd);
        }
        /* Events first: they write into the ring. */
        perf_cpu_done(&m->cpus[i]);
        up_rebuild(m);
        (void) index_rebuild(m);
        retired_prune(m);
        return 0;
}

int monitor_cpu_up(struct monitor *m, size_t i) {
        cpu_set_t *saved = NULL;
        size_t per_cpu, saved_size = 0;
        struct perf_cpu *c;
        int r, ret = 0;

        if (!m || i >= m->n_cpus)
                return -EINVAL;
        c = &m->cpus[i];
        if (c->fd >= 0)
                return 0;
        r = perf_cpu_open(m, c);
        if (r < 0) {
                perf_cpu_done(c);
                return r;
        }
        up_rebuild(m);

        /* Handles in the order they were added: a group's leader before
         * its members. One that fails stays closed on this CPU; the rest
         * go on. */
        per_cpu = m->n_cgroups + m->n_pids ?: 1;
        for (size_t h = 0; h < m->n_handles; h++) {
                struct handle *hd = &m->handles[h];
                const struct handle *leader = NULL;

                if (hd->state != HANDLE_ACTIVE)
                        continue;
                if (hd->group >= 0)
                        leader = handle_get(m, hd->group);
                r = handle_open_cpu(m, hd, leader, i);
                if (r < 0 && ret == 0)
                        ret = r;
                handle_count_unbelled(hd);
        }
        r = index_rebuild(m);
        if (r < 0 && ret == 0)
                ret = r;

        /* Enabled from the CPU itself, as monitor_enable() does. */
        saved = affinity_save(&saved_size);
        if (saved)
                (void) on_cpu(c->cpu);
        r = cpu_bells_hold(c, true);
        if (r < 0 && ret == 0)
                ret = r;
        for (size_t h = 0; h < m->n_handles; h++) {
                struct handle *hd = &m->handles[h];

                if (hd->state != HANDLE_ACTIVE || !hd->enabled)
                        continue;
                for (size_t k = i * per_cpu; k < (i + 1) * per_cpu && k < hd->n; k++) {
                        if (hd->fds[k] < 0)
                                continue;
                        r = handle_fd_enable(m, hd, k);
                        if (r < 0 && ret == 0)
                                ret = r;
                        if (hd->bell_fds[k] >= 0 && ioctl(hd->bell_fds[k], PERF_EVENT_IOC_ENABLE, 0) < 0 &&
                            ret == 0)
                                ret = negative_errno();
                }
        }
        r = cpu_bells_hold(c, false);
        if (r < 0 && ret == 0)
                ret = r;
        if (saved) {
                (void) sched_setaffinity(0, saved_size, saved);
                CPU_FREE(saved);
        }
        return ret;
}

bool monitor_doorbells_cover(const struct monitor *m) {
        if (!m || !m->doorbell)
                return false;
        for (size_t h = 0; h < m->n_handles; h++)
                if (m->handles[h].state == HANDLE_ACTIVE && m->handles[h].n_unbelled > 0)
                        return false;
        return true;
}

size_t monitor_ring_n_doorbells(const struct monitor *m, size_t i) {
        if (!m || i >= m->n_cpus)
                return 0;
        return m->cpus[i].n_bells;
}

int monitor_ring_doorbell_fd(const struct monitor *m, size_t i, size_t k) {
        if (!m || i >= m->n_cpus || k >= m->cpus[i].n_bells)
                return -EINVAL;
        return m->cpus[i].bells[k].fd;
}

int monitor_ring_arm(struct monitor *m, size_t i) {
        struct perf_cpu *c;
        int r;

        if (!m || i >= m->n_cpus)
                return -EINVAL;
        c = &m->cpus[i];
        for (size_t k = 0; k < c->n_bells; k++) {
                r = doorbell_arm(&c->bells[k]);
                if (r < 0)
                        return r;
        }
        c->armed = c->n_bells > 0;
        return 0;
}

int monitor_ring_disarm(struct monitor *m, size_t i) {
        struct perf_cpu *c;
        int r, ret = 0;

        if (!m || i >= m->n_cpus)
                return -EINVAL;
        c = &m->cpus[i];
        /* All of them, whatever fails: a bell left armed only costs a wakeup. */
        for (size_t k = 0; k < c->n_bells; k++) {
                r = doorbell_disarm(&c->bells[k]);
                if (r < 0 && ret == 0)
                        ret = r;
        }
        c->armed = false;
        return ret;
}

bool monitor_doorbells_pausable(const struct monitor *m) {
        bool any = false;

        if (!m || !m->doorbell)
                return false;
        for (size_t i = 0; i < m->n_cpus; i++)
                for (size_t k = 0; k < m->cpus[i].n_bells; k++) {
                        if (m->cpus[i].bells[k].fd < 0)
                                continue;
                        if (!m->cpus[i].bells[k].pausable)
                                return false;
                        any = true;
                }
        return any;
}

bool monitor_ring_armed(const struct monitor *m, size_t i) {
        /* A CPU that is down writes nothing: as good as armed. */
        return m && i < m->n_cpus && (m->cpus[i].armed || m->cpus[i].fd < 0);
}

int monitor_ring_flush_lost(struct monitor *m, size_t i) {
        struct perf_cpu *c;
        cpu_set_t *saved;
        size_t saved_size = 0;
        int r = 1;

        if (!m || i >= m->n_cpus)
                return -EINVAL;
        c = &m->cpus[i];
        if (c->fd < 0 || c->flush < 0 || !c->full)
                return 0;
        /* Whatever was dropped before now comes out ahead of the flush's
         * record; what comes after is a later look's to judge, from here. */
        c->full = false;
        c->tail_prev = c->ring.page->data_tail;
        /* From the CPU itself, as monitor_enable() does: an enable from
         * elsewhere is an IPI that may reschedule (on kernels before 6.2,
         * whose ctx_resched() takes out every PMU's events) the very
         * tracepoint list a handler there is walking. */
        saved = affinity_save(&saved_size);
        if (saved)
                (void) on_cpu(c->cpu);
        if (ioctl(c->flush, PERF_EVENT_IOC_REFRESH, 1) < 0)
                r = negative_errno();
        if (saved) {
                (void) sched_setaffinity(0, saved_size, saved);
                CPU_FREE(saved);
        }
        return r;
}

size_t monitor_n_rings(const struct monitor *m) {
        return m ? m->n_cpus : 0;
}

const size_t *monitor_rings_up(const struct monitor *m, size_t *ret_n) {
        if (!m || !ret_n) {
                if (ret_n)
                        *ret_n = 0;
                return NULL;
        }
        *ret_n = m->n_up;
        return m->up;
}

int monitor_ring_fd(const struct monitor *m, size_t i) {
        if (!m || i >= m->n_cpus)
                return -EINVAL;
        if (m->cpus[i].fd < 0)
                return -ENODEV;
        return m->cpus[i].fd;
}

int monitor_ring_cpu(const struct monitor *m, size_t i) {
        if (!m || i >= m->n_cpus)
                return -EINVAL;
        return m->cpus[i].cpu;
}

uint64_t monitor_ring_lost(const struct monitor *m, size_t i) {
        if (!m || i >= m->n_cpus)
                return 0;
        return m->cpus[i].lost;
}

bool monitor_ring_take_malformed(struct monitor *m, size_t i, struct monitor_malformed *ret) {
        struct perf_cpu *c;

        if (!m || i >= m->n_cpus || !ret)
                return false;
        c = &m->cpus[i];
        if (!c->malformed_kept || c->malformed_taken)
                return false;
        *ret = c->malformed;
        c->malformed_taken = true;
        return true;
}

uint64_t monitor_ring_bad(const struct monitor *m, size_t i) {
        if (!m || i >= m->n_cpus)
                return 0;
        return m->cpus[i].bad + m->cpus[i].ring.n_bad;
}

struct drain {
        struct monitor *m;
        struct perf_cpu *c;
        const struct monitor_handler *h;
        void *ctx;
        unsigned quiet;         /* records of quiet sources */
        const struct id_entry *hint;    /* the ordered drain found the record's id already */
};

/* A record of D's ring that does not parse: counted, and the first one
 * kept for monitor_ring_take_malformed() (no allocation: a fixed copy). */
static void drain_bad(struct drain *d, const struct perf_event_header *hdr, const char *why) {
        struct perf_cpu *c = d->c;

        c->bad++;
        if (c->malformed_kept)
                return;
        c->malformed = (struct monitor_malformed) {
                .why = why,
                .type = hdr->type,
                .misc = hdr->misc,
                .size = hdr->size,
                .n_bytes = hdr->size < MONITOR_MALFORMED_BYTES ? hdr->size : MONITOR_MALFORMED_BYTES,
        };
        memcpy(c->malformed.bytes, hdr, c->malformed.n_bytes);
        c->malformed_kept = true;
}

static int drain_sample(struct drain *d, const struct perf_event_header *hdr) {
        const struct id_entry *e;
        const struct handle *hd;
        struct perf_sample s;
        uint64_t id;

        /* IDENTIFIER leads every sample whatever else its event asked for
         * (source_attr()): find the event, then parse with its layout. */
        if (hdr->size < sizeof(*hdr) + sizeof(id)) {
                drain_bad(d, hdr, "a sample too short for its id");
                return 0;
        }
        memcpy(&id, hdr + 1, sizeof(id));
        /* The flush's own sample: it only made the kernel write. */
        if (id == d->c->flush_id && d->c->flush >= 0) {
                d->quiet++;
                return 0;
        }
        e = d->hint && d->hint->id == id ? d->hint : index_find(d->m, id);
        if (!e) {
                drain_bad(d, hdr, "a sample of an id no open event has");
                return 0;
        }

        /* A removed source: its userdata may be gone. */
        hd = &d->m->handles[e->handle];
        if (hd->state != HANDLE_ACTIVE)
                return 0;

        d->quiet += hd->quiet;
        if (sample_parse(&hd->attr, hdr, &s) < 0) {
                drain_bad(d, hdr, "a sample that does not fit its event's sample_type");
                return 0;
        }

        if (d->h && d->h->sample)
                d->h->sample(hd->userdata, d->c->cpu, &s, d->ctx);
        return 0;
}

static int drain_lost(struct drain *d, const struct perf_event_header *hdr) {
        struct perf_record rec;
        uint64_t lost, v[2];

        if (record_parse(&d->m->attr, hdr, &rec) < 0) {
                drain_bad(d, hdr, "a PERF_RECORD_LOST that does not parse");
                return 0;
        }

        lost = rec.lost.lost;
        /* Our own flush samples among them are no one's loss. */
        if (d->c->flush >= 0 && d->c->flush_counts && read(d->c->flush, v, sizeof(v)) == sizeof(v) &&
            v[1] > d->c->flush_lost) {
                uint64_t own = v[1] - d->c->flush_lost;

                if (own > lost)
                        own = lost;
                d->c->flush_lost += own;
                lost -= own;
        }
        if (lost == 0)
                return 0;
        d->c->lost += lost;
        if (d->h && d->h->lost)
                d->h->lost(d->c->cpu, lost, d->ctx);
        return 0;
}

/* Side records (the records option, THROTTLE, LOST_SAMPLES, ...): with
 * sample_id_all, IDENTIFIER is the record's last u64 (perf_event_open(2),
 * "sample_id"), which names the event and so the trailer's layout. */
static int drain_record(struct drain *d, const struct perf_event_header *hdr) {
        const struct id_entry *e;
        const struct handle *hd;
        struct perf_record rec;
        uint64_t id;

        if (!d->h || !d->h->record)
                return 0;
        if (hdr->size < sizeof(*hdr) + sizeof(id)) {
                drain_bad(d, hdr, "a side record too short for its id");
                return 0;
        }
        memcpy(&id, (const uint8_t *) hdr + hdr->size - sizeof(id), sizeof(id));
        e = d->hint && d->hint->id == id ? d->hint : index_find(d->m, id);
        if (!e)
                return 0;       /* the ring owner's own, or an event gone */
        hd = &d->m->handles[e->handle];
        if (hd->state != HANDLE_ACTIVE)
                return 0;

        d->quiet += hd->quiet;
        if (record_parse(&hd->attr, hdr, &rec) < 0) {
                drain_bad(d, hdr, "a side record that does not parse");
                return 0;
        }
        d->h->record(hd->userdata, d->c->cpu, hdr, &rec, d->ctx);
        return 0;
}

static int drain_one(const struct perf_event_header *hdr, void *userdata) {
        struct drain *d = userdata;

        switch (hdr->type) {
        case PERF_RECORD_SAMPLE:
                return drain_sample(d, hdr);
        case PERF_RECORD_LOST:
                /* In-band: the kernel had no room for this many records. */
                return drain_lost(d, hdr);
        default:
                return drain_record(d, hdr);
        }
}

int monitor_drain(struct monitor *m, size_t i, unsigned budget, const struct monitor_handler *h, void *ctx) {
        struct perf_cpu *c;
        struct drain d;
        uint64_t tail;
        int r;

        if (!m || i >= m->n_cpus)
                return -EINVAL;
        if (m->cpus[i].fd < 0) {
                m->drain_quiet = 0;
                return 0;
        }

        c = &m->cpus[i];
        d = (struct drain) { .m = m, .c = c, .h = h, .ctx = ctx };
        tail = c->ring.page->data_tail;
        ring_look(m, c, ring_head(&c->ring));
        r = ring_read(&c->ring, budget, drain_one, &d);
        c->tail_prev = tail;
        m->drain_quiet = d.quiet;
        return r;
}

/* ---- the time-ordered drain: a k-way merge of the rings ------------------
 *
 * perf's ordered events (tools/perf/util/ordered-events.c) sort what perf
 * record wrote and flush at each FINISHED_ROUND: what every ring had been
 * read past in the round before. Live, the rings themselves are the queue:
 * a record stays where the kernel wrote it until it may go, so the merge
 * copies and allocates nothing. Each ring's records come in time order
 * (the kernel writes a CPU's records as it takes their times), so the
 * next record of every ring, in a heap by time, gives the oldest of all.
 * What it may not yet hand out is a record that another CPU may still
 * overtake: a ring read to its head can still get records at most HOLD
 * older than the clock read before the heads were loaded (taken, not yet
 * published), and none older than what it gave last. */

/* The time of record H, from its sample or its sample_id trailer; false
 * when it has none (an event without sample_id_all, an unknown id). */
static bool record_time(const struct monitor *m, const struct perf_event_header *h, uint64_t *ret,
                        const struct id_entry **ret_entry) {
        const struct perf_event_attr *attr = NULL;
        const struct id_entry *e;
        uint64_t id, off;

        if (ret_entry)
                *ret_entry = NULL;
        if (h->size < sizeof(*h) + sizeof(id))
                return false;
        if (h->type == PERF_RECORD_SAMPLE)
                memcpy(&id, h + 1, sizeof(id));
        else
                memcpy(&id, (const uint8_t *) h + h->size - sizeof(id), sizeof(id));
        e = index_find(m, id);
        if (ret_entry)
                *ret_entry = e;
        if (e)
                attr = &m->handles[e->handle].attr;
        else if (h->type != PERF_RECORD_SAMPLE)
                attr = &m->attr;        /* the ring owner's own records */
        if (!attr || !(attr->sample_type & PERF_SAMPLE_TIME) || !(attr->sample_type & PERF_SAMPLE_IDENTIFIER))
                return false;

        if (h->type == PERF_RECORD_SAMPLE) {
                /* IDENTIFIER, IP, TID, TIME (perf_event_open(2)). */
                off = sizeof(*h) + 8 + (attr->sample_type & PERF_SAMPLE_IP ? 8 : 0) +
                      (attr->sample_type & PERF_SAMPLE_TID ? 8 : 0);
                if (off + 8 > h->size)
                        return false;
        } else {
                /* sample_id: TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER,
                 * read from the end. */
                uint64_t back = 8 + 8 + (attr->sample_type & PERF_SAMPLE_CPU ? 8 : 0) +
                                (attr->sample_type & PERF_SAMPLE_STREAM_ID ? 8 : 0) +
                                (attr->sample_type & PERF_SAMPLE_ID ? 8 : 0);

                if (!attr->sample_id_all || back + sizeof(*h) > h->size)
                        return false;
                off = h->size - back;
        }
        memcpy(ret, (const uint8_t *) h + off, sizeof(*ret));
        return true;
}

/* Looks at ring C's next record below its head: false when there is none. */
static bool order_peek(struct monitor *m, struct perf_cpu *c) {
        uint64_t t;

        c->cur = ring_peek(&c->ring, &c->pos, c->head);
        if (!c->cur)
                return false;
        /* A time after the clock this pass read (plus the hold) is none
         * the kernel wrote before we loaded the head: a clock stepped back
         * (realtime, tai) or a malformed record. Taken as it stands it
         * would hold its ring until the clock got there. */
        if (!record_time(m, c->cur, &t, &c->entry) || t > m->order_limit) {
                /* No time: it goes right after the record before it. */
                c->time = 0;
                c->key = c->last;
                return true;
        }
        c->time = t;
        c->key = t > c->last ? t : c->last;
        /* Timed before the last pass read its clock and not there when it
         * loaded the head: in flight in the kernel that long at least. */
        if ((int64_t) (c->pos - c->seen) >= 0 && m->order_now > t &&
            m->order_now - t > m->order.in_flight_max_ns)
                m->order.in_flight_max_ns = m->order_now - t;
        return true;
}

static bool heap_less(const struct monitor *m, size_t a, size_t b) {
        const struct perf_cpu *x = &m->cpus[a], *y = &m->cpus[b];

        return x->key < y->key || (x->key == y->key && a < b);
}

static void heap_down(struct monitor *m, size_t n, size_t i) {
        for (;;) {
                size_t l = 2 * i + 1, r = l + 1, min = i, t;

                if (l < n && heap_less(m, m->heap[l], m->heap[min]))
                        min = l;
                if (r < n && heap_less(m, m->heap[r], m->heap[min]))
                        min = r;
                if (min == i)
                        return;
                t = m->heap[i], m->heap[i] = m->heap[min], m->heap[min] = t;
                i = min;
        }
}

static void heap_up(struct monitor *m, size_t i) {
        while (i > 0) {
                size_t p = (i - 1) / 2, t;

                if (!heap_less(m, m->heap[i], m->heap[p]))
                        return;
                t = m->heap[i], m->heap[i] = m->heap[p], m->heap[p] = t;
                i = p;
        }
}

int monitor_drain_ordered(struct monitor *m, const struct monitor_order *o, unsigned budget,
                          const struct monitor_handler *h, void *ctx, uint64_t *ret_held) {
        uint64_t floor, bound = UINT64_MAX;
        size_t n_heap = 0;
        unsigned n = 0;
        struct drain d;

        if (!m || !o)
                return -EINVAL;
        floor = o->now > o->hold_ns ? o->now - o->hold_ns : 0;
        m->order_limit = o->now + o->hold_ns;
        d = (struct drain) { .m = m, .h = h, .ctx = ctx };

        /* A ring that is down writes nothing and bounds nothing. */
        for (size_t k = 0; k < m->n_up; k++) {
                size_t i = m->up[k];
                struct perf_cpu *c = &m->cpus[i];

                c->n_pass = 0;
                c->head = ring_head(&c->ring);
                c->pos = c->ring.page->data_tail;
                ring_look(m, c, c->head);
                if (order_peek(m, c)) {
                        m->heap[n_heap] = i;
                        heap_up(m, n_heap++);
                } else if ((c->last > floor ? c->last : floor) < bound)
                        /* Empty: its next record may be as old as this. */
                        bound = c->last > floor ? c->last : floor;
        }

        while (n_heap > 0 && n < budget) {
                struct perf_cpu *c = &m->cpus[m->heap[0]];

                if (!o->all && c->key > bound)
                        break;
                d.c = c;
                d.hint = c->entry;
                (void) drain_one(c->cur, &d);
                n++;
                c->n_pass++;
                if (c->time != 0) {
                        if (c->time < m->order.emitted)
                                m->order.late++;
                        else
                                m->order.emitted = c->time;
                }
                c->last = c->key;
                c->pos += c->cur->size;
                if (order_peek(m, c))
                        heap_down(m, n_heap, 0);
                else {
                        if ((c->last > floor ? c->last : floor) < bound)
                                bound = c->last > floor ? c->last : floor;
                        m->heap[0] = m->heap[--n_heap];
                        heap_down(m, n_heap, 0);
                }
        }
        m->order.held = 0;
        m->order.held_newest = 0;
        for (size_t k = 0; k < n_heap; k++) {
                struct perf_cpu *c = &m->cpus[m->heap[k]];
                uint64_t pos = c->pos, t, bad;
                const struct perf_event_header *hd;

                /* Records below this ring's head stay for the next pass. */
                m->order.held++;
                /* The newest of them, so that one release takes them all:
                 * what the hold keeps is little (at 1M records/s, 200 µs
                 * is 200), but a budget cut leaves a ring full. */
                if (n >= budget)
                        continue;
                bad = c->ring.n_bad;    /* the next pass counts a malformed one */
                while ((hd = ring_peek(&c->ring, &pos, c->head))) {
                        if (record_time(m, hd, &t, NULL) && t <= m->order_limit && t > m->order.held_newest)
                                m->order.held_newest = t;
                        pos += hd->size;
                }
                c->ring.n_bad = bad;
                if (c->key > m->order.held_newest)
                        m->order.held_newest = c->key;
        }
        if (ret_held)
                *ret_held = n_heap > 0 ? m->cpus[m->heap[0]].key : UINT64_MAX;
        for (size_t k = 0; k < m->n_up; k++) {
                struct perf_cpu *c = &m->cpus[m->up[k]];

                c->tail_prev = c->ring.page->data_tail;
                ring_consume(&c->ring, c->pos);
                c->seen = c->head;
        }
        m->order_now = o->now;
        m->order.passes++;
        m->drain_quiet = d.quiet;
        return (int) n;
}

const struct monitor_order_stats *monitor_order_stats(const struct monitor *m) {
        return m ? &m->order : NULL;
}

unsigned monitor_ring_n_pass(const struct monitor *m, size_t i) {
        if (!m || i >= m->n_cpus)
                return 0;
        return m->cpus[i].n_pass;
}

uint64_t monitor_ring_pending(const struct monitor *m, size_t i) {
        if (!m || i >= m->n_cpus || m->cpus[i].fd < 0)
                return 0;
        return ring_pending(&m->cpus[i].ring);
}

unsigned monitor_drain_quiet(const struct monitor *m) {
        return m ? m->drain_quiet : 0;
}

size_t monitor_handle_n_fds(const struct monitor *m, int h) {
        const struct handle *hd = handle_get((struct monitor *) m, h);

        return hd ? hd->n : 0;
}

bool monitor_fd_pid_target(const struct monitor *m, size_t i, size_t *ret_target) {
        size_t per_cpu, t;

        if (!m || m->n_pids == 0)
                return false;
        /* monitor_add() opens the targets of one CPU after another:
         * cgroups first, then pids. */
        per_cpu = m->n_cgroups + m->n_pids;
        t = i % per_cpu;
        if (t < m->n_cgroups)
                return false;
        if (ret_target)
                *ret_target = t - m->n_cgroups;
        return true;
}

int monitor_handle_fd(const struct monitor *m, int h, size_t i, int *ret_cpu) {
        const struct handle *hd = handle_get((struct monitor *) m, h);
        size_t per_cpu;

        if (!hd || i >= hd->n)
                return -EINVAL;
        /* monitor_add() opens the targets of one CPU after another. */
        per_cpu = m->n_cgroups + m->n_pids ?: 1;
        if (ret_cpu)
                *ret_cpu = m->cpus[i / per_cpu].cpu;
        return hd->fds[i];
}

const struct perf_event_attr *monitor_handle_attr(const struct monitor *m, int h) {
        const struct handle *hd = handle_get((struct monitor *) m, h);

        return hd ? &hd->attr : NULL;
}

int monitor_read(struct monitor *m, int h, size_t i, void *buf, size_t size, struct perf_read *ret) {
        const struct handle *hd = handle_get(m, h);
        struct cursor c;
        ssize_t n;

        if (!hd || i >= hd->n || !buf || !ret)
                return -EINVAL;
        if (hd->fds[i] < 0)
                return -ENODEV;         /* its CPU is down */
        n = read(hd->fds[i], buf, size);
        if (n < 0)
                return negative_errno();
        /* A read that returns nothing: the event could not be scheduled
         * in a way the kernel can report (an error state, pinned and
         * evicted): perf_read() returns 0 then. */
        if (n == 0)
                return -ENODATA;
        c = cursor_make(buf, (size_t) n);
        return read_format_parse(&c, hd->attr.read_format, ret);
}

void *monitor_id_userdata(const struct monitor *m, uint64_t id) {
        const struct id_entry *e;

        if (!m)
                return NULL;
        e = index_find(m, id);
        if (!e || m->handles[e->handle].state != HANDLE_ACTIVE)
                return NULL;
        return m->handles[e->handle].userdata;
}
