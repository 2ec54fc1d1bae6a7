/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The command-line and systemd contracts, on the built binaries.
 *
 *   test-cli          any user: --help and bad options, --check-config on bad
 *                     configs against the fixture tracefs (exit 2, file:line:
 *                     key, no perf_event_open), evmonctl list/describe on the
 *                     fixture tree
 *   test-cli root     root and tracefs (else 77): --check-config on good
 *                     configs, evmonctl watch/status against a running evmond,
 *                     socket activation with systemd-socket-activate
 *   test-cli units    systemd-analyze verify on the built units, and the
 *                     layout `meson install` gives with --prefix=/usr
 *                     --sysconfdir=/etc (a build of its own in a temp dir) */

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
#include "itest.h"

#define NOBODY 65534

static char evmond[PATH_MAX], evmonctl[PATH_MAX], forward[PATH_MAX], tree[PATH_MAX], source_root[PATH_MAX], build_root[PATH_MAX];
static char tmpdir[64];

/* ---- running programs ------------------------------------------------ */

enum {
        RUN_NOBODY = 1 << 0,   /* drop to nobody first when we are root */
        RUN_PTY = 1 << 1,      /* stdout and stderr on a terminal (spawn only) */
};

struct child {
        pid_t pid;
        int out;        /* stdout (pipe, or the pty master) */
        int err;        /* stderr pipe, -1 with RUN_PTY */
        char buf[1 << 16];
        size_t len;
};

struct result {
        int status;     /* exit status, 128 + signal, or -1 on timeout */
        char *out, *err;
};

static char *read_file(const char *path);

static uint64_t now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

static void child_exec(unsigned flags, char *const argv[]) {
        /* Deterministic logs ("evmond: ..." prefixes) and no daemon found
         * by accident. */
        unsetenv("JOURNAL_STREAM");
        unsetenv("LISTEN_FDS");
        unsetenv("LISTEN_PID");
        if ((flags & RUN_NOBODY) && geteuid() == 0) {
                if (setgroups(0, NULL) < 0 || setgid(NOBODY) < 0 || setuid(NOBODY) < 0)
                        _exit(126);
        }
        execvp(argv[0], argv);
        fprintf(stderr, "cannot run %s: %m\n", argv[0]);
        _exit(127);
}

static void spawn(struct child *c, unsigned flags, char *const argv[]) {
        int out[2], err[2];

        c->len = 0;
        c->err = -1;
        if (flags & RUN_PTY) {
                c->pid = forkpty(&c->out, NULL, NULL, NULL);
                assert_true(c->pid >= 0);
                if (c->pid == 0)
                        child_exec(flags, argv);
                return;
        }
        assert_int_equal(pipe2(out, O_CLOEXEC), 0);
        assert_int_equal(pipe2(err, O_CLOEXEC), 0);
        c->pid = itest_fork();
        assert_true(c->pid >= 0);
        if (c->pid == 0) {
                int devnull = open("/dev/null", O_RDONLY);
                dup2(devnull, STDIN_FILENO);
                dup2(out[1], STDOUT_FILENO);
                dup2(err[1], STDERR_FILENO);
                child_exec(flags, argv);
        }
        close(out[1]);
        close(err[1]);
        c->out = out[0];
        c->err = err[0];
}

/* Waits for the child; -1 after TIMEOUT_MS (it is killed then). */
static int child_wait(struct child *c, int timeout_ms) {
        uint64_t end = now_ms() + (uint64_t) timeout_ms;
        int status;

        for (;;) {
                pid_t p = waitpid(c->pid, &status, WNOHANG);
                if (p == c->pid)
                        break;
                if (now_ms() >= end) {
                        char path[64];
                        _cleanup_(freep) char *wchan = NULL;

                        kill(c->pid, SIGKILL);
                        for (int i = 0; i < 500; i++) {
                                if (waitpid(c->pid, &status, WNOHANG) == c->pid) {
                                        c->pid = -1;
                                        return -1;
                                }
                                usleep(10000);
                        }
                        /* Not even SIGKILL ends a task asleep in the kernel
                         * (state D): say where, rather than hang here. */
                        snprintf(path, sizeof(path), "/proc/%d/wchan", (int) c->pid);
                        wchan = read_file(path);
                        fail_msg("pid %d did not exit, not even on SIGKILL: stuck in the kernel at %s "
                                 "(see dmesg)", (int) c->pid, wchan ?: "?");
                }
                usleep(10000);
        }
        c->pid = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void child_close(struct child *c) {
        if (c->pid > 0) {
                kill(c->pid, SIGKILL);
                waitpid(c->pid, NULL, 0);
                c->pid = -1;
        }
        if (c->out >= 0)
                close(c->out);
        if (c->err >= 0)
                close(c->err);
        c->out = c->err = -1;
}

static void append(char **s, size_t *len, const char *data, size_t n) {
        *s = realloc(*s, *len + n + 1);
        assert_non_null(*s);
        memcpy(*s + *len, data, n);
        *len += n;
        (*s)[*len] = 0;
}

/* Runs ARGV to its end (180 s at most: test_install_layout's ninja builds
 * evmond, evmonctl, evmon-forward and the man pages from scratch, which
 * took over 60 s on the shared 2-CPU host) and collects stdout and
 * stderr. */
static void runv(struct result *r, unsigned flags, char *const argv[]) {
        struct child c;
        size_t n_out = 0, n_err = 0;
        uint64_t end = now_ms() + 180000;

        spawn(&c, flags, argv);
        r->out = calloc(1, 1);
        r->err = calloc(1, 1);
        assert_true(r->out && r->err);
        while (c.out >= 0 || c.err >= 0) {
                struct pollfd p[2] = { { .fd = c.out, .events = POLLIN }, { .fd = c.err, .events = POLLIN } };
                char buf[4096];

                if (now_ms() >= end || poll(p, 2, 1000) < 0)
                        break;
                for (int i = 0; i < 2; i++) {
                        int *fd = i == 0 ? &c.out : &c.err;
                        ssize_t k;

                        if (*fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
                                continue;
                        k = read(*fd, buf, sizeof(buf));
                        if (k <= 0) {
                                close(*fd);
                                *fd = -1;
                        } else if (i == 0)
                                append(&r->out, &n_out, buf, (size_t) k);
                        else
                                append(&r->err, &n_err, buf, (size_t) k);
                }
        }
        r->status = child_wait(&c, (int) (end > now_ms() ? end - now_ms() : 1));
        child_close(&c);
}

static void run(struct result *r, unsigned flags, const char *arg0, ...) {
        char *argv[32];
        size_t n = 0;
        va_list ap;

        argv[n++] = (char *) arg0;
        va_start(ap, arg0);
        while ((argv[n] = va_arg(ap, char *)))
                assert_true(++n < ELEMENTSOF(argv));
        va_end(ap);
        runv(r, flags, argv);
}

static void result_done(struct result *r) {
        free(r->out);
        free(r->err);
        r->out = r->err = NULL;
}

static void expect_status(const struct result *r, int status, const char *what) {
        if (r->status != status)
                fail_msg("%s: exit status %d, wanted %d\nstdout:\n%s\nstderr:\n%s", what, r->status, status, r->out, r->err);
}

/* The next line of the child's stdout without its end (caller frees), or
 * NULL after TIMEOUT_MS or at EOF. */
static char *child_line(struct child *c, int timeout_ms) {
        uint64_t end = now_ms() + (uint64_t) timeout_ms;

        for (;;) {
                char *nl = memchr(c->buf, '\n', c->len);
                if (nl) {
                        size_t n = (size_t) (nl - c->buf);
                        char *line = strndup(c->buf, n);

                        assert_non_null(line);
                        if (n > 0 && line[n - 1] == '\r')
                                line[n - 1] = 0;
                        memmove(c->buf, nl + 1, c->len - n - 1);
                        c->len -= n + 1;
                        return line;
                }
                uint64_t now = now_ms();
                if (now >= end || c->len == sizeof(c->buf))
                        return NULL;
                struct pollfd p = { .fd = c->out, .events = POLLIN };
                if (poll(&p, 1, (int) (end - now)) <= 0)
                        return NULL;
                ssize_t k = read(c->out, c->buf + c->len, sizeof(c->buf) - c->len);
                if (k <= 0)
                        return NULL;
                c->len += (size_t) k;
        }
}

static bool find_program(const char *name, char *buf, size_t size) {
        const char *path = getenv("PATH");
        _cleanup_(freep) char *copy = strdup(path && *path ? path : "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");

        assert_non_null(copy);
        for (char *save = NULL, *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
                snprintf(buf, size, "%s/%s", dir, name);
                if (access(buf, X_OK) == 0)
                        return true;
        }
        return false;
}

static char *read_file(const char *path) {
        FILE *f = fopen(path, "re");
        char *s = NULL;
        size_t n = 0;

        if (!f)
                return NULL;
        if (getdelim(&s, &n, 0, f) < 0) {
                free(s);
                s = strdup("");
        }
        fclose(f);
        return s;
}

static void write_file(const char *path, const char *text) {
        FILE *f = fopen(path, "we");
        assert_non_null(f);
        assert_true(fputs(text, f) >= 0);
        assert_int_equal(fclose(f), 0);
        assert_int_equal(chmod(path, 0644), 0);
}

/* A config file in our temp dir (readable by nobody). */
static const char *config_file(const char *name, const char *text) {
        static char path[8][PATH_MAX];
        static unsigned next;
        char *p = path[next++ % ELEMENTSOF(path)];

        snprintf(p, PATH_MAX, "%s/%s", tmpdir, name);
        write_file(p, text);
        return p;
}

static void rm_rf(const char *dir) {
        char cmd[PATH_MAX + 16];
        if (!*dir)
                return;
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        (void) system(cmd);
}

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
                { EVMONCTL, { "frobnicate" }, "unknown command \"frobnicate\"; the commands are watch, status," },
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

/* Without a daemon, the commands that need one say so and exit 1. */
static void test_no_daemon(void **state) {
        static const char *const cmds[] = { "status", "watch" };
        _cleanup_(freep) char *sock = NULL;

        assert_true(asprintf(&sock, "%s/no-daemon.sock", tmpdir) >= 0);
        for (size_t i = 0; i < ELEMENTSOF(cmds); i++) {
                struct result r;

                run(&r, 0, evmonctl, cmds[i], "--socket", sock, NULL);
                expect_status(&r, 1, cmds[i]);
                assert_non_null(strstr(r.err, "cannot connect to evmond at"));
                assert_non_null(strstr(r.err, sock));
                assert_non_null(strstr(r.err, "is evmond running?"));
                result_done(&r);
        }
}

#define SMALL_LINE "{\"type\":\"event\",\"event\":\"sched:sched_process_exec\",\"fields\":{}}\n"

/* A stand-in for evmond answering a reload behind a busy stream, on one
 * connection to LISTENER: the hello; after the request line, an event line
 * one byte short of evmonctl's 1 MiB line buffer (its end and the next
 * line's start in one write, so the read that completes it fills the
 * buffer to the last byte), N_SMALL short event lines, then the answer. */
static void fake_daemon(int listener, size_t n_small) {
        static const char hello[] = "{\"type\":\"hello\",\"version\":1,\"events\":[\"sched:sched_process_exec\"]}\n";
        static const char answer[] = "{\"type\":\"reload\",\"ok\":true,\"events\":[\"sched:sched_process_exec\"]}\n";
        static const char head[] = "{\"type\":\"event\",\"event\":\"sched:sched_process_exec\",\"fields\":{\"s\":\"";
        const size_t big = (1u << 20) - 1, tail = 1000;        /* the big line, newline included; its bytes written last */
        char *buf = malloc(big + sizeof(SMALL_LINE)), c;
        int fd = accept4(listener, NULL, NULL, SOCK_CLOEXEC);

        if (!buf || fd < 0 || loop_write(fd, hello, sizeof(hello) - 1) < 0)
                _exit(1);
        do
                if (read(fd, &c, 1) != 1)
                        _exit(1);
        while (c != '\n');
        memset(buf, 'a', big);
        memcpy(buf, head, sizeof(head) - 1);
        memcpy(buf + big - 4, "\"}}\n", 4);
        memcpy(buf + big, SMALL_LINE, sizeof(SMALL_LINE) - 1);
        if (loop_write(fd, buf, big - tail) < 0 || loop_write(fd, buf + big - tail, tail + sizeof(SMALL_LINE) - 1) < 0)
                _exit(1);
        for (size_t i = 1; i < n_small; i++)
                if (loop_write(fd, SMALL_LINE, sizeof(SMALL_LINE) - 1) < 0)
                        _exit(1);
        _exit(loop_write(fd, answer, sizeof(answer) - 1) < 0);
}

/* evmonctl finds the answer behind whatever lines come first, each line
 * parsed by its length: json_tokener_parse() ran strlen() from each line
 * on past the buffer's end once a read had filled it (ASan: a
 * global-buffer-overflow), and through the stale rest of the buffer for
 * every later line (2.4 s against 0.27 s for these 200,000 here). */
static void test_answer_behind_lines(void **state) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_(closep) int listener = -1;
        struct result r;
        uint64_t start, ms;
        int status;
        pid_t pid;

        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/fake.sock", tmpdir);
        listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(listener >= 0);
        assert_int_equal(bind(listener, (struct sockaddr *) &sa, sizeof(sa)), 0);
        assert_int_equal(listen(listener, 1), 0);
        pid = itest_fork();
        assert_true(pid >= 0);
        if (pid == 0)
                fake_daemon(listener, 200000);
        start = now_ms();
        run(&r, 0, evmonctl, "reload", "--socket", sa.sun_path, NULL);
        ms = now_ms() - start;
        kill(pid, SIGKILL);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        expect_status(&r, 0, "evmonctl reload behind 13 MB of event lines");
        assert_non_null(strstr(r.out, "\"ok\": true"));
        fprintf(stderr, "evmonctl reload behind 13 MB of event lines: %" PRIu64 " ms\n", ms);
        /* A few seconds under the sanitizers on a busy host. */
        if (ms > 30000)
                fail_msg("evmonctl took %" PRIu64 " ms to find its answer", ms);
        result_done(&r);
}

/* ---- evmonctl against peers that are not a healthy evmond (any user) --- */

/* A listening socket NAME in our temp dir, and a child that accepts one
 * connection on it, writes SEND, then holds the connection HOLD_MS
 * before it closes it (and exits). */
static pid_t fake_peer(const char *name, const char *send, int hold_ms, char *ret_path, size_t size) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int listener;
        pid_t pid;

        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s", tmpdir, name);
        snprintf(ret_path, size, "%s", sa.sun_path);
        unlink(sa.sun_path);
        listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(listener >= 0);
        assert_int_equal(bind(listener, (struct sockaddr *) &sa, sizeof(sa)), 0);
        assert_int_equal(listen(listener, 1), 0);
        pid = itest_fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                int fd = accept4(listener, NULL, NULL, SOCK_CLOEXEC);

                if (fd < 0 || loop_write(fd, send, strlen(send)) < 0)
                        _exit(1);
                usleep((useconds_t) hold_ms * 1000);
                _exit(0);
        }
        close(listener);
        return pid;
}

static void fake_peer_done(pid_t pid) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
}

#define HELLO_LINE "{\"type\":\"hello\",\"version\":1,\"events\":[\"sched:sched_process_exec\",\"sched:sched_process_exit\"]}\n"
#define EXEC_LINE "{\"type\":\"event\",\"event\":\"sched:sched_process_exec\",\"time\":\"2026-11-21T10:23:00.123456789Z\"," \
                  "\"ts\":1,\"cpu\":0,\"pid\":1,\"tid\":1,\"fields\":{\"filename\":\"/x\",\"pid\":1,\"old_pid\":1}}\n"

/* Whatever answers on the socket, evmonctl says what it is and what to
 * do, and exits 1: it took a peer that is not evmond for one (watch
 * printed an HTTP server's answer and exited 0; status waited for good
 * on one that said nothing evmond says), read on past a protocol version
 * it does not know (doc/protocol.md: say so and stop), and watch exited
 * 0 without a word when evmond stopped. */
static void test_not_evmond(void **state) {
        static const struct {
                const char *send;
                const char *cmd;
                int hold_ms;
                const char *says;
                const char *out;        /* on stdout, or NULL for nothing */
        } cases[] = {
                { "HTTP/1.1 400 Bad Request\r\n\r\n", "watch", 0,
                  "is not evmond's socket: its first line is \"HTTP/1.1 400 Bad Request\"", NULL },
                { "HTTP/1.1 400 Bad Request\r\n\r\n", "status", 0,
                  "is not evmond's socket: its first line is \"HTTP/1.1 400 Bad Request\"", NULL },
                { "{\"type\":\"hello\",\"version\":2,\"events\":[]}\n", "watch", 10000,
                  "speaks protocol version 2; this evmonctl speaks version 1", NULL },
                { "{\"type\":\"hello\",\"version\":2,\"events\":[]}\n", "status", 10000,
                  "speaks protocol version 2; this evmonctl speaks version 1", NULL },
                { "{\"type\":\"error\",\"error\":\"too many connections of uid 0 (clients.max_per_uid 16)\"}\n", "status", 0,
                  "refused the connection: too many connections of uid 0", NULL },
                /* evmond stopped mid-watch: what came is printed, then
                 * the word, exit 1. */
                { HELLO_LINE EXEC_LINE, "watch", 0, "closed the connection (it stopped or restarted", "sched:sched_process_exec" },
                { HELLO_LINE, "status", 0, "closed the connection without answering status", NULL },
                /* A refused reload: the reason on stderr too (it was in
                 * the JSON on stdout only). */
                { HELLO_LINE "{\"type\":\"reload\",\"ok\":false,\"error\":\"cfg.json:3: ring.pages changed\"}\n", "reload",
                  10000, "refused the reload: cfg.json:3: ring.pages changed", "\"ok\": false" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char path[PATH_MAX];
                pid_t peer = fake_peer("peer.sock", cases[i].send, cases[i].hold_ms, path, sizeof(path));
                struct result r;

                run(&r, 0, evmonctl, cases[i].cmd, "--json", "--socket", path, NULL);
                fake_peer_done(peer);
                if (r.status != 1 || !strstr(r.err, cases[i].says) || !strstr(r.err, path) ||
                    (cases[i].out ? !strstr(r.out, cases[i].out) : *r.out != 0))
                        fail_msg("evmonctl %s against a peer that sends %s: exit %d, wanted 1 and \"%s\" on stderr%s%s\n"
                                 "stdout:\n%s\nstderr:\n%s", cases[i].cmd, cases[i].send, r.status, cases[i].says,
                                 cases[i].out ? ", on stdout " : ", nothing on stdout", cases[i].out ?: "", r.out, r.err);
                result_done(&r);
        }

        /* A stream without a line end: named after 64 KiB (it was read
         * into a buffer of up to 256 MiB first). */
        {
                char path[PATH_MAX], *send = malloc(200001);
                struct result r;
                pid_t peer;

                assert_non_null(send);
                memset(send, 'x', 200000);
                send[200000] = 0;
                peer = fake_peer("stream.sock", send, 10000, path, sizeof(path));
                free(send);
                run(&r, 0, evmonctl, "status", "--socket", path, NULL);
                fake_peer_done(peer);
                expect_status(&r, 1, "evmonctl status against a stream without a line end");
                assert_non_null(strstr(r.err, "is not evmond's socket: its first line is \"xxxx"));
                result_done(&r);
        }
}

/* A one-shot request subscribes to no event first: without a
 * subscription evmond sends the client every event it serves, which
 * status, reload and the runtime requests read past to their answer
 * (megabytes on a busy host, test_answer_behind_lines). */
static void test_request_subscribes_to_nothing(void **state) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_(closep) int listener = -1;
        _cleanup_(freep) char *got = NULL;
        char got_path[PATH_MAX];
        struct result r;
        pid_t pid;

        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/record.sock", tmpdir);
        snprintf(got_path, sizeof(got_path), "%s/record.got", tmpdir);
        listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(listener >= 0);
        assert_int_equal(bind(listener, (struct sockaddr *) &sa, sizeof(sa)), 0);
        assert_int_equal(listen(listener, 1), 0);
        pid = itest_fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                /* Records what evmonctl sends up to its status request,
                 * then answers it. */
                static const char answer[] = "{\"type\":\"status\",\"events\":[]}\n";
                char buf[4096];
                size_t n = 0;
                int fd = accept4(listener, NULL, NULL, SOCK_CLOEXEC), out;

                if (fd < 0 || loop_write(fd, HELLO_LINE, strlen(HELLO_LINE)) < 0)
                        _exit(1);
                while (n < sizeof(buf) - 1 && !memmem(buf, n, "\"status\"", 8)) {
                        ssize_t k = read(fd, buf + n, sizeof(buf) - 1 - n);
                        if (k <= 0)
                                _exit(1);
                        n += (size_t) k;
                }
                out = open(got_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                if (out < 0 || loop_write(out, buf, n) < 0 || loop_write(fd, answer, sizeof(answer) - 1) < 0)
                        _exit(1);
                _exit(0);
        }
        run(&r, 0, evmonctl, "status", "--socket", sa.sun_path, NULL);
        waitpid(pid, NULL, 0);
        expect_status(&r, 0, "evmonctl status");
        result_done(&r);
        got = read_file(got_path);
        assert_non_null(got);
        assert_string_equal(got, "{\"type\":\"subscribe\",\"events\":[]}\n{\"type\":\"status\"}\n");
}

/* A line longer than evmonctl's first buffer (1 MiB) goes through
 * whole: watch exited 1, "a line longer than 1048576 bytes". */
static void test_watch_long_line(void **state) {
        static const char head[] = "{\"type\":\"event\",\"event\":\"sched:sched_process_exec\",\"fields\":{\"s\":\"";
        const size_t big = (1u << 20) + (1u << 19);     /* past the first buffer */
        char path[PATH_MAX], *send = malloc(sizeof(HELLO_LINE) + big + 1);
        struct result r;
        pid_t peer;

        assert_non_null(send);
        strcpy(send, HELLO_LINE);
        memset(send + strlen(HELLO_LINE), 'a', big);
        memcpy(send + strlen(HELLO_LINE), head, strlen(head));
        strcpy(send + strlen(HELLO_LINE) + big - 4, "\"}}\n");
        peer = fake_peer("long.sock", send, 0, path, sizeof(path));
        free(send);
        run(&r, 0, evmonctl, "watch", "--json", "--socket", path, NULL);
        fake_peer_done(peer);
        /* evmond's end of the connection ends the watch (exit 1), after
         * the line. */
        expect_status(&r, 1, "evmonctl watch of a 1.5 MiB line");
        assert_int_equal(strlen(r.out), strlen(HELLO_LINE) + big);
        assert_non_null(strstr(r.err, "closed the connection"));
        result_done(&r);
}

/* decode - with a terminal on standard input is refused at once: it
 * waited for perf.data typed in. */
static void test_decode_stdin_terminal(void **state) {
        char *argv[] = { evmonctl, "decode", "-", NULL };
        struct child c;
        char *line;

        spawn(&c, RUN_PTY, argv);
        line = child_line(&c, 5000);
        if (!line || !strstr(line, "standard input is a terminal"))
                fail_msg("evmonctl decode - on a terminal said \"%s\"", line ?: "(nothing within 5 s)");
        free(line);
        assert_int_equal(child_wait(&c, 5000), 2);
        child_close(&c);
}

/* Lines evmond sent before it took watch's subscription: the events are
 * left out (not asked for), a schema line is kept (evmond sends it once
 * per client, not again after the subscription). */
static void test_watch_before_subscribed(void **state) {
        char path[PATH_MAX];
        pid_t peer = fake_peer("before.sock",
                               HELLO_LINE
                               "{\"type\":\"schema\",\"event\":\"sched:sched_process_exec\",\"fields\":[]}\n"
                               EXEC_LINE
                               "{\"type\":\"subscribed\",\"events\":[\"sched:sched_process_exec\"]}\n"
                               EXEC_LINE, 0, path, sizeof(path));
        struct result r;
        const char *p;
        int n = 0;

        run(&r, 0, evmonctl, "watch", "--json", "--socket", path, "sched:sched_process_exec", NULL);
        fake_peer_done(peer);
        expect_status(&r, 1, "evmonctl watch (evmond gone at the end)");
        for (p = r.out; (p = strstr(p, "\"type\":\"event\"")); p++)
                n++;
        if (n != 1 || !strstr(r.out, "\"type\":\"schema\"") || strstr(r.out, "\"type\":\"event\"") < strstr(r.out, "subscribed"))
                fail_msg("evmonctl watch printed, of a schema, an event before the subscription and one after:\n%s", r.out);
        result_done(&r);
}

/* evmonctl watch EVENT that evmond refuses to subscribe to: the error,
 * exit 1, and none of the lines evmond sends a client with no
 * subscription (it went on printing every event evmond serves). */
static void test_watch_refused(void **state) {
        char path[PATH_MAX];
        pid_t peer = fake_peer("refuse.sock",
                               HELLO_LINE EXEC_LINE
                               "{\"type\":\"error\",\"error\":\"subscribe: no event \\\"sched:nope\\\" is served here\"}\n"
                               EXEC_LINE, 10000, path, sizeof(path));
        struct result r;

        run(&r, 0, evmonctl, "watch", "--json", "--socket", path, "sched:nope", NULL);
        fake_peer_done(peer);
        expect_status(&r, 1, "evmonctl watch sched:nope");
        assert_non_null(strstr(r.err, "evmond says: subscribe: no event \"sched:nope\" is served here"));
        if (strstr(r.out, "\"type\":\"event\""))
                fail_msg("evmonctl watch sched:nope printed events it did not ask for:\n%s", r.out);
        result_done(&r);
}

/* --socket naming something that is not a socket says so, not
 * "Connection refused (is evmond running?)". */
static void test_socket_not_socket(void **state) {
        const char *file = config_file("not-a-socket", "hello\n");
        const char *const paths[] = { file, tmpdir };
        struct result r;

        for (size_t i = 0; i < ELEMENTSOF(paths); i++) {
                run(&r, 0, evmonctl, "status", "--socket", paths[i], NULL);
                expect_status(&r, 1, "evmonctl status --socket (not a socket)");
                if (!strstr(r.err, paths[i]) || !strstr(r.err, "not a socket") || strstr(r.err, "refused"))
                        fail_msg("evmonctl status --socket %s: \"%s\", wanted it named as no socket", paths[i], r.err);
                result_done(&r);
        }
}

/* Standard output that takes nothing: a reader gone (`| head -1`) ends
 * watch at once and quietly, exit 0, though evmond is quiet (it waited
 * for the next event to notice); a full disk is said, exit 1 (it blamed
 * "reading from evmond"). */
static void test_watch_stdout(void **state) {
        char path[PATH_MAX], *line;
        _cleanup_(freep) char *cmd = NULL;
        struct child c;
        struct result r;
        uint64_t start;
        pid_t peer;
        int status;

        peer = fake_peer("quiet.sock", HELLO_LINE, 20000, path, sizeof(path));
        {
                char *argv[] = { evmonctl, "watch", "--json", "--socket", path, NULL };
                spawn(&c, 0, argv);
        }
        line = child_line(&c, 5000);
        assert_non_null(line);
        assert_non_null(strstr(line, "\"hello\""));
        free(line);
        close(c.out);
        c.out = -1;
        start = now_ms();
        status = child_wait(&c, 3000);
        if (status != 0)
                fail_msg("evmonctl watch with its reader gone and evmond quiet: exit %d after %" PRIu64
                         " ms, wanted 0 at once", status, now_ms() - start);
        {
                char err[512];
                ssize_t k = read(c.err, err, sizeof(err) - 1);

                if (k > 0) {
                        err[k] = 0;
                        fail_msg("evmonctl watch with its reader gone said: %s", err);
                }
        }
        child_close(&c);
        fake_peer_done(peer);

        if (access("/dev/full", W_OK) < 0) {
                fprintf(stderr, "no /dev/full here: the full-disk part is left out\n");
                return;
        }
        peer = fake_peer("full.sock", HELLO_LINE EXEC_LINE, 10000, path, sizeof(path));
        assert_true(asprintf(&cmd, "exec '%s' watch --socket '%s' >/dev/full", evmonctl, path) >= 0);
        run(&r, 0, "sh", "-c", cmd, NULL);
        fake_peer_done(peer);
        expect_status(&r, 1, "evmonctl watch >/dev/full");
        assert_non_null(strstr(r.err, "cannot write to standard output: No space left on device"));
        result_done(&r);

        /* A closed stdout: the socket was opened as fd 1, status wrote
         * its answer back to evmond (exit 0, nothing said), watch waited
         * for good. */
        for (int i = 0; i < 2; i++) {
                peer = fake_peer("closed.sock", HELLO_LINE "{\"type\":\"status\",\"events\":[]}\n", 10000, path, sizeof(path));
                free(cmd);
                assert_true(asprintf(&cmd, "exec '%s' %s --socket '%s' >&-", evmonctl, i ? "watch" : "status", path) >= 0);
                run(&r, 0, "sh", "-c", cmd, NULL);
                fake_peer_done(peer);
                expect_status(&r, 1, cmd);
                assert_non_null(strstr(r.err, "cannot write to standard output: Bad file descriptor"));
                result_done(&r);
        }

        /* The commands that need no daemon: decode said nothing and
         * exited 0, list and describe exited 0 with nothing written. */
        for (int i = 0; i < 3; i++) {
                free(cmd);
                if (i == 0)
                        assert_true(asprintf(&cmd, "exec '%s' decode '%s/tests/monitor/fixtures/perfdata/task.data' >/dev/full",
                                             evmonctl, source_root) >= 0);
                else
                        assert_true(asprintf(&cmd, "exec '%s' %s --tracefs '%s' >/dev/full", evmonctl,
                                             i == 1 ? "list" : "describe sched:sched_switch", tree) >= 0);
                run(&r, 0, "sh", "-c", cmd, NULL);
                expect_status(&r, 1, cmd);
                assert_non_null(strstr(r.err, "cannot write to standard output: No space left on device"));
                result_done(&r);
        }
}

/* ---- root: good configs, watch, status, socket activation ---------------- */

/* Only our marker program (a copy of /bin/true) passes the filters: the
 * stream stays quiet unless we run it, so a line that sits in some buffer
 * shows, and every event that arrives is ours. Its name is this run's
 * ("evcli-" and the temp dir's suffix, within comm's 15 bytes): with one
 * name for all, another test-cli root on the machine ran a marker its
 * filters let through, and test_watch_terminal saw an exec before its
 * own. */
static char marker_name[16], daemon_config[512];
static char marker[PATH_MAX];

/* Without root the message names the real cause, the permission on the
 * tracefs mount, not a mount that is there already (issue 17). */
static void test_unprivileged_tracefs(void **state) {
        const char *good = config_file("good-unprivileged", "{\"events\": [{\"tracepoint\": \"sched:sched_process_exec\"}]}\n");
        struct result r;

        run(&r, RUN_NOBODY, evmond, "--check-config", "--config", good, NULL);
        expect_status(&r, 1, "evmond --check-config as nobody on the real tracefs");
        if (!strstr(r.err, "Permission denied") || !strstr(r.err, "needs root") || strstr(r.err, "mount -t"))
                fail_msg("as nobody: \"%s\", wanted the permission named and root as the remedy", r.err);
        result_done(&r);
}

/* Rings beyond the locked-memory limit: the message names the limits and
 * the key to change, not only "Operation not permitted" (issue 17). Root
 * without CAP_IPC_LOCK, 64 KiB of RLIMIT_MEMLOCK, 4 MiB rings. */
static void test_ring_over_memlock(void **state) {
        const char *cfg = config_file("big-ring", "{\"ring\": {\"pages\": 1024},\n"
                                                  " \"events\": [{\"tracepoint\": \"sched:sched_process_exec\"}]}\n");
        char prlimit[PATH_MAX], setpriv[PATH_MAX], sock[PATH_MAX];
        _cleanup_(freep) char *paranoid = read_file("/proc/sys/kernel/perf_event_paranoid");
        struct result r;

        if (!find_program("prlimit", prlimit, sizeof(prlimit)) || !find_program("setpriv", setpriv, sizeof(setpriv)))
                skip();  /* util-linux, from scripts/deps */
        if (paranoid && atoi(paranoid) < 0) {
                fprintf(stderr, "kernel.perf_event_paranoid is -1: the kernel does not limit locked ring memory\n");
                skip();
        }
        snprintf(sock, sizeof(sock), "%s/memlock.sock", tmpdir);
        run(&r, 0, prlimit, "--memlock=65536:65536", setpriv, "--bounding-set=-ipc_lock", "--inh-caps=-ipc_lock",
            "--", evmond, "--config", cfg, "--socket", sock, NULL);
        expect_status(&r, 1, "evmond with 4 MiB rings, 64 KiB RLIMIT_MEMLOCK and no CAP_IPC_LOCK");
        if (!strstr(r.err, "ring.pages") || !strstr(r.err, "RLIMIT_MEMLOCK") || !strstr(r.err, "perf_event_mlock_kb"))
                fail_msg("over the memlock limit: \"%s\", wanted ring.pages, RLIMIT_MEMLOCK and perf_event_mlock_kb named", r.err);
        result_done(&r);
}

static void test_check_config_good(void **state) {
        _cleanup_(freep) char *shipped = NULL;
        const char *path = config_file("good.json", daemon_config);
        struct result r;

        run(&r, 0, evmond, "--check-config", "--config", path, NULL);
        expect_status(&r, 0, "--check-config on a good config");
        assert_non_null(strstr(r.out, "OK, 2 events"));
        result_done(&r);

        assert_true(asprintf(&shipped, "%s/conf/evmond.json", source_root) >= 0);
        run(&r, 0, evmond, "--check-config", "--config", shipped, NULL);
        expect_status(&r, 0, "--check-config on conf/evmond.json");
        result_done(&r);

        /* The kernel judges filters when the event opens: still exit 2, at
         * the filter's line. */
        path = config_file("bad-filter.json",
                           "{\n  \"events\": [\n    {\"tracepoint\": \"sched:sched_process_exec\",\n"
                           "     \"filter\": \"no_such_field == 1\"}\n  ]\n}\n");
        run(&r, 0, evmond, "--check-config", "--config", path, NULL);
        expect_status(&r, 2, "--check-config with a filter the kernel refuses");
        {
                _cleanup_(freep) char *want = NULL;
                assert_true(asprintf(&want, "%s:4: events[0].filter: ", path) >= 0);
                if (!strstr(r.err, want))
                        fail_msg("wanted \"%s\" in:\n%s", want, r.err);
        }
        result_done(&r);

        path = config_file("bad-tp.json", "{\n  \"events\": [\n    {\"tracepoint\": \"sched:nope\"}\n  ]\n}\n");
        run(&r, 0, evmond, "--check-config", "--config", path, NULL);
        expect_status(&r, 2, "--check-config with an unknown tracepoint on the real tracefs");
        assert_non_null(strstr(r.err, ":3: events[0].tracepoint: no tracepoint \"sched:nope\""));
        result_done(&r);
}

static void test_list_describe_real(void **state) {
        check_list(NULL, 0);
        check_describe(NULL, 0);
}

static struct itest_daemon the_daemon;

/* Runs the marker once and reaps it. */
static pid_t run_marker(void) {
        pid_t pid = fork();
        int status;

        assert_true(pid >= 0);
        if (pid == 0) {
                execl(marker, marker, (char *) NULL);
                _exit(127);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        return pid;
}

/* Reads C's lines until the event NAME of the marker run PID. The marker
 * ran once, so the line has to come by itself, within flush_ms (5 ms) and
 * some slack. Every line is a JSON object with a type; every event is the
 * marker's. *ret_other counts events not named NAME. */
static void expect_event(struct child *c, const char *name, pid_t pid, size_t *ret_other) {
        uint64_t end = now_ms() + 5000;

        while (now_ms() < end) {
                char *line = child_line(c, (int) (end - now_ms()));
                json_object *o, *fields, *f;
                bool seen;

                if (!line)
                        break;
                o = json_tokener_parse(line);
                if (!o || !json_object_is_type(o, json_type_object) || !*itest_str(o, "type"))
                        fail_msg("evmonctl watch printed a line that is no JSON object with a type: %s", line);
                free(line);
                if (strcmp(itest_str(o, "type"), "event") != 0) {
                        json_object_put(o);
                        continue;
                }
                assert_int_equal(itest_int(o, "pid"), pid);
                assert_true(json_object_object_get_ex(o, "fields", &fields));
                if (strcmp(itest_str(o, "event"), "sched:sched_process_exec") == 0) {
                        assert_true(json_object_object_get_ex(fields, "filename", &f));
                        assert_string_equal(json_object_get_string(f), marker);
                } else {
                        assert_string_equal(itest_str(o, "event"), "sched:sched_process_exit");
                        assert_true(json_object_object_get_ex(fields, "comm", &f));
                        assert_string_equal(json_object_get_string(f), marker_name);
                }
                assert_true(*itest_str(o, "time"));
                assert_true(itest_int(o, "ts") > 0);
                seen = strcmp(itest_str(o, "event"), name) == 0;
                if (!seen)
                        ++*ret_other;
                json_object_put(o);
                if (seen)
                        return;
        }
        fail_msg("the %s event of the marker (pid %d) did not reach evmonctl watch within 5 s", name, (int) pid);
}

static void test_watch_json(void **state) {
        char *argv[] = { evmonctl, "watch", "--json", "--socket", the_daemon.socket, NULL };
        struct child c;
        char *line;
        json_object *o;
        size_t other = 0;
        pid_t pid;

        spawn(&c, 0, argv);
        /* The daemon's hello comes through at once, though nothing follows. */
        line = child_line(&c, 5000);
        if (!line)
                fail_msg("no hello line from evmonctl watch --json within 5 s");
        o = json_tokener_parse(line);
        assert_non_null(o);
        assert_string_equal(itest_str(o, "type"), "hello");
        json_object_put(o);
        free(line);

        pid = run_marker();
        expect_event(&c, "sched:sched_process_exec", pid, &other);
        expect_event(&c, "sched:sched_process_exit", pid, &other);
        assert_int_equal(other, 0);
        pid = run_marker();
        expect_event(&c, "sched:sched_process_exec", pid, &other);
        child_close(&c);
}

static void test_watch_subscribe(void **state) {
        char *argv[] = { evmonctl, "watch", "--socket", the_daemon.socket, "sched:sched_process_exit", NULL };
        struct child c;
        size_t other = 0;
        bool subscribed = false;

        /* Not a terminal: JSON lines without --json. */
        spawn(&c, 0, argv);
        for (int i = 0; i < 2 && !subscribed; i++) {
                char *line = child_line(&c, 5000);
                json_object *o, *events;

                if (!line)
                        fail_msg("no hello and subscribed lines from evmonctl watch within 5 s");
                o = json_tokener_parse(line);
                assert_non_null(o);
                if (strcmp(itest_str(o, "type"), "subscribed") == 0) {
                        assert_true(json_object_object_get_ex(o, "events", &events));
                        assert_int_equal(json_object_array_length(events), 1);
                        assert_string_equal(json_object_get_string(json_object_array_get_idx(events, 0)),
                                            "sched:sched_process_exit");
                        subscribed = true;
                } else
                        assert_string_equal(itest_str(o, "type"), "hello");
                json_object_put(o);
                free(line);
        }
        assert_true(subscribed);
        /* The marker's exec comes before its exit: had the subscription not
         * held, it would be counted here. */
        expect_event(&c, "sched:sched_process_exit", run_marker(), &other);
        assert_int_equal(other, 0);
        child_close(&c);
}

/* On a terminal: one readable line per event. */
static void test_watch_terminal(void **state) {
        char *argv[] = { evmonctl, "watch", "--socket", the_daemon.socket, NULL };
        uint64_t end;
        struct child c;
        regex_t re;
        char *line, pattern[PATH_MAX + 256];
        bool seen = false;
        pid_t pid;

        spawn(&c, RUN_PTY, argv);
        /* Nothing to read until an event: hello is not shown on a terminal,
         * so wait a moment for the connection instead. */
        line = child_line(&c, 500);
        if (line)
                fail_msg("evmonctl watch printed \"%s\" on a terminal before any event", line);
        pid = run_marker();
        snprintf(pattern, sizeof(pattern),
                 "^[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{6} cpu[0-9]+ %d sched:sched_process_exec "
                 "filename=%s pid=%d old_pid=%d$", (int) pid, marker, (int) pid, (int) pid);
        assert_int_equal(regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB), 0);
        end = now_ms() + 5000;
        while (!seen && now_ms() < end && (line = child_line(&c, (int) (end - now_ms())))) {
                if (line[0] == '{')
                        fail_msg("evmonctl watch printed JSON on a terminal: %s", line);
                seen = regexec(&re, line, 0, NULL, 0) == 0;
                if (!seen)
                        fail_msg("wanted a line matching\\n%s\\ngot\\n%s", pattern, line);
                free(line);
        }
        regfree(&re);
        if (!seen)
                fail_msg("no readable exec line of the marker on the terminal within 5 s");
        child_close(&c);
}

/* evmonctl status: its stdout (pretty JSON) parsed, and evmonctl's pid. */
static json_object *status_once(pid_t *ret_pid) {
        char *argv[] = { evmonctl, "status", "--socket", the_daemon.socket, NULL };
        _cleanup_(freep) char *out = NULL;
        struct child c;
        size_t len = 0;
        json_object *o;

        spawn(&c, 0, argv);
        *ret_pid = c.pid;
        for (char *line; (line = child_line(&c, 10000)); free(line)) {
                append(&out, &len, line, strlen(line));
                append(&out, &len, "\n", 1);
        }
        assert_int_equal(child_wait(&c, 10000), 0);
        child_close(&c);
        assert_non_null(out);
        o = json_tokener_parse(out);
        if (!o || !json_object_is_type(o, json_type_object))
                fail_msg("evmonctl status printed no JSON object:\n%s", out);
        assert_string_equal(itest_str(o, "type"), "status");
        return o;
}

static int64_t status_count(json_object *o, size_t i) {
        json_object *a, *v;

        assert_true(json_object_object_get_ex(o, "events", &a) && json_object_is_type(a, json_type_array));
        assert_true(json_object_object_get_ex(json_object_array_get_idx(a, i), "count", &v) &&
                    json_object_is_type(v, json_type_int));
        return json_object_get_int64(v);
}

static void test_status(void **state) {
        uint64_t end = now_ms() + 5000;
        json_object *o, *a;
        bool self = false;
        pid_t pid;

        /* One marker run: one exec and one exit, counted once the daemon
         * drained its rings (flush_ms 5). */
        run_marker();
        for (;;) {
                o = status_once(&pid);
                if (status_count(o, 0) > 0 && status_count(o, 1) > 0)
                        break;
                if (now_ms() >= end)
                        fail_msg("evmonctl status did not count the marker's exec and exit within 5 s: %s",
                                 json_object_to_json_string(o));
                json_object_put(o);
                usleep(50000);
        }

        assert_true(json_object_object_get_ex(o, "events", &a));
        assert_int_equal(json_object_array_length(a), 2);
        assert_string_equal(itest_str(json_object_array_get_idx(a, 0), "event"), "sched:sched_process_exec");
        assert_string_equal(itest_str(json_object_array_get_idx(a, 1), "event"), "sched:sched_process_exit");
        assert_int_equal(status_count(o, 0), 1);
        assert_int_equal(status_count(o, 1), 1);

        /* One ring per online CPU. */
        assert_true(json_object_object_get_ex(o, "cpus", &a) && json_object_is_type(a, json_type_array));
        assert_int_equal(json_object_array_length(a), sysconf(_SC_NPROCESSORS_ONLN));
        for (size_t i = 0; i < json_object_array_length(a); i++)
                assert_true(json_object_object_get_ex(json_object_array_get_idx(a, i), "lost", NULL));

        /* The ring settings it runs with: the config's, and the default idle period. */
        assert_true(json_object_object_get_ex(o, "ring", &a) && json_object_is_type(a, json_type_object));
        assert_int_equal(itest_int(a, "pages"), 16);
        assert_int_equal(itest_int(a, "flush_ms"), 5);
        assert_int_equal(itest_int(a, "idle_flush_ms"), 50);

        /* evmonctl itself is one of the clients. */
        assert_true(json_object_object_get_ex(o, "clients", &a) && json_object_is_type(a, json_type_array));
        for (size_t i = 0; i < json_object_array_length(a); i++)
                self = self || itest_int(json_object_array_get_idx(a, i), "pid") == pid;
        if (!self)
                fail_msg("evmonctl status (pid %d) is not among the clients: %s", (int) pid, json_object_to_json_string(a));
        json_object_put(o);
}

static int setup_daemon(void **state) {
        return itest_daemon_start(&the_daemon, daemon_config) == 0 ? 0 : -1;
}

static int teardown_daemon(void **state) {
        int status = itest_daemon_stop(&the_daemon);
        itest_daemon_cleanup(&the_daemon);
        /* A clean SIGTERM is exit 0. */
        return status == 0 ? 0 : -1;
}

static struct child activated = { .pid = -1, .out = -1, .err = -1 };

static int teardown_activated(void **state) {
        child_close(&activated);
        return 0;
}

static void test_socket_activation(void **state) {
        char ssa[PATH_MAX];
        _cleanup_(freep) char *sock = NULL, *config = NULL, *log = NULL;
        struct itest_client *cl;
        struct child *c = &activated;
        json_object *hello, *events;
        struct stat st;
        char buf[4096];
        size_t n_log = 0;
        ssize_t k;
        int status;

        if (!find_program("systemd-socket-activate", ssa, sizeof(ssa))) {
                fprintf(stderr, "SKIP: no systemd-socket-activate in PATH (package systemd)\n");
                skip();
        }
        assert_true(asprintf(&sock, "%s/activated.sock", tmpdir) >= 0);
        config = strdup(config_file("activated.json", daemon_config));
        assert_non_null(config);
        {
                char *argv[] = { ssa, "-l", sock, evmond, "--config", config, "--socket", sock, NULL };
                spawn(c, 0, argv);
        }
        /* systemd-socket-activate listens; evmond starts on the first
         * connection and gets the listening socket as fd 3. */
        for (int i = 0; i < 200 && stat(sock, &st) < 0; i++)
                usleep(25000);
        assert_int_equal(stat(sock, &st), 0);
        cl = calloc(1, sizeof(*cl));
        assert_non_null(cl);
        assert_int_equal(itest_client_connect(cl, sock), 0);
        hello = itest_client_expect(cl, "hello", 10000);
        if (!hello)
                fail_msg("no hello line on the activated socket");
        assert_true(json_object_object_get_ex(hello, "events", &events));
        assert_int_equal(json_object_array_length(events), 2);
        assert_string_equal(json_object_get_string(json_object_array_get_idx(events, 0)), "sched:sched_process_exec");
        json_object_put(hello);
        itest_client_close(cl);
        free(cl);

        /* systemd-socket-activate execs evmond in its place. */
        kill(c->pid, SIGTERM);
        status = child_wait(c, 10000);
        assert_int_equal(status, 0);
        while ((k = read(c->err, buf, sizeof(buf))) > 0)
                append(&log, &n_log, buf, (size_t) k);
        assert_non_null(log);
        if (!strstr(log, "Using the socket passed by systemd"))
                fail_msg("evmond did not say it took systemd's socket:\n%s", log);
        if (strstr(log, "ListenStream="))
                fail_msg("evmond warned of another path though --socket names systemd's:\n%s", log);
        /* The socket is systemd's: evmond leaves the file alone. */
        assert_int_equal(stat(sock, &st), 0);
        assert_true(S_ISSOCK(st.st_mode));
        child_close(c);
        unlink(sock);
}

/* socket.path (or --socket) naming another socket than the one systemd
 * passes: evmond serves systemd's and says where to change it, or an
 * admin who edits only the config sees nothing change. */
static void test_socket_activation_other_path(void **state) {
        char ssa[PATH_MAX];
        _cleanup_(freep) char *sock = NULL, *other = NULL, *config = NULL, *log = NULL;
        struct itest_client *cl;
        struct child *c = &activated;
        json_object *hello;
        struct stat st;
        char buf[4096];
        size_t n_log = 0;
        ssize_t k;

        if (!find_program("systemd-socket-activate", ssa, sizeof(ssa))) {
                fprintf(stderr, "SKIP: no systemd-socket-activate in PATH (package systemd)\n");
                skip();
        }
        assert_true(asprintf(&sock, "%s/activated.sock", tmpdir) >= 0);
        assert_true(asprintf(&other, "%s/configured.sock", tmpdir) >= 0);
        config = strdup(config_file("activated.json", daemon_config));
        assert_non_null(config);
        {
                char *argv[] = { ssa, "-l", sock, evmond, "--config", config, "--socket", other, NULL };
                spawn(c, 0, argv);
        }
        for (int i = 0; i < 200 && stat(sock, &st) < 0; i++)
                usleep(25000);
        assert_int_equal(stat(sock, &st), 0);
        cl = calloc(1, sizeof(*cl));
        assert_non_null(cl);
        assert_int_equal(itest_client_connect(cl, sock), 0);
        hello = itest_client_expect(cl, "hello", 10000);
        if (!hello)
                fail_msg("no hello line on the activated socket");
        json_object_put(hello);
        itest_client_close(cl);
        free(cl);
        kill(c->pid, SIGTERM);
        assert_int_equal(child_wait(c, 10000), 0);
        while ((k = read(c->err, buf, sizeof(buf))) > 0)
                append(&log, &n_log, buf, (size_t) k);
        assert_non_null(log);
        if (!strstr(log, "ListenStream=") || !strstr(log, sock) || !strstr(log, other))
                fail_msg("evmond did not say that systemd's socket is not socket.path's:\n%s", log);
        assert_int_not_equal(stat(other, &st), 0);
        child_close(c);
        unlink(sock);
}

/* ---- units and installed layout -------------------------------------------- */

static bool file_has_line(const char *text, const char *line) {
        size_t n = strlen(line);
        for (const char *p = text; (p = strstr(p, line)); p += n)
                if ((p == text || p[-1] == '\n') && (p[n] == '\n' || p[n] == 0))
                        return true;
        return false;
}

static void test_units_verify(void **state) {
        char analyze[PATH_MAX];
        _cleanup_(freep) char *service_in = NULL, *socket_in = NULL, *service = NULL, *socket = NULL, *dir = NULL;
        _cleanup_(freep) char *p = NULL, *conf_path = NULL, *error = NULL;
        struct config *cfg = NULL;
        struct result r;
        char *exec;

        assert_true(asprintf(&p, "%s/systemd/evmond.service", build_root) >= 0);
        service_in = read_file(p);
        assert_non_null(service_in);
        free(p);
        assert_true(asprintf(&p, "%s/systemd/evmond.socket", source_root) >= 0);
        socket_in = read_file(p);
        assert_non_null(socket_in);

        /* What README.md promises of the units. */
        assert_true(file_has_line(service_in, "Type=notify"));
        assert_non_null(strstr(service_in, "\nWatchdogSec="));
        assert_non_null(strstr(service_in, "\nExecReload=/bin/kill -HUP $MAINPID\n"));
        assert_true(file_has_line(service_in, "Wants=evmond.socket"));
        /* A restarted socket takes evmond with it (vm-systemd proves it). */
        assert_true(file_has_line(service_in, "PartOf=evmond.socket"));
        /* dh_compress gzips the README and forward.md: name the man pages. */
        assert_null(strstr(service_in, "Documentation=file:"));
        /* Probes go even after SIGKILL (README, Probes). */
        assert_non_null(strstr(service_in, "\nExecStopPost="));
        assert_non_null(strstr(service_in, "/evmond --cleanup\n"));
        {
                /* Every @var@ substituted (SystemCallFilter=@set stays). */
                regex_t re;
                assert_int_equal(regcomp(&re, "@[A-Za-z_]+@", REG_EXTENDED | REG_NOSUB), 0);
                if (regexec(&re, service_in, 0, NULL, 0) == 0)
                        fail_msg("evmond.service has an unsubstituted @variable@:\n%s", service_in);
                regfree(&re);
        }
        assert_true(file_has_line(socket_in, "SocketMode=0660"));
        assert_true(file_has_line(socket_in, "SocketUser=root"));
        assert_true(file_has_line(socket_in, "SocketGroup=evmon"));
        /* The socket systemd makes is the one evmond and the shipped config
         * use when they are not told otherwise. */
        assert_true(file_has_line(socket_in, "ListenStream=" EVMON_SOCKET_PATH_DEFAULT));
        assert_true(asprintf(&conf_path, "%s/conf/evmond.json", source_root) >= 0);
        assert_int_equal(config_load(conf_path, &cfg, &error), 0);
        assert_string_equal(cfg->socket_path, EVMON_SOCKET_PATH_DEFAULT);
        assert_string_equal(cfg->socket_group, "evmon");
        assert_int_equal(cfg->socket_mode, 0660);
        config_free(cfg);

        if (!find_program("systemd-analyze", analyze, sizeof(analyze))) {
                fprintf(stderr, "SKIP: no systemd-analyze in PATH (package systemd)\n");
                skip();
        }
        /* ExecStart= and ExecStopPost= name the installed path; verify
         * checks that it is an executable, so point them at the built one. */
        assert_non_null(exec = strstr(service_in, "\nExecStart="));
        exec += strlen("\nExecStart=");
        assert_true(asprintf(&dir, "%s/units", tmpdir) >= 0);
        assert_true(mkdir(dir, 0755) == 0 || errno == EEXIST);
        assert_true(asprintf(&service, "%s/evmond.service", dir) >= 0);
        assert_true(asprintf(&socket, "%s/evmond.socket", dir) >= 0);
        {
                _cleanup_(freep) char *installed = strndup(exec, strcspn(exec, "\n"));
                _cleanup_(freep) char *text = NULL;
                size_t n = 0;
                FILE *f = open_memstream(&text, &n);

                assert_non_null(installed);
                assert_non_null(f);
                for (const char *q = service_in, *hit; *q; q = hit + strlen(installed)) {
                        hit = strstr(q, installed);
                        if (!hit) {
                                fputs(q, f);
                                break;
                        }
                        fprintf(f, "%.*s%s", (int) (hit - q), q, evmond);
                }
                assert_int_equal(fclose(f), 0);
                write_file(service, text);
        }
        write_file(socket, socket_in);
        /* verify runs man(1) on each Documentation=man:PAGE(N): the built
         * pages, in the man/manN layout MANPATH wants. */
        {
                static const char *const pages[] = { "evmond.8", "evmond.json.5", "evmonctl.1" };
                _cleanup_(freep) char *mandir = NULL;

                assert_true(asprintf(&mandir, "%s/man", dir) >= 0);
                assert_true(mkdir(mandir, 0755) == 0 || errno == EEXIST);
                for (size_t i = 0; i < sizeof(pages) / sizeof(pages[0]); i++) {
                        _cleanup_(freep) char *sub = NULL, *src = NULL, *dst = NULL, *text = NULL;

                        assert_true(asprintf(&sub, "%s/man%c", mandir, pages[i][strlen(pages[i]) - 1]) >= 0);
                        assert_true(mkdir(sub, 0755) == 0 || errno == EEXIST);
                        assert_true(asprintf(&src, "%s/man/%s", build_root, pages[i]) >= 0);
                        assert_true(asprintf(&dst, "%s/%s", sub, pages[i]) >= 0);
                        assert_non_null(text = read_file(src));
                        write_file(dst, text);
                }
                assert_int_equal(setenv("MANPATH", mandir, 1), 0);
        }
        run(&r, 0, analyze, "verify", service, socket, NULL);
        unsetenv("MANPATH");
        if (r.status != 0 && (strstr(r.err, "Failed to connect to bus") || strstr(r.err, "not been booted with systemd"))) {
                fprintf(stderr, "SKIP: systemd-analyze verify needs a running systemd here: %s\n", r.err);
                result_done(&r);
                skip();
        }
        /* systemd-analyze warns about unknown keys and bad values but still
         * exits 0: a clean unit is one it has nothing to say about. */
        if (r.status != 0 || *r.err || *r.out)
                fail_msg("systemd-analyze verify evmond.service evmond.socket: exit %d\n%s%s", r.status, r.out, r.err);
        result_done(&r);
}

static void check_installed(const char *dest, const char *rel, mode_t exec) {
        _cleanup_(freep) char *p = NULL;
        struct stat st;

        assert_true(asprintf(&p, "%s%s", dest, rel) >= 0);
        if (stat(p, &st) < 0 || !S_ISREG(st.st_mode))
                fail_msg("meson install did not put %s in place", rel);
        if (exec && (st.st_mode & exec) != exec)
                fail_msg("%s is not executable (mode %o)", rel, st.st_mode & 07777);
}

/* meson setup --prefix=/usr --sysconfdir=/etc, meson install --destdir:
 * the files README.md's "Install as a service" promises, where a Debian
 * system looks for them. */
static void test_install_layout(void **state) {
        char meson[PATH_MAX], ninja[PATH_MAX], pkgconfig[PATH_MAX];
        _cleanup_(freep) char *build = NULL, *dest = NULL, *unitdir = NULL, *sysusersdir = NULL, *p = NULL;
        _cleanup_(freep) char *service = NULL;
        struct result r;

        if (!find_program("meson", meson, sizeof(meson)) || !find_program("ninja", ninja, sizeof(ninja))) {
                fprintf(stderr, "SKIP: meson or ninja not in PATH\n");
                skip();
        }
        assert_true(asprintf(&build, "%s/build", tmpdir) >= 0);
        assert_true(asprintf(&dest, "%s/dest", tmpdir) >= 0);
        run(&r, 0, meson, "setup", build, source_root, "--prefix=/usr", "--sysconfdir=/etc", NULL);
        expect_status(&r, 0, "meson setup");
        result_done(&r);
        /* Only what is installed; the tests are not. */
        run(&r, 0, ninja, "-C", build, "evmond", "evmonctl", "src/forward/evmon-forward", "evmon-symbolizer",
            "man/evmond.8", "man/evmonctl.1", "man/evmond.json.5", "man/evmon-forward.1", NULL);
        expect_status(&r, 0, "ninja evmond evmonctl evmon-forward evmon-symbolizer and the man pages");
        result_done(&r);
        run(&r, 0, meson, "install", "-C", build, "--destdir", dest, "--no-rebuild", NULL);
        expect_status(&r, 0, "meson install --destdir");
        result_done(&r);

        /* Where systemd on this system reads units and sysusers.d. */
        unitdir = strdup("/usr/lib/systemd/system");
        sysusersdir = strdup("/usr/lib/sysusers.d");
        if (find_program("pkg-config", pkgconfig, sizeof(pkgconfig))) {
                run(&r, 0, pkgconfig, "--variable=systemdsystemunitdir", "systemd", NULL);
                if (r.status == 0 && r.out[0] == '/') {
                        free(unitdir);
                        unitdir = strndup(r.out, strcspn(r.out, "\n"));
                }
                result_done(&r);
                run(&r, 0, pkgconfig, "--variable=sysusersdir", "systemd", NULL);
                if (r.status == 0 && r.out[0] == '/') {
                        free(sysusersdir);
                        sysusersdir = strndup(r.out, strcspn(r.out, "\n"));
                }
                result_done(&r);
        }

        check_installed(dest, "/usr/sbin/evmond", 0111);
        check_installed(dest, "/usr/bin/evmonctl", 0111);
        check_installed(dest, "/usr/bin/evmon-forward", 0111);
        /* Where evmond looks for it (EVMON_SYMBOLIZER_PATH, from libexecdir). */
        check_installed(dest, "/usr/libexec/evmon/evmon-symbolizer", 0111);
        check_installed(dest, "/etc/evmon/evmond.json", 0);
        check_installed(dest, "/usr/share/man/man8/evmond.8", 0);
        check_installed(dest, "/usr/share/man/man1/evmonctl.1", 0);
        check_installed(dest, "/usr/share/man/man5/evmond.json.5", 0);
        check_installed(dest, "/usr/share/man/man1/evmon-forward.1", 0);
        /* Where bash-completion looks (its completionsdir, under the prefix). */
        check_installed(dest, "/usr/share/bash-completion/completions/evmonctl", 0);
        assert_true(asprintf(&p, "%s/evmon-forward.service", unitdir) >= 0);
        check_installed(dest, p, 0);
        free(p);
        assert_true(asprintf(&p, "%s/evmond.service", unitdir) >= 0);
        check_installed(dest, p, 0);
        free(p);
        assert_true(asprintf(&p, "%s%s/evmond.service", dest, unitdir) >= 0);
        service = read_file(p);
        assert_non_null(service);
        /* The unit runs the installed daemon. */
        assert_true(file_has_line(service, "ExecStart=/usr/sbin/evmond"));
        free(p);
        assert_true(asprintf(&p, "%s/evmond.socket", unitdir) >= 0);
        check_installed(dest, p, 0);
        free(p);
        assert_true(asprintf(&p, "%s/evmon.conf", sysusersdir) >= 0);
        check_installed(dest, p, 0);
        free(p);
        {
                _cleanup_(freep) char *sysusers = NULL;
                assert_true(asprintf(&p, "%s%s/evmon.conf", dest, sysusersdir) >= 0);
                sysusers = read_file(p);
                assert_non_null(sysusers);
                assert_non_null(strstr(sysusers, "\ng evmon "));
        }
        /* The installed programs run. */
        free(p);
        assert_true(asprintf(&p, "%s/usr/sbin/evmond", dest) >= 0);
        run(&r, 0, p, "--version", NULL);
        expect_status(&r, 0, "installed evmond --version");
        result_done(&r);
        free(p);
        p = NULL;
}

/* ---- main ----------------------------------------------------------------- */

static void paths_setup(void) {
        const char *s = getenv("EVMON_SOURCE_ROOT"), *b = getenv("EVMON_BUILD_ROOT");

        if (!s || !b) {
                fprintf(stderr, "EVMON_SOURCE_ROOT and EVMON_BUILD_ROOT must be set (meson test sets them)\n");
                exit(1);
        }
        snprintf(source_root, sizeof(source_root), "%s", s);
        snprintf(build_root, sizeof(build_root), "%s", b);
        snprintf(evmond, sizeof(evmond), "%s/evmond", b);
        snprintf(evmonctl, sizeof(evmonctl), "%s/evmonctl", b);
        snprintf(forward, sizeof(forward), "%s/src/forward/evmon-forward", b);
        snprintf(tree, sizeof(tree), "%s/tests/tracefs/fixtures/tree", s);
        strcpy(tmpdir, "/tmp/evmon-test-cli-XXXXXX");
        if (!mkdtemp(tmpdir) || chmod(tmpdir, 0755) < 0) {
                perror("mkdtemp");
                exit(1);
        }
}

int main(int argc, char **argv) {
        const char *mode = argc > 1 ? argv[1] : "";
        int r;

        signal(SIGPIPE, SIG_IGN);
        if (strcmp(mode, "root") == 0) {
                /* Exits 77 with the reason when we are not root or tracefs
                 * lacks these. */
                static const char *const need[] = { "sched/sched_process_exec", "sched/sched_process_exit", NULL };
                itest_require(need);
        }
        paths_setup();
        if (strcmp(mode, "root") == 0) {
                const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_check_config_good),
                        cmocka_unit_test(test_unprivileged_tracefs),
                        cmocka_unit_test(test_ring_over_memlock),
                        cmocka_unit_test(test_list_describe_real),
                        cmocka_unit_test_setup_teardown(test_watch_json, setup_daemon, teardown_daemon),
                        cmocka_unit_test_setup_teardown(test_watch_subscribe, setup_daemon, teardown_daemon),
                        cmocka_unit_test_setup_teardown(test_watch_terminal, setup_daemon, teardown_daemon),
                        cmocka_unit_test_setup_teardown(test_status, setup_daemon, teardown_daemon),
                        cmocka_unit_test_teardown(test_socket_activation, teardown_activated),
                        cmocka_unit_test_teardown(test_socket_activation_other_path, teardown_activated),
                };

                char cmd[PATH_MAX + 64];

                snprintf(marker_name, sizeof(marker_name), "evcli-%s", tmpdir + strlen(tmpdir) - 6);
                snprintf(daemon_config, sizeof(daemon_config),
                         "// test-cli\n"
                         "{\n"
                         "  \"ring\": {\"pages\": 16, \"flush_ms\": 5},\n"
                         "  \"events\": [\n"
                         "    {\"tracepoint\": \"sched:sched_process_exec\", \"filter\": \"filename ~ \\\"*/%s\\\"\"},\n"
                         "    {\"tracepoint\": \"sched:sched_process_exit\", \"filter\": \"comm == \\\"%s\\\"\"}\n"
                         "  ]\n"
                         "}\n", marker_name, marker_name);
                snprintf(marker, sizeof(marker), "%s/%s", tmpdir, marker_name);
                snprintf(cmd, sizeof(cmd), "cp /bin/true '%s'", marker);
                if (system(cmd) != 0) {
                        fprintf(stderr, "cannot copy /bin/true to %s\n", marker);
                        rm_rf(tmpdir);
                        return 1;
                }
                r = cmocka_run_group_tests_name("cli-root", tests, NULL, NULL);
        } else if (strcmp(mode, "units") == 0) {
                const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_units_verify),
                        cmocka_unit_test(test_install_layout),
                };
                r = cmocka_run_group_tests_name("cli-units", tests, NULL, NULL);
        } else {
                const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_evmond_help),
                        cmocka_unit_test(test_evmonctl_help),
                        cmocka_unit_test(test_bad_options),
                        cmocka_unit_test(test_check_config_bad),
                        cmocka_unit_test(test_check_config_bad_unprivileged),
                        cmocka_unit_test(test_check_config_missing_file),
                        cmocka_unit_test(test_check_config_no_perf_event_open),
                        cmocka_unit_test(test_list_fixture),
                        cmocka_unit_test(test_describe_fixture),
                        cmocka_unit_test(test_describe_perf),
                        cmocka_unit_test(test_describe_missing),
                        cmocka_unit_test(test_no_daemon),
                        cmocka_unit_test(test_answer_behind_lines),
                        cmocka_unit_test(test_not_evmond),
                        cmocka_unit_test(test_watch_refused),
                        cmocka_unit_test(test_watch_before_subscribed),
                        cmocka_unit_test(test_request_subscribes_to_nothing),
                        cmocka_unit_test(test_watch_long_line),
                        cmocka_unit_test(test_decode_stdin_terminal),
                        cmocka_unit_test(test_socket_not_socket),
                        cmocka_unit_test(test_watch_stdout),
                };
                r = cmocka_run_group_tests_name("cli", tests, NULL, NULL);
        }
        rm_rf(tmpdir);
        return r;
}
