/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Helpers every test may use, unit and integration alike (itest.h and
 * tracefs/test-util.h build on it): what several tests wrote again each.
 * Header-only, so that a unit test links its module's library and
 * nothing else. */

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* $NAME, which meson's test environment sets; exits when it is not set
 * (the test was run by hand). */
static inline const char *test_env(const char *name) {
        const char *v = getenv(name);

        if (!v) {
                fprintf(stderr, "%s is not set: run through meson test\n", name);
                exit(EXIT_FAILURE);
        }
        return v;
}

/* Forks a child that waits at a gate: in the child it returns 0 once
 * test_gate_open(*RET_GATE) was called (and _exit(3)s if the parent
 * went away first), in the parent the child's pid. The child's events
 * can so be opened and enabled before it does anything. FORK is fork()
 * or itest_fork(). */
static inline pid_t test_fork_gated_with(pid_t (*fork_fn)(void), int *ret_gate) {
        int p[2];
        pid_t pid;
        char c;

        if (pipe2(p, O_CLOEXEC) < 0)
                abort();
        pid = fork_fn();
        if (pid < 0)
                abort();
        if (pid == 0) {
                close(p[1]);
                if (read(p[0], &c, 1) != 1)
                        _exit(3);
                close(p[0]);
                return 0;
        }
        close(p[0]);
        *ret_gate = p[1];
        return pid;
}

static inline pid_t test_fork_gated(int *ret_gate) {
        return test_fork_gated_with(fork, ret_gate);
}

static inline void test_gate_open(int gate) {
        if (write(gate, "g", 1) != 1)
                abort();
        close(gate);
}

/* Pins the calling thread to the CPU it runs on; *RET_SAVED gets the
 * mask to give back to test_unpin(). The kernel reports a ring's loss
 * only with that ring's next record, so a thread that migrates mid-run
 * leaves its first CPU's count unsaid. Returns the CPU. */
static inline int test_pin(cpu_set_t *ret_saved) {
        cpu_set_t one;
        int cpu = sched_getcpu();

        if (cpu < 0 || sched_getaffinity(0, sizeof(*ret_saved), ret_saved) < 0)
                abort();
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        if (sched_setaffinity(0, sizeof(one), &one) < 0)
                abort();
        return cpu;
}

static inline void test_unpin(const cpu_set_t *saved) {
        if (sched_setaffinity(0, sizeof(*saved), saved) < 0)
                abort();
}

/* The first N CPUs this thread may run on, ascending, into CPUS; returns
 * how many it found (N at most). *RET_ALL gets the whole mask. */
static inline int test_cpus(int *cpus, int n, cpu_set_t *ret_all) {
        int k = 0;

        if (sched_getaffinity(0, sizeof(*ret_all), ret_all) < 0)
                abort();
        for (int c = 0; c < CPU_SETSIZE && k < n; c++)
                if (CPU_ISSET(c, ret_all))
                        cpus[k++] = c;
        return k;
}

/* Where the cgroup2 file system is mounted (the first such line of
 * /proc/mounts) into BUF; -ENOENT where it is not. */
static inline int test_cgroup2_mount(char *buf, size_t size) {
        FILE *f = fopen("/proc/mounts", "re");
        char dev[256], dir[4096], type[64];
        int r = -ENOENT;

        if (!f)
                return -errno;
        while (fscanf(f, "%255s %4095s %63s %*[^\n]", dev, dir, type) == 3)
                if (strcmp(type, "cgroup2") == 0) {
                        r = strlen(dir) < size ? 0 : -ENAMETOOLONG;
                        if (r == 0)
                                memcpy(buf, dir, strlen(dir) + 1);
                        break;
                }
        fclose(f);
        return r;
}

/* ROOT/DIR/NAME holding TEXT (ROOT/DIR made if need be): a file of a
 * fake /proc or state tree. Aborts on failure. */
static inline void test_put_file(const char *root, const char *dir, const char *name, const char *text) {
        char path[512];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", root, dir);
        (void) mkdir(path, 0755);
        snprintf(path, sizeof(path), "%s/%s/%s", root, dir, name);
        f = fopen(path, "we");
        if (!f)
                abort();
        fputs(text, f);
        fclose(f);
}
