#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Capture from a running sluiced (app/sluiced/capture.c), two hosts over memif with test
# traffic from a to b:
#   --capture: a writes every frame of its port to a pcapng file; the file holds exactly the
#   frames a's report counts (received: rx_pkts; sent: tx_pkts, the frames the driver took,
#   each once however often the driver refused it first), every one with EtherType 0x88B5,
#   and nothing was dropped (the capture's counters in a's report: dropped 0, written =
#   captured = the file's frames).
#   The dissector (usertools/wireshark/sluice.lua) decodes every frame with no malformed or
#   error item, and its counts of a's data, filler and control frames by key equal a's link
#   counters.
#   The transport's frames: QPs of three programs (dcqcn, reno, irn) each way, end to end
#   through net_impair's 1 % loss on both hosts, a capturing. The dissector decodes every frame,
#   and its counts of a's outbound data frames, inbound ACKs, NACKs and CNPs, and outbound
#   feedback frames equal a's transport counters (the first sends and retransmissions it built,
#   the ACKs, NACKs and CNPs its QPs took, the feedback frames it built); nothing the transport
#   received was refused, so every captured frame is one it counted. Here too the capture
#   dropped nothing, and its inbound frames equal a's rx_pkts: these frames come in bursts
#   (tens of thousands in a fraction of a second) that a capture writer kept off its core by
#   busy lcores must not lose.
#   dpdk-dumpcap: with a on hugepages, DPDK's own capture tool attaches to the running daemon
#   as a secondary process and writes its frames to pcapng.
# usage: test_capture.sh
source "$(dirname "$0")/../lib/hosts.sh"
sl_require_root
command -v tshark >/dev/null || sl_fail "tshark not found (Debian package 'tshark')"
command -v dpdk-dumpcap >/dev/null || sl_fail "dpdk-dumpcap not found (Debian package 'dpdk')"
sl_topo_memif

traffic=("[traffic]" "mode = send" "rate_mbps = 100" "[link]" "keepalive_us = 500")
count() { tshark -r "$1" -Y "$2" -T fields -e frame.number 2>/dev/null | wc -l; }

# 1. --capture, without hugepages.
sl_start b "$(sl_config b memif_server "[traffic]" "mode = check")" memif_server
sl_wait_ready b 10
sl_start a "$(sl_config a memif_client "${traffic[@]}")" memif_client -- --capture "$SL_TMP/a.pcapng"
# Started (EAL and its memory take seconds on a loaded machine), then the link within 5 s, as
# with dpdk-dumpcap below: after start-up the link takes 1.8-3 s here on a busy 2-core machine
# (memif connects, the link initializes; each telemetry poll is a Python process).
sl_wait_ready a 10
sl_wait_peer_up a 5
sleep 1
sl_stop a INT
sl_stop b TERM
# Fields of a's exit report, on one line (one Python for all: each takes a while on a busy
# machine); a field the report lacks fails the test (call it as x=$(report_fields ...)).
report_fields() {
    python3 - "$SL_TMP/a.out" "$@" <<'PY' || sl_fail "a's report: see above"
import json, sys
rep = {k: v for l in open(sys.argv[1]) if l.startswith("{") for k, v in json.loads(l).items()}
missing = [k for k in sys.argv[2:] if k not in rep]
if missing:
    sys.exit("no field " + ", ".join(missing) + " in " + sys.argv[1])
print(" ".join(str(rep[k]) for k in sys.argv[2:]))
PY
}
# The capture's counters, logged and in a's exit report: nothing dropped, every frame captured
# is in the file, which holds $1 frames (frames held back for TX are not lost: the lane offers
# them again).
check_capture_counters() {
    local total=$1 line captured dropped held written
    line=$(grep 'capture:' "$SL_TMP/a.log") || sl_fail "a logged no capture counters"
    sl_log "a: $line"
    line=$(report_fields capture/captured capture/dropped capture/held capture/written)
    read -r captured dropped held written <<<"$line"
    sl_log "a: capture report: $captured captured, $dropped dropped, $held held back, $written written"
    [ "$dropped" -eq 0 ] || sl_fail "capture dropped $dropped frames"
    [ "$written" -eq "$captured" ] || sl_fail "captured $captured, written $written"
    [ "$total" -eq "$written" ] || sl_fail "the file holds $total frames, the daemon wrote $written"
}
# The file is read once, with the dissector (each tshark pass takes seconds on a loaded
# machine): per frame its direction (pcapng's flag: 0x00000001 inbound, 0x00000002 outbound),
# EtherType, and what the dissector made of it.
lua=(-X "lua_script:$SL_SRC/usertools/wireshark/sluice.lua")
tshark "${lua[@]}" -r "$SL_TMP/a.pcapng" -T fields -E separator=/t \
    -e frame.packet_flags_direction -e eth.type -e _ws.malformed -e _ws.expert.severity \
    -e sluice -e sluice.kind -e sluice.key >"$SL_TMP/a.fields" 2>/dev/null ||
    sl_fail "tshark could not read the capture"
total=$(wc -l <"$SL_TMP/a.fields")
check_capture_counters "$total"
sluice=$(awk -F'\t' '$2 == "0x88b5"' "$SL_TMP/a.fields" | wc -l)
[ "$sluice" -eq "$total" ] || sl_fail "$((total - sluice)) captured frames are not sluice frames"
in=$(awk -F'\t' '$1 == "0x00000001"' "$SL_TMP/a.fields" | wc -l)
out=$(awk -F'\t' '$1 == "0x00000002"' "$SL_TMP/a.fields" | wc -l)
line=$(report_fields p0/rx_pkts p0/tx_pkts p0/tx_backlog_waits)
read -r rx tx waits <<<"$line"
sl_log "a: captured $in in / $out out; report rx_pkts $rx, tx_pkts $tx, tx_backlog_waits $waits"
[ "$in" -eq "$rx" ] || sl_fail "captured $in inbound frames, a received $rx"
# The capture keeps a frame to send once the driver took it: a frame the driver refused (and
# the lane offered again) is in the file once, however many polls it waited (waits).
[ "$out" -eq "$tx" ] || sl_fail "captured $out outbound frames, a sent $tx"

# The dissector's view of the same frames: a frame is bad if it is malformed, carries an
# expert item of severity error (0x00800000) or more, or is not decoded as sluice; outbound
# frames are counted by kind and by control key (a frame matches a key if any of its keys is it,
# as the display filter sluice.key == K does).
sl_report_line() { python3 -c 'import json, sys
print(json.dumps({k: v for l in open(sys.argv[1]) if l.startswith("{")
                  for k, v in json.loads(l).items()}))' "$SL_TMP/a.out"; }
python3 - "$SL_TMP/a.fields" "$(sl_report_line)" <<'PY' || sl_fail "dissector, link traffic: see above"
import json, sys
rep = json.loads(sys.argv[2])
bad, n = 0, {}
pairs = [("sluice.kind == 1", "kind", 1, "tx_data"), ("sluice.kind == 2", "kind", 2, "tx_filler"),
         ("sluice.key == 0x0010", "key", 0x0010, "tx_pause_req"),
         ("sluice.key == 0x1000", "key", 0x1000, "tx_retrans_req"),
         ("sluice.key == 0x0100", "key", 0x0100, "tx_leave"),
         ("sluice.key == 0x0400", "key", 0x0400, "tx_leave_ack")]
ints = lambda v: [int(x, 0) for x in v.split(",") if x]
for line in open(sys.argv[1]):
    d, _, malformed, sev, proto, kind, key = line.rstrip("\n").split("\t")[:7]
    if malformed or any(x >= 0x00800000 for x in ints(sev)) or not proto:
        bad += 1
    if d != "0x00000002":
        continue
    have = {"kind": ints(kind), "key": ints(key)}
    for filt, field, value, counter in pairs:
        if value in have[field]:
            n[counter] = n.get(counter, 0) + 1
ok = bad == 0
if bad:
    print(f"  dissector: {bad} frames malformed, flagged as errors or not decoded")
for filt, field, value, counter in pairs:
    got, want = n.get(counter, 0), rep["p0/link/" + counter]
    if got != want:
        print(f"  dissector: {got} outbound frames match '{filt}', a's {counter} is {want}")
        ok = False
sys.exit(0 if ok else 1)
PY
sl_log "dissector: every frame decoded, a's $(report_fields p0/link/tx_data) data frames and control counts match"

# 1b. The transport's frames, end to end through 1 % loss each way. net_impair is built into
# sluiced or loaded from the build (as test_qp_two_hosts.sh does).
load=(-d "$SL_BUILD/drivers/net/impair/librte_net_impair.so")
grep -q "/sluice/impair/set" "$SL_SLUICED" && load=()
qp=("[link]" "reliability = end-to-end" "mode = extended" "keepalive_us = 100"
    "[qp]" "count = 3" "proto = dcqcn,reno,irn" "msg_min_bytes = 1" "msg_max_bytes = 16KiB"
    "msgs = 300" "direction = both" "rto_us = 20ms" "timeout_ms = 10s" "seed = 11")
sl_config a memif_client "${qp[@]}" >/dev/null
sl_config b memif_server "${qp[@]}" >/dev/null
sed -i 's/^device = .*/device = net_impair0/' "$SL_TMP/a.ini" "$SL_TMP/b.ini"
sl_start b "$SL_TMP/b.ini" memif_server "${load[@]}" \
    --vdev "net_impair0,dev=$(sl_device memif_server),loss=0.01,seed=3" -- --exit-when-done
sl_wait_ready b 10
sl_start a "$SL_TMP/a.ini" memif_client "${load[@]}" \
    --vdev "net_impair0,dev=$(sl_device memif_client),loss=0.01,seed=5" -- --exit-when-done \
    --capture "$SL_TMP/qp.pcapng"
sl_wait_exit a 60
sl_wait_exit b 10
# One pass with the dissector over the whole file (in extended mode, which end-to-end
# reliability uses): per frame its direction, the transport opcode of a link data frame, and
# whether it decoded. Each frame counts as often as it is in the file: a frame the port carried
# twice would be a frame sent twice (end to end, the link replays nothing; a transport
# retransmission is a new link frame).
tshark "${lua[@]}" -o sluice.extended:TRUE -r "$SL_TMP/qp.pcapng" -T fields -E separator=/t \
    -e frame.packet_flags_direction -e sluice.x.opcode -e _ws.malformed \
    -e _ws.expert.severity -e sluice.kind -e sluice.x.qpn -e sluice.x.token -e sluice.x.psn -e sluice.xc.count \
    >"$SL_TMP/qp.fields" 2>/dev/null ||
    sl_fail "tshark could not dissect the capture"
check_capture_counters "$(wc -l <"$SL_TMP/qp.fields")"
# Every frame the port received is in the file, once (outbound ones are checked below).
qp_in=$(awk -F'\t' '$1 == "0x00000001"' "$SL_TMP/qp.fields" | wc -l)
qp_rx=$(report_fields p0/rx_pkts)
[ "$qp_in" -eq "$qp_rx" ] || sl_fail "QP traffic: captured $qp_in inbound frames, a received $qp_rx"
# The QPs' counters count their own frames; the connection exchange's (on QPN [qp] count, token
# 0: docs/wire-format.md, "Connections") are counted apart, and every frame of a QP of the
# traffic carries its connection's token, never 0, from a first PSN drawn at random.
python3 - "$SL_TMP/qp.fields" "$(sl_report_line)" 3 <<'PY' || sl_fail "dissector, QP traffic: see above"
import json, sys
rep, exchange_qpn = json.loads(sys.argv[2]), int(sys.argv[3])
n, bad, xc, tokens, first_psn = {}, 0, {}, {}, {}
for line in open(sys.argv[1]):
    d, op, malformed, sev, kind, qpn, token, psn, offered = \
        (line.rstrip("\n").split("\t") + [""] * 9)[:9]
    if malformed or any(int(x, 0) >= 0x00800000 for x in sev.split(",") if x) or not kind:
        bad += 1
    if not op:
        continue  # a filler or a control frame
    op, qpn, token = int(op, 0), int(qpn, 0), int(token, 0)
    cls = "data" if op <= 0x10 else {0x11: "ack", 0x12: "nack", 0x13: "cnp"}.get(op, "other_fb")
    key = ("out" if d.endswith("2") else "in") + "_" + cls
    if qpn == exchange_qpn:
        xc[key] = xc.get(key, 0) + 1
        tokens.setdefault("exchange", set()).add(token)
        if offered:  # an offer, decoded: it names the 3 QPs
            xc["offer_" + key] = xc.get("offer_" + key, 0) + (int(offered) == 3)
        continue
    n[key] = n.get(key, 0) + 1
    tokens.setdefault("traffic", set()).add(token)
    if key == "out_data":
        first_psn.setdefault(qpn, int(psn, 0))
fb_out = sum(v for k, v in list(n.items()) + list(xc.items())
             if k.startswith("out_") and k != "out_data")
ok = tokens.get("exchange") == {0} and 0 not in tokens.get("traffic", {0})
print(f"  exchange QP {exchange_qpn}: {xc}, tokens {sorted(tokens.get('exchange', []))}; "
      f"the traffic's tokens {len(tokens.get('traffic', []))} distinct, none 0: "
      f"{0 not in tokens.get('traffic', {0})}; first PSNs {first_psn}")
# our offer sent and acknowledged, the peer's arrived; first PSNs drawn (all 0: 2^-96)
ok &= min(xc.get(k, 0) for k in ("out_data", "in_ack", "in_data", "offer_out_data",
                                   "offer_in_data")) >= 1
ok &= len(first_psn) == 3 and any(first_psn.values())
checks = [("outbound data frames", n.get("out_data", 0),
           rep["qps/pkts_sent"] + rep["qps/pkts_rtx"], "pkts_sent + pkts_rtx"),
          ("inbound ACKs", n.get("in_ack", 0), rep["qps/acks"], "acks"),
          ("inbound NACKs", n.get("in_nack", 0), rep["qps/nacks"], "nacks"),
          ("inbound CNPs", n.get("in_cnp", 0), rep["qps/cnps"], "cnps"),
          ("outbound feedback frames", fb_out, rep["qps/xport/tx_fb"], "xport/tx_fb")]
ok &= bad == 0 and n.get("in_nack", 0) > 0 and rep["qps/checked"] == 900
for what, got, want, counter in checks:
    print(f"  {what}: {got} in the capture, a's {counter} {want}")
    ok &= got == want
print(f"  frames malformed, flagged or not decoded: {bad}; a checked {rep['qps/checked']} of 900")
for k in ("rx_bad_header", "rx_bad_qpn", "rx_bad_token", "rx_fb_out_of_range",
          "rx_bad_sequence", "rx_unsupported"):
    ok &= rep["qps/xport/" + k] == 0  # every received frame was one the transport counted
sys.exit(0 if ok else 1)
PY
sl_log "dissector, QP traffic: every transport frame decoded; data, ACK, NACK, CNP and feedback counts equal a's counters; the QPs' tokens and first PSNs came from the exchange"

# 2. dpdk-dumpcap against a running daemon on hugepages (a secondary process cannot map
# --no-huge memory). Hugepages are reserved for the test and given back.
pages_before=$(cat /proc/sys/vm/nr_hugepages)
restore_pages() { echo "$pages_before" >/proc/sys/vm/nr_hugepages; }
mkdir -p "$SL_TMP/huge"
mount -t hugetlbfs -o pagesize=2M nodev "$SL_TMP/huge" || sl_fail "cannot mount hugetlbfs"
SL_AT_EXIT+=('umount "$SL_TMP/huge" 2>/dev/null' restore_pages)
echo $((pages_before + 160)) >/proc/sys/vm/nr_hugepages
[ "$(cat /proc/sys/vm/nr_hugepages)" -ge $((pages_before + 160)) ] ||
    sl_fail "cannot reserve 160 hugepages of 2 MB"
sl_start b "$(sl_config b memif_server "[traffic]" "mode = check")" memif_server
sl_wait_ready b 10
# A fixed base address, so dpdk-dumpcap (a secondary) maps the daemon's memory where the daemon
# has it: left to chance, the two address spaces can collide (an ASan build's shadow
# memory makes it likely); 0x200000000000 is free in both.
SL_EAL_MEM="--huge-dir $SL_TMP/huge -m 256" \
    sl_start a "$(sl_config a memif_client "${traffic[@]}")" memif_client \
    --base-virtaddr 0x200000000000
sl_wait_ready a 10
sl_wait_peer_up a 5
timeout 20 dpdk-dumpcap --file-prefix "$(sl_prefix a)" -i net_memif0 -c 500 -q \
    -w "$SL_TMP/dumpcap.pcapng" >"$SL_TMP/dumpcap.log" 2>&1 ||
    { cat "$SL_TMP/dumpcap.log" >&2; sl_fail "dpdk-dumpcap failed"; }
sl_stop a INT
sl_stop b TERM
total=$(count "$SL_TMP/dumpcap.pcapng" "frame")
sluice=$(count "$SL_TMP/dumpcap.pcapng" "eth.type == 0x88b5")
sl_log "dpdk-dumpcap: $total frames, $sluice of them sluice frames"
# (dumpcap stops after the burst that reaches its count, so it may write a few more.)
[ "$total" -ge 500 ] || sl_fail "dpdk-dumpcap wrote $total frames, asked for 500"
[ "$sluice" -eq "$total" ] || sl_fail "dpdk-dumpcap: $((total - sluice)) frames are not sluice frames"
sl_pass "capture: --capture holds every frame a sent and received ($in in, $out out); dpdk-dumpcap captured $total from the running daemon"
