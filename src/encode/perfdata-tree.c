/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The header line and perf's own records of a perf.data file as JSON:
 * the value trees of src/monitor/perfdata*.c written out node by node,
 * after one pass that bounds the size (jbuf_reserve once, then the
 * unchecked json_put_*() writes, as sample.c and record.c do). */

#include <errno.h>
#include <math.h>
#include <stdio.h>

#include "evmon/encode-perfdata.h"
#include "evmon/protocol.h"
#include "writer.h"

/* Punctuation around one member: ',' '"' '"' ':' and brackets. */
#define NODE_OVERHEAD 8
#define NUMBER_MAX 32

static size_t node_max(const struct perfdata_node *n) {
        size_t m = NODE_OVERHEAD + (n->key ? json_escaped_max(strlen(n->key)) : 0);

        switch (n->kind) {
        case PERFDATA_NODE_STRING:
                return m + json_escaped_max(n->s.len);
        case PERFDATA_NODE_BYTES:
                return m + 2 * n->s.len + 2;
        default:
                return m + NUMBER_MAX;
        }
}

static size_t tree_max(const struct perfdata_tree *t) {
        size_t m = 0;

        for (size_t i = 0; i < t->n; i++)
                m += node_max(&t->nodes[i]);
        return m;
}

static char *put_node(char *p, const struct perfdata_node *nodes, uint32_t i);

/* The members (or elements) of node I, without the brackets. */
static char *put_children(char *p, const struct perfdata_node *nodes, uint32_t i, bool first) {
        for (uint32_t c = nodes[i].child; c; c = nodes[c].next) {
                if (!first)
                        *p++ = ',';
                first = false;
                if (nodes[c].key) {
                        p = json_put_cstr(p, nodes[c].key);
                        *p++ = ':';
                }
                p = put_node(p, nodes, c);
        }
        return p;
}

static char *put_node(char *p, const struct perfdata_node *nodes, uint32_t i) {
        const struct perfdata_node *n = &nodes[i];
        char num[NUMBER_MAX];

        switch (n->kind) {
        case PERFDATA_NODE_OBJECT:
                *p++ = '{';
                p = put_children(p, nodes, i, true);
                *p++ = '}';
                return p;
        case PERFDATA_NODE_ARRAY:
                *p++ = '[';
                p = put_children(p, nodes, i, true);
                *p++ = ']';
                return p;
        case PERFDATA_NODE_U64:
                return json_put_u64(p, n->u);
        case PERFDATA_NODE_S64:
                return json_put_i64(p, n->i);
        case PERFDATA_NODE_HEX:
                return json_put_hex(p, n->u);
        case PERFDATA_NODE_STRING:
                return json_put_string(p, n->s.p, n->s.len);
        case PERFDATA_NODE_BYTES:
                return json_put_hexbytes(p, n->s.p, n->s.len);
        case PERFDATA_NODE_BOOL:
                return json_put_bool(p, n->b);
        case PERFDATA_NODE_DOUBLE:
                if (!isfinite(n->d))
                        return json_put_literal(p, "null");
                snprintf(num, sizeof(num), "%.17g", n->d);
                return json_put_bytes(p, num, strlen(num));
        }
        return p;
}

int encode_perfdata_header(struct jbuf *b, const struct perfdata *pd) {
        struct perfdata_tree t = perfdata_header(pd);
        char *p;
        int r;

        if (!b || !pd || !t.nodes)
                return -EINVAL;
        r = jbuf_reserve(b, 32 + tree_max(&t));
        if (r < 0)
                return r;
        p = jbuf_end(b);
        p = json_put_literal(p, "{\"type\":\"" EVMON_LINE_HEADER "\"");
        p = put_children(p, t.nodes, 0, false);
        p = json_put_literal(p, "}\n");
        jbuf_set_end(b, p);
        return 0;
}

int encode_perfdata_user(struct jbuf *b, const struct perfdata_record *pr) {
        const char *name;
        size_t len;
        char *p;
        int r;

        if (!b || !pr || pr->rec.type < PERFDATA_RECORD_USER_TYPE_START)
                return -EINVAL;
        name = perfdata_record_type_to_string(pr->rec.type);
        if (!name)
                name = "unknown";
        len = strlen(name);
        r = jbuf_reserve(b, 96 + json_escaped_max(len) + (pr->user.nodes ? tree_max(&pr->user) : 0));
        if (r < 0)
                return r;
        p = jbuf_end(b);
        p = json_put_literal(p, "{\"type\":\"" EVMON_LINE_RECORD "\",\"record\":\"");
        for (size_t i = 0; i < len; i++)
                *p++ = (char) (name[i] >= 'A' && name[i] <= 'Z' ? name[i] - 'A' + 'a' : name[i]);
        p = json_put_literal(p, "\",\"fields\":");
        if (pr->user.nodes)
                p = put_node(p, pr->user.nodes, 0);
        else
                p = json_put_literal(p, "{}");
        p = json_put_literal(p, "}\n");
        jbuf_set_end(b, p);
        return 0;
}
