/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The sandboxed symbolizer's parser (src/context/symtab.c): an ELF file's
 * PT_LOAD segments and function symbols, .symtab, .dynsym and the xz of
 * .gnu_debugdata, as evmon-symbolizer reads a user's file (issue 26). The
 * input is the file; its table must pass the daemon's own check, and a
 * lookup of every symbol must land on one. Small limits, so that an input
 * reaching them is quick. */

#include <stdlib.h>
#include <string.h>

#include "evmon/context.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const struct ctx_symtab_limits lim = {
                .max_syms = 1 << 14, .max_names = 1 << 18, .max_debugdata = 4 << 20,
        };
        struct ctx_symtab *t = NULL;
        /* libelf wants a writable image (elf_memory() takes char *). */
        char *copy = malloc(size ? size : 1);

        if (!copy)
                abort();
        memcpy(copy, data, size);
        if (ctx_symtab_read(-1, copy, size, &lim, &t) == 0) {
                if (ctx_symtab_check(t) < 0 || t->n_syms > lim.max_syms || t->names_len > lim.max_names)
                        abort();
                for (uint64_t i = 0; i < t->n_syms; i++)
                        if (!ctx_symtab_find(t, t->syms[i].addr))
                                abort();
                (void) ctx_symtab_find(t, 0);
                (void) ctx_symtab_find(t, UINT64_MAX);
                ctx_symtab_free(t);
        }
        free(copy);
        return 0;
}
