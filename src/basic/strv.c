/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* NULL-terminated string vectors: see evmon/strv.h. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "evmon/cleanup.h"
#include "evmon/strv.h"

size_t strv_length(char *const *l) {
        size_t n = 0;

        while (l && l[n])
                n++;
        return n;
}

bool strv_equal(char *const *a, char *const *b) {
        for (; a && *a && b && *b; a++, b++)
                if (strcmp(*a, *b) != 0)
                        return false;
        return (!a || !*a) && (!b || !*b);
}

bool strv_contains(char *const *l, const char *s) {
        for (; l && *l; l++)
                if (strcmp(*l, s) == 0)
                        return true;
        return false;
}

int strv_copy(char *const *l, char ***ret) {
        _cleanup_(strv_freep) char **c = NULL;
        size_t n = strv_length(l);

        *ret = NULL;
        if (!l)
                return 0;
        c = calloc(n + 1, sizeof(char *));
        if (!c)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (!(c[i] = strdup(l[i])))
                        return -ENOMEM;
        *ret = TAKE_PTR(c);
        return 0;
}

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

void strv_sort(char **l, size_t n) {
        if (n > 1)
                qsort(l, n, sizeof(char *), cmp_str);
}

int strv_builder_add(struct strv_builder *b, char *s) {
        if (b->n + 1 >= b->alloc) {
                size_t n = b->alloc ? b->alloc * 2 : 16;
                char **nl = reallocarray(b->l, n, sizeof(char *));

                if (!nl) {
                        free(s);
                        return -ENOMEM;
                }
                b->l = nl;
                b->alloc = n;
        }
        b->l[b->n++] = s;
        b->l[b->n] = NULL;
        return 0;
}

int strv_builder_finish(struct strv_builder *b, char ***ret) {
        if (!b->l) {
                b->l = calloc(1, sizeof(char *));
                if (!b->l)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(b->l);
        *b = (struct strv_builder) {};
        return 0;
}

void strv_builder_done(struct strv_builder *b) {
        strv_free(b->l);
        *b = (struct strv_builder) {};
}
