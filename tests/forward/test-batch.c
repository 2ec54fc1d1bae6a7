/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "batch.h"

/* What the batcher closed, in order. */
static struct closed {
        char subject[64], id[64], data[256];
        unsigned lines;
} closed[16];
static unsigned n_closed;

static void on_close(void *userdata, const char *subject, const char *id, const char *data, size_t len,
                     unsigned lines) {
        struct closed *c = &closed[n_closed++];

        assert_true(n_closed <= 16 && len < sizeof(c->data));
        snprintf(c->subject, sizeof(c->subject), "%s", subject);
        snprintf(c->id, sizeof(c->id), "%s", id);
        memcpy(c->data, data, len);
        c->data[len] = '\0';
        c->lines = lines;
}

/* Per subject, closed by size, by time and for room; the first line's
 * number names the batch. */
static void test_batches(void **state) {
        struct batcher b;

        n_closed = 0;
        assert_int_equal(batcher_init(&b, 2, 64, on_close, NULL), 0);
        assert_int_equal(batcher_add(&b, "s.a", "h.t", 1, "{\"a\":1}", 7, 64, 100), 0);
        assert_int_equal(batcher_add(&b, "s.b", "h.t", 2, "{\"b\":2}", 7, 64, 101), 0);
        assert_int_equal(batcher_add(&b, "s.a", "h.t", 3, "{\"a\":3}", 7, 64, 102), 0);
        assert_int_equal(n_closed, 0);
        /* A line larger than the limit is the caller's to send alone. */
        assert_int_equal(batcher_add(&b, "s.a", "h.t", 4, "0123456789", 10, 10, 102), -E2BIG);
        /* The limit reached: s.a's two lines go, the new line opens the next. */
        assert_int_equal(batcher_add(&b, "s.a", "h.t", 5, "{\"a\":5}", 7, 20, 103), 0);
        assert_int_equal(n_closed, 1);
        assert_string_equal(closed[0].subject, "s.a");
        assert_string_equal(closed[0].id, "h.t.1");
        assert_string_equal(closed[0].data, "{\"a\":1}\n{\"a\":3}\n");
        assert_int_equal(closed[0].lines, 2);
        /* A third subject with both slots taken closes the oldest (s.b). */
        assert_int_equal(batcher_add(&b, "s.c", "h.t", 6, "{\"c\":6}", 7, 64, 104), 0);
        assert_int_equal(n_closed, 2);
        assert_string_equal(closed[1].id, "h.t.2");
        assert_int_equal(closed[1].lines, 1);
        /* Due by time: s.a (opened at 103) goes, s.c (104) stays. */
        assert_int_equal(batcher_flush(&b, 104), 104);
        assert_int_equal(n_closed, 3);
        assert_string_equal(closed[2].id, "h.t.5");
        assert_int_equal(batcher_flush(&b, INT64_MAX), INT64_MAX);
        assert_int_equal(n_closed, 4);
        assert_string_equal(closed[3].data, "{\"c\":6}\n");
        batcher_done(&b);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_batches),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
