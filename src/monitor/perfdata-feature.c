/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The feature sections of a perf.data header, as trees of named values. Layouts: tools/perf/util/header.c (write_* and
 * process_* of each feature), tools/lib/perf/include/perf/event.h (the
 * user records), perf.data-file-format.txt. Everything is read through
 * bounds-checked cursors in the file's byte order; counts are checked
 * against the bytes left before they are used. */

#include <errno.h>
#include <linux/bpf.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "perfdata-int.h"

static const struct field_spec numa_node_fields[] = {
        { "node", F_U32 }, { "mem_total_kb", F_U64 }, { "mem_free_kb", F_U64 }, { "cpus", F_STR },
};
static const struct field_spec pmu_mapping_fields[] = { { "type", F_U32 }, { "name", F_STR } };
static const struct field_spec group_fields[] = {
        { "name", F_STR }, { "leader_idx", F_U32 }, { "nr_members", F_U32 },
};
static const struct field_spec cache_fields[] = {
        { "level", F_U32 }, { "line_size", F_U32 }, { "sets", F_U32 }, { "ways", F_U32 },
        { "cache_type", F_STR }, { "size", F_STR }, { "map", F_STR },
};
static const struct field_spec cap_fields[] = { { "name", F_STR }, { "value", F_STR } };
static const struct field_spec hybrid_fields[] = { { "pmu", F_STR }, { "cpus", F_STR } };

/* ---- perf_event_attr -------------------------------------------------- */

/* The flag bitfields after read_format, in uapi order (bit 15 and 16 are
 * precise_ip, shown as a number). */
static const char *const attr_flag_names[] = {
        "disabled", "inherit", "pinned", "exclusive", "exclude_user", "exclude_kernel",
        "exclude_hv", "exclude_idle", "mmap", "comm", "freq", "inherit_stat",
        "enable_on_exec", "task", "watermark", NULL, NULL, "mmap_data", "sample_id_all",
        "exclude_host", "exclude_guest", "exclude_callchain_kernel", "exclude_callchain_user",
        "mmap2", "comm_exec", "use_clockid", "context_switch", "write_backward", "namespaces",
        "ksymbol", "bpf_event", "aux_output", "cgroup", "text_poke", "build_id",
        "inherit_thread", "remove_on_exec", "sigtrap", "aux_start_paused", "aux_pause",
        "aux_resume",
};

#define ATTR_FLAGS_OFFSET 40

void attr_decode(struct tree *t, uint32_t parent, const struct perf_event_attr *a) {
        uint64_t flags;
        uint32_t fl;

        memcpy(&flags, (const uint8_t *) a + ATTR_FLAGS_OFFSET, sizeof(flags));
        tree_u64(t, parent, "type", a->type);
        tree_u64(t, parent, "size", a->size);
        tree_hex(t, parent, "config", a->config);
        if (a->freq)
                tree_u64(t, parent, "sample_freq", a->sample_freq);
        else
                tree_u64(t, parent, "sample_period", a->sample_period);
        tree_hex(t, parent, "sample_type", a->sample_type);
        tree_hex(t, parent, "read_format", a->read_format);
        fl = tree_add(t, parent, "flags", PERFDATA_NODE_ARRAY);
        for (size_t b = 0; b < ELEMENTSOF(attr_flag_names); b++)
                if ((flags & (1ULL << b)) && attr_flag_names[b])
                        tree_str(t, fl, NULL, attr_flag_names[b], strlen(attr_flag_names[b]));
        if (a->precise_ip)
                tree_u64(t, parent, "precise_ip", a->precise_ip);
        if (a->wakeup_events)
                tree_u64(t, parent, a->watermark ? "wakeup_watermark" : "wakeup_events", a->wakeup_events);
        if (a->bp_type)
                tree_u64(t, parent, "bp_type", a->bp_type);
        if (a->config1)
                tree_hex(t, parent, a->type == PERF_TYPE_BREAKPOINT ? "bp_addr" : "config1", a->config1);
        if (a->config2)
                tree_hex(t, parent, a->type == PERF_TYPE_BREAKPOINT ? "bp_len" : "config2", a->config2);
        if (a->branch_sample_type)
                tree_hex(t, parent, "branch_sample_type", a->branch_sample_type);
        if (a->sample_regs_user)
                tree_hex(t, parent, "sample_regs_user", a->sample_regs_user);
        if (a->sample_stack_user)
                tree_u64(t, parent, "sample_stack_user", a->sample_stack_user);
        if (a->use_clockid)
                tree_s64(t, parent, "clockid", a->clockid);
        if (a->sample_regs_intr)
                tree_hex(t, parent, "sample_regs_intr", a->sample_regs_intr);
        if (a->aux_watermark)
                tree_u64(t, parent, "aux_watermark", a->aux_watermark);
        if (a->sample_max_stack)
                tree_u64(t, parent, "sample_max_stack", a->sample_max_stack);
        if (a->aux_sample_size)
                tree_u64(t, parent, "aux_sample_size", a->aux_sample_size);
}

/* An attr of SIZE stored bytes at P (the attr's own size field may say
 * less) into a host-order, zero-extended copy. */
int attr_read(const void *p, size_t size, bool swap, struct perf_event_attr *ret) {
        uint8_t buf[sizeof(*ret)] = {};
        size_t n = size < sizeof(buf) ? size : sizeof(buf);

        if (size < PERF_ATTR_SIZE_VER0)
                return -EBADMSG;
        memcpy(buf, p, n);
        if (swap)
                swap_attr(buf, n);
        memcpy(ret, buf, sizeof(*ret));
        return 0;
}

/* ---- cpu maps --------------------------------------------------------- */

/* perf_record_cpu_map_data (tools/lib/perf/include/perf/event.h): u16
 * type, then a list of u16 CPUs (0), a bitmask (1) of u32 or u64 words
 * (long_size), or a range (2). Gives an array of CPU numbers (-1: any). */
int cpu_map_decode(struct tree *t, uint32_t parent, const char *key, struct pcur *c) {
        uint16_t type, nr, long_size, start, end;
        uint32_t a;
        int r;

        r = pcur_u16(c, &type);
        if (r < 0)
                return r;
        a = tree_add(t, parent, key, PERFDATA_NODE_ARRAY);
        switch (type) {
        case 0:
                r = pcur_u16(c, &nr);
                if (r < 0)
                        return r;
                for (uint16_t i = 0; i < nr; i++) {
                        uint16_t cpu;

                        r = pcur_u16(c, &cpu);
                        if (r < 0)
                                return r;
                        tree_s64(t, a, NULL, cpu == UINT16_MAX ? -1 : cpu);
                }
                return 0;
        case 1:
                r = pcur_u16(c, &nr);
                if (r >= 0)
                        r = pcur_u16(c, &long_size);
                if (r < 0)
                        return r;
                if (long_size == 8) {
                        uint32_t pad;

                        r = pcur_u32(c, &pad);
                        if (r < 0)
                                return r;
                } else if (long_size != 4)
                        return -EBADMSG;
                for (uint16_t i = 0; i < nr; i++) {
                        uint64_t w;

                        if (long_size == 4) {
                                uint32_t w32;

                                r = pcur_u32(c, &w32);
                                w = w32;
                        } else
                                r = pcur_u64(c, &w);
                        if (r < 0)
                                return r;
                        for (unsigned b = 0; b < 8u * long_size; b++)
                                if (w & (1ULL << b))
                                        tree_s64(t, a, NULL, (int64_t) i * 8 * long_size + b);
                }
                return 0;
        case 2: {
                uint8_t any, pad;

                r = cursor_u8(&c->c, &any);
                if (r >= 0)
                        r = cursor_u8(&c->c, &pad);
                if (r >= 0)
                        r = pcur_u16(c, &start);
                if (r >= 0)
                        r = pcur_u16(c, &end);
                if (r < 0)
                        return r;
                if (any)
                        tree_s64(t, a, NULL, -1);
                for (uint32_t cpu = start; cpu <= end; cpu++)
                        tree_s64(t, a, NULL, cpu);
                return 0;
        }
        default:
                return -EBADMSG;
        }
}

/* ---- feature sections ------------------------------------------------- */

static const char *const feature_names[] = {
        [1] = "tracing_data", [2] = "build_id", [3] = "hostname", [4] = "osrelease",
        [5] = "version", [6] = "arch", [7] = "nrcpus", [8] = "cpudesc", [9] = "cpuid",
        [10] = "total_mem", [11] = "cmdline", [12] = "event_desc", [13] = "cpu_topology",
        [14] = "numa_topology", [15] = "branch_stack", [16] = "pmu_mappings",
        [17] = "group_desc", [18] = "auxtrace", [19] = "stat", [20] = "cache",
        [21] = "sample_time", [22] = "mem_topology", [23] = "clockid", [24] = "dir_format",
        [25] = "bpf_prog_info", [26] = "bpf_btf", [27] = "compressed", [28] = "cpu_pmu_caps",
        [29] = "clock_data", [30] = "hybrid_topology", [31] = "pmu_caps",
};

const char *feature_name(unsigned feat) {
        return feat < ELEMENTSOF(feature_names) ? feature_names[feat] : NULL;
}

/* build_id_event records (util/build-id.c): header, s32 pid, 24 bytes of
 * build id (20 and a u8 size when misc has PERF_RECORD_MISC_BUILD_ID_SIZE),
 * the file name padded to the record's size. */
#define MISC_BUILD_ID_SIZE (1 << 15)

int build_id_decode(struct tree *t, uint32_t parent, struct pcur *c, uint16_t misc, size_t body) {
        struct pcur b;
        const void *bytes, *id;
        uint32_t pid;
        int r;

        r = cursor_take(&c->c, body, &bytes);
        if (r < 0)
                return r;
        b = pcur_make(bytes, body, c->swap);
        r = pcur_u32(&b, &pid);
        if (r >= 0)
                r = cursor_take(&b.c, 24, &id);
        if (r < 0)
                return r;
        tree_s64(t, parent, "pid", (int32_t) pid);
        if (misc & MISC_BUILD_ID_SIZE) {
                uint8_t size = ((const uint8_t *) id)[20];

                tree_bytes(t, parent, "build_id", id, size <= 20 ? size : 20);
        } else
                tree_bytes(t, parent, "build_id", id, 20);
        tree_str(t, parent, "filename", b.c.p, cursor_left(&b.c));
        return 0;
}

static int feat_build_id(struct tree *t, uint32_t o, struct pcur *c) {
        uint32_t a = tree_add(t, o, "build_ids", PERFDATA_NODE_ARRAY);

        while (cursor_left(&c->c) > 0) {
                uint32_t type, e;
                uint16_t misc, size;
                int r;

                r = pcur_u32(c, &type);
                if (r >= 0)
                        r = pcur_u16(c, &misc);
                if (r >= 0)
                        r = pcur_u16(c, &size);
                if (r < 0)
                        return r;
                if (size < sizeof(struct perf_event_header))
                        return -EBADMSG;
                e = tree_add(t, a, NULL, PERFDATA_NODE_OBJECT);
                tree_str(t, e, "kind", (misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL ||
                                       (misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_GUEST_KERNEL ?
                                       "kernel" : "user", 6);
                r = build_id_decode(t, e, c, misc, size - sizeof(struct perf_event_header));
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The start of trace-cmd's tracing data (util/trace-event-read.c): the
 * rest (formats) is read by perfdata.c, which lists the events. */
static int feat_tracing_data(struct tree *t, uint32_t o, struct pcur *c) {
        static const char magic[] = { 0x17, 0x08, 'D', 't', 'r', 'a', 'c', 'i', 'n', 'g' };
        const void *m;
        const char *version;
        uint8_t big_endian, long_size;
        uint32_t page_size;
        const uint8_t *nul;
        int r;

        tree_u64(t, o, "size", cursor_left(&c->c));
        r = cursor_take(&c->c, sizeof(magic), &m);
        if (r < 0)
                return r;
        if (memcmp(m, magic, sizeof(magic)) != 0)
                return -EBADMSG;
        version = (const char *) c->c.p;
        nul = memchr(c->c.p, 0, cursor_left(&c->c));
        if (!nul)
                return -EBADMSG;
        c->c.p = nul + 1;
        r = cursor_u8(&c->c, &big_endian);
        if (r >= 0)
                r = cursor_u8(&c->c, &long_size);
        if (r >= 0)
                r = pcur_u32(c, &page_size);
        if (r < 0)
                return r;
        tree_str(t, o, "version", version, (size_t) ((const char *) nul - version));
        tree_bool(t, o, "big_endian", big_endian);
        tree_u64(t, o, "long_size", long_size);
        tree_u64(t, o, "page_size", page_size);
        return 0;
}

static int feat_event_desc(struct tree *t, uint32_t o, struct pcur *c) {
        uint32_t nr, attr_size, a;
        int r;

        r = get_count32(c, 0, &nr);
        if (r >= 0)
                r = pcur_u32(c, &attr_size);
        if (r < 0)
                return r;
        if (attr_size < PERF_ATTR_SIZE_VER0 || nr > cursor_left(&c->c) / attr_size)
                return -EBADMSG;
        a = tree_add(t, o, "events", PERFDATA_NODE_ARRAY);
        for (uint32_t i = 0; i < nr; i++) {
                struct perf_event_attr attr;
                const void *p;
                uint32_t nr_ids, e, ids;
                const char *name;
                size_t len;

                r = cursor_take(&c->c, attr_size, &p);
                if (r >= 0)
                        r = attr_read(p, attr_size, c->swap, &attr);
                if (r >= 0)
                        r = get_count32(c, 8, &nr_ids);
                if (r >= 0)
                        r = pcur_perf_string(c, &name, &len);
                if (r < 0)
                        return r;
                e = tree_add(t, a, NULL, PERFDATA_NODE_OBJECT);
                tree_str(t, e, "name", name, len);
                attr_decode(t, e, &attr);
                if (nr_ids > cursor_left(&c->c) / 8)
                        return -EBADMSG;
                ids = tree_add(t, e, "ids", PERFDATA_NODE_ARRAY);
                for (uint32_t k = 0; k < nr_ids; k++) {
                        r = put_u64(t, ids, NULL, c);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

/* u32 nr_cores, core siblings; u32 nr_threads, thread siblings; then, when
 * the section goes on, {u32 core_id, u32 socket_id} per available CPU, u32
 * nr_dies, die siblings, u32 die_id per CPU (util/header.c
 * process_cpu_topology: each part is optional, newer perfs write more). */
static int feat_cpu_topology(struct tree *t, uint32_t o, struct pcur *c, uint32_t nr_cpus) {
        uint32_t a;
        int r;

        r = put_string_list(t, o, "core_siblings", c);
        if (r >= 0)
                r = put_string_list(t, o, "thread_siblings", c);
        if (r < 0)
                return r;
        if (cursor_left(&c->c) == 0 || nr_cpus == 0 || nr_cpus > cursor_left(&c->c) / 8)
                return 0;
        a = tree_add(t, o, "cpus", PERFDATA_NODE_ARRAY);
        for (uint32_t i = 0; i < nr_cpus; i++) {
                uint32_t e = tree_add(t, a, NULL, PERFDATA_NODE_OBJECT);

                tree_u64(t, e, "cpu", i);
                r = put_u32(t, e, "core_id", c);
                if (r >= 0)
                        r = put_u32(t, e, "socket_id", c);
                if (r < 0)
                        return r;
        }
        if (cursor_left(&c->c) == 0)
                return 0;
        r = put_string_list(t, o, "die_siblings", c);
        if (r < 0)
                return r;
        for (uint32_t i = 0, e = t->nodes[a].child; i < nr_cpus && e; i++, e = t->nodes[e].next) {
                r = put_u32(t, e, "die_id", c);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The AUXTRACE index: tables of u64 nr, {u64 offset, u64 size}[nr]. */
static int feat_auxtrace(struct tree *t, uint32_t o, struct pcur *c) {
        uint32_t a = tree_add(t, o, "index", PERFDATA_NODE_ARRAY);

        while (cursor_left(&c->c) > 0) {
                uint64_t nr;
                int r;

                r = get_count64(c, 16, &nr);
                if (r < 0)
                        return r;
                for (uint64_t i = 0; i < nr; i++) {
                        uint32_t e = tree_add(t, a, NULL, PERFDATA_NODE_OBJECT);

                        r = put_u64(t, e, "offset", c);
                        if (r >= 0)
                                r = put_u64(t, e, "size", c);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

static int feat_cache(struct tree *t, uint32_t o, struct pcur *c) {
        uint32_t version;
        int r;

        r = pcur_u32(c, &version);
        if (r < 0)
                return r;
        if (version != 1)
                return -EBADMSG;
        return put_list(t, o, "caches", c, 28, cache_fields, ELEMENTSOF(cache_fields));
}

/* u64 version, block_size, nr; per node u64 node, size (blocks), then a
 * bitmap: u64 bits and the u64 words (util/header.c do_write_bitmap).
 * The blocks are given as [first, last] ranges of set bits. */
static int feat_mem_topology(struct tree *t, uint32_t o, struct pcur *c) {
        uint64_t version, nr;
        uint32_t a;
        int r;

        r = pcur_u64(c, &version);
        if (r >= 0)
                r = put_u64(t, o, "block_size", c);
        if (r >= 0)
                r = get_count64(c, 24, &nr);
        if (r < 0)
                return r;
        tree_u64(t, o, "version", version);
        a = tree_add(t, o, "nodes", PERFDATA_NODE_ARRAY);
        for (uint64_t i = 0; i < nr; i++) {
                uint32_t e = tree_add(t, a, NULL, PERFDATA_NODE_OBJECT), ranges;
                uint64_t bits, words, start = UINT64_MAX, bit = 0;

                r = put_u64(t, e, "node", c);
                if (r >= 0)
                        r = put_u64(t, e, "size", c);
                if (r >= 0)
                        r = pcur_u64(c, &bits);
                if (r < 0)
                        return r;
                words = bits / 64 + (bits % 64 != 0);
                if (words > cursor_left(&c->c) / 8)
                        return -EBADMSG;
                ranges = tree_add(t, e, "blocks", PERFDATA_NODE_ARRAY);
                for (uint64_t w = 0; w < words; w++) {
                        uint64_t v;

                        r = pcur_u64(c, &v);
                        if (r < 0)
                                return r;
                        for (unsigned b = 0; b < 64; b++, bit++) {
                                bool set = bit < bits && (v & (1ULL << b));

                                if (set && start == UINT64_MAX)
                                        start = bit;
                                if (!set && start != UINT64_MAX) {
                                        uint32_t rg = tree_add(t, ranges, NULL, PERFDATA_NODE_ARRAY);

                                        tree_u64(t, rg, NULL, start);
                                        tree_u64(t, rg, NULL, bit - 1);
                                        start = UINT64_MAX;
                                }
                        }
                }
                if (start != UINT64_MAX) {
                        uint32_t rg = tree_add(t, ranges, NULL, PERFDATA_NODE_ARRAY);

                        tree_u64(t, rg, NULL, start);
                        tree_u64(t, rg, NULL, bit - 1);
                }
        }
        return 0;
}

/* struct perf_bpil (util/bpf-utils.h): u32 info_len, u32 data_len, u64
 * arrays, then info_len bytes of struct bpf_prog_info and data_len bytes
 * of the arrays it points to. Only the info's fixed head is shown. */
static int feat_bpf_prog_info(struct tree *t, uint32_t o, struct pcur *c) {
        uint32_t nr, a;
        int r;

        r = get_count32(c, 16, &nr);
        if (r < 0)
                return r;
        a = tree_add(t, o, "programs", PERFDATA_NODE_ARRAY);
        for (uint32_t i = 0; i < nr; i++) {
                uint32_t e = tree_add(t, a, NULL, PERFDATA_NODE_OBJECT);
                uint32_t info_len, data_len;
                uint64_t arrays;
                const uint8_t *info;
                struct pcur ic;

                r = pcur_u32(c, &info_len);
                if (r >= 0)
                        r = pcur_u32(c, &data_len);
                if (r >= 0)
                        r = pcur_u64(c, &arrays);
                if (r >= 0)
                        r = cursor_take(&c->c, info_len, (const void **) &info);
                if (r >= 0)
                        r = cursor_take(&c->c, data_len, NULL);
                if (r < 0)
                        return r;
                tree_u64(t, e, "info_len", info_len);
                tree_u64(t, e, "data_len", data_len);
                if (info_len < offsetof(struct bpf_prog_info, name) + BPF_OBJ_NAME_LEN)
                        continue;
                ic = pcur_make(info, info_len, c->swap);
                (void) put_u32(t, e, "prog_type", &ic);
                (void) put_u32(t, e, "id", &ic);
                tree_bytes(t, e, "tag", info + offsetof(struct bpf_prog_info, tag), BPF_TAG_SIZE);
                tree_str(t, e, "name", info + offsetof(struct bpf_prog_info, name), BPF_OBJ_NAME_LEN);
        }
        return 0;
}

static int feat_bpf_btf(struct tree *t, uint32_t o, struct pcur *c) {
        uint32_t nr, a;
        int r;

        r = get_count32(c, 8, &nr);
        if (r < 0)
                return r;
        a = tree_add(t, o, "btfs", PERFDATA_NODE_ARRAY);
        for (uint32_t i = 0; i < nr; i++) {
                uint32_t e = tree_add(t, a, NULL, PERFDATA_NODE_OBJECT), size;

                r = put_u32(t, e, "id", c);
                if (r >= 0)
                        r = pcur_u32(c, &size);
                if (r >= 0)
                        r = cursor_take(&c->c, size, NULL);
                if (r < 0)
                        return r;
                tree_u64(t, e, "size", size);
        }
        return 0;
}

/* u32 nr_pmu, then per PMU its caps and its name (util/header.c
 * write_pmu_caps). */
static int feat_pmu_caps(struct tree *t, uint32_t o, struct pcur *c) {
        uint32_t nr, a;
        int r;

        r = get_count32(c, 8, &nr);
        if (r < 0)
                return r;
        a = tree_add(t, o, "pmus", PERFDATA_NODE_ARRAY);
        for (uint32_t i = 0; i < nr; i++) {
                uint32_t e = tree_add(t, a, NULL, PERFDATA_NODE_OBJECT);

                r = put_list(t, e, "caps", c, 8, cap_fields, ELEMENTSOF(cap_fields));
                if (r >= 0)
                        r = put_string(t, e, "pmu", c);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int feature_body(struct tree *t, uint32_t o, unsigned feat, struct pcur *c, uint32_t nr_cpus) {
        int r;

        switch (feat) {
        case 1:
                return feat_tracing_data(t, o, c);
        case 2:
                return feat_build_id(t, o, c);
        case 3: case 4: case 5: case 6: case 8: case 9:
                return put_string(t, o, "value", c);
        case 7:
                r = put_u32(t, o, "available", c);
                if (r >= 0)
                        r = put_u32(t, o, "online", c);
                return r;
        case 10:
                return put_u64(t, o, "kb", c);
        case 11:
                return put_string_list(t, o, "args", c);
        case 12:
                return feat_event_desc(t, o, c);
        case 13:
                return feat_cpu_topology(t, o, c, nr_cpus);
        case 14:
                return put_list(t, o, "nodes", c, 24, numa_node_fields, ELEMENTSOF(numa_node_fields));
        case 15: case 19:
                return 0;               /* a flag, no data */
        case 16:
                return put_list(t, o, "pmus", c, 8, pmu_mapping_fields, ELEMENTSOF(pmu_mapping_fields));
        case 17:
                return put_list(t, o, "groups", c, 12, group_fields, ELEMENTSOF(group_fields));
        case 18:
                return feat_auxtrace(t, o, c);
        case 20:
                return feat_cache(t, o, c);
        case 21:
                r = put_u64(t, o, "first", c);
                if (r >= 0)
                        r = put_u64(t, o, "last", c);
                return r;
        case 22:
                return feat_mem_topology(t, o, c);
        case 23:
                return put_u64(t, o, "res_ns", c);
        case 24:
                return put_u64(t, o, "version", c);
        case 25:
                return feat_bpf_prog_info(t, o, c);
        case 26:
                return feat_bpf_btf(t, o, c);
        case 27:
                r = put_u32(t, o, "version", c);
                if (r >= 0)
                        r = put_u32(t, o, "compression", c);    /* 1: zstd */
                if (r >= 0)
                        r = put_u32(t, o, "level", c);
                if (r >= 0)
                        r = put_u32(t, o, "ratio", c);
                if (r >= 0)
                        r = put_u32(t, o, "mmap_len", c);
                return r;
        case 28:
                return put_list(t, o, "caps", c, 8, cap_fields, ELEMENTSOF(cap_fields));
        case 29: {
                uint32_t clockid;

                r = put_u32(t, o, "version", c);
                if (r >= 0)
                        r = pcur_u32(c, &clockid);
                if (r >= 0)
                        tree_s64(t, o, "clockid", (int32_t) clockid);
                if (r >= 0)
                        r = put_u64(t, o, "wall_ns", c);
                if (r >= 0)
                        r = put_u64(t, o, "clockid_ns", c);
                return r;
        }
        case 30:
                return put_list(t, o, "pmus", c, 8, hybrid_fields, ELEMENTSOF(hybrid_fields));
        case 31:
                return feat_pmu_caps(t, o, c);
        }
        return -EOPNOTSUPP;
}

int feature_decode_nrcpus(struct tree *t, uint32_t parent, unsigned feat, const void *p, size_t size,
                          bool swap, uint32_t nr_cpus) {
        const char *name = feature_name(feat);
        struct pcur c = pcur_make(p, size, swap);
        uint32_t o;
        int r;

        if (!name)
                return -EOPNOTSUPP;
        o = tree_add(t, parent, name, PERFDATA_NODE_OBJECT);
        r = feature_body(t, o, feat, &c, nr_cpus);
        if (r < 0)
                tree_u64(t, o, "error_at", (uint64_t) ((const uint8_t *) c.c.p - (const uint8_t *) p));
        return r;
}

int feature_decode(struct tree *t, uint32_t parent, unsigned feat, const void *p, size_t size, bool swap) {
        return feature_decode_nrcpus(t, parent, feat, p, size, swap, 0);
}
