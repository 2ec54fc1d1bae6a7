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
 * (then). */
int hotplug_start(struct daemon *d);
void hotplug_check(struct daemon *d);
void hotplug_done(struct daemon *d);
