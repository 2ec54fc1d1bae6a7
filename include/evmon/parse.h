/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* src/basic/parse.c: numbers from text, for every module. */

#include <stdint.h>
#include <sys/types.h>

/* The whole string S as an unsigned number in C syntax (decimal, 0x..,
 * 0..): 0, or -EINVAL for an empty string, a sign '-', trailing text or
 * a value past 2^64-1 (*RET untouched). strtoull()'s leading blanks and
 * '+' are taken, as they always were by attr and config. */
int parse_u64(const char *s, uint64_t *ret);

/* S as a process or thread id, as /proc names them: decimal digits only,
 * 1 to INT32_MAX. 0 or -EINVAL. */
int parse_pid(const char *s, pid_t *ret);
