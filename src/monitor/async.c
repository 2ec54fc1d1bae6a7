/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One worker thread, one FIFO of jobs, a ticket per job: see async.h. */

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>

#include "evmon/async.h"
#include "evmon/cleanup.h"

struct async_job {
        struct async_job *next;
        async_func_t fn;
        void *userdata;
        uint64_t ticket;
};

struct async_fds {
        int *fds;
        size_t n;
};

static pthread_mutex_t async_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t async_wake = PTHREAD_COND_INITIALIZER;    /* a job was queued */
static pthread_cond_t async_ran = PTHREAD_COND_INITIALIZER;     /* a job finished */
static struct async_job *async_head, *async_tail;               /* under async_lock */
static uint64_t async_queued;                                   /* the last ticket handed out; loop only */
static uint64_t async_finished;                                 /* written under async_lock, read atomically */
static bool async_started;                                      /* loop only */

static void *async_worker(void *arg) {
        (void) arg;
        pthread_mutex_lock(&async_lock);
        for (;;) {
                struct async_job *j;

                while (!async_head)
                        pthread_cond_wait(&async_wake, &async_lock);
                j = async_head;
                async_head = j->next;
                if (!async_head)
                        async_tail = NULL;
                pthread_mutex_unlock(&async_lock);

                j->fn(j->userdata);

                pthread_mutex_lock(&async_lock);
                /* Pairs with the acquire in async_done(): what the job did
                 * (the closes) happened before its ticket reads as done. */
                __atomic_store_n(&async_finished, j->ticket, __ATOMIC_RELEASE);
                pthread_cond_broadcast(&async_ran);
                free(j);
        }
        return NULL;
}

/* The worker takes no signals: every one stays with the loop's thread
 * (sd-event reads them from a signalfd with them blocked). */
static int async_start(void) {
        sigset_t all, old;
        pthread_attr_t attr;
        pthread_t t;
        int r;

        if (async_started)
                return 0;
        if (pthread_attr_init(&attr) != 0)
                return -ENOMEM;
        (void) pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        r = pthread_create(&t, &attr, async_worker, NULL);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        pthread_attr_destroy(&attr);
        if (r != 0)
                return -r;
        async_started = true;
        return 0;
}

/* Jobs queued and not run, at most: past it the loop waits for the
 * oldest, so a caller that removes events faster than the kernel lets
 * them close runs out of neither memory nor fds. A removal is two or
 * three jobs; nothing but a tight loop of them comes near. */
#define ASYNC_MAX_PENDING 64

uint64_t async_run(async_func_t fn, void *userdata) {
        struct async_job *j = NULL;
        uint64_t ticket;

        if (async_queued >= ASYNC_MAX_PENDING)
                async_wait(async_queued - ASYNC_MAX_PENDING + 1);

        if (async_start() >= 0)
                j = malloc(sizeof(*j));
        if (!j) {
                /* Blocking the loop beats leaking an fd or a probe. Every
                 * job before this one first: the order is the contract. */
                async_wait(0);
                fn(userdata);
                return async_queued;
        }
        /* The worker may run and free J before we return: keep its ticket. */
        ticket = ++async_queued;
        *j = (struct async_job) { .fn = fn, .userdata = userdata, .ticket = ticket };

        pthread_mutex_lock(&async_lock);
        if (async_tail)
                async_tail->next = j;
        else
                async_head = j;
        async_tail = j;
        pthread_cond_signal(&async_wake);
        pthread_mutex_unlock(&async_lock);
        return ticket;
}

static void close_all(int *fds, size_t n) {
        for (size_t i = 0; i < n; i++)
                safe_close(fds[i]);
        free(fds);
}

static void async_close_job(void *userdata) {
        struct async_fds *f = userdata;

        close_all(f->fds, f->n);
        free(f);
}

uint64_t async_close_fds(int *fds, size_t n) {
        struct async_fds *f;

        if (!fds)
                return async_queued;
        f = malloc(sizeof(*f));
        if (!f) {
                async_wait(0);
                close_all(fds, n);
                return async_queued;
        }
        *f = (struct async_fds) { .fds = fds, .n = n };
        return async_run(async_close_job, f);
}

bool async_done(uint64_t ticket) {
        return __atomic_load_n(&async_finished, __ATOMIC_ACQUIRE) >= ticket;
}

bool async_pending(void) {
        return !async_done(async_queued);
}

void async_wait(uint64_t ticket) {
        if (ticket == 0)
                ticket = async_queued;
        if (async_done(ticket))
                return;
        pthread_mutex_lock(&async_lock);
        while (__atomic_load_n(&async_finished, __ATOMIC_ACQUIRE) < ticket)
                pthread_cond_wait(&async_ran, &async_lock);
        pthread_mutex_unlock(&async_lock);
}
