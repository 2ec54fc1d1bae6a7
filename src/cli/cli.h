/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What evmonctl's files share: the options main() parsed, the output
 * helpers, the connection to evmond (cli-connect.c), and each group's
 * commands, which return the exit status. */

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <json-c/json.h>

struct jbuf;

extern const char *arg_socket;
extern const char *arg_tracefs;
extern int arg_json;            /* -1: JSON when stdout is not a terminal */
extern bool arg_all;
extern bool arg_no_symbols;
extern const char *arg_order;   /* decode --order; NULL: time */
extern const char *arg_color;   /* --color: auto (NULL), always or never */
#define ARG_LIST_MAX 64         /* evmond takes 64 entries per subscribe list */
extern const char *arg_containers[ARG_LIST_MAX], *arg_namespaces[ARG_LIST_MAX];  /* watch */
extern size_t n_containers, n_namespaces;
extern pid_t arg_pids[ARG_LIST_MAX];                                    /* watch --pid */
extern const char *arg_comms[ARG_LIST_MAX], *arg_cgroups[ARG_LIST_MAX];  /* watch --comm, --cgroup */
extern size_t n_pids, n_comms, n_cgroups;
extern bool arg_self;                                                   /* watch --self */
extern bool arg_served;                                                 /* list --served */
extern const char *arg_filter;                                          /* watch --filter */
extern bool arg_add, arg_keep;                                          /* watch --add, --keep */

/* evmonctl.c */
int log_oom_cli(void);
/* The colour flags (HUMAN_COLOR or 0) for standard output, as --color
 * and $NO_COLOR say. */
unsigned color_flags(void);
int stdout_failed(int err);
int stdout_done(int status);

/* cli-connect.c */
/* Set by a signal handler that wants read_lines() to end (-EINTR) rather
 * than the process to die: watch --add removes what it added first. */
extern volatile sig_atomic_t cli_stop;
const char *socket_path(void);
int connect_daemon(void);
json_object *parse_line(const char *line, size_t len);
const char *line_type(json_object *o);
int read_lines(int fd, bool watch_stdout, int (*fn)(const char *line, size_t len, void *ud), void *ud);
int read_lines_failed(int r, const char *what);
int request_too_long(const struct jbuf *line, const char *what);
int send_line(int fd, const char *line, size_t n, const char *what);

/* cli-watch.c */
int cmd_watch(char **events);

/* cli-aggregate.c: count, hist, latency and their options. */
#define ARG_BY_MAX 4            /* evmond takes 4 keys */
extern const char *arg_by[ARG_BY_MAX];
extern size_t n_by;
extern const char *arg_linear, *arg_match;
extern double arg_interval, arg_seconds;
extern long arg_top;            /* -1: not given */
int cmd_aggregate(const char *what, char **args, int n);
/* Creates or truncates PATH for writing, MODE when new, never through a
 * symbolic link; the fd, or a negative errno, said. */
int create_output(const char *path, mode_t mode);
/* Adds the narrowing options (--container, --namespace, --comm, --cgroup,
 * --pid, --filter, --self) and the client's name "evmonctl-WHAT" to the
 * aggregate request REQ: count, hist, latency and top alike. -ENOMEM. */
int agg_request_narrow(json_object *req, const char *what);

/* cli-top.c */
int cmd_top(char **events);

/* cli-control.c */
int cmd_request(const char *type);
int cmd_control(const char *type, char **args, int n);
/* TYPE (add: ENTRY, remove: EVENT) with no output but errors: 0, or 1
 * when it failed (said). */
int control_quiet(const char *type, const char *entry, const char *event);

/* cli-list.c */
int cmd_list(void);
/* The events evmond serves (its hello's), in *RET; 0, or 1 (said). */
int daemon_served(char ***ret);
int cmd_describe(const char *event);

/* cli-record.c */
int cmd_record(char **events, const char *output, double seconds);
/* cli-decode.c */
int cmd_decode(const char *path, const char *order);

/* cli-profile.c */
struct flame;
extern pid_t arg_profile_pid;   /* profile --pid; 0: none */
extern const char *arg_profile_cgroup, *arg_event, *arg_format, *arg_output;
extern unsigned arg_freq;
extern bool arg_folded;         /* decode --folded */

/* cli-fold.c */
/* Folds event line LINE (LEN bytes) of EVENT (NULL: any) into F: its
 * sample's callchain root first, after its comm ("proc"'s, else COMM,
 * else "[pid N]"); frames named by their "syms" (function without offset,
 * else "[object]"), else their address. *RET_CALLCHAIN says whether it had
 * one (else the sample's ip is the stack). 1 when it is no line of EVENT,
 * -EBADMSG when it is not well-formed, else flame_add()'s return. */
int profile_fold_line(struct flame *f, const char *line, size_t len, const char *event, const char *comm,
                      bool *ret_callchain);
/* "name+0xoff" → "name", in place (the last "+0x": a name may hold one). */
void profile_strip_offset(char *name);
int profile_check_format(const char *format);
/* Writes F in FORMAT (folded, svg, pprof) to -o's file or standard
 * output; TIME_NS and DURATION_NS (0: unknown) for pprof. The exit status. */
int profile_write(const struct flame *f, const char *format, const char *title, const char *subtitle,
                  int64_t time_ns, int64_t duration_ns);

/* cli-pprof.c */
/* Writes F as a gzipped pprof profile (profile.proto) to OUT; 0 or -errno. */
int profile_write_pprof(const struct flame *f, FILE *out, int64_t time_ns, int64_t duration_ns);
int cmd_profile(void);
