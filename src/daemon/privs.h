/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Drops every capability evmond does not need once it serves: it keeps
 * CAP_PERFMON (CAP_SYS_ADMIN on kernels without it) to open events on
 * reload, and CAP_DAC_READ_SEARCH to read the ELF files uprobes name.
 * The bounding set is cleared as well, so nothing can come back. Writes the
 * kept set, as text, to RET_KEPT (caller frees; may be NULL). */
int privs_drop(char **ret_kept);
