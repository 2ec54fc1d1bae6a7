/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Value trees: the header line's and perf's own records' fields as a
 * flat array of nodes (perfdata_tree), built by the decoders of
 * perfdata-header.c and perfdata-feature.c; and perf's length-prefixed
 * string; and the helpers that read a value from a cursor into the
 * tree. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perfdata-int.h"

void tree_reset(struct tree *t) {
        t->n = 0;
        t->oom = false;
}

void tree_done(struct tree *t) {
        free(t->nodes);
        free(t->last);
        *t = (struct tree) {};
}

uint32_t tree_add(struct tree *t, uint32_t parent, const char *key, enum perfdata_node_kind kind) {
        uint32_t i;

        if (t->n > 0 && parent == 0 && t->oom)
                return 0;
        if (t->n == t->cap) {
                size_t cap = t->cap ? t->cap * 2 : 64;
                struct perfdata_node *n;
                uint32_t *l;

                if (cap > UINT32_MAX) {
                        t->oom = true;
                        return 0;
                }
                n = realloc(t->nodes, cap * sizeof(*n));
                if (!n) {
                        t->oom = true;
                        return 0;
                }
                t->nodes = n;
                l = realloc(t->last, cap * sizeof(*l));
                if (!l) {
                        t->oom = true;
                        return 0;
                }
                t->last = l;
                t->cap = cap;
        }
        i = (uint32_t) t->n++;
        t->nodes[i] = (struct perfdata_node) { .key = key, .kind = kind };
        t->last[i] = 0;
        if (i == 0)
                return 0;               /* the root */
        if (t->last[parent])
                t->nodes[t->last[parent]].next = i;
        else
                t->nodes[parent].child = i;
        t->last[parent] = i;
        return i;
}

void tree_u64(struct tree *t, uint32_t parent, const char *key, uint64_t v) {
        uint32_t i = tree_add(t, parent, key, PERFDATA_NODE_U64);

        if (i)
                t->nodes[i].u = v;
}

void tree_s64(struct tree *t, uint32_t parent, const char *key, int64_t v) {
        uint32_t i = tree_add(t, parent, key, PERFDATA_NODE_S64);

        if (i)
                t->nodes[i].i = v;
}

void tree_hex(struct tree *t, uint32_t parent, const char *key, uint64_t v) {
        uint32_t i = tree_add(t, parent, key, PERFDATA_NODE_HEX);

        if (i)
                t->nodes[i].u = v;
}

void tree_bool(struct tree *t, uint32_t parent, const char *key, bool v) {
        uint32_t i = tree_add(t, parent, key, PERFDATA_NODE_BOOL);

        if (i)
                t->nodes[i].b = v;
}

void tree_double(struct tree *t, uint32_t parent, const char *key, double v) {
        uint32_t i = tree_add(t, parent, key, PERFDATA_NODE_DOUBLE);

        if (i)
                t->nodes[i].d = v;
}

void tree_str(struct tree *t, uint32_t parent, const char *key, const void *p, size_t len) {
        uint32_t i = tree_add(t, parent, key, PERFDATA_NODE_STRING);

        if (i) {
                t->nodes[i].s.p = p;
                t->nodes[i].s.len = strnlen(p, len);
        }
}

void tree_bytes(struct tree *t, uint32_t parent, const char *key, const void *p, size_t len) {
        uint32_t i = tree_add(t, parent, key, PERFDATA_NODE_BYTES);

        if (i) {
                t->nodes[i].s.p = p;
                t->nodes[i].s.len = len;
        }
}

struct perfdata_tree tree_get(const struct tree *t) {
        if (t->n == 0)
                return (struct perfdata_tree) {};
        return (struct perfdata_tree) { .nodes = t->nodes, .n = t->n };
}

int pcur_perf_string(struct pcur *c, const char **ret, size_t *ret_len) {
        const void *p;
        uint32_t len;
        int r;

        r = pcur_u32(c, &len);
        if (r >= 0)
                r = cursor_take(&c->c, len, &p);
        if (r < 0)
                return r;
        *ret = p;
        *ret_len = len;
        return 0;
}

/* ---- cursor values into the tree ---------------------------------------- */

/* A perf string straight into the tree. */
int put_string(struct tree *t, uint32_t parent, const char *key, struct pcur *c) {
        const char *s;
        size_t len;
        int r;

        r = pcur_perf_string(c, &s, &len);
        if (r < 0)
                return r;
        tree_str(t, parent, key, s, len);
        return 0;
}

int put_u32(struct tree *t, uint32_t parent, const char *key, struct pcur *c) {
        uint32_t v;
        int r = pcur_u32(c, &v);

        if (r >= 0)
                tree_u64(t, parent, key, v);
        return r;
}

/* A u32 that perf declares signed (cpu, pid: -1 is "any"). */
int put_s32(struct tree *t, uint32_t parent, const char *key, struct pcur *c) {
        uint32_t v;
        int r = pcur_u32(c, &v);

        if (r >= 0)
                tree_s64(t, parent, key, (int32_t) v);
        return r;
}

int put_hex64(struct tree *t, uint32_t parent, const char *key, struct pcur *c) {
        uint64_t v;
        int r = pcur_u64(c, &v);

        if (r >= 0)
                tree_hex(t, parent, key, v);
        return r;
}

int put_u64(struct tree *t, uint32_t parent, const char *key, struct pcur *c) {
        uint64_t v;
        int r = pcur_u64(c, &v);

        if (r >= 0)
                tree_u64(t, parent, key, v);
        return r;
}

/* A u32 count of things of at least MIN bytes each, checked against what
 * is left so that a corrupt count cannot make us loop for long. */
int get_count32(struct pcur *c, size_t min, uint32_t *ret) {
        int r = pcur_u32(c, ret);

        if (r < 0)
                return r;
        if (min > 0 && *ret > cursor_left(&c->c) / min)
                return -EBADMSG;
        return 0;
}

int get_count64(struct pcur *c, size_t min, uint64_t *ret) {
        int r = pcur_u64(c, ret);

        if (r < 0)
                return r;
        if (min > 0 && *ret > cursor_left(&c->c) / min)
                return -EBADMSG;
        return 0;
}

/* u32 nr, then nr perf strings, as an array. */
int put_string_list(struct tree *t, uint32_t parent, const char *key, struct pcur *c) {
        uint32_t nr, a;
        int r;

        r = get_count32(c, 4, &nr);
        if (r < 0)
                return r;
        a = tree_add(t, parent, key, PERFDATA_NODE_ARRAY);
        for (uint32_t i = 0; i < nr; i++) {
                r = put_string(t, a, NULL, c);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int put_s64(struct tree *t, uint32_t parent, const char *key, struct pcur *c) {
        uint64_t v;
        int r = pcur_u64(c, &v);

        if (r >= 0)
                tree_s64(t, parent, key, (int64_t) v);
        return r;
}

int put_fields(struct tree *t, uint32_t o, struct pcur *c, const struct field_spec *f, size_t n) {
        int r = 0;

        for (size_t i = 0; i < n && r >= 0; i++)
                switch (f[i].kind) {
                case F_U32:
                        r = put_u32(t, o, f[i].key, c);
                        break;
                case F_S32:
                        r = put_s32(t, o, f[i].key, c);
                        break;
                case F_U64:
                        r = put_u64(t, o, f[i].key, c);
                        break;
                case F_S64:
                        r = put_s64(t, o, f[i].key, c);
                        break;
                case F_HEX64:
                        r = put_hex64(t, o, f[i].key, c);
                        break;
                case F_STR:
                        r = put_string(t, o, f[i].key, c);
                        break;
                }
        return r;
}

/* u32 nr, then nr elements of fields F (each at least MIN bytes), as an
 * array of objects under KEY. */
int put_list(struct tree *t, uint32_t parent, const char *key, struct pcur *c, size_t min,
             const struct field_spec *f, size_t n) {
        uint32_t nr, a;
        int r;

        r = get_count32(c, min, &nr);
        if (r < 0)
                return r;
        a = tree_add(t, parent, key, PERFDATA_NODE_ARRAY);
        for (uint32_t i = 0; i < nr; i++) {
                r = put_fields(t, tree_add(t, a, NULL, PERFDATA_NODE_OBJECT), c, f, n);
                if (r < 0)
                        return r;
        }
        return 0;
}
