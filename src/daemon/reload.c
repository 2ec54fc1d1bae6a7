/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reload (SIGHUP or a client's reload): the config is read again and the
 * difference applied without a gap. New events are open and enabled before
 * any old one closes, and an event whose definition did not change keeps
 * its fds: it loses nothing over the reload. A reload that fails leaves the
 * running config serving. */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "counters.h"
#include "daemon.h"
#include "events.h"
#include "follow.h"
#include "notify.h"
#include "replies.h"
#include "evmon/error.h"
#include "evmon/log.h"
#include "evmon/strv.h"

/* A reload under way: the new config and the new event list (by the new
 * config's index), some of whose events are the running ones, kept. */
struct reload {
        struct config *config;
        struct daemon_event **events;
        size_t n_events;
        bool *kept;                   /* by d->events index: in the new list */
        size_t n_added, n_removed;
        bool from_file;               /* a reload, not a runtime change */
};

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
        if (strcmp(a->socket_admin_group ?: "", b->socket_admin_group ?: "") != 0)
                return "socket.admin_group";
        if (a->max_clients != b->max_clients)
                return "clients.max";
        if (a->max_clients_per_uid != b->max_clients_per_uid)
                return "clients.max_per_uid";
        if (a->client_queue_bytes != b->client_queue_bytes)
                return "clients.queue_kib";
        if (!strv_equal(a->cgroups, b->cgroups))
                return "targets.cgroups";
        if (a->context != b->context)
                return "context";
        /* Part of every event's kernel filter, and of what each client
         * gets: one value for evmond's whole life. */
        if (a->self != b->self)
                return "self";
        if (a->n_pids != b->n_pids || (a->n_pids && memcmp(a->pids, b->pids, a->n_pids * sizeof(pid_t)) != 0))
                return "targets.pids";
        return NULL;
}

static int reload_load(struct daemon *d, struct config **ret, char **ret_error) {
        _cleanup_(config_freep) struct config *c = NULL;
        const char *key;
        int r;

        r = daemon_config_load(d, &c, ret_error);
        if (r < 0)
                return r;
        key = config_restart_key(d->config, c);
        if (key)
                return error_set(ret_error, -EINVAL, "%s: %s changed: that takes a restart of evmond (`systemctl restart evmond`)",
                                 c->path, key);
        *ret = TAKE_PTR(c);
        return 0;
}

/* Whether running event OLD, kept as the next new entry, keeps its place
 * in its group: the same leader as now, or none (it leads, as before).
 * The kernel joins a group's fds at open, so one that moves opens anew. */
static bool reload_same_group(struct daemon *d, struct reload *rl, struct daemon_event *old) {
        /* OLD is not among the new entries yet: their first of its group,
         * if any, would lead it. */
        return daemon_group_leader(rl->events, rl->n_events, old) == daemon_group_leader(d->events, d->n_events, old);
}

/* The running event with definition DEF that no new entry took yet. */
static struct daemon_event *reload_keep(struct daemon *d, struct reload *rl, const char *def) {
        for (size_t j = 0; j < d->n_events; j++)
                if (!rl->kept[j] && strcmp(d->events[j]->definition, def) == 0 && reload_same_group(d, rl, d->events[j])) {
                        rl->kept[j] = true;
                        return d->events[j];
                }
        return NULL;
}

/* Makes, opens and enables the event of new entry EC. */
static int reload_add(struct daemon *d, struct reload *rl, struct event_config *ec, char **ret_error) {
        struct daemon_event *ev;
        int r;

        r = daemon_event_new(d, ec, &ev, ret_error);
        if (r < 0)
                return r;
        /* Enabled below, its samples can be drained before the commit:
         * until then its index is past the running events', where
         * reload_route_interim() puts its name. */
        ev->index = (unsigned) (d->n_events + rl->n_added);
        rl->events[rl->n_events++] = ev;
        /* Its leader is an entry before it: kept, or opened above. */
        r = daemon_event_open(d, ev, daemon_group_leader(rl->events, rl->n_events, ev), ret_error);
        if (r < 0)
                return r;
        /* A runtime change (filter) of an event disabled at run time
         * leaves it disabled; only a reload serves every event enabled. */
        for (size_t j = 0; !rl->from_file && j < d->n_events; j++)
                if (d->events[j]->disabled && strcmp(d->events[j]->wire_name, ev->wire_name) == 0) {
                        ev->disabled = true;
                        follow_set_enabled(ev->follow, false);
                        rl->n_added++;
                        return 0;
                }
        r = monitor_enable(d->monitor, ev->handle);
        if (r < 0)
                return error_set(ret_error, r, "%s: failed to enable %s: %s", ev->cfg->where, ev->wire_name,
                                 strerror(-r));
        rl->n_added++;
        return 0;
}

static int reload_open(struct daemon *d, struct reload *rl, char **ret_error) {
        for (size_t i = 0; i < rl->config->n_events; i++) {
                _cleanup_(freep) char *def = event_definition(&rl->config->events[i]);
                struct daemon_event *ev;
                int r;

                if (!def)
                        return -ENOMEM;
                ev = reload_keep(d, rl, def);
                if (ev) {
                        rl->events[rl->n_events++] = ev;
                        continue;
                }
                r = reload_add(d, rl, &rl->config->events[i], ret_error);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Closes what this reload opened; the running events are untouched. */
static void reload_rollback(struct daemon *d, struct reload *rl) {
        for (size_t i = 0; i < rl->n_events; i++) {
                bool old = false;

                for (size_t j = 0; j < d->n_events && !old; j++)
                        old = d->events[j] == rl->events[i];
                if (!old) {
                        daemon_event_destroy(d, rl->events[i]);
                        daemon_event_free(rl->events[i]);
                }
        }
}

static void reload_done(struct reload *rl) {
        free(rl->events);
        free(rl->kept);
        config_free(rl->config);
}

/* What the rings hold when the commit drains them is routed by index
 * against subscriptions resolved by name: the running events under their
 * old index, the added ones past them (reload_add()). The clients'
 * subscriptions are resolved against that interim list, so a line of an
 * added event reaches those who will get its later lines, and nobody else.
 * Without memory for it, named subscriptions miss those lines, but still
 * get no line of another event. */
static void reload_route_interim(struct daemon *d, struct reload *rl) {
        _cleanup_(freep) const char **names = calloc(d->n_events + rl->n_added ?: 1, sizeof(char *));

        if (!names)
                return;
        for (size_t j = 0; j < d->n_events; j++)
                names[j] = d->events[j]->wire_name;
        for (size_t i = 0; i < rl->n_events; i++) {
                struct daemon_event *ev = rl->events[i];

                if (ev->index >= d->n_events && ev->index < d->n_events + rl->n_added)
                        names[ev->index] = ev->wire_name;
        }
        server_events_resolve(d->server, names, d->n_events + rl->n_added);
}

/* An event opened anew under the name of one about to close (a filter
 * change, a reload that changed its definition) goes on counting from
 * the old one's counts: status's count and evmon_events_total{event} are
 * per name, and a Prometheus counter that goes back reads as a restart
 * of evmond; so is a counting event's counter line value. An event
 * removed, and one added later, start at 0. */
static void reload_carry_counts(struct daemon *d, struct reload *rl) {
        for (size_t j = 0; j < d->n_events; j++) {
                struct daemon_event *old = d->events[j];

                if (rl->kept[j])
                        continue;
                for (size_t i = 0; i < rl->n_events; i++) {
                        struct daemon_event *ev = rl->events[i];

                        /* Opened by this reload: indexes past the running events'. */
                        if (ev->index >= d->n_events && strcmp(ev->wire_name, old->wire_name) == 0) {
                                ev->count += old->count;
                                ev->bad += old->bad;
                                /* A counter line's value, too: read the
                                 * old fds before they close. */
                                if (old->cfg->count && ev->cfg->count && counters_carry(d, old, ev) < 0)
                                        log_warning("%s: out of memory: its counter lines' value starts again "
                                                    "from 0", ev->wire_name);
                                break;
                        }
                }
        }
}

/* The new list replaces the old: what the rings hold of the events about
 * to go is still delivered, then they close. */
static void reload_commit(struct daemon *d, struct reload *rl, bool from_file) {
        struct reader_opts ro;

        reload_route_interim(d, rl);
        reader_drain_all(d->reader);
        /* After the drain: the old events' last samples are counted. */
        reload_carry_counts(d, rl);
        for (size_t j = 0; j < d->n_events; j++)
                if (!rl->kept[j]) {
                        daemon_event_destroy(d, d->events[j]);
                        daemon_event_free(d->events[j]);
                        rl->n_removed++;
                }
        for (size_t i = 0; i < rl->n_events; i++) {
                struct daemon_event *ev = rl->events[i];

                ev->index = (unsigned) i;
                ev->cfg = &rl->config->events[i];
                /* The file knows nothing of run-time changes: a reload
                 * serves what it says, every event enabled. */
                if (from_file) {
                        ev->runtime = false;
                        if (ev->disabled && ev->handle >= 0 && monitor_enable(d->monitor, ev->handle) >= 0)
                                ev->disabled = false;
                }
        }
        free(d->events);
        d->events = TAKE_PTR(rl->events);
        d->n_events = rl->n_events;
        config_free(d->config);
        d->config = TAKE_PTR(rl->config);
        server_events_changed(d->server);
        /* New periods, and a look soon: a new event may lack a doorbell. */
        ro = daemon_reader_opts(d);
        reader_set_opts(d->reader, &ro);
        daemon_reader_threads_check(d, &ro);
}

/* Tells every client the events now served. */
void daemon_announce(struct daemon *d) {
        _cleanup_(jbuf_donep) struct jbuf line = {};
        _cleanup_(freep) const char **names = daemon_event_names(d);

        if (names && encode_config(&line, names, d->n_events) >= 0) {
                server_broadcast_all(d->server, line.data, line.len);
                server_flush(d->server);
        }
}

int daemon_apply(struct daemon *d, struct config *nc, bool from_file, const char *what, char **ret_error) {
        _cleanup_(reload_done) struct reload rl = { .config = nc, .from_file = from_file };
        int r;

        rl.events = calloc(nc->n_events ?: 1, sizeof(*rl.events));
        rl.kept = calloc(d->n_events ?: 1, sizeof(bool));
        if (!rl.events || !rl.kept)
                return -ENOMEM;
        r = reload_open(d, &rl, ret_error);
        if (r < 0) {
                reload_rollback(d, &rl);
                return r;
        }
        reload_commit(d, &rl, from_file);
        log_info("%s: %zu events served, %zu added, %zu removed", what, d->n_events, rl.n_added, rl.n_removed);
        if (d->counter_timer)
                (void) sd_event_source_set_enabled(d->counter_timer,
                                                   daemon_has_counters(d) ? SD_EVENT_ON : SD_EVENT_OFF);
        daemon_announce(d);
        return 0;
}

int daemon_reload(struct daemon *d, char **ret_error) {
        _cleanup_(freep) char *what = NULL;
        struct config *nc = NULL;
        int r;

        *ret_error = NULL;
        d->reloads++;
        r = reload_load(d, &nc, ret_error);
        if (r >= 0) {
                if (asprintf(&what, "Reloaded %s", nc->path) < 0)
                        what = NULL;
                r = daemon_apply(d, nc, true, what ?: "Reloaded", ret_error);
        }
        if (r < 0) {
                d->reload_failures++;
                if (!*ret_error && r == -ENOMEM)
                        *ret_error = strdup("out of memory");
                return r;
        }
        return 0;
}

int daemon_reload_notify(struct daemon *d, char **ret_error) {
        char status[256];
        int r;

        notify_reloading();
        r = daemon_reload(d, ret_error);
        if (r < 0)
                log_error("Reload failed, the running config stays: %s", *ret_error ?: "out of memory");
        daemon_status_text(d, status, sizeof(status));
        notify_reloaded(status);
        return r;
}
