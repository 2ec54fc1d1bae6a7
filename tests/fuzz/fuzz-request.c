/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A client's request line: json-c, then request_parse() and, for a
 * subscribe or an aggregate, the subscription it builds (src/daemon/request.c,
 * subscription.c), and for an aggregate its tables with no format (a
 * field key is the error then), as evmond runs them on every line a
 * client sends. */

#include <errno.h>
#include <stdlib.h>

#include "fuzz.h"
#include "aggregate.h"
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
        if (r > 0 && req.type == REQUEST_AGGREGATE) {
                const struct agg_event_info info[4] = {
                        { .name = names[0] }, { .name = names[1] }, { .name = names[2] }, { .name = names[3] },
                };
                uint64_t bits = 0xf;
                struct aggregate *a = NULL;

                if (agg_new(&req.agg, info, 4, &bits, &bits, &a, &error) >= 0) {
                        struct jbuf b = {};
                        const struct agg_sample s = { .idx = 2, .pid = 1, .tid = 1, .comm = "x", .uid = -1 };

                        agg_fold(a, &s);
                        (void) agg_emit(a, &b, 1, 0, names, 4, true);
                        jbuf_done(&b);
                        agg_free(a);
                }
        }
        if (r > 0)
                request_done(&req);
        free(error);
        return 0;
}
