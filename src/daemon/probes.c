/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Our probes in tracefs: the group they live in, named from the socket;
 * the record of groups beside the socket; making a probe (a fresh name
 * while its old definition still stands during a reload) and removing it,
 * ours and what a killed instance left. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "evmon/async.h"
#include "events.h"
#include "evmon/error.h"
#include "evmon/log.h"
#include "evmon/protocol.h"

enum probe_kind probe_kind_of(enum event_kind k) {
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

/* Probes an earlier instance left (SIGKILL, power loss) are removed before
 * we create ours, so a restart never fails with EEXIST. Only our group and
 * the groups in our record are touched. */
static int daemon_clean_probes(struct daemon *d) {
        unsigned n = 0, m = 0;
        int r;

        if (d->probes.cleaned || d->check_only)
                return 0;
        d->probes.cleaned = true;
        r = probe_record_cleanup(d->tracefs, d->probes.record, &n);
        if (r < 0 && r != -EOPNOTSUPP)
                log_warning_errno(r, "Failed to remove the probes recorded in %s: %m", d->probes.record);
        r = probe_remove_group(d->tracefs, d->probes.group, &m);
        if (r < 0 && r != -EOPNOTSUPP)
                log_warning_errno(r, "Failed to remove stale probes of group %s: %m", d->probes.group);
        if (n + m > 0)
                log_notice("Removed %u probes an earlier evmond left behind", n + m);
        return 0;
}

int daemon_reference_format(struct daemon *d, char **ret_error) {
        _cleanup_(strv_freep) char **names = NULL;
        int r;

        if (d->probes.reference)
                return 0;
        r = tracefs_event_format(d->tracefs, "sched", "sched_process_exec", &d->probes.reference);
        if (r >= 0)
                return 0;
        r = tracefs_list_events(d->tracefs, &names);
        for (char **n = names; r >= 0 && *n; n++) {
                _cleanup_(freep) char *sys = strdup(*n);
                char *colon = sys ? strchr(sys, ':') : NULL;
                if (colon) {
                        *colon = 0;
                        if (tracefs_event_format(d->tracefs, sys, colon + 1, &d->probes.reference) >= 0)
                                return 0;
                }
        }
        return error_set(ret_error, -ENOENT, "no readable event format in %s to take the common header from", tracefs_path(d->tracefs));
}

int daemon_event_add_probe(struct daemon *d, struct daemon_event *ev, struct probe_spec *spec, char **ret_error) {
        const struct event_config *ec = ev->cfg;
        _cleanup_(freep) char *err = NULL;
        int r;

        (void) daemon_clean_probes(d);
        if (!d->check_only) {
                r = probe_record_group(d->probes.record, d->probes.group);
                if (r < 0)
                        log_warning_errno(r, "Failed to record probe group %s in %s: %m",
                                          d->probes.group, d->probes.record);
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
                r = probe_add(d->tracefs, d->probes.group, spec, &ev->format, &err);
                if (r != -EEXIST || gen >= 8)
                        break;
        }
        if (r < 0)
                return error_set(ret_error, -EINVAL, "%s: the kernel refused %s \"%s\": %s",
                                 ec->where, event_kind_to_string(ec->kind), ec->target, err ?: strerror(-r));
        ev->probe_added = true;
        ev->source.type = PERF_TYPE_TRACEPOINT;
        ev->source.config = ev->format->id;
        return 0;
}

struct probe_removal {
        struct tracefs *tracefs;        /* the daemon's: freed only after async_wait() */
        enum probe_kind kind;
        char *group, *name, *owner;
};

static void probe_remove_logged(struct tracefs *t, const char *group, enum probe_kind kind, const char *name,
                                const char *owner) {
        int r = probe_remove(t, group, kind, name);

        if (r < 0 && r != -ENOENT)
                log_warning_errno(r, "Failed to remove probe %s/%s of %s: %m", group, name, owner);
}

/* On the async worker: after the close of the probe's perf fds, queued
 * before it (the kernel refuses to remove a probe in use with EBUSY). */
static void probe_removal_run(void *userdata) {
        struct probe_removal *p = userdata;

        probe_remove_logged(p->tracefs, p->group, p->kind, p->name, p->owner);
        free(p->group);
        free(p->name);
        free(p->owner);
        free(p);
}

void daemon_probe_remove_async(struct daemon *d, enum probe_kind kind, const char *name, const char *owner) {
        struct probe_removal *p = calloc(1, sizeof(*p));

        if (p) {
                *p = (struct probe_removal) {
                        .tracefs = d->tracefs, .kind = kind,
                        .group = strdup(d->probes.group), .name = strdup(name), .owner = strdup(owner ?: "?"),
                };
                if (p->group && p->name && p->owner) {
                        (void) async_run(probe_removal_run, p);
                        return;
                }
                free(p->group);
                free(p->name);
                free(p->owner);
                free(p);
        }
        /* No memory: here, after the pending closes. */
        async_wait(0);
        probe_remove_logged(d->tracefs, d->probes.group, kind, name, owner ?: "?");
}

void daemon_event_remove_probe(struct daemon *d, struct daemon_event *ev) {
        if (!ev->probe_added)
                return;
        /* Its perf fds are with the async worker (monitor_remove()): the
         * removal goes there too, behind their close, so the loop waits for
         * neither grace period. A probe of the same name added meanwhile
         * takes NAME_1 (daemon_event_add_probe()). */
        daemon_probe_remove_async(d, ev->probe_kind, ev->probe_name, ev->wire_name);
        ev->probe_added = false;
}

/* Our probes live in our own tracefs group ("evmon" for the default
 * socket, "evmon_HASH" for another); what we created is recorded beside
 * the socket (/run/evmon/probes). --check-config uses a group of its own
 * so it never touches a running daemon's probes. */
int daemon_probe_setup(struct daemon *d) {
        const char *sock = d->config->socket_path, *slash = strrchr(sock, '/');

        if (d->check_only) {
                if (asprintf(&d->probes.group, "evmoncheck%d", (int) getpid()) < 0)
                        return -ENOMEM;
        } else if (strcmp(sock, EVMON_SOCKET_PATH_DEFAULT) == 0) {
                if (!(d->probes.group = strdup(PROBE_GROUP_DEFAULT)))
                        return -ENOMEM;
        } else {
                /* Another instance (its own socket) gets its own group, so
                 * two daemons never clean or extend each other's probes. */
                uint32_t h = 2166136261u;
                for (const char *p = sock; *p; p++)
                        h = (h ^ (uint8_t) *p) * 16777619u;
                if (asprintf(&d->probes.group, "%s_%08x", PROBE_GROUP_DEFAULT, h) < 0)
                        return -ENOMEM;
        }
        if (asprintf(&d->probes.record, "%.*s/probes", (int) (slash - sock), sock) < 0)
                return -ENOMEM;
        return 0;
}

int daemon_remove_probes(struct daemon *d, unsigned *ret_removed, char **ret_error) {
        unsigned n = 0, m = 0;
        int r;

        r = probe_record_cleanup(d->tracefs, d->probes.record, &n);
        if (r < 0 && r != -EOPNOTSUPP)
                return error_set(ret_error, r, "%s: cannot remove the probes recorded there: %s",
                                 d->probes.record, strerror(-r));
        r = probe_remove_group(d->tracefs, d->probes.group, &m);
        if (r < 0 && r != -EOPNOTSUPP)
                return error_set(ret_error, r, "cannot remove the probes of group %s: %s",
                                 d->probes.group, strerror(-r));
        d->probes.cleaned = true;
        *ret_removed = n + m;
        return 0;
}

void daemon_probes_done(struct daemon *d) {
        if (d->probes.record && !d->check_only)
                (void) probe_record_cleanup(d->tracefs, d->probes.record, NULL);
        free(d->probes.record);
        free(d->probes.group);
        d->probes.record = d->probes.group = NULL;
        d->probes.reference = format_free(d->probes.reference);
}
