#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs inside the VM (tests/vm/vm-run --smp 2 --bin evmond --bin evmonctl):
# CPU hotplug under load, issue 17's fault. Debian's kernel takes every
# perf event off a CPU that goes offline, for good (they write nothing
# again once it is back), and refuses to open one there while it is
# offline (ENODEV); evmond notices on its 1 s tick and opens them again.
#
#  1. A load on both CPUs (fork + exec loops), evmond serving
#     sched:sched_process_exec and sched:sched_switch to a watcher.
#     cpu1 goes offline for 3 s under that load: events keep coming from
#     cpu0 all along, cpu1's come back without a restart, and the watcher
#     gets one "gap" line for cpu 1 whose window covers the time cpu1 was
#     offline; evmonctl status says "offline" while it is. A counting
#     event's value never goes back: what cpu1 counted before it went
#     stays in it (it fell by cpu1's count, its delta negative).
#  2. cpu1 offline and online again at once (within one tick, so
#     /sys/devices/system/cpu/online looks the same at every look): evmond
#     still sees its events went, opens them again, and says so.
#  3. evmond started while cpu1 is offline: it starts, says cpu1 is
#     offline in status, and takes cpu1 in when it comes online.
#
# Prints PASS/FAIL lines and exits 1 when any check failed.

RUN=/run/evmon
SOCK=$RUN/evmond.sock
CPU1=/sys/devices/system/cpu/cpu1/online
W=/tmp/hotplug
failed=0

pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; failed=1; }
check() {       # check DESCRIPTION COMMAND...
        d=$1
        shift
        if "$@"; then pass "$d"; else fail "$d"; fi
}

echo "kernel $(uname -r), CPUs online: $(cat /sys/devices/system/cpu/online)"
if [ ! -w $CPU1 ]; then
        echo "SKIP: no $CPU1 to write (a VM with one CPU, or a kernel without CPU hotplug)"
        exit 77
fi

mkdir -p $RUN $W
cat > $W/evmond.json <<'EOF'
// tests/vm/hotplug.sh
{
  "socket": {"path": "/run/evmon/evmond.sock"},
  "metrics": {"path": "/tmp/hotplug/evmon.prom", "interval_ms": 1000},
  "counters": {"interval_ms": 200},
  "events": [
    {"tracepoint": "sched:sched_process_exec"},
    {"tracepoint": "sched:sched_switch"},
    {"software": "context-switches", "count": true}
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

# Field $1 (a number) of the Nth ($2) gap line in file $3.
gap_field() {
        grep '"type":"gap"' "$3" | sed -n "$2p" | sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"
}

# The counter lines of event $1 in file $2: "ok N LAST" when each value
# goes on from the one before (never back) and each delta after the
# first is that step (the first's goes back to a line sent before the
# watcher came), else "bad" and the first line that is not.
counter_steps() {
        grep '"type":"counter"' "$2" | grep "\"event\":\"$1\"" | awk '
                {
                        match($0, /"value":-?[0-9]+/)
                        v = substr($0, RSTART + 8, RLENGTH - 8) + 0
                        match($0, /"delta":-?[0-9]+/)
                        d = substr($0, RSTART + 8, RLENGTH - 8) + 0
                        if (v < last || (n > 0 && d != v - last)) {
                                print "bad after " last ": " $0
                                bad = 1
                                exit
                        }
                        last = v
                        n++
                }
                END { if (!bad) print "ok " n " " last }'
}

start_daemon() {
        evmond --config $W/evmond.json > $W/evmond.$1.log 2>&1 &
        daemon=$!
        i=0
        while [ ! -S $SOCK ] && [ $i -lt 600 ] && kill -0 $daemon 2>/dev/null; do
                sleep 0.1
                i=$((i + 1))
        done
        if [ ! -S $SOCK ]; then
                echo "FAIL: evmond did not come up"
                cat $W/evmond.$1.log
                exit 1
        fi
        # --json and no line buffering wanted: the file is read at the end.
        evmonctl watch --json --socket $SOCK > $W/watch.$1.json 2> $W/watch.$1.err &
        watcher=$!
        i=0
        while ! grep -q '"type":"hello"' $W/watch.$1.json 2>/dev/null && [ $i -lt 300 ]; do
                sleep 0.1
                i=$((i + 1))
        done
}

# evmonctl status, flattened (no blanks, one line) into $W/status.$1.json.
status() {
        evmonctl status --json --socket $SOCK | tr -d ' \t\n' > $W/status.$1.json
}

stop_daemon() {
        kill -TERM $daemon
        wait $daemon
        rc=$?
        check "evmond exits 0 on SIGTERM (got $rc)" [ $rc = 0 ]
        wait $watcher 2>/dev/null
        echo "evmond's log:"
        sed 's/^/  /' $W/evmond.$1.log
}

# The load: one fork + exec loop per CPU, for the whole test.
loads=""
for n in 1 2; do
        sh -c 'while :; do /bin/true; done' &
        loads="$loads $!"
done
trap 'kill $loads 2>/dev/null; echo 1 > $CPU1 2>/dev/null' EXIT

# ---- 1. offline for 3 s under load ------------------------------------------

start_daemon 1
sleep 2
t_off=$(now_ns)
echo 0 > $CPU1
check "cpu1 went offline ($(cat /sys/devices/system/cpu/online) online)" [ "$(cat $CPU1)" = 0 ]
sleep 1.5
status offline
echo "status while cpu1 is offline: $(grep -o '"cpus":\[[^]]*\]' $W/status.offline.json)"
check "evmonctl status says cpu 1 is offline" \
        grep -q '{"cpu":1,"lost":[0-9]*,"malformed":[0-9]*,"offline":true}' $W/status.offline.json
check "the metrics say cpu 1 is offline" grep -qx 'evmon_cpu_offline{cpu="1"} 1' $W/evmon.prom
sleep 1.5
t_on=$(now_ns)
echo 1 > $CPU1
check "cpu1 is online again" [ "$(cat $CPU1)" = 1 ]
sleep 4
t_end=$(now_ns)
check "the metrics say cpu 1 is online again, after one gap" \
        sh -c "grep -qx 'evmon_cpu_offline{cpu=\"1\"} 0' $W/evmon.prom && grep -qx 'evmon_cpu_gaps_total{cpu=\"1\"} 1' $W/evmon.prom"
stop_daemon 1
f=$W/watch.1.json

echo "$(count_type event $f) event lines, $(count_type gap $f) gap lines, $(count_type lost $f) lost lines"
grep '"type":"gap"' $f | sed 's/^/  /'
before1=$(count_cpu_events 1 0 $t_off $f)
during0=$(count_cpu_events 0 $t_off $t_on $f)
during1=$(count_cpu_events 1 $((t_off + 1000000000)) $t_on $f)
after1=$(count_cpu_events 1 $t_on $t_end $f)
after0=$(count_cpu_events 0 $t_on $t_end $f)
echo "cpu1 events before offline: $before1; while offline: cpu0 $during0, cpu1 $during1; after online: cpu0 $after0, cpu1 $after1"
check "cpu1 had events before it went offline ($before1)" [ "$before1" -gt 0 ]
check "events kept coming from cpu0 while cpu1 was offline ($during0)" [ "$during0" -gt 0 ]
check "none came from cpu1 while it was offline ($during1)" [ "$during1" = 0 ]
check "cpu1's events came back after it was online, without a restart ($after1)" [ "$after1" -gt 0 ]
check "exactly one gap line" [ "$(count_type gap $f)" = 1 ]
check "the gap line names cpu 1 and why" grep -q '"type":"gap","cpu":1,"reason":"offline","since":"' $f
since=$(gap_field since_ts 1 $f)
until=$(gap_field ts 1 $f)
echo "gap: since_ts $since, ts $until; offline at $t_off, online at $t_on (ns, 10 ms resolution)"
check "the gap covers the time cpu1 was offline (since <= offline, ts >= online)" \
        [ -n "$since" ] && [ "$since" -le $((t_off + 10000000)) ] && [ "$until" -ge $((t_on - 10000000)) ]
check "the gap begins no more than 3 s (a tick, on a slow VM) before cpu1 went offline" \
        [ $((t_off - since)) -le 3000000000 ]
check "cpu1's events came back within 3 s (a tick, on a slow VM) of it being online (ts - online $(( (until - t_on) / 1000000 )) ms)" \
        [ $((until - t_on)) -le 3000000000 ]
check "evmond logged cpu1 going and coming back" \
        sh -c "grep -q 'CPU 1 went offline' $W/evmond.1.log && grep -q 'CPU 1 is online: its events are open again' $W/evmond.1.log"
steps=$(counter_steps software:context-switches $f)
echo "software:context-switches counter lines: $steps"
check "the counter's value never went back over cpu1's offline spell, each delta the step ($steps)" \
        sh -c 'echo "$1" | grep -q "^ok [1-9][0-9]* "' _ "$steps"

# ---- 2. offline and online within one tick ----------------------------------

start_daemon 2
sleep 2
t_off=$(now_ns)
echo 0 > $CPU1
echo 1 > $CPU1
t_on=$(now_ns)
echo "cpu1 was offline for $(( (t_on - t_off) / 1000000 )) ms"
sleep 4
t_end=$(now_ns)
stop_daemon 2
f=$W/watch.2.json
grep '"type":"gap"' $f | sed 's/^/  /'
after1=$(count_cpu_events 1 $t_on $t_end $f)
since=$(gap_field since_ts 1 $f)
until=$(gap_field ts 1 $f)
check "a CPU offline and back between two ticks is noticed: one gap line for cpu 1" \
        sh -c "[ $(count_type gap $f) = 1 ] && grep -q '\"type\":\"gap\",\"cpu\":1,' $f"
check "that gap covers the hotplug" [ -n "$since" ] && [ "$since" -le $((t_off + 10000000)) ] && [ "$until" -ge $((t_on - 10000000)) ]
check "cpu1's events came back ($after1 after it was online)" [ "$after1" -gt 0 ]
check "evmond logged that cpu1 went and came back since its last look" grep -q 'CPU 1 went offline and came back' $W/evmond.2.log

# ---- 3. evmond started while cpu1 is offline ----------------------------------

echo 0 > $CPU1
start_daemon 3
t_start=$(now_ns)
status start
check "evmond started with cpu1 offline, and status says so" \
        grep -q '{"cpu":1,"lost":[0-9]*,"malformed":[0-9]*,"offline":true}' $W/status.start.json
check "evmond logged that cpu1 is offline at start" grep -q 'CPU 1 is offline: its events are opened when it comes online' $W/evmond.3.log
sleep 2
t_on=$(now_ns)
echo 1 > $CPU1
sleep 4
t_end=$(now_ns)
status end
stop_daemon 3
f=$W/watch.3.json
grep '"type":"gap"' $f | sed 's/^/  /'
before0=$(count_cpu_events 0 $t_start $t_on $f)
after1=$(count_cpu_events 1 $t_on $t_end $f)
since=$(gap_field since_ts 1 $f)
check "cpu0's events flowed from the start ($before0)" [ "$before0" -gt 0 ]
check "cpu1's events came when it came online ($after1)" [ "$after1" -gt 0 ]
check "one gap line for cpu 1, from evmond's start" \
        sh -c "[ $(count_type gap $f) = 1 ] && [ -n '$since' ] && [ '$since' -le $t_start ]"
check "status has cpu 1 online again, with its gap counted" \
        grep -q '{"cpu":1,"lost":[0-9]*,"malformed":[0-9]*,"gaps":1}' $W/status.end.json

exit $failed
