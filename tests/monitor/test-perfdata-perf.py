#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The perf.data reader against the installed perf, on files perf records
now: for each file, every record type's count equals what `perf script -D`
shows, and the samples agree with `perf script` line for line (time, cpu,
pid, tid, ip, addr, period, callchain addresses, tracepoint fields, page
sizes, a group's members). Then the same files cut short and bit-flipped:
never a crash or a hang, the records before the damage, then -EBADMSG.

And evmonctl decode on the same files: the header line is the reader's
header, one line per record (--all), standard input reads as the file.

Usage: test-perfdata-perf.py PERFDATA_DUMP EVMONCTL  (root and perf, else 77)
"""

import json
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile

DUMP = sys.argv[1]
EVMONCTL = sys.argv[2] if len(sys.argv) > 2 else None
SWAP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "perfdata-swap.py")
EBADMSG = -74
# perf's callchain context markers (uapi PERF_CONTEXT_*) are >= -4095.
CONTEXT_MAX = (1 << 64) - 4095
CONTEXT_KERNEL = (1 << 64) - 128
CONTEXT_USER = (1 << 64) - 512
CONTEXT_HV = (1 << 64) - 32

BUSY = "i=0; while [ $i -lt 40000 ]; do i=$((i+1)); done"
LS = "ls / >/dev/null; true"

# name: (perf record options, workload, perf script -F fields, how)
FILES = {
    "tracepoints": (["-e", "sched:sched_process_exec", "-e", "sched:sched_process_fork",
                     "-e", "sched:sched_process_exit"], LS,
                    "event,pid,tid,cpu,time,period,ip,trace", ""),
    "callchain": (["-g", "-e", "cpu-clock", "-c", "200000"], BUSY + "; " + LS,
                  "pid,tid,time,period,ip", ""),
    "dwarf": (["--call-graph", "dwarf,4096", "-e", "cpu-clock", "-c", "400000"], BUSY,
              "pid,tid,time,period,ip", "dwarf"),
    "cpu-clock": (["-a", "-e", "cpu-clock", "-F", "997"], "sleep 0.2",
                  "pid,tid,cpu,time,period,ip", ""),
    "switches": (["--switch-events", "--namespaces", "--all-cgroups", "-e", "cpu-clock",
                  "-c", "200000"], BUSY + "; " + LS, "pid,tid,time,period,ip", ""),
    "pagesizes": (["-d", "--phys-data", "--data-page-size", "--code-page-size",
                   "-e", "cpu-clock", "-c", "200000"], BUSY,
                  "pid,tid,time,period,addr,ip,phys_addr,data_page_size,code_page_size", ""),
    "group": (["-e", "{cpu-clock,task-clock}:S", "-c", "200000"], BUSY,
              "event,pid,tid,time,period,ip", "group"),
    "realtime": (["-k", "CLOCK_REALTIME", "--sample-identifier", "-e", "cpu-clock", "-c", "200000"],
                 BUSY, "pid,tid,time,period,ip", ""),
    "pipe": (["-e", "cpu-clock", "-c", "200000", "-g"], BUSY, "pid,tid,time,period,ip", "pipe"),
    "compressed": (["-z", "-e", "cpu-clock", "-c", "100000", "-g"], BUSY + "; " + LS,
                   "pid,tid,time,period,ip", ""),
    # perf stat record: STAT_CONFIG, STAT, STAT_ROUND, no samples.
    "stat": (["-e", "cpu-clock,task-clock"], LS, "", "stat"),
    "compressed-tracepoints": (["-z", "-e", "sched:sched_process_exec", "-e", "sched:sched_process_exit"],
                               LS + "; " + LS, "event,pid,tid,cpu,time,period,ip,trace", ""),
    # Events whose sample_id trailers differ (a tracepoint's has CPU,
    # cpu-clock's without -a not): perf's synthesized records (id 0) are
    # laid out by the first event's.
    "mixed": (["-e", "sched:sched_process_exec", "-e", "cpu-clock", "-c", "200000"], BUSY + "; " + LS,
              "event,pid,tid,time,period,ip", ""),
    "mixed-pipe": (["-e", "sched:sched_process_exec", "-e", "cpu-clock", "-c", "200000", "-g"], BUSY + "; " + LS,
                   "event,pid,tid,time,period,ip", "pipe"),
    # A directory: "data" (header, synthesized records; HEADER_DIR_FORMAT)
    # and the samples in data.N, one file per writer thread.
    "threads": (["--threads", "-a", "-e", "cpu-clock", "-c", "200000"], BUSY + "; " + LS,
                "pid,tid,cpu,time,period,ip", "threads"),
    # Each writer thread compresses with its own zstd stream.
    "threads-compressed": (["--threads", "-z", "-a", "-e", "cpu-clock", "-c", "100000", "-g"], BUSY + "; " + LS,
                           "pid,tid,cpu,time,period,ip", "threads"),
}

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg, flush=True)


def skip(why):
    print("SKIP: " + why)
    sys.exit(77)


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, timeout=120, **kw)


def dump(path, order="time", stdin=None):
    argv = [DUMP, "--order", order, path]
    p = subprocess.run(argv, capture_output=True, timeout=60, stdin=stdin)
    if p.returncode not in (0, 1):
        return None, "perfdata-dump exited %d: %s" % (p.returncode, p.stderr.decode(errors="replace"))
    lines = [json.loads(l) for l in p.stdout.decode().splitlines()]
    return lines, None


def perf_counts(path):
    out = run(["perf", "script", "-D", "-i", path]).stdout.decode(errors="replace")
    counts = {}
    for m in re.finditer(r"\]: PERF_RECORD_([A-Z0-9_]+)", out):
        name = m.group(1)
        if name.startswith("STAT_ROUND"):
            name = "STAT_ROUND"         # perf -D runs the stat table header on
        counts[name] = counts.get(name, 0) + 1
    return counts


def perf_lines(path, fields):
    """perf script's samples: (head tokens, callchain frames) each."""
    out = run(["perf", "script", "--ns", "-F", fields, "-i", path]).stdout.decode(errors="replace")
    samples = []
    for line in out.splitlines():
        if not line.strip():
            continue
        if line.startswith("\t"):
            samples[-1][1].append(line.split()[0])
            continue
        samples.append((line.split(), []))
    return samples


def page_size(v):
    if v == 0:
        return "N/A"
    for unit, n in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if v % n == 0:
            return "%d%s" % (v // n, unit)
    return str(v)


def norm_trace(tok):
    """perf prints a tracepoint field as name=value; we give the value."""
    if "=" in tok:
        tok = tok.split("=", 1)[1]
    return {"true": "1", "false": "0"}.get(tok, tok)


def expect(s, fields, how, ev_by_id, prev, periods):
    """perf script's lines for our sample S: [(head tokens, frames)]."""
    def head(event, period):
        # The kernel's u32 pid/tid; perf prints them signed (-1: the
        # task was exiting, perf_event_pid_type()).
        t = ["%d/%d" % tuple(v - (1 << 32) if v >= 1 << 31 else v for v in (s["pid"], s["tid"]))]
        if "cpu" in fields.split(","):
            t.append("[%03d]" % s["cpu"])
        t.append("%d.%09d:" % (s["time"] // 10**9, s["time"] % 10**9))
        t.append(str(period))
        if "event" in fields.split(","):
            t.append(event + ":")
        if "trace" in fields.split(","):
            t += s.get("fields", [])
        if "addr" in fields.split(","):
            t.append(s["addr"].lstrip("0") or "0")
        return t

    chain = [int(x, 16) for x in s.get("callchain", [])]
    frames = ["%x" % a for a in chain if a < CONTEXT_MAX]
    # perf 6.1 knows the hv, kernel and user markers only: at another it
    # drops the whole chain (util/machine.c: "invalid callchain context"),
    # which this kernel sometimes ends a user chain with (-5).
    if any(a >= CONTEXT_MAX and a not in (CONTEXT_HV, CONTEXT_KERNEL, CONTEXT_USER) for a in chain):
        frames = []
    tail = []
    if not chain:
        tail = [s["ip"]]
    if "phys_addr" in fields:
        tail += [s["phys_addr"], page_size(s["data_page_size"]), page_size(s["code_page_size"])]

    if how == "group":
        lines = []
        for sid, value in s["read"]:
            period = value - prev.get(sid, 0)
            prev[sid] = value
            lines.append((head(ev_by_id[sid], period) + tail, frames))
        return lines
    # Without PERF_SAMPLE_PERIOD (perf record -c N) perf shows the attr's.
    return [(head(s["event"], s.get("period", periods.get(s["event"], 0))) + tail, frames)]


def same_frames(ours, theirs):
    """Kernel addresses as they are; perf shows a user frame it has a map
    for relative to that map (ip - start + pgoff), which keeps the offset
    within the page."""
    if len(ours) != len(theirs):
        return False
    for a, b in zip(ours, theirs):
        a, b = int(a, 16), int(b, 16)
        if a >= 0xffff800000000000:
            if a != b:
                return False
        elif (a - b) % 4096 != 0:
            return False
    return True


def compare(name, path, fields, how):
    lines, err = dump(path)
    if err:
        return fail("%s: %s" % (name, err))
    if "open" in lines[0]:
        return fail("%s: the reader did not open it: %d" % (name, lines[0]["open"]))
    end = lines[-1]
    if end["end"] != 0:
        fail("%s: reading ended with %d at %d" % (name, end["end"], end["offset"]))
    ours = lines[-2]["counts"]
    # COMPRESSED records are containers: perf -D shows what they hold.
    theirs = perf_counts(path)
    if ours != theirs:
        fail("%s: record counts %s, perf script -D: %s" % (name, ours, theirs))
    ev_by_id = {i: e["name"] for e in lines[1]["events"] for i in e["ids"]}
    periods = {e["name"]: e["period"] for e in lines[1]["events"]}
    prev = {}
    want = []
    for l in lines:
        if "sample" in l:
            want += expect(l["sample"], fields, how, ev_by_id, prev, periods)
    got = perf_lines(path, fields) if fields else []
    if len(got) != len(want):
        fail("%s: %d sample lines, perf script printed %d" % (name, len(want), len(got)))
    for i, ((wt, wf), (gt, gf)) in enumerate(zip(want, got)):
        gt = [norm_trace(t) for t in gt]
        if "trace" in fields:
            wt = [norm_trace(t) for t in wt]
        if how == "dwarf":
            # perf unwinds the user stack itself: our frames (what the
            # kernel wrote, or the ip) lead its list.
            if not wf:
                wf, wt = [wt[-1]], wt[:-1]
            ok = wt == gt and len(gf) >= len(wf) and same_frames(wf, gf[:len(wf)])
        else:
            ok = wt == gt and same_frames(wf, gf)
        if not ok:
            fail("%s: sample line %d: ours %s %s, perf script %s %s" % (name, i, wt, wf, gt, gf))
            break
    print("%s: %d records (%s), %d sample lines checked against perf script" %
          (name, sum(ours.values()), ", ".join("%s %d" % kv for kv in sorted(ours.items())), len(got)),
          flush=True)
    return lines


def orders(name, path):
    """file, causal and time order hold the same records; time order is
    perf's; causal order never goes back in time within a round."""
    base, _ = dump(path, "file")
    for order in ("causal", "time"):
        other, err = dump(path, order)
        if err:
            return fail("%s: %s" % (name, err))
        if other[-2] != base[-2]:
            fail("%s: %s order counts %s, file order %s" % (name, order, other[-2], base[-2]))
        a = sorted(json.dumps(l, sort_keys=True) for l in base if "sample" in l)
        b = sorted(json.dumps(l, sort_keys=True) for l in other if "sample" in l)
        if a != b:
            fail("%s: %s order has other samples than file order" % (name, order))


def big_endian(name, path, how):
    """A big-endian copy made by perfdata-swap.py reads to the same lines
    (header but its byte order, events, samples, counts); perf script
    reads it as it reads the original, which checks the tool."""
    be = path + ".be"
    p = run([sys.executable, SWAP, path, be])
    if p.returncode != 0:
        return fail("%s: perfdata-swap.py failed: %s" % (name, p.stderr.decode(errors="replace")[-300:]))
    a, err = dump(path)
    b, err2 = dump(be)
    if err or err2:
        return fail("%s big-endian: %s" % (name, err or err2))
    if b[0]["header"]["byte_order"] != "big" or a[0]["header"]["byte_order"] != "little":
        fail("%s: byte orders %s and %s" % (name, a[0]["header"]["byte_order"], b[0]["header"]["byte_order"]))
    b[0]["header"]["byte_order"] = "little"
    if "tracing_data" in b[0]["header"]["features"]:
        b[0]["header"]["features"]["tracing_data"]["big_endian"] = False
    if a != b:
        diff = next(i for i, (x, y) in enumerate(zip(a, b)) if x != y) if len(a) == len(b) else "count"
        fail("%s: the big-endian copy reads differently (line %s)" % (name, diff))
    if how != "dwarf":
        # perf unwinds a dwarf stack from its raw bytes, which a real
        # big-endian machine would have written big-endian: not comparable.
        # (perf names an anonymous executable map after /tmp/perf-PID.map
        # only when the file is of its own byte order.)
        x = run(["perf", "script", "-i", path]).stdout.replace(b"/tmp/perf-", b"//anon-")
        y = run(["perf", "script", "-i", be]).stdout.replace(b"/tmp/perf-", b"//anon-")
        x = re.sub(rb"//anon-\d+\.map", b"//anon", x)
        y = re.sub(rb"//anon-\d+\.map", b"//anon", y)
        if x != y:
            fail("%s: perf script reads the big-endian copy differently: the swap tool is wrong" % name)
    print("%s: big-endian copy reads to the same %d lines" % (name, len(a)), flush=True)
    os.unlink(be)


def ranges(nums):
    out, start = [], None
    for i, n in enumerate(nums):
        if start is None:
            start = n
        if i + 1 == len(nums) or nums[i + 1] != n + 1:
            out.append(str(start) if start == n else "%d-%d" % (start, n))
            start = None
    return ",".join(out)


def header_check(name, path, h):
    """The header's sections against perf report --header-only -I."""
    out = run(["perf", "report", "--header-only", "-I", "-i", path]).stdout.decode(errors="replace")
    f = h["features"]
    want = {}
    simple = {"hostname": "hostname", "os release": "osrelease", "perf version": "version",
              "arch": "arch", "cpudesc": "cpudesc", "cpuid": "cpuid"}
    for label, key in simple.items():
        if key in f:
            want[label] = f[key]["value"]
    if "nrcpus" in f:
        want["nrcpus online"] = str(f["nrcpus"]["online"])
        want["nrcpus avail"] = str(f["nrcpus"]["available"])
    if "total_mem" in f:
        want["total memory"] = "%d kB" % f["total_mem"]["kb"]
    if "cmdline" in f:
        want["cmdline"] = " ".join(f["cmdline"]["args"])
    got = {}
    lists = {"event": [], "sibling sockets": [], "sibling threads": [], "sibling dies": [], "CPU": [],
             "node": []}
    for line in out.splitlines():
        m = re.match(r"# ([a-z ]+?)\s*: (.*)$", line)
        if m and m.group(1) in lists:
            lists[m.group(1)].append(m.group(2).strip())
        elif m:
            got[m.group(1)] = m.group(2).rstrip()
        m = re.match(r"# (CPU \d+: .*)$", line)
        if m:
            lists["CPU"].append(m.group(1))
        m = re.match(r"# (node\d+ (meminfo|cpu list)\s*: .*)$", line)
        if m:
            lists["node"].append(re.sub(r"\s+", " ", m.group(1)))
    for label, value in want.items():
        if got.get(label) != value:
            fail("%s header: %s is %r, perf report says %r" % (name, label, value, got.get(label)))
    if "event_desc" in f:
        ours = ["name = %s, , id = { %s }" % (e["name"], ", ".join(map(str, e["ids"])))
                for e in f["event_desc"]["events"]]
        theirs = [", ".join(e.split(", ")[:3]).rstrip(",") for e in lists["event"]]
        theirs = [re.sub(r"(id = \{[^}]*\}).*", r"\1", e) for e in lists["event"]]
        if ours != theirs:
            fail("%s header: events %s, perf report %s" % (name, ours, theirs))
    if "cpu_topology" in f:
        t = f["cpu_topology"]
        if t["core_siblings"] != lists["sibling sockets"] or t["thread_siblings"] != lists["sibling threads"] \
                or t.get("die_siblings", []) != lists["sibling dies"]:
            fail("%s header: cpu topology %s, perf report %s" % (name, t, lists))
        cpus = ["CPU %d: Core ID %d, Die ID %d, Socket ID %d" % (c["cpu"], c["core_id"], c.get("die_id", -1),
                                                               c["socket_id"]) for c in t.get("cpus", [])]
        if cpus != lists["CPU"]:
            fail("%s header: cpus %s, perf report %s" % (name, cpus, lists["CPU"]))
    if "numa_topology" in f:
        nodes = []
        for n in f["numa_topology"]["nodes"]:
            nodes.append("node%d meminfo : total = %d kB, free = %d kB" % (n["node"], n["mem_total_kb"],
                                                                        n["mem_free_kb"]))
            nodes.append("node%d cpu list : %s" % (n["node"], n["cpus"]))
        if nodes != lists["node"]:
            fail("%s header: numa %s, perf report %s" % (name, nodes, lists["node"]))
    if "pmu_mappings" in f:
        pm = ", ".join("%s = %d" % (p["name"], p["type"]) for p in f["pmu_mappings"]["pmus"])
        m = re.search(r"# pmu mappings: (.*)", out)
        if not m or m.group(1).strip() != pm:
            fail("%s header: pmu mappings %r, perf report %r" % (name, pm, m and m.group(1)))
    if "sample_time" in f:
        for key, label in (("first", "time of first sample"), ("last", "time of last sample")):
            v = f["sample_time"][key]
            if got.get(label) != "%d.%06d" % (v // 10**9, v % 10**9 // 1000):
                fail("%s header: %s %d, perf report %r" % (name, label, v, got.get(label)))
    if "mem_topology" in f:
        mt = f["mem_topology"]
        m = re.search(r"# memory nodes \(nr (\d+), block size (0x[0-9a-f]+)\):\n((?:#\s+\d+ .*\n)*)", out)
        blocks = [ranges([b for r in n["blocks"] for b in range(r[0], r[1] + 1)]) for n in mt["nodes"]]
        theirs = re.findall(r": (\S+)\n", m.group(3)) if m else None
        if not m or int(m.group(1)) != len(mt["nodes"]) or int(m.group(2), 16) != mt["block_size"] \
                or theirs != blocks:
            fail("%s header: memory nodes %s, perf report %r" % (name, mt, m and m.group(0)))
    if "compressed" in f:
        c = f["compressed"]
        want_c = "%s, level = %d, ratio = %d" % ("Zstd" if c["compression"] == 1 else "Unknown", c["level"],
                                                 c["ratio"])
        if got.get("compressed") != want_c:
            fail("%s header: compressed %r, perf report %r" % (name, want_c, got.get("compressed")))
    if "clock_data" in f:
        m = re.search(r"# clockid: \S+ \((\d+)\)", out)
        if not m or int(m.group(1)) != f["clock_data"]["clockid"]:
            fail("%s header: clockid %s, perf report %r" % (name, f["clock_data"], m and m.group(0)))
    m = re.search(r"# missing features: (.*)", out)
    for feat in (m.group(1).split() if m else []):
        if feat.lower() in f:
            fail("%s header: perf report says %s is missing, we have it" % (name, feat))
    print("%s: header agrees with perf report --header-only -I (%s)" % (name, ", ".join(sorted(f))), flush=True)


def evmonctl(name, path, lines, stdin=False):
    """evmonctl decode --all: the header line first (the reader's header),
    then a line per record perf -D counts (COMPRESSED ones hold them)."""
    argv = [EVMONCTL, "decode", "--all", "-" if stdin else path]
    with open(path if stdin else os.devnull, "rb") as f:
        p = subprocess.run(argv, capture_output=True, timeout=120, stdin=f)
    if p.returncode != 0:
        return fail("%s: evmonctl decode exited %d: %s" % (name, p.returncode, p.stderr.decode(errors="replace")))
    out = [json.loads(l) for l in p.stdout.decode().splitlines()]
    head = dict(out[0])
    if head.pop("type") != "header" or head != lines[0]["header"]:
        fail("%s: evmonctl decode's header line is not the reader's header" % name)
    n = sum(v for k, v in lines[-2]["counts"].items())
    if len(out) - 1 != n:
        fail("%s: evmonctl decode --all wrote %d record lines for %d records" % (name, len(out) - 1, n))
    samples = sum(1 for o in out if o["type"] == "event")
    if samples != lines[-2]["counts"].get("SAMPLE", 0):
        fail("%s: %d event lines for %d samples" % (name, samples, lines[-2]["counts"].get("SAMPLE", 0)))
    # Each event line's task as perf prints it: signed (-1 past its exit).
    signed = lambda v: v - (1 << 32) if v >= 1 << 31 else v
    for o, s in zip((o for o in out if o["type"] == "event"), (l["sample"] for l in lines if "sample" in l)):
        if "pid" in o and (o["ts"], o["pid"], o["tid"]) != (s["time"], signed(s["pid"]), signed(s["tid"])):
            fail("%s: event line %s at %d, the sample is %d/%d at %d" % (name, (o["pid"], o["tid"]), o["ts"],
                                                                        s["pid"], s["tid"], s["time"]))
            break
    return out


def perf_task_records(path):
    """perf script's COMM, FORK, EXIT, MMAP and MMAP2 lines, as tuples of
    what they print (util/event.c perf_event__fprintf_*)."""
    out = run(["perf", "script", "-i", path, "--show-task-events", "--show-mmap-events",
               "-F", "pid"]).stdout.decode(errors="surrogateescape")
    recs = []
    for line in out.splitlines():
        m = re.search(r"PERF_RECORD_(COMM|FORK|EXIT|MMAP2?)(.*)$", line)
        if not m:
            continue
        kind, rest = m.groups()
        if kind == "COMM":
            c = re.match(r"( exec)?: (.*):(-?\d+)/(-?\d+)$", rest)
            recs.append(("comm", c.group(2), int(c.group(3)), int(c.group(4)), bool(c.group(1))))
        elif kind in ("FORK", "EXIT"):
            c = re.match(r"\((-?\d+):(-?\d+)\):\((-?\d+):(-?\d+)\)", rest)
            recs.append((kind.lower(),) + tuple(int(x) for x in c.groups()))
        else:
            c = re.match(r" (-?\d+)/(-?\d+): \[(0x[0-9a-f]+)\((0x[0-9a-f]+)\) @ (0x[0-9a-f]+|0)[^\]]*\]: \S+ (.*)$",
                         rest)
            recs.append((kind.lower(), int(c.group(1)), int(c.group(2)), int(c.group(3), 16),
                         int(c.group(4), 16), int(c.group(5), 16), c.group(6)))
    return recs


def task_records(name, path, out):
    """evmonctl decode --all's comm, fork, exit, mmap and mmap2 lines hold
    what perf script prints of them, in perf's order (pids signed: the
    kernel's maps are -1's)."""
    ours = []
    for o in out:
        if o["type"] != "record" or o["record"] not in ("comm", "fork", "exit", "mmap", "mmap2"):
            continue
        f = o["fields"]
        if o["record"] == "comm":
            ours.append(("comm", f["comm"], f["pid"], f["tid"], f["exec"]))
        elif o["record"] in ("fork", "exit"):
            ours.append((o["record"], f["pid"], f["tid"], f["ppid"], f["ptid"]))
        else:
            ours.append((o["record"], f["pid"], f["tid"], int(f["addr"], 16), f["len"], f["pgoff"],
                         f["filename"]))
    theirs = perf_task_records(path)
    if len(ours) != len(theirs):
        return fail("%s: %d comm/fork/exit/mmap records, perf script shows %d" % (name, len(ours), len(theirs)))
    for i, (a, b) in enumerate(zip(ours, theirs)):
        if a != b:
            return fail("%s: task/map record %d: ours %s, perf script %s" % (name, i, a, b))
    print("%s: %d comm/fork/exit/mmap records agree with perf script" % (name, len(ours)), flush=True)


def damage(name, path, rnd):
    """Cut short and bit-flipped copies: an answer, never a crash or a hang;
    a cut file gives a prefix of the file-order samples, then -EBADMSG."""
    data = open(path, "rb").read()
    full, _ = dump(path, "file")
    # A cut in the feature sections loses the event names and formats
    # (they are features): compare what the records themselves hold.
    def bare(lines):
        out = []
        for l in lines:
            if "sample" in l:
                s = dict(l["sample"])
                s.pop("event", None)
                s.pop("fields", None)
                out.append(s)
        return out
    full_samples = bare(full)
    copy = path + ".damaged"
    for n in sorted(rnd.sample(range(1, len(data)), min(20, len(data) - 1))):
        with open(copy, "wb") as f:
            f.write(data[:n])
        for order in ("file", "time"):
            lines, err = dump(copy, order)
            if err:
                return fail("%s cut at %d (%s order): %s" % (name, n, order, err))
            if "open" in lines[0]:
                if lines[0]["open"] != EBADMSG:
                    fail("%s cut at %d: open gave %d" % (name, n, lines[0]["open"]))
                continue
            # A stream cut right between two records just ends there.
            pipe_end = lines[-1]["end"] == 0 and lines[-1]["offset"] == n and name == "pipe"
            if (lines[-1]["end"] != EBADMSG and not pipe_end) or lines[-1]["offset"] > n:
                fail("%s cut at %d (%s order): ended %s" % (name, n, order, lines[-1]))
            s = bare(lines)
            if order == "file" and s != full_samples[:len(s)]:
                fail("%s cut at %d: samples are not those before the cut" % (name, n))
            if order == "time" and not all(x in full_samples for x in s):
                fail("%s cut at %d (time order): a sample the whole file lacks" % (name, n))
    for _ in range(30):
        b = bytearray(data)
        for _ in range(rnd.randint(1, 3)):
            pos = rnd.randrange(len(b))
            b[pos] ^= 1 << rnd.randrange(8)
        with open(copy, "wb") as f:
            f.write(b)
        for order in ("file", "time", "causal"):
            try:
                lines, err = dump(copy, order)
            except subprocess.TimeoutExpired:
                return fail("%s: a bit-flipped copy hangs the reader (%s order)" % (name, order))
            if err:
                return fail("%s bit-flipped: %s" % (name, err))
            if "open" not in lines[0] and lines[-1]["end"] not in (0, EBADMSG, -95):
                fail("%s bit-flipped: ended %s" % (name, lines[-1]))
        # evmonctl decode --all encodes every record it is handed: an id
        # that names no event must not reach the encoder unparsed.
        q = subprocess.run([EVMONCTL, "decode", "--all", copy], capture_output=True, timeout=60)
        err = q.stderr.decode(errors="replace")
        if q.returncode not in (0, 1) or "runtime error" in err or "Sanitizer" in err:
            return fail("%s bit-flipped: evmonctl decode --all exited %d: %s" % (name, q.returncode, err[-500:]))
    os.unlink(copy)


def threads(name, path, lines):
    """The directory read whole, also when its data file is named; that
    file on standard input is refused (its data.N files are elsewhere),
    never read as if it held every record."""
    files = sorted(f for f in os.listdir(path) if f.startswith("data."))
    if not files or not lines or not lines[-2]["counts"].get("SAMPLE"):
        return fail("%s: perf wrote no data.N file (%s) or no sample was read" % (name, files))
    inner, err = dump(os.path.join(path, "data"))
    if err or inner != lines:
        fail("%s: reading %s/data gives other lines than reading the directory" % (name, path))
    # A directory of links to them (as perf, which stat()s each).
    links = path + ".links"
    os.mkdir(links)
    for f in ["data"] + files:
        os.symlink(os.path.join(path, f), os.path.join(links, f))
    linked, err = dump(links)
    if err or linked != lines:
        fail("%s: a directory of symlinks to its files reads differently" % name)
    # A FIFO (and a link to a device) planted as data.N in a directory
    # anyone may write: refused at once, naming it (open() waited for a
    # writer for good).
    for kind in ("fifo", "device"):
        planted = path + "." + kind
        shutil.copytree(path, planted, symlinks=True)
        bad = os.path.join(planted, "data.%d" % (len(files) + 7))
        if kind == "fifo":
            os.mkfifo(bad)
        else:
            os.symlink("/dev/zero", bad)
        try:
            p = subprocess.run([EVMONCTL, "decode", planted], capture_output=True, timeout=10)
        except subprocess.TimeoutExpired:
            fail("%s: evmonctl decode hangs on a %s named %s" % (name, kind, os.path.basename(bad)))
            continue
        err = p.stderr.decode(errors="replace")
        if p.returncode != 1 or bad + " is not a regular file" not in err:
            fail("%s: a %s as %s: status %d, %s" % (name, kind, bad, p.returncode, err.strip()))
        shutil.rmtree(planted)
    with open(os.path.join(path, "data"), "rb") as f:
        p = subprocess.run([EVMONCTL, "decode", "-"], capture_output=True, timeout=60, stdin=f)
    err = p.stderr.decode(errors="replace")
    if p.returncode != 1 or b'"type":"event"' in p.stdout or "--threads" not in err:
        fail("%s: evmonctl decode - of the data file: status %d, %s" % (name, p.returncode, err.strip()))
    print("%s: %s and its data file read alike (%d samples); on standard input refused" %
          (path, ", ".join(files), lines[-2]["counts"]["SAMPLE"]), flush=True)


def tie(name, path, fields, how):
    """Two samples of one time in two data.N files go out in perf
    script's order: perf reads the files in readdir() order and gives
    records of one time in the order it read them. A copy of the
    directory with one sample's time set to another file's."""
    copy = path + ".tie"
    shutil.copytree(path, copy)
    files = [f for f in os.listdir(copy) if f.startswith("data.")]
    blobs = {f: bytearray(open(os.path.join(copy, f), "rb").read()) for f in files}
    where = {}
    for head, _ in perf_lines(path, "time"):
        sec, ns = head[0].rstrip(":").split(".")
        t = struct.pack("<Q", int(sec) * 1000000000 + int(ns))
        hits = [f for f in files if blobs[f].count(t) == 1]
        if len(hits) == 1 and sum(blobs[f].count(t) for f in files) == 1:
            where.setdefault(hits[0], t)
    if len(where) < 2:
        print("%s: no two data.N files with samples to tie" % name, flush=True)
        shutil.rmtree(copy)
        return
    a, b = sorted(where)[:2]
    i = blobs[b].index(where[b])
    blobs[b][i:i + 8] = where[a]
    with open(os.path.join(copy, b), "wb") as f:
        f.write(blobs[b])
    compare(name + " with a tie across " + a + " and " + b, copy, fields, how)
    shutil.rmtree(copy)


def killed(tmp):
    """perf record killed (SIGKILL) leaves a data size of 0 and no feature
    sections; its records are there up to the end of the file. perf script
    shows none of them; evmonctl decode gives them, then the error."""
    import time
    path = os.path.join(tmp, "killed.data")
    p = subprocess.Popen(["perf", "record", "-q", "-o", path, "-a", "-e", "cpu-clock", "-c", "100000", "--",
                          "sleep", "30"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and (not os.path.exists(path) or os.path.getsize(path) < 256 << 10):
        time.sleep(0.05)
    p.kill()
    p.wait()
    with open(path, "rb") as f:
        f.seek(48)
        data_size = int.from_bytes(f.read(8), "little")
    if data_size != 0 or os.path.getsize(path) < 256 << 10:
        return fail("killed: perf wrote %d bytes, data size %d: not what a killed perf record leaves" %
                    (os.path.getsize(path), data_size))
    q = subprocess.run([EVMONCTL, "decode", path], capture_output=True, timeout=60)
    events = [json.loads(l) for l in q.stdout.decode().splitlines()[1:]]
    err = q.stderr.decode(errors="replace")
    if q.returncode != 1 or "truncated" not in err or len(events) < 100 or \
            any(e["type"] != "event" or e["event"] != "event0" for e in events):
        return fail("killed: evmonctl decode status %d, %d lines, %s" % (q.returncode, len(events), err.strip()))
    ts = [e["ts"] for e in events]
    if ts != sorted(ts):
        fail("killed: the samples are not in time order")
    print("killed: %d bytes, data size 0: %d samples, then %s" % (os.path.getsize(path), len(events),
                                                                 err.strip().splitlines()[-1]), flush=True)


def main():
    if os.geteuid() != 0:
        skip("perf record of tracepoints and system-wide needs root")
    if not shutil.which("perf") or run(["perf", "--version"]).returncode != 0:
        skip("perf is not installed (linux-perf)")
    if not os.path.exists("/sys/kernel/tracing/events/sched/sched_process_exec"):
        skip("no tracefs with sched tracepoints")
    tmp = tempfile.mkdtemp(prefix="evmon-perfdata-")
    rnd = random.Random(13)
    try:
        for name, (opts, work, fields, how) in FILES.items():
            path = os.path.join(tmp, name + ".data")
            if how == "pipe":
                with open(path, "wb") as f:
                    p = subprocess.run(["perf", "record", "-q", "-o", "-"] + opts + ["--", "sh", "-c", work],
                                       stdout=f, stderr=subprocess.PIPE, timeout=120)
            elif how == "stat":
                p = run(["perf", "stat", "record", "-o", path] + opts + ["--", "sh", "-c", work])
            else:
                p = run(["perf", "record", "-q", "-o", path] + opts + ["--", "sh", "-c", work])
            if p.returncode != 0:
                fail("%s: perf record %s failed: %s" % (name, " ".join(opts), p.stderr.decode(errors="replace")))
                continue
            lines = compare(name, path, fields, how)
            if lines:
                header_check(name, path, lines[0]["header"])
                out = evmonctl(name, path, lines)
                if out and how != "stat":
                    task_records(name, path, out)
                if how == "pipe" and out and evmonctl(name, path, lines, stdin=True) != out:
                    fail("pipe: evmonctl decode - reads standard input other than the file")
                if how == "threads":
                    threads(name, path, lines)
                if name == "threads":
                    tie(name, path, fields, how)
            if lines:
                orders(name, path)
            if how == "pipe":
                # The same stream on standard input.
                with open(path, "rb") as f:
                    a, err = dump("-", stdin=f)
                b, _ = dump(path)
                if err or a != b:
                    fail("pipe: reading standard input gives other lines than reading the file")
            if how not in ("pipe", "stat", "threads") and not name.startswith("compressed"):
                big_endian(name, path, how)
            if name in ("tracepoints", "pipe", "compressed", "group", "mixed"):
                damage(name, path, rnd)
        killed(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("%d failed" % len(failures))
        sys.exit(1)
    print("all perf.data checks passed")


main()
