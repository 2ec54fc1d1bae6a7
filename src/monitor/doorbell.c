/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The doorbell: a wakeup at the first record after a quiet spell.
 *
 * The main rings wake their reader by bytes (wakeup_watermark), so that at
 * full rate one wakeup carries thousands of records. The price is that a
 * lone record, or the tail of a burst, sits below the watermark until
 * somebody looks. Looking on a timer costs wakeups when nothing happens;
 * asking the main events for a wakeup per record (wakeup_events = 1) costs
 * an irq_work and a reader wakeup per record at full rate. Per-event
 * attributes cannot be changed on an open tracepoint (MODIFY_ATTRIBUTES is
 * for breakpoints only), so the policy cannot be switched on the main
 * events either.
 *
 * So beside each main ring there is a small group: a software dummy leader
 * that owns a one-page ring, and as members the same events opened a second
 * time with wakeup_events = 1, redirected into the leader's ring
 * (PERF_EVENT_IOC_SET_OUTPUT). Members only count while their leader is
 * scheduled, so enabling and disabling the leader alone arms and disarms
 * every member at once, and a disarmed doorbell costs the traced program
 * nothing. The reader keeps it armed while idle (nothing wakes it), and on
 * the first ring disarms it and reads the main rings on a short tick until
 * a tick finds nothing; then it re-arms and reads once more, so a record
 * written between that look and the arm is not left behind. Records in the
 * doorbell's ring are never read: they only ring.
 *
 * The simpler-looking alternative, a wakeup_events = 1 copy writing into
 * the main ring itself, is worse: every record that comes while armed (a
 * whole burst, before the reader gets to disarm) is written twice into the
 * ring that carries the data, takes its space (more PERF_RECORD_LOST near
 * full), and has to be parsed and thrown away by id in the hot path. Here
 * the duplicates land in a page nobody reads, and the main ring's layout
 * and cost are those of a monitor without doorbells.
 *
 * Kernel behaviour this relies on (kernel/events/core.c, ring_buffer.c):
 * - Enable/disable the leader *without* PERF_IOC_FLAG_GROUP. With the flag,
 *   a software leader's tracepoint members were seen to stay off for good
 *   while every ioctl returned 0.
 * - The leader must carry the members' clockid, else SET_OUTPUT is EINVAL.
 * - A full ring never wakes again (the kernel counts PERF_RECORD_LOST
 *   instead of writing), so every arm first moves data_tail up to
 *   data_head: the ring is emptied without being read.
 * - perf_poll() hands out a pending wakeup once (atomic_xchg of rb->poll),
 *   so a level-triggered epoll does not report the same ring again.
 * - A member is a tracepoint event in a software event's group: on the
 *   tracepoint's per-CPU list it is moved (perf_trace_del(), at once
 *   perf_trace_add() at the head, kernel/trace/trace_event_perf.c) by the
 *   software PMU's reschedules (ctx_resched(), kernel/events/core.c), which
 *   leave the main copy where it is. A software event enabled on that CPU
 *   (by anyone: another evmond arming, perf) while the traced task's
 *   handler stands on a member behind the main copy sends the walk
 *   (perf_tp_event()) back to the head, and the main copy writes that
 *   call's record again, a little later, counted nowhere. Test-targets'
 *   numbered calls see it; doc/reliability.md ("Doorbells, reschedules and exactly once") says it
 *   to users. Another evmond's members do the same to ours. Pausable
 *   doorbells take away our own part of it: their leaders are enabled
 *   only around member enables and after a rest (doorbell_hold(),
 *   doorbell_rest()), from the member's CPU.
 *   And main tracepoint and probe events are now opened pinned
 *   (event_open() in monitor.c), which a flexible event's reschedule
 *   leaves in place: a member is added after its main copy, so it sits
 *   ahead of it on the list, and moved it stays ahead; a walk standing on
 *   it goes on from the head and reaches the main copy once. What is left
 *   is a flexible node of another tool that sits behind our main copy
 *   from before we opened it, until the first reschedule moves it ahead.
 *   bench/stress --churn toggle counts it: 0 in 1M calls, 3 runs. */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "evmon/cleanup.h"
#include "evmon/io.h"
#include "evmon/monitor.h"
#include "doorbell.h"

int doorbell_open(struct doorbell *b, int cpu, pid_t target, unsigned long flags, bool use_clockid, clockid_t clockid,
                  size_t page_size) {
        struct perf_event_attr attr = {
                .size = sizeof(attr),
                .type = PERF_TYPE_SOFTWARE,
                .config = PERF_COUNT_SW_DUMMY,
                .disabled = 1,
                /* Children of a targeted task inherit the group, and a
                 * disable of this fd reaches them too. */
                .inherit = target >= 0 && !(flags & PERF_FLAG_PID_CGROUP),
                .use_clockid = use_clockid,
                .clockid = clockid,
                /* Every record written here wakes the poller: a member's
                 * samples do by its wakeup_events = 1, but side-band
                 * records (a dummy copy's comm, cgroup, switch, ...) count
                 * only towards the ring's watermark (__perf_output_begin()
                 * moves rb->wakeup past it, perf_output_put_handle() then
                 * wakes), which is half the ring unless set. */
                .watermark = 1,
                .wakeup_watermark = 1,
        };
        int fd;

        *b = (struct doorbell) { .fd = -1, .cpu = cpu };

        fd = perf_event_open_fd(&attr, target, cpu, -1, flags);
        if (fd < 0)
                return fd;
        b->fd = fd;

        /* One data page: room for 512 header-only records, and the ring is
         * emptied on every arm anyway. PROT_WRITE so we may move data_tail. */
        b->map_size = 2 * page_size;
        b->base = mmap(NULL, b->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (b->base == MAP_FAILED) {
                b->base = NULL;
                return negative_errno();
        }

        /* Paused, then on for good: arming is unpausing from now on. A
         * kernel without PAUSE_OUTPUT (before 4.7) keeps the old way. */
        if (ioctl(fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 1) < 0)
                return 0;
        if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0)
                return negative_errno();
        b->pausable = true;
        return 0;
}

void doorbell_close(struct doorbell *b) {
        if (!b)
                return;
        if (b->base)
                munmap(b->base, b->map_size);
        b->base = NULL;
        b->fd = safe_close(b->fd);
        b->armed = b->pausable = b->resting = false;
}

/* The type of the dynamic PMU NAME (/sys/bus/event_source/devices), or -1. */
static int64_t pmu_type(const char *name) {
        uint32_t t;

        return sysfs_pmu_type("/sys/bus/event_source/devices", name, &t) < 0 ? -1 : (int64_t) t;
}

bool doorbell_fits(uint32_t type) {
        static int64_t kprobe = -2, uprobe = -2;

        switch (type) {
        case PERF_TYPE_TRACEPOINT:
        case PERF_TYPE_SOFTWARE:
        case PERF_TYPE_BREAKPOINT:
                return true;
        case PERF_TYPE_HARDWARE:
        case PERF_TYPE_HW_CACHE:
        case PERF_TYPE_RAW:
                return false;
        }
        if (kprobe == -2)
                kprobe = pmu_type("kprobe");
        if (uprobe == -2)
                uprobe = pmu_type("uprobe");
        return type == kprobe || type == uprobe;
}

/* Whether each record of an event ATTR describes has one copy in the
 * doorbell's ring: a sample of every hit (a tracepoint's, a probe's) and
 * no side-band records. A cpu-clock copy samples on its own timer. */
static bool one_copy_a_record(const struct perf_event_attr *a) {
        return !a->freq && a->sample_period == 1 && !a->mmap && !a->comm && !a->task && !a->mmap_data &&
               !a->mmap2 && !a->context_switch && !a->namespaces && !a->ksymbol && !a->bpf_event && !a->cgroup &&
               !a->text_poke;
}

int doorbell_member_open(struct doorbell *b, const struct perf_event_attr *event, pid_t target,
                         unsigned long flags, const char *filter) {
        _cleanup_(closep) int fd = -1;
        struct perf_event_attr attr = *event;

        if (!doorbell_rings_for(&attr))
                return -EOPNOTSUPP;
        if (!doorbell_fits(attr.type))
                return -EMEDIUMTYPE;

        /* Only the ring matters: an empty sample is the smallest record.
         * The period stays the event's own, so the copy samples when the
         * event does (a cpu-clock copy with period 1 would be a storm). */
        attr.sample_type = 0;
        attr.read_format = 0;
        attr.sample_id_all = 0;
        attr.disabled = 1;
        attr.watermark = 0;
        attr.wakeup_events = 1;
        /* A group member may be neither (EINVAL): the copy of a pinned or
         * exclusive event would otherwise have no doorbell, and its ring's
         * tick would never stop. */
        attr.pinned = 0;
        attr.exclusive = 0;

        fd = perf_event_open_fd(&attr, target, b->cpu, b->fd, flags);
        if (fd < 0)
                return fd;
        if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, b->fd) < 0)
                return negative_errno();
        /* The same filter, or records the main copy drops would ring. */
        if (filter && ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter) < 0)
                return negative_errno();
        if (!one_copy_a_record(event))
                b->uncounted = true;
        return TAKE_FD(fd);
}

bool doorbell_rings_for(const struct perf_event_attr *a) {
        return a->freq || a->sample_period != 0 || (a->sample_type & PERF_SAMPLE_RAW) || a->mmap || a->comm ||
               a->task || a->mmap_data || a->mmap2 || a->context_switch || a->namespaces || a->ksymbol ||
               a->bpf_event || a->cgroup || a->text_poke;
}

/* The samples between TAIL and HEAD of B's ring: the members' copies,
 * header-only (8 bytes, 8-aligned, so a header never wraps). A paused
 * ring counts what it drops and writes a PERF_RECORD_LOST before the next
 * copy, which is no copy. UINT_MAX when the records do not parse or the
 * ring is near full: it may have lost some that the count would need. */
static unsigned count_samples(const struct doorbell *b, uint64_t tail, uint64_t head) {
        const unsigned char *data = (const unsigned char *) b->base + b->map_size / 2;
        size_t size = b->map_size / 2;
        unsigned n = 0;

        if (head - tail >= size / 2)
                return UINT_MAX;
        for (uint64_t pos = tail; pos < head;) {
                const struct perf_event_header *h = (const void *) (data + (pos & (size - 1)));

                if (h->size < sizeof(*h) || h->size % 8 != 0 || pos + h->size > head)
                        return UINT_MAX;
                if (h->type == PERF_RECORD_SAMPLE)
                        n++;
                pos += h->size;
        }
        return n;
}

unsigned doorbell_pending(const struct doorbell *b) {
        const struct perf_event_mmap_page *page = b->base;

        /* Pairs with the kernel's data_head publish. */
        return count_samples(b, page->data_tail, __atomic_load_n(&page->data_head, __ATOMIC_ACQUIRE));
}

int doorbell_arm(struct doorbell *b) {
        struct perf_event_mmap_page *page = b->base;
        uint64_t head;

        if (b->fd < 0)
                return -EBADF;

        /* Empty the ring, counting its samples: pairs with the kernel's
         * data_head publish; the release store lets it reuse the space
         * (see ring.c). */
        head = __atomic_load_n(&page->data_head, __ATOMIC_ACQUIRE);
        b->copies = count_samples(b, page->data_tail, head);
        __atomic_store_n(&page->data_tail, head, __ATOMIC_RELEASE);
        if (b->armed)
                return 0;
        if (b->resting)
                return -EBUSY;  /* doorbell_rest() first, on its CPU */
        if (ioctl(b->fd, b->pausable ? PERF_EVENT_IOC_PAUSE_OUTPUT : PERF_EVENT_IOC_ENABLE, 0) < 0)
                return negative_errno();
        b->armed = true;
        return 0;
}

int doorbell_disarm(struct doorbell *b) {
        if (b->fd < 0)
                return -EBADF;
        if (!b->armed)
                return 0;
        if (b->pausable ? ioctl(b->fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 1) < 0 : ioctl(b->fd, PERF_EVENT_IOC_DISABLE, 0) < 0)
                return negative_errno();
        b->armed = false;
        return 0;
}

int doorbell_hold(struct doorbell *b, bool hold) {
        if (b->fd < 0 || !b->pausable || b->resting)
                return 0;
        if (ioctl(b->fd, hold ? PERF_EVENT_IOC_DISABLE : PERF_EVENT_IOC_ENABLE, 0) < 0)
                return negative_errno();
        return 0;
}

int doorbell_rest(struct doorbell *b, bool rest) {
        if (b->fd < 0 || !b->pausable || b->resting == rest)
                return 0;
        if (b->armed)
                return -EBUSY;
        if (ioctl(b->fd, rest ? PERF_EVENT_IOC_DISABLE : PERF_EVENT_IOC_ENABLE, 0) < 0)
                return negative_errno();
        b->resting = rest;
        return 0;
}
