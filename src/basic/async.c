/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One worker thread, one FIFO of jobs, a ticket per job: see async.h. */

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "evmon/async.h"
#include "evmon/cleanup.h"

struct async_job {
        struct async_job *next;
        async_func_t fn;
        void *userdata;
        uint64_t ticket;
        size_t n_fds;           /* the open fds it closes */
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
static size_t async_jobs, async_fds;                            /* queued or running; under async_lock */

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
                async_jobs--;
                async_fds -= j->n_fds;
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

/* What pending jobs may hold, counted as their fds plus one per job (a
 * job is memory too, and a probe removal holds no fd), before
 * async_queue() makes the loop wait for the oldest to run: half the soft
 * RLIMIT_NOFILE, read on each call since the process may change it.
 *
 * A bound on the number of jobs (64, once) made the loop wait through
 * the removal of a few hundred tracepoints, one grace period each (~30
 * ms, serial in the kernel): 12 s for 399 with no ring or client read,
 * and the watchdog's 30 s at ~1,000. A bound in fds lets one removal
 * queue all it closes (its fds were open a moment ago; only events
 * holding more than half the limit make it wait), and still holds a
 * tight loop of adds and removes, which opens faster than the kernel
 * closes, to the kernel's pace with half the limit left for what evmond
 * opens meanwhile. Simpler than waiting for the closes at EMFILE: every
 * open (perf, accept, tracefs, the metrics file) would need the retry,
 * and the pile would first grow to the limit, then be waited for whole. */
#define ASYNC_ROOM_MIN 16
#define ASYNC_ROOM_MAX (1u << 20)

static size_t async_room(void) {
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur / 2 > ASYNC_ROOM_MAX)
                return ASYNC_ROOM_MAX;
        return rl.rlim_cur / 2 > ASYNC_ROOM_MIN ? (size_t) rl.rlim_cur / 2 : ASYNC_ROOM_MIN;
}

/* Waits, while anything is pending, until WEIGHT more fits in the room. */
static void async_make_room(size_t weight) {
        size_t room = async_room();

        pthread_mutex_lock(&async_lock);
        while (async_jobs > 0 && async_jobs + async_fds + weight > room)
                pthread_cond_wait(&async_ran, &async_lock);
        pthread_mutex_unlock(&async_lock);
}

static uint64_t async_queue(async_func_t fn, void *userdata, size_t n_fds) {
        struct async_job *j = NULL;
        uint64_t ticket;

        if (async_start() >= 0)
                j = malloc(sizeof(*j));
        if (!j) {
                /* Blocking the loop beats leaking an fd or a probe. Every
                 * job before this one first: the order is the contract. */
                async_wait(0);
                fn(userdata);
                return async_queued;
        }
        async_make_room(n_fds + 1);

        /* The worker may run and free J before we return: keep its ticket. */
        ticket = ++async_queued;
        *j = (struct async_job) { .fn = fn, .userdata = userdata, .ticket = ticket, .n_fds = n_fds };

        pthread_mutex_lock(&async_lock);
        if (async_tail)
                async_tail->next = j;
        else
                async_head = j;
        async_tail = j;
        async_jobs++;
        async_fds += n_fds;
        pthread_cond_signal(&async_wake);
        pthread_mutex_unlock(&async_lock);
        return ticket;
}

uint64_t async_run(async_func_t fn, void *userdata) {
        return async_queue(fn, userdata, 0);
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
        size_t n_open = 0;

        if (!fds)
                return async_queued;
        f = malloc(sizeof(*f));
        if (!f) {
                async_wait(0);
                close_all(fds, n);
                return async_queued;
        }
        *f = (struct async_fds) { .fds = fds, .n = n };
        for (size_t i = 0; i < n; i++)
                if (fds[i] >= 0)
                        n_open++;
        return async_queue(async_close_job, f, n_open);
}

bool async_done(uint64_t ticket) {
        return __atomic_load_n(&async_finished, __ATOMIC_ACQUIRE) >= ticket;
}

bool async_pending(void) {
        return !async_done(async_queued);
}

void async_stats(size_t *ret_jobs, size_t *ret_fds) {
        pthread_mutex_lock(&async_lock);
        *ret_jobs = async_jobs;
        *ret_fds = async_fds;
        pthread_mutex_unlock(&async_lock);
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
