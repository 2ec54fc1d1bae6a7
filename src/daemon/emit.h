/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "evmon/monitor.h"
#include "reader.h"

struct daemon;

/* The hot path's daemon half: what the ring reader (reader.c) hands each
 * record to. USERDATA is the struct daemon. */

/* Samples, losses and side records: a line encoded into the daemon's
 * one line buffer and handed to the server's matching clients. */
extern const struct monitor_handler daemon_emit_handler;
/* After each batch of records the reader drained: the clients' queues
 * are flushed to their sockets. */
void daemon_emit_batch(void *userdata);

/* The reader threads' scan (reader_set_scan()): a sample of an event no
 * client wants is counted by the thread that reads it, and goes no
 * further, as on_sample() does with it on the loop; the line of one a
 * client takes is encoded there but its context, which the merge
 * splices in (or, with none, queues the line as it is). */
extern const struct reader_scan daemon_emit_scan;
void daemon_emit_scan_done(struct daemon *d);
/* The lines the reader threads encoded (status "ring.encoded"). */
uint64_t daemon_emit_scan_lines(const struct daemon *d);
