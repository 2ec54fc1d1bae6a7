/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* src/basic/strv.c: NULL-terminated vectors of strings (systemd's strv),
 * for every module. strv_free() and strv_freep() are in cleanup.h. */

#include <stdbool.h>
#include <stddef.h>

#include "evmon/cleanup.h"

/* The number of strings before the NULL; 0 for a NULL vector. */
size_t strv_length(char *const *l);

/* Whether A and B hold the same strings in the same order (NULL and an
 * empty vector are equal). */
bool strv_equal(char *const *a, char *const *b);

/* Whether L holds S. */
bool strv_contains(char *const *l, const char *s);

/* A deep copy of L into *RET (NULL for a NULL L): 0 or -ENOMEM, with *RET
 * NULL on failure. */
int strv_copy(char *const *l, char ***ret);

/* Sorts the N strings of L by strcmp(). */
void strv_sort(char **l, size_t n);

/* A vector grown one string at a time, NULL-terminated after each add.
 * Start from {}; L is NULL until the first add; free it with strv_free(). */
struct strv_builder {
        char **l;
        size_t n, alloc;
};

/* Appends S, which the builder owns from here on (freed on -ENOMEM). */
int strv_builder_add(struct strv_builder *b, char *s);

/* Hands the vector to *RET (an empty one when nothing was added) and
 * empties B: 0 or -ENOMEM. */
int strv_builder_finish(struct strv_builder *b, char ***ret);

/* For _cleanup_(): frees what B holds. */
void strv_builder_done(struct strv_builder *b);
