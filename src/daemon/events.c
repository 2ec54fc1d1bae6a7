/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The served events' lifecycle: built from a config entry (decoder,
 * encoder, the probe or PMU attr), opened on every CPU, destroyed (fds and
 * probe) and freed. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/hw_breakpoint.h>

#include "daemon.h"
#include "events.h"
#include "follow.h"
#include "evmon/error.h"
#include "evmon/log.h"
#include "evmon/strv.h"

char *event_definition(const struct event_config *ec) {
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
        if (event_config_has_attr(ec)) {
                const uint8_t *a = (const uint8_t *) &ec->attr;

                *p++ = '\n';
                for (size_t i = 0; i < sizeof(ec->attr); i++)
                        p += sprintf(p, "%02x", a[i]);
                *p++ = ec->count ? 'c' : 's';
                p = stpcpy(p, ec->group ?: "");
        }
        return s;
}

void daemon_event_destroy(struct daemon *d, struct daemon_event *ev) {
        if (!ev)
                return;
        if (ev->handle >= 0 && d->monitor)
                (void) monitor_remove(d->monitor, ev->handle);
        ev->handle = -1;
        follow_stop(ev->follow);
        daemon_event_remove_probe(d, ev);
}

struct daemon_event *daemon_event_free(struct daemon_event *ev) {
        if (!ev)
                return NULL;
        follow_free(ev->follow);
        free(ev->counter_carry_fds);
        free(ev->counter_seen_fds);
        encoder_free(ev->encoder);
        jbuf_done(&ev->schema);
        format_free(ev->format);
        probe_pmu_done(&ev->pmu);
        safe_close(ev->target_fd);
        safe_close(ev->target_dir_fd);
        free(ev->target_path);
        free(ev->target);
        free(ev->probe_name);
        free(ev->kernel_filter);
        free(ev->definition);
        free(ev->wire_name);
        free(ev);
        return NULL;
}

const char *daemon_event_id_name(uint64_t id, void *userdata) {
        struct daemon *d = userdata;
        void *event = d->monitor ? monitor_id_userdata(d->monitor, id) : NULL;

        if (!event || event == &d->ctx.tag_dummy || event == &d->ctx.tag_exec)
                return NULL;
        return ((const struct daemon_event *) event)->wire_name;
}

/* The "sample" object shows what the entry's "sample" asked for, and no
 * field the daemon asked for on its own: CGROUP serves cgroup targets and
 * subscriptions, RAW of a trace event is in "fields". A perf event's
 * attr is the config's (source_attr() adds the daemon's own bits to the
 * copy it opens), so its own RAW and CGROUP stay. */
static int daemon_event_encoder_new(struct daemon *d, struct daemon_event *ev) {
        static uint64_t schema_gens;
        uint64_t sample_type, show;
        int r = encoder_new(ev->wire_name, ev->format, &ev->encoder);

        if (r < 0)
                return r;
        show = ~(uint64_t) (PERF_SAMPLE_RAW | PERF_SAMPLE_CGROUP);
        if (ev->source.attr)
                show = ev->source.attr->sample_type & ~(uint64_t) (ev->format ? PERF_SAMPLE_RAW : 0);
        /* DWARF unwinding's registers and stack are evmond's, not the
         * line's: the callchain says what came of them. */
        if (ev->cfg->dwarf)
                show &= ~(uint64_t) (PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER);
        encoder_set_sample_show(ev->encoder, show);
        encoder_set_ids(ev->encoder, &(const struct encode_ids) { .name = daemon_event_id_name, .userdata = d });
        /* The schema line clients get before the event's lines: the
         * sample fields of a perf event's attr (a trace event's lines
         * carry none but its raw data, in "fields"). */
        sample_type = ev->source.attr ? ev->source.attr->sample_type : 0;
        ev->schema.len = 0;
        r = encode_schema(&ev->schema, ev->wire_name, ev->format, sample_type & encoder_sample_show(ev->encoder));
        if (r < 0)
                return r;
        ev->schema_gen = ++schema_gens;
        return 0;
}

static int event_source_tracepoint(struct daemon *d, struct daemon_event *ev, char **ret_error) {
        const struct event_config *ec = ev->cfg;
        int r;

        r = tracefs_event_format(d->tracefs, ec->system, ec->name, &ev->format);
        if (r == -ENOENT)
                return error_set(ret_error, -EINVAL, "%s: no tracepoint \"%s\" in %s/events (`evmonctl list` shows the tracepoints of this kernel)",
                                 ec->where, ec->wire_name, tracefs_path(d->tracefs));
        if (r < 0) {
                return error_set(ret_error, r, "%s: cannot read the format of \"%s\" from %s: %s",
                                 ec->where, ec->wire_name, tracefs_path(d->tracefs), strerror(-r));
        }
        ev->source.type = PERF_TYPE_TRACEPOINT;
        ev->source.config = ev->format->id;
        return 0;
}

/* No fetch-args: the fd-scoped PMU makes the probe, and it goes with the
 * fd; nothing to clean up, ever. */
static int event_source_probe_pmu(struct daemon *d, struct daemon_event *ev, const struct probe_spec *spec,
                                  char **ret_error) {
        const struct event_config *ec = ev->cfg;
        _cleanup_(freep) char *err = NULL;
        int r;

        r = daemon_reference_format(d, &err);
        if (r >= 0)
                r = probe_pmu_attr(NULL, spec, &ev->pmu, &err);
        if (r >= 0)
                r = probe_pmu_format(d->probes.reference, spec->kind, ec->name, &ev->format);
        if (r < 0)
                return error_set(ret_error, r == -ENOMEM ? r : -EINVAL, "%s: cannot set up %s \"%s\": %s", ec->where,
                                 event_kind_to_string(ec->kind), ec->target, err ?: strerror(-r));
        ev->source.type = ev->pmu.type;
        ev->source.config = ev->pmu.config;
        ev->source.config1 = ev->pmu.config1;
        ev->source.config2 = ev->pmu.config2;
        return 0;
}

/* Opens EV's uprobe file once, as an untrusted one (a user's link to
 * another's file, a FIFO, a directory refused: issue 26), and resolves its
 * symbol in that open file: EV's target is then "/proc/self/fd/N:0xOFF". */
static int event_open_target(struct daemon_event *ev, char **ret_error) {
        const struct event_config *ec = ev->cfg;
        _cleanup_(probe_target_done) struct probe_target t = {};
        _cleanup_(freep) char *err = NULL;
        uint64_t off = 0;
        int r;

        r = probe_parse_target(ev->probe_kind, ec->target, &t, &err);
        if (r >= 0) {
                r = elf_open_target(t.path, &ev->target_dir_fd, &ev->target_path, NULL, &err);
                if (r >= 0)
                        ev->target_fd = r;
        }
        if (r >= 0 && t.symbol) {
                free(err);
                err = NULL;
                r = elf_resolve_symbol_fd(ev->target_fd, ev->target_path, t.symbol, &off, &err);
        }
        if (r >= 0 && asprintf(&ev->target, "/proc/self/fd/%d:0x%" PRIx64, ev->target_fd, t.offset + off) < 0) {
                ev->target = NULL;
                r = -ENOMEM;
        }
        if (r < 0)
                return error_set(ret_error, r == -ENOMEM ? r : -EINVAL, "%s: cannot set up %s \"%s\": %s", ec->where,
                                 event_kind_to_string(ec->kind), ec->target, err ?: strerror(-r));
        return 0;
}

static int event_source_probe(struct daemon *d, struct daemon_event *ev, char **ret_error) {
        const struct event_config *ec = ev->cfg;
        struct probe_spec spec = {
                .kind = probe_kind_of(ec->kind),
                .name = ec->name,
                .target = ec->target,
                .fetch = ec->fetch,
                .n_fetch = strv_length(ec->fetch),
        };
        uint32_t type;
        uint64_t mask;
        int r;

        ev->probe_kind = spec.kind;
        if (probe_kind_is_uprobe(spec.kind)) {
                r = event_open_target(ev, ret_error);
                if (r < 0)
                        return r;
                spec.target = ev->target;
                spec.target_resolved = true;
        }
        if (spec.n_fetch == 0 && probe_pmu_type(NULL, spec.kind, &type, &mask) >= 0)
                return event_source_probe_pmu(d, ev, &spec, ret_error);
        return daemon_event_add_probe(d, ev, &spec, ret_error);
}

/* What the event is to perf_event_open: its type and config. */
static int event_source(struct daemon *d, struct daemon_event *ev, char **ret_error) {
        if (event_kind_is_perf(ev->cfg->kind)) {
                /* Built and checked by the config already; the kernel
                 * judges it when it is opened. */
                ev->attr = ev->cfg->attr;
                ev->source.attr = &ev->attr;
                return 0;
        }
        if (ev->cfg->perf_options) {
                /* The entry's perf options over the tracepoint's or
                 * probe's type and config, which the source keeps. */
                ev->attr = ev->cfg->attr;
                ev->source.attr = &ev->attr;
                ev->source.attr_options = true;
        }
        if (ev->cfg->kind == EVENT_TRACEPOINT)
                return event_source_tracepoint(d, ev, ret_error);
        return event_source_probe(d, ev, ret_error);
}

/* Whether F of a sched: event names a task as a 4-byte int (prev_pid,
 * next_pid, pid, parent_pid, ...): a switch to evmond is evmond's as much
 * as one from it. Only sched: events: a "pid" elsewhere (kill(2)'s
 * target, say) is what someone did to evmond, which a monitor must show. */
static bool field_names_task(const struct format *fmt, const struct format_field *f) {
        size_t n = strlen(f->name);

        return fmt->system && strcmp(fmt->system, "sched") == 0 && !f->common && f->kind == FIELD_INT &&
               f->size == 4 && n >= 3 && strcmp(f->name + n - 3, "pid") == 0;
}

/* Leaves evmond's own activity out in the kernel, where a trace event's
 * filter can (the filter is the event's, shared by every client, so only
 * evmond's pid goes in it; its clients' pids are left out per client in
 * server.c): "(FILTER) && common_pid != PID", and the sched: fields that
 * name a task. The config's "self": true keeps it all. */
static int event_self_filter(struct daemon *d, struct daemon_event *ev) {
        const struct event_config *ec = ev->cfg;
        const struct format *fmt = ev->format;
        _cleanup_(freep) char *f = NULL;
        size_t size = 0;
        bool has_common_pid = false;
        FILE *m;

        ev->source.filter = ec->filter;
        ev->n_self_offs = 0;
        if (d->config->self || !fmt)
                return 0;
        for (size_t i = 0; i < fmt->n_fields; i++) {
                const struct format_field *x = &fmt->fields[i];

                has_common_pid = has_common_pid || (x->common && strcmp(x->name, "common_pid") == 0);
                if (field_names_task(fmt, x) && ev->n_self_offs < EVENT_SELF_FIELDS_MAX)
                        ev->self_offs[ev->n_self_offs++] = x->offset;
        }
        if (!has_common_pid)
                return 0;
        m = open_memstream(&f, &size);
        if (!m)
                return -ENOMEM;
        if (ec->filter)
                fprintf(m, "(%s) && ", ec->filter);
        fprintf(m, "common_pid != %d", (int) getpid());
        for (size_t i = 0; i < fmt->n_fields; i++)
                if (field_names_task(fmt, &fmt->fields[i]))
                        fprintf(m, " && %s != %d", fmt->fields[i].name, (int) getpid());
        if (fclose(m) != 0)
                return -ENOMEM;
        free(ev->kernel_filter);
        ev->kernel_filter = TAKE_PTR(f);
        ev->source.filter = ev->kernel_filter;
        return 0;
}

int daemon_event_new(struct daemon *d, struct event_config *ec, struct daemon_event **ret, char **ret_error) {
        _cleanup_(daemon_event_freep) struct daemon_event *ev = NULL;
        int r;

        ev = calloc(1, sizeof(*ev));
        if (!ev)
                return -ENOMEM;
        ev->handle = ev->target_fd = ev->target_dir_fd = -1;
        ev->cfg = ec;
        ev->wire_name = strdup(ec->wire_name);
        ev->definition = event_definition(ec);
        if (!ev->wire_name || !ev->definition)
                return -ENOMEM;
        r = event_source(d, ev, ret_error);
        if (r < 0)
                return r;
        r = event_self_filter(d, ev);
        if (r < 0)
                return r;
        ev->source.userdata = ev;

        r = daemon_event_encoder_new(d, ev);
        if (r < 0) {
                /* The probe made above. */
                daemon_event_destroy(d, ev);
                return error_set(ret_error, r, "%s: cannot build a decoder for \"%s\": %s",
                                 ec->where, ec->wire_name, strerror(-r));
        }
        *ret = TAKE_PTR(ev);
        return 0;
}

/* Where the kprobe/uprobe PMUs are refused (kernels that want
 * CAP_SYS_ADMIN for them, or paranoid settings), the same probe is made
 * through tracefs instead: same fields, same JSON. */
static int daemon_event_pmu_fallback(struct daemon *d, struct daemon_event *ev, char **ret_error) {
        struct probe_spec spec = {
                .kind = ev->probe_kind,
                .target = ev->target ?: ev->cfg->target,
                .target_resolved = ev->target,
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
        return daemon_event_encoder_new(d, ev);
}

struct daemon_event *daemon_group_leader(struct daemon_event *const *events, size_t n, const struct daemon_event *ev) {
        if (!ev->cfg->group)
                return NULL;
        for (size_t i = 0; i < n; i++)
                if (events[i]->cfg->group && strcmp(events[i]->cfg->group, ev->cfg->group) == 0)
                        return events[i] == ev ? NULL : events[i];
        return NULL;
}

/* A kernel.* sysctl's value, or 0 when it cannot be read. */
static uint64_t sysctl_u64(const char *name) {
        char path[128];
        unsigned long long v = 0;
        FILE *f;

        snprintf(path, sizeof(path), "/proc/sys/kernel/%s", name);
        f = fopen(path, "re");
        if (!f)
                return 0;
        if (fscanf(f, "%llu", &v) != 1)
                v = 0;
        fclose(f);
        return v;
}

/* Why the kernel refused a perf event, in words a user can act on; in BUF
 * where it takes numbers. */
static const char *perf_open_reason(const struct config *c, const struct event_config *ec, int r, char *buf,
                                    size_t size) {
        const struct perf_event_attr *a = &ec->attr;
        uint64_t limit;

        /* perf_event_set_clock(): see config.c's check_clock(). */
        if (r == -EINVAL && !config_clock_nmi_safe(c->clockid) && ec->kind != EVENT_SOFTWARE) {
                snprintf(buf, size, "the kernel stamps events of this PMU with the clock monotonic or monotonic_raw "
                         "only, not the config's \"clock\" \"%s\"%s", c->clock_name ?: "?",
                         ec->kind == EVENT_PMU ? " (or it refuses another option of this entry)" : "");
                return buf;
        }

        /* perf_event_open(): a frequency above the sample rate the kernel
         * allows is EINVAL, and the kernel lowers that limit on its own
         * when sampling interrupts take too long (perf_sample_event_took()). */
        if (r == -EINVAL && a->freq && (limit = sysctl_u64("perf_event_max_sample_rate")) > 0 &&
            a->sample_freq > limit) {
                snprintf(buf, size, "\"freq\" %llu is above kernel.perf_event_max_sample_rate (%llu): lower it, or raise "
                         "the limit (sysctl kernel.perf_event_max_sample_rate=N)",
                         (unsigned long long) a->sample_freq, (unsigned long long) limit);
                return buf;
        }
        /* A callchain deeper than kernel.perf_event_max_stack is EOVERFLOW
         * (perf_event_open(), get_callchain_buffers()). */
        if (r == -EOVERFLOW && (a->sample_type & PERF_SAMPLE_CALLCHAIN)) {
                limit = sysctl_u64("perf_event_max_stack");
                snprintf(buf, size, "\"callchain\" max_stack %u is above kernel.perf_event_max_stack (%llu): lower it, "
                         "or raise the limit (sysctl kernel.perf_event_max_stack=N)",
                         (unsigned) a->sample_max_stack, (unsigned long long) limit);
                return buf;
        }
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
#if defined(__x86_64__) || defined(__i386__)
                /* hw_breakpoint_arch_parse() and arch_build_bp_info() of
                 * arch/x86/kernel/hw_breakpoint.c. */
                if (r == -EINVAL && a->bp_type == HW_BREAKPOINT_R)
                        return "x86 debug registers cannot watch reads alone, only writes (\"w\") or reads and writes "
                               "(\"rw\"): use \"rw\"";
                if (r == -EINVAL && a->bp_type == HW_BREAKPOINT_X && a->bp_len != sizeof(long)) {
                        snprintf(buf, size, "an execute breakpoint covers one long on x86: \"len\" %zu (the default)",
                                 sizeof(long));
                        return buf;
                }
                if (r == -EINVAL && a->bp_len > 0 && a->bp_addr % a->bp_len != 0) {
                        snprintf(buf, size, "the address 0x%llx is not a multiple of \"len\" %u: x86 watches aligned "
                                 "ranges only", (unsigned long long) a->bp_addr, (unsigned) a->bp_len);
                        return buf;
                }
#endif
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
        case -ESRCH:
                return "every process in targets.pids has exited since evmond started (restart evmond to watch others)";
        case -ENOENT:
                return "the kernel has no such event";
        default:
                return NULL;
        }
}

/* Why monitor_add() refused EV with R, in *ret_error. */
static int event_open_error(struct daemon *d, struct daemon_event *ev, int r, char **ret_error) {
        const struct event_config *ec = ev->cfg;

        /* perf_event_set_clock(): see config.c's check_clock(). */
        if (r == -EINVAL && !config_clock_nmi_safe(d->config->clockid))
                return error_set(ret_error, -EINVAL, "%s: the kernel refused %s: it stamps a %s with the clock "
                                 "monotonic or monotonic_raw only, not the config's \"clock\" \"%s\"", ec->where,
                                 ev->wire_name, event_kind_to_string(ec->kind), d->config->clock_name ?: "?");
        if (r == -EINVAL && ec->filter) {
                _cleanup_(freep) char *why = ec->kind == EVENT_TRACEPOINT
                        ? tracefs_filter_error(d->tracefs, ec->system, ec->name, ec->filter)
                        : ev->probe_added ? tracefs_filter_error(d->tracefs, d->probes.group, ev->probe_name, ec->filter)
                        : NULL;
                return error_set(ret_error, -EINVAL, "%s: the kernel rejected the filter \"%s\" of %s%s%s (ftrace filter "
                                 "syntax, Documentation/trace/events.rst; `evmonctl describe %s` lists the fields)",
                                 ec->filter_where, ec->filter, ev->wire_name, why ? ": " : "", why ?: "",
                                 ec->kind == EVENT_TRACEPOINT ? ev->wire_name : "SYSTEM:NAME");
        }
        if (ec->kind != EVENT_TRACEPOINT && (r == -ENOENT || r == -EINVAL))
                return error_set(ret_error, -EINVAL, "%s: the kernel cannot place %s \"%s\": %s (is the symbol in "
                                 "/proc/kallsyms or the file's symbol table?)",
                                 ec->where, event_kind_to_string(ec->kind), ec->target, strerror(-r));
        if (d->targets.n_pids > 0 && r == -ESRCH)
                return error_set(ret_error, -EINVAL, "%s: cannot open %s: every process in targets.pids has exited "
                                 "since evmond started (restart evmond to watch others)", ec->where, ev->wire_name);
        /* A cgroup removed since evmond opened it is gone for good: its
         * files are (a new one at the path is another cgroup). */
        for (size_t i = 0; r == -ENOENT && i < d->targets.n_cgroup_fds; i++)
                if (faccessat(d->targets.cgroup_fds[i], "cgroup.procs", F_OK, 0) < 0 && errno == ENOENT)
                        return error_set(ret_error, -EINVAL, "%s: cannot open %s: the cgroup \"%s\" "
                                         "(targets.cgroups[%zu]) was removed since evmond started (restart evmond "
                                         "to watch a cgroup at that path again)", ec->where, ev->wire_name,
                                         d->config->cgroups[i], i);
        if (d->targets.n_cgroup_fds > 0 && r == -ENOENT)
                return error_set(ret_error, -EINVAL, "%s: failed to open %s for the cgroups in targets.cgroups: %s (the "
                                 "kernel finds no perf_event controller there: on a host without systemd, enable a "
                                 "controller in the parent's cgroup.subtree_control once, e.g. `echo +pids > "
                                 "%s/cgroup.subtree_control`)", ec->where, ev->wire_name, strerror(-r), d->targets.cgroup_mount);
        return error_set(ret_error, -EINVAL, "%s: failed to open %s on every CPU: %s", ec->where, ev->wire_name,
                         strerror(-r));
}

int daemon_event_open(struct daemon *d, struct daemon_event *ev, struct daemon_event *leader, char **ret_error) {
        int r;

        if (leader) {
                ev->source.in_group = true;
                ev->source.group = leader->handle;
        }
        r = monitor_add(d->monitor, &ev->source);
        /* A trace event's perf options, refused: what they ask for, not
         * the filter or the probe's place (event_open_error()). */
        if (r < 0 && (event_kind_is_perf(ev->cfg->kind) ||
                      (ev->cfg->perf_options && config_clock_nmi_safe(d->config->clockid) &&
                       (r == -EOVERFLOW || r == -EOPNOTSUPP ||
                        (r == -EINVAL && !ev->cfg->filter && ev->cfg->kind == EVENT_TRACEPOINT))))) {
                char buf[256];
                const char *why = perf_open_reason(d->config, ev->cfg, r, buf, sizeof(buf));

                return error_set(ret_error, -EINVAL, "%s: the kernel refused %s (%s%s%s): %s%s%s", ev->cfg->where, ev->wire_name,
                                 ev->cfg->count ? "counting" : "sampling", leader ? ", in group " : "",
                                 leader ? ev->cfg->group : "", strerror(-r), why ? ": " : "", why ?: "");
        }
        if ((r == -EACCES || r == -EPERM) && ev->cfg->kind != EVENT_TRACEPOINT && !ev->probe_added) {
                r = daemon_event_pmu_fallback(d, ev, ret_error);
                if (r < 0)
                        return r;
                r = monitor_add(d->monitor, &ev->source);
        }
        if (r < 0)
                return event_open_error(d, ev, r, ret_error);
        ev->handle = r;
        r = follow_start(d, ev);
        if (r < 0)
                log_warning_errno(r, "%s: cannot watch the file of %s: %m; a new file renamed over it will not be "
                                  "probed", ev->cfg->where, ev->wire_name);
        return 0;
}

int daemon_prepare_events(struct daemon *d, char **ret_error) {
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

void daemon_events_done(struct daemon *d) {
        for (size_t i = 0; i < d->n_events; i++) {
                daemon_event_destroy(d, d->events[i]);
                daemon_event_free(d->events[i]);
        }
        free(d->events);
        d->events = NULL;
        d->n_events = 0;
}
