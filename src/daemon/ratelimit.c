/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "ratelimit.h"

/* Credit counts millionths of a line, so PER_SEC lines a second is
 * PER_SEC units a microsecond: no division, no rounding. */
#define LINE 1000000u

void ratelimit_init(struct ratelimit *rl, unsigned burst, uint64_t now_usec) {
        *rl = (struct ratelimit) { .last_usec = now_usec, .credit = (uint64_t) burst * LINE };
}

static void ratelimit_refill(struct ratelimit *rl, unsigned burst, unsigned per_sec, uint64_t now_usec) {
        uint64_t max = (uint64_t) burst * LINE, elapsed;

        if (now_usec <= rl->last_usec)
                return;
        elapsed = now_usec - rl->last_usec;
        rl->last_usec = now_usec;
        if (per_sec == 0)
                return;
        /* A long quiet fills it; below that the product stays under max. */
        if (elapsed >= max / per_sec)
                rl->credit = max;
        else
                rl->credit = rl->credit + elapsed * per_sec < max ? rl->credit + elapsed * per_sec : max;
}

bool ratelimit_below(struct ratelimit *rl, unsigned burst, unsigned per_sec, uint64_t now_usec) {
        ratelimit_refill(rl, burst, per_sec, now_usec);
        if (rl->credit >= LINE) {
                rl->credit -= LINE;
                return true;
        }
        if (rl->suppressed++ == 0)
                rl->suppressed_since = now_usec;
        return false;
}

uint64_t ratelimit_take_suppressed(struct ratelimit *rl, uint64_t *ret_since) {
        uint64_t n = rl->suppressed;

        if (ret_since)
                *ret_since = rl->suppressed_since;
        rl->suppressed = 0;
        return n;
}

void ratelimit_uids_init(struct ratelimit_uids *t, unsigned burst, unsigned per_sec) {
        memset(t, 0, sizeof(*t));
        t->burst = burst;
        t->per_sec = per_sec;
}

/* Full and nothing to say: the same as a fresh bucket. */
static bool ratelimit_idle(struct ratelimit *rl, unsigned burst, unsigned per_sec, uint64_t now_usec) {
        ratelimit_refill(rl, burst, per_sec, now_usec);
        return rl->credit == (uint64_t) burst * LINE && rl->suppressed == 0;
}

static struct ratelimit *ratelimit_uids_find(struct ratelimit_uids *t, uid_t uid, uint64_t now_usec) {
        struct ratelimit_uid *free_slot = NULL;

        for (size_t i = 0; i < RATELIMIT_UIDS; i++)
                if (t->slots[i].used && t->slots[i].uid == uid)
                        return &t->slots[i].rl;
        for (size_t i = 0; i < RATELIMIT_UIDS && !free_slot; i++)
                if (!t->slots[i].used || ratelimit_idle(&t->slots[i].rl, t->burst, t->per_sec, now_usec))
                        free_slot = &t->slots[i];
        if (free_slot) {
                free_slot->used = true;
                free_slot->uid = uid;
                ratelimit_init(&free_slot->rl, t->burst, now_usec);
                return &free_slot->rl;
        }
        if (!t->others_used) {
                t->others_used = true;
                ratelimit_init(&t->others, t->burst, now_usec);
        }
        return &t->others;
}

bool ratelimit_uids_below(struct ratelimit_uids *t, uid_t uid, uint64_t now_usec) {
        return ratelimit_below(ratelimit_uids_find(t, uid, now_usec), t->burst, t->per_sec, now_usec);
}

void ratelimit_uids_suppressed(struct ratelimit_uids *t,
                               void (*fn)(uid_t uid, bool others, uint64_t n, uint64_t since_usec, void *userdata),
                               void *userdata) {
        uint64_t n, since;

        for (size_t i = 0; i < RATELIMIT_UIDS; i++)
                if (t->slots[i].used && (n = ratelimit_take_suppressed(&t->slots[i].rl, &since)) > 0)
                        fn(t->slots[i].uid, false, n, since, userdata);
        if (t->others_used && (n = ratelimit_take_suppressed(&t->others, &since)) > 0)
                fn(0, true, n, since, userdata);
}
