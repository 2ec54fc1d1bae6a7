/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reading a perf mmap ring (the control page plus a 2^n data area) on plain
 * memory: no fd, no poll, so tests can build a ring that wraps. The kernel
 * writes at data_head, we consume from data_tail; the layout and the
 * barrier rules are those of struct perf_event_mmap_page in
 * linux/perf_event.h. */

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "evmon/monitor.h"

int ring_init(struct ring *r, void *base, size_t data_size) {
        struct perf_event_mmap_page *page = base;
        uint64_t offset, size;
        long page_size;

        if (!r || !base)
                return -EINVAL;

        page_size = sysconf(_SC_PAGESIZE);
        if (page_size <= 0)
                return -EINVAL;

        /* Kernels since 4.1 say where the data area is; older ones leave
         * these 0 and the data starts on the page after the control page. */
        offset = page->data_offset ?: (uint64_t) page_size;
        size = page->data_size ?: data_size;

        /* We can only read what the caller mapped. */
        if (page->data_size && data_size && page->data_size != data_size)
                return -EINVAL;
        if (size < sizeof(struct perf_event_header) || (size & (size - 1)) != 0)
                return -EINVAL;

        *r = (struct ring) {
                .page = page,
                .data = (uint8_t *) base + offset,
                .size = size,
        };

        r->bounce = malloc(RING_BOUNCE_SIZE);
        if (!r->bounce)
                return -ENOMEM;

        return 0;
}

void ring_done(struct ring *r) {
        if (!r)
                return;
        free(r->bounce);
        *r = (struct ring) {};
}

/* Copies N bytes starting at ring offset OFF (< size), wrapping at the end. */
static void ring_copy(const struct ring *r, uint64_t off, void *dst, size_t n) {
        size_t first = r->size - off;

        if (first >= n) {
                memcpy(dst, r->data + off, n);
                return;
        }
        memcpy(dst, r->data + off, first);
        memcpy((uint8_t *) dst + first, r->data, n - first);
}

static uint64_t ring_load_head(const struct ring *r) {
        /* Pairs with the kernel's smp_wmb() before it publishes data_head
         * (perf_output_put_handle(), and the uapi perf_event_mmap_page
         * comment): records below head are complete once we see head. */
        return __atomic_load_n(&r->page->data_head, __ATOMIC_ACQUIRE);
}

uint64_t ring_pending(const struct ring *r) {
        /* We are the only writer of data_tail. */
        return ring_load_head(r) - r->page->data_tail;
}

int ring_read(struct ring *r, unsigned budget, ring_record_fn fn, void *userdata) {
        uint64_t head, tail, mask;
        unsigned n = 0;
        int ret = 0;

        if (!r || !r->page || !fn)
                return -EINVAL;

        if (budget > INT_MAX)
                budget = INT_MAX;

        mask = r->size - 1;
        head = ring_load_head(r);
        tail = r->page->data_tail;

        /* Mapped PROT_WRITE the kernel never overwrites unread data, so
         * more than a ring's worth pending means a corrupt head: skip it
         * all rather than read garbage. */
        if (head - tail > r->size) {
                r->n_bad++;
                tail = head;
        }

        while (n < budget && tail != head) {
                uint64_t avail = head - tail, off = tail & mask;
                struct perf_event_header hdr;
                const struct perf_event_header *h;

                if (avail < sizeof(hdr)) {
                        r->n_bad++;
                        tail = head;
                        break;
                }

                /* Copy the header out: with a corrupt size before it, it
                 * may itself straddle the end. */
                ring_copy(r, off, &hdr, sizeof(hdr));

                /* The kernel writes whole records of 8-byte multiples. A
                 * size below a header would loop forever, one above what
                 * is pending would read unwritten (or out of bounds)
                 * memory: we cannot find the next record boundary after
                 * either, so drop everything up to head. */
                if (hdr.size < sizeof(hdr) || hdr.size > avail || hdr.size % 8 != 0) {
                        r->n_bad++;
                        tail = head;
                        break;
                }

                if (off + hdr.size <= r->size)
                        h = (const struct perf_event_header *) (r->data + off);
                else {
                        /* The record straddles the end: hand out a
                         * contiguous copy (size is a u16, so it fits). */
                        ring_copy(r, off, r->bounce, hdr.size);
                        h = (const struct perf_event_header *) r->bounce;
                }

                ret = fn(h, userdata);
                if (ret < 0)
                        break;

                tail += hdr.size;
                n++;
        }

        /* Release: our reads of the records above must complete before the
         * kernel may reuse their space (the uapi comment asks for an
         * smp_mb() before writing data_tail; a release store orders the
         * preceding loads). Once per batch keeps the cache line quiet. */
        if (tail != r->page->data_tail)
                __atomic_store_n(&r->page->data_tail, tail, __ATOMIC_RELEASE);

        return ret < 0 ? ret : (int) n;
}

uint64_t ring_head(const struct ring *r) {
        return ring_load_head(r);
}

const struct perf_event_header *ring_peek(struct ring *r, uint64_t *pos, uint64_t head) {
        uint64_t avail = head - *pos, off = *pos & (r->size - 1);
        struct perf_event_header hdr;

        if (*pos == head)
                return NULL;
        /* As ring_read(): a corrupt head or size leaves no record boundary
         * to find, so everything up to head goes. */
        if (avail > r->size || avail < sizeof(hdr)) {
                r->n_bad++;
                *pos = head;
                return NULL;
        }
        ring_copy(r, off, &hdr, sizeof(hdr));
        if (hdr.size < sizeof(hdr) || hdr.size > avail || hdr.size % 8 != 0) {
                r->n_bad++;
                *pos = head;
                return NULL;
        }
        if (off + hdr.size <= r->size)
                return (const struct perf_event_header *) (r->data + off);
        ring_copy(r, off, r->bounce, hdr.size);
        return (const struct perf_event_header *) r->bounce;
}

void ring_consume(struct ring *r, uint64_t tail) {
        /* Release, as at the end of ring_read(). */
        if (tail != r->page->data_tail)
                __atomic_store_n(&r->page->data_tail, tail, __ATOMIC_RELEASE);
}
