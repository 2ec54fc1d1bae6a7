/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* src/basic/async.c: jobs run in the order queued, a ticket reads done
 * only after its job (and every one before) ran, fds handed over are
 * closed, hundreds of jobs queue behind a slow one without a wait, and
 * what they hold stays within half of RLIMIT_NOFILE. */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>
#include <cmocka.h>

#include "evmon/async.h"

struct order {
        unsigned next;          /* written by the worker only */
        unsigned bad;
};

struct step {
        struct order *o;
        unsigned want;
};

static void step_run(void *userdata) {
        struct step *s = userdata;

        if (s->o->next != s->want)
                s->o->bad++;
        s->o->next++;
        usleep(s->want % 7 == 0 ? 1000 : 0);   /* now and then a slow one, as a grace period */
}

static void test_order_and_tickets(void **state) {
        enum { N = 300 };
        static struct step steps[N];
        struct order o = {};
        uint64_t t = 0, first;

        (void) state;
        for (unsigned i = 0; i < N; i++) {
                steps[i] = (struct step) { .o = &o, .want = i };
                t = async_run(step_run, &steps[i]);
                assert_true(t > 0);
                if (i == 0)
                        first = t;
        }
        assert_int_equal(t - first, N - 1);
        async_wait(t);
        assert_true(async_done(t));
        assert_false(async_pending());
        /* After async_wait() the worker's writes are ours to read. */
        assert_int_equal(o.next, N);
        assert_int_equal(o.bad, 0);
}

static void test_close_fds(void **state) {
        int p[2], *fds = malloc(4 * sizeof(int));
        uint64_t t;

        (void) state;
        assert_non_null(fds);
        assert_int_equal(pipe(p), 0);
        fds[0] = p[0];
        fds[1] = -1;
        fds[2] = -EOPNOTSUPP;   /* monitor.c's "no doorbell member" */
        fds[3] = p[1];
        t = async_close_fds(fds, 4);
        async_wait(0);
        assert_true(async_done(t));
        assert_int_equal(fcntl(p[0], F_GETFD), -1);
        assert_int_equal(errno, EBADF);
        assert_int_equal(fcntl(p[1], F_GETFD), -1);
        /* NULL: nothing to close, a ticket that is done already. */
        assert_true(async_done(async_close_fds(NULL, 0)));
}

struct gate {
        int fd;                 /* read end: the job waits for a byte */
        bool opened, timed_out; /* the worker's, read after async_wait() */
};

static void gate_run(void *userdata) {
        struct gate *g = userdata;
        struct pollfd p = { .fd = g->fd, .events = POLLIN };

        g->opened = poll(&p, 1, 10000) == 1;
        g->timed_out = !g->opened;
}

/* A removal of hundreds of events is hundreds of jobs behind a slow close
 * (a grace period each, in the kernel): queueing them must not wait for
 * the worker. The first job holds the worker until the test lets it go;
 * had any async_close_fds() waited for it, the gate would have timed out. */
static void test_many_jobs_no_wait(void **state) {
        struct gate g = {};
        struct rlimit rl;
        size_t n, jobs, n_fds;
        int p[2];

        (void) state;
        assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
        /* Each job below holds one fd and weighs two: within half the limit. */
        n = rl.rlim_cur == RLIM_INFINITY ? 500 : (size_t) rl.rlim_cur / 4 - 16;
        if (n > 500)
                n = 500;
        if (n < 200)
                skip();
        assert_int_equal(pipe(p), 0);
        g.fd = p[0];
        (void) async_run(gate_run, &g);
        for (size_t i = 0; i < n; i++) {
                int *fds = malloc(sizeof(int));

                assert_non_null(fds);
                fds[0] = dup(p[1]);
                assert_true(fds[0] >= 0);
                (void) async_close_fds(fds, 1);
        }
        async_stats(&jobs, &n_fds);
        assert_true(jobs >= n && jobs <= n + 1);
        assert_int_equal(n_fds, n);
        assert_int_equal(write(p[1], "x", 1), 1);
        async_wait(0);
        assert_true(g.opened);
        assert_false(g.timed_out);
        async_stats(&jobs, &n_fds);
        assert_int_equal(jobs, 0);
        assert_int_equal(n_fds, 0);
        close(p[0]);
        close(p[1]);
}

static void slow_run(void *userdata) {
        (void) userdata;
        usleep(2000);           /* a grace period, in the kernel's place */
}

/* Opening faster than the worker closes: the pending closes keep to half
 * the soft RLIMIT_NOFILE (fds plus one per job), so the opens never run
 * out. Without the bound they pass it within a few cycles, and pipe()
 * fails with EMFILE some 20 cycles later. */
static void test_bound_in_fds(void **state) {
        enum { LIMIT = 64, CYCLES = 200 };
        struct rlimit old, rl;
        size_t jobs, n_fds, most = 0;

        (void) state;
        assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
        rl = (struct rlimit) { .rlim_cur = LIMIT, .rlim_max = old.rlim_max };
        assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
        for (unsigned i = 0; i < CYCLES; i++) {
                int *fds = malloc(2 * sizeof(int));

                assert_non_null(fds);
                assert_int_equal(pipe(fds), 0);
                (void) async_run(slow_run, NULL);
                (void) async_close_fds(fds, 2);
                async_stats(&jobs, &n_fds);
                assert_true(jobs + n_fds <= LIMIT / 2);
                if (jobs + n_fds > most)
                        most = jobs + n_fds;
        }
        async_wait(0);
        assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
        /* It filled the room, so it did wait. */
        assert_true(most > LIMIT / 2 - 4);
        async_stats(&jobs, &n_fds);
        assert_int_equal(jobs + n_fds, 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_order_and_tickets),
                cmocka_unit_test(test_close_fds),
                cmocka_unit_test(test_many_jobs_no_wait),
                cmocka_unit_test(test_bound_in_fds),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
