#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Runs inside the Debian 12 VM of tests/vm/vm-systemd, as root, under
# systemd as PID 1, from the test disk (cwd): installs ./evmon_*.deb with
# apt-get (offline: its dependencies are in the image) and checks evmond
# the way an operator meets it; then ./evmon-forward_*.deb, an upgrade to
# the same packages one version up (./up/*.deb), remove and install again,
# and purge. Every check prints "ok: ..." or "FAIL: ..."; the script goes
# on after a failure and exits 1 if any.

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

step "apt-get install ./evmon_*.deb (the evmon group made beforehand, as a site may)"
deb=$(ls ./evmon_*.deb | head -n1)
mkdir -p /root/deb && cp "$deb" /root/deb/
# A group the admin (or LDAP, or an image) made before the package: sysusers
# keeps it, gid and all, and the socket must be that group's.
groupadd --gid 1500 evmon
# apt has no sources in the VM: what the package depends on is in the image.
if (cd /root/deb && DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y ./evmon_*.deb) > /tmp/apt.log 2>&1; then
        ok "apt-get install $(basename "$deb")"
else
        cat /tmp/apt.log
        die "apt-get install $(basename "$deb") failed"
fi
[ "$(getent group evmon | cut -d: -f3)" = 1500 ] && ok "the evmon group made before install kept (gid 1500)" ||
        fail "evmon group after install: '$(getent group evmon)', wanted the one with gid 1500"
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

# Documentation= of the units: each named page is there to read.
doc_ok() {
        local u=$1 d f bad=0
        for d in $(systemctl show -p Documentation --value "$u"); do
                case $d in
                file://*) f=${d#file://} ;;
                man:*) f=${d#man:}; sec=${f##*(}; sec=${sec%)}
                       f=/usr/share/man/man${sec:0:1}/${f%%(*}.$sec.gz ;;
                *) continue ;;
                esac
                if [ -n "$f" ] && [ -e "$f" ]; then echo "  $u: $d -> $f"; else echo "  $u: $d: no such file"; bad=1; fi
        done
        return $bad
}
doc_ok evmond.service && ok "evmond.service's Documentation= pages exist" || fail "evmond.service names documentation that is not installed"

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
[ "$(stat -c '%a %U %g' /run/evmon/evmond.sock)" = "660 root 1500" ] && ok "the socket is 0660 root:evmon (gid 1500)" ||
        fail "the socket is $(stat -c '%a %U %g' /run/evmon/evmond.sock), wanted 660 root 1500"

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
if [ "$(main_pid)" = "$pid_before" ]; then
        ok "same evmond (pid $pid_before) after the reload"
else
        fail "evmond restarted on reload (pid $pid_before, now $(main_pid))"
        echo "== journal"; journalctl -u evmond --no-pager | tail -n 30
fi
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

step "a uprobe with a fetch-arg under the unit's hardening (evmonctl add)"
# ELF read with CAP_DAC_READ_SEARCH, tracefs written, perf_event_open on
# it, in the unit's read-only mount namespace with its capabilities dropped.
libc=$(readlink -f /lib/x86_64-linux-gnu/libc.so.6)
if ctl add "{\"uprobe\": \"$libc:getpid\", \"name\": \"vmgetpid\", \"fetch\": [\"x=%di\"]}" > /tmp/add.out 2>&1; then
        ok "evmonctl add uprobe $libc:getpid: $(head -n1 /tmp/add.out | cut -c1-120)"
        start_watch uprobe:vmgetpid
        # bash calls getpid() for $$ as it starts.
        if wait_for 60 sh -c 'bash -c "echo \$\$" >/dev/null; grep -q "uprobe:vmgetpid" /tmp/watch.out'; then
                ok "the uprobe fires: $(grep -m1 'uprobe:vmgetpid' /tmp/watch.out | tr -d '\r' | cut -c1-120)"
        else
                tail -n 3 /tmp/watch.out; fail "no uprobe:vmgetpid event"
        fi
        stop_watch
        ctl remove uprobe:vmgetpid > /dev/null 2>&1 || fail "evmonctl remove uprobe:vmgetpid failed"
else
        cat /tmp/add.out; fail "evmonctl add of a uprobe failed under the unit"
fi

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

step "systemctl stop, a client connected, leaves no probe"
start_watch
wait_for 60 exec_seen || fail "the watcher before stop saw no exec"
t_stop=$SECONDS
systemctl stop evmond.service evmond.socket
[ "$(systemctl is-active evmond.service)" != active ] && ok "evmond stopped in $((SECONDS - t_stop)) s with a client" || fail "evmond still active"
wait_for 10 sh -c "! kill -0 $watch_pid" && ok "the client saw the end of the stream" || fail "evmonctl watch still running 10 s after the stop"
stop_watch
[ ! -e $prom ] && ok "evmond removed $prom as it stopped" || fail "$prom left after evmond stopped"
[ -z "$(evmon_probes)" ] && ok "no evmon probe in tracefs" || fail "probes left after stop: $(evmon_probes)"
ls -d $tracefs/events/evmon* 2>/dev/null && fail "evmon event groups left in tracefs" || ok "no evmon group in tracefs/events"
systemctl start evmond.socket evmond.service
wait_for 60 systemctl is-active evmond.service || fail "evmond did not start again"
wait_for 60 sh -c 'timeout 10 evmonctl status | grep -q kprobe:open'

# ---- the socket unit restarted -------------------------------------------------------

# An admin who changes evmond.socket (a drop-in with another SocketGroup=)
# restarts it. systemd makes a new socket file; an evmond left on the old
# one would serve no one, and systemd would not start another.
step "systemctl restart evmond.socket while evmond runs"
pid_before=$(main_pid)
systemctl restart evmond.socket
if timeout -s KILL 30 evmonctl status > /tmp/sock.out 2>&1 && grep -q kprobe:open /tmp/sock.out; then
        ok "served after the socket's restart (evmond pid $pid_before, now $(main_pid))"
else
        head -n 3 /tmp/sock.out
        fail "no answer after systemctl restart evmond.socket (evmond pid $pid_before, now $(main_pid); evmond.socket $(systemctl is-active evmond.socket))"
        systemctl restart evmond.service
fi
wait_for 60 sh -c 'timeout 10 evmonctl status | grep -q kprobe:open' || fail "evmond does not serve after the socket's restart"

# ---- SIGKILL: ExecStopPost= --------------------------------------------------------------

step "SIGKILL without a restart: ExecStopPost= (evmond --cleanup) removes probes and metrics file"
mkdir -p /run/systemd/system/evmond.service.d
printf '[Service]\nRestartPreventExitStatus=SIGKILL\n' > /run/systemd/system/evmond.service.d/50-vmtest.conf
systemctl daemon-reload
wait_for 30 test -e $prom || fail "no $prom before the SIGKILL (nothing to prove)"
evmon_probes | grep -q . || fail "no probe before the SIGKILL (nothing to prove)"
kill -KILL "$(main_pid)"
wait_for 60 sh -c '! systemctl is-active -q evmond.service && [ "$(systemctl show -p SubState --value evmond.service)" = failed ]' ||
        fail "evmond.service not failed after SIGKILL: $(systemctl show -p ActiveState,SubState --value evmond.service | tr '\n' ' ')"
[ ! -e $prom ] && ok "no $prom after the SIGKILL: $(journalctl -u evmond --no-pager -o cat | grep -m1 'Removed 1 metrics file')" ||
        fail "$prom left after evmond was killed (node-exporter serves a dead evmond's counters)"
[ -z "$(evmon_probes)" ] && ok "no evmon probe after the SIGKILL" || fail "probes left after SIGKILL: $(evmon_probes)"
rm -rf /run/systemd/system/evmond.service.d
systemctl daemon-reload
systemctl reset-failed evmond.service
systemctl start evmond.socket evmond.service
wait_for 60 sh -c 'timeout 10 evmonctl status | grep -q kprobe:open' || fail "evmond did not start again after the SIGKILL"

# ---- evmon-forward ----------------------------------------------------------------------

step "apt-get install ./evmon-forward_*.deb: neither enabled nor started; then enabled"
fdeb=$(ls ./evmon-forward_*.deb | head -n1)
cp "$fdeb" /root/deb/
# libnats3.4 and libprotobuf-c1: not in the image, on the test disk.
mkdir -p /root/deb/deps && cp ./deps/*.deb /root/deb/deps/
if (cd /root/deb && DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y ./deps/*.deb ./"$(basename "$fdeb")") > /tmp/apt.log 2>&1; then
        ok "apt-get install $(basename "$fdeb")"
else
        cat /tmp/apt.log; fail "apt-get install $(basename "$fdeb") failed"
fi
[ "$(systemctl is-enabled evmon-forward.service)" != enabled ] && ok "evmon-forward.service not enabled" || fail "evmon-forward.service enabled by the package"
[ "$(systemctl is-active evmon-forward.service)" != active ] && ok "evmon-forward.service not started" || fail "evmon-forward.service started by the package"
doc_ok evmon-forward.service && ok "evmon-forward.service's Documentation= pages exist" || fail "evmon-forward.service names documentation that is not installed"
# No NATS server in the VM: the forwarder reads evmond and waits for NATS.
echo 'EVMON_FORWARD_ARGS=--nats nats://127.0.0.1:4222' > /etc/evmon/forward.env
systemctl enable --now evmon-forward.service
fwd_connected() { journalctl -u evmon-forward --no-pager -o cat | grep -c 'connected to evmond'; }
wait_for 60 sh -c '[ "$(journalctl -u evmon-forward --no-pager -o cat | grep -c "connected to evmond")" -ge 1 ]' &&
        ok "evmon-forward runs and reads evmond: $(journalctl -u evmon-forward --no-pager -o cat | grep -m1 'connected to evmond')" ||
        fail "evmon-forward did not connect to evmond: $(journalctl -u evmon-forward --no-pager -o cat | tail -n 3)"

# ---- upgrade ------------------------------------------------------------------------------

upv=$(dpkg-deb -f ./up/evmon_*.deb Version)
step "upgrade to $upv: the conffile changed here stays; evmond and evmon-forward restart"
mkdir -p /root/deb/up && cp ./up/*.deb /root/deb/up/
conf_sum=$(md5sum < /etc/evmon/evmond.json)
pid_before=$(main_pid)
fwd_before=$(systemctl show -p MainPID --value evmon-forward.service)
conn_before=$(fwd_connected)
if (cd /root/deb/up && DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y ./evmon_*.deb ./evmon-forward_*.deb) > /tmp/apt.log 2>&1; then
        ok "apt-get install evmon and evmon-forward $upv over $(dpkg-deb -f "$deb" Version)"
else
        cat /tmp/apt.log; fail "the upgrade to $upv failed"
fi
[ "$(dpkg-query -W -f='${Version} ${db:Status-Abbrev}' evmon evmon-forward | tr -d ' ')" = "$upv""ii$upv""ii" ] &&
        ok "both at $upv, installed" || fail "after the upgrade: $(dpkg-query -W -f='${Package} ${Version} ${db:Status-Abbrev}\n' evmon evmon-forward)"
[ "$(md5sum < /etc/evmon/evmond.json)" = "$conf_sum" ] && ok "the locally changed /etc/evmon/evmond.json kept" ||
        fail "/etc/evmon/evmond.json changed by the upgrade"
ls /etc/evmon/*.dpkg-* 2>/dev/null && fail "dpkg left conffile copies" || ok "no .dpkg-* file in /etc/evmon"
wait_for 60 sh -c "systemctl is-active -q evmond.service && [ \"\$(systemctl show -p MainPID --value evmond.service)\" != $pid_before ]" &&
        ok "evmond restarted by the upgrade (pid $pid_before -> $(main_pid))" || fail "evmond not restarted by the upgrade (pid $(main_pid), $(systemctl is-active evmond.service))"
ctl status | grep -q 'kprobe:open' && ok "the new evmond serves the local config" || fail "the upgraded evmond does not serve kprobe:open"
if wait_for 60 sh -c "systemctl is-active -q evmon-forward.service && [ \"\$(systemctl show -p MainPID --value evmon-forward.service)\" != $fwd_before ]"; then
        ok "evmon-forward restarted by the upgrade (pid $fwd_before -> $(systemctl show -p MainPID --value evmon-forward.service))"
else
        fail "evmon-forward, enabled and running, is $(systemctl is-active evmon-forward.service) after the upgrade (pid was $fwd_before)"
fi
wait_for 60 sh -c "[ \"\$(journalctl -u evmon-forward --no-pager -o cat | grep -c 'connected to evmond')\" -gt $conn_before ]" &&
        ok "evmon-forward reads the new evmond" || fail "evmon-forward did not connect to evmond after the upgrade"

step "the maintainer scripts run twice (dpkg --configure again, postinst by hand)"
twice=0
for i in 1 2; do
        for p in evmon evmon-forward; do
                /var/lib/dpkg/info/$p.postinst configure "$upv" > /tmp/postinst.log 2>&1 ||
                        { cat /tmp/postinst.log; fail "$p.postinst configure, run $i, failed"; twice=1; }
        done
done
[ $twice = 0 ] && ok "evmon's and evmon-forward's postinst configure twice: exit 0"
wait_for 60 sh -c 'timeout 10 evmonctl status | grep -q kprobe:open' && ok "evmond serves after them" || fail "evmond does not serve after postinst twice"
[ "$(getent group evmon | cut -d: -f3)" = 1500 ] && ok "one evmon group, gid 1500" || fail "evmon group now: $(getent group evmon)"

step "apt-get remove evmon-forward stops it"
# Running, whatever the upgrade did: something for remove to stop.
systemctl is-active -q evmon-forward.service || systemctl restart evmon-forward.service
wait_for 30 systemctl is-active -q evmon-forward.service || fail "evmon-forward not running before remove (nothing to prove)"
fwd_pid=$(systemctl show -p MainPID --value evmon-forward.service)
if DEBIAN_FRONTEND=noninteractive apt-get remove -y evmon-forward > /tmp/apt.log 2>&1; then ok "apt-get remove evmon-forward"; else cat /tmp/apt.log; fail "apt-get remove evmon-forward failed"; fi
if pgrep -x evmon-forward > /dev/null; then
        fail "evmon-forward (pid $(pgrep -x evmon-forward)) still runs after its package was removed"
        kill "$(pgrep -x evmon-forward)"
else
        ok "no evmon-forward running (was pid $fwd_pid)"
fi
[ -e /etc/evmon/forward.env ] && ok "/etc/evmon/forward.env (the admin's) stays" || fail "/etc/evmon/forward.env removed"
rm -f /etc/evmon/forward.env

step "apt-get remove evmon, then install it again"
if DEBIAN_FRONTEND=noninteractive apt-get remove -y evmon > /tmp/apt.log 2>&1; then ok "apt-get remove evmon"; else cat /tmp/apt.log; fail "apt-get remove evmon failed"; fi
pgrep -x evmond >/dev/null && fail "evmond still running after remove" || ok "no evmond running"
[ -z "$(evmon_probes)" ] && ok "no evmon probe after remove" || fail "probes left after remove: $(evmon_probes)"
[ ! -e /run/evmon ] && ok "/run/evmon gone" || fail "/run/evmon left after remove: $(ls -la /run/evmon)"
[ "$(md5sum < /etc/evmon/evmond.json)" = "$conf_sum" ] && ok "the conffile stays after remove" || fail "/etc/evmon/evmond.json gone or changed by remove"
if (cd /root/deb/up && DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y ./evmon_*.deb) > /tmp/apt.log 2>&1; then
        ok "apt-get install evmon again"
else
        cat /tmp/apt.log; fail "apt-get install evmon after remove failed"
fi
for u in evmond.socket evmond.service; do
        [ "$(systemctl is-enabled $u)" = enabled ] && ok "$u enabled again" || fail "$u not enabled after install again"
done
wait_for 60 sh -c 'timeout 10 evmonctl status | grep -q kprobe:open' && ok "evmond serves the kept config again" ||
        fail "evmond does not serve after remove and install"

# ---- purge ---------------------------------------------------------------------------

step "apt-get purge evmon evmon-forward (the forwarder removed before, its config files left)"
evmon_probes | grep -q . || fail "no probe before purge (nothing to prove)"
if DEBIAN_FRONTEND=noninteractive apt-get purge -y evmon evmon-forward > /tmp/purge.log 2>&1; then
        ok "apt-get purge evmon evmon-forward"
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
left=$(ls -d /etc/evmon /run/evmon $prom $prom.* /etc/systemd/system/*/evmond.* /var/lib/systemd/deb-systemd-helper-enabled/*evmon* 2>/dev/null)
[ -z "$left" ] && ok "nothing of evmon left in /etc, /run, the metrics directory, unit links" || fail "left after purge: $left"
for p in evmon evmon-forward; do
        st=$(dpkg-query -W -f='${db:Status-Abbrev}' $p 2>/dev/null)
        case "$st" in ""|?n*) ok "dpkg: $p not installed ('$st')" ;; *) fail "dpkg: $p is '$st' after purge" ;; esac
done
# The group stays, as Debian leaves system groups on purge: files may still
# be owned by it (Debian Policy 9.2.1, systemd-sysusers).
getent group evmon > /dev/null && ok "the evmon group stays (policy)" || ok "the evmon group is gone"

# ---- prometheus-node-exporter installed after evmon -----------------------------------

# The unit's ReadWritePaths= opens the metrics directory only if it is there
# when evmond starts; node-exporter's package makes it when it comes.
step "prometheus-node-exporter installed after evmond started: metrics without a restart"
DEBIAN_FRONTEND=noninteractive apt-get purge -y prometheus-node-exporter prometheus > /tmp/apt.log 2>&1 ||
        { tail -n 5 /tmp/apt.log; fail "apt-get purge prometheus-node-exporter failed"; }
rm -rf /var/lib/prometheus/node-exporter
if (cd /root/deb/up && DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y ./evmon_*.deb) > /tmp/apt.log 2>&1; then
        ok "apt-get install evmon without node-exporter"
else
        cat /tmp/apt.log; fail "apt-get install evmon without node-exporter failed"
fi
wait_for 60 sh -c 'timeout 10 evmonctl status | grep -q sched_process_exec' || fail "evmond does not serve"
# What prometheus-node-exporter's package does (it ships the directory).
mkdir -p /var/lib/prometheus/node-exporter
if wait_for 30 test -e $prom; then
        ok "evmond writes $prom into the directory node-exporter brought"
else
        journalctl -u evmond --no-pager -o cat | grep -i metrics | tail -n 3
        fail "no $prom: the directory made after evmond started is read-only to it"
fi
DEBIAN_FRONTEND=noninteractive apt-get purge -y evmon > /tmp/apt.log 2>&1 || { cat /tmp/apt.log; fail "apt-get purge evmon failed"; }
[ ! -e $prom ] && ok "no $prom after purge" || fail "$prom left after purge"

echo "== $failures failed"
[ "$failures" = 0 ]
