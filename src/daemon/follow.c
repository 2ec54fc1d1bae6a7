/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Uprobes that follow their binary (issue 12). The kernel places a uprobe
 * on an inode: a package upgrade that renames a new file over the probed
 * path leaves the probe on the old file, which the processes still running
 * it keep using, and new processes of the new file go unseen. So each
 * uprobe's file is recorded by device, inode and build id when it is
 * attached, its directory is watched (inotify) for that name, and when a
 * different file is found at the path, the same probe is attached to it
 * as well; the old one stays. Each attachment, and a new file that lacks
 * the symbol, is told to every client in a "probe" line.
 *
 * Whoever may write the directory may place anything at the path (issue
 * 26): a symbolic link to a file of root's, a FIFO, a new file every
 * millisecond. So the file at the path is opened through the directory fd
 * held since the start, without following a link and without opening
 * anything but a regular file (elf_open_regular()); it is probed only when
 * owned by the configured file's owner or root; the symbol is looked up in
 * that open file, and the kernel is handed "/proc/self/fd/N" of it, so the
 * probe lands on the inode that was checked, whatever the path holds by
 * then. At most FOLLOW_ATTACH_MAX files are probed at once and
 * FOLLOW_FILES_MAX remembered, and the log lines of each followed probe
 * have a budget. */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "client.h"
#include "daemon.h"
#include "events.h"
#include "follow.h"
#include "evmon/error.h"
#include "evmon/log.h"

/* Files probed at once per followed probe, the configured one included: a
 * few upgrades whose old processes still run. Past it, the oldest later
 * file goes (one deleted from the disk first). */
#define FOLLOW_ATTACH_MAX 16
/* Dropping a file is closing its perf fds, and the kernel's uprobe
 * unregistration waits in close() (about 90 ms on 6.18, with the loop
 * blocked): at most one drop per FOLLOW_DETACH_INTERVAL per followed
 * probe. A file that would need another is refused, and said. */
#define FOLLOW_DETACH_INTERVAL_USEC (1000000ULL)
/* Files remembered per followed probe (to speak of each once); past it,
 * the oldest one not probed is forgotten. */
#define FOLLOW_FILES_MAX 64
/* Log lines per followed probe: FOLLOW_LOG_BURST in FOLLOW_LOG_INTERVAL,
 * then one line that counts the rest at the interval's end. */
/* ELF tables read per followed probe (ELF_SECTION_MAX bounds each one):
 * at most FOLLOW_READ_BUDGET bytes in FOLLOW_READ_INTERVAL. A lookup takes
 * about a second of the loop per GiB, and a sparse file of 20 KiB on the
 * disk can claim 512 MiB of tables; the file's owner may rename one file
 * to and fro, each time a lookup. Past it, a file is refused, looked at
 * anew when it changes. */
#define FOLLOW_READ_BUDGET (UINT64_C(512) << 20)
#define FOLLOW_READ_INTERVAL_USEC (60 * 1000000ULL)
#define FOLLOW_LOG_BURST 4
#define FOLLOW_LOG_INTERVAL_USEC (10 * 1000000ULL)

static void *mfree(void *p) {
        free(p);
        return NULL;
}

struct follow_file {
        dev_t dev;
        ino_t ino;
        uid_t uid;
        struct timespec ctime;        /* when a refused file was last changed */
        char *build_id;               /* NULL: the file has none */
        bool first;                   /* the configured file: the event's own probe is in it */
        bool symbol_missing;          /* seen, nothing attached */
        bool failed;                  /* the kernel refused the probe there */
        bool refused;                 /* not a regular file of the right owner: never probed */
        char *why;                    /* why it was refused, as said */
        struct statx_timestamp btime; /* when the inode was made, where the file system says (has_btime) */
        bool has_btime;
        int fd;                       /* the open file while probed: /proc/self/fd/N names it to the kernel */
        int handle;                   /* monitor handle of the extra attachment, -1 for the first */
        uint64_t seq;                 /* order of attachment */
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
        uint64_t offset;              /* past the symbol, or the file offset */
        uid_t owner;                  /* the configured file's: later files must be its or root's */
        int dir_fd;                   /* the directory, held from the start (O_PATH) */
        sd_event_source *watch;
        struct follow_file *files;
        size_t n_files;
        uint64_t seq;
        char *missing;                /* why the symbol is not in the file at the path now */
        uint64_t n_refused, n_detached;
        uint64_t last_detach;         /* when a file was last dropped (now_usec()) */
        uint64_t read_start, read_bytes; /* the read budget: its window's start, bytes read since */
        /* The log budget: lines in the window that began at log_start,
         * and those held back, said by log_timer at its end. */
        uint64_t log_start;
        unsigned log_n;
        uint64_t log_held;
        sd_event_source *log_timer;
};

static bool follow_file_live(const struct follow_file *ff) {
        return ff->first ? !ff->symbol_missing : ff->handle >= 0;
}

static int on_log_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        struct follow *f = userdata;

        if (f->log_held > 0)
                log_notice("%s: %" PRIu64 " more log lines about files placed at %s held back in %.0f s "
                           "(at most %d in that time; now probed in %zu files, %" PRIu64 " refused and %" PRIu64
                           " dropped since start; clients got a \"probe\" line for each)",
                           f->ev->wire_name, f->log_held, f->path, FOLLOW_LOG_INTERVAL_USEC / 1e6,
                           FOLLOW_LOG_BURST, follow_n_attached(f), f->n_refused, f->n_detached);
        f->log_held = 0;
        f->log_n = 0;
        f->log_start = now_usec();
        f->log_timer = sd_event_source_disable_unref(f->log_timer);
        return 0;
}

/* Whether one more line about F may go out now; else it is counted, and a
 * timer says how many at the window's end. */
static bool follow_log_below(struct follow *f) {
        uint64_t now = now_usec();

        if (!f->log_timer && now - f->log_start >= FOLLOW_LOG_INTERVAL_USEC) {
                f->log_start = now;
                f->log_n = 0;
        }
        if (f->log_n < FOLLOW_LOG_BURST && !f->log_timer) {
                f->log_n++;
                return true;
        }
        if (f->log_held++ == 0 && !f->log_timer &&
            sd_event_add_time(f->daemon->event, &f->log_timer, CLOCK_MONOTONIC,
                              f->log_start + FOLLOW_LOG_INTERVAL_USEC, 100000, on_log_timer, f) >= 0)
                (void) sd_event_source_set_description(f->log_timer, "follow-log");
        return false;
}

#define follow_log(f, level, ...)                                       \
        do {                                                            \
                if (follow_log_below(f))                                \
                        log_internal(level, 0, __VA_ARGS__);            \
        } while (0)

static void follow_announce(struct follow *f, const struct follow_file *ff, const char *status, const char *error) {
        _cleanup_(jbuf_donep) struct jbuf line = {};
        const struct encode_probe p = {
                .event = f->ev->wire_name,
                .path = f->path,
                .inode = (uint64_t) ff->ino,
                .uid = (int64_t) ff->uid,
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
                n += follow_file_live(&f->files[i]);
        return n;
}

uint64_t follow_n_refused(const struct follow *f) {
        return f ? f->n_refused : 0;
}

uint64_t follow_n_detached(const struct follow *f) {
        return f ? f->n_detached : 0;
}

const char *follow_missing(const struct follow *f) {
        return f ? f->missing : NULL;
}

static void follow_file_done(struct follow_file *ff) {
        free(ff->build_id);
        free(ff->why);
        format_free(ff->format);
        probe_pmu_done(&ff->pmu);
        if (ff->fd >= 0)
                close(ff->fd);
        free(ff->probe_name);
}

static void follow_forget(struct follow *f, size_t i);

/* A record for the file ST at the path. Past FOLLOW_FILES_MAX the oldest
 * one not probed now is forgotten (at most FOLLOW_ATTACH_MAX are). */
static struct follow_file *follow_add_file(struct follow *f, const struct stat *st) {
        struct follow_file *a;

        if (f->n_files >= FOLLOW_FILES_MAX) {
                for (size_t i = 0; i < f->n_files; i++) {
                        struct follow_file *o = &f->files[i];

                        if (o->first || o->handle >= 0 || o->probe_name || o->fd >= 0)
                                continue;
                        follow_forget(f, i);
                        break;
                }
                if (f->n_files >= FOLLOW_FILES_MAX)
                        return NULL;
        } else {
                a = reallocarray(f->files, f->n_files + 1, sizeof(*a));
                if (!a)
                        return NULL;
                f->files = a;
        }
        a = &f->files[f->n_files++];
        *a = (struct follow_file) { .dev = st->st_dev, .ino = st->st_ino, .uid = st->st_uid, .ctime = st->st_ctim,
                                    .fd = -1, .handle = -1 };
        return a;
}

/* A tracefs probe for FF, a name of its own beside EV's, in SRC. */
static int follow_probe_tracefs(struct follow *f, struct follow_file *ff, struct probe_spec *spec,
                                struct monitor_source *src, char **ret_error) {
        struct daemon *d = f->daemon;
        int r;

        if (asprintf(&ff->probe_name, "%.40s_f%" PRIu64, f->ev->cfg->name, ff->seq) < 0) {
                ff->probe_name = NULL;
                return -ENOMEM;
        }
        spec->name = ff->probe_name;
        r = probe_add(d->tracefs, d->probes.group, spec, &ff->format, ret_error);
        if (r < 0) {
                ff->probe_name = mfree(ff->probe_name);
                return r;
        }
        src->type = PERF_TYPE_TRACEPOINT;
        src->config = ff->format->id;
        src->config1 = src->config2 = 0;
        return 0;
}

/* Attaches EV's probe, as its config entry says, to the open file FF->fd
 * at file offset OFF, beside the ones attached before: as EV's own was
 * made, through tracefs or the uprobe PMU. The kernel resolves the path
 * it is given itself (kern_path() in trace_uprobe_create() and in the
 * uprobe PMU's create_local_trace_uprobe()): "/proc/self/fd/N" is the
 * inode checked, not whatever the path holds now. The PMU wants
 * privileges evmond dropped after start-up; where it refuses, tracefs
 * makes it (the same fields: a PMU probe has no fetch-args). */
static int follow_attach(struct follow *f, struct follow_file *ff, uint64_t off, char **ret_error) {
        struct daemon *d = f->daemon;
        struct daemon_event *ev = f->ev;
        const struct event_config *ec = ev->cfg;
        _cleanup_(freep) char *target = NULL;
        struct probe_spec spec = {
                .kind = ev->probe_kind,
                .name = ec->name,
                .fetch = ec->fetch,
                .target_resolved = true,
        };
        struct monitor_source src = ev->source;
        int r;

        if (asprintf(&target, "/proc/self/fd/%d:0x%" PRIx64, ff->fd, off) < 0)
                return -ENOMEM;
        spec.target = target;
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
        probe_pmu_done(&ff->pmu);
        format_free(ff->format);
        ff->format = NULL;
        if (ff->fd >= 0)
                ff->fd = (close(ff->fd), -1);
}

/* Forgets record I (nothing attached there). */
static void follow_forget(struct follow *f, size_t i) {
        follow_file_done(&f->files[i]);
        memmove(&f->files[i], &f->files[i + 1], (f->n_files - i - 1) * sizeof(f->files[0]));
        f->n_files--;
}

/* Makes room for one more attachment: past FOLLOW_ATTACH_MAX, drops the
 * oldest later file that is gone from the disk (its last process may
 * still run it, but nothing new will), else the oldest later file. The
 * configured file's probe is the event's own and stays. Its record goes
 * too: once its fd is closed, a deleted file's inode number may be given
 * to the next new file. Returns the index of the record that went, or
 * SIZE_MAX; *RET is -EBUSY when there is no room and none may be made now
 * (one was dropped less than FOLLOW_DETACH_INTERVAL ago). */
static size_t follow_make_room(struct follow *f, int *ret) {
        struct follow_file *victim = NULL;
        bool victim_gone = false;
        uint64_t now = now_usec();
        struct stat st;
        size_t i;

        *ret = 0;
        if (follow_n_attached(f) < FOLLOW_ATTACH_MAX)
                return SIZE_MAX;
        if (f->last_detach > 0 && now - f->last_detach < FOLLOW_DETACH_INTERVAL_USEC) {
                *ret = -EBUSY;
                return SIZE_MAX;
        }
        for (i = 0; i < f->n_files; i++) {
                struct follow_file *ff = &f->files[i];
                bool gone;

                if (ff->first || ff->handle < 0)
                        continue;
                gone = ff->fd >= 0 && fstat(ff->fd, &st) >= 0 && st.st_nlink == 0;
                if (!victim || (gone && !victim_gone) || (gone == victim_gone && ff->seq < victim->seq)) {
                        victim = ff;
                        victim_gone = gone;
                }
        }
        if (!victim) {
                *ret = -EBUSY;
                return SIZE_MAX;
        }
        f->last_detach = now;
        follow_file_undo(f, victim);
        f->n_detached++;
        follow_log(f, LOG_NOTICE, "%s: more than %d files of %s probed at once: no longer probing the one of inode %ju (%s)",
                   f->ev->wire_name, FOLLOW_ATTACH_MAX, f->path, (uintmax_t) victim->ino,
                   victim_gone ? "deleted" : "the oldest");
        follow_announce(f, victim, "detached", victim_gone ? "more files than the limit: deleted since"
                                                           : "more files than the limit: the oldest");
        i = (size_t) (victim - f->files);
        follow_forget(f, i);
        return i;
}

/* Whether the ELF tables of FD may be read now, within the read budget;
 * counts them if so. A file that is no ELF reads nothing (the lookup says
 * why). -EBUSY past the budget. */
static int follow_read_below(struct follow *f, int fd) {
        uint64_t now = now_usec(), bytes;

        if (elf_read_size_fd(fd, f->path, &bytes, NULL) < 0)
                return 0;
        if (now - f->read_start >= FOLLOW_READ_INTERVAL_USEC) {
                f->read_start = now;
                f->read_bytes = 0;
        }
        if (bytes > FOLLOW_READ_BUDGET - f->read_bytes)
                return -EBUSY;
        f->read_bytes += bytes;
        return 0;
}

static void follow_refuse(struct follow *f, struct follow_file *ff, const char *why) {
        ff->refused = true;
        /* Said already about this inode: renamed to and fro, a file's
         * ctime changes, not the verdict, and each rename would be a line
         * to every client (26,153 in 5 s for one link). */
        if (ff->why && strcmp(ff->why, why) == 0)
                return;
        free(ff->why);
        ff->why = strdup(why);
        f->n_refused++;
        follow_log(f, LOG_WARNING, "%s: %s was replaced (inode %ju, uid %u), and the new file is not probed: %s",
                   f->ev->wire_name, f->path, (uintmax_t) ff->ino, (unsigned) ff->uid, why);
        follow_announce(f, ff, "refused", why);
}

/* What the path holds now: opened in *RET_FD (or -errno, with why in
 * *RET_ERR), its stat in *ST and its birth time in *SX where the file
 * system keeps one (*RET_HAVE_BTIME). False when there is nothing to
 * look at (yet). */
static bool follow_stat(struct follow *f, uint32_t mask, int *ret_fd, struct stat *st, struct statx *sx,
                        bool *ret_have_btime, char **ret_err) {
        int fd, r;

        fd = *ret_fd = elf_open_regular(f->dir_fd, f->base, f->path, ELF_OPEN_NOFOLLOW, st, ret_err);
        if (fd == -ENOENT)
                return false;   /* Gone for now; a rename over it comes next. */
        if (fd < 0 && fstatat(f->dir_fd, f->base, st, AT_SYMLINK_NOFOLLOW) < 0)
                return false;
        if (fd >= 0 && mask == IN_CREATE && st->st_size == 0)
                return false;   /* Its IN_CLOSE_WRITE comes. */
        /* The birth time of the inode looked at: of the open file, or of
         * what the path holds if still the same (else it moved on, and
         * the event of its coming back is next). */
        if (fd >= 0)
                r = statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_INO | STATX_BTIME, sx);
        else
                r = statx(f->dir_fd, f->base, AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC, STATX_INO | STATX_BTIME, sx);
        if (r < 0 && fd < 0)
                return false;
        if (r >= 0 && (sx->stx_ino != (uint64_t) st->st_ino ||
                       makedev(sx->stx_dev_major, sx->stx_dev_minor) != st->st_dev))
                return false;
        *ret_have_btime = r >= 0 && (sx->stx_mask & STATX_BTIME);
        return true;
}

/* The record of the file ST is, NULL when there is none; a refused file
 * that changed since is forgotten when it is another file now, or looked
 * at anew (*RET_FRESH) when it is the same. */
static struct follow_file *follow_find(struct follow *f, const struct stat *st, const struct statx *sx,
                                       bool have_btime, bool *ret_fresh) {
        struct follow_file *ff = NULL;

        *ret_fresh = false;
        for (size_t i = 0; i < f->n_files && !ff; i++)
                if (f->files[i].dev == st->st_dev && f->files[i].ino == st->st_ino)
                        ff = &f->files[i];
        if (!ff || !ff->refused ||
            (ff->ctime.tv_sec == st->st_ctim.tv_sec && ff->ctime.tv_nsec == st->st_ctim.tv_nsec))
                return ff;
        if (!(have_btime && ff->has_btime && ff->btime.tv_sec == sx->stx_btime.tv_sec &&
              ff->btime.tv_nsec == sx->stx_btime.tv_nsec)) {
                /* No fd holds a refused file: its inode number may be a
                 * new file's by now (its birth time says so where the
                 * file system keeps one). A new file is looked at anew. */
                follow_forget(f, (size_t) (ff - f->files));
                return NULL;
        }
        /* The same file, changed (renamed to and fro, chown, chmod):
         * looked at anew, in the same record, where what was said of it
         * stays, so that the same refusal is not said again. */
        ff->refused = ff->symbol_missing = ff->failed = false;
        ff->uid = st->st_uid;
        ff->ctime = st->st_ctim;
        ff->build_id = mfree(ff->build_id);
        *ret_fresh = true;
        return ff;
}

/* Whether FF (open as FD) may be probed: its owner, and what reading its
 * ELF tables would cost. AGAIN: known and said already. */
static bool follow_vet(struct follow *f, struct follow_file *ff, int fd, const struct stat *st, bool again) {
        char why[200];

        if (st->st_uid != f->owner && st->st_uid != 0) {
                snprintf(why, sizeof(why), "owned by uid %u, neither root nor uid %u, the owner of the file configured",
                         (unsigned) st->st_uid, (unsigned) f->owner);
                follow_refuse(f, ff, why);
                return false;
        }
        if (follow_read_below(f, fd) >= 0)
                return true;
        snprintf(why, sizeof(why), "its ELF tables would take more than the %" PRIu64 " MiB evmond reads of "
                 "the files at this path in %.0f s; it is looked at anew when it changes",
                 FOLLOW_READ_BUDGET >> 20, FOLLOW_READ_INTERVAL_USEC / 1e6);
        ff->ctime = st->st_ctim;
        /* Known, and said: only marked refused, so that a change brings
         * a new look. */
        if (again)
                ff->refused = true;
        else
                follow_refuse(f, ff, why);
        return false;
}

/* FF's build id, and the configured symbol's offset in it (*RET_SYM, 0
 * without a symbol): 0, or -errno when it lacks the symbol (said once). */
static int follow_symbol(struct follow *f, struct follow_file *ff, int fd, const struct stat *st, bool again,
                         uint64_t *ret_sym) {
        _cleanup_(freep) char *err = NULL;
        int r;

        *ret_sym = 0;
        ff->build_id = mfree(ff->build_id);
        (void) elf_build_id_fd(fd, f->path, &ff->build_id, NULL);
        if (!f->symbol)
                return 0;
        r = elf_resolve_symbol_fd(fd, f->path, f->symbol, ret_sym, &err);
        if (r < 0 && again)
                return r;       /* Said already. */
        if (r < 0) {
                ff->symbol_missing = true;
                (void) error_set(&f->missing, r, "%s was replaced (inode %ju) and the new file lacks %s: %s; "
                                 "processes of the new file are not probed", f->path, (uintmax_t) st->st_ino,
                                 f->symbol, err ?: strerror(-r));
                follow_log(f, LOG_WARNING, "%s: %s", f->ev->wire_name, f->missing ?: "symbol missing in the new file");
                follow_announce(f, ff, "symbol_missing", err ?: strerror(-r));
        }
        return r;
}

/* FF, vetted, attached at OFF with the fd in *FD (taken), room made
 * first; what came of it said. */
static void follow_take(struct follow *f, struct follow_file *ff, int *fd, uint64_t off, const struct stat *st) {
        _cleanup_(freep) char *err = NULL;
        size_t idx = (size_t) (ff - f->files), gone;
        int r;

        ff->symbol_missing = false;
        gone = follow_make_room(f, &r);
        if (gone != SIZE_MAX && gone < idx)
                idx--;
        ff = &f->files[idx];
        if (r < 0) {
                char why[200];

                snprintf(why, sizeof(why), "%d files are probed already, and one was dropped for a newer file "
                         "less than %.0f s ago; the next file at the path is looked at anew", FOLLOW_ATTACH_MAX,
                         FOLLOW_DETACH_INTERVAL_USEC / 1e6);
                follow_refuse(f, ff, why);
                return;
        }
        ff->fd = TAKE_FD(*fd);
        ff->seq = ++f->seq;
        r = follow_attach(f, ff, off, &err);
        if (r < 0) {
                follow_file_undo(f, ff);
                ff->symbol_missing = ff->failed = true;
                follow_log(f, LOG_WARNING, "%s: %s was replaced (inode %ju), and attaching to the new file failed: %s",
                           f->ev->wire_name, f->path, (uintmax_t) st->st_ino, err ?: strerror(-r));
                follow_announce(f, ff, "failed", err ?: strerror(-r));
                return;
        }
        f->missing = mfree(f->missing);
        follow_log(f, LOG_INFO, "%s: %s was replaced; probed in the new file too (inode %ju, uid %u, build id %s)",
                   f->ev->wire_name, f->path, (uintmax_t) st->st_ino, (unsigned) st->st_uid, ff->build_id ?: "none");
        follow_announce(f, ff, "attached", NULL);
}

/* The file at the path may be new: attach to it, or say why not. A file
 * written where it stands (install(1) creates it empty, then writes it)
 * is looked at again when it is closed: the symbol may be there by then. */
static void follow_check(struct follow *f, uint32_t mask) {
        _cleanup_(freep) char *err = NULL;
        _cleanup_(closep) int fd = -1;
        struct follow_file *ff;
        bool again = false, fresh, have_btime = false;
        struct statx sx = {};
        struct stat st;
        uint64_t sym;

        if (!follow_stat(f, mask, &fd, &st, &sx, &have_btime, &err))
                return;
        ff = follow_find(f, &st, &sx, have_btime, &fresh);
        if (ff && !fresh) {
                if (!ff->symbol_missing || ff->failed || ff->refused)
                        return;
                again = true;
        } else if (!ff) {
                ff = follow_add_file(f, &st);
                if (!ff)
                        return;
                ff->has_btime = have_btime;
                if (have_btime)
                        ff->btime = sx.stx_btime;
        }
        if (fd < 0) {
                follow_refuse(f, ff, err ?: strerror(-fd));
                return;
        }
        if (!follow_vet(f, ff, fd, &st, again))
                return;
        if (follow_symbol(f, ff, fd, &st, again, &sym) < 0)
                return;
        follow_take(f, ff, &fd, f->offset + sym, &st);
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
        _cleanup_(freep) char *watch = NULL;
        struct follow_file *ff;
        struct stat st;
        char *slash;
        int r, fd;

        if (!probe_kind_is_uprobe(ev->probe_kind) || d->check_only || ev->follow)
                return 0;
        if (ev->target_fd < 0 || ev->target_dir_fd < 0 || !ev->target_path)
                return -EBADF;
        r = probe_parse_target(ev->probe_kind, ev->cfg->target, &t, NULL);
        if (r < 0)
                return r;
        f = calloc(1, sizeof(*f));
        if (!f)
                return -ENOMEM;
        f->daemon = d;
        f->ev = ev;
        f->dir_fd = -1;
        f->offset = t.offset;
        /* The file the event's own probe is in, opened and checked when it
         * was made (elf_open_target()), and the directory that held it:
         * no path is looked up again, so nothing renamed meanwhile over
         * the file, its directory or a parent steers what is followed. */
        f->path = strdup(ev->target_path);
        if (!f->path)
                return -ENOMEM;
        if (t.symbol && !(f->symbol = strdup(t.symbol)))
                return -ENOMEM;
        slash = strrchr(f->path, '/');
        if (!slash || !(f->base = strdup(slash + 1)))
                return -ENOMEM;
        f->dir_fd = fcntl(ev->target_dir_fd, F_DUPFD_CLOEXEC, 3);
        if (f->dir_fd < 0)
                return -errno;
        fd = ev->target_fd;
        if (fstat(fd, &st) < 0)
                return -errno;
        ff = follow_add_file(f, &st);
        if (!ff)
                return -ENOMEM;
        ff->first = true;
        f->owner = st.st_uid;
        (void) elf_build_id_fd(fd, f->path, &ff->build_id, NULL);
        /* A package manager writes the new file beside the old and renames
         * it over (IN_MOVED_TO); cp and install write in place or create
         * (IN_CREATE, IN_CLOSE_WRITE). */
        if (asprintf(&watch, "/proc/self/fd/%d", f->dir_fd) < 0) {
                watch = NULL;
                return -ENOMEM;
        }
        r = sd_event_add_inotify(d->event, &f->watch, watch, IN_MOVED_TO | IN_CREATE | IN_CLOSE_WRITE | IN_ONLYDIR,
                                 on_inotify, f);
        if (r < 0)
                return r;
        (void) sd_event_source_set_description(f->watch, "follow");
        f->log_start = now_usec();
        ev->follow = TAKE_PTR(f);
        return 0;
}

void follow_stop(struct follow *f) {
        if (!f)
                return;
        f->watch = sd_event_source_disable_unref(f->watch);
        /* What the budget held back is said before the probe goes. */
        if (f->log_timer)
                (void) on_log_timer(f->log_timer, 0, f);
        for (size_t i = 0; i < f->n_files; i++)
                follow_file_undo(f, &f->files[i]);
}

struct follow *follow_free(struct follow *f) {
        if (!f)
                return NULL;
        follow_stop(f);
        for (size_t i = 0; i < f->n_files; i++)
                follow_file_done(&f->files[i]);
        free(f->files);
        free(f->path);
        free(f->base);
        free(f->symbol);
        free(f->missing);
        if (f->dir_fd >= 0)
                close(f->dir_fd);
        free(f);
        return NULL;
}

void follow_set_enabled(struct follow *f, bool enabled) {
        for (size_t i = 0; f && i < f->n_files; i++)
                if (f->files[i].handle >= 0)
                        (void) (enabled ? monitor_enable : monitor_disable)(f->daemon->monitor, f->files[i].handle);
}
