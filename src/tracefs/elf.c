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
#include <sys/stat.h>
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
#include "evmon/error.h"
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

/* What a file that is not a regular one is, for a message. */
static const char *file_type_name(mode_t m) {
        switch (m & S_IFMT) {
        case S_IFIFO: return "a FIFO";
        case S_IFDIR: return "a directory";
        case S_IFCHR: return "a character device";
        case S_IFBLK: return "a block device";
        case S_IFSOCK: return "a socket";
        case S_IFLNK: return "a symbolic link";
        default: return "of an unknown type";
        }
}

int elf_open_regular(int dirfd, const char *path, const char *name, unsigned flags, struct stat *ret_st,
                     char **ret_error) {
        _cleanup_(closep) int pfd = -1, fd = -1;
        char proc[64];
        struct stat st, st2;
        int r;

        if (ret_error)
                *ret_error = NULL;
        if (!path || !*path)
                return error_set(ret_error, -EINVAL, "empty path");
        if (!name)
                name = path;
        /* O_PATH first: opening a FIFO, even with O_NONBLOCK, would wake a
         * writer blocked in its open(), and opening a device node may act
         * (a tape rewinds). An O_PATH fd opens nothing. */
        pfd = openat(dirfd, path, O_PATH | O_CLOEXEC | ((flags & ELF_OPEN_NOFOLLOW) ? O_NOFOLLOW : 0));
        if (pfd < 0) {
                r = negative_errno();
                return error_set(ret_error, r, "%s: %s", name, strerror(-r));
        }
        if (fstat(pfd, &st) < 0) {
                r = negative_errno();
                return error_set(ret_error, r, "%s: %s", name, strerror(-r));
        }
        if (S_ISLNK(st.st_mode))
                /* O_PATH|O_NOFOLLOW opens the link itself. */
                return error_set(ret_error, -ELOOP, "%s is a symbolic link, which is not followed here", name);
        if (!S_ISREG(st.st_mode))
                return error_set(ret_error, -EINVAL, "%s is %s, not a regular file; a probe target must be an ELF file",
                                 name, file_type_name(st.st_mode));
        if (st.st_size > ELF_SIZE_MAX)
                return error_set(ret_error, -EFBIG, "%s is %jd bytes, more than the %jd evmon reads of an ELF file",
                                 name, (intmax_t) st.st_size, (intmax_t) ELF_SIZE_MAX);
        /* Reopening the O_PATH fd through /proc gives the very inode
         * checked above. O_NONBLOCK stays: a regular file ignores it. */
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
        fd = open(proc, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (fd < 0) {
                r = negative_errno();
                return error_set(ret_error, r, "%s: %s", name, strerror(-r));
        }
        if (fstat(fd, &st2) < 0) {
                r = negative_errno();
                return error_set(ret_error, r, "%s: %s", name, strerror(-r));
        }
        if (st2.st_dev != st.st_dev || st2.st_ino != st.st_ino || !S_ISREG(st2.st_mode))
                return error_set(ret_error, -ESTALE, "%s changed while it was opened", name);
        if (ret_st)
                *ret_st = st2;
        return TAKE_FD(fd);
}

/* The path walk of elf_open_target(): at most this many symbolic links,
 * as the kernel's own walk (MAXSYMLINKS). */
#define WALK_LINKS_MAX 40

/* Appends "/COMP" to the real path REAL (LEN bytes of PATH_MAX). */
static int real_push(char *real, size_t *len, const char *comp, size_t n) {
        if (*len + 1 + n >= PATH_MAX)
                return -ENAMETOOLONG;
        real[(*len)++] = '/';
        memcpy(real + *len, comp, n);
        *len += n;
        real[*len] = 0;
        return 0;
}

/* The state of elf_open_target()'s walk: the directory it holds, what
 * is left of the path, and the links that led here. */
struct walk {
        const char *path;       /* as given, for the errors */
        char **ret_error;
        int dir;                /* the directory the walk is in, O_PATH */
        char *rest, *p;         /* what is left to walk: P, inside REST */
        char *real;             /* DIR's real path (PATH_MAX bytes) */
        size_t len;             /* strlen(real) */
        char *buf;              /* a link's target (PATH_MAX bytes) */
        unsigned links;         /* links followed */
        uid_t link_uid;         /* the owner of the links on the way that are not root's; 0: none */
        char *link_path;        /* the last such link */
};

static void walk_done(struct walk *w) {
        safe_close(w->dir);
        free(w->rest);
        free(w->real);
        free(w->buf);
        free(w->link_path);
}

/* R, said for the path walked. */
static int walk_fail(const struct walk *w, int r) {
        return error_set(w->ret_error, r, "%s: %s", w->path, strerror(-r));
}

/* Back to /: at the start, and for a link to an absolute path. */
static int walk_root(struct walk *w) {
        safe_close(w->dir);
        w->dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (w->dir < 0)
                return negative_errno();
        w->real[0] = 0;
        w->len = 0;
        return 0;
}

static int walk_start(struct walk *w, const char *path, char **ret_error) {
        if (!path || path[0] != '/')
                return error_set(ret_error, -EINVAL, "%s: the path must be absolute", path ?: "");
        w->path = path;
        w->ret_error = ret_error;
        w->rest = strdup(path);
        w->real = malloc(PATH_MAX);
        w->buf = malloc(PATH_MAX);
        if (!w->rest || !w->real || !w->buf)
                return -ENOMEM;
        w->p = w->rest;
        return walk_root(w);
}

/* Splits the next component off what is left: *RET_COMP, *RET_N bytes
 * (NUL-terminated in place); *RET_LAST when nothing follows it. */
static int walk_next(struct walk *w, const char **ret_comp, size_t *ret_n, bool *ret_last) {
        char *p = w->p;

        while (*p == '/')
                p++;
        if (!*p)
                return error_set(w->ret_error, -EINVAL, "%s is a directory, not a regular file; a probe target "
                                 "must be an ELF file", w->path);
        *ret_comp = p;
        *ret_n = strcspn(p, "/");
        p += *ret_n;
        if (*p)
                *p++ = 0;
        while (*p == '/')
                p++;
        *ret_last = !*p;
        w->p = p;
        return 0;
}

/* "..": the parent of the directory held. */
static int walk_up(struct walk *w) {
        char *slash = strrchr(w->real, '/');
        int fd;

        fd = openat(w->dir, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return walk_fail(w, negative_errno());
        close(w->dir);
        w->dir = fd;
        if (slash) {
                *slash = 0;
                w->len = (size_t) (slash - w->real);
        }
        return 0;
}

/* The link COMP (N bytes; PFD, ST) in the directory held: its target is
 * put before what is left of the path, after the check of its owner. */
static int walk_link(struct walk *w, int pfd, const struct stat *st, const char *comp, size_t n) {
        ssize_t k;
        char *next;

        if (++w->links > WALK_LINKS_MAX)
                return error_set(w->ret_error, -ELOOP, "%s: more than %d symbolic links", w->path,
                                 WALK_LINKS_MAX);
        /* A link of a user's leads only to that user's files: whoever
         * may write a directory on the way could otherwise point root's
         * probe at any file (issue 26). Links of two users: refused. */
        if (st->st_uid != 0) {
                if (w->link_uid != 0 && w->link_uid != st->st_uid)
                        return error_set(w->ret_error, -EPERM, "%s: the way to it has symbolic links of "
                                         "uid %u and uid %u; name the file itself", w->path,
                                         (unsigned) w->link_uid, (unsigned) st->st_uid);
                w->link_uid = st->st_uid;
                free(w->link_path);
                if (asprintf(&w->link_path, "%s/%.*s", w->real, (int) n, comp) < 0) {
                        w->link_path = NULL;
                        return -ENOMEM;
                }
        }
        k = readlinkat(pfd, "", w->buf, PATH_MAX);
        if (k < 0)
                return walk_fail(w, negative_errno());
        if (k == 0 || k >= PATH_MAX)
                return error_set(w->ret_error, -ENAMETOOLONG, "%s: a symbolic link on the way is empty "
                                 "or too long", w->path);
        w->buf[k] = 0;
        if (asprintf(&next, "%s/%s", w->buf, w->p) < 0)
                return -ENOMEM;
        free(w->rest);
        w->rest = w->p = next;
        return w->buf[0] == '/' ? walk_root(w) : 0;
}

/* One component at a time, each opened O_PATH|O_NOFOLLOW in the
 * directory fd the walk holds: what is checked is what is opened,
 * whatever is renamed meanwhile. A link is read and walked here, so that
 * who placed it is known. The last component, O_PATH, and its stat in
 * *RET_ST; its directory stays held. */
static int walk_path(struct walk *w, struct stat *ret_st) {
        _cleanup_(closep) int pfd = -1;
        const char *comp = NULL;
        size_t n = 0;
        bool last = false;
        int r;

        for (;;) {
                r = walk_next(w, &comp, &n, &last);
                if (r < 0)
                        return r;
                if (strcmp(comp, ".") == 0 && !last)
                        continue;
                if (strcmp(comp, "..") == 0 && !last) {
                        r = walk_up(w);
                        if (r < 0)
                                return r;
                        continue;
                }
                pfd = openat(w->dir, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
                if (pfd < 0 || fstat(pfd, ret_st) < 0)
                        return walk_fail(w, negative_errno());
                if (S_ISLNK(ret_st->st_mode)) {
                        r = walk_link(w, pfd, ret_st, comp, n);
                        pfd = safe_close(pfd);
                        if (r < 0)
                                return r;
                        continue;
                }
                r = real_push(w->real, &w->len, comp, n);
                if (r < 0)
                        return walk_fail(w, r);
                if (last)
                        return TAKE_FD(pfd);
                if (!S_ISDIR(ret_st->st_mode))
                        return error_set(w->ret_error, -ENOTDIR, "%s: %s is not a directory", w->path, w->real);
                close(w->dir);
                w->dir = TAKE_FD(pfd);
        }
}

int elf_open_target(const char *path, int *ret_dir_fd, char **ret_real, struct stat *ret_st, char **ret_error) {
        _cleanup_(walk_done) struct walk w = { .dir = -1 };
        _cleanup_(closep) int pfd = -1, fd = -1;
        struct stat st;
        int r;

        if (ret_error)
                *ret_error = NULL;
        r = walk_start(&w, path, ret_error);
        if (r < 0)
                return r;
        pfd = walk_path(&w, &st);
        if (pfd < 0)
                return pfd;
        if (w.link_uid != 0 && S_ISREG(st.st_mode) && st.st_uid != w.link_uid)
                return error_set(ret_error, -EPERM, "%s leads through %s, a symbolic link of uid %u, to %s, a file "
                                 "of uid %u: a link that is not root's is followed only to its owner's own files; "
                                 "name the file itself", path, w.link_path, (unsigned) w.link_uid, w.real,
                                 (unsigned) st.st_uid);
        /* The last component, in the directory held: checked and reopened
         * as any untrusted file. */
        pfd = safe_close(pfd);
        fd = elf_open_regular(w.dir, strrchr(w.real, '/') + 1, w.real, ELF_OPEN_NOFOLLOW, &st, ret_error);
        if (fd < 0)
                return fd;
        if (w.link_uid != 0 && st.st_uid != w.link_uid)
                return error_set(ret_error, -ESTALE, "%s changed while it was opened", w.real);
        if (ret_st)
                *ret_st = st;
        if (ret_dir_fd)
                *ret_dir_fd = TAKE_FD(w.dir);
        if (ret_real)
                *ret_real = TAKE_PTR(w.real);
        return TAKE_FD(fd);
}

/* libelf on FD. ELF_C_READ, not ELF_C_READ_MMAP: a file its owner
 * truncates while it is mapped would kill the reader with SIGBUS; with
 * ELF_C_READ libelf reads the headers now and each section when it is
 * asked for, with pread(). */
static int elf_begin_fd(int fd, const char *name, Elf **ret, char **ret_error) {
        Elf *e;

        if (elf_version(EV_CURRENT) == EV_NONE)
                return error_set(ret_error, -ENOTSUP, "libelf: %s", elf_errmsg(-1));
        e = elf_begin(fd, ELF_C_READ, NULL);
        if (!e || elf_kind(e) != ELF_K_ELF) {
                if (e)
                        elf_end(e);
                return error_set(ret_error, -ENOEXEC, "%s is not an ELF file", name);
        }
        *ret = e;
        return 0;
}

/* libelf reads a section it is asked for whole (symbol and string tables,
 * notes): whoever wrote the file chose their sizes, so each that may be
 * read is refused past ELF_SECTION_MAX, which bounds the memory a lookup
 * takes and the time it reads. */
static int check_sizes(Elf *e, const char *name, char **ret_error) {
        Elf_Scn *scn = NULL;
        size_t n;

        while ((scn = elf_nextscn(e, scn))) {
                GElf_Shdr sh;

                if (!gelf_getshdr(scn, &sh))
                        continue;
                if (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_STRTAB &&
                    sh.sh_type != SHT_GNU_versym && sh.sh_type != SHT_NOTE)
                        continue;
                if (sh.sh_size > (uint64_t) ELF_SECTION_MAX)
                        return error_set(ret_error, -EFBIG, "%s has a section (type %" PRIu32 ") of %" PRIu64
                                         " bytes, more than the %jd evmon reads", name, (uint32_t) sh.sh_type,
                                         (uint64_t) sh.sh_size, (intmax_t) ELF_SECTION_MAX);
        }
        if (elf_getphdrnum(e, &n) < 0)
                return 0;
        for (size_t i = 0; i < n; i++) {
                GElf_Phdr ph;

                if (gelf_getphdr(e, (int) i, &ph) && ph.p_type == PT_NOTE && ph.p_filesz > (uint64_t) ELF_SECTION_MAX)
                        return error_set(ret_error, -EFBIG, "%s has a note segment of %" PRIu64
                                         " bytes, more than the %jd evmon reads", name, (uint64_t) ph.p_filesz,
                                         (intmax_t) ELF_SECTION_MAX);
        }
        return 0;
}

int elf_read_size_fd(int fd, const char *name, uint64_t *ret_bytes, char **ret_error) {
        _cleanup_(elf_endp) Elf *e = NULL;
        Elf_Scn *scn = NULL;
        uint64_t sum = 0;
        size_t n;
        int r;

        if (ret_error)
                *ret_error = NULL;
        r = elf_begin_fd(fd, name, &e, ret_error);
        if (r < 0)
                return r;
        /* What check_sizes() bounds one by one: the sections and note
         * segments a lookup and a build id read would read whole. */
        while ((scn = elf_nextscn(e, scn))) {
                GElf_Shdr sh;

                if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
                        continue;
                if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM || sh.sh_type == SHT_STRTAB ||
                    sh.sh_type == SHT_GNU_versym || sh.sh_type == SHT_NOTE)
                        sum += sh.sh_size < UINT64_MAX - sum ? sh.sh_size : UINT64_MAX - sum;
        }
        if (elf_getphdrnum(e, &n) >= 0)
                for (size_t i = 0; i < n; i++) {
                        GElf_Phdr ph;

                        if (gelf_getphdr(e, (int) i, &ph) && ph.p_type == PT_NOTE)
                                sum += ph.p_filesz < UINT64_MAX - sum ? ph.p_filesz : UINT64_MAX - sum;
                }
        *ret_bytes = sum;
        return 0;
}

int elf_resolve_symbol_fd(int fd, const char *name, const char *symbol, uint64_t *ret_offset, char **ret_error) {
        _cleanup_(elf_endp) Elf *e = NULL;
        struct symtab symtab = {}, dynsym = {};
        Elf_Scn *versym_scn = NULL;
        struct matches ms = {};
        const struct symtab *found_in = NULL;
        GElf_Ehdr eh;
        GElf_Phdr ph;
        GElf_Addr addr;
        Elf_Scn *scn = NULL;
        const char *real = name;
        int r;

        if (ret_error)
                *ret_error = NULL;
        if (fd < 0 || !name || !symbol || !*symbol)
                return error_set(ret_error, -EINVAL, "no file or empty symbol");

        r = elf_begin_fd(fd, name, &e, ret_error);
        if (r < 0)
                return r;
        r = check_sizes(e, name, ret_error);
        if (r < 0)
                return r;
        if (!gelf_getehdr(e, &eh))
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
        return 0;
}

int elf_resolve_symbol(const char *path, const char *symbol, uint64_t *ret_offset,
                       char **ret_real_path, char **ret_error) {
        _cleanup_(freep) char *real = NULL;
        _cleanup_(closep) int fd = -1;
        int r;

        if (ret_error)
                *ret_error = NULL;
        if (!path || !*path || !symbol || !*symbol)
                return error_set(ret_error, -EINVAL, "empty path or symbol");

        fd = elf_open_target(path, NULL, &real, NULL, ret_error);
        if (fd < 0)
                return fd;
        r = elf_resolve_symbol_fd(fd, real, symbol, ret_offset, ret_error);
        if (r < 0)
                return r;
        if (ret_real_path)
                *ret_real_path = TAKE_PTR(real);
        return 0;
}

int elf_build_id_fd(int fd, const char *path, char **ret_hex, char **ret_error) {
        _cleanup_(elf_endp) Elf *e = NULL;
        const uint8_t *id;
        ssize_t n;
        char *hex;
        int r;

        if (ret_error)
                *ret_error = NULL;
        r = elf_begin_fd(fd, path, &e, ret_error);
        if (r < 0)
                return r;
        r = check_sizes(e, path, ret_error);
        if (r < 0)
                return r;
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

int elf_build_id(const char *path, char **ret_hex, char **ret_error) {
        _cleanup_(closep) int fd = -1;

        if (ret_error)
                *ret_error = NULL;
        fd = elf_open_regular(AT_FDCWD, path, NULL, 0, NULL, ret_error);
        if (fd < 0)
                return fd;
        return elf_build_id_fd(fd, path, ret_hex, ret_error);
}
