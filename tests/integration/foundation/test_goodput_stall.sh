#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Goodput is reported as numbers with their windows, and a stall shows (memif, two hosts):
# host a sends test traffic at 200 Mbit/s to host b, which checks it; then a is stopped
# (SIGSTOP) so nothing reaches b. Between two snapshots of b's /sluice/traffic taken during the
# stall (the first once what was in flight has landed), nothing is delivered: goodput_bps (first
# to last delivery) and its window stay as they were, and goodput_to_now_bps (first delivery to
# now) falls by exactly the stall's share of its window, the same bytes over a window at least
# the time between the snapshots longer. Nothing here depends on how fast the host runs. Every
# goodput field of /sluice/traffic is a JSON number, not a string.
source "$(dirname "$0")/../lib/hosts.sh"
sl_require_root

sl_topo_memif
sl_start b "$(sl_config b memif_server "[traffic]" "mode = check" "body_bytes = 1024")" \
    memif_server
sl_wait_ready b 10
sl_start a "$(sl_config a memif_client "[traffic]" "mode = send" "body_bytes = 1024" \
    "rate_mbps = 200")" memif_client
sl_wait_peer_up a 5
sleep 2

# field FILE KEY: one field of a /sluice/traffic snapshot
field() { python3 -c "import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$@"; }
sl_tel b /sluice/traffic >"$SL_TMP/traffic.json"
python3 - "$SL_TMP/traffic.json" <<'PY' || sl_fail "/sluice/traffic: a goodput field is not a number"
import json, sys
t = json.load(open(sys.argv[1]))
keys = ("goodput_bps", "goodput_window_ns", "goodput_to_now_bps", "goodput_to_now_window_ns")
sys.exit(0 if all(type(t[k]) is int for k in keys) else 1)
PY
before=$(sl_tel b /sluice/traffic goodput_to_now_bps)
[ "$before" -gt 20000000 ] || sl_fail "goodput before the stall: $before bit/s at 200 Mbit/s offered"

kill -STOP "${SL_PID[a]}"
# What a had sent lands within a round trip: wait until b's last delivery holds still.
last=-1
for _ in $(seq 50); do
    sl_tel b /sluice/traffic >"$SL_TMP/stall1.json"
    now=$(field "$SL_TMP/stall1.json" goodput_window_ns)
    [ "$now" = "$last" ] && break
    last=$now
    sleep 0.1
done
sleep 1.5
sl_tel b /sluice/traffic >"$SL_TMP/stall2.json"
kill -CONT "${SL_PID[a]}"
python3 - "$SL_TMP/stall1.json" "$SL_TMP/stall2.json" <<'PY' || sl_fail "the stall does not show"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
bits = lambda t, k: t[k] * t[k.replace("_bps", "_window_ns")] / 1e9
print(f"  during the stall: goodput_bps {a['goodput_bps']} -> {b['goodput_bps']}, window "
      f"{a['goodput_window_ns']} -> {b['goodput_window_ns']} ns; goodput_to_now_bps "
      f"{a['goodput_to_now_bps']} -> {b['goodput_to_now_bps']}, window "
      f"{a['goodput_to_now_window_ns']} -> {b['goodput_to_now_window_ns']} ns")
bad = []
if (a["goodput_bps"], a["goodput_window_ns"]) != (b["goodput_bps"], b["goodput_window_ns"]):
    bad.append("goodput_bps or its window moved with nothing delivered")
if b["goodput_to_now_window_ns"] - a["goodput_to_now_window_ns"] < 1.4e9:
    bad.append("goodput_to_now's window did not grow with the stall")
if not b["goodput_to_now_bps"] < a["goodput_to_now_bps"]:
    bad.append("goodput_to_now_bps did not fall")
# the same bits delivered, so the rate fell by the window's growth (to integer rounding)
if abs(bits(b, "goodput_to_now_bps") - bits(a, "goodput_to_now_bps")) > \
        1e-3 * bits(a, "goodput_to_now_bps"):
    bad.append("goodput_to_now_bps x its window changed: bits delivered in the stall")
print("\n".join(f"  {m}" for m in bad))
sys.exit(1 if bad else 0)
PY
after=$(field "$SL_TMP/stall2.json" goodput_to_now_bps)

sl_stop a INT
sleep 0.2
sl_stop b TERM
sl_pass "a stall shows: goodput_to_now_bps $before -> $after bit/s"
