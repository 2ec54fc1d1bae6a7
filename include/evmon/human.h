/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* `evmonctl watch`'s terminal view of one of evmond's lines, shared with
 * `evmon-forward --read` (whose lines carry "host", printed first). */

#include <json-c/json.h>
#include <stdio.h>

/* Writes O as one readable line to F: an event as "TIME cpuN PID[/TID]
 * EVENT key=value..." (a field's print fmt name, from "symbols", instead of
 * its number), any other line but hello, subscribed and schema as
 * "-- JSON". */
void human_print(FILE *f, json_object *o);
