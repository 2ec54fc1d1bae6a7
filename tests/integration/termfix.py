# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the terminal tests (test-view.py, test-top.py) share: their log,
their skip (meson's exit 77), waiting for a condition, and a tmux server
of their own (-L NAME, no user config), which each drives its way."""

import subprocess
import sys
import time

SKIP = 77


def log(msg):
    print(msg, flush=True)


def skip(why):
    print(f"SKIP: {why}", file=sys.stderr)
    sys.exit(SKIP)


def wait_for(what, fn, timeout=20, every=0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = fn()
        if v:
            return v
        time.sleep(every)
    raise AssertionError(f"timed out waiting for {what}")


class Tmux:
    def __init__(self, name):
        self.name = name

    def run(self, *args, check=True):
        return subprocess.run(["tmux", "-L", self.name, "-f", "/dev/null", *args], capture_output=True, text=True,
                              check=check)

    def kill(self):
        self.run("kill-server", check=False)
