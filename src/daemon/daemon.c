/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>
#include <time.h>

#include "counters.h"
#include "daemon.h"
#include "cgroup.h"
#include "notify.h"
#include "privs.h"
#include "evmon/cleanup.h"
#include "evmon/log.h"


static uint64_t now_ns(clockid_t clock) {
        struct timespec ts;

        clock_gettime(clock, &ts);
        return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

/* The wall-clock time of an event is its own clock's time plus this offset;
 * re-read every second so NTP adjustments show. */
static void daemon_update_offset(struct daemon *d) {
        clockid_t clock = d->config->clockid;
        uint64_t a, rt, b;

        if (clock == CLOCK_REALTIME) {
                d->realtime_offset = 0;
                return;
        }
        a = now_ns(clock);
        rt = now_ns(CLOCK_REALTIME);
        b = now_ns(clock);
        d->realtime_offset = (int64_t) (rt - (a + (b - a) / 2));
}

static void on_sample(void *event, int cpu, const struct perf_sample *s, void *ctx) {
        struct daemon *d = ctx;
        struct daemon_event *ev = event;
        const struct line_meta meta = {
                .idx = ev->index,
                .pid = (pid_t) s->pid,
                .cgroup = s->cgroup,
        };

        ev->count++;
        if (!server_wants(d->server, &meta))
                return;
        d->line.len = 0;
        if (encode_event(&d->line, ev->encoder, s, d->realtime_offset) < 0) {
                ev->bad++;
                return;
        }
        server_broadcast(d->server, &meta, d->line.data, d->line.len);
}

static void on_lost(int cpu, uint64_t count, void *ctx) {
        struct daemon *d = ctx;

        d->lost_total += count;
        d->line.len = 0;
        if (encode_lost(&d->line, cpu, count) < 0)
                return;
        server_broadcast_all(d->server, d->line.data, d->line.len);
}

static void on_record(void *event, int cpu, const struct perf_event_header *h, const struct perf_record *r,
                      void *ctx) {
        record_emit(ctx, event, h, r);
}

static const struct monitor_handler handler = {
        .sample = on_sample,
        .lost = on_lost,
        .record = on_record,
};

static void on_batch(void *ctx) {
        struct daemon *d = ctx;

        server_flush(d->server);
}

static struct reader_opts daemon_reader_opts(const struct daemon *d) {
        return (struct reader_opts) {
                .doorbell = d->config->doorbell,
                .flush_usec = d->config->flush_ms * 1000u,
                .busy_usec = d->config->busy_flush_ms * 1000u,
                .idle_usec = d->config->idle_flush_ms * 1000u,
        };
}

static bool daemon_has_counters(const struct daemon *d) {
        for (size_t i = 0; i < d->n_events; i++)
                if (d->events[i]->cfg->count)
                        return true;
        return false;
}

/* counters.interval_ms: one line per counting event (perf stat -I). */
static int on_counter_timer(sd_event_source *es, uint64_t usec, void *userdata) {
        struct daemon *d = userdata;

        counters_emit(d);
        return sd_event_source_set_time_relative(es, d->config->counter_interval_ms * 1000ull);
}

static void daemon_status_text(struct daemon *d, char *buf, size_t size) {
        snprintf(buf, size, "Serving %zu events to %zu clients; %" PRIu64 " lost in the kernel, %" PRIu64 " dropped for slow clients",
                 d->n_events, server_n_clients(d->server), d->lost_total, server_dropped_total(d->server));
}

/* The one housekeeping tick, once a second: with the rings on doorbells
 * (reader.c) it is all an idle evmond wakes for, so whatever else must run
 * now and then (metrics) belongs here rather than on a timer of its own;
 * the systemd watchdog is pinged on the loop iteration it wakes. */
static int on_tick(sd_event_source *es, uint64_t usec, void *userdata) {
        struct daemon *d = userdata;
        char status[256];

        daemon_update_offset(d);
        (void) reader_sweep(d->reader);
        daemon_status_text(d, status, sizeof(status));
        notify_status(status);
        return sd_event_source_set_time(es, usec + 1000000u);
}

static int on_terminate(sd_event_source *es, const struct signalfd_siginfo *si, void *userdata) {
        struct daemon *d = userdata;

        log_info("Received %s, stopping", strsignal((int) si->ssi_signo));
        notify_stopping();
        return sd_event_exit(d->event, 0);
}

static int on_hangup(sd_event_source *es, const struct signalfd_siginfo *si, void *userdata) {
        struct daemon *d = userdata;
        _cleanup_(freep) char *error = NULL;
        char status[256];

        log_info("Received SIGHUP, reloading %s", d->config->path);
        notify_reloading();
        if (daemon_reload(d, &error) < 0)
                log_error("Reload failed, the running config stays: %s", error ?: "out of memory");
        daemon_status_text(d, status, sizeof(status));
        notify_reloaded(status);
        return 0;
}

static size_t ops_n_events(void *userdata) {
        struct daemon *d = userdata;
        return d->n_events;
}

static const char *ops_event_name(void *userdata, size_t i) {
        struct daemon *d = userdata;
        return d->events[i]->wire_name;
}

static int ops_status(void *userdata, struct jbuf *line) {
        struct daemon *d = userdata;
        size_t n_rings = monitor_n_rings(d->monitor);
        _cleanup_(freep) struct encode_status_event *events = NULL;
        _cleanup_(freep) struct encode_status_cpu *cpus = NULL;
        _cleanup_(freep) struct encode_status_client *clients = NULL;
        struct encode_status st = {
                .config = d->config->path,
                .probe_group = d->probe_group,
                .uptime_s = (now_ns(CLOCK_MONOTONIC) / 1000 - d->start_usec) / 1e6,
                /* What the rings run with now (pages stay as they were at start until a restart). */
                .ring_pages = d->config->ring_pages,
                .flush_ms = d->config->flush_ms,
                .busy_flush_ms = d->config->busy_flush_ms,
                .idle_flush_ms = d->config->idle_flush_ms,
                .doorbell = d->config->doorbell,
                .doorbell_rings = reader_n_doorbells(d->reader),
                .ticks = reader_n_ticks(d->reader),
                .swept = reader_n_swept(d->reader),
                .n_events = d->n_events,
                .n_cpus = n_rings,
        };
        int r;

        events = calloc(d->n_events ?: 1, sizeof(*events));
        cpus = calloc(n_rings ?: 1, sizeof(*cpus));
        if (!events || !cpus)
                return -ENOMEM;
        for (size_t i = 0; i < d->n_events; i++)
                events[i] = (struct encode_status_event) {
                        .event = d->events[i]->wire_name,
                        .count = d->events[i]->count,
                        .undecodable = d->events[i]->bad,
                };
        for (size_t i = 0; i < n_rings; i++)
                cpus[i] = (struct encode_status_cpu) {
                        .cpu = monitor_ring_cpu(d->monitor, i),
                        .lost = monitor_ring_lost(d->monitor, i),
                        .malformed = monitor_ring_bad(d->monitor, i),
                };
        r = server_clients_status(d->server, &clients, &st.n_clients);
        if (r < 0)
                return r;
        st.events = events;
        st.cpus = cpus;
        st.clients = clients;
        return encode_status(line, &st);
}

/* The wire names of the events served, in index order (the strings stay
 * the events'). Caller frees the array. */
static const char **daemon_event_names(struct daemon *d) {
        const char **names = calloc(d->n_events ?: 1, sizeof(char *));

        for (size_t i = 0; names && i < d->n_events; i++)
                names[i] = d->events[i]->wire_name;
        return names;
}

static int ops_reload(void *userdata, struct jbuf *line) {
        struct daemon *d = userdata;
        _cleanup_(freep) char *error = NULL;
        _cleanup_(freep) const char **names = NULL;
        char status[256];
        int r;

        log_info("Client asked to reload %s", d->config->path);
        notify_reloading();
        r = daemon_reload(d, &error);
        if (r < 0)
                log_error("Reload failed, the running config stays: %s", error ?: "out of memory");
        daemon_status_text(d, status, sizeof(status));
        notify_reloaded(status);

        names = daemon_event_names(d);
        if (!names)
                return -ENOMEM;
        return encode_reload(line, r >= 0, error, names, d->n_events);
}

static const struct server_ops server_ops = {
        .n_events = ops_n_events,
        .event_name = ops_event_name,
        .status = ops_status,
        .reload = ops_reload,
};

static enum probe_kind probe_kind_of(enum event_kind k) {
        switch (k) {
        case EVENT_KPROBE:
                return PROBE_KPROBE;
        case EVENT_KRETPROBE:
                return PROBE_KRETPROBE;
        case EVENT_UPROBE:
                return PROBE_UPROBE;
        case EVENT_URETPROBE:
                return PROBE_URETPROBE;
        default:
                return _PROBE_KIND_INVALID;
        }
}

/* Everything that makes two config entries the same event: an event whose
 * definition did not change keeps its fds over a reload. */
static char *event_definition(const struct event_config *ec) {
        size_t n = 0;
        char *s, *p;

        n += strlen(ec->wire_name) + strlen(event_kind_to_string(ec->kind)) + 8;
        /* A perf event is its attr, count and group too. */
        n += 2 * sizeof(ec->attr) + 4 + (ec->group ? strlen(ec->group) : 0);
        n += (ec->target ? strlen(ec->target) : 0) + (ec->filter ? strlen(ec->filter) : 0);
        for (char **f = ec->fetch; f && *f; f++)
                n += strlen(*f) + 1;
        s = p = malloc(n);
        if (!s)
                return NULL;
        p = stpcpy(p, event_kind_to_string(ec->kind));
        *p++ = '\n';
        p = stpcpy(p, ec->wire_name);
        *p++ = '\n';
        p = stpcpy(p, ec->target ?: "");
        *p++ = '\n';
        for (char **f = ec->fetch; f && *f; f++) {
                p = stpcpy(p, *f);
                *p++ = ' ';
        }
        *p++ = '\n';
        p = stpcpy(p, ec->filter ?: "");
        if (event_kind_is_perf(ec->kind)) {
                const uint8_t *a = (const uint8_t *) &ec->attr;

                *p++ = '\n';
                for (size_t i = 0; i < sizeof(ec->attr); i++)
                        p += sprintf(p, "%02x", a[i]);
                *p++ = ec->count ? 'c' : 's';
                p = stpcpy(p, ec->group ?: "");
        }
        return s;
}

static size_t strv_length(char **l) {
        size_t n = 0;
        while (l && l[n])
                n++;
        return n;
}

/* Closes the event's fds and removes the probe we made for it. */
static struct daemon_event *daemon_event_free(struct daemon *d, struct daemon_event *ev) {
        int r;

        if (!ev)
                return NULL;
        if (ev->handle >= 0 && d->monitor)
                (void) monitor_remove(d->monitor, ev->handle);
        if (ev->probe_added) {
                r = probe_remove(d->tracefs, d->probe_group, ev->probe_kind, ev->probe_name);
                if (r < 0 && r != -ENOENT)
                        log_warning_errno(r, "Failed to remove probe %s/%s of %s: %m", d->probe_group,
                                          ev->probe_name, ev->wire_name);
        }
        encoder_free(ev->encoder);
        format_free(ev->format);
        probe_pmu_done(&ev->pmu);
        free(ev->probe_name);
        free(ev->definition);
        free(ev->wire_name);
        free(ev);
        return NULL;
}

/* Probes an earlier instance left (SIGKILL, power loss) are removed before
 * we create ours, so a restart never fails with EEXIST. Only our group and
 * the groups in our record are touched. */
static int daemon_clean_probes(struct daemon *d) {
        unsigned n = 0, m = 0;
        int r;

        if (d->probes_cleaned || d->check_only)
                return 0;
        d->probes_cleaned = true;
        r = probe_record_cleanup(d->tracefs, d->probe_record, &n);
        if (r < 0 && r != -EOPNOTSUPP)
                log_warning_errno(r, "Failed to remove the probes recorded in %s: %m", d->probe_record);
        r = probe_remove_group(d->tracefs, d->probe_group, &m);
        if (r < 0 && r != -EOPNOTSUPP)
                log_warning_errno(r, "Failed to remove stale probes of group %s: %m", d->probe_group);
        if (n + m > 0)
                log_notice("Removed %u probes an earlier evmond left behind", n + m);
        return 0;
}

static int daemon_reference_format(struct daemon *d, char **ret_error) {
        _cleanup_(strv_freep) char **names = NULL;
        int r;

        if (d->reference)
                return 0;
        r = tracefs_event_format(d->tracefs, "sched", "sched_process_exec", &d->reference);
        if (r >= 0)
                return 0;
        r = tracefs_list_events(d->tracefs, &names);
        for (char **n = names; r >= 0 && *n; n++) {
                _cleanup_(freep) char *sys = strdup(*n);
                char *colon = sys ? strchr(sys, ':') : NULL;
                if (colon) {
                        *colon = 0;
                        if (tracefs_event_format(d->tracefs, sys, colon + 1, &d->reference) >= 0)
                                return 0;
                }
        }
        r = asprintf(ret_error, "no readable event format in %s to take the common header from", tracefs_path(d->tracefs));
        return r < 0 ? -ENOMEM : -ENOENT;
}

/* Makes EV's probe through tracefs in our group. */
static int daemon_event_add_probe(struct daemon *d, struct daemon_event *ev, struct probe_spec *spec, char **ret_error) {
        const struct event_config *ec = ev->cfg;
        _cleanup_(freep) char *err = NULL;
        int r;

        (void) daemon_clean_probes(d);
        if (!d->check_only) {
                r = probe_record_group(d->probe_record, d->probe_group);
                if (r < 0)
                        log_warning_errno(r, "Failed to record probe group %s in %s: %m",
                                          d->probe_group, d->probe_record);
        }
        /* During a reload the old and the new definition of one probe
         * exist side by side: the new one takes NAME_1. */
        for (unsigned gen = 0;; gen++) {
                free(ev->probe_name);
                ev->probe_name = NULL;
                if (gen == 0)
                        ev->probe_name = strdup(ec->name);
                else if (asprintf(&ev->probe_name, "%.50s_%u", ec->name, gen) < 0)
                        ev->probe_name = NULL;
                if (!ev->probe_name)
                        return -ENOMEM;
                spec->name = ev->probe_name;
                free(err);
                err = NULL;
                r = probe_add(d->tracefs, d->probe_group, spec, &ev->format, &err);
                if (r != -EEXIST || gen >= 8)
                        break;
        }
        if (r < 0) {
                if (asprintf(ret_error, "%s: the kernel refused %s \"%s\": %s",
                             ec->where, event_kind_to_string(ec->kind), ec->target, err ?: strerror(-r)) < 0)
                        return -ENOMEM;
                return -EINVAL;
        }
        ev->probe_added = true;
        ev->source.type = PERF_TYPE_TRACEPOINT;
        ev->source.config = ev->format->id;
        return 0;
}

/* Builds one event's decoder and encoder, creating its probe where it is
 * one. Errors name the config entry. */
/* The "sample" object shows no field the daemon asked for on its own:
 * CGROUP serves cgroup targets and subscriptions, RAW is in "fields". */
static int daemon_event_encoder_new(struct daemon_event *ev) {
        int r = encoder_new(ev->wire_name, ev->format, &ev->encoder);

        if (r >= 0)
                encoder_set_sample_show(ev->encoder, ~(uint64_t) (PERF_SAMPLE_RAW | PERF_SAMPLE_CGROUP));
        return r;
}

static int daemon_event_new(struct daemon *d, struct event_config *ec, struct daemon_event **ret, char **ret_error) {
        struct daemon_event *ev;
        _cleanup_(freep) char *err = NULL;
        int r;

        ev = calloc(1, sizeof(*ev));
        if (!ev)
                return -ENOMEM;
        ev->handle = -1;
        ev->cfg = ec;
        ev->wire_name = strdup(ec->wire_name);
        ev->definition = event_definition(ec);
        if (!ev->wire_name || !ev->definition) {
                r = -ENOMEM;
                goto fail;
        }

        if (event_kind_is_perf(ec->kind)) {
                /* Built and checked by the config already; the kernel
                 * judges it when it is opened. */
                ev->attr = ec->attr;
                ev->source.attr = &ev->attr;
        } else if (ec->kind == EVENT_TRACEPOINT) {
                r = tracefs_event_format(d->tracefs, ec->system, ec->name, &ev->format);
                if (r == -ENOENT) {
                        r = asprintf(ret_error, "%s: no tracepoint \"%s\" in %s/events (`evmonctl list` shows the tracepoints of this kernel)",
                                     ec->where, ec->wire_name, tracefs_path(d->tracefs));
                        r = r < 0 ? -ENOMEM : -EINVAL;
                        goto fail;
                }
                if (r < 0) {
                        if (asprintf(ret_error, "%s: cannot read the format of \"%s\" from %s: %s",
                                     ec->where, ec->wire_name, tracefs_path(d->tracefs), strerror(-r)) < 0)
                                r = -ENOMEM;
                        goto fail;
                }
                ev->source.type = PERF_TYPE_TRACEPOINT;
                ev->source.config = ev->format->id;
        } else {
                struct probe_spec spec = {
                        .kind = probe_kind_of(ec->kind),
                        .name = ec->name,
                        .target = ec->target,
                        .fetch = ec->fetch,
                        .n_fetch = strv_length(ec->fetch),
                };
                uint32_t type;
                uint64_t mask;

                ev->probe_kind = spec.kind;
                if (spec.n_fetch == 0 && probe_pmu_type(NULL, spec.kind, &type, &mask) >= 0) {
                        /* No fetch-args: the fd-scoped PMU makes the probe, and it
                         * goes with the fd; nothing to clean up, ever. */
                        r = daemon_reference_format(d, &err);
                        if (r >= 0)
                                r = probe_pmu_attr(NULL, &spec, &ev->pmu, &err);
                        if (r >= 0)
                                r = probe_pmu_format(d->reference, spec.kind, ec->name, &ev->format);
                        if (r < 0) {
                                if (asprintf(ret_error, "%s: cannot set up %s \"%s\": %s", ec->where,
                                             event_kind_to_string(ec->kind), ec->target, err ?: strerror(-r)) < 0)
                                        r = -ENOMEM;
                                r = r == -ENOMEM ? r : -EINVAL;
                                goto fail;
                        }
                        ev->source.type = ev->pmu.type;
                        ev->source.config = ev->pmu.config;
                        ev->source.config1 = ev->pmu.config1;
                        ev->source.config2 = ev->pmu.config2;
                } else {
                        r = daemon_event_add_probe(d, ev, &spec, ret_error);
                        if (r < 0)
                                goto fail;
                }
        }
        ev->source.filter = ec->filter;
        ev->source.userdata = ev;

        r = daemon_event_encoder_new(ev);
        if (r < 0) {
                if (asprintf(ret_error, "%s: cannot build a decoder for \"%s\": %s",
                             ec->where, ec->wire_name, strerror(-r)) < 0)
                        r = -ENOMEM;
                goto fail;
        }
        *ret = ev;
        return 0;
fail:
        daemon_event_free(d, ev);
        return r;
}

/* Opens EV on every CPU (disabled). */
/* Where the kprobe/uprobe PMUs are refused (kernels that want
 * CAP_SYS_ADMIN for them, or paranoid settings), the same probe is made
 * through tracefs instead: same fields, same JSON. */
static int daemon_event_pmu_fallback(struct daemon *d, struct daemon_event *ev, char **ret_error) {
        struct probe_spec spec = {
                .kind = ev->probe_kind,
                .target = ev->cfg->target,
        };
        int r;

        log_notice("%s: the kernel refused the %s PMU; making %s through tracefs instead",
                   ev->cfg->where, probe_kind_is_uprobe(ev->probe_kind) ? "uprobe" : "kprobe", ev->wire_name);
        ev->encoder = encoder_free(ev->encoder);
        ev->format = format_free(ev->format);
        probe_pmu_done(&ev->pmu);
        r = daemon_event_add_probe(d, ev, &spec, ret_error);
        if (r < 0)
                return r;
        ev->source.config1 = ev->source.config2 = 0;
        return daemon_event_encoder_new(ev);
}

/* The leader of EV's group: the first entry with the same group name. */
static struct daemon_event *daemon_group_leader(struct daemon *d, struct daemon_event *ev) {
        if (!ev->cfg->group)
                return NULL;
        for (size_t i = 0; i < d->n_events; i++)
                if (d->events[i]->cfg->group && strcmp(d->events[i]->cfg->group, ev->cfg->group) == 0)
                        return d->events[i] == ev ? NULL : d->events[i];
        return NULL;
}

/* Why the kernel refused a perf event, in words a user can act on. */
static const char *perf_open_reason(const struct event_config *ec, int r) {
        switch (ec->kind) {
        case EVENT_HARDWARE:
        case EVENT_CACHE:
        case EVENT_RAW:
                if (r == -ENOENT || r == -EOPNOTSUPP || r == -ENODEV)
                        return "this machine has no hardware PMU for it (no cpu PMU in /sys/bus/event_source/devices: "
                               "a VM without a virtual PMU); software and PMU events still work";
                break;
        case EVENT_BREAKPOINT:
                if (r == -ENOSPC)
                        return "no free debug register on some CPU (each CPU has 4)";
                if (r == -EINVAL)
                        return "the kernel refuses this address, length or access";
                break;
        default:
                break;
        }
        switch (r) {
        case -EINVAL:
                return "the kernel refuses an option of this entry (a sample field, read format, exclude or "
                       "records option its PMU or this kernel does not support)";
        case -EOPNOTSUPP:
                return "its PMU does not support an option of this entry (sampling, precise_ip, branch stacks?)";
        case -EACCES:
        case -EPERM:
                return "not permitted (kernel.perf_event_paranoid, CAP_PERFMON)";
        case -ENOENT:
                return "the kernel has no such event";
        default:
                return NULL;
        }
}

static int daemon_event_open(struct daemon *d, struct daemon_event *ev, char **ret_error) {
        struct daemon_event *leader = daemon_group_leader(d, ev);
        int r;

        if (leader) {
                ev->source.in_group = true;
                ev->source.group = leader->handle;
        }
        r = monitor_add(d->monitor, &ev->source);
        if (r < 0 && event_kind_is_perf(ev->cfg->kind)) {
                const char *why = perf_open_reason(ev->cfg, r);

                r = asprintf(ret_error, "%s: the kernel refused %s (%s%s%s): %s%s%s", ev->cfg->where, ev->wire_name,
                             ev->cfg->count ? "counting" : "sampling", leader ? ", in group " : "",
                             leader ? ev->cfg->group : "", strerror(-r), why ? ": " : "", why ?: "");
                return r < 0 ? -ENOMEM : -EINVAL;
        }
        if ((r == -EACCES || r == -EPERM) && ev->cfg->kind != EVENT_TRACEPOINT && !ev->probe_added) {
                r = daemon_event_pmu_fallback(d, ev, ret_error);
                if (r < 0)
                        return r;
                r = monitor_add(d->monitor, &ev->source);
        }
        if (r >= 0) {
                ev->handle = r;
                return 0;
        }
        if (r == -EINVAL && ev->cfg->filter) {
                _cleanup_(freep) char *why = ev->cfg->kind == EVENT_TRACEPOINT
                        ? tracefs_filter_error(d->tracefs, ev->cfg->system, ev->cfg->name, ev->cfg->filter)
                        : ev->probe_added ? tracefs_filter_error(d->tracefs, d->probe_group, ev->probe_name, ev->cfg->filter)
                        : NULL;
                r = asprintf(ret_error, "%s: the kernel rejected the filter \"%s\" of %s%s%s (ftrace filter syntax, "
                             "Documentation/trace/events.rst; `evmonctl describe %s` lists the fields)",
                             ev->cfg->filter_where, ev->cfg->filter, ev->wire_name, why ? ": " : "", why ?: "",
                             ev->cfg->kind == EVENT_TRACEPOINT ? ev->wire_name : "SYSTEM:NAME");
        }
        else if (ev->cfg->kind != EVENT_TRACEPOINT && (r == -ENOENT || r == -EINVAL))
                r = asprintf(ret_error, "%s: the kernel cannot place %s \"%s\": %s (is the symbol in /proc/kallsyms or the file's symbol table?)",
                             ev->cfg->where, event_kind_to_string(ev->cfg->kind), ev->cfg->target, strerror(-r));
        else if (d->n_cgroup_fds > 0 && r == -ENOENT)
                r = asprintf(ret_error, "%s: failed to open %s for the cgroups in targets.cgroups: %s (the kernel finds no "
                             "perf_event controller there: on a host without systemd, enable a controller in the "
                             "parent's cgroup.subtree_control once, e.g. `echo +pids > %s/cgroup.subtree_control`)",
                             ev->cfg->where, ev->wire_name, strerror(-r), d->cgroup_mount);
        else
                r = asprintf(ret_error, "%s: failed to open %s on every CPU: %s", ev->cfg->where, ev->wire_name,
                             strerror(-r));
        return r < 0 ? -ENOMEM : -EINVAL;
}

static int daemon_prepare_events(struct daemon *d, char **ret_error) {
        struct config *c = d->config;
        int r;

        d->events = calloc(c->n_events, sizeof(*d->events));
        if (!d->events)
                return -ENOMEM;
        for (size_t i = 0; i < c->n_events; i++) {
                struct daemon_event *ev;

                r = daemon_event_new(d, &c->events[i], &ev, ret_error);
                if (r < 0)
                        return r;
                ev->index = (unsigned) i;
                d->events[d->n_events++] = ev;
        }
        return 0;
}

/* targets.cgroups are opened now, so a missing one is a config error;
 * targets.pids that are not running are left out with a warning. */
static int daemon_prepare_targets(struct daemon *d, char **ret_error) {
        struct config *c = d->config;
        int r;

        r = cgroup_find_mount(&d->cgroup_mount);
        if (r < 0 && r != -ENOENT)
                return r;
        if (c->cgroups && c->cgroups[0]) {
                size_t n = 0;

                while (c->cgroups[n])
                        n++;
                if (!d->cgroup_mount) {
                        r = asprintf(ret_error, "%s: no cgroup2 file system is mounted: cgroup targets need cgroup v2",
                                     c->cgroups_where[0]);
                        return r < 0 ? -ENOMEM : -EINVAL;
                }
                d->cgroup_fds = calloc(n, sizeof(int));
                if (!d->cgroup_fds)
                        return -ENOMEM;
                for (size_t i = 0; i < n; i++) {
                        _cleanup_(freep) char *dir = NULL;
                        int fd;

                        r = cgroup_resolve(d->cgroup_mount, c->cgroups[i], &dir);
                        if (r < 0) {
                                r = asprintf(ret_error, "%s: \"%s\" is not a cgroup path under %s",
                                             c->cgroups_where[i], c->cgroups[i], d->cgroup_mount);
                                return r < 0 ? -ENOMEM : -EINVAL;
                        }
                        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                        if (fd < 0) {
                                r = asprintf(ret_error, "%s: no cgroup %s (%s): create it, or fix the path (relative to %s)",
                                             c->cgroups_where[i], dir, strerror(errno), d->cgroup_mount);
                                return r < 0 ? -ENOMEM : -EINVAL;
                        }
                        d->cgroup_fds[d->n_cgroup_fds++] = fd;
                }
        }
        if (c->n_pids > 0) {
                d->pids = calloc(c->n_pids, sizeof(pid_t));
                if (!d->pids)
                        return -ENOMEM;
                for (size_t i = 0; i < c->n_pids; i++) {
                        if (kill(c->pids[i], 0) < 0 && errno == ESRCH) {
                                log_warning("%s: targets.pids[%zu]: no process %d is running; left out",
                                            c->path, i, (int) c->pids[i]);
                                continue;
                        }
                        d->pids[d->n_pids++] = c->pids[i];
                }
                /* Never fall back to system-wide because the targets are gone. */
                if (d->n_pids == 0 && !d->n_cgroup_fds) {
                        r = asprintf(ret_error, "%s: none of targets.pids is running: nothing to watch", c->path);
                        return r < 0 ? -ENOMEM : -EINVAL;
                }
        }
        return 0;
}

/* Our probes live in our own tracefs group ("evmon" for the default
 * socket, "evmon_HASH" for another); what we created is recorded beside
 * the socket (/run/evmon/probes). --check-config uses a group of its own
 * so it never touches a running daemon's probes. */
static int daemon_probe_setup(struct daemon *d) {
        const char *sock = d->config->socket_path, *slash = strrchr(sock, '/');

        if (d->check_only) {
                if (asprintf(&d->probe_group, "evmoncheck%d", (int) getpid()) < 0)
                        return -ENOMEM;
        } else if (strcmp(sock, EVMON_SOCKET_PATH_DEFAULT) == 0) {
                if (!(d->probe_group = strdup(PROBE_GROUP_DEFAULT)))
                        return -ENOMEM;
        } else {
                /* Another instance (its own socket) gets its own group, so
                 * two daemons never clean or extend each other's probes. */
                uint32_t h = 2166136261u;
                for (const char *p = sock; *p; p++)
                        h = (h ^ (uint8_t) *p) * 16777619u;
                if (asprintf(&d->probe_group, "%s_%08x", PROBE_GROUP_DEFAULT, h) < 0)
                        return -ENOMEM;
        }
        if (asprintf(&d->probe_record, "%.*s/probes", (int) (slash - sock), sock) < 0)
                return -ENOMEM;
        return 0;
}

static bool socket_is_live(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_(closep) int fd = -1;

        if (strlen(path) >= sizeof(sa.sun_path))
                return false;
        strcpy(sa.sun_path, path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        return fd >= 0 && connect(fd, (struct sockaddr *) &sa, sizeof(sa)) == 0;
}

/* tracefs_open()'s error R as its real cause and remedy: without root the
 * mount is there but closed to us (0700 root), which no mount would fix. */
static int tracefs_open_error(const char *dir, int r, char **ret_error) {
        _cleanup_(freep) char *mounted = NULL;
        int k;

        if (!dir) {
                _cleanup_(fclosep) FILE *f = fopen("/proc/mounts", "re");
                _cleanup_(freep) char *text = NULL;
                size_t n = 0;

                if (f && getdelim(&text, &n, 0, f) > 0)
                        (void) tracefs_find_mount(text, &mounted);
        }
        if (r == -EACCES || r == -EPERM)
                k = asprintf(ret_error, "%s: %s: evmond needs root to read tracefs, create probes and open perf events "
                             "(running as uid %u; start it as root, e.g. by evmond.service)",
                             dir ?: mounted ?: "tracefs (not mounted, and mounting it needs root)",
                             strerror(-r), (unsigned) geteuid());
        else if (dir)
                k = asprintf(ret_error, "cannot use %s as tracefs: %s", dir, strerror(-r));
        else if (mounted)
                k = asprintf(ret_error, "cannot use tracefs at %s: %s", mounted, strerror(-r));
        else
                k = asprintf(ret_error, "/proc/mounts: cannot find or mount tracefs: %s "
                             "(mount it with `mount -t tracefs nodev /sys/kernel/tracing`)", strerror(-r));
        return k < 0 ? -ENOMEM : r;
}

static int daemon_load_config(struct daemon *d, char **ret_error) {
        int r;

        *ret_error = NULL;
        r = config_load(d->args.config_path, &d->config, ret_error);
        if (r < 0)
                return r;
        if (d->args.socket_path) {
                char *p = strdup(d->args.socket_path);
                if (!p)
                        return -ENOMEM;
                free(d->config->socket_path);
                d->config->socket_path = p;
        }
        return daemon_probe_setup(d);
}

/* SOCKET.lock, held with flock() for as long as we run: the kernel lets it
 * go however we end (SIGKILL too), so --cleanup can tell a dead instance
 * from a live one even when systemd still holds the listening socket. */
static int daemon_lock(struct daemon *d, char **ret_error) {
        _cleanup_(freep) char *path = NULL, *dir = NULL;
        int fd, r;

        if (asprintf(&path, "%s.lock", d->config->socket_path) < 0)
                return -ENOMEM;
        dir = strdup(path);
        if (!dir)
                return -ENOMEM;
        *strrchr(dir, '/') = 0;
        if (*dir && mkdir(dir, 0755) < 0 && errno != EEXIST)
                r = -errno;
        else {
                fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
                if (fd < 0)
                        r = -errno;
                else if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                        r = -errno;
                        safe_close(fd);
                        if (r == -EWOULDBLOCK) {
                                r = asprintf(ret_error, "another evmond runs on %s (it holds %s): stop it first",
                                             d->config->socket_path, path);
                                return r < 0 ? -ENOMEM : -EBUSY;
                        }
                } else {
                        d->lock_fd = fd;
                        d->lock_path = TAKE_PTR(path);
                        return 0;
                }
        }
        r = asprintf(ret_error, "%s: cannot lock: %s", path, strerror(-r)) < 0 ? -ENOMEM : r;
        return r;
}

int daemon_prepare(struct daemon *d, char **ret_error) {
        int r;

        r = daemon_load_config(d, ret_error);
        if (r < 0)
                return r;
        /* A second daemon on a live socket must stop here, before it
         * touches the probes the first one owns. */
        if (!d->check_only && sd_listen_fds(false) <= 0 && socket_is_live(d->config->socket_path)) {
                r = asprintf(ret_error, "another evmond is serving on %s: stop it, or give this one another --socket",
                             d->config->socket_path);
                return r < 0 ? -ENOMEM : -EADDRINUSE;
        }
        if (!d->check_only) {
                r = daemon_lock(d, ret_error);
                if (r < 0)
                        return r;
        }
        r = tracefs_open(d->args.tracefs_dir, &d->tracefs);
        if (r < 0)
                return tracefs_open_error(d->args.tracefs_dir, r, ret_error);
        r = daemon_prepare_targets(d, ret_error);
        if (r < 0)
                return r;
        return daemon_prepare_events(d, ret_error);
}

int daemon_cleanup(struct daemon *d, unsigned *ret_removed, char **ret_error) {
        unsigned n = 0, m = 0;
        int r;

        *ret_removed = 0;
        r = daemon_load_config(d, ret_error);
        if (r < 0)
                return r;
        r = daemon_lock(d, ret_error);
        if (r < 0)
                return r;
        r = tracefs_open(d->args.tracefs_dir, &d->tracefs);
        if (r < 0)
                return tracefs_open_error(d->args.tracefs_dir, r, ret_error);
        r = probe_record_cleanup(d->tracefs, d->probe_record, &n);
        if (r < 0 && r != -EOPNOTSUPP)
                return asprintf(ret_error, "%s: cannot remove the probes recorded there: %s",
                                d->probe_record, strerror(-r)) < 0 ? -ENOMEM : r;
        r = probe_remove_group(d->tracefs, d->probe_group, &m);
        if (r < 0 && r != -EOPNOTSUPP)
                return asprintf(ret_error, "cannot remove the probes of group %s: %s",
                                d->probe_group, strerror(-r)) < 0 ? -ENOMEM : r;
        d->probes_cleaned = true;
        *ret_removed = n + m;
        return 0;
}

/* The kernel refuses a ring's mmap with EPERM when it is more locked memory
 * than the user may have: kernel.perf_event_mlock_kb per CPU for all the
 * user's rings, then the process's RLIMIT_MEMLOCK, unless it has
 * CAP_IPC_LOCK (perf_mmap() in kernel/events/core.c). */
static int ring_memlock_error(const char *config_path, unsigned ring_pages, char **ret_error) {
        _cleanup_(fclosep) FILE *f = fopen("/proc/sys/kernel/perf_event_mlock_kb", "re");
        unsigned long mlock_kb = 0;
        struct rlimit rl = {};
        char limit[32] = "unlimited";

        if (!f || fscanf(f, "%lu", &mlock_kb) != 1)
                mlock_kb = 0;
        if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
                snprintf(limit, sizeof(limit), "%llu KiB", (unsigned long long) rl.rlim_cur / 1024);
        return asprintf(ret_error, "%s: ring.pages: the per-CPU rings (%u pages and a header page, %zu KiB each) are more locked memory "
                        "than evmond may have: kernel.perf_event_mlock_kb is %lu KiB per CPU for all of the user's rings, "
                        "RLIMIT_MEMLOCK (LimitMEMLOCK= in the unit, `ulimit -l`) %s beyond that, and evmond lacks "
                        "CAP_IPC_LOCK: lower ring.pages, or raise one of the limits",
                        config_path, ring_pages, (ring_pages + (size_t) 1) * (size_t) sysconf(_SC_PAGESIZE) / 1024,
                        mlock_kb, limit) < 0 ? -ENOMEM : -EPERM;
}

static int daemon_open_events(struct daemon *d, unsigned ring_pages, char **ret_error) {
        struct monitor_opts mo = {
                .ring_pages = ring_pages,
                /* Woken when an eighth of a ring is full: at a busy CPU's
                 * rate that is ~2 ms of samples, leaving the rest of the
                 * ring for the times we wait for a CPU. */
                .wakeup_bytes = (uint32_t) (ring_pages * (size_t) sysconf(_SC_PAGESIZE) / 8),
                .clockid = d->config->clockid,
                .cgroup_fds = d->cgroup_fds,
                .n_cgroups = d->n_cgroup_fds,
                .pids = d->pids,
                .n_pids = d->n_pids,
                .sample_cgroup = d->cgroup_mount != NULL,
                /* Not for --check-config: no one would read them. */
                .doorbell = d->config->doorbell && !d->check_only,
        };
        int r;

        r = monitor_new(&mo, &d->monitor);
        if (r == -EPERM)
                return ring_memlock_error(d->config->path, mo.ring_pages, ret_error);
        if (r < 0) {
                if (asprintf(ret_error, "%s: failed to set up the per-CPU rings (%u pages each): %s",
                             d->config->path, mo.ring_pages, strerror(-r)) < 0)
                        return -ENOMEM;
                return r;
        }
        for (size_t i = 0; i < d->n_events; i++) {
                r = daemon_event_open(d, d->events[i], ret_error);
                if (r < 0)
                        return r;
        }
        return 0;
}

int daemon_check_open(struct daemon *d, char **ret_error) {
        int r;

        *ret_error = NULL;
        /* One page per ring is enough to let the kernel judge every event. */
        r = daemon_open_events(d, 1, ret_error);
        d->monitor = monitor_free(d->monitor);
        for (size_t i = 0; i < d->n_events; i++)
                d->events[i]->handle = -1;
        return r;
}

static int daemon_open_server(struct daemon *d) {
        struct config *c = d->config;
        struct server_opts so = {
                .path = c->socket_path,
                .mode = c->socket_mode,
                .gid = (gid_t) -1,
                .max_clients = c->max_clients,
                .queue_bytes = c->client_queue_bytes,
                .listen_fd = -1,
                .cgroup_mount = d->cgroup_mount,
        };
        int n, r;

        n = sd_listen_fds(true);
        if (n > 1)
                return log_error_errno(-EINVAL, "Got %d sockets from systemd; evmond.socket passes exactly one", n);
        if (n == 1) {
                if (sd_is_socket_unix(SD_LISTEN_FDS_START, SOCK_STREAM, 1, NULL, 0) <= 0)
                        return log_error_errno(-EINVAL, "The socket from systemd is not a listening Unix stream socket");
                so.listen_fd = SD_LISTEN_FDS_START;
                log_info("Using the socket passed by systemd");
        } else if (c->socket_group && *c->socket_group) {
                struct group *g = getgrnam(c->socket_group);
                if (g)
                        so.gid = g->gr_gid;
                else
                        log_warning("Group \"%s\" (socket.group) does not exist: the socket stays root's; "
                                    "create it with `groupadd --system %s`", c->socket_group, c->socket_group);
        }
        r = server_new(d->event, &so, &server_ops, d, &d->server);
        if (r == -EADDRINUSE)
                return log_error_errno(r, "Another evmond is serving on %s: stop it or pick another --socket", c->socket_path);
        if (r < 0)
                return log_error_errno(r, "Failed to listen on %s: %m", c->socket_path);
        return 0;
}

int daemon_start(struct daemon *d) {
        _cleanup_(freep) char *error = NULL;
        struct reader_opts ro;
        char status[256];
        sigset_t mask;
        int r;

        d->start_usec = now_ns(CLOCK_MONOTONIC) / 1000;
        r = sd_event_default(&d->event);
        if (r < 0)
                return log_error_errno(r, "Failed to create the event loop: %m");

        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        signal(SIGPIPE, SIG_IGN);
        if ((r = sd_event_add_signal(d->event, NULL, SIGTERM, on_terminate, d)) < 0 ||
            (r = sd_event_add_signal(d->event, NULL, SIGINT, on_terminate, d)) < 0 ||
            (r = sd_event_add_signal(d->event, NULL, SIGHUP, on_hangup, d)) < 0)
                return log_error_errno(r, "Failed to watch signals: %m");
        r = sd_event_set_watchdog(d->event, true);
        if (r < 0)
                log_warning_errno(r, "Failed to set up the systemd watchdog: %m");

        daemon_update_offset(d);
        r = daemon_open_events(d, d->config->ring_pages, &error);
        if (r < 0) {
                log_error("%s", error ?: strerror(-r));
                return r;
        }
        r = daemon_open_server(d);
        if (r < 0)
                return r;
        ro = daemon_reader_opts(d);
        r = reader_new(d->event, d->monitor, &handler, d, on_batch, &ro, &d->reader);
        if (r < 0)
                return log_error_errno(r, "Failed to watch the rings: %m");
        r = sd_event_add_time_relative(d->event, &d->tick_timer, CLOCK_MONOTONIC, 1000000, 100000, on_tick, d);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the status timer: %m");
        (void) sd_event_source_set_enabled(d->tick_timer, SD_EVENT_ON);
        r = sd_event_add_time_relative(d->event, &d->counter_timer, CLOCK_MONOTONIC,
                                       d->config->counter_interval_ms * 1000ull, 1000, on_counter_timer, d);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the counter timer: %m");
        /* Only counting events need it: an idle evmond wakes no more. */
        (void) sd_event_source_set_enabled(d->counter_timer, daemon_has_counters(d) ? SD_EVENT_ON : SD_EVENT_OFF);

        /* Enable last: every event is open and the socket serves. */
        for (size_t i = 0; i < d->n_events; i++) {
                r = monitor_enable(d->monitor, d->events[i]->handle);
                if (r < 0)
                        return log_error_errno(r, "Failed to enable %s: %m", d->events[i]->wire_name);
        }
        /* Everything that needs more is done: rings are mapped, the socket
         * is bound, tracefs is mounted. */
        if (!getenv("EVMON_KEEP_PRIVILEGES")) {
                _cleanup_(freep) char *kept = NULL;
                r = privs_drop(&kept);
                if (r < 0)
                        return log_error_errno(r, "Failed to drop capabilities: %m");
                log_debug("Capabilities now: %s", kept ?: "?");
        }
        daemon_status_text(d, status, sizeof(status));
        log_info("Serving %zu events on %s from %zu CPUs (config %s)", d->n_events, d->config->socket_path,
                 monitor_n_rings(d->monitor), d->config->path);
        notify_ready(status);
        return 0;
}

static bool strv_equal(char **a, char **b) {
        for (; a && *a && b && *b; a++, b++)
                if (strcmp(*a, *b) != 0)
                        return false;
        return (!a || !*a) && (!b || !*b);
}

/* The settings a running daemon cannot change without a restart: the
 * socket, the rings, the clock and the targets every fd was opened with. */
static const char *config_restart_key(const struct config *a, const struct config *b) {
        if (strcmp(a->socket_path, b->socket_path) != 0)
                return "socket.path";
        if (a->socket_mode != b->socket_mode)
                return "socket.mode";
        if (strcmp(a->socket_group ?: "", b->socket_group ?: "") != 0)
                return "socket.group";
        if (a->ring_pages != b->ring_pages)
                return "ring.pages";
        if (a->clockid != b->clockid)
                return "clock";
        if (a->max_clients != b->max_clients)
                return "clients.max";
        if (a->client_queue_bytes != b->client_queue_bytes)
                return "clients.queue_kib";
        if (!strv_equal(a->cgroups, b->cgroups))
                return "targets.cgroups";
        if (a->n_pids != b->n_pids || (a->n_pids && memcmp(a->pids, b->pids, a->n_pids * sizeof(pid_t)) != 0))
                return "targets.pids";
        return NULL;
}

int daemon_reload(struct daemon *d, char **ret_error) {
        _cleanup_(config_freep) struct config *nc = NULL;
        _cleanup_(freep) struct daemon_event **events = NULL;
        _cleanup_(freep) bool *kept = NULL;
        size_t n = 0, n_added = 0, n_removed = 0;
        const char *key;
        _cleanup_(jbuf_donep) struct jbuf line = {};
        _cleanup_(freep) const char **names = NULL;
        struct reader_opts ro;
        int r;

        *ret_error = NULL;
        d->reloads++;
        if (d->counter_timer)
                (void) sd_event_source_set_enabled(d->counter_timer,
                                                   daemon_has_counters(d) ? SD_EVENT_ON : SD_EVENT_OFF);
        r = config_load(d->args.config_path, &nc, ret_error);
        if (r < 0)
                goto fail;
        if (d->args.socket_path) {
                free(nc->socket_path);
                nc->socket_path = strdup(d->args.socket_path);
                if (!nc->socket_path) {
                        r = -ENOMEM;
                        goto fail;
                }
        }
        key = config_restart_key(d->config, nc);
        if (key) {
                r = asprintf(ret_error, "%s: %s changed: that takes a restart of evmond (`systemctl restart evmond`)",
                             nc->path, key);
                r = r < 0 ? -ENOMEM : -EINVAL;
                goto fail;
        }

        events = calloc(nc->n_events, sizeof(*events));
        kept = calloc(d->n_events ?: 1, sizeof(bool));
        if (!events || !kept) {
                r = -ENOMEM;
                goto fail;
        }
        /* New events are open and enabled before any old one closes, and an
         * event whose definition did not change keeps its fds: it loses
         * nothing over the reload. */
        for (size_t i = 0; i < nc->n_events; i++) {
                _cleanup_(freep) char *def = event_definition(&nc->events[i]);
                struct daemon_event *ev = NULL;

                if (!def) {
                        r = -ENOMEM;
                        goto rollback;
                }
                for (size_t j = 0; j < d->n_events && !ev; j++)
                        if (!kept[j] && strcmp(d->events[j]->definition, def) == 0) {
                                kept[j] = true;
                                ev = d->events[j];
                        }
                if (!ev) {
                        r = daemon_event_new(d, &nc->events[i], &ev, ret_error);
                        if (r < 0)
                                goto rollback;
                        events[n++] = ev;
                        r = daemon_event_open(d, ev, ret_error);
                        if (r < 0)
                                goto rollback;
                        r = monitor_enable(d->monitor, ev->handle);
                        if (r < 0) {
                                if (asprintf(ret_error, "%s: failed to enable %s: %s", ev->cfg->where, ev->wire_name,
                                             strerror(-r)) < 0)
                                        r = -ENOMEM;
                                goto rollback;
                        }
                        n_added++;
                } else
                        events[n++] = ev;
        }

        /* What the rings hold of the events about to go is still delivered. */
        reader_drain_all(d->reader);
        for (size_t j = 0; j < d->n_events; j++)
                if (!kept[j]) {
                        daemon_event_free(d, d->events[j]);
                        n_removed++;
                }
        for (size_t i = 0; i < n; i++) {
                events[i]->index = (unsigned) i;
                events[i]->cfg = &nc->events[i];
        }
        free(d->events);
        d->events = TAKE_PTR(events);
        d->n_events = n;
        config_free(d->config);
        d->config = TAKE_PTR(nc);
        server_events_changed(d->server);
        /* New periods, and a look soon: a new event may lack a doorbell. */
        ro = daemon_reader_opts(d);
        reader_set_opts(d->reader, &ro);

        log_info("Reloaded %s: %zu events served, %zu added, %zu removed", d->config->path, d->n_events, n_added, n_removed);
        names = daemon_event_names(d);
        if (names && encode_config(&line, names, d->n_events) >= 0) {
                server_broadcast_all(d->server, line.data, line.len);
                server_flush(d->server);
        }
        return 0;

rollback:
        /* Close what this reload opened; the running events are untouched. */
        for (size_t i = 0; i < n; i++) {
                bool old = false;
                for (size_t j = 0; j < d->n_events && !old; j++)
                        old = d->events[j] == events[i];
                if (!old)
                        daemon_event_free(d, events[i]);
        }
fail:
        d->reload_failures++;
        if (!*ret_error && r == -ENOMEM)
                *ret_error = strdup("out of memory");
        return r;
}

int daemon_run(struct daemon *d) {
        int r = sd_event_loop(d->event);
        if (r < 0)
                return log_error_errno(r, "Event loop failed: %m");
        return r;
}

void daemon_done(struct daemon *d) {
        d->reader = reader_free(d->reader);
        d->tick_timer = sd_event_source_disable_unref(d->tick_timer);
        d->counter_timer = sd_event_source_disable_unref(d->counter_timer);
        d->server = server_free(d->server);
        /* Every perf fd first: a probe with an open fd cannot be removed. */
        d->monitor = monitor_free(d->monitor);
        for (size_t i = 0; i < d->n_events; i++)
                daemon_event_free(d, d->events[i]);
        free(d->events);
        d->events = NULL;
        d->n_events = 0;
        if (d->probe_record && !d->check_only)
                (void) probe_record_cleanup(d->tracefs, d->probe_record, NULL);
        free(d->probe_record);
        free(d->probe_group);
        if (d->lock_path) {
                (void) unlink(d->lock_path);
                d->lock_fd = safe_close(d->lock_fd);
                free(d->lock_path);
                d->lock_path = NULL;
        }
        d->reference = format_free(d->reference);
        for (size_t i = 0; i < d->n_cgroup_fds; i++)
                safe_close(d->cgroup_fds[i]);
        free(d->cgroup_fds);
        free(d->cgroup_mount);
        free(d->pids);
        d->tracefs = tracefs_free(d->tracefs);
        d->config = config_free(d->config);
        jbuf_done(&d->line);
        d->event = sd_event_unref(d->event);
}
