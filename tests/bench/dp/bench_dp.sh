#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench-dp [--quick]: the daemon's data path against raw memif, as JSON lines (docs/transport.md,
# "The data path against raw memif").
#
# Each cell runs, one after the other on the same machine, with each process on its own core:
#   raw     two dpdk-testpmd over a memif pair, txonly on one side, rxonly on the other: what the
#           memif PMD moves with no protocol at all (frames of the cell's packet size)
#   sluice  two sluiced over a memif pair, host a's QPs sending the built-in message traffic of
#           the cell's size to host b's (reliability = link, the QPs' default program), b
#           checking every message byte for byte; the line rate is 100 Gbit/s (a memif has none;
#           every QP is paced at most at the line, so a 10 Gbit/s default would cap the cells)
#   api     (1-QP cells) the same two daemons serving applications ([api]) instead, and
#           sluice-perf write_bw -e of the cell's size from an application on a to one on b: what
#           the application channel (libsluice's rings, the lane half) leaves of the daemon's own;
#           twice: with perftest's defaults (tx depth 128, one completion in 100), and with the
#           deep queue a small-message bandwidth run is given (API_DEEP_ARGS, "-t 1024 -Q 512":
#           the tool sleeps once per 512 messages and its wake-up latency on the shared cores
#           does not drain the queue)
# and prints {"bench": "dp", "msg_bytes", "qps", "pps", "raw_pps", "pps_ratio", "gbps",
# "raw_gbps", "gbps_ratio", "seconds"} (and, 1-QP cells, "api_pps", "api_ratio", "api_deep_pps",
# "api_deep_ratio", "api_deep_args", "api_pairs") and "rounds": pps counts the packets of the
# messages b checked per second (a message takes ceil(msg_bytes / seg_bytes) packets) and raw_pps
# the frames testpmd's rxonly received per second; gbps counts message bytes, raw_gbps frame
# bytes. Rates are taken over the middle of the run (telemetry at two instants for sluice,
# testpmd's per-second Rx-pps for raw, its first two seconds left out).
# Cells: 64 B messages (64 B raw frames) and 4 KiB messages (one packet each, 4096 B raw frames,
# memif buffers of 4224 B on both runs: seg_of below), with 1 QP and with 1000 QPs. --quick: 1 QP,
# shorter runs. The shared cores' speed drifts between runs (raw memif has run at 5.9 and at
# 20 Mpps on the same machine within minutes), so every cell runs ROUNDS (3) rounds of raw then
# sluice back to back, a 1-QP cell also api and api-deep: rates are medians over the rounds, and
# each ratio the median of the rounds' ratios (sluice against its round's raw run, api against
# its round's sluice run). A ratio from one round says little: one 1000-QP cell of one round gave
# 3.2 against a raw run in its slow mode.
# --callgrind: instead, where one daemon's instructions go, per message and by module: one cell
# (64 B messages, 1 QP) over a veth pair with AF_PACKET (the memif PMD's control thread does not
# survive valgrind), host a under callgrind for 20 s of its run, then one JSON line per module
# {"bench": "dp-instr", "module", "instr_per_msg", "share"} (lib/<name>, drivers/<name>, DPDK
# libraries and PMDs, libc, ...) and a total: every instruction the process ran (start-up, idle
# polls and the ACKs it received included) over the messages it completed. Then, over the same
# veth, dpdk-testpmd txonly (64 B frames) under callgrind for 20 s as the raw sender, counted the
# same way: {"bench": "dp-instr-raw", "instr_per_pkt", "pkts"}, and the budget the goal implies
# {"bench": "dp-instr-budget", "instr_ratio", "goal_instr_ratio"}: at equal instructions per
# cycle, 50 % of raw's packets per second leaves the daemon's sender at most twice the raw
# sender's instructions a packet (docs/transport.md, "What the goals would take").
# Needs root (the harness's cleanup) and dpdk-testpmd. The build is SLUICE_BUILD_ROOT or ./build.
# meson writes the source tree's path here when it copies this script into the build.
export SLUICE_SOURCE_ROOT=${SLUICE_SOURCE_ROOT:-@SOURCE_ROOT@}
export SLUICE_BUILD_ROOT=${SLUICE_BUILD_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
source "$SLUICE_SOURCE_ROOT/tests/integration/lib/hosts.sh"
quick=0 callgrind=0
case "${1:-}" in
-h | --help)
    sed -n '3,/^# Needs root/p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
"" | --quick | --callgrind) ;;
*) sl_fail "unknown argument '$1' (--quick, --callgrind or --help)" ;;
esac
sl_require_root
[ "${1:-}" = --quick ] && quick=1
[ "${1:-}" = --callgrind ] && callgrind=1
secs=$((quick ? 2 : 5)) warm=1
command -v dpdk-testpmd >/dev/null || sl_fail "dpdk-testpmd not found (Debian package 'dpdk')"

# The payload per packet for a message size: the message itself up to 1024 B (a rate program's
# credit charges a whole segment per packet), 4096 B above: a 4 KiB message is one packet, as
# over RoCE's largest MTU. Such frames (about 4150 B) need mbufs with the room (room_of:
# mbuf_data_room, 128 B of headroom included) and memif buffers as large (memif_of: bsize, on
# both ends; the raw run gets the same buffers, and frames of the message's 4096 B). With the
# memif's default 2048-B buffers a 4 KiB message took 3 packets (2000 + 2000 + 96 B) and the cell
# measured per-packet costs at a third of the bytes.
seg_of() { if [ "$1" -gt 1024 ]; then echo 4096; else echo "$1"; fi; }
room_of() { if [ "$1" -gt 1024 ]; then echo 4352; else echo 2176; fi; }
memif_of() { if [ "$1" -gt 1024 ]; then echo ",bsize=4224"; fi; }

# raw FRAME_BYTES MSG_BYTES: rxonly's mean Rx-pps over the run's seconds after the first, with
# the memif buffers and mbufs of the message size's sluice run.
raw() {
    local frame=$1 sock=$SL_TMP/raw.sock common vdev
    common=(--no-huge -m 512 --no-pci --log-level=lib.eal:error)
    vdev="id=0,socket=$sock$(memif_of "$2")"
    # Each testpmd: its main lcore and its forwarding lcore on one core, the two on two cores.
    dpdk-testpmd --lcores "0@1,1@1" "${common[@]}" --file-prefix "$SL_ID-rx" \
        --vdev "net_memif0,role=server,$vdev" -- --total-num-mbufs 8192 \
        --mbuf-size="$(room_of "$2")" --forward-mode=rxonly --stats-period 1 \
        >"$SL_TMP/rx.log" 2>&1 &
    local rx=$!
    sleep 1
    dpdk-testpmd --lcores "0@0,1@0" "${common[@]}" --file-prefix "$SL_ID-tx" \
        --vdev "net_memif0,role=client,$vdev" -- --total-num-mbufs 8192 \
        --mbuf-size="$(room_of "$2")" --forward-mode=txonly --txpkts="$frame" --stats-period 1 \
        >"$SL_TMP/tx.log" 2>&1 &
    local tx=$!
    sleep $((secs + 3))
    kill -INT "$tx" "$rx" 2>/dev/null || true
    wait "$tx" "$rx" 2>/dev/null || true
    rm -rf "/var/run/dpdk/$SL_ID-rx" "/var/run/dpdk/$SL_ID-tx"
    # The receiving port's per-second Rx-pps: the first two (before the client, then the partial
    # second it connected in) left out.
    python3 - "$SL_TMP/rx.log" "$secs" <<'PY'
import re, sys
v = [int(x) for x in re.findall(r"Rx-pps:\s+(\d+)", open(sys.argv[1]).read())]
v = v[2:2 + int(sys.argv[2])]
if not v or max(v) == 0:
    sys.exit("testpmd rxonly received nothing")
print(sum(v) // len(v))
PY
}

# sluice MSG_BYTES QPS: messages b checked per second, over secs seconds after a warm-up.
sluice() {
    local msg=$1 qps=$2 seg h kind dir SL_MEMIF_ARGS
    seg=$(seg_of "$msg") SL_MEMIF_ARGS=$(memif_of "$msg")
    for h in a b; do
        kind=memif_client dir=send
        [ "$h" = b ] && kind=memif_server dir=recv
        sl_config "$h" "$kind" "mbuf_data_room = $(room_of "$msg")" \
            "[link]" "rate_mbps = 100000" "rtt_us = 10" \
            "[qp]" "count = $qps" "seg_bytes = $seg" "msg_min_bytes = $msg" \
            "msg_max_bytes = $msg" "msgs = 0" "direction = $dir" "check = yes" \
            "rto_us = 1s" "timeout_ms = 10s" >/dev/null
    done
    sl_start b "$SL_TMP/b.ini" memif_server -l 1
    sl_wait_ready b 10
    sl_start a "$SL_TMP/a.ini" memif_client -l 0
    sl_wait_peer_up a 10
    sleep "$warm"
    local c0 t0 c1 t1
    c0=$(sl_tel b /sluice/qps totals/checked) t0=$(date +%s%N)
    sleep "$secs"
    c1=$(sl_tel b /sluice/qps totals/checked) t1=$(date +%s%N)
    sl_stop a INT
    sl_stop b INT
    # Packets per second: each message takes ceil(msg / seg) packets.
    echo $(( (c1 - c0) * ((msg + seg - 1) / seg) * 1000000000 / (t1 - t0) ))
    unset "SL_PID[a]" "SL_PID[b]"
}

# api MSG_BYTES [FLAGS...]: messages per second sluice-perf write_bw moves between two
# applications, one on each daemon, over secs seconds (-D: a quarter of warm-up, the middle half
# measured).
api() {
    local msg=$1 seg h kind dur=$((secs * 2)) perf=$SLUICE_BUILD_ROOT/app/sluice-perf/sluice-perf
    local SL_MEMIF_ARGS
    seg=$(seg_of "$msg") SL_MEMIF_ARGS=$(memif_of "$msg")
    for h in a b; do
        kind=memif_client
        [ "$h" = b ] && kind=memif_server
        sl_config "$h" "$kind" "mbuf_data_room = $(room_of "$msg")" \
            "[link]" "rate_mbps = 100000" "rtt_us = 10" \
            "[api]" "enable = yes" "socket = $SL_TMP/api-$h.sock" "seg_bytes = $seg" \
            "rto_us = 1s" "timeout_ms = 10s" >/dev/null
    done
    sl_start b "$SL_TMP/b.ini" memif_server -l 1
    sl_wait_ready b 10
    sl_start a "$SL_TMP/a.ini" memif_client -l 0
    sl_wait_peer_up a 10
    "$perf" write_bw -e "${@:2}" -s "$msg" -D "$dur" -S "$SL_TMP/api-b.sock" -p 18515 \
        >"$SL_TMP/perf-b.out" 2>&1 &
    local srv=$!
    sleep 0.3
    "$perf" write_bw -e "${@:2}" -s "$msg" -D "$dur" -S "$SL_TMP/api-a.sock" -p 18515 \
        --out_json --out_json_file "$SL_TMP/perf.json" 127.0.0.1 >"$SL_TMP/perf-a.out" 2>&1 ||
        sl_fail "sluice-perf: $(cat "$SL_TMP/perf-a.out")"
    wait "$srv" || sl_fail "sluice-perf server: $(cat "$SL_TMP/perf-b.out")"
    sl_stop a INT
    sl_stop b INT
    unset "SL_PID[a]" "SL_PID[b]"
    python3 -c 'import json, sys; print(round(json.load(open(sys.argv[1]))["results"]["MsgRate"] * 1e6))' \
        "$SL_TMP/perf.json"
}

# Instructions per message by module of host a (the sender), from callgrind (see the top).
instructions() {
    local h kind dir
    sl_topo_veth
    for h in a b; do
        dir=send
        [ "$h" = b ] && dir=recv
        sl_config "$h" af_packet "[link]" "rate_mbps = 100000" "rtt_us = 10" \
            "[qp]" "count = 1" "seg_bytes = 64" "msg_min_bytes = 64" "msg_max_bytes = 64" \
            "msgs = 0" "direction = $dir" "check = yes" "rto_us = 1s" "timeout_ms = 10s" \
            >/dev/null
    done
    sl_start b "$SL_TMP/b.ini" af_packet -l 1
    sl_wait_ready b 10
    SL_WRAP="valgrind --tool=callgrind --callgrind-out-file=$SL_TMP/a.callgrind" \
        sl_start a "$SL_TMP/a.ini" af_packet -l 0 -- --duration-s 20
    wait "${SL_PID[a]}" || sl_fail "host a under callgrind exited with status $?"
    unset "SL_PID[a]"
    sl_stop b INT
    callgrind_annotate --auto=no --threshold=100 "$SL_TMP/a.callgrind" >"$SL_TMP/a.annotate"
    raw_profile
    python3 - "$SL_TMP/a.annotate" "$SL_TMP/a.out" "$SL_TMP/raw.annotate" "$SL_TMP/rawcg.log" <<'PY'
import collections, json, re, sys

def costs(annotate):
    """(instructions, where) of each function line of a callgrind_annotate listing."""
    for line in open(annotate):
        m = re.match(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)", line)
        if m and "PROGRAM TOTALS" not in line:
            yield int(m.group(1).replace(",", "")), m.group(2)

msgs = 0
for line in open(sys.argv[2]):
    o = json.loads(line)
    msgs = o.get("qps/msgs_completed", msgs)
if msgs == 0:
    sys.exit("host a completed no message under callgrind")
sent = [int(x) for x in re.findall(r"TX-total:\s+(\d+)", open(sys.argv[4]).read())]
if not sent or sent[-1] == 0:
    sys.exit("testpmd txonly under callgrind sent nothing")
tot = collections.Counter()
for n, where in costs(sys.argv[1]):
    k = re.search(r"/((?:lib|drivers|app)/[a-z_]+(?:/[a-z_]+)?)/[a-z_0-9]+\.[ch]:", where)
    pmd, lib = re.search(r"librte_net_([a-z_]+)", where), re.search(r"librte_([a-z_]+)", where)
    key = (k.group(1) if k else "dpdk pmd " + pmd.group(1) if pmd else
           "dpdk " + lib.group(1) if lib else "libc" if "libc.so" in where else
           "ld.so" if "ld-linux" in where else
           "dpdk headers, inlined" if "/include/dpdk/" in where else
           "compiler intrinsics, inlined" if "/gcc/" in where else "other")
    tot[key] += n
total = sum(tot.values())
for key, n in tot.most_common():
    if n / msgs >= 1:
        print(json.dumps({"bench": "dp-instr", "module": key, "instr_per_msg": round(n / msgs),
                          "share": round(n / total, 4)}))
print(json.dumps({"bench": "dp-instr", "module": "total", "instr_per_msg": round(total / msgs),
                  "msgs": msgs, "msg_bytes": 64, "qps": 1}))
per_pkt = sum(n for n, _ in costs(sys.argv[3])) / sent[-1]
print(json.dumps({"bench": "dp-instr-raw", "what": "dpdk-testpmd txonly, af_packet",
                  "instr_per_pkt": round(per_pkt), "pkts": sent[-1], "frame_bytes": 64}))
print(json.dumps({"bench": "dp-instr-budget", "instr_ratio": round(total / msgs / per_pkt, 2),
                  "goal_instr_ratio": 2.0}))
PY
}

# dpdk-testpmd txonly on host a's veth (64 B frames) under callgrind for 20 s: raw.annotate, and
# rawcg.log with the frames it sent (every instruction of the run over them, start-up included,
# as for the daemon).
raw_profile() {
    local pre=$SL_ID-rawcg
    ip netns exec "${SL_NS[a]}" timeout -s INT 20 valgrind --tool=callgrind \
        --callgrind-out-file="$SL_TMP/raw.callgrind" dpdk-testpmd -l 0,1 --no-huge -m 512 \
        --no-pci --file-prefix "$pre" --log-level=lib.eal:error \
        --vdev "net_af_packet0,iface=${SL_IF[a]}" -- --total-num-mbufs 8192 \
        --forward-mode=txonly --txpkts=64 --stats-period 5 >"$SL_TMP/rawcg.log" 2>&1 || true
    rm -rf "/var/run/dpdk/$pre"
    callgrind_annotate --auto=no --threshold=100 "$SL_TMP/raw.callgrind" >"$SL_TMP/raw.annotate" ||
        sl_fail "testpmd under callgrind left no profile: $(tail -3 "$SL_TMP/rawcg.log")"
}

if [ "$callgrind" -eq 1 ]; then
    command -v valgrind >/dev/null || sl_fail "valgrind not found (Debian package 'valgrind')"
    instructions
    SL_OK=1
    exit 0
fi

sl_topo_memif
cells=("64 1" "4096 1")
[ "$quick" -eq 0 ] && cells+=("64 1000" "4096 1000")
for cell in "${cells[@]}"; do
    read -r msg qps <<<"$cell"
    frame=$msg
    seg=$(seg_of "$msg")
    raw_l=() pps_l=() api_l=() deep_l=()
    for _ in $(seq "${ROUNDS:-3}"); do
        raw_l+=("$(raw "$frame" "$msg")")
        pps_l+=("$(sluice "$msg" "$qps")")
        if [ "$qps" -eq 1 ]; then
            api_l+=("$(api "$msg")")
            read -r -a deep <<<"${API_DEEP_ARGS:--t 1024 -Q 512}"
            deep_l+=("$(api "$msg" "${deep[@]}")")
        fi
    done
    python3 - "$msg" "$qps" "$frame" "$secs" "$seg" "${raw_l[*]}" "${pps_l[*]}" "${api_l[*]}" \
        "${deep_l[*]}" "${API_DEEP_ARGS:--t 1024 -Q 512}" <<'PY'
import json, statistics, sys
msg, qps, frame, secs, seg = map(int, sys.argv[1:6])
raw_l, pps_l, api_l, deep_l = ([int(x) for x in a.split()] for a in sys.argv[6:10])
pkts_per_msg = -(-msg // seg)
med = statistics.median
pps, raw_pps = int(med(pps_l)), int(med(raw_l))
gbps, raw_gbps = pps / pkts_per_msg * msg * 8 / 1e9, raw_pps * frame * 8 / 1e9
# Each ratio is the median of the rounds' ratios, each round's sluice run against the raw run
# just before it: the shared cores' speed drifts between rounds, within one far less.
pps_ratio = med(p / r for p, r in zip(pps_l, raw_l))
gbps_ratio = pps_ratio * msg / (pkts_per_msg * frame)
line = {"bench": "dp", "msg_bytes": msg, "qps": qps, "pps": pps, "raw_pps": raw_pps,
        "pps_ratio": round(pps_ratio, 4), "gbps": round(gbps, 3), "raw_gbps": round(raw_gbps, 3),
        "gbps_ratio": round(gbps_ratio, 4), "seconds": secs,
        "rounds": [{"raw_pps": r, "pps": p} for r, p in zip(raw_l, pps_l)]}
for key, msgs in (("api", api_l), ("api_deep", deep_l)):
    if msgs:
        line[key + "_pps"] = int(statistics.median(msgs)) * pkts_per_msg
        line[key + "_ratio"] = round(statistics.median(
            m * pkts_per_msg / p for m, p in zip(msgs, pps_l)), 4)
if api_l:
    line["api_deep_args"] = sys.argv[10]
    line["api_pairs"] = [{"pps": p, "api_pps": a * pkts_per_msg, "api_deep_pps": d * pkts_per_msg}
                         for p, a, d in zip(pps_l, api_l, deep_l)]
print(json.dumps(line))
PY
done
SL_OK=1
