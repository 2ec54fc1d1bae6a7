/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * loadgen: a known, countable workload for benchmarking event consumers.
 *
 *   loadgen getppid --threads N --count C     tight syscall(SYS_getppid) loop per thread
 *   loadgen getppid --rate R --seconds S      paced calls, for latency measurements
 *           [--burst B]                       ... B back-to-back calls every B/R seconds
 *   loadgen uprobe --count C                  C calls of evmon_bench_target(), for uprobes
 *   loadgen exec --count C                    fork + exec /bin/true, C times
 *   loadgen exec --rate R --seconds S         ... R times a second
 *
 * With --wait it prints a {"ready":true,...} line (pid, tids) and starts only
 * after a line on stdin, so a harness can attach consumers to known tids
 * first.  The result is one JSON line on stdout.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum mode {
        MODE_GETPPID,
        MODE_UPROBE,
        MODE_EXEC,
};

struct options {
        enum mode mode;
        unsigned threads;
        uint64_t count;
        uint64_t rate;
        uint64_t burst;         /* calls per paced period (1) */
        double seconds;
        bool wait;
};

struct worker {
        const struct options *opts;
        pthread_t thread;
        pid_t tid;
        uint64_t calls;
        uint64_t start_ns;
        uint64_t end_ns;
        uint64_t late;                  /* paced calls that started >1 period late */
};

static pthread_barrier_t ready_barrier, go_barrier;

static uint64_t now_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

/* The uprobe target: not inlined, not cloned, with an observable side effect
 * so the compiler keeps every call.  Exported so `nm` finds it. noclone is
 * GCC's (clang clones nothing it does not inline, and warns on the name). */
#if defined(__clang__)
#define EVMON_NOCLONE
#else
#define EVMON_NOCLONE noclone,
#endif
__attribute__((noinline, EVMON_NOCLONE used, visibility("default")))
long evmon_bench_target(const char *s, long n);

static volatile long bench_sink;

__attribute__((noinline, EVMON_NOCLONE used, visibility("default")))
long evmon_bench_target(const char *s, long n) {
        __asm__ volatile("" : : "r"(s), "r"(n) : "memory");
        bench_sink += n + (s ? s[0] : 0);
        return n;
}

/* Sleeps until NEXT (CLOCK_MONOTONIC ns); counts the call late when it
 * starts more than PERIOD after. */
static void pace(struct worker *w, uint64_t next, uint64_t period) {
        struct timespec ts = {
                .tv_sec = (time_t) (next / 1000000000u),
                .tv_nsec = (long) (next % 1000000000u),
        };

        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
                ;
        if (now_ns() > next + period)
                w->late++;
}

static void run_tight_getppid(struct worker *w) {
        uint64_t n = w->opts->count;

        w->start_ns = now_ns();
        for (uint64_t i = 0; i < n; i++)
                (void) syscall(SYS_getppid);
        w->end_ns = now_ns();
        w->calls = n;
}

static void run_paced_getppid(struct worker *w) {
        uint64_t burst = w->opts->burst ?: 1;
        uint64_t period = 1000000000u * burst / w->opts->rate;
        uint64_t n = (uint64_t) (w->opts->seconds * (double) w->opts->rate) / burst;
        uint64_t next;

        w->start_ns = next = now_ns();
        for (uint64_t i = 0; i < n; i++) {
                pace(w, next, period);
                for (uint64_t k = 0; k < burst; k++)
                        (void) syscall(SYS_getppid);
                next += period;
        }
        w->end_ns = now_ns();
        w->calls = n * burst;
}

static void run_uprobe(struct worker *w) {
        static const char arg[] = "evmon";
        uint64_t n = w->opts->count;

        w->start_ns = now_ns();
        for (uint64_t i = 0; i < n; i++)
                (void) evmon_bench_target(arg, (long) i);
        w->end_ns = now_ns();
        w->calls = n;
}

static void run_exec(struct worker *w) {
        uint64_t rate = w->opts->rate, period = rate ? 1000000000u / rate : 0;
        uint64_t n = rate ? (uint64_t) (w->opts->seconds * (double) rate) : w->opts->count;
        uint64_t next;

        w->start_ns = next = now_ns();
        for (uint64_t i = 0; i < n; i++) {
                int status;
                pid_t pid;

                if (rate) {
                        pace(w, next, period);
                        next += period;
                }
                pid = fork();
                if (pid < 0) {
                        fprintf(stderr, "loadgen: fork: %m\n");
                        exit(EXIT_FAILURE);
                }
                if (pid == 0) {
                        execl("/bin/true", "true", (char *) NULL);
                        _exit(127);
                }
                while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                        ;
                w->calls++;
        }
        w->end_ns = now_ns();
}

static void *worker_main(void *arg) {
        struct worker *w = arg;

        w->tid = (pid_t) syscall(SYS_gettid);
        pthread_barrier_wait(&ready_barrier);
        pthread_barrier_wait(&go_barrier);

        switch (w->opts->mode) {
        case MODE_GETPPID:
                if (w->opts->rate > 0)
                        run_paced_getppid(w);
                else
                        run_tight_getppid(w);
                break;
        case MODE_UPROBE:
                run_uprobe(w);
                break;
        case MODE_EXEC:
                run_exec(w);
                break;
        }
        return NULL;
}

static const char *mode_name(enum mode m) {
        switch (m) {
        case MODE_GETPPID:
                return "getppid";
        case MODE_UPROBE:
                return "uprobe";
        case MODE_EXEC:
                return "exec";
        }
        return "?";
}

static void print_tids(const struct worker *w, unsigned n) {
        fputs("\"tids\":[", stdout);
        for (unsigned i = 0; i < n; i++)
                printf("%s%d", i ? "," : "", (int) w[i].tid);
        fputc(']', stdout);
}

static void usage(FILE *f) {
        fputs("Usage: loadgen getppid [--threads N] [--count C] [--wait]\n"
              "       loadgen getppid --rate R --seconds S [--burst B] [--wait]\n"
              "       loadgen uprobe [--count C] [--wait]\n"
              "       loadgen exec [--count C] [--wait]\n"
              "       loadgen exec --rate R --seconds S [--wait]\n", f);
}

static int parse_u64(const char *s, uint64_t *ret) {
        char *end;
        unsigned long long v;

        errno = 0;
        v = strtoull(s, &end, 0);
        if (errno || end == s || *end || s[0] == '-')
                return -EINVAL;
        *ret = v;
        return 0;
}

int main(int argc, char **argv) {
        static const struct option long_options[] = {
                { "threads", required_argument, NULL, 't' },
                { "count",   required_argument, NULL, 'c' },
                { "rate",    required_argument, NULL, 'r' },
                { "burst",   required_argument, NULL, 'b' },
                { "seconds", required_argument, NULL, 's' },
                { "wait",    no_argument,       NULL, 'w' },
                { "help",    no_argument,       NULL, 'h' },
                {}
        };
        struct options o = { .threads = 1, .count = 1000000, .seconds = 10 };
        struct worker *workers;
        uint64_t v, start, end, calls = 0, late = 0;
        bool have_count = false;
        int c;

        if (argc < 2) {
                usage(stderr);
                return EXIT_FAILURE;
        }
        if (!strcmp(argv[1], "getppid"))
                o.mode = MODE_GETPPID;
        else if (!strcmp(argv[1], "uprobe"))
                o.mode = MODE_UPROBE;
        else if (!strcmp(argv[1], "exec"))
                o.mode = MODE_EXEC;
        else if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
                usage(stdout);
                return EXIT_SUCCESS;
        } else {
                fprintf(stderr, "loadgen: unknown workload \"%s\"\n", argv[1]);
                usage(stderr);
                return EXIT_FAILURE;
        }
        optind = 2;
        while ((c = getopt_long(argc, argv, "t:c:r:s:b:wh", long_options, NULL)) >= 0) {
                switch (c) {
                case 't':
                        if (parse_u64(optarg, &v) < 0 || v == 0 || v > 1024) {
                                fprintf(stderr, "loadgen: --threads wants 1..1024, got \"%s\"\n", optarg);
                                return EXIT_FAILURE;
                        }
                        o.threads = (unsigned) v;
                        break;
                case 'c':
                        if (parse_u64(optarg, &o.count) < 0) {
                                fprintf(stderr, "loadgen: --count wants a number, got \"%s\"\n", optarg);
                                return EXIT_FAILURE;
                        }
                        have_count = true;
                        break;
                case 'r':
                        if (parse_u64(optarg, &o.rate) < 0 || o.rate == 0 || o.rate > 1000000000u) {
                                fprintf(stderr, "loadgen: --rate wants 1..1e9 calls/s, got \"%s\"\n", optarg);
                                return EXIT_FAILURE;
                        }
                        break;
                case 'b':
                        if (parse_u64(optarg, &o.burst) < 0 || o.burst == 0 || o.burst > 1000000u) {
                                fprintf(stderr, "loadgen: --burst wants 1..1e6 calls, got \"%s\"\n", optarg);
                                return EXIT_FAILURE;
                        }
                        break;
                case 's': {
                        char *e;
                        o.seconds = strtod(optarg, &e);
                        if (e == optarg || *e || !(o.seconds > 0)) {
                                fprintf(stderr, "loadgen: --seconds wants a positive number, got \"%s\"\n", optarg);
                                return EXIT_FAILURE;
                        }
                        break;
                }
                case 'w':
                        o.wait = true;
                        break;
                case 'h':
                        usage(stdout);
                        return EXIT_SUCCESS;
                default:
                        usage(stderr);
                        return EXIT_FAILURE;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "loadgen: unexpected argument \"%s\"\n", argv[optind]);
                return EXIT_FAILURE;
        }
        if (o.rate > 0 && o.mode == MODE_UPROBE) {
                fprintf(stderr, "loadgen: --rate is for the getppid and exec workloads\n");
                return EXIT_FAILURE;
        }
        if (o.burst > 0 && (o.rate == 0 || o.mode != MODE_GETPPID)) {
                fprintf(stderr, "loadgen: --burst goes with --rate\n");
                return EXIT_FAILURE;
        }
        if (o.rate > 0 && have_count) {
                fprintf(stderr, "loadgen: give either --count or --rate/--seconds\n");
                return EXIT_FAILURE;
        }

        workers = calloc(o.threads, sizeof(*workers));
        if (!workers) {
                fprintf(stderr, "loadgen: out of memory\n");
                return EXIT_FAILURE;
        }
        if (pthread_barrier_init(&ready_barrier, NULL, o.threads + 1) != 0 ||
            pthread_barrier_init(&go_barrier, NULL, o.threads + 1) != 0) {
                fprintf(stderr, "loadgen: pthread_barrier_init failed\n");
                return EXIT_FAILURE;
        }
        for (unsigned i = 0; i < o.threads; i++) {
                int r;

                workers[i].opts = &o;
                r = pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]);
                if (r != 0) {
                        fprintf(stderr, "loadgen: pthread_create: %s\n", strerror(r));
                        return EXIT_FAILURE;
                }
        }
        pthread_barrier_wait(&ready_barrier);

        if (o.wait) {
                char line[64];

                printf("{\"ready\":true,\"pid\":%d,", (int) getpid());
                print_tids(workers, o.threads);
                fputs("}\n", stdout);
                fflush(stdout);
                /* Any line, or EOF, starts the run. */
                (void) fgets(line, sizeof(line), stdin);
        }

        pthread_barrier_wait(&go_barrier);
        for (unsigned i = 0; i < o.threads; i++)
                pthread_join(workers[i].thread, NULL);

        start = UINT64_MAX;
        end = 0;
        for (unsigned i = 0; i < o.threads; i++) {
                if (workers[i].start_ns < start)
                        start = workers[i].start_ns;
                if (workers[i].end_ns > end)
                        end = workers[i].end_ns;
                calls += workers[i].calls;
                late += workers[i].late;
        }

        printf("{\"workload\":\"%s\",\"pid\":%d,\"threads\":%u,", mode_name(o.mode), (int) getpid(), o.threads);
        print_tids(workers, o.threads);
        printf(",\"calls\":%" PRIu64 ",\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64 ",\"elapsed_ns\":%" PRIu64,
               calls, start, end, end - start);
        /* Per call as one thread sees it: each thread's own wall time over
         * its own calls, averaged over threads. */
        if (calls > 0) {
                double per = 0;
                for (unsigned i = 0; i < o.threads; i++)
                        if (workers[i].calls)
                                per += (double) (workers[i].end_ns - workers[i].start_ns) / (double) workers[i].calls;
                printf(",\"ns_per_call\":%.2f", per / o.threads);
        }
        if (o.rate > 0)
                printf(",\"rate\":%" PRIu64 ",\"burst\":%" PRIu64 ",\"late\":%" PRIu64, o.rate, o.burst ?: 1, late);
        fputs("}\n", stdout);

        free(workers);
        return EXIT_SUCCESS;
}
