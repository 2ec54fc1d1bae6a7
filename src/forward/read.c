/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* evmon-forward --read: prints what forwarders published, live or from a
 * stream, as `evmonctl watch` does. */
#include <fnmatch.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "evmon/human.h"
#include "evmon/jsonc.h"
#include "evmon/log.h"
#include "line.h"
#include "forward.h"

/* Appends the wildcard token '*' at *POS: subject_part_append() would make
 * it '_', as it does with a '*' in a host or event name. */
static int subject_wild_append(char *buf, size_t size, size_t *pos) {
        if (*pos + 2 > size)
                return -ENOBUFS;
        buf[(*pos)++] = '*';
        buf[*pos] = '\0';
        return 0;
}

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
                r = subject_wild_append(buf, size, &pos);
        else
                r = subject_part_append(buf, size, &pos, event, (size_t) (colon - event));
        if (r < 0 || pos + 2 > size)
                return -ENOBUFS;
        buf[pos++] = '.';
        buf[pos] = '\0';
        if (strpbrk(colon + 1, "*?["))
                return subject_wild_append(buf, size, &pos);
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

/* The readable view (a counter table's header and rates span lines). */
static struct human reader_view;

/* Anyone who may publish on evmon.> writes what is printed here, not
 * only forwarders: the payload is escaped for a terminal in both views.
 * With --json a line is one JSON object: a payload that is one is written
 * as it is when it holds no control byte (no raw newline splits it, no
 * ESC reaches a terminal), else encoded again by json-c, which escapes
 * them; on a terminal DEL and the C1 controls are escaped too
 * (human_put_json()). A payload that is no JSON object is not printed:
 * counted, the first one said on standard error, the count at the end.
 * LINE is one line of a message (LEN bytes, no newline). */
static void reader_print_line(const char *data, size_t len) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        bool raw = true;

        if (!reader_wants(data, (int) len))
                return;
        o = reader_parse(data, len);
        if (!o)
                return;
        if (!arg_json) {
                human_line(&reader_view, stdout, o);
                return;
        }
        for (size_t i = 0; i < len; i++)
                if ((unsigned char) data[i] < 0x20) {
                        raw = false;
                        break;
                }
        if (raw && !reader_tty) {
                fwrite(data, 1, len, stdout);
        } else {
                const char *s = raw ? data : json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                                                 JSON_C_TO_STRING_NOSLASHESCAPE);
                size_t n = raw ? len : strlen(s);

                if (reader_tty)
                        human_put_json(stdout, s, n);
                else
                        fwrite(s, 1, n, stdout);
        }
        putchar('\n');
}

/* The line of a message's payload at *POS, moving *POS past it: a
 * forwarder's message holds one or more lines, each ending in '\n' (one
 * line without it from a forwarder before batching). False at the end. */
static bool payload_line(const char *data, size_t len, size_t *pos, const char **ret, size_t *ret_len) {
        const char *nl;

        if (*pos >= len)
                return false;
        *ret = data + *pos;
        nl = memchr(*ret, '\n', len - *pos);
        *ret_len = nl ? (size_t) (nl - *ret) : len - *pos;
        *pos += *ret_len + 1;
        return true;
}

/* A message is printed when each of its lines is one JSON object, else
 * none of it: a line that is not one is no part of what a forwarder
 * sends. */
static void reader_print(natsMsg *m) {
        const char *data = natsMsg_GetData(m), *line;
        int len = natsMsg_GetDataLength(m);
        size_t pos = 0, n;

        if (!data || len <= 0)
                return;
        while (payload_line(data, (size_t) len, &pos, &line, &n)) {
                json_object *o = reader_parse(line, n);

                if (!o) {
                        if (reader_not_json++ == 0)
                                log_warning("a message on %s is no JSON object (%d bytes): not printed; such messages "
                                            "are counted and the count said when the reader stops",
                                            natsMsg_GetSubject(m), len);
                        return;
                }
                json_object_put(o);
        }
        pos = 0;
        while (payload_line(data, (size_t) len, &pos, &line, &n))
                reader_print_line(line, n);
}

/* The subject to read: every event of --host (or of every host), or the
 * one EVENT named; *RET_FILTER when the lines must be filtered here. */
static int reader_subject(char *buf, size_t size, bool *ret_filter) {
        const char *host = arg_host_given ? arg_host : "*";
        char host_part[260];
        size_t hp = 0;

        if (strcmp(host, "*") == 0)
                strcpy(host_part, "*");
        else if (subject_part_append(host_part, sizeof(host_part), &hp, host, strlen(host)) < 0)
                return -ENOBUFS;
        if (arg_n_events == 1)
                return event_subject(host_part, arg_events[0], buf, size, ret_filter) < 0 ? -ENOBUFS : 0;
        snprintf(buf, size, "evmon.%s.>", host_part);
        *ret_filter = arg_n_events > 1;
        return 0;
}

/* Connects and subscribes: a consumer of --stream, or the live subject. */
static int reader_open(struct reader *rd) {
        natsOptions *opts = NULL;
        natsStatus st;

        st = nats_options_new(&opts);
        if (st == NATS_OK)
                st = natsConnection_Connect(&rd->nc, opts);
        natsOptions_Destroy(opts);
        if (st != NATS_OK) {
                log_error("cannot connect to NATS at %s: %s", nats_shown, nats_GetLastError(NULL));
                return -ECONNREFUSED;
        }
        if (arg_stream) {
                st = natsConnection_JetStream(&rd->js, rd->nc, NULL);
                if (st == NATS_OK)
                        st = reader_consumer_new(rd, 0);
        } else {
                natsSubscription *sub = NULL;

                st = natsConnection_SubscribeSync(&sub, rd->nc, rd->subject);
                if (st == NATS_OK) {
                        rd->subs[rd->n_subs++] = sub;
                        st = natsSubscription_SetPendingLimits(sub, -1, -1);
                }
        }
        if (st != NATS_OK && stop)
                /* SIGTERM/SIGINT while a cluster was electing leaders. */
                return 0;
        if (st != NATS_OK) {
                log_error("cannot subscribe to %s%s%s: %s (%s)", rd->subject, arg_stream ? " in stream " : "",
                          arg_stream ? arg_stream : "", natsStatus_GetText(st), nats_GetLastError(NULL));
                return -EIO;
        }
        return 1;
}

/* Nothing came for 2 s: --no-follow ends (without a stream, or when
 * nothing at all matched, or the consumer has nothing left: a line's
 * NumPending says so too, but the line saying 0 may be lost); on a stream,
 * lines lost on the way are asked for again. *RET_DONE: stop reading. */
static natsStatus reader_idle(struct reader *rd, bool got_any, bool *ret_done) {
        uint64_t missing = 0;

        fflush(stdout);
        if (arg_no_follow && (!arg_stream || !got_any)) {
                *ret_done = true;
                return NATS_OK;
        }
        if (arg_stream && got_any) {
                if (reader_caught_up(rd, &missing) && arg_no_follow) {
                        *ret_done = true;
                        return NATS_OK;
                }
                if (missing > 0)
                        return reader_resume(rd, missing);
        }
        return NATS_OK;
}

/* A stream's line: its consumer and stream sequences and what is pending
 * after it are in its reply subject. A gap in the consumer's sequence
 * makes a new consumer from the last line printed. */
static natsStatus reader_stream_line(struct reader *rd, natsMsg *m, bool *ret_done) {
        jsMsgMetaData *meta = NULL;
        uint64_t missing;

        if (natsMsg_GetMetaData(&meta, m) != NATS_OK) {
                natsMsg_Destroy(m);
                return NATS_OK;
        }
        if (meta->Sequence.Consumer > rd->cseq + 1) {
                missing = meta->Sequence.Consumer - rd->cseq - 1;
                jsMsgMetaData_Destroy(meta);
                natsMsg_Destroy(m);
                return reader_resume(rd, missing);
        }
        rd->cseq = meta->Sequence.Consumer;
        rd->sseq = meta->Sequence.Stream;
        rd->received++;
        *ret_done = arg_no_follow && meta->NumPending == 0;
        jsMsgMetaData_Destroy(meta);
        reader_print(m);
        natsMsg_Destroy(m);
        return NATS_OK;
}

static int reader_loop(struct reader *rd) {
        bool got_any = false;

        while (!stop) {
                natsMsg *m = NULL;
                bool done = false;
                natsStatus st;

                st = natsSubscription_NextMsg(&m, rd->subs[rd->n_subs - 1], 2000);
                if (st == NATS_TIMEOUT)
                        st = reader_idle(rd, got_any, &done);
                else if (st == NATS_OK && !arg_stream) {
                        got_any = true;
                        reader_print(m);
                        natsMsg_Destroy(m);
                        continue;
                } else if (st == NATS_OK) {
                        got_any = true;
                        st = reader_stream_line(rd, m, &done);
                }
                if (done)
                        break;
                if (st != NATS_OK && !stop) {
                        log_error("reading %s%s%s: %s (%s)", rd->subject, arg_stream ? " in stream " : "",
                                  arg_stream ? arg_stream : "", natsStatus_GetText(st), nats_GetLastError(NULL));
                        return -EIO;
                }
        }
        return 0;
}

int run_read(void) {
        struct reader rd = {};
        char subject[512];
        bool filter = false;
        int r;

        r = reader_subject(subject, sizeof(subject), &filter);
        if (r < 0)
                return r;
        rd.subject = subject;
        r = reader_open(&rd);
        if (r > 0) {
                reader_tty = isatty(STDOUT_FILENO);
                if (arg_json < 0)
                        arg_json = !reader_tty;
                r = reader_loop(&rd);
                fflush(stdout);
                if (reader_not_json > 0)
                        log_warning("%" PRIu64 " messages were no JSON object and were not printed", reader_not_json);
        }
        reader_close(&rd);
        return r;
}
