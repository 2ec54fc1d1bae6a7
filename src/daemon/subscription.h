/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What a client subscribed to, and the one test each line passes through
 * on its way to that client. */

#include <fnmatch.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "linefilter.h"
#include "request.h"

struct perf_sample;

/* Of the cgroups one subscribe's "cgroups" covers (those named and all
 * below them): each is walked in the loop when the client subscribes. */
#define SUBSCRIBE_CGROUPS_MAX 8192u

/* What subscriptions are matched on, per line. */
struct line_meta {
        unsigned idx;           /* the event's index */
        pid_t pid;
        uint64_t cgroup;        /* PERF_SAMPLE_CGROUP id, 0 when unknown */
        const char *comm;       /* the process's comm, NULL when unknown (context) */
        const char *container;  /* its container id, NULL when none or unknown */
        int64_t container_uid;  /* a rootless container's uid (its id is that user's say); else -1 */
        /* What the runtime's state says, verified only (a cgroup a user
         * names like a container names nothing here): NULL when not known. */
        const char *container_name;
        const char *pod_namespace;
        /* The sample and its event's format, for a subscription's
         * "filter" (linefilter.c); NULL for lines that are no sample. */
        const struct perf_sample *sample;
        const struct format *format;
        /* evmond's own activity, or one of its clients' (server_is_self()):
         * only subscriptions with "self" take it. */
        bool self;
        /* The event's schema line (NULL: none) and which definition of
         * the event it describes: a client gets it before its first line
         * of each (server_match()). */
        const char *schema;
        size_t schema_len;
        uint64_t schema_gen;
};

struct subscription {
        bool all_events;        /* else those whose bit is set */
        uint64_t *event_bits;
        size_t n_event_bits;
        char **event_names;     /* as subscribed, to resolve again on reload */
        pid_t *pids;            /* sorted; NULL: any pid */
        size_t n_pids;
        uint64_t *cgroups;      /* sorted ids of the cgroups and those below; NULL: any */
        size_t n_cgroups;
        char **comms;           /* fnmatch(3) patterns of the comm; NULL: any */
        char **containers;      /* container ids or their leading digits, or name patterns; NULL: any */
        char **namespaces;      /* fnmatch(3) patterns of the pod's namespace; NULL: any */
        bool self;              /* "self": true: lines of evmond's clients too */
        struct linefilter *filter;   /* "filter", tried last; NULL: none */
};

static inline bool subscription_has_event(const struct subscription *s, size_t idx) {
        return s->all_events ||
               ((idx >> 6) < s->n_event_bits && (s->event_bits[idx >> 6] & (UINT64_C(1) << (idx & 63))));
}

/* Whether ENTRY of a subscribe's containers takes ID. A rootless
 * container's id is only as its user says (any user may name a cgroup
 * "docker-<a rootful container's id>.scope" under user@UID.service), so
 * it matches only an entry that names the user: "UID/ID-PREFIX". */
static inline bool subscription_container_matches(const char *entry, const char *id, int64_t uid) {
        if (uid >= 0) {
                int64_t v = 0;
                const char *e = entry;

                if (*e < '0' || *e > '9')
                        return false;
                for (; *e >= '0' && *e <= '9' && v <= UINT32_MAX; e++)
                        v = v * 10 + (*e - '0');
                if (v != uid || *e != '/')
                        return false;
                entry = e + 1;
        }
        return strncmp(entry, id, strlen(entry)) == 0;
}

/* Whether M's container is one of CONTAINERS (ids or their leading
 * digits, or patterns of the verified name) and its pod's namespace one
 * of NAMESPACES (patterns); a NULL list takes any. Unknown context
 * matches no entry: never guessed. */
static inline bool subscription_context_matches(char *const *containers, char *const *namespaces,
                                                const struct line_meta *m) {
        if (containers) {
                bool found = false;
                for (char *const *p = containers; m->container && *p && !found; p++)
                        found = subscription_container_matches(*p, m->container, m->container_uid) ||
                                (m->container_name && fnmatch(*p, m->container_name, 0) == 0);
                if (!found)
                        return false;
        }
        if (namespaces) {
                bool found = false;
                for (char *const *p = namespaces; m->pod_namespace && *p && !found; p++)
                        found = fnmatch(*p, m->pod_namespace, 0) == 0;
                if (!found)
                        return false;
        }
        return true;
}

static inline bool subscription_matches(const struct subscription *s, const struct line_meta *m) {
        if (!subscription_has_event(s, m->idx))
                return false;
        if (m->self && !s->self)
                return false;
        if (s->pids) {
                size_t lo = 0, hi = s->n_pids;
                while (lo < hi) {
                        size_t mid = (lo + hi) / 2;
                        if (s->pids[mid] < m->pid)
                                lo = mid + 1;
                        else
                                hi = mid;
                }
                if (lo == s->n_pids || s->pids[lo] != m->pid)
                        return false;
        }
        if (s->cgroups) {
                size_t lo = 0, hi = s->n_cgroups;
                while (lo < hi) {
                        size_t mid = (lo + hi) / 2;
                        if (s->cgroups[mid] < m->cgroup)
                                lo = mid + 1;
                        else
                                hi = mid;
                }
                if (lo == s->n_cgroups || s->cgroups[lo] != m->cgroup)
                        return false;
        }
        if (s->comms) {
                bool found = false;
                /* Unknown context matches no pattern: never guessed. */
                for (char **p = s->comms; m->comm && *p && !found; p++)
                        found = fnmatch(*p, m->comm, 0) == 0;
                if (!found)
                        return false;
        }
        if (!subscription_context_matches(s->containers, s->namespaces, m))
                return false;
        return !s->filter || linefilter_matches(s->filter, m);
}

/* Everything: what a client has before it subscribes. */
void subscription_init(struct subscription *s);
/* No event: what a client has after a subscribe was refused, until one
 * is taken (it asked for less than everything, so everything is wrong). */
void subscription_none(struct subscription *s);
/* The subscription REQ (a parsed subscribe) asks for, against the events
 * served (NAMES, N, in index order) and the cgroup tree under CGROUP_MOUNT
 * (NULL: none mounted). -EINVAL with *ret_error for the client, -ENOMEM. */
int subscription_build(struct subscription *ret, struct request *req, const char *const *names, size_t n,
                       const char *cgroup_mount, char **ret_error);
/* Resolves the subscribed names again after the event list changed:
 * names that no longer exist match nothing. */
void subscription_resolve(struct subscription *s, const char *const *names, size_t n);
void subscription_done(struct subscription *s);
