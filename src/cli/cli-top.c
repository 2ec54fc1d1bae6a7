/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <curses.h>
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <locale.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "evmon/cleanup.h"
#include "evmon/io.h"
#include "evmon/jsonc.h"
#include "evmon/log.h"
#include "evmon/protocol.h"

#include "cli.h"
#include "top.h"

/* evmonctl top: evmond counts the events by a key and sends one
 * aggregate line a second (the aggregate request, doc/protocol.md); top
 * draws them as a table, sorted by rate, with ncurses: plain ACS lines,
 * no mouse, no colour (attributes only), so it works over ssh, in tmux
 * and on a dumb pager of a terminal. Keys: s or tab the sort column, k
 * the key, e the event, q (or Ctrl-C) quits. */

/* The answer and the line evmond sends an aggregating client, here
 * until include/evmon/protocol.h has them. */
#ifndef EVMON_LINE_AGGREGATING
#define EVMON_LINE_AGGREGATING "aggregating"
#endif
#ifndef EVMON_LINE_AGGREGATE
#define EVMON_LINE_AGGREGATE "aggregate"
#endif

#define TOP_ENTRIES_ASKED 500   /* evmond's "top": the biggest of each window */
#define TOP_MAX_KEYS 10000      /* evmond's "max_keys" */
#define TOP_LINE_MAX (16u << 20)

/* The keys k cycles through, after the one --by named. */
static const char *const top_keys[] = { "comm", "pid", "cgroup", "container", "exe", "event" };

struct top {
        int fd;
        char **events;                  /* asked for (NULL: every one evmond serves) */
        const char *keys[ELEMENTSOF(top_keys) + 1];
        size_t n_keys, key;
        size_t event;                   /* 0: every event, else model.events[event - 1] */
        enum top_sort sort;
        unsigned interval_ms;
        struct top_model model;
        char *buf;                      /* evmond's lines as read, up to TOP_LINE_MAX */
        size_t len, size;
        SCREEN *screen;
        bool curses;
        const char *error;              /* evmond's, when it refused or closed */
};

static volatile sig_atomic_t top_quit;

static void on_signal(int sig) {
        top_quit = sig;
}

/* {"type":"aggregate",...} for the key K: counts by K and event (so e
 * can narrow to one without asking again), each window apart. */
static int top_request(struct top *t, struct jbuf *line) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();
        json_object *events = json_object_new_array(), *by = json_object_new_array(), *value = json_object_new_object();
        const char *k = t->keys[t->key];
        const char *s;

        if (!o || !events || !by || !value)
                return -ENOMEM;
        json_object_object_add(o, "type", json_object_new_string(EVMON_REQUEST_AGGREGATE));
        if (t->events && *t->events)
                for (char **e = t->events; *e; e++)
                        json_object_array_add(events, json_object_new_string(*e));
        else
                json_object_array_add(events, json_object_new_string("*"));
        json_object_object_add(o, "events", events);
        json_object_array_add(by, json_object_new_string(k));
        if (strcmp(k, "event") != 0)
                json_object_array_add(by, json_object_new_string("event"));
        json_object_object_add(o, "by", by);
        json_object_object_add(value, "op", json_object_new_string("count"));
        json_object_object_add(o, "value", value);
        json_object_object_add(o, "interval_ms", json_object_new_int64(t->interval_ms));
        json_object_object_add(o, "cumulative", json_object_new_boolean(false));
        json_object_object_add(o, "top", json_object_new_int64(TOP_ENTRIES_ASKED));
        json_object_object_add(o, "max_keys", json_object_new_int64(TOP_MAX_KEYS));
        if (agg_request_narrow(o, "top") < 0)
                return -ENOMEM;
        s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        if (jbuf_reserve(line, strlen(s) + 1) < 0)
                return -ENOMEM;
        jbuf_put_bytes(line, s, strlen(s));
        jbuf_put_bytes(line, "\n", 1);
        return 0;
}

struct answer {
        int status;     /* 0 aggregating, 1 refused (said) */
};

static int on_answer(const char *line, size_t len, void *ud) {
        struct answer *a = ud;
        _cleanup_(json_object_putp) json_object *o = parse_line(line, len);
        const char *type = line_type(o);
        json_object *e;

        /* Until evmond has taken the request it may send this client
         * what it sends every client (hello, config): skipped. */
        if (strcmp(type, EVMON_LINE_ERROR) == 0) {
                json_object_object_get_ex(o, "error", &e);
                log_error("evmond says: %s%s", e ? json_object_get_string(e) : "?",
                          e && strstr(json_object_get_string(e), "unknown message type") ?
                          " (this evmond counts nothing for its clients: top needs one that takes the aggregate "
                          "request, of the release of this evmonctl)" : "");
                a->status = 1;
                return 1;
        }
        if (strcmp(type, EVMON_LINE_AGGREGATING) == 0)
                return 1;
        return 0;
}

/* Connects and asks for the counts by the current key; 0, or the exit
 * status once said why not. */
static int top_connect(struct top *t) {
        _cleanup_(jbuf_donep) struct jbuf line = {};
        struct answer a = {};
        int r;

        if (top_request(t, &line) < 0)
                return log_oom_cli();
        r = request_too_long(&line, "top");
        if (r != 0)
                return r;
        t->fd = safe_close(t->fd);
        t->fd = connect_daemon();
        if (t->fd < 0)
                return 1;
        if (send_line(t->fd, line.data, line.len, EVMON_REQUEST_AGGREGATE) < 0)
                return 1;
        /* The answer comes at once; the first window a second later, so
         * nothing read past the answer is lost. */
        r = read_lines(t->fd, false, on_answer, &a);
        if (r <= 0)
                return read_lines_failed(r, EVMON_REQUEST_AGGREGATE);
        if (a.status)
                return a.status;
        top_model_done(&t->model);
        if (top_model_init(&t->model, t->keys[t->key]) < 0)
                return log_oom_cli();
        t->event = 0;
        t->len = 0;
        return 0;
}

static void upper(char *dst, size_t size, const char *s) {
        size_t i;

        for (i = 0; s[i] && i + 1 < size; i++)
                dst[i] = (char) (s[i] >= 'a' && s[i] <= 'z' ? s[i] - 'a' + 'A' : s[i]);
        dst[i] = '\0';
}

/* N in at most 4 digits and a unit (K M G T). */
static void short_count(char *buf, size_t size, double n) {
        static const char units[] = " KMGT";
        size_t u = 0;

        while (n >= 10000 && u + 1 < sizeof(units) - 1) {
                n /= 1000;
                u++;
        }
        if (u == 0)
                snprintf(buf, size, "%.0f", n);
        else
                snprintf(buf, size, "%.1f%c", n, units[u]);
}

#define COL_NUM 12
#define COL_SHARE 7

/* TEXT at row Y, cut at the screen's width: a line longer than the
 * screen wraps onto the next in curses, over what is drawn there. */
static void put_row(int y, const char *text) {
        if (y < LINES)
                mvaddnstr(y, 0, text, COLS);
}

static void top_draw(struct top *t) {
        _cleanup_(freep) struct top_row *rows = NULL;
        const char *event = t->event > 0 && t->event <= t->model.n_events ? t->model.events[t->event - 1] : NULL;
        char head[64], num[32], line[1024];
        int n, key_w, k, x;

        erase();
        /* The status line, reversed. */
        k = snprintf(line, sizeof(line), " evmon top  by %s [k]  event %s [e]  sort %s [s]  %.2f s  %" PRIu64
                     " events  lost %" PRIu64, t->keys[t->key], event ?: "all", top_sort_to_string(t->sort),
                     t->model.window_s, t->model.folded, t->model.lost);
        /* Keys past max_keys are no row: said when there were any. */
        if (t->model.keys_dropped > 0 && k >= 0 && (size_t) k < sizeof(line))
                k += snprintf(line + k, sizeof(line) - (size_t) k, "  dropped %" PRIu64, t->model.keys_dropped);
        if (k >= 0 && (size_t) k < sizeof(line))
                snprintf(line + k, sizeof(line) - (size_t) k, "  [q]uit");
        attron(A_REVERSE);
        mvhline(0, 0, ' ', COLS);
        put_row(0, line);
        attroff(A_REVERSE);

        n = t->model.windows > 0 ? top_model_rows(&t->model, event, t->sort, &rows) : 0;
        /* The key column as wide as the longest key shown, at most what
         * the screen leaves beside the numbers. */
        key_w = (int) strlen(t->keys[t->key]);
        for (int i = 0; i < n && 3 + i < LINES; i++)
                if ((int) strlen(rows[i].key) > key_w)
                        key_w = (int) strlen(rows[i].key);
        if (key_w > COLS - 3 * (COL_NUM + 1) - (COL_SHARE + 1) - 1)
                key_w = COLS - 3 * (COL_NUM + 1) - (COL_SHARE + 1) - 1;
        if (key_w < 8)
                key_w = 8;
        if (key_w > TOP_KEY_MAX)
                key_w = TOP_KEY_MAX;
        upper(head, sizeof(head), t->keys[t->key]);
        snprintf(line, sizeof(line), " %-*.*s %*s %*s %*s %*s", key_w, key_w, head, COL_NUM, "RATE/s", COL_NUM, "COUNT",
                 COL_NUM, "TOTAL", COL_SHARE, "SHARE");
        attron(A_BOLD);
        put_row(1, line);
        attroff(A_BOLD);
        /* The sort column underlined. */
        x = t->sort == TOP_SORT_KEY ? 1 : t->sort == TOP_SORT_RATE ? key_w + 2 : key_w + 2 + 2 * (COL_NUM + 1);
        k = t->sort == TOP_SORT_KEY ? key_w : COL_NUM;
        if (x < COLS)
                mvchgat(1, x, x + k <= COLS ? k : COLS - x, A_BOLD | A_UNDERLINE, 0, NULL);
        mvhline(2, 0, ACS_HLINE, COLS);
        if (t->model.windows == 0) {
                snprintf(line, sizeof(line), " waiting for evmond's first count (every %.1f s)", t->interval_ms / 1000.0);
                put_row(3, line);
                refresh();
                return;
        }
        if (n < 0) {
                put_row(3, " out of memory");
                refresh();
                return;
        }
        for (int i = 0; i < n && 3 + i < LINES; i++) {
                short_count(num, sizeof(num), rows[i].rate);
                /* Keys are escaped (top.c): a comm's ESC drives nothing. */
                snprintf(line, sizeof(line), " %-*.*s %*s %*" PRIu64 " %*" PRIu64 " %*.1f%%", key_w, key_w, rows[i].key,
                         COL_NUM, num, COL_NUM, rows[i].count, COL_NUM, rows[i].total, COL_SHARE - 1,
                         rows[i].share * 100);
                put_row(3 + i, line);
        }
        refresh();
}

/* Reads what evmond sent and feeds its aggregate lines to the model; 1
 * when there is something new to draw, 0 when not, -errno. */
static int top_read(struct top *t) {
        size_t start = 0;
        bool fed = false;
        ssize_t n;

        if (t->len == t->size) {
                size_t want = t->size ? t->size * 2 : 1u << 20;
                char *grown;

                if (want > TOP_LINE_MAX)
                        return -E2BIG;
                grown = realloc(t->buf, want);
                if (!grown)
                        return -ENOMEM;
                t->buf = grown;
                t->size = want;
        }
        n = read(t->fd, t->buf + t->len, t->size - t->len);
        if (n < 0)
                return errno == EINTR || errno == EAGAIN ? 0 : -errno;
        if (n == 0)
                return -ECONNRESET;
        t->len += (size_t) n;
        for (size_t i = 0; i < t->len; i++) {
                _cleanup_(json_object_putp) json_object *o = NULL;
                const char *type;

                if (t->buf[i] != '\n')
                        continue;
                o = parse_line(t->buf + start, i - start + 1);
                start = i + 1;
                type = line_type(o);
                if (strcmp(type, EVMON_LINE_AGGREGATE) == 0) {
                        if (top_model_feed(&t->model, o) == -ENOMEM)
                                return -ENOMEM;
                        fed = true;
                } else if (strcmp(type, EVMON_LINE_ERROR) == 0) {
                        json_object *e;

                        t->error = json_object_object_get_ex(o, "error", &e) ? strdup(json_object_get_string(e)) : NULL;
                        return -EPROTO;
                }
        }
        memmove(t->buf, t->buf + start, t->len - start);
        t->len -= start;
        return fed;
}

static void top_end_curses(struct top *t) {
        if (t->curses) {
                endwin();
                t->curses = false;
        }
        if (t->screen) {
                delscreen(t->screen);
                t->screen = NULL;
        }
}

/* A key pressed: 1 to quit, 0 to go on, or the exit status + 2 when
 * asking again for the new key failed. */
static int top_key(struct top *t, int ch) {
        int r;

        switch (ch) {
        case 'q':
        case 'Q':
                return 1;
        case 's':
        case '\t':
                t->sort = (t->sort + 1) % _TOP_SORT_MAX;
                break;
        case KEY_BTAB:
                t->sort = (t->sort + _TOP_SORT_MAX - 1) % _TOP_SORT_MAX;
                break;
        case 'e':
                t->event = (t->event + 1) % (t->model.n_events + 1);
                break;
        case 'k':
                t->key = (t->key + 1) % t->n_keys;
                /* A connection aggregates once: a new one for the new key.
                 * Out of curses meanwhile, so what goes wrong is said on
                 * the terminal as it is, not drawn over. */
                def_prog_mode();
                endwin();
                r = top_connect(t);
                if (r != 0)
                        return r + 2;
                reset_prog_mode();
                break;
        default:
                break;
        }
        return 0;
}

int cmd_top(char **events) {
        struct top t = { .fd = -1, .events = events };
        struct sigaction sa = { .sa_handler = on_signal };
        int r, status = 0;

        if (arg_seconds > 0 || arg_top >= 0 || arg_linear || arg_match) {
                log_error("--%s is an option of count, hist or latency, not of top; try 'evmonctl --help'.",
                          arg_seconds > 0 ? "seconds" : arg_top >= 0 ? "top" : arg_linear ? "linear" : "match");
                return 2;
        }
        if (n_by > 1) {
                log_error("top takes one --by, the key of its rows (k changes it); try 'evmonctl --help'.");
                return 2;
        }
        if (arg_interval > 3600 || !isfinite(arg_interval)) {
                log_error("--interval for top takes at most 3600 s; try 'evmonctl --help'.");
                return 2;
        }
        if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
                log_error("top draws on a terminal, and reads its keys from one; for the counts as lines, "
                          "`evmonctl count --by comm --interval 1` (--json for JSON).");
                return 2;
        }
        t.interval_ms = arg_interval > 0 ? (unsigned) (arg_interval * 1000 + 0.5) : 1000;
        t.keys[t.n_keys++] = n_by > 0 ? arg_by[0] : "comm";
        for (size_t i = 0; i < ELEMENTSOF(top_keys); i++)
                if (strcmp(top_keys[i], t.keys[0]) != 0)
                        t.keys[t.n_keys++] = top_keys[i];
        if (top_model_init(&t.model, t.keys[0]) < 0) {
                log_error("--by %s: not a key top takes (comm, pid, cgroup, container, exe, event, field:NAME, ...)",
                          t.keys[0]);
                return 2;
        }
        r = top_connect(&t);
        if (r != 0)
                goto finish;

        /* Ctrl-C, a closed ssh session, kill: the terminal given back as
         * it was (endwin()), not left in curses' modes. */
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGHUP, &sa, NULL);
        setlocale(LC_CTYPE, "");
        /* newterm(), not initscr(), which exits on a TERM it does not
         * know (ssh from a terminal this host has no terminfo for). */
        t.screen = newterm(NULL, stdout, stdin);
        if (!t.screen) {
                log_error("cannot draw on this terminal: no terminfo for TERM=%s (try TERM=xterm or TERM=vt100)",
                          getenv("TERM") ?: "");
                r = 1;
                goto finish;
        }
        set_term(t.screen);
        t.curses = true;
        cbreak();
        noecho();
        nonl();
        keypad(stdscr, TRUE);
        nodelay(stdscr, TRUE);
        curs_set(0);
        top_draw(&t);
        while (!top_quit) {
                struct pollfd p[2] = {
                        { .fd = t.fd, .events = POLLIN },
                        { .fd = STDIN_FILENO, .events = POLLIN },
                };
                int ch;

                if (poll(p, 2, 1000) < 0) {
                        if (errno == EINTR)
                                continue;   /* a signal (quit), or SIGWINCH: ncurses' KEY_RESIZE follows */
                        r = -errno;
                        break;
                }
                if (p[0].revents) {
                        r = top_read(&t);
                        if (r < 0)
                                break;
                        if (r > 0)
                                top_draw(&t);
                }
                /* The terminal gone (a dropped ssh session without its
                 * SIGHUP): poll() would say so at once, forever. */
                if (p[1].revents & (POLLHUP | POLLERR | POLLNVAL)) {
                        r = 1;
                        break;
                }
                r = 0;
                while ((ch = getch()) != ERR) {
                        r = top_key(&t, ch);
                        if (r != 0)
                                break;
                        top_draw(&t);
                }
                if (r != 0)
                        break;
        }
        top_end_curses(&t);
        if (r == 1 || top_quit)
                r = 0;                  /* q, Ctrl-C */
        else if (r >= 2)
                r -= 2;                 /* said by top_connect() */
        else if (r == -EPROTO) {
                log_error("evmond says: %s", t.error ?: "?");
                r = 1;
        } else if (r < 0)
                r = read_lines_failed(r, NULL);
finish:
        status = r;
        top_end_curses(&t);
        top_model_done(&t.model);
        free(t.buf);
        free((char *) t.error);
        safe_close(t.fd);
        return status;
}
