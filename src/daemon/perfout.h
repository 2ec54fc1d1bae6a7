/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "subscription.h"

struct daemon;

/* The head of a perf pipe-mode stream for a client subscribed as SUB (its
 * events as open now): *RET (LEN bytes, the caller frees), and in
 * *RET_LOST_ID an id of its events for the LOST records evmond writes
 * itself (0 when it has none). 0 or -errno. */
int daemon_perf_head(struct daemon *d, const struct subscription *sub, char **ret, size_t *ret_len,
                     uint64_t *ret_lost_id);

/* The trace event id the probe the PMU made for the event of INDEX has in
 * perf streams (its format's "ID:" and its records' common_type there): a
 * u16 from the top of the range down, as tracefs hands its ids out from
 * the bottom. */
static inline uint16_t daemon_perf_pmu_id(unsigned index) {
        return (uint16_t) (0xffffu - (index & 0x3fffu));
}
