/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Folded stacks and the flame graph (src/shared/flamegraph.c): the folded
 * lines, the layout flamegraph.pl draws, hostile names, the SVG. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "evmon/flamegraph.h"

static struct flame *from_folded(const char *text) {
        struct flame *f = NULL;
        const char *p = text;

        assert_int_equal(flame_new(&f), 0);
        while (*p) {
                const char *nl = strchr(p, '\n');
                size_t len = nl ? (size_t) (nl - p) : strlen(p);

                assert_int_equal(flame_add_folded(f, p, len), 0);
                p += len + (nl ? 1 : 0);
        }
        return f;
}

static char *folded(const struct flame *f) {
        char *out = NULL;
        size_t n = 0;
        FILE *m = open_memstream(&out, &n);

        assert_non_null(m);
        assert_int_equal(flame_write_folded(f, m), 0);
        assert_int_equal(fclose(m), 0);
        return out;
}

static char *svg(const struct flame *f) {
        char *out = NULL;
        size_t n = 0;
        FILE *m = open_memstream(&out, &n);

        assert_non_null(m);
        assert_int_equal(flame_write_svg(f, NULL, m), 0);
        assert_int_equal(fclose(m), 0);
        return out;
}

/* Identical stacks merge, the lines come out sorted frame by frame. */
static void test_folded(void **state) {
        _cleanup_(flame_freep) struct flame *f = NULL;
        const char *a[] = { "busy", "main", "spin", "leaf" };
        const char *b[] = { "busy", "main" };
        const char *c[] = { "busy", "main", "idle" };
        const char *d[] = { "bash", "main" };
        char *out;

        assert_int_equal(flame_new(&f), 0);
        assert_int_equal(flame_add(f, a, 4, 3), 0);
        assert_int_equal(flame_add(f, b, 2, 1), 0);
        assert_int_equal(flame_add(f, a, 4, 2), 0);
        assert_int_equal(flame_add(f, c, 3, 4), 0);
        assert_int_equal(flame_add(f, d, 2, 7), 0);
        assert_int_equal(flame_total(f), 17);
        out = folded(f);
        assert_string_equal(out, "bash;main 7\n"
                                 "busy;main 1\n"
                                 "busy;main;idle 4\n"
                                 "busy;main;spin;leaf 5\n");
        free(out);
}

/* The layout: x is the share of samples, siblings alphabetical, a
 * parent's own samples left of its children, y the depth. */
static void test_layout(void **state) {
        _cleanup_(flame_freep) struct flame *f = from_folded("busy;main;spin;leaf 5\n"
                                                             "busy;main 1\n"
                                                             "bash;main 7\n"
                                                             "busy;main;idle 4\n");
        static const struct flame_box want[] = {
                { "all", 0, 0, 17 },
                { "bash", 1, 0, 7 },
                { "main", 2, 0, 7 },
                { "busy", 1, 7, 10 },
                { "main", 2, 7, 10 },
                { "idle", 3, 8, 4 },    /* after main's own sample */
                { "spin", 3, 12, 5 },
                { "leaf", 4, 12, 5 },
        };
        struct flame_box *boxes = NULL;
        size_t n = 0;
        unsigned depth = 0;

        assert_int_equal(flame_layout(f, &boxes, &n, &depth), 0);
        assert_int_equal(n, ELEMENTSOF(want));
        assert_int_equal(depth, 4);
        for (size_t i = 0; i < n; i++) {
                assert_string_equal(boxes[i].name, want[i].name);
                assert_int_equal(boxes[i].depth, want[i].depth);
                assert_int_equal(boxes[i].start, want[i].start);
                assert_int_equal(boxes[i].count, want[i].count);
        }
        free(boxes);
}

/* Names are anyone's: one frame each, valid UTF-8, no controls. */
static void test_hostile(void **state) {
        _cleanup_(flame_freep) struct flame *f = NULL;
        char long_name[FLAME_NAME_MAX * 2];
        const char *a[] = { "ev;il\ncomm", "x\x1b[2Jy", "\xc2\x9b" "31m", "bad\xff\xc3", "", long_name };
        char *out, *want;

        memset(long_name, 'n', sizeof(long_name) - 1);
        long_name[sizeof(long_name) - 1] = 0;
        assert_int_equal(flame_new(&f), 0);
        assert_int_equal(flame_add(f, a, ELEMENTSOF(a), 1), 0);
        out = folded(f);
        assert_int_equal(asprintf(&want, "ev_il_comm;x_[2Jy;_31m;bad??;[unknown];%.*s 1\n", FLAME_NAME_MAX,
                                  long_name), (int) strlen("ev_il_comm;x_[2Jy;_31m;bad??;[unknown]; 1\n") +
                                              FLAME_NAME_MAX);
        assert_string_equal(out, want);
        free(out);
        free(want);
        /* A line without a count is refused. */
        assert_int_equal(flame_add_folded(f, "a;b", 3), -EINVAL);
        assert_int_equal(flame_add_folded(f, "a;b x", 5), -EINVAL);
}

/* The SVG: a frame per box, widths in proportion, names escaped and
 * clipped to the box. */
static void test_svg(void **state) {
        _cleanup_(flame_freep) struct flame *f = from_folded("prog;main;<script>&\"' 3\n"
                                                             "prog;main;a_function_with_a_long_name_that_will_not_fit 1\n"
                                                             "prog;main;tiny 996\n");
        char *out = svg(f), *p;

        assert_non_null(strstr(out, "<svg version=\"1.1\" width=\"1200\""));
        assert_null(strstr(out, "<script>&"));    /* the frame named so, raw */
        assert_non_null(strstr(out, "<script type=\"text/ecmascript\">"));  /* the zoom */
        assert_non_null(strstr(out, "<title>&lt;script&gt;&amp;&quot;&apos; (3 samples, 0.30%)</title>"));
        /* 1180 pixels for 1000 samples: tiny is 1175.28 wide, main all;
         * 4 rows of 16 pixels over 34 below, in 134. */
        assert_non_null(strstr(out, "<title>tiny (996 samples, 99.60%)</title><rect x=\"14.72\" y=\"37.0\" "
                                    "width=\"1175.28\" height=\"15.0\""));
        assert_non_null(strstr(out, "<title>main (1,000 samples, 100.00%)</title><rect x=\"10.00\" y=\"53.0\" "
                                    "width=\"1180.00\""));
        assert_non_null(strstr(out, "<title>all (1,000 samples, 100.00%)</title><rect x=\"10.00\" y=\"85.0\""));
        /* 1.18 pixels: a box, no text. */
        p = strstr(out, "<title>a_function_with_a_long_name_that_will_not_fit (1 sample, 0.10%)</title>");
        assert_non_null(p);
        assert_non_null(strstr(p, "\"></text></g>"));
        assert_true(strstr(p, "\"></text></g>") < strstr(p, "\n"));
        free(out);

        /* Clipped: 30 pixels hold 4 characters, "ab.." of "abcdefgh". */
        _cleanup_(flame_freep) struct flame *g = from_folded("abcdefgh 1\nz 38\n");
        out = svg(g);
        assert_non_null(strstr(out, ">ab..</text>"));
        free(out);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_folded),
                cmocka_unit_test(test_layout),
                cmocka_unit_test(test_hostile),
                cmocka_unit_test(test_svg),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
