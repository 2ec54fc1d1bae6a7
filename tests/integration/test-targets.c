/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Targets, filters and subscriptions on the real kernel: evmond watching
 * one cgroup or one process tree sees exactly the calls made there (each
 * call once, or twice where the kernel wrote its record twice: struct
 * ledger) and none made elsewhere; a kernel-side filter passes exactly what matches;
 * clients with different subscriptions each get exactly their share.
 *
 * The cgroup parts need a cgroup2 mount. Without one they are skipped,
 * and the whole test then exits 77 after the other parts passed. */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "itest.h"

#define GETPPID "syscalls:sys_enter_getppid"
#define CLOSE "syscalls:sys_enter_close"
/* The target tests' calls are numbered: call K is getpgid(CALL_BASE + K),
 * a pid above PID_MAX_LIMIT (so it fails at once, ESRCH), and its line
 * carries the number in fields.pid. So each line is matched to the one
 * call it records: a call seen twice, and how, is told apart from one
 * made elsewhere or missed (struct ledger). */
#define CALLS "syscalls:sys_enter_getpgid"
#define CALL_BASE 1000000000L
/* Subscriptions are tested with calls nobody else makes: getpgid(77001)
 * and getsid(77002), filtered in the kernel, so other load on the host
 * (other tests, benchmarks) cannot crowd a system-wide daemon. */
#define GETPGID "syscalls:sys_enter_getpgid"
#define GETSID "syscalls:sys_enter_getsid"
#define ARG_PGID 77001
#define ARG_SID 77002

static struct itest_daemon daemon_ = { .pid = -1 };
static char cg_mount[256];        /* empty: no cgroup2 on this host */
static char cg_dir[2][512];       /* cgroups a test made, removed by teardown */
static char bad_dir[64];          /* a config-error test's directory, likewise */
static bool cgroup_skipped;

/* ---- helpers -------------------------------------------------------- */

static void need_cgroup2(void) {
        if (cg_mount[0])
                return;
        fprintf(stderr, "no cgroup2 file system is mounted: cgroup part skipped\n");
        cgroup_skipped = true;
        skip();
}

/* Makes a fresh cgroup named evmon-itest-TAG-PID; its name (relative to the
 * mount) in NAME. */
static const char *cgroup_make(int slot, const char *tag, char *name, size_t size) {
        snprintf(name, size, "evmon-itest-%s-%d", tag, (int) getpid());
        snprintf(cg_dir[slot], sizeof(cg_dir[slot]), "%s/%s", cg_mount, name);
        if (mkdir(cg_dir[slot], 0755) < 0 && errno != EEXIST) {
                fprintf(stderr, "cannot create cgroup %s: %m\n", cg_dir[slot]);
                fail();
        }
        return cg_dir[slot];
}

static void cgroup_enter(const char *dir, pid_t pid) {
        char path[600], buf[32];
        int fd, n;

        snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
        fd = open(path, O_WRONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        n = snprintf(buf, sizeof(buf), "%d\n", (int) pid);
        assert_int_equal(write(fd, buf, (size_t) n), n);
        close(fd);
}

static void cgroup_remove(char *dir) {
        if (!dir[0])
                return;
        /* A reaped child may linger in the cgroup for a moment. */
        for (int i = 0; i < 100 && rmdir(dir) < 0 && errno == EBUSY; i++)
                usleep(20000);
        if (access(dir, F_OK) == 0)
                fprintf(stderr, "warning: could not remove cgroup %s: %m\n", dir);
        dir[0] = 0;
}

static int teardown(void **state) {
        itest_daemon_cleanup(&daemon_);
        daemon_ = (struct itest_daemon) { .pid = -1 };
        cgroup_remove(cg_dir[0]);
        cgroup_remove(cg_dir[1]);
        if (bad_dir[0]) {
                char p[128];
                snprintf(p, sizeof(p), "%s/bad.json", bad_dir);
                unlink(p);
                rmdir(bad_dir);
                bad_dir[0] = 0;
        }
        return 0;
}

static struct itest_client *client_new(void) {
        struct itest_client *c = calloc(1, sizeof(*c));
        json_object *o;

        assert_non_null(c);
        assert_int_equal(itest_client_connect(c, daemon_.socket), 0);
        o = itest_client_expect(c, "hello", 5000);
        assert_non_null(o);
        json_object_put(o);
        return c;
}

static void client_free(struct itest_client *c) {
        itest_client_close(c);
        free(c);
}

/* The next line that is not an event or a loss report: the answer to what
 * we sent (events of the old subscription may come before it). */
static json_object *client_reply(struct itest_client *c) {
        for (;;) {
                json_object *o = itest_client_next(c, 5000);
                const char *type;

                assert_non_null(o);
                type = itest_str(o, "type");
                if (strcmp(type, "event") != 0 && strcmp(type, "lost") != 0 && strcmp(type, "dropped") != 0)
                        return o;
                json_object_put(o);
        }
}

static void client_subscribe(struct itest_client *c, const char *line) {
        json_object *o;

        assert_int_equal(itest_client_send(c, line), 0);
        o = client_reply(c);
        if (strcmp(itest_str(o, "type"), "subscribed") != 0)
                fail_msg("subscribe %s answered %s", line, json_object_to_json_string(o));
        json_object_put(o);
}

/* Reads what C gets until the stream is quiet for QUIET_MS into T. */
static void client_tally(struct itest_client *c, int quiet_ms, struct itest_tally *t) {
        size_t len;
        char *text = itest_client_slurp(c, quiet_ms, 60000, &len);

        itest_for_each_line(text, len, itest_tally_line, t);
        free(text);
}

/* Reads what C gets into FN while the N processes PIDS run, reaps them
 * (each must exit 0), then reads until the stream is quiet: a slow machine
 * may pause longer than any fixed quiet time while they still run. */
static void client_read_while(struct itest_client *c, const pid_t *pids, size_t n,
                              void (*fn)(json_object *o, void *ud), void *ud) {
        bool done[8] = {};
        size_t left = n, len;
        char *text;

        assert_true(n <= 8);
        for (bool last = false;; ) {
                text = itest_client_slurp(c, last ? 1000 : 200, 60000, &len);
                itest_for_each_line(text, len, fn, ud);
                free(text);
                if (last)
                        return;
                for (size_t i = 0; i < n; i++) {
                        int status;
                        if (done[i] || waitpid(pids[i], &status, WNOHANG) != pids[i])
                                continue;
                        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
                        done[i] = true;
                        left--;
                }
                last = left == 0;
        }
}

/* The count of the I-th event in evmond's status (what it read from the
 * rings, whether or not any client wanted it), and the records it could
 * not parse, summed over the CPUs. */
static int64_t status_count(struct itest_client *c, size_t i, int64_t *ret_malformed) {
        json_object *o, *a;
        int64_t n;

        o = itest_client_status(c, 5000);
        assert_non_null(o);
        assert_true(json_object_object_get_ex(o, "events", &a));
        n = itest_int(json_object_array_get_idx(a, i), "count");
        *ret_malformed = 0;
        assert_true(json_object_object_get_ex(o, "cpus", &a));
        for (size_t k = 0; k < json_object_array_length(a); k++)
                *ret_malformed += itest_int(json_object_array_get_idx(a, k), "malformed");
        json_object_put(o);
        return n;
}

/* Exactly N, or a shortfall the kernel reported as lost. */
static void assert_exact_or_lost(const struct itest_tally *t, pid_t pid, const char *event, int64_t n) {
        int64_t got = itest_tally_get(t, pid, event);

        if (got != n)
                fprintf(stderr, "%s from %d: %" PRId64 " of %" PRId64 " (%" PRId64 " lost)\n",
                        event, (int) pid, got, n, t->lost);
        assert_true(got <= n);
        assert_true(got + t->lost >= n);
        assert_int_equal(t->dropped, 0);
}

/* The calls numbered [FIRST, FIRST + N) that process PID made, and the
 * lines that came of them. The kernel may write one call's record twice:
 * a handler walking a tracepoint's list of events (perf_tp_event() in
 * kernel/events/core.c, hlist_for_each_entry_rcu()) is interrupted by an
 * IPI that reschedules a PMU's events on that CPU (ctx_resched():
 * perf_trace_del() and perf_trace_add() in
 * kernel/trace/trace_event_perf.c, hlist_del_rcu() and at once
 * hlist_add_head_rcu() of the same events). An event put back at the head
 * while the walk stands on it leads the walk back over events it already
 * passed, and those write their record again, with a later time: a
 * doorbell copy (a tracepoint event in a software dummy's group, moved by
 * the software PMU's reschedules) put ahead of the main event does that to
 * the main event. Any tool enabling a software event on that CPU (another
 * evmond arming a doorbell, perf) can cause it; nothing counts it. So a
 * call may have two lines of distinct times: that is the kernel's, and
 * counted. A later line of one call with the same (or an earlier) time, a
 * line of a call not made, or one missing that no "lost" line owns are
 * evmond's, and fail. */
struct ledger {
        pid_t pid;
        int64_t first;
        int n;
        int *seen;              /* lines of each call */
        int64_t *ts;            /* the first line's time */
        int64_t lines, twice, same_ts;  /* same_ts: a later line of a call, not later in time */
        int64_t with_proc;      /* lines naming the process: this test its parent, its comm */
};

static void ledger_init(struct ledger *l, pid_t pid, int64_t first, int n) {
        *l = (struct ledger) { .pid = pid, .first = first, .n = n };
        l->seen = calloc((size_t) n, sizeof(*l->seen));
        l->ts = calloc((size_t) n, sizeof(*l->ts));
        assert_non_null(l->seen);
        assert_non_null(l->ts);
}

static void ledger_done(struct ledger *l) {
        free(l->seen);
        free(l->ts);
        *l = (struct ledger) {};
}

/* What the lines of a target test go to: the tally, and each ledger. */
struct calls {
        struct itest_tally t;
        struct ledger *ledgers;
        size_t n_ledgers;
        int64_t strays;         /* lines of our calls that no ledger has (wrong process or number) */
};

static void calls_line(json_object *o, void *userdata) {
        struct calls *c = userdata;
        json_object *fields, *v;
        int64_t k, ts;
        pid_t pid;

        itest_tally_line(o, &c->t);
        if (strcmp(itest_str(o, "type"), "event") != 0 || strcmp(itest_str(o, "event"), CALLS) != 0)
                return;
        assert_true(json_object_object_get_ex(o, "fields", &fields));
        assert_true(json_object_object_get_ex(fields, "pid", &v));
        k = json_object_get_int64(v) - CALL_BASE;
        pid = (pid_t) itest_int(o, "pid");
        ts = itest_int(o, "ts");
        for (size_t i = 0; i < c->n_ledgers; i++) {
                struct ledger *l = &c->ledgers[i];

                if (l->pid != pid || k < l->first || k >= l->first + l->n)
                        continue;
                l->lines++;
                if (json_object_object_get_ex(o, "proc", &v))
                        l->with_proc += itest_int(v, "ppid") == getpid() && itest_str(v, "comm")[0];
                if (l->seen[k - l->first]++ == 0)
                        l->ts[k - l->first] = ts;
                else if (ts <= l->ts[k - l->first])
                        l->same_ts++;   /* the kernel's second write comes later */
                else {
                        l->twice++;
                        fprintf(stderr, "call %" PRId64 " of %d: a second record from the kernel, %" PRId64
                                " ns after the first\n", k, (int) pid, ts - l->ts[k - l->first]);
                }
                return;
        }
        c->strays++;
}

/* Every call of every ledger seen, or a shortfall the kernel reported as
 * lost; nothing seen that was not made; no line given twice. */
static void calls_check(const struct calls *c) {
        int64_t missing = 0;

        for (size_t i = 0; i < c->n_ledgers; i++) {
                const struct ledger *l = &c->ledgers[i];
                int64_t m = 0;

                for (int k = 0; k < l->n; k++)
                        m += l->seen[k] == 0;
                fprintf(stderr, "calls %" PRId64 "..%" PRId64 " of %d: %" PRId64 " lines, %" PRId64 " calls missing, %" PRId64
                        " written twice by the kernel, %" PRId64 " lines repeated\n",
                        l->first, l->first + l->n - 1, (int) l->pid, l->lines, m, l->twice, l->same_ts);
                assert_int_equal(l->same_ts, 0);
                missing += m;
        }
        if (missing > c->t.lost)
                fprintf(stderr, "%" PRId64 " calls missing, %" PRId64 " reported lost\n", missing, c->t.lost);
        assert_true(missing <= c->t.lost);
        assert_int_equal(c->strays, 0);
        assert_int_equal(c->t.dropped, 0);
}

static void calls_done(struct calls *c) {
        for (size_t i = 0; i < c->n_ledgers; i++)
                ledger_done(&c->ledgers[i]);
        itest_tally_done(&c->t);
        *c = (struct calls) {};
}

/* Reads what C gets until the stream is quiet for QUIET_MS into CALLS. */
static void calls_read(struct itest_client *c, int quiet_ms, struct calls *calls) {
        size_t len;
        char *text = itest_client_slurp(c, quiet_ms, 60000, &len);

        itest_for_each_line(text, len, calls_line, calls);
        free(text);
}

/* Forks a child that makes the calls numbered [FIRST, FIRST + N) once a
 * byte arrives on the gate (itest_release()). */
static pid_t spawn_numbered(int64_t first, int n, int *ret_gate) {
        pid_t pid = test_fork_gated(ret_gate);

        if (pid == 0) {
                for (int i = 0; i < n; i++)
                        syscall(SYS_getpgid, CALL_BASE + first + i);
                _exit(0);
        }
        return pid;
}

/* Writes CONFIG_JSON to a file in DIR and runs evmond on it with ARG (and
 * a socket in DIR); returns the exit status, the output in *RET. */
static int run_evmond(const char *dir, const char *config_json, const char *arg, char **ret) {
        char evmond[512], config[600], sock[600];
        FILE *f;

        snprintf(config, sizeof(config), "%s/bad.json", dir);
        snprintf(sock, sizeof(sock), "%s/bad.sock", dir);
        f = fopen(config, "we");
        assert_non_null(f);
        fputs(config_json, f);
        fclose(f);
        itest_build_path("evmond", evmond, sizeof(evmond));
        const char *argv[] = { evmond, "--config", config, "--socket", sock, arg, NULL };
        return itest_run(argv, 20000, ret);
}

/* ---- 1. cgroup target ----------------------------------------------- */

#define N_INSIDE 20000
#define N_OUTSIDE 7000

static void test_cgroup_target(void **state) {
        struct ledger ledgers[1];
        struct calls calls = { .ledgers = ledgers, .n_ledgers = 1 };
        struct itest_client *c;
        char name[128], config[1024];
        const char *dir;
        int gate_in, gate_out;
        pid_t inside, outside;
        int64_t counted, malformed, lines;

        need_cgroup2();
        dir = cgroup_make(0, "target", name, sizeof(name));
        snprintf(config, sizeof(config),
                 "{\n"
                 "  \"ring\": {\"pages\": 256},\n"
                 "  \"targets\": {\"cgroups\": [\"%s\"]},\n"
                 "  \"events\": [{\"tracepoint\": \"" CALLS "\"}]\n"
                 "}\n", name);
        assert_int_equal(itest_daemon_start(&daemon_, config), 0);
        c = client_new();

        /* The child is in the cgroup before it makes a single call. */
        inside = spawn_numbered(0, N_INSIDE, &gate_in);
        cgroup_enter(dir, inside);
        outside = spawn_numbered(N_INSIDE, N_OUTSIDE, &gate_out);
        ledger_init(&ledgers[0], inside, 0, N_INSIDE);
        itest_release(gate_in);
        itest_release(gate_out);
        client_read_while(c, (pid_t[]) { inside, outside }, 2, calls_line, &calls);
        counted = status_count(c, 0, &malformed);
        lines = itest_tally_get(&calls.t, inside, CALLS);
        fprintf(stderr, "cgroup target: %" PRId64 " from inside (of %d), %" PRId64 " from outside, %" PRId64 " lost, "
                "%" PRId64 " dropped; evmond read %" PRId64 " (%" PRId64 " malformed records)\n",
                lines, N_INSIDE, itest_tally_get(&calls.t, outside, CALLS), calls.t.lost,
                calls.t.dropped, counted, malformed);
        calls_check(&calls);
        assert_int_equal(itest_tally_get(&calls.t, outside, CALLS), 0);
        /* Nothing else runs in a cgroup made a moment ago. */
        assert_int_equal(itest_tally_others(&calls.t, &inside, 1), 0);
        /* What evmond read from the kernel is what the client got. */
        assert_int_equal(counted, lines);
        /* The child entered the cgroup after it forked, so the target's
         * events never saw its birth: its context is taken at first
         * sight (issue 31), on every line. */
        assert_int_equal(ledgers[0].with_proc, lines);

        client_free(c);
        calls_done(&calls);
        assert_int_equal(itest_daemon_stop(&daemon_), 0);
}

static void test_missing_cgroup_is_a_config_error(void **state) {
        char *dir = strcpy(bad_dir, "/tmp/evmon-itest-cg-XXXXXX"), config[600], want[1200], *out = NULL;
        static const char text[] =
                "{\n"
                "  \"events\": [{\"tracepoint\": \"" GETPPID "\"}],\n"
                "  \"targets\": {\n"
                "    \"cgroups\": [\"evmon-itest-no-such-cgroup\"]\n"
                "  }\n"
                "}\n";

        need_cgroup2();
        assert_non_null(mkdtemp(dir));
        snprintf(config, sizeof(config), "%s/bad.json", dir);
        snprintf(want, sizeof(want), "%s:4: targets.cgroups[0]: no cgroup %s/evmon-itest-no-such-cgroup", config, cg_mount);

        /* At start... */
        assert_int_equal(run_evmond(dir, text, NULL, &out), 2);
        fprintf(stderr, "%s", out);
        assert_non_null(strstr(out, want));
        free(out);
        /* ...and from --check-config. */
        assert_int_equal(run_evmond(dir, text, "--check-config", &out), 2);
        assert_non_null(strstr(out, want));
        free(out);
}

/* ---- 2. pid target -------------------------------------------------- */

#define N_PARENT 3000
#define N_CHILD 5000
#define N_THREAD 2000
#define N_STRANGER 4000
/* The first call number of each. */
#define K_PARENT 100000
#define K_THREAD 200000
#define K_CHILD 300000
#define K_STRANGER 400000

/* The target's second thread, there before evmond starts: N_THREAD
 * calls for each byte on its pipe, then a byte back. */
static void *target_thread(void *userdata) {
        int *fds = userdata;
        char c;

        while (read(fds[0], &c, 1) == 1) {
                for (int i = 0; i < N_THREAD; i++)
                        syscall(SYS_getpgid, CALL_BASE + K_THREAD + i);
                if (write(fds[1], &c, 1) != 1)
                        break;
        }
        return NULL;
}

/* The target: waits for commands on CMD, answers on ACK.
 * 'g': makes N_PARENT calls itself; 't': has its second thread
 * make N_THREAD; 'f': forks a child that makes N_CHILD, reaps it and
 * answers its pid; EOF: exits. */
static pid_t spawn_target(int *ret_cmd, int *ret_ack) {
        int cmd[2], ack[2];
        pid_t pid;

        assert_int_equal(pipe2(cmd, O_CLOEXEC), 0);
        assert_int_equal(pipe2(ack, O_CLOEXEC), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                int to_thread[2], from_thread[2], thread_fds[2];
                pthread_t thread;
                char c;

                close(cmd[1]);
                close(ack[0]);
                if (pipe(to_thread) < 0 || pipe(from_thread) < 0)
                        _exit(6);
                thread_fds[0] = to_thread[0];
                thread_fds[1] = from_thread[1];
                if (pthread_create(&thread, NULL, target_thread, thread_fds) != 0)
                        _exit(7);
                while (read(cmd[0], &c, 1) == 1) {
                        pid_t child = 0;
                        int status;

                        if (c == 't') {
                                if (write(to_thread[1], &c, 1) != 1 || read(from_thread[0], &c, 1) != 1)
                                        _exit(8);
                        } else if (c == 'g') {
                                for (int i = 0; i < N_PARENT; i++)
                                        syscall(SYS_getpgid, CALL_BASE + K_PARENT + i);
                        } else if (c == 'f') {
                                child = fork();
                                if (child < 0)
                                        _exit(3);
                                if (child == 0) {
                                        for (int i = 0; i < N_CHILD; i++)
                                                syscall(SYS_getpgid, CALL_BASE + K_CHILD + i);
                                        _exit(0);
                                }
                                if (waitpid(child, &status, 0) != child || status != 0)
                                        _exit(4);
                        }
                        if (write(ack[1], &child, sizeof(child)) != sizeof(child))
                                _exit(5);
                }
                _exit(0);
        }
        close(cmd[0]);
        close(ack[1]);
        *ret_cmd = cmd[1];
        *ret_ack = ack[0];
        return pid;
}

static pid_t target_do(int cmd, int ack, char what) {
        pid_t child;

        assert_int_equal(write(cmd, &what, 1), 1);
        assert_int_equal(read(ack, &child, sizeof(child)), sizeof(child));
        return child;
}

static void test_pid_target(void **state) {
        struct ledger ledgers[3];
        struct calls calls = { .ledgers = ledgers, .n_ledgers = 3 };
        struct itest_client *c;
        char config[1024];
        int cmd, ack, gate, status;
        pid_t target, child, stranger, ours[2];
        json_object *o, *events;
        int64_t lines;
        int64_t cpu;

        target = spawn_target(&cmd, &ack);
        snprintf(config, sizeof(config),
                 "{\n"
                 "  \"ring\": {\"pages\": 256},\n"
                 "  \"targets\": {\"pids\": [%d]},\n"
                 "  \"events\": [{\"tracepoint\": \"" CALLS "\"}]\n"
                 "}\n", (int) target);
        assert_int_equal(itest_daemon_start(&daemon_, config), 0);
        c = client_new();

        /* The target's own calls, its thread's (started before evmond),
         * then a child forked after evmond started; a stranger (the
         * target's sibling) calls too. */
        assert_int_equal(target_do(cmd, ack, 'g'), 0);
        assert_int_equal(target_do(cmd, ack, 't'), 0);
        child = target_do(cmd, ack, 'f');
        assert_true(child > 0);
        stranger = spawn_numbered(K_STRANGER, N_STRANGER, &gate);
        itest_release(gate);
        itest_reap(stranger);

        ledger_init(&ledgers[0], target, K_PARENT, N_PARENT);
        ledger_init(&ledgers[1], target, K_THREAD, N_THREAD);
        ledger_init(&ledgers[2], child, K_CHILD, N_CHILD);
        calls_read(c, 1000, &calls);
        fprintf(stderr, "pid target: %" PRId64 " from the target (its two threads), %" PRId64 " from its child, %" PRId64
                " from a stranger\n",
                itest_tally_get(&calls.t, target, CALLS), itest_tally_get(&calls.t, child, CALLS),
                itest_tally_get(&calls.t, stranger, CALLS));
        calls_check(&calls);
        assert_int_equal(itest_tally_get(&calls.t, stranger, CALLS), 0);
        ours[0] = target;
        ours[1] = child;
        assert_int_equal(itest_tally_others(&calls.t, ours, 2), 0);
        lines = calls.t.events;
        calls_done(&calls);

        /* The target goes away: evmond keeps serving, without spinning. */
        close(cmd);
        assert_int_equal(waitpid(target, &status, 0), target);
        assert_int_equal(status, 0);
        close(ack);
        usleep(300000);
        cpu = itest_cpu_ms(daemon_.pid);
        sleep(1);
        cpu = itest_cpu_ms(daemon_.pid) - cpu;
        fprintf(stderr, "evmond used %" PRId64 " ms of CPU in the second after its target exited\n", cpu);
        assert_true(cpu < 250);
        assert_int_equal(waitpid(daemon_.pid, &status, WNOHANG), 0);

        o = itest_client_status(c, 5000);
        assert_non_null(o);
        assert_true(json_object_object_get_ex(o, "events", &events));
        assert_int_equal(json_object_array_length(events), 1);
        assert_string_equal(itest_str(json_object_array_get_idx(events, 0), "event"), CALLS);
        /* What evmond read from the kernel is what the client got. */
        assert_int_equal(itest_int(json_object_array_get_idx(events, 0), "count"), lines);
        json_object_put(o);
        client_free(c);
        /* And a new client is served. */
        client_free(client_new());
        assert_int_equal(itest_daemon_stop(&daemon_), 0);
}

/* LINE (a runtime control request) sent on C; its answer, "result" or
 * "error", the config and schema lines before it skipped. */
static json_object *control(struct itest_client *c, const char *line) {
        assert_int_equal(itest_client_send(c, line), 0);
        for (;;) {
                json_object *o = itest_client_next(c, 5000);
                const char *type;

                assert_non_null(o);
                type = itest_str(o, "type");
                if (strcmp(type, "result") == 0 || strcmp(type, "error") == 0)
                        return o;
                json_object_put(o);
        }
}

static void expect_control_error(struct itest_client *c, const char *line, const char *want) {
        json_object *o = control(c, line);

        if (strcmp(itest_str(o, "type"), "error") != 0 || !strstr(itest_str(o, "error"), want))
                fail_msg("%s: wanted an error with \"%s\", got %s", line, want, json_object_to_json_string(o));
        json_object_put(o);
}

/* A target process that exits leaves the others watched by what is opened
 * later (a filter change opens the event anew), and once all have exited
 * an add says so. Before, the first exit made every later open fail with
 * "failed to open ... on every CPU: No such process". */
static void test_pid_targets_exit(void **state) {
        struct ledger ledgers[1];
        struct calls calls = { .ledgers = ledgers, .n_ledgers = 1 };
        struct itest_client *c;
        char config[1024];
        int cmd[2], ack[2], status;
        pid_t target[2];
        json_object *o;

        for (int i = 0; i < 2; i++)
                target[i] = spawn_target(&cmd[i], &ack[i]);
        snprintf(config, sizeof(config),
                 "{\n"
                 "  \"targets\": {\"pids\": [%d, %d]},\n"
                 "  \"events\": [{\"tracepoint\": \"" CALLS "\"}]\n"
                 "}\n", (int) target[0], (int) target[1]);
        assert_int_equal(itest_daemon_start(&daemon_, config), 0);
        c = client_new();

        /* Killed: the second target, forked after it, holds its command
         * pipe too, so closing ours would not end it. */
        kill(target[0], SIGKILL);
        assert_int_equal(waitpid(target[0], &status, 0), target[0]);
        close(cmd[0]);
        close(ack[0]);
        o = control(c, "{\"type\":\"filter\",\"event\":\"" CALLS "\",\"filter\":\"common_pid != 1\"}\n");
        if (strcmp(itest_str(o, "type"), "result") != 0)
                fail_msg("a filter change with one of two targets gone: %s", json_object_to_json_string(o));
        json_object_put(o);
        ledger_init(&ledgers[0], target[1], K_PARENT, N_PARENT);
        assert_int_equal(target_do(cmd[1], ack[1], 'g'), 0);
        calls_read(c, 1000, &calls);
        fprintf(stderr, "pid targets exit: %" PRId64 " of %d from the target left\n",
                itest_tally_get(&calls.t, target[1], CALLS), N_PARENT);
        calls_check(&calls);
        assert_int_equal(itest_tally_others(&calls.t, &target[1], 1), 0);
        calls_done(&calls);

        close(cmd[1]);
        assert_int_equal(waitpid(target[1], &status, 0), target[1]);
        assert_int_equal(status, 0);
        close(ack[1]);
        expect_control_error(c, "{\"type\":\"add\",\"event\":{\"tracepoint\":\"" GETSID "\"}}\n",
                             "every process in targets.pids has exited since evmond started");
        expect_control_error(c, "{\"type\":\"add\",\"event\":{\"software\":\"cpu-clock\"}}\n",
                             "every process in targets.pids has exited since evmond started");
        client_free(c);
        assert_int_equal(itest_daemon_stop(&daemon_), 0);
}

/* An event added after the target cgroup was removed is refused with that
 * reason, not a missing perf_event controller. */
static void test_cgroup_target_removed(void **state) {
        struct itest_client *c;
        char name[128], config[1024];

        need_cgroup2();
        cgroup_make(0, "removed", name, sizeof(name));
        snprintf(config, sizeof(config),
                 "{\n"
                 "  \"targets\": {\"cgroups\": [\"%s\"]},\n"
                 "  \"events\": [{\"tracepoint\": \"" GETPPID "\"}]\n"
                 "}\n", name);
        assert_int_equal(itest_daemon_start(&daemon_, config), 0);
        c = client_new();
        cgroup_remove(cg_dir[0]);
        expect_control_error(c, "{\"type\":\"add\",\"event\":{\"tracepoint\":\"" GETSID "\"}}\n",
                             "(targets.cgroups[0]) was removed since evmond started");
        client_free(c);
        assert_int_equal(itest_daemon_stop(&daemon_), 0);
}

/* ---- 3. filter ------------------------------------------------------ */

#define K_MATCH 4000
#define L_OTHER 6000

static int64_t filter_bad_fd;

static void check_close_fd(json_object *o, void *userdata) {
        json_object *fields, *fd;

        if (strcmp(itest_str(o, "type"), "event") != 0)
                return;
        assert_true(json_object_object_get_ex(o, "fields", &fields));
        assert_true(json_object_object_get_ex(fields, "fd", &fd));
        if (json_object_get_int64(fd) != 12345)
                filter_bad_fd++;
}

static void filter_line(json_object *o, void *userdata) {
        itest_tally_line(o, userdata);
        check_close_fd(o, NULL);
}

static void test_filter(void **state) {
        static const char config[] =
                "{\n"
                "  \"ring\": {\"pages\": 256},\n"
                "  \"events\": [{\"tracepoint\": \"" CLOSE "\", \"filter\": \"fd == 12345\"}]\n"
                "}\n";
        struct itest_tally t = {};
        struct itest_client *c;
        int gate_k, gate_l;
        pid_t k, l;

        assert_int_equal(itest_daemon_start(&daemon_, config), 0);
        c = client_new();
        k = itest_spawn_calls(SYS_close, 12345, K_MATCH, &gate_k);
        l = itest_spawn_calls(SYS_close, 12346, L_OTHER, &gate_l);
        itest_release(gate_k);
        itest_release(gate_l);
        filter_bad_fd = 0;
        client_read_while(c, (pid_t[]) { k, l }, 2, filter_line, &t);

        fprintf(stderr, "filter: %" PRId64 " close(12345) of %d, %" PRId64 " close(12346), %" PRId64 " with another fd\n",
                itest_tally_get(&t, k, CLOSE), K_MATCH, itest_tally_get(&t, l, CLOSE), filter_bad_fd);
        assert_exact_or_lost(&t, k, CLOSE, K_MATCH);
        assert_int_equal(itest_tally_get(&t, l, CLOSE), 0);
        /* The kernel filtered: nothing that does not match arrived from anyone. */
        assert_int_equal(filter_bad_fd, 0);
        itest_tally_done(&t);
        client_free(c);
        assert_int_equal(itest_daemon_stop(&daemon_), 0);
}

static void test_rejected_filter_is_a_config_error(void **state) {
        char *dir = strcpy(bad_dir, "/tmp/evmon-itest-filter-XXXXXX"), config[600], want[700], *out = NULL;
        static const char text[] =
                "{\n"
                "  \"events\": [\n"
                "    {\"tracepoint\": \"" CLOSE "\",\n"
                "     \"filter\": \"no_such_field == 1\"}\n"
                "  ]\n"
                "}\n";

        assert_non_null(mkdtemp(dir));
        snprintf(config, sizeof(config), "%s/bad.json", dir);
        snprintf(want, sizeof(want), "%s:4: events[0].filter: the kernel rejected the filter \"no_such_field == 1\"", config);

        assert_int_equal(run_evmond(dir, text, "--check-config", &out), 2);
        fprintf(stderr, "%s", out);
        assert_non_null(strstr(out, want));
        /* The kernel's own words (trace_events_filter.c's err_text). */
        assert_non_null(strstr(out, "Field not found"));
        free(out);

        /* Starting with it is the same config error. */
        assert_int_equal(run_evmond(dir, text, NULL, &out), 2);
        assert_non_null(strstr(out, want));
        free(out);
}

/* ---- 4. subscriptions ----------------------------------------------- */

#define A_PGID 3000  /* worker 1, outside the cgroup */
#define B_SID 2000
#define C_PGID 2500  /* worker 2, in the cgroup */
#define D_SID 1500

struct workers {
        pid_t w[4];
        int gate[4];
};

/* Four processes of known behaviour: w[0] makes A getpgid calls, w[1] B
 * getsid calls (both outside any test cgroup), w[2] C getpgid and w[3] D
 * getsid calls (in DIR when it is not NULL). */
static void spawn_workers(struct workers *w, const char *dir) {
        w->w[0] = itest_spawn_calls(SYS_getpgid, ARG_PGID, A_PGID, &w->gate[0]);
        w->w[1] = itest_spawn_calls(SYS_getsid, ARG_SID, B_SID, &w->gate[1]);
        w->w[2] = itest_spawn_calls(SYS_getpgid, ARG_PGID, C_PGID, &w->gate[2]);
        w->w[3] = itest_spawn_calls(SYS_getsid, ARG_SID, D_SID, &w->gate[3]);
        if (dir) {
                cgroup_enter(dir, w->w[2]);
                cgroup_enter(dir, w->w[3]);
        }
}

static void run_workers(struct workers *w) {
        for (int i = 0; i < 4; i++)
                itest_release(w->gate[i]);
        for (int i = 0; i < 4; i++)
                itest_reap(w->w[i]);
}

static void test_subscriptions(void **state) {
        static const char config[] =
                "{\n"
                "  \"ring\": {\"pages\": 256},\n"
                "  \"events\": [\n"
                "    {\"tracepoint\": \"" GETPGID "\", \"filter\": \"pid == 77001\"},\n"
                "    {\"tracepoint\": \"" GETSID "\", \"filter\": \"pid == 77002\"}\n"
                "  ]\n"
                "}\n";
        struct itest_tally tx = {}, ty = {}, tz = {};
        struct itest_client *x, *y, *z;
        char line[2048], name[128];
        const char *dir = NULL;
        struct workers w;
        json_object *o;

        if (cg_mount[0])
                dir = cgroup_make(1, "subscribe", name, sizeof(name));
        else {
                fprintf(stderr, "no cgroup2 file system is mounted: the cgroup subscription is skipped\n");
                cgroup_skipped = true;
        }
        assert_int_equal(itest_daemon_start(&daemon_, config), 0);
        x = client_new();
        y = client_new();
        z = client_new();

        /* Round 1. X: getpgid of w[0] and w[1]. Y: everything in the cgroup
         * (absolute path), or w[2] and w[3] by pid without cgroup2. Z:
         * getsid (by pattern) of every worker. */
        spawn_workers(&w, dir);
        snprintf(line, sizeof(line), "{\"type\":\"subscribe\",\"events\":[\"" GETPGID "\"],\"pids\":[%d,%d]}\n",
                 (int) w.w[0], (int) w.w[1]);
        client_subscribe(x, line);
        if (dir)
                snprintf(line, sizeof(line), "{\"type\":\"subscribe\",\"cgroups\":[\"%s\"]}\n", dir);
        else
                snprintf(line, sizeof(line), "{\"type\":\"subscribe\",\"pids\":[%d,%d]}\n", (int) w.w[2], (int) w.w[3]);
        client_subscribe(y, line);
        snprintf(line, sizeof(line), "{\"type\":\"subscribe\",\"events\":[\"syscalls:*_getsid\"],\"pids\":[%d,%d,%d,%d]}\n",
                 (int) w.w[0], (int) w.w[1], (int) w.w[2], (int) w.w[3]);
        client_subscribe(z, line);
        run_workers(&w);

        client_tally(x, 1000, &tx);
        client_tally(y, 300, &ty);
        client_tally(z, 300, &tz);
        fprintf(stderr, "round 1: X %" PRId64 " events, Y %" PRId64 ", Z %" PRId64 "\n", tx.events, ty.events, tz.events);
        assert_exact_or_lost(&tx, w.w[0], GETPGID, A_PGID);
        assert_int_equal(tx.events, itest_tally_get(&tx, w.w[0], GETPGID));
        assert_exact_or_lost(&ty, w.w[2], GETPGID, C_PGID);
        assert_exact_or_lost(&ty, w.w[3], GETSID, D_SID);
        assert_int_equal(ty.events, itest_tally_get(&ty, w.w[2], GETPGID) + itest_tally_get(&ty, w.w[3], GETSID));
        assert_exact_or_lost(&tz, w.w[1], GETSID, B_SID);
        assert_exact_or_lost(&tz, w.w[3], GETSID, D_SID);
        assert_int_equal(tz.events, itest_tally_get(&tz, w.w[1], GETSID) + itest_tally_get(&tz, w.w[3], GETSID));
        itest_tally_done(&tx);
        itest_tally_done(&ty);
        itest_tally_done(&tz);

        /* Round 2: X changes to getsid in the cgroup (relative path); a bad
         * subscription afterwards gets an error and leaves it as it was. Y
         * takes everything. Z names an event that is not served: an error,
         * and its round-1 subscription (of pids now gone) stays, so it
         * gets nothing. */
        spawn_workers(&w, dir);
        if (dir)
                snprintf(line, sizeof(line), "{\"type\":\"subscribe\",\"events\":[\"" GETSID "\"],\"cgroups\":[\"%s\"]}\n", name);
        else
                snprintf(line, sizeof(line), "{\"type\":\"subscribe\",\"events\":[\"" GETSID "\"],\"pids\":[%d]}\n", (int) w.w[3]);
        client_subscribe(x, line);
        assert_int_equal(itest_client_send(x, "{\"type\":\"subscribe\",\"events\":[\"sched:sched_no_such_event\"]}\n"), 0);
        o = client_reply(x);
        assert_string_equal(itest_str(o, "type"), "error");
        assert_non_null(strstr(itest_str(o, "error"), "sched:sched_no_such_event"));
        json_object_put(o);
        client_subscribe(y, "{\"type\":\"subscribe\"}\n");
        assert_int_equal(itest_client_send(z, "{\"type\":\"subscribe\",\"events\":[\"" GETSID "\",\"syscalls:sys_enter_nope\"]}\n"), 0);
        o = client_reply(z);
        assert_string_equal(itest_str(o, "type"), "error");
        assert_non_null(strstr(itest_str(o, "error"), "syscalls:sys_enter_nope"));
        json_object_put(o);
        run_workers(&w);

        client_tally(x, 1000, &tx);
        client_tally(y, 300, &ty);
        client_tally(z, 300, &tz);
        fprintf(stderr, "round 2: X %" PRId64 " events, Y %" PRId64 ", Z %" PRId64 "\n", tx.events, ty.events, tz.events);
        assert_exact_or_lost(&tx, w.w[3], GETSID, D_SID);
        assert_int_equal(tx.events, itest_tally_get(&tx, w.w[3], GETSID));
        assert_int_equal(tx.errors, 0);
        assert_exact_or_lost(&ty, w.w[0], GETPGID, A_PGID);
        assert_exact_or_lost(&ty, w.w[1], GETSID, B_SID);
        assert_exact_or_lost(&ty, w.w[2], GETPGID, C_PGID);
        assert_exact_or_lost(&ty, w.w[3], GETSID, D_SID);
        assert_int_equal(tz.events, 0);
        itest_tally_done(&tx);
        itest_tally_done(&ty);
        itest_tally_done(&tz);

        client_free(x);
        client_free(y);
        client_free(z);
        assert_int_equal(itest_daemon_stop(&daemon_), 0);
}

int main(void) {
        static const char *const need[] = { "syscalls/sys_enter_getppid", "syscalls/sys_enter_close",
                                            "syscalls/sys_enter_getpgid", "syscalls/sys_enter_getsid", NULL };
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_teardown(test_cgroup_target, teardown),
                cmocka_unit_test_teardown(test_missing_cgroup_is_a_config_error, teardown),
                cmocka_unit_test_teardown(test_pid_target, teardown),
                cmocka_unit_test_teardown(test_pid_targets_exit, teardown),
                cmocka_unit_test_teardown(test_cgroup_target_removed, teardown),
                cmocka_unit_test_teardown(test_filter, teardown),
                cmocka_unit_test_teardown(test_rejected_filter_is_a_config_error, teardown),
                cmocka_unit_test_teardown(test_subscriptions, teardown),
        };
        int r;

        itest_require(need);
        (void) test_cgroup2_mount(cg_mount, sizeof(cg_mount));
        r = cmocka_run_group_tests(tests, NULL, NULL);
        if (r == 0 && cgroup_skipped) {
                fprintf(stderr, "SKIP: no cgroup2 file system is mounted; the cgroup parts did not run\n");
                return ITEST_SKIP;
        }
        return r;
}
