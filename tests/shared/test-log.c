/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* log_set_gate(): evmond's server gates the lines a client's request
 * causes on the loop thread; a line of another thread (the async worker's
 * "Failed to remove probe ...") is no request's and must neither be
 * judged by that gate nor touch the server's budget from a second thread. */

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "evmon/log.h"

static unsigned gate_calls;

static bool gate_refuse(int level, void *userdata) {
        (void) level;
        (void) userdata;
        __atomic_add_fetch(&gate_calls, 1, __ATOMIC_SEQ_CST);
        return false;
}

static void *worker(void *arg) {
        (void) arg;
        log_warning("line of the worker thread");
        return NULL;
}

/* What log_internal() wrote to stderr while FN ran. */
static char *stderr_of(void (*fn)(void)) {
        FILE *tmp = tmpfile();
        int saved = dup(STDERR_FILENO);
        char *out = calloc(1, 4096);

        assert_non_null(tmp);
        assert_true(saved >= 0);
        assert_non_null(out);
        fflush(stderr);
        assert_true(dup2(fileno(tmp), STDERR_FILENO) >= 0);
        fn();
        fflush(stderr);
        assert_true(dup2(saved, STDERR_FILENO) >= 0);
        close(saved);
        rewind(tmp);
        (void) !fread(out, 1, 4095, tmp);
        fclose(tmp);
        return out;
}

static void run_gated(void) {
        pthread_t t;

        log_set_gate(gate_refuse, NULL);
        log_warning("line of the gated thread");
        assert_int_equal(pthread_create(&t, NULL, worker, NULL), 0);
        assert_int_equal(pthread_join(t, NULL), 0);
        log_set_gate(NULL, NULL);
        log_warning("line after the gate");
}

static void test_gate_own_thread(void **state) {
        char *out;

        (void) state;
        gate_calls = 0;
        out = stderr_of(run_gated);
        /* The gate refuses the line of the thread that set it ... */
        assert_null(strstr(out, "line of the gated thread"));
        /* ... and is never asked about another thread's. */
        assert_non_null(strstr(out, "line of the worker thread"));
        assert_int_equal(gate_calls, 1);
        assert_non_null(strstr(out, "line after the gate"));
        free(out);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_gate_own_thread),
        };

        log_setup("test-log");
        return cmocka_run_group_tests(tests, NULL, NULL);
}
