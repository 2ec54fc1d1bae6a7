/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* One connected client: its subscription, its bounded queue of spans into
 * the shared chunks, and the lines it sends us. Private to server.c. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <systemd/sd-event.h>

#include "server.h"

#define CLIENT_INBUF_SIZE 65536u

struct client {
        struct server *server;
        struct client *prev, *next;
        int fd;
        sd_event_source *io;
        uint32_t io_events;      /* what c->io watches now */
        bool closing;            /* flush what is queued, then close */
        bool dead;               /* failed: freed by the server's reaper, not in use any more */
        struct ucred cred;
        uint64_t id;
        bool linked;             /* on the server's list */

        /* Subscription: all events, or those whose bit is set. */
        bool all_events;
        uint64_t *event_bits;
        size_t n_event_bits;
        char **event_names;      /* as subscribed, to re-resolve on reload */
        pid_t *pids;             /* NULL: any pid */
        size_t n_pids;
        uint64_t *cgroups;       /* sorted ids of the cgroups and those below; NULL: any */
        size_t n_cgroups;

        /* Queue: a ring of spans; `queued` bytes not yet written. */
        struct span *q;
        size_t q_head, q_len, q_cap;
        size_t queued;
        uint32_t head_done;      /* bytes of q[q_head] already written */
        uint64_t dropped;        /* lines dropped since the last "dropped" line */
        uint64_t dropped_total;
        uint64_t lines_queued;

        char inbuf[CLIENT_INBUF_SIZE];
        size_t in_len;
        bool in_discard;         /* skipping the rest of an overlong line */
};

int client_new(struct server *s, int fd, uint64_t id, struct client **ret);
struct client *client_free(struct client *c);

static inline bool client_wants(const struct client *c, const struct line_meta *m) {
        if (!c->all_events) {
                if ((m->idx >> 6) >= c->n_event_bits || !(c->event_bits[m->idx >> 6] & (UINT64_C(1) << (m->idx & 63))))
                        return false;
        }
        if (c->pids) {
                bool found = false;
                for (size_t i = 0; i < c->n_pids && !found; i++)
                        found = c->pids[i] == m->pid;
                if (!found)
                        return false;
        }
        if (c->cgroups) {
                size_t lo = 0, hi = c->n_cgroups;
                while (lo < hi) {
                        size_t mid = (lo + hi) / 2;
                        if (c->cgroups[mid] < m->cgroup)
                                lo = mid + 1;
                        else
                                hi = mid;
                }
                if (lo == c->n_cgroups || c->cgroups[lo] != m->cgroup)
                        return false;
        }
        return true;
}

/* Queues a span of CHUNK (taking a reference) or counts a drop when the
 * queue is over LIMIT bytes. */
void client_enqueue(struct client *c, struct chunk *chunk, uint32_t off, uint32_t len, size_t limit);
/* Writes what it can; returns -errno when the client must be closed. */
int client_flush(struct client *c);
/* Re-resolves the subscription by name after the event list changed. */
void client_resolve(struct client *c);

/* server.c internals the client code uses. */
void server_chunk_unref(struct server *s, struct chunk *chunk);
/* Queues LINE (with '\n') for client C only, past the queue limit: for
 * replies, which are small and must not be lost. */
int server_send(struct server *s, struct client *c, const char *line, size_t len);
sd_event *server_get_event(const struct server *s);
const char *server_cgroup_mount(const struct server *s);
const struct server_ops *server_get_ops(const struct server *s, void **ret_userdata);
void server_client_closed(struct server *s, struct client *c);
/* Marks C dead: it gets nothing more and is freed from the event loop soon
 * (never under a caller that may still hold it, such as its own read
 * callback running a reload that flushes every client). */
void server_client_fail(struct server *s, struct client *c);
