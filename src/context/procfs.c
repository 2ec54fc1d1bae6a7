/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* /proc text parsers: stat, status, cgroup, maps (proc(5)). They take
 * text, never a path, so the fuzz target and the tests feed them bytes. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "evmon/context.h"

/* Reads an unsigned decimal at *P (below END); advances past it. */
static bool get_u64(const char **p, const char *end, uint64_t *ret) {
        uint64_t v = 0;
        const char *s = *p;

        if (s >= end || *s < '0' || *s > '9')
                return false;
        for (; s < end && *s >= '0' && *s <= '9'; s++) {
                if (v > (UINT64_MAX - 9) / 10)
                        return false;
                v = v * 10 + (uint64_t) (*s - '0');
        }
        *p = s;
        *ret = v;
        return true;
}

static bool get_hex(const char **p, const char *end, uint64_t *ret) {
        uint64_t v = 0;
        const char *s = *p;
        size_t n = 0;

        for (; s < end; s++, n++) {
                int d = *s >= '0' && *s <= '9' ? *s - '0'
                      : *s >= 'a' && *s <= 'f' ? *s - 'a' + 10
                      : *s >= 'A' && *s <= 'F' ? *s - 'A' + 10
                                               : -1;
                if (d < 0)
                        break;
                if (n >= 16)
                        return false;
                v = v << 4 | (uint64_t) d;
        }
        if (n == 0)
                return false;
        *p = s;
        *ret = v;
        return true;
}

static void skip_spaces(const char **p, const char *end) {
        while (*p < end && **p == ' ')
                (*p)++;
}

int ctx_parse_stat(const char *text, size_t len, struct ctx_proc_stat *ret) {
        const char *end = text + len, *p = text, *open, *close = NULL;
        struct ctx_proc_stat st = {};
        uint64_t v;

        if (!get_u64(&p, end, &v) || v > INT32_MAX)
                return -EINVAL;
        st.pid = (pid_t) v;
        skip_spaces(&p, end);
        if (p >= end || *p != '(')
                return -EINVAL;
        open = p + 1;
        /* The comm is whatever the task set (prctl may put ')' in it): it
         * ends at the last ')' of the line. */
        for (const char *q = open; q < end && *q != '\n'; q++)
                if (*q == ')')
                        close = q;
        if (!close)
                return -EINVAL;
        {
                size_t n = (size_t) (close - open);

                if (n >= sizeof(st.comm))
                        n = sizeof(st.comm) - 1;
                memcpy(st.comm, open, n);
                st.comm[n] = 0;
        }
        p = close + 1;
        /* Fields 3 (state) .. 22 (starttime). */
        for (int field = 3; field <= 22; field++) {
                skip_spaces(&p, end);
                if (p >= end)
                        return -EINVAL;
                if (field == 3) {
                        while (p < end && *p != ' ')
                                p++;
                        continue;
                }
                if (*p == '-')  /* signed fields (priority, nice) */
                        p++;
                if (!get_u64(&p, end, &v))
                        return -EINVAL;
                if (field == 4) {
                        if (v > INT32_MAX)
                                return -EINVAL;
                        st.ppid = (pid_t) v;
                } else if (field == 22)
                        st.start_ticks = v;
        }
        *ret = st;
        return 0;
}

int ctx_parse_status(const char *text, size_t len, uid_t *ret_uid, gid_t *ret_gid) {
        const char *end = text + len, *p = text;
        bool have_uid = false, have_gid = false;
        uint64_t uid = 0, gid = 0;

        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p)), *q;
                const char *eol = nl ? nl : end;

                if (eol - p > 4 && (memcmp(p, "Uid:", 4) == 0 || memcmp(p, "Gid:", 4) == 0)) {
                        bool is_uid = p[0] == 'U';
                        uint64_t v;

                        q = p + 4;
                        while (q < eol && (*q == ' ' || *q == '\t'))
                                q++;
                        if (get_u64(&q, eol, &v) && v <= UINT32_MAX) {
                                if (is_uid) {
                                        uid = v;
                                        have_uid = true;
                                } else {
                                        gid = v;
                                        have_gid = true;
                                }
                        }
                }
                p = eol + 1;
        }
        if (!have_uid || !have_gid)
                return -ENOENT;
        *ret_uid = (uid_t) uid;
        *ret_gid = (gid_t) gid;
        return 0;
}

static int put_path(const char *s, size_t n, char *buf, size_t size) {
        if (n == 0 || s[0] != '/' || memchr(s, 0, n))
                return -EINVAL;
        if (n >= size)
                return -ENAMETOOLONG;
        memcpy(buf, s, n);
        buf[n] = 0;
        return 0;
}

int ctx_parse_cgroup(const char *text, size_t len, char *buf, size_t size) {
        const char *end = text + len, *p = text, *v1 = NULL;
        size_t v1_n = 0;

        /* "hierarchy-ID:controller-list:cgroup-path" per line; v2 is "0::". */
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                const char *eol = nl ? nl : end, *c1, *c2;

                c1 = memchr(p, ':', (size_t) (eol - p));
                c2 = c1 ? memchr(c1 + 1, ':', (size_t) (eol - c1 - 1)) : NULL;
                if (c2) {
                        if (c1 - p == 1 && p[0] == '0' && c2 == c1 + 1)
                                return put_path(c2 + 1, (size_t) (eol - c2 - 1), buf, size);
                        if (c2 - c1 - 1 == 12 && memcmp(c1 + 1, "name=systemd", 12) == 0) {
                                v1 = c2 + 1;
                                v1_n = (size_t) (eol - c2 - 1);
                        }
                }
                p = eol + 1;
        }
        if (v1)
                return put_path(v1, v1_n, buf, size);
        return -ENOENT;
}

int ctx_parse_maps(const char *text, size_t len, ctx_map_fn fn, void *userdata) {
        const char *end = text + len, *p = text;
        int n = 0;

        /* "start-end perms offset major:minor inode [path]" */
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                const char *eol = nl ? nl : end, *q = p;
                struct ctx_map m = {};
                uint64_t maj, min;

                if (!get_hex(&q, eol, &m.start) || q >= eol || *q++ != '-' || !get_hex(&q, eol, &m.end) ||
                    m.end < m.start)
                        goto next;
                skip_spaces(&q, eol);
                if (eol - q < 4)
                        goto next;
                m.exec = q[2] == 'x';
                q += 4;
                skip_spaces(&q, eol);
                if (!get_hex(&q, eol, &m.pgoff))
                        goto next;
                skip_spaces(&q, eol);
                if (!get_hex(&q, eol, &maj) || q >= eol || *q++ != ':' || !get_hex(&q, eol, &min) ||
                    maj > 0xfff || min > 0xfffff)
                        goto next;
                m.dev = makedev((unsigned) maj, (unsigned) min);
                skip_spaces(&q, eol);
                if (!get_u64(&q, eol, &m.ino))
                        goto next;
                skip_spaces(&q, eol);
                m.path = q;
                m.path_len = (size_t) (eol - q);
                if (fn) {
                        int r = fn(&m, userdata);
                        if (r < 0)
                                return r;
                }
                n++;
        next:
                p = eol + 1;
        }
        return n;
}
