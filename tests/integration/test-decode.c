/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* evmonctl decode on perf.data files.
 *
 *   test-decode fixture   the committed fixtures (tests/monitor/fixtures/
 *                         perfdata/): exact lines, --all, refused files.
 *                         Any user.
 *   test-decode           the real thing: two `perf record -a` (the plain
 *                         command, and one with -k mono) and evmond watch
 *                         one workload that makes N getppid() calls and
 *                         execs a binary named for this run; decode must
 *                         show exactly those, in the daemon's own lines.
 *                         Root, perf (linux-perf) and usable tracing,
 *                         else 77. */

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
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "itest.h"

#define N_GETPPID 1000

/* The keys of an event line, in the daemon's order (DESIGN.md). */
/* The daemon's keys, then "sample" for the fields perf recorded beyond them. */
static const char *const event_keys[] = { "type", "event", "time", "ts", "cpu", "pid", "tid", "fields", "sample", NULL };

static char tmpdir[64];

/* ---- helpers ----------------------------------------------------------- */

static char *read_file(const char *path) {
        FILE *f = fopen(path, "re");
        char *s = NULL;
        size_t n = 0;

        if (!f)
                return strdup("");
        if (getdelim(&s, &n, '\0', f) < 0) {
                free(s);
                s = strdup("");
        }
        fclose(f);
        return s;
}

/* Runs ARGV with stdout and stderr into their own strings; killed after
 * TIMEOUT_MS. Returns its exit status, or 128 + signal. */
static int run_capture(const char *const *argv, int timeout_ms, char **ret_out, char **ret_err) {
        char out[128], err[128];
        int status = 0;
        pid_t pid;

        snprintf(out, sizeof(out), "%s/run.out", tmpdir);
        snprintf(err, sizeof(err), "%s/run.err", tmpdir);
        pid = itest_fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                int o = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
                int e = open(err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

                if (o < 0 || e < 0)
                        _exit(126);
                dup2(o, STDOUT_FILENO);
                dup2(e, STDERR_FILENO);
                execvp(argv[0], (char **) argv);
                fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
                _exit(127);
        }
        for (int waited = 0;; waited += 10) {
                if (waitpid(pid, &status, WNOHANG) == pid)
                        break;
                if (waited >= timeout_ms) {
                        kill(pid, SIGKILL);
                        waitpid(pid, &status, 0);
                        fail_msg("%s did not finish in %d ms", argv[0], timeout_ms);
                }
                usleep(10000);
        }
        *ret_out = read_file(out);
        *ret_err = read_file(err);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static const char *evmonctl(void) {
        static char p[512];
        return itest_build_path("evmonctl", p, sizeof(p));
}

static const char *fixture(const char *name) {
        static char p[4][512];
        static int i;
        const char *root = getenv("EVMON_SOURCE_ROOT");

        i = (i + 1) % 4;
        snprintf(p[i], sizeof(p[i]), "%s/tests/monitor/fixtures/perfdata/%s", root ? root : ".", name);
        return p[i];
}

/* Splits TEXT into parsed lines; fails on a line that is not JSON. */
static json_object **parse_lines(const char *text, size_t *ret_n) {
        json_object **v = NULL;
        size_t n = 0;

        for (const char *p = text; *p;) {
                const char *nl = strchr(p, '\n');
                char *line;
                json_object *o;

                assert_non_null(nl);    /* every line ends in \n */
                line = strndup(p, (size_t) (nl - p));
                o = json_tokener_parse(line);
                if (!o)
                        fail_msg("not a JSON line: %s", line);
                free(line);
                v = realloc(v, (n + 1) * sizeof(*v));
                assert_non_null(v);
                v[n++] = o;
                p = nl + 1;
        }
        *ret_n = n;
        return v;
}

static void put_lines(json_object **v, size_t n) {
        for (size_t i = 0; i < n; i++)
                json_object_put(v[i]);
        free(v);
}

static void assert_event_keys(json_object *o) {
        size_t i = 0;

        json_object_object_foreach(o, key, val) {
                /* The thread's comm, as perf script names it, where the
                 * file's COMM records gave one: where evmond's context
                 * puts "proc". */
                if (i == 7 && strcmp(key, "proc") == 0) {
                        json_object *comm;

                        assert_true(json_object_object_get_ex(val, "comm", &comm));
                        assert_true(json_object_is_type(comm, json_type_string));
                        assert_int_equal(json_object_object_length(val), 1);
                        continue;
                }
                if (!event_keys[i] || strcmp(key, event_keys[i]) != 0)
                        fail_msg("event line key %zu is \"%s\", the daemon writes \"%s\": %s", i, key,
                                 event_keys[i] ? event_keys[i] : "(none)", json_object_to_json_string(o));
                i++;
        }
        assert_true(i >= 8);
}

/* "2026-11-21T10:23:00.123456789Z" as ns since the epoch. */
static int64_t parse_time(const char *s) {
        struct tm tm = {};
        const char *p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
        int64_t ns = 0;
        int digits = 0;

        assert_non_null(p);
        assert_int_equal(*p, '.');
        for (p++; *p >= '0' && *p <= '9'; p++, digits++)
                ns = ns * 10 + (*p - '0');
        assert_int_equal(digits, 9);
        assert_string_equal(p, "Z");
        return (int64_t) timegm(&tm) * 1000000000 + ns;
}

/* ---- the fixtures (any user) --------------------------------------------- */

static void test_fixture_lines(void **state) {
        static const char first[] =
                "{\"type\":\"event\",\"event\":\"sched:sched_process_exec\","
                "\"time\":\"2026-11-21T12:45:07.945618910Z\",\"ts\":3038457969,\"cpu\":0,"
                "\"pid\":102,\"tid\":102,\"proc\":{\"comm\":\"evmon-fx-worklo\"},\"fields\":{\"filename\":\"/usr/local/bin/evmon-fx-workload\","
                "\"pid\":102,\"old_pid\":102},\"sample\":{\"ip\":\"0xffffffffaab70d4b\",\"id\":7,\"period\":1}}\n";
        const char *argv[] = { evmonctl(), "decode", fixture("task.data"), NULL };
        char *out, *err;
        json_object **v;
        size_t n;

        assert_int_equal(run_capture(argv, 30000, &out, &err), 0);
        assert_string_equal(err, "");
        /* The header line, then the samples. */
        assert_true(strncmp(out, "{\"type\":\"header\",", 17) == 0);
        assert_true(strncmp(strchr(out, '\n') + 1, first, strlen(first)) == 0);
        v = parse_lines(out, &n);
        assert_int_equal(n, 8);
        assert_string_equal(itest_str(v[0], "type"), "header");
        assert_string_equal(itest_str(v[0], "byte_order"), "little");
        for (size_t i = 1; i < n; i++) {
                assert_event_keys(v[i]);
                assert_int_equal(itest_int(v[i], "pid"), 102);
        }
        assert_string_equal(itest_str(v[2], "event"), "syscalls:sys_enter_getppid");
        assert_string_equal(itest_str(v[7], "event"), "sched:sched_process_exec");
        put_lines(v, n);
        free(out);
        free(err);
}

/* Without clock data "time" is ts from the epoch, and stderr says so. */
static void test_fixture_no_clock(void **state) {
        const char *argv[] = { evmonctl(), "decode", fixture("single.data"), NULL };
        char *out, *err;
        json_object **v;
        size_t n;

        assert_int_equal(run_capture(argv, 30000, &out, &err), 0);
        assert_non_null(strstr(err, "no clock reference"));
        v = parse_lines(out, &n);
        assert_int_equal(n, 6);
        assert_string_equal(itest_str(v[0], "type"), "header");
        assert_string_equal(itest_str(v[1], "time"), "1970-01-01T00:00:04.637887867Z");
        assert_int_equal(itest_int(v[1], "ts"), 4637887867);
        for (size_t i = 1; i < n; i++) {
                json_object *fields;

                assert_event_keys(v[i]);
                assert_string_equal(itest_str(v[i], "event"), "syscalls:sys_enter_getppid");
                assert_int_equal(parse_time(itest_str(v[i], "time")), itest_int(v[i], "ts"));
                assert_true(json_object_object_get_ex(v[i], "fields", &fields));
                assert_int_equal(itest_int(fields, "__syscall_nr"), 110);
        }
        put_lines(v, n);
        free(out);
        free(err);
}

/* --all: a line for every record of the file, every kernel record parsed. */
static void test_fixture_all(void **state) {
        const char *argv[] = { evmonctl(), "--all", "decode", fixture("sys.data"), NULL };
        size_t n, n_events = 0, n_records = 0, n_fork = 0, n_round = 0;
        char *out, *err;
        json_object **v;

        assert_int_equal(run_capture(argv, 30000, &out, &err), 0);
        v = parse_lines(out, &n);
        assert_int_equal(n, 1 + 199);   /* the header, and as many as perf report -D counts */
        assert_string_equal(itest_str(v[0], "type"), "header");
        for (size_t i = 1; i < n; i++) {
                const char *type = itest_str(v[i], "type");
                json_object *x;

                if (strcmp(type, "event") == 0) {
                        assert_event_keys(v[i]);
                        n_events++;
                        continue;
                }
                assert_string_equal(type, "record");
                n_records++;
                assert_false(json_object_object_get_ex(v[i], "unparsed", &x));
                assert_true(strcmp(itest_str(v[i], "record"), "unknown") != 0);
                if (strcmp(itest_str(v[i], "record"), "fork") == 0) {
                        assert_true(json_object_object_get_ex(v[i], "fields", &x));
                        assert_true(json_object_object_get_ex(x, "ppid", &x));
                        assert_true(json_object_object_get_ex(v[i], "ts", &x));
                        n_fork++;
                }
                if (strcmp(itest_str(v[i], "record"), "finished_round") == 0)
                        n_round++;
        }
        assert_int_equal(n_events, 7);
        assert_int_equal(n_records, 192);
        assert_int_equal(n_fork, 58);
        assert_int_equal(n_round, 2);
        put_lines(v, n);
        free(out);
        free(err);
}

static void write_file(const char *path, const void *p, size_t n) {
        FILE *f = fopen(path, "we");

        assert_non_null(f);
        assert_int_equal(fwrite(p, 1, n, f), n);
        assert_int_equal(fclose(f), 0);
}

static void expect_refused(const char *path, const char *message) {
        const char *argv[] = { evmonctl(), "decode", path, NULL };
        char *out, *err;

        assert_int_equal(run_capture(argv, 30000, &out, &err), 1);
        assert_string_equal(out, "");
        if (!strstr(err, message))
                fail_msg("evmonctl decode %s said \"%s\", expected \"%s\"", path, err, message);
        free(out);
        free(err);
}

static void test_fixture_refused(void **state) {
        char path[128], *whole, *out, *err;
        FILE *f = fopen(fixture("task.data"), "re");
        size_t n;
        const char *noarg[] = { evmonctl(), "decode", NULL };

        assert_non_null(f);
        whole = malloc(1 << 20);
        n = fread(whole, 1, 1 << 20, f);
        fclose(f);
        assert_true(n > 10000);

        /* Cut inside the header: nothing to read. */
        snprintf(path, sizeof(path), "%s/cut.data", tmpdir);
        write_file(path, whole, 100);
        expect_refused(path, "not a well-formed perf.data file");

        /* Cut inside the data: the records before the cut, then the
         * error naming where. */
        write_file(path, whole, 1000);
        {
                const char *argv[] = { evmonctl(), "decode", "--all", path, NULL };

                assert_int_equal(run_capture(argv, 30000, &out, &err), 1);
                assert_true(strlen(out) > 0);
                if (!strstr(err, "damaged or truncated data") || !strstr(err, "at byte"))
                        fail_msg("evmonctl decode of a cut file said \"%s\"", err);
                free(out);
                free(err);
        }

        expect_refused("/nonexistent/perf.data", "cannot read /nonexistent/perf.data");

        /* An empty file, and one that is no perf.data at all, are named
         * as such (both were "not a well-formed perf.data file (its
         * header or attrs are truncated or corrupt"). Cut in the magic
         * is a cut file still. */
        write_file(path, "", 0);
        expect_refused(path, "is empty: no perf.data file");
        write_file(path, "root:x:0:0:root:/root:/bin/bash\n", 32);
        expect_refused(path, "is not a perf.data file: it does not begin with perf's \"PERFILE2\"");
        write_file(path, whole, 4);
        expect_refused(path, "not a well-formed perf.data file");

        assert_int_equal(run_capture(noarg, 30000, &out, &err), 2);
        free(out);
        free(err);
        free(whole);
}

/* ---- the real kernel (root, perf) --------------------------------------- */

struct perf_run {
        pid_t pid;
        char data[128], log[128], ctl[128], ack[128];
        int ctl_fd, ack_fd;
};

/* perf record -a, events disabled (-D -1) until we say "enable" on its
 * control fifo and it acks: nothing of the workload is missed. */
static void perf_start(struct perf_run *p, const char *name, const char *const *extra) {
        const char *argv[32] = { "perf", "record", "-a", "-o", p->data, "-D", "-1", "--control", NULL };
        char control[300], ack[16] = "";
        size_t n = 8;
        struct pollfd pf;

        snprintf(p->data, sizeof(p->data), "%s/%s.data", tmpdir, name);
        snprintf(p->log, sizeof(p->log), "%s/%s.log", tmpdir, name);
        snprintf(p->ctl, sizeof(p->ctl), "%s/%s.ctl", tmpdir, name);
        snprintf(p->ack, sizeof(p->ack), "%s/%s.ack", tmpdir, name);
        assert_int_equal(mkfifo(p->ctl, 0600), 0);
        assert_int_equal(mkfifo(p->ack, 0600), 0);
        snprintf(control, sizeof(control), "fifo:%s,%s", p->ctl, p->ack);
        argv[n++] = control;
        for (; *extra; extra++)
                argv[n++] = *extra;
        argv[n] = NULL;

        p->pid = itest_fork();
        assert_true(p->pid >= 0);
        if (p->pid == 0) {
                int fd = open(p->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

                if (fd < 0)
                        _exit(126);
                dup2(fd, STDOUT_FILENO);
                dup2(fd, STDERR_FILENO);
                execvp(argv[0], (char **) argv);
                _exit(127);
        }
        /* O_RDWR: opening does not wait for perf to open its end. */
        p->ctl_fd = open(p->ctl, O_RDWR | O_CLOEXEC);
        p->ack_fd = open(p->ack, O_RDWR | O_CLOEXEC);
        assert_true(p->ctl_fd >= 0 && p->ack_fd >= 0);
        assert_int_equal(write(p->ctl_fd, "enable\n", 7), 7);
        pf = (struct pollfd) { .fd = p->ack_fd, .events = POLLIN };
        if (poll(&pf, 1, 60000) != 1 || read(p->ack_fd, ack, sizeof(ack) - 1) < 3 || strncmp(ack, "ack", 3) != 0) {
                char *log = read_file(p->log);
                kill(p->pid, SIGKILL);
                fail_msg("perf record did not ack 'enable' in 60 s: %s", log);
        }
}

static void perf_stop(struct perf_run *p) {
        int status = 0;
        char *log;

        kill(p->pid, SIGINT);
        for (int i = 0;; i++) {
                if (waitpid(p->pid, &status, WNOHANG) == p->pid)
                        break;
                if (i == 3000) {
                        kill(p->pid, SIGKILL);
                        waitpid(p->pid, &status, 0);
                        fail_msg("perf record did not stop in 30 s after SIGINT");
                }
                usleep(10000);
        }
        close(p->ctl_fd);
        close(p->ack_fd);
        log = read_file(p->log);
        if (!strstr(log, "Captured and wrote"))
                fail_msg("perf record (%s) wrote no file: status %d: %s", p->data, status, log);
        free(log);
}

/* An event of the workload: what we compare between decode and daemon. */
struct seen {
        json_object *o;
        int64_t tid, ts;
};

static int seen_cmp(const void *a, const void *b) {
        const struct seen *x = a, *y = b;

        return x->ts < y->ts ? -1 : x->ts > y->ts;
}

struct workload_events {
        struct seen *getppid, *exec;    /* the hits, sorted by time */
        size_t n_getppid, n_exec;
        size_t lines, unique;           /* getppid lines; distinct (tid, ts) among them */
        int64_t lost;
};

static bool seen_has(const struct seen *v, size_t n, const struct seen *s) {
        for (size_t k = 0; k < n; k++)
                if (v[k].tid == s->tid && v[k].ts == s->ts)
                        return true;
        return false;
}

/* The workload's events among LINES, sorted by time.
 *
 * Two lines of one tid with one ts are either one hit perf wrote twice
 * (perf 6.1 may write exact duplicate samples) or two hits on a clock that
 * did not move between them (perf's default clock in a VM whose TSC is
 * unstable repeats readings). They cannot be told apart: when the distinct
 * pairs make exactly N_GETPPID, those are the hits; else every line is. */
static struct workload_events pick(json_object **lines, size_t n, pid_t pid, const char *binary) {
        struct workload_events w = {};
        struct seen *all, *uniq;

        all = calloc(n + 1, sizeof(*all));
        uniq = calloc(n + 1, sizeof(*uniq));
        w.exec = calloc(n + 1, sizeof(*w.exec));
        assert_non_null(all);
        assert_non_null(uniq);
        assert_non_null(w.exec);
        for (size_t i = 0; i < n; i++) {
                json_object *o = lines[i], *fields, *f;
                const char *type = itest_str(o, "type"), *event;
                struct seen s;

                if (strcmp(type, "lost") == 0) {
                        w.lost += itest_int(o, "count");
                        continue;
                }
                if (strcmp(type, "event") != 0 || itest_int(o, "pid") != pid)
                        continue;
                assert_event_keys(o);
                event = itest_str(o, "event");
                s = (struct seen) { .o = o, .tid = itest_int(o, "tid"), .ts = itest_int(o, "ts") };
                assert_true(json_object_object_get_ex(o, "fields", &fields));
                if (strcmp(event, "syscalls:sys_enter_getppid") == 0) {
                        all[w.lines++] = s;
                        if (!seen_has(uniq, w.unique, &s))
                                uniq[w.unique++] = s;
                } else if (strcmp(event, "sched:sched_process_exec") == 0 &&
                           json_object_object_get_ex(fields, "filename", &f) &&
                           strcmp(json_object_get_string(f), binary) == 0 &&
                           !seen_has(w.exec, w.n_exec, &s))
                        w.exec[w.n_exec++] = s;
        }
        if (w.unique == N_GETPPID) {
                w.getppid = uniq;
                w.n_getppid = w.unique;
                free(all);
        } else {
                w.getppid = all;
                w.n_getppid = w.lines;
                free(uniq);
        }
        qsort(w.getppid, w.n_getppid, sizeof(*w.getppid), seen_cmp);
        qsort(w.exec, w.n_exec, sizeof(*w.exec), seen_cmp);
        return w;
}

static void workload_events_done(struct workload_events *w) {
        free(w->getppid);
        free(w->exec);
}

static void check_workload(const char *what, const struct workload_events *w, const char *binary) {
        json_object *fields;

        if (w->n_getppid != N_GETPPID || w->n_exec != 1)
                fail_msg("%s: %zu getppid lines (%zu distinct tid and ts; want %d) and %zu execs of %s "
                         "(want 1); %" PRId64 " lost", what, w->lines, w->unique, N_GETPPID, w->n_exec,
                         binary, w->lost);
        assert_true(json_object_object_get_ex(w->exec[0].o, "fields", &fields));
        assert_int_equal(itest_int(fields, "pid"), itest_int(w->exec[0].o, "pid"));
        assert_int_equal(itest_int(fields, "old_pid"), itest_int(w->exec[0].o, "pid"));
        /* The calls come before the exec. */
        assert_true(w->getppid[N_GETPPID - 1].ts < w->exec[0].ts);
        if (w->lines != w->unique)
                printf("# %s: %zu getppid lines, %zu distinct (tid, ts)\n", what, w->lines, w->unique);
}

/* Decode's line and the daemon's for the same tracepoint hit: the same in
 * everything but the clock readings, which each perf event takes itself.
 * Returns how far apart those are (ns). */
static int64_t check_same_event(json_object *dec, json_object *dmn) {
        static const char *const same[] = { "type", "event", "cpu", "pid", "tid" };
        json_object *a, *b;
        int64_t dts = itest_int(dec, "ts") - itest_int(dmn, "ts");
        int64_t doffset = (parse_time(itest_str(dec, "time")) - itest_int(dec, "ts")) -
                          (parse_time(itest_str(dmn, "time")) - itest_int(dmn, "ts"));

        for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
                assert_true(json_object_object_get_ex(dec, same[i], &a));
                assert_true(json_object_object_get_ex(dmn, same[i], &b));
                if (!json_object_equal(a, b))
                        fail_msg("\"%s\" differs:\n decode: %s\n evmond: %s", same[i],
                                 json_object_to_json_string(dec), json_object_to_json_string(dmn));
        }
        assert_true(json_object_object_get_ex(dec, "fields", &a));
        assert_true(json_object_object_get_ex(dmn, "fields", &b));
        if (!json_object_equal(a, b))
                fail_msg("fields differ:\n decode: %s\n evmond: %s", json_object_to_json_string(dec),
                         json_object_to_json_string(dmn));
        /* Wall clock from ts: perf's clock reference (HEADER_CLOCK_DATA)
         * and evmond's offset are two readings of one relation. */
        if (llabs(doffset) > 50000000)
                fail_msg("time - ts differs by %" PRId64 " ns:\n decode: %s\n evmond: %s", doffset,
                         json_object_to_json_string(dec), json_object_to_json_string(dmn));
        return dts;
}

static void test_record_and_decode(void **state) {
        /* Context off: the lines compared are the encoder's, which evmond
         * and evmonctl decode share; decode has no process table to add
         * "proc" and "cgroup" from. */
        static const char config[] =
                "{\n"
                "  \"context\": false,\n"
                "  \"ring\": {\"pages\": 256},\n"
                "  \"clients\": {\"queue_kib\": 8192},\n"
                "  \"events\": [\n"
                "    {\"tracepoint\": \"sched:sched_process_exec\"},\n"
                "    {\"tracepoint\": \"syscalls:sys_enter_getppid\"}\n"
                "  ]\n"
                "}\n";
        static struct itest_daemon d;
        static struct itest_client c;
        char binary[256], filter[64], self[512], sub[128], gate_byte = 1;
        struct perf_run plain = {}, mono = {};
        struct workload_events wp, wm, wd;
        json_object **lp, **lm, **ld, *o;
        size_t np, nm, nd, dlen, far = 0;
        char *out, *err, *dtext;
        int gate[2], status;
        ssize_t len;
        pid_t w;

        /* A copy of this program under a name of this run's own: its exec
         * is ours alone, and it exits 0 at once ("exit0"). */
        len = readlink("/proc/self/exe", self, sizeof(self) - 1);
        assert_true(len > 0);
        self[len] = 0;
        snprintf(binary, sizeof(binary), "%s/evmon-decode-%d-%ld", tmpdir, getpid(), random() % 100000);
        {
                const char *cp[] = { "cp", self, binary, NULL };
                assert_int_equal(run_capture(cp, 30000, &out, &err), 0);
                free(out);
                free(err);
        }

        assert_int_equal(itest_daemon_start(&d, config), 0);
        assert_int_equal(itest_client_connect(&c, d.socket), 0);
        o = itest_client_expect(&c, "hello", 5000);
        assert_non_null(o);
        json_object_put(o);

        /* The workload waits on a pipe until everyone watches. */
        assert_int_equal(pipe2(gate, O_CLOEXEC), 0);
        w = fork();
        assert_true(w >= 0);
        if (w == 0) {
                char b;

                close(gate[1]);
                if (read(gate[0], &b, 1) != 1)
                        _exit(3);
                for (int i = 0; i < N_GETPPID; i++)
                        syscall(SYS_getppid);
                execl(binary, binary, "exit0", (char *) NULL);
                _exit(127);
        }
        close(gate[0]);

        snprintf(sub, sizeof(sub), "{\"type\":\"subscribe\",\"pids\":[%d]}\n", (int) w);
        assert_int_equal(itest_client_send(&c, sub), 0);
        o = itest_client_expect(&c, "subscribed", 5000);
        assert_non_null(o);
        json_object_put(o);

        /* The command of the README; and with -k mono (a clock reference,
         * the daemon's clock), getppid filtered to the workload so a busy
         * machine cannot make it lose ours. */
        snprintf(filter, sizeof(filter), "common_pid == %d", (int) w);
        perf_start(&plain, "plain", (const char *const[]) {
                "-m", "512", "-e", "sched:sched_process_exec", "-e", "syscalls:sys_enter_getppid", NULL });
        perf_start(&mono, "mono", (const char *const[]) {
                "-k", "mono", "-e", "sched:sched_process_exec",
                "-e", "syscalls:sys_enter_getppid", "--filter", filter, NULL });
        usleep(200000);

        assert_int_equal(write(gate[1], &gate_byte, 1), 1);
        close(gate[1]);
        assert_int_equal(waitpid(w, &status, 0), w);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        usleep(300000);
        perf_stop(&plain);
        perf_stop(&mono);

        dtext = itest_client_slurp(&c, 1000, 15000, &dlen);
        assert_non_null(dtext);
        ld = parse_lines(dtext, &nd);

        {
                const char *argv[] = { evmonctl(), "decode", plain.data, NULL };
                assert_int_equal(run_capture(argv, 60000, &out, &err), 0);
                assert_non_null(strstr(err, "no clock reference"));
                lp = parse_lines(out, &np);
                free(out);
                free(err);
        }
        {
                const char *argv[] = { evmonctl(), "decode", mono.data, NULL };
                assert_int_equal(run_capture(argv, 60000, &out, &err), 0);
                assert_null(strstr(err, "no clock reference"));
                lm = parse_lines(out, &nm);
                free(out);
                free(err);
        }

        wp = pick(lp, np, w, binary);
        wm = pick(lm, nm, w, binary);
        wd = pick(ld, nd, w, binary);
        check_workload("decode of perf record -a", &wp, binary);
        check_workload("decode of perf record -a -k mono", &wm, binary);
        check_workload("evmond", &wd, binary);

        /* No clock reference: "time" is "ts" from the epoch. */
        for (size_t i = 0; i < wp.n_getppid; i++)
                assert_int_equal(parse_time(itest_str(wp.getppid[i].o, "time")), wp.getppid[i].ts);

        /* With one: the daemon's lines, hit for hit. Both perf events
         * read CLOCK_MONOTONIC for the same hit, one handler after the
         * other: close, but an interrupt (or, in a VM, the host) may come
         * between; another clock would be off for every hit. */
        for (size_t i = 0; i <= N_GETPPID; i++) {
                int64_t dts = i < N_GETPPID ? check_same_event(wm.getppid[i].o, wd.getppid[i].o)
                                            : check_same_event(wm.exec[0].o, wd.exec[0].o);

                if (llabs(dts) > 100000000)
                        fail_msg("hit %zu: ts %" PRId64 " ns apart between decode and evmond", i, dts);
                if (llabs(dts) > 1000000)
                        far++;
        }
        if (far > N_GETPPID / 10)
                fail_msg("%zu of %d hits have ts more than 1 ms apart between decode and evmond", far, N_GETPPID + 1);
        /* Same as the plain recording, but for the clock readings. */
        for (size_t i = 0; i < N_GETPPID; i++) {
                json_object *a, *b;
                assert_true(json_object_object_get_ex(wp.getppid[i].o, "fields", &a));
                assert_true(json_object_object_get_ex(wm.getppid[i].o, "fields", &b));
                assert_true(json_object_equal(a, b));
                assert_int_equal(itest_int(wp.getppid[i].o, "tid"), itest_int(wm.getppid[i].o, "tid"));
        }

        workload_events_done(&wp);
        workload_events_done(&wm);
        workload_events_done(&wd);
        put_lines(lp, np);
        put_lines(lm, nm);
        put_lines(ld, nd);
        free(dtext);
        itest_client_close(&c);
        assert_int_equal(itest_daemon_stop(&d), 0);
        itest_daemon_cleanup(&d);
        unlink(binary);
        unlink(plain.data);
        unlink(mono.data);
}

/* ---- main ----------------------------------------------------------------- */

static int cleanup_dir(void) {
        char cmd[128];

        if (!tmpdir[0])
                return 0;
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
        return system(cmd) == 0 ? 0 : -1;
}

static void require_perf(void) {
        const char *argv[] = { "perf", "--version", NULL };
        char *out = NULL;
        int r = itest_run(argv, 30000, &out);

        if (r != 0) {
                printf("SKIP: no working perf binary (`perf --version` gave %d: %s); "
                       "apt-get install linux-perf\n", r, out ? out : "");
                free(out);
                exit(ITEST_SKIP);
        }
        free(out);
}

int main(int argc, char **argv) {
        static const char *const events[] = { "sched/sched_process_exec", "syscalls/sys_enter_getppid", NULL };
        const struct CMUnitTest fixture_tests[] = {
                cmocka_unit_test(test_fixture_lines),
                cmocka_unit_test(test_fixture_no_clock),
                cmocka_unit_test(test_fixture_all),
                cmocka_unit_test(test_fixture_refused),
        };
        const struct CMUnitTest kernel_tests[] = {
                cmocka_unit_test(test_record_and_decode),
        };
        int r;

        /* The workload's exec of a copy of us. */
        if (argc > 1 && strcmp(argv[1], "exit0") == 0)
                return 0;

        bool fixtures = argc > 1 && strcmp(argv[1], "fixture") == 0;

        if (!fixtures) {
                itest_require(events);
                require_perf();
        }
        srandom((unsigned) time(NULL) ^ (unsigned) getpid());
        snprintf(tmpdir, sizeof(tmpdir), "/tmp/evmon-test-decode-XXXXXX");
        if (!mkdtemp(tmpdir)) {
                perror("mkdtemp");
                return 1;
        }
        if (fixtures)
                r = cmocka_run_group_tests_name("decode fixtures", fixture_tests, NULL, NULL);
        else
                r = cmocka_run_group_tests_name("decode perf record", kernel_tests, NULL, NULL);
        if (r == 0)
                cleanup_dir();
        else
                printf("# kept %s (perf.data files, logs) for a look\n", tmpdir);
        return r;
}
