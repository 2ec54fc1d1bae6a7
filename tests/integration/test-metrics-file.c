/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The metrics file on the real kernel: evmond with metrics.path in a
 * directory that does not exist yet says so once (not every interval),
 * writes the file once the directory is there, in Prometheus' text format,
 * with the exact count of an event only this test makes, the client it
 * serves, the reload it did, an event it disabled and the process table's
 * size; it leaves no temporary file behind, and
 * removes the file when it stops. metrics.path "" writes nothing, and a
 * relative path is a config error naming metrics.path. */

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <regex.h>
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
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "itest.h"

#define GETPGID "syscalls:sys_enter_getpgid"
/* getpgid(77015) calls: nobody else makes them, and the kernel filters
 * the rest of the host's out, so the count is exact. */
#define ARG_PGID 77015
#define N_CALLS 500

static struct itest_daemon daemon_ = { .pid = -1 };
static char dir[96], prom[128];

static int teardown(void **state) {
        itest_daemon_cleanup(&daemon_);
        if (dir[0]) {
                (void) unlink(prom);
                (void) rmdir(dir);
        }
        return 0;
}

static char *read_file(const char *path) {
        FILE *f = fopen(path, "re");
        char *text = NULL;
        size_t size = 0;

        if (!f)
                return NULL;
        if (getdelim(&text, &size, '\0', f) < 0) {
                free(text);
                text = strdup("");
        }
        fclose(f);
        return text;
}

/* The value of the sample SERIES ("name" or "name{labels}") in TEXT, or
 * -1 when it is not there. */
static int64_t sample(const char *text, const char *series) {
        size_t n = strlen(series);

        for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
                if (strncmp(p, series, n) == 0 && p[n] == ' ')
                        return strtoll(p + n + 1, NULL, 10);
        return -1;
}

/* Waits up to TIMEOUT_MS for SERIES to reach WANT in the file. */
static int64_t wait_sample(const char *series, int64_t want, int timeout_ms) {
        int64_t v = -1;

        for (int waited = 0; waited <= timeout_ms; waited += 100) {
                char *text = read_file(prom);

                v = text ? sample(text, series) : -1;
                free(text);
                if (v == want)
                        break;
                usleep(100000);
        }
        return v;
}

static unsigned count_in_log(const char *what) {
        char *log = read_file(daemon_.log);
        unsigned n = 0;

        for (const char *p = log; p && (p = strstr(p, what)); p++)
                n++;
        free(log);
        return n;
}

/* Every line is a HELP or TYPE comment or a sample "name{labels} value";
 * each sample's family has both comments before it; counters end in _total
 * (https://prometheus.io/docs/instrumenting/exposition_formats/). */
static void check_format(const char *text) {
        regex_t sample_re, comment_re;
        regmatch_t m[3];
        char types[4096] = " ";

        assert_int_equal(regcomp(&sample_re, "^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{[a-z_]+=\"[^\"]*\"(,[a-z_]+=\"[^\"]*\")*\\})? [0-9.]+$",
                                 REG_EXTENDED), 0);
        assert_int_equal(regcomp(&comment_re, "^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.+)$", REG_EXTENDED), 0);
        for (const char *p = text; *p;) {
                const char *nl = strchr(p, '\n');
                char line[1024], name[256];

                assert_non_null(nl);
                assert_true((size_t) (nl - p) < sizeof(line));
                memcpy(line, p, (size_t) (nl - p));
                line[nl - p] = '\0';
                if (line[0] == '#') {
                        assert_int_equal(regexec(&comment_re, line, 3, m, 0), 0);
                        if (strncmp(line, "# TYPE ", 7) == 0) {
                                const char *type = strrchr(line, ' ') + 1;
                                snprintf(name, sizeof(name), "%.*s", (int) (m[2].rm_eo - m[2].rm_so), line + m[2].rm_so);
                                if (strcmp(type, "counter") == 0)
                                        assert_non_null(strstr(name, "_total"));
                                else
                                        assert_string_equal(type, "gauge");
                                strncat(types, name, sizeof(types) - strlen(types) - 2);
                                strcat(types, " ");
                        }
                } else {
                        if (regexec(&sample_re, line, 2, m, 0) != 0)
                                fail_msg("not a Prometheus sample line: \"%s\"", line);
                        snprintf(name, sizeof(name), " %.*s ", (int) (m[1].rm_eo - m[1].rm_so), line + m[1].rm_so);
                        if (!strstr(types, name))
                                fail_msg("sample \"%s\" comes before its # TYPE line", line);
                }
                p = nl + 1;
        }
        regfree(&sample_re);
        regfree(&comment_re);
}

static void test_metrics_file(void **state) {
        char config[1024], series[256];
        struct itest_client c;
        struct itest_daemon_opts opts = { .log_to_file = true };
        char *text = NULL;
        DIR *dh;
        struct dirent *de;
        unsigned files = 0;

        snprintf(dir, sizeof(dir), "/tmp/evmon-metrics-%d", (int) getpid());
        snprintf(prom, sizeof(prom), "%s/evmon.prom", dir);
        (void) rmdir(dir);
        snprintf(config, sizeof(config),
                 "{\"metrics\": {\"path\": \"%s\", \"interval_ms\": 1000},\n"
                 " \"counters\": {\"interval_ms\": 200},\n"
                 " \"events\": [{\"tracepoint\": \"" GETPGID "\", \"filter\": \"pid == %d\"},\n"
                 "            {\"software\": \"task-clock\", \"count\": true}]}\n",
                 prom, ARG_PGID);
        assert_int_equal(itest_daemon_start_opts(&daemon_, config, &opts), 0);

        /* No directory: one line saying so, and no more over several
         * intervals. */
        for (int waited = 0; count_in_log("Not writing metrics to") == 0 && waited < 10000; waited += 100)
                usleep(100000);
        sleep(3);
        assert_int_equal(access(prom, F_OK), -1);
        if (count_in_log("Not writing metrics to") != 1) {
                char *log = read_file(daemon_.log);
                fail_msg("expected one \"Not writing metrics to\" line, evmond said:\n%s", log ?: "(no log)");
        }

        assert_int_equal(mkdir(dir, 0755), 0);
        for (int i = 0; i < N_CALLS; i++)
                (void) syscall(SYS_getpgid, ARG_PGID);
        assert_int_equal(itest_client_connect(&c, daemon_.socket), 0);
        json_object_put(itest_client_expect(&c, "hello", 5000));
        /* It names itself: its series is by uid and that name. */
        assert_int_equal(itest_client_send(&c, "{\"type\":\"subscribe\",\"events\":[],\"client\":\"metrics test\"}\n"), 0);
        json_object_put(itest_client_expect(&c, "subscribed", 5000));

        snprintf(series, sizeof(series), "evmon_events_total{event=\"%s\"}", GETPGID);
        assert_int_equal(wait_sample(series, N_CALLS, 5000), N_CALLS);
        assert_int_equal(wait_sample("evmon_clients", 1, 3000), 1);
        snprintf(series, sizeof(series), "evmon_client_connections{client=\"metrics_test\",uid=\"%u\"}",
                 (unsigned) getuid());
        assert_int_equal(wait_sample(series, 1, 3000), 1);
        assert_int_equal(count_in_log("Writing metrics to"), 1);
        snprintf(series, sizeof(series), "evmon_event_enabled{event=\"%s\",kind=\"tracepoint\"}", GETPGID);
        text = read_file(prom);
        assert_non_null(text);
        assert_int_equal(sample(text, series), 1);
        assert_int_equal(sample(text, "evmon_reloads_total"), 0);
        assert_int_equal(sample(text, "evmon_lost_total{cpu=\"0\"}"), 0);
        assert_true(sample(text, "evmon_start_time_seconds") > 1700000000);
        /* "context" is on by default: the table is seeded from /proc. */
        assert_true(sample(text, "evmon_process_table_entries") > 1);
        /* "order" is "time" by default: its late lines are counted
         * (how many is the kernel's doing; test-order asserts none). */
        assert_true(sample(text, "evmon_order_late_total") >= 0);
        /* A counting event's value, as its counter lines say it: task-clock
         * on each CPU counts the ns tasks ran there, > 0 after a few
         * counters intervals of 200 ms. */
        assert_true(sample(text, "evmon_counter_value{event=\"software:task-clock\"}") > 0);
        assert_true(sample(text, "evmon_counter_scaled{event=\"software:task-clock\"}") > 0);
        assert_true(strstr(text, "\nevmon_counter_enabled_seconds{event=\"software:task-clock\"} ") != NULL);
        assert_true(strstr(text, "\nevmon_counter_running_seconds{event=\"software:task-clock\"} ") != NULL);
        check_format(text);
        free(text);

        /* A reload counts. */
        assert_int_equal(kill(daemon_.pid, SIGHUP), 0);
        assert_int_equal(wait_sample("evmon_reloads_total", 1, 5000), 1);
        /* An event disabled at run time shows as 0. */
        assert_int_equal(itest_client_send(&c, "{\"type\":\"disable\",\"events\":[\"" GETPGID "\"]}\n"), 0);
        json_object_put(itest_client_expect(&c, "result", 5000));
        assert_int_equal(wait_sample(series, 0, 5000), 0);
        itest_client_close(&c);
        assert_int_equal(wait_sample("evmon_clients", 0, 5000), 0);
        /* Its series stays, with no connection (not one per pid). */
        snprintf(series, sizeof(series), "evmon_client_connections{client=\"metrics_test\",uid=\"%u\"}",
                 (unsigned) getuid());
        assert_int_equal(wait_sample(series, 0, 5000), 0);

        /* Written by rename: no temporary file stays beside it. */
        dh = opendir(dir);
        assert_non_null(dh);
        while ((de = readdir(dh)))
                if (de->d_name[0] != '.') {
                        assert_string_equal(de->d_name, "evmon.prom");
                        files++;
                }
        closedir(dh);
        assert_int_equal(files, 1);

        assert_int_equal(itest_daemon_stop(&daemon_), 0);
        assert_int_equal(access(prom, F_OK), -1);
        assert_int_equal(errno, ENOENT);
        itest_daemon_cleanup(&daemon_);
}

static void test_metrics_off(void **state) {
        char config[512];
        struct itest_daemon_opts opts = { .log_to_file = true };

        snprintf(dir, sizeof(dir), "/tmp/evmon-metrics-%d", (int) getpid());
        snprintf(prom, sizeof(prom), "%s/evmon.prom", dir);
        assert_true(mkdir(dir, 0755) == 0 || errno == EEXIST);
        snprintf(config, sizeof(config),
                 "{\"metrics\": {\"path\": \"\", \"interval_ms\": 1000},\n"
                 " \"events\": [{\"tracepoint\": \"" GETPGID "\", \"filter\": \"pid == %d\"}]}\n", ARG_PGID);
        assert_int_equal(itest_daemon_start_opts(&daemon_, config, &opts), 0);
        sleep(2);
        assert_int_equal(count_in_log("metrics"), 0);
        assert_int_equal(itest_daemon_stop(&daemon_), 0);
        assert_int_equal(access(prom, F_OK), -1);
        itest_daemon_cleanup(&daemon_);
}

static void test_metrics_bad_path(void **state) {
        char evmond[512], cfg[] = "/tmp/evmon-metrics-bad-XXXXXX";
        const char *argv[] = { itest_build_path("evmond", evmond, sizeof(evmond)), "--check-config", "--config", cfg, NULL };
        char *out = NULL;
        int fd = mkstemp(cfg);
        const char *text = "{\"events\": [{\"tracepoint\": \"" GETPGID "\"}],\n"
                           " \"metrics\": {\"path\": \"evmon.prom\"}}\n";

        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        close(fd);
        assert_int_equal(itest_run(argv, 10000, &out), 2);
        unlink(cfg);
        if (!strstr(out, ":2: metrics.path") || !strstr(out, "absolute"))
                fail_msg("expected the file, line 2 and metrics.path in: %s", out);
        free(out);
}

int main(void) {
        static const char *const need[] = { "syscalls/sys_enter_getpgid", NULL };
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_teardown(test_metrics_file, teardown),
                cmocka_unit_test_teardown(test_metrics_off, teardown),
                cmocka_unit_test(test_metrics_bad_path),
        };

        itest_require(need);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
