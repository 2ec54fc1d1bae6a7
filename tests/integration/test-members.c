/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What a member of socket.group or socket.admin_group, not root, can make
 * evmond do, tried as that member would (uid 65534 with the group as its
 * only supplementary one, in a forked child):
 *
 * - pipelined subscribes naming a cgroup subtree of 1,000 cgroups 64
 *   times each must not hold the loop: a root client's status is answered
 *   within 1 s meanwhile (issue 26, hole 10: before, 3.3 s per subscribe
 *   on 1,008 cgroups, a status waited 15 s behind six);
 * - an admin-group member cannot add a uprobe with a "+0(%di):string"
 *   fetch-arg on a root-only binary (hole 2: evmond opened it with
 *   CAP_DAC_READ_SEARCH and the member got root's arguments), nor
 *   anything else, unless socket.admin_add allows it; where it does, only
 *   the kinds and binaries it lists, and only binaries the member could
 *   read itself, named by their real path (not a symlink's). */

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "itest.h"

#define GETPGID "syscalls:sys_enter_getpgid"
#define NOBODY 65534
#define N_CGROUPS 1000
#define N_PIPELINED 6

static struct itest_daemon daemon_ = { .pid = -1 };
static char group[64], admin_group[64];
static gid_t gid, admin_gid;
static char cgroup2[256];        /* the cgroup2 mount */
static char subtree[320];        /* our test cgroups' parent, absolute */
static char subtree_rel[64];     /* the same, relative to the mount */
static char bins[128];           /* binaries to probe: pub/ (0755), secret/ (0700) */

static int add_group(char *name, size_t size, const char *what, gid_t *ret) {
        const char *argv[] = { "groupadd", "--system", name, NULL };
        struct group *g;
        char *out = NULL;
        int r;

        snprintf(name, size, "evmon%s%d", what, (int) getpid());
        r = itest_run(argv, 20000, &out);
        if (r != 0) {
                fprintf(stderr, "groupadd %s failed (%d): %s\n", name, r, out ? out : "");
                free(out);
                name[0] = 0;
                return -1;
        }
        free(out);
        g = getgrnam(name);
        if (!g)
                return -1;
        *ret = g->gr_gid;
        return 0;
}

static void del_group(const char *name) {
        const char *argv[] = { "groupdel", name, NULL };

        if (name[0])
                (void) itest_run(argv, 20000, NULL);
}

static void remove_cgroups(void) {
        char path[512];

        if (!subtree[0])
                return;
        for (int i = 0; i < N_CGROUPS; i++) {
                snprintf(path, sizeof(path), "%s/g%d", subtree, i);
                (void) rmdir(path);
        }
        (void) rmdir(subtree);
}

static int find_cgroup2(void) {
        return test_cgroup2_mount(cgroup2, sizeof(cgroup2)) == 0;
}

static int setup(void **state) {
        char config[1024], path[512];
        struct itest_daemon_opts opts = { .log_to_file = true };

        (void) state;
        if (add_group(group, sizeof(group), "sock", &gid) < 0 ||
            add_group(admin_group, sizeof(admin_group), "adm", &admin_gid) < 0)
                return -1;
        snprintf(subtree_rel, sizeof(subtree_rel), "evmontest-members-%d", (int) getpid());
        snprintf(subtree, sizeof(subtree), "%s/%s", cgroup2, subtree_rel);
        if (mkdir(subtree, 0755) < 0) {
                fprintf(stderr, "mkdir %s: %m\n", subtree);
                subtree[0] = 0;
                return -1;
        }
        for (int i = 0; i < N_CGROUPS; i++) {
                snprintf(path, sizeof(path), "%s/g%d", subtree, i);
                if (mkdir(path, 0755) < 0) {
                        fprintf(stderr, "mkdir %s: %m\n", path);
                        return -1;
                }
        }
        snprintf(config, sizeof(config),
                 "{\n"
                 "  \"socket\": {\"mode\": \"0660\", \"group\": \"%s\", \"admin_group\": \"%s\"},\n"
                 "  \"events\": [ {\"tracepoint\": \"" GETPGID "\", \"filter\": \"pid == 77046\"} ]\n"
                 "}\n",
                 group, admin_group);
        if (itest_daemon_start_opts(&daemon_, config, &opts) < 0)
                return -1;
        /* The probe target, copied where root alone may read it and where
         * anyone may; a symlink among the readable ones to the former. */
        {
                char target[512], cmd[4096];

                snprintf(bins, sizeof(bins), "/tmp/evmon-members-%d", (int) getpid());
                itest_build_path("tests/integration/evmon-probe-target", target, sizeof(target));
                snprintf(cmd, sizeof(cmd),
                         "set -e; umask 022; mkdir -p %1$s/pub %1$s/secret; chmod 0755 %1$s %1$s/pub; "
                         "chmod 0700 %1$s/secret; cp %2$s %1$s/pub/prog; cp %2$s %1$s/secret/prog; "
                         "cp %2$s %1$s/pub/mine; chmod 0700 %1$s/pub/mine; "
                         "ln -s %1$s/secret/prog %1$s/pub/link",
                         bins, target);
                if (system(cmd) != 0)
                        return -1;
        }
        /* The test's directory stands for /run/evmon (0755). */
        return chmod(daemon_.dir, 0755);
}

static int teardown(void **state) {
        char cmd[256];

        (void) state;
        if (bins[0]) {
                snprintf(cmd, sizeof(cmd), "rm -rf %s", bins);
                (void) !system(cmd);
        }
        itest_daemon_cleanup(&daemon_);
        remove_cgroups();
        del_group(group);
        del_group(admin_group);
        return 0;
}

static uint64_t now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

/* Forks a child that drops to uid/gid 65534 with the supplementary group
 * G (and the socket's group, which connecting takes) and returns FN's
 * status as its exit code. */
static pid_t fork_member_uid(uid_t uid, gid_t g, int (*fn)(void *), void *userdata) {
        pid_t pid = itest_fork();
        gid_t groups[2] = { gid, g };

        assert_true(pid >= 0);
        if (pid == 0) {
                if (setgroups(g == gid ? 1 : 2, groups) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
                    setresuid(uid, uid, uid) < 0)
                        _exit(100);
                _exit(fn(userdata));
        }
        return pid;
}

static pid_t fork_member(gid_t g, int (*fn)(void *), void *userdata) {
        return fork_member_uid(NOBODY, g, fn, userdata);
}

static int wait_exit(pid_t pid) {
        int status;

        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        return WEXITSTATUS(status);
}

/* {"type":"subscribe","cgroups":[PATH × 64]} */
static void subscribe_line(char *buf, size_t size, const char *path) {
        size_t k = (size_t) snprintf(buf, size, "{\"type\":\"subscribe\",\"cgroups\":[");

        for (int i = 0; i < 64; i++)
                k += (size_t) snprintf(buf + k, size - k, "%s\"%s\"", i ? "," : "", path);
        snprintf(buf + k, size - k, "]}\n");
}

static int pipelined_subscribes(void *userdata) {
        struct itest_client *c = calloc(1, sizeof(*c));
        char line[8192];
        int got = 0, refused = 0;
        uint64_t t0 = now_ms();

        (void) userdata;
        if (!c || itest_client_connect(c, daemon_.socket) < 0)
                return 2;
        subscribe_line(line, sizeof(line), subtree_rel);
        for (int i = 0; i < N_PIPELINED; i++)
                if (itest_client_send(c, line) < 0)
                        return 3;
        /* Every one is answered: subscribed (1,001 cgroups are within a
         * subscribe's bound), or, past the uid's budget of 4 at once,
         * refused with an error line saying so. */
        for (json_object *o; got + refused < N_PIPELINED && (o = itest_client_next(c, 120000)); json_object_put(o))
                if (strcmp(itest_str(o, "type"), "subscribed") == 0)
                        got++;
                else if (strcmp(itest_str(o, "type"), "error") == 0) {
                        if (!strstr(itest_str(o, "error"), "too many subscribes with \"cgroups\" from")) {
                                fprintf(stderr, "member's subscribe: %s\n", json_object_to_json_string(o));
                                return 4;
                        }
                        refused++;
                }
        fprintf(stderr, "%d subscribes answered in %" PRIu64 " ms (%d refused by the uid's budget)\n", got + refused,
                now_ms() - t0, refused);
        itest_client_close(c);
        free(c);
        return got >= 4 && refused >= 1 && got + refused == N_PIPELINED ? 0 : 5;
}

static void test_cgroup_subscribes_do_not_stall(void **state) {
        struct itest_client *root = calloc(1, sizeof(*root));
        json_object *o;
        uint64_t t0, worst = 0;
        pid_t pid;

        (void) state;
        assert_non_null(root);
        assert_int_equal(itest_client_connect(root, daemon_.socket), 0);
        o = itest_client_expect(root, "hello", 5000);
        assert_non_null(o);
        json_object_put(o);

        pid = fork_member(gid, pipelined_subscribes, NULL);
        /* While the member's subscribes are in, root asks for status five
         * times; each must come within 1 s. */
        for (int i = 0; i < 5; i++) {
                uint64_t dt;

                usleep(20000);  /* pacing only: the member's lines go first */
                t0 = now_ms();
                assert_int_equal(itest_client_send(root, "{\"type\":\"status\"}\n"), 0);
                o = itest_client_expect(root, "status", 60000);
                assert_non_null(o);
                json_object_put(o);
                dt = now_ms() - t0;
                if (dt > worst)
                        worst = dt;
        }
        assert_int_equal(wait_exit(pid), 0);
        fprintf(stderr, "worst status wait behind %d pipelined subscribes of 64 x %d cgroups: %" PRIu64 " ms\n",
                N_PIPELINED, N_CGROUPS + 1, worst);
        if (worst >= 1000)
                fail_msg("a root status waited %" PRIu64 " ms behind a socket-group member's subscribes", worst);
        itest_client_close(root);
        free(root);
}

/* One of many socket-group members: 4 pipelined subscribes (its own
 * uid's burst) of the subtree; the exit code is how many were served,
 * 10 and up when something else went wrong. */
static int four_subscribes(void *userdata) {
        struct itest_client *c = calloc(1, sizeof(*c));
        char line[8192];
        int got = 0, refused = 0;

        (void) userdata;
        if (!c || itest_client_connect(c, daemon_.socket) < 0)
                return 10;
        subscribe_line(line, sizeof(line), subtree_rel);
        for (int i = 0; i < 4; i++)
                if (itest_client_send(c, line) < 0)
                        return 11;
        for (json_object *o; got + refused < 4 && (o = itest_client_next(c, 120000)); json_object_put(o))
                if (strcmp(itest_str(o, "type"), "subscribed") == 0)
                        got++;
                else if (strcmp(itest_str(o, "type"), "error") == 0) {
                        if (!strstr(itest_str(o, "error"), "too many subscribes with \"cgroups\"")) {
                                fprintf(stderr, "member's subscribe: %s\n", json_object_to_json_string(o));
                                return 12;
                        }
                        refused++;
                }
        itest_client_close(c);
        free(c);
        return got + refused == 4 ? got : 13;
}

/* The per-uid budget of cgroup walks is per uid: a member with many uids
 * (a subuid range for rootless containers is one newuidmap away, and
 * SO_PEERCRED gives each its own uid) had a fresh bucket for each, 16
 * buckets and a shared one, 4 walks at once from each: 68 walks of up to
 * SUBSCRIBE_CGROUPS_MAX cgroups, ~100 ms each, in one burst. Walks from
 * all such uids together now have one bucket too. */
static void test_cgroup_subscribes_many_uids(void **state) {
        struct itest_client *root = calloc(1, sizeof(*root));
        enum { N_UIDS = 24 };
        pid_t pids[N_UIDS];
        uint64_t t0, start, worst = 0, elapsed;
        unsigned served = 0, allowed;
        json_object *o;

        (void) state;
        assert_non_null(root);
        assert_int_equal(itest_client_connect(root, daemon_.socket), 0);
        o = itest_client_expect(root, "hello", 5000);
        assert_non_null(o);
        json_object_put(o);

        start = now_ms();
        for (int i = 0; i < N_UIDS; i++)
                pids[i] = fork_member_uid(70000 + (uid_t) getpid() % 1000 * 100 + (uid_t) i, gid, four_subscribes, NULL);
        for (int i = 0; i < 5; i++) {
                uint64_t dt;

                usleep(20000);  /* pacing only */
                t0 = now_ms();
                assert_int_equal(itest_client_send(root, "{\"type\":\"status\"}\n"), 0);
                o = itest_client_expect(root, "status", 60000);
                assert_non_null(o);
                json_object_put(o);
                dt = now_ms() - t0;
                if (dt > worst)
                        worst = dt;
        }
        for (int i = 0; i < N_UIDS; i++) {
                int n = wait_exit(pids[i]);

                assert_in_range(n, 0, 4);
                served += (unsigned) n;
        }
        elapsed = now_ms() - start;
        /* The shared bucket: WALK_ALL_BURST at once, WALK_ALL_PER_SEC a
         * second after that (server.c), each second begun counted. */
        allowed = 8 + 4 * (unsigned) ((elapsed + 999) / 1000);
        fprintf(stderr, "%d uids x 4 subscribes of 64 x %d cgroups: %u walked in %" PRIu64 " ms (at most %u "
                "allowed); worst root status wait %" PRIu64 " ms\n",
                N_UIDS, N_CGROUPS + 1, served, elapsed, allowed, worst);
        if (served > allowed)
                fail_msg("%u subscribes with \"cgroups\" from %d uids walked in %" PRIu64 " ms; at most %u may",
                         served, N_UIDS, elapsed, allowed);
        itest_client_close(root);
        free(root);
}

/* The member's request LINE to evmond at SOCKET, its answer (a result or
 * an error line) back through a pipe. */
struct member_request {
        const char *socket, *line;
        int fd;
};

static int member_request_run(void *userdata) {
        struct member_request *m = userdata;
        struct itest_client *c = calloc(1, sizeof(*c));
        json_object *o;
        const char *s;

        if (!c || itest_client_connect(c, m->socket) < 0)
                return 2;
        json_object_put(itest_client_expect(c, "hello", 5000));
        if (itest_client_send(c, "{\"type\":\"subscribe\",\"events\":[]}\n") < 0 ||
            itest_client_send(c, m->line) < 0)
                return 3;
        json_object_put(itest_client_expect(c, "subscribed", 5000));
        for (;;) {
                o = itest_client_next(c, 10000);
                if (!o)
                        return 4;
                if (strcmp(itest_str(o, "type"), "result") == 0 || strcmp(itest_str(o, "type"), "error") == 0)
                        break;
                json_object_put(o);
        }
        s = json_object_to_json_string(o);
        if (write(m->fd, s, strlen(s)) < 0)
                return 5;
        json_object_put(o);
        return 0;
}

/* The answer to LINE sent by an admin-group member (caller frees). */
static char *member_request(const char *socket, const char *line) {
        struct member_request m = { .socket = socket, .line = line };
        char *buf = calloc(1, 8192);
        int p[2];
        pid_t pid;

        assert_non_null(buf);
        assert_int_equal(pipe2(p, O_CLOEXEC), 0);
        m.fd = p[1];
        pid = fork_member(admin_gid, member_request_run, &m);
        close(p[1]);
        assert_int_equal(wait_exit(pid), 0);
        assert_true(read(p[0], buf, 8191) > 0);
        close(p[0]);
        return buf;
}

static void expect_member(const char *socket, const char *line, const char *type, const char *want) {
        char *answer = member_request(socket, line);

        fprintf(stderr, "member: %s-> %s\n", line, answer);
        if (!strstr(answer, type) || (want && !strstr(answer, want)))
                fail_msg("%s: wanted a %s line with \"%s\", got %s", line, type, want ? want : "", answer);
        free(answer);
}

/* Uprobe lines of NAME in uprobe_events (-1: no uprobe_events). */
static int uprobe_lines(const char *name) {
        FILE *f = fopen("/sys/kernel/tracing/uprobe_events", "re");
        char *line = NULL, want[128];
        size_t n = 0;
        int count = 0;

        if (!f)
                f = fopen("/sys/kernel/debug/tracing/uprobe_events", "re");
        if (!f)
                return -1;
        snprintf(want, sizeof(want), "/%s ", name);
        while (getline(&line, &n, f) > 0)
                count += strstr(line, want) != NULL;
        free(line);
        fclose(f);
        return count;
}

#define ADD_UPROBE(path, name) \
        "{\"type\":\"add\",\"event\":{\"uprobe\":\"" path ":evmon_probe_target\",\"name\":\"" name \
        "\",\"fetch\":[\"arg=+0(%%di):string\"]}}\n"

/* Without socket.admin_add: the member adds nothing, and the root-only
 * binary above all. */
static void test_admin_adds_nothing_by_default(void **state) {
        char line[1024];

        (void) state;
        if (uprobe_lines("x") < 0)
                skip();  /* no uprobe_events here */
        snprintf(line, sizeof(line), ADD_UPROBE("%s/secret/prog", "memb_secret"), bins);
        expect_member(daemon_.socket, line, "error", "only root may");
        assert_int_equal(uprobe_lines("memb_secret"), 0);
        expect_member(daemon_.socket, "{\"type\":\"add\",\"event\":{\"tracepoint\":\"syscalls:sys_enter_getsid\"}}\n",
                      "error", "socket.admin_add");
}

/* Starts D as an evmond whose socket group and admin group are the
 * test's, with socket.admin_add ADMIN_ADD (a JSON object), serving a
 * getpgid tracepoint no call passes; its directory opened to members. */
static void start_admin_daemon(struct itest_daemon *d, const char *admin_add) {
        struct itest_daemon_opts opts = { .log_to_file = true };
        char config[2048];

        snprintf(config, sizeof(config),
                 "{\n"
                 "  \"socket\": {\"mode\": \"0660\", \"group\": \"%s\", \"admin_group\": \"%s\",\n"
                 "             \"admin_add\": %s},\n"
                 "  \"events\": [ {\"tracepoint\": \"" GETPGID "\", \"filter\": \"pid == 77046\"} ]\n"
                 "}\n",
                 group, admin_group, admin_add);
        assert_int_equal(itest_daemon_start_opts(d, config, &opts), 0);
        assert_int_equal(chmod(d->dir, 0755), 0);
}

/* With socket.admin_add: its kinds, its paths, binaries the member can
 * read, by their real path. */
static void test_admin_add_policy(void **state) {
        struct itest_daemon d2 = { .pid = -1 };
        char line[1024];

        (void) state;
        if (uprobe_lines("x") < 0)
                skip();
        snprintf(line, sizeof(line), "{\"kinds\": [\"tracepoint\", \"uprobe\"], \"paths\": [\"%s/pub/*\"], "
                 "\"fetch\": true}", bins);
        start_admin_daemon(&d2, line);

        /* Listed and readable: served, then removed. */
        snprintf(line, sizeof(line), ADD_UPROBE("%s/pub/prog", "memb_pub"), bins);
        expect_member(d2.socket, line, "result", "uprobe:memb_pub");
        assert_int_equal(uprobe_lines("memb_pub"), 1);
        expect_member(d2.socket, "{\"type\":\"remove\",\"event\":\"uprobe:memb_pub\"}\n", "result", NULL);
        /* Listed, but root's alone (0700), and a symlink to the secret
         * one (its real path is not listed). */
        snprintf(line, sizeof(line), ADD_UPROBE("%s/pub/mine", "memb_mine"), bins);
        expect_member(d2.socket, line, "error", "not readable or searchable by that uid");
        snprintf(line, sizeof(line), ADD_UPROBE("%s/pub/link", "memb_link"), bins);
        expect_member(d2.socket, line, "error", "no pattern in socket.admin_add.paths");
        snprintf(line, sizeof(line), ADD_UPROBE("%s/secret/prog", "memb_secret"), bins);
        expect_member(d2.socket, line, "error", "no pattern in socket.admin_add.paths");
        assert_int_equal(uprobe_lines("memb_mine") + uprobe_lines("memb_link") + uprobe_lines("memb_secret"), 0);
        /* A kind not listed. */
        expect_member(d2.socket, "{\"type\":\"add\",\"event\":{\"kprobe\":\"do_sys_openat2\",\"name\":\"memb_k\","
                      "\"fetch\":[\"f=+0(%si):string\"]}}\n",
                      "error", "socket.admin_add.kinds");
        /* A tracepoint is. */
        expect_member(d2.socket, "{\"type\":\"add\",\"event\":{\"tracepoint\":\"syscalls:sys_enter_getsid\"}}\n",
                      "result", "syscalls:sys_enter_getsid");
        assert_int_equal(itest_daemon_stop(&d2), 0);
        itest_daemon_cleanup(&d2);
}

/* A uprobe's breakpoint replaces a byte of the binary in every process
 * that runs it: at an offset that is not an instruction's first byte it
 * changes that instruction (an immediate, a displacement), and root's
 * program computes something else (issue 26, hole 1's harm). A member
 * may not pick the offset, fetch-args or not: only a function's entry. */
static void test_admin_add_no_offsets(void **state) {
        struct itest_daemon d3 = { .pid = -1 };
        char line[1024];

        (void) state;
        if (uprobe_lines("x") < 0)
                skip();
        snprintf(line, sizeof(line),
                 "{\"kinds\": [\"uprobe\", \"uretprobe\", \"software\", \"pmu\"], \"paths\": [\"%s/pub/*\"]}", bins);
        start_admin_daemon(&d3, line);

        snprintf(line, sizeof(line),
                 "{\"type\":\"add\",\"event\":{\"uprobe\":\"%s/pub/prog:0x1001\",\"name\":\"memb_off\"}}\n", bins);
        expect_member(d3.socket, line, "error", "function's entry");
        snprintf(line, sizeof(line),
                 "{\"type\":\"add\",\"event\":{\"uprobe\":\"%s/pub/prog:evmon_probe_target+1\","
                 "\"name\":\"memb_symoff\"}}\n", bins);
        expect_member(d3.socket, line, "error", "function's entry");
        snprintf(line, sizeof(line),
                 "{\"type\":\"add\",\"event\":{\"uretprobe\":\"%s/pub/prog:0x1001\",\"name\":\"memb_roff\"}}\n",
                 bins);
        expect_member(d3.socket, line, "error", "function's entry");
        assert_int_equal(uprobe_lines("memb_off") + uprobe_lines("memb_symoff") + uprobe_lines("memb_roff"), 0);
        /* The function's entry is. */
        snprintf(line, sizeof(line),
                 "{\"type\":\"add\",\"event\":{\"uprobe\":\"%s/pub/prog:evmon_probe_target\",\"name\":\"memb_fn\"}}\n",
                 bins);
        expect_member(d3.socket, line, "result", "uprobe:memb_fn");
        assert_int_equal(uprobe_lines("memb_fn"), 1);

        /* Without "fetch": no user callchain (the kernel's frame-pointer
         * walk reads 16 bytes of the sampled process's stack at each
         * frame, any process's, root's too: its saved rbp, when the code
         * uses rbp for data, points the walk at what it likes), and no
         * physical addresses (the kernel gives those to privileged
         * callers only). Kernel-only callchains are served. */
        expect_member(d3.socket, "{\"type\":\"add\",\"event\":{\"software\":\"cpu-clock\",\"name\":\"memb_cc\","
                      "\"sample\":[\"tid\",\"callchain\"]}}\n", "error", "callchain");
        expect_member(d3.socket, "{\"type\":\"add\",\"event\":{\"software\":\"cpu-clock\",\"name\":\"memb_cc2\","
                      "\"callchain\":{\"kernel\":false}}}\n", "error", "callchain");
        expect_member(d3.socket, "{\"type\":\"add\",\"event\":{\"software\":\"page-faults\",\"name\":\"memb_pa\","
                      "\"sample\":[\"tid\",\"addr\",\"phys_addr\"]}}\n", "error", "phys_addr");
        expect_member(d3.socket, "{\"type\":\"add\",\"event\":{\"software\":\"cpu-clock\",\"name\":\"memb_kc\","
                      "\"callchain\":{\"user\":false}}}\n", "result", "memb_kc");
        /* The same for a trace event's perf options (issue 29). */
        snprintf(line, sizeof(line), "{\"type\":\"add\",\"event\":{\"uprobe\":\"%s/pub/prog:evmon_probe_target\","
                 "\"name\":\"memb_ucc\",\"callchain\":{}}}\n", bins);
        expect_member(d3.socket, line, "error", "callchain");
        snprintf(line, sizeof(line), "{\"type\":\"add\",\"event\":{\"uprobe\":\"%s/pub/prog:evmon_probe_target\","
                 "\"name\":\"memb_ustack\",\"stack_user\":64}}\n", bins);
        expect_member(d3.socket, line, "error", "stack_user");
        snprintf(line, sizeof(line), "{\"type\":\"add\",\"event\":{\"uprobe\":\"%s/pub/prog:evmon_probe_target\","
                 "\"name\":\"memb_ukc\",\"callchain\":{\"user\":false}}}\n", bins);
        expect_member(d3.socket, line, "result", "memb_ukc");
        /* "pmu" is no way around "kinds" and "paths": the kprobe and
         * uprobe PMUs make probes (perf_event_open's config1 names the
         * symbol or binary, config2 a kernel address or file offset). */
        if (access("/sys/bus/event_source/devices/uprobe/type", F_OK) == 0)
                expect_member(d3.socket, "{\"type\":\"add\",\"event\":{\"pmu\":\"uprobe//\",\"name\":\"memb_upmu\","
                              "\"config1\":\"0x1000\",\"config2\":\"0x1001\"}}\n", "error",
                              "a uprobe or uretprobe entry");
        if (access("/sys/bus/event_source/devices/kprobe/type", F_OK) == 0)
                expect_member(d3.socket, "{\"type\":\"add\",\"event\":{\"pmu\":\"kprobe//\",\"name\":\"memb_kpmu\","
                              "\"config2\":\"0xffffffff81000000\"}}\n", "error", "a kprobe or kretprobe entry");
        assert_int_equal(itest_daemon_stop(&d3), 0);
        itest_daemon_cleanup(&d3);
}

/* Appends LINE to tracefs FILE (uprobe_events); 0 or -errno. */
static int tracefs_append(const char *file, const char *line) {
        char path[128];
        int fd, r = 0;

        snprintf(path, sizeof(path), "/sys/kernel/tracing/%s", file);
        fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (write(fd, line, strlen(line)) < 0)
                r = -errno;
        close(fd);
        return r;
}

/* A dynamic event someone else made (perf probe, bpftrace, another
 * tool; root here) is a tracepoint to evmond, and its fields are the
 * fetch-args its maker chose: "+0(%di):string" of every process that
 * runs the binary. A member without socket.admin_add.fetch may not add
 * it as a "tracepoint" entry. */
static void test_admin_add_dynamic_tracepoint(void **state) {
        struct itest_daemon d5 = { .pid = -1 };
        char line[1024], grp[32], target[256];

        (void) state;
        if (uprobe_lines("x") < 0)
                skip();
        snprintf(grp, sizeof(grp), "evmt%d", (int) getpid());
        snprintf(target, sizeof(target), "%s/pub/prog", bins);
        snprintf(line, sizeof(line), "p:%s/memb_dyn %s:0x1001 arg=+0(%%di):string\n", grp, target);
        assert_int_equal(tracefs_append("uprobe_events", line), 0);
        start_admin_daemon(&d5, "{\"kinds\": [\"tracepoint\"]}");
        snprintf(line, sizeof(line), "{\"type\":\"add\",\"event\":{\"tracepoint\":\"%s:memb_dyn\"}}\n", grp);
        expect_member(d5.socket, line, "error", "dynamic event");
        /* A kernel tracepoint is served. */
        expect_member(d5.socket, "{\"type\":\"add\",\"event\":{\"tracepoint\":\"syscalls:sys_enter_getsid\"}}\n",
                      "result", "syscalls:sys_enter_getsid");
        assert_int_equal(itest_daemon_stop(&d5), 0);
        itest_daemon_cleanup(&d5);
        snprintf(line, sizeof(line), "-:%s/memb_dyn\n", grp);
        assert_int_equal(tracefs_append("uprobe_events", line), 0);
}

int main(void) {
        static const char *const need[] = { "syscalls/sys_enter_getpgid", "syscalls/sys_enter_getsid", NULL };
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_cgroup_subscribes_do_not_stall),
                cmocka_unit_test(test_cgroup_subscribes_many_uids),
                cmocka_unit_test(test_admin_adds_nothing_by_default),
                cmocka_unit_test(test_admin_add_policy),
                cmocka_unit_test(test_admin_add_no_offsets),
                cmocka_unit_test(test_admin_add_dynamic_tracepoint),
        };

        itest_require(need);
        if (!find_cgroup2()) {
                fprintf(stderr, "SKIP: no cgroup2 file system is mounted\n");
                return ITEST_SKIP;
        }
        return cmocka_run_group_tests(tests, setup, teardown);
}
