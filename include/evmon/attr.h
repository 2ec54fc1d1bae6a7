/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* src/monitor/attr.c, pmu.c: event specs -> struct perf_event_attr, for
 * every kind of perf event and every option a user may set, with perf's
 * names and meanings (tools/perf/util/parse-events.c, perf_event_open(2)).
 * Pure: reads sysfs PMU directories and kallsyms under the roots it is
 * given, opens nothing. Functions return 0 or -errno and never print. */

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum attr_kind {
        ATTR_SOFTWARE,
        ATTR_HARDWARE,
        ATTR_CACHE,
        ATTR_RAW,
        ATTR_BREAKPOINT,
        ATTR_PMU,
        _ATTR_KIND_MAX,
};

/* "software", "hardware", "cache", "raw", "breakpoint", "pmu". */
const char *attr_kind_to_string(enum attr_kind k);
/* -EINVAL for another name. */
int attr_kind_from_string(const char *s, enum attr_kind *ret);

/* Where the environment is: NULL fields (or a NULL env) mean the real
 * /sys/bus/event_source/devices and /proc/kallsyms. */
struct attr_env {
        const char *pmu_root;
        const char *kallsyms;
};

/* An event as a config entry gives it. Name lists are NULL-terminated (or
 * NULL: not given). Zero values mean "not given" except where has_* says. */
struct attr_spec {
        enum attr_kind kind;
        /* A trace event (tracepoint, kprobe, uprobe): kind and name are
         * unused, and type and config are the caller's (the tracepoint id
         * or the probe PMU's, known once tracefs is read). It samples
         * every hit unless period or freq say otherwise, carries RAW
         * (its format fields) always, and only the fields "sample" names
         * beside it, not perf record's IP and PERIOD. */
        bool trace;
        const char *name;               /* "cpu-clock", "L1-dcache-load-misses", "0x1a2",
                                         * "0xffff...", "jiffies", "msr/tsc/" */
        const char *access;             /* breakpoint: "r", "w", "rw", "x" (default "rw") */
        unsigned len;                   /* breakpoint: 1, 2, 4, 8 (default 4; 8 for "x") */

        bool count;                     /* counting only: no sample period */
        uint64_t period;                /* sample every PERIOD events */
        uint64_t freq;                  /* or FREQ samples a second */
        const char *const *sample;      /* PERF_SAMPLE_* names, lower case */
        const char *const *read;        /* PERF_FORMAT_* names */
        bool callchain;                 /* PERF_SAMPLE_CALLCHAIN */
        unsigned max_stack;             /* 0: the kernel's default */
        bool callchain_no_kernel, callchain_no_user;
        /* User frames by DWARF unwinding (perf --call-graph dwarf): the
         * kernel's callchain without user frames, and the user registers
         * and DWARF_STACK bytes of stack (default 8192) for the unwinder. */
        bool callchain_dwarf;
        uint32_t dwarf_stack;
        const char *const *regs_user;   /* register names (x86_64) */
        const char *const *regs_intr;
        uint32_t stack_user;            /* bytes of user stack per sample */
        const char *const *branch;      /* branch_sample_type names */
        unsigned precise_ip;            /* 0..3 */
        const char *const *exclude;     /* "user", "kernel", "hv", "idle", "host", "guest" */
        bool inherit, inherit_thread, pinned, exclusive, enable_on_exec, remove_on_exec;
        const char *const *records;     /* "mmap", "comm", ... (side records) */
        bool has_config1, has_config2, has_config3;
        uint64_t config1, config2, config3;
};

/* What attr_from_spec() found wrong: KEY is the spec's key ("name",
 * "sample", "regs_user", ...), VALUE the offending name or NULL, REASON a
 * static text. */
struct attr_error {
        const char *key;
        const char *value;
        const char *reason;
};

/* Builds *RET from SPEC. Only what the spec says is set; the caller adds
 * what it alone chooses (clock, wakeups, sample_id_all, IDENTIFIER,
 * disabled). Without period or freq a sampling event gets perf record's
 * default (freq 4000), a breakpoint and a trace event period 1. -EINVAL with *RET_ERROR
 * filled for a bad spec, -ENOENT for a name not found (PMU, event, symbol),
 * or an I/O error reading sysfs or kallsyms. */
int attr_from_spec(const struct attr_spec *spec, const struct attr_env *env,
                   struct perf_event_attr *ret, struct attr_error *ret_error);

/* Name tables, for parsers and for listing. Each returns the bit (or
 * register index) of NAME, or -EINVAL. */
int attr_sample_bit(const char *name, uint64_t *ret);
int attr_read_bit(const char *name, uint64_t *ret);
int attr_branch_bit(const char *name, uint64_t *ret);
int attr_reg_index(const char *name, unsigned *ret);       /* x86_64's perf_event_x86_regs */
const char *attr_reg_name(unsigned index);                 /* NULL past the last */
const char *attr_sample_name(uint64_t bit);                /* NULL for an unknown bit */

/* The kind's event names (software, hardware, cache in perf's canonical
 * spelling), NULL-terminated, static. Empty for raw, breakpoint, pmu. */
const char *const *attr_event_names(enum attr_kind k);

/* ---- pmu.c: dynamic PMUs from sysfs ----------------------------------- */

/* Resolves perf's PMU syntax "PMU/term[=value],.../" (terms: the PMU's
 * format/ fields, its events/ aliases, config, config1, config2, config3,
 * period, freq) under ROOT (NULL: /sys/bus/event_source/devices) into
 * ATTR's type and config words (and sample_period/freq if given). -ENOENT
 * for an unknown PMU, -EINVAL with *RET_REASON for a bad term. */
int pmu_resolve(const char *root, const char *spec, struct perf_event_attr *attr,
                const char **ret_reason);

/* Calls FN for each PMU under ROOT (NULL: the real one) with its type and
 * each of its named events ("tsc"), or event NULL once per PMU with none.
 * Sorted by PMU, then event. Stops at FN's negative return. */
typedef int (*pmu_event_fn)(const char *pmu, uint32_t type, const char *event, void *userdata);
int pmu_foreach_event(const char *root, pmu_event_fn fn, void *userdata);
