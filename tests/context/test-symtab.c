/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The symbolizer's ELF parser (src/context/symtab.c) on the fuzz target's
 * seeds: a small ELF with .symtab, stripped to .dynsym, stripped with its
 * symbols in minidebuginfo, and with an xz bomb in .gnu_debugdata; and
 * its limits, which a user's file must not pass. */

#include <errno.h>
#include <elf.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "evmon/context.h"

static int seed(const char *name) {
        char path[4096];
        const char *root = getenv("EVMON_SOURCE_ROOT");
        int fd;

        snprintf(path, sizeof(path), "%s/tests/fuzz/corpus/symtab/%s", root ? root : ".", name);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        return fd;
}

static const char *name_at(const struct ctx_symtab *t, uint64_t addr) {
        const struct ctx_symtab_sym *f = ctx_symtab_find(t, addr);

        return f ? t->names + f->name : NULL;
}

static void test_symtab(void **state) {
        _cleanup_(ctx_symtab_freep) struct ctx_symtab *t = NULL;
        int fd = seed("target");

        assert_int_equal(ctx_symtab_read(fd, NULL, 0, NULL, &t), 0);
        close(fd);
        assert_int_equal(ctx_symtab_check(t), 0);
        assert_true(t->n_segs >= 2);
        assert_int_equal(t->flags, 0);
        /* nm: 000000000000115a T evmon_target, 1149 t evmon_local */
        assert_string_equal(name_at(t, 0x115a), "evmon_target");
        assert_string_equal(name_at(t, 0x115b), "evmon_target");
        assert_string_equal(name_at(t, 0x1149), "evmon_local");
        assert_null(name_at(t, 0x10));
        assert_true(ctx_symtab_bytes(t) > t->names_len);
}

static void test_minidebuginfo(void **state) {
        _cleanup_(ctx_symtab_freep) struct ctx_symtab *dyn = NULL, *mini = NULL;
        int fd = seed("dynsym");

        /* Stripped: .dynsym has none of the program's own functions. */
        assert_int_equal(ctx_symtab_read(fd, NULL, 0, NULL, &dyn), 0);
        close(fd);
        assert_null(name_at(dyn, 0x115a));
        /* Their names back from .gnu_debugdata. */
        fd = seed("minidebuginfo");
        assert_int_equal(ctx_symtab_read(fd, NULL, 0, NULL, &mini), 0);
        close(fd);
        /* No .symtab of its own: a debug file by build id may say more. */
        assert_int_equal(mini->flags, CTX_SYMTAB_NO_SYMTAB);
        assert_string_equal(name_at(mini, 0x115a), "evmon_target");
}

static void test_limits(void **state) {
        _cleanup_(ctx_symtab_freep) struct ctx_symtab *bomb = NULL, *few = NULL;
        const struct ctx_symtab_limits small = { .max_syms = 2, .max_debugdata = 1 << 20 };
        int fd = seed("xz-bomb");

        /* 8 MiB of zeros in .gnu_debugdata: decompressed to the bound
         * only, said, the rest of the table kept. */
        assert_int_equal(ctx_symtab_read(fd, NULL, 0, &small, &bomb), 0);
        close(fd);
        assert_true(bomb->flags & CTX_SYMTAB_DEBUGDATA);
        assert_true(bomb->n_segs >= 2);
        fd = seed("target");
        assert_int_equal(ctx_symtab_read(fd, NULL, 0, &small, &few), 0);
        close(fd);
        assert_true(few->flags & CTX_SYMTAB_TRUNCATED);
        assert_int_equal(few->n_syms, 2);
        assert_int_equal(ctx_symtab_check(few), 0);
}

static void test_not_elf(void **state) {
        struct ctx_symtab *t = NULL;
        static char text[] = "#!/bin/sh\necho not an ELF file\n";

        assert_int_equal(ctx_symtab_read(-1, text, sizeof(text), NULL, &t), -ENOEXEC);
        assert_null(t);
}

/* A user's file of N_ALIASES functions at one address, and one after
 * them: an ELF64 of one PT_LOAD, .symtab and .strtab, built here. */
#define N_ALIASES 100000
static char *alias_elf(size_t *ret_size) {
        size_t sym_off = sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr), n = N_ALIASES + 2;
        size_t str_off = sym_off + n * sizeof(Elf64_Sym), sh_off = (str_off + 8 + 7) & ~(size_t) 7;
        size_t size = sh_off + 3 * sizeof(Elf64_Shdr);
        char *b = calloc(1, size);
        Elf64_Ehdr *eh = (Elf64_Ehdr *) b;
        Elf64_Phdr *ph = (Elf64_Phdr *) (b + sizeof(*eh));
        Elf64_Sym *sym = (Elf64_Sym *) (b + sym_off);
        Elf64_Shdr *sh = (Elf64_Shdr *) (b + sh_off);

        assert_non_null(b);
        memcpy(eh->e_ident, ELFMAG, SELFMAG);
        eh->e_ident[EI_CLASS] = ELFCLASS64;
        eh->e_ident[EI_DATA] = ELFDATA2LSB;
        eh->e_ident[EI_VERSION] = EV_CURRENT;
        eh->e_type = ET_DYN;
        eh->e_machine = EM_X86_64;
        eh->e_version = EV_CURRENT;
        eh->e_phoff = sizeof(*eh);
        eh->e_shoff = sh_off;
        eh->e_ehsize = sizeof(*eh);
        eh->e_phentsize = sizeof(*ph);
        eh->e_phnum = 1;
        eh->e_shentsize = sizeof(*sh);
        eh->e_shnum = 3;
        *ph = (Elf64_Phdr) { .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = 0, .p_vaddr = 0,
                             .p_filesz = 0x10000, .p_memsz = 0x10000, .p_align = 0x1000 };
        for (size_t i = 1; i < n; i++)
                sym[i] = (Elf64_Sym) { .st_name = i + 1 < n ? 1 : 3, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
                                       .st_shndx = 1, .st_value = i + 1 < n ? 0x1000 : 0x2000,
                                       .st_size = i == n / 2 ? 0x100 : 1 };
        memcpy(b + str_off, "\0a\0b\0", 5);
        sh[1] = (Elf64_Shdr) { .sh_type = SHT_SYMTAB, .sh_offset = sym_off, .sh_size = n * sizeof(Elf64_Sym),
                               .sh_link = 2, .sh_info = 1, .sh_entsize = sizeof(Elf64_Sym), .sh_addralign = 8 };
        sh[2] = (Elf64_Shdr) { .sh_type = SHT_STRTAB, .sh_offset = str_off, .sh_size = 5, .sh_addralign = 1 };
        *ret_size = size;
        return b;
}

/* Aliases leave one symbol per address, the largest: a lookup is one
 * binary search, not a walk over all of them (which, per frame and
 * sample, a file of a million aliases made a millisecond). */
static void test_aliases(void **state) {
        _cleanup_(ctx_symtab_freep) struct ctx_symtab *t = NULL;
        size_t size;
        char *elf = alias_elf(&size);

        assert_int_equal(ctx_symtab_read(-1, elf, size, NULL, &t), 0);
        free(elf);
        assert_int_equal(ctx_symtab_check(t), 0);
        assert_int_equal(t->n_syms, 2);
        assert_int_equal(t->names_len, 4);  /* "a", "b": the aliases' names gone */
        assert_string_equal(name_at(t, 0x1000), "a");
        assert_int_equal(ctx_symtab_find(t, 0x10ff)->size, 0x100);
        assert_null(name_at(t, 0x1100));
        assert_string_equal(name_at(t, 0x2000), "b");
}

/* What the daemon refuses from the helper. */
static void test_check(void **state) {
        struct ctx_symtab_sym syms[2] = { { .addr = 0x20, .name = 0 }, { .addr = 0x10, .name = 2 } };
        char names[] = "a\0b";
        struct ctx_symtab t = { .n_syms = 2, .syms = syms, .names = names, .names_len = 4 };

        assert_int_equal(ctx_symtab_check(&t), -EBADMSG);  /* not sorted */
        syms[1].addr = 0x30;
        assert_int_equal(ctx_symtab_check(&t), 0);
        syms[1].name = 4;
        assert_int_equal(ctx_symtab_check(&t), -EBADMSG);  /* outside the names */
        syms[1].name = 2;
        t.names_len = 3;
        assert_int_equal(ctx_symtab_check(&t), -EBADMSG);  /* no closing NUL */
        t.names_len = 4;
        t.n_segs = CTX_SYMTAB_MAX_SEGS + 1;
        assert_int_equal(ctx_symtab_check(&t), -EBADMSG);
        t.n_segs = 0;
        syms[1].addr = syms[0].addr;
        assert_int_equal(ctx_symtab_check(&t), -EBADMSG);  /* aliases: each lookup a walk */
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_symtab),
                cmocka_unit_test(test_minidebuginfo),
                cmocka_unit_test(test_limits),
                cmocka_unit_test(test_not_elf),
                cmocka_unit_test(test_aliases),
                cmocka_unit_test(test_check),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
