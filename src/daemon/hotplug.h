/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "daemon.h"

/* CPU hotplug, on the once-a-second status tick (no wakeup of its own:
 * the unit's PrivateNetwork= and RestrictAddressFamilies=AF_UNIX leave no
 * uevent netlink socket to listen on). A CPU that went offline, or went
 * offline and came back since the last look (monitor_ring_alive()), has
 * its ring read to the end and its events closed; a CPU that is online
 * and has none gets them opened again, and every client a "gap" line:
 * events of that CPU between "since" and "time" were not captured. The
 * canaries are read only when /sys/kernel/uevent_seqnum moved (a CPU
 * going offline or online sends a uevent): their read is an IPI.
 * hotplug_start() notes when the CPUs offline at start were last seen
 * (then).
 *
 * The rings are one per possible CPU (monitor_new()), so a CPU hot-added
 * later (a cloud VM's vCPU, QEMU's device_add) has one, down, and is taken
 * in like an offline CPU when it comes online, with a gap line from the
 * look before it was added. Which CPUs are present is read at start and
 * after each uevent: status and metrics list the present CPUs (and any
 * whose ring is up) only, not every possible one. */
/* The state (struct hotplug, d->hotplug) is hotplug.c's: made by
 * hotplug_start() (0 or -ENOMEM), freed by hotplug_done(). */
int hotplug_start(struct daemon *d);
void hotplug_check(struct daemon *d);
void hotplug_done(struct daemon *d);
/* Whether ring I goes in status and metrics: its CPU is present. */
bool hotplug_cpu_listed(const struct daemon *d, size_t i);
/* Gap lines sent for ring I's CPU (0 before hotplug_start()). */
uint64_t hotplug_cpu_gaps(const struct daemon *d, size_t i);
