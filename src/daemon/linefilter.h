/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A subscription's own filter (subscribe's "filter", `evmonctl watch
 * --filter`): the kernel's filter grammar, a subset, evaluated in evmond
 * on each line one client could get. The kernel's filter is the event's,
 * shared by every client, so it cannot narrow one client's lines.
 *
 *   EXPR := TERM { "||" TERM }      TERM := LEAF { "&&" LEAF }
 *   LEAF := "(" EXPR ")" | KEY OP VALUE
 *   OP   := == != < <= > >= ~      (~: fnmatch(3) glob, strings only)
 *
 * KEY is a field of the event (its format, as `evmonctl describe` lists
 * them; "field:NAME" says so explicitly) or, for an event without that
 * field, one of the keys every line has: pid, tid, cpu, comm, cgroup (its
 * id), container (as the aggregate request names them, aggregate.h).
 * VALUE is a number (decimal, 0x hex, negative) or a string, "quoted"
 * with \" and \\ escapes or a bare word. Evaluation reads the sample in
 * place: no allocation. A leaf whose key the line lacks, or whose value
 * is unknown (a process evmond has no context for), is false; so is one
 * comparing a string with a number. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "evmon/cleanup.h"
#include "evmon/tracefs.h"

struct line_meta;

/* The longest filter text, its most leaves and nesting: each leaf is
 * tried on every line the client could get. */
#define LINEFILTER_TEXT_MAX 1024u
#define LINEFILTER_LEAVES_MAX 32u
#define LINEFILTER_DEPTH_MAX 16u

enum linefilter_common {
        LINEFILTER_NONE,        /* not a common key: a field only */
        LINEFILTER_PID,
        LINEFILTER_TID,
        LINEFILTER_CPU,
        LINEFILTER_COMM,
        LINEFILTER_CGROUP,
        LINEFILTER_CONTAINER,
};

enum linefilter_op {
        LINEFILTER_EQ,
        LINEFILTER_NE,
        LINEFILTER_LT,
        LINEFILTER_LE,
        LINEFILTER_GT,
        LINEFILTER_GE,
        LINEFILTER_GLOB,
};

struct linefilter_node {
        enum { LINEFILTER_AND, LINEFILTER_OR, LINEFILTER_LEAF } type;
        unsigned a, b;                /* AND, OR: the operands' nodes */
        /* LEAF */
        char *key;                    /* the field's name ("field:" taken off) */
        bool field_only;              /* written "field:NAME" */
        enum linefilter_common common;
        enum linefilter_op op;
        char *str;                    /* VALUE as written (unquoted) */
        bool is_num;                  /* VALUE is a number: NUM */
        int64_t num;
};

struct linefilter {
        struct linefilter_node *nodes;
        size_t n_nodes;
        unsigned root;
        char *text;                   /* as the client wrote it */
};

/* Parses TEXT into *RET. -EINVAL with *RET_ERROR saying where, -ENOMEM. */
int linefilter_parse(const char *text, struct linefilter **ret, char **ret_error);
struct linefilter *linefilter_free(struct linefilter *f);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct linefilter *, linefilter_free);

/* Checks F against the formats of the events a subscription takes (FMTS,
 * N; NULL entries: events without fields): each key must be a common key
 * or a field of one of them, and a numeric field's VALUE a number.
 * -EINVAL with *RET_ERROR naming the key. */
int linefilter_check(const struct linefilter *f, const struct format *const *fmts, size_t n, char **ret_error);

/* Whether the line M (its sample and format in M) passes F. A line that
 * is no sample (a counter line, a side record) is not filtered. */
bool linefilter_matches(const struct linefilter *f, const struct line_meta *m);
