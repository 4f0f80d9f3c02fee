#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Two sluiced hosts, net_impair stacked on host a's port with deterministic drop lists on both
# directions: a's PMD counts exactly the listed drops (4 on TX, 2 on RX), and b, counting what
# arrived, misses exactly a's TX drops (b.rx_pkts == a.tx_pkts - 4), while the link layer keeps
# both peers up.
# usage: test_two_hosts_impair.sh af_xdp|memif
#   af_xdp: two network namespaces joined by a veth pair (AF_XDP ports)
#   memif:  two processes; b may also miss LEAVE frames a sent after b answered its goodbye
source "$(dirname "$0")/../lib/hosts.sh"
sl_require_root
topo=${1:-memif}

IMPAIR_SO=$SL_BUILD/drivers/net/impair/librte_net_impair.so
[ -f "$IMPAIR_SO" ] || sl_fail "$IMPAIR_SO not built"
load=(-d "$IMPAIR_SO")
# A daemon that links the PMD statically already has the driver.
grep -q "/sluice/impair/set" "$SL_SLUICED" && load=()

case $topo in
    af_xdp) sl_topo_veth; kind_a=af_xdp; kind_b=af_xdp ;;
    memif) sl_topo_memif; kind_a=memif_client; kind_b=memif_server ;;
    *) sl_fail "unknown topology $topo" ;;
esac
sl_start b "$(sl_config b "$kind_b")" "$kind_b"
sl_wait_ready b 10
{
    echo "[sluiced]"
    echo "name = host-a"
    echo "[port.0]"
    echo "device = net_impair0"
} >"$SL_TMP/a.ini"
sl_start a "$SL_TMP/a.ini" "$kind_a" "${load[@]}" \
    --vdev "net_impair0,dev=$(sl_device "$kind_a"),tx_drop_idx=20:30-32,rx_drop_idx=25:40"
sl_wait_peer_up a 5
sl_wait_peer_up b 5

# Frame indexes up to 40 pass within a few keepalive periods; wait until both lists are done.
port=$(sl_tel a /sluice/ports p0/port_id)
for _ in $(seq 100); do
    sl_tel a "/ethdev/xstats,$port" >"$SL_TMP/xstats.json" 2>/dev/null || true
    python3 - "$SL_TMP/xstats.json" <<'PY' && break
import json, sys
x = json.load(open(sys.argv[1]))
sys.exit(0 if x["tx_impair_frames"] > 40 and x["rx_impair_frames"] > 40 else 1)
PY
    sleep 0.05
done
sleep 0.3
sl_stop a INT
sleep 0.2
sl_stop b TERM

read -r tx_drops rx_drops tx_frames rx_frames < <(python3 -c '
import json, sys
x = json.load(open(sys.argv[1]))
print(x["tx_impair_drop_idx"], x["rx_impair_drop_idx"], x["tx_impair_frames"], x["rx_impair_frames"])
' "$SL_TMP/xstats.json")
a_tx=$(sl_report_field a p0/tx_pkts)
b_rx=$(( $(sl_report_field b p0/rx_pkts) - $(sl_report_field b p0/rx_drop_not_sluice) ))
sl_log "a: impair dropped $tx_drops of $tx_frames TX, $rx_drops of $rx_frames RX frames"
sl_log "a sent $a_tx frames, b received $b_rx"
[ "$tx_drops" -eq 4 ] || sl_fail "a: tx_impair_drop_idx = $tx_drops, expected 4"
[ "$rx_drops" -eq 2 ] || sl_fail "a: rx_impair_drop_idx = $rx_drops, expected 2"
[ "$a_tx" -gt 100 ] || sl_fail "host a sent only $a_tx frames"
# Frames b's NIC dropped for want of room (an AF_XDP socket ring overflowing while b was
# descheduled) were lost on b's side, not by the impairment. Over veth the kernel can drop
# more that no DPDK counter sees: with an XDP program on b's end, a's veth hands frames to
# b's 256-entry XDP ring, and when b's softirq has not emptied it the frame is dropped and
# counted in the veth's own statistics (rx_dropped on b's end; older kernels: tx_dropped on
# a's), while a's AF_XDP port has already counted it as sent. sluiced reports those counters
# of the interface under an AF_XDP port as kernel_rx_dropped and kernel_tx_dropped.
b_nic=$(sl_report_field b p0/nic_rx_missed)
a_kernel_tx=0 b_kernel_rx=0
if [ "$topo" = af_xdp ]; then
    a_kernel_tx=$(sl_report_field a p0/kernel_tx_dropped)
    b_kernel_rx=$(sl_report_field b p0/kernel_rx_dropped)
fi
missed=$((a_tx - b_rx - b_nic - a_kernel_tx - b_kernel_rx))
sl_log "b: nic_rx_missed $b_nic; kernel drops: a tx $a_kernel_tx, b rx $b_kernel_rx"
if [ "$topo" = memif ]; then
    # b stops reading the rings once it has answered a's LEAVE (docs/link.md, "Leave"): the
    # LEAVE frames a sent after that are never read.
    a_leave=$(sl_report_field a p0/link/tx_leave)
    sl_log "a sent $a_leave LEAVE frames"
    [ "$missed" -ge 4 ] && [ "$missed" -le $((4 + a_leave)) ] ||
        sl_fail "b missed $missed of a's frames, expected 4 (plus at most a's $a_leave LEAVE)"
else
    [ "$missed" -eq 4 ] || sl_fail "b missed $missed of a's frames, expected 4"
fi
sl_pass "$topo: impair on host a: 4 TX and 2 RX drops counted by a, b missed $missed of $a_tx"
