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

int log_internal(int level, int error, const char *fmt, ...) {
        char buf[2048];
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

        if (log_prefix_priority)
                fprintf(stderr, "<%d>%s\n", level, buf);
        else
                fprintf(stderr, "%s: %s\n", log_program, buf);
        return error;
}
