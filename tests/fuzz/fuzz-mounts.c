/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* /proc/mounts as evmond reads it to find tracefs (src/tracefs/tracefs.c),
 * and a cgroup path of the config resolved under the cgroup2 mount
 * (src/daemon/cgroup.c). */

#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "evmon/tracefs.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *text = malloc(size + 1), *path = NULL;

        if (!text)
                abort();
        memcpy(text, data, size);
        text[size] = 0;
        (void) tracefs_find_mount(text, &path);
        free(path);
        path = NULL;
        (void) cgroup_resolve("/sys/fs/cgroup", text, &path);
        free(path);
        free(text);
        return 0;
}
