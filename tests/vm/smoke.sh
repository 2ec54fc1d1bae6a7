#!/bin/sh
# Runs inside the VM (tests/vm/vm-run): the kernel has kprobes, and a
# kprobe with fetch-args can be added and removed with nothing but echo.
set -e
T=/sys/kernel/tracing
echo "kernel $(uname -r)"
test -w $T/kprobe_events || { echo "FAIL: no $T/kprobe_events"; exit 1; }
echo 'p:evmonsmoke/open do_sys_openat2 dfd=%di:s32 path=+0(%si):ustring' >> $T/kprobe_events
echo 'r:evmonsmoke/open_ret do_sys_openat2 ret=$retval:s32' >> $T/kprobe_events
cat $T/kprobe_events
cat $T/events/evmonsmoke/open/format
grep -q 'field:__data_loc char\[\] path' $T/events/evmonsmoke/open/format
grep -q 'field:s32 ret' $T/events/evmonsmoke/open_ret/format
echo '-:evmonsmoke/open' >> $T/kprobe_events
echo '-:evmonsmoke/open_ret' >> $T/kprobe_events
if [ -d $T/events/evmonsmoke ]; then
        echo "FAIL: evmonsmoke still there"
        exit 1
fi
test -f /sys/bus/event_source/devices/kprobe/type
echo "kprobe PMU type $(cat /sys/bus/event_source/devices/kprobe/type), retprobe $(cat /sys/bus/event_source/devices/kprobe/format/retprobe)"
echo "smoke: ok"
