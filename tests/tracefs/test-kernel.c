/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tracefs.c and format.c against the running kernel: tracefs_open(NULL)
 * finds the real mount, and every events/SYSTEM/NAME/format file parses
 * into fields that make sense. Exits 77 (skip) with the reason when
 * tracefs is absent or not readable (not root). */

#define _GNU_SOURCE 1

#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <time.h>
#include <unistd.h>

#include "../host-tracing.h"
#include "test-util.h"

static struct tracefs *tfs;

static bool is_int_width(unsigned n) {
        return n == 1 || n == 2 || n == 4 || n == 8;
}

static void check_field(const struct format *f, const struct format_field *x) {
        const char *ev = f->name;

        if (!x->name[0] || !x->type[0])
                fail_msg("%s: field without name or type", ev);
        if ((unsigned) x->kind >= _FIELD_KIND_MAX)
                fail_msg("%s.%s: kind %d", ev, x->name, x->kind);
        if ((uint64_t) x->offset + x->size > f->min_size)
                fail_msg("%s.%s: ends at %u past min_size %u", ev, x->name, x->offset + x->size, f->min_size);
        if (!is_int_width(x->elem_size))
                fail_msg("%s.%s: elem_size %u", ev, x->name, x->elem_size);

        switch (x->kind) {
        case FIELD_INT:
                if (!is_int_width(x->size) || x->elem_size > x->size)
                        fail_msg("%s.%s (%s): int of %u in a slot of %u", ev, x->name, x->type, x->elem_size,
                                 x->size);
                break;
        case FIELD_BOOL:
        case FIELD_POINTER:
                if (!is_int_width(x->size) || x->elem_size != x->size)
                        fail_msg("%s.%s (%s): size %u", ev, x->name, x->type, x->size);
                break;
        case FIELD_CHARS:
                if (x->size == 0 || x->elem_size != 1)
                        fail_msg("%s.%s (%s): size %u", ev, x->name, x->type, x->size);
                break;
        case FIELD_ARRAY:
                if (x->size == 0 || x->size % x->elem_size != 0)
                        fail_msg("%s.%s (%s): %u bytes of %u", ev, x->name, x->type, x->size, x->elem_size);
                break;
        case FIELD_DYN_STRING:
        case FIELD_DYN_ARRAY:
                if (x->flex ? x->size != 0 || x->rel : x->size != 4)
                        fail_msg("%s.%s (%s): size %u", ev, x->name, x->type, x->size);
                if (x->kind == FIELD_DYN_STRING && x->elem_size != 1)
                        fail_msg("%s.%s (%s): string of %u", ev, x->name, x->type, x->elem_size);
                break;
        default:
                fail();
        }

        /* What the users of these fields count on. */
        if (strcmp(x->type, "int") == 0 && (x->kind != FIELD_INT || x->elem_size != 4 || !x->elem_signed))
                fail_msg("%s.%s: int is not a signed 4-byte int", ev, x->name);
        if (strcmp(x->type, "__data_loc char[]") == 0 && x->kind != FIELD_DYN_STRING)
                fail_msg("%s.%s: __data_loc char[] is no string", ev, x->name);
        if (strchr(x->type, '*') && !strchr(x->type, '[') && x->kind != FIELD_POINTER)
                fail_msg("%s.%s: %s is no pointer", ev, x->name, x->type);
}

static void test_open_null(void **state) {
        _cleanup_(tracefs_freep) struct tracefs *again = NULL;
        _cleanup_(freep) char *mounts = NULL, *found = NULL;
        size_t len;
        FILE *f;

        f = fopen("/proc/mounts", "re");
        assert_non_null(f);
        assert_true(getdelim(&mounts, &len, '\0', f) >= 0);
        fclose(f);

        assert_int_equal(tracefs_find_mount(mounts, &found), 0);
        assert_string_equal(tracefs_path(tfs), found);

        assert_int_equal(tracefs_open(found, &again), 0);
        assert_string_equal(tracefs_path(again), found);
}

static void test_all_formats(void **state) {
        _cleanup_(strv_freep) char **events = NULL;
        _cleanup_(freep) char *pattern = NULL;
        size_t n_parsed = 0, n_fields = 0, by_kind[_FIELD_KIND_MAX] = {};
        glob_t g = {};
        int n;

        n = tracefs_list_events(tfs, &events);
        assert_true(n > 0);

        /* What a shell glob counts, independently of tracefs_list_events(). */
        assert_true(asprintf(&pattern, "%s/events/*/*/format", tracefs_path(tfs)) >= 0);
        assert_int_equal(glob(pattern, 0, NULL, &g), 0);
        assert_int_equal(g.gl_pathc, (size_t) n);
        globfree(&g);

        for (char **e = events; *e; e++) {
                _cleanup_(format_freep) struct format *f = NULL;
                _cleanup_(freep) char *system = strdup(*e), *id_path = NULL, *id_text = NULL;
                char *name;
                int r;

                assert_non_null(system);
                name = strchr(system, ':');
                assert_non_null(name);
                *name++ = '\0';

                r = tracefs_event_format(tfs, system, name, &f);
                if (r < 0)
                        fail_msg("%s: %s", *e, strerror(-r));

                assert_string_equal(f->system, system);
                assert_string_equal(f->name, name);
                assert_true(asprintf(&id_path, "events/%s/%s/id", system, name) >= 0);
                /* Most ftrace/ events have no id file (perf cannot open them). */
                r = tracefs_read(tfs, id_path, &id_text, NULL);
                if (r != -ENOENT || strcmp(system, "ftrace") != 0) {
                        assert_int_equal(r, 0);
                        assert_int_equal(strtoul(id_text, NULL, 10), f->id);
                }

                assert_true(f->n_fields > 0);
                assert_true(f->n_common >= 1);
                assert_string_equal(f->fields[0].name, "common_type");
                assert_int_equal(f->fields[0].size, 2);
                for (size_t i = 0; i < f->n_fields; i++) {
                        check_field(f, &f->fields[i]);
                        by_kind[f->fields[i].kind]++;
                }
                n_fields += f->n_fields;
                n_parsed++;
        }

        assert_int_equal(n_parsed, (size_t) n);
        print_message("parsed %zu format files of %s (%zu fields:", n_parsed, tracefs_path(tfs), n_fields);
        for (int k = 0; k < _FIELD_KIND_MAX; k++)
                print_message(" %s %zu", field_kind_to_string(k), by_kind[k]);
        print_message(")\n");
}

static unsigned count_text(const char *text, const char *word) {
        unsigned n = 0;
        size_t l = strlen(word);

        for (const char *s = text; (s = strstr(s, word)); s += l)
                if (s[l] == '(' || (s[l] == '_' && strncmp(s + l, "_u64(", 5) == 0))
                        n++;
        return n;
}

/* Every format's print fmt parses (printfmt.c), and the names it gives fit
 * the bound the encoder reserves. Helpers it cannot name are counted, as
 * evmond counts them, and listed. */
static void test_all_print_fmts(void **state) {
        _cleanup_(strv_freep) char **events = NULL;
        size_t n_formats = 0, n_fields = 0, n_helpers = 0, n_unknown = 0, n_unknown_formats = 0;
        struct timespec t0, t1;
        double parse_ms = 0;
        int n;

        n = tracefs_list_events(tfs, &events);
        assert_true(n > 0);
        for (char **e = events; *e; e++) {
                _cleanup_(format_freep) struct format *f = NULL;
                _cleanup_(freep) char *system = strdup(*e), *rel = NULL, *text = NULL;
                char *name, buf[4096];
                int r;

                assert_non_null(system);
                name = strchr(system, ':');
                *name++ = '\0';
                assert_true(asprintf(&rel, "events/%s/%s/format", system, name) >= 0);
                assert_int_equal(tracefs_read(tfs, rel, &text, NULL), 0);

                clock_gettime(CLOCK_MONOTONIC, &t0);
                r = format_parse(text, system, &f);
                clock_gettime(CLOCK_MONOTONIC, &t1);
                parse_ms += (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
                if (r < 0)
                        fail_msg("%s: %s", *e, strerror(-r));
                if (f->print_bad)
                        fail_msg("%s: print fmt does not parse: %s", *e, strstr(text, "print fmt:") ?: "(none)");

                n_helpers += count_text(text, "__print_symbolic") + count_text(text, "__print_flags");
                for (size_t i = 0; i < f->n_symbols; i++) {
                        const struct field_symbols *fs = &f->symbols[i];
                        static const uint64_t values[] = { 0, 1, 2, 3, 0x80, 0xffff, UINT64_MAX };

                        assert_true(fs->field < f->n_fields);
                        assert_true(fs->n_parts > 0);
                        assert_true(fs->name_max <= sizeof(buf));
                        assert_ptr_equal(format_symbols_find(f, fs->field), fs);
                        if (i > 0)
                                assert_true(f->symbols[i - 1].field < fs->field);
                        for (size_t k = 0; k < ELEMENTSOF(values); k++)
                                assert_true(symbols_name(fs, values[k], buf, sizeof(buf)) <= fs->name_max);
                        n_fields++;
                }
                if (f->print_unknown > 0) {
                        if (n_unknown_formats < 40)
                                print_message("  %s: %u helper(s) give no names\n", *e, f->print_unknown);
                        n_unknown_formats++;
                        n_unknown += f->print_unknown;
                }
                n_formats++;
        }
        print_message("%zu formats (print fmt included) parsed in %.1f ms: %zu __print_symbolic/__print_flags "
                      "calls, %zu fields named, %zu helpers unknown (numbers only) in %zu formats\n",
                      n_formats, parse_ms, n_helpers, n_fields, n_unknown, n_unknown_formats);
        /* This kernel (6.18) names prev_state, softirq vectors and gfp flags. */
        assert_true(n_fields > 0);
        assert_int_equal(n_formats, (size_t) n);
}

int main(void) {
        host_tracing_require_usable();
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_open_null),
                cmocka_unit_test(test_all_formats),
                cmocka_unit_test(test_all_print_fmts),
        };
        _cleanup_(freep) char *mounts = NULL, *found = NULL;
        size_t len;
        FILE *f;
        int r;

        f = fopen("/proc/mounts", "re");
        if (f) {
                if (getdelim(&mounts, &len, '\0', f) < 0) {
                        free(mounts);
                        mounts = NULL;
                }
                fclose(f);
        }
        if (!mounts || tracefs_find_mount(mounts, &found) < 0) {
                printf("SKIP: tracefs is not mounted\n");
                return 77;
        }
        if (access(found, R_OK | X_OK) < 0) {
                printf("SKIP: cannot read tracefs at %s: %m (not root?)\n", found);
                return 77;
        }

        r = tracefs_open(NULL, &tfs);
        if (r < 0) {
                printf("FAIL: tracefs_open(NULL) with tracefs mounted at %s: %s\n", found, strerror(-r));
                return 1;
        }

        r = cmocka_run_group_tests(tests, NULL, NULL);
        tfs = tracefs_free(tfs);
        return r;
}
