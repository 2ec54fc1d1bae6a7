/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* evmon-forward's parts: the options (evmon-forward.c), the forwarder's
 * state (struct fwd) with its NATS side (forward.c) and its evmond side
 * (source.c), and the reader (read.c). Private to src/forward/. */

#include <nats/nats.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "evmon/clock.h"
#include "batch.h"
#include "queue.h"


#define LINE_MAX_BYTES (1 << 20)
/* Lines of one subject go out together in one message (a batch) of at
 * most --batch-kib, closed after BATCH_MS at the latest so that a lone
 * line is not held; BATCH_SUBJECTS subjects have a batch open at once.
 * BATCH_HEADROOM keeps a batch with its headers below the server's
 * max_payload. */
#define BATCH_MS 5
#define BATCH_SUBJECTS 32
#define BATCH_HEADROOM 1024
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

extern const char *arg_socket;
extern char *arg_nats;
/* --nats split into its URLs, each checked (url.c). */
extern char **arg_nats_urls;
extern size_t arg_n_nats_urls;
/* --nats for the log: user, password or token in a URL become "***". */
extern char nats_shown[1024];
extern char arg_host[256];
extern const char *arg_stream;
extern bool arg_create;
extern int arg_replicas;
extern int64_t arg_max_age_s;
extern int64_t arg_max_bytes_mib;
extern size_t arg_buffer_mib;
extern unsigned arg_in_flight;
extern size_t arg_batch_kib;
extern char **arg_events;
extern int arg_n_events;
/* --pid and --cgroup, each at most one per argument (room for argc). */
extern pid_t *arg_pids;
extern const char **arg_cgroups;
extern size_t arg_n_pids, arg_n_cgroups;
extern bool arg_read;
extern int arg_json;
extern bool arg_no_follow;
extern bool arg_new;
extern bool arg_host_given;

/* Set on SIGTERM/SIGINT: the forwarder drains its queue and exits. */
extern volatile sig_atomic_t stop;

void urls_redact(const char *in, char *buf, size_t size);
natsStatus nats_options_new(natsOptions **ret);

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
        uint32_t *slot_lines;           /* lines in the message */
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
        uint64_t dropped_total, published_total, published_msgs;
        /* Open batches (none without batching), the oldest one's opening
         * time, and their size limit and clock for this read of evmond's
         * socket. */
        struct batcher batches;
        bool batching;
        int64_t batch_oldest;
        size_t batch_limit;
        int64_t read_now;
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
        char id_tag[384];               /* "HOST.CONN_TAG": a line's id without its number */
        /* The last event line's "event" (its JSON text) and the subject
         * made of it: most lines repeat the one before's. */
        char subj_event[256];
        size_t subj_event_len;
        char subj_cached[512];
        int subj_cached_len;            /* 0: none */
        char *rbuf;
        size_t rlen;
        char *pbuf;
        bool stream_ready;
        int32_t stream_max_msg;         /* the stream's max message size (<= 0: none) */
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
        /* Once stopping: when to give up on what is queued, and the exit
         * status. */
        int64_t stop_deadline;
        int ret;
};

/* source.c: evmond's side */
void fwd_report_dropped(struct fwd *f);
int evmond_connect(struct fwd *f);
void evmond_read(struct fwd *f);
int fwd_batches_init(struct fwd *f);
void fwd_batches_flush(struct fwd *f, int64_t deadline);

/* forward.c */
int run_forward(void);

/* read.c */
int run_read(void);
