/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* src/basic/workers.c: every job of a batch runs exactly once, on the
 * threads and the caller both; what the jobs wrote is there when
 * workers_run() returns; many batches in a row; a pool of one runs on
 * the caller; the threads sleep between batches. */

#include <dirent.h>
#include <errno.h>
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

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_each_job_once),
                cmocka_unit_test(test_one_worker_is_the_caller),
                cmocka_unit_test(test_idle_threads_sleep),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
