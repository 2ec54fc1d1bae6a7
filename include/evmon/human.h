/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* `evmonctl watch`'s terminal view of one of evmond's lines, shared with
 * `evmon-forward --read` (whose lines carry "host", printed first). */

#include <json-c/json.h>
#include <stdio.h>

/* Writes O as one readable line to F: an event as "TIME cpuN PID[/TID]
 * EVENT key=value..." (a field's print fmt name, from "symbols", instead of
 * its number; then the "sample" fields, objects and arrays as JSON), any other line but hello, subscribed and schema as
 * "-- JSON". Strings are shown with their control characters escaped (a
 * newline as \n, ESC as \x1b, a backslash as \\): they are anyone's to
 * choose (a file name, a comm), and the terminal must not obey them. */
void human_print(FILE *f, json_object *o);
/* Writes the LEN bytes of LINE, one of evmond's JSON lines, to F for a
 * terminal: DEL and the C1 controls (U+0080..U+009F, valid UTF-8 that
 * evmond passes through) as \u00NN escapes, so the line is the same JSON
 * and drives no terminal (`evmonctl watch --json` on one). */
void human_put_json(FILE *f, const char *line, size_t len);
/* Writes the LEN bytes of S to F with control characters escaped as
 * human_print() shows strings (\n, \x1b, \\): for any text from an
 * event (a comm, a file name) that a terminal must not obey. */
void human_put_text(FILE *f, const char *s, size_t len);
