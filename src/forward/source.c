/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The forwarder's evmond side: the connection and its lines, queued with
 * their subjects and ids, and the lines the forwarder says itself
 * (forwarder, dropped). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "evmon/protocol.h"
#include "evmon/connect.h"
#include "evmon/encode.h"
#include "evmon/io.h"
#include "evmon/jsonc.h"
#include "evmon/log.h"
#include "line.h"
#include "forward.h"

/* Queues one line with its subject and message id; counts it dropped when
 * the buffer is full. */
static void fwd_push(struct fwd *f, const char *subject, const char *id, const char *data, size_t len,
                     unsigned lines) {
        int r;

        pthread_mutex_lock(&f->lock);
        r = queue_push(&f->q, subject, id, data, len, lines);
        pthread_mutex_unlock(&f->lock);
        if (r == -E2BIG && !f->big_said) {
                log_warning("a line of %zu bytes does not fit in the buffer (--buffer-mib %zu); dropped and counted", len, arg_buffer_mib);
                f->big_said = true;
        }
        if (r < 0) {
                f->dropped += lines;
                f->dropped_total += lines;
        }
}

/* A closed batch goes to the queue as one message. */
static void fwd_batch_closed(void *userdata, const char *subject, const char *id, const char *data, size_t len,
                             unsigned lines) {
        fwd_push(userdata, subject, id, data, len, lines);
}

int fwd_batches_init(struct fwd *f) {
        f->batch_oldest = INT64_MAX;
        f->batching = arg_batch_kib > 0;
        if (!f->batching)
                return 0;
        return batcher_init(&f->batches, BATCH_SUBJECTS, arg_batch_kib << 10, fwd_batch_closed, f);
}

/* Queues the batches opened before DEADLINE (INT64_MAX: all). */
void fwd_batches_flush(struct fwd *f, int64_t deadline) {
        if (f->batching)
                f->batch_oldest = batcher_flush(&f->batches, deadline);
}

/* What a batch may hold for this read: --batch-kib, less than the
 * server's max_payload and the stream's max message size, with room for
 * the headers: a batch is never refused for its size where its lines
 * alone would not be. 0: each line alone. */
static size_t fwd_batch_limit(struct fwd *f) {
        int64_t max[2] = { f->nc ? natsConnection_GetMaxPayload(f->nc) : 0, f->stream_max_msg };
        size_t limit = arg_batch_kib << 10;

        for (int i = 0; i < 2; i++)
                if (max[i] > 0 && (size_t) max[i] < limit + BATCH_HEADROOM)
                        limit = max[i] > 2 * BATCH_HEADROOM ? (size_t) max[i] - BATCH_HEADROOM : 0;
        return limit;
}

/* Sets what names this connection's lines: "HOST.CONN_TAG". */
static void fwd_set_conn_tag(struct fwd *f, const char *tag) {
        snprintf(f->conn_tag, sizeof(f->conn_tag), "%s", tag);
        snprintf(f->id_tag, sizeof(f->id_tag), "%s.%s", arg_host, f->conn_tag);
}

/* Queues a line the forwarder itself says (forwarder, dropped; built by
 * src/encode/, ending in '\n'): subject evmon.HOST._.TYPE, id
 * HOST.fwd.START.N. Returns what queue_push() did, or -EMSGSIZE (the
 * size in f->unsayable_len) when it is larger than the server's
 * max_payload: queued, it would be dropped and counted, and the dropped
 * line saying so dropped in turn, for good. */
static int fwd_say(struct fwd *f, const struct jbuf *line) {
        char subject[512], id[512];
        size_t len = line->len > 0 ? line->len - 1 : 0;
        struct line_info li;
        int64_t max;
        int r;

        r = line_scan(line->data, len, &li);
        if (r < 0)
                return r;
        r = line_subject(arg_host, &li, subject, sizeof(subject));
        if (r < 0)
                return r;
        r = line_with_host(line->data, len, f->host_json, f->pbuf, LINE_MAX_BYTES + 1024);
        if (r < 0)
                return r;
        max = f->nc ? natsConnection_GetMaxPayload(f->nc) : 0;
        if (max > 0 && r > max) {
                f->unsayable_len = (size_t) r;
                return -EMSGSIZE;
        }
        snprintf(id, sizeof(id), "%s.fwd.%" PRIu64 ".%" PRIu64, arg_host, f->fwd_start_ns, ++f->fwd_lines);
        pthread_mutex_lock(&f->lock);
        r = queue_push(&f->q, subject, id, f->pbuf, (size_t) r, 1);
        pthread_mutex_unlock(&f->lock);
        return r;
}

static void fwd_say_event(struct fwd *f, const char *event, const char *detail) {
        _cleanup_(jbuf_donep) struct jbuf line = {};

        /* What came before it goes before it. */
        fwd_batches_flush(f, INT64_MAX);
        if (encode_forwarder(&line, event, now_ns(CLOCK_REALTIME), arg_socket, detail, f->dropped_total) < 0 ||
            fwd_say(f, &line) < 0) {
                f->dropped++;
                f->dropped_total++;
        }
}

/* After lines were dropped, says how many as soon as the line fits, and
 * logs it at most every REFUSAL_LOG_MS. When the server's max_payload is
 * smaller than the dropped line itself, the loss cannot be said in the
 * stream: said once, the count kept and logged at most every
 * REFUSAL_LOG_MS, and said in a dropped line once a server takes it. */
void fwd_report_dropped(struct fwd *f) {
        _cleanup_(jbuf_donep) struct jbuf line = {};
        int64_t now = now_ms(), max;
        int r;

        if (f->dropped == 0)
                return;
        max = f->nc ? natsConnection_GetMaxPayload(f->nc) : 0;
        if (f->unsayable_max == 0 || max != f->unsayable_max) {
                if (encode_forwarder_dropped(&line, f->dropped) < 0)
                        return;
                r = fwd_say(f, &line);
                if (r == 0) {
                        if (f->unsayable_max > 0)
                                log_info("the NATS server takes the dropped line again (max_payload %" PRId64 " bytes)", max);
                        f->unsayable_max = 0;
                        f->dropped_unlogged += f->dropped;
                        f->dropped = 0;
                        if (f->dropped_logged_at == 0 || now - f->dropped_logged_at >= REFUSAL_LOG_MS) {
                                log_warning("%" PRIu64 " lines dropped: queued dropped lines saying so",
                                            f->dropped_unlogged);
                                f->dropped_unlogged = 0;
                                f->dropped_logged_at = now;
                        }
                        return;
                }
                if (r != -EMSGSIZE)
                        return;
                f->unsayable_max = max;
                log_warning("the NATS server's max_payload (%" PRId64 " bytes) is smaller than even the forwarder's "
                            "dropped line (%zu bytes): lost lines cannot be said in the stream; they are counted and "
                            "logged here every %d s (raise max_payload on the servers)",
                            max, f->unsayable_len, REFUSAL_LOG_MS / 1000);
                f->unsayable_logged_at = now;
                return;
        }
        if (now - f->unsayable_logged_at >= REFUSAL_LOG_MS) {
                log_warning("%" PRIu64 " lines dropped and not said in the stream (max_payload %" PRId64 " bytes)",
                            f->dropped, max);
                f->unsayable_logged_at = now;
        }
}

/* The hello's "start" (evmond's start) and "client" (this connection's
 * number since then) name each line of the connection for good: a line
 * published again, by a retry or by anyone who has it, keeps its
 * Nats-Msg-Id, and no other line of any connection to any evmond of this
 * host gets it. Parsed once per connection, so json-c is fine here. */
static void conn_tag_from_hello(struct fwd *f, const char *line, size_t len) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        json_object *start, *client;
        json_tokener *tok = json_tokener_new();

        if (!tok)
                return;
        o = json_tokener_parse_ex(tok, line, (int) len);
        json_tokener_free(tok);

        if (o && json_object_object_get_ex(o, "start", &start) && json_object_is_type(start, json_type_string) &&
            json_object_object_get_ex(o, "client", &client) && json_object_is_type(client, json_type_int)) {
                char tag[sizeof(f->conn_tag)];

                snprintf(tag, sizeof(tag), "%s.%" PRIu64, json_object_get_string(start), json_object_get_uint64(client));
                fwd_set_conn_tag(f, tag);
        }
}

static bool line_type_is(const struct line_info *li, const char *type) {
        return li->type_len == strlen(type) && memcmp(li->type, type, li->type_len) == 0;
}

/* The answer to our subscribe: an error means evmond took none of it
 * (an EVENT it does not serve, a --cgroup that is not there) and sends
 * every event, which is not what was asked; said, and the forwarder
 * stops. Parsed once per connection, so json-c is fine here. */
static void fwd_check_subscribed(struct fwd *f, const struct line_info *li, const char *line, size_t len) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        json_object *e;
        json_tokener *tok;

        if (f->sub_answered)
                return;
        /* The first line is the hello, or evmond turning the connection
         * away (too many clients): that one is no answer to the
         * subscribe, and the connection's end brings a retry. */
        if (f->conn_lines == 1) {
                if (line_type_is(li, EVMON_LINE_ERROR) && !f->turned_away_said) {
                        log_warning("evmond at %s turns us away (%.*s); trying again every %d ms", arg_socket,
                                    (int) len, line, EVMOND_RETRY_MS);
                        f->turned_away_said = true;
                } else if (line_type_is(li, EVMON_LINE_HELLO))
                        f->turned_away_said = false;
                return;
        }
        if (line_type_is(li, "subscribed")) {
                f->sub_answered = true;
                return;
        }
        if (!line_type_is(li, EVMON_LINE_ERROR))
                return;
        f->sub_answered = f->sub_refused = true;
        tok = json_tokener_new();
        if (tok) {
                o = json_tokener_parse_ex(tok, line, (int) len);
                json_tokener_free(tok);
        }
        log_error("evmond at %s refuses our subscription (%s): name events it serves (evmonctl list, or its hello "
                  "line), or none for all; stopping rather than forwarding every event",
                  arg_socket, o && json_object_object_get_ex(o, "error", &e) ? json_object_get_string(e) : "no reason");
}

/* line_subject(), the subject of an event line taken from the last one
 * when its "event" is the same text. */
static int fwd_line_subject(struct fwd *f, const struct line_info *li, char *subject, size_t size) {
        bool event = li->event && line_type_is(li, "event");
        int r;

        if (event && f->subj_cached_len > 0 && li->event_len == f->subj_event_len &&
            memcmp(li->event, f->subj_event, li->event_len) == 0 && (size_t) f->subj_cached_len < size) {
                memcpy(subject, f->subj_cached, (size_t) f->subj_cached_len + 1);
                return f->subj_cached_len;
        }
        r = line_subject(arg_host, li, subject, size);
        if (event && r > 0 && li->event_len <= sizeof(f->subj_event) && (size_t) r < sizeof(f->subj_cached)) {
                memcpy(f->subj_event, li->event, li->event_len);
                f->subj_event_len = li->event_len;
                memcpy(f->subj_cached, subject, (size_t) r + 1);
                f->subj_cached_len = r;
        }
        return r;
}

static void fwd_handle_line(struct fwd *f, const char *line, size_t len) {
        char subject[512], id[512];
        struct line_info li;
        int r;

        f->conn_lines++;
        if (line_scan(line, len, &li) < 0)
                li = (struct line_info) { .type = "invalid", .type_len = 7 };
        else
                fwd_check_subscribed(f, &li, line, len);
        r = fwd_line_subject(f, &li, subject, sizeof(subject));
        if (r < 0) {
                li = (struct line_info) { .type = li.type, .type_len = li.type_len };
                r = line_subject(arg_host, &li, subject, sizeof(subject));
        }
        if (r < 0)
                snprintf(subject, sizeof(subject), "evmon.%s._.invalid", "_");
        r = line_with_host(line, len, f->host_json, f->pbuf, LINE_MAX_BYTES + 1024);
        if (r < 0) {
                f->dropped++;
                f->dropped_total++;
                return;
        }
        if (f->conn_lines == 1 && li.type_len == strlen(EVMON_LINE_HELLO) &&
            memcmp(li.type, EVMON_LINE_HELLO, li.type_len) == 0)
                conn_tag_from_hello(f, line, len);
        /* The batch takes the line's id as its own when it is its first. */
        if (f->batching && batcher_add(&f->batches, subject, f->id_tag, f->conn_lines, f->pbuf, (size_t) r,
                                       f->batch_limit, f->read_now) == 0) {
                if (f->batch_oldest == INT64_MAX)
                        f->batch_oldest = f->read_now;
                return;
        }
        snprintf(id, sizeof(id), "%s.%" PRIu64, f->id_tag, f->conn_lines);
        fwd_push(f, subject, id, f->pbuf, (size_t) r, 1);
}

static char *subscribe_line(void) {
        _cleanup_(jbuf_donep) struct jbuf line = {};

        /* Named, for evmond's per-client metrics (doc/metrics.md). */
        if (encode_subscribe_full(&line, &(const struct encode_subscribe) {
                        .events = arg_n_events > 0 ? (const char *const *) arg_events : NULL,
                        .n_events = (size_t) arg_n_events,
                        .pids = arg_n_pids > 0 ? arg_pids : NULL, .n_pids = (size_t) arg_n_pids,
                        .cgroups = arg_n_cgroups > 0 ? (const char *const *) arg_cgroups : NULL,
                        .n_cgroups = (size_t) arg_n_cgroups,
                        .client = "evmon-forward",
                }) < 0 ||
            jbuf_reserve(&line, 1) < 0)
                return NULL;
        line.data[line.len] = '\0';
        return TAKE_PTR(line.data);
}

int evmond_connect(struct fwd *f) {
        _cleanup_(freep) char *sub = NULL;
        _cleanup_(closep) int fd = -1;
        int r;

        fd = evmon_connect(arg_socket);
        if (fd < 0)
                return fd;
        sub = subscribe_line();
        if (!sub)
                return -ENOMEM;
        /* Blocking for this one line, then never again: the loop polls. */
        r = loop_write(fd, sub, strlen(sub));
        if (r < 0)
                return r;
        if (fcntl(fd, F_SETFL, O_NONBLOCK) < 0)
                return -errno;
        {
                char tag[32];

                snprintf(tag, sizeof(tag), "c%" PRIu64, now_ns(CLOCK_REALTIME));
                fwd_set_conn_tag(f, tag);
        }
        f->conn_lines = 0;
        f->rlen = 0;
        f->sub_answered = false;
        f->evmond_fd = TAKE_FD(fd);
        log_info("%s evmond at %s", f->evmond_ever ? "reconnected to" : "connected to", arg_socket);
        fwd_say_event(f, f->evmond_ever ? "reconnected" : "connected", NULL);
        f->evmond_ever = true;
        f->evmond_down_said = false;
        return 0;
}

static void evmond_lost(struct fwd *f, const char *why) {
        f->evmond_fd = safe_close(f->evmond_fd);
        /* evmond went in the middle of a line (killed while it wrote,
         * its queue to us split at the socket's buffer): the part is no
         * line, and the rest will never come. A line lost like any other:
         * counted in the dropped line that follows, and said. */
        if (f->rlen > 0) {
                log_warning("evmond's connection ended in the middle of a line (%zu bytes without its newline); "
                            "dropped and counted", f->rlen);
                f->rlen = 0;
                f->dropped++;
                f->dropped_total++;
        }
        log_warning("lost evmond at %s (%s); trying again every %d ms", arg_socket, why, EVMOND_RETRY_MS);
        fwd_say_event(f, "disconnected", why);
        fwd_report_dropped(f);
        f->evmond_retry_at = now_ms() + EVMOND_RETRY_MS;
}

/* Reads what evmond has; every complete line is queued. */
void evmond_read(struct fwd *f) {
        f->read_now = now_ms();
        f->batch_limit = f->batching ? fwd_batch_limit(f) : 0;
        for (int rounds = 0; rounds < 64; rounds++) {
                ssize_t n = read(f->evmond_fd, f->rbuf + f->rlen, LINE_MAX_BYTES - f->rlen);
                size_t start = 0;

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN)
                                return;
                        evmond_lost(f, strerror(errno));
                        return;
                }
                if (n == 0) {
                        evmond_lost(f, "connection closed");
                        return;
                }
                f->rlen += (size_t) n;
                /* Only what came now can hold a newline: the part kept
                 * from before has none. */
                for (char *nl = memchr(f->rbuf + (f->rlen - (size_t) n), '\n', (size_t) n); nl;
                     nl = memchr(f->rbuf + start, '\n', f->rlen - start)) {
                        fwd_handle_line(f, f->rbuf + start, (size_t) (nl - f->rbuf) - start);
                        start = (size_t) (nl - f->rbuf) + 1;
                }
                memmove(f->rbuf, f->rbuf + start, f->rlen - start);
                f->rlen -= start;
                if (f->rlen == LINE_MAX_BYTES) {
                        /* A line longer than evmond ever writes: skip it. */
                        f->rlen = 0;
                        f->dropped++;
                        f->dropped_total++;
                }
                fwd_report_dropped(f);
        }
}
