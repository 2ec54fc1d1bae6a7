/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Counting events ("count": true): every counters.interval_ms each one's
 * value per CPU and summed, with the times that scale a multiplexed
 * count, as perf stat -I prints them (json-c: once an interval, not on the
 * sample path); and the side records of perf events (the records option,
 * THROTTLE, ...) as record lines through the shared record encoder. */

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "counters.h"
#include "evmon/encode.h"
#include "server.h"
#include "evmon/attr.h"
#include "evmon/encode-perf.h"
#include "evmon/log.h"

static void put_line(struct daemon *d, const struct line_meta *meta, json_object *o) {
        const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        size_t n = strlen(s);

        d->line.len = 0;
        if (jbuf_reserve(&d->line, n + 1) < 0)
                return;
        jbuf_put_bytes(&d->line, s, n);
        jbuf_put_char(&d->line, '\n');
        if (meta)
                server_broadcast(d->server, meta, d->line.data, d->line.len);
        else
                server_broadcast_all(d->server, d->line.data, d->line.len);
}

static void put_time(json_object *o, uint64_t ts, int64_t offset) {
        char buf[64];
        uint64_t rt = ts + (uint64_t) offset;
        time_t sec = (time_t) (rt / 1000000000u);
        struct tm tm;

        gmtime_r(&sec, &tm);
        strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), ".%09" PRIu64 "Z", rt % 1000000000u);
        json_object_object_add(o, "time", json_object_new_string(buf));
        json_object_object_add(o, "ts", json_object_new_int64((int64_t) ts));
}

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
        json_object *o, *cpus;
        uint64_t sum = 0, enabled = 0, running = 0;
        double scaled = 0;
        size_t n = monitor_handle_n_fds(d->monitor, ev->handle);
        const struct line_meta meta = {
                .idx = ev->index, .schema = ev->schema.data, .schema_len = ev->schema.len, .schema_gen = ev->schema_gen,
        };

        o = json_object_new_object();
        cpus = json_object_new_array();
        if (!o || !cpus) {
                json_object_put(o);
                json_object_put(cpus);
                return;
        }
        for (size_t i = 0; i < n; i++) {
                uint64_t buf[64];
                struct perf_read rd;
                struct perf_read_value v;
                json_object *c;
                int cpu = -1;

                (void) monitor_handle_fd(d->monitor, ev->handle, i, &cpu);
                if (monitor_read(d->monitor, ev->handle, i, buf, sizeof(buf), &rd) < 0 ||
                    read_own(d, ev, &rd, &v) < 0)
                        continue;
                sum += v.value;
                enabled += rd.time_enabled;
                running += rd.time_running;
                /* perf stat's scaling: what it would have counted had it
                 * run all the time it was enabled. */
                scaled += rd.time_running ? (double) v.value * (double) rd.time_enabled / (double) rd.time_running : 0;
                c = json_object_new_object();
                if (!c)
                        continue;
                json_object_object_add(c, "cpu", json_object_new_int(cpu));
                json_object_object_add(c, "value", json_object_new_int64((int64_t) v.value));
                json_object_object_add(c, "enabled", json_object_new_int64((int64_t) rd.time_enabled));
                json_object_object_add(c, "running", json_object_new_int64((int64_t) rd.time_running));
                json_object_array_add(cpus, c);
        }

        json_object_object_add(o, "type", json_object_new_string("counter"));
        json_object_object_add(o, "event", json_object_new_string(ev->wire_name));
        put_time(o, ts, d->realtime_offset);
        json_object_object_add(o, "value", json_object_new_int64((int64_t) sum));
        json_object_object_add(o, "delta", json_object_new_int64((int64_t) (sum - ev->counter_last)));
        json_object_object_add(o, "enabled", json_object_new_int64((int64_t) enabled));
        json_object_object_add(o, "running", json_object_new_int64((int64_t) running));
        json_object_object_add(o, "scaled", json_object_new_int64((int64_t) (scaled + 0.5)));
        if (ev->cfg->group)
                json_object_object_add(o, "group", json_object_new_string(ev->cfg->group));
        json_object_object_add(o, "cpus", cpus);
        ev->counter_last = sum;
        put_line(d, &meta, o);
        json_object_put(o);
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
        };

        if (server_match(d->server, &meta) == 0)
                return;
        d->line.len = 0;
        if (encode_record(&d->line, h, r, &o) < 0)
                return;
        server_deliver(d->server, d->line.data, d->line.len);
}
