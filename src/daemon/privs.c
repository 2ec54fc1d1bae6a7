/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>

#include "privs.h"
#include "evmon/cleanup.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif

static void cap_freep(cap_t *c) {
        if (*c)
                cap_free(*c);
}

/* Debian's and Ubuntu's kernels carry a patch that adds
 * kernel.perf_event_paranoid=3 (their default): perf_event_open then takes
 * CAP_SYS_ADMIN, and CAP_PERFMON is not enough. */
static bool perf_paranoid_needs_sys_admin(void) {
        _cleanup_(fclosep) FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
        int level;

        return f && fscanf(f, "%d", &level) == 1 && level > 2;
}

int privs_drop(char **ret_kept) {
        _cleanup_(cap_freep) cap_t caps = NULL;
        cap_value_t keep[3];
        int n_keep = 0, r;

        /* CAP_PERFMON exists since Linux 5.8; before it, perf_event_open on
         * tracepoints system-wide takes CAP_SYS_ADMIN. A reload opens
         * events, so what perf_event_open takes stays. */
        keep[n_keep++] = CAP_IS_SUPPORTED(CAP_PERFMON) ? CAP_PERFMON : CAP_SYS_ADMIN;
        keep[n_keep++] = CAP_DAC_READ_SEARCH;
        if (keep[0] != CAP_SYS_ADMIN && perf_paranoid_needs_sys_admin())
                keep[n_keep++] = CAP_SYS_ADMIN;

        /* Bounding set first: dropping from it needs CAP_SETPCAP, which goes
         * with the rest below. */
        for (cap_value_t c = 0; CAP_IS_SUPPORTED(c); c++) {
                bool kept = false;
                for (int i = 0; i < n_keep; i++)
                        kept |= keep[i] == c;
                if (!kept && cap_get_bound(c) == 1 && prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
                        return -errno;
        }

        caps = cap_init();
        if (!caps)
                return -ENOMEM;
        if (cap_set_flag(caps, CAP_EFFECTIVE, n_keep, keep, CAP_SET) < 0 ||
            cap_set_flag(caps, CAP_PERMITTED, n_keep, keep, CAP_SET) < 0)
                return -errno;
        if (cap_set_proc(caps) < 0)
                return -errno;
        /* No ambient capabilities for anything we might run. */
        (void) prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
        r = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        if (r < 0)
                return -errno;

        if (ret_kept) {
                _cleanup_(cap_freep) cap_t now = cap_get_proc();
                char *t = now ? cap_to_text(now, NULL) : NULL;
                *ret_kept = t ? strdup(t) : NULL;
                if (t)
                        cap_free(t);
        }
        return 0;
}
