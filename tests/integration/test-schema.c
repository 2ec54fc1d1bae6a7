/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Every line type against doc/evmon.schema.json (python3-jsonschema, via
 * tests/schema/validate-lines): the lines a live evmond sends this test's
 * clients (hello, subscribed, error, status, reload, config, event, lost,
 * dropped; event, counter and record lines of software events), evmonctl
 * decode's lines for the perf.data fixtures, the unit
 * test's lines from raw records (every sample field and record type, and
 * schema lines of trace and perf events), and
 * the lines every other integration test's clients read in this build
 * (itest.c keeps them in $EVMON_LINES_DIR; this test runs last), and
 * the examples of doc/protocol.md.
 * Root and tracefs for the daemon part, else 77; 77 without jsonschema. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "itest.h"

#define N_CALLS 20000

static struct itest_daemon daemon_;
static char dir[512];           /* this run's own lines, removed at the end */

static void die(const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        fprintf(stderr, "FAIL: ");
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, "\n");
        va_end(ap);
        itest_daemon_cleanup(&daemon_);
        fprintf(stderr, "kept %s for a look\n", dir);
        exit(1);
}

static const char *source_path(const char *rel, char *buf, size_t size) {
        const char *s = getenv("EVMON_SOURCE_ROOT");

        snprintf(buf, size, "%s/%s", s ? s : ".", rel);
        return buf;
}

/* Runs the shell command CMD; its output comes back in *RET (caller frees). */
static int sh(const char *cmd, char **ret) {
        const char *argv[] = { "/bin/sh", "-c", cmd, NULL };

        return itest_run(argv, 120000, ret);
}

/* Reads lines from C until one of TYPE came (or dies after 10 s). */
static void expect(struct itest_client *c, const char *type) {
        json_object *o = itest_client_expect(c, type, 10000);

        if (!o)
                die("no \"%s\" line from evmond within 10 s", type);
        json_object_put(o);
}

/* Lines dropped for any client so far, from a status asked through C. */
static int64_t clients_dropped(struct itest_client *c) {
        json_object *o, *clients, *n;
        int64_t sum = 0;

        itest_client_send(c, "{\"type\":\"status\"}\n");
        o = itest_client_expect(c, "status", 10000);
        if (!o || !json_object_object_get_ex(o, "clients", &clients))
                die("no status line with clients from evmond within 10 s");
        for (size_t i = 0; i < json_object_array_length(clients); i++)
                if (json_object_object_get_ex(json_object_array_get_idx(clients, i), "dropped", &n))
                        sum += json_object_get_int64(n);
        json_object_put(o);
        return sum;
}

/* The live daemon: one client sees the conversation, a second one that
 * does not read while rounds of N_CALLS events pass gets a dropped line.
 * A one-page ring holds ~50 records: B fills only with what evmond reads
 * of it, so the rings are read every 1 ms (the 4 ms default budget read a
 * quarter as much, and B's queue and socket buffer did not fill in 40
 * rounds once in two runs after bench-smoke). */
static void daemon_lines(void) {
        static const char config[] =
                "{\"ring\": {\"pages\": 1, \"latency_ms\": 1},\n"
                " \"clients\": {\"queue_kib\": 64},\n"
                " \"events\": [\n"
                "  {\"tracepoint\": \"sched:sched_process_exec\"},\n"
                "  {\"tracepoint\": \"sched:sched_process_fork\"},\n"
                "  {\"tracepoint\": \"syscalls:sys_enter_getppid\"}\n"
                " ]}\n";
        static const char config_reload[] =
                "{\"ring\": {\"pages\": 1, \"latency_ms\": 1},\n"
                " \"clients\": {\"queue_kib\": 64},\n"
                " \"events\": [\n"
                "  {\"tracepoint\": \"sched:sched_process_exec\"},\n"
                "  {\"tracepoint\": \"sched:sched_process_exit\"},\n"
                "  {\"tracepoint\": \"syscalls:sys_enter_getppid\"}\n"
                " ]}\n";
        static const char *const need[] = {
                "sched/sched_process_exec", "sched/sched_process_fork", "syscalls/sys_enter_getppid", NULL,
        };
        struct itest_client *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
        char *text, *out = NULL;
        size_t len;
        FILE *f;
        pid_t child;
        int gate;

        itest_require(need);
        if (!a || !b)
                die("out of memory");
        if (itest_daemon_start(&daemon_, config) < 0)
                die("evmond did not start");
        if (itest_client_connect(a, daemon_.socket) < 0 || itest_client_connect(b, daemon_.socket) < 0)
                die("cannot connect to %s", daemon_.socket);
        expect(a, "hello");
        expect(b, "hello");

        itest_client_send(a, "{\"type\":\"subscribe\",\"events\":[\"sched:*\"]}\n");
        expect(a, "subscribed");
        itest_client_send(a, "{\"type\":\"subscribe\",\"nope\":1}\n");
        expect(a, "error");
        itest_client_send(a, "not json\n");
        expect(a, "error");

        /* B does not read while the calls pass: its queue overflows, once
         * the kernel's socket buffer (evmond asks for 1 MiB) is full too. */
        for (int round = 0; clients_dropped(a) == 0; round++) {
                if (round == 40)
                        die("the client that did not read had nothing dropped after %d events", round * N_CALLS);
                child = itest_spawn_calls(SYS_getppid, 0, N_CALLS, &gate);
                itest_release(gate);
                itest_reap(child);
        }
        text = itest_client_slurp(a, 500, 5000, &len);
        free(text);
        if (sh("/bin/true", &out) != 0)         /* an exec and a fork */
                die("/bin/true failed");
        free(out);
        text = itest_client_slurp(b, 500, 10000, &len);
        if (!strstr(text, "\"type\":\"dropped\""))
                die("the client that did not read got no dropped line for %d events", N_CALLS);
        free(text);

        itest_client_send(a, "{\"type\":\"status\"}\n");
        expect(a, "status");
        /* A reload that changes something is announced with a config line. */
        f = fopen(daemon_.config, "we");
        if (!f || fputs(config_reload, f) < 0 || fclose(f) != 0)
                die("cannot rewrite %s: %m", daemon_.config);
        itest_client_send(a, "{\"type\":\"reload\"}\n");
        /* Every client hears of the change, the asking one before its reply. */
        expect(a, "config");
        expect(a, "reload");

        itest_client_close(a);
        itest_client_close(b);
        free(a);
        free(b);
        if (itest_daemon_stop(&daemon_) != 0)
                die("evmond did not exit cleanly");
        itest_daemon_cleanup(&daemon_);
}

/* The perf event kinds: sampling with callchains and addresses, a
 * counting group and a PMU counter, side records of a dummy event. Lines
 * of REQUIRE must come. Skipped (said so) by an evmond that does not know
 * the kinds yet; any other refusal fails. */
static void perf_kind_lines(void) {
        static const char config[] =
                "{\"counters\": {\"interval_ms\": 200},\n"
                " \"events\": [\n"
                "  {\"software\": \"cpu-clock\", \"freq\": 999, \"callchain\": {\"max_stack\": 32}},\n"
                "  {\"software\": \"page-faults\", \"period\": 1, \"sample\": [\"ip\", \"tid\", \"time\", \"cpu\", \"addr\", \"period\"]},\n"
                "  {\"software\": \"task-clock\", \"count\": true, \"group\": \"sched\"},\n"
                "  {\"software\": \"context-switches\", \"count\": true, \"group\": \"sched\"},\n"
                "  {\"software\": \"dummy\", \"records\": [\"comm\", \"comm_exec\", \"task\", \"mmap2\", \"build_id\",\n"
                "                                    \"context_switch\", \"namespaces\", \"cgroup\"]}\n"
                " ]}\n";
        static const char *const require[] = {
                "\"event\":\"software:cpu-clock\"", "\"event\":\"software:page-faults\"",
                "\"type\":\"counter\"", "\"record\":\"comm\"", "\"record\":\"mmap2\"", "\"record\":\"fork\"",
                "\"record\":\"exit\"", NULL,
        };
        struct itest_client *c = calloc(1, sizeof(*c));
        char evmond[512], path[600], *out = NULL, *text;
        const char *argv[] = { evmond, "--check-config", "--config", path, NULL };
        size_t len;
        FILE *f;
        int r;

        if (!c)
                die("out of memory");
        itest_build_path("evmond", evmond, sizeof(evmond));
        snprintf(path, sizeof(path), "%s/kinds.json", dir);
        f = fopen(path, "we");
        if (!f || fputs(config, f) < 0 || fclose(f) != 0)
                die("cannot write %s: %m", path);
        r = itest_run(argv, 60000, &out);
        if (r != 0 && out && (strstr(out, "unknown key \"software\"") || strstr(out, "unknown key \"counters\""))) {
                fprintf(stderr, "this evmond opens no perf event kinds yet: their lines are left out\n");
                free(out);
                free(c);
                return;
        }
        if (r != 0)
                die("evmond --check-config refused the perf event kinds: %s", out ? out : "");
        free(out);

        if (itest_daemon_start(&daemon_, config) < 0)
                die("evmond did not start with the perf event kinds");
        if (itest_client_connect(c, daemon_.socket) < 0)
                die("cannot connect to %s", daemon_.socket);
        expect(c, "hello");
        /* A fork, an exec, page faults and some CPU time of our own. */
        if (sh("for i in 1 2 3; do /bin/true; done; head -c 4000000 /dev/urandom | md5sum >/dev/null", &out) != 0)
                die("the workload failed: %s", out ? out : "");
        free(out);
        text = itest_client_slurp(c, 1000, 5000, &len);
        for (size_t i = 0; require[i]; i++)
                if (!strstr(text, require[i]))
                        die("no line with %s from evmond with the perf event kinds", require[i]);
        free(text);
        itest_client_close(c);
        free(c);
        if (itest_daemon_stop(&daemon_) != 0)
                die("evmond did not exit cleanly");
        itest_daemon_cleanup(&daemon_);
}

/* evmonctl decode of every perf.data fixture into DIR/decode.jsonl. */
static void decode_lines(const char *to) {
        const char *const fixtures[] = { "task.data", "sys.data", "single.data", NULL };
        char evmonctl[512], fixture[512], cmd[2048], *out = NULL;

        itest_build_path("evmonctl", evmonctl, sizeof(evmonctl));
        source_path("tests/monitor/fixtures/perfdata", fixture, sizeof(fixture));
        for (size_t i = 0; fixtures[i]; i++) {
                snprintf(cmd, sizeof(cmd), "%s decode %s/%s >>%s/decode.jsonl", evmonctl, fixture, fixtures[i], to);
                if (sh(cmd, &out) != 0)
                        die("%s: %s", cmd, out ? out : "");
                free(out);
                out = NULL;
        }
}

/* The unit test's lines from raw records into DIR/encode-perf.jsonl. */
static void unit_lines(const char *to) {
        char exe[512], cmd[2048], *out = NULL;

        itest_build_path("tests/encode/test-encode-perf", exe, sizeof(exe));
        snprintf(cmd, sizeof(cmd), "EVMON_LINES_OUT=%s/encode-perf.jsonl %s", to, exe);
        if (sh(cmd, &out) != 0)
                die("%s: %s", cmd, out ? out : "");
        free(out);
}

int main(void) {
        char schema[512], doc[512], validator[512], evmond[512], path[1024], *cmd, *out = NULL;
        const char *lines_dir = getenv("EVMON_LINES_DIR");
        struct stat st_evmond;
        size_t n_cmd = 1 << 16;
        struct dirent *de;
        DIR *d;
        int r;

        source_path("doc/evmon.schema.json", schema, sizeof(schema));
        source_path("tests/schema/validate-lines", validator, sizeof(validator));
        snprintf(path, sizeof(path), "python3 -c 'import jsonschema' 2>&1");
        if (sh(path, &out) != 0) {
                fprintf(stderr, "SKIP: python3-jsonschema is not installed (scripts/deps installs it): %s", out ? out : "");
                return ITEST_SKIP;
        }
        free(out);
        out = NULL;

        if (!lines_dir || !*lines_dir)
                lines_dir = "/tmp";
        snprintf(dir, sizeof(dir), "%s/schema-XXXXXX", lines_dir);
        (void) mkdir(lines_dir, 0755);
        if (!mkdtemp(dir))
                die("mkdtemp %s: %m", dir);

        decode_lines(dir);
        unit_lines(dir);
        /* Lines of this test's own clients go to EVMON_LINES_DIR/test-schema.jsonl. */
        if (geteuid() == 0) {
                daemon_lines();
                perf_kind_lines();
        }
        else
                fprintf(stderr, "not root: the live daemon's lines are left out\n");
        itest_lines_finish();

        /* Every .jsonl the integration tests wrote since evmond was built:
         * whole files only, renamed there when their program ended (a
         * program still running or killed left NAME.jsonl.part). */
        cmd = malloc(n_cmd);
        if (!cmd)
                die("out of memory");
        source_path("doc/protocol.md", doc, sizeof(doc));
        snprintf(cmd, n_cmd, "python3 %s --require %s %s %s %s/*.jsonl", validator,
                 geteuid() == 0 ? "event,record,schema,hello,subscribed,error,status,reload,config,dropped" : "event,record,schema",
                 schema, doc, dir);
        itest_build_path("evmond", evmond, sizeof(evmond));
        if (stat(evmond, &st_evmond) < 0)
                die("no %s", evmond);
        d = opendir(lines_dir);
        while (d && (de = readdir(d))) {
                struct stat st;
                size_t l = strlen(de->d_name);

                if (l < 7 || strcmp(de->d_name + l - 6, ".jsonl") != 0)
                        continue;
                snprintf(path, sizeof(path), "%s/%s", lines_dir, de->d_name);
                if (stat(path, &st) < 0 || st.st_mtime < st_evmond.st_mtime || st.st_size == 0)
                        continue;       /* from an older build */
                if (strlen(cmd) + strlen(path) + 2 < n_cmd) {
                        strcat(cmd, " ");
                        strcat(cmd, path);
                }
        }
        if (d)
                closedir(d);

        r = sh(cmd, &out);
        fputs(out ? out : "", stdout);
        free(out);
        free(cmd);
        if (r != 0)
                die("lines do not validate against %s (above)", schema);
        snprintf(path, sizeof(path), "rm -rf %s", dir);
        if (sh(path, &out) == 0)
                free(out);
        printf("1 passed, 0 failed\n");
        return 0;
}
