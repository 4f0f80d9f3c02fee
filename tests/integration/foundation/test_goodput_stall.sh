#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Goodput is reported as numbers with their windows, and a stall shows (memif, two hosts):
# host a sends test traffic at 200 Mbit/s to host b, which checks it; then a is stopped
# (SIGSTOP) so nothing reaches b. b's goodput_to_now_bps (first delivery to now) must fall
# below 3/4 of its value before the stall, while goodput_bps (first to last delivery, the rate
# while payloads came) stays within 3/4 of it and its window stops growing. Every goodput
# field of /sluice/traffic is a JSON number, not a string.
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

tel_b() { sl_tel b /sluice/traffic "$1"; }
sl_tel b /sluice/traffic >"$SL_TMP/traffic.json"
python3 - "$SL_TMP/traffic.json" <<'PY' || sl_fail "/sluice/traffic: a goodput field is not a number"
import json, sys
t = json.load(open(sys.argv[1]))
keys = ("goodput_bps", "goodput_window_ns", "goodput_to_now_bps", "goodput_to_now_window_ns")
sys.exit(0 if all(type(t[k]) is int for k in keys) else 1)
PY
before=$(tel_b goodput_to_now_bps)
[ "$before" -gt 20000000 ] || sl_fail "goodput before the stall: $before bit/s at 200 Mbit/s offered"

kill -STOP "${SL_PID[a]}"
sleep 0.5
window1=$(tel_b goodput_window_ns)
sleep 1.5
after=$(tel_b goodput_to_now_bps)
during=$(tel_b goodput_bps)
window2=$(tel_b goodput_window_ns)
kill -CONT "${SL_PID[a]}"
sl_log "goodput_to_now_bps $before before the stall, $after after 2 s of it; goodput_bps $during, window $window1 -> $window2 ns"
[ "$after" -lt $((before * 3 / 4)) ] || sl_fail "goodput_to_now_bps did not fall in the stall: $before -> $after"
[ "$during" -gt $((before * 3 / 4)) ] || sl_fail "goodput_bps moved in the stall: $before -> $during"
[ "$window1" -eq "$window2" ] || sl_fail "goodput_window_ns grew with nothing delivered: $window1 -> $window2"

sl_stop a INT
sleep 0.2
sl_stop b TERM
sl_pass "a stall shows: goodput_to_now_bps $before -> $after bit/s"
