/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The user-space half of evmond's hot path without the kernel: a fake
 * per-CPU ring full of sys_enter_getppid samples laid out as evmond asks
 * for them, drained with ring_read(), parsed with sample_parse(), encoded
 * with encode_event() and broadcast through the real socket server to a
 * client thread that reads as fast as it can. Reports the main thread's
 * CPU ns per event, median and min-max of 5 runs, and how many lines the
 * client got (and lost). For comparing changes to the hot path on any
 * machine, or under `valgrind --tool=callgrind` for instruction counts.
 *
 *   ./build/bench/bench-pipeline [EVENTS_PER_RUN] [--context|--context-docker|--context-names]
 *
 * --context adds what evmond does per event with "context" on (the
 * default), by evmond's own daemon_context_annotate() (the process table
 * lookups of the process and its parent, the cgroup id's, the runtime
 * state's, the keys written once per process and copied into each line),
 * for a process with an exe path of a usual length and a parent.
 * --context-docker puts that process in a docker container (the id on
 * the line); --context-names also gives the container a config.v2.json
 * under a test root, whose names evmond then adds to each line.
 */

#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "evmon/connect.h"
#include "evmon/context.h"
#include "evmon/encode.h"
#include "annotate.h"
#include "daemon.h"
#include "server.h"
#include "evmon/monitor.h"
#include "evmon/tracefs.h"

static const char getppid_format[] =
        "name: sys_enter_getppid\n"
        "ID: 305\n"
        "format:\n"
        "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
        "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
        "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
        "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
        "\n"
        "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
        "\n"
        "print fmt: \"\"\n";

#define SAMPLE_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | \
                     PERF_SAMPLE_RAW | PERF_SAMPLE_CGROUP)
#define SAMPLE_SIZE 64u

struct bench {
        struct perf_event_attr attr;
        struct encoder *encoder;
        struct server *server;
        struct jbuf line;
        uint64_t events, bad;
        /* --context: evmond's context (its table, its runstate for
         * --context-names, its line cache) and nothing else of it. */
        struct daemon daemon;
        struct daemon_event event;
};

#define BENCH_ID "3f2a1b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a"

static int mkdir_p(const char *path) {
        char p[256];

        snprintf(p, sizeof(p), "%s", path);
        for (char *s = p + 1; *s; s++)
                if (*s == '/') {
                        *s = 0;
                        (void) mkdir(p, 0755);
                        *s = '/';
                }
        return mkdir(p, 0755) < 0 && errno != EEXIST ? -errno : 0;
}

static size_t ns_page_size(void) {
        return (size_t) sysconf(_SC_PAGESIZE);
}

/* PROC/PID as the kernel shows a process, for the table's seed. */
static int fake_proc(const char *proc, int pid, int ppid, const char *comm, const char *cgroup, const char *exe) {
        char f[192];
        FILE *fp;

        snprintf(f, sizeof(f), "%s/%d", proc, pid);
        if (mkdir(f, 0700) < 0)
                return -errno;
        snprintf(f, sizeof(f), "%s/%d/stat", proc, pid);
        if (!(fp = fopen(f, "we")))
                return -errno;
        fprintf(fp, "%d (%s) S %d %d %d 0 -1 0 0 0 0 0 0 0 0 0 20 0 2 0 5000 0 0\n", pid, comm, ppid, pid, pid);
        fclose(fp);
        snprintf(f, sizeof(f), "%s/%d/status", proc, pid);
        if (!(fp = fopen(f, "we")))
                return -errno;
        fprintf(fp, "Name:\t%s\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\n", comm);
        fclose(fp);
        snprintf(f, sizeof(f), "%s/%d/cgroup", proc, pid);
        if (!(fp = fopen(f, "we")))
                return -errno;
        fprintf(fp, "0::%s\n", cgroup);
        fclose(fp);
        snprintf(f, sizeof(f), "%s/%d/exe", proc, pid);
        return symlink(exe, f) < 0 ? -errno : 0;
}

/* One sample as the kernel lays it out for SAMPLE_TYPE. */
static void put_sample(uint8_t *p, uint64_t i) {
        struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .size = SAMPLE_SIZE };
        uint64_t id = 42, time = 1000000000ull + i * 900, cgroup = 1;
        uint32_t pid = 4242, tid = 4243, cpu = 1, res = 0, raw_size = 12;
        uint8_t raw[12] = { 0 };
        uint16_t type = 305;
        int32_t nr = 110, cpid = 4243;

        memcpy(raw, &type, 2);
        memcpy(raw + 4, &cpid, 4);
        memcpy(raw + 8, &nr, 4);
        memcpy(p, &h, 8);
        memcpy(p + 8, &id, 8);
        memcpy(p + 16, &pid, 4);
        memcpy(p + 20, &tid, 4);
        memcpy(p + 24, &time, 8);
        memcpy(p + 32, &cpu, 4);
        memcpy(p + 36, &res, 4);
        memcpy(p + 40, &raw_size, 4);
        memcpy(p + 44, raw, 12);
        memcpy(p + 56, &cgroup, 8);
}

static int on_record(const struct perf_event_header *h, void *userdata) {
        struct bench *b = userdata;
        struct perf_sample s;
        struct line_meta meta = { .idx = 0 };
        struct encode_context ec;

        if (sample_parse(&b->attr, h, &s) < 0) {
                b->bad++;
                return 0;
        }
        meta.pid = (pid_t) s.pid;
        meta.cgroup = s.cgroup;
        /* As emit.c: the sample for a subscription's filter, and whether
         * it is evmond's or a client's own (self-exclusion). */
        meta.sample = &s;
        meta.self = server_is_self(b->server, (pid_t) s.pid);
        b->events++;
        /* evmond's own call (src/daemon/annotate.c), as emit.c makes it. */
        if (b->daemon.ctx.table && !daemon_context_annotate(&b->daemon, &b->event, &s, &meta, &ec))
                return 0;
        if (server_match(b->server, &meta) == 0)
                return 0;
        b->line.len = 0;
        if (encode_event_ext(&b->line, b->encoder, &s, 0, b->daemon.ctx.table ? &ec : NULL, NULL) < 0) {
                b->bad++;
                return 0;
        }
        server_deliver(b->server, b->line.data, b->line.len);
        return 0;
}

static size_t ops_n_events(void *userdata) {
        return 1;
}

static const char *ops_event_name(void *userdata, size_t i) {
        return "syscalls:sys_enter_getppid";
}

static const struct server_ops ops = { .n_events = ops_n_events, .event_name = ops_event_name };

struct reader {
        int fd;
        uint64_t bytes, lines, dropped_lines;
};

static void *read_all(void *userdata) {
        struct reader *r = userdata;
        static char buf[1 << 22];

        for (;;) {
                ssize_t n = read(r->fd, buf, sizeof(buf));
                if (n <= 0)
                        return NULL;
                r->bytes += (uint64_t) n;
                for (char *p = buf; (p = memchr(p, '\n', (size_t) (buf + n - p))); p++)
                        r->lines++;
        }
}

static uint64_t thread_cpu_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
        uint64_t per_run = argc > 1 ? strtoull(argv[1], NULL, 10) : 2000000;
        bool with_names = argc > 2 && strcmp(argv[2], "--context-names") == 0;
        bool with_docker = with_names || (argc > 2 && strcmp(argv[2], "--context-docker") == 0);
        bool with_context = with_docker || (argc > 2 && strcmp(argv[2], "--context") == 0);
        size_t page = ns_page_size(), data_size = 256 * page;
        struct bench b = { .attr = { .sample_type = SAMPLE_TYPE, .sample_id_all = 1 } };
        struct format *fmt = NULL;
        struct reader rd = { .fd = -1 };
        struct server_opts so = { .mode = 0600, .gid = (gid_t) -1, .max_clients = 4, .max_per_uid = 4, .admin_gid = (gid_t) -1,
                                  .queue_bytes = 64u << 20, .listen_fd = -1 };
        struct ring ring = {};
        char dir[] = "/tmp/evmon-bench-XXXXXX", path[64];
        size_t per_ring = data_size / SAMPLE_SIZE - 1;
        double ns[5];
        pthread_t thread;
        sd_event *e = NULL;
        uint8_t *base;

        if (format_parse(getppid_format, "syscalls", &fmt) < 0 ||
            encoder_new("syscalls:sys_enter_getppid", fmt, &b.encoder) < 0)
                return 1;
        base = mmap(NULL, page + data_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (base == MAP_FAILED || ring_init(&ring, base, data_size) < 0)
                return 1;
        for (size_t i = 0; i < per_ring; i++)
                put_sample(ring.data + i * SAMPLE_SIZE, i);

        if (!mkdtemp(dir))
                return 1;
        if (with_context) {
                /* A /proc of the samples' process and its parent, as
                 * evmond seeds its table at start. */
                const char *cg = with_docker ? "/system.slice/docker-" BENCH_ID ".scope"
                                             : "/user.slice/user-0.slice/session-1.scope";
                char proc[128], f[192];
                FILE *fp;

                snprintf(proc, sizeof(proc), "%s/proc", dir);
                if (mkdir(proc, 0700) < 0 ||
                    fake_proc(proc, 4000, 1, with_docker ? "containerd-shim" : "bash", cg, "/usr/bin/bash") < 0 ||
                    fake_proc(proc, 4242, 4000, "loadgen", cg, "/home/build/evmon/build-bench/bench/loadgen") < 0)
                        return 1;
                if (context_new(&(struct ctx_opts) { .proc_root = proc }, &b.daemon.ctx.table) < 0 ||
                    context_seed(b.daemon.ctx.table) != 2)
                        return 1;
                b.daemon.ctx.cache = calloc(CONTEXT_CACHE_SLOTS, sizeof(*b.daemon.ctx.cache));
                if (!b.daemon.ctx.cache)
                        return 1;
                if (with_names) {
                        /* docker's state for the container. */
                        snprintf(f, sizeof(f), "%s/var/lib/docker/containers/" BENCH_ID, dir);
                        if (mkdir_p(f) < 0)
                                return 1;
                        snprintf(f, sizeof(f), "%s/var/lib/docker/containers/" BENCH_ID "/config.v2.json", dir);
                        if (!(fp = fopen(f, "we")))
                                return 1;
                        fputs("{\"ID\":\"" BENCH_ID "\",\"Name\":\"/payments-api\",\"Config\":{\"Image\":"
                              "\"registry.example/payments/api:2.4.1\"},\"Image\":\"sha256:" BENCH_ID "\"}", fp);
                        fclose(fp);
                        if (ctx_runstate_new(&(struct ctx_runstate_opts) { .root = dir, .recheck_ns = UINT64_MAX },
                                             &b.daemon.ctx.runstate) < 0)
                                return 1;
                }
        }
        snprintf(path, sizeof(path), "%s/s.sock", dir);
        so.path = path;
        if (sd_event_new(&e) < 0 || server_new(e, &so, &ops, NULL, &b.server, NULL) < 0)
                return 1;
        rd.fd = evmon_connect(path);
        if (rd.fd < 0)
                return 1;
        while (server_n_clients(b.server) == 0)
                sd_event_run(e, 100000);
        pthread_create(&thread, NULL, read_all, &rd);

        for (int run = 0; run < 5; run++) {
                uint64_t done = 0, t0 = thread_cpu_ns();

                while (done < per_run) {
                        struct perf_event_mmap_page *pg = (struct perf_event_mmap_page *) base;
                        uint64_t n = per_run - done < per_ring ? per_run - done : per_ring;

                        /* The ring refilled: the kernel's part, not measured apart. */
                        pg->data_tail = 0;
                        __atomic_store_n(&pg->data_head, n * SAMPLE_SIZE, __ATOMIC_RELEASE);
                        while (ring_pending(&ring) > 0) {
                                ring_read(&ring, 4096, on_record, &b);
                                server_flush(b.server);
                                sd_event_run(e, 0);
                        }
                        done += n;
                }
                ns[run] = (double) (thread_cpu_ns() - t0) / (double) per_run;
        }
        /* Let the reader catch up, then count. */
        for (int i = 0; i < 200 && server_dropped_total(b.server) + rd.lines < b.events + 1; i++) {
                server_flush(b.server);
                sd_event_run(e, 10000);
        }
        qsort(ns, 5, sizeof(double), cmp_double);
        printf("{\"events_per_run\":%" PRIu64 ",\"ns_per_event_median\":%.1f,\"ns_per_event_min\":%.1f,"
               "\"ns_per_event_max\":%.1f,\"lines_read\":%" PRIu64 ",\"dropped\":%" PRIu64 ",\"bad\":%" PRIu64 "}\n",
               per_run, ns[2], ns[0], ns[4], rd.lines, server_dropped_total(b.server), b.bad);
        shutdown(rd.fd, SHUT_RDWR);
        server_free(b.server);
        pthread_join(thread, NULL);
        ring_done(&ring);
        encoder_free(b.encoder);
        format_free(fmt);
        if (b.daemon.ctx.table) {
                char cmd[128];

                b.daemon.ctx.table = context_free(b.daemon.ctx.table);
                b.daemon.ctx.runstate = ctx_runstate_free(b.daemon.ctx.runstate);
                free(b.daemon.ctx.cache);
                jbuf_done(&b.daemon.ctx.scratch);
                snprintf(cmd, sizeof(cmd), "rm -rf %s/proc %s/var", dir, dir);
                (void) system(cmd);
        }
        jbuf_done(&b.line);
        sd_event_unref(e);
        rmdir(dir);
        return 0;
}
