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
# --callgrind: instead, where each daemon's instructions go, per message and by module, in a
# steady window: over a veth pair with AF_PACKET (the memif PMD's control thread does not survive
# valgrind), the measured host under callgrind with instrumentation off through start-up and
# CG_WARM (3) s of traffic, then on for CG_SECS (10) s; telemetry at the window's two ends gives
# the messages a completed or b checked in it. Each cell runs twice: the sender (host a) measured
# while b runs at full speed, then the receiver (host b, checking every byte) with a under
# callgrind as well, so that a sends no faster than b takes in. Cells (NAME: message bytes x
# QPs): 64B-1qp, 64B-1qp-pacer (the same with [qp] line_bypass = no: the pacer times every
# packet, the baseline of the line bypass), 64B-1000qp, 64B-1000qp-half-limited (every other QP
# held to 1 Gbit/s: the pacer's wheel at work) and 4KiB-1qp (one 4096-B segment a message, jumbo
# frames on the veth); CG_CELLS (names, space-separated) runs only those, and CG_KEEP (a
# directory) keeps each side's callgrind_annotate listing there (NAME.send.annotate, ...).
# Per cell, one JSON line per module {"bench": "dp-instr", "cell", "module", "instr_per_msg",
# "share"} (lib/<name>, drivers/<name>, DPDK libraries and PMDs, libc, ...) for the sender and
# likewise "dp-instr-recv" for the receiver, then their totals (every instruction the process
# ran in the window, idle polls, telemetry answers and the feedback it handled included, over its
# messages); the sender's total line {"bench": "dp-instr", "cell", "module": "total",
# "instr_per_msg", "recv_instr_per_msg", "msgs", "recv_msgs", "msg_bytes", "qps",
# "rate_limit_mbps", "line_bypass", "window_s"} and, where a window saw the link replay or begin a
# new session, "send_note" / "recv_note" (a new session: that side's figure is null, left out);
# with both 64B-1qp cells, {"bench": "dp-instr-ratio", "cell": "64B-1qp", "baseline":
# "64B-1qp-pacer", "send_ratio", "recv_ratio"}. Then dpdk-testpmd
# txonly (64 B frames) on the same veth under callgrind, counted over the same kind of window:
# {"bench": "dp-instr-raw", "instr_per_pkt", "pkts"}, and the budget the goal implies
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
CG_WARM=${CG_WARM:-3} CG_SECS=${CG_SECS:-10} # --callgrind: seconds before the window, and in it
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

# One end of a profile's window: a's messages completed, b's checked, both hosts' QP restarts
# (a new link session) and link replays.
window_ends() {
    echo "$(sl_tel a /sluice/qps totals/msgs_completed) $(sl_tel b /sluice/qps totals/checked)" \
        "$(sl_tel a /sluice/qps totals/lane/qp_restarts) $(sl_tel b /sluice/qps totals/lane/qp_restarts)" \
        "$(sl_tel a /sluice/link replays) $(sl_tel b /sluice/link replays)"
}

# profile_cell SIDE NAME MSG_BYTES QPS [LIMITS]: hosts a (sending) and b (receiving) of one cell
# over the veth pair, the measured one under callgrind with instrumentation off: SIDE send, a
# (b runs at full speed and never falls behind); recv, b, and a too, so that it sends no faster
# than a receiver under callgrind takes in (a receiver overrun loses frames in AF_PACKET's ring,
# and the figure would count the link's replays). Once b has checked messages for CG_WARM s,
# the hosts under callgrind count for CG_SECS s (callgrind_control -i on / off), and telemetry at
# the window's two ends (window_ends) goes to NAME.SIDE.window. LIMITS: the QPs'
# rate_limit_mbps list (0: the line). Leaves NAME.SIDE.annotate, the measured host's profile.
profile_cell() {
    local side=$1 name=$2 msg=$3 qps=$4 limits=${5:-0} bypass=${6:-yes} seg h dir room
    local SL_AF_PACKET_ARGS=
    local -a wrapped=(a)
    [ "$side" = recv ] && wrapped=(a b)
    seg=$(seg_of "$msg") room=$(room_of "$msg")
    # A frame of a 4 KiB segment needs jumbo frames on the veth and AF_PACKET ring frames of 8 KiB
    # (a ring frame holds its header and sockaddr too: at 4256 B the transmit ring never drained),
    # and an mbuf as large as a ring frame.
    if [ "$msg" -gt 1024 ]; then
        SL_AF_PACKET_ARGS=",blocksz=8192,framesz=8192" room=8320
    fi
    for h in a b; do
        ip -n "${SL_NS[$h]}" link set "${SL_IF[$h]}" mtu $((msg > 1024 ? 9000 : 1500))
        dir=send
        [ "$h" = b ] && dir=recv
        sl_config "$h" af_packet "mbuf_data_room = $room" \
            "[link]" "rate_mbps = 100000" "rtt_us = 10" \
            "[qp]" "count = $qps" "seg_bytes = $seg" "msg_min_bytes = $msg" \
            "msg_max_bytes = $msg" "msgs = 0" "direction = $dir" "check = yes" \
            "rate_limit_mbps = $limits" "line_bypass = $bypass" "rto_us = 1s" \
            "timeout_ms = 30s" >/dev/null
        # deep receive rings ([port.0] is the file's last section): the host under callgrind
        # takes in what a full-speed peer sends (1000 QPs' feedback) in bursts between its polls
        echo "rx_desc = 4096" >>"$SL_TMP/$h.ini"
    done
    for h in b a; do
        case " ${wrapped[*]} " in
        *" $h "*)
            SL_WRAP="valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=$SL_TMP/$h.callgrind" \
                sl_start "$h" "$SL_TMP/$h.ini" af_packet ;;
        *) sl_start "$h" "$SL_TMP/$h.ini" af_packet ;;
        esac
        sl_wait_ready "$h" 120
    done
    sl_wait_peer_up a 120
    for _ in $(seq 1200); do
        [ "$(sl_tel b /sluice/qps totals/checked)" -gt 0 ] && break
        sleep 0.1
    done
    [ "$(sl_tel b /sluice/qps totals/checked)" -gt 0 ] || sl_fail "$name: b checked nothing"
    sleep "$CG_WARM"
    for h in "${wrapped[@]}"; do callgrind_control -i on "${SL_PID[$h]}" >/dev/null; done
    window_ends >"$SL_TMP/$name.$side.window"
    sleep "$CG_SECS"
    window_ends >>"$SL_TMP/$name.$side.window"
    for h in "${wrapped[@]}"; do callgrind_control -i off "${SL_PID[$h]}" >/dev/null; done
    for h in a b; do
        kill -INT "${SL_PID[$h]}"
        wait "${SL_PID[$h]}" || sl_fail "$name: host $h exited with status $?"
        unset "SL_PID[$h]"
    done
    h=a
    [ "$side" = recv ] && h=b
    callgrind_annotate --auto=no --threshold=100 "$SL_TMP/$h.callgrind" \
        >"$SL_TMP/$name.$side.annotate"
}

# The frames testpmd has sent so far: the last of its periodic port statistics (TX-packets).
tx_total() { grep -oE "TX-packets: +[0-9]+" "$SL_TMP/rawcg.log" | tail -1 | grep -oE "[0-9]+$"; }

# dpdk-testpmd txonly on host a's veth (64 B frames) under callgrind, counted like the daemon:
# instrumentation on from CG_WARM s after its start for CG_SECS s, the frames it sent in that
# window from its port statistics at the window's two ends. Leaves raw.annotate, raw.window.
raw_profile() {
    local pre=$SL_ID-rawcg pid s0 s1
    ip netns exec "${SL_NS[a]}" valgrind --tool=callgrind --instr-atstart=no \
        --callgrind-out-file="$SL_TMP/raw.callgrind" dpdk-testpmd -l 0,1 --no-huge -m 512 \
        --no-pci --file-prefix "$pre" --log-level=lib.eal:error \
        --vdev "net_af_packet0,iface=${SL_IF[a]}" -- --total-num-mbufs 8192 \
        --forward-mode=txonly --txpkts=64 --stats-period 1 >"$SL_TMP/rawcg.log" 2>&1 &
    pid=$!
    sleep "$CG_WARM"
    [ -n "$(tx_total)" ] || sleep "$CG_WARM"
    callgrind_control -i on "$pid" >/dev/null
    s0=$(tx_total)
    sleep "$CG_SECS"
    s1=$(tx_total)
    callgrind_control -i off "$pid" >/dev/null
    kill -INT "$pid"
    wait "$pid" || true
    rm -rf "/var/run/dpdk/$pre"
    [ -n "$s0" ] && [ -n "$s1" ] || sl_fail "testpmd under callgrind printed no statistics"
    echo "$((s1 - s0))" >"$SL_TMP/raw.window"
    callgrind_annotate --auto=no --threshold=100 "$SL_TMP/raw.callgrind" >"$SL_TMP/raw.annotate" ||
        sl_fail "testpmd under callgrind left no profile: $(tail -3 "$SL_TMP/rawcg.log")"
}

# Instructions per message by module, sender and receiver, for each cell (see the top).
instructions() {
    local cell
    local -a all=("64B-1qp 64 1" "64B-1qp-pacer 64 1 0 no" "64B-1000qp 64 1000"
        "64B-1000qp-half-limited 64 1000 0,1000" "4KiB-1qp 4096 1") cells=()
    for cell in "${all[@]}"; do
        [ -z "${CG_CELLS:-}" ] || [[ " $CG_CELLS " == *" ${cell%% *} "* ]] && cells+=("$cell")
    done
    [ "${#cells[@]}" -gt 0 ] || sl_fail "CG_CELLS names no cell: $CG_CELLS"
    sl_topo_veth
    for cell in "${cells[@]}"; do
        # shellcheck disable=SC2086
        profile_cell send $cell
        # shellcheck disable=SC2086
        profile_cell recv $cell
    done
    raw_profile
    if [ -n "${CG_KEEP:-}" ]; then
        mkdir -p "$CG_KEEP" && cp "$SL_TMP"/*.annotate "$CG_KEEP"/ ||
            sl_fail "cannot keep the listings in $CG_KEEP"
    fi
    python3 - "$SL_TMP" "$CG_SECS" "${cells[@]}" <<'PY'
import collections, json, re, sys

def costs(annotate):
    """(instructions, where) of each function line of a callgrind_annotate listing."""
    for line in open(annotate):
        m = re.match(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)", line)
        if m and "PROGRAM TOTALS" not in line:
            yield int(m.group(1).replace(",", "")), m.group(2)

def modules(annotate):
    tot = collections.Counter()
    for n, where in costs(annotate):
        k = re.search(r"/((?:lib|drivers|app)/[a-z_]+(?:/[a-z_]+)?)/[a-z_0-9]+\.[ch]:", where)
        pmd, lib = re.search(r"librte_net_([a-z_]+)", where), re.search(r"librte_([a-z_]+)", where)
        key = (k.group(1).removesuffix("/private") if k else
               "dpdk pmd " + pmd.group(1) if pmd else
               "dpdk " + lib.group(1) if lib else "libc" if "libc.so" in where else
               "ld.so" if "ld-linux" in where else
               "dpdk headers, inlined" if "/include/dpdk/" in where else
               "compiler intrinsics, inlined" if "/gcc/" in where else "other")
        tot[key] += n
    return tot

tmp, window_s = sys.argv[1], int(sys.argv[2])
raw_pkts = int(open(f"{tmp}/raw.window").read())
if raw_pkts == 0:
    sys.exit("testpmd txonly under callgrind sent nothing in its window")
per_pkt = sum(n for n, _ in costs(f"{tmp}/raw.annotate")) / raw_pkts
budget = None
sender = {}
for cell in sys.argv[3:]:
    name, msg, qps, *rest = cell.split()
    limits, bypass = (rest + ["0", "yes"][len(rest):])[:2]
    total, msgs, note = {}, {}, {}
    for side, count in (("send", 0), ("recv", 1)):
        w0, w1 = ([int(x) for x in line.split()] for line in open(f"{tmp}/{name}.{side}.window"))
        d = [y - x for x, y in zip(w0, w1)]  # completed, checked, restarts a, b, replays a, b
        msgs[side] = d[count]
        if msgs[side] <= 0:
            sys.exit(f"{name}, {side}: a completed {d[0]}, b checked {d[1]} messages in the window")
        if d[2] or d[3]:
            note[side] = (f"the link began a new session in the window ({d[2]} QP restarts on a, "
                          f"{d[3]} on b): not counted")
            continue
        if d[4] or d[5]:
            note[side] = f"{d[4] + d[5]} link replays in the window, counted"
        tot = modules(f"{tmp}/{name}.{side}.annotate")
        total[side] = sum(tot.values())
        for key, n in tot.most_common():
            if n / msgs[side] >= 1:
                print(json.dumps({"bench": "dp-instr" if side == "send" else "dp-instr-recv",
                                  "cell": name, "module": key,
                                  "instr_per_msg": round(n / msgs[side]),
                                  "share": round(n / total[side], 4)}))
    per_msg = {k: round(v / msgs[k]) for k, v in total.items()}
    if "recv" in total:
        print(json.dumps({"bench": "dp-instr-recv", "cell": name, "module": "total",
                          "instr_per_msg": per_msg["recv"], "msgs": msgs["recv"]}))
    line = {"bench": "dp-instr", "cell": name, "module": "total",
            "instr_per_msg": per_msg.get("send"), "recv_instr_per_msg": per_msg.get("recv"),
            "msgs": msgs["send"], "recv_msgs": msgs["recv"], "msg_bytes": int(msg),
            "qps": int(qps), "rate_limit_mbps": limits, "line_bypass": bypass,
            "window_s": window_s}
    line.update({side + "_note": text for side, text in note.items()})
    print(json.dumps(line))
    if name == "64B-1qp" and "send" in per_msg:
        budget = per_msg["send"] / per_pkt
    sender[name] = per_msg
if "64B-1qp" in sender and "64B-1qp-pacer" in sender:
    a, b = sender["64B-1qp"], sender["64B-1qp-pacer"]
    print(json.dumps({"bench": "dp-instr-ratio", "cell": "64B-1qp", "baseline": "64B-1qp-pacer",
                      **{f"{k}_ratio": round(a[k] / b[k], 3) for k in a if k in b}}))
print(json.dumps({"bench": "dp-instr-raw", "what": "dpdk-testpmd txonly, af_packet",
                  "instr_per_pkt": round(per_pkt), "pkts": raw_pkts, "frame_bytes": 64,
                  "window_s": window_s}))
if budget is not None:
    print(json.dumps({"bench": "dp-instr-budget", "cell": "64B-1qp",
                      "instr_ratio": round(budget, 2), "goal_instr_ratio": 2.0}))
PY
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
