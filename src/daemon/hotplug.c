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

#include "counters.h"
#include "hotplug.h"
#include "reader.h"
#include "server.h"
#include "evmon/cleanup.h"
#include "evmon/encode.h"
#include "evmon/io.h"
#include "evmon/log.h"
#include "evmon/parse.h"
#include "evmon/protocol.h"

/* What hotplug keeps between its looks; each array has one entry per
 * ring. */
struct hotplug {
        uint64_t *cpu_since;          /* 0 while its events are open, else (event clock) since when its
                                       * events may be missing */
        uint64_t cpus_checked;        /* the last look at the CPUs (event clock) */
        uint64_t uevent_seqnum;       /* /sys/kernel/uevent_seqnum at that look, UINT64_MAX: unknown */
        unsigned canary_looks;        /* ticks that still read the canaries */
        uint64_t canary_since;        /* the look before they began: all was well then */
        uint64_t *cpu_gaps;           /* gap lines sent */
        bool *cpu_present;            /* its CPU was present at the last look */
        bool *cpu_added;              /* hot-added since evmond started, not yet taken in */
        size_t cpus_unwatched;        /* present CPUs without a ring, as last said */
        bool cpus_present_known;      /* cpu_present was read from /sys/devices/system/cpu/present */
};

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
        char buf[32];
        uint64_t v;

        if (sysfs_read_small("/sys/kernel/uevent_seqnum", buf, sizeof(buf)) < 0 || parse_u64(buf, &v) < 0)
                return UINT64_MAX;
        return v;
}

/* Marks in PRESENT[i] whether ring I's CPU is in CPUS (ascending, as
 * the rings are): one walk of both. */
static void mark_in(struct daemon *d, const int *cpus, size_t n_cpus, bool *present) {
        size_t n = monitor_n_rings(d->monitor), k = 0;

        for (size_t i = 0; i < n; i++) {
                int cpu = monitor_ring_cpu(d->monitor, i);

                while (k < n_cpus && cpus[k] < cpu)
                        k++;
                present[i] = k < n_cpus && cpus[k] == cpu;
        }
}

/* "2-5,7" for the rings whose CPUs are not present (and whose rings are
 * down), in BUF of SIZE bytes (ending in "..." when it does not fit);
 * returns how many. */
static size_t absent_text(struct daemon *d, char *buf, size_t size) {
        const struct hotplug *h = d->hotplug;
        size_t n = monitor_n_rings(d->monitor), count = 0, len = 0;
        bool cut = false;

        buf[0] = '\0';
        for (size_t i = 0; i < n; i++) {
                int first, last;
                size_t j = i;

                if (h->cpu_present[i] || monitor_ring_up(d->monitor, i))
                        continue;
                first = last = monitor_ring_cpu(d->monitor, i);
                while (j + 1 < n && !h->cpu_present[j + 1] && !monitor_ring_up(d->monitor, j + 1) &&
                       monitor_ring_cpu(d->monitor, j + 1) == last + 1)
                        last = monitor_ring_cpu(d->monitor, ++j);
                count += j - i + 1;
                i = j;
                if (cut)
                        continue;
                if (len + 32 > size) {
                        snprintf(buf + len, size - len, "...");
                        cut = true;
                        continue;
                }
                len += (size_t) snprintf(buf + len, size - len, first == last ? "%s%d" : "%s%d-%d", len ? "," : "",
                                         first, last);
        }
        return count;
}

int hotplug_start(struct daemon *d) {
        struct hotplug *h;
        _cleanup_(freep) int *present = NULL;
        size_t n = monitor_n_rings(d->monitor), n_present = 0, n_absent;
        uint64_t now = now_ns(d->config->clockid);
        char absent[256];
        int r;

        h = d->hotplug = calloc(1, sizeof(*h));
        if (!h)
                return -ENOMEM;
        h->cpu_since = calloc(n ?: 1, sizeof(*h->cpu_since));
        h->cpu_gaps = calloc(n ?: 1, sizeof(*h->cpu_gaps));
        h->cpu_present = calloc(n ?: 1, sizeof(*h->cpu_present));
        h->cpu_added = calloc(n ?: 1, sizeof(*h->cpu_added));
        if (!h->cpu_since || !h->cpu_gaps || !h->cpu_present || !h->cpu_added)
                return -ENOMEM;
        h->uevent_seqnum = uevent_seqnum();
        r = perf_cpu_list("present", &present, &n_present);
        if (r >= 0) {
                mark_in(d, present, n_present, h->cpu_present);
                h->cpus_present_known = true;
        } else
                log_debug_errno(r, "Failed to read /sys/devices/system/cpu/present: %m");
        for (size_t i = 0; i < n; i++) {
                if (monitor_ring_up(d->monitor, i))
                        continue;
                /* Down: taken in when it comes online, with a gap line
                 * from now. Not present at all: said once for them all. */
                h->cpu_since[i] = now;
                if (r < 0 || h->cpu_present[i])
                        log_notice("CPU %d is offline: its events are opened when it comes online",
                                   monitor_ring_cpu(d->monitor, i));
        }
        n_absent = r >= 0 ? absent_text(d, absent, sizeof(absent)) : 0;
        if (n_absent > 0)
                log_info("%zu possible CPU%s not present (%s): %s events are opened if %s hot-added and comes online",
                         n_absent, n_absent == 1 ? " is" : "s are", absent, n_absent == 1 ? "its" : "their",
                         n_absent == 1 ? "it is" : "one is");
        h->cpus_checked = h->canary_since = now;
        return 0;
}

void hotplug_done(struct daemon *d) {
        struct hotplug *h = d->hotplug;

        if (!h)
                return;
        free(h->cpu_since);
        free(h->cpu_gaps);
        free(h->cpu_present);
        free(h->cpu_added);
        free(h);
        d->hotplug = NULL;
}

bool hotplug_cpu_listed(const struct daemon *d, size_t i) {
        const struct hotplug *h = d->hotplug;

        return !h || !h->cpus_present_known || h->cpu_present[i] || monitor_ring_up(d->monitor, i);
}

uint64_t hotplug_cpu_gaps(const struct daemon *d, size_t i) {
        return d->hotplug ? d->hotplug->cpu_gaps[i] : 0;
}

/* The present CPUs again, after a uevent: a CPU hot-added since the last
 * look (the hypervisor's device_add; it sends a uevent) is said once, and
 * what happens on it can only have begun after that look, where its gap
 * line begins. One that was taken away is listed no more. */
static void present_check(struct daemon *d) {
        struct hotplug *h = d->hotplug;
        _cleanup_(freep) int *present = NULL;
        _cleanup_(freep) bool *now_present = NULL;
        size_t n = monitor_n_rings(d->monitor), n_present = 0;
        int r;

        r = perf_cpu_list("present", &present, &n_present);
        if (r < 0) {
                log_debug_errno(r, "Failed to read /sys/devices/system/cpu/present: %m");
                return;
        }
        now_present = calloc(n ?: 1, sizeof(*now_present));
        if (!now_present)
                return;
        mark_in(d, present, n_present, now_present);
        for (size_t i = 0; i < n; i++) {
                int cpu = monitor_ring_cpu(d->monitor, i);
                bool was = h->cpu_present[i];

                h->cpu_present[i] = now_present[i];
                /* Changes only, from a list read before (not the first
                 * read after a failed one). A CPU removed while its
                 * events are open has them closed below (it is offline). */
                if (now_present[i] == was || !h->cpus_present_known)
                        continue;
                if (!now_present[i]) {
                        log_notice("CPU %d was removed (no longer present)", cpu);
                        continue;
                }
                /* Online is present: its events are open, nothing to do. */
                if (monitor_ring_up(d->monitor, i))
                        continue;
                /* It was absent at that read, and is not online now
                 * (its ring would be up) or came online after the last
                 * look's list (which did not have it): nothing ran on
                 * it before the last look. */
                h->cpu_added[i] = true;
                h->cpu_since[i] = h->cpus_checked;
                log_notice("CPU %d was hot-added: its events are opened when it comes online", cpu);
        }
        h->cpus_present_known = true;
        /* A present CPU the kernel never counted as possible has no ring
         * (it cannot be: the possible ones are fixed at boot), or one
         * missed where "possible" could not be read: never silently. */
        if (n_present > 0) {
                size_t k = 0, missing = 0;

                for (size_t j = 0; j < n_present; j++) {
                        while (k < n && monitor_ring_cpu(d->monitor, k) < present[j])
                                k++;
                        if (k >= n || monitor_ring_cpu(d->monitor, k) != present[j])
                                missing++;
                }
                if (missing != h->cpus_unwatched && missing > 0)
                        log_warning("%zu present CPU%s outside the CPUs evmond found at start: %s events are not "
                                    "captured until evmond is restarted", missing, missing == 1 ? " is" : "s are",
                                    missing == 1 ? "its" : "their");
                h->cpus_unwatched = missing;
        }
}

void hotplug_check(struct daemon *d) {
        struct hotplug *h = d->hotplug;
        _cleanup_(freep) int *online = NULL;
        size_t n_online = 0, n = monitor_n_rings(d->monitor), k = 0;
        uint64_t look = now_ns(d->config->clockid), now = look, seq;
        char a[32], b[32];
        bool quiet;
        int r;

        if (!h)
                return;
        /* Before the CPU list: a change after this is seen next time. */
        seq = uevent_seqnum();
        /* This look and the next: a canary stopped since its last read
         * shows standing still only at the read after (monitor_ring_alive()). */
        if (seq == UINT64_MAX || seq != h->uevent_seqnum) {
                if (h->canary_looks == 0)
                        h->canary_since = h->cpus_checked;
                h->canary_looks = 2;
                /* A CPU hot-added or removed sends one too. */
                present_check(d);
        }
        h->uevent_seqnum = seq;
        quiet = h->canary_looks == 0;
        if (h->canary_looks > 0)
                h->canary_looks--;
        r = perf_online_cpus(&online, &n_online);
        if (r < 0) {
                log_debug_errno(r, "Failed to read /sys/devices/system/cpu/online: %m");
                return;
        }
        for (size_t i = 0; i < n; i++) {
                int cpu = monitor_ring_cpu(d->monitor, i);
                bool on, added;

                /* Both ascending: one walk. */
                while (k < n_online && online[k] < cpu)
                        k++;
                on = k < n_online && online[k] == cpu;
                /* Online is present: hot-added after this look's
                 * present list (its gap then begins where the CPU's
                 * since stands, earlier), or that list unreadable. */
                if (on && !h->cpu_present[i]) {
                        h->cpu_present[i] = true;
                        h->cpu_added[i] = !monitor_ring_up(d->monitor, i);
                }

                if (monitor_ring_up(d->monitor, i)) {
                        if (on && (quiet || monitor_ring_alive(d->monitor, i)))
                                continue;
                        /* What it wrote before it went is all there: read
                         * it to the end before the ring goes. */
                        reader_drain_ring(d->reader, i);
                        counters_cpu_down(d, cpu);
                        (void) monitor_cpu_down(d->monitor, i);
                        (void) reader_ring_changed(d->reader, i);
                        /* Gone since the last look (its CPU list), or,
                         * for a canary that stopped, since the look before
                         * the uevent: what it did since may be missing. */
                        h->cpu_since[i] = on ? h->canary_since : h->cpus_checked;
                        log_notice("CPU %d went offline%s: its events are closed until it is online", cpu,
                                   on ? " and came back since the last look" : "");
                        if (!on)
                                continue;
                }
                if (!on || h->cpu_since[i] == 0)
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
                /* Its fds have new ids, which no perf stream's head has. */
                server_end_perf(d->server);
                now = now_ns(d->config->clockid);
                h->cpu_gaps[i]++;
                gap_emit(d, cpu, h->cpu_since[i], now);
                time_text(d, h->cpu_since[i], a, sizeof(a));
                time_text(d, now, b, sizeof(b));
                added = h->cpu_added[i];
                log_notice("CPU %d is online%s: its events are open%s; what happened on it between %s and %s UTC "
                           "was not captured (a gap line says so to every client)", cpu,
                           added ? " (hot-added)" : "", added ? "" : " again", a, b);
                h->cpu_since[i] = 0;
                h->cpu_added[i] = false;
        }
        /* When this look began, before its lists were read (not when a
         * CPU's events were opened above): what changed after the lists
         * were read has changed after this. */
        h->cpus_checked = look;
}
