/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* src/basic/async.c. Work the event loop must not wait for, done in order on one worker
 * thread: the last close of a perf fd (for a tracepoint the kernel waits
 * for an RCU grace period in perf_trace_event_unreg()) and the removal of
 * a probe from tracefs, which must come after it. systemd's
 * asynchronous_close() (src/basic/async.c) does the same for one fd.
 *
 * Jobs run one after the other in the order they were queued, so a job
 * queued after a close sees that fd closed. A job touches nothing the
 * loop uses but what it was given. Every call is made from one thread
 * (the loop's); the worker starts on the first job. Queueing returns at
 * once unless the pending jobs hold half the RLIMIT_NOFILE in fds: then
 * it waits for the oldest, so a caller that opens and removes faster
 * than the kernel closes runs out of neither fds nor memory. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef void (*async_func_t)(void *userdata);

/* Queues FN(USERDATA); returns its ticket (> 0), for async_done() and
 * async_wait(). Without memory or a thread, runs FN here and now. */
uint64_t async_run(async_func_t fn, void *userdata);

/* Closes the N fds of FDS (negative ones skipped) and frees FDS, which
 * the worker owns from here on (NULL is fine). Returns its ticket. */
uint64_t async_close_fds(int *fds, size_t n);

/* Whether the job of TICKET (and every one before it) has run. */
bool async_done(uint64_t ticket);

/* Waits until the job of TICKET and all before it ran; 0: every job queued
 * so far. Before exit, and before reusing what a pending job removes. */
void async_wait(uint64_t ticket);

/* Whether any job is queued or running. */
bool async_pending(void);

/* Jobs queued or running, and the open fds they are to close. */
void async_stats(size_t *ret_jobs, size_t *ret_fds);
