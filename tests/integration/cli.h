/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What the test-cli-* programs share (cli.c): each runs the built evmond,
 * evmonctl and evmon-forward as a user would and checks what they print
 * and how they exit. */

#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cmocka.h>

#define NOBODY 65534

extern char evmond[PATH_MAX], evmonctl[PATH_MAX], forward[PATH_MAX], tree[PATH_MAX], source_root[PATH_MAX], build_root[PATH_MAX];
/* This run's own temp dir (mode 0755), removed by cli_run(). */
extern char tmpdir[64];

enum {
        RUN_NOBODY = 1 << 0,   /* drop to nobody first when we are root */
        RUN_PTY = 1 << 1,      /* stdout and stderr on a terminal (spawn only) */
};

struct child {
        pid_t pid;
        int out;        /* stdout (pipe, or the pty master) */
        int err;        /* stderr pipe, -1 with RUN_PTY */
        char buf[1 << 16];
        size_t len;
};

struct result {
        int status;     /* exit status, 128 + signal, or -1 on timeout */
        char *out, *err;
};

/* CLOCK_MONOTONIC in ms. */
uint64_t now_ms(void);

/* Starts ARGV with stdout and stderr on pipes (or a terminal: RUN_PTY). */
void spawn(struct child *c, unsigned flags, char *const argv[]);

/* Waits for the child; -1 after TIMEOUT_MS (it is killed then). */
int child_wait(struct child *c, int timeout_ms);

/* Kills the child if it still runs and closes its pipes. */
void child_close(struct child *c);

/* Appends N bytes of DATA to the NUL-terminated *S of *LEN bytes. */
void append(char **s, size_t *len, const char *data, size_t n);

/* Runs ARGV to its end (180 s at most: test_install_layout's ninja builds
 * evmond, evmonctl, evmon-forward and the man pages from scratch, which
 * took over 60 s on the shared 2-CPU host) and collects stdout and
 * stderr. */
void runv(struct result *r, unsigned flags, char *const argv[]);

/* runv() on ARG0 and the arguments after it, up to NULL. */
void run(struct result *r, unsigned flags, const char *arg0, ...) __attribute__((sentinel));

/* Frees what runv() collected. */
void result_done(struct result *r);

/* Fails with WHAT, both outputs and the status unless it is STATUS. */
void expect_status(const struct result *r, int status, const char *what);

/* The next line of the child's stdout without its end (caller frees), or
 * NULL after TIMEOUT_MS or at EOF. */
char *child_line(struct child *c, int timeout_ms);

/* NAME's path in $PATH into BUF. */
bool find_program(const char *name, char *buf, size_t size);

/* The whole file (caller frees), or NULL. */
char *read_file(const char *path);

/* TEXT into PATH, mode 0644, or fail. */
void write_file(const char *path, const char *text);

/* A config file in our temp dir (readable by nobody). */
const char *config_file(const char *name, const char *text);

/* rm -rf DIR, unless DIR is "". */
void rm_rf(const char *dir);

/* SIGPIPE ignored; the paths from $EVMON_SOURCE_ROOT and $EVMON_BUILD_ROOT
 * (exits 1 without them); a fresh tmpdir. */
void cli_setup(void);
/* Runs the group NAME of N TESTS, removes tmpdir, returns cmocka's answer. */
int cli_run(const char *name, const struct CMUnitTest *tests, size_t n);
