/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A client's request line, parsed: no I/O, no daemon state, so the fuzz
 * target (tests/fuzz/fuzz-request.c) drives exactly what evmond runs on
 * every line a client sends. */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum request_type {
        REQUEST_SUBSCRIBE,
        REQUEST_STATUS,
        REQUEST_RELOAD,
        _REQUEST_TYPE_MAX,
};

struct request {
        enum request_type type;
        /* subscribe: each list NULL when not given (everything). */
        char **events;                /* names or fnmatch patterns */
        bool has_pids;
        pid_t *pids;
        size_t n_pids;
        char **cgroups;               /* as the client wrote them; an empty list matches nothing */
        char **comms;                 /* fnmatch(3) patterns of the process's comm */
        char **containers;            /* container ids or their leading digits */
};

/* Parses LINE (LEN bytes, without its '\n'; trailing '\r' and spaces are
 * ignored). Returns 1 and fills *ret, 0 for an empty line, -EINVAL with
 * *ret_error the message for the client, or -ENOMEM. */
int request_parse(const char *line, size_t len, struct request *ret, char **ret_error);
void request_done(struct request *req);
