#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs inside the VM (tests/vm/vm-run --bin evmond --bin evmonctl): kprobes
# and kretprobes with fetch-args end to end through evmond on a kernel that
# has them, read back with `evmonctl watch --json`; clean removal of the
# tracefs probes on SIGTERM; a kprobe added and removed at run time with
# `evmonctl add/remove` (a missing symbol refused with the kernel's reason);
# `evmond --check-config` reporting the kernel's
# own reasons and leaving nothing behind.
#
# Prints PASS/FAIL lines and exits 1 when any check failed.

T=/sys/kernel/tracing
RUN=/run/evmon
SOCK=$RUN/evmond.sock
failed=0

pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; failed=1; }
check() {       # check DESCRIPTION COMMAND...
        d=$1
        shift
        if "$@"; then pass "$d"; else fail "$d"; fi
}

echo "kernel $(uname -r)"
if [ ! -w $T/kprobe_events ]; then
        echo "FAIL: no $T/kprobe_events in the VM kernel"
        exit 1
fi

# Probes of group $1 in kprobe_events ("p:GROUP/NAME ..." or "r:...").
count_group() {
        grep -c "^[pr][0-9]*:$1/" $T/kprobe_events
}

# ---- evmond with kprobes ------------------------------------------------

mkdir -p $RUN /tmp/evmon
cat > /tmp/evmon/evmond.json <<'EOF'
// tests/vm/daemon.sh
{
  "socket": {"path": "/run/evmon/evmond.sock"},
  "events": [
    {"kprobe": "do_sys_openat2", "name": "open", "fetch": ["path=+0(%si):ustring", "dfd=%di:s32"]},
    {"kretprobe": "do_sys_openat2", "name": "open_ret", "fetch": ["ret=$retval:s32"]},
    // No fetch-args: the kprobe PMU makes this one, not kprobe_events.
    {"kprobe": "do_sys_openat2", "name": "open_pmu"}
  ]
}
EOF

evmond --config /tmp/evmon/evmond.json > /tmp/evmon/evmond.log 2>&1 &
daemon=$!
i=0
while [ ! -S $SOCK ] && [ $i -lt 600 ] && kill -0 $daemon 2>/dev/null; do
        sleep 0.1
        i=$((i + 1))
done
if [ ! -S $SOCK ]; then
        echo "FAIL: evmond did not come up"
        cat /tmp/evmon/evmond.log
        exit 1
fi
pass "evmond serves on $SOCK"
echo "kprobe_events while it runs:"
sed 's/^/  /' $T/kprobe_events
n_open=$(grep -c '^p:evmon/open do_sys_openat2' $T/kprobe_events)
n_ret=$(grep -c '^r[0-9]*:evmon/open_ret do_sys_openat2' $T/kprobe_events)
check "kprobe_events has p:evmon/open and r:evmon/open_ret, the only ones of group evmon" \
        [ "$n_open $n_ret $(count_group evmon)" = "1 1 2" ]
check "the probe group is recorded in $RUN/probes" grep -qx evmon $RUN/probes

evmonctl watch --json --socket $SOCK > /tmp/evmon/watch.json 2> /tmp/evmon/watch.err &
watcher=$!
i=0
while ! grep -q '"type":"hello"' /tmp/evmon/watch.json 2>/dev/null && [ $i -lt 300 ]; do
        sleep 0.1
        i=$((i + 1))
done
check "the watcher got the hello line naming kprobe:open, kretprobe:open_ret, kprobe:open_pmu" \
        grep -q '"events":\["kprobe:open","kretprobe:open_ret","kprobe:open_pmu"\]' /tmp/evmon/watch.json

# Two opens by processes whose pids we know: a missing file (-ENOENT) and
# an existing one (a descriptor).
tag=$$-$(cut -c1-8 /proc/sys/kernel/random/uuid)
missing=/tmp/evmon-unique-missing-$tag
present=/tmp/evmon-unique-present-$tag
echo hello > $present
sh -c 'echo $$ > /tmp/evmon/pid.missing; exec cat "$1"' sh $missing 2>/dev/null
sh -c 'echo $$ > /tmp/evmon/pid.present; exec cat "$1"' sh $present > /dev/null
pid_missing=$(cat /tmp/evmon/pid.missing)
pid_present=$(cat /tmp/evmon/pid.present)
echo "cat $missing: pid $pid_missing; cat $present: pid $pid_present"

# Let the flush timer deliver, then stop.
sleep 2
kill -TERM $daemon
wait $daemon
rc=$?
check "evmond exits 0 on SIGTERM (got $rc)" [ $rc = 0 ]
i=0
while kill -0 $watcher 2>/dev/null && [ $i -lt 100 ]; do
        sleep 0.1
        i=$((i + 1))
done
check "the watcher ends when evmond goes" sh -c "! kill -0 $watcher 2>/dev/null"
wait $watcher 2>/dev/null

check "no probe of group evmon is left in kprobe_events" [ "$(count_group evmon)" = 0 ]
check "no events/evmon directory is left" [ ! -d $T/events/evmon ]
check "the probe record $RUN/probes is gone" [ ! -e $RUN/probes ]
check "the socket is gone" [ ! -e $SOCK ]

echo "evmond's log:"
sed 's/^/  /' /tmp/evmon/evmond.log
echo "$(grep -c '"type":"event"' /tmp/evmon/watch.json) event lines; the ones of our two pids:"
grep -e "\"pid\":$pid_missing," -e "\"pid\":$pid_present," /tmp/evmon/watch.json | sed 's/^/  /'

# Lines of pid $1 as "TS EVENT PATH DFD RET", in time order (the entry and
# the return may be on different CPUs' rings, so the stream need not be).
timeline() {
        grep "\"pid\":$1," /tmp/evmon/watch.json | awk '
                function num(key,   m) {
                        if (!match($0, "\"" key "\":-?[0-9]+"))
                                return "-"
                        m = substr($0, RSTART, RLENGTH)
                        sub(/^"[^"]*":/, "", m)
                        return m
                }
                function str(key,   m) {
                        if (!match($0, "\"" key "\":\"[^\"]*\""))
                                return "-"
                        m = substr($0, RSTART, RLENGTH)
                        sub(/^"[^"]*":"/, "", m)
                        sub(/"$/, "", m)
                        return m
                }
                /"type":"event"/ { print num("ts"), str("event"), str("path"), num("dfd"), num("ret") }' |
                sort -n
}

# check_open PID PATH: one kprobe:open of PATH with dfd -100 (AT_FDCWD), one
# kprobe:open_pmu, and the kretprobe:open_ret that follows it; prints the
# return value.
check_open() {
        timeline "$1" > /tmp/evmon/timeline.$1
        awk -v path="$2" '
                $2 == "kprobe:open" && $3 == path { n++; dfd = $4; pending = 1; next }
                $2 == "kretprobe:open_ret" && pending { ret = $5; nret++; pending = 0 }
                END {
                        if (n != 1 || nret != 1)
                                print "bad", n + 0, nret + 0
                        else
                                print "ok", dfd, ret
                }' /tmp/evmon/timeline.$1
}

set -- $(check_open $pid_missing $missing)
if [ "$1" = ok ]; then
        pass "kprobe:open of the missing file arrived once with its path, and its return after it"
        check "dfd of the missing file's open is -100 (got $2)" [ "$2" = -100 ]
        check "the return of the missing file's open is -2, -ENOENT (got $3)" [ "$3" = -2 ]
else
        fail "kprobe:open of $missing by pid $pid_missing: $2 entries with its path, $3 returns after them (want 1 and 1)"
fi
set -- $(check_open $pid_present $present)
if [ "$1" = ok ]; then
        pass "kprobe:open of the present file arrived once with its path, and its return after it"
        check "dfd of the present file's open is -100 (got $2)" [ "$2" = -100 ]
        check "the return of the present file's open is a descriptor (got $3)" [ "$3" -ge 0 ]
else
        fail "kprobe:open of $present by pid $pid_present: $2 entries with its path, $3 returns after them (want 1 and 1)"
fi
# The PMU probe fires on every entry of the function, like the tracefs one.
for p in $pid_missing $pid_present; do
        a=$(grep -c ' kprobe:open ' /tmp/evmon/timeline.$p)
        b=$(grep -c ' kprobe:open_pmu ' /tmp/evmon/timeline.$p)
        check "pid $p: as many kprobe:open_pmu as kprobe:open lines ($b, $a)" [ "$a" = "$b" -a "$a" -ge 1 ]
done
check "kprobe:open_pmu lines carry __probe_ip" \
        grep -q '"event":"kprobe:open_pmu".*"fields":{"__probe_ip":' /tmp/evmon/watch.json

# ---- runtime control: a kprobe added and removed while evmond runs ------

echo '{"socket": {"path": "/run/evmon/evmond.sock"}, "events": [{"tracepoint": "sched:sched_process_exit"}]}' \
        > /tmp/evmon/runtime.json
evmond --config /tmp/evmon/runtime.json > /tmp/evmon/runtime.log 2>&1 &
daemon=$!
i=0
while [ ! -S $SOCK ] && [ $i -lt 600 ] && kill -0 $daemon 2>/dev/null; do
        sleep 0.1
        i=$((i + 1))
done
evmonctl watch --json --socket $SOCK > /tmp/evmon/runtime-watch.json 2>&1 &
watcher=$!
sleep 1
evmonctl --socket $SOCK add \
        '{"kprobe": "do_sys_openat2", "name": "rt_open", "fetch": ["path=+0(%si):ustring"]}' > /tmp/evmon/add.out 2>&1
rc=$?
sed 's/^/  /' /tmp/evmon/add.out
check "evmonctl add of a kprobe while evmond runs: exit 0 (got $rc)" [ $rc = 0 ]
check "kprobe_events has evmond's p:.../rt_open" grep -q '^p:evmon[^/]*/rt_open do_sys_openat2' $T/kprobe_events
rt_file=/tmp/evmon-runtime-$$-$(cut -c1-8 /proc/sys/kernel/random/uuid)
cat $rt_file 2>/dev/null
sleep 2
check "the watcher got the kprobe:rt_open of $rt_file with its path" \
        grep -q "\"event\":\"kprobe:rt_open\".*\"path\":\"$rt_file\"" /tmp/evmon/runtime-watch.json
check "the watcher got a config line for the add" grep -q '"type":"config"' /tmp/evmon/runtime-watch.json
# The self-describing stream: the added kprobe's schema line (its fetch-arg
# among its fields) comes before its first event line.
check "the watcher's first kprobe:rt_open line is its schema line, with the path field" \
        sh -c "grep -m1 '\"event\":\"kprobe:rt_open\"' /tmp/evmon/runtime-watch.json |
               grep -q '^{\"type\":\"schema\".*{\"name\":\"path\",\"in\":\"fields\"'"
grep -m1 '"type":"schema","event":"kprobe:rt_open"' /tmp/evmon/runtime-watch.json | cut -c1-400
evmonctl --socket $SOCK add '{"kprobe": "evmon_no_such_function", "name": "rt_bad"}' > /tmp/evmon/addbad.out 2>&1
rc=$?
sed 's/^/  /' /tmp/evmon/addbad.out
check "evmonctl add of a missing kernel symbol fails (exit $rc)" [ $rc != 0 ]
# Without fetch-args the kprobe is opened through the kprobe PMU, whose
# only reason is perf_event_open's errno (ENOENT).
check "evmonctl add of a missing kernel symbol quotes the kernel's reason (ENOENT)" \
        grep -q "evmon_no_such_function.*No such file or directory" /tmp/evmon/addbad.out
check "nothing of rt_bad is in kprobe_events" sh -c "! grep -q rt_bad $T/kprobe_events"
# With fetch-args it is made through kprobe_events, whose error_log has the
# kernel's words.
evmonctl --socket $SOCK add '{"kprobe": "evmon_no_such_function", "name": "rt_bad2", "fetch": ["dfd=%di:s32"]}' \
        > /tmp/evmon/addbad2.out 2>&1
rc=$?
sed 's/^/  /' /tmp/evmon/addbad2.out
check "evmonctl add of a missing kernel symbol with fetch-args fails (exit $rc)" [ $rc != 0 ]
check "evmonctl add of a missing kernel symbol with fetch-args quotes the kernel's error_log" \
        grep -q "Invalid probed address or symbol" /tmp/evmon/addbad2.out
check "nothing of rt_bad2 is in kprobe_events" sh -c "! grep -q rt_bad2 $T/kprobe_events"
check "evmond still serves after the refused adds" sh -c "evmonctl --socket $SOCK status | grep -q 'kprobe:rt_open'"
evmonctl --socket $SOCK remove kprobe:rt_open > /tmp/evmon/remove.out 2>&1
rc=$?
sed 's/^/  /' /tmp/evmon/remove.out
check "evmonctl remove kprobe:rt_open: exit 0 (got $rc)" [ $rc = 0 ]
# evmond's worker removes it once the last perf fd closed, after the answer.
for i in $(seq 50); do grep -q rt_open $T/kprobe_events || break; sleep 0.1; done
check "rt_open is gone from kprobe_events" sh -c "! grep -q rt_open $T/kprobe_events"
kill -TERM $daemon
wait $daemon
rc=$?
check "evmond exits 0 after the runtime changes (got $rc)" [ $rc = 0 ]
wait $watcher 2>/dev/null
check "no probe of evmond's is left in kprobe_events" sh -c "! grep -q '^[pr][0-9]*:evmon' $T/kprobe_events"

# ---- --check-config -------------------------------------------------------

# check_config NAME EXPECTED_RC WHERE KERNEL_TEXT EVENTS_JSON: the message
# starts "FILE:WHERE" ("4: events[1].kprobe") and quotes the kernel's
# KERNEL_TEXT. The events start on the file's line 3, one a line.
check_config() {
        name=$1 want=$2 where=$3 text=$4
        printf '{"socket": {"path": "/run/evmon/check.sock"},\n "events": [\n%s\n]}\n' "$5" > /tmp/evmon/$name.json
        evmond --check-config --config /tmp/evmon/$name.json > /tmp/evmon/$name.out 2>&1
        rc=$?
        sed 's/^/  /' /tmp/evmon/$name.out
        check "--check-config $name: exit $want (got $rc)" [ $rc = "$want" ]
        if [ -n "$text" ]; then
                check "--check-config $name: the message has the kernel's \"$text\"" grep -qF "$text" /tmp/evmon/$name.out
                check "--check-config $name: the message names the file, line and key ($name.json:$where)" \
                        grep -qF "/tmp/evmon/$name.json:$where" /tmp/evmon/$name.out
        fi
        check "--check-config $name: nothing left in kprobe_events" [ "$(grep -c evmon $T/kprobe_events)" = 0 ]
        check "--check-config $name: no events/evmoncheck* directory left" sh -c "! ls -d $T/events/evmoncheck* 2>/dev/null"
}

check_config bad-symbol 2 "3: events[0].kprobe" "Invalid probed address or symbol" \
        '{"kprobe": "evmon_no_such_function", "name": "nosym", "fetch": ["dfd=%di:s32"]}'
# The first probe is fine and made before the second fails: it must go too.
check_config bad-fetch 2 "4: events[1].kprobe" "Invalid register name" \
        '{"kprobe": "do_sys_openat2", "name": "good", "fetch": ["dfd=%di:s32"]},
         {"kprobe": "do_sys_openat2", "name": "badarg", "fetch": ["dfd=%nosuchreg:s32"]}'
check_config good 0 "" "" \
        '{"kprobe": "do_sys_openat2", "name": "open", "fetch": ["path=+0(%si):ustring"]},
         {"kretprobe": "do_sys_openat2", "name": "open_ret", "fetch": ["ret=$retval:s32"]}'

if [ $failed != 0 ]; then
        echo "vm-daemon: FAILED"
        exit 1
fi
echo "vm-daemon: all checks passed"
