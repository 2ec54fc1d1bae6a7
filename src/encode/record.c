/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Every PERF_RECORD_* type but SAMPLE as one {"type":"record",...} line:
 * the sample_id trailer at the top level, the record's own body in
 * "fields" (linux/perf_event.h's layout comments name them; misc bits are
 * decoded into the record they belong to). */

#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

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

static char *put_cpumode(char *p, uint16_t misc) {
        p = json_put_key(p, "cpumode");
        return put_name(p, cpumode_names, ELEMENTSOF(cpumode_names), misc & PERF_RECORD_MISC_CPUMODE_MASK);
}

/* Pids and tids are signed, as perf prints them: -1 for a task past its
 * exit (the kernel's perf_event_pid_type()) and for the kernel's own maps
 * in perf's synthesized records (HOST_KERNEL_ID). */
static char *put_pid(char *p, uint32_t v) {
        return json_put_i64(p, (int32_t) v);
}

static char *put_pid_tid(char *p, uint32_t pid, uint32_t tid) {
        p = json_put_key1(p, "pid");
        p = put_pid(p, pid);
        p = json_put_key(p, "tid");
        return put_pid(p, tid);
}

static char *put_mmap2(char *p, const struct perf_record *r) {
        p = put_pid_tid(p, r->mmap2.pid, r->mmap2.tid);
        p = json_put_key(p, "addr");
        p = json_put_hex(p, r->mmap2.addr);
        p = json_put_key(p, "len");
        p = json_put_u64(p, r->mmap2.len);
        p = json_put_key(p, "pgoff");
        p = json_put_u64(p, r->mmap2.pgoff);
        if (r->mmap2.has_build_id) {
                p = json_put_key(p, "build_id");
                p = json_put_hexbytes(p, r->mmap2.build_id, r->mmap2.build_id_size);
        } else {
                p = json_put_key(p, "maj");
                p = json_put_u64(p, r->mmap2.maj);
                p = json_put_key(p, "min");
                p = json_put_u64(p, r->mmap2.min);
                p = json_put_key(p, "ino");
                p = json_put_u64(p, r->mmap2.ino);
                p = json_put_key(p, "ino_generation");
                p = json_put_u64(p, r->mmap2.ino_generation);
        }
        p = json_put_key(p, "prot");
        p = json_put_u64(p, r->mmap2.prot);
        p = json_put_key(p, "flags");
        p = json_put_u64(p, r->mmap2.flags);
        p = json_put_key(p, "filename");
        p = json_put_cstr(p, r->mmap2.filename);
        p = json_put_key(p, "data");
        p = json_put_bool(p, r->misc & PERF_RECORD_MISC_MMAP_DATA);
        return put_cpumode(p, r->misc);
}

/* The body of REC as the members of "fields" (without braces). */
static char *put_fields(char *p, const struct perf_event_header *h, const struct perf_record *r,
                        const struct encode_record_opts *o) {
        switch (r->type) {

        case PERF_RECORD_MMAP:
                p = put_pid_tid(p, r->mmap.pid, r->mmap.tid);
                p = json_put_key(p, "addr");
                p = json_put_hex(p, r->mmap.addr);
                p = json_put_key(p, "len");
                p = json_put_u64(p, r->mmap.len);
                p = json_put_key(p, "pgoff");
                p = json_put_u64(p, r->mmap.pgoff);
                p = json_put_key(p, "filename");
                p = json_put_cstr(p, r->mmap.filename);
                p = json_put_key(p, "data");
                p = json_put_bool(p, r->misc & PERF_RECORD_MISC_MMAP_DATA);
                return put_cpumode(p, r->misc);

        case PERF_RECORD_MMAP2:
                return put_mmap2(p, r);

        case PERF_RECORD_LOST:
                p = json_put_key1(p, "id");
                p = json_put_u64(p, r->lost.id);
                p = json_put_key(p, "lost");
                return json_put_u64(p, r->lost.lost);

        case PERF_RECORD_COMM:
                p = put_pid_tid(p, r->comm.pid, r->comm.tid);
                p = json_put_key(p, "comm");
                p = json_put_cstr(p, r->comm.comm);
                p = json_put_key(p, "exec");
                return json_put_bool(p, r->misc & PERF_RECORD_MISC_COMM_EXEC);

        case PERF_RECORD_EXIT:
        case PERF_RECORD_FORK:
                p = json_put_key1(p, "pid");
                p = put_pid(p, r->task.pid);
                p = json_put_key(p, "ppid");
                p = put_pid(p, r->task.ppid);
                p = json_put_key(p, "tid");
                p = put_pid(p, r->task.tid);
                p = json_put_key(p, "ptid");
                p = put_pid(p, r->task.ptid);
                p = json_put_key(p, "time");
                return json_put_u64(p, r->task.time);

        case PERF_RECORD_THROTTLE:
        case PERF_RECORD_UNTHROTTLE:
                p = json_put_key1(p, "time");
                p = json_put_u64(p, r->throttle.time);
                p = json_put_key(p, "id");
                p = json_put_u64(p, r->throttle.id);
                p = json_put_key(p, "stream_id");
                return json_put_u64(p, r->throttle.stream_id);

        case PERF_RECORD_READ:
                p = put_pid_tid(p, r->read.pid, r->read.tid);
                p = json_put_key(p, "read");
                return encode_read_put(p, &r->read.values, &o->ids);

        case PERF_RECORD_AUX:
                p = json_put_key1(p, "aux_offset");
                p = json_put_u64(p, r->aux.aux_offset);
                p = json_put_key(p, "aux_size");
                p = json_put_u64(p, r->aux.aux_size);
                p = json_put_key(p, "flags");
                p = json_put_u64(p, r->aux.flags);
                p = json_put_key(p, "truncated");
                p = json_put_bool(p, r->aux.flags & PERF_AUX_FLAG_TRUNCATED);
                p = json_put_key(p, "overwrite");
                p = json_put_bool(p, r->aux.flags & PERF_AUX_FLAG_OVERWRITE);
                p = json_put_key(p, "partial");
                p = json_put_bool(p, r->aux.flags & PERF_AUX_FLAG_PARTIAL);
                p = json_put_key(p, "collision");
                p = json_put_bool(p, r->aux.flags & PERF_AUX_FLAG_COLLISION);
                p = json_put_key(p, "pmu_format_type");
                return json_put_u64(p, (r->aux.flags & PERF_AUX_FLAG_PMU_FORMAT_TYPE_MASK) >> 8);

        case PERF_RECORD_ITRACE_START:
                return put_pid_tid(p, r->itrace_start.pid, r->itrace_start.tid);

        case PERF_RECORD_LOST_SAMPLES:
                p = json_put_key1(p, "lost");
                p = json_put_u64(p, r->lost_samples.lost);
                p = json_put_key(p, "bpf");
                return json_put_bool(p, r->misc & MISC_LOST_SAMPLES_BPF);

        case PERF_RECORD_SWITCH_CPU_WIDE:
                p = json_put_key1(p, "next_prev_pid");
                p = put_pid(p, r->switch_cpu_wide.next_prev_pid);
                p = json_put_key(p, "next_prev_tid");
                p = put_pid(p, r->switch_cpu_wide.next_prev_tid);
                *p++ = ',';
                __attribute__((fallthrough));
        case PERF_RECORD_SWITCH:
                p = json_put_key1(p, "out");
                p = json_put_bool(p, r->misc & PERF_RECORD_MISC_SWITCH_OUT);
                p = json_put_key(p, "preempt");
                return json_put_bool(p, (r->misc & PERF_RECORD_MISC_SWITCH_OUT) &&
                                        (r->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT));

        case PERF_RECORD_NAMESPACES:
                p = put_pid_tid(p, r->namespaces.pid, r->namespaces.tid);
                p = json_put_key(p, "namespaces");
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

        case PERF_RECORD_KSYMBOL:
                p = json_put_key1(p, "addr");
                p = json_put_hex(p, r->ksymbol.addr);
                p = json_put_key(p, "len");
                p = json_put_u64(p, r->ksymbol.len);
                p = json_put_key(p, "ksym_type");
                p = put_name(p, ksym_type_names, ELEMENTSOF(ksym_type_names), r->ksymbol.ksym_type);
                p = json_put_key(p, "flags");
                p = json_put_u64(p, r->ksymbol.flags);
                p = json_put_key(p, "unregister");
                p = json_put_bool(p, r->ksymbol.flags & KSYMBOL_FLAGS_UNREGISTER);
                p = json_put_key(p, "name");
                return json_put_cstr(p, r->ksymbol.name);

        case PERF_RECORD_BPF_EVENT:
                p = json_put_key1(p, "bpf_type");
                p = put_name(p, bpf_event_names, ELEMENTSOF(bpf_event_names), r->bpf_event.type);
                p = json_put_key(p, "flags");
                p = json_put_u64(p, r->bpf_event.flags);
                p = json_put_key(p, "id");
                p = json_put_u64(p, r->bpf_event.id);
                p = json_put_key(p, "tag");
                return json_put_hexbytes(p, r->bpf_event.tag, BPF_TAG_SIZE_);

        case PERF_RECORD_CGROUP:
                p = json_put_key1(p, "id");
                p = json_put_u64(p, r->cgroup.id);
                p = json_put_key(p, "path");
                return json_put_cstr(p, r->cgroup.path);

        case PERF_RECORD_TEXT_POKE:
                p = json_put_key1(p, "addr");
                p = json_put_hex(p, r->text_poke.addr);
                p = json_put_key(p, "old_len");
                p = json_put_u64(p, r->text_poke.old_len);
                p = json_put_key(p, "new_len");
                p = json_put_u64(p, r->text_poke.new_len);
                p = json_put_key(p, "old");
                p = json_put_hexbytes(p, r->text_poke.bytes, r->text_poke.old_len);
                p = json_put_key(p, "new");
                return json_put_hexbytes(p, r->text_poke.bytes + r->text_poke.old_len, r->text_poke.new_len);

        case PERF_RECORD_AUX_OUTPUT_HW_ID:
                p = json_put_key1(p, "hw_id");
                return json_put_u64(p, r->aux_output_hw_id.hw_id);

        case RECORD_CALLCHAIN_DEFERRED:
                p = json_put_key1(p, "cookie");
                p = json_put_u64(p, r->callchain_deferred.cookie);
                p = json_put_key(p, "callchain");
                return encode_callchain_put(p, r->callchain_deferred.ips, r->callchain_deferred.nr);
        }

        /* A type this encoder does not know (or perf.data's own, unparsed):
         * its number and size, so that nothing passes unseen. */
        p = json_put_key1(p, "type");
        p = json_put_u64(p, r->type);
        p = json_put_key(p, "size");
        return json_put_u64(p, h->size);
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
        r = jbuf_reserve(b, bound);
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
                uint64_t ts = rec->sid.time, rt = ts + (uint64_t) o->realtime_offset_ns;

                /* Saturate rather than wrap, as encode_event() does. */
                if (o->realtime_offset_ns < 0 ? rt > ts : rt < ts)
                        rt = o->realtime_offset_ns < 0 ? 0 : UINT64_MAX;
                p = json_put_key(p, "time");
                p = json_put_time(p, rt);
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
