#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The soak run (`make soak`, not in CI): two sluiced over memif on the reliable link, 4 QPs each
# way (dcqcn, reno, swift, newreno) sending messages of 1 B to 64 KiB without end, net_impair on
# both hosts' ports (FAULTS: Bernoulli loss, Gilbert-Elliott bursts, duplication, reordering),
# and the peer b restarted every RESTART_S seconds, SIGTERM and SIGKILL in turn, for
# SOAK_MINUTES minutes (default 30). The survivor a runs throughout. Reported (a JSON line, and
# the checks): messages a posted, completed, failed (outstanding when b went away), checked;
# messages delivered out of order, of a wrong length or content (a message delivered twice
# shows as out of order): must be 0; a's resident memory and open file descriptors after the
# first minute and at the end: must not grow (memory by more than SOAK_RSS_SLACK_KB, 8 MiB by
# default: DPDK maps its pools at start, and a leak of one buffer per message or restart would
# pass that within minutes).
# Usage: SOAK_MINUTES=30 RESTART_S=60 tests/soak/soak_qp.sh (root; the build is
# SLUICE_BUILD_ROOT or ./build).
source "$(dirname "$0")/../integration/lib/hosts.sh"
sl_require_root
minutes=${SOAK_MINUTES:-30}
restart_s=${RESTART_S:-60}
slack_kb=${SOAK_RSS_SLACK_KB:-8192}
FAULTS=${FAULTS:-loss=0.005,ge_p=0.0005,ge_r=0.3,ge_h=0.2,dup=0.001,reorder=0.001,reorder_gap=3}
IMPAIR_SO=$SL_BUILD/drivers/net/impair/librte_net_impair.so
load=(-d "$IMPAIR_SO")
grep -q "/sluice/impair/set" "$SL_SLUICED" && load=()

sl_topo_memif
lines=("workers = 0" "[link]" "mode = extended" "replay = missing" "ring_order = 14"
       "keepalive_us = 100" "stuck_ms = 2s"
       "[qp]" "count = 4" "proto = dcqcn,reno,swift,newreno" "msg_min_bytes = 1"
       "msg_max_bytes = 64KiB" "msgs = 0" "direction = both" "rto_us = 1s" "timeout_ms = 10s"
       "seed = 11")
# a is the memif server: DPDK 22.11's memif client never attaches again to a server that
# restarted, so the peer that restarts is the client.
sl_config a memif_server "${lines[@]}" >/dev/null
sl_config b memif_client "${lines[@]}" >/dev/null
sed -i 's/^device = .*/device = net_impair0/' "$SL_TMP/a.ini" "$SL_TMP/b.ini"
start_b() {
    sl_start b "$SL_TMP/b.ini" memif_client -l 1 "${load[@]}" \
        --vdev "net_impair0,dev=net_memif0,$FAULTS,seed=$1"
    sl_wait_ready b 10
}
sl_start a "$SL_TMP/a.ini" memif_server -l 0 "${load[@]}" \
    --vdev "net_impair0,dev=net_memif0,$FAULTS,seed=5"
sl_wait_ready a 10
start_b 3

pid_a=${SL_PID[a]}
rss_kb() { awk '/^VmRSS/ { print $2 }' "/proc/$pid_a/status"; }
fds() { ls "/proc/$pid_a/fd" | wc -l; }
sleep 60
rss0=$(rss_kb) fd0=$(fds)
sl_log "a after a minute: rss $rss0 kB, $fd0 fds"
end=$(($(date +%s) + minutes * 60 - 60))
rounds=0
while [ "$(date +%s)" -lt "$end" ]; do
    sleep "$(( restart_s < end - $(date +%s) ? restart_s : end - $(date +%s) ))"
    [ "$(date +%s)" -lt "$end" ] || break
    kill -0 "$pid_a" 2>/dev/null || sl_fail "a died (round $rounds)"
    rounds=$((rounds + 1))
    if [ $((rounds % 2)) -eq 1 ]; then
        sl_stop b TERM
    else
        kill -KILL "${SL_PID[b]}"
        wait "${SL_PID[b]}" 2>/dev/null || true
        unset "SL_PID[b]"
    fi
    deadline=$(($(date +%s) + 10))
    until [ "$(sl_tel a /sluice/ports p0/peer_state 2>/dev/null)" = down ]; do
        [ "$(date +%s)" -lt "$deadline" ] || sl_fail "round $rounds: a never saw b go"
        sleep 0.1
    done
    start_b $((rounds * 2 + 3))
    sl_log "round $rounds: b restarted ($([ $((rounds % 2)) -eq 1 ] && echo SIGTERM || echo SIGKILL)); a checked $(sl_tel a /sluice/qps totals/checked)"
done
rss1=$(rss_kb) fd1=$(fds)
sl_stop a INT
sl_stop b TERM

python3 - "$SL_TMP/a.out" "$minutes" "$rounds" "$rss0" "$rss1" "$fd0" "$fd1" "$slack_kb" "$FAULTS" <<'PY' || sl_fail "soak"
import json, sys
path, minutes, rounds, rss0, rss1, fd0, fd1, slack = sys.argv[1], *map(int, sys.argv[2:9])
faults = sys.argv[9]
a = {}
for line in open(path):
    if line.startswith("{") and ("qps/qps" in line or "p0/tx_pkts" in line):
        a.update(json.loads(line))
t = lambda k: a.get("qps/traffic/" + k, 0)
out = {"soak_minutes": minutes, "faults": faults, "peer_restarts": rounds,
       "posted": t("posted"), "completed": t("completed"), "failed": t("failed"),
       "checked": t("checked"), "out_of_order": t("out_of_order"),
       "bad_length": t("bad_length"), "bad_content": t("bad_content"),
       "qp_restarts": a.get("qps/lane/qp_restarts"), "link_replays": a.get("p0/link/replays"),
       "stuck_reinits": a.get("p0/link/stuck_reinits"),
       "transport_rtx": a.get("qps/pkts_rtx"), "rss_kb": [rss0, rss1], "fds": [fd0, fd1]}
print(json.dumps(out))
bad = [k for k in ("out_of_order", "bad_length", "bad_content") if out[k]]
if out["completed"] + out["failed"] > out["posted"] or out["checked"] == 0:
    bad.append("completions")
# Every link session after the first restarts the 4 QPs: each peer restart, and any stuck
# episode one end gave up (stuck_reinits, at either end).
sessions = a.get("p0/link/enter_init", 1) - 1
out["link_sessions"] = sessions
if out["qp_restarts"] != 4 * sessions or sessions < rounds:
    bad.append(f"qp_restarts {out['qp_restarts']} for {sessions} new link sessions "
               f"({rounds} peer restarts)")
if fd1 > fd0:
    bad.append(f"fds grew {fd0} -> {fd1}")
if rss1 > rss0 + slack:
    bad.append(f"rss grew {rss0} -> {rss1} kB")
for b in bad:
    print("  " + b)
sys.exit(1 if bad else 0)
PY
sl_pass "soak: $minutes min, $rounds peer restarts"
