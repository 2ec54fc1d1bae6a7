/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Uprobes end to end through the real evmond (issue 3): probes with
 * fetch-args made through tracefs, a probe without them made by the uprobe
 * PMU, a uprobe by symbol in the target's libc; every call arrives once
 * with its values. Then the crash path: a SIGKILLed daemon leaves its probe
 * and socket behind, and the next start cleans up after it without
 * touching anyone else's probes.
 *
 * Needs root and uprobe_events (exit 77 otherwise). The probed program is
 * evmon-probe-target (probe-target.c). */

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
#include "probe-target.h"

#define K 200
#define K_RESTART 20

static const char *tracefs_dir;
static char target_path[PATH_MAX];

/* Global so the teardown stops them when an assertion ends a test early. */
static struct itest_daemon daemon_ = { .pid = -1 };
static pid_t second_ = -1;              /* a second evmond, on another socket */

/* ---- the probed program ---------------------------------------------- */

struct target {
        pid_t pid;
        int in;                 /* its stdin */
        FILE *out;              /* its stdout */
        uint64_t fn_addr;       /* evmon_probe_target in its address space */
        uint64_t atoi_addr;     /* libc's atoi in its address space */
};

static struct target target_ = { .pid = -1 };

/* Starts evmon-probe-target K and waits for its "ready" line: from then on
 * it sits in fgets() until target_go(). */
static void target_start(struct target *t, int k) {
        int in[2], out[2];
        char line[256], kbuf[16];
        int pid;

        assert_int_equal(pipe2(in, O_CLOEXEC), 0);
        assert_int_equal(pipe2(out, O_CLOEXEC), 0);
        snprintf(kbuf, sizeof(kbuf), "%d", k);
        t->pid = fork();
        assert_true(t->pid >= 0);
        if (t->pid == 0) {
                dup2(in[0], STDIN_FILENO);
                dup2(out[1], STDOUT_FILENO);
                execl(target_path, target_path, kbuf, (char *) NULL);
                _exit(127);
        }
        close(in[0]);
        close(out[1]);
        t->in = in[1];
        t->out = fdopen(out[0], "r");
        assert_non_null(t->out);
        assert_non_null(fgets(line, sizeof(line), t->out));
        assert_int_equal(sscanf(line, "ready %d %" SCNx64 " %" SCNx64, &pid, &t->fn_addr, &t->atoi_addr), 3);
        assert_int_equal(pid, t->pid);
}

static void target_go(struct target *t) {
        assert_int_equal(write(t->in, "go\n", 3), 3);
}

/* Waits for "done" and exit status 0. */
static void target_finish(struct target *t) {
        char line[256];
        int status;

        assert_non_null(fgets(line, sizeof(line), t->out));
        assert_int_equal(strncmp(line, "done ", 5), 0);
        assert_int_equal(waitpid(t->pid, &status, 0), t->pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        fclose(t->out);
        close(t->in);
        t->pid = -1;
}

/* The real path of the libc PID has mapped, from /proc/PID/maps. */
static void libc_of(pid_t pid, char *buf, size_t size) {
        char maps[64], line[PATH_MAX + 128];
        FILE *f;

        buf[0] = 0;
        snprintf(maps, sizeof(maps), "/proc/%d/maps", (int) pid);
        f = fopen(maps, "re");
        assert_non_null(f);
        while (fgets(line, sizeof(line), f)) {
                char *path = strchr(line, '/'), *base;

                if (!path)
                        continue;
                path[strcspn(path, "\n")] = 0;
                base = strrchr(path, '/') + 1;
                if (strncmp(base, "libc.so", 7) == 0 || strncmp(base, "libc-", 5) == 0) {
                        snprintf(buf, size, "%s", path);
                        break;
                }
        }
        fclose(f);
        assert_true(buf[0] == '/');
}

/* ---- tracefs ---------------------------------------------------------- */

static char *read_uprobe_events(void) {
        char path[PATH_MAX], *text = calloc(1, 1 << 20);
        ssize_t n;
        int fd;

        assert_non_null(text);
        snprintf(path, sizeof(path), "%s/uprobe_events", tracefs_dir);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        n = read(fd, text, (1 << 20) - 1);
        assert_true(n >= 0);
        close(fd);
        return text;
}

static int write_uprobe_events(const char *line) {
        char path[PATH_MAX];
        ssize_t n;
        int fd, r = 0;

        snprintf(path, sizeof(path), "%s/uprobe_events", tracefs_dir);
        fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        n = write(fd, line, strlen(line));
        if (n < 0)
                r = -errno;
        close(fd);
        return r;
}

/* How many lines of uprobe_events define a probe in GROUP ("p:GROUP/..."
 * or "r:GROUP/..."); NAME, when not NULL, narrows it to GROUP/NAME. */
static int count_probes(const char *text, const char *group, const char *name) {
        char want[128];
        int n = 0;

        snprintf(want, sizeof(want), "%s/%s%s", group, name ?: "", name ? " " : "");
        for (const char *l = text; *l; ) {
                const char *nl = strchrnul(l, '\n');
                if (nl - l > 2 && l[1] == ':' && strncmp(l + 2, want, strlen(want)) == 0)
                        n++;
                l = *nl ? nl + 1 : nl;
        }
        return n;
}

static void dump_uprobe_events(const char *what) {
        char *text = read_uprobe_events();
        fprintf(stderr, "uprobe_events %s:\n%s", what, text);
        free(text);
}

/* ---- reading the stream ---------------------------------------------- */

static uint64_t field_u64(json_object *fields, const char *key) {
        json_object *v;

        assert_true(json_object_object_get_ex(fields, key, &v));
        if (json_object_is_type(v, json_type_string))
                return strtoull(json_object_get_string(v), NULL, 0);
        assert_true(json_object_is_type(v, json_type_int));
        return json_object_get_uint64(v);
}

static int64_t field_s64(json_object *fields, const char *key) {
        json_object *v;

        assert_true(json_object_object_get_ex(fields, key, &v));
        assert_true(json_object_is_type(v, json_type_int));
        return json_object_get_int64(v);
}

struct stamp {
        uint64_t ts;
        int64_t value;          /* the call's index, or the returned value */
};

struct tally {
        const struct target *t;
        int k;
        struct stamp call[K], ret[K], pmu[K];
        int n_call, n_ret, n_pmu, n_atoi, n_atoi_pmu;
        int n_atoi_other_pids;
        bool seen_call[K], seen_atoi[K];
        int64_t lost, dropped, unexpected;
        const char *socket;     /* run_target_for: the daemon it reads, when not A */
};

static json_object *event_fields(json_object *o) {
        json_object *fields;

        assert_true(json_object_object_get_ex(o, "fields", &fields));
        return fields;
}

static void tally_line(json_object *o, void *userdata) {
        struct tally *t = userdata;
        const char *type = itest_str(o, "type"), *event;
        struct probe_target_call c;
        json_object *fields;
        int64_t i;

        if (strcmp(type, "lost") == 0) {
                t->lost += itest_int(o, "count");
                return;
        }
        if (strcmp(type, "dropped") == 0) {
                t->dropped += itest_int(o, "count");
                t->lost += itest_dropped_lost(o);
                return;
        }
        if (strcmp(type, "event") != 0)
                return;
        event = itest_str(o, "event");
        fields = event_fields(o);
        if (itest_int(o, "pid") != t->t->pid) {
                /* Any process calling libc's atoi fires the libc probes. */
                if (strncmp(event, "uprobe:atoi", 11) == 0)
                        t->n_atoi_other_pids++;
                else
                        t->unexpected++;
                return;
        }
        assert_int_equal(itest_int(o, "tid"), t->t->pid);

        if (strcmp(event, "uprobe:call") == 0) {
                int64_t n = field_s64(fields, "n");

                /* n identifies the call; the string must be the one passed with it. */
                i = n / 100000007L + 50;
                assert_true(i >= 0 && i < t->k);
                probe_target_values((int) i, &c);
                assert_int_equal(n, c.n);
                assert_string_equal(itest_str(fields, "s"), c.s);
                assert_false(t->seen_call[i]);
                t->seen_call[i] = true;
                assert_int_equal(field_u64(fields, "__probe_ip"), t->t->fn_addr);
                assert_true(t->n_call < t->k);
                t->call[t->n_call++] = (struct stamp) { .ts = (uint64_t) itest_int(o, "ts"), .value = i };
        } else if (strcmp(event, "uretprobe:call_ret") == 0) {
                assert_int_equal(field_u64(fields, "__probe_func"), t->t->fn_addr);
                assert_true(t->n_ret < t->k);
                t->ret[t->n_ret++] = (struct stamp) { .ts = (uint64_t) itest_int(o, "ts"), .value = field_s64(fields, "ret") };
        } else if (strcmp(event, "uprobe:call_pmu") == 0) {
                /* The PMU-made probe has no fetch-args: the address only. */
                assert_int_equal(json_object_object_length(fields), 1);
                assert_int_equal(field_u64(fields, "__probe_ip"), t->t->fn_addr);
                assert_true(t->n_pmu < t->k);
                t->pmu[t->n_pmu++] = (struct stamp) { .ts = (uint64_t) itest_int(o, "ts") };
        } else if (strcmp(event, "uprobe:atoi") == 0) {
                const char *a = itest_str(fields, "a");

                i = (strtol(a, NULL, 10) - 7000) / 13;
                assert_true(i >= 0 && i < t->k);
                probe_target_values((int) i, &c);
                assert_string_equal(a, c.a);
                assert_false(t->seen_atoi[i]);
                t->seen_atoi[i] = true;
                assert_int_equal(field_u64(fields, "__probe_ip"), t->t->atoi_addr);
                t->n_atoi++;
        } else if (strcmp(event, "uprobe:atoi_pmu") == 0) {
                assert_int_equal(field_u64(fields, "__probe_ip"), t->t->atoi_addr);
                t->n_atoi_pmu++;
        } else
                t->unexpected++;
}

static int stamp_cmp(const void *a, const void *b) {
        const struct stamp *x = a, *y = b;
        return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* Reads C until the stream was quiet for a while and tallies what came. */
static void collect(struct itest_client *c, struct tally *t) {
        size_t len;
        char *text = itest_client_slurp(c, 1500, 60000, &len);

        itest_for_each_line(text, len, tally_line, t);
        free(text);
}

static json_object *hello_events(struct itest_client *c) {
        json_object *o = itest_client_expect(c, "hello", 5000), *events;

        assert_non_null(o);
        assert_true(json_object_object_get_ex(o, "events", &events));
        json_object_get(events);
        json_object_put(o);
        return events;
}

/* The tracefs group the daemon on SOCKET made its probes in, from its
 * status reply: "evmon" for the default socket, its own for any other. */
static void daemon_group(const char *socket, char *buf, size_t size) {
        struct itest_client *c = calloc(1, sizeof(*c));
        json_object *o;
        const char *g;

        assert_non_null(c);
        assert_int_equal(itest_client_connect(c, socket), 0);
        json_object_put(hello_events(c));
        assert_int_equal(itest_client_send(c, "{\"type\":\"status\"}\n"), 0);
        o = itest_client_expect(c, "status", 5000);
        assert_non_null(o);
        g = itest_str(o, "probe_group");
        assert_int_equal(strncmp(g, "evmon", 5), 0);
        assert_true(strlen(g) < size);
        snprintf(buf, size, "%s", g);
        json_object_put(o);
        itest_client_close(c);
        free(c);
}

/* The one group named in the probe record PATH. */
static void check_record(const char *path, const char *group) {
        char line[128];
        FILE *f = fopen(path, "re");

        assert_non_null(f);
        assert_non_null(fgets(line, sizeof(line), f));
        line[strcspn(line, "\n")] = 0;
        assert_string_equal(line, group);
        assert_null(fgets(line, sizeof(line), f));
        fclose(f);
}

/* ---- 1. uprobes through tracefs and the PMU, in the binary and in libc -- */

static void test_uprobes_end_to_end(void **state) {
        static const char *const wire[] = { "uprobe:call", "uretprobe:call_ret", "uprobe:call_pmu",
                                            "uprobe:atoi", "uprobe:atoi_pmu" };
        struct itest_client *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
        struct tally *ta = calloc(1, sizeof(*ta)), *tb = calloc(1, sizeof(*tb));
        struct itest_daemon *d = &daemon_;
        struct target *t = &target_;
        char libc[PATH_MAX], probes_file[PATH_MAX], sub[256], group[64];
        char *config, *text;
        json_object *events, *o;
        struct stat st;

        assert_non_null(a);
        assert_non_null(b);
        assert_non_null(ta);
        assert_non_null(tb);

        /* The target runs first: its maps say which libc it uses. */
        target_start(t, K);
        libc_of(t->pid, libc, sizeof(libc));
        fprintf(stderr, "target %s pid %d, libc %s\n", target_path, (int) t->pid, libc);
        assert_true(asprintf(&config,
                             "{\n"
                             "  \"ring\": {\"pages\": 64},\n"
                             "  \"events\": [\n"
                             "    {\"uprobe\": \"%1$s:evmon_probe_target\", \"name\": \"call\",\n"
                             "     \"fetch\": [\"s=+0(%%di):string\", \"n=%%si:s64\"]},\n"
                             "    {\"uretprobe\": \"%1$s:evmon_probe_target\", \"name\": \"call_ret\",\n"
                             "     \"fetch\": [\"ret=$retval:s64\"]},\n"
                             "    // no fetch-args: made by the uprobe PMU, gone with its fd\n"
                             "    {\"uprobe\": \"%1$s:evmon_probe_target\", \"name\": \"call_pmu\"},\n"
                             "    {\"uprobe\": \"%2$s:atoi\", \"name\": \"atoi\", \"fetch\": [\"a=+0(%%di):string\"]},\n"
                             "    {\"uprobe\": \"%2$s:atoi\", \"name\": \"atoi_pmu\"}\n"
                             "  ]\n"
                             "}\n", target_path, libc) > 0);
        assert_int_equal(itest_daemon_start(d, config), 0);
        free(config);

        /* The tracefs probes are in the daemon's group, recorded beside
         * the socket; the PMU ones are not in uprobe_events at all. */
        daemon_group(d->socket, group, sizeof(group));
        fprintf(stderr, "probe group %s\n", group);
        text = read_uprobe_events();
        assert_int_equal(count_probes(text, group, "call"), 1);
        assert_int_equal(count_probes(text, group, "call_ret"), 1);
        assert_int_equal(count_probes(text, group, "atoi"), 1);
        assert_int_equal(count_probes(text, group, NULL), 3);
        free(text);
        snprintf(probes_file, sizeof(probes_file), "%s/probes", d->dir);
        check_record(probes_file, group);

        assert_int_equal(itest_client_connect(a, d->socket), 0);
        events = hello_events(a);
        assert_int_equal(json_object_array_length(events), 5);
        for (size_t i = 0; i < 5; i++)
                assert_string_equal(json_object_get_string(json_object_array_get_idx(events, i)), wire[i]);
        json_object_put(events);

        /* B wants the target's libc calls only. */
        assert_int_equal(itest_client_connect(b, d->socket), 0);
        json_object_put(hello_events(b));
        snprintf(sub, sizeof(sub), "{\"type\":\"subscribe\",\"events\":[\"uprobe:atoi\"],\"pids\":[%d]}\n", (int) t->pid);
        assert_int_equal(itest_client_send(b, sub), 0);
        o = itest_client_expect(b, "subscribed", 5000);
        assert_non_null(o);
        json_object_put(o);

        target_go(t);
        ta->t = tb->t = t;
        ta->k = tb->k = K;
        collect(a, ta);
        collect(b, tb);
        target_finish(t);

        fprintf(stderr, "client A: %d call, %d call_ret, %d call_pmu, %d atoi (+%d from other pids), %d atoi_pmu, "
                "%" PRId64 " lost, %" PRId64 " dropped\n", ta->n_call, ta->n_ret, ta->n_pmu, ta->n_atoi,
                ta->n_atoi_other_pids, ta->n_atoi_pmu, ta->lost, ta->dropped);
        assert_int_equal(ta->lost, 0);
        assert_int_equal(ta->dropped, 0);
        assert_int_equal(ta->unexpected, 0);
        assert_int_equal(ta->n_call, K);
        assert_int_equal(ta->n_ret, K);
        assert_int_equal(ta->n_pmu, K);
        assert_int_equal(ta->n_atoi, K);
        assert_int_equal(ta->n_atoi_pmu, K);

        /* Call by call: in time order, call i enters, returns its value, and
         * only then call i+1 enters; the PMU probe fires once per entry. */
        qsort(ta->call, K, sizeof(struct stamp), stamp_cmp);
        qsort(ta->ret, K, sizeof(struct stamp), stamp_cmp);
        qsort(ta->pmu, K, sizeof(struct stamp), stamp_cmp);
        for (int i = 0; i < K; i++) {
                struct probe_target_call c;

                probe_target_values(i, &c);
                assert_int_equal(ta->call[i].value, i);
                assert_int_equal(ta->ret[i].value, c.ret);
                assert_true(ta->call[i].ts < ta->ret[i].ts);
                assert_true(ta->pmu[i].ts < ta->ret[i].ts);
                if (i + 1 < K) {
                        assert_true(ta->ret[i].ts < ta->call[i + 1].ts);
                        assert_true(ta->ret[i].ts < ta->pmu[i + 1].ts);
                }
        }

        /* B: exactly the target's K atoi calls, nothing else. */
        assert_int_equal(tb->n_atoi, K);
        assert_int_equal(tb->n_atoi_other_pids, 0);
        assert_int_equal(tb->n_call + tb->n_ret + tb->n_pmu + tb->n_atoi_pmu, 0);
        assert_int_equal(tb->unexpected, 0);

        itest_client_close(a);
        itest_client_close(b);
        /* A clean stop removes our tracefs probes and the record. */
        assert_int_equal(itest_daemon_stop(d), 0);
        text = read_uprobe_events();
        if (count_probes(text, group, NULL) != 0)
                fprintf(stderr, "left behind:\n%s", text);
        assert_int_equal(count_probes(text, group, NULL), 0);
        free(text);
        assert_int_equal(stat(probes_file, &st), -1);
        assert_int_equal(errno, ENOENT);
        free(a);
        free(b);
        free(ta);
        free(tb);
}

/* ---- 2. restart after SIGKILL ---------------------------------------- */

#define FOREIGN_GROUP "evmonforeign"
/* A group an earlier evmond recorded as its own. */
#define RECORDED_GROUP "evmonrecorded"

static void remove_foreign(void) {
        (void) write_uprobe_events("-:" FOREIGN_GROUP "/x\n");
        (void) write_uprobe_events("-:" RECORDED_GROUP "/y\n");
}

/* Starts evmond on CONFIG and SOCKET and waits until it serves. */
static int evmond_spawn(pid_t *ret_pid, const char *config, const char *socket) {
        char evmond[512];
        pid_t pid;

        itest_build_path("evmond", evmond, sizeof(evmond));
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                execl(evmond, evmond, "--config", config, "--socket", socket, (char *) NULL);
                _exit(127);
        }
        *ret_pid = pid;
        for (int i = 0; i < 200; i++) {
                struct itest_client c;
                int status;

                if (waitpid(pid, &status, WNOHANG) == pid) {
                        fprintf(stderr, "evmond exited early with status %d\n", WEXITSTATUS(status));
                        *ret_pid = -1;
                        return -ECHILD;
                }
                if (itest_client_connect(&c, socket) == 0) {
                        itest_client_close(&c);
                        return 0;
                }
                usleep(50000);
        }
        return -ETIMEDOUT;
}

/* The file offset probe GROUP/call sits at, from its uprobe_events line
 * "p:GROUP/call PATH:0xOFF ARGS". */
static uint64_t our_offset(const char *text, const char *group) {
        char want[128];
        const char *l, *colon;

        snprintf(want, sizeof(want), "p:%s/call ", group);
        l = strstr(text, want);
        assert_non_null(l);
        l += strlen(want);
        colon = strstr(l, ":0x");
        assert_non_null(colon);
        return strtoull(colon + 1, NULL, 16);
}

static void test_restart_after_sigkill(void **state) {
        struct itest_client *c = calloc(1, sizeof(*c));
        struct tally *tally = calloc(1, sizeof(*tally));
        struct itest_daemon *d = &daemon_;
        char *config, *text, foreign[PATH_MAX + 64], recorded[PATH_MAX + 64], probes_file[PATH_MAX];
        char group[64], group2[64];
        struct target *t = &target_;
        uint64_t offset;
        struct stat st;
        int status;
        FILE *f;

        assert_non_null(c);
        assert_non_null(tally);
        assert_true(asprintf(&config,
                             "{\"events\": [\n"
                             "  {\"uprobe\": \"%s:evmon_probe_target\", \"name\": \"call\",\n"
                             "   \"fetch\": [\"s=+0(%%di):string\", \"n=%%si:s64\"]}\n"
                             "]}\n", target_path) > 0);
        assert_int_equal(itest_daemon_start(d, config), 0);
        free(config);
        daemon_group(d->socket, group, sizeof(group));
        text = read_uprobe_events();
        assert_int_equal(count_probes(text, group, "call"), 1);
        offset = our_offset(text, group);
        snprintf(foreign, sizeof(foreign), "p:" FOREIGN_GROUP "/x %s:0x%" PRIx64 "\n", target_path, offset);
        snprintf(recorded, sizeof(recorded), "p:" RECORDED_GROUP "/y %s:0x%" PRIx64 "\n", target_path, offset);
        free(text);
        snprintf(probes_file, sizeof(probes_file), "%s/probes", d->dir);
        check_record(probes_file, group);

        /* A crash: no cleanup at all. */
        assert_int_equal(kill(d->pid, SIGKILL), 0);
        assert_int_equal(waitpid(d->pid, &status, 0), d->pid);
        assert_true(WIFSIGNALED(status));
        d->pid = -1;
        assert_int_equal(stat(d->socket, &st), 0);
        assert_true(S_ISSOCK(st.st_mode));
        assert_int_equal(stat(probes_file, &st), 0);
        text = read_uprobe_events();
        assert_int_equal(count_probes(text, group, "call"), 1);
        free(text);

        /* Someone else's probe, on the very same instruction, and one in a
         * group the record names (as if an older config had used it). */
        remove_foreign();
        assert_int_equal(write_uprobe_events(foreign), 0);
        assert_int_equal(write_uprobe_events(recorded), 0);
        f = fopen(probes_file, "ae");
        assert_non_null(f);
        fputs(RECORDED_GROUP "\n", f);
        assert_int_equal(fclose(f), 0);
        text = read_uprobe_events();
        assert_int_equal(count_probes(text, FOREIGN_GROUP, "x"), 1);
        assert_int_equal(count_probes(text, RECORDED_GROUP, "y"), 1);
        free(text);

        /* The restart replaces the stale socket, removes the stale probe
         * (else adding ours again would fail with EEXIST) and the recorded
         * group's, and serves. */
        if (evmond_spawn(&d->pid, d->config, d->socket) < 0) {
                dump_uprobe_events("after the failed restart");
                remove_foreign();
                fail_msg("evmond did not start again after SIGKILL");
        }
        /* Same socket, same group. */
        daemon_group(d->socket, group2, sizeof(group2));
        assert_string_equal(group2, group);
        text = read_uprobe_events();
        if (count_probes(text, group, NULL) != 1 || count_probes(text, FOREIGN_GROUP, "x") != 1)
                fprintf(stderr, "uprobe_events after the restart:\n%s", text);
        assert_int_equal(count_probes(text, group, "call"), 1);
        assert_int_equal(count_probes(text, group, NULL), 1);
        assert_int_equal(count_probes(text, RECORDED_GROUP, NULL), 0);
        assert_int_equal(count_probes(text, FOREIGN_GROUP, "x"), 1);
        free(text);
        /* The record names only what this instance made. */
        check_record(probes_file, group);

        assert_int_equal(itest_client_connect(c, d->socket), 0);
        json_object_put(hello_events(c));
        target_start(t, K_RESTART);
        target_go(t);
        tally->t = t;
        tally->k = K_RESTART;
        collect(c, tally);
        target_finish(t);
        itest_client_close(c);
        fprintf(stderr, "after the restart: %d call events of %d\n", tally->n_call, K_RESTART);
        assert_int_equal(tally->n_call, K_RESTART);
        assert_int_equal(tally->lost, 0);
        for (int i = 0; i < K_RESTART; i++)
                assert_true(tally->seen_call[i]);

        /* A clean stop takes our probe and leaves the foreign one. */
        assert_int_equal(itest_daemon_stop(d), 0);
        text = read_uprobe_events();
        assert_int_equal(count_probes(text, group, NULL), 0);
        assert_int_equal(count_probes(text, FOREIGN_GROUP, "x"), 1);
        free(text);
        assert_int_equal(stat(probes_file, &st), -1);
        assert_int_equal(stat(d->socket, &st), -1);

        remove_foreign();
        text = read_uprobe_events();
        assert_int_equal(count_probes(text, FOREIGN_GROUP, NULL), 0);
        free(text);
        free(c);
        free(tally);
}

/* ---- 3. failures and --check-config leave nothing behind ------------- */

static pid_t last_run_pid;

/* Runs evmond with ARGS (NULL-terminated) to its end; returns its exit
 * status and, in *ret_output, what it printed on stdout and stderr. Its
 * pid stays in last_run_pid (--check-config's group is evmoncheckPID). */
static int run_evmond(char **ret_output, ...) {
        const char *argv[16];
        char evmond[512], *out = calloc(1, 1 << 16);
        size_t len = 0, n = 1;
        int fds[2], status;
        va_list ap;
        ssize_t r;
        pid_t pid;

        assert_non_null(out);
        argv[0] = itest_build_path("evmond", evmond, sizeof(evmond));
        va_start(ap, ret_output);
        while ((argv[n] = va_arg(ap, const char *)))
                assert_true(++n < 16);
        va_end(ap);
        assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                dup2(fds[1], STDOUT_FILENO);
                dup2(fds[1], STDERR_FILENO);
                execv(evmond, (char **) argv);
                _exit(127);
        }
        last_run_pid = pid;
        close(fds[1]);
        while ((r = read(fds[0], out + len, (1 << 16) - 1 - len)) > 0)
                len += (size_t) r;
        close(fds[0]);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        fprintf(stderr, "evmond said:\n%s", out);
        *ret_output = out;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void write_file(const char *path, const char *text) {
        FILE *f = fopen(path, "we");

        assert_non_null(f);
        assert_true(fputs(text, f) >= 0);
        assert_int_equal(fclose(f), 0);
}

/* SIGTERM to *PID and its exit status (-1: it did not exit within 10 s). */
static int evmond_stop(pid_t *pid) {
        int status;

        kill(*pid, SIGTERM);
        for (int i = 0; i < 200; i++) {
                if (waitpid(*pid, &status, WNOHANG) == *pid) {
                        *pid = -1;
                        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
                }
                usleep(50000);
        }
        kill(*pid, SIGKILL);
        waitpid(*pid, &status, 0);
        *pid = -1;
        return -1;
}

/* Runs the target once and tallies what each of the N clients got. */
static void run_target_for(struct itest_client **clients, struct tally **tallies, size_t n, int k) {
        struct target *t = &target_;

        for (size_t i = 0; i < n; i++) {
                assert_int_equal(itest_client_connect(clients[i], i == 0 ? daemon_.socket : tallies[i]->socket), 0);
                json_object_put(hello_events(clients[i]));
        }
        target_start(t, k);
        target_go(t);
        for (size_t i = 0; i < n; i++) {
                tallies[i]->t = t;
                tallies[i]->k = k;
                collect(clients[i], tallies[i]);
        }
        target_finish(t);
        for (size_t i = 0; i < n; i++) {
                itest_client_close(clients[i]);
                fprintf(stderr, "client %zu: %d call, %d call_ret\n", i, tallies[i]->n_call, tallies[i]->n_ret);
                assert_int_equal(tallies[i]->n_call, k);
                assert_int_equal(tallies[i]->n_ret, k);
                assert_int_equal(tallies[i]->lost, 0);
        }
}

/* ---- 3. two instances, --check-config, a failed start ----------------- */

static void test_instances_and_failures(void **state) {
        struct itest_client *c[2] = { calloc(1, sizeof(**c)), calloc(1, sizeof(**c)) };
        struct tally *tl[2] = { calloc(1, sizeof(**tl)), calloc(1, sizeof(**tl)) };
        struct itest_daemon *d = &daemon_;
        char bad[PATH_MAX], other[PATH_MAX], socket[PATH_MAX], probes_file[PATH_MAX];
        char group[64], group2[64], check_group[64];
        char *good_config, *bad_config, *out, *text;
        struct stat st;

        for (size_t i = 0; i < 2; i++) {
                assert_non_null(c[i]);
                assert_non_null(tl[i]);
        }
        assert_true(asprintf(&good_config,
                             "{\"events\": [\n"
                             "  {\"uprobe\": \"%1$s:evmon_probe_target\", \"name\": \"call\",\n"
                             "   \"fetch\": [\"s=+0(%%di):string\", \"n=%%si:s64\"]},\n"
                             "  {\"uretprobe\": \"%1$s:evmon_probe_target\", \"name\": \"call_ret\",\n"
                             "   \"fetch\": [\"ret=$retval:s64\"]}\n"
                             "]}\n", target_path) > 0);
        /* The first probe is made before the kernel refuses the second. */
        assert_true(asprintf(&bad_config,
                             "{\"events\": [\n"
                             "  {\"uprobe\": \"%1$s:evmon_probe_target\", \"name\": \"call\", \"fetch\": [\"n=%%si:s64\"]},\n"
                             "  {\"uprobe\": \"%1$s:evmon_probe_target\", \"name\": \"bad\", \"fetch\": [\"n=%%nosuchreg:s64\"]}\n"
                             "]}\n", target_path) > 0);

        /* Daemon A runs with the good config throughout. */
        assert_int_equal(itest_daemon_start(d, good_config), 0);
        daemon_group(d->socket, group, sizeof(group));
        snprintf(bad, sizeof(bad), "%s/bad.json", d->dir);
        write_file(bad, bad_config);
        snprintf(other, sizeof(other), "%s/other", d->dir);
        assert_int_equal(mkdir(other, 0755), 0);
        snprintf(socket, sizeof(socket), "%s/other/evmond.sock", d->dir);
        snprintf(probes_file, sizeof(probes_file), "%s/other/probes", d->dir);

        /* --check-config judges the good config with the kernel, in a group
         * of its own: A's probes are not touched. */
        assert_int_equal(run_evmond(&out, "--check-config", "--config", d->config, NULL), 0);
        snprintf(check_group, sizeof(check_group), "evmoncheck%d", (int) last_run_pid);
        assert_non_null(strstr(out, "OK, 2 events"));
        free(out);
        text = read_uprobe_events();
        assert_int_equal(count_probes(text, check_group, NULL), 0);
        free(text);
        /* ...and the bad one: exit 2, the kernel's reason, file, line, key. */
        assert_int_equal(run_evmond(&out, "--check-config", "--config", bad, NULL), 2);
        snprintf(check_group, sizeof(check_group), "evmoncheck%d", (int) last_run_pid);
        assert_non_null(strstr(out, "Invalid register name"));
        assert_non_null(strstr(out, "bad.json:3: events[1].uprobe"));
        free(out);
        text = read_uprobe_events();
        assert_int_equal(count_probes(text, check_group, NULL), 0);
        assert_int_equal(count_probes(text, group, "call"), 1);
        assert_int_equal(count_probes(text, group, "call_ret"), 1);
        assert_int_equal(count_probes(text, group, NULL), 2);
        free(text);

        /* Daemon B, same config, another socket: its own group, so the two
         * never clean or extend each other's probes (same names, same
         * target), and both deliver every call. */
        assert_int_equal(evmond_spawn(&second_, d->config, socket), 0);
        daemon_group(socket, group2, sizeof(group2));
        fprintf(stderr, "groups: A %s, B %s\n", group, group2);
        assert_string_not_equal(group, group2);
        check_record(probes_file, group2);
        text = read_uprobe_events();
        assert_int_equal(count_probes(text, group, NULL), 2);
        assert_int_equal(count_probes(text, group2, "call"), 1);
        assert_int_equal(count_probes(text, group2, "call_ret"), 1);
        assert_int_equal(count_probes(text, group2, NULL), 2);
        free(text);
        tl[1]->socket = socket;
        run_target_for(c, tl, 2, K_RESTART);

        /* B's clean stop takes B's probes only; A goes on. */
        assert_int_equal(evmond_stop(&second_), 0);
        text = read_uprobe_events();
        assert_int_equal(count_probes(text, group2, NULL), 0);
        assert_int_equal(count_probes(text, group, NULL), 2);
        free(text);
        assert_int_equal(stat(probes_file, &st), -1);
        memset(tl[0], 0, sizeof(*tl[0]));
        run_target_for(c, tl, 1, K_RESTART);

        /* B again, with the bad config: it fails the way --check-config
         * said, takes the probe it had made, its record and its socket. */
        assert_int_equal(run_evmond(&out, "--config", bad, "--socket", socket, NULL), 2);
        assert_non_null(strstr(out, "Invalid register name"));
        free(out);
        text = read_uprobe_events();
        assert_int_equal(count_probes(text, group2, NULL), 0);
        assert_int_equal(count_probes(text, group, NULL), 2);
        free(text);
        assert_int_equal(stat(probes_file, &st), -1);
        assert_int_equal(stat(socket, &st), -1);
        assert_int_equal(rmdir(other), 0);

        assert_int_equal(itest_daemon_stop(d), 0);
        text = read_uprobe_events();
        assert_int_equal(count_probes(text, group, NULL), 0);
        free(text);

        unlink(bad);
        free(bad_config);
        free(good_config);
        for (size_t i = 0; i < 2; i++) {
                free(c[i]);
                free(tl[i]);
        }
}

static int teardown(void **state) {
        char p[PATH_MAX];
        int status;

        if (second_ > 0)
                (void) evmond_stop(&second_);
        if (target_.pid > 0) {
                kill(target_.pid, SIGKILL);
                (void) waitpid(target_.pid, &status, 0);
                target_.pid = -1;
        }
        if (daemon_.dir[0]) {
                itest_daemon_cleanup(&daemon_);
                snprintf(p, sizeof(p), "%s/probes", daemon_.dir);
                unlink(p);
                snprintf(p, sizeof(p), "%s/bad.json", daemon_.dir);
                unlink(p);
                snprintf(p, sizeof(p), "%s/other/probes", daemon_.dir);
                unlink(p);
                snprintf(p, sizeof(p), "%s/other/evmond.sock", daemon_.dir);
                unlink(p);
                snprintf(p, sizeof(p), "%s/other", daemon_.dir);
                rmdir(p);
                rmdir(daemon_.dir);
        }
        daemon_ = (struct itest_daemon) { .pid = -1 };
        remove_foreign();
        return 0;
}

static void require_uprobes(void) {
        static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
        char p[PATH_MAX];

        itest_require(NULL);
        for (size_t i = 0; i < 2 && !tracefs_dir; i++) {
                snprintf(p, sizeof(p), "%s/uprobe_events", roots[i]);
                if (access(p, W_OK) == 0)
                        tracefs_dir = roots[i];
        }
        if (!tracefs_dir) {
                fprintf(stderr, "SKIP: no writable uprobe_events in tracefs (kernel without CONFIG_UPROBE_EVENTS?)\n");
                exit(ITEST_SKIP);
        }
        if (access("/sys/bus/event_source/devices/uprobe/type", R_OK) != 0) {
                fprintf(stderr, "SKIP: this kernel has no uprobe PMU (/sys/bus/event_source/devices/uprobe)\n");
                exit(ITEST_SKIP);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_teardown(test_uprobes_end_to_end, teardown),
                cmocka_unit_test_teardown(test_restart_after_sigkill, teardown),
                cmocka_unit_test_teardown(test_instances_and_failures, teardown),
        };

        require_uprobes();
        itest_build_path("tests/integration/evmon-probe-target", target_path, sizeof(target_path));
        if (access(target_path, X_OK) != 0) {
                fprintf(stderr, "%s: %m (build it with ninja)\n", target_path);
                return 1;
        }
        return cmocka_run_group_tests(tests, NULL, NULL);
}
