/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* evmon-stack-child [N]: calls stack_outer() → stack_middle() →
 * stack_leaf() N times (default 20), the leaf sleeping 10 ms each time,
 * so that a sched:sched_switch and a uprobe on stack_leaf have stacks of
 * known functions. Built with frame pointers (test-callchain-perf.c). */

#include <stdlib.h>
#include <time.h>

/* Global, so that the symbol table names them. */
void stack_leaf(void);
void stack_middle(void);
void stack_outer(void);

/* Not inlined, and not a tail call (the asm after each call keeps its
 * return address in the caller): each is a frame of its own. */
__attribute__((noinline)) void stack_leaf(void) {
        struct timespec ts = { 0, 10 * 1000 * 1000 };

        nanosleep(&ts, NULL);
        __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void stack_middle(void) {
        stack_leaf();
        __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void stack_outer(void) {
        stack_middle();
        __asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv) {
        int n = argc > 1 ? atoi(argv[1]) : 20;

        for (int i = 0; i < n; i++)
                stack_outer();
        return 0;
}
