#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The dissector (usertools/wireshark/sluice.lua) on one hand-built frame of each transport
# feedback opcode and a WRITE with immediate, laid out as lib/wire/sl_wire.h puts them (the
# 20-byte base header: opcode, flags, tx_id, pad, 24-bit QPN, the destination QP's connection
# token, PSN, MSN; a feedback body from byte 20): tshark must name each opcode and read back
# every field written, the token of every frame included, with no malformed item. A two-host
# capture (test_capture.sh) carries only what the traffic of the day sends; this covers the
# rest (a NAK, a PULL, a CNP) byte for byte. No root needed; tshark and text2pcap (Debian
# packages tshark, wireshark-common).
set -euo pipefail
SRC=${SLUICE_SOURCE_ROOT:-$(cd "$(dirname "$0")/../../.." && pwd)}
for t in tshark text2pcap; do
    command -v "$t" >/dev/null || { echo "skipped: $t not found"; exit 77; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One frame per line: Ethernet, link header (SYN data, META valid, VCODE 0), transport frame.
python3 - >"$tmp/frames.txt" <<'PY'
import struct

def frame(x):
    b = bytes.fromhex("020000000002020000000001") + struct.pack(">HH", 0x88B5, 0x5000) + x
    b += bytes(max(0, 60 - len(b)))
    return "0000 " + " ".join(f"{c:02x}" for c in b)

# 0 opcode, 1 flags, 2-3 tx_id, 4 pad and 5-7 QPN (one 32-bit word), 8-11 token, 12-15 PSN,
# 16-19 MSN
def base(op, qpn, token, psn, msn=0, flags=0):
    return struct.pack(">BBHIIII", op, flags, 0, qpn, token, psn, msn)

frames = [
    # ACK, SACK and ECHO flags: acked 3, echo tx_id 1, sack_psn 1300, echo time 0x123456789a
    base(0x11, 7, 0x0C0FFEE0, 1234)
    + struct.pack(">BBHHHIQ", 3, 0, 3, 0, 1, 1300, 0x123456789A),
    # NACK: 2 holes, at +2 (1 packet) and +5 (3 packets) from 1234
    base(0x12, 7, 0x00BEEF00, 1234) + struct.pack(">BBHHH", 2, 0, 0, 0, 0)
    + struct.pack(">HHHH", 2, 1, 5, 3),
    base(0x13, 9, 0x5EED0003, 0),                          # CNP
    base(0x14, 9, 0x5EED0005, 0) + struct.pack(">I", 77),  # PULL, counter 77
    base(0x15, 7, 0x5EED0007, 1234) + struct.pack(">IB3x", 42, 1),  # NAK, MSN 42, syndrome 1
    # WRITE ONLY with immediate, PSN 10, MSN 5: RETH (raddr, rkey, len 2), IMM, 2 payload bytes,
    # and the 2 pad bytes (header byte 4) that bring the frame to Ethernet's 60
    base(0x0B, 2 << 24 | 3, 0xA0B0C0D0, 10, 5) + struct.pack(">QII", 0x1000, 0xABCD, 2)
    + struct.pack(">I", 0xDEADBEEF) + b"ab",
]
print("\n".join(frame(x) for x in frames))
PY
text2pcap -q -n "$tmp/frames.txt" "$tmp/frames.pcapng" 2>/dev/null ||
    text2pcap -q "$tmp/frames.txt" "$tmp/frames.pcapng"
lua=(-X "lua_script:$SRC/usertools/wireshark/sluice.lua")
tshark "${lua[@]}" -r "$tmp/frames.pcapng" -T fields -E separator='|' -E occurrence=a \
    -e sluice.x.opcode -e sluice.x.qpn -e sluice.x.token -e sluice.fb.ack_psn \
    -e sluice.fb.sack_psn -e sluice.fb.echo_tx_id -e sluice.fb.echo_tx_ns \
    -e sluice.fb.hole_psn -e sluice.fb.hole_len -e sluice.fb.pull_seq -e sluice.fb.nak_msn \
    -e sluice.fb.syndrome -e sluice.x.psn -e sluice.x.msn -e sluice.x.pad -e sluice.x.rkey \
    -e sluice.x.rlen -e sluice.x.imm -e sluice.x.payload_len >"$tmp/got.txt"
cat >"$tmp/want.txt" <<'EOF'
0x11|7|0x0c0ffee0|1234|1300|1|78187493530||||||||||||
0x12|7|0x00beef00|1234||||1236,1239|1,3||||||||||
0x13|9|0x5eed0003|0|||||||||||||||
0x14|9|0x5eed0005|0||||||77|||||||||
0x15|7|0x5eed0007|1234|||||||42|1|||||||
0x0b|3|0xa0b0c0d0||||||||||10|5|2|0x0000abcd|2|0xdeadbeef|2
EOF
if ! diff -u "$tmp/want.txt" "$tmp/got.txt"; then
    echo "FAIL: the dissector's fields differ from the frames built (above: - built, + decoded)"
    exit 1
fi
bad=$(tshark "${lua[@]}" -r "$tmp/frames.pcapng" -Y "_ws.malformed || !sluice" -T fields \
    -e frame.number | wc -l)
[ "$bad" -eq 0 ] || { echo "FAIL: $bad frames malformed or not sluice"; exit 1; }
echo "PASS: ACK, NACK, CNP, PULL, NAK and WRITE with immediate decoded field for field, tokens too"
