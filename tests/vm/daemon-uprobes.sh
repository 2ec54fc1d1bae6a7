#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs inside the VM (tests/vm/vm-run, the build's files under /b): the
# host's uprobe integration test (tests/integration/test-probes.c) on
# Debian's kernel, so it runs on a second kernel, and also when the host's
# own tracing cannot be used.
echo "kernel $(uname -r)"
export EVMON_BUILD_ROOT=/b
exec /b/test-probes
