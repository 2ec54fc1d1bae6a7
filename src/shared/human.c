/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdbool.h>
#include <string.h>

#include "evmon/human.h"
#include "evmon/protocol.h"

/* Writes the N bytes of S to F for a terminal: no control character
 * goes out as itself, since a file name or comm is anyone's to choose
 * and an escape sequence in it would drive the terminal (an ESC [ ...),
 * a newline would forge a line. In text (JSON false) a backslash,
 * newline, tab and carriage return become \\ \n \t \r, any other C0
 * byte, DEL and the C1 controls (U+0080..U+009F, which evmond's JSON
 * gives for those bytes of invalid UTF-8) \xNN. JSON text has its C0
 * escaped already: DEL and C1 become \u00NN there, so it stays JSON. */
static void put_text(FILE *f, const char *s, size_t n, bool json) {
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char) s[i];

                if (c == 0xc2 && i + 1 < n && (unsigned char) s[i + 1] >= 0x80 && (unsigned char) s[i + 1] <= 0x9f) {
                        fprintf(f, json ? "\\u%04x" : "\\x%02x", (unsigned char) s[++i]);
                        continue;
                }
                if (json) {
                        if (c == 0x7f)
                                fputs("\\u007f", f);
                        else
                                fputc(c, f);
                        continue;
                }
                switch (c) {
                case '\\':
                        fputs("\\\\", f);
                        break;
                case '\n':
                        fputs("\\n", f);
                        break;
                case '\t':
                        fputs("\\t", f);
                        break;
                case '\r':
                        fputs("\\r", f);
                        break;
                default:
                        if (c < 0x20 || c == 0x7f)
                                fprintf(f, "\\x%02x", c);
                        else
                                fputc(c, f);
                }
        }
}

void human_put_json(FILE *f, const char *line, size_t len) {
        put_text(f, line, len, true);
}

void human_put_text(FILE *f, const char *s, size_t len) {
        put_text(f, s, len, false);
}

static void put_string(FILE *f, json_object *v) {
        put_text(f, json_object_get_string(v), (size_t) json_object_get_string_len(v), false);
}

static void put_json(FILE *f, json_object *v) {
        const char *s = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);

        put_text(f, s, strlen(s), true);
}

static void print_value(FILE *f, json_object *v) {
        if (json_object_is_type(v, json_type_string))
                put_string(f, v);
        else
                put_json(f, v);
}

void human_print(FILE *f, json_object *o) {
        json_object *type, *v, *fields, *sample, *symbols = NULL;
        const char *t;

        if (!json_object_object_get_ex(o, "type", &type))
                return;
        t = json_object_get_string(type);
        /* What a person watching needs no line for: the greeting, and the
         * schema of what follows (the lines say it themselves). */
        if (strcmp(t, EVMON_LINE_HELLO) == 0 || strcmp(t, EVMON_LINE_SUBSCRIBED) == 0 || strcmp(t, EVMON_LINE_SCHEMA) == 0)
                return;
        if (json_object_object_get_ex(o, "host", &v)) {
                put_string(f, v);
                fputc(' ', f);
        }
        if (strcmp(t, EVMON_LINE_EVENT) != 0) {
                fputs("-- ", f);
                put_json(f, o);
                fputc('\n', f);
                return;
        }
        if (json_object_object_get_ex(o, "time", &v)) {
                const char *s = json_object_get_string(v), *tpos = strchr(s, 'T');

                /* HH:MM:SS.micro of the RFC 3339 time. Escaped like any
                 * other string: evmon-forward --read shows what anyone
                 * who may publish on NATS wrote, and a "time" of
                 * ESC ]0;title BEL set the terminal's title. */
                s = tpos ? tpos + 1 : s;
                put_text(f, s, strnlen(s, 15), false);
                fputc(' ', f);
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
                put_string(f, v);
        (void) json_object_object_get_ex(o, "symbols", &symbols);
        if (json_object_object_get_ex(o, "fields", &fields)) {
                json_object_object_foreach(fields, key, val) {
                        json_object *name;

                        fputc(' ', f);
                        put_text(f, key, strlen(key), false);
                        fputc('=', f);
                        /* The print fmt's name where it gives one, as perf
                         * script shows it (prev_state=S). */
                        if (symbols && json_object_object_get_ex(symbols, key, &name))
                                print_value(f, name);
                        else
                                print_value(f, val);
                }
        }
        /* A perf event's sample fields (ip, period, callchain, ...): a
         * software:cpu-clock line showed no more than who and when. */
        if (json_object_object_get_ex(o, "sample", &sample) && json_object_is_type(sample, json_type_object)) {
                json_object_object_foreach(sample, key, val) {
                        fputc(' ', f);
                        put_text(f, key, strlen(key), false);
                        fputc('=', f);
                        print_value(f, val);
                }
        }
        fputc('\n', f);
}
