/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* json-c glue shared by the modules that read or build JSON objects (the
 * config, client requests, the rare lines of src/encode/lines.c). */

#include <json-c/json.h>

#include "evmon/cleanup.h"
#include "evmon/json.h"
#include "evmon/tracefs.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);
DEFINE_TRIVIAL_CLEANUP_FUNC(json_tokener *, json_tokener_free);

/* Appends O as one plain JSON line (no spaces, '/' not escaped) ending in
 * '\n'. 0 or -ENOMEM (B unchanged then). */
int jsonc_append_line(struct jbuf *b, json_object *o);

/* The print fmt tables of one field as the schema line and evmonctl
 * describe show them (src/encode/schema.c): an array of parts, each
 * {"test":{"shift","mask"},"then":EXPR,"else":EXPR} or {"then":EXPR}.
 * NULL when out of memory. The caller owns it. */
json_object *encode_symbols_new(const struct field_symbols *s);
