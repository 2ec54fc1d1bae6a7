/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Private to src/monitor/: the doorbell, which wakes the reader at the first
 * record after a quiet spell while the rings keep their throughput-friendly
 * watermark. See doorbell.c for how and why. */

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct doorbell {
        int fd;                 /* group leader: a software dummy, owns a one-page ring; -1 when closed */
        int cpu;
        void *base;             /* the leader's mmap: control page + one data page */
        size_t map_size;
        bool armed;
        bool pausable;          /* the leader stays enabled; arming unpauses its ring */
        bool resting;           /* its leader off while its ring flows (doorbell_rest()) */
        bool uncounted;         /* a member whose copies are not one a record (doorbell_member_open()) */
        unsigned copies;        /* records its last arm emptied from its ring, UINT_MAX: too many to count */
};

/* Opens B's leader on CPU for TARGET (a pid, a cgroup fd with
 * PERF_FLAG_PID_CGROUP in FLAGS, or -1: system-wide), disarmed, on CLOCKID
 * (SET_OUTPUT is refused between events on different clocks), and maps its
 * ring. B is fully initialised, so doorbell_close() may follow a failure. */
int doorbell_open(struct doorbell *b, int cpu, pid_t target, unsigned long flags, bool use_clockid, clockid_t clockid,
                  size_t page_size);
void doorbell_close(struct doorbell *b);

/* Opens another copy of the event EVENT describes (the caller's own copy
 * samples into the main ring) as a member of B's group, on TARGET (a pid, or a
 * cgroup fd with PERF_FLAG_PID_CGROUP in FLAGS) with the same FILTER, that
 * wakes B's poller with every record it writes into B's ring. Disabled:
 * enable it with the caller's copy. Returns the fd, -EOPNOTSUPP for an
 * event that writes no records (!doorbell_rings_for(): it needs none), -EMEDIUMTYPE for
 * one that may not join (doorbell_fits()), or the kernel's -errno. */
int doorbell_member_open(struct doorbell *b, const struct perf_event_attr *event, pid_t target,
                         unsigned long flags, const char *filter);

/* Whether the event ATTR describes writes records a doorbell should ring
 * for: samples (a period, a frequency, raw tracepoint data) or side-band
 * records (comm, task, mmap, context switches, cgroup, namespaces, ...,
 * which a "dummy" event asks for). A counting event writes none. */
bool doorbell_rings_for(const struct perf_event_attr *attr);

/* Whether events of perf TYPE may join a doorbell: those of software-
 * context PMUs (tracepoints, software events, breakpoints, the kprobe and
 * uprobe PMUs). A group of hardware-PMU events is scheduled all or nothing
 * onto the PMU's few counters: copies of several of them could keep the
 * whole doorbell off, and it would never ring. Such events go without one
 * (their periodic samples flow anyway). */
bool doorbell_fits(uint32_t type);

/* Arm: the next member record makes B's fd readable; on an armed B it only
 * empties the ring (after a ring: a full one would never ring again).
 * Disarm: members write nothing until the next arm. With a pausable B both
 * only flip its ring's pause flag (no IPI, no reschedule) and a disarmed
 * member still runs its filter for each hit; otherwise they enable and
 * disable the leader, and a disarmed member costs the traced program
 * nothing. */
int doorbell_arm(struct doorbell *b);
int doorbell_disarm(struct doorbell *b);
/* The samples (copies) in B's ring that the next arm will count, as it
 * counts them (UINT_MAX: too many to count); the ring is left as it is. */
unsigned doorbell_pending(const struct doorbell *b);

/* Around enabling members of a pausable B (HOLD true, then false): its
 * leader off, then on again. A member enabled while its leader runs was
 * seen never to be scheduled in on a CPU-wide context (Linux 6.18: the
 * member's reschedule is its own PMU's, the tracepoint one, and the group
 * belongs to the leader's), so it never rang; enabled while the leader is
 * off, it comes in with the leader. Call it on B's CPU: no IPI, and the
 * reschedule cannot meet a handler part-way through a tracepoint's list.
 * A no-op for a doorbell that is not pausable (disarmed, it is off). */
int doorbell_hold(struct doorbell *b, bool hold);

/* A disarmed pausable B's leader off (REST) while its ring flows, then on
 * again before it is armed: paused, each member still runs for every hit
 * and is refused by the paused ring (bench/aggregate, getppid at the
 * maximum rate: the traced program's overhead +250-275 ns a call with
 * doorbells, +180-187 without). Call it on B's CPU, as doorbell_hold(). A
 * resting B stays off across doorbell_hold(). -EBUSY on an armed B; a
 * no-op for one that is not pausable (disarmed, it is off). */
int doorbell_rest(struct doorbell *b, bool rest);
