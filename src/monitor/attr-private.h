/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Private to attr.c and pmu.c. */

#include <stdint.h>

/* A whole unsigned number, decimal or 0x hex (strtoull base 0). */
int attr_parse_u64(const char *s, uint64_t *ret);
