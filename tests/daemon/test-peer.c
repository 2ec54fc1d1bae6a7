/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* peer_may_read(): whether a client (uid 65534 here) could read a file
 * itself, judged along its path by mode bits, and whether it could swap
 * a component after the check (issue 26: evmond, with
 * CAP_DAC_READ_SEARCH, probed any binary an admin-group member named).
 * Makes files owned by root and by 65534: root, else 77. */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cmocka.h>

#include "peer.h"

#define NOBODY 65534
#define GROUP 4242

static char dir[64];

static void mk(const char *rel, bool is_dir, mode_t mode, uid_t uid, gid_t gid) {
        char p[256];
        FILE *f;

        snprintf(p, sizeof(p), "%s/%s", dir, rel);
        if (is_dir)
                assert_int_equal(mkdir(p, mode), 0);
        else {
                assert_non_null(f = fopen(p, "we"));
                fclose(f);
        }
        assert_int_equal(chown(p, uid, gid), 0);
        assert_int_equal(chmod(p, mode), 0);
}

static int check(const struct peer *p, const char *rel, const char *want_component) {
        char path[256], want[256], *component = NULL;
        int r;

        snprintf(path, sizeof(path), "%s/%s", dir, rel);
        r = peer_may_read(p, path, &component);
        if (want_component) {
                snprintf(want, sizeof(want), "%s/%s", dir, want_component);
                assert_non_null(component);
                assert_string_equal(component, want);
        } else
                assert_null(component);
        free(component);
        return r;
}

static void test_may_read(void **state) {
        struct peer p = { .cred = { .pid = 1, .uid = NOBODY, .gid = NOBODY } };
        struct peer member = p;

        (void) state;
        member.groups[0] = GROUP;
        member.n_groups = 1;
        mk("pub", true, 0755, 0, 0);
        mk("pub/prog", false, 0755, 0, 0);
        mk("pub/secret", false, 0700, 0, 0);
        mk("pub/group", false, 0640, 0, GROUP);
        mk("closed", true, 0711, 0, 0);
        mk("closed/prog", false, 0755, 0, 0);
        mk("noexec", true, 0744, 0, 0);
        mk("noexec/prog", false, 0755, 0, 0);
        mk("open", true, 0777, 0, 0);
        mk("open/prog", false, 0755, 0, 0);
        mk("sticky", true, 01777, 0, 0);
        mk("sticky/root", false, 0755, 0, 0);
        mk("sticky/mine", false, 0755, NOBODY, NOBODY);
        mk("home", true, 0755, NOBODY, NOBODY);
        mk("home/prog", false, 0755, 0, 0);
        mk("owned", true, 0555, NOBODY, NOBODY);
        mk("owned/prog", false, 0755, 0, 0);

        assert_int_equal(check(&p, "pub/prog", NULL), 0);
        assert_int_equal(check(&p, "pub/secret", "pub/secret"), -EACCES);
        /* The group's bits for a member of the file's group only. */
        assert_int_equal(check(&member, "pub/group", NULL), 0);
        assert_int_equal(check(&p, "pub/group", "pub/group"), -EACCES);
        /* Search (x) is enough on a directory; without it, refused there. */
        assert_int_equal(check(&p, "closed/prog", NULL), 0);
        assert_int_equal(check(&p, "noexec/prog", "noexec"), -EACCES);
        /* A directory the peer may write: it could swap the file. */
        assert_int_equal(check(&p, "open/prog", "open/prog"), -EPERM);
        assert_int_equal(check(&p, "home/prog", "home/prog"), -EPERM);
        /* Read-only, but the peer's: it may chmod it writable first. */
        assert_int_equal(check(&p, "owned/prog", "owned/prog"), -EPERM);
        /* Sticky: only what the peer owns could it swap. */
        assert_int_equal(check(&p, "sticky/root", NULL), 0);
        assert_int_equal(check(&p, "sticky/mine", "sticky/mine"), -EPERM);
        /* Not a regular file; missing. */
        assert_int_equal(check(&p, "pub", "pub"), -EISDIR);
        assert_int_equal(check(&p, "pub/none", "pub/none"), -ENOENT);
        assert_int_equal(check(&p, "pub/prog/x", "pub/prog"), -ENOTDIR);
}

static void test_not_canonical(void **state) {
        struct peer p = { .cred = { .uid = NOBODY, .gid = NOBODY } };
        char *component = NULL;

        (void) state;
        assert_int_equal(peer_may_read(&p, "usr/bin/true", &component), -EINVAL);
        assert_int_equal(peer_may_read(&p, "/usr//bin/true", &component), -EINVAL);
        assert_int_equal(peer_may_read(&p, "/usr/bin/../bin/true", &component), -EINVAL);
        assert_null(component);
}

/* A POSIX ACL's named entries may grant or deny beyond the bits: then
 * the bits do not tell, and the answer is no. */
static void test_acl(void **state) {
        struct peer p = { .cred = { .uid = NOBODY, .gid = NOBODY } };
        /* user::rwx group::r-x other::r-x, the minimal ACL of 0755, plus
         * user:65534:--- and mask::r-x (linux/posix_acl_xattr.h). */
        struct {
                uint32_t version;
                struct {
                        uint16_t tag, perm;
                        uint32_t id;
                } e[5];
        } acl = { 2, { { 0x01, 7, (uint32_t) -1 }, { 0x02, 0, NOBODY }, { 0x04, 5, (uint32_t) -1 },
                       { 0x10, 5, (uint32_t) -1 }, { 0x20, 5, (uint32_t) -1 } } };
        char path[256];

        (void) state;
        mk("acl", false, 0755, 0, 0);
        snprintf(path, sizeof(path), "%s/acl", dir);
        if (setxattr(path, "system.posix_acl_access", &acl, sizeof(acl), 0) < 0) {
                print_message("no POSIX ACLs on %s: %s\n", dir, strerror(errno));
                skip();
        }
        assert_int_equal(check(&p, "acl", "acl"), -EOPNOTSUPP);
}

static int setup(void **state) {
        (void) state;
        snprintf(dir, sizeof(dir), "/tmp/evmon-peer-XXXXXX");
        if (!mkdtemp(dir))
                return -1;
        return chmod(dir, 0755);
}

/* A peer in more supplementary groups than struct peer holds: the
 * kernel judges a file of one of its groups by the group's bits, even
 * when they give less than the other bits (0604: the group may not
 * read). Judged by the groups that fit, it was "other", and read. The
 * peer connects from a forked child with 300 groups, the file's last. */
static void test_many_groups(void **state) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        struct peer p;
        char *component = NULL, path[256];
        int lfd, fd, status;
        pid_t pid;

        (void) state;
        mk("many", true, 0755, 0, 0);
        mk("many/prog", false, 0604, 0, GROUP);
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/sock", dir);
        assert_true((lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) >= 0);
        assert_int_equal(bind(lfd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        assert_int_equal(chmod(sa.sun_path, 0777), 0);
        assert_int_equal(listen(lfd, 1), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                gid_t groups[300];
                int cfd;

                for (int i = 0; i < 299; i++)
                        groups[i] = 50000 + (gid_t) i;
                groups[299] = GROUP;
                if (setgroups(300, groups) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
                    setresuid(NOBODY, NOBODY, NOBODY) < 0)
                        _exit(2);
                cfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
                if (cfd < 0 || connect(cfd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                        _exit(3);
                (void) !read(cfd, path, 1);  /* until the parent is done */
                _exit(0);
        }
        assert_true((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) >= 0);
        assert_int_equal(peer_from_fd(fd, &p), 0);
        snprintf(path, sizeof(path), "%s/many/prog", dir);
        /* Not readable by that peer, whatever the reason given. */
        assert_true(peer_may_read(&p, path, &component) < 0);
        free(component);
        close(fd);
        close(lfd);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static int teardown(void **state) {
        char cmd[128];

        (void) state;
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        return system(cmd) == 0 ? 0 : -1;
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_may_read),
                cmocka_unit_test(test_not_canonical),
                cmocka_unit_test(test_acl),
                cmocka_unit_test(test_many_groups),
        };

        if (geteuid() != 0) {
                fprintf(stderr, "SKIP: needs root (makes files of uid %d)\n", NOBODY);
                return 77;
        }
        return cmocka_run_group_tests(tests, setup, teardown);
}
