/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "evmon/attr.h"
#include "evmon/cleanup.h"
#include "evmon/connect.h"
#include "evmon/encode.h"
#include "evmon/human.h"
#include "evmon/io.h"
#include "evmon/encode-perf.h"
#include "evmon/encode-perfdata.h"
#include "evmon/jsonc.h"
#include "evmon/log.h"
#include "evmon/perfdata.h"
#include "evmon/protocol.h"
#include "evmon/tracefs.h"

static const char *arg_socket;
static const char *arg_tracefs;
static int arg_json = -1;  /* -1: JSON when stdout is not a terminal */
static bool arg_all;
static const char *arg_order;   /* decode --order; NULL: time */

static void help(FILE *f) {
        fprintf(f, "Usage: evmonctl COMMAND [OPTIONS]\n"
               "\n"
               "Commands that talk to evmond:\n"
               "  watch [EVENT...]       print events as they happen (all, or those named;\n"
               "                         patterns such as 'syscalls:*' work); exits 1 when\n"
               "                         evmond refuses an EVENT or closes the connection\n"
               "  status                 events with counts, lost per CPU, clients\n"
               "  reload                 make evmond read its config again; exits 1 when\n"
               "                         the new config is refused (the old one stays)\n"
               "  add JSON               serve one more event, given as a config entry\n"
               "                         ('{\"tracepoint\":\"sched:sched_switch\"}')\n"
               "  remove EVENT           stop serving EVENT\n"
               "  enable [EVENT...]      enable events (names or patterns; all when none)\n"
               "  disable [EVENT...]     disable events; they stay served, silent\n"
               "  filter EVENT FILTER    set EVENT's ftrace filter ('' clears it)\n"
               "                         (add ... filter: root and socket.admin_group only;\n"
               "                         a reload or restart serves the config file again)\n"
               "\n"
               "Commands that read tracefs directly (no daemon needed):\n"
               "  list                   the events this kernel has, as perf list shows\n"
               "                         them: tracepoints as SYSTEM:NAME, then software:,\n"
               "                         hardware:, cache: and pmu: events as the config\n"
               "                         names them (pmu:msr/tsc/)\n"
               "  describe EVENT         one event's decoder as JSON (SYSTEM:NAME, or\n"
               "                         KIND:NAME for a perf event: its attr and the\n"
               "                         sample fields its lines carry)\n"
               "\n"
               "Commands that read files:\n"
               "  decode FILE|-          a perf.data file (perf record -o FILE, or pipe-mode\n"
               "                         output on standard input: perf record -o - | evmonctl\n"
               "                         decode -) as JSON lines: first {\"type\":\"header\"} with\n"
               "                         the file's feature sections (host, CPUs, events,\n"
               "                         ...), then each sample as evmond's event line\n"
               "                         (tracepoint fields decoded with the formats the file\n"
               "                         carries) and {\"type\":\"lost\"} per PERF_RECORD_LOST.\n"
               "                         Either byte order, perf record -z data, the directory\n"
               "                         perf record --threads writes. \"time\" is\n"
               "                         wall-clock only when the file has a clock reference\n"
               "                         (perf record -k mono); otherwise it is \"ts\" counted\n"
               "                         from 1970. A damaged file gives every record before\n"
               "                         the damage, then an error naming its offset (exit 1)\n"
               "\n"
               "Options:\n"
               "  -s, --socket PATH      evmond's socket (default $EVMON_SOCKET, or\n"
               "                         %s)\n"
               "  -t, --tracefs DIR      tracefs directory (default: from /proc/mounts)\n"
               "  -j, --json             watch: JSON lines even on a terminal\n"
               "      --all              decode: also one JSON line per other record: the\n"
               "                         kernel's (mmap2, comm, fork, ...) and perf's own\n"
               "                         (header_attr, finished_round, ...) with their fields\n"
               "      --order ORDER      decode: time (perf's order, the default), causal\n"
               "                         (each round sorted as it ends) or file (as stored)\n"
               "  -h, --help             show this help\n"
               "      --version          show the version\n",
               EVMON_SOCKET_PATH_DEFAULT);
}

static int log_oom_cli(void) {
        log_oom();
        return 1;
}

static const char *socket_path(void) {
        return evmon_socket_path(arg_socket);
}

/* Why connect() to PATH failed with ERR, in words that say what to do. */
static void log_connect_error(const char *path, int err) {
        struct stat st;

        if ((err == ECONNREFUSED || err == ENOTSOCK) && stat(path, &st) == 0 && !S_ISSOCK(st.st_mode))
                log_error("cannot connect to evmond at %s: it is %s, not a socket (give evmond's socket "
                          "with --socket or $EVMON_SOCKET; evmond's socket.path, default %s)",
                          path, S_ISDIR(st.st_mode) ? "a directory" : "a file", EVMON_SOCKET_PATH_DEFAULT);
        else if (err == EPROTOTYPE)
                log_error("cannot connect to evmond at %s: it is not a stream socket, so not evmond's "
                          "(give evmond's socket with --socket or $EVMON_SOCKET)", path);
        else
                log_error("cannot connect to evmond at %s: %s%s", path, strerror(err),
                          err == EACCES ? " (are you in the socket's group?)" :
                          err == ENOENT || err == ECONNREFUSED ? " (is evmond running? `systemctl status evmond`)" : "");
}

static int connect_daemon(void) {
        const char *path = socket_path();
        int fd;

        fd = evmon_connect(path);
        if (fd == -ENAMETOOLONG)
                log_error("socket path %s is %zu bytes long: a Unix socket path has at most %zu "
                          "(give a shorter one: a symlink to the socket works)",
                          path, strlen(path), EVMON_SOCKET_PATH_MAX);
        else if (fd < 0)
                log_connect_error(path, -fd);
        return fd;
}

/* Standard output could not take what we wrote: quiet when its reader
 * went away (`evmonctl watch | head -1`), else said (a full disk,
 * /dev/full). The exit status. */
static int stdout_failed(int err) {
        /* A pipe whose reader closed polls POLLERR: that, not errno
         * (which later calls may have changed since the write that
         * failed), says the reader went away. */
        struct pollfd p = { .fd = STDOUT_FILENO };

        if (err == EPIPE || (poll(&p, 1, 0) > 0 && (p.revents & (POLLERR | POLLHUP))))
                return 0;
        log_error("cannot write to standard output: %s", strerror(err));
        return 1;
}

/* Flushes standard output at the end of a command; STATUS, or what
 * stdout_failed() says when it could not take everything. */
static int stdout_done(int status) {
        if (fflush(stdout) == EOF || ferror(stdout))
                return stdout_failed(errno > 0 ? errno : EIO) ?: status;
        return status;
}

/* LINE (LEN bytes, not NUL-terminated: read_lines() hands out lines in
 * place, followed by the rest of its buffer) as a JSON object, or NULL. */
static json_object *parse_line(const char *line, size_t len) {
        _cleanup_(json_tokener_freep) json_tokener *tok = json_tokener_new();

        return tok && len <= INT_MAX ? json_tokener_parse_ex(tok, line, (int) len) : NULL;
}

static const char *line_type(json_object *o) {
        json_object *t;

        if (!o || !json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, "type", &t) ||
            !json_object_is_type(t, json_type_string))
                return "";
        return json_object_get_string(t);
}

/* The first line on the socket: evmond's hello, of the protocol version
 * this evmonctl speaks (doc/protocol.md: a client that gets a version it
 * does not know says so and stops). 0, or -EPROTO once said why not. */
static int check_hello(const char *line, size_t len) {
        _cleanup_(json_object_putp) json_object *o = parse_line(line, len), *quoted = NULL;
        const char *path = socket_path(), *type = line_type(o);
        json_object *v = NULL;

        if (strcmp(type, EVMON_LINE_HELLO) == 0) {
                if (json_object_object_get_ex(o, "version", &v) && json_object_is_type(v, json_type_int) &&
                    json_object_get_int64(v) == EVMON_PROTOCOL_VERSION)
                        return 0;
                log_error("evmond at %s speaks protocol version %s; this evmonctl speaks version %d: "
                          "use the evmonctl of evmond's release", path,
                          v ? json_object_to_json_string(v) : "(none)", EVMON_PROTOCOL_VERSION);
                return -EPROTO;
        }
        /* A connection evmond refuses (clients.max, max_per_uid) gets one
         * error line. */
        if (strcmp(type, EVMON_LINE_ERROR) == 0 && json_object_object_get_ex(o, "error", &v)) {
                log_error("evmond at %s refused the connection: %s", path, json_object_get_string(v));
                return -EPROTO;
        }
        /* Quoted as a JSON string: whatever the peer sent, no control
         * byte reaches the terminal. */
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
                len--;
        quoted = json_object_new_string_len(line, (int) (len < 80 ? len : 80));
        log_error("%s is not evmond's socket: its first line is %s%s, not evmond's hello (give evmond's "
                  "socket with --socket or $EVMON_SOCKET)", path,
                  quoted ? json_object_to_json_string_ext(quoted, JSON_C_TO_STRING_NOSLASHESCAPE) : "?",
                  len > 80 ? "..." : "");
        return -EPROTO;
}

/* A line of evmond's is read into a buffer of LINE_START_BYTES that
 * doubles up to LINE_MAX_BYTES for a longer one. */
#define LINE_START_BYTES (1u << 20)
#define LINE_MAX_BYTES (256u << 20)

/* How long without evmond's hello before saying that we still wait. */
#define HELLO_NOTE_MS 5000

/* Reads evmond's lines from FD and calls FN for each after the hello
 * (checked first: check_hello()); stops when FN returns non-zero (its
 * value is returned). With WATCH_STDOUT it also ends, -EPIPE, when the
 * reader of our standard output goes away, though evmond is quiet.
 * -ECONNRESET when evmond closes the connection, -EPROTO when it is no
 * evmond we speak with (said), -ENOSPC and the like when standard output
 * fails, -E2BIG for a line longer than LINE_MAX_BYTES. */
static int read_lines(int fd, bool watch_stdout, int (*fn)(const char *line, size_t len, void *ud), void *ud) {
        /* Grows for a longer line (a status of thousands of events),
         * up to LINE_MAX_BYTES. */
        static char *buf;
        static size_t size;
        size_t len = 0;
        bool hello = false, noted = false;

        for (;;) {
                struct pollfd p[2] = {
                        { .fd = fd, .events = POLLIN },
                        /* No events asked: a pipe whose reader closed
                         * gives POLLERR, a hung-up socket POLLHUP. */
                        { .fd = watch_stdout ? STDOUT_FILENO : -1 },
                };
                size_t start = 0;
                ssize_t n;
                int k;

                k = poll(p, 2, hello || noted ? -1 : HELLO_NOTE_MS);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0) {
                        log_error("no answer from %s for %d s; still waiting (evmond says hello at once, "
                                  "unless it is starting or stopped: `systemctl status evmond`)",
                                  socket_path(), HELLO_NOTE_MS / 1000);
                        noted = true;
                        continue;
                }
                if (p[1].revents & (POLLERR | POLLHUP))
                        return -EPIPE;
                if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
                        continue;
                if (len == size) {
                        size_t want = size ? size * 2 : LINE_START_BYTES;
                        char *grown;

                        if (want > LINE_MAX_BYTES)
                                return -E2BIG;
                        grown = realloc(buf, want);
                        if (!grown)
                                return -ENOMEM;
                        buf = grown;
                        size = want;
                }
                n = read(fd, buf + len, size - len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return errno == ECONNRESET ? -ECONNRESET : -errno;
                }
                if (n == 0)
                        return -ECONNRESET;
                len += (size_t) n;
                for (size_t i = 0; i < len; i++)
                        if (buf[i] == '\n') {
                                int r;

                                if (!hello) {
                                        r = check_hello(buf + start, i - start + 1);
                                        if (r < 0)
                                                return r;
                                        hello = true;
                                }
                                r = fn(buf + start, i - start + 1, ud);
                                if (r != 0)
                                        return r;
                                start = i + 1;
                        }
                /* Everything one read() gave goes out before we wait for
                 * more: big writes under load, no delay on a quiet system. */
                if (fflush(stdout) == EOF)
                        return errno > 0 ? -errno : -EIO;
                memmove(buf, buf + start, len - start);
                len -= start;
                /* evmond's hello is short: 64 KiB without a line end is
                 * some other server's stream, not worth 256 MiB. */
                if (!hello && len >= 1u << 16)
                        return check_hello(buf, len) < 0 ? -EPROTO : -E2BIG;
        }
}

/* What read_lines() ended with R, said; the exit status. */
static int read_lines_failed(int r, const char *what) {
        switch (r) {
        case -EPROTO:
                return 1;       /* said already */
        case -ECONNRESET:
                log_error("evmond at %s closed the connection%s%s (it stopped or restarted, or dropped this "
                          "client: `journalctl -u evmond`)", socket_path(), what ? " without answering " : "",
                          what ?: "");
                return 1;
        case -E2BIG:
                log_error("evmond at %s sent a line longer than %u MiB, more than evmonctl reads: is it evmond?",
                          socket_path(), LINE_MAX_BYTES >> 20);
                return 1;
        case -EPIPE:
        case -ENOSPC:
        case -EIO:
        case -EFBIG:
        case -EDQUOT:
        case -EBADF:
                return stdout_failed(-r);
        default:
                log_error("reading from evmond at %s failed: %s", socket_path(), strerror(-r));
                return 1;
        }
}

static int on_nothing(const char *line, size_t len, void *ud) {
        return 0;
}

/* A request evmond would refuse for its length, as the usage error
 * saying what to give instead; 0 when it fits. */
static int request_too_long(const struct jbuf *line, const char *what) {
        if (line->len <= EVMON_REQUEST_MAX_BYTES + 1)
                return 0;
        log_error("%s: the names make a request of %zu bytes, longer than the %u evmond reads: "
                  "name fewer, or use patterns such as 'syscalls:*'", what, line->len - 1, EVMON_REQUEST_MAX_BYTES);
        return 2;
}

/* Sends LINE; on failure says why, 0 or -errno. */
static int send_line(int fd, const char *line, size_t n, const char *what) {
        int r = loop_write(fd, line, n);

        /* A connection evmond refuses gets its reason before the close:
         * that, rather than the broken pipe, says what to do; else the
         * close is said as when it comes before the answer. */
        if (r == -EPIPE || r == -ECONNRESET) {
                int k = read_lines(fd, false, on_nothing, NULL);

                if (k == -EPROTO)
                        return r;
                if (k == -ECONNRESET) {
                        (void) read_lines_failed(k, what);
                        return r;
                }
        }
        if (r < 0)
                log_error("cannot send \"%s\" to evmond at %s: %s%s", what, socket_path(), strerror(-r),
                          r == -EPIPE || r == -ECONNRESET ? " (it closed the connection: is it evmond? "
                                                            "`systemctl status evmond`)" : "");
        return r;
}

struct watch {
        bool subscribing;       /* subscribed, awaiting the answer */
        bool terminal;          /* stdout is one */
};

static int on_watch_line(const char *line, size_t len, void *ud) {
        struct watch *w = ud;
        _cleanup_(json_object_putp) json_object *o = NULL;

        if (w->subscribing || !arg_json)
                o = parse_line(line, len);
        if (w->subscribing) {
                const char *type = line_type(o);
                json_object *e;

                /* Until evmond has taken the subscription it sends this
                 * client everything (no subscription yet): none of those
                 * events is what was asked for. Schema lines stay: evmond
                 * sends one per event and client, not again after the
                 * subscription. */
                if (strcmp(type, EVMON_LINE_ERROR) == 0) {
                        json_object_object_get_ex(o, "error", &e);
                        log_error("evmond says: %s", e ? json_object_get_string(e) : "?");
                        return 1;
                }
                if (strcmp(type, EVMON_LINE_SUBSCRIBED) == 0)
                        w->subscribing = false;
                else if (strcmp(type, EVMON_LINE_HELLO) != 0 && strcmp(type, EVMON_LINE_SCHEMA) != 0)
                        return 0;
        }
        if (arg_json) {
                if (w->terminal) {
                        /* --json on a terminal: the same JSON, its C1
                         * controls escaped. */
                        human_put_json(stdout, line, len);
                        if (fflush(stdout) == EOF)
                                return errno > 0 ? -errno : -EIO;
                } else if (fwrite(line, 1, len, stdout) != len)
                        return errno > 0 ? -errno : -EIO;
                return 0;
        }
        if (o)
                human_print(stdout, o);
        if (fflush(stdout) == EOF)
                return errno > 0 ? -errno : -EIO;
        return 0;
}

static int cmd_watch(char **events) {
        _cleanup_(jbuf_donep) struct jbuf line = {};
        _cleanup_(closep) int fd = -1;
        struct watch w = {};
        int r;

        w.terminal = isatty(STDOUT_FILENO);
        if (arg_json < 0)
                arg_json = !w.terminal;
        if (events && *events) {
                size_t n = 0;

                while (events[n])
                        n++;
                if (encode_subscribe(&line, (const char *const *) events, n) < 0)
                        return log_oom_cli();
                r = request_too_long(&line, "watch");
                if (r != 0)
                        return r;
        }
        fd = connect_daemon();
        if (fd < 0)
                return 1;
        if (line.len > 0) {
                if (send_line(fd, line.data, line.len, EVMON_REQUEST_SUBSCRIBE) < 0)
                        return 1;
                w.subscribing = true;
        }
        /* Full buffering on a pipe: lines reach the reader in big writes. */
        if (arg_json && !w.terminal)
                setvbuf(stdout, NULL, _IOFBF, 1 << 16);
        r = read_lines(fd, true, on_watch_line, &w);
        if (r > 0)
                return stdout_done(1);  /* the subscription refused */
        if (r == -ECONNRESET) {
                /* What came before the end is printed before the word
                 * about it. */
                r = stdout_done(0);
                if (r != 0)
                        return r;
                return read_lines_failed(-ECONNRESET, NULL);
        }
        return read_lines_failed(r, NULL);
}

struct request {
        const char *type;
        int status;
};

static int on_reply_line(const char *line, size_t len, void *ud) {
        struct request *req = ud;
        _cleanup_(json_object_putp) json_object *o = parse_line(line, len);
        const char *type = line_type(o);
        json_object *ok;

        if (strcmp(type, EVMON_LINE_ERROR) == 0) {
                json_object *e;
                json_object_object_get_ex(o, "error", &e);
                log_error("evmond says: %s", e ? json_object_get_string(e) : "?");
                req->status = 1;
                return 1;
        }
        if (strcmp(type, req->type) != 0)
                return 0;
        puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE));
        if (json_object_object_get_ex(o, "ok", &ok) && !json_object_get_boolean(ok)) {
                json_object *e = NULL;

                /* The reason on stderr too, where a failing command puts
                 * it (a script keeps stdout). */
                json_object_object_get_ex(o, "error", &e);
                log_error("evmond at %s refused the %s: %s", socket_path(), req->type,
                          e ? json_object_get_string(e) : "no reason given");
                req->status = 1;
        }
        return 1;
}

/* Sends LINE on FD and prints the answer of REQ's type; the exit status. */
static int send_and_answer(int fd, const struct jbuf *line, struct request *req, const char *what) {
        static const char *const none[] = { NULL };
        _cleanup_(jbuf_donep) struct jbuf both = {};
        int r;

        /* A subscription to no event first: without one evmond sends a
         * client every event (doc/protocol.md), which a one-shot request
         * would read past, megabytes of them on a busy host, to its
         * answer. */
        if (encode_subscribe(&both, none, 0) < 0 || jbuf_reserve(&both, line->len) < 0)
                return log_oom_cli();
        jbuf_put_bytes(&both, line->data, line->len);
        if (send_line(fd, both.data, both.len, what) < 0)
                return 1;
        r = read_lines(fd, false, on_reply_line, req);
        if (r <= 0)
                return read_lines_failed(r, what);
        return stdout_done(req->status);
}

static int cmd_request(const char *type) {
        _cleanup_(closep) int fd = -1;
        _cleanup_(jbuf_donep) struct jbuf line = {};
        struct request req = { .type = type };

        if (encode_request(&line, type) < 0)
                return log_oom_cli();
        fd = connect_daemon();
        if (fd < 0)
                return 1;
        return send_and_answer(fd, &line, &req, type);
}

/* Runtime control: TYPE with its arguments; the result line printed. */
static int cmd_control(const char *type, char **args, int n) {
        _cleanup_(closep) int fd = -1;
        _cleanup_(jbuf_donep) struct jbuf line = {};
        struct request req = { .type = EVMON_LINE_RESULT };
        bool add = strcmp(type, EVMON_REQUEST_ADD) == 0, filter = strcmp(type, EVMON_REQUEST_FILTER) == 0;
        bool many = strcmp(type, EVMON_REQUEST_ENABLE) == 0 || strcmp(type, EVMON_REQUEST_DISABLE) == 0;
        int r;

        r = encode_control(&line, type, add ? args[0] : NULL, !add && !many ? args[0] : NULL,
                           filter ? args[1] : NULL, many && n > 0 ? (const char *const *) args : NULL, (size_t) n);
        if (r == -EINVAL) {
                log_error("add: \"%s\" is not a JSON object such as '{\"tracepoint\":\"sched:sched_switch\"}'", args[0]);
                return 2;
        }
        if (r < 0)
                return log_oom_cli();
        r = request_too_long(&line, type);
        if (r != 0)
                return r;
        fd = connect_daemon();
        if (fd < 0)
                return 1;
        return send_and_answer(fd, &line, &req, type);
}

static int open_tracefs(struct tracefs **ret) {
        int r = tracefs_open(arg_tracefs, ret);

        if (r == -ENOENT && arg_tracefs && access(arg_tracefs, F_OK) == 0)
                log_error("cannot open tracefs at %s: it has no events/ directory (--tracefs names tracefs' "
                          "mount point, such as /sys/kernel/tracing)", arg_tracefs);
        else if (r < 0)
                log_error("cannot open tracefs%s%s: %s%s", arg_tracefs ? " at " : "",
                        arg_tracefs ? arg_tracefs : "", strerror(-r),
                        r == -EACCES || r == -EPERM ? " (run as root)" : "");
        return r;
}

static int list_pmu_event(const char *pmu, uint32_t type, const char *event, void *userdata) {
        if (event)
                printf("pmu:%s/%s/\n", pmu, event);
        return 0;
}

/* describe's JSON: pretty on a terminal, one line otherwise (or with
 * --json), for a trace event and a perf event alike. */
static int describe_flags(void) {
        return (arg_json <= 0 && isatty(STDOUT_FILENO) ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED
                                                       : JSON_C_TO_STRING_PLAIN) | JSON_C_TO_STRING_NOSLASHESCAPE;
}

/* A perf event's attr as the config would build it by default, and the
 * sample fields its lines carry (what evmond adds included). */
static int describe_perf(enum attr_kind kind, const char *event, const char *name) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        struct attr_spec spec = { .kind = kind, .name = name };
        struct perf_event_attr a;
        struct attr_error e = {};
        json_object *fields;
        uint64_t t;
        int r;

        r = attr_from_spec(&spec, NULL, &a, &e);
        if (r < 0) {
                log_error("%s: %s%s%s", event, e.value ? e.value : "", e.value ? ": " : "", e.reason ?: strerror(-r));
                return 1;
        }
        o = json_object_new_object();
        fields = json_object_new_array();
        json_object_object_add(o, "event", json_object_new_string(event));
        json_object_object_add(o, "kind", json_object_new_string(attr_kind_to_string(kind)));
        json_object_object_add(o, "type", json_object_new_int64(a.type));
        json_object_object_add(o, "config", json_object_new_int64((int64_t) a.config));
        if (a.config1)
                json_object_object_add(o, "config1", json_object_new_int64((int64_t) a.config1));
        if (a.config2)
                json_object_object_add(o, "config2", json_object_new_int64((int64_t) a.config2));
        if (a.freq)
                json_object_object_add(o, "freq", json_object_new_int64((int64_t) a.sample_freq));
        else
                json_object_object_add(o, "period", json_object_new_int64((int64_t) a.sample_period));
        /* evmond adds tid, time and cpu to every sample (and identifier,
         * which it keeps to itself). */
        t = a.sample_type | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
        for (unsigned b = 0; b < 64; b++) {
                const char *n = attr_sample_name(1ULL << b);

                if ((t & (1ULL << b)) && n)
                        json_object_array_add(fields, json_object_new_string(n));
        }
        json_object_object_add(o, "sample", fields);
        puts(json_object_to_json_string_ext(o, describe_flags()));
        return 0;
}

static int cmd_list(void) {
        _cleanup_(tracefs_freep) struct tracefs *t = NULL;
        _cleanup_(strv_freep) char **names = NULL;
        int r;

        if (open_tracefs(&t) < 0)
                return 1;
        r = tracefs_list_events(t, &names);
        if (r < 0) {
                log_error("cannot list events in %s: %s", tracefs_path(t), strerror(-r));
                return 1;
        }
        for (char **n = names; *n; n++)
                puts(*n);
        for (enum attr_kind k = ATTR_SOFTWARE; k <= ATTR_CACHE; k++)
                for (const char *const *n = attr_event_names(k); *n; n++)
                        printf("%s:%s\n", attr_kind_to_string(k), *n);
        /* Each PMU's named events (its sysfs events/ directory). */
        (void) pmu_foreach_event(NULL, list_pmu_event, NULL);
        return 0;
}

static int cmd_describe(const char *event) {
        _cleanup_(tracefs_freep) struct tracefs *t = NULL;
        _cleanup_(format_freep) struct format *f = NULL;
        _cleanup_(json_object_putp) json_object *o = NULL;
        _cleanup_(freep) char *system = NULL;
        const char *colon = strchr(event, ':');
        json_object *fields;
        int r;

        if (!colon || colon == event || !colon[1]) {
                log_error("\"%s\" is not SYSTEM:NAME (for example sched:sched_process_exec)", event);
                return 2;
        }
        system = strndup(event, colon - event);
        if (system) {
                enum attr_kind kind;

                if (attr_kind_from_string(system, &kind) == 0)
                        return describe_perf(kind, event, colon + 1);
        }
        if (!system || open_tracefs(&t) < 0)
                return 1;
        r = tracefs_event_format(t, system, colon + 1, &f);
        if (r == -EINVAL) {
                log_error("\"%s\" is not SYSTEM:NAME: neither holds a '/', nor is '.' or '..' "
                          "(for example sched:sched_process_exec)", event);
                return 2;
        }
        if (r < 0) {
                log_error("%s: %s", event,
                        r == -ENOENT ? "no such event in this kernel (`evmonctl list` shows them)" : strerror(-r));
                return 1;
        }
        o = json_object_new_object();
        fields = json_object_new_array();
        json_object_object_add(o, "event", json_object_new_string(event));
        json_object_object_add(o, "id", json_object_new_int64(f->id));
        for (size_t i = 0; i < f->n_fields; i++) {
                const struct format_field *ff = &f->fields[i];
                json_object *e = json_object_new_object();

                json_object_object_add(e, "name", json_object_new_string(ff->name));
                json_object_object_add(e, "type", json_object_new_string(ff->type));
                json_object_object_add(e, "offset", json_object_new_int64(ff->offset));
                json_object_object_add(e, "size", json_object_new_int64(ff->size));
                /* The sign the decoder gives the value: it follows the
                 * declared type (int in an 8-byte syscall slot is signed),
                 * and only numbers have one (kernels disagree about the
                 * signed: of a __data_loc char[]). */
                json_object_object_add(e, "signed", json_object_new_boolean(
                        (ff->kind == FIELD_INT || ff->kind == FIELD_ARRAY || ff->kind == FIELD_DYN_ARRAY) && ff->elem_signed));
                json_object_object_add(e, "kind", json_object_new_string(field_kind_to_string(ff->kind)));
                if (ff->common)
                        json_object_object_add(e, "common", json_object_new_boolean(true));
                /* The print fmt's tables, as schema lines show them. */
                if (format_symbols_find(f, i))
                        json_object_object_add(e, "symbols", encode_symbols_new(format_symbols_find(f, i)));
                json_object_array_add(fields, e);
        }
        json_object_object_add(o, "fields", fields);
        /* Helpers of the print fmt that name nothing here (printfmt.c). */
        json_object_object_add(o, "print_unknown", json_object_new_int64(f->print_unknown));
        puts(json_object_to_json_string_ext(o, describe_flags()));
        return 0;
}

/* ---- decode: perf.data files ------------------------------------------ */

/* The file's first bytes again (standard input was read already: a file
 * there reads again from its start, a pipe not), or -errno. */
#define MIN(a, b) ((size_t) (a) < (size_t) (b) ? (size_t) (a) : (size_t) (b))

static ssize_t decode_head(const char *path, uint8_t *head, size_t size) {
        bool in = strcmp(path, "-") == 0;
        _cleanup_(closep) int fd = in ? -1 : open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n;

        if (!in && fd < 0)
                return -errno;
        n = pread(in ? STDIN_FILENO : fd, head, size, 0);
        return n < 0 ? -errno : n;
}

static int decode_open_error(const char *path, int r) {
        const char *name = strcmp(path, "-") == 0 ? "standard input" : path;
        uint8_t head[128] = {};
        ssize_t n;

        if (r == -EPROTONOSUPPORT) {
                const char *why = NULL;

                n = decode_head(path, head, sizeof(head));
                if (n > 0)
                        why = perfdata_unsupported(head, (size_t) n);
                log_error("%s: %s is not read by evmonctl decode", name,
                        why ? why : "this perf.data variant");
        } else if (r == -EBADMSG) {
                n = decode_head(path, head, sizeof(head));
                if (n == 0)
                        log_error("%s is empty: no perf.data file (perf record -o FILE writes one)", name);
                else if (n < 0 && strcmp(path, "-") == 0)
                        /* A pipe: what was read is gone. */
                        log_error("standard input is not perf.data: it does not begin with perf's \"PERFILE2\" "
                                  "header, or its first records are damaged (perf record -o - ... | evmonctl "
                                  "decode - reads what perf writes)");
                else if (n > 0 && memcmp(head, "PERFILE2", MIN(n, 8)) != 0 && memcmp(head, "2ELIFREP", MIN(n, 8)) != 0)
                        log_error("%s is not a perf.data file: it does not begin with perf's \"PERFILE2\" "
                                  "(perf record -o FILE writes one, perf record -o - the pipe-mode data "
                                  "evmonctl decode - reads)", name);
                else
                        log_error("%s is not a well-formed perf.data file (its header or attrs are "
                                  "truncated or corrupt; evmonctl decode reads what perf record writes)", name);
        } else if (r == -EISDIR)
                log_error("%s is a directory without a \"data\" file: not the output of perf record "
                        "(a file, or with --threads a directory holding data and data.N)", name);
        else
                log_error("cannot read %s: %s", name, strerror(-r));
        return 1;
}

static int decode_terminal = -1;

/* A perf.data is anyone's to write: its comms and file names are valid
 * UTF-8 that the JSON passes raw, C1 controls among them (U+009B is
 * CSI). On a terminal they go out escaped, as watch --json does. */
static int decode_flush(struct jbuf *line) {
        if (decode_terminal < 0)
                decode_terminal = isatty(STDOUT_FILENO);
        if (line->len > 0 && decode_terminal) {
                human_put_json(stdout, line->data, line->len);
                if (fflush(stdout) == EOF)
                        return errno > 0 ? -errno : -EIO;
        } else if (line->len > 0 && fwrite(line->data, 1, line->len, stdout) != line->len)
                return errno > 0 ? -errno : -EIO;
        line->len = 0;
        return 0;
}

/* perfdata_next() waits for a live stream (perf record -o - | evmonctl
 * decode -): what came so far goes out first, so lines come as perf
 * writes, not when it exits. A failed write is found by the next. */
static void decode_wait(void *userdata) {
        struct jbuf *line = userdata;

        if (decode_flush(line) == 0)
                (void) fflush(stdout);
}

struct decode_events {
        const struct perfdata *pd;
        struct encoder **enc;           /* per event of the file */
        char **names;                   /* its wire name */
        size_t n;
};

static void decode_events_done(struct decode_events *d) {
        for (size_t i = 0; i < d->n; i++) {
                if (d->enc)
                        encoder_free(d->enc[i]);
                if (d->names)
                        free(d->names[i]);
        }
        free(d->enc);
        free(d->names);
}

static ssize_t decode_event_index(const struct decode_events *d, const struct perfdata_event *ev) {
        for (size_t i = 0; ev && i < d->n; i++)
                if (perfdata_event(d->pd, i) == ev)
                        return (ssize_t) i;
        return -1;
}

/* Names a read value's id (a group's members) after its event. */
static const char *decode_id_name(uint64_t id, void *userdata) {
        const struct decode_events *d = userdata;

        for (size_t i = 0; i < d->n; i++) {
                const struct perfdata_event *ev = perfdata_event(d->pd, i);

                for (size_t k = 0; k < ev->n_ids; k++)
                        if (ev->ids[k] == id)
                                return d->names[i];
        }
        return NULL;
}

/* An encoder per event: a tracepoint's fields from the format the file
 * carries, any other event's samples with every field in "sample". */
static int decode_events_new(const char *path, const struct perfdata *pd, struct decode_events *d) {
        d->pd = pd;
        d->n = perfdata_n_events(pd);
        d->enc = calloc(d->n ?: 1, sizeof(*d->enc));
        d->names = calloc(d->n ?: 1, sizeof(*d->names));
        if (!d->enc || !d->names)
                return -ENOMEM;
        for (size_t i = 0; i < d->n; i++) {
                const struct perfdata_event *ev = perfdata_event(pd, i);
                const struct encode_ids ids = { .name = decode_id_name, .userdata = d };
                int r;

                if (ev->name)
                        d->names[i] = strdup(ev->name);
                else if (asprintf(&d->names[i], "event%zu", i) < 0)
                        d->names[i] = NULL;
                if (!d->names[i])
                        return -ENOMEM;
                r = encoder_new(d->names[i], ev->format, &d->enc[i]);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        /* A format we cannot compile: its samples with
                         * their raw data, not decoded. */
                        log_error("%s: cannot decode the fields of %s: %s", path, d->names[i],
                                strerror(-r));
                        r = encoder_new(d->names[i], NULL, &d->enc[i]);
                        if (r < 0)
                                return r;
                }
                encoder_set_ids(d->enc[i], &ids);
        }
        return 0;
}

/* Opens PATH for decode in ORDER; 0, or the exit status after saying
 * why not. */
static int decode_open(const char *path, const char *name, const char *order, struct perfdata **ret) {
        _cleanup_(freep) char *fault = NULL;
        int r, o;

        o = perfdata_order_from_string(order);
        if (o < 0) {
                log_error("--order %s: use time, causal or file", order);
                return 2;
        }
        /* It would wait for perf.data typed in. */
        if (strcmp(path, "-") == 0 && isatty(STDIN_FILENO)) {
                log_error("decode -: standard input is a terminal; pipe perf's data in "
                          "(perf record -o - ... | evmonctl decode -) or name a FILE");
                return 2;
        }
        r = perfdata_open_full(path, ret, &fault);
        if (r < 0 && fault) {
                /* One file of a --threads directory: data.N's name is
                 * digits after "data.", safe to show as it is. */
                if (r == -EBADFD)
                        log_error("%s/%s is not a regular file (a FIFO, a device, or a link to one): not what "
                                  "perf record --threads writes; remove it or decode a copy of the directory",
                                  name, fault);
                else
                        log_error("cannot read %s/%s: %s", name, fault, strerror(-r));
                return 1;
        }
        if (r < 0)
                return decode_open_error(path, r);
        (void) perfdata_set_order(*ret, (enum perfdata_order) o);
        return 0;
}

/* What decode left out, said at the end. */
struct decode_counts {
        uint64_t bad, unknown, unparsed;
};

/* Encodes record PR into LINE: 0 when written or left out (counted in
 * *C), -ENOMEM. */
static int decode_record(struct perfdata *pd, const struct decode_events *d, const struct perfdata_record *pr,
                         int64_t offset, struct jbuf *line, struct decode_counts *c) {
        ssize_t i = decode_event_index(d, pr->event);
        int r;

        if (pr->rec.type == PERF_RECORD_SAMPLE) {
                if (i < 0 || !pr->parsed) {
                        c->unknown++;
                        return 0;
                }
                r = encode_event(line, d->enc[i], &pr->rec.sample, offset);
                if (r == -EBADMSG) {
                        c->bad++;
                        return 0;
                }
                return r;
        }
        if (pr->rec.type < PERFDATA_RECORD_USER_TYPE_START && !pr->parsed) {
                /* Its id names no event of the file, whose events lay the
                 * sample_id out differently: nothing tells where its body
                 * ends. Counted, not guessed at. */
                c->unparsed++;
                return 0;
        }
        if (pr->rec.type == PERF_RECORD_LOST) {
                const struct perf_event_attr *a = pr->event ? &pr->event->attr : &perfdata_event(pd, 0)->attr;
                int cpu = pr->rec.has_sid && (a->sample_type & PERF_SAMPLE_CPU) ? (int) pr->rec.sid.cpu : -1;

                return encode_lost(line, cpu, pr->rec.lost.lost);
        }
        if (!arg_all)
                return 0;
        if (pr->rec.type >= PERFDATA_RECORD_USER_TYPE_START)
                return encode_perfdata_user(line, pr);
        /* perf's synthesized records carry no id: laid out by the first
         * event (perfdata.c), named by none. */
        const struct perfdata_event *layout = pr->event ?: perfdata_event(pd, 0);
        const struct encode_record_opts ro = {
                .sample_type = layout ? layout->attr.sample_type : 0,
                .event = i >= 0 ? d->names[i] : NULL,
                .realtime_offset_ns = offset,
                .ids = { .name = decode_id_name, .userdata = (void *) d },
        };
        return encode_record(line, pr->header, &pr->rec, &ro);
}

/* Says where reading stopped (R, what perfdata_next() returned) and what
 * was left out; the exit status. */
static int decode_report(struct perfdata *pd, const char *name, int r, const struct decode_counts *c) {
        int status = 0;

        if (r < 0) {
                char file[32] = "file";

                if (perfdata_pipe(pd))
                        strcpy(file, "stream");
                else if (perfdata_offset_file(pd) >= 0)
                        snprintf(file, sizeof(file), "file data.%d", perfdata_offset_file(pd));
                log_error("%s: %s at byte %" PRIu64 " of the %s; stopped there, after every "
                        "record before it", name,
                        r == -EOPNOTSUPP ? "a sample with fields newer than this evmonctl" :
                        r == -EBADMSG ? "damaged or truncated data (a malformed record or section)" : strerror(-r),
                        perfdata_offset(pd), file);
                status = 1;
        }
        if (c->bad > 0)
                log_error("%s: %" PRIu64 " samples did not decode with their event's format", name, c->bad);
        if (c->unknown > 0)
                log_error("%s: %" PRIu64 " samples name no event of the file (unknown sample id)", name, c->unknown);
        if (c->unparsed > 0)
                log_error("%s: %" PRIu64 " other records name no event of the file (unknown id): left out",
                        name, c->unparsed);
        return status;
}

static int cmd_decode(const char *path, const char *order) {
        _cleanup_(perfdata_freep) struct perfdata *pd = NULL;
        _cleanup_(jbuf_donep) struct jbuf line = {};
        _cleanup_(decode_events_done) struct decode_events d = {};
        struct decode_counts counts = {};
        struct perfdata_clock clock;
        struct perfdata_record pr;
        int64_t offset = 0;
        int r, k;
        const char *name = strcmp(path, "-") == 0 ? "standard input" : path;

        r = decode_open(path, name, order, &pd);
        if (r != 0)
                return r;
        if (perfdata_clock(pd, &clock) >= 0)
                offset = (int64_t) (clock.wall_ns - clock.clock_ns);
        else
                log_error("%s has no clock reference (HEADER_CLOCK_DATA, written by "
                        "perf record -k CLOCK): \"time\" is \"ts\" counted from 1970, not wall-clock time", name);
        if (decode_events_new(name, pd, &d) < 0)
                return log_oom_cli();

        /* Full buffering: this is a batch job; a stream is flushed
         * whenever the reader waits for it. */
        setvbuf(stdout, NULL, _IOFBF, 1 << 16);
        perfdata_set_wait(pd, decode_wait, &line);
        if (encode_perfdata_header(&line, pd) < 0)
                return log_oom_cli();
        while ((r = perfdata_next(pd, &pr)) > 0) {
                if (decode_record(pd, &d, &pr, offset, &line, &counts) < 0)
                        return log_oom_cli();
                if (line.len >= 1 << 16 && (k = decode_flush(&line)) < 0)
                        return stdout_failed(-k);       /* quiet when the reader went away */
        }
        if ((k = decode_flush(&line)) < 0)
                return stdout_failed(-k);
        if (fflush(stdout) == EOF)
                return stdout_failed(errno > 0 ? errno : EIO);
        return decode_report(pd, name, r, &counts);
}

static int run_watch(char **args, int n) {
        return cmd_watch(args);
}

static int run_status(char **args, int n) {
        return cmd_request(EVMON_REQUEST_STATUS);
}

static int run_reload(char **args, int n) {
        return cmd_request(EVMON_REQUEST_RELOAD);
}

static int run_add(char **args, int n) {
        return cmd_control(EVMON_REQUEST_ADD, args, n);
}

static int run_remove(char **args, int n) {
        return cmd_control(EVMON_REQUEST_REMOVE, args, n);
}

static int run_enable(char **args, int n) {
        return cmd_control(EVMON_REQUEST_ENABLE, args, n);
}

static int run_disable(char **args, int n) {
        return cmd_control(EVMON_REQUEST_DISABLE, args, n);
}

static int run_filter(char **args, int n) {
        return cmd_control(EVMON_REQUEST_FILTER, args, n);
}

static int run_list(char **args, int n) {
        return stdout_done(cmd_list());
}

static int run_describe(char **args, int n) {
        return stdout_done(cmd_describe(args[0]));
}

static int run_decode(char **args, int n) {
        return cmd_decode(args[0], arg_order ?: "time");
}

/* The commands, and the arguments each takes: a usage error names the
 * command and what it takes. */
static const struct command {
        const char *name;
        int min_args, max_args;
        const char *args;       /* what it takes, for the usage error */
        bool decode;            /* takes --all and --order */
        int (*run)(char **args, int n);
} commands[] = {
        { "watch", 0, INT_MAX, "EVENT names or patterns", false, run_watch },
        { "status", 0, 0, "no argument", false, run_status },
        { "reload", 0, 0, "no argument", false, run_reload },
        { EVMON_REQUEST_ADD, 1, 1, "one JSON config entry, such as '{\"tracepoint\":\"sched:sched_switch\"}'", false, run_add },
        { EVMON_REQUEST_REMOVE, 1, 1, "one EVENT", false, run_remove },
        { EVMON_REQUEST_ENABLE, 0, INT_MAX, "EVENT names or patterns (none: all)", false, run_enable },
        { EVMON_REQUEST_DISABLE, 0, INT_MAX, "EVENT names or patterns (none: all)", false, run_disable },
        { EVMON_REQUEST_FILTER, 2, 2, "EVENT and FILTER ('' clears the filter)", false, run_filter },
        { "list", 0, 0, "no argument", false, run_list },
        { "describe", 1, 1, "one EVENT, SYSTEM:NAME or KIND:NAME (`evmonctl list` shows them)", false, run_describe },
        { "decode", 1, 1, "one FILE (- for standard input)", true, run_decode },
};

int main(int argc, char **argv) {
        static const struct option options[] = {
                { "socket", required_argument, NULL, 's' },
                { "tracefs", required_argument, NULL, 't' },
                { "json", no_argument, NULL, 'j' },
                { "help", no_argument, NULL, 'h' },
                { "all", no_argument, NULL, 'A' },
                { "order", required_argument, NULL, 'O' },
                { "version", no_argument, NULL, 'V' },
                {}
        };
        const char *cmd;
        int c, n;

        log_setup("evmonctl");
        signal(SIGPIPE, SIG_IGN);
        /* A closed standard fd (`evmonctl status >&-`) would be the next
         * one opened: the socket took fd 1, and status wrote its answer
         * back into it, exit 0, nothing said. /dev/null read-only in its
         * place makes a write there fail as a closed one does (EBADF),
         * which is said. */
        for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++)
                if (fcntl(fd, F_GETFD) < 0 && errno == EBADF && open("/dev/null", O_RDONLY) != fd)
                        return 1;
        while ((c = getopt_long(argc, argv, "s:t:jh", options, NULL)) >= 0)
                switch (c) {
                case 's':
                        if (!*optarg) {
                                log_error("--socket takes the path of evmond's socket, not \"\"; try 'evmonctl --help'.");
                                return 2;
                        }
                        arg_socket = optarg;
                        break;
                case 't':
                        if (!*optarg) {
                                log_error("--tracefs takes a directory, not \"\"; try 'evmonctl --help'.");
                                return 2;
                        }
                        arg_tracefs = optarg;
                        break;
                case 'j':
                        arg_json = 1;
                        break;
                case 'h':
                        help(stdout);
                        return stdout_done(0);
                case 'A':
                        arg_all = true;
                        break;
                case 'V':
                        printf("evmonctl %s\n", EVMON_VERSION);
                        return 0;
                case 'O':
                        arg_order = optarg;
                        break;
                default:
                        log_error("Try 'evmonctl --help'.");
                        return 2;
                }
        if (optind >= argc) {
                /* A usage error: the help goes where errors go. */
                help(stderr);
                return 2;
        }
        cmd = argv[optind++];
        n = argc - optind;
        for (size_t i = 0; i < ELEMENTSOF(commands); i++) {
                const struct command *k = &commands[i];

                if (strcmp(cmd, k->name) != 0)
                        continue;
                if (n < k->min_args) {
                        log_error("%s takes %s: %d given; try 'evmonctl --help'.", cmd, k->args, n);
                        return 2;
                }
                if (n > k->max_args) {
                        log_error("%s takes %s, not also \"%s\"; try 'evmonctl --help'.", cmd, k->args,
                                  argv[optind + k->max_args]);
                        return 2;
                }
                if (!k->decode && (arg_all || arg_order)) {
                        log_error("--%s is an option of decode, not of %s; try 'evmonctl --help'.",
                                  arg_all ? "all" : "order", cmd);
                        return 2;
                }
                return k->run(argv + optind, n);
        }
        log_error("unknown command \"%s\"; the commands are watch, status, reload, add, remove, enable, "
                  "disable, filter, list, describe and decode (evmonctl --help says more).", cmd);
        return 2;
}
