/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Event specs -> struct perf_event_attr. The names are perf's: software
 * and hardware events as perf list prints them, cache events as
 * tools/perf/util/evsel.c's evsel__hw_cache* tables spell them (any case,
 * aliases included), registers as arch/x86/include/uapi/asm/perf_regs.h
 * numbers them, branch filters as perf record -j takes them. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "evmon/attr.h"
#include "evmon/cleanup.h"
#include "evmon/kallsyms.h"
#include "evmon/parse.h"

/* Newer than some uapi headers we build against; the numbers are ABI. */
#define SW_CGROUP_SWITCHES 11
#define HW_BP_R 1
#define HW_BP_W 2
#define HW_BP_X 4

/* perf record's default sampling frequency (record.freq in
 * tools/perf/util/record.h's callers: 4000 Hz). */
#define DEFAULT_FREQ 4000

static const char *const kind_table[_ATTR_KIND_MAX] = {
        [ATTR_SOFTWARE] = "software",
        [ATTR_HARDWARE] = "hardware",
        [ATTR_CACHE] = "cache",
        [ATTR_RAW] = "raw",
        [ATTR_BREAKPOINT] = "breakpoint",
        [ATTR_PMU] = "pmu",
};

const char *attr_kind_to_string(enum attr_kind k) {
        return (unsigned) k < _ATTR_KIND_MAX ? kind_table[k] : NULL;
}

int attr_kind_from_string(const char *s, enum attr_kind *ret) {
        for (unsigned k = 0; s && k < _ATTR_KIND_MAX; k++)
                if (strcmp(s, kind_table[k]) == 0) {
                        *ret = k;
                        return 0;
                }
        return -EINVAL;
}

struct name_value {
        const char *name;
        uint64_t value;
};

static int table_find(const struct name_value *t, size_t n, const char *name, uint64_t *ret) {
        for (size_t i = 0; name && i < n; i++)
                if (strcmp(t[i].name, name) == 0) {
                        *ret = t[i].value;
                        return 0;
                }
        return -EINVAL;
}

/* First the names perf list prints, then its aliases (perf's
 * event_symbols_sw/hw in parse-events.c). */
static const struct name_value software_events[] = {
        { "cpu-clock", PERF_COUNT_SW_CPU_CLOCK },
        { "task-clock", PERF_COUNT_SW_TASK_CLOCK },
        { "page-faults", PERF_COUNT_SW_PAGE_FAULTS },
        { "context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES },
        { "cpu-migrations", PERF_COUNT_SW_CPU_MIGRATIONS },
        { "minor-faults", PERF_COUNT_SW_PAGE_FAULTS_MIN },
        { "major-faults", PERF_COUNT_SW_PAGE_FAULTS_MAJ },
        { "alignment-faults", PERF_COUNT_SW_ALIGNMENT_FAULTS },
        { "emulation-faults", PERF_COUNT_SW_EMULATION_FAULTS },
        { "dummy", PERF_COUNT_SW_DUMMY },
        { "bpf-output", PERF_COUNT_SW_BPF_OUTPUT },
        { "cgroup-switches", SW_CGROUP_SWITCHES },
        { "faults", PERF_COUNT_SW_PAGE_FAULTS },
        { "cs", PERF_COUNT_SW_CONTEXT_SWITCHES },
        { "migrations", PERF_COUNT_SW_CPU_MIGRATIONS },
};
#define N_SOFTWARE_LISTED 12

static const struct name_value hardware_events[] = {
        { "cycles", PERF_COUNT_HW_CPU_CYCLES },
        { "instructions", PERF_COUNT_HW_INSTRUCTIONS },
        { "cache-references", PERF_COUNT_HW_CACHE_REFERENCES },
        { "cache-misses", PERF_COUNT_HW_CACHE_MISSES },
        { "branches", PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
        { "branch-misses", PERF_COUNT_HW_BRANCH_MISSES },
        { "bus-cycles", PERF_COUNT_HW_BUS_CYCLES },
        { "stalled-cycles-frontend", PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
        { "stalled-cycles-backend", PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
        { "ref-cycles", PERF_COUNT_HW_REF_CPU_CYCLES },
        { "cpu-cycles", PERF_COUNT_HW_CPU_CYCLES },
        { "branch-instructions", PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
        { "idle-cycles-frontend", PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
        { "idle-cycles-backend", PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
};
#define N_HARDWARE_LISTED 10

/* Cache events: CACHE[-OP][-RESULT], config = cache | op << 8 | result << 16
 * (perf_event_open(2), PERF_TYPE_HW_CACHE). Index 0 of each row is the
 * canonical spelling. */
static const char *const cache_names[PERF_COUNT_HW_CACHE_MAX][5] = {
        [PERF_COUNT_HW_CACHE_L1D] = { "L1-dcache", "l1-d", "l1d", "L1-data" },
        [PERF_COUNT_HW_CACHE_L1I] = { "L1-icache", "l1-i", "l1i", "L1-instruction" },
        [PERF_COUNT_HW_CACHE_LL] = { "LLC", "L2" },
        [PERF_COUNT_HW_CACHE_DTLB] = { "dTLB", "d-tlb", "Data-TLB" },
        [PERF_COUNT_HW_CACHE_ITLB] = { "iTLB", "i-tlb", "Instruction-TLB" },
        [PERF_COUNT_HW_CACHE_BPU] = { "branch", "branches", "bpu", "btb", "bpc" },
        [PERF_COUNT_HW_CACHE_NODE] = { "node" },
};
static const char *const cache_ops[PERF_COUNT_HW_CACHE_OP_MAX][5] = {
        [PERF_COUNT_HW_CACHE_OP_READ] = { "load", "loads", "read" },
        [PERF_COUNT_HW_CACHE_OP_WRITE] = { "store", "stores", "write" },
        [PERF_COUNT_HW_CACHE_OP_PREFETCH] = { "prefetch", "prefetches", "speculative-read", "speculative-load" },
};
static const char *const cache_results[PERF_COUNT_HW_CACHE_RESULT_MAX][5] = {
        [PERF_COUNT_HW_CACHE_RESULT_ACCESS] = { "refs", "Reference", "ops", "access" },
        [PERF_COUNT_HW_CACHE_RESULT_MISS] = { "misses", "miss" },
};

/* The operations perf list offers per cache (perf's evsel__hw_cache_stat):
 * bit OP set when the hardware can count it at all. */
static const unsigned cache_valid_ops[PERF_COUNT_HW_CACHE_MAX] = {
        [PERF_COUNT_HW_CACHE_L1D] = 7,
        [PERF_COUNT_HW_CACHE_L1I] = 5,
        [PERF_COUNT_HW_CACHE_LL] = 7,
        [PERF_COUNT_HW_CACHE_DTLB] = 7,
        [PERF_COUNT_HW_CACHE_ITLB] = 1,
        [PERF_COUNT_HW_CACHE_BPU] = 1,
        [PERF_COUNT_HW_CACHE_NODE] = 7,
};

/* Matches one of ROW's aliases at *P, followed by '-' or the end; moves *P
 * past it (and the '-'). Longest alias wins ("L1-dcache" before "l1-d"). */
static int cache_match(const char **p, const char *const (*rows)[5], size_t n_rows) {
        int best = -1;
        size_t best_len = 0;

        for (size_t i = 0; i < n_rows; i++)
                for (size_t a = 0; a < 5 && rows[i][a]; a++) {
                        size_t l = strlen(rows[i][a]);

                        if (l > best_len && strncasecmp(*p, rows[i][a], l) == 0 &&
                            ((*p)[l] == '\0' || (*p)[l] == '-')) {
                                best = (int) i;
                                best_len = l;
                        }
                }
        if (best < 0)
                return -EINVAL;
        *p += best_len;
        if (**p == '-')
                (*p)++;
        return best;
}

static int cache_parse(const char *name, uint64_t *ret) {
        const char *p = name;
        int cache, op = -1, result = -1;

        cache = cache_match(&p, cache_names, PERF_COUNT_HW_CACHE_MAX);
        if (cache < 0)
                return -EINVAL;
        /* perf takes the op and the result in either order, each once. */
        for (int i = 0; i < 2 && *p; i++) {
                int v;

                if (op < 0 && (v = cache_match(&p, cache_ops, PERF_COUNT_HW_CACHE_OP_MAX)) >= 0) {
                        op = v;
                        continue;
                }
                if (result < 0 && (v = cache_match(&p, cache_results, PERF_COUNT_HW_CACHE_RESULT_MAX)) >= 0) {
                        result = v;
                        continue;
                }
                return -EINVAL;
        }
        if (*p)
                return -EINVAL;
        if (op < 0)
                op = PERF_COUNT_HW_CACHE_OP_READ;
        if (result < 0)
                result = PERF_COUNT_HW_CACHE_RESULT_ACCESS;
        *ret = (uint64_t) cache | (uint64_t) op << 8 | (uint64_t) result << 16;
        return 0;
}

static const struct name_value sample_names[] = {
        { "ip", PERF_SAMPLE_IP },
        { "tid", PERF_SAMPLE_TID },
        { "time", PERF_SAMPLE_TIME },
        { "addr", PERF_SAMPLE_ADDR },
        { "read", PERF_SAMPLE_READ },
        { "callchain", PERF_SAMPLE_CALLCHAIN },
        { "id", PERF_SAMPLE_ID },
        { "cpu", PERF_SAMPLE_CPU },
        { "period", PERF_SAMPLE_PERIOD },
        { "stream_id", PERF_SAMPLE_STREAM_ID },
        { "raw", PERF_SAMPLE_RAW },
        { "branch_stack", PERF_SAMPLE_BRANCH_STACK },
        { "regs_user", PERF_SAMPLE_REGS_USER },
        { "stack_user", PERF_SAMPLE_STACK_USER },
        { "weight", PERF_SAMPLE_WEIGHT },
        { "data_src", PERF_SAMPLE_DATA_SRC },
        { "identifier", PERF_SAMPLE_IDENTIFIER },
        { "transaction", PERF_SAMPLE_TRANSACTION },
        { "regs_intr", PERF_SAMPLE_REGS_INTR },
        { "phys_addr", PERF_SAMPLE_PHYS_ADDR },
        { "cgroup", PERF_SAMPLE_CGROUP },
        { "data_page_size", PERF_SAMPLE_DATA_PAGE_SIZE },
        { "code_page_size", PERF_SAMPLE_CODE_PAGE_SIZE },
        { "weight_struct", PERF_SAMPLE_WEIGHT_STRUCT },
};

int attr_sample_bit(const char *name, uint64_t *ret) {
        return table_find(sample_names, ELEMENTSOF(sample_names), name, ret);
}

const char *attr_sample_name(uint64_t bit) {
        for (size_t i = 0; i < ELEMENTSOF(sample_names); i++)
                if (sample_names[i].value == bit)
                        return sample_names[i].name;
        return NULL;
}

static const struct name_value read_names[] = {
        { "total_time_enabled", PERF_FORMAT_TOTAL_TIME_ENABLED },
        { "total_time_running", PERF_FORMAT_TOTAL_TIME_RUNNING },
        { "id", PERF_FORMAT_ID },
        { "group", PERF_FORMAT_GROUP },
        { "lost", 1U << 4 },    /* PERF_FORMAT_LOST, Linux 6.0 */
};

int attr_read_bit(const char *name, uint64_t *ret) {
        return table_find(read_names, ELEMENTSOF(read_names), name, ret);
}

/* perf record -j's names (tools/perf/util/parse-branch-options.c). */
static const struct name_value branch_names[] = {
        { "u", PERF_SAMPLE_BRANCH_USER },
        { "k", PERF_SAMPLE_BRANCH_KERNEL },
        { "hv", PERF_SAMPLE_BRANCH_HV },
        { "any", PERF_SAMPLE_BRANCH_ANY },
        { "any_call", PERF_SAMPLE_BRANCH_ANY_CALL },
        { "any_ret", PERF_SAMPLE_BRANCH_ANY_RETURN },
        { "ind_call", PERF_SAMPLE_BRANCH_IND_CALL },
        { "abort_tx", PERF_SAMPLE_BRANCH_ABORT_TX },
        { "in_tx", PERF_SAMPLE_BRANCH_IN_TX },
        { "no_tx", PERF_SAMPLE_BRANCH_NO_TX },
        { "cond", PERF_SAMPLE_BRANCH_COND },
        { "call_stack", PERF_SAMPLE_BRANCH_CALL_STACK },
        { "ind_jmp", PERF_SAMPLE_BRANCH_IND_JUMP },
        { "call", PERF_SAMPLE_BRANCH_CALL },
        { "no_flags", PERF_SAMPLE_BRANCH_NO_FLAGS },
        { "no_cycles", PERF_SAMPLE_BRANCH_NO_CYCLES },
        { "save_type", PERF_SAMPLE_BRANCH_TYPE_SAVE },
        { "hw_index", PERF_SAMPLE_BRANCH_HW_INDEX },
        { "priv", 1ULL << 18 },         /* PERF_SAMPLE_BRANCH_PRIV_SAVE, 6.1 */
        { "counter", 1ULL << 19 },      /* PERF_SAMPLE_BRANCH_COUNTERS, 6.8 */
};

int attr_branch_bit(const char *name, uint64_t *ret) {
        return table_find(branch_names, ELEMENTSOF(branch_names), name, ret);
}

/* enum perf_event_x86_regs, lower case as perf's --user-regs takes them. */
static const char *const x86_64_regs[] = {
        "ax", "bx", "cx", "dx", "si", "di", "bp", "sp", "ip", "flags",
        "cs", "ss", "ds", "es", "fs", "gs",
        "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
        "ssp",
};

int attr_reg_index(const char *name, unsigned *ret) {
        char xmm[8];

        for (unsigned i = 0; name && i < ELEMENTSOF(x86_64_regs); i++)
                if (strcasecmp(name, x86_64_regs[i]) == 0) {
                        *ret = i;
                        return 0;
                }
        /* XMM0..15 are 64-bit halves at 32 + 2i (PERF_REG_X86_XMM0). */
        for (unsigned i = 0; name && i < 16; i++) {
                snprintf(xmm, sizeof(xmm), "xmm%u", i);
                if (strcasecmp(name, xmm) == 0) {
                        *ret = 32 + 2 * i;
                        return 0;
                }
        }
        return -EINVAL;
}

const char *attr_reg_name(unsigned index) {
        static const char *const xmm[16] = {
                "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
                "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15",
        };

        if (index < ELEMENTSOF(x86_64_regs))
                return x86_64_regs[index];
        if (index >= 32 && index < 64 && index % 2 == 0)
                return xmm[(index - 32) / 2];
        return NULL;
}

const char *const *attr_event_names(enum attr_kind k) {
        static const char *software[N_SOFTWARE_LISTED + 1];
        static const char *hardware[N_HARDWARE_LISTED + 1];
        /* 7 caches × 3 ops × (access, miss) at most. */
        static char cache_buf[PERF_COUNT_HW_CACHE_MAX * 3 * 2][48];
        static const char *cache[PERF_COUNT_HW_CACHE_MAX * 3 * 2 + 1];
        static const char *const none[] = { NULL };

        switch (k) {
        case ATTR_SOFTWARE:
                for (size_t i = 0; i < N_SOFTWARE_LISTED; i++)
                        software[i] = software_events[i].name;
                return software;
        case ATTR_HARDWARE:
                for (size_t i = 0; i < N_HARDWARE_LISTED; i++)
                        hardware[i] = hardware_events[i].name;
                return hardware;
        case ATTR_CACHE: {
                size_t n = 0;

                /* perf list's spelling: L1-dcache-loads, L1-dcache-load-misses. */
                for (size_t c = 0; c < PERF_COUNT_HW_CACHE_MAX; c++)
                        for (size_t op = 0; op < PERF_COUNT_HW_CACHE_OP_MAX; op++) {
                                if (!(cache_valid_ops[c] & (1u << op)))
                                        continue;
                                snprintf(cache_buf[n], sizeof(cache_buf[n]), "%s-%s",
                                         cache_names[c][0], cache_ops[op][1]);
                                cache[n] = cache_buf[n];
                                n++;
                                snprintf(cache_buf[n], sizeof(cache_buf[n]), "%s-%s-misses",
                                         cache_names[c][0], cache_ops[op][0]);
                                cache[n] = cache_buf[n];
                                n++;
                        }
                cache[n] = NULL;
                return cache;
        }
        default:
                return none;
        }
}

static int fail(struct attr_error *e, const char *key, const char *value, const char *reason, int r) {
        if (e)
                *e = (struct attr_error) { .key = key, .value = value, .reason = reason };
        return r;
}

typedef int (*bit_fn)(const char *name, uint64_t *ret);

static int names_to_mask(const char *const *names, bit_fn fn, uint64_t *ret, const char **ret_bad) {
        for (const char *const *n = names; n && *n; n++) {
                uint64_t bit;

                if (fn(*n, &bit) < 0) {
                        *ret_bad = *n;
                        return -EINVAL;
                }
                *ret |= bit;
        }
        return 0;
}

static int reg_bit(const char *name, uint64_t *ret) {
        unsigned i;

        if (attr_reg_index(name, &i) < 0)
                return -EINVAL;
        *ret = 1ULL << i;
        return 0;
}

static int set_excludes(struct perf_event_attr *a, const char *const *names, const char **ret_bad) {
        for (const char *const *n = names; n && *n; n++) {
                if (strcmp(*n, "user") == 0)
                        a->exclude_user = 1;
                else if (strcmp(*n, "kernel") == 0)
                        a->exclude_kernel = 1;
                else if (strcmp(*n, "hv") == 0)
                        a->exclude_hv = 1;
                else if (strcmp(*n, "idle") == 0)
                        a->exclude_idle = 1;
                else if (strcmp(*n, "host") == 0)
                        a->exclude_host = 1;
                else if (strcmp(*n, "guest") == 0)
                        a->exclude_guest = 1;
                else {
                        *ret_bad = *n;
                        return -EINVAL;
                }
        }
        return 0;
}

static int set_records(struct perf_event_attr *a, const char *const *names, const char **ret_bad) {
        for (const char *const *n = names; n && *n; n++) {
                const char *s = *n;

                if (strcmp(s, "mmap") == 0)
                        a->mmap = 1;
                else if (strcmp(s, "mmap_data") == 0)
                        a->mmap_data = 1;
                /* MMAP2 is MMAP's layout switch: the kernel counts mmap
                 * listeners by attr.mmap (account_event()'s
                 * nr_mmap_events) and writes no mmap record for mmap2
                 * alone, so perf sets both; build ids ride in MMAP2. */
                else if (strcmp(s, "mmap2") == 0)
                        a->mmap = a->mmap2 = 1;
                else if (strcmp(s, "build_id") == 0)
                        a->mmap = a->mmap2 = a->build_id = 1;
                else if (strcmp(s, "comm") == 0)
                        a->comm = 1;
                else if (strcmp(s, "comm_exec") == 0)
                        a->comm = a->comm_exec = 1;
                else if (strcmp(s, "task") == 0)
                        a->task = 1;
                else if (strcmp(s, "context_switch") == 0)
                        a->context_switch = 1;
                else if (strcmp(s, "namespaces") == 0)
                        a->namespaces = 1;
                else if (strcmp(s, "cgroup") == 0)
                        a->cgroup = 1;
                else if (strcmp(s, "ksymbol") == 0)
                        a->ksymbol = 1;
                else if (strcmp(s, "bpf_event") == 0)
                        a->bpf_event = 1;
                else if (strcmp(s, "text_poke") == 0)
                        a->text_poke = 1;
                else if (strcmp(s, "read") == 0)
                        a->inherit_stat = 1;    /* PERF_RECORD_READ at a child's exit */
                else {
                        *ret_bad = s;
                        return -EINVAL;
                }
        }
        return 0;
}

static int breakpoint_attr(const struct attr_spec *s, const struct attr_env *env, struct perf_event_attr *a,
                           struct attr_error *e) {
        const char *access = s->access ?: "rw";
        uint64_t addr;
        int r;

        a->type = PERF_TYPE_BREAKPOINT;
        if (strcmp(access, "r") == 0)
                a->bp_type = HW_BP_R;
        else if (strcmp(access, "w") == 0)
                a->bp_type = HW_BP_W;
        else if (strcmp(access, "rw") == 0 || strcmp(access, "wr") == 0)
                a->bp_type = HW_BP_R | HW_BP_W;
        else if (strcmp(access, "x") == 0)
                a->bp_type = HW_BP_X;
        else
                return fail(e, "access", access, "not one of r, w, rw, x", -EINVAL);

        /* perf's defaults (parse_events_add_breakpoint()): an execute
         * breakpoint covers a long, a data one 4 bytes. */
        a->bp_len = s->len ?: (a->bp_type == HW_BP_X ? sizeof(long) : 4);
        if (a->bp_len != 1 && a->bp_len != 2 && a->bp_len != 4 && a->bp_len != 8)
                return fail(e, "len", NULL, "not 1, 2, 4 or 8", -EINVAL);

        if (parse_u64(s->name, &addr) < 0) {
                r = kallsyms_lookup(env ? env->kallsyms : NULL, s->name, &addr);
                if (r == -ENOENT)
                        return fail(e, "name", s->name, "neither an address nor a kernel symbol in kallsyms", r);
                if (r == -EPERM)
                        return fail(e, "name", s->name,
                                    "kallsyms hides addresses (kptr_restrict): give the address", r);
                if (r < 0)
                        return fail(e, "name", s->name, "cannot read kallsyms", r);
        }
        a->bp_addr = addr;
        return 0;
}

/* The event itself: type and config from its kind and name. */
static int attr_event(const struct attr_spec *s, const struct attr_env *env, struct perf_event_attr *a,
                      struct attr_error *e) {
        const char *reason = NULL;
        uint64_t config;
        int r;

        switch (s->kind) {
        case ATTR_SOFTWARE:
                a->type = PERF_TYPE_SOFTWARE;
                if (table_find(software_events, ELEMENTSOF(software_events), s->name, &config) < 0)
                        return fail(e, "name", s->name, "not a software event (see evmonctl list)", -EINVAL);
                a->config = config;
                break;
        case ATTR_HARDWARE:
                a->type = PERF_TYPE_HARDWARE;
                if (table_find(hardware_events, ELEMENTSOF(hardware_events), s->name, &config) < 0)
                        return fail(e, "name", s->name, "not a hardware event (see evmonctl list)", -EINVAL);
                a->config = config;
                break;
        case ATTR_CACHE:
                a->type = PERF_TYPE_HW_CACHE;
                if (cache_parse(s->name, &config) < 0)
                        return fail(e, "name", s->name,
                                    "not a cache event: CACHE-OP[-misses] as perf list spells them", -EINVAL);
                a->config = config;
                break;
        case ATTR_RAW: {
                const char *v = s->name;

                /* perf's rNNN as well as 0xNNN: both hexadecimal. */
                a->type = PERF_TYPE_RAW;
                if (v[0] == 'r')
                        v++;
                else if (v[0] == '0' && (v[1] == 'x' || v[1] == 'X'))
                        v += 2;
                else
                        return fail(e, "name", s->name, "a raw event is 0xHEX (or perf's rHEX)", -EINVAL);
                {
                        char *end;

                        errno = 0;
                        a->config = strtoull(v, &end, 16);
                        if (errno != 0 || end == v || *end)
                                return fail(e, "name", s->name, "a raw event is 0xHEX (or perf's rHEX)", -EINVAL);
                }
                break;
        }
        case ATTR_BREAKPOINT:
                r = breakpoint_attr(s, env, a, e);
                if (r < 0)
                        return r;
                break;
        case ATTR_PMU:
                r = pmu_resolve(env ? env->pmu_root : NULL, s->name, a, &reason);
                if (r == -ENOENT)
                        return fail(e, "name", s->name,
                                    reason ?: "no such PMU under /sys/bus/event_source/devices", r);
                if (r < 0)
                        return fail(e, "name", s->name, reason ?: "cannot read the PMU's sysfs directory", r);
                break;
        default:
                return fail(e, "kind", NULL, "unknown event kind", -EINVAL);
        }
        return 0;
}

/* config1..3 given beside the name. */
static int attr_configs(const struct attr_spec *s, struct perf_event_attr *a, struct attr_error *e) {
        if (s->has_config1)
                a->config1 = s->config1;
        if (s->has_config2)
                a->config2 = s->config2;
        if (s->has_config3 && s->config3 != 0) {
#ifdef PERF_ATTR_SIZE_VER8
                a->config3 = s->config3;
#else
                /* config3 (Linux 6.3) lies past the struct this build's
                 * uapi header knows. */
                return fail(e, "config3", NULL, "needs evmon built against Linux 6.3+ headers", -EOPNOTSUPP);
#endif
        }
        if (s->kind == ATTR_BREAKPOINT && (s->has_config1 || s->has_config2))
                return fail(e, s->has_config1 ? "config1" : "config2", NULL,
                            "a breakpoint's config1/config2 are its address and length", -EINVAL);
        return 0;
}

/* Sampling (a period or a frequency) or counting, and the defaults of
 * each. */
static int attr_mode(const struct attr_spec *s, struct perf_event_attr *a, struct attr_error *e) {
        if (s->period && s->freq)
                return fail(e, "freq", NULL, "give period or freq, not both", -EINVAL);
        if (s->count && (s->period || s->freq))
                return fail(e, s->period ? "period" : "freq", NULL, "a counting event does not sample", -EINVAL);

        if (!s->count) {
                if (s->period) {
                        a->sample_period = s->period;
                        a->freq = 0;
                } else if (s->freq) {
                        a->sample_freq = s->freq;
                        a->freq = 1;
                } else if (a->sample_period == 0 && !a->freq) {
                        /* No period from a PMU term either: perf record's
                         * default, but a breakpoint fires on every hit. */
                        if (s->trace || s->kind == ATTR_BREAKPOINT)
                                a->sample_period = 1;
                        else {
                                a->sample_freq = DEFAULT_FREQ;
                                a->freq = 1;
                        }
                }

                /* perf record's default fields; a trace event's line says
                 * what its format fields say, and more only when asked. */
                if (s->trace)
                        a->sample_type = PERF_SAMPLE_RAW;
                else {
                        a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
                        if (a->freq)
                                a->sample_type |= PERF_SAMPLE_PERIOD;
                }
        } else {
                /* perf stat's: the times that scale a multiplexed count. */
                a->sample_period = 0;
                a->freq = 0;
                a->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
        }
        return 0;
}

/* What a sample and a read carry: sample, read, callchain. */
static int attr_fields(const struct attr_spec *s, struct perf_event_attr *a, struct attr_error *e) {
        const char *bad = NULL;
        uint64_t mask;

        if (s->sample) {
                mask = 0;
                if (names_to_mask(s->sample, attr_sample_bit, &mask, &bad) < 0)
                        return fail(e, "sample", bad, "not a PERF_SAMPLE_* name", -EINVAL);
                if (s->count && mask)
                        return fail(e, "sample", NULL, "a counting event does not sample", -EINVAL);
                a->sample_type = mask;
                /* A trace event's fields are its raw data. */
                if (s->trace && !s->count)
                        a->sample_type |= PERF_SAMPLE_RAW;
        }
        if (s->read) {
                mask = 0;
                if (names_to_mask(s->read, attr_read_bit, &mask, &bad) < 0)
                        return fail(e, "read", bad, "not a read_format name", -EINVAL);
                a->read_format = mask;
                /* A counting event is read for its counter lines, whose
                 * enabled, running and scaled are these times: a "read"
                 * that leaves them out (["id"]) gave 0 for all three. */
                if (s->count)
                        a->read_format |= PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
        }

        if (s->callchain) {
                if (s->count)
                        return fail(e, "callchain", NULL, "a counting event does not sample", -EINVAL);
                a->sample_type |= PERF_SAMPLE_CALLCHAIN;
                if (s->max_stack > UINT16_MAX)
                        return fail(e, "callchain", NULL, "max_stack is at most 65535", -EINVAL);
                a->sample_max_stack = (uint16_t) s->max_stack;
                a->exclude_callchain_kernel = s->callchain_no_kernel;
                a->exclude_callchain_user = s->callchain_no_user;
                if (s->callchain_no_kernel && s->callchain_no_user)
                        return fail(e, "callchain", NULL, "neither kernel nor user frames", -EINVAL);
                if (s->callchain_dwarf) {
                        uint32_t bytes = s->dwarf_stack ?: 8192;

                        if (s->callchain_no_user)
                                return fail(e, "callchain", NULL, "\"user\": \"dwarf\" unwinds user frames", -EINVAL);
                        if (bytes % 8 != 0 || bytes > 65528)
                                return fail(e, "callchain", NULL, "stack_bytes is a multiple of 8 up to 65528",
                                            -EINVAL);
                        if (s->stack_user || s->regs_user)
                                return fail(e, "callchain", NULL, "\"user\": \"dwarf\" takes the user registers and "
                                            "stack itself: no \"regs_user\" or \"stack_user\" beside it", -EINVAL);
                        /* As perf's: the kernel's frames, and for the
                         * user's the registers DWARF's CFI names (ax..di,
                         * bp, sp, ip, r8..r15) and the stack. */
                        a->exclude_callchain_user = 1;
                        a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
                        a->sample_regs_user = 0xff01ff;
                        a->sample_stack_user = bytes;
                }
        }
        return 0;
}

/* Registers, the user stack and the branch stack a sample copies. */
static int attr_copies(const struct attr_spec *s, struct perf_event_attr *a, struct attr_error *e) {
        const char *bad = NULL;
        uint64_t mask;

        if (s->regs_user) {
                mask = 0;
                if (names_to_mask(s->regs_user, reg_bit, &mask, &bad) < 0)
                        return fail(e, "regs_user", bad, "not an x86_64 register name", -EINVAL);
                a->sample_regs_user = mask;
                a->sample_type |= PERF_SAMPLE_REGS_USER;
        }
        if (s->regs_intr) {
                mask = 0;
                if (names_to_mask(s->regs_intr, reg_bit, &mask, &bad) < 0)
                        return fail(e, "regs_intr", bad, "not an x86_64 register name", -EINVAL);
                a->sample_regs_intr = mask;
                a->sample_type |= PERF_SAMPLE_REGS_INTR;
        }
        if (s->stack_user) {
                /* The kernel wants a multiple of 8 (perf_event_open(2)). */
                if (s->stack_user % 8 != 0)
                        return fail(e, "stack_user", NULL, "a multiple of 8 bytes", -EINVAL);
                a->sample_stack_user = s->stack_user;
                a->sample_type |= PERF_SAMPLE_STACK_USER;
        }
        if (s->branch) {
                mask = 0;
                if (names_to_mask(s->branch, attr_branch_bit, &mask, &bad) < 0)
                        return fail(e, "branch", bad, "not a branch filter name (perf record -j)", -EINVAL);
                a->branch_sample_type = mask;
                a->sample_type |= PERF_SAMPLE_BRANCH_STACK;
        }
        if (s->count && (s->regs_user || s->regs_intr || s->stack_user || s->branch))
                return fail(e, s->branch ? "branch" : s->stack_user ? "stack_user" : "regs_user", NULL,
                            "a counting event does not sample", -EINVAL);
        return 0;
}

/* precise_ip, exclude, side records and the flag options. */
static int attr_flags(const struct attr_spec *s, struct perf_event_attr *a, struct attr_error *e) {
        const char *bad = NULL;

        if (s->precise_ip > 3)
                return fail(e, "precise_ip", NULL, "0 to 3", -EINVAL);
        a->precise_ip = s->precise_ip;

        if (set_excludes(a, s->exclude, &bad) < 0)
                return fail(e, "exclude", bad, "not one of user, kernel, hv, idle, host, guest", -EINVAL);
        if (set_records(a, s->records, &bad) < 0)
                return fail(e, "records", bad, "not a side-record name", -EINVAL);
        /* The kernel writes CGROUP and NAMESPACES records (and TEXT_POKE
         * on kernels before 5.9's is_sb_event() knew it) to a CPU-wide
         * event only if it is on the side-band list, which only the other
         * record bits put it on (is_sb_event() in kernel/events/core.c):
         * "records": ["cgroup"] alone gave no record at all. comm_exec
         * puts it there and writes nothing by itself (COMM records need
         * comm; it only marks those of an exec). */
        if ((a->cgroup || a->namespaces || a->text_poke) &&
            !(a->mmap || a->mmap_data || a->mmap2 || a->comm || a->comm_exec || a->task || a->ksymbol ||
              a->context_switch || a->bpf_event))
                a->comm_exec = 1;

        /* inherit_thread is a kind of inherit: the kernel wants both. */
        a->inherit = s->inherit || s->inherit_thread;
        a->inherit_thread = s->inherit_thread;
        a->pinned = s->pinned;
        a->exclusive = s->exclusive;
        a->enable_on_exec = s->enable_on_exec;
        a->remove_on_exec = s->remove_on_exec;
        return 0;
}

int attr_from_spec(const struct attr_spec *s, const struct attr_env *env, struct perf_event_attr *ret,
                   struct attr_error *e) {
        struct perf_event_attr a = { .size = sizeof(a) };
        int r;

        if (!s || !ret)
                return -EINVAL;
        if (s->trace) {
                if (s->has_config1 || s->has_config2 || s->has_config3)
                        return fail(e, s->has_config1 ? "config1" : s->has_config2 ? "config2" : "config3", NULL,
                                    "a trace event's config words are its tracepoint's or probe's", -EINVAL);
                if (s->branch || s->precise_ip)
                        return fail(e, s->branch ? "branch" : "precise_ip", NULL,
                                    "a hardware PMU option: a trace event is counted in software", -EINVAL);
                r = 0;
        } else if (!s->name || !*s->name)
                return fail(e, "name", NULL, "empty event name", -EINVAL);
        else
                r = attr_event(s, env, &a, e);
        if (r >= 0 && !s->trace)
                r = attr_configs(s, &a, e);
        if (r >= 0)
                r = attr_mode(s, &a, e);
        if (r >= 0)
                r = attr_fields(s, &a, e);
        if (r >= 0)
                r = attr_copies(s, &a, e);
        if (r >= 0)
                r = attr_flags(s, &a, e);
        if (r < 0)
                return r;

        *ret = a;
        return 0;
}
