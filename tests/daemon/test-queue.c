/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lines.c and queue.c: a line stored once and shared by every queue that
 * takes it, the queue's bound, its drops and the gap they mark, replies
 * and partial writes. */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "queue.h"

/* What the queue would write now, as one string. */
static size_t queued_text(const struct line_queue *q, char *buf, size_t size) {
        struct iovec iov[64];
        size_t n = line_queue_iov(q, iov, 64), len = 0;

        for (size_t i = 0; i < n; i++) {
                assert_true(len + iov[i].iov_len < size);
                memcpy(buf + len, iov[i].iov_base, iov[i].iov_len);
                len += iov[i].iov_len;
        }
        buf[len] = 0;
        return len;
}

static void put(struct line_store *st, const char *line, struct line_span *sp) {
        assert_int_equal(line_store_put(st, line, strlen(line), sp), 0);
}

/* One line, three queues: one copy, three references, and the chunk goes
 * back to the free list when the last queue has written it. */
static void test_shared(void **state) {
        struct line_store st = {};
        struct line_queue q[3];
        struct line_span sp;
        char buf[256];

        for (int i = 0; i < 3; i++)
                assert_int_equal(line_queue_init(&q[i], &st, 1024), 0);
        put(&st, "{\"a\":1}\n", &sp);
        for (int i = 0; i < 3; i++)
                assert_true(line_queue_push(&q[i], &sp, 0));
        assert_ptr_equal(q[0].q[0].chunk, q[2].q[0].chunk);
        assert_int_equal(sp.chunk->refs, 4);     /* the store's current chunk and three queues */
        assert_int_equal(sp.chunk->len, 8);      /* stored once */
        for (int i = 0; i < 3; i++) {
                assert_int_equal(queued_text(&q[i], buf, sizeof(buf)), 8);
                assert_string_equal(buf, "{\"a\":1}\n");
                line_queue_advance(&q[i], 8);
                assert_true(line_queue_empty(&q[i]));
        }
        assert_int_equal(sp.chunk->refs, 1);
        for (int i = 0; i < 3; i++)
                line_queue_done(&q[i]);
        line_store_done(&st);
}

/* Past the bound lines are dropped, and go on being dropped until the
 * gap is closed (here once the queue has drained), though a short line
 * would fit again. */
static void test_bound_and_gap(void **state) {
        struct line_store st = {};
        struct line_queue q;
        struct line_span big, small;
        uint64_t count, lost;
        char buf[256];

        assert_int_equal(line_queue_init(&q, &st, 20), 0);
        put(&st, "0123456789abcde\n", &big);        /* 16 bytes */
        put(&st, "x\n", &small);
        assert_true(line_queue_push(&q, &big, 0));
        assert_false(line_queue_push(&q, &big, 0));    /* 32 > 20 */
        assert_false(line_queue_push(&q, &small, 0));  /* 18 would fit, but the gap is open */
        /* A dropped "lost" line's records are kept for the dropped line. */
        assert_false(line_queue_push(&q, &small, 4242));
        assert_int_equal(q.dropped_lost, 4242);
        assert_int_equal(q.dropped, 3);
        assert_int_equal(q.dropped_total, 3);
        assert_int_equal(q.queued, 16);
        assert_int_equal(q.lines, 1);
        line_queue_advance(&q, 16);
        assert_true(line_queue_empty(&q));
        /* The client says how many (client_flush writes the dropped line),
         * and the gap closes: the "lost" line is told as its records, not
         * as a line too (events + count + lost would count it twice). */
        line_queue_take_dropped(&q, &count, &lost);
        assert_int_equal(count, 2);
        assert_int_equal(lost, 4242);
        assert_int_equal(q.dropped, 0);
        assert_int_equal(q.dropped_lost, 0);
        assert_true(line_queue_push(&q, &small, 0));
        assert_int_equal(queued_text(&q, buf, sizeof(buf)), 2);
        assert_int_equal(q.dropped_total, 3);
        /* A gap of "lost" lines only says their records. */
        assert_true(line_queue_push(&q, &big, 0));
        assert_false(line_queue_push(&q, &big, 7));
        line_queue_advance(&q, 18);
        line_queue_take_dropped(&q, &count, &lost);
        assert_int_equal(count, 0);
        assert_int_equal(lost, 7);
        line_queue_done(&q);
        line_store_done(&st);
}

/* While more than half the bound is queued behind an open gap, what
 * comes is not worth making (line_queue_dropping(): the server counts it
 * unmade); at half the gap may close (client_push() writes the "dropped"
 * line then), and until it is closed, lines still go into it. */
static void test_gap_half(void **state) {
        struct line_store st = {};
        struct line_queue q;
        struct line_span line;
        uint64_t count, lost;

        assert_int_equal(line_queue_init(&q, &st, 40), 0);
        put(&st, "0123456789abcde\n", &line);       /* 16 bytes */
        assert_false(line_queue_dropping(&q));
        assert_true(line_queue_push(&q, &line, 0));
        assert_true(line_queue_push(&q, &line, 0));
        assert_false(line_queue_dropping(&q));    /* full, but no gap yet */
        assert_false(line_queue_push(&q, &line, 0));
        assert_true(line_queue_dropping(&q));     /* 32 queued > 20 */
        assert_false(line_queue_wants(&q));       /* server_match(): a drop counted, no line made */
        line_queue_advance(&q, 8);
        assert_true(line_queue_dropping(&q));     /* 24 > 20 */
        line_queue_advance(&q, 4);
        assert_false(line_queue_dropping(&q));    /* 20: half */
        assert_true(line_queue_wants(&q));        /* made: the push closes the gap first */
        assert_false(line_queue_push(&q, &line, 0));  /* the gap is still open */
        line_queue_take_dropped(&q, &count, &lost);
        assert_int_equal(count, 3);
        assert_int_equal(lost, 0);
        assert_true(line_queue_push(&q, &line, 0));
        assert_int_equal(q.queued, 36);
        assert_int_equal(q.dropped_total, 3);
        line_queue_done(&q);
        line_store_done(&st);
}

/* A reply goes past the bound by one reply at the most: a client that
 * does not read its replies is refused the next (its owner drops it). */
static void test_reply_bound(void **state) {
        struct line_store st = {};
        struct line_queue q;
        struct line_span reply;

        assert_int_equal(line_queue_init(&q, &st, 20), 0);
        put(&st, "{\"type\":\"status\"}\n", &reply);      /* 18 bytes */
        assert_int_equal(line_queue_push_reply(&q, &reply), 0);
        assert_false(line_queue_full(&q));
        assert_int_equal(line_queue_push_reply(&q, &reply), 0);  /* 36: past the bound once */
        assert_true(line_queue_full(&q));
        assert_int_equal(line_queue_push_reply(&q, &reply), -ENOBUFS);
        assert_int_equal(q.queued, 36);
        assert_int_equal(q.dropped, 0);            /* a refused reply is no drop: the client goes */
        line_queue_done(&q);
        line_store_done(&st);
}

/* Consecutive lines of one chunk are one span; a partial write leaves the
 * rest in order. */
static void test_merge_and_partial(void **state) {
        struct line_store st = {};
        struct line_queue q;
        struct line_span a, b, c;
        char buf[256];

        assert_int_equal(line_queue_init(&q, &st, 1024), 0);
        put(&st, "aaa\n", &a);
        put(&st, "bbb\n", &b);
        put(&st, "ccc\n", &c);
        assert_true(line_queue_push(&q, &a, 0));
        assert_true(line_queue_push(&q, &c, 0));      /* not next to a: a span of its own */
        assert_true(line_queue_push(&q, &b, 0));      /* not after c either */
        assert_int_equal(q.len, 3);
        line_queue_advance(&q, 2);
        assert_int_equal(queued_text(&q, buf, sizeof(buf)), 10);
        assert_string_equal(buf, "a\nccc\nbbb\n");
        line_queue_advance(&q, 7);
        assert_int_equal(q.len, 1);
        assert_string_equal((queued_text(&q, buf, sizeof(buf)), buf), "bb\n");
        line_queue_done(&q);

        assert_int_equal(line_queue_init(&q, &st, 1024), 0);
        assert_true(line_queue_push(&q, &a, 0));
        assert_true(line_queue_push(&q, &b, 0));      /* right after a: merged */
        assert_int_equal(q.len, 1);
        assert_int_equal(q.lines, 2);
        line_queue_done(&q);
        line_store_done(&st);
}

/* Thousands of lines through a small ring of spans: it grows, wraps and
 * keeps their order; chunks fill and are recycled. */
static void test_many(void **state) {
        struct line_store st = {};
        struct line_queue q;
        struct line_span sp, other;
        struct iovec iov[8];
        char line[32];
        unsigned next = 0;

        assert_int_equal(line_queue_init(&q, &st, SIZE_MAX), 0);
        for (unsigned i = 0; i < 100000; i++) {
                int n = snprintf(line, sizeof(line), "%u\n", i);

                assert_int_equal(line_store_put(&st, line, (size_t) n, &sp), 0);
                assert_true(line_queue_push(&q, &sp, 0));
                /* A line for someone else between ours: no merging. */
                put(&st, "-\n", &other);
                if (i % 3 == 2) {
                        size_t k = line_queue_iov(&q, iov, 8);

                        for (size_t j = 0; j < k; j++) {
                                snprintf(line, sizeof(line), "%u\n", next++);
                                assert_int_equal(iov[j].iov_len, strlen(line));
                                assert_memory_equal(iov[j].iov_base, line, iov[j].iov_len);
                                line_queue_advance(&q, iov[j].iov_len);
                        }
                }
        }
        assert_true(q.cap >= 64);
        assert_true(st.n_free <= 32);
        line_queue_done(&q);
        line_store_done(&st);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_shared),
                cmocka_unit_test(test_bound_and_gap),
                cmocka_unit_test(test_gap_half),
                cmocka_unit_test(test_reply_bound),
                cmocka_unit_test(test_merge_and_partial),
                cmocka_unit_test(test_many),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
