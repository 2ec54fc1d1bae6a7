/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fork and join over a fixed set of threads: see workers.h. */

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "evmon/workers.h"

struct workers {
        unsigned n;                     /* the caller and n - 1 threads */
        pthread_t *threads;
        unsigned n_started;

        pthread_mutex_t lock;
        pthread_cond_t start;           /* a batch was posted, or stop */
        pthread_cond_t done;            /* the last thread left the batch */
        uint64_t batch;                 /* under lock: the batch posted last */
        bool closed;                    /* under lock: it takes no more threads */
        unsigned busy;                  /* under lock: threads in it */
        bool stop;

        /* The batch, written before it is posted (under lock). */
        workers_job_t fn;
        void *userdata;
        size_t n_jobs;
        size_t next;                    /* the next job to take, atomic */
};

/* Takes jobs until none is left. */
static void take_jobs(struct workers *w, unsigned worker) {
        for (;;) {
                size_t j = __atomic_fetch_add(&w->next, 1, __ATOMIC_RELAXED);

                if (j >= w->n_jobs)
                        return;
                w->fn(j, worker, w->userdata);
        }
}

struct thread_arg {
        struct workers *w;
        unsigned worker;
};

static void *worker_main(void *p) {
        struct thread_arg a = *(struct thread_arg *) p;
        struct workers *w = a.w;
        uint64_t seen = 0;

        free(p);
        pthread_mutex_lock(&w->lock);
        for (;;) {
                /* A batch the caller closed before this thread ran (every
                 * CPU busy) is passed by: its jobs are done. */
                while (!w->stop && (w->batch == seen || w->closed)) {
                        seen = w->batch;
                        pthread_cond_wait(&w->start, &w->lock);
                }
                if (w->stop)
                        break;
                seen = w->batch;
                w->busy++;
                pthread_mutex_unlock(&w->lock);

                take_jobs(w, a.worker);

                /* The unlock after the caller's lock orders what the jobs
                 * wrote before its return from workers_run(). */
                pthread_mutex_lock(&w->lock);
                if (--w->busy == 0)
                        pthread_cond_signal(&w->done);
        }
        pthread_mutex_unlock(&w->lock);
        return NULL;
}

int workers_new(unsigned n, struct workers **ret) {
        _cleanup_(workers_freep) struct workers *w = NULL;
        sigset_t all, old;

        if (n == 0 || !ret)
                return -EINVAL;
        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        w->n = n;
        pthread_mutex_init(&w->lock, NULL);
        pthread_cond_init(&w->start, NULL);
        pthread_cond_init(&w->done, NULL);
        w->threads = calloc(n, sizeof(*w->threads));
        if (!w->threads)
                return -ENOMEM;

        /* The threads take no signals: they stay with the loop's thread
         * (sd-event reads them from a signalfd with them blocked). */
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        for (unsigned i = 1; i < n; i++) {
                struct thread_arg *a = malloc(sizeof(*a));
                int r;

                if (!a) {
                        pthread_sigmask(SIG_SETMASK, &old, NULL);
                        return -ENOMEM;
                }
                *a = (struct thread_arg) { w, i };
                r = pthread_create(&w->threads[w->n_started], NULL, worker_main, a);
                if (r != 0) {
                        free(a);
                        pthread_sigmask(SIG_SETMASK, &old, NULL);
                        return -r;
                }
                w->n_started++;
        }
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        *ret = w;
        w = NULL;
        return 0;
}

struct workers *workers_free(struct workers *w) {
        if (!w)
                return NULL;
        pthread_mutex_lock(&w->lock);
        w->stop = true;
        pthread_cond_broadcast(&w->start);
        pthread_mutex_unlock(&w->lock);
        for (unsigned i = 0; i < w->n_started; i++)
                pthread_join(w->threads[i], NULL);
        pthread_cond_destroy(&w->done);
        pthread_cond_destroy(&w->start);
        pthread_mutex_destroy(&w->lock);
        free(w->threads);
        free(w);
        return NULL;
}

unsigned workers_n(const struct workers *w) {
        return w ? w->n : 0;
}

void workers_run(struct workers *w, size_t n_jobs, workers_job_t fn, void *userdata) {
        if (n_jobs == 0)
                return;
        /* One job, or no thread: the caller alone, no wakeup. */
        if (!w || w->n_started == 0 || n_jobs == 1) {
                for (size_t j = 0; j < n_jobs; j++)
                        fn(j, 0, userdata);
                return;
        }
        pthread_mutex_lock(&w->lock);
        w->fn = fn;
        w->userdata = userdata;
        w->n_jobs = n_jobs;
        __atomic_store_n(&w->next, 0, __ATOMIC_RELAXED);
        w->closed = false;
        w->batch++;
        pthread_cond_broadcast(&w->start);
        pthread_mutex_unlock(&w->lock);

        take_jobs(w, 0);

        /* No job is left to take: threads that have not joined yet would
         * find none, so they are not waited for (a host whose CPUs are
         * all busy may not run them for milliseconds); those in it are. */
        pthread_mutex_lock(&w->lock);
        w->closed = true;
        while (w->busy > 0)
                pthread_cond_wait(&w->done, &w->lock);
        pthread_mutex_unlock(&w->lock);
}
