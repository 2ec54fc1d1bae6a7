/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Perf events through evmond on the real kernel, as a client sees them:
 * sample lines of a software event from a known process, counter lines
 * every counters.interval_ms for a group of counting events, record
 * lines for an exec of a uniquely named binary, and the one clear error
 * --check-config and start-up give for a hardware or cache event on a
 * machine without a hardware PMU. Needs root and perf_event_open (77
 * otherwise). What each kind of event shows of the kernel's work is
 * tests/monitor/test-events.c's. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <sched.h>
#include <pthread.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "itest.h"

/* Starts D on CONFIG and connects C to it, past the hello. */
static void session_start(struct itest_daemon *d, struct itest_client *c, const char *config) {
        assert_int_equal(itest_session_start(d, c, config), 0);
}

/* Feeds FN with what C reads until quiet for 600 ms (at least two
 * counter intervals of 200 ms), then closes and frees C and stops D. */
static void session_finish(struct itest_daemon *d, struct itest_client *c,
                           void (*fn)(json_object *o, void *ud), void *ud) {
        size_t len;
        char *text = itest_client_slurp(c, 600, 3000, &len);

        itest_for_each_line(text, len, fn, ud);
        free(text);
        itest_client_close(c);
        free(c);
        assert_int_equal(itest_daemon_stop(d), 0);
        itest_daemon_cleanup(d);
}

static bool has_hardware_pmu(void) {
        return access("/sys/bus/event_source/devices/cpu", F_OK) == 0 ||
               access("/sys/bus/event_source/devices/cpu_core", F_OK) == 0;
}

static void test_hardware_refused(void **state) {
        static const char *const entries[] = {
                "{\"hardware\": \"cycles\", \"count\": true}",
                "{\"cache\": \"L1-dcache-load-misses\"}",
        };
        static const char *const names[] = { "hardware:cycles", "cache:L1-dcache-load-misses" };
        char evmond[256];

        if (has_hardware_pmu()) {
                print_message("SKIP: this machine has a hardware PMU, so its events open\n");
                skip();
        }
        itest_build_path("evmond", evmond, sizeof(evmond));
        for (size_t i = 0; i < 2; i++) {
                char dir[] = "/tmp/evmon-perfev-XXXXXX", path[128], *out = NULL;
                FILE *f;
                int r;

                assert_non_null(mkdtemp(dir));
                snprintf(path, sizeof(path), "%s/c.json", dir);
                f = fopen(path, "we");
                assert_non_null(f);
                fprintf(f, "{\n  \"events\": [\n    {\"software\": \"cpu-clock\"},\n    %s\n  ]\n}\n", entries[i]);
                fclose(f);

                r = itest_run((const char *const[]) { evmond, "--config", path, "--check-config", NULL }, 20000, &out);
                print_message("%s", out);
                assert_int_equal(r, 2);
                /* One line: the file and line of the entry, the event, the
                 * kernel's error and why. */
                assert_non_null(strstr(out, "c.json:4: events[1]."));
                assert_non_null(strstr(out, names[i]));
                assert_non_null(strstr(out, "No such file or directory"));
                assert_non_null(strstr(out, "no hardware PMU"));
                {
                        unsigned lines = 0;

                        for (const char *q = out; *q; q++)
                                lines += *q == '\n';
                        assert_int_equal(lines, 1);
                }
                free(out);
                unlink(path);
                rmdir(dir);
        }
}

/* A breakpoint x86 cannot place says why: a read-only one, an execute one
 * of another length than a long, a range not aligned to its length (all
 * three were "the kernel refuses this address, length or access"). */
static void test_breakpoint_refused(void **state) {
#if defined(__x86_64__)
        static const char *const entries[] = {
                "{\"breakpoint\": \"0x%lx\", \"access\": \"r\", \"len\": 8}",
                "{\"breakpoint\": \"0x%lx\", \"access\": \"x\", \"len\": 4}",
                "{\"breakpoint\": \"0x%lx\", \"access\": \"w\", \"len\": 8}",
        };
        static const char *const reasons[] = {
                "x86 debug registers cannot watch reads alone",
                "an execute breakpoint covers one long on x86: \"len\" 8",
                "is not a multiple of \"len\" 8: x86 watches aligned ranges only",
        };
        static long words[2];
        /* Aligned for the first two, 4 bytes off for the third. */
        const unsigned long addrs[] = { (unsigned long) &words[0], (unsigned long) &words[0],
                                        (unsigned long) &words[0] + 4 };
        char evmond[256];

        itest_build_path("evmond", evmond, sizeof(evmond));
        for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++) {
                char dir[] = "/tmp/evmon-perfev-XXXXXX", path[128], entry[128], *out = NULL;
                unsigned lines = 0;
                FILE *f;
                int r;

                assert_non_null(mkdtemp(dir));
                snprintf(path, sizeof(path), "%s/c.json", dir);
                snprintf(entry, sizeof(entry), entries[i], addrs[i]);
                f = fopen(path, "we");
                assert_non_null(f);
                fprintf(f, "{\n  \"context\": false,\n  \"events\": [\n    %s\n  ]\n}\n", entry);
                fclose(f);
                r = itest_run((const char *const[]) { evmond, "--config", path, "--check-config", NULL }, 20000, &out);
                print_message("%s", out);
                assert_int_equal(r, 2);
                assert_non_null(strstr(out, "c.json:4: events[0].breakpoint: "));
                assert_non_null(strstr(out, reasons[i]));
                for (const char *q = out; *q; q++)
                        lines += *q == '\n';
                assert_int_equal(lines, 1);
                free(out);
                unlink(path);
                rmdir(dir);
        }
#else
        print_message("SKIP: the reasons checked are x86's\n");
        skip();
#endif
}

/* An entry the kernel refuses for one of its limits: the one line names
 * the file, the line and the entry, the option, the limit's sysctl and
 * its value ("Invalid argument" and "Value too large for defined data
 * type" alone said none of that). */
static uint64_t sysctl_kernel(const char *name) {
        char path[128];
        unsigned long long v = 0;
        FILE *f;

        snprintf(path, sizeof(path), "/proc/sys/kernel/%s", name);
        f = fopen(path, "re");
        if (f && fscanf(f, "%llu", &v) != 1)
                v = 0;
        if (f)
                fclose(f);
        return v;
}

static void test_limits_refused(void **state) {
        uint64_t rate = sysctl_kernel("perf_event_max_sample_rate"), stack = sysctl_kernel("perf_event_max_stack");
        char evmond[256];

        if (rate == 0 || stack == 0 || stack >= 65535) {
                print_message("SKIP: kernel.perf_event_max_sample_rate or perf_event_max_stack unreadable (or a "
                              "max_stack no entry can exceed)\n");
                skip();
        }
        itest_build_path("evmond", evmond, sizeof(evmond));
        for (int i = 0; i < 2; i++) {
                char dir[] = "/tmp/evmon-perfev-XXXXXX", path[128], limit[32], *out = NULL;
                unsigned lines = 0;
                FILE *f;
                int r;

                assert_non_null(mkdtemp(dir));
                snprintf(path, sizeof(path), "%s/c.json", dir);
                f = fopen(path, "we");
                assert_non_null(f);
                if (i == 0)
                        fprintf(f, "{\n  \"events\": [\n    {\"software\": \"dummy\"},\n"
                                   "    {\"software\": \"cpu-clock\", \"freq\": %" PRIu64 "}\n  ]\n}\n", rate + 1);
                else
                        fprintf(f, "{\n  \"events\": [\n    {\"software\": \"dummy\"},\n"
                                   "    {\"software\": \"cpu-clock\", \"callchain\": {\"max_stack\": %" PRIu64 "}}\n"
                                   "  ]\n}\n", stack + 1);
                fclose(f);
                snprintf(limit, sizeof(limit), "(%" PRIu64 ")", i == 0 ? rate : stack);

                r = itest_run((const char *const[]) { evmond, "--config", path, "--check-config", NULL }, 20000, &out);
                print_message("%s", out);
                assert_int_equal(r, 2);
                assert_non_null(strstr(out, "c.json:4: events[1]."));
                assert_non_null(strstr(out, i == 0 ? "\"freq\"" : "\"callchain\" max_stack"));
                assert_non_null(strstr(out, i == 0 ? "kernel.perf_event_max_sample_rate" : "kernel.perf_event_max_stack"));
                assert_non_null(strstr(out, limit));
                for (const char *q = out; *q; q++)
                        lines += *q == '\n';
                assert_int_equal(lines, 1);
                free(out);
                unlink(path);
                rmdir(dir);
        }
}

/* "clock": "tai" stamps software events (their ts on CLOCK_TAI, past
 * 2020 in ns: beyond 1.5e18, where CLOCK_MONOTONIC is the uptime); a
 * tracepoint added at run time is refused for it by the kernel
 * (perf_event_set_clock(): not NMI-safe), and the error says so instead of
 * "failed to open ... Invalid argument". */
static void test_clock_tai(void **state) {
        static const char config[] =
                "{\"clock\": \"tai\", \"context\": false,\n"
                " \"events\": [{\"software\": \"cpu-clock\", \"period\": 50000000}]}\n";
        struct itest_daemon d = {};
        struct itest_client *c = calloc(1, sizeof(*c));
        json_object *o;
        struct timespec t0, t1;
        int64_t ts = 0;
        const char *error = NULL;

        assert_non_null(c);
        session_start(&d, c, config);
        clock_gettime(CLOCK_TAI, &t0);
        o = itest_client_expect(c, "event", 5000);
        assert_non_null(o);
        ts = itest_int(o, "ts");
        json_object_put(o);
        clock_gettime(CLOCK_TAI, &t1);
        print_message("cpu-clock ts %" PRId64 ", CLOCK_TAI around it %lld.%09ld .. %lld.%09ld\n", ts,
                      (long long) t0.tv_sec, t0.tv_nsec, (long long) t1.tv_sec, t1.tv_nsec);
        /* A sample read after the first clock_gettime() may have been
         * taken up to a flush (and a period) before it. */
        assert_true(ts > (int64_t) t0.tv_sec * 1000000000 + t0.tv_nsec - 1000000000);
        assert_true(ts <= (int64_t) t1.tv_sec * 1000000000 + t1.tv_nsec);

        assert_int_equal(itest_client_send(c, "{\"type\":\"add\",\"event\":{\"tracepoint\":\"sched:sched_process_exec\"}}\n"),
                         0);
        o = itest_client_expect(c, "error", 10000);
        assert_non_null(o);
        error = itest_str(o, "error");
        print_message("add: %s\n", error ?: "(none)");
        assert_non_null(error);
        assert_non_null(strstr(error, "sched:sched_process_exec"));
        assert_non_null(strstr(error, "monotonic or monotonic_raw only, not the config's \"clock\" \"tai\""));
        json_object_put(o);

        itest_client_close(c);
        free(c);
        assert_int_equal(itest_daemon_stop(&d), 0);
        itest_daemon_cleanup(&d);
}

struct seen {
        pid_t child;
        const char *comm;
        unsigned samples, samples_with_addr, comm_exec, forks, exits;
        unsigned counters_cs, counters_tc, counter_fields_ok;
};

static void on_line(json_object *o, void *userdata) {
        struct seen *s = userdata;
        const char *type = itest_str(o, "type"), *event;
        json_object *v, *f;

        if (!type)
                return;
        event = itest_str(o, "event");
        if (strcmp(type, "event") == 0 && event && strcmp(event, "software:page-faults") == 0) {
                if (itest_int(o, "pid") == s->child)
                        s->samples++;
                return;
        }
        if (strcmp(type, "counter") == 0 && event) {
                bool ok = json_object_object_get_ex(o, "cpus", &v) && json_object_is_type(v, json_type_array) &&
                          json_object_array_length(v) > 0 && itest_int(o, "enabled") > 0 &&
                          itest_int(o, "running") > 0 && itest_int(o, "value") >= 0 && itest_int(o, "delta") >= 0 &&
                          json_object_object_get_ex(o, "scaled", NULL) && itest_str(o, "time") &&
                          strcmp(itest_str(o, "group") ?: "", "g") == 0;

                s->counter_fields_ok += ok;
                s->counters_cs += strcmp(event, "software:context-switches") == 0;
                s->counters_tc += strcmp(event, "software:task-clock") == 0;
                return;
        }
        if (strcmp(type, "record") == 0 && json_object_object_get_ex(o, "fields", &f)) {
                const char *rec = itest_str(o, "record");

                if (strcmp(rec, "comm") == 0 && strcmp(itest_str(f, "comm") ?: "", s->comm) == 0 &&
                    json_object_object_get_ex(f, "exec", &v) && json_object_get_boolean(v))
                        s->comm_exec++;
                if (strcmp(rec, "fork") == 0 && itest_int(f, "pid") == s->child)
                        s->forks++;
                if (strcmp(rec, "exit") == 0 && itest_int(f, "pid") == s->child)
                        s->exits++;
        }
}

static void test_lines(void **state) {
        static const char config[] =
                "{\n"
                "  \"counters\": {\"interval_ms\": 200},\n"
                "  \"events\": [\n"
                "    {\"software\": \"page-faults\", \"period\": 1, \"sample\": [\"ip\", \"addr\"]},\n"
                "    {\"software\": \"context-switches\", \"count\": true, \"group\": \"g\"},\n"
                "    {\"software\": \"task-clock\", \"count\": true, \"group\": \"g\"},\n"
                "    {\"software\": \"dummy\", \"records\": [\"comm\", \"comm_exec\", \"task\"]}\n"
                "  ]\n"
                "}\n";
        struct itest_daemon d = {};
        struct itest_client *c = calloc(1, sizeof(*c));
        char dir[] = "/tmp/evmon-perfev-XXXXXX", exe[128], comm[16], cmd[300];
        struct seen s = {};
        int status;

        assert_non_null(c);
        assert_non_null(mkdtemp(dir));
        snprintf(comm, sizeof(comm), "evp%d", getpid());
        snprintf(exe, sizeof(exe), "%s/%s", dir, comm);
        snprintf(cmd, sizeof(cmd), "cp /bin/true %s", exe);
        assert_int_equal(system(cmd), 0);
        s.comm = comm;

        session_start(&d, c, config);

        /* The child faults its pages in and execs the uniquely named copy
         * of true(1). */
        s.child = fork();
        assert_true(s.child >= 0);
        if (s.child == 0) {
                execl(exe, comm, (char *) NULL);
                _exit(127);
        }
        assert_int_equal(waitpid(s.child, &status, 0), s.child);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

        /* At least two counter intervals. */
        session_finish(&d, c, on_line, &s);
        unlink(exe);
        rmdir(dir);

        print_message("page-fault samples of the child %u, comm(exec) %u, exit %u, counter lines: "
                      "context-switches %u, task-clock %u (%u complete)\n",
                      s.samples, s.comm_exec, s.exits, s.counters_cs, s.counters_tc, s.counter_fields_ok);
        /* An exec maps and touches pages: some faults of its own. */
        assert_true(s.samples > 0);
        assert_int_equal(s.comm_exec, 1);
        assert_int_equal(s.exits, 1);
        assert_true(s.counters_cs >= 2);
        assert_true(s.counters_tc >= 2);
        assert_int_equal(s.counter_fields_ok, s.counters_cs + s.counters_tc);
}

/* ---- a group whose members' PMU is not the leader's ------------------
 *
 * A sampling cpu-clock leader (perf_cpu_clock's PMU) with counting
 * software members (the software PMU), as perf record -e
 * '{cpu-clock,page-faults,context-switches}' -F 100 -a makes it: the
 * kernel schedules a member enabled beside a running leader only by
 * rescheduling the member's PMU, so the members counted nothing (their
 * counter lines 0 with running 0, their values in the leader's group
 * reads 0) until something else rescheduled the leader. Doorbells off:
 * their arming did that once, some 60 ms late. */

struct group_seen {
        uint64_t faults, switches;      /* the members' last counter values */
        uint64_t faults_enabled, faults_running, switches_enabled, switches_running;
        unsigned counter_lines, samples, samples_member_counts, samples_named;
};

static void on_group_line(json_object *o, void *userdata) {
        struct group_seen *g = userdata;
        const char *type = itest_str(o, "type"), *event = itest_str(o, "event");
        json_object *sample, *read, *values;

        if (!type || !event)
                return;
        if (strcmp(type, "counter") == 0) {
                g->counter_lines++;
                if (strcmp(event, "software:page-faults") == 0) {
                        g->faults = (uint64_t) itest_int(o, "value");
                        g->faults_enabled = (uint64_t) itest_int(o, "enabled");
                        g->faults_running = (uint64_t) itest_int(o, "running");
                } else if (strcmp(event, "software:context-switches") == 0) {
                        g->switches = (uint64_t) itest_int(o, "value");
                        g->switches_enabled = (uint64_t) itest_int(o, "enabled");
                        g->switches_running = (uint64_t) itest_int(o, "running");
                }
                return;
        }
        if (strcmp(type, "event") != 0 || strcmp(event, "software:cpu-clock") != 0 ||
            !json_object_object_get_ex(o, "sample", &sample) || !json_object_object_get_ex(sample, "read", &read) ||
            !json_object_object_get_ex(read, "values", &values))
                return;
        g->samples++;
        /* Leader, page-faults, context-switches: a CPU busy for a sample's
         * 10 ms has switched or faulted in that time. */
        if (json_object_array_length(values) == 3 &&
            itest_int(json_object_array_get_idx(values, 1), "value") +
            itest_int(json_object_array_get_idx(values, 2), "value") > 0)
                g->samples_member_counts++;
        /* Each value names its event by its id (doc/protocol.md). */
        if (json_object_array_length(values) == 3 &&
            strcmp(itest_str(json_object_array_get_idx(values, 0), "event") ?: "", "software:cpu-clock") == 0 &&
            strcmp(itest_str(json_object_array_get_idx(values, 1), "event") ?: "", "software:page-faults") == 0 &&
            strcmp(itest_str(json_object_array_get_idx(values, 2), "event") ?: "", "software:context-switches") == 0)
                g->samples_named++;
}

static void test_group_members_count(void **state) {
        static const char config[] =
                "{\n"
                "  \"ring\": {\"doorbell\": false},\n"
                "  \"counters\": {\"interval_ms\": 200},\n"
                "  \"events\": [\n"
                "    {\"software\": \"cpu-clock\", \"period\": 10000000, \"group\": \"g\",\n"
                "     \"sample\": [\"ip\", \"tid\", \"time\", \"read\"], \"read\": [\"group\", \"id\"]},\n"
                "    {\"software\": \"page-faults\", \"count\": true, \"group\": \"g\"},\n"
                "    {\"software\": \"context-switches\", \"count\": true, \"group\": \"g\"}\n"
                "  ]\n"
                "}\n";
        struct itest_daemon d = {};
        struct itest_client *c = calloc(1, sizeof(*c));
        struct group_seen g = {};
        pid_t child;
        int status;

        assert_non_null(c);
        session_start(&d, c, config);

        /* 1,000 pages faulted in, and as many sleeps, whatever else runs. */
        child = fork();
        assert_true(child >= 0);
        if (child == 0) {
                size_t n = 1000 * (size_t) sysconf(_SC_PAGESIZE);
                volatile char *p = malloc(n);

                for (size_t i = 0; p && i < n; i += (size_t) sysconf(_SC_PAGESIZE)) {
                        p[i] = 1;
                        if (i % (100 * (size_t) sysconf(_SC_PAGESIZE)) == 0)
                                usleep(1000);
                }
                _exit(p ? 0 : 1);
        }
        assert_int_equal(waitpid(child, &status, 0), child);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

        session_finish(&d, c, on_group_line, &g);

        print_message("page-faults %" PRIu64 " (enabled %" PRIu64 " ns, running %" PRIu64 "), context-switches %"
                      PRIu64 " (enabled %" PRIu64 ", running %" PRIu64 "); %u counter lines; %u of %u group "
                      "samples with member counts, %u with each value's event named\n",
                      g.faults, g.faults_enabled, g.faults_running, g.switches, g.switches_enabled,
                      g.switches_running, g.counter_lines, g.samples_member_counts, g.samples, g.samples_named);
        assert_true(g.counter_lines >= 2);
        assert_true(g.faults >= 1000);
        assert_true(g.switches >= 10);
        /* Scheduled with their leader from its enable on: not multiplexed. */
        assert_true(g.faults_running > 0 && g.faults_running >= g.faults_enabled / 100 * 99);
        assert_true(g.switches_running > 0 && g.switches_running >= g.switches_enabled / 100 * 99);
        assert_true(g.samples > 0);
        assert_true(g.samples_member_counts > 0);
        assert_int_equal(g.samples_named, g.samples);
}

/* ---- sample fields the entry asks for, beside the daemon's own -------
 *
 * "cgroup" and "raw" are PERF_SAMPLE_* names an entry may ask for: a perf
 * event's "sample" object carries them. evmond asks the kernel for CGROUP
 * and RAW on its own too (cgroup targets, trace events' fields), and left
 * both out of every line, asked for or not. A child in a cgroup of its own
 * faults 100 pages in (its "cgroup" is that directory's inode, the cgroup
 * id; the parent's before it joins)
 * and calls getppid(2) through a tracepoint opened as a PMU event (its raw
 * record begins with the tracepoint's id, then the common fields: the
 * child's pid, then the syscall number). */

struct fields_seen {
        pid_t child;
        uint64_t cgroup_id, parent_cgroup_id, tp_id;
        unsigned faults, faults_cgroup_ok, faults_parent_cgroup, calls, calls_raw_ok, schema_cgroup, schema_raw;
};

static unsigned hex_byte(const char *p) {
        unsigned v = 0;

        sscanf(p, "%2x", &v);
        return v;
}

static void on_fields_line(json_object *o, void *userdata) {
        struct fields_seen *f = userdata;
        const char *type = itest_str(o, "type"), *event = itest_str(o, "event"), *raw;
        json_object *sample, *v;

        if (!type || !event)
                return;
        if (strcmp(type, "schema") == 0) {
                const char *text = json_object_to_json_string(o);

                f->schema_cgroup += strcmp(event, "faults") == 0 && strstr(text, "\"PERF_SAMPLE_CGROUP\"");
                f->schema_raw += strcmp(event, "tp") == 0 && strstr(text, "\"PERF_SAMPLE_RAW\"");
                return;
        }
        if (strcmp(type, "event") != 0 || itest_int(o, "pid") != f->child ||
            !json_object_object_get_ex(o, "sample", &sample))
                return;
        if (strcmp(event, "faults") == 0) {
                f->faults++;
                /* Before it joins ours (the fork's own faults), the
                 * child is in its parent's cgroup. */
                if (json_object_object_get_ex(sample, "cgroup", &v)) {
                        f->faults_cgroup_ok += (uint64_t) json_object_get_int64(v) == f->cgroup_id;
                        f->faults_parent_cgroup += (uint64_t) json_object_get_int64(v) == f->parent_cgroup_id;
                }
        } else if (strcmp(event, "tp") == 0) {
                f->calls++;
                raw = itest_str(sample, "raw");
                /* common_type (u16), flags, preempt_count, common_pid
                 * (s32), __syscall_nr (s32): little-endian. */
                if (raw && strlen(raw) >= 24 &&
                    (hex_byte(raw) | hex_byte(raw + 2) << 8) == f->tp_id &&
                    (pid_t) (hex_byte(raw + 8) | hex_byte(raw + 10) << 8 | hex_byte(raw + 12) << 16 |
                             (unsigned) hex_byte(raw + 14) << 24) == f->child &&
                    hex_byte(raw + 16) == SYS_getppid && hex_byte(raw + 18) == 0)
                        f->calls_raw_ok++;
        }
}

static void test_sample_cgroup_and_raw(void **state) {
        struct itest_daemon d = {};
        struct itest_client *c = calloc(1, sizeof(*c));
        struct fields_seen f = {};
        char config[1024], mount[256] = "", dir[512], path[4400], line[4096];
        struct stat st;
        int gate[2], status;
        FILE *m;

        assert_non_null(c);
        if (test_cgroup2_mount(mount, sizeof(mount)) < 0) {
                print_message("SKIP: no cgroup2 file system is mounted\n");
                skip();
        }
        m = fopen("/sys/kernel/tracing/events/syscalls/sys_enter_getppid/id", "re");
        if (!m || fscanf(m, "%" SCNu64, &f.tp_id) != 1) {
                print_message("SKIP: no syscalls:sys_enter_getppid tracepoint in /sys/kernel/tracing\n");
                if (m)
                        fclose(m);
                skip();
        }
        fclose(m);
        /* Our own cgroup: "0::PATH" in /proc/self/cgroup. */
        m = fopen("/proc/self/cgroup", "re");
        assert_non_null(m);
        while (fgets(line, sizeof(line), m))
                if (strncmp(line, "0::", 3) == 0) {
                        line[strcspn(line, "\n")] = 0;
                        snprintf(path, sizeof(path), "%s%s", mount, line + 3);
                        assert_int_equal(stat(path, &st), 0);
                        f.parent_cgroup_id = st.st_ino;
                }
        fclose(m);
        snprintf(dir, sizeof(dir), "%s/evmon-perfev-%d", mount, (int) getpid());
        assert_true(mkdir(dir, 0755) == 0 || errno == EEXIST);
        assert_int_equal(stat(dir, &st), 0);
        f.cgroup_id = st.st_ino;

        snprintf(config, sizeof(config),
                 "{\"context\": false,\n"
                 " \"events\": [\n"
                 "  {\"software\": \"page-faults\", \"name\": \"faults\", \"period\": 1,"
                 " \"sample\": [\"tid\", \"time\", \"cgroup\"]},\n"
                 "  {\"pmu\": \"tracepoint/config=%" PRIu64 "/\", \"name\": \"tp\", \"period\": 1,"
                 " \"sample\": [\"tid\", \"time\", \"raw\"]}\n"
                 " ]}\n",
                 f.tp_id);
        session_start(&d, c, config);

        /* The child waits until it is in the cgroup. */
        assert_int_equal(pipe(gate), 0);
        f.child = fork();
        assert_true(f.child >= 0);
        if (f.child == 0) {
                size_t page = (size_t) sysconf(_SC_PAGESIZE);
                volatile char *p;
                char b;

                close(gate[1]);
                if (read(gate[0], &b, 1) != 1)
                        _exit(1);
                p = malloc(100 * page);
                for (size_t i = 0; p && i < 100 * page; i += page)
                        p[i] = 1;
                for (int i = 0; i < 10; i++)
                        syscall(SYS_getppid);
                _exit(p ? 0 : 1);
        }
        close(gate[0]);
        snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
        m = fopen(path, "we");
        assert_non_null(m);
        fprintf(m, "%d\n", (int) f.child);
        assert_int_equal(fclose(m), 0);
        assert_int_equal(write(gate[1], "x", 1), 1);
        close(gate[1]);
        assert_int_equal(waitpid(f.child, &status, 0), f.child);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

        session_finish(&d, c, on_fields_line, &f);
        for (int i = 0; i < 100 && rmdir(dir) < 0 && errno == EBUSY; i++)
                usleep(20000);

        print_message("cgroup %" PRIu64 ": %u of %u page faults of the child carry it, %u its parent's (%" PRIu64
                      ", schema %u); tracepoint %" PRIu64 ": %u of %u getppid calls with its raw record (schema %u)\n",
                      f.cgroup_id, f.faults_cgroup_ok, f.faults, f.faults_parent_cgroup, f.parent_cgroup_id,
                      f.schema_cgroup, f.tp_id, f.calls_raw_ok, f.calls, f.schema_raw);
        assert_int_equal(f.schema_cgroup, 1);
        assert_int_equal(f.schema_raw, 1);
        assert_true(f.faults_cgroup_ok >= 100);
        assert_int_equal(f.faults_cgroup_ok + f.faults_parent_cgroup, f.faults);
        assert_int_equal(f.calls, 10);
        assert_int_equal(f.calls_raw_ok, 10);
}

/* ---- "symbols" with "context": false ------------------------------------
 *
 * Kernel callchain frames are named from /proc/kallsyms, whose addresses
 * evmond can read only before it drops its privileges. It read them with
 * the process table, so without context every kernel frame stayed null
 * (and the log said symbols were asked for after the start). The child
 * sleeps 100 times: its context switches' callchains are kernel frames.
 * Each name
 * given must be the kernel's: NAME+0xOFF is a text symbol NAME at IP -
 * OFF in /proc/kallsyms. */

#define SYM_CHECKS 64

struct sym_seen {
        pid_t child;
        unsigned kernel_frames, named;
        struct {
                uint64_t addr;
                char name[128];
        } checks[SYM_CHECKS];
        unsigned n_checks;
};

static void on_sym_line(json_object *o, void *userdata) {
        struct sym_seen *y = userdata;
        json_object *sample, *chain;

        if (strcmp(itest_str(o, "type"), "event") != 0 || itest_int(o, "pid") != y->child ||
            !json_object_object_get_ex(o, "sample", &sample) || !json_object_object_get_ex(sample, "callchain", &chain))
                return;
        for (size_t i = 0; i < json_object_array_length(chain); i++) {
                json_object *seg = json_object_array_get_idx(chain, i), *ips, *syms;

                if (strcmp(itest_str(seg, "context"), "kernel") != 0 || !json_object_object_get_ex(seg, "ips", &ips))
                        continue;
                if (!json_object_object_get_ex(seg, "syms", &syms))
                        syms = NULL;
                for (size_t k = 0; k < json_object_array_length(ips); k++) {
                        json_object *f = syms ? json_object_array_get_idx(syms, k) : NULL;
                        const char *sym = f ? itest_str(f, "sym") : "", *plus = strrchr(sym, '+');
                        unsigned long long ip = strtoull(json_object_get_string(json_object_array_get_idx(ips, k)),
                                                         NULL, 16);

                        y->kernel_frames++;
                        if (!*sym || !plus || strcmp(itest_str(f, "module"), "[kernel.kallsyms]") != 0)
                                continue;
                        y->named++;
                        if (y->n_checks < SYM_CHECKS && (size_t) (plus - sym) < sizeof(y->checks[0].name)) {
                                y->checks[y->n_checks].addr = ip - strtoull(plus + 1, NULL, 16);
                                memcpy(y->checks[y->n_checks].name, sym, (size_t) (plus - sym));
                                y->checks[y->n_checks].name[plus - sym] = 0;
                                y->n_checks++;
                        }
                }
        }
}

static void test_symbols_without_context(void **state) {
        static const char config[] =
                "{\"context\": false,\n"
                " \"events\": [{\"software\": \"context-switches\", \"period\": 1, \"callchain\": {\"user\": false},\n"
                "              \"sample\": [\"ip\", \"tid\", \"time\"], \"symbols\": true}]}\n";
        struct itest_daemon d = {};
        struct itest_client *c = calloc(1, sizeof(*c));
        struct sym_seen *y = calloc(1, sizeof(*y));
        bool found[SYM_CHECKS] = {};
        unsigned n_found = 0;
        char line[512];
        int status;
        FILE *f;

        assert_non_null(c);
        assert_non_null(y);
        session_start(&d, c, config);
        y->child = fork();
        assert_true(y->child >= 0);
        if (y->child == 0) {
                /* 100 sleeps: 100 switches out, each in schedule() called
                 * from the nanosleep path. */
                for (int i = 0; i < 100; i++)
                        usleep(100);
                _exit(0);
        }
        assert_int_equal(waitpid(y->child, &status, 0), y->child);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        session_finish(&d, c, on_sym_line, y);

        /* The names against the kernel's own table. */
        f = fopen("/proc/kallsyms", "re");
        assert_non_null(f);
        while (fgets(line, sizeof(line), f)) {
                unsigned long long addr;
                char type, name[256];

                if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3 || (type != 't' && type != 'T'))
                        continue;
                for (unsigned i = 0; i < y->n_checks; i++)
                        if (!found[i] && y->checks[i].addr == addr && strcmp(y->checks[i].name, name) == 0) {
                                found[i] = true;
                                n_found++;
                        }
        }
        fclose(f);
        print_message("kernel frames of the child's context switches: %u, %u named; %u of %u names checked are "
                      "/proc/kallsyms' symbol at that address\n",
                      y->kernel_frames, y->named, n_found, y->n_checks);
        assert_true(y->kernel_frames >= 100);
        assert_int_equal(y->named, y->kernel_frames);
        assert_true(y->n_checks > 0);
        assert_int_equal(n_found, y->n_checks);
        free(y);
}

/* ---- CGROUP and NAMESPACES records alone, system-wide -----------------
 *
 * The kernel writes them only to events on its side-band list, where other
 * record bits put an event (is_sb_event()): "records": ["cgroup"] or
 * ["namespaces"] alone gave no record at all. A cgroup made here comes as
 * a cgroup record with its path and id (the directory's inode), a child
 * forked here as a namespaces record of its pid. */

struct rec_seen {
        char path[128];
        uint64_t id;
        pid_t child;
        unsigned cgroup_ok, cgroup_records, namespaces_ok, namespaces_records;
};

static void on_rec_line(json_object *o, void *userdata) {
        struct rec_seen *r = userdata;
        const char *rec = itest_str(o, "record");
        json_object *f;

        if (strcmp(itest_str(o, "type"), "record") != 0 || !json_object_object_get_ex(o, "fields", &f))
                return;
        if (strcmp(rec, "cgroup") == 0 && strcmp(itest_str(o, "event"), "cg") == 0) {
                r->cgroup_records++;
                r->cgroup_ok += strcmp(itest_str(f, "path"), r->path) == 0 && (uint64_t) itest_int(f, "id") == r->id;
        } else if (strcmp(rec, "namespaces") == 0 && strcmp(itest_str(o, "event"), "ns") == 0) {
                r->namespaces_records++;
                r->namespaces_ok += itest_int(f, "pid") == r->child && json_object_object_get_ex(f, "namespaces", NULL);
        }
}

static void test_cgroup_namespaces_records(void **state) {
        static const char config[] =
                "{\"context\": false, \"self\": true,\n"
                " \"events\": [{\"software\": \"dummy\", \"name\": \"cg\", \"records\": [\"cgroup\"]},\n"
                "            {\"software\": \"dummy\", \"name\": \"ns\", \"records\": [\"namespaces\"]}]}\n";
        struct itest_daemon d = {};
        struct itest_client *c = calloc(1, sizeof(*c));
        struct rec_seen r = {};
        char mount[256] = "", dir[512];
        struct stat st;
        int status;

        assert_non_null(c);
        if (test_cgroup2_mount(mount, sizeof(mount)) < 0) {
                print_message("SKIP: no cgroup2 file system is mounted\n");
                skip();
        }
        session_start(&d, c, config);

        snprintf(r.path, sizeof(r.path), "/evmon-perfev-rec-%d", (int) getpid());
        snprintf(dir, sizeof(dir), "%s%s", mount, r.path);
        assert_int_equal(mkdir(dir, 0755), 0);
        assert_int_equal(stat(dir, &st), 0);
        r.id = st.st_ino;
        r.child = fork();
        assert_true(r.child >= 0);
        if (r.child == 0)
                _exit(0);
        assert_int_equal(waitpid(r.child, &status, 0), r.child);
        assert_int_equal(rmdir(dir), 0);

        session_finish(&d, c, on_rec_line, &r);

        print_message("cgroup records %u (%u of %s, id %" PRIu64 "), namespaces records %u (%u of the child)\n",
                      r.cgroup_records, r.cgroup_ok, r.path, r.id, r.namespaces_records, r.namespaces_ok);
        assert_int_equal(r.cgroup_ok, 1);
        assert_int_equal(r.namespaces_ok, 1);
}

/* ---- enable_on_exec on a pid target -------------------------------------
 *
 * The kernel enables such an event at the task's next exec; evmond enabled
 * it at its start too, so it counted from then on, exec or not. The child
 * faults in a buffer of 1,000 pages (its address told through a pipe),
 * then execs true(1): no sample may fall in the buffer, and true's own
 * faults come. */

struct eoe_seen {
        pid_t child;
        uint64_t buf, buf_end;
        unsigned samples, in_buf;
};

static void on_eoe_line(json_object *o, void *userdata) {
        struct eoe_seen *e = userdata;
        json_object *sample;
        const char *addr;
        uint64_t a;

        if (strcmp(itest_str(o, "type"), "event") != 0 || itest_int(o, "pid") != e->child ||
            !json_object_object_get_ex(o, "sample", &sample))
                return;
        e->samples++;
        addr = itest_str(sample, "addr");
        a = strtoull(addr, NULL, 16);
        e->in_buf += a >= e->buf && a < e->buf_end;
}

static void test_enable_on_exec(void **state) {
        struct itest_daemon d = {};
        struct itest_client *c = calloc(1, sizeof(*c));
        struct eoe_seen e = {};
        size_t page = (size_t) sysconf(_SC_PAGESIZE);
        int gate[2], tell[2], status;
        char config[512];
        uint64_t buf;

        assert_non_null(c);
        assert_int_equal(pipe(gate), 0);
        assert_int_equal(pipe(tell), 0);
        e.child = itest_fork();
        assert_true(e.child >= 0);
        if (e.child == 0) {
                /* Fresh pages: malloc() could hand out heap this
                 * process had touched before the fork. */
                char *p = mmap(NULL, 1000 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), b;
                uint64_t v = (uint64_t) (uintptr_t) p;

                close(gate[1]);
                close(tell[0]);
                if (p == MAP_FAILED || write(tell[1], &v, sizeof(v)) != sizeof(v) || read(gate[0], &b, 1) != 1)
                        _exit(1);
                for (size_t i = 0; i < 1000 * page; i += page)
                        ((volatile char *) p)[i] = 1;
                execl("/bin/true", "true", (char *) NULL);
                _exit(127);
        }
        close(gate[0]);
        close(tell[1]);
        assert_int_equal(read(tell[0], &buf, sizeof(buf)), sizeof(buf));
        close(tell[0]);
        e.buf = buf;
        e.buf_end = buf + 1000 * page;

        snprintf(config, sizeof(config),
                 "{\"context\": false, \"targets\": {\"pids\": [%d]},\n"
                 " \"events\": [{\"software\": \"page-faults\", \"period\": 1, \"enable_on_exec\": true,\n"
                 "              \"sample\": [\"tid\", \"time\", \"addr\"]}]}\n",
                 (int) e.child);
        session_start(&d, c, config);
        assert_int_equal(write(gate[1], "x", 1), 1);
        close(gate[1]);
        assert_int_equal(waitpid(e.child, &status, 0), e.child);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

        session_finish(&d, c, on_eoe_line, &e);

        print_message("page faults of the child: %u after its exec, %u in the buffer it faulted in before\n",
                      e.samples - e.in_buf, e.in_buf);
        assert_int_equal(e.in_buf, 0);
        assert_true(e.samples > 0);

        /* System-wide no exec enables it: evmond does, at its start (the
         * first cut of the above left such an event off for good). */
        {
                static const char wide[] =
                        "{\"context\": false,\n"
                        " \"events\": [{\"software\": \"page-faults\", \"period\": 1, \"enable_on_exec\": true,\n"
                        "              \"sample\": [\"tid\", \"time\", \"addr\"]}]}\n";
                struct eoe_seen w = {};

                c = calloc(1, sizeof(*c));
                assert_non_null(c);
                session_start(&d, c, wide);
                w.child = itest_fork();
                assert_true(w.child >= 0);
                if (w.child == 0) {
                        char *p = mmap(NULL, 100 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

                        for (size_t i = 0; p != MAP_FAILED && i < 100 * page; i += page)
                                p[i] = 1;
                        _exit(p == MAP_FAILED);
                }
                assert_int_equal(waitpid(w.child, &status, 0), w.child);
                session_finish(&d, c, on_eoe_line, &w);
                print_message("system-wide: %u page faults of a child\n", w.samples);
                assert_true(w.samples >= 100);
        }
}

/* ---- counter lines of a multi-threaded pid target ----------------------
 *
 * evmond opens a pid target's every thread on every CPU; a counter line's
 * "cpus" has one entry per CPU, the threads' fds on it added up. It had
 * one per fd: a target with 3 threads gave each CPU 3 times, with no
 * thread to tell them apart. */

static void *burn_thread(void *arg) {
        struct timespec t0, t;

        (void) arg;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
        do
                clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
        while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 300000000L);
        return NULL;
}

static void *read_gate_then_burn(void *arg) {
        char b;

        if (read(*(int *) arg, &b, 1) != 1)
                return NULL;
        return burn_thread(NULL);
}

struct cpus_seen {
        unsigned lines, unique, summed;
};

static void on_cpus_line(json_object *o, void *userdata) {
        struct cpus_seen *s = userdata;
        json_object *cpus;
        int64_t seen[64], sum = 0;
        size_t n;
        bool unique = true;

        if (strcmp(itest_str(o, "type"), "counter") != 0 || !json_object_object_get_ex(o, "cpus", &cpus))
                return;
        s->lines++;
        n = json_object_array_length(cpus);
        for (size_t i = 0; i < n && i < 64; i++) {
                json_object *e = json_object_array_get_idx(cpus, i);

                seen[i] = itest_int(e, "cpu");
                sum += itest_int(e, "value");
                for (size_t k = 0; k < i; k++)
                        unique = unique && seen[k] != seen[i];
        }
        s->unique += unique && n <= (size_t) sysconf(_SC_NPROCESSORS_CONF);
        s->summed += sum == itest_int(o, "value");
}

static void test_pid_target_cpus(void **state) {
        struct itest_daemon d = {};
        struct itest_client *c = calloc(1, sizeof(*c));
        struct cpus_seen s = {};
        int gate[2], ready[2], status;
        char config[512], b;
        pid_t child;

        assert_non_null(c);
        assert_int_equal(pipe(gate), 0);
        assert_int_equal(pipe(ready), 0);
        child = itest_fork();
        assert_true(child >= 0);
        if (child == 0) {
                pthread_t t[3];

                close(gate[1]);
                close(ready[0]);
                /* 3 threads waiting: evmond opens each at start. */
                for (int i = 0; i < 3; i++)
                        if (pthread_create(&t[i], NULL, read_gate_then_burn,
                                           &gate[0]) != 0)
                                _exit(1);
                if (write(ready[1], "r", 1) != 1)
                        _exit(1);
                for (int i = 0; i < 3; i++)
                        pthread_join(t[i], NULL);
                _exit(0);
        }
        close(gate[0]);
        close(ready[1]);
        assert_int_equal(read(ready[0], &b, 1), 1);
        close(ready[0]);
        snprintf(config, sizeof(config),
                 "{\"context\": false, \"targets\": {\"pids\": [%d]}, \"counters\": {\"interval_ms\": 200},\n"
                 " \"events\": [{\"software\": \"task-clock\", \"count\": true}]}\n",
                 (int) child);
        session_start(&d, c, config);
        assert_int_equal(write(gate[1], "xxx", 3), 3);
        close(gate[1]);
        assert_int_equal(waitpid(child, &status, 0), child);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

        session_finish(&d, c, on_cpus_line, &s);

        print_message("%u counter lines of a 4-thread target: %u with each CPU once, %u whose cpus add up to "
                      "the value\n", s.lines, s.unique, s.summed);
        assert_true(s.lines >= 2);
        assert_int_equal(s.unique, s.lines);
        assert_int_equal(s.summed, s.lines);
}

/* ---- scaled of a pid target whose thread moves between CPUs -----------
 *
 * A software event is never multiplexed: "scaled" is its value. A pid
 * target is opened per CPU, and each fd is enabled while its thread runs
 * anywhere, running only while it runs on that CPU: scaled per fd, a
 * thread that spent half its time on each of 2 CPUs was counted twice.
 * The child hops between the first two CPUs every 20 ms of its CPU time. */

struct scaled_seen {
        int64_t value, scaled, enabled, running;
};

static void on_scaled_line(json_object *o, void *userdata) {
        struct scaled_seen *s = userdata;

        if (strcmp(itest_str(o, "type"), "counter") != 0 || strcmp(itest_str(o, "event"), "software:task-clock") != 0)
                return;
        s->value = itest_int(o, "value");
        s->scaled = itest_int(o, "scaled");
        s->enabled = itest_int(o, "enabled");
        s->running = itest_int(o, "running");
}

static void test_pid_target_scaled(void **state) {
        struct itest_daemon d = {};
        struct itest_client *c = calloc(1, sizeof(*c));
        struct scaled_seen s = {};
        int gate[2], status;
        char config[512];
        pid_t child;

        if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
                print_message("SKIP: needs 2 CPUs\n");
                skip();
        }
        assert_non_null(c);
        assert_int_equal(pipe(gate), 0);
        child = itest_fork();
        assert_true(child >= 0);
        if (child == 0) {
                char b;

                close(gate[1]);
                if (read(gate[0], &b, 1) != 1)
                        _exit(1);
                for (int hop = 0; hop < 20; hop++) {
                        cpu_set_t one;
                        struct timespec t0, t;

                        CPU_ZERO(&one);
                        CPU_SET(hop % 2, &one);
                        if (sched_setaffinity(0, sizeof(one), &one) < 0)
                                _exit(1);
                        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
                        do
                                clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
                        while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 20000000L);
                }
                _exit(0);
        }
        close(gate[0]);
        snprintf(config, sizeof(config),
                 "{\"context\": false, \"targets\": {\"pids\": [%d]}, \"counters\": {\"interval_ms\": 200},\n"
                 " \"events\": [{\"software\": \"task-clock\", \"count\": true}]}\n",
                 (int) child);
        session_start(&d, c, config);
        assert_int_equal(write(gate[1], "x", 1), 1);
        close(gate[1]);
        assert_int_equal(waitpid(child, &status, 0), child);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

        session_finish(&d, c, on_scaled_line, &s);

        print_message("task-clock of a child hopping between 2 CPUs: value %" PRId64 " ns, scaled %" PRId64
                      ", enabled %" PRId64 ", running %" PRId64 "\n", s.value, s.scaled, s.enabled, s.running);
        /* 20 hops of 20 ms of CPU. */
        assert_true(s.value >= 400000000);
        /* Not multiplexed: scaled is the value, give or take the kernel's
         * updates of an fd's times (a tick); per fd it was about twice. */
        assert_true(s.scaled >= s.value && s.scaled <= s.value + s.value / 50);
        assert_true(s.running <= s.enabled && s.running >= s.enabled - s.enabled / 50);
}

/* ---- schema lines of the pmu and breakpoint kinds ---------------------
 *
 * Each event's first line comes after its schema line; the lines are saved
 * for the schema test, which validates every one against
 * doc/evmon.schema.json. The pmu kind through perf's syntax on the
 * software PMU (config 0: cpu-clock), sampling this process; a write
 * breakpoint on a variable of this process. */

static volatile long watched_;

/* Some hypervisors take breakpoints but never deliver the debug exception
 * (tests/monitor/test-events.c): a counting breakpoint on our own variable
 * tells. */
static bool breakpoints_fire(void) {
        struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_BREAKPOINT, .bp_type = HW_BREAKPOINT_W,
                                     .bp_addr = (uintptr_t) &watched_, .bp_len = sizeof(long),
                                     .exclude_kernel = 1, .exclude_hv = 1 };
        uint64_t n = 0;
        int fd = (int) syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);

        if (fd < 0)
                return false;
        watched_ = 1;
        watched_ = 2;
        if (read(fd, &n, sizeof(n)) != sizeof(n))
                n = 0;
        close(fd);
        return n > 0;
}

struct kinds {
        unsigned schema_pmu, schema_bp, lines_pmu, lines_bp, order_ok;
};

static void on_kind_line(json_object *o, void *userdata) {
        struct kinds *k = userdata;
        const char *type = itest_str(o, "type"), *event = itest_str(o, "event");
        bool pmu, bp;

        if (!type || !event)
                return;
        pmu = strcmp(event, "pmu:clock") == 0;
        bp = strcmp(event, "breakpoint:watched") == 0;
        if (strcmp(type, "schema") == 0) {
                k->schema_pmu += pmu;
                k->schema_bp += bp;
        } else if (strcmp(type, "event") == 0) {
                /* Its schema line came first. */
                k->order_ok += (pmu && k->schema_pmu == 1) || (bp && k->schema_bp == 1);
                k->lines_pmu += pmu;
                k->lines_bp += bp;
        }
}

static void test_schema_of_pmu_and_breakpoint(void **state) {
        struct itest_daemon d = {};
        struct itest_client *c = calloc(1, sizeof(*c));
        struct kinds k = {};
        char config[1024], bp_entry[256], *text;
        bool bp = breakpoints_fire();
        size_t len;

        assert_non_null(c);
        if (!bp)
                print_message("a write breakpoint opens but never fires on this machine (the hypervisor does not "
                              "deliver debug exceptions): only the pmu kind is checked here; tests/vm's events-vm "
                              "has the breakpoint\n");
        snprintf(bp_entry, sizeof(bp_entry),
                 ",\n  {\"breakpoint\": \"0x%lx\", \"access\": \"w\", \"len\": 8, \"name\": \"breakpoint:watched\","
                 " \"sample\": [\"ip\", \"tid\", \"time\", \"addr\"]}",
                 (unsigned long) (uintptr_t) &watched_);
        snprintf(config, sizeof(config),
                 "{\"self\": true, \"targets\": {\"pids\": [%d]},\n"
                 " \"events\": [\n"
                 "  {\"pmu\": \"software/config=0/\", \"name\": \"pmu:clock\", \"freq\": 1000,"
                 " \"sample\": [\"ip\", \"tid\", \"time\", \"period\"]}%s\n"
                 " ]}\n",
                 (int) getpid(), bp ? bp_entry : "");
        session_start(&d, c, config);

        /* 100 ms of our own CPU time for the clock, and writes for the
         * breakpoint. */
        {
                struct timespec t0, t;

                clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
                do {
                        for (int i = 0; i < 1000; i++)
                                watched_ = watched_ + 1;
                        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
                } while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 100000000L);
        }
        text = itest_client_slurp(c, 600, 5000, &len);
        itest_for_each_line(text, len, on_kind_line, &k);
        free(text);
        itest_client_close(c);
        free(c);
        assert_int_equal(itest_daemon_stop(&d), 0);
        itest_daemon_cleanup(&d);

        print_message("pmu: schema %u, lines %u; breakpoint: schema %u, lines %u\n", k.schema_pmu, k.lines_pmu,
                      k.schema_bp, k.lines_bp);
        assert_int_equal(k.schema_pmu, 1);
        assert_true(k.lines_pmu > 0);
        if (bp) {
                assert_int_equal(k.schema_bp, 1);
                assert_true(k.lines_bp > 0);
        }
        assert_int_equal(k.order_ok, k.lines_pmu + k.lines_bp);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_hardware_refused),
                cmocka_unit_test(test_limits_refused),
                cmocka_unit_test(test_clock_tai),
                cmocka_unit_test(test_breakpoint_refused),
                cmocka_unit_test(test_lines),
                cmocka_unit_test(test_group_members_count),
                cmocka_unit_test(test_sample_cgroup_and_raw),
                cmocka_unit_test(test_symbols_without_context),
                cmocka_unit_test(test_cgroup_namespaces_records),
                cmocka_unit_test(test_enable_on_exec),
                cmocka_unit_test(test_pid_target_cpus),
                cmocka_unit_test(test_pid_target_scaled),
                cmocka_unit_test(test_schema_of_pmu_and_breakpoint),
        };

        if (geteuid() != 0) {
                printf("SKIP: needs root (system-wide perf events)\n");
                return 77;
        }
        return cmocka_run_group_tests(tests, NULL, NULL);
}
