#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs inside the VM (tests/vm/vm-run, see vm-host-suite in meson.build):
# the tests that trace on the host kernel, run here on Debian's kernel, so
# they assert real behaviour on a real kernel even when the host's tracing
# is unusable (tests/host-tracing.h skips them there).
#
#   host-suite.sh NAME:SECONDS:PATH[:ARG]...
#
# PATH is relative to $EVMON_BUILD_ROOT, which vm-run laid out like the
# build tree ($EVMON_SOURCE_ROOT holds the source files the tests read).
# Each test runs in a session of its own under a watchdog of SECONDS, and
# whatever it left running is killed afterwards. Prints one line per test,
#   TEST NAME: PASS|SKIP (reason)|FAIL (reason)
# with the cmocka cases it skipped, and the tail of its output when it
# failed. Exits 1 when any failed, 77 when none could run, 0 otherwise.

: "${EVMON_BUILD_ROOT:?}" "${EVMON_SOURCE_ROOT:?}"
export EVMON_BUILD_ROOT EVMON_SOURCE_ROOT

logs=/tmp/host-suite
mkdir -p $logs
n_pass=0
n_fail=0
n_skip=0
failed=""

# Until something writes the root's cgroup.subtree_control, the cgroups
# made under it get no css of the implicit controllers, perf_event among
# them (seen on 6.1): perf_event_open on such a cgroup fails with ENOENT,
# and samples of its tasks carry the root's id (PERF_SAMPLE_CGROUP).
# systemd enables controllers at boot, so a real host has done it.
echo +pids > /sys/fs/cgroup/cgroup.subtree_control ||
        echo "warning: cannot enable the pids controller: cgroup tests will fail"

echo "kernel $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ { print int($2 / 1024) }' /proc/meminfo) MB;" \
     "perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid)"

# Seconds since boot, with tenths.
now() {
        awk '{ print $1 }' /proc/uptime
}

# The first line of LOG that says why the test skipped.
skip_reason() {
        grep -m1 -i 'SKIP' "$1" | sed 's/^[^A-Za-z]*//; s/^SKIP: *//' | cut -c1-300
}

run_one() {
        name=$1 secs=$2 rel=$3 arg=$4
        exe=$EVMON_BUILD_ROOT/$rel
        log=$logs/$name.log

        if [ ! -x "$exe" ]; then
                echo "TEST $name: FAIL ($exe is not in the VM)"
                n_fail=$((n_fail + 1))
                failed="$failed $name"
                return
        fi
        t0=$(now)
        # setsid without a fork: the test leads a session and process
        # group of its own, so the watchdog and the clean-up reach the
        # daemons and workloads it started as well.
        if [ -n "$arg" ]; then
                setsid "$exe" "$arg" > "$log" 2>&1 < /dev/null &
        else
                setsid "$exe" > "$log" 2>&1 < /dev/null &
        fi
        pid=$!
        # The mark first: wait returns as soon as the kill lands.
        setsid sh -c 'sleep "$1" && echo timeout > "$3.timeout" && kill -KILL -- "-$2"' \
                watchdog "$secs" "$pid" "$log" > /dev/null 2>&1 &
        dog=$!
        wait $pid
        rc=$?
        kill -KILL -- "-$dog" 2>/dev/null
        wait $dog 2>/dev/null
        kill -KILL -- "-$pid" 2>/dev/null
        t=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')

        # cmocka cases that skipped inside a run that passed.
        skipped=$(sed -n 's/^\[  SKIPPED \] \(.*\)$/\1/p' "$log" | sort -u | paste -sd, -)

        if [ -f "$log.timeout" ]; then
                echo "TEST $name: FAIL (no exit within ${secs}s; killed) [${t}s]"
                rc=fail
        elif [ $rc = 0 ]; then
                if [ -n "$skipped" ]; then
                        echo "TEST $name: PASS, but cmocka skipped: $skipped [${t}s]"
                        grep -i -B2 'skip' "$log" | grep -v '^\[' | sed 's/^/    /' | head -n 10
                else
                        echo "TEST $name: PASS [${t}s]"
                fi
                n_pass=$((n_pass + 1))
                return
        elif [ $rc = 77 ]; then
                echo "TEST $name: SKIP ($(skip_reason "$log")) [${t}s]"
                n_skip=$((n_skip + 1))
                return
        else
                echo "TEST $name: FAIL (exit $rc) [${t}s]"
        fi
        n_fail=$((n_fail + 1))
        failed="$failed $name"
        echo "---- $name: last lines of its output ----"
        tail -n 60 "$log"
        echo "---- end of $name ----"
}

t_all=$(now)
for spec in "$@"; do
        IFS=: read -r name secs rel arg <<EOF
$spec
EOF
        run_one "$name" "$secs" "$rel" "$arg"
done

echo "vm host suite: passed $n_pass, failed $n_fail, skipped $n_skip in" \
     "$(awk -v a="$t_all" -v b="$(now)" 'BEGIN { printf "%.0f", b - a }')s${failed:+ (failed:$failed)}"
if [ $n_fail -gt 0 ]; then
        exit 1
fi
if [ $n_pass = 0 ]; then
        exit 77
fi
exit 0
