/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One perf record under any attr (src/monitor/record.c, sample.c), then
 * its JSON (src/encode/): the input is the attr's sample_type,
 * read_format, sample_regs_user, sample_regs_intr and branch_sample_type
 * (8 bytes each, little-endian), a flags byte (bit 0: sample_id_all),
 * then the record, header first. The header's size is set to the bytes
 * given, as the ring reader guarantees. */

#include <stdlib.h>
#include <string.h>

#include "evmon/encode.h"
#include "evmon/encode-perf.h"
#include "evmon/monitor.h"
#include "fuzz.h"

#define ATTR_BYTES (5 * 8 + 1)

static uint64_t get64(const uint8_t *p) {
        uint64_t v;

        memcpy(&v, p, 8);
        return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct perf_event_attr attr = { .size = sizeof(attr) };
        struct perf_event_header *h;
        struct perf_record rec;
        struct jbuf line = {};
        size_t n;

        if (size < ATTR_BYTES + sizeof(*h) || size - ATTR_BYTES > UINT16_MAX)
                return 0;
        attr.sample_type = get64(data);
        attr.read_format = get64(data + 8);
        attr.sample_regs_user = get64(data + 16);
        attr.sample_regs_intr = get64(data + 24);
        attr.branch_sample_type = get64(data + 32);
        attr.sample_id_all = data[40] & 1;
        n = size - ATTR_BYTES;
        /* 8-byte aligned and exactly N bytes, as in the ring's bounce
         * buffer. */
        h = aligned_alloc(8, (n + 7) & ~(size_t) 7);
        if (!h)
                abort();
        memcpy(h, data + ATTR_BYTES, n);
        h->size = (uint16_t) n;

        if (record_parse(&attr, h, &rec) >= 0) {
                if (h->type == PERF_RECORD_SAMPLE) {
                        size_t max = encode_sample_max(&rec.sample, ~(uint64_t) 0, NULL);
                        char *buf = malloc(max + 1), *end;

                        if (!buf)
                                abort();
                        end = encode_sample_put(buf, &rec.sample, ~(uint64_t) 0, NULL);
                        if ((size_t) (end - buf) > max)
                                abort();        /* wrote past its own worst case */
                        free(buf);
                } else {
                        struct encode_record_opts o = { .sample_type = attr.sample_type, .event = "fuzz:event" };
                        (void) encode_record(&line, h, &rec, &o);
                }
        }
        jbuf_done(&line);
        free(h);
        return 0;
}
