/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Dynamic probes: kprobe_events/uprobe_events definitions in our own
 * group, their removal, the crash-cleanup record, and the fd-scoped
 * kprobe/uprobe PMUs (Documentation/trace/kprobetrace.rst,
 * uprobetracer.rst; perf_event_open(2) for kprobe_func/uprobe_path). */

#define _GNU_SOURCE 1

#include <ctype.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "evmon/cleanup.h"
#include "evmon/error.h"
#include "evmon/io.h"
#include "evmon/parse.h"
#include "evmon/probe.h"
#include "evmon/strv.h"
#include "evmon/tracefs.h"

/* The kernel's MAX_EVENT_NAME_LEN, NUL included. */
#define PROBE_NAME_MAX 64


static const char *const kind_names[_PROBE_KIND_MAX] = {
        [PROBE_KPROBE] = "kprobe",
        [PROBE_KRETPROBE] = "kretprobe",
        [PROBE_UPROBE] = "uprobe",
        [PROBE_URETPROBE] = "uretprobe",
};

const char *probe_kind_to_string(enum probe_kind k) {
        if (k < 0 || k >= _PROBE_KIND_MAX)
                return NULL;
        return kind_names[k];
}

enum probe_kind probe_kind_from_string(const char *s) {
        if (!s)
                return _PROBE_KIND_INVALID;
        for (int k = 0; k < _PROBE_KIND_MAX; k++)
                if (strcmp(s, kind_names[k]) == 0)
                        return k;
        return _PROBE_KIND_INVALID;
}

static bool kind_is_valid(enum probe_kind k) {
        return k >= 0 && k < _PROBE_KIND_MAX;
}

static const char *events_file(enum probe_kind k) {
        return probe_kind_is_uprobe(k) ? "uprobe_events" : "kprobe_events";
}

bool probe_name_is_valid(const char *s) {
        size_t n;

        if (!s || !(isalpha((unsigned char) s[0]) || s[0] == '_'))
                return false;
        for (n = 1; s[n]; n++)
                if (!(isalnum((unsigned char) s[n]) || s[n] == '_'))
                        return false;
        return n < PROBE_NAME_MAX;
}

/* Kernel symbols: C identifiers plus the '.' of compiler clones
 * ("foo.isra.0", "foo.cold") and an optional "MODULE:" prefix. */
static bool symbol_is_valid(const char *s, bool allow_colon) {
        if (!s || !(isalpha((unsigned char) s[0]) || s[0] == '_' || s[0] == '.'))
                return false;
        for (; *s; s++)
                if (!(isalnum((unsigned char) *s) || strchr("_.$@", *s) || (allow_colon && *s == ':')))
                        return false;
        return true;
}

/* "SYMBOL[+OFFSET]" or "ADDRESS" into *ret's symbol and offset. */
static int parse_location(const char *s, bool allow_colon, struct probe_target *ret,
                          const char *target, char **ret_error) {
        _cleanup_(freep) char *sym = NULL;
        const char *plus;
        uint64_t v;

        if (!*s)
                return error_set(ret_error, -EINVAL, "probe target \"%s\": missing symbol or address", target);
        if (isdigit((unsigned char) s[0])) {
                if (parse_u64(s, &v) < 0)
                        return error_set(ret_error, -EINVAL, "probe target \"%s\": bad address \"%s\"", target, s);
                ret->symbol = NULL;
                ret->offset = v;
                return 0;
        }

        plus = strchr(s, '+');
        sym = plus ? strndup(s, (size_t) (plus - s)) : strdup(s);
        if (!sym)
                return -ENOMEM;
        if (!symbol_is_valid(sym, allow_colon))
                return error_set(ret_error, -EINVAL, "probe target \"%s\": bad symbol \"%s\"", target, sym);
        v = 0;
        /* A digit first: parse_u64() would take "+ 5" and "++5". */
        if (plus && (!isdigit((unsigned char) plus[1]) || parse_u64(plus + 1, &v) < 0))
                return error_set(ret_error, -EINVAL, "probe target \"%s\": bad offset \"%s\"", target, plus + 1);
        ret->symbol = TAKE_PTR(sym);
        ret->offset = v;
        return 0;
}

void probe_target_done(struct probe_target *t) {
        if (!t)
                return;
        free(t->path);
        free(t->symbol);
        *t = (struct probe_target) {};
}

int probe_parse_target(enum probe_kind kind, const char *target, struct probe_target *ret,
                       char **ret_error) {
        _cleanup_(probe_target_done) struct probe_target t = {};
        const char *colon;
        int r;

        if (ret_error)
                *ret_error = NULL;
        if (!kind_is_valid(kind))
                return error_set(ret_error, -EINVAL, "unknown probe kind %d", (int) kind);
        if (!target || !*target)
                return error_set(ret_error, -EINVAL, "%s: empty target", probe_kind_to_string(kind));

        if (!probe_kind_is_uprobe(kind)) {
                r = parse_location(target, true, &t, target, ret_error);
                if (r < 0)
                        return r;
                *ret = t;
                t = (struct probe_target) {};
                return 0;
        }

        /* PATH:LOCATION; a path may hold ':', a symbol or offset may not. */
        colon = strrchr(target, ':');
        if (!colon)
                return error_set(ret_error, -EINVAL, "uprobe target \"%s\": expected PATH:SYMBOL[+OFFSET] or PATH:0xOFFSET",
                            target);
        if (target[0] != '/')
                return error_set(ret_error, -EINVAL, "uprobe target \"%s\": the path must be absolute", target);
        t.path = strndup(target, (size_t) (colon - target));
        if (!t.path)
                return -ENOMEM;
        r = parse_location(colon + 1, false, &t, target, ret_error);
        if (r < 0)
                return r;
        *ret = t;
        t = (struct probe_target) {};
        return 0;
}

int probe_resolve_target(enum probe_kind kind, const char *target, struct probe_target *ret,
                         char **ret_error) {
        _cleanup_(probe_target_done) struct probe_target t = {};
        _cleanup_(freep) char *real = NULL;
        uint64_t off;
        int r;

        r = probe_parse_target(kind, target, &t, ret_error);
        if (r < 0)
                return r;

        if (probe_kind_is_uprobe(kind)) {
                if (t.symbol) {
                        r = elf_resolve_symbol(t.path, t.symbol, &off, &real, ret_error);
                        if (r < 0)
                                return r;
                        t.offset += off;
                        free(t.symbol);
                        t.symbol = NULL;
                } else {
                        /* The kernel follows symlinks too, but the record
                         * of what we probed should name the real file. */
                        _cleanup_(closep) int fd = -1;

                        /* Refused here, with a message that names it,
                         * rather than as a bare EINVAL from the kernel: a
                         * FIFO, a directory, a device, a user's link to
                         * another's file. */
                        fd = elf_open_target(t.path, NULL, &real, NULL, ret_error);
                        if (fd < 0)
                                return fd;
                }
                free(t.path);
                t.path = TAKE_PTR(real);
        }

        *ret = t;
        t = (struct probe_target) {};
        return 0;
}

/* P's target as the kernel is to get it: resolved here, or, when the
 * caller resolved it against an open file (target_resolved), only parsed. */
static int spec_resolve_target(const struct probe_spec *p, struct probe_target *ret, char **ret_error) {
        int r;

        if (!p->target_resolved || !probe_kind_is_uprobe(p->kind))
                return probe_resolve_target(p->kind, p->target, ret, ret_error);
        r = probe_parse_target(p->kind, p->target, ret, ret_error);
        if (r < 0)
                return r;
        if (ret->symbol) {
                probe_target_done(ret);
                return error_set(ret_error, -EINVAL, "uprobe target \"%s\": a resolved target takes a file offset",
                                 p->target);
        }
        return 0;
}

/* tracefs splits a definition at white space; anything else is the
 * kernel's to judge (and it reports through error_log). */
static bool word_is_valid(const char *s) {
        if (!s || !*s)
                return false;
        for (; *s; s++)
                if (isspace((unsigned char) *s) || iscntrl((unsigned char) *s))
                        return false;
        return true;
}

static int check_spec(const char *group, const struct probe_spec *p, char **ret_error) {
        if (!p || !kind_is_valid(p->kind))
                return error_set(ret_error, -EINVAL, "bad probe kind");
        if (!probe_name_is_valid(group))
                return error_set(ret_error, -EINVAL,
                            "bad probe group \"%s\": use letters, digits and '_', not starting with a digit",
                            group ? group : "");
        if (!probe_name_is_valid(p->name))
                return error_set(ret_error, -EINVAL,
                            "bad probe name \"%s\": use letters, digits and '_', not starting with a digit",
                            p->name ? p->name : "");
        if (p->n_fetch > 0 && !p->fetch)
                return error_set(ret_error, -EINVAL, "probe %s: no fetch-args given", p->name);
        for (size_t i = 0; i < p->n_fetch; i++)
                if (!word_is_valid(p->fetch[i]))
                        return error_set(ret_error, -EINVAL,
                                    "probe %s: bad fetch-arg \"%s\": must be one word without white space",
                                    p->name, p->fetch[i] ? p->fetch[i] : "");
        return 0;
}

int probe_format_command(const char *group, const struct probe_spec *p, char **ret_line,
                         char **ret_error) {
        _cleanup_(probe_target_done) struct probe_target t = {};
        _cleanup_(freep) char *buf = NULL;
        _cleanup_(fclosep) FILE *f = NULL;
        size_t size;
        int r;

        if (ret_error)
                *ret_error = NULL;
        if (!group)
                group = PROBE_GROUP_DEFAULT;
        r = check_spec(group, p, ret_error);
        if (r < 0)
                return r;
        r = spec_resolve_target(p, &t, ret_error);
        if (r < 0)
                return r;
        if (t.path && !word_is_valid(t.path))
                return error_set(ret_error, -EINVAL,
                            "probe %s: uprobe_events cannot take a path with white space (\"%s\")",
                            p->name, t.path);

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        fprintf(f, "%c:%s/%s ", probe_kind_is_return(p->kind) ? 'r' : 'p', group, p->name);
        if (t.path)
                fprintf(f, "%s:0x%" PRIx64, t.path, t.offset);
        else if (t.symbol && t.offset)
                fprintf(f, "%s+%" PRIu64, t.symbol, t.offset);
        else if (t.symbol)
                fputs(t.symbol, f);
        else
                fprintf(f, "0x%" PRIx64, t.offset);
        for (size_t i = 0; i < p->n_fetch; i++)
                fprintf(f, " %s", p->fetch[i]);
        if (fflush(f) != 0 || ferror(f))
                return -ENOMEM;
        fclose(TAKE_PTR(f));

        *ret_line = TAKE_PTR(buf);
        return 0;
}

/* Appends LINE and a newline to tracefs file REL with one write(), as the
 * kernel parses one command per write. */
static int write_command(struct tracefs *t, const char *rel, const char *line) {
        _cleanup_(freep) char *path = NULL, *buf = NULL;
        _cleanup_(closep) int fd = -1;
        size_t n;
        ssize_t k;

        if (asprintf(&path, "%s/%s", tracefs_path(t), rel) < 0)
                return -ENOMEM;
        if (asprintf(&buf, "%s\n", line) < 0)
                return -ENOMEM;
        n = strlen(buf);

        /* O_APPEND: without it the open truncates, which deletes every
         * probe in the file, other people's too. */
        fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? -EOPNOTSUPP : negative_errno();
        k = write(fd, buf, n);
        if (k < 0)
                return negative_errno();
        if ((size_t) k != n)
                return -EIO;
        return 0;
}

/* 1 when events/GROUP/NAME exists, 0 when not. */
static int probe_exists(struct tracefs *t, const char *group, const char *name) {
        _cleanup_(freep) char *rel = NULL, *text = NULL;
        size_t len;
        int r;

        if (asprintf(&rel, "events/%s/%s/id", group, name) < 0)
                return -ENOMEM;
        r = tracefs_read(t, rel, &text, &len);
        if (r == -ENOENT)
                return 0;
        return r < 0 ? r : 1;
}

int probe_add(struct tracefs *t, const char *group, const struct probe_spec *p,
              struct format **ret_format, char **ret_error) {
        _cleanup_(freep) char *line = NULL, *why = NULL;
        _cleanup_(format_freep) struct format *fmt = NULL;
        int r;

        if (ret_error)
                *ret_error = NULL;
        if (!t)
                return -EINVAL;
        if (!group)
                group = PROBE_GROUP_DEFAULT;

        r = probe_format_command(group, p, &line, ret_error);
        if (r < 0)
                return r;

        /* Never write a definition for a GROUP/NAME that exists: since 5.7
         * the kernel then adds our location to that event, and on 6.18 a
         * location added to a uprobe event that perf has open is never
         * registered, so the next close of one of its perf fds oopses in
         * uprobe_perf_close() holding event_mutex, which wedges all
         * tracing until a reboot (seen here). */
        r = probe_exists(t, group, p->name);
        if (r < 0)
                return error_set(ret_error, r, "cannot tell whether probe %s/%s exists: %s", group, p->name, strerror(-r));
        if (r > 0)
                return error_set(ret_error, -EEXIST, "probe %s/%s exists already", group, p->name);

        r = write_command(t, events_file(p->kind), line);
        if (r == -EOPNOTSUPP)
                return error_set(ret_error, r, "this kernel has no %s (CONFIG_%s_EVENTS): cannot add %s %s",
                            events_file(p->kind), probe_kind_is_uprobe(p->kind) ? "UPROBE" : "KPROBE",
                            probe_kind_to_string(p->kind), p->name);
        if (r < 0) {
                why = tracefs_last_error(t, line);
                if (why)
                        return error_set(ret_error, r, "%s", why);
                if (r == -EEXIST)
                        return error_set(ret_error, r, "probe %s/%s exists already", group, p->name);
                return error_set(ret_error, r, "the kernel refused \"%s\": %s", line, strerror(-r));
        }

        if (!ret_format)
                return 0;

        r = tracefs_event_format(t, group, p->name, &fmt);
        if (r < 0) {
                (void) probe_remove(t, group, p->kind, p->name);
                return error_set(ret_error, r, "added %s/%s but cannot read its format: %s", group, p->name,
                            strerror(-r));
        }
        *ret_format = TAKE_PTR(fmt);
        return 0;
}

static int remove_in(struct tracefs *t, const char *file, const char *group, const char *name) {
        _cleanup_(freep) char *line = NULL;

        if (asprintf(&line, "-:%s/%s", group, name) < 0)
                return -ENOMEM;
        return write_command(t, file, line);
}

int probe_remove(struct tracefs *t, const char *group, enum probe_kind kind, const char *name) {
        if (!t || !kind_is_valid(kind))
                return -EINVAL;
        if (!group)
                group = PROBE_GROUP_DEFAULT;
        if (!probe_name_is_valid(group) || !probe_name_is_valid(name))
                return -EINVAL;
        return remove_in(t, events_file(kind), group, name);
}

/* Removes GROUP's probes listed in FILE, whose lines read
 * "p:GROUP/NAME TARGET ARGS", "r:..." or "r16:..." (kretprobe maxactive). */
static int remove_group_in(struct tracefs *t, const char *file, const char *group, unsigned *removed) {
        _cleanup_(freep) char *text = NULL;
        size_t len, glen = strlen(group);
        char *line, *save = NULL;
        int r, ret = 0;

        r = tracefs_read(t, file, &text, &len);
        if (r == -ENOENT)
                return 0;       /* no such probes on this kernel */
        if (r < 0)
                return r;

        for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char *g, *name, *end;

                if (line[0] != 'p' && line[0] != 'r')
                        continue;
                g = strchr(line, ':');
                if (!g)
                        continue;
                g++;
                if (strncmp(g, group, glen) != 0 || g[glen] != '/')
                        continue;
                name = g + glen + 1;
                end = name + strcspn(name, " \t");
                *end = 0;
                if (!probe_name_is_valid(name))
                        continue;

                r = remove_in(t, file, group, name);
                if (r < 0 && r != -ENOENT) {
                        if (ret == 0)
                                ret = r;
                        continue;
                }
                if (r == 0)
                        (*removed)++;
        }
        return ret;
}

int probe_remove_group(struct tracefs *t, const char *group, unsigned *ret_removed) {
        unsigned removed = 0;
        int r, ret;

        if (!t || !probe_name_is_valid(group))
                return -EINVAL;

        ret = remove_group_in(t, "kprobe_events", group, &removed);
        r = remove_group_in(t, "uprobe_events", group, &removed);
        if (ret == 0)
                ret = r;
        if (ret_removed)
                *ret_removed = removed;
        return ret;
}

/* ---- the record of our groups ----------------------------------------- */

int probe_record_load(const char *path, char ***ret_groups) {
        _cleanup_(fclosep) FILE *f = NULL;
        _cleanup_(strv_builder_done) struct strv_builder b = {};
        _cleanup_(freep) char *buf = NULL;
        size_t cap = 0;
        ssize_t k;
        int r;

        if (!path || !ret_groups)
                return -EINVAL;

        /* No record yet: no groups. */
        f = fopen(path, "re");
        if (!f && errno != ENOENT)
                return negative_errno();
        while (f && (k = getline(&buf, &cap, f)) >= 0) {
                char *s;

                while (k > 0 && (buf[k - 1] == '\n' || buf[k - 1] == ' '))
                        buf[--k] = 0;
                if (!probe_name_is_valid(buf) || strv_contains(b.l, buf))
                        continue;
                s = strdup(buf);
                if (!s)
                        return -ENOMEM;
                r = strv_builder_add(&b, s);
                if (r < 0)
                        return r;
        }
        if (f && ferror(f))
                return -EIO;
        return strv_builder_finish(&b, ret_groups);
}

static int mkdir_parent(const char *path) {
        _cleanup_(freep) char *dir = strdup(path);
        char *slash;

        if (!dir)
                return -ENOMEM;
        slash = strrchr(dir, '/');
        if (!slash || slash == dir)
                return 0;
        *slash = 0;
        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                return negative_errno();
        return 0;
}

int probe_record_group(const char *path, const char *group) {
        _cleanup_(strv_freep) char **l = NULL;
        _cleanup_(freep) char *tmp = NULL;
        _cleanup_(closep) int fd = -1;
        _cleanup_(fclosep) FILE *f = NULL;
        int r;

        if (!path || !probe_name_is_valid(group))
                return -EINVAL;

        r = probe_record_load(path, &l);
        if (r < 0)
                return r;
        for (char **i = l; *i; i++)
                if (strcmp(*i, group) == 0)
                        return 0;

        r = mkdir_parent(path);
        if (r < 0)
                return r;
        if (asprintf(&tmp, "%s.XXXXXX", path) < 0)
                return -ENOMEM;
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        f = fdopen(fd, "w");
        if (!f) {
                r = negative_errno();
                goto fail;
        }
        fd = -1;
        (void) fchmod(fileno(f), 0644);

        for (char **i = l; *i; i++)
                fprintf(f, "%s\n", *i);
        fprintf(f, "%s\n", group);
        if (fflush(f) != 0 || ferror(f)) {
                r = -EIO;
                goto fail;
        }
        if (rename(tmp, path) < 0) {
                r = negative_errno();
                goto fail;
        }
        return 0;
fail:
        (void) unlink(tmp);
        return r;
}

int probe_record_cleanup(struct tracefs *t, const char *path, unsigned *ret_removed) {
        _cleanup_(strv_freep) char **l = NULL;
        unsigned total = 0;
        int r, ret = 0;

        if (!t || !path)
                return -EINVAL;

        r = probe_record_load(path, &l);
        if (r < 0)
                return r;
        for (char **i = l; *i; i++) {
                unsigned n = 0;

                r = probe_remove_group(t, *i, &n);
                total += n;
                if (r < 0 && ret == 0)
                        ret = r;
        }
        if (ret == 0 && unlink(path) < 0 && errno != ENOENT)
                ret = negative_errno();
        if (ret_removed)
                *ret_removed = total;
        return ret;
}

/* ---- fd-scoped PMUs ---------------------------------------------------- */

int probe_pmu_type(const char *sysfs, enum probe_kind kind, uint32_t *ret_type,
                   uint64_t *ret_retprobe_mask) {
        _cleanup_(freep) char *path = NULL;
        const char *pmu;
        char buf[64];
        uint64_t bit;
        uint32_t type;
        int r;

        if (!kind_is_valid(kind))
                return -EINVAL;
        if (!sysfs)
                sysfs = "/sys";
        pmu = probe_kind_is_uprobe(kind) ? "uprobe" : "kprobe";

        if (asprintf(&path, "%s/bus/event_source/devices", sysfs) < 0)
                return -ENOMEM;
        r = sysfs_pmu_type(path, pmu, &type);
        if (r == -ENOENT)
                return -EOPNOTSUPP;
        if (r < 0)
                return r;
        if (ret_type)
                *ret_type = type;

        if (!ret_retprobe_mask)
                return 0;
        free(path);
        if (asprintf(&path, "%s/bus/event_source/devices/%s/format/retprobe", sysfs, pmu) < 0)
                return -ENOMEM;
        r = sysfs_read_small(path, buf, sizeof(buf));
        if (r == -ENOENT) {
                /* Kernels before the return-probe support of the PMUs. */
                *ret_retprobe_mask = 0;
                return 0;
        }
        if (r < 0)
                return r;
        /* "config:N": bit N of attr.config. */
        if (strncmp(buf, "config:", 7) != 0 || parse_u64(buf + 7, &bit) < 0 || bit > 63)
                return -EBADMSG;
        *ret_retprobe_mask = UINT64_C(1) << bit;
        return 0;
}

void probe_pmu_done(struct probe_pmu *pmu) {
        if (!pmu)
                return;
        free(pmu->string);
        *pmu = (struct probe_pmu) {};
}

int probe_pmu_attr(const char *sysfs, const struct probe_spec *p, struct probe_pmu *ret,
                   char **ret_error) {
        _cleanup_(probe_target_done) struct probe_target t = {};
        struct probe_pmu pmu = {};
        uint64_t mask = 0;
        int r;

        if (ret_error)
                *ret_error = NULL;
        if (!p || !kind_is_valid(p->kind) || !ret)
                return -EINVAL;
        if (p->n_fetch > 0)
                return error_set(ret_error, -EINVAL,
                            "%s %s: the %s PMU takes no fetch-args; define it through tracefs instead",
                            probe_kind_to_string(p->kind), p->name ? p->name : "",
                            probe_kind_is_uprobe(p->kind) ? "uprobe" : "kprobe");

        r = probe_pmu_type(sysfs, p->kind, &pmu.type, &mask);
        if (r == -EOPNOTSUPP)
                return error_set(ret_error, r, "this kernel has no %s PMU (%s/bus/event_source/devices/%s)",
                            probe_kind_is_uprobe(p->kind) ? "uprobe" : "kprobe", sysfs ? sysfs : "/sys",
                            probe_kind_is_uprobe(p->kind) ? "uprobe" : "kprobe");
        if (r < 0)
                return error_set(ret_error, r, "cannot read the %s PMU's type: %s",
                            probe_kind_is_uprobe(p->kind) ? "uprobe" : "kprobe", strerror(-r));
        if (probe_kind_is_return(p->kind)) {
                if (mask == 0)
                        return error_set(ret_error, -EOPNOTSUPP, "this kernel's %s PMU has no retprobe bit",
                                    probe_kind_is_uprobe(p->kind) ? "uprobe" : "kprobe");
                pmu.config = mask;
        }

        r = spec_resolve_target(p, &t, ret_error);
        if (r < 0)
                return r;

        if (probe_kind_is_uprobe(p->kind)) {
                /* uprobe_path and probe_offset (a file offset). */
                pmu.string = TAKE_PTR(t.path);
                pmu.config2 = t.offset;
        } else if (t.symbol) {
                /* kprobe_func and its offset. */
                pmu.string = TAKE_PTR(t.symbol);
                pmu.config2 = t.offset;
        } else {
                /* kprobe_func 0: config2 is the address. */
                pmu.config2 = t.offset;
        }
        pmu.config1 = (uint64_t) (uintptr_t) pmu.string;

        *ret = pmu;
        return 0;
}

int probe_pmu_format(const struct format *reference, enum probe_kind kind, const char *name,
                     struct format **ret) {
        static const char *const ret_fields[] = { "__probe_func", "__probe_ret_ip" };
        static const char *const ip_fields[] = { "__probe_ip" };
        _cleanup_(freep) char *buf = NULL;
        _cleanup_(fclosep) FILE *f = NULL;
        const char *const *fields;
        size_t size, n, end = 0;
        int r;

        if (!reference || !kind_is_valid(kind) || !probe_name_is_valid(name) || !ret)
                return -EINVAL;
        if (reference->n_common == 0)
                return -EINVAL;

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        fprintf(f, "name: %s\nID: 0\nformat:\n", name);
        for (size_t i = 0; i < reference->n_common; i++) {
                const struct format_field *c = &reference->fields[i];

                fprintf(f, "\tfield:%s %s;\toffset:%" PRIu32 ";\tsize:%" PRIu32 ";\tsigned:%d;\n",
                        c->type, c->name, c->offset, c->size, c->is_signed);
                if (c->offset + c->size > end)
                        end = c->offset + c->size;
        }
        fputc('\n', f);

        /* struct kprobe_trace_entry_head / kretprobe_trace_entry_head /
         * uprobe_trace_entry_head: unsigned longs after struct trace_entry,
         * at its natural alignment. */
        end = (end + sizeof(unsigned long) - 1) & ~(sizeof(unsigned long) - 1);
        fields = probe_kind_is_return(kind) ? ret_fields : ip_fields;
        n = probe_kind_is_return(kind) ? ELEMENTSOF(ret_fields) : ELEMENTSOF(ip_fields);
        for (size_t i = 0; i < n; i++)
                fprintf(f, "\tfield:unsigned long %s;\toffset:%zu;\tsize:%zu;\tsigned:0;\n", fields[i],
                        end + i * sizeof(unsigned long), sizeof(unsigned long));
        if (probe_kind_is_return(kind))
                fputs("\nprint fmt: \"(%lx <- %lx)\", REC->__probe_func, REC->__probe_ret_ip\n", f);
        else
                fputs("\nprint fmt: \"(%lx)\", REC->__probe_ip\n", f);
        if (fflush(f) != 0 || ferror(f))
                return -ENOMEM;
        fclose(TAKE_PTR(f));

        r = format_parse(buf, probe_kind_is_uprobe(kind) ? "uprobes" : "kprobes", ret);
        return r;
}
