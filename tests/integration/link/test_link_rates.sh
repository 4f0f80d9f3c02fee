#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The reliable link over a veth at whatever rate the test traffic offers: two hosts, the default
# [link] (faithful mode, whole-ring replay, a 10 Gbit/s line), test traffic both ways at
# [traffic] rate_mbps = 0 (as fast as the link takes it), 5000 and 10000. The receivers'
# lcores take less than that on a shared machine, so the kernel drops frames at their sockets;
# the link must come up within a second anyway and deliver every payload exactly once, in
# order, both ways (docs/link.md, "Rate": the slot clock halves its rate when a replay
# repeats, no more than half the ring goes into a silent peer, and the receive rings are short
# enough for the replay ring to outlast them). Prints, per rate, the
# kernel's drops at each host and what the link did about them.
# usage: test_link_rates.sh af_xdp|af_packet
source "$(dirname "$0")/../lib/hosts.sh"
sl_require_root
kind=${1:?port kind}
case $kind in af_xdp|af_packet) ;; *) sl_fail "unknown port kind $kind" ;; esac
slow=${SLUICE_TEST_TIMEOUT_MULTIPLIER:-1}
frames=${LINK_RATES_FRAMES:-400000} # per direction: about a second at these rates

sl_topo_veth

# Wait until host h has checked all $frames payloads of its peer, or fail once it has checked
# none more for STALL_S seconds: a slow host takes longer, a stuck link stops counting.
wait_checked() {
    local h=$1 stall_s=$2 t0 got=0 seen=-1
    t0=$(date +%s)
    while [ $(($(date +%s) - t0)) -lt "$stall_s" ]; do
        got=$(sl_tel "$h" /sluice/traffic delivered 2>/dev/null || echo 0)
        [ "$got" -ge "$frames" ] && return 0
        [ "$got" -gt "$seen" ] && { seen=$got; t0=$(date +%s); }
        sleep 0.2
    done
    # Every link counter of both ends, to tell what the stuck link was doing.
    local l
    for l in a b; do
        echo "---- host $l: /sluice/link" >&2
        sl_tel "$l" /sluice/link >&2 || true
    done
    sl_fail "rate $rate: $h checked $got of $frames payloads, none more for ${stall_s} s (a: $(sl_tel a /sluice/link state), b: $(sl_tel b /sluice/link state))"
}

for rate in 0 5000 10000; do
    for h in a b; do
        sl_config "$h" "$kind" "[traffic]" "mode = both" "rate_mbps = $rate" \
            "frames = $frames" >/dev/null
    done
    sl_start b "$SL_TMP/b.ini" "$kind" -l 1
    sl_wait_ready b 10
    sl_start a "$SL_TMP/a.ini" "$kind" -l 0
    sl_wait_ready a 10
    # From a's ports starting (it answers telemetry): both peers up within a second (four
    # under the sanitizers), telemetry's own latency (about 0.1 s a query) included.
    sl_wait_peer_up a "$slow"
    sl_wait_peer_up b "$slow"
    # The default [port] rx_desc sizes the receive ring, AF_PACKET's too (its PMD takes only
    # the framecnt devarg: sluiced probes it again), so the 2^11 replay ring outlasts it.
    for h in a b; do
        ring=$(sl_tel "$h" /sluice/ports p0/rx_ring_frames)
        [ "$ring" -eq 256 ] || sl_fail "$h: receive ring of $ring frames, not rx_desc's 256"
    done
    wait_checked b $((20 * slow))
    wait_checked a $((20 * slow))
    # The kernel's drops while the traffic ran (a stopping host's socket drops what its peer
    # still sends, so the exit report's figure includes the goodbye).
    declare -A kdrop
    for h in a b; do kdrop[$h]=$(sl_tel "$h" /sluice/ports p0/kernel_rx_dropped); done
    sl_stop a INT
    sl_stop b INT
    for h in a b; do
        f() { sl_report_field "$h" "$1"; }
        sl_log "rate $rate: $h checked $(f delivered) (first_seq $(f first_seq)), lost $(f lost), duplicated $(f duplicated), reordered $(f reordered), corrupted_accepted $(f corrupted_accepted); goodput $(f goodput_bps) bit/s over $(f goodput_window_ns) ns; the kernel dropped ${kdrop[$h]} frames at $h during the run ($(f p0/kernel_rx_dropped) by its exit), the NIC missed $(f p0/nic_rx_missed); its link: $(f p0/link/rx_errors) errors, $(f p0/link/rx_recoveries) recoveries; it replayed $(f p0/link/replays) times ($(f p0/link/replay_repeats) repeats, $(f p0/link/rate_cuts) rate cuts), held new data $(f p0/link/silent_holds) times for a silent peer"
        for c in lost duplicated reordered corrupted_accepted first_seq; do
            [ "$(f "$c")" -eq 0 ] || sl_fail "rate $rate: $h: $c = $(f "$c")"
        done
        [ "$(f delivered)" -eq "$frames" ] ||
            sl_fail "rate $rate: $h checked $(f delivered) of $frames"
        [ "$(f p0/link/nack_outside_ring)" -eq 0 ] ||
            sl_fail "rate $rate: $h: a NACK named a frame its ring no longer held"
    done
    cp "$SL_TMP/a.out" "$SL_TMP/a-$rate.out"
    cp "$SL_TMP/b.out" "$SL_TMP/b-$rate.out"
done
sl_pass "$kind: the link came up within 1 s and carried $frames payloads each way exactly once at traffic rates 0, 5000 and 10000 Mbit/s"
