/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The print fmt parser (src/tracefs/printfmt.c) and the names it gives:
 * the input is a format file (format_parse() hands its print fmt to
 * printfmt_parse()). Each named field is then named for a spread of
 * values, and every name must fit the bound the encoder reserves
 * (name_max), and a record of zeros and one of 0xff bytes are encoded as
 * evmond's event lines (encode_event() asserts its own bound). */

#include <stdlib.h>
#include <string.h>

#include "evmon/encode.h"
#include "evmon/monitor.h"
#include "evmon/tracefs.h"
#include "fuzz.h"

static void encode_filled(const struct encoder *e, size_t size, int byte) {
        struct jbuf line = {};
        void *rec = malloc(size ? size : 1);
        struct perf_sample s = {
                .sample_type = PERF_SAMPLE_RAW | PERF_SAMPLE_TIME | PERF_SAMPLE_TID | PERF_SAMPLE_CPU,
        };

        if (!rec)
                abort();
        memset(rec, byte, size);
        s.raw.size = (uint32_t) size;
        s.raw.data = rec;
        (void) encode_event(&line, e, &s, 0);
        jbuf_done(&line);
        free(rec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static char name[SYMBOLS_NAME_MAX];
        struct format *f = NULL;
        struct encoder *e = NULL;
        char *text;

        text = malloc(size + 1);
        if (!text)
                abort();
        memcpy(text, data, size);
        text[size] = 0;

        if (format_parse(text, "fuzz", &f) >= 0) {
                for (size_t i = 0; i < f->n_symbols; i++) {
                        const struct field_symbols *s = &f->symbols[i];

                        if (s->field >= f->n_fields || s->name_max > SYMBOLS_NAME_MAX ||
                            format_symbols_find(f, s->field) != s)
                                abort();
                        for (unsigned bit = 0; bit <= 64; bit++) {
                                uint64_t v = bit == 64 ? 0 : (uint64_t) 1 << bit;

                                if (symbols_name(s, v, name, sizeof(name)) > s->name_max ||
                                    symbols_name(s, ~v, name, sizeof(name)) > s->name_max ||
                                    symbols_name(s, v - 1, name, sizeof(name)) > s->name_max)
                                        abort();
                        }
                }
                if (f->min_size < (1u << 16) && encoder_new("fuzz:event", f, &e) >= 0) {
                        encode_filled(e, f->min_size, 0);
                        encode_filled(e, f->min_size, 0xff);
                }
        }
        encoder_free(e);
        format_free(f);
        free(text);
        return 0;
}
