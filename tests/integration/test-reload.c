/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Live reload on the real kernel. While a child makes a known number of
 * getppid calls, the config is rewritten (getppid kept, sched_process_exec
 * dropped, getpgid added) and evmond gets SIGHUP: the client is told the
 * new event list, the kept event loses nothing, the added one arrives and
 * the removed one stops. Broken configs (bad JSON, an unknown tracepoint,
 * a filter the kernel rejects, a change that takes a restart), through
 * `evmonctl reload` and SIGHUP, are refused and the old config serves on. */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "itest.h"

#define GETPPID "syscalls:sys_enter_getppid"
#define GETPGID "syscalls:sys_enter_getpgid"
#define EXEC "sched:sched_process_exec"

/* The load: N getppid calls in batches, paced over about two seconds. */
#define N_LOAD 200000
#define LOAD_BATCH 1000
#define LOAD_PAUSE_US 10000
/* getpgid(77003) calls: nobody else makes them, and the kernel filters
 * the rest of the host's out. */
#define ARG_PGID 77003
#define N_PGID 3000

static struct itest_daemon daemon_ = { .pid = -1 };
static char binary[256];
static pid_t load_pid;
static bool load_running;

static int teardown(void **state) {
        if (load_running) {
                kill(load_pid, SIGKILL);
                (void) waitpid(load_pid, NULL, 0);
        }
        if (binary[0])
                unlink(binary);
        itest_daemon_cleanup(&daemon_);
        return 0;
}

static void write_config(const char *text) {
        char tmp[256];
        FILE *f;

        /* Whole or not at all, as an editor or config management would. */
        snprintf(tmp, sizeof(tmp), "%s.tmp", daemon_.config);
        f = fopen(tmp, "we");
        assert_non_null(f);
        fputs(text, f);
        assert_int_equal(fclose(f), 0);
        assert_int_equal(rename(tmp, daemon_.config), 0);
}

static void config_v1(char *buf, size_t size) {
        snprintf(buf, size,
                 "{\n"
                 "  \"ring\": {\"pages\": 512},\n"
                 "  \"clients\": {\"queue_kib\": 65536},\n"
                 "  \"events\": [\n"
                 "    {\"tracepoint\": \"" GETPPID "\", \"filter\": \"common_pid == %d\"},\n"
                 "    {\"tracepoint\": \"" EXEC "\"}\n"
                 "  ]\n"
                 "}\n", (int) load_pid);
}

/* v2 keeps the getppid entry exactly as it was (so its fds stay), drops
 * exec, adds getpgid. EXTRA goes into the events list, RING is ring.pages. */
static void config_v2(char *buf, size_t size, const char *extra, int ring) {
        snprintf(buf, size,
                 "{\n"
                 "  \"ring\": {\"pages\": %d},\n"
                 "  \"clients\": {\"queue_kib\": 65536},\n"
                 "  \"events\": [\n"
                 "    {\"tracepoint\": \"" GETPPID "\", \"filter\": \"common_pid == %d\"},\n"
                 "    {\"tracepoint\": \"" GETPGID "\", \"filter\": \"pid == %d\"}%s\n"
                 "  ]\n"
                 "}\n", ring, (int) load_pid, ARG_PGID, extra);
}

/* A gated child that makes N_LOAD getppid calls, paced. */
static pid_t spawn_load(int *ret_gate) {
        pid_t pid = test_fork_gated(ret_gate);

        if (pid == 0) {
                for (int i = 0; i < N_LOAD; i++) {
                        syscall(SYS_getppid);
                        if ((i + 1) % LOAD_BATCH == 0)
                                usleep(LOAD_PAUSE_US);
                }
                _exit(0);
        }
        return pid;
}

static pid_t run_exec(void) {
        pid_t pid = fork();
        int status;

        assert_true(pid >= 0);
        if (pid == 0) {
                execl(binary, binary, (char *) NULL);
                _exit(127);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_int_equal(status, 0);
        return pid;
}

/* The controller, a child of the test so the test itself can read all the
 * while: it execs the unique binary (exec still served), reloads with
 * SIGHUP mid-load, waits for the new config on a client of its own, then
 * has a child make N_PGID getpgid calls and exec the binary again (exec
 * no longer served). Reports the two pids on OUT. Exits non-zero on
 * trouble. */
static void controller(int out) {
        struct itest_client *c = calloc(1, sizeof(*c));
        json_object *o;
        char config[2048];
        pid_t pids[2], g;
        int status;

        if (!c || itest_client_connect(c, daemon_.socket) < 0 || !(o = itest_client_expect(c, "hello", 5000)))
                _exit(10);
        json_object_put(o);
        /* This client wants nothing but what everyone gets. */
        if (itest_client_send(c, "{\"type\":\"subscribe\",\"events\":[\"" EXEC "\"],\"pids\":[1]}\n") < 0 ||
            !(o = itest_client_expect(c, "subscribed", 5000)))
                _exit(11);
        json_object_put(o);

        pids[0] = run_exec();
        usleep(600000);
        config_v2(config, sizeof(config), "", 512);
        write_config(config);
        if (kill(daemon_.pid, SIGHUP) < 0)
                _exit(12);
        o = itest_client_expect(c, "config", 10000);
        if (!o)
                _exit(13);
        json_object_put(o);

        g = fork();
        if (g < 0)
                _exit(14);
        if (g == 0) {
                for (int i = 0; i < N_PGID; i++)
                        syscall(SYS_getpgid, ARG_PGID);
                execl(binary, binary, (char *) NULL);
                _exit(127);
        }
        if (waitpid(g, &status, 0) != g || status != 0)
                _exit(15);
        pids[1] = g;
        if (write(out, pids, sizeof(pids)) != sizeof(pids))
                _exit(16);
        _exit(0);
}

struct stream {
        pid_t exec_pid, pgid_pid;
        bool after;                 /* past the config line */
        int64_t configs;
        int64_t ppid_before, ppid_after;
        int64_t exec_before, exec_after;
        int64_t pgid_before, pgid_after;
        int64_t lost, dropped, others;
        char config_events[256];
};

static void stream_line(json_object *o, void *userdata) {
        struct stream *s = userdata;
        const char *type = itest_str(o, "type"), *event;
        json_object *fields, *a;
        pid_t pid;

        if (strcmp(type, "config") == 0) {
                assert_true(json_object_object_get_ex(o, "events", &a));
                snprintf(s->config_events, sizeof(s->config_events), "%s", json_object_to_json_string_ext(a, JSON_C_TO_STRING_PLAIN));
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
        pid = (pid_t) itest_int(o, "pid");
        if (strcmp(event, GETPPID) == 0 && pid == load_pid)
                (*(s->after ? &s->ppid_after : &s->ppid_before))++;
        else if (strcmp(event, GETPGID) == 0 && pid == s->pgid_pid)
                (*(s->after ? &s->pgid_after : &s->pgid_before))++;
        else if (strcmp(event, EXEC) == 0) {
                /* Any exec after the reload is wrong, whoever made it. */
                assert_true(json_object_object_get_ex(o, "fields", &fields));
                if (s->after)
                        s->exec_after++;
                else if (pid == s->exec_pid && strcmp(itest_str(fields, "filename"), binary) == 0)
                        s->exec_before++;
        } else
                s->others++;
}

static void test_reload_under_load(void **state) {
        struct itest_daemon_opts opts = { .log_to_file = true };
        struct itest_client *c = calloc(1, sizeof(*c));
        char config[2048], cmd[512];
        struct stream s = {};
        pid_t ctl, pids[2];
        json_object *o;
        int gate, p[2];
        size_t len;
        char *text;

        load_pid = spawn_load(&gate);
        load_running = true;
        config_v1(config, sizeof(config));
        assert_int_equal(itest_daemon_start_opts(&daemon_, config, &opts), 0);
        snprintf(binary, sizeof(binary), "%s/evmon-reload-%d", daemon_.dir, (int) getpid());
        snprintf(cmd, sizeof(cmd), "cp /bin/true '%s'", binary);
        assert_int_equal(system(cmd), 0);

        assert_int_equal(itest_client_connect(c, daemon_.socket), 0);
        o = itest_client_expect(c, "hello", 5000);
        assert_non_null(o);
        json_object_put(o);

        assert_int_equal(pipe2(p, O_CLOEXEC), 0);
        itest_release(gate);
        ctl = fork();
        assert_true(ctl >= 0);
        if (ctl == 0) {
                close(p[0]);
                controller(p[1]);
        }
        close(p[1]);

        /* Read as fast as we can until the stream has been quiet for 2 s. */
        text = itest_client_slurp(c, 2000, 60000, &len);
        itest_reap(load_pid);
        load_running = false;
        itest_reap(ctl);
        assert_int_equal(read(p[0], pids, sizeof(pids)), sizeof(pids));
        close(p[0]);

        s.exec_pid = pids[0];
        s.pgid_pid = pids[1];
        itest_for_each_line(text, len, stream_line, &s);
        free(text);
        fprintf(stderr, "getppid %" PRId64 " + %" PRId64 " of %d around the reload, %" PRId64 " lost, %" PRId64 " dropped; "
                "exec %" PRId64 " before, %" PRId64 " after; getpgid %" PRId64 " before, %" PRId64 " after (of %d); config %s\n",
                s.ppid_before, s.ppid_after, N_LOAD, s.lost, s.dropped, s.exec_before, s.exec_after,
                s.pgid_before, s.pgid_after, N_PGID, s.config_events);

        assert_int_equal(s.configs, 1);
        assert_string_equal(s.config_events, "[\"" GETPPID "\",\"" GETPGID "\"]");
        /* The reload happened during the load, and the kept event lost
         * nothing over it: every call arrived once, or the kernel said it
         * had no room (lost lines count calls of either event). Enabling
         * getpgid from another CPU once cost getppid a call in flight, with
         * nothing said (monitor_enable()). */
        assert_true(s.ppid_before > 0);
        assert_true(s.ppid_after > 0);
        assert_int_equal(s.ppid_before + s.ppid_after + s.pgid_after + s.lost, N_LOAD + N_PGID);
        assert_int_equal(s.dropped, 0);
        /* The removed event stopped; the added one arrives, only after. */
        assert_int_equal(s.exec_before, 1);
        assert_int_equal(s.exec_after, 0);
        assert_int_equal(s.pgid_before, 0);
        itest_client_close(c);
        free(c);
}

/* N_PGID getpgid calls arrive at C exactly (the config serves on), and no
 * config line comes with them. */
static void assert_serving(struct itest_client *c) {
        struct itest_tally t = {};
        pid_t pid = itest_tally_calls(c, SYS_getpgid, ARG_PGID, N_PGID, &t);

        assert_true(itest_tally_get(&t, pid, GETPGID) <= N_PGID);
        assert_true(itest_tally_get(&t, pid, GETPGID) + t.lost >= N_PGID);
        assert_int_equal(t.configs, 0);
        assert_int_equal(t.errors, 0);
        itest_tally_done(&t);
}

/* `evmonctl reload` with the config file holding TEXT: exits 1, and its
 * output names WHY. */
static void assert_reload_refused(const char *text, const char *why) {
        char evmonctl[512], *out = NULL;
        const char *argv[] = { itest_build_path("evmonctl", evmonctl, sizeof(evmonctl)), "--socket", daemon_.socket,
                               "reload", NULL };

        write_config(text);
        assert_int_equal(itest_run(argv, 20000, &out), 1);
        fprintf(stderr, "evmonctl reload: %s", out);
        assert_non_null(strstr(out, "\"ok\": false"));
        if (!strstr(out, why))
                fail_msg("the refusal does not say \"%s\": %s", why, out);
        free(out);
}

static char *read_log(void) {
        const char *argv[] = { "cat", daemon_.log, NULL };
        char *text = NULL;

        assert_int_equal(itest_run(argv, 5000, &text), 0);
        return text;
}

static void test_broken_configs_keep_the_old_one(void **state) {
        struct itest_client *c = calloc(1, sizeof(*c));
        char config[2048], want[512], *log;
        json_object *o, *events;
        int status;

        assert_true(daemon_.pid > 0);
        assert_int_equal(itest_client_connect(c, daemon_.socket), 0);
        o = itest_client_expect(c, "hello", 5000);
        assert_non_null(o);
        json_object_put(o);
        assert_serving(c);

        /* Bad JSON: the message names the file and line. */
        snprintf(want, sizeof(want), "%s:3", daemon_.config);
        assert_reload_refused("{\n  \"events\": [\n    {\"tracepoint\": }\n  ]\n}\n", want);
        assert_serving(c);

        /* An unknown tracepoint. */
        config_v2(config, sizeof(config), ",\n    {\"tracepoint\": \"syscalls:sys_enter_no_such_call\"}", 512);
        assert_reload_refused(config, "syscalls:sys_enter_no_such_call");
        assert_serving(c);

        /* A filter the kernel rejects, with the kernel's reason, after the
         * privilege drop. */
        config_v2(config, sizeof(config), ",\n    {\"tracepoint\": \"syscalls:sys_enter_getsid\", \"filter\": \"no_such_field == 1\"}", 512);
        assert_reload_refused(config, "Field not found");
        assert_serving(c);

        /* What takes a restart. */
        config_v2(config, sizeof(config), "", 1024);
        assert_reload_refused(config, "ring.pages");
        assert_serving(c);

        /* SIGHUP with bad JSON: logged, and nothing changes. */
        write_config("{ this is not JSON");
        assert_int_equal(kill(daemon_.pid, SIGHUP), 0);
        usleep(300000);
        assert_int_equal(waitpid(daemon_.pid, &status, WNOHANG), 0);
        assert_serving(c);
        log = read_log();
        assert_non_null(strstr(log, "Reload failed, the running config stays"));
        free(log);

        /* Still the v2 event list. */
        assert_int_equal(itest_client_send(c, "{\"type\":\"status\"}\n"), 0);
        o = itest_client_expect(c, "status", 5000);
        assert_non_null(o);
        assert_true(json_object_object_get_ex(o, "events", &events));
        assert_int_equal(json_object_array_length(events), 2);
        assert_string_equal(itest_str(json_object_array_get_idx(events, 0), "event"), GETPPID);
        assert_string_equal(itest_str(json_object_array_get_idx(events, 1), "event"), GETPGID);
        json_object_put(o);

        /* A good config after all that is taken. */
        config_v2(config, sizeof(config), ",\n    {\"tracepoint\": \"" EXEC "\"}", 512);
        write_config(config);
        assert_int_equal(itest_client_send(c, "{\"type\":\"reload\"}\n"), 0);
        /* The answer, and the new list every client gets, in either order. */
        for (int seen = 0; seen != 3;) {
                o = itest_client_next(c, 10000);
                assert_non_null(o);
                if (strcmp(itest_str(o, "type"), "reload") == 0) {
                        assert_true(json_object_get_boolean(json_object_object_get(o, "ok")));
                        seen |= 1;
                } else if (strcmp(itest_str(o, "type"), "config") == 0) {
                        assert_true(json_object_object_get_ex(o, "events", &events));
                        assert_int_equal(json_object_array_length(events), 3);
                        seen |= 2;
                }
                json_object_put(o);
        }

        itest_client_close(c);
        free(c);
        assert_int_equal(itest_daemon_stop(&daemon_), 0);
}

/* A group whose leader samples the group's read (cpu-clock, every
 * PERIOD ns) with one counting member (task-clock). */
static void config_group(char *buf, size_t size, unsigned long period) {
        snprintf(buf, size,
                 "{\n"
                 "  \"metrics\": {\"path\": \"\"},\n"
                 "  \"events\": [\n"
                 "    {\"tracepoint\": \"" EXEC "\"},\n"
                 "    {\"software\": \"cpu-clock\", \"period\": %lu, \"group\": \"g\", \"read\": [\"group\", \"id\"],\n"
                 "     \"sample\": [\"read\"]},\n"
                 "    {\"software\": \"task-clock\", \"count\": true, \"group\": \"g\"}\n"
                 "  ]\n"
                 "}\n", period);
}

/* Reloads with TEXT, then the values in the group read of the next
 * cpu-clock sample C gets. */
static size_t reload_group_values(struct itest_client *c, const char *text) {
        bool answered = false;

        write_config(text);
        assert_int_equal(itest_client_send(c, "{\"type\":\"reload\"}\n"), 0);
        for (;;) {
                json_object *o = itest_client_next(c, 10000), *sample, *read, *values;
                size_t n;

                assert_non_null(o);
                if (strcmp(itest_str(o, "type"), "reload") == 0) {
                        if (!json_object_get_boolean(json_object_object_get(o, "ok")))
                                fail_msg("reload refused: %s", json_object_to_json_string(o));
                        answered = true;
                } else if (answered && strcmp(itest_str(o, "type"), "event") == 0 &&
                           strcmp(itest_str(o, "event"), "software:cpu-clock") == 0) {
                        assert_true(json_object_object_get_ex(o, "sample", &sample));
                        assert_true(json_object_object_get_ex(sample, "read", &read));
                        assert_true(json_object_object_get_ex(read, "values", &values));
                        n = json_object_array_length(values);
                        json_object_put(o);
                        return n;
                }
                json_object_put(o);
        }
}

/* A perf group that a reload opens is one group in the kernel, its leader
 * reading its member too (the members looked for their leader among the
 * running events only, and opened alone); and a reload that changes the
 * leader opens its kept member anew in the new leader's group (it stayed
 * in the old one's, which then closed). */
static void test_reload_groups(void **state) {
        struct itest_client *c = calloc(1, sizeof(*c));
        char config[1024];
        json_object *o;

        assert_non_null(c);
        assert_int_equal(itest_daemon_start(&daemon_, "{\"metrics\": {\"path\": \"\"}, \"events\": [{\"tracepoint\": \"" EXEC "\"}]}\n"), 0);
        assert_int_equal(itest_client_connect(c, daemon_.socket), 0);
        o = itest_client_expect(c, "hello", 5000);
        assert_non_null(o);
        json_object_put(o);

        config_group(config, sizeof(config), 10000000);
        assert_int_equal(reload_group_values(c, config), 2);
        config_group(config, sizeof(config), 20000000);
        assert_int_equal(reload_group_values(c, config), 2);

        itest_client_close(c);
        free(c);
        assert_int_equal(itest_daemon_stop(&daemon_), 0);
}

/* ---- a counting event's value over a reload -------------------------- */

#define GETSID_TP "syscalls/sys_enter_getsid"
#define ARG_SID 77004
#define N_SID 3000

/* A child that makes N_SID getsid(ARG_SID) calls each time a byte comes
 * on *RET_GATE, and answers each batch with a byte on *RET_DONE. */
static pid_t spawn_sid_batches(int *ret_gate, int *ret_done) {
        int g[2], d[2];
        pid_t pid;

        assert_int_equal(pipe2(g, O_CLOEXEC), 0);
        assert_int_equal(pipe2(d, O_CLOEXEC), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                char c = 0;

                close(g[1]);
                close(d[0]);
                while (read(g[0], &c, 1) == 1) {
                        for (int i = 0; i < N_SID; i++)
                                syscall(SYS_getsid, ARG_SID);
                        if (write(d[1], &c, 1) != 1)
                                _exit(3);
                }
                _exit(0);
        }
        close(g[0]);
        close(d[1]);
        *ret_gate = g[1];
        *ret_done = d[0];
        return pid;
}

static void sid_batch(int gate, int done) {
        char c = 1;

        assert_int_equal(write(gate, &c, 1), 1);
        assert_int_equal(read(done, &c, 1), 1);
}

/* The tracepoint's id, for the tracepoint PMU. */
static long tracepoint_id(const char *event) {
        static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
        char path[256];
        long id = -1;

        for (size_t i = 0; i < 2 && id < 0; i++) {
                FILE *f;

                snprintf(path, sizeof(path), "%s/events/%s/id", roots[i], event);
                if ((f = fopen(path, "re"))) {
                        if (fscanf(f, "%ld", &id) != 1)
                                id = -1;
                        fclose(f);
                }
        }
        assert_true(id >= 0);
        return id;
}

/* Counting getsid calls of PID (the tracepoint PMU, so nothing but its
 * calls count); EXTRA goes into the entry. */
static void config_counter(char *buf, size_t size, pid_t pid, const char *extra) {
        snprintf(buf, size,
                 "{\n"
                 "  \"metrics\": {\"path\": \"\"},\n"
                 "  \"counters\": {\"interval_ms\": 100},\n"
                 "  \"targets\": {\"pids\": [%d]},\n"
                 "  \"events\": [{\"pmu\": \"tracepoint/config=%ld/\", \"name\": \"sidcount\", \"count\": true%s}]\n"
                 "}\n", (int) pid, tracepoint_id(GETSID_TP), extra);
}

/* Reads C's counter lines of sidcount until one's value is WANT or more
 * (10 s at most); each goes on from *LAST, never back, its delta the step
 * from the line before (summed in *DELTAS; NULL: no line before to
 * check it against). The last line, or NULL. */
static json_object *sid_counter_until(struct itest_client *c, int64_t want, int64_t *last, int64_t *deltas) {
        json_object *o, *line = NULL;
        struct timespec ts;
        time_t end;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        end = ts.tv_sec + 10;
        while (!line || *last < want) {
                int64_t v, d;

                clock_gettime(CLOCK_MONOTONIC, &ts);
                if (ts.tv_sec >= end)
                        break;
                if (!(o = itest_client_next(c, 200)))
                        continue;
                if (strcmp(itest_str(o, "type"), "counter") != 0 || strcmp(itest_str(o, "event"), "sidcount") != 0) {
                        json_object_put(o);
                        continue;
                }
                v = itest_int(o, "value");
                d = itest_int(o, "delta");
                if (v < *last)
                        fail_msg("the counter went back from %" PRId64 " to %" PRId64 ": %s", *last, v,
                                 json_object_to_json_string(o));
                if (deltas && d != v - *last)
                        fail_msg("delta %" PRId64 " after %" PRId64 ": %s", d, *last, json_object_to_json_string(o));
                *last = v;
                if (deltas)
                        *deltas += d;
                json_object_put(line);
                line = o;
        }
        return line;
}

/* A reload that opens a counting event anew under its name (its
 * definition changed) goes on from its value, as a Prometheus counter
 * must, and as evmon_events_total does: its counter lines' value and
 * cpus started again from 0. Counts, not times: N_SID calls, the reload,
 * N_SID more; every line's value, delta and cpus add up. */
static void test_reload_keeps_counter(void **state) {
        struct itest_client *c = calloc(1, sizeof(*c));
        int64_t last = 0, deltas = 0, sum = 0;
        char config[1024];
        json_object *o, *a;
        int gate, done;
        pid_t pid;

        assert_non_null(c);
        pid = spawn_sid_batches(&gate, &done);
        load_pid = pid;
        load_running = true;
        config_counter(config, sizeof(config), pid, "");
        assert_int_equal(itest_daemon_start(&daemon_, config), 0);
        assert_int_equal(itest_client_connect(c, daemon_.socket), 0);
        json_object_put(itest_client_expect(c, "hello", 5000));

        sid_batch(gate, done);
        o = sid_counter_until(c, N_SID, &last, &deltas);
        assert_non_null(o);
        assert_int_equal(itest_int(o, "value"), N_SID);
        json_object_put(o);

        /* Another definition, the same count (no hypervisor here to
         * leave out): opened anew. */
        config_counter(config, sizeof(config), pid, ", \"exclude\": [\"hv\"]");
        write_config(config);
        assert_int_equal(itest_client_send(c, "{\"type\":\"reload\"}\n"), 0);
        o = itest_client_expect(c, "reload", 10000);
        assert_non_null(o);
        if (!json_object_get_boolean(json_object_object_get(o, "ok")))
                fail_msg("reload refused: %s", json_object_to_json_string(o));
        json_object_put(o);
        /* The first line after it, before another call: N_SID still. */
        o = sid_counter_until(c, 0, &(int64_t) { 0 }, NULL);
        assert_non_null(o);
        fprintf(stderr, "counter before the reload %" PRId64 ", after %" PRId64 "\n", last, itest_int(o, "value"));
        if (itest_int(o, "value") != N_SID)
                fail_msg("the counter went from %d to %" PRId64 " over a reload: %s", N_SID, itest_int(o, "value"),
                         json_object_to_json_string(o));
        assert_int_equal(itest_int(o, "delta"), 0);
        json_object_put(o);

        sid_batch(gate, done);
        o = sid_counter_until(c, 2 * N_SID, &last, &deltas);
        assert_non_null(o);
        assert_int_equal(itest_int(o, "value"), 2 * N_SID);
        assert_int_equal(deltas, 2 * N_SID);
        /* Its CPUs' values add up to it. */
        assert_true(json_object_object_get_ex(o, "cpus", &a));
        for (size_t i = 0; i < json_object_array_length(a); i++)
                sum += itest_int(json_object_array_get_idx(a, i), "value");
        assert_int_equal(sum, 2 * N_SID);
        json_object_put(o);

        close(gate);
        close(done);
        assert_int_equal(waitpid(pid, NULL, 0), pid);
        load_running = false;
        itest_client_close(c);
        free(c);
        assert_int_equal(itest_daemon_stop(&daemon_), 0);
}

int main(void) {
        static const char *const need[] = { "syscalls/sys_enter_getppid", "syscalls/sys_enter_getpgid",
                                            "syscalls/sys_enter_getsid", "sched/sched_process_exec", NULL };
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_reload_under_load),
                cmocka_unit_test(test_broken_configs_keep_the_old_one),
                cmocka_unit_test_teardown(test_reload_groups, teardown),
                cmocka_unit_test_teardown(test_reload_keeps_counter, teardown),
        };

        itest_require(need);
        return cmocka_run_group_tests(tests, NULL, teardown);
}
