/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* src/encode/perfdata-tree.c: what a perf.data file says beyond its kernel
 * records, as JSON lines for evmonctl decode: the header line first, and
 * perf's own records (HEADER_ATTR, FINISHED_ROUND, ...). The trees the
 * reader decoded (struct perfdata_tree) are written as they are: objects,
 * arrays, numbers, strings (escaped), hex strings for addresses and masks.
 * Nothing here allocates beyond the caller's struct jbuf. */

#include "evmon/perfdata.h"

struct jbuf;

/* Appends {"type":"header",...perfdata_header()'s members...}\n.
 * 0 or -ENOMEM (the buffer is unchanged). */
int encode_perfdata_header(struct jbuf *b, const struct perfdata *pd);

/* Appends {"type":"record","record":"finished_round","fields":{...}}\n for perf's own record PR (pr->user); the record name
 * is perf's in lower case. -EINVAL for a kernel record. */
int encode_perfdata_user(struct jbuf *b, const struct perfdata_record *pr);
