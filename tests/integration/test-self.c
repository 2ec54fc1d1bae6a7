/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Self-exclusion (issue 30): a sched:sched_switch watch, with evmond kept
 * busy by another client (an `evmonctl watch` of a getppid storm), shows
 * none of evmond's own switches nor its clients' (by pid, prev_pid and
 * next_pid); a subscribe's "self": true brings the clients' back, and the
 * config's "self": true brings evmond's own back too. Root and the
 * tracepoints, else 77. */
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "itest.h"

#define N_STORM 400000

static struct itest_daemon daemon_;

struct self_tally {
        pid_t evmond, peer, me;
        int64_t switches;          /* sched_switch lines */
        int64_t evmond_lines;      /* naming evmond in pid, prev_pid or next_pid */
        int64_t client_lines;      /* naming one of its clients so */
};

static bool names(json_object *o, pid_t p) {
        json_object *f;

        if (itest_int(o, "pid") == p)
                return true;
        if (!json_object_object_get_ex(o, "fields", &f))
                return false;
        return itest_int(f, "prev_pid") == p || itest_int(f, "next_pid") == p;
}

static void tally_line(json_object *o, void *userdata) {
        struct self_tally *t = userdata;

        if (strcmp(itest_str(o, "type"), "event") != 0 || strcmp(itest_str(o, "event"), "sched:sched_switch") != 0)
                return;
        t->switches++;
        t->evmond_lines += names(o, t->evmond);
        t->client_lines += names(o, t->peer) || names(o, t->me);
}

/* `evmonctl watch syscalls:sys_enter_getppid` on D's socket, its output
 * thrown away: a second client that keeps evmond busy. */
static pid_t spawn_peer(const struct itest_daemon *d) {
        char evmonctl[256];
        pid_t pid;

        itest_build_path("evmonctl", evmonctl, sizeof(evmonctl));
        pid = itest_fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

                if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
                        _exit(127);
                execl(evmonctl, evmonctl, "watch", "--socket", d->socket, "--json", "syscalls:sys_enter_getppid",
                      (char *) NULL);
                _exit(127);
        }
        return pid;
}

/* Watches sched_switch on D (subscribe SUBSCRIBE) while the peer streams
 * a getppid storm, for about 1.5 s. */
static void watch_busy(const struct itest_daemon *d, const char *subscribe, struct self_tally *t) {
        struct itest_client *c = calloc(1, sizeof(*c));
        json_object *o;
        pid_t peer, storm;
        int gate;
        size_t len;
        char *text;

        assert_non_null(c);
        peer = spawn_peer(d);
        usleep(300 * 1000);     /* the peer connected and subscribed */
        assert_int_equal(itest_client_connect(c, d->socket), 0);
        json_object_put(itest_client_expect(c, "hello", 5000));
        assert_int_equal(itest_client_send(c, subscribe), 0);
        o = itest_client_expect(c, "subscribed", 5000);
        assert_non_null(o);
        json_object_put(o);

        storm = itest_spawn_calls(SYS_getppid, 0, N_STORM, &gate);
        itest_release(gate);
        text = itest_client_slurp(c, 1500, 1500, &len);
        itest_reap(storm);
        kill(peer, SIGTERM);
        (void) waitpid(peer, NULL, 0);

        *t = (struct self_tally) { .evmond = d->pid, .peer = peer, .me = getpid() };
        itest_for_each_line(text, len, tally_line, t);
        fprintf(stderr, "%s: %" PRId64 " switches, %" PRId64 " naming evmond, %" PRId64 " naming a client\n",
                strstr(subscribe, "\"self\"") ? "subscribe with self" : "subscribe", t->switches, t->evmond_lines,
                t->client_lines);
        free(text);
        itest_client_close(c);
        free(c);
}

static const char config_fmt[] =
        "{%s\"events\": [{\"tracepoint\": \"sched:sched_switch\"},\n"
        "            {\"tracepoint\": \"syscalls:sys_enter_getppid\"}]}\n";

static void test_self_left_out(void **state) {
        struct self_tally t;
        char config[512];

        snprintf(config, sizeof(config), config_fmt, "");
        assert_int_equal(itest_daemon_start(&daemon_, config), 0);

        watch_busy(&daemon_, "{\"type\":\"subscribe\",\"events\":[\"sched:sched_switch\"]}\n", &t);
        assert_true(t.switches > 0);
        assert_int_equal(t.evmond_lines, 0);
        assert_int_equal(t.client_lines, 0);

        /* A subscribe's "self": its clients' switches come back; evmond's
         * own stay out (the kernel filter is shared by every client). */
        watch_busy(&daemon_, "{\"type\":\"subscribe\",\"events\":[\"sched:sched_switch\"],\"self\":true}\n", &t);
        assert_true(t.client_lines > 0);
        assert_int_equal(t.evmond_lines, 0);

        assert_int_equal(itest_daemon_stop(&daemon_), 0);
        itest_daemon_cleanup(&daemon_);
}

static void test_config_self_keeps_all(void **state) {
        struct self_tally t;
        char config[512];

        snprintf(config, sizeof(config), config_fmt, "\"self\": true, ");
        assert_int_equal(itest_daemon_start(&daemon_, config), 0);
        watch_busy(&daemon_, "{\"type\":\"subscribe\",\"events\":[\"sched:sched_switch\"]}\n", &t);
        assert_true(t.evmond_lines > 0);
        assert_true(t.client_lines > 0);
        assert_int_equal(itest_daemon_stop(&daemon_), 0);
        itest_daemon_cleanup(&daemon_);
}

static int teardown(void **state) {
        itest_daemon_cleanup(&daemon_);
        return 0;
}

int main(void) {
        static const char *const need[] = { "sched/sched_switch", "syscalls/sys_enter_getppid", NULL };
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_self_left_out),
                cmocka_unit_test(test_config_self_keeps_all),
        };

        itest_require(need);
        return cmocka_run_group_tests(tests, NULL, teardown);
}
