/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The tracefs event format parser.
 *
 * A format file (Documentation/trace/events.rst, "Event formats") reads:
 *
 *   name: sched_process_exec
 *   ID: 365
 *   format:
 *           field:unsigned short common_type;  offset:0;  size:2;  signed:0;
 *           ...
 *
 *           field:__data_loc char[] filename;  offset:8;  size:4;  signed:0;
 *
 *   print fmt: "filename=%s ...", ...
 *
 * Every decision the decoder needs (kind, value width, sign, element size)
 * is made here, once, so that field_decode() only switches on small
 * integers. */

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "evmon/cleanup.h"
#include "evmon/tracefs.h"


/* Width 0 in the table: as wide as the platform's long (long, size_t):
 * the slot size tells it for a scalar, sizeof(long) for an element. */
#define WIDTH_LONG 0

struct int_type {
        const char *name;
        uint8_t width;
        bool is_signed;
};

/* Integer typedefs whose width and sign are the same on every kernel
 * (include/linux/types.h, include/uapi/asm-generic/posix_types.h). Any
 * other name (dev_t, umode_t, gfp_t, xfs_ino_t ...) takes the slot size
 * and the kernel's signed: flag. */
static const struct int_type int_typedefs[] = {
        { "u8", 1, false },        { "s8", 1, true },
        { "u16", 2, false },       { "s16", 2, true },
        { "u32", 4, false },       { "s32", 4, true },
        { "u64", 8, false },       { "s64", 8, true },
        { "__u8", 1, false },      { "__s8", 1, true },
        { "__u16", 2, false },     { "__s16", 2, true },
        { "__u32", 4, false },     { "__s32", 4, true },
        { "__u64", 8, false },     { "__s64", 8, true },
        { "uint8_t", 1, false },   { "int8_t", 1, true },
        { "uint16_t", 2, false },  { "int16_t", 2, true },
        { "uint32_t", 4, false },  { "int32_t", 4, true },
        { "uint64_t", 8, false },  { "int64_t", 8, true },
        { "u_int8_t", 1, false },  { "u_int16_t", 2, false },
        { "u_int32_t", 4, false }, { "u_int64_t", 8, false },
        { "uchar", 1, false },     { "ushort", 2, false },
        { "uint", 4, false },      { "ulong", WIDTH_LONG, false },
        { "size_t", WIDTH_LONG, false },
        { "ssize_t", WIDTH_LONG, true },
        { "ptrdiff_t", WIDTH_LONG, true },
        { "intptr_t", WIDTH_LONG, true },
        { "uintptr_t", WIDTH_LONG, false },
        { "off_t", WIDTH_LONG, true },
        { "ino_t", WIDTH_LONG, false },
        { "aio_context_t", WIDTH_LONG, false },
        { "loff_t", 8, true },
        { "time64_t", 8, true },
        { "ktime_t", 8, true },
        { "sector_t", 8, false },
        { "blkcnt_t", 8, false },
        { "pid_t", 4, true },
        { "uid_t", 4, false },
        { "gid_t", 4, false },
        { "qid_t", 4, false },
        { "clockid_t", 4, true },
        { "timer_t", 4, true },
        { "mqd_t", 4, true },
        { "key_t", 4, true },
        { "key_serial_t", 4, true },
        { "rwf_t", 4, true },
};

/* What the declared type says about a value. */
struct type_info {
        enum {
                TYPE_UNKNOWN,   /* a typedef, enum or struct we cannot see into */
                TYPE_INT,
                TYPE_CHAR,      /* plain "char": a string when in an array */
                TYPE_BOOL,
                TYPE_POINTER,
        } class;
        uint8_t width;          /* TYPE_INT: bytes, or WIDTH_LONG */
        int sign;               /* 1 signed, 0 unsigned, -1 not said by the type */
};

static bool is_qualifier(const char *w, size_t n) {
        static const char *const quals[] = {
                "const", "volatile", "restrict", "__restrict",
                "__user", "__kernel", "__iomem", "__rcu", "__percpu", "__force",
        };

        for (size_t i = 0; i < ELEMENTSOF(quals); i++)
                if (strlen(quals[i]) == n && memcmp(quals[i], w, n) == 0)
                        return true;
        return false;
}

static bool word_is(const char *w, size_t n, const char *s) {
        return strlen(s) == n && memcmp(w, s, n) == 0;
}

/* Classifies the element type TYPE (N bytes, no array suffix, no
 * __data_loc prefix). */
/* The words of a C type, counted: the base type's words by kind, and
 * the others (a typedef's name) apart; qualifiers are passed over. */
enum {
        WORD_UNSIGNED,
        WORD_SIGNED,
        WORD_SHORT,
        WORD_LONG,
        WORD_CHAR,
        WORD_INT,
        WORD_BOOL,
        _WORD_MAX,
};

static const struct {
        const char *name;
        unsigned word;
} base_words[] = {
        { "unsigned", WORD_UNSIGNED },
        { "signed", WORD_SIGNED },
        { "short", WORD_SHORT },
        { "long", WORD_LONG },
        { "char", WORD_CHAR },
        { "int", WORD_INT },
        { "bool", WORD_BOOL },
        { "_Bool", WORD_BOOL },
};

struct type_words {
        unsigned n[_WORD_MAX];
        unsigned n_base;        /* all of n[] */
        const char *other;      /* the last word that is neither base nor qualifier */
        size_t other_len;
        unsigned n_other;
};

static void count_word(struct type_words *tw, const char *w, size_t wl) {
        if (is_qualifier(w, wl))
                return;
        for (size_t k = 0; k < ELEMENTSOF(base_words); k++)
                if (word_is(w, wl, base_words[k].name)) {
                        tw->n[base_words[k].word]++;
                        tw->n_base++;
                        return;
                }
        tw->other = w;
        tw->other_len = wl;
        tw->n_other++;
}

static void count_words(const char *type, size_t n, struct type_words *ret) {
        *ret = (struct type_words) {};
        for (size_t i = 0; i < n;) {
                size_t j;

                if (isspace((unsigned char) type[i])) {
                        i++;
                        continue;
                }
                for (j = i; j < n && !isspace((unsigned char) type[j]); j++)
                        ;
                count_word(ret, type + i, j - i);
                i = j;
        }
}

/* A type with a word we do not know: an integer typedef alone ("u32",
 * int_typedefs[]); "enum foo", "struct foo", "unsigned foo_t": nothing we
 * know. */
static struct type_info classify_typedef(const struct type_words *tw) {
        struct type_info info = { .class = TYPE_UNKNOWN, .sign = -1 };

        if (tw->n_other > 1 || tw->n_base > 0)
                return info;
        for (size_t k = 0; k < ELEMENTSOF(int_typedefs); k++)
                if (word_is(tw->other, tw->other_len, int_typedefs[k].name)) {
                        info.class = TYPE_INT;
                        info.width = int_typedefs[k].width;
                        info.sign = int_typedefs[k].is_signed;
                        return info;
                }
        return info;
}

/* A type of base words only: "unsigned long", "char", "_Bool". */
static struct type_info classify_base(const struct type_words *tw) {
        struct type_info info = { .class = TYPE_UNKNOWN, .sign = -1 };
        const unsigned *c = tw->n;

        if (tw->n_base == 0)
                return info;
        if (c[WORD_UNSIGNED] > 0 && c[WORD_SIGNED] > 0)
                return info;

        if (c[WORD_BOOL] > 0) {
                if (tw->n_base == c[WORD_BOOL])
                        info.class = TYPE_BOOL;
                return info;
        }

        info.class = TYPE_INT;
        if (c[WORD_CHAR] > 0) {
                if (c[WORD_SHORT] || c[WORD_LONG] || c[WORD_INT])
                        return (struct type_info) { .class = TYPE_UNKNOWN, .sign = -1 };
                info.width = 1;
                if (c[WORD_UNSIGNED] == 0 && c[WORD_SIGNED] == 0)
                        /* Plain char: its sign is the platform's, the
                         * kernel's signed: flag says which. */
                        info.class = TYPE_CHAR;
        } else if (c[WORD_SHORT] > 0)
                info.width = 2;
        else if (c[WORD_LONG] >= 2)
                info.width = 8;
        else if (c[WORD_LONG] == 1)
                info.width = WIDTH_LONG;
        else
                info.width = 4;

        if (c[WORD_UNSIGNED] > 0)
                info.sign = 0;
        else if (c[WORD_SIGNED] > 0 || info.class == TYPE_INT)
                info.sign = 1;
        return info;
}

static struct type_info classify_type(const char *type, size_t n) {
        struct type_words tw;

        if (memchr(type, '*', n))
                return (struct type_info) { .class = TYPE_POINTER, .sign = 0 };
        count_words(type, n, &tw);
        return tw.n_other > 0 ? classify_typedef(&tw) : classify_base(&tw);
}

static bool is_int_size(uint64_t size) {
        return size == 1 || size == 2 || size == 4 || size == 8;
}

static void field_set_bytes(struct format_field *f) {
        /* Something we cannot read as a value (a struct by value, an odd
         * width): hand out its bytes. */
        f->kind = FIELD_ARRAY;
        f->elem_size = 1;
        f->elem_signed = false;
}

/* Element width of an array of TYPE: LEN elements (0 when unknown) in
 * SIZE bytes (0 for dynamic arrays). */
static uint8_t array_elem_size(const struct type_info *ti, uint32_t size, uint64_t len) {
        if (len > 0 && size > 0 && size % len == 0 && is_int_size(size / len))
                return size / len;
        switch (ti->class) {
        case TYPE_INT:
                return ti->width == WIDTH_LONG ? sizeof(long) : ti->width;
        case TYPE_POINTER:
                return sizeof(void *);
        case TYPE_CHAR:
        case TYPE_BOOL:
        case TYPE_UNKNOWN:
        default:
                return 1;
        }
}

/* Sets kind, elem_size and elem_signed of F from its declared type. ELEM is
 * the element type (TYPE without the __data_loc prefix and array suffix),
 * HAVE_SIGNED whether the file said signed:, ARRAY whether there was a
 * "[N]" / "[]" suffix, LEN its number (0 when empty or not a number). */
static int field_classify(struct format_field *f, const char *elem, size_t elem_len, bool have_signed,
                          bool dynamic, bool array, uint64_t len) {
        struct type_info ti = classify_type(elem, elem_len);
        bool sign;

        if (ti.sign >= 0)
                sign = ti.sign;
        else if (have_signed)
                sign = f->is_signed;
        else if (ti.class == TYPE_CHAR)
                /* Old kernels wrote no signed: (before 2.6.33); char was
                 * then the platform's own. */
                sign = CHAR_MIN < 0;
        else
                sign = false;

        if (dynamic) {
                /* __data_loc/__rel_loc: a u32 (len << 16 | offset) locator
                 * (include/trace/stages/stage4_event_fields.h). */
                if (f->size != 4)
                        return -EINVAL;
                if (word_is(elem, elem_len, "cpumask_t")) {
                        /* A bitmap of longs (__get_cpumask()). */
                        f->kind = FIELD_DYN_ARRAY;
                        f->elem_size = sizeof(unsigned long);
                        f->elem_signed = false;
                        return 0;
                }
                if (ti.class == TYPE_CHAR) {
                        f->kind = FIELD_DYN_STRING;
                        f->elem_size = 1;
                        f->elem_signed = sign;
                        return 0;
                }
                f->kind = FIELD_DYN_ARRAY;
                f->elem_size = array_elem_size(&ti, 0, 0);
                /* The locator's signed: says nothing of the elements. */
                f->elem_signed = ti.sign > 0;
                return 0;
        }

        if (array && f->size == 0) {
                /* "T name[]": the rest of the record (ftrace/print). */
                f->flex = true;
                f->kind = ti.class == TYPE_CHAR ? FIELD_DYN_STRING : FIELD_DYN_ARRAY;
                f->elem_size = array_elem_size(&ti, 0, 0);
                f->elem_signed = sign;
                return 0;
        }

        if (array) {
                if (ti.class == TYPE_CHAR) {
                        f->kind = FIELD_CHARS;
                        f->elem_size = 1;
                        f->elem_signed = sign;
                        return 0;
                }
                f->kind = FIELD_ARRAY;
                f->elem_size = array_elem_size(&ti, f->size, len);
                f->elem_signed = ti.class == TYPE_POINTER ? false : sign;
                if (f->size % f->elem_size != 0)
                        field_set_bytes(f);
                return 0;
        }

        if (!is_int_size(f->size)) {
                if (f->size == 0)
                        return -EINVAL;
                field_set_bytes(f);
                return 0;
        }

        switch (ti.class) {
        case TYPE_POINTER:
                f->kind = FIELD_POINTER;
                f->elem_size = f->size;
                f->elem_signed = false;
                return 0;
        case TYPE_BOOL:
                f->kind = FIELD_BOOL;
                f->elem_size = f->size;
                f->elem_signed = false;
                return 0;
        case TYPE_INT:
        case TYPE_CHAR:
                f->kind = FIELD_INT;
                /* The declared type wins where it is narrower than the
                 * slot: syscall tracepoints store every argument in an
                 * unsigned long ("int dfd; size:8; signed:0"). */
                f->elem_size = ti.width == WIDTH_LONG || ti.width > f->size ? f->size : ti.width;
                f->elem_signed = sign;
                return 0;
        case TYPE_UNKNOWN:
        default:
                f->kind = FIELD_INT;
                f->elem_size = f->size;
                f->elem_signed = sign;
                return 0;
        }
}

static const char *skip_space(const char *p, const char *end) {
        while (p < end && (*p == ' ' || *p == '\t'))
                p++;
        return p;
}

static const char *rskip_space(const char *start, const char *p) {
        while (p > start && (p[-1] == ' ' || p[-1] == '\t'))
                p--;
        return p;
}

static bool is_ident_char(char c) {
        return isalnum((unsigned char) c) || c == '_';
}

/* Parses a decimal number of P..END (blanks around it) into *ret: a span
 * of the format text, not a C string, hence not basic's parse_u64(). */
static int parse_decimal(const char *p, const char *end, uint64_t *ret) {
        uint64_t v = 0;

        p = skip_space(p, end);
        end = rskip_space(p, end);
        if (p == end)
                return -EINVAL;
        for (; p < end; p++) {
                if (*p < '0' || *p > '9')
                        return -EINVAL;
                if (v > (UINT64_MAX - 9) / 10)
                        return -ERANGE;
                v = v * 10 + (uint64_t) (*p - '0');
        }
        *ret = v;
        return 0;
}

static int parse_u32(const char *p, const char *end, uint32_t *ret) {
        uint64_t v;
        int r;

        r = parse_decimal(p, end, &v);
        if (r < 0)
                return r;
        if (v > UINT32_MAX)
                return -ERANGE;
        *ret = (uint32_t) v;
        return 0;
}

static char *strndup_trim(const char *p, const char *end) {
        p = skip_space(p, end);
        end = rskip_space(p, end);
        return strndup(p, end - p);
}

/* Parses "TYPE NAME[LEN]" (the text between "field:" and the first ';')
 * together with the key:value items after it, into F. */
/* A field's items after its declaration, "offset:N; size:N; signed:N;"
 * (unknown keys are skipped: a newer kernel may add some), into F;
 * *RET_HAVE_SIGNED when the kernel said signed:. */
static int field_items(const char *items, const char *line_end, struct format_field *f, bool *ret_have_signed) {
        bool have_offset = false, have_size = false, have_signed = false;
        int r;

        for (const char *p = items; p < line_end;) {
                const char *semi = memchr(p, ';', (size_t) (line_end - p));
                const char *item_end = semi ?: line_end;
                const char *colon;

                const char *next = semi ? semi + 1 : line_end;

                p = skip_space(p, item_end);
                if (p >= item_end) {
                        p = next;
                        continue;
                }
                colon = memchr(p, ':', (size_t) (item_end - p));
                if (colon) {
                        const char *key_end = rskip_space(p, colon);
                        size_t kl = key_end - p;

                        if (word_is(p, kl, "offset")) {
                                r = parse_u32(colon + 1, item_end, &f->offset);
                                if (r < 0)
                                        return r;
                                have_offset = true;
                        } else if (word_is(p, kl, "size")) {
                                r = parse_u32(colon + 1, item_end, &f->size);
                                if (r < 0)
                                        return r;
                                have_size = true;
                        } else if (word_is(p, kl, "signed")) {
                                uint64_t s;

                                r = parse_decimal(colon + 1, item_end, &s);
                                if (r < 0)
                                        return r;
                                f->is_signed = s != 0;
                                have_signed = true;
                        }
                } else
                        return -EINVAL;

                p = next;
        }
        if (!have_offset || !have_size)
                return -EINVAL;
        /* A perf record is at most 65,535 bytes (its header's size is a
         * u16): a field ending past that never decodes, and its declared
         * size would set the encoder's bound for nothing (fuzz-format: a
         * 1.1 GB char array reserved 8 GiB). */
        if ((uint64_t) f->offset + f->size > UINT16_MAX)
                return -ERANGE;
        *ret_have_signed = have_signed;
        return 0;
}

/* A field's declaration, "TYPE NAME" or "TYPE NAME[LEN]", as
 * field_decl_parse() reads it. */
struct field_decl {
        const char *type, *type_end;  /* TYPE */
        const char *array_start;      /* "[LEN]", NULL when there is none */
        uint64_t len;                 /* LEN; 0 when it is not a number */
};

/* Reads DECL (up to DECL_END) into *RET, and F's name and type. */
static int field_decl_parse(const char *decl, const char *decl_end, struct format_field *f, struct field_decl *ret) {
        const char *name_end, *name_start, *type_end, *array_start = NULL;
        uint64_t len = 0;
        size_t tl;

        /* The name is the last identifier, perhaps followed by "[LEN]". */
        name_end = rskip_space(decl, decl_end);
        if (name_end > decl && name_end[-1] == ']') {
                const char *open = name_end - 1;

                while (open > decl && *open != '[')
                        open--;
                if (*open != '[')
                        return -EINVAL;
                array_start = open;
                /* Old kernels wrote the length as the macro
                 * ("comm[TASK_COMM_LEN]"): then it stays 0 and the
                 * element width comes from the type. */
                if (parse_decimal(open + 1, name_end - 1, &len) < 0)
                        len = 0;
                name_end = rskip_space(decl, open);
        }
        name_start = name_end;
        while (name_start > decl && is_ident_char(name_start[-1]))
                name_start--;
        if (name_start == name_end || isdigit((unsigned char) *name_start))
                return -EINVAL;
        type_end = rskip_space(decl, name_start);
        decl = skip_space(decl, type_end);
        if (decl == type_end)
                return -EINVAL;

        f->name = strndup(name_start, name_end - name_start);
        if (!f->name)
                return -ENOMEM;

        tl = type_end - decl;

        /* The type as the kernel declared it, array suffix included
         * ("u8[16]", "char[]"), as the kernel's own field->type. */
        if (array_start) {
                size_t sl = rskip_space(decl, decl_end) - array_start;

                f->type = malloc(tl + sl + 1);
                if (!f->type)
                        return -ENOMEM;
                memcpy(f->type, decl, tl);
                memcpy(f->type + tl, array_start, sl);
                f->type[tl + sl] = '\0';
        } else {
                f->type = strndup_trim(decl, type_end);
                if (!f->type)
                        return -ENOMEM;
        }
        *ret = (struct field_decl) { .type = decl, .type_end = type_end, .array_start = array_start, .len = len };
        return 0;
}

/* A dynamic field's element type: "__data_loc char[]", "__rel_loc u8[]",
 * "__data_loc cpumask_t" give "char", "u8", "cpumask_t" in *ELEM up to
 * *ELEM_END (D's type before). 1 for a dynamic field, 0 for another,
 * -EINVAL. */
static int field_dynamic(struct format_field *f, const struct field_decl *d, const char **elem, const char **elem_end) {
        const char *decl = d->type;
        size_t tl = d->type_end - decl;

        if (tl >= 10 && memcmp(decl, "__data_loc", 10) == 0 && (tl == 10 || !is_ident_char(decl[10])))
                *elem = decl + 10;
        else if (tl >= 9 && memcmp(decl, "__rel_loc", 9) == 0 && (tl == 9 || !is_ident_char(decl[9]))) {
                f->rel = true;
                *elem = decl + 9;
        } else
                return 0;
        *elem_end = rskip_space(*elem, *elem_end);
        if (*elem_end > *elem && (*elem_end)[-1] == ']') {
                while (*elem_end > *elem && (*elem_end)[-1] != '[')
                        (*elem_end)--;
                if (*elem_end == *elem)
                        return -EINVAL;
                *elem_end = rskip_space(*elem, *elem_end - 1);
        }
        *elem = skip_space(*elem, *elem_end);
        if (*elem == *elem_end)
                return -EINVAL;
        return 1;
}

static int field_parse(const char *decl, const char *decl_end, const char *items, const char *line_end,
                       struct format_field *f) {
        struct field_decl d;
        const char *elem, *elem_end;
        bool have_signed, dynamic;
        int r;

        r = field_items(items, line_end, f, &have_signed);
        if (r < 0)
                return r;
        r = field_decl_parse(decl, decl_end, f, &d);
        if (r < 0)
                return r;
        elem = d.type;
        elem_end = d.type_end;
        r = field_dynamic(f, &d, &elem, &elem_end);
        if (r < 0)
                return r;
        dynamic = r > 0;
        return field_classify(f, elem, elem_end - elem, have_signed, dynamic, d.array_start && !dynamic, d.len);
}

struct format *format_free(struct format *f) {
        if (!f)
                return NULL;
        for (size_t i = 0; i < f->n_fields; i++) {
                free(f->fields[i].name);
                free(f->fields[i].type);
        }
        format_symbols_free(f);
        free(f->fields);
        free(f->system);
        free(f->name);
        free(f);
        return NULL;
}

static bool line_starts(const char *p, const char *end, const char *prefix, const char **ret_rest) {
        size_t n = strlen(prefix);

        if ((size_t) (end - p) < n || memcmp(p, prefix, n) != 0)
                return false;
        *ret_rest = p + n;
        return true;
}

/* A line before "format:": the event's name, its ID, or "format:"
 * itself; any other is passed over. */
static int header_line(struct format *f, const char *line, const char *end, bool *have_id, bool *in_format) {
        const char *rest;

        if (line_starts(line, end, "name:", &rest)) {
                free(f->name);
                f->name = strndup_trim(rest, end);
                if (!f->name)
                        return -ENOMEM;
        } else if (line_starts(line, end, "ID:", &rest)) {
                if (parse_u32(rest, end, &f->id) < 0)
                        return -EINVAL;
                *have_id = true;
        } else if (line_starts(line, end, "format:", &rest))
                *in_format = true;
        return 0;
}

/* A field's line ("field:TYPE NAME; offset:...;"), added to F's fields
 * (*N_ALLOC allocated); a common_* field before the blank line after
 * them (COMMONS_DONE) is a common one. */
static int field_line(struct format *f, const char *line, const char *end, size_t *n_alloc, bool commons_done) {
        struct format_field *field;
        const char *rest, *semi;
        uint32_t field_end;
        int r;

        /* "field:" or, on some old kernels, "field special:". */
        if (!line_starts(line, end, "field:", &rest) &&
            !line_starts(line, end, "field special:", &rest))
                return -EINVAL;

        semi = memchr(rest, ';', end - rest);
        if (!semi)
                return -EINVAL;

        if (f->n_fields == *n_alloc) {
                size_t n = *n_alloc ? *n_alloc * 2 : 16;
                struct format_field *nf = reallocarray(f->fields, n, sizeof(*nf));

                if (!nf)
                        return -ENOMEM;
                f->fields = nf;
                *n_alloc = n;
        }
        field = &f->fields[f->n_fields];
        *field = (struct format_field) {};
        /* Counted now so that format_free() frees what
         * field_parse() allocated even when it fails. */
        f->n_fields++;

        r = field_parse(rest, semi, semi + 1, end, field);
        if (r < 0)
                return r == -ENOMEM ? r : -EINVAL;

        if (!commons_done && strncmp(field->name, "common_", 7) == 0 && f->n_common == f->n_fields - 1) {
                field->common = true;
                f->n_common++;
        }

        field_end = field->offset + field->size;
        if (field_end > f->min_size)
                f->min_size = field_end;
        return 0;
}

int format_parse(const char *text, const char *system, struct format **ret) {
        _cleanup_(format_freep) struct format *f = NULL;
        size_t n_alloc = 0;
        bool have_id = false, in_format = false, commons_done = false, have_print = false;
        int r;

        if (!text || !ret)
                return -EINVAL;

        f = calloc(1, sizeof(*f));
        if (!f)
                return -ENOMEM;
        if (system) {
                f->system = strdup(system);
                if (!f->system)
                        return -ENOMEM;
        }

        for (const char *p = text; *p;) {
                const char *nl = strchr(p, '\n');
                const char *end = nl ?: p + strlen(p);
                const char *line = skip_space(p, end), *rest;

                p = nl ? nl + 1 : end;

                if (line_starts(line, end, "print fmt:", &rest)) {
                        have_print = true;
                        /* Only after the fields: it names them. The rest
                         * of the text: a format string may hold a raw
                         * newline (ext4:ext4_fc_stats). */
                        r = printfmt_parse(f, rest);
                        if (r < 0)
                                return r;
                        break;
                }
                if (!in_format)
                        r = header_line(f, line, end, &have_id, &in_format);
                else if (line == end) {
                        /* The blank line after the common_* fields. */
                        if (f->n_fields > 0)
                                commons_done = true;
                        continue;
                } else
                        r = field_line(f, line, end, &n_alloc, commons_done);
                if (r < 0)
                        return r;
        }

        if (!f->name || !*f->name || !have_id || !in_format)
                return -EINVAL;
        if (!have_print)
                f->print_bad = true;

        *ret = TAKE_PTR(f);
        return 0;
}

const char *field_kind_to_string(enum field_kind k) {
        static const char *const table[_FIELD_KIND_MAX] = {
                [FIELD_INT] = "int",
                [FIELD_BOOL] = "bool",
                [FIELD_POINTER] = "pointer",
                [FIELD_CHARS] = "chars",
                [FIELD_ARRAY] = "array",
                [FIELD_DYN_STRING] = "dyn_string",
                [FIELD_DYN_ARRAY] = "dyn_array",
        };

        if ((unsigned) k >= _FIELD_KIND_MAX)
                return NULL;
        return table[k];
}

const struct format_field *format_field_find(const struct format *f, const char *name) {
        for (size_t i = 0; f && i < f->n_fields; i++)
                if (strcmp(f->fields[i].name, name) == 0)
                        return &f->fields[i];
        return NULL;
}
