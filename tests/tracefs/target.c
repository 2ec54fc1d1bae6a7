/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The program the uprobe tests probe: "probe-target STRING NUMBER" calls
 * evmon_target(STRING, NUMBER) once and exits with its result & 0xff.
 * Built -O0 and the functions kept out of line so the symbols exist and
 * each call really enters them. */

#include <stdlib.h>
#include <string.h>

int evmon_target(const char *s, long n);
int evmon_dup_caller(int x);

/* A local (static) function: only .symtab has it. */
static __attribute__((noinline, used)) long evmon_local(long n) {
        return n * 2;
}

__attribute__((noinline, used)) int evmon_target(const char *s, long n) {
        return (int) (strlen(s) + (size_t) evmon_local(n) / 2);
}

int main(int argc, char **argv) {
        const char *s = argc > 1 ? argv[1] : "hello";
        long n = argc > 2 ? strtol(argv[2], NULL, 0) : 42;

        return (evmon_target(s, n) + evmon_dup_caller(0) * 0) & 0xff;
}
static __attribute__((noinline, used)) int evmon_dup(int x) { return x - 1; }
