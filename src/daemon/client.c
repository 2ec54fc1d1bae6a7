/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>

#include "cgroup.h"
#include "client.h"
#include "evmon/cleanup.h"
#include "evmon/encode.h"
#include "evmon/jsonc.h"
#include "evmon/log.h"
#include "evmon/protocol.h"

#define CLIENT_IOV_MAX 64

/* Queues the line(s) in LINE for C alone. */
static int client_send(struct client *c, const struct jbuf *line) {
        return server_send(c->server, c, line->data, line->len);
}

static int client_send_error(struct client *c, const char *fmt, ...) _printf_(2, 3);
static int client_send_error(struct client *c, const char *fmt, ...) {
        _cleanup_(jbuf_donep) struct jbuf line = {};
        char msg[512];
        va_list ap;
        int r;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        r = encode_error(&line, msg);
        if (r < 0)
                return r;
        return client_send(c, &line);
}

/* The names of the events served (or those C subscribed to), in index
 * order; the strings belong to the daemon. Caller frees the array. */
static int event_names(struct client *c, bool subscribed_only, const char ***ret, size_t *ret_n) {
        void *ud;
        const struct server_ops *ops = server_get_ops(c->server, &ud);
        size_t n = ops->n_events(ud), k = 0;
        const char **names = calloc(n ? n : 1, sizeof(char *));

        if (!names)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                if (subscribed_only && !c->all_events &&
                    !((i >> 6) < c->n_event_bits && (c->event_bits[i >> 6] & (UINT64_C(1) << (i & 63)))))
                        continue;
                names[k++] = ops->event_name(ud, i);
        }
        *ret = names;
        *ret_n = k;
        return 0;
}

static int client_send_hello(struct client *c) {
        _cleanup_(jbuf_donep) struct jbuf line = {};
        _cleanup_(freep) const char **names = NULL;
        size_t n;
        int r;

        r = event_names(c, false, &names, &n);
        if (r < 0)
                return r;
        r = encode_hello(&line, names, n);
        if (r < 0)
                return r;
        return client_send(c, &line);
}

static int cmp_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
        return x < y ? -1 : x > y;
}

/* Resolves NAMES (exact names or fnmatch patterns such as "syscalls:*")
 * into BITS. Returns the index of the first name that matches nothing, or
 * -1 when all match. */
static ssize_t resolve_names(struct client *c, char **names, uint64_t *bits, size_t n_bits) {
        void *ud;
        const struct server_ops *ops = server_get_ops(c->server, &ud);
        size_t n = ops->n_events(ud);

        memset(bits, 0, n_bits * sizeof(uint64_t));
        for (size_t k = 0; names[k]; k++) {
                bool any = false;
                for (size_t i = 0; i < n; i++)
                        if (fnmatch(names[k], ops->event_name(ud, i), 0) == 0) {
                                bits[i >> 6] |= UINT64_C(1) << (i & 63);
                                any = true;
                        }
                if (!any)
                        return (ssize_t) k;
        }
        return -1;
}

void client_resolve(struct client *c) {
        void *ud;
        const struct server_ops *ops = server_get_ops(c->server, &ud);
        size_t n_bits = (ops->n_events(ud) + 63) / 64;
        uint64_t *bits;

        if (c->all_events || !c->event_names)
                return;
        bits = calloc(n_bits ? n_bits : 1, sizeof(uint64_t));
        if (!bits) {
                /* Keep the old bits: better stale than nothing. */
                return;
        }
        /* Names that no longer exist after a reload simply match nothing. */
        (void) resolve_names(c, c->event_names, bits, n_bits);
        free(c->event_bits);
        c->event_bits = bits;
        c->n_event_bits = n_bits;
}

static int client_send_subscribed(struct client *c, json_object *msg) {
        _cleanup_(jbuf_donep) struct jbuf line = {};
        _cleanup_(freep) const char **names = NULL;
        _cleanup_(freep) const char **cgroups = NULL;
        size_t n, n_cgroups = 0;
        json_object *v;
        int r;

        r = event_names(c, true, &names, &n);
        if (r < 0)
                return r;
        /* The cgroups as the client wrote them (subscribe checked they are strings). */
        if (json_object_object_get_ex(msg, "cgroups", &v) && json_object_is_type(v, json_type_array)) {
                n_cgroups = json_object_array_length(v);
                cgroups = calloc(n_cgroups ? n_cgroups : 1, sizeof(char *));
                if (!cgroups)
                        return -ENOMEM;
                for (size_t i = 0; i < n_cgroups; i++)
                        cgroups[i] = json_object_get_string(json_object_array_get_idx(v, i));
        }
        r = encode_subscribed(&line, names, n, c->pids, c->n_pids, cgroups, n_cgroups);
        if (r < 0)
                return r;
        return client_send(c, &line);
}

static int client_subscribe(struct client *c, json_object *msg) {
        void *ud;
        const struct server_ops *ops = server_get_ops(c->server, &ud);
        size_t n_bits = (ops->n_events(ud) + 63) / 64;
        _cleanup_(strv_freep) char **names = NULL;
        _cleanup_(freep) uint64_t *bits = NULL;
        _cleanup_(freep) pid_t *pids = NULL;
        _cleanup_(freep) uint64_t *cgroups = NULL;
        size_t n_pids = 0, n_cgroups = 0;
        json_object *v;
        int r;

        json_object_object_foreach(msg, key, val) {
                (void) val;
                if (!strcmp(key, "type") || !strcmp(key, "events") || !strcmp(key, "pids") || !strcmp(key, "cgroups"))
                        continue;
                return client_send_error(c, "subscribe: unknown key \"%s\" (known: events, pids, cgroups)", key);
        }
        if (json_object_object_get_ex(msg, "events", &v) && !json_object_is_type(v, json_type_null)) {
                size_t n;

                if (!json_object_is_type(v, json_type_array))
                        return client_send_error(c, "subscribe: \"events\" must be an array of event names");
                n = json_object_array_length(v);
                names = calloc(n + 1, sizeof(char *));
                bits = calloc(n_bits ? n_bits : 1, sizeof(uint64_t));
                if (!names || !bits)
                        return -ENOMEM;
                for (size_t i = 0; i < n; i++) {
                        json_object *e = json_object_array_get_idx(v, i);
                        if (!json_object_is_type(e, json_type_string))
                                return client_send_error(c, "subscribe: events[%zu] must be a string such as \"sched:sched_process_exec\"", i);
                        names[i] = strdup(json_object_get_string(e));
                        if (!names[i])
                                return -ENOMEM;
                }
                ssize_t bad = resolve_names(c, names, bits, n_bits);
                if (bad >= 0)
                        return client_send_error(c, "subscribe: no event \"%s\" is served here (the hello line lists them)",
                                                 names[bad]);
        }
        if (json_object_object_get_ex(msg, "pids", &v) && !json_object_is_type(v, json_type_null)) {
                size_t n;

                if (!json_object_is_type(v, json_type_array))
                        return client_send_error(c, "subscribe: \"pids\" must be an array of process ids");
                n = json_object_array_length(v);
                pids = calloc(n ? n : 1, sizeof(pid_t));
                if (!pids)
                        return -ENOMEM;
                for (size_t i = 0; i < n; i++) {
                        json_object *e = json_object_array_get_idx(v, i);
                        int64_t p = json_object_get_int64(e);
                        if (!json_object_is_type(e, json_type_int) || p <= 0 || p > INT_MAX)
                                return client_send_error(c, "subscribe: pids[%zu] is not a process id", i);
                        pids[n_pids++] = (pid_t) p;
                }
        }
        if (json_object_object_get_ex(msg, "cgroups", &v) && !json_object_is_type(v, json_type_null)) {
                const char *mount = server_cgroup_mount(c->server);
                size_t n;

                if (!json_object_is_type(v, json_type_array))
                        return client_send_error(c, "subscribe: \"cgroups\" must be an array of cgroup paths");
                if (!mount)
                        return client_send_error(c, "subscribe: no cgroup2 file system is mounted on this host");
                n = json_object_array_length(v);
                for (size_t i = 0; i < n; i++) {
                        json_object *e = json_object_array_get_idx(v, i);
                        _cleanup_(freep) char *dir = NULL;
                        _cleanup_(freep) uint64_t *ids = NULL;
                        size_t n_ids;
                        uint64_t *all;

                        if (!json_object_is_type(e, json_type_string))
                                return client_send_error(c, "subscribe: cgroups[%zu] must be a path string", i);
                        r = cgroup_resolve(mount, json_object_get_string(e), &dir);
                        if (r < 0)
                                return client_send_error(c, "subscribe: cgroups[%zu] \"%s\" is not a cgroup path", i,
                                                         json_object_get_string(e));
                        /* The cgroup and every cgroup below it, as they are now. */
                        r = cgroup_subtree_ids(dir, &ids, &n_ids);
                        if (r < 0)
                                return client_send_error(c, "subscribe: cgroups[%zu]: no cgroup %s (%s)", i, dir, strerror(-r));
                        all = realloc(cgroups, (n_cgroups + n_ids) * sizeof(uint64_t));
                        if (!all)
                                return -ENOMEM;
                        cgroups = all;
                        memcpy(cgroups + n_cgroups, ids, n_ids * sizeof(uint64_t));
                        n_cgroups += n_ids;
                }
                qsort(cgroups, n_cgroups, sizeof(uint64_t), cmp_u64);
                if (!cgroups) {
                        /* An empty list matches nothing, not everything. */
                        cgroups = calloc(1, sizeof(uint64_t));
                        if (!cgroups)
                                return -ENOMEM;
                }
        }

        free(c->event_bits);
        strv_free(c->event_names);
        c->all_events = !names;
        c->event_names = TAKE_PTR(names);
        c->event_bits = TAKE_PTR(bits);
        c->n_event_bits = c->all_events ? 0 : n_bits;
        free(c->pids);
        c->pids = NULL;
        c->n_pids = 0;
        if (pids) {
                c->pids = TAKE_PTR(pids);
                c->n_pids = n_pids;
        }
        free(c->cgroups);
        c->cgroups = TAKE_PTR(cgroups);
        c->n_cgroups = n_cgroups;

        return client_send_subscribed(c, msg);
}

/* A status or reload request: the daemon writes the answer. */
static int client_answer(struct client *c, int (*answer)(void *userdata, struct jbuf *line), void *userdata) {
        _cleanup_(jbuf_donep) struct jbuf line = {};
        int r;

        r = answer(userdata, &line);
        if (r < 0)
                return r;
        return client_send(c, &line);
}

static int client_handle_line(struct client *c, const char *line, size_t len) {
        _cleanup_(json_object_putp) json_object *msg = NULL;
        json_tokener *tok;
        json_object *type;
        const char *t;
        void *ud;
        const struct server_ops *ops = server_get_ops(c->server, &ud);

        while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' '))
                len--;
        if (len == 0)
                return 0;
        tok = json_tokener_new();
        if (!tok)
                return -ENOMEM;
        msg = json_tokener_parse_ex(tok, line, (int) len);
        if (!msg || json_tokener_get_error(tok) != json_tokener_success || json_tokener_get_parse_end(tok) != len) {
                enum json_tokener_error err = json_tokener_get_error(tok);
                json_tokener_free(tok);
                return client_send_error(c, "not a JSON object line: %s",
                                         err == json_tokener_continue || err == json_tokener_success
                                         ? "incomplete or trailing text" : json_tokener_error_desc(err));
        }
        json_tokener_free(tok);
        if (!json_object_is_type(msg, json_type_object) || !json_object_object_get_ex(msg, "type", &type) ||
            !json_object_is_type(type, json_type_string))
                return client_send_error(c, "expected {\"type\":\"subscribe\",...}");
        t = json_object_get_string(type);
        if (strcmp(t, EVMON_REQUEST_SUBSCRIBE) == 0)
                return client_subscribe(c, msg);
        if (strcmp(t, EVMON_REQUEST_STATUS) == 0 && ops->status)
                return client_answer(c, ops->status, ud);
        if (strcmp(t, EVMON_REQUEST_RELOAD) == 0 && ops->reload)
                return client_answer(c, ops->reload, ud);
        return client_send_error(c, "unknown message type \"%s\" (known: subscribe, status, reload)", t);
}

/* Reads what the client sent; each complete line is one request. */
static int client_read(struct client *c) {
        for (;;) {
                ssize_t n = read(c->fd, c->inbuf + c->in_len, sizeof(c->inbuf) - c->in_len);
                size_t start = 0;

                if (n < 0) {
                        if (errno == EAGAIN || errno == EINTR)
                                return 0;
                        return -errno;
                }
                if (n == 0)
                        return -ECONNRESET;
                c->in_len += (size_t) n;
                for (size_t i = 0; i < c->in_len; i++) {
                        if (c->inbuf[i] != '\n')
                                continue;
                        if (!c->in_discard) {
                                int r = client_handle_line(c, c->inbuf + start, i - start);
                                if (r < 0)
                                        return r;
                                /* A reload may have flushed us to death. */
                                if (c->dead)
                                        return -ECONNRESET;
                        }
                        c->in_discard = false;
                        start = i + 1;
                }
                memmove(c->inbuf, c->inbuf + start, c->in_len - start);
                c->in_len -= start;
                if (c->in_len == sizeof(c->inbuf)) {
                        if (!c->in_discard)
                                (void) client_send_error(c, "line longer than %u bytes ignored", CLIENT_INBUF_SIZE);
                        c->in_discard = true;
                        c->in_len = 0;
                }
        }
}

/* Watch for input unless the client is closing (its EOF would stay
 * readable and spin the loop), and for output while a write would block. */
static int client_arm(struct client *c, bool out) {
        uint32_t events = (c->closing ? 0 : EPOLLIN | EPOLLRDHUP) | (out ? EPOLLOUT : 0);

        if (c->io_events == events)
                return 0;
        c->io_events = events;
        return sd_event_source_set_io_events(c->io, events);
}

void client_enqueue(struct client *c, struct chunk *chunk, uint32_t off, uint32_t len, size_t limit) {
        struct span *last;

        /* Once a client falls behind, everything is dropped until its queue
         * has drained, so the "dropped" line marks exactly where the gap is. */
        if (limit != SIZE_MAX && (c->dropped > 0 || c->queued + len > limit)) {
                c->dropped++;
                c->dropped_total++;
                return;
        }
        if (c->q_len > 0) {
                last = &c->q[(c->q_head + c->q_len - 1) & (c->q_cap - 1)];
                /* Consecutive lines of one chunk merge into one span. */
                if (last->chunk == chunk && last->off + last->len == off && (uint64_t) last->len + len <= UINT32_MAX) {
                        last->len += len;
                        c->queued += len;
                        c->lines_queued++;
                        return;
                }
        }
        if (c->q_len == c->q_cap) {
                size_t cap = c->q_cap * 2;
                struct span *q = malloc(cap * sizeof(*q));
                if (!q) {
                        c->dropped++;
                        c->dropped_total++;
                        return;
                }
                for (size_t i = 0; i < c->q_len; i++)
                        q[i] = c->q[(c->q_head + i) & (c->q_cap - 1)];
                free(c->q);
                c->q = q;
                c->q_cap = cap;
                c->q_head = 0;
        }
        chunk->refs++;
        c->lines_queued++;
        c->q[(c->q_head + c->q_len) & (c->q_cap - 1)] = (struct span) { chunk, off, len };
        c->q_len++;
        c->queued += len;
}

int client_flush(struct client *c) {
        while (c->q_len > 0 || c->dropped > 0) {
                struct iovec iov[CLIENT_IOV_MAX];
                size_t n = 0;
                ssize_t w;

                if (c->q_len == 0) {
                        /* Caught up after drops: tell the client how many. */
                        _cleanup_(jbuf_donep) struct jbuf line = {};

                        if (encode_dropped(&line, c->dropped) < 0)
                                return -ENOMEM;
                        c->dropped = 0;
                        if (client_send(c, &line) < 0)
                                return -ENOMEM;
                        continue;
                }
                for (size_t i = 0; i < c->q_len && n < CLIENT_IOV_MAX; i++, n++) {
                        const struct span *sp = &c->q[(c->q_head + i) & (c->q_cap - 1)];
                        uint32_t skip = i == 0 ? c->head_done : 0;
                        iov[n].iov_base = sp->chunk->data + sp->off + skip;
                        iov[n].iov_len = sp->len - skip;
                }
                w = writev(c->fd, iov, (int) n);
                if (w < 0) {
                        if (errno == EAGAIN)
                                return client_arm(c, true);
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                c->queued -= (size_t) w;
                while (w > 0) {
                        struct span *sp = &c->q[c->q_head];
                        size_t left = sp->len - c->head_done;
                        if ((size_t) w < left) {
                                c->head_done += (uint32_t) w;
                                break;
                        }
                        w -= (ssize_t) left;
                        c->head_done = 0;
                        server_chunk_unref(c->server, sp->chunk);
                        c->q_head = (c->q_head + 1) & (c->q_cap - 1);
                        c->q_len--;
                }
        }
        if (c->closing)
                return -ECONNRESET;
        return client_arm(c, false);
}

static int on_client_io(sd_event_source *es, int fd, uint32_t revents, void *userdata) {
        struct client *c = userdata;
        int r = 0;

        if (revents & (EPOLLIN | EPOLLHUP | EPOLLRDHUP | EPOLLERR)) {
                r = client_read(c);
                if (r < 0) {
                        if (r != -ECONNRESET)
                                log_debug_errno(r, "Client %" PRIu64 ": read failed: %m", c->id);
                        /* Answers already queued still go out if the peer only shut down its write side. */
                        if (r == -ECONNRESET && !c->dead && c->q_len > 0 && !(revents & (EPOLLHUP | EPOLLERR))) {
                                c->closing = true;
                                r = 0;
                        }
                }
        }
        if (r >= 0 && !c->dead)
                r = client_flush(c);
        if (r < 0)
                server_client_fail(c->server, c);
        return 0;
}

int client_new(struct server *s, int fd, uint64_t id, struct client **ret) {
        socklen_t len = sizeof(struct ucred);
        struct client *c;
        int r;

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->server = s;
        c->fd = -1;
        c->id = id;
        c->all_events = true;
        c->q_cap = 64;
        c->q = calloc(c->q_cap, sizeof(*c->q));
        if (!c->q) {
                free(c);
                return -ENOMEM;
        }
        (void) getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c->cred, &len);
        c->io_events = EPOLLIN | EPOLLRDHUP;
        r = sd_event_add_io(server_get_event(s), &c->io, fd, c->io_events, on_client_io, c);
        if (r < 0) {
                free(c->q);
                free(c);
                return r;
        }
        c->fd = fd;
        r = client_send_hello(c);
        if (r < 0) {
                c->fd = -1;
                client_free(c);
                return r;
        }
        *ret = c;
        return 0;
}

struct client *client_free(struct client *c) {
        if (!c)
                return NULL;
        if (c->linked)
                server_client_closed(c->server, c);
        log_info("Client %" PRIu64 " disconnected (%" PRIu64 " lines dropped in all)", c->id, c->dropped_total);
        c->io = sd_event_source_disable_unref(c->io);
        safe_close(c->fd);
        while (c->q_len > 0) {
                server_chunk_unref(c->server, c->q[c->q_head].chunk);
                c->q_head = (c->q_head + 1) & (c->q_cap - 1);
                c->q_len--;
        }
        free(c->q);
        free(c->event_bits);
        strv_free(c->event_names);
        free(c->pids);
        free(c->cgroups);
        free(c);
        return NULL;
}
