/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The container runtimes' state files as src/context/runstate.c judges
 * them (docker's config.v2.json, the OCI config.json of containerd and
 * CRI-O, containers/storage's containers.json with libpod's metadata
 * string, machined's and LXC's key=value files): anyone who can make a
 * runtime write a label or a name writes part of these. Input: a byte
 * choosing the runtime, the container id and the pod uid each ended by a
 * newline, then the file. */

#include <stdlib.h>
#include <string.h>

#include "evmon/context.h"
#include "fuzz.h"

static const char *line(const uint8_t **p, const uint8_t *end, char *buf, size_t size) {
        size_t n = 0;

        while (*p < end && **p != '\n' && n + 1 < size)
                buf[n++] = (char) *(*p)++;
        if (*p < end && **p == '\n')
                (*p)++;
        buf[n] = 0;
        return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const uint8_t *p = data, *end = data + size;
        char id[CTX_CONTAINER_ID_MAX], pod[CTX_POD_UID_MAX], *text, *strings = NULL;
        struct ctx_runstate_info info;
        enum ctx_runtime rt;
        size_t n;
        int r;

        if (size < 1)
                return 0;
        rt = (enum ctx_runtime) (*p++ % (CTX_RUNTIME_KUBERNETES + 1));
        line(&p, end, id, sizeof(id));
        line(&p, end, pod, sizeof(pod));
        n = (size_t) (end - p);
        /* Exactly the file's bytes and the NUL read_full() puts after them. */
        text = malloc(n + 1);
        if (!text)
                abort();
        memcpy(text, p, n);
        text[n] = 0;
        r = ctx_runstate_parse(rt, id, pod, text, n, &info, &strings);
        if (r > 0) {
                const char *s[] = { info.name, info.image, info.image_id, info.pod_name, info.pod_namespace,
                                    info.pod_uid, info.pod_container };

                /* Each string is bounded and NUL-terminated. */
                for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
                        if (s[i] && strlen(s[i]) > 1023)
                                abort();
                /* A pod is only the one the cgroup names. */
                if (info.pod_uid && strcmp(info.pod_uid, pod) != 0)
                        abort();
        } else if (r == 0 && (info.name || info.pod_uid))
                abort();
        free(strings);
        free(text);
        return 0;
}
