/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "evmon/cleanup.h"
#include "evmon/encode.h"
#include "evmon/human.h"
#include "evmon/io.h"
#include "evmon/jsonc.h"
#include "evmon/log.h"
#include "evmon/protocol.h"
#include "evmon/strv.h"

#include "cli.h"

/* evmonctl watch: subscribe, and print evmond's lines as they come. */

static int watch_run(char **events);

struct watch {
        bool subscribing;       /* subscribed, awaiting the answer */
        bool terminal;          /* stdout is one */
        struct human view;
};

static int on_watch_line(const char *line, size_t len, void *ud) {
        struct watch *w = ud;
        _cleanup_(json_object_putp) json_object *o = NULL;

        if (w->subscribing || !arg_json)
                o = parse_line(line, len);
        if (w->subscribing) {
                const char *type = line_type(o);
                json_object *e;

                /* Until evmond has taken the subscription it sends this
                 * client everything (no subscription yet): none of those
                 * events is what was asked for. Schema lines stay: evmond
                 * sends one per event and client, not again after the
                 * subscription. */
                if (strcmp(type, EVMON_LINE_ERROR) == 0) {
                        json_object_object_get_ex(o, "error", &e);
                        log_error("evmond says: %s", e ? json_object_get_string(e) : "?");
                        return 1;
                }
                if (strcmp(type, EVMON_LINE_SUBSCRIBED) == 0)
                        w->subscribing = false;
                else if (strcmp(type, EVMON_LINE_HELLO) != 0 && strcmp(type, EVMON_LINE_SCHEMA) != 0)
                        return 0;
        }
        if (arg_json) {
                if (w->terminal) {
                        /* --json on a terminal: the same JSON, its C1
                         * controls escaped. */
                        human_put_json(stdout, line, len);
                        if (fflush(stdout) == EOF)
                                return errno > 0 ? -errno : -EIO;
                } else if (fwrite(line, 1, len, stdout) != len)
                        return errno > 0 ? -errno : -EIO;
                return 0;
        }
        if (o)
                human_line(&w->view, stdout, o);
        if (fflush(stdout) == EOF)
                return errno > 0 ? -errno : -EIO;
        return 0;
}

static void on_stop_signal(int sig) {
        cli_stop = 1;
}

/* watch --add: each event named (not a pattern) that evmond does not
 * serve is added for this watch, as `evmonctl add` would (root and
 * socket.admin_group only: evmond says so to anyone else). The names
 * added go in *RET, for remove_added(). 0, or the exit status. */
static int add_missing(char **events, char ***ret) {
        _cleanup_(strv_freep) char **served = NULL, **added = NULL;
        size_t n = 0, n_added = 0;
        int r;

        while (events && events[n])
                n++;
        added = calloc(n + 1, sizeof(char *));
        if (!added)
                return log_oom_cli();
        r = daemon_served(&served);
        if (r != 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                char entry[320];

                if (strpbrk(events[i], "*?[") || strv_contains(served, events[i]))
                        continue;
                if (encode_add_entry(events[i], entry, sizeof(entry)) < 0) {
                        log_error("watch --add: \"%s\" does not say what to add (a probe wants its target): add it "
                                  "with evmonctl add '{\"kprobe\":\"SYMBOL\",\"name\":\"NAME\"}' or the like "
                                  "(evmond.json(5)), then watch it", events[i]);
                        *ret = TAKE_PTR(added);
                        return 1;
                }
                r = control_quiet(EVMON_REQUEST_ADD, entry, NULL);
                if (r != 0) {
                        *ret = TAKE_PTR(added);
                        return r;
                }
                added[n_added] = strdup(events[i]);
                if (!added[n_added]) {
                        *ret = TAKE_PTR(added);
                        return log_oom_cli();
                }
                n_added++;
                log_info("Added %s for this watch (%s).", events[i],
                         arg_keep ? "--keep: it stays" : "removed when the watch ends; --keep keeps it");
        }
        *ret = TAKE_PTR(added);
        return 0;
}

/* What add_missing() added, removed again (unless --keep). A second
 * stop signal cuts this short. */
static int remove_added(char **added) {
        int status = 0;

        cli_stop = 0;
        for (char **a = added; a && *a && !arg_keep; a++)
                if (control_quiet(EVMON_REQUEST_REMOVE, NULL, *a) != 0)
                        status = 1;
        return status;
}

int cmd_watch(char **events) {
        _cleanup_(strv_freep) char **added = NULL;
        int r;

        if (arg_add) {
                /* A stop signal ends the watch, not the process: what it
                 * added is removed first. */
                struct sigaction sa = { .sa_handler = on_stop_signal };

                sigemptyset(&sa.sa_mask);
                (void) sigaction(SIGINT, &sa, NULL);
                (void) sigaction(SIGTERM, &sa, NULL);
                (void) sigaction(SIGHUP, &sa, NULL);
                r = add_missing(events, &added);
                if (r == 0)
                        r = watch_run(events);
                return remove_added(added) ?: r;
        }
        return watch_run(events);
}

static int watch_run(char **events) {
        _cleanup_(jbuf_donep) struct jbuf line = {};
        _cleanup_(closep) int fd = -1;
        struct watch w = {};
        bool narrowed;
        int r;

        w.terminal = isatty(STDOUT_FILENO);
        if (arg_json < 0)
                arg_json = !w.terminal;
        human_init(&w.view, color_flags());
        {
                size_t n = 0;

                while (events && events[n])
                        n++;
                narrowed = n > 0 || n_pids > 0 || n_comms > 0 || n_cgroups > 0 || n_containers > 0 ||
                           n_namespaces > 0 || arg_filter || arg_self;
                /* Always a subscribe: it names this client in evmond's
                 * metrics, whatever it narrows. */
                if (encode_subscribe_full(&line, &(const struct encode_subscribe) {
                                .events = n > 0 ? (const char *const *) events : NULL, .n_events = n,
                                .pids = n_pids > 0 ? arg_pids : NULL, .n_pids = n_pids,
                                .cgroups = n_cgroups > 0 ? arg_cgroups : NULL, .n_cgroups = n_cgroups,
                                .comms = n_comms > 0 ? arg_comms : NULL, .n_comms = n_comms,
                                .containers = n_containers > 0 ? arg_containers : NULL, .n_containers = n_containers,
                                .namespaces = n_namespaces > 0 ? arg_namespaces : NULL, .n_namespaces = n_namespaces,
                                .self = arg_self,
                                .client = "evmonctl-watch",
                                .filter = arg_filter,
                        }) < 0)
                        return log_oom_cli();
                r = request_too_long(&line, "watch");
                if (r != 0)
                        return r;
        }
        fd = connect_daemon();
        if (fd < 0)
                return 1;
        if (line.len > 0) {
                if (send_line(fd, line.data, line.len, EVMON_REQUEST_SUBSCRIBE) < 0)
                        return 1;
                /* A watch of everything takes what comes before the
                 * answer too: it is what it asked for. */
                w.subscribing = narrowed;
        }
        /* Full buffering on a pipe: lines reach the reader in big writes. */
        if (arg_json && !w.terminal)
                setvbuf(stdout, NULL, _IOFBF, 1 << 16);
        r = read_lines(fd, true, on_watch_line, &w);
        human_done(&w.view);
        if (r > 0)
                return stdout_done(1);  /* the subscription refused */
        if (r == -EINTR)
                return stdout_done(0);  /* a stop signal, with --add */
        if (r == -ECONNRESET) {
                /* What came before the end is printed before the word
                 * about it. */
                r = stdout_done(0);
                if (r != 0)
                        return r;
                return read_lines_failed(-ECONNRESET, NULL);
        }
        return read_lines_failed(r, NULL);
}
