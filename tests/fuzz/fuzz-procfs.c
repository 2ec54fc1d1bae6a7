/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The /proc and cgroup parsers of src/context/: /proc/PID/stat, status,
 * cgroup and maps, /proc/kallsyms, and a cgroup path → container id. The
 * same bytes go to each (a seed of one kind is a near miss for the others). */

#include <stdlib.h>
#include <string.h>

#include "evmon/context.h"
#include "fuzz.h"

static int count_map(const struct ctx_map *m, void *userdata) {
        size_t *n = userdata;

        /* The path must lie inside the input. */
        *n += m->path_len + (m->exec ? 1 : 0);
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        /* A copy of exactly SIZE bytes: nothing may read past it. */
        char *text = malloc(size ? size : 1), buf[256];
        struct ctx_kallsyms *k = NULL;
        struct ctx_proc_stat st;
        struct ctx_container ct;
        struct ctx_frame f;
        uid_t uid;
        gid_t gid;
        size_t n = 0;

        if (!text)
                abort();
        memcpy(text, data, size);
        (void) ctx_parse_stat(text, size, &st);
        (void) ctx_parse_status(text, size, &uid, &gid);
        if (ctx_parse_cgroup(text, size, buf, sizeof(buf)) == 0 && strlen(buf) >= sizeof(buf))
                abort();
        (void) ctx_parse_maps(text, size, count_map, &n);
        if (ctx_container_parse(text, size, &ct) > 0 && (strlen(ct.id) >= sizeof(ct.id) || strlen(ct.pod) >= sizeof(ct.pod)))
                abort();
        if (ctx_kallsyms_parse(text, size, &k) == 0) {
                (void) ctx_kallsyms_lookup(k, 0xffffffff81000000ull, &f);
                (void) ctx_kallsyms_lookup(k, UINT64_MAX, &f);
                ctx_kallsyms_free(k);
        }
        free(text);
        return 0;
}
