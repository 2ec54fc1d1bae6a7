#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""evmonctl profile and decode --folded on the real kernel, the flame
graph read by a real browser.

svg: evmond serves {"software": "cpu-clock", "freq": 999, "callchain": {},
   "symbols": true}; evmon-profile-target (COMM "ev<il>&;'x") spins in
   evmon_profile_outer → evmon_profile_hot (two units of work) and
   evmon_profile_warm (one), and `evmonctl profile --pid P --seconds 2
   --format svg` draws it. Headless Chromium loads the SVG (it must parse:
   the comm is escaped) and reports each frame's rect and text as laid out:
   main, outer, hot and warm are there as rect + text, each rect as wide
   as its samples' share of 1180 pixels (to 0.01 px), hot about twice
   warm (1.3 to 3), both inside outer, hot left of warm (alphabetical),
   every text inside its box, the comm as "ev<il>&_'x"; a click on hot
   (the SVG's script) makes it 1180 px, outer shown whole below it, warm
   hidden, and Reset Zoom lays out what was drawn.
session: `evmonctl profile --freq 499 --pid P --seconds 1` as root adds
   a cpu-clock event for the session (evmond serves only an exec
   tracepoint) and removes it after: the folded lines name
   evmon_profile_hot, and `status` then lists no evmonctl-profile event.
decode: `perf record -g` of the target and `evmonctl decode --folded`:
   the counts add up to perf script's samples, each line "comm;...;leaf N"
   with the target's comm first.
pprof: the same with --format pprof: gzip, protoc --decode with pprof's
   profile.proto takes it, and its samples are the folded lines' stacks
   and counts, one for one.

Usage: test-profile.py BUILD_ROOT (root and perf_event_open, else 77;
Chromium for svg, perf for decode, protoc for pprof, else those skip; 77 when none ran)."""

import gzip
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

BUILD = sys.argv[1]
EVMOND = os.path.join(BUILD, "evmond")
EVMONCTL = os.path.join(BUILD, "evmonctl")
TARGET = os.path.join(BUILD, "tests", "integration", "evmon-profile-target")
COMM = "ev<il>&;'x"
failures = []
ran = []


def fail(msg):
    print("FAIL: " + msg, flush=True)
    failures.append(msg)


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


class Daemon:
    def __init__(self, tmp, events):
        self.sock = os.path.join(tmp, "evmond.sock")
        config = os.path.join(tmp, "evmond.json")
        with open(config, "w") as f:
            json.dump({"events": events}, f)
        self.log = open(os.path.join(tmp, "evmond.log"), "w+")
        env = dict(os.environ, EVMON_KEEP_PRIVILEGES="1")
        self.p = subprocess.Popen([EVMOND, "--config", config, "--socket", self.sock],
                                  stderr=self.log, env=env)
        for _ in range(200):
            if os.path.exists(self.sock):
                return
            time.sleep(0.05)
        raise SystemExit("evmond did not start: " + self.stderr())

    def stderr(self):
        self.log.seek(0)
        return self.log.read()

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        self.p.wait(timeout=30)

    def ctl(self, *args, **kw):
        return subprocess.run([EVMONCTL, "--socket", self.sock] + list(args), capture_output=True, timeout=60,
                              **kw)


def start_target(seconds):
    p = subprocess.Popen([TARGET, str(seconds), COMM], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    pid = json.loads(p.stdout.readline())["pid"]
    p.stdin.write("go\n")
    p.stdin.flush()
    return p, pid


def stop_target(p):
    p.kill()
    p.wait()


HARNESS = """<!DOCTYPE html><html><body>
<object id="o" data="%s" type="image/svg+xml" width="1200"></object><pre id="out">not loaded</pre>
<script>
document.getElementById('o').addEventListener('load', function () {
  var d = this.contentDocument, r = [];
  if (!d || !d.querySelector('#frames')) { document.getElementById('out').textContent = 'no frames'; return; }
  function frames() {
    var r = [];
    d.querySelectorAll('#frames > g').forEach(function (g) {
      var rect = g.querySelector('rect'), text = g.querySelector('text'), b = rect.getBBox();
      r.push({title: g.querySelector('title').textContent, x: b.x, y: b.y, width: b.width,
              shown: g.getBoundingClientRect().width > 0 && getComputedStyle(g).display != 'none',
              text: text ? text.textContent : null, text_x: text ? text.getBBox().x : 0,
              text_width: text ? text.getComputedTextLength() : 0});
    });
    return r;
  }
  var drawn = frames(), zoomed = null, reset = null;
  /* Click the widest frame named %s: the zoom. */
  var best = null;
  d.querySelectorAll('#frames > g').forEach(function (g) {
    if (g.querySelector('title').textContent.indexOf('%s (') == 0 &&
        (!best || g.querySelector('rect').getBBox().width > best.querySelector('rect').getBBox().width))
      best = g;
  });
  if (best) {
    best.dispatchEvent(new MouseEvent('click', {bubbles: true}));
    zoomed = frames();
    d.getElementById('unzoom').dispatchEvent(new MouseEvent('click', {bubbles: true}));
    reset = frames();
  }
  document.getElementById('out').textContent = JSON.stringify({drawn: drawn, zoomed: zoomed, reset: reset});
});
</script></body></html>
"""


def browser_frames(tmp, svg, click):
    page = os.path.join(tmp, "harness.html")
    with open(page, "w") as f:
        f.write(HARNESS % (os.path.basename(svg), click, click))
    out = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                          "--allow-file-access-from-files", "--virtual-time-budget=5000",
                          "--user-data-dir=" + os.path.join(tmp, "chromium"), "--dump-dom", "file://" + page],
                         capture_output=True, text=True, timeout=120)
    dom = out.stdout
    start = dom.find('<pre id="out">')
    end = dom.find("</pre>", start)
    if start < 0 or end < 0:
        raise AssertionError("Chromium gave no page: " + out.stderr[-500:])
    text = dom[start + len('<pre id="out">'):end]
    text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&")
    if not text.startswith("{"):
        raise AssertionError("Chromium did not lay the SVG out: " + text[:200])
    return json.loads(text)


def parse_title(title):
    """'name (1,234 samples, 12.34%)' → (name, 1234)."""
    name, _, rest = title.rpartition(" (")
    return name, int(rest.split(" ")[0].replace(",", ""))


def test_svg(tmp):
    if not chromium():
        print("svg: skipped: no Chromium (apt-get install chromium)")
        return
    d = Daemon(tmp, [{"software": "cpu-clock", "freq": 999, "callchain": {}, "symbols": True}])
    target, pid = start_target(6)
    try:
        time.sleep(0.5)         # the symbolizer reads the target's symbols once
        svg = os.path.join(tmp, "profile.svg")
        r = d.ctl("profile", "--pid", str(pid), "--seconds", "2", "--format", "svg", "-o", svg,
                  env=dict(os.environ, EVMON_LOG_LEVEL="debug"))
    finally:
        stop_target(target)
        d.stop()
    ran.append("svg")
    if r.returncode != 0:
        return fail("svg: evmonctl profile exit %d: %s" % (r.returncode, r.stderr))
    # Which side folded: evmond (aggregate) or evmonctl (streamed samples).
    for line in r.stderr.decode(errors="replace").splitlines():
        if "profile: " in line and "folded the samples" in line:
            print("svg: " + line.split("profile: ", 1)[1])
    ET.parse(svg)               # well-formed, hostile comm and all
    laid_out = browser_frames(tmp, svg, "evmon_profile_hot")
    frames = laid_out["drawn"]
    by_name = {}
    for f in frames:
        name, count = parse_title(f["title"])
        f["name"], f["count"] = name, count
        by_name.setdefault(name, []).append(f)
    total = by_name["all"][0]["count"]
    print("svg: %d frames, %d samples" % (len(frames), total))
    for f in frames:
        want = f["count"] * 1180.0 / total
        if abs(f["width"] - want) > 0.01:
            fail("svg: %s is %.2f px wide, its %d samples make %.2f" % (f["name"], f["width"], f["count"], want))
        if f["text"] and f["text_x"] + f["text_width"] > f["x"] + f["width"] + 0.5:
            fail("svg: %s's text (%.1f px) runs out of its box (%.1f px)" % (f["name"], f["text_width"],
                                                                         f["width"]))
    if COMM.replace(";", "_") not in by_name:
        fail("svg: no frame for the comm %r: %s" % (COMM, sorted(by_name)[:10]))
    for fn in ("main", "evmon_profile_outer", "evmon_profile_hot", "evmon_profile_warm"):
        if fn not in by_name:
            fail("svg: no frame %s (frames: %s)" % (fn, sorted(by_name)[:20]))
            continue
        f = max(by_name[fn], key=lambda f: f["count"])
        if not f["text"] or not (f["text"] == fn or (f["text"].endswith("..") and fn.startswith(f["text"][:-2]))):
            fail("svg: %s's text is %r" % (fn, f["text"]))
    if failures:
        return
    outer = max(by_name["evmon_profile_outer"], key=lambda f: f["count"])
    hot = max(by_name["evmon_profile_hot"], key=lambda f: f["count"])
    warm = max(by_name["evmon_profile_warm"], key=lambda f: f["count"])
    ratio = hot["width"] / warm["width"]
    print("svg: outer %.1f px, hot %.1f px, warm %.1f px: hot/warm %.2f" % (outer["width"], hot["width"],
                                                                           warm["width"], ratio))
    if not 1.3 <= ratio <= 3.0:
        fail("svg: hot is %.2f times warm, not about 2" % ratio)
    for f in (hot, warm):
        if f["x"] < outer["x"] - 0.01 or f["x"] + f["width"] > outer["x"] + outer["width"] + 0.01 or \
                f["y"] >= outer["y"]:
            fail("svg: %s is not above evmon_profile_outer" % f["name"])
    if hot["x"] >= warm["x"]:
        fail("svg: evmon_profile_hot is not left of evmon_profile_warm (alphabetical)")
    # The zoom: hot clicked is the whole width, its callers below it too
    # (dimmed), warm hidden; Reset Zoom lays out what was drawn.
    zoomed = {}
    for f in laid_out["zoomed"] or []:
        zoomed.setdefault(parse_title(f["title"])[0], []).append(f)
    zhot = max(zoomed.get("evmon_profile_hot", []), key=lambda f: f["width"], default=None)
    zouter = max(zoomed.get("evmon_profile_outer", []), key=lambda f: f["width"], default=None)
    if not zhot or abs(zhot["width"] - 1180) > 0.01 or abs(zhot["x"] - 10) > 0.01:
        fail("svg: evmon_profile_hot clicked is not the whole width: %s" % zhot)
    elif not zouter or not zouter["shown"] or abs(zouter["width"] - 1180) > 0.01:
        fail("svg: evmon_profile_outer is not shown whole below the zoom: %s" % zouter)
    elif any(f["shown"] for f in zoomed.get("evmon_profile_warm", [])):
        fail("svg: evmon_profile_warm is shown in hot's zoom")
    else:
        print("svg: zoom to evmon_profile_hot: 1180 px, outer below it, warm hidden")
    if [(f["x"], f["width"], f["text"]) for f in laid_out["reset"]] != [(f["x"], f["width"], f["text"])
                                                                        for f in frames]:
        fail("svg: Reset Zoom does not lay out what was drawn")


def test_session(tmp):
    d = Daemon(tmp, [{"tracepoint": "sched:sched_process_exec"}])
    target, pid = start_target(6)
    try:
        r = d.ctl("profile", "--pid", str(pid), "--seconds", "1.5", "--freq", "499")
        status = d.ctl("status")
    finally:
        stop_target(target)
        d.stop()
    ran.append("session")
    if r.returncode != 0:
        return fail("session: evmonctl profile exit %d: %s" % (r.returncode, r.stderr))
    lines = r.stdout.decode().splitlines()
    print("session: %d folded lines, %d samples" % (len(lines), sum(int(l.rsplit(" ", 1)[1]) for l in lines)))
    if not any("evmon_profile_hot" in l for l in lines):
        fail("session: no evmon_profile_hot in %s" % lines[:5])
    if b"evmonctl-profile" in status.stdout:
        fail("session: the session's event is still served: " + status.stdout.decode()[:300])


def test_decode(tmp):
    if not shutil.which("perf"):
        print("decode: skipped: no perf (apt-get install linux-perf)")
        return
    data = os.path.join(tmp, "perf.data")
    for attempt in (1, 2):
        # Once more after a failure: other perf users on a busy host.
        p = subprocess.Popen(["perf", "record", "-q", "-g", "-F", "999", "-o", data, "--", TARGET, "1",
                              "evmon-target"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
        _, err = p.communicate("go\n", timeout=60)
        if p.returncode == 0:
            break
        print("decode: perf record exit %d: %s" % (p.returncode, err.strip()[-300:]))
    else:
        return fail("decode: perf record failed twice")
    ran.append("decode")
    r = subprocess.run([EVMONCTL, "decode", "--folded", data], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        return fail("decode: exit %d: %s" % (r.returncode, r.stderr))
    lines = r.stdout.splitlines()
    folded = sum(int(l.rsplit(" ", 1)[1]) for l in lines)
    script = subprocess.run(["perf", "script", "-i", data, "-F", "comm,tid,time"], capture_output=True, text=True)
    samples = len(script.stdout.splitlines())
    print("decode: %d folded lines, %d samples; perf script %d" % (len(lines), folded, samples))
    if folded != samples:
        fail("decode: %d samples folded, perf script has %d" % (folded, samples))
    if not any(l.startswith("evmon-target;") for l in lines):
        fail("decode: no line starts with the comm: %s" % lines[:3])
    if not shutil.which("protoc"):
        print("pprof: skipped: no protoc (apt-get install protobuf-compiler)")
        return
    pb = os.path.join(tmp, "profile.pb.gz")
    r = subprocess.run([EVMONCTL, "decode", "--folded", "--format", "pprof", "-o", pb, data], capture_output=True,
                       text=True, timeout=60)
    if r.returncode != 0:
        return fail("pprof: exit %d: %s" % (r.returncode, r.stderr))
    ran.append("pprof")
    with gzip.open(pb) as f:
        raw = f.read()
    proto = os.path.join(os.environ.get("EVMON_SOURCE_ROOT", os.path.dirname(BUILD)), "src", "cli")
    text = subprocess.run(["protoc", "--proto_path=" + proto, "--decode=perftools.profiles.Profile",
                           "profile.proto"], input=raw, capture_output=True, timeout=60)
    if text.returncode != 0:
        return fail("pprof: protoc --decode refuses it: %s" % text.stderr.decode())
    stacks = pprof_stacks(text.stdout.decode())
    want = {l.rsplit(" ", 1)[0]: int(l.rsplit(" ", 1)[1]) for l in lines}
    print("pprof: %d samples in %d stacks, as the folded lines: %s" % (sum(stacks.values()), len(stacks),
                                                                      stacks == want))
    if stacks != want:
        fail("pprof: its stacks differ from the folded lines: %s" % sorted(set(stacks.items()) ^
                                                                           set(want.items()))[:4])


def pprof_stacks(text):
    """protoc --decode's text of a Profile → {"root;...;leaf": value}."""
    strings = [bytes(m, "latin-1").decode("unicode_escape").encode("latin-1").decode()
               for m in re.findall(r'^string_table: "(.*)"$', text, re.M)]
    functions = {int(i): int(n) for i, n in re.findall(r"^function \{\s*id: (\d+)\s*name: (\d+)", text, re.M)}
    locations = {int(i): int(f) for i, f in
                 re.findall(r"^location \{\s*id: (\d+)\s*line \{\s*function_id: (\d+)", text, re.M)}
    stacks = {}
    for block in re.findall(r"^sample \{(.*?)^\}", text, re.M | re.S):
        ids = [int(i) for i in re.findall(r"location_id: (\d+)", block)]
        value = int(re.search(r"value: (\d+)", block).group(1))
        key = ";".join(strings[functions[locations[i]]] for i in reversed(ids))
        stacks[key] = stacks.get(key, 0) + value
    return stacks


def main():
    if os.geteuid() != 0:
        print("skipped: needs root (perf_event_open system-wide, evmond)")
        sys.exit(77)
    for name, fn in (("svg", test_svg), ("session", test_session), ("decode", test_decode)):
        with tempfile.TemporaryDirectory(prefix="evmon-profile-") as tmp:
            try:
                fn(tmp)
            except AssertionError as e:
                fail("%s: %s" % (name, e))
    if failures:
        sys.exit(1)
    if not ran:
        sys.exit(77)


if __name__ == "__main__":
    main()
