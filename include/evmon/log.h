/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Logging for the two programs (daemon/ and cli/); library modules never
 * log. Lines go to stderr; under journald (JOURNAL_STREAM set) each line
 * carries an sd-daemon "<N>" priority prefix so the journal keeps levels. */

#include <stdbool.h>
#include <syslog.h>

#include "evmon/cleanup.h"

void log_setup(const char *program);
void log_set_max_level(int level);

/* A gate every line at or below the max level passes before it is
 * written; a line it refuses is not written (the gate counts it, if it
 * wants). NULL: none, the default. evmond's server sets one while it
 * handles a client's request, so every line the request causes counts
 * against the budget of that client's uid. The gate is the calling
 * thread's: other threads' lines do not pass it. */
typedef bool (*log_gate_t)(int level, void *userdata);
void log_set_gate(log_gate_t gate, void *userdata);

/* Logs at LEVEL; "%m" formats -error. Returns error (negative) so callers
 * can write "return log_error_errno(r, ...)". */
int log_internal(int level, int error, const char *fmt, ...) _printf_(3, 4);

#define log_full_errno(level, error, ...) log_internal(level, -abs(error), __VA_ARGS__)
#define log_debug(...) log_internal(LOG_DEBUG, 0, __VA_ARGS__)
#define log_info(...) log_internal(LOG_INFO, 0, __VA_ARGS__)
#define log_notice(...) log_internal(LOG_NOTICE, 0, __VA_ARGS__)
#define log_warning(...) log_internal(LOG_WARNING, 0, __VA_ARGS__)
#define log_error(...) log_internal(LOG_ERR, 0, __VA_ARGS__)
#define log_debug_errno(e, ...) log_full_errno(LOG_DEBUG, e, __VA_ARGS__)
#define log_info_errno(e, ...) log_full_errno(LOG_INFO, e, __VA_ARGS__)
#define log_warning_errno(e, ...) log_full_errno(LOG_WARNING, e, __VA_ARGS__)
#define log_error_errno(e, ...) log_full_errno(LOG_ERR, e, __VA_ARGS__)

#define log_oom() log_error_errno(-ENOMEM, "Out of memory")
