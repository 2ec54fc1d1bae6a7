/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "daemon.h"
#include "evmon/cleanup.h"
#include "evmon/connect.h"
#include "evmon/log.h"

#define EXIT_CONFIG 2

static void help(void) {
        printf("Usage: evmond [OPTIONS]\n"
               "\n"
               "Streams kernel and user-space events (tracepoints, kprobes, uprobes, and\n"
               "software, hardware, cache, raw, breakpoint and PMU perf events) to\n"
               "clients of a Unix socket as JSON lines, each with the process and\n"
               "container it came from (config \"context\"). Runs in the foreground.\n"
               "\n"
               "  -c, --config FILE    config file (default %s;\n"
               "                       without it, a built-in config that watches exec,\n"
               "                       exit and fork)\n"
               "  -s, --socket PATH    socket path (overrides socket.path)\n"
               "  -t, --tracefs DIR    tracefs directory (default: from /proc/mounts)\n"
               "      --check-config   validate the config and its events, then exit\n"
               "                       (0, or 2 with a message naming file, line and key)\n"
               "      --cleanup        remove the probes (in tracefs) and the metrics file a\n"
               "                       killed evmond of this config (or --socket) left,\n"
               "                       then exit; refuses while that evmond runs (the\n"
               "                       unit's ExecStopPost=)\n"
               "  -v, --verbose        log debug messages\n"
               "  -h, --help           show this help\n"
               "      --version        show the version\n",
               CONFIG_DEFAULT_PATH);
}

/* --cleanup: the probes a killed evmond left. */
static int run_cleanup(struct daemon *d) {
        _cleanup_(freep) char *error = NULL;
        unsigned n, m;
        int r;

        r = daemon_cleanup(d, &n, &m, &error);
        if (m > 0)
                log_info("Removed %u metrics file%s (%s, or a write's temporary beside it) left by an evmond "
                         "that did not stop cleanly", m, m == 1 ? "" : "s", d->config->metrics_path);
        if (r < 0) {
                log_error("%s", error ?: strerror(-r));
                daemon_done(d);
                return r == -EINVAL || r == -ENOENT ? EXIT_CONFIG : EXIT_FAILURE;
        }
        if (n == 0)
                log_info("No probe of group %s was left: nothing to remove", d->probes.group);
        else
                log_info("Removed %u probe%s of group %s left by an evmond that did not stop cleanly",
                         n, n == 1 ? "" : "s", d->probes.group);
        daemon_done(d);
        return 0;
}

/* --check-config, after daemon_prepare(): the kernel judges probes and
 * filters only when they are opened, so each is opened once, disabled,
 * and closed again. */
static int run_check(struct daemon *d) {
        _cleanup_(freep) char *error = NULL;
        int r;

        r = daemon_check_open(d, &error);
        if (r < 0) {
                log_error("%s", error ?: strerror(-r));
                daemon_done(d);
                return r == -EINVAL ? EXIT_CONFIG : EXIT_FAILURE;
        }
        printf("%s: OK, %zu event%s\n", d->config->path, d->n_events, d->n_events == 1 ? "" : "s");
        daemon_done(d);
        return 0;
}

/* Events × CPUs × targets fds: take the hard limit (we poll with epoll,
 * so fds above 1024 are fine). */
static void raise_nofile(void) {
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
                rl.rlim_cur = rl.rlim_max;
                (void) setrlimit(RLIMIT_NOFILE, &rl);
        }
}

enum { MODE_RUN, MODE_CHECK, MODE_CLEANUP };

/* The command line into ARGS and *RET_MODE; > 0 when done (help,
 * version: exit 0), or an exit status < 0 negated. */
static int parse_argv(int argc, char **argv, struct daemon_args *args, int *ret_mode) {
        enum { ARG_CHECK = 0x100, ARG_CLEANUP, ARG_VERSION };
        static const struct option options[] = {
                { "config", required_argument, NULL, 'c' },
                { "socket", required_argument, NULL, 's' },
                { "tracefs", required_argument, NULL, 't' },
                { "check-config", no_argument, NULL, ARG_CHECK },
                { "cleanup", no_argument, NULL, ARG_CLEANUP },
                { "verbose", no_argument, NULL, 'v' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                {}
        };
        int c;

        while ((c = getopt_long(argc, argv, "c:s:t:vh", options, NULL)) >= 0)
                switch (c) {
                case 'c':
                        if (!*optarg) {
                                fprintf(stderr, "evmond: --config takes a file name, not \"\"; try 'evmond --help'.\n");
                                return -EXIT_CONFIG;
                        }
                        args->config_path = optarg;
                        break;
                case 's':
                        args->socket_path = optarg;
                        break;
                case 't':
                        if (!*optarg) {
                                fprintf(stderr, "evmond: --tracefs takes a directory, not \"\"; try 'evmond --help'.\n");
                                return -EXIT_CONFIG;
                        }
                        args->tracefs_dir = optarg;
                        break;
                case ARG_CHECK:
                case ARG_CLEANUP:
                        /* The one given last won without a word. */
                        if (*ret_mode != MODE_RUN && *ret_mode != (c == ARG_CHECK ? MODE_CHECK : MODE_CLEANUP)) {
                                fprintf(stderr, "evmond: --check-config and --cleanup are two runs: give one; "
                                        "try 'evmond --help'.\n");
                                return -EXIT_CONFIG;
                        }
                        *ret_mode = c == ARG_CHECK ? MODE_CHECK : MODE_CLEANUP;
                        break;
                case 'v':
                        log_set_max_level(LOG_DEBUG);
                        break;
                case 'h':
                        help();
                        return 1;
                case ARG_VERSION:
                        printf("evmond %s\n", EVMON_VERSION);
                        return 1;
                default:
                        fprintf(stderr, "Try 'evmond --help'.\n");
                        return -EXIT_CONFIG;
                }
        if (optind < argc) {
                fprintf(stderr, "evmond: unexpected argument \"%s\"; try 'evmond --help'.\n", argv[optind]);
                return -EXIT_CONFIG;
        }
        if (args->socket_path && (args->socket_path[0] != '/' || strlen(args->socket_path) > EVMON_SOCKET_PATH_MAX)) {
                fprintf(stderr, "evmond: --socket \"%s\" must be an absolute path shorter than %zu bytes\n",
                        args->socket_path, EVMON_SOCKET_PATH_MAX + 1);
                return -EXIT_CONFIG;
        }
        return 0;
}

int main(int argc, char **argv) {
        struct daemon d = {};
        _cleanup_(freep) char *error = NULL;
        int mode = MODE_RUN, r;

        log_setup("evmond");
        r = parse_argv(argc, argv, &d.args, &mode);
        if (r != 0)
                return r > 0 ? 0 : -r;

        if (mode == MODE_CLEANUP)
                return run_cleanup(&d);

        /* Everything a config can get wrong is found here, before any perf
         * fd is opened. */
        d.check_only = mode == MODE_CHECK;
        r = daemon_prepare(&d, &error);
        if (r < 0) {
                if (error)
                        log_error("%s", error);
                else
                        log_error_errno(r, "Failed to load the config: %m");
                daemon_done(&d);
                /* EISDIR, EFBIG: --config names a directory, or no config
                 * file (config_load()). */
                return r == -EINVAL || r == -ENOENT || r == -EOPNOTSUPP || r == -EISDIR || r == -EFBIG ? EXIT_CONFIG
                                                                                                        : EXIT_FAILURE;
        }
        if (mode == MODE_CHECK)
                return run_check(&d);

        raise_nofile();
        r = daemon_start(&d);
        if (r >= 0)
                r = daemon_run(&d);
        daemon_done(&d);
        /* What only opening the events finds (a filter the kernel rejects)
         * is still the config's fault: exit as --check-config does. */
        return r < 0 ? (r == -EINVAL ? EXIT_CONFIG : EXIT_FAILURE) : 0;
}
