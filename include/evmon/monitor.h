/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* src/monitor/: perf_event_open, per-CPU rings, the record and sample
 * parsers. Knows nothing of sockets or config files. Functions return 0
 * (or a count) on success and -errno on failure; none prints. */

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "evmon/cleanup.h"

/* ---- ring.c: reading a perf mmap ring on plain memory ---------------- */

#define RING_BOUNCE_SIZE 65536u

struct ring {
        struct perf_event_mmap_page *page;  /* control page (not owned) */
        uint8_t *data;                      /* data area, page->data_offset or the page after */
        uint64_t size;                      /* data area bytes, a power of two */
        uint8_t *bounce;                    /* RING_BOUNCE_SIZE bytes for records that wrap (owned) */
        uint64_t n_bad;                     /* malformed headers seen (ring reset past them) */
};

/* Sets up R over an mmap'ed ring: BASE is the control page, the data area
 * of DATA_SIZE bytes (a power of two) follows it. Allocates the bounce
 * buffer. */
int ring_init(struct ring *r, void *base, size_t data_size);
void ring_done(struct ring *r);

/* Called for each record; the header and what follows are contiguous and
 * valid only during the call. Return < 0 to stop early (the record is then
 * not consumed). */
typedef int (*ring_record_fn)(const struct perf_event_header *h, void *userdata);

/* Consumes up to BUDGET records, oldest first, publishing data_tail once at
 * the end. Returns the number consumed (BUDGET means more may be waiting),
 * or the callback's negative error. */
int ring_read(struct ring *r, unsigned budget, ring_record_fn fn, void *userdata);

/* Bytes written and not yet consumed. */
uint64_t ring_pending(const struct ring *r);

/* Reading one record at a time, for a merge of several rings: load the
 * head once (ring_head(), acquire), look at the record at *POS (from
 * data_tail, below HEAD) with ring_peek(), step *POS past it, and publish
 * the new tail with ring_consume() after the last use. ring_peek()
 * returns NULL at HEAD, and for a malformed record (counted in n_bad),
 * after moving *POS to HEAD. The record is contiguous (a wrapped one is
 * copied to the bounce buffer) and valid until the next peek. */
uint64_t ring_head(const struct ring *r);
const struct perf_event_header *ring_peek(struct ring *r, uint64_t *pos, uint64_t head);
void ring_consume(struct ring *r, uint64_t tail);

/* ---- sample.c / record.c: every record type, every sample field ------ */

struct perf_read_value {
        uint64_t value, id, lost;
};

struct perf_read {
        uint64_t time_enabled, time_running;
        uint64_t nr;                    /* 1 unless PERF_FORMAT_GROUP */
        const void *values;             /* nr entries of the layout read_format gives; see perf_read_get() */
        uint64_t read_format;
};

/* Entry I (< R->nr) of a parsed read_format block. -ERANGE past the end. */
int perf_read_get(const struct perf_read *r, uint64_t i, struct perf_read_value *ret);

struct perf_sample {
        uint64_t sample_type;           /* which fields below are valid */
        uint64_t id;                    /* IDENTIFIER or ID */
        uint64_t ip;
        uint32_t pid, tid;
        uint64_t time;
        uint64_t addr;
        uint64_t stream_id;
        uint32_t cpu, res;
        uint64_t period;
        struct perf_read read;
        struct { uint64_t nr; const uint64_t *ips; } callchain;
        struct { uint32_t size; const void *data; } raw;
        struct { uint64_t nr; uint64_t hw_idx; bool has_hw_idx; const struct perf_branch_entry *entries;
                 const uint64_t *counters; /* nr, with PERF_SAMPLE_BRANCH_COUNTERS (1 << 19), else NULL */ } branch_stack;
        struct { uint64_t abi; uint64_t mask; const uint64_t *regs; } regs_user, regs_intr;
        struct { uint64_t size; const void *data; uint64_t dyn_size; } stack_user;
        uint64_t weight;                /* WEIGHT, or WEIGHT_STRUCT's full u64 */
        uint64_t data_src;
        uint64_t transaction;
        uint64_t phys_addr;
        uint64_t cgroup;
        uint64_t data_page_size;
        uint64_t code_page_size;
        struct { uint64_t size; const void *data; } aux;
        const struct perf_event_header *header; /* the record itself, as the kernel wrote it */
};

/* Parses a PERF_RECORD_SAMPLE laid out by ATTR's sample_type, read_format,
 * sample_regs_user/intr and branch_sample_type. Pointers point into the
 * record. -EBADMSG when the record is shorter than its fields,
 * -EOPNOTSUPP for sample_type bits of unknown layout. */
int sample_parse(const struct perf_event_attr *attr, const struct perf_event_header *h,
                 struct perf_sample *ret);

/* The sample_id trailer of a non-sample record (attr->sample_id_all). */
struct perf_sample_id {
        uint32_t pid, tid;
        uint64_t time, id, stream_id;   /* id: PERF_SAMPLE_ID, else IDENTIFIER */
        uint32_t cpu, res;
        uint64_t identifier;
};

/* A parsed record of any type. Strings and arrays point into the record. */
struct perf_record {
        uint32_t type;                  /* PERF_RECORD_* */
        uint16_t misc;
        struct perf_sample_id sid;      /* valid when attr->sample_id_all (not for SAMPLE) */
        bool has_sid;
        union {
                struct perf_sample sample;
                struct { uint32_t pid, tid; uint64_t addr, len, pgoff; const char *filename; } mmap;
                struct { uint32_t pid, tid; uint64_t addr, len, pgoff; uint32_t maj, min; uint64_t ino, ino_generation;
                         uint8_t build_id_size; const uint8_t *build_id; bool has_build_id;
                         uint32_t prot, flags; const char *filename; } mmap2;
                struct { uint64_t id, lost; } lost;
                struct { uint32_t pid, tid; const char *comm; } comm;
                struct { uint32_t pid, ppid, tid, ptid; uint64_t time; } task;  /* FORK, EXIT */
                struct { uint64_t time, id, stream_id; } throttle;             /* THROTTLE, UNTHROTTLE */
                struct { uint32_t pid, tid; struct perf_read values; } read;
                struct { uint64_t aux_offset, aux_size, flags; } aux;
                struct { uint32_t pid, tid; } itrace_start;
                struct { uint64_t lost; } lost_samples;
                struct { uint32_t next_prev_pid, next_prev_tid; } switch_cpu_wide; /* SWITCH has no body */
                struct { uint32_t pid, tid; uint64_t nr; const uint64_t *dev_ino; } namespaces; /* nr pairs */
                struct { uint64_t addr; uint32_t len; uint16_t ksym_type, flags; const char *name; } ksymbol;
                struct { uint16_t type, flags; uint32_t id; const uint8_t *tag; } bpf_event;
                struct { uint64_t id; const char *path; } cgroup;
                struct { uint64_t addr; uint32_t old_len, new_len; const uint8_t *bytes; } text_poke;
                struct { uint64_t hw_id; } aux_output_hw_id;
                struct { uint64_t cookie, nr; const uint64_t *ips; } callchain_deferred; /* type 22 */
        };
};

/* Parses one record of any type. Unknown types are returned with only
 * type and misc set (0, not an error). -EBADMSG for a truncated record. */
int record_parse(const struct perf_event_attr *attr, const struct perf_event_header *h,
                 struct perf_record *ret);
/* "MMAP", "SAMPLE", ...; NULL for a type this parser does not know. */
const char *record_type_to_string(uint32_t type);

/* ---- perf.c: thin syscall wrappers ----------------------------------- */

int perf_event_open_fd(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd, unsigned long flags);

/* Online CPUs from /sys/devices/system/cpu/online, ascending (caller owns
 * *ret). */
int perf_online_cpus(int **ret, size_t *ret_n);
/* The same from /sys/devices/system/cpu/WHICH ("online", "present",
 * "possible"). */
int perf_cpu_list(const char *which, int **ret, size_t *ret_n);
/* The same for a cpulist text such as "0-3,5\n" (sorted, duplicates
 * dropped); -EINVAL when malformed. */
int perf_parse_cpu_list(const char *s, int **ret, size_t *ret_n);

/* ---- monitor.c: events × CPUs (× targets) into one ring per CPU ------- */

struct monitor_opts {
        unsigned ring_pages;        /* data pages per CPU ring, a power of two */
        uint32_t wakeup_bytes;      /* wake the reader once this much is pending (at most the ring) */
        clockid_t clockid;          /* clock of sample time */
        bool sample_cgroup;         /* add PERF_SAMPLE_CGROUP (Linux 5.7+) to each sample */
        const int *cgroup_fds;      /* open cgroup v2 directories (PERF_FLAG_PID_CGROUP), or NULL */
        size_t n_cgroups;
        const pid_t *pids;          /* targeted tasks (with inherit), or NULL */
        size_t n_pids;
        bool doorbell;              /* open a doorbell beside each ring (see monitor_ring_arm()) */
};

struct monitor_source {
        uint32_t type;              /* PERF_TYPE_TRACEPOINT, or a dynamic PMU's type */
        uint64_t config, config1, config2;
        const char *filter;         /* ftrace filter, or NULL */
        void *userdata;             /* handed back with each sample */
        /* Any perf event (attr_from_spec()): when set, type and config
         * above are ignored and this attr is opened as it is, but for what
         * the monitor alone chooses: IDENTIFIER, TID, TIME and CPU in
         * sample_type, PERF_FORMAT_ID, sample_id_all, disabled, the ring's
         * clock, and inherit (pid targets only). A counting attr
         * (sample_period 0, no freq) samples nothing: read it with
         * monitor_read(). */
        const struct perf_event_attr *attr;
        /* With attr: only its options count, and type, config, config1
         * and config2 are the fields above (a trace event with perf
         * options, whose tracepoint id or probe PMU is known late and may
         * change: a probe remade through tracefs, a followed file). */
        bool attr_options;
        /* Open as a member of handle GROUP's perf group (added before,
         * on the same rings and targets), one group per CPU and target. */
        bool in_group;
        int group;
        /* No doorbell member (monitor_opts.doorbell), and its samples and
         * records counted apart (monitor_drain_quiet()): its records wait in
         * the ring for the next drain that another source's doorbell, the
         * ring's watermark or the caller's sweep brings. For records only
         * the caller needs before the samples they explain (the process
         * table's exec), so that they do not wake it on their own. */
        bool quiet;
};

struct monitor;

/* Has a ring slot for every possible CPU (monitor_n_rings(); the present
 * ones where /sys/devices/system/cpu/possible cannot be read); those online
 * get theirs mapped now, the others (offline, or not present: a vCPU that
 * may be hot-added later) when monitor_cpu_up() is called for them
 * (-ENODEV when no CPU is online). ring_pages and wakeup_bytes must be set
 * (-EINVAL for 0: the defaults are the caller's). Cgroup fds are
 * duplicated. */
int monitor_new(const struct monitor_opts *opts, struct monitor **ret);
struct monitor *monitor_free(struct monitor *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct monitor *, monitor_free);

/* Opens SRC on every online CPU (× each cgroup and each pid; system-wide
 * without targets), redirected into that CPU's ring, disabled. A target
 * pid whose process has exited is left out; -ESRCH when every one has.
 * Returns a handle >= 0 for monitor_remove(), or perf_event_open's error
 * as it is (-ENOENT, -EINVAL: the caller names the event); nothing stays
 * open. */
int monitor_add(struct monitor *m, const struct monitor_source *src);
/* Closes every fd of handle H. Its samples still in the rings are dropped
 * (not counted as bad) and its userdata is never handed out again, so the
 * caller may free it on return; drain first to get them. -ENOENT for a
 * handle that is not active. */
int monitor_remove(struct monitor *m, int h);
/* Enables every fd of handle H, each from its own CPU (the calling thread
 * moves there and back: an enable from another CPU can make the running
 * events of the same PMU on that CPU silently miss a record, see
 * monitor.c). With doorbells, disarms every ring's doorbells first (see
 * monitor_ring_arm()): arm them again, and read the rings once more,
 * after enabling. */
int monitor_enable(struct monitor *m, int h);
/* Stops handle H on every CPU (and its doorbell copies): no more records
 * until monitor_enable(). What its rings hold stays readable. */
int monitor_disable(struct monitor *m, int h);

/* Rings, one per possible CPU, in ascending CPU order; monitor_ring_fd()
 * is -ENODEV for a ring that is down (its CPU offline or not present),
 * which has no doorbells, drains nothing and counts as armed. */
size_t monitor_n_rings(const struct monitor *m);
/* The indexes of the rings that are up, ascending, *RET_N of them: what a
 * reader walks, rather than every possible CPU. The array is the
 * monitor's, valid until the next monitor_cpu_up() or monitor_cpu_down(). */
const size_t *monitor_rings_up(const struct monitor *m, size_t *ret_n);
int monitor_ring_fd(const struct monitor *m, size_t i);
int monitor_ring_cpu(const struct monitor *m, size_t i);

/* CPU hotplug. When a CPU goes offline the kernel takes every event off
 * it for good: they stay open but write nothing again, even once the CPU
 * is back (PERF_EVENT_IOC_ENABLE does not bring them back), and nothing
 * can be opened on an offline CPU (-ENODEV). So:
 * monitor_ring_up(): ring I is open (its fd, events and doorbells).
 * monitor_ring_alive(): ring I is up and its events still the kernel's:
 *   false when its CPU went offline before the previous call, even when
 *   it is online again by now: the canary's enabled time stood still
 *   between the two (one that went after the previous call shows at the
 *   next: look twice).
 *   It costs a read(2) of an event on that CPU, which is an IPI there.
 * monitor_cpu_down(): closes ring I and every event on it (drain it
 *   first: what it holds is gone after). Retired handles no longer wait
 *   for it.
 * monitor_cpu_up(): opens ring I and every active handle's events on it
 *   again, with their filters, and enables those that are enabled (from
 *   that CPU). -ENODEV while the CPU is offline (ring I stays down). An
 *   event the kernel refuses there stays closed on that CPU: the first
 *   such error is returned, the ring is up all the same. Both change
 *   ring I's fd and doorbell fds: watch them again. */
bool monitor_ring_up(const struct monitor *m, size_t i);
bool monitor_ring_alive(struct monitor *m, size_t i);
int monitor_cpu_down(struct monitor *m, size_t i);
int monitor_cpu_up(struct monitor *m, size_t i);

enum monitor_scan_verdict {
        MONITOR_SCAN_KEEP,      /* the record goes to the merge as it is */
        MONITOR_SCAN_SKIP,      /* done with: the handler counted it */
        MONITOR_SCAN_NOTE,      /* to the merge, with the bytes in the note */
};
/* What scan() keeps with a record: DATA (the handler's, read at once) of
 * LEN bytes, at most MONITOR_NOTE_MAX. */
#define MONITOR_NOTE_MAX (64u * 1024u)
struct monitor_note {
        const void *data;
        size_t len;
};

struct monitor_handler {
        /* EVENT is the source's userdata. */
        void (*sample)(void *event, int cpu, const struct perf_sample *s, void *ctx);
        /* Kernel-side loss (PERF_RECORD_LOST) on CPU. */
        void (*lost)(int cpu, uint64_t count, void *ctx);
        /* Any other record (COMM, MMAP2, SWITCH, THROTTLE, ...): EVENT is
         * the userdata of the source whose id its sample_id carries. */
        void (*record)(void *event, int cpu, const struct perf_event_header *h, const struct perf_record *r,
                       void *ctx);
        /* For monitor_scan() alone: what becomes of sample H of EVENT
         * (laid out by ATTR), enum monitor_scan_verdict. With
         * MONITOR_SCAN_NOTE, *NOTE holds bytes the monitor copies and
         * keeps with the record (its line, encoded there): the merge
         * hands them to noted() in place of the parsed sample. Called
         * from several threads at once, while no other handler runs: it
         * may read what the loop owns, and write only WORKER's own state. */
        int (*scan)(void *event, const struct perf_event_attr *attr, const struct perf_event_header *h,
                    unsigned worker, struct monitor_note *note, void *ctx);
        /* A sample scan() noted, in its place in the merge; the handle
         * is still active, as for sample(). */
        void (*noted)(void *event, int cpu, const struct perf_event_attr *attr, const struct perf_event_header *h,
                      const void *note, size_t len, void *ctx);
};

/* Reads up to BUDGET records from ring I. Returns records consumed (BUDGET
 * means more may be waiting). Handlers must not call monitor_add/remove. */
int monitor_drain(struct monitor *m, size_t i, unsigned budget, const struct monitor_handler *h, void *ctx);
/* Time-ordered draining (monitor.c says how): every ring read at once, its
 * records handed to H oldest first across CPUs. */
struct monitor_order {
        uint64_t now;           /* the rings' clock (monitor_opts.clockid), read before this call */
        uint64_t hold_ns;       /* how long a record may be in flight in the kernel: taken, not yet
                                 * readable; records newer than NOW - HOLD_NS wait while a ring has
                                 * nothing newer */
        bool all;               /* hand out every record read, whatever may still overtake it */
};
struct monitor_order_stats {
        uint64_t passes;
        uint64_t late;          /* records handed out after one with a later time (an inversion) */
        uint64_t emitted;       /* the latest time handed out */
        uint64_t held;          /* rings left holding records by the last pass */
        uint64_t held_newest;   /* ... the latest time among them (0 after a pass cut by its budget) */
        uint64_t in_flight_max_ns; /* the longest a record was seen in flight (taken before a pass
                                    * read its clock, readable only after it loaded the head) */
};
/* Hands out up to BUDGET records of all rings in time order (ties: ring
 * order; a record without a time right after the one before it in its
 * ring), those that may not go yet left in their rings. Returns the
 * records consumed; *RET_HELD gets the time of the oldest record left
 * (UINT64_MAX when none). Handlers must not call monitor_add/remove. */
int monitor_drain_ordered(struct monitor *m, const struct monitor_order *o, unsigned budget,
                          const struct monitor_handler *h, void *ctx, uint64_t *ret_held);
const struct monitor_order_stats *monitor_order_stats(const struct monitor *m);
/* The first look at ring I, made by a reader thread before a merged
 * pass (monitor-scan.c says how): from where the last scan of ring I
 * stopped towards its head, each sample H->scan() skips is done with;
 * every other record stays in the ring (with what scan() noted of it, if
 * anything), kept in order for the
 * next monitor_drain_ordered() (or monitor_drain()), which also counts
 * the skipped records as read (monitor_ring_n_pass(), the return of
 * monitor_drain_skipped()). Scans of different rings may run at once,
 * one thread a ring, while no other monitor call does. Returns the
 * records skipped. */
struct monitor_scan_opts {
        /* What scan() decides holds for the merge that follows, not for
         * records a later merge takes: the scan stops once the ring
         * keeps this many records not merged yet (0: at its head). */
        unsigned max_kept;
        /* A time past this (the clock before the scan, plus the hold)
         * is none the kernel wrote: not taken for the ring's place in the
         * merge (a stepped clock, a bad record). */
        uint64_t time_limit;
};
int monitor_scan(struct monitor *m, size_t i, const struct monitor_scan_opts *o, const struct monitor_handler *h,
                 void *ctx, unsigned worker);
/* Bytes in ring I that no scan has seen (all it holds when none runs):
 * what a scan now would walk. */
uint64_t monitor_ring_unscanned(const struct monitor *m, size_t i);
/* The records scans skipped that the last monitor_drain_ordered() counted
 * in (not in its return: they took none of its budget). */
unsigned monitor_drain_skipped(const struct monitor *m);
/* Records ring I gave in the last monitor_drain_ordered(), and of them
 * the quiet sources' (monitor_source.quiet: no doorbell rings for them). */
unsigned monitor_ring_n_pass(const struct monitor *m, size_t i);
unsigned monitor_ring_n_pass_quiet(const struct monitor *m, size_t i);
/* The time of the latest record monitor_drain_ordered() handed out of
 * ring I (its place in the merge), 0 before any. */
uint64_t monitor_ring_last(const struct monitor *m, size_t i);
/* Bytes in ring I not yet consumed (held records too). */
uint64_t monitor_ring_pending(const struct monitor *m, size_t i);

/* How many of the records the last monitor_drain() consumed were quiet
 * sources' (monitor_source.quiet): a reader that keeps looking while
 * records flow counts only the others, or a host's steady side records
 * would keep it awake. */
unsigned monitor_drain_quiet(const struct monitor *m);

/* Doorbells (opts->doorbell; src/monitor/doorbell.c says how): wake the
 * reader at the first record written into ring I after monitor_ring_arm(),
 * while the ring itself wakes it only per wakeup_bytes. Ring I has
 * monitor_ring_n_doorbells() fds to poll (one per cgroup and pid target,
 * or one for system-wide events); an armed doorbell polls readable once
 * a record of an enabled event is written. Arming empties the doorbell's
 * own ring; read the main ring once more after arming, since a record
 * written before the arm does not ring; arming an armed ring empties its
 * doorbells' rings (do it after each ring: a full one rings no more). Arm
 * and disarm return -errno from the ioctl, the ring's bells left as they
 * were. Where the kernel pauses rings (PERF_EVENT_IOC_PAUSE_OUTPUT,
 * monitor_doorbells_pausable()), both flip a flag: no IPI, no reschedule
 * of the CPU's events, cheap enough to do per wakeup. Otherwise they
 * enable and disable the doorbells (an IPI each from another CPU), and
 * disarmed doorbells cost the traced program nothing. */
size_t monitor_ring_n_doorbells(const struct monitor *m, size_t i);
int monitor_ring_doorbell_fd(const struct monitor *m, size_t i, size_t k);
int monitor_ring_arm(struct monitor *m, size_t i);
/* The samples the last monitor_ring_arm() of ring I emptied from its
 * doorbells' rings: one a record of the main ring written since the arm
 * before (what rang; a paused ring's LOST record is not one). UINT_MAX
 * when that count says nothing: a doorbell whose copies sample on their
 * own (a cpu-clock's), or one near full. */
unsigned monitor_ring_bell_copies(const struct monitor *m, size_t i);
/* The copies in ring I's armed doorbells' rings that its next arm will
 * count (as monitor_ring_bell_copies() counts them; 0 for a disarmed
 * ring), left there. */
unsigned monitor_ring_pending_copies(const struct monitor *m, size_t i);
int monitor_ring_disarm(struct monitor *m, size_t i);
bool monitor_ring_armed(const struct monitor *m, size_t i);
/* Ring I flows at a rate that keeps it disarmed: its pausable doorbells'
 * leaders go off, from its CPU (one migration of the caller there and
 * back), until monitor_ring_arm() wakes them the same way. Paused, their
 * members still ran for every record and cost the traced program ~80 ns
 * each at the maximum rate; at rest they are off its tracepoint's list.
 * A no-op on an armed ring or without pausable doorbells. */
int monitor_ring_rest(struct monitor *m, size_t i);
/* How many times rings went to rest. */
uint64_t monitor_ring_rests(const struct monitor *m);
/* Every open doorbell arms by unpausing its ring (see above). */
bool monitor_doorbells_pausable(const struct monitor *m);
/* False when some active event has no doorbell copy (the kernel refused
 * it): its first records after a quiet spell wake no one, so the reader
 * must still look now and then. */
bool monitor_doorbells_cover(const struct monitor *m);

/* Handle H's perf fds: one per ring (CPU) and target, in monitor_add()'s
 * order (each CPU: the cgroups, then the pids; or one system-wide).
 * monitor_handle_fd() gives fd I's CPU in *RET_CPU. */
size_t monitor_handle_n_fds(const struct monitor *m, int h);
int monitor_handle_fd(const struct monitor *m, int h, size_t i, int *ret_cpu);
/* Whether fd I of a handle watches a pid target (a thread of targets.pids,
 * opened on every CPU), and which one in *RET_TARGET: the same for that
 * thread's fd on each CPU. False for a CPU-wide or cgroup fd. */
bool monitor_fd_pid_target(const struct monitor *m, size_t i, size_t *ret_target);
/* The attr handle H was opened with (the monitor's additions included). */
const struct perf_event_attr *monitor_handle_attr(const struct monitor *m, int h);
/* The sample ids of handle H's fds, monitor_handle_n_fds() of them (0 for
 * an fd on a CPU that is down), owned by the monitor and valid until the
 * handle changes: what a perf.data writer lists in its HEADER_ATTR. */
const uint64_t *monitor_handle_ids(const struct monitor *m, int h);

/* Reads fd I of handle H (read(2): its read_format layout) into BUF of
 * SIZE bytes and parses it into *RET, which points into BUF. A group
 * leader with PERF_FORMAT_GROUP gives every member's value with its id. */
int monitor_read(struct monitor *m, int h, size_t i, void *buf, size_t size, struct perf_read *ret);
/* The userdata of the source that sample id ID belongs to, or NULL. */
void *monitor_id_userdata(const struct monitor *m, uint64_t id);

/* The kernel writes the count of records it had no room for in ring I
 * only with the next record it writes there. When a look at ring I has
 * seen it (nearly) full since the last call, makes the kernel write one
 * record of ours (skipped by the drains) into it on its CPU within some
 * 10 µs, so that a held count comes out as a PERF_RECORD_LOST: call it
 * when a look found ring I quiet, and look again later. Returns 1 when
 * asked, 0 when there was no need, or -errno. */
int monitor_ring_flush_lost(struct monitor *m, size_t i);

/* Total PERF_RECORD_LOST count of ring I, and malformed records skipped. */
uint64_t monitor_ring_lost(const struct monitor *m, size_t i);
uint64_t monitor_ring_bad(const struct monitor *m, size_t i);

/* The first malformed record of a ring that had a whole one to show (a
 * sample or side record that would not parse, a sample of an unknown id):
 * what was wrong, its header, and its first bytes. A corrupt head or size
 * in the ring itself is only counted: there is no record to show. */
#define MONITOR_MALFORMED_BYTES 64u
struct monitor_malformed {
        const char *why;                /* static text */
        uint32_t type;
        uint16_t misc, size;
        uint8_t bytes[MONITOR_MALFORMED_BYTES];
        size_t n_bytes;                 /* of bytes, at most the record's size */
};

/* Ring I's first malformed record into *RET, once: true the first time a
 * ring has one to tell (the caller says it), false before and after. */
bool monitor_ring_take_malformed(struct monitor *m, size_t i, struct monitor_malformed *ret);
