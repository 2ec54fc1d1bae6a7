/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "evmon/human.h"
#include "evmon/protocol.h"

static void print_value(FILE *f, json_object *v) {
        if (json_object_is_type(v, json_type_string))
                fputs(json_object_get_string(v), f);
        else
                fputs(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN), f);
}

void human_print(FILE *f, json_object *o) {
        json_object *type, *v, *fields, *symbols = NULL;
        const char *t;

        if (!json_object_object_get_ex(o, "type", &type))
                return;
        t = json_object_get_string(type);
        /* What a person watching needs no line for: the greeting, and the
         * schema of what follows (the lines say it themselves). */
        if (strcmp(t, EVMON_LINE_HELLO) == 0 || strcmp(t, EVMON_LINE_SUBSCRIBED) == 0 || strcmp(t, EVMON_LINE_SCHEMA) == 0)
                return;
        if (json_object_object_get_ex(o, "host", &v))
                fprintf(f, "%s ", json_object_get_string(v));
        if (strcmp(t, EVMON_LINE_EVENT) != 0) {
                fprintf(f, "-- %s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
                return;
        }
        if (json_object_object_get_ex(o, "time", &v)) {
                const char *s = json_object_get_string(v), *tpos = strchr(s, 'T');
                /* HH:MM:SS.micro of the RFC 3339 time */
                fprintf(f, "%.15s ", tpos ? tpos + 1 : s);
        }
        if (json_object_object_get_ex(o, "cpu", &v))
                fprintf(f, "cpu%d ", json_object_get_int(v));
        if (json_object_object_get_ex(o, "pid", &v)) {
                json_object *tid;
                fprintf(f, "%d", json_object_get_int(v));
                if (json_object_object_get_ex(o, "tid", &tid) && json_object_get_int(tid) != json_object_get_int(v))
                        fprintf(f, "/%d", json_object_get_int(tid));
                fputc(' ', f);
        }
        if (json_object_object_get_ex(o, "event", &v))
                fputs(json_object_get_string(v), f);
        (void) json_object_object_get_ex(o, "symbols", &symbols);
        if (json_object_object_get_ex(o, "fields", &fields)) {
                json_object_object_foreach(fields, key, val) {
                        json_object *name;

                        fprintf(f, " %s=", key);
                        /* The print fmt's name where it gives one, as perf
                         * script shows it (prev_state=S). */
                        if (symbols && json_object_object_get_ex(symbols, key, &name))
                                print_value(f, name);
                        else
                                print_value(f, val);
                }
        }
        fputc('\n', f);
}
