/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Counting events ("count": true): every counters.interval_ms each one's
 * value per CPU and summed, with the times that scale a multiplexed
 * count, as perf stat -I prints them; and the side records of perf events
 * (the records option, THROTTLE, ...) as record lines until the encoder
 * has its own (issue 10's encode side). Neither is on the sample path:
 * counters come once an interval, records at the rate of exec and mmap. */

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
        const struct line_meta meta = { .idx = ev->index };

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

static const char *record_name(uint32_t type) {
        static char buf[32];
        const char *s = record_type_to_string(type);
        size_t i;

        if (!s) {
                snprintf(buf, sizeof(buf), "type_%u", type);
                return buf;
        }
        for (i = 0; s[i] && i < sizeof(buf) - 1; i++)
                buf[i] = (char) (s[i] >= 'A' && s[i] <= 'Z' ? s[i] + 32 : s[i]);
        buf[i] = '\0';
        return buf;
}

static json_object *hex(uint64_t v) {
        char buf[24];

        snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
        return json_object_new_string(buf);
}

void record_emit(struct daemon *d, struct daemon_event *ev, int cpu, const struct perf_record *r) {
        const struct line_meta meta = { .idx = ev->index, .pid = r->has_sid ? (pid_t) r->sid.pid : 0 };
        json_object *o, *f;

        if (!server_wants(d->server, &meta))
                return;
        o = json_object_new_object();
        f = json_object_new_object();
        if (!o || !f) {
                json_object_put(o);
                json_object_put(f);
                return;
        }
        json_object_object_add(o, "type", json_object_new_string("record"));
        json_object_object_add(o, "record", json_object_new_string(record_name(r->type)));
        json_object_object_add(o, "event", json_object_new_string(ev->wire_name));
        if (r->has_sid) {
                put_time(o, r->sid.time, d->realtime_offset);
                json_object_object_add(o, "cpu", json_object_new_int((int) r->sid.cpu));
                json_object_object_add(o, "pid", json_object_new_int((int) r->sid.pid));
                json_object_object_add(o, "tid", json_object_new_int((int) r->sid.tid));
        } else
                json_object_object_add(o, "cpu", json_object_new_int(cpu));

        switch (r->type) {
        case PERF_RECORD_COMM:
                json_object_object_add(f, "pid", json_object_new_int((int) r->comm.pid));
                json_object_object_add(f, "tid", json_object_new_int((int) r->comm.tid));
                json_object_object_add(f, "comm", json_object_new_string(r->comm.comm));
                json_object_object_add(f, "exec", json_object_new_boolean(r->misc & PERF_RECORD_MISC_COMM_EXEC));
                break;
        case PERF_RECORD_FORK:
        case PERF_RECORD_EXIT:
                json_object_object_add(f, "pid", json_object_new_int((int) r->task.pid));
                json_object_object_add(f, "ppid", json_object_new_int((int) r->task.ppid));
                json_object_object_add(f, "tid", json_object_new_int((int) r->task.tid));
                json_object_object_add(f, "ptid", json_object_new_int((int) r->task.ptid));
                break;
        case PERF_RECORD_MMAP2: {
                char id[2 * 20 + 1] = "";

                json_object_object_add(f, "pid", json_object_new_int((int) r->mmap2.pid));
                json_object_object_add(f, "tid", json_object_new_int((int) r->mmap2.tid));
                json_object_object_add(f, "addr", hex(r->mmap2.addr));
                json_object_object_add(f, "len", json_object_new_int64((int64_t) r->mmap2.len));
                json_object_object_add(f, "pgoff", json_object_new_int64((int64_t) r->mmap2.pgoff));
                json_object_object_add(f, "filename", json_object_new_string(r->mmap2.filename));
                if (r->mmap2.has_build_id) {
                        for (unsigned i = 0; i < r->mmap2.build_id_size && i < 20; i++)
                                snprintf(id + 2 * i, 3, "%02x", r->mmap2.build_id[i]);
                        json_object_object_add(f, "build_id", json_object_new_string(id));
                }
                break;
        }
        case PERF_RECORD_MMAP:
                json_object_object_add(f, "pid", json_object_new_int((int) r->mmap.pid));
                json_object_object_add(f, "addr", hex(r->mmap.addr));
                json_object_object_add(f, "len", json_object_new_int64((int64_t) r->mmap.len));
                json_object_object_add(f, "filename", json_object_new_string(r->mmap.filename));
                break;
        case PERF_RECORD_SWITCH:
        case PERF_RECORD_SWITCH_CPU_WIDE:
                json_object_object_add(f, "out", json_object_new_boolean(r->misc & PERF_RECORD_MISC_SWITCH_OUT));
                if (r->type == PERF_RECORD_SWITCH_CPU_WIDE) {
                        json_object_object_add(f, "next_prev_pid", json_object_new_int((int) r->switch_cpu_wide.next_prev_pid));
                        json_object_object_add(f, "next_prev_tid", json_object_new_int((int) r->switch_cpu_wide.next_prev_tid));
                }
                break;
        case PERF_RECORD_CGROUP:
                json_object_object_add(f, "id", json_object_new_int64((int64_t) r->cgroup.id));
                json_object_object_add(f, "path", json_object_new_string(r->cgroup.path));
                break;
        case PERF_RECORD_KSYMBOL:
                json_object_object_add(f, "addr", hex(r->ksymbol.addr));
                json_object_object_add(f, "len", json_object_new_int((int) r->ksymbol.len));
                json_object_object_add(f, "ksym_type", json_object_new_int(r->ksymbol.ksym_type));
                json_object_object_add(f, "name", json_object_new_string(r->ksymbol.name));
                break;
        case PERF_RECORD_BPF_EVENT:
                json_object_object_add(f, "bpf_type", json_object_new_int(r->bpf_event.type));
                json_object_object_add(f, "id", json_object_new_int((int) r->bpf_event.id));
                break;
        case PERF_RECORD_TEXT_POKE:
                json_object_object_add(f, "addr", hex(r->text_poke.addr));
                json_object_object_add(f, "old_len", json_object_new_int(r->text_poke.old_len));
                json_object_object_add(f, "new_len", json_object_new_int(r->text_poke.new_len));
                break;
        case PERF_RECORD_NAMESPACES:
                json_object_object_add(f, "pid", json_object_new_int((int) r->namespaces.pid));
                json_object_object_add(f, "tid", json_object_new_int((int) r->namespaces.tid));
                break;
        case PERF_RECORD_THROTTLE:
        case PERF_RECORD_UNTHROTTLE:
                json_object_object_add(f, "id", json_object_new_int64((int64_t) r->throttle.id));
                break;
        case PERF_RECORD_LOST_SAMPLES:
                json_object_object_add(f, "lost", json_object_new_int64((int64_t) r->lost_samples.lost));
                break;
        default:
                break;
        }
        json_object_object_add(o, "fields", f);
        put_line(d, &meta, o);
        json_object_put(o);
}
