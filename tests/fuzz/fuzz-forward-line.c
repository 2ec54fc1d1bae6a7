/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* evmon-forward's reading of evmond's lines (src/forward/line.c): the
 * top-level "type" and "event" found without a JSON tree, the NATS
 * subject made of them, and the payload with "host" added. */

#include <stdlib.h>
#include <string.h>

#include "line.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct line_info li;
        char *line = malloc(size ? size : 1), subject[256], *out;
        size_t out_size = size + 64;

        out = malloc(out_size);
        if (!line || !out)
                abort();
        memcpy(line, data, size);       /* exactly the line's bytes */
        if (line_scan(line, size, &li) >= 0) {
                (void) line_subject("fuzz.host", &li, subject, sizeof(subject));
                (void) line_subject("h", &li, subject, 8);      /* too small on purpose */
                (void) line_with_host(line, size, "\"fuzz\"", out, out_size);
                (void) line_with_host(line, size, "\"fuzz\"", out, size / 2);
        }
        free(out);
        free(line);
        return 0;
}
