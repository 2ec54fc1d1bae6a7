#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Runs inside the Debian 12 VM of tests/vm/vm-systemd, as root, under
# systemd as PID 1, from the test disk (cwd): installs ./evmon_*.deb with
# apt-get (offline: its dependencies are in the image) and checks evmond
# the way an operator meets it. Every check prints "ok: ..." or
# "FAIL: ..."; the script goes on after a failure and exits 1 if any.

set -u
failures=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
step() { echo "== [${SECONDS}s] $*"; }
die() {
        echo "FAIL: $*"
        echo "== jobs"; systemctl list-jobs --no-pager
        echo "== systemctl status evmond"; systemctl status --no-pager evmond.service evmond.socket
        echo "== journal"; journalctl -b --no-pager | tail -n 60
        exit 1
}

# wait_for SECONDS COMMAND...: runs COMMAND every half second until it
# succeeds (0), for SECONDS of wall-clock time (TCG makes each run slow).
wait_for() {
        local end=$((SECONDS + $1))
        shift
        while ((SECONDS < end)); do
                "$@" >/dev/null 2>&1 && return 0
                sleep 0.5
        done
        "$@" >/dev/null 2>&1
}

tracefs=/sys/kernel/tracing
# Probes of evmond (group evmon, or evmoncheck* of --check-config) in
# tracefs: their kprobe_events/uprobe_events lines.
evmon_probes() {
        cat $tracefs/kprobe_events $tracefs/uprobe_events 2>/dev/null | grep -E '^[pr]:evmon' || true
}

main_pid() { systemctl show -p MainPID --value evmond.service; }

# evmonctl with a limit: an evmond that does not answer fails the
# caller's check (its `|| fail` counts it), and this says what evmond was
# doing (on stderr, not into the caller's pipe), rather than hang the test
# until vm-systemd's timeout.
ctl() {
        local rc=0 pid
        timeout -s KILL 60 evmonctl "$@" || rc=$?
        if [ $rc = 137 ]; then
                pid=$(main_pid)
                {
                        echo "evmonctl $* had no answer within 60 s (evmond pid $pid)"
                        echo "== evmond: state, each thread's wchan and kernel stack, fds"
                        grep -E '^(State|Threads)' /proc/$pid/status
                        for t in /proc/$pid/task/*; do
                                echo "task ${t##*/}: $(cat $t/comm) $(cat $t/wchan)"; cat $t/stack
                        done
                        echo "fds: $(ls /proc/$pid/fd | wc -l)"
                        echo "== sockets"; ss -xlp | grep -E 'evmon' || true
                        echo "== systemctl status"; systemctl status --no-pager evmond.service evmond.socket
                        echo "== journal"; journalctl -u evmond --no-pager | tail -n 40
                } >&2
        fi
        return $rc
}

# The watcher: `evmonctl watch` on a pseudo-terminal (script(1)), so that
# every line is flushed as it comes (on a pipe evmonctl buffers 64 KiB).
watch_pid=
start_watch() {
        : > /tmp/watch.out
        script -qfec "evmonctl watch $*" /dev/null > /tmp/watch.out 2>&1 &
        watch_pid=$!
}
stop_watch() {
        [ -n "$watch_pid" ] && kill "$watch_pid" 2>/dev/null
        wait "$watch_pid" 2>/dev/null
        watch_pid=
}
watch_has() { grep -q -- "$1" /tmp/watch.out; }
# Execs /bin/true until the watcher shows it.
exec_seen() { /bin/true; watch_has "sched:sched_process_exec.*filename=[^ ]*/true"; }

echo "VM: $(uname -r), systemd $(systemctl --version | head -n1 | cut -d' ' -f2), $(nproc) CPUs"
step "boot"
# The boot is done when no job but this test's own is left (the system
# stays "starting" while this oneshot service runs).
wait_for 120 sh -c '! systemctl list-jobs --no-legend | grep -v evmon-vm-test | grep -q .' ||
        fail "boot did not settle: $(systemctl list-jobs --no-legend | head -n 5)"

# Prometheus and its node exporter start again for the metrics checks;
# until then their CPU is the test's (TCG is slow enough).
systemctl stop prometheus.service prometheus-node-exporter.service

# ---- the package ------------------------------------------------------------

step "apt-get install ./evmon_*.deb"
deb=$(ls ./evmon_*.deb | head -n1)
mkdir -p /root/deb && cp "$deb" /root/deb/
# apt has no sources in the VM: what the package depends on is in the image.
if (cd /root/deb && DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y ./evmon_*.deb) > /tmp/apt.log 2>&1; then
        ok "apt-get install $(basename "$deb")"
else
        cat /tmp/apt.log
        die "apt-get install $(basename "$deb") failed"
fi
getent group evmon >/dev/null && ok "the evmon group exists (sysusers)" || fail "no evmon group after install"
dpkg-query -W -f='${Conffiles}\n' evmon | grep -q '/etc/evmon/evmond.json' &&
        ok "/etc/evmon/evmond.json is a conffile" || fail "/etc/evmon/evmond.json is not a conffile"
for u in evmond.socket evmond.service; do
        [ "$(systemctl is-enabled $u)" = enabled ] && ok "$u enabled by the package" || fail "$u not enabled"
done
wait_for 60 systemctl is-active evmond.service && ok "evmond.service started by the package" ||
        fail "evmond.service not active after install"
for p in evmond.8 evmonctl.1 evmond.json.5; do
        [ -f /usr/share/man/man${p##*.}/$p.gz ] && ok "man page $p installed" || fail "no man page $p"
done
[ -f /usr/share/bash-completion/completions/evmonctl ] && ok "bash completion installed" ||
        fail "no bash completion for evmonctl"

# The config the rest runs with: the package's default events plus a
# kprobe with a fetch-arg (made through tracefs, so there is a probe to
# clean up).
cp /etc/evmon/evmond.json /root/evmond.json.orig

# ---- socket activation --------------------------------------------------------

step "systemctl start evmond.socket; the first evmonctl watch starts evmond"
systemctl stop evmond.service evmond.socket
systemctl start evmond.socket
[ "$(systemctl is-active evmond.socket)" = active ] && ok "evmond.socket active" || fail "evmond.socket not active"
[ "$(systemctl is-active evmond.service)" != active ] && ok "evmond.service not running before a client" ||
        fail "evmond.service running before any client"
start_watch sched:sched_process_exec
if wait_for 120 exec_seen; then
        ok "evmonctl watch started evmond by socket activation and saw an exec: $(grep -m1 sched_process_exec /tmp/watch.out | tr -d '\r')"
else
        tail -n 5 /tmp/watch.out
        fail "no exec seen by the first evmonctl watch"
fi
[ "$(systemctl is-active evmond.service)" = active ] && ok "evmond.service active after the first client" ||
        fail "evmond.service not active after a client connected"

step "systemctl status evmond"
status=$(systemctl status evmond.service --no-pager 2>&1)
echo "$status" | head -n 6
echo "$status" | grep -q 'Active: active (running)' && ok "active (running)" || fail "systemctl status: not active (running)"
echo "$status" | grep -q 'Status: "Serving [0-9]* events to [0-9]* clients' && ok "shows evmond's STATUS= text" ||
        fail "systemctl status shows no STATUS= text of evmond"

# ---- reload -------------------------------------------------------------------

step "systemctl reload evmond with a changed config"
stop_watch
start_watch
wait_for 60 exec_seen || fail "the second watcher saw no exec"
cat > /etc/evmon/evmond.json <<'EOF'
// The VM test's config: the default events, sched_process_free and a
// kprobe with a fetch-arg (a tracefs probe in the group evmon).
{
  "events": [
    {"tracepoint": "sched:sched_process_exec"},
    {"tracepoint": "sched:sched_process_exit"},
    {"tracepoint": "sched:sched_process_fork"},
    {"tracepoint": "sched:sched_process_free"},
    {"kprobe": "do_sys_openat2", "name": "open", "fetch": ["dfd=%di:s32"]}
  ]
}
EOF
pid_before=$(main_pid)
systemctl reload evmond && ok "systemctl reload evmond exited 0" || fail "systemctl reload evmond failed"
if wait_for 60 watch_has '"type":"config".*kprobe:open'; then
        ok "a config line arrived: $(grep -m1 '"type":"config"' /tmp/watch.out | tr -d '\r' | cut -c1-160)"
else
        cat /tmp/watch.out | tail -n 5
        fail "no config line with kprobe:open after the reload"
fi
ctl status | grep -q 'kprobe:open' && ok "evmonctl status lists kprobe:open" || fail "kprobe:open not served after reload"
[ "$(main_pid)" = "$pid_before" ] && ok "same evmond (pid $pid_before) after the reload" || fail "evmond restarted on reload"
evmon_probes | grep -q . && ok "the probe is in tracefs: $(evmon_probes | head -n1)" || fail "no evmon probe in tracefs after the reload"

step "a broken config + reload keeps evmond running"
cp /etc/evmon/evmond.json /root/evmond.json.good
printf '{\n  "events": [\n    {"tracepoint": "nosuch:event"}\n  ]\n}\n' > /etc/evmon/evmond.json
systemctl reload evmond
wait_for 30 sh -c 'journalctl -u evmond --no-pager | grep -q "Reload failed"' &&
        ok "the journal says: $(journalctl -u evmond --no-pager -g 'Reload failed' | tail -n1 | cut -c1-200)" ||
        fail "no \"Reload failed\" in the journal"
sleep 1
[ "$(systemctl is-active evmond.service)" = active ] && [ "$(main_pid)" = "$pid_before" ] &&
        ok "evmond still active, same pid" || fail "evmond not running after a broken config"
ctl status | grep -q 'kprobe:open' && ok "the old config still serves" || fail "the old config does not serve"
cp /root/evmond.json.good /etc/evmon/evmond.json

step "journalctl -u evmond: messages at their priorities"
jl=$(journalctl -u evmond -o json --no-pager)
prio_of() { printf '%s\n' "$jl" | grep -- "$1" | head -n1 | grep -o '"PRIORITY":"[0-9]"' | cut -d'"' -f4; }
p=$(prio_of '"MESSAGE":"Serving'); [ "$p" = 6 ] && ok "\"Serving ...\" at priority 6 (info)" || fail "\"Serving\" at priority '$p', wanted 6"
p=$(prio_of '"MESSAGE":"Reload failed'); [ "$p" = 3 ] && ok "\"Reload failed ...\" at priority 3 (err)" || fail "\"Reload failed\" at priority '$p', wanted 3"
journalctl -u evmond -p err --no-pager | grep -q 'Reload failed' && ok "journalctl -p err shows it" || fail "journalctl -p err does not show the reload failure"

# ---- watchdog -----------------------------------------------------------------

step "WatchdogSec kills and restarts a SIGSTOPped evmond"
stop_watch
pid=$(main_pid)
restarts=$(systemctl show -p NRestarts --value evmond.service)
wdog=$(systemctl show -p WatchdogUSec --value evmond.service)
kill -STOP "$pid"
if wait_for 180 sh -c "p=\$(systemctl show -p MainPID --value evmond.service); [ \"\$p\" != 0 ] && [ \"\$p\" != $pid ] && systemctl is-active evmond.service"; then
        ok "evmond (pid $pid, WatchdogSec $wdog) restarted as pid $(main_pid), NRestarts $restarts -> $(systemctl show -p NRestarts --value evmond.service)"
else
        fail "evmond was not restarted within 180 s of SIGSTOP"
fi
journalctl -u evmond --no-pager | grep -qi 'watchdog timeout' && ok "the journal says: $(journalctl -u evmond --no-pager | grep -i -m1 'watchdog timeout' | cut -c1-160)" ||
        fail "no watchdog timeout in the journal"
ctl status | grep -q 'kprobe:open' && ok "the restarted evmond serves" || fail "the restarted evmond does not serve"

# ---- hardening and access -------------------------------------------------------

step "systemd-analyze security evmond.service"
level=$(systemd-analyze security evmond.service --no-pager 2>&1 | sed -n 's/.*Overall exposure level for evmond.service: \([0-9.]*\).*/\1/p')
if [ -n "$level" ] && awk -v l="$level" 'BEGIN { exit !(l <= 2.5) }'; then
        ok "exposure $level <= 2.5"
else
        systemd-analyze security evmond.service --no-pager 2>&1 | tail -n 5
        fail "exposure '$level', wanted <= 2.5"
fi

step "the socket: a member of evmon is served, someone else is refused"
useradd --system --no-create-home outsider
useradd --system --no-create-home --groups evmon member
if runuser -u outsider -- timeout 60 evmonctl status > /tmp/outsider.out 2>&1; then
        fail "outsider (not in evmon) was served"
else
        ok "outsider refused: $(head -n1 /tmp/outsider.out)"
fi
runuser -u member -- timeout 60 evmonctl status > /tmp/member.out 2>&1 && grep -q 'sched:sched_process_exec' /tmp/member.out &&
        ok "member of evmon served: $(grep -m1 sched_process_exec /tmp/member.out)" ||
        { cat /tmp/member.out; fail "member of evmon not served"; }

# ---- metrics ------------------------------------------------------------------------

step "metrics: evmond's file, node-exporter's textfile collector, Prometheus' HTTP API"
prom=/var/lib/prometheus/node-exporter/evmon.prom
exec_series='evmon_events_total{event="sched:sched_process_exec"}'
/bin/true
# evmond writes it every 5 s (the default metrics.interval_ms), into the
# directory its unit's ReadWritePaths= opens.
if wait_for 60 grep -q "^$exec_series [1-9]" $prom; then
        ok "evmond wrote $prom ($(grep -c '^evmon_' $prom) samples): $(grep "^$exec_series" $prom)"
else
        ls -la "$(dirname $prom)"; journalctl -u evmond --no-pager | grep -i metrics | tail -n 3
        fail "no $exec_series in $prom"
fi
[ "$(stat -c %a $prom)" = 644 ] && ok "$prom is 0644 (node-exporter reads it as its own user)" ||
        fail "$prom mode $(stat -c %a $prom), wanted 644"
systemctl start prometheus-node-exporter.service prometheus.service
scrape_node() { curl -sf http://localhost:9100/metrics > /tmp/node.out && grep -q "^$exec_series [1-9]" /tmp/node.out; }
if wait_for 120 scrape_node; then
        ok "node-exporter's textfile collector serves it: $(grep "^$exec_series" /tmp/node.out)"
        grep -q '^node_textfile_scrape_error 0' /tmp/node.out && ok "node_textfile_scrape_error 0" ||
                fail "node-exporter: $(grep '^node_textfile_scrape_error' /tmp/node.out)"
else
        tail -n 5 /tmp/node.out; journalctl -u prometheus-node-exporter --no-pager | tail -n 5
        fail "node-exporter on :9100 does not serve $exec_series"
fi
# Debian's /etc/prometheus/prometheus.yml scrapes the node exporter on
# localhost:9100 (job "node") every 15 s.
query_prom() {
        curl -sfG http://localhost:9090/api/v1/query --data-urlencode "query=$exec_series" > /tmp/prom.out &&
                grep -q '"status":"success"' /tmp/prom.out &&
                sed -n 's/.*"value":\[[0-9.]*,"\([0-9]*\)"\].*/\1/p' /tmp/prom.out | grep -q '^[1-9]'
}
if wait_for 300 query_prom; then
        ok "Prometheus answers $exec_series = $(sed -n 's/.*"value":\[[0-9.]*,"\([0-9]*\)"\].*/\1/p' /tmp/prom.out) (job node): $(cut -c1-200 /tmp/prom.out)"
else
        cat /tmp/prom.out; echo; curl -s http://localhost:9090/api/v1/targets | cut -c1-400; echo
        journalctl -u prometheus --no-pager | tail -n 5
        fail "Prometheus' HTTP API has no $exec_series"
fi
systemctl stop prometheus.service prometheus-node-exporter.service

# ---- stop ---------------------------------------------------------------------------

step "systemctl stop leaves no probe"
systemctl stop evmond.service evmond.socket
[ "$(systemctl is-active evmond.service)" != active ] && ok "evmond stopped" || fail "evmond still active"
[ ! -e $prom ] && ok "evmond removed $prom as it stopped" || fail "$prom left after evmond stopped"
[ -z "$(evmon_probes)" ] && ok "no evmon probe in tracefs" || fail "probes left after stop: $(evmon_probes)"
ls -d $tracefs/events/evmon* 2>/dev/null && fail "evmon event groups left in tracefs" || ok "no evmon group in tracefs/events"
systemctl start evmond.socket evmond.service
wait_for 60 systemctl is-active evmond.service || fail "evmond did not start again"
wait_for 60 sh -c 'timeout 10 evmonctl status | grep -q kprobe:open'

# ---- purge ---------------------------------------------------------------------------

step "apt-get purge evmon"
evmon_probes | grep -q . || fail "no probe before purge (nothing to prove)"
if DEBIAN_FRONTEND=noninteractive apt-get purge -y evmon > /tmp/purge.log 2>&1; then
        ok "apt-get purge evmon"
else
        cat /tmp/purge.log
        fail "apt-get purge evmon failed"
fi
pgrep -x evmond >/dev/null && fail "evmond still running after purge: $(pgrep -ax evmond)" || ok "no evmond running"
[ -z "$(evmon_probes)" ] && ok "no evmon probe in tracefs after purge" || fail "probes left after purge: $(evmon_probes)"
[ ! -e /etc/evmon/evmond.json ] && ok "/etc/evmon/evmond.json purged" || fail "/etc/evmon/evmond.json left after purge"
for u in evmond.socket evmond.service; do
        s=$(systemctl is-active $u)
        [ "$s" != active ] && ok "$u $s" || fail "$u still active after purge"
done
[ ! -e /run/evmon/evmond.sock ] && ok "no socket left" || fail "/run/evmon/evmond.sock left after purge"

echo "== $failures failed"
[ "$failures" = 0 ]
