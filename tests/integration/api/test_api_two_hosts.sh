#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Applications on libsluice between two sluiced hosts over memif, on the reliable link: each
# host serves applications ([api]) and runs no built-in traffic.
# usage: test_api_two_hosts.sh examples|isolation|perf|pacing|churn|hostile|lanes
#   examples:  the three examples, built here by hand with nothing but
#              `pkg-config --cflags --libs libsluice` (the build's uninstalled .pc), run as a
#              server on b and a client on a: a SEND/RECV ping-pong checked byte for byte, a
#              WRITE with immediate, a READ; each must exit 0.
#   isolation: api_check's cases: a WRITE or READ with a wrong key, past its region, without the
#              access flag, or naming another application's region completes with a remote
#              access error and changes no byte there; the accepted ones land exactly.
#   perf:      sluice-perf write_bw, send_bw, read_bw (-e), write_lat, send_lat, read_lat: every
#              run exits 0, prints perftest's table and writes valid JSON.
#   pacing:    sluice-perf write_bw -e --rate_limit, 64 KiB messages, as a user sees it: one QP
#              at 0.1, 1 and 5 Gbit/s in turn, its payload rate as sluice-perf reports it
#              (BW average: the limit counts payload); then 16 QPs at once (16 sluice-perf
#              pairs) at 0.05, 0.1, 0.2 and 0.5 Gbit/s (3.4 Gbit/s in all, below the 10 Gbit/s
#              link), each QP's rate taken by the daemons while all 16 run (host b's
#              wire_bytes_received of the peer QP over PACE_WINDOW_S (8), against the pace_bps
#              host a's pacer holds the QP to: 16 processes starting would otherwise weigh on the first
#              ones' own figures). Each must be within TOL (1 %) of its limit, above or below;
#              the share of the run host a's lcore was not polling (p0/poll_gap_ns) is printed
#              (a QP catches up on what it lost then: [qp] pace_catchup_us). The clients post
#              with -t 512: perftest's default depth (128, one completion in 100) leaves 28
#              messages, 2.9 ms at 5 Gbit/s, for the tool to be scheduled again and repost on
#              cores shared with two polling daemons; a QP that runs dry loses that time (the
#              pacer gives idling no credit), which is the tool's shortfall, not the pacer's.
#              The memif rings are test_qp_pacing's (rsize=14); the window, 4096 packets, is
#              6.9 ms at 5 Gbit/s: what a QP may have in flight must cover its rate over the
#              peer's lcore gaps, or it runs dry on schedule while the peer holds the ACKs
#              (docs/pacer.md, "Where a limit holds on a shared host"). The daemons run with
#              100 ms of catch-up ([qp] pace_catchup_us), not the default 10 ms, which covers
#              gaps of a few ms: host a's lcore shares its core with sluice-perf processes (34
#              of them in the 16-QP case) and whatever else the host runs, and gaps of 20-60 ms
#              come several times a run; 10 ms then loses 1-3 % of a QP (the pacer's
#              catchup_lost_ns, printed). A limit holds only below what the QP can carry, so
#              one QP whose limit does not bind (9 Gbit/s, paced like the others) runs first
#              and every limit is scaled by min(1, 0.6 x its rate / 5 Gbit/s): as written on
#              a quiet host (8.8 Gbit/s here), down on a busy one (40 % at 3.8 Gbit/s beside
#              a busy loop); under the sanitizers (SLUICE_TEST_TIMEOUT_MULTIPLIER above 1) by
#              a tenth at most.
#   lanes:     each host with two lanes (two workers, one on each core, as
#              test_qp_two_hosts.sh lanes). api_check spread: 8 QPs in one application on each
#              host, all completing into one CQ, 2000 SENDs of 4 KiB on each, every one checked
#              byte for byte and in order at b; once they are connected (the client waits
#              for the test), host a's /sluice/qps must list 4 of them on each lane, with b
#              agreeing QP for QP, and each lane of host a must carry at least a quarter of the
#              data frames. Then sluice-perf write_bw -q 8
#              (-s 4096) exits 0 with its table, and both lanes carry a quarter of its frames.
#   churn:     CHURN_ROUNDS (20) rounds: an application on each host, one QP WRITEing into
#              the other's region; then SIGKILL to the client at a random moment, and to the
#              server too except in every CHURN_SURVIVOR_EVERY-th round (2; the first round
#              is one). A survivor must see its QP fail with an error (retry exceeded: the
#              killed peer's QP was destroyed). Both daemons must stay up,
#              and end with no client, MR, CQ or QP left, and the same open file descriptors
#              as after the first round; resident memory may grow by at most 4 MiB.
#   hostile:   api_hostile's attackers, each beside a victim: a SEND/RECV ping-pong between
#              host a and b that sleeps on its CQ's event fd and checks every byte. The daemons
#              serve HOSTILE_CLIENTS (4) applications each.
#              CQ events: a flooder on each host arms its two CQs over and over and never reads
#              their event fds (one set blocking on its end, one closed) while its QPs WRITE to
#              the other host; both daemons count the events they could not deliver
#              (lane/events_unsent), and the count keeps rising while a victim run of
#              HOSTILE_ROUNDS (500) round trips takes place. The victim's median round trip
#              then must be at most 2 x its median in the run just before (no attacker) plus
#              HOSTILE_FLOOR_US (see there); a third run follows the attack.
#              Memory that can vanish: raw HELLOs with a huge-page memfd or a file outside
#              tmpfs are refused EINVAL, an unsealed memfd EPERM (hello_mem_refused counts
#              them); too many applications: contexts opened until one fails, which fails
#              with EMFILE once HOSTILE_CLIENTS are attached (clients_refused counts it); a
#              user the daemons' [api] allow_users (root) leaves out, on a socket whose mode
#              (0666) lets anyone connect: EACCES (clients_denied counts it); the peer host's
#              guesses: an application on host a connects QPs to host b's first QPNs (the
#              victim's among them) with a first PSN and a token it can only guess, and SENDs
#              and WRITEs on each: every one must fail, and host b must refuse their frames
#              (xport/rx_bad_token, at least one: a guess named the victim's QP); one
#              application taking its whole share of CQs, QPs and MRs (each refused EDQUOT at
#              the end, quota_* count them; /sluice/clients shows it in a row of its own,
#              holding that share, beside the victim's) while a second victim run, its own
#              objects made beside it, is served within the same latency bound as under the CQ
#              flood; connections that never say HELLO filling the client table
#              (a context then fails EMFILE) until the daemon closes them (hello_timeouts
#              counts them) and a context attaches again. Before the idle connections, the
#              early-SEND stash: an application that never posts RECVs SENDs into host b's
#              stash on eight QPs until one SEND fails RNR_RETRY_EXC_ERR (its share, [api]
#              client_stash_bytes, is full: stash_client_refused counts each refusal for now,
#              the SEND sent again after each backoff until the QP's timeout), while another
#              application's 3 MiB of SENDs made before its peer's RECVs are all held and then
#              delivered, every byte checked, and a third victim run is served within the
#              latency bound. A victim runs throughout the seven,
#              its every round trip checked, and must go on being served after each.
#              Both daemons stay up and end with no client's QP, CQ or MR left.
source "$(dirname "$0")/../lib/hosts.sh"
sl_require_root
case_name=${1:?case}
ROUNDS=${CHURN_ROUNDS:-20}
PERF=$SL_BUILD/app/sluice-perf/sluice-perf
CHECK=$SL_BUILD/tests/integration/api/api_check
HOSTILE=$SL_BUILD/tests/integration/api/api_hostile
CLIENTS=${HOSTILE_CLIENTS:-4}
[ -x "$PERF" ] || sl_fail "$PERF not built"
[ -x "$CHECK" ] || sl_fail "$CHECK not built"
[ -x "$HOSTILE" ] || sl_fail "$HOSTILE not built"

sl_topo_memif
# Under the reliable link an RTO can only fire spuriously; the churn case wants a survivor to
# notice its dead peer quickly, so its QPs time out after 1 s.
rto=1s timeout=10s extra=()
[ "$case_name" = churn ] && rto=200ms timeout=1s
if [ "$case_name" = pacing ]; then
    export SL_MEMIF_ARGS=,rsize=14
    extra=("[qp]" "window_pkts = 4096" "pace_catchup_us = 100000")
fi
workers=0 ring=14
# Two lanes hold two replay rings (and two stashes): 2^12 frames each keep them within -m 512.
[ "$case_name" = lanes ] && workers=2 ring=12
mode=0600
if [ "$case_name" = hostile ]; then
    # Anyone may reach the sockets (the run's directory too); the daemons let only root attach.
    mode=0666
    extra=("clients = $CLIENTS" "uid_clients = $CLIENTS" "allow_users = root")
    chmod o+x "$SL_TMP"
fi
for h in a b; do
    kind=memif_client
    [ "$h" = b ] && kind=memif_server
    sl_config "$h" "$kind" "workers = $workers" \
        "[link]" "mode = extended" "replay = missing" "ring_order = $ring" \
        "keepalive_us = 100" "stuck_ms = 2s" "rate_mbps = 10000" \
        "[api]" "enable = yes" "socket = $SL_TMP/api-$h.sock" "mode = $mode" \
        "seg_bytes = 1024" "rto_us = $rto" "timeout_ms = $timeout" "${extra[@]}" >/dev/null
done
if [ "$workers" -gt 0 ]; then
    # Main lcore (it only waits) and worker 0 on one core, worker 1 on the other.
    sl_start b "$SL_TMP/b.ini" memif_server --lcores "0@1,1@1,2@0"
    sl_wait_ready b 10
    sl_start a "$SL_TMP/a.ini" memif_client --lcores "0@0,1@0,2@1"
    sl_wait_ready a 10
    sl_wait_peer_up a 10
else
    sl_start_memif_pair
fi
SA=$SL_TMP/api-a.sock SB=$SL_TMP/api-b.sock

# pair NAME TIMEOUT_S SERVER_CMD... -- CLIENT_CMD...: the server on b's socket, the client on
# a's; both must exit 0 within the timeout. Output in $SL_TMP/NAME.{server,client}.
pair() {
    local name=$1 t=$2; shift 2
    local srv=() cli=()
    while [ "$1" != "--" ]; do srv+=("$1"); shift; done
    shift
    cli=("$@")
    timeout "$t" "${srv[@]}" >"$SL_TMP/$name.server" 2>&1 &
    local spid=$!
    sleep 0.3
    local crc=0 src=0
    timeout "$t" "${cli[@]}" >"$SL_TMP/$name.client" 2>&1 || crc=$?
    wait "$spid" || src=$?
    if [ "$crc" -ne 0 ] || [ "$src" -ne 0 ]; then
        cat "$SL_TMP/$name.server" "$SL_TMP/$name.client" >&2
        # The lanes' counters name a refusal (rnr_refused, stash_*_refused, len_refused, ...),
        # the QPs' and the links' state a stall.
        for h in a b; do
            for t in /sluice/api /sluice/qps /sluice/link; do
                sl_log "$h: $t: $(sl_tel "$h" $t 2>&1 | tr -d '\n' | cut -c1-6000)"
            done
            sl_stacks "$h"
        done
        sl_fail "$name: server exit $src, client exit $crc"
    fi
    sl_log "$name: ok"
}

port=18600
case $case_name in
examples)
    pc=$SL_BUILD/meson-uninstalled
    [ -f "$pc/libsluice-uninstalled.pc" ] || sl_fail "no libsluice-uninstalled.pc in $pc"
    flags=$(PKG_CONFIG_PATH=$pc pkg-config --cflags --libs libsluice)
    # A sanitized build's library needs its application built with the same sanitizers.
    san=()
    # Matched on the captured text: under pipefail, grep -q leaving early can SIGPIPE ldd and
    # fail the pipeline at random, which built the examples unsanitized.
    [[ $(ldd "$SL_BUILD/lib/api/libsluice.so") == *libasan* ]] && san=(-fsanitize=address,undefined)
    for ex in pingpong write_imm read; do
        # shellcheck disable=SC2086
        cc -O2 -Wall -Werror "${san[@]}" -o "$SL_TMP/$ex" "$SL_SRC/examples/$ex.c" $flags ||
            sl_fail "$ex does not build with pkg-config's flags ($flags)"
    done
    # The uninstalled library is not on the loader's path: its -L directory is.
    libdir=$(PKG_CONFIG_PATH=$pc pkg-config --libs-only-L libsluice | sed 's/^ *-L//; s/ *-L/:/g; s/ *$//')
    export LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    pair pingpong 60 "$SL_TMP/pingpong" -S "$SB" -p $port -n 2000 -s 64 -- \
        "$SL_TMP/pingpong" -S "$SA" -p $port -n 2000 -s 64 127.0.0.1
    grep -q "2000 round trips of 64 bytes checked" "$SL_TMP/pingpong.client" ||
        sl_fail "pingpong: $(cat "$SL_TMP/pingpong.client")"
    pair pingpong-big 60 "$SL_TMP/pingpong" -S "$SB" -p $((port + 1)) -n 200 -s 100000 -- \
        "$SL_TMP/pingpong" -S "$SA" -p $((port + 1)) -n 200 -s 100000 127.0.0.1
    pair write_imm 60 "$SL_TMP/write_imm" -S "$SB" -p $((port + 2)) -- \
        "$SL_TMP/write_imm" -S "$SA" -p $((port + 2)) 127.0.0.1
    pair read 60 "$SL_TMP/read" -S "$SB" -p $((port + 3)) -- \
        "$SL_TMP/read" -S "$SA" -p $((port + 3)) 127.0.0.1
    ;;
isolation)
    pair isolation 60 "$CHECK" -S "$SB" -p $port isolation-server -- \
        "$CHECK" -S "$SA" -p $port isolation-client 127.0.0.1
    cat "$SL_TMP/isolation.client"
    refused=$(sl_tel b /sluice/api lane/write_refused)
    [ "$refused" -ge 4 ] || sl_fail "b refused $refused WRITEs, want at least 4"
    ;;
perf)
    for t in "write_bw -e -s 4096 -n 20000" "write_bw -e -s 64 -n 20000" \
             "send_bw -e -s 4096 -n 20000" "read_bw -e -s 4096 -n 5000" \
             "write_lat -e -s 64 -n 2000" "send_lat -e -s 64 -n 2000" "read_lat -e -s 64 -n 2000"; do
        read -r -a args <<<"$t"
        name=${args[0]}-$(printf "%s\n" "${args[@]}" | grep -A1 -x -- -s | tail -1)
        port=$((port + 1))
        pair "$name" 120 "$PERF" "${args[@]}" -S "$SB" -p $port --out_json \
            --out_json_file "$SL_TMP/$name.server.json" -- \
            "$PERF" "${args[@]}" -S "$SA" -p $port --out_json \
            --out_json_file "$SL_TMP/$name.client.json" 127.0.0.1
        grep -E '^ #bytes' "$SL_TMP/$name.client" >/dev/null || sl_fail "$name: no table"
        python3 - "$SL_TMP/$name.client.json" <<'PY' || sl_fail "$name: bad JSON"
import json, sys
d = json.load(open(sys.argv[1]))
r = d["results"]
r = r[0] if isinstance(r, list) else r
bw = r.get("BW_average", r.get("t_avg"))
assert float(bw) > 0, r
print(sys.argv[1].rsplit("/", 1)[1], r)
PY
        sed -n '/#bytes/,/^---/p' "$SL_TMP/$name.client" | head -2
    done
    ;;
pacing)
    TOL=${TOL:-0.01} RUN_S=${RUN_S:-3}
    # verdict CHECK...: runs CHECK (a line a QP, a failing one marked FAIL), which fails the test
    # with its failing lines.
    verdict() {
        local out rc=0
        out=$("$@") || rc=$?
        echo "$out"
        [ "$rc" -eq 0 ] ||
            sl_fail "a QP's rate is off its limit by more than $TOL:$(grep "<-- FAIL" <<<"$out")"
    }
    # rates LIMIT_GBITS...: one sluice-perf pair per limit, all at once, each for about RUN_S
    # seconds; then every client's JSON, with the hosts' polling gaps over the run, is checked.
    rates() {
        local i=0 r n pids=() gap0 gap1 gapb0 gapb1 t0 t1
        gap0=$(sl_tel a /sluice/ports p0/poll_gap_ns) t0=$(date +%s%N)
        gapb0=$(sl_tel b /sluice/ports p0/poll_gap_ns)
        for r in "$@"; do
            n=$(python3 -c "print(max(50, int($r * 1e9 * $RUN_S / 8 / 65536)))")
            port=$((port + 1))
            "$PERF" write_bw -e -s 65536 -n "$n" --rate_limit="$r" -S "$SB" -p $port \
                >"$SL_TMP/pace-$i.server" 2>&1 &
            pids+=($!)
            sleep 0.1
            "$PERF" write_bw -e -s 65536 -t 512 -n "$n" --rate_limit="$r" -S "$SA" -p $port \
                --out_json --out_json_file "$SL_TMP/pace-$i.json" 127.0.0.1 \
                >"$SL_TMP/pace-$i.client" 2>&1 &
            pids+=($!)
            i=$((i + 1))
        done
        for p in "${pids[@]}"; do
            wait "$p" || sl_fail "a sluice-perf of the pacing runs failed: $(cat "$SL_TMP"/pace-*.client)"
        done
        gap1=$(sl_tel a /sluice/ports p0/poll_gap_ns) t1=$(date +%s%N)
        gapb1=$(sl_tel b /sluice/ports p0/poll_gap_ns)
        verdict python3 - "$SL_TMP" "$TOL" "$((gap1 - gap0))" "$((gapb1 - gapb0))" \
            "$((t1 - t0))" "$@" <<'PY'
import json, sys
tmp, tol, gap_ns, gapb_ns, span_ns = sys.argv[1], float(sys.argv[2]), *map(int, sys.argv[3:6])
limits = [float(x) for x in sys.argv[6:]]
stalled, stalled_b = gap_ns / span_ns, gapb_ns / span_ns
bad = []
for i, limit in enumerate(limits):
    r = json.load(open(f"{tmp}/pace-{i}.json"))["results"]
    bw = r["BW_average"] * 8 * 2**20 / 1e9  # MiB/s with 2 decimals: finer than MsgRate here
    err = bw / limit - 1
    ok = -tol <= err <= tol
    print(f"  QP {i:2}: limit {limit:6.4f} Gbit/s, payload {bw:.5f} Gbit/s ({100 * err:+.3f} %); "
          f"lcores not polling: host a {100 * stalled:.2f} %, b {100 * stalled_b:.2f} % of the run"
          f"{'' if ok else '  <-- FAIL'}")
    if not ok:
        bad.append(i)
sys.exit(1 if bad else 0)
PY
    }
    # A limit holds only below what the QP can carry: it makes its lcores' gaps up by running
    # faster than its limit afterwards. So the limits are fractions of what one QP carries
    # when its limit does not bind (9 Gbit/s of payload, just below the 10 Gbit/s line: a QP
    # at the line would skip the pacer, [qp] line_bypass, and leave its cost out), 64 KiB
    # WRITEs for about a second, measured here first, on this host as it is now: every limit
    # is scaled by min(1, CAP_SHARE x capacity / 5 Gbit/s), the fastest at most CAP_SHARE
    # (0.6) of it. A quiet host runs them as written (8.8 Gbit/s here); a busy one, or the
    # sanitizers, scale them down.
    port=$((port + 1))
    pair capacity 120 "$PERF" write_bw -e -s 65536 -n 15000 --rate_limit=9 -S "$SB" -p $port -- \
        "$PERF" write_bw -e -s 65536 -t 512 -n 15000 --rate_limit=9 -S "$SA" -p $port \
        --out_json --out_json_file "$SL_TMP/capacity.json" 127.0.0.1
    # Under the sanitizers (SLUICE_TEST_TIMEOUT_MULTIPLIER above 1) a tenth at most as well:
    # there the 5 Gbit/s QP scaled to 0.6 of the probe still fell 0.3 to 1.1 % short with its
    # lcores away under 5 % (three runs of four below 1 %), every cost a packet being several
    # times the plain build's.
    ceiling=1
    [ "${SLUICE_TEST_TIMEOUT_MULTIPLIER:-1}" -gt 1 ] && ceiling=0.1
    read -r cap scale < <(python3 - "$SL_TMP/capacity.json" "${CAP_SHARE:-0.6}" "$ceiling" <<'PY'
import json, sys
cap = json.load(open(sys.argv[1]))["results"]["BW_average"] * 8 * 2**20 / 1e9
print(f"{cap:.3f}", round(min(float(sys.argv[3]), float(sys.argv[2]) * cap / 5), 4))
PY
)
    sl_log "one QP with no limit carries $cap Gbit/s of payload here now: the limits are x $scale"
    r4() { python3 -c "print(*(round(float(x) * $scale, 4) for x in '$*'.split()))"; }
    for r in $(r4 0.1 1 5); do
        rates "$r"
    done
    # 16 QPs at once, measured by the daemons while every one of them runs.
    # A QP catching up when a snapshot is taken is up to the catch-up behind its schedule, so a
    # window's rate is off by up to 100 ms / W at each end (typically +-0.7 % at 4 s here).
    W=${PACE_WINDOW_S:-8}
    read -r -a limits <<<"$(r4 0.05 0.1 0.2 0.5 0.05 0.1 0.2 0.5 0.05 0.1 0.2 0.5 0.05 0.1 0.2 0.5)"
    pids=() i=0
    # Each has messages for a minute: they all run until the window's end, whatever their start
    # takes, and are stopped then (the daemons measure; the single-QP runs check sluice-perf's
    # own figures and exit status).
    for r in "${limits[@]}"; do
        n=$(python3 -c "print(int($r * 1e9 * 60 / 8 / 65536))")
        port=$((port + 1))
        "$PERF" write_bw -e -s 65536 -n "$n" --rate_limit="$r" -S "$SB" -p $port \
            >"$SL_TMP/mix-$i.server" 2>&1 &
        pids+=($!)
        sleep 0.1
        "$PERF" write_bw -e -s 65536 -t 512 -n "$n" --rate_limit="$r" -S "$SA" -p $port 127.0.0.1 \
            >"$SL_TMP/mix-$i.client" 2>&1 &
        pids+=($!)
        i=$((i + 1))
    done
    # Each client prints its QP's and the peer's QPN (perftest's address lines) once connected.
    for _ in $(seq 100); do
        [ "$(cat "$SL_TMP"/mix-*.client | grep -c "remote address")" -eq 16 ] && break
        sleep 0.1
    done
    [ "$(cat "$SL_TMP"/mix-*.client | grep -c "remote address")" -eq 16 ] ||
        sl_fail "16 QPs never ran at once"
    sleep 1
    # Every QP of both hosts and host a's polling gaps within milliseconds of each other: one
    # process, one telemetry connection per host (tests/integration/lib/telemetry.py).
    pairs=()
    for i in $(seq 0 15); do
        pairs+=("$(($(awk '/ local address/ {print $6}' "$SL_TMP/mix-$i.client")))")
        pairs+=("$(($(awk '/ remote address/ {print $6}' "$SL_TMP/mix-$i.client")))")
    done
    snap_qps() {
        python3 - "$SL_SRC/tests/integration/lib" "$(sl_prefix a)" "$(sl_prefix b)" \
            "$SL_TMP/mix$1.json" "${pairs[@]}" <<'PY'
import json, sys, time
sys.path.insert(0, sys.argv[1])
from telemetry import Tel
ta, tb, out, qpns = Tel(sys.argv[2]), Tel(sys.argv[3]), sys.argv[4], [int(x) for x in sys.argv[5:]]
t = time.monotonic_ns()
snap = {"qps": [{"a": ta.query(f"/sluice/qp,{qpns[i]}"),
                 "b": tb.query(f"/sluice/qp,{qpns[i + 1]}")} for i in range(0, len(qpns), 2)],
        "gap_ns": ta.query("/sluice/ports")["p0/poll_gap_ns"],
        "pacer": {k: v for k, v in ta.query("/sluice/qps").items() if k.startswith("totals/pacer/")}}
snap["t_ns"] = (t + time.monotonic_ns()) // 2
json.dump(snap, open(out, "w"))
PY
    }
    snap_qps 0
    sleep "$W"
    snap_qps 1
    kill -TERM "${pids[@]}" 2>/dev/null || true
    wait "${pids[@]}" 2>/dev/null || true
    verdict python3 - "$SL_TMP" "$TOL" <<'PY'
import json, sys
tmp, tol = sys.argv[1], float(sys.argv[2])
raw = [json.load(open(f"{tmp}/mix{i}.json")) for i in (0, 1)]
for i, r in enumerate(raw):
    for k, o in enumerate(r["qps"]):
        if o["a"] is None or o["b"] is None:
            sys.exit(f"snapshot {i}: pair {k}'s QP not open on host {'a' if o['a'] is None else 'b'}")
snap = [{o["a"]["qpn"]: o for o in r["qps"]} for r in raw]
span = raw[1]["t_ns"] - raw[0]["t_ns"]
gap = [r["gap_ns"] for r in raw]
stalled = (gap[1] - gap[0]) / span
bad = 0
for qpn in sorted(snap[0]):
    a0, a1 = snap[0][qpn]["a"], snap[1][qpn]["a"]
    b0, b1 = snap[0][qpn]["b"], snap[1][qpn]["b"]
    limit = a1.get("info/pace_bps") or a0.get("info/pace_bps")
    if not limit:
        sys.exit(f"QP {qpn}: no info snapshot from host a")
    # b's counters over b's own clock as it read them: the client's queries take their time.
    wire = (b1["wire_bytes_received"] - b0["wire_bytes_received"]) * 8e9 / \
        (b1["now_ns"] - b0["now_ns"])
    err = wire / limit - 1
    ok = -tol <= err <= tol and a1["pkts_rtx"] == a0["pkts_rtx"]
    bad += not ok
    print(f"  QP {qpn:2}: paced at {limit / 1e6:7.2f} Mbit/s on the wire, carried {wire / 1e6:8.3f} "
          f"({100 * err:+.3f} %); host a's lcore not polling {100 * stalled:.2f} % of the "
          f"{span / 1e9:.2f} s{'' if ok else '  <-- FAIL'}")
lost = {k.split("/")[-1]: (raw[1]["pacer"][k] - raw[0]["pacer"][k]) / len(snap[0])
        for k in ("totals/pacer/catchup_lost_ns", "totals/pacer/idle_ns")}
print(f"  host a's pacer, per QP over the {span / 1e9:.2f} s: {lost['catchup_lost_ns'] / 1e6:.1f} ms "
      f"of stalls beyond the catch-up, {lost['idle_ns'] / 1e6:.1f} ms run dry on time "
      f"({100 * (lost['catchup_lost_ns'] + lost['idle_ns']) / span:.2f} % of the span)")
sys.exit(1 if bad else 0)
PY
    ;;
lanes)
    # frames A B: each lane's data frames on host a's port (a list), as the link counts them
    lane_frames() {
        python3 - "$SL_SRC/tests/integration/lib" "$(sl_prefix a)" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from telemetry import Tel
print(*Tel(sys.argv[2]).query("/sluice/link")["lane/tx_data"])
PY
    }
    # share BEFORE AFTER WHAT: each lane carried at least a quarter of the frames in between
    share() {
        python3 - "$1" "$2" "$3" <<'PY' || sl_fail "$3: a lane carried less than a quarter"
import sys
b, a = [int(x) for x in sys.argv[1].split()], [int(x) for x in sys.argv[2].split()]
d = [y - x for x, y in zip(b, a)]
print(f"{sys.argv[3]}: data frames per lane of host a: {d}")
sys.exit(0 if len(d) == 2 and min(d) * 4 >= sum(d) > 0 else 1)
PY
    }
    f0=$(lane_frames)
    port=$((port + 1))
    "$CHECK" -S "$SB" -p $port spread-server >"$SL_TMP/spread.server" 2>&1 &
    spid=$!
    sleep 0.3
    "$CHECK" -S "$SA" -p $port -w "$SL_TMP/spread.go" spread-client 127.0.0.1 \
        >"$SL_TMP/spread.client" 2>&1 &
    cpid=$!
    for _ in $(seq 100); do
        [ "$(grep -c "^spread: QP " "$SL_TMP/spread.client")" -eq 8 ] && break
        sleep 0.1
    done
    # Both hosts' view of the 8 QPs, connected, before the client sends (it waits for
    # spread.go): each QP's lane, and its peer's on b.
    python3 - "$SL_SRC/tests/integration/lib" "$(sl_prefix a)" "$(sl_prefix b)" \
        "$SL_TMP/spread.client" <<'PY' || sl_fail "the QPs are not spread over the lanes"
import re, sys
sys.path.insert(0, sys.argv[1])
from telemetry import Tel
ta, tb = Tel(sys.argv[2]), Tel(sys.argv[3])
pairs = [tuple(int(x) for x in m.groups()) for m in
         re.finditer(r"QPN (\d+) to the peer's (\d+)", open(sys.argv[4]).read())]
qa, qb = ta.query("/sluice/qps"), tb.query("/sluice/qps")
lane_a, lane_b = dict(zip(qa["qpn"], qa["lane"])), dict(zip(qb["qpn"], qb["lane"]))
lanes = [lane_a.get(a) for a, _ in pairs]
print("QP pairs (a, b):", pairs, "on a's lanes", lanes, "and b's", [lane_b.get(b) for _, b in pairs])
assert len(pairs) == 8, pairs
assert all(lane_a.get(a) == lane_b.get(b) is not None for a, b in pairs), "a and b disagree"
assert sorted(lanes) == [0] * 4 + [1] * 4, lanes
PY
    touch "$SL_TMP/spread.go"
    wait "$cpid" || sl_fail "spread-client: $(cat "$SL_TMP/spread.client")"
    wait "$spid" || sl_fail "spread-server: $(cat "$SL_TMP/spread.server")"
    grep -q "8 QPs on one CQ, 2000 messages of 4096 bytes each checked" "$SL_TMP/spread.server" ||
        sl_fail "spread-server: $(cat "$SL_TMP/spread.server")"
    f1=$(lane_frames)
    share "$f0" "$f1" "api_check spread"
    port=$((port + 1))
    pair write_bw-q8 120 "$PERF" write_bw -e -q 8 -s 4096 -n 5000 -S "$SB" -p $port -- \
        "$PERF" write_bw -e -q 8 -s 4096 -n 5000 -S "$SA" -p $port 127.0.0.1
    grep -E '^ #bytes' "$SL_TMP/write_bw-q8.client" >/dev/null || sl_fail "write_bw -q 8: no table"
    share "$f1" "$(lane_frames)" "sluice-perf write_bw -q 8"
    ;;
churn)
    pid_a=${SL_PID[a]} pid_b=${SL_PID[b]}
    fds() { ls "/proc/$1/fd" | wc -l; }
    rss() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }
    for r in $(seq 1 "$ROUNDS"); do
        port=$((18700 + r % 200))
        "$CHECK" -S "$SB" -p $port churn-server >"$SL_TMP/churn-s.out" 2>&1 &
        spid=$!
        sleep 0.2
        "$CHECK" -S "$SA" -p $port churn-client 127.0.0.1 >"$SL_TMP/churn-c.out" 2>&1 &
        cpid=$!
        for _ in $(seq 100); do
            grep -q connected "$SL_TMP/churn-c.out" 2>/dev/null &&
                grep -q connected "$SL_TMP/churn-s.out" 2>/dev/null && break
            sleep 0.05
        done
        grep -q connected "$SL_TMP/churn-c.out" || sl_fail "round $r: the client never connected"
        sleep "0.$((RANDOM % 3))$((RANDOM % 10))"
        kill -KILL "$cpid"
        wait "$cpid" 2>/dev/null || true
        if [ $((r % ${CHURN_SURVIVOR_EVERY:-2})) -ne 1 ] && [ "${CHURN_SURVIVOR_EVERY:-2}" -ne 1 ]; then
            kill -KILL "$spid"
            wait "$spid" 2>/dev/null || true
        else
            # the survivor sees its QP fail (its peer's QP is gone) and exits 0
            rc=0
            timeout 10 tail --pid="$spid" -f /dev/null || rc=$?
            [ "$rc" -eq 0 ] || sl_fail "round $r: the server did not notice its peer died"
            wait "$spid" || sl_fail "round $r: server: $(cat "$SL_TMP/churn-s.out")"
            grep -q "QP ended (transport retry counter exceeded" "$SL_TMP/churn-s.out" ||
                sl_fail "round $r: server: $(cat "$SL_TMP/churn-s.out")"
        fi
        kill -0 "$pid_a" && kill -0 "$pid_b" || sl_fail "round $r: a daemon died"
        if [ "$r" -eq 1 ]; then
            sleep 0.5
            fd_a=$(fds "$pid_a") fd_b=$(fds "$pid_b") rss_a=$(rss "$pid_a") rss_b=$(rss "$pid_b")
        fi
    done
    sleep 1
    for h in a b; do
        pid=${SL_PID[$h]}
        for k in qps cqs mrs; do
            v=$(sl_tel "$h" /sluice/api "$k")
            [ "$v" -eq 0 ] || sl_fail "host $h: $k = $v after every application died"
        done
        acc=$(sl_tel "$h" /sluice/api clients_accepted)
        gone=$(sl_tel "$h" /sluice/api clients_gone)
        [ "$acc" -eq "$gone" ] || sl_fail "host $h: $acc clients accepted, $gone gone"
        [ "$acc" -eq "$ROUNDS" ] || sl_fail "host $h: $acc clients accepted, want $ROUNDS"
    done
    [ "$(fds "$pid_a")" -eq "$fd_a" ] || sl_fail "host a: fds $fd_a -> $(fds "$pid_a")"
    [ "$(fds "$pid_b")" -eq "$fd_b" ] || sl_fail "host b: fds $fd_b -> $(fds "$pid_b")"
    grow_a=$(($(rss "$pid_a") - rss_a)) grow_b=$(($(rss "$pid_b") - rss_b))
    sl_log "churn: $ROUNDS rounds; fds a $fd_a b $fd_b unchanged; RSS growth a ${grow_a} kB b ${grow_b} kB"
    [ "$grow_a" -le 4096 ] && [ "$grow_b" -le 4096 ] || sl_fail "RSS grew by more than 4 MiB"
    ;;
hostile)
    ROUNDS=${HOSTILE_ROUNDS:-500}
    # A victim's round trip sleeps on an event fd twice (once per host), and each wake-up
    # must take a core from a polling daemon: on 2 shared cores that adds a scheduler's delay
    # of tens of us in any run, attacker or not (the median of runs without one ranged 76-154
    # us here). 100 us covers two of them; it is under a tenth of what one blocked lane would
    # cost (the victim's completions, and so its round trips, would wait for the flood to end).
    FLOOR_US=${HOSTILE_FLOOR_US:-100}
    pid_a=${SL_PID[a]} pid_b=${SL_PID[b]}
    alive() { kill -0 "$pid_a" && kill -0 "$pid_b" || sl_fail "$1: a daemon died"; }
    # until DESC TIMEOUT_S CMD...: wait until CMD succeeds (every 50 ms), or fail.
    until_ok() {
        local desc=$1 t=$2 i
        shift 2
        for i in $(seq $((t * 20))); do
            "$@" && return 0
            sleep 0.05
        done
        sl_fail "$desc: not within $t s"
    }
    in_file() { grep -q "$1" "$2" 2>/dev/null; }
    gt() { [ "$(sl_tel "$1" /sluice/api "$2")" -gt "$3" ]; }
    # victim NAME PORT: one run of ROUNDS checked round trips; its median (us) in $SL_TMP/NAME.med
    victim() {
        pair "$1" 120 "$HOSTILE" -S "$SB" -p "$2" victim-server -- \
            "$HOSTILE" -S "$SA" -p "$2" -n "$ROUNDS" victim-client 127.0.0.1
        grep "rtt_us" "$SL_TMP/$1.client" >&2
        awk '/rtt_us/ {print $(NF - 4)}' "$SL_TMP/$1.client" >"$SL_TMP/$1.med"
    }

    # attackers NAME PORT MODE: api_hostile's MODE-server on host b and MODE-client on host a
    # in the background, output in $SL_TMP/NAME.{server,client}; their pids in att_s and
    # att_c. An attacker runs until told to stop: a failing test must stop it too (and only
    # then: once reaped, its pid may be another process's), by SL_AT_EXIT[att_at].
    attackers() {
        "$HOSTILE" -S "$SB" -p "$2" "$3-server" >"$SL_TMP/$1.server" 2>&1 &
        att_s=$!
        "$HOSTILE" -S "$SA" -p "$2" "$3-client" 127.0.0.1 >"$SL_TMP/$1.client" 2>&1 &
        att_c=$!
        att_at=${#SL_AT_EXIT[@]}
        SL_AT_EXIT+=("kill -TERM $att_s $att_c 2>/dev/null")
    }
    # within_bound DESC MEDIAN: a victim's median round trip (us) under an attack is at most
    # 2 x its median before any attacker plus FLOOR_US.
    within_bound() {
        sl_log "victim median round trip $1: $2 us ($m0 us before any attacker)"
        python3 -c "import sys; sys.exit(0 if $2 <= 2 * $m0 + $FLOOR_US else 1)" ||
            sl_fail "$1 the median round trip is $2 us, over 2 x $m0 + $FLOOR_US us"
    }

    # CQ events the application never reads.
    victim before $port
    attackers flood $((port + 1)) cq-flood
    fs=$att_s fc=$att_c at=$att_at
    until_ok "the flooders connected" 20 in_file flooding "$SL_TMP/flood.client"
    until_ok "the flooders connected" 20 in_file flooding "$SL_TMP/flood.server"
    until_ok "host a refusing CQ events" 20 gt a lane/events_unsent 0
    until_ok "host b refusing CQ events" 20 gt b lane/events_unsent 0
    ua0=$(sl_tel a /sluice/api lane/events_unsent) ub0=$(sl_tel b /sluice/api lane/events_unsent)
    victim during $((port + 2))
    ua1=$(sl_tel a /sluice/api lane/events_unsent) ub1=$(sl_tel b /sluice/api lane/events_unsent)
    kill -0 "$fc" && kill -0 "$fs" || sl_fail "a flooder stopped during the victim's run"
    ! in_file "QP failed" "$SL_TMP/flood.server" || sl_fail "flood: $(cat "$SL_TMP/flood.server")"
    kill -TERM "$fc"
    wait "$fc" || sl_fail "flood client: $(cat "$SL_TMP/flood.client")"
    kill -TERM "$fs"
    wait "$fs" || sl_fail "flood server: $(cat "$SL_TMP/flood.server")"
    unset "SL_AT_EXIT[$at]"
    cat "$SL_TMP/flood.client" "$SL_TMP/flood.server"
    alive "CQ flood"
    sl_log "events unsent during the victim's run: host a $((ua1 - ua0)), b $((ub1 - ub0))"
    [ "$ua1" -gt "$ua0" ] && [ "$ub1" -gt "$ub0" ] ||
        sl_fail "the flood's events were not refused throughout the victim's run"
    victim after $((port + 3))
    read -r m0 <"$SL_TMP/before.med"
    read -r m1 <"$SL_TMP/during.med"
    read -r m2 <"$SL_TMP/after.med"
    sl_log "victim median round trip after the CQ flood: ${m2} us"
    within_bound "under the CQ flood" "$m1"

    # Memory that can vanish, too many applications and a user not allowed, beside a victim
    # running throughout.
    "$HOSTILE" -S "$SB" -p $((port + 4)) victim-server >"$SL_TMP/bg.server" 2>&1 &
    vs=$!
    "$HOSTILE" -S "$SA" -p $((port + 4)) -n 0 victim-client 127.0.0.1 >"$SL_TMP/bg.client" 2>&1 &
    vc=$!
    at=${#SL_AT_EXIT[@]}
    SL_AT_EXIT+=("kill -TERM $vs $vc 2>/dev/null")
    # served_more: the victim has made progress since the last call (PROGRESS_ROUNDS more
    # round trips, each checked).
    served=0
    served_now() { grep -c "served" "$SL_TMP/bg.client" || true; }
    more() { [ "$(served_now)" -gt "$served" ]; }
    served_more() {
        until_ok "the victim served after $1" 20 more
        served=$(served_now)
    }
    until_ok "the victim connected" 20 in_file connected "$SL_TMP/bg.client"
    served_more "it started"
    r0=$(sl_tel a /sluice/api hello_mem_refused)
    "$HOSTILE" -S "$SA" -d "$SL_TMP" hello-mem >"$SL_TMP/hello.out" 2>&1 ||
        sl_fail "hello-mem: $(cat "$SL_TMP/hello.out")"
    cat "$SL_TMP/hello.out"
    r1=$(sl_tel a /sluice/api hello_mem_refused)
    want=$(awk '/refused/ {print $NF}' "$SL_TMP/hello.out")
    [ $((r1 - r0)) -eq "$want" ] || sl_fail "hello_mem_refused rose by $((r1 - r0)), want $want"
    alive "HELLO memory"
    served_more "the HELLOs"
    # Only the victim attached: the hello attacker's accepted client must be gone first.
    attached() {
        [ $(($(sl_tel a /sluice/api clients_accepted) - $(sl_tel a /sluice/api clients_gone))) -eq 1 ]
    }
    until_ok "host a serving only the victim" 20 attached
    c0=$(sl_tel a /sluice/api clients_refused)
    "$HOSTILE" -S "$SA" -c $((CLIENTS * 4)) conn-flood >"$SL_TMP/conn.out" 2>&1 ||
        sl_fail "conn-flood: $(cat "$SL_TMP/conn.out")"
    cat "$SL_TMP/conn.out"
    grep -q "opened $((CLIENTS - 1)), then" "$SL_TMP/conn.out" ||
        sl_fail "conn-flood: want $((CLIENTS - 1)) contexts beside the victim"
    c1=$(sl_tel a /sluice/api clients_refused)
    [ $((c1 - c0)) -eq 1 ] || sl_fail "clients_refused rose by $((c1 - c0)), want 1"
    alive "connection flood"
    served_more "the connection flood"
    d0=$(sl_tel a /sluice/api clients_denied)
    setpriv --reuid=nobody --regid=nogroup --clear-groups "$HOSTILE" -S "$SA" denied \
        >"$SL_TMP/denied.out" 2>&1 || sl_fail "denied: $(cat "$SL_TMP/denied.out")"
    cat "$SL_TMP/denied.out"
    d1=$(sl_tel a /sluice/api clients_denied)
    [ $((d1 - d0)) -eq 1 ] || sl_fail "clients_denied rose by $((d1 - d0)), want 1"
    alive "a user not allowed"
    served_more "the denied user"
    bad() { sl_tel b /sluice/qps "totals/xport/rx_bad_$1"; }
    t0=$(bad token) q0=$(bad qpn)
    "$HOSTILE" -S "$SA" peer-guess >"$SL_TMP/guess.out" 2>&1 ||
        sl_fail "peer-guess: $(cat "$SL_TMP/guess.out")"
    cat "$SL_TMP/guess.out"
    t1=$(bad token) q1=$(bad qpn)
    sl_log "host b refused the guesses' frames: rx_bad_token +$((t1 - t0)), rx_bad_qpn +$((q1 - q0))"
    [ $((t1 - t0)) -gt 0 ] || sl_fail "no guess named a QP of host b's: the victim was not tried"
    [ $((t1 - t0 + q1 - q0)) -ge 8 ] || sl_fail "host b refused fewer frames than were sent"
    alive "the peer host's guesses"
    served_more "the guesses"
    api() { sl_tel a /sluice/api "$1"; }
    qc0=$(api quota_cqs) qq0=$(api quota_qps) qm0=$(api quota_mrs)
    "$HOSTILE" -S "$SA" hog >"$SL_TMP/hog.out" 2>&1 &
    hp=$!
    at_hog=${#SL_AT_EXIT[@]}
    SL_AT_EXIT+=("kill -TERM $hp 2>/dev/null")
    until_ok "the hog holding its share" 20 in_file holding "$SL_TMP/hog.out"
    cat "$SL_TMP/hog.out"
    # Host a's telemetry shows each application in a row of its own: the hog's whole share
    # beside the background victim (one QP).
    read -r hc hq hm < <(awk '/holding/ {print $3, $5, $7}' "$SL_TMP/hog.out")
    cols=()
    for k in state cqs qps mrs; do
        cols+=("$(sl_tel a /sluice/clients "$k")")
    done
    sl_log "host a's /sluice/clients: state ${cols[0]} cqs ${cols[1]} qps ${cols[2]} mrs ${cols[3]}"
    python3 -c '
import json, sys
want = ("attached", *map(int, sys.argv[1:4]))
rows = list(zip(*(json.loads(c) for c in sys.argv[4:8])))
sys.exit(0 if want in rows and any(r[0] == "attached" and r[2] >= 1 and r != want
                                   for r in rows) else 1)' "$hc" "$hq" "$hm" "${cols[@]}" ||
        sl_fail "/sluice/clients: no row of the hog's $hc CQs, $hq QPs, $hm MRs and the victim's"
    victim hog $((port + 5))
    read -r mh <"$SL_TMP/hog.med"
    within_bound "beside the hog" "$mh"
    kill -TERM "$hp"
    wait "$hp" || sl_fail "hog: $(cat "$SL_TMP/hog.out")"
    unset "SL_AT_EXIT[$at_hog]"
    [ $(($(api quota_cqs) - qc0)) -eq 1 ] && [ $(($(api quota_qps) - qq0)) -eq 1 ] &&
        [ $(($(api quota_mrs) - qm0)) -eq 1 ] || sl_fail "quota_cqs, _qps, _mrs: not one refusal each"
    alive "the hog"
    served_more "the hog"
    until_ok "host a serving only the victim" 20 attached
    # The early-SEND stash: an application that never posts RECVs takes what it can of host
    # b's stash; another's early SENDs are still held and delivered, and a victim run beside it
    # is served within the latency bound.
    sc0=$(sl_tel b /sluice/api lane/stash_client_refused)
    attackers shog $((port + 6)) stash-hog
    ss=$att_s sc=$att_c at_shog=$att_at
    until_ok "the stash hog refused" 60 in_file refused "$SL_TMP/shog.client"
    cat "$SL_TMP/shog.client"
    sc1=$(sl_tel b /sluice/api lane/stash_client_refused)
    [ $((sc1 - sc0)) -ge 2 ] ||
        sl_fail "stash_client_refused rose by $((sc1 - sc0)), want the refusal and its resends"
    pair stash-early 120 "$HOSTILE" -S "$SB" -p $((port + 7)) stash-early-server -- \
        "$HOSTILE" -S "$SA" -p $((port + 7)) stash-early-client 127.0.0.1
    cat "$SL_TMP/stash-early.client" "$SL_TMP/stash-early.server"
    victim stash $((port + 8))
    read -r ms <"$SL_TMP/stash.med"
    within_bound "beside the stash hog" "$ms"
    kill -TERM "$sc" "$ss"
    wait "$sc" || sl_fail "stash hog client: $(cat "$SL_TMP/shog.client")"
    wait "$ss" || sl_fail "stash hog server: $(cat "$SL_TMP/shog.server")"
    unset "SL_AT_EXIT[$at_shog]"
    alive "the stash hog"
    served_more "the stash hog"
    until_ok "host a serving only the victim" 20 attached
    h0=$(api hello_timeouts)
    "$HOSTILE" -S "$SA" -c $((CLIENTS - 1)) idle >"$SL_TMP/idle.out" 2>&1 ||
        sl_fail "idle: $(cat "$SL_TMP/idle.out")"
    cat "$SL_TMP/idle.out"
    [ $(($(api hello_timeouts) - h0)) -eq $((CLIENTS - 1)) ] ||
        sl_fail "hello_timeouts rose by $(($(api hello_timeouts) - h0)), want $((CLIENTS - 1))"
    alive "the idle connections"
    served_more "the idle connections"
    kill -0 "$vc" || sl_fail "the victim stopped: $(cat "$SL_TMP/bg.client")"
    kill -TERM "$vc"
    wait "$vc" || sl_fail "victim client: $(cat "$SL_TMP/bg.client")"
    wait "$vs" || sl_fail "victim server: $(cat "$SL_TMP/bg.server")"
    unset "SL_AT_EXIT[$at]"
    cat "$SL_TMP/bg.client"
    for h in a b; do
        for k in qps cqs mrs; do
            until_ok "host $h: $k released" 10 \
                test "$(sl_tel "$h" /sluice/api "$k")" -eq 0
        done
    done
    alive "the end"
    ;;
*) sl_fail "unknown case $case_name" ;;
esac
sl_stop a
sl_stop b
sl_pass "api $case_name"
