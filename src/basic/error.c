/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The message half of "-errno and a message": see evmon/error.h. */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "evmon/error.h"

int error_set(char **ret_error, int error, const char *fmt, ...) {
        va_list ap;

        if (ret_error) {
                free(*ret_error);
                *ret_error = NULL;
                va_start(ap, fmt);
                if (vasprintf(ret_error, fmt, ap) < 0)
                        *ret_error = NULL;
                va_end(ap);
        }
        return error;
}
