/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evmon/flamegraph.h"

#include "cli.h"

/* One event line's stack, folded (profile, decode --folded). A line is
 * scanned for the few keys a stack needs (proc.comm, pid, sample.ip,
 * sample.callchain) and nothing is built from the rest: json-c made an
 * object tree of every line, 27 µs of evmonctl's CPU a sample at 10 kHz
 * against perf report's 12.6 µs for everything. The line is evmond's
 * (or decode's own) but its strings are anyone's: every string is
 * decoded with its escapes, bounded, and a line that is not well-formed
 * where it is read is refused (-EBADMSG), never guessed at. */

#define SCAN_DEPTH_MAX 64

struct scan {
        const char *p, *end;
};

static void skip_ws(struct scan *s) {
        while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
                s->p++;
}

static bool take(struct scan *s, char c) {
        skip_ws(s);
        if (s->p < s->end && *s->p == c) {
                s->p++;
                return true;
        }
        return false;
}

static int hex4(const char *p, unsigned *ret) {
        unsigned v = 0;

        for (int i = 0; i < 4; i++) {
                char c = p[i];

                v <<= 4;
                if (c >= '0' && c <= '9')
                        v |= (unsigned) (c - '0');
                else if (c >= 'a' && c <= 'f')
                        v |= (unsigned) (c - 'a' + 10);
                else if (c >= 'A' && c <= 'F')
                        v |= (unsigned) (c - 'A' + 10);
                else
                        return -EBADMSG;
        }
        *ret = v;
        return 0;
}

/* Appends code point C as UTF-8 to OUT (SIZE bytes, *N used), as far as
 * it fits whole. */
static void put_utf8(char *out, size_t size, size_t *n, unsigned c) {
        char b[4];
        size_t len;

        if (c == 0)
                c = '_';        /* a NUL would end the name */
        if (c < 0x80) {
                b[0] = (char) c;
                len = 1;
        } else if (c < 0x800) {
                b[0] = (char) (0xc0 | (c >> 6));
                b[1] = (char) (0x80 | (c & 0x3f));
                len = 2;
        } else if (c < 0x10000) {
                b[0] = (char) (0xe0 | (c >> 12));
                b[1] = (char) (0x80 | ((c >> 6) & 0x3f));
                b[2] = (char) (0x80 | (c & 0x3f));
                len = 3;
        } else {
                b[0] = (char) (0xf0 | (c >> 18));
                b[1] = (char) (0x80 | ((c >> 12) & 0x3f));
                b[2] = (char) (0x80 | ((c >> 6) & 0x3f));
                b[3] = (char) (0x80 | (c & 0x3f));
                len = 4;
        }
        if (*n + len < size) {
                memcpy(out + *n, b, len);
                *n += len;
        }
}

/* Reads a string into OUT (SIZE bytes, NUL-terminated, cut where it does
 * not fit; OUT NULL: skipped). 0 or -EBADMSG. */
static int scan_string(struct scan *s, char *out, size_t size) {
        size_t n = 0;

        if (!take(s, '"'))
                return -EBADMSG;
        while (s->p < s->end) {
                char c = *s->p++;

                if (c == '"') {
                        if (out)
                                out[n] = 0;
                        return 0;
                }
                if (c != '\\') {
                        if (out && n + 1 < size)
                                out[n++] = c;
                        continue;
                }
                if (s->p >= s->end)
                        return -EBADMSG;
                c = *s->p++;
                switch (c) {
                case '"': case '\\': case '/':
                        break;
                case 'b': c = '\b'; break;
                case 'f': c = '\f'; break;
                case 'n': c = '\n'; break;
                case 'r': c = '\r'; break;
                case 't': c = '\t'; break;
                case 'u': {
                        unsigned u, lo;

                        if (s->end - s->p < 4 || hex4(s->p, &u) < 0)
                                return -EBADMSG;
                        s->p += 4;
                        if (u >= 0xd800 && u < 0xdc00 && s->end - s->p >= 6 && s->p[0] == '\\' && s->p[1] == 'u' &&
                            hex4(s->p + 2, &lo) == 0 && lo >= 0xdc00 && lo < 0xe000) {
                                s->p += 6;
                                u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
                        } else if (u >= 0xd800 && u < 0xe000)
                                u = '?';        /* a lone surrogate */
                        if (out)
                                put_utf8(out, size, &n, u);
                        continue;
                }
                default:
                        return -EBADMSG;
                }
                if (out && n + 1 < size)
                        out[n++] = c;
        }
        return -EBADMSG;
}

static int skip_value(struct scan *s, int depth);

/* Calls KEY for each member of the object at S; 0 or -EBADMSG. */
#define FOR_EACH_MEMBER(s, key, body)                                           \
        do {                                                                    \
                if (!take(s, '{'))                                              \
                        return -EBADMSG;                                        \
                if (take(s, '}'))                                               \
                        break;                                                  \
                for (;;) {                                                      \
                        if (scan_string(s, key, sizeof(key)) < 0 || !take(s, ':')) \
                                return -EBADMSG;                                \
                        body                                                    \
                        if (take(s, ','))                                       \
                                continue;                                       \
                        if (take(s, '}'))                                       \
                                break;                                          \
                        return -EBADMSG;                                        \
                }                                                               \
        } while (0)

static int skip_container(struct scan *s, char open, char close, int depth) {
        char key[8];

        if (depth > SCAN_DEPTH_MAX)
                return -EBADMSG;
        if (open == '{') {
                FOR_EACH_MEMBER(s, key, {
                        if (skip_value(s, depth + 1) < 0)
                                return -EBADMSG;
                });
                return 0;
        }
        if (!take(s, '['))
                return -EBADMSG;
        if (take(s, ']'))
                return 0;
        for (;;) {
                if (skip_value(s, depth + 1) < 0)
                        return -EBADMSG;
                if (take(s, ','))
                        continue;
                return take(s, close) ? 0 : -EBADMSG;
        }
}

static int skip_value(struct scan *s, int depth) {
        skip_ws(s);
        if (s->p >= s->end)
                return -EBADMSG;
        switch (*s->p) {
        case '"':
                return scan_string(s, NULL, 0);
        case '{':
                return skip_container(s, '{', '}', depth);
        case '[':
                return skip_container(s, '[', ']', depth);
        default:
        {
                /* A number, true, false, null. */
                const char *start = s->p;

                while (s->p < s->end && (*s->p == '-' || *s->p == '+' || *s->p == '.' ||
                                         (*s->p >= '0' && *s->p <= '9') || (*s->p >= 'a' && *s->p <= 'z') ||
                                         (*s->p >= 'A' && *s->p <= 'Z')))
                        s->p++;
                return s->p > start ? 0 : -EBADMSG;
        }
        }
}

static bool take_null(struct scan *s) {
        skip_ws(s);
        if (s->end - s->p >= 4 && memcmp(s->p, "null", 4) == 0) {
                s->p += 4;
                return true;
        }
        return false;
}

/* What one line gave. */
struct fold_line {
        char type[16];
        char comm[FLAME_NAME_MAX + 1];
        int64_t pid;
        bool has_comm, has_pid;
        char ip[24];
        size_t n;                       /* frames, leaf first, in frame_names */
};

/* Frame names of one sample, leaf first, kept between calls (one thread). */
static char frame_names[FLAME_DEPTH_MAX][FLAME_NAME_MAX + 1];

void profile_strip_offset(char *name) {
        char *plus = NULL;

        for (char *q = strstr(name, "+0x"); q; q = strstr(q + 1, "+0x"))
                plus = q;
        if (plus && plus != name)
                *plus = 0;
}

/* One "syms" entry, the name of frame I: its function, else its object
 * as stackcollapse-perf.pl names unknown frames ("[libc.so.6]"); left as
 * the address for null or neither. */
static int scan_sym(struct scan *s, char *name) {
        char key[16], value[FLAME_NAME_MAX + 1];
        bool sym = false;

        if (take_null(s))
                return 0;
        FOR_EACH_MEMBER(s, key, {
                if (strcmp(key, "sym") == 0) {
                        if (scan_string(s, value, sizeof(value)) < 0)
                                return -EBADMSG;
                        profile_strip_offset(value);
                        if (value[0]) {
                                strcpy(name, value);
                                sym = true;
                        }
                } else if (strcmp(key, "module") == 0 && !sym) {
                        const char *base;

                        if (scan_string(s, value, sizeof(value)) < 0)
                                return -EBADMSG;
                        base = strrchr(value, '/');
                        base = base ? base + 1 : value;
                        if (*base)
                                snprintf(name, FLAME_NAME_MAX + 1, "[%.*s]", FLAME_NAME_MAX - 2, base);
                } else if (skip_value(s, 1) < 0)
                        return -EBADMSG;
        });
        return 0;
}

/* One callchain segment: {"context":C,"ips":[…],"syms":[…]}. */
static int scan_segment(struct scan *s, struct fold_line *l) {
        char key[16];
        size_t base = l->n;

        FOR_EACH_MEMBER(s, key, {
                if (strcmp(key, "ips") == 0) {
                        if (!take(s, '['))
                                return -EBADMSG;
                        if (!take(s, ']'))
                                for (;;) {
                                        char ip[24];

                                        if (scan_string(s, ip, sizeof(ip)) < 0)
                                                return -EBADMSG;
                                        if (l->n < FLAME_DEPTH_MAX - 1)
                                                strcpy(frame_names[l->n++], ip);
                                        if (take(s, ','))
                                                continue;
                                        if (take(s, ']'))
                                                break;
                                        return -EBADMSG;
                                }
                } else if (strcmp(key, "syms") == 0) {
                        size_t i = base;

                        if (!take(s, '['))
                                return -EBADMSG;
                        if (!take(s, ']'))
                                for (;;) {
                                        char ignored[FLAME_NAME_MAX + 1];

                                        if (scan_sym(s, i < l->n ? frame_names[i] : ignored) < 0)
                                                return -EBADMSG;
                                        i++;
                                        if (take(s, ','))
                                                continue;
                                        if (take(s, ']'))
                                                break;
                                        return -EBADMSG;
                                }
                } else if (skip_value(s, 1) < 0)
                        return -EBADMSG;
        });
        return 0;
}

static int scan_sample(struct scan *s, struct fold_line *l) {
        char key[16];

        FOR_EACH_MEMBER(s, key, {
                if (strcmp(key, "ip") == 0) {
                        if (scan_string(s, l->ip, sizeof(l->ip)) < 0)
                                return -EBADMSG;
                } else if (strcmp(key, "callchain") == 0) {
                        if (!take(s, '['))
                                return -EBADMSG;
                        if (!take(s, ']'))
                                for (;;) {
                                        if (scan_segment(s, l) < 0)
                                                return -EBADMSG;
                                        if (take(s, ','))
                                                continue;
                                        if (take(s, ']'))
                                                break;
                                        return -EBADMSG;
                                }
                } else if (skip_value(s, 1) < 0)
                        return -EBADMSG;
        });
        return 0;
}

static int scan_proc(struct scan *s, struct fold_line *l) {
        char key[16];

        FOR_EACH_MEMBER(s, key, {
                if (strcmp(key, "comm") == 0) {
                        if (scan_string(s, l->comm, sizeof(l->comm)) < 0)
                                return -EBADMSG;
                        l->has_comm = true;
                } else if (skip_value(s, 1) < 0)
                        return -EBADMSG;
        });
        return 0;
}

static int scan_line(struct scan *s, struct fold_line *l, char *event, size_t event_size) {
        char key[16];

        FOR_EACH_MEMBER(s, key, {
                if (strcmp(key, "type") == 0) {
                        if (scan_string(s, l->type, sizeof(l->type)) < 0)
                                return -EBADMSG;
                } else if (strcmp(key, "event") == 0) {
                        if (scan_string(s, event, event_size) < 0)
                                return -EBADMSG;
                } else if (strcmp(key, "pid") == 0) {
                        bool neg;

                        skip_ws(s);
                        neg = s->p < s->end && *s->p == '-';
                        s->p += neg;
                        if (s->p >= s->end || *s->p < '0' || *s->p > '9')
                                return -EBADMSG;
                        for (l->pid = 0; s->p < s->end && *s->p >= '0' && *s->p <= '9'; s->p++)
                                if (l->pid < INT64_MAX / 10 - 10)
                                        l->pid = l->pid * 10 + (*s->p - '0');
                        if (neg)
                                l->pid = -l->pid;
                        l->has_pid = true;
                } else if (strcmp(key, "proc") == 0) {
                        if (scan_proc(s, l) < 0)
                                return -EBADMSG;
                } else if (strcmp(key, "sample") == 0) {
                        if (scan_sample(s, l) < 0)
                                return -EBADMSG;
                } else if (skip_value(s, 1) < 0)
                        return -EBADMSG;
        });
        return 0;
}

int profile_fold_line(struct flame *f, const char *line, size_t len, const char *event, const char *comm,
                      bool *ret_callchain) {
        const char *frames[FLAME_DEPTH_MAX];
        struct scan s = { .p = line, .end = line + len };
        struct fold_line l = {};
        char name[256] = "";
        size_t n = 0;
        int r;

        *ret_callchain = false;
        r = scan_line(&s, &l, name, sizeof(name));
        if (r < 0)
                return r;
        if (strcmp(l.type, "event") != 0 || (event && strcmp(name, event) != 0))
                return 1;
        if (l.has_comm)
                comm = l.comm;
        else if (!comm) {
                snprintf(l.comm, sizeof(l.comm), l.has_pid ? "[pid %" PRId64 "]" : "[unknown]", l.pid);
                comm = l.comm;
        }
        frames[n++] = comm;
        *ret_callchain = l.n > 0;
        if (l.n == 0 && l.ip[0]) {
                strcpy(frame_names[0], l.ip);
                l.n = 1;
        }
        /* Leaf first in the line, root first in the stack. */
        for (size_t i = l.n; i-- > 0 && n < FLAME_DEPTH_MAX;)
                frames[n++] = frame_names[i];
        return flame_add(f, frames, n, 1);
}
