/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* One parser per target. Built with libFuzzer (meson -Dfuzz=true, clang:
 * scripts/fuzz), or with driver.c, which replays the seed corpus in the
 * plain and sanitizer test runs. */

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
