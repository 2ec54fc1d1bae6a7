/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "url.h"

#define SEPARATORS ", \t\n"

static bool host_char(char c) {
        return isalnum((unsigned char) c) || c == '.' || c == '-' || c == '_';
}

/* Whether URL (LEN bytes) is one libnats can connect to, read as its
 * natsUrl_Create() reads it: a scheme it knows (it takes any, and then no
 * server ever answers), credentials up to the last '@' (the server's
 * business), a host (none: localhost), then ":PORT" (none: 4222; else 1
 * to 65535: it takes 0 and 99999 alike) and after it a path it ignores,
 * or nothing (a '/' after a host without a port is part of its name). */
static int url_check(const char *url, size_t len, const char **ret_reason) {
        const char *p = url, *end = url + len, *at, *sep;
        unsigned long port = 0;

        sep = memmem(url, len, "://", 3);
        if (!sep) {
                *ret_reason = "not a URL";
                return -EINVAL;
        }
        if (!((sep - p == 4 && strncasecmp(p, "nats", 4) == 0) || (sep - p == 3 && strncasecmp(p, "tls", 3) == 0))) {
                *ret_reason = sep == p ? "no scheme" : "unknown scheme; NATS is nats:// (tls:// for TLS)";
                return -EINVAL;
        }
        p = sep + 3;
        for (at = end; at > p && at[-1] != '@'; at--)
                ;
        if (at > p)
                p = at;
        if (p < end && *p == '[') {
                const char *close = memchr(p, ']', (size_t) (end - p));

                if (!close || close == p + 1) {
                        *ret_reason = "an IPv6 address is written [ADDRESS]:PORT";
                        return -EINVAL;
                }
                for (const char *h = p + 1; h < close; h++)
                        if (!isxdigit((unsigned char) *h) && *h != ':' && *h != '.') {
                                *ret_reason = "not an IPv6 address between [ and ]";
                                return -EINVAL;
                        }
                p = close + 1;
        } else
                while (p < end && host_char(*p))
                        p++;
        if (p < end && *p == ':') {
                const char *d = ++p;

                while (p < end && isdigit((unsigned char) *p) && port <= 65535)
                        port = port * 10 + (unsigned long) (*p++ - '0');
                if ((p > d && (port == 0 || port > 65535)) || (p < end && *p != '/')) {
                        *ret_reason = "bad port: a number from 1 to 65535, 4222 unless the server says otherwise";
                        return -EINVAL;
                }
                return 0;
        }
        if (p != end) {
                *ret_reason = "not HOST[:PORT] after the scheme (and USER:PASSWORD@ or TOKEN@)";
                return -EINVAL;
        }
        return 0;
}

int nats_urls_parse(const char *list, char ***ret, size_t *ret_n, const char **ret_reason, const char **ret_bad,
                    size_t *ret_bad_len) {
        const char *dummy_bad;
        size_t n = 0, dummy_len;
        char **urls;
        int r;

        if (!ret_bad)
                ret_bad = &dummy_bad;
        if (!ret_bad_len)
                ret_bad_len = &dummy_len;
        *ret_bad = list;
        *ret_bad_len = 0;
        for (const char *p = list + strspn(list, SEPARATORS); *p; p += strspn(p, SEPARATORS)) {
                size_t len = strcspn(p, SEPARATORS);

                r = url_check(p, len, ret_reason);
                if (r < 0) {
                        *ret_bad = p;
                        *ret_bad_len = len;
                        return r;
                }
                n++;
                p += len;
        }
        if (n == 0) {
                *ret_reason = "no URL";
                return -EINVAL;
        }
        urls = calloc(n + 1, sizeof(char *));
        if (!urls)
                return -ENOMEM;
        n = 0;
        for (const char *p = list + strspn(list, SEPARATORS); *p; p += strspn(p, SEPARATORS)) {
                size_t len = strcspn(p, SEPARATORS);

                urls[n] = strndup(p, len);
                if (!urls[n]) {
                        for (size_t i = 0; i < n; i++)
                                free(urls[i]);
                        free(urls);
                        return -ENOMEM;
                }
                n++;
                p += len;
        }
        *ret = urls;
        *ret_n = n;
        return 0;
}

/* nats-server's rules (server/stream.go, JSMaxNameLen): a stream name is
 * also a subject token ($JS.API.STREAM.CREATE.NAME) and a directory of
 * the store. libnats refuses '.', '*' and '>' itself, the server the
 * path separators; whitespace breaks the API subject (the server drops
 * the connection). */
int stream_name_check(const char *name, const char **ret_reason) {
        size_t len = strlen(name);

        if (len == 0) {
                *ret_reason = "empty";
                return -EINVAL;
        }
        if (len > 255) {
                *ret_reason = "longer than 255 bytes";
                return -EINVAL;
        }
        for (const char *p = name; *p; p++)
                if (strchr(".*>/\\", *p) || isspace((unsigned char) *p) || iscntrl((unsigned char) *p)) {
                        *ret_reason = "it may not hold '.', '*', '>', '/', '\\', whitespace or control bytes";
                        return -EINVAL;
                }
        return 0;
}
