#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Two sluiced hosts over one topology (af_xdp | af_packet | memif; over memif host b runs in
# workers mode, the rest single-lcore): each sees its peer up
# (its link in NORMAL state) within 2 s; telemetry answers; both stop cleanly on a signal; and
# every frame host a sent after host b was ready was received by b exactly once: b's sluice
# frames (rx_pkts less the kernel's own frames that AF_PACKET also sees, counted as
# rx_drop_not_sluice) == a.tx_pkts (memif: all but LEAVE frames b did not read once it had
# answered, see below), all of them reached b's link, and no frame was dropped; and a's goodbye
# was answered.
# usage: test_two_hosts.sh af_xdp|af_packet|memif
source "$(dirname "$0")/../lib/hosts.sh"
sl_require_root
topo=${1:?topology}

case $topo in
    af_xdp|af_packet) sl_topo_veth; kind_a=$topo; kind_b=$topo ;;
    memif) sl_topo_memif; kind_a=memif_client; kind_b=memif_server ;;
    *) sl_fail "unknown topology $topo" ;;
esac

# b first: once it answers telemetry its port is up, so nothing a sends is lost at b.
# Keepalives every 500 us: enough frames to count, few enough that a receiver descheduled on a
# loaded 2-core machine does not overflow its socket's ring (a real loss the link would repair,
# which would make the frame counts differ).
# Over memif, b runs in workers mode (one worker lcore; its main lcore only waits), so both
# modes carry traffic and report themselves in /sluice/info; a stays single-lcore.
b_lines=() b_eal=()
[ "$topo" = memif ] && b_lines=("workers = 1") b_eal=(-l 0-1)
sl_start b "$(sl_config b "$kind_b" "${b_lines[@]}" "[link]" "keepalive_us = 500")" "$kind_b" \
    "${b_eal[@]}"
sl_wait_ready b 10
sl_start a "$(sl_config a "$kind_a" "[link]" "keepalive_us = 500")" "$kind_a"
# The link comes up within 2 s of a's ports starting (its EAL start-up before that takes
# a second or more on a loaded machine, and is not the link's).
sl_wait_ready a 10
sl_wait_peer_up a 2
sl_wait_peer_up b 2

# Telemetry: /sluice/info and a per-port view through DPDK's own client.
[ "$(sl_tel a /sluice/info name)" = "host-a" ] || sl_fail "/sluice/info name"
# Single-lcore mode (workers = 0): one poll loop on the main lcore, reported as configured.
for k in "mode single-lcore" "workers 0" "poll_loops 1" "lcores_used 1"; do
    [ "$(sl_tel a /sluice/info "${k% *}")" = "${k#* }" ] || sl_fail "a: /sluice/info ${k% *}"
done
if [ "$topo" = memif ]; then
    for k in "mode workers" "workers 1" "poll_loops 1" "lcores_used 2" "eal_lcores 2"; do
        [ "$(sl_tel b /sluice/info "${k% *}")" = "${k#* }" ] || sl_fail "b: /sluice/info ${k% *}"
    done
fi
echo /sluice/ports,0 | dpdk-telemetry.py -f "$(sl_prefix b)" >"$SL_TMP/tel.txt" 2>&1 ||
    sl_fail "dpdk-telemetry.py failed"
grep -q '"peer_state": "up"' "$SL_TMP/tel.txt" || sl_fail "dpdk-telemetry.py: no peer_state up"
if [ "$topo" != memif ]; then
    mac=$(sl_tel a /sluice/ports p0/peer_mac)
    [ "${mac,,}" = "${SL_MAC[b]}" ] || sl_fail "host a learned peer MAC $mac, expected ${SL_MAC[b]}"
fi

sleep 1
sl_stop a INT
sleep 0.2
sl_stop b TERM

a_tx=$(sl_report_field a p0/tx_pkts)
a_ka=$(sl_report_field a p0/link/tx_keepalive)
b_rx=$(( $(sl_report_field b p0/rx_pkts) - $(sl_report_field b p0/rx_drop_not_sluice) ))
b_link=$(sl_report_field b p0/link/rx_frames)
sl_log "a sent $a_tx frames ($a_ka keepalives), b received $b_rx, its link $b_link"
[ "$a_ka" -gt 100 ] || sl_fail "host a sent only $a_ka keepalives"
if [ "$topo" = memif ]; then
    # memif: b stops reading the shared rings once it has answered a's LEAVE, so the LEAVE
    # frames a sent after that are never read; every frame a sent before its goodbye was.
    a_leave=$(sl_report_field a p0/link/tx_leave)
    sl_log "a sent $a_leave LEAVE frames"
    [ "$b_rx" -le "$a_tx" ] && [ "$b_rx" -ge $((a_tx - a_leave)) ] ||
        sl_fail "a.tx_pkts $a_tx ($a_leave LEAVE), b's sluice frames received $b_rx: b missed more than LEAVE frames"
else
    [ "$a_tx" -eq "$b_rx" ] ||
        sl_fail "a.tx_pkts $a_tx != b's sluice frames received $b_rx (b: nic_rx_missed $(sl_report_field b p0/nic_rx_missed), nic_rx_errors $(sl_report_field b p0/nic_rx_errors); a: nic_tx_errors $(sl_report_field a p0/nic_tx_errors))"
fi
[ "$b_rx" -eq "$b_link" ] || sl_fail "b received $b_rx sluice frames, its link saw $b_link"
for h in a b; do
    for c in rx_drop_chained tx_drop_refused tx_drop_nombuf nic_rx_missed; do
        v=$(sl_report_field "$h" "p0/$c")
        [ "$v" -eq 0 ] || sl_fail "host $h: $c = $v"
    done
done
# The goodbye: a's LEAVE was answered by b, and over memif b then left the port alone until
# a's close had taken it down (docs/link.md, "Leave"). b, stopping later, had nobody to ask.
[ "$(sl_report_field a p0/link/leave_acks)" -eq 1 ] || sl_fail "a: its LEAVE was not answered"
# (a may send a second run of LEAVE before the first answer reaches it: answered again.)
v=$(sl_report_field b p0/link/peer_leaves)
[ "$v" -ge 1 ] || sl_fail "b: a's LEAVE not answered (peer_leaves $v)"
[ "$(sl_report_field b p0/link/tx_leave)" -eq 0 ] || sl_fail "b: sent LEAVE to a peer that had left"
quiet=$(sl_report_field b p0/quiet_entries)
if [ "$topo" = memif ]; then
    [ "$quiet" -eq 1 ] || sl_fail "b: quiet_entries = $quiet over memif, expected 1"
else
    [ "$quiet" -eq 0 ] || sl_fail "b: quiet_entries = $quiet over $topo, expected 0"
fi
sl_pass "$topo: peers up within 2 s, counters agree ($a_tx frames), goodbye answered, clean shutdown"
