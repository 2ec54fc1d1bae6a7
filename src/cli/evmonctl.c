/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "evmon/cleanup.h"
#include "evmon/connect.h"
#include "evmon/human.h"
#include "evmon/log.h"
#include "evmon/parse.h"
#include "evmon/protocol.h"

#include "cli.h"

const char *arg_socket;
const char *arg_tracefs;
int arg_json = -1;  /* -1: JSON when stdout is not a terminal */
bool arg_all;
bool arg_folded;
const char *arg_order;   /* decode --order; NULL: time */
const char *arg_color;   /* --color: auto (NULL), always or never */
bool arg_no_symbols;     /* decode --no-symbols */
const char *arg_containers[ARG_LIST_MAX], *arg_namespaces[ARG_LIST_MAX];
size_t n_containers, n_namespaces;
pid_t arg_pids[ARG_LIST_MAX];
const char *arg_comms[ARG_LIST_MAX], *arg_cgroups[ARG_LIST_MAX];
size_t n_pids, n_comms, n_cgroups;
bool arg_self;
bool arg_served;
const char *arg_filter;
bool arg_add, arg_keep;

static void help(FILE *f) {
        fprintf(f, "Usage: evmonctl COMMAND [OPTIONS]\n"
               "\n"
               "Commands that talk to evmond:\n"
               "  watch [EVENT...]       print events as they happen (all, or those named;\n"
               "                         patterns such as 'syscalls:*' work); exits 1 when\n"
               "                         evmond refuses an EVENT or closes the connection\n"
               "  top [EVENT...]         a live table of the events' rate by a key (--by:\n"
               "                         comm, the default, pid, cgroup, container, exe,\n"
               "                         event, ...), sorted by rate, every --interval s;\n"
               "                         keys: s/tab sort, k key, e event, q quit\n"
               "  count EVENT...         count events in evmond, by --by keys; printed at\n"
               "                         Ctrl-C, every --interval or after --seconds, as\n"
               "                         bpftrace prints @[key]: N (smallest first)\n"
               "  hist EVENT FIELD       a log2 histogram of FIELD (--linear: linear)\n"
               "  latency START END      a log2 histogram of the ns from START to END, the\n"
               "                         two matched on --match (tid by default)\n"
               "  status                 events with counts, lost per CPU, clients\n"
               "  reload                 make evmond read its config again; exits 1 when\n"
               "                         the new config is refused (the old one stays)\n"
               "  add JSON               serve one more event, given as a config entry\n"
               "                         ('{\"tracepoint\":\"sched:sched_switch\"}')\n"
               "  remove EVENT           stop serving EVENT\n"
               "  enable [EVENT...]      enable events (names or patterns; all when none)\n"
               "  disable [EVENT...]     disable events; they stay served, silent\n"
               "  record -o FILE [EVENT...]\n"
               "                         write the events (all, or those named) as perf's\n"
               "                         own records, a perf.data file that perf script,\n"
               "                         perf report and evmonctl decode read (-o -: the\n"
               "                         pipe-mode stream as it comes); until interrupted\n"
               "                         or --seconds N\n"
               "  filter EVENT FILTER    set EVENT's ftrace filter ('' clears it)\n"
               "                         (add ... filter: root and socket.admin_group only;\n"
               "                         a reload or restart serves the config file again)\n"
               "  profile                sample stacks (a served software:cpu-clock, or for\n"
               "                         root and socket.admin_group one added for the session\n"
               "                         and removed after) and write them folded for flame\n"
               "                         graphs (\"comm;root;...;leaf N\"), or as an SVG flame\n"
               "                         graph: --seconds N (default: until Ctrl-C), --pid P,\n"
               "                         --cgroup C, --freq F (added event's; default 999),\n"
               "                         --event E, --format folded|svg|pprof, -o FILE\n"
               "\n"
               "Commands that read tracefs directly (no daemon needed):\n"
               "  list                   the events this kernel has, as perf list shows\n"
               "                         them: tracepoints as SYSTEM:NAME, then software:,\n"
               "                         hardware:, cache: and pmu: events as the config\n"
               "                         names them (pmu:msr/tsc/)\n"
               "  describe EVENT         one event's decoder as JSON (SYSTEM:NAME, or\n"
               "                         KIND:NAME for a perf event: its attr and the\n"
               "                         sample fields its lines carry)\n"
               "\n"
               "Commands that read files:\n"
               "  decode FILE|-          a perf.data file (perf record -o FILE, or pipe-mode\n"
               "                         output on standard input: perf record -o - | evmonctl\n"
               "                         decode -) as JSON lines: first {\"type\":\"header\"} with\n"
               "                         the file's feature sections (host, CPUs, events,\n"
               "                         ...), then each sample as evmond's event line\n"
               "                         (tracepoint fields decoded with the formats the file\n"
               "                         carries) and {\"type\":\"lost\"} per PERF_RECORD_LOST.\n"
               "                         Either byte order, perf record -z data, the directory\n"
               "                         perf record --threads writes. \"time\" is\n"
               "                         wall-clock only when the file has a clock reference\n"
               "                         (perf record -k mono); otherwise it is \"ts\" counted\n"
               "                         from 1970. A damaged file gives every record before\n"
               "                         the damage, then an error naming its offset (exit 1).\n"
               "                         Callchain frames are named as perf script names them\n"
               "                         (\"syms\": function+offset and object), from this\n"
               "                         host's kallsyms when the file's kernel build id is\n"
               "                         the running kernel's, and from the mapped files at\n"
               "                         their recorded paths where device and inode still\n"
               "                         match (read by the sandboxed evmon-symbolizer); each\n"
               "                         sample names its thread's comm (\"proc\")\n"
               "                         --folded: the samples' stacks folded instead, as\n"
               "                         profile writes them (--format, -o FILE too)\n"
               "\n"
               "Options:\n"
               "  -s, --socket PATH      evmond's socket (default $EVMON_SOCKET, or\n"
               "                         %s)\n"
               "  -t, --tracefs DIR      tracefs directory (default: from /proc/mounts)\n"
               "  -j, --json             JSON even on a terminal (watch, describe, status and\n"
               "                         the other answers of evmond; text there otherwise)\n"
               "      --color WHEN       colour on a terminal: auto (the default: not when\n"
               "                         $NO_COLOR is set), always or never\n"
               "      --container C      watch, count, hist, latency, top: events of container\n"
               "                         C only: its id, its first\n"
               "                         digits, or its name as its runtime keeps it (a\n"
               "                         pattern such as 'payments-*'; names only where the\n"
               "                         runtime's state verifies them); repeatable\n"
               "      --namespace NS     watch, count, hist, latency, top: events of\n"
               "                         Kubernetes namespace NS only (a\n"
               "                         pattern); repeatable\n"
               "      --pid PID          watch, count, hist, latency, top: events of process PID\n"
               "                         only; repeatable\n"
               "      --comm COMM        watch, count, hist, latency, top: events of processes\n"
               "                         whose comm matches COMM (a pattern such as\n"
               "                         'nginx*'); repeatable\n"
               "      --cgroup PATH      watch, count, hist, latency, top: events of cgroup PATH\n"
               "                         (below /sys/fs/cgroup) and those below it; repeatable\n"
               "      --filter EXPR      watch, count, hist, latency, top: only events EXPR\n"
               "                         holds for, evaluated in evmond for this client\n"
               "                         alone: FIELD OP VALUE joined by && and ||, OP\n"
               "                         one of == != < <= > >= ~ (glob), FIELD\n"
               "                         an event field or pid, tid, cpu, comm, cgroup,\n"
               "                         container ('fd > 2 && comm ~ \"ngin*\"')\n"
               "      --add              watch: add each EVENT named that evmond does not\n"
               "                         serve, for this watch (root and socket.admin_group\n"
               "                         only), and remove it when the watch ends\n"
               "      --keep             watch --add: leave what it added served\n"
               "      --self             watch, count, hist, latency, top: evmond's clients'\n"
               "                         own events too (evmond leaves them out:\n"
               "                         doc/protocol.md)\n"
               "      --served           list: the events evmond serves (its hello), those\n"
               "                         watch takes, not this kernel's\n"
               "      --all              decode: also one JSON line per other record: the\n"
               "                         kernel's (mmap2, comm, fork, ...) and perf's own\n"
               "                         (header_attr, finished_round, ...) with their fields\n"
               "      --order ORDER      decode: time (perf's order, the default), causal\n"
               "                         (each round sorted as it ends) or file (as stored)\n"
               "      --no-symbols       decode: no names for callchain frames\n"
               "      --by KEY           count, hist, latency: one entry per KEY: pid, tid,\n"
               "                         comm, exe, uid, cgroup, container, cpu, event,\n"
               "                         field:NAME, stack, kstack, ustack, frame; up to 4\n"
               "                         (top: the first, the key of its rows; default comm)\n"
               "      --linear MIN,MAX,STEP  hist: linear buckets, as bpftrace's lhist()\n"
               "      --match KEY        latency: what ties END to START: tid, pid, field:NAME\n"
               "      --interval S       count, hist, latency: print every S seconds; top:\n"
               "                         refresh every S seconds (default 1)\n"
               "      --seconds N        count, hist, latency: print once after N seconds, exit;\n"
               "                         profile: sample for N seconds; record: stop after N\n"
               "                         seconds\n"
               "      --top N            count, hist, latency: the N biggest entries only\n"
               "      --pid P, --cgroup C  profile: samples of process P, or of cgroup C\n"
               "      --freq F           profile: sample F times a second (an event added\n"
               "                         for the session; a served one keeps its own)\n"
               "      --event E          profile: sample with the served event E\n"
               "      --format FORMAT    profile, decode --folded: folded (default), svg\n"
               "                         (a flame graph) or pprof (gzipped protobuf)\n"
               "  -o, --output FILE      profile, decode --folded, record: write to FILE\n"
               "                         (record: - for standard output)\n"
               "  -h, --help             show this help\n"
               "      --version          show the version\n",
               EVMON_SOCKET_PATH_DEFAULT);
}

unsigned color_flags(void) {
        unsigned flags = 0;

        (void) human_color_flags(arg_color, isatty(STDOUT_FILENO), &flags);
        return flags;
}

int log_oom_cli(void) {
        log_oom();
        return 1;
}

/* Standard output could not take what we wrote: quiet when its reader
 * went away (`evmonctl watch | head -1`), else said (a full disk,
 * /dev/full). The exit status. */
int stdout_failed(int err) {
        /* A pipe whose reader closed polls POLLERR: that, not errno
         * (which later calls may have changed since the write that
         * failed), says the reader went away. */
        struct pollfd p = { .fd = STDOUT_FILENO };

        if (err == EPIPE || (poll(&p, 1, 0) > 0 && (p.revents & (POLLERR | POLLHUP))))
                return 0;
        log_error("cannot write to standard output: %s", strerror(err));
        return 1;
}

/* Flushes standard output at the end of a command; STATUS, or what
 * stdout_failed() says when it could not take everything. */
int stdout_done(int status) {
        if (fflush(stdout) == EOF || ferror(stdout))
                return stdout_failed(errno > 0 ? errno : EIO) ?: status;
        return status;
}

static int run_watch(char **args, int n) {
        return cmd_watch(args);
}

static int run_count(char **args, int n) {
        return cmd_aggregate("count", args, n);
}

static int run_hist(char **args, int n) {
        return cmd_aggregate("hist", args, n);
}

static int run_latency(char **args, int n) {
        return cmd_aggregate("latency", args, n);
}

static int run_top(char **args, int n) {
        return cmd_top(args);
}

static int run_status(char **args, int n) {
        return cmd_request(EVMON_REQUEST_STATUS);
}

static int run_reload(char **args, int n) {
        return cmd_request(EVMON_REQUEST_RELOAD);
}

static int run_add(char **args, int n) {
        return cmd_control(EVMON_REQUEST_ADD, args, n);
}

static int run_remove(char **args, int n) {
        return cmd_control(EVMON_REQUEST_REMOVE, args, n);
}

static int run_enable(char **args, int n) {
        return cmd_control(EVMON_REQUEST_ENABLE, args, n);
}

static int run_disable(char **args, int n) {
        return cmd_control(EVMON_REQUEST_DISABLE, args, n);
}

static int run_filter(char **args, int n) {
        return cmd_control(EVMON_REQUEST_FILTER, args, n);
}

static int run_list(char **args, int n) {
        return stdout_done(cmd_list());
}

static int run_describe(char **args, int n) {
        return stdout_done(cmd_describe(args[0]));
}

static int run_record(char **args, int n) {
        return cmd_record(args, arg_output, arg_seconds);
}

static int run_decode(char **args, int n) {
        return cmd_decode(args[0], arg_order ?: "time");
}

static int run_profile(char **args, int n) {
        return cmd_profile();
}

/* The commands, and the arguments each takes: a usage error names the
 * command and what it takes. */
static const struct command {
        const char *name;
        int min_args, max_args;
        const char *args;       /* what it takes, for the usage error */
        bool decode;            /* takes --all, --order and --no-symbols */
        int (*run)(char **args, int n);
} commands[] = {
        { "watch", 0, INT_MAX, "EVENT names or patterns", false, run_watch },
        { "count", 1, INT_MAX, "EVENT names or patterns", false, run_count },
        { "hist", 2, 2, "one EVENT and one FIELD", false, run_hist },
        { "latency", 2, 2, "a START and an END event", false, run_latency },
        { "top", 0, INT_MAX, "EVENT names or patterns", false, run_top },
        { "status", 0, 0, "no argument", false, run_status },
        { "reload", 0, 0, "no argument", false, run_reload },
        { EVMON_REQUEST_ADD, 1, 1, "one JSON config entry, such as '{\"tracepoint\":\"sched:sched_switch\"}'", false, run_add },
        { EVMON_REQUEST_REMOVE, 1, 1, "one EVENT", false, run_remove },
        { EVMON_REQUEST_ENABLE, 0, INT_MAX, "EVENT names or patterns (none: all)", false, run_enable },
        { EVMON_REQUEST_DISABLE, 0, INT_MAX, "EVENT names or patterns (none: all)", false, run_disable },
        { EVMON_REQUEST_FILTER, 2, 2, "EVENT and FILTER ('' clears the filter)", false, run_filter },
        { "list", 0, 0, "no argument", false, run_list },
        { "describe", 1, 1, "one EVENT, SYSTEM:NAME or KIND:NAME (`evmonctl list` shows them)", false, run_describe },
        { "decode", 1, 1, "one FILE (- for standard input)", true, run_decode },
        { "profile", 0, 0, "no argument (options: --seconds, --pid, --format, ...)", false, run_profile },
        { "record", 0, INT_MAX, "EVENT names or patterns", false, run_record },
};

/* An option of profile alone was given: its name. */
static const char *profile_option;

enum {
        ARG_PID = 0x100,
        ARG_CGROUP,
        ARG_FREQ,
        ARG_EVENT,
        ARG_FORMAT,
        ARG_FOLDED,
        ARG_COMM,
        ARG_SELF,
        ARG_SERVED,
        ARG_FILTER,
        ARG_ADD,
        ARG_KEEP,
};

/* --pid's argument: a process id, as evmond takes them (1 ... INT_MAX). */
static int parse_pid_arg(const char *s, pid_t *ret) {
        char *end;
        long v;

        errno = 0;
        v = strtol(s, &end, 10);
        if (errno != 0 || end == s || *end || v <= 0 || v > INT_MAX)
                return -EINVAL;
        *ret = (pid_t) v;
        return 0;
}

/* The options: -1 to go on with the command, or the exit code (help,
 * version, a usage error). */
static int parse_argv(int argc, char **argv) {
        static const struct option options[] = {
                { "socket", required_argument, NULL, 's' },
                { "tracefs", required_argument, NULL, 't' },
                { "json", no_argument, NULL, 'j' },
                { "help", no_argument, NULL, 'h' },
                { "all", no_argument, NULL, 'A' },
                { "order", required_argument, NULL, 'O' },
                { "no-symbols", no_argument, NULL, 'Y' },
                { "container", required_argument, NULL, 'C' },
                { "namespace", required_argument, NULL, 'N' },
                { "comm", required_argument, NULL, ARG_COMM },
                { "self", no_argument, NULL, ARG_SELF },
                { "served", no_argument, NULL, ARG_SERVED },
                { "filter", required_argument, NULL, ARG_FILTER },
                { "add", no_argument, NULL, ARG_ADD },
                { "keep", no_argument, NULL, ARG_KEEP },
                { "version", no_argument, NULL, 'V' },
                /* count, hist, latency (cli-aggregate.c) */
                { "by", required_argument, NULL, 'b' },
                { "linear", required_argument, NULL, 'L' },
                { "match", required_argument, NULL, 'M' },
                { "interval", required_argument, NULL, 'I' },
                { "seconds", required_argument, NULL, 'S' },
                { "top", required_argument, NULL, 'T' },
                { "pid", required_argument, NULL, ARG_PID },
                { "cgroup", required_argument, NULL, ARG_CGROUP },
                { "freq", required_argument, NULL, ARG_FREQ },
                { "event", required_argument, NULL, ARG_EVENT },
                { "format", required_argument, NULL, ARG_FORMAT },
                { "output", required_argument, NULL, 'o' },
                { "folded", no_argument, NULL, ARG_FOLDED },
                { "color", required_argument, NULL, 'c' },
                {}
        };
        int c;
        uint64_t u;

        while ((c = getopt_long(argc, argv, "s:t:jho:", options, NULL)) >= 0)
                switch (c) {
                case 's':
                        if (!*optarg) {
                                log_error("--socket takes the path of evmond's socket, not \"\"; try 'evmonctl --help'.");
                                return 2;
                        }
                        arg_socket = optarg;
                        break;
                case 't':
                        if (!*optarg) {
                                log_error("--tracefs takes a directory, not \"\"; try 'evmonctl --help'.");
                                return 2;
                        }
                        arg_tracefs = optarg;
                        break;
                case 'j':
                        arg_json = 1;
                        break;
                case 'h':
                        help(stdout);
                        return stdout_done(0);
                case 'A':
                        arg_all = true;
                        break;
                case 'V':
                        printf("evmonctl %s\n", EVMON_VERSION);
                        return 0;
                case 'O':
                        arg_order = optarg;
                        break;
                case 'c':
                        if (strcmp(optarg, "auto") != 0 && strcmp(optarg, "always") != 0 && strcmp(optarg, "never") != 0) {
                                log_error("--color takes auto, always or never, not \"%s\"; try 'evmonctl --help'.", optarg);
                                return 2;
                        }
                        arg_color = optarg;
                        break;
                case 'Y':
                        arg_no_symbols = true;
                        break;
                case 'C':
                case 'N':
                        if (!*optarg || (c == 'C' ? n_containers : n_namespaces) >= ARG_LIST_MAX) {
                                log_error("--%s takes a non-empty name, at most %d times; try 'evmonctl --help'.",
                                          c == 'C' ? "container" : "namespace", ARG_LIST_MAX);
                                return 2;
                        }
                        if (c == 'C')
                                arg_containers[n_containers++] = optarg;
                        else
                                arg_namespaces[n_namespaces++] = optarg;
                        break;
                case 'b':
                        if (!*optarg || n_by >= ARG_BY_MAX) {
                                log_error("--by takes a key (pid, tid, comm, exe, uid, cgroup, container, cpu, event, "
                                          "field:NAME, stack, kstack, ustack, frame), at most %d times; try "
                                          "'evmonctl --help'.", ARG_BY_MAX);
                                return 2;
                        }
                        arg_by[n_by++] = optarg;
                        break;
                case 'L':
                        arg_linear = optarg;
                        break;
                case 'M':
                        arg_match = optarg;
                        break;
                case 'I':
                case 'S':
                case 'T': {
                        char *end;
                        double v = strtod(optarg, &end);

                        if (!*optarg || *end || !(v > 0 || (c == 'T' && v == 0)) || v > 86400 * 365 ||
                            (c == 'T' && v != (long) v) || (c == 'I' && v < 0.01)) {
                                log_error("--%s takes %s, not \"%s\"; try 'evmonctl --help'.",
                                          c == 'I' ? "interval" : c == 'S' ? "seconds" : "top",
                                          c == 'T' ? "a number of entries (0: all)" : c == 'I' ?
                                          "seconds (at least 0.01)" : "seconds", optarg);
                                return 2;
                        }
                        if (c == 'I')
                                arg_interval = v;
                        else if (c == 'S')
                                arg_seconds = v;
                        else
                                arg_top = (long) v;
                        break;
                }
                case ARG_PID:
                        /* watch, count, hist, latency: any of them;
                         * profile: one (the first). */
                        if (n_pids >= ARG_LIST_MAX || parse_pid_arg(optarg, &arg_pids[n_pids]) < 0) {
                                log_error("--pid takes a process id (a number from 1), at most %d times, not "
                                          "\"%s\"; try 'evmonctl --help'.", ARG_LIST_MAX, optarg);
                                return 2;
                        }
                        if (n_pids++ == 0)
                                arg_profile_pid = arg_pids[0];
                        break;
                case ARG_FREQ:
                        if (parse_u64(optarg, &u) < 0 || u == 0 || u > 100000) {
                                log_error("--freq takes samples a second, 1 to 100000, not \"%s\".", optarg);
                                return 2;
                        }
                        arg_freq = (unsigned) u;
                        profile_option = "freq";
                        break;
                case ARG_EVENT:
                        if (!*optarg) {
                                log_error("--event takes a name, not \"\".");
                                return 2;
                        }
                        arg_event = optarg;
                        profile_option = "event";
                        break;
                case ARG_FORMAT:
                        arg_format = optarg;
                        break;
                case 'o':
                        arg_output = optarg;
                        break;
                case ARG_FOLDED:
                        arg_folded = true;
                        break;
                case ARG_COMM:
                case ARG_CGROUP:
                        if (!*optarg || (c == ARG_COMM ? n_comms : n_cgroups) >= ARG_LIST_MAX) {
                                log_error("--%s takes a non-empty %s, at most %d times; try 'evmonctl --help'.",
                                          c == ARG_COMM ? "comm" : "cgroup",
                                          c == ARG_COMM ? "comm pattern" : "cgroup path", ARG_LIST_MAX);
                                return 2;
                        }
                        if (c == ARG_COMM)
                                arg_comms[n_comms++] = optarg;
                        else if (n_cgroups++ == 0)
                                arg_cgroups[0] = arg_profile_cgroup = optarg;
                        else
                                arg_cgroups[n_cgroups - 1] = optarg;
                        break;
                case ARG_SELF:
                        arg_self = true;
                        break;
                case ARG_SERVED:
                        arg_served = true;
                        break;
                case ARG_FILTER:
                        if (arg_filter) {
                                log_error("--filter is given once: join the conditions with && or ||; try "
                                          "'evmonctl --help'.");
                                return 2;
                        }
                        arg_filter = optarg;
                        break;
                case ARG_ADD:
                        arg_add = true;
                        break;
                case ARG_KEEP:
                        arg_keep = true;
                        break;
                default:
                        log_error("Try 'evmonctl --help'.");
                        return 2;
                }
        return -1;
}

/* Runs command CMD with its N arguments ARGS. */
static int dispatch(const char *cmd, char **args, int n) {
        for (size_t i = 0; i < ELEMENTSOF(commands); i++) {
                const struct command *k = &commands[i];

                if (strcmp(cmd, k->name) != 0)
                        continue;
                if (n < k->min_args) {
                        log_error("%s takes %s: %d given; try 'evmonctl --help'.", cmd, k->args, n);
                        return 2;
                }
                if (n > k->max_args) {
                        log_error("%s takes %s, not also \"%s\"; try 'evmonctl --help'.", cmd, k->args,
                                  args[k->max_args]);
                        return 2;
                }
                bool profile = strcmp(k->name, "profile") == 0;

                if (profile && (n_pids > 1 || n_cgroups > 1 || (n_pids > 0 && n_cgroups > 0))) {
                        log_error("profile takes one --pid or one --cgroup; try 'evmonctl --help'.");
                        return 2;
                }

                if (!profile && profile_option) {
                        log_error("--%s is an option of profile, not of %s; try 'evmonctl --help'.",
                                  profile_option, cmd);
                        return 2;
                }
                bool record = strcmp(k->name, "record") == 0;

                if (!profile && !arg_folded && (arg_format || (arg_output && !record))) {
                        log_error("--%s is an option of profile and decode --folded; try 'evmonctl --help'.",
                                  arg_format ? "format" : "output");
                        return 2;
                }
                if (!k->decode && arg_folded) {
                        log_error("--folded is an option of decode, not of %s; try 'evmonctl --help'.", cmd);
                        return 2;
                }
                if (!k->decode && (arg_all || arg_order || arg_no_symbols)) {
                        log_error("--%s is an option of decode, not of %s; try 'evmonctl --help'.",
                                  arg_all ? "all" : arg_order ? "order" : "no-symbols", cmd);
                        return 2;
                }
                return k->run(args, n);
        }
        log_error("unknown command \"%s\"; the commands are watch, top, count, hist, latency, status, reload, add, remove, enable, "
                  "disable, filter, profile, list, describe, decode and record (evmonctl --help says more).", cmd);
        return 2;
}

int main(int argc, char **argv) {
        int r;

        log_setup("evmonctl");
        signal(SIGPIPE, SIG_IGN);
        /* A closed standard fd (`evmonctl status >&-`) would be the next
         * one opened: the socket took fd 1, and status wrote its answer
         * back into it, exit 0, nothing said. /dev/null read-only in its
         * place makes a write there fail as a closed one does (EBADF),
         * which is said. */
        for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++)
                if (fcntl(fd, F_GETFD) < 0 && errno == EBADF && open("/dev/null", O_RDONLY) != fd)
                        return 1;
        r = parse_argv(argc, argv);
        if (r >= 0)
                return r;
        if (optind >= argc) {
                /* A usage error: the help goes where errors go. */
                help(stderr);
                return 2;
        }
        return dispatch(argv[optind], argv + optind + 1, argc - optind - 1);
}
