#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Endpoint congestion (Chong and Krishnan, "Addressing Endpoint-induced Congestion for Accelerator
# Scale-Out in a Medium-Scale Domain") between two sluiced hosts over memif: host a sends, host b's
# host drains slower than the link brings. b's QPs receive through the endpoint-congestion
# target ([qp] recv = ec): a 81 KiB queue with a 9 KiB threshold that b's host stage empties at
# r x the link's rate ([ec] drain_mbps), delivering each packet to the checker only then. a's
# QPs run the program the cell names over the reliable link (which loses nothing: every drop
# is the target's).
#
# usage: test_qp_ec.sh [CELL...]   (default: every cell)
#   a cell is POLICY-R: policy dack, opt, aimd or timeout (opt's program, a target that never
#   NACKs), r in percent of the link's rate_mbps (RATE_MBPS, default 2000), e.g. dack-50 opt-70.
# Each cell: COUNT QPs (default 1) of seg_bytes = 2048 (the paper's 2 KB payloads, in 4 KiB
# memif buffers), MSGS messages of 64 KiB per QP (default 1000), OPT's outstanding-byte
# threshold 128 KiB (the simulator's), RTO (default 20 ms; RTO_DACK, 200 ms, for dack's cells, see
# below), [ec] threshold_bytes THRESHOLD_BYTES
# (default the paper's 9216). Both daemons run with --exit-when-done and the test waits for them
# to exit: a telemetry poll (a Python process) would take a core from a daemon. Every cell must
# deliver every message exactly once, in order, byte for byte, with no QP failed; then
#   dack: no retransmission at a, no target drop at b (drop_full = drop_order = 0), DACKs sent;
#   opt, aimd, timeout: the target dropped (drop_full > 0) and a retransmitted (pkts_rtx > 0);
# and b's goodput is printed against the drain's ceiling, r x rate x payload / wire bytes.
# dack's claim is that no packet is lost, so nothing is resent. An RTO still fires when an lcore
# is descheduled longer than it (on 2 shared cores with background load, poll gaps of 20-60 ms
# happen: the ports' poll_gaps and poll_gap_ns show them), and its resends are the stall's, not
# the target's (the failing cells showed rto_fired 1 with drop_full 0): dack's
# cells run with RTO_DACK, Linux's minimum RTO, above any stall seen, so that what they count
# is what dack claims. The other policies need their RTO to recover from the drops they cause.
# One JSON line per cell on stdout (docs/ec.md, "Between two daemons").
source "$(dirname "$0")/../lib/hosts.sh"
sl_require_root
slow=${SLUICE_TEST_TIMEOUT_MULTIPLIER:-1}
RATE_MBPS=${RATE_MBPS:-2000}
COUNT=${COUNT:-1}
MSGS=${MSGS:-1000}
MSG_BYTES=${MSG_BYTES:-65536}
SEG=2048
THRESHOLD_BYTES=${THRESHOLD_BYTES:-9216}
RTO=${RTO:-20ms}
RTO_DACK=${RTO_DACK:-200ms}
cells=("$@")
[ ${#cells[@]} -gt 0 ] || cells=(dack-50 opt-50 dack-70 opt-70)
# 4 KiB memif buffers carry a 2 KB payload with its headers in one; rings of 2^12 of them.
export SL_MEMIF_ARGS=,bsize=4096,rsize=12
sl_topo_memif

# --exit-when-done without an end to the traffic is a usage error (exit 2), said at once.
printf '[sluiced]\nname = bad\n[qp]\ncount = 1\n[port.0]\ndevice = net_ring0\n' >"$SL_TMP/bad.ini"
rc=0
"$SL_SLUICED" --no-huge -m 512 --no-pci --file-prefix "$SL_ID-bad" --log-level=lib.eal:error \
    --vdev net_ring0 -- --config "$SL_TMP/bad.ini" --exit-when-done >/dev/null 2>"$SL_TMP/bad.log" ||
    rc=$?
[ "$rc" -eq 2 ] && grep -q "^$SL_TMP/bad.ini: --exit-when-done needs \[qp\] count and msgs" \
    "$SL_TMP/bad.log" || sl_fail "--exit-when-done without msgs: status $rc, $(cat "$SL_TMP/bad.log")"

run_cell() {
    local cell=$1 policy=${1%-*} pct=${1#*-} drain proto rto=$RTO
    drain=$((RATE_MBPS * pct / 100))
    [ "$policy" = dack ] && rto=$RTO_DACK
    proto=$policy
    [ "$policy" = timeout ] && proto=opt
    local common=("mbuf_data_room = 4224"
                  "[link]" "mode = extended" "replay = missing" "ring_order = 12"
                  "rate_mbps = $RATE_MBPS" "keepalive_us = 100" "stuck_ms = 2s"
                  "[qp]" "count = $COUNT" "proto = $proto" "recv = ec" "seg_bytes = $SEG"
                  "msg_min_bytes = $MSG_BYTES" "msg_max_bytes = $MSG_BYTES" "msgs = $MSGS"
                  "params = 0,131072" "rto_us = $rto" "timeout_ms = 10s" "seed = 7"
                  "[ec]" "policy = $policy" "drain_mbps = $drain"
                  "threshold_bytes = $THRESHOLD_BYTES")
    sl_config a memif_client "${common[@]}" >/dev/null
    sed -i "s/^\[qp\]$/[qp]\ndirection = send/" "$SL_TMP/a.ini"
    sl_config b memif_server "${common[@]}" >/dev/null
    sed -i "s/^\[qp\]$/[qp]\ndirection = recv/" "$SL_TMP/b.ini"
    # Both stop by themselves once their traffic is done: nothing polls them meanwhile.
    sl_start b "$SL_TMP/b.ini" memif_server -- --exit-when-done
    sl_wait_ready b 10
    sl_start a "$SL_TMP/a.ini" memif_client -- --exit-when-done
    sl_wait_exit a $((60 * slow))
    sl_wait_exit b 10
    python3 - "$SL_TMP" "$cell" "$policy" "$pct" "$RATE_MBPS" "$COUNT" "$MSGS" "$SEG" "$THRESHOLD_BYTES" <<'PY' ||
import json, sys
tmp, cell, policy, pct, rate, count, msgs, seg = sys.argv[1], sys.argv[2], sys.argv[3], \
    int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7]), int(sys.argv[8])
def totals(h):
    rep = {"rto_fired": 0}
    for line in open(f"{tmp}/{h}.out"):
        o = json.loads(line)
        if "qps/qps" in o or "p0/tx_pkts" in o:
            rep.update(o)
        elif "qp" in o:
            rep["rto_fired"] += o.get("rto_fired", 0)
    return rep
a, b = totals("a"), totals("b")
ec = {k[len("qps/ec/"):]: v for k, v in b.items() if k.startswith("qps/ec/")}
bad = []
if b["qps/checked"] != count * msgs:
    bad.append(f"b checked {b['qps/checked']} of {count * msgs}")
for h, t in (("a", a), ("b", b)):
    for k in ("qps/msgs_failed", "qps/xport/qps_failed", "qps/traffic/out_of_order",
              "qps/traffic/bad_length", "qps/traffic/bad_content", "qps/lane/tx_lost"):
        if t[k]:
            bad.append(f"{h}: {k} = {t[k]}")
if a["qps/msgs_completed"] != count * msgs:
    bad.append(f"a completed {a['qps/msgs_completed']} of {count * msgs}")
if not ec:
    bad.append("b's report has no qps/ec/ counters")
elif policy == "dack":
    if a["qps/pkts_rtx"] or ec["drop_full"] or ec["drop_order"] or ec["dacks"] == 0:
        bad.append(f"dack: pkts_rtx {a['qps/pkts_rtx']}, drop_full {ec['drop_full']}, "
                   f"drop_order {ec['drop_order']}, dacks {ec['dacks']} (want 0, 0, 0, > 0)")
elif a["qps/pkts_rtx"] == 0 or ec["drop_full"] == 0:
    bad.append(f"{policy}: pkts_rtx {a['qps/pkts_rtx']}, drop_full {ec['drop_full']} "
               "(want both > 0: the target overflows)")
# The drain's ceiling: r x rate in wire bits, of which the payload's share is goodput.
per_pkt_wire = b["qps/wire_bytes_received"] / max(1, b["qps/xport/rx_data"])
ceiling = pct / 100 * rate * 1e6 * seg / per_pkt_wire
sent = a["qps/pkts_sent"] + a["qps/pkts_rtx"]
print(json.dumps({"cell": cell, "policy": policy, "r": pct / 100, "rate_mbps": rate,
                  "qps": count, "threshold_bytes": int(sys.argv[9]), "msgs": count * msgs, "seg_bytes": seg,
                  "goodput_mbps": round(b["qps/goodput_bps"] / 1e6, 1),
                  "ceiling_mbps": round(ceiling / 1e6, 1),
                  "goodput_share": round(b["qps/goodput_bps"] / ceiling, 3),
                  "pkts_sent": a["qps/pkts_sent"], "pkts_rtx": a["qps/pkts_rtx"],
                  "rtx_share": round(a["qps/pkts_rtx"] / max(1, sent), 4),
                  "rto_fired": a["rto_fired"],
                  "drop_full": ec.get("drop_full"), "drop_order": ec.get("drop_order"),
                  "iacks": ec.get("iacks"), "dacks": ec.get("dacks"), "nacks": ec.get("nacks"),
                  "max_queue_bytes": ec.get("max_queue_bytes"),
                  "congested_accepts": ec.get("congested_accepts"),
                  "window_ms": round(b["qps/goodput_window_ns"] / 1e6, 1),
                  "b_poll_gap_ms": round(b["p0/poll_gap_ns"] / 1e6, 1),
                  "a_poll_gap_ms": round(a["p0/poll_gap_ns"] / 1e6, 1),
                  "link_replays": b.get("p0/link/replays")}))
for x in bad:
    print(f"  {cell}: {x}", file=sys.stderr)
sys.exit(1 if bad else 0)
PY
        sl_fail "$cell: exit reports"
}

for cell in "${cells[@]}"; do
    case $cell in
        dack-[0-9]* | opt-[0-9]* | aimd-[0-9]* | timeout-[0-9]*) ;;
        *) sl_fail "unknown cell $cell (POLICY-R: dack, opt, aimd or timeout, r in percent)" ;;
    esac
    sl_log "cell $cell"
    run_cell "$cell"
done
sl_pass "endpoint congestion over memif: ${cells[*]}"
