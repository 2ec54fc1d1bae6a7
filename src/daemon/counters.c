/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Counting events ("count": true): every counters.interval_ms each one's
 * value per CPU and summed, with the times that scale a multiplexed
 * count, as perf stat -I prints them (src/encode/'s counter line); and
 * the side records of perf events (the records option,
 * THROTTLE, ...) as record lines through the shared record encoder. */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "counters.h"
#include "evmon/encode.h"
#include "server.h"
#include "evmon/attr.h"
#include "evmon/encode-perf.h"
#include "evmon/log.h"

/* The value of EV in a read of one of its fds: with PERF_FORMAT_GROUP the
 * read holds the whole group, and EV's entry is the one with its id. */
static int read_own(struct daemon *d, struct daemon_event *ev, const struct perf_read *rd,
                    struct perf_read_value *ret) {
        for (uint64_t k = 0; k < rd->nr; k++) {
                if (perf_read_get(rd, k, ret) < 0)
                        return -EBADMSG;
                if (!(rd->read_format & PERF_FORMAT_ID) || monitor_id_userdata(d->monitor, ret->id) == ev)
                        return 0;
        }
        return -ENOENT;
}

static void counter_emit(struct daemon *d, struct daemon_event *ev, uint64_t ts) {
        size_t n = monitor_handle_n_fds(d->monitor, ev->handle);
        _cleanup_(freep) struct encode_counter_cpu *cpus = calloc(n ?: 1, sizeof(*cpus));
        struct encode_counter c = {
                .event = ev->wire_name, .group = ev->cfg->group, .ts = ts,
                .realtime_offset_ns = d->realtime_offset, .cpus = cpus,
        };
        const struct line_meta meta = {
                .idx = ev->index, .schema = ev->schema.data, .schema_len = ev->schema.len, .schema_gen = ev->schema_gen,
        };
        double scaled = 0;

        if (!cpus)
                return;
        for (size_t i = 0; i < n; i++) {
                uint64_t buf[64];
                struct perf_read rd;
                struct perf_read_value v;
                int cpu = -1;

                (void) monitor_handle_fd(d->monitor, ev->handle, i, &cpu);
                if (monitor_read(d->monitor, ev->handle, i, buf, sizeof(buf), &rd) < 0 ||
                    read_own(d, ev, &rd, &v) < 0)
                        continue;
                c.value += v.value;
                c.enabled += rd.time_enabled;
                c.running += rd.time_running;
                /* perf stat's scaling: what it would have counted had it
                 * run all the time it was enabled. */
                scaled += rd.time_running ? (double) v.value * (double) rd.time_enabled / (double) rd.time_running : 0;
                cpus[c.n_cpus++] = (struct encode_counter_cpu) {
                        .cpu = cpu, .value = v.value, .enabled = rd.time_enabled, .running = rd.time_running,
                };
        }
        c.scaled = (uint64_t) (scaled + 0.5);
        c.delta = c.value - ev->counter_last;
        ev->counter_last = c.value;
        d->line.len = 0;
        if (encode_counter(&d->line, &c) < 0)
                return;
        server_broadcast(d->server, &meta, d->line.data, d->line.len);
}

void counters_emit(struct daemon *d) {
        struct timespec t;
        uint64_t ts;

        clock_gettime(d->config->clockid, &t);
        ts = (uint64_t) t.tv_sec * 1000000000u + (uint64_t) t.tv_nsec;
        /* In config order, so a group's members come together. */
        for (size_t i = 0; i < d->n_events; i++)
                if (d->events[i]->cfg->count && d->events[i]->handle >= 0)
                        counter_emit(d, d->events[i], ts);
        server_flush(d->server);
}

void record_emit(struct daemon *d, struct daemon_event *ev, const struct perf_event_header *h,
                 const struct perf_record *r) {
        const struct line_meta meta = {
                .idx = ev->index, .pid = r->has_sid ? (pid_t) r->sid.pid : 0,
                .schema = ev->schema.data, .schema_len = ev->schema.len, .schema_gen = ev->schema_gen,
        };
        const struct encode_record_opts o = {
                .sample_type = ev->attr.sample_type | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
                               PERF_SAMPLE_IDENTIFIER,
                .event = ev->wire_name,
                .realtime_offset_ns = d->realtime_offset,
                .ids = { .name = daemon_event_id_name, .userdata = d },
        };

        if (server_match(d->server, &meta) == 0)
                return;
        d->line.len = 0;
        if (encode_record(&d->line, h, r, &o) < 0)
                return;
        server_deliver(d->server, d->line.data, d->line.len);
}
