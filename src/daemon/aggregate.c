/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>

#include "aggregate.h"
#include "evmon/encode-perf.h"
#include "evmon/error.h"
#include "evmon/strv.h"

/* An entry's key: one value per "by" key. A string is an offset + 1
 * into the window's arena (0: not known, written as null). */
enum { TAG_INT, TAG_STR, TAG_NULL };

struct agg_entry {
        uint64_t key[AGG_BY_MAX * 2];   /* value, tag (TAG_*) */
        uint64_t hash;
        uint64_t count;
        int64_t sum, min, max;
        uint64_t *buckets;      /* hist, lhist, latency: n_buckets */
};

/* An interned string: raw bytes (or, for a stack, the JSON array made
 * once) at off in the arena. Stacks are told apart by the hash of their
 * addresses alone. */
struct agg_str {
        uint64_t hash;
        uint32_t off, len;
        bool json;
};

struct agg_pending {
        uint64_t key;           /* match value + 1; 0: free slot */
        uint64_t ts;
};

struct aggregate {
        struct agg_spec spec;
        /* By event index: 1 folds (an end, for latency), 2 starts. */
        uint8_t *role;
        const struct format_field **value_field;        /* n_events */
        const struct format_field **key_field[AGG_BY_MAX];
        const struct format_field **match_field;
        size_t n_events;
        bool key_is_string[AGG_BY_MAX];

        struct agg_entry *entries;      /* max_keys */
        uint64_t *buckets;              /* max_keys * n_buckets */
        size_t n_buckets;
        size_t n_used;
        uint32_t *slots;                /* entry index + 1; 0: free */
        size_t n_slots;                 /* a power of two */

        char *arena;
        size_t arena_len, arena_size;
        /* The last string interned by intern_string(): a process's
         * samples come in runs, its comm (or exe, cgroup) the same bytes
         * at the same address each time. Checked by its bytes, against
         * the interned copy; forgotten when the strings are. */
        const char *last_s;
        uint64_t last_id;
        struct agg_str *strs;
        uint32_t *str_slots;
        size_t n_strs, max_strs, n_str_slots;

        struct agg_pending *pending;
        size_t n_pending, n_pending_slots;

        uint32_t *order;                /* agg_emit()'s sort */

        uint64_t start_ts;
        uint64_t events, lost, keys_dropped, unmatched, pending_dropped;
};

static const char *const key_names[_AGG_KEY_KIND_MAX] = {
        [AGG_KEY_PID] = "pid",
        [AGG_KEY_TID] = "tid",
        [AGG_KEY_COMM] = "comm",
        [AGG_KEY_EXE] = "exe",
        [AGG_KEY_UID] = "uid",
        [AGG_KEY_CGROUP] = "cgroup",
        [AGG_KEY_CONTAINER] = "container",
        [AGG_KEY_CPU] = "cpu",
        [AGG_KEY_EVENT] = "event",
        [AGG_KEY_FIELD] = "field:",
        [AGG_KEY_STACK] = "stack",
        [AGG_KEY_KSTACK] = "kstack",
        [AGG_KEY_USTACK] = "ustack",
        [AGG_KEY_FRAME] = "frame",
};

static const char *const op_names[_AGG_OP_MAX] = {
        [AGG_OP_COUNT] = "count",
        [AGG_OP_SUM] = "sum",
        [AGG_OP_MIN] = "min",
        [AGG_OP_MAX] = "max",
        [AGG_OP_AVG] = "avg",
        [AGG_OP_HIST] = "hist",
        [AGG_OP_LHIST] = "lhist",
        [AGG_OP_LATENCY] = "latency",
};

void agg_spec_done(struct agg_spec *s) {
        for (size_t i = 0; i < AGG_BY_MAX; i++)
                free(s->by[i].field);
        free(s->field);
        free(s->start);
        free(s->end);
        free(s->match.field);
        *s = (struct agg_spec) {};
}

int agg_key_parse(const char *s, struct agg_key_spec *ret) {
        if (strncmp(s, "field:", 6) == 0) {
                if (!s[6] || strlen(s + 6) > 255)
                        return -EINVAL;
                ret->kind = AGG_KEY_FIELD;
                ret->field = strdup(s + 6);
                return ret->field ? 0 : -ENOMEM;
        }
        for (int k = 0; k < _AGG_KEY_KIND_MAX; k++)
                if (k != AGG_KEY_FIELD && strcmp(s, key_names[k]) == 0) {
                        *ret = (struct agg_key_spec) { .kind = k };
                        return 0;
                }
        return -EINVAL;
}

const char *agg_op_to_string(enum agg_op op) {
        return op < _AGG_OP_MAX ? op_names[op] : NULL;
}

int agg_op_from_string(const char *s) {
        for (int i = 0; i < _AGG_OP_MAX; i++)
                if (strcmp(s, op_names[i]) == 0)
                        return i;
        return -EINVAL;
}

const char *agg_key_name(const struct agg_key_spec *k) {
        return k->kind == AGG_KEY_FIELD ? k->field : key_names[k->kind];
}

static bool key_is_stack(enum agg_key_kind k) {
        return k >= AGG_KEY_STACK;
}

static bool op_has_field(enum agg_op op) {
        return op >= AGG_OP_SUM && op <= AGG_OP_LHIST;
}

static bool bit_set(const uint64_t *bits, size_t i) {
        return bits && (bits[i >> 6] & (UINT64_C(1) << (i & 63)));
}

static size_t pow2_at_least(size_t n) {
        size_t p = 16;
        while (p < n)
                p <<= 1;
        return p;
}

/* splitmix64's finalizer: cheap, and every input bit moves every output bit. */
static inline uint64_t mix(uint64_t x) {
        x ^= x >> 30;
        x *= UINT64_C(0xbf58476d1ce4e5b9);
        x ^= x >> 27;
        x *= UINT64_C(0x94d049bb133111eb);
        x ^= x >> 31;
        return x;
}

static uint64_t hash_bytes(const void *p, size_t n, uint64_t seed) {
        const unsigned char *b = p;
        uint64_t h = seed ^ (n * UINT64_C(0x9e3779b97f4a7c15));

        for (; n >= 8; n -= 8, b += 8) {
                uint64_t v;
                memcpy(&v, b, 8);
                h = mix(h ^ v);
        }
        if (n > 0) {
                uint64_t v = 0;
                memcpy(&v, b, n);
                h = mix(h ^ v ^ 0x80);
        }
        return h;
}

static const struct format_field *field_of(const struct agg_event_info *e, const char *name) {
        return e->format ? format_field_find(e->format, name) : NULL;
}

static bool field_is_integer(const struct format_field *f) {
        return f->kind == FIELD_INT || f->kind == FIELD_BOOL || f->kind == FIELD_POINTER;
}

static bool field_is_string(const struct format_field *f) {
        return f->kind == FIELD_CHARS || f->kind == FIELD_DYN_STRING;
}

/* Looks up every field by event; on !CHECK a missing one only leaves the
 * event out. */
static int resolve(struct aggregate *a, const struct agg_event_info *info, size_t n, const uint64_t *start_bits,
                   const uint64_t *end_bits, bool check, char **ret_error) {
        const struct agg_spec *sp = &a->spec;

        memset(a->role, 0, a->n_events);
        for (size_t i = 0; i < a->n_events; i++) {
                bool end = i < n && bit_set(end_bits, i), start = i < n && sp->op == AGG_OP_LATENCY && bit_set(start_bits, i);
                const struct agg_event_info *e = &info[i];
                bool ok = true;

                a->value_field[i] = NULL;
                a->match_field[i] = NULL;
                for (size_t k = 0; k < AGG_BY_MAX; k++)
                        a->key_field[k][i] = NULL;
                if (!end && !start)
                        continue;
                if (end && op_has_field(sp->op)) {
                        const struct format_field *f = field_of(e, sp->field);

                        if (!f || !field_is_integer(f)) {
                                if (check)
                                        return error_set(ret_error, -EINVAL, "aggregate: %s has no integer field \"%s\"%s",
                                                         e->name, sp->field,
                                                         f ? " (it is a string or an array)" :
                                                         " (evmonctl describe EVENT lists its fields)");
                                ok = false;
                        }
                        a->value_field[i] = f;
                }
                for (size_t k = 0; end && k < sp->n_by; k++) {
                        const struct agg_key_spec *ks = &sp->by[k];

                        if (ks->kind == AGG_KEY_FIELD) {
                                const struct format_field *f = field_of(e, ks->field);

                                if (!f || !(field_is_integer(f) || field_is_string(f))) {
                                        if (check)
                                                return error_set(ret_error, -EINVAL, "aggregate: by \"field:%s\": %s has no "
                                                                 "%s field \"%s\" (evmonctl describe EVENT lists its fields)",
                                                                 ks->field, e->name, f ? "integer or string" : "such",
                                                                 ks->field);
                                        ok = false;
                                }
                                a->key_field[k][i] = f;
                        } else if (key_is_stack(ks->kind) && !(e->sample_type & PERF_SAMPLE_CALLCHAIN)) {
                                if (check)
                                        return error_set(ret_error, -EINVAL, "aggregate: by \"%s\": %s has no callchain: "
                                                         "give the event \"callchain\": true in the config (or "
                                                         "evmonctl add with it)", key_names[ks->kind], e->name);
                                ok = false;
                        }
                }
                if (sp->op == AGG_OP_LATENCY && sp->match.kind == AGG_KEY_FIELD) {
                        const struct format_field *f = field_of(e, sp->match.field);

                        if (!f || !(field_is_integer(f) || field_is_string(f))) {
                                if (check)
                                        return error_set(ret_error, -EINVAL, "aggregate: match \"field:%s\": %s has no "
                                                         "field \"%s\"", sp->match.field, e->name, sp->match.field);
                                ok = false;
                        }
                        a->match_field[i] = f;
                }
                if (ok)
                        a->role[i] = (end ? 1 : 0) | (start ? 2 : 0);
        }
        return 0;
}

int agg_new(const struct agg_spec *spec, const struct agg_event_info *info, size_t n, const uint64_t *start_bits,
            const uint64_t *end_bits, struct aggregate **ret, char **ret_error) {
        _cleanup_(agg_freep) struct aggregate *a = NULL;
        size_t max_keys, n_str_keys = 0;
        bool stacks = false;
        int r;

        a = calloc(1, sizeof(*a));
        if (!a)
                return -ENOMEM;
        /* The spec's strings are the request's: copied. */
        a->spec = *spec;
        a->spec.field = a->spec.start = a->spec.end = a->spec.match.field = NULL;
        for (size_t k = 0; k < AGG_BY_MAX; k++)
                a->spec.by[k].field = NULL;
        if ((spec->field && !(a->spec.field = strdup(spec->field))) ||
            (spec->start && !(a->spec.start = strdup(spec->start))) ||
            (spec->end && !(a->spec.end = strdup(spec->end))) ||
            (spec->match.field && !(a->spec.match.field = strdup(spec->match.field))))
                return -ENOMEM;
        for (size_t k = 0; k < spec->n_by; k++) {
                if (spec->by[k].field && !(a->spec.by[k].field = strdup(spec->by[k].field)))
                        return -ENOMEM;
                stacks = stacks || key_is_stack(spec->by[k].kind);
        }

        if (spec->op == AGG_OP_HIST || spec->op == AGG_OP_LATENCY)
                a->n_buckets = AGG_LOG2_BUCKETS;
        else if (spec->op == AGG_OP_LHIST)
                a->n_buckets = (size_t) ((spec->lmax - spec->lmin + spec->lstep - 1) / spec->lstep) + 2;
        max_keys = spec->max_keys ? spec->max_keys : AGG_MAX_KEYS_DEFAULT;
        if (max_keys > AGG_MAX_KEYS_MAX)
                max_keys = AGG_MAX_KEYS_MAX;
        /* A table is at most AGG_CELLS_MAX buckets (8 MiB), whatever the
         * client asked: fewer keys for a finer histogram. The answer says
         * how many it got. */
        if (a->n_buckets > 0 && max_keys > AGG_CELLS_MAX / a->n_buckets)
                max_keys = AGG_CELLS_MAX / a->n_buckets;
        a->spec.max_keys = (uint32_t) max_keys;

        a->n_events = n;
        a->role = calloc(n ? n : 1, 1);
        a->value_field = calloc(n ? n : 1, sizeof(*a->value_field));
        a->match_field = calloc(n ? n : 1, sizeof(*a->match_field));
        if (!a->role || !a->value_field || !a->match_field)
                return -ENOMEM;
        for (size_t k = 0; k < AGG_BY_MAX; k++) {
                a->key_field[k] = calloc(n ? n : 1, sizeof(*a->key_field[k]));
                if (!a->key_field[k])
                        return -ENOMEM;
        }
        r = resolve(a, info, n, start_bits, end_bits, true, ret_error);
        if (r < 0)
                return r;

        a->entries = calloc(max_keys, sizeof(*a->entries));
        a->n_slots = pow2_at_least(max_keys * 2);
        a->slots = calloc(a->n_slots, sizeof(*a->slots));
        a->order = calloc(max_keys, sizeof(*a->order));
        if (!a->entries || !a->slots || !a->order)
                return -ENOMEM;
        if (a->n_buckets > 0) {
                /* Untouched pages of a large calloc() are the kernel's zero
                 * page: a table of few keys costs what it uses. */
                a->buckets = calloc(max_keys * a->n_buckets, sizeof(uint64_t));
                if (!a->buckets)
                        return -ENOMEM;
                for (size_t i = 0; i < max_keys; i++)
                        a->entries[i].buckets = a->buckets + i * a->n_buckets;
        }

        for (size_t k = 0; k < spec->n_by; k++) {
                enum agg_key_kind kk = spec->by[k].kind;
                a->key_is_string[k] = kk == AGG_KEY_COMM || kk == AGG_KEY_EXE || kk == AGG_KEY_CGROUP ||
                                      kk == AGG_KEY_CONTAINER || kk == AGG_KEY_FIELD || key_is_stack(kk);
                n_str_keys += a->key_is_string[k];
        }
        if (n_str_keys > 0) {
                a->max_strs = max_keys * n_str_keys;
                a->n_str_slots = pow2_at_least(a->max_strs * 2);
                /* Comms are 16 bytes, paths and frames longer: a stack of
                 * 127 symbolized frames is some 8 KiB of JSON. */
                a->arena_size = stacks ? 16u << 20 : max_keys * n_str_keys * 64 + 65536;
                a->arena = malloc(a->arena_size);
                a->strs = calloc(a->max_strs, sizeof(*a->strs));
                a->str_slots = calloc(a->n_str_slots, sizeof(*a->str_slots));
                if (!a->arena || !a->strs || !a->str_slots)
                        return -ENOMEM;
        }
        if (spec->op == AGG_OP_LATENCY) {
                a->n_pending_slots = pow2_at_least(AGG_PENDING_MAX * 2 > max_keys * 4 ? max_keys * 4 : AGG_PENDING_MAX * 2);
                a->pending = calloc(a->n_pending_slots, sizeof(*a->pending));
                if (!a->pending)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(a);
        return 0;
}

void agg_resolve(struct aggregate *a, const struct agg_event_info *info, size_t n, const uint64_t *start_bits,
                 const uint64_t *end_bits) {
        /* Indexes beyond those we had room for fold nothing. */
        (void) resolve(a, info, n < a->n_events ? n : a->n_events, start_bits, end_bits, false, NULL);
}

struct aggregate *agg_free(struct aggregate *a) {
        if (!a)
                return NULL;
        agg_spec_done(&a->spec);
        free(a->role);
        free(a->value_field);
        free(a->match_field);
        for (size_t k = 0; k < AGG_BY_MAX; k++)
                free(a->key_field[k]);
        free(a->entries);
        free(a->buckets);
        free(a->slots);
        free(a->order);
        free(a->arena);
        free(a->strs);
        free(a->str_slots);
        free(a->pending);
        free(a);
        return NULL;
}

void agg_start(struct aggregate *a, uint64_t ts) {
        a->start_ts = ts;
}

void agg_add_lost(struct aggregate *a, uint64_t n) {
        a->lost += n;
}

uint64_t agg_n_keys(const struct aggregate *a) {
        return a->n_used;
}

void agg_get_spec(const struct aggregate *a, struct agg_spec *ret) {
        *ret = a->spec;
}

uint64_t agg_interval_ms(const struct aggregate *a) {
        return a->spec.interval_ms;
}

/* ---- strings ------------------------------------------------------------ */

/* The interned string HASH (S, N bytes; or made by MAKE for a stack) as
 * offset + 1, or 0 when the arena or table is full. */
static uint64_t intern(struct aggregate *a, uint64_t hash, const char *s, size_t n, bool json) {
        size_t mask = a->n_str_slots - 1;

        for (size_t i = hash & mask;; i = (i + 1) & mask) {
                uint32_t x = a->str_slots[i];
                struct agg_str *e;

                if (x == 0) {
                        if (a->n_strs >= a->max_strs || n > a->arena_size - a->arena_len || n > UINT32_MAX)
                                return 0;
                        e = &a->strs[a->n_strs];
                        *e = (struct agg_str) { .hash = hash, .off = (uint32_t) a->arena_len, .len = (uint32_t) n,
                                                .json = json };
                        memmove(a->arena + a->arena_len, s, n);
                        a->arena_len += n;
                        a->str_slots[i] = (uint32_t) ++a->n_strs;
                        return a->n_strs;
                }
                e = &a->strs[x - 1];
                if (e->hash == hash && e->json == json && (json || (e->len == n && memcmp(a->arena + e->off, s, n) == 0)))
                        return x;
        }
}

/* A stack seen before, by the hash of its addresses, without making it. */
static uint64_t intern_find(struct aggregate *a, uint64_t hash) {
        size_t mask = a->n_str_slots - 1;

        for (size_t i = hash & mask;; i = (i + 1) & mask) {
                uint32_t x = a->str_slots[i];

                if (x == 0)
                        return 0;
                if (a->strs[x - 1].hash == hash && a->strs[x - 1].json)
                        return x;
        }
}

static uint64_t intern_string(struct aggregate *a, const char *s, size_t n) {
        const struct agg_str *e;
        uint64_t id;

        if (!s)
                return UINT64_MAX;      /* null, not dropped */
        if (s == a->last_s) {
                e = &a->strs[a->last_id - 1];
                if (e->len == n && memcmp(a->arena + e->off, s, n) == 0)
                        return a->last_id;
        }
        id = intern(a, hash_bytes(s, n, 0), s, n, false);
        a->last_s = id ? s : NULL;
        a->last_id = id;
        return id;
}

/* ---- stacks ------------------------------------------------------------- */

/* Which addresses of the callchain a stack key takes: kernel, user, or
 * both; markers (PERF_CONTEXT_*) never. */
static bool stack_takes(enum agg_key_kind k, bool user) {
        return k == AGG_KEY_STACK || k == AGG_KEY_FRAME || (k == AGG_KEY_KSTACK && !user) || (k == AGG_KEY_USTACK && user);
}

/* The index of the next address from I on that stack key K takes (the
 * PERF_CONTEXT_* markers on the way set *USER), or S->n_ips: the one
 * walk of a callchain both the hash and the interned text take. */
static uint64_t stack_next(enum agg_key_kind k, const struct agg_sample *s, uint64_t i, bool *user) {
        for (; i < s->n_ips; i++) {
                uint64_t ip = s->ips[i];

                if (ip >= (uint64_t) PERF_CONTEXT_MAX)
                        *user = ip == (uint64_t) PERF_CONTEXT_USER;
                else if (stack_takes(k, *user))
                        return i;
        }
        return s->n_ips;
}

static uint64_t stack_hash(enum agg_key_kind k, const struct agg_sample *s) {
        uint64_t h = mix(k + 1);
        bool user = false;

        for (uint64_t i = stack_next(k, s, 0, &user); i < s->n_ips; i = stack_next(k, s, i + 1, &user)) {
                /* User addresses mean something only in their process. */
                h = mix(h ^ s->ips[i] ^ (user ? (uint64_t) s->pid << 48 : 0));
                if (k == AGG_KEY_FRAME)
                        break;
        }
        return h;
}

/* Writes the stack as a JSON array of frames, root first, into the arena's
 * free end, and interns it. */
static uint64_t stack_intern(struct aggregate *a, enum agg_key_kind k, uint64_t hash, const struct agg_sample *s) {
        const struct encode_frame *fr = s->frames ? s->frames(s->userdata) : NULL;
        size_t room = a->arena_size - a->arena_len, len = 0;
        char *base = a->arena + a->arena_len;
        bool user = false, first = true;
        size_t take[128], n_take = 0;

        for (uint64_t i = stack_next(k, s, 0, &user); i < s->n_ips && n_take < 128;
             i = stack_next(k, s, i + 1, &user)) {
                take[n_take++] = (size_t) i;
                if (k == AGG_KEY_FRAME)
                        break;
        }
        if (room < 2)
                return 0;
        if (k != AGG_KEY_FRAME)
                base[len++] = '[';
        for (size_t j = n_take; j-- > 0;) {
                const struct encode_frame *f = fr ? &fr[take[j]] : NULL;
                char tmp[512];
                int m;

                if (f && f->sym)
                        m = snprintf(tmp, sizeof(tmp), "%s+0x%llx", f->sym, (unsigned long long) f->off);
                else
                        m = snprintf(tmp, sizeof(tmp), "0x%llx", (unsigned long long) s->ips[take[j]]);
                if (m < 0)
                        return 0;
                if ((size_t) m >= sizeof(tmp))
                        m = sizeof(tmp) - 1;
                if (len + 1 + json_escaped_max((size_t) m) + 1 > room)
                        return 0;
                if (!first)
                        base[len++] = ',';
                first = false;
                len = (size_t) (json_put_string(base + len, tmp, (size_t) m) - base);
        }
        if (k == AGG_KEY_FRAME && n_take == 0) {
                if (room < 4)
                        return 0;
                memcpy(base, "null", 4);
                len = 4;
        }
        if (k != AGG_KEY_FRAME) {
                if (len + 1 > room)
                        return 0;
                base[len++] = ']';
        }
        /* intern() copies onto itself: the same bytes. */
        return intern(a, hash, base, len, true);
}

static uint64_t stack_key(struct aggregate *a, enum agg_key_kind k, const struct agg_sample *s) {
        uint64_t h = stack_hash(k, s), x;

        x = intern_find(a, h);
        return x ? x : stack_intern(a, k, h, s);
}

/* ---- folding ------------------------------------------------------------ */

/* An integer of field F in S, clamped to int64. False when it does not decode. */
static bool field_int(const struct format_field *f, const struct agg_sample *s, int64_t *ret) {
        struct field_value v;

        if (!f || field_decode(f, s->raw, s->raw_size, &v) < 0)
                return false;
        switch (v.kind) {
        case FIELD_INT:
                *ret = f->elem_signed ? v.i : v.u > INT64_MAX ? INT64_MAX : (int64_t) v.u;
                return true;
        case FIELD_BOOL:
                *ret = v.b;
                return true;
        case FIELD_POINTER:
                *ret = v.u > INT64_MAX ? INT64_MAX : (int64_t) v.u;
                return true;
        default:
                return false;
        }
}

/* Key component K of S: the value, UINT64_MAX for null, 0 when it did not
 * fit (the event is dropped). */
static uint64_t key_value(struct aggregate *a, size_t k, const struct agg_sample *s, bool *is_str) {
        const struct agg_key_spec *ks = &a->spec.by[k];

        *is_str = a->key_is_string[k];
        if (ks->kind == AGG_KEY_UID && s->uid < 0) {
                *is_str = true;
                return UINT64_MAX;
        }
        switch (ks->kind) {
        case AGG_KEY_PID:
                return s->pid;
        case AGG_KEY_TID:
                return s->tid;
        case AGG_KEY_CPU:
                return s->cpu;
        case AGG_KEY_EVENT:
                return s->idx;
        case AGG_KEY_UID:
                return (uint64_t) s->uid;
        case AGG_KEY_COMM:
                return intern_string(a, s->comm, s->comm ? strnlen(s->comm, 16) : 0);
        case AGG_KEY_EXE:
                return intern_string(a, s->exe, s->exe ? strlen(s->exe) : 0);
        case AGG_KEY_CGROUP:
                return intern_string(a, s->cgroup, s->cgroup ? strlen(s->cgroup) : 0);
        case AGG_KEY_CONTAINER:
                return intern_string(a, s->container, s->container ? strlen(s->container) : 0);
        case AGG_KEY_FIELD: {
                const struct format_field *f = a->key_field[k][s->idx];
                struct field_value v;

                if (!f || field_decode(f, s->raw, s->raw_size, &v) < 0) {
                        *is_str = true;
                        return UINT64_MAX;
                }
                if (v.kind == FIELD_CHARS || v.kind == FIELD_DYN_STRING)
                        return intern_string(a, v.str.ptr, v.str.len);
                /* An integer field: tagged, so "1" and the string "1" differ. */
                *is_str = false;
                int64_t i = 0;
                (void) field_int(f, s, &i);
                return (uint64_t) i;
        }
        default:
                return stack_key(a, ks->kind, s);
        }
}

static void bucket_add(struct aggregate *a, struct agg_entry *e, int64_t v) {
        size_t b;

        if (a->spec.op == AGG_OP_LHIST) {
                if (v < a->spec.lmin)
                        b = 0;
                else if (v >= a->spec.lmax)
                        b = a->n_buckets - 1;
                else
                        b = 1 + (size_t) (((uint64_t) v - (uint64_t) a->spec.lmin) / (uint64_t) a->spec.lstep);
        } else if (v < 0)
                b = 0;
        else if (v == 0)
                b = 1;
        else
                b = 2 + (size_t) (63 - __builtin_clzll((uint64_t) v));
        if (b >= a->n_buckets)
                b = a->n_buckets - 1;
        e->buckets[b]++;
}

static struct agg_entry *entry_get(struct aggregate *a, const uint64_t *key, uint64_t hash) {
        size_t mask = a->n_slots - 1;

        for (size_t i = hash & mask;; i = (i + 1) & mask) {
                uint32_t x = a->slots[i];
                struct agg_entry *e;

                if (x == 0) {
                        if (a->n_used >= a->spec.max_keys)
                                return NULL;
                        e = &a->entries[a->n_used];
                        memcpy(e->key, key, sizeof(e->key));
                        e->hash = hash;
                        e->count = 0;
                        e->sum = 0;
                        e->min = INT64_MAX;
                        e->max = INT64_MIN;
                        a->slots[i] = (uint32_t) ++a->n_used;
                        return e;
                }
                e = &a->entries[x - 1];
                if (e->hash == hash && memcmp(e->key, key, sizeof(e->key)) == 0)
                        return e;
        }
}

static void entry_add(struct aggregate *a, struct agg_entry *e, int64_t v) {
        e->count++;
        if (a->spec.op == AGG_OP_COUNT)
                return;
        if (__builtin_add_overflow(e->sum, v, &e->sum))
                e->sum = v < 0 ? INT64_MIN : INT64_MAX;
        if (v < e->min)
                e->min = v;
        if (v > e->max)
                e->max = v;
        if (e->buckets)
                bucket_add(a, e, v);
}

/* The match value of S + 1 (0 is a free slot), or 0 when it has none. */
static uint64_t match_value(struct aggregate *a, const struct agg_sample *s) {
        switch (a->spec.match.kind) {
        case AGG_KEY_PID:
                return (uint64_t) s->pid + 1;
        case AGG_KEY_FIELD: {
                const struct format_field *f = a->match_field[s->idx];
                struct field_value v;
                int64_t i;

                if (!f || field_decode(f, s->raw, s->raw_size, &v) < 0)
                        return 0;
                if (v.kind == FIELD_CHARS || v.kind == FIELD_DYN_STRING)
                        return hash_bytes(v.str.ptr, v.str.len, 1) | 1;
                if (!field_int(f, s, &i))
                        return 0;
                return (uint64_t) i + 1 ?: 1;
        }
        default:
                return (uint64_t) s->tid + 1;
        }
}

/* Linear probing with backward-shift deletion: no tombstones to pile up
 * however many starts come and go. */
static struct agg_pending *pending_find(struct aggregate *a, uint64_t key, size_t *ret_i) {
        size_t mask = a->n_pending_slots - 1;

        for (size_t i = mix(key) & mask;; i = (i + 1) & mask) {
                if (a->pending[i].key == 0 || a->pending[i].key == key) {
                        *ret_i = i;
                        return &a->pending[i];
                }
        }
}

static void pending_delete(struct aggregate *a, size_t i) {
        size_t mask = a->n_pending_slots - 1;

        a->pending[i].key = 0;
        a->n_pending--;
        for (size_t j = (i + 1) & mask; a->pending[j].key != 0; j = (j + 1) & mask) {
                size_t home = mix(a->pending[j].key) & mask;

                /* Moves back when its home is not in (i, j]. */
                if (((j - home) & mask) >= ((j - i) & mask)) {
                        a->pending[i] = a->pending[j];
                        a->pending[j].key = 0;
                        i = j;
                }
        }
}

void agg_fold(struct aggregate *a, const struct agg_sample *s) {
        uint64_t key[AGG_BY_MAX * 2] = {}, hash = 0, m = 0;
        struct agg_entry *e;
        int64_t v = 0;
        uint8_t role;

        if (s->idx >= a->n_events || !(role = a->role[s->idx]))
                return;
        a->events++;
        if (a->spec.op == AGG_OP_LATENCY) {
                struct agg_pending *p;
                size_t i;

                m = match_value(a, s);
                if (m == 0)
                        return;
                if (role & 1) {
                        p = pending_find(a, m, &i);
                        if (p->key == 0) {
                                if (!(role & 2))
                                        a->unmatched++;
                        } else {
                                v = s->time >= p->ts ? (int64_t) (s->time - p->ts) : 0;
                                pending_delete(a, i);
                                role |= 4;
                        }
                }
                if (role & 2) {
                        p = pending_find(a, m, &i);
                        if (p->key == 0) {
                                /* Full at 3/4: probes stay short; the rest is counted. */
                                if (a->n_pending >= a->n_pending_slots / 4 * 3) {
                                        a->pending_dropped++;
                                        goto fold;
                                }
                                a->n_pending++;
                        }
                        p->key = m;
                        p->ts = s->time;
                }
        fold:
                if (!(role & 4))
                        return;
        } else if (a->value_field[s->idx] && !field_int(a->value_field[s->idx], s, &v))
                return;

        for (size_t k = 0; k < a->spec.n_by; k++) {
                bool is_str;
                uint64_t x = key_value(a, k, s, &is_str);

                if (is_str && x == 0) {
                        a->keys_dropped++;
                        return;
                }
                /* Strings apart from integers ("1" is not 1); null
                 * apart from both. */
                key[2 * k] = x;
                key[2 * k + 1] = !is_str ? TAG_INT : x == UINT64_MAX ? TAG_NULL : TAG_STR;
                hash = mix(hash ^ x ^ (key[2 * k + 1] << 56) ^ k);
        }
        e = entry_get(a, key, hash);
        if (!e) {
                a->keys_dropped++;
                return;
        }
        entry_add(a, e, v);
}

/* ---- the line ----------------------------------------------------------- */

static int cmp_desc(const struct aggregate *a, uint32_t x, uint32_t y) {
        const struct agg_entry *ex = &a->entries[x], *ey = &a->entries[y];
        int64_t vx, vy;

        switch (a->spec.op) {
        case AGG_OP_SUM:
                vx = ex->sum, vy = ey->sum;
                break;
        case AGG_OP_MIN:
                vx = ex->min, vy = ey->min;
                break;
        case AGG_OP_MAX:
                vx = ex->max, vy = ey->max;
                break;
        case AGG_OP_AVG:
                vx = ex->count ? ex->sum / (int64_t) ex->count : 0;
                vy = ey->count ? ey->sum / (int64_t) ey->count : 0;
                break;
        default:
                return ex->count < ey->count ? 1 : ex->count > ey->count ? -1 : x < y ? -1 : x > y;
        }
        return vx < vy ? 1 : vx > vy ? -1 : x < y ? -1 : x > y;
}

static const struct aggregate *sort_agg;

static int cmp_order(const void *p, const void *q) {
        return cmp_desc(sort_agg, *(const uint32_t *) p, *(const uint32_t *) q);
}

static int put_key_value(struct aggregate *a, struct jbuf *b, size_t k, const uint64_t *key, const char *const *names,
                         size_t n) {
        const struct agg_key_spec *ks = &a->spec.by[k];
        uint64_t x = key[2 * k];
        char *p;

        if (key[2 * k + 1] == TAG_NULL) {
                if (jbuf_reserve(b, 4) < 0)
                        return -ENOMEM;
                jbuf_put_literal(b, "null");
                return 0;
        }
        if (key[2 * k + 1] == TAG_STR) {
                const struct agg_str *st = &a->strs[x - 1];

                if (jbuf_reserve(b, json_escaped_max(st->len) + 8) < 0)
                        return -ENOMEM;
                if (st->json) {
                        jbuf_put_bytes(b, a->arena + st->off, st->len);
                        return 0;
                }
                p = json_put_string(jbuf_end(b), a->arena + st->off, st->len);
                jbuf_set_end(b, p);
                return 0;
        }
        if (ks->kind == AGG_KEY_EVENT) {
                const char *name = x < n && names ? names[x] : NULL;
                if (!name) {
                        if (jbuf_reserve(b, 4) < 0)
                                return -ENOMEM;
                        jbuf_put_literal(b, "null");
                        return 0;
                }
                if (jbuf_reserve(b, json_escaped_max(strlen(name))) < 0)
                        return -ENOMEM;
                jbuf_set_end(b, json_put_string(jbuf_end(b), name, strlen(name)));
                return 0;
        }
        if (jbuf_reserve(b, JSON_INT_MAX) < 0)
                return -ENOMEM;
        /* Field integers are signed; pids, cpus and uids never that large. */
        jbuf_set_end(b, json_put_i64(jbuf_end(b), (int64_t) x));
        return 0;
}

#define PUT_NUM(b, key, fn, v)                                                   \
        do {                                                                     \
                if (jbuf_reserve((b), sizeof(key) + JSON_INT_MAX + 4) < 0)       \
                        return -ENOMEM;                                          \
                jbuf_put_literal((b), key);                                      \
                jbuf_set_end((b), fn(jbuf_end(b), (v)));                        \
        } while (0)

static int put_buckets(struct aggregate *a, struct jbuf *b, const struct agg_entry *e) {
        bool first = true;

        if (jbuf_reserve(b, 16) < 0)
                return -ENOMEM;
        jbuf_put_literal(b, ",\"buckets\":[");
        for (size_t i = 0; i < a->n_buckets; i++) {
                bool low_null = false, high_null = false;
                int64_t low = 0;
                uint64_t high = 0;

                if (e->buckets[i] == 0)
                        continue;
                if (a->spec.op == AGG_OP_LHIST) {
                        if (i == 0) {
                                low_null = true;
                                high = (uint64_t) a->spec.lmin;
                        } else if (i == a->n_buckets - 1) {
                                low = a->spec.lmin + (int64_t) (i - 1) * a->spec.lstep;
                                if (low > a->spec.lmax)
                                        low = a->spec.lmax;
                                high_null = true;
                        } else {
                                low = a->spec.lmin + (int64_t) (i - 1) * a->spec.lstep;
                                high = (uint64_t) (low + a->spec.lstep);
                                if ((int64_t) high > a->spec.lmax)
                                        high = (uint64_t) a->spec.lmax;
                        }
                } else if (i == 0) {
                        low_null = true;
                        high = 0;
                } else if (i == 1) {
                        low = 0;
                        high = 1;
                } else {
                        low = (int64_t) (UINT64_C(1) << (i - 2));
                        high = UINT64_C(1) << (i - 1);
                }
                if (jbuf_reserve(b, 3 * JSON_INT_MAX + 40) < 0)
                        return -ENOMEM;
                if (!first)
                        jbuf_put_char(b, ',');
                first = false;
                jbuf_put_literal(b, "{\"low\":");
                if (low_null)
                        jbuf_put_literal(b, "null");
                else
                        jbuf_set_end(b, json_put_i64(jbuf_end(b), low));
                jbuf_put_literal(b, ",\"high\":");
                if (high_null)
                        jbuf_put_literal(b, "null");
                else if (a->spec.op == AGG_OP_LHIST)
                        jbuf_set_end(b, json_put_i64(jbuf_end(b), (int64_t) high));
                else
                        jbuf_set_end(b, json_put_u64(jbuf_end(b), high));
                jbuf_put_literal(b, ",\"count\":");
                jbuf_set_end(b, json_put_u64(jbuf_end(b), e->buckets[i]));
                jbuf_put_char(b, '}');
        }
        if (jbuf_reserve(b, 1) < 0)
                return -ENOMEM;
        jbuf_put_char(b, ']');
        return 0;
}

static int put_entry(struct aggregate *a, struct jbuf *b, const struct agg_entry *e, const char *const *names, size_t n) {
        int r;

        if (jbuf_reserve(b, 16) < 0)
                return -ENOMEM;
        jbuf_put_literal(b, "{\"key\":{");
        for (size_t k = 0; k < a->spec.n_by; k++) {
                const char *name = agg_key_name(&a->spec.by[k]);

                if (jbuf_reserve(b, json_escaped_max(strlen(name)) + 2) < 0)
                        return -ENOMEM;
                if (k > 0)
                        jbuf_put_char(b, ',');
                jbuf_set_end(b, json_put_string(jbuf_end(b), name, strlen(name)));
                jbuf_put_char(b, ':');
                r = put_key_value(a, b, k, e->key, names, n);
                if (r < 0)
                        return r;
        }
        PUT_NUM(b, "},\"count\":", json_put_u64, e->count);
        switch (a->spec.op) {
        case AGG_OP_COUNT:
                break;
        case AGG_OP_SUM:
                PUT_NUM(b, ",\"value\":", json_put_i64, e->sum);
                break;
        case AGG_OP_MIN:
                PUT_NUM(b, ",\"value\":", json_put_i64, e->min);
                break;
        case AGG_OP_MAX:
                PUT_NUM(b, ",\"value\":", json_put_i64, e->max);
                break;
        case AGG_OP_AVG:
                PUT_NUM(b, ",\"value\":", json_put_i64, e->count ? e->sum / (int64_t) e->count : 0);
                break;
        default:
                PUT_NUM(b, ",\"sum\":", json_put_i64, e->sum);
                PUT_NUM(b, ",\"min\":", json_put_i64, e->min);
                PUT_NUM(b, ",\"max\":", json_put_i64, e->max);
                r = put_buckets(a, b, e);
                if (r < 0)
                        return r;
        }
        if (jbuf_reserve(b, 1) < 0)
                return -ENOMEM;
        jbuf_put_char(b, '}');
        return 0;
}

static void window_reset(struct aggregate *a, uint64_t ts) {
        for (size_t i = 0; a->buckets && i < a->n_used; i++)
                memset(a->entries[i].buckets, 0, a->n_buckets * sizeof(uint64_t));
        if (a->n_used > 0)
                memset(a->slots, 0, a->n_slots * sizeof(*a->slots));
        a->n_used = 0;
        if (a->n_strs > 0)
                memset(a->str_slots, 0, a->n_str_slots * sizeof(*a->str_slots));
        a->n_strs = 0;
        a->arena_len = 0;
        a->last_s = NULL;
        a->events = a->lost = a->keys_dropped = a->unmatched = a->pending_dropped = 0;
        a->start_ts = ts;
}

int agg_emit(struct aggregate *a, struct jbuf *b, uint64_t ts, int64_t realtime_offset_ns, const char *const *names,
             size_t n, bool final) {
        size_t n_out;
        int r;

        if (a->start_ts == 0)
                a->start_ts = ts;
        if (jbuf_reserve(b, 256 + JSON_TIME_LEN + 8 * JSON_INT_MAX) < 0)
                return -ENOMEM;
        jbuf_put_literal(b, "{\"type\":\"aggregate\",\"time\":");
        jbuf_set_end(b, json_put_time(jbuf_end(b), (uint64_t) ((int64_t) ts + realtime_offset_ns)));
        jbuf_put_literal(b, ",\"ts\":");
        jbuf_set_end(b, json_put_u64(jbuf_end(b), ts));
        jbuf_put_literal(b, ",\"start_ts\":");
        jbuf_set_end(b, json_put_u64(jbuf_end(b), a->start_ts));
        jbuf_put_literal(b, ",\"interval_ms\":");
        jbuf_set_end(b, json_put_u64(jbuf_end(b), a->spec.interval_ms));
        jbuf_put_literal(b, ",\"by\":[");
        for (size_t k = 0; k < a->spec.n_by; k++) {
                const struct agg_key_spec *ks = &a->spec.by[k];
                char name[300];

                snprintf(name, sizeof(name), "%s%s", key_names[ks->kind], ks->field ?: "");
                if (jbuf_reserve(b, json_escaped_max(strlen(name)) + 1) < 0)
                        return -ENOMEM;
                if (k > 0)
                        jbuf_put_char(b, ',');
                jbuf_set_end(b, json_put_string(jbuf_end(b), name, strlen(name)));
        }
        if (jbuf_reserve(b, 64 + 6 * JSON_INT_MAX) < 0)
                return -ENOMEM;
        jbuf_put_literal(b, "],\"op\":\"");
        jbuf_put_bytes(b, op_names[a->spec.op], strlen(op_names[a->spec.op]));
        jbuf_put_char(b, '"');
        PUT_NUM(b, ",\"events\":", json_put_u64, a->events);
        PUT_NUM(b, ",\"lost\":", json_put_u64, a->lost);
        PUT_NUM(b, ",\"keys_dropped\":", json_put_u64, a->keys_dropped + a->pending_dropped);
        if (a->spec.op == AGG_OP_LATENCY)
                PUT_NUM(b, ",\"unmatched\":", json_put_u64, a->unmatched);
        if (final) {
                if (jbuf_reserve(b, 16) < 0)
                        return -ENOMEM;
                jbuf_put_literal(b, ",\"final\":true");
        }
        if (jbuf_reserve(b, 16) < 0)
                return -ENOMEM;
        jbuf_put_literal(b, ",\"entries\":[");

        for (size_t i = 0; i < a->n_used; i++)
                a->order[i] = (uint32_t) i;
        sort_agg = a;
        qsort(a->order, a->n_used, sizeof(*a->order), cmp_order);
        n_out = a->spec.top > 0 && a->spec.top < a->n_used ? a->spec.top : a->n_used;
        for (size_t i = 0; i < n_out; i++) {
                if (i > 0) {
                        if (jbuf_reserve(b, 1) < 0)
                                return -ENOMEM;
                        jbuf_put_char(b, ',');
                }
                r = put_entry(a, b, &a->entries[a->order[i]], names, n);
                if (r < 0)
                        return r;
        }
        if (jbuf_reserve(b, 4) < 0)
                return -ENOMEM;
        jbuf_put_literal(b, "]}\n");
        if (!a->spec.cumulative)
                window_reset(a, ts);
        return 0;
}
