/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* subscribe's "stack_bytes" (issue 29): a uprobe on stack_leaf of
 * evmon-stack-child-nofp with "callchain": {"user": "dwarf"}, watched by
 * two clients at once. The one that asked gets each sample's user stack
 * as base64 that decodes to dyn_size bytes, and regs_user beside it; on
 * x86-64 the first 8 bytes (the stack at the probe, the function's
 * entry) are the return address that evmond's own unwinding put second
 * in the callchain (plus one: a caller's frame is its return address
 * less one). The other client gets the same samples without stack or
 * registers (DWARF unwinding keeps them off the line). Root and writable
 * uprobe_events, else 77. */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "itest.h"

#define RUNS 10
#define STACK_BYTES 8192

static struct itest_daemon daemon_ = { .pid = -1 };

struct tally {
        bool bytes;             /* the client asked for them */
        size_t n;               /* uprobe:leaf lines */
        size_t n_checked;       /* ... whose return address was checked */
};

static int b64_value(char ch) {
        static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        const char *p = ch ? strchr(alphabet, ch) : NULL;

        return p ? (int) (p - alphabet) : -1;
}

/* TEXT's bytes into OUT (room for MAX); their number, or -1 when TEXT is
 * no padded base64. */
static ssize_t b64_decode(const char *text, uint8_t *out, size_t max) {
        size_t len = strlen(text), n = 0;

        if (len % 4 != 0)
                return -1;
        for (size_t i = 0; i < len; i += 4) {
                int v[4];
                uint32_t w;

                for (int k = 0; k < 4; k++)
                        v[k] = text[i + k] == '=' && i + 4 == len && k >= 2 ? 0 : b64_value(text[i + k]);
                if (v[0] < 0 || v[1] < 0 || v[2] < 0 || v[3] < 0)
                        return -1;
                w = (uint32_t) v[0] << 18 | (uint32_t) v[1] << 12 | (uint32_t) v[2] << 6 | (uint32_t) v[3];
                for (int k = 0; k < 3; k++) {
                        if (k >= 1 && text[i + k + 1] == '=')
                                break;
                        if (n == max)
                                return -1;
                        out[n++] = (uint8_t) (w >> (16 - 8 * k));
                }
        }
        return (ssize_t) n;
}

/* The second address of the callchain's user segment, or 0. */
static uint64_t user_caller(json_object *sample) {
        json_object *chain;

        if (!json_object_object_get_ex(sample, "callchain", &chain))
                return 0;
        for (size_t i = 0; i < json_object_array_length(chain); i++) {
                json_object *part = json_object_array_get_idx(chain, i), *ips;
                const char *context = itest_str(part, "context");

                if (!context || strcmp(context, "user") != 0 || !json_object_object_get_ex(part, "ips", &ips) ||
                    json_object_array_length(ips) < 2)
                        continue;
                return strtoull(json_object_get_string(json_object_array_get_idx(ips, 1)), NULL, 16);
        }
        return 0;
}

static void check_line(json_object *o, void *userdata) {
        struct tally *t = userdata;
        json_object *sample, *su;
        static uint8_t buf[65536];
        const char *data;
        int64_t dyn_size;
        ssize_t n;

        if (!itest_str(o, "type") || strcmp(itest_str(o, "type"), "event") != 0 || !itest_str(o, "event") ||
            strcmp(itest_str(o, "event"), "uprobe:leaf") != 0)
                return;
        t->n++;
        assert_true(json_object_object_get_ex(o, "sample", &sample));
        if (!t->bytes) {
                if (json_object_object_get_ex(sample, "stack_user", &su) ||
                    json_object_object_get_ex(sample, "regs_user", &su))
                        fail_msg("stack or registers for a client that did not ask: %s",
                                 json_object_to_json_string(o));
                return;
        }
        if (!json_object_object_get_ex(sample, "stack_user", &su) || !json_object_object_get_ex(sample, "regs_user", NULL))
                fail_msg("no stack_user or regs_user for a client with \"stack_bytes\": %s",
                         json_object_to_json_string(o));
        assert_int_equal(itest_int(su, "size"), STACK_BYTES);
        dyn_size = itest_int(su, "dyn_size");
        assert_true(dyn_size > 0 && dyn_size <= STACK_BYTES);
        data = itest_str(su, "data");
        if (!data)
                fail_msg("stack_user without \"data\": %s", json_object_to_json_string(o));
        n = b64_decode(data, buf, sizeof(buf));
        if (n != dyn_size)
                fail_msg("\"data\" decodes to %zd bytes, dyn_size is %" PRId64, n, dyn_size);
#if defined(__x86_64__)
        {
                uint64_t ret, caller = user_caller(sample);

                if (caller != 0) {
                        memcpy(&ret, buf, sizeof(ret));
                        if (ret != caller + 1)
                                fail_msg("the stack's top is 0x%" PRIx64 ", the callchain's caller 0x%" PRIx64
                                         " (+1)", ret, caller);
                        t->n_checked++;
                }
        }
#endif
}

static void test_stack_bytes(void **state) {
        struct itest_client *asks = malloc(sizeof(*asks)), *plain = malloc(sizeof(*plain));
        char rel[PATH_MAX], nofp[PATH_MAX], config[PATH_MAX + 512], runs[16];
        struct tally t_asks = { .bytes = true }, t_plain = {};
        char *out = NULL, *text;
        json_object *o;
        size_t len;

        if (access("/sys/kernel/tracing/uprobe_events", W_OK) < 0 &&
            access("/sys/kernel/debug/tracing/uprobe_events", W_OK) < 0) {
                fprintf(stderr, "SKIP: uprobes are needed (root, a writable uprobe_events)\n");
                exit(77);
        }
        itest_build_path("tests/integration/evmon-stack-child-nofp", rel, sizeof(rel));
        assert_non_null(realpath(rel, nofp));
        snprintf(config, sizeof(config),
                 "{\"events\": [{\"uprobe\": \"%s:stack_leaf\", \"name\": \"leaf\",\n"
                 "  \"callchain\": {\"user\": \"dwarf\", \"stack_bytes\": %d}}]}",
                 nofp, STACK_BYTES);
        assert_int_equal(itest_daemon_start(&daemon_, config), 0);
        assert_non_null(asks);
        assert_non_null(plain);
        assert_int_equal(itest_client_connect(asks, daemon_.socket), 0);
        assert_int_equal(itest_client_connect(plain, daemon_.socket), 0);
        json_object_put(itest_client_expect(asks, "hello", 5000));
        json_object_put(itest_client_expect(plain, "hello", 5000));
        assert_int_equal(itest_client_send(asks, "{\"type\":\"subscribe\",\"stack_bytes\":true}\n"), 0);
        o = itest_client_expect(asks, "subscribed", 5000);
        assert_non_null(o);
        json_object_put(o);

        snprintf(runs, sizeof(runs), "%d", RUNS);
        assert_int_equal(itest_run((const char *const[]) { nofp, runs, NULL }, 30000, &out), 0);
        free(out);

        text = itest_client_slurp(asks, 1000, 15000, &len);
        itest_for_each_line(text, len, check_line, &t_asks);
        free(text);
        text = itest_client_slurp(plain, 1000, 15000, &len);
        itest_for_each_line(text, len, check_line, &t_plain);
        free(text);
        fprintf(stderr, "stack_bytes: %zu lines (%zu return addresses checked), plain: %zu lines\n", t_asks.n,
                t_asks.n_checked, t_plain.n);
        assert_int_equal(t_asks.n, RUNS);
        assert_int_equal(t_plain.n, RUNS);
#if defined(__x86_64__)
        assert_int_equal(t_asks.n_checked, RUNS);
#endif
        itest_client_close(asks);
        itest_client_close(plain);
        free(asks);
        free(plain);
        assert_int_equal(itest_daemon_stop(&daemon_), 0);
}

static int teardown(void **state) {
        itest_daemon_cleanup(&daemon_);
        return 0;
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_stack_bytes),
        };

        return cmocka_run_group_tests(tests, NULL, teardown);
}
