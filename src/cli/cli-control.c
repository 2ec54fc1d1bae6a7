/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
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

/* The one-shot requests: status and reload, and runtime control (add,
 * remove, enable, disable, filter); each prints evmond's answer. */

struct request {
        const char *type;
        int status;
        bool quiet;             /* the answer not printed, only a refusal */
};

static int on_reply_line(const char *line, size_t len, void *ud) {
        struct request *req = ud;
        _cleanup_(json_object_putp) json_object *o = parse_line(line, len);
        const char *type = line_type(o);
        json_object *ok;

        if (strcmp(type, EVMON_LINE_ERROR) == 0) {
                json_object *e;
                json_object_object_get_ex(o, "error", &e);
                log_error("evmond says: %s", e ? json_object_get_string(e) : "?");
                req->status = 1;
                return 1;
        }
        if (strcmp(type, req->type) != 0)
                return 0;
        /* Text on a terminal; the JSON where a program reads it (a pipe,
         * --json), as it always was; nothing when quiet (watch --add). */
        if (!req->quiet && arg_json <= 0 && isatty(STDOUT_FILENO))
                human_object(stdout, o, color_flags());
        else if (!req->quiet)
                puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                               JSON_C_TO_STRING_NOSLASHESCAPE));
        if (json_object_object_get_ex(o, "ok", &ok) && !json_object_get_boolean(ok)) {
                json_object *e = NULL;

                /* The reason on stderr too, where a failing command puts
                 * it (a script keeps stdout). */
                json_object_object_get_ex(o, "error", &e);
                log_error("evmond at %s refused the %s: %s", socket_path(), req->type,
                          e ? json_object_get_string(e) : "no reason given");
                req->status = 1;
        }
        return 1;
}

/* Sends LINE on FD and prints the answer of REQ's type; the exit status. */
static int send_and_answer(int fd, const struct jbuf *line, struct request *req, const char *what) {
        static const char *const none[] = { NULL };
        _cleanup_(jbuf_donep) struct jbuf both = {};
        int r;

        /* A subscription to no event first: without one evmond sends a
         * client every event (doc/protocol.md), which a one-shot request
         * would read past, megabytes of them on a busy host, to its
         * answer. */
        char client[64];

        snprintf(client, sizeof(client), "evmonctl-%s", req->type);
        if (encode_subscribe_full(&both, &(const struct encode_subscribe) { .events = none, .client = client }) < 0 ||
            jbuf_reserve(&both, line->len) < 0)
                return log_oom_cli();
        jbuf_put_bytes(&both, line->data, line->len);
        if (send_line(fd, both.data, both.len, what) < 0)
                return 1;
        r = read_lines(fd, false, on_reply_line, req);
        if (r <= 0)
                return read_lines_failed(r, what);
        return stdout_done(req->status);
}

int cmd_request(const char *type) {
        _cleanup_(closep) int fd = -1;
        _cleanup_(jbuf_donep) struct jbuf line = {};
        struct request req = { .type = type };

        if (encode_request(&line, type) < 0)
                return log_oom_cli();
        fd = connect_daemon();
        if (fd < 0)
                return 1;
        return send_and_answer(fd, &line, &req, type);
}

int control_quiet(const char *type, const char *entry, const char *event) {
        _cleanup_(closep) int fd = -1;
        _cleanup_(jbuf_donep) struct jbuf line = {};
        struct request req = { .type = EVMON_LINE_RESULT, .quiet = true };
        int r;

        r = encode_control(&line, type, entry, event, NULL, NULL, 0);
        if (r < 0)
                return log_oom_cli();
        fd = connect_daemon();
        if (fd < 0)
                return 1;
        r = send_and_answer(fd, &line, &req, type);
        return r;
}

/* Runtime control: TYPE with its arguments; the result line printed. */
int cmd_control(const char *type, char **args, int n) {
        _cleanup_(closep) int fd = -1;
        _cleanup_(jbuf_donep) struct jbuf line = {};
        struct request req = { .type = EVMON_LINE_RESULT };
        bool add = strcmp(type, EVMON_REQUEST_ADD) == 0, filter = strcmp(type, EVMON_REQUEST_FILTER) == 0;
        bool many = strcmp(type, EVMON_REQUEST_ENABLE) == 0 || strcmp(type, EVMON_REQUEST_DISABLE) == 0;
        int r;

        r = encode_control(&line, type, add ? args[0] : NULL, !add && !many ? args[0] : NULL,
                           filter ? args[1] : NULL, many && n > 0 ? (const char *const *) args : NULL, (size_t) n);
        if (r == -EINVAL) {
                log_error("add: \"%s\" is not a JSON object such as '{\"tracepoint\":\"sched:sched_switch\"}'", args[0]);
                return 2;
        }
        if (r < 0)
                return log_oom_cli();
        r = request_too_long(&line, type);
        if (r != 0)
                return r;
        fd = connect_daemon();
        if (fd < 0)
                return 1;
        return send_and_answer(fd, &line, &req, type);
}
