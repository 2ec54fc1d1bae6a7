/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "evmon/cleanup.h"
#include "evmon/clock.h"
#include "evmon/io.h"
#include "evmon/jsonc.h"
#include "evmon/log.h"
#include "evmon/perfdata.h"
#include "evmon/protocol.h"

#include "cli.h"

/* evmonctl record: subscribe with "format":"perf" and write what evmond
 * sends after its subscribed line, a perf pipe-mode stream, to a file
 * that perf script, perf report and evmonctl decode read (perf reads
 * pipe mode from a regular file as from a pipe). */

/* The lines before the stream (hello, the events that came before the
 * subscription was taken, subscribed) are short; an overlong one is not
 * evmond's. */
#define RECORD_LINE_MAX (1u << 20)

static volatile sig_atomic_t record_stop;

static void on_stop(int sig) {
        record_stop = 1;
}

/* One line before the stream: 1 when it is the subscribed line, 0 to go
 * on, -1 when evmond refused (said). */
static int record_line(const char *line, size_t len) {
        _cleanup_(json_object_putp) json_object *o = parse_line(line, len);
        const char *type = line_type(o);
        json_object *e;

        if (strcmp(type, EVMON_LINE_ERROR) == 0) {
                json_object_object_get_ex(o, "error", &e);
                log_error("evmond says: %s", e ? json_object_get_string(e) : "?");
                return -1;
        }
        return strcmp(type, EVMON_LINE_SUBSCRIBED) == 0;
}

/* Where the stream's records begin, so that a recording stops between
 * two of them and never leaves half a record at the end of the file:
 * the 16-byte pipe header, then records of header.size bytes, but for
 * HEADER_TRACING_DATA, whose data (its u32) follows outside its size. */
struct bounds {
        uint8_t head[12];
        size_t have;            /* bytes of head taken */
        uint64_t skip;          /* bytes left of the current record past its head */
        bool started;           /* the pipe header is behind */
};

/* Takes up to N bytes of the stream; returns how many it took, which is
 * less only when it stopped at a record boundary with STOP set. */
static size_t bounds_take(struct bounds *b, const uint8_t *p, size_t n, bool stop) {
        size_t i = 0;

        while (i < n) {
                struct { uint32_t type; uint16_t misc, size; } h;
                size_t want, k;

                if (b->skip > 0) {
                        k = b->skip < n - i ? (size_t) b->skip : n - i;
                        b->skip -= k;
                        i += k;
                        continue;
                }
                if (stop && b->have == 0)
                        return i;
                /* 8 bytes: the magic, or a record's header; 4 more for
                 * HEADER_TRACING_DATA's size. */
                want = 8;
                if (b->have >= 8 && b->started) {
                        memcpy(&h, b->head, 8);
                        if (h.type == 66 /* PERF_RECORD_HEADER_TRACING_DATA */)
                                want = 12;
                }
                if (b->have < want) {
                        k = want - b->have < n - i ? want - b->have : n - i;
                        memcpy(b->head + b->have, p + i, k);
                        b->have += k;
                        i += k;
                        if (b->have < want)
                                continue;
                        if (want == 8 && b->started) {
                                memcpy(&h, b->head, 8);
                                if (h.type == 66)
                                        continue;       /* its size next */
                        }
                }
                if (!b->started) {
                        /* the magic, then the u64 header size (16) */
                        b->skip = 8;
                        b->started = true;
                } else {
                        memcpy(&h, b->head, 8);
                        if (h.type == 66) {
                                uint32_t extra;

                                if (b->have < 12)
                                        continue;
                                memcpy(&extra, b->head + 8, 4);
                                b->skip = (h.size > 12 ? h.size - 12u : 0) + (uint64_t) extra;
                        } else
                                b->skip = h.size > 8 ? h.size - 8u : 0;
                }
                b->have = 0;
        }
        return i;
}

/* The pipe-mode stream written to PATH as a file-mode perf.data in its
 * place (perfdata_pipe_to_file()): perf maps that rather than reading
 * it a record at a time. On failure PATH keeps the stream, which perf
 * reads all the same; said, not an error. */
static void make_file_mode(const char *path) {
        _cleanup_(freep) char *tmp = NULL;
        _cleanup_(closep) int fd = -1;
        struct stat st;
        void *map;
        FILE *f;
        int r, tfd;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < 16)
                return;
        if (asprintf(&tmp, "%s.XXXXXX", path) < 0)
                return;
        map = mmap(NULL, (size_t) st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED)
                return;
        /* A new file of a name no one could have placed a link at
         * (O_EXCL), 0600 as perf writes its data: it holds the sampled
         * processes' records. */
        tfd = mkostemp(tmp, O_CLOEXEC);
        f = tfd >= 0 ? fdopen(tfd, "w") : NULL;
        if (!f) {
                r = -errno;
                if (tfd >= 0) {
                        close(tfd);
                        (void) unlink(tmp);
                }
                munmap(map, (size_t) st.st_size);
                log_warning_errno(r, "Cannot create a file beside %s (%m): it stays in perf's pipe mode", path);
                return;
        }
        r = perfdata_pipe_to_file(map, (size_t) st.st_size, f);
        munmap(map, (size_t) st.st_size);
        if (fclose(f) != 0 && r >= 0)
                r = -errno;
        if (r >= 0 && rename(tmp, path) < 0)
                r = -errno;
        if (r < 0) {
                (void) unlink(tmp);
                log_warning_errno(r, "Cannot rewrite %s as a file-mode perf.data (%m): it stays in perf's pipe "
                                  "mode, which perf reads all the same", path);
        }
}

static int open_output(const char *path) {
        if (strcmp(path, "-") == 0)
                return STDOUT_FILENO;
        return create_output(path, 0600);
}

int cmd_record(char **events, const char *output, double seconds) {
        _cleanup_(json_object_putp) json_object *req = NULL;
        _cleanup_(closep) int fd = -1;
        _cleanup_(freep) char *buf = NULL;
        size_t len = 0, written = 0;
        int out = -1, r, status = 1;
        bool streaming = false, ending = false;
        struct bounds bd = {};
        uint64_t deadline = 0, end_by = 0;
        const char *s;

        if (!output) {
                log_error("record needs -o FILE (- for standard output); try 'evmonctl --help'.");
                return 2;
        }
        if (strcmp(output, "-") == 0 && isatty(STDOUT_FILENO)) {
                log_error("record -o - writes perf's binary records: pipe them (evmonctl record -o - | perf "
                          "script -i -) or name a file.");
                return 2;
        }
        req = json_object_new_object();
        if (!req)
                return log_oom_cli();
        json_object_object_add(req, "type", json_object_new_string(EVMON_REQUEST_SUBSCRIBE));
        json_object_object_add(req, "format", json_object_new_string("perf"));
        if (events && *events) {
                json_object *a = json_object_new_array();

                if (!a)
                        return log_oom_cli();
                for (size_t i = 0; events[i]; i++)
                        json_object_array_add(a, json_object_new_string(events[i]));
                json_object_object_add(req, "events", a);
        }
        s = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
        if (!s)
                return log_oom_cli();
        if (strlen(s) + 1 > EVMON_REQUEST_MAX_BYTES) {
                log_error("record: the subscribe request is over %u bytes: name fewer events or patterns",
                          EVMON_REQUEST_MAX_BYTES);
                return 2;
        }
        buf = malloc(RECORD_LINE_MAX);
        if (!buf)
                return log_oom_cli();

        fd = connect_daemon();
        if (fd < 0)
                return 1;
        {
                _cleanup_(freep) char *line = NULL;

                if (asprintf(&line, "%s\n", s) < 0)
                        return log_oom_cli();
                if (send_line(fd, line, strlen(line), EVMON_REQUEST_SUBSCRIBE) < 0)
                        return 1;
        }
        out = open_output(output);
        if (out < 0)
                return 1;

        signal(SIGINT, on_stop);
        signal(SIGTERM, on_stop);
        if (seconds > 0)
                deadline = (uint64_t) now_ms() + (uint64_t) (seconds * 1000.0);

        for (;;) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                int timeout = -1;
                ssize_t n;

                if (!ending && (record_stop || (deadline && (uint64_t) now_ms() >= deadline))) {
                        /* Stop at the end of the record the stream is in
                         * (evmond writes whole records): a second at most. */
                        ending = true;
                        end_by = (uint64_t) now_ms() + 1000;
                        if (!streaming || (bd.have == 0 && bd.skip == 0))
                                break;
                }
                if (ending) {
                        uint64_t now = (uint64_t) now_ms();

                        if (now >= end_by) {
                                log_error("evmond did not finish its last record within a second; %s ends "
                                          "with part of a record", output);
                                break;
                        }
                        timeout = (int) (end_by - now);
                } else if (deadline) {
                        uint64_t now = (uint64_t) now_ms();

                        timeout = now < deadline ? (int) (deadline - now) : 0;
                }
                r = poll(&p, 1, timeout);
                if (r < 0) {
                        if (errno == EINTR)
                                continue;
                        log_error_errno(-errno, "poll: %m");
                        goto finish;
                }
                if (r == 0)
                        continue;
                n = read(fd, buf + len, RECORD_LINE_MAX - len);
                if (n < 0) {
                        if (errno == EINTR || errno == EAGAIN)
                                continue;
                        log_error_errno(-errno, "Reading from evmond (%s) failed: %m", socket_path());
                        goto finish;
                }
                if (n == 0) {
                        if (streaming) {
                                log_error("evmond ended the stream (it reloaded its config, a CPU came back "
                                          "online, or it stopped); the %zu bytes in %s are complete up to there: "
                                          "run evmonctl record again for what follows", written, output);
                        } else
                                log_error("evmond closed the connection before taking the subscription");
                        goto finish;
                }
                len += (size_t) n;
                if (!streaming) {
                        size_t start = 0;

                        for (size_t i = 0; i < len && !streaming; i++) {
                                if (buf[i] != '\n')
                                        continue;
                                r = record_line(buf + start, i - start);
                                if (r < 0)
                                        goto finish;
                                start = i + 1;
                                streaming = r > 0;
                        }
                        memmove(buf, buf + start, len - start);
                        len -= start;
                        if (!streaming) {
                                if (len == RECORD_LINE_MAX) {
                                        log_error("evmond sent a line over %u bytes before the stream",
                                                  RECORD_LINE_MAX);
                                        goto finish;
                                }
                                continue;
                        }
                }
                {
                        size_t k = bounds_take(&bd, (const uint8_t *) buf, len, ending);

                        r = loop_write(out, buf, k);
                        if (r < 0) {
                                if (out == STDOUT_FILENO)
                                        /* quiet when its reader went away
                                         * (evmonctl record -o - | head -c 1M) */
                                        status = stdout_failed(-r);
                                else
                                        log_error_errno(r, "Writing %s failed: %m", output);
                                goto finish;
                        }
                        written += k;
                        len = 0;
                        if (ending && bd.have == 0 && bd.skip == 0)
                                break;
                }
        }
        if (!streaming) {
                log_error("evmond did not take the subscription before the end");
                goto finish;
        }
        status = 0;
finish:
        if (out >= 0 && out != STDOUT_FILENO) {
                if (close(out) < 0 && status == 0) {
                        log_error_errno(-errno, "Writing %s failed: %m", output);
                        status = 1;
                }
                /* What was recorded, ended early or not: whole records. */
                if (streaming && bd.have == 0 && bd.skip == 0)
                        make_file_mode(output);
        }
        return status;
}
