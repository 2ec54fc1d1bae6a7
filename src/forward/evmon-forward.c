/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* evmon-forward: a client of evmond that publishes every line it gets to
 * NATS (into a JetStream stream when one is named, waiting for each
 * publish acknowledgement), and with --read the reader of what such
 * forwarders published, from any machine. This file holds the options
 * and main(); forward.h says where the rest lives. */
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "evmon/connect.h"
#include "evmon/protocol.h"
#include "evmon/jsonc.h"
#include "evmon/log.h"
#include "url.h"
#include "forward.h"

const char *arg_socket;
char *arg_nats;
/* --nats split into its URLs, each checked (url.c). */
char **arg_nats_urls;
size_t arg_n_nats_urls;
/* --nats for the log: user, password or token in a URL become "***". */
char nats_shown[1024];
char arg_host[256];
const char *arg_stream;
bool arg_create;
int arg_replicas = 1;
int64_t arg_max_age_s;
int64_t arg_max_bytes_mib;
size_t arg_buffer_mib = 64;
unsigned arg_in_flight = 1024;
size_t arg_batch_kib = 64;
char **arg_events;
int arg_n_events;
/* --pid and --cgroup, each at most one per argument (room for argc). */
pid_t *arg_pids;
const char **arg_cgroups;
size_t arg_n_pids, arg_n_cgroups;
bool arg_read;
int arg_json = -1;
bool arg_no_follow;
bool arg_new;
bool arg_host_given;

/* Copies the URLs in IN (comma-separated) into BUF with what comes
 * before the last '@' in each (nats://USER:PASSWORD@HOST,
 * nats://TOKEN@HOST) replaced by "***": the journal is no place for
 * credentials. The last, as libnats splits them: a password may hold
 * an '@'. */
void urls_redact(const char *in, char *buf, size_t size) {
        size_t o = 0;

        for (const char *p = in; *p && o + 1 < size;) {
                const char *end = p + strcspn(p, ", "), *at = NULL;
                const char *scheme = strstr(p, "://"), *host = p;

                for (const char *q = end; q > p && !at; q--)
                        if (q[-1] == '@')
                                at = q - 1;

                if (at) {
                        size_t keep = scheme && scheme < at ? (size_t) (scheme + 3 - p) : 0;

                        o += (size_t) snprintf(buf + o, size - o, "%.*s***", (int) keep, p);
                        host = at;
                }
                if (o + 1 < size)
                        o += (size_t) snprintf(buf + o, size - o, "%.*s", (int) (end - host + (*end ? 1 : 0)), host);
                p = *end ? end + 1 : end;
        }
        buf[o < size ? o : size - 1] = '\0';
}

/* Overwrites, in place, the credentials in the URLs of IN (what comes
 * before the last '@' of each, after "://") with '*'. IN is the --nats
 * argument in our argv, which any local user reads in /proc/PID/cmdline
 * (ps -ef): the unit passes the URLs there. Call once the URLs are copied
 * (nats_urls_parse() does). */
static void urls_scrub(char *in) {
        for (char *p = in; *p;) {
                char *end = p + strcspn(p, ", "), *scheme = strstr(p, "://"), *at = NULL;

                for (char *q = end; q > p && !at; q--)
                        if (q[-1] == '@')
                                at = q - 1;
                if (at)
                        for (char *q = scheme && scheme < at ? scheme + 3 : p; q < at; q++)
                                *q = '*';
                p = *end ? end + 1 : end;
        }
}

/* Set on SIGTERM/SIGINT: the forwarder drains its queue and exits. */
volatile sig_atomic_t stop;


/* Options with --nats' servers, every one of them (it took the first 16). */
natsStatus nats_options_new(natsOptions **ret) {
        natsStatus st;

        if (arg_n_nats_urls == 0 || arg_n_nats_urls > INT_MAX)
                return NATS_INVALID_ARG;
        st = natsOptions_Create(ret);
        if (st == NATS_OK)
                st = natsOptions_SetServers(*ret, (const char **) arg_nats_urls, (int) arg_n_nats_urls);
        if (st == NATS_OK)
                st = natsOptions_SetName(*ret, arg_read ? "evmon-forward --read" : "evmon-forward");
        return st;
}

static void on_stop_signal(int sig) {
        stop = 1;
}

static void help(void) {
        printf("Usage: evmon-forward [OPTIONS] --nats URL[,URL...] [EVENT...]\n"
               "       evmon-forward --read --nats URL[,URL...] [--host H] [--stream NAME] [EVENT...]\n"
               "\n"
               "Publishes every line evmond sends (all events, or those named; patterns\n"
               "such as 'syscalls:*' work) to NATS on evmon.HOST.SYSTEM.NAME (events) and\n"
               "evmon.HOST._.TYPE (lost, dropped, config, forwarder, ... lines), each line\n"
               "with \"host\" added. With --stream, into that JetStream stream, waiting for\n"
               "each acknowledgement; a Nats-Msg-Id header makes a repeated publish count\n"
               "once. While NATS is down or slow, lines wait in a buffer; what does not fit\n"
               "is dropped, counted and said in a {\"type\":\"dropped\",\"source\":\"evmon-forward\"}\n"
               "line. Reconnects to NATS and to evmond by itself.\n"
               "\n"
               "Options:\n"
               "  -s, --socket PATH      evmond's socket (default $EVMON_SOCKET or %s)\n"
               "  -n, --nats URLS        NATS servers, comma-separated (nats://host:4222,...);\n"
               "                         one that is no such URL is refused (exit status 2)\n"
               "  -H, --host NAME        the host part of the subjects (default: the host name)\n"
               "  -S, --stream NAME      publish into this JetStream stream, acknowledged\n"
               "  -c, --create           make the stream (subjects evmon.>, file storage,\n"
               "                         limits retention) when it does not exist\n"
               "  -r, --replicas N       the stream's replicas with --create (default 1)\n"
               "      --max-age SECONDS  with --create: keep lines this long (default: no limit)\n"
               "      --max-bytes MIB    with --create: keep at most this much (default: no limit)\n"
               "  -b, --buffer-mib N     lines waiting for NATS, at most (default 64)\n"
               "      --in-flight N      publishes awaiting acknowledgement, at most (default 1024)\n"
               "      --batch-kib N      lines of one subject per message, up to N KiB (default 64;\n"
               "                         0: one line per message)\n"
               "  -p, --pid PID          only events of PID (and its children), repeatable\n"
               "  -g, --cgroup PATH      only events of tasks in the cgroup, repeatable\n"
               "\n"
               "Reader (--read): prints what forwarders published, as `evmonctl watch` does\n"
               "(JSON lines when stdout is not a terminal or with --json):\n"
               "      --read             read instead of forwarding\n"
               "  -H, --host NAME        only this host's lines (default: every host)\n"
               "  -S, --stream NAME      read the stream from its start (live subjects without)\n"
               "      --new              with --stream: only lines stored from now on\n"
               "      --no-follow        stop when caught up (or after 2 s without lines)\n"
               "  -j, --json             JSON lines even on a terminal\n"
               "  -h, --help             show this help\n",
               EVMON_SOCKET_PATH_DEFAULT);
}

static int parse_int(const char *s, const char *opt, long long min, long long max, long long *ret) {
        char *end;
        long long v;

        errno = 0;
        v = strtoll(s, &end, 10);
        if (errno || end == s || *end || v < min || v > max) {
                log_error("%s: not a number from %lld to %lld: %s", opt, min, max, s);
                return -EINVAL;
        }
        *ret = v;
        return 0;
}

enum { OPT_MAX_AGE = 0x100, OPT_MAX_BYTES, OPT_IN_FLIGHT, OPT_BATCH_KIB, OPT_READ, OPT_NO_FOLLOW, OPT_NEW };

static int parse_option(int c, char *arg) {
        long long v;

        switch (c) {
        case 's':
                arg_socket = arg;
                break;
        case 'n':
                arg_nats = arg;
                break;
        case 'H':
                if (!*arg || strlen(arg) >= sizeof(arg_host)) {
                        log_error("--host: a name of 1 to %zu bytes, not \"%s\"", sizeof(arg_host) - 1, arg);
                        return -EINVAL;
                }
                strcpy(arg_host, arg);
                arg_host_given = true;
                break;
        case 'S':
                arg_stream = arg;
                break;
        case 'c':
                arg_create = true;
                break;
        case 'r':
                if (parse_int(arg, "--replicas", 1, 5, &v) < 0)
                        return -EINVAL;
                arg_replicas = (int) v;
                break;
        case OPT_MAX_AGE:
                if (parse_int(arg, "--max-age", 0, INT64_MAX / 1000000000, &v) < 0)
                        return -EINVAL;
                arg_max_age_s = v;
                break;
        case OPT_MAX_BYTES:
                if (parse_int(arg, "--max-bytes", 0, 1LL << 40, &v) < 0)
                        return -EINVAL;
                arg_max_bytes_mib = v;
                break;
        case 'b':
                if (parse_int(arg, "--buffer-mib", 1, 1 << 16, &v) < 0)
                        return -EINVAL;
                arg_buffer_mib = (size_t) v;
                break;
        case OPT_IN_FLIGHT:
                if (parse_int(arg, "--in-flight", 1, 1 << 16, &v) < 0)
                        return -EINVAL;
                arg_in_flight = (unsigned) v;
                break;
        case OPT_BATCH_KIB:
                if (parse_int(arg, "--batch-kib", 0, 1024, &v) < 0)
                        return -EINVAL;
                arg_batch_kib = (size_t) v;
                break;
        case 'p':
                if (parse_int(arg, "--pid", 1, INT_MAX, &v) < 0)
                        return -EINVAL;
                arg_pids[arg_n_pids++] = (pid_t) v;
                break;
        case 'g':
                arg_cgroups[arg_n_cgroups++] = arg;
                break;
        case OPT_READ:
                arg_read = true;
                break;
        case OPT_NO_FOLLOW:
                arg_no_follow = true;
                break;
        case OPT_NEW:
                arg_new = true;
                break;
        case 'j':
                arg_json = 1;
                break;
        case 'h':
                help();
                return 1;
        default:
                return -EINVAL;
        }
        return 0;
}

/* The options into arg_*; 1 after --help, -EINVAL for a bad one. */
static int parse_argv(int argc, char **argv) {
        static const struct option options[] = {
                { "socket", required_argument, NULL, 's' },
                { "nats", required_argument, NULL, 'n' },
                { "host", required_argument, NULL, 'H' },
                { "stream", required_argument, NULL, 'S' },
                { "create", no_argument, NULL, 'c' },
                { "replicas", required_argument, NULL, 'r' },
                { "max-age", required_argument, NULL, OPT_MAX_AGE },
                { "max-bytes", required_argument, NULL, OPT_MAX_BYTES },
                { "buffer-mib", required_argument, NULL, 'b' },
                { "in-flight", required_argument, NULL, OPT_IN_FLIGHT },
                { "batch-kib", required_argument, NULL, OPT_BATCH_KIB },
                { "pid", required_argument, NULL, 'p' },
                { "cgroup", required_argument, NULL, 'g' },
                { "read", no_argument, NULL, OPT_READ },
                { "no-follow", no_argument, NULL, OPT_NO_FOLLOW },
                { "new", no_argument, NULL, OPT_NEW },
                { "json", no_argument, NULL, 'j' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        int c, r;

        arg_pids = calloc((size_t) argc, sizeof(*arg_pids));
        arg_cgroups = calloc((size_t) argc, sizeof(*arg_cgroups));
        if (!arg_pids || !arg_cgroups)
                return log_oom();
        while ((c = getopt_long(argc, argv, "s:n:H:S:cr:b:p:g:jh", options, NULL)) >= 0) {
                r = parse_option(c, optarg);
                if (r != 0)
                        return r;
        }
        arg_events = argv + optind;
        arg_n_events = argc - optind;
        return 0;
}

/* --nats: its URLs parsed, shown redacted, and scrubbed from argv. */
static int check_nats(void) {
        const char *reason = NULL, *bad = NULL;
        size_t bad_len = 0;
        char bad_copy[1024], bad_shown[1024];
        int r;

        /* An empty one too: libnats refused it with no reason to give
         * ("bad NATS options (--nats ): (null)", exit 1). */
        if (!arg_nats || !arg_nats[strspn(arg_nats, " ,")]) {
                log_error("--nats URL is required (nats://host:4222, several comma-separated)");
                return -EINVAL;
        }
        urls_redact(arg_nats, nats_shown, sizeof(nats_shown));
        /* A URL no server can ever answer is refused now: retried, it
         * looked like a server that is down, for good. */
        r = nats_urls_parse(arg_nats, &arg_nats_urls, &arg_n_nats_urls, &reason, &bad, &bad_len);
        if (r == -ENOMEM) {
                log_oom();
                return -ENOMEM;
        }
        if (r < 0 && bad_len == 0) {
                log_error("--nats names no server: give the NATS servers as nats://HOST:PORT, several "
                          "comma-separated (nats://nats1:4222,nats://nats2:4222)");
                return -EINVAL;
        }
        if (r < 0) {
                snprintf(bad_copy, sizeof(bad_copy), "%.*s", (int) bad_len, bad);
                urls_redact(bad_copy, bad_shown, sizeof(bad_shown));
                log_error("--nats: bad URL \"%s\" (%s): give the NATS servers as nats://HOST:PORT, several "
                          "comma-separated (nats://nats1:4222,nats://nats2:4222)", bad_shown, reason);
                return -EINVAL;
        }
        /* Copied: no longer for every local user to read. */
        urls_scrub(arg_nats);
        return 0;
}

static int check_stream(void) {
        if (arg_create && !arg_stream) {
                log_error("--create needs --stream NAME");
                return -EINVAL;
        }
        if (arg_stream) {
                const char *reason = NULL;

                /* JetStream refuses it for good; it was retried every
                 * second. */
                if (stream_name_check(arg_stream, &reason) < 0) {
                        _cleanup_(json_object_putp) json_object *shown = json_object_new_string(arg_stream);

                        log_error("--stream %s is no JetStream stream name (%s): give a name such as EVMON",
                                  shown ? json_object_to_json_string_ext(shown, JSON_C_TO_STRING_PLAIN |
                                                                           JSON_C_TO_STRING_NOSLASHESCAPE) : "",
                                  reason);
                        return -EINVAL;
                }
        }
        return 0;
}

int main(int argc, char **argv) {
        int r;

        log_setup("evmon-forward");
        r = parse_argv(argc, argv);
        if (r == 0)
                r = check_nats();
        if (r == 0)
                r = check_stream();
        if (r == 0 && !arg_host_given && gethostname(arg_host, sizeof(arg_host) - 1) < 0) {
                log_error_errno(errno, "cannot get the host name (%m); give --host NAME");
                r = -EINVAL;
        }
        if (r != 0) {
                free(arg_pids);
                free(arg_cgroups);
                return r > 0 ? 0 : r == -EINVAL ? 2 : 1;
        }
        arg_socket = evmon_socket_path(arg_socket);

        if (arg_read) {
                struct sigaction sa = { .sa_handler = on_stop_signal };
                sigaction(SIGINT, &sa, NULL);
                sigaction(SIGTERM, &sa, NULL);
                r = run_read();
        } else
                r = run_forward();
        free(arg_pids);
        free(arg_cgroups);
        return r < 0 ? 1 : 0;
}
