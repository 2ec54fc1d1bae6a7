/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Runs LLVMFuzzerTestOneInput() once on each file named, and on each file
 * in each directory named, as libFuzzer does with -runs=0: the seed
 * corpora replay in every build, gcc's and the sanitizers' included. */

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path) {
        FILE *f = fopen(path, "re");
        uint8_t *data = NULL;
        size_t size = 0, cap = 0, n;

        if (!f) {
                fprintf(stderr, "%s: %s\n", path, strerror(errno));
                return -1;
        }
        do {
                if (cap - size < 65536) {
                        uint8_t *p = realloc(data, cap + 65536);
                        if (!p)
                                abort();
                        data = p;
                        cap += 65536;
                }
                n = fread(data + size, 1, cap - size, f);
                size += n;
        } while (n > 0);
        fclose(f);
        /* An exact-size copy, so ASan sees a read past the input. */
        uint8_t *exact = malloc(size ? size : 1);
        if (!exact)
                abort();
        memcpy(exact, data, size);
        free(data);
        LLVMFuzzerTestOneInput(exact, size);
        free(exact);
        return 0;
}

int main(int argc, char **argv) {
        unsigned n = 0;

        for (int i = 1; i < argc; i++) {
                struct stat st;
                DIR *d;

                if (stat(argv[i], &st) < 0) {
                        fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
                        return 1;
                }
                if (!S_ISDIR(st.st_mode)) {
                        if (run_file(argv[i]) < 0)
                                return 1;
                        n++;
                        continue;
                }
                d = opendir(argv[i]);
                if (!d)
                        return 1;
                for (struct dirent *e; (e = readdir(d));) {
                        char path[4096];

                        if (e->d_name[0] == '.')
                                continue;
                        snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
                        if (run_file(path) < 0)
                                return 1;
                        n++;
                }
                closedir(d);
        }
        printf("%u inputs ran\n", n);
        /* A corpus that is gone would pass silently otherwise. */
        return n > 0 ? 0 : 1;
}
