/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Aggregation (doc/protocol.md, "aggregate"): a client's tables of keys
 * and values, folded at each sample before any JSON is written, and the
 * "aggregate" line each window ends with. Everything a window needs is
 * allocated when the client asks (agg_new()): folding never allocates,
 * and what does not fit max_keys (or the string arena) is counted in
 * "keys_dropped", not grown into. No I/O, no logging: the server owns
 * the timer and the client's queue. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "evmon/cleanup.h"
#include "evmon/json.h"
#include "evmon/tracefs.h"

struct encode_frame;

#define AGG_BY_MAX 4u
#define AGG_MAX_KEYS_DEFAULT 10000u
/* Tables are preallocated at the request: at most AGG_MAX_KEYS_MAX keys,
 * and at most AGG_CELLS_MAX buckets in all (8 MiB: 16,131 keys of a log2
 * hist, 1,024 of the finest lhist), fewer keys for finer histograms. */
#define AGG_MAX_KEYS_MAX 65536u
#define AGG_CELLS_MAX (1u << 20)
/* The shortest interval: each line sorts and encodes the whole table. */
#define AGG_INTERVAL_MS_MIN 100u
#define AGG_TOP_DEFAULT 0u
#define AGG_LHIST_BUCKETS_MAX 1024u
/* log2 buckets: (…, 0), [0, 1), [1, 2), [2, 4) … [2^62, 2^63). */
#define AGG_LOG2_BUCKETS 65u
/* Latency starts waiting for their end, per client. */
#define AGG_PENDING_MAX 65536u
#define AGG_INTERVAL_MS_MAX (24u * 3600u * 1000u)

enum agg_key_kind {
        AGG_KEY_PID,
        AGG_KEY_TID,
        AGG_KEY_COMM,
        AGG_KEY_EXE,
        AGG_KEY_UID,
        AGG_KEY_CGROUP,
        AGG_KEY_CONTAINER,
        AGG_KEY_CPU,
        AGG_KEY_EVENT,
        AGG_KEY_FIELD,
        AGG_KEY_STACK,
        AGG_KEY_KSTACK,
        AGG_KEY_USTACK,
        AGG_KEY_FRAME,
        _AGG_KEY_KIND_MAX,
};

enum agg_op {
        AGG_OP_COUNT,
        AGG_OP_SUM,
        AGG_OP_MIN,
        AGG_OP_MAX,
        AGG_OP_AVG,
        AGG_OP_HIST,
        AGG_OP_LHIST,
        AGG_OP_LATENCY,
        _AGG_OP_MAX,
};

struct agg_key_spec {
        enum agg_key_kind kind;
        char *field;            /* AGG_KEY_FIELD: the field's name */
};

/* What an aggregate request asks for (request.c parses it). */
struct agg_spec {
        struct agg_key_spec by[AGG_BY_MAX];
        size_t n_by;
        enum agg_op op;
        char *field;                    /* sum … lhist */
        int64_t lmin, lmax, lstep;      /* lhist */
        char *start, *end;              /* latency: event names or patterns */
        struct agg_key_spec match;      /* latency: tid, pid or a field */
        uint64_t interval_ms;           /* 0: only on flush */
        bool cumulative;
        uint32_t top;                   /* 0: every entry */
        uint32_t max_keys;
};

void agg_spec_done(struct agg_spec *s);
/* "pid", "field:len" … as the wire names them, into *RET; -EINVAL for a
 * name that is no key. */
int agg_key_parse(const char *s, struct agg_key_spec *ret);
const char *agg_op_to_string(enum agg_op op);
int agg_op_from_string(const char *s);
/* The key's name in an entry's "key" ("field:len" → "len"). */
const char *agg_key_name(const struct agg_key_spec *k);

/* One served event as the aggregate sees it, when it is built. */
struct agg_event_info {
        const char *name;
        const struct format *format;   /* NULL: no tracepoint fields */
        uint64_t sample_type;          /* PERF_SAMPLE_CALLCHAIN for stack keys */
};

/* One sample, with what the daemon knows of it. Frames are asked for
 * only when a stack key meets a stack not seen in the window. */
struct agg_sample {
        unsigned idx;
        uint32_t pid, tid, cpu;
        uint64_t time;
        uint64_t cgroup_id;
        const void *raw;
        size_t raw_size;
        uint64_t n_ips;
        const uint64_t *ips;
        const char *comm, *exe, *cgroup, *container;   /* NULL: unknown */
        int64_t uid;                                    /* -1: unknown */
        /* The symbolized frames of IPS (n_ips entries, as they are), or
         * NULL: addresses then. */
        const struct encode_frame *(*frames)(void *userdata);
        void *userdata;
};

struct aggregate;

/* The tables SPEC asks for against the events served (INFO, N, by index)
 * of which those whose bit is in EVENT_BITS (for latency: START_BITS and
 * END_BITS) are folded. -EINVAL with *ret_error for the client, -ENOMEM. */
int agg_new(const struct agg_spec *spec, const struct agg_event_info *info, size_t n, const uint64_t *start_bits,
            const uint64_t *end_bits, struct aggregate **ret, char **ret_error);
struct aggregate *agg_free(struct aggregate *a);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct aggregate *, agg_free);

/* The events served changed (a reload): fields are looked up again; an
 * event whose field went, or a new event's index, folds nothing. */
void agg_resolve(struct aggregate *a, const struct agg_event_info *info, size_t n, const uint64_t *start_bits,
                 const uint64_t *end_bits);

/* The first window starts at TS (the event clock). */
void agg_start(struct aggregate *a, uint64_t ts);
/* Folds S in: no allocation, no JSON. */
void agg_fold(struct aggregate *a, const struct agg_sample *s);
/* Records lost by the kernel on the rings in this window. */
void agg_add_lost(struct aggregate *a, uint64_t n);

/* The window's "aggregate" line (ending in '\n') appended to B: TS the
 * event clock's time now, REALTIME_OFFSET_NS what makes it realtime,
 * NAMES (N) the events' names by index for the "event" key. Then the
 * window starts anew (unless cumulative). */
int agg_emit(struct aggregate *a, struct jbuf *b, uint64_t ts, int64_t realtime_offset_ns, const char *const *names,
             size_t n, bool final);

/* What A was built from (its strings A's: valid while A lives). */
void agg_get_spec(const struct aggregate *a, struct agg_spec *ret);
/* For tests and the status line. */
uint64_t agg_n_keys(const struct aggregate *a);
uint64_t agg_interval_ms(const struct aggregate *a);
