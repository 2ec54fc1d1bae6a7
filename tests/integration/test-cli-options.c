/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* evmond's and evmonctl's --help and bad options, and evmond
 * --check-config on bad configs against the fixture tracefs (exit 2,
 * file:line: key, no perf_event_open), as any user. */

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

/* ---- help and options (any user) ---------------------------------------- */

/* The options and commands README.md's "Command line" section documents
 * for PROGRAM: each "--option", and for evmonctl each COMMAND word. */
static char **readme_words(const char *program) {
        _cleanup_(freep) char *path = NULL, *readme = NULL;
        char **words = calloc(64, sizeof(char *));
        size_t n = 0, plen = strlen(program);
        bool in_section = false;

        assert_non_null(words);
        assert_true(asprintf(&path, "%s/README.md", source_root) >= 0);
        readme = read_file(path);
        assert_non_null(readme);
        for (char *save = NULL, *line = strtok_r(readme, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char *p;

                if (strncmp(line, "## ", 3) == 0) {
                        in_section = strcmp(line, "## Command line") == 0;
                        continue;
                }
                p = line + strspn(line, " ");
                if (!in_section || p == line || strncmp(p, program, plen) != 0 || p[plen] != ' ')
                        continue;
                p += plen;
                /* "evmonctl COMMAND [--option ARG] [EVENT...]": the command
                 * and every --option. */
                for (char *save2 = NULL, *w = strtok_r(p, " []", &save2); w; w = strtok_r(NULL, " []", &save2)) {
                        bool command = strcmp(program, "evmonctl") == 0 && w == p + strspn(p, " ");
                        bool dup = false;

                        if (!command && strncmp(w, "--", 2) != 0)
                                continue;
                        for (size_t i = 0; i < n; i++)
                                dup = dup || strcmp(words[i], w) == 0;
                        if (!dup && n < 63) {
                                words[n] = strdup(w);
                                assert_non_null(words[n++]);
                        }
                }
        }
        return words;
}

static void check_help_mentions(const char *program, const char *binary, const char *const *must) {
        _cleanup_(strv_freep) char **words = readme_words(program);
        struct result r;

        for (const char *const *m = must; *m; m++) {
                bool found = false;
                for (char **w = words; *w; w++)
                        found = found || strcmp(*w, *m) == 0;
                if (!found)
                        fail_msg("README.md's \"Command line\" section no longer shows %s %s (or this test misreads it)",
                                 program, *m);
        }
        run(&r, 0, binary, "--help", NULL);
        expect_status(&r, 0, "--help");
        assert_string_equal(r.err, "");
        /* It fits a terminal of 80 columns (lines of 85 and 90 wrapped
         * mid-word). */
        for (const char *line = r.out, *end; *line; line = *end ? end + 1 : end) {
                end = strchrnul(line, '\n');
                if (end - line > 80)
                        fail_msg("%s --help has a line of %d columns:\n%.*s", program, (int) (end - line),
                                 (int) (end - line), line);
        }
        for (char **w = words; *w; w++)
                if (!strstr(r.out, *w))
                        fail_msg("%s --help does not mention %s, which README.md documents:\n%s", program, *w, r.out);
        result_done(&r);

        run(&r, 0, binary, "-h", NULL);
        expect_status(&r, 0, "-h");
        assert_non_null(strstr(r.out, "Usage:"));
        result_done(&r);
}

static void test_evmond_help(void **state) {
        static const char *const must[] = { "--config", "--socket", "--tracefs", "--check-config", "--verbose", NULL };
        struct result r;

        check_help_mentions("evmond", evmond, must);
        run(&r, 0, evmond, "--version", NULL);
        expect_status(&r, 0, "evmond --version");
        assert_true(strncmp(r.out, "evmond ", 7) == 0);
        result_done(&r);
}

static void test_evmonctl_help(void **state) {
        static const char *const must[] = { "watch", "status", "list", "describe", "--socket", "--json", "--tracefs", NULL };
        struct result r;

        check_help_mentions("evmonctl", evmonctl, must);
        run(&r, 0, evmonctl, "--version", NULL);
        expect_status(&r, 0, "evmonctl --version");
        assert_true(strncmp(r.out, "evmonctl ", 9) == 0);
        result_done(&r);

        /* No command is a usage error: the help goes to stderr (it went
         * to stdout, into whatever the output was piped to). */
        run(&r, 0, evmonctl, NULL);
        expect_status(&r, 2, "evmonctl without a command");
        assert_string_equal(r.out, "");
        assert_non_null(strstr(r.err, "Usage: evmonctl COMMAND"));
        result_done(&r);
}

/* Each usage error exits 2 naming what is wrong and what to do: for
 * evmonctl the command and what it takes (it said "unknown command or
 * wrong arguments: describe" for a missing EVENT), an option given to a
 * command it is not for (decode's --all and --order were ignored), an
 * empty value; evmond's --check-config beside --cleanup (the last one
 * given won without a word), evmon-forward's empty --nats (exit 1, "bad
 * NATS options (--nats ): (null)"). */
static void test_bad_options(void **state) {
        enum { EVMOND, EVMONCTL, FORWARD };
        static const struct {
                int prog;
                const char *args[4];
                const char *says;
        } cases[] = {
                { EVMOND, { "--bogus" }, "evmond --help" },
                { EVMOND, { "-x" }, "evmond --help" },
                { EVMOND, { "--config" }, "evmond --help" },
                { EVMOND, { "--config", "" }, "--config takes a file name, not \"\"" },
                { EVMOND, { "--tracefs", "" }, "--tracefs takes a directory, not \"\"" },
                { EVMOND, { "extra-argument" }, "unexpected argument \"extra-argument\"" },
                { EVMOND, { "--socket", "relative.sock", "--check-config" }, "must be an absolute path" },
                { EVMOND, { "--check-config", "--cleanup" }, "--check-config and --cleanup are two runs: give one" },
                { EVMOND, { "--cleanup", "--check-config" }, "--check-config and --cleanup are two runs: give one" },
                { EVMONCTL, { "--bogus", "list" }, "evmonctl --help" },
                { EVMONCTL, { "top", "--seconds", "3" }, "--seconds is an option of count, hist or latency, not of top" },
                { EVMONCTL, { "top", "--by=comm", "--by", "pid" }, "top takes one --by" },
                { EVMONCTL, { "top" }, "top draws on a terminal" },
                { EVMONCTL, { "frobnicate" }, "unknown command \"frobnicate\"; the commands are watch, top, count, hist, latency, status," },
                { EVMONCTL, { "describe" }, "describe takes one EVENT, SYSTEM:NAME or KIND:NAME (`evmonctl list` shows them): 0 given" },
                { EVMONCTL, { "describe", "a:b", "c:d" }, "describe takes one EVENT, SYSTEM:NAME or KIND:NAME (`evmonctl list` shows them), not also \"c:d\"" },
                { EVMONCTL, { "decode" }, "decode takes one FILE (- for standard input): 0 given" },
                { EVMONCTL, { "add" }, "add takes one JSON config entry, such as '{\"tracepoint\":\"sched:sched_switch\"}': 0 given" },
                { EVMONCTL, { "remove" }, "remove takes one EVENT: 0 given" },
                { EVMONCTL, { "filter", "sched:sched_switch" }, "filter takes EVENT and FILTER ('' clears the filter): 1 given" },
                { EVMONCTL, { "list", "extra" }, "list takes no argument, not also \"extra\"" },
                { EVMONCTL, { "status", "extra" }, "status takes no argument, not also \"extra\"" },
                { EVMONCTL, { "reload", "extra" }, "reload takes no argument, not also \"extra\"" },
                { EVMONCTL, { "watch", "--all" }, "--all is an option of decode, not of watch" },
                { EVMONCTL, { "status", "--order", "time" }, "--order is an option of decode, not of status" },
                { EVMONCTL, { "status", "--socket", "" }, "--socket takes the path of evmond's socket, not \"\"" },
                { EVMONCTL, { "list", "--tracefs", "" }, "--tracefs takes a directory, not \"\"" },
                { EVMONCTL, { "decode", "--order", "fast", "x" }, "--order fast: use time, causal or file" },
                { EVMONCTL, {}, "Usage:" },
                { FORWARD, { "--nats", "" }, "--nats URL is required" },
                { FORWARD, { "--nats", "nats://127.0.0.1:4222", "--buffer-mib", "-1" }, "--buffer-mib: not a number from 1 to 65536: -1" },
        };
        static const char *const names[] = { "evmond", "evmonctl", "evmon-forward" };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char *argv[8] = { cases[i].prog == EVMOND ? evmond : cases[i].prog == EVMONCTL ? evmonctl : forward };
                struct result r;
                size_t n = 1;

                for (size_t j = 0; j < ELEMENTSOF(cases[i].args) && cases[i].args[j]; j++)
                        argv[n++] = (char *) cases[i].args[j];
                runv(&r, 0, argv);
                if (r.status != 2 || (!strstr(r.err, cases[i].says) && !strstr(r.out, cases[i].says)))
                        fail_msg("%s %s %s: exit %d, wanted 2 and \"%s\" in the output:\nstdout:\n%s\nstderr:\n%s",
                                 names[cases[i].prog], cases[i].args[0] ?: "", cases[i].args[1] ?: "", r.status,
                                 cases[i].says, r.out, r.err);
                result_done(&r);
        }

        /* More names than one request holds (65,535 bytes): said before
         * connecting, with the way out ("evmond says: line longer than
         * 65535 bytes ignored", exit 1). */
        {
                enum { N = 3000 };
                char **argv = calloc(N + 8, sizeof(char *));
                struct result r;
                size_t n = 0;

                assert_non_null(argv);
                argv[n++] = evmonctl;
                argv[n++] = "disable";
                argv[n++] = "--socket";
                argv[n++] = "/nonexistent/evmond.sock";
                for (int i = 0; i < N; i++)
                        assert_true(asprintf(&argv[n++], "syscalls:sys_enter_name_%05d", i) >= 0);
                for (int k = 0; k < 2; k++) {
                        argv[1] = k ? "watch" : "disable";
                        runv(&r, 0, argv);
                        if (r.status != 2 || !strstr(r.err, "longer than the 65535 evmond reads: name fewer, or use patterns"))
                                fail_msg("evmonctl %s with %d names: exit %d: %s", argv[1], N, r.status, r.err);
                        result_done(&r);
                }
                for (size_t i = 4; i < n; i++)
                        free(argv[i]);
                free(argv);
        }
}

/* ---- --check-config on bad configs (any user, fixture tracefs) --------- */

struct bad_config {
        const char *name;
        const char *text;
        const char *message;    /* after "FILE:" on stderr */
};

static const struct bad_config bad_configs[] = {
        { "invalid-json",
          "{\n  \"events\": [\n    {\"tracepoint\": \"sched:sched_process_exec\"}\n    {\"tracepoint\": \"sched:sched_switch\"}\n  ]\n}\n",
          ":4: invalid JSON: " },
        { "trailing",
          "{\"events\": [{\"tracepoint\": \"sched:sched_process_exec\"}]}\n}\n",
          ":2: invalid JSON: text after the end of the config object" },
        { "unknown-key",
          "{\n  \"events\": [{\"tracepoint\": \"sched:sched_process_exec\"}],\n  \"sockets\": {}\n}\n",
          ":3: sockets: unknown key \"sockets\"" },
        { "unknown-nested-key",
          "{\n  \"events\": [\n    {\"tracepoint\": \"sched:sched_process_exec\",\n     \"filtre\": \"pid == 1\"}\n  ]\n}\n",
          ":4: events[0].filtre: unknown key \"filtre\"" },
        { "unknown-tracepoint",
          "{\n  // sched:nope is in no kernel\n  \"events\": [\n    {\"tracepoint\": \"sched:sched_process_exec\"},\n"
          "    {\"tracepoint\": \"sched:nope\"}\n  ]\n}\n",
          ":5: events[1].tracepoint: no tracepoint \"sched:nope\" in " },
        { "ring-pages",
          "{\n  \"ring\": {\n    \"pages\": 100\n  },\n  \"events\": [{\"tracepoint\": \"sched:sched_process_exec\"}]\n}\n",
          ":3: ring.pages: 100 is not a power of two (try 64)" },
        { "wrong-type-int",
          "{\n  \"ring\": {\"pages\": \"64\"},\n  \"events\": [{\"tracepoint\": \"sched:sched_process_exec\"}]\n}\n",
          ":2: ring.pages: expected int, got string" },
        { "wrong-type-string",
          "{\n  \"socket\": {\"path\": 1},\n  \"events\": [{\"tracepoint\": \"sched:sched_process_exec\"}]\n}\n",
          ":2: socket.path: expected string, got int" },
        { "wrong-type-array",
          "{\n  \"events\": {\"tracepoint\": \"sched:sched_process_exec\"}\n}\n",
          ":2: events: expected array, got object" },
        { "not-system-name",
          "{\n  \"events\": [{\"tracepoint\": \"sched_process_exec\"}]\n}\n",
          ":2: events[0].tracepoint: \"sched_process_exec\" is not SYSTEM:NAME" },
        { "probe-without-name",
          "{\n  \"events\": [\n    {\"uprobe\": \"/bin/sh:main\"}\n  ]\n}\n",
          ":3: events[0]: a uprobe needs a \"name\"" },
};

static void check_bad_config(const struct bad_config *b, unsigned flags) {
        const char *path = config_file(b->name, b->text);
        _cleanup_(freep) char *want = NULL;
        struct result r;

        assert_true(asprintf(&want, "%s%s", path, b->message) >= 0);
        run(&r, flags, evmond, "--check-config", "--config", path, "--tracefs", tree, NULL);
        if (r.status != 2 || !strstr(r.err, want) || strstr(r.out, "OK"))
                fail_msg("evmond --check-config on %s%s: status %d, wanted 2 with \"%s\" on stderr\nstdout:\n%s\nstderr:\n%s",
                         b->name, flags & RUN_NOBODY ? " (as nobody)" : "", r.status, want, r.out, r.err);
        /* One message, one line. */
        assert_non_null(strchr(r.err, '\n'));
        assert_ptr_equal(strchr(r.err, '\n'), r.err + strlen(r.err) - 1);
        result_done(&r);
}

static void test_check_config_bad(void **state) {
        for (size_t i = 0; i < ELEMENTSOF(bad_configs); i++)
                check_bad_config(&bad_configs[i], 0);
}

/* The same as an unprivileged user: nothing of this needs root. */
static void test_check_config_bad_unprivileged(void **state) {
        if (geteuid() != 0) {
                /* We are unprivileged already: test_check_config_bad was it. */
                for (size_t i = 0; i < ELEMENTSOF(bad_configs); i++)
                        check_bad_config(&bad_configs[i], 0);
                return;
        }
        for (size_t i = 0; i < ELEMENTSOF(bad_configs); i++)
                check_bad_config(&bad_configs[i], RUN_NOBODY);
}

static void test_check_config_missing_file(void **state) {
        _cleanup_(freep) char *path = NULL;
        struct result r;

        assert_true(asprintf(&path, "%s/does-not-exist.json", tmpdir) >= 0);
        run(&r, 0, evmond, "--check-config", "--config", path, "--tracefs", tree, NULL);
        expect_status(&r, 2, "--check-config on a missing file");
        assert_non_null(strstr(r.err, path));
        assert_non_null(strstr(r.err, "cannot open"));
        result_done(&r);

        /* A directory named as the config is the config's fault too (it
         * exited 1). */
        run(&r, 0, evmond, "--check-config", "--config", tmpdir, "--tracefs", tree, NULL);
        expect_status(&r, 2, "--check-config on a directory");
        assert_non_null(strstr(r.err, tmpdir));
        assert_non_null(strstr(r.err, "Is a directory"));
        result_done(&r);
}

static int strace_usable(char *strace, size_t size) {
        struct result r;
        int ok;

        if (!find_program("strace", strace, size))
                return 0;
        run(&r, 0, strace, "-f", "-qq", "-e", "trace=none", "true", NULL);
        ok = r.status == 0;
        if (!ok)
                fprintf(stderr, "strace cannot trace here: %s\n", r.err);
        result_done(&r);
        return ok;
}

/* Runs evmond --check-config CONFIG under strace; returns its exit status
 * and whether it called perf_event_open at all. */
static int check_config_traced(const char *strace, const char *config, unsigned flags, bool *ret_perf) {
        _cleanup_(freep) char *log = NULL, *trace = NULL;
        struct result r;
        int status;

        assert_true(asprintf(&log, "%s/strace.log", tmpdir) >= 0);
        /* Writable for nobody too. */
        write_file(log, "");
        assert_int_equal(chmod(log, 0666), 0);
        /* LeakSanitizer cannot work under ptrace: in a -Db_sanitize
         * build it would abort evmond at exit. */
        run(&r, flags, strace, "-f", "-qq", "-e", "trace=perf_event_open", "-o", log,
            "-E", "ASAN_OPTIONS=detect_leaks=0", evmond, "--check-config", "--config", config, "--tracefs", tree, NULL);
        status = r.status;
        result_done(&r);
        trace = read_file(log);
        assert_non_null(trace);
        *ret_perf = strstr(trace, "perf_event_open(") != NULL;
        return status;
}

/* "Exits 2 before touching the kernel": a bad config never gets as far as
 * perf_event_open. A good config does call it (root or not: unprivileged,
 * the kernel says EACCES), which shows strace would have seen it. */
static void test_check_config_no_perf_event_open(void **state) {
        char strace[PATH_MAX];
        bool perf;

        if (!strace_usable(strace, sizeof(strace)))
                skip();   /* the reason is on stderr; scripts/deps installs strace */
        for (size_t i = 0; i < ELEMENTSOF(bad_configs); i++) {
                const char *path = config_file(bad_configs[i].name, bad_configs[i].text);
                int status = check_config_traced(strace, path, 0, &perf);

                if (status != 2 || perf)
                        fail_msg("%s: exit %d, perf_event_open %s; wanted exit 2 without perf_event_open",
                                 bad_configs[i].name, status, perf ? "called" : "not called");
        }
        check_config_traced(strace, config_file("good", "{\"events\": [{\"tracepoint\": \"sched:sched_process_exec\"}]}\n"),
                            RUN_NOBODY, &perf);
        assert_true(perf);
}

int main(int argc, char **argv) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_evmond_help),
                cmocka_unit_test(test_evmonctl_help),
                cmocka_unit_test(test_bad_options),
                cmocka_unit_test(test_check_config_bad),
                cmocka_unit_test(test_check_config_bad_unprivileged),
                cmocka_unit_test(test_check_config_missing_file),
                cmocka_unit_test(test_check_config_no_perf_event_open),
        };

        cli_setup();
        return cli_run("cli-options", tests, ELEMENTSOF(tests));
}
