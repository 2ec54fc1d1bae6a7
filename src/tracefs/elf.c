/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ELF symbol -> file offset, for uprobes.
 *
 * uprobe_events and the uprobe PMU take an offset into the file, not a
 * virtual address. A symbol's st_value is a virtual address; the two only
 * coincide when the segment's p_vaddr equals its p_offset, which holds for
 * the first PT_LOAD of most PIE objects and for nothing in a non-PIE
 * executable (linked at 0x400000) or in objects whose text segment does not
 * start at the page it sits in. So: find the PT_LOAD that holds st_value
 * and translate, as the kernel's own uprobe users (perf probe) do. */

#define _GNU_SOURCE 1

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "evmon/cleanup.h"
#include "error.h"
#include "evmon/probe.h"

static void elf_endp(Elf **e) {
        if (*e)
                elf_end(*e);
}


/* A symbol table: the section, its data and, for .dynsym, the parallel
 * .gnu.version array (to prefer a symbol's default version). */
struct symtab {
        Elf_Scn *scn;
        GElf_Shdr shdr;
        Elf_Data *data;
        Elf_Data *versym;
};

enum {
        MATCH_MAX = 16,
        VERSYM_HIDDEN = 0x8000, /* a non-default version: name@VER, not name@@VER */
};

struct match {
        GElf_Addr addr;
        bool func;
        bool hidden;
};

struct matches {
        struct match m[MATCH_MAX];
        size_t n;
        bool truncated;
};

static void matches_add(struct matches *ms, GElf_Addr addr, bool func, bool hidden) {
        for (size_t i = 0; i < ms->n; i++)
                if (ms->m[i].addr == addr) {
                        /* Global and local aliases at one address are one
                         * function; the best description wins. */
                        ms->m[i].func |= func;
                        ms->m[i].hidden &= hidden;
                        return;
                }
        if (ms->n >= MATCH_MAX) {
                ms->truncated = true;
                return;
        }
        ms->m[ms->n++] = (struct match) { .addr = addr, .func = func, .hidden = hidden };
}

/* The PT_LOAD segment whose file-backed part holds ADDR. Executable
 * segments first: a symbol is code, and segments may share a page. */
static int find_load(Elf *e, GElf_Addr addr, GElf_Phdr *ret) {
        size_t n;
        int pass;

        if (elf_getphdrnum(e, &n) < 0)
                return -ENOEXEC;

        for (pass = 0; pass < 2; pass++)
                for (size_t i = 0; i < n; i++) {
                        GElf_Phdr ph;

                        if (!gelf_getphdr(e, (int) i, &ph))
                                return -ENOEXEC;
                        if (ph.p_type != PT_LOAD)
                                continue;
                        if (pass == 0 && !(ph.p_flags & PF_X))
                                continue;
                        if (addr < ph.p_vaddr || addr - ph.p_vaddr >= ph.p_filesz)
                                continue;
                        *ret = ph;
                        return 0;
                }
        return -ERANGE;
}

static void scan(Elf *e, const struct symtab *st, const char *symbol, struct matches *ms) {
        size_t n;

        if (!st->data || st->shdr.sh_entsize == 0)
                return;
        n = st->shdr.sh_size / st->shdr.sh_entsize;

        for (size_t i = 1; i < n; i++) {
                GElf_Sym sym;
                const char *name;
                bool func, hidden = false;
                GElf_Phdr ph;

                if (!gelf_getsym(st->data, (int) i, &sym))
                        break;
                if (sym.st_shndx == SHN_UNDEF || sym.st_value == 0)
                        continue;
                name = elf_strptr(e, st->shdr.sh_link, sym.st_name);
                if (!name || strcmp(name, symbol) != 0)
                        continue;

                func = GELF_ST_TYPE(sym.st_info) == STT_FUNC ||
                       GELF_ST_TYPE(sym.st_info) == STT_GNU_IFUNC;
                if (!func) {
                        /* Not typed as code (assembly labels are
                         * STT_NOTYPE): only when it lies in code. */
                        if (find_load(e, sym.st_value, &ph) < 0 || !(ph.p_flags & PF_X))
                                continue;
                }
                if (st->versym) {
                        GElf_Versym v;

                        if (gelf_getversym(st->versym, (int) i, &v))
                                hidden = v & VERSYM_HIDDEN;
                }
                matches_add(ms, sym.st_value, func, hidden);
        }
}

/* Picks the one address of MS: functions over other symbols, default
 * versions over hidden ones. -ENOTUNIQ when more than one is left. */
static int pick(const struct matches *ms, GElf_Addr *ret) {
        bool any_func = false, any_visible = false;
        size_t n = 0;
        GElf_Addr a = 0;

        for (size_t i = 0; i < ms->n; i++) {
                any_func |= ms->m[i].func;
                any_visible |= !ms->m[i].hidden;
        }
        for (size_t i = 0; i < ms->n; i++) {
                if (any_func && !ms->m[i].func)
                        continue;
                if (any_visible && ms->m[i].hidden)
                        continue;
                a = ms->m[i].addr;
                n++;
        }
        if (n == 0)
                return -ENOENT;
        if (n > 1 || ms->truncated)
                return -ENOTUNIQ;
        *ret = a;
        return 0;
}

int elf_resolve_symbol(const char *path, const char *symbol, uint64_t *ret_offset,
                       char **ret_real_path, char **ret_error) {
        _cleanup_(freep) char *real = NULL;
        _cleanup_(closep) int fd = -1;
        _cleanup_(elf_endp) Elf *e = NULL;
        struct symtab symtab = {}, dynsym = {};
        Elf_Scn *versym_scn = NULL;
        struct matches ms = {};
        const struct symtab *found_in = NULL;
        GElf_Ehdr eh;
        GElf_Phdr ph;
        GElf_Addr addr;
        Elf_Scn *scn = NULL;
        int r;

        if (ret_error)
                *ret_error = NULL;
        if (!path || !*path || !symbol || !*symbol)
                return error_set(ret_error, -EINVAL, "empty path or symbol");

        real = realpath(path, NULL);
        if (!real) {
                r = negative_errno();
                return error_set(ret_error, r, "%s: %s", path, strerror(-r));
        }
        fd = open(real, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                r = negative_errno();
                return error_set(ret_error, r, "%s: %s", real, strerror(-r));
        }

        if (elf_version(EV_CURRENT) == EV_NONE)
                return error_set(ret_error, -ENOTSUP, "libelf: %s", elf_errmsg(-1));
        e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
        if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh))
                return error_set(ret_error, -ENOEXEC, "%s is not an ELF file", real);
        if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)
                return error_set(ret_error, -ENOEXEC,
                            "%s is not an ELF executable or shared object", real);

        while ((scn = elf_nextscn(e, scn))) {
                GElf_Shdr sh;
                struct symtab *st = NULL;

                if (!gelf_getshdr(scn, &sh))
                        continue;
                if (sh.sh_type == SHT_SYMTAB)
                        st = &symtab;
                else if (sh.sh_type == SHT_DYNSYM)
                        st = &dynsym;
                else if (sh.sh_type == SHT_GNU_versym)
                        versym_scn = scn;
                if (!st || st->scn)
                        continue;
                st->scn = scn;
                st->shdr = sh;
                st->data = elf_getdata(scn, NULL);
        }
        if (versym_scn && dynsym.scn)
                dynsym.versym = elf_getdata(versym_scn, NULL);

        if (!symtab.scn && !dynsym.scn)
                return error_set(ret_error, -ENODATA,
                            "%s has no symbol table (stripped); give a file offset instead: %s:0xOFFSET",
                            real, real);

        /* .symtab first: it has the local (static) functions .dynsym lacks.
         * Then .dynsym, all a stripped shared library still carries. */
        if (symtab.scn) {
                scan(e, &symtab, symbol, &ms);
                found_in = &symtab;
        }
        if (ms.n == 0 && dynsym.scn) {
                scan(e, &dynsym, symbol, &ms);
                found_in = &dynsym;
        }

        r = pick(&ms, &addr);
        if (r == -ENOENT)
                return error_set(ret_error, -ENOENT, "symbol %s not found in %s%s", symbol, real,
                            symtab.scn ? "" : " (stripped: it only has dynamic symbols)");
        if (r == -ENOTUNIQ)
                return error_set(ret_error, -ENOTUNIQ,
                            "symbol %s is ambiguous in %s: %zu%s different addresses in %s; give a file offset instead",
                            symbol, real, ms.n, ms.truncated ? "+" : "",
                            found_in == &symtab ? ".symtab" : ".dynsym");

        r = find_load(e, addr, &ph);
        if (r < 0)
                return error_set(ret_error, -ERANGE,
                            "symbol %s in %s is at 0x%" PRIx64 ", in no loadable part of the file",
                            symbol, real, (uint64_t) addr);

        *ret_offset = addr - ph.p_vaddr + ph.p_offset;
        if (ret_real_path)
                *ret_real_path = TAKE_PTR(real);
        return 0;
}

int elf_build_id(const char *path, char **ret_hex, char **ret_error) {
        _cleanup_(closep) int fd = -1;
        _cleanup_(elf_endp) Elf *e = NULL;
        const uint8_t *id;
        ssize_t n;
        char *hex;
        int r;

        if (ret_error)
                *ret_error = NULL;
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                r = negative_errno();
                return error_set(ret_error, r, "%s: %s", path, strerror(-r));
        }
        if (elf_version(EV_CURRENT) == EV_NONE)
                return error_set(ret_error, -ENOTSUP, "libelf: %s", elf_errmsg(-1));
        e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
        if (!e || elf_kind(e) != ELF_K_ELF)
                return error_set(ret_error, -ENOEXEC, "%s is not an ELF file", path);
        /* libdw's reader of the NT_GNU_BUILD_ID note: the notes of the
         * program headers, else of the sections (a stripped file keeps
         * either). */
        n = dwelf_elf_gnu_build_id(e, (const void **) &id);
        if (n < 0)
                return error_set(ret_error, -EBADMSG, "%s: malformed build id note: %s", path, elf_errmsg(-1));
        if (n == 0)
                return error_set(ret_error, -ENODATA, "%s has no build id (linked without --build-id)", path);
        hex = malloc((size_t) n * 2 + 1);
        if (!hex)
                return -ENOMEM;
        for (ssize_t i = 0; i < n; i++)
                sprintf(hex + 2 * i, "%02x", id[i]);
        *ret_hex = hex;
        return 0;
}
