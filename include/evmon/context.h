/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* src/context/: who and where an event comes from. The process table kept
 * from the kernel's own records (FORK, EXIT, COMM with COMM_EXEC, CGROUP)
 * and the exec tracepoint's filename, seeded from /proc; cgroup id → path
 * → container id; callchain symbolization (kallsyms; ELF files in a sandboxed helper). Knows
 * nothing of sockets, config files or JSON. Functions return 0 (or a
 * count) on success and -errno on failure; none prints. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "evmon/cleanup.h"
#include "evmon/monitor.h"

/* ---- container.c: cgroup path → container id ------------------------- */

enum ctx_runtime {
        CTX_RUNTIME_NONE,
        CTX_RUNTIME_DOCKER,
        CTX_RUNTIME_CONTAINERD,
        CTX_RUNTIME_CRIO,
        CTX_RUNTIME_PODMAN,
        CTX_RUNTIME_NSPAWN,
        CTX_RUNTIME_LXC,
        CTX_RUNTIME_KUBERNETES,   /* a 64-hex id under a pod of unknown runtime */
};

#define CTX_CONTAINER_ID_MAX 256  /* machine names are at most 255 bytes */
#define CTX_POD_UID_MAX 37        /* 8-4-4-4-12 and NUL */

struct ctx_container {
        enum ctx_runtime runtime;
        char id[CTX_CONTAINER_ID_MAX];  /* 64 hex digits, or the machine / LXC name */
        char pod[CTX_POD_UID_MAX];      /* Kubernetes pod uid with dashes, or "" */
        /* Rootless: named under user@UID.service, the subtree systemd
         * delegates to UID, so the id is as UID says; else uid is -1. */
        bool rootless;
        uid_t uid;
        /* Given by the process table to each it keeps, never twice (0
         * from ctx_container_parse()): lets ctx_runstate_lookup() know it
         * by its address alone. */
        uint64_t serial;
};

/* Parses a cgroup path (as /proc/PID/cgroup or a CGROUP record gives it,
 * "/system.slice/docker-<id>.scope") into the container it names, taken
 * only from the places the runtimes put them: docker ("/docker/<id>",
 * "/system.slice/docker-<id>.scope"), the kubelet's pods ("/kubepods/..."
 * and "/kubepods.slice/..." with containerd, CRI-O or docker ids, and the
 * pod uid), podman ("/machine.slice/libpod-<id>.scope", in a pod's slice,
 * "/libpod_parent/..."), systemd-nspawn and machined's machines under
 * "/machine.slice", LXC/LXD ("/lxc.payload.NAME", "/lxc/NAME"); a runtime
 * inside a container names nothing (the outermost wins: below its cgroup
 * the container's root, maybe no root on the host, says). Rootless
 * podman and docker ids anywhere below "/user.slice/user-UID.slice/
 * user@UID.service" are marked rootless with that uid. A layout anywhere
 * else (a user's delegated subtree) names none. Returns 1 and fills *RET
 * when the path names a container or a pod, 0 (RET->runtime NONE, empty
 * strings) when it names none. Never guesses: conmon and LXC monitor
 * cgroups are not containers. */
int ctx_container_parse(const char *path, size_t len, struct ctx_container *ret);
const char *ctx_runtime_to_string(enum ctx_runtime r);

/* ---- runstate.c: what the runtime says of a container ------------------ */

/* A container as its runtime's state on the host describes it. Strings
 * are NULL when not known (and all are when not verified); valid until
 * the next ctx_runstate_lookup(). */
struct ctx_runstate_info {
        uint64_t gen;                   /* changes with anything below, never repeats: a cache key */
        bool verified;                  /* the runtime's state names this id (and pod) */
        const char *name;               /* the runtime's name for it (docker's, podman's, the machine's) */
        const char *image;              /* the image as asked for ("nginx:1.25", "quay.io/x/y:tag") */
        const char *image_id;           /* the image's id or digest where the runtime keeps it */
        const char *pod_name, *pod_namespace, *pod_uid;
        const char *pod_container;      /* the container's name in its pod */
};

struct ctx_runstate_opts {
        const char *root;               /* the host's "/" (NULL: $EVMON_TEST_RUNTIME_ROOT for tests, else "/") */
        unsigned max_containers;        /* entries kept (default 4096), least recently used go */
        uint64_t recheck_ns;            /* a state file is looked at again after this; 0: on every
                                         * lookup (tests); UINT64_MAX or no opts: 1 s */
        bool no_openat2;                /* tests: walk one O_NOFOLLOW component at a time, as before Linux 5.6 */
};

struct ctx_runstate;

/* The cache of runtime states, bounded. Caller owns *RET. 0 or -errno
 * (the root cannot be opened). */
int ctx_runstate_new(const struct ctx_runstate_opts *opts, struct ctx_runstate **ret);
struct ctx_runstate *ctx_runstate_free(struct ctx_runstate *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct ctx_runstate *, ctx_runstate_free);

/* What CT's runtime says of it: read once (docker's config.v2.json,
 * containerd's and CRI-O's OCI bundle config.json, containers/storage's
 * containers.json for podman, machined's /run/systemd/machines/NAME,
 * LXC's config), then again only when the file changed (inode, mtime,
 * size), looked at once a second at most. A rootless container's id, or
 * one whose state is absent, refused (not a regular file of root's, too
 * large, a link on the way) or does not name it (another id, another
 * pod) is not verified. NULL when CT has no id. No allocation or syscall
 * unless a state file is due. */
const struct ctx_runstate_info *ctx_runstate_lookup(struct ctx_runstate *s, const struct ctx_container *ct);

/* The pure core of ctx_runstate_lookup(), for tests and the fuzz target:
 * what runtime RT's state file BUF (LEN bytes, NUL-terminated after them)
 * says of container ID, in the cgroup of pod POD ("" outside a pod).
 * Fills *RET (its gen 0), its strings in one allocation into
 * *RET_STRINGS (freed first; the caller frees it). 1 when the state names
 * ID (and POD), 0 when not, -ENOMEM. */
int ctx_runstate_parse(enum ctx_runtime rt, const char *id, const char *pod, const char *buf, size_t len,
                       struct ctx_runstate_info *ret, char **ret_strings);

struct ctx_runstate_stats {
        uint64_t known, verified, unverified;   /* containers in the cache now */
        uint64_t reads, refused, evicted;
        uint64_t deferred;                      /* reads put off: the second's budget was spent */
};
void ctx_runstate_stats(const struct ctx_runstate *s, struct ctx_runstate_stats *ret);

/* ---- procfs.c: /proc parsers on text (pure, fuzzed) -------------------- */

struct ctx_proc_stat {
        pid_t pid, ppid;
        char comm[16];
        uint64_t start_ticks;   /* field 22, clock ticks after boot */
};

/* /proc/PID/stat text: "pid (comm) state ppid ...". The comm may hold
 * spaces and parentheses (the last ')' ends it). -EINVAL when malformed. */
int ctx_parse_stat(const char *text, size_t len, struct ctx_proc_stat *ret);
/* /proc/PID/status text: the real uid and gid. -ENOENT when absent. */
int ctx_parse_status(const char *text, size_t len, uid_t *ret_uid, gid_t *ret_gid);
/* /proc/PID/cgroup text: the cgroup v2 path ("0::/path"), written into
 * BUF of SIZE bytes; without a v2 line, the name=systemd v1 path. -ENOENT
 * when neither is there, -ENAMETOOLONG when it does not fit. */
int ctx_parse_cgroup(const char *text, size_t len, char *buf, size_t size);

struct ctx_map {
        uint64_t start, end, pgoff;
        uint64_t dev, ino;              /* makedev(major, minor) */
        bool exec;
        const char *path;               /* points into the text, PATH_LEN bytes */
        size_t path_len;
};

/* Calls FN for each line of /proc/PID/maps text that parses; returns the
 * number of lines given to FN, or FN's negative return. */
typedef int (*ctx_map_fn)(const struct ctx_map *m, void *userdata);
int ctx_parse_maps(const char *text, size_t len, ctx_map_fn fn, void *userdata);

/* ---- proctab.c: the process table ---------------------------------- */

/* A process incarnation: from its fork (or exec, or first sight in /proc)
 * to its exit (or next exec). Read-only to callers; valid until the next
 * call that changes the table. Strings are NULL when not known. */
struct ctx_proc {
        pid_t pid, ppid;
        uid_t uid;
        gid_t gid;
        bool has_ppid, has_ids;
        uint64_t from, to;              /* perf clock ns: this incarnation's span (0 and UINT64_MAX open) */
        uint64_t start_boot_ns;         /* start time after boot (/proc), 0 when not known */
        char comm[16];
        const char *exe;
        const char *cgroup;             /* path relative to the cgroup2 root */
        uint64_t cgroup_id;             /* 0 when not known */
        uint64_t gen;                   /* changes with anything above, never repeats: a cache key */
};

/* Whether P is the incarnation its pid had at TIME (0: the live one). */
static inline bool ctx_proc_at(const struct ctx_proc *p, uint64_t time) {
        return time == 0 ? p->to == UINT64_MAX : p->from <= time && time <= p->to;
}

struct ctx_cgroup {
        uint64_t gen;                   /* as ctx_proc's */
        uint64_t id;
        const char *path;
        const struct ctx_container *container;  /* NULL when the path names none */
};

struct ctx_opts {
        unsigned max_procs;             /* live incarnations (default 32768) */
        unsigned max_retired;           /* ended ones kept for late events (default 4096) */
        unsigned max_cgroups;           /* cgroup ids (default 8192) */
        size_t max_string_bytes;        /* exe and cgroup paths, interned (default 16 MiB) */
        const char *proc_root;          /* "/proc" when NULL */
        const char *cgroup2_mount;      /* NULL: no cgroup ids (v1 paths only) */
};

struct ctx_stats {
        uint64_t procs, retired, cgroups, strings, string_bytes;
        uint64_t hits, misses;          /* ctx_lookup() */
        uint64_t first_sight;           /* processes read from /proc at a sample: no FORK seen */
        uint64_t full;                  /* processes not tracked: pool full */
        uint64_t forks, execs, exits, comms;
        size_t bound_bytes;             /* what the table may grow to, at most */
};

struct context;

int context_new(const struct ctx_opts *opts, struct context **ret);
struct context *context_free(struct context *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct context *, context_free);

/* Seeds the table from /proc (every process, open from the start of
 * time) and the cgroup ids from a walk of the cgroup2 mount. Call after
 * the records that keep it current are enabled, so nothing falls in
 * between. Returns the number of processes read. */
int context_seed(struct context *c);

/* Reads one process from /proc now (first sight) into a new incarnation
 * open from FROM. -ESRCH when it is gone. */
int context_seed_pid(struct context *c, pid_t pid, uint64_t from);

/* Kernel records: FORK, EXIT, COMM (COMM_EXEC in misc), CGROUP. Times are
 * the record's sample_id time (0 when it has none). Other types are
 * ignored. */
void context_record(struct context *c, const struct perf_record *r);
void context_fork(struct context *c, pid_t pid, pid_t ppid, pid_t tid, uint64_t time);
void context_exit(struct context *c, pid_t pid, pid_t tid, uint64_t time);
void context_comm(struct context *c, pid_t pid, pid_t tid, const char *comm, bool exec, uint64_t time);
void context_cgroup(struct context *c, uint64_t id, const char *path);
/* The exec tracepoint: FILENAME as execve() got it. A relative name is
 * resolved through /proc/PID/exe when that still ends in it, else left
 * out. Re-reads uid and gid (set-id programs) when the process is there. */
void context_exec(struct context *c, pid_t pid, const char *filename, size_t len, uint64_t time);

/* The incarnation of process PID (a tgid: threads share it) at TIME (0:
 * the live one), or NULL (counted as a miss). No allocation, no syscall. */
const struct ctx_proc *context_lookup(struct context *c, pid_t pid, uint64_t time);
/* Changes with every call that may change what a lookup gives (a seed,
 * a record, a first sight, a cgroup noted): while it stays, a lookup of
 * the same pid at a time within the incarnation found gives that one
 * again, and a cgroup's lookup the same cgroup. */
uint64_t context_epoch(const struct context *c);
/* Counts N lookups answered from a caller's memo as hits in the stats. */
void context_count_hits(struct context *c, unsigned n);
/* After context_lookup() missed PID at TIME: the process as /proc has it
 * now, kept from TIME on, for a process whose FORK the records did not
 * bring (one moved into a target cgroup after it forked, or a table that
 * was full). A syscall or four, once per such process; a pid found gone
 * is not tried again until 64 others were. NULL when gone. */
const struct ctx_proc *context_first_sight(struct context *c, pid_t pid, uint64_t time);
/* The cgroup of id ID, or NULL. No allocation. */
const struct ctx_cgroup *context_cgroup_lookup(struct context *c, uint64_t id);
/* The container of a process's cgroup path (interned by the table), or
 * NULL. */
const struct ctx_container *context_proc_container(struct context *c, const struct ctx_proc *p);
/* Notes that P was seen in cgroup ID (a sample's PERF_SAMPLE_CGROUP). */
void context_note_cgroup(struct context *c, const struct ctx_proc *p, uint64_t id);

void context_stats(const struct context *c, struct ctx_stats *ret);

/* ---- kallsyms.c / symbols.c: callchain frames → names ----------------- */

struct ctx_kallsyms;

/* Parses /proc/kallsyms text (text symbols only, sorted). -ENOENT when it
 * has none with a non-zero address (kptr_restrict). Caller owns *ret. */
int ctx_kallsyms_parse(const char *text, size_t len, struct ctx_kallsyms **ret);
int ctx_kallsyms_load(const char *path, struct ctx_kallsyms **ret);
struct ctx_kallsyms *ctx_kallsyms_free(struct ctx_kallsyms *k);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct ctx_kallsyms *, ctx_kallsyms_free);
size_t ctx_kallsyms_count(const struct ctx_kallsyms *k);

struct ctx_frame {
        const char *sym;                /* NULL when not known */
        uint64_t off;                   /* ip - symbol start */
        const char *module;             /* "[kernel.kallsyms]", "[ext4]", a file path; NULL when not known */
        const char *note;               /* why SYM is NULL when the symbolizer lost it (a static string) */
};

/* Names kernel address IP. Returns 0 and fills *RET, -ENOENT. */
int ctx_kallsyms_lookup(const struct ctx_kallsyms *k, uint64_t ip, struct ctx_frame *ret);

/* ---- symtab.c: an ELF file's load segments and function symbols ------- */

/* What the sandboxed symbolizer (evmon-symbolizer) sends back for one
 * file, and what the daemon's cache keeps: the file at its link addresses,
 * so a frame's file offset maps through SEGS to an address in SYMS. */
#define CTX_SYMTAB_MAX_SEGS 16
#define CTX_SYMTAB_TRUNCATED  (1u << 0)   /* more symbols or names than the limits */
#define CTX_SYMTAB_DEBUGDATA  (1u << 1)   /* .gnu_debugdata not read: too large or bad */
#define CTX_SYMTAB_NO_SYMTAB  (1u << 2)   /* no .symtab of its own: a separate debug file may name more */
#define CTX_SYMTAB_DEBUGFILE  (1u << 3)   /* the names are a separate debug file's (by build id) */
#define CTX_SYMTAB_MAX_BUILD_ID 20

struct ctx_symtab_seg {
        uint64_t offset, filesz, vaddr;
};

struct ctx_symtab_sym {
        uint64_t addr, size;
        uint32_t name;                  /* offset in names */
        uint32_t reserved;
};

struct ctx_symtab {
        uint32_t flags, n_segs;
        struct ctx_symtab_seg segs[CTX_SYMTAB_MAX_SEGS];
        uint8_t build_id[CTX_SYMTAB_MAX_BUILD_ID];      /* NT_GNU_BUILD_ID, its first 20 bytes */
        uint32_t build_id_len;                          /* 0: none */
        uint64_t n_syms, names_len;
        struct ctx_symtab_sym *syms;    /* sorted by addr, one per addr */
        char *names;                    /* NUL-terminated names, packed */
};

struct ctx_symtab_limits {
        uint64_t max_syms;              /* default 1 M */
        uint64_t max_names;             /* bytes, default 32 MiB */
        uint64_t max_debugdata;         /* bytes of decompressed .gnu_debugdata, default 64 MiB */
};

/* Reads the ELF file at FD (or, with FD < 0, the SIZE bytes at DATA): its
 * PT_LOAD segments, its build id and its function symbols from .symtab,
 * else .dynsym and the .symtab of the xz-compressed .gnu_debugdata
 * (minidebuginfo; CTX_SYMTAB_NO_SYMTAB). No other file is opened: the
 * caller finds a separate debug file by the build id (symbols.c). Of
 * aliases (one address) the largest is kept. Untrusted
 * input: meant to run in the sandboxed helper, and fuzzed. Caller owns
 * *ret. -ENOEXEC for no ELF or no PT_LOAD. */
int ctx_symtab_read(int fd, const void *data, size_t size, const struct ctx_symtab_limits *lim,
                    struct ctx_symtab **ret);
struct ctx_symtab *ctx_symtab_free(struct ctx_symtab *t);
/* libelf's set-up, for a caller that must do it before a sandbox. */
int ctx_symtab_init(void);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct ctx_symtab *, ctx_symtab_free);
/* Checks a table that came from outside (the helper): sorted, one symbol
 * per address (a lookup is one binary search), every name
 * inside NAMES, NAMES ending in a NUL. 0 or -EBADMSG. */
int ctx_symtab_check(const struct ctx_symtab *t);
/* The function holding ADDR (the last one starting at or below it, if
 * ADDR is inside its size; a size of 0 reaches to the next), or NULL. */
const struct ctx_symtab_sym *ctx_symtab_find(const struct ctx_symtab *t, uint64_t addr);
/* The bytes T holds (what the daemon's cache counts). */
size_t ctx_symtab_bytes(const struct ctx_symtab *t);

/* ---- symbols.c: frames → names through the sandboxed helper ------------ */

struct ctx_symbols;

struct ctx_symbols_opts {
        unsigned max_modules;           /* ELF files' tables kept (default 256) */
        uint64_t max_bytes;             /* bytes those tables may hold (default 64 MiB) */
        const char *helper;             /* evmon-symbolizer's path; $EVMON_SYMBOLIZER, else the installed one */
        unsigned timeout_ms;            /* the helper is killed past this per file; $EVMON_SYMBOLIZER_TIMEOUT_MS,
                                         * else 2000 */
        unsigned wait_ms;               /* a frame waits for its file's table at most this (default 100);
                                         * its file's frames meanwhile are "symbols pending" */
        unsigned max_procs;             /* processes whose maps are kept (default 256) */
        unsigned max_maps;              /* executable mappings per process (default 512) */
        const char *proc_root;          /* "/proc" when NULL */
        /* Where separate debug files are found by build id (DIR/.build-id/
         * xx/yyyy.debug) for files without a .symtab of their own;
         * "/usr/lib/debug" when NULL, "" for none. The caller's string. */
        const char *debug_root;
        bool kernel;                    /* load /proc/kallsyms */
        /* A recorded file's processes (evmonctl decode), not this
         * machine's running ones: mappings from ctx_symbols_mmap() and
         * ctx_symbols_fork() only, no /proc; each mapped file at its path
         * here, taken only where its device and inode are the recorded
         * ones; and each file's table waited for (up to timeout_ms), as a
         * batch job may, rather than "symbols pending". */
        bool recorded;
};

int ctx_symbols_new(const struct ctx_symbols_opts *opts, struct ctx_symbols **ret);
struct ctx_symbols *ctx_symbols_free(struct ctx_symbols *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct ctx_symbols *, ctx_symbols_free);

/* Names the frames of callchain IPS (NR entries, PERF_CONTEXT_* markers
 * included: their frames are left empty) of process PID into RET (NR
 * entries). User frames go through the process's mappings (MMAP2 records
 * given to ctx_symbols_mmap(), else /proc/PID/maps read once per process)
 * and the mapped files' symbol tables, which the sandboxed helper reads
 * (ctx_symtab_read(): .symtab, .dynsym, minidebuginfo; for a file without
 * a .symtab, its debug file under opts.debug_root by build id). A file the helper could not read in time has no names and its
 * frames a note. Strings stay valid until the next call. Returns the
 * number of frames named. */
int ctx_symbols_resolve(struct ctx_symbols *s, pid_t pid, const uint64_t *ips, uint64_t nr,
                        struct ctx_frame *ret);
/* An executable MMAP2 record of PID; exec (COMM_EXEC) and exit forget a
 * process's mappings with ctx_symbols_forget(). */
void ctx_symbols_mmap(struct ctx_symbols *s, pid_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
                      uint64_t dev, uint64_t ino, const char *path);
void ctx_symbols_forget(struct ctx_symbols *s, pid_t pid);
/* Unwinds process PID's user stack with DWARF CFI (libdw, in the
 * sandboxed helper started with --unwind), as perf --call-graph dwarf
 * does: from the registers a sample copied (REGS, one per bit of MASK,
 * perf's x86_64 numbering; ax..r15 and ip must be there) and STACK_LEN
 * bytes of its stack from sp on, through the process's executable
 * mappings' files. Into RET the sampled ip, then each caller's pc (its
 * return address less one), MAX at most; returns how many, or -errno
 * (-EAGAIN while the helper restarts, -ETIMEDOUT past wait_ms). */
int ctx_symbols_unwind(struct ctx_symbols *s, pid_t pid, uint64_t mask, const uint64_t *regs, const void *stack,
                       size_t stack_len, uint64_t *ret, size_t max);
/* A FORK record of a new process CHILD of PARENT: it has PARENT's
 * mappings (no record repeats them). For opts.recorded, where /proc
 * cannot tell. */
void ctx_symbols_fork(struct ctx_symbols *s, pid_t parent, pid_t child);

struct ctx_symbols_stats {
        uint64_t modules, procs, named, unnamed;
        uint64_t cache_bytes;           /* the modules' tables */
        uint64_t helper_starts, helper_timeouts, helper_crashes;
        uint64_t unwound, unwind_skipped;       /* "user": "dwarf" samples unwound, and left without user frames */
        uint64_t refused;               /* mapped files not opened: not a regular file, another inode */
};
void ctx_symbols_stats(const struct ctx_symbols *s, struct ctx_symbols_stats *ret);
