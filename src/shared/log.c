/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evmon/log.h"

static const char *log_program = "evmon";
static int log_max_level = LOG_INFO;
static int log_prefix_priority = -1;  /* decided on first use */
/* Per thread: the gate judges the lines of the thread that set it (evmond's
 * loop, during a client's request), never another's (the async worker's
 * probe removal warnings), which would call it, and touch the server's
 * budget, from a second thread. */
static _Thread_local log_gate_t log_gate;
static _Thread_local void *log_gate_userdata;

void log_setup(const char *program) {
        const char *e;

        log_program = program;
        /* journald sets JOURNAL_STREAM for services whose stderr it reads;
         * then "<N>" prefixes carry our levels into the journal. */
        log_prefix_priority = !!getenv("JOURNAL_STREAM");
        e = getenv("EVMON_LOG_LEVEL");
        if (e && strcmp(e, "debug") == 0)
                log_max_level = LOG_DEBUG;
}

void log_set_max_level(int level) {
        log_max_level = level;
}

void log_set_gate(log_gate_t gate, void *userdata) {
        log_gate = gate;
        log_gate_userdata = userdata;
}

/* Writes SRC into DST (of SIZE ≥ 1 bytes) with every control character
 * (below 0x20, and DEL) and every backslash escaped C-style: "\n", "\t",
 * "\\", else "\xNN". A line carries names from outside (file names a
 * user placed, a client's strings); a raw newline in one would end our
 * line and start another that journald reads as a separate entry, "<0>"
 * prefix and all, and escapes would reach a terminal. Escaping here, after
 * formatting, means no caller can forget it. Well-formed UTF-8 passes
 * unchanged so names stay readable, but for the C1 controls (U+0080 to
 * U+009F: U+009B is CSI to a UTF-8 terminal); a byte of no well-formed
 * sequence is "\xNN" too (0x9b alone is CSI in an 8-bit locale).
 * Truncates at a whole escape. */
static size_t utf8_len(const unsigned char *s) {
        unsigned char c = s[0], lo = 0x80, hi = 0xbf;
        size_t n;

        if (c < 0xc2 || c > 0xf4)
                return 0;
        n = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
        /* No overlong forms, surrogates or code points past U+10FFFF. */
        if (c == 0xe0)
                lo = 0xa0;
        else if (c == 0xed)
                hi = 0x9f;
        else if (c == 0xf0)
                lo = 0x90;
        else if (c == 0xf4)
                hi = 0x8f;
        if (s[1] < lo || s[1] > hi)
                return 0;
        for (size_t i = 2; i < n; i++)
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
        return n;
}

static void log_escape(const char *src, char *dst, size_t size) {
        static const char hex[] = "0123456789abcdef";
        size_t k = 0;

        for (const unsigned char *p = (const unsigned char *) src; *p; p++) {
                char e[8];
                size_t n;

                if (*p >= 0x80) {
                        size_t l = utf8_len(p);

                        if (l == 0 || (l == 2 && p[0] == 0xc2 && p[1] <= 0x9f)) {
                                /* Escaped byte by byte: a C1 control is two. */
                                size_t m = l ? 2 : 1;

                                for (size_t i = 0; i < m; i++) {
                                        e[4 * i] = '\\';
                                        e[4 * i + 1] = 'x';
                                        e[4 * i + 2] = hex[p[i] >> 4];
                                        e[4 * i + 3] = hex[p[i] & 0xf];
                                }
                                n = 4 * m;
                        } else {
                                memcpy(e, p, l);
                                n = l;
                        }
                        if (k + n >= size)
                                break;
                        memcpy(dst + k, e, n);
                        k += n;
                        p += (l ? l : 1) - 1;
                        continue;
                }
                if (*p == '\\' || *p == '\n' || *p == '\t') {
                        e[0] = '\\';
                        e[1] = *p == '\n' ? 'n' : *p == '\t' ? 't' : '\\';
                        n = 2;
                } else if (*p < 0x20 || *p == 0x7f) {
                        e[0] = '\\';
                        e[1] = 'x';
                        e[2] = hex[*p >> 4];
                        e[3] = hex[*p & 0xf];
                        n = 4;
                } else {
                        e[0] = (char) *p;
                        n = 1;
                }
                if (k + n >= size)
                        break;
                memcpy(dst + k, e, n);
                k += n;
        }
        dst[k] = 0;
}

int log_internal(int level, int error, const char *fmt, ...) {
        char buf[2048], line[4 * sizeof(buf)];
        va_list ap;

        if (level > log_max_level)
                return error;
        if (log_gate && !log_gate(level, log_gate_userdata))
                return error;
        if (log_prefix_priority < 0)
                log_prefix_priority = !!getenv("JOURNAL_STREAM");

        /* %m in FMT means -error, not the current errno. */
        errno = error < 0 ? -error : error;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        log_escape(buf, line, sizeof(line));

        if (log_prefix_priority)
                fprintf(stderr, "<%d>%s\n", level, line);
        else
                fprintf(stderr, "%s: %s\n", log_program, line);
        return error;
}
