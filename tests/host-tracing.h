/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Tests that trace on the host kernel first make sure its tracing works.
 *
 * An oops in a tracing path (seen here: Linux 6.18 in uprobe_perf_close())
 * kills the task while it holds the kernel's event_mutex. From then on
 * every open of a tracefs event file and every close of a tracepoint perf
 * fd blocks in uninterruptible sleep until a reboot, and so would the test,
 * past any timeout. So: open one event file in a child, and skip (77) with
 * the reason when that does not come back. The child may stay blocked; it
 * holds nothing. */

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static inline void host_tracing_require_usable(void) {
        static const char probe[] = "/sys/kernel/tracing/events/sched/sched_process_exec/enable";
        char tainted[32] = "?";
        pid_t pid;
        FILE *f;

        if (access(probe, F_OK) < 0)
                return;  /* no tracefs there: the test's own checks say so */
        pid = fork();
        if (pid < 0)
                return;
        if (pid == 0) {
                /* If this blocks for good, it must hold no pipe of the test
                 * runner's open, or the runner would wait for it too. */
                int null = open("/dev/null", O_RDWR | O_CLOEXEC);
                if (null >= 0)
                        for (int i = 0; i < 3; i++)
                                dup2(null, i);
                for (int i = 3; i < 1024; i++)
                        close(i);
                _exit(open(probe, O_RDONLY | O_CLOEXEC) < 0);
        }
        for (int i = 0; i < 100; i++) {
                int status;
                if (waitpid(pid, &status, WNOHANG) == pid)
                        return;
                usleep(30000);
        }
        f = fopen("/proc/sys/kernel/tainted", "re");
        if (f) {
                if (!fgets(tainted, sizeof(tainted), f))
                        tainted[0] = 0;
                fclose(f);
        }
        for (char *p = tainted; *p; p++)
                if (*p == '\n')
                        *p = 0;
        printf("SKIP: the host kernel's tracing is wedged: opening %s blocks for good "
               "(kernel tainted=%s: an oops in a tracing path holds event_mutex; see dmesg). "
               "Reboot the host to run this test.\n", probe, tainted);
        fflush(stdout);
        exit(77);
}
