/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "client.h"
#include "ratelimit.h"
#include "request.h"
#include "server.h"
#include "evmon/cleanup.h"
#include "evmon/connect.h"
#include "evmon/error.h"
#include "evmon/jsonc.h"
#include "evmon/log.h"
#include "evmon/perfdata.h"

/* How long accepting pauses when we are out of fds or memory. */
#define ACCEPT_PAUSE_USEC 1000000u
/* The longest error message a client gets. */
#define SERVER_ERROR_MAX 511
/* A client paused because it does not read its replies is dropped after
 * this long with nothing written to it. */
#define CLIENT_STUCK_USEC (10 * 1000000u)
/* Log lines about the clients of one uid (connected, disconnected,
 * refused) and every line their requests cause (a reload, runtime
 * control, what fails in them), root's and admins' too: this many at
 * once, then this many a second; the rest are counted in one line a
 * second. Far below journald's default limit for a service (10,000 in
 * 30 s), so a client flooding the socket, or an admin's script looping
 * on requests, cannot make journald drop evmond's other lines, nor
 * another uid's. */
#define CLIENT_LOG_BURST 20u
#define CLIENT_LOG_PER_SEC 5u

/* Subscribes with "cgroups" from a uid that is not root or an admin's:
 * each walks up to SUBSCRIBE_CGROUPS_MAX cgroups in the loop (~100 ms
 * at the bound on this VM), so one uid gets WALK_BURST at once, then
 * WALK_PER_SEC a second, and cannot hold the loop for more than about a
 * fifth of each second however many clients it opens. */
#define WALK_BURST 4u
#define WALK_PER_SEC 2u
/* ... and all such uids together get WALK_ALL_BURST at once, then
 * WALK_ALL_PER_SEC a second: a member with many uids (a subuid range,
 * each uid its own SO_PEERCRED) had a bucket per uid, 16 and a shared
 * one, 68 walks at once. At the bound that is at most ~800 ms at once
 * and ~40% of each second, whoever asks; a uid past it is told to ask
 * again, as past its own. */
#define WALK_ALL_BURST 8u
#define WALK_ALL_PER_SEC 4u

struct server {
        sd_event *event;
        uint64_t self_gen;        /* admin clients came or went (server_self_gen()) */
        struct server_opts opts;  /* its strings point to the copies below */
        char *opts_path, *opts_admin_group;
        char *path;               /* the socket file we created, removed on free */
        int listen_fd;
        sd_event_source *listen_io;
        sd_event_source *accept_resume;   /* a timer, armed while accepting pauses */
        const struct server_ops *ops;
        void *userdata;

        struct client *clients;
        size_t n_clients;
        size_t n_agg;             /* of them, aggregating */
        struct client **matched;  /* what server_match() picked: room for every client */
        size_t n_matched;
        size_t n_perf;            /* "format":"perf" clients */
        size_t n_perf_ctx;        /* ... of them selecting by comm, container or namespace */
        sd_event_source *reap;    /* frees dead clients */
        uint64_t next_id;
        uint64_t dropped_total;   /* of clients that are gone */
        struct ratelimit_uids log_budget;   /* lines about clients, per uid */
        struct ratelimit_uids walk_budget;  /* subscribes that walk cgroups, per uid */
        struct ratelimit walk_all;          /* the same, all uids but root's and admins' */
        bool log_as_client;       /* the log gate is on, for the uid below */
        uid_t log_uid;
        pid_t self_pid;           /* evmond's, for server_is_self() */
        struct server_client_series *gone;  /* gone clients' metrics series */
        size_t n_gone;

        struct line_store store;
};

static bool server_log_gate(int level, void *userdata) {
        struct server *s = userdata;

        return ratelimit_uids_below(&s->log_budget, s->log_uid, now_usec());
}

/* What server_log_as() replaced, for server_log_restore(). */
struct server_log_scope {
        bool on;
        uid_t uid;
};

/* Until server_log_restore(): every line logged, whoever logs it, counts
 * against UID's budget (log_set_gate()). Nests: a line about another
 * client in the middle (one dropped by a reload's flush) counts against
 * its own uid. */
static struct server_log_scope server_log_as(struct server *s, uid_t uid) {
        struct server_log_scope prev = { s->log_as_client, s->log_uid };

        s->log_as_client = true;
        s->log_uid = uid;
        log_set_gate(server_log_gate, s);
        return prev;
}

static void server_log_restore(struct server *s, struct server_log_scope prev) {
        s->log_as_client = prev.on;
        s->log_uid = prev.uid;
        if (prev.on)
                log_set_gate(server_log_gate, s);
        else
                log_set_gate(NULL, NULL);
}

/* Logs a line about a client of UID, within that uid's budget. */
_printf_(4, 5) static void server_log_client(struct server *s, uid_t uid, int level, const char *fmt, ...) {
        struct server_log_scope prev;
        char buf[1024];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        prev = server_log_as(s, uid);
        log_internal(level, 0, "%s", buf);
        server_log_restore(s, prev);
}

static void log_suppressed(uid_t uid, bool others, uint64_t n, uint64_t since_usec, void *userdata) {
        uint64_t now = *(const uint64_t *) userdata;
        char who[32];

        if (others)
                snprintf(who, sizeof(who), "other uids");
        else
                snprintf(who, sizeof(who), "uid %u", (unsigned) uid);
        log_notice("Suppressed %" PRIu64 " log lines about clients of %s and their requests in the last %.1f s "
                   "(more than %u at once, then %u a second)", n, who, (double) (now - since_usec) / 1e6, CLIENT_LOG_BURST, CLIENT_LOG_PER_SEC);
}

/* One line per uid whose lines the budget held back since the last call. */
static void server_log_suppressed(struct server *s) {
        uint64_t now = now_usec();

        /* Said whatever the budgets: never within one. */
        log_set_gate(NULL, NULL);
        ratelimit_uids_suppressed(&s->log_budget, log_suppressed, &now);
        if (s->log_as_client)
                log_set_gate(server_log_gate, s);
}

/* The names of the events served, in index order (the daemon's strings);
 * caller frees the array. */
static const char **server_event_names(struct server *s, size_t *ret_n) {
        size_t n = s->ops->n_events(s->userdata);
        const char **names = calloc(n ? n : 1, sizeof(char *));

        for (size_t i = 0; names && i < n; i++)
                names[i] = s->ops->event_name(s->userdata, i);
        *ret_n = n;
        return names;
}

static int server_reply(struct client *c, const struct jbuf *line) {
        return client_reply(c, line->data, line->len);
}

static int server_reply_error(struct client *c, const char *message) {
        _cleanup_(jbuf_donep) struct jbuf line = {};
        char msg[SERVER_ERROR_MAX + 1];
        int r;

        snprintf(msg, sizeof(msg), "%s", message ?: "out of memory");
        r = encode_error(&line, msg);
        if (r < 0)
                return r;
        return server_reply(c, &line);
}

static int server_send_hello(struct server *s, struct client *c) {
        _cleanup_(jbuf_donep) struct jbuf line = {};
        _cleanup_(freep) const char **names = NULL;
        size_t n;
        int r;

        names = server_event_names(s, &n);
        if (!names)
                return -ENOMEM;
        /* "start" and "client" name this connection's lines for good
         * (evmon-forward's Nats-Msg-Id): the client number counts from 1
         * at each start. */
        r = encode_hello(&line, names, n, s->opts.start_ns, c->id);
        if (r < 0)
                return r;
        return server_reply(c, &line);
}

/* {"type":"subscribed",...}: the events C now gets, its pids, and the
 * cgroups as it wrote them. */
static int server_send_subscribed(struct server *s, struct client *c, const struct request *req) {
        _cleanup_(jbuf_donep) struct jbuf line = {};
        _cleanup_(freep) const char **names = NULL;
        size_t n, k = 0, n_cgroups = 0;
        int r;

        names = server_event_names(s, &n);
        if (!names)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (subscription_has_event(&c->sub, i))
                        names[k++] = names[i];
        while (req->cgroups && req->cgroups[n_cgroups])
                n_cgroups++;
        r = encode_subscribed(&line, names, k, c->sub.pids, c->sub.n_pids,
                              (const char *const *) req->cgroups, n_cgroups);
        if (r < 0)
                return r;
        return server_reply(c, &line);
}

/* A refused subscribe: the error, and a client that has had none taken
 * gets no event until one is (it asked for less than everything); one
 * taken before stays as it was. */
static int server_subscribe_refused(struct client *c, const char *message) {
        if (!c->subscribed)
                subscription_none(&c->sub);
        return server_reply_error(c, message);
}

/* SUB's filter against the formats of the events it takes (N served):
 * a key that none of them has is an error now, not a silent nothing. */
static int server_check_filter(struct server *s, const struct subscription *sub, size_t n, char **ret_error) {
        _cleanup_(freep) const struct format **fmts = calloc(n ?: 1, sizeof(*fmts));
        _cleanup_(freep) char *error = NULL;
        size_t k = 0;
        int r;

        if (!fmts)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (subscription_has_event(sub, i))
                        fmts[k++] = s->ops->event_format(s->userdata, i);
        r = linefilter_check(sub->filter, fmts, k, &error);
        if (r == -EINVAL && asprintf(ret_error, "subscribe: %s", error) < 0)
                return -ENOMEM;
        return r;
}

static void walk_refused(uid_t uid, bool others, uint64_t n, uint64_t since_usec, void *userdata) {
}

/* The subscribed line, then the head of the perf stream: from here on
 * the connection carries perf's records only (doc/protocol.md). */
static int server_subscribe_perf(struct server *s, struct client *c, const struct request *req) {
        _cleanup_(freep) char *head = NULL;
        size_t len;
        int r;

        if (!s->ops->perf_head)
                return server_reply_error(c, "subscribe: \"format\":\"perf\" is not offered here");
        r = s->ops->perf_head(s->userdata, &c->sub, &head, &len, &c->perf_lost_id);
        if (r == -E2BIG)
                return server_reply_error(c, "subscribe: an event has too many fds for a perf HEADER_ATTR record "
                                          "(64 KiB): subscribe to fewer events or targets");
        if (r < 0)
                return r;
        r = server_send_subscribed(s, c, req);
        if (r < 0)
                return r;
        r = client_reply(c, head, len);
        if (r < 0)
                return r;
        /* Its events are those the head names, not those added later:
         * perf stops at a record whose id no attr of the stream has. */
        if (c->sub.all_events) {
                size_t n = s->ops->n_events(s->userdata), words = (n + 63) / 64;
                uint64_t *bits = calloc(words ?: 1, sizeof(*bits));

                if (!bits)
                        return -ENOMEM;
                for (size_t i = 0; i < n; i++)
                        bits[i / 64] |= UINT64_C(1) << (i % 64);
                free(c->sub.event_bits);
                c->sub.event_bits = bits;
                c->sub.n_event_bits = words;
                c->sub.all_events = false;
        }
        c->perf = true;
        c->perf_ctx = c->sub.comms || c->sub.containers || c->sub.namespaces;
        s->n_perf++;
        s->n_perf_ctx += c->perf_ctx;
        return 0;
}

static int server_subscribe(struct server *s, struct client *c, struct request *req) {
        _cleanup_(freep) const char **names = NULL;
        _cleanup_(freep) char *error = NULL;
        struct subscription sub;
        size_t n;
        int r;

        if (req->cgroups && !c->admin && !ratelimit_uids_below(&s->walk_budget, c->cred.uid, now_usec())) {
                /* Counted nowhere else: reset, so the uid keeps its slot. */
                ratelimit_uids_suppressed(&s->walk_budget, walk_refused, NULL);
                char msg[256];

                snprintf(msg, sizeof(msg), "subscribe: too many subscribes with \"cgroups\" from this uid (%u at "
                         "once, then %u a second: each walks the cgroup tree); send it again in a moment",
                         WALK_BURST, WALK_PER_SEC);
                return server_subscribe_refused(c, msg);
        }
        if (req->cgroups && !c->admin && !ratelimit_below(&s->walk_all, WALK_ALL_BURST, WALK_ALL_PER_SEC, now_usec())) {
                char msg[256];

                (void) ratelimit_take_suppressed(&s->walk_all, NULL);
                snprintf(msg, sizeof(msg), "subscribe: too many subscribes with \"cgroups\" from all uids (%u at "
                         "once, then %u a second, for clients not root or in socket.admin_group: each walks the "
                         "cgroup tree); send it again in a moment", WALK_ALL_BURST, WALK_ALL_PER_SEC);
                return server_subscribe_refused(c, msg);
        }
        /* The records as the kernel wrote them hold what JSON lines leave
         * out: the sampled user stack's bytes and registers, and the
         * context's mmap records of every process (which /proc hides
         * from other users). */
        if ((req->format_perf || req->stack_bytes) && !c->admin)
                return server_subscribe_refused(c, req->format_perf
                        ? "subscribe: \"format\":\"perf\" is for root and socket.admin_group (the raw records hold "
                          "other processes' stack bytes, registers and mappings)"
                        : "subscribe: \"stack_bytes\" is for root and socket.admin_group (the bytes are other "
                          "processes' stack memory)");
        names = server_event_names(s, &n);
        if (!names)
                return -ENOMEM;
        r = subscription_build(&sub, req, names, n, s->opts.cgroup_mount, &error);
        if (r == -EINVAL)
                return server_subscribe_refused(c, error);
        if (r < 0)
                return r;
        if (sub.filter && s->ops->event_format) {
                r = server_check_filter(s, &sub, n, &error);
                if (r < 0) {
                        subscription_done(&sub);
                        return r == -EINVAL ? server_subscribe_refused(c, error) : r;
                }
        }
        subscription_done(&c->sub);
        c->sub = sub;
        c->subscribed = true;
        c->stack_bytes = req->stack_bytes;
        if (req->client)
                snprintf(c->name, sizeof(c->name), "%s", req->client);
        if (req->format_perf)
                return server_subscribe_perf(s, c, req);
        return server_send_subscribed(s, c, req);
}

/* A status or reload request: the daemon writes the answer. */
static int server_answer(struct client *c, int (*answer)(void *userdata, struct jbuf *line), void *userdata) {
        _cleanup_(jbuf_donep) struct jbuf line = {};
        int r;

        r = answer(userdata, &line);
        if (r < 0)
                return r;
        return server_reply(c, &line);
}

static int server_reload(struct server *s, struct client *c) {
        _cleanup_(jbuf_donep) struct jbuf line = {};
        int r;

        r = s->ops->reload(s->userdata, &c->cred, &line);
        if (r < 0)
                return r;
        return server_reply(c, &line);
}

static int server_control(struct server *s, struct client *c, const struct request *req) {
        _cleanup_(jbuf_donep) struct jbuf line = {};
        _cleanup_(freep) char *error = NULL;
        struct peer peer;
        int r;

        if (!s->ops->control)
                return server_reply_error(c, "runtime control is not available here");
        /* Read now, not kept per client: only runtime control needs the
         * groups (an add judged by what the peer could read itself). */
        r = peer_from_fd(c->fd, &peer);
        if (r < 0)
                return server_reply_error(c, "cannot read the peer's credentials");
        peer.cred = c->cred;
        r = s->ops->control(s->userdata, req, &peer, &line, &error);
        if (r == -ENOMEM && !error)
                return r;
        if (r < 0)
                return server_reply_error(c, error ?: strerror(-r));
        return server_reply(c, &line);
}

/* A request for root and socket.admin_group only, from someone else: an
 * error line, and the connection goes on. */
static int server_refuse(struct server *s, struct client *c, const char *what) {
        char msg[SERVER_ERROR_MAX + 1];

        server_log_client(s, c->cred.uid, LOG_NOTICE,
                          "Refused %s to client %" PRIu64 " (pid %d, uid %u): not root, not in socket.admin_group",
                          what, c->id, (int) c->cred.pid, (unsigned) c->cred.uid);
        if (s->opts.admin_group)
                snprintf(msg, sizeof(msg), "%s: permission denied: only root and members of socket.admin_group "
                         "(\"%s\") may send it", what, s->opts.admin_group);
        else
                snprintf(msg, sizeof(msg), "%s: permission denied: only root may send it (socket.admin_group "
                         "in the config names a group that may too)", what);
        return server_reply_error(c, msg);
}


/* ---- aggregation ------------------------------------------------------- */

/* The bits of the events (N, NAMES by index) that PATTERN names. */
static uint64_t *pattern_bits(const char *pattern, const char *const *names, size_t n) {
        uint64_t *bits = calloc(n / 64 + 1, sizeof(uint64_t));

        for (size_t i = 0; bits && i < n; i++)
                if (names[i] && fnmatch(pattern, names[i], 0) == 0)
                        bits[i >> 6] |= UINT64_C(1) << (i & 63);
        return bits;
}

/* What the aggregate of C needs of the events served now: NULL on ENOMEM. */
static struct agg_event_info *server_event_infos(struct server *s, size_t *ret_n) {
        size_t n = s->ops->n_events(s->userdata);
        struct agg_event_info *info = calloc(n ? n : 1, sizeof(*info));

        for (size_t i = 0; info && i < n; i++)
                s->ops->event_info(s->userdata, i, &info[i]);
        *ret_n = n;
        return info;
}

/* The start and end bits of a latency SPEC (else END is the subscription's). */
static int agg_bits(struct server *s, const struct agg_spec *spec, const struct subscription *sub,
                    uint64_t **ret_start, uint64_t **ret_end) {
        _cleanup_(freep) const char **names = NULL;
        size_t n;

        names = server_event_names(s, &n);
        if (!names)
                return -ENOMEM;
        if (spec->op != AGG_OP_LATENCY) {
                *ret_start = NULL;
                *ret_end = calloc(n / 64 + 1, sizeof(uint64_t));
                if (!*ret_end)
                        return -ENOMEM;
                for (size_t i = 0; i < n; i++)
                        if (subscription_has_event(sub, i))
                                (*ret_end)[i >> 6] |= UINT64_C(1) << (i & 63);
                return 0;
        }
        *ret_start = pattern_bits(spec->start, names, n);
        *ret_end = pattern_bits(spec->end, names, n);
        if (!*ret_start || !*ret_end) {
                free(*ret_start);
                free(*ret_end);
                *ret_start = *ret_end = NULL;
                return -ENOMEM;
        }
        return 0;
}

static int server_agg_emit(struct server *s, struct client *c, bool final) {
        _cleanup_(jbuf_donep) struct jbuf line = {};
        _cleanup_(freep) const char **names = NULL;
        int64_t offset = 0;
        uint64_t ts;
        size_t n;
        int r;

        names = server_event_names(s, &n);
        if (!names)
                return -ENOMEM;
        ts = s->ops->event_clock(s->userdata, &offset);
        r = agg_emit(c->agg, &line, ts, offset, names, n, final);
        if (r < 0)
                return r;
        return server_reply(c, &line);
}

static int on_agg_timer(sd_event_source *es, uint64_t usec, void *userdata) {
        struct client *c = userdata;
        struct server *s = c->userdata;
        uint64_t interval = agg_interval_ms(c->agg) * 1000;

        if (c->dead || c->closing)
                return 0;
        /* From the last expiry, not from now: windows do not drift; a
         * loop that fell behind skips to the next one ahead. */
        c->agg_next_usec += interval;
        if (c->agg_next_usec <= usec)
                c->agg_next_usec = usec + interval;
        (void) sd_event_source_set_time(es, c->agg_next_usec);
        (void) sd_event_source_set_enabled(es, SD_EVENT_ONESHOT);
        if (server_agg_emit(s, c, false) < 0)
                line_queue_drop(&c->queue);
        if (client_flush(c) < 0)
                client_fail(c);
        return 0;
}

/* {"type":"aggregating",...}: what C's tables hold, as evmond resolved it. */
static int server_send_aggregating(struct server *s, struct client *c, const struct request *req,
                                   const uint64_t *start_bits, const uint64_t *end_bits) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        _cleanup_(jbuf_donep) struct jbuf line = {};
        _cleanup_(freep) const char **names = NULL;
        const struct agg_spec *a = &req->agg;
        json_object *events, *by, *value;
        size_t n;

        names = server_event_names(s, &n);
        if (!names)
                return -ENOMEM;
        o = json_object_new_object();
        events = json_object_new_array();
        by = json_object_new_array();
        value = json_object_new_object();
        if (!o || !events || !by || !value) {
                json_object_put(events);
                json_object_put(by);
                json_object_put(value);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++)
                if ((end_bits && end_bits[i >> 6] & (UINT64_C(1) << (i & 63))) ||
                    (start_bits && start_bits[i >> 6] & (UINT64_C(1) << (i & 63))))
                        json_object_array_add(events, json_object_new_string(names[i]));
        for (size_t k = 0; k < a->n_by; k++) {
                char key[300];

                snprintf(key, sizeof(key), "%s%s", a->by[k].kind == AGG_KEY_FIELD ? "field:" : "",
                         agg_key_name(&a->by[k]));
                json_object_array_add(by, json_object_new_string(key));
        }
        json_object_object_add(value, "op", json_object_new_string(agg_op_to_string(a->op)));
        if (a->field)
                json_object_object_add(value, "field", json_object_new_string(a->field));
        if (a->op == AGG_OP_LHIST) {
                json_object_object_add(value, "min", json_object_new_int64(a->lmin));
                json_object_object_add(value, "max", json_object_new_int64(a->lmax));
                json_object_object_add(value, "step", json_object_new_int64(a->lstep));
        }
        if (a->op == AGG_OP_LATENCY) {
                char key[300];

                snprintf(key, sizeof(key), "%s%s", a->match.kind == AGG_KEY_FIELD ? "field:" : "",
                         agg_key_name(&a->match));
                json_object_object_add(value, "start", json_object_new_string(a->start));
                json_object_object_add(value, "end", json_object_new_string(a->end));
                json_object_object_add(value, "match", json_object_new_string(key));
        }
        json_object_object_add(o, "type", json_object_new_string("aggregating"));
        json_object_object_add(o, "events", events);
        json_object_object_add(o, "by", by);
        json_object_object_add(o, "value", value);
        json_object_object_add(o, "interval_ms", json_object_new_int64((int64_t) a->interval_ms));
        json_object_object_add(o, "cumulative", json_object_new_boolean(a->cumulative));
        json_object_object_add(o, "top", json_object_new_int64(a->top));
        {
                struct agg_spec granted;

                /* What agg_new() granted: fewer keys for a fine histogram. */
                agg_get_spec(c->agg, &granted);
                json_object_object_add(o, "max_keys", json_object_new_int64(granted.max_keys));
        }
        if (jsonc_append_line(&line, o) < 0)
                return -ENOMEM;
        return server_reply(c, &line);
}

/* An aggregate request that failed: the connection gets nothing (no
 * event lines, no aggregate lines) until a valid request. */
static int server_agg_refuse(struct server *s, struct client *c, const char *error) {
        if (c->agg) {
                c->agg = agg_free(c->agg);
                c->agg_timer = sd_event_source_disable_unref(c->agg_timer);
                s->n_agg--;
        }
        subscription_done(&c->sub);
        subscription_init(&c->sub);
        c->sub.all_events = false;
        return server_reply_error(c, error);
}

static int server_aggregate_request(struct server *s, struct client *c, struct request *req) {
        _cleanup_(freep) const char **names = NULL;
        _cleanup_(freep) struct agg_event_info *info = NULL;
        _cleanup_(freep) uint64_t *start_bits = NULL, *end_bits = NULL;
        _cleanup_(agg_freep) struct aggregate *a = NULL;
        _cleanup_(freep) char *error = NULL;
        struct subscription sub;
        int64_t offset;
        size_t n;
        int r;

        if (!s->ops->event_info || !s->ops->event_clock)
                return server_agg_refuse(s, c, "aggregate: not available here");
        if (req->cgroups && !c->admin && !ratelimit_uids_below(&s->walk_budget, c->cred.uid, now_usec()))
                return server_agg_refuse(s, c, "aggregate: too many requests with \"cgroups\" from this uid; send it "
                                          "again in a moment");
        names = server_event_names(s, &n);
        if (!names)
                return -ENOMEM;
        r = subscription_build(&sub, req, names, n, s->opts.cgroup_mount, &error);
        if (r >= 0 && sub.filter && s->ops->event_format) {
                r = server_check_filter(s, &sub, n, &error);
                if (r < 0)
                        subscription_done(&sub);
        }
        if (r == -EINVAL) {
                /* The subscription's words, for this request. */
                if (error && strncmp(error, "subscribe: ", 11) == 0)
                        memcpy(error, "aggregate:", 10);
                return server_agg_refuse(s, c, error);
        }
        if (r < 0)
                return r;
        r = agg_bits(s, &req->agg, &sub, &start_bits, &end_bits);
        if (r >= 0) {
                info = server_event_infos(s, &n);
                r = info ? agg_new(&req->agg, info, n, start_bits, end_bits, &a, &error) : -ENOMEM;
        }
        if (r < 0) {
                subscription_done(&sub);
                return r == -EINVAL ? server_agg_refuse(s, c, error) : r;
        }
        /* One request per connection: it replaces what was there. */
        subscription_done(&c->sub);
        c->sub = sub;
        if (!c->agg)
                s->n_agg++;
        agg_free(c->agg);
        c->agg = TAKE_PTR(a);
        c->agg_stale = false;
        agg_start(c->agg, s->ops->event_clock(s->userdata, &offset));
        c->agg_timer = sd_event_source_disable_unref(c->agg_timer);
        if (agg_interval_ms(c->agg) > 0) {
                c->agg_next_usec = now_usec() + agg_interval_ms(c->agg) * 1000;
                r = sd_event_add_time(s->event, &c->agg_timer, CLOCK_MONOTONIC, c->agg_next_usec, 1000, on_agg_timer, c);
                if (r < 0)
                        return r;
                (void) sd_event_source_set_description(c->agg_timer, "aggregate");
        }
        return server_send_aggregating(s, c, req, start_bits, end_bits);
}

static int server_flush_request(struct server *s, struct client *c, const struct request *req) {
        int r;

        if (!c->agg)
                return server_reply_error(c, "flush: this connection does not aggregate (send {\"type\":\"aggregate\",...} "
                                          "first)");
        r = server_agg_emit(s, c, req->final);
        if (r < 0)
                return r;
        if (req->final)
                c->agg_timer = sd_event_source_disable_unref(c->agg_timer);
        return 0;
}

size_t server_n_aggregating(const struct server *s) {
        return s->n_agg;
}

void server_aggregate(struct server *s, const struct line_meta *meta, const struct agg_sample *as) {
        for (struct client *c = s->clients; c; c = c->next)
                if (c->agg && !c->closing && !c->agg_stale && subscription_matches(&c->sub, meta))
                        agg_fold(c->agg, as);
}

/* The events are now those of the daemon again: fields looked up anew. */
static void server_agg_resolve(struct server *s) {
        _cleanup_(freep) struct agg_event_info *info = NULL;
        size_t n;

        if (s->n_agg == 0)
                return;
        info = server_event_infos(s, &n);
        for (struct client *c = s->clients; c; c = c->next) {
                _cleanup_(freep) uint64_t *start_bits = NULL, *end_bits = NULL;
                struct agg_spec spec = {};

                if (!c->agg)
                        continue;
                if (!info) {
                        c->agg_stale = true;
                        continue;
                }
                agg_get_spec(c->agg, &spec);
                if (agg_bits(s, &spec, &c->sub, &start_bits, &end_bits) < 0) {
                        c->agg_stale = true;
                        continue;
                }
                agg_resolve(c->agg, info, n, start_bits, end_bits);
                c->agg_stale = false;
        }
}

static int client_line(struct server *s, struct client *c, const char *line, size_t len) {
        _cleanup_(request_done) struct request req = {};
        _cleanup_(freep) char *error = NULL;
        int r;

        /* A perf stream has no room for an answer: what it sends now is
         * read and left unanswered. */
        if (c->perf)
                return 0;
        r = request_parse(line, len, &req, &error);
        if (r == -EINVAL && req.type == REQUEST_AGGREGATE)
                return server_agg_refuse(s, c, error);
        if (r == -EINVAL && req.type == REQUEST_SUBSCRIBE)
                return server_subscribe_refused(c, error);
        if (r == -EINVAL)
                return server_reply_error(c, error);
        if (r <= 0)
                return r;
        if (request_is_control(req.type) && !c->admin)
                return server_refuse(s, c, request_type_to_string(req.type));
        switch (req.type) {
        case REQUEST_SUBSCRIBE:
                if (c->agg) {
                        /* The connection streams from now on. */
                        c->agg = agg_free(c->agg);
                        c->agg_timer = sd_event_source_disable_unref(c->agg_timer);
                        s->n_agg--;
                }
                return server_subscribe(s, c, &req);
        case REQUEST_AGGREGATE:
                return server_aggregate_request(s, c, &req);
        case REQUEST_FLUSH:
                return server_flush_request(s, c, &req);
        case REQUEST_STATUS:
                return server_answer(c, s->ops->status, s->userdata);
        case REQUEST_RELOAD:
                return server_reload(s, c);
        default:
                return server_control(s, c, &req);
        }
}

/* Whatever a request makes evmond log (a reload's lines, runtime
 * control's, a refusal, what fails in them) is within the budget of the
 * client's uid, admins' and root's included. */
static int on_client_line(struct client *c, const char *line, size_t len, void *userdata) {
        struct server *s = userdata;
        struct server_log_scope prev = server_log_as(s, c->cred.uid);
        int r;

        r = client_line(s, c, line, len);
        server_log_restore(s, prev);
        return r;
}

static void on_client_failed(struct client *c, void *userdata) {
        struct server *s = userdata;

        (void) sd_event_source_set_enabled(s->reap, SD_EVENT_ONESHOT);
}

static const struct client_handler client_handler = {
        .line = on_client_line,
        .failed = on_client_failed,
};

/* Queues META's schema line for C and notes it sent: once per client and
 * event definition, so the only allocation here is that rare one. */
static int server_send_schema(struct client *c, const struct line_meta *meta) {
        int r;

        if (meta->idx >= c->n_schema_gens) {
                size_t n = (size_t) meta->idx + 1;
                uint64_t *g = reallocarray(c->schema_gens, n, sizeof(*g));

                if (!g)
                        return -ENOMEM;
                memset(g + c->n_schema_gens, 0, (n - c->n_schema_gens) * sizeof(*g));
                c->schema_gens = g;
                c->n_schema_gens = n;
        }
        r = client_reply(c, meta->schema, meta->schema_len);
        if (r < 0)
                return r;
        c->schema_gens[meta->idx] = meta->schema_gen;
        return 0;
}

size_t server_match(struct server *s, const struct line_meta *meta) {
        size_t n = 0;

        for (struct client *c = s->clients; c; c = c->next)
                if (client_wants(c, meta)) {
                        /* Its gap is open and stays so: a drop counted,
                         * and when no client is left, no line made. */
                        if (!line_queue_wants(&c->queue))
                                continue;
                        /* The event's schema line goes first: before the
                         * client's first line of the event, and again when
                         * a reload gave the event a new definition. A
                         * client that cannot take it misses the line too. */
                        if (meta->schema && _unlikely_(!client_has_schema(c, meta)) &&
                            server_send_schema(c, meta) < 0) {
                                line_queue_drop(&c->queue);
                                continue;
                        }
                        s->matched[n++] = c;
                }
        s->n_matched = n;
        return n;
}

size_t server_match_perf(struct server *s, const struct line_meta *meta) {
        size_t n = 0;

        for (struct client *c = s->clients; c; c = c->next)
                if (c->perf && !c->closing && subscription_matches(&c->sub, meta)) {
                        if (!line_queue_wants(&c->queue))
                                continue;
                        c->perf_round = true;
                        s->matched[n++] = c;
                }
        s->n_matched = n;
        return n;
}

size_t server_n_perf(const struct server *s) {
        return s->n_perf;
}

bool server_perf_wants_context(const struct server *s) {
        return s->n_perf_ctx > 0;
}

static void deliver(struct server *s, const char *line, size_t len, uint64_t lost);

void server_end_perf(struct server *s) {
        for (struct client *c = s->clients; s->n_perf > 0 && c; c = c->next)
                if (c->perf)
                        c->closing = true;
}

void server_deliver_perf_all(struct server *s, const char *p, size_t len) {
        size_t n = 0;

        for (struct client *c = s->clients; c; c = c->next)
                if (c->perf && !c->closing)
                        s->matched[n++] = c;
        s->n_matched = n;
        deliver(s, p, len, 0);
}

/* Stores LINE once for the N clients at CS. */
static void deliver_to(struct server *s, struct client *const *cs, size_t n, const char *line, size_t len,
                       uint64_t lost) {
        struct line_span sp;

        if (n == 0)
                return;
        if (line_store_put(&s->store, line, len, &sp) < 0) {
                /* Out of memory: the line is lost for everyone; say so. */
                for (size_t i = 0; i < n; i++) {
                        line_queue_drop(&cs[i]->queue);
                        cs[i]->queue.dropped_lost += lost;
                        cs[i]->queue.dropped_lost_lines += lost > 0;
                }
        } else {
                /* Held across the pushes: one that closes a client's gap
                 * stores the "dropped" line first, a put that may move
                 * the store to a new chunk and let this one go. */
                line_chunk_ref(sp.chunk);
                for (size_t i = 0; i < n; i++)
                        client_push(cs[i], &sp, lost);
                line_chunk_unref(&s->store, sp.chunk);
        }
}

/* LOST: a "lost" line's count (0 for others), kept for clients that drop it. */
static void deliver(struct server *s, const char *line, size_t len, uint64_t lost) {
        deliver_to(s, s->matched, s->n_matched, line, len, lost);
        s->n_matched = 0;
}

void server_deliver(struct server *s, const char *line, size_t len) {
        deliver(s, line, len, 0);
}

size_t server_matched_stack_bytes(struct server *s) {
        size_t k = 0;

        /* Those that asked first: server_deliver_stack_bytes() splits
         * the list there. */
        for (size_t i = 0; i < s->n_matched; i++)
                if (s->matched[i]->stack_bytes) {
                        struct client *c = s->matched[i];

                        s->matched[i] = s->matched[k];
                        s->matched[k++] = c;
                }
        return k;
}

size_t server_n_matched(const struct server *s) {
        return s->n_matched;
}

void server_deliver_stack_bytes(struct server *s, size_t n_bytes, const char *line, size_t len,
                                const char *bytes_line, size_t bytes_len) {
        assert(n_bytes <= s->n_matched);
        if (bytes_line)
                deliver_to(s, s->matched, n_bytes, bytes_line, bytes_len, 0);
        else
                for (size_t i = 0; i < n_bytes; i++)
                        line_queue_drop(&s->matched[i]->queue);
        deliver_to(s, s->matched + n_bytes, s->n_matched - n_bytes, line, len, 0);
        s->n_matched = 0;
}

void server_broadcast(struct server *s, const struct line_meta *meta, const char *line, size_t len) {
        if (server_match(s, meta) > 0)
                server_deliver(s, line, len);
}

static void match_all(struct server *s) {
        size_t n = 0;

        for (struct client *c = s->clients; c; c = c->next)
                if (!c->closing && !c->perf)
                        s->matched[n++] = c;
        s->n_matched = n;
}

/* An aggregating client hears of losses in its next aggregate line. */
static void match_streaming(struct server *s, uint64_t lost) {
        size_t n = 0;

        for (struct client *c = s->clients; c; c = c->next)
                if (c->agg)
                        agg_add_lost(c->agg, lost);
                else if (!c->closing && !c->perf)       /* a perf stream gets a LOST record */
                        s->matched[n++] = c;
        s->n_matched = n;
}

void server_broadcast_all(struct server *s, const char *line, size_t len) {
        match_all(s);
        deliver(s, line, len, 0);
}

void server_broadcast_lost(struct server *s, const char *line, size_t len, uint64_t count) {
        match_streaming(s, count);
        deliver(s, line, len, count);
        if (s->n_perf == 0)
                return;
        /* The kernel's LOST record went by in the drain: perf clients get
         * one of their own, naming one of their ids. */
        for (struct client *c = s->clients; c; c = c->next)
                if (c->perf && !c->closing) {
                        uint64_t rec[PERFDATA_LOST_RECORD_U64];

                        perfdata_lost_record(c->perf_lost_id, count, 0, 0, rec);
                        s->matched[0] = c;
                        s->n_matched = 1;
                        deliver(s, (const char *) rec, sizeof(rec), count);
                }
}

void server_flush(struct server *s) {
        /* perf clients: what went since the last flush is one round (the
         * time merge handed it out in order). */
        for (struct client *c = s->clients; s->n_perf > 0 && c; c = c->next)
                if (c->perf && c->perf_round && !c->closing) {
                        c->perf_round = false;
                        s->matched[0] = c;
                        s->n_matched = 1;
                        deliver(s, (const char *) &perfdata_finished_round, sizeof(perfdata_finished_round), 0);
                }
        for (struct client *c = s->clients; c; c = c->next)
                if (!c->dead && (!line_queue_empty(&c->queue) || c->queue.dropped > 0 || c->closing))
                        if (client_flush(c) < 0)
                                client_fail(c);
}

/* C's series in *A (N of them, room for MAX): its drops added, and
 * counted as connected when CONNECTED. false when there is no room. */
static bool series_add(struct server_client_series **a, size_t *n, size_t max, const struct client *c, bool connected) {
        char name[sizeof((*a)->name)];
        struct server_client_series *x;
        size_t i;

        if (c->name[0])
                snprintf(name, sizeof(name), "%s", c->name);
        else
                snprintf(name, sizeof(name), "uid-%u", (unsigned) c->cred.uid);
        for (i = 0; i < *n; i++)
                if ((*a)[i].uid == c->cred.uid && strcmp((*a)[i].name, name) == 0)
                        break;
        if (i == *n) {
                if (*n >= max)
                        return false;
                x = reallocarray(*a, *n + 1, sizeof(**a));
                if (!x)
                        return false;
                *a = x;
                x[i] = (struct server_client_series) { .uid = c->cred.uid };
                memcpy(x[i].name, name, sizeof(name));
                (*n)++;
        }
        (*a)[i].dropped += c->queue.dropped_total;
        (*a)[i].connected += connected;
        return true;
}

int server_client_series(const struct server *s, struct server_client_series **ret, size_t *ret_n) {
        size_t max = s->n_gone + s->n_clients, n = s->n_gone;
        struct server_client_series *a = calloc(max ?: 1, sizeof(*a));

        if (!a)
                return -ENOMEM;
        if (n > 0)
                memcpy(a, s->gone, n * sizeof(*a));
        for (const struct client *c = s->clients; c; c = c->next)
                (void) series_add(&a, &n, max, c, true);
        *ret = a;
        *ret_n = n;
        return 0;
}

/* Takes C off the list and frees it. */
static void server_remove(struct server *s, struct client *c) {
        if (c->perf) {
                s->n_perf--;
                s->n_perf_ctx -= c->perf_ctx;
        }
        if (c->prev)
                c->prev->next = c->next;
        else
                s->clients = c->next;
        if (c->next)
                c->next->prev = c->prev;
        s->n_clients--;
        s->self_gen += c->admin;
        s->n_agg -= c->agg != NULL;
        s->dropped_total += c->queue.dropped_total;
        series_add(&s->gone, &s->n_gone, SERVER_CLIENT_SERIES_MAX, c, false);
        server_log_client(s, c->cred.uid, LOG_INFO, "Client %" PRIu64 " disconnected (pid %d, uid %u; %" PRIu64
                          " lines dropped in all)", c->id, (int) c->cred.pid, (unsigned) c->cred.uid,
                          c->queue.dropped_total);
        client_free(c);
        /* Its fd is free again: if accepting paused for want of fds, resume. */
        if (s->listen_io)
                (void) sd_event_source_set_enabled(s->listen_io, SD_EVENT_ON);
}

static int on_reap(sd_event_source *es, void *userdata) {
        struct server *s = userdata;
        struct client *c, *next;

        for (c = s->clients; c; c = next) {
                next = c->next;
                if (c->dead)
                        server_remove(s, c);
        }
        return 0;
}

void server_events_resolve(struct server *s, const char *const *names, size_t n) {
        for (struct client *c = s->clients; c; c = c->next) {
                if (c->perf) {
                        /* Its head names the events (and fds) as they
                         * were: the stream ends here, complete, rather
                         * than carry records perf cannot place. */
                        c->closing = true;
                        continue;
                }
                subscription_resolve(&c->sub, names, n);
                /* Until server_events_changed(): the fields looked up
                 * may be of events about to go. */
                if (c->agg)
                        c->agg_stale = true;
        }
}

void server_events_changed(struct server *s) {
        _cleanup_(freep) const char **names = NULL;
        size_t n;

        names = server_event_names(s, &n);
        if (!names)
                return;         /* Keep the old bits: better stale than nothing. */
        server_events_resolve(s, names, n);
        server_agg_resolve(s);
}

void server_sweep(struct server *s) {
        uint64_t now = now_usec();

        for (struct client *c = s->clients; c; c = c->next)
                if (!c->dead && client_stuck_usec(c, now) >= CLIENT_STUCK_USEC) {
                        server_log_client(s, c->cred.uid, LOG_WARNING,
                                          "Dropped client %" PRIu64 " (pid %d, uid %u): it sends requests but has not "
                                          "read its replies for %u s (%zu bytes queued, clients.queue_kib)",
                                          c->id, (int) c->cred.pid, (unsigned) c->cred.uid,
                                          CLIENT_STUCK_USEC / 1000000u, c->queue.queued);
                        client_fail(c);
                }
        server_log_suppressed(s);
}

uint64_t server_self_gen(const struct server *s) {
        return s->self_gen;
}

bool server_is_self(const struct server *s, pid_t pid) {
        if (pid == s->self_pid)
                return true;
        /* The list is walked for each line anyway (server_match()), and
         * holds clients.max at the most. Only root's and the admins'
         * clients: anyone may connect, and a process that kept a
         * connection open would vanish from every stream. */
        for (const struct client *c = s->clients; c; c = c->next)
                if (c->admin && c->cred.pid == pid)
                        return true;
        return false;
}

size_t server_n_clients(const struct server *s) {
        return s->n_clients;
}

bool server_wants_event(const struct server *s, size_t idx) {
        for (const struct client *c = s->clients; c; c = c->next)
                if (!c->closing && subscription_has_event(&c->sub, idx))
                        return true;
        return false;
}

/* C streams lines matched by event, pid, cgroup and self alone: no comm,
 * container or namespace pattern and no filter, which need the sample
 * or its context. */
static bool client_matches_by_meta(const struct client *c) {
        const struct subscription *sub = &c->sub;

        return !c->agg && !c->perf && !sub->comms && !sub->containers && !sub->namespaces && !sub->filter;
}

/* C takes every line of every event it subscribed to (but evmond's own,
 * which the caller leaves out), and drops them now. */
static bool client_drops_all(const struct client *c) {
        return client_matches_by_meta(c) && line_queue_dropping(&c->queue) && !c->sub.pids && !c->sub.cgroups;
}

/* C takes a line spliced or queued as a reader thread encoded it. */
static bool client_plain(const struct client *c) {
        return client_matches_by_meta(c) && !c->stack_bytes;
}

/* Whether every client subscribed to the event of index IDX, one at
 * least, is one of WHICH. */
static bool every_subscriber(const struct server *s, size_t idx, bool (*which)(const struct client *c)) {
        bool any = false;

        for (const struct client *c = s->clients; c; c = c->next) {
                if (c->closing || !subscription_has_event(&c->sub, idx))
                        continue;
                if (!which(c))
                        return false;
                any = true;
        }
        return any;
}

bool server_event_only_dropping(const struct server *s, size_t idx) {
        return every_subscriber(s, idx, client_drops_all);
}

bool server_event_plain(const struct server *s, size_t idx) {
        return every_subscriber(s, idx, client_plain);
}

void server_drop_event(struct server *s, size_t idx, uint64_t n) {
        for (struct client *c = s->clients; c && n > 0; c = c->next)
                if (!c->closing && subscription_has_event(&c->sub, idx) && client_drops_all(c))
                        line_queue_drop_n(&c->queue, n);
}

uint64_t server_dropped_total(const struct server *s) {
        uint64_t n = s->dropped_total;
        for (const struct client *c = s->clients; c; c = c->next)
                n += c->queue.dropped_total;
        return n;
}

int server_clients_status(const struct server *s, struct encode_status_client **ret, size_t *ret_n) {
        struct encode_status_client *a;
        size_t n = 0;

        a = calloc(s->n_clients ? s->n_clients : 1, sizeof(*a));
        if (!a)
                return -ENOMEM;
        for (const struct client *c = s->clients; c && n < s->n_clients; c = c->next)
                a[n++] = (struct encode_status_client) {
                        .id = c->id,
                        .pid = c->cred.pid,
                        .uid = c->cred.uid,
                        .queued_bytes = c->queue.queued,
                        .lines = c->queue.lines,
                        .dropped = c->queue.dropped_total,
                };
        *ret = a;
        *ret_n = n;
        return 0;
}

static int on_accept_resume(sd_event_source *es, uint64_t usec, void *userdata) {
        struct server *s = userdata;

        return sd_event_source_set_enabled(s->listen_io, SD_EVENT_ON);
}

static bool peer_is_admin(const struct server *s, int fd, const struct ucred *cred) {
        gid_t groups[256];
        socklen_t len = sizeof(groups);

        if (cred->uid == 0)
                return true;
        if (s->opts.admin_gid == (gid_t) -1)
                return false;
        if (cred->gid == s->opts.admin_gid)
                return true;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0)
                return false;
        for (size_t i = 0; i < len / sizeof(gid_t); i++)
                if (groups[i] == s->opts.admin_gid)
                        return true;
        return false;
}

/* Why the peer CRED may not connect now, or NULL. clients.max holds for
 * everyone; the last eighth of it is kept for root and admins, and one
 * uid may hold clients.max_per_uid, so no user can lock the others out. */
static const char *server_refusal(const struct server *s, const struct ucred *cred, bool admin) {
        unsigned max = s->opts.max_clients, kept = max >= 8 ? max / 8 : max > 1;
        size_t same = 0;

        if (s->n_clients >= max)
                return "too many clients (clients.max in the config)";
        if (admin)
                return NULL;
        if (s->n_clients >= max - kept)
                return "too many clients (clients.max in the config; the last places are kept for root and socket.admin_group)";
        for (const struct client *c = s->clients; c; c = c->next)
                same += c->cred.uid == cred->uid;
        if (same >= s->opts.max_per_uid)
                return "too many clients of this uid (clients.max_per_uid in the config)";
        return NULL;
}

/* 1 for an admin, 0 for another client, -EPERM after telling it why not. */
static int server_admit(struct server *s, int fd) {
        _cleanup_(jbuf_donep) struct jbuf line = {};
        struct ucred cred = {};
        socklen_t len = sizeof(cred);
        const char *why;
        bool admin;

        (void) getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len);
        admin = peer_is_admin(s, fd, &cred);
        why = server_refusal(s, &cred, admin);
        if (!why)
                return admin;
        if (encode_error(&line, why) >= 0)
                (void) !write(fd, line.data, line.len);
        server_log_client(s, cred.uid, LOG_WARNING, "Refused a client (pid %d, uid %u): already %zu clients: %s",
                          (int) cred.pid, (unsigned) cred.uid, s->n_clients, why);
        return -EPERM;
}

/* One connection per dispatch: the listening socket stays readable while
 * more wait, and between two accepts the loop handles the hangups of
 * clients that left (they come first, see server_new()), so a place they
 * free under clients.max goes to the next in line. */
static int on_accept(sd_event_source *es, int fd, uint32_t revents, void *userdata) {
        struct server *s = userdata;
        _cleanup_(closep) int cfd = -1;
        struct client *c;
        int admin, r;

        cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd < 0) {
                if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                        /* The connection stays in the backlog and the socket
                         * readable: trying again at once would spin. Pause
                         * until a client leaves, or for a second. */
                        log_warning_errno(errno, "Cannot accept a client on %s: %m; pausing new connections",
                                          s->path ? s->path : "socket");
                        (void) sd_event_source_set_enabled(s->listen_io, SD_EVENT_OFF);
                        (void) sd_event_source_set_time_relative(s->accept_resume, ACCEPT_PAUSE_USEC);
                        (void) sd_event_source_set_enabled(s->accept_resume, SD_EVENT_ONESHOT);
                }
                /* EAGAIN, or a connection aborted before we took it. */
                return 0;
        }
        admin = server_admit(s, cfd);
        if (admin < 0)
                return 0;
        r = client_new(s->event, cfd, ++s->next_id, &s->store, s->opts.queue_bytes, &client_handler, s, &c);
        if (r < 0) {
                log_warning_errno(r, "Failed to set up a client: %m");
                return 0;
        }
        TAKE_FD(cfd);
        c->admin = admin > 0;
        r = server_send_hello(s, c);
        if (r < 0) {
                log_warning_errno(r, "Failed to set up a client: %m");
                client_free(c);
                return 0;
        }
        c->next = s->clients;
        if (s->clients)
                s->clients->prev = c;
        s->clients = c;
        s->n_clients++;
        s->self_gen += c->admin;
        server_log_client(s, c->cred.uid, LOG_INFO, "Client %" PRIu64 " connected: pid %d, uid %u, gid %u",
                          c->id, (int) c->cred.pid, (unsigned) c->cred.uid, (unsigned) c->cred.gid);
        if (client_flush(c) < 0)
                server_remove(s, c);
        return 0;
}

int server_check_path(const char *path, char **ret_error) {
        _cleanup_(closep) int fd = -1;
        struct stat st;

        if (strlen(path) > EVMON_SOCKET_PATH_MAX)
                return -ENAMETOOLONG;
        if (lstat(path, &st) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (!S_ISSOCK(st.st_mode))
                return error_set(ret_error, -EEXIST, "%s exists and is not a socket (%s): evmond will not remove it; "
                                 "move it away, or give evmond another socket.path or --socket", path,
                                 S_ISREG(st.st_mode) ? "a regular file" : S_ISDIR(st.st_mode) ? "a directory" :
                                 S_ISLNK(st.st_mode) ? "a symbolic link" : "a special file");
        if (st.st_uid != geteuid())
                return error_set(ret_error, -EEXIST, "%s is a socket of uid %u, not evmond's: evmond will not remove it; "
                                 "remove it, or give evmond another socket.path or --socket", path, (unsigned) st.st_uid);
        /* Someone answers: not a stale socket of ours. Out of fds or
         * memory we cannot tell, so we do not remove it either. */
        fd = evmon_connect(path);
        if (fd >= 0)
                return error_set(ret_error, -EADDRINUSE, "another evmond is serving on %s: stop it, or give this one "
                                 "another --socket", path);
        if (fd == -EMFILE || fd == -ENFILE || fd == -ENOBUFS || fd == -ENOMEM)
                return fd;
        return 1;
}

/* A stale socket of ours goes; anything else stays (server_check_path()). */
static int server_clear_path(struct server *s, char **ret_error) {
        int r = server_check_path(s->opts.path, ret_error);

        if (r <= 0)
                return r;
        if (unlink(s->opts.path) < 0 && errno != ENOENT)
                return -errno;
        log_info("Removed the stale socket %s of an evmond that did not stop cleanly", s->opts.path);
        return 0;
}

static int server_listen(struct server *s, char **ret_error) {
        _cleanup_(closep) int fd = -1;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_(freep) char *dir = NULL;
        char *slash;
        mode_t old;
        int r;

        if (strlen(s->opts.path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, s->opts.path);

        dir = strdup(s->opts.path);
        if (!dir)
                return -ENOMEM;
        slash = strrchr(dir, '/');
        if (slash && slash != dir) {
                *slash = 0;
                /* Our runtime directory: 0755 so group members can reach the
                 * socket; the socket's own mode decides who connects. */
                if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                        return -errno;
        }

        r = server_clear_path(s, ret_error);
        if (r < 0)
                return r;
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;

        /* Bind under a umask that leaves nobody else access, then set owner
         * and mode before listen(): no moment where others may connect. */
        old = umask(0177);
        r = bind(fd, (struct sockaddr *) &sa, sizeof(sa));
        umask(old);
        if (r < 0)
                return -errno;
        s->path = strdup(s->opts.path);
        if (!s->path)
                return -ENOMEM;
        if (s->opts.gid != (gid_t) -1 && chown(s->path, (uid_t) -1, s->opts.gid) < 0)
                return -errno;
        if (chmod(s->path, s->opts.mode) < 0)
                return -errno;
        if (listen(fd, SOMAXCONN) < 0)
                return -errno;
        s->listen_fd = TAKE_FD(fd);
        return 0;
}

int server_new(sd_event *e, const struct server_opts *opts, const struct server_ops *ops, void *userdata,
               struct server **ret, char **ret_error) {
        _cleanup_(server_freep) struct server *s = NULL;
        int r;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->event = sd_event_ref(e);
        s->opts = *opts;
        s->self_pid = getpid();
        s->ops = ops;
        s->userdata = userdata;
        s->listen_fd = -1;
        ratelimit_uids_init(&s->log_budget, CLIENT_LOG_BURST, CLIENT_LOG_PER_SEC);
        ratelimit_uids_init(&s->walk_budget, WALK_BURST, WALK_PER_SEC);
        ratelimit_init(&s->walk_all, WALK_ALL_BURST, now_usec());
        /* Copies: the caller's config is freed by the first reload, and
         * every refusal names the group (a use after free under ASan). */
        if ((opts->path && !(s->opts_path = strdup(opts->path))) ||
            (opts->admin_group && !(s->opts_admin_group = strdup(opts->admin_group))))
                return -ENOMEM;
        s->opts.path = s->opts_path;
        s->opts.admin_group = s->opts_admin_group;
        s->matched = calloc(opts->max_clients ? opts->max_clients : 1, sizeof(*s->matched));
        if (!s->matched)
                return -ENOMEM;

        if (opts->listen_fd >= 0) {
                s->listen_fd = opts->listen_fd;
                if (fcntl(s->listen_fd, F_SETFL, fcntl(s->listen_fd, F_GETFL) | O_NONBLOCK) < 0)
                        return -errno;
        } else {
                r = server_listen(s, ret_error);
                if (r < 0)
                        return r;
        }
        r = sd_event_add_defer(e, &s->reap, on_reap, s);
        if (r < 0)
                return r;
        (void) sd_event_source_set_enabled(s->reap, SD_EVENT_OFF);
        r = sd_event_add_io(e, &s->listen_io, s->listen_fd, EPOLLIN, on_accept, s);
        if (r < 0)
                return r;
        /* After the clients' hangups and the reap they schedule: a client
         * that closed before another connected has freed its place under
         * clients.max by the time the new one is accepted. */
        r = sd_event_source_set_priority(s->listen_io, SD_EVENT_PRIORITY_NORMAL + 1);
        if (r < 0)
                return r;
        (void) sd_event_source_set_description(s->listen_io, "listen");
        r = sd_event_add_time_relative(e, &s->accept_resume, CLOCK_MONOTONIC, ACCEPT_PAUSE_USEC, 0,
                                       on_accept_resume, s);
        if (r < 0)
                return r;
        (void) sd_event_source_set_enabled(s->accept_resume, SD_EVENT_OFF);
        *ret = TAKE_PTR(s);
        return 0;
}

struct server *server_free(struct server *s) {
        if (!s)
                return NULL;
        while (s->clients)
                server_remove(s, s->clients);
        /* What the budget held back is said before evmond stops. */
        server_log_suppressed(s);
        if (s->log_as_client)
                log_set_gate(NULL, NULL);
        s->listen_io = sd_event_source_disable_unref(s->listen_io);
        s->accept_resume = sd_event_source_disable_unref(s->accept_resume);
        s->reap = sd_event_source_disable_unref(s->reap);
        if (s->path)
                (void) unlink(s->path);
        free(s->path);
        free(s->opts_path);
        free(s->opts_admin_group);
        safe_close(s->listen_fd);
        line_store_done(&s->store);
        free(s->matched);
        free(s->gone);
        sd_event_unref(s->event);
        free(s);
        return NULL;
}
