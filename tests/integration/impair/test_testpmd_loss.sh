#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# dpdk-testpmd forwards through net_impair (loaded with -d) stacked on another vdev, with loss:
# the measured loss falls inside the 99.9% binomial interval of the setting, testpmd's counters
# agree with the PMD's, and the underlying port is hidden from the application.
#   null: net_null0 (an endless RX source), loss on both directions (RX 0.1, TX 0.02)
#   ring: net_ring0 looped back on itself, 512 frames sent first circulate through TX loss
#         0.01 until lost
# usage: test_testpmd_loss.sh null|ring
set -euo pipefail
. "$(dirname "$0")/impair_lib.sh"
impair_require

under=${1:?null|ring}
prefix="impair_loss_${under}_$$"
trap 'rm -rf ${IMPAIR_PLUGIN_DIR:+"$IMPAIR_PLUGIN_DIR"} "/var/run/dpdk/$prefix" "${XDG_RUNTIME_DIR:-/tmp}/dpdk/$prefix"' EXIT

commands() {
	echo "show port info all"
	if [ "$under" = ring ]; then
		# 512 frames circulate until TX loss has taken every one.
		echo "start tx_first 16"
		impair_wait_xstat "$prefix" 1 tx_impair_drop_loss 512 60 || true
	else
		echo start
		impair_wait_xstat "$prefix" 1 tx_impair_frames 300000 60 || true
	fi
	echo stop
	sleep 1
	echo "show port xstats 1"
	echo "show port stats 1"
	echo quit
}
case $under in
null) args="rx_loss=0.1,tx_loss=0.02,seed=11" dirs="rx tx" ;;
ring) args="tx_loss=0.01,seed=5" dirs="tx" ;;
*) echo "usage: $0 null|ring"; exit 2 ;;
esac
out=$(impair_testpmd "$prefix" commands "net_${under}0" "net_impair0,dev=net_${under}0,$args")

fail=0
grep -q "port 1 impairs port 0 (net_${under}0)" <<<"$out" || { echo "FAIL: probe message"; fail=1; }
# testpmd sees only the impaired port: the underlying one is owned by net_impair.
if grep -q "Infos for port 0 " <<<"$out"; then
	echo "FAIL: underlying port 0 visible to the application"
	fail=1
fi
for dir in $dirs; do
	p=$(sed -n "s/.*${dir}_loss=\([0-9.]*\).*/\1/p" <<<"$args")
	n=$(impair_xstat "$out" ${dir}_impair_frames)
	k=$(impair_xstat "$out" ${dir}_impair_drop_loss)
	rel=$(impair_xstat "$out" ${dir}_impair_released)
	echo "$dir loss:"
	impair_in_ci "${k:-0}" "${n:-0}" "$p" || { echo "FAIL: $dir loss outside the CI"; fail=1; }
	[ "$((n - k))" -eq "$rel" ] || { echo "FAIL: $dir frames - drops != released"; fail=1; }
	[ "$n" -gt 10000 ] || { echo "FAIL: only $n $dir frames forwarded"; fail=1; }
done
# Port stats: RX counts what the application got, TX what reached the underlying port.
ipk=$(awk '/RX-packets:/ && /RX-missed/ { print $2; exit }' <<<"$out")
opk=$(awk '/TX-packets:/ && /TX-errors/ { print $2; exit }' <<<"$out")
if [[ " $dirs " == *" rx "* ]]; then
	[ "$ipk" = "$(impair_xstat "$out" rx_impair_released)" ] || { echo "FAIL: ipackets $ipk"; fail=1; }
fi
[ "$opk" = "$(impair_xstat "$out" tx_impair_released)" ] || { echo "FAIL: opackets $opk"; fail=1; }
[ $fail -eq 0 ] && echo "PASS"
exit $fail
