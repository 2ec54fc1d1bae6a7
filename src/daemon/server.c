/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "client.h"
#include "server.h"
#include "evmon/cleanup.h"
#include "evmon/log.h"

#define CHUNK_FREE_MAX 32
/* How long accepting pauses when we are out of fds or memory. */
#define ACCEPT_PAUSE_USEC 1000000u

struct server {
        sd_event *event;
        struct server_opts opts;
        char *path;               /* the socket file we created, removed on free */
        int listen_fd;
        sd_event_source *listen_io;
        sd_event_source *accept_resume;   /* a timer, armed while accepting pauses */
        const struct server_ops *ops;
        void *userdata;

        struct client *clients;
        size_t n_clients;
        sd_event_source *reap;    /* frees dead clients */
        uint64_t next_id;
        uint64_t dropped_total;   /* of clients that are gone */

        struct chunk *cur;        /* lines are appended here; we hold one ref */
        struct chunk *free_chunks;
        size_t n_free;
};

static struct chunk *chunk_get(struct server *s, size_t need) {
        struct chunk *c;

        if (need <= CHUNK_SIZE && s->free_chunks) {
                c = s->free_chunks;
                s->free_chunks = c->next_free;
                s->n_free--;
        } else {
                size_t cap = need > CHUNK_SIZE ? need : CHUNK_SIZE;
                c = malloc(sizeof(*c) + cap);
                if (!c)
                        return NULL;
                c->cap = cap;
        }
        c->refs = 1;
        c->len = 0;
        c->next_free = NULL;
        return c;
}

void server_chunk_unref(struct server *s, struct chunk *c) {
        if (!c || --c->refs > 0)
                return;
        if (c->cap == CHUNK_SIZE && s->n_free < CHUNK_FREE_MAX) {
                c->next_free = s->free_chunks;
                s->free_chunks = c;
                s->n_free++;
        } else
                free(c);
}

/* Copies LINE into the current chunk; returns its place there. */
static int server_store(struct server *s, const char *line, size_t len, struct chunk **ret, uint32_t *ret_off) {
        if (!s->cur || s->cur->cap - s->cur->len < len) {
                struct chunk *c = chunk_get(s, len);
                if (!c)
                        return -ENOMEM;
                server_chunk_unref(s, s->cur);
                s->cur = c;
        }
        memcpy(s->cur->data + s->cur->len, line, len);
        *ret = s->cur;
        *ret_off = (uint32_t) s->cur->len;
        s->cur->len += len;
        return 0;
}

bool server_wants(const struct server *s, const struct line_meta *meta) {
        for (const struct client *c = s->clients; c; c = c->next)
                if (!c->closing && client_wants(c, meta))
                        return true;
        return false;
}

void server_broadcast(struct server *s, const struct line_meta *meta, const char *line, size_t len) {
        struct chunk *chunk = NULL;
        uint32_t off = 0;

        for (struct client *c = s->clients; c; c = c->next) {
                if (c->closing || !client_wants(c, meta))
                        continue;
                if (!chunk && server_store(s, line, len, &chunk, &off) < 0) {
                        /* Out of memory: the line is lost for everyone; say so. */
                        for (struct client *d = s->clients; d; d = d->next)
                                if (!d->closing && client_wants(d, meta))
                                        d->dropped++;
                        return;
                }
                client_enqueue(c, chunk, off, (uint32_t) len, s->opts.queue_bytes);
        }
}

void server_broadcast_all(struct server *s, const char *line, size_t len) {
        for (struct client *c = s->clients; c; c = c->next)
                if (!c->closing)
                        (void) server_send(s, c, line, len);
}

int server_send(struct server *s, struct client *c, const char *line, size_t len) {
        struct chunk *chunk;
        uint32_t off;
        int r;

        r = server_store(s, line, len, &chunk, &off);
        if (r < 0)
                return r;
        client_enqueue(c, chunk, off, (uint32_t) len, SIZE_MAX);
        return 0;
}

void server_flush(struct server *s) {
        struct client *c, *next;

        for (c = s->clients; c; c = next) {
                next = c->next;
                if (!c->dead && (c->q_len > 0 || c->dropped > 0 || c->closing))
                        if (client_flush(c) < 0)
                                server_client_fail(s, c);
        }
}

void server_client_fail(struct server *s, struct client *c) {
        if (c->dead)
                return;
        c->dead = c->closing = true;
        (void) sd_event_source_set_enabled(c->io, SD_EVENT_OFF);
        (void) sd_event_source_set_enabled(s->reap, SD_EVENT_ONESHOT);
}

static int on_reap(sd_event_source *es, void *userdata) {
        struct server *s = userdata;
        struct client *c, *next;

        for (c = s->clients; c; c = next) {
                next = c->next;
                if (c->dead)
                        client_free(c);
        }
        return 0;
}

void server_client_closed(struct server *s, struct client *c) {
        if (c->prev)
                c->prev->next = c->next;
        else if (s->clients == c)
                s->clients = c->next;
        if (c->next)
                c->next->prev = c->prev;
        c->prev = c->next = NULL;
        c->linked = false;
        s->n_clients--;
        s->dropped_total += c->dropped_total;
        /* Its fd is free again: if accepting paused for want of fds, resume. */
        if (s->listen_io)
                (void) sd_event_source_set_enabled(s->listen_io, SD_EVENT_ON);
}

sd_event *server_get_event(const struct server *s) {
        return s->event;
}

const char *server_cgroup_mount(const struct server *s) {
        return s->opts.cgroup_mount;
}

const struct server_ops *server_get_ops(const struct server *s, void **ret_userdata) {
        *ret_userdata = s->userdata;
        return s->ops;
}

void server_events_changed(struct server *s) {
        for (struct client *c = s->clients; c; c = c->next)
                client_resolve(c);
}

size_t server_n_clients(const struct server *s) {
        return s->n_clients;
}

uint64_t server_dropped_total(const struct server *s) {
        uint64_t n = s->dropped_total;
        for (const struct client *c = s->clients; c; c = c->next)
                n += c->dropped_total;
        return n;
}

int server_clients_status(const struct server *s, struct encode_status_client **ret, size_t *ret_n) {
        struct encode_status_client *a;
        size_t n = 0;

        a = calloc(s->n_clients ? s->n_clients : 1, sizeof(*a));
        if (!a)
                return -ENOMEM;
        for (const struct client *c = s->clients; c && n < s->n_clients; c = c->next)
                a[n++] = (struct encode_status_client) {
                        .id = c->id,
                        .pid = c->cred.pid,
                        .uid = c->cred.uid,
                        .queued_bytes = c->queued,
                        .lines = c->lines_queued,
                        .dropped = c->dropped_total,
                };
        *ret = a;
        *ret_n = n;
        return 0;
}

static int on_accept_resume(sd_event_source *es, uint64_t usec, void *userdata) {
        struct server *s = userdata;

        return sd_event_source_set_enabled(s->listen_io, SD_EVENT_ON);
}

/* One connection per dispatch: the listening socket stays readable while
 * more wait, and between two accepts the loop handles the hangups of
 * clients that left (they come first, see server_new()), so a place they
 * free under clients.max goes to the next in line. */
static int on_accept(sd_event_source *es, int fd, uint32_t revents, void *userdata) {
        struct server *s = userdata;
        _cleanup_(closep) int cfd = -1;
        struct client *c;
        int r;

        cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd < 0) {
                if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                        /* The connection stays in the backlog and the socket
                         * readable: trying again at once would spin. Pause
                         * until a client leaves, or for a second. */
                        log_warning_errno(errno, "Cannot accept a client on %s: %m; pausing new connections",
                                          s->path ? s->path : "socket");
                        (void) sd_event_source_set_enabled(s->listen_io, SD_EVENT_OFF);
                        (void) sd_event_source_set_time_relative(s->accept_resume, ACCEPT_PAUSE_USEC);
                        (void) sd_event_source_set_enabled(s->accept_resume, SD_EVENT_ONESHOT);
                }
                /* EAGAIN, or a connection aborted before we took it. */
                return 0;
        }
        if (s->n_clients >= s->opts.max_clients) {
                _cleanup_(jbuf_donep) struct jbuf line = {};

                if (encode_error(&line, "too many clients (clients.max in the config)") >= 0)
                        (void) !write(cfd, line.data, line.len);
                log_warning("Refused a client: already %zu clients (clients.max)", s->n_clients);
                return 0;
        }
        r = client_new(s, cfd, ++s->next_id, &c);
        if (r < 0) {
                log_warning_errno(r, "Failed to set up a client: %m");
                return 0;
        }
        TAKE_FD(cfd);
        c->next = s->clients;
        if (s->clients)
                s->clients->prev = c;
        s->clients = c;
        c->linked = true;
        s->n_clients++;
        log_info("Client %" PRIu64 " connected: pid %d, uid %u, gid %u",
                 c->id, (int) c->cred.pid, (unsigned) c->cred.uid, (unsigned) c->cred.gid);
        if (client_flush(c) < 0)
                client_free(c);
        return 0;
}

static int server_listen(struct server *s) {
        _cleanup_(closep) int fd = -1;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_(freep) char *dir = NULL;
        char *slash;
        mode_t old;
        int r;

        if (strlen(s->opts.path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, s->opts.path);

        dir = strdup(s->opts.path);
        if (!dir)
                return -ENOMEM;
        slash = strrchr(dir, '/');
        if (slash && slash != dir) {
                *slash = 0;
                /* Our runtime directory: 0755 so group members can reach the
                 * socket; the socket's own mode decides who connects. */
                if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                        return -errno;
        }

        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;

        /* A socket file left by a daemon that died: replace it, but never a
         * socket some live daemon still answers on. */
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) == 0)
                return -EADDRINUSE;
        (void) unlink(s->opts.path);

        /* Bind under a umask that leaves nobody else access, then set owner
         * and mode before listen(): no moment where others may connect. */
        old = umask(0177);
        r = bind(fd, (struct sockaddr *) &sa, sizeof(sa));
        umask(old);
        if (r < 0)
                return -errno;
        s->path = strdup(s->opts.path);
        if (!s->path)
                return -ENOMEM;
        if (s->opts.gid != (gid_t) -1 && chown(s->path, (uid_t) -1, s->opts.gid) < 0)
                return -errno;
        if (chmod(s->path, s->opts.mode) < 0)
                return -errno;
        if (listen(fd, SOMAXCONN) < 0)
                return -errno;
        s->listen_fd = TAKE_FD(fd);
        return 0;
}

int server_new(sd_event *e, const struct server_opts *opts, const struct server_ops *ops, void *userdata,
               struct server **ret) {
        struct server *s;
        int r;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->event = sd_event_ref(e);
        s->opts = *opts;
        s->ops = ops;
        s->userdata = userdata;
        s->listen_fd = -1;

        if (opts->listen_fd >= 0) {
                s->listen_fd = opts->listen_fd;
                if (fcntl(s->listen_fd, F_SETFL, fcntl(s->listen_fd, F_GETFL) | O_NONBLOCK) < 0) {
                        r = -errno;
                        goto fail;
                }
        } else {
                r = server_listen(s);
                if (r < 0)
                        goto fail;
        }
        r = sd_event_add_defer(e, &s->reap, on_reap, s);
        if (r < 0)
                goto fail;
        (void) sd_event_source_set_enabled(s->reap, SD_EVENT_OFF);
        r = sd_event_add_io(e, &s->listen_io, s->listen_fd, EPOLLIN, on_accept, s);
        if (r < 0)
                goto fail;
        /* After the clients' hangups and the reap they schedule: a client
         * that closed before another connected has freed its place under
         * clients.max by the time the new one is accepted. */
        r = sd_event_source_set_priority(s->listen_io, SD_EVENT_PRIORITY_NORMAL + 1);
        if (r < 0)
                goto fail;
        (void) sd_event_source_set_description(s->listen_io, "listen");
        r = sd_event_add_time_relative(e, &s->accept_resume, CLOCK_MONOTONIC, ACCEPT_PAUSE_USEC, 0,
                                       on_accept_resume, s);
        if (r < 0)
                goto fail;
        (void) sd_event_source_set_enabled(s->accept_resume, SD_EVENT_OFF);
        *ret = s;
        return 0;
fail:
        server_free(s);
        return r;
}

struct server *server_free(struct server *s) {
        if (!s)
                return NULL;
        while (s->clients)
                client_free(s->clients);
        s->listen_io = sd_event_source_disable_unref(s->listen_io);
        s->accept_resume = sd_event_source_disable_unref(s->accept_resume);
        s->reap = sd_event_source_disable_unref(s->reap);
        if (s->path)
                (void) unlink(s->path);
        free(s->path);
        safe_close(s->listen_fd);
        server_chunk_unref(s, s->cur);
        while (s->free_chunks) {
                struct chunk *c = s->free_chunks;
                s->free_chunks = c->next_free;
                free(c);
        }
        sd_event_unref(s->event);
        free(s);
        return NULL;
}
