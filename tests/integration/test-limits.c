/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Issue 17's holes in the socket, each tried as it was found:
 * - a client that sends {"type":"status"} lines and never reads stops
 *   being read, then is dropped with the reason logged, and evmond's
 *   memory stays bounded meanwhile (it grew by ~1 GB in 15 s);
 * - reload is for root and socket.admin_group only (SO_PEERCRED); anyone
 *   else gets an error and keeps a working connection; so is runtime
 *   control (issue 12), which a member of the group may use;
 * - one uid cannot take every connection (64 held by one user locked out
 *   everyone, root included): clients.max_per_uid, and places kept for
 *   root and admins;
 * - evmond removes nothing at its socket path but a stale socket of its
 *   own: a regular file, another user's socket or a live evmond there
 *   make it refuse, naming the path;
 * - request lines at their edges: the longest taken, one longer, one
 *   left unended at the client's shutdown(SHUT_WR); a subscriber's
 *   shutdown(SHUT_WR) ends its stream after what was queued;
 * - one client's requests in bulk do not hold up the others', and
 *   clients that send requests without pause do not keep new ones out;
 * - one uid's flood of connections and refused requests cannot flood the
 *   journal: its log lines come in a burst, then a few a second, the rest
 *   counted, and other uids' lines stay; nor can an admin's loop of
 *   reloads and runtime control, under the same budget. */

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "itest.h"

#define GETPGID "syscalls:sys_enter_getpgid"
#define NOBODY 65534

static struct itest_daemon daemon_ = { .pid = -1 };
static char group[64];
static gid_t gid;

static int group_setup(void **state) {
        const char *argv[] = { "groupadd", "--system", group, NULL };
        struct group *g;

        snprintf(group, sizeof(group), "evmonadm%d", (int) getpid());
        if (itest_run(argv, 20000, NULL) != 0) {
                group[0] = 0;
                return -1;
        }
        g = getgrnam(group);
        if (!g)
                return -1;
        gid = g->gr_gid;
        return 0;
}

static int group_teardown(void **state) {
        itest_daemon_cleanup(&daemon_);
        if (group[0]) {
                const char *argv[] = { "groupdel", group, NULL };
                (void) itest_run(argv, 20000, NULL);
        }
        return 0;
}

static int teardown(void **state) {
        itest_daemon_cleanup(&daemon_);
        return 0;
}

static void start_daemon(const char *clients) {
        struct itest_daemon_opts opts = { .log_to_file = true };
        char config[1024];

        snprintf(config, sizeof(config),
                 "{\n"
                 "  \"socket\": {\"mode\": \"0666\", \"admin_group\": \"%s\"},\n"
                 "  \"clients\": %s,\n"
                 "  \"events\": [{\"tracepoint\": \"" GETPGID "\", \"filter\": \"pid == 1\"}]\n"
                 "}\n", group, clients);
        assert_int_equal(itest_daemon_start_opts(&daemon_, config, &opts), 0);
        assert_int_equal(chmod(daemon_.dir, 0755), 0);
}

static char *read_file(const char *path) {
        char *text = NULL;
        size_t n = 0;
        FILE *f = fopen(path, "re");

        assert_non_null(f);
        assert_true(getdelim(&text, &n, 0, f) >= 0);
        fclose(f);
        return text;
}

static long rss_kib(pid_t pid) {
        char path[64], *text, *p;
        long kib;

        snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
        text = read_file(path);
        p = strstr(text, "VmRSS:");
        assert_non_null(p);
        kib = strtol(p + 6, NULL, 10);
        free(text);
        return kib;
}

static uint64_t now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

/* ---- replies count against the client's queue ----------------------- */

static void test_status_flood(void **state) {
        static const char req[] = "{\"type\":\"status\"}\n";
        struct itest_client *flood = calloc(1, sizeof(*flood)), *other = calloc(1, sizeof(*other));
        long rss0, rss_max = 0;
        uint64_t start, sent = 0;
        bool dropped = false;
        json_object *o;
        char *log, *asan_small = NULL, *asan = getenv("ASAN_OPTIONS") ? strdup(getenv("ASAN_OPTIONS")) : NULL;

        /* Under ASan (scripts/test --sanitize) freed memory waits in a
         * quarantine, 256 MB by default, that RSS would count as held:
         * the replies evmond wrote out and freed (the 1 MiB socket buffer
         * it asks for takes thousands) grew it by 87 MB there. A small
         * one keeps RSS a measure of what evmond holds. */
        if (asan && asprintf(&asan_small, "%s:quarantine_size_mb=4", asan) > 0)
                assert_int_equal(setenv("ASAN_OPTIONS", asan_small, 1), 0);
        start_daemon("{\"queue_kib\": 64}");
        if (asan_small) {
                assert_int_equal(setenv("ASAN_OPTIONS", asan, 1), 0);
                free(asan_small);
        }
        free(asan);
        assert_int_equal(itest_client_connect(other, daemon_.socket), 0);
        json_object_put(itest_client_expect(other, "hello", 5000));
        assert_int_equal(itest_client_connect(flood, daemon_.socket), 0);
        assert_int_equal(fcntl(flood->fd, F_SETFL, O_NONBLOCK), 0);
        rss0 = rss_kib(daemon_.pid);
        start = now_ms();
        /* Ask, never read, until evmond hangs up (at most 40 s). */
        while (!dropped && now_ms() - start < 40000) {
                ssize_t n = send(flood->fd, req, sizeof(req) - 1, MSG_NOSIGNAL);

                if (n == (ssize_t) sizeof(req) - 1) {
                        sent++;
                        continue;
                }
                if (n < 0 && (errno == EPIPE || errno == ECONNRESET)) {
                        dropped = true;
                        break;
                }
                assert_true(n < 0 && errno == EAGAIN);
                /* evmond stopped reading: our socket is full. */
                poll(&(struct pollfd) { .fd = flood->fd, .events = POLLOUT }, 1, 200);
                if (rss_kib(daemon_.pid) > rss_max)
                        rss_max = rss_kib(daemon_.pid);
        }
        fprintf(stderr, "status flood: %" PRIu64 " requests sent, dropped after %.1f s; evmond RSS %ld KiB -> at most %ld KiB\n",
                sent, (now_ms() - start) / 1000.0, rss0, rss_max);
        assert_true(dropped);
        /* 64 KiB of queue and a socket's worth of requests, not the
         * gigabytes it grew before: under 1 MB here. */
        assert_true(rss_max < rss0 + 64 * 1024);
        log = read_file(daemon_.log);
        if (!strstr(log, "has not read its replies"))
                fail_msg("the log lacks the reason:\n%s", log);
        free(log);

        /* Nobody else noticed. */
        assert_int_equal(itest_client_send(other, "{\"type\":\"status\"}\n"), 0);
        o = itest_client_expect(other, "status", 5000);
        assert_non_null(o);
        json_object_put(o);
        itest_client_close(flood);
        itest_client_close(other);
        free(flood);
        free(other);
        assert_int_equal(itest_daemon_stop(&daemon_), 0);
}

/* ---- reload is for admins ------------------------------------------- */

/* In a child as uid/gid 65534 with GROUPS: sends REQUEST (a reload, or
 * runtime control, whose answer is DONE), then status, on one connection.
 * Exit 0: refused with an error, status answered; 1: done; others:
 * trouble. */
static int request_as(const gid_t *groups, size_t n, const char *request, const char *done) {
        int status;
        pid_t pid = fork();

        assert_true(pid >= 0);
        if (pid == 0) {
                struct itest_client *c = calloc(1, sizeof(*c));
                json_object *o;
                int r;

                if (!c || setgroups(n, groups) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
                    setresuid(NOBODY, NOBODY, NOBODY) < 0)
                        _exit(100);
                if (itest_client_connect(c, daemon_.socket) < 0)
                        _exit(101);
                json_object_put(itest_client_expect(c, "hello", 5000));
                if (itest_client_send(c, request) < 0)
                        _exit(102);
                /* A reload tells every client the new config first. */
                while ((o = itest_client_next(c, 10000)) && strcmp(itest_str(o, "type"), "config") == 0)
                        json_object_put(o);
                if (!o)
                        _exit(103);
                if (strcmp(itest_str(o, "type"), done) == 0)
                        _exit(1);
                if (strcmp(itest_str(o, "type"), "error") != 0 || !strstr(itest_str(o, "error"), "permission denied") ||
                    !strstr(itest_str(o, "error"), "socket.admin_group")) {
                        fprintf(stderr, "%s as uid %d: %s\n", request, NOBODY, json_object_to_json_string(o));
                        _exit(104);
                }
                json_object_put(o);
                if (itest_client_send(c, "{\"type\":\"status\"}\n") < 0)
                        _exit(105);
                o = itest_client_expect(c, "status", 5000);
                r = o ? 0 : 106;
                json_object_put(o);
                _exit(r);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        return WEXITSTATUS(status);
}

static void test_reload_admin_only(void **state) {
        struct itest_client *c = calloc(1, sizeof(*c));
        gid_t none[] = { NOBODY };
        json_object *o;
        char *log;

        start_daemon("{\"max\": 8}");
        assert_int_equal(request_as(none, 1, "{\"type\":\"reload\"}\n", "reload"), 0);
        assert_int_equal(request_as(&gid, 1, "{\"type\":\"reload\"}\n", "reload"), 1);
        /* Runtime control (issue 12) asks the same: a member of
         * socket.admin_group may, anyone else may not. */
        assert_int_equal(request_as(none, 1, "{\"type\":\"disable\",\"events\":[\"syscalls:*\"]}\n", "result"), 0);
        assert_int_equal(request_as(&gid, 1, "{\"type\":\"disable\",\"events\":[\"syscalls:*\"]}\n", "result"), 1);
        assert_int_equal(request_as(&gid, 1, "{\"type\":\"enable\"}\n", "result"), 1);
        /* Root may. */
        assert_int_equal(itest_client_connect(c, daemon_.socket), 0);
        json_object_put(itest_client_expect(c, "hello", 5000));
        assert_int_equal(itest_client_send(c, "{\"type\":\"reload\"}\n"), 0);
        o = itest_client_expect(c, "reload", 10000);
        assert_non_null(o);
        json_object_put(o);
        log = read_file(daemon_.log);
        if (!strstr(log, "Refused reload to client") || !strstr(log, "uid 65534"))
                fail_msg("the log lacks the refusal:\n%s", log);
        if (!strstr(log, "Refused disable to client") || !strstr(log, "Disabled by uid 65534") ||
            !strstr(log, "Enabled by uid 65534"))
                fail_msg("the log lacks the member's disable and enable, or the other's refusal:\n%s", log);
        free(log);
        itest_client_close(c);
        free(c);
        assert_int_equal(itest_daemon_stop(&daemon_), 0);
}

/* ---- request lines at their edges ----------------------------------- */

/* A subscribe line of exactly LEN bytes, without its newline. */
static char *subscribe_line(size_t len) {
        static const char head[] = "{\"type\":\"subscribe\",\"comms\":[\"", tail[] = "\"]}";
        char *line;

        /* Checked before malloc, and abort() rather than assert_*: gcc
         * -O2 with ASan otherwise sees a path with len below the head
         * (-Warray-bounds). */
        if (len <= sizeof(head) + sizeof(tail))
                abort();
        line = malloc(len + 2);
        if (!line)
                abort();
        memcpy(line, head, sizeof(head) - 1);
        memset(line + sizeof(head) - 1, 'a', len - (sizeof(head) - 1) - (sizeof(tail) - 1));
        memcpy(line + len - (sizeof(tail) - 1), tail, sizeof(tail));
        strcat(line, "\n");
        return line;
}

static void expect_error_line(struct itest_client *c, const char *message) {
        json_object *o = itest_client_next(c, 5000);

        assert_non_null(o);
        if (strcmp(itest_str(o, "type"), "error") != 0 || strcmp(itest_str(o, "error"), message) != 0)
                fail_msg("expected the error \"%s\", got %s", message, json_object_to_json_string(o));
        json_object_put(o);
}

/* The longest line taken is 65,535 bytes and its newline, and the error
 * for a longer one says that number (it said 65,536); a line the client
 * leaves unended when it shuts down its side gets an error too, not
 * silence, before evmond hangs up. */
static void test_request_lines(void **state) {
        struct itest_client *c = calloc(1, sizeof(*c));
        char *line;
        json_object *o;

        start_daemon("{\"max\": 8}");
        assert_int_equal(itest_client_connect(c, daemon_.socket), 0);
        json_object_put(itest_client_expect(c, "hello", 5000));

        line = subscribe_line(65535);
        assert_int_equal(itest_client_send(c, line), 0);
        free(line);
        o = itest_client_next(c, 5000);
        assert_non_null(o);
        assert_string_equal(itest_str(o, "type"), "subscribed");
        json_object_put(o);

        line = subscribe_line(65536);
        assert_int_equal(itest_client_send(c, line), 0);
        free(line);
        expect_error_line(c, "line longer than 65535 bytes ignored");
        /* The next line is read as it should be. */
        assert_int_equal(itest_client_send(c, "{\"type\":\"nope\"}\n"), 0);
        o = itest_client_next(c, 5000);
        assert_non_null(o);
        assert_non_null(strstr(itest_str(o, "error"), "unknown message type \"nope\""));
        json_object_put(o);

        assert_int_equal(itest_client_send(c, "{\"type\":\"status\"}"), 0);
        assert_int_equal(shutdown(c->fd, SHUT_WR), 0);
        expect_error_line(c, "line without a newline at the end of the input ignored");
        assert_null(itest_client_next(c, 5000));
        itest_client_close(c);
        free(c);
        assert_int_equal(itest_daemon_stop(&daemon_), 0);
}

/* A subscriber that shuts down its sending side gets what was queued (its
 * subscribed line), then the end of the connection, no events: the
 * documented half-close (doc/protocol.md), while a subscriber that keeps
 * its side open gets the events. */
static void test_half_close(void **state) {
        struct itest_client *half = calloc(1, sizeof(*half)), *open_ = calloc(1, sizeof(*open_));
        static const char sub[] = "{\"type\":\"subscribe\",\"events\":[\"" GETPGID "\"]}\n";
        int64_t events = 0, half_events = 0;
        json_object *o;
        char c;
        pid_t pid;
        int gate;

        start_daemon("{\"max\": 8}");
        for (struct itest_client **k = (struct itest_client *[]) { half, open_, NULL }; *k; k++) {
                assert_int_equal(itest_client_connect(*k, daemon_.socket), 0);
                json_object_put(itest_client_expect(*k, "hello", 5000));
                assert_int_equal(itest_client_send(*k, sub), 0);
        }
        assert_int_equal(shutdown(half->fd, SHUT_WR), 0);
        o = itest_client_expect(half, "subscribed", 5000);
        assert_non_null(o);
        json_object_put(o);
        json_object_put(itest_client_expect(open_, "subscribed", 5000));

        /* The daemon's filter is pid == 1: getpgid(1). */
        pid = itest_spawn_calls(SYS_getpgid, 1, 200, &gate);
        itest_release(gate);
        itest_reap(pid);
        while ((o = itest_client_next(open_, 1000))) {
                events += strcmp(itest_str(o, "type"), "event") == 0;
                json_object_put(o);
        }
        while ((o = itest_client_next(half, 1000))) {
                half_events += strcmp(itest_str(o, "type"), "event") == 0;
                json_object_put(o);
        }
        fprintf(stderr, "half-close: the open subscriber got %" PRId64 " events, the half-closed one %" PRId64 "\n",
                events, half_events);
        assert_true(events >= 200);
        assert_int_equal(half_events, 0);
        /* Ended, not merely quiet. */
        assert_int_equal(read(half->fd, &c, 1), 0);
        itest_client_close(half);
        itest_client_close(open_);
        free(half);
        free(open_);
        assert_int_equal(itest_daemon_stop(&daemon_), 0);
}

/* One client's requests in bulk are answered in turns with the others':
 * 64 KiB of status requests sent at once were all answered before any
 * other client's request (and the rings) had a turn, 50 ms here. B asks
 * right after A's bulk; B's answer must come while A's are still being
 * made (status lines carry evmond's uptime). */
static void test_bulk_requests(void **state) {
        struct itest_client *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
        static const char req[] = "{\"type\":\"status\"}\n";
        size_t n = 65536 / (sizeof(req) - 1), len = n * (sizeof(req) - 1);
        double b_uptime, a_last = 0;
        char *bulk = malloc(len + 1);
        json_object *o, *v;

        assert_non_null(bulk);
        for (size_t i = 0; i < n; i++)
                memcpy(bulk + i * (sizeof(req) - 1), req, sizeof(req) - 1);
        bulk[len] = 0;
        start_daemon("{\"max\": 8}");
        assert_int_equal(itest_client_connect(a, daemon_.socket), 0);
        assert_int_equal(itest_client_connect(b, daemon_.socket), 0);
        json_object_put(itest_client_expect(a, "hello", 5000));
        json_object_put(itest_client_expect(b, "hello", 5000));

        assert_int_equal(itest_client_send(a, bulk), 0);
        assert_int_equal(itest_client_send(b, req), 0);
        o = itest_client_expect(b, "status", 10000);
        assert_non_null(o);
        assert_true(json_object_object_get_ex(o, "uptime_s", &v));
        b_uptime = json_object_get_double(v);
        json_object_put(o);
        for (size_t i = 0; i < n; i++) {
                o = itest_client_expect(a, "status", 10000);
                assert_non_null(o);
                assert_true(json_object_object_get_ex(o, "uptime_s", &v));
                a_last = json_object_get_double(v);
                json_object_put(o);
        }
        fprintf(stderr, "bulk: %zu status requests answered by %.6f s, the other client's at %.6f s\n", n, a_last,
                b_uptime);
        if (b_uptime >= a_last)
                fail_msg("the other client's request waited for all %zu of the bulk's answers", n);
        itest_client_close(a);
        itest_client_close(b);
        free(a);
        free(b);
        free(bulk);
        assert_int_equal(itest_daemon_stop(&daemon_), 0);
}

/* A child that sends status requests without pause, 16 KiB at a time,
 * reading each batch's answers before the next, until killed. */
static pid_t spam_status(void) {
        pid_t pid = itest_fork();

        assert_true(pid >= 0);
        if (pid == 0) {
                static const char req[] = "{\"type\":\"status\"}\n";
                enum { N = 16384 / (sizeof(req) - 1) };
                struct itest_client *c = calloc(1, sizeof(*c));
                char *bulk = calloc(N, sizeof(req) - 1);
                json_object *o;

                if (!c || !bulk || itest_client_connect(c, daemon_.socket) < 0)
                        _exit(100);
                for (size_t i = 0; i < N; i++)
                        memcpy(bulk + i * (sizeof(req) - 1), req, sizeof(req) - 1);
                if (itest_client_send(c, "{\"type\":\"subscribe\",\"events\":[]}\n") < 0)
                        _exit(101);
                for (;;) {
                        if (write(c->fd, bulk, N * (sizeof(req) - 1)) != (ssize_t) (N * (sizeof(req) - 1)))
                                _exit(102);
                        for (size_t i = 0; i < N; i++) {
                                o = itest_client_expect(c, "status", 30000);
                                if (!o)
                                        _exit(103);
                                json_object_put(o);
                        }
                }
        }
        return pid;
}

/* Clients that send requests without pause leave room for new ones: they
 * kept every connection waiting (the listening socket comes after the
 * clients' io, and theirs was always pending). */
static void test_bulk_accept(void **state) {
        struct itest_client *c = calloc(1, sizeof(*c));
        json_object *o;
        pid_t spam[4];

        start_daemon("{\"max\": 8}");
        for (int i = 0; i < 4; i++)
                spam[i] = spam_status();
        usleep(500000);
        for (int i = 0; i < 5; i++) {
                uint64_t start = now_ms();

                assert_int_equal(itest_client_connect(c, daemon_.socket), 0);
                o = itest_client_next(c, 5000);
                if (!o)
                        fail_msg("no hello in 5 s while four clients sent status requests");
                json_object_put(o);
                fprintf(stderr, "bulk: hello after %" PRIu64 " ms\n", now_ms() - start);
                itest_client_close(c);
                usleep(100000);
        }
        for (int i = 0; i < 4; i++) {
                int status;

                assert_int_equal(waitpid(spam[i], &status, WNOHANG), 0);   /* still asking */
                kill(spam[i], SIGKILL);
                assert_int_equal(waitpid(spam[i], &status, 0), spam[i]);
        }
        free(c);
        assert_int_equal(itest_daemon_stop(&daemon_), 0);
}

/* ---- connections per uid -------------------------------------------- */

/* A child as UID holding N connections; writes, per connection, 'h' for a
 * hello or 'e' for an error line mentioning WANT to FD, then waits for
 * SIGTERM. */
static pid_t hold_as(uid_t uid, int n, int fd) {
        pid_t pid = fork();

        assert_true(pid >= 0);
        if (pid == 0) {
                struct itest_client *c = calloc((size_t) n, sizeof(*c));

                if (!c || setgroups(0, NULL) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
                    setresuid(uid, uid, uid) < 0)
                        _exit(100);
                for (int i = 0; i < n; i++) {
                        json_object *o;
                        char k = '?';

                        if (itest_client_connect(&c[i], daemon_.socket) == 0 && (o = itest_client_next(&c[i], 5000))) {
                                if (strcmp(itest_str(o, "type"), "hello") == 0)
                                        k = 'h';
                                else if (strcmp(itest_str(o, "type"), "error") == 0)
                                        k = strstr(itest_str(o, "error"), "max_per_uid") ? 'u' :
                                            strstr(itest_str(o, "error"), "kept for root") ? 'k' : 'e';
                                json_object_put(o);
                        }
                        (void) !write(fd, &k, 1);
                }
                pause();
                _exit(0);
        }
        return pid;
}

static void expect_holds(int fd, const char *want) {
        char got[64] = "";
        size_t n = strlen(want), have = 0;

        while (have < n) {
                ssize_t k = read(fd, got + have, n - have);
                assert_true(k > 0);
                have += (size_t) k;
        }
        assert_string_equal(got, want);
}

static void test_per_uid(void **state) {
        struct itest_client *root = calloc(2, sizeof(*root));
        pid_t a, b, c;
        json_object *o;
        int p[2];

        /* 8 places: one uid holds 4 at the most, and the last (8 / 8) is
         * root's and the admins'. */
        start_daemon("{\"max\": 8, \"max_per_uid\": 4}");
        assert_int_equal(pipe(p), 0);
        a = hold_as(NOBODY, 5, p[1]);
        expect_holds(p[0], "hhhhu");
        b = hold_as(NOBODY - 1, 4, p[1]);
        expect_holds(p[0], "hhhk");
        c = hold_as(NOBODY - 2, 1, p[1]);
        expect_holds(p[0], "k");
        /* 7 taken: root still gets in, then clients.max holds for root too. */
        assert_int_equal(itest_client_connect(&root[0], daemon_.socket), 0);
        o = itest_client_next(&root[0], 5000);
        assert_non_null(o);
        assert_string_equal(itest_str(o, "type"), "hello");
        json_object_put(o);
        assert_int_equal(itest_client_connect(&root[1], daemon_.socket), 0);
        o = itest_client_next(&root[1], 5000);
        assert_non_null(o);
        assert_string_equal(itest_str(o, "type"), "error");
        assert_non_null(strstr(itest_str(o, "error"), "clients.max"));
        json_object_put(o);
        for (pid_t *k = (pid_t[]) { a, b, c, 0 }; *k; k++) {
                int status;

                kill(*k, SIGTERM);
                assert_int_equal(waitpid(*k, &status, 0), *k);
        }
        close(p[0]);
        close(p[1]);
        itest_client_close(&root[0]);
        itest_client_close(&root[1]);
        free(root);
        assert_int_equal(itest_daemon_stop(&daemon_), 0);
}

/* ---- log lines about clients ---------------------------------------- */

#define FLOOD_CONNECTIONS 300
/* evmond's budget of log lines per uid (server.c). */
#define LOG_BURST 20
#define LOG_PER_SEC 5

/* A child as uid 65534 connecting FLOOD_CONNECTIONS times, each time
 * sending a reload it may not (refused, logged) and hanging up; writes
 * how many connections got a hello and how many an error to FD. */
static pid_t flood_as_nobody(int fd) {
        pid_t pid = itest_fork();

        assert_true(pid >= 0);
        if (pid == 0) {
                struct itest_client *c = calloc(1, sizeof(*c));
                unsigned counts[2] = { 0, 0 };

                if (!c || setgroups(0, NULL) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
                    setresuid(NOBODY, NOBODY, NOBODY) < 0)
                        _exit(100);
                for (int i = 0; i < FLOOD_CONNECTIONS; i++) {
                        json_object *o;

                        if (itest_client_connect(c, daemon_.socket) < 0 || !(o = itest_client_next(c, 5000)))
                                _exit(101);
                        if (strcmp(itest_str(o, "type"), "hello") == 0) {
                                json_object_put(o);
                                if (itest_client_send(c, "{\"type\":\"reload\"}\n") < 0 ||
                                    !(o = itest_client_expect(c, "error", 5000)))
                                        _exit(102);
                                counts[0]++;
                        } else
                                counts[1]++;    /* clients.max_per_uid: the last ones not gone yet */
                        json_object_put(o);
                        itest_client_close(c);
                }
                _exit(write(fd, counts, sizeof(counts)) == sizeof(counts) ? 0 : 103);
        }
        return pid;
}

/* Lines of LOG about clients of uid 65534, and the sum of the counts
 * the "Suppressed" lines give for it. */
static void count_nobody_lines(const char *log, int64_t *ret_logged, int64_t *ret_suppressed) {
        int64_t logged = 0, suppressed = 0;

        for (const char *l = log; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
                const char *end = strchr(l, '\n') ?: l + strlen(l), *p = l;
                char line[1024];

                snprintf(line, sizeof(line), "%.*s", (int) (end - l), l);
                if (!strstr(line, "uid 65534"))
                        continue;
                if ((p = strstr(line, "Suppressed "))) {
                        assert_non_null(strstr(line, "log lines about clients of uid 65534"));
                        suppressed += strtoll(p + strlen("Suppressed "), NULL, 10);
                } else
                        logged++;
        }
        *ret_logged = logged;
        *ret_suppressed = suppressed;
}

/* Each connection and each refused request was a log line, so any local
 * user could flood the journal until journald's rate limit dropped
 * evmond's own lines. A uid's lines now come LOG_BURST at once, then
 * LOG_PER_SEC a second, the rest counted in "Suppressed" lines; the
 * first ones, and another uid's, are kept. */
static void test_log_flood(void **state) {
        struct itest_client *root = calloc(1, sizeof(*root));
        unsigned counts[2];
        int64_t first, after, logged, suppressed, total;
        uint64_t start;
        char *log, want[128];
        json_object *o;
        int p[2], status;
        pid_t pid;
        double secs;

        start_daemon("{\"max\": 64}");
        assert_int_equal(itest_client_connect(root, daemon_.socket), 0);
        o = itest_client_expect(root, "hello", 5000);
        assert_non_null(o);
        first = itest_int(o, "client") + 1;     /* the flood's first connection */
        json_object_put(o);
        itest_client_close(root);

        assert_int_equal(pipe(p), 0);
        start = now_ms();
        pid = flood_as_nobody(p[1]);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        assert_int_equal(read(p[0], counts, sizeof(counts)), (ssize_t) sizeof(counts));
        close(p[0]);
        close(p[1]);
        fprintf(stderr, "log flood: %u connections served, %u refused in %.2f s\n", counts[0], counts[1],
                (now_ms() - start) / 1000.0);

        /* Root's connection after the flood is logged. */
        assert_int_equal(itest_client_connect(root, daemon_.socket), 0);
        o = itest_client_expect(root, "hello", 5000);
        assert_non_null(o);
        after = itest_int(o, "client");
        json_object_put(o);
        itest_client_close(root);
        free(root);
        /* The once-a-second tick says what was held back, evmond running. */
        usleep(2500000);
        log = read_file(daemon_.log);
        if (!strstr(log, "log lines about clients of uid 65534"))
                fail_msg("no Suppressed line 2.5 s after the flood:\n%.4000s", log);
        free(log);
        assert_int_equal(itest_daemon_stop(&daemon_), 0);
        secs = (now_ms() - start) / 1000.0;

        log = read_file(daemon_.log);
        count_nobody_lines(log, &logged, &suppressed);
        /* Connected, refused, disconnected for each served; refused for
         * the others. */
        total = 3 * (int64_t) counts[0] + counts[1];
        fprintf(stderr, "log flood: %" PRId64 " lines about uid 65534's clients, %" PRId64 " logged, %" PRId64
                " suppressed, in %.1f s\n", total, logged, suppressed, secs);
        assert_int_equal(logged + suppressed, total);
        if (logged > LOG_BURST + LOG_PER_SEC * (int64_t) (secs + 1))
                fail_msg("%" PRId64 " lines logged in %.1f s: more than %d, then %d a second", logged, secs, LOG_BURST,
                         LOG_PER_SEC);
        assert_true(logged >= LOG_BURST);
        /* The first ones are kept, and another uid's. */
        snprintf(want, sizeof(want), "Client %" PRId64 " connected: pid %d, uid 65534", first, (int) pid);
        if (!strstr(log, want))
                fail_msg("the flood's first connection is not logged (%s)", want);
        snprintf(want, sizeof(want), "Client %" PRId64 " connected: pid %d, uid 0", after, (int) getpid());
        if (!strstr(log, want))
                fail_msg("root's connection after the flood is not logged (%s)", want);
        free(log);
}

#define ADMIN_RELOADS 100
#define ADMIN_SWITCHES 100

/* Sends REQUEST on C and waits for its answer, TYPE; anything else than
 * the config lines a change announces first is trouble. */
static int admin_request(struct itest_client *c, const char *request, const char *type) {
        json_object *o;
        int r;

        if (itest_client_send(c, request) < 0)
                return -1;
        while ((o = itest_client_next(c, 10000)) && strcmp(itest_str(o, "type"), "config") == 0)
                json_object_put(o);
        if (!o)
                return -1;
        r = strcmp(itest_str(o, "type"), type) == 0 ? 0 : -1;
        if (r < 0)
                fprintf(stderr, "%s: %s\n", request, json_object_to_json_string(o));
        json_object_put(o);
        return r;
}

/* A child as uid 65534 in socket.admin_group: one connection,
 * ADMIN_RELOADS reloads and ADMIN_SWITCHES disables and enables, each
 * answered. */
static pid_t flood_as_admin(void) {
        pid_t pid = itest_fork();

        assert_true(pid >= 0);
        if (pid == 0) {
                struct itest_client *c = calloc(1, sizeof(*c));
                json_object *o;

                if (!c || setgroups(1, &gid) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
                    setresuid(NOBODY, NOBODY, NOBODY) < 0)
                        _exit(100);
                if (itest_client_connect(c, daemon_.socket) < 0 || !(o = itest_client_expect(c, "hello", 5000)))
                        _exit(101);
                json_object_put(o);
                for (int i = 0; i < ADMIN_RELOADS; i++)
                        if (admin_request(c, "{\"type\":\"reload\"}\n", "reload") < 0)
                                _exit(102);
                for (int i = 0; i < ADMIN_SWITCHES; i++)
                        if (admin_request(c, "{\"type\":\"disable\"}\n", "result") < 0 ||
                            admin_request(c, "{\"type\":\"enable\"}\n", "result") < 0)
                                _exit(103);
                itest_client_close(c);
                _exit(0);
        }
        return pid;
}

/* Root and socket.admin_group had no budget: each reload was two lines
 * (asked, done), each disable or enable one, so an admin's script in a
 * loop flooded the journal as a refused user no longer could. The same
 * budget holds for them: LOG_BURST at once, then LOG_PER_SEC a second,
 * the rest counted; the first ones kept, and another uid's. */
static void test_admin_log_flood(void **state) {
        struct itest_client *root = calloc(1, sizeof(*root));
        int64_t logged = 0, suppressed = 0, total, after;
        uint64_t start;
        char *log, want[128];
        json_object *o;
        int status;
        pid_t pid;
        double secs;

        start_daemon("{\"max\": 64}");
        start = now_ms();
        pid = flood_as_admin();
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        fprintf(stderr, "admin log flood: %d reloads, %d disables and enables in %.2f s\n", ADMIN_RELOADS,
                2 * ADMIN_SWITCHES, (now_ms() - start) / 1000.0);

        /* Root's connection after the flood is logged. */
        assert_int_equal(itest_client_connect(root, daemon_.socket), 0);
        o = itest_client_expect(root, "hello", 5000);
        assert_non_null(o);
        after = itest_int(o, "client");
        json_object_put(o);
        itest_client_close(root);
        free(root);
        usleep(2500000);
        assert_int_equal(itest_daemon_stop(&daemon_), 0);
        secs = (now_ms() - start) / 1000.0;

        log = read_file(daemon_.log);
        /* The lines naming uid 65534, and "Reloaded" (a reload's last
         * line; nobody else reloads here). */
        count_nobody_lines(log, &logged, &suppressed);
        for (const char *l = log; (l = strstr(l, "Reloaded ")); l++)
                logged++;
        /* Connected, disconnected; asked and done per reload; one line
         * per disable and enable. */
        total = 2 + 2 * ADMIN_RELOADS + 2 * ADMIN_SWITCHES;
        fprintf(stderr, "admin log flood: %" PRId64 " lines caused by uid 65534, %" PRId64 " logged, %" PRId64
                " suppressed, in %.1f s\n", total, logged, suppressed, secs);
        if (logged > LOG_BURST + LOG_PER_SEC * (int64_t) (secs + 1))
                fail_msg("%" PRId64 " lines logged in %.1f s: more than %d, then %d a second", logged, secs, LOG_BURST,
                         LOG_PER_SEC);
        assert_int_equal(logged + suppressed, total);
        assert_true(logged >= LOG_BURST);
        /* The first ones are kept, and another uid's. */
        snprintf(want, sizeof(want), "asked by uid 65534 (pid %d)", (int) pid);
        if (!strstr(log, want))
                fail_msg("the flood's first reload is not logged (%s)", want);
        snprintf(want, sizeof(want), "Client %" PRId64 " connected: pid %d, uid 0", after, (int) getpid());
        if (!strstr(log, want))
                fail_msg("root's connection after the flood is not logged (%s)", want);
        free(log);
}

/* ---- what is at the socket path ------------------------------------- */

static int run_evmond(const char *dir, const char *sock, char **ret) {
        char evmond[512], config[600];
        FILE *f;

        snprintf(config, sizeof(config), "%s/evmond.json", dir);
        f = fopen(config, "we");
        assert_non_null(f);
        fputs("{\"events\": [{\"tracepoint\": \"" GETPGID "\", \"filter\": \"pid == 1\"}]}\n", f);
        fclose(f);
        itest_build_path("evmond", evmond, sizeof(evmond));
        const char *argv[] = { evmond, "--config", config, "--socket", sock, NULL };
        return itest_run(argv, 20000, ret);
}

static void make_socket(const char *path, uid_t owner) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_STREAM, 0);

        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
        assert_true(fd >= 0);
        assert_int_equal(bind(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        close(fd);      /* nothing listens: stale */
        assert_int_equal(chown(path, owner, (gid_t) -1), 0);
}

static void test_socket_path(void **state) {
        char dir[] = "/tmp/evmon-itest-path-XXXXXX", sock[128], *out = NULL, *text;
        struct itest_client *c = calloc(1, sizeof(*c));
        struct stat st;
        FILE *f;

        assert_non_null(mkdtemp(dir));
        snprintf(sock, sizeof(sock), "%s/evmond.sock", dir);

        /* A regular file: left as it was. */
        f = fopen(sock, "we");
        assert_non_null(f);
        fputs("precious\n", f);
        fclose(f);
        assert_int_not_equal(run_evmond(dir, sock, &out), 0);
        fprintf(stderr, "%s", out);
        assert_non_null(strstr(out, sock));
        assert_non_null(strstr(out, "is not a socket (a regular file)"));
        free(out);
        text = read_file(sock);
        assert_string_equal(text, "precious\n");
        free(text);
        assert_int_equal(unlink(sock), 0);

        /* Another user's socket: left too. */
        make_socket(sock, NOBODY);
        assert_int_not_equal(run_evmond(dir, sock, &out), 0);
        fprintf(stderr, "%s", out);
        assert_non_null(strstr(out, "is a socket of uid 65534"));
        free(out);
        assert_int_equal(lstat(sock, &st), 0);
        assert_true(S_ISSOCK(st.st_mode) && st.st_uid == NOBODY);
        assert_int_equal(unlink(sock), 0);

        /* A stale socket of ours goes, and a live evmond is left alone. */
        make_socket(sock, geteuid());
        start_daemon("{\"max\": 8}");
        assert_int_not_equal(run_evmond(daemon_.dir, daemon_.socket, &out), 0);
        fprintf(stderr, "%s", out);
        assert_non_null(strstr(out, "another evmond"));
        assert_non_null(strstr(out, daemon_.socket));
        free(out);
        assert_int_equal(itest_client_connect(c, daemon_.socket), 0);
        json_object_put(itest_client_expect(c, "hello", 5000));
        itest_client_close(c);
        assert_int_equal(itest_daemon_stop(&daemon_), 0);
        free(c);
        (void) unlink(sock);
        (void) rmdir(dir);
}

int main(void) {
        static const char *const need[] = { "syscalls/sys_enter_getpgid", NULL };
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_teardown(test_status_flood, teardown),
                cmocka_unit_test_teardown(test_reload_admin_only, teardown),
                cmocka_unit_test_teardown(test_request_lines, teardown),
                cmocka_unit_test_teardown(test_half_close, teardown),
                cmocka_unit_test_teardown(test_bulk_requests, teardown),
                cmocka_unit_test_teardown(test_bulk_accept, teardown),
                cmocka_unit_test_teardown(test_per_uid, teardown),
                cmocka_unit_test_teardown(test_log_flood, teardown),
                cmocka_unit_test_teardown(test_admin_log_flood, teardown),
                cmocka_unit_test_teardown(test_socket_path, teardown),
        };

        itest_require(need);
        return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
