/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* elf_resolve_symbol() against binaries built for the test (PIE, non-PIE,
 * stripped) and the real libc. Expected offsets come from two independent
 * sources: readelf's symbol and program-header tables, and, for libc, the
 * kernel's own /proc/self/maps view of where the symbol's page comes from
 * in the file (which is what a uprobe's offset must match). */

#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "evmon/cleanup.h"
#include "evmon/probe.h"
#include "../test-util.h"

/* Symbol value from `readelf -Ws`: .symtab's first, else .dynsym's. */
static int readelf_value(const char *path, const char *symbol, uint64_t *ret) {
        _cleanup_(freep) char *cmd = NULL, *line = NULL;
        size_t cap = 0;
        FILE *p;
        bool in_symtab = false, have_sym = false, have_dyn = false, dyn_default = false, is_default;
        uint64_t v_sym = 0, v_dyn = 0;

        assert_true(asprintf(&cmd, "readelf -Ws '%s'", path) > 0);
        p = popen(cmd, "r");
        assert_non_null(p);
        while (getline(&line, &cap, p) > 0) {
                char num[32], value[32], size[32], type[32], bind[32], vis[32], ndx[32], name[512];

                if (strstr(line, "Symbol table '.symtab'"))
                        in_symtab = true;
                else if (strstr(line, "Symbol table '.dynsym'"))
                        in_symtab = false;
                if (sscanf(line, " %31s %31s %31s %31s %31s %31s %31s %511s", num, value, size, type, bind,
                           vis, ndx, name) != 8)
                        continue;
                is_default = strstr(name, "@@");
                name[strcspn(name, "@")] = 0;
                if (strcmp(name, symbol) != 0 || strcmp(ndx, "UND") == 0)
                        continue;
                if (in_symtab && !have_sym) {
                        v_sym = strtoull(value, NULL, 16);
                        have_sym = true;
                } else if (!in_symtab && (!have_dyn || (is_default && !dyn_default))) {
                        /* name@@VER is the default version: what a link
                         * binds to, and what the resolver must pick. */
                        v_dyn = strtoull(value, NULL, 16);
                        have_dyn = true;
                        dyn_default = is_default;
                }
        }
        pclose(p);
        if (!have_sym && !have_dyn)
                return -ENOENT;
        *ret = have_sym ? v_sym : v_dyn;
        return 0;
}

/* File offset of VALUE by the LOAD lines of `readelf -lW`. */
static uint64_t readelf_file_offset(const char *path, uint64_t value) {
        _cleanup_(freep) char *cmd = NULL, *line = NULL;
        size_t cap = 0;
        FILE *p;
        bool found = false;
        uint64_t result = 0;

        assert_true(asprintf(&cmd, "readelf -lW '%s'", path) > 0);
        p = popen(cmd, "r");
        assert_non_null(p);
        while (getline(&line, &cap, p) > 0) {
                unsigned long long off, vaddr, paddr, filesz, memsz;

                if (sscanf(line, " LOAD 0x%llx 0x%llx 0x%llx 0x%llx 0x%llx", &off, &vaddr, &paddr, &filesz,
                           &memsz) != 5)
                        continue;
                if (!found && value >= vaddr && value < vaddr + filesz) {
                        result = value - vaddr + off;
                        found = true;
                }
        }
        pclose(p);
        assert_true(found);
        return result;
}

static void check_against_readelf(const char *path, const char *symbol, bool expect_differs) {
        _cleanup_(freep) char *real = NULL, *err = NULL, *want_real = NULL;
        uint64_t off = 0, value = 0, want;

        assert_int_equal(readelf_value(path, symbol, &value), 0);
        want = readelf_file_offset(path, value);

        assert_int_equal(elf_resolve_symbol(path, symbol, &off, &real, &err), 0);
        assert_null(err);
        assert_int_equal(off, want);
        if (expect_differs)
                assert_true(off != value); /* using st_value as-is would be wrong */

        want_real = realpath(path, NULL);
        assert_non_null(want_real);
        assert_string_equal(real, want_real);
}

static void test_pie(void **state) {
        check_against_readelf(test_env("PROBE_TARGET"), "evmon_target", false);
        /* A static function: only in .symtab. */
        check_against_readelf(test_env("PROBE_TARGET"), "evmon_local", false);
        check_against_readelf(test_env("PROBE_TARGET"), "main", false);
}

static void test_nopie(void **state) {
        check_against_readelf(test_env("PROBE_TARGET_NOPIE"), "evmon_target", true);
        check_against_readelf(test_env("PROBE_TARGET_NOPIE"), "evmon_local", true);
}

/* Where the kernel mapped ADDR from: file offset by /proc/self/maps. */
static uint64_t maps_file_offset(const void *addr, char **ret_file) {
        _cleanup_(freep) char *line = NULL;
        size_t cap = 0;
        FILE *f = fopen("/proc/self/maps", "re");
        uint64_t result = UINT64_MAX;

        assert_non_null(f);
        while (getline(&line, &cap, f) > 0) {
                unsigned long long start, end, off;
                char perms[8];
                int pos = 0;

                if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &off, &pos) < 4)
                        continue;
                if ((uintptr_t) addr < start || (uintptr_t) addr >= end)
                        continue;
                result = (uintptr_t) addr - start + off;
                line[strcspn(line, "\n")] = 0;
                *ret_file = strdup(line + pos);
                break;
        }
        fclose(f);
        assert_true(result != UINT64_MAX);
        return result;
}

static void check_libc_symbol(const char *symbol) {
        _cleanup_(freep) char *real = NULL, *err = NULL, *mapped = NULL, *want_real = NULL;
        Dl_info info;
        void *addr;
        uint64_t off = 0, want;

        addr = dlsym(RTLD_DEFAULT, symbol);
        assert_non_null(addr);
        assert_true(dladdr(addr, &info) != 0);
        assert_non_null(info.dli_fname);

        want = maps_file_offset(addr, &mapped);
        assert_int_equal(elf_resolve_symbol(info.dli_fname, symbol, &off, &real, &err), 0);
        assert_null(err);
        assert_int_equal(off, want);

        /* The loader names libc by the path it opened (often through the
         * /lib symlink); the resolver gives the real file, as maps does. */
        want_real = realpath(mapped, NULL);
        assert_non_null(want_real);
        assert_string_equal(real, want_real);

        check_against_readelf(info.dli_fname, symbol, false);
}

static void test_libc(void **state) {
        check_libc_symbol("getpid");
        check_libc_symbol("write");
        check_libc_symbol("strtol");
        /* Two versions at two addresses: realpath@@GLIBC_2.3 and
         * realpath@GLIBC_2.2.5; dlsym, like the resolver, takes the
         * default. */
        check_libc_symbol("realpath");
        check_libc_symbol("pthread_cond_wait");
}

static void test_symlink(void **state) {
        _cleanup_(freep) char *dir = NULL, *link = NULL, *real = NULL, *want = NULL, *err = NULL;
        uint64_t off = 0, off2 = 0;
        char tmpl[] = "/tmp/evmon-test-elf-XXXXXX";

        dir = strdup(mkdtemp(tmpl));
        assert_non_null(dir);
        assert_true(asprintf(&link, "%s/link", dir) > 0);
        assert_int_equal(symlink(test_env("PROBE_TARGET"), link), 0);

        assert_int_equal(elf_resolve_symbol(link, "evmon_target", &off, &real, &err), 0);
        want = realpath(test_env("PROBE_TARGET"), NULL);
        assert_string_equal(real, want);
        assert_int_equal(elf_resolve_symbol(test_env("PROBE_TARGET"), "evmon_target", &off2, NULL, NULL), 0);
        assert_int_equal(off, off2);

        unlink(link);
        rmdir(dir);
}

static void expect_error(const char *path, const char *symbol, int error, const char *needle) {
        _cleanup_(freep) char *err = NULL, *real = NULL;
        uint64_t off = 12345;

        assert_int_equal(elf_resolve_symbol(path, symbol, &off, &real, &err), error);
        assert_int_equal(off, 12345);
        assert_null(real);
        assert_non_null(err);
        if (!strstr(err, needle))
                fail_msg("error \"%s\" does not mention \"%s\"", err, needle);
        /* And with no message wanted. */
        assert_int_equal(elf_resolve_symbol(path, symbol, &off, NULL, NULL), error);
}

static void test_errors(void **state) {
        char tmpl[] = "/tmp/evmon-test-elf-XXXXXX";
        int fd;

        expect_error("/nonexistent/evmon/binary", "main", -ENOENT, "/nonexistent/evmon/binary");
        expect_error(test_env("PROBE_TARGET"), "evmon_no_such_symbol", -ENOENT,
                     "symbol evmon_no_such_symbol not found in");
        /* Undefined in the file (imported from libc): not a definition. */
        expect_error(test_env("PROBE_TARGET"), "strlen", -ENOENT, "not found");
        expect_error(test_env("PROBE_TARGET"), "evmon_dup", -ENOTUNIQ, "ambiguous");
        /* --strip-all keeps .dynsym, which lacks our functions. */
        expect_error(test_env("PROBE_TARGET_STRIPPED"), "evmon_target", -ENOENT, "stripped");
        /* A static executable has no .dynsym to keep. */
        expect_error(test_env("PROBE_TARGET_STATIC_STRIPPED"), "evmon_target", -ENODATA, "stripped");

        fd = mkstemp(tmpl);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, "#!/bin/sh\necho not elf\n", 23), 23);
        close(fd);
        expect_error(tmpl, "main", -ENOEXEC, "not an ELF file");
        unlink(tmpl);

        assert_int_equal(elf_resolve_symbol(test_env("PROBE_TARGET"), "", &(uint64_t) { 0 }, NULL, NULL), -EINVAL);
}

/* The "Build ID:" readelf -n prints for PATH, "" when it prints none. */
static void readelf_build_id(const char *path, char *ret, size_t size) {
        _cleanup_(freep) char *cmd = NULL, *line = NULL;
        size_t cap = 0;
        FILE *p;

        ret[0] = 0;
        assert_true(asprintf(&cmd, "readelf -n '%s'", path) > 0);
        p = popen(cmd, "r");
        assert_non_null(p);
        while (getline(&line, &cap, p) > 0)
                if (sscanf(line, " Build ID: %127s", ret) == 1)
                        break;
        pclose(p);
        assert_true(size > 128);
}

static void check_build_id(const char *path) {
        _cleanup_(freep) char *hex = NULL, *err = NULL;
        char want[256];

        readelf_build_id(path, want, sizeof(want));
        assert_true(strlen(want) >= 16);
        assert_int_equal(elf_build_id(path, &hex, &err), 0);
        assert_null(err);
        assert_string_equal(hex, want);
}

static void test_build_id(void **state) {
        _cleanup_(freep) char *hex = NULL, *err = NULL, *cmd = NULL, *hex2 = NULL;
        char tmpl[] = "/tmp/evmon-test-elf-XXXXXX";
        int fd;

        /* Our targets (gcc links --build-id on Debian), a stripped one
         * (strip keeps the note) and the real libc. */
        check_build_id(test_env("PROBE_TARGET"));
        check_build_id(test_env("PROBE_TARGET_STRIPPED"));
        check_build_id(test_env("PROBE_TARGET_NOPIE"));
        {
                char *libc = NULL;

                maps_file_offset((const void *) printf, &libc);
                check_build_id(libc);
                free(libc);
        }
        /* Two builds of one program differ. */
        assert_int_equal(elf_build_id(test_env("PROBE_TARGET"), &hex, NULL), 0);
        assert_int_equal(elf_build_id(test_env("PROBE_TARGET_NOPIE"), &hex2, NULL), 0);
        assert_string_not_equal(hex, hex2);

        /* Without the note. */
        fd = mkstemp(tmpl);
        assert_true(fd >= 0);
        close(fd);
        assert_true(asprintf(&cmd, "objcopy --remove-section .note.gnu.build-id '%s' '%s'", test_env("PROBE_TARGET"),
                             tmpl) > 0);
        assert_int_equal(system(cmd), 0);
        free(hex);
        hex = NULL;
        assert_int_equal(elf_build_id(tmpl, &hex, &err), -ENODATA);
        assert_non_null(strstr(err, "no build id"));
        assert_null(hex);
        free(err);
        err = NULL;

        fd = open(tmpl, O_WRONLY | O_TRUNC | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, "#!/bin/sh\n", 10), 10);
        close(fd);
        assert_int_equal(elf_build_id(tmpl, &hex, &err), -ENOEXEC);
        assert_non_null(strstr(err, "not an ELF file"));
        unlink(tmpl);
        free(err);
        err = NULL;
        assert_int_equal(elf_build_id("/nonexistent/evmon/binary", &hex, &err), -ENOENT);
        assert_non_null(strstr(err, "/nonexistent/evmon/binary"));
}

/* Issue 26: a FIFO where a probe target is named (config, admin add,
 * followed path) is refused at once, naming it, instead of blocking the
 * caller in open() until a writer comes. alarm(): on the old code the
 * test dies of SIGALRM rather than hanging. */
static void test_fifo(void **state) {
        char dir[] = "/tmp/evmon-test-elf-XXXXXX", fifo[64], target[96];
        _cleanup_(probe_target_done) struct probe_target t = {};
        char *err = NULL, *hex = NULL;
        uint64_t off;

        assert_non_null(mkdtemp(dir));
        snprintf(fifo, sizeof(fifo), "%s/prog", dir);
        assert_int_equal(mkfifo(fifo, 0644), 0);
        alarm(10);
        assert_int_equal(elf_resolve_symbol(fifo, "evmon_target", &off, NULL, &err), -EINVAL);
        assert_non_null(strstr(err, "not a regular file"));
        assert_non_null(strstr(err, fifo));
        free(err);
        assert_int_equal(elf_build_id(fifo, &hex, &err), -EINVAL);
        assert_non_null(strstr(err, "is a FIFO, not a regular file"));
        free(err);
        /* An offset target reads nothing of the file, but is refused alike. */
        snprintf(target, sizeof(target), "%s:0x1000", fifo);
        assert_int_equal(probe_resolve_target(PROBE_UPROBE, target, &t, &err), -EINVAL);
        assert_non_null(strstr(err, "not a regular file"));
        free(err);
        assert_int_equal(elf_open_regular(AT_FDCWD, dir, NULL, 0, NULL, &err), -EINVAL);
        assert_non_null(strstr(err, "is a directory"));
        free(err);
        alarm(0);
        unlink(fifo);
        rmdir(dir);
}

/* elf_open_regular(): a link is refused with ELF_OPEN_NOFOLLOW, followed
 * without; the fd entry points give what the path ones give. */
static void test_open_regular(void **state) {
        char dir[] = "/tmp/evmon-test-elf-XXXXXX", link[64];
        _cleanup_(freep) char *hex = NULL, *hex_fd = NULL;
        char *err = NULL;
        uint64_t off, off_fd;
        struct stat st, st2;
        int fd, dfd;

        assert_non_null(mkdtemp(dir));
        snprintf(link, sizeof(link), "%s/prog", dir);
        assert_int_equal(symlink(test_env("PROBE_TARGET"), link), 0);
        dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_true(dfd >= 0);
        assert_int_equal(elf_open_regular(dfd, "prog", link, ELF_OPEN_NOFOLLOW, NULL, &err), -ELOOP);
        assert_non_null(strstr(err, "symbolic link"));
        assert_non_null(strstr(err, link));
        free(err);
        fd = elf_open_regular(dfd, "prog", NULL, 0, &st, &err);
        assert_true(fd >= 0);
        assert_null(err);
        assert_int_equal(stat(test_env("PROBE_TARGET"), &st2), 0);
        assert_true(st.st_ino == st2.st_ino && st.st_dev == st2.st_dev);
        assert_int_equal(fcntl(fd, F_GETFL) & (O_ACCMODE | O_NONBLOCK), O_RDONLY | O_NONBLOCK);
        assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
        assert_int_equal(elf_resolve_symbol_fd(fd, "prog", "evmon_target", &off_fd, NULL), 0);
        assert_int_equal(elf_resolve_symbol(test_env("PROBE_TARGET"), "evmon_target", &off, NULL, NULL), 0);
        assert_true(off == off_fd);
        assert_int_equal(elf_build_id_fd(fd, "prog", &hex_fd, NULL), 0);
        assert_int_equal(elf_build_id(test_env("PROBE_TARGET"), &hex, NULL), 0);
        assert_string_equal(hex, hex_fd);
        assert_int_equal(elf_resolve_symbol_fd(fd, "prog", "no_such_symbol_here", &off_fd, &err), -ENOENT);
        assert_non_null(strstr(err, "prog"));
        free(err);
        close(fd);
        close(dfd);
        unlink(link);
        rmdir(dir);
}

/* A symbol table larger than ELF_SECTION_MAX is not read (libelf would
 * read it whole): the header of a copy claims 512 MiB for .symtab. */
static void test_section_bound(void **state) {
        char tmpl[] = "/tmp/evmon-test-elf-XXXXXX";
        _cleanup_(freep) char *cmd = NULL;
        Elf64_Ehdr eh;
        Elf64_Shdr sh;
        char *err = NULL;
        uint64_t off;
        bool patched = false;
        int fd;

        fd = mkstemp(tmpl);
        assert_true(fd >= 0);
        close(fd);
        assert_true(asprintf(&cmd, "cp '%s' '%s'", test_env("PROBE_TARGET"), tmpl) > 0);
        assert_int_equal(system(cmd), 0);
        fd = open(tmpl, O_RDWR | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(pread(fd, &eh, sizeof(eh), 0), (ssize_t) sizeof(eh));
        assert_int_equal(eh.e_ident[EI_CLASS], ELFCLASS64);
        for (unsigned i = 0; i < eh.e_shnum; i++) {
                off_t at = (off_t) (eh.e_shoff + (uint64_t) i * eh.e_shentsize);

                assert_int_equal(pread(fd, &sh, sizeof(sh), at), (ssize_t) sizeof(sh));
                if (sh.sh_type != SHT_SYMTAB)
                        continue;
                sh.sh_size = (uint64_t) 512 << 20;
                assert_int_equal(pwrite(fd, &sh, sizeof(sh), at), (ssize_t) sizeof(sh));
                patched = true;
        }
        close(fd);
        assert_true(patched);
        assert_int_equal(elf_resolve_symbol(tmpl, "evmon_target", &off, NULL, &err), -EFBIG);
        assert_non_null(strstr(err, "536870912 bytes, more than the 268435456 evmon reads"));
        free(err);
        unlink(tmpl);
}

/* Issue 26: a link of a user's (lchown(), as if that user made it in a
 * directory it may write) leads only to that user's files: to root's
 * probe-target it is refused, naming the link and both owners, whether it
 * is the last component or a parent directory on the way. Root's links
 * are followed as before. Needs root for lchown(): 77 otherwise. */
static void test_user_link(void **state) {
        char dir[] = "/tmp/evmon-test-elf-XXXXXX", link[64], sub[64], via[PATH_MAX];
        _cleanup_(freep) char *real = NULL;
        char *err = NULL, *bin_dir = NULL;
        uint64_t off, want;
        int fd;

        if (geteuid() != 0)
                skip();
        assert_int_equal(elf_resolve_symbol(test_env("PROBE_TARGET"), "evmon_target", &want, NULL, NULL), 0);
        assert_non_null(mkdtemp(dir));
        snprintf(link, sizeof(link), "%s/prog", dir);
        assert_int_equal(symlink(test_env("PROBE_TARGET"), link), 0);
        /* root's link: followed. */
        assert_int_equal(elf_resolve_symbol(link, "evmon_target", &off, &real, &err), 0);
        assert_int_equal(off, want);
        assert_null(err);
        /* nobody's link to root's file: refused. */
        assert_int_equal(lchown(link, 65534, 65534), 0);
        assert_int_equal(elf_resolve_symbol(link, "evmon_target", &off, NULL, &err), -EPERM);
        assert_non_null(strstr(err, "a symbolic link of uid 65534"));
        assert_non_null(strstr(err, link));
        free(err);
        fd = elf_open_target(link, NULL, NULL, NULL, &err);
        assert_int_equal(fd, -EPERM);
        free(err);
        /* nobody's link in place of a parent directory. */
        bin_dir = strdup(test_env("PROBE_TARGET"));
        assert_non_null(bin_dir);
        *strrchr(bin_dir, '/') = 0;
        snprintf(sub, sizeof(sub), "%s/sub", dir);
        assert_int_equal(symlink(bin_dir, sub), 0);
        assert_int_equal(lchown(sub, 65534, 65534), 0);
        snprintf(via, sizeof(via), "%s/%s", sub, strrchr(test_env("PROBE_TARGET"), '/') + 1);
        assert_int_equal(elf_resolve_symbol(via, "evmon_target", &off, NULL, &err), -EPERM);
        assert_non_null(strstr(err, sub));
        free(err);
        free(bin_dir);
        unlink(sub);
        unlink(link);
        rmdir(dir);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_pie),
                cmocka_unit_test(test_nopie),
                cmocka_unit_test(test_libc),
                cmocka_unit_test(test_symlink),
                cmocka_unit_test(test_errors),
                cmocka_unit_test(test_build_id),
                cmocka_unit_test(test_fifo),
                cmocka_unit_test(test_open_regular),
                cmocka_unit_test(test_user_link),
                cmocka_unit_test(test_section_bound),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
