/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* PERF_RECORD_SAMPLE: every PERF_SAMPLE_* field, in the order the kernel
 * writes them (perf_output_sample() in kernel/events/core.c; the uapi
 * comment above PERF_RECORD_SAMPLE lists AUX before the page sizes, the
 * code writes it last). Hot path: no allocation, pointers into the record. */

#include <errno.h>
#include <string.h>

#include "cursor.h"
#include "evmon/monitor.h"

/* Newer than some uapi headers we build against (added in 6.8); the bit and
 * the layout (one u64 per branch entry after the entries) are ABI. */
#define SAMPLE_BRANCH_COUNTERS (1ULL << 19)

/* Every sample_type bit we know the layout of; PERF_SAMPLE_MAX may grow in
 * newer headers, so list them. */
#define SAMPLE_KNOWN                                                            \
        (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | \
         PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_ID |             \
         PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_STREAM_ID |          \
         PERF_SAMPLE_RAW | PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER |    \
         PERF_SAMPLE_STACK_USER | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC |    \
         PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TRANSACTION |                      \
         PERF_SAMPLE_REGS_INTR | PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_AUX |       \
         PERF_SAMPLE_CGROUP | PERF_SAMPLE_DATA_PAGE_SIZE |                       \
         PERF_SAMPLE_CODE_PAGE_SIZE | PERF_SAMPLE_WEIGHT_STRUCT)

/* The time_enabled and time_running that READ_FORMAT asks for. */
static int read_times(struct cursor *c, uint64_t rf, struct perf_read *ret) {
        int r;

        if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED) {
                r = cursor_u64(c, &ret->time_enabled);
                if (r < 0)
                        return r;
        }
        if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING) {
                r = cursor_u64(c, &ret->time_running);
                if (r < 0)
                        return r;
        }
        return 0;
}

int read_format_parse(struct cursor *c, uint64_t rf, struct perf_read *ret) {
        int r;

        *ret = (struct perf_read) { .read_format = rf };

        if (rf & PERF_FORMAT_GROUP) {
                /* { nr; time_enabled?; time_running?; { value; id?; lost? }[nr] } */
                size_t entry = 8 * (1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST));

                r = cursor_u64(c, &ret->nr);
                if (r < 0)
                        return r;
                r = read_times(c, rf, ret);
                if (r < 0)
                        return r;
                return cursor_take_array(c, ret->nr, entry, &ret->values);
        }

        /* { value; time_enabled?; time_running?; id?; lost? }: values points
         * at the value, perf_read_get() knows to step over the times. */
        ret->nr = 1;
        ret->values = c->p;
        r = cursor_take(c, 8, NULL);
        if (r < 0)
                return r;
        r = read_times(c, rf, ret);
        if (r < 0)
                return r;
        return cursor_take(c, 8 * (!!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST)), NULL);
}

static uint64_t load_u64(const void *base, size_t index) {
        uint64_t v;

        memcpy(&v, (const uint8_t *) base + 8 * index, sizeof(v));
        return v;
}

int perf_read_get(const struct perf_read *r, uint64_t i, struct perf_read_value *ret) {
        uint64_t rf;
        size_t k;
        const uint8_t *p;

        if (!r || !ret)
                return -EINVAL;
        if (i >= r->nr || !r->values)
                return -ERANGE;

        rf = r->read_format;
        if (rf & PERF_FORMAT_GROUP) {
                size_t entry = 1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST);

                p = (const uint8_t *) r->values + 8 * entry * i;
                k = 1;
        } else {
                p = r->values;
                k = 1 + !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) + !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);
        }

        *ret = (struct perf_read_value) { .value = load_u64(p, 0) };
        if (rf & PERF_FORMAT_ID)
                ret->id = load_u64(p, k++);
        if (rf & PERF_FORMAT_LOST)
                ret->lost = load_u64(p, k++);
        return 0;
}

static int parse_regs(struct cursor *c, uint64_t mask, uint64_t *abi, uint64_t *ret_mask, const uint64_t **regs) {
        const void *p;
        int r;

        r = cursor_u64(c, abi);
        if (r < 0)
                return r;
        /* PERF_SAMPLE_REGS_ABI_NONE: no registers follow (e.g. a kernel
         * thread has no user regs). */
        if (*abi == PERF_SAMPLE_REGS_ABI_NONE)
                return 0;

        r = cursor_take_array(c, (uint64_t) __builtin_popcountll(mask), 8, &p);
        if (r < 0)
                return r;
        *ret_mask = mask;
        *regs = p;
        return 0;
}

/* The layout evmond asks for (monitor.c), with or without CGROUP: every
 * sample it reads, so it gets a straight-line parse. */
#define SAMPLE_LAYOUT_MONITOR \
        (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_RAW)

static int sample_parse_monitor(uint64_t t, const struct perf_event_header *h, struct perf_sample *ret) {
        const uint8_t *p = (const uint8_t *) (h + 1), *end = (const uint8_t *) h + h->size;
        uint32_t raw_size;
        size_t raw_span;

        /* id, pid, tid, time, cpu, res, raw size */
        if (end - p < 36)
                return -EBADMSG;
        memset(ret, 0, sizeof(*ret));
        ret->sample_type = t;
        ret->header = h;
        memcpy(&ret->id, p, 8);
        memcpy(&ret->pid, p + 8, 4);
        memcpy(&ret->tid, p + 12, 4);
        memcpy(&ret->time, p + 16, 8);
        memcpy(&ret->cpu, p + 24, 4);
        memcpy(&ret->res, p + 28, 4);
        memcpy(&raw_size, p + 32, 4);
        p += 36;
        /* The data starts 44 bytes into the record; with its size it is
         * padded to 8 bytes, as cursor_align8() would. */
        raw_span = (((size_t) raw_size + 44 + 7) & ~(size_t) 7) - 44;
        if ((size_t) (end - p) < raw_span)
                return -EBADMSG;
        ret->raw.size = raw_size;
        ret->raw.data = p;
        p += raw_span;
        if (t & PERF_SAMPLE_CGROUP) {
                if (end - p < 8)
                        return -EBADMSG;
                memcpy(&ret->cgroup, p, 8);
        }
        return 0;
}

#define GET(bit, fn, dst)                               \
        if (t & (bit)) {                                \
                r = fn(&c, dst);                        \
                if (r < 0)                              \
                        return r;                       \
        }

/* The fixed fields up to PERIOD, those of T's bits. */
static int parse_head(struct cursor *cur, uint64_t t, struct perf_sample *ret) {
        struct cursor c = *cur;
        int r;

        GET(PERF_SAMPLE_IDENTIFIER, cursor_u64, &ret->id);
        GET(PERF_SAMPLE_IP, cursor_u64, &ret->ip);
        GET(PERF_SAMPLE_TID, cursor_u32, &ret->pid);
        GET(PERF_SAMPLE_TID, cursor_u32, &ret->tid);
        GET(PERF_SAMPLE_TIME, cursor_u64, &ret->time);
        GET(PERF_SAMPLE_ADDR, cursor_u64, &ret->addr);
        GET(PERF_SAMPLE_ID, cursor_u64, &ret->id);
        GET(PERF_SAMPLE_STREAM_ID, cursor_u64, &ret->stream_id);
        GET(PERF_SAMPLE_CPU, cursor_u32, &ret->cpu);
        GET(PERF_SAMPLE_CPU, cursor_u32, &ret->res);
        GET(PERF_SAMPLE_PERIOD, cursor_u64, &ret->period);
        *cur = c;
        return 0;
}

/* The parts of a sample that are more than one value, each after the
 * fields before it (perf_event_open(2) "PERF_RECORD_SAMPLE"). */
static int parse_callchain(struct cursor *c, struct perf_sample *ret) {
        const void *p;
        int r;

        r = cursor_u64(c, &ret->callchain.nr);
        if (r < 0)
                return r;
        r = cursor_take_array(c, ret->callchain.nr, 8, &p);
        if (r < 0)
                return r;
        ret->callchain.ips = p;
        return 0;
}

static int parse_raw(struct cursor *c, const struct perf_event_header *h, struct perf_sample *ret) {
        int r;

        r = cursor_u32(c, &ret->raw.size);
        if (r < 0)
                return r;
        r = cursor_take(c, ret->raw.size, &ret->raw.data);
        if (r < 0)
                return r;
        /* The kernel counts its padding in size; be exact anyway. */
        return cursor_align8(c, h);
}

static int parse_branch_stack(struct cursor *c, uint64_t branch_sample_type, struct perf_sample *ret) {
        const void *p;
        int r;

        r = cursor_u64(c, &ret->branch_stack.nr);
        if (r < 0)
                return r;
        if (branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX) {
                r = cursor_u64(c, &ret->branch_stack.hw_idx);
                if (r < 0)
                        return r;
                ret->branch_stack.has_hw_idx = true;
        }
        r = cursor_take_array(c, ret->branch_stack.nr, sizeof(struct perf_branch_entry), &p);
        if (r < 0)
                return r;
        ret->branch_stack.entries = p;
        if (branch_sample_type & SAMPLE_BRANCH_COUNTERS) {
                r = cursor_take_array(c, ret->branch_stack.nr, 8, &p);
                if (r < 0)
                        return r;
                ret->branch_stack.counters = p;
        }
        return 0;
}

/* { size; data[size]; dyn_size } but only size when 0
 * (perf_output_sample_ustack()). */
static int parse_stack_user(struct cursor *c, const struct perf_event_header *h, struct perf_sample *ret) {
        int r;

        r = cursor_u64(c, &ret->stack_user.size);
        if (r < 0 || ret->stack_user.size == 0)
                return r;
        r = cursor_take(c, ret->stack_user.size, &ret->stack_user.data);
        if (r < 0)
                return r;
        r = cursor_align8(c, h);
        if (r < 0)
                return r;
        return cursor_u64(c, &ret->stack_user.dyn_size);
}

static int parse_aux(struct cursor *c, const struct perf_event_header *h, struct perf_sample *ret) {
        int r;

        r = cursor_u64(c, &ret->aux.size);
        if (r < 0)
                return r;
        r = cursor_take(c, ret->aux.size, &ret->aux.data);
        if (r < 0)
                return r;
        return cursor_align8(c, h);
}

int sample_parse(const struct perf_event_attr *attr, const struct perf_event_header *h,
                 struct perf_sample *ret) {
        struct cursor c;
        uint64_t t;
        int r;

        if (!attr || !h || !ret)
                return -EINVAL;
        if (h->type != PERF_RECORD_SAMPLE)
                return -EINVAL;
        if (h->size < sizeof(*h))
                return -EBADMSG;

        t = attr->sample_type;
        if ((t & ~(uint64_t) PERF_SAMPLE_CGROUP) == SAMPLE_LAYOUT_MONITOR)
                return sample_parse_monitor(t, h, ret);
        /* An unknown bit may add a field anywhere: we could not find the
         * ones after it. */
        if (t & ~(uint64_t) SAMPLE_KNOWN)
                return -EOPNOTSUPP;

        memset(ret, 0, sizeof(*ret));
        ret->sample_type = t;
        ret->header = h;
        c = cursor_make(h + 1, h->size - sizeof(*h));

        r = parse_head(&c, t, ret);
        if (r < 0)
                return r;

        if (t & PERF_SAMPLE_READ) {
                r = read_format_parse(&c, attr->read_format, &ret->read);
                if (r < 0)
                        return r;
        }

        if (t & PERF_SAMPLE_CALLCHAIN) {
                r = parse_callchain(&c, ret);
                if (r < 0)
                        return r;
        }

        if (t & PERF_SAMPLE_RAW) {
                r = parse_raw(&c, h, ret);
                if (r < 0)
                        return r;
        }

        if (t & PERF_SAMPLE_BRANCH_STACK) {
                r = parse_branch_stack(&c, attr->branch_sample_type, ret);
                if (r < 0)
                        return r;
        }

        if (t & PERF_SAMPLE_REGS_USER) {
                r = parse_regs(&c, attr->sample_regs_user, &ret->regs_user.abi,
                               &ret->regs_user.mask, &ret->regs_user.regs);
                if (r < 0)
                        return r;
        }

        if (t & PERF_SAMPLE_STACK_USER) {
                r = parse_stack_user(&c, h, ret);
                if (r < 0)
                        return r;
        }

        /* WEIGHT and WEIGHT_STRUCT are one u64 either way. */
        GET(PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT, cursor_u64, &ret->weight);
        GET(PERF_SAMPLE_DATA_SRC, cursor_u64, &ret->data_src);
        GET(PERF_SAMPLE_TRANSACTION, cursor_u64, &ret->transaction);

        if (t & PERF_SAMPLE_REGS_INTR) {
                r = parse_regs(&c, attr->sample_regs_intr, &ret->regs_intr.abi,
                               &ret->regs_intr.mask, &ret->regs_intr.regs);
                if (r < 0)
                        return r;
        }

        GET(PERF_SAMPLE_PHYS_ADDR, cursor_u64, &ret->phys_addr);
        GET(PERF_SAMPLE_CGROUP, cursor_u64, &ret->cgroup);
        GET(PERF_SAMPLE_DATA_PAGE_SIZE, cursor_u64, &ret->data_page_size);
        GET(PERF_SAMPLE_CODE_PAGE_SIZE, cursor_u64, &ret->code_page_size);

        if (t & PERF_SAMPLE_AUX) {
                r = parse_aux(&c, h, ret);
                if (r < 0)
                        return r;
        }
#undef GET

        return 0;
}
