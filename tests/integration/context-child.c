/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The program test-context runs, under a name of its own. Each phase of
 * it makes getpgid(MARK) calls nobody else makes, so the test knows which
 * process, thread and phase made each event:
 *   basic: MARK_MAIN from the main thread, MARK_THREAD from a second
 *          thread, MARK_RENAMED after prctl(PR_SET_NAME, "evctx-renamed")
 *   cgroups DIR...: moves itself into each DIR in turn, MARK_CGROUP + k there
 *   busy MS: spins MS milliseconds in evctx_busy_outer → evctx_busy_inner,
 *            half of it in the kernel (getppid), for callchain samples
 *   flee MS: renames its executable to PATH.moved, makes a FIFO at PATH,
 *            then spins as busy does (test-symbolizer)
 *   swapdir MS TARGET: renames the directory of its executable to DIR.moved,
 *            makes DIR a symlink to TARGET, then spins (test-symbolizer) */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MARK_MAIN 2000000001L
#define MARK_THREAD 2000000002L
#define MARK_RENAMED 2000000003L
#define MARK_CGROUP 2000000100L

static void mark(long m) {
        for (int i = 0; i < 3; i++)
                (void) syscall(SYS_getpgid, m);
}

static void *thread_main(void *arg) {
        mark(MARK_THREAD);
        return NULL;
}

static double now(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec + ts.tv_nsec / 1e9;
}

volatile unsigned long evctx_sink;

__attribute__((noinline)) void evctx_busy_inner(unsigned n);
__attribute__((noinline)) void evctx_busy_inner(unsigned n) {
        for (unsigned i = 0; i < n; i++)
                evctx_sink += i * 7 + 1;
        (void) syscall(SYS_getppid);
}

__attribute__((noinline)) void evctx_busy_outer(double until);
__attribute__((noinline)) void evctx_busy_outer(double until) {
        while (now() < until)
                evctx_busy_inner(2000);
}

int main(int argc, char **argv) {
        if (argc >= 2 && strcmp(argv[1], "basic") == 0) {
                pthread_t t;

                mark(MARK_MAIN);
                if (pthread_create(&t, NULL, thread_main, NULL) != 0 || pthread_join(t, NULL) != 0)
                        return 2;
                if (prctl(PR_SET_NAME, "evctx-renamed") < 0)
                        return 2;
                mark(MARK_RENAMED);
                return 0;
        }
        if (argc >= 2 && strcmp(argv[1], "cgroups") == 0) {
                for (int k = 2; k < argc; k++) {
                        char path[4096];
                        FILE *f;

                        snprintf(path, sizeof(path), "%s/cgroup.procs", argv[k]);
                        f = fopen(path, "we");
                        /* "0" moves the writer itself */
                        if (!f || fputs("0", f) < 0 || fclose(f) != 0) {
                                perror(path);
                                return 2;
                        }
                        mark(MARK_CGROUP + (k - 2));
                }
                return 0;
        }
        if (argc >= 3 && strcmp(argv[1], "busy") == 0) {
                evctx_busy_outer(now() + atoi(argv[2]) / 1000.0);
                return 0;
        }
        if (argc >= 3 && strcmp(argv[1], "flee") == 0) {
                /* test-symbolizer's attacker: moves its own executable away
                 * and leaves a FIFO at the path its exec was recorded by. */
                char moved[4096];

                snprintf(moved, sizeof(moved), "%s.moved", argv[0]);
                if (rename(argv[0], moved) < 0 || mkfifo(argv[0], 0644) < 0) {
                        perror(argv[0]);
                        return 2;
                }
                evctx_busy_outer(now() + atoi(argv[2]) / 1000.0);
                return 0;
        }
        if (argc >= 4 && strcmp(argv[1], "swapdir") == 0) {
                /* test-symbolizer's attacker: moves the directory its
                 * executable is in away and leaves there a link to
                 * TARGET, where a file of root's has its inode number. */
                char dir[4096], moved[4200], *slash;

                snprintf(dir, sizeof(dir), "%s", argv[0]);
                slash = strrchr(dir, '/');
                if (!slash)
                        return 2;
                *slash = 0;
                snprintf(moved, sizeof(moved), "%s.moved", dir);
                if (rename(dir, moved) < 0 || symlink(argv[3], dir) < 0) {
                        perror(dir);
                        return 2;
                }
                evctx_busy_outer(now() + atoi(argv[2]) / 1000.0);
                return 0;
        }
        fprintf(stderr, "usage: %s basic | cgroups DIR... | busy MS | flee MS | swapdir MS TARGET\n", argv[0]);
        return 2;
}
