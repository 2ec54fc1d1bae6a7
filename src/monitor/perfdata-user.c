/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* perf's own records (PERF_RECORD_HEADER_ATTR and those after it) as
 * trees of named values. Layouts: tools/lib/perf/include/perf/event.h,
 * perf.data-file-format.txt. The flat ones are field tables; read
 * through bounds-checked cursors in the file's byte order. */

#include <errno.h>
#include <string.h>

#include "perfdata-int.h"

static const struct field_spec tracing_data_fields[] = { { "size", F_U32 } };
static const struct field_spec id_index_fields[] = {
        { "id", F_U64 }, { "idx", F_U64 }, { "cpu", F_S64 }, { "tid", F_S64 },
};
static const struct field_spec auxtrace_fields[] = {
        { "size", F_U64 }, { "offset", F_U64 }, { "reference", F_U64 },
        { "idx", F_U32 }, { "tid", F_U32 }, { "cpu", F_S32 },
};
static const struct field_spec auxtrace_error_fields[] = {
        { "error_type", F_U32 }, { "code", F_U32 }, { "cpu", F_S32 }, { "pid", F_S32 },
        { "tid", F_S32 }, { "fmt", F_U32 }, { "ip", F_HEX64 },
};
static const struct field_spec stat_fields[] = {
        { "id", F_U64 }, { "cpu", F_S32 }, { "thread", F_S32 }, { "val", F_U64 }, { "ena", F_U64 }, { "run", F_U64 },
};

/* HEADER_ATTR: the attr (its own size), then the ids. */
static int user_attr(struct tree *t, uint32_t o, struct pcur *c) {
        struct perf_event_attr attr;
        uint32_t size, a;
        int r;

        if (cursor_left(&c->c) < PERF_ATTR_SIZE_VER0)
                return -EBADMSG;
        memcpy(&size, c->c.p + 4, sizeof(size));
        if (c->swap)
                size = bswap_32(size);
        if (size == 0)
                size = PERF_ATTR_SIZE_VER0;
        if (size < PERF_ATTR_SIZE_VER0 || size > cursor_left(&c->c))
                return -EBADMSG;
        r = attr_read(c->c.p, size, c->swap, &attr);
        if (r < 0)
                return r;
        c->c.p += size;
        attr_decode(t, tree_add(t, o, "attr", PERFDATA_NODE_OBJECT), &attr);
        a = tree_add(t, o, "ids", PERFDATA_NODE_ARRAY);
        while (cursor_left(&c->c) >= 8) {
                r = put_u64(t, a, NULL, c);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int user_id_index(struct tree *t, uint32_t o, struct pcur *c) {
        uint64_t nr;
        uint32_t a;
        int r;

        r = get_count64(c, 32, &nr);
        if (r < 0)
                return r;
        a = tree_add(t, o, "entries", PERFDATA_NODE_ARRAY);
        for (uint64_t i = 0; i < nr; i++) {
                r = put_fields(t, tree_add(t, a, NULL, PERFDATA_NODE_OBJECT), c, id_index_fields,
                               ELEMENTSOF(id_index_fields));
                if (r < 0)
                        return r;
        }
        return 0;
}

static int user_auxtrace_info(struct tree *t, uint32_t o, struct pcur *c) {
        uint64_t v;
        uint32_t a, u32;
        int r;

        r = put_u32(t, o, "auxtrace_type", c);
        if (r >= 0)
                r = pcur_u32(c, &u32);
        if (r < 0)
                return r;
        a = tree_add(t, o, "priv", PERFDATA_NODE_ARRAY);
        while (cursor_left(&c->c) >= 8) {
                r = pcur_u64(c, &v);
                if (r < 0)
                        return r;
                tree_hex(t, a, NULL, v);
        }
        return 0;
}

static int user_auxtrace_error(struct tree *t, uint32_t o, struct pcur *c) {
        const void *msg;
        int r;

        r = put_fields(t, o, c, auxtrace_error_fields, ELEMENTSOF(auxtrace_error_fields));
        if (r >= 0)
                r = cursor_take(&c->c, 64, &msg);
        if (r >= 0)
                tree_str(t, o, "msg", msg, 64);
        return r;
}

static int user_thread_map(struct tree *t, uint32_t o, struct pcur *c) {
        uint64_t nr, v;
        uint32_t a;
        int r;

        r = get_count64(c, 24, &nr);
        if (r < 0)
                return r;
        a = tree_add(t, o, "threads", PERFDATA_NODE_ARRAY);
        for (uint64_t i = 0; i < nr; i++) {
                uint32_t e = tree_add(t, a, NULL, PERFDATA_NODE_OBJECT);
                const void *comm;

                r = pcur_u64(c, &v);
                if (r >= 0)
                        r = cursor_take(&c->c, 16, &comm);
                if (r < 0)
                        return r;
                tree_s64(t, e, "pid", (int64_t) v);
                tree_str(t, e, "comm", comm, 16);
        }
        return 0;
}

static int user_stat_config(struct tree *t, uint32_t o, struct pcur *c) {
        static const char *const tags[] = { "aggr_mode", "interval", "scale", "aggr_level" };
        uint64_t nr;
        uint32_t a;
        int r;

        r = get_count64(c, 16, &nr);
        if (r < 0)
                return r;
        a = tree_add(t, o, "config", PERFDATA_NODE_ARRAY);
        for (uint64_t i = 0; i < nr; i++) {
                uint32_t e = tree_add(t, a, NULL, PERFDATA_NODE_OBJECT);
                uint64_t tag;

                r = pcur_u64(c, &tag);
                if (r >= 0)
                        r = put_u64(t, e, "value", c);
                if (r < 0)
                        return r;
                tree_u64(t, e, "tag", tag);
                if (tag < ELEMENTSOF(tags))
                        tree_str(t, e, "name", tags[tag], strlen(tags[tag]));
        }
        return 0;
}

static int user_stat_round(struct tree *t, uint32_t o, struct pcur *c) {
        uint64_t v;
        int r;

        r = pcur_u64(c, &v);
        if (r >= 0)
                tree_str(t, o, "round", v == 0 ? "interval" : "final", v == 0 ? 8 : 5);
        if (r >= 0)
                r = put_u64(t, o, "time", c);
        return r;
}

static int user_event_update(struct tree *t, uint32_t o, struct pcur *c) {
        uint64_t type, v;
        int r;

        r = pcur_u64(c, &type);
        if (r >= 0)
                r = put_u64(t, o, "id", c);
        if (r < 0)
                return r;
        switch (type) {
        case 0:         /* PERF_EVENT_UPDATE__UNIT */
                tree_str(t, o, "unit", c->c.p, cursor_left(&c->c));
                return 0;
        case 1: {       /* __SCALE: a double in the file's order */
                double d;

                r = pcur_u64(c, &v);
                if (r < 0)
                        return r;
                memcpy(&d, &v, sizeof(d));
                tree_double(t, o, "scale", d);
                return 0;
        }
        case 2:         /* __NAME */
                tree_str(t, o, "name", c->c.p, cursor_left(&c->c));
                return 0;
        case 3:         /* __CPUS */
                return cpu_map_decode(t, o, "cpus", c);
        }
        tree_u64(t, o, "update_type", type);
        return 0;
}

static int user_time_conv(struct tree *t, uint32_t o, struct pcur *c) {
        uint8_t zero, short_;
        int r;

        r = put_u64(t, o, "time_shift", c);
        if (r >= 0)
                r = put_u64(t, o, "time_mult", c);
        if (r >= 0)
                r = put_u64(t, o, "time_zero", c);
        if (r < 0 || cursor_left(&c->c) < 24)
                return r;       /* the first layout stops here */
        r = put_u64(t, o, "time_cycles", c);
        if (r >= 0)
                r = put_hex64(t, o, "time_mask", c);
        if (r >= 0)
                r = cursor_u8(&c->c, &zero);
        if (r >= 0)
                r = cursor_u8(&c->c, &short_);
        if (r < 0)
                return r;
        tree_bool(t, o, "cap_user_time_zero", zero);
        tree_bool(t, o, "cap_user_time_short", short_);
        return 0;
}

static int user_feature(struct tree *t, uint32_t o, struct pcur *c) {
        uint64_t v;
        int r;

        r = pcur_u64(c, &v);
        if (r < 0)
                return r;
        tree_u64(t, o, "feature_id", v);
        if (!feature_name((unsigned) v) || v > UINT32_MAX)
                return 0;
        r = feature_decode(t, o, (unsigned) v, c->c.p, cursor_left(&c->c), c->swap);
        return r == -EOPNOTSUPP ? 0 : r;
}

/* Record H's body (C) under O: the flat ones from their field tables,
 * the rest by a function each. */
static int user_body(struct tree *t, uint32_t o, const struct perf_event_header *h, struct pcur *c) {
        int r;

        switch (h->type) {
        case PERFDATA_RECORD_HEADER_ATTR:
                return user_attr(t, o, c);
        case PERFDATA_RECORD_HEADER_EVENT_TYPE:
                r = put_u64(t, o, "event_id", c);
                if (r >= 0)
                        tree_str(t, o, "name", c->c.p, cursor_left(&c->c));
                return r;
        case PERFDATA_RECORD_HEADER_TRACING_DATA:
                return put_fields(t, o, c, tracing_data_fields, ELEMENTSOF(tracing_data_fields));
        case PERFDATA_RECORD_HEADER_BUILD_ID:
                return build_id_decode(t, o, c, h->misc, cursor_left(&c->c));
        case PERFDATA_RECORD_FINISHED_ROUND:
        case PERFDATA_RECORD_FINISHED_INIT:
                return 0;
        case PERFDATA_RECORD_ID_INDEX:
                return user_id_index(t, o, c);
        case PERFDATA_RECORD_AUXTRACE_INFO:
                return user_auxtrace_info(t, o, c);
        case PERFDATA_RECORD_AUXTRACE:
                return put_fields(t, o, c, auxtrace_fields, ELEMENTSOF(auxtrace_fields));
        case PERFDATA_RECORD_AUXTRACE_ERROR:
                return user_auxtrace_error(t, o, c);
        case PERFDATA_RECORD_THREAD_MAP:
                return user_thread_map(t, o, c);
        case PERFDATA_RECORD_CPU_MAP:
                return cpu_map_decode(t, o, "cpus", c);
        case PERFDATA_RECORD_STAT_CONFIG:
                return user_stat_config(t, o, c);
        case PERFDATA_RECORD_STAT:
                return put_fields(t, o, c, stat_fields, ELEMENTSOF(stat_fields));
        case PERFDATA_RECORD_STAT_ROUND:
                return user_stat_round(t, o, c);
        case PERFDATA_RECORD_EVENT_UPDATE:
                return user_event_update(t, o, c);
        case PERFDATA_RECORD_TIME_CONV:
                return user_time_conv(t, o, c);
        case PERFDATA_RECORD_HEADER_FEATURE:
                return user_feature(t, o, c);
        }
        return 0;
}

int user_record_decode(struct tree *t, const struct perf_event_header *h, bool swap) {
        struct pcur c = pcur_make(h + 1, h->size - sizeof(*h), swap);
        uint32_t o;

        tree_reset(t);
        o = tree_add(t, 0, NULL, PERFDATA_NODE_OBJECT);
        if (t->oom)
                return -ENOMEM;
        return user_body(t, o, h, &c);
}
