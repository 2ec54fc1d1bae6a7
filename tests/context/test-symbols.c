/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Symbols (src/context/kallsyms.c, symbols.c): kallsyms text parsed and
 * searched; this test's own functions named through its mappings
 * (/proc/self/maps) and its ELF file (libdwfl); the running kernel's
 * kallsyms when it shows addresses (root), else skipped. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "evmon/context.h"

static const char kallsyms[] =
        "ffffffff81000000 T _stext\n"
        "ffffffff81000000 T startup_64\n"
        "ffffffff81001000 t helper\n"
        "ffffffff81002000 D some_data\n"
        "ffffffff81003000 W weak_fn\n"
        "0000000000000000 A fixed_percpu_data\n"
        "ffffffffc0a00000 t ext4_fill_super\t[ext4]\n"
        "ffffffffc0a01000 T ext4_iget\t[ext4]\n"
        "bad line\n"
        "ffffffffc0b00000 t xt_check\t[x_tables]\n";

static void test_kallsyms(void **state) {
        _cleanup_(ctx_kallsyms_freep) struct ctx_kallsyms *k = NULL;
        struct ctx_frame f;

        assert_int_equal(ctx_kallsyms_parse(kallsyms, strlen(kallsyms), &k), 0);
        assert_int_equal(ctx_kallsyms_count(k), 7);
        assert_int_equal(ctx_kallsyms_lookup(k, 0xffffffff81001010, &f), 0);
        assert_string_equal(f.sym, "helper");
        assert_int_equal(f.off, 0x10);
        assert_string_equal(f.module, "[kernel.kallsyms]");
        /* data symbols do not bound code: helper reaches up to weak_fn */
        assert_int_equal(ctx_kallsyms_lookup(k, 0xffffffff81002800, &f), 0);
        assert_string_equal(f.sym, "helper");
        assert_int_equal(ctx_kallsyms_lookup(k, 0xffffffff81003004, &f), 0);
        assert_string_equal(f.sym, "weak_fn");
        assert_int_equal(ctx_kallsyms_lookup(k, 0xffffffffc0a01100, &f), 0);
        assert_string_equal(f.sym, "ext4_iget");
        assert_string_equal(f.module, "[ext4]");
        assert_int_equal(ctx_kallsyms_lookup(k, 0xffffffffc0b00001, &f), 0);
        assert_string_equal(f.module, "[x_tables]");
        assert_int_equal(ctx_kallsyms_lookup(k, 0xffffffff80000000, &f), -ENOENT);
        assert_int_equal(ctx_kallsyms_lookup(k, 0xffffffffc0b00000 + 0x200000, &f), -ENOENT);

        ctx_kallsyms_free(TAKE_PTR(k));
        /* kptr_restrict: every address 0, nothing to name */
        assert_int_equal(ctx_kallsyms_parse("0000000000000000 T _stext\n0000000000000000 t x\n", 46, &k), -ENOENT);
}

static void test_kallsyms_live(void **state) {
        _cleanup_(ctx_kallsyms_freep) struct ctx_kallsyms *k = NULL;
        char line[512], name[256], type;
        unsigned long long addr;
        struct ctx_frame f;
        FILE *fp;
        int checked = 0;

        if (ctx_kallsyms_load(NULL, &k) < 0)
                skip();  /* no /proc/kallsyms addresses for us (kptr_restrict, not root) */
        fp = fopen("/proc/kallsyms", "re");
        assert_non_null(fp);
        /* Each function symbol named at its own address, or one sharing it. */
        while (fgets(line, sizeof(line), fp) && checked < 2000) {
                if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3 || (type != 'T' && type != 't'))
                        continue;
                assert_int_equal(ctx_kallsyms_lookup(k, addr, &f), 0);
                assert_int_equal(f.off, 0);
                checked++;
        }
        fclose(fp);
        assert_true(checked > 100);
}

__attribute__((noinline)) int evmon_test_marker_function(int x);
__attribute__((noinline)) int evmon_test_marker_function(int x) {
        return x * 3 + 1;
}

static void test_user(void **state) {
        _cleanup_(ctx_symbols_freep) struct ctx_symbols *s = NULL;
        uint64_t ips[4];
        struct ctx_frame f[4];
        struct ctx_symbols_stats st;
        char self[4096];
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

        assert_true(n > 0);
        self[n] = 0;
        assert_int_equal(ctx_symbols_new(&(struct ctx_symbols_opts) {
                                                 .max_modules = 2, .max_procs = 2,
                                                 /* the frames wait for the (sanitized) helper */
                                                 .wait_ms = 30000, .timeout_ms = 30000 }, &s), 0);
        ips[0] = PERF_CONTEXT_USER;
        ips[1] = (uint64_t) (uintptr_t) evmon_test_marker_function + 4;
        ips[2] = (uint64_t) (uintptr_t) test_user;
        ips[3] = 0x10;  /* in no mapping */
        assert_int_equal(ctx_symbols_resolve(s, getpid(), ips, 4, f), 2);
        assert_null(f[0].sym);
        assert_string_equal(f[1].sym, "evmon_test_marker_function");
        assert_int_equal(f[1].off, 4);
        assert_string_equal(f[1].module, self);
        assert_string_equal(f[2].sym, "test_user");
        assert_int_equal(f[2].off, 0);
        assert_null(f[3].sym);
        /* the second time from the caches */
        assert_int_equal(ctx_symbols_resolve(s, getpid(), ips, 4, f), 2);
        ctx_symbols_stats(s, &st);
        assert_int_equal(st.modules, 1);
        assert_int_equal(st.procs, 1);
        assert_int_equal(st.named, 4);
        /* Read by one sandboxed helper, its table counted in bytes. */
        assert_int_equal(st.helper_starts, 1);
        assert_int_equal(st.helper_timeouts + st.helper_crashes, 0);
        assert_true(st.cache_bytes > 0);
        /* a shared library's function, named in its file (libc's, or
         * the sanitizer runtime's interceptor) */
        ips[1] = (uint64_t) (uintptr_t) &snprintf;
        assert_int_equal(ctx_symbols_resolve(s, getpid(), ips, 2, f), 1);
        assert_non_null(strstr(f[1].module, ".so"));
        assert_non_null(strstr(f[1].sym, "printf"));
        /* forgotten (exec, exit): read again */
        ctx_symbols_forget(s, getpid());
        ips[1] = (uint64_t) (uintptr_t) evmon_test_marker_function;
        assert_int_equal(ctx_symbols_resolve(s, getpid(), ips, 2, f), 1);
        assert_string_equal(f[1].sym, "evmon_test_marker_function");
        /* a pid that is no process: nothing named */
        assert_int_equal(ctx_symbols_resolve(s, 0x7ffffff0, ips, 2, f), 0);
        (void) evmon_test_marker_function(1);
}

/* A user's callchain through many files, each taking the helper just
 * under the frame's wait (a crafted ELF file, here a helper that takes
 * 40 ms on any file): the loop waits for them at most wait_ms in all, not
 * wait_ms per file (32 files x 40 ms = 1.3 s a sample, issue 26). */
static void test_wait_bound(void **state) {
        _cleanup_(ctx_symbols_freep) struct ctx_symbols *s = NULL;
        const char *root = getenv("EVMON_BUILD_ROOT");
        char helper[4096], dir[] = "/tmp/evmon-test-symbols-XXXXXX", path[4200];
        enum { N = 32 };
        uint64_t ips[N + 1];
        struct ctx_frame f[N + 1];
        unsigned waited = 0, pending = 0;

        if (!root)
                skip();  /* not under meson test: no slow-symbolizer */
        snprintf(helper, sizeof(helper), "%s/tests/context/slow-symbolizer", root);
        assert_non_null(mkdtemp(dir));
        assert_int_equal(ctx_symbols_new(&(struct ctx_symbols_opts) {
                                                 .max_modules = N, .max_procs = 2, .helper = helper,
                                                 .wait_ms = 100, .timeout_ms = 30000 }, &s), 0);
        ips[0] = PERF_CONTEXT_USER;
        for (unsigned i = 0; i < N; i++) {
                struct stat st;
                int fd;

                snprintf(path, sizeof(path), "%s/lib%u.so", dir, i);
                fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
                assert_true(fd >= 0);
                assert_int_equal(fstat(fd, &st), 0);
                close(fd);
                /* Mappings from records, where this process maps nothing. */
                ctx_symbols_mmap(s, getpid(), UINT64_C(0x7e0000000000) + i * 0x10000, 0x10000, 0,
                                 st.st_dev, st.st_ino, path);
                ips[1 + i] = UINT64_C(0x7e0000000000) + i * 0x10000 + 0x100;
        }
        assert_int_equal(ctx_symbols_resolve(s, getpid(), ips, N + 1, f), 0);
        /* A frame whose file's answer came in the call has no note (the
         * helper found no ELF); the others say why they have no name. */
        for (unsigned i = 1; i <= N; i++) {
                if (f[i].note)
                        pending++;
                else
                        waited++;
                snprintf(path, sizeof(path), "%s/lib%u.so", dir, i - 1);
                unlink(path);
        }
        rmdir(dir);
        /* 100 ms of waiting holds at most two or three 40 ms answers. */
        assert_true(waited <= 3);
        assert_int_equal(pending, N - waited);
}

/* The helper, the process that parses users' files and may end up theirs
 * to command, started by the daemon: it inherits the socket and nothing
 * else, neither the daemon's stderr (a root-owned log it could write
 * into) nor its environment (what it may say to a user in symbol names). */
static void test_helper_inherits(void **state) {
        _cleanup_(ctx_symbols_freep) struct ctx_symbols *s = NULL;
        uint64_t ips[2] = { PERF_CONTEXT_USER, (uint64_t) (uintptr_t) evmon_test_marker_function };
        struct ctx_frame f[2];
        char path[512], buf[4096], target[256];
        pid_t helper = 0;
        DIR *d;
        struct dirent *de;
        int fd, n_fds = 0;
        ssize_t n;

        assert_int_equal(setenv("EVMON_TEST_SECRET", "hunter2", 1), 0);
        assert_int_equal(ctx_symbols_new(&(struct ctx_symbols_opts) { .wait_ms = 30000, .timeout_ms = 30000 }, &s), 0);
        assert_int_equal(ctx_symbols_resolve(s, getpid(), ips, 2, f), 1);
        unsetenv("EVMON_TEST_SECRET");
        /* The helper: this process's child that is not a thread of it. */
        d = opendir("/proc");
        assert_non_null(d);
        while (!helper && (de = readdir(d))) {
                FILE *fp;
                int pid, ppid;

                snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
                fp = fopen(path, "re");
                if (!fp)
                        continue;
                if (fscanf(fp, "%d (%*[^)]) %*c %d", &pid, &ppid) == 2 && ppid == getpid())
                        helper = pid;
                fclose(fp);
        }
        closedir(d);
        assert_true(helper > 0);
        /* Non-dumpable: its /proc needs ptrace's capability. */
        snprintf(path, sizeof(path), "/proc/%d/environ", (int) helper);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                skip();
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        assert_true(n >= 0);
        buf[n] = 0;
        for (char *p = buf; p < buf + n; p += strlen(p) + 1)
                assert_null(strstr(p, "EVMON_TEST_SECRET"));
        snprintf(path, sizeof(path), "/proc/%d/fd", (int) helper);
        d = opendir(path);
        assert_non_null(d);
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                n_fds++;
                snprintf(path, sizeof(path), "/proc/%d/fd/%s", (int) helper, de->d_name);
                n = readlink(path, target, sizeof(target) - 1);
                assert_true(n > 0);
                target[n] = 0;
                if (atoi(de->d_name) == 3)
                        assert_non_null(strstr(target, "socket:"));
                else
                        assert_string_equal(target, "/dev/null");
        }
        closedir(d);
        assert_int_equal(n_fds, 4);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_kallsyms),
                cmocka_unit_test(test_kallsyms_live),
                cmocka_unit_test(test_user),
                cmocka_unit_test(test_wait_bound),
                cmocka_unit_test(test_helper_inherits),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
