/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* src/basic/kallsyms.c: /proc/kallsyms, "ADDRESS TYPE NAME [MODULE]" per
 * line (kernel/kallsyms.c s_show()). The one reader of its lines, for
 * monitor's breakpoints (a name → its address) and context's callchain
 * symbols (the table of text symbols, src/context/kallsyms.c). */

#include <stddef.h>
#include <stdint.h>

struct kallsyms_line {
        uint64_t addr;                  /* 0 when kptr_restrict hides it */
        char type;                      /* 't', 'T', 'd', 'D', 'w', ... */
        const char *name;               /* not NUL-terminated: NAME_LEN bytes */
        size_t name_len;
        const char *module;             /* between the brackets; NULL: the kernel's own */
        size_t module_len;
};

/* Parses the line at *P (text up to END, not NUL-terminated) and moves *P
 * past its newline. 1 with *RET filled (pointing into the text), or 0 for
 * a line that is not a symbol (skip it). Call while *P < END. */
int kallsyms_line_next(const char **p, const char *end, struct kallsyms_line *ret);

/* The address of kernel symbol NAME in KALLSYMS (NULL: /proc/kallsyms).
 * -ENOENT when absent, -EPERM when the file hides addresses (all zero:
 * kptr_restrict). */
int kallsyms_lookup(const char *kallsyms, const char *name, uint64_t *ret);
