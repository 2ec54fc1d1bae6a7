/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Symbolized callchains of trace events against perf script's (issue 29).
 *
 * evmond with a trace event carrying perf options ("callchain",
 * "symbols") and `perf record -g` watch the same run of
 * evmon-stack-child (built with frame pointers), whose stack_leaf()
 * sleeps under stack_middle() and stack_outer():
 *   tracepoint: sched:sched_switch -g, both filtered to the child's comm
 *   uprobe:     a uprobe on stack_leaf -g (perf's through perf probe)
 *   dwarf:      both on a copy built without frame pointers, with
 *               "callchain": {"user": "dwarf"} and perf --call-graph dwarf
 *               (perf script --no-inline: the frames, not the inlined
 *               functions perf names from debug info besides)
 * Both take the same kernel callchain of each hit, so sample for sample,
 * in time order, the frames must be equal as "sym+off (object)": the
 * kernel's from kallsyms, the child's from its .symtab, libc's from its
 * separate debug file by build id (libc6-dbg, where installed; perf
 * reads it too) with perf's choice among aliases. A sample whose user
 * frames evmond still had pending (the sandboxed helper's first answer)
 * is compared in its kernel frames only; at most two may be. Root,
 * tracefs and perf (linux-perf), and uprobes for the second and third,
 * else 77. "self": true: a switch of the child to evmond counts (perf
 * sees it). A user ip in the kernel's own mapping (a uprobe's single-step
 * slot) is "[unknown] ([uprobes])" on both sides. */

#include <errno.h>
#include <limits.h>
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

#define RUNS 20

static struct itest_daemon daemon_ = { .pid = -1 };
static char tmp[] = "/tmp/evmon-ccperf-XXXXXX";
static char child[PATH_MAX];

struct sample {
        char **frames;          /* "sym+off (object)", "[unknown] (object)" */
        size_t n;
        bool pending;           /* evmond: a user frame's symbols were pending */
        bool no_user;           /* evmond: no user frames (its DWARF unwinding's budget spent) */
        char *line;             /* evmond: the line, for the failure's message */
};

struct samples {
        struct sample *v;
        size_t n, cap;
};

static struct sample *samples_add(struct samples *s) {
        if (s->n == s->cap) {
                s->cap = s->cap ? s->cap * 2 : 64;
                s->v = realloc(s->v, s->cap * sizeof(*s->v));
                assert_non_null(s->v);
        }
        s->v[s->n] = (struct sample) {};
        return &s->v[s->n++];
}

static void frame_add(struct sample *x, const char *sym, const char *object) {
        char *f;

        /* No mapping for the address (an exec's first switch, whose
         * user ip is in no mapping yet): perf's "[unknown]". */
        if (!object || !*object)
                object = "[unknown]";
        assert_true(asprintf(&f, "%s (%s)", sym && *sym ? sym : "[unknown]", object) > 0);
        x->frames = realloc(x->frames, (x->n + 1) * sizeof(char *));
        assert_non_null(x->frames);
        x->frames[x->n++] = f;
}

static void samples_done(struct samples *s) {
        for (size_t i = 0; i < s->n; i++) {
                for (size_t j = 0; j < s->v[i].n; j++)
                        free(s->v[i].frames[j]);
                free(s->v[i].frames);
                free(s->v[i].line);
        }
        free(s->v);
        *s = (struct samples) {};
}

static bool have(const char *tool) {
        char cmd[256];

        snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", tool);
        return system(cmd) == 0;
}

static char *run_sh(const char *cmd, int timeout_ms) {
        const char *argv[] = { "sh", "-c", cmd, NULL };
        char *out = NULL;
        int r = itest_run(argv, timeout_ms, &out);

        if (r != 0)
                fail_msg("`%s` gave %d: %s", cmd, r, out ? out : "");
        return out;
}

/* perf script -F tid,event,ip,sym,symoff,dso: a header line per sample
 * ("  4242 sched:sched_switch: "), then "\tADDR SYM+OFF (OBJECT)" per
 * frame. The child's samples (its pid into *RET_PID: perf records it
 * alone), in time order. */
static void parse_perf(const char *text, struct samples *s, pid_t *ret_pid, const char *event) {
        struct sample *cur = NULL;

        for (const char *l = text; *l;) {
                const char *nl = strchr(l, '\n'), *end = nl ?: l + strlen(l);
                char line[4096];
                int tid;

                snprintf(line, sizeof(line), "%.*s", (int) (end - l), l);
                l = nl ? nl + 1 : end;
                if (line[0] == '\t') {
                        char *p = line + 1, *open, *close;

                        if (!cur)
                                continue;
                        p += strspn(p, " ");
                        p += strspn(p, "0123456789abcdef");
                        p += strspn(p, " ");
                        open = strrchr(p, '(');
                        close = strrchr(p, ')');
                        if (!open || !close || close < open)
                                fail_msg("perf script frame without an object: %s", line);
                        *close = '\0';
                        if (open > p && open[-1] == ' ')
                                open[-1] = '\0';
                        else
                                *open = '\0';
                        frame_add(cur, strcmp(p, "[unknown]") == 0 ? NULL : p, open + 1);
                        continue;
                }
                cur = NULL;
                if (sscanf(line, " %d ", &tid) != 1)
                        continue;
                if (event && !strstr(line, event))
                        continue;
                if (*ret_pid == 0)
                        *ret_pid = tid;
                if (tid == *ret_pid)
                        cur = samples_add(s);
        }
}

struct evmond_ctx {
        struct samples *s;
        const char *event;
        pid_t pid;
        const char *comm;       /* "proc":{"comm"} each line must have, or NULL */
        bool no_syms;           /* no line may have "syms" */
};

static void evmond_line(json_object *o, void *userdata) {
        struct evmond_ctx *ctx = userdata;
        json_object *sample, *chain;
        struct sample *x;
        const char *type = itest_str(o, "type"), *event = itest_str(o, "event");

        if (!type || strcmp(type, "event") != 0 || !event || strcmp(event, ctx->event) != 0 ||
            itest_int(o, "pid") != ctx->pid)
                return;
        x = samples_add(ctx->s);
        x->line = strdup(json_object_to_json_string(o));
        if (ctx->comm) {
                json_object *proc;

                if (!json_object_object_get_ex(o, "proc", &proc) || !itest_str(proc, "comm") ||
                    strcmp(itest_str(proc, "comm"), ctx->comm) != 0)
                        fail_msg("%s line without \"proc\":{\"comm\":\"%s\"}: %s", event, ctx->comm,
                                 json_object_to_json_string(o));
        }
        if (!json_object_object_get_ex(o, "sample", &sample) || !json_object_object_get_ex(sample, "callchain", &chain))
                fail_msg("%s line without a callchain: %s", event, json_object_to_json_string(o));
        x->no_user = true;
        for (size_t i = 0; i < json_object_array_length(chain); i++)
                if (strcmp(itest_str(json_object_array_get_idx(chain, i), "context") ?: "", "user") == 0)
                        x->no_user = false;
        for (size_t i = 0; i < json_object_array_length(chain); i++) {
                json_object *part = json_object_array_get_idx(chain, i), *syms;
                const char *context = itest_str(part, "context");

                if (ctx->no_syms) {
                        if (json_object_object_get_ex(part, "syms", &syms))
                                fail_msg("\"syms\" with --no-symbols: %s", json_object_to_json_string(o));
                        continue;
                }
                if (!json_object_object_get_ex(part, "syms", &syms))
                        fail_msg("a callchain without \"syms\" (\"symbols\": true): %s", json_object_to_json_string(o));
                for (size_t j = 0; j < json_object_array_length(syms); j++) {
                        json_object *f = json_object_array_get_idx(syms, j);
                        const char *module = itest_str(f, "module"), *note = itest_str(f, "note");

                        if (note && strcmp(note, "symbols pending") == 0 && context && strcmp(context, "user") == 0)
                                x->pending = true;
                        frame_add(x, itest_str(f, "sym"), module ? module : "[unknown]");
                }
        }
}

static char *join(const struct sample *x, bool kernel_only) {
        size_t n = 1;
        char *s;

        for (size_t i = 0; i < x->n; i++)
                n += strlen(x->frames[i]) + 3;
        s = calloc(1, n);
        assert_non_null(s);
        for (size_t i = 0; i < x->n; i++) {
                if (kernel_only && !strstr(x->frames[i], "([kernel.kallsyms])"))
                        continue;
                strcat(s, x->frames[i]);
                strcat(s, " | ");
        }
        return s;
}

/* Whether EV's samples from K on are PERF's, frame for frame; the first
 * difference into *RET_A and *RET_B (freed by the caller). */
static bool match_at(const struct samples *perf, const struct samples *ev, size_t k, size_t *ret_pending,
                     size_t *ret_skipped, char **ret_a, char **ret_b) {
        *ret_pending = *ret_skipped = 0;
        for (size_t i = 0; i < perf->n; i++) {
                bool kernel_only = ev->v[k + i].pending || ev->v[k + i].no_user;
                char *a = join(&perf->v[i], kernel_only), *b = join(&ev->v[k + i], kernel_only);

                *ret_pending += ev->v[k + i].pending;
                *ret_skipped += !ev->v[k + i].pending && ev->v[k + i].no_user;
                if (strcmp(a, b) != 0) {
                        *ret_a = a;
                        *ret_b = b;
                        fprintf(stderr, "at %zu, evmond's line: %s\n", k + i, ev->v[k + i].line ?: "");
                        return false;
                }
                free(a);
                free(b);
        }
        return true;
}

/* Sample for sample, in time order: equal frames. evmond, system-wide,
 * may see up to two switches of the child that perf's task event does
 * not: one between the exec setting the comm and perf_event_exec()
 * enabling perf's event, and the exiting child's last one (in
 * do_task_dead(), after perf_event_exit_task() closed perf's). So PERF's
 * samples must be EV's from some K on. */
static void compare_skipping(const struct samples *perf, const struct samples *ev, const char *what,
                             size_t max_skipped) {
        char *a = NULL, *b = NULL;
        size_t pending = 0, skipped = 0;
        bool found = false;

        fprintf(stderr, "%s: perf script %zu samples, evmond %zu\n", what, perf->n, ev->n);
        if (perf->n > 0) {
                char *f = join(&perf->v[0], false);
                fprintf(stderr, "%s: perf's first: %s\n", what, f);
                free(f);
        }
        assert_true(perf->n >= RUNS);
        assert_true(ev->n >= perf->n && ev->n <= perf->n + 2);
        for (size_t k = 0; !found && k <= ev->n - perf->n; k++) {
                free(a);
                free(b);
                a = b = NULL;
                found = match_at(perf, ev, k, &pending, &skipped, &a, &b);
                if (found && k + perf->n < ev->n) {
                        char *last = join(&ev->v[ev->n - 1], false);

                        fprintf(stderr, "%s: evmond's last, not perf's: %s\n", what, last);
                        free(last);
                }
        }
        if (!found)
                fail_msg("%s: a sample differs:\nperf script: %s\nevmond:      %s", what, a, b);
        fprintf(stderr, "%s: %zu with symbols pending, %zu without user frames\n", what, pending, skipped);
        assert_true(pending <= 2);
        assert_true(skipped <= max_skipped);
}

/* Frame pointers: every user frame is the kernel's, none left out. */
static void compare(const struct samples *perf, const struct samples *ev, const char *what) {
        compare_skipping(perf, ev, what, 0);
}

static void start(const char *config_fmt) {
        char config[PATH_MAX + 1024];

        snprintf(config, sizeof(config), config_fmt, child);
        assert_int_equal(itest_daemon_start(&daemon_, config), 0);
}

static void collect(const char *event, pid_t pid, struct samples *s, struct itest_client *c) {
        struct evmond_ctx ctx = { .s = s, .event = event, .pid = pid };
        size_t len;
        char *text = itest_client_slurp(c, 1000, 15000, &len);

        itest_for_each_line(text, len, evmond_line, &ctx);
        free(text);
}

/* evmonctl decode of perf's own file: the same frames as perf script
 * (issue 29), the comm perf script names, and none with --no-symbols. */
static void check_decode(const char *file, const char *event, pid_t pid, const struct samples *perf) {
        struct samples dec = {}, plain = {};
        struct evmond_ctx ctx = { .s = &dec, .event = event, .pid = pid, .comm = "evmon-stack-chi" };
        char path[512], cmd[2048], *out;

        /* Its stderr (no clock reference: perf record without -k) apart. */
        itest_build_path("evmonctl", path, sizeof(path));
        snprintf(cmd, sizeof(cmd), "%s decode %s 2>/dev/null", path, file);
        out = run_sh(cmd, 60000);
        itest_for_each_line(out, strlen(out), evmond_line, &ctx);
        free(out);
        compare(perf, &dec, "evmonctl decode");
        snprintf(cmd, sizeof(cmd), "%s decode --no-symbols %s 2>/dev/null", path, file);
        out = run_sh(cmd, 60000);
        ctx = (struct evmond_ctx) { .s = &plain, .event = event, .pid = pid, .no_syms = true };
        itest_for_each_line(out, strlen(out), evmond_line, &ctx);
        free(out);
        assert_int_equal(plain.n, dec.n);
        samples_done(&dec);
        samples_done(&plain);
}

/* The child runs under perf record with ASAN_OPTIONS=detect_leaks=0: in
 * a sanitized build LeakSanitizer stops the exiting child with ptrace to
 * look for leaks, a switch (in ptrace_stop()) evmond sees system-wide and
 * perf's task event, closed by then, does not. */
static void test_tracepoint(void **state) {
        struct samples perf = {}, ev = {};
        struct itest_client *c = malloc(sizeof(*c));
        char cmd[2 * PATH_MAX + 256], *out;
        pid_t pid = 0;

        /* The comm the kernel keeps: 15 bytes of the file name. */
        start("{\"order\": \"time\", \"self\": true, \"events\": [{\"tracepoint\": \"sched:sched_switch\", \"callchain\": {},\n"
              "  \"symbols\": true, \"filter\": \"prev_comm == \\\"evmon-stack-chi\\\"\"}]}%.0s");
        assert_non_null(c);
        assert_int_equal(itest_client_connect(c, daemon_.socket), 0);
        json_object_put(itest_client_expect(c, "hello", 5000));

        snprintf(cmd, sizeof(cmd), "ASAN_OPTIONS=detect_leaks=0 perf record -q -o %s/tp.data -e sched:sched_switch -g "
                 "--filter 'prev_comm == \"evmon-stack-chi\"' -- %s %d 2>&1", tmp, child, RUNS);
        free(run_sh(cmd, 60000));
        snprintf(cmd, sizeof(cmd), "perf script -i %s/tp.data -F tid,event,ip,sym,symoff,dso 2>/dev/null", tmp);
        out = run_sh(cmd, 60000);
        parse_perf(out, &perf, &pid, NULL);
        free(out);
        assert_true(pid > 0);
        collect("sched:sched_switch", pid, &ev, c);
        compare(&perf, &ev, "sched:sched_switch");
        snprintf(cmd, sizeof(cmd), "%s/tp.data", tmp);
        check_decode(cmd, "sched:sched_switch", pid, &perf);

        itest_client_close(c);
        free(c);
        samples_done(&perf);
        samples_done(&ev);
        assert_int_equal(itest_daemon_stop(&daemon_), 0);
}

static void test_uprobe(void **state) {
        struct samples perf = {}, ev = {};
        struct itest_client *c = malloc(sizeof(*c));
        char cmd[2 * PATH_MAX + 256], *out;
        pid_t pid = 0;
        int r;

        if (access("/sys/kernel/tracing/uprobe_events", W_OK) < 0 &&
            access("/sys/kernel/debug/tracing/uprobe_events", W_OK) < 0)
                skip();
        start("{\"order\": \"time\", \"self\": true, \"events\": [{\"uprobe\": \"%s:stack_leaf\", \"name\": \"leaf\",\n"
              "  \"callchain\": {}, \"symbols\": true}]}");
        assert_non_null(c);
        assert_int_equal(itest_client_connect(c, daemon_.socket), 0);
        json_object_put(itest_client_expect(c, "hello", 5000));

        snprintf(cmd, sizeof(cmd), "perf probe -q -d 'evmonccperf:*' >/dev/null 2>&1; "
                 "perf probe -q -x %s -a 'evmonccperf:leaf=stack_leaf' 2>&1", child);
        free(run_sh(cmd, 60000));
        snprintf(cmd, sizeof(cmd), "ASAN_OPTIONS=detect_leaks=0 perf record -q -o %s/up.data -e evmonccperf:leaf -g -- %s %d 2>&1; r=$?; "
                 "perf probe -q -d 'evmonccperf:*' >/dev/null 2>&1; exit $r", tmp, child, RUNS);
        free(run_sh(cmd, 60000));
        snprintf(cmd, sizeof(cmd), "perf script -i %s/up.data -F tid,event,ip,sym,symoff,dso 2>/dev/null", tmp);
        out = run_sh(cmd, 60000);
        parse_perf(out, &perf, &pid, NULL);
        free(out);
        assert_true(pid > 0);
        collect("uprobe:leaf", pid, &ev, c);
        compare(&perf, &ev, "uprobe:leaf");
        snprintf(cmd, sizeof(cmd), "%s/up.data", tmp);
        check_decode(cmd, "evmonccperf:leaf", pid, &perf);
        /* The child's own frames, named: stack_leaf under stack_middle,
         * stack_outer and main (the probe hits before stack_leaf pushes
         * its frame). */
        r = 0;
        for (size_t i = 0; i < ev.v[ev.n - 1].n; i++)
                r += strncmp(ev.v[ev.n - 1].frames[i], "stack_", 6) == 0;
        assert_true(r >= 2);

        itest_client_close(c);
        free(c);
        samples_done(&perf);
        samples_done(&ev);
        assert_int_equal(itest_daemon_stop(&daemon_), 0);
}

/* A program built without frame pointers, "callchain": {"user": "dwarf"}
 * against perf record --call-graph dwarf: a uprobe and sched_switch in
 * one run. perf script --no-inline: perf's default adds the names of
 * inlined functions from DWARF debug info (__GI___clock_nanosleep
 * "(inlined)"), which are no frames of the stack. */
static void test_dwarf(void **state) {
        static const char *const events[2] = { "uprobe:leaf", "sched:sched_switch" };
        static const char *const perf_events[2] = { "evmonccdw:leaf", "sched:sched_switch" };
        struct itest_client *c = malloc(sizeof(*c));
        char cmd[3 * PATH_MAX + 512], *out, nofp[PATH_MAX], rel[PATH_MAX], config[PATH_MAX + 1024];
        struct evmond_ctx ctx;
        size_t len;
        char *text;

        if (access("/sys/kernel/tracing/uprobe_events", W_OK) < 0 &&
            access("/sys/kernel/debug/tracing/uprobe_events", W_OK) < 0)
                skip();
        itest_build_path("tests/integration/evmon-stack-child-nofp", rel, sizeof(rel));
        assert_non_null(realpath(rel, nofp));
        snprintf(config, sizeof(config),
                 "{\"order\": \"time\", \"self\": true, \"events\": [\n"
                 "  {\"uprobe\": \"%s:stack_leaf\", \"name\": \"leaf\", \"callchain\": {\"user\": \"dwarf\"},\n"
                 "   \"symbols\": true},\n"
                 "  {\"tracepoint\": \"sched:sched_switch\", \"callchain\": {\"user\": \"dwarf\", \"stack_bytes\": 16384},\n"
                 "   \"symbols\": true, \"filter\": \"prev_comm == \\\"evmon-stack-chi\\\"\"}]}", nofp);
        assert_int_equal(itest_daemon_start(&daemon_, config), 0);
        assert_non_null(c);
        assert_int_equal(itest_client_connect(c, daemon_.socket), 0);
        json_object_put(itest_client_expect(c, "hello", 5000));

        snprintf(cmd, sizeof(cmd), "perf probe -q -d 'evmonccdw:*' >/dev/null 2>&1; "
                 "perf probe -q -x %s -a 'evmonccdw:leaf=stack_leaf' 2>&1", nofp);
        free(run_sh(cmd, 60000));
        snprintf(cmd, sizeof(cmd), "ASAN_OPTIONS=detect_leaks=0 perf record -q -o %s/dw.data -e evmonccdw:leaf -e sched:sched_switch "
                 "--filter 'prev_comm == \"evmon-stack-chi\"' --call-graph dwarf -- %s %d 2>&1; r=$?; "
                 "perf probe -q -d 'evmonccdw:*' >/dev/null 2>&1; exit $r", tmp, nofp, RUNS);
        free(run_sh(cmd, 60000));
        snprintf(cmd, sizeof(cmd), "perf script --no-inline -i %s/dw.data -F tid,event,ip,sym,symoff,dso 2>/dev/null",
                 tmp);
        out = run_sh(cmd, 60000);
        text = itest_client_slurp(c, 1000, 15000, &len);
        for (int i = 0; i < 2; i++) {
                struct samples perf = {}, ev = {};
                pid_t pid = 0;
                size_t deep = 0;

                parse_perf(out, &perf, &pid, perf_events[i]);
                assert_true(pid > 0);
                ctx = (struct evmond_ctx) { .s = &ev, .event = events[i], .pid = pid };
                itest_for_each_line(text, len, evmond_line, &ctx);
                /* DWARF: on a loaded machine (a sanitized build beside
                 * a VM) the unwinding's budget, 100 ms of the loop a
                 * second, can run out: such a sample keeps its kernel
                 * frames (counted in status's unwind_skipped); at most
                 * half of them may. */
                compare_skipping(&perf, &ev, events[i], perf.n / 2);
                /* evmonctl decode unwinds perf's own samples alike. */
                snprintf(cmd, sizeof(cmd), "%s/dw.data", tmp);
                check_decode(cmd, perf_events[i], pid, &perf);
                /* The whole stack, which frame pointers would not give:
                 * stack_outer and main under the leaf. */
                for (size_t k = 0; k < ev.n; k++) {
                        char *j = join(&ev.v[k], false);

                        deep += strstr(j, "stack_outer+") && strstr(j, "main+");
                        free(j);
                }
                assert_true(deep >= RUNS);
                samples_done(&perf);
                samples_done(&ev);
        }
        free(out);
        free(text);
        itest_client_close(c);
        free(c);
        assert_int_equal(itest_daemon_stop(&daemon_), 0);
}

static int setup(void **state) {
        static const char *const need[] = { "sched/sched_switch", NULL };
        char rel[PATH_MAX];

        itest_require(need);
        if (!have("perf")) {
                fprintf(stderr, "SKIP: perf (linux-perf) is needed\n");
                exit(77);
        }
        if (system("perf record -q -o /dev/null -e sched:sched_switch -- true >/dev/null 2>&1") != 0) {
                fprintf(stderr, "SKIP: perf record cannot record sched:sched_switch here\n");
                exit(77);
        }
        assert_non_null(mkdtemp(tmp));
        itest_build_path("tests/integration/evmon-stack-child", rel, sizeof(rel));
        /* perf and evmond name the file by its real path. */
        assert_non_null(realpath(rel, child));
        return 0;
}

static int teardown(void **state) {
        char cmd[128];

        itest_daemon_cleanup(&daemon_);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
        return system(cmd) == 0 ? 0 : -1;
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_tracepoint),
                cmocka_unit_test(test_uprobe),
                cmocka_unit_test(test_dwarf),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
