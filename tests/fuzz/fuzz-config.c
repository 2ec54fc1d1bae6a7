/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The config file: json-c, then the line scanner and every key's checks
 * (src/daemon/config.c). */

#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct config *c = NULL;
        char *text, *error = NULL;

        text = malloc(size + 1);
        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = 0;
        if (config_parse(text, "fuzz.json", &c, &error) < 0 && c)
                abort();        /* a failure returns no config */
        config_free(c);
        free(error);
        free(text);
        return 0;
}
