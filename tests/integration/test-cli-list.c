/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* evmonctl list and describe: on the fixture tree (any user), and with
 * the argument "root" on the host's tracefs (root and tracefs, else 77). */

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pty.h>
#include <regex.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "evmon/io.h"
#include "evmon/tracefs.h"
#include "cli.h"
#include "itest.h"

/* ---- evmonctl list / describe on the fixture tree (any user) ------------ */

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* SYSTEM:NAME for every events/SYSTEM/NAME/format under ROOT, sorted. */
static char **events_in(const char *root, size_t *ret_n) {
        _cleanup_(freep) char *cmd = NULL;
        char **names = NULL, line[512];
        size_t n = 0;
        FILE *f;

        assert_true(asprintf(&cmd, "cd '%s/events' && ls -1d */*/format", root) >= 0);
        f = popen(cmd, "re");
        assert_non_null(f);
        while (fgets(line, sizeof(line), f)) {
                char *slash = strchr(line, '/'), *end = strrchr(line, '/');
                assert_non_null(slash);
                *slash = ':';
                *end = 0;
                names = realloc(names, (n + 2) * sizeof(char *));
                assert_non_null(names);
                names[n] = strdup(line);
                assert_non_null(names[n++]);
                names[n] = NULL;
        }
        pclose(f);
        if (names)
                qsort(names, n, sizeof(char *), cmp_str);
        *ret_n = n;
        return names;
}

static void check_list(const char *root, unsigned flags) {
        _cleanup_(strv_freep) char **want = NULL;
        char **got = NULL;
        size_t n_want, n_got = 0;
        unsigned n_perf = 0;
        regex_t re;
        struct result r;

        assert_int_equal(regcomp(&re, "^[A-Za-z0-9_.-]+:[A-Za-z0-9_.-]+$", REG_EXTENDED | REG_NOSUB), 0);
        want = events_in(root ? root : "/sys/kernel/tracing", &n_want);
        assert_true(n_want > 0);
        if (root)
                run(&r, flags, evmonctl, "list", "--tracefs", root, NULL);
        else
                run(&r, flags, evmonctl, "list", NULL);
        expect_status(&r, 0, "evmonctl list");
        assert_string_equal(r.err, "");
        for (char *save = NULL, *l = strtok_r(r.out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
                /* Perf events after the tracepoints, as the config names
                 * them; perf's own names, checked by test-attr. */
                if (strncmp(l, "software:", 9) == 0 || strncmp(l, "hardware:", 9) == 0 ||
                    strncmp(l, "cache:", 6) == 0 || strncmp(l, "pmu:", 4) == 0) {
                        n_perf += strcmp(l, "software:cpu-clock") == 0 || strcmp(l, "hardware:cycles") == 0 ||
                                  strcmp(l, "cache:L1-dcache-load-misses") == 0;
                        continue;
                }
                if (regexec(&re, l, 0, NULL, 0) != 0)
                        fail_msg("evmonctl list printed \"%s\", not SYSTEM:NAME", l);
                got = realloc(got, (n_got + 1) * sizeof(char *));
                assert_non_null(got);
                got[n_got++] = l;
        }
        qsort(got, n_got, sizeof(char *), cmp_str);
        /* Exactly the events with a format file, each once. */
        assert_int_equal(n_got, n_want);
        for (size_t i = 0; i < n_got; i++)
                assert_string_equal(got[i], want[i]);
        assert_non_null(bsearch(&(const char *) { "sched:sched_process_exec" }, got, n_got, sizeof(char *), cmp_str));
        assert_int_equal(n_perf, 3);
        free(got);
        regfree(&re);
        result_done(&r);
}

static void test_list_fixture(void **state) {
        check_list(tree, RUN_NOBODY);
}

static json_object *field_named(json_object *fields, const char *name) {
        for (size_t i = 0; i < json_object_array_length(fields); i++) {
                json_object *f = json_object_array_get_idx(fields, i);
                if (strcmp(itest_str(f, "name"), name) == 0)
                        return f;
        }
        fail_msg("describe has no field \"%s\"", name);
        return NULL;
}

static void check_field(json_object *fields, const char *name, int64_t offset, int64_t size, bool is_signed,
                        enum field_kind kind, bool common) {
        json_object *f = field_named(fields, name), *v;

        assert_true(json_object_object_get_ex(f, "type", &v) && json_object_is_type(v, json_type_string));
        assert_true(json_object_object_get_ex(f, "offset", &v) && json_object_is_type(v, json_type_int));
        assert_int_equal(json_object_get_int64(v), offset);
        assert_true(json_object_object_get_ex(f, "size", &v) && json_object_is_type(v, json_type_int));
        assert_int_equal(json_object_get_int64(v), size);
        assert_true(json_object_object_get_ex(f, "signed", &v) && json_object_is_type(v, json_type_boolean));
        assert_int_equal(json_object_get_boolean(v), is_signed);
        assert_true(json_object_object_get_ex(f, "kind", &v) && json_object_is_type(v, json_type_string));
        assert_string_equal(json_object_get_string(v), field_kind_to_string(kind));
        assert_int_equal(json_object_object_get_ex(f, "common", &v) && json_object_get_boolean(v), common);
}

/* describe's JSON for sched:sched_process_exec under ROOT: the id from
 * the tracefs "id" file, each field with all of its attributes. */
static void check_describe(const char *root, unsigned flags) {
        _cleanup_(freep) char *id_path = NULL, *id_text = NULL;
        json_object *o, *fields, *v;
        struct result r;

        /* No daemon is needed: point the socket nowhere. */
        setenv("EVMON_SOCKET", "/nonexistent/evmond.sock", 1);
        if (root)
                run(&r, flags, evmonctl, "describe", "sched:sched_process_exec", "--tracefs", root, NULL);
        else
                run(&r, flags, evmonctl, "describe", "sched:sched_process_exec", NULL);
        unsetenv("EVMON_SOCKET");
        expect_status(&r, 0, "evmonctl describe sched:sched_process_exec");
        assert_string_equal(r.err, "");
        o = json_tokener_parse(r.out);
        if (!o || !json_object_is_type(o, json_type_object))
                fail_msg("describe did not print a JSON object:\n%s", r.out);
        assert_string_equal(itest_str(o, "event"), "sched:sched_process_exec");
        assert_true(asprintf(&id_path, "%s/events/sched/sched_process_exec/id", root ? root : "/sys/kernel/tracing") >= 0);
        id_text = read_file(id_path);
        assert_non_null(id_text);
        assert_true(json_object_object_get_ex(o, "id", &v) && json_object_is_type(v, json_type_int));
        assert_int_equal(json_object_get_int64(v), strtoll(id_text, NULL, 10));
        assert_true(json_object_object_get_ex(o, "fields", &fields) && json_object_is_type(fields, json_type_array));
        /* Every entry has every attribute. */
        for (size_t i = 0; i < json_object_array_length(fields); i++) {
                json_object *f = json_object_array_get_idx(fields, i);
                static const char *const keys[] = { "name", "type", "offset", "size", "signed", "kind" };
                for (size_t k = 0; k < ELEMENTSOF(keys); k++)
                        if (!json_object_object_get_ex(f, keys[k], NULL))
                                fail_msg("describe's fields[%zu] has no \"%s\": %s", i, keys[k],
                                         json_object_to_json_string(f));
        }
        /* The layout of sched_process_exec since Linux 3.4. */
        check_field(fields, "common_type", 0, 2, false, FIELD_INT, true);
        check_field(fields, "common_pid", 4, 4, true, FIELD_INT, true);
        check_field(fields, "filename", 8, 4, false, FIELD_DYN_STRING, false);
        check_field(fields, "pid", 12, 4, true, FIELD_INT, false);
        check_field(fields, "old_pid", 16, 4, true, FIELD_INT, false);
        /* Its print fmt ("filename=%s ...", __get_str(filename), ...) has
         * no helper that names nothing. */
        assert_true(json_object_object_get_ex(o, "print_unknown", &v) && json_object_is_type(v, json_type_int));
        assert_int_equal(json_object_get_int64(v), 0);
        json_object_put(o);
        result_done(&r);
}

static void test_describe_fixture(void **state) {
        check_describe(tree, RUN_NOBODY);
}

/* describe of perf events: the attr the config builds by default (perf's
 * numbers, as test-attr checks them against perf -vv) and the sample
 * fields their lines carry; no tracefs, no PMU and no daemon needed. */
static void test_describe_perf(void **state) {
        static const struct {
                const char *event, *kind;
                int64_t type, config;
        } rows[] = {
                { "software:cpu-clock", "software", 1 /* PERF_TYPE_SOFTWARE */, 0 /* PERF_COUNT_SW_CPU_CLOCK */ },
                { "hardware:cycles", "hardware", 0 /* PERF_TYPE_HARDWARE */, 0 /* PERF_COUNT_HW_CPU_CYCLES */ },
                /* L1D | OP_READ << 8 | RESULT_MISS << 16 */
                { "cache:L1-dcache-load-misses", "cache", 3 /* PERF_TYPE_HW_CACHE */, 1 << 16 },
        };
        struct result r;

        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                json_object *o, *sample, *v;
                bool has_ip = false;

                run(&r, RUN_NOBODY, evmonctl, "describe", rows[i].event, NULL);
                expect_status(&r, 0, rows[i].event);
                /* Not on a terminal: one line, as a trace event's (it
                 * was pretty-printed on a pipe too). */
                if (strchr(r.out, '\n') != r.out + strlen(r.out) - 1)
                        fail_msg("describe %s on a pipe printed more than one line:\n%s", rows[i].event, r.out);
                o = json_tokener_parse(r.out);
                if (!o || !json_object_is_type(o, json_type_object))
                        fail_msg("describe %s did not print a JSON object:\n%s", rows[i].event, r.out);
                assert_string_equal(itest_str(o, "event"), rows[i].event);
                assert_string_equal(itest_str(o, "kind"), rows[i].kind);
                assert_true(json_object_object_get_ex(o, "type", &v));
                assert_int_equal(json_object_get_int64(v), rows[i].type);
                assert_true(json_object_object_get_ex(o, "config", &v));
                assert_int_equal(json_object_get_int64(v), rows[i].config);
                assert_true(json_object_object_get_ex(o, "sample", &sample) &&
                            json_object_is_type(sample, json_type_array));
                for (size_t k = 0; k < json_object_array_length(sample); k++)
                        has_ip |= strcmp(json_object_get_string(json_object_array_get_idx(sample, k)), "ip") == 0;
                assert_true(has_ip);
                json_object_put(o);
                result_done(&r);
        }

        run(&r, RUN_NOBODY, evmonctl, "describe", "software:nope", NULL);
        assert_true(r.status != 0);
        assert_string_equal(r.out, "");
        assert_non_null(strstr(r.err, "not a software event"));
        result_done(&r);
}

static void test_describe_missing(void **state) {
        struct result r;

        run(&r, RUN_NOBODY, evmonctl, "describe", "sched:nope", "--tracefs", tree, NULL);
        assert_true(r.status != 0);
        assert_string_equal(r.out, "");
        assert_non_null(strstr(r.err, "sched:nope: no such event in this kernel (`evmonctl list` shows them)"));
        result_done(&r);

        run(&r, RUN_NOBODY, evmonctl, "--tracefs", tree, "describe", "nope:sched_process_exec", NULL);
        assert_true(r.status != 0);
        assert_non_null(strstr(r.err, "nope:sched_process_exec: no such event"));
        result_done(&r);

        run(&r, RUN_NOBODY, evmonctl, "describe", "sched_process_exec", "--tracefs", tree, NULL);
        expect_status(&r, 2, "describe without a colon");
        assert_non_null(strstr(r.err, "\"sched_process_exec\" is not SYSTEM:NAME"));
        result_done(&r);

        /* A name that would leave the events directory: a usage error
         * saying what a name is (it said "Invalid argument", exit 1). */
        run(&r, RUN_NOBODY, evmonctl, "describe", "../../etc:passwd", "--tracefs", tree, NULL);
        expect_status(&r, 2, "describe ../../etc:passwd");
        assert_non_null(strstr(r.err, "\"../../etc:passwd\" is not SYSTEM:NAME: neither holds a '/'"));
        result_done(&r);

        run(&r, RUN_NOBODY, evmonctl, "list", "--tracefs", "/nonexistent/tracefs", NULL);
        assert_true(r.status != 0);
        assert_non_null(strstr(r.err, "cannot open tracefs at /nonexistent/tracefs"));
        result_done(&r);

        /* A directory that is no tracefs is named as such: both said "No
         * such file or directory" of a directory that is there. */
        run(&r, RUN_NOBODY, evmonctl, "list", "--tracefs", tmpdir, NULL);
        expect_status(&r, 1, "evmonctl list --tracefs (no tracefs)");
        assert_non_null(strstr(r.err, "has no events/ directory (--tracefs names tracefs' mount point"));
        result_done(&r);
        run(&r, RUN_NOBODY, evmond, "--check-config", "--tracefs", tmpdir, "--config",
            config_file("tracefs-dir", "{\"events\": [{\"tracepoint\": \"sched:sched_process_exec\"}]}\n"), NULL);
        expect_status(&r, 2, "evmond --check-config --tracefs (no tracefs)");
        assert_non_null(strstr(r.err, "has no events/ directory (--tracefs names tracefs' mount point"));
        result_done(&r);
}

static void test_list_describe_real(void **state) {
        check_list(NULL, 0);
        check_describe(NULL, 0);
}

int main(int argc, char **argv) {
        const struct CMUnitTest fixture_tests[] = {
                cmocka_unit_test(test_list_fixture),
                cmocka_unit_test(test_describe_fixture),
                cmocka_unit_test(test_describe_perf),
                cmocka_unit_test(test_describe_missing),
        };
        const struct CMUnitTest root_tests[] = {
                cmocka_unit_test(test_list_describe_real),
        };

        if (argc > 1 && strcmp(argv[1], "root") == 0) {
                /* Exits 77 with the reason when we are not root or tracefs
                 * lacks these. */
                static const char *const need[] = { "sched/sched_process_exec", "sched/sched_process_exit", NULL };

                itest_require(need);
                cli_setup();
                return cli_run("cli-list-root", root_tests, ELEMENTSOF(root_tests));
        }
        cli_setup();
        return cli_run("cli-list", fixture_tests, ELEMENTSOF(fixture_tests));
}
