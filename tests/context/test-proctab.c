/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The process table (src/context/proctab.c) driven by records as the
 * kernel writes them, over a /proc made by the test: seeding, fork
 * inheritance, exit, pid reuse, exec as a new incarnation, renames,
 * threads, cgroup ids and their containers, and the bounds. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "evmon/context.h"
#include "../test-util.h"

#define ID1 "3f2a1b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a"

static char root[] = "/tmp/test-proctab-XXXXXX";

static void put(const char *pid, const char *name, const char *text) {
        test_put_file(root, pid, name, text);
}

static void fake_proc(const char *pid, const char *comm, int ppid, int uid, const char *exe, const char *cgroup) {
        char buf[512], path[256];

        snprintf(buf, sizeof(buf), "%s (%s) S %d 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 500 0 0\n", pid, comm, ppid);
        put(pid, "stat", buf);
        snprintf(buf, sizeof(buf), "Name:\t%s\nUid:\t%d\t%d\t%d\t%d\nGid:\t%d\t%d\t%d\t%d\n", comm, uid, uid, uid, uid,
                 uid, uid, uid, uid);
        put(pid, "status", buf);
        snprintf(buf, sizeof(buf), "1:name=systemd:/\n0::%s\n", cgroup);
        put(pid, "cgroup", buf);
        if (exe) {
                snprintf(path, sizeof(path), "%s/%s/exe", root, pid);
                assert_int_equal(symlink(exe, path), 0);
        }
}

static int setup(void **state) {
        assert_non_null(mkdtemp(root));
        fake_proc("1", "systemd", 0, 0, "/usr/lib/systemd/systemd", "/init.scope");
        fake_proc("100", "nginx", 1, 33, "/usr/sbin/nginx", "/system.slice/docker-" ID1 ".scope");
        fake_proc("2", "kthreadd", 0, 0, NULL, "/");
        put("self", "stat", "junk");  /* not a pid: skipped */
        return 0;
}

static int teardown(void **state) {
        char cmd[300];

        snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
        return system(cmd) == 0 ? 0 : -1;
}

static void rm_proc(const char *pid) {
        char cmd[300];

        snprintf(cmd, sizeof(cmd), "rm -rf %s/%s", root, pid);
        assert_int_equal(system(cmd), 0);
}

static struct context *new_ctx(unsigned procs, unsigned retired) {
        struct ctx_opts o = { .max_procs = procs, .max_retired = retired, .proc_root = root };
        struct context *c;

        assert_int_equal(context_new(&o, &c), 0);
        return c;
}

static void test_seed(void **state) {
        _cleanup_(context_freep) struct context *c = new_ctx(0, 0);
        const struct ctx_proc *p;
        const struct ctx_container *ct;
        struct ctx_stats st;

        assert_int_equal(context_seed(c), 3);
        p = context_lookup(c, 100, 12345);
        assert_non_null(p);
        assert_string_equal(p->comm, "nginx");
        assert_string_equal(p->exe, "/usr/sbin/nginx");
        assert_int_equal(p->ppid, 1);
        assert_true(p->has_ppid && p->has_ids);
        assert_int_equal(p->uid, 33);
        assert_int_equal(p->gid, 33);
        assert_string_equal(p->cgroup, "/system.slice/docker-" ID1 ".scope");
        ct = context_proc_container(c, p);
        assert_non_null(ct);
        assert_int_equal(ct->runtime, CTX_RUNTIME_DOCKER);
        assert_string_equal(ct->id, ID1);
        assert_true(p->start_boot_ns > 0);

        /* A kernel thread has no executable: absent, not guessed. */
        p = context_lookup(c, 2, 0);
        assert_non_null(p);
        assert_null(p->exe);
        assert_null(context_proc_container(c, p));
        assert_null(context_lookup(c, 3, 0));
        context_stats(c, &st);
        assert_int_equal(st.procs, 3);
        assert_int_equal(st.hits, 2);
        assert_int_equal(st.misses, 1);
        assert_true(st.bound_bytes > 0);
}

static void test_fork_exit_reuse(void **state) {
        _cleanup_(context_freep) struct context *c = new_ctx(0, 0);
        const struct ctx_proc *p;

        assert_int_equal(context_seed(c), 3);
        /* nginx forks 500 at t=100: the child is nginx too */
        context_fork(c, 500, 100, 500, 100);
        p = context_lookup(c, 500, 150);
        assert_non_null(p);
        assert_string_equal(p->comm, "nginx");
        assert_string_equal(p->exe, "/usr/sbin/nginx");
        assert_int_equal(p->ppid, 100);
        assert_int_equal(p->uid, 33);
        assert_string_equal(p->cgroup, "/system.slice/docker-" ID1 ".scope");
        /* before its fork, pid 500 was no one we know */
        assert_null(context_lookup(c, 500, 99));

        /* a thread of 500 (pid == ppid) is no new process */
        context_fork(c, 500, 500, 501, 160);
        assert_null(context_lookup(c, 501, 170));
        /* the thread's exit does not end the process */
        context_exit(c, 500, 501, 180);
        assert_non_null(context_lookup(c, 500, 190));

        context_exit(c, 500, 500, 200);
        assert_non_null(context_lookup(c, 500, 200));
        assert_null(context_lookup(c, 500, 201));
        assert_null(context_lookup(c, 500, 0));

        /* pid 500 again, now systemd's child: a late event of the old one
         * still finds the old one, a new one the new */
        context_fork(c, 500, 1, 500, 300);
        p = context_lookup(c, 500, 310);
        assert_non_null(p);
        assert_string_equal(p->comm, "systemd");
        assert_int_equal(p->ppid, 1);
        assert_int_equal(p->uid, 0);
        p = context_lookup(c, 500, 150);
        assert_non_null(p);
        assert_string_equal(p->comm, "nginx");
        assert_null(context_lookup(c, 500, 250));

        /* a FORK for a pid still open means its EXIT was lost: the old
         * incarnation ends there, never lending its context */
        context_fork(c, 500, 100, 500, 400);
        p = context_lookup(c, 500, 410);
        assert_string_equal(p->comm, "nginx");
        assert_string_equal(context_lookup(c, 500, 350)->comm, "systemd");
}

static void test_exec_rename(void **state) {
        _cleanup_(context_freep) struct context *c = new_ctx(0, 0);
        const struct ctx_proc *p;

        assert_int_equal(context_seed(c), 3);
        context_fork(c, 600, 100, 600, 100);
        context_comm(c, 600, 600, "evmon-uniq", true, 200);
        p = context_lookup(c, 600, 210);
        assert_string_equal(p->comm, "evmon-uniq");
        assert_null(p->exe);  /* until the exec tracepoint says */
        assert_int_equal(p->ppid, 100);
        assert_int_equal(p->uid, 33);
        context_exec(c, 600, "/opt/x/evmon-uniq", 17, 201);
        p = context_lookup(c, 600, 210);
        assert_string_equal(p->exe, "/opt/x/evmon-uniq");
        /* before the exec: still nginx */
        p = context_lookup(c, 600, 150);
        assert_string_equal(p->comm, "nginx");
        assert_string_equal(p->exe, "/usr/sbin/nginx");

        /* prctl(PR_SET_NAME) in the leader renames the process; in a
         * thread, only that thread */
        context_comm(c, 600, 600, "renamed", false, 300);
        assert_string_equal(context_lookup(c, 600, 310)->comm, "renamed");
        context_comm(c, 600, 601, "worker", false, 320);
        assert_string_equal(context_lookup(c, 600, 330)->comm, "renamed");

        /* a relative exec name is left out when /proc cannot confirm it */
        context_comm(c, 600, 600, "rel", true, 400);
        context_exec(c, 600, "./rel", 5, 401);
        assert_null(context_lookup(c, 600, 410)->exe);
        /* confirmed through /proc/PID/exe; the ids are read again at the
         * exec (a setuid() before it, as login's) */
        fake_proc("600", "rel", 100, 0, "/home/u/bin/rel", "/");
        context_comm(c, 600, 600, "rel", true, 500);
        context_exec(c, 600, "bin/rel", 7, 501);
        assert_string_equal(context_lookup(c, 600, 510)->exe, "/home/u/bin/rel");
        assert_int_equal(context_lookup(c, 600, 510)->uid, 0);
        assert_int_equal(context_lookup(c, 600, 450)->uid, 33);
        rm_proc("600");
}

/* Rings are read one after another: the child's exec (its CPU) may come
 * before its fork (the parent's CPU); the fork must not undo the exec. */
static void test_fork_after_exec(void **state) {
        _cleanup_(context_freep) struct context *c = new_ctx(0, 0);
        const struct ctx_proc *p;

        assert_int_equal(context_seed(c), 3);
        fake_proc("650", "evctx", 100, 0, "/tmp/evctx", "/");
        context_comm(c, 650, 650, "evctx", true, 200);
        context_exec(c, 650, "/tmp/evctx", 10, 201);
        context_fork(c, 650, 100, 650, 150);
        p = context_lookup(c, 650, 300);
        assert_non_null(p);
        assert_string_equal(p->comm, "evctx");
        assert_string_equal(p->exe, "/tmp/evctx");
        assert_int_equal(p->ppid, 100);
        rm_proc("650");
}

static void test_unknown_parent(void **state) {
        _cleanup_(context_freep) struct context *c = new_ctx(0, 0);
        const struct ctx_proc *p;

        /* Nothing seeded: a fork of an unknown parent reads the child from
         * /proc at first sight. */
        fake_proc("700", "late", 1, 1000, "/usr/bin/late", "/user.slice");
        context_fork(c, 700, 699, 700, 100);
        p = context_lookup(c, 700, 110);
        assert_non_null(p);
        assert_string_equal(p->comm, "late");
        assert_int_equal(p->uid, 1000);
        /* and one gone before that: no entry, a miss */
        context_fork(c, 701, 699, 701, 100);
        assert_null(context_lookup(c, 701, 110));
        rm_proc("700");
}

/* A sample of a process no record told of (moved into a target cgroup
 * after it forked): read from /proc at that sample, kept from then on;
 * a gone one is tried once. */
static void test_first_sight(void **state) {
        _cleanup_(context_freep) struct context *c = new_ctx(0, 0);
        const struct ctx_proc *p;
        struct ctx_stats st;

        fake_proc("800", "moved", 1, 1000, "/usr/bin/moved", "/target.slice");
        assert_null(context_lookup(c, 800, 500));
        p = context_first_sight(c, 800, 500);
        assert_non_null(p);
        assert_string_equal(p->comm, "moved");
        assert_int_equal(p->ppid, 1);
        assert_string_equal(p->cgroup, "/target.slice");
        assert_ptr_equal(context_lookup(c, 800, 600), p);
        /* Another CPU's earlier sample of it: the same process. */
        assert_null(context_lookup(c, 800, 400));
        assert_ptr_equal(context_first_sight(c, 800, 400), p);
        rm_proc("800");

        /* Gone: NULL, and not looked for again. */
        assert_null(context_first_sight(c, 801, 500));
        fake_proc("801", "back", 1, 0, NULL, "/");
        assert_null(context_first_sight(c, 801, 600));
        rm_proc("801");
        /* A FORK's entry is not given to a sample from before it. */
        context_fork(c, 802, 800, 802, 1000);
        assert_null(context_first_sight(c, 802, 900));
        context_stats(c, &st);
        assert_int_equal(st.first_sight, 1);
}

static void test_records(void **state) {
        _cleanup_(context_freep) struct context *c = new_ctx(0, 0);
        struct perf_record r = { .type = PERF_RECORD_FORK, .has_sid = true };
        const struct ctx_proc *p;
        const struct ctx_cgroup *g;

        assert_int_equal(context_seed(c), 3);
        r.task.pid = r.task.tid = 800;
        r.task.ppid = r.task.ptid = 1;
        r.task.time = 1000;
        context_record(c, &r);
        r = (struct perf_record) { .type = PERF_RECORD_COMM, .misc = PERF_RECORD_MISC_COMM_EXEC, .has_sid = true };
        r.comm.pid = r.comm.tid = 800;
        r.comm.comm = "crun";
        r.sid.time = 2000;
        context_record(c, &r);
        p = context_lookup(c, 800, 2001);
        assert_string_equal(p->comm, "crun");
        assert_string_equal(context_lookup(c, 800, 1500)->comm, "systemd");

        r = (struct perf_record) { .type = PERF_RECORD_CGROUP };
        r.cgroup.id = 4242;
        r.cgroup.path = "/kubepods.slice/kubepods-besteffort.slice/"
                        "kubepods-besteffort-pod8d4e6f1a_2b3c_4d5e_8f9a_0b1c2d3e4f5a.slice/crio-" ID1 ".scope";
        context_record(c, &r);
        g = context_cgroup_lookup(c, 4242);
        assert_non_null(g);
        assert_non_null(g->container);
        assert_int_equal(g->container->runtime, CTX_RUNTIME_CRIO);
        assert_string_equal(g->container->id, ID1);
        assert_string_equal(g->container->pod, "8d4e6f1a-2b3c-4d5e-8f9a-0b1c2d3e4f5a");
        assert_null(context_cgroup_lookup(c, 4243));
        /* a sample of 800 in that cgroup moves it there */
        context_note_cgroup(c, p, 4242);
        p = context_lookup(c, 800, 2100);
        assert_int_equal(p->cgroup_id, 4242);
        assert_string_equal(p->cgroup, r.cgroup.path);
        assert_string_equal(context_proc_container(c, p)->id, ID1);

        r = (struct perf_record) { .type = PERF_RECORD_EXIT, .has_sid = true };
        r.task.pid = r.task.tid = 800;
        r.task.ppid = r.task.ptid = 1;
        r.task.time = 3000;
        context_record(c, &r);
        assert_null(context_lookup(c, 800, 3001));
}

static void test_bounds(void **state) {
        _cleanup_(context_freep) struct context *c = new_ctx(8, 4);
        struct ctx_stats st;
        char comm[16];

        assert_int_equal(context_seed(c), 3);
        /* 100,000 short-lived children of nginx, each exec'ing a program
         * of its own name: the table never holds more than its bound */
        for (int i = 0; i < 100000; i++) {
                uint64_t t = 1000 + (uint64_t) i * 10;
                pid_t pid = 1000 + i % 50;

                context_fork(c, pid, 100, pid, t);
                snprintf(comm, sizeof(comm), "p%d", i);
                context_comm(c, pid, pid, comm, true, t + 1);
                context_exec(c, pid, "/usr/bin/x", 10, t + 2);
                assert_string_equal(context_lookup(c, pid, t + 3)->comm, comm);
                context_exit(c, pid, pid, t + 4);
                context_stats(c, &st);
                assert_true(st.procs <= 8);
                assert_true(st.retired <= 4);
        }
        context_stats(c, &st);
        assert_int_equal(st.procs, 3);
        assert_int_equal(st.retired, 4);
        /* the three seeded processes' strings and /usr/bin/x */
        assert_true(st.strings <= 7);
        assert_int_equal(st.forks, 100000);
        assert_int_equal(st.execs, 100000);

        /* more live processes than the bound: the rest are not tracked
         * (counted), and never confused with others */
        for (int i = 0; i < 20; i++)
                context_fork(c, 5000 + i, 100, 5000 + i, 10000000 + i);
        context_stats(c, &st);
        assert_int_equal(st.procs, 8);
        assert_true(st.full >= 15);
        assert_null(context_lookup(c, 5019, 20000000));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_seed),
                cmocka_unit_test(test_fork_exit_reuse),
                cmocka_unit_test(test_exec_rename),
                cmocka_unit_test(test_fork_after_exec),
                cmocka_unit_test(test_unknown_parent), cmocka_unit_test(test_first_sight),
                cmocka_unit_test(test_records),
                cmocka_unit_test(test_bounds),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
