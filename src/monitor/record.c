/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Every PERF_RECORD_* type of linux/perf_event.h. Non-sample records carry
 * the sample_id trailer (attr->sample_id_all) at their END, so it is found
 * from header.size and the body in front of it is parsed within what is
 * left; strings must end inside the body. */

#include <errno.h>
#include <string.h>

#include "cursor.h"
#include "evmon/monitor.h"

/* Added after the uapi headers we may build against; the numbers are ABI.
 * PERF_RECORD_CALLCHAIN_DEFERRED is an enum constant where it exists, so
 * #ifdef cannot see it: name it ourselves. */
#define RECORD_CALLCHAIN_DEFERRED 22

/* The sample_type bits that make up struct sample_id. */
#define SAMPLE_ID_BITS                                                          \
        (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |                  \
         PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

/* MMAP2's build-id variant: u8 size, 3 reserved bytes, 20 bytes of id. */
#define MMAP2_BUILD_ID_MAX 20
/* BPF_TAG_SIZE of linux/bpf.h. */
#define BPF_TAG_SIZE_ 8

static int sample_id_parse(uint64_t t, struct cursor *c, struct perf_sample_id *ret) {
        int r = 0;

        *ret = (struct perf_sample_id) {};

        if (t & PERF_SAMPLE_TID) {
                r = cursor_u32(c, &ret->pid);
                if (r >= 0)
                        r = cursor_u32(c, &ret->tid);
        }
        if (r >= 0 && (t & PERF_SAMPLE_TIME))
                r = cursor_u64(c, &ret->time);
        if (r >= 0 && (t & PERF_SAMPLE_ID))
                r = cursor_u64(c, &ret->id);
        if (r >= 0 && (t & PERF_SAMPLE_STREAM_ID))
                r = cursor_u64(c, &ret->stream_id);
        if (r >= 0 && (t & PERF_SAMPLE_CPU)) {
                r = cursor_u32(c, &ret->cpu);
                if (r >= 0)
                        r = cursor_u32(c, &ret->res);
        }
        if (r >= 0 && (t & PERF_SAMPLE_IDENTIFIER)) {
                r = cursor_u64(c, &ret->identifier);
                if (r >= 0 && !(t & PERF_SAMPLE_ID))
                        ret->id = ret->identifier;
        }
        return r;
}

static int task_parse(struct cursor *c, struct perf_record *ret) {
        int r;

        r = cursor_u32(c, &ret->task.pid);
        if (r >= 0)
                r = cursor_u32(c, &ret->task.ppid);
        if (r >= 0)
                r = cursor_u32(c, &ret->task.tid);
        if (r >= 0)
                r = cursor_u32(c, &ret->task.ptid);
        if (r >= 0)
                r = cursor_u64(c, &ret->task.time);
        return r;
}

static int mmap2_parse(uint16_t misc, struct cursor *c, struct perf_record *ret) {
        int r;

        r = cursor_u32(c, &ret->mmap2.pid);
        if (r >= 0)
                r = cursor_u32(c, &ret->mmap2.tid);
        if (r >= 0)
                r = cursor_u64(c, &ret->mmap2.addr);
        if (r >= 0)
                r = cursor_u64(c, &ret->mmap2.len);
        if (r >= 0)
                r = cursor_u64(c, &ret->mmap2.pgoff);
        if (r < 0)
                return r;

        if (misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
                const void *id;

                r = cursor_u8(c, &ret->mmap2.build_id_size);
                if (r >= 0)
                        r = cursor_take(c, 3, NULL);
                if (r >= 0)
                        r = cursor_take(c, MMAP2_BUILD_ID_MAX, &id);
                if (r < 0)
                        return r;
                if (ret->mmap2.build_id_size > MMAP2_BUILD_ID_MAX)
                        return -EBADMSG;
                ret->mmap2.build_id = id;
                ret->mmap2.has_build_id = true;
        } else {
                r = cursor_u32(c, &ret->mmap2.maj);
                if (r >= 0)
                        r = cursor_u32(c, &ret->mmap2.min);
                if (r >= 0)
                        r = cursor_u64(c, &ret->mmap2.ino);
                if (r >= 0)
                        r = cursor_u64(c, &ret->mmap2.ino_generation);
                if (r < 0)
                        return r;
        }

        r = cursor_u32(c, &ret->mmap2.prot);
        if (r >= 0)
                r = cursor_u32(c, &ret->mmap2.flags);
        if (r >= 0)
                r = cursor_string_rest(c, &ret->mmap2.filename);
        return r;
}

static int mmap_parse(struct cursor *c, struct perf_record *ret) {
        int r;

        r = cursor_u32(c, &ret->mmap.pid);
        if (r >= 0)
                r = cursor_u32(c, &ret->mmap.tid);
        if (r >= 0)
                r = cursor_u64(c, &ret->mmap.addr);
        if (r >= 0)
                r = cursor_u64(c, &ret->mmap.len);
        if (r >= 0)
                r = cursor_u64(c, &ret->mmap.pgoff);
        if (r >= 0)
                r = cursor_string_rest(c, &ret->mmap.filename);
        return r;
}

static int comm_parse(struct cursor *c, struct perf_record *ret) {
        int r;

        r = cursor_u32(c, &ret->comm.pid);
        if (r >= 0)
                r = cursor_u32(c, &ret->comm.tid);
        if (r >= 0)
                r = cursor_string_rest(c, &ret->comm.comm);
        return r;
}

static int namespaces_parse(struct cursor *c, struct perf_record *ret) {
        const void *p;
        int r;

        r = cursor_u32(c, &ret->namespaces.pid);
        if (r >= 0)
                r = cursor_u32(c, &ret->namespaces.tid);
        if (r >= 0)
                r = cursor_u64(c, &ret->namespaces.nr);
        if (r >= 0)
                r = cursor_take_array(c, ret->namespaces.nr, sizeof(struct perf_ns_link_info), &p);
        if (r >= 0)
                ret->namespaces.dev_ino = p;
        return r;
}

static int ksymbol_parse(struct cursor *c, struct perf_record *ret) {
        int r;

        r = cursor_u64(c, &ret->ksymbol.addr);
        if (r >= 0)
                r = cursor_u32(c, &ret->ksymbol.len);
        if (r >= 0)
                r = cursor_u16(c, &ret->ksymbol.ksym_type);
        if (r >= 0)
                r = cursor_u16(c, &ret->ksymbol.flags);
        if (r >= 0)
                r = cursor_string_rest(c, &ret->ksymbol.name);
        return r;
}

static int bpf_event_parse(struct cursor *c, struct perf_record *ret) {
        const void *p;
        int r;

        r = cursor_u16(c, &ret->bpf_event.type);
        if (r >= 0)
                r = cursor_u16(c, &ret->bpf_event.flags);
        if (r >= 0)
                r = cursor_u32(c, &ret->bpf_event.id);
        if (r >= 0)
                r = cursor_take(c, BPF_TAG_SIZE_, &p);
        if (r >= 0)
                ret->bpf_event.tag = p;
        return r;
}

static int callchain_deferred_parse(struct cursor *c, struct perf_record *ret) {
        const void *p;
        int r;

        r = cursor_u64(c, &ret->callchain_deferred.cookie);
        if (r >= 0)
                r = cursor_u64(c, &ret->callchain_deferred.nr);
        if (r >= 0)
                r = cursor_take_array(c, ret->callchain_deferred.nr, 8, &p);
        if (r >= 0)
                ret->callchain_deferred.ips = p;
        return r;
}

/* Old bytes then new bytes, padded to 8. */
static int text_poke_parse(struct cursor *c, struct perf_record *ret) {
        const void *p;
        uint16_t u16;
        int r;

        r = cursor_u64(c, &ret->text_poke.addr);
        if (r >= 0)
                r = cursor_u16(c, &u16);
        if (r < 0)
                return r;
        ret->text_poke.old_len = u16;
        r = cursor_u16(c, &u16);
        if (r < 0)
                return r;
        ret->text_poke.new_len = u16;
        r = cursor_take(c, (uint64_t) ret->text_poke.old_len + ret->text_poke.new_len, &p);
        if (r >= 0)
                ret->text_poke.bytes = p;
        return r;
}

static int body_parse(const struct perf_event_attr *attr, uint32_t type, uint16_t misc,
                      struct cursor *c, struct perf_record *ret) {
        int r;

        switch (type) {

        case PERF_RECORD_MMAP:
                return mmap_parse(c, ret);

        case PERF_RECORD_MMAP2:
                return mmap2_parse(misc, c, ret);

        case PERF_RECORD_LOST:
                r = cursor_u64(c, &ret->lost.id);
                if (r >= 0)
                        r = cursor_u64(c, &ret->lost.lost);
                return r;

        case PERF_RECORD_COMM:
                return comm_parse(c, ret);

        case PERF_RECORD_EXIT:
        case PERF_RECORD_FORK:
                return task_parse(c, ret);

        case PERF_RECORD_THROTTLE:
        case PERF_RECORD_UNTHROTTLE:
                r = cursor_u64(c, &ret->throttle.time);
                if (r >= 0)
                        r = cursor_u64(c, &ret->throttle.id);
                if (r >= 0)
                        r = cursor_u64(c, &ret->throttle.stream_id);
                return r;

        case PERF_RECORD_READ:
                r = cursor_u32(c, &ret->read.pid);
                if (r >= 0)
                        r = cursor_u32(c, &ret->read.tid);
                if (r >= 0)
                        r = read_format_parse(c, attr ? attr->read_format : 0, &ret->read.values);
                return r;

        case PERF_RECORD_AUX:
                r = cursor_u64(c, &ret->aux.aux_offset);
                if (r >= 0)
                        r = cursor_u64(c, &ret->aux.aux_size);
                if (r >= 0)
                        r = cursor_u64(c, &ret->aux.flags);
                return r;

        case PERF_RECORD_ITRACE_START:
                r = cursor_u32(c, &ret->itrace_start.pid);
                if (r >= 0)
                        r = cursor_u32(c, &ret->itrace_start.tid);
                return r;

        case PERF_RECORD_LOST_SAMPLES:
                return cursor_u64(c, &ret->lost_samples.lost);

        case PERF_RECORD_SWITCH:
                /* In or out is PERF_RECORD_MISC_SWITCH_OUT in misc. */
                return 0;

        case PERF_RECORD_SWITCH_CPU_WIDE:
                r = cursor_u32(c, &ret->switch_cpu_wide.next_prev_pid);
                if (r >= 0)
                        r = cursor_u32(c, &ret->switch_cpu_wide.next_prev_tid);
                return r;

        case PERF_RECORD_NAMESPACES:
                return namespaces_parse(c, ret);

        case PERF_RECORD_KSYMBOL:
                return ksymbol_parse(c, ret);

        case PERF_RECORD_BPF_EVENT:
                return bpf_event_parse(c, ret);

        case PERF_RECORD_CGROUP:
                r = cursor_u64(c, &ret->cgroup.id);
                if (r >= 0)
                        r = cursor_string_rest(c, &ret->cgroup.path);
                return r;

        case PERF_RECORD_TEXT_POKE:
                return text_poke_parse(c, ret);

        case PERF_RECORD_AUX_OUTPUT_HW_ID:
                return cursor_u64(c, &ret->aux_output_hw_id.hw_id);

        case RECORD_CALLCHAIN_DEFERRED:
                return callchain_deferred_parse(c, ret);
        }

        return -EOPNOTSUPP;
}

static bool record_type_known(uint32_t type) {
        return type >= PERF_RECORD_MMAP && type <= RECORD_CALLCHAIN_DEFERRED;
}

int record_parse(const struct perf_event_attr *attr, const struct perf_event_header *h,
                 struct perf_record *ret) {
        size_t body_size;
        struct cursor c;
        int r;

        if (!h || !ret)
                return -EINVAL;
        if (h->size < sizeof(*h))
                return -EBADMSG;

        memset(ret, 0, sizeof(*ret));
        ret->type = h->type;
        ret->misc = h->misc;

        if (h->type == PERF_RECORD_SAMPLE) {
                if (!attr)
                        return -EINVAL;
                return sample_parse(attr, h, &ret->sample);
        }

        if (!record_type_known(h->type))
                return 0;

        body_size = h->size - sizeof(*h);

        if (attr && attr->sample_id_all) {
                size_t id_size = 8 * (size_t) __builtin_popcountll(attr->sample_type & SAMPLE_ID_BITS);

                if (id_size > body_size)
                        return -EBADMSG;
                body_size -= id_size;
                c = cursor_make((const uint8_t *) (h + 1) + body_size, id_size);
                r = sample_id_parse(attr->sample_type, &c, &ret->sid);
                if (r < 0)
                        return r;
                ret->has_sid = true;
        }

        c = cursor_make(h + 1, body_size);
        return body_parse(attr, h->type, h->misc, &c, ret);
}

static const char *const record_type_table[] = {
        [PERF_RECORD_MMAP]              = "MMAP",
        [PERF_RECORD_LOST]              = "LOST",
        [PERF_RECORD_COMM]              = "COMM",
        [PERF_RECORD_EXIT]              = "EXIT",
        [PERF_RECORD_THROTTLE]          = "THROTTLE",
        [PERF_RECORD_UNTHROTTLE]        = "UNTHROTTLE",
        [PERF_RECORD_FORK]              = "FORK",
        [PERF_RECORD_READ]              = "READ",
        [PERF_RECORD_SAMPLE]            = "SAMPLE",
        [PERF_RECORD_MMAP2]             = "MMAP2",
        [PERF_RECORD_AUX]               = "AUX",
        [PERF_RECORD_ITRACE_START]      = "ITRACE_START",
        [PERF_RECORD_LOST_SAMPLES]      = "LOST_SAMPLES",
        [PERF_RECORD_SWITCH]            = "SWITCH",
        [PERF_RECORD_SWITCH_CPU_WIDE]   = "SWITCH_CPU_WIDE",
        [PERF_RECORD_NAMESPACES]        = "NAMESPACES",
        [PERF_RECORD_KSYMBOL]           = "KSYMBOL",
        [PERF_RECORD_BPF_EVENT]         = "BPF_EVENT",
        [PERF_RECORD_CGROUP]            = "CGROUP",
        [PERF_RECORD_TEXT_POKE]         = "TEXT_POKE",
        [PERF_RECORD_AUX_OUTPUT_HW_ID]  = "AUX_OUTPUT_HW_ID",
        [RECORD_CALLCHAIN_DEFERRED]     = "CALLCHAIN_DEFERRED",
};

const char *record_type_to_string(uint32_t type) {
        if (type >= ELEMENTSOF(record_type_table))
                return NULL;
        return record_type_table[type];
}
