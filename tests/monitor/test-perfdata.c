/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The perf.data reader on files perf 6.1 recorded (fixtures/perfdata/,
 * made by record.sh there): event names and formats from the file's
 * tracing data, samples told apart by PERF_SAMPLE_ID and by IDENTIFIER,
 * the clock reference, every record of the data section; then the same
 * files cut at every length, bytes flipped, records broken, the variants
 * we refuse. Nothing may crash or read past the buffer (the buffers are
 * allocated to the exact size, so ASan sees an over-read). */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "evmon/cleanup.h"
#include "evmon/perfdata.h"

#define FIXTURES "tests/monitor/fixtures/perfdata/"

/* Offsets of struct perf_file_header fields (perf.data-file-format.txt). */
#define HDR_DATA_OFFSET 40
#define HDR_DATA_SIZE 48
#define HDR_FEATURES 72

struct blob {
        uint8_t *data;
        size_t size;
};

static struct blob load(const char *name) {
        const char *root = getenv("EVMON_SOURCE_ROOT");
        char path[1024];
        struct blob b = {};
        struct stat st;
        FILE *f;

        snprintf(path, sizeof(path), "%s/" FIXTURES "%s", root ? root : ".", name);
        f = fopen(path, "re");
        if (!f)
                fail_msg("cannot open fixture %s (is EVMON_SOURCE_ROOT set?)", path);
        assert_int_equal(fstat(fileno(f), &st), 0);
        b.size = (size_t) st.st_size;
        b.data = malloc(b.size);
        assert_non_null(b.data);
        assert_int_equal(fread(b.data, 1, b.size, f), b.size);
        fclose(f);
        return b;
}

static char *fixture_path(const char *name) {
        const char *root = getenv("EVMON_SOURCE_ROOT");
        char *p;

        assert_true(asprintf(&p, "%s/" FIXTURES "%s", root ? root : ".", name) > 0);
        return p;
}

static uint64_t get_u64(const uint8_t *p) {
        uint64_t v;

        memcpy(&v, p, 8);
        return v;
}

static void put_u64(uint8_t *p, uint64_t v) {
        memcpy(p, &v, 8);
}

/* A field of a raw tracepoint record, by name. */
static const struct format_field *field(const struct format *f, const char *name) {
        const struct format_field *ff = format_field_find(f, name);

        if (!ff)
                fail_msg("no field %s in %s", name, f->name);
        return ff;
}

static int64_t field_int(const struct format *f, const struct perf_sample *s, const char *name) {
        struct field_value v;

        assert_int_equal(field_decode(field(f, name), s->raw.data, s->raw.size, &v), 0);
        return v.i;
}

static char *field_str(const struct format *f, const struct perf_sample *s, const char *name) {
        struct field_value v;
        char *r;

        assert_int_equal(field_decode(field(f, name), s->raw.data, s->raw.size, &v), 0);
        r = strndup(v.str.ptr, v.str.len);
        assert_non_null(r);
        return r;
}

/* What a walk over the data section found. */
struct tally {
        size_t records;
        size_t by_type[128];
        size_t samples[4];              /* per event index */
        size_t unknown;                 /* records whose id named no event */
        size_t unparsed;
        size_t misaligned;              /* headers handed out not 8-byte aligned */
        uint64_t last_offset;
        int end;                        /* what perfdata_next() returned last */
};

static struct tally walk(struct perfdata *pd) {
        struct tally t = {};
        struct perfdata_record pr;
        int r;

        while ((r = perfdata_next(pd, &pr)) > 0) {
                t.records++;
                if (pr.rec.type < ELEMENTSOF(t.by_type))
                        t.by_type[pr.rec.type]++;
                if ((uintptr_t) pr.header % 8 != 0)
                        t.misaligned++;
                if (pr.offset != 0 && pr.offset <= t.last_offset)
                        fail_msg("records out of order at %llu", (unsigned long long) pr.offset);
                t.last_offset = pr.offset;
                if (pr.rec.type < PERFDATA_RECORD_USER_TYPE_START) {
                        if (!pr.event)
                                t.unknown++;
                        if (!pr.parsed)
                                t.unparsed++;
                }
                if (pr.rec.type == PERF_RECORD_SAMPLE && pr.event)
                        for (size_t i = 0; i < perfdata_n_events(pd) && i < ELEMENTSOF(t.samples); i++)
                                if (pr.event == perfdata_event(pd, i))
                                        t.samples[i]++;
        }
        t.end = r;
        return t;
}

/* ---- task.data: two events told apart by PERF_SAMPLE_ID, clock data --- */

static void test_task_events(void **state) {
        struct blob b = load("task.data");
        _cleanup_(perfdata_freep) struct perfdata *pd = NULL;
        const struct perfdata_event *exec, *getppid;
        struct perfdata_clock clock;

        assert_int_equal(perfdata_new(b.data, b.size, &pd), 0);
        assert_int_equal(perfdata_n_events(pd), 2);
        assert_null(perfdata_event(pd, 2));
        exec = perfdata_event(pd, 0);
        getppid = perfdata_event(pd, 1);

        assert_string_equal(exec->name, "sched:sched_process_exec");
        assert_int_equal(exec->attr.type, PERF_TYPE_TRACEPOINT);
        assert_int_equal(exec->attr.config, 312);
        assert_non_null(exec->format);
        assert_string_equal(exec->format->system, "sched");
        assert_string_equal(exec->format->name, "sched_process_exec");
        assert_int_equal(exec->format->id, 312);
        assert_int_equal(exec->n_ids, 2);
        assert_int_equal(exec->ids[0], 7);
        assert_int_equal(exec->ids[1], 8);

        assert_string_equal(getppid->name, "syscalls:sys_enter_getppid");
        assert_non_null(getppid->format);
        assert_int_equal(getppid->format->id, 232);
        assert_int_equal(getppid->n_ids, 2);
        assert_int_equal(getppid->ids[0], 9);
        assert_int_equal(getppid->ids[1], 10);
        /* perf 6.1 marks two tracepoints apart with ID, not IDENTIFIER. */
        assert_true(getppid->attr.sample_type & PERF_SAMPLE_ID);
        assert_false(getppid->attr.sample_type & PERF_SAMPLE_IDENTIFIER);
        assert_true(getppid->attr.use_clockid);
        assert_int_equal(getppid->attr.clockid, CLOCK_MONOTONIC);
        assert_int_equal(perfdata_n_bad_formats(pd), 0);

        assert_true(perfdata_has_feature(pd, PERFDATA_FEAT_TRACING_DATA));
        assert_true(perfdata_has_feature(pd, PERFDATA_FEAT_CLOCK_DATA));
        assert_false(perfdata_has_feature(pd, PERFDATA_FEAT_COMPRESSED));
        assert_false(perfdata_has_feature(pd, 256));
        assert_int_equal(perfdata_clock(pd, &clock), 0);
        assert_int_equal(clock.clockid, CLOCK_MONOTONIC);
        assert_int_equal(clock.wall_ns, 1795265107703078000ULL);
        assert_int_equal(clock.clock_ns, 2795917059ULL);

        pd = perfdata_free(pd);
        assert_null(pd);
        free(b.data);
}

static void test_task_samples(void **state) {
        static const uint64_t getppid_ts[] = { 3049858549, 3049927759, 3049932699, 3049936259, 3049940089 };
        static const char *const exec_files[] = { "/usr/local/bin/evmon-fx-workload", "/usr/local/bin/evmon-fx-true" };
        struct blob b = load("task.data");
        _cleanup_(perfdata_freep) struct perfdata *pd = NULL;
        struct perfdata_record pr;
        size_t n_exec = 0, n_getppid = 0;
        struct tally t;
        int r;

        assert_int_equal(perfdata_new(b.data, b.size, &pd), 0);
        while ((r = perfdata_next(pd, &pr)) > 0) {
                const struct perf_sample *s = &pr.rec.sample;
                const struct format *f;
                char *str;

                if (pr.rec.type != PERF_RECORD_SAMPLE)
                        continue;
                assert_non_null(pr.event);
                assert_true(pr.parsed);
                f = pr.event->format;
                assert_int_equal(s->pid, 102);
                assert_int_equal(s->tid, 102);
                assert_int_equal(s->cpu, 0);
                assert_int_equal(s->period, 1);
                assert_true(s->raw.size >= f->min_size);
                assert_int_equal(field_int(f, s, "common_pid"), 102);
                if (pr.event == perfdata_event(pd, 0)) {
                        assert_true(n_exec < 2);
                        assert_true(s->id == 7 || s->id == 8);
                        str = field_str(f, s, "filename");
                        assert_string_equal(str, exec_files[n_exec]);
                        free(str);
                        assert_int_equal(field_int(f, s, "pid"), 102);
                        assert_int_equal(field_int(f, s, "old_pid"), 102);
                        assert_int_equal(s->time, n_exec == 0 ? 3038457969ULL : 3052567719ULL);
                        n_exec++;
                } else {
                        assert_ptr_equal(pr.event, perfdata_event(pd, 1));
                        assert_true(n_getppid < 5);
                        assert_true(s->id == 9 || s->id == 10);
                        assert_int_equal(field_int(f, s, "__syscall_nr"), 110);    /* x86-64 getppid */
                        assert_int_equal(s->time, getppid_ts[n_getppid]);
                        n_getppid++;
                }
        }
        assert_int_equal(r, 0);
        assert_int_equal(n_exec, 2);
        assert_int_equal(n_getppid, 5);

        /* Again from the start: every record, as perf report -D counts them. */
        perfdata_rewind(pd);
        t = walk(pd);
        assert_int_equal(t.end, 0);
        assert_int_equal(t.records, 21);
        assert_int_equal(t.by_type[PERF_RECORD_SAMPLE], 7);
        assert_int_equal(t.by_type[PERF_RECORD_MMAP], 1);
        assert_int_equal(t.by_type[PERF_RECORD_MMAP2], 4);
        assert_int_equal(t.by_type[PERF_RECORD_COMM], 3);
        assert_int_equal(t.by_type[PERF_RECORD_EXIT], 1);
        assert_int_equal(t.by_type[PERFDATA_RECORD_FINISHED_ROUND], 1);
        assert_int_equal(t.by_type[69], 1);     /* ID_INDEX */
        assert_int_equal(t.by_type[73], 1);     /* THREAD_MAP */
        assert_int_equal(t.by_type[74], 1);     /* CPU_MAP */
        assert_int_equal(t.by_type[82], 1);     /* FINISHED_INIT */
        /* perf's synthesized kernel MMAP and first COMM carry id 0, and
         * still parse: every event lays the trailer out alike. */
        assert_int_equal(t.unknown, 2);
        assert_int_equal(t.unparsed, 0);
        assert_int_equal(t.misaligned, 0);
        assert_int_equal(perfdata_offset(pd), 424 + 1704);
        assert_int_equal(perfdata_next(pd, &pr), 0);

        free(b.data);
}

/* ---- single.data: one event, no sample id, no clock data ------------- */

static void test_single(void **state) {
        struct blob b = load("single.data");
        _cleanup_(perfdata_freep) struct perfdata *pd = NULL;
        struct perfdata_clock clock;
        struct perfdata_record pr;
        size_t n = 0;
        int r;

        assert_int_equal(perfdata_new(b.data, b.size, &pd), 0);
        assert_int_equal(perfdata_n_events(pd), 1);
        assert_string_equal(perfdata_event(pd, 0)->name, "syscalls:sys_enter_getppid");
        assert_false(perfdata_event(pd, 0)->attr.sample_type & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER));
        assert_int_equal(perfdata_clock(pd, &clock), -ENODATA);
        assert_false(perfdata_has_feature(pd, PERFDATA_FEAT_CLOCK_DATA));

        while ((r = perfdata_next(pd, &pr)) > 0) {
                if (pr.rec.type >= PERFDATA_RECORD_USER_TYPE_START) {
                        assert_null(pr.event);
                        continue;
                }
                /* The only event owns every kernel record. */
                assert_ptr_equal(pr.event, perfdata_event(pd, 0));
                assert_true(pr.parsed);
                if (pr.rec.type != PERF_RECORD_SAMPLE)
                        continue;
                assert_int_equal(pr.rec.sample.pid, 105);
                assert_int_equal(field_int(pr.event->format, &pr.rec.sample, "__syscall_nr"), 110);
                n++;
        }
        assert_int_equal(r, 0);
        assert_int_equal(n, 5);
        free(b.data);
}

/* ---- sys.data: -a, IDENTIFIER, a dummy event, synthesized records ---- */

static void test_sys(void **state) {
        struct blob b = load("sys.data");
        _cleanup_(perfdata_freep) struct perfdata *pd = NULL;
        struct perfdata_record pr;
        const struct perfdata_event *dummy;
        bool seen_exec_true = false;
        struct tally t;
        int r;

        assert_int_equal(perfdata_new(b.data, b.size, &pd), 0);
        assert_int_equal(perfdata_n_events(pd), 3);
        assert_string_equal(perfdata_event(pd, 0)->name, "sched:sched_process_exec");
        assert_string_equal(perfdata_event(pd, 1)->name, "syscalls:sys_enter_getppid");
        /* Not a tracepoint: named by HEADER_EVENT_DESC, no format. */
        dummy = perfdata_event(pd, 2);
        assert_string_equal(dummy->name, "dummy:HG");
        assert_int_equal(dummy->attr.type, PERF_TYPE_SOFTWARE);
        assert_int_equal(dummy->attr.config, PERF_COUNT_SW_DUMMY);
        assert_null(dummy->format);
        assert_int_equal(dummy->ids[0], 35);
        for (size_t i = 0; i < 3; i++)
                assert_true(perfdata_event(pd, i)->attr.sample_type & PERF_SAMPLE_IDENTIFIER);
        assert_int_equal(perfdata_clock(pd, &(struct perfdata_clock) {}), -ENODATA);

        t = walk(pd);
        assert_int_equal(t.end, 0);
        assert_int_equal(t.records, 199);
        assert_int_equal(t.samples[0], 2);
        assert_int_equal(t.samples[1], 5);
        assert_int_equal(t.samples[2], 0);
        assert_int_equal(t.by_type[PERF_RECORD_FORK], 58);
        assert_int_equal(t.by_type[PERF_RECORD_COMM], 60);
        assert_int_equal(t.by_type[PERF_RECORD_MMAP2], 66);
        assert_int_equal(t.by_type[PERF_RECORD_EXIT], 1);
        assert_int_equal(t.by_type[PERFDATA_RECORD_FINISHED_ROUND], 2);
        assert_int_equal(t.unparsed, 0);
        /* What perf synthesized for the tasks already running has id 0. */
        assert_int_equal(t.unknown, 178);

        perfdata_rewind(pd);
        while ((r = perfdata_next(pd, &pr)) > 0) {
                /* The workload's own exec COMM came from the kernel, through
                 * the dummy event (the one with comm = 1). */
                if (pr.rec.type == PERF_RECORD_COMM && pr.rec.comm.pid == 108 &&
                    strcmp(pr.rec.comm.comm, "evmon-fx-true") == 0) {
                        assert_ptr_equal(pr.event, dummy);
                        assert_true(pr.rec.has_sid);
                        assert_int_equal(pr.rec.sid.id, 35 + pr.rec.sid.cpu);
                        assert_true(pr.rec.misc & PERF_RECORD_MISC_COMM_EXEC);
                        seen_exec_true = true;
                }
                if (pr.rec.type == PERF_RECORD_SAMPLE && pr.event == perfdata_event(pd, 0)) {
                        char *f = field_str(pr.event->format, &pr.rec.sample, "filename");
                        assert_int_equal(pr.rec.sample.pid, 108);
                        assert_true(strncmp(f, "/usr/local/bin/evmon-fx-", 24) == 0);
                        free(f);
                }
        }
        assert_int_equal(r, 0);
        assert_true(seen_exec_true);
        free(b.data);
}

/* ---- broken input ---------------------------------------------------- */

/* Every cut of a file: refused when opened (the header or the attrs are
 * cut), or every record that ends before the cut in file order and then
 * -EBADMSG naming where the data stops (a cut data section, or feature
 * sections missing after whole records). In exact-size buffers nothing is
 * read past the end. */
static void test_truncated(void **state) {
        static const char *const names[] = { "task.data", "single.data", "sys.data" };

        for (size_t k = 0; k < ELEMENTSOF(names); k++) {
                struct blob b = load(names[k]);
                struct perfdata *whole = NULL;
                struct perfdata_record pr;
                uint64_t ends[4096];
                size_t n_records = 0, opened = 0;

                assert_int_equal(perfdata_new(b.data, b.size, &whole), 0);
                while (perfdata_next(whole, &pr) > 0) {
                        assert_true(n_records < ELEMENTSOF(ends));
                        ends[n_records++] = pr.offset + pr.header->size;
                }
                perfdata_free(whole);

                for (size_t n = 0; n < b.size; n++) {
                        struct perfdata *pd = NULL;
                        uint8_t *cut = malloc(n ? n : 1);
                        size_t want = 0, got = 0;
                        int r;

                        assert_non_null(cut);
                        memcpy(cut, b.data, n);
                        r = perfdata_new(cut, n, &pd);
                        if (r < 0) {
                                if (r != -EBADMSG)
                                        fail_msg("%s cut at %zu: %d, not -EBADMSG", names[k], n, r);
                                assert_null(pd);
                                free(cut);
                                continue;
                        }
                        opened++;
                        for (size_t i = 0; i < n_records; i++)
                                if (ends[i] <= n)
                                        want++;
                        while ((r = perfdata_next(pd, &pr)) > 0)
                                got++;
                        if (r != -EBADMSG || got != want)
                                fail_msg("%s cut at %zu: %zu records then %d, want %zu then -EBADMSG",
                                         names[k], n, got, r, want);
                        assert_true(perfdata_offset(pd) <= n);
                        perfdata_free(pd);
                        free(cut);
                }
                assert_true(opened > 0);
                free(b.data);
        }
}

/* Byte flips anywhere: open and walk give an answer or an error, never a
 * crash or an endless walk. */
static void test_flipped(void **state) {
        static const char *const names[] = { "task.data", "sys.data" };
        uint32_t seed = 12345;
        size_t opened = 0, failed = 0;

        for (size_t k = 0; k < ELEMENTSOF(names); k++) {
                struct blob b = load(names[k]);

                for (int i = 0; i < 4000; i++) {
                        struct perfdata *pd = NULL;
                        uint8_t *m = malloc(b.size);
                        int nflip, r;

                        assert_non_null(m);
                        memcpy(m, b.data, b.size);
                        seed = seed * 1103515245 + 12345;
                        nflip = 1 + (int) (seed >> 16) % 4;
                        for (int j = 0; j < nflip; j++) {
                                size_t at;

                                seed = seed * 1103515245 + 12345;
                                /* Mostly the header, attrs and records. */
                                at = (seed >> 8) % (i % 4 == 0 ? b.size : 2600);
                                seed = seed * 1103515245 + 12345;
                                m[at] ^= (uint8_t) (1u << ((seed >> 16) % 8));
                        }
                        r = perfdata_new(m, b.size, &pd);
                        if (r < 0) {
                                assert_true(r == -EBADMSG || r == -EOPNOTSUPP || r == -EPROTONOSUPPORT);
                                failed++;
                        } else {
                                struct perfdata_record pr;
                                size_t steps = 0;

                                opened++;
                                while ((r = perfdata_next(pd, &pr)) > 0) {
                                        assert_true(++steps <= b.size / 8);
                                        if (pr.rec.type == PERF_RECORD_SAMPLE && pr.event && pr.event->format)
                                                for (size_t fi = 0; fi < pr.event->format->n_fields; fi++) {
                                                        struct field_value v;
                                                        (void) field_decode(&pr.event->format->fields[fi], pr.rec.sample.raw.data,
                                                                            pr.rec.sample.raw.size, &v);
                                                }
                                }
                                assert_true(r == 0 || r == -EBADMSG || r == -EOPNOTSUPP);
                                perfdata_free(pd);
                        }
                        free(m);
                }
                free(b.data);
        }
        /* Both outcomes happened: the flips reached what is checked and
         * what is merely data. */
        assert_true(opened > 0);
        assert_true(failed > 0);
}

static uint64_t first_record_of(const struct blob *b, uint32_t type) {
        _cleanup_(perfdata_freep) struct perfdata *pd = NULL;
        struct perfdata_record pr;

        assert_int_equal(perfdata_new(b->data, b->size, &pd), 0);
        while (perfdata_next(pd, &pr) > 0)
                if (pr.rec.type == type)
                        return pr.offset;
        fail_msg("no record of type %u", type);
        return 0;
}

static void set_u16(uint8_t *p, uint16_t v) {
        memcpy(p, &v, 2);
}

static void test_bad_records(void **state) {
        struct blob b = load("task.data");
        uint64_t data = get_u64(b.data + HDR_DATA_OFFSET);
        uint64_t sample = first_record_of(&b, PERF_RECORD_SAMPLE);
        uint64_t round = first_record_of(&b, PERFDATA_RECORD_FINISHED_ROUND);
        struct perfdata_record pr;
        struct perfdata *pd;
        uint8_t *m = malloc(b.size);
        struct tally t;

        assert_non_null(m);
        assert_int_equal(data, 424);

        /* A size below the header's own. */
        memcpy(m, b.data, b.size);
        set_u16(m + data + 6, 4);
        assert_int_equal(perfdata_new(m, b.size, &pd), 0);
        assert_int_equal(perfdata_next(pd, &pr), -EBADMSG);
        assert_int_equal(perfdata_offset(pd), data);
        assert_int_equal(perfdata_next(pd, &pr), -EBADMSG);        /* stays there */
        perfdata_free(pd);

        /* A size past the end of the data section. */
        memcpy(m, b.data, b.size);
        set_u16(m + data + 6, 0xfff8);
        assert_int_equal(perfdata_new(m, b.size, &pd), 0);
        assert_int_equal(perfdata_next(pd, &pr), -EBADMSG);
        perfdata_free(pd);

        /* A sample too short to hold the id that says whose it is. */
        memcpy(m, b.data, b.size);
        set_u16(m + sample + 6, 24);
        assert_int_equal(perfdata_new(m, b.size, &pd), 0);
        t = walk(pd);
        assert_int_equal(t.end, -EBADMSG);
        assert_int_equal(perfdata_offset(pd), sample);
        assert_int_equal(t.by_type[PERF_RECORD_SAMPLE], 0);
        perfdata_free(pd);

        /* An id no event has: handed out unparsed, the walk goes on. */
        memcpy(m, b.data, b.size);
        put_u64(m + sample + 8 + 3 * 8, 999);        /* after IP, TID, TIME */
        assert_int_equal(perfdata_new(m, b.size, &pd), 0);
        t = walk(pd);
        assert_int_equal(t.end, 0);
        assert_int_equal(t.by_type[PERF_RECORD_SAMPLE], 7);
        assert_int_equal(t.samples[0] + t.samples[1], 6);
        assert_int_equal(t.unparsed, 1);
        perfdata_free(pd);

        /* A compressed record whose payload is not zstd data stops the
         * walk there; an empty one is nothing. */
        memcpy(m, b.data, b.size);
        set_u16(m + sample, PERFDATA_RECORD_COMPRESSED);   /* type is a u32; 81 fits its low half */
        assert_int_equal(perfdata_new(m, b.size, &pd), 0);
        t = walk(pd);
        assert_int_equal(t.end, -EBADMSG);
        assert_int_equal(perfdata_offset(pd), sample);
        assert_int_equal(t.by_type[PERF_RECORD_SAMPLE], 0);
        perfdata_free(pd);
        memcpy(m, b.data, b.size);
        set_u16(m + round, PERFDATA_RECORD_COMPRESSED);
        assert_int_equal(perfdata_new(m, b.size, &pd), 0);
        t = walk(pd);
        assert_int_equal(t.end, 0);
        assert_int_equal(t.by_type[PERF_RECORD_SAMPLE], 7);
        assert_int_equal(t.by_type[PERFDATA_RECORD_FINISHED_ROUND], 0);
        perfdata_free(pd);

        /* Data section beyond the file: the records, then the error. */
        memcpy(m, b.data, b.size);
        put_u64(m + HDR_DATA_SIZE, b.size);
        assert_int_equal(perfdata_new(m, b.size, &pd), 0);
        t = walk(pd);
        assert_int_equal(t.end, -EBADMSG);
        assert_int_equal(t.by_type[PERF_RECORD_SAMPLE], 7);
        perfdata_free(pd);

        free(m);
        free(b.data);
}

/* The file with feature BIT set and an empty section for it in the table. */
static uint8_t *with_feature(const struct blob *b, unsigned bit) {
        uint64_t features[4], table = get_u64(b->data + HDR_DATA_OFFSET) + get_u64(b->data + HDR_DATA_SIZE);
        size_t n = 0, before = 0;
        uint8_t *m = malloc(b->size + 16);

        assert_non_null(m);
        memcpy(features, b->data + HDR_FEATURES, sizeof(features));
        assert_false(features[bit / 64] & (1ULL << (bit % 64)));
        for (unsigned i = 0; i < 256; i++)
                if (features[i / 64] & (1ULL << (i % 64))) {
                        n++;
                        if (i < bit)
                                before++;
                }
        memcpy(m, b->data, table + 16 * before);
        memset(m + table + 16 * before, 0, 16);
        memcpy(m + table + 16 * (before + 1), b->data + table + 16 * before, b->size - table - 16 * before);
        /* Everything after the table moved by one entry. */
        for (size_t i = 0; i <= n; i++) {
                uint8_t *e = m + table + 16 * i;

                if (i != before)
                        put_u64(e, get_u64(e) + 16);
        }
        features[bit / 64] |= 1ULL << (bit % 64);
        memcpy(m + HDR_FEATURES, features, sizeof(features));
        return m;
}

static void test_unsupported(void **state) {
        struct blob b = load("single.data");
        struct perfdata *pd = NULL;
        struct perfdata_record pr;
        uint8_t head[120] = {};
        uint8_t *m;
        uint64_t v;

        /* The table rewrite itself is right: a harmless bit opens. */
        m = with_feature(&b, 18);       /* HEADER_AUXTRACE, an empty index here */
        assert_int_equal(perfdata_new(m, b.size + 16, &pd), 0);
        assert_true(perfdata_has_feature(pd, 18));
        assert_int_equal(walk(pd).by_type[PERF_RECORD_SAMPLE], 5);
        pd = perfdata_free(pd);
        free(m);

        /* Pipe mode: { "PERFILE2", 16 } and the rest in-band; here records
         * of size 0 right after it, which is damage at offset 16. */
        memcpy(head, b.data, 8);
        v = 16;
        memcpy(head + 8, &v, 8);
        assert_int_equal(perfdata_new(head, sizeof(head), &pd), 0);
        assert_true(perfdata_pipe(pd));
        assert_int_equal(perfdata_n_events(pd), 0);
        assert_int_equal(perfdata_next(pd, &pr), -EBADMSG);
        assert_int_equal(perfdata_offset(pd), 16);
        pd = perfdata_free(pd);
        /* ... and nothing after the pipe header is an empty stream. */
        assert_int_equal(perfdata_new(head, 16, &pd), 0);
        assert_int_equal(perfdata_next(pd, &pr), 0);
        pd = perfdata_free(pd);

        /* The first layout. */
        memcpy(head, "PERFFILE", 8);
        assert_int_equal(perfdata_new(head, sizeof(head), &pd), -EPROTONOSUPPORT);
        assert_non_null(strstr(perfdata_unsupported(head, sizeof(head)), "PERFFILE"));

        /* Not perf.data at all. */
        memcpy(head, "\177ELF\2\1\1\0", 8);
        assert_int_equal(perfdata_new(head, sizeof(head), &pd), -EBADMSG);
        assert_null(perfdata_unsupported(head, sizeof(head)));
        assert_null(perfdata_unsupported(head, 4));
        assert_null(pd);

        free(b.data);
}

/* Records at odd addresses are copied before parsing: same results. */
static void test_misaligned(void **state) {
        struct blob b = load("task.data");
        _cleanup_(perfdata_freep) struct perfdata *pd = NULL;
        uint8_t *m = malloc(b.size + 3);
        struct tally t;

        assert_non_null(m);
        memcpy(m + 3, b.data, b.size);
        assert_int_equal(perfdata_new(m + 3, b.size, &pd), 0);
        t = walk(pd);
        assert_int_equal(t.end, 0);
        assert_int_equal(t.records, 21);
        assert_int_equal(t.samples[0], 2);
        assert_int_equal(t.samples[1], 5);
        assert_int_equal(t.misaligned, 0);
        pd = perfdata_free(pd);
        free(m);
        free(b.data);
}

static void test_open_errors(void **state) {
        struct perfdata *pd = NULL;
        char *dir = fixture_path("");

        assert_int_equal(perfdata_open("/nonexistent/perf.data", &pd), -ENOENT);
        assert_int_equal(perfdata_open(dir, &pd), -EISDIR);
        /* Not a regular file: read, not mapped; empty is malformed. */
        assert_int_equal(perfdata_open("/dev/null", &pd), -EBADMSG);
        assert_int_equal(perfdata_new(NULL, 0, &pd), -EINVAL);
        assert_null(pd);
        assert_null(perfdata_free(NULL));
        assert_int_equal(perfdata_n_events(NULL), 0);
        free(dir);
}

/* Records of one time go out in the order they were read, as perf's
 * ordered events give them (ordered-events.c queue_event() puts a record
 * after every queued one whose time is not later): `perf script` and
 * `evmonctl decode` agree on equal-time samples of several CPUs. A pipe
 * file made here: one attr, then samples of four CPUs in two rounds,
 * four of them at time 200, read in CPU order 1, 0, 2, 0. */
struct crafted {
        uint8_t *p;
        size_t n;
};

static void crafted_put(struct crafted *c, const void *data, size_t size) {
        memcpy(c->p + c->n, data, size);
        c->n += size;
}

static void crafted_sample(struct crafted *c, uint64_t time, uint32_t cpu) {
        struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .size = sizeof(h) + 24 };
        uint32_t pid_tid[2] = { 42, 42 }, cpu_res[2] = { cpu, 0 };

        crafted_put(c, &h, sizeof(h));
        crafted_put(c, pid_tid, sizeof(pid_tid));
        crafted_put(c, &time, sizeof(time));
        crafted_put(c, cpu_res, sizeof(cpu_res));
}

static void crafted_round(struct crafted *c) {
        struct perf_event_header h = { .type = PERFDATA_RECORD_FINISHED_ROUND, .size = sizeof(h) };

        crafted_put(c, &h, sizeof(h));
}

static void test_equal_times(void **state) {
        static const struct { uint64_t time; uint32_t cpu; } want[] = {
                { 100, 3 }, { 150, 1 }, { 200, 1 }, { 200, 0 }, { 200, 2 }, { 200, 0 },
        };
        uint64_t magic = 0x32454c4946524550ULL, size = 16, id = 1;
        struct perf_event_attr attr = {
                .type = PERF_TYPE_SOFTWARE,
                .size = sizeof(attr),
                .config = PERF_COUNT_SW_CPU_CLOCK,
                .sample_period = 1,
                .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU,
        };
        struct perf_event_header ah = {
                .type = PERFDATA_RECORD_HEADER_ATTR,
                .size = sizeof(ah) + sizeof(attr) + sizeof(id),
        };
        struct perfdata *pd = NULL;
        struct perfdata_record pr;
        struct crafted c = { .p = calloc(1, 4096) };
        size_t k = 0;

        assert_non_null(c.p);
        crafted_put(&c, &magic, sizeof(magic));
        crafted_put(&c, &size, sizeof(size));
        crafted_put(&c, &ah, sizeof(ah));
        crafted_put(&c, &attr, sizeof(attr));
        crafted_put(&c, &id, sizeof(id));
        crafted_sample(&c, 200, 1);
        crafted_sample(&c, 200, 0);
        crafted_sample(&c, 100, 3);
        crafted_sample(&c, 200, 2);
        crafted_round(&c);      /* flushes nothing: no round before it */
        crafted_sample(&c, 200, 0);
        crafted_sample(&c, 150, 1);
        crafted_round(&c);      /* flushes up to 200: all of them */

        assert_int_equal(perfdata_new(c.p, c.n, &pd), 0);
        assert_int_equal(perfdata_set_order(pd, PERFDATA_ORDER_TIME), 0);
        while (perfdata_next(pd, &pr) > 0) {
                if (pr.rec.type != PERF_RECORD_SAMPLE)
                        continue;
                assert_true(k < ELEMENTSOF(want));
                assert_int_equal(pr.rec.sample.time, want[k].time);
                assert_int_equal(pr.rec.sample.cpu, want[k].cpu);
                k++;
        }
        assert_int_equal(k, ELEMENTSOF(want));
        perfdata_free(pd);
        free(c.p);
}

static void test_type_names(void **state) {
        assert_string_equal(perfdata_record_type_to_string(PERF_RECORD_SAMPLE), "SAMPLE");
        assert_string_equal(perfdata_record_type_to_string(PERF_RECORD_MMAP2), "MMAP2");
        assert_string_equal(perfdata_record_type_to_string(64), "HEADER_ATTR");
        assert_string_equal(perfdata_record_type_to_string(PERFDATA_RECORD_FINISHED_ROUND), "FINISHED_ROUND");
        assert_string_equal(perfdata_record_type_to_string(PERFDATA_RECORD_COMPRESSED), "COMPRESSED");
        assert_string_equal(perfdata_record_type_to_string(82), "FINISHED_INIT");
        assert_null(perfdata_record_type_to_string(50));
        assert_null(perfdata_record_type_to_string(200));
}

/* perfdata-write.c's head, with records after it, read back by the
 * reader: the event, its name, its format from the tracing data, the
 * features and the clock reference, then a sample, a FINISHED_ROUND and
 * a LOST record in order. (test-record.py holds the same against perf.) */
static void test_write_pipe(void **state) {
        static const char fmt[] =
                "name: evt\nID: 42\nformat:\n"
                "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
                "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
                "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
                "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
                "\tfield:int x;\toffset:8;\tsize:4;\tsigned:1;\n\n"
                "print fmt: \"x=%d\", REC->x\n";
        static const uint64_t ids[] = { 7, 9 };
        static const char *const cmdline[] = { "evmond", "--test", NULL };
        struct perfdata_out_event ev = {
                .attr = {
                        .type = PERF_TYPE_TRACEPOINT, .size = sizeof(struct perf_event_attr), .config = 42,
                        .sample_period = 1, .sample_id_all = 1,
                        .sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                                       PERF_SAMPLE_CPU | PERF_SAMPLE_RAW,
                },
                .ids = ids, .n_ids = 2, .name = "test:evt", .system = "test", .format_text = fmt,
        };
        struct perfdata_out_info info = {
                .hostname = "host", .osrelease = "6.1", .version = "#1", .arch = "x86_64",
                .nr_cpus_avail = 4, .nr_cpus_online = 2, .cmdline = cmdline, .page_size = 4096,
                .header_page = "field: u64 timestamp;\n", .header_event = "# compressed entry header\n",
                .clockid = CLOCK_MONOTONIC, .wall_ns = 1000000000000, .clock_ns = 5000,
        };
        /* SAMPLE: id, pid/tid, time, cpu/res, raw size + 12 bytes of raw */
        struct {
                struct perf_event_header h;
                uint64_t id;
                uint32_t pid, tid;
                uint64_t time;
                uint32_t cpu, res;
                uint32_t raw_size;
                uint16_t common_type;
                uint8_t flags, preempt;
                int32_t common_pid, x;
        } __attribute__((packed)) sample = {
                .h = { .type = PERF_RECORD_SAMPLE, .size = sizeof(sample) },
                .id = 9, .pid = 100, .tid = 101, .time = 6000, .cpu = 1, .raw_size = 12,
                .common_type = 42, .common_pid = 101, .x = -7,
        };
        uint64_t lost[PERFDATA_LOST_RECORD_U64];
        _cleanup_(perfdata_freep) struct perfdata *pd = NULL;
        _cleanup_(freep) char *buf = NULL;
        const struct perfdata_event *e;
        struct perfdata_clock clk;
        struct perfdata_record pr;
        size_t size = 0;
        FILE *f;

        assert_int_equal(sizeof(sample) % 8, 0);
        f = open_memstream(&buf, &size);
        assert_non_null(f);
        assert_int_equal(perfdata_write_pipe_header(f, &ev, 1, &info), 0);
        fwrite(&sample, sizeof(sample), 1, f);
        fwrite(&perfdata_finished_round, sizeof(perfdata_finished_round), 1, f);
        perfdata_lost_record(9, 3, 1, 7000, lost);
        fwrite(lost, sizeof(lost), 1, f);
        assert_int_equal(fclose(f), 0);

        assert_int_equal(perfdata_new(buf, size, &pd), 0);
        assert_true(perfdata_pipe(pd));
        assert_int_equal(perfdata_n_events(pd), 1);
        e = perfdata_event(pd, 0);
        assert_string_equal(e->name, "test:evt");
        assert_int_equal(e->n_ids, 2);
        assert_int_equal(e->ids[1], 9);
        assert_non_null(e->format);
        assert_non_null(format_field_find(e->format, "x"));
        assert_true(perfdata_has_feature(pd, PERFDATA_FEAT_EVENT_DESC));
        assert_true(perfdata_has_feature(pd, 7));       /* NRCPUS */
        assert_int_equal(perfdata_clock(pd, &clk), 0);
        assert_int_equal(clk.clockid, CLOCK_MONOTONIC);
        assert_int_equal(clk.wall_ns, 1000000000000);
        assert_int_equal(clk.clock_ns, 5000);

        /* The head's own records come first (HEADER_ATTR, the features,
         * the tracing data). */
        do
                assert_int_equal(perfdata_next(pd, &pr), 1);
        while (pr.header->type >= PERFDATA_RECORD_USER_TYPE_START);
        assert_int_equal(pr.header->type, PERF_RECORD_SAMPLE);
        assert_ptr_equal(pr.event, e);
        assert_true(pr.parsed);
        assert_int_equal(pr.rec.sample.tid, 101);
        assert_int_equal(pr.rec.sample.raw.size, 12);
        assert_int_equal(perfdata_next(pd, &pr), 1);
        assert_int_equal(pr.header->type, PERFDATA_RECORD_FINISHED_ROUND);
        assert_int_equal(perfdata_next(pd, &pr), 1);
        assert_int_equal(pr.header->type, PERF_RECORD_LOST);
        assert_ptr_equal(pr.event, e);
        assert_int_equal(pr.rec.lost.lost, 3);
        assert_int_equal(pr.rec.sid.cpu, 1);
        assert_int_equal(perfdata_next(pd, &pr), 0);

        /* The same in file mode (evmonctl record's rewrite): the same
         * event, format, features and records; the head's records gone. */
        {
                _cleanup_(perfdata_freep) struct perfdata *fd = NULL;
                _cleanup_(freep) char *fbuf = NULL;
                size_t fsize = 0;

                f = open_memstream(&fbuf, &fsize);
                assert_non_null(f);
                assert_int_equal(perfdata_pipe_to_file(buf, size, f), 0);
                assert_int_equal(fclose(f), 0);
                assert_int_equal(perfdata_new(fbuf, fsize, &fd), 0);
                assert_false(perfdata_pipe(fd));
                assert_int_equal(perfdata_n_events(fd), 1);
                e = perfdata_event(fd, 0);
                assert_string_equal(e->name, "test:evt");
                assert_int_equal(e->n_ids, 2);
                assert_non_null(e->format);
                assert_true(perfdata_has_feature(fd, 7));
                assert_int_equal(perfdata_clock(fd, &clk), 0);
                assert_int_equal(clk.clock_ns, 5000);
                assert_int_equal(perfdata_next(fd, &pr), 1);
                assert_int_equal(pr.header->type, PERF_RECORD_SAMPLE);
                assert_ptr_equal(pr.event, e);
                assert_int_equal(pr.rec.sample.tid, 101);
                assert_int_equal(perfdata_next(fd, &pr), 1);
                assert_int_equal(pr.header->type, PERFDATA_RECORD_FINISHED_ROUND);
                assert_int_equal(perfdata_next(fd, &pr), 1);
                assert_int_equal(pr.header->type, PERF_RECORD_LOST);
                assert_int_equal(perfdata_next(fd, &pr), 0);
                /* Not pipe mode, or cut short: refused. */
                assert_int_equal(perfdata_pipe_to_file(fbuf, fsize, stdout), -EINVAL);
                {
                        _cleanup_(freep) char *cut = NULL;
                        size_t cut_size = 0;

                        f = open_memstream(&cut, &cut_size);
                        assert_non_null(f);
                        assert_int_equal(perfdata_pipe_to_file(buf, size - 3, f), -EBADMSG);
                        fclose(f);
                }
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_task_events),
                cmocka_unit_test(test_task_samples),
                cmocka_unit_test(test_single),
                cmocka_unit_test(test_sys),
                cmocka_unit_test(test_truncated),
                cmocka_unit_test(test_flipped),
                cmocka_unit_test(test_bad_records),
                cmocka_unit_test(test_unsupported),
                cmocka_unit_test(test_misaligned),
                cmocka_unit_test(test_open_errors),
                cmocka_unit_test(test_type_names),
                cmocka_unit_test(test_equal_times),
                cmocka_unit_test(test_write_pipe),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
