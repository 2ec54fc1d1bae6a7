/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * drain: an evmond client that reads its socket as fast as it can and counts
 * what it got, for benchmarks.
 *
 *   drain --socket PATH [--pids P[,P...]] [--quiet-ms MS] [--start-timeout S]
 *         [--latency] [--unique] [--status]
 *
 * It reads in big chunks and looks at each line only as far as it must: the
 * "type" (event, lost, dropped, hello, status, ...), and for events the
 * "ts", "pid" and "tid" members.  It prints {"ready":true} once the hello
 * line is in, and one JSON result line when the stream has been quiet for
 * --quiet-ms after the first event (or on SIGINT/SIGTERM).
 *
 * --latency compares each matching event's "ts" with this process's
 * CLOCK_MONOTONIC time when the read() that carried it returned (evmond's
 * default clock is CLOCK_MONOTONIC): p50, p99, max.
 * --unique keeps (tid, ts) of matching events and counts distinct pairs at
 * the end (after the CPU time is taken, so it does not count as client work).
 * --status asks evmond for {"type":"status"} before exiting and embeds it.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "evmon/clock.h"
#include "evmon/connect.h"

#define READ_SIZE (4u << 20)
#define MAX_PIDS 64

struct pair {
        uint64_t ts;
        uint64_t tid;
};

struct u64_array {
        uint64_t *v;
        size_t n, cap;
};

struct pair_array {
        struct pair *v;
        size_t n, cap;
};

struct stats {
        uint64_t bytes, lines;
        uint64_t events, matched;
        uint64_t lost, lost_lines;
        uint64_t dropped, dropped_lines;
        uint64_t hello, errors, other, unparsed;
        uint64_t per_pid[MAX_PIDS];
        uint64_t first_event_ns, last_event_ns;
        uint64_t first_ts, last_ts;
        char *status;                   /* the status reply line, without '\n' */
};

struct options {
        const char *socket;
        long pids[MAX_PIDS];
        size_t n_pids;
        unsigned quiet_ms;
        double start_timeout;
        bool latency;
        bool unique;
        bool status;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig) {
        stop = 1;
}

static int u64_push(struct u64_array *a, uint64_t v) {
        if (a->n == a->cap) {
                size_t cap = a->cap ? a->cap * 2 : 65536;
                uint64_t *p = realloc(a->v, cap * sizeof(*p));
                if (!p)
                        return -ENOMEM;
                a->v = p;
                a->cap = cap;
        }
        a->v[a->n++] = v;
        return 0;
}

static int pair_push(struct pair_array *a, uint64_t tid, uint64_t ts) {
        if (a->n == a->cap) {
                size_t cap = a->cap ? a->cap * 2 : 65536;
                struct pair *p = realloc(a->v, cap * sizeof(*p));
                if (!p)
                        return -ENOMEM;
                a->v = p;
                a->cap = cap;
        }
        a->v[a->n++] = (struct pair) { .ts = ts, .tid = tid };
        return 0;
}

static int cmp_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
        return x < y ? -1 : x > y;
}

static int cmp_pair(const void *a, const void *b) {
        const struct pair *x = a, *y = b;

        if (x->ts != y->ts)
                return x->ts < y->ts ? -1 : 1;
        return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* Finds KEY (with its quotes and colon, e.g. "\"pid\":") in [p, end) and
 * parses the integer after it; returns the position after the number, or
 * NULL when the key is absent or not followed by digits. */
static const char *find_u64(const char *p, const char *end, const char *key, size_t key_len, int64_t *ret) {
        const char *k = memmem(p, (size_t) (end - p), key, key_len);
        bool neg = false;
        uint64_t v = 0;

        if (!k)
                return NULL;
        p = k + key_len;
        if (p < end && *p == ' ')
                p++;
        if (p < end && *p == '-') {
                neg = true;
                p++;
        }
        if (p >= end || *p < '0' || *p > '9')
                return NULL;
        while (p < end && *p >= '0' && *p <= '9')
                v = v * 10 + (uint64_t) (*p++ - '0');
        *ret = neg ? -(int64_t) v : (int64_t) v;
        return p;
}

#define KEY(s) s, sizeof(s) - 1

/* The line's "type" value, from the first few bytes: evmond writes it first. */
static bool line_type(const char *p, const char *end, const char **ret, size_t *ret_len) {
        const char *lim = end - p > 48 ? p + 48 : end;
        const char *k = memmem(p, (size_t) (lim - p), KEY("\"type\":"));
        const char *q;

        if (!k)
                return false;
        k += sizeof("\"type\":") - 1;
        while (k < lim && *k == ' ')
                k++;
        if (k >= lim || *k != '"')
                return false;
        k++;
        q = memchr(k, '"', (size_t) (end - k));
        if (!q)
                return false;
        *ret = k;
        *ret_len = (size_t) (q - k);
        return true;
}

static int pid_index(const struct options *o, int64_t pid) {
        for (size_t i = 0; i < o->n_pids; i++)
                if (o->pids[i] == pid)
                        return (int) i;
        return -1;
}

static int handle_line(const struct options *o, struct stats *st, struct u64_array *lat, struct pair_array *pairs,
                       const char *p, const char *end, uint64_t recv_ns) {
        const char *type;
        size_t type_len;
        int64_t ts, pid, tid, v;
        const char *q;

        st->lines++;
        if (!line_type(p, end, &type, &type_len)) {
                st->unparsed++;
                return 0;
        }
        if (type_len == 5 && !memcmp(type, "event", 5)) {
                bool match;

                st->events++;
                q = find_u64(type, end, KEY("\"ts\":"), &ts);
                if (q)
                        q = find_u64(q, end, KEY("\"pid\":"), &pid);
                if (q)
                        q = find_u64(q, end, KEY("\"tid\":"), &tid);
                if (!q) {
                        st->unparsed++;
                        return 0;
                }
                if (st->first_event_ns == 0) {
                        st->first_event_ns = recv_ns;
                        st->first_ts = (uint64_t) ts;
                }
                st->last_event_ns = recv_ns;
                st->last_ts = (uint64_t) ts;
                if (o->n_pids > 0) {
                        int i = pid_index(o, pid);
                        match = i >= 0;
                        if (match)
                                st->per_pid[i]++;
                } else
                        match = true;
                if (!match)
                        return 0;
                st->matched++;
                if (o->latency && u64_push(lat, recv_ns - (uint64_t) ts) < 0)
                        return -ENOMEM;
                if (o->unique && pair_push(pairs, (uint64_t) tid, (uint64_t) ts) < 0)
                        return -ENOMEM;
        } else if (type_len == 4 && !memcmp(type, "lost", 4)) {
                st->lost_lines++;
                if (find_u64(type, end, KEY("\"count\":"), &v))
                        st->lost += (uint64_t) v;
        } else if (type_len == 7 && !memcmp(type, "dropped", 7)) {
                st->dropped_lines++;
                if (find_u64(type, end, KEY("\"count\":"), &v))
                        st->dropped += (uint64_t) v;
                /* The kernel's losses whose "lost" lines were dropped
                 * with the rest: "count" leaves those lines out. */
                if (find_u64(type, end, KEY("\"lost\":"), &v))
                        st->lost += (uint64_t) v;
        } else if (type_len == 5 && !memcmp(type, "hello", 5))
                st->hello++;
        else if (type_len == 6 && !memcmp(type, "status", 6)) {
                free(st->status);
                st->status = strndup(p, (size_t) (end - p));
        } else if (type_len == 5 && !memcmp(type, "error", 5)) {
                st->errors++;
                fprintf(stderr, "drain: evmond says: %.*s\n", (int) (end - p), p);
        } else
                st->other++;
        return 0;
}

static int connect_socket(const char *path, double timeout_s) {
        uint64_t deadline = now_ns(CLOCK_MONOTONIC) + (uint64_t) (timeout_s * 1e9);

        for (;;) {
                int fd = evmon_connect(path);
                if (fd >= 0)
                        return fd;
                if (fd == -ENAMETOOLONG) {
                        fprintf(stderr, "drain: socket path too long: %s\n", path);
                        return fd;
                }
                if ((fd != -ENOENT && fd != -ECONNREFUSED) || now_ns(CLOCK_MONOTONIC) > deadline) {
                        fprintf(stderr, "drain: connect %s: %s\n", path, strerror(-fd));
                        return fd;
                }
                usleep(20000);
        }
}

static void print_latency(struct u64_array *lat) {
        if (lat->n == 0) {
                fputs(",\"latency\":{\"n\":0}", stdout);
                return;
        }
        qsort(lat->v, lat->n, sizeof(uint64_t), cmp_u64);
        /* Nearest-rank percentiles. */
#define RANK(q) lat->v[(size_t) ((q) * (double) (lat->n - 1) + 0.5)]
        printf(",\"latency\":{\"n\":%zu,\"min_us\":%.1f,\"p50_us\":%.1f,\"p90_us\":%.1f,\"p99_us\":%.1f,\"p999_us\":%.1f,\"max_us\":%.1f}",
               lat->n, lat->v[0] / 1e3, RANK(0.50) / 1e3, RANK(0.90) / 1e3, RANK(0.99) / 1e3, RANK(0.999) / 1e3,
               lat->v[lat->n - 1] / 1e3);
#undef RANK
}

static uint64_t count_unique(struct pair_array *a) {
        uint64_t n = 0;

        qsort(a->v, a->n, sizeof(struct pair), cmp_pair);
        for (size_t i = 0; i < a->n; i++)
                if (i == 0 || cmp_pair(&a->v[i], &a->v[i - 1]) != 0)
                        n++;
        return n;
}

static int parse_pids(struct options *o, const char *s) {
        char *copy = strdup(s), *save = NULL;

        if (!copy)
                return -ENOMEM;
        for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                char *e;
                long v = strtol(t, &e, 10);
                if (*e || e == t || v <= 0 || o->n_pids >= MAX_PIDS) {
                        free(copy);
                        return -EINVAL;
                }
                o->pids[o->n_pids++] = v;
        }
        free(copy);
        return 0;
}

static void usage(FILE *f) {
        fputs("Usage: drain --socket PATH [--pids P[,P...]] [--quiet-ms MS] [--start-timeout S]\n"
              "             [--latency] [--unique] [--status]\n", f);
}

int main(int argc, char **argv) {
        static const struct option long_options[] = {
                { "socket",        required_argument, NULL, 'S' },
                { "pids",          required_argument, NULL, 'p' },
                { "quiet-ms",      required_argument, NULL, 'q' },
                { "start-timeout", required_argument, NULL, 't' },
                { "latency",       no_argument,       NULL, 'l' },
                { "unique",        no_argument,       NULL, 'u' },
                { "status",        no_argument,       NULL, 's' },
                { "help",          no_argument,       NULL, 'h' },
                {}
        };
        struct options o = { .quiet_ms = 1000, .start_timeout = 120 };
        struct stats st = {};
        struct u64_array lat = {};
        struct pair_array pairs = {};
        struct sigaction sa = { .sa_handler = on_signal };
        struct rusage ru;
        uint64_t start_ns, end_ns, last_data_ns, status_sent_ns = 0;
        size_t have = 0;
        char *buf;
        int fd, c;

        while ((c = getopt_long(argc, argv, "S:p:q:t:lush", long_options, NULL)) >= 0) {
                switch (c) {
                case 'S':
                        o.socket = optarg;
                        break;
                case 'p':
                        if (parse_pids(&o, optarg) < 0) {
                                fprintf(stderr, "drain: --pids wants up to %d comma-separated pids, got \"%s\"\n", MAX_PIDS, optarg);
                                return EXIT_FAILURE;
                        }
                        break;
                case 'q':
                        o.quiet_ms = (unsigned) strtoul(optarg, NULL, 10);
                        break;
                case 't':
                        o.start_timeout = strtod(optarg, NULL);
                        break;
                case 'l':
                        o.latency = true;
                        break;
                case 'u':
                        o.unique = true;
                        break;
                case 's':
                        o.status = true;
                        break;
                case 'h':
                        usage(stdout);
                        return EXIT_SUCCESS;
                default:
                        usage(stderr);
                        return EXIT_FAILURE;
                }
        }
        if (!o.socket || optind < argc) {
                usage(stderr);
                return EXIT_FAILURE;
        }

        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        signal(SIGPIPE, SIG_IGN);

        buf = malloc(READ_SIZE + 1);
        if (!buf) {
                fprintf(stderr, "drain: out of memory\n");
                return EXIT_FAILURE;
        }
        fd = connect_socket(o.socket, 30);
        if (fd < 0)
                return EXIT_FAILURE;

        start_ns = last_data_ns = now_ns(CLOCK_MONOTONIC);
        for (;;) {
                struct pollfd pfd = { .fd = fd, .events = POLLIN };
                uint64_t now = now_ns(CLOCK_MONOTONIC);
                int timeout_ms;
                ssize_t n;
                char *p, *end, *nl;

                if (stop)
                        break;
                if (status_sent_ns) {
                        if (st.status || now - status_sent_ns > 2000000000u)
                                break;
                        timeout_ms = 100;
                } else if (st.first_event_ns == 0) {
                        if (now - start_ns > (uint64_t) (o.start_timeout * 1e9)) {
                                fprintf(stderr, "drain: no event within %.0f s\n", o.start_timeout);
                                break;
                        }
                        timeout_ms = 200;
                } else if (now - last_data_ns >= (uint64_t) o.quiet_ms * 1000000u) {
                        /* Quiet: the run is over. */
                        if (!o.status)
                                break;
                        static const char req[] = "{\"type\":\"status\"}\n";
                        if (write(fd, req, sizeof(req) - 1) != (ssize_t) sizeof(req) - 1)
                                break;
                        status_sent_ns = now;
                        continue;
                } else
                        timeout_ms = (int) ((o.quiet_ms * 1000000u - (now - last_data_ns)) / 1000000u) + 1;

                if (poll(&pfd, 1, timeout_ms) < 0) {
                        if (errno == EINTR)
                                continue;
                        fprintf(stderr, "drain: poll: %m\n");
                        break;
                }
                if (!(pfd.revents & (POLLIN | POLLHUP | POLLERR)))
                        continue;

                n = read(fd, buf + have, READ_SIZE - have);
                if (n < 0) {
                        if (errno == EINTR || errno == EAGAIN)
                                continue;
                        fprintf(stderr, "drain: read: %m\n");
                        break;
                }
                if (n == 0) {
                        fprintf(stderr, "drain: evmond closed the connection\n");
                        break;
                }
                last_data_ns = now_ns(CLOCK_MONOTONIC);
                st.bytes += (uint64_t) n;
                have += (size_t) n;

                p = buf;
                end = buf + have;
                while ((nl = memchr(p, '\n', (size_t) (end - p)))) {
                        if (handle_line(&o, &st, &lat, &pairs, p, nl, last_data_ns) < 0) {
                                fprintf(stderr, "drain: out of memory\n");
                                return EXIT_FAILURE;
                        }
                        if (st.hello == 1 && st.lines == 1) {
                                /* Tell the harness it may start the workload. */
                                fputs("{\"ready\":true}\n", stdout);
                                fflush(stdout);
                        }
                        p = nl + 1;
                }
                have = (size_t) (end - p);
                if (have == READ_SIZE) {
                        fprintf(stderr, "drain: a line longer than %u bytes\n", READ_SIZE);
                        return EXIT_FAILURE;
                }
                memmove(buf, p, have);
        }
        end_ns = now_ns(CLOCK_MONOTONIC);
        /* The client's own cost, taken before the bookkeeping below. */
        getrusage(RUSAGE_SELF, &ru);
        close(fd);

        printf("{\"bytes\":%" PRIu64 ",\"lines\":%" PRIu64 ",\"hello\":%" PRIu64 ",\"events\":%" PRIu64
               ",\"matched\":%" PRIu64, st.bytes, st.lines, st.hello, st.events, st.matched);
        if (o.n_pids > 0) {
                fputs(",\"per_pid\":{", stdout);
                for (size_t i = 0; i < o.n_pids; i++)
                        printf("%s\"%ld\":%" PRIu64, i ? "," : "", o.pids[i], st.per_pid[i]);
                fputc('}', stdout);
        }
        if (o.unique)
                printf(",\"unique_matched\":%" PRIu64, count_unique(&pairs));
        printf(",\"lost\":%" PRIu64 ",\"lost_lines\":%" PRIu64 ",\"dropped\":%" PRIu64 ",\"dropped_lines\":%" PRIu64
               ",\"errors\":%" PRIu64 ",\"other\":%" PRIu64 ",\"unparsed\":%" PRIu64,
               st.lost, st.lost_lines, st.dropped, st.dropped_lines, st.errors, st.other, st.unparsed);
        printf(",\"first_event_ns\":%" PRIu64 ",\"last_event_ns\":%" PRIu64 ",\"first_ts\":%" PRIu64 ",\"last_ts\":%" PRIu64,
               st.first_event_ns, st.last_event_ns, st.first_ts, st.last_ts);
        printf(",\"elapsed_s\":%.3f,\"cpu_user_s\":%.3f,\"cpu_sys_s\":%.3f", (end_ns - start_ns) / 1e9,
               ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6, ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
        if (o.latency)
                print_latency(&lat);
        if (st.status)
                printf(",\"status\":%s", st.status);
        fputs("}\n", stdout);

        free(st.status);
        free(lat.v);
        free(pairs.v);
        free(buf);
        return EXIT_SUCCESS;
}
