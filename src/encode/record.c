/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Every PERF_RECORD_* type but SAMPLE as one {"type":"record",...} line:
 * the sample_id trailer at the top level, the record's own body in
 * "fields" (linux/perf_event.h's layout comments name them; misc bits are
 * decoded into the record they belong to). */

#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "evmon/clock.h"
#include "evmon/encode-perf.h"
#include "evmon/protocol.h"
#include "writer.h"

/* Newer than some uapi headers; the numbers are ABI. */
#define RECORD_CALLCHAIN_DEFERRED 22
#define MISC_LOST_SAMPLES_BPF (1 << 15)
#define KSYMBOL_FLAGS_UNREGISTER (1 << 0)
#define BPF_TAG_SIZE_ 8

/* Keys and fixed text of a record line, counted generously; every field
 * comes from at most header.size bytes, and no byte becomes more than 8
 * bytes of JSON (a string byte at most 6, a u64 with its key about 4). */
#define RECORD_FIXED_MAX 1024u
#define RECORD_PER_BYTE 8u

static const char *const record_names[] = {
        [PERF_RECORD_MMAP]              = "mmap",
        [PERF_RECORD_LOST]              = "lost",
        [PERF_RECORD_COMM]              = "comm",
        [PERF_RECORD_EXIT]              = "exit",
        [PERF_RECORD_THROTTLE]          = "throttle",
        [PERF_RECORD_UNTHROTTLE]        = "unthrottle",
        [PERF_RECORD_FORK]              = "fork",
        [PERF_RECORD_READ]              = "read",
        [PERF_RECORD_MMAP2]             = "mmap2",
        [PERF_RECORD_AUX]               = "aux",
        [PERF_RECORD_ITRACE_START]      = "itrace_start",
        [PERF_RECORD_LOST_SAMPLES]      = "lost_samples",
        [PERF_RECORD_SWITCH]            = "switch",
        [PERF_RECORD_SWITCH_CPU_WIDE]   = "switch_cpu_wide",
        [PERF_RECORD_NAMESPACES]        = "namespaces",
        [PERF_RECORD_KSYMBOL]           = "ksymbol",
        [PERF_RECORD_BPF_EVENT]         = "bpf_event",
        [PERF_RECORD_CGROUP]            = "cgroup",
        [PERF_RECORD_TEXT_POKE]         = "text_poke",
        [PERF_RECORD_AUX_OUTPUT_HW_ID]  = "aux_output_hw_id",
        [RECORD_CALLCHAIN_DEFERRED]     = "callchain_deferred",
};

const char *encode_record_name(uint32_t type) {
        if (type >= ELEMENTSOF(record_names))
                return NULL;
        return record_names[type];
}

/* The namespaces of struct perf_ns_link_info[], by *_NS_INDEX; TIME is
 * newer than some headers. */
static const char *const ns_names[] = {
        "net", "uts", "ipc", "pid", "user", "mnt", "cgroup", "time",
};

static const char *const cpumode_names[8] = {
        "unknown", "kernel", "user", "hypervisor", "guest_kernel", "guest_user",
};

static const char *const ksym_type_names[] = {
        "unknown", "bpf", "ool",
};

static const char *const bpf_event_names[] = {
        "unknown", "prog_load", "prog_unload",
};

static char *put_name(char *p, const char *const *table, size_t n, uint64_t v) {
        if (v < n && table[v])
                return json_put_cstr(p, table[v]);
        return json_put_u64(p, v);
}

/* Pids and tids are signed, as perf prints them: -1 for a task past its
 * exit (the kernel's perf_event_pid_type()) and for the kernel's own maps
 * in perf's synthesized records (HOST_KERNEL_ID). */
static char *put_pid(char *p, uint32_t v) {
        return json_put_i64(p, (int32_t) v);
}

/* put_key() copies this many bytes whatever the key's length, and
 * encode_record() reserves them beyond the line's bound. */
#define RECORD_KEY_SPAN 24u

/* The body of each record type as a table of its members, in the order
 * they are written: a key, where the value lies in struct perf_record and
 * how it is written. A value that is more than a number, a string or a
 * bit is written by a function (RECORD_PUT), and one that decides its own
 * keys (mmap2's file id) by RECORD_MEMBERS. */
enum record_op {
        RECORD_END,
        RECORD_U64,              /* the unsigned number at OFF */
        RECORD_PID,              /* a u32 written signed (put_pid()) */
        RECORD_HEX,              /* a u64 as "0x..." */
        RECORD_CSTR,             /* a const char * */
        RECORD_BOOL,             /* whether the number at OFF has every bit of ARG */
        RECORD_BITS,             /* (number & ARG) >> ctz(ARG) */
        RECORD_NAME,             /* number & ARG (when set), as NAMES[it] or the number */
        RECORD_HEXBYTES,         /* ARG bytes at the const uint8_t * at OFF */
        RECORD_PUT,              /* PUT writes the value */
        RECORD_MEMBERS,          /* PUT writes members, each with its comma */
};

typedef char *(*record_put_t)(char *p, const struct perf_record *r, const struct encode_record_opts *o);

struct record_field {
        char key[RECORD_KEY_SPAN + 8]; /* ,"KEY": and zeros (put_key() copies RECORD_KEY_SPAN) */
        uint8_t key_len, op, n_names;
        uint16_t off;
        uint64_t mask;          /* the member's bits, of the 8 bytes read at OFF */
        uint64_t arg;
        const char *const *names;
        record_put_t put;
};

/* ,"KEY": with its length; a key longer than put_key() copies fails to
 * compile (a negative array size). */
#define RKEY_TEXT(k) ",\"" k "\":"
#define RKEY(k) .key = RKEY_TEXT(k), \
                .key_len = sizeof(RKEY_TEXT(k)) - 1 + \
                           0 * sizeof(char[sizeof(RKEY_TEXT(k)) - 1 <= RECORD_KEY_SPAN ? 1 : -1])
#define RAT(m) .off = offsetof(struct perf_record, m), \
               .mask = UINT64_MAX >> (64 - 8 * sizeof(((struct perf_record *) 0)->m))
#define R_U64(k, m) { RKEY(k), .op = RECORD_U64, RAT(m) }
#define R_PID(k, m) { RKEY(k), .op = RECORD_PID, RAT(m) }
#define R_HEX(k, m) { RKEY(k), .op = RECORD_HEX, RAT(m) }
#define R_CSTR(k, m) { RKEY(k), .op = RECORD_CSTR, RAT(m) }
#define R_BOOL(k, m, bits) { RKEY(k), .op = RECORD_BOOL, RAT(m), .arg = (bits) }
#define R_BITS(k, m, mask) { RKEY(k), .op = RECORD_BITS, RAT(m), .arg = (mask) }
#define R_NAME(k, m, mask, table) { RKEY(k), .op = RECORD_NAME, RAT(m), .arg = (mask), .names = (table), \
                                    .n_names = ELEMENTSOF(table) }
#define R_HEXBYTES(k, m, n) { RKEY(k), .op = RECORD_HEXBYTES, RAT(m), .arg = (n) }
#define R_PUT(k, fn) { RKEY(k), .op = RECORD_PUT, .put = (fn) }
#define R_MEMBERS(fn) { .op = RECORD_MEMBERS, .put = (fn) }
#define R_PID_TID(m) R_PID("pid", m.pid), R_PID("tid", m.tid)
#define R_CPUMODE R_NAME("cpumode", misc, PERF_RECORD_MISC_CPUMODE_MASK, cpumode_names)
#define R_END { .op = RECORD_END }

static char *put_mmap2_id(char *p, const struct perf_record *r, const struct encode_record_opts *o) {
        if (r->mmap2.has_build_id) {
                p = json_put_key(p, "build_id");
                return json_put_hexbytes(p, r->mmap2.build_id, r->mmap2.build_id_size);
        }
        p = json_put_key(p, "maj");
        p = json_put_u64(p, r->mmap2.maj);
        p = json_put_key(p, "min");
        p = json_put_u64(p, r->mmap2.min);
        p = json_put_key(p, "ino");
        p = json_put_u64(p, r->mmap2.ino);
        p = json_put_key(p, "ino_generation");
        return json_put_u64(p, r->mmap2.ino_generation);
}

static char *put_read(char *p, const struct perf_record *r, const struct encode_record_opts *o) {
        return encode_read_put(p, &r->read.values, &o->ids);
}

static char *put_namespaces(char *p, const struct perf_record *r, const struct encode_record_opts *o) {
        *p++ = '{';
        for (uint64_t i = 0; i < r->namespaces.nr; i++) {
                uint64_t dev, ino;

                memcpy(&dev, &r->namespaces.dev_ino[2 * i], sizeof(dev));
                memcpy(&ino, &r->namespaces.dev_ino[2 * i + 1], sizeof(ino));
                if (i > 0)
                        *p++ = ',';
                if (i < ELEMENTSOF(ns_names))
                        p = json_put_cstr(p, ns_names[i]);
                else {
                        p = json_put_literal(p, "\"ns");
                        p = json_put_u64(p, i);
                        *p++ = '"';
                }
                p = json_put_literal(p, ":{\"dev\":");
                p = json_put_u64(p, dev);
                p = json_put_key(p, "ino");
                p = json_put_u64(p, ino);
                *p++ = '}';
        }
        *p++ = '}';
        return p;
}

static char *put_poke_old(char *p, const struct perf_record *r, const struct encode_record_opts *o) {
        return json_put_hexbytes(p, r->text_poke.bytes, r->text_poke.old_len);
}

static char *put_poke_new(char *p, const struct perf_record *r, const struct encode_record_opts *o) {
        return json_put_hexbytes(p, r->text_poke.bytes + r->text_poke.old_len, r->text_poke.new_len);
}

static char *put_deferred_callchain(char *p, const struct perf_record *r, const struct encode_record_opts *o) {
        return encode_callchain_put(p, r->callchain_deferred.ips, r->callchain_deferred.nr);
}

static const struct record_field mmap_fields[] = {
        R_PID_TID(mmap), R_HEX("addr", mmap.addr), R_U64("len", mmap.len), R_U64("pgoff", mmap.pgoff),
        R_CSTR("filename", mmap.filename), R_BOOL("data", misc, PERF_RECORD_MISC_MMAP_DATA), R_CPUMODE, R_END,
};
static const struct record_field mmap2_fields[] = {
        R_PID_TID(mmap2), R_HEX("addr", mmap2.addr), R_U64("len", mmap2.len), R_U64("pgoff", mmap2.pgoff),
        R_MEMBERS(put_mmap2_id), R_U64("prot", mmap2.prot), R_U64("flags", mmap2.flags),
        R_CSTR("filename", mmap2.filename), R_BOOL("data", misc, PERF_RECORD_MISC_MMAP_DATA), R_CPUMODE, R_END,
};
static const struct record_field lost_fields[] = {
        R_U64("id", lost.id), R_U64("lost", lost.lost), R_END,
};
static const struct record_field comm_fields[] = {
        R_PID_TID(comm), R_CSTR("comm", comm.comm), R_BOOL("exec", misc, PERF_RECORD_MISC_COMM_EXEC), R_END,
};
static const struct record_field task_fields[] = {
        R_PID("pid", task.pid), R_PID("ppid", task.ppid), R_PID("tid", task.tid), R_PID("ptid", task.ptid),
        R_U64("time", task.time), R_END,
};
static const struct record_field throttle_fields[] = {
        R_U64("time", throttle.time), R_U64("id", throttle.id), R_U64("stream_id", throttle.stream_id), R_END,
};
static const struct record_field read_fields[] = {
        R_PID_TID(read), R_PUT("read", put_read), R_END,
};
static const struct record_field aux_fields[] = {
        R_U64("aux_offset", aux.aux_offset), R_U64("aux_size", aux.aux_size), R_U64("flags", aux.flags),
        R_BOOL("truncated", aux.flags, PERF_AUX_FLAG_TRUNCATED), R_BOOL("overwrite", aux.flags, PERF_AUX_FLAG_OVERWRITE),
        R_BOOL("partial", aux.flags, PERF_AUX_FLAG_PARTIAL), R_BOOL("collision", aux.flags, PERF_AUX_FLAG_COLLISION),
        R_BITS("pmu_format_type", aux.flags, PERF_AUX_FLAG_PMU_FORMAT_TYPE_MASK), R_END,
};
static const struct record_field itrace_start_fields[] = {
        R_PID_TID(itrace_start), R_END,
};
static const struct record_field lost_samples_fields[] = {
        R_U64("lost", lost_samples.lost), R_BOOL("bpf", misc, MISC_LOST_SAMPLES_BPF), R_END,
};
/* "preempt" only for a switch out (the kernel sets PREEMPT on those). */
#define R_SWITCH R_BOOL("out", misc, PERF_RECORD_MISC_SWITCH_OUT), \
                 R_BOOL("preempt", misc, PERF_RECORD_MISC_SWITCH_OUT | PERF_RECORD_MISC_SWITCH_OUT_PREEMPT)
static const struct record_field switch_fields[] = {
        R_SWITCH, R_END,
};
static const struct record_field switch_cpu_wide_fields[] = {
        R_PID("next_prev_pid", switch_cpu_wide.next_prev_pid), R_PID("next_prev_tid", switch_cpu_wide.next_prev_tid),
        R_SWITCH, R_END,
};
static const struct record_field namespaces_fields[] = {
        R_PID_TID(namespaces), R_PUT("namespaces", put_namespaces), R_END,
};
static const struct record_field ksymbol_fields[] = {
        R_HEX("addr", ksymbol.addr), R_U64("len", ksymbol.len),
        R_NAME("ksym_type", ksymbol.ksym_type, 0, ksym_type_names), R_U64("flags", ksymbol.flags),
        R_BOOL("unregister", ksymbol.flags, KSYMBOL_FLAGS_UNREGISTER), R_CSTR("name", ksymbol.name), R_END,
};
static const struct record_field bpf_event_fields[] = {
        R_NAME("bpf_type", bpf_event.type, 0, bpf_event_names), R_U64("flags", bpf_event.flags),
        R_U64("id", bpf_event.id), R_HEXBYTES("tag", bpf_event.tag, BPF_TAG_SIZE_), R_END,
};
static const struct record_field cgroup_fields[] = {
        R_U64("id", cgroup.id), R_CSTR("path", cgroup.path), R_END,
};
static const struct record_field text_poke_fields[] = {
        R_HEX("addr", text_poke.addr), R_U64("old_len", text_poke.old_len), R_U64("new_len", text_poke.new_len),
        R_PUT("old", put_poke_old), R_PUT("new", put_poke_new), R_END,
};
static const struct record_field aux_output_hw_id_fields[] = {
        R_U64("hw_id", aux_output_hw_id.hw_id), R_END,
};
static const struct record_field callchain_deferred_fields[] = {
        R_U64("cookie", callchain_deferred.cookie), R_PUT("callchain", put_deferred_callchain), R_END,
};

static const struct record_field *const record_fields[] = {
        [PERF_RECORD_MMAP]              = mmap_fields,
        [PERF_RECORD_LOST]              = lost_fields,
        [PERF_RECORD_COMM]              = comm_fields,
        [PERF_RECORD_EXIT]              = task_fields,
        [PERF_RECORD_THROTTLE]          = throttle_fields,
        [PERF_RECORD_UNTHROTTLE]        = throttle_fields,
        [PERF_RECORD_FORK]              = task_fields,
        [PERF_RECORD_READ]              = read_fields,
        [PERF_RECORD_MMAP2]             = mmap2_fields,
        [PERF_RECORD_AUX]               = aux_fields,
        [PERF_RECORD_ITRACE_START]      = itrace_start_fields,
        [PERF_RECORD_LOST_SAMPLES]      = lost_samples_fields,
        [PERF_RECORD_SWITCH]            = switch_fields,
        [PERF_RECORD_SWITCH_CPU_WIDE]   = switch_cpu_wide_fields,
        [PERF_RECORD_NAMESPACES]        = namespaces_fields,
        [PERF_RECORD_KSYMBOL]           = ksymbol_fields,
        [PERF_RECORD_BPF_EVENT]         = bpf_event_fields,
        [PERF_RECORD_CGROUP]            = cgroup_fields,
        [PERF_RECORD_TEXT_POKE]         = text_poke_fields,
        [PERF_RECORD_AUX_OUTPUT_HW_ID]  = aux_output_hw_id_fields,
        [RECORD_CALLCHAIN_DEFERRED]     = callchain_deferred_fields,
};

/* Eight bytes whatever the member's size, then its bits alone: a load
 * and a mask where a switch on the size cost a jump. Every member lies in
 * the union, which is as large as struct perf_sample, so the read stays
 * inside *R. */
static inline uint64_t field_load(const struct perf_record *r, const struct record_field *f) {
        uint64_t v;

        memcpy(&v, (const uint8_t *) r + f->off, sizeof(v));
        return v & f->mask;
}

static inline const void *field_pointer(const struct perf_record *r, const struct record_field *f) {
        const void *v;

        memcpy(&v, (const uint8_t *) r + f->off, sizeof(v));
        return v;
}

/* ,"KEY": (or "KEY": from KEY + 1): RECORD_KEY_SPAN bytes copied, a
 * constant size the compiler turns into two moves, and P moved by the
 * key's length; the bytes past it are overwritten by what follows. A
 * memcpy of the length alone, known only at run time, became `rep movsq`,
 * whose start-up cost doubled the time of a record. */
static inline char *put_key(char *p, const char *key, size_t len) {
        memcpy(p, key, RECORD_KEY_SPAN);
        return p + len;
}

/* The body of REC as the members of "fields" (without braces): its
 * type's table, one member after the other. */
static char *put_fields(char *p, const struct perf_event_header *h, const struct perf_record *r,
                        const struct encode_record_opts *o) {
        const struct record_field *f = r->type < ELEMENTSOF(record_fields) ? record_fields[r->type] : NULL;

        if (!f) {
                /* A type this encoder does not know (or perf.data's own,
                 * unparsed): its number and size, so that nothing passes
                 * unseen. */
                p = json_put_key1(p, "type");
                p = json_put_u64(p, r->type);
                p = json_put_key(p, "size");
                return json_put_u64(p, h->size);
        }
        for (const struct record_field *first = f;; f++) {
                bool comma = f != first;

                if (f->op == RECORD_END)
                        return p;
                /* Each member after the first with its comma (a table
                 * never starts with RECORD_MEMBERS). */
                if (f->op != RECORD_MEMBERS)
                        p = put_key(p, f->key + !comma, f->key_len - !comma);
                switch (f->op) {
                case RECORD_U64:
                        p = json_put_u64(p, field_load(r, f));
                        break;
                case RECORD_PID:
                        p = put_pid(p, (uint32_t) field_load(r, f));
                        break;
                case RECORD_HEX:
                        p = json_put_hex(p, field_load(r, f));
                        break;
                case RECORD_CSTR:
                        p = json_put_cstr(p, field_pointer(r, f));
                        break;
                case RECORD_BOOL:
                        p = json_put_bool(p, (field_load(r, f) & f->arg) == f->arg);
                        break;
                case RECORD_BITS:
                        p = json_put_u64(p, (field_load(r, f) & f->arg) >> __builtin_ctzll(f->arg));
                        break;
                case RECORD_NAME:
                        p = put_name(p, f->names, f->n_names, field_load(r, f) & (f->arg ?: UINT64_MAX));
                        break;
                case RECORD_HEXBYTES:
                        p = json_put_hexbytes(p, field_pointer(r, f), f->arg);
                        break;
                default:
                        p = f->put(p, r, o);
                        break;
                }
        }
}

int encode_record(struct jbuf *b, const struct perf_event_header *h, const struct perf_record *rec,
                  const struct encode_record_opts *o) {
        static const struct encode_record_opts none = {};
        const char *name;
        uint64_t t;
        size_t bound;
        char *p, *start;
        int r;

        if (!b || !h || !rec)
                return -EINVAL;
        if (rec->type == PERF_RECORD_SAMPLE)
                return -EINVAL;
        if (!o)
                o = &none;

        name = o->record ?: encode_record_name(rec->type) ?: "unknown";
        bound = RECORD_FIXED_MAX + RECORD_PER_BYTE * (size_t) h->size + json_escaped_max(strlen(name));
        if (o->event)
                bound += json_escaped_max(strlen(o->event));
        if (rec->type == PERF_RECORD_READ)
                bound += encode_read_max(&rec->read.values, &o->ids);
        r = jbuf_reserve(b, bound + RECORD_KEY_SPAN);
        if (r < 0)
                return r;

        start = p = jbuf_end(b);
        p = json_put_literal(p, "{\"type\":\"" EVMON_LINE_RECORD "\",\"record\":");
        p = json_put_cstr(p, name);
        if (o->event) {
                p = json_put_key(p, "event");
                p = json_put_cstr(p, o->event);
        }

        t = rec->has_sid ? o->sample_type : 0;
        if (t & PERF_SAMPLE_TIME) {
                uint64_t ts = rec->sid.time;

                p = json_put_key(p, "time");
                p = json_put_time(p, clock_to_realtime(ts, o->realtime_offset_ns));
                p = json_put_key(p, "ts");
                p = json_put_u64(p, ts);
        }
        if (t & PERF_SAMPLE_CPU) {
                p = json_put_key(p, "cpu");
                p = json_put_u64(p, rec->sid.cpu);
        }
        if (t & PERF_SAMPLE_TID) {
                p = json_put_key(p, "pid");
                p = put_pid(p, rec->sid.pid);
                p = json_put_key(p, "tid");
                p = put_pid(p, rec->sid.tid);
        }
        if (t & PERF_SAMPLE_ID) {
                p = json_put_key(p, "id");
                p = json_put_u64(p, rec->sid.id);
        }
        if (t & PERF_SAMPLE_STREAM_ID) {
                p = json_put_key(p, "stream_id");
                p = json_put_u64(p, rec->sid.stream_id);
        }

        p = json_put_key(p, "fields");
        *p++ = '{';
        p = put_fields(p, h, rec, o);
        p = json_put_literal(p, "}}\n");
        assert((size_t) (p - start) <= bound);
        jbuf_set_end(b, p);
        return 0;
}
