/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ring.c on a fake perf mmap ring in plain memory: a control page and a
 * small data area that ends right before a PROT_NONE guard page, so any
 * read past the end crashes the test instead of passing quietly. The test
 * plays the kernel: it writes records at data_head and publishes it. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "evmon/monitor.h"

#define DATA_SIZE 256u

struct fake {
        uint8_t *map;
        size_t map_size, ps;
        struct perf_event_mmap_page *page;
        uint8_t *data;
        uint64_t head;          /* the writer's head, published by fake_publish() */
        struct ring ring;
};

static struct fake *fake_new(bool describe_layout) {
        struct fake *f = calloc(1, sizeof(*f));

        assert_non_null(f);
        f->ps = (size_t) sysconf(_SC_PAGESIZE);
        f->map_size = 3 * f->ps;
        f->map = mmap(NULL, f->map_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        assert_true(f->map != MAP_FAILED);
        /* Page 0: control page. Page 1: the data area, in its last
         * DATA_SIZE bytes (when described). Page 2: guard. */
        assert_int_equal(mprotect(f->map + 2 * f->ps, f->ps, PROT_NONE), 0);
        f->page = (struct perf_event_mmap_page *) f->map;
        /* Without data_offset the data starts on page 1, as on old kernels. */
        f->data = describe_layout ? f->map + 2 * f->ps - DATA_SIZE : f->map + f->ps;
        if (describe_layout) {
                f->page->data_offset = 2 * f->ps - DATA_SIZE;
                f->page->data_size = DATA_SIZE;
        }
        assert_int_equal(ring_init(&f->ring, f->map, DATA_SIZE), 0);
        assert_ptr_equal(f->ring.data, f->data);
        assert_int_equal(f->ring.size, DATA_SIZE);
        return f;
}

static void fake_free(struct fake *f) {
        ring_done(&f->ring);
        munmap(f->map, f->map_size);
        free(f);
}

static void fake_write_bytes(struct fake *f, const void *p, size_t n) {
        for (size_t i = 0; i < n; i++)
                f->data[(f->head + i) % DATA_SIZE] = ((const uint8_t *) p)[i];
        f->head += n;
}

/* A record of SIZE bytes whose payload bytes are all SEQ. */
static void fake_record(struct fake *f, uint16_t size, uint8_t seq) {
        struct perf_event_header h = { .type = 1000, .misc = seq, .size = size };
        uint8_t payload[512];

        assert_true(size >= sizeof(h) && size - sizeof(h) <= sizeof(payload));
        memset(payload, seq, size - sizeof(h));
        fake_write_bytes(f, &h, sizeof(h));
        fake_write_bytes(f, payload, size - sizeof(h));
}

/* A bare header, for malformed sizes. */
static void fake_header(struct fake *f, uint16_t size) {
        struct perf_event_header h = { .type = 1000, .size = size };

        fake_write_bytes(f, &h, sizeof(h));
}

static void fake_publish(struct fake *f) {
        __atomic_store_n(&f->page->data_head, f->head, __ATOMIC_RELEASE);
}

struct seen {
        unsigned n;
        int fail_at;            /* return -EIO at this call (1-based), 0: never */
        struct {
                uint16_t size;
                uint8_t seq;
                const void *where;
        } rec[64];
        const struct ring *ring;
};

static int collect(const struct perf_event_header *h, void *userdata) {
        struct seen *s = userdata;
        const uint8_t *p = (const uint8_t *) (h + 1);

        if (s->fail_at && (int) s->n + 1 == s->fail_at) {
                s->fail_at = 0;
                return -EIO;
        }

        assert_true(s->n < 64);
        assert_int_equal(h->type, 1000);
        /* The whole record is contiguous and intact. */
        for (size_t i = 0; i < h->size - sizeof(*h); i++)
                assert_int_equal(p[i], h->misc);
        s->rec[s->n].size = h->size;
        s->rec[s->n].seq = (uint8_t) h->misc;
        s->rec[s->n].where = h;
        s->n++;
        return 0;
}

static void test_init(void **state) {
        struct ring r;
        uint8_t *mem = aligned_alloc(4096, 3 * 4096);
        struct perf_event_mmap_page *page = (void *) mem;
        long ps = sysconf(_SC_PAGESIZE);

        assert_non_null(mem);
        memset(mem, 0, 3 * 4096);

        /* Not a power of two, or too small for a header. */
        assert_int_equal(ring_init(&r, mem, 96), -EINVAL);
        assert_int_equal(ring_init(&r, mem, 4), -EINVAL);
        assert_int_equal(ring_init(&r, NULL, 256), -EINVAL);

        /* Old kernels: the data follows the control page. */
        if (ps <= 4096) {
                assert_int_equal(ring_init(&r, mem, 256), 0);
                assert_ptr_equal(r.data, mem + ps);
                assert_int_equal(r.size, 256);
                assert_non_null(r.bounce);
                ring_done(&r);
                assert_null(r.bounce);
        }

        /* The kernel's word wins for where; it must agree on how much. */
        page->data_offset = 128;
        page->data_size = 512;
        assert_int_equal(ring_init(&r, mem, 512), 0);
        assert_ptr_equal(r.data, mem + 128);
        assert_int_equal(r.size, 512);
        ring_done(&r);
        assert_int_equal(ring_init(&r, mem, 0), 0);
        assert_int_equal(r.size, 512);
        ring_done(&r);
        assert_int_equal(ring_init(&r, mem, 1024), -EINVAL);

        ring_done(NULL);
        free(mem);
}

static void test_read_in_place(void **state) {
        struct fake *f = fake_new(false);
        struct seen s = {};

        fake_record(f, 16, 1);
        fake_record(f, 24, 2);
        fake_record(f, 32, 3);
        /* Not published yet: nothing to read. */
        assert_int_equal(ring_pending(&f->ring), 0);
        assert_int_equal(ring_read(&f->ring, 100, collect, &s), 0);
        fake_publish(f);
        assert_int_equal(ring_pending(&f->ring), 72);

        assert_int_equal(ring_read(&f->ring, 100, collect, &s), 3);
        assert_int_equal(s.n, 3);
        assert_int_equal(s.rec[0].seq, 1);
        assert_int_equal(s.rec[1].size, 24);
        assert_int_equal(s.rec[2].seq, 3);
        /* No wrap: handed out in place. */
        assert_ptr_equal(s.rec[0].where, f->data);
        assert_ptr_equal(s.rec[2].where, f->data + 40);
        assert_int_equal(f->page->data_tail, 72);
        assert_int_equal(ring_pending(&f->ring), 0);
        assert_int_equal(f->ring.n_bad, 0);

        /* Nothing new: nothing read, tail untouched. */
        assert_int_equal(ring_read(&f->ring, 100, collect, &s), 0);
        assert_int_equal(f->page->data_tail, 72);
        fake_free(f);
}

static void test_wrap_bounce(void **state) {
        struct fake *f = fake_new(true);
        struct seen s = {};

        /* Fill to 224 and consume, so the next records sit at the end. */
        for (uint8_t i = 0; i < 7; i++)
                fake_record(f, 32, i);
        fake_publish(f);
        assert_int_equal(ring_read(&f->ring, 100, collect, &s), 7);
        assert_int_equal(f->page->data_tail, 224);

        s = (struct seen) {};
        fake_record(f, 32, 10);         /* 224..256: ends exactly at the end */
        fake_record(f, 48, 11);         /* 256..304: offset 0, in place */
        fake_publish(f);
        assert_int_equal(ring_read(&f->ring, 100, collect, &s), 2);
        assert_ptr_equal(s.rec[0].where, f->data + 224);
        assert_ptr_equal(s.rec[1].where, f->data);

        /* Now one that straddles the end, in a full ring (304..560). */
        s = (struct seen) {};
        fake_record(f, 128, 12);        /* 304..432 = offsets 48..176 */
        fake_record(f, 48, 13);         /* 432..480 = offsets 176..224 */
        fake_record(f, 64, 14);         /* 480..544 = offsets 224..256 + 0..32: wraps */
        fake_record(f, 16, 15);         /* 544..560 = offsets 32..48 */
        fake_publish(f);
        assert_int_equal(ring_pending(&f->ring), DATA_SIZE);
        assert_int_equal(ring_read(&f->ring, 100, collect, &s), 4);
        assert_int_equal(s.rec[2].seq, 14);
        assert_int_equal(s.rec[2].size, 64);
        assert_ptr_equal(s.rec[2].where, f->ring.bounce);
        assert_ptr_equal(s.rec[3].where, f->data + 32);
        assert_int_equal(f->page->data_tail, f->head);
        assert_int_equal(f->ring.n_bad, 0);
        fake_free(f);
}

static void test_budget(void **state) {
        struct fake *f = fake_new(true);
        struct seen s = {};

        for (uint8_t i = 0; i < 5; i++)
                fake_record(f, 24, i);
        fake_publish(f);

        assert_int_equal(ring_read(&f->ring, 0, collect, &s), 0);
        assert_int_equal(f->page->data_tail, 0);

        assert_int_equal(ring_read(&f->ring, 2, collect, &s), 2);
        assert_int_equal(f->page->data_tail, 48);
        assert_int_equal(ring_pending(&f->ring), 72);
        assert_int_equal(ring_read(&f->ring, 2, collect, &s), 2);
        assert_int_equal(ring_read(&f->ring, 2, collect, &s), 1);
        assert_int_equal(s.n, 5);
        for (unsigned i = 0; i < 5; i++)
                assert_int_equal(s.rec[i].seq, i);
        assert_int_equal(f->page->data_tail, 120);
        fake_free(f);
}

static void test_callback_error(void **state) {
        struct fake *f = fake_new(true);
        struct seen s = { .fail_at = 2 };

        fake_record(f, 16, 1);
        fake_record(f, 16, 2);
        fake_record(f, 16, 3);
        fake_publish(f);

        /* The failing record is not consumed. */
        assert_int_equal(ring_read(&f->ring, 10, collect, &s), -EIO);
        assert_int_equal(s.n, 1);
        assert_int_equal(f->page->data_tail, 16);

        assert_int_equal(ring_read(&f->ring, 10, collect, &s), 2);
        assert_int_equal(s.rec[1].seq, 2);
        assert_int_equal(s.rec[2].seq, 3);
        assert_int_equal(f->page->data_tail, 48);
        fake_free(f);
}

static void test_bad_small(void **state) {
        struct fake *f = fake_new(true);
        struct seen s = {};

        /* size 0 would never advance, size 4 is inside the header. */
        fake_record(f, 16, 1);
        fake_header(f, 0);
        fake_record(f, 16, 2);          /* lost with it: no way to resync */
        fake_publish(f);
        assert_int_equal(ring_read(&f->ring, 10, collect, &s), 1);
        assert_int_equal(f->ring.n_bad, 1);
        assert_int_equal(f->page->data_tail, f->head);

        fake_header(f, 4);
        fake_publish(f);
        assert_int_equal(ring_read(&f->ring, 10, collect, &s), 0);
        assert_int_equal(f->ring.n_bad, 2);
        assert_int_equal(f->page->data_tail, f->head);

        /* Not a multiple of 8: the next header would be misaligned. */
        fake_header(f, 12);
        fake_record(f, 16, 3);
        fake_publish(f);
        assert_int_equal(ring_read(&f->ring, 10, collect, &s), 0);
        assert_int_equal(f->ring.n_bad, 3);

        /* And the ring works on afterwards. */
        fake_record(f, 16, 4);
        fake_publish(f);
        assert_int_equal(ring_read(&f->ring, 10, collect, &s), 1);
        assert_int_equal(s.rec[s.n - 1].seq, 4);
        assert_int_equal(s.n, 2);
        fake_free(f);
}

static void test_bad_large(void **state) {
        struct fake *f = fake_new(true);
        struct seen s = {};

        /* Put the tail at 240: a 16-byte window before the guard page. */
        for (uint8_t i = 0; i < 15; i++)
                fake_record(f, 16, i);
        fake_publish(f);
        assert_int_equal(ring_read(&f->ring, 100, collect, &s), 15);

        /* Claims 65528 bytes with 16 published: never read. */
        fake_header(f, 65528);
        fake_write_bytes(f, "xxxxxxxx", 8);
        fake_publish(f);
        s = (struct seen) {};
        assert_int_equal(ring_read(&f->ring, 100, collect, &s), 0);
        assert_int_equal(s.n, 0);
        assert_int_equal(f->ring.n_bad, 1);
        assert_int_equal(f->page->data_tail, f->head);

        /* One byte too many is just as bad. */
        fake_header(f, 32);
        fake_write_bytes(f, "yyyyyyyyyyyyyyyy", 16);
        fake_publish(f);
        assert_int_equal(ring_read(&f->ring, 100, collect, &s), 0);
        assert_int_equal(f->ring.n_bad, 2);

        /* A head more than a ring ahead of the tail is corrupt. */
        f->head += 2 * DATA_SIZE;
        fake_publish(f);
        assert_int_equal(ring_read(&f->ring, 100, collect, &s), 0);
        assert_int_equal(f->ring.n_bad, 3);
        assert_int_equal(f->page->data_tail, f->head);

        /* A published tail of less than a header. */
        f->head += 4;
        fake_publish(f);
        assert_int_equal(ring_read(&f->ring, 100, collect, &s), 0);
        assert_int_equal(f->ring.n_bad, 4);
        assert_int_equal(ring_pending(&f->ring), 0);
        fake_free(f);
}

/* One record at a time (the time-ordered merge's way): a peek leaves the
 * tail alone, a wrapped record is bounced, ring_consume() publishes. */
static void test_peek(void **state) {
        struct fake *f = fake_new(true);
        const struct perf_event_header *h;
        uint64_t head, pos;

        for (uint8_t i = 0; i < 7; i++)
                fake_record(f, 32, i);
        fake_publish(f);
        head = ring_head(&f->ring);
        pos = f->page->data_tail;
        for (uint8_t i = 0; i < 7; i++) {
                h = ring_peek(&f->ring, &pos, head);
                assert_non_null(h);
                assert_int_equal(h->misc, i);
                /* Looking again gives the same record. */
                assert_ptr_equal(ring_peek(&f->ring, &pos, head), h);
                pos += h->size;
        }
        assert_null(ring_peek(&f->ring, &pos, head));
        assert_int_equal(f->page->data_tail, 0);
        /* Consume all but the last: it stays for the next pass. */
        ring_consume(&f->ring, pos - 32);
        assert_int_equal(f->page->data_tail, 192);

        fake_record(f, 64, 14);         /* 224..288: offsets 224..256 + 0..32, wraps */
        fake_publish(f);
        head = ring_head(&f->ring);
        pos = f->page->data_tail;
        h = ring_peek(&f->ring, &pos, head);
        assert_int_equal(h->misc, 6);
        pos += h->size;
        h = ring_peek(&f->ring, &pos, head);
        assert_ptr_equal(h, f->ring.bounce);
        assert_int_equal(h->misc, 14);
        assert_int_equal(h->size, 64);
        pos += h->size;
        ring_consume(&f->ring, pos);
        assert_int_equal(f->page->data_tail, f->head);

        /* A malformed size: everything up to head goes, counted. */
        fake_header(f, 12);
        fake_record(f, 32, 20);
        fake_publish(f);
        head = ring_head(&f->ring);
        pos = f->page->data_tail;
        assert_null(ring_peek(&f->ring, &pos, head));
        assert_int_equal(pos, head);
        assert_int_equal(f->ring.n_bad, 1);
        fake_free(f);
}

static int count_seq(const struct perf_event_header *h, void *userdata) {
        uint32_t *expect = userdata;
        const uint8_t *p = (const uint8_t *) (h + 1);

        assert_int_equal(h->misc, (uint8_t) *expect);
        for (size_t i = 0; i < h->size - sizeof(*h); i++)
                assert_int_equal(p[i], (uint8_t) *expect);
        (*expect)++;
        return 0;
}

/* Many laps with records of every size, the writer only ever writing into
 * space the reader has released (as the kernel does with a PROT_WRITE
 * mapping). */
static void test_laps(void **state) {
        struct fake *f = fake_new(true);
        uint32_t written = 0, expect = 0, rnd = 12345;

        while (f->head < 100 * DATA_SIZE) {
                for (;;) {
                        uint16_t size;

                        rnd = rnd * 1103515245 + 12345;
                        size = 8 * (1 + (rnd >> 16) % 20);
                        if (f->head + size - f->page->data_tail > DATA_SIZE)
                                break;
                        fake_record(f, size, (uint8_t) written);
                        written++;
                }
                fake_publish(f);
                rnd = rnd * 1103515245 + 12345;
                assert_true(ring_read(&f->ring, 1 + (rnd >> 16) % 4, count_seq, &expect) > 0);
        }
        while (ring_read(&f->ring, 8, count_seq, &expect) > 0)
                ;
        assert_int_equal(expect, written);
        assert_int_equal(f->page->data_tail, f->head);
        assert_int_equal(f->ring.n_bad, 0);
        fake_free(f);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_init),
                cmocka_unit_test(test_read_in_place),
                cmocka_unit_test(test_wrap_bounce),
                cmocka_unit_test(test_budget),
                cmocka_unit_test(test_callback_error),
                cmocka_unit_test(test_bad_small),
                cmocka_unit_test(test_bad_large),
                cmocka_unit_test(test_laps),
                cmocka_unit_test(test_peek),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
