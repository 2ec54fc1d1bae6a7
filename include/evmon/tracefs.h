/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* src/tracefs/: the tracefs mount, event format files and the decoders
 * built from them. Knows nothing of sockets, JSON or perf fds. All
 * functions return 0 (or a count) on success and -errno on failure; none
 * prints. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "evmon/cleanup.h"

/* ---- tracefs.c: the mount ------------------------------------------- */

struct tracefs;
struct format;

/* Opens tracefs at DIR, or, with DIR NULL, finds it from /proc/mounts
 * (/sys/kernel/tracing, then /sys/kernel/debug/tracing) and mounts it at
 * /sys/kernel/tracing when it is missing and we may. -ENOENT when there is
 * none. The caller owns *ret. */
int tracefs_open(const char *dir, struct tracefs **ret);
struct tracefs *tracefs_free(struct tracefs *t);
const char *tracefs_path(const struct tracefs *t);

/* Picks the tracefs mount point out of the text of /proc/mounts:
 * /sys/kernel/tracing, then /sys/kernel/debug/tracing, then any other
 * tracefs mount. -ENOENT when there is none. The caller owns *ret_path. */
int tracefs_find_mount(const char *mounts, char **ret_path);

/* Reads the file REL (relative to the root) whole, NUL-terminated. */
int tracefs_read(const struct tracefs *t, const char *rel, char **ret_text, size_t *ret_len);

/* The kernel's reason for refusing a command it was given (a probe
 * definition, an event filter): the last entry of tracefs error_log when
 * it quotes a command that starts like LINE (up to LINE's first space),
 * without its timestamp. NULL when there is none (caller frees). */
char *tracefs_last_error(const struct tracefs *t, const char *line);

/* The kernel's reason for refusing FILTER on SYSTEM:NAME ("Field not
 * found"), learnt by setting it in a private tracefs instance that is
 * removed again: perf's SET_FILTER only says EINVAL. NULL when it cannot
 * tell (caller frees). */
char *tracefs_filter_error(const struct tracefs *t, const char *system, const char *name, const char *filter);

/* Parses events/SYSTEM/NAME/format into *ret (caller owns). -ENOENT when
 * the event does not exist. */
int tracefs_event_format(const struct tracefs *t, const char *system, const char *name,
                         struct format **ret);

/* Every event as "system:name", sorted, NULL-terminated (caller owns,
 * strv_free()). */
int tracefs_list_events(const struct tracefs *t, char ***ret);

/* ---- format.c: the format file parser ------------------------------- */

enum field_kind {
        FIELD_INT,        /* integer; width and sign from the declared type */
        FIELD_BOOL,
        FIELD_POINTER,    /* any "T *": shown as a hex string */
        FIELD_CHARS,      /* char[N]: a string, NUL-terminated within N */
        FIELD_ARRAY,      /* T[N] of integers (u8 addr[16], unsigned long args[6]) */
        FIELD_DYN_STRING, /* __data_loc/__rel_loc char[], and "char buf[]" (rest of record) */
        FIELD_DYN_ARRAY,  /* __data_loc/__rel_loc T[], and "T buf[]" (rest of record) */
        _FIELD_KIND_MAX,
};

struct format_field {
        char *name;
        char *type;          /* declared type as the kernel wrote it: "__data_loc char[]" */
        uint32_t offset;
        uint32_t size;       /* slot size; for dynamic fields the 4-byte locator */
        bool is_signed;      /* the kernel's signed: (false when the file has none) */
        bool common;         /* common_* header field */
        bool rel;            /* __rel_loc: offset counts from the end of the locator */
        bool flex;           /* "T name[]" with size 0: data runs to the end of the record */
        enum field_kind kind;
        uint8_t elem_size;   /* INT: value width (1,2,4,8); arrays: element width */
        bool elem_signed;    /* INT and arrays: sign of the value, from the declared type */
};

/* ---- printfmt.c: names from the format's print fmt ------------------ */

/* What one piece of a field's name is made of. */
enum symbol_kind {
        SYMBOL_EMPTY,        /* prints nothing */
        SYMBOL_STRING,       /* a fixed string: the "R" of "... ? __print_flags(...) : \"R\"" */
        SYMBOL_VALUES,       /* __print_symbolic(): the name of the one value that matches */
        SYMBOL_FLAGS,        /* __print_flags(): the names of the bits set, joined by delim */
};

struct symbol_entry {
        uint64_t value;
        char *name;
        size_t name_len;     /* strlen(name), so the hot path need not */
};

/* One helper (or string) applied to ((value >> shift) & mask). */
struct symbol_expr {
        enum symbol_kind kind;
        uint8_t shift;
        uint64_t mask;
        char *string;        /* SYMBOL_STRING: the string; SYMBOL_FLAGS: the delimiter */
        size_t string_len;
        struct symbol_entry *entries;
        size_t n_entries;
};

/* One step of a test that is more than a mask: a stack program over the
 * field's value (btrfs: "(REC->root_objectid >= -9ULL ||
 * (REC->root_objectid >= 1ULL && REC->root_objectid <= 8ULL)) ? ..."). */
enum symbol_op_code {
        SYMBOL_OP_CONST,     /* push arg */
        SYMBOL_OP_VALUE,     /* push the field's value */
        SYMBOL_OP_UNARY,     /* arg: '-', '~', '!' */
        SYMBOL_OP_BINARY,    /* arg: the operator, as printfmt.c codes it */
};

struct symbol_op {
        enum symbol_op_code code;
        uint64_t arg;
};

#define SYMBOL_OPS_MAX 64
#define SYMBOL_STACK_MAX 16

/* One print fmt argument about the field: EXPR, or, when it is a
 * conditional ("COND ? A : B"), A when the test holds, else B. The test
 * is ((value >> test_shift) & test_mask) != 0, or, with test_ops, that
 * program's result != 0 (compared signed when the field is). */
struct symbol_part {
        bool has_test;
        uint8_t test_shift;
        uint64_t test_mask;
        struct symbol_op *test_ops;
        size_t n_test_ops;
        bool test_signed;
        struct symbol_expr then, otherwise;
};

/* The name(s) of one field: its parts' outputs, concatenated in the order
 * of the print fmt's arguments (sched_switch's prev_state is "%s%s": the
 * state letters, then "+" for a preempted task). */
struct field_symbols {
        size_t field;        /* index into format->fields */
        struct symbol_part *parts;
        size_t n_parts;
        size_t name_max;     /* longest name symbols_name() can give, in bytes */
};

struct format {
        char *system;
        char *name;
        uint32_t id;
        struct format_field *fields;
        size_t n_fields;
        size_t n_common;     /* fields[0..n_common) are the common_* ones */
        uint32_t min_size;   /* a record shorter than this is malformed */
        /* From the print fmt (printfmt.c), in field order. */
        struct field_symbols *symbols;
        size_t n_symbols;
        /* Helpers the print fmt calls that give no names here: a
         * __print_symbolic()/__print_flags() whose value or table is not a
         * field and constants, and calls of functions printfmt.c does not
         * know (jiffies_to_msecs()). Their fields stay numbers. */
        unsigned print_unknown;
        /* The print fmt was not the C expression list it should be (or was
         * missing): no names at all. */
        bool print_bad;
};

/* Parses the text of a format file. SYSTEM names the event's group (the
 * text itself only holds the name). -EINVAL on text that is not a format
 * file. The caller owns *ret. */
int format_parse(const char *text, const char *system, struct format **ret);
struct format *format_free(struct format *f);
const char *field_kind_to_string(enum field_kind k);
/* The field of F named NAME, or NULL. */
const struct format_field *format_field_find(const struct format *f, const char *name);

/* Parses TEXT, the print fmt (what follows "print fmt:"), into F's
 * symbols, print_unknown and print_bad. Never fails on what the text says
 * (a part it cannot read is counted in print_unknown, a text it cannot
 * read at all sets print_bad); -ENOMEM only. format_parse() calls it. */
int printfmt_parse(struct format *f, const char *text);
/* Frees what printfmt_parse() put into F. */
void format_symbols_free(struct format *f);
/* The symbols of field number FIELD of F, or NULL. */
const struct field_symbols *format_symbols_find(const struct format *f, size_t field);

/* No field's name is longer (printfmt.c counts a table that could give
 * more as unknown). */
#define SYMBOLS_NAME_MAX 4096

/* The operator of a SYMBOL_OP_UNARY/BINARY step as C writes it ("<=",
 * "&&"), for the schema line. */
const char *symbol_op_name(uint64_t arg);

/* Writes the name of VALUE by S into BUF (SIZE >= S->name_max bytes; no
 * NUL) and returns its length. Table lookups only: no allocation. A value
 * __print_symbolic() has no name for, and bits __print_flags() names none
 * of, are written as perf script writes them: "0x" and lower-case hex. */
size_t symbols_name(const struct field_symbols *s, uint64_t value, char *buf, size_t size);

DEFINE_TRIVIAL_CLEANUP_FUNC(struct tracefs *, tracefs_free);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct format *, format_free);

/* ---- decode.c: one field of one record ------------------------------ */

struct field_value {
        enum field_kind kind;
        union {
                int64_t i;              /* FIELD_INT with elem_signed */
                uint64_t u;             /* FIELD_INT unsigned, FIELD_POINTER */
                bool b;                 /* FIELD_BOOL */
                struct {
                        const char *ptr;
                        size_t len;     /* bytes before the first NUL (or the end) */
                } str;                  /* FIELD_CHARS, FIELD_DYN_STRING */
                struct {
                        const void *ptr; /* unaligned: read with field_array_get() */
                        size_t count;
                } arr;                  /* FIELD_ARRAY, FIELD_DYN_ARRAY */
        };
};

/* Decodes field F of the raw record REC (SIZE bytes, the PERF_SAMPLE_RAW
 * payload). Pointers in *ret point into REC. -EBADMSG when the field, or
 * the data a locator points at, lies outside the record. Never reads out
 * of bounds. */
int field_decode(const struct format_field *f, const void *rec, size_t size, struct field_value *ret);

/* Element I of an array value of field F, sign-extended by elem_signed. */
int64_t field_array_get(const struct format_field *f, const struct field_value *v, size_t i);

/* Dynamic probes (probe.c, elf.c): include/evmon/probe.h. */
