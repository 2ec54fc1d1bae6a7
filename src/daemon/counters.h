/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "daemon.h"

/* One counter line per counting event ("count": true), now. */
void counters_emit(struct daemon *d);
/* One record line for side record R (parsed from H) of EV. */
void record_emit(struct daemon *d, struct daemon_event *ev, const struct perf_event_header *h,
                 const struct perf_record *r);
