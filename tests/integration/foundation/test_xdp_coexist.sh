#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# drivers/bpf steers only EtherType 0x88B5 to AF_XDP: with sluiced running on both ends of a
# veth pair, the kernel's own networking on the same interfaces keeps working (ping), and no
# kernel frame reaches sluice (rx_drop_not_sluice stays 0).
source "$(dirname "$0")/../lib/hosts.sh"
sl_require_root
sl_topo_veth
sl_start b "$(sl_config b af_xdp)" af_xdp
sl_wait_ready b 10
sl_start a "$(sl_config a af_xdp)" af_xdp
# The link comes up within 2 s of a's ports starting (its EAL start-up before that takes
# a second or more on a loaded machine, and is not the link's).
sl_wait_ready a 10
sl_wait_peer_up a 2
sl_wait_peer_up b 2
ip netns exec "${SL_NS[a]}" ping -c 5 -i 0.1 -W 1 "${SL_IP[b]}" >"$SL_TMP/ping.txt" ||
    sl_fail "kernel ping from a to b failed with sluiced on the interfaces: $(cat "$SL_TMP/ping.txt")"
[ "$(sl_tel a /sluice/ports p0/peer_state)" = up ] || sl_fail "peer went down during ping"
sl_stop a
sl_stop b
for h in a b; do
    v=$(sl_report_field "$h" p0/rx_drop_not_sluice)
    [ "$v" -eq 0 ] || sl_fail "host $h: $v kernel frames reached the AF_XDP socket"
done
sl_pass "kernel ping works beside sluiced; XDP passed every non-sluice frame to the kernel"
