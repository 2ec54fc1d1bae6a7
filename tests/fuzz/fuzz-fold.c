/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* evmonctl's stack scanner (src/cli/cli-fold.c): an event line's stack
 * folded without a JSON tree, then what was folded written as folded
 * lines and as an SVG flame graph (src/shared/flamegraph.c). */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evmon/flamegraph.h"

#include "cli.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct flame *f = NULL;
        char *line = malloc(size ? size : 1);
        FILE *null = fopen("/dev/null", "we");
        bool callchain;

        if (!line || !null || flame_new(&f) < 0)
                abort();
        memcpy(line, data, size);       /* exactly the line's bytes */
        (void) profile_fold_line(f, line, size, NULL, NULL, &callchain);
        (void) profile_fold_line(f, line, size, "software:cpu-clock", "comm", &callchain);
        if (flame_write_folded(f, null) < 0 || flame_write_svg(f, NULL, null) < 0)
                abort();
        fclose(null);
        flame_free(f);
        free(line);
        return 0;
}
