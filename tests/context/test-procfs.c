/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The /proc text parsers of src/context/procfs.c on text read from a real
 * /proc (a hybrid cgroup host, a kernel thread, a comm holding ") (") and
 * on damaged copies of it. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "evmon/context.h"

#define STAT_CAT "5048 (cat) R 5042 5042 5198 0 -1 4194304 95 0 0 0 0 0 0 0 20 0 1 0 63440 3133440 414 " \
                 "18446744073709551615 94820771217408 94820771237289 140721305966320 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n"

static void test_stat(void **state) {
        struct ctx_proc_stat st;
        const char *kthread = "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 3 0 0 "
                              "18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 0 0 0 0\n";
        const char *odd = "77 (a) (b c)) S 1 77 77 0 -1 0 0 0 0 0 0 0 0 0 -2 5 1 0 123456789 0 0\n";
        const char *long_comm = "9 (0123456789abcdefXYZ) S 8 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 42 0 0\n";

        assert_int_equal(ctx_parse_stat(STAT_CAT, strlen(STAT_CAT), &st), 0);
        assert_int_equal(st.pid, 5048);
        assert_int_equal(st.ppid, 5042);
        assert_string_equal(st.comm, "cat");
        assert_int_equal(st.start_ticks, 63440);

        assert_int_equal(ctx_parse_stat(kthread, strlen(kthread), &st), 0);
        assert_int_equal(st.ppid, 0);
        assert_string_equal(st.comm, "kthreadd");
        assert_int_equal(st.start_ticks, 3);

        /* prctl(PR_SET_NAME) may put ") (" in a comm: the last ')' ends it;
         * negative priority and nice are signed fields. */
        assert_int_equal(ctx_parse_stat(odd, strlen(odd), &st), 0);
        assert_string_equal(st.comm, "a) (b c)");
        assert_int_equal(st.ppid, 1);
        assert_int_equal(st.start_ticks, 123456789);

        assert_int_equal(ctx_parse_stat(long_comm, strlen(long_comm), &st), 0);
        assert_string_equal(st.comm, "0123456789abcde");

        /* Every cut short of field 22 fails; nothing reads past LEN. */
        for (size_t n = 0; n < strlen(STAT_CAT); n++) {
                int r = ctx_parse_stat(STAT_CAT, n, &st);
                if (n < strlen("5048 (cat) R 5042 5042 5198 0 -1 4194304 95 0 0 0 0 0 0 0 20 0 1 0 6"))
                        assert_int_equal(r, -EINVAL);
        }
        assert_int_equal(ctx_parse_stat("x (y) S 1", 9, &st), -EINVAL);
        assert_int_equal(ctx_parse_stat("5 y) S 1", 8, &st), -EINVAL);
        assert_int_equal(ctx_parse_stat("5 (y S 1", 8, &st), -EINVAL);
}

static void test_status(void **state) {
        const char *s = "Name:\tbash\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t4242\nPid:\t4242\nPPid:\t1\n"
                        "TracerPid:\t0\nUid:\t1000\t0\t1000\t1000\nGid:\t33\t33\t33\t33\nFDSize:\t256\n";
        uid_t uid;
        gid_t gid;

        assert_int_equal(ctx_parse_status(s, strlen(s), &uid, &gid), 0);
        assert_int_equal(uid, 1000);
        assert_int_equal(gid, 33);
        assert_int_equal(ctx_parse_status(s, strlen(s) - 40, &uid, &gid), -ENOENT);
        assert_int_equal(ctx_parse_status("Uid:\n", 5, &uid, &gid), -ENOENT);
}

static void test_cgroup(void **state) {
        const char *hybrid = "9:name=systemd:/user.slice/session-2.scope\n8:pids:/\n"
                             "4:memory:/process_api/4184017c942dfd94d656b77eec473cf0\n0::/system.slice/ssh.service\n";
        const char *v1 = "12:cpu,cpuacct:/docker/abc\n1:name=systemd:/docker/abc\n";
        const char *v2 = "0::/\n";
        char buf[PATH_MAX];

        assert_int_equal(ctx_parse_cgroup(hybrid, strlen(hybrid), buf, sizeof(buf)), 0);
        assert_string_equal(buf, "/system.slice/ssh.service");
        assert_int_equal(ctx_parse_cgroup(v1, strlen(v1), buf, sizeof(buf)), 0);
        assert_string_equal(buf, "/docker/abc");
        assert_int_equal(ctx_parse_cgroup(v2, strlen(v2), buf, sizeof(buf)), 0);
        assert_string_equal(buf, "/");
        assert_int_equal(ctx_parse_cgroup(hybrid, strlen(hybrid), buf, 8), -ENAMETOOLONG);
        assert_int_equal(ctx_parse_cgroup("8:pids:/\n", 9, buf, sizeof(buf)), -ENOENT);
        assert_int_equal(ctx_parse_cgroup("0::relative\n", 12, buf, sizeof(buf)), -EINVAL);
}

struct collected {
        struct ctx_map m[8];
        char paths[8][64];
        int n;
};

static int collect(const struct ctx_map *m, void *userdata) {
        struct collected *c = userdata;

        assert_true(c->n < 8);
        c->m[c->n] = *m;
        assert_true(m->path_len < 64);
        memcpy(c->paths[c->n], m->path, m->path_len);
        c->paths[c->n][m->path_len] = 0;
        c->n++;
        return 0;
}

static void test_maps(void **state) {
        const char *maps =
                "56509b8bb000-56509b8bd000 r--p 00000000 fe:00 247498                     /usr/bin/head\n"
                "56509b8bd000-56509b8c3000 r-xp 00002000 fe:00 247498                     /usr/bin/head\n"
                "7f0e1c000000-7f0e1c021000 rw-p 00000000 00:00 0 \n"
                "7f0e1d5a1000-7f0e1d6f6000 r-xp 00026000 103:02 1835221                   /usr/lib/x86_64-linux-gnu/libc.so.6\n"
                "7f0e1d800000-7f0e1d801000 r-xp 00000000 00:1b 99                         /tmp/a b (deleted)\n"
                "garbage line\n"
                "7ffd5e9f0000-7ffd5e9f2000 r-xp 00000000 00:00 0                          [vdso]";
        struct collected c = {};

        assert_int_equal(ctx_parse_maps(maps, strlen(maps), collect, &c), 6);
        assert_int_equal(c.n, 6);
        assert_false(c.m[0].exec);
        assert_true(c.m[1].exec);
        assert_int_equal(c.m[1].start, 0x56509b8bd000);
        assert_int_equal(c.m[1].end, 0x56509b8c3000);
        assert_int_equal(c.m[1].pgoff, 0x2000);
        assert_int_equal(c.m[1].dev, makedev(0xfe, 0));
        assert_int_equal(c.m[1].ino, 247498);
        assert_string_equal(c.paths[1], "/usr/bin/head");
        assert_string_equal(c.paths[2], "");
        assert_int_equal(c.m[3].dev, makedev(0x103, 2));
        assert_string_equal(c.paths[3], "/usr/lib/x86_64-linux-gnu/libc.so.6");
        assert_string_equal(c.paths[4], "/tmp/a b (deleted)");
        assert_string_equal(c.paths[5], "[vdso]");
        assert_int_equal(ctx_parse_maps("", 0, collect, &c), 0);
        assert_int_equal(ctx_parse_maps("1000-0fff r-xp 0 0:0 0 /x\n", 26, NULL, NULL), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_stat),
                cmocka_unit_test(test_status),
                cmocka_unit_test(test_cgroup),
                cmocka_unit_test(test_maps),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
