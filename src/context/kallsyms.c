/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* /proc/kallsyms as a table for callchain frames; its lines are read by
 * basic's kallsyms_line_next() (kernel/kallsyms.c s_show()). Only text
 * symbols (t, T, w, W) name code; the table is sorted by address once
 * and searched per frame. Addresses read as 0 when
 * kptr_restrict hides them from us. */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "evmon/context.h"
#include "evmon/io.h"
#include "evmon/kallsyms.h"

struct ksym {
        uint64_t addr;
        uint32_t name;                  /* offset in names */
        uint32_t module;                /* index in modules */
};

struct ctx_kallsyms {
        struct ksym *syms;
        size_t n;
        char *names;
        size_t names_len;
        char **modules;                 /* "[kernel.kallsyms]", "[ext4]", ... */
        size_t n_modules;
};

/* A symbol's reach past its address when no next symbol bounds it. */
#define LAST_SYMBOL_REACH 0x100000u

static int cmp_ksym(const void *a, const void *b) {
        const struct ksym *x = a, *y = b;

        return x->addr < y->addr ? -1 : x->addr > y->addr;
}

struct ctx_kallsyms *ctx_kallsyms_free(struct ctx_kallsyms *k) {
        if (!k)
                return NULL;
        for (size_t i = 0; i < k->n_modules; i++)
                free(k->modules[i]);
        free(k->modules);
        free(k->syms);
        free(k->names);
        free(k);
        return NULL;
}

static int module_index(struct ctx_kallsyms *k, const char *s, size_t n, uint32_t *ret) {
        char **m;

        /* Modules' symbols come together: the last one usually matches. */
        for (size_t i = k->n_modules; i > 0; i--)
                if (strlen(k->modules[i - 1]) == n + 2 && memcmp(k->modules[i - 1] + 1, s, n) == 0) {
                        *ret = (uint32_t) (i - 1);
                        return 0;
                }
        m = realloc(k->modules, (k->n_modules + 1) * sizeof(*m));
        if (!m)
                return -ENOMEM;
        k->modules = m;
        m[k->n_modules] = malloc(n + 3);
        if (!m[k->n_modules])
                return -ENOMEM;
        m[k->n_modules][0] = '[';
        memcpy(m[k->n_modules] + 1, s, n);
        memcpy(m[k->n_modules] + 1 + n, "]", 2);
        *ret = (uint32_t) k->n_modules++;
        return 0;
}

int ctx_kallsyms_parse(const char *text, size_t len, struct ctx_kallsyms **ret) {
        _cleanup_(ctx_kallsyms_freep) struct ctx_kallsyms *k = calloc(1, sizeof(*k));
        const char *p = text, *end = text + len;
        size_t cap = 0, names_cap = 0;
        uint32_t kernel;
        int r;

        if (!k)
                return -ENOMEM;
        r = module_index(k, "kernel.kallsyms", strlen("kernel.kallsyms"), &kernel);
        if (r < 0)
                return r;
        while (p < end) {
                struct kallsyms_line l;
                uint32_t mod = kernel;
                size_t n;

                if (kallsyms_line_next(&p, end, &l) == 0)
                        continue;
                if (l.type != 't' && l.type != 'T' && l.type != 'w' && l.type != 'W')
                        continue;
                if (l.addr == 0)
                        continue;
                if (l.module) {
                        r = module_index(k, l.module, l.module_len, &mod);
                        if (r < 0)
                                return r;
                }
                if (k->n == cap) {
                        size_t ncap = cap ? cap * 2 : 4096;
                        struct ksym *s = realloc(k->syms, ncap * sizeof(*s));
                        if (!s)
                                return -ENOMEM;
                        k->syms = s;
                        cap = ncap;
                }
                n = l.name_len;
                if (k->names_len + n + 1 > names_cap) {
                        size_t ncap = names_cap ? names_cap * 2 : 65536;
                        char *s;

                        while (ncap < k->names_len + n + 1)
                                ncap *= 2;
                        if (ncap > UINT32_MAX)
                                return -E2BIG;
                        s = realloc(k->names, ncap);
                        if (!s)
                                return -ENOMEM;
                        k->names = s;
                        names_cap = ncap;
                }
                k->syms[k->n++] = (struct ksym) { l.addr, (uint32_t) k->names_len, mod };
                memcpy(k->names + k->names_len, l.name, n);
                k->names[k->names_len + n] = 0;
                k->names_len += n + 1;
        }
        if (k->n == 0)
                return -ENOENT;
        qsort(k->syms, k->n, sizeof(*k->syms), cmp_ksym);
        *ret = TAKE_PTR(k);
        return 0;
}

int ctx_kallsyms_load(const char *path, struct ctx_kallsyms **ret) {
        _cleanup_(freep) char *buf = NULL;
        _cleanup_(closep) int fd = -1;
        size_t len;
        int r;

        fd = open(path ? path : "/proc/kallsyms", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        /* procfs gives no size: read until the end. */
        r = read_full(fd, 0, &buf, &len);
        if (r < 0)
                return r;
        return ctx_kallsyms_parse(buf, len, ret);
}

size_t ctx_kallsyms_count(const struct ctx_kallsyms *k) {
        return k ? k->n : 0;
}

int ctx_kallsyms_lookup(const struct ctx_kallsyms *k, uint64_t ip, struct ctx_frame *ret) {
        size_t lo = 0, hi;

        if (!k || k->n == 0 || ip < k->syms[0].addr)
                return -ENOENT;
        hi = k->n;
        /* The last symbol at or below IP. */
        while (hi - lo > 1) {
                size_t mid = lo + (hi - lo) / 2;
                if (k->syms[mid].addr <= ip)
                        lo = mid;
                else
                        hi = mid;
        }
        if (lo + 1 == k->n && ip - k->syms[lo].addr >= LAST_SYMBOL_REACH)
                return -ENOENT;
        ret->sym = k->names + k->syms[lo].name;
        ret->off = ip - k->syms[lo].addr;
        ret->module = k->modules[k->syms[lo].module];
        return 0;
}
