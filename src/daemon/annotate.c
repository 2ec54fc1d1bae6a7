/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The daemon's side of src/context/ (annotate.h says what it does). */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>

#include "annotate.h"
#include "daemon.h"
#include "evmon/error.h"
#include "evmon/log.h"

static int symbols_new(struct daemon_context *x, bool kernel);

static bool want_symbols(const struct daemon *d) {
        for (size_t i = 0; i < d->n_events; i++)
                if (d->events[i]->cfg->symbols || d->events[i]->cfg->dwarf)
                        return true;
        return false;
}

int daemon_context_open(struct daemon *d, char **ret_error) {
        struct daemon_context *x = &d->ctx;
        struct ctx_opts co = { .cgroup2_mount = d->targets.cgroup_mount };
        struct perf_event_attr a = {
                .type = PERF_TYPE_SOFTWARE,
                .size = sizeof(a),
                .config = PERF_COUNT_SW_DUMMY,
                /* No sampling: the dummy only carries side records, and so
                 * needs no doorbell of its own (monitor.c). */
                .sample_period = 0,
                .comm = 1,
                .comm_exec = 1,
                .task = 1,
                .cgroup = 1,
        };
        /* Quiet: its records are read with the events they explain, or by
         * the sweep, and never keep the reader's tick going by themselves. */
        struct monitor_source src = { .attr = &a, .userdata = &x->tag_dummy, .quiet = true };
        int r;

        x->dummy = x->exec = -1;
        x->cache = calloc(CONTEXT_CACHE_SLOTS, sizeof(*x->cache));
        if (!x->cache)
                return -ENOMEM;
        r = context_new(&co, &x->table);
        if (r < 0)
                return r;
        r = ctx_runstate_new(NULL, &x->runstate);
        if (r < 0)
                /* Lines keep their container ids, without names. */
                log_warning_errno(r, "context: cannot open the root for the container runtimes' state (%m): "
                                  "containers are not named");
        if (want_symbols(d)) {
                /* Executable mappings as they are made, for processes that
                 * are gone before their samples are read. */
                a.mmap = 1;
                a.mmap2 = 1;
                (void) symbols_new(x, true);
        }
        r = monitor_add(d->monitor, &src);
        if (r == -EINVAL) {
                /* PERF_RECORD_CGROUP is Linux 5.7: without it, cgroups
                 * come from /proc at first sight and from sample ids. */
                a.cgroup = 0;
                r = monitor_add(d->monitor, &src);
        }
        if (r < 0)
                return error_set(ret_error, r, "%s: context: cannot open the dummy event that brings process records: %s "
                                 "(set \"context\": false to run without process context)",
                                 d->config->path, strerror(-r));
        x->dummy = r;

        r = tracefs_event_format(d->tracefs, "sched", "sched_process_exec", &x->exec_format);
        if (r >= 0)
                x->exec_filename = format_field_find(x->exec_format, "filename");
        if (r < 0 || !x->exec_filename) {
                /* Executables then come from /proc at first sight only. */
                log_warning("context: no sched:sched_process_exec tracepoint with a filename (%s): executables of "
                            "processes started from now on are not known", r < 0 ? strerror(-r) : "no such field");
                return 0;
        }
        src = (struct monitor_source) {
                .type = PERF_TYPE_TRACEPOINT,
                .config = x->exec_format->id,
                .userdata = &x->tag_exec,
                /* Read with the events it explains, or by the sweep: on a
                 * busy host execs would otherwise wake evmond for no client. */
                .quiet = true,
        };
        r = monitor_add(d->monitor, &src);
        if (r == -EINVAL && !config_clock_nmi_safe(d->config->clockid))
                /* perf_event_set_clock(): see config.c's check_clock(). */
                log_warning("context: cannot open sched:sched_process_exec: the kernel stamps tracepoints with the "
                            "clock monotonic or monotonic_raw only, not the config's \"clock\" \"%s\": executables "
                            "of processes started from now on are not known", d->config->clock_name ?: "?");
        else if (r < 0)
                log_warning_errno(r, "context: cannot open sched:sched_process_exec (%m): executables of processes "
                                  "started from now on are not known");
        else
                x->exec = r;
        return 0;
}

void daemon_context_open_symbols(struct daemon *d) {
        struct daemon_context *x = &d->ctx;

        if (!x->symbols && !x->symbols_failed && want_symbols(d))
                (void) symbols_new(x, true);
}

int daemon_context_enable(struct daemon *d) {
        struct daemon_context *x = &d->ctx;
        int r;

        if (!x->table)
                return 0;
        if (x->dummy >= 0 && (r = monitor_enable(d->monitor, x->dummy)) < 0)
                return log_error_errno(r, "Failed to enable the context dummy event: %m");
        if (x->exec >= 0 && (r = monitor_enable(d->monitor, x->exec)) < 0)
                return log_error_errno(r, "Failed to enable sched:sched_process_exec for context: %m");
        /* After the records flow: a process made while we read /proc is
         * in the records, one gone before is in neither. */
        r = context_seed(x->table);
        if (r < 0)
                return log_error_errno(r, "Failed to read /proc for the process table: %m");
        log_debug("context: %d processes from /proc", r);
        return 0;
}

void daemon_context_done(struct daemon *d) {
        struct daemon_context *x = &d->ctx;

        x->table = context_free(x->table);
        x->runstate = ctx_runstate_free(x->runstate);
        x->memo.valid = false;  /* its pointers were the table's */
        free(x->cache);
        x->cache = NULL;
        jbuf_done(&x->scratch);
        x->symbols = ctx_symbols_free(x->symbols);
        x->exec_format = format_free(x->exec_format);
        x->exec_filename = NULL;
        free(x->cframes);
        free(x->frames);
        free(x->unwound);
        x->cframes = NULL;
        x->frames = NULL;
        x->unwound = NULL;
        x->cap = 0;
        x->dummy = x->exec = -1;
}

bool daemon_context_sample(struct daemon *d, void *event, const struct perf_sample *s) {
        struct daemon_context *x = &d->ctx;
        struct field_value v;

        if (event == &x->tag_dummy)
                return true;
        if (event != &x->tag_exec)
                return false;
        if (x->table && field_decode(x->exec_filename, s->raw.data, s->raw.size, &v) >= 0)
                context_exec(x->table, (pid_t) s->pid, v.str.ptr, v.str.len, s->time);
        return true;
}

bool daemon_context_record(struct daemon *d, void *event, const struct perf_record *r) {
        struct daemon_context *x = &d->ctx;

        if (event != &x->tag_dummy && event != &x->tag_exec)
                return false;
        if (!x->table)
                return true;
        context_record(x->table, r);
        if (!x->symbols)
                return true;
        switch (r->type) {
        case PERF_RECORD_MMAP2:
                /* With a build id in place of device and inode, the
                 * mapping is read from /proc when needed. */
                if ((r->mmap2.prot & PROT_EXEC) && !(r->misc & PERF_RECORD_MISC_MMAP_BUILD_ID))
                        ctx_symbols_mmap(x->symbols, (pid_t) r->mmap2.pid, r->mmap2.addr, r->mmap2.len,
                                         r->mmap2.pgoff, makedev(r->mmap2.maj, r->mmap2.min), r->mmap2.ino,
                                         r->mmap2.filename);
                break;
        case PERF_RECORD_COMM:
                if (r->misc & PERF_RECORD_MISC_COMM_EXEC)
                        ctx_symbols_forget(x->symbols, (pid_t) r->comm.pid);
                break;
        case PERF_RECORD_EXIT:
        case PERF_RECORD_FORK:
                if (r->task.pid == r->task.tid && (r->type == PERF_RECORD_EXIT || r->task.pid != r->task.ppid))
                        ctx_symbols_forget(x->symbols, (pid_t) r->task.pid);
                break;
        default:
                break;
        }
        return true;
}

static int symbols_new(struct daemon_context *x, bool kernel) {
        int r = kernel ? ctx_symbols_new(&(struct ctx_symbols_opts) { .kernel = true }, &x->symbols) : -EPERM;

        if (r < 0) {
                /* kallsyms shows addresses to CAP_SYSLOG only (kptr_restrict),
                 * which evmond has until it drops privileges. */
                if (kernel)
                        log_warning_errno(r, "context: no addresses in /proc/kallsyms (%m): kernel frames stay unnamed");
                else
                        log_warning("context: symbols asked for after the start: kernel frames stay unnamed until a "
                                    "restart");
                r = ctx_symbols_new(NULL, &x->symbols);
        }
        if (r < 0) {
                log_warning_errno(r, "context: symbols are off: %m");
                x->symbols_failed = true;
        }
        return r;
}

static const struct encode_frame *symbolize(struct daemon *d, const struct perf_sample *s) {
        struct daemon_context *x = &d->ctx;
        uint64_t nr = s->callchain.nr;

        if (!x->symbols && !x->symbols_failed && symbols_new(x, false) < 0)
                return NULL;
        if (!x->symbols || nr == 0)
                return NULL;
        if (nr > x->cap) {
                /* Grows to the deepest callchain once; never per event after. */
                size_t cap = nr < 256 ? 256 : (size_t) nr;
                struct ctx_frame *cf = realloc(x->cframes, cap * sizeof(*cf));
                struct encode_frame *ef;

                if (!cf)
                        return NULL;
                x->cframes = cf;
                ef = realloc(x->frames, cap * sizeof(*ef));
                if (!ef)
                        return NULL;
                x->frames = ef;
                x->cap = cap;
        }
        (void) ctx_symbols_resolve(x->symbols, (pid_t) s->pid, s->callchain.ips, nr, x->cframes);
        for (uint64_t i = 0; i < nr; i++)
                x->frames[i] = (struct encode_frame) { x->cframes[i].sym, x->cframes[i].off, x->cframes[i].module,
                                                     x->cframes[i].note };
        return x->frames;
}

/* The kernel's frames (up to 512) and the unwound user frames. */
#define UNWOUND_MAX (512 + 2 + 127)

const struct perf_sample *daemon_context_unwind(struct daemon *d, struct daemon_event *ev, const struct perf_sample *s,
                                                struct perf_sample *copy) {
        struct daemon_context *x = &d->ctx;
        uint64_t nr = 0, k = s->callchain.nr;
        int n;

        if (!ev->cfg->dwarf || !(s->sample_type & PERF_SAMPLE_REGS_USER) || !(s->sample_type & PERF_SAMPLE_STACK_USER) ||
            !s->regs_user.regs || s->regs_user.abi != PERF_SAMPLE_REGS_ABI_64 || s->stack_user.dyn_size == 0 ||
            s->pid == 0)
                return s;
        if (!x->symbols && !x->symbols_failed && symbols_new(x, false) < 0)
                return s;
        if (!x->symbols)
                return s;
        if (!x->unwound) {
                /* Once; never per event after. */
                x->unwound = malloc(UNWOUND_MAX * sizeof(uint64_t));
                if (!x->unwound)
                        return s;
        }
        if (k > 512)
                k = 512;
        if (k > 0) {
                memcpy(x->unwound, s->callchain.ips, k * sizeof(uint64_t));
                nr = k;
        }
        x->unwound[nr] = PERF_CONTEXT_USER;
        n = ctx_symbols_unwind(x->symbols, (pid_t) s->pid, s->regs_user.mask, s->regs_user.regs, s->stack_user.data,
                               (size_t) (s->stack_user.dyn_size < s->stack_user.size ? s->stack_user.dyn_size
                                                                                     : s->stack_user.size),
                               x->unwound + nr + 1, UNWOUND_MAX - nr - 1);
        if (n <= 0)
                return s;
        *copy = *s;
        copy->callchain.ips = x->unwound;
        copy->callchain.nr = nr + 1 + (uint64_t) n;
        return copy;
}

const struct encode_frame *daemon_context_frames(struct daemon *d, struct daemon_event *ev,
                                                 const struct perf_sample *s) {
        if (!ev->cfg->symbols || !(s->sample_type & PERF_SAMPLE_CALLCHAIN))
                return NULL;
        return symbolize(d, s);
}

static uint64_t sample_cgroup(const struct perf_sample *s) {
        return s->sample_type & PERF_SAMPLE_CGROUP ? s->cgroup : 0;
}

/* Whether S gets the memo's answer (struct context_memo). */
static bool memo_holds(struct daemon_context *x, const struct perf_sample *s) {
        const struct context_memo *m = &x->memo;
        const struct ctx_runstate_info *ri;
        uint64_t t;

        if (!m->valid || !(s->sample_type & PERF_SAMPLE_TID) || (pid_t) s->pid != m->pid ||
            sample_cgroup(s) != m->cgroup || context_epoch(x->table) != m->epoch)
                return false;
        t = s->sample_type & PERF_SAMPLE_TIME ? s->time : 0;
        if (!ctx_proc_at(m->proc, t) || (m->parent && !ctx_proc_at(m->parent, t)))
                return false;
        if (!m->ret.container)
                return true;
        /* A state file looked at again (once a second at most). */
        ri = ctx_runstate_lookup(x->runstate, m->container);
        return ri == m->state && (!ri || ri->gen == m->state_gen);
}

static void meta_put(struct line_meta *meta, const struct encode_context *ret, const char *container_name,
                     const char *pod_namespace) {
        meta->comm = ret->comm;
        meta->container = ret->container;
        meta->container_uid = ret->container_uid;
        meta->container_name = container_name;
        meta->pod_namespace = pod_namespace;
}

bool daemon_context_annotate(struct daemon *d, struct daemon_event *ev, const struct perf_sample *s,
                             struct line_meta *meta, struct encode_context *ret) {
        struct daemon_context *x = &d->ctx;
        struct context_memo *m = &x->memo;
        const struct ctx_proc *p = NULL, *pp = NULL;
        const struct ctx_container *ct = NULL;
        const struct ctx_runstate_info *ri = NULL;
        const struct ctx_cgroup *g = NULL;

        if (!x->table)
                return false;
        /* A served exec tracepoint fires before ours (the kernel calls a
         * tracepoint's newest perf event first): its line names the new
         * executable too. */
        if (x->exec_filename && ev->format && ev->format->id == x->exec_format->id)
                (void) daemon_context_sample(d, &x->tag_exec, s);
        if (memo_holds(x, s)) {
                *ret = m->ret;
                meta_put(meta, ret, m->container_name, m->pod_namespace);
                context_count_hits(x->table, m->parent ? 2 : 1);
                return true;
        }
        /* The slot the memo's answer points into may be written below. */
        m->valid = false;
        *ret = (struct encode_context) { .ppid = -1, .uid = -1, .container_uid = -1 };
        if (s->sample_type & PERF_SAMPLE_TID) {
                uint64_t t = s->sample_type & PERF_SAMPLE_TIME ? s->time : 0;

                p = context_lookup(x->table, (pid_t) s->pid, t);
                if (_unlikely_(!p))
                        p = context_first_sight(x->table, (pid_t) s->pid, t);
        }
        if ((s->sample_type & PERF_SAMPLE_CGROUP) && s->cgroup) {
                g = context_cgroup_lookup(x->table, s->cgroup);
                if (p)
                        context_note_cgroup(x->table, p, s->cgroup);
        }
        if (p) {
                ret->comm = p->comm;
                ret->exe = p->exe;
                if (p->has_ppid) {
                        ret->ppid = p->ppid;
                        /* The parent as it was then: a lookup, no syscall. */
                        pp = context_lookup(x->table, p->ppid, s->sample_type & PERF_SAMPLE_TIME ? s->time : 0);
                        if (pp && pp->comm[0])
                                ret->pcomm = pp->comm;
                }
                if (p->has_ids)
                        ret->uid = p->uid;
        }
        /* The sample's own cgroup over the process's last known one. */
        if (g) {
                ret->cgroup = g->path;
                ct = g->container;
        } else if (p && p->cgroup) {
                ret->cgroup = p->cgroup;
                ct = context_proc_container(x->table, p);
        }
        if (ct) {
                ret->container = ct->id[0] ? ct->id : NULL;
                if (ret->container && ct->rootless)
                        ret->container_uid = ct->uid;
                ret->pod = ct->pod[0] ? ct->pod : NULL;
                ri = ret->container ? ctx_runstate_lookup(x->runstate, ct) : NULL;
        }
        if (ri) {
                ret->runtime = ctx_runtime_to_string(ct->runtime);
                ret->verified = ri->verified;
                ret->name = ri->name;
                ret->image = ri->image;
                ret->image_id = ri->image_id;
                ret->pod_name = ri->pod_name;
                ret->pod_namespace = ri->pod_namespace;
                ret->pod_container = ri->pod_container;
        }
        meta_put(meta, ret, ri && ri->verified ? ri->name : NULL, ri && ri->verified ? ri->pod_namespace : NULL);
        if (x->cache) {
                struct context_cache_slot *sl =
                        &x->cache[(((uintptr_t) p >> 4) ^ ((uintptr_t) g >> 3)) % CONTEXT_CACHE_SLOTS];
                uint64_t pg = p ? p->gen : 0, gg = g ? g->gen : 0, ppg = pp ? pp->gen : 0, rg = ri ? ri->gen : 0;

                if (!sl->valid || sl->proc != p || sl->proc_gen != pg || sl->cgroup != g || sl->cgroup_gen != gg ||
                    sl->parent != pp || sl->parent_gen != ppg || sl->state != ri || sl->state_gen != rg) {
                        size_t max = encode_context_max(ret), len;
                        char *json = sl->json;

                        sl->valid = false;
                        /* The bound assumes every byte escaped six-fold: a
                         * container's id and cgroup path pass it long
                         * before their keys fill a slot. */
                        if (max > sizeof(sl->json)) {
                                x->scratch.len = 0;
                                if (jbuf_reserve(&x->scratch, max) < 0)
                                        return true;  /* written per line */
                                json = x->scratch.data;
                        }
                        len = (size_t) (encode_context_put(json, ret) - json);
                        /* Longer keys (a long exe or cgroup path) are
                         * written per line; the slot remembers so. */
                        sl->too_long = len > sizeof(sl->json);
                        if (!sl->too_long && json != sl->json)
                                memcpy(sl->json, json, len);
                        sl->len = len;
                        sl->proc = p;
                        sl->cgroup = g;
                        sl->proc_gen = pg;
                        sl->cgroup_gen = gg;
                        sl->parent = pp;
                        sl->parent_gen = ppg;
                        sl->state = ri;
                        sl->state_gen = rg;
                        sl->valid = true;
                }
                if (!sl->too_long) {
                        ret->json = sl->json;
                        ret->json_len = sl->len;
                }
        }
        /* A process whose parent is not in the table is looked up each
         * time: a later sample may find one of the parent's incarnations. */
        if (p && (!p->has_ppid || pp))
                *m = (struct context_memo) {
                        .valid = true,
                        .pid = (pid_t) s->pid,
                        .cgroup = sample_cgroup(s),
                        .epoch = context_epoch(x->table),
                        .proc = p,
                        .parent = pp,
                        .container = ct,
                        .state = ri,
                        .state_gen = ri ? ri->gen : 0,
                        .ret = *ret,
                        .container_name = meta->container_name,
                        .pod_namespace = meta->pod_namespace,
                };
        return true;
}
