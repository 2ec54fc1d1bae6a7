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
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "evmon/cleanup.h"
#include "monitor-int.h"

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

/* The ring's size and the template attr every event starts from. */
static int monitor_layout(struct monitor *m, const struct monitor_opts *opts, size_t page_size) {
        uint64_t wakeup;

        m->page_size = page_size;
        m->data_size = opts->ring_pages * page_size;
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
        return 0;
}

/* The targets, copied: every event is opened once per cgroup and pid. */
static int monitor_targets(struct monitor *m, const struct monitor_opts *opts) {
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
        return 0;
}

/* A ring slot for every possible CPU: one that is offline, or not even
 * present (a vCPU a hypervisor may hot-add later), has no ring
 * (perf_event_open() there is ENODEV) until monitor_cpu_up(). The kernel
 * fixes the possible CPUs at boot (ACPI's disabled processors count), and
 * never brings one online outside them, so a slot is never missing and
 * ring indexes never move. A slot costs about 300 bytes, and 16 per event
 * and target; a drain walks the rings that are up only (up_rebuild()).
 * Where there is no "possible" file, the present CPUs. */
static int monitor_rings(struct monitor *m) {
        _cleanup_(freep) int *cpus = NULL;
        size_t n_cpus = 0, n_up = 0;
        int r;

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
        return 0;
}

int monitor_new(const struct monitor_opts *opts, struct monitor **ret) {
        _cleanup_(monitor_freep) struct monitor *m = NULL;
        size_t pages;
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
        r = monitor_layout(m, opts, (size_t) ps);
        if (r < 0)
                return r;
        r = monitor_targets(m, opts);
        if (r < 0)
                return r;
        r = monitor_rings(m);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(m);
        return 0;
}
