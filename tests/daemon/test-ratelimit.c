/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ratelimit.c: the budget of log lines about clients, a token bucket per
 * uid (a burst, then so many a second, the rest counted), and its table of
 * uids, bounded whatever uids connect. */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "ratelimit.h"

#define SEC 1000000u

static unsigned passed(struct ratelimit *rl, unsigned n, uint64_t now) {
        unsigned k = 0;

        for (unsigned i = 0; i < n; i++)
                k += ratelimit_below(rl, 3, 2, now);
        return k;
}

static void test_bucket(void **state) {
        struct ratelimit rl;
        uint64_t since;

        ratelimit_init(&rl, 3, 100 * SEC);
        /* The burst, then nothing until credit comes back. */
        assert_int_equal(passed(&rl, 10, 100 * SEC), 3);
        assert_int_equal(ratelimit_take_suppressed(&rl, &since), 7);
        assert_int_equal(since, 100 * SEC);
        assert_int_equal(ratelimit_take_suppressed(&rl, NULL), 0);
        /* Two a second: one each half second, none in between. */
        assert_int_equal(passed(&rl, 5, 100 * SEC + SEC / 4), 0);
        assert_int_equal(passed(&rl, 5, 100 * SEC + SEC / 2), 1);
        assert_int_equal(passed(&rl, 5, 101 * SEC), 1);
        assert_int_equal(ratelimit_take_suppressed(&rl, &since), 13);
        assert_int_equal(since, 100 * SEC + SEC / 4);
        /* A long quiet gives the burst back, no more. */
        assert_int_equal(passed(&rl, 10, 10000 * SEC), 3);
        /* A clock that went back gives nothing. */
        assert_int_equal(passed(&rl, 1, 50 * SEC), 0);
}

/* Over a minute of a steady flood, the lines let through are the burst
 * and the rate, and with the suppressed ones add up to all. */
static void test_flood(void **state) {
        struct ratelimit rl;
        uint64_t through = 0, n = 0;

        ratelimit_init(&rl, 20, 0);
        for (uint64_t t = 0; t < 60 * SEC; t += 997, n++)
                through += ratelimit_below(&rl, 20, 5, t);
        assert_true(through >= 20 + 5 * 59);
        assert_true(through <= 20 + 5 * 60);
        assert_int_equal(through + ratelimit_take_suppressed(&rl, NULL), n);
}

struct seen {
        unsigned calls, others;
        uint64_t n[RATELIMIT_UIDS + 2];
        uid_t uid[RATELIMIT_UIDS + 2];
};

static void on_suppressed(uid_t uid, bool others, uint64_t n, uint64_t since, void *userdata) {
        struct seen *s = userdata;

        assert_true(s->calls < RATELIMIT_UIDS + 2);
        s->uid[s->calls] = uid;
        s->n[s->calls++] = n;
        s->others += others;
}

static void test_uids(void **state) {
        struct ratelimit_uids t;
        struct seen seen = {};
        unsigned k = 0;

        ratelimit_uids_init(&t, 3, 1);
        /* One uid's flood leaves another's lines alone. */
        for (int i = 0; i < 100; i++)
                k += ratelimit_uids_below(&t, 65534, 0);
        assert_int_equal(k, 3);
        assert_true(ratelimit_uids_below(&t, 0, 0));
        ratelimit_uids_suppressed(&t, on_suppressed, &seen);
        assert_int_equal(seen.calls, 1);
        assert_int_equal(seen.uid[0], 65534);
        assert_int_equal(seen.n[0], 97);
        assert_int_equal(seen.others, 0);

        /* Every slot busy (each bucket used; two are 65534's and 0's): a
         * new uid shares the others' bucket. */
        for (uid_t u = 1000; u < 1000 + RATELIMIT_UIDS - 2; u++)
                assert_true(ratelimit_uids_below(&t, u, 0));
        for (int i = 0; i < 5; i++)
                (void) ratelimit_uids_below(&t, 5000 + i, 0);
        seen = (struct seen) {};
        ratelimit_uids_suppressed(&t, on_suppressed, &seen);
        assert_int_equal(seen.calls, 1);
        assert_int_equal(seen.others, 1);
        assert_int_equal(seen.n[0], 2);
        /* A slot whose bucket is full again is taken by the next new uid. */
        assert_true(ratelimit_uids_below(&t, 7000, 100 * SEC));
        assert_true(ratelimit_uids_below(&t, 7000, 100 * SEC));
        assert_true(ratelimit_uids_below(&t, 7000, 100 * SEC));
        assert_false(ratelimit_uids_below(&t, 7000, 100 * SEC));
        seen = (struct seen) {};
        ratelimit_uids_suppressed(&t, on_suppressed, &seen);
        assert_int_equal(seen.calls, 1);
        assert_int_equal(seen.others, 0);
        assert_int_equal(seen.uid[0], 7000);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_bucket),
                cmocka_unit_test(test_flood),
                cmocka_unit_test(test_uids),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
