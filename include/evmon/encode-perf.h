/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* src/encode/sample.c and record.c: every PERF_SAMPLE_* field and every
 * PERF_RECORD_* type as JSON, for evmond and evmonctl decode alike. The
 * line shapes are those of doc/protocol.md and doc/evmon.schema.json.
 * Nothing here allocates: lines go into the caller's struct jbuf. */

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

#include "evmon/monitor.h"

struct jbuf;

/* Names the event of a sample or read value id (PERF_FORMAT_ID), or NULL
 * when it is not known. The name must stay valid until the line is
 * written. */
typedef const char *(*encode_id_name_fn)(uint64_t id, void *userdata);

struct encode_ids {
        encode_id_name_fn name;         /* may be NULL: values carry ids only */
        void *userdata;
};

/* The sample fields every line carries at its top level ("time", "ts",
 * "cpu", "pid", "tid"), and IDENTIFIER, which only says which event the
 * line is for (its "event" does that): never repeated in "sample". */
#define ENCODE_SAMPLE_TOP \
        (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

/* Not a PERF_SAMPLE_* bit (the kernel's end far below it): in SHOW, it
 * makes "stack_user" carry its bytes as "data" (base64) beside its sizes.
 * Off by default: up to 64 KiB of stack a line that most clients never
 * read (subscribe's "stack_bytes", doc/protocol.md). */
#define ENCODE_SAMPLE_STACK_DATA (UINT64_C(1) << 63)

/* Worst-case bytes encode_sample_put() writes for the fields of S that
 * SHOW selects (sample_type & SHOW & ~ENCODE_SAMPLE_TOP); 0 when it
 * writes nothing. */
size_t encode_sample_max(const struct perf_sample *s, uint64_t show, const struct encode_ids *ids);

/* A callchain frame's name (src/context/ resolves them): SYM+OFF in
 * MODULE; SYM NULL when only the module is known, both NULL when nothing
 * is. */
struct encode_frame {
        const char *sym;
        uint64_t off;
        const char *module;
        const char *note;               /* without SYM: why the symbolizer lost it ("symbols"), or NULL */
};

/* The same with FRAMES (s->callchain.nr entries, or NULL): each callchain
 * segment then carries "syms", parallel to its "ips". */
size_t encode_sample_max_frames(const struct perf_sample *s, uint64_t show, const struct encode_ids *ids,
                                const struct encode_frame *frames);
char *encode_sample_put_frames(char *p, const struct perf_sample *s, uint64_t show, const struct encode_ids *ids,
                               const struct encode_frame *frames);

/* Writes ,"sample":{...} at P (which must have encode_sample_max() bytes)
 * and returns the new end; writes nothing when no field is selected. IDS
 * may be NULL. Decoded as perf script decodes them; see doc/protocol.md. */
char *encode_sample_put(char *p, const struct perf_sample *s, uint64_t show, const struct encode_ids *ids);

struct encode_record_opts {
        /* The attr's sample_type: which fields of rec->sid are real. */
        uint64_t sample_type;
        /* Wire name of the event the record came with ("software:dummy"),
         * or NULL for none ("event" is left out). */
        const char *event;
        /* "record" name to use instead of the built-in one (perf.data's
         * own record types), or NULL. */
        const char *record;
        /* Added to the sample_id time for "time" (wall clock). */
        int64_t realtime_offset_ns;
        struct encode_ids ids;          /* for PERF_RECORD_READ's values */
};

/* Appends one line, ending in '\n', for record REC (parsed by
 * record_parse() from H, which gives its size):
 *   {"type":"record","record":"comm","event":…,"time":…,"ts":N,"cpu":N,
 *    "pid":N,"tid":N,"fields":{…}}
 * time/ts, cpu, pid/tid (and "id", "stream_id" with PERF_SAMPLE_ID /
 * STREAM_ID) come from the sample_id trailer when rec->has_sid. A type
 * this encoder does not know is "unknown" with fields {"type":N,"size":N}.
 * PERF_RECORD_SAMPLE is not a record line (see encode_event()): -EINVAL.
 * 0, or -ENOMEM (the buffer is unchanged). */
int encode_record(struct jbuf *b, const struct perf_event_header *h, const struct perf_record *rec,
                  const struct encode_record_opts *opts);

/* "mmap2", "lost_samples", … for a kernel record type; NULL for SAMPLE
 * and for types this encoder does not know. */
const char *encode_record_name(uint32_t type);
