#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""evmonctl record against perf itself (issue 29, "perf.data out").

A real evmond serves a tracepoint (sched:sched_process_exec), a uprobe the
PMU makes (no fetch-args: evmond gives perf its format) and a uprobe
tracefs makes (fetch-args: its own format file) on evmon-probe-target.
`evmonctl watch --json`, `evmonctl record -o FILE` (rewritten as a
file-mode perf.data at the end) and `evmonctl record -o -` (the pipe-mode
stream as it comes) subscribe,
the program runs, and then:
  - perf script (a Python script through perf's own decoder) gives every
    sample of the program's pids with the same event, pid, tid, cpu,
    time and fields as evmond's JSON lines: same count, same values;
  - perf script -F prints one line per sample, named by the program's
    comm (the context's COMM records go on the stream);
  - perf report --stdio runs on the file and counts the samples;
  - evmonctl decode reads it and gives the same samples again.
Root, perf, tracefs and uprobes, else 77 with the reason.

    test-record.py EVMOND EVMONCTL PROBE_TARGET
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

K = 5


def skip(why):
    print("SKIP: " + why)
    sys.exit(77)


def fail(why):
    print("FAIL: " + why)
    sys.exit(1)


PERF_SCRIPT = r'''
import json, sys

def _val(v):
    if isinstance(v, (bytes, bytearray)):
        return v.decode("utf-8", "replace")
    return v

def trace_unhandled(event_name, context, fields, sample):
    s = sample["sample"]
    out = {"event": event_name, "pid": s["pid"], "tid": s["tid"], "cpu": s["cpu"], "ts": s["time"],
           "fields": {k: _val(v) for k, v in fields.items() if not k.startswith("common_")}}
    print("REC " + json.dumps(out, sort_keys=True))
'''


def short(name):
    """The event's own name: sched:sched_process_exec and
    sched__sched_process_exec alike give sched_process_exec."""
    for sep in (":", "__"):
        if sep in name:
            name = name.split(sep)[-1]
    return name


def norm(v):
    if isinstance(v, str):
        if v.startswith("0x"):
            try:
                return int(v, 16)
            except ValueError:
                pass
        return v.rstrip("\0")
    if isinstance(v, int) and v < 0:
        return v
    return v


def key(r):
    fields = tuple(sorted((k, norm(v)) for k, v in r["fields"].items()))
    return (short(r["event"]), r["pid"], r["tid"], r["cpu"], r["ts"], fields)


def main():
    if len(sys.argv) != 4:
        fail("usage: test-record.py EVMOND EVMONCTL PROBE_TARGET")
    evmond, evmonctl, target = (os.path.abspath(a) for a in sys.argv[1:])
    if os.geteuid() != 0:
        skip("needs root (perf_event_open of tracepoints and uprobes)")
    perf = shutil.which("perf")
    if not perf:
        skip("needs perf (Debian: linux-perf)")
    if subprocess.run([perf, "version", "--build-options"], capture_output=True, text=True).stdout.find(
            "HAVE_LIBPYTHON_SUPPORT") < 0:
        skip("perf without Python scripting (perf script -s)")
    for d in ("/sys/kernel/tracing", "/sys/kernel/debug/tracing"):
        if os.path.exists(os.path.join(d, "events/sched/sched_process_exec/format")):
            break
    else:
        skip("no tracefs with sched:sched_process_exec")

    tmp = tempfile.mkdtemp(prefix="evmon-record-")
    sock = os.path.join(tmp, "evmond.sock")
    cfg = {
        "socket": {"path": sock, "mode": "0600"},
        "metrics": {"path": os.path.join(tmp, "metrics.prom")},
        "events": [
            {"tracepoint": "sched:sched_process_exec"},
            {"uprobe": target + ":evmon_probe_target", "name": "rec_pmu"},
            {"uprobe": target + ":evmon_probe_target", "name": "rec_args", "fetch": ["n=%si:s64"]},
        ],
    }
    with open(os.path.join(tmp, "evmond.json"), "w") as f:
        json.dump(cfg, f)
    env = dict(os.environ, EVMON_SOCKET=sock)
    procs = []
    try:
        d = subprocess.Popen([evmond, "--config", os.path.join(tmp, "evmond.json")],
                             stderr=open(os.path.join(tmp, "evmond.log"), "w"))
        procs.append(d)
        for _ in range(200):
            if os.path.exists(sock) or d.poll() is not None:
                break
            time.sleep(0.05)
        if not os.path.exists(sock):
            log = open(os.path.join(tmp, "evmond.log")).read()
            if "uprobe" in log and ("not supported" in log or "No such file" in log):
                skip("uprobes unavailable: " + log.strip()[-300:])
            fail("evmond did not start: " + log)

        events = ["sched:sched_process_exec", "uprobe:rec_pmu", "uprobe:rec_args"]
        data = os.path.join(tmp, "evmon.data")
        watch_out = open(os.path.join(tmp, "watch.jsonl"), "w")
        watch = subprocess.Popen([evmonctl, "watch", "--json"] + events, stdout=watch_out, env=env)
        procs.append(watch)
        rec = subprocess.Popen([evmonctl, "record", "-o", data] + events, env=env)
        procs.append(rec)
        # And the stream as it comes, through a pipe (-o -): pipe mode.
        piped = os.path.join(tmp, "evmon-pipe.data")
        rec2 = subprocess.Popen([evmonctl, "record", "-o", "-"] + events, env=env, stdout=open(piped, "wb"))
        procs.append(rec2)
        # Both subscribed: watch printed its subscribed line, record wrote
        # the head of the stream.
        for _ in range(200):
            ok_w = any('"subscribed"' in l for l in open(os.path.join(tmp, "watch.jsonl")))
            if ok_w and os.path.exists(data) and os.path.getsize(data) > 16 and os.path.getsize(piped) > 16:
                break
            time.sleep(0.05)
        else:
            fail("evmonctl watch or record did not subscribe")

        t = subprocess.Popen([target, str(K)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        ready = t.stdout.readline().split()
        tpid = int(ready[1])
        t.stdin.write("go\n")
        t.stdin.flush()
        t.wait(timeout=30)
        # exec of a program of ours too
        true = subprocess.Popen(["/bin/true"])
        true.wait()
        pids = {tpid, true.pid}
        time.sleep(1.5)
        rec.send_signal(signal.SIGINT)
        rec2.send_signal(signal.SIGINT)
        watch.send_signal(signal.SIGTERM)
        if rec.wait(timeout=10) != 0 or rec2.wait(timeout=10) != 0:
            fail("evmonctl record exited %d, record -o - %d" % (rec.returncode, rec2.returncode))
        watch.wait(timeout=10)
        watch_out.close()

        mine = []
        for l in open(os.path.join(tmp, "watch.jsonl")):
            o = json.loads(l)
            if o.get("type") == "event" and o.get("pid") in pids:
                mine.append(o)
        by_event = {}
        for o in mine:
            by_event[short(o["event"])] = by_event.get(short(o["event"]), 0) + 1
        want = {"sched_process_exec": 2, "rec_pmu": K, "rec_args": K}
        if by_event != want:
            fail("evmond's own lines: %r, want %r" % (by_event, want))

        script = os.path.join(tmp, "fields.py")
        with open(script, "w") as f:
            f.write(PERF_SCRIPT)
        p = subprocess.run([perf, "script", "-i", data, "-s", script], capture_output=True, text=True)
        if p.returncode != 0:
            fail("perf script -s: %d %s" % (p.returncode, p.stderr))
        theirs = [json.loads(l[4:]) for l in p.stdout.splitlines() if l.startswith("REC ")]
        theirs = [r for r in theirs if r["pid"] in pids]
        a = sorted(key(o) for o in mine)
        b = sorted(key(r) for r in theirs)
        if a != b:
            fail("perf script's samples differ from evmond's lines:\n evmond %r\n perf   %r" % (a, b))
        print("perf script: %d samples equal evmond's lines (event, pid, tid, cpu, time, fields)" % len(a))
        with open(piped, "rb") as f:
            if f.read(8) != b"PERFILE2" or f.read(8) != (16).to_bytes(8, "little"):
                fail("evmonctl record -o - wrote no pipe-mode header")
        p = subprocess.run([perf, "script", "-i", "-", "-s", script], stdin=open(piped, "rb"), capture_output=True,
                           text=True)
        theirs = [json.loads(l[4:]) for l in p.stdout.splitlines() if l.startswith("REC ")]
        b2 = sorted(key(r) for r in theirs if r["pid"] in pids)
        if p.returncode != 0 or b2 != a:
            fail("perf script -i - on evmonctl record -o -: rc %d\n evmond %r\n perf   %r\n%s" %
                 (p.returncode, a, b2, p.stderr))
        print("perf script -i - (pipe mode, record -o -): the same %d samples" % len(b2))

        p = subprocess.run([perf, "script", "-i", data, "-F", "trace:comm,pid,tid,cpu,time,event,trace"],
                           capture_output=True, text=True)
        # "COMM PID/TID [CPU] TIME: EVENT: FIELDS"; COMM from the context's
        # COMM records, which evmond passes on.
        lines = [l for l in p.stdout.splitlines() if len(l.split()) > 1 and l.split()[1].split("/")[0].isdigit()
                 and int(l.split()[1].split("/")[0]) in pids]
        for l in lines:
            if "rec_" in l and not l.split()[0] == os.path.basename(target)[:15]:
                fail("perf script does not name the program: " + l)
        if p.returncode != 0 or len(lines) != len(a):
            fail("perf script -F: rc %d, %d lines of ours, want %d\n%s" % (p.returncode, len(lines), len(a),
                                                                           p.stderr))
        for l in lines:
            if ("rec_args" in l and "n=" not in l) or ("sched_process_exec" in l and "filename=" not in l):
                fail("perf script -F shows no fields: " + l)

        p = subprocess.run([perf, "report", "--stdio", "-i", data, "--sort", "pid"], capture_output=True,
                           text=True)
        if p.returncode != 0 or "# Samples:" not in p.stdout:
            fail("perf report --stdio: %d\n%s%s" % (p.returncode, p.stdout[-2000:], p.stderr[-2000:]))
        print("perf report --stdio: " + " ".join(l for l in p.stdout.splitlines() if l.startswith("# Samples")))

        p = subprocess.run([evmonctl, "decode", data], capture_output=True, text=True)
        if p.returncode != 0:
            fail("evmonctl decode: %d %s" % (p.returncode, p.stderr))
        dec = [json.loads(l) for l in p.stdout.splitlines()]
        # evmonctl record rewrote the stream as a file-mode perf.data.
        if dec[0].get("type") != "header" or dec[0].get("pipe") is not False:
            fail("evmonctl decode: no file-mode header line: %r" % dec[0])
        dmine = [o for o in dec if o.get("type") == "event" and o.get("pid") in pids]
        c = sorted(key(o) for o in dmine)
        # The PMU's probe is a trace event of evmond's naming in the
        # file; the rest is the same.
        if c != a:
            fail("evmonctl decode's samples differ from evmond's lines:\n evmond %r\n decode %r" % (a, c))
        print("evmonctl decode: the same %d samples" % len(c))

        # -o through a link or at a FIFO someone placed where root
        # writes: refused, the link's target untouched.
        victim = os.path.join(tmp, "victim")
        with open(victim, "w") as f:
            f.write("precious")
        link = os.path.join(tmp, "link.data")
        os.symlink(victim, link)
        fifo = os.path.join(tmp, "fifo.data")
        os.mkfifo(fifo)
        for path, word in ((link, "symbolic link"), (fifo, "FIFO")):
            p = subprocess.run([evmonctl, "record", "-o", path, "--seconds", "1"] + events, env=env,
                               capture_output=True, text=True, timeout=30)
            if p.returncode == 0 or word not in p.stderr:
                fail("evmonctl record -o %s: rc %d, %r" % (word, p.returncode, p.stderr))
        if open(victim).read() != "precious":
            fail("evmonctl record -o wrote through a link")
        print("evmonctl record -o refuses a link and a FIFO")
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
        if os.environ.get("EVMON_KEEP_TMP"):
            print("kept " + tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
