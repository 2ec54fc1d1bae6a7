/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* /proc/kallsyms lines: see evmon/kallsyms.h. */

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "evmon/cleanup.h"
#include "evmon/io.h"
#include "evmon/kallsyms.h"

#define KALLSYMS "/proc/kallsyms"

int kallsyms_line_next(const char **p, const char *end, struct kallsyms_line *ret) {
        const char *nl = memchr(*p, '\n', (size_t) (end - *p));
        const char *eol = nl ? nl : end, *q = *p, *name, *name_end;
        uint64_t addr = 0;
        size_t digits = 0;

        *p = eol + 1;
        /* Hand-parsed, not sscanf(): context reads every line of a
         * 10 MB file at start. */
        for (; q < eol && digits < 17; q++, digits++) {
                int d = *q >= '0' && *q <= '9' ? *q - '0' : *q >= 'a' && *q <= 'f' ? *q - 'a' + 10 : -1;
                if (d < 0)
                        break;
                addr = addr << 4 | (uint64_t) d;
        }
        if (digits == 0 || digits > 16 || q + 3 > eol || q[0] != ' ' || q[2] != ' ')
                return 0;
        *ret = (struct kallsyms_line) { .addr = addr, .type = q[1] };
        name = q + 3;
        name_end = name;
        while (name_end < eol && *name_end != ' ' && *name_end != '\t')
                name_end++;
        if (name_end == name || memchr(name, 0, (size_t) (name_end - name)))
                return 0;
        ret->name = name;
        ret->name_len = (size_t) (name_end - name);
        q = name_end;
        while (q < eol && (*q == ' ' || *q == '\t'))
                q++;
        if (q < eol && *q == '[') {
                const char *close = memchr(q, ']', (size_t) (eol - q));
                if (!close || close == q + 1)
                        return 0;
                ret->module = q + 1;
                ret->module_len = (size_t) (close - q - 1);
        }
        return 1;
}

int kallsyms_lookup(const char *kallsyms, const char *name, uint64_t *ret) {
        _cleanup_(freep) char *text = NULL;
        _cleanup_(closep) int fd = -1;
        bool all_zero = true, found = false;
        uint64_t addr = 0;
        const char *p, *end;
        size_t len, name_len;
        int r;

        if (!name || !ret)
                return -EINVAL;
        fd = open(kallsyms ?: KALLSYMS, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        /* procfs gives no size: read until the end. */
        r = read_full(fd, 0, &text, &len);
        if (r < 0)
                return r;

        name_len = strlen(name);
        for (p = text, end = text + len; p < end;) {
                struct kallsyms_line l;

                if (kallsyms_line_next(&p, end, &l) == 0)
                        continue;
                if (l.addr != 0)
                        all_zero = false;
                if (!found && l.name_len == name_len && memcmp(l.name, name, name_len) == 0) {
                        addr = l.addr;
                        found = true;
                }
                if (found && !all_zero)
                        break;
        }
        if (!found)
                return -ENOENT;
        if (addr == 0 && all_zero)
                return -EPERM;
        *ret = addr;
        return 0;
}
