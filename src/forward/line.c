/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "line.h"

static const char *skip_ws(const char *p, const char *end) {
        while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
                p++;
        return p;
}

/* P at the opening quote; returns the byte after the closing quote, or
 * NULL when the string does not end before END. */
static const char *skip_string(const char *p, const char *end) {
        for (p++; p < end; p++) {
                if (*p == '\\')
                        p++;
                else if (*p == '"')
                        return p + 1;
        }
        return NULL;
}

/* Skips one value of any kind: strings, and objects and arrays by
 * counting brackets outside strings; scalars up to the next ',', '}' or
 * ']'. */
static const char *skip_value(const char *p, const char *end) {
        int depth = 0;

        while (p < end) {
                char c = *p;

                if (c == '"') {
                        p = skip_string(p, end);
                        if (!p)
                                return NULL;
                        if (depth == 0)
                                return p;
                        continue;
                }
                if (c == '{' || c == '[')
                        depth++;
                else if (c == '}' || c == ']') {
                        if (depth == 0)
                                return p;
                        if (--depth == 0)
                                return p + 1;
                } else if (c == ',' && depth == 0)
                        return p;
                p++;
        }
        return depth == 0 ? p : NULL;
}

int line_scan(const char *line, size_t len, struct line_info *ret) {
        const char *p = line, *end = line + len;

        *ret = (struct line_info) {};
        p = skip_ws(p, end);
        if (p >= end || *p != '{')
                return -EINVAL;
        p++;
        for (;;) {
                const char *key, *val, *vend;
                size_t key_len;

                p = skip_ws(p, end);
                if (p >= end || *p != '"')
                        break;
                key = p + 1;
                p = skip_string(p, end);
                if (!p)
                        return -EINVAL;
                key_len = (size_t) (p - 1 - key);
                p = skip_ws(p, end);
                if (p >= end || *p != ':')
                        return -EINVAL;
                val = skip_ws(p + 1, end);
                /* A line that ends after the colon has no value to look
                 * at (fuzz-forward-line read past it). */
                if (val >= end)
                        return -EINVAL;
                vend = skip_value(val, end);
                if (!vend)
                        return -EINVAL;
                if (*val == '"' && key_len == 4 && memcmp(key, "type", 4) == 0) {
                        ret->type = val + 1;
                        ret->type_len = (size_t) (vend - val - 2);
                } else if (*val == '"' && key_len == 5 && memcmp(key, "event", 5) == 0) {
                        ret->event = val + 1;
                        ret->event_len = (size_t) (vend - val - 2);
                }
                if (ret->type && ret->event)
                        break;
                p = skip_ws(vend, end);
                if (p >= end || *p != ',')
                        break;
                p++;
        }
        return ret->type ? 0 : -EINVAL;
}

int subject_part_append(char *buf, size_t size, size_t *pos, const char *part, size_t len) {
        size_t n = *pos;

        if (len == 0) {
                part = "_";
                len = 1;
        }
        if (n + len + 1 > size) {
                if (size > 0)
                        buf[n < size ? n : size - 1] = '\0';
                return -ENOBUFS;
        }
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char) part[i];
                buf[n++] = c == '.' || c == '*' || c == '>' || c <= 0x20 || c == 0x7f ? '_' : (char) c;
        }
        buf[n] = '\0';
        *pos = n;
        return 0;
}

static int hex4(const char *s, uint32_t *ret) {
        uint32_t v = 0;

        for (int i = 0; i < 4; i++) {
                char c = s[i];

                v <<= 4;
                if (c >= '0' && c <= '9')
                        v |= (uint32_t) (c - '0');
                else if (c >= 'a' && c <= 'f')
                        v |= (uint32_t) (c - 'a' + 10);
                else if (c >= 'A' && c <= 'F')
                        v |= (uint32_t) (c - 'A' + 10);
                else
                        return -EINVAL;
        }
        *ret = v;
        return 0;
}

static size_t utf8_put(char *out, uint32_t cp) {
        if (cp < 0x80) {
                out[0] = (char) cp;
                return 1;
        }
        if (cp < 0x800) {
                out[0] = (char) (0xc0 | cp >> 6);
                out[1] = (char) (0x80 | (cp & 0x3f));
                return 2;
        }
        if (cp < 0x10000) {
                out[0] = (char) (0xe0 | cp >> 12);
                out[1] = (char) (0x80 | (cp >> 6 & 0x3f));
                out[2] = (char) (0x80 | (cp & 0x3f));
                return 3;
        }
        out[0] = (char) (0xf0 | cp >> 18);
        out[1] = (char) (0x80 | (cp >> 12 & 0x3f));
        out[2] = (char) (0x80 | (cp >> 6 & 0x3f));
        out[3] = (char) (0x80 | (cp & 0x3f));
        return 4;
}

int line_unescape(const char *s, size_t len, char *buf, size_t size) {
        size_t n = 0;

        for (size_t i = 0; i < len; i++) {
                char tmp[4] = { s[i] };
                size_t k = 1;

                if (s[i] == '\\' && i + 1 < len) {
                        char e = s[++i];
                        uint32_t cp, lo;

                        switch (e) {
                        case 'b': tmp[0] = '\b'; break;
                        case 'f': tmp[0] = '\f'; break;
                        case 'n': tmp[0] = '\n'; break;
                        case 'r': tmp[0] = '\r'; break;
                        case 't': tmp[0] = '\t'; break;
                        case 'u':
                                if (i + 4 >= len || hex4(s + i + 1, &cp) < 0)
                                        return -EINVAL;
                                i += 4;
                                if (cp >= 0xd800 && cp < 0xdc00 && i + 6 < len && s[i + 1] == '\\' && s[i + 2] == 'u' &&
                                    hex4(s + i + 3, &lo) == 0 && lo >= 0xdc00 && lo < 0xe000) {
                                        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                                        i += 6;
                                } else if ((cp >= 0xd800 && cp < 0xe000) || cp == 0)
                                        cp = '_';       /* a lone surrogate; NUL */
                                k = utf8_put(tmp, cp);
                                break;
                        default:                        /* \" \\ \/ */
                                tmp[0] = e;
                        }
                }
                if (n + k > size)
                        return -ENOBUFS;
                memcpy(buf + n, tmp, k);
                n += k;
        }
        return (int) n;
}

static int append_raw(char *buf, size_t size, size_t *pos, const char *s) {
        size_t len = strlen(s);

        if (*pos + len + 1 > size)
                return -ENOBUFS;
        memcpy(buf + *pos, s, len + 1);
        *pos += len;
        return 0;
}

int line_subject(const char *host, const struct line_info *li, char *buf, size_t size) {
        size_t pos = 0;
        int r;

        r = append_raw(buf, size, &pos, "evmon.");
        if (r < 0)
                return r;
        r = subject_part_append(buf, size, &pos, host, strlen(host));
        if (r < 0)
                return r;
        r = append_raw(buf, size, &pos, ".");
        if (r < 0)
                return r;
        if (li->event && li->type_len == 5 && memcmp(li->type, "event", 5) == 0) {
                /* The name itself, not its JSON text ("a\\b" is a\b), so
                 * the reader finds it by the name it is given. */
                char name[512];
                const char *ev = name, *colon;
                int n = line_unescape(li->event, li->event_len, name, sizeof(name));
                size_t ev_len, sys_len;

                if (n == -ENOBUFS)
                        return n;
                if (n < 0) {
                        ev = li->event;         /* a broken escape: as it is */
                        ev_len = li->event_len;
                } else
                        ev_len = (size_t) n;
                colon = memchr(ev, ':', ev_len);
                sys_len = colon ? (size_t) (colon - ev) : ev_len;
                r = subject_part_append(buf, size, &pos, ev, colon ? sys_len : 0);
                if (r < 0)
                        return r;
                r = append_raw(buf, size, &pos, ".");
                if (r < 0)
                        return r;
                r = colon ? subject_part_append(buf, size, &pos, colon + 1, ev_len - sys_len - 1)
                          : subject_part_append(buf, size, &pos, ev, ev_len);
        } else {
                r = append_raw(buf, size, &pos, "_.");
                if (r < 0)
                        return r;
                r = subject_part_append(buf, size, &pos, li->type, li->type_len);
        }
        return r < 0 ? r : (int) pos;
}

int line_with_host(const char *line, size_t len, const char *host_json, char *buf, size_t size) {
        const char *p = line, *end = line + len;
        size_t hl = strlen(host_json), n;
        bool empty;

        while (end > p && (end[-1] == '\n' || end[-1] == '\r'))
                end--;
        p = skip_ws(p, end);
        if (p >= end || *p != '{')
                return -EINVAL;
        p++;
        empty = skip_ws(p, end) < end && *skip_ws(p, end) == '}';
        n = 1 + 7 + hl + (empty ? 0 : 1) + (size_t) (end - p);
        if (n + 1 > size)
                return -ENOBUFS;
        memcpy(buf, "{\"host\":", 8);
        memcpy(buf + 8, host_json, hl);
        n = 8 + hl;
        if (!empty)
                buf[n++] = ',';
        memcpy(buf + n, p, (size_t) (end - p));
        n += (size_t) (end - p);
        buf[n] = '\0';
        return (int) n;
}
