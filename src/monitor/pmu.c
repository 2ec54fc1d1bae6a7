/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Dynamic PMUs as perf names them: PMU/term=value,.../ resolved from
 * /sys/bus/event_source/devices/PMU/{type,format/NAME,events/NAME}
 * (Documentation/ABI/testing/sysfs-bus-event_source-devices-format and
 * -events). */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "evmon/attr.h"
#include "evmon/cleanup.h"
#include "evmon/io.h"
#include "evmon/parse.h"
#include "evmon/strv.h"

#define PMU_ROOT "/sys/bus/event_source/devices"
/* An alias may name format terms only, so one level of expansion. */
#define TERMS_MAX 32

/* Scatters VALUE into the bits a format file names ("config:0-7,32-35"):
 * its low bits go to the lowest listed bits, in order (perf's
 * pmu_format_value()). */
static int format_apply(const char *fmt, uint64_t value, struct perf_event_attr *a, const char **ret_reason) {
        const char *p = strchr(fmt, ':');
        __u64 *word;
        unsigned used = 0;
        size_t l;

        if (!p)
                return -EINVAL;
        l = (size_t) (p - fmt);
        if (l == 6 && strncmp(fmt, "config", 6) == 0)
                word = &a->config;
        else if (l == 7 && strncmp(fmt, "config1", 7) == 0)
                word = &a->config1;
        else if (l == 7 && strncmp(fmt, "config2", 7) == 0)
                word = &a->config2;
#ifdef PERF_ATTR_SIZE_VER8
        else if (l == 7 && strncmp(fmt, "config3", 7) == 0)
                word = &a->config3;
#endif
        else {
                *ret_reason = "the PMU's format names a config word this build does not know";
                return -EINVAL;
        }

        p++;
        while (*p) {
                char *end;
                unsigned long lo, hi;

                lo = strtoul(p, &end, 10);
                if (end == p)
                        return -EINVAL;
                hi = lo;
                p = end;
                if (*p == '-') {
                        p++;
                        hi = strtoul(p, &end, 10);
                        if (end == p)
                                return -EINVAL;
                        p = end;
                }
                if (hi < lo || hi > 63)
                        return -EINVAL;
                for (unsigned long b = lo; b <= hi; b++, used++)
                        if (used < 64 && (value >> used) & 1)
                                *word |= 1ULL << b;
                if (*p == ',')
                        p++;
                else if (*p)
                        return -EINVAL;
        }

        if (used < 64 && (value >> used) != 0) {
                *ret_reason = "a term's value is wider than its format field";
                return -ERANGE;
        }
        return 0;
}

struct pmu_ctx {
        char dir[PATH_MAX];
        struct perf_event_attr *attr;
        const char **reason;
};

static int term_apply(struct pmu_ctx *c, const char *term, unsigned depth);

/* TERMS is a comma-separated list; modifies it in place. */
static int terms_apply(struct pmu_ctx *c, char *terms, unsigned depth) {
        char *save = NULL;
        unsigned n = 0;

        for (char *t = strtok_r(terms, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                int r;

                if (++n > TERMS_MAX) {
                        *c->reason = "too many terms";
                        return -EINVAL;
                }
                r = term_apply(c, t, depth);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int term_apply(struct pmu_ctx *c, const char *term, unsigned depth) {
        char name[NAME_MAX + 1], path[PATH_MAX + NAME_MAX + 16], buf[4096];
        const char *eq = strchr(term, '=');
        uint64_t value = 1;
        size_t l = eq ? (size_t) (eq - term) : strlen(term);
        int r;

        if (l == 0 || l > NAME_MAX || memchr(term, '/', l)) {
                *c->reason = "a term is NAME or NAME=VALUE";
                return -EINVAL;
        }
        memcpy(name, term, l);
        name[l] = '\0';
        if (eq && parse_u64(eq + 1, &value) < 0) {
                *c->reason = "a term's value is a number (0x.. for hex)";
                return -EINVAL;
        }

        /* perf's built-in terms first. */
        if (strcmp(name, "config") == 0) {
                c->attr->config = value;
                return 0;
        }
        if (strcmp(name, "config1") == 0) {
                c->attr->config1 = value;
                return 0;
        }
        if (strcmp(name, "config2") == 0) {
                c->attr->config2 = value;
                return 0;
        }
        if (strcmp(name, "period") == 0) {
                c->attr->sample_period = value;
                c->attr->freq = 0;
                return 0;
        }
        if (strcmp(name, "freq") == 0) {
                c->attr->sample_freq = value;
                c->attr->freq = 1;
                return 0;
        }

        snprintf(path, sizeof(path), "%s/format/%s", c->dir, name);
        r = sysfs_read_small(path, buf, sizeof(buf));
        if (r >= 0)
                return format_apply(buf, value, c->attr, c->reason);
        if (r != -ENOENT)
                return r;

        /* An event alias expands to its own terms ("event=0x3c,umask=0"). */
        snprintf(path, sizeof(path), "%s/events/%s", c->dir, name);
        r = sysfs_read_small(path, buf, sizeof(buf));
        if (r == -ENOENT || (r >= 0 && (eq || depth > 0))) {
                *c->reason = "not a format term or event of this PMU (see evmonctl list)";
                return -EINVAL;
        }
        if (r < 0)
                return r;
        return terms_apply(c, buf, depth + 1);
}

int pmu_resolve(const char *root, const char *spec, struct perf_event_attr *attr, const char **ret_reason) {
        const char *slash, *dummy = NULL;
        char pmu[NAME_MAX + 1], terms[4096];
        struct pmu_ctx c;
        uint32_t t;
        size_t l, tl;
        int r;

        if (!ret_reason)
                ret_reason = &dummy;
        *ret_reason = NULL;
        if (!spec || !attr)
                return -EINVAL;
        root = root ?: PMU_ROOT;

        slash = strchr(spec, '/');
        l = slash ? (size_t) (slash - spec) : 0;
        tl = slash ? strlen(slash + 1) : 0;
        if (!slash || l == 0 || l > NAME_MAX || tl == 0 || slash[tl] != '/') {
                *ret_reason = "perf's PMU syntax is PMU/term=value,.../";
                return -EINVAL;
        }
        memcpy(pmu, spec, l);
        pmu[l] = '\0';
        if (pmu[0] == '.' || tl - 1 >= sizeof(terms)) {
                *ret_reason = "perf's PMU syntax is PMU/term=value,.../";
                return -EINVAL;
        }
        memcpy(terms, slash + 1, tl - 1);
        terms[tl - 1] = '\0';

        c = (struct pmu_ctx) { .attr = attr, .reason = ret_reason };
        snprintf(c.dir, sizeof(c.dir), "%s/%s", root, pmu);
        r = sysfs_pmu_type(root, pmu, &t);
        if (r == -ENOENT) {
                *ret_reason = "no such PMU under /sys/bus/event_source/devices";
                return r;
        }
        if (r == -EBADMSG) {
                *ret_reason = "the PMU's type file is not a number";
                return -EINVAL;
        }
        if (r < 0)
                return r;

        attr->type = t;
        attr->config = attr->config1 = attr->config2 = 0;
        return terms_apply(&c, terms, 0);
}

/* Sorted entry names of DIR, without dot files and (for events/) without
 * the .scale/.unit/.per-pkg/.snapshot companions of an alias. */
static int list_dir(const char *dir, bool aliases, char ***ret, size_t *ret_n) {
        struct strv_builder b = {};
        struct dirent *de;
        DIR *d;

        d = opendir(dir);
        if (!d)
                return negative_errno();
        while ((de = readdir(d))) {
                char *s;

                if (de->d_name[0] == '.')
                        continue;
                if (aliases && strchr(de->d_name, '.'))
                        continue;
                /* strv_builder_add() frees S when it fails. */
                s = strdup(de->d_name);
                if (!s || strv_builder_add(&b, s) < 0) {
                        closedir(d);
                        strv_free(b.l);
                        return -ENOMEM;
                }
        }
        closedir(d);
        strv_sort(b.l, b.n);
        *ret = b.l;
        *ret_n = b.n;
        return 0;
}

int pmu_foreach_event(const char *root, pmu_event_fn fn, void *userdata) {
        _cleanup_(strv_freep) char **pmus = NULL;
        size_t n_pmus = 0;
        int r;

        if (!fn)
                return -EINVAL;
        root = root ?: PMU_ROOT;
        r = list_dir(root, false, &pmus, &n_pmus);
        if (r < 0)
                return r;

        for (size_t i = 0; i < n_pmus; i++) {
                _cleanup_(strv_freep) char **events = NULL;
                char path[PATH_MAX + 64];
                size_t n_events = 0;
                uint32_t t;

                if (sysfs_pmu_type(root, pmus[i], &t) < 0)
                        continue;
                snprintf(path, sizeof(path), "%s/%s/events", root, pmus[i]);
                if (list_dir(path, true, &events, &n_events) < 0)
                        n_events = 0;
                if (n_events == 0) {
                        r = fn(pmus[i], t, NULL, userdata);
                        if (r < 0)
                                return r;
                }
                for (size_t k = 0; k < n_events; k++) {
                        r = fn(pmus[i], t, events[k], userdata);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}
