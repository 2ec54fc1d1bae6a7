/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The daemon's answers to what clients ask through the server: the event
 * names, status and reload. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "daemon.h"
#include "perfout.h"
#include "replies.h"
#include "stats.h"
#include "evmon/log.h"

void daemon_status_text(struct daemon *d, char *buf, size_t size) {
        snprintf(buf, size, "Serving %zu events to %zu clients; %" PRIu64 " lost in the kernel, %" PRIu64 " dropped for slow clients",
                 d->n_events, server_n_clients(d->server), d->lost_total, server_dropped_total(d->server));
}

const char **daemon_event_names(struct daemon *d) {
        const char **names = calloc(d->n_events ?: 1, sizeof(char *));

        for (size_t i = 0; names && i < d->n_events; i++)
                names[i] = d->events[i]->wire_name;
        return names;
}

static size_t ops_n_events(void *userdata) {
        struct daemon *d = userdata;
        return d->n_events;
}

static const char *ops_event_name(void *userdata, size_t i) {
        struct daemon *d = userdata;
        return d->events[i]->wire_name;
}

static const struct format *ops_event_format(void *userdata, size_t i) {
        struct daemon *d = userdata;
        return d->events[i]->format;
}

static int ops_status(void *userdata, struct jbuf *line) {
        struct daemon *d = userdata;
        struct daemon_stats st;
        int r;

        r = daemon_stats_take(d, &st);
        if (r >= 0)
                r = encode_status(line, &st.status);
        daemon_stats_done(&st);
        return r;
}

static int ops_reload(void *userdata, const struct ucred *cred, struct jbuf *line) {
        struct daemon *d = userdata;
        _cleanup_(freep) char *error = NULL;
        _cleanup_(freep) const char **names = NULL;
        int r;

        log_info("Reload of %s asked by uid %u (pid %d)", d->config->path, (unsigned) cred->uid, (int) cred->pid);
        r = daemon_reload_notify(d, &error);
        names = daemon_event_names(d);
        if (!names)
                return -ENOMEM;
        return encode_reload(line, r >= 0, error, names, d->n_events);
}

static int ops_control(void *userdata, const struct request *req, const struct peer *peer, struct jbuf *line,
                       char **ret_error) {
        return daemon_control(userdata, req, peer, line, ret_error);
}

static void ops_event_info(void *userdata, size_t i, struct agg_event_info *ret) {
        struct daemon *d = userdata;
        const struct daemon_event *ev = d->events[i];

        *ret = (struct agg_event_info) {
                .name = ev->wire_name,
                .format = ev->format,
                .sample_type = ev->attr.sample_type,
        };
}

static uint64_t ops_event_clock(void *userdata, int64_t *ret_offset) {
        struct daemon *d = userdata;

        *ret_offset = d->realtime_offset;
        return now_ns(d->config->clockid);
}

static int ops_perf_head(void *userdata, const struct subscription *sub, char **ret, size_t *ret_len,
                         uint64_t *ret_lost_id) {
        return daemon_perf_head(userdata, sub, ret, ret_len, ret_lost_id);
}

const struct server_ops daemon_server_ops = {
        .n_events = ops_n_events,
        .event_name = ops_event_name,
        .event_format = ops_event_format,
        .status = ops_status,
        .reload = ops_reload,
        .control = ops_control,
        .event_info = ops_event_info,
        .event_clock = ops_event_clock,
        .perf_head = ops_perf_head,
};
