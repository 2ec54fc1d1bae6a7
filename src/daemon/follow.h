/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Uprobes that follow their binary: the probed file is watched, and a new
 * file renamed over its path is probed too (follow.c). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "evmon/cleanup.h"

struct daemon;
struct daemon_event;
struct follow;

/* For a uprobe EV, opened: records the probed file (device, inode, build
 * id) and watches its path, in ev->follow. 0 and nothing for other kinds
 * and under --check-config. */
int follow_start(struct daemon *d, struct daemon_event *ev);
/* Stops watching and closes the attachments to later files (the kernel
 * side; memory stays). NULL-tolerant. */
void follow_stop(struct follow *f);
struct follow *follow_free(struct follow *f);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct follow *, follow_free);
/* Enables or disables the attachments to later files with their event. */
void follow_set_enabled(struct follow *f, bool enabled);
/* The files the probe is in now (the first and those that followed). */
size_t follow_n_attached(const struct follow *f);
/* Files found at the path and refused (not a regular file, or not of the
 * configured file's owner or root), and files no longer probed because
 * more than FOLLOW_ATTACH_MAX (16) were, since the start. */
uint64_t follow_n_refused(const struct follow *f);
uint64_t follow_n_detached(const struct follow *f);
/* Why the file at the path now is not probed (its symbol is gone), or NULL. */
const char *follow_missing(const struct follow *f);
