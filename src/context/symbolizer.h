/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What evmond (symbols.c) and evmon-symbolizer say over their socketpair
 * (SOCK_STREAM, the helper's end at fd 3). The daemon sends a request with
 * the mapped file's fd (SCM_RIGHTS, opened and checked by the daemon); the
 * helper answers with a reply, then n_syms struct ctx_symtab_sym, then
 * names_len bytes of names. The daemon checks the answer as it would any
 * outside bytes (ctx_symtab_check()). */

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
        uint64_t n_syms, names_len;
};
