/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A perf.data file (src/monitor/perfdata.c): the header, attrs, feature
 * sections, and every record of the data section, in file order. */

#include <stdlib.h>
#include <string.h>

#include "evmon/perfdata.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct perfdata *pd = NULL;
        struct perfdata_record pr;
        struct perfdata_clock clock;
        void *copy = malloc(size ? size : 1);

        if (!copy)
                abort();
        memcpy(copy, data, size);
        (void) perfdata_unsupported(copy, size);
        if (perfdata_new(copy, size, &pd) >= 0) {
                (void) perfdata_clock(pd, &clock);
                for (size_t i = 0; i < perfdata_n_events(pd); i++)
                        (void) perfdata_event(pd, i);
                for (unsigned n = 0; n < 1000000 && perfdata_next(pd, &pr) > 0; n++)
                        ;
        }
        perfdata_free(pd);
        free(copy);
        return 0;
}
