/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Private to src/tracefs/: the message half of "-errno and a message". */

#include "evmon/cleanup.h"

/* Sets *RET_ERROR (when not NULL; an old message is freed) to the
 * formatted message and returns ERROR, so callers can write
 * "return error_set(ret_error, -ENOENT, ...)". */
int error_set(char **ret_error, int error, const char *fmt, ...) _printf_(3, 4);
