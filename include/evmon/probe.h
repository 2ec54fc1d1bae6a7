/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* src/tracefs/probe.c and elf.c: dynamic probes (kprobe, kretprobe,
 * uprobe, uretprobe). Knows nothing of sockets, JSON or perf fds.
 *
 * Two ways to create a probe:
 *
 *  - through tracefs (probe_add): writes a definition line to
 *    kprobe_events/uprobe_events in our own group. Supports fetch-args;
 *    the event then has a tracepoint id (format->id) that perf_event_open
 *    takes with PERF_TYPE_TRACEPOINT. It outlives the process, so the
 *    daemon removes it on exit (probe_remove) and, after a crash, on the
 *    next start (probe_remove_group, probe_record_*).
 *  - through the fd-scoped PMUs (probe_pmu_attr): perf_event_open creates
 *    the probe itself and it goes away with the fd. No fetch-args: the raw
 *    record holds the common fields and the probe address(es) only
 *    (probe_pmu_format builds the matching decoder).
 *
 * Functions return 0 (or a count) on success and -errno on failure; none
 * prints. Where a person needs to know more than the errno says, an
 * optional char **ret_error receives a message (caller frees; left NULL
 * when there is nothing to add). */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "evmon/tracefs.h"

#define PROBE_GROUP_DEFAULT "evmon"

enum probe_kind {
        PROBE_KPROBE,
        PROBE_KRETPROBE,
        PROBE_UPROBE,
        PROBE_URETPROBE,
        _PROBE_KIND_MAX,
        _PROBE_KIND_INVALID = -EINVAL,
};

/* "kprobe", "kretprobe", "uprobe", "uretprobe"; NULL when out of range. */
const char *probe_kind_to_string(enum probe_kind k);
/* The reverse; _PROBE_KIND_INVALID for anything else. */
enum probe_kind probe_kind_from_string(const char *s);

static inline bool probe_kind_is_uprobe(enum probe_kind k) {
        return k == PROBE_UPROBE || k == PROBE_URETPROBE;
}

static inline bool probe_kind_is_return(enum probe_kind k) {
        return k == PROBE_KRETPROBE || k == PROBE_URETPROBE;
}

/* One probe as the config names it. Nothing here is owned.
 *
 * target: kprobes  SYMBOL[+OFFSET] or 0xADDRESS
 *         uprobes  PATH:SYMBOL[+OFFSET] or PATH:0xFILEOFFSET
 * fetch:  "NAME=FETCHARG[:TYPE]" in the kernel's syntax
 *         (Documentation/trace/kprobetrace.rst, uprobetracer.rst), passed
 *         through as they are; the kernel judges them. */
struct probe_spec {
        enum probe_kind kind;
        const char *name;       /* event name: [A-Za-z_][A-Za-z0-9_]* */
        const char *target;
        char **fetch;
        size_t n_fetch;
        /* uprobes: TARGET is PATH:0xFILEOFFSET already resolved against an
         * open file, PATH typically "/proc/self/fd/N": handed to the kernel
         * as it is, neither realpath() nor ELF lookup, so the probe lands on
         * that fd's inode whatever is at the file's path meanwhile. */
        bool target_resolved;
};

/* A parsed target. A resolved uprobe target has symbol NULL, path the
 * real path of the ELF file and offset its file offset. */
struct probe_target {
        char *path;             /* uprobes: the ELF file */
        char *symbol;           /* NULL when the target is an address */
        uint64_t offset;        /* with a symbol: bytes past it; else the kernel address
                                 * (kprobe) or file offset (uprobe) */
};

/* Splits TARGET by KIND's syntax into *ret (caller owns: probe_target_done).
 * Syntax only, touches no file. -EINVAL with a message when malformed. */
int probe_parse_target(enum probe_kind kind, const char *target, struct probe_target *ret,
                       char **ret_error);

/* Like probe_parse_target(), then for uprobes turns PATH:SYMBOL[+OFF]
 * into the real path and a file offset (elf_resolve_symbol()). */
int probe_resolve_target(enum probe_kind kind, const char *target, struct probe_target *ret,
                         char **ret_error);

void probe_target_done(struct probe_target *t);

/* true for a valid group or event name: [A-Za-z_][A-Za-z0-9_]*, at most
 * 63 characters (the kernel's MAX_EVENT_NAME_LEN is 64 with the NUL). */
bool probe_name_is_valid(const char *s);

/* The line probe_add() writes, without the newline:
 * "p:GROUP/NAME do_sys_openat2+0 ARG...", "r:GROUP/NAME /usr/bin/bash:0x8b2a0 ARG...".
 * Resolves uprobe targets (reads the ELF file). -EINVAL with a message for
 * a bad name, target or fetch-arg (fetch-args may not contain white
 * space). The caller owns *ret_line. */
int probe_format_command(const char *group, const struct probe_spec *p, char **ret_line,
                         char **ret_error);

/* Creates probe P in GROUP (NULL: PROBE_GROUP_DEFAULT) through
 * kprobe_events/uprobe_events and reads back its format, which the caller
 * owns in *ret_format (may be NULL: not wanted). When the kernel refuses
 * the definition, *ret_error holds its reason, the last error_log entry
 * ("trace_kprobe: error: Invalid fetch argument\n  Command: ...\n  ^"),
 * and the return is the write's -errno. -EEXIST when GROUP/NAME exists,
 * whatever its definition: since Linux 5.7 the kernel would add our
 * location to that event rather than fail, and on 6.18 closing a perf fd
 * of a uprobe event that got a location while open oopses. -EOPNOTSUPP
 * when the kernel has no kprobe_events/uprobe_events. */
int probe_add(struct tracefs *t, const char *group, const struct probe_spec *p,
              struct format **ret_format, char **ret_error);

/* Deletes GROUP/NAME ("-:GROUP/NAME"). -ENOENT when there is no such probe;
 * -EBUSY while a perf fd on it is open or it is enabled: close the fds
 * first. */
int probe_remove(struct tracefs *t, const char *group, enum probe_kind kind, const char *name);

/* Deletes every kprobe and uprobe of GROUP, and only of GROUP (the start-up
 * cleanup after a crashed daemon). Goes on past failures; returns the first
 * error, or 0. *ret_removed (may be NULL) gets how many went. */
int probe_remove_group(struct tracefs *t, const char *group, unsigned *ret_removed);

/* ---- the record of our groups (/run/evmon/probes) ---------------------
 *
 * The file holds one group name a line. The daemon calls
 * probe_record_cleanup() on start (removes every probe of each recorded
 * group, then the file), then probe_record_group() before its first
 * probe_add(). Writes are atomic (temporary file and rename); the
 * directory is created (0755) when missing. */

/* Adds GROUP to the record at PATH unless it is there. */
int probe_record_group(const char *path, const char *group);

/* Names in the record at PATH, NULL-terminated (caller owns, strv_free()).
 * A missing file is an empty list. Lines that are not valid group names
 * are ignored. */
int probe_record_load(const char *path, char ***ret_groups);

/* probe_remove_group() for each recorded group, then unlinks PATH when all
 * went. *ret_removed (may be NULL) counts the probes removed. */
int probe_record_cleanup(struct tracefs *t, const char *path, unsigned *ret_removed);

/* ---- fd-scoped PMUs (perf_event_open creates the probe) -------------- */

/* Fields for struct perf_event_attr. config1 holds a pointer to string,
 * which must stay alive until perf_event_open() returns. */
struct probe_pmu {
        uint32_t type;          /* attr.type: the kprobe or uprobe PMU's dynamic type */
        uint64_t config;        /* the retprobe bit for returns, else 0 */
        uint64_t config1;       /* kprobe_func / uprobe_path: (uintptr_t) string, or 0 */
        uint64_t config2;       /* kprobe_addr or symbol offset / probe_offset (file offset) */
        char *string;           /* the symbol name or real path config1 points at (owned) */
};

/* Reads SYSFS/bus/event_source/devices/{kprobe,uprobe}/type and the
 * retprobe bit from .../format/retprobe ("config:0"). SYSFS NULL means
 * "/sys". -EOPNOTSUPP when this kernel has no such PMU. */
int probe_pmu_type(const char *sysfs, enum probe_kind kind, uint32_t *ret_type,
                   uint64_t *ret_retprobe_mask);

/* Fills *ret for P so that perf_event_open() creates the probe directly.
 * Uprobe targets are resolved (real path and file offset). -EINVAL when P
 * has fetch-args (the PMUs take none). Free with probe_pmu_done(). */
int probe_pmu_attr(const char *sysfs, const struct probe_spec *p, struct probe_pmu *ret,
                   char **ret_error);
void probe_pmu_done(struct probe_pmu *pmu);

/* The decoder for raw records of a PMU-created probe of KIND named NAME:
 * the common fields copied from REFERENCE (any tracefs event's format,
 * the header is the same for all), then "unsigned long __probe_ip" or,
 * for returns, "__probe_func" and "__probe_ret_ip", as the kernel lays
 * them out (struct kprobe_trace_entry_head, uprobe_trace_entry_head).
 * id is 0 and system is "kprobes" or "uprobes". Caller owns *ret. */
int probe_pmu_format(const struct format *reference, enum probe_kind kind, const char *name,
                     struct format **ret);

/* ---- elf.c: symbol -> file offset for uprobes ------------------------ */

/* A probe target, a followed path, any ELF file a user can name or place
 * is untrusted: ELF files larger than this are refused (-EFBIG), so what
 * is read of one is bounded. The largest programs and libraries with
 * their symbol tables are well under it. */
#define ELF_SIZE_MAX ((int64_t) 1 << 30)
/* And of what libelf reads whole for a lookup (symbol and string tables,
 * symbol versions, notes), each section at most this (-EFBIG): what a
 * lookup holds in memory at once stays a few of these. */
#define ELF_SECTION_MAX ((int64_t) 256 << 20)

/* elf_open_regular() flags: refuse PATH when its last component is a
 * symbolic link (-ELOOP) instead of following it. */
#define ELF_OPEN_NOFOLLOW 1u

struct stat;

/* Opens PATH (relative to DIRFD unless absolute; AT_FDCWD) for reading as
 * an untrusted file: looked at through an O_PATH fd first, so that no
 * FIFO or device is ever opened; refused unless a regular file (-EINVAL,
 * naming what it is) of at most ELF_SIZE_MAX bytes (-EFBIG); then opened
 * O_RDONLY|O_NONBLOCK|O_CLOEXEC, the same inode. Returns the fd (caller
 * closes) and, in *ret_st (may be NULL), its fstat(). Errors name NAME
 * (NULL: PATH) in *ret_error. */
int elf_open_regular(int dirfd, const char *path, const char *name, unsigned flags, struct stat *ret_st,
                     char **ret_error);

/* Opens the probe target PATH (absolute) as elf_open_regular() does, its
 * symbolic links followed one by one in the directories the walk holds:
 * a link owned by a user other than root is followed only to a file of
 * that user (-EPERM otherwise, naming the link and both owners), so that
 * whoever may write a directory on the way cannot point a probe at
 * another's file. Returns the fd, and the directory fd that holds the file
 * (O_PATH; may be NULL), the real path (may be NULL) and fstat() (may be
 * NULL). */
int elf_open_target(const char *path, int *ret_dir_fd, char **ret_real, struct stat *ret_st, char **ret_error);

/* elf_resolve_symbol() on an open file (elf_open_regular()): NAME is what
 * messages call it. Reads with pread(), not mmap(): the file's owner may
 * truncate it meanwhile. -EFBIG for a section past ELF_SECTION_MAX. */
int elf_resolve_symbol_fd(int fd, const char *name, const char *symbol, uint64_t *ret_offset, char **ret_error);

/* The bytes a symbol lookup and a build id read of the open file FD would
 * read whole (symbol, string and version tables, notes), from its headers
 * alone, in *ret_bytes: what the file's writer chose, which a caller that
 * looks up files others place bounds over time. -ENOEXEC: not ELF. */
int elf_read_size_fd(int fd, const char *name, uint64_t *ret_bytes, char **ret_error);

/* elf_build_id() on an open file, as above. */
int elf_build_id_fd(int fd, const char *name, char **ret_hex, char **ret_error);

/* Resolves SYMBOL in the ELF executable or shared object PATH (symlinks
 * followed) to the file offset uprobe_events and the uprobe PMU take:
 * st_value - p_vaddr + p_offset of the PT_LOAD segment holding it. Looks
 * in .symtab, then .dynsym; takes functions (STT_FUNC, STT_GNU_IFUNC),
 * else any defined symbol in an executable segment. In .dynsym a name's
 * default version (name@@V) wins over older ones (name@V). For an IFUNC
 * the address is its resolver's, which runs once at load time, not the
 * implementation's. *ret_real_path (may be NULL) gets the real path of
 * PATH. The file is opened with elf_open_target() (a user's link to
 * another's file refused: -EPERM; a FIFO or device: -EINVAL).
 *
 * Errors: -ENOENT no such file, or no such symbol; -ENOEXEC not an ELF
 * executable or shared object; -ENODATA no symbol table at all (stripped);
 * -ENOTUNIQ the name has several addresses; -ERANGE the address is in no
 * loadable part of the file. Each with a message in *ret_error. */
int elf_resolve_symbol(const char *path, const char *symbol, uint64_t *ret_offset,
                       char **ret_real_path, char **ret_error);

/* The GNU build id of the ELF file PATH (its NT_GNU_BUILD_ID note, what
 * `readelf -n` shows as "Build ID") in lower-case hex, in *ret_hex (the
 * caller frees). It tells two builds of one program apart where a path
 * cannot: a uprobe's file replaced by an upgrade. Opened with
 * elf_open_regular() (links followed). Errors: -errno of open();
 * -ENOEXEC not an ELF file; -ENODATA no build id note; -EBADMSG a malformed
 * one. Each with a message in *ret_error. */
int elf_build_id(const char *path, char **ret_hex, char **ret_error);
