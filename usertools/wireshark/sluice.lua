-- SPDX-License-Identifier: BSD-3-Clause
--
-- sluice.lua - Wireshark / tshark dissector for sluice frames (EtherType 0x88B5).
--
--   tshark -X lua_script:usertools/wireshark/sluice.lua -r capture.pcapng
--   wireshark -X lua_script:usertools/wireshark/sluice.lua capture.pcapng
--   (or copy it into ~/.local/lib/wireshark/plugins/)
--
-- What it decodes (docs/wire-format.md is the specification):
--   - the link header: SYN, META, VCODE and, in extended mode, the 32-bit frame ID;
--   - control frames (IDLE, PAUSE_REQ, RETRANS_REQ, LEAVE, LEAVE_ACK, and the extended
--     argument), filler / flow-control frames (plain, pause, resume);
--   - the body of a data frame: the transport header (the 20-byte base header: opcode, flags,
--     tx_id, pad, QPN, the destination QP's connection token, PSN, MSN; then RETH, immediate and
--     timestamp where the opcode and flags put them, and the payload) or a feedback frame (the
--     base header with its QPN, token and cumulative ACK, then from byte 20 the body: ACK with
--     its SACK / echo / ECN fields, NACK with its holes as PSNs, CNP, PULL, NAK with the refused
--     message's MSN and syndrome), or the link test traffic's payload header (magic 'SLT1',
--     whose first byte is no transport opcode).
--
-- VCODE: for every frame the dissector computes CRC-12 over the covered bytes (VCODE zeroed)
-- and XORs it with VCODE, which gives the frame ID modulo 4096 the sender stamped
-- (sluice.implied_id). In extended mode the explicit ID must match it, else the frame is
-- flagged (expert error). In faithful mode the ID is never sent: the dissector follows each
-- direction from its first frame (data frames count IDs up, control frames carry the next one)
-- and says, per frame, whether its ID is the one that direction expects next, a replay of an
-- earlier one (after a RETRANS_REQ), or ahead of it (frames missing from the capture), with an
-- expert note on the last two. Which body bytes VCODE covers is a link setting (header scope:
-- the first `scope_bytes` body bytes, a fixed 48 in sluiced, the longest transport header,
-- whatever the frame's own header length; frame scope: all): set it in the preferences
-- (Edit > Preferences > Protocols > SLUICE, or -o sluice.scope_bytes:N; 0 means the whole
-- frame).
--
-- Display filter fields: sluice.syn, sluice.meta, sluice.vcode, sluice.frame_id,
-- sluice.implied_id, sluice.kind, sluice.key, sluice.arg, sluice.fc, sluice.id_status,
-- sluice.test.seq, sluice.test.len, sluice.x.opcode, sluice.x.flags, sluice.x.qpn,
-- sluice.x.token, sluice.x.psn, sluice.x.msn, sluice.x.pad, sluice.x.payload_len,
-- sluice.fb.ack_psn, sluice.fb.hole_psn, sluice.fb.nak_msn, sluice.fb.syndrome,
-- sluice.xc.count, sluice.xc.qpn, sluice.xc.token, sluice.xc.psn (a connection exchange offer:
-- a SEND FIRST or ONLY with token 0 whose payload starts with its magic), ...

local ETHERTYPE = 0x88B5
local VCODE_HDR_BYTES = 48 -- SL_DP_VCODE_HDR_BYTES (lib/dp/sl_dp.h) = SL_XHDR_MAX_LEN
local XHDR_BASE_LEN = 20 -- SL_XHDR_BASE_LEN: feedback bodies start here
local TEST_MAGIC = 0x534C5431 -- 'SLT1', lib/traffic/sl_traffic.h (host byte order: little endian)
local EXCHANGE_MAGIC = 0x534C5843 -- 'SLXC', lib/dp/exchange.c (big endian)

local sluice = Proto("sluice", "sluice link")

local syn_names = { [0] = "malformed", [1] = "data", [2] = "control", [3] = "malformed" }
-- META marks the end of the link user's packet (RIFL's unit), not of a transport message: one
-- sluice link frame carries one whole body, so sluice sends 3 on every data frame but fillers.
local meta_data_names = {
    [0] = "filler / flow control",
    [1] = "valid, not the end of the link's packet",
    [2] = "valid, end of the link's packet, partial",
    [3] = "end of the link's packet, all bytes valid",
}
local key_names = {
    [0x0001] = "IDLE",
    [0x0010] = "PAUSE_REQ",
    [0x1000] = "RETRANS_REQ",
    [0x0100] = "LEAVE",
    [0x0400] = "LEAVE_ACK",
}
local fc_names = { [0] = "filler", [1] = "pause", [2] = "resume" }
local kind_names = { [1] = "data", [2] = "filler", [3] = "control" }
local status_names = {
    [0] = "first frame of this direction in the capture",
    [1] = "expected",
    [2] = "replay of an earlier ID",
    [3] = "ahead: IDs missing from the capture",
    [4] = "explicit ID matches",
    [5] = "explicit ID does not match VCODE",
}

-- Transport (lib/wire/sl_wire.h).
local op_names = {
    [0x00] = "SEND FIRST", [0x01] = "SEND MIDDLE", [0x02] = "SEND LAST",
    [0x03] = "SEND LAST with immediate", [0x04] = "SEND ONLY", [0x05] = "SEND ONLY with immediate",
    [0x06] = "WRITE FIRST", [0x07] = "WRITE MIDDLE", [0x08] = "WRITE LAST",
    [0x09] = "WRITE LAST with immediate", [0x0A] = "WRITE ONLY", [0x0B] = "WRITE ONLY with immediate",
    [0x0C] = "READ request", [0x0D] = "READ response FIRST", [0x0E] = "READ response MIDDLE",
    [0x0F] = "READ response LAST", [0x10] = "READ response ONLY",
    [0x11] = "ACK", [0x12] = "NACK", [0x13] = "CNP", [0x14] = "PULL", [0x15] = "NAK",
}
local XOP_ACK, XOP_NACK, XOP_CNP, XOP_PULL, XOP_NAK = 0x11, 0x12, 0x13, 0x14, 0x15
-- NAK syndromes (enum sl_xport_syndrome, lib/xport/sl_xport.h).
local syndrome_names = {
    [1] = "access refused (key, range or flag)", [2] = "receiver could not take it",
    [3] = "request not served",
}
local reth_ops = { [0x06] = true, [0x0A] = true, [0x0B] = true, [0x0C] = true }
local imm_ops = { [0x03] = true, [0x05] = true, [0x09] = true, [0x0B] = true }

local f = {
    x_opcode = ProtoField.uint8("sluice.x.opcode", "Opcode", base.HEX, op_names),
    x_flags = ProtoField.uint8("sluice.x.flags", "Flags", base.HEX),
    x_ackreq = ProtoField.bool("sluice.x.flags.ackreq", "ACK request", 8, nil, 0x01),
    x_rtx = ProtoField.bool("sluice.x.flags.rtx", "Retransmission", 8, nil, 0x02),
    x_ce = ProtoField.bool("sluice.x.flags.ce", "ECN CE", 8, nil, 0x04),
    x_ts = ProtoField.bool("sluice.x.flags.ts", "Timestamp", 8, nil, 0x08),
    x_trimmed = ProtoField.bool("sluice.x.flags.trimmed", "Trimmed", 8, nil, 0x10),
    x_tx_id = ProtoField.uint16("sluice.x.tx_id", "Retransmission count (0: first sent)",
        base.DEC),
    x_pad = ProtoField.uint8("sluice.x.pad", "Pad bytes", base.DEC),
    x_qpn = ProtoField.uint24("sluice.x.qpn", "Destination QP", base.DEC),
    x_token = ProtoField.uint32("sluice.x.token", "Connection token (the destination QP's)",
        base.HEX),
    x_psn = ProtoField.uint32("sluice.x.psn", "PSN", base.DEC),
    x_msn = ProtoField.uint32("sluice.x.msn", "MSN", base.DEC),
    x_raddr = ProtoField.uint64("sluice.x.raddr", "Remote address", base.HEX),
    x_rkey = ProtoField.uint32("sluice.x.rkey", "Remote key", base.HEX),
    x_rlen = ProtoField.uint32("sluice.x.rlen", "Length", base.DEC),
    x_imm = ProtoField.uint32("sluice.x.imm", "Immediate", base.HEX),
    x_ts_ns = ProtoField.uint64("sluice.x.ts_ns", "Send time, ns", base.DEC),
    x_payload_len = ProtoField.uint32("sluice.x.payload_len", "Payload length", base.DEC),
    x_payload = ProtoField.bytes("sluice.x.payload", "Payload"),
    xc_count = ProtoField.uint32("sluice.xc.count", "QPs offered", base.DEC),
    xc_qpn = ProtoField.uint32("sluice.xc.qpn", "QPN", base.DEC),
    xc_token = ProtoField.uint32("sluice.xc.token", "Its connection token", base.HEX),
    xc_psn = ProtoField.uint32("sluice.xc.psn", "Its first PSN", base.DEC),
    fb_ack_psn = ProtoField.uint32("sluice.fb.ack_psn", "Cumulative ACK (RCV.NXT)", base.DEC),
    fb_flags = ProtoField.uint8("sluice.fb.flags", "ACK flags (SACK 1, ECHO 2, ECN 4)", base.HEX),
    fb_acked = ProtoField.uint16("sluice.fb.acked_pkts", "Packets accepted since the last", base.DEC),
    fb_ce = ProtoField.uint16("sluice.fb.ce_pkts", "Of those, ECN CE", base.DEC),
    fb_echo_tx_id = ProtoField.uint16("sluice.fb.echo_tx_id", "Echoed retransmission count",
        base.DEC),
    fb_sack_psn = ProtoField.uint32("sluice.fb.sack_psn", "SACKed PSN", base.DEC),
    fb_echo_ns = ProtoField.uint64("sluice.fb.echo_tx_ns", "Echoed send time, ns", base.DEC),
    fb_nholes = ProtoField.uint8("sluice.fb.nholes", "Holes", base.DEC),
    fb_hole_psn = ProtoField.uint32("sluice.fb.hole_psn", "Hole: first missing PSN", base.DEC),
    fb_hole_len = ProtoField.uint16("sluice.fb.hole_len", "Hole: missing packets", base.DEC),
    fb_pull_seq = ProtoField.uint32("sluice.fb.pull_seq", "Pull counter", base.DEC),
    fb_nak_msn = ProtoField.uint32("sluice.fb.nak_msn", "Refused message (MSN)", base.DEC),
    fb_syndrome = ProtoField.uint8("sluice.fb.syndrome", "Syndrome", base.DEC, syndrome_names),
    syn = ProtoField.uint16("sluice.syn", "SYN", base.DEC, syn_names, 0xC000),
    meta = ProtoField.uint16("sluice.meta", "META", base.DEC, nil, 0x3000),
    vcode = ProtoField.uint16("sluice.vcode", "VCODE", base.HEX, nil, 0x0FFF),
    frame_id = ProtoField.uint32("sluice.frame_id", "Frame ID (explicit)", base.DEC),
    implied_id = ProtoField.uint16("sluice.implied_id", "Frame ID mod 4096 (VCODE xor CRC-12)",
        base.DEC),
    crc = ProtoField.uint16("sluice.crc", "CRC-12 of covered bytes", base.HEX),
    kind = ProtoField.uint8("sluice.kind", "Kind", base.DEC, kind_names),
    key = ProtoField.uint16("sluice.key", "Control key", base.HEX, key_names),
    arg = ProtoField.uint32("sluice.arg", "Argument (first ID needed)", base.DEC),
    fc = ProtoField.uint8("sluice.fc", "Flow-control code", base.HEX, fc_names),
    id_status = ProtoField.uint8("sluice.id_status", "ID", base.DEC, status_names),
    expected_id = ProtoField.uint16("sluice.expected_id", "Expected ID mod 4096", base.DEC),
    body = ProtoField.bytes("sluice.body", "Body"),
    test_magic = ProtoField.uint32("sluice.test.magic", "Magic", base.HEX),
    test_crc = ProtoField.uint32("sluice.test.crc", "CRC32C of bytes 8..len", base.HEX),
    test_seq = ProtoField.uint64("sluice.test.seq", "Sequence number", base.DEC),
    test_len = ProtoField.uint16("sluice.test.len", "Length", base.DEC),
}
local fields = {}
for _, v in pairs(f) do fields[#fields + 1] = v end
sluice.fields = fields

local ef = {
    malformed = ProtoExpert.new("sluice.malformed", "Malformed sluice frame", expert.group.MALFORMED,
        expert.severity.ERROR),
    bad_vcode = ProtoExpert.new("sluice.bad_vcode", "VCODE does not verify", expert.group.CHECKSUM,
        expert.severity.ERROR),
    replay = ProtoExpert.new("sluice.replay", "Replayed frame ID", expert.group.SEQUENCE,
        expert.severity.NOTE),
    gap = ProtoExpert.new("sluice.gap", "Frame IDs missing from the capture", expert.group.SEQUENCE,
        expert.severity.NOTE),
}
sluice.experts = { ef.malformed, ef.bad_vcode, ef.replay, ef.gap }

sluice.prefs.extended = Pref.bool("Extended mode", false,
    "The link header carries a 32-bit frame ID (link mode = extended)")
sluice.prefs.scope_bytes = Pref.uint("VCODE scope (body bytes)", VCODE_HDR_BYTES,
    "Data body bytes VCODE covers: header scope, a fixed 48 (SL_DP_VCODE_HDR_BYTES, the longest "
        .. "transport header, whatever the frame's own); 0 = the whole frame")

-- CRC-12, polynomial 0x02F, init 0, MSB first, no reflection, no final XOR (docs/wire-format.md 2.4).
local crc_table = {}
for i = 0, 255 do
    local r = bit32.lshift(i, 4)
    for _ = 1, 8 do
        if bit32.band(r, 0x800) ~= 0 then
            r = bit32.band(bit32.bxor(bit32.lshift(r, 1), 0x02F), 0xFFF)
        else
            r = bit32.band(bit32.lshift(r, 1), 0xFFF)
        end
    end
    crc_table[i] = r
end

local function crc12(bytes) -- bytes: a Lua array of numbers
    local crc = 0
    for i = 1, #bytes do
        local idx = bit32.band(bit32.bxor(bit32.rshift(crc, 4), bytes[i]), 0xFF)
        crc = bit32.bxor(bit32.band(bit32.lshift(crc, 8), 0xFFF), crc_table[idx])
    end
    return crc
end

local function append(dst, tvb, offset, len)
    for i = 0, len - 1 do dst[#dst + 1] = tvb(offset + i, 1):uint() end
end

-- Per-direction ID tracking, computed once on the first pass (pinfo.visited false).
local directions = {} -- "src>dst" -> expected next data frame ID, mod 4096
local frame_state = {} -- frame number -> { status, expected }

function sluice.init()
    directions = {}
    frame_state = {}
end

-- kind: 1 data (advances the ID), 2 filler (advances it too), 3 control (carries the next one)
local function track(pinfo, kind, implied)
    local st = frame_state[pinfo.number]
    if st then return st end
    local dir = tostring(pinfo.dl_src) .. ">" .. tostring(pinfo.dl_dst)
    local expected = directions[dir]
    st = { expected = expected }
    if expected == nil then
        st.status = 0
    elseif implied == expected then
        st.status = 1
    else
        local behind = (expected - implied) % 4096
        st.status = (behind > 0 and behind < 2048) and 2 or 3
    end
    if kind == 3 then
        directions[dir] = implied
    else
        directions[dir] = (implied + 1) % 4096
    end
    frame_state[pinfo.number] = st
    return st
end

-- A transport frame (data header + payload, or feedback); returns an Info string or nil.
-- Base header (lib/wire/sl_wire.h): 0 opcode, 1 flags, 2-3 tx_id, 4 pad, 5-7 QPN, 8-11 token,
-- 12-15 PSN (feedback: cumulative ACK), 16-19 MSN (feedback: 0); a feedback body from byte 20.
local function dissect_transport(tvb, tree)
    local len = tvb:len()
    if len < XHDR_BASE_LEN then return nil end
    local op = tvb(0, 1):uint()
    if op_names[op] == nil then return nil end
    local t = tree:add(sluice, tvb(), "sluice transport, " .. op_names[op])
    t:add(f.x_opcode, tvb(0, 1))
    local qpn = bit32.band(tvb(4, 4):uint(), 0xFFFFFF)
    local psn = tvb(12, 4):uint()
    if op >= XOP_ACK then
        local b = XHDR_BASE_LEN -- the body
        t:add(f.x_qpn, tvb(5, 3))
        t:add(f.x_token, tvb(8, 4))
        t:add(f.fb_ack_psn, tvb(12, 4))
        local info = string.format("%s qp %d ack %d", op_names[op], qpn, psn)
        if op == XOP_ACK and len >= b + 20 then
            local fl = tvb(b, 1):uint()
            t:add(f.fb_flags, tvb(b, 1))
            t:add(f.fb_acked, tvb(b + 2, 2))
            if bit32.band(fl, 4) ~= 0 then t:add(f.fb_ce, tvb(b + 4, 2)) end
            if bit32.band(fl, 3) ~= 0 then t:add(f.fb_echo_tx_id, tvb(b + 6, 2)) end
            if bit32.band(fl, 1) ~= 0 then
                t:add(f.fb_sack_psn, tvb(b + 8, 4))
                info = info .. " sack " .. tvb(b + 8, 4):uint()
            end
            if bit32.band(fl, 2) ~= 0 then t:add(f.fb_echo_ns, tvb(b + 12, 8)) end
        elseif op == XOP_NACK and len >= b + 8 then
            local n = tvb(b, 1):uint()
            t:add(f.fb_nholes, tvb(b, 1))
            t:add(f.fb_acked, tvb(b + 2, 2))
            t:add(f.fb_ce, tvb(b + 4, 2))
            for i = 0, n - 1 do
                local o = b + 8 + 4 * i
                if o + 4 > len then break end
                local start = (psn + tvb(o, 2):uint()) % 4294967296
                t:add(f.fb_hole_psn, tvb(o, 2), start)
                t:add(f.fb_hole_len, tvb(o + 2, 2))
                info = info .. string.format(" hole %d+%d", start, tvb(o + 2, 2):uint())
            end
        elseif op == XOP_PULL and len >= b + 4 then
            t:add(f.fb_pull_seq, tvb(b, 4))
        elseif op == XOP_NAK and len >= b + 8 then
            t:add(f.fb_nak_msn, tvb(b, 4))
            t:add(f.fb_syndrome, tvb(b + 4, 1))
            info = info .. string.format(" msn %d syndrome %d", tvb(b, 4):uint(),
                tvb(b + 4, 1):uint())
        end
        return info
    end
    local fl = tvb(1, 1):uint()
    local ft = t:add(f.x_flags, tvb(1, 1))
    ft:add(f.x_ackreq, tvb(1, 1))
    ft:add(f.x_rtx, tvb(1, 1))
    ft:add(f.x_ce, tvb(1, 1))
    ft:add(f.x_ts, tvb(1, 1))
    ft:add(f.x_trimmed, tvb(1, 1))
    t:add(f.x_tx_id, tvb(2, 2))
    t:add(f.x_pad, tvb(4, 1))
    t:add(f.x_qpn, tvb(5, 3))
    t:add(f.x_token, tvb(8, 4))
    t:add(f.x_psn, tvb(12, 4))
    t:add(f.x_msn, tvb(16, 4))
    local off = XHDR_BASE_LEN
    if reth_ops[op] and len >= off + 16 then
        t:add(f.x_raddr, tvb(off, 8))
        t:add(f.x_rkey, tvb(off + 8, 4))
        t:add(f.x_rlen, tvb(off + 12, 4))
        off = off + 16
    end
    if imm_ops[op] and len >= off + 4 then
        t:add(f.x_imm, tvb(off, 4))
        off = off + 4
    end
    if bit32.band(fl, 0x08) ~= 0 and len >= off + 8 then
        t:add(f.x_ts_ns, tvb(off, 8))
        off = off + 8
    end
    local plen = len - off - tvb(4, 1):uint()
    if plen < 0 then
        t:add_proto_expert_info(ef.malformed, "pad longer than what follows the header")
        return nil
    end
    t:add(f.x_payload_len, plen):set_generated()
    if plen > 0 then t:add(f.x_payload, tvb(off, plen)) end
    -- docs/wire-format.md, "Connections": magic, count, then (qpn, token, psn) per QP; the
    -- entries this segment holds (an offer longer than a segment continues in the next)
    if (op == 0x00 or op == 0x04) and tvb(8, 4):uint() == 0 and plen >= 8 and
        tvb(off, 4):uint() == EXCHANGE_MAGIC then
        local count = tvb(off + 4, 4):uint()
        local xt = t:add(sluice, tvb(off, plen), "Connection exchange offer")
        xt:add(f.xc_count, tvb(off + 4, 4))
        local e = off + 8
        for i = 0, count - 1 do
            if e + 12 > off + plen then break end
            local et = xt:add(sluice, tvb(e, 12), string.format("QP entry %d", i))
            et:add(f.xc_qpn, tvb(e, 4))
            et:add(f.xc_token, tvb(e + 4, 4))
            et:add(f.xc_psn, tvb(e + 8, 4))
            e = e + 12
        end
    end
    return string.format("%s qp %d psn %d msn %d, %d B%s", op_names[op], qpn, psn,
        tvb(16, 4):uint(), plen, bit32.band(fl, 0x02) ~= 0 and " (rtx)" or "")
end

local function dissect_test_payload(tvb, tree)
    if tvb:len() < 18 or tvb(0, 4):le_uint() ~= TEST_MAGIC then return false end
    local t = tree:add(sluice, tvb(0, 18), "Link test traffic payload")
    t:add_le(f.test_magic, tvb(0, 4))
    t:add_le(f.test_crc, tvb(4, 4))
    t:add_le(f.test_seq, tvb(8, 8))
    t:add_le(f.test_len, tvb(16, 2))
    return true
end

function sluice.dissector(tvb, pinfo, tree)
    pinfo.cols.protocol = "SLUICE"
    local len = tvb:len()
    local t = tree:add(sluice, tvb(), "sluice link")
    if len < 2 then
        t:add_proto_expert_info(ef.malformed, "shorter than the 16-bit link header")
        return len
    end
    local hdr = tvb(0, 2):uint()
    local syn = bit32.rshift(hdr, 14)
    local meta = bit32.band(bit32.rshift(hdr, 12), 3)
    local vcode = bit32.band(hdr, 0x0FFF)
    t:add(f.syn, tvb(0, 2))
    local meta_item = t:add(f.meta, tvb(0, 2))
    t:add(f.vcode, tvb(0, 2))
    local extended = sluice.prefs.extended
    local off = 2
    local explicit_id
    if extended then
        if len < 6 then
            t:add_proto_expert_info(ef.malformed, "extended mode: no room for the frame ID")
            return len
        end
        explicit_id = tvb(2, 4):uint()
        t:add(f.frame_id, tvb(2, 4))
        off = 6
    end
    local covered = { bit32.rshift(tvb(0, 1):uint(), 4) * 16, 0 }
    if extended then append(covered, tvb, 2, 4) end

    local kind, info
    if syn == 1 then
        meta_item:append_text(" (" .. meta_data_names[meta] .. ")")
        if len - off < 1 then
            t:add_proto_expert_info(ef.malformed, "data frame with an empty body")
            return len
        end
        if meta == 0 then
            kind = 2
            local code = tvb(off, 1):uint()
            t:add(f.fc, tvb(off, 1))
            if fc_names[code] == nil then
                t:add_proto_expert_info(ef.malformed, "flow-control code above 0x02")
            end
            append(covered, tvb, off, 1)
            info = "FC " .. (fc_names[code] or string.format("0x%02x", code))
        else
            kind = 1
            local body_len = len - off
            local scope = sluice.prefs.scope_bytes
            local n = (scope == 0 or scope > body_len) and body_len or scope
            append(covered, tvb, off, n)
            local body = tvb(off, body_len)
            t:add(f.body, body)
            info = "data, " .. body_len .. " B"
            local xinfo = dissect_transport(body:tvb(), t)
            if xinfo then
                info = xinfo
            elseif dissect_test_payload(body:tvb(), t) then
                info = info .. ", test seq " .. tostring(body:tvb()(8, 8):le_uint64())
            end
        end
    elseif syn == 2 then
        kind = 3
        meta_item:append_text(meta == 0 and " (control)" or " (must be 00 in a control frame)")
        if meta ~= 0 then t:add_proto_expert_info(ef.malformed, "control frame with META != 00") end
        local need = extended and 6 or 2
        if len - off < need then
            t:add_proto_expert_info(ef.malformed, "control frame shorter than its body")
            return len
        end
        local key = tvb(off, 2):uint()
        t:add(f.key, tvb(off, 2))
        if key_names[key] == nil then
            t:add_proto_expert_info(ef.malformed, string.format("unknown control key 0x%04x", key))
        end
        append(covered, tvb, off, need)
        if extended then t:add(f.arg, tvb(off + 2, 4)) end
        info = key_names[key] or string.format("key 0x%04x", key)
    else
        t:add_proto_expert_info(ef.malformed, "SYN is neither 01 (data) nor 10 (control)")
        pinfo.cols.info = "malformed link header"
        return len
    end
    t:add(f.kind, kind):set_generated()

    local crc = crc12(covered)
    local implied = bit32.bxor(crc, vcode)
    t:add(f.crc, crc):set_generated()
    t:add(f.implied_id, implied):set_generated()
    if extended then
        local ok = implied == explicit_id % 4096
        local item = t:add(f.id_status, ok and 4 or 5):set_generated()
        if not ok then
            item:add_proto_expert_info(ef.bad_vcode, string.format(
                "VCODE implies ID %d mod 4096, the header says %d (%d)", implied, explicit_id,
                explicit_id % 4096))
        end
    else
        local st = track(pinfo, kind, implied)
        local item = t:add(f.id_status, st.status):set_generated()
        if st.expected ~= nil then t:add(f.expected_id, st.expected):set_generated() end
        if st.status == 2 then
            item:add_proto_expert_info(ef.replay, string.format("replay of ID %d (expected %d)",
                implied, st.expected))
        elseif st.status == 3 then
            item:add_proto_expert_info(ef.gap, string.format(
                "ID %d is %d ahead of the expected %d", implied,
                (implied - st.expected) % 4096, st.expected))
        end
    end
    pinfo.cols.info = string.format("%s (ID %d)", info, implied)
    return len
end

DissectorTable.get("ethertype"):add(ETHERTYPE, sluice)
