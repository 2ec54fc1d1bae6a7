/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* CPU hotplug: see hotplug.h, and monitor.h for what the kernel does to a
 * CPU's events when it goes offline. */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hotplug.h"
#include "reader.h"
#include "server.h"
#include "evmon/cleanup.h"
#include "evmon/encode.h"
#include "evmon/log.h"
#include "evmon/protocol.h"

/* {"type":"gap",…} to every client (src/encode/). */
static void gap_emit(struct daemon *d, int cpu, uint64_t since, uint64_t now) {
        d->line.len = 0;
        if (encode_gap(&d->line, cpu, "offline", since, now, d->realtime_offset) < 0)
                return;
        server_broadcast_all(d->server, d->line.data, d->line.len);
        server_flush(d->server);
}

static void time_text(struct daemon *d, uint64_t ts, char *buf, size_t size) {
        uint64_t rt = ts + (uint64_t) d->realtime_offset;
        time_t sec = (time_t) (rt / 1000000000u);
        struct tm tm;

        gmtime_r(&sec, &tm);
        strftime(buf, size, "%H:%M:%S", &tm);
        snprintf(buf + strlen(buf), size - strlen(buf), ".%03" PRIu64, rt % 1000000000u / 1000000u);
}

/* /sys/kernel/uevent_seqnum, or UINT64_MAX when it cannot be read. The
 * kernel numbers every uevent, and a CPU going offline or online sends
 * one (two per change on 6.1): while the number stands still no CPU went
 * anywhere, and the canaries (whose read is an IPI to each CPU) need no
 * look. A busy host's other uevents (devices, network interfaces) only
 * bring the look back for that tick. */
static uint64_t uevent_seqnum(void) {
        _cleanup_(closep) int fd = -1;
        char buf[32];
        ssize_t n;

        fd = open("/sys/kernel/uevent_seqnum", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return UINT64_MAX;
        n = read(fd, buf, sizeof(buf) - 1);
        if (n <= 0)
                return UINT64_MAX;
        buf[n] = '\0';
        return strtoull(buf, NULL, 10);
}

int hotplug_start(struct daemon *d) {
        size_t n = monitor_n_rings(d->monitor);
        uint64_t now = now_ns(d->config->clockid);

        d->cpu_since = calloc(n ?: 1, sizeof(*d->cpu_since));
        d->cpu_gaps = calloc(n ?: 1, sizeof(*d->cpu_gaps));
        if (!d->cpu_since || !d->cpu_gaps)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (!monitor_ring_up(d->monitor, i)) {
                        d->cpu_since[i] = now;
                        log_notice("CPU %d is offline: its events are opened when it comes online",
                                   monitor_ring_cpu(d->monitor, i));
                }
        d->cpus_checked = d->canary_since = now;
        d->uevent_seqnum = uevent_seqnum();
        return 0;
}

void hotplug_done(struct daemon *d) {
        free(d->cpu_since);
        d->cpu_since = NULL;
        free(d->cpu_gaps);
        d->cpu_gaps = NULL;
}

static bool in_list(const int *cpus, size_t n, int cpu) {
        for (size_t k = 0; k < n; k++)
                if (cpus[k] == cpu)
                        return true;
        return false;
}

void hotplug_check(struct daemon *d) {
        _cleanup_(freep) int *online = NULL;
        size_t n_online = 0, n = monitor_n_rings(d->monitor);
        uint64_t now = now_ns(d->config->clockid), seq;
        char a[32], b[32];
        bool quiet;
        int r;

        if (!d->cpu_since)
                return;
        /* Before the CPU list: a change after this is seen next time. */
        seq = uevent_seqnum();
        /* This look and the next: a canary stopped since its last read
         * shows standing still only at the read after (monitor_ring_alive()). */
        if (seq == UINT64_MAX || seq != d->uevent_seqnum) {
                if (d->canary_looks == 0)
                        d->canary_since = d->cpus_checked;
                d->canary_looks = 2;
        }
        d->uevent_seqnum = seq;
        quiet = d->canary_looks == 0;
        if (d->canary_looks > 0)
                d->canary_looks--;
        r = perf_online_cpus(&online, &n_online);
        if (r < 0) {
                log_debug_errno(r, "Failed to read /sys/devices/system/cpu/online: %m");
                return;
        }
        for (size_t i = 0; i < n; i++) {
                int cpu = monitor_ring_cpu(d->monitor, i);
                bool on = in_list(online, n_online, cpu);

                if (monitor_ring_up(d->monitor, i)) {
                        if (on && (quiet || monitor_ring_alive(d->monitor, i)))
                                continue;
                        /* What it wrote before it went is all there: read
                         * it to the end before the ring goes. */
                        reader_drain_ring(d->reader, i);
                        (void) monitor_cpu_down(d->monitor, i);
                        (void) reader_ring_changed(d->reader, i);
                        /* Gone since the last look (its CPU list), or,
                         * for a canary that stopped, since the look before
                         * the uevent: what it did since may be missing. */
                        d->cpu_since[i] = on ? d->canary_since : d->cpus_checked;
                        log_notice("CPU %d went offline%s: its events are closed until it is online", cpu,
                                   on ? " and came back since the last look" : "");
                        if (!on)
                                continue;
                }
                if (!on || d->cpu_since[i] == 0)
                        continue;
                r = monitor_cpu_up(d->monitor, i);
                if (!monitor_ring_up(d->monitor, i)) {
                        if (r != -ENODEV)
                                log_warning_errno(r, "CPU %d is online, but its ring could not be opened (tried again "
                                                  "in a second): %m", cpu);
                        continue;
                }
                if (r < 0)
                        log_warning_errno(r, "CPU %d is online, but an event could not be opened on it again: %m",
                                          cpu);
                (void) reader_ring_changed(d->reader, i);
                now = now_ns(d->config->clockid);
                d->cpu_gaps[i]++;
                gap_emit(d, cpu, d->cpu_since[i], now);
                time_text(d, d->cpu_since[i], a, sizeof(a));
                time_text(d, now, b, sizeof(b));
                log_notice("CPU %d is online: its events are open again; what happened on it between %s and %s UTC "
                           "was not captured (a gap line says so to every client)", cpu, a, b);
                d->cpu_since[i] = 0;
        }
        d->cpus_checked = now;
}
