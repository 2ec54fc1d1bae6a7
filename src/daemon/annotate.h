/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Who and where, on every event line: the daemon's side of src/context/.
 * An internal dummy event per CPU brings the kernel's COMM (with exec),
 * FORK, EXIT and CGROUP records (and executable MMAP2 ones when an event
 * wants symbols), the sched:sched_process_exec tracepoint the executable's
 * name; the table they keep is seeded from /proc once they flow. */

#include <stdbool.h>

#include "events.h"
#include "evmon/context.h"
#include "evmon/encode-perf.h"
#include "evmon/encode.h"
#include "subscription.h"

struct daemon;

/* The context keys of a line, written once per process and cgroup as
 * they are (their gens) and copied into each line after: escaping the
 * comm, exe and cgroup path per event measured at ~1,400 instructions,
 * more than the rest of the line. Direct-mapped. */
#define CONTEXT_CACHE_SLOTS 256
#define CONTEXT_CACHE_BYTES 1024  /* a Kubernetes line with names fits */

struct context_cache_slot {
        const void *proc, *cgroup, *parent, *state;
        uint64_t proc_gen, cgroup_gen, parent_gen, state_gen;
        size_t len;
        bool valid;
        bool too_long;          /* the keys passed CONTEXT_CACHE_BYTES: written per line */
        char json[CONTEXT_CACHE_BYTES];
};

/* The last sample's context: a process's events come in runs, and while
 * the table stays as it was (context_epoch()) the same pid and cgroup at
 * a time within the incarnations found get the same answer: no lookup
 * of the process, its parent and its cgroup per line. Context costs 245
 * instructions a line with it, 524 without (callgrind, bench-pipeline
 * --context: a process with its parent, outside containers). */
struct context_memo {
        bool valid;
        pid_t pid;
        uint64_t cgroup, epoch;
        const struct ctx_proc *proc, *parent;
        const struct ctx_container *container;
        const struct ctx_runstate_info *state;
        uint64_t state_gen;
        struct encode_context ret;
        const char *container_name, *pod_namespace;     /* its line_meta's */
};

struct daemon_context {
        struct context_memo memo;
        struct context_cache_slot *cache;       /* CONTEXT_CACHE_SLOTS */
        struct jbuf scratch;            /* a slot's keys when their bound passes its size */
        struct context *table;
        struct ctx_runstate *runstate;  /* container names from the runtimes' state; NULL when it failed */
        struct ctx_symbols *symbols;    /* made at the first sample that wants symbols */
        bool symbols_failed;
        int dummy, exec;                /* monitor handles, -1 when not open */
        struct format *exec_format;
        const struct format_field *exec_filename;
        struct ctx_frame *cframes;      /* callchain scratch, cap entries */
        struct encode_frame *frames;
        size_t cap;
        uint64_t *unwound;              /* a DWARF-unwound callchain, UNWOUND_MAX entries */
        char tag_dummy, tag_exec;       /* their sources' userdata */
};

/* Adds the internal events to d->monitor (disabled), when "context" is on.
 * The records of a kernel without PERF_RECORD_CGROUP (before 5.7) are
 * left out, not an error. */
int daemon_context_open(struct daemon *d, char **ret_error);
/* With "context" off: the callchain symbols an event's "symbols" asks for,
 * kernel ones included (kallsyms shows addresses only while evmond still
 * has CAP_SYSLOG, before it drops privileges). */
void daemon_context_open_symbols(struct daemon *d);
/* Enables them, then seeds the table from /proc and the cgroup2 tree. */
int daemon_context_enable(struct daemon *d);
void daemon_context_done(struct daemon *d);

/* Handles a sample or record of an internal event; false when EVENT is a
 * served event's. */
bool daemon_context_sample(struct daemon *d, void *event, const struct perf_sample *s);
bool daemon_context_record(struct daemon *d, void *event, const struct perf_record *r);

/* The context of sample S of EV for its line (*RET) and for subscriptions
 * (META's comm and container). False when context is off. */
bool daemon_context_annotate(struct daemon *d, struct daemon_event *ev, const struct perf_sample *s,
                             struct line_meta *meta, struct encode_context *ret);
/* The names of S's callchain frames when EV wants symbols, else NULL;
 * valid until the next call. Only for a line some client wants. */
/* For EV with "callchain": {"user": "dwarf"}: S with its user frames
 * unwound from its registers and stack (in *COPY), or S as it is. */
const struct perf_sample *daemon_context_unwind(struct daemon *d, struct daemon_event *ev, const struct perf_sample *s,
                                                struct perf_sample *copy);
const struct encode_frame *daemon_context_frames(struct daemon *d, struct daemon_event *ev,
                                                 const struct perf_sample *s);
