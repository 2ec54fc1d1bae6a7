/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The per-CPU rings: each ring's owner and mmap, the canary that tells
 * a CPU whose events the kernel dropped, the flush that brings out a
 * loss the kernel holds back, the doorbells, and what the reader asks of
 * a ring (its fd, losses, malformed records). */


#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "evmon/cleanup.h"
#include "monitor-int.h"

void perf_cpu_done(struct perf_cpu *c) {
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
        scan_done(c);
}

/* The list of rings that are up, after one came up or went down: what
 * each drain walks, so that a host with hundreds of possible CPUs and a
 * few present pays per look for those present only. */
void up_rebuild(struct monitor *m) {
        m->n_up = 0;
        for (size_t i = 0; i < m->n_cpus; i++)
                if (m->cpus[i].fd >= 0)
                        m->up[m->n_up++] = i;
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

int perf_cpu_open(struct monitor *m, struct perf_cpu *c) {
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

/* Ring I's doorbells at rest (REST) or awake, from its CPU: an enable
 * from another CPU is an IPI that may land while a handler walks the
 * tracepoint's list (monitor_enable()). So a ring rests only where evmond
 * may run on its CPU (a cpuset may keep it off); a wake goes ahead from
 * here if it must (a cpuset changed since the rest). Each bell on its
 * own: one that failed stays as it was, and is tried again next time. */
static int ring_rest(struct monitor *m, size_t i, bool rest) {
        struct perf_cpu *c = &m->cpus[i];
        cpu_set_t *saved;
        size_t saved_size = 0;
        bool wanted = false, moved;
        int r, ret = 0;

        for (size_t k = 0; k < c->n_bells; k++)
                wanted |= c->bells[k].pausable && c->bells[k].resting != rest && !(rest && c->bells[k].armed);
        if (!wanted)
                return 0;
        saved = affinity_save(&saved_size);
        moved = saved && on_cpu(c->cpu) >= 0;
        for (size_t k = 0; k < c->n_bells && (moved || !rest); k++) {
                r = doorbell_rest(&c->bells[k], rest);
                if (r < 0 && ret == 0)
                        ret = r;
        }
        if (saved) {
                (void) sched_setaffinity(0, saved_size, saved);
                CPU_FREE(saved);
        }
        if (rest && moved)
                m->n_rests++;
        return ret;
}

int monitor_ring_rest(struct monitor *m, size_t i) {
        if (!m || i >= m->n_cpus)
                return -EINVAL;
        if (m->cpus[i].armed || !monitor_doorbells_pausable(m))
                return 0;
        return ring_rest(m, i, true);
}

uint64_t monitor_ring_rests(const struct monitor *m) {
        return m ? m->n_rests : 0;
}

int monitor_ring_arm(struct monitor *m, size_t i) {
        struct perf_cpu *c;
        int r;

        if (!m || i >= m->n_cpus)
                return -EINVAL;
        c = &m->cpus[i];
        r = ring_rest(m, i, false);
        if (r < 0)
                return r;
        for (size_t k = 0; k < c->n_bells; k++) {
                r = doorbell_arm(&c->bells[k]);
                if (r < 0)
                        return r;
        }
        c->armed = c->n_bells > 0;
        return 0;
}

/* The copies of ring I's doorbells, summed: those their last arm emptied,
 * or with PENDING those still in the rings of the armed ones. UINT_MAX
 * when one of them says nothing (a copy per record it is not). */
static unsigned bells_copies(const struct monitor *m, size_t i, bool pending) {
        unsigned n = 0;

        if (!m || i >= m->n_cpus)
                return UINT_MAX;
        for (size_t k = 0; k < m->cpus[i].n_bells; k++) {
                const struct doorbell *b = &m->cpus[i].bells[k];
                unsigned t;

                if (b->fd < 0 || (pending && !b->armed))
                        continue;
                t = pending ? doorbell_pending(b) : b->copies;
                if (b->uncounted || t == UINT_MAX)
                        return UINT_MAX;
                n += t;
        }
        return n;
}

unsigned monitor_ring_pending_copies(const struct monitor *m, size_t i) {
        if (m && i < m->n_cpus && !m->cpus[i].armed)
                return 0;
        return bells_copies(m, i, true);
}

unsigned monitor_ring_bell_copies(const struct monitor *m, size_t i) {
        return bells_copies(m, i, false);
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

uint64_t monitor_ring_pending(const struct monitor *m, size_t i) {
        if (!m || i >= m->n_cpus || m->cpus[i].fd < 0)
                return 0;
        return ring_pending(&m->cpus[i].ring);
}
