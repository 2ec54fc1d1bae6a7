#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""evmon-forward against a real three-node nats-server cluster with JetStream
on loopback ports, and two evmond+forwarder pairs standing for two hosts:

1. a forwarder restarted against the same evmond: each run's lines have
   ids of their own (evmond's start and the client number from the hello,
   and the line number), so both runs' lines are stored, and a line of
   either run published again with its id is a duplicate;
2. both hosts' events arrive in the R3 stream, each exactly once with its
   host; a reader of one host's exec subject (stream and live) sees only
   that host's execs;
3. one node killed during a load of 100,000 events: every one is stored
   once (acknowledged, the stream keeps 3 replicas); readers that end
   while lines are still pushed to them do not crash;
4. every node down for 10 s: a forwarder with a 1 MiB buffer keeps what
   fits, and delivered + dropped (its dropped lines) = made;
   a forwarder subscribed to one pid gets that pid's events only;
5. evmond restarted: the forwarder reconnects and says so in the stream.

Usage: test-forward.py BUILD_DIR (root, tracefs and nats-server, else 77)."""

import collections
import json
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import natsfix as nf  # noqa: E402

STREAM = "EVMONTEST"
LOAD = 100_000
OUTAGE_LOAD = 30_000


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def marker_execs(path, n):
    for _ in range(n):
        pid = os.fork()
        if pid == 0:
            os.execv(path, [path])
        os.waitpid(pid, 0)


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("EVMON_BUILD_ROOT", ".")
    nf.require(("sched/sched_process_exec", "syscalls/sys_enter_getppid"))
    procs = nf.Procs("nats-forward-")
    ok = False
    try:
        run(procs, build)
        ok = True
    finally:
        if not ok:
            for name in sorted(os.listdir(procs.dir)):
                if name.endswith(".log"):
                    text = open(os.path.join(procs.dir, name), errors="replace").read()
                    print(f"---- {name} (last 3000 bytes)\n{text[-3000:]}")
        procs.cleanup()


def events_of(lines, event):
    return [l for l in lines if l.get("type") == "event" and l.get("event") == event]


def run(procs, build):
    cluster = nf.Cluster(procs)
    cluster.start()
    log(f"cluster up: {cluster.url()}")

    work = nf.Workload(procs)
    # Host A: exec, and the workload's getppid calls (the kernel filters
    # on its pid, so the count is exact whatever else runs here).
    ev_a = nf.Evmond(procs, "evmond-a", build, {"events": [
        {"tracepoint": "sched:sched_process_exec"},
        {"tracepoint": "syscalls:sys_enter_getppid", "filter": f"common_pid == {work.pid}"},
    ]})
    ev_b = nf.Evmond(procs, "evmond-b", build, {"events": [{"tracepoint": "sched:sched_process_exec"}]})
    ev_a.start()
    ev_b.start()
    fwd_a = nf.forwarder(procs, build, "forward-a", ev_a, cluster.url(0), "hosta",
                         "--stream", STREAM, "--create", "--replicas", "3", "--buffer-mib", "128")
    fwd_b = nf.forwarder(procs, build, "forward-b", ev_b, cluster.url(), "host.b*",
                         "--stream", STREAM, "sched:sched_process_exec")
    url = cluster.url()

    def forwarder_lines(host):
        return [l for l in nf.read_stream(build, url, STREAM, host, timeout=60) if l.get("type") == "forwarder"] \
            if cluster.stream(STREAM) else []
    nf.wait_for("both forwarders' connected lines in the stream",
                lambda: forwarder_lines("hosta") and forwarder_lines("host_b_"), timeout=90)
    st = cluster.stream(STREAM)
    assert st["config"]["num_replicas"] == 3, st["config"]
    log(f"stream {STREAM} made by the forwarder: subjects {st['config']['subjects']}, replicas 3")

    # ---- 1. a forwarder restarted against the same evmond, while the
    # first run's lines are within the stream's 2-minute duplicate window
    assert procs.stop(fwd_b) == 0, "forward-b did not exit cleanly"
    fwd_b = nf.forwarder(procs, build, "forward-b2", ev_b, cluster.url(), "host.b*",
                         "--stream", STREAM, "sched:sched_process_exec")

    def hellos_b():
        return [l for l in nf.read_stream(build, url, STREAM, "host_b_") if l.get("type") == "hello"]
    hellos = nf.wait_for("the restarted forward-b's hello in the stream", lambda: len(hellos_b()) >= 2 and hellos_b(),
                         timeout=60)
    starts = {h["start"] for h in hellos}
    clients = [h["client"] for h in hellos]
    assert len(hellos) == 2 and len(starts) == 1 and len(set(clients)) == 2, \
        f"two hellos of one evmond with two client numbers expected, got {hellos}"
    start = starts.pop()
    subject = "evmon.host_b_._.hello"
    for h in hellos:
        # The hello is line 1 of its connection.
        ack = nf.js_publish(url, subject, f"host.b*.{start}.{h['client']}.1", json.dumps(h).encode())
        assert ack.get("duplicate") is True, f"hello of client {h['client']} published again: {ack}"
    # The same publish with an id no line has is stored: the check above can fail.
    ack = nf.js_publish(url, "evmon.idcheck._.hello", f"idcheck.{start}.{max(clients) + 1}.1", b'{"type":"hello"}')
    assert "seq" in ack and not ack.get("duplicate"), ack
    assert len(hellos_b()) == 2
    log(f"forward-b restarted against the same evmond (start {start}): clients {clients}, each line stored once, "
        f"and each hello published again with its id was a duplicate (acks said so)")

    # ---- 2. two hosts, each event once with its host; one host's subject
    marker = os.path.join(procs.dir, "marker-exec")
    shutil.copy("/bin/true", marker)
    live = procs.start("reader-live", [nf.forward_bin(build), "--read", "--nats", url, "--json",
                                       "--host", "hosta", "sched:sched_process_exec"],
                       stdout=open(os.path.join(procs.dir, "live.out"), "wb"))
    time.sleep(1)  # the live subscription is in place before the execs
    marker_execs(marker, 10)

    def markers(host):
        lines = nf.read_stream(build, url, STREAM, host, ["sched:sched_process_exec"])
        return [l for l in lines if l["fields"].get("filename") == marker]
    for host in ("hosta", "host_b_"):
        got = nf.wait_for(f"10 marker execs of {host}", lambda: len(markers(host)) >= 10 and markers(host), timeout=60)
        time.sleep(1)
        got = markers(host)
        pids = collections.Counter(l["pid"] for l in got)
        assert len(got) == 10 and len(pids) == 10 and set(pids.values()) == {1}, \
            f"{host}: {len(got)} marker execs, pids {pids}"
    want_host = {"hosta": "hosta", "host_b_": "host.b*"}
    for host in ("hosta", "host_b_"):
        lines = nf.read_stream(build, url, STREAM, host, ["sched:sched_process_exec"])
        bad = [l for l in lines if l.get("host") != want_host[host] or l.get("event") != "sched:sched_process_exec"]
        assert lines and not bad, f"reader of {host}'s exec subject got {len(bad)} other lines: {bad[:3]}"
    log("two hosts: 10 marker execs each, exactly once, each with its host; the subject readers see only theirs")
    # doc/forward.md's patterns: a wildcard part of EVENT is a subject
    # wildcard, not the '_' a '*' in a name becomes.
    for pattern in ("sched:*", "sched:sched_process_e*", "*:sched_process_exec"):
        lines = nf.read_stream(build, url, STREAM, "hosta", [pattern])
        got = [l for l in lines if l.get("fields", {}).get("filename") == marker]
        bad = [l for l in lines if l.get("host") != "hosta" or not l.get("event", "").startswith("sched:")]
        assert len(got) == 10 and not bad, f"--read {pattern!r}: {len(got)} marker execs, {len(bad)} others: {bad[:3]}"
    log("--read 'sched:*', 'sched:sched_process_e*' and '*:sched_process_exec' each read the 10 marker execs")
    nf.wait_for("the live reader's 10 marker execs",
                lambda: sum(marker in l for l in open(os.path.join(procs.dir, "live.out"), errors="replace")) >= 10,
                timeout=30)
    procs.stop(live)
    live_lines = [json.loads(l) for l in open(os.path.join(procs.dir, "live.out")) if l.strip()]
    bad = [l for l in live_lines if l.get("host") != "hosta" or l.get("event") != "sched:sched_process_exec"]
    assert not bad, f"live reader of hosta's exec subject got others: {bad[:3]}"
    assert sum(l["fields"]["filename"] == marker for l in live_lines) == 10
    log(f"live reader of evmon.hosta.sched.sched_process_exec: {len(live_lines)} lines, all hosta execs, 10 markers")

    # ---- 3. one node killed during a load of 100,000 events
    work.run(LOAD, wait=False)
    time.sleep(0.3)
    cluster.kill(0)   # the node forward-a was given; it must fail over
    log("n0 killed during the load")
    work.wait()
    # Readers stopped while the server pushes the load to them, the moment
    # libnats 3.4 crashed in (issue 16: a subscription freed under its
    # read loop). Each must exit 0.
    seen = [nf.read_stream_stopped(build, url, STREAM, "hosta", ["syscalls:sys_enter_getppid"], 0.3 + 0.05 * i)
            for i in range(25)]
    log(f"25 readers stopped by SIGTERM mid-stream (after {min(seen)} to {max(seen)} lines), none crashed")

    def getppid_a():
        return events_of(nf.read_stream(build, url, STREAM, "hosta", ["syscalls:sys_enter_getppid"]),
                         "syscalls:sys_enter_getppid")
    nf.wait_for(f"{LOAD} getppid events of hosta in the stream", lambda: len(getppid_a()) >= LOAD, timeout=240, every=2)
    time.sleep(2)
    got = getppid_a()
    lost = sum(l.get("count", 0) for l in nf.read_stream(build, url, STREAM, "hosta") if l.get("type") in ("lost", "dropped"))
    keys = collections.Counter((l["cpu"], l["ts"]) for l in got)
    assert lost == 0, f"evmond or the forwarder reported {lost} lost/dropped during the load"
    assert len(got) == LOAD and len(keys) == LOAD, f"{len(got)} stored, {len(keys)} distinct, of {LOAD}"
    st = cluster.stream(STREAM)
    assert st["config"]["num_replicas"] == 3, st["config"]
    log(f"n0 down during {LOAD} events: {len(got)} stored once each; stream R3, leader {st['cluster'].get('leader')}")
    cluster.start(0)

    # ---- 4. every node down for 10 s; a forwarder with a 1 MiB buffer
    fwd_c = nf.forwarder(procs, build, "forward-c", ev_a, url, "hostc", "--stream", STREAM,
                         "--buffer-mib", "1", "--pid", str(work.pid),
                         "syscalls:sys_enter_getppid", "sched:sched_process_exec")
    nf.wait_for("forward-c's connected line", lambda: forwarder_lines("hostc"), timeout=60)
    cluster.kill()
    t0 = time.monotonic()
    log("all nodes killed")
    work.run(OUTAGE_LOAD)
    time.sleep(max(0, 10 - (time.monotonic() - t0)))
    cluster.start()
    log(f"all nodes back after {time.monotonic() - t0:.1f} s")

    def outage_tally():
        lines = nf.read_stream(build, url, STREAM, "hostc")
        delivered = len(events_of(lines, "syscalls:sys_enter_getppid"))
        dropped = sum(l["count"] for l in lines if l.get("type") == "dropped" and l.get("source") == "evmon-forward")
        other = sum(l.get("count", 0) for l in lines if l.get("type") in ("lost", "dropped") and l.get("source") != "evmon-forward")
        return delivered, dropped, other
    nf.wait_for("hostc's delivered + dropped to reach the workload's count",
                lambda: sum(outage_tally()) >= OUTAGE_LOAD, timeout=180, every=2)
    time.sleep(2)
    delivered, dropped, other = outage_tally()
    assert other == 0, f"evmond reported {other} lost/dropped for hostc"
    assert dropped > 0, f"nothing dropped: {delivered} delivered; the 1 MiB buffer should not hold {OUTAGE_LOAD} lines"
    assert delivered + dropped == OUTAGE_LOAD, f"delivered {delivered} + dropped {dropped} != made {OUTAGE_LOAD}"
    log(f"10 s without NATS: made {OUTAGE_LOAD}, delivered {delivered}, dropped {dropped} (said in dropped lines)")
    # forward-a (128 MiB) kept all of them.
    nf.wait_for(f"hosta's {LOAD + OUTAGE_LOAD} getppid events", lambda: len(getppid_a()) == LOAD + OUTAGE_LOAD,
                timeout=180, every=2)
    log(f"forward-a, whose buffer held the outage, delivered all {LOAD + OUTAGE_LOAD}")
    # forward-c subscribed like `evmonctl watch` with events and a pid:
    # the marker execs and whatever else runs here are other pids, and
    # none of them reach hostc.
    marker_execs(marker, 3)
    nf.wait_for("3 more marker execs of hosta", lambda: len(markers("hosta")) == 13, timeout=60)
    lines = [l for l in nf.read_stream(build, url, STREAM, "hostc") if l.get("type") == "event"]
    bad = [l for l in lines if l["pid"] != work.pid or l["event"] != "syscalls:sys_enter_getppid"]
    assert lines and not bad, f"hostc subscribed to pid {work.pid} only, got {len(bad)} others: {bad[:3]}"
    log(f"forward-c's subscription (--pid {work.pid}, getppid and exec): only the workload's {len(lines)} events")

    # ---- 5. evmond restarted
    assert ev_a.stop() == 0
    ev_a.start()

    def reconnected():
        return [l for l in forwarder_lines("hosta") if l.get("event") == "reconnected"]
    nf.wait_for("forward-a's reconnected line", reconnected, timeout=60)
    disconnected = [l for l in forwarder_lines("hosta") if l.get("event") == "disconnected"]
    assert disconnected, "no disconnected line before the reconnected one"
    marker_execs(marker, 3)
    nf.wait_for("3 more marker execs of hosta after the restart",
                lambda: len(markers("hosta")) == 16, timeout=60)
    log(f"evmond restarted: the stream says {disconnected[-1]['detail']!r}, then reconnected, and events flow again")

    for p, name in ((fwd_a, "forward-a"), (fwd_b, "forward-b2"), (fwd_c, "forward-c")):
        rc = procs.stop(p)
        assert rc == 0, f"{name} exited with {rc}"


if __name__ == "__main__":
    main()
