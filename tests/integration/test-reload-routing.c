/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A reload's added event is routed to its own subscribers from its first
 * line. The added event samples from the moment reload_add() enables it,
 * and the commit drains the rings before the clients' subscriptions know
 * the new list: those lines once went out under index 0, to the
 * subscribers of the first event and not to those of the new one.
 *
 * A child makes N_PGID getpgid(BASE + i) calls, i counting up, paced, and
 * a getppid call after each batch. getppid is served from the start;
 * while the child runs, a reload adds getpgid first and many events after
 * it (their opens keep the window between getpgid's enable and the commit
 * open). Client A subscribed to getppid only, client B to the pattern
 * "syscalls:sys_enter_get*gid" (getgid, served from the start but never
 * firing, and getpgid once added), client C to everything. C's getpgid
 * arguments say exactly which calls the kernel recorded: each once, from
 * some i on to the last. B must get exactly those, A none of them, and A
 * and C every getppid call. */

#include <errno.h>
#include <fcntl.h>
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
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "itest.h"

#define GETPPID "syscalls:sys_enter_getppid"
#define GETPGID "syscalls:sys_enter_getpgid"
#define GETGID "syscalls:sys_enter_getgid"

/* getpgid(BASE + i): nobody else makes these calls, and the kernel
 * filters the rest of the host's out. */
#define BASE 770000000
#define N_PGID 100000
#define BATCH 100
#define PAUSE_US 500
#define N_PPID (N_PGID / BATCH)

/* Opened after getpgid by the reload, each on every CPU; none fires (no
 * task makes syscalls as pid 0). None matches B's pattern. */
static const char *const extras[] = {
        "syscalls:sys_enter_getsid", "syscalls:sys_enter_getuid", "syscalls:sys_enter_geteuid",
        "syscalls:sys_enter_getresuid", "syscalls:sys_enter_getcwd", "syscalls:sys_enter_getrusage",
        "syscalls:sys_enter_getitimer", "syscalls:sys_enter_getpriority", "syscalls:sys_enter_getrlimit",
        "syscalls:sys_enter_getcpu", "syscalls:sys_enter_getgroups", "syscalls:sys_enter_getpgrp",
        "syscalls:sys_enter_gettid", "syscalls:sys_enter_getpid", "syscalls:sys_enter_getrandom",
        "syscalls:sys_enter_gettimeofday",
};
#define N_EXTRAS (sizeof(extras) / sizeof(extras[0]))

static struct itest_daemon daemon_ = { .pid = -1 };
static pid_t load_pid;
static bool load_running;

static int teardown(void **state) {
        if (load_running) {
                kill(load_pid, SIGKILL);
                (void) waitpid(load_pid, NULL, 0);
        }
        itest_daemon_cleanup(&daemon_);
        return 0;
}

static pid_t spawn_load(int *ret_gate) {
        pid_t pid = test_fork_gated_with(itest_fork, ret_gate);

        if (pid == 0) {
                for (long i = 0; i < N_PGID; i++) {
                        syscall(SYS_getpgid, BASE + i);
                        if ((i + 1) % BATCH == 0) {
                                syscall(SYS_getppid);
                                usleep(PAUSE_US);
                        }
                }
                _exit(0);
        }
        return pid;
}

static void config_text(char *buf, size_t size, bool v2) {
        int n;

        n = snprintf(buf, size,
                     "{\n"
                     "  \"ring\": {\"pages\": 512},\n"
                     "  \"clients\": {\"queue_kib\": 65536},\n"
                     "  \"events\": [\n"
                     "    {\"tracepoint\": \"" GETPPID "\", \"filter\": \"common_pid == %d\"},\n",
                     (int) load_pid);
        if (v2)
                n += snprintf(buf + n, size - (size_t) n,
                              "    {\"tracepoint\": \"" GETPGID "\", \"filter\": \"pid >= %d && pid < %d\"},\n",
                              BASE, BASE + N_PGID);
        n += snprintf(buf + n, size - (size_t) n, "    {\"tracepoint\": \"" GETGID "\", \"filter\": \"common_pid == 0\"}");
        for (size_t i = 0; v2 && i < N_EXTRAS; i++)
                n += snprintf(buf + n, size - (size_t) n, ",\n    {\"tracepoint\": \"%s\", \"filter\": \"common_pid == 0\"}",
                              extras[i]);
        snprintf(buf + n, size - (size_t) n, "\n  ]\n}\n");
}

static void write_config(const char *text) {
        char tmp[256];
        FILE *f;

        snprintf(tmp, sizeof(tmp), "%s.tmp", daemon_.config);
        f = fopen(tmp, "we");
        assert_non_null(f);
        fputs(text, f);
        assert_int_equal(fclose(f), 0);
        assert_int_equal(rename(tmp, daemon_.config), 0);
}

static void connect_subscribe(struct itest_client *c, const char *subscribe) {
        json_object *o;

        assert_int_equal(itest_client_connect(c, daemon_.socket), 0);
        o = itest_client_expect(c, "hello", 5000);
        assert_non_null(o);
        json_object_put(o);
        if (!subscribe)
                return;
        assert_int_equal(itest_client_send(c, subscribe), 0);
        o = itest_client_expect(c, "subscribed", 5000);
        assert_non_null(o);
        json_object_put(o);
}

struct text {
        char *data;
        size_t len, cap;
};

/* Reads every client as fast as it can until all were quiet for
 * QUIET_MS; what each had buffered comes first. */
static void slurp_all(struct itest_client **c, struct text *t, size_t n, int quiet_ms) {
        for (size_t i = 0; i < n; i++) {
                t[i].cap = 1 << 24;
                t[i].data = malloc(t[i].cap);
                assert_non_null(t[i].data);
                memcpy(t[i].data, c[i]->buf, c[i]->len);
                t[i].len = c[i]->len;
                c[i]->len = 0;
        }
        for (;;) {
                struct pollfd p[8];
                int r;

                for (size_t i = 0; i < n; i++)
                        p[i] = (struct pollfd) { .fd = c[i]->fd, .events = POLLIN };
                r = poll(p, n, quiet_ms);
                assert_true(r >= 0);
                if (r == 0)
                        break;
                for (size_t i = 0; i < n; i++) {
                        ssize_t k;

                        if (!(p[i].revents & (POLLIN | POLLHUP)))
                                continue;
                        if (t[i].cap - t[i].len < (1 << 20)) {
                                t[i].cap *= 2;
                                t[i].data = realloc(t[i].data, t[i].cap);
                                assert_non_null(t[i].data);
                        }
                        k = read(c[i]->fd, t[i].data + t[i].len, t[i].cap - t[i].len - 1);
                        assert_true(k > 0);
                        t[i].len += (size_t) k;
                }
        }
        for (size_t i = 0; i < n; i++)
                t[i].data[t[i].len] = '\0';
}

struct seen {
        uint8_t *pgid;                  /* by i: how often getpgid(BASE + i) came */
        bool after;                     /* past the config line */
        int64_t configs, lost, dropped, ppid, others;
        int64_t pgid_n, pgid_before, pgid_dups;
        int64_t pgid_min, pgid_max;
};

static void seen_line(json_object *o, void *userdata) {
        struct seen *s = userdata;
        const char *type = itest_str(o, "type"), *event;
        json_object *fields;
        int64_t i;

        if (strcmp(type, "config") == 0) {
                s->configs++;
                s->after = true;
                return;
        }
        if (strcmp(type, "lost") == 0) {
                s->lost += itest_int(o, "count");
                return;
        }
        if (strcmp(type, "dropped") == 0) {
                s->dropped += itest_int(o, "count");
                s->lost += itest_dropped_lost(o);
                return;
        }
        if (strcmp(type, "event") != 0)
                return;
        event = itest_str(o, "event");
        if (strcmp(event, GETPPID) == 0 && itest_int(o, "pid") == load_pid) {
                s->ppid++;
                return;
        }
        if (strcmp(event, GETPGID) != 0) {
                s->others++;
                return;
        }
        assert_true(json_object_object_get_ex(o, "fields", &fields));
        i = itest_int(fields, "pid") - BASE;
        assert_true(i >= 0 && i < N_PGID);
        if (s->pgid[i]++)
                s->pgid_dups++;
        s->pgid_n++;
        if (!s->after)
                s->pgid_before++;
        if (s->pgid_n == 1 || i < s->pgid_min)
                s->pgid_min = i;
        if (i > s->pgid_max)
                s->pgid_max = i;
}

static void test_added_event_routing(void **state) {
        static const char *const names[] = { "A (getppid)", "B (get*gid)", "C (all)" };
        struct itest_client *c[3];
        struct text t[3];
        struct seen s[3] = {};
        char config[8192];
        int gate;

        load_pid = spawn_load(&gate);
        load_running = true;
        config_text(config, sizeof(config), false);
        assert_int_equal(itest_daemon_start(&daemon_, config), 0);
        for (size_t i = 0; i < 3; i++) {
                c[i] = calloc(1, sizeof(*c[i]));
                assert_non_null(c[i]);
        }
        connect_subscribe(c[0], "{\"type\":\"subscribe\",\"events\":[\"" GETPPID "\"]}\n");
        connect_subscribe(c[1], "{\"type\":\"subscribe\",\"events\":[\"syscalls:sys_enter_get*gid\"]}\n");
        connect_subscribe(c[2], NULL);

        config_text(config, sizeof(config), true);
        write_config(config);
        itest_release(gate);
        /* Mid-run: the child takes about a second. */
        usleep(200000);
        assert_int_equal(kill(daemon_.pid, SIGHUP), 0);

        slurp_all(c, t, 3, 2000);
        itest_reap(load_pid);
        load_running = false;

        for (size_t i = 0; i < 3; i++) {
                s[i].pgid = calloc(N_PGID, 1);
                assert_non_null(s[i].pgid);
                itest_for_each_line(t[i].data, t[i].len, seen_line, &s[i]);
                free(t[i].data);
                fprintf(stderr, "%s: config %" PRId64 ", getppid %" PRId64 " of %d, getpgid %" PRId64 " (%" PRId64
                        " before the config line, i %" PRId64 "..%" PRId64 ", %" PRId64 " twice), others %" PRId64
                        ", lost %" PRId64 ", dropped %" PRId64 "\n",
                        names[i], s[i].configs, s[i].ppid, N_PPID, s[i].pgid_n, s[i].pgid_before, s[i].pgid_min,
                        s[i].pgid_max, s[i].pgid_dups, s[i].others, s[i].lost, s[i].dropped);
        }
        for (size_t i = 0; i < 3; i++) {
                assert_int_equal(s[i].configs, 1);
                assert_int_equal(s[i].lost, 0);
                assert_int_equal(s[i].dropped, 0);
                assert_int_equal(s[i].others, 0);
                assert_int_equal(s[i].pgid_dups, 0);
        }
        /* C: the calls the kernel recorded, each once, from some call in
         * the middle of the run to the last. */
        assert_true(s[2].pgid_n > 0);
        assert_true(s[2].pgid_min > 0);
        assert_int_equal(s[2].pgid_max, N_PGID - 1);
        assert_int_equal(s[2].pgid_n, s[2].pgid_max - s[2].pgid_min + 1);
        /* B: exactly those, the first ones too; no getppid. */
        assert_int_equal(s[1].pgid_n, s[2].pgid_n);
        assert_int_equal(s[1].pgid_min, s[2].pgid_min);
        assert_int_equal(s[1].pgid_before, s[2].pgid_before);
        assert_int_equal(s[1].ppid, 0);
        /* A: every getppid call and not one line of getpgid. */
        assert_int_equal(s[0].pgid_n, 0);
        assert_int_equal(s[0].ppid, N_PPID);
        assert_int_equal(s[2].ppid, N_PPID);
        /* The window this is about was there: C got lines of getpgid that
         * the commit drained, before the config line. */
        assert_true(s[2].pgid_before > 0);

        for (size_t i = 0; i < 3; i++) {
                free(s[i].pgid);
                itest_client_close(c[i]);
                free(c[i]);
        }
}

int main(void) {
        static const char *const need[] = {
                "syscalls/sys_enter_getppid", "syscalls/sys_enter_getpgid", "syscalls/sys_enter_getgid",
                "syscalls/sys_enter_getsid", "syscalls/sys_enter_getuid", "syscalls/sys_enter_geteuid",
                "syscalls/sys_enter_getresuid", "syscalls/sys_enter_getcwd", "syscalls/sys_enter_getrusage",
                "syscalls/sys_enter_getitimer", "syscalls/sys_enter_getpriority", "syscalls/sys_enter_getrlimit",
                "syscalls/sys_enter_getcpu", "syscalls/sys_enter_getgroups", "syscalls/sys_enter_getpgrp",
                "syscalls/sys_enter_gettid", "syscalls/sys_enter_getpid", "syscalls/sys_enter_getrandom",
                "syscalls/sys_enter_gettimeofday", NULL,
        };
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_teardown(test_added_event_routing, teardown),
        };

        itest_require(need);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
