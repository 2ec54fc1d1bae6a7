/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "daemon/config.h"
#include "daemon/encode.h"
#include "daemon/server.h"
#include "evmon/monitor.h"
#include "evmon/tracefs.h"

/* One served event: its decoder, its encoder and its perf fds. */
struct daemon_event {
        unsigned index;               /* bit in client subscriptions */
        char *wire_name;
        struct event_config *cfg;     /* in daemon->config */
        struct format *format;
        struct encoder *encoder;
        int handle;                   /* monitor handle, -1 before it is open */
        uint64_t count;               /* samples received */
        uint64_t bad;                 /* samples that did not decode */
};

struct daemon_ring;

struct daemon_args {
        const char *config_path;      /* NULL: the default file or the built-in config */
        const char *socket_path;      /* overrides socket.path */
        const char *tracefs_dir;      /* overrides finding tracefs */
};

struct daemon {
        struct daemon_args args;
        sd_event *event;
        struct config *config;
        struct tracefs *tracefs;
        struct monitor *monitor;
        struct daemon_event **events;
        size_t n_events;
        struct daemon_ring *rings;
        size_t n_rings;
        sd_event_source *drain_defer, *flush_timer, *tick_timer;
        struct server *server;
        struct jbuf line;
        int64_t realtime_offset;      /* realtime - event clock, ns */
        uint64_t start_usec;
        uint64_t lost_total;
};

/* Loads the config and builds every event's decoder without opening a perf
 * fd: what --check-config runs. On a config error returns -EINVAL and sets
 * *ret_error to a message naming the file, line and key. */
int daemon_prepare(struct daemon *d, char **ret_error);
/* Opens the events, the rings and the socket, and tells systemd READY=1. */
int daemon_start(struct daemon *d);
int daemon_run(struct daemon *d);
void daemon_done(struct daemon *d);
