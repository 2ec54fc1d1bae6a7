/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The head of a "format":"perf" client's stream: what perf needs before
 * the records (src/monitor/perfdata-write.c writes it): each subscribed
 * event's attr as opened with the ids of its fds, its format file for the
 * tracing data, and the machine's features. The records themselves go
 * out as the kernel wrote them (emit.c, server.c). */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "daemon.h"
#include "events.h"
#include "perfout.h"
#include "evmon/clock.h"
#include "evmon/perfdata.h"

/* A format file's text for EV's probe made by the PMU (no tracefs file):
 * its fields as the kernel lays the record out, under ID. */
static char *pmu_format_text(const struct format *f, uint32_t id, bool ret_probe) {
        _cleanup_(freep) char *buf = NULL;
        _cleanup_(fclosep) FILE *out = NULL;
        size_t size = 0;

        out = open_memstream(&buf, &size);
        if (!out)
                return NULL;
        fprintf(out, "name: %s\nID: %" PRIu32 "\nformat:\n", f->name, id);
        for (size_t i = 0; i < f->n_fields; i++) {
                const struct format_field *x = &f->fields[i];

                fprintf(out, "\tfield:%s %s;\toffset:%" PRIu32 ";\tsize:%" PRIu32 ";\tsigned:%d;\n", x->type,
                        x->name, x->offset, x->size, x->is_signed);
                if (i + 1 == f->n_common)
                        fputc('\n', out);
        }
        fputs(ret_probe ? "\nprint fmt: \"(%lx <- %lx)\", REC->__probe_func, REC->__probe_ret_ip\n"
                        : "\nprint fmt: \"(%lx)\", REC->__probe_ip\n", out);
        if (fflush(out) != 0 || ferror(out))
                return NULL;
        fclose(TAKE_PTR(out));
        return TAKE_PTR(buf);
}

struct perfout_events {
        struct perfdata_out_event *ev;
        char **texts;
        uint64_t **ids;
        size_t n, cap;
};

static void perfout_events_done(struct perfout_events *e) {
        for (size_t i = 0; e->texts && e->ids && i <= e->n && i < e->cap; i++) {
                free(e->texts[i]);
                free(e->ids[i]);
        }
        free(e->ev);
        free(e->texts);
        free(e->ids);
}

static int perfout_event(struct daemon *d, struct daemon_event *ev, struct perfout_events *e) {
        struct perfdata_out_event *o = &e->ev[e->n];
        /* e->ev has room for every event and the dummy */
        const struct perf_event_attr *attr = monitor_handle_attr(d->monitor, ev->handle);
        const uint64_t *ids = monitor_handle_ids(d->monitor, ev->handle);
        size_t n = monitor_handle_n_fds(d->monitor, ev->handle), k = 0;
        uint64_t *copy;

        if (!attr || !ids)
                return 0;
        copy = calloc(n ?: 1, sizeof(*copy));
        if (!copy)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (ids[i] != 0)
                        copy[k++] = ids[i];
        e->ids[e->n] = copy;
        *o = (struct perfdata_out_event) {
                .attr = *attr,
                .ids = copy,
                .n_ids = k,
                .name = ev->wire_name,
        };
        if (ev->format && attr->type == PERF_TYPE_TRACEPOINT) {
                _cleanup_(freep) char *rel = NULL;

                /* A tracepoint or a probe tracefs made: its own file. */
                if (asprintf(&rel, "events/%s/%s/format", ev->format->system, ev->format->name) < 0)
                        return -ENOMEM;
                if (tracefs_read(d->tracefs, rel, &e->texts[e->n], NULL) >= 0)
                        o->system = ev->format->system;
        } else if (ev->format && ev->pmu.type != 0) {
                /* A probe the PMU made: perf gets it as a trace event of
                 * an id of ours, with the layout its records have. */
                uint32_t id = daemon_perf_pmu_id(ev->index);

                e->texts[e->n] = pmu_format_text(ev->format, id, probe_kind_is_return(ev->probe_kind));
                if (!e->texts[e->n])
                        return -ENOMEM;
                o->attr.type = PERF_TYPE_TRACEPOINT;
                o->attr.config = id;
                o->attr.config1 = o->attr.config2 = 0;
                o->system = ev->format->system ?: "evmon";
        }
        o->format_text = e->texts[e->n];
        e->n++;
        return 0;
}

int daemon_perf_head(struct daemon *d, const struct subscription *sub, char **ret, size_t *ret_len,
                     uint64_t *ret_lost_id) {
        _cleanup_(perfout_events_done) struct perfout_events e = {};
        _cleanup_(freep) char *buf = NULL, *header_page = NULL, *header_event = NULL, *host = NULL;
        _cleanup_(fclosep) FILE *f = NULL;
        struct perfdata_out_info info = { .clockid = -1 };
        static const char *const cmdline[] = { "evmond", NULL };
        struct utsname u;
        size_t size = 0;
        long n_conf, n_onln;
        int r;

        e.cap = d->n_events + 1;
        e.ev = calloc(e.cap, sizeof(*e.ev));
        e.texts = calloc(e.cap, sizeof(*e.texts));
        e.ids = calloc(e.cap, sizeof(*e.ids));
        if (!e.ev || !e.texts || !e.ids)
                return -ENOMEM;
        for (size_t i = 0; i < d->n_events; i++) {
                struct daemon_event *ev = d->events[i];

                if (ev->handle < 0 || !subscription_has_event(sub, ev->index))
                        continue;
                r = perfout_event(d, ev, &e);
                if (r < 0)
                        return r;
        }
        /* The context's dummy: its COMM, FORK and EXIT records (emit.c
         * passes them on) name the processes, as perf record's own
         * tracking event does. */
        if (d->ctx.dummy >= 0) {
                struct daemon_event dummy = {
                        .wire_name = (char *) "dummy:context",
                        .handle = d->ctx.dummy,
                        .index = UINT_MAX,
                };

                r = perfout_event(d, &dummy, &e);
                if (r < 0)
                        return r;
        }

        if (uname(&u) >= 0) {
                host = strdup(u.nodename);
                info.osrelease = u.release;
                info.version = u.version;
                info.arch = u.machine;
                info.hostname = host;
        }
        n_conf = sysconf(_SC_NPROCESSORS_CONF);
        n_onln = sysconf(_SC_NPROCESSORS_ONLN);
        if (n_conf > 0 && n_onln > 0) {
                info.nr_cpus_avail = (uint32_t) n_conf;
                info.nr_cpus_online = (uint32_t) n_onln;
        }
        info.cmdline = cmdline;
        info.page_size = (uint32_t) sysconf(_SC_PAGESIZE);
        (void) tracefs_read(d->tracefs, "events/header_page", &header_page, NULL);
        (void) tracefs_read(d->tracefs, "events/header_event", &header_event, NULL);
        info.header_page = header_page;
        info.header_event = header_event;
        info.clockid = d->config->clockid;
        info.clock_ns = now_ns(d->config->clockid);
        info.wall_ns = info.clock_ns + (uint64_t) d->realtime_offset;

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        r = perfdata_write_pipe_header(f, e.ev, e.n, &info);
        if (r < 0)
                return r;
        if (fflush(f) != 0)
                return -ENOMEM;
        fclose(TAKE_PTR(f));

        *ret_lost_id = 0;
        for (size_t i = 0; i < e.n && *ret_lost_id == 0; i++)
                if (e.ev[i].n_ids > 0)
                        *ret_lost_id = e.ev[i].ids[0];
        *ret_len = size;
        *ret = TAKE_PTR(buf);
        return 0;
}
