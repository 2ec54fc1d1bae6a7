/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ELF symbol lookup for uprobes (src/tracefs/elf.c): a symbol name up to
 * the first NUL, then the ELF file, resolved to a file offset. libelf
 * reads a file, so the input goes to one in /dev/shm. */

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "evmon/probe.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static char path[64];
        const uint8_t *nul = memchr(data, 0, size < 256 ? size : 256);
        char symbol[257], *real = NULL, *error = NULL;
        uint64_t offset;
        int fd;

        if (!nul)
                return 0;
        memcpy(symbol, data, (size_t) (nul - data) + 1);
        if (!path[0])
                snprintf(path, sizeof(path), "/dev/shm/evmon-fuzz-elf-%d", (int) getpid());
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0)
                abort();
        size -= (size_t) (nul - data) + 1;
        if (size > 0 && write(fd, nul + 1, size) != (ssize_t) size)
                abort();
        close(fd);
        (void) elf_resolve_symbol(path, symbol, &offset, &real, &error);
        free(real);
        free(error);
        unlink(path);
        return 0;
}
