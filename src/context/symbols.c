/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Callchain frames → "sym+off" in a module. Kernel frames by /proc/kallsyms
 * (kallsyms.c); user frames by the process's executable mappings (MMAP2
 * records, else /proc/PID/maps) and elfutils' libdwfl on the mapped file,
 * which reads .symtab or .dynsym, the minidebuginfo of .gnu_debugdata and
 * separate debug files found by build id or debuglink.
 *
 * Both caches are bounded and evict the least recently used: max_modules
 * open ELF files keyed by device and inode (one Dwfl each, the file at its
 * link addresses, so a frame's address in it is its file offset mapped
 * through the PT_LOAD headers), and the mappings of max_procs processes,
 * at most max_maps each. A cache miss reads /proc or opens a file; a hit
 * allocates nothing. */

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "evmon/context.h"
#include "evmon/io.h"

#define MAX_SEGS 16

struct seg {
        uint64_t offset, filesz, vaddr;
};

struct fsym {
        uint64_t addr, size;
        const char *name;               /* libdwfl's, valid while the Dwfl lives */
};

struct mod {
        uint64_t dev, ino, last_use;
        struct fsym *syms;              /* function symbols sorted by address */
        size_t n_syms;
        Dwfl *dwfl;
        Dwfl_Module *m;
        char *path;
        struct seg segs[MAX_SEGS];
        unsigned n_segs;
        bool failed;                    /* no ELF there: remembered so it is not reopened */
};

struct umap {
        uint64_t start, end, pgoff, dev, ino;
        uint32_t path;                  /* offset in the proc's names */
};

struct uproc {
        pid_t pid;
        bool used, from_proc;
        uint64_t last_use;
        struct umap *maps;
        unsigned n_maps;
        char *names;
        size_t names_len, names_cap;
};

struct ctx_symbols {
        struct ctx_symbols_opts o;
        char *proc_root;
        struct ctx_kallsyms *kallsyms;
        struct mod *mods;
        struct uproc *procs;
        uint64_t clock;
        struct ctx_symbols_stats st;
        char *debuginfo_path;
        Dwfl_Callbacks cb;
};

/* ---- modules ------------------------------------------------------------ */

static void mod_clear(struct mod *m) {
        if (m->dwfl)
                dwfl_end(m->dwfl);
        free(m->syms);
        free(m->path);
        *m = (struct mod) {};
}

static int cmp_fsym(const void *a, const void *b) {
        const struct fsym *x = a, *y = b;

        return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The module's function symbols, read through libdwfl (the best table it
 * finds: .symtab, minidebuginfo, a separate debug file; else .dynsym) and
 * sorted once: dwfl_module_addrinfo() scans every symbol per call, which
 * measured at a third of evmond's CPU with symbols on (libc has
 * thousands). */
static int mod_index(struct mod *m) {
        int n = dwfl_module_getsymtab(m->m);

        if (n <= 0)
                return 0;  /* no symbols: frames name the file only */
        m->syms = calloc((size_t) n, sizeof(*m->syms));
        if (!m->syms)
                return -ENOMEM;
        for (int i = 1; i < n; i++) {
                GElf_Sym sym;
                GElf_Addr addr;
                GElf_Word shndx;
                const char *name = dwfl_module_getsym_info(m->m, i, &sym, &addr, &shndx, NULL, NULL);

                if (!name || !*name || shndx == SHN_UNDEF ||
                    (GELF_ST_TYPE(sym.st_info) != STT_FUNC && GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC))
                        continue;
                m->syms[m->n_syms++] = (struct fsym) { addr, sym.st_size, name };
        }
        qsort(m->syms, m->n_syms, sizeof(*m->syms), cmp_fsym);
        return 0;
}

/* The function holding ADDR: the last one starting at or below it, if
 * ADDR is inside its size (a size of 0 reaches to the next one). */
static const struct fsym *mod_find(const struct mod *m, uint64_t addr) {
        size_t lo = 0, hi = m->n_syms;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (m->syms[mid].addr <= addr)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        /* Aliases share an address: any of them has the size. */
        for (size_t i = lo; i > 0 && m->syms[i - 1].addr == m->syms[lo - 1].addr; i--) {
                const struct fsym *f = &m->syms[i - 1];

                if (addr < f->addr + f->size)
                        return f;
        }
        if (lo > 0 && m->syms[lo - 1].size == 0)
                return &m->syms[lo - 1];
        return NULL;
}

static int mod_load(struct ctx_symbols *s, struct mod *m, const char *path, int fd) {
        GElf_Addr bias;
        size_t n_ph;
        Elf *elf;

        m->dwfl = dwfl_begin(&s->cb);
        if (!m->dwfl) {
                close(fd);
                return -ENOMEM;
        }
        dwfl_report_begin(m->dwfl);
        /* At its link addresses (ET_DYN placed at its p_vaddr): the address
         * of a file offset is then the segment's own arithmetic. fd is
         * the library's from here. */
        m->m = dwfl_report_elf(m->dwfl, path, path, fd, 0, true);
        dwfl_report_end(m->dwfl, NULL, NULL);
        if (!m->m)
                return -ENOEXEC;
        elf = dwfl_module_getelf(m->m, &bias);
        if (!elf || elf_getphdrnum(elf, &n_ph) < 0)
                return -ENOEXEC;
        for (size_t i = 0; i < n_ph && m->n_segs < MAX_SEGS; i++) {
                GElf_Phdr ph;

                if (!gelf_getphdr(elf, (int) i, &ph) || ph.p_type != PT_LOAD)
                        continue;
                m->segs[m->n_segs++] = (struct seg) { ph.p_offset, ph.p_filesz, ph.p_vaddr + bias };
        }
        if (!m->n_segs)
                return -ENOEXEC;
        return mod_index(m);
}

static struct mod *mod_get(struct ctx_symbols *s, pid_t pid, uint64_t dev, uint64_t ino, const char *path) {
        struct mod *m = NULL, *lru = &s->mods[0];
        char buf[PATH_MAX + 64];
        struct stat st;
        int fd;

        for (unsigned i = 0; i < s->o.max_modules; i++) {
                struct mod *x = &s->mods[i];

                if ((x->dwfl || x->failed) && x->dev == dev && x->ino == ino) {
                        x->last_use = ++s->clock;
                        return x->failed ? NULL : x;
                }
                if (x->last_use < lru->last_use)
                        lru = x;
        }
        m = lru;
        mod_clear(m);
        m->dev = dev;
        m->ino = ino;
        m->last_use = ++s->clock;
        /* Through the process's root, so a container's files are its own;
         * the inode must be the mapped one (a file replaced since is not). */
        snprintf(buf, sizeof(buf), "%s/%d/root%s", s->proc_root, (int) pid, path);
        fd = open(buf, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                fd = open(path, O_RDONLY | O_CLOEXEC);
        /* The inode alone: overlay file systems show another device in
         * the maps than stat() does. */
        if (fd < 0 || fstat(fd, &st) < 0 || st.st_ino != ino) {
                if (fd >= 0)
                        close(fd);
                m->failed = true;
                return NULL;
        }
        m->path = strdup(path);
        if (!m->path || mod_load(s, m, path, fd) < 0) {
                uint64_t d = m->dev, i = m->ino, u = m->last_use;

                mod_clear(m);
                m->dev = d;
                m->ino = i;
                m->last_use = u;
                m->failed = true;
                return NULL;
        }
        s->st.modules++;
        return m;
}

/* ---- process mappings ------------------------------------------------- */

static void uproc_clear(struct uproc *p) {
        free(p->maps);
        free(p->names);
        *p = (struct uproc) {};
}

static int uproc_add(struct ctx_symbols *s, struct uproc *p, uint64_t start, uint64_t end, uint64_t pgoff,
                     uint64_t dev, uint64_t ino, const char *path, size_t path_len) {
        unsigned k;

        if (path_len == 0 || path[0] != '/' || end <= start)
                return 0;  /* anonymous, [vdso], [stack]: no file to read */
        if (!p->maps) {
                p->maps = calloc(s->o.max_maps, sizeof(*p->maps));
                if (!p->maps)
                        return -ENOMEM;
        }
        if (p->n_maps >= s->o.max_maps)
                return 0;
        if (p->names_len + path_len + 1 > p->names_cap) {
                size_t cap = p->names_cap ? p->names_cap * 2 : 4096;
                char *n;

                while (cap < p->names_len + path_len + 1)
                        cap *= 2;
                n = realloc(p->names, cap);
                if (!n)
                        return -ENOMEM;
                p->names = n;
                p->names_cap = cap;
        }
        /* Kept sorted by start; a new mapping replaces those it overlaps. */
        for (k = 0; k < p->n_maps;) {
                if (p->maps[k].start < end && start < p->maps[k].end) {
                        memmove(&p->maps[k], &p->maps[k + 1], (p->n_maps - k - 1) * sizeof(*p->maps));
                        p->n_maps--;
                } else
                        k++;
        }
        for (k = 0; k < p->n_maps && p->maps[k].start < start; k++)
                ;
        memmove(&p->maps[k + 1], &p->maps[k], (p->n_maps - k) * sizeof(*p->maps));
        p->maps[k] = (struct umap) { start, end, pgoff, dev, ino, (uint32_t) p->names_len };
        memcpy(p->names + p->names_len, path, path_len);
        p->names[p->names_len + path_len] = 0;
        p->names_len += path_len + 1;
        p->n_maps++;
        return 0;
}

struct load_ctx {
        struct ctx_symbols *s;
        struct uproc *p;
};

static int load_one(const struct ctx_map *m, void *userdata) {
        struct load_ctx *l = userdata;
        size_t n = m->path_len;

        if (!m->exec)
                return 0;
        /* " (deleted)": the file is gone, its inode may still be read
         * through the process's root; keep the name without the note. */
        if (n > 10 && memcmp(m->path + n - 10, " (deleted)", 10) == 0)
                n -= 10;
        return uproc_add(l->s, l->p, m->start, m->end, m->pgoff, m->dev, m->ino, m->path, n);
}

static struct uproc *uproc_find(struct ctx_symbols *s, pid_t pid) {
        for (unsigned i = 0; i < s->o.max_procs; i++)
                if (s->procs[i].used && s->procs[i].pid == pid)
                        return &s->procs[i];
        return NULL;
}

static struct uproc *uproc_new(struct ctx_symbols *s, pid_t pid) {
        struct uproc *lru = &s->procs[0];

        for (unsigned i = 0; i < s->o.max_procs; i++) {
                if (!s->procs[i].used) {
                        lru = &s->procs[i];
                        break;
                }
                if (s->procs[i].last_use < lru->last_use)
                        lru = &s->procs[i];
        }
        uproc_clear(lru);
        lru->used = true;
        lru->pid = pid;
        lru->last_use = ++s->clock;
        return lru;
}

static void uproc_read(struct ctx_symbols *s, struct uproc *p) {
        char path[64];
        _cleanup_(freep) char *buf = NULL;
        _cleanup_(closep) int fd = -1;
        size_t len;

        p->from_proc = true;
        snprintf(path, sizeof(path), "%s/%d/maps", s->proc_root, (int) p->pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || read_full(fd, 0, &buf, &len) < 0)
                return;
        (void) ctx_parse_maps(buf, len, load_one, &(struct load_ctx) { s, p });
}

static const struct umap *umap_find(const struct uproc *p, uint64_t ip) {
        size_t lo = 0, hi = p->n_maps;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (ip < p->maps[mid].start)
                        hi = mid;
                else if (ip >= p->maps[mid].end)
                        lo = mid + 1;
                else
                        return &p->maps[mid];
        }
        return NULL;
}

void ctx_symbols_mmap(struct ctx_symbols *s, pid_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
                      uint64_t dev, uint64_t ino, const char *path) {
        struct uproc *p = uproc_find(s, pid);

        if (!path)
                return;
        if (!p)
                p = uproc_new(s, pid);
        (void) uproc_add(s, p, start, start + len, pgoff, dev, ino, path, strlen(path));
}

void ctx_symbols_forget(struct ctx_symbols *s, pid_t pid) {
        struct uproc *p = uproc_find(s, pid);

        if (p)
                uproc_clear(p);
}

static int user_frame(struct ctx_symbols *s, struct uproc *p, uint64_t ip, struct ctx_frame *ret) {
        const struct umap *u = umap_find(p, ip);
        uint64_t off, addr = 0;
        const struct fsym *f;
        struct mod *m;
        bool found = false;

        if (!u && !p->from_proc) {
                /* Mappings from records only (inherited ones never come as
                 * records): read the rest from /proc once. */
                uproc_read(s, p);
                u = umap_find(p, ip);
        }
        if (!u)
                return -ENOENT;
        m = mod_get(s, p->pid, u->dev, u->ino, p->names + u->path);
        ret->module = p->names + u->path;
        if (!m)
                return -ENOENT;
        off = ip - u->start + u->pgoff;
        for (unsigned i = 0; i < m->n_segs; i++)
                if (off >= m->segs[i].offset && off < m->segs[i].offset + m->segs[i].filesz) {
                        addr = off - m->segs[i].offset + m->segs[i].vaddr;
                        found = true;
                        break;
                }
        if (!found)
                return -ENOENT;
        f = mod_find(m, addr);
        ret->module = m->path;
        if (!f)
                return -ENOENT;
        ret->sym = f->name;
        ret->off = addr - f->addr;
        return 0;
}

int ctx_symbols_resolve(struct ctx_symbols *s, pid_t pid, const uint64_t *ips, uint64_t nr,
                        struct ctx_frame *ret) {
        bool kernel = false;  /* frames before any marker: by address */
        struct uproc *p = NULL;
        int named = 0;

        for (uint64_t i = 0; i < nr; i++) {
                uint64_t ip;
                int r = -ENOENT;

                memcpy(&ip, &ips[i], sizeof(ip));
                ret[i] = (struct ctx_frame) {};
                if (ip >= PERF_CONTEXT_MAX) {
                        kernel = ip == PERF_CONTEXT_KERNEL;
                        continue;
                }
                if (kernel || (int64_t) ip < 0)
                        r = ctx_kallsyms_lookup(s->kallsyms, ip, &ret[i]);
                else if (pid > 0) {
                        if (!p) {
                                p = uproc_find(s, pid);
                                if (!p) {
                                        p = uproc_new(s, pid);
                                        uproc_read(s, p);
                                }
                                p->last_use = ++s->clock;
                        }
                        r = user_frame(s, p, ip, &ret[i]);
                }
                if (r == 0) {
                        named++;
                        s->st.named++;
                } else {
                        ret[i].sym = NULL;
                        s->st.unnamed++;
                }
        }
        return named;
}

void ctx_symbols_stats(const struct ctx_symbols *s, struct ctx_symbols_stats *ret) {
        *ret = s->st;
        ret->modules = 0;
        ret->procs = 0;
        for (unsigned i = 0; i < s->o.max_modules; i++)
                ret->modules += s->mods[i].dwfl != NULL;
        for (unsigned i = 0; i < s->o.max_procs; i++)
                ret->procs += s->procs[i].used;
}

int ctx_symbols_new(const struct ctx_symbols_opts *opts, struct ctx_symbols **ret) {
        _cleanup_(ctx_symbols_freep) struct ctx_symbols *s = calloc(1, sizeof(*s));
        int r;

        if (!s)
                return -ENOMEM;
        s->o = opts ? *opts : (struct ctx_symbols_opts) {};
        if (!s->o.max_modules)
                s->o.max_modules = 64;
        if (!s->o.max_procs)
                s->o.max_procs = 256;
        if (!s->o.max_maps)
                s->o.max_maps = 512;
        s->proc_root = strdup(s->o.proc_root ? s->o.proc_root : "/proc");
        s->mods = calloc(s->o.max_modules, sizeof(*s->mods));
        s->procs = calloc(s->o.max_procs, sizeof(*s->procs));
        if (!s->proc_root || !s->mods || !s->procs)
                return -ENOMEM;
        s->cb = (Dwfl_Callbacks) {
                .find_elf = dwfl_build_id_find_elf,
                .find_debuginfo = dwfl_standard_find_debuginfo,
                .section_address = dwfl_offline_section_address,
                .debuginfo_path = &s->debuginfo_path,
        };
        if (s->o.kernel) {
                r = ctx_kallsyms_load(NULL, &s->kallsyms);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(s);
        return 0;
}

struct ctx_symbols *ctx_symbols_free(struct ctx_symbols *s) {
        if (!s)
                return NULL;
        if (s->mods)
                for (unsigned i = 0; i < s->o.max_modules; i++)
                        mod_clear(&s->mods[i]);
        if (s->procs)
                for (unsigned i = 0; i < s->o.max_procs; i++)
                        uproc_clear(&s->procs[i]);
        free(s->mods);
        free(s->procs);
        ctx_kallsyms_free(s->kallsyms);
        free(s->proc_root);
        free(s);
        return NULL;
}
