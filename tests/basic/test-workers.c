/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* src/basic/workers.c: every job of a batch runs exactly once, on the
 * threads and the caller both; what the jobs wrote is there when
 * workers_run() returns; many batches in a row; a pool of one runs on
 * the caller; the threads sleep between batches; a thread the scheduler
 * cannot run holds no batch up. */

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <time.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "evmon/workers.h"
#include "../test-util.h"

#define N_JOBS 64u

struct batch {
        unsigned runs[N_JOBS];          /* each job's, written by whichever worker took it */
        uint64_t sums[N_JOBS];
        unsigned by_worker[8];          /* jobs each worker ran (atomic) */
};

static void job(size_t j, unsigned worker, void *userdata) {
        struct batch *b = userdata;
        uint64_t s = 0;

        /* Some work, so that several workers get a share. */
        for (uint64_t i = 0; i < 20000 + 1000 * (j % 5); i++)
                s += i ^ j;
        b->runs[j]++;
        b->sums[j] = s;
        __atomic_fetch_add(&b->by_worker[worker], 1, __ATOMIC_RELAXED);
}

static uint64_t expect_sum(size_t j) {
        uint64_t s = 0;

        for (uint64_t i = 0; i < 20000 + 1000 * (j % 5); i++)
                s += i ^ j;
        return s;
}

static void test_each_job_once(void **state) {
        struct workers *w = NULL;
        unsigned workers_seen = 0;

        (void) state;
        assert_int_equal(workers_new(4, &w), 0);
        assert_int_equal(workers_n(w), 4);
        for (unsigned round = 0; round < 200; round++) {
                struct batch b = { 0 };

                workers_run(w, N_JOBS, job, &b);
                for (size_t j = 0; j < N_JOBS; j++) {
                        assert_int_equal(b.runs[j], 1);
                        assert_true(b.sums[j] == expect_sum(j));
                }
                for (unsigned k = 0; k < 4; k++)
                        if (b.by_worker[k] > 0)
                                workers_seen |= 1u << k;
                assert_int_equal(b.by_worker[0] + b.by_worker[1] + b.by_worker[2] + b.by_worker[3], N_JOBS);
        }
        /* The caller always takes a share; over 200 batches the threads
         * did too (one that never ran would show as a missing bit). */
        assert_int_equal(workers_seen, 0xf);
        workers_free(w);
}

static void test_one_worker_is_the_caller(void **state) {
        struct workers *w = NULL;
        struct batch b = { 0 };

        (void) state;
        assert_int_equal(workers_new(1, &w), 0);
        workers_run(w, N_JOBS, job, &b);
        assert_int_equal(b.by_worker[0], N_JOBS);
        for (size_t j = 0; j < N_JOBS; j++)
                assert_int_equal(b.runs[j], 1);
        /* No pool at all: the caller too. */
        memset(&b, 0, sizeof(b));
        workers_run(NULL, 3, job, &b);
        assert_int_equal(b.by_worker[0], 3);
        workers_free(w);
        assert_int_equal(workers_new(0, &w), -EINVAL);
}

/* The threads' states from /proc/self/task: 'S' while no batch runs. */
static unsigned threads_running(void) {
        DIR *dir = opendir("/proc/self/task");
        struct dirent *de;
        unsigned n = 0;

        assert_non_null(dir);
        while ((de = readdir(dir))) {
                char path[320], buf[256], *p;
                FILE *f;

                if (de->d_name[0] == '.' || (pid_t) atoi(de->d_name) == getpid())
                        continue;
                snprintf(path, sizeof(path), "/proc/self/task/%s/stat", de->d_name);
                f = fopen(path, "re");
                if (!f)
                        continue;
                if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) && p[1] == ' ' && p[2] == 'R')
                        n++;
                fclose(f);
        }
        closedir(dir);
        return n;
}

static void test_idle_threads_sleep(void **state) {
        struct workers *w = NULL;
        struct batch b = { 0 };
        unsigned running = 0;

        (void) state;
        assert_int_equal(workers_new(3, &w), 0);
        workers_run(w, N_JOBS, job, &b);
        /* A spinning worker would show running in most of these looks. */
        for (unsigned i = 0; i < 50; i++) {
                running += threads_running();
                usleep(2000);
        }
        assert_true(running <= 2);
        workers_free(w);
}

/* This process's threads' tids, up to MAX. */
static size_t tids(pid_t *out, size_t max) {
        DIR *dir = opendir("/proc/self/task");
        struct dirent *de;
        size_t n = 0;

        assert_non_null(dir);
        while ((de = readdir(dir)) && n < max)
                if (de->d_name[0] != '.')
                        out[n++] = atoi(de->d_name);
        closedir(dir);
        return n;
}

/* The one thread workers_new(2) started (not among BEFORE), once it
 * sleeps waiting for a batch: not in the middle of taking the lock. */
static pid_t pool_thread(const pid_t *before, size_t n_before) {
        pid_t now[64], tid = 0;
        size_t n = tids(now, 64);

        for (size_t i = 0; i < n; i++) {
                bool old = false;

                for (size_t k = 0; k < n_before; k++)
                        old |= now[i] == before[k];
                if (!old)
                        tid = now[i];
        }
        assert_true(tid > 0);
        for (int tries = 0; tries < 1000; tries++) {
                char path[64], buf[256], *p = NULL;
                FILE *f;

                snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int) tid);
                f = fopen(path, "re");
                assert_non_null(f);
                if (fgets(buf, sizeof(buf), f))
                        p = strrchr(buf, ')');
                fclose(f);
                if (p && p[1] == ' ' && p[2] == 'S')
                        return tid;
                usleep(1000);
        }
        fail_msg("the pool's thread %d never went to sleep", (int) tid);
        return -1;
}

/* The timeslices thread TID has had (/proc/self/task/TID/schedstat). */
static uint64_t timeslices(pid_t tid) {
        char path[64];
        unsigned long long run, wait, n = 0;
        FILE *f;

        snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", (int) tid);
        f = fopen(path, "re");
        assert_non_null(f);
        assert_int_equal(fscanf(f, "%llu %llu %llu", &run, &wait, &n), 3);
        fclose(f);
        return n;
}

struct spinner {
        int cpu;
        bool stop, running, refused;    /* atomic */
};

/* Holds CPU S->cpu at SCHED_FIFO until told to stop (2 s at most). */
static void *spin_main(void *p) {
        struct spinner *s = p;
        struct sched_param sp = { .sched_priority = 10 };
        struct timespec t0, t;
        cpu_set_t one;

        CPU_ZERO(&one);
        CPU_SET(s->cpu, &one);
        if (sched_setaffinity(0, sizeof(one), &one) < 0 || pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) != 0) {
                __atomic_store_n(&s->refused, true, __ATOMIC_RELEASE);
                return NULL;
        }
        __atomic_store_n(&s->running, true, __ATOMIC_RELEASE);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        do
                clock_gettime(CLOCK_MONOTONIC, &t);
        while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE) && t.tv_sec - t0.tv_sec < 2);
        return NULL;
}

static void light_job(size_t j, unsigned worker, void *userdata) {
        struct batch *b = userdata;

        b->runs[j]++;
        __atomic_fetch_add(&b->by_worker[worker], 1, __ATOMIC_RELAXED);
}

/* The pool's thread pinned to a CPU that a SCHED_FIFO spinner holds: it
 * is woken for each batch and cannot run. The caller, on another CPU,
 * takes every job of 100 batches and returns from each, while the
 * thread has not had one timeslice: before, each batch waited for every
 * thread to pass through it, here until the kernel's RT throttling let
 * the thread run (most of a second). */
static void test_unscheduled_thread_holds_nothing_up(void **state) {
        struct workers *w = NULL;
        struct spinner s = {};
        cpu_set_t all, one;
        pthread_t spin;
        pid_t tid, before[64];
        size_t n_before;
        int cpus[2];
        uint64_t slices;

        (void) state;
        if (test_cpus(cpus, 2, &all) < 2)
                skip();
        n_before = tids(before, 64);
        assert_int_equal(workers_new(2, &w), 0);
        tid = pool_thread(before, n_before);
        CPU_ZERO(&one);
        CPU_SET(cpus[1], &one);
        assert_int_equal(sched_setaffinity(tid, sizeof(one), &one), 0);
        CPU_ZERO(&one);
        CPU_SET(cpus[0], &one);
        assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);

        s.cpu = cpus[1];
        assert_int_equal(pthread_create(&spin, NULL, spin_main, &s), 0);
        while (!__atomic_load_n(&s.running, __ATOMIC_ACQUIRE) && !__atomic_load_n(&s.refused, __ATOMIC_ACQUIRE))
                usleep(1000);
        if (__atomic_load_n(&s.refused, __ATOMIC_ACQUIRE)) {
                pthread_join(spin, NULL);
                workers_free(w);
                assert_int_equal(sched_setaffinity(0, sizeof(all), &all), 0);
                skip();         /* no SCHED_FIFO here (not root) */
        }
        slices = timeslices(tid);
        for (unsigned round = 0; round < 100; round++) {
                struct batch b = { 0 };

                workers_run(w, 4, light_job, &b);
                for (size_t j = 0; j < 4; j++)
                        assert_int_equal(b.runs[j], 1);
                assert_int_equal(b.by_worker[0], 4);
        }
        print_message("100 batches while the thread had %llu timeslices\n",
                      (unsigned long long) (timeslices(tid) - slices));
        assert_true(timeslices(tid) == slices);
        __atomic_store_n(&s.stop, true, __ATOMIC_RELEASE);
        assert_int_equal(pthread_join(spin, NULL), 0);
        assert_int_equal(sched_setaffinity(0, sizeof(all), &all), 0);
        assert_int_equal(sched_setaffinity(tid, sizeof(all), &all), 0);
        /* And it takes jobs again. */
        {
                struct batch b = { 0 };

                workers_run(w, N_JOBS, job, &b);
                for (size_t j = 0; j < N_JOBS; j++)
                        assert_int_equal(b.runs[j], 1);
        }
        workers_free(w);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_each_job_once),
                cmocka_unit_test(test_one_worker_is_the_caller),
                cmocka_unit_test(test_idle_threads_sleep),
                cmocka_unit_test(test_unscheduled_thread_holds_nothing_up),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
