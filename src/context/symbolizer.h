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

/* ---- unwinding: evmon-symbolizer --unwind ------------------------------ */

/* A second helper, the same program started with --unwind, unwinds user
 * stacks with DWARF CFI (libdw's dwfl_getthread_frames(), as perf
 * --call-graph dwarf does) over the registers and the stack bytes a
 * sample copied (PERF_SAMPLE_REGS_USER, PERF_SAMPLE_STACK_USER). The
 * daemon sends a request (its n_maps fds by SCM_RIGHTS with it: the
 * process's executable mappings, opened and checked as for symbols), then
 * stack_len bytes; the helper answers with a reply. Its input is a
 * user's memory and files: the same sandbox. */
#define UNWIND_MAGIC UINT32_C(0x65766d75)     /* "evmu" */
#define UNWIND_MAX_MAPS 32
#define UNWIND_MAX_STACK 65528                  /* the kernel's most (a u16 size, 8-aligned) */
#define UNWIND_MAX_FRAMES 127
#define UNWIND_NREGS 17                         /* DWARF's x86_64: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip */

struct unwind_map {
        uint64_t start, end, pgoff;
};

struct unwind_request {
        uint32_t magic, id;
        uint32_t n_maps, stack_len;
        uint64_t regs[UNWIND_NREGS];
        uint64_t sp;                            /* the address of the stack bytes' first */
        uint32_t max_frames, reserved;
        struct unwind_map maps[UNWIND_MAX_MAPS];
};

struct unwind_reply {
        uint32_t magic, id;
        int32_t error;
        uint32_t n;                             /* pcs: the sample's ip first, then each caller's */
        uint64_t pcs[UNWIND_MAX_FRAMES];
};
