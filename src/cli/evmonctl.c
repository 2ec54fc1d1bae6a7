/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "evmon/cleanup.h"
#include "evmon/tracefs.h"

#define DEFAULT_SOCKET "/run/evmon/evmond.sock"

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct tracefs *, tracefs_free);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct format *, format_free);

static const char *arg_socket;
static const char *arg_tracefs;
static int arg_json = -1;  /* -1: JSON when stdout is not a terminal */

static void help(void) {
        printf("Usage: evmonctl COMMAND [OPTIONS]\n"
               "\n"
               "Commands that talk to evmond:\n"
               "  watch [EVENT...]       print events as they happen (all, or those named;\n"
               "                         patterns such as 'syscalls:*' work)\n"
               "  status                 events with counts, lost per CPU, clients\n"
               "  reload                 make evmond read its config again; exits 1 when\n"
               "                         the new config is refused (the old one stays)\n"
               "\n"
               "Commands that read tracefs directly (no daemon needed):\n"
               "  list                   the events this kernel has, as SYSTEM:NAME\n"
               "  describe SYSTEM:NAME   one event's decoder as JSON\n"
               "\n"
               "Options:\n"
               "  -s, --socket PATH      evmond's socket (default $EVMON_SOCKET or %s)\n"
               "  -t, --tracefs DIR      tracefs directory (default: from /proc/mounts)\n"
               "  -j, --json             JSON lines even on a terminal\n"
               "  -h, --help             show this help\n",
               DEFAULT_SOCKET);
}

static int connect_daemon(void) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        const char *path = arg_socket ? arg_socket : getenv("EVMON_SOCKET");
        int fd;

        if (!path)
                path = DEFAULT_SOCKET;
        if (strlen(path) >= sizeof(sa.sun_path)) {
                fprintf(stderr, "evmonctl: socket path too long: %s\n", path);
                return -ENAMETOOLONG;
        }
        strcpy(sa.sun_path, path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                int r = -errno;
                fprintf(stderr, "evmonctl: cannot connect to evmond at %s: %s%s\n", path, strerror(errno),
                        errno == EACCES ? " (are you in the socket's group?)" :
                        errno == ENOENT || errno == ECONNREFUSED ? " (is evmond running? `systemctl status evmond`)" : "");
                close(fd);
                return r;
        }
        return fd;
}

static int send_line(int fd, const char *line) {
        size_t n = strlen(line);
        while (n > 0) {
                ssize_t w = write(fd, line, n);
                if (w < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                line += w;
                n -= (size_t) w;
        }
        return 0;
}

/* Reads lines from FD into a growing buffer and calls FN for each; stops
 * when FN returns non-zero (its value is returned) or at EOF (0). */
static int read_lines(int fd, int (*fn)(const char *line, size_t len, void *ud), void *ud) {
        static char buf[1 << 20];
        size_t len = 0;

        for (;;) {
                ssize_t n = read(fd, buf + len, sizeof(buf) - len);
                size_t start = 0;

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        return 0;
                len += (size_t) n;
                for (size_t i = 0; i < len; i++)
                        if (buf[i] == '\n') {
                                int r = fn(buf + start, i - start + 1, ud);
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
                if (len == sizeof(buf))
                        return -E2BIG;
        }
}

static void print_value(json_object *v) {
        if (json_object_is_type(v, json_type_string))
                fputs(json_object_get_string(v), stdout);
        else
                fputs(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN), stdout);
}

/* The terminal view: one readable line per event. */
static void print_human(json_object *o) {
        json_object *type, *v, *fields;
        const char *t;

        if (!json_object_object_get_ex(o, "type", &type))
                return;
        t = json_object_get_string(type);
        if (strcmp(t, "event") != 0) {
                if (strcmp(t, "hello") == 0 || strcmp(t, "subscribed") == 0)
                        return;
                printf("-- %s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
                return;
        }
        if (json_object_object_get_ex(o, "time", &v)) {
                const char *s = json_object_get_string(v), *tpos = strchr(s, 'T');
                /* HH:MM:SS.micro of the RFC 3339 time */
                printf("%.15s ", tpos ? tpos + 1 : s);
        }
        if (json_object_object_get_ex(o, "cpu", &v))
                printf("cpu%d ", json_object_get_int(v));
        if (json_object_object_get_ex(o, "pid", &v)) {
                json_object *tid;
                printf("%d", json_object_get_int(v));
                if (json_object_object_get_ex(o, "tid", &tid) && json_object_get_int(tid) != json_object_get_int(v))
                        printf("/%d", json_object_get_int(tid));
                putchar(' ');
        }
        if (json_object_object_get_ex(o, "event", &v))
                fputs(json_object_get_string(v), stdout);
        if (json_object_object_get_ex(o, "fields", &fields)) {
                json_object_object_foreach(fields, key, val) {
                        printf(" %s=", key);
                        print_value(val);
                }
        }
        putchar('\n');
}

static int on_watch_line(const char *line, size_t len, void *ud) {
        _cleanup_(json_object_putp) json_object *o = NULL;

        if (arg_json) {
                if (fwrite(line, 1, len, stdout) != len)
                        return -EPIPE;
                return 0;
        }
        o = json_tokener_parse(line);
        if (o)
                print_human(o);
        fflush(stdout);
        return 0;
}

static int cmd_watch(char **events) {
        _cleanup_(closep) int fd = -1;
        int r;

        if (arg_json < 0)
                arg_json = !isatty(STDOUT_FILENO);
        fd = connect_daemon();
        if (fd < 0)
                return 1;
        if (events && *events) {
                _cleanup_(json_object_putp) json_object *o = json_object_new_object();
                json_object *a = json_object_new_array();
                _cleanup_(freep) char *line = NULL;

                json_object_object_add(o, "type", json_object_new_string("subscribe"));
                for (char **e = events; *e; e++)
                        json_object_array_add(a, json_object_new_string(*e));
                json_object_object_add(o, "events", a);
                if (asprintf(&line, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN)) < 0)
                        return 1;
                if (send_line(fd, line) < 0)
                        return 1;
        }
        /* Full buffering on a pipe: lines reach the reader in big writes. */
        if (arg_json)
                setvbuf(stdout, NULL, _IOFBF, 1 << 16);
        r = read_lines(fd, on_watch_line, NULL);
        fflush(stdout);
        if (r < 0 && r != -EPIPE) {
                fprintf(stderr, "evmonctl: reading from evmond failed: %s\n", strerror(-r));
                return 1;
        }
        return 0;
}

struct request {
        const char *type;
        int status;
};

static int on_reply_line(const char *line, size_t len, void *ud) {
        struct request *req = ud;
        _cleanup_(json_object_putp) json_object *o = json_tokener_parse(line);
        json_object *t;

        if (!o || !json_object_object_get_ex(o, "type", &t))
                return 0;
        if (strcmp(json_object_get_string(t), "error") == 0) {
                json_object *e;
                json_object_object_get_ex(o, "error", &e);
                fprintf(stderr, "evmonctl: evmond says: %s\n", json_object_get_string(e));
                req->status = 1;
                return 1;
        }
        if (strcmp(json_object_get_string(t), req->type) != 0)
                return 0;
        puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE));
        {
                json_object *ok;
                if (json_object_object_get_ex(o, "ok", &ok) && !json_object_get_boolean(ok))
                        req->status = 1;
        }
        return 1;
}

static int cmd_request(const char *type) {
        _cleanup_(closep) int fd = -1;
        struct request req = { .type = type };
        char line[64];
        int r;

        fd = connect_daemon();
        if (fd < 0)
                return 1;
        snprintf(line, sizeof(line), "{\"type\":\"%s\"}\n", type);
        if (send_line(fd, line) < 0)
                return 1;
        r = read_lines(fd, on_reply_line, &req);
        if (r <= 0) {
                fprintf(stderr, "evmonctl: evmond closed the connection without answering \"%s\"\n", type);
                return 1;
        }
        return req.status;
}

static int open_tracefs(struct tracefs **ret) {
        int r = tracefs_open(arg_tracefs, ret);
        if (r < 0)
                fprintf(stderr, "evmonctl: cannot open tracefs%s%s: %s%s\n", arg_tracefs ? " at " : "",
                        arg_tracefs ? arg_tracefs : "", strerror(-r),
                        r == -EACCES || r == -EPERM ? " (run as root)" : "");
        return r;
}

static int cmd_list(void) {
        _cleanup_(tracefs_freep) struct tracefs *t = NULL;
        _cleanup_(strv_freep) char **names = NULL;
        int r;

        if (open_tracefs(&t) < 0)
                return 1;
        r = tracefs_list_events(t, &names);
        if (r < 0) {
                fprintf(stderr, "evmonctl: cannot list events in %s: %s\n", tracefs_path(t), strerror(-r));
                return 1;
        }
        for (char **n = names; *n; n++)
                puts(*n);
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
                fprintf(stderr, "evmonctl: \"%s\" is not SYSTEM:NAME (for example sched:sched_process_exec)\n", event);
                return 2;
        }
        system = strndup(event, colon - event);
        if (!system || open_tracefs(&t) < 0)
                return 1;
        r = tracefs_event_format(t, system, colon + 1, &f);
        if (r < 0) {
                fprintf(stderr, "evmonctl: %s: %s\n", event,
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
                json_object_object_add(e, "signed", json_object_new_boolean(ff->elem_signed));
                json_object_object_add(e, "kind", json_object_new_string(field_kind_to_string(ff->kind)));
                if (ff->common)
                        json_object_object_add(e, "common", json_object_new_boolean(true));
                json_object_array_add(fields, e);
        }
        json_object_object_add(o, "fields", fields);
        puts(json_object_to_json_string_ext(o, (isatty(STDOUT_FILENO) ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED
                                                : JSON_C_TO_STRING_PLAIN) | JSON_C_TO_STRING_NOSLASHESCAPE));
        return 0;
}

int main(int argc, char **argv) {
        static const struct option options[] = {
                { "socket", required_argument, NULL, 's' },
                { "tracefs", required_argument, NULL, 't' },
                { "json", no_argument, NULL, 'j' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        const char *cmd;
        int c;

        signal(SIGPIPE, SIG_IGN);
        while ((c = getopt_long(argc, argv, "s:t:jh", options, NULL)) >= 0)
                switch (c) {
                case 's':
                        arg_socket = optarg;
                        break;
                case 't':
                        arg_tracefs = optarg;
                        break;
                case 'j':
                        arg_json = 1;
                        break;
                case 'h':
                        help();
                        return 0;
                default:
                        fprintf(stderr, "Try 'evmonctl --help'.\n");
                        return 2;
                }
        if (optind >= argc) {
                help();
                return 2;
        }
        cmd = argv[optind++];
        if (strcmp(cmd, "watch") == 0)
                return cmd_watch(argv + optind);
        if (strcmp(cmd, "status") == 0 && optind == argc)
                return cmd_request("status");
        if (strcmp(cmd, "reload") == 0 && optind == argc)
                return cmd_request("reload");
        if (strcmp(cmd, "list") == 0 && optind == argc)
                return cmd_list();
        if (strcmp(cmd, "describe") == 0 && optind + 1 == argc)
                return cmd_describe(argv[optind]);
        fprintf(stderr, "evmonctl: unknown command or wrong arguments: %s; try 'evmonctl --help'.\n", cmd);
        return 2;
}
