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
        char *out = calloc(1, 16384);

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
        (void) !fread(out, 1, 16383, tmp);
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

/* A file name as an attacker places it behind a followed path: a newline
 * then an sd-daemon priority prefix and a forged line. */
static const char forged_name[] = "x\n<0>evmond: Client 7 connected: pid 1, uid 0 (FORGED)\r\x1b]0;t\x07\\x0a";

static void log_forged(void) {
        log_warning("Followed path now %s", forged_name);
}

static void test_escape_controls(void **state) {
        char *out;

        (void) state;
        out = stderr_of(log_forged);
        /* One line, the name's newline and escapes spelled out; the
         * backslash escaped too, so a name holding "\x0a" reads apart
         * from one holding a newline. */
        assert_string_equal(out, "test-log: Followed path now x\\n<0>evmond: Client 7 connected: "
                                 "pid 1, uid 0 (FORGED)\\x0d\\x1b]0;t\\x07\\\\x0a\n");
        free(out);
}

static void log_utf8_tab(void) {
        log_info("caf\xc3\xa9\tok\x7f");
}

static void test_escape_keeps_utf8(void **state) {
        char *out;

        (void) state;
        out = stderr_of(log_utf8_tab);
        assert_string_equal(out, "test-log: caf\xc3\xa9\\tok\\x7f\n");
        free(out);
}

/* C1 controls: U+009B (CSI) as UTF-8, and the bare byte 0x9b, which is
 * CSI to a terminal in an 8-bit locale (a file name or a NATS subject is
 * anyone's bytes: evmon-forward --read logs the subject of a payload it
 * cannot print). Valid UTF-8 around them stays. */
static void log_c1(void) {
        log_info("subject evmon.\xc2\x9b" "2J.\x9b" "0m.\xc3\xa9.\xe2\x82\xac.\xc3");
}

static void test_escape_c1(void **state) {
        char *out;

        (void) state;
        out = stderr_of(log_c1);
        assert_string_equal(out, "test-log: subject evmon.\\xc2\\x9b2J.\\x9b0m.\xc3\xa9.\xe2\x82\xac.\\xc3\n");
        free(out);
}

static void log_long(void) {
        char big[2100];

        memset(big, '\n', sizeof(big) - 1);
        big[sizeof(big) - 1] = 0;
        log_info("%s", big);
}

static void test_escape_long(void **state) {
        char *out;

        (void) state;
        out = stderr_of(log_long);
        /* Truncated by the 2,048-byte format buffer, each newline spelled
         * out whole, and only the line's own newline at the end. */
        assert_int_equal(strlen(out), 2 * 2047 + strlen("test-log: ") + 1);
        assert_ptr_equal(strchr(out, '\n'), out + strlen(out) - 1);
        free(out);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_gate_own_thread),
                cmocka_unit_test(test_escape_controls),
                cmocka_unit_test(test_escape_keeps_utf8),
                cmocka_unit_test(test_escape_c1),
                cmocka_unit_test(test_escape_long),
        };

        log_setup("test-log");
        return cmocka_run_group_tests(tests, NULL, NULL);
}
