/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* src/basic/workers.c. A fixed set of threads that share one batch of
 * jobs with the caller and return when every job ran: fork and join, as
 * perf record --threads splits its rings among threads, for work the
 * caller would otherwise do alone (reading the rings of many CPUs).
 *
 * N workers are the caller (worker 0) and N - 1 threads, started by
 * workers_new() with every signal blocked. Between batches they sleep on
 * a condition: an idle caller wakes none of them. A batch hands its jobs
 * out one at a time from a shared counter, so a worker that finishes
 * early takes the next job; each job runs exactly once. Once no job is
 * left to take, the caller waits for the threads in the batch, not for
 * those the scheduler has not run yet (every CPU busy): they pass the
 * batch by. Every call is made from one thread. */

#include <stddef.h>

#include "evmon/cleanup.h"

struct workers;

typedef void (*workers_job_t)(size_t job, unsigned worker, void *userdata);

/* N (>= 1) workers: N - 1 threads beside the caller. -errno when a thread
 * cannot start (none is left running). */
int workers_new(unsigned n, struct workers **ret);
/* Stops and joins the threads. NULL is fine. */
struct workers *workers_free(struct workers *w);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct workers *, workers_free);

unsigned workers_n(const struct workers *w);

/* Runs FN(job, worker, USERDATA) for every job in [0, N_JOBS), spread
 * over the workers and the caller, and returns when all of them ran.
 * What a job wrote is visible to the caller on return. */
void workers_run(struct workers *w, size_t n_jobs, workers_job_t fn, void *userdata);
