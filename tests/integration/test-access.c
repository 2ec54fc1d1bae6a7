/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Who may talk to evmond, and what evmond may still do. With socket.group
 * set to a temporary group and mode 0660: the socket file has that mode
 * and group, a user outside the group gets EACCES, a member gets the
 * hello line, and the daemon logs each peer's pid and uid; clients.max
 * turns the next client away with an error line. After start-up evmond
 * holds exactly CAP_PERFMON and CAP_DAC_READ_SEARCH (effective, permitted
 * and bounding set) with no_new_privs, and a reload that adds a
 * tracepoint still works. Last, evmond runs under the capability bounding
 * set of systemd/evmond.service.in with a read-only file system and no
 * network, as the unit would run it. */

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "itest.h"

#define GETPGID "syscalls:sys_enter_getpgid"
#define GETSID "syscalls:sys_enter_getsid"
#define ARG_PGID 77004
#define ARG_SID 77005
#define N_CALLS 2000
#define NOBODY 65534
#define CLIENTS_MAX 3

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif

static struct itest_daemon daemon_ = { .pid = -1 };
static struct itest_daemon fds_ = { .pid = -1 };   /* test_out_of_fds's own */
static char setpriv[600];        /* util-linux's, found in $PATH */
static char group[64];
static gid_t gid;

static void config_text(char *buf, size_t size, bool with_getsid) {
        snprintf(buf, size,
                 "{\n"
                 "  \"socket\": {\"mode\": \"0660\", \"group\": \"%s\"},\n"
                 "  \"clients\": {\"max\": %d},\n"
                 "  \"events\": [\n"
                 "    {\"tracepoint\": \"" GETPGID "\", \"filter\": \"pid == %d\"}%s\n"
                 "  ]\n"
                 "}\n", group, CLIENTS_MAX, ARG_PGID,
                 with_getsid ? ",\n    {\"tracepoint\": \"" GETSID "\", \"filter\": \"pid == 77005\"}" : "");
}

static int group_setup(void **state) {
        const char *argv[] = { "groupadd", "--system", group, NULL };
        struct group *g;
        char *out = NULL;
        int r;

        snprintf(group, sizeof(group), "evmontest%d", (int) getpid());
        r = itest_run(argv, 20000, &out);
        if (r != 0) {
                fprintf(stderr, "groupadd %s failed (%d): %s\n", group, r, out ? out : "");
                free(out);
                group[0] = 0;
                return -1;
        }
        free(out);
        g = getgrnam(group);
        if (!g)
                return -1;
        gid = g->gr_gid;
        return 0;
}

static int group_teardown(void **state) {
        itest_daemon_cleanup(&daemon_);
        itest_daemon_cleanup(&fds_);
        if (group[0]) {
                const char *argv[] = { "groupdel", group, NULL };
                (void) itest_run(argv, 20000, NULL);
        }
        return 0;
}

static void start_daemon(void) {
        struct itest_daemon_opts opts = { .log_to_file = true };
        char config[1024];

        config_text(config, sizeof(config), false);
        assert_int_equal(itest_daemon_start_opts(&daemon_, config, &opts), 0);
        /* The test's directory stands for /run/evmon (0755): the socket's
         * own mode and group decide who connects. */
        assert_int_equal(chmod(daemon_.dir, 0755), 0);
}

static char *read_file(const char *path) {
        char *text = NULL;
        FILE *f = fopen(path, "re");
        size_t n = 0;

        assert_non_null(f);
        assert_true(getdelim(&text, &n, 0, f) >= 0);
        fclose(f);
        return text;
}

/* Runs FN in a child as uid/gid 65534 with supplementary groups GROUPS
 * (N of them); returns its exit status. */
static int as_nobody(const gid_t *groups, size_t n, int (*fn)(void), pid_t *ret_pid) {
        int status;
        pid_t pid = fork();

        assert_true(pid >= 0);
        if (pid == 0) {
                if (setgroups(n, groups) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
                    setresuid(NOBODY, NOBODY, NOBODY) < 0)
                        _exit(100);
                _exit(fn());
        }
        if (ret_pid)
                *ret_pid = pid;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        return WEXITSTATUS(status);
}

/* 0: connected and got the hello line; 13: EACCES; others: trouble. */
static int try_connect(void) {
        struct itest_client *c = calloc(1, sizeof(*c));
        json_object *o;
        int r;

        if (!c)
                return 2;
        r = itest_client_connect(c, daemon_.socket);
        if (r == -EACCES)
                return 13;
        if (r < 0) {
                fprintf(stderr, "connect: %s\n", strerror(-r));
                return 3;
        }
        o = itest_client_next(c, 5000);
        r = o && strcmp(itest_str(o, "type"), "hello") == 0 ? 0 : 4;
        json_object_put(o);
        itest_client_close(c);
        free(c);
        return r;
}

static void test_socket_mode_and_group(void **state) {
        struct stat st;

        start_daemon();
        assert_int_equal(stat(daemon_.socket, &st), 0);
        assert_true(S_ISSOCK(st.st_mode));
        assert_int_equal(st.st_mode & 07777, 0660);
        assert_int_equal(st.st_uid, 0);
        assert_int_equal(st.st_gid, gid);
}

static void test_outsider_is_refused(void **state) {
        char evmonctl[512], cmd[1024], *out = NULL;
        const char *sh[] = { "sh", "-c", cmd, NULL };

        assert_int_equal(as_nobody(NULL, 0, try_connect, NULL), 13);
        /* The same through setpriv and evmonctl, as an operator would. */
        snprintf(cmd, sizeof(cmd), "%s --reuid=%d --regid=%d --clear-groups %s --socket %s status",
                 setpriv, NOBODY, NOBODY, itest_build_path("evmonctl", evmonctl, sizeof(evmonctl)), daemon_.socket);
        assert_int_equal(itest_run(sh, 10000, &out), 1);
        fprintf(stderr, "%s", out);
        assert_non_null(strstr(out, "Permission denied"));
        free(out);
}

static void test_member_is_served_and_logged(void **state) {
        char evmonctl[512], cmd[1024], want[128], *out = NULL, *log;
        const char *sh[] = { "sh", "-c", cmd, NULL };
        pid_t pid;

        assert_int_equal(as_nobody(&gid, 1, try_connect, &pid), 0);
        snprintf(cmd, sizeof(cmd), "%s --reuid=%d --regid=%d --groups=%u %s --socket %s status",
                 setpriv, NOBODY, NOBODY, (unsigned) gid, itest_build_path("evmonctl", evmonctl, sizeof(evmonctl)), daemon_.socket);
        assert_int_equal(itest_run(sh, 10000, &out), 0);
        assert_non_null(strstr(out, "\"type\": \"status\""));
        free(out);

        /* SO_PEERCRED, logged. */
        usleep(100000);
        log = read_file(daemon_.log);
        snprintf(want, sizeof(want), "connected: pid %d, uid %d, gid %d", (int) pid, NOBODY, NOBODY);
        if (!strstr(log, want))
                fail_msg("the log lacks \"%s\":\n%s", want, log);
        free(log);
}

/* Clients the daemon counts, asked through C. */
static size_t n_clients(struct itest_client *c) {
        json_object *o, *a;
        size_t n;

        o = itest_client_status(c, 5000);
        assert_non_null(o);
        assert_true(json_object_object_get_ex(o, "clients", &a));
        n = json_object_array_length(a);
        json_object_put(o);
        return n;
}

static void test_clients_max(void **state) {
        struct itest_client *c[CLIENTS_MAX + 1];
        json_object *o;
        char *log;
        int i;

        for (i = 0; i <= CLIENTS_MAX; i++) {
                c[i] = calloc(1, sizeof(*c[i]));
                assert_non_null(c[i]);
        }
        assert_int_equal(itest_client_connect(c[0], daemon_.socket), 0);
        json_object_put(itest_client_expect(c[0], "hello", 5000));
        /* Earlier tests' clients are gone before we count. */
        for (i = 0; i < 50 && n_clients(c[0]) != 1; i++)
                usleep(100000);
        assert_int_equal(n_clients(c[0]), 1);
        for (i = 1; i < CLIENTS_MAX; i++) {
                assert_int_equal(itest_client_connect(c[i], daemon_.socket), 0);
                o = itest_client_next(c[i], 5000);
                assert_non_null(o);
                assert_string_equal(itest_str(o, "type"), "hello");
                json_object_put(o);
        }

        /* One too many: an error line, then the connection is closed. */
        assert_int_equal(itest_client_connect(c[CLIENTS_MAX], daemon_.socket), 0);
        o = itest_client_next(c[CLIENTS_MAX], 5000);
        assert_non_null(o);
        assert_string_equal(itest_str(o, "type"), "error");
        assert_non_null(strstr(itest_str(o, "error"), "clients.max"));
        json_object_put(o);
        assert_null(itest_client_next(c[CLIENTS_MAX], 2000));
        itest_client_close(c[CLIENTS_MAX]);
        assert_int_equal(n_clients(c[0]), CLIENTS_MAX);

        /* When one leaves, the next is served at once: evmond handles the
         * hangup before the new connection. */
        itest_client_close(c[1]);
        assert_int_equal(itest_client_connect(c[CLIENTS_MAX], daemon_.socket), 0);
        o = itest_client_next(c[CLIENTS_MAX], 5000);
        assert_non_null(o);
        assert_string_equal(itest_str(o, "type"), "hello");
        json_object_put(o);

        log = read_file(daemon_.log);
        assert_non_null(strstr(log, "Refused a client"));
        free(log);
        for (i = 0; i <= CLIENTS_MAX; i++) {
                itest_client_close(c[i]);
                free(c[i]);
        }
}

/* The lowest fd number PID does not have open: where its next fd goes. */
static int lowest_free_fd(pid_t pid) {
        char path[64];
        struct stat st;
        int fd = 0;

        for (;; fd++) {
                snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int) pid, fd);
                if (lstat(path, &st) < 0)
                        return fd;
        }
}

/* Out of fds, evmond cannot take a waiting connection; it pauses
 * accepting rather than spin on the socket that stays readable (it used to
 * log the failure ~300,000 times a second), and serves the connection
 * once a client leaves. */
static void test_out_of_fds(void **state) {
        struct itest_daemon_opts opts = { .log_to_file = true };
        struct itest_daemon *d = &fds_;
        struct itest_client *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
        struct rlimit rl;
        uint64_t before, after, run_before, run_after;
        size_t warnings = 0;
        json_object *o;
        char *log;

        /* Filtered to no process: another test's getpgid() calls beside
         * this one would wake evmond, counted as its timeslices below. */
        assert_int_equal(itest_daemon_start_opts(d, "{\"events\": [{\"tracepoint\": \"" GETPGID "\", "
                                                    "\"filter\": \"pid == 77046\"}]}", &opts), 0);
        /* A's hello comes from the loop: evmond has finished starting, and
         * the fds it opened on the way are closed. */
        assert_int_equal(itest_client_connect(a, d->socket), 0);
        o = itest_client_next(a, 5000);
        assert_non_null(o);
        json_object_put(o);
        /* No room for another fd (those it inherited above the lowest free
         * one stay open, and taken). */
        rl.rlim_cur = rl.rlim_max = (rlim_t) lowest_free_fd(d->pid);
        assert_int_equal(prlimit(d->pid, RLIMIT_NOFILE, &rl, NULL), 0);

        /* B waits in the kernel's queue: evmond cannot take it. */
        assert_int_equal(itest_client_connect(b, d->socket), 0);
        assert_null(itest_client_next(b, 1000));

        before = itest_timeslices(d->pid, &run_before);
        usleep(1000000);
        after = itest_timeslices(d->pid, &run_after);
        fprintf(stderr, "out of fds: %" PRIu64 " timeslices, %" PRIu64 " us of CPU in 1 s\n", after - before,
                (run_after - run_before) / 1000);
        assert_true(after - before < 60);
        assert_true(run_after - run_before < 100000000);

        /* A leaves: B gets its hello. */
        itest_client_close(a);
        o = itest_client_next(b, 5000);
        assert_non_null(o);
        assert_string_equal(itest_str(o, "type"), "hello");
        json_object_put(o);

        log = read_file(d->log);
        for (const char *p = log; (p = strstr(p, "pausing new connections")); p++)
                warnings++;
        fprintf(stderr, "out of fds: %zu warnings\n", warnings);
        assert_true(warnings >= 1 && warnings <= 4);
        free(log);
        itest_client_close(b);
        free(a);
        free(b);
        assert_int_equal(itest_daemon_stop(d), 0);
}

/* The hex value of KEY in /proc/PID/status. */
static uint64_t proc_status_hex(pid_t pid, const char *key) {
        char path[64], *text, *p;
        uint64_t v;

        snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
        text = read_file(path);
        p = strstr(text, key);
        assert_non_null(p);
        v = strtoull(p + strlen(key) + 1, NULL, 16);
        free(text);
        return v;
}

#define CAP_BIT_DAC_READ_SEARCH (UINT64_C(1) << 2)
#define CAP_BIT_SYS_ADMIN (UINT64_C(1) << 21)

static uint64_t expected_caps(void) {
        char *text = read_file("/proc/sys/kernel/cap_last_cap");
        int last = atoi(text), paranoid;

        free(text);
        text = read_file("/proc/sys/kernel/perf_event_paranoid");
        paranoid = atoi(text);
        free(text);
        /* Without CAP_PERFMON (before Linux 5.8) perf takes CAP_SYS_ADMIN,
         * and so it does on Debian's kernels at perf_event_paranoid 3. */
        if (last < CAP_PERFMON)
                return CAP_BIT_SYS_ADMIN | CAP_BIT_DAC_READ_SEARCH;
        return (UINT64_C(1) << CAP_PERFMON) | CAP_BIT_DAC_READ_SEARCH | (paranoid > 2 ? CAP_BIT_SYS_ADMIN : 0);
}

static void assert_dropped(pid_t pid) {
        uint64_t want = expected_caps();

        fprintf(stderr, "evmond %d: CapEff %#" PRIx64 " CapPrm %#" PRIx64 " CapBnd %#" PRIx64 " CapInh %#" PRIx64
                " CapAmb %#" PRIx64 " NoNewPrivs %" PRIu64 " (want %#" PRIx64 ")\n", (int) pid,
                proc_status_hex(pid, "CapEff:"), proc_status_hex(pid, "CapPrm:"), proc_status_hex(pid, "CapBnd:"),
                proc_status_hex(pid, "CapInh:"), proc_status_hex(pid, "CapAmb:"), proc_status_hex(pid, "NoNewPrivs:"), want);
        assert_int_equal(proc_status_hex(pid, "CapEff:"), want);
        assert_int_equal(proc_status_hex(pid, "CapPrm:"), want);
        assert_int_equal(proc_status_hex(pid, "CapBnd:"), want);
        assert_int_equal(proc_status_hex(pid, "CapInh:"), 0);
        assert_int_equal(proc_status_hex(pid, "CapAmb:"), 0);
        assert_int_equal(proc_status_hex(pid, "NoNewPrivs:"), 1);
}

static void test_capabilities_after_start(void **state) {
        assert_dropped(daemon_.pid);
}

/* N_CALLS calls of NR(ARG) arrive at C exactly as EVENT. */
static void assert_calls_arrive(struct itest_client *c, long nr, long arg, const char *event) {
        struct itest_tally t = {};
        pid_t pid = itest_tally_calls(c, nr, arg, N_CALLS, &t);

        int64_t got = itest_tally_get(&t, pid, event);

        if (got > N_CALLS || got + t.lost < N_CALLS) {
                /* A second connection: C's own may be the one stuck. */
                struct itest_client *s = calloc(1, sizeof(*s));
                json_object *o = NULL;

                if (s && itest_client_connect(s, daemon_.socket) == 0 &&
                    itest_client_send(s, "{\"type\":\"status\"}\n") == 0)
                        o = itest_client_expect(s, "status", 5000);
                fail_msg("%d calls of %s: %" PRId64 " events arrived, %" PRId64 " reported lost, %" PRId64
                         " dropped; evmond's status now: %s", N_CALLS, event, got, t.lost, t.dropped,
                         o ? json_object_to_json_string(o) : "(none)");
        }
        itest_tally_done(&t);
}

/* Writes the config with getsid added and reloads through C. */
static void reload_adding_getsid(struct itest_daemon *d, struct itest_client *c) {
        char config[1024];
        json_object *o;
        FILE *f;

        config_text(config, sizeof(config), true);
        f = fopen(d->config, "we");
        assert_non_null(f);
        fputs(config, f);
        assert_int_equal(fclose(f), 0);
        assert_int_equal(itest_client_send(c, "{\"type\":\"reload\"}\n"), 0);
        o = itest_client_expect(c, "reload", 10000);
        assert_non_null(o);
        if (!json_object_get_boolean(json_object_object_get(o, "ok")))
                fail_msg("reload refused: %s", json_object_to_json_string(o));
        json_object_put(o);
}

static void test_reload_after_the_drop(void **state) {
        struct itest_client *c = calloc(1, sizeof(*c));
        json_object *o;

        assert_int_equal(itest_client_connect(c, daemon_.socket), 0);
        /* The clients test_clients_max closed have made room. */
        o = itest_client_next(c, 5000);
        assert_non_null(o);
        assert_string_equal(itest_str(o, "type"), "hello");
        json_object_put(o);
        assert_calls_arrive(c, SYS_getpgid, ARG_PGID, GETPGID);
        reload_adding_getsid(&daemon_, c);
        assert_calls_arrive(c, SYS_getsid, ARG_SID, GETSID);
        assert_calls_arrive(c, SYS_getpgid, ARG_PGID, GETPGID);
        assert_dropped(daemon_.pid);
        itest_client_close(c);
        free(c);
        assert_int_equal(itest_daemon_stop(&daemon_), 0);
}

/* ---- as systemd/evmond.service.in would run it ---------------------- */

/* "CAP_PERFMON CAP_CHOWN" from the unit into "-all,+perfmon,+chown". */
static void unit_bounding_set(char *buf, size_t size) {
        char path[512], *text, *line, *end, *tok, *save = NULL;
        const char *root = getenv("EVMON_SOURCE_ROOT");
        size_t n;

        snprintf(path, sizeof(path), "%s/systemd/evmond.service.in", root ? root : ".");
        text = read_file(path);
        line = strstr(text, "\nCapabilityBoundingSet=");
        assert_non_null(line);
        line += strlen("\nCapabilityBoundingSet=");
        end = strchr(line, '\n');
        if (end)
                *end = 0;
        n = (size_t) snprintf(buf, size, "-all");
        for (tok = strtok_r(line, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
                assert_true(strncmp(tok, "CAP_", 4) == 0);
                n += (size_t) snprintf(buf + n, size - n, ",+");
                for (const char *p = tok + 4; *p && n + 1 < size; p++)
                        buf[n++] = (char) (*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
                buf[n] = 0;
        }
        free(text);
}

/* ProtectSystem=strict (and ProtectHome=read-only, ProtectControlGroups):
 * every mount read-only but /proc, /dev, /sys and the runtime directory
 * (the temporary directory, $3 is the config in it); PrivateNetwork: a
 * network namespace of its own; then the unit's bounding set and
 * NoNewPrivileges. */
static const char unit_script[] =
        "set -e\n"
        "dir=$(dirname \"$3\")\n"
        "mount --bind \"$dir\" \"$dir\"\n"
        "for m in $(awk '{print $2}' /proc/self/mounts | sort -u); do\n"
        "  case \"$m\" in\n"
        "    \"$dir\"|/proc|/proc/*|/dev|/dev/*) ;;\n"
        "    /sys/fs/cgroup|/sys/fs/cgroup/*) mount -o remount,bind,ro \"$m\" ;;\n"
        "    /sys|/sys/*) ;;\n"
        "    *) mount -o remount,bind,ro \"$m\" ;;\n"
        "  esac\n"
        "done\n"
        "exec \"$EVMON_SETPRIV\" --bounding-set=\"$EVMON_BSET\" --inh-caps=-all --no-new-privs -- \"$@\"\n";

/* Whether the mount at DIR (the last one listed there) in TEXT, the
 * contents of /proc/PID/mounts, is read-only. */
static bool mounted_ro(const char *text, const char *dir) {
        bool ro = false, found = false;
        char line[4096];
        FILE *f = fmemopen((void *) text, strlen(text), "r");

        assert_non_null(f);
        while (fgets(line, sizeof(line), f)) {
                char dev[256], mnt[1024], type[64], opts[1024];
                if (sscanf(line, "%255s %1023s %63s %1023s", dev, mnt, type, opts) == 4 && strcmp(mnt, dir) == 0) {
                        found = true;
                        ro = strncmp(opts, "ro", 2) == 0 && (opts[2] == ',' || opts[2] == 0);
                }
        }
        fclose(f);
        assert_true(found);
        return ro;
}

static void test_under_the_unit_restrictions(void **state) {
        const char *wrapper[] = { "unshare", "--mount", "--net", "--propagation", "private", "--",
                                  "sh", "-c", unit_script, "sh", NULL };
        struct itest_daemon_opts opts = { .log_to_file = true, .wrapper = wrapper };
        struct itest_daemon d = { .pid = -1 };
        struct itest_client *c = calloc(1, sizeof(*c));
        char bset[512], config[1024], path[64], *mounts;

        unit_bounding_set(bset, sizeof(bset));
        fprintf(stderr, "bounding set from the unit: %s\n", bset);
        assert_int_equal(setenv("EVMON_BSET", bset, 1), 0);
        assert_int_equal(setenv("EVMON_SETPRIV", setpriv, 1), 0);
        config_text(config, sizeof(config), false);
        if (itest_daemon_start_opts(&d, config, &opts) < 0) {
                char *log = read_file(d.log);
                fail_msg("evmond did not start under the unit's restrictions:\n%s", log);
        }
        unsetenv("EVMON_BSET");
        unsetenv("EVMON_SETPRIV");
        assert_int_equal(chmod(d.dir, 0755), 0);

        /* The emulation took: evmond's root is read-only. */
        snprintf(path, sizeof(path), "/proc/%d/mounts", (int) d.pid);
        mounts = read_file(path);
        assert_true(mounted_ro(mounts, "/"));
        assert_false(mounted_ro(mounts, d.dir));
        free(mounts);

        assert_int_equal(itest_client_connect(c, d.socket), 0);
        json_object_put(itest_client_expect(c, "hello", 5000));
        assert_calls_arrive(c, SYS_getpgid, ARG_PGID, GETPGID);
        reload_adding_getsid(&d, c);
        assert_calls_arrive(c, SYS_getsid, ARG_SID, GETSID);
        assert_dropped(d.pid);
        /* The socket got its group even so (CAP_CHOWN at start). */
        {
                struct stat st;
                assert_int_equal(stat(d.socket, &st), 0);
                assert_int_equal(st.st_gid, gid);
        }
        itest_client_close(c);
        free(c);
        assert_int_equal(itest_daemon_stop(&d), 0);
        itest_daemon_cleanup(&d);
}

/* The first setpriv in $PATH that is util-linux's: busybox's has no
 * --bounding-set, and busybox sh would run its own applet by name. */
static bool find_setpriv(void) {
        const char *path = getenv("PATH");
        char *copy = strdup(path ? path : "/usr/bin:/bin"), *dir, *save = NULL;
        bool found = false;

        for (dir = strtok_r(copy, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
                char cmd[sizeof(setpriv) - 16], *out = NULL;
                const char *argv[] = { cmd, "--help", NULL };

                snprintf(cmd, sizeof(cmd), "%s/setpriv", dir);
                if (access(cmd, X_OK) < 0)
                        continue;
                if (itest_run(argv, 5000, &out) == 0 && strstr(out, "--bounding-set")) {
                        snprintf(setpriv, sizeof(setpriv), "%s", cmd);
                        found = true;
                }
                free(out);
        }
        free(copy);
        return found;
}

int main(void) {
        static const char *const need[] = { "syscalls/sys_enter_getpgid", "syscalls/sys_enter_getsid", NULL };
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_socket_mode_and_group),
                cmocka_unit_test(test_outsider_is_refused),
                cmocka_unit_test(test_member_is_served_and_logged),
                cmocka_unit_test(test_clients_max),
                cmocka_unit_test(test_out_of_fds),
                cmocka_unit_test(test_capabilities_after_start),
                cmocka_unit_test(test_reload_after_the_drop),
                cmocka_unit_test(test_under_the_unit_restrictions),
        };

        itest_require(need);
        if (!find_setpriv()) {
                fprintf(stderr, "SKIP: needs setpriv from util-linux (with --bounding-set) in $PATH\n");
                return ITEST_SKIP;
        }
        return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
