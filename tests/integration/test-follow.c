/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Uprobes that follow their binary (issue 12). evmond probes
 * evmon_probe_target in a copy of evmon-probe-target twice: through tracefs
 * (with fetch-args) and through the uprobe PMU. A process of that copy
 * starts; another build is renamed over the path, as a package upgrade
 * does; a process of the new file starts. Each probe gets a "probe" line
 * (attached, the new inode, its build id), and the old and the new process
 * each bring exactly their calls, under both probes. Then a build without
 * the function is renamed over the path: a "probe" line says the symbol is
 * missing, and so does status; install(1) of the first build over it
 * brings the probe back. Needs root and uprobes (77 otherwise). */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "itest.h"

#define K_OLD 300
#define K_NEW 200

static struct itest_daemon daemon_ = { .pid = -1 };
static char build1[PATH_MAX], build2[PATH_MAX], nosym[PATH_MAX];

struct target {
        pid_t pid;
        int in;
        FILE *out;
};

static struct target old_ = { .pid = -1 }, new_ = { .pid = -1 };
static char dir_[64];                   /* the probed file's directory */

static void remove_dir(void) {
        char p[128];

        if (!dir_[0])
                return;
        snprintf(p, sizeof(p), "%s/target", dir_);
        unlink(p);
        snprintf(p, sizeof(p), "%s/target.new", dir_);
        unlink(p);
        snprintf(p, sizeof(p), "%s/evmon.prom", dir_);
        unlink(p);
        rmdir(dir_);
        dir_[0] = 0;
}

/* Waits up to 5 s for the metrics file in dir_ to hold LINE. */
static bool metrics_say(const char *line) {
        char path[128], buf[16384];

        snprintf(path, sizeof(path), "%s/evmon.prom", dir_);
        for (int waited = 0; waited < 5000; waited += 100) {
                FILE *f = fopen(path, "re");

                if (f) {
                        size_t n = fread(buf, 1, sizeof(buf) - 1, f);

                        fclose(f);
                        buf[n] = 0;
                        if (strstr(buf, line))
                                return true;
                }
                usleep(100 * 1000);
        }
        return false;
}

static int teardown(void **state) {
        struct target *ts[] = { &old_, &new_ };

        for (size_t i = 0; i < 2; i++)
                if (ts[i]->pid > 0) {
                        kill(ts[i]->pid, SIGKILL);
                        (void) waitpid(ts[i]->pid, NULL, 0);
                }
        itest_daemon_cleanup(&daemon_);
        remove_dir();
        return 0;
}

/* Starts PATH K and waits for its "ready": it waits on stdin from then on. */
static void target_start(struct target *t, const char *path, int k) {
        int in[2], out[2], pid;
        char line[256], kbuf[16];

        assert_int_equal(pipe2(in, O_CLOEXEC), 0);
        assert_int_equal(pipe2(out, O_CLOEXEC), 0);
        snprintf(kbuf, sizeof(kbuf), "%d", k);
        t->pid = itest_fork();
        assert_true(t->pid >= 0);
        if (t->pid == 0) {
                dup2(in[0], STDIN_FILENO);
                dup2(out[1], STDOUT_FILENO);
                execl(path, path, kbuf, (char *) NULL);
                _exit(127);
        }
        close(in[0]);
        close(out[1]);
        t->in = in[1];
        t->out = fdopen(out[0], "r");
        assert_non_null(t->out);
        assert_non_null(fgets(line, sizeof(line), t->out));
        assert_int_equal(sscanf(line, "ready %d", &pid), 1);
        assert_int_equal(pid, t->pid);
}

static void target_run(struct target *t) {
        char line[256];
        int status;

        assert_int_equal(write(t->in, "go\n", 3), 3);
        assert_non_null(fgets(line, sizeof(line), t->out));
        assert_int_equal(strncmp(line, "done ", 5), 0);
        assert_int_equal(waitpid(t->pid, &status, 0), t->pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        fclose(t->out);
        close(t->in);
        t->pid = -1;
}

/* Copies FROM beside TO and renames it over TO, as dpkg does. */
static void replace(const char *from, const char *to) {
        char cmd[3 * PATH_MAX], tmp[PATH_MAX + 16];

        snprintf(tmp, sizeof(tmp), "%s.new", to);
        snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", from, tmp);
        assert_int_equal(system(cmd), 0);
        assert_int_equal(rename(tmp, to), 0);
}

static void readelf_build_id(const char *path, char *ret, size_t size) {
        char cmd[PATH_MAX + 32], line[512];
        FILE *p;

        ret[0] = 0;
        snprintf(cmd, sizeof(cmd), "readelf -n '%s'", path);
        p = popen(cmd, "r");
        assert_non_null(p);
        while (fgets(line, sizeof(line), p))
                if (sscanf(line, " Build ID: %127s", ret) == 1)
                        break;
        pclose(p);
        assert_true(size > 128 && strlen(ret) >= 16);
}

/* The next "probe" line about EVENT, checked against what is at PATH. */
static void expect_probe(struct itest_client *c, const char *path, const char *status, int64_t attached,
                         json_object **ret) {
        char want_id[256];
        struct stat st;
        json_object *o = itest_client_expect(c, "probe", 10000);

        assert_non_null(o);
        fprintf(stderr, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
        assert_int_equal(stat(path, &st), 0);
        readelf_build_id(path, want_id, sizeof(want_id));
        assert_string_equal(itest_str(o, "status"), status);
        assert_string_equal(itest_str(o, "path"), path);
        assert_int_equal(itest_int(o, "inode"), (int64_t) st.st_ino);
        assert_string_equal(itest_str(o, "build_id"), want_id);
        assert_int_equal(itest_int(o, "attached"), attached);
        *ret = o;
}

struct counts {
        pid_t old_pid, new_pid;
        int64_t old_call, new_call, old_pmu, new_pmu, bad_n, others, lost;
};

static void count_line(json_object *o, void *userdata) {
        struct counts *n = userdata;
        const char *type = itest_str(o, "type"), *event;
        pid_t pid;

        if (strcmp(type, "lost") == 0)
                n->lost += itest_int(o, "count");
        if (strcmp(type, "event") != 0)
                return;
        event = itest_str(o, "event");
        pid = (pid_t) itest_int(o, "pid");
        if (strcmp(event, "uprobe:call") == 0) {
                json_object *fields;
                int64_t k;

                assert_true(json_object_object_get_ex(o, "fields", &fields));
                k = itest_int(fields, "n");
                /* probe-target.h: n_i = (i - 50) * 100000007 */
                if (k % 100000007L != 0)
                        n->bad_n++;
                if (pid == n->old_pid)
                        n->old_call++;
                else if (pid == n->new_pid)
                        n->new_call++;
                else
                        n->others++;
        } else if (strcmp(event, "uprobe:call_pmu") == 0) {
                if (pid == n->old_pid)
                        n->old_pmu++;
                else if (pid == n->new_pid)
                        n->new_pmu++;
                else
                        n->others++;
        } else
                n->others++;
}

static void test_follow_upgrade(void **state) {
        struct itest_client *c = calloc(1, sizeof(*c));
        char path[128], config[4096];
        struct counts n = {};
        json_object *o, *a, *e;
        const char *events[2];
        size_t len;
        char *text;

        assert_non_null(c);
        /* The daemon's directory is made by itest_daemon_start(): a
         * directory of our own for the probed file. */
        snprintf(dir_, sizeof(dir_), "/tmp/evmon-follow-%d", (int) getpid());
        assert_true(mkdir(dir_, 0755) == 0 || errno == EEXIST);
        snprintf(path, sizeof(path), "%s/target", dir_);
        replace(build1, path);

        snprintf(config, sizeof(config),
                 "{\n"
                 "  \"ring\": {\"pages\": 64},\n"
                 "  \"metrics\": {\"path\": \"%2$s/evmon.prom\", \"interval_ms\": 1000},\n"
                 "  \"events\": [\n"
                 "    {\"uprobe\": \"%1$s:evmon_probe_target\", \"name\": \"call\", \"fetch\": [\"n=%%si:s64\"]},\n"
                 "    {\"uprobe\": \"%1$s:evmon_probe_target\", \"name\": \"call_pmu\"}\n"
                 "  ]\n"
                 "}\n", path, dir_);
        assert_int_equal(itest_daemon_start(&daemon_, config), 0);
        assert_int_equal(itest_client_connect(c, daemon_.socket), 0);
        o = itest_client_expect(c, "hello", 5000);
        assert_non_null(o);
        json_object_put(o);

        /* The old process runs the first build. */
        target_start(&old_, path, K_OLD);
        n.old_pid = old_.pid;

        /* The upgrade: one "probe" line per probe, in the new file now. */
        replace(build2, path);
        for (size_t i = 0; i < 2; i++) {
                expect_probe(c, path, "attached", 2, &o);
                events[i] = strdup(itest_str(o, "event"));
                json_object_put(o);
        }
        assert_true((strcmp(events[0], "uprobe:call") == 0 && strcmp(events[1], "uprobe:call_pmu") == 0) ||
                    (strcmp(events[1], "uprobe:call") == 0 && strcmp(events[0], "uprobe:call_pmu") == 0));
        free((char *) events[0]);
        free((char *) events[1]);
        assert_true(metrics_say("evmon_probe_symbol_missing{event=\"uprobe:call\"} 0\n"));

        target_start(&new_, path, K_NEW);
        n.new_pid = new_.pid;
        target_run(&old_);
        target_run(&new_);

        text = itest_client_slurp(c, 1000, 30000, &len);
        itest_for_each_line(text, len, count_line, &n);
        free(text);
        fprintf(stderr, "old process %d: call %" PRId64 ", call_pmu %" PRId64 " of %d; new %d: call %" PRId64
                ", call_pmu %" PRId64 " of %d; others %" PRId64 ", lost %" PRId64 "\n",
                (int) n.old_pid, n.old_call, n.old_pmu, K_OLD, (int) n.new_pid, n.new_call, n.new_pmu, K_NEW,
                n.others, n.lost);
        assert_int_equal(n.lost, 0);
        assert_int_equal(n.others, 0);
        assert_int_equal(n.bad_n, 0);
        assert_int_equal(n.old_call, K_OLD);
        assert_int_equal(n.old_pmu, K_OLD);
        assert_int_equal(n.new_call, K_NEW);
        assert_int_equal(n.new_pmu, K_NEW);

        /* A build without the function: said in a line for each probe... */
        replace(nosym, path);
        for (size_t i = 0; i < 2; i++) {
                expect_probe(c, path, "symbol_missing", 2, &o);
                assert_non_null(strstr(itest_str(o, "error"), "evmon_probe_target"));
                json_object_put(o);
        }
        /* ...and in status. */
        assert_int_equal(itest_client_send(c, "{\"type\":\"status\"}\n"), 0);
        o = itest_client_expect(c, "status", 5000);
        assert_non_null(o);
        assert_true(json_object_object_get_ex(o, "events", &a));
        assert_int_equal(json_object_array_length(a), 2);
        for (size_t i = 0; i < 2; i++) {
                e = json_object_array_get_idx(a, i);
                fprintf(stderr, "status: %s\n", json_object_to_json_string_ext(e, JSON_C_TO_STRING_PLAIN));
                assert_int_equal(itest_int(e, "files"), 2);
                assert_non_null(strstr(itest_str(e, "missing"), "lacks evmon_probe_target"));
        }
        json_object_put(o);
        /* ...and in the metrics (issue 15's probe states). */
        assert_true(metrics_say("evmon_probe_symbol_missing{event=\"uprobe:call\"} 1\n"));
        assert_true(metrics_say("evmon_probe_symbol_missing{event=\"uprobe:call_pmu\"} 1\n"));

        /* install(1) removes the file and writes a new one in its place
         * (IN_CREATE of an empty file, then IN_CLOSE_WRITE): the probe
         * follows once the file is written, and no line said the symbol
         * was missing from the empty file. */
        {
                char cmd[2 * PATH_MAX + 32];

                snprintf(cmd, sizeof(cmd), "install -m 0755 '%s' '%s'", build1, path);
                assert_int_equal(system(cmd), 0);
        }
        for (size_t i = 0; i < 2; i++) {
                expect_probe(c, path, "attached", 3, &o);
                json_object_put(o);
        }

        itest_client_close(c);
        free(c);
        assert_int_equal(itest_daemon_stop(&daemon_), 0);
        /* Its tracefs probes are gone, the followers' too. */
        {
                FILE *f = fopen("/sys/kernel/tracing/uprobe_events", "re");
                char line[1024];

                assert_non_null(f);
                while (fgets(line, sizeof(line), f))
                        assert_null(strstr(line, path));
                fclose(f);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_teardown(test_follow_upgrade, teardown),
        };

        if (geteuid() != 0) {
                fprintf(stderr, "SKIP: needs root (uprobes)\n");
                return ITEST_SKIP;
        }
        if (access("/sys/bus/event_source/devices/uprobe/type", R_OK) != 0) {
                fprintf(stderr, "SKIP: this kernel has no uprobe PMU (/sys/bus/event_source/devices/uprobe)\n");
                return ITEST_SKIP;
        }
        itest_build_path("tests/integration/evmon-probe-target", build1, sizeof(build1));
        itest_build_path("tests/integration/evmon-probe-target-v2", build2, sizeof(build2));
        itest_build_path("tests/integration/evmon-probe-target-nosym", nosym, sizeof(nosym));
        return cmocka_run_group_tests(tests, NULL, NULL);
}
