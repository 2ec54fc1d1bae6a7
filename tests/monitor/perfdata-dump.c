/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* perfdata-dump [--order file|causal|time] FILE|-: what the perf.data
 * reader gives, one JSON object a line, for test-perfdata-perf.py to hold
 * against `perf script` and `perf script -D` on the same file:
 *   {"header":{...perfdata_header()...}}           first
 *   {"events":[{"name","period","ids"}...]}
 *   {"sample":{"event","pid","tid","cpu","time","period","addr","ip",
 *              "callchain":[hex...],"fields":[values of the non-common
 *              tracepoint fields, as text]}}   per sample, in order
 *   {"counts":{"SAMPLE":N,"MMAP2":N,"ATTR":N,...}}   perf -D's names
 *   {"end":0 or -errno,"offset":N}
 * Test code: it prints what the library hands out, and nothing else. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "evmon/perfdata.h"

/* perf script -D's names for perf's own records (util/event.c
 * perf_event__names) where they differ from ours. */
static const char *dump_name(uint32_t type) {
        static const struct { uint32_t type; const char *name; } renames[] = {
                { PERFDATA_RECORD_HEADER_ATTR, "ATTR" },
                { PERFDATA_RECORD_HEADER_EVENT_TYPE, "EVENT_TYPE" },
                { PERFDATA_RECORD_HEADER_TRACING_DATA, "TRACING_DATA" },
                { PERFDATA_RECORD_HEADER_BUILD_ID, "BUILD_ID" },
                { PERFDATA_RECORD_HEADER_FEATURE, "FEATURE" },
        };
        const char *s;

        for (size_t i = 0; i < ELEMENTSOF(renames); i++)
                if (renames[i].type == type)
                        return renames[i].name;
        s = perfdata_record_type_to_string(type);
        return s ? s : "UNKNOWN";
}

static void put_json_string(const char *p, size_t n) {
        putchar('"');
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char) p[i];

                if (c == '"' || c == '\\')
                        printf("\\%c", c);
                else if (c < 0x20 || c >= 0x7f)
                        printf("\\u%04x", c);
                else
                        putchar(c);
        }
        putchar('"');
}

static void put_node(const struct perfdata_node *n, uint32_t i) {
        const struct perfdata_node *x = &n[i];

        if (x->key)
                printf("\"%s\":", x->key);
        switch (x->kind) {
        case PERFDATA_NODE_OBJECT:
        case PERFDATA_NODE_ARRAY:
                putchar(x->kind == PERFDATA_NODE_OBJECT ? '{' : '[');
                for (uint32_t c = x->child; c; c = n[c].next) {
                        put_node(n, c);
                        if (n[c].next)
                                putchar(',');
                }
                putchar(x->kind == PERFDATA_NODE_OBJECT ? '}' : ']');
                break;
        case PERFDATA_NODE_U64:
                printf("%" PRIu64, x->u);
                break;
        case PERFDATA_NODE_S64:
                printf("%" PRId64, x->i);
                break;
        case PERFDATA_NODE_HEX:
                printf("\"0x%" PRIx64 "\"", x->u);
                break;
        case PERFDATA_NODE_STRING:
                put_json_string(x->s.p, x->s.len);
                break;
        case PERFDATA_NODE_BYTES:
                putchar('"');
                for (size_t k = 0; k < x->s.len; k++)
                        printf("%02x", (unsigned char) x->s.p[k]);
                putchar('"');
                break;
        case PERFDATA_NODE_BOOL:
                printf(x->b ? "true" : "false");
                break;
        case PERFDATA_NODE_DOUBLE:
                printf("%.17g", x->d);
                break;
        }
}

static void put_fields(const struct format *f, const struct perf_sample *s) {
        printf(",\"fields\":[");
        for (size_t i = f->n_common, first = 1; i < f->n_fields; i++, first = 0) {
                const struct format_field *ff = &f->fields[i];
                struct field_value v;
                char buf[64];

                if (!first)
                        putchar(',');
                if (field_decode(ff, s->raw.data, s->raw.size, &v) < 0) {
                        printf("null");
                        continue;
                }
                switch (ff->kind) {
                case FIELD_CHARS:
                case FIELD_DYN_STRING:
                        put_json_string(v.str.ptr, v.str.len);
                        break;
                case FIELD_POINTER:
                        snprintf(buf, sizeof(buf), "0x%" PRIx64, v.u);
                        put_json_string(buf, strlen(buf));
                        break;
                case FIELD_BOOL:
                        snprintf(buf, sizeof(buf), "%d", v.b);
                        put_json_string(buf, strlen(buf));
                        break;
                case FIELD_INT:
                        if (ff->elem_signed)
                                snprintf(buf, sizeof(buf), "%" PRId64, v.i);
                        else
                                snprintf(buf, sizeof(buf), "%" PRIu64, v.u);
                        put_json_string(buf, strlen(buf));
                        break;
                default:
                        printf("null");
                }
        }
        putchar(']');
}

static void put_sample(const struct perfdata_record *pr) {
        const struct perf_sample *s = &pr->rec.sample;
        uint64_t t = s->sample_type;

        printf("{\"sample\":{\"event\":");
        put_json_string(pr->event && pr->event->name ? pr->event->name : "", pr->event && pr->event->name ?
                        strlen(pr->event->name) : 0);
        if (t & PERF_SAMPLE_TID)
                printf(",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32, s->pid, s->tid);
        if (t & PERF_SAMPLE_CPU)
                printf(",\"cpu\":%" PRIu32, s->cpu);
        if (t & PERF_SAMPLE_TIME)
                printf(",\"time\":%" PRIu64, s->time);
        if (t & PERF_SAMPLE_PERIOD)
                printf(",\"period\":%" PRIu64, s->period);
        if (t & PERF_SAMPLE_ADDR)
                printf(",\"addr\":\"%" PRIx64 "\"", s->addr);
        if (t & PERF_SAMPLE_IP)
                printf(",\"ip\":\"%" PRIx64 "\"", s->ip);
        if (t & PERF_SAMPLE_PHYS_ADDR)
                printf(",\"phys_addr\":\"%" PRIx64 "\"", s->phys_addr);
        if (t & PERF_SAMPLE_DATA_PAGE_SIZE)
                printf(",\"data_page_size\":%" PRIu64, s->data_page_size);
        if (t & PERF_SAMPLE_CODE_PAGE_SIZE)
                printf(",\"code_page_size\":%" PRIu64, s->code_page_size);
        if (t & PERF_SAMPLE_CGROUP)
                printf(",\"cgroup\":%" PRIu64, s->cgroup);
        if (t & PERF_SAMPLE_READ) {
                printf(",\"read\":[");
                for (uint64_t i = 0; i < s->read.nr; i++) {
                        struct perf_read_value v;

                        if (perf_read_get(&s->read, i, &v) < 0)
                                break;
                        printf("%s[%" PRIu64 ",%" PRIu64 "]", i ? "," : "", v.id, v.value);
                }
                putchar(']');
        }
        if (t & PERF_SAMPLE_CALLCHAIN) {
                printf(",\"callchain\":[");
                for (uint64_t i = 0; i < s->callchain.nr; i++)
                        printf("%s\"%" PRIx64 "\"", i ? "," : "", s->callchain.ips[i]);
                putchar(']');
        }
        if ((t & PERF_SAMPLE_RAW) && pr->event && pr->event->format)
                put_fields(pr->event->format, s);
        printf("}}\n");
}

int main(int argc, char **argv) {
        _cleanup_(perfdata_freep) struct perfdata *pd = NULL;
        struct perfdata_record pr;
        static size_t counts[256];
        const char *order = "time";
        int r, argi = 1;

        if (argc == 4 && strcmp(argv[1], "--order") == 0) {
                order = argv[2];
                argi = 3;
        } else if (argc != 2) {
                fprintf(stderr, "usage: perfdata-dump [--order file|causal|time] FILE|-\n");
                return 2;
        }
        r = perfdata_open(argv[argi], &pd);
        if (r < 0) {
                printf("{\"open\":%d}\n", r);
                return 1;
        }
        printf("{\"header\":");
        put_node(perfdata_header(pd).nodes, 0);
        printf("}\n{\"events\":[");
        for (size_t i = 0; i < perfdata_n_events(pd); i++) {
                const struct perfdata_event *ev = perfdata_event(pd, i);

                printf("%s{\"name\":", i ? "," : "");
                put_json_string(ev->name ? ev->name : "", ev->name ? strlen(ev->name) : 0);
                printf(",\"period\":%" PRIu64 ",\"ids\":[", ev->attr.freq ? (uint64_t) 0 : (uint64_t) ev->attr.sample_period);
                for (size_t k = 0; k < ev->n_ids; k++)
                        printf("%s%" PRIu64, k ? "," : "", ev->ids[k]);
                printf("]}");
        }
        printf("]}\n");
        r = perfdata_order_from_string(order);
        if (r < 0 || perfdata_set_order(pd, (enum perfdata_order) r) < 0)
                return 2;
        while ((r = perfdata_next(pd, &pr)) > 0) {
                counts[pr.rec.type & 255]++;
                if (pr.rec.type == PERF_RECORD_SAMPLE && pr.parsed)
                        put_sample(&pr);
        }
        printf("{\"counts\":{");
        for (unsigned i = 0, first = 1; i < ELEMENTSOF(counts); i++)
                if (counts[i]) {
                        printf("%s\"%s\":%zu", first ? "" : ",", dump_name(i), counts[i]);
                        first = 0;
                }
        printf("}}\n{\"end\":%d,\"offset\":%" PRIu64 "}\n", r, perfdata_offset(pd));
        return r < 0;
}
