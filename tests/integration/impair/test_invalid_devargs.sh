#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Every bad net_impair devarg makes the port fail to probe with a message naming the key, and
# the application gets no net_impair port.
set -euo pipefail
. "$(dirname "$0")/impair_lib.sh"
impair_require

prefix="impair_bad_$$"
trap 'rm -rf ${IMPAIR_PLUGIN_DIR:+"$IMPAIR_PLUGIN_DIR"} "/var/run/dpdk/$prefix" "${XDG_RUNTIME_DIR:-/tmp}/dpdk/$prefix"' EXIT

commands() {
	echo "show port summary all"
	echo quit
}

# devargs | message expected in the log (every key's range is in tests/unit/impair)
cases=(
	"dev=net_null0,tx_loss=1.5|invalid devarg tx_loss=1.5: expected a probability in [0, 1]"
	"dev=net_null0,rx_los=0.1|invalid devarg unknown key 'rx_los'"
	"dev=net_null0,tx_delay_ns=10,tx_jitter_ns=20|invalid devargs: tx_jitter_ns=20: must not exceed delay_ns=10"
	"dev=net_null0,rx_seed|devarg rx_seed: expected rx_seed=<value>"
	"dev=net_null0,tx_flush_on_rx=2|invalid devarg tx_flush_on_rx=2: expected 0 or 1"
	"tx_loss=0.1|devarg dev=<underlying port name> is required"
	"dev=net_nothere0|dev=net_nothere0: no such port"
)
fail=0
for c in "${cases[@]}"; do
	args=${c%%|*}
	want=${c#*|}
	out=$(impair_testpmd "$prefix" commands net_null0 "net_impair0,$args" || true)
	if ! grep -qF "net_impair: net_impair0: $want" <<<"$out"; then
		echo "FAIL: '$args': no message '$want'"
		grep "net_impair" <<<"$out" || true
		fail=1
	elif ! grep -q "failed to initialize net_impair0" <<<"$out"; then
		echo "FAIL: '$args': probe did not fail"
		fail=1
	elif grep -q "net_impair0 " <<<"$(grep -A5 "Number of available ports" <<<"$out")"; then
		echo "FAIL: '$args': a net_impair port exists"
		fail=1
	else
		echo "ok: '$args' -> $want"
	fi
done
[ $fail -eq 0 ] && echo "PASS"
exit $fail
