/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

#include "server.h"

struct daemon;

/* What the server asks of the daemon: the event names for hello and
 * subscribe, and the answers to status and reload requests. */
extern const struct server_ops daemon_server_ops;

/* The one-line status systemd shows (STATUS=). */
void daemon_status_text(struct daemon *d, char *buf, size_t size);
/* The wire names of the events served, in index order (the strings stay
 * the events'). Caller frees the array; NULL on ENOMEM. */
const char **daemon_event_names(struct daemon *d);
