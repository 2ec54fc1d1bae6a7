/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Callchain frames → "sym+off" in a module. Kernel frames by /proc/kallsyms
 * (kallsyms.c); user frames by the process's executable mappings (MMAP2
 * records, else /proc/PID/maps) and the mapped file's symbol table.
 *
 * The mapped files are users': their ELF is parsed by evmon-symbolizer, a
 * sandboxed helper process (evmon-symbolizer.c), never here, in the root
 * daemon's loop (issue 26: a FIFO named by .gnu_debuglink hung the loop,
 * an xz bomb in .gnu_debugdata grew it by a GiB). This side opens the file
 * itself through the process's root, following no link at any
 * component and without blocking, takes only a regular file of the
 * mapped device and inode, and
 * passes the fd over a socketpair (SCM_RIGHTS). The helper answers with
 * the load segments and the sorted function symbols; this side checks the
 * answer and keeps it. The helper works on one file at a time; the frame
 * that asked waits for the answer at most wait_ms (100 ms), and the loop
 * at most wait_ms a second for all files together; later frames
 * take it as it comes in (read without blocking), and past timeout_ms
 * (2 s) the helper is killed, restarted after a back-off, and the file
 * asked for again a minute later. Frames of a file without its table
 * meanwhile carry a note saying why they have no name ("symbols
 * pending", "helper timed out", ...). The loop so waits at most wait_ms
 * a second, however many files it meets, and a file made to be slow
 * costs it that once.
 *
 * Both caches are bounded and evict the least recently used: the tables
 * of max_modules files keyed by inode, holding at most max_bytes in all,
 * and the mappings of max_procs processes, at most max_maps each. A cache
 * miss reads /proc or asks the helper; a hit allocates nothing. */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "evmon/clock.h"
#include "evmon/context.h"
#include "evmon/io.h"
#include "symbolizer.h"

#ifndef EVMON_SYMBOLIZER_PATH
#define EVMON_SYMBOLIZER_PATH "/usr/libexec/evmon/evmon-symbolizer"
#endif

/* A file the helper failed on is asked for again after this. */
#define RETRY_NS (60 * NSEC_PER_SEC)
/* A file met while the helper works on another is asked for after this. */
#define BUSY_RETRY_NS (10 * NSEC_PER_MSEC)
/* The helper's restart back-off: doubles per failure up to the maximum,
 * back to the minimum after a quiet while. A stream of crafted files then
 * costs the loop at most one timeout per maximum back-off. */
#define BACKOFF_MIN_NS NSEC_PER_SEC
#define BACKOFF_MAX_NS (64 * NSEC_PER_SEC)
#define BACKOFF_QUIET_NS (300 * NSEC_PER_SEC)

/* The notes a frame gets when its file's names were lost (protocol.md). */
static const char NOTE_TIMEOUT[] = "helper timed out";
static const char NOTE_CRASHED[] = "helper failed";
static const char NOTE_BUSY[] = "helper busy";
static const char NOTE_PENDING[] = "symbols pending";
static const char NOTE_NOT_REGULAR[] = "not a regular file";
static const char NOTE_REPLACED[] = "file replaced";
static const char NOTE_TOO_LARGE[] = "symbol table over the cache bound";
static const char NOTE_TRUNCATED[] = "symbol table truncated";
static const char NOTE_DEBUGDATA[] = "minidebuginfo over its bound";

struct mod {
        uint64_t dev, ino, last_use;
        uint64_t retry_ns;              /* failed: when to ask the helper again (0: never) */
        struct ctx_symtab *tab;         /* NULL: failed or pending */
        size_t bytes;
        char *path;
        const char *note;               /* why there is no table, NULL when that is not news */
        bool used, pending;             /* pending: the helper's answer is awaited */
};

/* The one request the helper works on, and what has come of its answer:
 * read as it comes, so the loop waits for it only wait_ms, and the
 * helper is killed past its deadline. */
struct pending {
        bool active;
        uint32_t id;
        uint64_t dev, ino;              /* the module it is for */
        uint64_t deadline;
        int error;                      /* the helper's answer: no table (no ELF) */
        struct symbolizer_reply rep;
        size_t rep_got, body_got;
        struct ctx_symtab *t;
        /* The second request for the module: its separate debug file,
         * whose names go with ORIG's segments (a debug file's PT_LOADs
         * have no file bytes). */
        struct ctx_symtab *orig;
};

struct umap {
        uint64_t start, end, pgoff, dev, ino;
        uint32_t path;                  /* offset in the proc's names */
};

struct uproc {
        pid_t pid;
        bool used, from_proc;
        uint64_t last_use;
        struct umap *maps;
        unsigned n_maps;
        char *names;
        size_t names_len, names_cap;
};

struct ctx_symbols {
        struct ctx_symbols_opts o;
        char *proc_root;
        char *helper;
        struct ctx_kallsyms *kallsyms;
        struct mod *mods;
        struct uproc *procs;
        uint64_t clock;
        struct ctx_symbols_stats st;
        int helper_fd;
        pid_t helper_pid;
        /* The --unwind helper (unwind_*()): one request at a time, waited
         * for; killed past its deadline and started again a second later. */
        int unwind_fd;
        pid_t unwind_pid;
        uint32_t unwind_id;
        uint64_t unwind_restart_ns;
        uint64_t unwind_credit_ns, unwind_refill_ns;  /* what the loop may still wait for it */
        struct pending pending;
        uint32_t next_id;
        uint64_t restart_ns, backoff_ns, last_failure_ns;
        const char *down_note;          /* why the helper is down in its back-off */
        uint64_t wait_credit_ns, wait_refill_ns;  /* what the loop may still wait (helper_wait()) */
};

/* ---- the helper ---------------------------------------------------------- */

static void helper_stop(struct ctx_symbols *s) {
        if (s->helper_fd >= 0)
                close(s->helper_fd);
        s->helper_fd = -1;
        if (s->helper_pid > 0) {
                (void) kill(s->helper_pid, SIGKILL);
                (void) waitpid(s->helper_pid, NULL, 0);
        }
        s->helper_pid = 0;
}

/* The helper failed (late, dead, nonsense): killed, and not started again
 * before the back-off has passed. */
static void helper_failed(struct ctx_symbols *s, bool timeout) {
        uint64_t now = now_ns(CLOCK_MONOTONIC);

        helper_stop(s);
        if (timeout)
                s->st.helper_timeouts++;
        else
                s->st.helper_crashes++;
        if (!s->backoff_ns || now - s->last_failure_ns > BACKOFF_QUIET_NS)
                s->backoff_ns = BACKOFF_MIN_NS;
        else if (s->backoff_ns < BACKOFF_MAX_NS)
                s->backoff_ns *= 2;
        s->last_failure_ns = now;
        s->restart_ns = now + s->backoff_ns;
        s->down_note = timeout ? NOTE_TIMEOUT : NOTE_CRASHED;
}

/* FD moved above the helper's fds 0-3 (closed on error): the spawn's
 * dup2()s onto 0, 1 and 3 must not overwrite one another's source, as
 * /dev/null opened at 3 (a process started with fds 0-2 only) did: the
 * helper got its socket at fd 0 as well. */
static int fd_above_helper(int fd) {
        int r;

        if (fd < 0 || fd > SYMBOLIZER_FD)
                return fd;
        r = fcntl(fd, F_DUPFD_CLOEXEC, SYMBOLIZER_FD + 1);
        if (r < 0)
                r = -errno;
        close(fd);
        return r;
}

/* Starts evmon-symbolizer (with --unwind for UNWIND): its pid and our end
 * of its socket (non-blocking). */
static int spawn_helper(const char *path, bool unwind, pid_t *ret_pid, int *ret_fd) {
        _cleanup_(closep) int devnull = -1;
        posix_spawn_file_actions_t fa;
        posix_spawnattr_t attr;
        sigset_t none, all;
        int sv[2], r;
        char *argv[] = { (char *) "evmon-symbolizer", unwind ? (char *) "--unwind" : NULL, NULL }, *envp[4];
        size_t n_env = 0;
        extern char **environ;

        devnull = fd_above_helper(open("/dev/null", O_RDWR | O_CLOEXEC));
        if (devnull < 0)
                return devnull == -1 ? -errno : devnull;
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
                return -errno;
        sv[1] = fd_above_helper(sv[1]);
        if (sv[1] < 0) {
                close(sv[0]);
                return sv[1];
        }
        sigemptyset(&none);
        sigfillset(&all);
        posix_spawn_file_actions_init(&fa);
        posix_spawnattr_init(&attr);
        /* The helper's fd 3 is its end; 0 and 1 are /dev/null; stderr
         * stays the daemon's (the journal) for a failed sandbox set-up,
         * and the helper puts /dev/null there before it reads a file. */
        posix_spawn_file_actions_adddup2(&fa, sv[1], SYMBOLIZER_FD);
        posix_spawn_file_actions_adddup2(&fa, devnull, 0);
        posix_spawn_file_actions_adddup2(&fa, devnull, 1);
        /* The loop blocks the signals it takes by signalfd: the helper
         * must die of SIGXCPU and SIGPIPE. */
        posix_spawnattr_setsigmask(&attr, &none);
        posix_spawnattr_setsigdefault(&attr, &all);
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
        /* The daemon's environment is not the helper's: it may hold what
         * a helper made to say it in symbol names would tell a user. Only
         * the sanitizers' settings pass (the sanitized tests). */
        for (char **e = environ; *e && n_env < 3; e++)
                if (strncmp(*e, "ASAN_OPTIONS=", 13) == 0 || strncmp(*e, "UBSAN_OPTIONS=", 14) == 0 ||
                    strncmp(*e, "LSAN_OPTIONS=", 13) == 0)
                        envp[n_env++] = *e;
        envp[n_env] = NULL;
        r = -posix_spawn(ret_pid, path, &fa, &attr, argv, envp);
        posix_spawn_file_actions_destroy(&fa);
        posix_spawnattr_destroy(&attr);
        close(sv[1]);
        if (r < 0) {
                close(sv[0]);
                *ret_pid = 0;
                return r;
        }
        if (fcntl(sv[0], F_SETFL, O_NONBLOCK) < 0) {
                r = -errno;
                close(sv[0]);
                (void) kill(*ret_pid, SIGKILL);
                (void) waitpid(*ret_pid, NULL, 0);
                *ret_pid = 0;
                return r;
        }
        *ret_fd = sv[0];
        return 0;
}

static int helper_start(struct ctx_symbols *s) {
        int r = spawn_helper(s->helper, false, &s->helper_pid, &s->helper_fd);

        if (r < 0)
                return r;
        s->st.helper_starts++;
        return 0;
}

static int pending_begin_body(struct ctx_symbols *s);

/* Reads what has come of the pending answer, waiting until UNTIL
 * (CLOCK_MONOTONIC ns; 0: not at all). 1: complete, 0: not yet, -errno:
 * the helper failed (-EPIPE at the end of the stream, -EBADMSG). */
static int helper_pump(struct ctx_symbols *s, uint64_t until) {
        struct pending *q = &s->pending;

        for (;;) {
                struct ctx_symtab *t = q->t;
                char *buf;
                size_t want;
                ssize_t k;
                uint64_t now;

                if (q->rep_got < sizeof(q->rep)) {
                        buf = (char *) &q->rep + q->rep_got;
                        want = sizeof(q->rep) - q->rep_got;
                } else if (q->body_got < t->n_syms * sizeof(*t->syms)) {
                        buf = (char *) t->syms + q->body_got;
                        want = t->n_syms * sizeof(*t->syms) - q->body_got;
                } else if (q->body_got - t->n_syms * sizeof(*t->syms) < t->names_len) {
                        size_t at = q->body_got - t->n_syms * sizeof(*t->syms);

                        buf = t->names + at;
                        want = t->names_len - at;
                } else
                        return 1;
                k = recv(s->helper_fd, buf, want, MSG_DONTWAIT);
                if (k > 0) {
                        if (q->rep_got < sizeof(q->rep)) {
                                q->rep_got += (size_t) k;
                                if (q->rep_got == sizeof(q->rep)) {
                                        int r = pending_begin_body(s);

                                        if (r <= 0)
                                                return r < 0 ? r : 1;  /* an error; or no body, done */
                                }
                        } else
                                q->body_got += (size_t) k;
                        continue;
                }
                if (k == 0)
                        return -EPIPE;
                if (errno == EINTR)
                        continue;
                if (errno != EAGAIN)
                        return -errno;
                now = now_ns(CLOCK_MONOTONIC);
                if (now >= until)
                        return 0;
                if (poll(&(struct pollfd) { .fd = s->helper_fd, .events = POLLIN }, 1,
                         (int) ((until - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC)) < 0 && errno != EINTR)
                        return -errno;
        }
}

static int helper_send(struct ctx_symbols *s, int fd, uint32_t id) {
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int))];
        } control = {};
        struct symbolizer_request req = { SYMBOLIZER_MAGIC, id };
        struct iovec iov = { &req, sizeof(req) };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control, .msg_controllen = sizeof(control) };
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        ssize_t n;

        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof(int));
        do
                n = sendmsg(s->helper_fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        return n == sizeof(req) ? 0 : -EPIPE;
}

/* The answer's header is in: its table, to be filled by the body. 1:
 * there is a body to read, 0: the answer is complete (the helper's error,
 * or a table without symbols), -EBADMSG. */
static int pending_begin_body(struct ctx_symbols *s) {
        struct pending *q = &s->pending;
        const struct symbolizer_reply *rep = &q->rep;
        struct ctx_symtab *t;

        if (symbolizer_reply_check(rep, q->id) < 0)
                return -EBADMSG;
        if (rep->error < 0) {
                q->error = rep->error < -4095 ? -EIO : rep->error;
                return 0;
        }
        t = q->t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        t->flags = rep->flags;
        t->n_segs = rep->n_segs;
        memcpy(t->segs, rep->segs, sizeof(t->segs));
        memcpy(t->build_id, rep->build_id, sizeof(t->build_id));
        t->build_id_len = rep->build_id_len;
        t->n_syms = rep->n_syms;
        t->names_len = rep->names_len;
        if (!t->n_syms)
                return 0;
        /* Without room the answer stays unread: the helper is restarted
         * as if it had failed. */
        t->syms = malloc((size_t) t->n_syms * sizeof(*t->syms));
        t->names = malloc((size_t) t->names_len);
        return t->syms && t->names ? 1 : -ENOMEM;
}

static void pending_clear(struct ctx_symbols *s) {
        ctx_symtab_free(s->pending.t);
        ctx_symtab_free(s->pending.orig);
        s->pending = (struct pending) {};
}

/* Asks the helper for the table of the file at FD, for the module DEV,
 * INO. -EAGAIN while it is not restarted yet or busy with another file. */
static int helper_request(struct ctx_symbols *s, int fd, uint64_t dev, uint64_t ino, const char **ret_note) {
        int r;

        if (s->pending.active) {
                *ret_note = NOTE_BUSY;
                return -EAGAIN;
        }
        if (s->helper_fd < 0) {
                if (now_ns(CLOCK_MONOTONIC) < s->restart_ns) {
                        /* In the back-off: what brought it down. */
                        *ret_note = s->down_note;
                        return -EAGAIN;
                }
                r = helper_start(s);
                if (r < 0) {
                        /* Not there (a build without it, a wrong path): as
                         * a crash, so the back-off spares the loop. */
                        helper_failed(s, false);
                        *ret_note = NOTE_CRASHED;
                        return r;
                }
        }
        s->pending = (struct pending) {
                .active = true, .id = ++s->next_id, .dev = dev, .ino = ino,
                .deadline = now_ns(CLOCK_MONOTONIC) + (uint64_t) s->o.timeout_ms * NSEC_PER_MSEC,
        };
        r = helper_send(s, fd, s->pending.id);
        if (r < 0) {
                pending_clear(s);
                helper_failed(s, false);
                *ret_note = NOTE_CRASHED;
                return -EPIPE;
        }
        return 0;
}

/* ---- modules ------------------------------------------------------------ */

static void mod_clear(struct ctx_symbols *s, struct mod *m) {
        s->st.cache_bytes -= m->bytes;
        ctx_symtab_free(m->tab);
        free(m->path);
        *m = (struct mod) {};
}

/* The mapped file, opened as this process may not be steered into. The
 * path is the kernel's (d_path): it holds no symlink, so none is
 * followed, at any component; a user who swapped a directory on it for
 * a link reached through it a root-only file of the mapped inode number
 * (two tmpfs number theirs alike), and was told its function names. In
 * ROOT (the process's /proc/PID/root; -1: this process's root) and
 * beneath it. No open that blocks (a FIFO, a lease); only a regular file
 * of the mapped device and inode. The device only where the file system
 * shows the one it is on: overlayfs maps the file of a layer, btrfs a
 * subvolume's device in stat() and the file system's in the maps; there
 * the inode alone. O_PATH first, so nothing but a regular file is ever
 * opened for reading. */
static int open_mapped(int root, const char *path, uint64_t dev, uint64_t ino) {
        _cleanup_(closep) int pfd = -1;
        struct open_how how = {
                .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
                .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | (root >= 0 ? RESOLVE_IN_ROOT : 0),
        };
        struct statfs sfs;
        struct stat st;
        char buf[64];
        int fd;

        pfd = (int) syscall(SYS_openat2, root >= 0 ? root : AT_FDCWD, path, &how, sizeof(how));
        if (pfd < 0)
                return -errno;
        if (fstat(pfd, &st) < 0 || fstatfs(pfd, &sfs) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        if (st.st_ino != ino)
                return -ESTALE;
        if (st.st_dev != dev && sfs.f_type != OVERLAYFS_SUPER_MAGIC && sfs.f_type != BTRFS_SUPER_MAGIC)
                return -ESTALE;
        snprintf(buf, sizeof(buf), "/proc/self/fd/%d", pfd);
        fd = open(buf, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

/* Frees the least recently used tables until BYTES more fit in max_bytes. */
static void mods_make_room(struct ctx_symbols *s, const struct mod *keep, size_t bytes) {
        while (s->st.cache_bytes + bytes > s->o.max_bytes) {
                struct mod *lru = NULL;

                for (unsigned i = 0; i < s->o.max_modules; i++) {
                        struct mod *x = &s->mods[i];

                        if (x != keep && x->tab && (!lru || x->last_use < lru->last_use))
                                lru = x;
                }
                if (!lru)
                        return;
                mod_clear(s, lru);
        }
}

static void mod_install(struct ctx_symbols *s, struct mod *m, struct ctx_symtab *t) {
        size_t bytes = ctx_symtab_bytes(t);

        if (bytes > s->o.max_bytes) {
                ctx_symtab_free(t);
                m->note = NOTE_TOO_LARGE;
                return;
        }
        mods_make_room(s, m, bytes);
        m->tab = t;
        m->bytes = bytes;
        s->st.cache_bytes += bytes;
}

/* The separate debug file of build id ID (LEN bytes) where distributions
 * put it (/usr/lib/debug/.build-id/xx/yyyy.debug, Debian's -dbg and
 * -dbgsym packages, Fedora's debuginfo), as perf and gdb look for it.
 * The directory is root's and so must the file be: a regular file of
 * root's that no one else may write (a link there is followed, as
 * Fedora's are links, but not a magic one); opened without blocking. */
static int open_debug(const char *root, const uint8_t *id, size_t len) {
        _cleanup_(closep) int pfd = -1;
        struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_NO_MAGICLINKS };
        char path[PATH_MAX], buf[64];
        struct stat st;
        size_t n;
        int fd;

        if (len < 2)
                return -ENOENT;
        n = (size_t) snprintf(path, sizeof(path), "%s/.build-id/%02x/", root, id[0]);
        for (size_t i = 1; i < len && n + 3 < sizeof(path); i++)
                n += (size_t) snprintf(path + n, sizeof(path) - n, "%02x", id[i]);
        if (n + 7 >= sizeof(path))
                return -ENAMETOOLONG;
        strcpy(path + n, ".debug");
        pfd = (int) syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
        if (pfd < 0)
                return -errno;
        if (fstat(pfd, &st) < 0)
                return -errno;
        /* Root's, written by no one else, and readable by anyone: a file
         * only root may read names nothing for a user's forged build id. */
        if (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)) || !(st.st_mode & S_IROTH))
                return -EPERM;
        snprintf(buf, sizeof(buf), "/proc/self/fd/%d", pfd);
        fd = open(buf, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

/* T, the file's own table, names functions from .dynsym alone (or
 * minidebuginfo): asks the helper for its debug file's, which then
 * becomes the pending request (true). */
static bool pending_ask_debug(struct ctx_symbols *s, struct ctx_symtab *t) {
        _cleanup_(closep) int fd = -1;
        uint64_t dev = s->pending.dev, ino = s->pending.ino;
        const char *note = NULL;

        if (!(t->flags & CTX_SYMTAB_NO_SYMTAB) || !s->o.debug_root || !*s->o.debug_root)
                return false;
        fd = open_debug(s->o.debug_root, t->build_id, t->build_id_len);
        if (fd < 0)
                return false;
        s->pending.t = NULL;
        pending_clear(s);
        if (helper_request(s, fd, dev, ino, &note) < 0) {
                /* The caller installs T, its own table, after all. */
                s->pending.t = t;
                return false;
        }
        s->pending.orig = t;
        return true;
}

/* The debug file's answer T for the table ORIG: its names with ORIG's
 * segments and build id. Takes both; NULL for no memory. */
static struct ctx_symtab *debug_merge(struct ctx_symtab *orig, struct ctx_symtab *t) {
        if (!t || t->n_syms == 0) {
                ctx_symtab_free(t);
                return orig;
        }
        t->n_segs = orig->n_segs;
        memcpy(t->segs, orig->segs, sizeof(t->segs));
        memcpy(t->build_id, orig->build_id, sizeof(t->build_id));
        t->build_id_len = orig->build_id_len;
        t->flags = (t->flags & CTX_SYMTAB_TRUNCATED) | CTX_SYMTAB_DEBUGFILE;
        ctx_symtab_free(orig);
        return t;
}

/* Moves the pending answer on, waiting until UNTIL at most (0: not at
 * all): a complete table goes to its module (if it is still in the
 * cache); a helper that failed or is past its deadline is killed, and
 * its module is asked for again a minute later. */
static void pending_settle(struct ctx_symbols *s, uint64_t until) {
        struct pending *q = &s->pending;
        struct mod *m = NULL;
        uint64_t now;
        int r;

        if (!q->active)
                return;
        if (until > q->deadline)
                until = q->deadline;
        r = helper_pump(s, until);
        now = now_ns(CLOCK_MONOTONIC);
        if (r == 0 && now >= q->deadline)
                r = -ETIMEDOUT;
        if (r == 0)
                return;
        if (r > 0 && q->t)
                r = ctx_symtab_check(q->t);
        for (unsigned i = 0; i < s->o.max_modules; i++)
                if (s->mods[i].used && s->mods[i].pending && s->mods[i].dev == q->dev && s->mods[i].ino == q->ino) {
                        m = &s->mods[i];
                        m->pending = false;
                        break;
                }
        if (r < 0) {
                /* The debug file broke the helper: the file's own names. */
                struct ctx_symtab *orig = q->orig;

                q->orig = NULL;
                pending_clear(s);
                helper_failed(s, r == -ETIMEDOUT);
                if (m && orig) {
                        mod_install(s, m, orig);
                        return;
                }
                ctx_symtab_free(orig);
                if (m) {
                        m->note = r == -ETIMEDOUT ? NOTE_TIMEOUT : NOTE_CRASHED;
                        m->retry_ns = now + RETRY_NS;
                }
                return;
        }
        if (q->orig) {
                /* The debug file's answer (none when it was no ELF). */
                struct ctx_symtab *t = debug_merge(q->orig, q->error ? NULL : q->t);

                q->orig = q->t = NULL;
                q->error = 0;
                q->t = t;
        } else if (m && !q->error && q->t && pending_ask_debug(s, q->t)) {
                m->pending = true;
                return;
        }
        if (m && !q->error && q->t) {
                mod_install(s, m, q->t);
                q->t = NULL;
        }
        pending_clear(s);
}

/* Waits for the pending answer as the loop may afford: wait_ms at once
 * and wait_ms a second in all (a credit refilled at that rate). Per file
 * it met, the loop would wait wait_ms for each of a callchain's 127 frames
 * in as many files, and then for each sample bringing a new one: a
 * user's files made to take the helper just under that held the loop
 * 1.3 s for a callchain of 32 (issue 26). Past the credit, frames say
 * "symbols pending" and take the table when it is in. */
static void helper_wait(struct ctx_symbols *s) {
        uint64_t cap = (uint64_t) s->o.wait_ms * NSEC_PER_MSEC, now = now_ns(CLOCK_MONOTONIC), spent;

        if (s->o.recorded) {
                /* Nobody waits on a batch job's loop: the whole answer
                 * (and its debug file's), up to the helper's deadline. */
                while (s->pending.active)
                        pending_settle(s, UINT64_MAX);
                return;
        }
        if (now - s->wait_refill_ns >= NSEC_PER_SEC)
                s->wait_credit_ns = cap;
        else
                s->wait_credit_ns += (now - s->wait_refill_ns) * s->o.wait_ms / 1000;
        if (s->wait_credit_ns > cap)
                s->wait_credit_ns = cap;
        s->wait_refill_ns = now;
        pending_settle(s, s->wait_credit_ns ? now + s->wait_credit_ns : 0);
        /* A debug file asked for after the file's own answer: within the
         * same credit. */
        if (s->pending.active && s->wait_credit_ns && now_ns(CLOCK_MONOTONIC) < now + s->wait_credit_ns)
                pending_settle(s, now + s->wait_credit_ns);
        spent = now_ns(CLOCK_MONOTONIC) - now;
        s->wait_credit_ns -= spent < s->wait_credit_ns ? spent : s->wait_credit_ns;
}

static struct mod *mod_get(struct ctx_symbols *s, pid_t pid, uint64_t dev, uint64_t ino, const char *path,
                           const char **ret_note) {
        struct mod *m = NULL, *lru = NULL;
        _cleanup_(closep) int fd = -1, root = -1;
        char buf[64];
        uint64_t now;
        int r;

        for (unsigned i = 0; i < s->o.max_modules; i++) {
                struct mod *x = &s->mods[i];

                if (x->used && x->dev == dev && x->ino == ino) {
                        m = x;
                        break;
                }
                if (!lru || (lru->used && (!x->used || x->last_use < lru->last_use)))
                        lru = x;
        }
        if (m) {
                m->last_use = ++s->clock;
                if (m->tab)
                        return m;
                if (m->pending) {
                        *ret_note = NOTE_PENDING;
                        return NULL;
                }
                *ret_note = m->note;
                if (!m->retry_ns || now_ns(CLOCK_MONOTONIC) < m->retry_ns)
                        return NULL;
        } else {
                m = lru;
                mod_clear(s, m);
                m->used = true;
                m->dev = dev;
                m->ino = ino;
                m->last_use = ++s->clock;
                m->path = strdup(path);
                if (!m->path) {
                        mod_clear(s, m);
                        return NULL;
                }
        }
        m->note = NULL;
        m->retry_ns = 0;
        /* Through the process's root, so a container's files are its own;
         * else (the process is gone) the path as it is here, under the
         * same checks. */
        snprintf(buf, sizeof(buf), "%s/%d/root", s->proc_root, (int) pid);
        root = s->o.recorded ? -1 : open(buf, O_PATH | O_DIRECTORY | O_CLOEXEC);
        fd = root < 0 ? -ENOENT : open_mapped(root, path, dev, ino);
        /* Also where /proc/PID/root is closed to us: it takes ptrace
         * access, which the daemon's dropped capabilities lack for a
         * process of another user or with more capabilities. */
        if (fd < 0 && fd != -EBADFD && fd != -ESTALE && fd != -ELOOP)
                fd = open_mapped(-1, path, dev, ino);
        if (fd < 0) {
                if (fd == -EBADFD || fd == -ELOOP) {
                        m->note = NOTE_NOT_REGULAR;
                        s->st.refused++;
                } else if (fd == -ESTALE) {
                        m->note = NOTE_REPLACED;
                        s->st.refused++;
                }
                *ret_note = m->note;
                return NULL;
        }
        r = helper_request(s, fd, dev, ino, &m->note);
        if (r < 0) {
                now = now_ns(CLOCK_MONOTONIC);
                /* Busy or restarting: asked again on a later frame (not
                 * every frame: each asking opens the file). */
                if (r == -EAGAIN)
                        m->retry_ns = (s->pending.active || s->restart_ns <= now ? now : s->restart_ns) + BUSY_RETRY_NS;
                else
                        m->retry_ns = now + RETRY_NS;
                *ret_note = m->note;
                return NULL;
        }
        m->pending = true;
        /* A file's table mostly comes within milliseconds: the frame waits
         * that long, as the loop's credit allows. */
        helper_wait(s);
        if (m->tab)
                return m;
        *ret_note = m->pending ? NOTE_PENDING : m->note;
        return NULL;
}

/* ---- process mappings ------------------------------------------------- */

static void uproc_clear(struct uproc *p) {
        free(p->maps);
        free(p->names);
        *p = (struct uproc) {};
}

static int uproc_add(struct ctx_symbols *s, struct uproc *p, uint64_t start, uint64_t end, uint64_t pgoff,
                     uint64_t dev, uint64_t ino, const char *path, size_t path_len) {
        unsigned k;

        if (path_len == 0 || (path[0] != '/' && path[0] != '[') || end <= start)
                return 0;  /* anonymous: no file to read, no name */
        /* The kernel's own mappings ([vdso], [uprobes]: a uprobe's
         * single-step slot) have no file to read, but name their frames'
         * module, as perf names them. */
        if (path[0] == '[')
                dev = ino = 0;
        if (!p->maps) {
                p->maps = calloc(s->o.max_maps, sizeof(*p->maps));
                if (!p->maps)
                        return -ENOMEM;
        }
        if (p->n_maps >= s->o.max_maps)
                return 0;
        if (p->names_len + path_len + 1 > p->names_cap) {
                size_t cap = p->names_cap ? p->names_cap * 2 : 4096;
                char *n;

                while (cap < p->names_len + path_len + 1)
                        cap *= 2;
                n = realloc(p->names, cap);
                if (!n)
                        return -ENOMEM;
                p->names = n;
                p->names_cap = cap;
        }
        /* Kept sorted by start; a new mapping replaces those it overlaps. */
        for (k = 0; k < p->n_maps;) {
                if (p->maps[k].start < end && start < p->maps[k].end) {
                        memmove(&p->maps[k], &p->maps[k + 1], (p->n_maps - k - 1) * sizeof(*p->maps));
                        p->n_maps--;
                } else
                        k++;
        }
        for (k = 0; k < p->n_maps && p->maps[k].start < start; k++)
                ;
        memmove(&p->maps[k + 1], &p->maps[k], (p->n_maps - k) * sizeof(*p->maps));
        p->maps[k] = (struct umap) { start, end, pgoff, dev, ino, (uint32_t) p->names_len };
        memcpy(p->names + p->names_len, path, path_len);
        p->names[p->names_len + path_len] = 0;
        p->names_len += path_len + 1;
        p->n_maps++;
        return 0;
}

struct load_ctx {
        struct ctx_symbols *s;
        struct uproc *p;
};

static int load_one(const struct ctx_map *m, void *userdata) {
        struct load_ctx *l = userdata;
        size_t n = m->path_len;

        if (!m->exec)
                return 0;
        /* " (deleted)": the file is gone, its inode may still be read
         * through the process's root; keep the name without the note. */
        if (n > 10 && memcmp(m->path + n - 10, " (deleted)", 10) == 0)
                n -= 10;
        return uproc_add(l->s, l->p, m->start, m->end, m->pgoff, m->dev, m->ino, m->path, n);
}

static struct uproc *uproc_find(struct ctx_symbols *s, pid_t pid) {
        for (unsigned i = 0; i < s->o.max_procs; i++)
                if (s->procs[i].used && s->procs[i].pid == pid)
                        return &s->procs[i];
        return NULL;
}

static struct uproc *uproc_new(struct ctx_symbols *s, pid_t pid) {
        struct uproc *lru = &s->procs[0];

        for (unsigned i = 0; i < s->o.max_procs; i++) {
                if (!s->procs[i].used) {
                        lru = &s->procs[i];
                        break;
                }
                if (s->procs[i].last_use < lru->last_use)
                        lru = &s->procs[i];
        }
        uproc_clear(lru);
        lru->used = true;
        lru->pid = pid;
        lru->last_use = ++s->clock;
        return lru;
}

static void uproc_read(struct ctx_symbols *s, struct uproc *p) {
        char path[64];
        _cleanup_(freep) char *buf = NULL;
        _cleanup_(closep) int fd = -1;
        size_t len;

        p->from_proc = true;
        if (s->o.recorded)
                return;
        snprintf(path, sizeof(path), "%s/%d/maps", s->proc_root, (int) p->pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || read_full(fd, 0, &buf, &len) < 0)
                return;
        (void) ctx_parse_maps(buf, len, load_one, &(struct load_ctx) { s, p });
}

static const struct umap *umap_find(const struct uproc *p, uint64_t ip) {
        size_t lo = 0, hi = p->n_maps;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (ip < p->maps[mid].start)
                        hi = mid;
                else if (ip >= p->maps[mid].end)
                        lo = mid + 1;
                else
                        return &p->maps[mid];
        }
        return NULL;
}

void ctx_symbols_mmap(struct ctx_symbols *s, pid_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
                      uint64_t dev, uint64_t ino, const char *path) {
        struct uproc *p = uproc_find(s, pid);

        if (!path)
                return;
        if (!p)
                p = uproc_new(s, pid);
        (void) uproc_add(s, p, start, start + len, pgoff, dev, ino, path, strlen(path));
}

void ctx_symbols_forget(struct ctx_symbols *s, pid_t pid) {
        struct uproc *p = uproc_find(s, pid);

        if (p)
                uproc_clear(p);
}

void ctx_symbols_fork(struct ctx_symbols *s, pid_t parent, pid_t child) {
        struct uproc *pp = uproc_find(s, parent), *c;

        ctx_symbols_forget(s, child);
        if (!pp || parent == child)
                return;
        pp->last_use = ++s->clock;
        c = uproc_find(s, child) ?: uproc_new(s, child);
        for (unsigned i = 0; i < pp->n_maps; i++) {
                /* uproc_new() may have taken PP's slot: then nothing to copy. */
                if (!pp->used || pp->pid != parent)
                        return;
                const struct umap *u = &pp->maps[i];
                const char *path = pp->names + u->path;

                if (uproc_add(s, c, u->start, u->end, u->pgoff, u->dev, u->ino, path, strlen(path)) < 0)
                        return;
        }
}

static int user_frame(struct ctx_symbols *s, struct uproc *p, uint64_t ip, struct ctx_frame *ret) {
        const struct umap *u = umap_find(p, ip);
        const struct ctx_symtab_sym *f;
        const struct ctx_symtab *t;
        uint64_t off, addr = 0;
        struct mod *m;
        bool found = false;

        if (!u && !p->from_proc) {
                /* Mappings from records only (inherited ones never come as
                 * records): read the rest from /proc once. */
                uproc_read(s, p);
                u = umap_find(p, ip);
        }
        if (!u)
                return -ENOENT;
        if (p->names[u->path] == '[') {
                ret->module = p->names + u->path;
                return -ENOENT;
        }
        m = mod_get(s, p->pid, u->dev, u->ino, p->names + u->path, &ret->note);
        ret->module = p->names + u->path;
        if (!m)
                return -ENOENT;
        t = m->tab;
        ret->module = m->path;
        off = ip - u->start + u->pgoff;
        for (unsigned i = 0; i < t->n_segs; i++)
                if (off - t->segs[i].offset < t->segs[i].filesz) {
                        addr = off - t->segs[i].offset + t->segs[i].vaddr;
                        found = true;
                        break;
                }
        f = found ? ctx_symtab_find(t, addr) : NULL;
        if (!f) {
                if (t->flags & CTX_SYMTAB_TRUNCATED)
                        ret->note = NOTE_TRUNCATED;
                else if (t->flags & CTX_SYMTAB_DEBUGDATA)
                        ret->note = NOTE_DEBUGDATA;
                return -ENOENT;
        }
        ret->sym = t->names + f->name;
        ret->off = addr - f->addr;
        return 0;
}

int ctx_symbols_resolve(struct ctx_symbols *s, pid_t pid, const uint64_t *ips, uint64_t nr,
                        struct ctx_frame *ret) {
        bool kernel = false;  /* frames before any marker: by address */
        struct uproc *p = NULL;
        int named = 0;

        /* An answer that came meanwhile, or a helper past its deadline. */
        pending_settle(s, 0);

        for (uint64_t i = 0; i < nr; i++) {
                uint64_t ip;
                int r = -ENOENT;

                memcpy(&ip, &ips[i], sizeof(ip));
                ret[i] = (struct ctx_frame) {};
                if (ip >= PERF_CONTEXT_MAX) {
                        kernel = ip == PERF_CONTEXT_KERNEL;
                        continue;
                }
                if (kernel || (int64_t) ip < 0)
                        r = ctx_kallsyms_lookup(s->kallsyms, ip, &ret[i]);
                else if (pid > 0) {
                        if (!p) {
                                p = uproc_find(s, pid);
                                if (!p) {
                                        p = uproc_new(s, pid);
                                        uproc_read(s, p);
                                }
                                p->last_use = ++s->clock;
                        }
                        r = user_frame(s, p, ip, &ret[i]);
                }
                if (r == 0) {
                        named++;
                        s->st.named++;
                } else {
                        ret[i].sym = NULL;
                        s->st.unnamed++;
                }
        }
        return named;
}

/* ---- DWARF unwinding ------------------------------------------------------ */

static void unwind_stop(struct ctx_symbols *s) {
        if (s->unwind_fd >= 0)
                close(s->unwind_fd);
        s->unwind_fd = -1;
        if (s->unwind_pid > 0) {
                (void) kill(s->unwind_pid, SIGKILL);
                (void) waitpid(s->unwind_pid, NULL, 0);
        }
        s->unwind_pid = 0;
}

static void unwind_failed(struct ctx_symbols *s) {
        unwind_stop(s);
        s->st.unwind_skipped++;
        s->st.helper_crashes++;
        s->unwind_restart_ns = now_ns(CLOCK_MONOTONIC) + NSEC_PER_SEC;
}

/* Reads N bytes of the reply into BUF by UNTIL; -ETIMEDOUT past it. */
static int unwind_read(struct ctx_symbols *s, void *buf, size_t n, uint64_t until) {
        for (size_t got = 0; got < n;) {
                uint64_t now = now_ns(CLOCK_MONOTONIC);
                ssize_t k;

                if (now >= until)
                        return -ETIMEDOUT;
                if (poll(&(struct pollfd) { .fd = s->unwind_fd, .events = POLLIN }, 1,
                         (int) ((until - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC)) < 0 && errno != EINTR)
                        return -errno;
                k = recv(s->unwind_fd, (uint8_t *) buf + got, n - got, MSG_DONTWAIT);
                if (k == 0)
                        return -EPIPE;
                if (k < 0) {
                        if (errno == EAGAIN || errno == EINTR)
                                continue;
                        return -errno;
                }
                got += (size_t) k;
        }
        return 0;
}

/* perf's x86_64 sample registers (enum perf_event_x86_regs) for DWARF's
 * numbering: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip. */
static const unsigned dwarf_from_perf[UNWIND_NREGS] = { 0, 3, 2, 1, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 8 };

int ctx_symbols_unwind(struct ctx_symbols *s, pid_t pid, uint64_t mask, const uint64_t *regs, const void *stack,
                       size_t stack_len, uint64_t *ret, size_t max) {
        struct unwind_request req = { .magic = UNWIND_MAGIC };
        struct unwind_reply rep;
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int) * UNWIND_MAX_MAPS)];
        } control = {};
        int fds[UNWIND_MAX_MAPS];
        _cleanup_(closep) int root = -1;
        struct uproc *p;
        char buf[64];
        uint64_t v[64] = {}, until, now, budget;
        size_t n_regs = 0;
        int r;

        if (pid <= 0 || !stack || stack_len == 0 || max == 0)
                return -EINVAL;
        /* The registers as sampled: one per set bit of MASK, in order. */
        for (unsigned b = 0; b < 64; b++)
                if (mask & (UINT64_C(1) << b))
                        v[b] = regs[n_regs++];
        for (unsigned i = 0; i < UNWIND_NREGS; i++) {
                if (!(mask & (UINT64_C(1) << dwarf_from_perf[i])))
                        return -EINVAL;
                req.regs[i] = v[dwarf_from_perf[i]];
        }
        req.sp = v[7];
        req.stack_len = (uint32_t) (stack_len < UNWIND_MAX_STACK ? stack_len : UNWIND_MAX_STACK) & ~7u;
        req.max_frames = (uint32_t) (max < UNWIND_MAX_FRAMES ? max : UNWIND_MAX_FRAMES);

        if (s->unwind_fd < 0) {
                if (now_ns(CLOCK_MONOTONIC) < s->unwind_restart_ns) {
                        s->st.unwind_skipped++;
                        return -EAGAIN;
                }
                r = spawn_helper(s->helper, true, &s->unwind_pid, &s->unwind_fd);
                if (r >= 0)
                        s->st.helper_starts++;
                if (r < 0) {
                        s->unwind_restart_ns = now_ns(CLOCK_MONOTONIC) + NSEC_PER_SEC;
                        return r;
                }
        }

        /* The process's executable mappings, its files opened as for
         * symbols (no link followed, no blocking open, only the mapped
         * inode). */
        p = uproc_find(s, pid);
        if (!p) {
                p = uproc_new(s, pid);
                uproc_read(s, p);
        }
        p->last_use = ++s->clock;
        snprintf(buf, sizeof(buf), "%s/%d/root", s->proc_root, (int) pid);
        root = s->o.recorded ? -1 : open(buf, O_PATH | O_DIRECTORY | O_CLOEXEC);
        for (unsigned i = 0; i < p->n_maps && req.n_maps < UNWIND_MAX_MAPS; i++) {
                const struct umap *u = &p->maps[i];
                int fd;

                if (p->names[u->path] == '[')
                        continue;
                fd = root >= 0 ? open_mapped(root, p->names + u->path, u->dev, u->ino) : -ENOENT;

                if (fd < 0 && fd != -EBADFD && fd != -ESTALE && fd != -ELOOP)
                        fd = open_mapped(-1, p->names + u->path, u->dev, u->ino);
                if (fd < 0)
                        continue;
                req.maps[req.n_maps] = (struct unwind_map) { u->start, u->end, u->pgoff };
                fds[req.n_maps++] = fd;
        }

        /* The loop waits for unwinding as for symbols (helper_wait()):
         * wait_ms at once and wait_ms a second in all, so that a
         * process whose stacks are made slow to unwind costs it that
         * and no more; past the credit, user frames are left out. A
         * batch job waits as long as the helper's deadline. */
        now = now_ns(CLOCK_MONOTONIC);
        if (s->o.recorded)
                budget = (uint64_t) s->o.timeout_ms * NSEC_PER_MSEC;
        else {
                uint64_t cap = (uint64_t) s->o.wait_ms * NSEC_PER_MSEC;

                if (now - s->unwind_refill_ns >= NSEC_PER_SEC)
                        s->unwind_credit_ns = cap;
                else
                        s->unwind_credit_ns += (now - s->unwind_refill_ns) * s->o.wait_ms / 1000;
                if (s->unwind_credit_ns > cap)
                        s->unwind_credit_ns = cap;
                s->unwind_refill_ns = now;
                budget = s->unwind_credit_ns;
        }
        if (budget == 0) {
                for (unsigned i = 0; i < req.n_maps; i++)
                        close(fds[i]);
                s->st.unwind_skipped++;
                return -EAGAIN;
        }
        req.id = ++s->unwind_id;
        {
                struct iovec iov[2] = { { &req, sizeof(req) }, { (void *) stack, req.stack_len } };
                struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
                size_t total = sizeof(req) + req.stack_len, sent = 0;
                ssize_t k;

                if (req.n_maps > 0) {
                        struct cmsghdr *c;

                        mh.msg_control = &control;
                        mh.msg_controllen = CMSG_SPACE(sizeof(int) * req.n_maps);
                        c = CMSG_FIRSTHDR(&mh);
                        c->cmsg_level = SOL_SOCKET;
                        c->cmsg_type = SCM_RIGHTS;
                        c->cmsg_len = CMSG_LEN(sizeof(int) * req.n_maps);
                        memcpy(CMSG_DATA(c), fds, sizeof(int) * req.n_maps);
                }
                until = now + budget;
                /* The first part carries the fds; what the socket did not
                 * take then goes as the helper reads. */
                do
                        k = sendmsg(s->unwind_fd, &mh, MSG_NOSIGNAL);
                while (k < 0 && errno == EINTR);
                for (unsigned i = 0; i < req.n_maps; i++)
                        close(fds[i]);
                if (k < 0 && errno != EAGAIN) {
                        unwind_failed(s);
                        return -EPIPE;
                }
                sent = k < 0 ? 0 : (size_t) k;
                if (sent == 0) {
                        unwind_failed(s);
                        return -EPIPE;
                }
                while (sent < total) {
                        const uint8_t *from = sent < sizeof(req) ? (const uint8_t *) &req + sent
                                                                 : (const uint8_t *) stack + (sent - sizeof(req));
                        size_t left = sent < sizeof(req) ? sizeof(req) - sent : total - sent;
                        uint64_t t = now_ns(CLOCK_MONOTONIC);

                        if (t >= until) {
                                unwind_failed(s);
                                return -ETIMEDOUT;
                        }
                        k = send(s->unwind_fd, from, left, MSG_NOSIGNAL | MSG_DONTWAIT);
                        if (k < 0 && (errno == EAGAIN || errno == EINTR)) {
                                (void) poll(&(struct pollfd) { .fd = s->unwind_fd, .events = POLLOUT }, 1,
                                            (int) ((until - t + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC));
                                continue;
                        }
                        if (k <= 0) {
                                unwind_failed(s);
                                return -EPIPE;
                        }
                        sent += (size_t) k;
                }
        }
        r = unwind_read(s, &rep, sizeof(rep), until);
        if (!s->o.recorded) {
                uint64_t spent = now_ns(CLOCK_MONOTONIC) - now;

                s->unwind_credit_ns -= spent < s->unwind_credit_ns ? spent : s->unwind_credit_ns;
        }
        if (r < 0 || rep.magic != UNWIND_MAGIC || rep.id != req.id || rep.n > UNWIND_MAX_FRAMES) {
                unwind_failed(s);
                return r < 0 ? r : -EBADMSG;
        }
        if (rep.error < 0 && rep.n == 0) {
                s->st.unwind_skipped++;
                return rep.error < -4095 ? -EIO : rep.error;
        }
        s->st.unwound++;
        for (uint32_t i = 0; i < rep.n && i < max; i++)
                ret[i] = rep.pcs[i];
        return (int) (rep.n < max ? rep.n : max);
}

void ctx_symbols_stats(const struct ctx_symbols *s, struct ctx_symbols_stats *ret) {
        *ret = s->st;
        ret->modules = 0;
        ret->procs = 0;
        for (unsigned i = 0; i < s->o.max_modules; i++)
                ret->modules += s->mods[i].tab != NULL;
        for (unsigned i = 0; i < s->o.max_procs; i++)
                ret->procs += s->procs[i].used;
}

int ctx_symbols_new(const struct ctx_symbols_opts *opts, struct ctx_symbols **ret) {
        _cleanup_(ctx_symbols_freep) struct ctx_symbols *s = calloc(1, sizeof(*s));
        const char *helper;
        int r;

        if (!s)
                return -ENOMEM;
        s->o = opts ? *opts : (struct ctx_symbols_opts) {};
        s->helper_fd = s->unwind_fd = -1;
        if (!s->o.max_modules)
                s->o.max_modules = 256;
        if (!s->o.max_bytes)
                s->o.max_bytes = UINT64_C(64) << 20;
        if (!s->o.timeout_ms) {
                const char *e = getenv("EVMON_SYMBOLIZER_TIMEOUT_MS");

                s->o.timeout_ms = e && atoi(e) > 0 ? (unsigned) atoi(e) : 2000;
        }
        if (!s->o.wait_ms)
                s->o.wait_ms = 100;
        if (!s->o.max_procs)
                s->o.max_procs = 256;
        if (!s->o.max_maps)
                s->o.max_maps = 512;
        s->proc_root = strdup(s->o.proc_root ? s->o.proc_root : "/proc");
        if (!s->o.debug_root)
                s->o.debug_root = "/usr/lib/debug";
        /* The daemon's environment is root's: the variable is for tests
         * and for a helper installed elsewhere. */
        helper = s->o.helper ?: getenv("EVMON_SYMBOLIZER");
        s->helper = strdup(helper && *helper ? helper : EVMON_SYMBOLIZER_PATH);
        s->mods = calloc(s->o.max_modules, sizeof(*s->mods));
        s->procs = calloc(s->o.max_procs, sizeof(*s->procs));
        if (!s->proc_root || !s->helper || !s->mods || !s->procs)
                return -ENOMEM;
        if (s->o.kernel) {
                r = ctx_kallsyms_load(NULL, &s->kallsyms);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(s);
        return 0;
}

struct ctx_symbols *ctx_symbols_free(struct ctx_symbols *s) {
        if (!s)
                return NULL;
        helper_stop(s);
        unwind_stop(s);
        pending_clear(s);
        if (s->mods)
                for (unsigned i = 0; i < s->o.max_modules; i++)
                        mod_clear(s, &s->mods[i]);
        if (s->procs)
                for (unsigned i = 0; i < s->o.max_procs; i++)
                        uproc_clear(&s->procs[i]);
        free(s->mods);
        free(s->procs);
        ctx_kallsyms_free(s->kallsyms);
        free(s->proc_root);
        free(s->helper);
        free(s);
        return NULL;
}
