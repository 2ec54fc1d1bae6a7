/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A client's request line: json-c, then request_parse() and, for a
 * subscribe, the subscription it builds (src/daemon/request.c,
 * subscription.c), as evmond runs them on every line a client sends. */

#include <errno.h>
#include <stdlib.h>

#include "fuzz.h"
#include "request.h"
#include "subscription.h"

static const char *const names[] = {
        "sched:sched_process_exec", "sched:sched_process_exit", "syscalls:sys_enter_openat", "kprobe:open",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct request req;
        struct subscription sub;
        char *error = NULL;
        int r;

        r = request_parse((const char *) data, size, &req, &error);
        if (error && r != -EINVAL)
                abort();        /* a message comes with -EINVAL only */
        if (r > 0 && req.type == REQUEST_SUBSCRIBE &&
            subscription_build(&sub, &req, names, sizeof(names) / sizeof(names[0]), NULL, &error) >= 0) {
                struct line_meta m = { .idx = 3, .pid = 1 };

                (void) subscription_matches(&sub, &m);
                subscription_done(&sub);
        }
        if (r > 0)
                request_done(&req);
        free(error);
        return 0;
}
