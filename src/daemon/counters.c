/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Counting events ("count": true): every counters.interval_ms each one's
 * value per CPU and summed, with the times that scale a multiplexed
 * count, as perf stat -I prints them (src/encode/'s counter line). The
 * side records of perf events go out in emit.c, with the samples. */

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

static void carry_add(struct counter_carry *a, const struct counter_carry *b) {
        a->value += b->value;
        a->enabled += b->enabled;
        a->running += b->running;
        a->scaled += b->scaled;
}

/* Room in EV's carry and seen arrays for N fds (new ones zero). */
static int counter_fds_grow(struct daemon_event *ev, size_t n) {
        struct counter_carry *c, *s;

        if (n <= ev->n_counter_carry_fds)
                return 0;
        c = reallocarray(ev->counter_carry_fds, n, sizeof(*c));
        if (!c)
                return -ENOMEM;
        ev->counter_carry_fds = c;
        s = reallocarray(ev->counter_seen_fds, n, sizeof(*s));
        if (!s)
                return -ENOMEM;
        ev->counter_seen_fds = s;
        memset(c + ev->n_counter_carry_fds, 0, (n - ev->n_counter_carry_fds) * sizeof(*c));
        memset(s + ev->n_counter_carry_fds, 0, (n - ev->n_counter_carry_fds) * sizeof(*s));
        ev->n_counter_carry_fds = n;
        return 0;
}

/* What fd I of EV counted, as the kernel says now: 0 or -errno (closed,
 * its CPU gone). */
static int counter_read_fd(struct daemon *d, struct daemon_event *ev, size_t i, struct counter_carry *ret) {
        uint64_t buf[64];
        struct perf_read rd;
        struct perf_read_value v;
        int r;

        r = monitor_read(d->monitor, ev->handle, i, buf, sizeof(buf), &rd);
        if (r >= 0)
                r = read_own(d, ev, &rd, &v);
        if (r < 0)
                return r;
        /* perf stat's scaling: what it would have counted had it run all
         * the time it was enabled. */
        *ret = (struct counter_carry) {
                .value = v.value, .enabled = rd.time_enabled, .running = rd.time_running,
                .scaled = rd.time_running ? (double) v.value * (double) rd.time_enabled / (double) rd.time_running : 0,
        };
        return 0;
}

/* EV's count on each of its fds now, what earlier openings carried over
 * added: RET[i] and RET_CPU[i] for fd i (room for every fd); false in
 * RET_ANY[i] for an fd that neither reads (closed, its CPU offline) nor
 * carries anything. */
static void counter_read_fds(struct daemon *d, struct daemon_event *ev, struct counter_carry *ret, int *ret_cpu,
                             bool *ret_any) {
        size_t n = monitor_handle_n_fds(d->monitor, ev->handle);

        for (size_t i = 0; i < n; i++) {
                struct counter_carry v;
                int cpu = -1;

                ret[i] = i < ev->n_counter_carry_fds ? ev->counter_carry_fds[i] : (struct counter_carry) {};
                ret_any[i] = ret[i].value || ret[i].enabled;
                (void) monitor_handle_fd(d->monitor, ev->handle, i, &cpu);
                ret_cpu[i] = cpu;
                if (counter_read_fd(d, ev, i, &v) < 0)
                        continue;
                /* Kept for counters_cpu_down(), should the fd not read
                 * then. */
                if (counter_fds_grow(ev, n) >= 0)
                        ev->counter_seen_fds[i] = v;
                carry_add(&ret[i], &v);
                ret_any[i] = true;
        }
}

static void counter_emit(struct daemon *d, struct daemon_event *ev, uint64_t ts) {
        size_t n = monitor_handle_n_fds(d->monitor, ev->handle);
        _cleanup_(freep) struct encode_counter_cpu *cpus = calloc(n ?: 1, sizeof(*cpus));
        _cleanup_(freep) struct counter_carry *fds = calloc(n ?: 1, sizeof(*fds));
        _cleanup_(freep) int *fd_cpus = calloc(n ?: 1, sizeof(int));
        _cleanup_(freep) bool *any = calloc(n ?: 1, sizeof(bool));
        struct encode_counter c = {
                .event = ev->wire_name, .group = ev->cfg->group, .ts = ts,
                .realtime_offset_ns = d->realtime_offset, .cpus = cpus,
        };
        const struct line_meta meta = {
                .idx = ev->index, .schema = ev->schema.data, .schema_len = ev->schema.len, .schema_gen = ev->schema_gen,
        };
        _cleanup_(freep) struct counter_carry *threads = calloc(n ?: 1, sizeof(*threads));
        struct counter_carry sum = ev->counter_carry;
        size_t n_threads = 0;

        if (!cpus || !fds || !fd_cpus || !any || !threads)
                return;
        counter_read_fds(d, ev, fds, fd_cpus, any);
        for (size_t i = 0; i < n; i++) {
                size_t k = 0, t;

                if (!any[i])
                        continue;
                /* A pid target's fd on CPU X counts while its thread runs
                 * there, but is "enabled" (and was scaled up by) all the
                 * time the thread runs anywhere: per fd, perf stat's
                 * scaling took a thread that ran half its time on each of
                 * 2 CPUs for one multiplexed to half, and doubled its
                 * count. Per thread, its fds' running add up to the time
                 * it ran, and the freshest enabled (the kernel updates an
                 * fd's times when its thread runs on that CPU) is that
                 * time: they differ only when it was multiplexed. */
                if (monitor_fd_pid_target(d->monitor, i, &t)) {
                        threads[t].value += fds[i].value;
                        threads[t].running += fds[i].running;
                        if (fds[i].enabled > threads[t].enabled)
                                threads[t].enabled = fds[i].enabled;
                        n_threads = t + 1 > n_threads ? t + 1 : n_threads;
                } else
                        carry_add(&sum, &fds[i]);
                /* One entry per CPU: the fds of every cgroup and pid
                 * target (each thread of targets.pids) on a CPU add up,
                 * as the line's "cpus" says. */
                while (k < c.n_cpus && cpus[k].cpu != fd_cpus[i])
                        k++;
                if (k == c.n_cpus)
                        cpus[c.n_cpus++] = (struct encode_counter_cpu) { .cpu = fd_cpus[i] };
                cpus[k].value += fds[i].value;
                cpus[k].enabled += fds[i].enabled;
                cpus[k].running += fds[i].running;
        }
        for (size_t t = 0; t < n_threads; t++) {
                uint64_t running = threads[t].running < threads[t].enabled ? threads[t].running : threads[t].enabled;

                sum.value += threads[t].value;
                sum.enabled += threads[t].enabled;
                sum.running += running;
                sum.scaled += running < threads[t].enabled && running > 0
                        ? (double) threads[t].value * (double) threads[t].enabled / (double) running
                        : (double) threads[t].value;
        }
        c.value = sum.value;
        c.enabled = sum.enabled;
        c.running = sum.running;
        c.scaled = (uint64_t) (sum.scaled + 0.5);
        c.delta = c.value - ev->counter_last;
        ev->counter_last = c.value;
        ev->counter_last_enabled = c.enabled;
        ev->counter_last_running = c.running;
        ev->counter_last_scaled = c.scaled;
        d->line.len = 0;
        if (encode_counter(&d->line, &c) < 0)
                return;
        server_broadcast(d->server, &meta, d->line.data, d->line.len);
}

int counters_carry(struct daemon *d, struct daemon_event *from, struct daemon_event *to) {
        size_t n = from->handle >= 0 ? monitor_handle_n_fds(d->monitor, from->handle) : 0;
        size_t m = to->handle >= 0 ? monitor_handle_n_fds(d->monitor, to->handle) : 0;
        _cleanup_(freep) struct counter_carry *fds = calloc(n ?: 1, sizeof(*fds));
        _cleanup_(freep) int *fd_cpus = calloc(n ?: 1, sizeof(int));
        _cleanup_(freep) bool *any = calloc(n ?: 1, sizeof(bool));
        bool same = n == m;

        if (!fds || !fd_cpus || !any)
                return -ENOMEM;
        if (n > 0)
                counter_read_fds(d, from, fds, fd_cpus, any);
        /* Fd for fd where both have the same fds on the same CPUs (same
         * targets), as a filter change gives: each cpus entry goes on. */
        for (size_t i = 0; same && i < n; i++) {
                int cpu = -1;

                (void) monitor_handle_fd(d->monitor, to->handle, i, &cpu);
                same = cpu == fd_cpus[i];
        }
        if (same && n > 0 && counter_fds_grow(to, n) < 0)
                same = false;
        carry_add(&to->counter_carry, &from->counter_carry);
        for (size_t i = 0; i < n; i++)
                carry_add(same && i < to->n_counter_carry_fds ? &to->counter_carry_fds[i] : &to->counter_carry,
                          &fds[i]);
        to->counter_last = from->counter_last;
        to->counter_last_enabled = from->counter_last_enabled;
        to->counter_last_running = from->counter_last_running;
        to->counter_last_scaled = from->counter_last_scaled;
        return 0;
}

void counters_emit(struct daemon *d) {
        uint64_t ts = now_ns(d->config->clockid);

        /* In config order, so a group's members come together. */
        for (size_t i = 0; i < d->n_events; i++)
                if (d->events[i]->cfg->count && d->events[i]->handle >= 0)
                        counter_emit(d, d->events[i], ts);
        server_flush(d->server);
}

void counters_cpu_down(struct daemon *d, int cpu) {
        for (size_t e = 0; e < d->n_events; e++) {
                struct daemon_event *ev = d->events[e];
                size_t n;

                if (!ev->cfg->count || ev->handle < 0)
                        continue;
                n = monitor_handle_n_fds(d->monitor, ev->handle);
                if (counter_fds_grow(ev, n) < 0) {
                        log_warning("%s: out of memory: its counter lines' value falls by what CPU %d counted",
                                    ev->wire_name, cpu);
                        continue;
                }
                for (size_t i = 0; i < n; i++) {
                        struct counter_carry v;
                        int c = -1;

                        (void) monitor_handle_fd(d->monitor, ev->handle, i, &c);
                        if (c != cpu)
                                continue;
                        /* The kernel keeps an event's count when its CPU
                         * goes; if it cannot be read, the last read. */
                        if (counter_read_fd(d, ev, i, &v) < 0)
                                v = ev->counter_seen_fds[i];
                        carry_add(&ev->counter_carry_fds[i], &v);
                        ev->counter_seen_fds[i] = (struct counter_carry) {};
                }
        }
}
