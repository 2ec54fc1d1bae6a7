/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* metrics.c: the Prometheus text evmond writes, byte for byte, and the
 * atomic replacement of the file. */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "metrics.h"
#include "evmon/cleanup.h"

static void test_format(void **state) {
        const struct metrics_event events[] = {
                { .name = "sched:sched_process_exec", .kind = "tracepoint", .count = 42, .undecodable = 1, .enabled = true,
                  .symbol_missing = -1 },
                { .name = "kprobe:open", .kind = "kprobe", .count = 0, .undecodable = 0, .enabled = false,
                  .symbol_missing = -1 },
                { .name = "uprobe:target", .kind = "uprobe", .count = 3, .undecodable = 0, .enabled = true,
                  .symbol_missing = 1, .follow_refused = 3, .follow_detached = 2 },
                { .name = "cycles", .kind = "hardware", .enabled = true, .symbol_missing = -1, .counting = true,
                  .counter_value = 1000, .counter_scaled = 2000, .counter_enabled_ns = 4000000000ull,
                  .counter_running_ns = 2000000001ull },
        };
        const struct metrics_cpu cpus[] = { { .cpu = 0, .lost = 7, .malformed = 0 },
                                            { .cpu = 3, .lost = 0, .malformed = 2, .offline = true, .gaps = 4 } };
        const struct metrics_client clients[] = { { .name = "uid-1000", .uid = 1000, .connected = 1, .dropped = 99 },
                                                  { .name = "a\"b", .uid = 0, .connected = 0, .dropped = 3 } };
        const struct metrics m = {
                .events = events, .n_events = 4,
                .cpus = cpus, .n_cpus = 2,
                .n_clients = 1, .client_series = clients, .n_client_series = 2,
                .dropped_total = 120, .reloads = 3, .reload_failures = 1,
                .start_time_usec = 1763900000123456ull,
                .process_table = -1, .order_late = -1, .closing_fds = 6,
        };
        static const char expected[] =
                "# HELP evmon_events_total Samples received, per event.\n"
                "# TYPE evmon_events_total counter\n"
                "evmon_events_total{event=\"sched:sched_process_exec\"} 42\n"
                "evmon_events_total{event=\"kprobe:open\"} 0\n"
                "evmon_events_total{event=\"uprobe:target\"} 3\n"
                "evmon_events_total{event=\"cycles\"} 0\n"
                "# HELP evmon_undecodable_total Samples that did not decode, per event.\n"
                "# TYPE evmon_undecodable_total counter\n"
                "evmon_undecodable_total{event=\"sched:sched_process_exec\"} 1\n"
                "evmon_undecodable_total{event=\"kprobe:open\"} 0\n"
                "evmon_undecodable_total{event=\"uprobe:target\"} 0\n"
                "evmon_undecodable_total{event=\"cycles\"} 0\n"
                "# HELP evmon_event_enabled 1 for an event served with its perf fds enabled, 0 for one open but disabled.\n"
                "# TYPE evmon_event_enabled gauge\n"
                "evmon_event_enabled{event=\"sched:sched_process_exec\",kind=\"tracepoint\"} 1\n"
                "evmon_event_enabled{event=\"kprobe:open\",kind=\"kprobe\"} 0\n"
                "evmon_event_enabled{event=\"uprobe:target\",kind=\"uprobe\"} 1\n"
                "evmon_event_enabled{event=\"cycles\",kind=\"hardware\"} 1\n"
                "# HELP evmon_counter_value A counting event's value at its last counter line, as the kernel counted it (not scaled).\n"
                "# TYPE evmon_counter_value gauge\n"
                "evmon_counter_value{event=\"cycles\"} 1000\n"
                "# HELP evmon_counter_scaled The same value scaled by enabled/running time (perf stat's estimate when multiplexed).\n"
                "# TYPE evmon_counter_scaled gauge\n"
                "evmon_counter_scaled{event=\"cycles\"} 2000\n"
                "# HELP evmon_counter_enabled_seconds Time the counting event was enabled.\n"
                "# TYPE evmon_counter_enabled_seconds gauge\n"
                "evmon_counter_enabled_seconds{event=\"cycles\"} 4.000000000\n"
                "# HELP evmon_counter_running_seconds Time it ran on a PMU (less than enabled when multiplexed).\n"
                "# TYPE evmon_counter_running_seconds gauge\n"
                "evmon_counter_running_seconds{event=\"cycles\"} 2.000000001\n"
                "# HELP evmon_probe_symbol_missing 1 while the file at a followed uprobe's path (replaced since) lacks its symbol, else 0.\n"
                "# TYPE evmon_probe_symbol_missing gauge\n"
                "evmon_probe_symbol_missing{event=\"uprobe:target\"} 1\n"
                "# HELP evmon_probe_follow_refused_total Files found at a followed uprobe's path and not probed: not a regular file (a link, a FIFO), owned by neither root nor the configured file's owner, or past the limit of files probed.\n"
                "# TYPE evmon_probe_follow_refused_total counter\n"
                "evmon_probe_follow_refused_total{event=\"uprobe:target\"} 3\n"
                "# HELP evmon_probe_follow_detached_total Files a followed uprobe was taken out of because more than 16 were probed at once.\n"
                "# TYPE evmon_probe_follow_detached_total counter\n"
                "evmon_probe_follow_detached_total{event=\"uprobe:target\"} 2\n"
                "# HELP evmon_lost_total Records the kernel could not write to the CPU's ring.\n"
                "# TYPE evmon_lost_total counter\n"
                "evmon_lost_total{cpu=\"0\"} 7\n"
                "evmon_lost_total{cpu=\"3\"} 0\n"
                "# HELP evmon_malformed_records_total Records of the CPU's ring rejected as malformed.\n"
                "# TYPE evmon_malformed_records_total counter\n"
                "evmon_malformed_records_total{cpu=\"0\"} 0\n"
                "evmon_malformed_records_total{cpu=\"3\"} 2\n"
                "# HELP evmon_cpu_offline 1 while the CPU is offline and its events are closed.\n"
                "# TYPE evmon_cpu_offline gauge\n"
                "evmon_cpu_offline{cpu=\"0\"} 0\n"
                "evmon_cpu_offline{cpu=\"3\"} 1\n"
                "# HELP evmon_cpu_gaps_total Times the CPU's events were opened again after it was offline (gap lines).\n"
                "# TYPE evmon_cpu_gaps_total counter\n"
                "evmon_cpu_gaps_total{cpu=\"0\"} 0\n"
                "evmon_cpu_gaps_total{cpu=\"3\"} 4\n"
                "# HELP evmon_clients Clients connected.\n"
                "# TYPE evmon_clients gauge\n"
                "evmon_clients 1\n"
                "# HELP evmon_client_connections Clients connected, per uid and client name (subscribe's \"client\", else uid-N).\n"
                "# TYPE evmon_client_connections gauge\n"
                "evmon_client_connections{client=\"uid-1000\",uid=\"1000\"} 1\n"
                "evmon_client_connections{client=\"a\\\"b\",uid=\"0\"} 0\n"
                "# HELP evmon_client_dropped_total Lines dropped for clients that fell behind, per uid and client name, gone ones too.\n"
                "# TYPE evmon_client_dropped_total counter\n"
                "evmon_client_dropped_total{client=\"uid-1000\",uid=\"1000\"} 99\n"
                "evmon_client_dropped_total{client=\"a\\\"b\",uid=\"0\"} 3\n"
                "# HELP evmon_dropped_total Lines dropped for slow clients, all clients since start.\n"
                "# TYPE evmon_dropped_total counter\n"
                "evmon_dropped_total 120\n"
                "# HELP evmon_reloads_total Config reloads applied.\n"
                "# TYPE evmon_reloads_total counter\n"
                "evmon_reloads_total 3\n"
                "# HELP evmon_reload_failures_total Config reloads refused (the running config stayed).\n"
                "# TYPE evmon_reload_failures_total counter\n"
                "evmon_reload_failures_total 1\n"
                "# HELP evmon_closing_fds Perf fds of removed events that the worker thread has yet to close.\n"
                "# TYPE evmon_closing_fds gauge\n"
                "evmon_closing_fds 6\n"
                "# HELP evmon_start_time_seconds When evmond started, in seconds since 1970.\n"
                "# TYPE evmon_start_time_seconds gauge\n"
                "evmon_start_time_seconds 1763900000.123456\n";
        _cleanup_(freep) char *text = NULL;
        size_t size;

        assert_int_equal(metrics_format(&m, &text, &size), 0);
        assert_string_equal(text, expected);
        assert_int_equal(size, strlen(expected));
}

/* Label values escape \, " and line feed (and only those); a process
 * table, when there is one, is a gauge; nothing served is still a valid
 * file with every family declared. */
static void test_escape_and_empty(void **state) {
        const struct metrics_event events[] = {
                { .name = "uprobe:a\"b\\c\nd", .kind = "uprobe", .count = 1, .enabled = true },
        };
        struct metrics m = { .events = events, .n_events = 1, .process_table = 17, .order_late = 2,
                             .symbols = true, .sym_modules = 3, .sym_cache_bytes = 4096, .sym_helper_starts = 2,
                             .sym_helper_timeouts = 1, .sym_helper_crashes = 0, .containers = true,
                             .ctr_known = 5, .ctr_verified = 4, .ctr_unverified = 1, .ctr_refused = 2 };
        _cleanup_(freep) char *text = NULL, *empty = NULL;
        size_t size;

        assert_int_equal(metrics_format(&m, &text, &size), 0);
        assert_non_null(strstr(text, "evmon_events_total{event=\"uprobe:a\\\"b\\\\c\\nd\"} 1\n"));
        assert_non_null(strstr(text, "# TYPE evmon_process_table_entries gauge\nevmon_process_table_entries 17\n"));
        assert_non_null(strstr(text, "# TYPE evmon_order_late_total counter\nevmon_order_late_total 2\n"));
        /* The sandboxed symbolizer's cache and restarts (issue 26). */
        assert_non_null(strstr(text, "# TYPE evmon_symbols_cache_bytes gauge\nevmon_symbols_cache_bytes 4096\n"));
        assert_non_null(strstr(text, "\nevmon_symbols_modules 3\n"));
        assert_non_null(strstr(text, "# TYPE evmon_symbolizer_starts_total counter\nevmon_symbolizer_starts_total 2\n"));
        assert_non_null(strstr(text, "\nevmon_symbolizer_timeouts_total 1\n"));
        assert_non_null(strstr(text, "\nevmon_symbolizer_failures_total 0\n"));
        /* Containers by whether their runtime's state names them (issue 31). */
        assert_non_null(strstr(text, "# TYPE evmon_containers gauge\nevmon_containers{verified=\"true\"} 4\n"
                                     "evmon_containers{verified=\"false\"} 1\n"));
        assert_non_null(strstr(text, "\nevmon_container_state_refused_total 2\n"));

        m = (struct metrics) { .process_table = -1, .order_late = -1 };
        assert_int_equal(metrics_format(&m, &empty, &size), 0);
        assert_null(strstr(empty, "process_table"));
        assert_null(strstr(empty, "order_late"));
        assert_null(strstr(empty, "evmon_symbol"));
        assert_null(strstr(empty, "evmon_container"));
        assert_non_null(strstr(empty, "# TYPE evmon_events_total counter\n# HELP evmon_undecodable_total"));
        assert_non_null(strstr(empty, "\nevmon_clients 0\n"));
        assert_non_null(strstr(empty, "\nevmon_start_time_seconds 0.000000\n"));
        /* Every line is a comment or NAME[{...}] VALUE. */
        for (const char *l = empty; *l; l = strchr(l, '\n') + 1)
                assert_true(*l == '#' || strncmp(l, "evmon_", 6) == 0);
}

DEFINE_TRIVIAL_CLEANUP_FUNC(DIR *, closedir);

static size_t count_entries(const char *dir) {
        _cleanup_(closedirp) DIR *d = opendir(dir);
        struct dirent *de;
        size_t n = 0;

        assert_non_null(d);
        while ((de = readdir(d)))
                if (de->d_name[0] != '.')
                        n++;
        return n;
}

static void test_write_file(void **state) {
        char dir[] = "/tmp/evmon-test-metrics-XXXXXX";
        _cleanup_(freep) char *path = NULL, *missing = NULL;
        _cleanup_(fclosep) FILE *f = NULL;
        struct stat st1, st2;
        char buf[64] = "";
        mode_t old;

        assert_non_null(mkdtemp(dir));
        assert_true(asprintf(&path, "%s/evmon.prom", dir) >= 0);
        assert_true(asprintf(&missing, "%s/nosuchdir/evmon.prom", dir) >= 0);
        /* evmond.service runs with UMask=0077; node-exporter, as its own
         * user, must still read the file. */
        old = umask(0077);
        assert_int_equal(metrics_write_file(path, "a 1\n", 4), 0);
        assert_int_equal(stat(path, &st1), 0);
        assert_int_equal(st1.st_mode & 07777, 0644);
        /* Replaced by a rename: a new inode, never the old one rewritten. */
        assert_int_equal(metrics_write_file(path, "a 2\nb 3\n", 8), 0);
        assert_int_equal(stat(path, &st2), 0);
        assert_int_not_equal(st1.st_ino, st2.st_ino);
        assert_int_equal(st2.st_size, 8);
        umask(old);
        f = fopen(path, "re");
        assert_non_null(f);
        assert_int_equal(fread(buf, 1, sizeof(buf) - 1, f), 8);
        assert_string_equal(buf, "a 2\nb 3\n");
        /* No temporary file stays behind. */
        assert_int_equal(count_entries(dir), 1);
        assert_int_equal(metrics_write_file(missing, "a 1\n", 4), -ENOENT);
        assert_int_equal(count_entries(dir), 1);
        assert_int_equal(unlink(path), 0);
        assert_int_equal(rmdir(dir), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_format),
                cmocka_unit_test(test_escape_and_empty),
                cmocka_unit_test(test_write_file),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
