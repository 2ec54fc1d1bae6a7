#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs inside the VM (tests/vm/vm-run --smp 1,maxcpus=4 --qmp --bin evmond
# --bin evmonctl): a CPU hot-added after evmond started, as a cloud VM
# gets a vCPU. The VM boots with one CPU of four possible; vm-run hot-adds
# one through QEMU's monitor (device_add of the CPU that
# query-hotpluggable-cpus names) when this script prints
# "EVMON-VM-QMP cpu-add". The kernel makes it present, not online.
#
#  1. evmond starts with cpu0 only: status and metrics list cpu 0, not
#     the three possible CPUs that are not present; its log says they are
#     not present.
#  2. A CPU is hot-added: evmond logs it, status lists it offline (it is
#     present, not online). It is brought online and a load pinned to it
#     (taskset) execs /bin/true: the watcher gets event lines with that
#     "cpu", without a restart of evmond, and one gap line for it whose
#     window covers the time it was online before evmond took it in.
#  3. One more CPU hot-added and brought online at once (within one
#     tick): the same, in one look.
#  4. That CPU hot-removed (device_del; the guest takes it offline and
#     away): evmond closes its events and logs both, status and metrics
#     list it no more, and the other CPUs' events go on.
#
# Prints PASS/FAIL lines and exits 1 when any check failed.

RUN=/run/evmon
SOCK=$RUN/evmond.sock
SYS=/sys/devices/system/cpu
W=/tmp/hotadd
failed=0

pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; failed=1; }
check() {       # check DESCRIPTION COMMAND...
        d=$1
        shift
        if "$@"; then pass "$d"; else fail "$d"; fi
}

echo "kernel $(uname -r), CPUs possible $(cat $SYS/possible), present $(cat $SYS/present), online $(cat $SYS/online)"
if [ "$(cat $SYS/present)" != 0 ] || [ "$(cat $SYS/possible)" = 0 ]; then
        echo "FAIL: expected one present CPU of several possible (vm-run --smp 1,maxcpus=N)"
        exit 1
fi

mkdir -p $RUN $W
cat > $W/evmond.json <<'EOF'
// tests/vm/hotadd.sh
{
  "socket": {"path": "/run/evmon/evmond.sock"},
  "metrics": {"path": "/tmp/hotadd/evmon.prom", "interval_ms": 1000},
  "events": [
    {"tracepoint": "sched:sched_process_exec"}
  ]
}
EOF

# CLOCK_MONOTONIC in ns, as the lines' "ts" (the VM never suspends, so
# /proc/uptime's boot time is the same clock, to 10 ms).
now_ns() {
        awk '{ printf "%.0f\n", $1 * 1000000000 }' /proc/uptime
}

# Lines of type $1 in file $2.
count_type() {
        grep -c "\"type\":\"$1\"" "$2"
}

# Event lines of cpu $1 with $2 < ts < $3 in file $4.
count_cpu_events() {
        awk -v cpu="$1" -v lo="$2" -v hi="$3" '
                /"type":"event"/ {
                        if (!match($0, /"ts":[0-9]+/)) next
                        ts = substr($0, RSTART + 5, RLENGTH - 5) + 0
                        if (!match($0, /"cpu":[0-9]+/)) next
                        c = substr($0, RSTART + 6, RLENGTH - 6) + 0
                        if (c == cpu && ts > lo && ts < hi) n++
                }
                END { print n + 0 }' "$4"
}

# Field $1 (a number) of the gap line for cpu $2 in file $3.
gap_field() {
        grep "\"type\":\"gap\",\"cpu\":$2," "$3" | head -n1 | sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"
}

# evmonctl status, flattened (no blanks, one line) into $W/status.$1.json;
# its "cpus" list on stdout.
status() {
        evmonctl status --json --socket $SOCK | tr -d ' \t\n' > $W/status.$1.json
        grep -o '"cpus":\[[^]]*\]' $W/status.$1.json
}

# The CPUs in status file $1, as "0 1".
status_cpus() {
        grep -o '"cpus":\[[^]]*\]' $W/status.$1.json | grep -o '"cpu":[0-9]*' | sed 's/"cpu"://' | tr '\n' ' ' |
                sed 's/ $//'
}

# Waits for the metrics file to be written again (its next tick).
metrics_fresh() {
        rm -f $W/evmon.prom
        i=0
        while [ ! -f $W/evmon.prom ] && [ $i -lt 50 ]; do
                sleep 0.1
                i=$((i + 1))
        done
}

# Hot-adds a CPU through vm-run (the line goes to vm-run on stderr, which
# is the script's output too: stdout is the caller's $(...)) and prints its
# number once the kernel has it present (its cpuN/online file), "" after
# 30 s without.
hot_add() {
        before=$(ls -d $SYS/cpu[0-9]* | sort)
        echo "EVMON-VM-QMP cpu-add" >&2
        i=0
        while [ $i -lt 300 ]; do
                new=$(ls -d $SYS/cpu[0-9]* | sort | grep -vxF "$before" | head -n1)
                if [ -n "$new" ] && [ -f "$new/online" ]; then
                        echo "${new##*/cpu}"
                        return 0
                fi
                sleep 0.1
                i=$((i + 1))
        done
        echo ""
}

evmond --config $W/evmond.json > $W/evmond.log 2>&1 &
daemon=$!
i=0
while [ ! -S $SOCK ] && [ $i -lt 600 ] && kill -0 $daemon 2>/dev/null; do
        sleep 0.1
        i=$((i + 1))
done
if [ ! -S $SOCK ]; then
        echo "FAIL: evmond did not come up"
        cat $W/evmond.log
        exit 1
fi
evmonctl watch --json --socket $SOCK > $W/watch.json 2> $W/watch.err &
watcher=$!
i=0
while ! grep -q '"type":"hello"' $W/watch.json 2>/dev/null && [ $i -lt 300 ]; do
        sleep 0.1
        i=$((i + 1))
done
loads=""
trap 'kill $loads 2>/dev/null' EXIT

# ---- 1. one CPU of four ----------------------------------------------------

echo "status at start: $(status start)"
check "status lists cpu 0 only, not the possible CPUs that are not present ($(status_cpus start))" \
        [ "$(status_cpus start)" = 0 ]
metrics_fresh
check "the metrics list cpu 0 only" \
        sh -c "grep -q 'evmon_cpu_offline{cpu=\"0\"} 0' $W/evmon.prom && ! grep -q 'cpu=\"[1-9]' $W/evmon.prom"
check "evmond logged the possible CPUs that are not present" \
        grep -q '3 possible CPUs are not present (1-3)' $W/evmond.log

# ---- 2. hot-added, then brought online ------------------------------------------

t_add=$(now_ns)
cpu=$(hot_add)
echo "hot-added: cpu${cpu:-?}; present $(cat $SYS/present), online $(cat $SYS/online)"
if [ -z "$cpu" ]; then
        fail "QEMU's device_add gave the guest a CPU (see vm-run's qmp lines)"
        kill $daemon
        exit 1
fi
pass "QEMU's device_add gave the guest cpu$cpu"
sleep 2.5
echo "status after the add: $(status added)"
check "status lists cpu $cpu, offline (present, not online)" \
        grep -q "{\"cpu\":$cpu,\"lost\":[0-9]*,\"malformed\":[0-9]*,\"offline\":true}" $W/status.added.json
check "evmond logged the hot-add" grep -q "CPU $cpu was hot-added" $W/evmond.log
metrics_fresh
check "the metrics say cpu $cpu is offline" grep -qx "evmon_cpu_offline{cpu=\"$cpu\"} 1" $W/evmon.prom

t_on=$(now_ns)
echo 1 > $SYS/cpu$cpu/online
check "cpu$cpu is online ($(cat $SYS/online))" [ "$(cat $SYS/cpu$cpu/online)" = 1 ]
taskset -c "$cpu" sh -c 'while :; do /bin/true; done' &
loads="$loads $!"
sleep 0.5
check "the load runs pinned to cpu$cpu ($(taskset -p $! 2>&1))" \
        sh -c "taskset -p $! | grep -q 'affinity mask: $(printf '%x' $((1 << cpu)))\$'"
sleep 4
t_end=$(now_ns)
echo "status after it came online: $(status online)"
check "status lists cpu $cpu online, with one gap" \
        grep -q "{\"cpu\":$cpu,\"lost\":[0-9]*,\"malformed\":[0-9]*,\"gaps\":1}" $W/status.online.json
check "status lists cpus 0 and $cpu only ($(status_cpus online))" [ "$(status_cpus online)" = "0 $cpu" ]
on1=$(count_cpu_events $cpu $t_on $t_end $W/watch.json)
check "events of the hot-added cpu $cpu reach the watcher without a restart ($on1)" [ "$on1" -gt 0 ]
check "evmond is the one that started before the add" kill -0 $daemon
since=$(gap_field since_ts $cpu $W/watch.json)
until=$(gap_field ts $cpu $W/watch.json)
echo "gap for cpu $cpu: since_ts $since, ts $until; add asked at $t_add, online at $t_on (ns)"
check "one gap line for cpu $cpu" [ "$(grep -c "\"type\":\"gap\",\"cpu\":$cpu," $W/watch.json)" = 1 ]
check "it covers the time the CPU was online before evmond took it in (since <= online, ts >= online)" \
        [ -n "$since" ] && [ "$since" -le $((t_on + 10000000)) ] && [ "$until" -ge $((t_on - 10000000)) ]
check "it begins no earlier than the tick before the add (since >= add - 3 s)" \
        [ -n "$since" ] && [ "$since" -ge $((t_add - 3000000000)) ]
check "evmond took cpu $cpu in within 3 s of it being online (ts - online $(( (${until:-0} - t_on) / 1000000 )) ms)" \
        [ -n "$until" ] && [ $((until - t_on)) -le 3000000000 ]
check "evmond logged it coming online" grep -q "CPU $cpu is online (hot-added): its events are open;" $W/evmond.log

# ---- 3. hot-added and online within one tick ------------------------------------

t_add=$(now_ns)
cpu2=$(hot_add)
if [ -z "$cpu2" ]; then
        fail "a second device_add gave the guest a CPU"
else
        echo 1 > $SYS/cpu$cpu2/online
        t_on=$(now_ns)
        echo "hot-added and online: cpu$cpu2 after $(( (t_on - t_add) / 1000000 )) ms; online $(cat $SYS/online)"
        taskset -c "$cpu2" sh -c 'while :; do /bin/true; done' &
        loads="$loads $!"
        sleep 4
        t_end=$(now_ns)
        on2=$(count_cpu_events $cpu2 $t_on $t_end $W/watch.json)
        since=$(gap_field since_ts $cpu2 $W/watch.json)
        until=$(gap_field ts $cpu2 $W/watch.json)
        echo "gap for cpu $cpu2: since_ts $since, ts $until; add asked at $t_add, online at $t_on (ns)"
        check "events of cpu $cpu2 reach the watcher ($on2)" [ "$on2" -gt 0 ]
        check "one gap line for cpu $cpu2, covering it" \
                sh -c "[ $(grep -c "\"type\":\"gap\",\"cpu\":$cpu2," $W/watch.json) = 1 ] && [ -n '$since' ] &&
                       [ '$since' -le $((t_on + 10000000)) ] && [ '$until' -ge $((t_on - 10000000)) ]"
        echo "status: $(status two)"
        check "status lists cpus 0, $cpu and $cpu2 ($(status_cpus two))" [ "$(status_cpus two)" = "0 $cpu $cpu2" ]
fi
# ---- 4. hot-removed --------------------------------------------------------------

if [ -n "$cpu2" ]; then
        # vm-run names the Nth CPU it adds evmon-cpuN; the guest's ACPI
        # eject takes the CPU offline, then away (its pinned load moves).
        echo 'EVMON-VM-QMP {"execute":"device_del","arguments":{"id":"evmon-cpu2"}}'
        i=0
        while [ -e $SYS/cpu$cpu2 ] && [ $i -lt 300 ]; do
                sleep 0.1
                i=$((i + 1))
        done
        t_del=$(now_ns)
        echo "after device_del: present $(cat $SYS/present), online $(cat $SYS/online)"
        check "QEMU's device_del took cpu$cpu2 away" [ ! -e $SYS/cpu$cpu2 ]
        sleep 3
        t_end=$(now_ns)
        echo "status: $(status removed)"
        check "status lists cpus 0 and $cpu only again ($(status_cpus removed))" [ "$(status_cpus removed)" = "0 $cpu" ]
        metrics_fresh
        check "the metrics no longer list cpu $cpu2" sh -c "! grep -q 'cpu=\"$cpu2\"' $W/evmon.prom"
        check "evmond logged cpu $cpu2 going offline and away" \
                sh -c "grep -q 'CPU $cpu2 went offline' $W/evmond.log && grep -q 'CPU $cpu2 was removed' $W/evmond.log"
        after1=$(count_cpu_events $cpu $t_del $t_end $W/watch.json)
        check "events of cpu $cpu keep coming after cpu $cpu2 went ($after1)" [ "$after1" -gt 0 ]
fi
echo "$(count_type event $W/watch.json) event lines, $(count_type gap $W/watch.json) gap lines, $(count_type lost $W/watch.json) lost lines"
grep '"type":"gap"' $W/watch.json | sed 's/^/  /'

kill $loads 2>/dev/null
loads=""
kill -TERM $daemon
wait $daemon
rc=$?
check "evmond exits 0 on SIGTERM (got $rc)" [ $rc = 0 ]
wait $watcher 2>/dev/null
echo "evmond's log:"
sed 's/^/  /' $W/evmond.log

exit $failed
