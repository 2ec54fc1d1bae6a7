/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A client's request line, parsed: no I/O, no daemon state, so the fuzz
 * target (tests/fuzz/fuzz-request.c) drives exactly what evmond runs on
 * every line a client sends. */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <json-c/json.h>

#include "aggregate.h"

enum request_type {
        REQUEST_SUBSCRIBE,
        REQUEST_STATUS,
        REQUEST_AGGREGATE,
        REQUEST_FLUSH,
        REQUEST_RELOAD,
        REQUEST_ADD,
        REQUEST_REMOVE,
        REQUEST_ENABLE,
        REQUEST_DISABLE,
        REQUEST_FILTER,
        _REQUEST_TYPE_MAX,
};

/* The most entries a subscription's comms, containers or cgroups may
 * hold: each comm and container entry is tried on every line the client
 * could get, and each cgroup's subtree is walked as it subscribes. */
#define REQUEST_LIST_MAX 64u
/* The longest "client" name, in bytes. */
#define REQUEST_CLIENT_NAME_MAX 64u

struct request {
        enum request_type type;
        /* subscribe: each list NULL when not given (everything). */
        char **events;                /* names or fnmatch patterns */
        bool has_pids;
        pid_t *pids;
        size_t n_pids;
        char **cgroups;               /* as the client wrote them; an empty list matches nothing */
        char **comms;                 /* fnmatch(3) patterns of the process's comm */
        char **containers;            /* container ids or their leading digits, or name patterns */
        char **namespaces;            /* fnmatch(3) patterns of the pod's namespace */
        bool format_perf;             /* "format":"perf": the events as a perf pipe-mode stream */
        bool self;                    /* "self": true: evmond's clients' own events too */
        bool stack_bytes;             /* "stack_bytes": true: sampled user stacks' bytes (base64) too */
        char *client;                 /* "client": the client's name, sanitized; NULL: not given */
        /* Runtime control: enable and disable take events (NULL: all). */
        json_object *entry;           /* add: the event, as a config entry */
        char *name;                   /* remove, filter: the event's wire name */
        char *filter;                 /* filter: the new filter, "" clears it; subscribe: its own filter */
        /* aggregate: besides events and the filters above (for latency,
         * events are value's start and end). */
        struct agg_spec agg;
        bool final;                   /* flush: the last line */
};

/* The request's "type", as the wire names it. */
const char *request_type_to_string(enum request_type t);
/* Root and socket.admin_group only. */
static inline bool request_is_control(enum request_type t) {
        return t == REQUEST_RELOAD || t >= REQUEST_ADD;
}

/* Parses LINE (LEN bytes, without its '\n'; trailing '\r' and spaces are
 * ignored). Returns 1 and fills *ret, 0 for an empty line, -EINVAL with
 * *ret_error the message for the client (ret->type then the request's
 * type when it was known, else _REQUEST_TYPE_MAX), or -ENOMEM. */
int request_parse(const char *line, size_t len, struct request *ret, char **ret_error);
void request_done(struct request *req);
