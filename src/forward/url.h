/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* --nats and --stream as evmon-forward takes them: NATS server URLs,
 * comma-separated, each nats://[CREDENTIALS@]HOST[:PORT] (tls:// alike),
 * and a JetStream stream name. Checked at start, so that one that can
 * never work is refused with the reason instead of being retried for good
 * as if its server were down. */

#include <stddef.h>

/* The URLs in LIST, split at ',' and whitespace, in *RET (a NULL-ended
 * array of copies; the caller frees each and the array) and their count
 * in *RET_N. 0; -EINVAL when one is not a NATS URL, or there is none:
 * *RET_REASON then says why and *RET_BAD (when not NULL) is where the bad
 * URL starts in LIST, and its length in *RET_BAD_LEN; -ENOMEM. */
int nats_urls_parse(const char *list, char ***ret, size_t *ret_n, const char **ret_reason, const char **ret_bad,
                    size_t *ret_bad_len);

/* Whether NAME is a name JetStream takes for a stream: 0, or -EINVAL with
 * *RET_REASON saying why not. */
int stream_name_check(const char *name, const char **ret_reason);
