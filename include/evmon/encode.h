/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The wire protocol's lines (src/encode/): every line type evmond and
 * evmonctl write is built here, named as include/evmon/protocol.h names
 * it. Event lines (encode.c) are the hot path: compiled once per event
 * format, written without allocation; sample fields and records are in
 * evmon/encode-perf.h, perf.data's own lines in evmon/encode-perfdata.h.
 * The control lines (lines.c) are rare and built with json-c. Each
 * function appends one line ending in '\n' to B and returns 0 or -errno
 * (-ENOMEM); on failure B's length is unchanged. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "evmon/json.h"
#include "evmon/monitor.h"
#include "evmon/tracefs.h"

/* ---- event lines ------------------------------------------------------- */

/* One event format compiled for output: the pre-escaped line prefix and
 * field keys, and the constants of the worst-case line size. */
struct encoder;

/* Compiles FMT for lines naming EVENT_NAME ("sched:sched_process_exec").
 * FMT must outlive the encoder (its fields are referenced, not copied).
 * FMT NULL (an event that is no trace event: software, hardware, PMU)
 * gives lines without "fields" whose raw data, if any, is in "sample".
 * -EINVAL for a field of unknown kind, -ENOMEM. The caller owns *ret. */
int encoder_new(const char *event_name, const struct format *fmt, struct encoder **ret);
struct encode_ids;
/* Which PERF_SAMPLE_* bits of a sample its "sample" object shows (those
 * of ENCODE_SAMPLE_TOP never are). By default every bit, but RAW when the
 * encoder has a format; the daemon leaves out what it asked the kernel
 * for its own use (such as CGROUP for cgroup targets). */
void encoder_set_sample_show(struct encoder *e, uint64_t sample_show);
/* How read values' ids are named (copied; NULL: ids only). */
void encoder_set_ids(struct encoder *e, const struct encode_ids *ids);
struct encoder *encoder_free(struct encoder *e);
const struct format *encoder_format(const struct encoder *e);

static inline void encoder_freep(struct encoder **e) {
        encoder_free(*e);
}

/* Appends one line, ending in '\n', for sample S (its raw payload decoded
 * with E's format):
 *   {"type":"event","event":NAME,"time":...,"ts":N,"cpu":N,"pid":N,"tid":N,"fields":{...}}
 * "time"/"ts" appear when S has PERF_SAMPLE_TIME ("time" is s->time +
 * REALTIME_OFFSET_NS), "cpu" with PERF_SAMPLE_CPU, "pid"/"tid" with
 * PERF_SAMPLE_TID. "fields" holds the non-common fields (no "fields"
 * without a format), then ,"sample":{...} the other PERF_SAMPLE_* fields
 * encoder_set_sample_show() selects (encode_sample_put()).
 * Returns 0; -EBADMSG when a field does not decode (the line is not
 * written, b->len and the bytes before it are unchanged: the caller counts
 * it); -ENOMEM. */
int encode_event(struct jbuf *b, const struct encoder *e, const struct perf_sample *s,
                 int64_t realtime_offset_ns);

/* The PERF_SAMPLE_* bits E's "sample" object shows (encoder_set_sample_show()). */
uint64_t encoder_sample_show(const struct encoder *e);

/* ---- schema lines (schema.c) ------------------------------------------- */

/* {"type":"schema","event":EVENT,"fields":[…],"print_unknown":N}: what the
 * event lines of EVENT carry. One entry per non-common field of FMT (with
 * "in":"fields": name, C type, kind, offset, size, signed, elem_size for
 * arrays, and "symbols", the print fmt's tables for it), then one per
 * PERF_SAMPLE_* bit of SAMPLE_FIELDS beyond the top-level ones ("in":
 * "sample": name, PERF_SAMPLE_ name, kind). FMT NULL: a perf event, sample
 * fields only, no print_unknown. 0 or -ENOMEM (B unchanged then). */
int encode_schema(struct jbuf *b, const char *event, const struct format *fmt, uint64_t sample_fields);

/* Who and where (src/context/ knows; the daemon hands it over): each
 * member NULL or negative when not known, and then left out. */
struct encode_context {
        const char *comm;               /* with exe, ppid, uid: "proc":{…} */
        const char *exe;
        int64_t ppid, uid;
        const char *cgroup;             /* "cgroup":"/…" */
        const char *container;          /* "container":"…" */
        int64_t container_uid;          /* "container_uid":N, a rootless one's; -1: none */
        const char *pod;                /* "pod":"…", the Kubernetes pod uid */
        const char *pcomm;              /* the parent's comm: "proc":{…,"pcomm":…} */
        /* "container_info":{"runtime","name","image","image_id","pod":{"name",
         * "namespace","uid","container"},"verified"} after "container" when
         * runtime is not NULL: what the runtime's state says (NULL: not known). */
        const char *runtime, *name, *image, *image_id;
        const char *pod_name, *pod_namespace, *pod_container;
        bool verified;
        /* When not NULL: the keys above already written by
         * encode_context_put() (JSON_LEN bytes), copied as they are. */
        const char *json;
        size_t json_len;
};

/* Worst-case bytes encode_context_put() writes for C. */
size_t encode_context_max(const struct encode_context *c);
/* Writes C's keys (,"proc":{…},"cgroup":…,"container":…,"container_uid":…,"pod":…; nothing
 * for what is not known) at P, which has encode_context_max() bytes;
 * returns the new end. */
char *encode_context_put(char *p, const struct encode_context *c);

struct encode_frame;

/* encode_event() with, when not NULL, CTX's keys after "tid"
 * (,"proc":{"comm":…,"exe":…,"ppid":N,"uid":N},"cgroup":…,"container":…,
 * "pod":…) and FRAMES (s->callchain.nr entries) naming the callchain's
 * addresses ("syms" beside each segment's "ips"). */
int encode_event_ext(struct jbuf *b, const struct encoder *e, const struct perf_sample *s,
                     int64_t realtime_offset_ns, const struct encode_context *ctx,
                     const struct encode_frame *frames);
/* encode_event_ext() showing SHOW_MORE's bits of S beside those
 * encoder_set_sample_show() selected: ENCODE_SAMPLE_STACK_DATA
 * (evmon/encode-perf.h) for the user stack's bytes. */
int encode_event_show(struct jbuf *b, const struct encoder *e, const struct perf_sample *s,
                      int64_t realtime_offset_ns, const struct encode_context *ctx,
                      const struct encode_frame *frames, uint64_t show_more);
/* encode_event_ext() with no context and no frames, and in
 * *RET_CONTEXT_AT where in the line (from its first byte) a context's
 * keys go: the line with context C is its bytes up to there,
 * encode_context_put(C), and the rest (encode_event_splice()). A line
 * encoded apart from what gives its context (evmond's reader threads). */
int encode_event_split(struct jbuf *b, const struct encoder *e, const struct perf_sample *s,
                       int64_t realtime_offset_ns, size_t *ret_context_at);
/* LINE (of LEN bytes, from encode_event_split()) with C's keys at
 * CONTEXT_AT, appended to B. */
int encode_event_splice(struct jbuf *b, const char *line, size_t len, size_t context_at,
                        const struct encode_context *c);

/* {"type":"lost","cpu":N,"count":N}\n */
int encode_lost(struct jbuf *b, int cpu, uint64_t count);
/* {"type":"dropped","count":N}\n, with "lost":LOST when LOST > 0 */
int encode_dropped(struct jbuf *b, uint64_t count, uint64_t lost);

/* A counting event's line ("count": true), as perf stat -I prints it:
 * one entry per CPU (or target) read, and their sums. */
struct encode_counter_cpu {
        int cpu;
        uint64_t value, enabled, running;
};
struct encode_counter {
        const char *event;
        const char *group;            /* NULL: not in a group */
        uint64_t ts;                  /* the event clock's time of the read */
        int64_t realtime_offset_ns;   /* ts + this = CLOCK_REALTIME, for "time" */
        uint64_t value, delta, enabled, running;
        uint64_t scaled;              /* value as if it had run all the time it was enabled */
        const struct encode_counter_cpu *cpus;
        size_t n_cpus;
};
/* {"type":"counter","event":…,"time":…,"ts":…,"value":…,"delta":…,
 *  "enabled":…,"running":…,"scaled":…,"group":…,"cpus":[{"cpu","value",
 *  "enabled","running"},…]}\n */
int encode_counter(struct jbuf *b, const struct encode_counter *c);

/* {"type":"gap","cpu":CPU,"reason":REASON,"since":…,"since_ts":SINCE,
 *  "time":…,"ts":TS}\n: nothing of CPU was captured from SINCE to TS
 * (event-clock ns; REALTIME_OFFSET_NS turns them into "since" and "time"). */
int encode_gap(struct jbuf *b, int cpu, const char *reason, uint64_t since, uint64_t ts, int64_t realtime_offset_ns);

/* ---- control lines (lines.c) ----------------------------------------- */

/* {"type":"hello","version":EVMON_PROTOCOL_VERSION,"events":[EVENTS...],
 * "start":TIME,"client":N}: START_NS is when evmond started (CLOCK_REALTIME
 * ns; 0 leaves "start" out), CLIENT the connection's number since then
 * (0 leaves it out). Together they name this connection's lines for good,
 * as evmon-forward's Nats-Msg-Id does. */
int encode_hello(struct jbuf *b, const char *const *events, size_t n_events, uint64_t start_ns, uint64_t client);

/* {"type":"subscribed","events":[...]} and, when given (not NULL),
 * "pids":[...] and "cgroups":[...] as the client sent them. */
int encode_subscribed(struct jbuf *b, const char *const *events, size_t n_events,
                      const pid_t *pids, size_t n_pids,
                      const char *const *cgroups, size_t n_cgroups);

/* {"type":"error","error":MESSAGE} */
int encode_error(struct jbuf *b, const char *message);

/* {"type":"config","events":[...]}: the event list after a reload, sent
 * to every client. */
int encode_config(struct jbuf *b, const char *const *events, size_t n_events);

/* {"type":"probe","event":…,"status":"attached"|"symbol_missing"|"failed"|
 * "refused"|"detached","path":…,"inode":N[,"uid":N],"build_id":"hex"|null,
 * "attached":N[,"error":…]}: a uprobe's file was replaced at its path;
 * what became of the probe. */
struct encode_probe {
        const char *event, *path, *status, *build_id, *error;
        uint64_t inode;
        int64_t uid;            /* the file's owner; < 0: not said */
        size_t attachments;     /* the files the probe is in now */
};
int encode_probe(struct jbuf *b, const struct encode_probe *p);

/* {"type":"reload","ok":OK[,"error":ERROR],"events":[...]}: the answer to
 * a client's reload. */
int encode_reload(struct jbuf *b, bool ok, const char *error, const char *const *events, size_t n_events);

/* {"type":"result","request":REQUEST,"ok":true,"events":[...]}: a
 * runtime-control request applied, and the events it touched. */
int encode_result(struct jbuf *b, const char *request, const char *const *events, size_t n_events);

/* What {"type":"status"} reports. */
struct encode_status_event {
        const char *event;
        uint64_t count, undecodable;
        bool runtime;           /* added or changed at run time: "runtime":true */
        bool disabled;          /* disabled at run time: "enabled":false */
        /* uprobes that followed their binary: "files":N when above 1, and
         * "missing": why the file at the path now is not probed */
        size_t files;
        const char *missing;
};

struct encode_status_cpu {
        int cpu;
        uint64_t lost, malformed;
        bool offline;                   /* its events are not open now ("offline": true) */
        uint64_t gaps;                  /* gap lines sent for it ("gaps": N when above 0) */
};

struct encode_status_client {
        uint64_t id;
        pid_t pid;
        uid_t uid;
        uint64_t queued_bytes, lines, dropped;
};

struct encode_status_context {
        uint64_t procs, retired, cgroups, strings, string_bytes;
        uint64_t hits, misses, first_sight, full;
        uint64_t bound_bytes;
        bool containers;                /* the runtimes' state is read: the counts below */
        uint64_t ctr_known, ctr_verified, ctr_unverified, ctr_reads, ctr_refused, ctr_evicted;
        bool symbols;                   /* the symbol caches below are in use */
        uint64_t sym_modules, sym_procs, sym_named, sym_unnamed;
        uint64_t sym_cache_bytes, sym_helper_starts, sym_helper_timeouts, sym_helper_crashes, sym_refused;
        uint64_t sym_unwound, sym_unwind_skipped;
};

struct encode_status {
        const char *config;             /* the config file's path */
        const char *probe_group;
        double uptime_s;
        const struct encode_status_event *events;
        size_t n_events;
        const struct encode_status_cpu *cpus;
        size_t n_cpus;
        /* "ring": what the rings run with now, and how they were read */
        unsigned ring_pages, flush_ms, busy_flush_ms, idle_flush_ms;
        bool doorbell;
        uint64_t doorbell_rings, doorbell_rests, early_bells, ticks, swept, flushed;
        unsigned ring_threads;          /* reader threads, the loop's among them */
        uint64_t scans, scanned, encoded;
        /* "order": "time" or "arrival"; in time order the hold, records
         * handed out after a later one, the longest seen in flight, and
         * the release timer's wakeups */
        bool order_time;
        unsigned order_hold_us;
        uint64_t order_late, order_in_flight_max_ns, order_releases;
        const struct encode_status_client *clients;
        size_t n_clients;
        /* "context": the process table (NULL: context is off) */
        const struct encode_status_context *context;
        /* "closing": removed events' closes and probe removals the worker
         * thread has yet to do (async.h), and the fds they hold */
        uint64_t closing_jobs, closing_fds;
};

/* {"type":"status","config":…,"probe_group":…,"uptime_s":…,"events":[…],
 *  "cpus":[…],"ring":{…},"order":{…},"clients":[…],"closing":{…}} */
int encode_status(struct jbuf *b, const struct encode_status *st);

/* Requests a client writes: {"type":TYPE} (EVMON_REQUEST_STATUS, _RELOAD)
 * and {"type":"subscribe","events":[EVENTS...]}. */
int encode_request(struct jbuf *b, const char *type);
/* A runtime-control request of TYPE (add, remove, enable, disable,
 * filter): {"type":TYPE} with "event" (ENTRY, a JSON object's text, for
 * add; EVENT, a name, otherwise), "filter" and "events" where given.
 * -EINVAL when ENTRY is not JSON. */
int encode_control(struct jbuf *b, const char *type, const char *entry, const char *event, const char *filter,
                   const char *const *events, size_t n_events);
int encode_subscribe(struct jbuf *b, const char *const *events, size_t n_events);
/* The config entry that serves the event named NAME, as `evmonctl add`
 * takes it: {"tracepoint":"sched:sched_switch"}, {"software":"cpu-clock"},
 * {"pmu":"msr/tsc/"} ..., into BUF (SIZE bytes). -EINVAL when the name
 * alone does not say (a probe wants its target, a pattern names no one
 * event) or holds a byte other than [A-Za-z0-9_.:/-] (it is put in a
 * shell command), -ENOBUFS when BUF is too small. */
int encode_add_entry(const char *name, char *buf, size_t size);
/* The same with "containers" (ids, their first digits or names) and
 * "namespaces" where given (N > 0), without "events" when EVENTS is NULL. */
int encode_subscribe_context(struct jbuf *b, const char *const *events, size_t n_events,
                             const char *const *containers, size_t n_containers,
                             const char *const *namespaces, size_t n_namespaces);
/* The same with "pids" and "cgroups" where PIDS and CGROUPS are given,
 * and without "events" when EVENTS is NULL (every event). */
int encode_subscribe_targets(struct jbuf *b, const char *const *events, size_t n_events,
                             const pid_t *pids, size_t n_pids,
                             const char *const *cgroups, size_t n_cgroups);

/* A subscribe with every key a client may give: each list only where
 * its pointer is not NULL ("events" NULL: every event), "self" only when
 * true, "client" and "filter" where given. */
struct encode_subscribe {
        const char *const *events;
        size_t n_events;
        const pid_t *pids;
        size_t n_pids;
        const char *const *cgroups, *const *comms, *const *containers, *const *namespaces;
        size_t n_cgroups, n_comms, n_containers, n_namespaces;
        bool self;
        const char *client;
        const char *filter;           /* the subscription's own filter (evmond's linefilter.c) */
};
int encode_subscribe_full(struct jbuf *b, const struct encode_subscribe *s);

/* ---- evmon-forward's own lines (doc/protocol.md "evmon-forward") ---- */

/* {"type":"forwarder","event":EVENT,"time":TIME,"socket":SOCKET,
 *  "detail":DETAIL,"dropped_total":N}\n: what happened to its connection
 * to evmond (REALTIME_NS: when); "detail" only where DETAIL is given. */
int encode_forwarder(struct jbuf *b, const char *event, uint64_t realtime_ns, const char *socket,
                     const char *detail, uint64_t dropped_total);
/* {"type":"dropped","count":COUNT,"source":"evmon-forward"}\n: lines its
 * buffer had to drop. */
int encode_forwarder_dropped(struct jbuf *b, uint64_t count);
