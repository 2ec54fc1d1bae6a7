/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The tracefs mount: finding it, reading its files, listing its events.
 *
 * Everything is read relative to a directory fd held open from
 * tracefs_open(), so tests can point the module at a fixture tree and a
 * remount under us does not change what we read. */

#define _GNU_SOURCE 1

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "evmon/cleanup.h"
#include "evmon/tracefs.h"
#include "evmon/io.h"
#include "evmon/strv.h"

#define TRACEFS_DEFAULT "/sys/kernel/tracing"
#define TRACEFS_DEBUGFS "/sys/kernel/debug/tracing"

struct tracefs {
        char *path;
        int fd;
};

DEFINE_TRIVIAL_CLEANUP_FUNC(DIR *, closedir);

struct tracefs *tracefs_free(struct tracefs *t) {
        if (!t)
                return NULL;
        safe_close(t->fd);
        free(t->path);
        free(t);
        return NULL;
}

const char *tracefs_path(const struct tracefs *t) {
        return t ? t->path : NULL;
}

static int read_file_at(int dirfd, const char *path, char **ret_text, size_t *ret_len) {
        _cleanup_(closep) int fd = -1;

        fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        return read_full(fd, 0, ret_text, ret_len);
}

/* Undoes the octal escapes of /proc/mounts ("\040" for a space) in place. */
static void unescape_mount_path(char *s) {
        char *w = s;

        for (const char *r = s; *r;) {
                if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
                    r[3] >= '0' && r[3] <= '7') {
                        *w++ = (char) (((r[1] - '0') << 6) | ((r[2] - '0') << 3) | (r[3] - '0'));
                        r += 4;
                } else
                        *w++ = *r++;
        }
        *w = '\0';
}

int tracefs_find_mount(const char *mounts, char **ret_path) {
        _cleanup_(freep) char *best = NULL;
        int best_rank = 3;

        if (!mounts || !ret_path)
                return -EINVAL;

        for (const char *p = mounts; *p && best_rank > 0;) {
                const char *nl = strchr(p, '\n');
                size_t n = nl ? (size_t) (nl - p) : strlen(p);
                _cleanup_(freep) char *line = strndup(p, n);
                char *save = NULL, *dev, *dir, *type;
                int rank;

                p += n + (nl ? 1 : 0);
                if (!line)
                        return -ENOMEM;

                /* "nodev /sys/kernel/tracing tracefs rw,relatime 0 0" */
                dev = strtok_r(line, " \t", &save);
                dir = dev ? strtok_r(NULL, " \t", &save) : NULL;
                type = dir ? strtok_r(NULL, " \t", &save) : NULL;
                if (!type || strcmp(type, "tracefs") != 0)
                        continue;

                unescape_mount_path(dir);
                if (strcmp(dir, TRACEFS_DEFAULT) == 0)
                        rank = 0;
                else if (strcmp(dir, TRACEFS_DEBUGFS) == 0)
                        rank = 1;
                else
                        rank = 2;
                if (rank >= best_rank)
                        continue;

                free(best);
                best = strdup(dir);
                if (!best)
                        return -ENOMEM;
                best_rank = rank;
        }

        if (!best)
                return -ENOENT;
        *ret_path = TAKE_PTR(best);
        return 0;
}

/* Finds the tracefs mount point, mounting it at its usual place when it
 * is not mounted anywhere. */
static int tracefs_locate(char **ret_path) {
        _cleanup_(freep) char *mounts = NULL;
        int r;

        r = read_file_at(AT_FDCWD, "/proc/mounts", &mounts, NULL);
        if (r >= 0) {
                r = tracefs_find_mount(mounts, ret_path);
                if (r != -ENOENT)
                        return r;
        }

        /* Not mounted (a minimal init, a container): mount it ourselves,
         * as systemd's sys-kernel-tracing.mount would. Needs
         * CAP_SYS_ADMIN; the errno says why when it fails. */
        if (mount("nodev", TRACEFS_DEFAULT, "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0 &&
            errno != EBUSY) /* already there, though /proc/mounts did not say so */
                return negative_errno();

        *ret_path = strdup(TRACEFS_DEFAULT);
        return *ret_path ? 0 : -ENOMEM;
}

int tracefs_open(const char *dir, struct tracefs **ret) {
        _cleanup_(tracefs_freep) struct tracefs *t = NULL;
        struct stat st;
        int r;

        if (!ret)
                return -EINVAL;

        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        t->fd = -1;

        if (dir) {
                t->path = strdup(dir);
                if (!t->path)
                        return -ENOMEM;
        } else {
                r = tracefs_locate(&t->path);
                if (r < 0)
                        return r;
        }

        t->fd = open(t->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (t->fd < 0)
                return negative_errno();

        /* A tracefs without events/ is none we can use (or not tracefs). */
        if (fstatat(t->fd, "events", &st, 0) < 0)
                return negative_errno();
        if (!S_ISDIR(st.st_mode))
                return -ENOENT;

        *ret = TAKE_PTR(t);
        return 0;
}

int tracefs_read(const struct tracefs *t, const char *rel, char **ret_text, size_t *ret_len) {
        if (!t || !rel || !ret_text || rel[0] == '/')
                return -EINVAL;
        return read_file_at(t->fd, rel, ret_text, ret_len);
}

/* A system or event name is one path component. */
static bool name_is_valid(const char *s) {
        return s && *s && !strchr(s, '/') && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

int tracefs_event_format(const struct tracefs *t, const char *system, const char *name,
                         struct format **ret) {
        _cleanup_(freep) char *path = NULL, *text = NULL;
        int r;

        if (!t || !ret || !name_is_valid(system) || !name_is_valid(name))
                return -EINVAL;

        if (asprintf(&path, "events/%s/%s/format", system, name) < 0) {
                path = NULL;
                return -ENOMEM;
        }

        r = read_file_at(t->fd, path, &text, NULL);
        if (r < 0)
                return r;

        return format_parse(text, system, ret);
}

static bool entry_is_dir(int dirfd, const struct dirent *de) {
        struct stat st;

        if (de->d_type == DT_DIR)
                return true;
        if (de->d_type != DT_UNKNOWN)
                return false;
        return fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) >= 0 && S_ISDIR(st.st_mode);
}

static bool dot_or_dotdot(const char *s) {
        return strcmp(s, ".") == 0 || strcmp(s, "..") == 0;
}

static int opendir_at(int dirfd, const char *path, DIR **ret) {
        int fd;
        DIR *d;

        fd = openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        d = fdopendir(fd);
        if (!d) {
                int r = negative_errno();
                close(fd);
                return r;
        }
        *ret = d;
        return 0;
}

int tracefs_list_events(const struct tracefs *t, char ***ret) {
        _cleanup_(closedirp) DIR *events = NULL;
        struct strv_builder b = {};
        struct dirent *de;
        int r;

        if (!t || !ret)
                return -EINVAL;

        r = opendir_at(t->fd, "events", &events);
        if (r < 0)
                return r;

        /* events/ also holds files (enable, header_page, header_event):
         * only directories are systems, and in them only directories are
         * events (not enable, filter). */
        while ((errno = 0, de = readdir(events))) {
                _cleanup_(closedirp) DIR *sys = NULL;
                struct dirent *ee;

                if (dot_or_dotdot(de->d_name) || !entry_is_dir(dirfd(events), de))
                        continue;

                r = opendir_at(dirfd(events), de->d_name, &sys);
                if (r == -ENOENT)
                        continue; /* went away under us */
                if (r < 0)
                        goto fail;

                while ((errno = 0, ee = readdir(sys))) {
                        char *s;

                        if (dot_or_dotdot(ee->d_name) || !entry_is_dir(dirfd(sys), ee))
                                continue;
                        if (asprintf(&s, "%s:%s", de->d_name, ee->d_name) < 0) {
                                r = -ENOMEM;
                                goto fail;
                        }
                        r = strv_builder_add(&b, s);
                        if (r < 0)
                                goto fail;
                }
                if (errno != 0) {
                        r = negative_errno();
                        goto fail;
                }
        }
        if (errno != 0) {
                r = negative_errno();
                goto fail;
        }

        strv_sort(b.l, b.n);
        r = (int) b.n;
        if (strv_builder_finish(&b, ret) < 0)
                return -ENOMEM;
        return r;

fail:
        strv_free(b.l);
        return r;
}

/* The last error_log entry, when it quotes a command starting like LINE
 * (up to LINE's first space: "p:GROUP/NAME"):
 *
 *   [  373.969694] trace_uprobe: error: Invalid register name
 *     Command: p:probetmp/bad /usr/bin/bash:0x1000 a=%zz
 *                                                    ^
 * Returned without the timestamp and the trailing newline. */
char *tracefs_last_error(const struct tracefs *t, const char *line) {
        _cleanup_(freep) char *text = NULL;
        const char *start, *cmd, *sp;
        size_t len, head;
        char *entry;

        if (tracefs_read(t, "error_log", &text, &len) < 0 || len == 0)
                return NULL;
        while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' '))
                text[--len] = 0;

        /* Entries start with '[' at the beginning of a line. */
        for (start = text + len; start > text; start--)
                if (start[0] == '[' && start[-1] == '\n')
                        break;
        if (start[0] != '[')
                return NULL;

        sp = strchr(line, ' ');
        head = sp ? (size_t) (sp - line) : strlen(line);
        cmd = strstr(start, "Command: ");
        if (!cmd || strncmp(cmd + strlen("Command: "), line, head) != 0)
                return NULL;

        start = strchr(start, ']');
        if (!start)
                return NULL;
        start++;
        while (*start == ' ')
                start++;
        entry = strdup(start);
        return entry;
}

char *tracefs_filter_error(const struct tracefs *t, const char *system, const char *name, const char *filter) {
        _cleanup_(freep) char *inst = NULL, *path = NULL, *text = NULL;
        char *why = NULL, *p, *end;
        int fd;

        if (!t || !filter || !name_is_valid(system) || !name_is_valid(name))
                return NULL;
        /* perf's SET_FILTER says only EINVAL; the parser's words land in
         * the event's filter file. A private instance keeps the top-level
         * filters (other tracers' state) untouched. */
        if (asprintf(&inst, "instances/evmonfilter%d", (int) getpid()) < 0)
                return NULL;
        if (mkdirat(t->fd, inst, 0700) < 0)
                return NULL;
        if (asprintf(&path, "%s/events/%s/%s/filter", inst, system, name) < 0)
                path = NULL;
        fd = path ? openat(t->fd, path, O_WRONLY | O_TRUNC | O_CLOEXEC) : -1;
        if (fd >= 0) {
                bool refused = write(fd, filter, strlen(filter)) < 0;

                close(fd);
                if (refused)
                        (void) read_file_at(t->fd, path, &text, NULL);
        }
        (void) unlinkat(t->fd, inst, AT_REMOVEDIR);

        /* "FILTER\n   ^\nparse_error: Field not found\n" */
        p = text ? strstr(text, "parse_error: ") : NULL;
        if (!p)
                return NULL;
        p += strlen("parse_error: ");
        end = p + strcspn(p, "\n");
        why = strndup(p, (size_t) (end - p));
        return why;
}
