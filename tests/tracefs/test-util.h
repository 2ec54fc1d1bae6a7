/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Fixture helpers shared by the tracefs tests (beside ../test-util.h, the
 * helpers of all tests). Fixtures live in
 * $EVMON_SOURCE_ROOT/tests/tracefs/fixtures: NAME.format is a format file
 * (copied from a real kernel unless its test says otherwise), NAME.hex one
 * raw record (PERF_SAMPLE_RAW payload) as hex bytes, "#" starting a
 * comment. */

#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "evmon/cleanup.h"
#include "evmon/tracefs.h"
#include "../test-util.h"

static inline char *fixture_path(const char *name) {
        const char *root = getenv("EVMON_SOURCE_ROOT");
        char *p;

        if (!root)
                root = ".";
        if (asprintf(&p, "%s/tests/tracefs/fixtures/%s", root, name) < 0)
                return NULL;
        return p;
}

static inline char *fixture_text(const char *name) {
        _cleanup_(freep) char *path = fixture_path(name);
        char *buf = NULL;
        size_t len = 0;
        FILE *f;

        assert_non_null(path);
        f = fopen(path, "re");
        if (!f)
                fail_msg("cannot open fixture %s: %m", path);
        assert_int_equal(getdelim(&buf, &len, '\0', f) >= 0, 1);
        fclose(f);
        return buf;
}

/* The bytes of NAME.hex in a buffer of exactly that size, so that a read
 * past the end is one under ASan/valgrind. */
static inline uint8_t *fixture_hex(const char *name, size_t *ret_size) {
        _cleanup_(freep) char *text = fixture_text(name);
        uint8_t *buf;
        size_t n = 0;

        buf = malloc(strlen(text) / 2 + 1);
        assert_non_null(buf);
        for (const char *p = text; *p;) {
                unsigned v;
                int used;

                if (*p == '#') {
                        p = strchrnul(p, '\n');
                        continue;
                }
                if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') {
                        p++;
                        continue;
                }
                if (sscanf(p, "%2x%n", &v, &used) != 1 || used != 2)
                        fail_msg("bad hex in fixture %s near \"%.8s\"", name, p);
                buf[n++] = (uint8_t) v;
                p += 2;
        }

        *ret_size = n;
        uint8_t *exact = malloc(n ?: 1);
        assert_non_null(exact);
        memcpy(exact, buf, n);
        free(buf);
        return exact;
}

static inline struct format *fixture_format(const char *name, const char *system) {
        _cleanup_(freep) char *file = NULL, *text = NULL;
        struct format *f = NULL;
        int r;

        assert_true(asprintf(&file, "%s.format", name) >= 0);
        text = fixture_text(file);
        r = format_parse(text, system, &f);
        if (r < 0)
                fail_msg("format_parse(%s): %s", file, strerror(-r));
        return f;
}

static inline const struct format_field *format_field_by_name(const struct format *f, const char *name) {
        const struct format_field *ff = format_field_find(f, name);

        if (!ff)
                fail_msg("%s has no field %s", f->name, name);
        return ff;
}

