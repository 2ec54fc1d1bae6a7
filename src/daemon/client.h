/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* One connected client: a socket, a bounded queue of shared lines and a
 * subscription. It reads request lines and hands each to its owner (the
 * server, through struct client_handler); it knows nothing of other
 * clients or of the server's list. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>
#include <systemd/sd-event.h>

#include "evmon/cleanup.h"
#include "evmon/clock.h"
#include "evmon/protocol.h"
#include "aggregate.h"
#include "lines.h"
#include "queue.h"
#include "subscription.h"

/* A request line and its newline (doc/protocol.md). */
#define CLIENT_INBUF_SIZE (EVMON_REQUEST_MAX_BYTES + 1u)

struct client;

struct client_handler {
        /* One request line (LEN bytes, without its '\n'); < 0 closes C. */
        int (*line)(struct client *c, const char *line, size_t len, void *userdata);
        /* C failed or hung up: it gets nothing more and must be freed
         * soon, never from inside this call (its own callbacks may still
         * be running). */
        void (*failed)(struct client *c, void *userdata);
};

struct client {
        int fd;
        sd_event_source *io;
        uint32_t io_events;      /* what io watches now */
        bool closing;            /* flush what is queued, then close */
        bool dead;               /* failed: its owner frees it */
        bool paused;             /* not read: its queue is full (it does not read its replies) */
        bool bulk;               /* more requests wait than one wakeup reads: io at a lower priority */
        bool admin;              /* root or socket.admin_group: set by the owner */
        /* "format":"perf": after its subscribed line the connection is a
         * perf pipe-mode stream; it gets records, never lines. */
        bool perf;
        bool perf_round;         /* records queued since its last FINISHED_ROUND */
        bool perf_ctx;           /* its subscription selects by comm, container or namespace */
        uint64_t perf_lost_id;   /* an id of its events, for the LOST records of its drops */
        bool subscribed;         /* a subscribe was taken (a refused one then leaves it as it was) */
        bool stack_bytes;        /* subscribe's "stack_bytes": its lines of user stacks carry the bytes */
        uint64_t stuck_usec;     /* CLOCK_MONOTONIC: since when it is paused with nothing written */
        struct ucred cred;
        uint64_t id;
        char name[REQUEST_CLIENT_NAME_MAX + 1];  /* subscribe's "client"; "": none given (metrics say "uid-N") */
        struct subscription sub;
        /* An aggregating client (doc/protocol.md): it gets no event
         * lines, only its tables' "aggregate" lines (server.c). */
        struct aggregate *agg;
        sd_event_source *agg_timer;
        uint64_t agg_next_usec;  /* CLOCK_MONOTONIC: the timer's next expiry */
        bool agg_stale;          /* the events are changing (a reload): nothing folds */
        struct line_queue queue;
        const struct client_handler *handler;
        void *userdata;
        struct client *prev, *next;   /* the owner's list; client.c never touches them */

        /* By event index: the schema_gen of the last schema line sent
         * (0: none). */
        uint64_t *schema_gens;
        size_t n_schema_gens;
        char inbuf[CLIENT_INBUF_SIZE];
        size_t in_len;
        bool in_discard;         /* skipping the rest of an overlong line */
};

/* Takes FD (on success) and watches it on E. Its lines are stored in ST;
 * QUEUE_LIMIT bounds its queue. */
int client_new(sd_event *e, int fd, uint64_t id, struct line_store *st, size_t queue_limit,
               const struct client_handler *h, void *userdata, struct client **ret);
/* Closes the fd and drops the queue; NULL-tolerant, returns NULL. */
struct client *client_free(struct client *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct client *, client_free);

static inline bool client_wants(const struct client *c, const struct line_meta *m) {
        return !c->closing && !c->agg && !c->perf && subscription_matches(&c->sub, m);
}
/* Whether C has the schema line of the event definition META is about. */
static inline bool client_has_schema(const struct client *c, const struct line_meta *m) {
        return m->idx < c->n_schema_gens && c->schema_gens[m->idx] == m->schema_gen;
}

/* Queues the stored line SP unless C's queue is full (a drop is counted;
 * LOST: see line_queue_push()); a gap that may close is closed first with
 * its "dropped" line. */
void client_push(struct client *c, const struct line_span *sp, uint64_t lost);
/* Stores and queues a reply for C alone. -ENOBUFS when C's queue is
 * already over its bound (C does not read its replies), -ENOMEM. */
int client_reply(struct client *c, const char *line, size_t len);
/* Writes what it can; -errno when C must be closed. */
int client_flush(struct client *c);
/* Marks C dead and tells its owner (handler->failed). */
void client_fail(struct client *c);
/* How long C has been paused with nothing written (0 when it is not). */
uint64_t client_stuck_usec(const struct client *c, uint64_t now_usec);
