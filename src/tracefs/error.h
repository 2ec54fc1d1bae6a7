/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* error_set() is shared (include/evmon/error.h); defined in tracefs.c. */
#include "evmon/error.h"
