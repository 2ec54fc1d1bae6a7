/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* evmon-forward: a client of evmond that publishes every line it gets to
 * NATS (into a JetStream stream when one is named, waiting for each
 * publish acknowledgement), and with --read the reader of what such
 * forwarders published, from any machine.
 *
 * Threads: the main thread reads evmond's socket, queues lines and
 * publishes them; libnats' own threads deliver the JetStream acks
 * (replies to our inbox) and the connection events. struct fwd's lock
 * guards what both touch: the queue's head, the in-flight window and the
 * connection state. */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <limits.h>
#include <nats/nats.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "evmon/human.h"
#include "evmon/protocol.h"
#include "evmon/cleanup.h"
#include "evmon/encode.h"
#include "evmon/io.h"
#include "evmon/jsonc.h"
#include "evmon/log.h"
#include "line.h"
#include "url.h"
#include "queue.h"

#define LINE_MAX_BYTES (1 << 20)
/* How long a publish may wait for its acknowledgement before it and
 * everything after it is sent again (the Nats-Msg-Id makes the repeat
 * count once within the stream's duplicate window). */
#define ACK_TIMEOUT_MS 3000
#define RETRY_BACKOFF_MS 250
/* After the stream refused a publish (a JetStream error: discard new at
 * its limits, ...), one publish at a time, this far apart, until it takes
 * one: what waits is resent once, not the whole window four times a
 * second. */
#define REFUSED_BACKOFF_MS 1000
/* A refusal is logged at once, and every this long while it lasts; "no
 * responders" (no stream took the subject) and no acknowledgement at all
 * only when it lasts this long, since a leader election gives them for a
 * few seconds. */
#define REFUSAL_LOG_MS 30000
#define NO_RESPONDERS_LOG_MS 10000
#define EVMOND_RETRY_MS 500
#define NATS_PING_MS 2000
/* Without --create, a stream JetStream says is not there this long is an
 * error; until then another forwarder may be making it. */
#define STREAM_MISSING_MS 10000

static const char *arg_socket;
static char *arg_nats;
/* --nats split into its URLs, each checked (url.c). */
static char **arg_nats_urls;
static size_t arg_n_nats_urls;
/* --nats for the log: user, password or token in a URL become "***". */
static char nats_shown[1024];
static char arg_host[256];
static const char *arg_stream;
static bool arg_create;
static int arg_replicas = 1;
static int64_t arg_max_age_s;
static int64_t arg_max_bytes_mib;
static size_t arg_buffer_mib = 64;
static unsigned arg_in_flight = 1024;
static char **arg_events;
static int arg_n_events;
/* --pid and --cgroup, each at most one per argument (room for argc). */
static pid_t *arg_pids;
static const char **arg_cgroups;
static size_t arg_n_pids, arg_n_cgroups;
static bool arg_read;
static int arg_json = -1;
static bool arg_no_follow;
static bool arg_new;
static bool arg_host_given;

static int64_t now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint64_t realtime_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

/* Copies the URLs in IN (comma-separated) into BUF with what comes
 * before the last '@' in each (nats://USER:PASSWORD@HOST,
 * nats://TOKEN@HOST) replaced by "***": the journal is no place for
 * credentials. The last, as libnats splits them: a password may hold
 * an '@'. */
static void urls_redact(const char *in, char *buf, size_t size) {
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
static volatile sig_atomic_t stop;

enum slot_state { SLOT_SENT, SLOT_ACKED };

struct fwd {
        pthread_mutex_t lock;
        struct queue q;
        /* The next record to publish: records from the queue's head up to
         * here are in flight (sent, not yet acknowledged). */
        uint64_t send_pos, send_seq;
        unsigned window;                /* a power of two */
        uint64_t *slot_seq;
        int64_t *slot_sent;
        uint8_t *slot_state;
        bool connected;
        bool retry;                     /* send again from the head ... */
        int64_t retry_at;               /* ... at this time */
        bool sleeping, woken;
        int wake_fd;
        bool jetstream;
        /* Publishes failing (a JetStream error or no responders) since
         * REFUSED_SINCE, REFUSALS of them, the last one said in REFUSAL;
         * until one is stored again one publish is out at a time. */
        bool refusing, refusal_js;
        int64_t refused_since;
        uint64_t refusals;
        char refusal[256];
        /* Lines NATS will never take (larger than the server's
         * max_payload or the stream's max message size): taken off the
         * queue like acknowledged ones; the main thread counts them
         * dropped. */
        uint64_t too_big[2];            /* over max_payload, over the stream's max message size */
        size_t too_big_len;

        /* main thread only */
        natsConnection *nc;
        char inbox[128];
        char host_json[600];
        uint64_t dropped;               /* not yet reported in a dropped line */
        uint64_t dropped_total, published_total;
        uint64_t fwd_start_ns, fwd_lines;
        int evmond_fd;
        bool evmond_ever, evmond_down_said;
        /* This connection's subscribe: answered ("subscribed"), or refused
         * ("error": evmond then sends every event, the subscription it
         * had before, none). */
        bool sub_answered, sub_refused;
        bool turned_away_said;  /* the last connection's first line was an error, logged */
        int64_t evmond_retry_at;
        uint64_t conn_lines;
        /* What names this connection's lines in their Nats-Msg-Id: evmond's
         * start and our client number from its hello ("START.CLIENT"),
         * or, from an evmond whose hello lacks them, our connect time. */
        char conn_tag[96];
        char *rbuf;
        size_t rlen;
        char *pbuf;
        bool stream_ready;
        int64_t stream_retry_at;
        bool big_said;
        int64_t refusal_said_at;        /* 0: the current refusal not logged yet */
        int64_t too_big_said_at[2];
        uint64_t too_big_unsaid[2];     /* counted since the last log line saying so */
        /* Dropped lines queued since the last log line saying so, and
         * when that was: a server that drops every line would otherwise
         * get a log line per dropped line. */
        uint64_t dropped_unlogged;
        int64_t dropped_logged_at;
        /* The server's max_payload when even a dropped line did not fit
         * it (0: it fit), that line's size, and when the count was last
         * logged instead. */
        int64_t unsayable_max;
        size_t unsayable_len;
        int64_t unsayable_logged_at;
};

static void fwd_wake_locked(struct fwd *f) {
        uint64_t one = 1;

        if (f->sleeping && !f->woken) {
                f->woken = true;
                (void) !write(f->wake_fd, &one, sizeof(one));
        }
}

/* Drops acknowledged records from the head. Locked. */
static void fwd_advance_locked(struct fwd *f) {
        bool moved = false;

        while (f->q.head_seq < f->send_seq) {
                unsigned s = (unsigned) (f->q.head_seq & (f->window - 1));

                if (f->slot_seq[s] != f->q.head_seq || f->slot_state[s] != SLOT_ACKED)
                        break;
                queue_pop(&f->q);
                moved = true;
        }
        if (moved)
                fwd_wake_locked(f);
}

/* What a failed acknowledgement says, for the log: JetStream's
 * {"error":{"code":…,"err_code":…,"description":…}}, or no responders.
 * Returns JetStream's err_code, or 0. */
static int ack_refusal_text(natsMsg *msg, char *buf, size_t size) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        json_object *err, *desc, *code;

        if (natsMsg_IsNoResponders(msg)) {
                snprintf(buf, size, "no responders: no stream takes the subject (is stream %s there, with "
                         "subjects evmon.>?), or its leader is being elected", arg_stream);
                return 0;
        }
        o = json_tokener_parse(natsMsg_GetData(msg) ?: "");
        if (o && json_object_object_get_ex(o, "error", &err) && json_object_object_get_ex(err, "description", &desc)) {
                if (json_object_object_get_ex(err, "err_code", &code)) {
                        snprintf(buf, size, "%s (JetStream error %d)", json_object_get_string(desc), json_object_get_int(code));
                        return json_object_get_int(code);
                }
                snprintf(buf, size, "%s", json_object_get_string(desc));
        } else
                snprintf(buf, size, "%.200s", natsMsg_GetData(msg) ?: "(an empty reply)");
        return 0;
}

/* A line NATS will never take: off the queue as if acknowledged, counted
 * dropped by the main thread. Locked. */
static void fwd_too_big_locked(struct fwd *f, unsigned s, bool stream, size_t len) {
        if (f->slot_state[s] == SLOT_ACKED)
                return;
        f->slot_state[s] = SLOT_ACKED;
        f->too_big[stream]++;
        if (!stream)
                f->too_big_len = len;
        fwd_advance_locked(f);
}

/* A JetStream publish acknowledgement (or its failure), as the reply to
 * INBOX.SEQ: {"stream":…,"seq":N[,"duplicate":true]}, {"error":{…}}, or
 * a "no responders" status when no server serves the stream's subjects
 * just now (a leader election). */
static void on_ack(natsConnection *nc, natsSubscription *sub, natsMsg *msg, void *userdata) {
        struct fwd *f = userdata;
        const char *subj = natsMsg_GetSubject(msg), *dot = strrchr(subj, '.');
        const char *data = natsMsg_GetData(msg);
        bool no_responders = natsMsg_IsNoResponders(msg);
        bool ok = !no_responders && data && !strstr(data, "\"error\"");
        char refusal[256] = "";
        int jerr = 0;
        uint64_t seq;

        if (!dot) {
                natsMsg_Destroy(msg);
                return;
        }
        seq = strtoull(dot + 1, NULL, 10);
        if (!ok)
                jerr = ack_refusal_text(msg, refusal, sizeof(refusal));
        pthread_mutex_lock(&f->lock);
        if (seq >= f->q.head_seq && seq < f->send_seq) {
                unsigned s = (unsigned) (seq & (f->window - 1));

                if (f->slot_seq[s] == seq) {
                        if (ok) {
                                f->slot_state[s] = SLOT_ACKED;
                                f->refusing = false;
                                fwd_advance_locked(f);
                        } else if (jerr == JSStreamMessageExceedsMaximumErr) {
                                /* Sent again, it would be refused again,
                                 * and hold up every line after it. */
                                fwd_too_big_locked(f, s, true, 0);
                        } else {
                                if (!f->refusing) {
                                        f->refusing = true;
                                        f->refused_since = now_ms();
                                }
                                f->refusals++;
                                f->refusal_js = !no_responders;
                                snprintf(f->refusal, sizeof(f->refusal), "%s", refusal);
                                if (!f->retry) {
                                        f->retry = true;
                                        f->retry_at = now_ms() + (no_responders ? RETRY_BACKOFF_MS : REFUSED_BACKOFF_MS);
                                        fwd_wake_locked(f);
                                }
                        }
                }
        }
        pthread_mutex_unlock(&f->lock);
        natsMsg_Destroy(msg);
}

static void on_disconnected(natsConnection *nc, void *userdata) {
        struct fwd *f = userdata;

        pthread_mutex_lock(&f->lock);
        f->connected = false;
        pthread_mutex_unlock(&f->lock);
        if (!stop)
                log_warning("NATS connection lost; lines wait in the buffer (%zu MiB) until it is back", arg_buffer_mib);
}

static void on_connected(natsConnection *nc, void *userdata) {
        struct fwd *f = userdata;
        char url[256] = "", shown[256];

        natsConnection_GetConnectedUrl(nc, url, sizeof(url));
        urls_redact(url, shown, sizeof(shown));
        pthread_mutex_lock(&f->lock);
        f->connected = true;
        /* What was in flight may or may not have arrived: send it again. */
        f->retry = true;
        f->retry_at = 0;
        fwd_wake_locked(f);
        pthread_mutex_unlock(&f->lock);
        log_info("connected to NATS at %s", shown);
}

static void on_error(natsConnection *nc, natsSubscription *sub, natsStatus err, void *userdata) {
        log_warning("NATS: %s", natsStatus_GetText(err));
}

/* Queues one line with its subject and message id; counts it dropped when
 * the buffer is full. */
static void fwd_push(struct fwd *f, const char *subject, const char *id, const char *data, size_t len) {
        int r;

        pthread_mutex_lock(&f->lock);
        r = queue_push(&f->q, subject, id, data, len);
        pthread_mutex_unlock(&f->lock);
        if (r == -E2BIG && !f->big_said) {
                log_warning("a line of %zu bytes does not fit in the buffer (--buffer-mib %zu); dropped and counted", len, arg_buffer_mib);
                f->big_said = true;
        }
        if (r < 0) {
                f->dropped++;
                f->dropped_total++;
        }
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
        r = queue_push(&f->q, subject, id, f->pbuf, (size_t) r);
        pthread_mutex_unlock(&f->lock);
        return r;
}

static void fwd_say_event(struct fwd *f, const char *event, const char *detail) {
        _cleanup_(jbuf_donep) struct jbuf line = {};

        if (encode_forwarder(&line, event, realtime_ns(), arg_socket, detail, f->dropped_total) < 0 ||
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
static void fwd_report_dropped(struct fwd *f) {
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
            json_object_object_get_ex(o, "client", &client) && json_object_is_type(client, json_type_int))
                snprintf(f->conn_tag, sizeof(f->conn_tag), "%s.%" PRIu64, json_object_get_string(start),
                         json_object_get_uint64(client));
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

static void fwd_handle_line(struct fwd *f, const char *line, size_t len) {
        char subject[512], id[512];
        struct line_info li;
        int r;

        f->conn_lines++;
        if (line_scan(line, len, &li) < 0)
                li = (struct line_info) { .type = "invalid", .type_len = 7 };
        else
                fwd_check_subscribed(f, &li, line, len);
        r = line_subject(arg_host, &li, subject, sizeof(subject));
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
        snprintf(id, sizeof(id), "%s.%s.%" PRIu64, arg_host, f->conn_tag, f->conn_lines);
        fwd_push(f, subject, id, f->pbuf, (size_t) r);
}

static char *subscribe_line(void) {
        _cleanup_(jbuf_donep) struct jbuf line = {};

        if (encode_subscribe_targets(&line, arg_n_events > 0 ? (const char *const *) arg_events : NULL,
                                     (size_t) arg_n_events, arg_n_pids > 0 ? arg_pids : NULL, arg_n_pids,
                                     arg_n_cgroups > 0 ? arg_cgroups : NULL, arg_n_cgroups) < 0 ||
            jbuf_reserve(&line, 1) < 0)
                return NULL;
        line.data[line.len] = '\0';
        return TAKE_PTR(line.data);
}

static int evmond_connect(struct fwd *f) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_(freep) char *sub = NULL;
        _cleanup_(closep) int fd = -1;
        int r;

        if (strlen(arg_socket) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, arg_socket);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return -errno;
        sub = subscribe_line();
        if (!sub)
                return -ENOMEM;
        /* Blocking for this one line, then never again: the loop polls. */
        r = loop_write(fd, sub, strlen(sub));
        if (r < 0)
                return r;
        if (fcntl(fd, F_SETFL, O_NONBLOCK) < 0)
                return -errno;
        snprintf(f->conn_tag, sizeof(f->conn_tag), "c%" PRIu64, realtime_ns());
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
static void evmond_read(struct fwd *f) {
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
                for (size_t i = 0; i < f->rlen; i++)
                        if (f->rbuf[i] == '\n') {
                                fwd_handle_line(f, f->rbuf + start, i - start);
                                start = i + 1;
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

/* Logs that the stream refuses publishes (at once for a JetStream error,
 * after NO_RESPONDERS_LOG_MS for no responders; again every
 * REFUSAL_LOG_MS), and that it takes them again. */
static void fwd_report_refusal(struct fwd *f) {
        char refusal[256];
        bool refusing, js;
        int64_t since, now = now_ms();
        uint64_t n;

        pthread_mutex_lock(&f->lock);
        refusing = f->refusing;
        js = f->refusal_js;
        since = f->refused_since;
        n = f->refusals;
        snprintf(refusal, sizeof(refusal), "%s", f->refusal);
        pthread_mutex_unlock(&f->lock);

        if (!refusing) {
                if (f->refusal_said_at > 0)
                        log_info("stream %s takes lines again", arg_stream);
                f->refusal_said_at = 0;
                return;
        }
        if (f->refusal_said_at > 0 ? now - f->refusal_said_at < REFUSAL_LOG_MS
                                   : now - since < (js ? 0 : NO_RESPONDERS_LOG_MS))
                return;
        log_warning("stream %s refuses lines for %" PRId64 " s (%" PRIu64 " refusals in all): %s; trying again one line "
                    "at a time, lines wait in the buffer (--buffer-mib %zu) and what does not fit is dropped and counted",
                    arg_stream, (now - since) / 1000, n, refusal, arg_buffer_mib);
        f->refusal_said_at = now;
}

/* Counts the lines NATS will never take as dropped (said in a dropped
 * line like any other) and logs them, at most every REFUSAL_LOG_MS. */
static void fwd_count_too_big(struct fwd *f) {
        uint64_t n[2];
        size_t len;
        int64_t now = now_ms();

        pthread_mutex_lock(&f->lock);
        memcpy(n, f->too_big, sizeof(n));
        len = f->too_big_len;
        memset(f->too_big, 0, sizeof(f->too_big));
        pthread_mutex_unlock(&f->lock);
        for (int stream = 0; stream < 2; stream++) {
                if (n[stream] == 0)
                        continue;
                f->dropped += n[stream];
                f->dropped_total += n[stream];
                f->too_big_unsaid[stream] += n[stream];
                if (f->too_big_said_at[stream] > 0 && now - f->too_big_said_at[stream] < REFUSAL_LOG_MS)
                        continue;
                if (!stream)
                        log_warning("a line of %zu bytes is larger than the NATS server takes (max_payload %" PRId64
                                    " bytes); dropped and counted (%" PRIu64 " such lines since the last report)",
                                    len, natsConnection_GetMaxPayload(f->nc), f->too_big_unsaid[stream]);
                else
                        log_warning("stream %s refuses a line larger than its max message size (JetStream error %d); "
                                    "dropped and counted (%" PRIu64 " such lines since the last report)",
                                    arg_stream, JSStreamMessageExceedsMaximumErr, f->too_big_unsaid[stream]);
                f->too_big_said_at[stream] = now;
                f->too_big_unsaid[stream] = 0;
        }
}

/* Publishes what the in-flight window allows. */
static void fwd_publish(struct fwd *f) {
        int64_t now = now_ms();

        pthread_mutex_lock(&f->lock);
        if (f->connected && f->send_seq > f->q.head_seq) {
                unsigned s = (unsigned) (f->q.head_seq & (f->window - 1));
                if (f->slot_seq[s] == f->q.head_seq && now - f->slot_sent[s] > ACK_TIMEOUT_MS && !f->retry) {
                        f->retry = true;
                        f->retry_at = now;
                        /* No answer at all (a stream without quorum, a
                         * leader that does not answer): a refusal too,
                         * said and sent one at a time until it passes. */
                        if (!f->refusing) {
                                f->refusing = true;
                                f->refused_since = f->slot_sent[s];
                        }
                        f->refusals++;
                        f->refusal_js = false;
                        snprintf(f->refusal, sizeof(f->refusal), "no acknowledgement within %d ms (is the stream's "
                                 "leader up, with a quorum of its replicas?)", ACK_TIMEOUT_MS);
                }
        }
        if (f->retry && f->connected && now >= f->retry_at) {
                f->retry = false;
                f->send_pos = f->q.head;
                f->send_seq = f->q.head_seq;
        }
        /* While the stream refuses, one publish at a time. */
        while (f->connected && !f->retry && f->send_seq - f->q.head_seq < (f->refusing ? 1 : f->window)) {
                struct queue_rec rec;
                uint64_t seq;
                unsigned s;
                natsMsg *m = NULL;
                natsStatus st;
                char reply[160];

                if (queue_peek(&f->q, &f->send_pos, &rec) == 0)
                        break;
                seq = f->send_seq++;
                s = (unsigned) (seq & (f->window - 1));
                /* Sent again from the head: one acknowledged already
                 * (or taken off as too large) is not sent again. */
                if (f->slot_seq[s] == seq && f->slot_state[s] == SLOT_ACKED)
                        continue;
                f->slot_seq[s] = seq;
                f->slot_state[s] = SLOT_SENT;
                f->slot_sent[s] = now;
                pthread_mutex_unlock(&f->lock);

                if (f->jetstream) {
                        snprintf(reply, sizeof(reply), "%s.%" PRIu64, f->inbox, seq);
                        st = natsMsg_Create(&m, rec.subject, reply, rec.data, (int) rec.len);
                        if (st == NATS_OK)
                                st = natsMsgHeader_Set(m, "Nats-Msg-Id", rec.id);
                        if (st == NATS_OK)
                                st = natsMsgHeader_Set(m, "Nats-Expected-Stream", arg_stream);
                        if (st == NATS_OK)
                                st = natsConnection_PublishMsg(f->nc, m);
                        natsMsg_Destroy(m);
                } else
                        st = natsConnection_Publish(f->nc, rec.subject, rec.data, (int) rec.len);

                pthread_mutex_lock(&f->lock);
                if (st == NATS_MAX_PAYLOAD) {
                        /* Larger than the server takes: never sent. */
                        fwd_too_big_locked(f, s, false, rec.len);
                        continue;
                }
                if (st != NATS_OK) {
                        f->retry = true;
                        f->retry_at = now + RETRY_BACKOFF_MS;
                        break;
                }
                f->published_total++;
                if (!f->jetstream) {
                        /* Core NATS has no acknowledgement: handed to the
                         * connection is as far as it goes. */
                        f->slot_state[s] = SLOT_ACKED;
                        fwd_advance_locked(f);
                }
        }
        pthread_mutex_unlock(&f->lock);
}

static int fwd_create_stream(struct fwd *f) {
        jsCtx *js = NULL;
        jsStreamInfo *si = NULL;
        jsStreamConfig sc;
        jsErrCode jerr = 0;
        const char *subjects[] = { "evmon.>" };
        natsStatus st;

        st = natsConnection_JetStream(&js, f->nc, NULL);
        if (st != NATS_OK)
                return -EIO;
        jsStreamConfig_Init(&sc);
        sc.Name = arg_stream;
        sc.Subjects = subjects;
        sc.SubjectsLen = 1;
        sc.Retention = js_LimitsPolicy;
        sc.Storage = js_FileStorage;
        sc.Replicas = arg_replicas;
        sc.MaxAge = arg_max_age_s * 1000000000;
        sc.MaxBytes = arg_max_bytes_mib > 0 ? arg_max_bytes_mib << 20 : -1;
        sc.Duplicates = (int64_t) 120 * 1000000000;
        st = js_AddStream(&si, js, &sc, NULL, &jerr);
        if (st != NATS_OK && jerr == JSStreamNameExistErr) {
                log_warning("stream %s exists already with another config; using it as it is", arg_stream);
                st = NATS_OK;
        }
        jsStreamInfo_Destroy(si);
        jsCtx_Destroy(js);
        /* What waiting does not mend: said, and the forwarder stops (it
         * tried again every second, for good). */
        if (st != NATS_OK && jerr == JSStreamSubjectOverlapErr) {
                log_error("stream %s cannot be made: another stream on NATS at %s takes its subjects evmon.> "
                          "(JetStream error %d): name that stream with --stream, or remove it",
                          arg_stream, nats_shown, (int) jerr);
                return -ENOENT;
        }
        if (st != NATS_OK && jerr == JSStreamReplicasNotSupportedErr) {
                log_error("stream %s cannot be made with --replicas %d: NATS at %s is no cluster (JetStream error "
                          "%d): give --replicas 1, or the cluster's URLs", arg_stream, arg_replicas, nats_shown,
                          (int) jerr);
                return -ENOENT;
        }
        if (st != NATS_OK) {
                log_warning("cannot create stream %s yet (%s, JetStream error %d); trying again",
                      arg_stream, nats_GetLastError(NULL), (int) jerr);
                return -EAGAIN;
        }
        log_info("stream %s ready (subjects evmon.>, %d replicas)", arg_stream, arg_replicas);
        return 0;
}

/* Without --create: whether the stream is there. 0 when it is, -ENOENT
 * (said) when JetStream has said it does not exist for STREAM_MISSING_MS
 * (another forwarder started with --create may be making it), -EAGAIN
 * until then or when it cannot be known yet (no JetStream leader, a
 * timeout). */
static int fwd_check_stream(struct fwd *f) {
        static int64_t said_at, missing_since;
        jsCtx *js = NULL;
        jsStreamInfo *si = NULL;
        jsErrCode jerr = 0;
        natsStatus st;

        st = natsConnection_JetStream(&js, f->nc, NULL);
        if (st == NATS_OK)
                st = js_GetStreamInfo(&si, js, arg_stream, NULL, &jerr);
        jsStreamInfo_Destroy(si);
        jsCtx_Destroy(js);
        if (st == NATS_OK) {
                log_info("stream %s ready", arg_stream);
                return 0;
        }
        if (jerr == JSStreamNotFoundErr) {
                if (missing_since == 0) {
                        missing_since = now_ms();
                        log_warning("stream %s does not exist on NATS at %s (yet?); looking again every second for %d s",
                                    arg_stream, nats_shown, STREAM_MISSING_MS / 1000);
                }
                if (now_ms() - missing_since < STREAM_MISSING_MS)
                        return -EAGAIN;
                log_error("stream %s does not exist on NATS at %s: make it (add --create, with --replicas 3 on a "
                          "three-node cluster) or name an existing one with --stream", arg_stream, nats_shown);
                return -ENOENT;
        }
        if (said_at == 0 || now_ms() - said_at >= REFUSAL_LOG_MS) {
                log_warning("cannot look up stream %s yet (%s, JetStream error %d; is JetStream on?); trying again every "
                            "second, lines wait in the buffer", arg_stream, nats_GetLastError(NULL), (int) jerr);
                said_at = now_ms();
        }
        return -EAGAIN;
}

/* Makes or looks up the stream (once connected, until it is there); false
 * when the forwarder cannot go on: the stream does not exist and
 * --create was not given, or JetStream will never make it (another
 * stream takes evmon.>, --replicas on a server without a cluster). */
static bool fwd_stream_setup(struct fwd *f) {
        int r;

        if (f->stream_ready || !f->connected || now_ms() < f->stream_retry_at)
                return true;
        r = arg_create ? fwd_create_stream(f) : fwd_check_stream(f);
        if (r == -ENOENT)
                return false;
        if (r == 0)
                f->stream_ready = true;
        else
                f->stream_retry_at = now_ms() + 1000;
        return true;
}

/* Options with --nats' servers, every one of them (it took the first 16). */
static natsStatus nats_options_new(natsOptions **ret) {
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

static int run_forward(void) {
        struct fwd f = { .evmond_fd = -1, .wake_fd = -1 };
        natsOptions *opts = NULL;
        natsSubscription *sub = NULL;
        _cleanup_(closep) int sfd = -1;
        sigset_t mask;
        natsStatus st;
        int r, ret = 0;
        int64_t stop_deadline = 0;
        json_object *hj;

        pthread_mutex_init(&f.lock, NULL);
        f.window = 1;
        while (f.window < arg_in_flight)
                f.window <<= 1;
        f.slot_seq = calloc(f.window, sizeof(uint64_t));
        f.slot_sent = calloc(f.window, sizeof(int64_t));
        f.slot_state = calloc(f.window, 1);
        f.rbuf = malloc(LINE_MAX_BYTES);
        f.pbuf = malloc(LINE_MAX_BYTES + 1024);
        if (!f.slot_seq || !f.slot_sent || !f.slot_state || !f.rbuf || !f.pbuf) {
                ret = -ENOMEM;
                goto out;
        }
        for (unsigned i = 0; i < f.window; i++)
                f.slot_seq[i] = UINT64_MAX;
        r = queue_init(&f.q, arg_buffer_mib << 20);
        if (r < 0) {
                ret = r;
                goto out;
        }
        hj = json_object_new_string(arg_host);
        snprintf(f.host_json, sizeof(f.host_json), "%s", json_object_to_json_string_ext(hj, JSON_C_TO_STRING_PLAIN));
        json_object_put(hj);
        f.fwd_start_ns = realtime_ns();
        f.jetstream = arg_stream != NULL;
        f.stream_ready = !f.jetstream;

        f.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        if (f.wake_fd < 0 || sfd < 0) {
                ret = -errno;
                goto out;
        }

        /* libnats reconnects by itself (forever, every 250 ms, to any of
         * the URLs and the servers the cluster announces); the forwarder
         * sends again whatever was in flight when it comes back. */
        st = nats_options_new(&opts);
        if (st == NATS_OK)
                st = natsOptions_SetMaxReconnect(opts, -1);
        if (st == NATS_OK)
                st = natsOptions_SetReconnectWait(opts, 250);
        if (st == NATS_OK)
                st = natsOptions_SetDisconnectedCB(opts, on_disconnected, &f);
        if (st == NATS_OK)
                st = natsOptions_SetReconnectedCB(opts, on_connected, &f);
        if (st == NATS_OK)
                st = natsOptions_SetErrorHandler(opts, on_error, &f);
        if (st == NATS_OK)
                st = natsOptions_SetMaxPendingMsgs(opts, 1 << 20);
        /* A server that hangs (stopped, not dead: the connection stays
         * up) is left within seconds, not libnats' default 2 min × 2
         * PINGs: a PING every 2 s, stale after 3 unanswered; and a write
         * into its full socket gives up after 2 s instead of blocking
         * this thread, and evmond's socket with it, for good. */
        if (st == NATS_OK)
                st = natsOptions_SetPingInterval(opts, NATS_PING_MS);
        if (st == NATS_OK)
                st = natsOptions_SetMaxPingsOut(opts, 3);
        if (st == NATS_OK)
                st = natsOptions_SetWriteDeadline(opts, NATS_PING_MS);
        if (st != NATS_OK) {
                log_error("bad NATS options (--nats %s): %s", nats_shown, nats_GetLastError(NULL));
                ret = -EINVAL;
                goto out;
        }
        /* Once without retrying, to tell a server that refuses us (which
         * waiting does not mend) from none answering yet (a cluster
         * starting: lines wait in the buffer). */
        st = natsConnection_Connect(&f.nc, opts);
        if (st == NATS_CONNECTION_AUTH_FAILED || st == NATS_NOT_PERMITTED) {
                log_error("NATS at %s refuses to let us in (%s): give the user and password "
                          "(nats://USER:PASSWORD@HOST:4222) or token (nats://TOKEN@HOST:4222) its authorization "
                          "block expects", nats_shown, natsStatus_GetText(st));
                ret = -EACCES;
                goto out;
        }
        if (st != NATS_OK) {
                log_warning("no NATS server at %s answers yet (%s); trying again every 250 ms, lines wait in the "
                            "buffer meanwhile", nats_shown, natsStatus_GetText(st));
                st = natsOptions_SetRetryOnFailedConnect(opts, true, on_connected, &f);
                if (st == NATS_OK)
                        st = natsConnection_Connect(&f.nc, opts);
        } else
                log_info("connected to NATS at %s", nats_shown);
        if (st == NATS_OK) {
                pthread_mutex_lock(&f.lock);
                f.connected = true;
                pthread_mutex_unlock(&f.lock);
        } else if (st != NATS_NOT_YET_CONNECTED) {
                log_error("cannot connect to NATS at %s: %s", nats_shown, nats_GetLastError(NULL));
                ret = -ECONNREFUSED;
                goto out;
        }
        if (f.jetstream) {
                natsInbox *inbox = NULL;
                natsInbox_Create(&inbox);
                snprintf(f.inbox, sizeof(f.inbox), "%s", (const char *) inbox);
                natsInbox_Destroy(inbox);
                char subj[160];
                snprintf(subj, sizeof(subj), "%s.*", f.inbox);
                st = natsConnection_Subscribe(&sub, f.nc, subj, on_ack, &f);
                if (st == NATS_OK)
                        st = natsSubscription_SetPendingLimits(sub, -1, -1);
                if (st != NATS_OK) {
                        log_error("cannot subscribe to the acknowledgements: %s", nats_GetLastError(NULL));
                        ret = -EIO;
                        goto out;
                }
        }

        /* A stream that is not there is said before any line is read. */
        if (!fwd_stream_setup(&f)) {
                ret = -ENOENT;
                stop = 1;
                goto out;
        }
        r = evmond_connect(&f);
        if (r < 0) {
                log_warning("cannot connect to evmond at %s: %s; trying again every %d ms", arg_socket, strerror(-r), EVMOND_RETRY_MS);
                f.evmond_retry_at = now_ms() + EVMOND_RETRY_MS;
                f.evmond_down_said = true;
        }

        for (;;) {
                struct pollfd pfd[3] = {
                        { .fd = f.wake_fd, .events = POLLIN },
                        { .fd = sfd, .events = POLLIN },
                        { .fd = f.evmond_fd, .events = POLLIN },
                };
                int64_t now = now_ms();
                bool busy;
                int timeout;

                if (!stop && !fwd_stream_setup(&f)) {
                        /* Looked up only now (NATS was down at start):
                         * what is queued cannot go anywhere. */
                        ret = -ENOENT;
                        stop = 1;
                        stop_deadline = now;
                }
                if (f.evmond_fd < 0 && !stop && now >= f.evmond_retry_at) {
                        r = evmond_connect(&f);
                        if (r < 0)
                                f.evmond_retry_at = now + EVMOND_RETRY_MS;
                }
                if (f.stream_ready)
                        fwd_publish(&f);
                if (f.jetstream)
                        fwd_report_refusal(&f);
                fwd_count_too_big(&f);

                pthread_mutex_lock(&f.lock);
                busy = queue_count(&f.q) > 0 || f.retry || f.evmond_fd < 0;
                if (stop && (queue_count(&f.q) == 0 || now >= stop_deadline)) {
                        if (queue_count(&f.q) > 0) {
                                log_warning("stopping with %" PRIu64 " lines not acknowledged", queue_count(&f.q));
                                if (ret == 0)
                                        ret = -ETIMEDOUT;
                        }
                        pthread_mutex_unlock(&f.lock);
                        break;
                }
                f.sleeping = true;
                f.woken = false;
                pthread_mutex_unlock(&f.lock);

                timeout = busy ? 50 : 1000;
                r = poll(pfd, f.evmond_fd >= 0 && !stop ? 3 : 2, timeout);
                pthread_mutex_lock(&f.lock);
                f.sleeping = false;
                pthread_mutex_unlock(&f.lock);
                if (r < 0 && errno != EINTR) {
                        ret = -errno;
                        break;
                }
                if (pfd[0].revents) {
                        uint64_t v;
                        (void) !read(f.wake_fd, &v, sizeof(v));
                }
                if (pfd[1].revents) {
                        struct signalfd_siginfo si;
                        (void) !read(sfd, &si, sizeof(si));
                        if (!stop) {
                                stop = 1;
                                /* What is queued gets 5 s to be acknowledged. */
                                stop_deadline = now_ms() + 5000;
                                log_info("stopping: publishing what is queued");
                        }
                }
                if (f.evmond_fd >= 0 && !stop && pfd[2].revents)
                        evmond_read(&f);
                if (f.sub_refused && !stop) {
                        /* What came so far (the refusal among it) gets
                         * 5 s to be acknowledged. */
                        stop = 1;
                        stop_deadline = now_ms() + 5000;
                        ret = -EINVAL;
                }
                if (f.dropped > 0)
                        fwd_report_dropped(&f);
        }
        log_info("published %" PRIu64 " lines, dropped %" PRIu64, f.published_total, f.dropped_total);
out:
        safe_close(f.evmond_fd);
        /* Close (which joins libnats' read loop) before freeing the
         * acknowledgement subscription: see struct reader. */
        natsConnection_Close(f.nc);
        natsSubscription_Destroy(sub);
        natsConnection_Destroy(f.nc);
        natsOptions_Destroy(opts);
        nats_Close();
        queue_done(&f.q);
        free(f.slot_seq);
        free(f.slot_sent);
        free(f.slot_state);
        free(f.rbuf);
        free(f.pbuf);
        safe_close(f.wake_fd);
        return ret;
}

/* ---- the reader ---- */

/* The subject for EVENT ("SYSTEM:NAME", a pattern allowed): a part with
 * a wildcard becomes "*" and the reader matches the name itself. */
static int event_subject(const char *host, const char *event, char *buf, size_t size, bool *ret_glob) {
        const char *colon = strchr(event, ':');
        size_t pos = 0;
        int r;

        *ret_glob = strpbrk(event, "*?[") != NULL;
        if (!colon || strcmp(event, "*") == 0) {
                *ret_glob = true;
                return snprintf(buf, size, "evmon.%s.>", host) < (int) size ? 0 : -ENOBUFS;
        }
        pos = (size_t) snprintf(buf, size, "evmon.%s.", host);
        if (pos >= size)
                return -ENOBUFS;
        if (strpbrk(event, "*?[") && strpbrk(event, "*?[") < colon)
                r = subject_part_append(buf, size, &pos, "*", 1) == 0 ? 0 : -ENOBUFS;
        else
                r = subject_part_append(buf, size, &pos, event, (size_t) (colon - event));
        if (r < 0 || pos + 2 > size)
                return -ENOBUFS;
        buf[pos++] = '.';
        buf[pos] = '\0';
        if (strpbrk(colon + 1, "*?["))
                return subject_part_append(buf, size, &pos, "*", 1);
        return subject_part_append(buf, size, &pos, colon + 1, strlen(colon + 1));
}

static bool reader_wants(const char *data, int len) {
        struct line_info li;
        char ev[512];
        int n;

        if (arg_n_events == 0)
                return true;
        if (line_scan(data, (size_t) len, &li) < 0 || !li.event)
                return false;
        /* The name, not its JSON text, as line_subject() routes it. */
        n = line_unescape(li.event, li.event_len, ev, sizeof(ev) - 1);
        if (n < 0)
                return false;
        ev[n] = '\0';
        for (int i = 0; i < arg_n_events; i++)
                if (fnmatch(arg_events[i], ev, 0) == 0)
                        return true;
        return false;
}

/* The reader of a stream: a push consumer without acks delivering to a
 * subscription of ours. When lines go missing on the way (the consumer's
 * sequence skips, or it says it pushed more than arrived: a server drops
 * what a connection cannot take in time, and an ack-less consumer never
 * sends it again), the reader makes a new consumer from the stream
 * sequence after the last line it printed, as libnats' ordered consumer
 * does (that one's reset crashed libnats 3.4 under the fault tests).
 *
 * Subscriptions are never freed before the connection is closed: libnats
 * 3.4's read loop finds a message's subscription under the connection's
 * lock, drops that lock, then takes the subscription's, so one freed in
 * between (natsSubscription_Destroy() while a server still pushes to it)
 * crashed it in natsConn_processMsg() (issue 16; fixed upstream by nats.c
 * #638, libnats 3.5). For the same reason the consumer is made here, not
 * by js_SubscribeSync(), which frees its own subscription when a
 * consumer's creation fails half-way in a leader election (made on the
 * server, the reply lost) while the server already pushes to it. */
struct reader {
        natsConnection *nc;
        jsCtx *js;
        const char *subject;
        natsSubscription *subs[64];     /* subs[n_subs - 1] is read; the others are unsubscribed, and
                                         * freed only after the close */
        unsigned n_subs;
        char consumer[96];              /* "" while there is none */
        uint64_t cseq, sseq;            /* the consumer and stream sequence of the last line */
        uint64_t received;              /* lines from this consumer */
};

/* One attempt at a consumer delivering to a new subscription. */
static natsStatus reader_consumer_try(struct reader *rd, uint64_t start_seq, jsErrCode *ret_jerr) {
        natsInbox *inbox = NULL;
        jsConsumerConfig cc;
        jsConsumerInfo *ci = NULL;
        char name[96], deliver[128];
        const char *nuid;
        natsSubscription *sub = NULL;
        natsStatus st;

        if (rd->n_subs == ELEMENTSOF(rd->subs))
                return NATS_ERR;
        st = natsInbox_Create(&inbox);
        if (st != NATS_OK)
                return st;
        nuid = strrchr((const char *) inbox, '.');
        snprintf(name, sizeof(name), "evmon-read-%s", nuid ? nuid + 1 : (const char *) inbox);
        snprintf(deliver, sizeof(deliver), "%s", (const char *) inbox);
        natsInbox_Destroy(inbox);
        st = natsConnection_SubscribeSync(&sub, rd->nc, deliver);
        if (st != NATS_OK)
                return st;
        rd->subs[rd->n_subs++] = sub;
        /* The stream's history may come faster than it is printed: wait
         * in memory rather than drop (libnats' default is 65536). */
        st = natsSubscription_SetPendingLimits(sub, -1, -1);
        if (st != NATS_OK)
                return st;
        jsConsumerConfig_Init(&cc);
        cc.Name = name;
        cc.DeliverSubject = deliver;
        cc.FilterSubject = rd->subject;
        /* No acks: nothing to redeliver, the reader only looks. */
        cc.AckPolicy = js_AckNone;
        if (start_seq > 0) {
                cc.DeliverPolicy = js_DeliverByStartSequence;
                cc.OptStartSeq = start_seq;
        } else
                cc.DeliverPolicy = arg_new ? js_DeliverNew : js_DeliverAll;
        /* Gone 30 s after the reader is (deleted at the end too). */
        cc.InactiveThreshold = (int64_t) 30 * 1000000000;
        st = js_AddConsumer(&ci, rd->js, arg_stream, &cc, NULL, ret_jerr);
        jsConsumerInfo_Destroy(ci);
        if (st != NATS_OK) {
                /* Made on the server all the same, perhaps (the reply
                 * lost): whatever it pushes to this subscription goes
                 * nowhere once unsubscribed, and the consumer goes when
                 * idle. Unsubscribed, not freed: see struct reader. */
                (void) natsSubscription_Unsubscribe(sub);
                return st;
        }
        snprintf(rd->consumer, sizeof(rd->consumer), "%s", name);
        rd->cseq = 0;
        rd->received = 0;
        return NATS_OK;
}

/* A consumer delivering to a new subscription, from stream sequence
 * START_SEQ (0: the reader's --new or everything). A cluster that lost a
 * node takes a few seconds to elect new leaders, and consumers cannot be
 * made until then: each attempt has a name and subscription of its own,
 * so one whose reply was lost (made on the server all the same) delivers
 * nothing the reader reads twice, and one stuck on a server that died
 * does not hold up the next. */
static natsStatus reader_consumer_new(struct reader *rd, uint64_t start_seq) {
        natsStatus st = NATS_ERR;

        for (int i = 0; i <= 30 && !stop; i++) {
                jsErrCode jerr = 0;

                if (i > 0)
                        sleep(1);
                st = reader_consumer_try(rd, start_seq, &jerr);
                if (st == NATS_OK || jerr == JSStreamNotFoundErr)
                        break;
        }
        return st;
}

static void reader_consumer_delete(struct reader *rd) {
        jsOptions jo;

        if (!rd->consumer[0])
                return;
        jsOptions_Init(&jo);
        jo.Wait = 1000;
        /* Best effort: it goes by itself once idle. */
        (void) js_DeleteConsumer(rd->js, arg_stream, rd->consumer, &jo, NULL);
        rd->consumer[0] = '\0';
}

/* MISSING lines went missing: a new consumer from the line after the
 * last one printed. */
static natsStatus reader_resume(struct reader *rd, uint64_t missing) {
        log_warning("%" PRIu64 " lines of %s were sent but did not arrive (dropped on the way); reading on from stream "
              "sequence %" PRIu64, missing, rd->subject, rd->sseq + 1);
        reader_consumer_delete(rd);
        (void) natsSubscription_Unsubscribe(rd->subs[rd->n_subs - 1]);
        /* Nothing printed yet: from where the first one started. */
        return reader_consumer_new(rd, rd->sseq > 0 ? rd->sseq + 1 : 0);
}

/* After 2 s without a line: true when the consumer has nothing left for
 * us; when it pushed more than arrived, the number missing in
 * *RET_MISSING. */
static bool reader_caught_up(struct reader *rd, uint64_t *ret_missing) {
        jsConsumerInfo *ci = NULL;
        jsOptions jo;
        bool done = false;

        *ret_missing = 0;
        jsOptions_Init(&jo);
        jo.Wait = 2000;
        if (js_GetConsumerInfo(&ci, rd->js, arg_stream, rd->consumer, &jo, NULL) != NATS_OK)
                return false;
        if (ci->Delivered.Consumer > rd->received)
                *ret_missing = ci->Delivered.Consumer - rd->received;
        else if (ci->NumPending == 0)
                done = true;
        jsConsumerInfo_Destroy(ci);
        return done;
}

/* Ends the connection (which joins libnats' read loop) before freeing any
 * subscription; the consumer is deleted first, so the servers stop
 * pushing. */
static void reader_close(struct reader *rd) {
        if (rd->js)
                reader_consumer_delete(rd);
        natsConnection_Close(rd->nc);
        for (unsigned i = 0; i < rd->n_subs; i++)
                natsSubscription_Destroy(rd->subs[i]);
        jsCtx_Destroy(rd->js);
        natsConnection_Destroy(rd->nc);
        nats_Close();
}

static bool reader_tty;                 /* standard output is a terminal */
static uint64_t reader_not_json;        /* payloads that were no JSON object, not printed */

/* The payload as one JSON object, or NULL: all of its LEN bytes (one
 * value, nothing after it but blanks). */
static json_object *reader_parse(const char *data, size_t len) {
        _cleanup_(json_tokener_freep) json_tokener *tok = json_tokener_new();
        json_object *o;
        size_t end;

        if (!tok || len > INT_MAX)
                return NULL;
        o = json_tokener_parse_ex(tok, data, (int) len);
        if (!o)
                return NULL;
        end = json_tokener_get_parse_end(tok);
        while (end < len && data[end] != '\0' && strchr(" \t\r\n", data[end]))
                end++;
        if (end < len || !json_object_is_type(o, json_type_object)) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

/* Anyone who may publish on evmon.> writes what is printed here, not
 * only forwarders: the payload is escaped for a terminal in both views.
 * With --json a line is one JSON object: a payload that is one is written
 * as it is when it holds no control byte (no raw newline splits it, no
 * ESC reaches a terminal), else encoded again by json-c, which escapes
 * them; on a terminal DEL and the C1 controls are escaped too
 * (human_put_json()). A payload that is no JSON object is not printed:
 * counted, the first one said on standard error, the count at the end. */
static void reader_print(natsMsg *m) {
        const char *data = natsMsg_GetData(m);
        int len = natsMsg_GetDataLength(m);
        _cleanup_(json_object_putp) json_object *o = NULL;
        bool raw = true;

        if (!data || len < 0 || !reader_wants(data, len))
                return;
        o = reader_parse(data, (size_t) len);
        if (!o) {
                if (reader_not_json++ == 0)
                        log_warning("a message on %s is no JSON object (%d bytes): not printed; such messages "
                                    "are counted and the count said when the reader stops",
                                    natsMsg_GetSubject(m), len);
                return;
        }
        if (!arg_json) {
                human_print(stdout, o);
                return;
        }
        for (int i = 0; i < len; i++)
                if ((unsigned char) data[i] < 0x20) {
                        raw = false;
                        break;
                }
        if (raw && !reader_tty) {
                fwrite(data, 1, (size_t) len, stdout);
        } else {
                const char *s = raw ? data : json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                                                 JSON_C_TO_STRING_NOSLASHESCAPE);
                size_t n = raw ? (size_t) len : strlen(s);

                if (reader_tty)
                        human_put_json(stdout, s, n);
                else
                        fwrite(s, 1, n, stdout);
        }
        putchar('\n');
}

static int run_read(void) {
        struct reader rd = {};
        natsOptions *opts = NULL;
        natsStatus st;
        char subject[512];
        bool filter = false;
        const char *host = arg_host_given ? arg_host : "*";
        char host_part[260];
        size_t hp = 0;
        int ret = 0;
        bool got_any = false;

        if (strcmp(host, "*") == 0)
                strcpy(host_part, "*");
        else if (subject_part_append(host_part, sizeof(host_part), &hp, host, strlen(host)) < 0)
                return -ENOBUFS;
        if (arg_n_events == 1) {
                if (event_subject(host_part, arg_events[0], subject, sizeof(subject), &filter) < 0)
                        return -ENOBUFS;
        } else {
                snprintf(subject, sizeof(subject), "evmon.%s.>", host_part);
                filter = arg_n_events > 1;
        }
        rd.subject = subject;

        st = nats_options_new(&opts);
        if (st == NATS_OK)
                st = natsConnection_Connect(&rd.nc, opts);
        natsOptions_Destroy(opts);
        if (st != NATS_OK) {
                log_error("cannot connect to NATS at %s: %s", nats_shown, nats_GetLastError(NULL));
                return -ECONNREFUSED;
        }
        if (arg_stream) {
                st = natsConnection_JetStream(&rd.js, rd.nc, NULL);
                if (st == NATS_OK)
                        st = reader_consumer_new(&rd, 0);
        } else {
                natsSubscription *sub = NULL;

                st = natsConnection_SubscribeSync(&sub, rd.nc, subject);
                if (st == NATS_OK) {
                        rd.subs[rd.n_subs++] = sub;
                        st = natsSubscription_SetPendingLimits(sub, -1, -1);
                }
        }
        if (st != NATS_OK && stop)
                /* SIGTERM/SIGINT while a cluster was electing leaders. */
                goto out;
        if (st != NATS_OK) {
                log_error("cannot subscribe to %s%s%s: %s (%s)", subject, arg_stream ? " in stream " : "",
                      arg_stream ? arg_stream : "", natsStatus_GetText(st), nats_GetLastError(NULL));
                ret = -EIO;
                goto out;
        }
        reader_tty = isatty(STDOUT_FILENO);
        if (arg_json < 0)
                arg_json = !reader_tty;

        while (!stop) {
                natsMsg *m = NULL;
                jsMsgMetaData *meta = NULL;
                uint64_t missing = 0;
                bool done;

                st = natsSubscription_NextMsg(&m, rd.subs[rd.n_subs - 1], 2000);
                if (st == NATS_TIMEOUT) {
                        fflush(stdout);
                        /* --no-follow: nothing more came; on a stream,
                         * when nothing at all matched, or the consumer
                         * has nothing left (a line's NumPending says so
                         * too, but the line saying 0 may be lost). */
                        if (arg_no_follow && (!arg_stream || !got_any))
                                break;
                        st = NATS_OK;
                        if (arg_stream && got_any) {
                                if (reader_caught_up(&rd, &missing) && arg_no_follow)
                                        break;
                                if (missing > 0)
                                        st = reader_resume(&rd, missing);
                        }
                } else if (st == NATS_OK && !arg_stream) {
                        got_any = true;
                        reader_print(m);
                        natsMsg_Destroy(m);
                        continue;
                } else if (st == NATS_OK) {
                        /* A stream's line: its consumer and stream
                         * sequences and what is pending after it are in
                         * its reply subject. */
                        got_any = true;
                        if (natsMsg_GetMetaData(&meta, m) != NATS_OK) {
                                natsMsg_Destroy(m);
                                continue;
                        }
                        if (meta->Sequence.Consumer > rd.cseq + 1) {
                                missing = meta->Sequence.Consumer - rd.cseq - 1;
                                jsMsgMetaData_Destroy(meta);
                                natsMsg_Destroy(m);
                                st = reader_resume(&rd, missing);
                        } else {
                                rd.cseq = meta->Sequence.Consumer;
                                rd.sseq = meta->Sequence.Stream;
                                rd.received++;
                                done = arg_no_follow && meta->NumPending == 0;
                                jsMsgMetaData_Destroy(meta);
                                reader_print(m);
                                natsMsg_Destroy(m);
                                if (done)
                                        break;
                        }
                }
                if (st != NATS_OK && !stop) {
                        log_error("reading %s%s%s: %s (%s)", subject, arg_stream ? " in stream " : "", arg_stream ? arg_stream : "",
                              natsStatus_GetText(st), nats_GetLastError(NULL));
                        ret = -EIO;
                        break;
                }
        }
        fflush(stdout);
        if (reader_not_json > 0)
                log_warning("%" PRIu64 " messages were no JSON object and were not printed", reader_not_json);
out:
        reader_close(&rd);
        return ret;
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

enum { OPT_MAX_AGE = 0x100, OPT_MAX_BYTES, OPT_IN_FLIGHT, OPT_READ, OPT_NO_FOLLOW, OPT_NEW };

int main(int argc, char **argv) {
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
                { "pid", required_argument, NULL, 'p' },
                { "cgroup", required_argument, NULL, 'g' },
                { "read", no_argument, NULL, OPT_READ },
                { "no-follow", no_argument, NULL, OPT_NO_FOLLOW },
                { "new", no_argument, NULL, OPT_NEW },
                { "json", no_argument, NULL, 'j' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        long long v;
        int c, r;

        log_setup("evmon-forward");
        arg_pids = calloc((size_t) argc, sizeof(*arg_pids));
        arg_cgroups = calloc((size_t) argc, sizeof(*arg_cgroups));
        if (!arg_pids || !arg_cgroups) {
                log_oom();
                return 1;
        }
        while ((c = getopt_long(argc, argv, "s:n:H:S:cr:b:p:g:jh", options, NULL)) >= 0)
                switch (c) {
                case 's':
                        arg_socket = optarg;
                        break;
                case 'n':
                        arg_nats = optarg;
                        break;
                case 'H':
                        if (!*optarg || strlen(optarg) >= sizeof(arg_host)) {
                                log_error("--host: a name of 1 to %zu bytes, not \"%s\"", sizeof(arg_host) - 1, optarg);
                                return 2;
                        }
                        strcpy(arg_host, optarg);
                        arg_host_given = true;
                        break;
                case 'S':
                        arg_stream = optarg;
                        break;
                case 'c':
                        arg_create = true;
                        break;
                case 'r':
                        if (parse_int(optarg, "--replicas", 1, 5, &v) < 0)
                                return 2;
                        arg_replicas = (int) v;
                        break;
                case OPT_MAX_AGE:
                        if (parse_int(optarg, "--max-age", 0, INT64_MAX / 1000000000, &v) < 0)
                                return 2;
                        arg_max_age_s = v;
                        break;
                case OPT_MAX_BYTES:
                        if (parse_int(optarg, "--max-bytes", 0, 1LL << 40, &v) < 0)
                                return 2;
                        arg_max_bytes_mib = v;
                        break;
                case 'b':
                        if (parse_int(optarg, "--buffer-mib", 1, 1 << 16, &v) < 0)
                                return 2;
                        arg_buffer_mib = (size_t) v;
                        break;
                case OPT_IN_FLIGHT:
                        if (parse_int(optarg, "--in-flight", 1, 1 << 16, &v) < 0)
                                return 2;
                        arg_in_flight = (unsigned) v;
                        break;
                case 'p':
                        if (parse_int(optarg, "--pid", 1, INT_MAX, &v) < 0)
                                return 2;
                        arg_pids[arg_n_pids++] = (pid_t) v;
                        break;
                case 'g':
                        arg_cgroups[arg_n_cgroups++] = optarg;
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
                        return 0;
                default:
                        return 2;
                }
        arg_events = argv + optind;
        arg_n_events = argc - optind;
        /* An empty one too: libnats refused it with no reason to give
         * ("bad NATS options (--nats ): (null)", exit 1). */
        if (!arg_nats || !arg_nats[strspn(arg_nats, " ,")]) {
                log_error("--nats URL is required (nats://host:4222, several comma-separated)");
                return 2;
        }
        urls_redact(arg_nats, nats_shown, sizeof(nats_shown));
        /* A URL no server can ever answer is refused now: retried, it
         * looked like a server that is down, for good. */
        {
                const char *reason = NULL, *bad = NULL;
                size_t bad_len = 0;
                char bad_copy[1024], bad_shown[1024];

                r = nats_urls_parse(arg_nats, &arg_nats_urls, &arg_n_nats_urls, &reason, &bad, &bad_len);
                if (r == -ENOMEM) {
                        log_oom();
                        return 1;
                }
                if (r < 0 && bad_len == 0) {
                        log_error("--nats names no server: give the NATS servers as nats://HOST:PORT, several "
                                  "comma-separated (nats://nats1:4222,nats://nats2:4222)");
                        return 2;
                }
                if (r < 0) {
                        snprintf(bad_copy, sizeof(bad_copy), "%.*s", (int) bad_len, bad);
                        urls_redact(bad_copy, bad_shown, sizeof(bad_shown));
                        log_error("--nats: bad URL \"%s\" (%s): give the NATS servers as nats://HOST:PORT, several "
                                  "comma-separated (nats://nats1:4222,nats://nats2:4222)", bad_shown, reason);
                        return 2;
                }
                /* Copied: no longer for every local user to read. */
                urls_scrub(arg_nats);
        }
        if (arg_create && !arg_stream) {
                log_error("--create needs --stream NAME");
                return 2;
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
                        return 2;
                }
        }
        if (!arg_socket)
                arg_socket = getenv("EVMON_SOCKET") ?: EVMON_SOCKET_PATH_DEFAULT;
        if (!arg_host_given && gethostname(arg_host, sizeof(arg_host) - 1) < 0) {
                log_error_errno(errno, "cannot get the host name (%m); give --host NAME");
                return 2;
        }

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
