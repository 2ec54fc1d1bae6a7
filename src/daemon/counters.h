/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "daemon.h"

/* One counter line per counting event ("count": true), now. */
void counters_emit(struct daemon *d);
/* TO, opened anew under the name of FROM (a counting event about to
 * close: a reload or filter change), goes on from FROM's counts: its
 * counter lines' value, cpus and delta carry on where FROM's would have,
 * as a Prometheus counter must. Read FROM before it closes. 0 or -ENOMEM
 * (then TO's lines start from 0). */
int counters_carry(struct daemon *d, struct daemon_event *from, struct daemon_event *to);
/* CPU is going down (hotplug): what the counting events counted on it is
 * kept in their value, which goes on when the CPU is back and its fds
 * count from 0 again. Call before monitor_cpu_down(). */
void counters_cpu_down(struct daemon *d, int cpu);
