/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Symbolization of users' files, attacked (issue 26, holes 6 and 7). An
 * unprivileged user (nobody) runs a copy of evmon-context-child, crafted
 * as it likes in a directory of its own, while evmond samples callchains
 * with "symbols": true and a client watches it:
 *   debuglink-fifo: stripped (no build id), its .gnu_debuglink naming a
 *                   FIFO beside it
 *   debuglink-zero: the same, the debug file a link to /dev/zero
 *   renamed-exe:    it moves its executable away and leaves a FIFO at the
 *                   path its exec was recorded by
 *   swapped-dir:    it swaps its directory for a link to a root-only one
 *                   holding an ELF file of its file's inode number
 *   namespace-path: in a user namespace of its own, it mounts a tmpfs over
 *                   a root-only directory and runs its file from there,
 *                   where evmond's namespace has root's file of its inode
 *                   number
 *   xz-bomb:        stripped, .gnu_debugdata the xz of 256 MiB of zeros
 *   many-symbols:   six files of 400,000 function symbols each
 *   helper-timeout, helper-crash: evmon-symbolizer replaced by a program
 *                   that never answers, or dies
 * Each: evmond answers a status request within a second while it is under
 * way, its RSS stays bounded, FIFOs are never opened, and the frames say
 * what was lost. Root, objcopy, strip and xz, else 77. */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "itest.h"

#define NOBODY 65534

static struct itest_daemon daemon_ = { .pid = -1 };
static char tmp[] = "/tmp/evmon-sym-XXXXXX";
static char child_src[512];
static int scale = 1;

static const char config[] =
        "{\"ring\": {\"pages\": 256}, \"events\": [{\"software\": \"cpu-clock\", \"period\": 1000000,\n"
        "  \"sample\": [\"callchain\"], \"symbols\": true}]}\n";

static uint64_t now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

static json_object *get(json_object *o, const char *key) {
        json_object *v;

        return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static const char *get_str(json_object *o, const char *key) {
        json_object *v = get(o, key);

        return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static void sh(const char *fmt, ...) {
        char cmd[4096];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(cmd, sizeof(cmd), fmt, ap);
        va_end(ap);
        if (system(cmd) != 0)
                fail_msg("failed: %s", cmd);
}

static bool have(const char *tool) {
        char cmd[256];

        snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", tool);
        return system(cmd) == 0;
}

/* kB of evmond's VmRSS or VmHWM. */
static long vm_kib(pid_t pid, const char *key) {
        char path[64], line[256];
        long kib = -1;
        FILE *f;

        snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
        f = fopen(path, "re");
        assert_non_null(f);
        while (fgets(line, sizeof(line), f))
                if (strncmp(line, key, strlen(key)) == 0 && line[strlen(key)] == ':')
                        kib = atol(line + strlen(key) + 1);
        fclose(f);
        return kib;
}

static int setup(void **state) {
        static const char *const need[] = { "sched/sched_process_exec", NULL };
        const char *e = getenv("EVMON_TEST_TIME_SCALE");

        itest_require(need);
        if (!have("objcopy") || !have("strip") || !have("xz")) {
                fprintf(stderr, "SKIP: objcopy, strip and xz (binutils, xz-utils) are needed\n");
                exit(77);
        }
        if (e && atoi(e) > 1)
                scale = atoi(e);
        assert_non_null(mkdtemp(tmp));
        /* The attacker's own directory. */
        assert_int_equal(chmod(tmp, 0755), 0);
        assert_int_equal(chown(tmp, NOBODY, NOBODY), 0);
        itest_build_path("tests/integration/evmon-context-child", child_src, sizeof(child_src));
        return 0;
}

static int teardown(void **state) {
        char cmd[600];

        itest_daemon_cleanup(&daemon_);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
        return system(cmd) == 0 ? 0 : -1;
}

/* After each test: an evmond that a failed one left (hung in an open,
 * on the old code) is killed. */
static int test_teardown(void **state) {
        itest_daemon_cleanup(&daemon_);
        return 0;
}

/* A copy of the child at DIR/NAME, the attacker's. */
static void make_prog(char *path, size_t size, const char *name) {
        snprintf(path, size, "%s/%s-%d", tmp, name, (int) (getpid() % 100000));
        sh("cp %s %s && chown %d:%d %s", child_src, path, NOBODY, NOBODY, path);
}

/* Runs PATH MODE MS [ARG] as nobody, not waited for. */
/* test_namespace_path's attacker: in a user and mount namespace of its
 * own, a tmpfs of its own at this directory, and this file copied in
 * as the executable. */
static const char *userns_mount, *userns_copy;

static int write_file(const char *path, const char *text) {
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return -1;
        n = write(fd, text, strlen(text));
        close(fd);
        return n == (ssize_t) strlen(text) ? 0 : -1;
}

static int enter_userns(const char *dir, const char *from, const char *to) {
        char cmd[1024];

        /* The uid change left it undumpable: its /proc/self root's. */
        if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0)
                return -1;
        if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0 || write_file("/proc/self/setgroups", "deny") < 0 ||
            write_file("/proc/self/uid_map", "0 65534 1") < 0 || write_file("/proc/self/gid_map", "0 65534 1") < 0 ||
            mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
            mount("evmon-user", dir, "tmpfs", 0, "mode=0755") < 0)
                return -1;
        snprintf(cmd, sizeof(cmd), "cp %s %s", from, to);
        return system(cmd) == 0 ? 0 : -1;
}

static pid_t attack_arg(const char *path, const char *mode, const char *ms, const char *arg) {
        pid_t pid = itest_fork();

        assert_true(pid >= 0);
        if (pid == 0) {
                if (setgroups(0, NULL) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
                    setresuid(NOBODY, NOBODY, NOBODY) < 0)
                        _exit(126);
                if (userns_mount && enter_userns(userns_mount, userns_copy, path) < 0)
                        _exit(125);
                execl(path, path, mode, ms, arg, (char *) NULL);
                _exit(127);
        }
        return pid;
}

struct outcome {
        int lines;                      /* the attacker's event lines */
        long status_ms;                 /* a status request's answer took, -1: none */
        const char *prefix;             /* the attacker's files: their paths' start, else PROG */
        int frames_in_prog;             /* frames in the attacker's file */
        int named_in_prog;              /* those with a name */
        char note[64];                  /* the last "symbols" note of such a frame */
        int notes;
        const char *count_note;         /* frames (of any file) with this note are counted in */
        int counted;
        json_object *status;            /* the last status line (caller puts it) */
};

static void check_frames(json_object *o, const char *prog, struct outcome *out) {
        json_object *cc = get(get(o, "sample"), "callchain");

        for (size_t i = 0; cc && i < json_object_array_length(cc); i++) {
                json_object *syms = get(json_object_array_get_idx(cc, i), "syms");

                assert_non_null(syms);
                for (size_t j = 0; j < json_object_array_length(syms); j++) {
                        json_object *f = json_object_array_get_idx(syms, j);
                        const char *module = get_str(f, "module"), *note = get_str(f, "symbols");

                        /* Any of its files (libc's too, for a helper that fails). */
                        if (note && out->count_note && strcmp(note, out->count_note) == 0)
                                out->counted++;
                        if (!module || strncmp(module, out->prefix ?: prog, strlen(out->prefix ?: prog)) != 0)
                                continue;
                        out->frames_in_prog++;
                        if (get_str(f, "sym"))
                                out->named_in_prog++;
                        /* The note of the path itself: a file renamed
                         * away is named at its new path (/proc/PID/maps,
                         * read for a frame no record mapped), rightly. */
                        if (note && strcmp(module, prog) == 0) {
                                snprintf(out->note, sizeof(out->note), "%s", note);
                                out->notes++;
                        }
                }
        }
}

/* Starts the attacker, waits for its first line, times a status request
 * on another connection meanwhile, and reads its lines to its end. */
static void run_attack_arg(const char *prog, const char *mode, const char *ms, const char *arg, struct outcome *out);

static void run_attack(const char *prog, const char *mode, const char *ms, struct outcome *out) {
        run_attack_arg(prog, mode, ms, NULL, out);
}

static void run_attack_arg(const char *prog, const char *mode, const char *ms, const char *arg, struct outcome *out) {
        struct itest_client c, st;
        json_object *o;
        uint64_t t0, end;
        pid_t pid;
        int status;

        *out = (struct outcome) { .status_ms = -1, .count_note = out->count_note, .prefix = out->prefix };
        assert_int_equal(itest_client_connect(&c, daemon_.socket), 0);
        assert_int_equal(itest_client_connect(&st, daemon_.socket), 0);
        json_object_put(itest_client_expect(&c, "hello", 5000));
        json_object_put(itest_client_expect(&st, "hello", 5000));
        assert_int_equal(itest_client_send(&c, "{\"type\":\"subscribe\",\"comms\":[\"evsym-*\"]}\n"), 0);
        json_object_put(itest_client_expect(&c, "subscribed", 5000));
        pid = attack_arg(prog, mode, ms, arg);
        /* Its first line: the loop has met its file. */
        end = now_ms() + 10000 * (uint64_t) scale;
        while (!out->lines && now_ms() < end && (o = itest_client_next(&c, 1000))) {
                if (strcmp(itest_str(o, "type"), "event") == 0 && itest_int(o, "pid") == pid) {
                        out->lines++;
                        check_frames(o, prog, out);
                }
                json_object_put(o);
        }
        t0 = now_ms();
        assert_int_equal(itest_client_send(&st, "{\"type\":\"status\"}\n"), 0);
        o = itest_client_expect(&st, "status", 5000);
        if (o) {
                out->status_ms = (long) (now_ms() - t0);
                out->status = o;
        }
        /* The rest of its lines, to its end. */
        while ((o = itest_client_next(&c, 1500))) {
                if (strcmp(itest_str(o, "type"), "event") == 0 && itest_int(o, "pid") == pid) {
                        out->lines++;
                        check_frames(o, prog, out);
                }
                json_object_put(o);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        itest_client_close(&c);
        itest_client_close(&st);
        fprintf(stderr, "%s %s: %d lines, status answered in %ld ms, %d frames in its file, %d named, %d noted (last \"%s\"",
                prog, mode, out->lines, out->status_ms, out->frames_in_prog, out->named_in_prog, out->notes, out->note);
        if (out->count_note)
                fprintf(stderr, ", %d \"%s\"", out->counted, out->count_note);
        fputs(")\n", stderr);
}

/* No reader has FIFO open: evmond never opened it (an open for reading
 * blocked in there would be one). */
static void assert_fifo_unopened(const char *fifo) {
        int fd = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);

        if (fd >= 0) {
                close(fd);
                fail_msg("%s has a reader: evmond opened it", fifo);
        }
        assert_int_equal(errno, ENXIO);
}

static void assert_responsive(const struct outcome *out) {
        assert_true(out->lines > 0);
        assert_true(out->status_ms >= 0);
        assert_true(out->status_ms < 1000 * scale);
}

/* A status line now (the caller puts it). */
static json_object *status_now(void) {
        struct itest_client c;
        json_object *o;

        assert_int_equal(itest_client_connect(&c, daemon_.socket), 0);
        json_object_put(itest_client_expect(&c, "hello", 5000));
        assert_int_equal(itest_client_send(&c, "{\"type\":\"status\"}\n"), 0);
        o = itest_client_expect(&c, "status", 5000);
        assert_non_null(o);
        itest_client_close(&c);
        return o;
}

static void daemon_start(void) {
        char ms[16];

        /* The sanitizers' slower helper gets the time they get. */
        const char *asan = getenv("ASAN_OPTIONS");
        char *saved = asan ? strdup(asan) : NULL, opts[1024];

        snprintf(ms, sizeof(ms), "%d", 2000 * scale);
        setenv("EVMON_SYMBOLIZER_TIMEOUT_MS", ms, 1);
        /* ASan's quarantine holds freed memory (256 MiB): the RSS bounds
         * below would measure it, not evmond. */
        if (saved) {
                snprintf(opts, sizeof(opts), "%s:quarantine_size_mb=1", saved);
                setenv("ASAN_OPTIONS", opts, 1);
        }
        assert_int_equal(itest_daemon_start(&daemon_, config), 0);
        unsetenv("EVMON_SYMBOLIZER_TIMEOUT_MS");
        if (saved)
                setenv("ASAN_OPTIONS", saved, 1);
        free(saved);
}

static void daemon_stop(void) {
        assert_int_equal(itest_daemon_stop(&daemon_), 0);
        itest_daemon_cleanup(&daemon_);
}

/* A stripped copy whose .gnu_debuglink names PATH.debug, then made
 * a FIFO or a link to /dev/zero by its owner. */
static void test_debuglink(bool fifo) {
        char prog[300], debug[320];
        struct outcome out = {};

        make_prog(prog, sizeof(prog), fifo ? "evsym-dlf" : "evsym-dlz");
        snprintf(debug, sizeof(debug), "%s.debug", prog);
        /* Without a build id, a debug file found by its link is checked
         * by the CRC of all of it (elfutils' find_debuginfo). */
        sh("objcopy --only-keep-debug %s %s && strip --strip-all --remove-section=.note.gnu.build-id %s && "
           "objcopy --add-gnu-debuglink=%s %s", prog, debug, prog, debug, prog);
        assert_int_equal(unlink(debug), 0);
        if (fifo)
                assert_int_equal(mkfifo(debug, 0644), 0);
        else
                assert_int_equal(symlink("/dev/zero", debug), 0);
        assert_int_equal(lchown(debug, NOBODY, NOBODY), 0);
        daemon_start();
        run_attack(prog, "busy", "1500", &out);
        assert_responsive(&out);
        if (fifo)
                assert_fifo_unopened(debug);
        json_object_put(out.status);
        daemon_stop();
}

static void test_debuglink_fifo(void **state) {
        test_debuglink(true);
}

static void test_debuglink_zero(void **state) {
        test_debuglink(false);
}

static void test_renamed_exe(void **state) {
        char prog[300];
        struct outcome out = {};

        make_prog(prog, sizeof(prog), "evsym-mv");
        daemon_start();
        run_attack(prog, "flee", "1500", &out);
        assert_responsive(&out);
        assert_fifo_unopened(prog);
        /* Its frames name the path the exec was recorded by, and why
         * they have no name; or, where /proc/PID/maps was read after
         * the rename, the new path and its names. */
        assert_true(out.frames_in_prog > 0);
        if (out.notes)
                assert_string_equal(out.note, "not a regular file");
        json_object_put(out.status);
        daemon_stop();
}

/* A root-only ELF file, reached by a link the attacker swaps in for a
 * directory on the path its exec was recorded by. The attacker's file
 * and root's have one inode number (two fresh tmpfs, the same files
 * made in the same order: a user gets there on /dev/shm, or on a tmpfs
 * of their own user namespace, by making files until the counter is
 * there). evmond followed the link (O_NOFOLLOW is for the last
 * component only), found the inode it wanted, and gave the user the
 * names of root's functions. */
static void test_swapped_dir(void **state) {
        char atk[300], secret[300], dir[320], target[320], prog[340], cmd[1200];
        struct stat a, b;
        struct outcome out = {};

        snprintf(atk, sizeof(atk), "%s/atk", tmp);
        snprintf(secret, sizeof(secret), "%s/secret", tmp);
        assert_int_equal(mkdir(atk, 0755), 0);
        assert_int_equal(mkdir(secret, 0700), 0);
        snprintf(cmd, sizeof(cmd), "mount -t tmpfs -o mode=0755 evmon-atk %s 2>/dev/null && "
                 "mount -t tmpfs -o mode=0700 evmon-secret %s", atk, secret);
        if (system(cmd) != 0) {
                rmdir(atk);
                rmdir(secret);
                skip();  /* no tmpfs mounts here (a container) */
        }
        snprintf(dir, sizeof(dir), "%s/d", atk);
        snprintf(target, sizeof(target), "%s/pad", secret);
        snprintf(prog, sizeof(prog), "%s/evsym-sw", dir);
        /* The attacker's copy stripped: any name of its functions would
         * be root's file's. */
        sh("mkdir %s %s && cp %s %s && cp %s %s/evsym-sw && strip --strip-all %s && "
           "chown -R %d:%d %s && chmod 0700 %s %s && chmod 0755 %s",
           dir, target, child_src, prog, child_src, target, prog, NOBODY, NOBODY, atk, secret, target, dir);
        assert_int_equal(stat(prog, &a), 0);
        snprintf(cmd, sizeof(cmd), "%s/evsym-sw", target);
        assert_int_equal(stat(cmd, &b), 0);
        if (a.st_ino != b.st_ino) {
                fprintf(stderr, "inodes %ju and %ju: tmpfs numbers its inodes otherwise here\n",
                        (uintmax_t) a.st_ino, (uintmax_t) b.st_ino);
                snprintf(cmd, sizeof(cmd), "umount %s %s", atk, secret);
                sh("%s", cmd);
                skip();
        }
        daemon_start();
        /* Its frames under the recorded path (refused), or under
         * d.moved (its own stripped file, where /proc/PID/maps was read
         * after the swap): no name from root's file in either. */
        out.prefix = atk;
        run_attack_arg(prog, "swapdir", "1500", target, &out);
        assert_responsive(&out);
        snprintf(cmd, sizeof(cmd), "umount %s %s", atk, secret);
        sh("%s", cmd);
        assert_true(out.frames_in_prog > 0);
        assert_int_equal(out.named_in_prog, 0);
        json_object_put(out.status);
        daemon_stop();
}

/* A path that is the attacker's file in its own mount namespace (a
 * tmpfs it mounted in its user namespace, over a directory of root's)
 * and root's file in evmond's, of the same inode number. Where
 * /proc/PID/root is closed to evmond (another user's process, once it
 * dropped its capabilities) it opens the path in its own namespace, and
 * the inode number alone let root's file pass for the mapped one. */
static void test_namespace_path(void **state) {
        char dir[300], prog[340], stripped[340], cmd[1200];
        struct outcome out = {};
        int r;

        /* Can nobody make a user namespace and mount there? */
        snprintf(cmd, sizeof(cmd), "setpriv --reuid=%d --regid=%d --clear-groups unshare -Urm true 2>/dev/null",
                 NOBODY, NOBODY);
        if (system(cmd) != 0)
                skip();  /* no unprivileged user namespaces here */
        snprintf(dir, sizeof(dir), "%s/ns", tmp);
        snprintf(prog, sizeof(prog), "%s/evsym-ns", dir);
        snprintf(stripped, sizeof(stripped), "%s/evsym-ns.stripped", tmp);
        assert_int_equal(mkdir(dir, 0700), 0);
        snprintf(cmd, sizeof(cmd), "mount -t tmpfs -o mode=0700 evmon-secret %s", dir);
        if (system(cmd) != 0) {
                rmdir(dir);
                skip();  /* no tmpfs mounts here (a container) */
        }
        /* Root's file, first in a fresh tmpfs, as the attacker's will be
         * in its own; the attacker's copy stripped, so any name of its
         * functions is root's file's. */
        sh("cp %s %s && cp %s %s && strip --strip-all %s && chmod 0755 %s",
           child_src, prog, child_src, stripped, stripped, stripped);
        daemon_start();
        userns_mount = dir;
        userns_copy = stripped;
        run_attack_arg(prog, "busy", "1500", NULL, &out);
        userns_mount = userns_copy = NULL;
        assert_responsive(&out);
        snprintf(cmd, sizeof(cmd), "umount %s", dir);
        r = system(cmd);
        assert_int_equal(r, 0);
        assert_true(out.frames_in_prog > 0);
        assert_int_equal(out.named_in_prog, 0);
        json_object_put(out.status);
        daemon_stop();
}

/* Its tmpfs gone, also after a failure (the rest of teardown() is rm -rf). */
static int swapped_dir_teardown(void **state) {
        char cmd[700];

        itest_daemon_cleanup(&daemon_);
        userns_mount = userns_copy = NULL;
        snprintf(cmd, sizeof(cmd), "umount %s/atk %s/secret %s/ns 2>/dev/null", tmp, tmp, tmp);
        (void) system(cmd);
        return 0;
}

static void test_xz_bomb(void **state) {
        char prog[300], xz[320];
        struct outcome out = {};
        long rss0, hwm0, rss1, hwm1;

        make_prog(prog, sizeof(prog), "evsym-xz");
        snprintf(xz, sizeof(xz), "%s.xz", prog);
        sh("head -c 256M /dev/zero | xz -0 -T1 > %s && strip --strip-all %s && "
           "objcopy --add-section .gnu_debugdata=%s %s && rm -f %s", xz, prog, xz, prog, xz);
        daemon_start();
        rss0 = vm_kib(daemon_.pid, "VmRSS");
        hwm0 = vm_kib(daemon_.pid, "VmHWM");
        run_attack(prog, "busy", "1500", &out);
        rss1 = vm_kib(daemon_.pid, "VmRSS");
        hwm1 = vm_kib(daemon_.pid, "VmHWM");
        fprintf(stderr, "evmond: VmRSS %ld -> %ld kB, VmHWM %ld -> %ld kB\n", rss0, rss1, hwm0, hwm1);
        assert_responsive(&out);
        /* The old evmond decompressed all of it, in itself (+256 MiB). */
        assert_true(hwm1 - hwm0 < 32 * 1024);
        assert_true(out.frames_in_prog > 0);
        assert_string_equal(out.note, "minidebuginfo over its bound");
        json_object_put(out.status);
        daemon_stop();
}

static void test_many_symbols(void **state) {
        char args[300], prog[300];
        struct outcome out = {};
        long rss0, rss1, hwm1;
        json_object *syms;
        int64_t cache;
        FILE *f;

        /* 400,000 function symbols, 15 MB: ~13 MB of table each. */
        snprintf(args, sizeof(args), "%s/syms.txt", tmp);
        f = fopen(args, "we");
        assert_non_null(f);
        for (int i = 0; i < 400000; i++)
                /* Each at its own address (aliases leave one). */
                fprintf(f, "--add-symbol=evsym_f%06d=.text:0x%x,function,global\n", i, i * 16);
        assert_int_equal(fclose(f), 0);
        daemon_start();
        rss0 = vm_kib(daemon_.pid, "VmRSS");
        for (int k = 0; k < 6; k++) {
                char name[32];

                snprintf(name, sizeof(name), "evsym-s%d", k);
                make_prog(prog, sizeof(prog), name);
                sh("objcopy @%s %s", args, prog);
                run_attack(prog, "busy", "1500", &out);
                fprintf(stderr, "evmond: VmRSS %ld kB after %d files\n", vm_kib(daemon_.pid, "VmRSS"), k + 1);
                assert_responsive(&out);
                /* The cache once the file's table is in (the status
                 * during the attack may come before it, on a loaded
                 * host: "0 modules"). */
                json_object_put(out.status);
                out.status = status_now();
                syms = get(get(out.status, "context"), "symbols");
                assert_non_null(syms);
                assert_non_null(get(syms, "cache_bytes"));
                cache = json_object_get_int64(get(syms, "cache_bytes"));
                fprintf(stderr, "status: %" PRId64 " modules, %" PRId64 " bytes of symbol tables\n",
                        json_object_get_int64(get(syms, "modules")), cache);
                /* Bounded in bytes: 64 MiB by default. */
                assert_true(cache > 0 && cache <= 64 << 20);
                json_object_put(out.status);
        }
        rss1 = vm_kib(daemon_.pid, "VmRSS");
        hwm1 = vm_kib(daemon_.pid, "VmHWM");
        fprintf(stderr, "evmond: VmRSS %ld -> %ld kB (VmHWM %ld kB) after six files of 400,000 symbols\n", rss0,
                rss1, hwm1);
        /* The tables (64 MiB at most) and one answer in flight. */
        assert_true(rss1 - rss0 < 96 * 1024);
        daemon_stop();
}

/* evmon-symbolizer replaced by SCRIPT: frames lose their names and say
 * why; the loop waits a second at most, once per back-off. */
static void test_helper(const char *script, const char *want, const char *counter) {
        char helper[300], prog[300], ms[16], *old = getenv("EVMON_SYMBOLIZER") ? strdup(getenv("EVMON_SYMBOLIZER")) : NULL;
        json_object *syms;
        struct outcome out = {};
        FILE *f;

        snprintf(helper, sizeof(helper), "%s/helper-%s", tmp, counter);
        f = fopen(helper, "we");
        assert_non_null(f);
        fprintf(f, "#!/bin/sh\n%s\n", script);
        assert_int_equal(fclose(f), 0);
        assert_int_equal(chmod(helper, 0755), 0);
        make_prog(prog, sizeof(prog), "evsym-h");
        setenv("EVMON_SYMBOLIZER", helper, 1);
        daemon_start();
        if (old)
                setenv("EVMON_SYMBOLIZER", old, 1);
        else
                unsetenv("EVMON_SYMBOLIZER");
        free(old);
        /* Past the helper's deadline (2 s): its file's frames say so. */
        snprintf(ms, sizeof(ms), "%d", 3500 * scale);
        out.count_note = want;
        run_attack(prog, "busy", ms, &out);
        assert_responsive(&out);
        assert_true(out.counted > 0);
        json_object_put(out.status);
        out.status = status_now();
        syms = get(get(out.status, "context"), "symbols");
        assert_non_null(syms);
        assert_non_null(get(syms, counter));
        fprintf(stderr, "status: %s %" PRId64 "\n", counter, json_object_get_int64(get(syms, counter)));
        assert_true(json_object_get_int64(get(syms, counter)) >= 1);
        json_object_put(out.status);
        daemon_stop();
}

static void test_helper_timeout(void **state) {
        test_helper("exec sleep 60", "helper timed out", "helper_timeouts");
}

static void test_helper_crash(void **state) {
        test_helper("exit 1", "helper failed", "helper_failures");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_teardown(test_debuglink_fifo, test_teardown),
                cmocka_unit_test_teardown(test_debuglink_zero, test_teardown),
                cmocka_unit_test_teardown(test_renamed_exe, test_teardown),
                cmocka_unit_test_teardown(test_swapped_dir, swapped_dir_teardown),
                cmocka_unit_test_teardown(test_namespace_path, swapped_dir_teardown),
                cmocka_unit_test_teardown(test_xz_bomb, test_teardown),
                cmocka_unit_test_teardown(test_many_symbols, test_teardown),
                cmocka_unit_test_teardown(test_helper_timeout, test_teardown),
                cmocka_unit_test_teardown(test_helper_crash, test_teardown),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
