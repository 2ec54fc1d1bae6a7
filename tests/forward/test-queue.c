/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "queue.h"

static void test_fifo_and_full(void **state) {
        struct queue q;
        struct queue_rec rec;
        uint64_t pos;
        char data[100];
        int pushed = 0;

        assert_int_equal(queue_init(&q, 4096), 0);
        memset(data, 'x', sizeof(data));
        /* 16 header + "s\0" + "id\0" + 100 + 1 = 122 -> 128 bytes: 32 fit */
        while (queue_push(&q, "s", "id", data, sizeof(data), 1) == 0)
                pushed++;
        assert_int_equal(pushed, 32);
        assert_int_equal(queue_push(&q, "s", "id", data, sizeof(data), 1), -ENOSPC);
        assert_int_equal(queue_push(&q, "s", "id", data, 1, 1), -ENOSPC);
        assert_int_equal(queue_count(&q), 32);
        assert_int_equal(queue_push(&q, "s", "id", data, 3000, 1), -E2BIG);

        pos = q.head;
        assert_int_equal(queue_peek(&q, &pos, &rec), 1);
        assert_string_equal(rec.subject, "s");
        assert_string_equal(rec.id, "id");
        assert_int_equal(rec.len, 100);
        assert_int_equal(rec.lines, 1);
        assert_int_equal(queue_pop(&q), 0);
        assert_int_equal(queue_push(&q, "s", "id", data, sizeof(data), 1), 0);
        queue_done(&q);
}

/* Records of varying size wrap around the arena many times and come out
 * in order, whole. */
static void test_wrap(void **state) {
        struct queue q;
        uint64_t next_in = 0, next_out = 0;
        char data[700], id[32];

        assert_int_equal(queue_init(&q, 4096), 0);
        for (int round = 0; round < 5000; round++) {
                size_t len = (size_t) (round * 37) % 600;
                struct queue_rec rec;
                uint64_t pos;
                int r;

                snprintf(id, sizeof(id), "%" PRIu64, next_in);
                memset(data, 'a' + (int) (next_in % 26), len);
                r = queue_push(&q, "evmon.h._.x", id, data, len, 1);
                if (r == 0)
                        next_in++;
                else
                        assert_int_equal(r, -ENOSPC);
                /* take one out every other round, two when full */
                for (int k = 0; k < (r < 0 ? 2 : round % 2); k++) {
                        pos = q.head;
                        if (queue_peek(&q, &pos, &rec) == 0)
                                break;
                        snprintf(id, sizeof(id), "%" PRIu64, next_out);
                        assert_string_equal(rec.id, id);
                        for (size_t i = 0; i < rec.len; i++)
                                assert_int_equal(rec.data[i], 'a' + (int) (next_out % 26));
                        assert_int_equal(rec.data[rec.len], '\0');
                        assert_int_equal(queue_pop(&q), 0);
                        next_out++;
                }
                assert_true(queue_used(&q) <= q.size);
                assert_int_equal(queue_count(&q), next_in - next_out);
        }
        assert_true(q.tail > 3 * q.size);  /* it did wrap */
        queue_done(&q);
}

/* An empty queue starts again at the arena's start; one that is not
 * stays where it is. */
static void test_rewind(void **state) {
        struct queue q;
        struct queue_rec rec;
        uint64_t pos;
        char data[100] = "x";

        assert_int_equal(queue_init(&q, 4096), 0);
        assert_false(queue_rewind(&q));
        assert_int_equal(queue_push(&q, "s", "1", data, sizeof(data), 1), 0);
        assert_int_equal(queue_push(&q, "s", "2", data, sizeof(data), 3), 0);
        assert_int_equal(queue_pop(&q), 0);
        assert_false(queue_rewind(&q));
        assert_int_equal(queue_pop(&q), 0);
        assert_true(queue_rewind(&q));
        assert_int_equal(q.head, 4096);
        assert_int_equal(q.tail, 4096);
        assert_int_equal(queue_count(&q), 0);
        assert_int_equal(queue_push(&q, "s", "3", data, sizeof(data), 2), 0);
        pos = q.head;
        assert_int_equal(queue_peek(&q, &pos, &rec), 1);
        assert_string_equal(rec.id, "3");
        assert_int_equal(rec.lines, 2);
        assert_ptr_equal(rec.subject, q.mem + 16);
        queue_done(&q);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_fifo_and_full),
                cmocka_unit_test(test_wrap),
                cmocka_unit_test(test_rewind),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
