/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* src/basic: clock readings, for every module. Inline: the daemon reads
 * the clock on its hot path (the drain's budget). */

#include <stdint.h>
#include <time.h>

#define NSEC_PER_SEC UINT64_C(1000000000)
#define NSEC_PER_MSEC UINT64_C(1000000)
#define NSEC_PER_USEC UINT64_C(1000)

/* CLOCK in ns since its epoch. */
static inline uint64_t now_ns(clockid_t clock) {
        struct timespec ts;

        clock_gettime(clock, &ts);
        return (uint64_t) ts.tv_sec * NSEC_PER_SEC + (uint64_t) ts.tv_nsec;
}

/* CLOCK_MONOTONIC in µs: a client's stuck time, the log budget. */
static inline uint64_t now_usec(void) {
        return now_ns(CLOCK_MONOTONIC) / NSEC_PER_USEC;
}

/* CLOCK_MONOTONIC in ms, signed for deadline arithmetic ("now - since"). */
static inline int64_t now_ms(void) {
        return (int64_t) (now_ns(CLOCK_MONOTONIC) / NSEC_PER_MSEC);
}

/* TS on the event clock as realtime, OFFSET_NS (realtime - event clock)
 * added: saturated rather than wrapped on a nonsense offset. Inline: the
 * encoder calls it for every event. */
static inline uint64_t clock_to_realtime(uint64_t ts, int64_t offset_ns) {
        uint64_t rt = ts + (uint64_t) offset_ns;

        if (offset_ns < 0 ? rt > ts : rt < ts)
                rt = offset_ns < 0 ? 0 : UINT64_MAX;
        return rt;
}
