/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The socket side of the daemon: the listening socket, the protocol, the
 * clients (the server alone owns their list), and the shared line store
 * that lets one encoded line go to every client that wants it without a
 * copy per client. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <systemd/sd-event.h>

#include "evmon/cleanup.h"
#include "evmon/encode.h"
#include "aggregate.h"
#include "peer.h"
#include "request.h"
#include "subscription.h"

struct server;

struct server_ops {
        /* The names of the events served, in index order, for hello and
         * subscribe. */
        size_t (*n_events)(void *userdata);
        const char *(*event_name)(void *userdata, size_t i);
        /* Its tracepoint format, NULL for events without fields; the
         * member itself may be NULL (no subscribe "filter" is checked). */
        const struct format *(*event_format)(void *userdata, size_t i);
        /* {"type":"status"} and {"type":"reload"} (from an admin CRED)
         * from a client; each appends its answer line to LINE
         * (src/encode/), 0 or -errno. */
        int (*status)(void *userdata, struct jbuf *line);
        int (*reload)(void *userdata, const struct ucred *cred, struct jbuf *line);
        /* Runtime control (add, remove, enable, disable, filter) from an
         * admin PEER (root, or in socket.admin_group): its result line to
         * LINE, or an error for the client in *ret_error. */
        int (*control)(void *userdata, const struct request *req, const struct peer *peer, struct jbuf *line,
                       char **ret_error);
        /* Aggregation: what the tables need of event I (its format and
         * sample_type), and the event clock's time now (*RET_OFFSET what
         * makes it realtime). */
        void (*event_info)(void *userdata, size_t i, struct agg_event_info *ret);
        uint64_t (*event_clock)(void *userdata, int64_t *ret_offset);
        /* "format":"perf": the head of a perf pipe-mode stream for SUB
         * (perfout.h), or NULL where the server offers none. */
        int (*perf_head)(void *userdata, const struct subscription *sub, char **ret, size_t *ret_len,
                         uint64_t *ret_lost_id);
};

/* server_new() copies path and admin_group (a reload frees the config they
 * come from); cgroup_mount must outlive the server. */
struct server_opts {
        const char *path;       /* socket path (created unless socket activated) */
        mode_t mode;
        gid_t gid;              /* (gid_t) -1: keep ours */
        unsigned max_clients;
        unsigned max_per_uid;   /* clients of one uid, root and admins aside */
        gid_t admin_gid;        /* socket.admin_group: may reload, as root may; (gid_t) -1: none */
        const char *admin_group;   /* its name, for messages */
        const char *cgroup_mount;  /* for subscriptions by cgroup, or NULL */
        size_t queue_bytes;     /* per-client limit before lines are dropped */
        int listen_fd;          /* >= 0: an inherited (socket-activated) listener */
        uint64_t start_ns;      /* evmond's start (CLOCK_REALTIME), for the hello line */
};

/* On failure *ret_error (when not NULL) may say why in words: the socket
 * path is taken by something evmond must not remove. */
int server_new(sd_event *e, const struct server_opts *opts, const struct server_ops *ops, void *userdata,
               struct server **ret, char **ret_error);
/* What is at socket PATH: 0 nothing, 1 a stale socket of ours (evmond
 * may remove it), or an error with *ret_error naming it: -EEXIST for
 * anything else (a regular file, another user's socket), -EADDRINUSE when
 * an evmond answers there. evmond never removes anything but the stale
 * socket (issue 17). */
int server_check_path(const char *path, char **ret_error);
/* Closes every client and the listener; removes the socket file we made. */
struct server *server_free(struct server *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct server *, server_free);

/* Picks the clients that want a line with META (one pass, no allocation
 * but a client's first schema line of an event) and returns how many: the caller encodes the line only when some do,
 * then hands it to server_deliver(). */
size_t server_match(struct server *s, const struct line_meta *meta);
/* The same for "format":"perf" clients, which server_match() never
 * picks: the caller hands them the record as the kernel wrote it with
 * server_deliver(). server_n_perf() is 0 when none is connected. */
size_t server_match_perf(struct server *s, const struct line_meta *meta);
size_t server_n_perf(const struct server *s);
/* Whether a perf client selects by comm, container or namespace: its
 * match needs the line's context (daemon_context_annotate()) first. */
bool server_perf_wants_context(const struct server *s);
/* Ends every perf client's stream once what is queued is written: its
 * head no longer names every id (a CPU came back with new fds). */
void server_end_perf(struct server *s);
/* Stores the record at P (LEN bytes) once for every perf client. */
void server_deliver_perf_all(struct server *s, const char *p, size_t len);
/* Stores LINE (ending in '\n') once and queues it for every client the
 * last server_match() picked; a client whose queue is full counts a drop. */
void server_deliver(struct server *s, const char *line, size_t len);
/* Of the clients the last server_match() picked, those whose subscribe
 * asked for "stack_bytes" (it moves them to the front of its list): the
 * caller then encodes the line with the stack's bytes for them and
 * without for the others, and hands both to server_deliver_stack_bytes()
 * (either may be empty when its clients are none). */
size_t server_matched_stack_bytes(struct server *s);
/* How many clients the last server_match() picked. */
size_t server_n_matched(const struct server *s);
/* BYTES_LINE NULL: it could not be encoded; its clients count a drop. */
void server_deliver_stack_bytes(struct server *s, size_t n_bytes, const char *line, size_t len,
                                const char *bytes_line, size_t bytes_len);
/* server_match() and server_deliver() in one, for a line already encoded. */
void server_broadcast(struct server *s, const struct line_meta *meta, const char *line, size_t len);
/* Stores LINE once and queues it for every client (lost records, config
 * changes), each within its queue's bound. */
void server_broadcast_all(struct server *s, const char *line, size_t len);
/* server_broadcast_all() for a "lost" line of COUNT records: a client that
 * drops it is told COUNT in its "dropped" line. */
void server_broadcast_lost(struct server *s, const char *line, size_t len, uint64_t count);
/* Writes what is queued to each client that can take it now. Call after a
 * batch of broadcasts. */
void server_flush(struct server *s);

/* The event list changed (reload): subscriptions are re-resolved by name. */
void server_events_changed(struct server *s);
/* Subscriptions are re-resolved by name against NAMES (N, the name of the
 * event with index i at i) instead of the events served: a reload's interim
 * list, while the events it adds already sample. */
void server_events_resolve(struct server *s, const char *const *names, size_t n);

/* Housekeeping, once a second: drops the clients that stopped reading
 * their replies (their input paused, nothing written) for too long. */
void server_sweep(struct server *s);

/* The metrics' per-client series: one per uid and client name (subscribe's
 * "client", else "uid-N"), not per connection, so a client that
 * reconnects goes on in its series. Gone clients' drops stay in their
 * series; past SERVER_CLIENT_SERIES_MAX series of gone clients a new
 * one's drops are in evmon_dropped_total only. */
#define SERVER_CLIENT_SERIES_MAX 256u
struct server_client_series {
        uid_t uid;
        char name[REQUEST_CLIENT_NAME_MAX + 1];
        unsigned connected;           /* its clients connected now */
        uint64_t dropped;             /* lines dropped for them, gone ones too */
};
/* The series, in *RET (caller frees) and *RET_N. 0 or -ENOMEM. */
int server_client_series(const struct server *s, struct server_client_series **ret, size_t *ret_n);

size_t server_n_clients(const struct server *s);
/* Whether a client (streaming, aggregating or perf) subscribed to the
 * event of index IDX: one none did is counted and no more. */
bool server_wants_event(const struct server *s, size_t idx);
/* Whether every client subscribed to the event of index IDX (one at
 * least) is a streaming client whose queue drops now
 * (line_queue_dropping()) and whose subscription takes every line of
 * the event but evmond's own (no pids, cgroups, comms, containers,
 * namespaces or filter): a sample of it that is not evmond's own is a
 * drop for each of them, and no more (server_drop_event()). */
bool server_event_only_dropping(const struct server *s, size_t idx);
/* Whether every client subscribed to the event of index IDX (one at
 * least) is a streaming client that matches a line by its event, pid,
 * cgroup and self alone (no comms, containers, namespaces or filter)
 * and takes it as every other client does (no stack_bytes): then the
 * line of a sample of it needs nothing of the sample to match, and may
 * be encoded before (on a reader thread, emit.c). */
bool server_event_plain(const struct server *s, size_t idx);
/* N such samples of IDX, dropped: counted for those clients. */
void server_drop_event(struct server *s, size_t idx, uint64_t n);
/* Of them, those that aggregate (they want no line encoded) and those
 * that stream. */
size_t server_n_aggregating(const struct server *s);
static inline size_t server_n_streaming(const struct server *s) {
        /* perf clients take records, not lines */
        return server_n_clients(s) - server_n_aggregating(s) - server_n_perf(s);
}
/* Folds sample AS (with META, for the filters) into every aggregating
 * client that wants it: no allocation, no line. */
void server_aggregate(struct server *s, const struct line_meta *meta, const struct agg_sample *as);
/* Whether PID (a tgid or tid, as evmond's pid namespace sees it) is
 * evmond's own or one of its root or admin clients' (SO_PEERCRED): what
 * a line without "self" in its subscription leaves out. */
bool server_is_self(const struct server *s, pid_t pid);
/* Changes whenever what server_is_self() answers may: a root or admin
 * client came or went. */
uint64_t server_self_gen(const struct server *s);
uint64_t server_dropped_total(const struct server *s);
/* The clients (pid, uid, queued bytes, drops) for the status line, in
 * *RET (caller frees) and *RET_N. 0 or -ENOMEM. */
int server_clients_status(const struct server *s, struct encode_status_client **ret, size_t *ret_n);
