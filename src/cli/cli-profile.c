/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "evmon/cleanup.h"
#include "evmon/encode.h"
#include "evmon/flamegraph.h"
#include "evmon/io.h"
#include "evmon/jsonc.h"
#include "evmon/log.h"
#include "evmon/protocol.h"

#include "cli.h"

/* evmonctl profile: samples with callchains from evmond, folded into
 * stacks, written as folded lines, an SVG flame graph or pprof. evmond
 * folds them itself where it can (the wire protocol's "aggregate" request
 * keyed by comm and stack: one line at the end, no line per sample); an
 * evmond without it ("unknown message type")
 * sends every sample as a line and evmonctl folds them (cli-fold.c). */

pid_t arg_profile_pid;
const char *arg_profile_cgroup;
unsigned arg_freq;              /* 0: the served event's, or 999 for one added */
const char *arg_event;
const char *arg_format;         /* NULL: folded */
const char *arg_output;         /* NULL: standard output */

/* The served events profile takes when none is named, as perf record's
 * default is cpu-clock (cycles where a PMU counts them). */
static const char *const default_events[] = {
        "software:cpu-clock", "software:task-clock", "hardware:cpu-cycles", "hardware:cycles",
};
#define SESSION_FREQ 999

/* What folding took in, said at the end. */
struct profile {
        const char *event;
        int fd;
        bool subscribing;
        struct flame *flame;
        uint64_t samples, no_callchain, lost, dropped, full, malformed;
        bool fallback;          /* evmond has no aggregation: stream */
        int status;
};

static volatile sig_atomic_t profile_stopped, profile_aggregating, profile_flush_ready, profile_flush_sent;
static volatile int profile_fd = -1;
static const char profile_flush[] = "{\"type\":\"flush\",\"final\":true}\n";

/* SIGINT, SIGTERM, the --seconds timer: the end of the profile. Streaming,
 * its connection's read side is shut, read_lines() returns, and what was
 * folded is written; aggregating, evmond is asked for its final line
 * (write() is async-signal-safe), which ends the reading. A second one
 * gives up waiting. */
static void profile_stop(int sig) {
        int saved = errno;

        if (profile_fd >= 0 && (!profile_aggregating || profile_stopped))
                (void) shutdown(profile_fd, SHUT_RD);
        else if (profile_fd >= 0 && profile_flush_ready && !profile_flush_sent) {
                profile_flush_sent = 1;
                (void) !write(profile_fd, profile_flush, sizeof(profile_flush) - 1);
        }
        profile_stopped = 1;
        errno = saved;
}

static int on_profile_line(const char *line, size_t len, void *ud) {
        struct profile *p = ud;
        _cleanup_(json_object_putp) json_object *o = NULL;
        const char *type;
        json_object *v = NULL;

        /* The samples, by far the most lines, without json-c's tree
         * (cli-fold.c); the others as any line. */
        if (!p->subscribing && len > 16 && memcmp(line, "{\"type\":\"event\",", 16) == 0) {
                bool callchain;
                int r = profile_fold_line(p->flame, line, len, p->event, NULL, &callchain);

                if (r == -ENOMEM)
                        return r;
                if (r == 1)
                        return 0;       /* another event */
                if (r == -EBADMSG) {
                        p->malformed++;
                        return 0;
                }
                p->samples++;
                if (r == -E2BIG)
                        p->full++;
                if (!callchain)
                        p->no_callchain++;
                return 0;
        }
        o = parse_line(line, len);
        type = line_type(o);

        if (strcmp(type, EVMON_LINE_ERROR) == 0) {
                json_object_object_get_ex(o, "error", &v);
                log_error("evmond says: %s", v ? json_object_get_string(v) : "?");
                p->status = 1;
                return 1;
        }
        if (p->subscribing) {
                /* Until evmond has the subscription it sends everything. */
                if (strcmp(type, EVMON_LINE_SUBSCRIBED) == 0)
                        p->subscribing = false;
                return 0;
        }
        if (strcmp(type, EVMON_LINE_LOST) == 0 || strcmp(type, EVMON_LINE_DROPPED) == 0) {
                if (json_object_object_get_ex(o, "count", &v))
                        *(type[0] == 'l' ? &p->lost : &p->dropped) += (uint64_t) json_object_get_int64(v);
        }
        return 0;
}

/* The final aggregate line's entries: {"key":{"comm":C,"stack":[…]},
 * "count":N}, the stack root first. */
static int profile_fold_aggregate(struct profile *p, json_object *o) {
        json_object *entries, *v;
        char names[FLAME_DEPTH_MAX][FLAME_NAME_MAX + 1];
        const char *frames[FLAME_DEPTH_MAX];

        if (json_object_object_get_ex(o, "lost", &v))
                p->lost += (uint64_t) json_object_get_int64(v);
        if (json_object_object_get_ex(o, "keys_dropped", &v))
                p->full += (uint64_t) json_object_get_int64(v);
        if (!json_object_object_get_ex(o, "entries", &entries) || !json_object_is_type(entries, json_type_array))
                return 0;
        for (size_t i = 0; i < json_object_array_length(entries); i++) {
                json_object *e = json_object_array_get_idx(entries, i), *key, *comm = NULL, *stack = NULL, *count;
                size_t n = 0, len;
                uint64_t c;
                int r;

                if (!json_object_object_get_ex(e, "key", &key) || !json_object_object_get_ex(e, "count", &count))
                        continue;
                c = (uint64_t) json_object_get_int64(count);
                json_object_object_get_ex(key, "comm", &comm);
                json_object_object_get_ex(key, "stack", &stack);
                frames[n++] = comm && json_object_is_type(comm, json_type_string) ? json_object_get_string(comm) :
                                                                                     "[unknown]";
                len = stack && json_object_is_type(stack, json_type_array) ? json_object_array_length(stack) : 0;
                for (size_t k = 0; k < len && n < FLAME_DEPTH_MAX; k++) {
                        const char *f = json_object_get_string(json_object_array_get_idx(stack, k));

                        snprintf(names[n], sizeof(names[n]), "%s", f ?: "[unknown]");
                        profile_strip_offset(names[n]);
                        frames[n] = names[n];
                        n++;
                }
                p->samples += c;
                if (len == 0)
                        p->no_callchain += c;
                r = flame_add(p->flame, frames, n, c);
                if (r == -ENOMEM)
                        return r;
                if (r == -E2BIG)
                        p->full += c;
        }
        return 0;
}

static void profile_send_flush(struct profile *p) {
        sigset_t all, old;

        /* Against the handler: the flush goes once. */
        sigfillset(&all);
        sigprocmask(SIG_BLOCK, &all, &old);
        profile_flush_ready = 1;
        if (profile_stopped && !profile_flush_sent) {
                profile_flush_sent = 1;
                (void) !write(p->fd, profile_flush, sizeof(profile_flush) - 1);
        }
        sigprocmask(SIG_SETMASK, &old, NULL);
}

static int on_aggregate_line(const char *line, size_t len, void *ud) {
        struct profile *p = ud;
        _cleanup_(json_object_putp) json_object *o = parse_line(line, len);
        const char *type = line_type(o);
        json_object *v = NULL;

        if (strcmp(type, EVMON_LINE_ERROR) == 0) {
                const char *error = json_object_object_get_ex(o, "error", &v) ? json_object_get_string(v) : NULL;

                if (!error)
                        error = "?";

                if (p->subscribing && strstr(error, "unknown message type")) {
                        p->fallback = true;     /* an evmond without aggregation */
                        return 1;
                }
                log_error("evmond says: %s", error);
                p->status = 1;
                return 1;
        }
        if (strcmp(type, "aggregating") == 0) {
                p->subscribing = false;
                profile_send_flush(p);
                return 0;
        }
        if (strcmp(type, "aggregate") == 0 && json_object_object_get_ex(o, "final", &v) &&
            json_object_get_boolean(v)) {
                int r = profile_fold_aggregate(p, o);

                return r < 0 ? r : 1;
        }
        return 0;
}

/* The aggregate request for EVENT: counts by comm and stack, one line when
 * asked (the flush at the end), the targets as subscribe takes them. */
static char *aggregate_request(const char *event) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();
        json_object *a, *value;
        char *s;

        if (!o)
                return NULL;
        json_object_object_add(o, "type", json_object_new_string("aggregate"));
        a = json_object_new_array();
        json_object_array_add(a, json_object_new_string(event));
        json_object_object_add(o, "events", a);
        a = json_object_new_array();
        json_object_array_add(a, json_object_new_string("comm"));
        json_object_array_add(a, json_object_new_string("stack"));
        json_object_object_add(o, "by", a);
        value = json_object_new_object();
        json_object_object_add(value, "op", json_object_new_string("count"));
        json_object_object_add(o, "value", value);
        json_object_object_add(o, "interval_ms", json_object_new_int(0));
        json_object_object_add(o, "cumulative", json_object_new_boolean(1));
        json_object_object_add(o, "top", json_object_new_int(0));
        json_object_object_add(o, "max_keys", json_object_new_int(65536));
        if (arg_profile_pid > 0) {
                a = json_object_new_array();
                json_object_array_add(a, json_object_new_int(arg_profile_pid));
                json_object_object_add(o, "pids", a);
        }
        if (arg_profile_cgroup) {
                a = json_object_new_array();
                json_object_array_add(a, json_object_new_string(arg_profile_cgroup));
                json_object_object_add(o, "cgroups", a);
        }
        if (asprintf(&s, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                                        JSON_C_TO_STRING_NOSLASHESCAPE)) < 0)
                return NULL;
        return s;
}

/* The answer to a runtime request: its "result" line. */
struct answer {
        const char *type;
        json_object *result;    /* the result line, taken */
        char *error;
};

static int on_answer_line(const char *line, size_t len, void *ud) {
        struct answer *a = ud;
        json_object *o = parse_line(line, len), *v;
        const char *type = line_type(o);

        if (strcmp(type, EVMON_LINE_ERROR) == 0 || strcmp(type, EVMON_LINE_RESULT) == 0) {
                if (json_object_object_get_ex(o, "error", &v) && json_object_get_string(v))
                        a->error = strdup(json_object_get_string(v));
                if (strcmp(type, EVMON_LINE_RESULT) == 0)
                        a->result = json_object_get(o);
                json_object_put(o);
                return 1;
        }
        json_object_put(o);
        return 0;
}

/* Sends the runtime request LINE on a connection of its own; 0 when
 * evmond did it (*ret_result: its result line, when RET_RESULT), 1 when
 * it said no (*ret_error: why), or the exit status of a failure said. */
static int profile_request(const struct jbuf *line, const char *what, json_object **ret_result, char **ret_error) {
        static const char *const none[] = { NULL };
        _cleanup_(jbuf_donep) struct jbuf both = {};
        _cleanup_(closep) int fd = -1;
        struct answer a = { .type = what };
        json_object *ok;
        int r;

        if (encode_subscribe(&both, none, 0) < 0 || jbuf_reserve(&both, line->len) < 0)
                return -log_oom_cli();
        jbuf_put_bytes(&both, line->data, line->len);
        fd = connect_daemon();
        if (fd < 0)
                return -1;
        if (send_line(fd, both.data, both.len, what) < 0)
                return -1;
        r = read_lines(fd, false, on_answer_line, &a);
        if (r <= 0)
                return -read_lines_failed(r, what);
        if (a.result && json_object_object_get_ex(a.result, "ok", &ok) && json_object_get_boolean(ok)) {
                if (ret_result)
                        *ret_result = a.result;
                else
                        json_object_put(a.result);
                free(a.error);
                return 0;
        }
        json_object_put(a.result);
        *ret_error = a.error ?: strdup("no reason given");
        return 1;
}

/* The events evmond serves, from its hello: NULL-terminated, the caller's. */
static int on_hello_line(const char *line, size_t len, void *ud) {
        json_object **hello = ud;

        *hello = parse_line(line, len);
        return 1;
}

/* Which served event to sample when none is named: *RET one of
 * default_events, or NULL. 0, or -1 when evmond could not be asked
 * (said). */
static int served_default(char **ret) {
        _cleanup_(json_object_putp) json_object *hello = NULL;
        _cleanup_(closep) int fd = connect_daemon();
        json_object *events;
        int r;

        *ret = NULL;
        if (fd < 0)
                return -1;
        r = read_lines(fd, false, on_hello_line, &hello);
        if (r <= 0) {
                (void) read_lines_failed(r, NULL);
                return -1;
        }
        if (!hello || !json_object_object_get_ex(hello, "events", &events) ||
            !json_object_is_type(events, json_type_array))
                return 0;
        for (size_t d = 0; d < ELEMENTSOF(default_events); d++)
                for (size_t i = 0; i < json_object_array_length(events); i++)
                        if (strcmp(json_object_get_string(json_object_array_get_idx(events, i)) ?: "",
                                   default_events[d]) == 0) {
                                *ret = strdup(default_events[d]);
                                return *ret ? 0 : -log_oom_cli();
                        }
        return 0;
}

/* Adds the session's own sampling event; its name, or NULL after saying
 * why not (*ret_status the exit status). */
static char *session_add(int *ret_status) {
        _cleanup_(jbuf_donep) struct jbuf line = {};
        _cleanup_(json_object_putp) json_object *result = NULL;
        _cleanup_(freep) char *entry = NULL, *error = NULL;
        json_object *events;
        int r;

        *ret_status = 1;
        if (asprintf(&entry, "{\"software\":\"cpu-clock\",\"freq\":%u,\"callchain\":{},\"symbols\":true,"
                     "\"name\":\"evmonctl-profile-%d\"}", arg_freq ?: SESSION_FREQ, (int) getpid()) < 0 ||
            encode_control(&line, EVMON_REQUEST_ADD, entry, NULL, NULL, NULL, 0) < 0) {
                *ret_status = log_oom_cli();
                return NULL;
        }
        r = profile_request(&line, EVMON_REQUEST_ADD, &result, &error);
        if (r < 0) {
                *ret_status = -r;
                return NULL;
        }
        if (r > 0) {
                log_error("profile: evmond at %s serves no sampling event (%s, ...) and did not add one for "
                          "this session: %s. Add one to its config (\"events\": [{\"software\": \"cpu-clock\", "
                          "\"freq\": 999, \"callchain\": {}, \"symbols\": true}]) and reload it, or run "
                          "profile as root or a member of socket.admin_group, or name a served event with "
                          "callchains with --event",
                          socket_path(), default_events[0], error);
                return NULL;
        }
        if (!json_object_object_get_ex(result, "events", &events) || !json_object_is_type(events, json_type_array) ||
            json_object_array_length(events) < 1) {
                log_error("profile: evmond at %s added the session's event but did not name it", socket_path());
                return NULL;
        }
        return strdup(json_object_get_string(json_object_array_get_idx(events, 0)) ?: "?");
}

static void session_remove(const char *event) {
        _cleanup_(jbuf_donep) struct jbuf line = {};
        _cleanup_(freep) char *error = NULL;
        int r;

        if (encode_control(&line, EVMON_REQUEST_REMOVE, NULL, event, NULL, NULL, 0) < 0)
                return (void) log_oom_cli();
        r = profile_request(&line, EVMON_REQUEST_REMOVE, NULL, &error);
        if (r > 0)
                log_error("profile: evmond at %s did not remove the session's event %s: %s; "
                          "`evmonctl remove %s` does", socket_path(), event, error, event);
}

/* Writes the folded stacks of F in FORMAT to arg_output; the exit status. */
int profile_write(const struct flame *f, const char *format, const char *title, const char *subtitle,
                  int64_t time_ns, int64_t duration_ns) {
        _cleanup_(fclosep) FILE *file = NULL;
        FILE *out = stdout;
        int r;

        if (arg_output && strcmp(arg_output, "-") != 0) {
                int fd = create_output(arg_output, 0644);

                file = fd >= 0 ? fdopen(fd, "we") : NULL;
                if (!file) {
                        if (fd >= 0) {
                                log_error_errno(-errno, "Cannot write %s: %m", arg_output);
                                close(fd);
                        }
                        return 1;
                }
                out = file;
        } else if (strcmp(format, "pprof") == 0 && isatty(STDOUT_FILENO)) {
                log_error("--format pprof writes gzipped protobuf, not for a terminal: give -o FILE");
                return 2;
        }
        if (strcmp(format, "pprof") == 0)
                r = profile_write_pprof(f, out, time_ns, duration_ns);
        else if (strcmp(format, "svg") == 0) {
                const struct flame_svg_opts o = { .title = title, .subtitle = subtitle };

                r = flame_write_svg(f, &o, out);
        } else
                r = flame_write_folded(f, out);
        if (r == 0 && fflush(out) == EOF)
                r = errno > 0 ? -errno : -EIO;
        if (r < 0) {
                if (out == stdout)
                        return stdout_failed(-r);
                log_error("cannot write %s: %s", arg_output, strerror(-r));
                return 1;
        }
        if (file) {
                r = fclose(TAKE_PTR(file));
                if (r != 0) {
                        log_error("cannot write %s: %s", arg_output, strerror(errno));
                        return 1;
                }
        }
        return 0;
}

int profile_check_format(const char *format) {
        if (strcmp(format, "folded") == 0 || strcmp(format, "svg") == 0 || strcmp(format, "pprof") == 0)
                return 0;
        log_error("--format %s: use folded (the default), svg or pprof", format);
        return 2;
}

int cmd_profile(void) {
        _cleanup_(flame_freep) struct flame *flame = NULL;
        _cleanup_(jbuf_donep) struct jbuf line = {};
        _cleanup_(freep) char *event = NULL, *subtitle = NULL;
        _cleanup_(closep) int fd = -1;
        const char *format = arg_format ?: "folded";
        const char *cgroups[1] = { arg_profile_cgroup };
        struct profile p = {};
        bool added = false;
        struct sigaction sa = { .sa_handler = profile_stop };
        struct timeval t0, t1;
        int64_t start_ns;
        int r, status;

        r = profile_check_format(format);
        if (r != 0)
                return r;
        if (flame_new(&flame) < 0)
                return log_oom_cli();
        /* From here on a Ctrl-C ends the profile with what it has and
         * removes an event added for it. */
        sigemptyset(&sa.sa_mask);
        (void) sigaction(SIGINT, &sa, NULL);
        (void) sigaction(SIGTERM, &sa, NULL);
        (void) sigaction(SIGALRM, &sa, NULL);
        if (arg_event)
                event = strdup(arg_event);
        else if (arg_freq == 0 && served_default(&event) < 0)
                return 1;
        if (!event && !arg_event) {
                event = session_add(&status);
                if (!event)
                        return status;
                added = true;
        }
        if (!event)
                return log_oom_cli();

        _cleanup_(freep) char *request = aggregate_request(event);
        if (!request) {
                status = log_oom_cli();
                goto finish;
        }
        if (arg_seconds > 0) {
                struct itimerval it = {
                        .it_value = {
                                .tv_sec = (time_t) arg_seconds,
                                .tv_usec = (suseconds_t) ((arg_seconds - (double) (time_t) arg_seconds) * 1e6),
                        },
                };

                if (it.it_value.tv_sec == 0 && it.it_value.tv_usec == 0)
                        it.it_value.tv_usec = 1;
                (void) setitimer(ITIMER_REAL, &it, NULL);
        } else if (isatty(STDERR_FILENO))
                log_info("profiling %s%s; Ctrl-C ends it", event, added ? " (added for this session)" : "");
        gettimeofday(&t0, NULL);
        start_ns = (int64_t) t0.tv_sec * 1000000000 + (int64_t) t0.tv_usec * 1000;

        /* evmond's aggregation first; a line per sample where it has none. */
        for (int aggregate = 1; aggregate >= 0; aggregate--) {
                const char *events[] = { event };

                line.len = 0;
                if (!aggregate && encode_subscribe_targets(&line, events, 1,
                                                           arg_profile_pid > 0 ? &arg_profile_pid : NULL,
                                                           arg_profile_pid > 0 ? 1 : 0,
                                                           arg_profile_cgroup ? cgroups : NULL,
                                                           arg_profile_cgroup ? 1 : 0) < 0) {
                        status = log_oom_cli();
                        goto finish;
                }
                fd = safe_close(fd);
                fd = connect_daemon();
                if (fd < 0) {
                        status = 1;
                        goto finish;
                }
                if (aggregate ? send_line(fd, request, strlen(request), "aggregate") < 0 :
                                send_line(fd, line.data, line.len, EVMON_REQUEST_SUBSCRIBE) < 0) {
                        status = 1;
                        goto finish;
                }
                p = (struct profile) { .event = event, .fd = fd, .subscribing = true, .flame = flame };
                profile_aggregating = aggregate;
                profile_fd = fd;
                if (profile_stopped && !aggregate) {
                        status = 0;
                        goto finish;
                }
                r = read_lines(fd, false, aggregate ? on_aggregate_line : on_profile_line, &p);
                profile_fd = -1;
                if (!p.fallback) {
                        log_debug("profile: %s", aggregate ? "evmond folded the samples (aggregate, key stack)" :
                                                             "evmonctl folded the samples evmond sent");
                        break;
                }
        }
        gettimeofday(&t1, NULL);
        if (r == -ENOMEM) {
                status = log_oom_cli();
                goto finish;
        }
        if (profile_aggregating ? r != 1 || p.status != 0 :
                                  r > 0 || (r < 0 && !(profile_stopped && r == -ECONNRESET))) {
                status = r > 0 ? p.status ?: 1 : read_lines_failed(r, NULL);
                goto finish;
        }
        if (p.subscribing && !profile_aggregating) {
                log_error("profile: evmond at %s did not take the subscription to %s before the end",
                          socket_path(), event);
                status = 1;
                goto finish;
        }
        if (p.samples == 0)
                log_error("profile: no sample of %s came%s%s; is the target busy on a CPU?", event,
                          arg_profile_pid > 0 || arg_profile_cgroup ? " from the target" : "",
                          arg_seconds > 0 ? " in the time given" : "");
        else if (p.no_callchain == p.samples)
                log_error("profile: %s carries no callchain: each stack is the sampled address alone. "
                          "Give its config entry \"callchain\": {} (and \"symbols\": true for names)", event);
        if (p.lost > 0 || p.dropped > 0)
                log_error("profile: %" PRIu64 " samples lost in the kernel's rings, %" PRIu64 " dropped by "
                          "evmond for this client: the profile leaves them out", p.lost, p.dropped);
        if (p.full > 0)
                log_error("profile: %" PRIu64 " samples left out: more than %u distinct frames", p.full,
                          FLAME_NODES_MAX);
        if (p.malformed > 0)
                log_error("profile: %" PRIu64 " event lines from evmond were not well-formed JSON: left out",
                          p.malformed);
        if (asprintf(&subtitle, "evmonctl profile: %s, %" PRIu64 " samples in %.1f s%s", event, p.samples,
                     (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_usec - t0.tv_usec) / 1e6,
                     p.lost + p.dropped > 0 ? ", some lost" : "") < 0) {
                status = log_oom_cli();
                goto finish;
        }
        status = profile_write(flame, format, "Flame Graph", subtitle, start_ns,
                               (int64_t) (t1.tv_sec - t0.tv_sec) * 1000000000 +
                                       (int64_t) (t1.tv_usec - t0.tv_usec) * 1000);
finish:
        if (added)
                session_remove(event);
        return status;
}
