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
#include <stdio.h>
#include <string.h>

#include "daemon.h"
#include "follow.h"
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

static int control_add(struct daemon *d, const struct request *req, const struct ucred *cred, struct jbuf *line,
                       char **ret_error) {
        _cleanup_(config_freep) struct config *nc = NULL;
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

int daemon_control(struct daemon *d, const struct request *req, const struct ucred *cred, struct jbuf *line,
                   char **ret_error) {
        switch (req->type) {
        case REQUEST_ADD:
                return control_add(d, req, cred, line, ret_error);
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
