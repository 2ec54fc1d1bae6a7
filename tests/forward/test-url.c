/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* --nats and --stream: the URLs and stream names evmon-forward takes,
 * and those it refuses at start (libnats takes the URLs and then retries
 * them for good, no server ever answering; JetStream refuses the names
 * for good, and they were tried again every second). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "url.h"

static void free_urls(char **urls) {
        for (char **u = urls; u && *u; u++)
                free(*u);
        free(urls);
}

static void good(const char *list, size_t n, const char *first, const char *last) {
        const char *reason = NULL;
        char **urls = NULL;
        size_t got = 0;

        if (nats_urls_parse(list, &urls, &got, &reason, NULL, NULL) != 0)
                fail_msg("\"%s\" refused: %s", list, reason);
        assert_int_equal(got, n);
        assert_string_equal(urls[0], first);
        assert_string_equal(urls[n - 1], last);
        assert_null(urls[n]);
        free_urls(urls);
}

/* LIST is refused for REASON (a part of it), naming BAD. */
static void bad(const char *list, const char *bad, const char *reason) {
        const char *why = NULL, *at = NULL;
        char **urls = NULL;
        size_t n = 0, len = 0;

        if (nats_urls_parse(list, &urls, &n, &why, &at, &len) != -EINVAL)
                fail_msg("\"%s\" taken", list);
        assert_null(urls);
        assert_non_null(why);
        if (!strstr(why, reason))
                fail_msg("\"%s\": \"%s\", not \"%s\"", list, why, reason);
        assert_int_equal(len, strlen(bad));
        assert_memory_equal(at, bad, len);
}

static void test_good(void **state) {
        good("nats://127.0.0.1:4222", 1, "nats://127.0.0.1:4222", "nats://127.0.0.1:4222");
        good("nats://nats1:4222,nats://nats2:4222, nats://nats3", 3, "nats://nats1:4222", "nats://nats3");
        good("tls://nats.example.com:4443/", 1, "tls://nats.example.com:4443/", "tls://nats.example.com:4443/");
        good("nats://fwd:s3cret@nats1:4222", 1, "nats://fwd:s3cret@nats1:4222", "nats://fwd:s3cret@nats1:4222");
        /* A password with '@' and ':' in it: the host is after the last '@'. */
        good("nats://u:p@a:ss@h:1", 1, "nats://u:p@a:ss@h:1", "nats://u:p@a:ss@h:1");
        good("nats://[::1]:4222,nats://[fe80::1]", 2, "nats://[::1]:4222", "nats://[fe80::1]");
        good("NATS://h_1.example-x:65535", 1, "NATS://h_1.example-x:65535", "NATS://h_1.example-x:65535");
        /* As libnats reads them: no host is localhost, no port 4222, a
         * path after the port is ignored. */
        good("nats://:4222,nats://,nats://h:,nats://u:p@", 4, "nats://:4222", "nats://u:p@");
        good("nats://h:4222/path", 1, "nats://h:4222/path", "nats://h:4222/path");
        /* More than 16: every one (it took the first 16). */
        good("nats://a:1,nats://a:2,nats://a:3,nats://a:4,nats://a:5,nats://a:6,nats://a:7,nats://a:8,nats://a:9,"
             "nats://a:10,nats://a:11,nats://a:12,nats://a:13,nats://a:14,nats://a:15,nats://a:16,nats://a:17", 17,
             "nats://a:1", "nats://a:17");
}

static void test_bad(void **state) {
        bad("foo://127.0.0.1:4222", "foo://127.0.0.1:4222", "unknown scheme");
        bad("http://nats1:4222", "http://nats1:4222", "unknown scheme");
        bad("nats://ok:1,ws://h:80", "ws://h:80", "unknown scheme");
        bad("://h:1", "://h:1", "no scheme");
        bad("nats1:4222", "nats1:4222", "not a URL");
        bad("not a url", "not", "not a URL");
        bad("nats://127.0.0.1:99999", "nats://127.0.0.1:99999", "bad port");
        bad("nats://127.0.0.1:65536", "nats://127.0.0.1:65536", "bad port");
        bad("nats://127.0.0.1:0", "nats://127.0.0.1:0", "bad port");
        bad("nats://h:abc", "nats://h:abc", "bad port");
        bad("nats://h:123456789012345678901234567890", "nats://h:123456789012345678901234567890", "bad port");
        bad("nats://h:4222:5", "nats://h:4222:5", "bad port");
        bad("nats://h:42x", "nats://h:42x", "bad port");
        /* libnats takes "h/" for the host's name. */
        bad("nats://h/", "nats://h/", "not HOST[:PORT]");
        bad("nats://h/x", "nats://h/x", "not HOST[:PORT]");
        bad("nats://h!x", "nats://h!x", "not HOST[:PORT]");
        bad("nats://[::1", "nats://[::1", "IPv6");
        bad("nats://[]:1", "nats://[]:1", "IPv6");
        bad("nats://[zz]:1", "nats://[zz]:1", "IPv6");
        bad("", "", "no URL");
        bad(" , ,", "", "no URL");
}

static void test_stream_names(void **state) {
        static const char *const good_names[] = { "EVMON", "evmon_1-x", "Ünïcode", NULL };
        static const char *const bad_names[] = { "", "a.b", "a*", "a>b", "a/b", "a\\b", "a b", "a\tb", "a\x01", NULL };
        char longest[257];
        const char *reason;

        for (const char *const *n = good_names; *n; n++)
                if (stream_name_check(*n, &reason) != 0)
                        fail_msg("\"%s\" refused: %s", *n, reason);
        for (const char *const *n = bad_names; *n; n++) {
                reason = NULL;
                if (stream_name_check(*n, &reason) != -EINVAL)
                        fail_msg("\"%s\" taken", *n);
                assert_non_null(reason);
        }
        memset(longest, 'a', 256);
        longest[256] = 0;
        assert_int_equal(stream_name_check(longest, &reason), -EINVAL);
        longest[255] = 0;
        assert_int_equal(stream_name_check(longest, &reason), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_good),
                cmocka_unit_test(test_bad),
                cmocka_unit_test(test_stream_names),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
