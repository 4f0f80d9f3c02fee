#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A peer restarted mid-stream under queue-pair traffic: two hosts over memif (or a veth with
# AF_XDP ports) on the reliable link, COUNT QPs each way (one per program of PROTOS), MSGS
# messages of 1 B to 64 KiB per QP and direction. ROUNDS times (1 for term, 20 for kill), once
# b has checked ROUND_MSGS more of a's messages (COUNT x MSGS / 20 / ROUNDS), b is stopped and
# started again (usage: test_qp_restart.sh term|kill [memif|af_xdp]: an orderly stop with
# SIGTERM, or SIGKILL). For 20 kills each QP is paced at KILL_RATE_MBPS (50): a sends whenever
# b is up, and each round's gate lags b's count by a telemetry poll, so a round uses what a sends
# in that lag, not the gate's 120 messages: at the link's full rate twenty rounds used up a's
# messages (one CI run of a's 400000 by round 19), and at 100 Mbit/s per QP one ASan run used all
# 48000 by round 20 (39797 completed and 8203 failed, about 2500 a round), leaving round 20
# nothing to check.
# Checked:
#   - the survivor a keeps running: its link comes back each time, and it exits cleanly;
#   - a's QPs restarted with each new session (lane qp_restarts = COUNT x ROUNDS) and finished:
#     every message a posted is either completed or reported failed (completed + failed =
#     posted = COUNT x MSGS), so none is left hanging, and some did fail (b left mid-stream);
#   - nothing is delivered twice or wrong: every delivery on every host in order, of the right
#     length and bytes; the incarnations of b together checked at least what a saw completed
#     and at most what a posted (a never sends a message again in a new session), and a
#     checked at least what the last b completed (with SIGKILL the earlier b's write no exit
#     report, so only the last one's counts and a's bound that);
#   - the last b's QPs sent all of theirs with none failed.
source "$(dirname "$0")/../lib/hosts.sh"
sl_require_root
how=${1:?term or kill}
slow=${SLUICE_TEST_TIMEOUT_MULTIPLIER:-1}
rounds=1 pace=()
[ "$how" = kill ] && rounds=20 pace=("rate_limit_mbps = ${KILL_RATE_MBPS:-50}")
COUNT=${COUNT:-4}
MSGS=${MSGS:-12000}
ROUNDS=${ROUNDS:-$rounds}
ROUND_MSGS=${ROUND_MSGS:-$((COUNT * MSGS / 20 / ROUNDS))}
PROTOS=${PROTOS:-dcqcn,reno,swift,newreno}
case $how in term | kill) ;; *) sl_fail "unknown case $how" ;; esac
topo=${2:-memif}
case $topo in
    # The survivor a is the memif server: DPDK 22.11's memif client never attaches again to a
    # server that restarted (tests/integration/link/test_link_fault.sh), so the peer that
    # restarts is the client.
    memif) sl_topo_memif; kind_a=memif_server kind_b=memif_client ;;
    af_xdp) sl_topo_veth; kind_a=af_xdp kind_b=af_xdp ;;
    *) sl_fail "unknown topology $topo (memif, af_xdp)" ;;
esac
lines=("workers = 0" "[link]" "mode = extended" "replay = missing" "ring_order = 14"
       "keepalive_us = 100" "stuck_ms = 2s"
       "[qp]" "count = $COUNT" "proto = $PROTOS" "msg_min_bytes = 1" "msg_max_bytes = 64KiB"
       "msgs = $MSGS" "direction = both" "rto_us = 1s" "timeout_ms = 10s" "seed = 11"
       "${pace[@]}")
sl_config a "$kind_a" "${lines[@]}" >/dev/null
sl_config b "$kind_b" "${lines[@]}" >/dev/null
start_b() {
    sl_start b "$SL_TMP/b.ini" "$kind_b" -l 1
    sl_wait_ready b 10
}
sl_start a "$SL_TMP/a.ini" "$kind_a" -l 0
sl_wait_ready a 10
[ "$topo" != memif ] || [ "$(sl_tel a /sluice/ports p0/memif_guard)" = on ] ||
    sl_fail "a's memif port is unguarded: a killed peer may crash it (see a.log)"
start_b

# Where each host stands, for a failure message.
diag() {
    local h
    for h in a b; do
        sl_log "$h: $(sl_tel "$h" /sluice/qps | tr -d '\n' |
            grep -o '"totals/\(traffic\|lane\|xport\)/[a-z_]*": *[1-9][0-9]*' | tr '\n' ' ')"
        sl_log "$h: link $(sl_tel "$h" /sluice/link | tr -d '\n' |
            grep -o '"[a-z_]*": *\("[a-z_]*"\|[1-9][0-9]*\)' | tr '\n' ' ')"
    done
}
total=$((COUNT * MSGS))
for round in $(seq "$ROUNDS"); do
    deadline=$(($(date +%s) + 60 * slow))
    until [ "$(sl_tel b /sluice/qps totals/checked 2>/dev/null || echo 0)" -ge "$ROUND_MSGS" ]; do
        [ "$(date +%s)" -lt "$deadline" ] ||
            { diag; sl_fail "round $round: b did not check $ROUND_MSGS of a's messages in time"; }
        sleep 0.1
    done
    if [ "$how" = term ]; then
        sl_stop b TERM
    else
        kill -KILL "${SL_PID[b]}"
        wait "${SL_PID[b]}" 2>/dev/null || true
        unset "SL_PID[b]"
        rm -f "$SL_TMP/b.out" # cut short by the kill
    fi
    [ -f "$SL_TMP/b.out" ] && mv "$SL_TMP/b.out" "$SL_TMP/b-$round.out"
    kill -0 "${SL_PID[a]}" 2>/dev/null || sl_fail "round $round: a died when b went away"
    # The survivor notices first (link status or keepalive timeout): a memif server takes a
    # new client only once it has dropped the old one; over a veth the new b must not find
    # the old one's session still up at a.
    deadline=$(($(date +%s) + 10 * slow))
    until [ "$(sl_tel a /sluice/ports p0/peer_state 2>/dev/null)" = down ]; do
        if ! kill -0 "${SL_PID[a]}" 2>/dev/null; then
            status=0
            wait "${SL_PID[a]}" || status=$? # set -e: a failed wait must not end the script
            sl_fail "round $round: a died (exit status $status) after b went away"
        fi
        [ "$(date +%s)" -lt "$deadline" ] || sl_fail "round $round: a never saw b go"
        sleep 0.1
    done
    start_b
done

# Both done: a's QPs completed or failed every message, the last b's completed all of theirs.
done_sending() {
    sl_tel "$1" /sluice/qps 2>/dev/null | python3 -c '
import json, sys
t = json.load(sys.stdin)
sys.exit(0 if t["totals/traffic/completed"] + t["totals/traffic/failed"] == int(sys.argv[1]) else 1)
' "$total"
}
deadline=$(($(date +%s) + ${WAIT_S:-90} * slow))
until done_sending a && done_sending b; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
        diag
        sl_fail "the QPs did not finish within $((90 * slow)) s of b's restart"
    fi
    sleep 0.2
done
# What the second b sent must have reached a's checker before a stops.
sleep 1
sl_stop a INT
sl_stop b TERM

python3 - "$SL_TMP" "$COUNT" "$MSGS" "$ROUNDS" <<'PY' || sl_fail "exit reports"
import glob, json, sys
tmp, count, msgs, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
def report(path):
    tot = {}
    for line in open(path):
        if line.startswith("{") and ("qps/qps" in line or "p0/tx_pkts" in line):
            tot.update(json.loads(line))
    return tot
def t(r, k):
    return r.get("qps/traffic/" + k, 0)
a, last = report(f"{tmp}/a.out"), report(f"{tmp}/b.out")
earlier = [report(p) for p in sorted(glob.glob(f"{tmp}/b-*.out"))]
total, bad = count * msgs, []
# The traffic's counters go on across sessions (an endpoint QP's restart with it).
if t(a, "posted") != total or t(a, "completed") + t(a, "failed") != total:
    bad.append(f"a: posted {t(a, 'posted')}, completed {t(a, 'completed')}, failed "
               f"{t(a, 'failed')} (want {total} posted, all completed or failed)")
if t(a, "failed") == 0:
    bad.append("a: no message failed: b did not go away mid-stream")
if a.get("qps/lane/qp_restarts") != count * rounds or a.get("qps/lane/qp_restart_failed"):
    bad.append(f"a: qp_restarts {a.get('qps/lane/qp_restarts')}, not {count * rounds}")
for name, r in [("a", a), ("last b", last)] + [(f"b #{i + 1}", r) for i, r in enumerate(earlier)]:
    for k in ("out_of_order", "bad_length", "bad_content"):
        if t(r, k):
            bad.append(f"{name}: {k} = {t(r, k)}")
if t(last, "completed") != total or t(last, "failed"):
    bad.append(f"last b: completed {t(last, 'completed')}, failed {t(last, 'failed')}")
b_checked = sum(t(r, "checked") for r in earlier + [last])
if len(earlier) == rounds and not t(a, "completed") <= b_checked <= total:
    bad.append(f"the b's checked {b_checked}: not within a's completed {t(a, 'completed')} "
               f"and posted {total}")
if b_checked > total:
    bad.append(f"the b's checked {b_checked}, more than a posted ({total})")
if not t(last, "completed") <= t(a, "checked") <= t(last, "posted") + rounds * total:
    bad.append(f"a checked {t(a, 'checked')}: fewer than the last b completed "
               f"({t(last, 'completed')}) or more than could have been sent")
print(f"  a: posted {total}, completed {t(a, 'completed')}, failed {t(a, 'failed')}, checked "
      f"{t(a, 'checked')}, qp_restarts {a.get('qps/lane/qp_restarts')}, tx_drop_session "
      f"{a.get('p0/tx_drop_session')}, link peer_restarts {a.get('p0/link/peer_restarts')} "
      f"peer_leaves {a.get('p0/link/peer_leaves')}; b's checked {b_checked} ({len(earlier)} "
      f"earlier reports), last b completed {t(last, 'completed')}")
for b in bad:
    print("  " + b)
sys.exit(1 if bad else 0)
PY
sl_pass "$how: b restarted $ROUNDS time(s) mid-stream; a restarted its $COUNT QPs each time, every message delivered once or reported failed"
