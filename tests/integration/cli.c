/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the test-cli-* programs share: running the built programs and
 * reading what they print, files in a temp dir, the paths of the build. */

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

#include "cli.h"
#include "evmon/cleanup.h"
#include "evmon/io.h"
#include "itest.h"

char evmond[PATH_MAX], evmonctl[PATH_MAX], forward[PATH_MAX], tree[PATH_MAX], source_root[PATH_MAX], build_root[PATH_MAX];
char tmpdir[64];

uint64_t now_ms(void) {
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

void spawn(struct child *c, unsigned flags, char *const argv[]) {
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
int child_wait(struct child *c, int timeout_ms) {
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

void child_close(struct child *c) {
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

void append(char **s, size_t *len, const char *data, size_t n) {
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
void runv(struct result *r, unsigned flags, char *const argv[]) {
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

void run(struct result *r, unsigned flags, const char *arg0, ...) {
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

void result_done(struct result *r) {
        free(r->out);
        free(r->err);
        r->out = r->err = NULL;
}

void expect_status(const struct result *r, int status, const char *what) {
        if (r->status != status)
                fail_msg("%s: exit status %d, wanted %d\nstdout:\n%s\nstderr:\n%s", what, r->status, status, r->out, r->err);
}

/* The next line of the child's stdout without its end (caller frees), or
 * NULL after TIMEOUT_MS or at EOF. */
char *child_line(struct child *c, int timeout_ms) {
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

bool find_program(const char *name, char *buf, size_t size) {
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

char *read_file(const char *path) {
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

void write_file(const char *path, const char *text) {
        FILE *f = fopen(path, "we");
        assert_non_null(f);
        assert_true(fputs(text, f) >= 0);
        assert_int_equal(fclose(f), 0);
        assert_int_equal(chmod(path, 0644), 0);
}

/* A config file in our temp dir (readable by nobody). */
const char *config_file(const char *name, const char *text) {
        static char path[8][PATH_MAX];
        static unsigned next;
        char *p = path[next++ % ELEMENTSOF(path)];

        snprintf(p, PATH_MAX, "%s/%s", tmpdir, name);
        write_file(p, text);
        return p;
}

void rm_rf(const char *dir) {
        char cmd[PATH_MAX + 16];
        if (!*dir)
                return;
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        (void) system(cmd);
}

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

void cli_setup(void) {
        signal(SIGPIPE, SIG_IGN);
        paths_setup();
}

int cli_run(const char *name, const struct CMUnitTest *tests, size_t n) {
        int r = _cmocka_run_group_tests(name, tests, n, NULL, NULL);

        rm_rf(tmpdir);
        return r;
}
