/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A line's context (src/daemon/annotate.c, daemon_context_annotate()) over
 * a process table seeded from a /proc made by the test: the keys are
 * written once per process and copied into each line after, and the last
 * sample's answer is kept for the next of the same process (its memo).
 * Each change to the table (a rename, an exec, a cgroup, a fork) shows on
 * the next line; a late sample from before an exec still gets the
 * process as it was; other processes' lines in between never leave
 * theirs behind; a container's long keys are cached too. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "annotate.h"
#include "daemon.h"
#include "../test-util.h"

#define ID1 "3f2a1b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a"

static char root[] = "/tmp/test-annotate-XXXXXX";

static void put(const char *pid, const char *name, const char *text) {
        test_put_file(root, pid, name, text);
}

static void fake_proc(const char *pid, const char *comm, int ppid, const char *exe, const char *cgroup) {
        char buf[512], path[256];

        snprintf(buf, sizeof(buf), "%s (%s) S %d 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 500 0 0\n", pid, comm, ppid);
        put(pid, "stat", buf);
        snprintf(buf, sizeof(buf), "Name:\t%s\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\n", comm);
        put(pid, "status", buf);
        snprintf(buf, sizeof(buf), "0::%s\n", cgroup);
        put(pid, "cgroup", buf);
        snprintf(path, sizeof(path), "%s/%s/exe", root, pid);
        assert_int_equal(symlink(exe, path), 0);
}

/* An exe path whose keys do not fit a cache slot (1,024 bytes). */
static const char *long_exe(void) {
        static char path[1400];

        if (!path[0]) {
                for (size_t i = 0; i + 10 < sizeof(path) - 1; i += 10)
                        memcpy(path + i, "/abcdefghi", 10);
                strcat(path, "/deep");
        }
        return path;
}

static int setup(void **state) {
        assert_non_null(mkdtemp(root));
        fake_proc("1", "systemd", 0, "/usr/lib/systemd/systemd", "/init.scope");
        fake_proc("100", "nginx", 1, "/usr/sbin/nginx", "/system.slice/docker-" ID1 ".scope");
        fake_proc("200", "worker", 1, "/usr/bin/worker", "/user.slice");
        fake_proc("300", "deep", 1, long_exe(), "/user.slice");
        return 0;
}

static int teardown(void **state) {
        char cmd[300];

        snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
        return system(cmd) == 0 ? 0 : -1;
}

struct fixture {
        struct daemon d;
        struct daemon_event ev;
        struct encode_context ec;
        struct line_meta meta;
};

static struct fixture *fixture_new(void) {
        struct fixture *f = calloc(1, sizeof(*f));

        assert_non_null(f);
        assert_int_equal(context_new(&(struct ctx_opts) { .proc_root = root }, &f->d.ctx.table), 0);
        assert_int_equal(context_seed(f->d.ctx.table), 4);
        f->d.ctx.cache = calloc(CONTEXT_CACHE_SLOTS, sizeof(*f->d.ctx.cache));
        assert_non_null(f->d.ctx.cache);
        return f;
}

static void fixture_free(struct fixture *f) {
        context_free(f->d.ctx.table);
        free(f->d.ctx.cache);
        jbuf_done(&f->d.ctx.scratch);
        free(f);
}

/* The context of a sample of PID at TIME (in cgroup CGROUP when not 0),
 * as the line's cached keys. */
static const struct encode_context *annotate(struct fixture *f, pid_t pid, uint64_t time, uint64_t cgroup) {
        struct perf_sample s = {
                .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | (cgroup ? PERF_SAMPLE_CGROUP : 0),
                .pid = (uint32_t) pid,
                .tid = (uint32_t) pid,
                .time = time,
                .cgroup = cgroup,
        };

        f->meta = (struct line_meta) { .pid = pid };
        assert_true(daemon_context_annotate(&f->d, &f->ev, &s, &f->meta, &f->ec));
        assert_non_null(f->ec.json);
        return &f->ec;
}

/* Whether the cached keys hold NEEDLE. */
static bool has(const struct encode_context *ec, const char *needle) {
        return memmem(ec->json, ec->json_len, needle, strlen(needle)) != NULL;
}

static uint64_t hits(struct fixture *f) {
        struct ctx_stats st;

        context_stats(f->d.ctx.table, &st);
        return st.hits;
}

static void test_same_process(void **state) {
        struct fixture *f = fixture_new();
        const struct encode_context *ec;
        uint64_t h;

        ec = annotate(f, 200, 1000, 0);
        assert_string_equal(ec->comm, "worker");
        assert_string_equal(ec->pcomm, "systemd");
        assert_int_equal(ec->ppid, 1);
        assert_true(has(ec, "\"comm\":\"worker\""));
        assert_true(has(ec, "\"pcomm\":\"systemd\""));
        assert_string_equal(f->meta.comm, "worker");
        h = hits(f);
        /* The next samples of it: the same answer, its two lookups
         * counted as hits. */
        for (uint64_t t = 1100; t < 2000; t += 100) {
                ec = annotate(f, 200, t, 0);
                assert_string_equal(ec->comm, "worker");
                assert_true(has(ec, "\"exe\":\"/usr/bin/worker\""));
                assert_string_equal(f->meta.comm, "worker");
        }
        assert_int_equal(hits(f), h + 2 * 9);
        /* A thread of it made, renamed and gone: the process is as it
         * was, and its next line is the memo's. */
        context_fork(f->d.ctx.table, 200, 200, 201, 2000);
        context_comm(f->d.ctx.table, 200, 201, "helper-thread", false, 2001);
        context_exit(f->d.ctx.table, 200, 201, 2002);
        ec = annotate(f, 200, 2100, 0);
        assert_string_equal(ec->comm, "worker");
        assert_true(has(ec, "\"comm\":\"worker\""));
        assert_int_equal(context_epoch(f->d.ctx.table), f->d.ctx.memo.epoch);
        fixture_free(f);
}

static void test_table_changes(void **state) {
        struct fixture *f = fixture_new();
        const struct encode_context *ec;

        assert_string_equal(annotate(f, 200, 1000, 0)->comm, "worker");
        /* A rename (prctl). */
        context_comm(f->d.ctx.table, 200, 200, "renamed", false, 3000);
        ec = annotate(f, 200, 3500, 0);
        assert_string_equal(ec->comm, "renamed");
        assert_true(has(ec, "\"comm\":\"renamed\""));
        /* An exec: a new incarnation from 4000. */
        context_comm(f->d.ctx.table, 200, 200, "newprog", true, 4000);
        ec = annotate(f, 200, 4100, 0);
        assert_string_equal(ec->comm, "newprog");
        assert_true(has(ec, "\"comm\":\"newprog\""));
        ec = annotate(f, 200, 4200, 0);
        assert_string_equal(ec->comm, "newprog");
        /* A sample from before the exec, read late from another CPU's
         * ring: the process as it was then, though the table has not
         * changed since the last line. */
        ec = annotate(f, 200, 3900, 0);
        assert_string_equal(ec->comm, "renamed");
        assert_true(has(ec, "\"comm\":\"renamed\""));
        assert_string_equal(annotate(f, 200, 4300, 0)->comm, "newprog");
        /* Its parent renamed: the parent's comm follows. */
        context_comm(f->d.ctx.table, 1, 1, "init", false, 4400);
        ec = annotate(f, 200, 4500, 0);
        assert_string_equal(ec->pcomm, "init");
        assert_true(has(ec, "\"pcomm\":\"init\""));
        /* Its pid reused after an exit: a fork's child. */
        context_exit(f->d.ctx.table, 200, 200, 5000);
        context_fork(f->d.ctx.table, 200, 100, 200, 5100);
        ec = annotate(f, 200, 5200, 0);
        assert_string_equal(ec->comm, "nginx");
        assert_int_equal(ec->ppid, 100);
        assert_true(has(ec, ID1));
        assert_string_equal(annotate(f, 200, 4900, 0)->comm, "newprog");
        fixture_free(f);
}

static void test_cgroups(void **state) {
        struct fixture *f = fixture_new();
        const struct encode_context *ec;

        context_cgroup(f->d.ctx.table, 77, "/other.slice");
        context_cgroup(f->d.ctx.table, 78, "/system.slice/docker-" ID1 ".scope");
        ec = annotate(f, 200, 1000, 77);
        assert_string_equal(ec->cgroup, "/other.slice");
        assert_true(has(ec, "\"cgroup\":\"/other.slice\""));
        assert_string_equal(annotate(f, 200, 1100, 77)->cgroup, "/other.slice");
        /* Moved: the sample's own cgroup over the one it had. */
        ec = annotate(f, 200, 1200, 78);
        assert_string_equal(ec->container, ID1);
        assert_true(has(ec, "\"container\":\"" ID1 "\""));
        assert_string_equal(f->meta.container, ID1);
        ec = annotate(f, 200, 1300, 77);
        assert_null(ec->container);
        assert_null(f->meta.container);
        assert_false(has(ec, ID1));
        fixture_free(f);
}

static void test_interleaved(void **state) {
        struct fixture *f = fixture_new();
        const struct encode_context *ec;

        /* Two processes' lines in turn, and a pid the table lacks (its
         * first sight finds no /proc entry) between them: each line
         * has its own process's keys, however the slots and the memo
         * are shared. A container's keys (long ids and paths) are kept
         * in the cache like any other's. */
        for (uint64_t t = 1000; t < 1100; t += 4) {
                ec = annotate(f, 100, t, 0);
                assert_true(has(ec, "\"comm\":\"nginx\""));
                assert_true(has(ec, "\"container\":\"" ID1 "\""));
                ec = annotate(f, 200, t + 1, 0);
                assert_true(has(ec, "\"comm\":\"worker\""));
                assert_false(has(ec, ID1));
                ec = annotate(f, 200, t + 2, 0);
                assert_true(has(ec, "\"comm\":\"worker\""));
                f->meta = (struct line_meta) { .pid = 999 };
                assert_true(daemon_context_annotate(&f->d, &f->ev,
                                                    &(struct perf_sample) { .sample_type = PERF_SAMPLE_TID |
                                                                                           PERF_SAMPLE_TIME,
                                                                            .pid = 999, .tid = 999, .time = t + 3 },
                                                    &f->meta, &f->ec));
                assert_null(f->ec.comm);
        }
        fixture_free(f);
}

/* Keys too long for a slot go into each line as they are, every time,
 * the slot remembering so; the memo and other processes unharmed. */
static void test_long_keys(void **state) {
        struct fixture *f = fixture_new();
        struct perf_sample s = { .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME, .pid = 300, .tid = 300 };

        for (uint64_t t = 1000; t < 1010; t++) {
                s.time = t;
                f->meta = (struct line_meta) { .pid = 300 };
                assert_true(daemon_context_annotate(&f->d, &f->ev, &s, &f->meta, &f->ec));
                assert_null(f->ec.json);
                assert_string_equal(f->ec.comm, "deep");
                assert_string_equal(f->ec.exe, long_exe());
                assert_string_equal(f->meta.comm, "deep");
                assert_true(has(annotate(f, 200, t, 0), "\"comm\":\"worker\""));
        }
        fixture_free(f);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_same_process),
                cmocka_unit_test(test_table_changes),
                cmocka_unit_test(test_cgroups),
                cmocka_unit_test(test_interleaved),
                cmocka_unit_test(test_long_keys),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
