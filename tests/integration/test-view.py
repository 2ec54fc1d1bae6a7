#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""evmonctl's terminal view on a real terminal (tmux) against a real
evmond: `watch` shows comm[pid] of a test program, its callchain one
frame a line, indented, a comm holding ESC escaped (the terminal obeys no
sequence in it), colour on the terminal and none with NO_COLOR; `status`
as text. Root, tracefs with syscalls:sys_enter_getpgid, and tmux, else 77.

Usage: test-view.py BUILD_DIR"""

import ctypes
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from termfix import Tmux as TmuxServer, log, skip, wait_for  # noqa: E402

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
EVMOND = os.path.join(BUILD, "evmond")
EVMONCTL = os.path.join(BUILD, "evmonctl")
TRACEFS = "/sys/kernel/tracing"


def require():
    if os.geteuid() != 0:
        skip("needs root (evmond opens tracepoints system-wide)")
    if not shutil.which("tmux"):
        skip("tmux is not installed (apt-get install tmux; scripts/deps --test does)")
    if not os.path.isdir(os.path.join(TRACEFS, "events/syscalls/sys_enter_getpgid")):
        skip(f"no syscalls/sys_enter_getpgid in {TRACEFS}")


def calls(comm, n=20):
    """A child named COMM (prctl PR_SET_NAME, any bytes) that makes N
    getpgid(2000000123) calls, one every 20 ms (the config's filter takes
    those alone: other programs' calls would scroll them away); its pid."""
    pid = os.fork()
    if pid == 0:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(15, ctypes.c_char_p(comm), 0, 0, 0)      # PR_SET_NAME
            for _ in range(n):
                libc.syscall(121, 2000000123)       # getpgid, straight to the kernel
                time.sleep(0.02)
        finally:
            os._exit(0)
    return pid


class Tmux(TmuxServer):
    """A window per command, 200x50, its history kept (the cpu-clock pane
    scrolls)."""

    def window(self, title, command, env=()):
        argv = ["new-window", "-d", "-n", title] if self.started else ["new-session", "-d", "-x", "200", "-y", "50",
                                                                      "-n", title]
        # The pane's shell gets the environment a person's has: TERM from
        # tmux; NO_COLOR only where the test sets it.
        cmd = "env -u NO_COLOR " + " ".join(f"{k}={v}" for k, v in env) + " " + command + "; sleep 60"
        self.run(*argv, cmd)
        self.started = True

    started = False

    def capture(self, title, escapes=False):
        """The pane's text (with its SGR attributes as sequences)."""
        return self.run("capture-pane", "-p", "-J", "-S", "-5000", *(("-e",) if escapes else ()), "-t",
                        f":={title}", check=False).stdout


def main():
    require()
    d = tempfile.mkdtemp(prefix="evmon-view-")
    sock = os.path.join(d, "sock")
    with open(os.path.join(d, "cfg.json"), "w") as f:
        f.write('{"socket":{"path":"%s"},"metrics":{"path":""},"counters":{"interval_ms":500},"events":['
                '{"tracepoint":"syscalls:sys_enter_getpgid","filter":"pid >= 2000000000 && pid < 2000001000"},'
                '{"software":"cpu-clock","freq":50,"sample":["ip","callchain"],"symbols":true},'
                '{"software":"context-switches","count":true}]}' % sock)
    daemon = subprocess.Popen([EVMOND, "-c", os.path.join(d, "cfg.json")], stderr=open(os.path.join(d, "log"), "w"))
    tmux = Tmux(f"evmon-view-{os.getpid()}")
    try:
        wait_for("evmond's socket", lambda: os.path.exists(sock))
        ctl = os.path.abspath(EVMONCTL)
        watch = f"{ctl} --socket {sock} watch syscalls:sys_enter_getpgid"
        tmux.window("watch", watch)
        tmux.window("plain", watch, env=(("NO_COLOR", "1"),))
        tmux.window("counters", f"{ctl} --socket {sock} watch software:context-switches")
        tmux.window("stack", f"{ctl} --socket {sock} watch software:cpu-clock")
        time.sleep(1)

        # 1. comm[pid] of the test program, in colour.
        pid = calls(b"evview")
        wait_for("the test program's getpgid in the watch pane",
                 lambda: f"evview[{pid}] syscalls:sys_enter_getpgid" in tmux.capture("watch"))
        os.waitpid(pid, 0)
        text = tmux.capture("watch")
        line = next(l for l in text.splitlines() if f"evview[{pid}] syscalls:sys_enter_getpgid" in l)
        assert re.match(r"\d\d:\d\d:\d\d\.\d{6} cpu\d+ evview\[%d\] syscalls:sys_enter_getpgid __syscall_nr=121 pid=2000000123$" % pid,
                        line), line
        colored = tmux.capture("watch", escapes=True)
        assert "\x1b[" in colored, "no colour on the terminal"
        log(f"watch: {line!r}, coloured")

        # 1b. A callchain: a frame a line, indented below its event, the
        # program's own functions named (it keeps frame pointers).
        child = subprocess.Popen([os.path.join(BUILD, "tests/integration/evmon-context-child"), "busy", "1500"])
        child.wait(10)
        text = tmux.capture("stack")
        lines = text.splitlines()
        found = None
        for i, l in enumerate(lines):
            if f"[{child.pid}] software:cpu-clock" not in l:
                continue
            frames = []
            for f in lines[i + 1:]:
                if not f.startswith("        "):
                    break
                frames.append(f)
            if any("evctx_busy_inner" in f for f in frames):
                found = (l, frames)
                break
        assert found, f"no cpu-clock sample of the busy child with evctx_busy_inner in its frames:\n{text[-4000:]}"
        l, frames = found
        assert re.match(r"\d\d:\d\d:\d\d\.\d{6} cpu\d+ evmon-context-c\[%d\] software:cpu-clock ip=0x[0-9a-f]+$"
                        % child.pid, l), l
        assert all(re.match(r" {8}[ 0-9a-f]{16}( \S.*)?$", f) for f in frames), frames
        assert any(re.match(r" +[0-9a-f]+ evctx_busy_outer\+0x[0-9a-f]+ \(.*evmon-context-child\)$", f) for f in frames), frames
        log(f"watch of cpu-clock: {l!r} with {len(frames)} frames below it: {[f.strip() for f in frames[:3]]}")

        # 2. A comm holding ESC [ 3 1 m: shown escaped, and the terminal
        # turned nothing red.
        pid = calls(b"ev\x1b[31mred")
        want = f"ev\\x1b[31mred[{pid}]"
        wait_for("the escaped comm", lambda: want in tmux.capture("watch"))
        os.waitpid(pid, 0)
        colored = tmux.capture("watch", escapes=True)
        assert "\x1b[31m" not in colored and "\x1b[0;31m" not in colored, "the comm's ESC reached the terminal"
        log(f"watch: the comm ev ESC [31mred shows as {want!r}, nothing red")

        # 3. NO_COLOR: the same lines, no SGR at all.
        wait_for("the plain pane's event", lambda: want in tmux.capture("plain"))
        plain = tmux.capture("plain", escapes=True)
        assert "\x1b[" not in plain, f"colour with NO_COLOR: {plain!r}"
        assert f"evview[" in plain
        log("watch with NO_COLOR=1: the same lines, no SGR sequence")

        # 4. A counter as a table row: header, event, value, delta, rate.
        wait_for("two counter rows", lambda: tmux.capture("counters").count("software:context-switches") >= 2)
        text = tmux.capture("counters")
        assert re.search(r"^TIME +EVENT +VALUE +DELTA +RATE/s +RUN%$", text, re.M), text
        rows = [l for l in text.splitlines() if "software:context-switches" in l]
        assert all(re.match(r"\d\d:\d\d:\d\d\.\d{6} software:context-switches +\d+ +\d+ +\S+ +(100\.0%|-)$", r)
                   for r in rows), rows
        assert re.search(r"\d(\.\d+)?[KM]? +100\.0%$", rows[1]), rows[1]
        log(f"watch of a counter: {rows[1]!r}")

        # 5. status as text on the terminal.
        tmux.window("status", f"{ctl} --socket {sock} status")
        text = wait_for("status", lambda: (lambda t: t if "clients:" in t else None)(tmux.capture("status")))
        assert re.search(r"^events:$", text, re.M) and re.search(r"^  event +count", text, re.M), text
        assert "syscalls:sys_enter_getpgid" in text and not text.lstrip().startswith("{"), text
        log("status: text with an events table")

        # 6. list: each name with its kind, as perf list shows them.
        tmux.window("list", f"{ctl} list")
        text = wait_for("list", lambda: (lambda t: t if "[Kernel PMU event]" in t or "[Hardware cache event]" in t
                                         else None)(tmux.capture("list")))
        assert re.search(r"^  sched:sched_switch +\[Tracepoint event\]$", text, re.M), text[-2000:]
        assert re.search(r"^  software:cpu-clock +\[Software event\]$", text, re.M), text[-2000:]
        log("list: names with their kinds")
    except BaseException:
        with open(os.path.join(d, "log")) as f:
            print("---- evmond's stderr\n" + f.read()[-3000:])
        for w in ("watch", "plain", "counters", "stack", "status", "list"):
            print(f"---- pane {w}\n" + tmux.capture(w)[-3000:])
        raise
    finally:
        tmux.kill()
        daemon.send_signal(signal.SIGTERM)
        try:
            daemon.wait(10)
        except subprocess.TimeoutExpired:
            daemon.kill()
        shutil.rmtree(d, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
