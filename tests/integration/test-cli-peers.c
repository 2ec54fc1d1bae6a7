/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* evmonctl's client commands (watch, status, reload, request, decode)
 * without a healthy evmond, as any user: no daemon at all, a stand-in
 * that answers behind a busy stream, peers that are not evmond, a
 * refused or cut watch, --socket naming something else, and watch's
 * stdout closed or full. */

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pty.h>
#include <regex.h>
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
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "evmon/io.h"
#include "evmon/tracefs.h"
#include "cli.h"
#include "itest.h"

/* Without a daemon, the commands that need one say so and exit 1. */
static void test_no_daemon(void **state) {
        static const char *const cmds[] = { "status", "watch" };
        _cleanup_(freep) char *sock = NULL;

        assert_true(asprintf(&sock, "%s/no-daemon.sock", tmpdir) >= 0);
        for (size_t i = 0; i < ELEMENTSOF(cmds); i++) {
                struct result r;

                run(&r, 0, evmonctl, cmds[i], "--socket", sock, NULL);
                expect_status(&r, 1, cmds[i]);
                assert_non_null(strstr(r.err, "cannot connect to evmond at"));
                assert_non_null(strstr(r.err, sock));
                assert_non_null(strstr(r.err, "is evmond running?"));
                result_done(&r);
        }
}

#define SMALL_LINE "{\"type\":\"event\",\"event\":\"sched:sched_process_exec\",\"fields\":{}}\n"

/* A stand-in for evmond answering a reload behind a busy stream, on one
 * connection to LISTENER: the hello; after the request line, an event line
 * one byte short of evmonctl's 1 MiB line buffer (its end and the next
 * line's start in one write, so the read that completes it fills the
 * buffer to the last byte), N_SMALL short event lines, then the answer. */
static void fake_daemon(int listener, size_t n_small) {
        static const char hello[] = "{\"type\":\"hello\",\"version\":1,\"events\":[\"sched:sched_process_exec\"]}\n";
        static const char answer[] = "{\"type\":\"reload\",\"ok\":true,\"events\":[\"sched:sched_process_exec\"]}\n";
        static const char head[] = "{\"type\":\"event\",\"event\":\"sched:sched_process_exec\",\"fields\":{\"s\":\"";
        const size_t big = (1u << 20) - 1, tail = 1000;        /* the big line, newline included; its bytes written last */
        char *buf = malloc(big + sizeof(SMALL_LINE)), c;
        int fd = accept4(listener, NULL, NULL, SOCK_CLOEXEC);

        if (!buf || fd < 0 || loop_write(fd, hello, sizeof(hello) - 1) < 0)
                _exit(1);
        do
                if (read(fd, &c, 1) != 1)
                        _exit(1);
        while (c != '\n');
        memset(buf, 'a', big);
        memcpy(buf, head, sizeof(head) - 1);
        memcpy(buf + big - 4, "\"}}\n", 4);
        memcpy(buf + big, SMALL_LINE, sizeof(SMALL_LINE) - 1);
        if (loop_write(fd, buf, big - tail) < 0 || loop_write(fd, buf + big - tail, tail + sizeof(SMALL_LINE) - 1) < 0)
                _exit(1);
        for (size_t i = 1; i < n_small; i++)
                if (loop_write(fd, SMALL_LINE, sizeof(SMALL_LINE) - 1) < 0)
                        _exit(1);
        _exit(loop_write(fd, answer, sizeof(answer) - 1) < 0);
}

/* evmonctl finds the answer behind whatever lines come first, each line
 * parsed by its length: json_tokener_parse() ran strlen() from each line
 * on past the buffer's end once a read had filled it (ASan: a
 * global-buffer-overflow), and through the stale rest of the buffer for
 * every later line (2.4 s against 0.27 s for these 200,000 here). */
static void test_answer_behind_lines(void **state) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_(closep) int listener = -1;
        struct result r;
        uint64_t start, ms;
        int status;
        pid_t pid;

        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/fake.sock", tmpdir);
        listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(listener >= 0);
        assert_int_equal(bind(listener, (struct sockaddr *) &sa, sizeof(sa)), 0);
        assert_int_equal(listen(listener, 1), 0);
        pid = itest_fork();
        assert_true(pid >= 0);
        if (pid == 0)
                fake_daemon(listener, 200000);
        start = now_ms();
        run(&r, 0, evmonctl, "reload", "--socket", sa.sun_path, NULL);
        ms = now_ms() - start;
        kill(pid, SIGKILL);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        expect_status(&r, 0, "evmonctl reload behind 13 MB of event lines");
        assert_non_null(strstr(r.out, "\"ok\": true"));
        fprintf(stderr, "evmonctl reload behind 13 MB of event lines: %" PRIu64 " ms\n", ms);
        /* A few seconds under the sanitizers on a busy host. */
        if (ms > 30000)
                fail_msg("evmonctl took %" PRIu64 " ms to find its answer", ms);
        result_done(&r);
}

/* ---- evmonctl against peers that are not a healthy evmond (any user) --- */

/* A listening socket NAME in our temp dir, and a child that accepts one
 * connection on it, writes SEND, then holds the connection HOLD_MS
 * before it closes it (and exits). */
static pid_t fake_peer(const char *name, const char *send, int hold_ms, char *ret_path, size_t size) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int listener;
        pid_t pid;

        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s", tmpdir, name);
        snprintf(ret_path, size, "%s", sa.sun_path);
        unlink(sa.sun_path);
        listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(listener >= 0);
        assert_int_equal(bind(listener, (struct sockaddr *) &sa, sizeof(sa)), 0);
        assert_int_equal(listen(listener, 1), 0);
        pid = itest_fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                int fd = accept4(listener, NULL, NULL, SOCK_CLOEXEC);

                if (fd < 0 || loop_write(fd, send, strlen(send)) < 0)
                        _exit(1);
                usleep((useconds_t) hold_ms * 1000);
                _exit(0);
        }
        close(listener);
        return pid;
}

static void fake_peer_done(pid_t pid) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
}

#define HELLO_LINE "{\"type\":\"hello\",\"version\":1,\"events\":[\"sched:sched_process_exec\",\"sched:sched_process_exit\"]}\n"
#define EXEC_LINE "{\"type\":\"event\",\"event\":\"sched:sched_process_exec\",\"time\":\"2026-11-21T10:23:00.123456789Z\"," \
                  "\"ts\":1,\"cpu\":0,\"pid\":1,\"tid\":1,\"fields\":{\"filename\":\"/x\",\"pid\":1,\"old_pid\":1}}\n"

/* Whatever answers on the socket, evmonctl says what it is and what to
 * do, and exits 1: it took a peer that is not evmond for one (watch
 * printed an HTTP server's answer and exited 0; status waited for good
 * on one that said nothing evmond says), read on past a protocol version
 * it does not know (doc/protocol.md: say so and stop), and watch exited
 * 0 without a word when evmond stopped. */
static void test_not_evmond(void **state) {
        static const struct {
                const char *send;
                const char *cmd;
                int hold_ms;
                const char *says;
                const char *out;        /* on stdout, or NULL for nothing */
        } cases[] = {
                { "HTTP/1.1 400 Bad Request\r\n\r\n", "watch", 0,
                  "is not evmond's socket: its first line is \"HTTP/1.1 400 Bad Request\"", NULL },
                { "HTTP/1.1 400 Bad Request\r\n\r\n", "status", 0,
                  "is not evmond's socket: its first line is \"HTTP/1.1 400 Bad Request\"", NULL },
                { "{\"type\":\"hello\",\"version\":2,\"events\":[]}\n", "watch", 10000,
                  "speaks protocol version 2; this evmonctl speaks version 1", NULL },
                { "{\"type\":\"hello\",\"version\":2,\"events\":[]}\n", "status", 10000,
                  "speaks protocol version 2; this evmonctl speaks version 1", NULL },
                { "{\"type\":\"error\",\"error\":\"too many connections of uid 0 (clients.max_per_uid 16)\"}\n", "status", 0,
                  "refused the connection: too many connections of uid 0", NULL },
                /* evmond stopped mid-watch: what came is printed, then
                 * the word, exit 1. */
                { HELLO_LINE EXEC_LINE, "watch", 0, "closed the connection (it stopped or restarted", "sched:sched_process_exec" },
                { HELLO_LINE, "status", 0, "closed the connection without answering status", NULL },
                /* A refused reload: the reason on stderr too (it was in
                 * the JSON on stdout only). */
                { HELLO_LINE "{\"type\":\"reload\",\"ok\":false,\"error\":\"cfg.json:3: ring.pages changed\"}\n", "reload",
                  10000, "refused the reload: cfg.json:3: ring.pages changed", "\"ok\": false" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char path[PATH_MAX];
                pid_t peer = fake_peer("peer.sock", cases[i].send, cases[i].hold_ms, path, sizeof(path));
                struct result r;

                run(&r, 0, evmonctl, cases[i].cmd, "--json", "--socket", path, NULL);
                fake_peer_done(peer);
                if (r.status != 1 || !strstr(r.err, cases[i].says) || !strstr(r.err, path) ||
                    (cases[i].out ? !strstr(r.out, cases[i].out) : *r.out != 0))
                        fail_msg("evmonctl %s against a peer that sends %s: exit %d, wanted 1 and \"%s\" on stderr%s%s\n"
                                 "stdout:\n%s\nstderr:\n%s", cases[i].cmd, cases[i].send, r.status, cases[i].says,
                                 cases[i].out ? ", on stdout " : ", nothing on stdout", cases[i].out ?: "", r.out, r.err);
                result_done(&r);
        }

        /* A stream without a line end: named after 64 KiB (it was read
         * into a buffer of up to 256 MiB first). */
        {
                char path[PATH_MAX], *send = malloc(200001);
                struct result r;
                pid_t peer;

                assert_non_null(send);
                memset(send, 'x', 200000);
                send[200000] = 0;
                peer = fake_peer("stream.sock", send, 10000, path, sizeof(path));
                free(send);
                run(&r, 0, evmonctl, "status", "--socket", path, NULL);
                fake_peer_done(peer);
                expect_status(&r, 1, "evmonctl status against a stream without a line end");
                assert_non_null(strstr(r.err, "is not evmond's socket: its first line is \"xxxx"));
                result_done(&r);
        }
}

/* A one-shot request subscribes to no event first: without a
 * subscription evmond sends the client every event it serves, which
 * status, reload and the runtime requests read past to their answer
 * (megabytes on a busy host, test_answer_behind_lines). */
static void test_request_subscribes_to_nothing(void **state) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_(closep) int listener = -1;
        _cleanup_(freep) char *got = NULL;
        char got_path[PATH_MAX];
        struct result r;
        pid_t pid;

        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/record.sock", tmpdir);
        snprintf(got_path, sizeof(got_path), "%s/record.got", tmpdir);
        listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(listener >= 0);
        assert_int_equal(bind(listener, (struct sockaddr *) &sa, sizeof(sa)), 0);
        assert_int_equal(listen(listener, 1), 0);
        pid = itest_fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                /* Records what evmonctl sends up to its status request,
                 * then answers it. */
                static const char answer[] = "{\"type\":\"status\",\"events\":[]}\n";
                char buf[4096];
                size_t n = 0;
                int fd = accept4(listener, NULL, NULL, SOCK_CLOEXEC), out;

                if (fd < 0 || loop_write(fd, HELLO_LINE, strlen(HELLO_LINE)) < 0)
                        _exit(1);
                while (n < sizeof(buf) - 1 && !memmem(buf, n, "\"status\"", 8)) {
                        ssize_t k = read(fd, buf + n, sizeof(buf) - 1 - n);
                        if (k <= 0)
                                _exit(1);
                        n += (size_t) k;
                }
                out = open(got_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                if (out < 0 || loop_write(out, buf, n) < 0 || loop_write(fd, answer, sizeof(answer) - 1) < 0)
                        _exit(1);
                _exit(0);
        }
        run(&r, 0, evmonctl, "status", "--socket", sa.sun_path, NULL);
        waitpid(pid, NULL, 0);
        expect_status(&r, 0, "evmonctl status");
        result_done(&r);
        got = read_file(got_path);
        assert_non_null(got);
        assert_string_equal(got, "{\"type\":\"subscribe\",\"events\":[],\"client\":\"evmonctl-status\"}\n"
                                 "{\"type\":\"status\"}\n");
}

/* A line longer than evmonctl's first buffer (1 MiB) goes through
 * whole: watch exited 1, "a line longer than 1048576 bytes". */
static void test_watch_long_line(void **state) {
        static const char head[] = "{\"type\":\"event\",\"event\":\"sched:sched_process_exec\",\"fields\":{\"s\":\"";
        const size_t big = (1u << 20) + (1u << 19);     /* past the first buffer */
        char path[PATH_MAX], *send = malloc(sizeof(HELLO_LINE) + big + 1);
        struct result r;
        pid_t peer;

        assert_non_null(send);
        strcpy(send, HELLO_LINE);
        memset(send + strlen(HELLO_LINE), 'a', big);
        memcpy(send + strlen(HELLO_LINE), head, strlen(head));
        strcpy(send + strlen(HELLO_LINE) + big - 4, "\"}}\n");
        peer = fake_peer("long.sock", send, 0, path, sizeof(path));
        free(send);
        run(&r, 0, evmonctl, "watch", "--json", "--socket", path, NULL);
        fake_peer_done(peer);
        /* evmond's end of the connection ends the watch (exit 1), after
         * the line. */
        expect_status(&r, 1, "evmonctl watch of a 1.5 MiB line");
        assert_int_equal(strlen(r.out), strlen(HELLO_LINE) + big);
        assert_non_null(strstr(r.err, "closed the connection"));
        result_done(&r);
}

/* decode - with a terminal on standard input is refused at once: it
 * waited for perf.data typed in. */
static void test_decode_stdin_terminal(void **state) {
        char *argv[] = { evmonctl, "decode", "-", NULL };
        struct child c;
        char *line;

        spawn(&c, RUN_PTY, argv);
        line = child_line(&c, 5000);
        if (!line || !strstr(line, "standard input is a terminal"))
                fail_msg("evmonctl decode - on a terminal said \"%s\"", line ?: "(nothing within 5 s)");
        free(line);
        assert_int_equal(child_wait(&c, 5000), 2);
        child_close(&c);
}

/* Lines evmond sent before it took watch's subscription: the events are
 * left out (not asked for), a schema line is kept (evmond sends it once
 * per client, not again after the subscription). */
static void test_watch_before_subscribed(void **state) {
        char path[PATH_MAX];
        pid_t peer = fake_peer("before.sock",
                               HELLO_LINE
                               "{\"type\":\"schema\",\"event\":\"sched:sched_process_exec\",\"fields\":[]}\n"
                               EXEC_LINE
                               "{\"type\":\"subscribed\",\"events\":[\"sched:sched_process_exec\"]}\n"
                               EXEC_LINE, 0, path, sizeof(path));
        struct result r;
        const char *p;
        int n = 0;

        run(&r, 0, evmonctl, "watch", "--json", "--socket", path, "sched:sched_process_exec", NULL);
        fake_peer_done(peer);
        expect_status(&r, 1, "evmonctl watch (evmond gone at the end)");
        for (p = r.out; (p = strstr(p, "\"type\":\"event\"")); p++)
                n++;
        if (n != 1 || !strstr(r.out, "\"type\":\"schema\"") || strstr(r.out, "\"type\":\"event\"") < strstr(r.out, "subscribed"))
                fail_msg("evmonctl watch printed, of a schema, an event before the subscription and one after:\n%s", r.out);
        result_done(&r);
}

/* evmonctl watch EVENT that evmond refuses to subscribe to: the error,
 * exit 1, and none of the lines evmond sends a client with no
 * subscription (it went on printing every event evmond serves). */
static void test_watch_refused(void **state) {
        char path[PATH_MAX];
        pid_t peer = fake_peer("refuse.sock",
                               HELLO_LINE EXEC_LINE
                               "{\"type\":\"error\",\"error\":\"subscribe: no event \\\"sched:nope\\\" is served here\"}\n"
                               EXEC_LINE, 10000, path, sizeof(path));
        struct result r;

        run(&r, 0, evmonctl, "watch", "--json", "--socket", path, "sched:nope", NULL);
        fake_peer_done(peer);
        expect_status(&r, 1, "evmonctl watch sched:nope");
        assert_non_null(strstr(r.err, "evmond says: subscribe: no event \"sched:nope\" is served here"));
        if (strstr(r.out, "\"type\":\"event\""))
                fail_msg("evmonctl watch sched:nope printed events it did not ask for:\n%s", r.out);
        result_done(&r);
}

/* --socket naming something that is not a socket says so, not
 * "Connection refused (is evmond running?)". */
static void test_socket_not_socket(void **state) {
        const char *file = config_file("not-a-socket", "hello\n");
        const char *const paths[] = { file, tmpdir };
        struct result r;

        for (size_t i = 0; i < ELEMENTSOF(paths); i++) {
                run(&r, 0, evmonctl, "status", "--socket", paths[i], NULL);
                expect_status(&r, 1, "evmonctl status --socket (not a socket)");
                if (!strstr(r.err, paths[i]) || !strstr(r.err, "not a socket") || strstr(r.err, "refused"))
                        fail_msg("evmonctl status --socket %s: \"%s\", wanted it named as no socket", paths[i], r.err);
                result_done(&r);
        }
}

/* Standard output that takes nothing: a reader gone (`| head -1`) ends
 * watch at once and quietly, exit 0, though evmond is quiet (it waited
 * for the next event to notice); a full disk is said, exit 1 (it blamed
 * "reading from evmond"). */
static void test_watch_stdout(void **state) {
        char path[PATH_MAX], *line;
        _cleanup_(freep) char *cmd = NULL;
        struct child c;
        struct result r;
        uint64_t start;
        pid_t peer;
        int status;

        peer = fake_peer("quiet.sock", HELLO_LINE, 20000, path, sizeof(path));
        {
                char *argv[] = { evmonctl, "watch", "--json", "--socket", path, NULL };
                spawn(&c, 0, argv);
        }
        line = child_line(&c, 5000);
        assert_non_null(line);
        assert_non_null(strstr(line, "\"hello\""));
        free(line);
        close(c.out);
        c.out = -1;
        start = now_ms();
        status = child_wait(&c, 3000);
        if (status != 0)
                fail_msg("evmonctl watch with its reader gone and evmond quiet: exit %d after %" PRIu64
                         " ms, wanted 0 at once", status, now_ms() - start);
        {
                char err[512];
                ssize_t k = read(c.err, err, sizeof(err) - 1);

                if (k > 0) {
                        err[k] = 0;
                        fail_msg("evmonctl watch with its reader gone said: %s", err);
                }
        }
        child_close(&c);
        fake_peer_done(peer);

        if (access("/dev/full", W_OK) < 0) {
                fprintf(stderr, "no /dev/full here: the full-disk part is left out\n");
                return;
        }
        peer = fake_peer("full.sock", HELLO_LINE EXEC_LINE, 10000, path, sizeof(path));
        assert_true(asprintf(&cmd, "exec '%s' watch --socket '%s' >/dev/full", evmonctl, path) >= 0);
        run(&r, 0, "sh", "-c", cmd, NULL);
        fake_peer_done(peer);
        expect_status(&r, 1, "evmonctl watch >/dev/full");
        assert_non_null(strstr(r.err, "cannot write to standard output: No space left on device"));
        result_done(&r);

        /* A closed stdout: the socket was opened as fd 1, status wrote
         * its answer back to evmond (exit 0, nothing said), watch waited
         * for good. */
        for (int i = 0; i < 2; i++) {
                peer = fake_peer("closed.sock", HELLO_LINE "{\"type\":\"status\",\"events\":[]}\n", 10000, path, sizeof(path));
                free(cmd);
                assert_true(asprintf(&cmd, "exec '%s' %s --socket '%s' >&-", evmonctl, i ? "watch" : "status", path) >= 0);
                run(&r, 0, "sh", "-c", cmd, NULL);
                fake_peer_done(peer);
                expect_status(&r, 1, cmd);
                assert_non_null(strstr(r.err, "cannot write to standard output: Bad file descriptor"));
                result_done(&r);
        }

        /* The commands that need no daemon: decode said nothing and
         * exited 0, list and describe exited 0 with nothing written. */
        for (int i = 0; i < 3; i++) {
                free(cmd);
                if (i == 0)
                        assert_true(asprintf(&cmd, "exec '%s' decode '%s/tests/monitor/fixtures/perfdata/task.data' >/dev/full",
                                             evmonctl, source_root) >= 0);
                else
                        assert_true(asprintf(&cmd, "exec '%s' %s --tracefs '%s' >/dev/full", evmonctl,
                                             i == 1 ? "list" : "describe sched:sched_switch", tree) >= 0);
                run(&r, 0, "sh", "-c", cmd, NULL);
                expect_status(&r, 1, cmd);
                assert_non_null(strstr(r.err, "cannot write to standard output: No space left on device"));
                result_done(&r);
        }
}

int main(int argc, char **argv) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_no_daemon),
                cmocka_unit_test(test_answer_behind_lines),
                cmocka_unit_test(test_not_evmond),
                cmocka_unit_test(test_watch_refused),
                cmocka_unit_test(test_watch_before_subscribed),
                cmocka_unit_test(test_request_subscribes_to_nothing),
                cmocka_unit_test(test_watch_long_line),
                cmocka_unit_test(test_decode_stdin_terminal),
                cmocka_unit_test(test_socket_not_socket),
                cmocka_unit_test(test_watch_stdout),
        };

        cli_setup();
        return cli_run("cli-peers", tests, ELEMENTSOF(tests));
}
