/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A symbolizer helper's answer as evmond reads it (symbols.c): the reply
 * header, n_syms symbols, names_len bytes of names. The helper parses
 * users' files and may be theirs to command (issue 26): whatever it says,
 * evmond's checks (symbolizer_reply_check(), ctx_symtab_check()) must
 * leave a table whose every lookup, and the segment arithmetic of a
 * frame, stays inside it. */

#include <stdlib.h>
#include <string.h>

#include "../../src/context/symbolizer.h"
#include "evmon/context.h"
#include "fuzz.h"

static void lookup(const struct ctx_symtab *t, uint64_t addr) {
        const struct ctx_symtab_sym *f = ctx_symtab_find(t, addr);

        if (!f)
                return;
        if (f < t->syms || f >= t->syms + t->n_syms || f->name >= t->names_len ||
            !memchr(t->names + f->name, 0, (size_t) (t->names_len - f->name)))
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct symbolizer_reply rep;
        struct ctx_symtab t = {};
        size_t syms_bytes;

        if (size < sizeof(rep))
                return 0;
        memcpy(&rep, data, sizeof(rep));
        rep.magic = SYMBOLIZER_MAGIC;  /* the id and magic are no way in */
        if (symbolizer_reply_check(&rep, rep.id) < 0 || rep.error < 0)
                return 0;
        data += sizeof(rep);
        size -= sizeof(rep);
        /* The body as the daemon allocates it: whole, or the helper died. */
        syms_bytes = (size_t) rep.n_syms * sizeof(*t.syms);
        if (size < syms_bytes || size - syms_bytes < rep.names_len)
                return 0;
        t.flags = rep.flags;
        t.n_segs = rep.n_segs;
        memcpy(t.segs, rep.segs, sizeof(t.segs));
        t.n_syms = rep.n_syms;
        t.names_len = rep.names_len;
        t.syms = malloc(syms_bytes ? syms_bytes : 1);
        t.names = malloc(t.names_len ? t.names_len : 1);
        if (!t.syms || !t.names)
                abort();
        memcpy(t.syms, data, syms_bytes);
        memcpy(t.names, data + syms_bytes, t.names_len);
        if (ctx_symtab_check(&t) == 0) {
                for (uint64_t i = 0; i < t.n_syms; i++) {
                        lookup(&t, t.syms[i].addr);
                        lookup(&t, t.syms[i].addr - 1);
                        lookup(&t, t.syms[i].addr + t.syms[i].size);
                }
                lookup(&t, 0);
                lookup(&t, UINT64_MAX);
                /* A frame's file offset into each segment (user_frame()). */
                for (unsigned i = 0; i < t.n_segs; i++)
                        lookup(&t, t.segs[i].vaddr + t.segs[i].filesz / 2);
        }
        free(t.syms);
        free(t.names);
        return 0;
}
