/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The per-record handlers of the hot path, in one file: the ring reader
 * (reader.c) drains the rings and calls these for each sample, loss and
 * side record; they count, annotate (annotate.c), match against the
 * subscriptions and encode into the daemon's one line buffer, then hand
 * the line to the server. Before a busy merge, the reader threads' scan
 * (scan_sample()) counts what no client wants and encodes the rest but
 * its context, which the merge splices in (on_noted()). Nothing here
 * allocates per record. They live apart from reader.c, which decides
 * when rings are read (doorbells, ticks, the time merge), not what a
 * record becomes. */

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "emit.h"
#include "perfout.h"
#include "evmon/encode-perf.h"
#include "evmon/encode.h"
#include "server.h"

/* Whether the config names targets.containers or targets.namespaces,
 * which a line's context decides (in_scope()). */
static inline bool scope_needs_context(const struct daemon *d) {
        return _unlikely_(d->config->target_containers || d->config->target_namespaces);
}

/* Whether M's context is in those targets (always, when there are none). */
static inline bool in_scope(const struct daemon *d, const struct line_meta *m) {
        return !scope_needs_context(d) ||
               subscription_context_matches(d->config->target_containers, d->config->target_namespaces, m);
}

struct frames_args {
        struct daemon *d;
        struct daemon_event *ev;
        const struct perf_sample *s;
};

static const struct encode_frame *agg_frames(void *userdata) {
        struct frames_args *f = userdata;

        return daemon_context_frames(f->d, f->ev, f->s);
}

/* The sample folded into the aggregating clients' tables: no line. */
static void aggregate(struct daemon *d, struct daemon_event *ev, const struct perf_sample *s,
                      const struct line_meta *meta, const struct encode_context *ec) {
        struct frames_args fa = { d, ev, s };
        const struct agg_sample as = {
                .idx = ev->index,
                .pid = s->pid,
                .tid = s->tid,
                .cpu = s->cpu,
                .time = s->time,
                .cgroup_id = s->cgroup,
                .raw = s->raw.data,
                .raw_size = s->raw.size,
                .n_ips = s->sample_type & PERF_SAMPLE_CALLCHAIN ? s->callchain.nr : 0,
                .ips = s->callchain.ips,
                .comm = ec ? ec->comm : NULL,
                .exe = ec ? ec->exe : NULL,
                .cgroup = ec ? ec->cgroup : NULL,
                .container = ec ? ec->container : NULL,
                .uid = ec ? ec->uid : -1,
                .frames = agg_frames,
                .userdata = &fa,
        };

        server_aggregate(d->server, meta, &as);
}

/* The sample as the kernel wrote it, to the perf clients just matched.
 * A probe the PMU made has a trace event id only the kernel knows in its
 * common_type: the copy carries the id its format has in the stream
 * (perfout.c), or perf finds no format for it. */
static void perf_deliver(struct daemon *d, struct daemon_event *ev, const struct perf_sample *s) {
        const struct perf_event_header *h = s->header;
        size_t off;
        uint16_t id;

        if (ev->pmu.type == 0 || !ev->format || !s->raw.data || s->raw.size < sizeof(id)) {
                server_deliver(d->server, (const char *) h, h->size);
                return;
        }
        d->line.len = 0;
        if (jbuf_reserve(&d->line, h->size) < 0)
                return;
        jbuf_put_bytes(&d->line, h, h->size);
        off = (size_t) ((const char *) s->raw.data - (const char *) h);
        id = daemon_perf_pmu_id(ev->index);
        memcpy(d->line.data + off, &id, sizeof(id));
        server_deliver(d->server, d->line.data, d->line.len);
}

/* Whether S is evmond's own activity or one of its clients': by its pid,
 * and the task fields of a sched: event (a switch to a client is the
 * client's as much as one from it). The kernel filter (events.c) already
 * left evmond's own pid out of trace events; perf events have no filter. */
static bool sample_is_self(struct daemon *d, const struct daemon_event *ev, const struct perf_sample *s) {
        if (server_is_self(d->server, (pid_t) s->pid))
                return true;
        for (unsigned i = 0; i < ev->n_self_offs; i++) {
                int32_t v;

                if ((uint64_t) ev->self_offs[i] + sizeof(v) > s->raw.size)
                        continue;
                memcpy(&v, (const uint8_t *) s->raw.data + ev->self_offs[i], sizeof(v));
                if (v > 0 && server_is_self(d->server, (pid_t) v))
                        return true;
        }
        return false;
}

/* The line of S for the clients just matched, some of which asked for
 * the user stack's bytes ("stack_bytes"): they get a second variant of
 * the line with the bytes (base64) and the registers that go with them,
 * the others the line as always. A line is stored once for every client
 * that takes it (lines.c), so the bytes cannot be left out per client:
 * either every client took up to 87 KiB of base64 a sample (a stream of
 * 1 kHz samples at 8 KiB of stack is some 11 MB/s, against its queue
 * bound), or the variants are two. Two, and the second encoded only when
 * a matching client asked: the common line costs what it did. Both go
 * into the one line buffer, one after the other: nothing allocated. */
static void stack_bytes_deliver(struct daemon *d, struct daemon_event *ev, const struct perf_sample *s,
                                const struct encode_context *ec, const struct encode_frame *frames, size_t n_bytes) {
        size_t plain_len = 0;
        int r;

        if (server_n_matched(d->server) > n_bytes) {
                if (encode_event_ext(&d->line, ev->encoder, s, d->realtime_offset, ec, frames) < 0) {
                        ev->bad++;
                        return;
                }
                plain_len = d->line.len;
        }
        /* evmond's DWARF unwinding keeps the registers and stack off the
         * line (events.c); a client that asked for the bytes gets both. */
        r = encode_event_show(&d->line, ev->encoder, s, d->realtime_offset, ec, frames,
                              ENCODE_SAMPLE_STACK_DATA | PERF_SAMPLE_STACK_USER | PERF_SAMPLE_REGS_USER);
        if (r == -ENOMEM) {
                /* Lost for those clients alone, counted as their drop;
                 * the others still get theirs. */
                server_deliver_stack_bytes(d->server, n_bytes, d->line.data, plain_len, NULL, 0);
                return;
        }
        if (r < 0) {
                /* A field that does not decode: the plain line did
                 * not either, so none was tried. */
                ev->bad++;
                return;
        }
        server_deliver_stack_bytes(d->server, n_bytes, d->line.data, plain_len, d->line.data + plain_len,
                                   d->line.len - plain_len);
}

/* What a reader thread encoded of a sample (SCAN_LINE): its line without
 * context, which goes at CONTEXT_AT (encode_event_split()). */
struct pre_line {
        const char *data;
        size_t len, context_at;
};

/* Sample S of EVENT to the clients that take it, its line encoded here,
 * or, with PRE, spliced from what a reader thread encoded of it. */
static void sample_emit(void *event, int cpu, const struct perf_sample *s, void *ctx, const struct pre_line *pre) {
        struct daemon *d = ctx;
        struct daemon_event *ev = event;
        const struct perf_sample *s0 = s;
        struct line_meta meta;
        struct encode_context ec;
        const struct encode_frame *frames = NULL;
        size_t n_clients, n_perf, n_bytes;
        struct perf_sample unwound;
        bool has_ctx;

        /* The context's own events (annotate.c) are no served event. */
        if (daemon_context_sample(d, event, s))
                return;
        meta = (struct line_meta) {
                .idx = ev->index,
                .pid = (pid_t) s->pid,
                .cgroup = s->cgroup,
                .schema = ev->schema.data,
                .schema_len = ev->schema.len,
                .schema_gen = ev->schema_gen,
                .sample = s,
                .format = ev->format,
        };
        ev->count++;
        n_clients = server_n_clients(d->server);
        /* Work no client wants is not done: no context, no match. */
        if (n_clients == 0 || !server_wants_event(d->server, ev->index))
                return;
        if (!d->config->self)
                meta.self = sample_is_self(d, ev, s);
        /* "format":"perf" clients take the record as it is: no decoding,
         * no JSON, and no context unless one of them (or the config's
         * targets.containers and namespaces) selects by it. */
        n_perf = server_n_perf(d->server);
        if (n_perf > 0 && !server_perf_wants_context(d->server) && !scope_needs_context(d)) {
                if (server_match_perf(d->server, &meta) > 0)
                        perf_deliver(d, ev, s);
                if (n_perf == n_clients)
                        return;
                n_perf = 0;
        }
        has_ctx = daemon_context_annotate(d, ev, s, &meta, &ec);
        if (!in_scope(d, &meta))
                return;
        /* "user": "dwarf": the user frames, for an aggregate's stack
         * keys as for the line; unwound once, and only when wanted. */
        if (server_n_aggregating(d->server) > 0) {
                s = daemon_context_unwind(d, ev, s, &unwound);
                aggregate(d, ev, s, &meta, has_ctx ? &ec : NULL);
        }
        /* The record as the kernel wrote it (a copy with unwound
         * frames points at the same record). */
        if (n_perf > 0 && server_match_perf(d->server, &meta) > 0)
                perf_deliver(d, ev, s);
        if (server_n_streaming(d->server) == 0 || server_match(d->server, &meta) == 0)
                return;
        if (s != &unwound)
                s = daemon_context_unwind(d, ev, s, &unwound);
        frames = daemon_context_frames(d, ev, s);
        d->line.len = 0;
        if (_unlikely_(s->sample_type & PERF_SAMPLE_STACK_USER) &&
            (n_bytes = server_matched_stack_bytes(d->server)) > 0) {
                stack_bytes_deliver(d, ev, s, has_ctx ? &ec : NULL, frames, n_bytes);
                return;
        }
        /* The thread's line holds as long as the sample was not unwound
         * and has no frames to name (what made it SCAN_LINE). */
        if (pre && s == s0 && !frames) {
                if (encode_event_splice(&d->line, pre->data, pre->len, pre->context_at, has_ctx ? &ec : NULL) < 0) {
                        ev->bad++;
                        return;
                }
                d->scan.n_lines++;
        } else if (encode_event_ext(&d->line, ev->encoder, s, d->realtime_offset, has_ctx ? &ec : NULL, frames) <
                   0) {
                ev->bad++;
                return;
        }
        server_deliver(d->server, d->line.data, d->line.len);
}

static void on_sample(void *event, int cpu, const struct perf_sample *s, void *ctx) {
        sample_emit(event, cpu, s, ctx, NULL);
}

/* What a reader thread notes of a sample it encoded (SCAN_LINE), before
 * the line: what the merge's match needs of the sample. */
struct line_note {
        uint64_t cgroup;
        uint64_t schema_gen;    /* the event's definition the line was encoded by */
        int64_t realtime_offset; /* the "time" it wrote (the loop sets it again each second) */
        uint64_t self_gen;      /* the clients SELF was decided by (server_self_gen()) */
        uint32_t context_at;    /* encode_event_split()'s */
        int32_t pid;
        bool self;              /* sample_is_self() */
};

/* Whether the part of EV's lines that is the sample's alone needs nothing
 * the loop keeps: no frames to symbolize or unwind, no user stack's
 * bytes. The context (the process table, changed by records in time
 * order) is the loop's, spliced in at the merge. */
static bool line_on_thread(const struct daemon_event *ev) {
        uint64_t st = ev->attr.sample_type;

        return ev->encoder && !ev->cfg->dwarf && !(ev->cfg->symbols && (st & PERF_SAMPLE_CALLCHAIN)) &&
               !(st & PERF_SAMPLE_STACK_USER);
}

/* In its place in the merge, a sample a reader thread encoded. With no
 * context, and clients that match by what the note says: matched and
 * queued, neither parsed nor encoded again. Else parsed, annotated and
 * matched as any sample, its context spliced into the thread's line
 * (sample_emit()); a reload since the scan has it encoded again. */
static void on_noted(void *event, int cpu, const struct perf_event_attr *attr, const struct perf_event_header *h,
                     const void *note, size_t len, void *ctx) {
        struct daemon *d = ctx;
        struct daemon_event *ev = event;
        struct line_meta meta;
        struct line_note n;
        bool fresh;

        assert(len > sizeof(n));
        memcpy(&n, note, sizeof(n));
        /* A held record's note may be from before a reload, or before
         * the tick set the realtime offset again: encoded anew then. */
        fresh = n.schema_gen == ev->schema_gen && n.realtime_offset == d->realtime_offset;
        if (!fresh || n.self_gen != server_self_gen(d->server) || d->ctx.table || scope_needs_context(d) ||
            !server_event_plain(d->server, ev->index)) {
                const struct pre_line pre = {
                        (const char *) note + sizeof(n), len - sizeof(n), n.context_at,
                };
                struct perf_sample s;

                if (sample_parse(attr, h, &s) >= 0)
                        sample_emit(event, cpu, &s, ctx, fresh ? &pre : NULL);
                return;
        }
        ev->count++;
        meta = (struct line_meta) {
                .idx = ev->index,
                .pid = n.pid,
                .cgroup = n.cgroup,
                .schema = ev->schema.data,
                .schema_len = ev->schema.len,
                .schema_gen = ev->schema_gen,
                .format = ev->format,
                .self = n.self,
        };
        if (server_match(d->server, &meta) == 0)
                return;
        server_deliver(d->server, (const char *) note + sizeof(n), len - sizeof(n));
        d->scan.n_lines++;
}

/* On a reader thread: sample H of EV (SCAN_LINE) encoded behind its note
 * in WORKER's line. False when it does not parse or encode: the merge
 * has it then, and counts it as it does. */
static bool line_encode(struct daemon *d, struct daemon_event *ev, const struct perf_event_attr *attr,
                        const struct perf_event_header *h, struct daemon_scan_worker *w, struct monitor_note *note) {
        struct line_note n = {};
        struct perf_sample s;
        size_t at;

        if (sample_parse(attr, h, &s) < 0)
                return false;
        w->line.len = 0;
        if (jbuf_reserve(&w->line, sizeof(n)) < 0)
                return false;
        w->line.len = sizeof(n);
        if (encode_event_split(&w->line, ev->encoder, &s, d->realtime_offset, &at) < 0 || at > UINT32_MAX)
                return false;
        n.context_at = (uint32_t) at;
        n.cgroup = s.cgroup;
        n.schema_gen = ev->schema_gen;
        n.realtime_offset = d->realtime_offset;
        n.self_gen = d->scan.self_gen;
        n.pid = (int32_t) s.pid;
        n.self = d->scan.check_self && sample_is_self(d, ev, &s);
        memcpy(w->line.data, &n, sizeof(n));
        note->data = w->line.data;
        note->len = w->line.len;
        return true;
}

static void on_lost(int cpu, uint64_t count, void *ctx) {
        struct daemon *d = ctx;

        d->lost_total += count;
        d->line.len = 0;
        if (encode_lost(&d->line, cpu, count) < 0)
                return;
        server_broadcast_lost(d->server, d->line.data, d->line.len, count);
}

/* One record line for side record R (parsed from H) of EV: the records
 * option, THROTTLE, ... through the shared record encoder. */
static void record_emit(struct daemon *d, struct daemon_event *ev, const struct perf_event_header *h,
                        const struct perf_record *r) {
        struct line_meta meta = {
                .idx = ev->index, .pid = r->has_sid ? (pid_t) r->sid.pid : 0,
                .schema = ev->schema.data, .schema_len = ev->schema.len, .schema_gen = ev->schema_gen,
                .self = !d->config->self && r->has_sid && server_is_self(d->server, (pid_t) r->sid.pid),
        };
        const struct encode_record_opts o = {
                .sample_type = ev->attr.sample_type | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
                               PERF_SAMPLE_IDENTIFIER,
                .event = ev->wire_name,
                .realtime_offset_ns = d->realtime_offset,
                .ids = { .name = daemon_event_id_name, .userdata = d },
        };

        if (scope_needs_context(d)) {
                /* The record's process's context decides, as a sample's. */
                struct perf_sample s = { .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME };
                struct encode_context ec;

                if (!r->has_sid)
                        return;
                s.pid = r->sid.pid;
                s.tid = r->sid.tid;
                s.time = r->sid.time;
                (void) daemon_context_annotate(d, ev, &s, &meta, &ec);
                if (!in_scope(d, &meta))
                        return;
        }
        if (server_n_perf(d->server) > 0 && server_match_perf(d->server, &meta) > 0)
                server_deliver(d->server, (const char *) h, h->size);
        if (server_match(d->server, &meta) == 0)
                return;
        d->line.len = 0;
        if (encode_record(&d->line, h, r, &o) < 0)
                return;
        server_deliver(d->server, d->line.data, d->line.len);
}

static void on_record(void *event, int cpu, const struct perf_event_header *h, const struct perf_record *r,
                      void *ctx) {
        struct daemon *d = ctx;

        /* The context's process records name the processes in perf
         * streams (perfout.c lists the dummy's attr). */
        if (event == &d->ctx.tag_dummy && server_n_perf(d->server) > 0)
                server_deliver_perf_all(d->server, (const char *) h, h->size);
        if (daemon_context_record(ctx, event, r))
                return;
        record_emit(ctx, event, h, r);
}

/* On a reader thread, while the loop waits for the scan: what on_sample()
 * would make of sample H of EVENT that no client wants (a count), or
 * that only clients dropping all of its lines want (a count and their
 * drop), done there. The context's own events go on to the merge, which
 * hands them to the process table in time order; so do evmond's own
 * samples, which those clients may not take (sample_is_self()). */
static int scan_sample(void *event, const struct perf_event_attr *attr, const struct perf_event_header *h,
                       unsigned worker, struct monitor_note *note, void *ctx) {
        struct daemon *d = ctx;
        struct daemon_scan *sc = &d->scan;
        struct daemon_event *ev = event;
        uint64_t *row;

        if (event == &d->ctx.tag_dummy || event == &d->ctx.tag_exec)
                return MONITOR_SCAN_KEEP;
        /* An event a reload is adding has no place in the snapshot. */
        if (ev->index >= sc->n || sc->mode[ev->index] == SCAN_KEEP)
                return MONITOR_SCAN_KEEP;
        if (sc->mode[ev->index] == SCAN_LINE) {
                /* The loop's own share would cost it a parse at the scan
                 * and one at the merge, which needs the sample for the
                 * context: it leaves those lines to the merge. */
                if (worker == 0 && sc->merge_parses)
                        return MONITOR_SCAN_KEEP;
                return line_encode(d, ev, attr, h, &sc->workers[worker], note) ? MONITOR_SCAN_NOTE
                                                                                : MONITOR_SCAN_KEEP;
        }
        row = sc->counts + (size_t) worker * 2 * sc->stride;
        if (sc->mode[ev->index] == SCAN_DROP) {
                struct perf_sample s;

                if (sc->check_self && (sample_parse(attr, h, &s) < 0 || sample_is_self(d, ev, &s)))
                        return MONITOR_SCAN_KEEP;
                row[sc->stride + ev->index]++;
        }
        row[ev->index]++;
        return MONITOR_SCAN_SKIP;
}

const struct monitor_handler daemon_emit_handler = {
        .sample = on_sample,
        .lost = on_lost,
        .record = on_record,
        .scan = scan_sample,
        .noted = on_noted,
};

/* Room for N_WORKERS workers' lines; 0 or -ENOMEM. */
static int scan_workers(struct daemon_scan *sc, unsigned n_workers) {
        struct daemon_scan_worker *w;

        if (sc->cap_workers >= n_workers)
                return 0;
        w = aligned_alloc(_Alignof(struct daemon_scan_worker), n_workers * sizeof(*w));
        if (!w)
                return -ENOMEM;
        for (unsigned i = 0; i < n_workers; i++)
                w[i] = (struct daemon_scan_worker) {};
        for (unsigned i = 0; i < sc->cap_workers; i++)
                w[i].line = sc->workers[i].line;
        free(sc->workers);
        sc->workers = w;
        sc->cap_workers = n_workers;
        return 0;
}

/* Before a scan: what each event's samples come to now (nothing changes
 * that while the threads run: the loop waits for them), and rows of
 * counts for each worker. False when a client wants every event as the
 * loop alone can make it: then a scan would only read the rings twice.
 * With threads beside the loop, they encode the lines streaming clients
 * take but their context (SCAN_LINE): the merge splices that in, or
 * with none queues the line as it is, in time order. The loop alone
 * would encode the same lines, and read the rings twice. */
static bool scan_begin(void *ctx, unsigned n_workers) {
        struct daemon *d = ctx;
        struct daemon_scan *sc = &d->scan;
        bool any = false, clients = server_n_clients(d->server) > 0, lines;
        size_t stride = (d->n_events + 7) & ~(size_t) 7;        /* rows a cache line apart */

        if (d->n_events == 0)
                return false;
        /* Without line buffers the threads still count. */
        lines = n_workers > 1 && clients && scan_workers(sc, n_workers) >= 0;
        if (sc->n < d->n_events || !sc->mode) {
                uint8_t *m = realloc(sc->mode, d->n_events * sizeof(*m));

                if (!m)
                        return false;
                sc->mode = m;
        }
        for (size_t i = 0; i < d->n_events; i++) {
                if (!clients || !server_wants_event(d->server, i))
                        sc->mode[i] = SCAN_COUNT;
                /* A drop depends on no context where targets do. */
                else if (!scope_needs_context(d) && server_event_only_dropping(d->server, i))
                        sc->mode[i] = SCAN_DROP;
                else if (lines && line_on_thread(d->events[i]) && server_event_plain(d->server, i))
                        sc->mode[i] = SCAN_LINE;
                else
                        sc->mode[i] = SCAN_KEEP;
                any |= sc->mode[i] != SCAN_KEEP;
        }
        sc->n = d->n_events;
        if (!any)
                return false;
        if (2 * stride * n_workers > sc->cap) {
                uint64_t *c = realloc(sc->counts, 2 * stride * n_workers * sizeof(*c));

                if (!c)
                        return false;
                sc->counts = c;
                sc->cap = 2 * stride * n_workers;
        }
        sc->stride = stride;
        sc->self_gen = server_self_gen(d->server);
        sc->merge_parses = d->ctx.table || scope_needs_context(d);
        sc->n_workers = n_workers;
        sc->check_self = !d->config->self;
        memset(sc->counts, 0, 2 * stride * n_workers * sizeof(*sc->counts));
        return true;
}

static void scan_end(void *ctx) {
        struct daemon *d = ctx;
        struct daemon_scan *sc = &d->scan;

        for (size_t i = 0; i < sc->n && i < d->n_events; i++) {
                uint64_t n = 0, dropped = 0;

                if (sc->mode[i] == SCAN_KEEP)
                        continue;
                for (unsigned w = 0; w < sc->n_workers; w++) {
                        n += sc->counts[w * 2 * sc->stride + i];
                        dropped += sc->counts[w * 2 * sc->stride + sc->stride + i];
                }
                d->events[i]->count += n;
                if (dropped > 0)
                        server_drop_event(d->server, i, dropped);
        }
}

uint64_t daemon_emit_scan_lines(const struct daemon *d) {
        return d->scan.n_lines;
}

const struct reader_scan daemon_emit_scan = {
        .begin = scan_begin,
        .end = scan_end,
};

void daemon_emit_scan_done(struct daemon *d) {
        for (unsigned i = 0; i < d->scan.cap_workers; i++)
                jbuf_done(&d->scan.workers[i].line);
        free(d->scan.workers);
        free(d->scan.mode);
        free(d->scan.counts);
        d->scan = (struct daemon_scan) {};
}

void daemon_emit_batch(void *ctx) {
        struct daemon *d = ctx;

        server_flush(d->server);
}
