/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "request.h"
#include "evmon/error.h"
#include "evmon/jsonc.h"
#include "evmon/protocol.h"
#include "evmon/strv.h"

static const char *const request_names[_REQUEST_TYPE_MAX] = {
        [REQUEST_SUBSCRIBE] = EVMON_REQUEST_SUBSCRIBE,
        [REQUEST_STATUS] = EVMON_REQUEST_STATUS,
        [REQUEST_AGGREGATE] = EVMON_REQUEST_AGGREGATE,
        [REQUEST_FLUSH] = EVMON_REQUEST_FLUSH,
        [REQUEST_RELOAD] = EVMON_REQUEST_RELOAD,
        [REQUEST_ADD] = EVMON_REQUEST_ADD,
        [REQUEST_REMOVE] = EVMON_REQUEST_REMOVE,
        [REQUEST_ENABLE] = EVMON_REQUEST_ENABLE,
        [REQUEST_DISABLE] = EVMON_REQUEST_DISABLE,
        [REQUEST_FILTER] = EVMON_REQUEST_FILTER,
};

/* The keys each request takes beside "type": a key not listed is an
 * error naming it, for every type alike (status and reload ignored
 * them, so a typo there went unnoticed while subscribe refused it). */
static const char *const *const request_keys[_REQUEST_TYPE_MAX] = {
        [REQUEST_SUBSCRIBE] = (const char *const[]) { "events", "pids", "cgroups", "comms", "containers", "namespaces", "format", "self", "client", "filter",
                                                      "stack_bytes", NULL },
        [REQUEST_STATUS] = (const char *const[]) { NULL },
        [REQUEST_AGGREGATE] = (const char *const[]) { "events", "by", "value", "interval_ms", "cumulative", "top",
                                                      "max_keys", "pids", "cgroups", "comms", "containers",
                                                      "namespaces", "self", "client", "filter", NULL },
        [REQUEST_FLUSH] = (const char *const[]) { "final", NULL },
        [REQUEST_RELOAD] = (const char *const[]) { NULL },
        [REQUEST_ADD] = (const char *const[]) { "event", NULL },
        [REQUEST_REMOVE] = (const char *const[]) { "event", NULL },
        [REQUEST_ENABLE] = (const char *const[]) { "events", NULL },
        [REQUEST_DISABLE] = (const char *const[]) { "events", NULL },
        [REQUEST_FILTER] = (const char *const[]) { "event", "filter", NULL },
};

/* An error for the first key of MSG that request T does not take. */
static int check_keys(json_object *msg, enum request_type t, char **ret_error) {
        const char *const *keys = request_keys[t];

        json_object_object_foreach(msg, key, val) {
                bool ok = strcmp(key, "type") == 0;
                char known[256] = "";
                size_t n = 0;

                (void) val;
                for (const char *const *k = keys; !ok && *k; k++)
                        ok = strcmp(key, *k) == 0;
                if (ok)
                        continue;
                if (!keys[0])
                        return error_set(ret_error, -EINVAL, "%s: unknown key \"%s\" (%s takes no key but \"type\")",
                                         request_names[t], key, request_names[t]);
                for (const char *const *k = keys; *k && n < sizeof(known); k++)
                        n += (size_t) snprintf(known + n, sizeof(known) - n, "%s%s", k == keys ? "" : ", ", *k);
                return error_set(ret_error, -EINVAL, "%s: unknown key \"%s\" (known: %s)", request_names[t], key, known);
        }
        return 0;
}

/* An array of strings (events, cgroups) as a NULL-terminated list, of
 * MAX entries at the most (0: any number). */
static int parse_strings(json_object *v, const char *key, const char *what, size_t max, char ***ret,
                         char **ret_error) {
        _cleanup_(strv_freep) char **l = NULL;
        size_t n;

        if (!json_object_is_type(v, json_type_array))
                return error_set(ret_error, -EINVAL, "subscribe: \"%s\" must be an array of %s", key,
                                 strcmp(key, "events") == 0   ? "event names"
                                 : strcmp(key, "cgroups") == 0 ? "cgroup paths"
                                 : what);
        n = json_object_array_length(v);
        if (max > 0 && n > max)
                return error_set(ret_error, -EINVAL, "subscribe: \"%s\" has %zu entries, at most %zu are taken", key, n,
                                 max);
        l = calloc(n + 1, sizeof(char *));
        if (!l)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(v, i);

                if (!json_object_is_type(e, json_type_string))
                        return error_set(ret_error, -EINVAL, "subscribe: %s[%zu] must be %s", key, i, what);
                l[i] = strdup(json_object_get_string(e));
                if (!l[i])
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

static int parse_pids(json_object *v, struct request *req, char **ret_error) {
        size_t n;

        if (!json_object_is_type(v, json_type_array))
                return error_set(ret_error, -EINVAL, "subscribe: \"pids\" must be an array of process ids");
        n = json_object_array_length(v);
        req->pids = calloc(n ? n : 1, sizeof(pid_t));
        if (!req->pids)
                return -ENOMEM;
        req->has_pids = true;
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(v, i);
                int64_t p = json_object_get_int64(e);

                if (!json_object_is_type(e, json_type_int) || p <= 0 || p > INT_MAX)
                        return error_set(ret_error, -EINVAL, "subscribe: pids[%zu] is not a process id", i);
                req->pids[req->n_pids++] = (pid_t) p;
        }
        return 0;
}

/* "client": the name the client gives itself, a metrics label value
 * (doc/metrics.md). Bounded, and anything but [A-Za-z0-9._-] made '_',
 * so that no name can break the exposition format or a terminal. */
static int parse_client_name(json_object *v, struct request *req, char **ret_error) {
        const char *s;
        size_t n;

        if (!json_object_is_type(v, json_type_string))
                return error_set(ret_error, -EINVAL, "subscribe: \"client\" must be a string such as \"my-exporter\"");
        s = json_object_get_string(v);
        n = (size_t) json_object_get_string_len(v);
        if (n == 0 || n > REQUEST_CLIENT_NAME_MAX)
                return error_set(ret_error, -EINVAL, "subscribe: \"client\" must be 1 to %u bytes long, not %zu",
                                 REQUEST_CLIENT_NAME_MAX, n);
        req->client = strndup(s, n);
        if (!req->client)
                return -ENOMEM;
        for (char *p = req->client; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                      *p == '.' || *p == '_' || *p == '-'))
                        *p = '_';
        return 0;
}

/* A present key whose value is not null. */
static json_object *get_set(json_object *msg, const char *key) {
        json_object *v;

        if (!json_object_object_get_ex(msg, key, &v) || json_object_is_type(v, json_type_null))
                return NULL;
        return v;
}

static int get_string(json_object *msg, const char *t, const char *key, bool required, char **ret, char **ret_error);

static int parse_subscribe(json_object *msg, struct request *req, char **ret_error) {
        json_object *v;
        int r;

        if ((v = get_set(msg, "comms"))) {
                r = parse_strings(v, "comms", "a comm pattern such as \"nginx*\" (fnmatch)", REQUEST_LIST_MAX,
                                  &req->comms, ret_error);
                if (r < 0)
                        return r;
        }
        if ((v = get_set(msg, "containers"))) {
                r = parse_strings(v, "containers", "a container id, its first digits, or a container name (fnmatch)",
                                  REQUEST_LIST_MAX, &req->containers, ret_error);
                if (r < 0)
                        return r;
                for (size_t i = 0; req->containers[i]; i++)
                        if (!req->containers[i][0])
                                return error_set(ret_error, -EINVAL, "subscribe: containers[%zu] is empty", i);
        }
        if ((v = get_set(msg, "namespaces"))) {
                r = parse_strings(v, "namespaces", "a Kubernetes namespace such as \"prod\" (fnmatch)",
                                  REQUEST_LIST_MAX, &req->namespaces, ret_error);
                if (r < 0)
                        return r;
        }
        if ((v = get_set(msg, "format"))) {
                const char *f = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;

                if (!f || (strcmp(f, "json") != 0 && strcmp(f, "perf") != 0))
                        return error_set(ret_error, -EINVAL, "subscribe: \"format\" must be \"json\" (lines, the "
                                         "default) or \"perf\" (a perf pipe-mode stream, as perf record -o - writes)");
                req->format_perf = strcmp(f, "perf") == 0;
        }
        if ((v = get_set(msg, "events"))) {
                r = parse_strings(v, "events", "a string such as \"sched:sched_process_exec\"", 0, &req->events,
                                  ret_error);
                if (r < 0)
                        return r;
        }
        if ((v = get_set(msg, "pids"))) {
                r = parse_pids(v, req, ret_error);
                if (r < 0)
                        return r;
        }
        if ((v = get_set(msg, "self"))) {
                if (!json_object_is_type(v, json_type_boolean))
                        return error_set(ret_error, -EINVAL, "subscribe: \"self\" must be true or false");
                req->self = json_object_get_boolean(v);
        }
        if ((v = get_set(msg, "client"))) {
                r = parse_client_name(v, req, ret_error);
                if (r < 0)
                        return r;
        }
        if ((v = get_set(msg, "stack_bytes"))) {
                if (!json_object_is_type(v, json_type_boolean))
                        return error_set(ret_error, -EINVAL, "subscribe: \"stack_bytes\" must be true or false");
                req->stack_bytes = json_object_get_boolean(v);
        }
        r = get_string(msg, "subscribe", "filter", false, &req->filter, ret_error);
        if (r < 0)
                return r;
        if ((v = get_set(msg, "cgroups")))
                return parse_strings(v, "cgroups", "a path string", REQUEST_LIST_MAX, &req->cgroups, ret_error);
        return 0;
}

/* KEY of MSG, a string; NULL when absent and !REQUIRED. */
static int get_string(json_object *msg, const char *t, const char *key, bool required, char **ret, char **ret_error) {
        json_object *v;

        if (!json_object_object_get_ex(msg, key, &v) || json_object_is_type(v, json_type_null)) {
                if (required)
                        return error_set(ret_error, -EINVAL, "%s: \"%s\" is missing", t, key);
                return 0;
        }
        if (!json_object_is_type(v, json_type_string))
                return error_set(ret_error, -EINVAL, "%s: \"%s\" must be a string", t, key);
        *ret = strdup(json_object_get_string(v));
        return *ret ? 0 : -ENOMEM;
}

/* An unsigned integer KEY of MSG (absent: *RET unchanged), at most MAX. */
static int get_uint(json_object *msg, const char *key, uint64_t max, uint64_t *ret, char **ret_error) {
        json_object *v = get_set(msg, key);
        int64_t i;

        if (!v)
                return 0;
        i = json_object_get_int64(v);
        if (!json_object_is_type(v, json_type_int) || i < 0 || (uint64_t) i > max)
                return error_set(ret_error, -EINVAL, "aggregate: \"%s\" must be an integer from 0 to %" PRIu64, key, max);
        *ret = (uint64_t) i;
        return 0;
}

/* A key as "by" and "match" name them. */
static int parse_key(json_object *v, const char *what, struct agg_key_spec *ret, char **ret_error) {
        const char *s;
        int r;

        if (!json_object_is_type(v, json_type_string))
                return error_set(ret_error, -EINVAL, "aggregate: %s must be a key name string", what);
        s = json_object_get_string(v);
        r = agg_key_parse(s, ret);
        if (r == -EINVAL)
                return error_set(ret_error, -EINVAL, "aggregate: %s: unknown key \"%.64s\" (known: pid, tid, comm, exe, "
                                 "uid, cgroup, container, cpu, event, field:NAME, stack, kstack, ustack, frame)",
                                 what, s);
        return r;
}

static int parse_value(json_object *val, struct request *req, char **ret_error) {
        static const char *const value_keys[_AGG_OP_MAX][6] = {
                [AGG_OP_COUNT] = { "op" },
                [AGG_OP_SUM] = { "op", "field" },
                [AGG_OP_MIN] = { "op", "field" },
                [AGG_OP_MAX] = { "op", "field" },
                [AGG_OP_AVG] = { "op", "field" },
                [AGG_OP_HIST] = { "op", "field" },
                [AGG_OP_LHIST] = { "op", "field", "min", "max", "step" },
                [AGG_OP_LATENCY] = { "op", "start", "end", "match" },
        };
        struct agg_spec *a = &req->agg;
        json_object *v;
        int op, r;

        if (!json_object_is_type(val, json_type_object))
                return error_set(ret_error, -EINVAL, "aggregate: \"value\" must be an object such as {\"op\":\"count\"}");
        if (!json_object_object_get_ex(val, "op", &v) || !json_object_is_type(v, json_type_string) ||
            (op = agg_op_from_string(json_object_get_string(v))) < 0)
                return error_set(ret_error, -EINVAL, "aggregate: value \"op\" must be one of count, sum, min, max, "
                                 "avg, hist, lhist, latency");
        a->op = (enum agg_op) op;
        json_object_object_foreach(val, key, kv) {
                bool ok = false;

                (void) kv;
                for (size_t i = 0; i < 6 && value_keys[op][i]; i++)
                        ok = ok || strcmp(key, value_keys[op][i]) == 0;
                if (!ok)
                        return error_set(ret_error, -EINVAL, "aggregate: value \"%.64s\" is no key of op \"%s\"", key,
                                         agg_op_to_string(a->op));
        }
        if (a->op >= AGG_OP_SUM && a->op <= AGG_OP_LHIST) {
                r = get_string(val, "aggregate: value", "field", true, &a->field, ret_error);
                if (r < 0)
                        return r;
        }
        if (a->op == AGG_OP_LHIST) {
                const char *names[3] = { "min", "max", "step" };
                int64_t *dst[3] = { &a->lmin, &a->lmax, &a->lstep };

                for (size_t i = 0; i < 3; i++) {
                        if (!json_object_object_get_ex(val, names[i], &v) || !json_object_is_type(v, json_type_int))
                                return error_set(ret_error, -EINVAL, "aggregate: lhist needs integer \"min\", \"max\" "
                                                 "and \"step\"");
                        *dst[i] = json_object_get_int64(v);
                }
                /* Bounds that keep every bucket's edges, max + step
                 * included, inside int64_t (a span of 2^63 once wrapped
                 * the bucket count and the table's size). */
                if (a->lstep <= 0 || a->lmax <= a->lmin || a->lmin < -(INT64_C(1) << 61) || a->lmax > INT64_C(1) << 61 ||
                    a->lstep > a->lmax - a->lmin || (a->lmax - a->lmin) / a->lstep + 2 > AGG_LHIST_BUCKETS_MAX)
                        return error_set(ret_error, -EINVAL, "aggregate: lhist needs min < max within ±2^61, 0 < step "
                                         "<= max - min and at most %u buckets ((max - min) / step)",
                                         AGG_LHIST_BUCKETS_MAX - 2);
        }
        if (a->op == AGG_OP_LATENCY) {
                r = get_string(val, "aggregate: value", "start", true, &a->start, ret_error);
                if (r < 0)
                        return r;
                r = get_string(val, "aggregate: value", "end", true, &a->end, ret_error);
                if (r < 0)
                        return r;
                a->match.kind = AGG_KEY_TID;
                if ((v = get_set(val, "match"))) {
                        r = parse_key(v, "value \"match\"", &a->match, ret_error);
                        if (r < 0)
                                return r;
                        if (a->match.kind != AGG_KEY_TID && a->match.kind != AGG_KEY_PID && a->match.kind != AGG_KEY_FIELD)
                                return error_set(ret_error, -EINVAL, "aggregate: value \"match\" must be \"tid\", \"pid\" "
                                                 "or \"field:NAME\"");
                }
        }
        return 0;
}

static int parse_aggregate(json_object *msg, struct request *req, char **ret_error) {
        struct agg_spec *a = &req->agg;
        json_object *v;
        uint64_t u;
        int r;

        r = parse_subscribe(msg, req, ret_error);
        if (r < 0)
                return r;
        if (!(v = get_set(msg, "value")))
                a->op = AGG_OP_COUNT;
        else {
                r = parse_value(v, req, ret_error);
                if (r < 0)
                        return r;
        }
        if (a->op == AGG_OP_LATENCY) {
                if (req->events)
                        return error_set(ret_error, -EINVAL, "aggregate: latency takes its events from value \"start\" "
                                         "and \"end\", not \"events\"");
                char *const l[] = { a->start, a->end, NULL };

                r = strv_copy(l, &req->events);
                if (r < 0)
                        return r;
        } else if (!req->events || !req->events[0])
                return error_set(ret_error, -EINVAL, "aggregate: \"events\" is missing (names or patterns of the "
                                 "events to aggregate)");
        if ((v = get_set(msg, "by"))) {
                size_t n;

                if (!json_object_is_type(v, json_type_array))
                        return error_set(ret_error, -EINVAL, "aggregate: \"by\" must be an array of keys");
                n = json_object_array_length(v);
                if (n > AGG_BY_MAX)
                        return error_set(ret_error, -EINVAL, "aggregate: \"by\" has %zu keys, at most %u are taken", n,
                                         AGG_BY_MAX);
                for (size_t i = 0; i < n; i++) {
                        char what[32];

                        snprintf(what, sizeof(what), "by[%zu]", i);
                        r = parse_key(json_object_array_get_idx(v, i), what, &a->by[i], ret_error);
                        if (r < 0)
                                return r;
                        a->n_by = i + 1;
                }
        }
        u = 1000;
        r = get_uint(msg, "interval_ms", AGG_INTERVAL_MS_MAX, &u, ret_error);
        if (r < 0)
                return r;
        if (u > 0 && u < AGG_INTERVAL_MS_MIN)
                return error_set(ret_error, -EINVAL, "aggregate: \"interval_ms\" must be 0 (only on flush) or at least %u",
                                 AGG_INTERVAL_MS_MIN);
        a->interval_ms = u;
        u = AGG_TOP_DEFAULT;
        r = get_uint(msg, "top", AGG_MAX_KEYS_MAX, &u, ret_error);
        if (r < 0)
                return r;
        a->top = (uint32_t) u;
        u = AGG_MAX_KEYS_DEFAULT;
        r = get_uint(msg, "max_keys", AGG_MAX_KEYS_MAX, &u, ret_error);
        if (r < 0)
                return r;
        if (u == 0)
                return error_set(ret_error, -EINVAL, "aggregate: \"max_keys\" must be from 1 to %u", AGG_MAX_KEYS_MAX);
        a->max_keys = (uint32_t) u;
        if ((v = get_set(msg, "cumulative"))) {
                if (!json_object_is_type(v, json_type_boolean))
                        return error_set(ret_error, -EINVAL, "aggregate: \"cumulative\" must be true or false");
                a->cumulative = json_object_get_boolean(v);
        }
        return 0;
}

static int parse_flush(json_object *msg, struct request *req, char **ret_error) {
        json_object *v = get_set(msg, "final");

        if (!v)
                return 0;
        if (!json_object_is_type(v, json_type_boolean))
                return error_set(ret_error, -EINVAL, "flush: \"final\" must be true or false");
        req->final = json_object_get_boolean(v);
        return 0;
}

const char *request_type_to_string(enum request_type t) {
        return t < _REQUEST_TYPE_MAX ? request_names[t] : NULL;
}

static int parse_control(json_object *msg, struct request *req, char **ret_error) {
        const char *t = request_names[req->type];
        json_object *v;
        int r;

        switch (req->type) {
        case REQUEST_ADD:
                if (!json_object_object_get_ex(msg, "event", &v) || !json_object_is_type(v, json_type_object))
                        return error_set(ret_error, -EINVAL, "add: \"event\" must be an object, as an entry of the "
                                         "config's \"events\" (for example {\"tracepoint\": \"sched:sched_process_exit\"})");
                req->entry = json_object_get(v);
                return 0;
        case REQUEST_REMOVE:
                return get_string(msg, t, "event", true, &req->name, ret_error);
        case REQUEST_ENABLE:
        case REQUEST_DISABLE:
                if (!(v = get_set(msg, "events")))
                        return 0;
                if (!json_object_is_type(v, json_type_array))
                        return error_set(ret_error, -EINVAL, "%s: \"events\" must be an array of event names or patterns", t);
                return parse_strings(v, "events", "a string such as \"sched:*\"", 0, &req->events, ret_error);
        case REQUEST_FILTER:
                r = get_string(msg, t, "event", true, &req->name, ret_error);
                return r < 0 ? r : get_string(msg, t, "filter", true, &req->filter, ret_error);
        default:
                return 0;
        }
}

/* A "\u0000" escape in the JSON text LINE: json-c keeps such a string
 * whole, but each C string made of it ends there ("sched:*\u0000x" would
 * subscribe to "sched:*"). In valid JSON a backslash is always an escape
 * in a string, so each one starts a pair. */
static bool has_nul_escape(const char *line, size_t len) {
        for (size_t i = 0; i + 1 < len; i++)
                if (line[i] == '\\') {
                        if (line[i + 1] == 'u' && len - i >= 6 && memcmp(line + i + 2, "0000", 4) == 0)
                                return true;
                        i++;
                }
        return false;
}

/* The line as one JSON object, or NULL with *ret_error set. */
static int parse_object(const char *line, size_t len, json_object **ret, char **ret_error) {
        json_tokener *tok;
        json_object *msg;
        enum json_tokener_error err;
        const char *nul;

        if (len > INT_MAX)
                return error_set(ret_error, -EINVAL, "not a JSON object line: too long");
        /* json-c would stop there and call it the end of the data. */
        nul = memchr(line, 0, len);
        if (nul)
                return error_set(ret_error, -EINVAL, "not a JSON object line: a NUL byte at byte %zu", (size_t) (nul - line));
        tok = json_tokener_new();
        if (!tok)
                return -ENOMEM;
        /* Strings go back to clients in error and subscribed lines, which
         * must stay valid JSON (UTF-8). */
        json_tokener_set_flags(tok, JSON_TOKENER_VALIDATE_UTF8);
        msg = json_tokener_parse_ex(tok, line, (int) len);
        err = json_tokener_get_error(tok);
        if (!msg || err != json_tokener_success || json_tokener_get_parse_end(tok) != len) {
                json_object_put(msg);
                json_tokener_free(tok);
                return error_set(ret_error, -EINVAL, "not a JSON object line: %s",
                                 err == json_tokener_continue || err == json_tokener_success
                                 ? "incomplete or trailing text" : json_tokener_error_desc(err));
        }
        json_tokener_free(tok);
        if (has_nul_escape(line, len)) {
                json_object_put(msg);
                return error_set(ret_error, -EINVAL, "not a JSON object line: a string holds \\u0000 (NUL)");
        }
        *ret = msg;
        return 0;
}

int request_parse(const char *line, size_t len, struct request *ret, char **ret_error) {
        _cleanup_(json_object_putp) json_object *msg = NULL;
        json_object *type;
        const char *t;
        int r;

        *ret = (struct request) { .type = _REQUEST_TYPE_MAX };
        while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' '))
                len--;
        if (len == 0)
                return 0;
        r = parse_object(line, len, &msg, ret_error);
        if (r < 0)
                return r;
        if (!json_object_is_type(msg, json_type_object) || !json_object_object_get_ex(msg, "type", &type) ||
            !json_object_is_type(type, json_type_string))
                return error_set(ret_error, -EINVAL, "expected {\"type\":\"subscribe\",...}");
        t = json_object_get_string(type);
        for (enum request_type i = 0; i < _REQUEST_TYPE_MAX; i++)
                if (strcmp(t, request_names[i]) == 0) {
                        ret->type = i;
                        r = check_keys(msg, i, ret_error);
                        if (r >= 0)
                                r = i == REQUEST_SUBSCRIBE   ? parse_subscribe(msg, ret, ret_error)
                                    : i == REQUEST_AGGREGATE ? parse_aggregate(msg, ret, ret_error)
                                    : i == REQUEST_FLUSH     ? parse_flush(msg, ret, ret_error)
                                                             : parse_control(msg, ret, ret_error);
                        if (r < 0) {
                                request_done(ret);
                                /* Which request failed: an aggregate's
                                 * error leaves the connection quiet. */
                                ret->type = i;
                                return r;
                        }
                        return 1;
                }
        ret->type = _REQUEST_TYPE_MAX;
        return error_set(ret_error, -EINVAL, "unknown message type \"%s\" (known: subscribe, aggregate, flush, status, "
                         "reload, add, remove, enable, disable, filter)", t);
}

void request_done(struct request *req) {
        strv_free(req->events);
        strv_free(req->cgroups);
        strv_free(req->comms);
        strv_free(req->containers);
        strv_free(req->namespaces);
        free(req->pids);
        json_object_put(req->entry);
        free(req->name);
        free(req->filter);
        agg_spec_done(&req->agg);
        free(req->client);
        *req = (struct request) {};
}
