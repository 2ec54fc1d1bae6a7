/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "evmon/cleanup.h"
#include "evmon/human.h"
#include "evmon/json.h"
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
                if (c >= 0x80) {
                        /* Valid UTF-8 (C1 was caught above) goes out as
                         * itself; a lone byte of 0x80..0xff (an 8-bit CSI
                         * is 0x9b) is escaped, whatever the JSON it came in
                         * (json-c does not check UTF-8; evmon-forward
                         * --read prints what NATS held). */
                        size_t len = json_utf8_len((const uint8_t *) s + i, n - i);

                        if (len == 0)
                                fprintf(f, json ? "\\u%04x" : "\\x%02x", c);
                        else
                                fwrite(s + i, 1, len, f);
                        i += len ? len - 1 : 0;
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

void human_put_text(FILE *f, const char *s, size_t n) {
        put_text(f, s, n, false);
}

char *human_escape(char *buf, size_t size, const char *s) {
        size_t len = 0;

        if (size == 0)
                return buf;
        for (; *s; s++) {
                unsigned char c = (unsigned char) *s;
                char e[8];
                size_t n;

                if (c == 0xc2 && (unsigned char) s[1] >= 0x80 && (unsigned char) s[1] <= 0x9f)
                        n = (size_t) snprintf(e, sizeof(e), "\\x%02x", (unsigned char) *++s);
                else if (c >= 0x80) {
                        n = json_utf8_len((const uint8_t *) s, strnlen(s, 4));
                        if (n == 0)
                                n = (size_t) snprintf(e, sizeof(e), "\\x%02x", c);
                        else {
                                memcpy(e, s, n);
                                s += n - 1;
                        }
                } else if (c == '\\' || c == '\n' || c == '\t' || c == '\r')
                        n = (size_t) snprintf(e, sizeof(e), "\\%c",
                                              c == '\\' ? '\\' : c == '\n' ? 'n' : c == '\t' ? 't' : 'r');
                else if (c < 0x20 || c == 0x7f)
                        n = (size_t) snprintf(e, sizeof(e), "\\x%02x", c);
                else {
                        e[0] = (char) c;
                        n = 1;
                }
                if (len + n >= size)
                        break;
                memcpy(buf + len, e, n);
                len += n;
        }
        buf[len] = '\0';
        return buf;
}

int human_color_flags(const char *when, bool terminal, unsigned *ret) {
        const char *no = getenv("NO_COLOR"), *term = getenv("TERM");

        if (!when || strcmp(when, "auto") == 0)
                *ret = terminal && !(no && *no) && !(term && strcmp(term, "dumb") == 0) ? HUMAN_COLOR : 0;
        else if (strcmp(when, "always") == 0)
                *ret = HUMAN_COLOR;
        else if (strcmp(when, "never") == 0)
                *ret = 0;
        else
                return -EINVAL;
        return 0;
}

void human_init(struct human *h, unsigned flags) {
        *h = (struct human) { .flags = flags };
}

void human_done(struct human *h) {
        for (size_t i = 0; i < h->n_last; i++)
                free(h->last[i].event);
        human_init(h, h->flags);
}

static void sgr(const struct human *h, FILE *f, const char *code) {
        if (h->flags & HUMAN_COLOR)
                fputs(code, f);
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

static json_object *get(json_object *o, const char *key) {
        json_object *v;

        return o && json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static const char *get_string(json_object *o, const char *key) {
        json_object *v = get(o, key);

        return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

/* evmon-forward --read: the host a line came from, first. */
static void print_host(FILE *f, json_object *o) {
        const char *host = get_string(o, "host");

        if (host) {
                put_text(f, host, strlen(host), false);
                fputc(' ', f);
        }
}

/* "2026-11-21T12:03:11.482913021Z", evmond's RFC 3339 UTC time, as the
 * local HH:MM:SS.uuuuuu into BUF (16 bytes); false for anything else. */
static bool local_time(const char *s, char buf[static 16]) {
        struct tm tm = {};
        unsigned micro = 0;
        const char *p;
        time_t t;
        int n = 0;

        if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
                   &tm.tm_sec, &n) != 6 || n != 19)
                return false;
        p = s + n;
        if (*p == '.') {
                int digits = 0;

                for (p++; isdigit((unsigned char) *p); p++, digits++)
                        if (digits < 6)
                                micro = micro * 10 + (unsigned) (*p - '0');
                if (digits == 0)
                        return false;
                for (; digits < 6; digits++)
                        micro *= 10;
        }
        if (strcmp(p, "Z") != 0 || tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 ||
            tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60)
                return false;
        tm.tm_year -= 1900;
        tm.tm_mon -= 1;
        t = timegm(&tm);
        if (t == (time_t) -1 || !localtime_r(&t, &tm))
                return false;
        snprintf(buf, 16, "%02d:%02d:%02d.%06u", tm.tm_hour, tm.tm_min, tm.tm_sec, micro);
        return true;
}

static void print_time(struct human *h, FILE *f, json_object *o) {
        const char *s = get_string(o, "time");
        char buf[16];

        if (!s)
                return;
        sgr(h, f, HUMAN_SGR_DIM);
        if (local_time(s, buf))
                fputs(buf, f);
        else {
                /* Not evmond's time (evmon-forward --read shows what
                 * anyone who may publish on NATS wrote: a "time" of
                 * ESC ]0;title BEL set the terminal's title): what
                 * follows its T, escaped like any other string. */
                const char *tpos = strchr(s, 'T');

                s = tpos ? tpos + 1 : s;
                put_text(f, s, strnlen(s, 15), false);
        }
        sgr(h, f, HUMAN_SGR_RESET);
        fputc(' ', f);
}

/* The container a person knows it by: its runtime's name, else the
 * first 12 digits of its id as `docker ps` shows them (a machine's name
 * is its whole "container"). */
static void print_container(struct human *h, FILE *f, json_object *o) {
        const char *id = get_string(o, "container"), *name = get_string(get(o, "container_info"), "name");

        if (!id && !name)
                return;
        sgr(h, f, HUMAN_SGR_CONTAINER);
        fputc('@', f);
        if (name && *name)
                put_text(f, name, strlen(name), false);
        else
                put_text(f, id, strnlen(id, strspn(id, "0123456789abcdef") == 64 ? 12 : 64), false);
        sgr(h, f, HUMAN_SGR_RESET);
        fputc(' ', f);
}

/* One frame a line, as perf script prints a callchain: the address,
 * then the symbol and the module where the line names them, "[unknown]"
 * where it has "syms" but none for the frame (with evmond's reason when
 * it gives one). */
static void print_callchain(struct human *h, FILE *f, json_object *chain) {
        size_t n = json_object_array_length(chain);

        for (size_t i = 0; i < n; i++) {
                json_object *seg = json_object_array_get_idx(chain, i), *ips = get(seg, "ips"), *syms = get(seg, "syms");
                const char *ctx = get_string(seg, "context");
                size_t m;

                if (!ips || !json_object_is_type(ips, json_type_array))
                        continue;
                if (syms && !json_object_is_type(syms, json_type_array))
                        syms = NULL;
                /* A context other than the kernel's and the user's (a
                 * guest's, a deferred user stack) is said once. */
                if (ctx && strcmp(ctx, "kernel") != 0 && strcmp(ctx, "user") != 0 && strcmp(ctx, "none") != 0) {
                        fputs("        ", f);
                        sgr(h, f, HUMAN_SGR_DIM);
                        fputc('[', f);
                        put_text(f, ctx, strlen(ctx), false);
                        fputc(']', f);
                        sgr(h, f, HUMAN_SGR_RESET);
                        fputc('\n', f);
                }
                m = json_object_array_length(ips);
                for (size_t k = 0; k < m; k++) {
                        json_object *ip = json_object_array_get_idx(ips, k), *e = syms ? json_object_array_get_idx(syms, k) : NULL;
                        const char *a = ip && json_object_is_type(ip, json_type_string) ? json_object_get_string(ip) : NULL;
                        const char *sym = get_string(e, "sym"), *module = get_string(e, "module"),
                                   *why = get_string(e, "symbols");
                        char buf[40];

                        if (!a)
                                continue;
                        if (strncmp(a, "0x", 2) == 0)
                                a += 2;
                        fprintf(f, "        %16s", human_escape(buf, sizeof(buf), a));
                        if (sym) {
                                fputc(' ', f);
                                put_text(f, sym, strlen(sym), false);
                        } else if (syms) {
                                fputs(" [unknown]", f);
                        }
                        if (module) {
                                fputs(" (", f);
                                put_text(f, module, strlen(module), false);
                                fputc(')', f);
                        }
                        if (why) {
                                sgr(h, f, HUMAN_SGR_DIM);
                                fputs(" (", f);
                                put_text(f, why, strlen(why), false);
                                fputc(')', f);
                                sgr(h, f, HUMAN_SGR_RESET);
                        }
                        fputc('\n', f);
                }
        }
}

static void print_event(struct human *h, FILE *f, json_object *o) {
        json_object *v, *fields, *sample, *chain = NULL, *symbols = get(o, "symbols");
        const char *comm = get_string(get(o, "proc"), "comm"), *event = get_string(o, "event");

        print_host(f, o);
        print_time(h, f, o);
        if ((v = get(o, "cpu")))
                fprintf(f, "cpu%d ", json_object_get_int(v));
        if ((v = get(o, "pid"))) {
                json_object *tid = get(o, "tid");

                if (comm) {
                        sgr(h, f, HUMAN_SGR_COMM);
                        put_text(f, comm, strlen(comm), false);
                        sgr(h, f, HUMAN_SGR_RESET);
                }
                fprintf(f, "[%d", json_object_get_int(v));
                if (tid && json_object_get_int(tid) != json_object_get_int(v))
                        fprintf(f, "/%d", json_object_get_int(tid));
                fputs("] ", f);
        }
        print_container(h, f, o);
        if (event) {
                sgr(h, f, HUMAN_SGR_EVENT);
                put_text(f, event, strlen(event), false);
                sgr(h, f, HUMAN_SGR_RESET);
        }
        fields = get(o, "fields");
        if (fields && json_object_is_type(fields, json_type_object)) {
                json_object_object_foreach(fields, key, val) {
                        json_object *name = get(symbols, key);

                        fputc(' ', f);
                        put_text(f, key, strlen(key), false);
                        fputc('=', f);
                        /* The print fmt's name where it gives one, as perf
                         * script shows it (prev_state=S). */
                        print_value(f, name ?: val);
                }
        }
        /* A perf event's sample fields (ip, period, ...): a
         * software:cpu-clock line showed no more than who and when. The
         * callchain goes below, a frame a line: on one line it ran to
         * 1,500 characters. */
        sample = get(o, "sample");
        if (sample && json_object_is_type(sample, json_type_object)) {
                json_object_object_foreach(sample, key, val) {
                        if (strcmp(key, "callchain") == 0 && json_object_is_type(val, json_type_array)) {
                                chain = val;
                                continue;
                        }
                        fputc(' ', f);
                        put_text(f, key, strlen(key), false);
                        fputc('=', f);
                        print_value(f, val);
                }
        }
        fputc('\n', f);
        if (chain)
                print_callchain(h, f, chain);
}

/* N as perf stat's rate column: three digits and a unit. */
static void format_rate(char *buf, size_t size, double n) {
        static const char units[] = " KMGTPE";
        size_t u = 0;

        while (n >= 1000 && u + 1 < sizeof(units) - 1) {
                n /= 1000;
                u++;
        }
        if (u == 0)
                snprintf(buf, size, "%.0f", n);
        else
                snprintf(buf, size, "%.*f%c", n < 10 ? 2 : n < 100 ? 1 : 0, n, units[u]);
}

/* The seconds since EVENT's last counter line (at TS), remembered for
 * the next; 0 for its first. */
static double counter_interval(struct human *h, const char *event, int64_t ts) {
        double s = 0;

        for (size_t i = 0; i < h->n_last; i++)
                if (strcmp(h->last[i].event, event) == 0) {
                        if (ts > h->last[i].ts)
                                s = (double) (ts - h->last[i].ts) / 1e9;
                        h->last[i].ts = ts;
                        return s;
                }
        if (h->n_last < HUMAN_COUNTERS_MAX) {
                char *e = strdup(event);

                if (e)
                        h->last[h->n_last++] = (struct human_last) { .event = e, .ts = ts };
        }
        return 0;
}

#define COUNTER_EVENT_WIDTH 32

static void print_counter(struct human *h, FILE *f, json_object *o) {
        const char *event = get_string(o, "event") ?: "?";
        json_object *v = get(o, "value"), *d = get(o, "delta"), *en = get(o, "enabled"), *run = get(o, "running"),
                    *ts = get(o, "ts");
        char name[128], rate[16] = "-", pct[16] = "-";
        double secs;

        if (!h->in_counters) {
                sgr(h, f, HUMAN_SGR_BOLD);
                fprintf(f, "%-15s %-*s %20s %20s %10s %7s", "TIME", COUNTER_EVENT_WIDTH, "EVENT", "VALUE", "DELTA",
                        "RATE/s", "RUN%");
                sgr(h, f, HUMAN_SGR_RESET);
                fputc('\n', f);
        }
        print_host(f, o);
        print_time(h, f, o);
        /* The name padded by what it shows: escaped, so one byte a cell. */
        human_escape(name, sizeof(name), event);
        sgr(h, f, HUMAN_SGR_EVENT);
        fputs(name, f);
        sgr(h, f, HUMAN_SGR_RESET);
        fprintf(f, "%*s", (int) (strlen(name) < COUNTER_EVENT_WIDTH ? COUNTER_EVENT_WIDTH - strlen(name) : 0), "");
        secs = ts ? counter_interval(h, event, json_object_get_int64(ts)) : 0;
        if (d && secs > 0)
                format_rate(rate, sizeof(rate), (double) json_object_get_int64(d) / secs);
        if (en && run && json_object_get_int64(en) > 0)
                snprintf(pct, sizeof(pct), "%.1f%%",
                         100.0 * (double) json_object_get_int64(run) / (double) json_object_get_int64(en));
        fprintf(f, " %20" PRId64 " %20" PRId64 " %10s %7s\n", v ? json_object_get_int64(v) : 0,
                d ? json_object_get_int64(d) : 0, rate, pct);
}

void human_line(struct human *h, FILE *f, json_object *o) {
        const char *t = get_string(o, "type");
        bool counter;

        if (!t)
                return;
        /* What a person watching needs no line for: the greeting, and the
         * schema of what follows (the lines say it themselves). */
        if (strcmp(t, EVMON_LINE_HELLO) == 0 || strcmp(t, EVMON_LINE_SUBSCRIBED) == 0 || strcmp(t, EVMON_LINE_SCHEMA) == 0)
                return;
        counter = strcmp(t, EVMON_LINE_COUNTER) == 0;
        if (counter)
                print_counter(h, f, o);
        else if (strcmp(t, EVMON_LINE_EVENT) == 0)
                print_event(h, f, o);
        else {
                print_host(f, o);
                fputs("-- ", f);
                put_json(f, o);
                fputc('\n', f);
        }
        h->in_counters = counter;
}

void human_print(FILE *f, json_object *o) {
        struct human h;

        human_init(&h, 0);
        human_line(&h, f, o);
        human_done(&h);
}

/* ---- a JSON object as text: status, describe ------------------------- */

#define CELL_MAX 256
#define CELL_JSON_MAX 40        /* a nested object shown in a cell: its start */

/* The columns a UTF-8 text takes: its bytes but continuation bytes. */
static size_t text_width(const char *s) {
        size_t n = 0;

        for (; *s; s++)
                n += ((unsigned char) *s & 0xc0) != 0x80;
        return n;
}

/* V as one cell, escaped, into BUF (CELL_MAX bytes). */
static const char *cell(char *buf, json_object *v) {
        const char *s;

        switch (json_object_get_type(v)) {
        case json_type_null:
                return "-";
        case json_type_string:
                return human_escape(buf, CELL_MAX, json_object_get_string(v));
        case json_type_object:
        case json_type_array:
                s = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
                human_escape(buf, CELL_JSON_MAX + 1, s);
                if (strlen(buf) >= CELL_JSON_MAX)
                        strcpy(buf + CELL_JSON_MAX - 3, "...");
                return buf;
        case json_type_double: {
                /* json-c's own text of a double is its 17 digits
                 * (259.86398700000001): three decimals, trailing zeros
                 * dropped. */
                size_t n = (size_t) snprintf(buf, CELL_MAX, "%.3f", json_object_get_double(v));

                if (n >= CELL_MAX)
                        n = CELL_MAX - 1;       /* 1e308: cut, as snprintf() did */

                while (n > 1 && buf[n - 1] == '0' && strchr(buf, '.'))
                        buf[--n] = '\0';
                if (n > 0 && buf[n - 1] == '.')
                        buf[--n] = '\0';
                return buf;
        }
        default:
                return human_escape(buf, CELL_MAX, json_object_get_string(v));
        }
}

static bool is_number(json_object *v) {
        return json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double);
}

static bool all_objects(json_object *a) {
        size_t n = json_object_array_length(a);

        for (size_t i = 0; i < n; i++)
                if (!json_object_is_type(json_object_array_get_idx(a, i), json_type_object))
                        return false;
        return n > 0;
}

/* An array of objects as a table: a column per key (in the order they
 * first come), numbers right-aligned. */
static void print_table(FILE *f, json_object *a, unsigned flags, int indent) {
        size_t n = json_object_array_length(a), n_cols = 0;
        struct column {
                const char *key;
                size_t width;
                bool number;
        } cols[32];
        char buf[CELL_MAX];

        for (size_t i = 0; i < n; i++) {
                json_object_object_foreach(json_object_array_get_idx(a, i), key, val) {
                        size_t c, w;

                        for (c = 0; c < n_cols && strcmp(cols[c].key, key) != 0; c++)
                                ;
                        if (c == n_cols) {
                                if (n_cols == ELEMENTSOF(cols))
                                        continue;
                                cols[n_cols++] = (struct column) { .key = key, .width = text_width(human_escape(buf, CELL_MAX, key)), .number = true };
                        }
                        w = text_width(cell(buf, val));
                        if (w > cols[c].width)
                                cols[c].width = w;
                        if (!is_number(val) && !json_object_is_type(val, json_type_null))
                                cols[c].number = false;
                }
        }
        fprintf(f, "%*s", indent, "");
        if (flags & HUMAN_COLOR)
                fputs(HUMAN_SGR_BOLD, f);
        for (size_t c = 0; c < n_cols; c++) {
                const char *k = human_escape(buf, CELL_MAX, cols[c].key);
                size_t pad = cols[c].width - text_width(k);

                fprintf(f, "%s%*s%s%*s", c ? "  " : "", cols[c].number ? (int) pad : 0, "", k,
                        cols[c].number || c + 1 == n_cols ? 0 : (int) pad, "");
        }
        if (flags & HUMAN_COLOR)
                fputs(HUMAN_SGR_RESET, f);
        fputc('\n', f);
        for (size_t i = 0; i < n; i++) {
                json_object *row = json_object_array_get_idx(a, i);

                size_t last = 0;

                /* No blanks after the last cell the row has. */
                for (size_t c = 0; c < n_cols; c++)
                        if (get(row, cols[c].key))
                                last = c;
                fprintf(f, "%*s", indent, "");
                for (size_t c = 0; c <= last && c < n_cols; c++) {
                        json_object *v = get(row, cols[c].key);
                        const char *s = v ? cell(buf, v) : "";
                        size_t pad = cols[c].width - text_width(s);

                        fprintf(f, "%s%*s%s%*s", c ? "  " : "", cols[c].number ? (int) pad : 0, "", s,
                                cols[c].number || c == last ? 0 : (int) pad, "");
                }
                fputc('\n', f);
        }
}

static void print_members(FILE *f, json_object *o, unsigned flags, bool top, int indent);

/* KEY: VALUE, the key's column WIDTH wide; an object's members one a
 * line below it, indented, an array of objects as a table. */
static void print_member(FILE *f, const char *key, json_object *v, unsigned flags, int indent, size_t width) {
        char buf[CELL_MAX];

        fprintf(f, "%*s", indent, "");
        if (flags & HUMAN_COLOR)
                fputs(HUMAN_SGR_BOLD, f);
        human_escape(buf, sizeof(buf), key);
        fputs(buf, f);
        fputc(':', f);
        if (flags & HUMAN_COLOR)
                fputs(HUMAN_SGR_RESET, f);
        if (json_object_is_type(v, json_type_object) && json_object_object_length(v) > 0) {
                fputc('\n', f);
                print_members(f, v, flags, false, indent + 2);
                return;
        }
        if (json_object_is_type(v, json_type_array) && all_objects(v)) {
                fputc('\n', f);
                print_table(f, v, flags, indent + 2);
                return;
        }
        fprintf(f, "%*s", (int) (width > text_width(buf) ? width - text_width(buf) : 0) + 1, "");
        if (json_object_is_type(v, json_type_array)) {
                size_t n = json_object_array_length(v);

                for (size_t i = 0; i < n; i++)
                        fprintf(f, "%s%s", i ? ", " : "", cell(buf, json_object_array_get_idx(v, i)));
                fputc('\n', f);
                return;
        }
        fprintf(f, "%s\n", cell(buf, v));
}

/* The line's own "type" (a string: "status") says nothing here; a
 * describe's "type" (the attr's, a number) does. */
static bool is_line_type(bool top, const char *key, json_object *v) {
        return top && strcmp(key, "type") == 0 && json_object_is_type(v, json_type_string);
}

static void print_members(FILE *f, json_object *o, unsigned flags, bool top, int indent) {
        size_t width = 0;

        /* The scalars' values aligned. */
        json_object_object_foreach(o, k, v) {
                char name[CELL_MAX];

                if (is_line_type(top, k, v) || json_object_is_type(v, json_type_object) ||
                    (json_object_is_type(v, json_type_array) && all_objects(v)))
                        continue;
                if (text_width(human_escape(name, sizeof(name), k)) > width)
                        width = text_width(name);
        }
        json_object_object_foreach(o, key, val) {
                if (!is_line_type(top, key, val))
                        print_member(f, key, val, flags, indent, width);
        }
}

void human_object(FILE *f, json_object *o, unsigned flags) {
        if (json_object_is_type(o, json_type_object))
                print_members(f, o, flags, true, 0);
}
