/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linefilter.h"
#include "subscription.h"
#include "evmon/error.h"
#include "evmon/monitor.h"

static const char *const common_names[] = {
        [LINEFILTER_PID] = "pid",
        [LINEFILTER_TID] = "tid",
        [LINEFILTER_CPU] = "cpu",
        [LINEFILTER_COMM] = "comm",
        [LINEFILTER_CGROUP] = "cgroup",
        [LINEFILTER_CONTAINER] = "container",
};

struct parser {
        const char *text, *p;
        struct linefilter *f;
        unsigned leaves, depth;
        char **error;
};

static int parse_fail(struct parser *ps, const char *what) {
        return error_set(ps->error, -EINVAL, "filter: %s at offset %zu of \"%s\"", what, (size_t) (ps->p - ps->text),
                         ps->text);
}

static void skip_space(struct parser *ps) {
        while (*ps->p == ' ' || *ps->p == '\t')
                ps->p++;
}

static int node_new(struct parser *ps, struct linefilter_node **ret, unsigned *ret_i) {
        struct linefilter_node *n = reallocarray(ps->f->nodes, ps->f->n_nodes + 1, sizeof(*n));

        if (!n)
                return -ENOMEM;
        ps->f->nodes = n;
        n[ps->f->n_nodes] = (struct linefilter_node) {};
        *ret_i = (unsigned) ps->f->n_nodes++;
        *ret = &n[*ret_i];
        return 0;
}

static bool is_key_char(char c, bool first) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
               (!first && ((c >= '0' && c <= '9') || c == ':' || c == '.'));
}

/* A number as the whole of S: decimal, 0x hex, a leading '-'. */
static bool parse_number(const char *s, int64_t *ret) {
        char *end;
        bool neg = *s == '-';
        unsigned long long v;

        if (!*s || (neg && !s[1]))
                return false;
        errno = 0;
        v = strtoull(s + neg, &end, 0);
        if (errno != 0 || *end || end == s + neg || (s[neg] < '0' || s[neg] > '9'))
                return false;
        /* Beyond INT64_MAX: as the kernel's u64 fields hold it. A
         * negative one must fit (-2^63 is the least; negating it as an
         * int64_t would overflow). */
        if (neg && v > (UINT64_C(1) << 63))
                return false;
        *ret = neg ? (v == (UINT64_C(1) << 63) ? INT64_MIN : -(int64_t) v) : (int64_t) v;
        return true;
}

static int parse_value(struct parser *ps, struct linefilter_node *n) {
        const char *start;
        size_t len;

        skip_space(ps);
        if (*ps->p == '"') {
                char *out;
                size_t k = 0;

                ps->p++;
                start = ps->p;
                while (*ps->p && *ps->p != '"')
                        ps->p += ps->p[0] == '\\' && ps->p[1] ? 2 : 1;
                if (*ps->p != '"')
                        return parse_fail(ps, "a string without its closing '\"'");
                out = malloc((size_t) (ps->p - start) + 1);
                if (!out)
                        return -ENOMEM;
                for (const char *q = start; q < ps->p; q++)
                        out[k++] = *q == '\\' ? *++q : *q;
                out[k] = 0;
                n->str = out;
                ps->p++;
                return 0;       /* quoted: a string, even "12" */
        }
        start = ps->p;
        while (*ps->p && *ps->p != ' ' && *ps->p != '\t' && *ps->p != ')' && *ps->p != '&' && *ps->p != '|')
                ps->p++;
        len = (size_t) (ps->p - start);
        if (len == 0)
                return parse_fail(ps, "a value expected (a number or a string)");
        n->str = strndup(start, len);
        if (!n->str)
                return -ENOMEM;
        n->is_num = parse_number(n->str, &n->num);
        return 0;
}

static int parse_leaf(struct parser *ps, unsigned *ret);
static int parse_or(struct parser *ps, unsigned *ret);

static int parse_leaf(struct parser *ps, unsigned *ret) {
        static const struct {
                const char *s;
                enum linefilter_op op;
        } ops[] = {
                { "==", LINEFILTER_EQ }, { "!=", LINEFILTER_NE }, { "<=", LINEFILTER_LE }, { ">=", LINEFILTER_GE },
                { "<", LINEFILTER_LT },  { ">", LINEFILTER_GT },  { "~", LINEFILTER_GLOB },
        };
        struct linefilter_node *n;
        const char *start;
        size_t k;
        int r;

        skip_space(ps);
        if (*ps->p == '(') {
                if (++ps->depth > LINEFILTER_DEPTH_MAX)
                        return parse_fail(ps, "nested deeper than 16 parentheses");
                ps->p++;
                r = parse_or(ps, ret);
                if (r < 0)
                        return r;
                skip_space(ps);
                if (*ps->p != ')')
                        return parse_fail(ps, "')' expected");
                ps->p++;
                ps->depth--;
                return 0;
        }
        if (++ps->leaves > LINEFILTER_LEAVES_MAX)
                return parse_fail(ps, "more than 32 comparisons");
        start = ps->p;
        if (!is_key_char(*ps->p, true))
                return parse_fail(ps, "a field name expected (`evmonctl describe EVENT` lists them; or pid, tid, "
                                      "cpu, comm, cgroup, container)");
        while (is_key_char(*ps->p, false))
                ps->p++;
        r = node_new(ps, &n, ret);
        if (r < 0)
                return r;
        n->type = LINEFILTER_LEAF;
        if ((size_t) (ps->p - start) > 6 && strncmp(start, "field:", 6) == 0) {
                n->field_only = true;
                start += 6;
        }
        n->key = strndup(start, (size_t) (ps->p - start));
        if (!n->key)
                return -ENOMEM;
        for (size_t i = 1; !n->field_only && i < sizeof(common_names) / sizeof(common_names[0]); i++)
                if (strcmp(n->key, common_names[i]) == 0)
                        n->common = (enum linefilter_common) i;
        skip_space(ps);
        for (k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
                if (strncmp(ps->p, ops[k].s, strlen(ops[k].s)) == 0)
                        break;
        if (k == sizeof(ops) / sizeof(ops[0]))
                return parse_fail(ps, "an operator expected (== != < <= > >= ~)");
        n->op = ops[k].op;
        ps->p += strlen(ops[k].s);
        r = parse_value(ps, n);
        if (r < 0)
                return r;
        if (n->op == LINEFILTER_GLOB && n->is_num)
                n->is_num = false;      /* ~ compares strings: "12*" and 12 alike */
        return 0;
}

/* LEFT OP RIGHT for OP "&&" (AND) or "||" (OR), left to right. */
static int parse_chain(struct parser *ps, unsigned *ret, int (*operand)(struct parser *, unsigned *),
                       const char *sym, int type) {
        unsigned left, right, i;
        struct linefilter_node *n;
        int r;

        r = operand(ps, &left);
        if (r < 0)
                return r;
        for (;;) {
                skip_space(ps);
                if (strncmp(ps->p, sym, 2) != 0)
                        break;
                ps->p += 2;
                r = operand(ps, &right);
                if (r < 0)
                        return r;
                r = node_new(ps, &n, &i);
                if (r < 0)
                        return r;
                n->type = type;
                n->a = left;
                n->b = right;
                left = i;
        }
        *ret = left;
        return 0;
}

static int parse_and(struct parser *ps, unsigned *ret) {
        return parse_chain(ps, ret, parse_leaf, "&&", LINEFILTER_AND);
}

static int parse_or(struct parser *ps, unsigned *ret) {
        return parse_chain(ps, ret, parse_and, "||", LINEFILTER_OR);
}

struct linefilter *linefilter_free(struct linefilter *f) {
        if (!f)
                return NULL;
        for (size_t i = 0; i < f->n_nodes; i++) {
                free(f->nodes[i].key);
                free(f->nodes[i].str);
        }
        free(f->nodes);
        free(f->text);
        free(f);
        return NULL;
}

int linefilter_parse(const char *text, struct linefilter **ret, char **ret_error) {
        _cleanup_(linefilter_freep) struct linefilter *f = NULL;
        struct parser ps = { .text = text, .p = text, .error = ret_error };
        int r;

        if (strlen(text) > LINEFILTER_TEXT_MAX)
                return error_set(ret_error, -EINVAL, "filter: %zu bytes long, at most %u are taken", strlen(text),
                                 LINEFILTER_TEXT_MAX);
        f = calloc(1, sizeof(*f));
        if (!f || !(f->text = strdup(text)))
                return -ENOMEM;
        ps.f = f;
        r = parse_or(&ps, &f->root);
        if (r < 0)
                return r;
        skip_space(&ps);
        if (*ps.p)
                return parse_fail(&ps, "\"&&\", \"||\" or the end expected");
        *ret = TAKE_PTR(f);
        return 0;
}

/* Whether some format of FMTS has a field KEY, and whether it is numeric
 * in the first that has it. */
static const struct format_field *find_field(const struct format *const *fmts, size_t n, const char *key) {
        for (size_t i = 0; i < n; i++) {
                const struct format_field *x = fmts[i] ? format_field_find(fmts[i], key) : NULL;

                if (x)
                        return x;
        }
        return NULL;
}

static bool kind_is_num(enum field_kind k) {
        return k == FIELD_INT || k == FIELD_BOOL || k == FIELD_POINTER;
}

int linefilter_check(const struct linefilter *f, const struct format *const *fmts, size_t n, char **ret_error) {
        for (size_t i = 0; i < f->n_nodes; i++) {
                const struct linefilter_node *x = &f->nodes[i];
                const struct format_field *fld;

                if (x->type != LINEFILTER_LEAF)
                        continue;
                fld = find_field(fmts, n, x->key);
                if (!fld && x->common == LINEFILTER_NONE)
                        return error_set(ret_error, -EINVAL,
                                         "filter: no event of this subscription has a field \"%s\" (`evmonctl describe "
                                         "EVENT` lists the fields; pid, tid, cpu, comm, cgroup and container are on "
                                         "every line)", x->key);
                if (fld ? kind_is_num(fld->kind) && !x->is_num && x->op != LINEFILTER_GLOB
                        : (x->common != LINEFILTER_COMM && x->common != LINEFILTER_CONTAINER && !x->is_num))
                        return error_set(ret_error, -EINVAL, "filter: \"%s\" is a number; \"%s\" is not one",
                                         x->key, x->str);
                if (x->op == LINEFILTER_GLOB && (fld ? kind_is_num(fld->kind)
                                                     : x->common != LINEFILTER_COMM && x->common != LINEFILTER_CONTAINER))
                        return error_set(ret_error, -EINVAL, "filter: \"~\" takes a string field; \"%s\" is a number",
                                         x->key);
        }
        return 0;
}

static bool cmp_num(enum linefilter_op op, int64_t v, bool is_signed, int64_t want) {
        int c;

        if (is_signed)
                c = v < want ? -1 : v > want;
        else
                c = (uint64_t) v < (uint64_t) want ? -1 : (uint64_t) v > (uint64_t) want;
        switch (op) {
        case LINEFILTER_EQ: return c == 0;
        case LINEFILTER_NE: return c != 0;
        case LINEFILTER_LT: return c < 0;
        case LINEFILTER_LE: return c <= 0;
        case LINEFILTER_GT: return c > 0;
        case LINEFILTER_GE: return c >= 0;
        default: return false;
        }
}

/* S (LEN bytes, not NUL-terminated) against the leaf's string. */
static bool cmp_str(const struct linefilter_node *x, const char *s, size_t len) {
        char buf[256];

        switch (x->op) {
        case LINEFILTER_EQ:
        case LINEFILTER_NE: {
                bool eq = strlen(x->str) == len && memcmp(x->str, s, len) == 0;
                return x->op == LINEFILTER_EQ ? eq : !eq;
        }
        case LINEFILTER_GLOB:
                /* fnmatch wants a C string: longer strings (paths) are
                 * matched on their first 255 bytes. */
                if (len >= sizeof(buf))
                        len = sizeof(buf) - 1;
                memcpy(buf, s, len);
                buf[len] = 0;
                return fnmatch(x->str, buf, 0) == 0;
        default:
                return false;
        }
}

static bool leaf_matches(const struct linefilter_node *x, const struct line_meta *m) {
        const struct perf_sample *s = m->sample;
        const struct format_field *fld = NULL;
        struct field_value v;

        /* The event's field first, as the kernel's filter reads a name. */
        fld = m->format && s && s->raw.data ? format_field_find(m->format, x->key) : NULL;
        if (fld) {
                if (field_decode(fld, s->raw.data, s->raw.size, &v) < 0)
                        return false;
                switch (v.kind) {
                case FIELD_INT:
                        return x->is_num && cmp_num(x->op, v.i, fld->elem_signed, x->num);
                case FIELD_BOOL:
                        return x->is_num && cmp_num(x->op, v.b, true, x->num);
                case FIELD_POINTER:
                        return x->is_num && cmp_num(x->op, (int64_t) v.u, false, x->num);
                case FIELD_CHARS:
                case FIELD_DYN_STRING:
                        return cmp_str(x, v.str.ptr, v.str.len);
                default:
                        return false;
                }
        }
        switch (x->common) {
        case LINEFILTER_PID:
                return x->is_num && cmp_num(x->op, m->pid, true, x->num);
        case LINEFILTER_TID:
                return x->is_num && s && cmp_num(x->op, s->tid, true, x->num);
        case LINEFILTER_CPU:
                return x->is_num && s && cmp_num(x->op, s->cpu, true, x->num);
        case LINEFILTER_CGROUP:
                return x->is_num && m->cgroup && cmp_num(x->op, (int64_t) m->cgroup, false, x->num);
        case LINEFILTER_COMM:
                /* Unknown context matches nothing, != included: never guessed. */
                return m->comm && cmp_str(x, m->comm, strlen(m->comm));
        case LINEFILTER_CONTAINER:
                return m->container && cmp_str(x, m->container, strlen(m->container));
        default:
                return false;
        }
}

/* Iterative over the node tree would need a stack; its depth is bounded
 * (LINEFILTER_DEPTH_MAX parentheses, LINEFILTER_LEAVES_MAX leaves). */
static bool node_matches(const struct linefilter *f, unsigned i, const struct line_meta *m) {
        const struct linefilter_node *x = &f->nodes[i];

        switch (x->type) {
        case LINEFILTER_AND:
                return node_matches(f, x->a, m) && node_matches(f, x->b, m);
        case LINEFILTER_OR:
                return node_matches(f, x->a, m) || node_matches(f, x->b, m);
        default:
                return leaf_matches(x, m);
        }
}

bool linefilter_matches(const struct linefilter *f, const struct line_meta *m) {
        if (!m->sample)
                return true;
        return node_matches(f, f->root, m);
}
