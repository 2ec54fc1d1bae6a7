#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""evmonctl decode - reads pipe-mode perf.data as it arrives.

live: perf record --no-buffering -o - -e sched:sched_process_exec -a --
   sleep 6 | evmonctl decode -: the line of an exec made 1.5 s in comes
   out within 2 s of the exec, while perf still runs (it came when perf
   exited: everything was read before the first line).
zeros: 400 MB of zeros on standard input: exit 1 at once, naming
   "PERFILE2", having read less than 1 MiB, with a maximum RSS under
   32 MiB (it read all 400 MB first: 411 MB RSS). The same after a valid
   pipe header.
same: a pipe-mode file through a pipe gives the lines reading it by
   name gives, in each order.
header: a pipe stream whose header (perf's records before the first
   kernel record) is over 128 KiB (2,000 attrs, 288 KB) gives its 2,000
   events (it stopped as "damaged or truncated" at byte 131,056: a
   window filled to its end read 0 bytes, taken as the end).
attrs: a pipe stream of 32,000 HEADER_ATTR records (4.6 MB, one id
   each) is decoded within 10 s (each attr sorted every id so far
   again: 37 s here; the 64 MiB a header may hold, ~466,000 attrs,
   would take hours), and with an EVENT_UPDATE after each attr alike.
formats: 30,000 tracepoint attrs and 30,000 formats in the tracing data
   (7.9 MB) are decoded within 10 s (each attr looked through every
   format: 8.4 s here, the 64 MiB a header may hold about 9 minutes).
terminal: decode on a terminal writes no C1 control: a crafted COMM
   record whose comm holds U+009B (CSI) and U+009D (OSC), valid UTF-8
   that the JSON passes raw, comes out as \u009b and \u009d (it went
   out raw, as "watch --json" on a terminal does not).

Usage: test-decode-stream.py EVMONCTL  (root, perf and the sched
tracepoints for live and same, else those skip; 77 when none ran)."""

import os
import resource
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time

EVMONCTL = sys.argv[1]
failures = []
ran = []


def fail(msg):
    print("FAIL: " + msg, flush=True)
    failures.append(msg)


def have_perf():
    return os.geteuid() == 0 and shutil.which("perf") and \
        subprocess.run(["perf", "--version"], capture_output=True).returncode == 0 and \
        os.path.exists("/sys/kernel/tracing/events/sched/sched_process_exec")


def live(tmp):
    marker = os.path.join(tmp, "evmon-stream-marker")
    shutil.copy("/bin/true", marker)
    perf = subprocess.Popen(["perf", "record", "-q", "--no-buffering", "-o", "-", "-e", "sched:sched_process_exec",
                             "-a", "--", "sleep", "6"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    dec = subprocess.Popen([EVMONCTL, "decode", "-"], stdin=perf.stdout, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
    perf.stdout.close()
    try:
        # The header line first, as soon as perf's header is in.
        deadline = time.monotonic() + 5
        out = b""
        while b"\n" not in out and time.monotonic() < deadline:
            if select.select([dec.stdout], [], [], 0.1)[0]:
                chunk = os.read(dec.stdout.fileno(), 65536)
                if not chunk:
                    break
                out += chunk
        if b'"type":"header"' not in out.split(b"\n")[0]:
            return fail("live: no header line within 5 s of perf's start: %r" % out[:200])
        time.sleep(1.5)       # perf is past its start: the exec comes in a round of its own
        start = time.monotonic()
        for _ in range(3):
            subprocess.run([marker], check=True)
        seen = None
        while time.monotonic() - start < 4:
            if select.select([dec.stdout], [], [], 0.1)[0]:
                chunk = os.read(dec.stdout.fileno(), 65536)
                if not chunk:
                    break
                out += chunk
                if marker.encode() in out:
                    seen = time.monotonic() - start
                    break
        running = perf.poll() is None
        if seen is None or seen > 2 or not running:
            return fail("live: the exec's line %s, perf %s" %
                        ("never came within 4 s" if seen is None else "came %.2f s after the exec" % seen,
                         "still running" if running else "had exited"))
        print("live: the exec's line %.2f s after the exec, perf still running" % seen, flush=True)
    finally:
        perf.wait(15)
        rest, err = dec.communicate(timeout=15)
    if dec.returncode != 0:
        fail("live: evmonctl decode - exited %d: %s" % (dec.returncode, err.decode(errors="replace")))


def feed(prefix, total):
    """evmonctl decode - with PREFIX and then zeros, TOTAL bytes in all,
    written by a thread: (exit status, stderr, bytes it took, max RSS in
    KiB, seconds)."""
    r, w = os.pipe()
    start = time.monotonic()
    p = subprocess.Popen([EVMONCTL, "decode", "-"], stdin=r, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    os.close(r)
    taken = [0]

    def writer():
        block = bytes(1 << 20)
        data = prefix
        try:
            while taken[0] < total:
                n = os.write(w, data or block[:min(len(block), total - taken[0])])
                taken[0] += n
                data = data[n:]
        except BrokenPipeError:
            pass
        finally:
            os.close(w)

    t = threading.Thread(target=writer)
    t.start()
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    t.join()
    return p.returncode, err.decode(errors="replace"), taken[0], ru.ru_maxrss, time.monotonic() - start


def zeros():
    total = 400 * 1000 * 1000
    for name, prefix, want in (("zeros", b"", "PERFILE2"),
                               ("a pipe header, then zeros", b"PERFILE2" + (16).to_bytes(8, "little"),
                                "at byte 16 of the stream")):
        rc, err, taken, rss, secs = feed(prefix, total)
        print("%s: exit %d after %.2f s, %d bytes read of %d, max RSS %d KiB: %s" %
              (name, rc, secs, taken, total, rss, err.strip().splitlines()[-1] if err.strip() else ""), flush=True)
        if rc != 1 or want not in err:
            fail("%s: exit %d, %s" % (name, rc, err.strip()))
        # What a pipe holds, and evmonctl's one read, at most; not 400 MB.
        if taken > 1 << 20:
            fail("%s: %d bytes were read before the error" % (name, taken))
        if rss > 32 << 10:
            fail("%s: max RSS %d KiB" % (name, rss))


def same(tmp):
    path = os.path.join(tmp, "pipe.data")
    with open(path, "wb") as f:
        p = subprocess.run(["perf", "record", "-q", "-o", "-", "-a", "-e", "sched:sched_process_exec",
                            "-e", "cpu-clock", "-F", "499", "-g", "--", "sh", "-c",
                            "for i in 1 2 3 4 5 6 7 8; do ls / >/dev/null; done"],
                           stdout=f, stderr=subprocess.PIPE, timeout=60)
    if p.returncode != 0:
        return fail("same: perf record failed: %s" % p.stderr.decode(errors="replace"))
    for order in ("time", "file", "causal"):
        byname = subprocess.run([EVMONCTL, "decode", "--all", "--order", order, path], capture_output=True)
        cat = subprocess.Popen(["cat", path], stdout=subprocess.PIPE)
        piped = subprocess.run([EVMONCTL, "decode", "--all", "--order", order, "-"], stdin=cat.stdout,
                               capture_output=True)
        cat.wait()
        if byname.returncode != 0 or piped.returncode != 0 or byname.stdout != piped.stdout:
            fail("same: --order %s: by name (exit %d, %d lines) and through a pipe (exit %d, %d lines) differ: %s" %
                 (order, byname.returncode, byname.stdout.count(b"\n"), piped.returncode,
                  piped.stdout.count(b"\n"), piped.stderr.decode(errors="replace")))
        else:
            print("same: --order %s: %d lines alike" % (order, piped.stdout.count(b"\n")), flush=True)


def attrs_stream(n, updates):
    """A pipe-mode stream of N software events with one id each (an
    EVENT_UPDATE naming each after it when UPDATES), then FINISHED_ROUND."""
    out = [b"PERFILE2" + (16).to_bytes(8, "little")]
    for i in range(n):
        attr = bytearray(128)
        # type 1 (software), size 128, config 0, period 1, sample_type
        # IP|TID|TIME|ID
        attr[0:4] = (1).to_bytes(4, "little")
        attr[4:8] = (128).to_bytes(4, "little")
        attr[16:24] = (1).to_bytes(8, "little")
        attr[24:32] = (0x47).to_bytes(8, "little")
        out.append((64).to_bytes(4, "little") + (0).to_bytes(2, "little") + (8 + 128 + 8).to_bytes(2, "little") +
                   bytes(attr) + (1000 + i).to_bytes(8, "little"))
        if updates:
            name = b"e%07d\0" % i
            out.append((78).to_bytes(4, "little") + (0).to_bytes(2, "little") +
                       (8 + 16 + len(name)).to_bytes(2, "little") + (2).to_bytes(8, "little") +
                       (1000 + i).to_bytes(8, "little") + name)
    out.append((68).to_bytes(4, "little") + (0).to_bytes(2, "little") + (8).to_bytes(2, "little"))
    return b"".join(out)


def attrs(n=32000, cases=(False, True), what="attrs"):
    limit = 10 * float(os.environ.get("EVMON_TEST_TIME_SCALE", "1"))
    for updates in cases:
        data = attrs_stream(n, updates)
        start = time.monotonic()
        try:
            p = subprocess.run([EVMONCTL, "decode", "-"], input=data, capture_output=True, timeout=limit)
        except subprocess.TimeoutExpired:
            fail("%s: %d attrs%s (%d bytes) not decoded within %.0f s" %
                 (what, n, " with updates" if updates else "", len(data), limit))
            continue
        secs = time.monotonic() - start
        head = p.stdout.split(b"\n", 1)[0]
        print("%s: %d attrs%s, %d bytes: exit %d after %.2f s, %d events in the header" %
              (what, n, " with updates" if updates else "", len(data), p.returncode, secs, head.count(b'"ids"')),
              flush=True)
        if p.returncode != 0 or head.count(b'"ids"') != n:
            fail("%s: exit %d, %d events: %s" % (what, p.returncode, head.count(b'"ids"'),
                                                    p.stderr.decode(errors="replace").strip()))


def formats_stream(n, m):
    """A pipe-mode stream of N tracepoint attrs (config: a format id none
    has) and a HEADER_TRACING_DATA of M formats, then FINISHED_ROUND."""
    out = [b"PERFILE2" + (16).to_bytes(8, "little")]
    for i in range(n):
        attr = bytearray(128)
        attr[0:4] = (2).to_bytes(4, "little")                # tracepoint
        attr[4:8] = (128).to_bytes(4, "little")
        attr[8:16] = (1000000 + i).to_bytes(8, "little")     # its format id
        attr[16:24] = (1).to_bytes(8, "little")
        attr[24:32] = (0x46).to_bytes(8, "little")           # TID|TIME|ID
        out.append((64).to_bytes(4, "little") + (0).to_bytes(2, "little") + (8 + 128 + 8).to_bytes(2, "little") +
                   bytes(attr) + (1000 + i).to_bytes(8, "little"))
    td = [b"\x17\x08Dtracing", b"0.6\0", b"\0", b"\x08", (4096).to_bytes(4, "little"),
          b"header_page\0" + (0).to_bytes(8, "little"), b"header_event\0" + (0).to_bytes(8, "little"),
          (0).to_bytes(4, "little"), (1).to_bytes(4, "little") + b"sys\0" + m.to_bytes(4, "little")]
    for k in range(m):
        t = (b"name: e%d\nID: %d\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\n"
             b"print fmt: \"\"\n" % (k, 2000000 + k))
        td.append(len(t).to_bytes(8, "little") + t)
    data = b"".join(td)
    data += b"\0" * (-len(data) % 8)
    out.append((66).to_bytes(4, "little") + (0).to_bytes(2, "little") + (16).to_bytes(2, "little") +
               len(data).to_bytes(4, "little") + (0).to_bytes(4, "little") + data)
    out.append((68).to_bytes(4, "little") + (0).to_bytes(2, "little") + (8).to_bytes(2, "little"))
    return b"".join(out)


def formats():
    n = 30000
    limit = 10 * float(os.environ.get("EVMON_TEST_TIME_SCALE", "1"))
    data = formats_stream(n, n)
    start = time.monotonic()
    try:
        p = subprocess.run([EVMONCTL, "decode", "-"], input=data, capture_output=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return fail("formats: %d attrs and %d formats (%d bytes) not decoded within %.0f s" % (n, n, len(data), limit))
    head = p.stdout.split(b"\n", 1)[0]
    print("formats: %d attrs and %d formats, %d bytes: exit %d after %.2f s, %d events in the header" %
          (n, n, len(data), p.returncode, time.monotonic() - start, head.count(b'"ids"')), flush=True)
    if p.returncode != 0 or head.count(b'"ids"') != n:
        fail("formats: exit %d: %s" % (p.returncode, p.stderr.decode(errors="replace").strip()))


def terminal(tmp):
    import pty
    path = os.path.join(tmp, "c1.data")
    attr = bytearray(128)
    attr[0:4] = (1).to_bytes(4, "little")        # software
    attr[4:8] = (128).to_bytes(4, "little")
    attr[8:16] = (9).to_bytes(8, "little")       # dummy
    attr[16:24] = (1).to_bytes(8, "little")
    attr[24:32] = (0x6).to_bytes(8, "little")    # TID|TIME
    comm = b"x\xc2\x9b2J\xc2\x9d0;t\x07\0"
    comm += b"\0" * (-len(comm) % 8)
    data = (b"PERFILE2" + (16).to_bytes(8, "little") +
            (64).to_bytes(4, "little") + (0).to_bytes(2, "little") + (8 + 128 + 8).to_bytes(2, "little") +
            bytes(attr) + (77).to_bytes(8, "little") +
            (3).to_bytes(4, "little") + (0).to_bytes(2, "little") + (16 + len(comm)).to_bytes(2, "little") +
            (1234).to_bytes(4, "little") + (1234).to_bytes(4, "little") + comm +
            (68).to_bytes(4, "little") + (0).to_bytes(2, "little") + (8).to_bytes(2, "little"))
    with open(path, "wb") as f:
        f.write(data)
    master, slave = pty.openpty()
    p = subprocess.Popen([EVMONCTL, "decode", "--all", path], stdout=slave, stderr=subprocess.DEVNULL)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    p.wait()
    os.close(master)
    line = [x for x in out.split(b"\n") if b'"comm"' in x]
    print("terminal: exit %d, the comm line: %r" % (p.returncode, line[0][:160] if line else None), flush=True)
    if p.returncode != 0 or not line:
        return fail("terminal: exit %d, no comm line" % p.returncode)
    if b"\xc2\x9b" in out or b"\xc2\x9d" in out or b"\x1b" in out or b"\x07" in out:
        fail("terminal: a control character went to the terminal raw")
    if b"\\u009b" not in out:
        fail("terminal: no \\u009b in the comm line")


def main():
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    tmp = tempfile.mkdtemp(prefix="evmon-decode-stream-")
    try:
        zeros()
        ran.append("zeros")
        terminal(tmp)
        ran.append("terminal")
        attrs(2000, (False,), "header")
        ran.append("header")
        attrs()
        ran.append("attrs")
        formats()
        ran.append("formats")
        if have_perf():
            live(tmp)
            same(tmp)
            ran.extend(["live", "same"])
        else:
            print("live, same: skipped: they need root, perf and the sched tracepoints", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("%d failed" % len(failures))
        sys.exit(1)
    print("passed: " + ", ".join(ran))


if __name__ == "__main__":
    main()
