/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "evmon/cleanup.h"
#include "evmon/clock.h"
#include "evmon/encode-perf.h"
#include "evmon/encode.h"
#include "evmon/protocol.h"

/* ---- encoders ---------------------------------------------------------------- */

struct encoder_field {
        const struct format_field *f;
        const char *key;                /* ,"name": (no comma for the first), into keys */
        size_t key_len;
        uint8_t bits;                   /* array elements: width to hold values to, 0 = 64 */
};

/* A field with names from the print fmt (tracefs printfmt.c). */
struct encoder_symbols {
        const struct format_field *f;
        const struct field_symbols *sym;
        const char *key;                /* as encoder_field's */
        size_t key_len;
};

struct encoder {
        const struct format *fmt;
        struct encoder_symbols *syms;
        size_t n_syms;
        char *sym_keys;
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

#define PREFIX_HEAD "{\"type\":\"" EVMON_LINE_EVENT "\",\"event\":"
#define KEY_TIME ",\"time\":"
#define KEY_TS ",\"ts\":"
#define KEY_CPU ",\"cpu\":"
#define KEY_PID ",\"pid\":"
#define KEY_TID ",\"tid\":"
#define KEY_FIELDS ",\"fields\":{"
#define KEY_SYMBOLS ",\"symbols\":{"
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
        free(e->syms);
        free(e->sym_keys);
        free(e->fields);
        free(e);
        return NULL;
}

const struct format *encoder_format(const struct encoder *e) {
        return e->fmt;
}

/* The "symbols" object: the names the print fmt gives the non-common
 * fields of FMT, keyed like "fields". */
static int encoder_symbols_init(struct encoder *e, const struct format *fmt) {
        size_t n = 0, keys_size = 0;
        char *p;

        for (size_t i = 0; fmt && i < fmt->n_symbols; i++)
                if (fmt->symbols[i].field >= fmt->n_common) {
                        keys_size += 2 + json_escaped_max(strlen(fmt->fields[fmt->symbols[i].field].name));
                        n++;
                }
        if (n == 0)
                return 0;
        e->syms = calloc(n, sizeof(*e->syms));
        e->sym_keys = malloc(keys_size);
        if (!e->syms || !e->sym_keys)
                return -ENOMEM;

        e->fixed_max += sizeof(KEY_SYMBOLS) - 1 + 1;
        p = e->sym_keys;
        for (size_t i = 0; i < fmt->n_symbols; i++) {
                const struct field_symbols *sym = &fmt->symbols[i];
                const struct format_field *f = &fmt->fields[sym->field];
                struct encoder_symbols *es = &e->syms[e->n_syms];

                if (sym->field < fmt->n_common)
                        continue;
                /* symbols_name() fills a stack buffer of this size. */
                if (sym->name_max > SYMBOLS_NAME_MAX)
                        return -EINVAL;
                es->f = f;
                es->sym = sym;
                es->key = p;
                if (e->n_syms > 0)
                        *p++ = ',';
                p = json_put_string(p, f->name, strlen(f->name));
                *p++ = ':';
                es->key_len = (size_t) (p - es->key);
                e->fixed_max += es->key_len + json_escaped_max(sym->name_max);
                e->n_syms++;
        }
        return 0;
}

int encoder_new(const char *event_name, const struct format *fmt, struct encoder **ret) {
        _cleanup_(encoder_freep) struct encoder *e = NULL;
        size_t n, keys_size = 0;
        char *p;
        int r;

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

        r = encoder_symbols_init(e, fmt);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(e);
        return 0;
}

void encoder_set_sample_show(struct encoder *e, uint64_t sample_show) {
        e->sample_show = sample_show;
}

uint64_t encoder_sample_show(const struct encoder *e) {
        return e->sample_show;
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

size_t encode_context_max(const struct encode_context *c) {
        size_t n = sizeof(",\"proc\":{\"comm\":,\"exe\":,\"ppid\":,\"uid\":},\"cgroup\":,\"container\":,\"container_uid\":,\"pod\":") +
                   3 * JSON_INT_MAX;

        if (c->json)
                return c->json_len;

        if (c->comm)
                n += json_escaped_max(strlen(c->comm));
        if (c->exe)
                n += json_escaped_max(strlen(c->exe));
        if (c->cgroup)
                n += json_escaped_max(strlen(c->cgroup));
        if (c->container)
                n += json_escaped_max(strlen(c->container));
        if (c->pod)
                n += json_escaped_max(strlen(c->pod));
        if (c->pcomm)
                n += sizeof(",\"pcomm\":") + json_escaped_max(strlen(c->pcomm));
        if (c->runtime) {
                const char *const s[] = { c->runtime, c->name, c->image, c->image_id,
                                          c->pod_name, c->pod_namespace, c->pod_container };

                n += sizeof(",\"container_info\":{\"runtime\":,\"name\":,\"image\":,\"image_id\":,\"pod\":"
                            "{\"name\":,\"namespace\":,\"uid\":,\"container\":},\"verified\":false}");
                for (size_t i = 0; i < ELEMENTSOF(s); i++)
                        if (s[i])
                                n += json_escaped_max(strlen(s[i]));
                if (c->pod)
                        n += json_escaped_max(strlen(c->pod));
        }
        return n;
}

static char *put_key_string(char *p, const char *key, size_t key_len, const char *v) {
        if (!v)
                return p;
        p = json_put_bytes(p, key, key_len);
        return json_put_string(p, v, strlen(v));
}

#define PUT_KEY_STRING(p, key, v) put_key_string(p, key, sizeof(key) - 1, v)

/* What the runtime's state says of the container (issue 31): beside the
 * id, so "container" keeps its shape and the protocol its version. */
static char *put_container_info(char *p, const struct encode_context *c) {
        p = PUT_KEY_STRING(p, ",\"container_info\":{\"runtime\":", c->runtime);
        p = PUT_KEY_STRING(p, ",\"name\":", c->name);
        p = PUT_KEY_STRING(p, ",\"image\":", c->image);
        p = PUT_KEY_STRING(p, ",\"image_id\":", c->image_id);
        if (c->pod_name || c->pod_namespace || c->pod_container) {
                char *first;

                p = json_put_literal(p, ",\"pod\":{");
                first = p;
                p = PUT_KEY_STRING(p, ",\"name\":", c->pod_name);
                p = PUT_KEY_STRING(p, ",\"namespace\":", c->pod_namespace);
                p = PUT_KEY_STRING(p, ",\"uid\":", c->pod);
                p = PUT_KEY_STRING(p, ",\"container\":", c->pod_container);
                /* Drop the first member's comma. */
                memmove(first, first + 1, (size_t) (p - first - 1));
                p[-1] = '}';
        }
        if (c->verified)
                return json_put_literal(p, ",\"verified\":true}");
        return json_put_literal(p, ",\"verified\":false}");
}

char *encode_context_put(char *p, const struct encode_context *c) {
        if (c->json)
                return json_put_bytes(p, c->json, c->json_len);
        if (c->comm || c->exe || c->ppid >= 0 || c->uid >= 0) {
                char *first;

                p = json_put_literal(p, ",\"proc\":{");
                first = p;
                if (c->comm) {
                        p = json_put_literal(p, ",\"comm\":");
                        p = json_put_string(p, c->comm, strlen(c->comm));
                }
                if (c->exe) {
                        p = json_put_literal(p, ",\"exe\":");
                        p = json_put_string(p, c->exe, strlen(c->exe));
                }
                if (c->ppid >= 0) {
                        p = json_put_literal(p, ",\"ppid\":");
                        p = json_put_i64(p, c->ppid);
                }
                if (c->pcomm) {
                        p = json_put_literal(p, ",\"pcomm\":");
                        p = json_put_string(p, c->pcomm, strlen(c->pcomm));
                }
                if (c->uid >= 0) {
                        p = json_put_literal(p, ",\"uid\":");
                        p = json_put_i64(p, c->uid);
                }
                /* Drop the first member's comma. */
                memmove(first, first + 1, (size_t) (p - first - 1));
                p[-1] = '}';
        }
        if (c->cgroup) {
                p = json_put_literal(p, ",\"cgroup\":");
                p = json_put_string(p, c->cgroup, strlen(c->cgroup));
        }
        if (c->container) {
                p = json_put_literal(p, ",\"container\":");
                p = json_put_string(p, c->container, strlen(c->container));
                if (c->container_uid >= 0) {
                        p = json_put_literal(p, ",\"container_uid\":");
                        p = json_put_i64(p, c->container_uid);
                }
                if (c->runtime)
                        p = put_container_info(p, c);
        }
        if (c->pod) {
                p = json_put_literal(p, ",\"pod\":");
                p = json_put_string(p, c->pod, strlen(c->pod));
        }
        return p;
}

int encode_event(struct jbuf *b, const struct encoder *e, const struct perf_sample *s,
                 int64_t realtime_offset_ns) {
        return encode_event_ext(b, e, s, realtime_offset_ns, NULL, NULL);
}

/* The sample's time, cpu, pid and tid, each when the sample has it. */
static inline char *put_sample_header(char *p, const struct perf_sample *s, int64_t realtime_offset_ns) {
        if (s->sample_type & PERF_SAMPLE_TIME) {
                p = json_put_literal(p, KEY_TIME);
                p = json_put_time(p, clock_to_realtime(s->time, realtime_offset_ns));
                p = json_put_literal(p, KEY_TS);
                p = json_put_u64(p, s->time);
        }
        if (s->sample_type & PERF_SAMPLE_CPU) {
                p = json_put_literal(p, KEY_CPU);
                p = json_put_u64(p, s->cpu);
        }
        if (s->sample_type & PERF_SAMPLE_TID) {
                /* Signed, as perf prints them: the kernel gives -1 for a
                 * task past its exit (perf_event_pid_type()). */
                p = json_put_literal(p, KEY_PID);
                p = json_put_i64(p, (int32_t) s->pid);
                p = json_put_literal(p, KEY_TID);
                p = json_put_i64(p, (int32_t) s->tid);
        }
        return p;
}

/* The event's fields, decoded from RAW (RAW_SIZE bytes) at *PP; 0, or
 * -EBADMSG for a field that does not decode. */
static inline int put_event_fields(char **pp, const struct encoder *e, const void *raw, size_t raw_size) {
        char *p = *pp;
        int r;

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
        *pp = p;
        return 0;
}

/* The names of the fields' values (the print fmt's tables) at *PP; 0,
 * or -EBADMSG. */
static inline int put_event_symbols(char **pp, const struct encoder *e, const void *raw, size_t raw_size) {
        char name[SYMBOLS_NAME_MAX];
        char *p = *pp;
        int r;

        p = json_put_literal(p, KEY_SYMBOLS);
        for (size_t i = 0; i < e->n_syms; i++) {
                const struct encoder_symbols *es = &e->syms[i];
                struct field_value v;
                uint64_t x;
                size_t n;

                r = field_decode(es->f, raw, raw_size, &v);
                if (r < 0)
                        return r;
                x = v.kind == FIELD_BOOL ? v.b : es->f->elem_signed ? (uint64_t) v.i : v.u;
                n = symbols_name(es->sym, x, name, sizeof(name));
                p = json_put_bytes(p, es->key, es->key_len);
                p = json_put_string(p, name, n);
        }
        *p++ = '}';
        *pp = p;
        return 0;
}

int encode_event_ext(struct jbuf *b, const struct encoder *e, const struct perf_sample *s,
                     int64_t realtime_offset_ns, const struct encode_context *ctx,
                     const struct encode_frame *frames) {
        return encode_event_show(b, e, s, realtime_offset_ns, ctx, frames, 0);
}

static int event_put(struct jbuf *b, const struct encoder *e, const struct perf_sample *s,
                     int64_t realtime_offset_ns, const struct encode_context *ctx,
                     const struct encode_frame *frames, uint64_t show_more, size_t *ret_context_at) {
        const void *raw = s->raw.data;
        size_t raw_size = s->raw.size;
        size_t bound = e->fixed_max + e->raw_factor * raw_size;
        /* The stack's bytes are a line's, never the encoder's (its
         * default shows every bit). */
        uint64_t show = (e->sample_show & ~ENCODE_SAMPLE_STACK_DATA) | show_more;
        bool has_sample = s->sample_type & show & ~(uint64_t) ENCODE_SAMPLE_TOP;
        char *p, *start;
        int r;

        if (has_sample)
                bound += encode_sample_max_frames(s, show, &e->ids, frames);
        if (ctx)
                bound += encode_context_max(ctx);
        r = jbuf_reserve(b, bound);
        if (r < 0)
                return r;

        /* Written past b->len and committed only at the end: a field that
         * does not decode leaves the buffer as it was. */
        start = p = jbuf_end(b);
        p = json_put_bytes(p, e->prefix, e->prefix_len);

        p = put_sample_header(p, s, realtime_offset_ns);
        if (ret_context_at)
                *ret_context_at = (size_t) (p - start);
        if (ctx)
                p = encode_context_put(p, ctx);
        if (e->fmt)
                p = json_put_literal(p, KEY_FIELDS);

        r = put_event_fields(&p, e, raw, raw_size);
        if (r < 0)
                return r;
        if (e->fmt)
                *p++ = '}';
        if (e->n_syms > 0) {
                r = put_event_symbols(&p, e, raw, raw_size);
                if (r < 0)
                        return r;
        }
        if (has_sample)
                p = encode_sample_put_frames(p, s, show, &e->ids, frames);
        p = json_put_literal(p, LINE_END);
        assert((size_t) (p - start) <= bound);
        jbuf_set_end(b, p);
        return 0;
}

int encode_event_show(struct jbuf *b, const struct encoder *e, const struct perf_sample *s,
                      int64_t realtime_offset_ns, const struct encode_context *ctx,
                      const struct encode_frame *frames, uint64_t show_more) {
        return event_put(b, e, s, realtime_offset_ns, ctx, frames, show_more, NULL);
}

int encode_event_split(struct jbuf *b, const struct encoder *e, const struct perf_sample *s,
                       int64_t realtime_offset_ns, size_t *ret_context_at) {
        return event_put(b, e, s, realtime_offset_ns, NULL, NULL, 0, ret_context_at);
}

int encode_event_splice(struct jbuf *b, const char *line, size_t len, size_t context_at,
                        const struct encode_context *c) {
        char *p;
        int r;

        assert(context_at <= len);
        r = jbuf_reserve(b, len + (c ? encode_context_max(c) : 0));
        if (r < 0)
                return r;
        p = json_put_bytes(jbuf_end(b), line, context_at);
        if (c)
                p = encode_context_put(p, c);
        p = json_put_bytes(p, line + context_at, len - context_at);
        jbuf_set_end(b, p);
        return 0;
}

int encode_lost(struct jbuf *b, int cpu, uint64_t count) {
        char *p;
        int r;

        r = jbuf_reserve(b, sizeof("{\"type\":\"" EVMON_LINE_LOST "\",\"cpu\":,\"count\":}\n") + 2 * JSON_INT_MAX);
        if (r < 0)
                return r;
        p = json_put_literal(jbuf_end(b), "{\"type\":\"" EVMON_LINE_LOST "\",\"cpu\":");
        p = json_put_i64(p, cpu);
        p = json_put_literal(p, ",\"count\":");
        p = json_put_u64(p, count);
        p = json_put_literal(p, "}\n");
        jbuf_set_end(b, p);
        return 0;
}

int encode_dropped(struct jbuf *b, uint64_t count, uint64_t lost) {
        char *p;
        int r;

        r = jbuf_reserve(b, sizeof("{\"type\":\"" EVMON_LINE_DROPPED "\",\"count\":,\"lost\":}\n") + 2 * JSON_INT_MAX);
        if (r < 0)
                return r;
        p = json_put_literal(jbuf_end(b), "{\"type\":\"" EVMON_LINE_DROPPED "\",\"count\":");
        p = json_put_u64(p, count);
        if (lost > 0) {
                p = json_put_literal(p, ",\"lost\":");
                p = json_put_u64(p, lost);
        }
        p = json_put_literal(p, "}\n");
        jbuf_set_end(b, p);
        return 0;
}
