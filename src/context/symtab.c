/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* An ELF file's PT_LOAD segments and function symbols, for the sandboxed
 * symbolizer (evmon-symbolizer.c) and its fuzz target. The file is a
 * user's: every count and size in it is bounded here, and the only other
 * bytes read are the minidebuginfo in the file itself (.gnu_debugdata, xz,
 * decompressed to at most max_debugdata). .gnu_debuglink is not
 * followed: it names a path a user chose, which is what hung the daemon
 * (issue 26, hole 6); the daemon finds a debug file by the build id read
 * here, in root's /usr/lib/debug (symbols.c), and sends it here too. */

#include <errno.h>
#include <gelf.h>
#include <lzma.h>
#include <stdlib.h>
#include <string.h>

#include "evmon/context.h"

#define DEFAULT_MAX_SYMS (UINT64_C(1) << 20)
#define DEFAULT_MAX_NAMES (UINT64_C(32) << 20)
#define DEFAULT_MAX_DEBUGDATA (UINT64_C(64) << 20)

struct builder {
        struct ctx_symtab *t;
        struct ctx_symtab_limits lim;
        uint64_t syms_cap, names_cap;
};

struct ctx_symtab *ctx_symtab_free(struct ctx_symtab *t) {
        if (!t)
                return NULL;
        free(t->syms);
        free(t->names);
        free(t);
        return NULL;
}

int ctx_symtab_init(void) {
        void *p = malloc(1);

        free(p);
        return elf_version(EV_CURRENT) == EV_NONE ? -ENOTSUP : 0;
}

size_t ctx_symtab_bytes(const struct ctx_symtab *t) {
        return sizeof(*t) + (size_t) t->n_syms * sizeof(*t->syms) + (size_t) t->names_len;
}

static int add_sym(struct builder *b, uint64_t addr, uint64_t size, unsigned bind, const char *name) {
        struct ctx_symtab *t = b->t;
        size_t n = strlen(name);

        if (t->n_syms >= b->lim.max_syms || t->names_len + n + 1 > b->lim.max_names) {
                t->flags |= CTX_SYMTAB_TRUNCATED;
                return -ENOSPC;
        }
        if (t->n_syms == b->syms_cap) {
                uint64_t cap = b->syms_cap ? b->syms_cap * 2 : 256;
                struct ctx_symtab_sym *s;

                if (cap > b->lim.max_syms)
                        cap = b->lim.max_syms;
                s = realloc(t->syms, (size_t) cap * sizeof(*s));
                if (!s)
                        return -ENOMEM;
                t->syms = s;
                b->syms_cap = cap;
        }
        if (t->names_len + n + 1 > b->names_cap) {
                uint64_t cap = b->names_cap ? b->names_cap * 2 : 4096;
                char *p;

                while (cap < t->names_len + n + 1)
                        cap *= 2;
                if (cap > b->lim.max_names)
                        cap = b->lim.max_names;
                p = realloc(t->names, (size_t) cap);
                if (!p)
                        return -ENOMEM;
                t->names = p;
                b->names_cap = cap;
        }
        /* reserved holds the binding until the aliases are chosen. */
        t->syms[t->n_syms++] = (struct ctx_symtab_sym) { addr, size, (uint32_t) t->names_len, bind };
        memcpy(t->names + t->names_len, name, n + 1);
        t->names_len += n + 1;
        return 0;
}

/* The function symbols of one SHT_SYMTAB or SHT_DYNSYM section. */
static int add_section(struct builder *b, Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh) {
        Elf_Data *d;
        size_t n;

        if (sh->sh_entsize == 0 || (sh->sh_flags & SHF_COMPRESSED))
                return 0;
        d = elf_getdata(scn, NULL);
        if (!d || !d->d_buf)
                return 0;
        n = d->d_size / sh->sh_entsize;
        for (size_t i = 1; i < n; i++) {
                GElf_Sym sym;
                const char *name;
                int r;

                if (!gelf_getsym(d, (int) i, &sym))
                        break;
                if (sym.st_shndx == SHN_UNDEF || sym.st_name == 0)
                        continue;
                if (GELF_ST_TYPE(sym.st_info) == STT_NOTYPE) {
                        /* A label in code (an assembly entry such as
                         * ld.so's _start), as perf takes it
                         * (elf_sym__is_label()): visible, in a section
                         * of instructions. */
                        GElf_Shdr ssh;
                        Elf_Scn *sscn;

                        if (sym.st_shndx >= SHN_LORESERVE || GELF_ST_VISIBILITY(sym.st_other) == STV_HIDDEN ||
                            GELF_ST_VISIBILITY(sym.st_other) == STV_INTERNAL ||
                            !(sscn = elf_getscn(elf, sym.st_shndx)) || !gelf_getshdr(sscn, &ssh) ||
                            !(ssh.sh_flags & SHF_EXECINSTR))
                                continue;
                } else if (GELF_ST_TYPE(sym.st_info) != STT_FUNC && GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC)
                        continue;
                name = elf_strptr(elf, sh->sh_link, sym.st_name);
                if (!name || !*name)
                        continue;
                r = add_sym(b, sym.st_value, sym.st_size, GELF_ST_BIND(sym.st_info), name);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Every symbol table of TYPE in ELF; true when there was one. */
static bool add_tables(struct builder *b, Elf *elf, Elf64_Word type, int *r) {
        Elf_Scn *scn = NULL;
        bool found = false;

        while (*r >= 0 && (scn = elf_nextscn(elf, scn))) {
                GElf_Shdr sh;

                if (!gelf_getshdr(scn, &sh) || sh.sh_type != type)
                        continue;
                found = true;
                *r = add_section(b, elf, scn, &sh);
        }
        return found;
}

static Elf_Scn *find_section(Elf *elf, const char *want, GElf_Shdr *ret) {
        Elf_Scn *scn = NULL;
        size_t shstrndx;

        if (elf_getshdrstrndx(elf, &shstrndx) < 0)
                return NULL;
        while ((scn = elf_nextscn(elf, scn))) {
                const char *name;

                if (!gelf_getshdr(scn, ret))
                        continue;
                name = elf_strptr(elf, shstrndx, ret->sh_name);
                if (name && strcmp(name, want) == 0)
                        return scn;
        }
        return NULL;
}

/* .gnu_debugdata: an xz stream of an ELF file holding the .symtab that a
 * stripped binary lacks (Fedora's and Debian's "minidebuginfo"). The
 * output stops at max_debugdata (the 1 GiB of zeros of hole 7 stops
 * there), and so does the decoder's own memory. */
static int read_debugdata(struct builder *b, Elf *elf, char **ret, size_t *ret_len) {
        lzma_stream z = LZMA_STREAM_INIT;
        _cleanup_(freep) char *out = NULL;
        size_t cap = 0;
        GElf_Shdr sh;
        Elf_Scn *scn = find_section(elf, ".gnu_debugdata", &sh);
        Elf_Data *d;
        lzma_ret lr;

        if (!scn || sh.sh_type == SHT_NOBITS)
                return 0;
        d = elf_rawdata(scn, NULL);
        if (!d || !d->d_buf || d->d_size == 0)
                return 0;
        if (lzma_stream_decoder(&z, 64 << 20, 0) != LZMA_OK)
                return -ENOMEM;
        z.next_in = d->d_buf;
        z.avail_in = d->d_size;
        do {
                if (z.total_out == cap) {
                        size_t ncap = cap ? cap * 2 : 64 << 10;
                        char *n;

                        if (cap >= b->lim.max_debugdata) {
                                lzma_end(&z);
                                return -EFBIG;
                        }
                        if (ncap > b->lim.max_debugdata)
                                ncap = b->lim.max_debugdata;
                        n = realloc(out, ncap);
                        if (!n) {
                                lzma_end(&z);
                                return -ENOMEM;
                        }
                        out = n;
                        cap = ncap;
                }
                z.next_out = (uint8_t *) out + z.total_out;
                z.avail_out = cap - z.total_out;
                lr = lzma_code(&z, LZMA_FINISH);
        } while (lr == LZMA_OK);
        *ret_len = z.total_out;
        lzma_end(&z);
        if (lr != LZMA_STREAM_END)
                return -EBADMSG;
        *ret = TAKE_PTR(out);
        return 1;
}

static size_t underscores(const char *s) {
        return strspn(s, "_");
}

/* Of aliases, the one perf names (choose_best_symbol() in
 * tools/perf/util/symbol.c), so that frames read as perf script's: one
 * with a size, not weak, global, with fewer leading underscores, with
 * the longer name ("clock_nanosleep@GLIBC_2.2.5" over
 * "__clock_nanosleep"); then the largest (the one covering the most),
 * then the first in the file. */
static int cmp_sym(const void *a, const void *b, void *userdata) {
        const struct ctx_symtab_sym *x = a, *y = b;
        const char *names = userdata, *nx = names + x->name, *ny = names + y->name;
        size_t ux, uy, lx, ly;

        if (x->addr != y->addr)
                return x->addr < y->addr ? -1 : 1;
        if ((x->size == 0) != (y->size == 0))
                return x->size ? -1 : 1;
        if ((x->reserved == STB_WEAK) != (y->reserved == STB_WEAK))
                return x->reserved == STB_WEAK ? 1 : -1;
        if ((x->reserved == STB_GLOBAL) != (y->reserved == STB_GLOBAL))
                return x->reserved == STB_GLOBAL ? -1 : 1;
        ux = underscores(nx);
        uy = underscores(ny);
        if (ux != uy)
                return ux < uy ? -1 : 1;
        lx = strlen(nx);
        ly = strlen(ny);
        if (lx != ly)
                return lx > ly ? -1 : 1;
        if (x->size != y->size)
                return x->size > y->size ? -1 : 1;
        return x->name < y->name ? -1 : x->name > y->name;
}

/* One symbol per address, the first of its aliases (the one covering the
 * most): a lookup is then one binary search. With aliases kept, each
 * lookup walked them all, and a file of a million functions at one
 * address cost the daemon a millisecond per frame, every sample. */
static int drop_aliases(struct ctx_symtab *t) {
        uint64_t n = 0, len = 0;
        char *names;

        for (uint64_t i = 0; i < t->n_syms; i++)
                if (n == 0 || t->syms[i].addr != t->syms[n - 1].addr)
                        t->syms[n++] = t->syms[i];
        t->n_syms = n;
        /* Their names go too: the daemon keeps (and counts) them. */
        names = malloc((size_t) t->names_len);
        if (!names)
                return -ENOMEM;
        for (uint64_t i = 0; i < n; i++) {
                size_t k = strlen(t->names + t->syms[i].name) + 1;

                memcpy(names + len, t->names + t->syms[i].name, k);
                t->syms[i].name = (uint32_t) len;
                t->syms[i].reserved = 0;
                len += k;
        }
        free(t->names);
        t->names = names;
        t->names_len = len;
        return 0;
}

/* The GNU build id of the first SHT_NOTE section holding one. */
static void read_build_id(struct ctx_symtab *t, Elf *elf) {
        Elf_Scn *scn = NULL;

        while ((scn = elf_nextscn(elf, scn))) {
                GElf_Shdr sh;
                Elf_Data *d;
                GElf_Nhdr nh;
                size_t off = 0, name_off, desc_off;

                if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE || !(d = elf_getdata(scn, NULL)) || !d->d_buf)
                        continue;
                while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
                        if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 || nh.n_descsz == 0 ||
                            memcmp((const char *) d->d_buf + name_off, "GNU", 4) != 0)
                                continue;
                        t->build_id_len = nh.n_descsz < CTX_SYMTAB_MAX_BUILD_ID ? nh.n_descsz : CTX_SYMTAB_MAX_BUILD_ID;
                        memcpy(t->build_id, (const char *) d->d_buf + desc_off, t->build_id_len);
                        return;
                }
        }
}

static int read_elf(struct builder *b, Elf *elf) {
        struct ctx_symtab *t = b->t;
        size_t n_ph;
        int r = 0;

        if (elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &n_ph) < 0)
                return -ENOEXEC;
        for (size_t i = 0; i < n_ph && t->n_segs < CTX_SYMTAB_MAX_SEGS; i++) {
                GElf_Phdr ph;

                if (!gelf_getphdr(elf, (int) i, &ph) || ph.p_type != PT_LOAD)
                        continue;
                t->segs[t->n_segs++] = (struct ctx_symtab_seg) { ph.p_offset, ph.p_filesz, ph.p_vaddr };
        }
        if (!t->n_segs)
                return -ENOEXEC;
        read_build_id(t, elf);
        if (!add_tables(b, elf, SHT_SYMTAB, &r) && r >= 0) {
                t->flags |= CTX_SYMTAB_NO_SYMTAB;
                /* Stripped: .dynsym, and what minidebuginfo adds to it. */
                _cleanup_(freep) char *dd = NULL;
                size_t dd_len = 0;

                (void) add_tables(b, elf, SHT_DYNSYM, &r);
                if (r >= 0) {
                        int k = read_debugdata(b, elf, &dd, &dd_len);

                        if (k < 0)
                                t->flags |= CTX_SYMTAB_DEBUGDATA;
                        else if (k > 0) {
                                Elf *inner = elf_memory(dd, dd_len);

                                if (inner) {
                                        (void) add_tables(b, inner, SHT_SYMTAB, &r);
                                        elf_end(inner);
                                } else
                                        t->flags |= CTX_SYMTAB_DEBUGDATA;
                        }
                }
        }
        /* Limits reached: the table keeps what it has (and says so). */
        if (r < 0 && r != -ENOSPC)
                return r;
        if (t->n_syms) {
                qsort_r(t->syms, (size_t) t->n_syms, sizeof(*t->syms), cmp_sym, t->names);
                r = drop_aliases(t);
                if (r < 0)
                        return r;
        }
        return 0;
}

int ctx_symtab_read(int fd, const void *data, size_t size, const struct ctx_symtab_limits *lim,
                    struct ctx_symtab **ret) {
        _cleanup_(ctx_symtab_freep) struct ctx_symtab *t = calloc(1, sizeof(*t));
        struct builder b = { .t = t };
        Elf *elf;
        int r;

        if (!t)
                return -ENOMEM;
        if (lim)
                b.lim = *lim;
        if (!b.lim.max_syms || b.lim.max_syms > UINT32_MAX)
                b.lim.max_syms = DEFAULT_MAX_SYMS;
        /* Name offsets are 32-bit. */
        if (!b.lim.max_names || b.lim.max_names > UINT32_MAX)
                b.lim.max_names = DEFAULT_MAX_NAMES;
        if (!b.lim.max_debugdata)
                b.lim.max_debugdata = DEFAULT_MAX_DEBUGDATA;
        r = ctx_symtab_init();
        if (r < 0)
                return r;
        /* ELF_C_READ: pread, no mmap, so a file truncated under us is a
         * short read, not a SIGBUS. */
        elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : elf_memory((char *) data, size);
        if (!elf)
                return -ENOEXEC;
        r = read_elf(&b, elf);
        elf_end(elf);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(t);
        return 0;
}

int ctx_symtab_check(const struct ctx_symtab *t) {
        if (t->n_segs > CTX_SYMTAB_MAX_SEGS)
                return -EBADMSG;
        if (t->n_syms && (!t->names_len || t->names[t->names_len - 1] != 0))
                return -EBADMSG;
        for (uint64_t i = 0; i < t->n_syms; i++) {
                if (t->syms[i].name >= t->names_len)
                        return -EBADMSG;
                /* Strictly: aliases would make each lookup a walk. */
                if (i > 0 && t->syms[i].addr <= t->syms[i - 1].addr)
                        return -EBADMSG;
        }
        return 0;
}

const struct ctx_symtab_sym *ctx_symtab_find(const struct ctx_symtab *t, uint64_t addr) {
        size_t lo = 0, hi = (size_t) t->n_syms;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (t->syms[mid].addr <= addr)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (lo == 0)
                return NULL;
        /* One symbol per address (ctx_symtab_check()); no size: up to the
         * next one. */
        if (addr - t->syms[lo - 1].addr < t->syms[lo - 1].size || t->syms[lo - 1].size == 0)
                return &t->syms[lo - 1];
        return NULL;
}
