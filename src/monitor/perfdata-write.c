/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The head of a perf pipe-mode stream, as `perf record -o -` writes it
 * (tools/perf/util/synthetic-events.c, header.c, trace-event-info.c):
 * after it, the records the kernel wrote can follow as they are. The
 * reader (perfdata*.c) reads it back; tests/integration/test-record.py
 * holds it against perf script and perf report. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evmon/cleanup.h"
#include "evmon/perfdata.h"

static const char pipe_magic[8] = { 'P', 'E', 'R', 'F', 'I', 'L', 'E', '2' };
static const char tracing_magic[] = { 0x17, 0x08, 'D', 't', 'r', 'a', 'c', 'i', 'n', 'g' };

/* perf's header.c: strings in feature sections are a u32 length (with
 * the NUL, rounded up to NAME_ALIGN) and the padded text. */
#define NAME_ALIGN 64u

static size_t align_up(size_t n, size_t a) {
        return (n + a - 1) / a * a;
}

static void out_bytes(FILE *f, const void *p, size_t n) {
        if (n > 0)
                fwrite(p, 1, n, f);
}

static void out_u32(FILE *f, uint32_t v) {
        out_bytes(f, &v, sizeof(v));
}

static void out_u64(FILE *f, uint64_t v) {
        out_bytes(f, &v, sizeof(v));
}

static void out_zeros(FILE *f, size_t n) {
        static const char zero[NAME_ALIGN];

        while (n > 0) {
                size_t k = n < sizeof(zero) ? n : sizeof(zero);

                out_bytes(f, zero, k);
                n -= k;
        }
}

static size_t feat_string_size(const char *s) {
        return 4 + align_up(strlen(s) + 1, NAME_ALIGN);
}

static void out_string(FILE *f, const char *s) {
        size_t len = strlen(s) + 1, padded = align_up(len, NAME_ALIGN);

        out_u32(f, (uint32_t) padded);
        out_bytes(f, s, len);
        out_zeros(f, padded - len);
}

/* One HEADER_FEATURE record: {header, u64 feature, data of SIZE bytes}
 * whose data the caller writes next, padded here to 8. */
static int feature_begin(FILE *f, unsigned feat, size_t size, size_t *ret_pad) {
        size_t total = sizeof(struct perf_event_header) + 8 + align_up(size, 8);
        struct perf_event_header h = { .type = PERFDATA_RECORD_HEADER_FEATURE };

        if (total > UINT16_MAX)
                return -E2BIG;
        h.size = (uint16_t) total;
        out_bytes(f, &h, sizeof(h));
        out_u64(f, feat);
        *ret_pad = align_up(size, 8) - size;
        return 0;
}

static int feature_string(FILE *f, unsigned feat, const char *s) {
        size_t pad;
        int r;

        if (!s)
                return 0;
        r = feature_begin(f, feat, feat_string_size(s), &pad);
        if (r < 0)
                return r;
        out_string(f, s);
        out_zeros(f, pad);
        return 0;
}

/* HEADER_FEATURE numbers (tools/perf/util/header.h). */
enum {
        FEAT_HOSTNAME = 3,
        FEAT_OSRELEASE = 4,
        FEAT_VERSION = 5,
        FEAT_ARCH = 6,
        FEAT_NRCPUS = 7,
        FEAT_CMDLINE = 11,
};

static int write_features(FILE *f, const struct perfdata_out_event *events, size_t n,
                          const struct perfdata_out_info *info) {
        size_t size, pad, n_cmd = 0;
        int r;

        r = feature_string(f, FEAT_HOSTNAME, info->hostname);
        if (r >= 0)
                r = feature_string(f, FEAT_OSRELEASE, info->osrelease);
        if (r >= 0)
                r = feature_string(f, FEAT_VERSION, info->version);
        if (r >= 0)
                r = feature_string(f, FEAT_ARCH, info->arch);
        if (r < 0)
                return r;

        if (info->nr_cpus_avail > 0) {
                r = feature_begin(f, FEAT_NRCPUS, 8, &pad);
                if (r < 0)
                        return r;
                out_u32(f, info->nr_cpus_avail);
                out_u32(f, info->nr_cpus_online);
        }

        if (info->cmdline) {
                size = 4;
                for (n_cmd = 0; info->cmdline[n_cmd]; n_cmd++)
                        size += feat_string_size(info->cmdline[n_cmd]);
                r = feature_begin(f, FEAT_CMDLINE, size, &pad);
                if (r < 0)
                        return r;
                out_u32(f, (uint32_t) n_cmd);
                for (size_t i = 0; i < n_cmd; i++)
                        out_string(f, info->cmdline[i]);
                out_zeros(f, pad);
        }

        /* EVENT_DESC: names the events perf has no tracing data for, and
         * the attrs with their ids once more (header.c write_event_desc). */
        size = 8;
        for (size_t i = 0; i < n; i++)
                size += sizeof(struct perf_event_attr) + 4 + feat_string_size(events[i].name ?: "") +
                        8 * events[i].n_ids;
        r = feature_begin(f, PERFDATA_FEAT_EVENT_DESC, size, &pad);
        if (r < 0)
                return r;
        out_u32(f, (uint32_t) n);
        out_u32(f, (uint32_t) sizeof(struct perf_event_attr));
        for (size_t i = 0; i < n; i++) {
                struct perf_event_attr a = events[i].attr;

                a.size = sizeof(a);
                out_bytes(f, &a, sizeof(a));
                out_u32(f, (uint32_t) events[i].n_ids);
                out_string(f, events[i].name ?: "");
                out_bytes(f, events[i].ids, 8 * events[i].n_ids);
        }
        out_zeros(f, pad);

        if (info->clockid >= 0) {
                /* CLOCKID: the resolution in ns; CLOCK_DATA: one instant on
                 * both clocks, for wall-clock times. */
                r = feature_begin(f, PERFDATA_FEAT_CLOCKID, 8, &pad);
                if (r < 0)
                        return r;
                out_u64(f, 1);
                r = feature_begin(f, PERFDATA_FEAT_CLOCK_DATA, 24, &pad);
                if (r < 0)
                        return r;
                out_u32(f, 1);
                out_u32(f, (uint32_t) info->clockid);
                out_u64(f, info->wall_ns);
                out_u64(f, info->clock_ns);
        }
        return 0;
}

static void out_text(FILE *f, const char *s) {
        size_t n = s ? strlen(s) : 0;

        out_u64(f, n);
        out_bytes(f, s, n);
}

/* trace-cmd's tracing data, version 0.6 (what perf 6.x writes): the
 * header files, no ftrace formats, each system's event formats, and no
 * kallsyms, printk formats or saved cmdlines. */
static int write_tracing_data(FILE *dst, const struct perfdata_out_event *events, size_t n,
                              const struct perfdata_out_info *info) {
        _cleanup_(freep) char *buf = NULL;
        _cleanup_(fclosep) FILE *f = NULL;
        struct perf_event_header h = { .type = PERFDATA_RECORD_HEADER_TRACING_DATA, .size = 16 };
        uint32_t n_systems = 0;
        size_t size = 0, padded;
        bool *done = NULL;

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        out_bytes(f, tracing_magic, sizeof(tracing_magic));
        out_bytes(f, "0.6", 4);
        fputc(0, f);                            /* little endian */
        fputc((int) sizeof(long), f);
        out_u32(f, info->page_size);
        out_bytes(f, "header_page", sizeof("header_page"));
        out_text(f, info->header_page);
        out_bytes(f, "header_event", sizeof("header_event"));
        out_text(f, info->header_event);
        out_u32(f, 0);                          /* ftrace formats */

        for (size_t i = 0; i < n; i++)
                if (events[i].format_text && events[i].system) {
                        bool first = true;

                        for (size_t j = 0; j < i; j++)
                                if (events[j].format_text && events[j].system &&
                                    strcmp(events[j].system, events[i].system) == 0)
                                        first = false;
                        n_systems += first;
                }
        out_u32(f, n_systems);
        done = calloc(n ?: 1, sizeof(*done));
        if (!done)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                uint32_t k = 0;

                if (!events[i].format_text || !events[i].system || done[i])
                        continue;
                for (size_t j = i; j < n; j++)
                        k += events[j].format_text && events[j].system && !done[j] &&
                             strcmp(events[j].system, events[i].system) == 0;
                out_bytes(f, events[i].system, strlen(events[i].system) + 1);
                out_u32(f, k);
                for (size_t j = i; j < n; j++)
                        if (events[j].format_text && events[j].system && !done[j] &&
                            strcmp(events[j].system, events[i].system) == 0) {
                                out_text(f, events[j].format_text);
                                done[j] = true;
                        }
        }
        free(done);
        out_u32(f, 0);                          /* kallsyms */
        out_u32(f, 0);                          /* printk formats */
        out_u64(f, 0);                          /* saved cmdlines */
        if (fflush(f) != 0 || ferror(f))
                return -ENOMEM;

        padded = align_up(size, 8);
        if (padded > UINT32_MAX)
                return -E2BIG;
        /* The record is 16 bytes (struct perf_record_header_tracing_data:
         * the header, the u32 size, padding) and the data follows outside
         * its size, as perf 6.1 writes it. */
        out_bytes(dst, &h, sizeof(h));
        out_u32(dst, (uint32_t) padded);
        out_u32(dst, 0);
        out_bytes(dst, buf, size);
        out_zeros(dst, padded - size);
        return 0;
}

int perfdata_write_pipe_header(FILE *f, const struct perfdata_out_event *events, size_t n,
                               const struct perfdata_out_info *info) {
        bool tracing = false;
        int r;

        if (!f || (n > 0 && !events) || !info)
                return -EINVAL;

        out_bytes(f, pipe_magic, sizeof(pipe_magic));
        out_u64(f, 16);

        /* The attrs first: the features and the tracing data name events
         * perf must already have. */
        for (size_t i = 0; i < n; i++) {
                struct perf_event_attr a = events[i].attr;
                size_t total = sizeof(struct perf_event_header) + sizeof(a) + 8 * events[i].n_ids;
                struct perf_event_header h = { .type = PERFDATA_RECORD_HEADER_ATTR };

                if (total > UINT16_MAX)
                        return -E2BIG;
                h.size = (uint16_t) total;
                a.size = sizeof(a);
                out_bytes(f, &h, sizeof(h));
                out_bytes(f, &a, sizeof(a));
                out_bytes(f, events[i].ids, 8 * events[i].n_ids);
                tracing = tracing || events[i].format_text;
        }

        r = write_features(f, events, n, info);
        if (r < 0)
                return r;
        if (tracing) {
                r = write_tracing_data(f, events, n, info);
                if (r < 0)
                        return r;
        }
        if (fflush(f) != 0 || ferror(f))
                return -EIO;
        return 0;
}

void perfdata_lost_record(uint64_t id, uint64_t lost, uint32_t cpu, uint64_t time,
                          uint64_t ret[static PERFDATA_LOST_RECORD_U64]) {
        /* struct perf_record_lost, then the sample_id trailer of
         * IDENTIFIER | TID | TIME | CPU: pid/tid, time, cpu/res, identifier. */
        struct perf_event_header h = {
                .type = PERF_RECORD_LOST,
                .size = PERFDATA_LOST_RECORD_U64 * 8,
        };

        memcpy(&ret[0], &h, sizeof(h));
        ret[1] = id;
        ret[2] = lost;
        ret[3] = 0;
        ret[4] = time;
        ret[5] = cpu;
        ret[6] = id;
}

/* ---- pipe mode to file mode ------------------------------------------- */

struct pipe_attr {
        const uint8_t *attr;    /* attr_size bytes */
        const uint8_t *ids;     /* n_ids u64 */
        size_t n_ids;
};

int perfdata_pipe_to_file(const void *data, size_t size, FILE *out) {
        const uint8_t *p = data, *end = p + size;
        _cleanup_(freep) struct pipe_attr *attrs = NULL;
        const uint8_t *feat[PERFDATA_FEAT_MAX] = {};
        size_t feat_size[PERFDATA_FEAT_MAX] = {};
        size_t n_attrs = 0, attr_size = 0, off, data_size = 0, n_feat = 0;
        uint64_t bitmap[PERFDATA_FEAT_MAX / 64] = {};
        const uint8_t *q;

        uint64_t hsize;

        if (!data || !out || size < 16 || memcmp(p, pipe_magic, sizeof(pipe_magic)) != 0)
                return -EINVAL;
        memcpy(&hsize, p + 8, sizeof(hsize));
        if (hsize != 16)
                return -EINVAL;         /* file mode already */

        /* First pass: the head's records; the rest is data. */
        for (q = p + 16; q < end;) {
                struct perf_event_header h;
                uint64_t payload = 0;

                if ((size_t) (end - q) < sizeof(h))
                        return -EBADMSG;
                memcpy(&h, q, sizeof(h));
                if (h.size < sizeof(h) || h.size > (size_t) (end - q))
                        return -EBADMSG;
                if (h.type == PERFDATA_RECORD_HEADER_TRACING_DATA) {
                        uint32_t v;

                        if (h.size < 12)
                                return -EBADMSG;
                        memcpy(&v, q + 8, 4);
                        payload = v;
                        if (payload > (size_t) (end - q) - h.size)
                                return -EBADMSG;
                        feat[PERFDATA_FEAT_TRACING_DATA] = q + h.size;
                        feat_size[PERFDATA_FEAT_TRACING_DATA] = payload;
                } else if (h.type == PERFDATA_RECORD_HEADER_ATTR) {
                        struct pipe_attr *a;
                        uint32_t asz;

                        if (h.size < sizeof(h) + PERF_ATTR_SIZE_VER0)
                                return -EBADMSG;
                        memcpy(&asz, q + sizeof(h) + offsetof(struct perf_event_attr, size), 4);
                        if (asz < PERF_ATTR_SIZE_VER0 || asz > h.size - sizeof(h) || (attr_size && asz != attr_size))
                                return -EBADMSG;
                        attr_size = asz;
                        a = realloc(attrs, (n_attrs + 1) * sizeof(*a));
                        if (!a)
                                return -ENOMEM;
                        attrs = a;
                        attrs[n_attrs++] = (struct pipe_attr) {
                                .attr = q + sizeof(h),
                                .ids = q + sizeof(h) + asz,
                                .n_ids = (h.size - sizeof(h) - asz) / 8,
                        };
                } else if (h.type == PERFDATA_RECORD_HEADER_FEATURE) {
                        uint64_t f;

                        if (h.size < 16)
                                return -EBADMSG;
                        memcpy(&f, q + 8, 8);
                        if (f >= PERFDATA_FEAT_MAX || f == PERFDATA_FEAT_TRACING_DATA)
                                return -EBADMSG;
                        feat[f] = q + 16;
                        feat_size[f] = h.size - 16;
                } else if (h.type < PERFDATA_RECORD_USER_TYPE_START || h.type == PERFDATA_RECORD_FINISHED_ROUND)
                        data_size += h.size;
                q += h.size + payload;
        }

        /* perf_file_header; the attrs, each with its ids' section; the
         * ids; the data; the feature sections' table, then their bytes. */
        for (size_t f = 0; f < PERFDATA_FEAT_MAX; f++)
                if (feat[f]) {
                        bitmap[f / 64] |= UINT64_C(1) << (f % 64);
                        n_feat++;
                }
        out_bytes(out, pipe_magic, sizeof(pipe_magic));
        out_u64(out, 104);
        out_u64(out, attr_size + 16);
        off = 104 + n_attrs * (attr_size + 16);
        out_u64(out, 104);
        out_u64(out, n_attrs * (attr_size + 16));
        {
                size_t ids_size = 0;

                for (size_t i = 0; i < n_attrs; i++)
                        ids_size += 8 * attrs[i].n_ids;
                out_u64(out, off + ids_size);           /* data */
                out_u64(out, data_size);
                out_u64(out, 0);                        /* event_types */
                out_u64(out, 0);
                out_bytes(out, bitmap, sizeof(bitmap));
                for (size_t i = 0; i < n_attrs; i++) {
                        out_bytes(out, attrs[i].attr, attr_size);
                        out_u64(out, off);
                        out_u64(out, 8 * attrs[i].n_ids);
                        off += 8 * attrs[i].n_ids;
                }
                for (size_t i = 0; i < n_attrs; i++)
                        out_bytes(out, attrs[i].ids, 8 * attrs[i].n_ids);
        }
        for (q = p + 16; q < end;) {
                struct perf_event_header h;
                uint64_t payload = 0;

                memcpy(&h, q, sizeof(h));
                if (h.type == PERFDATA_RECORD_HEADER_TRACING_DATA) {
                        uint32_t v;

                        memcpy(&v, q + 8, 4);
                        payload = v;
                } else if (h.type < PERFDATA_RECORD_USER_TYPE_START || h.type == PERFDATA_RECORD_FINISHED_ROUND)
                        out_bytes(out, q, h.size);
                q += h.size + payload;
        }
        off += data_size + n_feat * 16;
        for (size_t f = 0; f < PERFDATA_FEAT_MAX; f++)
                if (feat[f]) {
                        out_u64(out, off);
                        out_u64(out, feat_size[f]);
                        off += feat_size[f];
                }
        for (size_t f = 0; f < PERFDATA_FEAT_MAX; f++)
                if (feat[f])
                        out_bytes(out, feat[f], feat_size[f]);
        if (fflush(out) != 0 || ferror(out))
                return -EIO;
        return 0;
}
