/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Scope-bound cleanup in the style of systemd's macro.h: one owner per
 * object, ownership handed on with TAKE_PTR()/TAKE_FD(). */

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _likely_(x) __builtin_expect(!!(x), 1)
#define _unlikely_(x) __builtin_expect(!!(x), 0)
#define _printf_(a, b) __attribute__((format(printf, a, b)))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

#define TAKE_PTR(p)                          \
        ({                                   \
                __typeof__(p) _p_ = (p);     \
                (p) = NULL;                  \
                _p_;                         \
        })

#define TAKE_FD(fd)                          \
        ({                                   \
                int _fd_ = (fd);             \
                (fd) = -1;                   \
                _fd_;                        \
        })

/* Defines NAME##p(T **p) calling FUNC(*p) for use with _cleanup_(). */
#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func)     \
        static inline void func##p(type *p) {       \
                if (*p)                             \
                        func(*p);                   \
        }

static inline void freep(void *p) {
        free(*(void **) p);
}

static inline int safe_close(int fd) {
        if (fd >= 0) {
                int saved = errno;
                close(fd);
                errno = saved;
        }
        return -1;
}

static inline void closep(int *fd) {
        safe_close(*fd);
}

static inline void strv_free(char **l) {
        if (!l)
                return;
        for (char **i = l; *i; i++)
                free(*i);
        free(l);
}

static inline void strv_freep(char ***l) {
        strv_free(*l);
}

/* errno as a negative number, never 0: for returning after a failed libc call. */
static inline int negative_errno(void) {
        return errno > 0 ? -errno : -EIO;
}

#include <stdio.h>
static inline void fclosep(FILE **f) {
        if (*f)
                fclose(*f);
}
