#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Every configuration or usage error makes sluiced exit 2 with a message that names the file,
# the line and the key; --help exits 0 and documents every key the parser accepts.
set -euo pipefail
root=${SLUICE_SOURCE_ROOT:-$(cd "$(dirname "$0")/../../.." && pwd)}
build=${SLUICE_BUILD_ROOT:-$root/build}
sluiced=$build/app/sluiced/sluiced
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 passes=0

# case NAME EXPECTED_REGEX CONFIG_TEXT [EXTRA EAL ARGS...]
case_() {
    local name=$1 expect=$2 text=$3; shift 3
    local f=$tmp/$name.ini rc=0
    printf '%s\n' "$text" >"$f"
    "$sluiced" --no-huge -m 256 --no-pci --file-prefix "sl-badcfg-$$" --log-level=error --vdev net_ring0 "$@" \
        -- --config "$f" --duration-s 1 >"$tmp/out" 2>"$tmp/err" || rc=$?
    expect=${expect//FILE/$f}
    if [ "$rc" -eq 2 ] && grep -Eq -- "$expect" "$tmp/err"; then
        passes=$((passes + 1))
    else
        echo "FAIL $name: exit $rc, stderr: $(cat "$tmp/err")" >&2
        fails=$((fails + 1))
    fi
}

case_ unknown_key "^FILE:3: bogus: unknown key in \[sluiced\]" '[sluiced]
name = x
bogus = 1
[port.0]
device = net_ring0'
case_ bad_number "^FILE:2: workers: expected a whole number in \[0, 64\], got 'many'" '[sluiced]
workers = many
[port.0]
device = net_ring0'
case_ out_of_range "^FILE:4: keepalive_us: expected a whole number in \[1, 10000000\], got '0'" '; comment line
[link]
mode = faithful
keepalive_us = 0
[port.0]
device = net_ring0'
case_ pool_too_small "^FILE:2: mbufs: 2047 cannot hold what the lanes keep" '[sluiced]
mbufs = 2047
[port.0]
device = net_ring0'
case_ bad_choice "^FILE:2: mode: expected one of faithful\|extended, got 'fast'" '[link]
mode = fast
[port.0]
device = net_ring0'
case_ replay_needs_extended "^FILE:1: replay: 'missing' needs mode = extended" '[link]
replay = missing
[port.0]
device = net_ring0'
case_ end_to_end_needs_extended "^FILE:1: reliability: 'end-to-end' needs mode = extended" '[link]
reliability = end-to-end
[port.0]
device = net_ring0'
case_ ring_too_large "^FILE:1: ring_order: out of range; the faithful mode allows 2\^5 to 2\^11 frames" '[link]
ring_order = 14
[port.0]
device = net_ring0'
case_ body_too_large "^FILE:3: body_bytes: 9000 bytes do not fit in one mbuf" '[traffic]
mode = send
body_bytes = 9000
[port.0]
device = net_ring0'
case_ bad_mac "^FILE:4: peer_mac: expected a unicast MAC address, 'learn' or 'resolve', got 'zz:zz'" '[sluiced]
[port.0]
device = net_ring0
peer_mac = zz:zz'
case_ udp_without_peer "^FILE:3: encap: udp needs local_ip and peer_ip" '[port.0]
device = net_ring0
encap = udp
local_ip = 10.0.0.1'
case_ ip_without_udp "^FILE:3: local_ip: needs encap = udp" '[port.0]
device = net_ring0
local_ip = 10.0.0.1'
case_ mixed_families "^FILE:5: peer_ip: not of local_ip's family" '[port.0]
device = net_ring0
encap = udp
local_ip = 10.0.0.1
peer_ip = fd00::2'
case_ bad_ip "^FILE:4: peer_ip: expected an IPv4 or IPv6 address or 'none', got '10.0.0.300'" '[port.0]
device = net_ring0
encap = udp
peer_ip = 10.0.0.300'
case_ resolve_ipv6 "^FILE:6: peer_mac: resolve asks by ARP, IPv4 only" '[port.0]
device = net_ring0
encap = udp
local_ip = fd00::1
peer_ip = fd00::2
peer_mac = resolve'
case_ multicast_mac "^FILE:3: peer_mac: expected a unicast MAC address" '[port.0]
device = net_ring0
peer_mac = 01:00:5e:00:00:01'
case_ unknown_section "^FILE:3: \[bogus\]: unknown section" '[port.0]
device = net_ring0
[bogus]
x = 1'
case_ missing_device "^FILE:1: device: required in \[port.0\]" '[port.0]
rx_desc = 512'
case_ no_such_port "^FILE:2: device: no DPDK port named 'net_nope0' \(ports: net_ring0\)" '[port.0]
device = net_nope0'
case_ malformed_line "^FILE:2: expected 'key = value'" '[sluiced]
this line is wrong
[port.0]
device = net_ring0'
case_ key_outside_section "^FILE:1: key outside any \[section\]" 'name = x'
case_ duplicate_key "^FILE:3: name: set twice in \[sluiced\]" '[sluiced]
name = x
name = y
[port.0]
device = net_ring0'
case_ port_gap "\[port.2\]: port sections must be numbered from 0 without gaps" '[port.0]
device = net_ring0
[port.2]
device = net_ring0'
case_ no_port "^FILE:1: \[port.0\]: no port configured" '[sluiced]
name = x'
case_ unit_out_of_range "^FILE:3: rtt_us: expected a duration in \[1us, 1s\], got '2s'" '[link]
mode = faithful
rtt_us = 2s
[port.0]
device = net_ring0'
case_ unit_of_another_kind "^FILE:2: rate_mbps: expected a rate in \[1Mbps, 400Gbps\] \(units: bps, Kbps, Mbps, Gbps\), got '10GB'" '[link]
rate_mbps = 10GB
[port.0]
device = net_ring0'
case_ rate_limit_not_a_rate "^FILE:3: rate_limit_mbps: expected a whole number in \[0, 400000\] or a rate in \[0bps, 400Gbps\] \(units: bps, Kbps, Mbps, Gbps\), got 'fast'" '[qp]
count = 2
rate_limit_mbps = 10, fast
[port.0]
device = net_ring0'
case_ rate_limit_below_pacer "^FILE:3: rate_limit_mbps: 50Kbps is below the pacer's 100 Kbps" '[qp]
count = 2
rate_limit_mbps = 50Kbps
[port.0]
device = net_ring0'
case_ unit_not_whole "^FILE:2: keepalive_us: not a whole number of ns; expected a duration in \[1us, 10s\], got '1.5ns'" '[link]
keepalive_us = 1.5ns
[port.0]
device = net_ring0'
case_ unit_on_a_count "^FILE:3: rx_desc: expected a whole number in \[64, 32768\], got '1K'" '[port.0]
device = net_ring0
rx_desc = 1K'
case_ too_many_workers "^FILE:2: workers: 2 worker lcores need 3 EAL lcores \(-l\), EAL has 1" '[sluiced]
workers = 2
[port.0]
device = net_ring0' -l 0
rc=0
"$sluiced" --no-huge -m 256 --no-pci --file-prefix "sl-badcfg-$$" --log-level=error --vdev net_ring0 \
    -- --config /nonexistent/x.ini >/dev/null 2>"$tmp/err" || rc=$?
if [ "$rc" -eq 2 ] && grep -q "^/nonexistent/x.ini: cannot open: No such file or directory" "$tmp/err"; then
    passes=$((passes + 1))
else
    echo "FAIL missing file: exit $rc $(cat "$tmp/err")" >&2; fails=$((fails + 1))
fi
rc=0
"$sluiced" --no-huge -m 256 --no-pci --file-prefix "sl-badcfg-$$" --log-level=error -- >/dev/null 2>"$tmp/err" || rc=$?
if [ "$rc" -eq 2 ] && grep -q -- "--config FILE is required" "$tmp/err"; then
    passes=$((passes + 1))
else
    echo "FAIL missing --config: exit $rc $(cat "$tmp/err")" >&2; fails=$((fails + 1))
fi
rc=0
"$sluiced" --no-huge -m 256 --no-pci --file-prefix "sl-badcfg-$$" --log-level=error -- --config x --bogus \
    >/dev/null 2>"$tmp/err" || rc=$?
if [ "$rc" -eq 2 ]; then passes=$((passes + 1)); else
    echo "FAIL unknown option: exit $rc" >&2; fails=$((fails + 1)); fi

# A config with units runs (rtt_us = 20us and the others are the keys' own spellings too).
printf '[link]\nrate_mbps = 1Gbps\nrtt_us = 20us\nkeepalive_us = 0.1ms\n[traffic]\nbody_bytes = 1KiB\n[port.0]\ndevice = net_ring0\n' >"$tmp/units.ini"
rc=0
"$sluiced" --no-huge -m 256 --no-pci --file-prefix "sl-badcfg-$$" --log-level=error --vdev net_ring0 \
    -- --config "$tmp/units.ini" --duration-s 1 >/dev/null 2>"$tmp/err" || rc=$?
if [ "$rc" -eq 0 ]; then passes=$((passes + 1)); else
    echo "FAIL units: exit $rc $(cat "$tmp/err")" >&2; fails=$((fails + 1)); fi

# Log types are sluice.<module>, set with EAL's --log-level: debug shows the lane's states,
# the default (info) does not; --help names them.
for level in "sluice.*:debug" "sluice.dp:debug" "sluice.daemon:debug" ""; do
    rc=0
    "$sluiced" --no-huge -m 256 --no-pci --file-prefix "sl-badcfg-$$" --vdev net_ring0 \
        ${level:+--log-level "$level"} -- --config "$tmp/units.ini" --duration-s 1 \
        >/dev/null 2>"$tmp/err" || rc=$?
    want=1; case "$level" in sluice.daemon:*|"") want=0;; esac
    got=0; grep -q "^sluice.dp: net_ring0: lane 0: running -> draining" "$tmp/err" && got=1
    if [ "$rc" -eq 0 ] && [ "$got" -eq "$want" ]; then passes=$((passes + 1)); else
        echo "FAIL --log-level '$level': exit $rc, lane states logged: $got, want $want" >&2
        fails=$((fails + 1)); fi
done

# --help: exit 0, and every key of the schema in config.c appears in it (tests/unit/sluiced
# checks --help and docs/configuration.md against the schema in full).
"$sluiced" --help >"$tmp/help"
if grep -q -- "--log-level 'sluice.\*:debug'" "$tmp/help"; then passes=$((passes + 1)); else
    echo "FAIL --help does not show --log-level 'sluice.*:debug'" >&2; fails=$((fails + 1)); fi
for key in $(grep -oE '"(sluiced|link|traffic|port)", "[a-z_]+"' "$root/app/sluiced/config.c" |
             sed -E 's/.*"([a-z_]+)"$/\1/'); do
    if grep -qE "^\s+$key = " "$tmp/help"; then passes=$((passes + 1)); else
        echo "FAIL --help does not document key $key" >&2; fails=$((fails + 1)); fi
done

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
