/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* encode_event() against the same lines built with json-c.
 *
 *   bench-json [LINES]     (default 500000 lines per run, median of 5 runs)
 *
 * Both sides decode the same raw records with field_decode(); the json-c
 * side builds an object per line and serialises it with
 * JSON_C_TO_STRING_PLAIN, which is what the daemon would otherwise do.
 * Before timing, every line of one round is parsed back from both sides
 * and compared with json_object_equal(). */

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "evmon/encode.h"
#include "evmon/cleanup.h"

#define COMMON_FIELDS \
        "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" \
        "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" \
        "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
        "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"

static const char fmt_exec[] =
        "name: sched_process_exec\nID: 365\nformat:\n" COMMON_FIELDS
        "\tfield:__data_loc char[] filename;\toffset:8;\tsize:4;\tsigned:0;\n"
        "\tfield:pid_t pid;\toffset:12;\tsize:4;\tsigned:1;\n"
        "\tfield:pid_t old_pid;\toffset:16;\tsize:4;\tsigned:1;\n\n"
        "print fmt: \"filename=%s\", __get_str(filename)\n";

static const char fmt_openat[] =
        "name: sys_enter_openat\nID: 782\nformat:\n" COMMON_FIELDS
        "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
        "\tfield:int dfd;\toffset:16;\tsize:8;\tsigned:0;\n"
        "\tfield:const char * filename;\toffset:24;\tsize:8;\tsigned:0;\n"
        "\tfield:int flags;\toffset:32;\tsize:8;\tsigned:0;\n"
        "\tfield:umode_t mode;\toffset:40;\tsize:8;\tsigned:0;\n\n"
        "print fmt: \"dfd: 0x%08lx\", ((unsigned long)(REC->dfd))\n";

static const char fmt_switch[] =
        "name: sched_switch\nID: 372\nformat:\n" COMMON_FIELDS
        "\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
        "\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
        "\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
        "\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
        "\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
        "\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
        "\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n\n"
        "print fmt: \"prev_comm=%s\", REC->prev_comm\n";

static const char fmt_sys_enter[] =
        "name: sys_enter\nID: 443\nformat:\n" COMMON_FIELDS
        "\tfield:long id;\toffset:8;\tsize:8;\tsigned:1;\n"
        "\tfield:unsigned long args[6];\toffset:16;\tsize:48;\tsigned:0;\n\n"
        "print fmt: \"NR %ld\", REC->id\n";

struct kind {
        const char *text, *system, *event;
        struct format *fmt;
        struct encoder *enc;
};

static struct kind kinds[] = {
        { fmt_openat, "syscalls", "syscalls:sys_enter_openat" },
        { fmt_switch, "sched", "sched:sched_switch" },
        { fmt_exec, "sched", "sched:sched_process_exec" },
        { fmt_sys_enter, "raw_syscalls", "raw_syscalls:sys_enter" },
};

#define N_SAMPLES 1024u

struct item {
        struct kind *kind;
        struct perf_sample s;
        uint8_t rec[128];
};

static struct item items[N_SAMPLES];

static const char *const paths[] = {
        "/usr/bin/true", "/usr/lib/x86_64-linux-gnu/libc.so.6", "/etc/ld.so.cache",
        "/home/user/My Documents/report \"final\".txt", "/tmp/tab\there", "/srv/caf\xc3\xa9/\xe2\x82\xac",
        "/proc/self/status", "/usr/share/zoneinfo/Europe/Berlin",
};
static const char *const comms[] = { "bash", "kworker/1:2", "systemd-journal", "sshd", "swapper/0", "nginx" };

static uint64_t rng = 88172645463325252ull;

static uint64_t rnd(void) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return rng;
}

static void put_le(uint8_t *rec, size_t off, uint64_t v, size_t size) {
        for (size_t i = 0; i < size; i++)
                rec[off + i] = (uint8_t) (v >> (8 * i));
}

/* A mix as a busy host gives it: mostly syscalls and switches, some execs. */
static void make_items(void) {
        for (size_t i = 0; i < N_SAMPLES; i++) {
                struct item *it = &items[i];
                unsigned pick = (unsigned) (rnd() % 20);
                size_t size;

                memset(it->rec, 0, sizeof(it->rec));
                if (pick < 8) {
                        it->kind = &kinds[0];
                        put_le(it->rec, 8, 257, 4);
                        put_le(it->rec, 16, rnd() % 4 ? (uint64_t) -100 : rnd() % 64, 8);
                        put_le(it->rec, 24, 0x7ffd00000000ull | (rnd() & 0xffffffff), 8);
                        put_le(it->rec, 32, 0x80000 | (rnd() % 4), 8);
                        put_le(it->rec, 40, rnd() % 2 ? 0644 : 0, 8);
                        size = 48;
                } else if (pick < 14) {
                        const char *a = comms[rnd() % 6], *b = comms[rnd() % 6];

                        it->kind = &kinds[1];
                        memcpy(it->rec + 8, a, strlen(a));
                        put_le(it->rec, 24, rnd() % 100000, 4);
                        put_le(it->rec, 28, 120, 4);
                        put_le(it->rec, 32, rnd() % 3, 8);
                        memcpy(it->rec + 40, b, strlen(b));
                        put_le(it->rec, 56, rnd() % 100000, 4);
                        put_le(it->rec, 60, 120, 4);
                        size = 64;
                } else if (pick < 17) {
                        const char *p = paths[rnd() % ELEMENTSOF(paths)];
                        size_t len = strlen(p) + 1;

                        it->kind = &kinds[2];
                        put_le(it->rec, 8, (uint32_t) (len << 16 | 20), 4);
                        put_le(it->rec, 12, rnd() % 100000, 4);
                        put_le(it->rec, 16, rnd() % 100000, 4);
                        memcpy(it->rec + 20, p, len);
                        size = (20 + len + 7) & ~(size_t) 7;
                } else {
                        it->kind = &kinds[3];
                        put_le(it->rec, 8, rnd() % 450, 8);
                        for (unsigned k = 0; k < 6; k++)
                                put_le(it->rec, 16 + 8 * k, k < 3 ? rnd() % 4096 : rnd(), 8);
                        size = 64;
                }
                put_le(it->rec, 0, it->kind->fmt->id, 2);
                it->s = (struct perf_sample) {
                        .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_RAW,
                        .pid = (uint32_t) (rnd() % 100000),
                        .tid = (uint32_t) (rnd() % 100000),
                        .time = 1000000000000ull + i * 3331,
                        .cpu = (uint32_t) (rnd() % 2),
                        .raw = { .size = (uint32_t) size, .data = it->rec },
                };
        }
}

static const int64_t offset_ns = 1795256580000000000ll;        /* late 2026 */

/* ---- the json-c side ------------------------------------------------------ */

static json_object *jsonc_line(const struct item *it) {
        const struct format *fmt = it->kind->fmt;
        json_object *o = json_object_new_object(), *f = json_object_new_object();
        char tbuf[JSON_TIME_LEN];

        json_object_object_add(o, "type", json_object_new_string("event"));
        json_object_object_add(o, "event", json_object_new_string(it->kind->event));
        /* json_put_time() without the quotes: time formatting is not what
         * this compares. */
        json_put_time(tbuf, it->s.time + (uint64_t) offset_ns);
        json_object_object_add(o, "time", json_object_new_string_len(tbuf + 1, JSON_TIME_LEN - 2));
        json_object_object_add(o, "ts", json_object_new_uint64(it->s.time));
        json_object_object_add(o, "cpu", json_object_new_uint64(it->s.cpu));
        json_object_object_add(o, "pid", json_object_new_uint64(it->s.pid));
        json_object_object_add(o, "tid", json_object_new_uint64(it->s.tid));

        for (size_t i = fmt->n_common; i < fmt->n_fields; i++) {
                const struct format_field *ff = &fmt->fields[i];
                struct field_value v;
                json_object *x = NULL, *a;
                char hex[24];

                if (field_decode(ff, it->s.raw.data, it->s.raw.size, &v) < 0)
                        abort();
                switch (ff->kind) {
                case FIELD_INT:
                        x = ff->elem_signed ? json_object_new_int64(v.i) : json_object_new_uint64(v.u);
                        break;
                case FIELD_BOOL:
                        x = json_object_new_boolean(v.b);
                        break;
                case FIELD_POINTER:
                        snprintf(hex, sizeof(hex), "0x%" PRIx64, v.u);
                        x = json_object_new_string(hex);
                        break;
                case FIELD_CHARS:
                case FIELD_DYN_STRING:
                        x = json_object_new_string_len(v.str.ptr, (int) v.str.len);
                        break;
                case FIELD_ARRAY:
                case FIELD_DYN_ARRAY:
                        a = json_object_new_array_ext((int) v.arr.count);
                        for (size_t k = 0; k < v.arr.count; k++) {
                                int64_t e = field_array_get(ff, &v, k);

                                json_object_array_add(a, ff->elem_signed ? json_object_new_int64(e)
                                                                         : json_object_new_uint64((uint64_t) e));
                        }
                        x = a;
                        break;
                default:
                        abort();
                }
                json_object_object_add(f, ff->name, x);
        }
        json_object_object_add(o, "fields", f);
        return o;
}

static int jsonc_append(struct jbuf *b, const struct item *it) {
        json_object *o = jsonc_line(it);
        size_t len;
        const char *s = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &len);
        int r;

        r = jbuf_reserve(b, len + 1);
        if (r >= 0) {
                jbuf_put_bytes(b, s, len);
                jbuf_put_char(b, '\n');
        }
        json_object_put(o);
        return r;
}

/* ---- runs -------------------------------------------------------------------- */

static double now(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

struct result {
        double secs;
        uint64_t bytes;
};

/* Lines go into a 64 KiB-ish batch, as the daemon's drain loop does. */
static struct result run(bool use_jsonc, unsigned long lines, uint64_t *sink) {
        struct jbuf b = {};
        struct result res = {};
        double t0;

        t0 = now();
        for (unsigned long n = 0; n < lines; n++) {
                const struct item *it = &items[n % N_SAMPLES];
                int r = use_jsonc ? jsonc_append(&b, it) : encode_event(&b, it->kind->enc, &it->s, offset_ns);

                if (r < 0) {
                        fprintf(stderr, "encoding failed: %s\n", strerror(-r));
                        exit(EXIT_FAILURE);
                }
                if (b.len >= 65536) {
                        res.bytes += b.len;
                        *sink += (uint8_t) b.data[b.len / 2];
                        b.len = 0;
                }
        }
        res.bytes += b.len;
        res.secs = now() - t0;
        jbuf_done(&b);
        return res;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;

        return x < y ? -1 : x > y;
}

/* Both sides must say the same thing before their speed means anything. */
static void check_same(void) {
        struct jbuf a = {}, b = {};

        for (size_t i = 0; i < N_SAMPLES; i++) {
                json_object *x, *y;

                a.len = b.len = 0;
                if (encode_event(&a, items[i].kind->enc, &items[i].s, offset_ns) < 0 || jsonc_append(&b, &items[i]) < 0)
                        abort();
                a.data[a.len - 1] = 0;
                b.data[b.len - 1] = 0;
                x = json_tokener_parse(a.data);
                y = json_tokener_parse(b.data);
                if (!x || !y || !json_object_equal(x, y)) {
                        fprintf(stderr, "lines differ:\n%s\n%s\n", a.data, b.data);
                        exit(EXIT_FAILURE);
                }
                json_object_put(x);
                json_object_put(y);
        }
        jbuf_done(&a);
        jbuf_done(&b);
}

int main(int argc, char *argv[]) {
        unsigned long lines = argc > 1 ? strtoul(argv[1], NULL, 0) : 500000;
        double lps[2], mbps[2];
        uint64_t sink = 0;
        int r;

        if (lines == 0) {
                fprintf(stderr, "usage: %s [LINES]\n", argv[0]);
                return EXIT_FAILURE;
        }
        for (size_t k = 0; k < ELEMENTSOF(kinds); k++) {
                r = format_parse(kinds[k].text, kinds[k].system, &kinds[k].fmt);
                if (r >= 0)
                        r = encoder_new(kinds[k].event, kinds[k].fmt, &kinds[k].enc);
                if (r < 0) {
                        fprintf(stderr, "%s: %s\n", kinds[k].event, strerror(-r));
                        return EXIT_FAILURE;
                }
        }
        make_items();
        check_same();

        for (int side = 0; side < 2; side++) {
                double secs[5], bytes_per_line = 0;

                run(side, lines / 10 + 1, &sink);       /* warm up */
                for (int i = 0; i < 5; i++) {
                        struct result res = run(side, lines, &sink);

                        secs[i] = res.secs;
                        bytes_per_line = (double) res.bytes / (double) lines;
                }
                qsort(secs, 5, sizeof(double), cmp_double);
                lps[side] = (double) lines / secs[2];
                mbps[side] = lps[side] * bytes_per_line / 1e6;
                printf("%-12s %12.0f lines/s  %8.1f MB/s  (%.1f bytes/line, median of 5 runs of %lu)\n",
                       side ? "json-c" : "encode_event", lps[side], mbps[side], bytes_per_line, lines);
        }
        printf("ratio        %12.2fx lines/s\n", lps[0] / lps[1]);

        for (size_t k = 0; k < ELEMENTSOF(kinds); k++) {
                encoder_free(kinds[k].enc);
                format_free(kinds[k].fmt);
        }
        return sink == 42 ? 2 : EXIT_SUCCESS;
}
