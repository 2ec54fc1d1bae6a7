/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <json-c/json.h>

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>
#include <linux/perf_event.h>

#define CONFIG_DEFAULT_PATH "/etc/evmon/evmond.json"
/* 1 MiB per CPU. bench/run on 2 cores: a getppid loop makes ~1.1 M
 * samples/s of 64 bytes; with 64 pages (4.7 ms of samples, woken at a
 * quarter) evmond lost events whenever it waited more than ~3.5 ms for a
 * CPU shared with its client. 256 pages woken at an eighth leave ~13 ms. */
#define CONFIG_DEFAULT_RING_PAGES 256u
/* ring.latency_ms (flush_ms): while records flow, a look every 4 ms. A
 * lone record and a burst's first ring their doorbell and come within
 * ~1 ms whatever this is; this bounds the wait of a steady stream's. At 1
 * ms a steady 1,000 or 10,000 records/s cost ~800 wakeups/s and 2.8-3.4 %
 * of a CPU here, at 2 ms 430/s and 1.3-1.7 %, at 4 ms 225/s and 1.0-1.2 %
 * (bench/run's latency shapes, 2-CPU VM). Idle, nothing looks. */
#define CONFIG_DEFAULT_FLUSH_MS 4u
/* Past ~32,000 records/s looks stretch up to this: hundreds of records per
 * wakeup keep a uprobe-rate capture below perf record's CPU per record. */
#define CONFIG_DEFAULT_BUSY_FLUSH_MS 16u
/* ring.threads: threads that scan the rings at a busy look (reader.c),
 * the loop's own among them. 0 (the default) takes one per
 * CONFIG_RING_CPUS_PER_THREAD online CPUs, at most
 * CONFIG_RING_THREADS_AUTO_MAX: one thread scans some 20 M records/s of
 * events no client wants, and a 16-CPU host writes 28 M; 1 is the loop
 * alone (a 2-CPU host's default). */
#define CONFIG_RING_THREADS_MAX 64u
#define CONFIG_RING_CPUS_PER_THREAD 4u
#define CONFIG_RING_THREADS_AUTO_MAX 8u
/* Only without doorbells: a timer wakeup costs ~50 us of CPU in a VM here,
 * 1% at 200/s, 0.1% at the 20/s of an idle look every 50 ms. */
#define CONFIG_DEFAULT_IDLE_FLUSH_MS 50u

enum event_kind {
        EVENT_TRACEPOINT,
        EVENT_KPROBE,
        EVENT_KRETPROBE,
        EVENT_UPROBE,
        EVENT_URETPROBE,
        /* Any perf event (attr.h), in attr_kind's order. */
        EVENT_SOFTWARE,
        EVENT_HARDWARE,
        EVENT_CACHE,
        EVENT_RAW,
        EVENT_BREAKPOINT,
        EVENT_PMU,
        _EVENT_KIND_MAX,
};

#define CONFIG_DEFAULT_COUNTER_INTERVAL_MS 1000u

/* "order": "time": how long a record may still be overtaken by one of
 * another CPU with an earlier time (taken by the kernel, not yet in its
 * ring), so held back when no ring has anything newer. At most flush_ms.
 * See src/daemon/reader.c and README ("order"). */
#define CONFIG_ORDER_HOLD_USEC 200u

static inline bool event_kind_is_perf(enum event_kind k) {
        return k >= EVENT_SOFTWARE && k < _EVENT_KIND_MAX;
}

struct event_config;
static inline bool event_config_has_attr(const struct event_config *e);

struct event_config {
        enum event_kind kind;
        char *wire_name;        /* "sched:sched_process_exec", "kprobe:open" */
        char *system;           /* tracepoint system, or the probe kind's name */
        char *name;             /* tracepoint or probe name */
        char *target;           /* probes: SYMBOL[+OFF], PATH:SYMBOL[+OFF], ... */
        char **fetch;           /* probes: "NAME=FETCHARG", NULL-terminated, may be NULL */
        char *filter;           /* ftrace filter or NULL */
        char *where;            /* "FILE:LINE: events[N].KIND" for messages */
        char *filter_where;     /* "FILE:LINE: events[N].filter" */
        /* Perf event kinds, and trace events with perf options
         * (perf_options): the attr built from the entry's options at
         * parse time (the daemon adds what only it chooses; a trace
         * event's type and config once tracefs is read). */
        struct perf_event_attr attr;
        bool perf_options;      /* a trace event with perf options: attr holds them */
        bool count;             /* "count": true: read every counters.interval_ms, no samples */
        char *group;            /* "group": entries sharing it form one perf group, or NULL */
        bool symbols;           /* "symbols": true: name the callchain's frames */
        bool dwarf;             /* "callchain": {"user": "dwarf"}: user frames unwound by evmond */
};

/* Whether E's attr is what is opened: a perf event's always, a trace
 * event's when it has perf options (else the monitor's default attr). */
static inline bool event_config_has_attr(const struct event_config *e) {
        return event_kind_is_perf(e->kind) || e->perf_options;
}

/* socket.admin_add: what a member of socket.admin_group who is not root
 * may `add` at run time. Adding a probe with fetch-args reads any
 * process's memory (uprobes) or the kernel's (kprobes) as root does, so
 * without this key such a member adds nothing. */
struct admin_add {
        unsigned kinds;         /* bit (1 << enum event_kind) per kind allowed; 0: none */
        char **paths;           /* fnmatch(3) patterns of uprobe binaries (real paths); NULL: none */
        bool fetch;             /* fetch-args, stack_user, regs_user, regs_intr */
};

struct config {
        char *path;             /* file name, or "<built-in default>" */
        char *socket_path;
        mode_t socket_mode;
        char *socket_group;
        char *socket_admin_group;   /* may reload (and control) evmond beside root; NULL: root only */
        struct admin_add admin_add; /* socket.admin_add */
        unsigned ring_pages;
        unsigned flush_ms;      /* while samples arrive, deliver within this long */
        unsigned busy_flush_ms; /* ... stretched up to this while they pour in */
        unsigned idle_flush_ms; /* without doorbells: the reader's longest sleep once the rings are quiet */
        unsigned ring_threads;  /* threads that scan the rings (the loop's among them); 0: by the CPUs */
        bool doorbell;          /* wake at the first record after a quiet spell (monitor doorbells) */
        clockid_t clockid;
        char *clock_name;
        unsigned max_clients;
        unsigned max_clients_per_uid;   /* for uids other than root and socket.admin_group's */
        size_t client_queue_bytes;
        char **cgroups;         /* NULL-terminated or NULL */
        char **cgroups_where;   /* "FILE:LINE: targets.cgroups[N]", beside cgroups */
        pid_t *pids;
        size_t n_pids;
        /* targets.containers and targets.namespaces: matched in evmond on
         * each line's context (NULL-terminated or NULL: any). */
        char **target_containers;
        char **target_namespaces;
        struct event_config *events;
        size_t n_events;
        unsigned counter_interval_ms;   /* counters.interval_ms */
        bool context;           /* "context": process and container keys on event lines (default true) */
        bool order_time;        /* "order": "time" (default): lines in ts order across CPUs; "arrival": as read */
        bool self;              /* "self": true: evmond's own activity and its clients' stay in (default false) */
        char *metrics_path;             /* metrics.path; NULL: no metrics file */
        unsigned metrics_interval_ms;   /* metrics.interval_ms */
};

/* The most entries targets.containers or targets.namespaces may hold
 * (a subscribe's REQUEST_LIST_MAX): each is tried on every event. */
#define TARGETS_CONTEXT_MAX 64u

const char *event_kind_to_string(enum event_kind k);
/* Whether the kernel stamps every event with CLOCK (monotonic and
 * monotonic_raw are NMI-safe), and whether events of kind K take any
 * clock (software events do; tracepoints, probes, breakpoints, hardware
 * events take the NMI-safe ones only). */
bool config_clock_nmi_safe(clockid_t clock);
bool event_kind_takes_any_clock(enum event_kind k);

/* Parses config TEXT read from PATH. On failure returns -EINVAL and sets
 * *ret_error to one message naming the file, line and key (caller frees). */
int config_parse(const char *text, const char *path, struct config **ret, char **ret_error);

/* Reads and parses PATH; PATH NULL means the default file, or the built-in
 * default config when that file does not exist. */
int config_load(const char *path, struct config **ret, char **ret_error);

struct config *config_free(struct config *c);

/* One event entry O outside a file (runtime control): parsed and checked
 * as events[IDX] of a config; messages start with FILE. */
int config_parse_entry(json_object *o, size_t idx, const char *file, struct event_config *ret, char **ret_error);
/* Deep copies, for a config changed at run time. config_copy() leaves
 * room for EXTRA more events in (*ret)->events. */
int event_config_copy(const struct event_config *src, struct event_config *ret);
void event_config_clear(struct event_config *e);
int config_copy(const struct config *src, size_t extra, struct config **ret);

/* The built-in default: exec, exit and fork system-wide. */
extern const char config_builtin[];

#include "evmon/cleanup.h"
#include "evmon/protocol.h"
DEFINE_TRIVIAL_CLEANUP_FUNC(struct config *, config_free);
