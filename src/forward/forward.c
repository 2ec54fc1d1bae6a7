/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The forwarder's NATS side: the in-flight window and its acknowledgements
 * (on libnats' threads), publishing the queue, the stream, and
 * run_forward(), the main thread's loop.
 *
 * Threads: the main thread reads evmond's socket, queues lines and
 * publishes them; libnats' own threads deliver the JetStream acks
 * (replies to our inbox) and the connection events. struct fwd's lock
 * guards what both touch: the queue's head, the in-flight window and the
 * connection state. */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "evmon/jsonc.h"
#include "evmon/log.h"
#include "forward.h"

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
        /* Empty (so nothing in flight): the next record goes to the
         * arena's start. */
        if (moved && queue_rewind(&f->q))
                f->send_pos = f->q.head;
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

/* A message NATS will never take: off the queue as if acknowledged, its
 * lines counted dropped by the main thread. Locked. */
static void fwd_too_big_locked(struct fwd *f, unsigned s, bool stream, size_t len) {
        if (f->slot_state[s] == SLOT_ACKED)
                return;
        f->slot_state[s] = SLOT_ACKED;
        f->too_big[stream] += f->slot_lines[s];
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
                f->slot_lines[s] = rec.lines;
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
                f->published_total += rec.lines;
                f->published_msgs++;
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
                /* Its max message size, if it says: batches stay below it. */
                (void) js_GetStreamInfo(&si, js, arg_stream, NULL, NULL);
                st = NATS_OK;
        }
        if (st == NATS_OK && si && si->Config)
                f->stream_max_msg = si->Config->MaxMsgSize;
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
        if (st == NATS_OK && si && si->Config)
                f->stream_max_msg = si->Config->MaxMsgSize;
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
/* The in-flight window, the line buffers, the queue and the wake
 * eventfd. */
static int fwd_init(struct fwd *f) {
        json_object *hj;
        int r;

        pthread_mutex_init(&f->lock, NULL);
        f->window = 1;
        while (f->window < arg_in_flight)
                f->window <<= 1;
        f->slot_seq = calloc(f->window, sizeof(uint64_t));
        f->slot_sent = calloc(f->window, sizeof(int64_t));
        f->slot_state = calloc(f->window, 1);
        f->slot_lines = calloc(f->window, sizeof(uint32_t));
        f->rbuf = malloc(LINE_MAX_BYTES);
        f->pbuf = malloc(LINE_MAX_BYTES + 1024);
        if (!f->slot_seq || !f->slot_sent || !f->slot_state || !f->slot_lines || !f->rbuf || !f->pbuf)
                return -ENOMEM;
        r = fwd_batches_init(f);
        if (r < 0)
                return r;
        for (unsigned i = 0; i < f->window; i++)
                f->slot_seq[i] = UINT64_MAX;
        r = queue_init(&f->q, arg_buffer_mib << 20);
        if (r < 0)
                return r;
        hj = json_object_new_string(arg_host);
        snprintf(f->host_json, sizeof(f->host_json), "%s", json_object_to_json_string_ext(hj, JSON_C_TO_STRING_PLAIN));
        json_object_put(hj);
        f->fwd_start_ns = now_ns(CLOCK_REALTIME);
        f->jetstream = arg_stream != NULL;
        f->stream_ready = !f->jetstream;
        f->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        return f->wake_fd < 0 ? -errno : 0;
}

static void fwd_done(struct fwd *f, natsSubscription *sub, natsOptions *opts) {
        safe_close(f->evmond_fd);
        /* Close (which joins libnats' read loop) before freeing the
         * acknowledgement subscription: see struct reader. */
        natsConnection_Close(f->nc);
        natsSubscription_Destroy(sub);
        natsConnection_Destroy(f->nc);
        natsOptions_Destroy(opts);
        nats_Close();
        queue_done(&f->q);
        free(f->slot_seq);
        free(f->slot_sent);
        free(f->slot_state);
        free(f->slot_lines);
        if (f->batching)
                batcher_done(&f->batches);
        free(f->rbuf);
        free(f->pbuf);
        safe_close(f->wake_fd);
}

/* SIGTERM and SIGINT blocked and read from a signalfd by the loop. */
static int stop_signal_fd(void) {
        sigset_t mask;
        int fd;

        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        return fd < 0 ? -errno : fd;
}

/* libnats reconnects by itself (forever, every 250 ms, to any of the URLs
 * and the servers the cluster announces); the forwarder sends again
 * whatever was in flight when it comes back. */
static int fwd_nats_options(struct fwd *f, natsOptions **ret) {
        natsStatus st;

        st = nats_options_new(ret);
        if (st == NATS_OK)
                st = natsOptions_SetMaxReconnect(*ret, -1);
        if (st == NATS_OK)
                st = natsOptions_SetReconnectWait(*ret, 250);
        if (st == NATS_OK)
                st = natsOptions_SetDisconnectedCB(*ret, on_disconnected, f);
        if (st == NATS_OK)
                st = natsOptions_SetReconnectedCB(*ret, on_connected, f);
        if (st == NATS_OK)
                st = natsOptions_SetErrorHandler(*ret, on_error, f);
        if (st == NATS_OK)
                st = natsOptions_SetMaxPendingMsgs(*ret, 1 << 20);
        /* A server that hangs (stopped, not dead: the connection stays
         * up) is left within seconds, not libnats' default 2 min × 2
         * PINGs: a PING every 2 s, stale after 3 unanswered; and a write
         * into its full socket gives up after 2 s instead of blocking
         * this thread, and evmond's socket with it, for good. */
        if (st == NATS_OK)
                st = natsOptions_SetPingInterval(*ret, NATS_PING_MS);
        if (st == NATS_OK)
                st = natsOptions_SetMaxPingsOut(*ret, 3);
        if (st == NATS_OK)
                st = natsOptions_SetWriteDeadline(*ret, NATS_PING_MS);
        if (st != NATS_OK) {
                log_error("bad NATS options (--nats %s): %s", nats_shown, nats_GetLastError(NULL));
                return -EINVAL;
        }
        return 0;
}

/* Once without retrying, to tell a server that refuses us (which waiting
 * does not mend) from none answering yet (a cluster starting: lines wait
 * in the buffer). */
static int fwd_nats_connect(struct fwd *f, natsOptions *opts) {
        natsStatus st;

        st = natsConnection_Connect(&f->nc, opts);
        if (st == NATS_CONNECTION_AUTH_FAILED || st == NATS_NOT_PERMITTED) {
                log_error("NATS at %s refuses to let us in (%s): give the user and password "
                          "(nats://USER:PASSWORD@HOST:4222) or token (nats://TOKEN@HOST:4222) its authorization "
                          "block expects", nats_shown, natsStatus_GetText(st));
                return -EACCES;
        }
        if (st != NATS_OK) {
                log_warning("no NATS server at %s answers yet (%s); trying again every 250 ms, lines wait in the "
                            "buffer meanwhile", nats_shown, natsStatus_GetText(st));
                st = natsOptions_SetRetryOnFailedConnect(opts, true, on_connected, f);
                if (st == NATS_OK)
                        st = natsConnection_Connect(&f->nc, opts);
        } else
                log_info("connected to NATS at %s", nats_shown);
        if (st == NATS_OK) {
                pthread_mutex_lock(&f->lock);
                f->connected = true;
                pthread_mutex_unlock(&f->lock);
        } else if (st != NATS_NOT_YET_CONNECTED) {
                log_error("cannot connect to NATS at %s: %s", nats_shown, nats_GetLastError(NULL));
                return -ECONNREFUSED;
        }
        return 0;
}

/* With a stream, the acknowledgements come to an inbox of ours. */
static int fwd_subscribe_acks(struct fwd *f, natsSubscription **ret) {
        natsInbox *inbox = NULL;
        char subj[160];
        natsStatus st;

        if (!f->jetstream)
                return 0;
        natsInbox_Create(&inbox);
        snprintf(f->inbox, sizeof(f->inbox), "%s", (const char *) inbox);
        natsInbox_Destroy(inbox);
        snprintf(subj, sizeof(subj), "%s.*", f->inbox);
        st = natsConnection_Subscribe(ret, f->nc, subj, on_ack, f);
        if (st == NATS_OK)
                st = natsSubscription_SetPendingLimits(*ret, -1, -1);
        if (st != NATS_OK) {
                log_error("cannot subscribe to the acknowledgements: %s", nats_GetLastError(NULL));
                return -EIO;
        }
        return 0;
}

/* Stops the loop once what is queued is acknowledged or at DEADLINE
 * (now_ms()), with RET as the exit status unless one is set. */
static void fwd_stop(struct fwd *f, int64_t deadline, int ret) {
        stop = 1;
        f->stop_deadline = deadline;
        if (f->ret == 0)
                f->ret = ret;
}

/* What the loop does before it sleeps: batches due (all once stopping,
 * or without evmond) queued, the stream looked up, evmond reconnected,
 * the queue published, refusals and losses reported. */
static void fwd_work(struct fwd *f, int64_t now) {
        int r;

        fwd_batches_flush(f, stop || f->evmond_fd < 0 ? INT64_MAX : now - BATCH_MS + 1);
        if (!stop && !fwd_stream_setup(f))
                /* Looked up only now (NATS was down at start): what is
                 * queued cannot go anywhere. */
                fwd_stop(f, now, -ENOENT);
        if (f->evmond_fd < 0 && !stop && now >= f->evmond_retry_at) {
                r = evmond_connect(f);
                if (r < 0)
                        f->evmond_retry_at = now + EVMOND_RETRY_MS;
        }
        if (f->stream_ready)
                fwd_publish(f);
        if (f->jetstream)
                fwd_report_refusal(f);
        fwd_count_too_big(f);
}

/* Whether the loop ends: stopping, and the queue empty or out of time.
 * Else marks the main thread asleep and says in *RET_BUSY whether to look
 * again soon. */
static bool fwd_finished(struct fwd *f, int64_t now, bool *ret_busy) {
        bool done = false;

        pthread_mutex_lock(&f->lock);
        *ret_busy = queue_count(&f->q) > 0 || f->retry || f->evmond_fd < 0;
        if (stop && (queue_count(&f->q) == 0 || now >= f->stop_deadline)) {
                if (queue_count(&f->q) > 0) {
                        log_warning("stopping with %" PRIu64 " messages not acknowledged", queue_count(&f->q));
                        if (f->ret == 0)
                                f->ret = -ETIMEDOUT;
                }
                done = true;
        } else {
                f->sleeping = true;
                f->woken = false;
        }
        pthread_mutex_unlock(&f->lock);
        return done;
}

/* Sleeps until a wake, a signal, a line from evmond or the timeout, and
 * handles what came. */
static int fwd_wait(struct fwd *f, int sfd, bool busy, int64_t now) {
        struct pollfd pfd[3] = {
                { .fd = f->wake_fd, .events = POLLIN },
                { .fd = sfd, .events = POLLIN },
                { .fd = f->evmond_fd, .events = POLLIN },
        };
        int timeout = busy ? 50 : 1000, r;

        /* Up when the oldest open batch is due. */
        if (f->batch_oldest != INT64_MAX && f->batch_oldest + BATCH_MS - now < timeout)
                timeout = f->batch_oldest + BATCH_MS > now ? (int) (f->batch_oldest + BATCH_MS - now) : 0;
        r = poll(pfd, f->evmond_fd >= 0 && !stop ? 3 : 2, timeout);
        pthread_mutex_lock(&f->lock);
        f->sleeping = false;
        pthread_mutex_unlock(&f->lock);
        if (r < 0 && errno != EINTR)
                return -errno;
        if (pfd[0].revents) {
                uint64_t v;
                (void) !read(f->wake_fd, &v, sizeof(v));
        }
        if (pfd[1].revents) {
                struct signalfd_siginfo si;
                (void) !read(sfd, &si, sizeof(si));
                if (!stop) {
                        /* What is queued gets 5 s to be acknowledged. */
                        fwd_stop(f, now_ms() + 5000, 0);
                        log_info("stopping: publishing what is queued");
                }
        }
        if (f->evmond_fd >= 0 && !stop && pfd[2].revents)
                evmond_read(f);
        if (f->sub_refused && !stop)
                /* What came so far (the refusal among it) gets 5 s to be
                 * acknowledged. */
                fwd_stop(f, now_ms() + 5000, -EINVAL);
        if (f->dropped > 0)
                fwd_report_dropped(f);
        return 0;
}

static int fwd_loop(struct fwd *f, int sfd) {
        for (;;) {
                int64_t now = now_ms();
                bool busy;
                int r;

                fwd_work(f, now);
                if (fwd_finished(f, now, &busy))
                        return f->ret;
                r = fwd_wait(f, sfd, busy, now);
                if (r < 0)
                        return r;
        }
}

int run_forward(void) {
        struct fwd f = { .evmond_fd = -1, .wake_fd = -1 };
        natsOptions *opts = NULL;
        natsSubscription *sub = NULL;
        _cleanup_(closep) int sfd = -1;
        int r;

        r = fwd_init(&f);
        if (r >= 0)
                r = sfd = stop_signal_fd();
        if (r >= 0)
                r = fwd_nats_options(&f, &opts);
        if (r >= 0)
                r = fwd_nats_connect(&f, opts);
        if (r >= 0)
                r = fwd_subscribe_acks(&f, &sub);
        if (r < 0)
                goto out;
        /* A stream that is not there is said before any line is read. */
        if (!fwd_stream_setup(&f)) {
                r = -ENOENT;
                stop = 1;
                goto out;
        }
        r = evmond_connect(&f);
        if (r < 0) {
                log_warning("cannot connect to evmond at %s: %s; trying again every %d ms", arg_socket, strerror(-r),
                            EVMOND_RETRY_MS);
                f.evmond_retry_at = now_ms() + EVMOND_RETRY_MS;
                f.evmond_down_said = true;
        }
        r = fwd_loop(&f, sfd);
        log_info("published %" PRIu64 " lines in %" PRIu64 " messages, dropped %" PRIu64, f.published_total,
                 f.published_msgs, f.dropped_total);
out:
        fwd_done(&f, sub, opts);
        return r;
}
