#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""evmonctl top driven under tmux (send-keys, capture-pane).

  test-top.py BUILD_DIR real    against a real evmond: a test program
                                making getppid calls under a chosen comm
                                is on top; s changes the sort, k the key,
                                q quits (exit 0). Root, tracefs, tmux and
                                an evmond that aggregates, else 77.
  test-top.py BUILD_DIR ui      against a stand-in for evmond on a socket
                                (hello, aggregating, an aggregate line a
                                second, as doc/protocol.md has them): the
                                table, each key (s, tab, e, k, q), a comm
                                with ESC escaped, a resize. tmux, else 77.
"""

import ctypes
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from termfix import Tmux as TmuxServer, log, skip, wait_for  # noqa: E402

BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
MODE = sys.argv[2] if len(sys.argv) > 2 else "real"
EVMOND = os.path.join(BUILD, "evmond")
EVMONCTL = os.path.join(BUILD, "evmonctl")
TRACEFS = "/sys/kernel/tracing"


class Tmux(TmuxServer):
    def __init__(self):
        super().__init__(f"evmon-top-{os.getpid()}")

    def start(self, command, x=120, y=20):
        self.run("new-session", "-d", "-x", str(x), "-y", str(y), f"{command}; echo exit=$?; sleep 60")

    def screen(self):
        return self.run("capture-pane", "-p", check=False).stdout

    def keys(self, *keys):
        self.run("send-keys", *keys)


def rows(screen):
    """The table's rows: (key, rate, count, total, share) below the line."""
    lines = screen.splitlines()
    out = []
    for l in lines[3:]:
        m = re.match(r" (.*?) +(\S+) +(\d+) +(\d+) +([\d.]+)%$", l)
        if m:
            out.append(m.groups())
    return out


def status(screen):
    return screen.splitlines()[0] if screen else ""


def drive(tmux, top_key, first_by_key):
    """The keys every mode checks; TOP_KEY is on top by rate,
    FIRST_BY_KEY above it by key (other programs may come between)."""
    wait_for(f"{top_key} on top", lambda: (lambda r: r and r[0][0] == top_key)(rows(tmux.screen())), timeout=15)
    screen = tmux.screen()
    assert "sort rate [s]" in status(screen), status(screen)
    assert re.match(r"^ COMM +RATE/s +COUNT +TOTAL +SHARE$", screen.splitlines()[1]), screen.splitlines()[1]
    log(f"top: {top_key!r} on top by rate: {rows(screen)[0]}")
    # s: total, then key (alphabetical), tab: back to rate.
    tmux.keys("s")
    wait_for("sort total", lambda: "sort total [s]" in status(tmux.screen()))
    r = rows(tmux.screen())
    assert [int(x[3]) for x in r] == sorted((int(x[3]) for x in r), reverse=True), r
    tmux.keys("s")
    wait_for("sort key", lambda: "sort key [s]" in status(tmux.screen()))
    r = rows(tmux.screen())
    assert [x[0] for x in r] == sorted(x[0] for x in r), r
    keys = [x[0] for x in r]
    assert first_by_key in keys and keys.index(first_by_key) < keys.index(top_key), r
    log(f"top: s sorts by total, then by key: {[x[0] for x in r][:5]}")
    tmux.keys("Tab")
    wait_for("sort rate", lambda: "sort rate [s]" in status(tmux.screen()))
    # k: by pid, asked anew.
    tmux.keys("k")
    wait_for("by pid", lambda: "by pid [k]" in status(tmux.screen()) and rows(tmux.screen()))
    assert re.match(r"^ PID ", tmux.screen().splitlines()[1])
    assert all(x[0].isdigit() for x in rows(tmux.screen())), rows(tmux.screen())
    log(f"top: k shows the counts by pid: {rows(tmux.screen())[0]}")
    tmux.keys("q")
    wait_for("exit 0", lambda: "exit=0" in tmux.screen(), timeout=5)
    log("top: q quits, exit 0")


def test_real():
    if os.geteuid() != 0:
        skip("needs root (evmond opens tracepoints system-wide)")
    if not shutil.which("tmux"):
        skip("tmux is not installed (apt-get install tmux; scripts/deps --test does)")
    if not os.path.isdir(os.path.join(TRACEFS, "events/syscalls/sys_enter_getppid")):
        skip(f"no syscalls/sys_enter_getppid in {TRACEFS}")
    d = tempfile.mkdtemp(prefix="evmon-top-")
    sock = os.path.join(d, "sock")
    with open(os.path.join(d, "cfg.json"), "w") as f:
        f.write('{"socket":{"path":"%s"},"metrics":{"path":""},"events":['
                '{"tracepoint":"syscalls:sys_enter_getppid"}]}' % sock)
    daemon = subprocess.Popen([EVMOND, "-c", os.path.join(d, "cfg.json")], stderr=open(os.path.join(d, "log"), "w"))
    tmux = Tmux()
    children = []
    try:
        wait_for("evmond's socket", lambda: os.path.exists(sock))
        # Does this evmond aggregate? An evmond without it names the
        # request an unknown message type.
        c = socket.socket(socket.AF_UNIX)
        c.connect(sock)
        c.sendall(b'{"type":"aggregate","events":["*"],"by":["comm"],"value":{"op":"count"},"interval_ms":1000}\n')
        f = c.makefile()
        answer = ""
        for _ in range(5):
            answer = f.readline()
            if '"aggregating"' in answer or '"error"' in answer:
                break
        c.close()
        if "unknown message type" in answer:
            skip(f"this evmond does not aggregate: {answer.strip()}")
        assert '"aggregating"' in answer, answer

        # The test program: getppid calls as fast as it can, as evtopper;
        # beside it aaslow, 100 a second: below it by rate, above it by
        # key.
        for comm, burst, pause in ((b"evtopper", 1000, 0), (b"aaslow", 10, 0.1)):
            pid = os.fork()
            if pid == 0:
                libc = ctypes.CDLL(None)
                libc.prctl(15, ctypes.c_char_p(comm), 0, 0, 0)
                end = time.monotonic() + 60
                while time.monotonic() < end:
                    for _ in range(burst):
                        libc.syscall(110)
                    time.sleep(pause)
                os._exit(0)
            children.append(pid)
        tmux.start(f"{EVMONCTL} --socket {sock} top syscalls:sys_enter_getppid")
        wait_for("aaslow in the table", lambda: any(r[0] == "aaslow" for r in rows(tmux.screen())))
        drive(tmux, "evtopper", "aaslow")
    except BaseException:
        print("---- screen\n" + tmux.screen())
        with open(os.path.join(d, "log")) as f:
            print("---- evmond's stderr\n" + f.read()[-3000:])
        raise
    finally:
        for pid in children:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        tmux.kill()
        daemon.send_signal(signal.SIGTERM)
        try:
            daemon.wait(10)
        except subprocess.TimeoutExpired:
            daemon.kill()
        shutil.rmtree(d, ignore_errors=True)


class StandIn:
    """evmond as top sees it: hello, then per aggregate request its
    answer and a line a second, counts by the request's first key and
    event; records each request."""

    COMMS = ["bash", "evtopper", "sshd", "a\x1b[31mred"]

    def __init__(self, path):
        self.requests = []
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.bind(path)
        self.sock.listen()
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(c,), daemon=True).start()

    def serve(self, c):
        try:
            c.sendall(b'{"type":"hello","version":1,"events":["syscalls:sys_enter_getppid"]}\n')
            req = json.loads(c.makefile().readline())
            self.requests.append(req)
            c.sendall((json.dumps({"type": "aggregating", "events": ["syscalls:sys_enter_getppid"],
                                   "by": req["by"], "value": req["value"],
                                   "interval_ms": req["interval_ms"]}) + "\n").encode())
            key = req["by"][0]
            for w in range(1, 120):
                time.sleep(req["interval_ms"] / 1000)
                entries = []
                for i, comm in enumerate(self.COMMS):
                    for ev in ("syscalls:sys_enter_getppid", "syscalls:sys_enter_openat"):
                        k = {key: 100 + i if key == "pid" else comm, "event": ev}
                        # evtopper grows each window: on top by rate,
                        # bash by total until it passes it.
                        n = 5000 * w if comm == "evtopper" else (30000 if comm == "bash" and w == 1 else 100 * (i + 1))
                        entries.append({"key": k, "count": n})
                c.sendall((json.dumps({"type": "aggregate", "ts": w * 10**9, "start_ts": (w - 1) * 10**9,
                                       "interval_ms": req["interval_ms"], "by": req["by"], "op": "count",
                                       "events": 1, "lost": 0, "keys_dropped": 0,
                                       "entries": entries}) + "\n").encode())
        except OSError:
            pass
        finally:
            c.close()


def test_ui():
    if not shutil.which("tmux"):
        skip("tmux is not installed (apt-get install tmux; scripts/deps --test does)")
    d = tempfile.mkdtemp(prefix="evmon-top-ui-")
    sock = os.path.join(d, "sock")
    standin = StandIn(sock)
    tmux = Tmux()
    try:
        tmux.start(f"{EVMONCTL} --socket {sock} top --interval 0.5")
        wait_for("the first table", lambda: rows(tmux.screen()))
        assert standin.requests[0]["type"] == "aggregate" and standin.requests[0]["by"] == ["comm", "event"], \
            standin.requests
        assert standin.requests[0]["interval_ms"] == 500 and standin.requests[0]["events"] == ["*"], standin.requests
        # A comm holding ESC: escaped on the screen, and no red on it.
        assert any(x[0] == "a\\x1b[31mred" for x in rows(tmux.screen())), tmux.screen()
        colored = tmux.run("capture-pane", "-p", "-e").stdout
        assert "\x1b[31m" not in colored, "the comm's ESC reached the terminal"
        # Drawn with ACS lines (tmux shows them as U+2500), no mouse.
        assert "\u2500" * 20 in tmux.screen().splitlines()[2], tmux.screen()
        # e: one event, then all again.
        tmux.keys("e")
        wait_for("one event", lambda: "event syscalls:sys_enter_getppid [e]" in status(tmux.screen()))
        tmux.keys("e", "e")
        wait_for("all events", lambda: "event all [e]" in status(tmux.screen()))
        log("top: e shows one event, then the next, then all")
        # A resize: the table redrawn to the new width.
        tmux.run("resize-window", "-x", "70", "-y", "10")
        wait_for("the narrower table", lambda: all(len(l) <= 70 for l in tmux.screen().splitlines())
                 and rows(tmux.screen()))
        # Narrower than a row: each line cut at the edge, none wrapped
        # onto the next (the header stays on its line, the rule on its).
        tmux.run("resize-window", "-x", "40", "-y", "8")
        wait_for("the 40-column table", lambda: (lambda l: len(l) >= 4 and all(len(x) <= 40 for x in l)
                                                 and l[1].startswith(" COMM ") and l[2] == "\u2500" * 40
                                                 and l[0].startswith(" evmon top"))(tmux.screen().splitlines()))
        tmux.run("resize-window", "-x", "120", "-y", "20")
        log("top: redrawn at 70x10 and 40x8, each line cut at the edge")
        drive(tmux, "evtopper", "a\\x1b[31mred")
        assert standin.requests[-1]["by"] == ["pid", "event"], standin.requests[-1]
    except BaseException:
        print("---- screen\n" + tmux.screen())
        raise
    finally:
        tmux.kill()
        standin.sock.close()
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    {"real": test_real, "ui": test_ui}[MODE]()
