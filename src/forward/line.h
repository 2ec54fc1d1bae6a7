/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What evmon-forward needs to know of one of evmond's lines to route it:
 * the top-level "type" and "event" strings, found without building a JSON
 * tree (no allocation per line), the NATS subject built from them and the
 * payload with "host" added. */

#include <stdbool.h>
#include <stddef.h>

struct line_info {
        const char *type;       /* points into the line, not NUL-terminated */
        size_t type_len;
        const char *event;      /* NULL when the line has no "event" */
        size_t event_len;
};

/* Finds the top-level "type" and "event" string values of the JSON object
 * LINE (LEN bytes, a trailing newline allowed). Returns 0, or -EINVAL when
 * LINE is not an object or has no string "type". */
int line_scan(const char *line, size_t len, struct line_info *ret);

/* Writes the subject of a line into BUF: "evmon.HOST.SYSTEM.NAME" for
 * event lines (the event "SYSTEM:NAME", its JSON escapes undone, split at
 * its first ':'), "evmon.HOST._.TYPE" for the others. In each part '.', '*', '>' and
 * whitespace become '_' (subject_part_append()). Returns the length, or
 * -ENOBUFS when SIZE is too small. */
int line_subject(const char *host, const struct line_info *li, char *buf, size_t size);

/* Appends PART (LEN bytes) to BUF at *POS as one subject token: '.', '*',
 * '>', whitespace and control bytes become '_', an empty part is "_".
 * Returns 0 or -ENOBUFS (BUF stays NUL-terminated either way). */
int subject_part_append(char *buf, size_t size, size_t *pos, const char *part, size_t len);

/* Writes the text of the JSON string S (LEN bytes between its quotes,
 * escapes and all) into BUF, not NUL-terminated: \uXXXX as UTF-8 (a
 * surrogate pair as one character; a lone surrogate and NUL as '_').
 * Returns the length, -ENOBUFS when SIZE is too small, -EINVAL for a
 * \u without four hex digits. */
int line_unescape(const char *s, size_t len, char *buf, size_t size);

/* Writes LINE with HOST_JSON (a JSON string literal, quotes included)
 * added as the first member "host", without the trailing newline, into
 * BUF. Returns the length or -ENOBUFS. */
int line_with_host(const char *line, size_t len, const char *host_json, char *buf, size_t size);
