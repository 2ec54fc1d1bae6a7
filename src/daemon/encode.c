/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/encode.h"
#include "evmon/cleanup.h"
#include "evmon/encode-perf.h"

/* ---- the line buffer ------------------------------------------------- */

int jbuf_reserve(struct jbuf *b, size_t extra) {
        size_t need, cap;
        char *d;

        if (_likely_(b->cap - b->len >= extra))
                return 0;
        if (extra > SIZE_MAX - b->len)
                return -ENOMEM;

        need = b->len + extra;
        cap = b->cap > 0 ? b->cap : 4096;
        while (cap < need)
                cap = cap > SIZE_MAX / 2 ? need : cap * 2;

        d = realloc(b->data, cap);
        if (!d)
                return -ENOMEM;
        b->data = d;
        b->cap = cap;
        return 0;
}

void jbuf_done(struct jbuf *b) {
        free(b->data);
        *b = (struct jbuf) {};
}

/* ---- integers ------------------------------------------------------------ */

static const char digits2[200] =
        "0001020304050607080910111213141516171819"
        "2021222324252627282930313233343536373839"
        "4041424344454647484950515253545556575859"
        "6061626364656667686970717273747576777879"
        "8081828384858687888990919293949596979899";

static const char hexdigits[16] = "0123456789abcdef";

static inline char *put2(char *p, unsigned v) {
        return json_put_bytes(p, digits2 + 2 * v, 2);
}

static inline unsigned u64_ndigits(uint64_t v) {
        unsigned n = 1;

        for (;;) {
                if (v < 10)
                        return n;
                if (v < 100)
                        return n + 1;
                if (v < 1000)
                        return n + 2;
                if (v < 10000)
                        return n + 3;
                v /= 10000;
                n += 4;
        }
}

char *json_put_u64(char *p, uint64_t v) {
        char *end = p + u64_ndigits(v), *q = end;

        /* Two digits per division, from the right. */
        while (v >= 100) {
                q -= 2;
                put2(q, (unsigned) (v % 100));
                v /= 100;
        }
        if (v >= 10)
                put2(q - 2, (unsigned) v);
        else
                q[-1] = (char) ('0' + v);
        return end;
}

char *json_put_i64(char *p, int64_t v) {
        if (v >= 0)
                return json_put_u64(p, (uint64_t) v);
        *p++ = '-';
        /* Negate in unsigned arithmetic: INT64_MIN has no positive twin. */
        return json_put_u64(p, 0 - (uint64_t) v);
}

char *json_put_hex(char *p, uint64_t v) {
        unsigned n = v ? (67 - (unsigned) __builtin_clzll(v)) / 4 : 1;

        p = json_put_literal(p, "\"0x");
        for (unsigned i = n; i > 0; i--) {
                p[i - 1] = hexdigits[v & 0xf];
                v >>= 4;
        }
        p += n;
        *p++ = '"';
        return p;
}

/* ---- time ------------------------------------------------------------------ */

/* Days since 1970-01-01 to a proleptic Gregorian date, with the era
 * arithmetic of Howard Hinnant's "chrono-Compatible Low-Level Date
 * Algorithms" (days_from_civil's inverse): years counted from March so the
 * leap day comes last, 400-year eras of 146097 days. Only non-negative
 * days arrive here, so plain unsigned division is right. */
static void civil_from_days(uint64_t days, unsigned *ret_y, unsigned *ret_m, unsigned *ret_d) {
        uint64_t z = days + 719468;                     /* days since 0000-03-01 */
        uint64_t era = z / 146097;
        unsigned doe = (unsigned) (z - era * 146097);   /* [0, 146096] */
        unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;   /* [0, 399] */
        unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);                 /* [0, 365] */
        unsigned mp = (5 * doy + 2) / 153;                                      /* March = 0 */
        unsigned d = doy - (153 * mp + 2) / 5 + 1;
        unsigned m = mp < 10 ? mp + 3 : mp - 9;

        *ret_y = (unsigned) (yoe + era * 400) + (m <= 2);
        *ret_m = m;
        *ret_d = d;
}

/* Lines come in bursts within the same second: keep its text. One per
 * thread, so no locking. */
static _Thread_local struct {
        uint64_t sec;
        bool valid;
        char text[19];          /* YYYY-MM-DDTHH:MM:SS */
} time_cache;

char *json_put_time(char *p, uint64_t realtime_ns) {
        uint64_t sec = realtime_ns / 1000000000u;
        unsigned ns = (unsigned) (realtime_ns % 1000000000u);

        if (_unlikely_(!time_cache.valid || time_cache.sec != sec)) {
                unsigned y, mo, d, sod = (unsigned) (sec % 86400);
                char *q = time_cache.text;

                civil_from_days(sec / 86400, &y, &mo, &d);
                /* UINT64_MAX ns is in 2554: four digits always do. */
                q = put2(q, y / 100);
                q = put2(q, y % 100);
                *q++ = '-';
                q = put2(q, mo);
                *q++ = '-';
                q = put2(q, d);
                *q++ = 'T';
                q = put2(q, sod / 3600);
                *q++ = ':';
                q = put2(q, sod / 60 % 60);
                *q++ = ':';
                put2(q, sod % 60);
                time_cache.sec = sec;
                time_cache.valid = true;
        }

        *p++ = '"';
        p = json_put_bytes(p, time_cache.text, sizeof(time_cache.text));
        *p++ = '.';
        p = put2(p, ns / 10000000);
        p = put2(p, ns / 100000 % 100);
        p = put2(p, ns / 1000 % 100);
        p = put2(p, ns / 10 % 100);
        *p++ = (char) ('0' + ns % 10);
        return json_put_literal(p, "Z\"");
}

/* ---- strings --------------------------------------------------------------- */

/* Per byte: 0 copies it raw, 'u' writes \u00XX, 'U' starts a UTF-8
 * check, anything else is the letter after a backslash. DEL is a control
 * character too; escaping it keeps terminals reading `evmonctl watch` sane. */
static const char json_esc[256] = {
        [0x00 ... 0x07] = 'u',
        ['\b'] = 'b',
        ['\t'] = 't',
        ['\n'] = 'n',
        [0x0b] = 'u',
        ['\f'] = 'f',
        ['\r'] = 'r',
        [0x0e ... 0x1f] = 'u',
        ['"'] = '"',
        ['\\'] = '\\',
        [0x7f] = 'u',
        [0x80 ... 0xff] = 'U',
};

static inline bool utf8_cont(uint8_t c) {
        return (c & 0xc0) == 0x80;
}

/* Length of the well-formed UTF-8 sequence at S (S[0] >= 0x80, N >= 1
 * bytes available), or 0. Well-formed per RFC 3629 section 4 / Unicode
 * table 3-7: no overlong forms (C0, C1, E0 80..9F, F0 80..8F), no
 * surrogates (ED A0..BF), nothing above U+10FFFF (F4 90.., F5..FF). */
static inline size_t utf8_len(const uint8_t *s, size_t n) {
        uint8_t c = s[0], lo = 0x80, hi = 0xbf;

        if (c < 0xc2)
                return 0;
        if (c < 0xe0)
                return n >= 2 && utf8_cont(s[1]) ? 2 : 0;
        if (c < 0xf0) {
                if (n < 3 || !utf8_cont(s[2]))
                        return 0;
                if (c == 0xe0)
                        lo = 0xa0;
                else if (c == 0xed)
                        hi = 0x9f;
                return s[1] >= lo && s[1] <= hi ? 3 : 0;
        }
        if (c < 0xf5) {
                if (n < 4 || !utf8_cont(s[2]) || !utf8_cont(s[3]))
                        return 0;
                if (c == 0xf0)
                        lo = 0x90;
                else if (c == 0xf4)
                        hi = 0x8f;
                return s[1] >= lo && s[1] <= hi ? 4 : 0;
        }
        return 0;
}

size_t json_escaped_max(size_t n) {
        /* Every byte at worst becomes \u00XX. */
        if (n > (SIZE_MAX - 2) / 6)
                return SIZE_MAX;
        return 6 * n + 2;
}

/* Invalid UTF-8: each byte that does not start a well-formed sequence is
 * written as \u00XX (so the byte 0xff becomes U+00FF) and the scan resumes
 * at the next byte, which is checked afresh. A bad or truncated sequence
 * thus turns into one escape per byte, and a valid character right after
 * it is kept. Nothing is dropped or replaced by U+FFFD, so the kernel's
 * bytes can be recovered: a consumer that sees U+0080..U+00FF where it
 * expects text knows they were raw bytes (real Latin-1 text arrives as
 * two-byte UTF-8 and is passed through unchanged, so the two cases differ
 * only after decoding, which is the price of staying plain JSON). */
char *json_put_string(char *p, const char *s, size_t n) {
        const uint8_t *u = (const uint8_t *) s, *end = u + n;

        *p++ = '"';
        while (u < end) {
                uint8_t c = *u;
                char e = json_esc[c];

                if (_likely_(e == 0)) {
                        *p++ = (char) c;
                        u++;
                        continue;
                }
                if (e == 'U') {
                        size_t l = utf8_len(u, (size_t) (end - u));

                        if (l > 0) {
                                p = json_put_bytes(p, u, l);
                                u += l;
                                continue;
                        }
                        e = 'u';
                }
                *p++ = '\\';
                if (e == 'u') {
                        p = json_put_literal(p, "u00");
                        *p++ = hexdigits[c >> 4];
                        *p++ = hexdigits[c & 0xf];
                } else
                        *p++ = e;
                u++;
        }
        *p++ = '"';
        return p;
}

/* ---- encoders ---------------------------------------------------------------- */

struct encoder_field {
        const struct format_field *f;
        const char *key;                /* ,"name": (no comma for the first), into keys */
        size_t key_len;
        uint8_t bits;                   /* array elements: width to hold values to, 0 = 64 */
};

struct encoder {
        const struct format *fmt;
        char *prefix;                   /* {"type":"event","event":"NAME" */
        size_t prefix_len;
        char *keys;
        struct encoder_field *fields;
        size_t n_fields;
        /* A line is at most fixed_max + raw_factor * raw size bytes, and
         * the "sample" object's encode_sample_max(). */
        size_t fixed_max;
        size_t raw_factor;
        uint64_t sample_show;           /* PERF_SAMPLE_* bits "sample" shows */
        struct encode_ids ids;
};

#define PREFIX_HEAD "{\"type\":\"event\",\"event\":"
#define KEY_TIME ",\"time\":"
#define KEY_TS ",\"ts\":"
#define KEY_CPU ",\"cpu\":"
#define KEY_PID ",\"pid\":"
#define KEY_TID ",\"tid\":"
#define KEY_FIELDS ",\"fields\":{"
#define LINE_END "}\n"

/* Longest decimal of an integer element of SIZE bytes (sign included). */
static size_t int_max_chars(unsigned size) {
        switch (size) {
        case 1:
                return 4;       /* -128 */
        case 2:
                return 6;       /* -32768 */
        case 4:
                return 11;      /* -2147483648 */
        default:
                return JSON_INT_MAX;
        }
}

struct encoder *encoder_free(struct encoder *e) {
        if (!e)
                return NULL;
        free(e->prefix);
        free(e->keys);
        free(e->fields);
        free(e);
        return NULL;
}

const struct format *encoder_format(const struct encoder *e) {
        return e->fmt;
}

int encoder_new(const char *event_name, const struct format *fmt, struct encoder **ret) {
        _cleanup_(encoder_freep) struct encoder *e = NULL;
        size_t n, keys_size = 0;
        char *p;

        e = calloc(1, sizeof(*e));
        if (!e)
                return -ENOMEM;
        e->fmt = fmt;
        /* Raw is shown only where no format decodes it into "fields". */
        e->sample_show = fmt ? ~(uint64_t) PERF_SAMPLE_RAW : ~(uint64_t) 0;

        e->prefix = malloc(sizeof(PREFIX_HEAD) - 1 + json_escaped_max(strlen(event_name)));
        if (!e->prefix)
                return -ENOMEM;
        p = json_put_literal(e->prefix, PREFIX_HEAD);
        p = json_put_string(p, event_name, strlen(event_name));
        e->prefix_len = (size_t) (p - e->prefix);

        e->fixed_max = e->prefix_len +
                sizeof(KEY_TIME) - 1 + JSON_TIME_LEN +
                sizeof(KEY_TS) - 1 + JSON_INT_MAX +
                sizeof(KEY_CPU) - 1 + JSON_INT_MAX +
                sizeof(KEY_PID) - 1 + JSON_INT_MAX +
                sizeof(KEY_TID) - 1 + JSON_INT_MAX +
                sizeof(KEY_FIELDS) - 1 + 1 + sizeof(LINE_END) - 1;

        n = fmt && fmt->n_fields > fmt->n_common ? fmt->n_fields - fmt->n_common : 0;
        for (size_t i = 0; i < n; i++)
                keys_size += 2 + json_escaped_max(strlen(fmt->fields[fmt->n_common + i].name));
        e->fields = calloc(n > 0 ? n : 1, sizeof(*e->fields));
        e->keys = malloc(keys_size > 0 ? keys_size : 1);
        if (!e->fields || !e->keys)
                return -ENOMEM;
        e->n_fields = n;

        p = e->keys;
        for (size_t i = 0; i < n; i++) {
                const struct format_field *f = &fmt->fields[fmt->n_common + i];
                struct encoder_field *ef = &e->fields[i];
                size_t es = f->elem_size > 0 ? f->elem_size : 1, value_max;

                ef->f = f;
                ef->key = p;
                if (i > 0)
                        *p++ = ',';
                p = json_put_string(p, f->name, strlen(f->name));
                *p++ = ':';
                ef->key_len = (size_t) (p - ef->key);
                if (f->elem_size == 1 || f->elem_size == 2 || f->elem_size == 4)
                        ef->bits = (uint8_t) (f->elem_size * 8);

                switch (f->kind) {
                case FIELD_INT:
                        value_max = JSON_INT_MAX;
                        break;
                case FIELD_BOOL:
                        value_max = sizeof("false") - 1;
                        break;
                case FIELD_POINTER:
                        value_max = JSON_HEX_MAX;
                        break;
                case FIELD_CHARS:
                        value_max = json_escaped_max(f->size);
                        break;
                case FIELD_ARRAY:
                        /* "[" + count × (value + ",") + "]", less one comma. */
                        value_max = 2 + (f->size / es) * (int_max_chars(ef->bits / 8) + 1);
                        break;
                case FIELD_DYN_STRING:
                        /* The data lies inside the record (field_decode
                         * checks that), so it is at most raw size bytes. */
                        value_max = 2;
                        e->raw_factor += 6;
                        break;
                case FIELD_DYN_ARRAY:
                        value_max = 2;
                        e->raw_factor += (int_max_chars(ef->bits / 8) + 1 + es - 1) / es;
                        break;
                default:
                        return -EINVAL;
                }
                e->fixed_max += ef->key_len + value_max;
        }

        *ret = TAKE_PTR(e);
        return 0;
}

void encoder_set_sample_show(struct encoder *e, uint64_t sample_show) {
        e->sample_show = sample_show;
}

void encoder_set_ids(struct encoder *e, const struct encode_ids *ids) {
        e->ids = ids ? *ids : (struct encode_ids) {};
}

/* Holds V to the width BITS (< 64) the element was declared with, as
 * field_array_get() promises; this keeps the line inside the bound
 * reserved for it even if a decoder were to break that promise. */
static inline int64_t elem_fit(int64_t v, unsigned bits, bool sign) {
        unsigned shift = 64 - bits;

        if (sign)
                return (int64_t) ((uint64_t) v << shift) >> shift;
        return (int64_t) ((uint64_t) v & (UINT64_MAX >> shift));
}

static char *put_array(char *p, const struct encoder_field *ef, const struct field_value *v) {
        const struct format_field *f = ef->f;

        *p++ = '[';
        for (size_t i = 0; i < v->arr.count; i++) {
                int64_t x = field_array_get(f, v, i);

                if (i > 0)
                        *p++ = ',';
                if (ef->bits > 0)
                        x = elem_fit(x, ef->bits, f->elem_signed);
                if (f->elem_signed)
                        p = json_put_i64(p, x);
                else
                        p = json_put_u64(p, (uint64_t) x);
        }
        *p++ = ']';
        return p;
}

int encode_event(struct jbuf *b, const struct encoder *e, const struct perf_sample *s,
                 int64_t realtime_offset_ns) {
        const void *raw = s->raw.data;
        size_t raw_size = s->raw.size;
        size_t bound = e->fixed_max + e->raw_factor * raw_size;
        bool has_sample = s->sample_type & e->sample_show & ~(uint64_t) ENCODE_SAMPLE_TOP;
        char *p, *start;
        int r;

        if (has_sample)
                bound += encode_sample_max(s, e->sample_show, &e->ids);
        r = jbuf_reserve(b, bound);
        if (r < 0)
                return r;

        /* Written past b->len and committed only at the end: a field that
         * does not decode leaves the buffer as it was. */
        start = p = jbuf_end(b);
        p = json_put_bytes(p, e->prefix, e->prefix_len);

        if (s->sample_type & PERF_SAMPLE_TIME) {
                uint64_t rt = s->time + (uint64_t) realtime_offset_ns;

                /* Saturate rather than wrap on a nonsense offset. */
                if (realtime_offset_ns < 0 ? rt > s->time : rt < s->time)
                        rt = realtime_offset_ns < 0 ? 0 : UINT64_MAX;
                p = json_put_literal(p, KEY_TIME);
                p = json_put_time(p, rt);
                p = json_put_literal(p, KEY_TS);
                p = json_put_u64(p, s->time);
        }
        if (s->sample_type & PERF_SAMPLE_CPU) {
                p = json_put_literal(p, KEY_CPU);
                p = json_put_u64(p, s->cpu);
        }
        if (s->sample_type & PERF_SAMPLE_TID) {
                p = json_put_literal(p, KEY_PID);
                p = json_put_u64(p, s->pid);
                p = json_put_literal(p, KEY_TID);
                p = json_put_u64(p, s->tid);
        }
        if (e->fmt)
                p = json_put_literal(p, KEY_FIELDS);

        for (size_t i = 0; i < e->n_fields; i++) {
                const struct encoder_field *ef = &e->fields[i];
                const struct format_field *f = ef->f;
                struct field_value v;
                size_t limit;

                r = field_decode(f, raw, raw_size, &v);
                if (r < 0)
                        return r;

                p = json_put_bytes(p, ef->key, ef->key_len);
                switch (f->kind) {
                case FIELD_INT:
                        if (f->elem_signed)
                                p = json_put_i64(p, v.i);
                        else
                                p = json_put_u64(p, v.u);
                        break;
                case FIELD_BOOL:
                        if (v.b)
                                p = json_put_literal(p, "true");
                        else
                                p = json_put_literal(p, "false");
                        break;
                case FIELD_POINTER:
                        p = json_put_hex(p, v.u);
                        break;
                case FIELD_CHARS:
                case FIELD_DYN_STRING:
                        /* The bound assumed these limits; refuse a value
                         * beyond them rather than overrun. */
                        limit = f->kind == FIELD_CHARS ? f->size : raw_size;
                        if (_unlikely_(v.str.len > limit))
                                return -EBADMSG;
                        p = json_put_string(p, v.str.ptr, v.str.len);
                        break;
                case FIELD_ARRAY:
                case FIELD_DYN_ARRAY:
                        limit = f->kind == FIELD_ARRAY ? f->size : raw_size;
                        if (_unlikely_(v.arr.count > limit / (f->elem_size > 0 ? f->elem_size : 1)))
                                return -EBADMSG;
                        p = put_array(p, ef, &v);
                        break;
                default:
                        return -EBADMSG;        /* encoder_new() let no other kind in */
                }
        }

        if (e->fmt)
                *p++ = '}';
        if (has_sample)
                p = encode_sample_put(p, s, e->sample_show, &e->ids);
        p = json_put_literal(p, LINE_END);
        assert((size_t) (p - start) <= bound);
        jbuf_set_end(b, p);
        return 0;
}

int encode_lost(struct jbuf *b, int cpu, uint64_t count) {
        char *p;
        int r;

        r = jbuf_reserve(b, sizeof("{\"type\":\"lost\",\"cpu\":,\"count\":}\n") + 2 * JSON_INT_MAX);
        if (r < 0)
                return r;
        p = json_put_literal(jbuf_end(b), "{\"type\":\"lost\",\"cpu\":");
        p = json_put_i64(p, cpu);
        p = json_put_literal(p, ",\"count\":");
        p = json_put_u64(p, count);
        p = json_put_literal(p, "}\n");
        jbuf_set_end(b, p);
        return 0;
}

int encode_dropped(struct jbuf *b, uint64_t count) {
        char *p;
        int r;

        r = jbuf_reserve(b, sizeof("{\"type\":\"dropped\",\"count\":}\n") + JSON_INT_MAX);
        if (r < 0)
                return r;
        p = json_put_literal(jbuf_end(b), "{\"type\":\"dropped\",\"count\":");
        p = json_put_u64(p, count);
        p = json_put_literal(p, "}\n");
        jbuf_set_end(b, p);
        return 0;
}
