/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A tracefs format file (src/tracefs/format.c), then, when it parses, the
 * bytes after it as a record of that event: every field decoded
 * (decode.c) and the whole sample encoded as evmond's event line. The
 * input is the format text, a NUL, then the record. */

#include <stdlib.h>
#include <string.h>

#include "evmon/encode.h"
#include "evmon/monitor.h"
#include "evmon/tracefs.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const uint8_t *nul = memchr(data, 0, size);
        size_t text_size = nul ? (size_t) (nul - data) : size;
        const uint8_t *rec = nul ? nul + 1 : data + size;
        size_t rec_size = size - (size_t) (rec - data);
        struct format *f = NULL;
        struct encoder *e = NULL;
        struct jbuf line = {};
        char *text;
        void *copy;

        text = malloc(text_size + 1);
        copy = malloc(rec_size ? rec_size : 1);
        if (!text || !copy)
                abort();
        memcpy(text, data, text_size);
        text[text_size] = 0;
        memcpy(copy, rec, rec_size);    /* exactly the record's bytes */

        if (format_parse(text, "fuzz", &f) >= 0) {
                for (size_t i = 0; i < f->n_fields; i++) {
                        struct field_value v;

                        if (field_decode(&f->fields[i], copy, rec_size, &v) >= 0 &&
                            (v.kind == FIELD_ARRAY || v.kind == FIELD_DYN_ARRAY))
                                for (size_t k = 0; k < v.arr.count; k++)
                                        (void) field_array_get(&f->fields[i], &v, k);
                }
                if (encoder_new("fuzz:event", f, &e) >= 0) {
                        struct perf_sample s = {
                                .sample_type = PERF_SAMPLE_RAW | PERF_SAMPLE_TIME | PERF_SAMPLE_TID | PERF_SAMPLE_CPU,
                                .raw = { (uint32_t) rec_size, copy },
                        };
                        (void) encode_event(&line, e, &s, 0);
                }
        }
        jbuf_done(&line);
        encoder_free(e);
        format_free(f);
        free(copy);
        free(text);
        return 0;
}
