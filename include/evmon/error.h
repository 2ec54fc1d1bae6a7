/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* src/basic/error.c: the message half of "-errno and a message", for
 * every module that returns both (tracefs, the daemon). */

#include "evmon/cleanup.h"

/* Sets *RET_ERROR (when not NULL; an old message is freed) to the
 * formatted message and returns ERROR, so callers can write
 * "return error_set(ret_error, -ENOENT, ...)". Out of memory, the message
 * is NULL and ERROR is still returned. */
int error_set(char **ret_error, int error, const char *fmt, ...) _printf_(3, 4);
