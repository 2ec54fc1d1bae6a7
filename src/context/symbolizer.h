/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What evmond (symbols.c) and evmon-symbolizer say over their socketpair
 * (SOCK_STREAM, the helper's end at fd 3). The daemon sends a request with
 * the mapped file's fd (SCM_RIGHTS, opened and checked by the daemon); the
 * helper answers with a reply, then n_syms struct ctx_symtab_sym, then
 * names_len bytes of names. The daemon checks the answer as it would any
 * outside bytes (ctx_symtab_check()). */

#include <errno.h>
#include <stdint.h>

#include "evmon/context.h"

#define SYMBOLIZER_FD 3
#define SYMBOLIZER_MAGIC UINT32_C(0x65766d73)  /* "evms" */

struct symbolizer_request {
        uint32_t magic, id;
};

struct symbolizer_reply {
        uint32_t magic, id;
        int32_t error;                  /* 0 or -errno from ctx_symtab_read() */
        uint32_t flags, n_segs, reserved;
        struct ctx_symtab_seg segs[CTX_SYMTAB_MAX_SEGS];
        uint8_t build_id[CTX_SYMTAB_MAX_BUILD_ID];
        uint32_t build_id_len, reserved2;
        uint64_t n_syms, names_len;
};

/* The bounds of a reply's header, before evmond allocates for its body:
 * the helper's own limits (ctx_symtab_read()'s defaults) bound what it
 * may send, and more is a lie. 0 or -EBADMSG. The rest is checked by
 * ctx_symtab_check() once the body is in. */
static inline int symbolizer_reply_check(const struct symbolizer_reply *rep, uint32_t id) {
        if (rep->magic != SYMBOLIZER_MAGIC || rep->id != id)
                return -EBADMSG;
        if (rep->error < 0)
                return 0;
        if (rep->n_segs > CTX_SYMTAB_MAX_SEGS || rep->build_id_len > CTX_SYMTAB_MAX_BUILD_ID || rep->n_syms > (UINT64_C(1) << 20) ||
            rep->names_len > (UINT64_C(32) << 20) || (!rep->n_syms) != (!rep->names_len))
                return -EBADMSG;
        return 0;
}
