/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Enabling and disabling events, each CPU's from that CPU, and CPUs
 * that go down and come up (hotplug). */


#include <errno.h>
#include <sched.h>
#include <sys/ioctl.h>

#include "evmon/cleanup.h"
#include "monitor-int.h"

/* The calling thread's CPU mask, to put back after on_cpu(); NULL when
 * it cannot be read (the enables then come from wherever we run). */
cpu_set_t *affinity_save(size_t *ret_size) {
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
int on_cpu(int cpu) {
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
