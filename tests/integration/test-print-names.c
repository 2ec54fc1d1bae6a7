/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Names from print fmt against perf script, record for record.
 *
 * `perf record -a` takes sched:sched_switch (prev_state: the state
 * letters), irq:softirq_entry (vec: __print_symbolic) and kmem:kmalloc
 * (gfp_flags: __print_flags) while a workload sleeps, writes and syncs a
 * file; then `perf script` prints each record and `evmonctl decode` (the
 * encoder evmond uses) writes its line. For every record, keyed by event,
 * CPU and timestamp, the name in the line's "symbols" must be the text
 * perf script prints for that field, exactly, and both must have the
 * same records. Root, tracefs and perf (linux-perf), else 77. */

#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "itest.h"

static char tmpdir[64];

struct rec {
        char *key;      /* "EVENT CPU TS NAME" */
};

struct recs {
        char **v;
        size_t n, cap;
        size_t per_event[3];
};

static const char *const events[3] = { "sched:sched_switch", "irq:softirq_entry", "kmem:kmalloc" };
/* The field and how perf script's text shows it: after "KEY=" up to END. */
static const char *const fields[3] = { "prev_state", "vec", "gfp_flags" };
static const char *const perf_keys[3] = { "prev_state=", "[action=", "gfp_flags=" };
static const char perf_ends[3] = { ' ', ']', ' ' };

static int event_index(const char *name) {
        for (int i = 0; i < 3; i++)
                if (strcmp(name, events[i]) == 0)
                        return i;
        return -1;
}

static void recs_add(struct recs *r, int ev, int64_t cpu, uint64_t ts, const char *name, size_t name_len) {
        char *s;

        if (r->n == r->cap) {
                r->cap = r->cap ? r->cap * 2 : 1024;
                r->v = realloc(r->v, r->cap * sizeof(*r->v));
                assert_non_null(r->v);
        }
        assert_true(asprintf(&s, "%s %" PRId64 " %" PRIu64 " %.*s", events[ev], cpu, ts, (int) name_len, name) > 0);
        r->v[r->n++] = s;
        r->per_event[ev]++;
}

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

static void recs_done(struct recs *r) {
        for (size_t i = 0; i < r->n; i++)
                free(r->v[i]);
        free(r->v);
}

static char *read_file(const char *path) {
        FILE *f = fopen(path, "re");
        char *s = NULL;
        size_t n = 0;

        if (!f)
                fail_msg("cannot open %s: %m", path);
        if (getdelim(&s, &n, '\0', f) < 0) {
                free(s);
                s = strdup("");
        }
        fclose(f);
        return s;
}

static void run_sh(const char *cmd, int timeout_ms) {
        const char *argv[] = { "sh", "-c", cmd, NULL };
        char *out = NULL;
        int r = itest_run(argv, timeout_ms, &out);

        if (r != 0)
                fail_msg("`%s` gave %d: %s", cmd, r, out ? out : "");
        free(out);
}

/* "[001] 267.275999123:  irq:softirq_entry: vec=4 [action=BLOCK]" */
static void parse_perf_script(const char *text, struct recs *r) {
        for (const char *l = text; *l;) {
                const char *nl = strchr(l, '\n'), *end = nl ?: l + strlen(l);
                char line[8192], ev[128];
                unsigned long long sec, nsec;
                int cpu, off = 0, i;

                snprintf(line, sizeof(line), "%.*s", (int) (end - l), l);
                l = nl ? nl + 1 : end;
                if (sscanf(line, " [%d] %llu.%llu: %127[^:]:%n", &cpu, &sec, &nsec, ev, &off) != 4 || off == 0)
                        continue;
                /* The event name holds a ':' itself: read the second part. */
                char name2[128];
                int off2 = 0;
                if (sscanf(line + off, "%127[^:]:%n", name2, &off2) != 1 || off2 == 0)
                        continue;
                char full[300];
                snprintf(full, sizeof(full), "%s:%s", ev, name2);
                i = event_index(full);
                if (i < 0 || i >= 3)
                        continue;
                const char *key = perf_keys[i], *trace = line + off + off2;
                const char *v = key ? strstr(trace, key) : NULL;
                if (!v)
                        fail_msg("perf script's %s line has no %s: %s", full, key ? key : "key", line);
                v += strlen(key);
                const char *ve = strchr(v, perf_ends[i]) ?: v + strlen(v);
                recs_add(r, i, cpu, (uint64_t) sec * 1000000000ull + nsec, v, (size_t) (ve - v));
        }
}

struct decode_ctx {
        struct recs *r;
        size_t without;
};

static void decode_line(json_object *o, void *userdata) {
        struct decode_ctx *ctx = userdata;
        json_object *sym, *name;
        const char *type = itest_str(o, "type");
        int i;

        if (!type || strcmp(type, "event") != 0)
                return;
        i = event_index(itest_str(o, "event"));
        if (i < 0)
                return;
        if (!json_object_object_get_ex(o, "symbols", &sym) || !json_object_object_get_ex(sym, fields[i], &name)) {
                ctx->without++;
                recs_add(ctx->r, i, itest_int(o, "cpu"), (uint64_t) itest_int(o, "ts"), "(none)", 6);
                return;
        }
        recs_add(ctx->r, i, itest_int(o, "cpu"), (uint64_t) itest_int(o, "ts"), json_object_get_string(name),
                 (size_t) json_object_get_string_len(name));
}

static void test_perf_script_names(void **state) {
        char data[128], script[128], decoded[128], cmd[1024], evmonctl[256];
        struct recs theirs = {}, ours = {};
        struct decode_ctx ctx = { .r = &ours };
        char *text;
        size_t shown = 0, n_diff = 0;

        snprintf(data, sizeof(data), "%s/perf.data", tmpdir);
        snprintf(script, sizeof(script), "%s/script.txt", tmpdir);
        snprintf(decoded, sizeof(decoded), "%s/decode.jsonl", tmpdir);
        assert_non_null(itest_build_path("evmonctl", evmonctl, sizeof(evmonctl)));

        /* A workload with sleeps (S), disk writes and fsync (D, BLOCK
         * softirqs, kmalloc with several gfp flags), timers (TIMER, RCU). */
        snprintf(cmd, sizeof(cmd),
                 "perf record -q -a -o %s -e sched:sched_switch -e irq:softirq_entry -e kmem:kmalloc -- "
                 "sh -c 'for i in 1 2 3 4 5; do dd if=/dev/zero of=%s/f bs=64k count=16 conv=fsync 2>/dev/null; "
                 "sleep 0.05; done; ls -R /proc/self >/dev/null 2>&1' </dev/null",
                 data, tmpdir);
        run_sh(cmd, 120000);
        snprintf(cmd, sizeof(cmd), "perf script -i %s -F cpu,time,event,trace --ns > %s 2>/dev/null", data, script);
        run_sh(cmd, 120000);
        snprintf(cmd, sizeof(cmd), "%s decode %s > %s 2>/dev/null", evmonctl, data, decoded);
        run_sh(cmd, 120000);

        text = read_file(script);
        parse_perf_script(text, &theirs);
        free(text);
        text = read_file(decoded);
        itest_for_each_line(text, strlen(text), decode_line, &ctx);
        free(text);

        print_message("perf script: %zu sched_switch, %zu softirq_entry, %zu kmalloc; evmonctl decode: %zu, %zu, "
                      "%zu (%zu without a name)\n",
                      theirs.per_event[0], theirs.per_event[1], theirs.per_event[2], ours.per_event[0],
                      ours.per_event[1], ours.per_event[2], ctx.without);
        for (int i = 0; i < 3; i++)
                if (theirs.per_event[i] == 0)
                        fail_msg("perf recorded no %s in the workload: nothing compared", events[i]);

        qsort(theirs.v, theirs.n, sizeof(*theirs.v), cmp_str);
        qsort(ours.v, ours.n, sizeof(*ours.v), cmp_str);
        for (size_t i = 0, j = 0; i < theirs.n || j < ours.n;) {
                int c = i == theirs.n ? 1 : j == ours.n ? -1 : strcmp(theirs.v[i], ours.v[j]);

                if (c == 0) {
                        i++;
                        j++;
                        continue;
                }
                if (shown++ < 20)
                        print_message("  %s %s\n", c < 0 ? "perf script only:" : "evmon only:      ",
                                      c < 0 ? theirs.v[i] : ours.v[j]);
                n_diff++;
                if (c < 0)
                        i++;
                else
                        j++;
        }
        if (n_diff > 0)
                fail_msg("%zu records differ between perf script and evmonctl decode", n_diff);
        assert_int_equal(ctx.without, 0);
        recs_done(&theirs);
        recs_done(&ours);
}

static void require_perf(void) {
        const char *argv[] = { "perf", "--version", NULL };
        char *out = NULL;
        int r = itest_run(argv, 30000, &out);

        if (r != 0) {
                printf("SKIP: no working perf binary (`perf --version` gave %d: %s); apt-get install linux-perf\n", r,
                       out ? out : "");
                free(out);
                exit(ITEST_SKIP);
        }
        free(out);
}

int main(void) {
        static const char *const need[] = { "sched/sched_switch", "irq/softirq_entry", "kmem/kmalloc", NULL };
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_perf_script_names),
        };
        char cmd[128];
        int r;

        itest_require(need);
        require_perf();
        snprintf(tmpdir, sizeof(tmpdir), "/tmp/evmon-test-print-names-XXXXXX");
        if (!mkdtemp(tmpdir)) {
                perror("mkdtemp");
                return 1;
        }
        r = cmocka_run_group_tests_name("print fmt names against perf script", tests, NULL, NULL);
        if (r == 0) {
                snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
                if (system(cmd) != 0)
                        r = 1;
        } else
                printf("# kept %s (perf.data, perf script and decode output) for a look\n", tmpdir);
        return r;
}
