#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs inside the VM (tests/vm/vm-run, the build's files under /b): the
# process table under fast pid reuse. pid_max is set to a few hundred, so
# each pid is taken again every few hundred processes, and test-context's
# churn runs thousands of short-lived processes, each renaming itself and
# making one event: every event must name its own process (zero mix-ups),
# and evmond's RSS must stay within the table's bound.
echo "kernel $(uname -r)"
echo 400 > /proc/sys/kernel/pid_max || exit 1
echo "pid_max $(cat /proc/sys/kernel/pid_max)"
export EVMON_BUILD_ROOT=/b
export EVMON_CHURN=${EVMON_CHURN:-3000}
exec /b/test-context churn
