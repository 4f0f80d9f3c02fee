#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runtime changes without a restart: testpmd forwards through an unimpaired net_impair port,
# then /sluice/impair/set raises RX loss and TX duplication mid-run; the counters after the
# change match the new settings (the engine counts nothing while it is bypassed), a bad value
# is refused with a message naming the key, and /sluice/impair/show reports the parameters.
set -euo pipefail
. "$(dirname "$0")/impair_lib.sh"
impair_require

prefix="impair_tel_$$"
tmp=$(mktemp -d)
trap 'rm -rf ${IMPAIR_PLUGIN_DIR:+"$IMPAIR_PLUGIN_DIR"} "$tmp" "/var/run/dpdk/$prefix" "${XDG_RUNTIME_DIR:-/tmp}/dpdk/$prefix"' EXIT

tel() {
	impair_tel "$prefix" "$1"
}

commands() {
	echo start
	# Wait for the telemetry socket, change the parameters, forward a while longer.
	for _ in $(seq 100); do
		tel "/sluice/impair/show,1" | grep -q '"port": 1' && break
		sleep 0.1
	done
	tel "/sluice/impair/set,1,seed=7,rx_loss=0.3,tx_dup=0.01" >"$tmp/set.json"
	tel "/sluice/impair/set,1,rx_loss=2" >"$tmp/bad.json"
	tel "/sluice/impair/set,1,tx_queue_frames=128" >"$tmp/fixed.json"
	tel "/sluice/impair/show,1" >"$tmp/show.json"
	impair_wait_xstat "$prefix" 1 tx_impair_frames 300000 60 || true
	echo stop
	sleep 1
	echo "show port xstats 1"
	echo quit
}
out=$(impair_testpmd "$prefix" commands net_null0 "net_impair0,dev=net_null0")

fail=0
grep -q '"rx": "seed=7,loss=0.3"' "$tmp/set.json" || { echo "FAIL: set reply"; cat "$tmp/set.json"; fail=1; }
grep -q '"error": "rx_loss=2: expected a probability in \[0, 1\]"' "$tmp/bad.json" ||
	{ echo "FAIL: bad value accepted"; cat "$tmp/bad.json"; fail=1; }
grep -q '"error": "tx_queue_frames: fixed when the port is set up"' "$tmp/fixed.json" ||
	{ echo "FAIL: queue_frames changed at run time"; cat "$tmp/fixed.json"; fail=1; }
grep -q '"tx": "seed=7,dup=0.01"' "$tmp/show.json" || { echo "FAIL: show"; cat "$tmp/show.json"; fail=1; }
echo "rx loss after the change:"
impair_in_ci "$(impair_xstat "$out" rx_impair_drop_loss)" "$(impair_xstat "$out" rx_impair_frames)" \
	0.3 || { echo "FAIL: rx loss"; fail=1; }
# A duplication decided when the mempool had no buffer for the copy counts in drop_nobuf.
echo "tx duplication after the change:"
dups=$(($(impair_xstat "$out" tx_impair_duplicated) + $(impair_xstat "$out" tx_impair_drop_nobuf)))
impair_in_ci "$dups" "$(impair_xstat "$out" tx_impair_frames)" 0.01 || { echo "FAIL: tx dup"; fail=1; }
[ "$(impair_xstat "$out" rx_impair_frames)" -gt 10000 ] || { echo "FAIL: too few frames"; fail=1; }
[ $fail -eq 0 ] && echo "PASS"
exit $fail
