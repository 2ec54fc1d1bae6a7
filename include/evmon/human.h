/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* `evmonctl watch`'s terminal view of one of evmond's lines, shared with
 * `evmon-forward --read` (whose lines carry "host", printed first). */

#include <json-c/json.h>
#include <stdio.h>

/* Writes O as one readable line to F: an event as "TIME cpuN PID[/TID]
 * EVENT key=value..." (a field's print fmt name, from "symbols", instead of
 * its number), any other line but hello, subscribed and schema as
 * "-- JSON". Strings are shown with their control characters escaped (a
 * newline as \n, ESC as \x1b, a backslash as \\): they are anyone's to
 * choose (a file name, a comm), and the terminal must not obey them. */
void human_print(FILE *f, json_object *o);
