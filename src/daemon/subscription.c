/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "subscription.h"
#include "evmon/cleanup.h"
#include "evmon/encode.h"
#include "evmon/error.h"

void subscription_init(struct subscription *s) {
        *s = (struct subscription) { .all_events = true };
}

void subscription_none(struct subscription *s) {
        subscription_done(s);
        s->all_events = false;
}

void subscription_done(struct subscription *s) {
        free(s->event_bits);
        strv_free(s->event_names);
        free(s->pids);
        free(s->cgroups);
        strv_free(s->comms);
        strv_free(s->containers);
        strv_free(s->namespaces);
        linefilter_free(s->filter);
        subscription_init(s);
}

/* Resolves PATTERNS (exact names or fnmatch patterns such as "syscalls:*")
 * into BITS. Returns the index of the first pattern that matches nothing,
 * or -1 when all match. */
static ssize_t resolve_names(char **patterns, const char *const *names, size_t n, uint64_t *bits, size_t n_bits) {
        memset(bits, 0, n_bits * sizeof(uint64_t));
        for (size_t k = 0; patterns[k]; k++) {
                bool any = false;

                for (size_t i = 0; i < n; i++)
                        if (fnmatch(patterns[k], names[i], 0) == 0) {
                                bits[i >> 6] |= UINT64_C(1) << (i & 63);
                                any = true;
                        }
                if (!any)
                        return (ssize_t) k;
        }
        return -1;
}

void subscription_resolve(struct subscription *s, const char *const *names, size_t n) {
        size_t n_bits = (n + 63) / 64;
        uint64_t *bits;

        if (s->all_events || !s->event_names)
                return;
        bits = calloc(n_bits ? n_bits : 1, sizeof(uint64_t));
        if (!bits)
                return;         /* Keep the old bits: better stale than nothing. */
        (void) resolve_names(s->event_names, names, n, bits, n_bits);
        free(s->event_bits);
        s->event_bits = bits;
        s->n_event_bits = n_bits;
}

static int cmp_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
        return x < y ? -1 : x > y;
}

static int cmp_pid(const void *a, const void *b) {
        pid_t x = *(const pid_t *) a, y = *(const pid_t *) b;
        return x < y ? -1 : x > y;
}

/* Whether DIR is A or below it (both resolved: absolute, no trailing '/'). */
static bool path_at_or_below(const char *dir, const char *a) {
        size_t n = strlen(a);

        if (strncmp(dir, a, n) != 0)
                return false;
        return dir[n] == 0 || dir[n] == '/' || (n > 0 && a[n - 1] == '/');
}

/* CGROUPS, each with every cgroup below it as they are now, as sorted ids.
 * The walk runs in the loop, so what a client may make it cost is bounded:
 * a cgroup named twice, or one below another named, is walked once (64 ×
 * "/" walked the tree 64 times: 3.3 s on a host with 1,008 cgroups), and
 * the walks of one subscribe stop at SUBSCRIBE_CGROUPS_MAX cgroups. */
static int build_cgroups(struct subscription *s, char **cgroups, const char *mount, char **ret_error) {
        _cleanup_(freep) uint64_t *all = NULL;
        _cleanup_(strv_freep) char **dirs = NULL;
        size_t n_all = 0, n = 0;
        int r;

        if (!mount)
                return error_set(ret_error, -EINVAL, "subscribe: no cgroup2 file system is mounted on this host");
        while (cgroups[n])
                n++;
        dirs = calloc(n + 1, sizeof(char *));
        if (!dirs)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (cgroup_resolve(mount, cgroups[i], &dirs[i]) < 0)
                        return error_set(ret_error, -EINVAL, "subscribe: cgroups[%zu] \"%s\" is not a cgroup path", i,
                                         cgroups[i]);
        for (size_t i = 0; i < n; i++) {
                _cleanup_(freep) uint64_t *ids = NULL;
                size_t n_ids;
                uint64_t *a;
                bool covered = false;

                /* Covered by another entry: an earlier equal one, or any
                 * one above it. */
                for (size_t j = 0; j < n && !covered; j++)
                        covered = j != i && path_at_or_below(dirs[i], dirs[j]) &&
                                  (strcmp(dirs[i], dirs[j]) != 0 || j < i);
                if (covered)
                        continue;
                r = cgroup_subtree_ids(dirs[i], SUBSCRIBE_CGROUPS_MAX - n_all, &ids, &n_ids);
                if (r == -E2BIG)
                        return error_set(ret_error, -EINVAL,
                                         "subscribe: cgroups: more than %u cgroups at and below those named (at "
                                         "cgroups[%zu] %s); name cgroups further down the tree",
                                         SUBSCRIBE_CGROUPS_MAX, i, dirs[i]);
                if (r == -ELOOP)
                        return error_set(ret_error, -EINVAL,
                                         "subscribe: cgroups[%zu]: the tree below %s is more than %u levels deep; "
                                         "name a cgroup further down",
                                         i, dirs[i], CGROUP_WALK_DEPTH_MAX);
                if (r < 0)
                        return error_set(ret_error, -EINVAL, "subscribe: cgroups[%zu]: no cgroup %s (%s)", i, dirs[i],
                                         strerror(-r));
                a = realloc(all, (n_all + n_ids) * sizeof(uint64_t));
                if (!a)
                        return -ENOMEM;
                all = a;
                memcpy(all + n_all, ids, n_ids * sizeof(uint64_t));
                n_all += n_ids;
        }
        /* An empty list matches nothing, not everything. */
        if (!all && !(all = calloc(1, sizeof(uint64_t))))
                return -ENOMEM;
        qsort(all, n_all, sizeof(uint64_t), cmp_u64);
        s->cgroups = TAKE_PTR(all);
        s->n_cgroups = n_all;
        return 0;
}

int subscription_build(struct subscription *ret, struct request *req, const char *const *names, size_t n,
                       const char *cgroup_mount, char **ret_error) {
        struct subscription s;
        size_t n_bits = (n + 63) / 64;
        ssize_t bad;
        int r;

        subscription_init(&s);
        if (req->events) {
                s.all_events = false;
                s.n_event_bits = n_bits;
                s.event_bits = calloc(n_bits ? n_bits : 1, sizeof(uint64_t));
                if (!s.event_bits)
                        return -ENOMEM;
                bad = resolve_names(req->events, names, n, s.event_bits, n_bits);
                if (bad >= 0) {
                        char entry[320];

                        /* How to have it served, where the name says:
                         * "evmonctl watch" offers --add to an admin. */
                        if (encode_add_entry(req->events[bad], entry, sizeof(entry)) >= 0)
                                r = error_set(ret_error, -EINVAL, "subscribe: no event \"%s\" is served here (the hello "
                                              "line lists them); root or socket.admin_group adds it: evmonctl add '%s' "
                                              "(or evmonctl watch --add), or to the config's \"events\"",
                                              req->events[bad], entry);
                        else
                                r = error_set(ret_error, -EINVAL, "subscribe: no event \"%s\" is served here (the hello "
                                              "line lists them); root or socket.admin_group adds one with evmonctl add "
                                              "'{\"tracepoint\":\"SYSTEM:NAME\"}' or '{\"kprobe\":\"SYMBOL\",\"name\":\"NAME\"}' "
                                              "(doc/config.md), or to the config's \"events\"", req->events[bad]);
                        subscription_done(&s);
                        return r;
                }
                s.event_names = TAKE_PTR(req->events);
        }
        if (req->has_pids) {
                /* Searched on every line: a long list must not cost a scan. */
                qsort(req->pids, req->n_pids, sizeof(pid_t), cmp_pid);
                s.pids = TAKE_PTR(req->pids);
                s.n_pids = req->n_pids;
        }
        s.self = req->self;
        if (req->filter && *req->filter) {
                r = linefilter_parse(req->filter, &s.filter, ret_error);
                if (r < 0) {
                        if (r == -EINVAL && ret_error && *ret_error) {
                                char *m = NULL;

                                if (asprintf(&m, "subscribe: %s", *ret_error) >= 0) {
                                        free(*ret_error);
                                        *ret_error = m;
                                }
                        }
                        subscription_done(&s);
                        return r;
                }
        }
        s.comms = TAKE_PTR(req->comms);
        s.containers = TAKE_PTR(req->containers);
        s.namespaces = TAKE_PTR(req->namespaces);
        if (req->cgroups) {
                r = build_cgroups(&s, req->cgroups, cgroup_mount, ret_error);
                if (r < 0) {
                        subscription_done(&s);
                        return r;
                }
        }
        *ret = s;
        return 0;
}
