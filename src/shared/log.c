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
 * formatting, means no caller can forget it. Bytes ≥ 0x80 pass unchanged
 * so UTF-8 names stay readable. Truncates at a whole escape. */
static void log_escape(const char *src, char *dst, size_t size) {
        static const char hex[] = "0123456789abcdef";
        size_t k = 0;

        for (const unsigned char *p = (const unsigned char *) src; *p; p++) {
                char e[4];
                size_t n;

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
