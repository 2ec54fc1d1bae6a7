/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* src/monitor/perfdata*.c: perf.data files as `perf record` writes them
 * (the "PERFILE2" layout of tools/perf/Documentation/
 * perf.data-file-format.txt): to a file or to a pipe (`perf record -o -`,
 * where the attrs, tracing data and feature sections come in-band as
 * perf's own records), in either byte order (read into this machine's
 * order, as perf's session.c swaps them), with zstd-compressed data
 * (`perf record -z`: PERF_RECORD_COMPRESSED and COMPRESSED2). The records
 * go through record_parse(), the tracepoint formats the file carries
 * through format_parse(), so a recorded sample decodes exactly as a live
 * one does; perf's own records and the feature sections are decoded into
 * trees of named values (struct perfdata_node) for the encoder.
 *
 * perf record --threads' directory (HEADER_DIR_FORMAT: a header file
 * "data" and a data.N file of records per writer thread) is read whole by
 * perfdata_open(), named by the directory or its "data" file, 2 MiB from
 * each file in turn as perf reads it.
 *
 * Pipe mode from what cannot be mapped (perf record -o - | evmonctl
 * decode -) is read as it arrives: perfdata_open() returns once perf's
 * header records are in (up to its first kernel record), perfdata_next()
 * reads the stream as far as the next record needs, and memory is the
 * header, the largest record and the time-order queue, never the input.
 *
 * Not read: the old "PERFFILE" layout (-EPROTONOSUPPORT, see
 * perfdata_unsupported()), a --threads header file without its directory
 * (standard input, perfdata_new()).
 * Functions return 0 (or 1, a count) on success and -errno on failure;
 * none prints. Malformed input gives -EBADMSG and is never read past; a
 * record's size is a u16 and every other length in the file is checked
 * against what is there before anything is allocated for it. */

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "evmon/cleanup.h"
#include "evmon/monitor.h"
#include "evmon/tracefs.h"

/* Feature bits of the perf.data header (tools/perf/util/header.h); the
 * numbers are file format. */
enum {
        PERFDATA_FEAT_TRACING_DATA = 1,
        PERFDATA_FEAT_BUILD_ID = 2,
        PERFDATA_FEAT_EVENT_DESC = 12,
        PERFDATA_FEAT_CLOCKID = 23,
        PERFDATA_FEAT_COMPRESSED = 27,
        PERFDATA_FEAT_CLOCK_DATA = 29,
        PERFDATA_FEAT_LAST_KNOWN = 31,  /* HEADER_PMU_CAPS */
        PERFDATA_FEAT_MAX = 256,
};

/* perf's own record types (tools/lib/perf/include/perf/event.h): numbers
 * from PERF_RECORD_USER_TYPE_START on are written by the tool, never by
 * the kernel. */
enum {
        PERFDATA_RECORD_USER_TYPE_START = 64,
        PERFDATA_RECORD_HEADER_ATTR = 64,
        PERFDATA_RECORD_HEADER_EVENT_TYPE = 65,
        PERFDATA_RECORD_HEADER_TRACING_DATA = 66,
        PERFDATA_RECORD_HEADER_BUILD_ID = 67,
        PERFDATA_RECORD_FINISHED_ROUND = 68,
        PERFDATA_RECORD_ID_INDEX = 69,
        PERFDATA_RECORD_AUXTRACE_INFO = 70,
        PERFDATA_RECORD_AUXTRACE = 71,
        PERFDATA_RECORD_AUXTRACE_ERROR = 72,
        PERFDATA_RECORD_THREAD_MAP = 73,
        PERFDATA_RECORD_CPU_MAP = 74,
        PERFDATA_RECORD_STAT_CONFIG = 75,
        PERFDATA_RECORD_STAT = 76,
        PERFDATA_RECORD_STAT_ROUND = 77,
        PERFDATA_RECORD_EVENT_UPDATE = 78,
        PERFDATA_RECORD_TIME_CONV = 79,
        PERFDATA_RECORD_HEADER_FEATURE = 80,
        PERFDATA_RECORD_COMPRESSED = 81,
        PERFDATA_RECORD_FINISHED_INIT = 82,
        PERFDATA_RECORD_COMPRESSED2 = 83,
};

/* One event of the file: an attr with the sample ids perf gave its fds. */
struct perfdata_event {
        struct perf_event_attr attr;    /* as recorded, zero-extended to our struct */
        uint64_t *ids;
        size_t n_ids;
        char *name;                     /* "sched:sched_process_exec" from the tracing data
                                         * for a tracepoint, else HEADER_EVENT_DESC's name
                                         * ("dummy:HG"), else NULL */
        struct format *format;          /* the tracepoint's format from the file, or NULL */
};

/* HEADER_CLOCK_DATA: one instant read on both clocks when recording
 * started (perf record -k CLOCKID). */
struct perfdata_clock {
        clockid_t clockid;              /* the clock of sample times */
        uint64_t wall_ns;               /* CLOCK_REALTIME at that instant */
        uint64_t clock_ns;              /* CLOCKID at that instant */
};

/* A decoded value: feature sections and perf's own records become trees
 * of these, in one array, linked by index (0 ends a list: the root is
 * node 0 and never anyone's child or sibling). Keys are static strings;
 * string values point into the file (or the record) and are NOT
 * NUL-terminated: use len. */
enum perfdata_node_kind {
        PERFDATA_NODE_OBJECT,
        PERFDATA_NODE_ARRAY,
        PERFDATA_NODE_U64,
        PERFDATA_NODE_S64,
        PERFDATA_NODE_HEX,              /* an address or mask: u shown as "0x..." */
        PERFDATA_NODE_STRING,           /* s.p, s.len: text (may hold any bytes) */
        PERFDATA_NODE_BYTES,            /* s.p, s.len: binary, shown as hex digits */
        PERFDATA_NODE_BOOL,
        PERFDATA_NODE_DOUBLE,
};

struct perfdata_node {
        const char *key;                /* NULL for array elements and the root */
        enum perfdata_node_kind kind;
        uint32_t child, next;           /* first child, next sibling; 0: none */
        union {
                uint64_t u;
                int64_t i;
                double d;
                bool b;
                struct { const char *p; size_t len; } s;
        };
};

struct perfdata_tree {
        const struct perfdata_node *nodes;      /* nodes[0] is the root object; NULL: no tree */
        size_t n;
};

/* Orders perfdata_next() hands records out in. */
enum perfdata_order {
        /* As stored: perf writes each CPU buffer's records in turn, so
         * only per CPU in time order. */
        PERFDATA_ORDER_FILE,
        /* Each round (up to a FINISHED_ROUND) sorted by time as soon as it
         * ends: every record comes after all records perf wrote in earlier
         * rounds; one round is held in memory. */
        PERFDATA_ORDER_CAUSAL,
        /* perf's own order (util/ordered-events.c, session.c): records are
         * queued by time and a FINISHED_ROUND flushes those up to the
         * newest time seen before the previous FINISHED_ROUND, since a
         * record of one round may still be older than the last of the
         * round before; the rest at the end. Records without a time (and
         * perf's own records) pass through where they stand. This is the
         * order perf script and perf report use. */
        PERFDATA_ORDER_TIME,
};
/* "file", "causal", "time"; -EINVAL for another word. */
int perfdata_order_from_string(const char *s);

struct perfdata;

/* Maps the file PATH (or reads it, when it is a pipe or "-" for standard
 * input; a directory: its "data" file and, with HEADER_DIR_FORMAT, the
 * data.N files there; -EISDIR for one without "data") and reads its header, attrs, event names, tracepoint formats and
 * feature sections; in pipe mode the in-band records that carry them.
 * -EBADMSG when it is not a well-formed perf.data file (truncated,
 * sections out of bounds), -EPROTONOSUPPORT for a variant this reader does
 * not take (perfdata_unsupported() says which). The caller owns *ret. */
int perfdata_open(const char *path, struct perfdata **ret);
/* The same; when a file of a --threads directory is at fault, its name in
 * that directory goes to *RET_FAULT (the caller frees it; NULL when the
 * error is not one file's): -EBADFD for one that is not a regular file (a
 * FIFO, a device: never opened blocking, never read). */
int perfdata_open_full(const char *path, struct perfdata **ret, char **ret_fault);
/* Called by perfdata_next() on a stream (pipe mode on a pipe) before it
 * waits for more input: the moment to show what was given so far. */
typedef void (*perfdata_wait_t)(void *userdata);
void perfdata_set_wait(struct perfdata *pd, perfdata_wait_t wait, void *userdata);
/* The same on SIZE bytes at DATA, which must stay valid (and unchanged)
 * until perfdata_free(). */
int perfdata_new(const void *data, size_t size, struct perfdata **ret);
/* How perfdata_next() orders records from here on (PERFDATA_ORDER_FILE
 * until set). Call it before the first perfdata_next() or right after
 * perfdata_rewind(). */
int perfdata_set_order(struct perfdata *pd, enum perfdata_order order);
struct perfdata *perfdata_free(struct perfdata *pd);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct perfdata *, perfdata_free);

/* Why the file starting with these SIZE bytes is a perf.data variant we do
 * not read ("pipe-mode output (perf record -o -)", ...), or NULL. */
const char *perfdata_unsupported(const void *head, size_t size);

size_t perfdata_n_events(const struct perfdata *pd);
/* Event I (< perfdata_n_events()), owned by PD. */
const struct perfdata_event *perfdata_event(const struct perfdata *pd, size_t i);
bool perfdata_has_feature(const struct perfdata *pd, unsigned feature);
/* The HEADER_CLOCK_DATA reference; -ENODATA when the file has none (perf
 * record without -k: sample times are then the kernel's perf clock, which
 * has no known relation to wall-clock time). */
int perfdata_clock(const struct perfdata *pd, struct perfdata_clock *ret);
/* Format texts in the tracing data that format_parse() refused (those
 * events then have no format). */
size_t perfdata_n_bad_formats(const struct perfdata *pd);
/* The file was written in the other byte order (and is read swapped). */
bool perfdata_swapped(const struct perfdata *pd);
/* Pipe mode: a 16-byte header, everything else in-band. */
bool perfdata_pipe(const struct perfdata *pd);
/* The file header and every feature section, decoded: an object with
 * "byte_order", "pipe", "data_offset", "data_size", "features" (one
 * member per set feature bit, named as perf names them in lower case:
 * "hostname", "cpu_topology", ...; a section we do not know is
 * {"id":N,"size":N} in "unknown_features"; one that does not parse is
 * {"error":"malformed","offset":N}), and "events" (each attr with its
 * ids and name). Owned by PD, valid until perfdata_free(). */
struct perfdata_tree perfdata_header(const struct perfdata *pd);
/* The offset of the first problem perfdata_open() found in a feature
 * section (then skipped, see perfdata_header()), or 0. */
uint64_t perfdata_feature_damage(const struct perfdata *pd);

struct perfdata_record {
        uint64_t offset;                        /* of the record in the file */
        const struct perf_event_header *header; /* 8-byte aligned, valid until the next call */
        /* The event whose attr laid the record out, found by its sample id
         * (PERF_SAMPLE_IDENTIFIER or PERF_SAMPLE_ID); the only event when
         * there is one. NULL for perf's own record types, and for a record
         * whose id names no event (rec is then not parsed: type and misc only). */
        const struct perfdata_event *event;
        bool parsed;                            /* rec holds the fields, not only type and misc */
        bool compressed;                        /* came out of a COMPRESSED record at offset */
        uint64_t time;                          /* the time ordering used; 0: none */
        struct perf_record rec;                 /* pointers into the record */
        /* perf's own records (type >= PERFDATA_RECORD_USER_TYPE_START):
         * their fields decoded, valid until the next call; HEADER_FEATURE
         * as {"feature":NAME, "data":{...the section...}}. */
        struct perfdata_tree user;
};

/* Reads the next record in the order perfdata_set_order() chose. Every
 * record but COMPRESSED ones, whose contents come out instead (offset is
 * then the COMPRESSED record's, as perf shows it). Returns 1 with *ret
 * filled, 0 at the end, -EBADMSG for a malformed record (reading stops
 * there: in time order every record read before it comes out first, then
 * the error; perfdata_offset() names where), -EOPNOTSUPP at a sample whose
 * sample_type has bits of unknown layout. */
int perfdata_next(struct perfdata *pd, struct perfdata_record *ret);
/* Back to the first record. */
void perfdata_rewind(struct perfdata *pd);
/* File offset of the record perfdata_next() reads next, or stopped at
 * (in pipe mode counted from the start of the stream). */
uint64_t perfdata_offset(const struct perfdata *pd);
/* Which file that offset is in: -1 the perf.data file, N the data.N file
 * of a --threads directory. */
int perfdata_offset_file(const struct perfdata *pd);

/* "SAMPLE", "MMAP2", ... for kernel types, "FINISHED_ROUND", "ID_INDEX",
 * ... for perf's own; NULL when unknown. */
const char *perfdata_record_type_to_string(uint32_t type);

/* ---- perfdata-write.c: perf's pipe mode out -------------------------- */

/* One event of a stream: its attr as opened and the ids of its fds; NAME
 * for HEADER_EVENT_DESC; a trace event's format file text (its "ID:"
 * line equal to attr.config) under SYSTEM in the tracing data, so that
 * perf names it and decodes its fields. */
struct perfdata_out_event {
        struct perf_event_attr attr;
        const uint64_t *ids;
        size_t n_ids;
        const char *name;
        const char *system;
        const char *format_text;
};

/* What the features say of the machine; NULL strings are left out. */
struct perfdata_out_info {
        const char *hostname, *osrelease, *version, *arch;
        uint32_t nr_cpus_avail, nr_cpus_online;   /* 0: no NRCPUS */
        const char *const *cmdline;               /* NULL-terminated, or NULL */
        uint32_t page_size;
        const char *header_page, *header_event;   /* tracefs' events/header_*, or NULL */
        int clockid;                              /* of sample times; -1: no CLOCKID, CLOCK_DATA */
        uint64_t wall_ns, clock_ns;               /* one instant on CLOCK_REALTIME and on clockid */
};

/* Writes a perf pipe-mode stream's head to F, as `perf record -o -` does:
 * the 16-byte header, a HEADER_ATTR per event, HEADER_FEATURE records
 * (hostname, osrelease, version, arch, nrcpus, cmdline, event_desc,
 * clockid, clock_data) and, when an event has a format, the tracing data
 * (HEADER_TRACING_DATA). The kernel's records may follow as they are,
 * with FINISHED_ROUND records between rounds. 0, -E2BIG (an attr's ids or
 * a feature over a record's 64 KiB) or -EIO/-ENOMEM from F. */
int perfdata_write_pipe_header(FILE *f, const struct perfdata_out_event *events, size_t n,
                               const struct perfdata_out_info *info);

/* Rewrites the pipe-mode stream of SIZE bytes at DATA (as
 * perfdata_write_pipe_header() and the records after it make one) as a
 * file-mode perf.data to OUT: the attrs and their ids in the attrs
 * section, the kernel's records and FINISHED_ROUNDs in the data section,
 * the HEADER_FEATURE records and the tracing data as feature sections.
 * perf maps such a file rather than reading it a record at a time.
 * -EINVAL when DATA is not pipe mode, -EBADMSG when malformed (a record
 * past the end: a stream cut short), -EIO from OUT. */
int perfdata_pipe_to_file(const void *data, size_t size, FILE *out);

/* PERF_RECORD_LOST of LOST records, with the sample_id trailer of
 * IDENTIFIER | TID | TIME | CPU (the layout monitor gives every event)
 * naming ID, an id of the stream's events: for losses after the kernel's
 * own (a client that read too slowly). */
#define PERFDATA_LOST_RECORD_U64 7
void perfdata_lost_record(uint64_t id, uint64_t lost, uint32_t cpu, uint64_t time,
                          uint64_t ret[static PERFDATA_LOST_RECORD_U64]);

/* FINISHED_ROUND: every record before it is older than any after the
 * next one (perf's ordered events flush on it). */
static const struct perf_event_header perfdata_finished_round = {
        .type = PERFDATA_RECORD_FINISHED_ROUND,
        .size = sizeof(struct perf_event_header),
};
