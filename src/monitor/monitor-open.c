/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* An event opened on every CPU and target into the rings: its attr,
 * its fds and doorbell members, monitor_add() and monitor_remove(). */


#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "evmon/async.h"
#include "evmon/cleanup.h"
#include "monitor-int.h"

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
        if (src->attr_options) {
                a.type = src->type;
                a.config = src->config;
                a.config1 = src->config1;
                a.config2 = src->config2;
        }
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

/* The group leader's fd for our I-th fd (same CPU and target), or -1. */
#define GROUP_FD(leader, i) ((leader) ? ((i) < (leader)->n ? (leader)->fds[i] : -2) : -1)

/* Opens HD's events on ring C (index CI) into slots CI * per-CPU on, the
 * group's leader LEADER (or NULL) already open there. A CPU that is down
 * keeps -1 there. On failure what was opened on C is closed again. */
int handle_open_cpu(struct monitor *m, struct handle *hd, const struct handle *leader, size_t ci) {
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

/* HD's slots, one per CPU and target (a CPU that is down holds -1, and a
 * failure closes what is open), and what a CPU that comes up needs. */
static int handle_alloc(struct handle *hd, size_t n_max, const struct monitor_source *src) {
        hd->fds = malloc(n_max * sizeof(*hd->fds));
        hd->ids = malloc(n_max * sizeof(*hd->ids));
        hd->bell_fds = malloc(n_max * sizeof(*hd->bell_fds));
        if (!hd->fds || !hd->ids || !hd->bell_fds)
                return -ENOMEM;
        for (size_t k = 0; k < n_max; k++) {
                hd->fds[k] = -1;
                hd->ids[k] = 0;
                hd->bell_fds[k] = -EOPNOTSUPP;
        }
        hd->n = n_max;
        hd->quiet = src->quiet;
        if (src->filter) {
                hd->filter = strdup(src->filter);
                if (!hd->filter)
                        return -ENOMEM;
        }
        return 0;
}

/* Opens HD on every CPU that is up; -ESRCH when no fd opened at all. */
static int handle_open(struct monitor *m, struct handle *hd, const struct handle *leader) {
        int r;

        for (size_t i = 0; i < m->n_cpus; i++) {
                r = handle_open_cpu(m, hd, leader, i);
                if (r < 0)
                        return r;
        }
        /* Some CPU is always up, so no fd at all means every target
         * process has exited (handle_open_cpu()). */
        for (size_t k = 0; k < hd->n; k++)
                if (hd->fds[k] >= 0) {
                        handle_count_unbelled(hd);
                        return 0;
                }
        return -ESRCH;
}

/* A slot for a new handle: one retired_prune() freed first. An add, or a
 * reload that changes an event, now and then for months would otherwise
 * grow the table, and every walk of it, for good. */
static int handle_slot(struct monitor *m, size_t *ret) {
        struct handle *handles;
        size_t h;

        for (h = 0; h < m->n_handles && m->handles[h].state != HANDLE_FREE; h++)
                ;
        if (h == m->n_handles) {
                handles = reallocarray(m->handles, m->n_handles + 1, sizeof(*handles));
                if (!handles)
                        return -ENOMEM;
                m->handles = handles;
                m->handles[m->n_handles++] = (struct handle) { .state = HANDLE_FREE };
        }
        *ret = h;
        return 0;
}

int monitor_add(struct monitor *m, const struct monitor_source *src) {
        size_t n_targets, n_max, h;
        struct handle hd = {};
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

        r = handle_alloc(&hd, n_max, src);
        if (r >= 0)
                r = handle_open(m, &hd, leader);
        if (r >= 0)
                r = handle_slot(m, &h);
        if (r < 0)
                goto fail;

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
