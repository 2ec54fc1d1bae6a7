/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Event handles: the table monitor_add() fills, the id index that finds
 * a sample's event, and the retired handles whose samples may still be
 * in the rings after monitor_remove(). */

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "evmon/async.h"
#include "evmon/cleanup.h"
#include "cursor.h"
#include "monitor-int.h"

static void handle_close_fds(struct handle *h) {
        if (!h->fds)
                return;
        for (size_t i = 0; i < h->n; i++) {
                safe_close(h->fds[i]);
                if (h->bell_fds)
                        safe_close(h->bell_fds[i]);
        }
        free(h->fds);
        h->fds = NULL;
        free(h->bell_fds);
        h->bell_fds = NULL;
}

void handle_done(struct handle *h) {
        handle_close_fds(h);
        free(h->ids);
        free(h->heads);
        free(h->filter);
        *h = (struct handle) {};
}

/* Rebuilds the id index over active and retired handles. On failure the
 * old index stays; the callers keep it correct in that case (see there). */
int index_rebuild(struct monitor *m) {
        struct id_entry *index = NULL;
        size_t n = 0, k = 0;

        /* The open ones only: a slot of a CPU that is down (every
         * possible CPU has one) has no id. */
        for (size_t h = 0; h < m->n_handles; h++)
                if (m->handles[h].state != HANDLE_FREE)
                        for (size_t i = 0; i < m->handles[h].n; i++)
                                n += m->handles[h].ids[i] != 0;

        if (n > 0) {
                index = calloc(n, sizeof(*index));
                if (!index)
                        return -ENOMEM;
        }

        for (size_t h = 0; h < m->n_handles; h++) {
                if (m->handles[h].state == HANDLE_FREE)
                        continue;
                for (size_t i = 0; i < m->handles[h].n; i++)
                        if (m->handles[h].ids[i] != 0)
                                index[k++] = (struct id_entry) { .id = m->handles[h].ids[i], .handle = h };
        }
        n = k;

        if (n > 0)
                qsort(index, n, sizeof(*index), cmp_id_entry);
        free(m->index);
        m->index = index;
        m->n_index = n;
        return 0;
}

/* Frees retired handles whose samples every ring has been read past: no
 * record with their ids can come any more. */
void retired_prune(struct monitor *m) {
        bool changed = false;

        for (size_t h = 0; h < m->n_handles; h++) {
                struct handle *hd = &m->handles[h];
                bool done = true;

                /* Its fds are closed now, so the kernel writes nothing more
                 * for it: the heads read after that bound its last samples. */
                if (hd->state == HANDLE_CLOSING && async_done(hd->close_ticket)) {
                        for (size_t i = 0; i < m->n_cpus; i++)
                                hd->heads[i] = cpu_head(&m->cpus[i]);
                        hd->state = HANDLE_RETIRED;
                }
                if (hd->state != HANDLE_RETIRED)
                        continue;
                for (size_t i = 0; i < m->n_cpus && done; i++)
                        if ((int64_t) (cpu_tail(&m->cpus[i]) - hd->heads[i]) < 0)
                                done = false;
                if (!done)
                        continue;

                /* The index may keep pointing here if the rebuild fails:
                 * a FREE handle is never delivered to, just like a retired
                 * one. */
                free(hd->ids);
                free(hd->heads);
                *hd = (struct handle) { .state = HANDLE_FREE };
                /* The slot is taken again by the next monitor_add(): a
                 * member must not take that one for its leader. */
                for (size_t j = 0; j < m->n_handles; j++)
                        if (m->handles[j].group == (int) h)
                                m->handles[j].group = -1;
                changed = true;
        }

        if (changed)
                (void) index_rebuild(m);
}

void handle_count_unbelled(struct handle *hd) {
        hd->n_unbelled = 0;
        for (size_t k = 0; k < hd->n; k++)
                hd->n_unbelled += hd->fds[k] >= 0 && hd->bell_fds[k] < 0 && hd->bell_fds[k] != -EOPNOTSUPP;
}

struct handle *handle_get(struct monitor *m, int h) {
        if (!m || h < 0 || (size_t) h >= m->n_handles)
                return NULL;
        if (m->handles[h].state != HANDLE_ACTIVE)
                return NULL;
        return &m->handles[h];
}

/* Whether an active handle is in H's group. */
bool handle_leads(const struct monitor *m, int h) {
        for (size_t i = 0; i < m->n_handles; i++)
                if ((int) i != h && m->handles[i].state == HANDLE_ACTIVE && m->handles[i].group == h)
                        return true;
        return false;
}

size_t monitor_handle_n_fds(const struct monitor *m, int h) {
        const struct handle *hd = handle_get((struct monitor *) m, h);

        return hd ? hd->n : 0;
}

bool monitor_fd_pid_target(const struct monitor *m, size_t i, size_t *ret_target) {
        size_t per_cpu, t;

        if (!m || m->n_pids == 0)
                return false;
        /* monitor_add() opens the targets of one CPU after another:
         * cgroups first, then pids. */
        per_cpu = m->n_cgroups + m->n_pids;
        t = i % per_cpu;
        if (t < m->n_cgroups)
                return false;
        if (ret_target)
                *ret_target = t - m->n_cgroups;
        return true;
}

int monitor_handle_fd(const struct monitor *m, int h, size_t i, int *ret_cpu) {
        const struct handle *hd = handle_get((struct monitor *) m, h);
        size_t per_cpu;

        if (!hd || i >= hd->n)
                return -EINVAL;
        /* monitor_add() opens the targets of one CPU after another. */
        per_cpu = m->n_cgroups + m->n_pids ?: 1;
        if (ret_cpu)
                *ret_cpu = m->cpus[i / per_cpu].cpu;
        return hd->fds[i];
}

const struct perf_event_attr *monitor_handle_attr(const struct monitor *m, int h) {
        const struct handle *hd = handle_get((struct monitor *) m, h);

        return hd ? &hd->attr : NULL;
}

const uint64_t *monitor_handle_ids(const struct monitor *m, int h) {
        const struct handle *hd = handle_get((struct monitor *) m, h);

        return hd ? hd->ids : NULL;
}

int monitor_read(struct monitor *m, int h, size_t i, void *buf, size_t size, struct perf_read *ret) {
        const struct handle *hd = handle_get(m, h);
        struct cursor c;
        ssize_t n;

        if (!hd || i >= hd->n || !buf || !ret)
                return -EINVAL;
        if (hd->fds[i] < 0)
                return -ENODEV;         /* its CPU is down */
        n = read(hd->fds[i], buf, size);
        if (n < 0)
                return negative_errno();
        /* A read that returns nothing: the event could not be scheduled
         * in a way the kernel can report (an error state, pinned and
         * evicted): perf_read() returns 0 then. */
        if (n == 0)
                return -ENODATA;
        c = cursor_make(buf, (size_t) n);
        return read_format_parse(&c, hd->attr.read_format, ret);
}

void *monitor_id_userdata(const struct monitor *m, uint64_t id) {
        const struct id_entry *e;

        if (!m)
                return NULL;
        e = index_find(m, id);
        if (!e || m->handles[e->handle].state != HANDLE_ACTIVE)
                return NULL;
        return m->handles[e->handle].userdata;
}
