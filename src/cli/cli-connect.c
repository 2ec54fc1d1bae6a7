/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "evmon/cleanup.h"
#include "evmon/connect.h"
#include "evmon/encode.h"
#include "evmon/io.h"
#include "evmon/jsonc.h"
#include "evmon/log.h"
#include "evmon/protocol.h"

#include "cli.h"

/* The connection to evmond every request command uses: connect, the
 * hello, evmond's lines read, a request sent, and each failure said. */

const char *socket_path(void) {
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

int connect_daemon(void) {
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


/* LINE (LEN bytes, not NUL-terminated: read_lines() hands out lines in
 * place, followed by the rest of its buffer) as a JSON object, or NULL. */
json_object *parse_line(const char *line, size_t len) {
        _cleanup_(json_tokener_freep) json_tokener *tok = json_tokener_new();

        return tok && len <= INT_MAX ? json_tokener_parse_ex(tok, line, (int) len) : NULL;
}

const char *line_type(json_object *o) {
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

volatile sig_atomic_t cli_stop;

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
int read_lines(int fd, bool watch_stdout, int (*fn)(const char *line, size_t len, void *ud), void *ud) {
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

                /* A signal may come between two calls, not in one. */
                if (cli_stop)
                        return -EINTR;
                k = poll(p, 2, hello || noted ? -1 : HELLO_NOTE_MS);
                if (k < 0) {
                        if (errno == EINTR && cli_stop)
                                return -EINTR;
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
                        if (errno == EINTR && cli_stop)
                                return -EINTR;
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
int read_lines_failed(int r, const char *what) {
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
int request_too_long(const struct jbuf *line, const char *what) {
        if (line->len <= EVMON_REQUEST_MAX_BYTES + 1)
                return 0;
        log_error("%s: the names make a request of %zu bytes, longer than the %u evmond reads: "
                  "name fewer, or use patterns such as 'syscalls:*'", what, line->len - 1, EVMON_REQUEST_MAX_BYTES);
        return 2;
}

/* Sends LINE; on failure says why, 0 or -errno. */
int send_line(int fd, const char *line, size_t n, const char *what) {
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

int create_output(const char *path, mode_t mode) {
        _cleanup_(closep) int fd = -1;
        struct stat st;

        /* evmonctl often runs as root, and whoever may write the
         * directory (a /tmp without fs.protected_symlinks) may have put
         * something at PATH: a link to a file of root's (O_NOFOLLOW), a
         * FIFO that would hold the open (O_NONBLOCK, then a regular file
         * only), another's hard link to such a file (truncated only once
         * known to be the caller's own or the only link). */
        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK, mode);
        if (fd < 0 && errno == ELOOP)
                return log_error_errno(-ELOOP, "%s is a symbolic link: name the file itself with -o (evmonctl "
                                       "follows no link it writes through)", path);
        if (fd < 0 && errno == ENXIO)
                return log_error_errno(-ENXIO, "%s is a FIFO: name a regular file with -o", path);
        if (fd < 0)
                return log_error_errno(-errno, "Cannot create %s: %m (name a file you may write with -o)", path);
        if (fstat(fd, &st) < 0)
                return log_error_errno(-errno, "Cannot stat %s: %m", path);
        if (!S_ISREG(st.st_mode))
                return log_error_errno(-EINVAL, "%s is not a regular file: name one with -o", path);
        if (st.st_uid != geteuid() && st.st_nlink > 1)
                return log_error_errno(-EPERM, "%s is another user's file with other links: remove it, or name "
                                       "another with -o", path);
        if (ftruncate(fd, 0) < 0 || fcntl(fd, F_SETFL, 0) < 0)      /* O_NONBLOCK off */
                return log_error_errno(-errno, "Cannot truncate %s: %m", path);
        return TAKE_FD(fd);
}
