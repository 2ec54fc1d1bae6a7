/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* An event line's stack, folded (src/cli/cli-fold.c): the frames as the
 * line names them, root first; escapes decoded; hostile and malformed
 * lines refused, never crashed on. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "evmon/flamegraph.h"

#include "cli.h"

/* LINE folded alone: its folded text (caller frees), *RET the return. */
static char *fold(const char *line, const char *event, const char *comm, int *ret) {
        _cleanup_(flame_freep) struct flame *f = NULL;
        char *out = NULL;
        size_t n = 0;
        FILE *m;
        bool callchain;

        assert_int_equal(flame_new(&f), 0);
        *ret = profile_fold_line(f, line, strlen(line), event, comm, &callchain);
        m = open_memstream(&out, &n);
        assert_non_null(m);
        assert_int_equal(flame_write_folded(f, m), 0);
        assert_int_equal(fclose(m), 0);
        return out;
}

static void expect(const char *line, const char *event, const char *comm, int want_r, const char *want) {
        int r;
        char *got = fold(line, event, comm, &r);

        if (r != want_r || strcmp(got, want) != 0)
                fail_msg("%s:\ngot    %d \"%s\"\nwanted %d \"%s\"", line, r, got, want_r, want);
        free(got);
}

static void test_callchain(void **state) {
        /* Kernel then user, leaf first: folded root first. */
        expect("{\"type\":\"event\",\"event\":\"software:cpu-clock\",\"pid\":7,\"tid\":7,"
               "\"proc\":{\"comm\":\"busy\",\"exe\":\"/x\"},\"sample\":{\"ip\":\"0xffff1\",\"period\":1,"
               "\"callchain\":[{\"context\":\"kernel\",\"ips\":[\"0xffff1\",\"0xffff2\"],"
               "\"syms\":[{\"sym\":\"irq+0x10\",\"module\":\"[kernel.kallsyms]\"},null]},"
               "{\"context\":\"user\",\"ips\":[\"0x401\",\"0x402\",\"0x403\"],"
               "\"syms\":[{\"sym\":\"spin+0x1a\",\"module\":\"/usr/bin/busy\"},"
               "{\"module\":\"/lib/libc.so.6\",\"symbols\":\"helper busy\"},{\"sym\":\"a+0xb+0x3\"}]}]}}\n",
               "software:cpu-clock", NULL, 0, "busy;a+0xb;[libc.so.6];spin;0xffff2;irq 1\n");
        /* No callchain: the ip. Another event: nothing. Another type: nothing. */
        expect("{\"type\":\"event\",\"event\":\"e\",\"pid\":42,\"sample\":{\"ip\":\"0x10\"}}", NULL, NULL, 0,
               "[pid 42];0x10 1\n");
        expect("{\"type\":\"event\",\"event\":\"e\",\"pid\":42,\"sample\":{\"ip\":\"0x10\"}}", "f", NULL, 1, "");
        expect("{\"type\":\"lost\",\"cpu\":0,\"count\":3}", NULL, NULL, 1, "");
        /* decode's comm from COMM records, when the line has none. */
        expect("{\"type\":\"event\",\"event\":\"e\",\"pid\":42,\"sample\":{\"ip\":\"0x10\"}}", NULL, "sh", 0,
               "sh;0x10 1\n");
}

static void test_escapes(void **state) {
        /* ESC, NUL, a ';', an emoji by surrogates, a lone surrogate, a quote. */
        expect("{\"type\":\"event\",\"event\":\"e\",\"proc\":{\"comm\":\"a\\u001b[31m\\u0000;\\ud83d\\ude00\\udc00\\\"\"},"
               "\"sample\":{\"ip\":\"0x1\"}}", NULL, NULL, 0, "a_[31m__\xf0\x9f\x98\x80?\";0x1 1\n");
}

static void test_malformed(void **state) {
        static const char *const bad[] = {
                "{\"type\":\"event\",\"event\":\"e\",\"sample\":{\"callchain\":[{\"ips\":[\"0x1\"",
                "{\"type\":\"event\",\"pid\":}",
                "{\"type\":\"event\",\"proc\":{\"comm\":\"\\x\"}}",
                "{\"type\":\"event\",\"proc\":{\"comm\":\"\\u12\"}}",
                "[1,2]",
                "",
                "{\"type\":\"event\",\"sample\":{\"callchain\":[{\"ips\":[1]}]}}",
        };
        char deep[1000];
        int r;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                char *got = fold(bad[i], NULL, NULL, &r);

                if (r != -EBADMSG)
                        fail_msg("%s: %d, not -EBADMSG", bad[i], r);
                free(got);
        }
        /* Nesting past 64 levels in a key that is skipped. */
        strcpy(deep, "{\"type\":\"event\",\"x\":");
        for (int i = 0; i < 400; i++)
                strcat(deep, "[");
        free(fold(deep, NULL, NULL, &r));
        assert_int_equal(r, -EBADMSG);
}

/* More frames than a stack keeps: the root-most are kept, no overflow. */
static void test_deep(void **state) {
        _cleanup_(flame_freep) struct flame *f = NULL;
        size_t size = 64 + 2000 * 12, n;
        char *line = malloc(size);
        bool callchain;

        assert_non_null(line);
        n = (size_t) snprintf(line, size, "{\"type\":\"event\",\"sample\":{\"callchain\":[{\"ips\":[");
        for (int i = 0; i < 2000; i++)
                n += (size_t) snprintf(line + n, size - n, "%s\"0x%x\"", i ? "," : "", i);
        n += (size_t) snprintf(line + n, size - n, "]}]}}");
        assert_int_equal(flame_new(&f), 0);
        assert_int_equal(profile_fold_line(f, line, n, NULL, NULL, &callchain), 0);
        assert_true(callchain);
        assert_int_equal(flame_total(f), 1);
        free(line);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_callchain),
                cmocka_unit_test(test_escapes),
                cmocka_unit_test(test_malformed),
                cmocka_unit_test(test_deep),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
