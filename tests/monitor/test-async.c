/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* src/monitor/async.c: jobs run in the order queued, a ticket reads done
 * only after its job (and every one before) ran, fds handed over are
 * closed, and a flood of jobs is held to the queue's bound. */

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
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
        enum { N = 300 };       /* past the bound of pending jobs */
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

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_order_and_tickets),
                cmocka_unit_test(test_close_fds),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
