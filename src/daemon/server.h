/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The socket side of the daemon: the listening socket, the clients, and
 * the shared line store that lets one encoded line go to every client that
 * wants it without a copy per client. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <systemd/sd-event.h>

#include "evmon/encode.h"

struct server;
struct client;

/* What subscriptions are matched on, per event line. */
struct line_meta {
        unsigned idx;           /* the event's index */
        pid_t pid;
        uint64_t cgroup;        /* PERF_SAMPLE_CGROUP id, 0 when unknown */
};

/* Lines live in reference-counted chunks; a client's queue holds (chunk,
 * offset, length) spans. Chunks are recycled through a free list, so a
 * steady stream allocates nothing. */
#define CHUNK_SIZE (256u * 1024u)

struct chunk {
        unsigned refs;
        size_t len, cap;
        struct chunk *next_free;
        char data[];
};

struct span {
        struct chunk *chunk;
        uint32_t off, len;
};

struct server_ops {
        /* The names of the events served, in index order, for hello and
         * subscribe. */
        size_t (*n_events)(void *userdata);
        const char *(*event_name)(void *userdata, size_t i);
        /* {"type":"status"} and {"type":"reload"} from a client; each
         * appends its answer line to LINE (src/encode/), 0 or -errno. */
        int (*status)(void *userdata, struct jbuf *line);
        int (*reload)(void *userdata, struct jbuf *line);
};

struct server_opts {
        const char *path;       /* socket path (created unless socket activated) */
        mode_t mode;
        gid_t gid;              /* (gid_t) -1: keep ours */
        unsigned max_clients;
        const char *cgroup_mount;  /* for subscriptions by cgroup, or NULL */
        size_t queue_bytes;     /* per-client limit before lines are dropped */
        int listen_fd;          /* >= 0: an inherited (socket-activated) listener */
};

int server_new(sd_event *e, const struct server_opts *opts, const struct server_ops *ops, void *userdata,
               struct server **ret);
/* Closes every client and the listener; removes the socket file we made. */
struct server *server_free(struct server *s);

/* True when some client wants a line with META: the caller encodes the
 * line only then. */
bool server_wants(const struct server *s, const struct line_meta *meta);
/* Queues LINE (ending in '\n') for every client that wants META; a client
 * whose queue is full counts a drop instead. */
void server_broadcast(struct server *s, const struct line_meta *meta, const char *line, size_t len);
/* Queues LINE for every client (lost records, config changes). */
void server_broadcast_all(struct server *s, const char *line, size_t len);
/* Writes what is queued to each client that can take it now. Call after a
 * batch of broadcasts. */
void server_flush(struct server *s);

/* The event list changed (reload): subscriptions are re-resolved by name. */
void server_events_changed(struct server *s);

size_t server_n_clients(const struct server *s);
uint64_t server_dropped_total(const struct server *s);
/* The clients (pid, uid, queued bytes, drops) for the status line, in
 * *RET (caller frees) and *RET_N. 0 or -ENOMEM. */
int server_clients_status(const struct server *s, struct encode_status_client **ret, size_t *ret_n);
