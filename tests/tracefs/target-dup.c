/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Two static functions named evmon_dup at two addresses (target.c has the
 * other): the ELF resolver must call the name ambiguous. */

int evmon_dup_caller(int x);

static __attribute__((noinline, used)) int evmon_dup(int x) {
        return x + 1;
}

int evmon_dup_caller(int x) {
        return evmon_dup(x);
}
