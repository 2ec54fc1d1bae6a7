/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* systemd-analyze verify on the built units, and the layout `meson
 * install` gives with --prefix=/usr --sysconfdir=/etc (a build of its own
 * in a temp dir). */

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

int main(int argc, char **argv) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_units_verify),
                cmocka_unit_test(test_install_layout),
        };

        cli_setup();
        return cli_run("cli-units", tests, ELEMENTSOF(tests));
}
