/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* evmonctl count, hist and latency: one aggregate request to evmond
 * (doc/protocol.md), its "aggregate" lines printed as bpftrace prints its
 * maps: `@[bash]: 12`, smallest first, and histograms with a bar per
 * bucket. evmond folds the events; nothing per event comes here. */

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "evmon/cleanup.h"
#include "evmon/human.h"
#include "evmon/jsonc.h"
#include "evmon/log.h"
#include "evmon/protocol.h"

#include "cli.h"

const char *arg_by[ARG_BY_MAX];
size_t n_by;
const char *arg_linear;
const char *arg_match;
double arg_interval;
double arg_seconds;
long arg_top = -1;

/* What a Ctrl-C, or the end of --seconds, asks of evmond: its handler
 * writes it, and the answer ends the command. */
static const char flush_final[] = "{\"type\":\"flush\",\"final\":true}\n";
static volatile sig_atomic_t agg_fd = -1;
static volatile sig_atomic_t flushed;
static int64_t linear_step;     /* --linear's, for the empty buckets between */

static void on_stop(int sig) {
        int saved = errno;

        if (flushed || agg_fd < 0) {
                /* A second Ctrl-C: no waiting for evmond's answer. */
                signal(sig, SIG_DFL);
                raise(sig);
        }
        flushed = 1;
        (void) !write(agg_fd, flush_final, sizeof(flush_final) - 1);
        errno = saved;
}

struct agg_print {
        bool json;
        bool hist;              /* entries carry buckets */
        bool interval;          /* lines come each interval: a time before each */
        int status;             /* what the command exits with */
};

/* A string from evmond's line, escaped for the terminal: comms and field
 * values are anyone's to choose. */
static void put_str(FILE *f, json_object *v) {
        if (json_object_is_type(v, json_type_string))
                human_put_text(f, json_object_get_string(v), (size_t) json_object_get_string_len(v));
        else if (json_object_is_type(v, json_type_null))
                fputs("?", f);
        else {
                const char *t = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
                human_put_text(f, t, strlen(t));
        }
}

/* "@[bash, 12]" as bpftrace writes a map key; a stack as its frames, leaf
 * first, one a line. */
static void put_key(FILE *f, json_object *key) {
        size_t i = 0;

        if (!key || !json_object_is_type(key, json_type_object) || json_object_object_length(key) == 0) {
                fputs("@", f);
                return;
        }
        fputs("@[", f);
        json_object_object_foreach(key, name, v) {
                (void) name;
                if (i++ > 0)
                        fputs(", ", f);
                if (json_object_is_type(v, json_type_array)) {
                        size_t n = json_object_array_length(v);

                        fputc('\n', f);
                        for (size_t j = n; j-- > 0;) {
                                fputs("        ", f);
                                put_str(f, json_object_array_get_idx(v, j));
                                fputc('\n', f);
                        }
                } else
                        put_str(f, v);
        }
        fputs("]", f);
}

static int64_t get_i64(json_object *o, const char *key, bool *ret_null) {
        json_object *v;

        *ret_null = !json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null);
        return *ret_null ? 0 : json_object_get_int64(v);
}

static uint64_t get_u64(json_object *o, const char *key) {
        json_object *v;

        return json_object_object_get_ex(o, key, &v) ? json_object_get_uint64(v) : 0;
}

/* A bucket bound as bpftrace writes it: 1024-based K, M, G, ... suffixes
 * for a power of two. */
static void format_bound(char *buf, size_t size, uint64_t v, bool suffix) {
        static const char suffixes[] = "KMGTPE";
        size_t k = 0;

        if (suffix)
                while (v >= 1024 && (v % 1024) == 0 && k < sizeof(suffixes) - 1) {
                        v /= 1024;
                        k++;
                }
        if (k > 0)
                snprintf(buf, size, "%" PRIu64 "%c", v, suffixes[k - 1]);
        else
                snprintf(buf, size, "%" PRIu64, v);
}

static void format_signed(char *buf, size_t size, int64_t v) {
        snprintf(buf, size, "%" PRId64, v);
}

#define BAR_WIDTH 52

static void put_hist_row(FILE *f, const char *label, uint64_t count, uint64_t max) {
        size_t bar = max ? (size_t) ((double) count * BAR_WIDTH / (double) max) : 0;

        fprintf(f, "%-20s %8" PRIu64 " |", label, count);
        for (size_t i = 0; i < BAR_WIDTH; i++)
                fputc(i < bar ? '@' : ' ', f);
        fputs("|\n", f);
}

/* Buckets as bpftrace prints them: every bucket from the lowest to the
 * highest that holds something, empty ones included. */
static void put_buckets(FILE *f, json_object *buckets, bool linear, int64_t step) {
        size_t n = buckets ? json_object_array_length(buckets) : 0;
        uint64_t max = 0;

        for (size_t i = 0; i < n; i++) {
                uint64_t c = get_u64(json_object_array_get_idx(buckets, i), "count");
                if (c > max)
                        max = c;
        }
        for (size_t i = 0; i < n; i++) {
                json_object *b = json_object_array_get_idx(buckets, i);
                bool low_null, high_null;
                int64_t low = get_i64(b, "low", &low_null), high = get_i64(b, "high", &high_null);
                uint64_t c = get_u64(b, "count");
                char label[96], lo[32], hi[32];

                if (low_null) {
                        if (linear)
                                format_signed(hi, sizeof(hi), high);
                        else
                                snprintf(hi, sizeof(hi), "0");
                        snprintf(label, sizeof(label), "(..., %s)", hi);
                } else if (high_null) {
                        format_signed(lo, sizeof(lo), low);
                        snprintf(label, sizeof(label), "[%s, ...)", lo);
                } else if (!linear && high - low == 1 && low <= 1)
                        snprintf(label, sizeof(label), "[%" PRId64 "]", low);
                else {
                        if (linear) {
                                format_signed(lo, sizeof(lo), low);
                                format_signed(hi, sizeof(hi), high);
                        } else {
                                format_bound(lo, sizeof(lo), (uint64_t) low, true);
                                format_bound(hi, sizeof(hi), get_u64(b, "high"), true);
                        }
                        snprintf(label, sizeof(label), "[%s, %s)", lo, hi);
                }
                put_hist_row(f, label, c, max);

                /* The empty buckets up to the next one. */
                if (i + 1 < n && !high_null) {
                        json_object *nb = json_object_array_get_idx(buckets, i + 1);
                        bool nl;
                        int64_t next_low = get_i64(nb, "low", &nl);
                        uint64_t h = low_null ? 0 : (uint64_t) high;

                        if (linear) {
                                for (int64_t x = high; !nl && step > 0 && x < next_low; x += step) {
                                        format_signed(lo, sizeof(lo), x);
                                        format_signed(hi, sizeof(hi), x + step);
                                        snprintf(label, sizeof(label), "[%s, %s)", lo, hi);
                                        put_hist_row(f, label, 0, max);
                                }
                        } else
                                for (; !nl && h < (uint64_t) next_low && h > 0; h *= 2) {
                                        if (h == 1)
                                                snprintf(label, sizeof(label), "[1]");
                                        else {
                                                format_bound(lo, sizeof(lo), h, true);
                                                format_bound(hi, sizeof(hi), h * 2, true);
                                                snprintf(label, sizeof(label), "[%s, %s)", lo, hi);
                                        }
                                        put_hist_row(f, label, 0, max);
                                }
                }
        }
}

/* Entries smallest first, as bpftrace prints a map at its end: the
 * biggest is the last line a person sees. */
static int cmp_entry(const void *a, const void *b) {
        json_object *x = *(json_object *const *) a, *y = *(json_object *const *) b;
        json_object *vx, *vy;
        int64_t ix, iy;

        if (json_object_object_get_ex(x, "value", &vx) && json_object_object_get_ex(y, "value", &vy)) {
                ix = json_object_get_int64(vx);
                iy = json_object_get_int64(vy);
        } else {
                ix = (int64_t) get_u64(x, "count");
                iy = (int64_t) get_u64(y, "count");
        }
        return ix < iy ? -1 : ix > iy;
}

static void print_aggregate(struct agg_print *p, json_object *o) {
        json_object *entries = NULL, *op;
        _cleanup_(freep) json_object **sorted = NULL;
        const char *ops = "";
        size_t n;
        uint64_t v;

        if (json_object_object_get_ex(o, "op", &op))
                ops = json_object_get_string(op);
        if (p->interval) {
                json_object *t;
                if (json_object_object_get_ex(o, "time", &t)) {
                        const char *s = json_object_get_string(t);
                        /* "2026-…T04:37:03.…Z": the clock time, as bpftrace's time(). */
                        const char *tp = strchr(s, 'T');
                        fprintf(stdout, "%.8s\n", tp ? tp + 1 : s);
                }
        }
        (void) json_object_object_get_ex(o, "entries", &entries);
        n = entries && json_object_is_type(entries, json_type_array) ? json_object_array_length(entries) : 0;
        sorted = calloc(n ? n : 1, sizeof(*sorted));
        if (!sorted)
                return;
        for (size_t i = 0; i < n; i++)
                sorted[i] = json_object_array_get_idx(entries, i);
        qsort(sorted, n, sizeof(*sorted), cmp_entry);
        for (size_t i = 0; i < n; i++) {
                json_object *e = sorted[i], *key = NULL, *val, *buckets = NULL;

                (void) json_object_object_get_ex(e, "key", &key);
                if (json_object_object_get_ex(e, "buckets", &buckets)) {
                        put_key(stdout, key);
                        fputs(":\n", stdout);
                        put_buckets(stdout, buckets, strcmp(ops, "lhist") == 0, linear_step);
                        fputc('\n', stdout);
                        continue;
                }
                put_key(stdout, key);
                if (json_object_object_get_ex(e, "value", &val))
                        fprintf(stdout, ": %" PRId64 "\n", json_object_get_int64(val));
                else
                        fprintf(stdout, ": %" PRIu64 "\n", get_u64(e, "count"));
        }
        if (n == 0 && !p->interval)
                fputs("(no events)\n", stderr);
        /* What could not be counted is said, never left out. */
        if ((v = get_u64(o, "lost")) > 0)
                fprintf(stderr, "evmonctl: %" PRIu64 " events lost in the kernel in this window (the rings were full)\n", v);
        if ((v = get_u64(o, "keys_dropped")) > 0)
                fprintf(stderr, "evmonctl: %" PRIu64 " events not counted: more keys than --max-keys/max_keys\n", v);
        if ((v = get_u64(o, "unmatched")) > 0)
                fprintf(stderr, "evmonctl: %" PRIu64 " end events had no start seen (begun before evmonctl started)\n", v);
        if (p->interval)
                fputc('\n', stdout);
}

static int on_line(const char *line, size_t len, void *ud) {
        struct agg_print *p = ud;
        _cleanup_(json_object_putp) json_object *o = parse_line(line, len);
        const char *type = line_type(o);
        json_object *v;

        if (strcmp(type, EVMON_LINE_ERROR) == 0) {
                const char *s = json_object_object_get_ex(o, "error", &v) ? json_object_get_string(v) : "?";

                fputs("evmonctl: evmond refused the request: ", stderr);
                human_put_text(stderr, s, strlen(s));
                fputc('\n', stderr);
                p->status = 1;
                return 1;
        }
        if (strcmp(type, "aggregating") == 0) {
                if (p->json)
                        human_put_json(stdout, line, len);
                else if (isatty(STDERR_FILENO))
                        fprintf(stderr, "Aggregating in evmond%s. Hit Ctrl-C to end.\n",
                                arg_seconds > 0 ? " (--seconds)" : "");
                return 0;
        }
        if (strcmp(type, "aggregate") != 0)
                return 0;       /* schema lines before the request took effect */
        if (p->json)
                human_put_json(stdout, line, len);
        else
                print_aggregate(p, o);
        if (fflush(stdout) == EOF)
                return -EIO;
        if (json_object_object_get_ex(o, "final", &v) && json_object_get_boolean(v))
                return 2;
        return 0;
}

/* "MIN,MAX,STEP" of --linear. */
static int parse_linear(const char *s, int64_t *min, int64_t *max, int64_t *step) {
        char end;

        if (sscanf(s, "%" SCNd64 ",%" SCNd64 ",%" SCNd64 "%c", min, max, step, &end) != 3 || *step <= 0 || *max <= *min) {
                log_error("--linear takes MIN,MAX,STEP with MIN < MAX and STEP > 0 (as bpftrace's lhist()), not "
                          "\"%s\"; try 'evmonctl --help'.", s);
                return -EINVAL;
        }
        return 0;
}

int agg_request_narrow(json_object *req, const char *what) {
        char client[32];

        /* --container, --namespace, --comm, --cgroup and --pid narrow what
         * is folded, as watch's. */
        for (int k = 0; k < 4; k++) {
                static const char *const keys[] = { "containers", "namespaces", "comms", "cgroups" };
                size_t nl = k == 0 ? n_containers : k == 1 ? n_namespaces : k == 2 ? n_comms : n_cgroups;
                const char *const *l = k == 0 ? arg_containers : k == 1 ? arg_namespaces : k == 2 ? arg_comms : arg_cgroups;
                json_object *a;

                if (nl == 0)
                        continue;
                a = json_object_new_array();
                if (!a)
                        return -ENOMEM;
                for (size_t i = 0; i < nl; i++)
                        json_object_array_add(a, json_object_new_string(l[i]));
                json_object_object_add(req, keys[k], a);
        }
        if (n_pids > 0) {
                json_object *a = json_object_new_array();

                if (!a)
                        return -ENOMEM;
                for (size_t i = 0; i < n_pids; i++)
                        json_object_array_add(a, json_object_new_int(arg_pids[i]));
                json_object_object_add(req, "pids", a);
        }
        /* --filter and --self as watch's: evmond judges each event before
         * it is folded. */
        if (arg_filter)
                json_object_object_add(req, "filter", json_object_new_string(arg_filter));
        if (arg_self)
                json_object_object_add(req, "self", json_object_new_boolean(true));
        /* Its name in evmond's metrics, as watch names itself. */
        snprintf(client, sizeof(client), "evmonctl-%s", what);
        json_object_object_add(req, "client", json_object_new_string(client));
        return 0;
}

int cmd_aggregate(const char *what, char **args, int n) {
        _cleanup_(json_object_putp) json_object *req = json_object_new_object();
        _cleanup_(jbuf_donep) struct jbuf line = {};
        _cleanup_(closep) int fd = -1;
        struct agg_print p = {
                .json = arg_json > 0 || (arg_json < 0 && !isatty(STDOUT_FILENO)),
                .interval = arg_interval > 0,
        };
        json_object *events, *by, *value;
        struct sigaction sa = { .sa_handler = on_stop };
        int r;

        if (!req)
                return log_oom_cli();
        events = json_object_new_array();
        by = json_object_new_array();
        value = json_object_new_object();
        if (!events || !by || !value)
                return log_oom_cli();
        json_object_object_add(req, "type", json_object_new_string(EVMON_REQUEST_AGGREGATE));
        if (strcmp(what, "count") == 0) {
                for (int i = 0; i < n; i++)
                        json_object_array_add(events, json_object_new_string(args[i]));
                json_object_object_add(value, "op", json_object_new_string("count"));
                if (arg_linear || arg_match) {
                        log_error("count takes no --%s; try 'evmonctl --help'.", arg_linear ? "linear" : "match");
                        return 2;
                }
        } else if (strcmp(what, "hist") == 0) {
                json_object_array_add(events, json_object_new_string(args[0]));
                json_object_object_add(value, "field", json_object_new_string(args[1]));
                if (arg_linear) {
                        int64_t min, max, step;

                        if (parse_linear(arg_linear, &min, &max, &step) < 0)
                                return 2;
                        json_object_object_add(value, "op", json_object_new_string("lhist"));
                        json_object_object_add(value, "min", json_object_new_int64(min));
                        json_object_object_add(value, "max", json_object_new_int64(max));
                        json_object_object_add(value, "step", json_object_new_int64(step));
                        linear_step = step;
                } else
                        json_object_object_add(value, "op", json_object_new_string("hist"));
                if (arg_match) {
                        log_error("hist takes no --match; try 'evmonctl --help'.");
                        return 2;
                }
                p.hist = true;
        } else {
                json_object_object_add(value, "op", json_object_new_string("latency"));
                json_object_object_add(value, "start", json_object_new_string(args[0]));
                json_object_object_add(value, "end", json_object_new_string(args[1]));
                json_object_object_add(value, "match", json_object_new_string(arg_match ?: "tid"));
                if (arg_linear) {
                        log_error("latency takes no --linear; try 'evmonctl --help'.");
                        return 2;
                }
                json_object_put(events);
                events = NULL;
                p.hist = true;
        }
        for (size_t i = 0; i < n_by; i++)
                json_object_array_add(by, json_object_new_string(arg_by[i]));
        if (events)
                json_object_object_add(req, "events", events);
        json_object_object_add(req, "by", by);
        json_object_object_add(req, "value", value);
        json_object_object_add(req, "interval_ms", json_object_new_int64((int64_t) (arg_interval * 1000)));
        if (arg_top >= 0)
                json_object_object_add(req, "top", json_object_new_int64(arg_top));
        if (agg_request_narrow(req, what) < 0)
                return log_oom_cli();
        if (jsonc_append_line(&line, req) < 0)
                return log_oom_cli();
        r = request_too_long(&line, what);
        if (r != 0)
                return r;

        fd = connect_daemon();
        if (fd < 0)
                return 1;
        r = send_line(fd, line.data, line.len, what);
        if (r < 0)
                return 1;
        /* From here a Ctrl-C asks evmond for the last window, and its
         * answer is printed: the request is out, so the flush comes after. */
        agg_fd = fd;
        sigemptyset(&sa.sa_mask);
        (void) sigaction(SIGINT, &sa, NULL);
        (void) sigaction(SIGTERM, &sa, NULL);
        (void) sigaction(SIGALRM, &sa, NULL);
        if (arg_seconds > 0) {
                struct itimerval it = { .it_value = { .tv_sec = (time_t) arg_seconds,
                                                      .tv_usec = (suseconds_t) ((arg_seconds - (double) (time_t) arg_seconds) * 1e6) } };
                (void) setitimer(ITIMER_REAL, &it, NULL);
        }
        r = read_lines(fd, true, on_line, &p);
        agg_fd = -1;
        if (r == 2 || r == 1)
                return stdout_done(p.status);
        if (r == -EIO)
                return stdout_failed(EIO);
        return read_lines_failed(r, what);
}
