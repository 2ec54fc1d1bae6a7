#!/bin/sh
# Runs inside the VM (tests/vm/vm-run --bin vm-kprobe): kprobes and
# kretprobes through src/tracefs/probe.c on a kernel that has them.
echo "kernel $(uname -r)"
exec vm-kprobe
