#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""evmon-forward against faults of a real three-node nats-server cluster
(loopback ports), counted: events made by a workload whose pid evmond's
kernel filter names, lines stored in the stream (the servers' /jsz and
the reader), and what the forwarder said it dropped.

Scenarios (each on a cluster and stream of its own):

refused: a stream at its max_msgs with discard new refuses publishes:
   the forwarder logs the refusal (the stream, JetStream's words) instead
   of resending its whole window four times a second without a word, and
   once the limit is raised every line is either stored or counted in a
   dropped line: stored + dropped = made.

too-big: a line larger than the stream's max message size (JetStream
   refuses it) and one larger than the servers' max_payload (libnats
   refuses to send it) are dropped, counted and logged, and the lines
   after them are stored; each held up every line after it for good,
   without a word.

hung: the node the forwarder is connected to is stopped (SIGSTOP: a hung
   peer, its connections up): the forwarder leaves it within seconds and
   every one of 20,000 events is stored once; it waited for libnats'
   default 2 min × 2 PINGs (nothing stored in 200 s).

quorum: two of the three nodes hang (SIGSTOP): the stream has no
   quorum and publishes get no answer at all; the forwarder says so
   (it said nothing) and, once they are back, every event is stored once.

names: an event named with '.', '>' and a non-ASCII letter (a control
   byte, once here, is no longer a name evmond takes): its subject is
   made of the name, not of its JSON text, so a reader given the name
   reads every one of its lines in the stream (it read none).

setup: a stream that does not exist, without --create: the forwarder
   exits 1 naming the stream and --create after looking for 10 s (it
   published into nothing, retrying for good, without a word); one that
   another forwarder makes meanwhile is used.

auth: a server that refuses the forwarder's credentials (wrong password,
   none): exit 1 saying so and how to give them (it waited for good,
   saying "not reachable yet"); the right ones work; no password in the
   log.

cut: evmond's connection ends in the middle of a line (what a killed
   evmond leaves when its last write split a line; a relay of evmond's
   own bytes cuts it there for the test): that part is dropped, counted
   in a dropped line and logged; it went without a word or a count.

nats-arg: a --nats that is no NATS URL (an unknown scheme, a bad port,
   not a URL, none) is refused at start with exit status 2, naming
   --nats, the URL and what to give (it was retried for good, "no NATS
   server answers yet"); a good URL of a server that is down is retried
   until the server is up. A password with an '@' is hidden whole (the
   part after it was shown). A --stream name JetStream refuses ('.', '/',
   a blank, none) is refused at start with exit status 2 too.

subscription: EVENT patterns evmond serves none of, or a --cgroup that
   is not there: evmond refuses the subscription and sends every event;
   the forwarder says so and exits 1, storing none of them (it forwarded
   every event of the host without a word).

overlap: --create of a stream JetStream will never make (another stream
   takes evmon.>, --replicas 3 on a server without a cluster): exit 1
   saying why and what to give (it tried again every second, for good,
   a log line each time).

escapes: messages on evmon.> whose "time" and fields hold ESC ]0;title
   BEL ESC [2J (as \\u escapes and as raw bytes) and one that is no JSON:
   the reader on a terminal (readable and --json) and --json to a pipe
   writes no control byte and only JSON lines; the one that is no JSON is
   counted and said, not printed (the readable view set the terminal's
   title and cleared it, --json wrote the payload as it was).

flood: a server whose max_payload is smaller than the forwarder's own
   dropped line (48 bytes): the lines and the dropped lines saying so are
   dropped, counted, and said in a bounded number of log lines (1,356 log
   lines in 12 s, each dropped line dropping the next); with a max_payload
   the dropped line fits (128 bytes) the loss is published in-band in
   dropped lines that count every event made.

Usage: test-forward-faults.py BUILD_DIR [SCENARIO...]
(root, tracefs and nats-server, else 77)."""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import natsfix as nf  # noqa: E402

STREAM = "EVMONFAULTS"
GETPPID = "syscalls:sys_enter_getppid"


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def said(p, pattern):
    """The first match of PATTERN in what process P logged, or None."""
    return re.search(pattern, open(p.log, errors="replace").read())


def stream_create(cluster, **config):
    cfg = dict({"name": STREAM, "subjects": ["evmon.>"], "retention": "limits", "storage": "file",
                "num_replicas": 3, "duplicate_window": 120 * 10**9}, **config)
    ack = nf.js_publish(cluster.url(0), f"$JS.API.STREAM.CREATE.{STREAM}", "create", json.dumps(cfg).encode())
    assert "error" not in ack, ack
    return cfg


def stream_update(cluster, cfg):
    ack = nf.js_publish(cluster.url(0), f"$JS.API.STREAM.UPDATE.{STREAM}", "update", json.dumps(cfg).encode())
    assert "error" not in ack, ack


def stored(cluster):
    s = cluster.stream(STREAM)
    return s["state"]["messages"] if s else 0


class Setup:
    """A cluster, a workload and an evmond that sees the workload's
    getppid calls only (the kernel filters on its pid)."""

    def __init__(self, procs, build, nats_conf="", events=()):
        self.procs, self.build = procs, build
        self.cluster = nf.Cluster(procs)
        for i in range(3):
            with open(os.path.join(procs.dir, f"n{i}.conf"), "a") as f:
                f.write(nats_conf)
        self.cluster.start()
        self.url = self.cluster.url()
        self.work = nf.Workload(procs)
        self.evmond = nf.Evmond(procs, "evmond", build, {"events": [
            {"tracepoint": GETPPID, "filter": f"common_pid == {self.work.pid}"}, *events]})
        self.evmond.start()

    def forwarder(self, name, host, *args, url=None):
        return nf.forwarder(self.procs, self.build, name, self.evmond, url or self.url, host, "--stream", STREAM, *args)

    def tally(self, host):
        """(getppid events stored, the forwarder's dropped counts, evmond's
        own lost/dropped counts) of HOST in the stream."""
        lines = nf.read_stream(self.build, self.url, STREAM, host)
        events = [l for l in lines if l.get("type") == "event" and l.get("event") == GETPPID]
        keys = {(l["cpu"], l["ts"]) for l in events}
        assert len(keys) == len(events), f"{len(events) - len(keys)} events stored twice"
        dropped = sum(l["count"] for l in lines if l.get("type") == "dropped" and l.get("source") == "evmon-forward")
        other = sum(l.get("count", 0) for l in lines
                    if l.get("type") in ("lost", "dropped") and l.get("source") != "evmon-forward")
        return len(events), dropped, other


def scenario_refused(procs, build):
    refused(procs, build, 0, 100)


def scenario_refused_batched(procs, build):
    # ~25 messages for the 5,000 lines: the stream takes 10 of them.
    refused(procs, build, 64, 10)


def refused(procs, build, batch_kib, max_msgs):
    s = Setup(procs, build)
    cfg = stream_create(s.cluster, max_msgs=max_msgs, discard="new")
    made = 5000
    fwd = s.forwarder("forward-refused", "refused", "--buffer-mib", "1", "--batch-kib", str(batch_kib))
    nf.wait_for("the stream's first lines", lambda: stored(s.cluster) > 0, timeout=60)
    s.work.run(made)
    try:
        nf.wait_for("the forwarder's log line about the refusal",
                    lambda: said(fwd, r"stream EVMONFAULTS refuses lines .*maximum messages exceeded"), timeout=30)
    except AssertionError as e:
        raise AssertionError(f"{e}; the stream holds {stored(s.cluster)} lines") from None
    time.sleep(3)   # refused for a while, its buffer full
    assert stored(s.cluster) == max_msgs, stored(s.cluster)
    log(f"--batch-kib {batch_kib}, stream at max_msgs {max_msgs} (discard new): the forwarder logged the refusal")
    cfg["max_msgs"] = -1
    stream_update(s.cluster, cfg)
    nf.wait_for("stored + dropped to reach the workload's count",
                lambda: sum(s.tally("refused")[:2]) >= made, timeout=120, every=2)
    time.sleep(2)
    events, dropped, other = s.tally("refused")
    assert other == 0, f"evmond reported {other} lost/dropped"
    assert dropped > 0, f"nothing dropped: a 1 MiB buffer does not hold {made} lines"
    assert events + dropped == made, f"stored {events} + dropped {dropped} != made {made}"
    assert said(fwd, "stream EVMONFAULTS takes lines again"), "no log line saying the stream takes lines again"
    total = stored(s.cluster)
    assert procs.stop(fwd) == 0
    published = int(said(fwd, r"published \d+ lines in (\d+) messages").group(1))
    # Each message is stored once; the window of 1,024 was out when the
    # stream began to refuse, then one at a time.
    assert published <= total + 1024 + 100, f"{published} publishes for {total} messages stored: resent without pause"
    log(f"--batch-kib {batch_kib}, limit raised: made {made}, stored {events}, dropped {dropped} (said in dropped lines); "
        f"{published} publishes for {total} messages stored")


def exec_long_path(top, length):
    """Runs /bin/true from a path of about LENGTH bytes under TOP."""
    path = top
    while len(path) < length - 110:
        path = os.path.join(path, "d" * min(100, length - 110 - len(path)))
    os.makedirs(path, exist_ok=True)
    exe = os.path.join(path, "fwdbig-true")
    shutil.copy("/bin/true", exe)
    subprocess.run([exe], check=True)
    return exe


def scenario_too_big(procs, build):
    # An exec line carries its filename twice (fields.filename and
    # proc.exe): one of 600 bytes is over the
    # stream's 1,024, one of 1,500 over the servers' 2,048.
    s = Setup(procs, build, "max_payload: 2048\n",
              [{"tracepoint": "sched:sched_process_exec", "filter": 'filename ~ "*fwdbig-true"'}])
    stream_create(s.cluster, max_msg_size=1024)
    fwd = s.forwarder("forward-big", "big")
    nf.wait_for("the stream's first lines", lambda: stored(s.cluster) > 0, timeout=60)
    exec_long_path(os.path.join(procs.dir, "a"), 600)
    exec_long_path(os.path.join(procs.dir, "b"), 1500)
    made = 2000
    s.work.run(made)
    nf.wait_for("stored + dropped to reach the workload's count + 2",
                lambda: sum(s.tally("big")[:2]) >= made + 2, timeout=60, every=2)
    time.sleep(2)
    events, dropped, other = s.tally("big")
    assert other == 0, f"evmond reported {other} lost/dropped"
    assert (events, dropped) == (made, 2), f"stored {events} of {made} getppid events, dropped {dropped}, not 2"
    assert said(fwd, r"stream EVMONFAULTS refuses a line larger than its max message size"), \
        "no log of the refused line"
    assert said(fwd, r"a line of \d+ bytes is larger than the NATS server takes \(max_payload 2048"), \
        "no log of the line over max_payload"
    assert procs.stop(fwd) == 0
    log(f"a line over max_msg_size and one over max_payload: dropped 2 (said in dropped lines), "
        f"the {made} getppid events after them stored")


def scenario_hung(procs, build):
    s = Setup(procs, build)
    stream_create(s.cluster)
    # Given n0 only, it learns the others from the cluster.
    fwd = s.forwarder("forward-hung", "hung", url=s.cluster.url(0))
    nf.wait_for("the stream's first lines", lambda: stored(s.cluster) > 0, timeout=60)
    hung = s.cluster.nodes[0]
    hung.send_signal(signal.SIGSTOP)
    try:
        s.cluster.nodes[0] = None    # not asked for /jsz while stopped
        made = 20000
        s.work.run(made)
        # The other two keep the R3 stream's quorum.
        nf.wait_for(f"{made} events stored while n0 hangs", lambda: s.tally("hung")[0] >= made, timeout=90, every=2)
        time.sleep(2)
        events, dropped, other = s.tally("hung")
        assert (events, dropped, other) == (made, 0, 0), f"stored {events} of {made}, dropped {dropped}, evmond {other}"
    finally:
        hung.send_signal(signal.SIGCONT)
        s.cluster.nodes[0] = hung
    assert procs.stop(fwd) == 0
    log(f"n0 stopped (SIGSTOP) under the forwarder: all {made} events stored once, none dropped")


def single_node(procs, conf=""):
    """One nats-server with JetStream and no cluster, CONF added."""
    node = nf.Cluster(procs, 1)
    path = os.path.join(procs.dir, "n0.conf")
    text = open(path).read()
    with open(path, "w") as f:
        f.write(text[:text.index("cluster {")] + conf)
    node.start()
    return node


def forward_run(build, procs, url, *args, timeout=30):
    """Runs a forwarder to its end: (exit status, what it said)."""
    argv = [nf.forward_bin(build), "--socket", os.path.join(procs.dir, "none.sock"), "--nats", url,
            "--host", "setup", *args]
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        raise AssertionError(f"{' '.join(argv)} still runs after {timeout} s; it said: "
                             f"{(e.stdout or b'').decode(errors='replace')}")
    return p.returncode, p.stdout.decode(errors="replace")


def scenario_setup(procs, build):
    node = single_node(procs)
    rc, out = forward_run(build, procs, node.url(), "--stream", "EVMONMISSING")
    assert rc == 1 and "stream EVMONMISSING does not exist" in out and "--create" in out, (rc, out)
    log(f"a stream that does not exist, without --create: exit {rc}, {out.strip().splitlines()[-1]!r}")
    # A stream another forwarder (with --create) makes a few seconds later
    # is waited for: forwarders of many hosts start together.
    late = procs.start("forward-late", [nf.forward_bin(build), "--socket", os.path.join(procs.dir, "none.sock"),
                                        "--nats", node.url(), "--host", "late", "--stream", "EVMONLATE"])
    nf.wait_for("the late forwarder's warning", lambda: said(late, "stream EVMONLATE does not exist"), timeout=30)
    time.sleep(3)
    ack = nf.js_publish(node.url(), "$JS.API.STREAM.CREATE.EVMONLATE", "late",
                        json.dumps({"name": "EVMONLATE", "subjects": ["late.>"], "storage": "file"}).encode())
    assert "error" not in ack, ack
    nf.wait_for("the late forwarder to find the stream", lambda: said(late, "stream EVMONLATE ready"), timeout=30)
    time.sleep(8)
    assert late.poll() is None, "the forwarder waiting for a stream being made exited"
    assert procs.stop(late) == 0
    # With --create the same forwarder makes it and runs (so the check
    # above can pass for the right reason only).
    fwd = procs.start("forward-setup", [nf.forward_bin(build), "--socket", os.path.join(procs.dir, "none.sock"),
                                        "--nats", node.url(), "--host", "setup", "--stream", "EVMONMISSING", "--create"])
    nf.wait_for("the stream made", lambda: node.stream("EVMONMISSING"), timeout=30)
    assert fwd.poll() is None
    assert procs.stop(fwd) == 0


def scenario_auth(procs, build):
    node = single_node(procs, "authorization { user: fwd, password: s3cret }\n")
    port = node.client[0]
    for creds in ("fwd:wrong@", ""):
        rc, out = forward_run(build, procs, f"nats://{creds}127.0.0.1:{port}", "--stream", "EVMONAUTH", "--create")
        assert rc == 1 and "refuses to let us in" in out and "USER:PASSWORD" in out, (rc, out)
        assert "wrong" not in out, f"the password is in the log: {out}"
        log(f"credentials {creds or 'none'!r} refused: exit {rc}, {out.strip().splitlines()[-1]!r}")
    fwd = procs.start("forward-auth", [nf.forward_bin(build), "--socket", os.path.join(procs.dir, "none.sock"),
                                       "--nats", f"nats://fwd:s3cret@127.0.0.1:{port}", "--host", "auth",
                                       "--stream", "EVMONAUTH", "--create"])
    nf.wait_for("the forwarder's connected line", lambda: said(fwd, "stream EVMONAUTH ready"), timeout=30)
    assert fwd.poll() is None
    # Every local user reads a command line (ps -ef): the unit passes --nats there.
    cmdline = open(f"/proc/{fwd.pid}/cmdline", "rb").read().replace(b"\0", b" ").decode()
    assert "s3cret" not in cmdline and "fwd:" not in cmdline, f"the credentials are in /proc/PID/cmdline: {cmdline}"
    log(f"its command line: {cmdline.strip()}")
    assert procs.stop(fwd) == 0
    assert "s3cret" not in open(fwd.log).read(), "the password is in the log"


def scenario_quorum(procs, build):
    s = Setup(procs, build)
    stream_create(s.cluster)
    fwd = s.forwarder("forward-quorum", "quorum", url=s.cluster.url(0))
    nf.wait_for("the stream's first lines", lambda: stored(s.cluster) > 0, timeout=60)
    hung = s.cluster.nodes[1:]
    for p in hung:
        p.send_signal(signal.SIGSTOP)
    s.cluster.nodes[1:] = [None, None]    # not asked for /jsz while stopped
    try:
        made = 5000
        s.work.run(made)
        nf.wait_for("the forwarder's log line about publishes without acknowledgement",
                    lambda: said(fwd, r"stream EVMONFAULTS refuses lines .*no acknowledgement within"), timeout=60)
    finally:
        for p in hung:
            p.send_signal(signal.SIGCONT)
        s.cluster.nodes[1:] = hung
    nf.wait_for(f"{made} events stored", lambda: s.tally("quorum")[0] >= made, timeout=120, every=2)
    time.sleep(2)
    events, dropped, other = s.tally("quorum")
    assert (events, dropped, other) == (made, 0, 0), f"stored {events} of {made}, dropped {dropped}, evmond {other}"
    nf.wait_for("the log line saying the stream takes lines again",
                lambda: said(fwd, "stream EVMONFAULTS takes lines again"), timeout=30)
    assert procs.stop(fwd) == 0
    log(f"two nodes stopped: no acknowledgements, said in the log; back: all {made} events stored once")


def scenario_names(procs, build):
    s = Setup(procs, build)
    stream_create(s.cluster)
    odd = "w.e>r:d.n>m\u00e9"
    ev = nf.Evmond(procs, "evmond-names", build, {"events": [{"software": "cpu-clock", "name": odd, "period": 1000000}],
                                                  "targets": {"pids": [s.work.pid]}})
    ev.start()
    fwd = nf.forwarder(procs, build, "forward-names", ev, s.url, "names", "--stream", STREAM)
    nf.wait_for("the stream's first lines", lambda: stored(s.cluster) > 0, timeout=60)
    s.work.run(200000)
    time.sleep(2)

    def named(lines):
        return [l for l in lines if l.get("type") == "event" and l.get("event") == odd]
    every = named(nf.read_stream(build, s.url, STREAM, "names"))
    by_name = named(nf.read_stream(build, s.url, STREAM, "names", [odd]))
    assert every and len(by_name) == len(every), f"the reader of {odd!r} read {len(by_name)} of its {len(every)} lines"
    assert procs.stop(fwd) == 0
    log(f"event {odd!r}: a reader given its name read all {len(every)} of its lines")


class CutRelay:
    """A socket at PATH passing evmond's (UPSTREAM) stream to one client
    and its lines back, until cut(): then the bytes of the next line but
    its last, and both connections close, as when evmond is killed while
    it writes. A relay, not a fake: every byte is evmond's. Whether a
    killed evmond's socket ends mid-line depends on how its last writev
    split (it did under load, not on an idle machine)."""

    def __init__(self, path, upstream):
        self.srv = socket.socket(socket.AF_UNIX)
        self.srv.bind(path)
        self.srv.listen(1)
        self.upstream = upstream
        self.cutting = threading.Event()
        self.part = None
        threading.Thread(target=self.run, daemon=True).start()

    def cut(self):
        self.cutting.set()

    def run(self):
        c, _ = self.srv.accept()
        self.srv.close()
        u = socket.socket(socket.AF_UNIX)
        u.connect(self.upstream)

        def back():
            try:
                while (data := c.recv(65536)):
                    u.sendall(data)
            except OSError:
                pass
        threading.Thread(target=back, daemon=True).start()
        buf = b""
        while (data := u.recv(65536)):
            if not self.cutting.is_set():
                c.sendall(data)
                continue
            buf += data
            nl = buf.find(b"\n", 1)
            if nl > 0:
                self.part = nl
                c.sendall(buf[:nl])
                break
        # shutdown, not close alone: back() is blocked in c.recv, which
        # holds the connection open.
        for sock in (c, u):
            sock.shutdown(socket.SHUT_RDWR)
            sock.close()


def scenario_cut(procs, build):
    node = single_node(procs)
    work = nf.Workload(procs)
    ev = nf.Evmond(procs, "evmond-cut", build, {"events": [
        {"tracepoint": GETPPID, "filter": f"common_pid == {work.pid}"}]})
    ev.start()
    relay_path = os.path.join(procs.dir, "relay.sock")
    relay = CutRelay(relay_path, ev.socket)
    fwd = procs.start("forward-cut", [nf.forward_bin(build), "--socket", relay_path, "--nats", node.url(),
                                      "--host", "cut", "--stream", "EVMONCUT", "--create"])
    nf.wait_for("the forwarder's subscription stored",
                lambda: node.stream("EVMONCUT") and [l for l in nf.read_stream(build, node.url(), "EVMONCUT", "cut")
                                                     if l.get("type") == "subscribed"], timeout=60, every=1)
    relay.cut()
    work.run(100)
    nf.wait_for("the forwarder to lose evmond", lambda: said(fwd, "lost evmond"), timeout=60)
    cut = said(fwd, r"evmond's connection ended in the middle of a line \((\d+) bytes without its newline\); "
                    r"dropped and counted")
    assert cut, "the forwarder said nothing of the part of a line left when evmond's connection ended"
    assert relay.part and int(cut.group(1)) >= relay.part, (cut.group(0), relay.part)
    nf.wait_for("the dropped line", lambda: [l for l in nf.read_stream(build, node.url(), "EVMONCUT", "cut")
                                              if l.get("type") == "dropped"], timeout=30, every=2)
    lines = nf.read_stream(build, node.url(), "EVMONCUT", "cut")
    dropped = sum(l["count"] for l in lines if l.get("type") == "dropped" and l.get("source") == "evmon-forward")
    gone = [l for l in lines if l.get("type") == "forwarder" and l.get("event") == "disconnected"]
    assert dropped == 1, f"the forwarder's dropped lines count {dropped}, not the 1 part of a line"
    assert gone and gone[-1]["dropped_total"] == 1, f"disconnected lines: {gone}"
    assert procs.stop(fwd) == 0
    log(f"evmond's connection ended mid-line: the part ({cut.group(1)} bytes) dropped, counted (1) and logged")


def scenario_nats_arg(procs, build):
    for url, why in (("foo://127.0.0.1:4222", "unknown scheme"), ("http://fwd:s3cret@127.0.0.1:4222", "unknown scheme"),
                     ("http://fwd:s3@cret@127.0.0.1:4222", "unknown scheme"),
                     ("nats://127.0.0.1:99999", "bad port"), ("nats://127.0.0.1:0", "bad port"),
                     ("not a url", "not a URL"), ("nats://nats1/", "not HOST[:PORT]"),
                     ("nats://127.0.0.1:4222,nats1:4222", "not a URL"), (",", "is required")):
        rc, out = forward_run(build, procs, url, "--stream", "EVMONARG", "--create", timeout=10)
        assert rc == 2 and "--nats" in out and why in out and "nats://" in out, (url, rc, out)
        assert "s3" not in out and "cret" not in out, f"the password is in the log: {out}"
        log(f"--nats {url!r}: exit {rc}, {out.strip().splitlines()[-1]!r}")
        rc, out = forward_run(build, procs, url, "--read", "--stream", "EVMONARG", "--no-follow", timeout=10)
        assert rc == 2 and "--nats" in out and why in out, ("--read", url, rc, out)
    # A stream name JetStream refuses for good (it was tried every second;
    # one with a blank made the server drop the connection, again and
    # again), with or without --create, forwarding or reading.
    for name in ("EVMON.A", "EVMON A", "EVMON/A", ""):
        for args in (("--create",), (), ("--read", "--no-follow")):
            rc, out = forward_run(build, procs, "nats://127.0.0.1:4222", "--stream", name, *args, timeout=10)
            assert rc == 2 and "--stream" in out and "no JetStream stream name" in out, (name, args, rc, out)
        log(f"--stream {name!r}: exit {rc}, {out.strip().splitlines()[-1]!r}")
    # A server that is down is waited for, and used once it is up.
    node = nf.Cluster(procs, 1)
    path = os.path.join(procs.dir, "n0.conf")
    text = open(path).read()
    with open(path, "w") as f:
        f.write(text[:text.index("cluster {")])
    fwd = procs.start("forward-arg", [nf.forward_bin(build), "--socket", os.path.join(procs.dir, "none.sock"),
                                      "--nats", node.url(), "--host", "arg", "--stream", "EVMONARG", "--create"])
    nf.wait_for("the forwarder's line about no server", lambda: said(fwd, "answers yet"), timeout=30)
    time.sleep(2)
    assert fwd.poll() is None, f"the forwarder exited ({fwd.returncode}) with its server down"
    node.start()
    nf.wait_for("the stream made once the server is up", lambda: node.stream("EVMONARG"), timeout=30)
    assert fwd.poll() is None
    assert procs.stop(fwd) == 0
    log("a down server's good URL: retried, then the stream made")


def scenario_subscription(procs, build):
    node = single_node(procs)
    work = nf.Workload(procs)
    ev = nf.Evmond(procs, "evmond-sub", build, {"events": [
        {"tracepoint": GETPPID, "filter": f"common_pid == {work.pid}"}]})
    ev.start()
    for host, args, named in (("sub1", ["sched:no_such_event"], "sched:no_such_event"),
                              ("sub2", ["--cgroup", "/no/such/cgroup"], "/no/such/cgroup")):
        stream = "EVMONSUB"     # one for all: each stream takes evmon.>
        fwd = nf.forwarder(procs, build, f"forward-{host}", ev, node.url(), host, "--stream", stream, "--create", *args)
        nf.wait_for("the forwarder to connect to evmond", lambda: said(fwd, "connected to evmond"), timeout=30)
        work.run(2000)
        try:
            fwd.wait(30)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the forwarder with {args} runs on after evmond refused its subscription") from None
        text = open(fwd.log, errors="replace").read()
        assert fwd.returncode == 1 and "refuses our subscription" in text and named in text, (fwd.returncode, text)
        procs.stop(fwd)
        # No stream when it stopped before NATS answered: nothing stored.
        stored = [l for l in nf.read_stream(build, node.url(), stream, host) if l.get("type") == "event"] \
            if node.stream(stream) else []
        assert not stored, f"{len(stored)} events forwarded that {args} did not ask for"
        log(f"{' '.join(args)}: refused by evmond, the forwarder exit 1 saying so, 0 events forwarded")
    # A connection evmond turns away (clients.max) is no refused
    # subscription: the forwarder tries again, and forwards once in.
    full = nf.Evmond(procs, "evmond-full", build, {"clients": {"max": 1}, "events": [
        {"tracepoint": GETPPID, "filter": f"common_pid == {work.pid}"}]})
    full.start()
    holder = socket.socket(socket.AF_UNIX)
    holder.connect(full.socket)
    assert b'"hello"' in holder.recv(65536)
    fwd = nf.forwarder(procs, build, "forward-full", full, node.url(), "full", "--stream", "EVMONSUB", "--create")
    nf.wait_for("the forwarder to try twice, or to exit", lambda: fwd.poll() is not None or
                len(re.findall("connected to evmond", open(fwd.log, errors="replace").read())) >= 3, timeout=30)
    assert fwd.poll() is None, f"the forwarder exited ({fwd.returncode}) when evmond had no room for it: " \
                               f"{open(fwd.log, errors='replace').read()}"
    assert said(fwd, r"turns us away \(.*too many clients"), "no log line saying evmond turned it away"
    holder.close()
    nf.wait_for("the forwarder's subscription", lambda: [l for l in nf.read_stream(build, node.url(), "EVMONSUB", "full")
                                                         if l.get("type") == "subscribed"], timeout=30, every=1)
    work.run(500)
    nf.wait_for("the workload's 500 events stored",
                lambda: len([l for l in nf.read_stream(build, node.url(), "EVMONSUB", "full")
                             if l.get("type") == "event"]) >= 500, timeout=60, every=2)
    assert fwd.poll() is None
    assert procs.stop(fwd) == 0
    log("turned away by evmond (clients.max): tried again, then all 500 events stored")


def scenario_overlap(procs, build):
    node = single_node(procs)
    ack = nf.js_publish(node.url(), "$JS.API.STREAM.CREATE.EVMONFIRST", "first",
                        json.dumps({"name": "EVMONFIRST", "subjects": ["evmon.>"], "storage": "file"}).encode())
    assert "error" not in ack, ack
    for args, want in ((("--stream", "EVMONSECOND", "--create"), r"another stream .* takes its subjects evmon\.>.*--stream"),
                       (("--stream", "EVMONR3", "--create", "--replicas", "3"), r"--replicas 3: NATS at .* is no cluster")):
        rc, out = forward_run(build, procs, node.url(), *args, timeout=20)
        assert rc == 1 and re.search(want, out), (args, rc, out)
        assert out.count("cannot create stream") == 0, f"retried: {out}"
        log(f"{' '.join(args)}: exit {rc}, {[l for l in out.splitlines() if 'cannot be made' in l][0]!r}")


def read_on(build, url, stream, *args, tty=True, timeout=30):
    """evmon-forward --read --no-follow of STREAM with its standard output
    on a pseudo-terminal (TTY) or a pipe: (status, bytes written, stderr)."""
    import pty
    argv = [nf.forward_bin(build), "--read", "--nats", url, "--stream", stream, "--no-follow", *args]
    if tty:
        master, slave = pty.openpty()
        p = subprocess.Popen(argv, stdout=slave, stderr=subprocess.PIPE)
        os.close(slave)
        out = b""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                chunk = os.read(master, 65536)
            except OSError:         # EIO: the reader is gone and all is read
                break
            if not chunk:
                break
            out += chunk
        os.close(master)
        err = p.stderr.read()
        p.wait(timeout)
        return p.returncode, out.replace(b"\r\n", b"\n"), err.decode(errors="replace")
    p = subprocess.run(argv, capture_output=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


def scenario_escapes(procs, build):
    # Anyone who may publish on evmon.> writes what a reader prints: a
    # "time" of ESC ]0;title BEL ESC [2J set the terminal's title and
    # cleared its screen in the readable view, --json wrote the payload's
    # bytes as they were to a terminal, and a payload that was no JSON at
    # all went out as a "JSON line".
    node = single_node(procs)
    stream_create(node, num_replicas=1)
    evil = "\x1b]0;owned\x07\x1b[2J"
    payloads = [
        # Valid JSON: the controls as \u escapes.
        json.dumps({"type": "event", "event": "x:y", "host": "evil", "time": "T" + evil, "cpu": 0, "pid": 1,
                    "fields": {"f": evil + "\u009b2J"}}).encode(),
        # The controls as raw bytes inside a string (no JSON, but json-c takes it).
        b'{"type":"event","event":"x:y","host":"evil","time":"T' + evil.encode() + b'","pid":2}',
        # No JSON at all.
        evil.encode() + b"\n{\"type\":\"forged\"}",
    ]
    for i, payload in enumerate(payloads):
        # The one that is no JSON is named on stderr by its subject, which
        # is the publisher's too: U+009B (CSI) in it, and ESC.
        subject = f"evmon.evil.x.y{i}" + ("\u009b2J\x1b[1m" if i == 2 else "")
        ack = nf.js_publish(node.url(), subject, f"evil-{i}", payload)
        assert "error" not in ack, ack
    controls = re.compile(rb"[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]")
    for args, tty in (((), True), (("--json",), True), (("--json",), False)):
        rc, out, err = read_on(build, node.url(), STREAM, *args, tty=tty)
        where = f"--read {' '.join(args)} on a {'terminal' if tty else 'pipe'}"
        assert rc == 0, f"{where}: exit {rc}: {err}"
        bad = controls.search(out)
        assert not bad, f"{where}: a control byte {bad.group()!r} reaches the output: {out!r}"
        lines = out.decode().splitlines()
        if args:
            parsed = [json.loads(l) for l in lines]   # every line is JSON
            assert [o["pid"] for o in parsed] == [1, 2], f"{where}: {lines}"
            assert parsed[0]["time"] == "T" + evil and parsed[1]["time"] == "T" + evil, f"{where}: {lines}"
        else:
            assert len(lines) == 2 and all("\\x1b]0;owned\\x07\\x1b[2J" in l for l in lines), f"{where}: {lines}"
        assert "is no JSON object" in err and "1 messages were no JSON object" in err, f"{where}: {err}"
        bad = controls.search(err.encode())
        assert not bad, f"{where}: a control byte {bad.group()!r} reaches stderr: {err!r}"
        log(f"{where}: {len(lines)} lines, no control byte; the payload that is no JSON counted: "
            f"{[l for l in err.splitlines() if 'no JSON' in l][-1]!r}")


class CoreReader:
    """A core NATS subscriber of evmon.> on loopback (NATS' text protocol),
    collecting every message's payload in a thread."""

    def __init__(self, url):
        host, port = url.removeprefix("nats://").rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=10)
        self.f = self.sock.makefile("rb")
        assert self.f.readline().startswith(b"INFO "), "no INFO from nats-server"
        self.sock.sendall(b'CONNECT {"verbose":false,"pedantic":false}\r\nSUB evmon.> 1\r\nPING\r\n')
        while not self.f.readline().startswith(b"PONG"):
            pass
        self.sock.settimeout(None)
        self.payloads = []
        threading.Thread(target=self.run, daemon=True).start()

    def run(self):
        try:
            while True:
                line = self.f.readline()
                if not line:
                    return
                if line.startswith(b"PING"):
                    self.sock.sendall(b"PONG\r\n")
                elif line.startswith(b"MSG "):
                    n = int(line.split()[-1])
                    self.payloads.append(self.f.read(n + 2)[:n])
        except OSError:
            return

    def close(self):
        self.sock.close()


def scenario_flood(procs, build):
    # A server whose max_payload is smaller than every line: each line is
    # dropped and counted, and the dropped line saying so is itself too
    # large, dropped and counted, and said again: 1,356 log lines in 12 s
    # and the loss never published. Now: the dropped line is not queued
    # when it cannot fit; said once, the count logged at most every 30 s.
    # Then a max_payload between the dropped line and the event lines: the
    # loss arrives in-band in dropped lines that sum to what was made.
    for max_payload, inband in ((48, False), (128, True)):
        node = single_node(procs, f"max_payload: {max_payload}\n")
        work = nf.Workload(procs)
        evmond = nf.Evmond(procs, f"evmond-{max_payload}", build, {"events": [
            {"tracepoint": GETPPID, "filter": f"common_pid == {work.pid}"}]})
        evmond.start()
        reader = CoreReader(node.url())
        fwd = nf.forwarder(procs, build, f"forward-{max_payload}", evmond, node.url(), "flood")
        nf.wait_for("the forwarder to connect", lambda: said(fwd, "connected to evmond"), timeout=30)
        made = 3000
        start = time.monotonic()
        for _ in range(6):
            work.run(made // 6)
            time.sleep(1)
        time.sleep(6)
        secs = time.monotonic() - start
        assert fwd.poll() is None, f"the forwarder exited: {open(fwd.log).read()[-2000:]}"
        lines = open(fwd.log, errors="replace").read().splitlines()
        assert procs.stop(fwd) == 0
        for l in lines:
            log(f"  {l}")
        reader.close()
        dropped = sum(json.loads(p).get("count", 0) for p in reader.payloads
                      if b'"dropped"' in p and b'"evmon-forward"' in p)
        events = sum(1 for p in reader.payloads if json.loads(p).get("type") == "event")
        log(f"max_payload {max_payload}: {len(lines)} log lines in {secs:.0f} s, {len(reader.payloads)} messages, "
            f"{events} events, dropped {dropped} said in-band")
        assert len(lines) <= 6, f"max_payload {max_payload}: {len(lines)} log lines in {secs:.0f} s: " \
            + "\n".join(lines[:20])
        if inband:
            assert events == 0 and dropped >= made, f"made {made}, {events} events arrived, dropped lines say {dropped}"
        else:
            assert not reader.payloads, f"published {reader.payloads[:3]} over max_payload {max_payload}"
            assert said(fwd, rf"max_payload \({max_payload} bytes\) is smaller than .*dropped line"), \
                "not said that losses cannot be published"
        procs.stop(evmond.proc)
        procs.stop(work.proc)
        node.kill()


SCENARIOS = {"refused": scenario_refused, "refused-batched": scenario_refused_batched, "too-big": scenario_too_big, "hung": scenario_hung,
             "setup": scenario_setup, "auth": scenario_auth,
             "quorum": scenario_quorum, "names": scenario_names, "cut": scenario_cut,
             "nats-arg": scenario_nats_arg, "subscription": scenario_subscription,
             "overlap": scenario_overlap, "escapes": scenario_escapes,
             "flood": scenario_flood}


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("EVMON_BUILD_ROOT", ".")
    names = sys.argv[2:] or list(SCENARIOS)
    nf.require(("syscalls/sys_enter_getppid",))
    for name in names:
        procs = nf.Procs(f"nats-faults-{name}-")
        ok = False
        try:
            log(f"---- {name}")
            SCENARIOS[name](procs, build)
            ok = True
        finally:
            if not ok:
                for f in sorted(os.listdir(procs.dir)):
                    if f.endswith(".log"):
                        text = open(os.path.join(procs.dir, f), errors="replace").read()
                        print(f"---- {f} (last 3000 bytes)\n{text[-3000:]}")
            procs.cleanup()


if __name__ == "__main__":
    main()
