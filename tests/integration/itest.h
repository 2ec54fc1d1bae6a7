/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Helpers for integration tests: run the real evmond on a temporary socket
 * and talk to it as a client would. Those every test may use (the gated
 * fork, CPU pinning, meson's environment) are in tests/test-util.h. */

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../test-util.h"

#define ITEST_SKIP 77

/* Exits 77 with REASON on stderr when we are not root or tracefs lacks
 * the events the tests need (each "system/name"). */
void itest_require(const char *const *events);

struct itest_daemon {
        pid_t pid;
        char dir[64];
        char config[128];
        char socket[128];
        char log[128];            /* evmond's stderr, when opts.log_to_file */
};

struct itest_daemon_opts {
        /* evmond's stderr goes to LOG in the temporary directory. */
        bool log_to_file;
        /* Run in front of evmond, e.g. {"setpriv", "--bounding-set=...", "--", NULL};
         * it must exec evmond in the same process. */
        const char *const *wrapper;
};

/* Writes CONFIG_JSON to a file in a fresh directory and starts evmond on a
 * socket there; waits until it accepts connections. */
int itest_daemon_start(struct itest_daemon *d, const char *config_json);
/* The same, with OPTS (NULL for none). */
int itest_daemon_start_opts(struct itest_daemon *d, const char *config_json, const struct itest_daemon_opts *opts);
/* SIGTERM; returns the exit status (or -1 when it did not exit in 10 s). */
int itest_daemon_stop(struct itest_daemon *d);
/* Stops it if running and removes its files. */
void itest_daemon_cleanup(struct itest_daemon *d);
const char *itest_build_path(const char *rel, char *buf, size_t size);

struct itest_client {
        int fd;
        char buf[1 << 20];
        size_t len;
};

int itest_client_connect(struct itest_client *c, const char *socket);
void itest_client_close(struct itest_client *c);
int itest_client_send(struct itest_client *c, const char *line);
/* Next line parsed, or NULL after TIMEOUT_MS or at EOF. Caller puts it. */
json_object *itest_client_next(struct itest_client *c, int timeout_ms);
/* Next line of TYPE, skipping others. */
json_object *itest_client_expect(struct itest_client *c, const char *type, int timeout_ms);
/* Asks evmond for its status on C and returns the line (the caller puts
 * it); NULL when none came within TIMEOUT_MS. */
json_object *itest_client_status(struct itest_client *c, int timeout_ms);
/* Starts D with CONFIG_JSON and connects C to it, its hello read: 0, or
 * -1 when one of those failed. */
int itest_session_start(struct itest_daemon *d, struct itest_client *c, const char *config_json);

/* Reads raw bytes until nothing came for QUIET_MS (or MAX_MS passed), as a
 * fast client would, and returns them NUL-terminated (caller frees): whole
 * lines only, a line cut off by MAX_MS stays in C for the next read. */
char *itest_client_slurp(struct itest_client *c, int quiet_ms, int max_ms, size_t *ret_len);
/* Puts the lines this program's clients read where the schema test reads
 * them ($EVMON_LINES_DIR/NAME[-ARG].jsonl); done at exit, or earlier by a
 * program that reads them itself. Lines read later are not kept. */
void itest_lines_finish(void);
/* Calls FN for each parsed line of TEXT; aborts on a line that is not JSON. */
void itest_for_each_line(const char *text, size_t len, void (*fn)(json_object *o, void *ud), void *ud);

const char *itest_str(json_object *o, const char *key);
int64_t itest_int(json_object *o, const char *key);
/* A "dropped" line's "lost": the records its dropped lost lines told of (0
 * when absent). */
int64_t itest_dropped_lost(json_object *o);

/* Runs ARGV (argv[0] a path or a name in $PATH) with stdout and stderr
 * into one NUL-terminated text (caller frees); kills it after TIMEOUT_MS.
 * Returns its exit status, 128+signal, or -errno. */
int itest_run(const char *const *argv, int timeout_ms, char **ret_output);

/* fork() for anything a test starts (evmond, perf, workloads): the child
 * gets SIGTERM when the test process ends, however it ends (a failed
 * assertion, a crash), so nothing it started outlives it and holds the
 * test run (meson waits for every holder of the test's stderr). */
pid_t itest_fork(void);

/* Forks a child that waits until itest_release(*ret_gate), then makes N
 * calls of syscall NR with ARG and exits 0. */
pid_t itest_spawn_calls(long nr, long arg, int n, int *ret_gate);
void itest_release(int gate);
/* Timeslices PID has run (/proc/PID/schedstat): each wakeup of an event
 * loop is one. RET_RUN_NS, when not NULL, gets its CPU time. */
uint64_t itest_timeslices(pid_t pid, uint64_t *ret_run_ns);
/* The CPU time (user + system) PID has used, in ms, from /proc/PID/stat. */
int64_t itest_cpu_ms(pid_t pid);
/* Waits for PID; aborts unless it exited 0. */
void itest_reap(pid_t pid);
/* Spawns a child making N calls of NR(ARG), lets it go, reads C until
 * quiet for 500 ms, reaps it and tallies what C got into *T (which the
 * caller then owns: itest_tally_done()). Returns the child's pid. */
struct itest_tally;
pid_t itest_tally_calls(struct itest_client *c, long nr, long arg, int n, struct itest_tally *t);

/* Events counted per (pid, event name), and the loss lines, as a client
 * saw them. Feed it with itest_for_each_line(text, len, itest_tally_line, t). */
struct itest_tally {
        struct itest_tally_row {
                pid_t pid;
                char event[96];
                int64_t n;
        } *rows;
        size_t n_rows;
        int64_t events, lost, dropped, errors, configs;
};
void itest_tally_line(json_object *o, void *userdata);
/* PID 0 counts every pid, EVENT NULL every event. */
int64_t itest_tally_get(const struct itest_tally *t, pid_t pid, const char *event);
/* Events from pids not in PIDS (N of them). */
int64_t itest_tally_others(const struct itest_tally *t, const pid_t *pids, size_t n);
void itest_tally_done(struct itest_tally *t);
