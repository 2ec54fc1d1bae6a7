/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The process table. Every entry is one incarnation of a process: it opens
 * at the process's fork (or exec, or its first sight in /proc) and closes
 * at its exit (or its next exec), both at the kernel's record time. A
 * lookup gives the incarnation of a pid whose span holds the event's time,
 * so a reused pid never inherits an old process's context: the old one
 * was closed by its EXIT record (the kernel writes it before the pid can
 * be reused), and the new one opens only at its own FORK.
 *
 * Memory is fixed at context_new(): a pool of max_procs + max_retired
 * entries, a hash of pid chains over it, max_cgroups cgroup ids, and
 * interned strings (exe and cgroup paths, shared and refcounted) up to
 * max_string_bytes. Closed incarnations wait in a FIFO of max_retired for
 * events still in the rings, the oldest freed first. Lookups allocate
 * nothing; a fork, exec or new cgroup may allocate a string. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "evmon/context.h"
#include "evmon/parse.h"

#define OPEN_END UINT64_MAX

struct istr {
        struct istr *next;              /* hash chain */
        struct ctx_container *container;/* cgroup paths only, when the path names one */
        uint32_t ref, hash;
        size_t len;
        char s[];
};

struct pentry {
        struct ctx_proc p;
        struct istr *exe, *cgroup;
        int32_t next;                   /* pid chain, or free list */
        bool used;
};

struct cgent {
        struct ctx_cgroup cg;
        struct istr *path;
        int32_t next;
        bool used;
};

struct context {
        struct ctx_opts o;
        char *proc_root, *cgroup2_mount;
        int proc_fd;                    /* proc_root, opened by context_seed() or at first use */

        struct pentry *pool;
        uint32_t n_pool;
        int32_t free_head;
        int32_t *heads;                 /* pid hash */
        uint32_t mask;
        uint32_t *retired;              /* FIFO of closed entries */
        uint32_t ret_head, ret_n;
        uint64_t n_live;

        struct cgent *cgs;
        int32_t *cg_heads;
        uint32_t cg_mask, cg_clock, n_cg;

        struct istr **str_heads;
        uint32_t str_mask;
        uint64_t n_str, str_bytes;

        struct ctx_stats st;
        uint64_t gen;                   /* the last ctx_proc/ctx_cgroup gen given */
        uint64_t epoch;                 /* context_epoch() */
        /* Pids context_first_sight() found gone lately: their last
         * samples, still in the rings, try /proc once, not each. */
        pid_t gone[64];
        uint32_t gone_next;
};

static uint32_t pow2_at_least(uint64_t n) {
        uint32_t v = 64;

        while (v < n && v < (1u << 30))
                v <<= 1;
        return v;
}

static uint32_t hash_u64(uint64_t x) {
        /* splitmix64's finalizer */
        x ^= x >> 30;
        x *= 0xbf58476d1ce4e5b9ull;
        x ^= x >> 27;
        x *= 0x94d049bb133111ebull;
        x ^= x >> 31;
        return (uint32_t) x;
}

static uint32_t hash_bytes(const char *s, size_t n) {
        uint32_t h = 2166136261u;  /* FNV-1a */

        for (size_t i = 0; i < n; i++) {
                h ^= (uint8_t) s[i];
                h *= 16777619u;
        }
        return h;
}

/* ---- interned strings ---------------------------------------------------- */

static struct istr *str_get(struct context *c, const char *s, size_t n, bool cgroup) {
        uint32_t h = hash_bytes(s, n);
        struct istr **head = &c->str_heads[h & c->str_mask], *e;

        for (e = *head; e; e = e->next)
                if (e->hash == h && e->len == n && memcmp(e->s, s, n) == 0) {
                        e->ref++;
                        return e;
                }
        if (c->str_bytes + n + 1 > c->o.max_string_bytes) {
                c->st.full++;
                return NULL;
        }
        e = malloc(sizeof(*e) + n + 1);
        if (!e)
                return NULL;
        *e = (struct istr) { .ref = 1, .hash = h, .len = n, .next = *head };
        memcpy(e->s, s, n);
        e->s[n] = 0;
        if (cgroup) {
                struct ctx_container ct;

                if (ctx_container_parse(e->s, n, &ct) > 0) {
                        ct.serial = ++c->gen;
                        e->container = malloc(sizeof(ct));
                        if (e->container)
                                *e->container = ct;
                }
        }
        *head = e;
        c->n_str++;
        c->str_bytes += n + 1;
        return e;
}

static struct istr *str_ref(struct istr *e) {
        if (e)
                e->ref++;
        return e;
}

static void str_unref(struct context *c, struct istr *e) {
        struct istr **pp;

        if (!e || --e->ref > 0)
                return;
        for (pp = &c->str_heads[e->hash & c->str_mask]; *pp; pp = &(*pp)->next)
                if (*pp == e) {
                        *pp = e->next;
                        break;
                }
        c->n_str--;
        c->str_bytes -= e->len + 1;
        free(e->container);
        free(e);
}

static struct istr *str_of(const char *s) {
        return s ? (struct istr *) (s - offsetof(struct istr, s)) : NULL;
}

/* ---- cgroups ---------------------------------------------------------- */

static struct cgent *cg_find(const struct context *c, uint64_t id) {
        for (int32_t i = c->cg_heads[hash_u64(id) & c->cg_mask]; i >= 0; i = c->cgs[i].next)
                if (c->cgs[i].cg.id == id)
                        return &c->cgs[i];
        return NULL;
}

static void cg_unlink(struct context *c, uint32_t k) {
        struct cgent *e = &c->cgs[k];
        int32_t *pp = &c->cg_heads[hash_u64(e->cg.id) & c->cg_mask];

        while (*pp >= 0 && *pp != (int32_t) k)
                pp = &c->cgs[*pp].next;
        if (*pp == (int32_t) k)
                *pp = e->next;
        str_unref(c, e->path);
        *e = (struct cgent) { .next = -1 };
        c->n_cg--;
}

void context_cgroup(struct context *c, uint64_t id, const char *path) {
        struct cgent *e = cg_find(c, id);
        struct istr *s;
        uint32_t k;

        c->epoch++;
        if (!path || !*path)
                return;
        s = str_get(c, path, strlen(path), true);
        if (!s)
                return;
        if (!e) {
                /* The oldest id gives way: cgroup records come at mkdir, and
                 * a busy container host makes and removes many. */
                k = c->cg_clock;
                c->cg_clock = (c->cg_clock + 1) % c->o.max_cgroups;
                if (c->cgs[k].used)
                        cg_unlink(c, k);
                e = &c->cgs[k];
                e->used = true;
                e->cg.id = id;
                uint32_t b = hash_u64(id) & c->cg_mask;
                e->next = c->cg_heads[b];
                c->cg_heads[b] = (int32_t) k;
                c->n_cg++;
        } else
                str_unref(c, e->path);
        e->path = s;
        e->cg.path = s->s;
        e->cg.container = s->container;
        e->cg.gen = ++c->gen;
}

const struct ctx_cgroup *context_cgroup_lookup(struct context *c, uint64_t id) {
        struct cgent *e = id ? cg_find(c, id) : NULL;

        return e ? &e->cg : NULL;
}

/* ---- the pool and the pid hash -------------------------------------- */

static struct pentry *find(struct context *c, pid_t pid, uint64_t time) {
        for (int32_t i = c->heads[hash_u64((uint64_t) pid) & c->mask]; i >= 0; i = c->pool[i].next) {
                struct pentry *e = &c->pool[i];

                if (e->p.pid != pid)
                        continue;
                if (ctx_proc_at(&e->p, time))
                        return e;
        }
        return NULL;
}

static struct pentry *find_live(struct context *c, pid_t pid) {
        return find(c, pid, 0);
}

static void entry_free(struct context *c, struct pentry *e) {
        uint32_t k = (uint32_t) (e - c->pool);
        int32_t *pp = &c->heads[hash_u64((uint64_t) e->p.pid) & c->mask];

        while (*pp >= 0 && *pp != (int32_t) k)
                pp = &c->pool[*pp].next;
        if (*pp == (int32_t) k)
                *pp = e->next;
        str_unref(c, e->exe);
        str_unref(c, e->cgroup);
        *e = (struct pentry) { .next = c->free_head };
        c->free_head = (int32_t) k;
}

static void retire_oldest(struct context *c) {
        uint32_t k = c->retired[c->ret_head];

        c->ret_head = (c->ret_head + 1) % c->o.max_retired;
        c->ret_n--;
        entry_free(c, &c->pool[k]);
}

/* Closes live entry E at TIME; it stays findable for events before it. */
static void retire(struct context *c, struct pentry *e, uint64_t time) {
        e->p.to = time > e->p.from ? time - (time > 0) : e->p.from;
        if (time == 0 || time <= e->p.from) {
                /* No usable time: nothing can be told apart, drop it now. */
                entry_free(c, e);
                c->n_live--;
                return;
        }
        if (c->ret_n == c->o.max_retired)
                retire_oldest(c);
        c->retired[(c->ret_head + c->ret_n) % c->o.max_retired] = (uint32_t) (e - c->pool);
        c->ret_n++;
        c->n_live--;
}

static struct pentry *entry_new(struct context *c, pid_t pid, uint64_t from) {
        struct pentry *e;
        uint32_t b;

        if (c->free_head < 0 && c->ret_n > 0)
                retire_oldest(c);
        if (c->free_head < 0 || c->n_live >= c->o.max_procs) {
                c->st.full++;
                return NULL;
        }
        e = &c->pool[c->free_head];
        c->free_head = e->next;
        *e = (struct pentry) { .used = true };
        e->p.pid = pid;
        e->p.from = from;
        e->p.to = OPEN_END;
        e->p.gen = ++c->gen;
        b = hash_u64((uint64_t) pid) & c->mask;
        e->next = c->heads[b];
        c->heads[b] = (int32_t) (e - c->pool);
        c->n_live++;
        return e;
}

static void set_cgroup_str(struct context *c, struct pentry *e, struct istr *s) {
        str_unref(c, e->cgroup);
        e->cgroup = s;
        e->p.cgroup = s ? s->s : NULL;
        e->p.gen = ++c->gen;
}

static void set_exe_str(struct context *c, struct pentry *e, struct istr *s) {
        str_unref(c, e->exe);
        e->exe = s;
        e->p.exe = s ? s->s : NULL;
        e->p.gen = ++c->gen;
}

/* Copies what a child or an exec keeps of process FROM into E. */
static void inherit(struct context *c, struct pentry *e, const struct pentry *from) {
        memcpy(e->p.comm, from->p.comm, sizeof(e->p.comm));
        e->p.ppid = from->p.ppid;
        e->p.has_ppid = from->p.has_ppid;
        e->p.uid = from->p.uid;
        e->p.gid = from->p.gid;
        e->p.has_ids = from->p.has_ids;
        e->p.start_boot_ns = from->p.start_boot_ns;
        e->p.cgroup_id = from->p.cgroup_id;
        set_exe_str(c, e, str_ref(from->exe));
        set_cgroup_str(c, e, str_ref(from->cgroup));
}

/* ---- /proc ------------------------------------------------------------ */

static ssize_t read_at(int dfd, const char *name, char *buf, size_t size) {
        int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
        ssize_t n, total = 0;

        if (fd < 0)
                return -errno;
        while ((size_t) total < size - 1 && (n = read(fd, buf + total, size - 1 - (size_t) total)) > 0)
                total += n;
        close(fd);
        buf[total] = 0;
        return total;
}

/* NAME's ids, from one read of that status file: a seq_file's first read
 * gives its start whole, and Uid: and Gid: are in its first lines. */
static void read_ids(struct context *c, struct pentry *e, int dfd, const char *name) {
        char buf[4096];
        int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return;
        buf[n] = 0;
        if (ctx_parse_status(buf, (size_t) n, &e->p.uid, &e->p.gid) == 0) {
                e->p.has_ids = true;
                e->p.gen = ++c->gen;
        }
}

static int seed_one(struct context *c, int proc_fd, pid_t pid, uint64_t from, struct pentry **ret) {
        char name[16], buf[4096];
        struct ctx_proc_stat st;
        struct pentry *e, *old;
        ssize_t n;
        int dfd;

        snprintf(name, sizeof(name), "%d", (int) pid);
        dfd = openat(proc_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return errno == ENOENT ? -ESRCH : -errno;
        n = read_at(dfd, "stat", buf, sizeof(buf));
        if (n <= 0 || ctx_parse_stat(buf, (size_t) n, &st) < 0 || st.pid != pid) {
                close(dfd);
                return -ESRCH;
        }
        old = find_live(c, pid);
        if (old)
                retire(c, old, from);
        e = entry_new(c, pid, from);
        if (!e) {
                close(dfd);
                return -ENOSPC;
        }
        memcpy(e->p.comm, st.comm, sizeof(st.comm));
        e->p.ppid = st.ppid;
        e->p.has_ppid = true;
        {
                long hz = sysconf(_SC_CLK_TCK);
                e->p.start_boot_ns = hz > 0 ? st.start_ticks * (1000000000ull / (uint64_t) hz) : 0;
        }
        read_ids(c, e, dfd, "status");
        n = readlinkat(dfd, "exe", buf, sizeof(buf) - 1);
        if (n > 0) {
                /* A deleted executable reads "PATH (deleted)": it is still
                 * that path's program. */
                set_exe_str(c, e, str_get(c, buf, (size_t) n, false));
        }
        n = read_at(dfd, "cgroup", buf, sizeof(buf));
        if (n > 0) {
                char path[PATH_MAX];

                if (ctx_parse_cgroup(buf, (size_t) n, path, sizeof(path)) == 0)
                        set_cgroup_str(c, e, str_get(c, path, strlen(path), true));
        }
        close(dfd);
        if (ret)
                *ret = e;
        return 0;
}

/* proc_root's fd, kept: an exec would otherwise open it again. */
static int open_proc(struct context *c) {
        if (c->proc_fd < 0)
                c->proc_fd = open(c->proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return c->proc_fd < 0 ? -errno : c->proc_fd;
}

int context_seed_pid(struct context *c, pid_t pid, uint64_t from) {
        int fd = open_proc(c);

        c->epoch++;
        if (fd < 0)
                return fd;
        return seed_one(c, fd, pid, from, NULL);
}

static struct context *walk_ctx;

static int walk_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        struct {
                struct file_handle fh;
                uint64_t id;
        } h = { .fh.handle_bytes = sizeof(uint64_t) };
        struct context *c = walk_ctx;
        size_t n = strlen(c->cgroup2_mount);
        int mnt;
        uint64_t id;

        if (flag != FTW_D)
                return 0;
        if (c->n_cg >= c->o.max_cgroups)
                return 1;
        /* A cgroup2 directory's file handle is its kernfs id, the one
         * PERF_SAMPLE_CGROUP and PERF_RECORD_CGROUP carry. */
        if (name_to_handle_at(AT_FDCWD, path, &h.fh, &mnt, 0) < 0 || h.fh.handle_bytes != sizeof(uint64_t))
                return 0;
        memcpy(&id, h.fh.f_handle, sizeof(id));
        context_cgroup(c, id, path[n] ? path + n : "/");
        return 0;
}

int context_seed(struct context *c) {
        DIR *d;
        struct dirent *de;
        int n = 0;

        c->epoch++;
        /* Opened now, at evmond's start, not at the first exec: a count
         * of evmond's fds then stays what it was. */
        (void) open_proc(c);
        if (c->cgroup2_mount) {
                walk_ctx = c;
                (void) nftw(c->cgroup2_mount, walk_one, 16, FTW_PHYS | FTW_MOUNT);
                walk_ctx = NULL;
        }
        d = opendir(c->proc_root);
        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                pid_t pid;

                if (parse_pid(de->d_name, &pid) < 0)
                        continue;
                if (find_live(c, (pid_t) pid))
                        continue;  /* a record got there first */
                if (seed_one(c, dirfd(d), (pid_t) pid, 0, NULL) == 0)
                        n++;
        }
        closedir(d);
        return n;
}

/* ---- records ------------------------------------------------------------ */

void context_fork(struct context *c, pid_t pid, pid_t ppid, pid_t tid, uint64_t time) {
        struct pentry *parent, *old, *e;

        if (pid == ppid || pid != tid)
                return;  /* a new thread of a known process */
        c->epoch++;
        c->st.forks++;
        parent = find(c, ppid, time);
        old = find_live(c, pid);
        if (old && time && old->p.from >= time) {
                /* The rings are read one CPU after another: the child's
                 * exec, on another CPU, may come before its fork. It is
                 * already known, and newer than this news. */
                if (!old->p.has_ppid) {
                        old->p.ppid = ppid;
                        old->p.has_ppid = true;
                        old->p.gen = ++c->gen;
                }
                return;
        }
        if (old)
                retire(c, old, time);  /* its EXIT was lost: it cannot outlive its pid's reuse */
        if (!parent) {
                /* Parent unknown (table full, or gone before we looked):
                 * first sight through /proc. */
                (void) context_seed_pid(c, pid, time);
                return;
        }
        e = entry_new(c, pid, time);
        if (!e)
                return;
        inherit(c, e, parent);
        e->p.ppid = ppid;
        e->p.has_ppid = true;
        e->p.start_boot_ns = 0;
}

void context_exit(struct context *c, pid_t pid, pid_t tid, uint64_t time) {
        struct pentry *e;

        if (pid != tid)
                return;  /* a thread */
        c->epoch++;
        c->st.exits++;
        e = find_live(c, pid);
        if (e && (time == 0 || time >= e->p.from))
                retire(c, e, time + 1);
}

void context_comm(struct context *c, pid_t pid, pid_t tid, const char *comm, bool exec, uint64_t time) {
        struct pentry *e = find_live(c, pid), *n;
        size_t len;

        c->st.comms++;
        if (!comm)
                return;
        len = strnlen(comm, sizeof(e->p.comm) - 1);
        if (!exec) {
                /* A rename: the process's name is its leader's. */
                if (e && pid == tid) {
                        c->epoch++;
                        memcpy(e->p.comm, comm, len);
                        e->p.comm[len] = 0;
                        e->p.gen = ++c->gen;
                }
                return;
        }
        c->st.execs++;
        c->epoch++;
        if (!e) {
                if (context_seed_pid(c, pid, time) < 0)
                        return;
                e = find_live(c, pid);
                if (!e)
                        return;
                memcpy(e->p.comm, comm, len);
                e->p.comm[len] = 0;
                set_exe_str(c, e, NULL);  /* and a new gen */  /* until the exec tracepoint names it */
                return;
        }
        if (time == 0 || time <= e->p.from) {
                memcpy(e->p.comm, comm, len);
                e->p.comm[len] = 0;
                set_exe_str(c, e, NULL);  /* and a new gen */
                return;
        }
        /* A new incarnation: events before the exec keep the old program. */
        n = entry_new(c, pid, time);
        if (n) {
                inherit(c, n, e);
                set_exe_str(c, n, NULL);  /* until the exec tracepoint names it */
                memcpy(n->p.comm, comm, len);
                n->p.comm[len] = 0;
        }
        retire(c, e, time);
}

void context_exec(struct context *c, pid_t pid, const char *filename, size_t len, uint64_t time) {
        struct pentry *e = find(c, pid, time);
        char name[32], buf[PATH_MAX];
        int proc_fd;

        c->epoch++;
        if (!e || !filename || len == 0)
                return;
        len = strnlen(filename, len);
        /* The same exec told twice (a served exec event and ours). */
        if (e->exe && e->exe->len == len && memcmp(e->exe->s, filename, len) == 0)
                return;
        proc_fd = open_proc(c);
        if (filename[0] == '/')
                set_exe_str(c, e, str_get(c, filename, len, false));
        else if (proc_fd >= 0) {
                /* execve() got a relative name: /proc/PID/exe says where
                 * it was, if it still ends in that name (a later exec may
                 * have changed it). */
                snprintf(name, sizeof(name), "%d/exe", (int) pid);
                ssize_t n = readlinkat(proc_fd, name, buf, sizeof(buf) - 1);
                const char *base = memrchr(filename, '/', len);

                base = base ? base + 1 : filename;
                size_t bn = (size_t) (filename + len - base);
                if (n > 0 && (size_t) n > bn && memcmp(buf + n - bn, base, bn) == 0 && buf[n - bn - 1] == '/')
                        set_exe_str(c, e, str_get(c, buf, (size_t) n, false));
        }
        /* A program that called setuid() before its exec (login, su,
         * sshd) has new real ids. */
        if (proc_fd >= 0 && e->p.to == OPEN_END) {
                snprintf(name, sizeof(name), "%d/status", (int) pid);
                read_ids(c, e, proc_fd, name);
        }
}

void context_record(struct context *c, const struct perf_record *r) {
        uint64_t t = r->has_sid ? r->sid.time : 0;

        switch (r->type) {
        case PERF_RECORD_FORK:
                context_fork(c, (pid_t) r->task.pid, (pid_t) r->task.ppid, (pid_t) r->task.tid,
                             r->task.time ? r->task.time : t);
                break;
        case PERF_RECORD_EXIT:
                context_exit(c, (pid_t) r->task.pid, (pid_t) r->task.tid, r->task.time ? r->task.time : t);
                break;
        case PERF_RECORD_COMM:
                context_comm(c, (pid_t) r->comm.pid, (pid_t) r->comm.tid, r->comm.comm,
                             r->misc & PERF_RECORD_MISC_COMM_EXEC, t);
                break;
        case PERF_RECORD_CGROUP:
                context_cgroup(c, r->cgroup.id, r->cgroup.path);
                break;
        default:
                break;
        }
}

/* ---- lookups ------------------------------------------------------------ */

uint64_t context_epoch(const struct context *c) {
        return c->epoch;
}

void context_count_hits(struct context *c, unsigned n) {
        c->st.hits += n;
}

const struct ctx_proc *context_lookup(struct context *c, pid_t pid, uint64_t time) {
        struct pentry *e = find(c, pid, time);

        if (!e) {
                c->st.misses++;
                return NULL;
        }
        c->st.hits++;
        return &e->p;
}

const struct ctx_proc *context_first_sight(struct context *c, pid_t pid, uint64_t time) {
        struct pentry *e;
        int r;

        if (pid <= 0)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(c->gone); i++)
                if (c->gone[i] == pid)
                        return NULL;
        e = find_live(c, pid);
        if (e)
                /* Read from /proc at its first sight, on another CPU's
                 * later sample: the same process. One its FORK opened
                 * (start_boot_ns 0) is not, for a sample before it: that
                 * is the pid's last user. */
                return e->p.start_boot_ns ? &e->p : NULL;
        r = context_seed_pid(c, pid, time);
        if (r < 0) {
                c->gone[c->gone_next++ % ELEMENTSOF(c->gone)] = pid;
                return NULL;
        }
        c->st.first_sight++;
        e = find_live(c, pid);
        return e ? &e->p : NULL;
}

const struct ctx_container *context_proc_container(struct context *c, const struct ctx_proc *p) {
        struct istr *s = p ? str_of(p->cgroup) : NULL;

        return s ? s->container : NULL;
}

void context_note_cgroup(struct context *c, const struct ctx_proc *p, uint64_t id) {
        struct pentry *e;
        struct cgent *g;

        if (!p || !id || p->cgroup_id == id)
                return;
        c->epoch++;
        e = (struct pentry *) ((char *) p - offsetof(struct pentry, p));
        g = cg_find(c, id);
        e->p.cgroup_id = id;
        e->p.gen = ++c->gen;
        if (g)
                set_cgroup_str(c, e, str_ref(g->path));
}

void context_stats(const struct context *c, struct ctx_stats *ret) {
        *ret = c->st;
        ret->procs = c->n_live;
        ret->retired = c->ret_n;
        ret->cgroups = c->n_cg;
        ret->strings = c->n_str;
        ret->string_bytes = c->str_bytes;
        /* Each string is one interned copy, referenced by at most two
         * entries (exe, cgroup) or a cgroup id; cgroup strings may carry
         * a container. */
        ret->bound_bytes = (size_t) c->n_pool * sizeof(struct pentry) + (c->mask + 1) * sizeof(int32_t) +
                           c->o.max_retired * sizeof(uint32_t) +
                           c->o.max_cgroups * (sizeof(struct cgent) + sizeof(int32_t) * 2) +
                           (c->str_mask + 1) * sizeof(void *) + c->o.max_string_bytes +
                           ((size_t) c->n_pool * 2 + c->o.max_cgroups) *
                                   (sizeof(struct istr) + 16 /* malloc overhead */) +
                           ((size_t) c->n_pool + c->o.max_cgroups) * (sizeof(struct ctx_container) + 16);
}

/* ---- life ------------------------------------------------------------------ */

int context_new(const struct ctx_opts *opts, struct context **ret) {
        _cleanup_(context_freep) struct context *c = calloc(1, sizeof(*c));

        if (!c)
                return -ENOMEM;
        c->proc_fd = -1;
        c->o = opts ? *opts : (struct ctx_opts) {};
        if (!c->o.max_procs)
                c->o.max_procs = 32768;
        if (!c->o.max_retired)
                c->o.max_retired = 4096;
        if (!c->o.max_cgroups)
                c->o.max_cgroups = 8192;
        if (!c->o.max_string_bytes)
                c->o.max_string_bytes = 16u << 20;
        if (c->o.max_procs > (1u << 24) || c->o.max_retired > (1u << 24) || c->o.max_cgroups > (1u << 24))
                return -EINVAL;
        c->proc_root = strdup(c->o.proc_root ? c->o.proc_root : "/proc");
        if (!c->proc_root)
                return -ENOMEM;
        if (c->o.cgroup2_mount) {
                c->cgroup2_mount = strdup(c->o.cgroup2_mount);
                if (!c->cgroup2_mount)
                        return -ENOMEM;
                /* No trailing '/', so a walked path minus the mount is "/..." */
                for (size_t k = strlen(c->cgroup2_mount); k > 1 && c->cgroup2_mount[k - 1] == '/'; k--)
                        c->cgroup2_mount[k - 1] = 0;
        }
        c->o.proc_root = c->proc_root;
        c->o.cgroup2_mount = c->cgroup2_mount;

        c->n_pool = c->o.max_procs + c->o.max_retired;
        c->pool = calloc(c->n_pool, sizeof(*c->pool));
        c->mask = pow2_at_least(c->n_pool) - 1;
        c->heads = malloc((c->mask + 1) * sizeof(int32_t));
        c->retired = calloc(c->o.max_retired, sizeof(uint32_t));
        c->cgs = calloc(c->o.max_cgroups, sizeof(*c->cgs));
        c->cg_mask = pow2_at_least(c->o.max_cgroups) - 1;
        c->cg_heads = malloc((c->cg_mask + 1) * sizeof(int32_t));
        c->str_mask = pow2_at_least(c->n_pool) - 1;
        c->str_heads = calloc(c->str_mask + 1, sizeof(*c->str_heads));
        if (!c->pool || !c->heads || !c->retired || !c->cgs || !c->cg_heads || !c->str_heads)
                return -ENOMEM;
        memset(c->heads, 0xff, (c->mask + 1) * sizeof(int32_t));
        memset(c->cg_heads, 0xff, (c->cg_mask + 1) * sizeof(int32_t));
        for (uint32_t i = 0; i < c->n_pool; i++)
                c->pool[i].next = i + 1 < c->n_pool ? (int32_t) i + 1 : -1;
        c->free_head = 0;
        for (uint32_t i = 0; i < c->o.max_cgroups; i++)
                c->cgs[i].next = -1;
        *ret = TAKE_PTR(c);
        return 0;
}

struct context *context_free(struct context *c) {
        if (!c)
                return NULL;
        if (c->pool)
                for (uint32_t i = 0; i < c->n_pool; i++)
                        if (c->pool[i].used) {
                                str_unref(c, c->pool[i].exe);
                                str_unref(c, c->pool[i].cgroup);
                        }
        if (c->cgs)
                for (uint32_t i = 0; i < c->o.max_cgroups; i++)
                        if (c->cgs[i].used)
                                str_unref(c, c->cgs[i].path);
        free(c->pool);
        free(c->heads);
        free(c->retired);
        free(c->cgs);
        free(c->cg_heads);
        free(c->str_heads);
        if (c->proc_fd >= 0)
                close(c->proc_fd);
        free(c->proc_root);
        free(c->cgroup2_mount);
        free(c);
        return NULL;
}
