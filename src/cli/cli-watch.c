/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
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

#include "cli.h"

/* evmonctl watch: subscribe, and print evmond's lines as they come. */

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

int cmd_watch(char **events) {
        _cleanup_(jbuf_donep) struct jbuf line = {};
        _cleanup_(closep) int fd = -1;
        struct watch w = {};
        int r;

        w.terminal = isatty(STDOUT_FILENO);
        if (arg_json < 0)
                arg_json = !w.terminal;
        human_init(&w.view, color_flags());
        {
                size_t n = 0;

                while (events && events[n])
                        n++;
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
                w.subscribing = true;
        }
        /* Full buffering on a pipe: lines reach the reader in big writes. */
        if (arg_json && !w.terminal)
                setvbuf(stdout, NULL, _IOFBF, 1 << 16);
        r = read_lines(fd, true, on_watch_line, &w);
        human_done(&w.view);
        if (r > 0)
                return stdout_done(1);  /* the subscription refused */
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
