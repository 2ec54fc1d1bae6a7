# SPDX-License-Identifier: LGPL-2.1-or-later
"""Fixtures for evmon-forward's tests and bench: a real nats-server cluster
with JetStream on loopback ports, evmond on a socket under /tmp, forwarders
and the reader, all as child processes that stop() and cleanup() end."""

import base64
import calendar
import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

SKIP = 77


def skip(why):
    print(f"SKIP: {why}")
    sys.exit(SKIP)


def require(events=("sched/sched_process_exec",)):
    """Exits 77 with the reason when this host cannot run the tests."""
    if os.geteuid() != 0:
        skip("needs root (evmond opens tracepoints system-wide)")
    if not shutil.which("nats-server"):
        skip("nats-server is not installed (apt-get install nats-server; scripts/deps --test does)")
    for e in events:
        enable = f"/sys/kernel/tracing/events/{e}/enable"
        if not os.path.exists(enable):
            skip(f"no {e} in /sys/kernel/tracing")
        # A wedged event_mutex (an earlier oops) blocks every tracefs open.
        try:
            subprocess.run(["cat", enable], stdout=subprocess.DEVNULL, timeout=10, check=True)
        except subprocess.TimeoutExpired:
            skip(f"reading {enable} hangs: the host's tracing is wedged (see dmesg)")


def free_ports(n):
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


def wait_for(what, fn, timeout=60, every=0.2):
    """Calls FN until it returns something true; fails naming WHAT."""
    end = time.monotonic() + timeout
    while True:
        v = fn()
        if v:
            return v
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(every)


class Procs:
    """Every child process started, so that one call ends them all."""

    def __init__(self, prefix):
        self.dir = tempfile.mkdtemp(prefix=prefix, dir="/tmp")
        self.procs = []

    def start(self, name, argv, **kw):
        log = open(os.path.join(self.dir, name + ".log"), "ab")
        p = subprocess.Popen(argv, stdout=kw.pop("stdout", log), stderr=log, **kw)
        p.name = name
        p.log = os.path.join(self.dir, name + ".log")
        self.procs.append(p)
        return p

    def stop(self, p, sig=signal.SIGTERM, timeout=15):
        if p.poll() is None:
            p.send_signal(sig)
            try:
                p.wait(timeout)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        if p in self.procs:
            self.procs.remove(p)
        return p.returncode

    def cleanup(self, keep=False):
        for p in reversed(list(self.procs)):
            self.stop(p)
        if not keep:
            shutil.rmtree(self.dir, ignore_errors=True)


class Cluster:
    """N nats-server nodes with JetStream, one cluster, loopback ports kept
    across restarts (so a node comes back where the others expect it)."""

    def __init__(self, procs, n=3):
        self.procs = procs
        ports = free_ports(3 * n)
        self.client = ports[0:n]
        self.route = ports[n:2 * n]
        self.http = ports[2 * n:3 * n]
        self.nodes = [None] * n
        for i in range(n):
            routes = ", ".join(f"nats-route://127.0.0.1:{p}" for j, p in enumerate(self.route) if j != i)
            conf = os.path.join(procs.dir, f"n{i}.conf")
            with open(conf, "w") as f:
                f.write(f"""server_name: n{i}
listen: 127.0.0.1:{self.client[i]}
http: 127.0.0.1:{self.http[i]}
jetstream {{
  store_dir: "{procs.dir}/js{i}"
  max_memory_store: 256MB
  max_file_store: 2GB
}}
cluster {{
  name: evmontest
  listen: 127.0.0.1:{self.route[i]}
  routes: [{routes}]
}}
""")

    def url(self, i=None):
        if i is not None:
            return f"nats://127.0.0.1:{self.client[i]}"
        return ",".join(f"nats://127.0.0.1:{p}" for p in self.client)

    def start(self, i=None):
        for k in ([i] if i is not None else range(len(self.nodes))):
            if self.nodes[k] is None or self.nodes[k].poll() is not None:
                self.nodes[k] = self.procs.start(f"n{k}", ["nats-server", "-c", os.path.join(self.procs.dir, f"n{k}.conf")])
        for k in ([i] if i is not None else range(len(self.nodes))):
            wait_for(f"nats-server n{k} to serve", lambda: self.healthy(k), timeout=60)

    def kill(self, i=None, sig=signal.SIGKILL):
        for k in ([i] if i is not None else range(len(self.nodes))):
            if self.nodes[k] is not None:
                self.procs.stop(self.nodes[k], sig)
                self.nodes[k] = None

    def monitor(self, i, path):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.http[i]}{path}", timeout=5) as r:
            return json.load(r)

    def healthy(self, i):
        try:
            return self.monitor(i, "/healthz").get("status") == "ok"
        except Exception:
            return False

    def stream(self, name):
        """The stream's config and cluster state as one live node reports it."""
        for i, n in enumerate(self.nodes):
            if n is None:
                continue
            try:
                jsz = self.monitor(i, "/jsz?streams=true&config=true")
            except Exception:
                continue
            for acc in jsz.get("account_details", []):
                for s in acc.get("stream_detail", []):
                    if s["name"] == name:
                        return s
        return None


class Evmond:
    def __init__(self, procs, name, build, config):
        self.procs, self.name, self.build = procs, name, build
        self.socket = os.path.join(procs.dir, name + ".sock")
        self.config = os.path.join(procs.dir, name + ".json")
        config = dict(config, socket={"path": self.socket, "mode": "0660"})
        with open(self.config, "w") as f:
            json.dump(config, f)
        self.proc = None

    def start(self):
        self.proc = self.procs.start(self.name, [os.path.join(self.build, "evmond"), "--config", self.config])
        wait_for(f"{self.name} to serve {self.socket}", self.serving, timeout=30)

    def serving(self):
        if self.proc.poll() is not None:
            raise AssertionError(f"{self.name} exited with {self.proc.returncode}: {open(self.proc.log).read()}")
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect(self.socket)
            return True
        except OSError:
            return False
        finally:
            s.close()

    def stop(self):
        return self.procs.stop(self.proc)


def forward_bin(build):
    return os.path.abspath(os.path.join(build, "src/forward/evmon-forward"))


def forwarder(procs, build, name, evmond, nats, host, *args):
    return procs.start(name, [forward_bin(build), "--socket", evmond.socket, "--nats", nats, "--host", host, *args])


def reader_argv(build, nats, stream, host, events):
    argv = [forward_bin(build), "--read", "--nats", nats, "--stream", stream, "--no-follow", "--json"]
    if host:
        argv += ["--host", host]
    return argv + list(events)


def core_limit():
    resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


def check_reader(argv, cwd, returncode, stderr):
    """A reader that did not exit 0 fails the test; one killed by a signal
    with its core's backtrace, when gdb is there."""
    if returncode < 0 and os.path.exists(os.path.join(cwd, "core")) and shutil.which("gdb"):
        bt = subprocess.run(["gdb", "-q", "-batch", "-ex", "thread apply all bt 12", argv[0], os.path.join(cwd, "core")],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT).stdout.decode(errors="replace")
        print(f"---- reader core backtrace\n{bt}", flush=True)
    shutil.rmtree(cwd, ignore_errors=True)
    if returncode != 0:
        raise AssertionError(f"{' '.join(argv)} exited with {returncode}: {stderr.decode(errors='replace')}")


def read_stream(build, nats, stream, host=None, events=(), timeout=120):
    """Every line of STREAM (for HOST and EVENTS), parsed, up to now."""
    argv = reader_argv(build, nats, stream, host, events)
    cwd = tempfile.mkdtemp(prefix="nats-reader-", dir="/tmp")
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen(argv, stdout=out, stderr=err, cwd=cwd, preexec_fn=core_limit)
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            # Where it waits, and what it said, before it goes.
            bt = subprocess.run(["gdb", "-q", "-batch", "-p", str(p.pid), "-ex", "thread apply all bt 12"],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT).stdout.decode(errors="replace") \
                if shutil.which("gdb") else ""
            p.kill()
            p.wait()
            out.seek(0)
            err.seek(0)
            raise AssertionError(f"{' '.join(argv)} did not finish in {timeout} s, after {sum(1 for _ in out)} lines; "
                                 f"it said: {err.read().decode(errors='replace')}\n{bt}")
        err.seek(0)
        check_reader(argv, cwd, p.returncode, err.read())
        out.seek(0)
        return [json.loads(l) for l in out.read().splitlines() if l.strip()]


def read_stream_stopped(build, nats, stream, host, events, after):
    """A reader of STREAM stopped by SIGTERM AFTER seconds, while the
    server still pushes lines to it: it must exit 0. Returns how many
    lines it had printed."""
    argv = reader_argv(build, nats, stream, host, events)
    cwd = tempfile.mkdtemp(prefix="nats-reader-", dir="/tmp")
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen(argv, stdout=out, stderr=err, cwd=cwd, preexec_fn=core_limit)
        time.sleep(after)
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            raise AssertionError(f"{' '.join(argv)} did not stop within 30 s of SIGTERM")
        err.seek(0)
        check_reader(argv, cwd, p.returncode, err.read())
        out.seek(0)
        return sum(1 for _ in out)


def js_publish(url, subject, msg_id, payload, timeout=10):
    """Publishes PAYLOAD (bytes) on SUBJECT with a Nats-Msg-Id header by
    NATS' text protocol (HPUB), as a JetStream client does, and returns
    the stream's acknowledgement, parsed ({"stream":…,"seq":N} with
    "duplicate":true when the id was stored already)."""
    host, port = url.split(",")[0].removeprefix("nats://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=timeout) as s:
        f = s.makefile("rb")
        assert f.readline().startswith(b"INFO "), "no INFO from nats-server"
        hdr = f"NATS/1.0\r\nNats-Msg-Id: {msg_id}\r\n\r\n".encode()
        s.sendall(b'CONNECT {"verbose":false,"pedantic":false,"headers":true,"no_responders":true}\r\n'
                  b"SUB _INBOX.evmontest 1\r\n"
                  + f"HPUB {subject} _INBOX.evmontest {len(hdr)} {len(hdr) + len(payload)}\r\n".encode()
                  + hdr + payload + b"\r\nPING\r\n")
        while True:
            line = f.readline()
            if not line:
                raise AssertionError("nats-server closed the connection before the acknowledgement")
            if line.startswith(b"PING"):
                s.sendall(b"PONG\r\n")
            elif line.startswith(b"-ERR"):
                raise AssertionError(f"nats-server: {line.decode().strip()}")
            elif line.startswith(b"MSG "):
                n = int(line.split()[-1])
                return json.loads(f.read(n + 2)[:n])
            elif line.startswith(b"HMSG "):
                n = int(line.split()[-1])
                raise AssertionError(f"no acknowledgement: {f.read(n + 2)[:n]!r}")


class JsApi:
    """One connection for JetStream API requests by NATS' text protocol
    (the bench's direct gets: what a stream holds, line by line)."""

    def __init__(self, url, timeout=10):
        host, port = url.split(",")[0].removeprefix("nats://").rsplit(":", 1)
        self.s = socket.create_connection((host, int(port)), timeout=timeout)
        self.f = self.s.makefile("rb")
        assert self.f.readline().startswith(b"INFO "), "no INFO from nats-server"
        self.s.sendall(b'CONNECT {"verbose":false,"pedantic":false,"headers":true,"no_responders":true}\r\n'
                       b"SUB _INBOX.evmonapi 1\r\n")

    def request(self, subject, payload):
        """The reply to PAYLOAD (a dict) on SUBJECT, parsed."""
        data = json.dumps(payload).encode()
        self.s.sendall(f"PUB {subject} _INBOX.evmonapi {len(data)}\r\n".encode() + data + b"\r\n")
        while True:
            line = self.f.readline()
            if not line:
                raise AssertionError("nats-server closed the connection")
            if line.startswith(b"PING"):
                self.s.sendall(b"PONG\r\n")
            elif line.startswith(b"-ERR"):
                raise AssertionError(f"nats-server: {line.decode().strip()}")
            elif line.startswith((b"MSG ", b"HMSG ")):
                n = int(line.split()[-1])
                body = self.f.read(n + 2)[:n]
                if line.startswith(b"HMSG "):
                    body = body[int(line.split()[-2]):]
                return json.loads(body) if body else {}

    def stored(self, stream, **which):
        """The stored message WHICH names (seq=N or last_by_subj=SUBJECT):
        (Nats-Msg-Id, its lines, the time it was stored in ns), or None."""
        m = self.request(f"$JS.API.STREAM.MSG.GET.{stream}", which).get("message")
        if not m:
            return None
        hdrs = base64.b64decode(m.get("hdrs", "")).decode(errors="replace")
        msg_id = next((h.split(":", 1)[1].strip() for h in hdrs.split("\r\n") if h.startswith("Nats-Msg-Id:")), "")
        lines = [json.loads(l) for l in base64.b64decode(m.get("data", "")).splitlines() if l.strip()]
        return msg_id, lines, rfc3339_ns(m["time"])

    def close(self):
        self.s.close()


def rfc3339_ns(t):
    """2026-11-28T01:02:03.123456789Z (or +00:00) as ns since the epoch."""
    t = t.replace("+00:00", "Z").rstrip("Z")
    sec, _, frac = t.partition(".")
    return calendar.timegm(time.strptime(sec, "%Y-%m-%dT%H:%M:%S")) * 10**9 + int((frac + "000000000")[:9])


class Workload:
    """A child that makes N getppid calls when told (paced in batches so the
    kernel's rings keep up), and the pid evmond's filter names."""

    CODE = r"""
import os, sys, time
chunk = int(sys.argv[1])
for line in sys.stdin:
    n = int(line)
    while n > 0:
        k = min(n, chunk)
        for _ in range(k):
            os.getppid()
        n -= k
        time.sleep(0.005)
    print("done", flush=True)
"""

    def __init__(self, procs, chunk=500):
        """CHUNK calls, then 5 ms of sleep."""
        self.proc = procs.start("workload", [sys.executable, "-c", self.CODE, str(chunk)], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE)
        self.pid = self.proc.pid

    def run(self, n, wait=True):
        self.proc.stdin.write(f"{n}\n".encode())
        self.proc.stdin.flush()
        if wait:
            self.wait()

    def wait(self):
        assert self.proc.stdout.readline().strip() == b"done"
