/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A probe target as the config gives it ("do_sys_openat2+8",
 * "/usr/bin/bash:readline", "PATH:0x1a2"), split by each kind's syntax
 * (src/tracefs/probe.c), and the probe names it checks. */

#include <stdlib.h>
#include <string.h>

#include "evmon/probe.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const enum probe_kind kinds[] = { PROBE_KPROBE, PROBE_KRETPROBE, PROBE_UPROBE, PROBE_URETPROBE };
        char *text = malloc(size + 1);

        if (!text)
                abort();
        memcpy(text, data, size);
        text[size] = 0;
        for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
                struct probe_target t = {};
                char *error = NULL;

                (void) probe_parse_target(kinds[i], text, &t, &error);
                probe_target_done(&t);
                free(error);
        }
        (void) probe_name_is_valid(text);
        free(text);
        return 0;
}
