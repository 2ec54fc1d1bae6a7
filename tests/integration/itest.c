/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "evmon/connect.h"
#include "itest.h"
#include "../host-tracing.h"

static const char *tracefs_root(void) {
        static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
        for (size_t i = 0; i < 2; i++) {
                char p[256];
                snprintf(p, sizeof(p), "%s/events", roots[i]);
                if (access(p, R_OK) == 0)
                        return roots[i];
        }
        return NULL;
}

void itest_require(const char *const *events) {
        const char *root;

        if (geteuid() != 0) {
                fprintf(stderr, "SKIP: needs root (perf_event_open on tracepoints system-wide)\n");
                exit(ITEST_SKIP);
        }
        host_tracing_require_usable();
        root = tracefs_root();
        if (!root) {
                fprintf(stderr, "SKIP: tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)\n");
                exit(ITEST_SKIP);
        }
        for (; events && *events; events++) {
                char p[512];
                snprintf(p, sizeof(p), "%s/events/%s/format", root, *events);
                if (access(p, R_OK) != 0) {
                        fprintf(stderr, "SKIP: this kernel has no %s tracepoint\n", *events);
                        exit(ITEST_SKIP);
                }
        }
}

const char *itest_build_path(const char *rel, char *buf, size_t size) {
        const char *b = getenv("EVMON_BUILD_ROOT");
        snprintf(buf, size, "%s/%s", b ? b : ".", rel);
        return buf;
}

int itest_client_connect(struct itest_client *c, const char *socket_path) {
        int fd = evmon_connect(socket_path);

        c->len = 0;
        c->fd = fd < 0 ? -1 : fd;
        return fd < 0 ? fd : 0;
}

void itest_client_close(struct itest_client *c) {
        if (c->fd >= 0)
                close(c->fd);
        c->fd = -1;
}

int itest_client_send(struct itest_client *c, const char *line) {
        size_t n = strlen(line);
        return write(c->fd, line, n) == (ssize_t) n ? 0 : -EIO;
}

/* Every line a test client reads is kept for the schema test
 * (tests/integration/test-schema.c validates them against
 * doc/evmon.schema.json): with EVMON_LINES_DIR set, each test program
 * writes DIR/NAME[-ARG].jsonl afresh. It writes NAME[-ARG].jsonl.part and
 * renames it when it exits, so that a program killed in the middle of a
 * write (a meson timeout on a busy host) leaves no half line where the
 * schema test looks: only its .part, which that test does not read. */
static int lines_fd = -1;
static pid_t lines_pid;
static char lines_path[1024];

/* glibc hands constructors main's arguments. */
__attribute__((constructor)) static void lines_open(int argc, char **argv, char **envp) {
        const char *dir = getenv("EVMON_LINES_DIR"), *arg = argc > 1 ? argv[1] : NULL;
        char part[sizeof(lines_path) + 8];

        if (!dir || !*dir || argc < 1 || (arg && strchr(arg, '/')))
                return;
        (void) mkdir(dir, 0755);
        snprintf(lines_path, sizeof(lines_path), "%s/%s%s%s.jsonl", dir, program_invocation_short_name,
                 arg ? "-" : "", arg ? arg : "");
        snprintf(part, sizeof(part), "%s.part", lines_path);
        (void) unlink(lines_path);
        lines_fd = open(part, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
        lines_pid = getpid();
}

void itest_lines_finish(void) {
        char part[sizeof(lines_path) + 8];

        if (lines_fd < 0 || getpid() != lines_pid)
                return;
        snprintf(part, sizeof(part), "%s.part", lines_path);
        if (close(lines_fd) == 0)
                (void) rename(part, lines_path);
        lines_fd = -1;
}

/* At exit, in the process that opened it: children forked by the tests
 * run their own exit() too. */
__attribute__((destructor)) static void lines_close(void) {
        itest_lines_finish();
}

/* Keeps the whole lines of TEXT (N bytes). */
static void lines_save(const char *text, size_t n) {
        const char *last;

        if (lines_fd < 0 || n == 0)
                return;
        last = memrchr(text, '\n', n);
        if (last && write(lines_fd, text, (size_t) (last - text) + 1) < 0)
                lines_fd = -1;
}

static uint64_t now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

/* Waits stretched by $EVMON_TEST_TIME_SCALE (scripts/test sets it for the
 * sanitizer pass, whose evmond runs a few times slower). Counts are never
 * scaled: only how long a test waits for them. */
static int scaled(int ms) {
        static int scale;

        if (!scale) {
                const char *e = getenv("EVMON_TEST_TIME_SCALE");
                scale = e && atoi(e) > 1 ? atoi(e) : 1;
        }
        return ms > INT32_MAX / scale ? INT32_MAX : ms * scale;
}

json_object *itest_client_next(struct itest_client *c, int timeout_ms) {
        uint64_t end = now_ms() + (uint64_t) scaled(timeout_ms);

        for (;;) {
                char *nl = memchr(c->buf, '\n', c->len);
                if (nl) {
                        size_t n = (size_t) (nl - c->buf) + 1;
                        json_tokener *tok = json_tokener_new();
                        json_object *o = json_tokener_parse_ex(tok, c->buf, (int) n - 1);
                        if (!o || json_tokener_get_error(tok) != json_tokener_success) {
                                fprintf(stderr, "not JSON: %.*s\n", (int) n, c->buf);
                                abort();
                        }
                        json_tokener_free(tok);
                        lines_save(c->buf, n);
                        memmove(c->buf, c->buf + n, c->len - n);
                        c->len -= n;
                        return o;
                }
                uint64_t now = now_ms();
                if (now >= end)
                        return NULL;
                struct pollfd p = { .fd = c->fd, .events = POLLIN };
                if (poll(&p, 1, (int) (end - now)) <= 0)
                        return NULL;
                ssize_t r = read(c->fd, c->buf + c->len, sizeof(c->buf) - c->len);
                if (r <= 0)
                        return NULL;
                c->len += (size_t) r;
        }
}

json_object *itest_client_expect(struct itest_client *c, const char *type, int timeout_ms) {
        uint64_t end = now_ms() + (uint64_t) timeout_ms;
        for (;;) {
                uint64_t now = now_ms();
                if (now >= end)
                        return NULL;
                json_object *o = itest_client_next(c, (int) (end - now));
                if (!o)
                        return NULL;
                if (strcmp(itest_str(o, "type"), type) == 0)
                        return o;
                json_object_put(o);
        }
}

json_object *itest_client_status(struct itest_client *c, int timeout_ms) {
        if (itest_client_send(c, "{\"type\":\"status\"}\n") < 0)
                return NULL;
        return itest_client_expect(c, "status", timeout_ms);
}

const char *itest_str(json_object *o, const char *key) {
        json_object *v;
        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
                return "";
        return json_object_get_string(v);
}

int64_t itest_int(json_object *o, const char *key) {
        json_object *v;
        if (!json_object_object_get_ex(o, key, &v))
                return -1;
        return json_object_get_int64(v);
}

int64_t itest_dropped_lost(json_object *o) {
        json_object *v;

        return json_object_object_get_ex(o, "lost", &v) ? json_object_get_int64(v) : 0;
}

/* EVMON_TEST_FILTER=PATTERN runs only the tests whose names match (cmocka's
 * '*' and '?'), for chasing one that fails now and then:
 *   EVMON_TEST_FILTER=test_enable_on_exec build/tests/integration/test-perfev */
__attribute__((constructor)) static void filter_from_env(void) {
        const char *f = getenv("EVMON_TEST_FILTER");

        if (f && *f)
                cmocka_set_test_filter(f);
}

int itest_session_start(struct itest_daemon *d, struct itest_client *c, const char *config_json) {
        json_object *o;

        if (itest_daemon_start(d, config_json) < 0 || itest_client_connect(c, d->socket) < 0)
                return -1;
        o = itest_client_expect(c, "hello", 5000);
        if (!o)
                return -1;
        json_object_put(o);
        return 0;
}

pid_t itest_fork(void) {
        pid_t parent = getpid(), pid;

        pid = fork();
        if (pid == 0) {
                /* Set after fork: a test that died in between is caught by
                 * the getppid() check. */
                if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
                        _exit(127);
        }
        return pid;
}

int itest_daemon_start(struct itest_daemon *d, const char *config_json) {
        return itest_daemon_start_opts(d, config_json, NULL);
}

int itest_daemon_start_opts(struct itest_daemon *d, const char *config_json, const struct itest_daemon_opts *opts) {
        char evmond[512];
        FILE *f;

        strcpy(d->dir, "/tmp/evmon-itest-XXXXXX");
        if (!mkdtemp(d->dir))
                return -errno;
        snprintf(d->config, sizeof(d->config), "%s/evmond.json", d->dir);
        snprintf(d->socket, sizeof(d->socket), "%s/evmond.sock", d->dir);
        d->log[0] = 0;
        if (opts && opts->log_to_file)
                snprintf(d->log, sizeof(d->log), "%s/evmond.log", d->dir);
        f = fopen(d->config, "w");
        if (!f)
                return -errno;
        fputs(config_json, f);
        fclose(f);

        itest_build_path("evmond", evmond, sizeof(evmond));
        d->pid = itest_fork();
        if (d->pid < 0)
                return -errno;
        if (d->pid == 0) {
                const char *argv[32];
                size_t n = 0;

                if (d->log[0]) {
                        int fd = open(d->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
                        if (fd < 0 || dup2(fd, STDERR_FILENO) < 0)
                                _exit(127);
                }
                for (const char *const *w = opts ? opts->wrapper : NULL; w && *w && n < 24; w++)
                        argv[n++] = *w;
                argv[n++] = evmond;
                argv[n++] = "--config";
                argv[n++] = d->config;
                argv[n++] = "--socket";
                argv[n++] = d->socket;
                argv[n] = NULL;
                execvp(argv[0], (char **) argv);
                _exit(127);
        }
        for (int i = 0; i < 200; i++) {
                struct itest_client c;
                int status;

                if (waitpid(d->pid, &status, WNOHANG) == d->pid) {
                        fprintf(stderr, "evmond exited early with status %d\n", WEXITSTATUS(status));
                        d->pid = -1;
                        return -ECHILD;
                }
                if (itest_client_connect(&c, d->socket) == 0) {
                        /* The socket listens before the events are enabled
                         * (the process table is seeded from /proc first,
                         * slow on a busy host); the hello comes from the
                         * loop, after that: only then is evmond serving. */
                        json_object *hello = itest_client_next(&c, 30000);

                        itest_client_close(&c);
                        if (!hello)
                                return -ETIMEDOUT;
                        json_object_put(hello);
                        return 0;
                }
                usleep(50000);
        }
        return -ETIMEDOUT;
}

int itest_daemon_stop(struct itest_daemon *d) {
        int status;

        if (d->pid <= 0)
                return -1;
        kill(d->pid, SIGTERM);
        for (int i = 0; i < 200; i++) {
                if (waitpid(d->pid, &status, WNOHANG) == d->pid) {
                        d->pid = -1;
                        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
                }
                usleep(50000);
        }
        kill(d->pid, SIGKILL);
        waitpid(d->pid, &status, 0);
        d->pid = -1;
        return -1;
}

void itest_daemon_cleanup(struct itest_daemon *d) {
        if (d->pid > 0)
                (void) itest_daemon_stop(d);
        unlink(d->socket);
        unlink(d->config);
        if (d->log[0])
                unlink(d->log);
        rmdir(d->dir);
}

char *itest_client_slurp(struct itest_client *c, int quiet_ms, int max_ms, size_t *ret_len) {
        uint64_t end = now_ms() + (uint64_t) scaled(max_ms);
        size_t cap = 1 << 24, len = c->len;
        char *buf = malloc(cap);

        if (!buf)
                abort();
        memcpy(buf, c->buf, c->len);
        c->len = 0;
        for (;;) {
                struct pollfd p = { .fd = c->fd, .events = POLLIN };
                ssize_t r;

                if (now_ms() >= end || poll(&p, 1, scaled(quiet_ms)) <= 0)
                        break;
                if (cap - len < (1 << 20)) {
                        cap *= 2;
                        buf = realloc(buf, cap);
                        if (!buf)
                                abort();
                }
                r = read(c->fd, buf + len, cap - len - 1);
                if (r <= 0)
                        break;
                len += (size_t) r;
        }
        /* Cut off by MAX_MS while lines still flow, the last read may end
         * inside a line: it stays in C's buffer for the next read, and
         * what is returned is whole lines. */
        {
                const char *nl = memrchr(buf, '\n', len);
                size_t whole = nl ? (size_t) (nl - buf) + 1 : 0;

                if (len - whole <= sizeof(c->buf)) {
                        memcpy(c->buf, buf + whole, len - whole);
                        c->len = len - whole;
                        len = whole;
                }
        }
        buf[len] = 0;
        *ret_len = len;
        lines_save(buf, len);
        return buf;
}

void itest_for_each_line(const char *text, size_t len, void (*fn)(json_object *o, void *ud), void *ud) {
        json_tokener *tok = json_tokener_new();
        const char *p = text, *end = text + len;

        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                json_object *o;

                if (!nl) {
                        fprintf(stderr, "unterminated line at the end: %.*s\n", (int) (end - p), p);
                        abort();
                }
                json_tokener_reset(tok);
                o = json_tokener_parse_ex(tok, p, (int) (nl - p));
                if (!o || json_tokener_get_error(tok) != json_tokener_success) {
                        fprintf(stderr, "not JSON: %.*s\n", (int) (nl - p), p);
                        abort();
                }
                fn(o, ud);
                json_object_put(o);
                p = nl + 1;
        }
        json_tokener_free(tok);
}

int itest_run(const char *const *argv, int timeout_ms, char **ret_output) {
        uint64_t end = now_ms() + (uint64_t) timeout_ms;
        size_t len = 0, cap = 4096;
        char *out = malloc(cap);
        int p[2], status;
        pid_t pid;

        if (!out || pipe2(p, O_CLOEXEC) < 0) {
                free(out);
                return -errno;
        }
        pid = itest_fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                dup2(p[1], STDOUT_FILENO);
                dup2(p[1], STDERR_FILENO);
                execvp(argv[0], (char **) argv);
                fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
                _exit(127);
        }
        close(p[1]);
        for (;;) {
                struct pollfd pf = { .fd = p[0], .events = POLLIN };
                uint64_t now = now_ms();
                ssize_t r;

                if (now >= end) {
                        fprintf(stderr, "%s did not finish in %d ms: killed\n", argv[0], timeout_ms);
                        kill(pid, SIGKILL);
                        break;
                }
                if (poll(&pf, 1, (int) (end - now)) <= 0)
                        continue;
                if (cap - len < 1024) {
                        cap *= 2;
                        out = realloc(out, cap);
                        if (!out)
                                abort();
                }
                r = read(p[0], out + len, cap - len - 1);
                if (r <= 0)
                        break;
                len += (size_t) r;
        }
        close(p[0]);
        out[len] = 0;
        if (waitpid(pid, &status, 0) != pid) {
                free(out);
                return -ECHILD;
        }
        if (ret_output)
                *ret_output = out;
        else
                free(out);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

pid_t itest_spawn_calls(long nr, long arg, int n, int *ret_gate) {
        pid_t pid = test_fork_gated(ret_gate);

        if (pid == 0) {
                for (int i = 0; i < n; i++)
                        syscall(nr, arg);
                _exit(0);
        }
        return pid;
}

void itest_release(int gate) {
        test_gate_open(gate);
}

void itest_reap(pid_t pid) {
        int status;

        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                fprintf(stderr, "child %d failed (status 0x%x)\n", (int) pid, status);
                abort();
        }
}

void itest_tally_line(json_object *o, void *userdata) {
        struct itest_tally *t = userdata;
        const char *type = itest_str(o, "type"), *event;
        pid_t pid;

        if (strcmp(type, "lost") == 0) {
                t->lost += itest_int(o, "count");
                return;
        }
        if (strcmp(type, "dropped") == 0) {
                t->dropped += itest_int(o, "count");
                t->lost += itest_dropped_lost(o);
                return;
        }
        if (strcmp(type, "error") == 0) {
                t->errors++;
                return;
        }
        if (strcmp(type, "config") == 0) {
                t->configs++;
                return;
        }
        if (strcmp(type, "event") != 0)
                return;
        t->events++;
        pid = (pid_t) itest_int(o, "pid");
        event = itest_str(o, "event");
        for (size_t i = 0; i < t->n_rows; i++)
                if (t->rows[i].pid == pid && strcmp(t->rows[i].event, event) == 0) {
                        t->rows[i].n++;
                        return;
                }
        if ((t->n_rows & 63) == 0) {
                t->rows = realloc(t->rows, (t->n_rows + 64) * sizeof(*t->rows));
                if (!t->rows)
                        abort();
        }
        t->rows[t->n_rows] = (struct itest_tally_row) { .pid = pid, .n = 1 };
        snprintf(t->rows[t->n_rows].event, sizeof(t->rows[t->n_rows].event), "%s", event);
        t->n_rows++;
}

int64_t itest_tally_get(const struct itest_tally *t, pid_t pid, const char *event) {
        int64_t n = 0;

        for (size_t i = 0; i < t->n_rows; i++)
                if ((pid == 0 || t->rows[i].pid == pid) && (!event || strcmp(t->rows[i].event, event) == 0))
                        n += t->rows[i].n;
        return n;
}

int64_t itest_tally_others(const struct itest_tally *t, const pid_t *pids, size_t n) {
        int64_t others = 0;

        for (size_t i = 0; i < t->n_rows; i++) {
                bool ours = false;
                for (size_t k = 0; k < n; k++)
                        ours |= t->rows[i].pid == pids[k];
                if (!ours)
                        others += t->rows[i].n;
        }
        return others;
}

void itest_tally_done(struct itest_tally *t) {
        free(t->rows);
        *t = (struct itest_tally) {};
}

pid_t itest_tally_calls(struct itest_client *c, long nr, long arg, int n, struct itest_tally *t) {
        int gate;
        pid_t pid = itest_spawn_calls(nr, arg, n, &gate);
        size_t len;
        char *text;

        itest_release(gate);
        text = itest_client_slurp(c, 500, 30000, &len);
        itest_reap(pid);
        itest_for_each_line(text, len, itest_tally_line, t);
        free(text);
        return pid;
}

uint64_t itest_timeslices(pid_t pid, uint64_t *ret_run_ns) {
        char path[64];
        unsigned long long run, wait, slices;
        FILE *f;

        snprintf(path, sizeof(path), "/proc/%d/schedstat", (int) pid);
        f = fopen(path, "re");
        if (!f || fscanf(f, "%llu %llu %llu", &run, &wait, &slices) != 3) {
                fprintf(stderr, "cannot read %s\n", path);
                abort();
        }
        fclose(f);
        if (ret_run_ns)
                *ret_run_ns = run;
        return slices;
}

int64_t itest_cpu_ms(pid_t pid) {
        char path[64], buf[1024], *p;
        unsigned long ut, st;
        FILE *f;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
        f = fopen(path, "re");
        if (!f || !fgets(buf, sizeof(buf), f))
                abort();
        fclose(f);
        /* After "(comm)": state is field 3, utime 14, stime 15. */
        p = strrchr(buf, ')');
        if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
                abort();
        return (int64_t) (ut + st) * 1000 / sysconf(_SC_CLK_TCK);
}
