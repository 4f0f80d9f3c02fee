#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A peer restarted mid-stream under queue-pair traffic: two hosts over memif (or a veth with
# AF_XDP ports) on the reliable link, COUNT QPs each way (one per program of PROTOS), MSGS
# messages of 1 B to 64 KiB per QP and direction (usage: test_qp_restart.sh term|kill
# [memif|af_xdp]). ROUNDS times (1 for term, 20 for kill) b is started and, once it has checked
# ROUND_MSGS of a's messages (COUNT x MSGS / 20 / ROUNDS), stopped: SIGTERM (an orderly stop) or
# SIGKILL. A last b then takes the rest.
# Mid-stream by construction, not by a machine's speed: a's QPs are paced at RATE_MBPS (100)
# each, so a's stream lasts about 10 s of b's time up (b's own runs at the link's rate), and one
# Python watcher keeps a telemetry connection to each host open and polls b every 10 ms: b is
# signalled within a poll of its count passing the gate, once the watcher has seen a still short
# of its last message. A kill round costs a's 512 messages in flight
# (they fail) and the gate's 120 with a few more: the twenty use about 12700 of a's 48000 (12400
# at 50 Mbit/s, measured under stress-ng), and a round that finds a's stream over fails at once,
# saying so. No wait has a fixed time a slow machine may miss: b has 30 s to answer telemetry,
# a has 10 s to see b go, and the gate and the finish fail only when the counts they wait on
# stand still for STALL_S (20 s), and then write each host's QPs, link and port to watch.log. (A
# b that takes longer than the QPs' timeout_ms, 10 s, to come back fails a's messages in flight
# before the new session would; the QPs restart with it all the same.)
# Checked:
#   - the survivor a keeps running: its link comes back each time, and it exits cleanly;
#   - a's QPs restarted with each new session (lane qp_restarts = COUNT x ROUNDS: one goodbye
#     or one kill is one new session, lib/link/link.c peer_gone()) and finished: every message
#     a posted is either completed or reported failed (completed + failed = posted = COUNT x
#     MSGS), so none is left hanging, and some did fail (b left mid-stream);
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
rounds=1
[ "$how" = kill ] && rounds=20
COUNT=${COUNT:-4}
MSGS=${MSGS:-12000}
ROUNDS=${ROUNDS:-$rounds}
ROUND_MSGS=${ROUND_MSGS:-$((COUNT * MSGS / 20 / ROUNDS))}
RATE_MBPS=${RATE_MBPS:-100}
STALL_S=${STALL_S:-20}
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
       "msgs = $MSGS" "direction = both" "rto_us = 1s" "timeout_ms = 10s" "seed = 11")
sl_config a "$kind_a" "${lines[@]}" "rate_limit_mbps = $RATE_MBPS" >/dev/null
sl_config b "$kind_b" "${lines[@]}" >/dev/null
total=$((COUNT * MSGS))

# The watcher: one Python process that keeps a telemetry connection to each host open and polls
# it every 10 ms (tests/integration/lib/telemetry.py).
#   gate ROUND SIGNAL: once b answers (within 30 s of its start), wait until b has checked
#     ROUND_MSGS of a's messages, see that a still has messages to post or complete, send b the
#     signal, and wait until a reports its peer down (within 10 s). It fails when b's count
#     stands still for STALL_S (b and a alive), and at once when a's stream is over (every
#     message completed or failed), which no round can pass.
#   finish: wait until both hosts' QPs completed or failed all of theirs and a has checked at
#     least what b's QPs saw completed (a checks a message before acknowledging it); fail when
#     none of those counts moves for STALL_S.
cat >"$SL_TMP/watch.py" <<'PY'
import json, os, signal, sys, time

sys.path.insert(0, os.environ["W_LIB"])
from telemetry import Tel

POLL_S = 0.01
mode = sys.argv[1]
total, gate = int(os.environ["W_TOTAL"]), int(os.environ["W_GATE"])
slow = float(os.environ["W_SLOW"])
stall_s = float(os.environ["W_STALL_S"]) * slow
pids = {"a": int(os.environ["W_PID_A"]), "b": int(os.environ["W_PID_B"])}


def alive(h):
    try:
        with open(f"/proc/{pids[h]}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def done(q):
    return q["totals/traffic/completed"] + q["totals/traffic/failed"]


def fail(msg):
    """Fail with msg; first each host's QPs, link and port, one JSON line each, to watch.log
    (printed with the daemons' logs)."""
    with open(os.path.join(os.environ["W_TMP"], "watch.log"), "w") as f:
        for h in "ab":
            cmds = [f"/sluice/qp,{n}" for n in range(int(os.environ["W_COUNT"]))]
            for cmd in cmds + ["/sluice/qps", "/sluice/link", "/sluice/ports"]:
                f.write(json.dumps({"host": h, "cmd": cmd, "reply": tel[h].query(cmd)}) + "\n")
    print(msg)  # the test's failure message
    sys.exit(1)


tel = {h: Tel(f"{os.environ['SL_ID']}-{h}", 2.0 * slow) for h in "ab"}
t0 = time.monotonic()
if mode == "gate":
    rnd, sig = sys.argv[2], getattr(signal, "SIG" + sys.argv[3])
    while tel["b"].query("/sluice/qps") is None:
        if not alive("b"):
            fail(f"round {rnd}: b exited before it answered telemetry")
        if time.monotonic() - t0 > 30 * slow:
            fail(f"round {rnd}: b did not answer telemetry within {30 * slow:g} s")
        time.sleep(POLL_S)
    t_ready = time.monotonic()
    last, t_last, t_first, t_a = 0, t_ready, None, t_ready
    while last < gate:
        for h in "ab":
            if not alive(h):
                fail(f"round {rnd}: {h} exited while b had checked {last} of a's messages")
        qb = tel["b"].query("/sluice/qps")
        now = time.monotonic()
        if qb is not None and qb["totals/checked"] > last:
            last, t_last = qb["totals/checked"], now
            t_first = t_first or now
            continue
        if now - t_a >= 1 and now - t_last >= 1:
            # b's count stands: has a anything left to send?
            t_a = now
            qa = tel["a"].query("/sluice/qps")
            if qa is not None and done(qa) >= total:
                fail(f"round {rnd}: a's stream is over ({qa['totals/traffic/completed']} "
                     f"completed, {qa['totals/traffic/failed']} failed of {total}) and b "
                     f"checked {last} of {gate}: the rounds before used up a's messages")
        if now - t_last > stall_s:
            fail(f"round {rnd}: b checked {last} of a's messages, then none for {stall_s:g} s "
                 f"(it needs {gate})")
        time.sleep(POLL_S)
    qa = tel["a"].query("/sluice/qps")
    if qa is None:
        fail(f"round {rnd}: a does not answer telemetry")
    if done(qa) >= total:
        fail(f"round {rnd}: a's stream was over ({done(qa)} of {total} messages completed or "
             f"failed) before b was stopped")
    os.kill(pids["b"], sig)
    t_sig = time.monotonic()
    # The survivor notices first (link status or keepalive timeout): a memif server takes a new
    # client only once it has dropped the old one; over a veth the new b must not find the old
    # one's session still up at a.
    while (tel["a"].query("/sluice/ports") or {}).get("p0/peer_state") != "down":
        if not alive("a"):
            fail(f"round {rnd}: a died after b went away")
        if time.monotonic() - t_sig > 10 * slow:
            fail(f"round {rnd}: a never saw b go")
        time.sleep(POLL_S)
    print(f"round {rnd}: b answered {t_ready - t0:.1f} s after its start, checked {last} of "
          f"a's messages {t_first - t_ready:.2f} s later and {t_sig - t_first:.3f} s after its "
          f"first, then SIG{sys.argv[3]}, a had "
          f"{done(qa)} of {total} completed or failed; a saw b go {time.monotonic() - t_sig:.2f} "
          f"s later")
else:
    key, t_last, state = None, t0, ""
    while True:
        for h in "ab":
            if not alive(h):
                fail(f"{h} exited before the QPs finished ({state})")
        qa, qb = tel["a"].query("/sluice/qps"), tel["b"].query("/sluice/qps")
        now = time.monotonic()
        if qa is not None and qb is not None:
            state = (f"a: {done(qa)} of {total} completed or failed, b: {done(qb)}; a checked "
                     f"{qa['totals/checked']}, b completed {qb['totals/traffic/completed']}")
            if (done(qa) == total and done(qb) == total
                    and qa["totals/checked"] >= qb["totals/traffic/completed"]):
                print(f"the QPs finished {now - t0:.1f} s after the last b answered")
                break
            k = (done(qa), done(qb), qa["totals/checked"])
            if k != key:
                key, t_last = k, now
        if now - t_last > stall_s:
            fail(f"the QPs did not finish: nothing moved for {stall_s:g} s ({state})")
        time.sleep(POLL_S * 10)
PY
watch() {
    W_LIB=$SL_SRC/tests/integration/lib W_TMP=$SL_TMP W_COUNT=$COUNT W_TOTAL=$total W_GATE=$ROUND_MSGS W_SLOW=$slow \
        W_STALL_S=$STALL_S SL_ID=$SL_ID \
        W_PID_A=${SL_PID[a]} W_PID_B=${SL_PID[b]} python3 "$SL_TMP/watch.py" "$@"
}
# The watcher failed: say why, with a's exit status if a died.
watch_failed() {
    local status=0
    if ! kill -0 "${SL_PID[a]}" 2>/dev/null; then
        wait "${SL_PID[a]}" || status=$? # set -e: a failed wait must not end the script
        unset "SL_PID[a]"
        sl_fail "$1 (a's exit status $status)"
    fi
    diag
    sl_fail "$1"
}

sl_start a "$SL_TMP/a.ini" "$kind_a" -l 0
sl_wait_ready a $((30 * slow))
[ "$topo" != memif ] || [ "$(sl_tel a /sluice/ports p0/memif_guard)" = on ] ||
    sl_fail "a's memif port is unguarded: a killed peer may crash it (see a.log)"

# Where each host stands, for a failure message.
diag() {
    local h
    for h in a b; do
        [ -n "${SL_PID[$h]:-}" ] || continue
        sl_log "$h: $(sl_tel "$h" /sluice/qps | tr -d '\n' |
            grep -o '"totals/\(traffic\|lane\|xport\)/[a-z_]*": *[1-9][0-9]*' | tr '\n' ' ')"
        sl_log "$h: link $(sl_tel "$h" /sluice/link | tr -d '\n' |
            grep -o '"[a-z_]*": *\("[a-z_]*"\|[1-9][0-9]*\)' | tr '\n' ' ')"
    done
}
for round in $(seq "$ROUNDS"); do
    sl_start b "$SL_TMP/b.ini" "$kind_b" -l 1
    sig=TERM
    [ "$how" = kill ] && sig=KILL
    msg=$(watch gate "$round" "$sig") || watch_failed "${msg:-round $round: the watcher failed}"
    sl_log "$msg"
    if [ "$how" = term ]; then
        sl_reap b 10 "within 10 s of SIGTERM" "after SIGTERM"
        mv "$SL_TMP/b.out" "$SL_TMP/b-$round.out"
    else
        wait "${SL_PID[b]}" 2>/dev/null || true
        unset "SL_PID[b]"
        rm -f "$SL_TMP/b.out" # cut short by the kill
    fi
done
sl_start b "$SL_TMP/b.ini" "$kind_b" -l 1
sl_wait_ready b $((30 * slow))

# Both done: a's QPs completed or failed every message, the last b's completed all of theirs.
msg=$(watch finish) || watch_failed "${msg:-the watcher failed}"
sl_log "$msg"
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
      f"{a.get('p0/tx_drop_session')}, link enter_init {a.get('p0/link/enter_init')} "
      f"peer_restarts {a.get('p0/link/peer_restarts')} peer_leaves "
      f"{a.get('p0/link/peer_leaves')} stuck_reinits {a.get('p0/link/stuck_reinits')}, "
      f"poll_gaps {a.get('p0/poll_gaps')} ({a.get('p0/poll_gap_ns', 0) / 1e6:.0f} ms); "
      f"b's checked {b_checked} ({len(earlier)} "
      f"earlier reports), last b completed {t(last, 'completed')}")
for b in bad:
    print("  " + b)
sys.exit(1 if bad else 0)
PY
sl_pass "$how: b restarted $ROUNDS time(s) mid-stream; a restarted its $COUNT QPs each time, every message delivered once or reported failed"
