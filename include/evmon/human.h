/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* `evmonctl watch`'s terminal view of evmond's lines, shared with
 * `evmon-forward --read` (whose lines carry "host", printed first), and
 * the escaping every terminal printer of evmonctl uses. */

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum {
        HUMAN_COLOR = 1 << 0,   /* SGR colours: dim time, event, comm, container */
};

#define HUMAN_COUNTERS_MAX 256  /* counting events whose last time is kept for the rate */

/* A view: what one line needs from those before it (a counter's rate is
 * its delta over the time since its last line; the counter table's
 * header comes once per run of counter lines). Zeroed, or human_init(). */
struct human {
        unsigned flags;
        bool in_counters;               /* the last line printed was a counter row */
        size_t n_last;
        struct human_last {
                char *event;
                int64_t ts;
        } last[HUMAN_COUNTERS_MAX];
};

void human_init(struct human *h, unsigned flags);
/* Frees what H keeps; H may be used again (as if zeroed, FLAGS kept). */
void human_done(struct human *h);

/* Writes O as a person reads it to F:
 *   an event as "TIME cpuN COMM[PID] @CONTAINER EVENT key=value...",
 *     TIME the local HH:MM:SS.uuuuuu of "time", [PID/TID] for a thread
 *     other than the leader, a field's print fmt name (from "symbols")
 *     instead of its number, then the "sample" fields (objects and
 *     arrays as JSON) and its callchain one frame a line, indented, with
 *     the frame's symbol and module where the line has them;
 *   a counter line as a row of a table (event, value, delta, rate per
 *     second, running/enabled %), its header before the first of a run;
 *   hello, subscribed and schema not at all; any other line "-- JSON".
 * Every string is shown with its control characters escaped (a newline
 * as \n, ESC as \x1b, a backslash as \\): they are anyone's to choose (a
 * file name, a comm, and with evmon-forward --read the whole line), and
 * the terminal must not obey them. */
void human_line(struct human *h, FILE *f, json_object *o);
/* human_line() with a view of its own (no colour, no state). */
void human_print(FILE *f, json_object *o);

/* Writes the LEN bytes of LINE, one of evmond's JSON lines, to F for a
 * terminal: DEL and the C1 controls (U+0080..U+009F, valid UTF-8 that
 * evmond passes through) as \u00NN escapes, so the line is the same JSON
 * and drives no terminal (`evmonctl watch --json` on one). */
void human_put_json(FILE *f, const char *line, size_t len);
/* Writes the N bytes of S to F escaped for a terminal, as human_line()
 * writes a string. */
void human_put_text(FILE *f, const char *s, size_t n);
/* S escaped as human_put_text() writes it, into BUF of SIZE bytes (cut
 * short, never mid-escape, when it does not fit); returns BUF. */
char *human_escape(char *buf, size_t size, const char *s);
/* The colour flags for a terminal printer: WHEN is "always", "never" or
 * "auto" (or NULL: auto), auto meaning on when TERMINAL, $NO_COLOR unset
 * or empty (no-color.org) and $TERM not "dumb". -EINVAL for another WHEN. */
int human_color_flags(const char *when, bool terminal, unsigned *ret);

/* Writes O, an answer of evmond's (status) or of evmonctl's own
 * (describe), as text to F: each member "key: value", values aligned
 * (the line's "type" string left out), an object's members indented
 * below "key:", an array of objects as a table, a column per key,
 * numbers right-aligned; strings escaped, a double to 3 decimals, a
 * nested value in a cell cut at 40 characters. */
void human_object(FILE *f, json_object *o, unsigned flags);

/* SGR sequences the printers share, and nothing when COLOR is false. */
#define HUMAN_SGR_DIM "\033[2m"
#define HUMAN_SGR_BOLD "\033[1m"
#define HUMAN_SGR_EVENT "\033[1;36m"
#define HUMAN_SGR_COMM "\033[32m"
#define HUMAN_SGR_CONTAINER "\033[35m"
#define HUMAN_SGR_RESET "\033[0m"
