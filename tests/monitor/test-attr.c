/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* attr.c and pmu.c: the perf_event_attr built for each spec of a table,
 * compared field by field with the attr perf itself printed (perf stat -vv,
 * perf record -vv) for the same event, recorded by
 * fixtures/attr/record.sh with the installed perf. Hardware and cache
 * events included: perf prints the attr before it tries to open it. PMUs
 * resolve against the copy of sysfs that record.sh took. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "evmon/attr.h"
#include "evmon/kallsyms.h"
#include "evmon/cleanup.h"

#define L(...) ((const char *const[]) { __VA_ARGS__, NULL })

/* perf's --call-graph dwarf asks for every general register but the
 * segment ones (PERF_REGS_MASK less DS, ES, FS, GS on x86_64). */
#define DWARF_REGS L("ax", "bx", "cx", "dx", "si", "di", "bp", "sp", "ip", "flags", "cs", "ss", \
                     "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15")
/* What perf record turns on for the first event (its tracking). */
#define PERF_RECORD_TRACKING "mmap", "comm", "task", "mmap2", "comm_exec", "ksymbol", "bpf_event"

struct row {
        const char *fixture;
        struct attr_spec spec;
};

static const struct row rows[] = {
        { "stat-cpu-clock", { .kind = ATTR_SOFTWARE, .name = "cpu-clock", .count = true } },
        { "stat-cs", { .kind = ATTR_SOFTWARE, .name = "cs", .count = true } },
        { "stat-page-faults", { .kind = ATTR_SOFTWARE, .name = "page-faults", .count = true } },
        { "stat-minor-faults", { .kind = ATTR_SOFTWARE, .name = "minor-faults", .count = true } },
        { "stat-dummy", { .kind = ATTR_SOFTWARE, .name = "dummy", .count = true } },
        { "stat-bpf-output", { .kind = ATTR_SOFTWARE, .name = "bpf-output", .count = true } },
        { "stat-cgroup-switches", { .kind = ATTR_SOFTWARE, .name = "cgroup-switches", .count = true } },
        { "stat-cycles", { .kind = ATTR_HARDWARE, .name = "cycles", .count = true } },
        { "stat-instructions", { .kind = ATTR_HARDWARE, .name = "instructions", .count = true } },
        { "stat-ref-cycles", { .kind = ATTR_HARDWARE, .name = "ref-cycles", .count = true } },
        { "stat-stalled-backend", { .kind = ATTR_HARDWARE, .name = "stalled-cycles-backend", .count = true } },
        { "stat-l1d-load-misses", { .kind = ATTR_CACHE, .name = "L1-dcache-load-misses", .count = true } },
        { "stat-llc-stores", { .kind = ATTR_CACHE, .name = "LLC-stores", .count = true } },
        { "stat-dtlb-pf-misses", { .kind = ATTR_CACHE, .name = "dTLB-prefetch-misses", .count = true } },
        { "stat-branch-loads", { .kind = ATTR_CACHE, .name = "branch-loads", .count = true } },
        { "stat-node-load-misses", { .kind = ATTR_CACHE, .name = "node-load-misses", .count = true } },
        { "stat-l1i-loads", { .kind = ATTR_CACHE, .name = "L1-icache-loads", .count = true } },
        { "stat-raw", { .kind = ATTR_RAW, .name = "0x1a2", .count = true } },
        { "stat-bp-rw", { .kind = ATTR_BREAKPOINT, .name = "0x1000", .count = true } },
        { "stat-bp-w8", { .kind = ATTR_BREAKPOINT, .name = "0x2000", .access = "w", .len = 8, .count = true } },
        { "stat-bp-x", { .kind = ATTR_BREAKPOINT, .name = "0x3000", .access = "x", .count = true } },
        { "stat-msr-tsc", { .kind = ATTR_PMU, .name = "msr/tsc/", .count = true } },
        { "stat-msr-event", { .kind = ATTR_PMU, .name = "msr/event=0x2/", .count = true } },
        { "stat-pinned", { .kind = ATTR_SOFTWARE, .name = "cpu-clock", .count = true, .pinned = true } },
        { "stat-kernel-only", { .kind = ATTR_SOFTWARE, .name = "cpu-clock", .count = true,
                                .exclude = L("user", "hv") } },
        { "rec-freq-callchain", { .kind = ATTR_SOFTWARE, .name = "cpu-clock", .freq = 999,
                                  .callchain = true, .max_stack = 64 } },
        { "rec-period-addr", { .kind = ATTR_SOFTWARE, .name = "page-faults", .period = 1,
                               .sample = L("ip", "tid", "time", "addr", "data_src"),
                               .records = L(PERF_RECORD_TRACKING, "mmap_data") } },
        { "rec-regs", { .kind = ATTR_SOFTWARE, .name = "cpu-clock", .period = 10000,
                        .exclude = L("kernel", "hv"), .regs_user = L("ax", "bx", "sp", "ip"),
                        .regs_intr = L("ip", "sp") } },
        { "rec-dwarf", { .kind = ATTR_SOFTWARE, .name = "task-clock", .period = 100000,
                         .sample = L("ip", "tid", "time", "addr", "data_src"),
                         .callchain = true, .callchain_no_user = true,
                         .regs_user = DWARF_REGS, .stack_user = 4096,
                         .records = L(PERF_RECORD_TRACKING, "mmap_data") } },
        { "rec-branch", { .kind = ATTR_SOFTWARE, .name = "cpu-clock", .period = 1000,
                          .branch = L("any", "u") } },
        { "rec-precise", { .kind = ATTR_SOFTWARE, .name = "cpu-clock", .period = 1000, .precise_ip = 3 } },
        { "rec-bp-period", { .kind = ATTR_BREAKPOINT, .name = "0x4000", .access = "r", .len = 2 } },
        { "rec-records", { .kind = ATTR_SOFTWARE, .name = "dummy", .period = 1,
                           .sample = L("ip", "tid", "time", "cgroup"),
                           .records = L(PERF_RECORD_TRACKING, "context_switch", "namespaces",
                                        "cgroup", "build_id") } },
        { "rec-pmu-period", { .kind = ATTR_PMU, .name = "msr/tsc,period=100000/" } },
};

static char fixture_dir[PATH_MAX];

struct flag_name {
        const char *name;
        uint64_t bit;
};

/* The upper-case names perf prints for sample_type, read_format and
 * branch_sample_type (tools/perf/util/perf_event_attr_fprintf.c). */
static const struct flag_name read_flags[] = {
        { "TOTAL_TIME_ENABLED", PERF_FORMAT_TOTAL_TIME_ENABLED },
        { "TOTAL_TIME_RUNNING", PERF_FORMAT_TOTAL_TIME_RUNNING },
        { "ID", PERF_FORMAT_ID },
        { "GROUP", PERF_FORMAT_GROUP },
        { "LOST", 1U << 4 },
};
static const struct flag_name branch_flags[] = {
        { "USER", PERF_SAMPLE_BRANCH_USER }, { "KERNEL", PERF_SAMPLE_BRANCH_KERNEL },
        { "HV", PERF_SAMPLE_BRANCH_HV }, { "ANY", PERF_SAMPLE_BRANCH_ANY },
        { "ANY_CALL", PERF_SAMPLE_BRANCH_ANY_CALL }, { "ANY_RETURN", PERF_SAMPLE_BRANCH_ANY_RETURN },
        { "IND_CALL", PERF_SAMPLE_BRANCH_IND_CALL }, { "ABORT_TX", PERF_SAMPLE_BRANCH_ABORT_TX },
        { "IN_TX", PERF_SAMPLE_BRANCH_IN_TX }, { "NO_TX", PERF_SAMPLE_BRANCH_NO_TX },
        { "COND", PERF_SAMPLE_BRANCH_COND }, { "CALL_STACK", PERF_SAMPLE_BRANCH_CALL_STACK },
        { "IND_JUMP", PERF_SAMPLE_BRANCH_IND_JUMP }, { "CALL", PERF_SAMPLE_BRANCH_CALL },
        { "NO_FLAGS", PERF_SAMPLE_BRANCH_NO_FLAGS }, { "NO_CYCLES", PERF_SAMPLE_BRANCH_NO_CYCLES },
        { "TYPE_SAVE", PERF_SAMPLE_BRANCH_TYPE_SAVE }, { "HW_INDEX", PERF_SAMPLE_BRANCH_HW_INDEX },
};

static uint64_t parse_flags(const char *s, const struct flag_name *t, size_t n, bool sample) {
        char buf[512], *save = NULL;
        uint64_t v = 0;

        snprintf(buf, sizeof(buf), "%s", s);
        for (char *tok = strtok_r(buf, "|", &save); tok; tok = strtok_r(NULL, "|", &save)) {
                bool found = false;

                if (sample) {
                        char lower[64];
                        uint64_t bit;
                        size_t i;

                        for (i = 0; tok[i] && i < sizeof(lower) - 1; i++)
                                lower[i] = (char) tolower((unsigned char) tok[i]);
                        lower[i] = '\0';
                        if (attr_sample_bit(lower, &bit) == 0) {
                                v |= bit;
                                found = true;
                        }
                }
                for (size_t i = 0; !sample && i < n; i++)
                        if (strcmp(tok, t[i].name) == 0) {
                                v |= t[i].bit;
                                found = true;
                        }
                if (!found)
                        fail_msg("perf printed a flag this test does not know: %s", tok);
        }
        return v;
}

/* Reads perf's printed attr back into a struct. Every key perf printed
 * must be known here, so nothing perf set goes unnoticed. */
static void perf_attr_load(const char *name, struct perf_event_attr *a) {
        _cleanup_(fclosep) FILE *f = NULL;
        char path[PATH_MAX + 64], line[512];

        snprintf(path, sizeof(path), "%s/%s.txt", fixture_dir, name);
        f = fopen(path, "re");
        if (!f)
                fail_msg("%s: %m (run fixtures/attr/record.sh)", path);
        *a = (struct perf_event_attr) {};

        while (fgets(line, sizeof(line), f)) {
                char key[64], val[256];
                unsigned long long u;
                const char *k = line;

                line[strcspn(line, "\n")] = '\0';
                k += strspn(k, " ");
                if (k[0] == '{') {
                        /* "{ sample_period, sample_freq }   999" */
                        const char *close = strchr(k, '}');

                        assert_non_null(close);
                        snprintf(key, sizeof(key), "%.*s", (int) (close - k + 1), k);
                        snprintf(val, sizeof(val), "%s", close + 1 + strspn(close + 1, " "));
                } else if (sscanf(k, "%63s %255s", key, val) != 2)
                        fail_msg("%s: cannot read \"%s\"", path, line);

                u = strtoull(val, NULL, 0);
#define NUM(f) else if (strcmp(key, #f) == 0) a->f = u
                if (strcmp(key, "sample_type") == 0)
                        a->sample_type = parse_flags(val, NULL, 0, true);
                else if (strcmp(key, "read_format") == 0)
                        a->read_format = parse_flags(val, read_flags, ELEMENTSOF(read_flags), false);
                else if (strcmp(key, "branch_sample_type") == 0)
                        a->branch_sample_type = parse_flags(val, branch_flags, ELEMENTSOF(branch_flags), false);
                else if (strcmp(key, "{ sample_period, sample_freq }") == 0)
                        a->sample_period = u;
                else if (strcmp(key, "{ bp_addr, config1 }") == 0)
                        a->config1 = u;
                else if (strcmp(key, "{ bp_len, config2 }") == 0)
                        a->config2 = u;
                NUM(type); NUM(size); NUM(config); NUM(disabled); NUM(inherit); NUM(pinned);
                NUM(exclusive); NUM(exclude_user); NUM(exclude_kernel); NUM(exclude_hv);
                NUM(exclude_idle); NUM(mmap); NUM(comm); NUM(freq); NUM(inherit_stat);
                NUM(enable_on_exec); NUM(task); NUM(watermark); NUM(precise_ip); NUM(mmap_data);
                NUM(sample_id_all); NUM(exclude_host); NUM(exclude_guest);
                NUM(exclude_callchain_kernel); NUM(exclude_callchain_user); NUM(mmap2);
                NUM(comm_exec); NUM(use_clockid); NUM(context_switch); NUM(write_backward);
                NUM(namespaces); NUM(ksymbol); NUM(bpf_event); NUM(aux_output); NUM(cgroup);
                NUM(text_poke); NUM(build_id); NUM(inherit_thread); NUM(remove_on_exec);
                NUM(sigtrap); NUM(bp_type); NUM(sample_regs_user); NUM(sample_stack_user);
                NUM(clockid); NUM(sample_regs_intr); NUM(aux_watermark); NUM(sample_max_stack);
                else
                        fail_msg("%s: perf printed a field this test does not know: %s", path, key);
#undef NUM
        }
}

#define RECORD_BITS(X) X(mmap) X(comm) X(task) X(mmap_data) X(mmap2) X(comm_exec) X(context_switch) \
        X(namespaces) X(ksymbol) X(bpf_event) X(cgroup) X(text_poke) X(build_id) X(inherit_stat)

/* What perf chose itself and the spec does not say (evmond makes its own
 * choice there): cleared on perf's side before comparing. */
static void perf_attr_strip(struct perf_event_attr *p, const struct attr_spec *s) {
        p->size = 0;
        p->disabled = 0;
        p->inherit = 0;
        p->enable_on_exec = 0;
        p->sample_id_all = 0;
        p->exclude_guest = 0;
        p->sample_type &= ~(uint64_t) (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_ID);
        p->read_format &= ~(uint64_t) (PERF_FORMAT_ID | (1U << 4));
        if (!s->records) {
#define CLEAR(f) p->f = 0;
                RECORD_BITS(CLEAR)
#undef CLEAR
        }
}

static void test_attr_matches_perf(void **state) {
        struct attr_env env;
        char sys[PATH_MAX + 8];
        unsigned n_bad = 0;

        snprintf(sys, sizeof(sys), "%s/sys", fixture_dir);
        env = (struct attr_env) { .pmu_root = sys };

        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                struct perf_event_attr want, got;
                struct attr_error e = {};
                int r;

                perf_attr_load(rows[i].fixture, &want);
                perf_attr_strip(&want, &rows[i].spec);

                r = attr_from_spec(&rows[i].spec, &env, &got, &e);
                if (r < 0)
                        fail_msg("%s: %s: %s %s", rows[i].fixture, e.key, e.value ?: "", e.reason);
                got.size = 0;

#define CMP(f)                                                                                 \
        if ((uint64_t) want.f != (uint64_t) got.f) {                                           \
                print_error("%s: %s: perf 0x%llx, evmon 0x%llx\n", rows[i].fixture, #f,        \
                            (unsigned long long) want.f, (unsigned long long) got.f);          \
                n_bad++;                                                                       \
        }
                CMP(type) CMP(config) CMP(config1) CMP(config2) CMP(sample_period) CMP(freq)
                CMP(sample_type) CMP(read_format) CMP(pinned) CMP(exclusive) CMP(exclude_user)
                CMP(exclude_kernel) CMP(exclude_hv) CMP(exclude_idle) CMP(exclude_host)
                CMP(precise_ip) CMP(exclude_callchain_kernel) CMP(exclude_callchain_user)
                CMP(inherit_thread) CMP(remove_on_exec) CMP(bp_type) CMP(branch_sample_type)
                CMP(sample_regs_user) CMP(sample_stack_user) CMP(sample_regs_intr)
                CMP(sample_max_stack) CMP(aux_watermark) CMP(sigtrap) CMP(use_clockid)
                CMP(watermark) CMP(write_backward) CMP(aux_output)
                RECORD_BITS(CMP)
#undef CMP
                /* Anything left that no CMP() above names. */
                want.disabled = got.disabled = want.inherit = got.inherit = 0;
                want.enable_on_exec = got.enable_on_exec = want.exclude_guest = got.exclude_guest = 0;
                want.sample_id_all = got.sample_id_all = 0;
                if (memcmp(&want, &got, sizeof(want)) != 0) {
                        print_error("%s: the attrs differ in a field not compared by name\n", rows[i].fixture);
                        n_bad++;
                }
        }
        assert_int_equal(n_bad, 0);
}

static void test_names(void **state) {
        struct perf_event_attr a;
        struct attr_error e;
        const char *const *names;
        unsigned idx;
        size_t n = 0;

        /* Every listed name builds, in every kind that lists. */
        for (enum attr_kind k = 0; k < _ATTR_KIND_MAX; k++)
                for (names = attr_event_names(k); *names; names++, n++) {
                        struct attr_spec s = { .kind = k, .name = *names };

                        if (attr_from_spec(&s, NULL, &a, &e) < 0)
                                fail_msg("%s:%s: %s", attr_kind_to_string(k), *names, e.reason);
                }
        /* 12 software, 10 hardware, 7 caches with 16 valid ops × 2. */
        assert_int_equal(n, 12 + 10 + 32);

        assert_int_equal(attr_reg_index("SP", &idx), 0);
        assert_int_equal(idx, 7);
        assert_int_equal(attr_reg_index("xmm15", &idx), 0);
        assert_int_equal(idx, 62);
        assert_string_equal(attr_reg_name(62), "xmm15");
        assert_string_equal(attr_reg_name(23), "r15");
        assert_null(attr_reg_name(33));

        /* Aliases and either order of op and result, as perf takes them. */
        {
                struct attr_spec s = { .kind = ATTR_CACHE, .name = "l1d-misses-store", .count = true };

                assert_int_equal(attr_from_spec(&s, NULL, &a, &e), 0);
                assert_int_equal(a.config, 0 | 1 << 8 | 1 << 16);
        }
}

static void test_errors(void **state) {
        const struct {
                struct attr_spec spec;
                const char *key, *value;
        } bad[] = {
                { { .kind = ATTR_SOFTWARE, .name = "cpu-clocks" }, "name", "cpu-clocks" },
                { { .kind = ATTR_HARDWARE, .name = "cpu-clock" }, "name", "cpu-clock" },
                { { .kind = ATTR_CACHE, .name = "L1-dcache-load-hits" }, "name", "L1-dcache-load-hits" },
                { { .kind = ATTR_RAW, .name = "1a2" }, "name", "1a2" },
                { { .kind = ATTR_RAW, .name = "0x1g" }, "name", "0x1g" },
                { { .kind = ATTR_BREAKPOINT, .name = "0x1000", .access = "wx" }, "access", "wx" },
                { { .kind = ATTR_BREAKPOINT, .name = "0x1000", .len = 3 }, "len", NULL },
                { { .kind = ATTR_SOFTWARE, .name = "dummy", .sample = L("ip", "ipp") }, "sample", "ipp" },
                { { .kind = ATTR_SOFTWARE, .name = "dummy", .read = L("group", "time") }, "read", "time" },
                { { .kind = ATTR_SOFTWARE, .name = "dummy", .regs_user = L("eax") }, "regs_user", "eax" },
                { { .kind = ATTR_SOFTWARE, .name = "dummy", .branch = L("any", "jmp") }, "branch", "jmp" },
                { { .kind = ATTR_SOFTWARE, .name = "dummy", .exclude = L("users") }, "exclude", "users" },
                { { .kind = ATTR_SOFTWARE, .name = "dummy", .records = L("fork") }, "records", "fork" },
                { { .kind = ATTR_SOFTWARE, .name = "dummy", .period = 1, .freq = 2 }, "freq", NULL },
                { { .kind = ATTR_SOFTWARE, .name = "dummy", .count = true, .period = 1 }, "period", NULL },
                { { .kind = ATTR_SOFTWARE, .name = "dummy", .count = true, .callchain = true }, "callchain", NULL },
                { { .kind = ATTR_SOFTWARE, .name = "dummy", .stack_user = 12 }, "stack_user", NULL },
                { { .kind = ATTR_SOFTWARE, .name = "dummy", .precise_ip = 4 }, "precise_ip", NULL },
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                struct perf_event_attr a;
                struct attr_error e = {};

                if (attr_from_spec(&bad[i].spec, NULL, &a, &e) >= 0)
                        fail_msg("row %zu was accepted", i);
                assert_string_equal(e.key, bad[i].key);
                if (bad[i].value)
                        assert_string_equal(e.value, bad[i].value);
                assert_non_null(e.reason);
        }
}

/* A counting event's own "read" keeps the times its counter lines show
 * (perf stat's read_format), whatever else it asks for. */
static void test_count_read_times(void **state) {
        const uint64_t times = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
        struct attr_spec count = { .kind = ATTR_SOFTWARE, .name = "page-faults", .count = true, .read = L("id") };
        struct attr_spec sample = { .kind = ATTR_SOFTWARE, .name = "cpu-clock", .sample = L("read"), .read = L("id") };
        struct perf_event_attr a;

        assert_int_equal(attr_from_spec(&count, NULL, &a, NULL), 0);
        assert_int_equal(a.read_format, times | PERF_FORMAT_ID);
        count.read = L("group", "id", "lost");
        assert_int_equal(attr_from_spec(&count, NULL, &a, NULL), 0);
        assert_int_equal(a.read_format, times | PERF_FORMAT_GROUP | PERF_FORMAT_ID | (1U << 4));
        /* A sample's read is as asked. */
        assert_int_equal(attr_from_spec(&sample, NULL, &a, NULL), 0);
        assert_int_equal(a.read_format, PERF_FORMAT_ID);
}

/* A CPU-wide event gets CGROUP and NAMESPACES records only on the
 * kernel's side-band list (is_sb_event()): comm_exec puts it there and
 * writes no record by itself; other record bits already do. */
static void test_records_side_band(void **state) {
        struct attr_spec cg = { .kind = ATTR_SOFTWARE, .name = "dummy", .records = L("cgroup") };
        struct attr_spec ns = { .kind = ATTR_SOFTWARE, .name = "dummy", .records = L("namespaces") };
        struct attr_spec both = { .kind = ATTR_SOFTWARE, .name = "dummy", .records = L("cgroup", "task") };
        struct attr_spec none = { .kind = ATTR_SOFTWARE, .name = "dummy" };
        struct perf_event_attr a;

        assert_int_equal(attr_from_spec(&cg, NULL, &a, NULL), 0);
        assert_true(a.cgroup && a.comm_exec && !a.comm && !a.task && !a.mmap);
        assert_int_equal(attr_from_spec(&ns, NULL, &a, NULL), 0);
        assert_true(a.namespaces && a.comm_exec && !a.comm);
        assert_int_equal(attr_from_spec(&both, NULL, &a, NULL), 0);
        assert_true(a.cgroup && a.task && !a.comm_exec);
        assert_int_equal(attr_from_spec(&none, NULL, &a, NULL), 0);
        assert_false(a.comm_exec);
}

static void test_pmu(void **state) {
        char root[PATH_MAX + 8], dir[PATH_MAX + 64];
        struct perf_event_attr a = {};
        const char *reason = NULL;
        FILE *f;

        /* A made-up PMU in perf's cpu/ shape: split fields, an alias. */
        snprintf(root, sizeof(root), "%s/pmu-XXXXXX", P_tmpdir);
        assert_non_null(mkdtemp(root));
#define WRITE(rel, text)                                        \
        snprintf(dir, sizeof(dir), "%s/%s", root, rel);         \
        f = fopen(dir, "we");                                   \
        assert_non_null(f);                                     \
        fputs(text, f);                                         \
        fclose(f);
        snprintf(dir, sizeof(dir), "%s/cpu", root);
        assert_int_equal(mkdir(dir, 0755), 0);
        snprintf(dir, sizeof(dir), "%s/cpu/format", root);
        assert_int_equal(mkdir(dir, 0755), 0);
        snprintf(dir, sizeof(dir), "%s/cpu/events", root);
        assert_int_equal(mkdir(dir, 0755), 0);
        WRITE("cpu/type", "4\n");
        WRITE("cpu/format/event", "config:0-7,32-35\n");
        WRITE("cpu/format/umask", "config:8-15\n");
        WRITE("cpu/format/cmask", "config:24-31\n");
        WRITE("cpu/format/edge", "config:18\n");
        WRITE("cpu/format/ldlat", "config1:0-15\n");
        WRITE("cpu/events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n");
        WRITE("cpu/events/mem-loads.unit", "Bytes\n");

        assert_int_equal(pmu_resolve(root, "cpu/event=0x3c,umask=0x00/", &a, &reason), 0);
        assert_int_equal(a.type, 4);
        assert_int_equal(a.config, 0x3c);
        /* High event bits go to 32-35; a bare flag term is 1. */
        assert_int_equal(pmu_resolve(root, "cpu/event=0x1a3,edge,cmask=2/", &a, &reason), 0);
        assert_int_equal(a.config, 0xa3ULL | 1ULL << 32 | 1ULL << 18 | 2ULL << 24);
        assert_int_equal(pmu_resolve(root, "cpu/mem-loads,config2=7/", &a, &reason), 0);
        assert_int_equal(a.config, 0xcd | 0x100);
        assert_int_equal(a.config1, 3);
        assert_int_equal(a.config2, 7);

        assert_int_equal(pmu_resolve(root, "cpu/umask=0x100/", &a, &reason), -ERANGE);
        assert_int_equal(pmu_resolve(root, "cpu/bogus=1/", &a, &reason), -EINVAL);
        assert_int_equal(pmu_resolve(root, "cpu/event=x/", &a, &reason), -EINVAL);
        assert_int_equal(pmu_resolve(root, "cpu/event=1", &a, &reason), -EINVAL);
        assert_int_equal(pmu_resolve(root, "gpu/event=1/", &a, &reason), -ENOENT);
        assert_int_equal(pmu_resolve(root, "../cpu/event=1/", &a, &reason), -EINVAL);

        {
                char cmd[PATH_MAX + 16];

                snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
                assert_int_equal(system(cmd), 0);
        }
#undef WRITE
}

struct listed {
        unsigned n;
        bool tsc;
};

static int on_event(const char *pmu, uint32_t type, const char *event, void *userdata) {
        struct listed *l = userdata;

        l->n++;
        if (strcmp(pmu, "msr") == 0 && event && strcmp(event, "tsc") == 0 && type == 9)
                l->tsc = true;
        return 0;
}

static void test_pmu_list(void **state) {
        char sys[PATH_MAX + 8];
        struct listed l = {};

        snprintf(sys, sizeof(sys), "%s/sys", fixture_dir);
        assert_int_equal(pmu_foreach_event(sys, on_event, &l), 0);
        assert_int_equal(l.n, 1);
        assert_true(l.tsc);
}

static void test_kallsyms(void **state) {
        char path[] = "/tmp/kallsyms-XXXXXX";
        int fd = mkstemp(path);
        uint64_t addr;
        FILE *f;

        assert_true(fd >= 0);
        f = fdopen(fd, "w");
        fputs("ffffffff81000000 T _stext\nffffffff82a0b000 D jiffies\nffffffffc0001000 t helper\t[mod]\n", f);
        fclose(f);
        assert_int_equal(kallsyms_lookup(path, "jiffies", &addr), 0);
        assert_int_equal(addr, 0xffffffff82a0b000ULL);
        assert_int_equal(kallsyms_lookup(path, "helper", &addr), 0);
        assert_int_equal(kallsyms_lookup(path, "nothing", &addr), -ENOENT);

        {
                struct attr_env env = { .kallsyms = path };
                struct attr_spec s = { .kind = ATTR_BREAKPOINT, .name = "jiffies", .access = "w", .len = 8 };
                struct perf_event_attr a;

                assert_int_equal(attr_from_spec(&s, &env, &a, NULL), 0);
                assert_int_equal(a.bp_addr, 0xffffffff82a0b000ULL);
                assert_int_equal(a.bp_type, 2);
                assert_int_equal(a.sample_period, 1);
        }

        /* kptr_restrict: every address reads 0. */
        f = fopen(path, "w");
        fputs("0000000000000000 T _stext\n0000000000000000 D jiffies\n", f);
        fclose(f);
        assert_int_equal(kallsyms_lookup(path, "jiffies", &addr), -EPERM);
        unlink(path);
}

int main(void) {
        const char *src = getenv("EVMON_SOURCE_ROOT");
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_attr_matches_perf),
                cmocka_unit_test(test_names),
                cmocka_unit_test(test_errors),
                cmocka_unit_test(test_count_read_times),
                cmocka_unit_test(test_records_side_band),
                cmocka_unit_test(test_pmu),
                cmocka_unit_test(test_pmu_list),
                cmocka_unit_test(test_kallsyms),
        };

        snprintf(fixture_dir, sizeof(fixture_dir), "%s/tests/monitor/fixtures/attr", src ?: ".");
        return cmocka_run_group_tests(tests, NULL, NULL);
}
