/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Names from a format's print fmt: the tables of __print_symbolic() and
 * __print_flags() (Documentation/trace/tracepoints.rst, TP_printk's
 * helpers in include/trace/stages/stage3_trace_output.h), and the
 * conditionals around them, such as sched_switch's prev_state:
 *
 *   (REC->prev_state & (MASK)) ? __print_flags(REC->prev_state & (MASK), "|",
 *       { 0x00000001, "S" }, { 0x00000002, "D" }, ...) : "R",
 *   REC->prev_state & (MAX) ? "+" : ""
 *
 * The text is read as what it is, a C expression list (the format string,
 * then one argument per conversion): tokens, then a small expression tree
 * per argument, then patterns over the trees. Each field gets the
 * arguments about it (helper calls, and the "?:" around them), compiled
 * into flat tables that symbols_name() walks per event with no
 * allocation, no parsing and no string compares.
 *
 * Why not libtraceevent (Debian's libtraceevent-dev, what perf and
 * trace-cmd use): measured on this project's 6.18 kernel (2,323 formats),
 * Debian 12's libtraceevent 1.7.1 marks 18 formats' print fmt as failed
 * (dma:dma_map_sg, kvm:kvm_inj_exception, kvmmmu:*, jbd2:*_stats,
 * maple_tree:ma_op, ...), 8 of them with __print_symbolic/__print_flags
 * tables it then cannot give, while evmon must parse every format; it
 * needs a second, full parse of every format (fields included) into its
 * own tep_handle (172-190 ms for all formats, against a few ms here, see
 * tests/tracefs/test-kernel.c); and the part we need (tables of
 * constants) is small. The hot path is ours either way: table lookups
 * in symbols_name(). */

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "evmon/cleanup.h"
#include "evmon/tracefs.h"

/* Longest name a field may produce; a table that could give more (none on
 * 6.18: the longest, kmem's gfp_flags, gives under 1 KiB) is counted as
 * unknown rather than bloating every line's reserved bound. */
#define NAME_MAX_BYTES SYMBOLS_NAME_MAX
/* Deepest expression the parser and the evaluator follow. */
#define DEPTH_MAX 256

/* ---- tokens ------------------------------------------------------------ */

enum tok_type {
        T_END,
        T_NUM,
        T_STR,
        T_IDENT,
        T_PUNCT,
};

#define OP2(a, b) ((unsigned) (a) << 8 | (unsigned) (b))

struct tok {
        enum tok_type type;
        unsigned op;            /* T_PUNCT: the char, or OP2() for two */
        bool num_ok;            /* T_NUM: a number we could read */
        uint64_t num;
        const char *s;
        size_t len;
};

struct toks {
        struct tok *v;
        size_t n, cap;
};

static int toks_add(struct toks *t, struct tok tok) {
        if (t->n == t->cap) {
                size_t n = t->cap ? t->cap * 2 : 64;
                struct tok *v = reallocarray(t->v, n, sizeof(*v));

                if (!v)
                        return -ENOMEM;
                t->v = v;
                t->cap = n;
        }
        t->v[t->n++] = tok;
        return 0;
}

static bool is_ident_start(char c) {
        return isalpha((unsigned char) c) || c == '_';
}

static bool is_ident_char(char c) {
        return isalnum((unsigned char) c) || c == '_';
}

/* Reads the number at S (LEN bytes): decimal, 0x hex or 0 octal, with any
 * u/l suffix. */
static bool number_read(const char *s, size_t len, uint64_t *ret) {
        unsigned base = 10;
        uint64_t v = 0;
        size_t i = 0;

        while (len > 0 && (s[len - 1] == 'u' || s[len - 1] == 'U' || s[len - 1] == 'l' || s[len - 1] == 'L'))
                len--;
        if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
                base = 16;
                i = 2;
                if (len == 2)
                        return false;
        } else if (len >= 2 && s[0] == '0')
                base = 8;
        for (; i < len; i++) {
                unsigned d;

                if (isdigit((unsigned char) s[i]))
                        d = (unsigned) (s[i] - '0');
                else if (isxdigit((unsigned char) s[i]))
                        d = (unsigned) (tolower((unsigned char) s[i]) - 'a' + 10);
                else
                        return false;
                if (d >= base)
                        return false;
                /* Wraps as C's unsigned long long would not; the kernel
                 * writes no such constant. */
                v = v * base + d;
        }
        *ret = v;
        return true;
}

/* Splits TEXT into tokens. -EINVAL for an unterminated string or char. */
static int tokenize(const char *text, struct toks *t) {
        const char *p = text;
        int r;

        for (;;) {
                struct tok tok = { .s = p };

                while (*p && isspace((unsigned char) *p))
                        p++;
                tok.s = p;
                if (!*p)
                        break;

                if (is_ident_start(*p)) {
                        while (is_ident_char(*p))
                                p++;
                        tok.type = T_IDENT;
                } else if (isdigit((unsigned char) *p)) {
                        while (is_ident_char(*p))
                                p++;
                        tok.type = T_NUM;
                        tok.num_ok = number_read(tok.s, (size_t) (p - tok.s), &tok.num);
                } else if (*p == '"' || *p == '\'') {
                        char q = *p++;

                        while (*p && *p != q) {
                                if (*p == '\\' && p[1])
                                        p++;
                                p++;
                        }
                        if (*p != q)
                                return -EINVAL;
                        p++;
                        if (q == '"')
                                tok.type = T_STR;
                        else {
                                /* 'c': a number; escapes other than a
                                 * plain one are not read. */
                                tok.type = T_NUM;
                                if (p - tok.s == 3) {
                                        tok.num = (unsigned char) tok.s[1];
                                        tok.num_ok = true;
                                }
                        }
                } else {
                        static const char *const two[] = { "->", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||",
                                                           "++", "--" };

                        tok.type = T_PUNCT;
                        tok.op = (unsigned char) *p;
                        for (size_t i = 0; i < ELEMENTSOF(two); i++)
                                if (p[0] == two[i][0] && p[1] == two[i][1]) {
                                        tok.op = OP2(p[0], p[1]);
                                        p++;
                                        break;
                                }
                        p++;
                }
                tok.len = (size_t) (p - tok.s);
                r = toks_add(t, tok);
                if (r < 0)
                        return r;
        }
        return toks_add(t, (struct tok) { .type = T_END, .s = p });
}

/* ---- expression trees ---------------------------------------------------- */

enum node_type {
        N_NUM,
        N_STR,          /* tok .. tok + count - 1: adjacent literals, concatenated */
        N_IDENT,
        N_FIELD,        /* REC->NAME: tok is NAME */
        N_CALL,         /* tok is the callee's name (count 0: not a plain name); kids: arguments */
        N_LIST,         /* { ... }: kids */
        N_UNARY,        /* op; kid */
        N_BIN,          /* op; kid, kid->next */
        N_COND,         /* kids: condition, then, else */
        N_CAST,         /* kid: the operand (the type is not kept) */
        N_OTHER,        /* x.y, x[y], f->g of something else: not read */
};

struct node {
        enum node_type type;
        unsigned op;
        size_t tok, count;
        int kid, next;          /* -1: none */
        bool used;              /* a helper call turned into a table */
};

struct parser {
        const struct tok *toks;
        size_t pos;
        struct node *nodes;
        size_t n_nodes, cap;
        unsigned depth;
};

static const struct tok *cur(const struct parser *p) {
        return &p->toks[p->pos];
}

static bool at_punct(const struct parser *p, unsigned op) {
        return cur(p)->type == T_PUNCT && cur(p)->op == op;
}

static bool tok_is(const struct tok *t, const char *s) {
        return t->len == strlen(s) && memcmp(t->s, s, t->len) == 0;
}

static int node_new(struct parser *p, enum node_type type, unsigned op, size_t tok) {
        /* cap is sized from the token count: every node takes a token. */
        if (p->n_nodes >= p->cap)
                return -1;
        p->nodes[p->n_nodes] = (struct node) { .type = type, .op = op, .tok = tok, .count = 1, .kid = -1, .next = -1 };
        return (int) p->n_nodes++;
}

/* Appends KID to the kids of N; *LAST tracks the last one. */
static void node_add_kid(struct parser *p, int n, int kid, int *last) {
        if (*last < 0)
                p->nodes[n].kid = kid;
        else
                p->nodes[*last].next = kid;
        *last = kid;
}

static int parse_cond(struct parser *p);

static bool is_type_word(const struct tok *t) {
        static const char *const words[] = {
                "int", "long", "short", "char", "unsigned", "signed", "bool", "_Bool", "const", "volatile",
                "struct", "enum", "union", "void", "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64",
        };

        if (t->type != T_IDENT)
                return false;
        for (size_t i = 0; i < ELEMENTSOF(words); i++)
                if (tok_is(t, words[i]))
                        return true;
        /* gfp_t, pid_t, size_t ... */
        return t->len > 2 && t->s[t->len - 2] == '_' && t->s[t->len - 1] == 't';
}

/* At '(': is this "(TYPE) operand"? A parenthesised list of names and
 * '*' followed by an operand. Before '-', '+', '*' or '&' (binary or
 * unary?) only when a name in it is plainly a type. */
static bool at_cast(const struct parser *p, size_t *ret_close) {
        size_t i = p->pos + 1;
        bool type_word = false, any = false;

        for (;; i++) {
                const struct tok *t = &p->toks[i];

                if (t->type == T_IDENT) {
                        any = true;
                        type_word = type_word || is_type_word(t);
                } else if (t->type == T_PUNCT && t->op == '*')
                        ;
                else
                        break;
        }
        if (!any || p->toks[i].type != T_PUNCT || p->toks[i].op != ')')
                return false;

        const struct tok *after = &p->toks[i + 1];

        switch (after->type) {
        case T_NUM:
        case T_IDENT:
        case T_STR:
                break;
        case T_PUNCT:
                if (after->op == '(' || after->op == '~' || after->op == '!')
                        break;
                if ((after->op == '-' || after->op == '+' || after->op == '*' || after->op == '&') && type_word)
                        break;
                return false;
        default:
                return false;
        }
        *ret_close = i;
        return true;
}

static int parse_unary(struct parser *p);

/* A '(' ... ')' or '{' ... '}' list of expressions into the kids of N. */
static int parse_list(struct parser *p, int n, unsigned close) {
        int last = -1;

        p->pos++;       /* the opening bracket */
        if (at_punct(p, close)) {
                p->pos++;
                return 0;
        }
        for (;;) {
                int k = parse_cond(p);

                if (k < 0)
                        return -1;
                node_add_kid(p, n, k, &last);
                if (at_punct(p, ',')) {
                        p->pos++;
                        /* { a, b, } */
                        if (close == '}' && at_punct(p, close)) {
                                p->pos++;
                                return 0;
                        }
                        continue;
                }
                if (at_punct(p, close)) {
                        p->pos++;
                        return 0;
                }
                return -1;
        }
}

static int parse_primary(struct parser *p) {
        const struct tok *t = cur(p);
        int n;

        switch (t->type) {
        case T_NUM:
                n = node_new(p, N_NUM, 0, p->pos++);
                return n;
        case T_STR:
                n = node_new(p, N_STR, 0, p->pos++);
                if (n < 0)
                        return -1;
                while (cur(p)->type == T_STR) {
                        p->nodes[n].count++;
                        p->pos++;
                }
                return n;
        case T_IDENT:
                return node_new(p, N_IDENT, 0, p->pos++);
        case T_PUNCT:
                if (t->op == '(') {
                        p->pos++;
                        n = parse_cond(p);
                        if (n < 0 || !at_punct(p, ')'))
                                return -1;
                        p->pos++;
                        return n;
                }
                if (t->op == '{') {
                        n = node_new(p, N_LIST, 0, p->pos);
                        if (n < 0 || parse_list(p, n, '}') < 0)
                                return -1;
                        return n;
                }
                return -1;
        default:
                return -1;
        }
}

static int parse_postfix(struct parser *p) {
        int x = parse_primary(p);

        while (x >= 0) {
                if (at_punct(p, '(')) {
                        int n = node_new(p, N_CALL, 0, p->nodes[x].tok);

                        if (n < 0)
                                return -1;
                        if (p->nodes[x].type != N_IDENT)
                                p->nodes[n].count = 0;
                        if (parse_list(p, n, ')') < 0)
                                return -1;
                        x = n;
                } else if (at_punct(p, OP2('-', '>')) || at_punct(p, '.')) {
                        bool arrow = cur(p)->op != '.';

                        p->pos++;
                        if (cur(p)->type != T_IDENT)
                                return -1;
                        if (arrow && p->nodes[x].type == N_IDENT && tok_is(&p->toks[p->nodes[x].tok], "REC"))
                                x = node_new(p, N_FIELD, 0, p->pos);
                        else {
                                int n = node_new(p, N_OTHER, 0, p->pos);

                                if (n >= 0)
                                        p->nodes[n].kid = x;
                                x = n;
                        }
                        p->pos++;
                } else if (at_punct(p, '[')) {
                        int n = node_new(p, N_OTHER, 0, p->pos), last = -1, k;

                        if (n < 0)
                                return -1;
                        node_add_kid(p, n, x, &last);
                        p->pos++;
                        k = parse_cond(p);
                        if (k < 0 || !at_punct(p, ']'))
                                return -1;
                        p->pos++;
                        node_add_kid(p, n, k, &last);
                        x = n;
                } else
                        break;
        }
        return x;
}

static int parse_unary(struct parser *p) {
        const struct tok *t = cur(p);
        size_t close;
        int n, k;

        if (++p->depth > DEPTH_MAX)
                return -1;

        if (t->type == T_PUNCT &&
            (t->op == '-' || t->op == '+' || t->op == '~' || t->op == '!' || t->op == '*' || t->op == '&')) {
                n = node_new(p, N_UNARY, t->op, p->pos++);
                k = n < 0 ? -1 : parse_unary(p);
                if (k < 0)
                        n = -1;
                else
                        p->nodes[n].kid = k;
        } else if (t->type == T_PUNCT && t->op == '(' && at_cast(p, &close)) {
                n = node_new(p, N_CAST, 0, p->pos);
                p->pos = close + 1;
                k = n < 0 ? -1 : parse_unary(p);
                if (k < 0)
                        n = -1;
                else
                        p->nodes[n].kid = k;
        } else if (t->type == T_IDENT && tok_is(t, "sizeof")) {
                /* sizeof(x) or sizeof x: a number we cannot know. */
                n = node_new(p, N_OTHER, 0, p->pos++);
                k = n < 0 ? -1 : parse_unary(p);
                if (k < 0)
                        n = -1;
                else
                        p->nodes[n].kid = k;
        } else
                n = parse_postfix(p);

        p->depth--;
        return n;
}

/* Binding strength of a binary operator, 0 for none (C's order). */
static unsigned binop_prec(const struct tok *t) {
        if (t->type != T_PUNCT)
                return 0;
        switch (t->op) {
        case OP2('|', '|'):
                return 1;
        case OP2('&', '&'):
                return 2;
        case '|':
                return 3;
        case '^':
                return 4;
        case '&':
                return 5;
        case OP2('=', '='):
        case OP2('!', '='):
                return 6;
        case '<':
        case '>':
        case OP2('<', '='):
        case OP2('>', '='):
                return 7;
        case OP2('<', '<'):
        case OP2('>', '>'):
                return 8;
        case '+':
        case '-':
                return 9;
        case '*':
        case '/':
        case '%':
                return 10;
        default:
                return 0;
        }
}

static int parse_binary(struct parser *p, unsigned min_prec) {
        int left;
        unsigned prec;

        if (++p->depth > DEPTH_MAX)
                return -1;
        left = parse_unary(p);
        while (left >= 0 && (prec = binop_prec(cur(p))) >= min_prec && prec > 0) {
                int n = node_new(p, N_BIN, cur(p)->op, p->pos), right;

                p->pos++;
                right = n < 0 ? -1 : parse_binary(p, prec + 1);
                if (right < 0) {
                        left = -1;
                        break;
                }
                p->nodes[n].kid = left;
                p->nodes[left].next = right;
                left = n;
        }
        p->depth--;
        return left;
}

static int parse_cond(struct parser *p) {
        int c, a, b, n;

        if (++p->depth > DEPTH_MAX)
                return -1;
        c = parse_binary(p, 1);
        if (c >= 0 && at_punct(p, '?')) {
                n = node_new(p, N_COND, 0, p->pos);
                p->pos++;
                a = n < 0 ? -1 : parse_cond(p);
                if (a < 0 || !at_punct(p, ':'))
                        c = -1;
                else {
                        p->pos++;
                        b = parse_cond(p);
                        if (b < 0)
                                c = -1;
                        else {
                                p->nodes[n].kid = c;
                                p->nodes[c].next = a;
                                p->nodes[a].next = b;
                                c = n;
                        }
                }
        }
        p->depth--;
        return c;
}

/* ---- reading the trees ------------------------------------------------------ */

static int kid(const struct parser *p, int n, unsigned i) {
        int k = p->nodes[n].kid;

        while (k >= 0 && i-- > 0)
                k = p->nodes[k].next;
        return k;
}

static size_t n_kids(const struct parser *p, int n) {
        size_t c = 0;

        for (int k = p->nodes[n].kid; k >= 0; k = p->nodes[k].next)
                c++;
        return c;
}

/* OP applied to A, as C computes it in unsigned long long. */
static bool const_unary(unsigned op, uint64_t a, uint64_t *ret) {
        switch (op) {
        case '-':
                *ret = -a;
                return true;
        case '+':
                *ret = a;
                return true;
        case '~':
                *ret = ~a;
                return true;
        case '!':
                *ret = !a;
                return true;
        default:
                return false;
        }
}

/* A OP B, as C computes it in unsigned long long; false where C has no
 * value (a shift by 64 or more, a division by zero). */
static bool const_binary(unsigned op, uint64_t a, uint64_t b, uint64_t *ret) {
        switch (op) {
        case OP2('|', '|'):
                *ret = a || b;
                return true;
        case OP2('&', '&'):
                *ret = a && b;
                return true;
        case '|':
                *ret = a | b;
                return true;
        case '^':
                *ret = a ^ b;
                return true;
        case '&':
                *ret = a & b;
                return true;
        case OP2('=', '='):
                *ret = a == b;
                return true;
        case OP2('!', '='):
                *ret = a != b;
                return true;
        case '<':
                *ret = a < b;
                return true;
        case '>':
                *ret = a > b;
                return true;
        case OP2('<', '='):
                *ret = a <= b;
                return true;
        case OP2('>', '='):
                *ret = a >= b;
                return true;
        case OP2('<', '<'):
                if (b >= 64)
                        return false;
                *ret = a << b;
                return true;
        case OP2('>', '>'):
                if (b >= 64)
                        return false;
                *ret = a >> b;
                return true;
        case '+':
                *ret = a + b;
                return true;
        case '-':
                *ret = a - b;
                return true;
        case '*':
                *ret = a * b;
                return true;
        case '/':
                if (b == 0)
                        return false;
                *ret = a / b;
                return true;
        case '%':
                if (b == 0)
                        return false;
                *ret = a % b;
                return true;
        default:
                return false;
        }
}

/* The value of the constant expression N, as C computes it in unsigned
 * long long (the kernel's flag values are unsigned long). */
static bool eval_const(const struct parser *p, int n, unsigned depth, uint64_t *ret) {
        const struct node *x;
        uint64_t a, b, c;

        if (n < 0 || depth > DEPTH_MAX)
                return false;
        x = &p->nodes[n];
        switch (x->type) {
        case N_NUM:
                *ret = p->toks[x->tok].num;
                return p->toks[x->tok].num_ok;
        case N_CAST:
                return eval_const(p, x->kid, depth + 1, ret);
        case N_UNARY:
                return eval_const(p, x->kid, depth + 1, &a) && const_unary(x->op, a, ret);
        case N_COND:
                if (!eval_const(p, kid(p, n, 0), depth + 1, &c))
                        return false;
                return eval_const(p, kid(p, n, c ? 1 : 2), depth + 1, ret);
        case N_BIN:
                return eval_const(p, kid(p, n, 0), depth + 1, &a) && eval_const(p, kid(p, n, 1), depth + 1, &b) &&
                       const_binary(x->op, a, b, ret);
        default:
                return false;
        }
}

/* A value read from one field: ((value >> shift) & mask). */
struct transform {
        size_t field;
        uint8_t shift;
        uint64_t mask;
};

static bool field_index(const struct format *f, const struct tok *name, size_t *ret) {
        for (size_t i = 0; i < f->n_fields; i++)
                if (tok_is(name, f->fields[i].name)) {
                        if (f->fields[i].kind != FIELD_INT && f->fields[i].kind != FIELD_BOOL)
                                return false;
                        *ret = i;
                        return true;
                }
        return false;
}

/* Reads N as REC->FIELD, cast, masked with '&' and shifted right with
 * '>>' by constants. */
static bool read_transform(const struct parser *p, const struct format *f, int n, unsigned depth,
                           struct transform *ret) {
        const struct node *x;
        uint64_t c;

        if (n < 0 || depth > DEPTH_MAX)
                return false;
        x = &p->nodes[n];
        switch (x->type) {
        case N_FIELD:
                if (!field_index(f, &p->toks[x->tok], &ret->field))
                        return false;
                ret->shift = 0;
                ret->mask = UINT64_MAX;
                return true;
        case N_CAST:
                return read_transform(p, f, x->kid, depth + 1, ret);
        case N_BIN:
                if (x->op == '&') {
                        int a = kid(p, n, 0), b = kid(p, n, 1);

                        if (eval_const(p, b, 0, &c) && read_transform(p, f, a, depth + 1, ret)) {
                                ret->mask &= c;
                                return true;
                        }
                        if (eval_const(p, a, 0, &c) && read_transform(p, f, b, depth + 1, ret)) {
                                ret->mask &= c;
                                return true;
                        }
                        return false;
                }
                if (x->op == OP2('>', '>')) {
                        if (!eval_const(p, kid(p, n, 1), 0, &c) || !read_transform(p, f, kid(p, n, 0), depth + 1, ret))
                                return false;
                        if (c >= 64 || ret->shift + c >= 64)
                                return false;
                        ret->shift = (uint8_t) (ret->shift + c);
                        ret->mask >>= c;
                        return true;
                }
                return false;
        default:
                return false;
        }
}

/* The text of string literal node N (its adjacent pieces joined), with
 * C's escapes undone. The caller frees it. */
static char *string_read(const struct parser *p, int n) {
        const struct node *x = &p->nodes[n];
        size_t total = 0;
        char *s, *o;

        for (size_t i = 0; i < x->count; i++)
                total += p->toks[x->tok + i].len;
        s = o = malloc(total + 1);
        if (!s)
                return NULL;
        for (size_t i = 0; i < x->count; i++) {
                const struct tok *t = &p->toks[x->tok + i];
                const char *c = t->s + 1, *end = t->s + t->len - 1;

                while (c < end) {
                        if (*c != '\\' || c + 1 >= end) {
                                *o++ = *c++;
                                continue;
                        }
                        c++;
                        switch (*c) {
                        case 'n':
                                *o++ = '\n';
                                c++;
                                break;
                        case 't':
                                *o++ = '\t';
                                c++;
                                break;
                        case 'r':
                                *o++ = '\r';
                                c++;
                                break;
                        case '0' ... '7': {
                                unsigned v = 0;

                                for (int k = 0; k < 3 && c < end && *c >= '0' && *c <= '7'; k++)
                                        v = v * 8 + (unsigned) (*c++ - '0');
                                *o++ = (char) v;
                                break;
                        }
                        default:
                                *o++ = *c++;
                                break;
                        }
                }
        }
        *o = '\0';
        return s;
}

static bool callee_is(const struct parser *p, int n, const char *name) {
        return p->nodes[n].count > 0 && tok_is(&p->toks[p->nodes[n].tok], name);
}

static bool is_symbolic_helper(const struct parser *p, int n) {
        return callee_is(p, n, "__print_symbolic") || callee_is(p, n, "__print_symbolic_u64");
}

static bool is_flags_helper(const struct parser *p, int n) {
        return callee_is(p, n, "__print_flags") || callee_is(p, n, "__print_flags_u64");
}

static void expr_done(struct symbol_expr *e) {
        for (size_t i = 0; i < e->n_entries; i++)
                free(e->entries[i].name);
        free(e->entries);
        free(e->string);
        *e = (struct symbol_expr) {};
}

/* Compiles the helper call N into E; *RET_FIELD is the field it reads.
 * -EINVAL when it is not a table of constants over a field. */
static int compile_helper(const struct parser *p, const struct format *f, int n, struct symbol_expr *e,
                          size_t *ret_field) {
        bool flags = is_flags_helper(p, n);
        struct transform t;
        size_t first, n_args = n_kids(p, n);
        int k;

        if (!flags && !is_symbolic_helper(p, n))
                return -EINVAL;
        if (!read_transform(p, f, kid(p, n, 0), 0, &t))
                return -EINVAL;

        *e = (struct symbol_expr) { .kind = flags ? SYMBOL_FLAGS : SYMBOL_VALUES, .shift = t.shift, .mask = t.mask };
        first = 1;
        if (flags) {
                k = kid(p, n, 1);
                if (k < 0 || p->nodes[k].type != N_STR)
                        return -EINVAL;
                e->string = string_read(p, k);
                if (!e->string)
                        return -ENOMEM;
                e->string_len = strlen(e->string);
                first = 2;
        }
        if (n_args <= first) {
                expr_done(e);
                return -EINVAL;
        }
        e->entries = calloc(n_args - first, sizeof(*e->entries));
        if (!e->entries) {
                expr_done(e);
                return -ENOMEM;
        }
        k = kid(p, n, (unsigned) first);
        for (; k >= 0; k = p->nodes[k].next) {
                struct symbol_entry *en = &e->entries[e->n_entries];
                int v = kid(p, k, 0), s = kid(p, k, 1);
                uint64_t z;

                /* "{ 0, ((void *)0) }" or "{ -1, NULL }": the end of a
                 * table the kernel shares with C code (gfp flags). */
                if (p->nodes[k].type == N_LIST && n_kids(p, k) == 2 && p->nodes[s].type != N_STR &&
                    ((eval_const(p, s, 0, &z) && z == 0) ||
                     (p->nodes[s].type == N_IDENT && tok_is(&p->toks[p->nodes[s].tok], "NULL"))))
                        continue;
                if (p->nodes[k].type != N_LIST || n_kids(p, k) != 2 || p->nodes[s].type != N_STR ||
                    !eval_const(p, v, 0, &en->value)) {
                        expr_done(e);
                        return -EINVAL;
                }
                en->name = string_read(p, s);
                if (!en->name) {
                        expr_done(e);
                        return -ENOMEM;
                }
                en->name_len = strlen(en->name);
                e->n_entries++;
        }
        *ret_field = t.field;
        return 0;
}

enum part_class {
        PART_NONE,      /* not about one field's names */
        PART_HELPER,    /* a helper, perhaps inside "?:" */
        PART_STRINGS,   /* "REC->x & C ? "a" : "b"": names only beside a helper */
};

/* One branch of a "?:": a helper over FIELD, or a string. */
static int compile_branch(struct parser *p, const struct format *f, int n, size_t field, struct symbol_expr *e,
                          bool *ret_helper) {
        size_t hf;
        int r;

        if (p->nodes[n].type == N_STR) {
                *e = (struct symbol_expr) { .kind = SYMBOL_STRING, .string = string_read(p, n) };
                if (!e->string)
                        return -ENOMEM;
                e->string_len = strlen(e->string);
                if (!e->string[0]) {
                        free(e->string);
                        *e = (struct symbol_expr) { .kind = SYMBOL_EMPTY };
                }
                return 0;
        }
        if (p->nodes[n].type != N_CALL)
                return -EINVAL;
        r = compile_helper(p, f, n, e, &hf);
        if (r < 0)
                return r;
        if (hf != field) {
                expr_done(e);
                return -EINVAL;
        }
        p->nodes[n].used = true;
        *ret_helper = true;
        return 0;
}

/* Compiles print fmt argument N into *PART about *RET_FIELD. */
static int compile_part_program(struct parser *p, const struct format *f, int n, struct symbol_part *part,
                                size_t *ret_field, enum part_class *ret_class);

static int compile_part(struct parser *p, const struct format *f, int n, struct symbol_part *part,
                        size_t *ret_field, enum part_class *ret_class) {
        bool helper = false;
        struct transform t;
        int r;

        *ret_class = PART_NONE;
        *part = (struct symbol_part) {};

        if (p->nodes[n].type == N_CALL) {
                r = compile_helper(p, f, n, &part->then, ret_field);
                if (r < 0)
                        return r == -ENOMEM ? r : 0;
                p->nodes[n].used = true;
                *ret_class = PART_HELPER;
                return 0;
        }
        if (p->nodes[n].type != N_COND)
                return 0;
        if (!read_transform(p, f, kid(p, n, 0), 0, &t))
                return compile_part_program(p, f, n, part, ret_field, ret_class);

        part->has_test = true;
        part->test_shift = t.shift;
        part->test_mask = t.mask;
        r = compile_branch(p, f, kid(p, n, 1), t.field, &part->then, &helper);
        if (r >= 0) {
                r = compile_branch(p, f, kid(p, n, 2), t.field, &part->otherwise, &helper);
                if (r < 0)
                        expr_done(&part->then);
        }
        if (r < 0) {
                p->nodes[kid(p, n, 1)].used = p->nodes[kid(p, n, 2)].used = false;
                return r == -ENOMEM ? r : 0;
        }
        *ret_field = t.field;
        *ret_class = helper ? PART_HELPER : PART_STRINGS;
        return 0;
}

/* Compiles the test N over FIELD into OPS; false when it is anything but
 * constants, FIELD, casts and C's operators, or too long. */
static bool compile_test(const struct parser *p, const struct format *f, int n, size_t field, struct symbol_op *ops,
                         size_t *n_ops, unsigned *depth, unsigned *max_depth, unsigned level) {
        const struct node *x;
        uint64_t c;
        size_t fi;

        if (n < 0 || level > DEPTH_MAX || *n_ops >= SYMBOL_OPS_MAX)
                return false;
        x = &p->nodes[n];
        if (eval_const(p, n, 0, &c)) {
                ops[(*n_ops)++] = (struct symbol_op) { SYMBOL_OP_CONST, c };
                goto push;
        }
        switch (x->type) {
        case N_CAST:
                return compile_test(p, f, x->kid, field, ops, n_ops, depth, max_depth, level + 1);
        case N_FIELD:
                if (!field_index(f, &p->toks[x->tok], &fi) || fi != field)
                        return false;
                ops[(*n_ops)++] = (struct symbol_op) { SYMBOL_OP_VALUE, 0 };
                goto push;
        case N_UNARY:
                if (x->op != '-' && x->op != '~' && x->op != '!')
                        return false;
                if (!compile_test(p, f, x->kid, field, ops, n_ops, depth, max_depth, level + 1) ||
                    *n_ops >= SYMBOL_OPS_MAX)
                        return false;
                ops[(*n_ops)++] = (struct symbol_op) { SYMBOL_OP_UNARY, x->op };
                return true;
        case N_BIN:
                if (!symbol_op_name(x->op))
                        return false;
                if (!compile_test(p, f, kid(p, n, 0), field, ops, n_ops, depth, max_depth, level + 1) ||
                    !compile_test(p, f, kid(p, n, 1), field, ops, n_ops, depth, max_depth, level + 1) ||
                    *n_ops >= SYMBOL_OPS_MAX)
                        return false;
                ops[(*n_ops)++] = (struct symbol_op) { SYMBOL_OP_BINARY, x->op };
                (*depth)--;
                return true;
        default:
                return false;
        }
push:
        if (++*depth > *max_depth)
                *max_depth = *depth;
        return *max_depth <= SYMBOL_STACK_MAX;
}

const char *symbol_op_name(uint64_t arg) {
        switch (arg) {
        case '-': return "-";
        case '~': return "~";
        case '!': return "!";
        case OP2('|', '|'): return "||";
        case OP2('&', '&'): return "&&";
        case '|': return "|";
        case '^': return "^";
        case '&': return "&";
        case OP2('=', '='): return "==";
        case OP2('!', '='): return "!=";
        case '<': return "<";
        case '>': return ">";
        case OP2('<', '='): return "<=";
        case OP2('>', '='): return ">=";
        case OP2('<', '<'): return "<<";
        case OP2('>', '>'): return ">>";
        case '+': return "+";
        case '*': return "*";
        case '/': return "/";
        case '%': return "%";
        default: return NULL;
        }
}

/* A conditional whose test is more than a mask: the field is the helper
 * branch's, the test a program. */
static int compile_part_program(struct parser *p, const struct format *f, int n, struct symbol_part *part,
                                size_t *ret_field, enum part_class *ret_class) {
        int branch = p->nodes[kid(p, n, 1)].type == N_CALL ? kid(p, n, 1) : kid(p, n, 2);
        struct symbol_op ops[SYMBOL_OPS_MAX];
        unsigned depth = 0, max_depth = 0;
        size_t n_ops = 0, field;
        struct symbol_expr probe;
        bool helper = false;
        int r;

        if (p->nodes[branch].type != N_CALL)
                return 0;
        r = compile_helper(p, f, branch, &probe, &field);
        if (r < 0)
                return r == -ENOMEM ? r : 0;
        expr_done(&probe);
        if (!compile_test(p, f, kid(p, n, 0), field, ops, &n_ops, &depth, &max_depth, 0) || depth != 1)
                return 0;

        part->has_test = true;
        part->test_signed = f->fields[field].elem_signed;
        part->test_ops = malloc(n_ops * sizeof(*ops));
        if (!part->test_ops)
                return -ENOMEM;
        memcpy(part->test_ops, ops, n_ops * sizeof(*ops));
        part->n_test_ops = n_ops;
        r = compile_branch(p, f, kid(p, n, 1), field, &part->then, &helper);
        if (r >= 0) {
                r = compile_branch(p, f, kid(p, n, 2), field, &part->otherwise, &helper);
                if (r < 0)
                        expr_done(&part->then);
        }
        if (r < 0) {
                p->nodes[kid(p, n, 1)].used = p->nodes[kid(p, n, 2)].used = false;
                free(part->test_ops);
                *part = (struct symbol_part) {};
                return r == -ENOMEM ? r : 0;
        }
        *ret_field = field;
        *ret_class = helper ? PART_HELPER : PART_STRINGS;
        return 0;
}

static size_t expr_name_max(const struct symbol_expr *e) {
        size_t m = 0, d;

        switch (e->kind) {
        case SYMBOL_STRING:
                return strlen(e->string);
        case SYMBOL_VALUES:
                m = 2 + 16;     /* a value without a name: 0x + hex */
                for (size_t i = 0; i < e->n_entries; i++) {
                        size_t l = strlen(e->entries[i].name);

                        if (l > m)
                                m = l;
                }
                return m;
        case SYMBOL_FLAGS:
                d = strlen(e->string);
                m = 2 + 16;
                for (size_t i = 0; i < e->n_entries; i++)
                        m += strlen(e->entries[i].name) + d;
                return m;
        default:
                return 0;
        }
}

static void part_done(struct symbol_part *part) {
        expr_done(&part->then);
        expr_done(&part->otherwise);
        free(part->test_ops);
        part->test_ops = NULL;
        part->n_test_ops = 0;
}

static void symbols_done(struct field_symbols *s) {
        for (size_t i = 0; i < s->n_parts; i++)
                part_done(&s->parts[i]);
        free(s->parts);
        *s = (struct field_symbols) {};
}

void format_symbols_free(struct format *f) {
        for (size_t i = 0; i < f->n_symbols; i++)
                symbols_done(&f->symbols[i]);
        free(f->symbols);
        f->symbols = NULL;
        f->n_symbols = 0;
}

const struct field_symbols *format_symbols_find(const struct format *f, size_t field) {
        for (size_t i = 0; i < f->n_symbols; i++)
                if (f->symbols[i].field == field)
                        return &f->symbols[i];
        return NULL;
}

/* Calls that print something without a table, or give a value we do not
 * name: they are no reason to count a field as unnamed. */
static bool is_known_call(const struct parser *p, int n) {
        static const char *const known[] = {
                "__get_str", "__get_rel_str", "__get_dynamic_array", "__get_rel_dynamic_array",
                "__get_dynamic_array_len", "__get_rel_dynamic_array_len", "__get_bitmask",
                "__get_rel_bitmask", "__get_cpumask", "__get_rel_cpumask", "__get_sockaddr",
                "__get_rel_sockaddr", "__print_hex", "__print_hex_str", "__print_array",
                "__print_dynamic_array", "__print_hex_dump", "__print_ns_to_secs",
                "__print_ns_without_secs",
        };

        for (size_t i = 0; i < ELEMENTSOF(known); i++)
                if (callee_is(p, n, known[i]))
                        return true;
        return false;
}

/* Adds the group of parts PARTS[0..N) about FIELD to F. Takes PARTS (an
 * array from malloc()) and what they hold, whatever it returns. */
static int symbols_add(struct format *f, size_t field, struct symbol_part *parts, size_t n, size_t *n_alloc) {
        size_t name_max = 0;

        for (size_t i = 0; i < n; i++) {
                size_t a = expr_name_max(&parts[i].then), b = expr_name_max(&parts[i].otherwise);

                name_max += a > b ? a : b;
        }
        if (name_max > NAME_MAX_BYTES || format_symbols_find(f, field)) {
                f->print_unknown++;
                goto drop;
        }
        if (f->n_symbols == *n_alloc) {
                size_t m = *n_alloc ? *n_alloc * 2 : 4;
                struct field_symbols *v = reallocarray(f->symbols, m, sizeof(*v));

                if (!v) {
                        for (size_t i = 0; i < n; i++)
                                part_done(&parts[i]);
                        free(parts);
                        return -ENOMEM;
                }
                f->symbols = v;
                *n_alloc = m;
        }
        f->symbols[f->n_symbols++] = (struct field_symbols) {
                .field = field, .parts = parts, .n_parts = n, .name_max = name_max,
        };
        return 0;
drop:
        for (size_t i = 0; i < n; i++)
                part_done(&parts[i]);
        free(parts);
        return 0;
}

static int cmp_symbols(const void *a, const void *b) {
        const struct field_symbols *x = a, *y = b;

        return x->field < y->field ? -1 : x->field > y->field;
}

/* Counts the helpers in TEXT, for a print fmt that did not parse. */
static unsigned count_helpers(const char *text) {
        unsigned n = 0;

        for (const char *s = text; (s = strstr(s, "__print_")); s++)
                if (strncmp(s, "__print_symbolic", 16) == 0 || strncmp(s, "__print_flags", 13) == 0)
                        n++;
        return n;
}

/* Skips the tokens of one argument: up to a ',' or the end outside
 * brackets. -EINVAL when the brackets do not match. Helper calls in it
 * are added to *UNKNOWN. */
static int skip_arg(struct parser *p, unsigned *unknown) {
        unsigned stack[DEPTH_MAX];
        size_t depth = 0;

        for (;; p->pos++) {
                const struct tok *t = cur(p);

                if (t->type == T_END)
                        return depth == 0 ? 0 : -EINVAL;
                if (t->type == T_IDENT && p->toks[p->pos + 1].type == T_PUNCT && p->toks[p->pos + 1].op == '(' &&
                    (tok_is(t, "__print_symbolic") || tok_is(t, "__print_symbolic_u64") ||
                     tok_is(t, "__print_flags") || tok_is(t, "__print_flags_u64")))
                        (*unknown)++;
                if (t->type != T_PUNCT)
                        continue;
                if (t->op == ',' && depth == 0)
                        return 0;
                if (t->op == '(' || t->op == '[' || t->op == '{') {
                        if (depth == ELEMENTSOF(stack))
                                return -EINVAL;
                        stack[depth++] = t->op == '(' ? ')' : t->op == '[' ? ']' : '}';
                } else if (t->op == ')' || t->op == ']' || t->op == '}') {
                        if (depth == 0 || stack[depth - 1] != t->op)
                                return -EINVAL;
                        depth--;
                }
        }
}

struct arg_part {
        enum part_class class;
        size_t field;
        struct symbol_part part;
};

/* The arguments after the format string, ", arg" each, compiled into
 * ARGS (*N_ARGS of them so far). 0; 1 when the print fmt is not one we
 * read; -errno. */
static int parse_args(struct parser *p, struct format *f, struct arg_part *args, size_t *n_args) {
        p->pos = 1;
        while (p->toks[p->pos].type == T_STR)
                p->pos++;
        while (at_punct(p, ',')) {
                size_t pos, n_nodes = p->n_nodes;
                int n, r;

                pos = ++p->pos;
                p->depth = 0;
                n = parse_cond(p);
                if (n < 0 || (!at_punct(p, ',') && cur(p)->type != T_END)) {
                        /* No expression we read (a GNU statement
                         * expression, "({ int x = ...; x; })"): skip it
                         * to the next comma outside brackets, counting
                         * the helpers in it. */
                        p->pos = pos;
                        p->n_nodes = n_nodes;
                        if (skip_arg(p, &f->print_unknown) < 0)
                                return 1;
                        continue;
                }
                r = compile_part(p, f, n, &args[*n_args].part, &args[*n_args].field, &args[*n_args].class);
                if (r < 0)
                        return r;
                (*n_args)++;
        }
        return cur(p)->type != T_END;
}

/* Runs of neighbouring arguments about one field, with a helper among
 * them, name it: the run's parts become F's symbols of that field (the
 * arguments give them up). 0 or -ENOMEM. */
static int name_helper_runs(struct format *f, struct arg_part *args, size_t n_args) {
        size_t n_alloc = 0;
        int r;

        for (size_t i = 0; i < n_args;) {
                size_t j = i + 1;
                bool helper;

                if (args[i].class == PART_NONE) {
                        i++;
                        continue;
                }
                helper = args[i].class == PART_HELPER;
                while (j < n_args && args[j].class != PART_NONE && args[j].field == args[i].field) {
                        helper = helper || args[j].class == PART_HELPER;
                        j++;
                }
                if (helper) {
                        struct symbol_part *parts = calloc(j - i, sizeof(*parts));

                        if (!parts)
                                return -ENOMEM;
                        for (size_t k = i; k < j; k++) {
                                parts[k - i] = args[k].part;
                                args[k].class = PART_NONE;
                        }
                        r = symbols_add(f, args[i].field, parts, j - i, &n_alloc);
                        if (r < 0)
                                return r;
                }
                i = j;
        }
        return 0;
}

/* The calls of the print fmt that nothing here accounts for: a helper
 * whose table no field took, or a function we do not know. */
static void count_unknown_calls(struct parser *p, struct format *f) {
        for (size_t i = 0; i < p->n_nodes; i++)
                if (p->nodes[i].type == N_CALL &&
                    ((is_symbolic_helper(p, (int) i) || is_flags_helper(p, (int) i)) ? !p->nodes[i].used
                                                                                      : !is_known_call(p, (int) i)))
                        f->print_unknown++;
}

int printfmt_parse(struct format *f, const char *text) {
        _cleanup_(freep) struct node *nodes = NULL;
        _cleanup_(freep) struct arg_part *args = NULL;
        struct toks t = {};
        struct parser p = {};
        size_t n_args = 0;
        int r;

        format_symbols_free(f);
        f->print_unknown = 0;
        f->print_bad = false;

        r = tokenize(text, &t);
        if (r == -ENOMEM)
                goto out;
        if (r < 0 || t.v[0].type != T_STR)
                goto bad;

        nodes = calloc(t.n + 1, sizeof(*nodes));
        args = calloc(t.n + 1, sizeof(*args));
        if (!nodes || !args) {
                r = -ENOMEM;
                goto out;
        }
        p = (struct parser) { .toks = t.v, .nodes = nodes, .cap = t.n + 1 };

        r = parse_args(&p, f, args, &n_args);
        if (r < 0)
                goto out;
        if (r > 0)
                goto bad;
        r = name_helper_runs(f, args, n_args);
        if (r < 0)
                goto out;
        count_unknown_calls(&p, f);

        if (f->n_symbols > 1)
                qsort(f->symbols, f->n_symbols, sizeof(*f->symbols), cmp_symbols);
        r = 0;
        goto out;

bad:
        f->print_bad = true;
        f->print_unknown = count_helpers(text);
        format_symbols_free(f);
        r = 0;
out:
        for (size_t i = 0; args && i < n_args; i++)
                if (args[i].class != PART_NONE)
                        part_done(&args[i].part);
        if (r < 0)
                format_symbols_free(f);
        free(t.v);
        return r;
}

/* ---- per event ----------------------------------------------------------- */

struct out {
        char *buf;
        size_t size, len;
};

static void out_put(struct out *o, const char *s, size_t n) {
        if (n > o->size - o->len)
                n = o->size - o->len;
        memcpy(o->buf + o->len, s, n);
        o->len += n;
}

static void out_hex(struct out *o, uint64_t v) {
        char tmp[2 + 16];
        size_t n = sizeof(tmp);

        do {
                tmp[--n] = "0123456789abcdef"[v & 0xf];
                v >>= 4;
        } while (v);
        tmp[--n] = 'x';
        tmp[--n] = '0';
        out_put(o, tmp + n, sizeof(tmp) - n);
}

/* As perf script (libtraceevent) prints them: __print_symbolic() gives
 * the first entry equal to the value, else its hex; __print_flags() the
 * names of the non-zero entries whose bits are all set, in table order,
 * each taking its bits out, then the hex of the bits left; a zero entry
 * names the value 0 alone. */
static void expr_name(const struct symbol_expr *e, uint64_t value, struct out *o) {
        uint64_t v = (value >> e->shift) & e->mask;
        bool any = false;
        size_t dl;

        switch (e->kind) {
        case SYMBOL_STRING:
                out_put(o, e->string, e->string_len);
                return;
        case SYMBOL_VALUES:
                for (size_t i = 0; i < e->n_entries; i++)
                        if (e->entries[i].value == v) {
                                out_put(o, e->entries[i].name, e->entries[i].name_len);
                                return;
                        }
                out_hex(o, v);
                return;
        case SYMBOL_FLAGS:
                dl = e->string_len;
                for (size_t i = 0; i < e->n_entries; i++) {
                        uint64_t ev = e->entries[i].value;

                        if (ev == 0) {
                                if (v == 0 && !any) {
                                        out_put(o, e->entries[i].name, e->entries[i].name_len);
                                        return;
                                }
                                continue;
                        }
                        if ((v & ev) != ev)
                                continue;
                        if (any)
                                out_put(o, e->string, dl);
                        out_put(o, e->entries[i].name, e->entries[i].name_len);
                        any = true;
                        v &= ~ev;
                }
                if (v) {
                        if (any)
                                out_put(o, e->string, dl);
                        out_hex(o, v);
                }
                return;
        default:
                return;
        }
}

/* Runs a test program: C's operators on 64-bit values, signed or not as
 * the field is; what C leaves undefined (x / 0, shifts past 63) gives 0. */
static bool run_test(const struct symbol_part *part, uint64_t value) {
        uint64_t st[SYMBOL_STACK_MAX];
        size_t sp = 0;
        bool sg = part->test_signed;

        for (size_t i = 0; i < part->n_test_ops; i++) {
                const struct symbol_op *op = &part->test_ops[i];
                uint64_t a, b;

                switch (op->code) {
                case SYMBOL_OP_CONST:
                case SYMBOL_OP_VALUE:
                        if (sp == SYMBOL_STACK_MAX)
                                return false;
                        st[sp++] = op->code == SYMBOL_OP_CONST ? op->arg : value;
                        continue;
                case SYMBOL_OP_UNARY:
                        if (sp < 1)
                                return false;
                        a = st[sp - 1];
                        st[sp - 1] = op->arg == '-' ? -a : op->arg == '~' ? ~a : !a;
                        continue;
                case SYMBOL_OP_BINARY:
                        if (sp < 2)
                                return false;
                        b = st[--sp];
                        a = st[sp - 1];
                        switch (op->arg) {
                        case OP2('|', '|'): a = a || b; break;
                        case OP2('&', '&'): a = a && b; break;
                        case '|': a |= b; break;
                        case '^': a ^= b; break;
                        case '&': a &= b; break;
                        case OP2('=', '='): a = a == b; break;
                        case OP2('!', '='): a = a != b; break;
                        case '<': a = sg ? (int64_t) a < (int64_t) b : a < b; break;
                        case '>': a = sg ? (int64_t) a > (int64_t) b : a > b; break;
                        case OP2('<', '='): a = sg ? (int64_t) a <= (int64_t) b : a <= b; break;
                        case OP2('>', '='): a = sg ? (int64_t) a >= (int64_t) b : a >= b; break;
                        case OP2('<', '<'): a = b < 64 ? a << b : 0; break;
                        case OP2('>', '>'): a = b < 64 ? a >> b : 0; break;
                        case '+': a += b; break;
                        case '-': a -= b; break;
                        case '*': a *= b; break;
                        case '/': a = b ? a / b : 0; break;
                        case '%': a = b ? a % b : 0; break;
                        default: return false;
                        }
                        st[sp - 1] = a;
                        continue;
                default:
                        return false;
                }
        }
        return sp == 1 && st[0] != 0;
}

size_t symbols_name(const struct field_symbols *s, uint64_t value, char *buf, size_t size) {
        struct out o = { .buf = buf, .size = size };

        for (size_t i = 0; i < s->n_parts; i++) {
                const struct symbol_part *part = &s->parts[i];
                bool yes;

                if (!part->has_test)
                        yes = true;
                else if (part->test_ops)
                        yes = run_test(part, value);
                else
                        yes = ((value >> part->test_shift) & part->test_mask) != 0;
                if (yes)
                        expr_name(&part->then, value, &o);
                else
                        expr_name(&part->otherwise, value, &o);
        }
        return o.len;
}
