/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Runtime control over the socket, for root and socket.admin_group (the
 * server checks): add, remove, enable, disable, filter. Add, remove and
 * filter build the running config with the change and apply it as reload
 * does, so the other events lose nothing; enable and disable switch the
 * event's fds. Each is logged with the requester's uid and pid and
 * announced to every client with a config line. Nothing is written to
 * the config file: a reload or a restart serves the file again. */

#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "follow.h"
#include "peer.h"
#include "evmon/error.h"
#include "evmon/log.h"

static ssize_t find_event(const struct daemon *d, const char *name) {
        for (size_t i = 0; i < d->n_events; i++)
                if (strcmp(d->events[i]->wire_name, name) == 0)
                        return (ssize_t) i;
        return -1;
}

static int no_such_event(const char *request, const char *name, char **ret_error) {
        return error_set(ret_error, -ENOENT, "%s: no event \"%s\" is served here (the hello and config lines list them)",
                         request, name);
}

/* Applies NC (taken) for REQUEST on NAME, then marks NAME's event (if it
 * is still served) as a run-time one and answers naming NAME. */
static int apply(struct daemon *d, struct config *nc, const char *request, const char *name,
                 const struct ucred *cred, struct jbuf *line, char **ret_error) {
        _cleanup_(freep) char *n = strdup(name);
        char what[256];
        ssize_t i;
        int r;

        if (!n) {
                config_free(nc);
                return -ENOMEM;
        }
        snprintf(what, sizeof(what), "%s %s by uid %u (pid %d)", request, n, (unsigned) cred->uid, (int) cred->pid);
        r = daemon_apply(d, nc, false, what, ret_error);
        if (r < 0) {
                log_notice("Refused %s: %s", what, *ret_error ?: strerror(-r));
                return r;
        }
        i = find_event(d, n);
        if (i >= 0)
                d->events[i]->runtime = true;
        return encode_result(line, request, (const char *const *) &n, 1);
}

/* Whether the uprobe binary of E may be probed for PEER by POLICY: its
 * real path matches one of POLICY's paths and PEER could read it itself
 * (evmond opens it with CAP_DAC_READ_SEARCH). E's target is rewritten to
 * name the real path, so a symlink the peer changes after this check
 * does not steer the probe. */
static int admin_add_uprobe(const struct admin_add *policy, struct event_config *e, const struct peer *peer,
                            const char *config_path, char **ret_error) {
        _cleanup_(probe_target_done) struct probe_target t = {};
        _cleanup_(freep) char *real = NULL, *component = NULL, *target = NULL;
        const char *location;
        bool listed = false;
        uid_t uid = peer->cred.uid;
        int r;

        r = probe_parse_target(probe_kind_of(e->kind), e->target, &t, ret_error);
        if (r < 0)
                return r;
        /* The breakpoint replaces a byte of the binary in every process
         * that runs it; inside an instruction it changes what root's
         * program computes (an immediate, a displacement), fetch-args or
         * not. Only a function's entry is an instruction's start that
         * evmond knows (elf.c takes function symbols, or code). */
        if (!t.symbol || t.offset != 0)
                return error_set(ret_error, -EPERM, "add: uid %u may not probe %s at an offset (\"%s\"): a member of "
                                 "socket.admin_group may probe a function's entry only (PATH:SYMBOL), since a "
                                 "breakpoint inside an instruction changes what the probed program does",
                                 (unsigned) uid, t.path, e->target);
        real = realpath(t.path, NULL);
        if (!real) {
                r = -errno;
                return error_set(ret_error, r, "add: %s: %s", t.path, strerror(-r));
        }
        for (char **p = policy->paths; p && *p && !listed; p++)
                listed = fnmatch(*p, real, FNM_PATHNAME) == 0;
        if (!listed)
                return error_set(ret_error, -EPERM, "add: uid %u may not probe %s: no pattern in socket.admin_add.paths "
                                 "(%s) matches it (root may add it, or list it there)",
                                 (unsigned) uid, real, config_path);
        r = peer_may_read(peer, real, &component);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return error_set(ret_error, -EPERM, "add: uid %u may not probe %s: %s (%s); evmond probes for a member "
                                 "of socket.admin_group only binaries that member could read itself",
                                 (unsigned) uid, real, component ?: real,
                                 r == -EPERM       ? "that uid may replace it between this check and the probe"
                                 : r == -EOPNOTSUPP ? "it has a POSIX ACL, which evmond does not judge"
                                 : r == -EACCES     ? "not readable or searchable by that uid"
                                 : r == -E2BIG      ? "that client is in more supplementary groups than evmond "
                                                      "reads, and a group left out may deny it"
                                                    : strerror(-r));
        location = strrchr(e->target, ':');
        if (asprintf(&target, "%s%s", real, location) < 0)
                return -ENOMEM;
        free(e->target);
        e->target = TAKE_PTR(target);
        return 0;
}

/* Whether SYSTEM:NAME is a dynamic event in tracefs at DIR: a kprobe,
 * uprobe, eprobe or synthetic event someone made (perf probe, bpftrace,
 * an admin's shell), whose fields are the fetch-args its maker chose.
 * Its lines in dynamic_events (or kprobe_events and uprobe_events, before
 * 5.5) are "TYPE:GROUP/EVENT ...". */
static bool tracefs_is_dynamic(const char *dir, const char *system, const char *name) {
        static const char *const files[] = { "dynamic_events", "kprobe_events", "uprobe_events" };
        size_t ls = strlen(system), ln = strlen(name);

        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                _cleanup_(fclosep) FILE *f = NULL;
                char path[PATH_MAX], line[4096];

                snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
                f = fopen(path, "re");
                if (!f)
                        continue;
                while (fgets(line, sizeof(line), f)) {
                        const char *g = strchr(line, ':');

                        if (g && strncmp(g + 1, system, ls) == 0 && g[1 + ls] == '/' &&
                            strncmp(g + 2 + ls, name, ln) == 0 && strchr(" \n", g[2 + ls + ln]))
                                return true;
                }
                /* dynamic_events lists them all; the others are read
                 * only where it is missing. */
                if (i == 0)
                        return false;
        }
        return false;
}

/* What a member of socket.admin_group who is not root may add
 * (socket.admin_add): probes with fetch-args, and perf samples of user
 * stacks or registers, read memory that member could not (any process's,
 * or the kernel's), so each kind, each uprobe binary and any such read
 * must be allowed there. */
static int admin_add_check(const struct config *c, const char *tracefs_dir, struct event_config *e,
                           const struct peer *peer, char **ret_error) {
        const struct admin_add *policy = &c->admin_add;
        const char *kind = event_kind_to_string(e->kind);
        uid_t uid = peer->cred.uid;

        if (peer->cred.uid == 0)
                return 0;
        if (policy->kinds == 0)
                return error_set(ret_error, -EPERM, "add: uid %u may not add events: only root may, unless "
                                 "socket.admin_add in %s lists what members of socket.admin_group may add (a "
                                 "probe with fetch-args reads any process's memory)",
                                 (unsigned) uid, c->path);
        if (!(policy->kinds & (1u << e->kind)))
                return error_set(ret_error, -EPERM, "add: uid %u may not add a %s: socket.admin_add.kinds in %s does "
                                 "not list it", (unsigned) uid, kind, c->path);
        if (!policy->fetch &&
            (e->fetch || (event_config_has_attr(e) && (e->attr.sample_type & (PERF_SAMPLE_STACK_USER |
                                                                                PERF_SAMPLE_REGS_USER |
                                                                                PERF_SAMPLE_REGS_INTR)))))
                return error_set(ret_error, -EPERM, "add: uid %u may not add a %s that reads memory or registers "
                                 "(fetch-args, stack_user, regs_user, regs_intr): socket.admin_add.fetch in %s is "
                                 "not true", (unsigned) uid, kind, c->path);
        /* A user callchain is the kernel's frame-pointer walk: 16 bytes
         * of the sampled process's stack per frame, at its saved rbp,
         * which code built without frame pointers uses for data. A
         * physical address the kernel gives to privileged callers only
         * (perf_allow_kernel()); evmond is one. */
        if (!policy->fetch && event_config_has_attr(e) && (e->attr.sample_type & PERF_SAMPLE_CALLCHAIN) &&
            !e->attr.exclude_callchain_user)
                return error_set(ret_error, -EPERM, "add: uid %u may not add a %s with user callchains (the "
                                 "frame-pointer walk reads each sampled process's stack): socket.admin_add.fetch "
                                 "in %s is not true; \"callchain\": {\"user\": false} takes the kernel's frames only",
                                 (unsigned) uid, kind, c->path);
        if (!policy->fetch && event_config_has_attr(e) && (e->attr.sample_type & PERF_SAMPLE_PHYS_ADDR))
                return error_set(ret_error, -EPERM, "add: uid %u may not add a %s that samples phys_addr (physical "
                                 "addresses, which the kernel gives privileged callers only): "
                                 "socket.admin_add.fetch in %s is not true", (unsigned) uid, kind, c->path);
        if (!policy->fetch && e->kind == EVENT_TRACEPOINT && tracefs_dir &&
            tracefs_is_dynamic(tracefs_dir, e->system, e->name))
                return error_set(ret_error, -EPERM, "add: uid %u may not add %s: it is a dynamic event (a kprobe, "
                                 "uprobe, eprobe or synthetic event someone made), whose fields are the fetch-args "
                                 "its maker chose, and socket.admin_add.fetch in %s is not true",
                                 (unsigned) uid, e->wire_name, c->path);
        if (e->kind == EVENT_PMU) {
                static const struct { enum probe_kind kind; const char *entry; } probe_pmus[] = {
                        { PROBE_KPROBE, "a kprobe or kretprobe entry" },
                        { PROBE_UPROBE, "a uprobe or uretprobe entry" },
                };

                /* The kprobe and uprobe PMUs make probes: config1 names
                 * the symbol or binary, config2 a kernel address or a
                 * file offset. As a "pmu" entry they would pass by
                 * "kinds", "paths" and the function-entry rule. */
                for (size_t i = 0; i < ELEMENTSOF(probe_pmus); i++) {
                        uint32_t type;
                        uint64_t mask;

                        if (probe_pmu_type(NULL, probe_pmus[i].kind, &type, &mask) == 0 && e->attr.type == type)
                                return error_set(ret_error, -EPERM, "add: uid %u may not add a pmu entry of the %s "
                                                 "PMU, which makes probes: add %s, which socket.admin_add in %s "
                                                 "judges", (unsigned) uid,
                                                 probe_pmus[i].kind == PROBE_KPROBE ? "kprobe" : "uprobe",
                                                 probe_pmus[i].entry, c->path);
                }
        }
        if (e->kind == EVENT_UPROBE || e->kind == EVENT_URETPROBE)
                return admin_add_uprobe(policy, e, peer, c->path, ret_error);
        return 0;
}

static int control_add(struct daemon *d, const struct request *req, const struct peer *peer, struct jbuf *line,
                       char **ret_error) {
        _cleanup_(config_freep) struct config *nc = NULL;
        const struct ucred *cred = &peer->cred;
        struct event_config *e;
        int r;

        r = config_copy(d->config, 1, &nc);
        if (r < 0)
                return r;
        e = &nc->events[nc->n_events];
        r = config_parse_entry(req->entry, nc->n_events, "add", e, ret_error);
        if (r < 0)
                return r;
        nc->n_events++;
        r = admin_add_check(d->config, d->tracefs ? tracefs_path(d->tracefs) : NULL, e, peer, ret_error);
        if (r < 0) {
                log_notice("Refused add of %s by uid %u (pid %d): %s", e->wire_name, (unsigned) cred->uid,
                           (int) cred->pid, *ret_error ?: strerror(-r));
                return r;
        }
        if (find_event(d, e->wire_name) >= 0)
                return error_set(ret_error, -EEXIST, "add: \"%s\" is served already (remove it first, or give the "
                                 "entry another \"name\")", e->wire_name);
        return apply(d, TAKE_PTR(nc), "add", e->wire_name, cred, line, ret_error);
}

static int control_remove(struct daemon *d, const struct request *req, const struct ucred *cred, struct jbuf *line,
                          char **ret_error) {
        _cleanup_(config_freep) struct config *nc = NULL;
        ssize_t i = find_event(d, req->name);
        int r;

        if (i < 0)
                return no_such_event("remove", req->name, ret_error);
        if (d->n_events == 1)
                return error_set(ret_error, -EINVAL, "remove: \"%s\" is the only event served; evmond serves one "
                                 "at least (add another first)", req->name);
        r = config_copy(d->config, 0, &nc);
        if (r < 0)
                return r;
        event_config_clear(&nc->events[i]);
        memmove(&nc->events[i], &nc->events[i + 1], (nc->n_events - (size_t) i - 1) * sizeof(*nc->events));
        nc->n_events--;
        return apply(d, TAKE_PTR(nc), "remove", req->name, cred, line, ret_error);
}

static int control_filter(struct daemon *d, const struct request *req, const struct ucred *cred, struct jbuf *line,
                          char **ret_error) {
        _cleanup_(config_freep) struct config *nc = NULL;
        ssize_t i = find_event(d, req->name);
        struct event_config *e;
        int r;

        if (i < 0)
                return no_such_event("filter", req->name, ret_error);
        if (event_kind_is_perf(d->events[i]->cfg->kind))
                return error_set(ret_error, -EINVAL, "filter: \"%s\" is a perf event: ftrace filters are for "
                                 "tracepoints and probes", req->name);
        r = config_copy(d->config, 0, &nc);
        if (r < 0)
                return r;
        e = &nc->events[i];
        free(e->filter);
        free(e->filter_where);
        e->filter = *req->filter ? strdup(req->filter) : NULL;
        e->filter_where = strdup("filter");
        if ((*req->filter && !e->filter) || !e->filter_where)
                return -ENOMEM;
        return apply(d, TAKE_PTR(nc), "filter", req->name, cred, line, ret_error);
}

/* The events PATTERNS (NULL: all) name; an error for a pattern that
 * matches none. */
static int match_events(struct daemon *d, const char *request, char **patterns, bool *ret, char **ret_error) {
        for (size_t i = 0; i < d->n_events; i++)
                ret[i] = !patterns;
        for (char **p = patterns; p && *p; p++) {
                bool any = false;

                for (size_t i = 0; i < d->n_events; i++)
                        if (fnmatch(*p, d->events[i]->wire_name, 0) == 0)
                                ret[i] = any = true;
                if (!any)
                        return no_such_event(request, *p, ret_error);
        }
        return 0;
}

static int control_switch(struct daemon *d, const struct request *req, const struct ucred *cred, struct jbuf *line,
                          char **ret_error) {
        bool enable = req->type == REQUEST_ENABLE;
        const char *request = request_type_to_string(req->type);
        _cleanup_(freep) bool *hit = calloc(d->n_events ?: 1, sizeof(bool));
        _cleanup_(freep) const char **names = calloc(d->n_events ?: 1, sizeof(char *));
        struct reader_opts ro;
        size_t n = 0;
        int r;

        if (!hit || !names)
                return -ENOMEM;
        r = match_events(d, request, req->events, hit, ret_error);
        if (r < 0)
                return r;
        for (size_t i = 0; i < d->n_events; i++) {
                struct daemon_event *ev = d->events[i];

                if (!hit[i])
                        continue;
                r = enable ? monitor_enable(d->monitor, ev->handle) : monitor_disable(d->monitor, ev->handle);
                if (r < 0)
                        return error_set(ret_error, r, "%s: %s: %s", request, ev->wire_name, strerror(-r));
                ev->disabled = !enable;
                follow_set_enabled(ev->follow, enable);
                names[n++] = ev->wire_name;
        }
        log_info("%s by uid %u (pid %d): %zu events", enable ? "Enabled" : "Disabled", (unsigned) cred->uid,
                 (int) cred->pid, n);
        /* Enabling disarmed the doorbells: a look soon arms them again. */
        ro = daemon_reader_opts(d);
        reader_set_opts(d->reader, &ro);
        daemon_announce(d);
        return encode_result(line, request, names, n);
}

int daemon_control(struct daemon *d, const struct request *req, const struct peer *peer, struct jbuf *line,
                   char **ret_error) {
        const struct ucred *cred = &peer->cred;

        switch (req->type) {
        case REQUEST_ADD:
                return control_add(d, req, peer, line, ret_error);
        case REQUEST_REMOVE:
                return control_remove(d, req, cred, line, ret_error);
        case REQUEST_FILTER:
                return control_filter(d, req, cred, line, ret_error);
        case REQUEST_ENABLE:
        case REQUEST_DISABLE:
                return control_switch(d, req, cred, line, ret_error);
        default:
                return -EINVAL;
        }
}
