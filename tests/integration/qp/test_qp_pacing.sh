#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Pacing on the wire: QPs with rate limits ([qp] rate_limit_mbps) between two sluiced hosts over
# memif, host a sending 4 KiB messages for about RUN_S seconds, host b receiving. From b's exit
# report, each QP's rate on the wire is its goodput (message bytes over its first to last
# delivery, receive timestamps) times wire_bytes_received / bytes_received (every data frame's
# transport header, link header, Ethernet header, FCS, preamble and gap over its payload). It
# must be within TOL (1 %) of the QP's limit over a delivery span of at least 1 s, above or
# below. The sender's lcore is descheduled for several % of the run on shared cores (each poll
# more than 100 us after the previous one is counted: p0/poll_gaps, p0/poll_gap_ns, printed);
# a QP that fell behind its rate then catches up ([qp] pace_catchup_us, 10 ms by default), so
# that time is not lost.
# usage: test_qp_pacing.sh limits|mixed
#   limits: 3 QPs of reno (a window program, paced at its limit only) at 10, 100 and 1000 Mbit/s;
#   mixed:  100 QPs, reno and dcqcn alternating (dcqcn starts at 10 Gbit/s, so its limit is what
#           holds it), at 1, 2, 5, 10 and 20 Mbit/s (QPN i takes the (i mod 5)-th), 760 Mbit/s in
#           all, below the 10 Gbit/s line.
# Each host runs single-lcore on a core of its own. The memif rings have 2^14 slots (rsize=14,
# the PMD's default is 2^10): a sender whose TX ring is full stops producing, and a 1024-slot
# ring fills in 9 ms at 1 Gbit/s when the receiver is descheduled. The RTO is 1 s: the link loses
# nothing, and an RTO of 1 ms fired hundreds of times here when a daemon was descheduled, each
# collapsing a window. The window (2048 packets, 18 ms at 1 Gbit/s) and the send queue (sluiced
# sizes it from the limits: 512 messages here) cover the catch-up and the RTT at the fastest
# limit: a QP whose every message is in flight while b's lcore is away runs dry on schedule, and
# idling earns no credit (docs/pacer.md, "Catch-up"). a's pacer counts what no catch-up could
# make up (qps/pacer/catchup_lost_ns: stalls beyond the catch-up; qps/pacer/idle_ns: time the
# QPs ran dry on schedule), printed below.
source "$(dirname "$0")/../lib/hosts.sh"
sl_require_root
case_name=${1:?case}
RUN_S=${RUN_S:-3}
TOL=${TOL:-0.01}
case $case_name in
    limits) COUNT=3 PROTOS=reno LIMITS=10,100,1000 ;;
    mixed) COUNT=100 PROTOS=reno,dcqcn LIMITS=1,2,5,10,20 ;;
    *) sl_fail "unknown case $case_name" ;;
esac
export SL_MEMIF_ARGS=,rsize=14

sl_topo_memif
for h in a b; do
    kind=memif_client dir=send
    [ "$h" = b ] && kind=memif_server dir=recv
    sl_config "$h" "$kind" "[link]" "rate_mbps = 10000" \
        "[qp]" "count = $COUNT" "proto = $PROTOS" "rate_limit_mbps = $LIMITS" \
        "seg_bytes = 1024" "msg_min_bytes = 4KiB" "msg_max_bytes = 4KiB" "msgs = 0" \
        "direction = $dir" "window_pkts = 2048" "rto_us = 1s" "timeout_ms = 10s" "seed = 7" \
        >/dev/null
done
sl_start b "$SL_TMP/b.ini" memif_server -l 1
sl_wait_ready b 10
sl_start a "$SL_TMP/a.ini" memif_client -l 0
sl_wait_ready a 10
sl_wait_peer_up a 10
sleep "$RUN_S"
sl_stop a INT
sleep 0.2
sl_stop b TERM

python3 - "$SL_TMP" "$COUNT" "$LIMITS" "$TOL" <<'PY' || sl_fail "rates on the wire"
import json, sys
tmp, count, limits, tol = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(","), \
    float(sys.argv[4])


pacer = {}


def report(h):
    global pacer
    qps, port = {}, None
    for line in open(f"{tmp}/{h}.out"):
        o = json.loads(line)
        if "qp" in o:
            qps[o["qp"]] = o
        elif "p0/poll_gap_ns" in o:
            port = o
        elif "qps/pacer/idle_ns" in o:
            pacer = o
    return qps, port


qps, _ = report("b")
sent, a_port = report("a")
if len(qps) != count or len(sent) != count or a_port is None:
    sys.exit(f"{len(qps)} receiving and {len(sent)} sending QP lines, not {count}, "
             f"or no port line from a")
bad, worst = [], 0.0
for n in range(count):
    q, s = qps[n], sent[n]
    limit = float(limits[n % len(limits)]) * 1e6
    if s["pace_bps"] != int(limit):
        bad.append(f"qp {n}: sender's pace_bps {s['pace_bps']}, not its limit {int(limit)}")
    if q["checked"] == 0 or q["goodput_bps"] == 0:
        bad.append(f"qp {n}: nothing checked")
        continue
    span_s = q["bytes_received"] * 8 / q["goodput_bps"]
    stalled = a_port["p0/poll_gap_ns"] / 1e9 / span_s
    wire = q["goodput_bps"] * q["wire_bytes_received"] / q["bytes_received"]
    err = wire / limit - 1
    worst = max(worst, abs(err))
    line = (f"qp {n:3} {q['proto']:6} limit {limit / 1e6:7.1f} Mbit/s: wire {wire / 1e6:9.3f} "
            f"Mbit/s ({err * 100:+.3f} %) over {span_s:.2f} s, sender stalled "
            f"{stalled * 100:.2f} % of it, {q['checked']} messages checked")
    ok = -tol <= err <= tol
    if n < 5 or n >= count - 2 or not ok:
        print(line)
    if span_s < 1.0:
        bad.append(f"qp {n}: delivery span {span_s:.2f} s, below 1 s")
    if not ok:
        bad.append(line)
    for k in ("out_of_order", "bad_content", "bad_length", "failed", "qp_failed"):
        if q[k] != 0 or s[k] != 0:
            bad.append(f"qp {n}: {k} = {q[k]} (b), {s[k]} (a)")
print(f"worst error {worst * 100:.3f} % over {count} QPs; sender: "
      f"{a_port['p0/poll_gaps']} polls after a gap, {a_port['p0/poll_gap_ns'] / 1e6:.1f} ms in all; "
      f"pacer: {pacer.get('qps/pacer/catchup_lost_ns', 0) / 1e6:.1f} ms beyond the catch-up, QPs "
      f"dry on schedule {pacer.get('qps/pacer/idle_ns', 0) / 1e6:.1f} ms")
if bad:
    sys.exit("\n".join(bad))
PY
sl_pass "$case_name: $COUNT QPs, each within $(python3 -c "print($TOL * 100)") % of its limit ($LIMITS Mbit/s) on the wire"
