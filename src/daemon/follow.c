/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Uprobes that follow their binary (issue 12). The kernel places a uprobe
 * on an inode: a package upgrade that renames a new file over the probed
 * path leaves the probe on the old file, which the processes still running
 * it keep using, and new processes of the new file go unseen. So each
 * uprobe's file is recorded by device, inode and build id when it is
 * attached, its directory is watched (inotify) for that name, and when a
 * different file is found at the path, the same probe is attached to it
 * as well; the old one stays. Each attachment, and a new file that lacks
 * the symbol, is told to every client in a "probe" line. */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>

#include "daemon.h"
#include "events.h"
#include "follow.h"
#include "evmon/error.h"
#include "evmon/log.h"

static void *mfree(void *p) {
        free(p);
        return NULL;
}

struct follow_file {
        dev_t dev;
        ino_t ino;
        char *build_id;               /* NULL: the file has none */
        bool symbol_missing;          /* seen, nothing attached */
        bool failed;                  /* the kernel refused the probe there */
        int handle;                   /* monitor handle of the extra attachment, -1 for the first */
        char *probe_name;             /* tracefs probe made for it, NULL when the PMU made it */
        struct format *format;
        struct probe_pmu pmu;
};

struct follow {
        struct daemon *daemon;
        struct daemon_event *ev;
        char *path;                   /* the real path of the probed file */
        char *base;                   /* its name in its directory */
        char *symbol;                 /* NULL when the target is a file offset */
        sd_event_source *watch;
        struct follow_file *files;
        size_t n_files;
        char *missing;                /* why the symbol is not in the file at the path now */
};

static void follow_announce(struct follow *f, const struct follow_file *ff, const char *status, const char *error) {
        _cleanup_(jbuf_donep) struct jbuf line = {};
        const struct encode_probe p = {
                .event = f->ev->wire_name,
                .path = f->path,
                .inode = (uint64_t) ff->ino,
                .build_id = ff->build_id,
                .status = status,
                .error = error,
                .attachments = follow_n_attached(f),
        };

        if (encode_probe(&line, &p) >= 0) {
                server_broadcast_all(f->daemon->server, line.data, line.len);
                server_flush(f->daemon->server);
        }
}

size_t follow_n_attached(const struct follow *f) {
        size_t n = 0;

        for (size_t i = 0; f && i < f->n_files; i++)
                n += !f->files[i].symbol_missing;
        return n;
}

const char *follow_missing(const struct follow *f) {
        return f ? f->missing : NULL;
}

static struct follow_file *follow_add_file(struct follow *f, const struct stat *st) {
        struct follow_file *a = reallocarray(f->files, f->n_files + 1, sizeof(*a));

        if (!a)
                return NULL;
        f->files = a;
        a = &f->files[f->n_files++];
        *a = (struct follow_file) { .dev = st->st_dev, .ino = st->st_ino, .handle = -1 };
        (void) elf_build_id(f->path, &a->build_id, NULL);
        return a;
}

/* A tracefs probe for FF, a name of its own beside EV's, in SRC. */
static int follow_probe_tracefs(struct follow *f, struct follow_file *ff, struct probe_spec *spec,
                                struct monitor_source *src, char **ret_error) {
        struct daemon *d = f->daemon;
        int r;

        if (asprintf(&ff->probe_name, "%.48s_f%zu", f->ev->cfg->name, (size_t) (ff - f->files)) < 0) {
                ff->probe_name = NULL;
                return -ENOMEM;
        }
        spec->name = ff->probe_name;
        r = probe_add(d->tracefs, d->probe_group, spec, &ff->format, ret_error);
        if (r < 0) {
                ff->probe_name = mfree(ff->probe_name);
                return r;
        }
        src->type = PERF_TYPE_TRACEPOINT;
        src->config = ff->format->id;
        src->config1 = src->config2 = 0;
        return 0;
}

/* Attaches EV's probe, as its config entry says, to the file now at the
 * path, beside the ones attached before: as EV's own was made, through
 * tracefs or the uprobe PMU. The PMU wants privileges evmond dropped after
 * start-up; where it refuses, tracefs makes it (the same fields: a PMU
 * probe has no fetch-args). */
static int follow_attach(struct follow *f, struct follow_file *ff, char **ret_error) {
        struct daemon *d = f->daemon;
        struct daemon_event *ev = f->ev;
        const struct event_config *ec = ev->cfg;
        struct probe_spec spec = {
                .kind = ev->probe_kind,
                .name = ec->name,
                .target = ec->target,
                .fetch = ec->fetch,
        };
        struct monitor_source src = ev->source;
        int r;

        for (char **p = ec->fetch; p && *p; p++)
                spec.n_fetch++;
        src.in_group = false;
        if (ev->probe_added)
                r = follow_probe_tracefs(f, ff, &spec, &src, ret_error);
        else {
                r = probe_pmu_attr(NULL, &spec, &ff->pmu, ret_error);
                if (r >= 0) {
                        src.type = ff->pmu.type;
                        src.config = ff->pmu.config;
                        src.config1 = ff->pmu.config1;
                        src.config2 = ff->pmu.config2;
                        r = monitor_add(d->monitor, &src);
                        if (r >= 0)
                                ff->handle = r;
                        else if (r == -EACCES || r == -EPERM) {
                                probe_pmu_done(&ff->pmu);
                                r = follow_probe_tracefs(f, ff, &spec, &src, ret_error);
                        }
                }
        }
        if (r < 0)
                return r;
        if (ff->handle < 0) {
                r = monitor_add(d->monitor, &src);
                if (r < 0)
                        return error_set(ret_error, r, "the kernel refused the probe on the new file: %s",
                                         strerror(-r));
                ff->handle = r;
        }
        if (!ev->disabled) {
                r = monitor_enable(d->monitor, ff->handle);
                if (r < 0)
                        return error_set(ret_error, r, "cannot enable the probe on the new file: %s", strerror(-r));
        }
        return 0;
}

static void follow_file_undo(struct follow *f, struct follow_file *ff) {
        struct daemon *d = f->daemon;

        if (ff->handle >= 0 && d->monitor)
                (void) monitor_remove(d->monitor, ff->handle);
        ff->handle = -1;
        if (ff->probe_name) {
                daemon_probe_remove_async(d, f->ev->probe_kind, ff->probe_name, f->ev->wire_name);
                ff->probe_name = mfree(ff->probe_name);
        }
}

/* The file at the path may be new: attach to it, or say why not. A file
 * written where it stands (install(1) creates it empty, then writes it)
 * is looked at again when it is closed: the symbol may be there by then. */
static void follow_check(struct follow *f, uint32_t mask) {
        _cleanup_(freep) char *err = NULL;
        struct follow_file *ff = NULL;
        bool again = false;
        struct stat st;
        uint64_t off;
        int r;

        if (stat(f->path, &st) < 0)
                return;         /* Gone for now; a rename over it comes next. */
        if (mask == IN_CREATE && st.st_size == 0)
                return;         /* Its IN_CLOSE_WRITE comes. */
        for (size_t i = 0; i < f->n_files && !ff; i++)
                if (f->files[i].dev == st.st_dev && f->files[i].ino == st.st_ino)
                        ff = &f->files[i];
        if (ff) {
                if (!ff->symbol_missing || ff->failed)
                        return;
                again = true;
                free(ff->build_id);
                ff->build_id = NULL;
                (void) elf_build_id(f->path, &ff->build_id, NULL);
        } else {
                ff = follow_add_file(f, &st);
                if (!ff)
                        return;
        }
        if (f->symbol) {
                r = elf_resolve_symbol(f->path, f->symbol, &off, NULL, &err);
                if (r < 0 && again)
                        return;         /* Said already. */
                if (r < 0) {
                        ff->symbol_missing = true;
                        (void) error_set(&f->missing, r, "%s was replaced (inode %ju) and the new file lacks %s: %s; "
                                         "processes of the new file are not probed", f->path, (uintmax_t) st.st_ino,
                                         f->symbol, err ?: strerror(-r));
                        log_warning("%s: %s", f->ev->wire_name, f->missing ?: "symbol missing in the new file");
                        follow_announce(f, ff, "symbol_missing", err ?: strerror(-r));
                        return;
                }
        }
        err = mfree(err);
        ff->symbol_missing = false;
        r = follow_attach(f, ff, &err);
        if (r < 0) {
                follow_file_undo(f, ff);
                ff->symbol_missing = ff->failed = true;
                log_warning("%s: %s was replaced (inode %ju), and attaching to the new file failed: %s",
                            f->ev->wire_name, f->path, (uintmax_t) st.st_ino, err ?: strerror(-r));
                follow_announce(f, ff, "failed", err ?: strerror(-r));
                return;
        }
        f->missing = mfree(f->missing);
        log_info("%s: %s was replaced; probed in the new file too (inode %ju, build id %s)", f->ev->wire_name,
                 f->path, (uintmax_t) st.st_ino, ff->build_id ?: "none");
        follow_announce(f, ff, "attached", NULL);
}

static int on_inotify(sd_event_source *s, const struct inotify_event *ie, void *userdata) {
        struct follow *f = userdata;

        if (ie->len > 0 && strcmp(ie->name, f->base) == 0)
                follow_check(f, ie->mask & (IN_MOVED_TO | IN_CREATE | IN_CLOSE_WRITE));
        return 0;
}

int follow_start(struct daemon *d, struct daemon_event *ev) {
        _cleanup_(follow_freep) struct follow *f = NULL;
        _cleanup_(probe_target_done) struct probe_target t = {};
        _cleanup_(freep) char *dir = NULL;
        struct follow_file *ff;
        struct stat st;
        char *slash;
        int r;

        if (!probe_kind_is_uprobe(ev->probe_kind) || d->check_only || ev->follow)
                return 0;
        r = probe_parse_target(ev->probe_kind, ev->cfg->target, &t, NULL);
        if (r < 0)
                return r;
        f = calloc(1, sizeof(*f));
        if (!f)
                return -ENOMEM;
        f->daemon = d;
        f->ev = ev;
        f->path = realpath(t.path, NULL);
        if (!f->path)
                return -errno;
        if (t.symbol && !(f->symbol = strdup(t.symbol)))
                return -ENOMEM;
        if (stat(f->path, &st) < 0)
                return -errno;
        ff = follow_add_file(f, &st);
        if (!ff)
                return -ENOMEM;
        slash = strrchr(f->path, '/');
        if (!slash || !(f->base = strdup(slash + 1)) || !(dir = strndup(f->path, (size_t) (slash - f->path) ?: 1)))
                return -ENOMEM;
        /* A package manager writes the new file beside the old and renames
         * it over (IN_MOVED_TO); cp and install write in place or create
         * (IN_CREATE, IN_CLOSE_WRITE). */
        r = sd_event_add_inotify(d->event, &f->watch, dir, IN_MOVED_TO | IN_CREATE | IN_CLOSE_WRITE | IN_ONLYDIR,
                                 on_inotify, f);
        if (r < 0)
                return r;
        (void) sd_event_source_set_description(f->watch, "follow");
        ev->follow = TAKE_PTR(f);
        return 0;
}

void follow_stop(struct follow *f) {
        if (!f)
                return;
        f->watch = sd_event_source_disable_unref(f->watch);
        for (size_t i = 0; i < f->n_files; i++)
                follow_file_undo(f, &f->files[i]);
}

struct follow *follow_free(struct follow *f) {
        if (!f)
                return NULL;
        follow_stop(f);
        for (size_t i = 0; i < f->n_files; i++) {
                free(f->files[i].build_id);
                format_free(f->files[i].format);
                probe_pmu_done(&f->files[i].pmu);
        }
        free(f->files);
        free(f->path);
        free(f->base);
        free(f->symbol);
        free(f->missing);
        free(f);
        return NULL;
}

void follow_set_enabled(struct follow *f, bool enabled) {
        for (size_t i = 0; f && i < f->n_files; i++)
                if (f->files[i].handle >= 0)
                        (void) (enabled ? monitor_enable : monitor_disable)(f->daemon->monitor, f->files[i].handle);
}
