/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Budgets for log lines that clients cause (a connection, a refusal):
 * any local user of the socket could otherwise write to the journal as
 * fast as it connects, until journald's own rate limit drops evmond's
 * lines, the ones that matter among them. A token bucket per uid: BURST
 * lines at once, then PER_SEC a second; what it refuses is counted, to be
 * said in one line. No clock, no I/O: the caller passes the time. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct ratelimit {
        uint64_t last_usec;           /* when credit was last topped up */
        uint64_t credit;              /* in millionths of a line */
        uint64_t suppressed;          /* refused since ratelimit_take_suppressed() */
        uint64_t suppressed_since;    /* when the first of them was refused */
};

/* A fresh bucket holds BURST lines. */
void ratelimit_init(struct ratelimit *rl, unsigned burst, uint64_t now_usec);
/* Whether one more line may go out at NOW_USEC; counts it as suppressed
 * when not. */
bool ratelimit_below(struct ratelimit *rl, unsigned burst, unsigned per_sec, uint64_t now_usec);
/* The lines suppressed since the last call, and since when (*ret_since,
 * when not NULL); resets the count. */
uint64_t ratelimit_take_suppressed(struct ratelimit *rl, uint64_t *ret_since);

/* The most uids with a bucket of their own; others share one. */
#define RATELIMIT_UIDS 16

struct ratelimit_uids {
        unsigned burst, per_sec;
        struct ratelimit_uid {
                bool used;
                uid_t uid;
                struct ratelimit rl;
        } slots[RATELIMIT_UIDS];
        struct ratelimit others;      /* every uid without a slot */
        bool others_used;
};

void ratelimit_uids_init(struct ratelimit_uids *t, unsigned burst, unsigned per_sec);
/* Whether one more line about a client of UID may go out at NOW_USEC.
 * A uid gets a slot of its own while one is free, or one whose bucket is
 * full again with nothing suppressed (as good as new); else it shares
 * the others' bucket. */
bool ratelimit_uids_below(struct ratelimit_uids *t, uid_t uid, uint64_t now_usec);
/* Calls FN for each bucket that suppressed lines since the last call,
 * with their count: OTHERS true for the shared bucket (UID meaningless). */
void ratelimit_uids_suppressed(struct ratelimit_uids *t,
                               void (*fn)(uid_t uid, bool others, uint64_t n, uint64_t since_usec, void *userdata),
                               void *userdata);
