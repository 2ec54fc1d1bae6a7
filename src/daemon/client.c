/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "evmon/perfdata.h"
#include "evmon/cleanup.h"
#include "evmon/encode.h"
#include "evmon/log.h"

#define CLIENT_IOV_MAX 64
/* Of a client's requests per wakeup: about 50 status requests. */
#define CLIENT_READ_MAX 1024u

/* The kernel's share of a client's backlog. Its default (net.core.
 * wmem_default, 208 KiB) holds about one busy tick's lines (16 ms of a
 * uprobe at 90,000/s is 500 KB), so each tick took three writes, two of
 * them after EPOLLOUT wakeups: 1 MiB cut evmond's wakeups at that rate
 * from 185 to 120 a second (bench/run's uprobe workload here). More
 * than net.core.wmem_max (208 KiB on a stock kernel) is not granted: the
 * rest waits in clients.queue_kib as before. */
#define CLIENT_SNDBUF_BYTES (1 << 20)

int client_reply(struct client *c, const char *line, size_t len) {
        struct line_span sp;
        int r;

        r = line_store_put(c->queue.store, line, len, &sp);
        if (r < 0)
                return r;
        return line_queue_push_reply(&c->queue, &sp);
}

void client_fail(struct client *c) {
        if (c->dead)
                return;
        c->dead = c->closing = true;
        (void) sd_event_source_set_enabled(c->io, SD_EVENT_OFF);
        c->handler->failed(c, c->userdata);
}

uint64_t client_stuck_usec(const struct client *c, uint64_t now) {
        return c->paused && c->stuck_usec && now > c->stuck_usec ? now - c->stuck_usec : 0;
}

/* A client whose replies fill its queue is not read until it has read
 * them: its requests wait in its socket, and evmond's memory stays
 * bounded however fast it asks (issue 17). */
static void client_pause(struct client *c) {
        c->paused = true;
        c->stuck_usec = now_usec();
}

static void client_reply_error(struct client *c, const char *message) {
        _cleanup_(jbuf_donep) struct jbuf line = {};

        if (encode_error(&line, message) >= 0)
                (void) client_reply(c, line.data, line.len);
}

/* Hands each complete line in the input buffer to the handler, until the
 * queue is full. */
static int client_handle_input(struct client *c) {
        size_t start = 0;
        int r;

        for (size_t i = 0; i < c->in_len; i++) {
                if (c->inbuf[i] != '\n')
                        continue;
                if (line_queue_full(&c->queue)) {
                        client_pause(c);
                        break;
                }
                if (!c->in_discard) {
                        r = c->handler->line(c, c->inbuf + start, i - start, c->userdata);
                        if (r < 0)
                                return r;
                        /* A reload may have flushed us to death. */
                        if (c->dead)
                                return -ECONNRESET;
                }
                c->in_discard = false;
                start = i + 1;
        }
        memmove(c->inbuf, c->inbuf + start, c->in_len - start);
        c->in_len -= start;
        if (c->in_len == sizeof(c->inbuf) && !c->paused) {
                if (!c->in_discard) {
                        char msg[64];

                        /* The buffer holds the longest line and its '\n'. */
                        snprintf(msg, sizeof(msg), "line longer than %u bytes ignored", CLIENT_INBUF_SIZE - 1);
                        client_reply_error(c, msg);
                }
                c->in_discard = true;
                c->in_len = 0;
        }
        return 0;
}

/* A client with more requests waiting than one wakeup reads yields to
 * the rings and to the listening socket (SD_EVENT_PRIORITY_NORMAL + 1, so
 * that hangups come first) until it has sent no more: two clients that
 * sent status requests without pause kept new connections waiting for
 * good, their io being always pending at a higher priority. */
static void client_set_bulk(struct client *c, bool bulk) {
        if (c->bulk == bulk)
                return;
        c->bulk = bulk;
        (void) sd_event_source_set_priority(c->io, bulk ? SD_EVENT_PRIORITY_NORMAL + 1 : SD_EVENT_PRIORITY_NORMAL);
}

/* Reads some of what the client sent; each complete line is one request.
 * One wakeup takes CLIENT_READ_MAX bytes at the most, and the rest stays
 * readable for the next: 64 KiB of status requests in one write took 50 ms
 * to answer, while the rings and the other clients waited. */
static int client_read(struct client *c) {
        size_t want = sizeof(c->inbuf) - c->in_len;
        ssize_t n;

        if (want > CLIENT_READ_MAX)
                want = CLIENT_READ_MAX;
        n = read(c->fd, c->inbuf + c->in_len, want);
        if (n < 0) {
                if (errno == EAGAIN || errno == EINTR)
                        return 0;
                return -errno;
        }
        if (n == 0) {
                /* Shut down in the middle of a line: say it was not taken. */
                if (c->in_len > 0 && !c->in_discard)
                        client_reply_error(c, "line without a newline at the end of the input ignored");
                c->in_len = 0;
                return -ECONNRESET;
        }
        c->in_len += (size_t) n;
        client_set_bulk(c, (size_t) n == want);
        return client_handle_input(c);
}

/* Watch for input unless the client is closing (its EOF would stay
 * readable and spin the loop) or paused, and for output while a write
 * would block. */
static int client_arm(struct client *c, bool out) {
        uint32_t events = (c->closing || c->paused ? 0 : EPOLLIN | EPOLLRDHUP) | (out ? EPOLLOUT : 0);

        if (c->io_events == events)
                return 0;
        c->io_events = events;
        return sd_event_source_set_io_events(c->io, events);
}

/* Caught up after drops: tells the client how many. */
static int client_queue_dropped(struct client *c) {
        _cleanup_(jbuf_donep) struct jbuf line = {};
        uint64_t count, lost;

        line_queue_take_dropped(&c->queue, &count, &lost);
        if (c->perf) {
                /* perf has no "dropped": a LOST record of the records
                 * dropped here, and of those the kernel's LOST records
                 * dropped here told of (perf report counts it with the
                 * kernel's). */
                uint64_t rec[PERFDATA_LOST_RECORD_U64];

                perfdata_lost_record(c->perf_lost_id, count + lost, 0, 0, rec);
                return client_reply(c, (const char *) rec, sizeof(rec)) < 0 ? -ENOMEM : 0;
        }
        if (encode_dropped(&line, count, lost) < 0)
                return -ENOMEM;
        return client_reply(c, line.data, line.len) < 0 ? -ENOMEM : 0;
}

void client_push(struct client *c, const struct line_span *sp, uint64_t lost) {
        /* Once per gap: the "dropped" line's allocation is no event's.
         * Out of memory, the count would be lost: the client goes, as
         * when client_write() cannot make that line. */
        if (_unlikely_(c->queue.dropped > 0) && !line_queue_dropping(&c->queue) &&
            client_queue_dropped(c) < 0) {
                client_fail(c);
                return;
        }
        (void) line_queue_push(&c->queue, sp, lost);
}

/* Writes what is queued until the socket takes no more. */
static int client_write(struct client *c) {
        while (!line_queue_empty(&c->queue) || c->queue.dropped > 0) {
                struct iovec iov[CLIENT_IOV_MAX];
                size_t n;
                ssize_t w;

                if (line_queue_empty(&c->queue)) {
                        if (client_queue_dropped(c) < 0)
                                return -ENOMEM;
                        continue;
                }
                n = line_queue_iov(&c->queue, iov, CLIENT_IOV_MAX);
                w = writev(c->fd, iov, (int) n);
                if (w < 0) {
                        if (errno == EAGAIN)
                                return 1;
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                line_queue_advance(&c->queue, (size_t) w);
                if (c->paused)
                        c->stuck_usec = now_usec();
        }
        return 0;
}

int client_flush(struct client *c) {
        int r;

        for (;;) {
                r = client_write(c);
                if (r < 0)
                        return r;
                if (r > 0)
                        return client_arm(c, true);
                if (!c->paused || line_queue_full(&c->queue))
                        break;
                /* It read its replies: the requests it sent meanwhile now. */
                c->paused = false;
                c->stuck_usec = 0;
                r = client_handle_input(c);
                if (r < 0)
                        return r;
        }
        if (c->closing)
                return -ECONNRESET;
        return client_arm(c, false);
}

static int on_client_io(sd_event_source *es, int fd, uint32_t revents, void *userdata) {
        struct client *c = userdata;
        int r = 0;

        if (c->paused && (revents & (EPOLLHUP | EPOLLERR)))
                r = -ECONNRESET;
        else if (!c->paused && (revents & (EPOLLIN | EPOLLHUP | EPOLLRDHUP | EPOLLERR))) {
                r = client_read(c);
                if (r < 0) {
                        if (r != -ECONNRESET)
                                log_debug_errno(r, "Client %" PRIu64 ": read failed: %m", c->id);
                        /* Answers already queued still go out if the peer only shut down its write side. */
                        if (r == -ECONNRESET && !c->dead && !line_queue_empty(&c->queue) &&
                            !(revents & (EPOLLHUP | EPOLLERR))) {
                                c->closing = true;
                                r = 0;
                        }
                }
        }
        if (r >= 0 && !c->dead)
                r = client_flush(c);
        if (r < 0)
                client_fail(c);
        return 0;
}

int client_new(sd_event *e, int fd, uint64_t id, struct line_store *st, size_t queue_limit,
               const struct client_handler *h, void *userdata, struct client **ret) {
        socklen_t len = sizeof(struct ucred);
        _cleanup_(client_freep) struct client *c = NULL;
        int r;

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->fd = -1;
        c->id = id;
        c->handler = h;
        c->userdata = userdata;
        subscription_init(&c->sub);
        r = line_queue_init(&c->queue, st, queue_limit);
        if (r < 0)
                return r;
        (void) getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c->cred, &len);
        /* Best effort: the kernel caps it at net.core.wmem_max. */
        (void) setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &(int) { CLIENT_SNDBUF_BYTES }, sizeof(int));
        c->io_events = EPOLLIN | EPOLLRDHUP;
        r = sd_event_add_io(e, &c->io, fd, c->io_events, on_client_io, c);
        if (r < 0)
                return r;
        c->fd = fd;
        *ret = TAKE_PTR(c);
        return 0;
}

struct client *client_free(struct client *c) {
        if (!c)
                return NULL;
        c->io = sd_event_source_disable_unref(c->io);
        safe_close(c->fd);
        line_queue_done(&c->queue);
        subscription_done(&c->sub);
        c->agg_timer = sd_event_source_disable_unref(c->agg_timer);
        agg_free(c->agg);
        free(c->schema_gens);
        free(c);
        return NULL;
}
