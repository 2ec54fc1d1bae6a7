/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* src/monitor/perfdata.c: perf.data files as `perf record` writes them to a
 * file (the "PERFILE2" layout of tools/perf/Documentation/
 * perf.data-file-format.txt, in this machine's byte order). The records of
 * the data section go through record_parse(), the tracepoint formats the
 * file carries (feature HEADER_TRACING_DATA) through format_parse(), so a
 * recorded sample decodes exactly as a live one does.
 *
 * Not read: pipe-mode output (`perf record -o -`), files of the other byte
 * order, the old "PERFFILE" layout, and compressed data (`perf record -z`):
 * those give -EPROTONOSUPPORT or -EOPNOTSUPP, see perfdata_unsupported().
 * Functions return 0 (or 1, a count) on success and -errno on failure;
 * none prints. Malformed input gives -EBADMSG and is never read past. */

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
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
        PERFDATA_FEAT_MAX = 256,
};

/* perf's own record types (tools/lib/perf/include/perf/event.h): numbers
 * from PERF_RECORD_USER_TYPE_START on are written by the tool, never by
 * the kernel. */
enum {
        PERFDATA_RECORD_USER_TYPE_START = 64,
        PERFDATA_RECORD_FINISHED_ROUND = 68,
        PERFDATA_RECORD_AUXTRACE = 71,
        PERFDATA_RECORD_COMPRESSED = 81,
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

struct perfdata;

/* Maps the file PATH and reads its header, attrs, event names and
 * tracepoint formats. -EBADMSG when it is not a well-formed perf.data file
 * (truncated, sections out of bounds), -EPROTONOSUPPORT for a variant this
 * reader does not take (perfdata_unsupported() says which), -EOPNOTSUPP
 * for compressed data. The caller owns *ret. */
int perfdata_open(const char *path, struct perfdata **ret);
/* The same on SIZE bytes at DATA, which must stay valid (and unchanged)
 * until perfdata_free(). */
int perfdata_new(const void *data, size_t size, struct perfdata **ret);
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

struct perfdata_record {
        uint64_t offset;                        /* of the record in the file */
        const struct perf_event_header *header; /* 8-byte aligned, valid until the next call */
        /* The event whose attr laid the record out, found by its sample id
         * (PERF_SAMPLE_IDENTIFIER or PERF_SAMPLE_ID); the only event when
         * there is one. NULL for perf's own record types, and for a record
         * whose id names no event (rec is then not parsed: type and misc only). */
        const struct perfdata_event *event;
        bool parsed;                            /* rec holds the fields, not only type and misc */
        struct perf_record rec;                 /* pointers into the record */
};

/* Reads the next record of the data section, in file order (perf writes
 * each CPU buffer's records in turn: not sorted by time across CPUs).
 * Returns 1 with *ret filled, 0 at the end, -EBADMSG for a malformed record
 * (reading stops there), -EOPNOTSUPP at a PERF_RECORD_COMPRESSED or a
 * sample whose sample_type has bits of unknown layout. */
int perfdata_next(struct perfdata *pd, struct perfdata_record *ret);
/* Back to the first record. */
void perfdata_rewind(struct perfdata *pd);
/* File offset of the record perfdata_next() reads next, or stopped at. */
uint64_t perfdata_offset(const struct perfdata *pd);

/* "SAMPLE", "MMAP2", ... for kernel types, "FINISHED_ROUND", "ID_INDEX",
 * ... for perf's own; NULL when unknown. */
const char *perfdata_record_type_to_string(uint32_t type);
