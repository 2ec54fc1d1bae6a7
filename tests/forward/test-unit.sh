#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# evmon-forward.service as meson built it: systemd-analyze verify has
# nothing to say (ExecStart pointed at the built binary, since verify
# checks it), it runs unprivileged in the evmon group, and its exposure
# stays low. Usage: test-unit.sh BUILD_DIR (else 77 with the reason).
set -euo pipefail
build=$1
skip() { echo "SKIP: $*"; exit 77; }
command -v systemd-analyze >/dev/null || skip "no systemd-analyze (package systemd)"
unit=$build/systemd/evmon-forward.service
dir=$(mktemp -d /tmp/nats-unit.XXXXXX)
trap 'rm -rf "$dir"' EXIT
sed "s|^ExecStart=[^ ]*|ExecStart=$(realpath "$build/src/forward/evmon-forward")|" "$unit" >"$dir/evmon-forward.service"
! grep -n '@[a-z]*@' "$dir/evmon-forward.service" || { echo "unsubstituted @variable@"; exit 1; }
for want in DynamicUser=yes SupplementaryGroups=evmon CapabilityBoundingSet= NoNewPrivileges=yes \
            'After=evmond.socket evmond.service'; do
        grep -qx "$want" "$dir/evmon-forward.service" || { echo "missing: $want"; exit 1; }
done
# verify runs man(1) on Documentation=man:evmon-forward(1): the built page.
mkdir -p "$dir/man/man1"
cp "$build/man/evmon-forward.1" "$dir/man/man1/"
out=$(MANPATH=$dir/man systemd-analyze verify "$dir/evmon-forward.service" 2>&1) || rc=$?
if [[ "$out" == *"Failed to connect to bus"* || "$out" == *"not been booted with systemd"* ]]; then
        skip "systemd-analyze verify needs a running systemd here: $out"
fi
[ -z "$out" ] && [ "${rc:-0}" = 0 ] || { echo "systemd-analyze verify: ${rc:-0}: $out"; exit 1; }
sec=$(systemd-analyze security --offline=yes "$dir/evmon-forward.service" 2>&1 | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
[ -n "$sec" ] || skip "systemd-analyze security --offline is not available here"
python3 -c "import sys; sys.exit(0 if float('$sec') <= 2.0 else 1)" || { echo "exposure $sec > 2.0"; exit 1; }
echo "verify clean, exposure $sec"
