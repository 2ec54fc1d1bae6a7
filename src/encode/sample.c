/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The "sample" object of an event line: every PERF_SAMPLE_* field a sample
 * carries beyond the line's top level, in the order the kernel writes them
 * (perf_output_sample() in kernel/events/core.c), decoded as perf script
 * decodes them (tools/perf/util/evsel.c, callchain.c, mem-events.c,
 * branch.c, perf_regs.c). Hot path: no allocation; the caller reserves
 * encode_sample_max() bytes once and this writes without further checks. */

#include <stdbool.h>
#include <string.h>

#include "evmon/encode-perf.h"
#include "writer.h"

/* Newer than some uapi headers (6.8): one u64 counter per branch entry. */
#define SAMPLE_BRANCH_COUNTERS (1ULL << 19)

/* Every field but the registers, the read values, the callchain, the
 * branch stack and raw, with their keys (data_src, transaction and
 * weight_struct decoded into all their parts): generously counted. */
#define SAMPLE_SCALARS_MAX 2048u
/* One read value: {"value":N,"id":N,"lost":N,"event":} plus the comma. */
#define READ_VALUE_MAX (48u + 3u * JSON_INT_MAX)
/* One frame: "0x…" and a comma; a context switch: ]},{"context":"…","ips":[ */
#define FRAME_MAX (JSON_HEX_MAX + 1u)
#define CONTEXT_MAX 64u
/* One branch entry with every flag, its names and a counter. */
#define BRANCH_MAX (200u + 2u * JSON_HEX_MAX + 2u * JSON_INT_MAX)
/* One register: "xmm15h":"0x…", */
#define REG_MAX (12u + JSON_HEX_MAX)
#define REGS_FIXED_MAX 64u

static inline uint64_t load_u64(const void *p) {
        uint64_t v;

        memcpy(&v, p, sizeof(v));
        return v;
}

/* ---- names ------------------------------------------------------------- */

/* Register names of PERF_SAMPLE_REGS_* bits for the architecture evmon is
 * built for (asm/perf_regs.h), in perf's spelling, lower case. Bits
 * without a name (and every bit elsewhere) are "rN". */
#if defined(__x86_64__) || defined(__i386__)
static const char *const reg_names[64] = {
        "ax", "bx", "cx", "dx", "si", "di", "bp", "sp",
        "ip", "flags", "cs", "ss", "ds", "es", "fs", "gs",
        "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
        "ssp", NULL, NULL, NULL, NULL, NULL, NULL, NULL,
        /* 128-bit XMM registers take two bits each: low, then high half. */
        "xmm0", "xmm0h", "xmm1", "xmm1h", "xmm2", "xmm2h", "xmm3", "xmm3h",
        "xmm4", "xmm4h", "xmm5", "xmm5h", "xmm6", "xmm6h", "xmm7", "xmm7h",
        "xmm8", "xmm8h", "xmm9", "xmm9h", "xmm10", "xmm10h", "xmm11", "xmm11h",
        "xmm12", "xmm12h", "xmm13", "xmm13h", "xmm14", "xmm14h", "xmm15", "xmm15h",
};
#elif defined(__aarch64__)
static const char *const reg_names[64] = {
        "x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7",
        "x8", "x9", "x10", "x11", "x12", "x13", "x14", "x15",
        "x16", "x17", "x18", "x19", "x20", "x21", "x22", "x23",
        "x24", "x25", "x26", "x27", "x28", "x29", "lr", "sp",
        "pc", "vg",
};
#else
static const char *const reg_names[64] = {};
#endif

static const char *const branch_type_names[16] = {
        "unknown", "cond", "uncond", "ind", "call", "ind_call", "ret", "syscall",
        "sysret", "cond_call", "cond_ret", "eret", "irq", "serror", "no_tx", "extend_abi",
};

/* PERF_BR_NEW_*: the type when type is PERF_BR_EXTEND_ABI. */
static const char *const branch_new_type_names[16] = {
        "fault_algn", "fault_data", "fault_inst", "arch_1", "arch_2", "arch_3", "arch_4", "arch_5",
};

static const char *const branch_spec_names[4] = {
        "na", "wrong_path", "non_spec_correct_path", "spec_correct_path",
};

static const char *const branch_priv_names[8] = {
        "unknown", "user", "kernel", "hv",
};

struct bit_name {
        uint64_t bit;
        const char *name;
};

static const struct bit_name mem_op_names[] = {
        { PERF_MEM_OP_NA, "na" }, { PERF_MEM_OP_LOAD, "load" }, { PERF_MEM_OP_STORE, "store" },
        { PERF_MEM_OP_PFETCH, "pfetch" }, { PERF_MEM_OP_EXEC, "exec" },
};

static const struct bit_name mem_lvl_names[] = {
        { PERF_MEM_LVL_NA, "na" }, { PERF_MEM_LVL_HIT, "hit" }, { PERF_MEM_LVL_MISS, "miss" },
        { PERF_MEM_LVL_L1, "l1" }, { PERF_MEM_LVL_LFB, "lfb" }, { PERF_MEM_LVL_L2, "l2" },
        { PERF_MEM_LVL_L3, "l3" }, { PERF_MEM_LVL_LOC_RAM, "loc_ram" }, { PERF_MEM_LVL_REM_RAM1, "rem_ram1" },
        { PERF_MEM_LVL_REM_RAM2, "rem_ram2" }, { PERF_MEM_LVL_REM_CCE1, "rem_cce1" },
        { PERF_MEM_LVL_REM_CCE2, "rem_cce2" }, { PERF_MEM_LVL_IO, "io" }, { PERF_MEM_LVL_UNC, "unc" },
};

/* mem_snoop, then mem_snoopx shifted above it (perf prints them as one list). */
static const struct bit_name mem_snoop_names[] = {
        { PERF_MEM_SNOOP_NA, "na" }, { PERF_MEM_SNOOP_NONE, "none" }, { PERF_MEM_SNOOP_HIT, "hit" },
        { PERF_MEM_SNOOP_MISS, "miss" }, { PERF_MEM_SNOOP_HITM, "hitm" },
        { (uint64_t) PERF_MEM_SNOOPX_FWD << 5, "fwd" }, { (uint64_t) PERF_MEM_SNOOPX_PEER << 5, "peer" },
};

static const struct bit_name mem_lock_names[] = {
        { PERF_MEM_LOCK_NA, "na" }, { PERF_MEM_LOCK_LOCKED, "locked" },
};

static const struct bit_name mem_tlb_names[] = {
        { PERF_MEM_TLB_NA, "na" }, { PERF_MEM_TLB_HIT, "hit" }, { PERF_MEM_TLB_MISS, "miss" },
        { PERF_MEM_TLB_L1, "l1" }, { PERF_MEM_TLB_L2, "l2" }, { PERF_MEM_TLB_WK, "wk" },
        { PERF_MEM_TLB_OS, "os" },
};

static const struct bit_name mem_blk_names[] = {
        { PERF_MEM_BLK_NA, "na" }, { PERF_MEM_BLK_DATA, "data" }, { PERF_MEM_BLK_ADDR, "addr" },
};

/* PERF_MEM_LVLNUM_*: 5 (l2_mhb), 6 (msc) and 8 (unc) are newer than some
 * uapi headers; the numbers are ABI. */
static const char *const mem_lvlnum_names[16] = {
        NULL, "l1", "l2", "l3", "l4", "l2_mhb", "msc", NULL,
        "unc", "cxl", "io", "any_cache", "lfb", "ram", "pmem", "na",
};

/* PERF_MEM_HOPS_*: how far away the data was. */
static const char *const mem_hops_names[8] = {
        NULL, "core", "node", "socket", "board",
};

static const struct bit_name txn_names[] = {
        { PERF_TXN_ELISION, "elision" }, { PERF_TXN_TRANSACTION, "transaction" },
        { PERF_TXN_SYNC, "sync" }, { PERF_TXN_ASYNC, "async" }, { PERF_TXN_RETRY, "retry" },
        { PERF_TXN_CONFLICT, "conflict" }, { PERF_TXN_CAPACITY_WRITE, "capacity_write" },
        { PERF_TXN_CAPACITY_READ, "capacity_read" },
};

/* ["name",...] of the bits of V that TABLE names, in table order; bits
 * without a name are left out (the raw value is on the line too). */
static char *put_bit_names(char *p, uint64_t v, const struct bit_name *table, size_t n) {
        bool first = true;

        *p++ = '[';
        for (size_t i = 0; i < n; i++) {
                if (!(v & table[i].bit))
                        continue;
                if (!first)
                        *p++ = ',';
                first = false;
                *p++ = '"';
                p = json_put_bytes(p, table[i].name, strlen(table[i].name));
                *p++ = '"';
        }
        *p++ = ']';
        return p;
}

static char *put_name(char *p, const char *name) {
        *p++ = '"';
        p = json_put_bytes(p, name, strlen(name));
        *p++ = '"';
        return p;
}

/* ---- the parts ----------------------------------------------------------- */

static const char *id_name(const struct encode_ids *ids, uint64_t id) {
        return ids && ids->name ? ids->name(id, ids->userdata) : NULL;
}

size_t encode_read_max(const struct perf_read *r, const struct encode_ids *ids) {
        size_t n = 64 + 2 * JSON_INT_MAX + (size_t) r->nr * READ_VALUE_MAX;

        if ((r->read_format & PERF_FORMAT_ID) && ids && ids->name)
                for (uint64_t i = 0; i < r->nr; i++) {
                        struct perf_read_value v;
                        const char *name;

                        if (perf_read_get(r, i, &v) < 0)
                                break;
                        name = id_name(ids, v.id);
                        if (name)
                                n += json_escaped_max(strlen(name));
                }
        return n;
}

/* {"time_enabled":N,"time_running":N,"values":[{"value":N,"id":N,"event":"…","lost":N},…]}:
 * one value without PERF_FORMAT_GROUP, the leader and its members with. */
char *encode_read_put(char *p, const struct perf_read *r, const struct encode_ids *ids) {
        uint64_t rf = r->read_format;

        *p++ = '{';
        p = json_put_key1(p, "group");
        p = json_put_bool(p, rf & PERF_FORMAT_GROUP);
        if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED) {
                p = json_put_key(p, "time_enabled");
                p = json_put_u64(p, r->time_enabled);
        }
        if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING) {
                p = json_put_key(p, "time_running");
                p = json_put_u64(p, r->time_running);
        }
        p = json_put_key(p, "values");
        *p++ = '[';
        for (uint64_t i = 0; i < r->nr; i++) {
                struct perf_read_value v;

                if (perf_read_get(r, i, &v) < 0)
                        break;
                if (i > 0)
                        *p++ = ',';
                *p++ = '{';
                p = json_put_key1(p, "value");
                p = json_put_u64(p, v.value);
                if (rf & PERF_FORMAT_ID) {
                        const char *name = id_name(ids, v.id);

                        p = json_put_key(p, "id");
                        p = json_put_u64(p, v.id);
                        if (name) {
                                p = json_put_key(p, "event");
                                p = json_put_cstr(p, name);
                        }
                }
                if (rf & PERF_FORMAT_LOST) {
                        p = json_put_key(p, "lost");
                        p = json_put_u64(p, v.lost);
                }
                *p++ = '}';
        }
        return json_put_literal(p, "]}");
}

/* PERF_CONTEXT_* markers, by how far below 2^64 they are. */
static const char *context_name(uint64_t marker) {
        switch (marker) {
        case PERF_CONTEXT_HV:
                return "hv";
        case PERF_CONTEXT_KERNEL:
                return "kernel";
        case PERF_CONTEXT_USER:
                return "user";
        case PERF_CONTEXT_GUEST:
                return "guest";
        case PERF_CONTEXT_GUEST_KERNEL:
                return "guest_kernel";
        case PERF_CONTEXT_GUEST_USER:
                return "guest_user";
        case (uint64_t) -640:   /* PERF_CONTEXT_USER_DEFERRED (6.17), newer than some headers */
                return "user_deferred";
        default:
                return "unknown";
        }
}

size_t encode_callchain_max(uint64_t nr) {
        return 4 + (size_t) nr * (FRAME_MAX + CONTEXT_MAX) + CONTEXT_MAX;
}

/* One frame's name: {"sym":"name+0xoff","module":"/path"}, either key
 * left out when not known, null when neither is. */
static char *put_frame(char *p, const struct encode_frame *f) {
        if (!f->sym && !f->module && !f->note)
                return json_put_literal(p, "null");
        *p++ = '{';
        if (f->sym) {
                char off[24];
                size_t n = strlen(f->sym), k = 0;

                p = json_put_literal(p, "\"sym\":");
                /* "name+0xoff" as one string: escaped name, then the offset. */
                p = json_put_string(p, f->sym, n);
                p--;  /* reopen the string */
                off[k++] = '+';
                off[k++] = '0';
                off[k++] = 'x';
                {
                        static const char hex[] = "0123456789abcdef";
                        char d[16];
                        int m = 0;
                        uint64_t v = f->off;

                        do {
                                d[m++] = hex[v & 0xf];
                                v >>= 4;
                        } while (v);
                        while (m > 0)
                                off[k++] = d[--m];
                }
                p = json_put_bytes(p, off, k);
                *p++ = '"';
        }
        if (f->module) {
                if (f->sym)
                        *p++ = ',';
                p = json_put_literal(p, "\"module\":");
                p = json_put_string(p, f->module, strlen(f->module));
        }
        if (f->note && !f->sym) {
                if (f->module)
                        *p++ = ',';
                p = json_put_literal(p, "\"symbols\":");
                p = json_put_string(p, f->note, strlen(f->note));
        }
        *p++ = '}';
        return p;
}

size_t encode_frames_max(const struct encode_frame *frames, uint64_t nr) {
        size_t n = 0;

        if (!frames)
                return 0;
        for (uint64_t i = 0; i < nr; i++) {
                n += sizeof("{\"sym\":\"+0x\",\"module\":},") + 16 + 8;
                if (frames[i].sym)
                        n += json_escaped_max(strlen(frames[i].sym));
                if (frames[i].module)
                        n += json_escaped_max(strlen(frames[i].module));
                if (frames[i].note)
                        n += sizeof(",\"symbols\":") + json_escaped_max(strlen(frames[i].note));
        }
        /* ,"syms":[] per segment, at most one per frame and one more */
        return n + ((size_t) nr + 1) * sizeof(",\"syms\":[]");
}

static char *put_syms(char *p, const uint64_t *ips, const struct encode_frame *frames, uint64_t from, uint64_t to) {
        bool first = true;

        p = json_put_literal(p, "],\"syms\":[");
        for (uint64_t i = from; i < to; i++) {
                if (load_u64(&ips[i]) >= PERF_CONTEXT_MAX)
                        continue;
                if (!first)
                        *p++ = ',';
                first = false;
                p = put_frame(p, &frames[i]);
        }
        return p;
}

/* [{"context":"kernel","ips":["0x…",…]},{"context":"user","ips":[…]}]:
 * the addresses split where the kernel put a PERF_CONTEXT_* marker (values
 * at or above PERF_CONTEXT_MAX), as perf script's callchain walk does.
 * Frames before any marker are in a segment of context "none". With
 * FRAMES, each segment also has "syms", its frames' names in order. */
char *encode_callchain_put_frames(char *p, const uint64_t *ips, uint64_t nr, const struct encode_frame *frames) {
        bool open = false, first_ip = true;
        uint64_t seg = 0;

        *p++ = '[';
        for (uint64_t i = 0; i < nr; i++) {
                uint64_t ip = load_u64(&ips[i]);

                if (ip >= PERF_CONTEXT_MAX || !open) {
                        const char *name = ip >= PERF_CONTEXT_MAX ? context_name(ip) : "none";

                        if (open) {
                                if (frames)
                                        p = put_syms(p, ips, frames, seg, i);
                                p = json_put_literal(p, "]},");
                        }
                        p = json_put_literal(p, "{\"context\":");
                        p = put_name(p, name);
                        p = json_put_literal(p, ",\"ips\":[");
                        open = true;
                        first_ip = true;
                        seg = i;
                        if (ip >= PERF_CONTEXT_MAX)
                                continue;
                }
                if (!first_ip)
                        *p++ = ',';
                first_ip = false;
                p = json_put_hex(p, ip);
        }
        if (open) {
                if (frames)
                        p = put_syms(p, ips, frames, seg, nr);
                p = json_put_literal(p, "]}");
        }
        *p++ = ']';
        return p;
}

char *encode_callchain_put(char *p, const uint64_t *ips, uint64_t nr) {
        return encode_callchain_put_frames(p, ips, nr, NULL);
}

static size_t regs_max(uint64_t mask) {
        return REGS_FIXED_MAX + (size_t) __builtin_popcountll(mask) * REG_MAX;
}

/* {"abi":"64","regs":{"ax":"0x…",…}}; the ABI "none" (a kernel thread
 * has no user registers) comes without "regs". */
static char *put_regs(char *p, uint64_t abi, uint64_t mask, const uint64_t *regs) {
        unsigned k = 0;

        p = json_put_literal(p, "{\"abi\":");
        switch (abi) {
        case PERF_SAMPLE_REGS_ABI_NONE:
                return json_put_literal(p, "\"none\"}");
        case PERF_SAMPLE_REGS_ABI_32:
                p = json_put_literal(p, "\"32\"");
                break;
        case PERF_SAMPLE_REGS_ABI_64:
                p = json_put_literal(p, "\"64\"");
                break;
        default:
                p = json_put_u64(p, abi);
                break;
        }
        p = json_put_literal(p, ",\"regs\":{");
        for (unsigned bit = 0; bit < 64; bit++) {
                if (!(mask & (1ULL << bit)))
                        continue;
                if (k > 0)
                        *p++ = ',';
                if (reg_names[bit])
                        p = put_name(p, reg_names[bit]);
                else {
                        p = json_put_literal(p, "\"r");
                        p = json_put_u64(p, bit);
                        *p++ = '"';
                }
                *p++ = ':';
                p = json_put_hex(p, load_u64(&regs[k]));
                k++;
        }
        return json_put_literal(p, "}}");
}

/* {"hw_idx":N,"entries":[{"from":"0x…","to":"0x…","mispred":false,…},…]}.
 * The flags word after from and to is struct perf_branch_entry's bit
 * fields, low bit first: mispred, predicted, in_tx, abort, cycles:16,
 * type:4, spec:2, new_type:4, priv:3. */
static char *put_branch_stack(char *p, const struct perf_sample *s) {
        const uint8_t *e = (const uint8_t *) s->branch_stack.entries;

        *p++ = '{';
        if (s->branch_stack.has_hw_idx) {
                p = json_put_key1(p, "hw_idx");
                p = json_put_i64(p, (int64_t) s->branch_stack.hw_idx);
                *p++ = ',';
        }
        p = json_put_key1(p, "entries");
        *p++ = '[';
        for (uint64_t i = 0; i < s->branch_stack.nr; i++, e += sizeof(struct perf_branch_entry)) {
                uint64_t f = load_u64(e + 16);
                unsigned type = (f >> 20) & 0xf;

                if (i > 0)
                        *p++ = ',';
                p = json_put_literal(p, "{\"from\":");
                p = json_put_hex(p, load_u64(e));
                p = json_put_key(p, "to");
                p = json_put_hex(p, load_u64(e + 8));
                p = json_put_key(p, "mispred");
                p = json_put_bool(p, f & 1);
                p = json_put_key(p, "predicted");
                p = json_put_bool(p, f & 2);
                p = json_put_key(p, "in_tx");
                p = json_put_bool(p, f & 4);
                p = json_put_key(p, "abort");
                p = json_put_bool(p, f & 8);
                p = json_put_key(p, "cycles");
                p = json_put_u64(p, (f >> 4) & 0xffff);
                p = json_put_key(p, "type");
                if (type == PERF_BR_EXTEND_ABI && branch_new_type_names[(f >> 26) & 0xf])
                        p = put_name(p, branch_new_type_names[(f >> 26) & 0xf]);
                else
                        p = put_name(p, branch_type_names[type]);
                p = json_put_key(p, "spec");
                p = put_name(p, branch_spec_names[(f >> 24) & 0x3]);
                p = json_put_key(p, "priv");
                if (branch_priv_names[(f >> 30) & 0x7])
                        p = put_name(p, branch_priv_names[(f >> 30) & 0x7]);
                else
                        p = json_put_u64(p, (f >> 30) & 0x7);
                if (s->branch_stack.counters) {
                        p = json_put_key(p, "counters");
                        p = json_put_u64(p, load_u64(&s->branch_stack.counters[i]));
                }
                *p++ = '}';
        }
        return json_put_literal(p, "]}");
}

/* union perf_mem_data_src into its parts, as perf mem / perf script -F
 * data_src (perf_mem__*_scnprintf()) name them. */
static char *put_data_src(char *p, uint64_t d) {
        unsigned lvlnum = (d >> PERF_MEM_LVLNUM_SHIFT) & 0xf, hops = (d >> PERF_MEM_HOPS_SHIFT) & 0x7;
        uint64_t snoop = ((d >> PERF_MEM_SNOOP_SHIFT) & 0x1f) | (((d >> PERF_MEM_SNOOPX_SHIFT) & 0x3) << 5);

        p = json_put_literal(p, "{\"raw\":");
        p = json_put_hex(p, d);
        p = json_put_key(p, "mem_op");
        p = put_bit_names(p, (d >> PERF_MEM_OP_SHIFT) & 0x1f, mem_op_names, ELEMENTSOF(mem_op_names));
        p = json_put_key(p, "lvl");
        p = put_bit_names(p, (d >> PERF_MEM_LVL_SHIFT) & 0x3fff, mem_lvl_names, ELEMENTSOF(mem_lvl_names));
        p = json_put_key(p, "snoop");
        p = put_bit_names(p, snoop, mem_snoop_names, ELEMENTSOF(mem_snoop_names));
        p = json_put_key(p, "lock");
        p = put_bit_names(p, (d >> PERF_MEM_LOCK_SHIFT) & 0x3, mem_lock_names, ELEMENTSOF(mem_lock_names));
        p = json_put_key(p, "dtlb");
        p = put_bit_names(p, (d >> PERF_MEM_TLB_SHIFT) & 0x7f, mem_tlb_names, ELEMENTSOF(mem_tlb_names));
        p = json_put_key(p, "lvl_num");
        if (mem_lvlnum_names[lvlnum])
                p = put_name(p, mem_lvlnum_names[lvlnum]);
        else
                p = json_put_literal(p, "null");
        p = json_put_key(p, "remote");
        p = json_put_bool(p, (d >> PERF_MEM_REMOTE_SHIFT) & 1);
        p = json_put_key(p, "blk");
        p = put_bit_names(p, (d >> PERF_MEM_BLK_SHIFT) & 0x7, mem_blk_names, ELEMENTSOF(mem_blk_names));
        p = json_put_key(p, "hops");
        if (mem_hops_names[hops])
                p = put_name(p, mem_hops_names[hops]);
        else
                p = json_put_literal(p, "null");
        *p++ = '}';
        return p;
}

/* {"raw":"0x…","flags":["transaction",…],"abort_code":N} (PERF_TXN_*). */
static char *put_transaction(char *p, uint64_t t) {
        p = json_put_literal(p, "{\"raw\":");
        p = json_put_hex(p, t);
        p = json_put_key(p, "flags");
        p = put_bit_names(p, t, txn_names, ELEMENTSOF(txn_names));
        p = json_put_key(p, "abort_code");
        p = json_put_u64(p, (t & PERF_TXN_ABORT_MASK) >> PERF_TXN_ABORT_SHIFT);
        *p++ = '}';
        return p;
}

/* union perf_sample_weight: var1_dw in the low 32 bits, var2_w and var3_w
 * above it (perf script: weight, ins_lat, and p_stage_cyc or retire_lat). */
static char *put_weight_struct(char *p, uint64_t w) {
        p = json_put_literal(p, "{\"var1_dw\":");
        p = json_put_u64(p, w & 0xffffffff);
        p = json_put_key(p, "var2_w");
        p = json_put_u64(p, (w >> 32) & 0xffff);
        p = json_put_key(p, "var3_w");
        p = json_put_u64(p, w >> 48);
        *p++ = '}';
        return p;
}

char *json_put_hexbytes(char *p, const void *data, size_t n) {
        static const char hex[16] = "0123456789abcdef";
        const uint8_t *b = data;

        *p++ = '"';
        for (size_t i = 0; i < n; i++) {
                *p++ = hex[b[i] >> 4];
                *p++ = hex[b[i] & 0xf];
        }
        *p++ = '"';
        return p;
}

char *json_put_base64(char *p, const void *data, size_t n) {
        static const char b64[64] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        const uint8_t *b = data;
        size_t i = 0;

        *p++ = '"';
        for (; i + 3 <= n; i += 3) {
                uint32_t v = (uint32_t) b[i] << 16 | (uint32_t) b[i + 1] << 8 | b[i + 2];

                *p++ = b64[v >> 18];
                *p++ = b64[(v >> 12) & 63];
                *p++ = b64[(v >> 6) & 63];
                *p++ = b64[v & 63];
        }
        if (i < n) {
                uint32_t v = (uint32_t) b[i] << 16 | (i + 1 < n ? (uint32_t) b[i + 1] << 8 : 0);

                *p++ = b64[v >> 18];
                *p++ = b64[(v >> 12) & 63];
                *p++ = i + 1 < n ? b64[(v >> 6) & 63] : '=';
                *p++ = '=';
        }
        *p++ = '"';
        return p;
}

/* The stack bytes in use: dyn_size of them, never past the copy itself
 * (the kernel keeps dyn_size <= size; a perf.data file need not). */
static inline size_t stack_user_used(const struct perf_sample *s) {
        if (!s->stack_user.data)
                return 0;
        return (size_t) (s->stack_user.dyn_size < s->stack_user.size ? s->stack_user.dyn_size : s->stack_user.size);
}

/* ---- the object ------------------------------------------------------------ */

size_t encode_sample_max_frames(const struct perf_sample *s, uint64_t show, const struct encode_ids *ids,
                                const struct encode_frame *frames) {
        uint64_t t = s->sample_type & show & ~(uint64_t) ENCODE_SAMPLE_TOP;
        size_t n = SAMPLE_SCALARS_MAX;

        if (t == 0)
                return 0;
        if (t & PERF_SAMPLE_READ)
                n += encode_read_max(&s->read, ids);
        if (t & PERF_SAMPLE_CALLCHAIN)
                n += encode_callchain_max(s->callchain.nr) + encode_frames_max(frames, s->callchain.nr);
        if (t & PERF_SAMPLE_RAW)
                n += 2 * (size_t) s->raw.size;
        if (t & PERF_SAMPLE_BRANCH_STACK)
                n += (size_t) s->branch_stack.nr * BRANCH_MAX;
        if (t & PERF_SAMPLE_REGS_USER)
                n += regs_max(s->regs_user.mask);
        if (t & PERF_SAMPLE_REGS_INTR)
                n += regs_max(s->regs_intr.mask);
        if ((t & PERF_SAMPLE_STACK_USER) && (show & ENCODE_SAMPLE_STACK_DATA))
                n += sizeof(",\"data\":") + JSON_BASE64_MAX(stack_user_used(s));
        return n;
}

/* The members of sample type T from ip to stack_user, each as
 * ,"key":value. */
static inline char *put_sample_members(char *p, const struct perf_sample *s, uint64_t t, uint64_t show,
                                       const struct encode_ids *ids, const struct encode_frame *frames) {
        if (t & PERF_SAMPLE_IP) {
                p = json_put_key(p, "ip");
                p = json_put_hex(p, s->ip);
        }
        if (t & PERF_SAMPLE_ID) {
                p = json_put_key(p, "id");
                p = json_put_u64(p, s->id);
        }
        if (t & PERF_SAMPLE_STREAM_ID) {
                p = json_put_key(p, "stream_id");
                p = json_put_u64(p, s->stream_id);
        }
        if (t & PERF_SAMPLE_ADDR) {
                p = json_put_key(p, "addr");
                p = json_put_hex(p, s->addr);
        }
        if (t & PERF_SAMPLE_PERIOD) {
                p = json_put_key(p, "period");
                p = json_put_u64(p, s->period);
        }
        if (t & PERF_SAMPLE_READ) {
                p = json_put_key(p, "read");
                p = encode_read_put(p, &s->read, ids);
        }
        if (t & PERF_SAMPLE_CALLCHAIN) {
                p = json_put_key(p, "callchain");
                p = encode_callchain_put_frames(p, s->callchain.ips, s->callchain.nr, frames);
        }
        if (t & PERF_SAMPLE_RAW) {
                p = json_put_key(p, "raw");
                p = json_put_hexbytes(p, s->raw.data, s->raw.size);
        }
        if (t & PERF_SAMPLE_BRANCH_STACK) {
                p = json_put_key(p, "branch_stack");
                p = put_branch_stack(p, s);
        }
        if (t & PERF_SAMPLE_REGS_USER) {
                p = json_put_key(p, "regs_user");
                p = put_regs(p, s->regs_user.abi, s->regs_user.mask, s->regs_user.regs);
        }
        if (t & PERF_SAMPLE_STACK_USER) {
                /* The bytes serve DWARF unwinding, which evmond does
                 * itself ("callchain" then has the frames): their size
                 * and how much of it was in use, and the bytes in use
                 * only for a client that asked (ENCODE_SAMPLE_STACK_DATA). */
                p = json_put_key(p, "stack_user");
                p = json_put_literal(p, "{\"size\":");
                p = json_put_u64(p, s->stack_user.size);
                p = json_put_key(p, "dyn_size");
                p = json_put_u64(p, s->stack_user.dyn_size);
                if (show & ENCODE_SAMPLE_STACK_DATA) {
                        p = json_put_key(p, "data");
                        p = json_put_base64(p, s->stack_user.data, stack_user_used(s));
                }
                *p++ = '}';
        }
        return p;
}

/* The members of sample type T from weight to aux (memory accesses,
 * page sizes, the AUX area), each as ,"key":value. */
static inline char *put_sample_memory(char *p, const struct perf_sample *s, uint64_t t) {
        if (t & PERF_SAMPLE_WEIGHT_STRUCT) {
                p = json_put_key(p, "weight");
                p = put_weight_struct(p, s->weight);
        } else if (t & PERF_SAMPLE_WEIGHT) {
                p = json_put_key(p, "weight");
                p = json_put_u64(p, s->weight);
        }
        if (t & PERF_SAMPLE_DATA_SRC) {
                p = json_put_key(p, "data_src");
                p = put_data_src(p, s->data_src);
        }
        if (t & PERF_SAMPLE_TRANSACTION) {
                p = json_put_key(p, "transaction");
                p = put_transaction(p, s->transaction);
        }
        if (t & PERF_SAMPLE_REGS_INTR) {
                p = json_put_key(p, "regs_intr");
                p = put_regs(p, s->regs_intr.abi, s->regs_intr.mask, s->regs_intr.regs);
        }
        if (t & PERF_SAMPLE_PHYS_ADDR) {
                p = json_put_key(p, "phys_addr");
                p = json_put_hex(p, s->phys_addr);
        }
        if (t & PERF_SAMPLE_CGROUP) {
                p = json_put_key(p, "cgroup");
                p = json_put_u64(p, s->cgroup);
        }
        if (t & PERF_SAMPLE_DATA_PAGE_SIZE) {
                p = json_put_key(p, "data_page_size");
                p = json_put_u64(p, s->data_page_size);
        }
        if (t & PERF_SAMPLE_CODE_PAGE_SIZE) {
                p = json_put_key(p, "code_page_size");
                p = json_put_u64(p, s->code_page_size);
        }
        if (t & PERF_SAMPLE_AUX) {
                p = json_put_key(p, "aux");
                p = json_put_literal(p, "{\"size\":");
                p = json_put_u64(p, s->aux.size);
                *p++ = '}';
        }

        return p;
}

char *encode_sample_put_frames(char *p, const struct perf_sample *s, uint64_t show, const struct encode_ids *ids,
                               const struct encode_frame *frames) {
        uint64_t t = s->sample_type & show & ~(uint64_t) ENCODE_SAMPLE_TOP;
        char *first;

        if (t == 0)
                return p;

        p = json_put_literal(p, ",\"sample\":{");
        /* Every member is written as ,"key": and the first comma is taken
         * back at the end: simpler than tracking which came first. */
        first = p;

        p = put_sample_members(p, s, t, show, ids, frames);
        p = put_sample_memory(p, s, t);

        /* Drop the first member's comma. */
        if (p > first) {
                memmove(first, first + 1, (size_t) (p - first - 1));
                p--;
        }
        *p++ = '}';
        return p;
}

size_t encode_sample_max(const struct perf_sample *s, uint64_t show, const struct encode_ids *ids) {
        return encode_sample_max_frames(s, show, ids, NULL);
}

char *encode_sample_put(char *p, const struct perf_sample *s, uint64_t show, const struct encode_ids *ids) {
        return encode_sample_put_frames(p, s, show, ids, NULL);
}
