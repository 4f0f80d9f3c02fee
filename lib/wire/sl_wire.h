/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_wire.h - the sluice link format (docs/wire-format.md is the full specification).
 *
 * One link frame per Ethernet II frame, EtherType 0x88B5. After the Ethernet header:
 *
 *   bits 15..14 SYN    01 data, 10 control, 00 / 11 malformed           (RIFL, paper sec. 2)
 *   bits 13..12 META   00 filler / flow control, 01 valid, 10 valid end of packet partial,
 *                      11 valid end of packet full (RIFL (OSA 2022), Table 1); the packet is the
 *                      link user's, not the transport's message: a sluice link frame carries
 *                      one whole body, so sluice sends 11 on every data frame but fillers
 *   bits 11..0  VCODE  CRC12(covered bytes, VCODE zeroed) XOR (frame_id mod 4096)
 *   [extended mode only] 32-bit frame ID, network order
 *   body:
 *     data (SYN 01, META != 00): transport header + payload, opaque to the link
 *     filler / FC (SYN 01, META 00): FC code byte 0x00 filler, 0x01 pause, 0x02 resume
 *     control (SYN 10, META 00): 16-bit key IDLE 0x0001, PAUSE_REQ 0x0010, RETRANS_REQ 0x1000
 *                                (RIFL), LEAVE 0x0100, LEAVE_ACK 0x0400 (sluice: an orderly
 *                                goodbye); extended mode adds a 32-bit argument (RETRANS_REQ:
 *                                the first frame ID the receiver needs; 0 otherwise)
 *   anything after the defined body of a filler or control frame is Ethernet padding, ignored.
 *
 * Covered bytes: the link header with VCODE zeroed, the explicit ID (extended), then the body:
 * all of a control or filler frame's defined body, and the first min(body_len, scope_bytes)
 * bytes of a data frame. scope_bytes is a link setting, one fixed count for every data frame of
 * the lane: sluiced's header scope is SL_DP_VCODE_HDR_BYTES (48, the longest transport header,
 * whatever each frame's own header length; the Ethernet FCS covers the payload after it), its
 * frame scope SL_WIRE_SCOPE_ALL (the whole frame, RIFL).
 *
 * The decoder never trusts a length: every rejection has a reason (enum sl_wire_reject) that
 * the link counts. Pure C, no DPDK.
 */
#ifndef SL_WIRE_H
#define SL_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sl_common.h"

#define SL_WIRE_ETHERTYPE 0x88B5u /**< IEEE 802 local experimental EtherType 1 */

#define SL_CRC12_MASK                                                                              \
	0xFFFu /**< VCODE bits: a CRC-12 (crc12.c) XOR the low 12 bits of the frame ID */

#define SL_WIRE_SYN_DATA 0x1u
#define SL_WIRE_SYN_CTRL 0x2u

/*
 * META. EOM, end of message, is the end of the link user's packet (RIFL's unit), not of a
 * transport message: sluice sends EOM_FULL on every data frame but fillers (docs/wire-format.md
 * section 2.2); a receiver accepts VALID and EOM_PARTIAL too and delivers them the same way.
 */
#define SL_WIRE_META_FILLER 0x0u      /**< filler / flow-control data frame */
#define SL_WIRE_META_VALID 0x1u       /**< valid, not the end of the link's packet */
#define SL_WIRE_META_EOM_PARTIAL 0x2u /**< valid, end of the link's packet, partial frame */
#define SL_WIRE_META_EOM_FULL 0x3u    /**< end of the link's packet, all bytes valid */

#define SL_WIRE_KEY_IDLE 0x0001u        /**< RIFL RTL rx_controller.sv IDLE_KEY */
#define SL_WIRE_KEY_PAUSE_REQ 0x0010u   /**< RIFL RTL PAUSE_KEY */
#define SL_WIRE_KEY_RETRANS_REQ 0x1000u /**< RIFL RTL RETRANS_KEY */
#define SL_WIRE_KEY_LEAVE 0x0100u       /**< sluice: this end is about to close its port */
#define SL_WIRE_KEY_LEAVE_ACK 0x0400u   /**< sluice: the peer's LEAVE seen, port left alone */

#define SL_WIRE_FC_FILLER 0x00u /**< plain filler */
#define SL_WIRE_FC_PAUSE 0x01u  /**< receiver asks the sender to stop data */
#define SL_WIRE_FC_RESUME 0x02u /**< receiver lets data flow again */

#define SL_WIRE_HDR_LEN 2u   /**< SYN + META + VCODE */
#define SL_WIRE_ID_LEN 4u    /**< explicit frame ID, extended mode */
#define SL_WIRE_HDR_MAX 6u   /**< largest link header (extended) */
#define SL_WIRE_KEY_LEN 2u   /**< control key */
#define SL_WIRE_ARG_LEN 4u   /**< control argument, extended mode */
#define SL_WIRE_FC_LEN 1u    /**< FC code byte */
#define SL_WIRE_CTRL_MAX 12u /**< largest control frame: 6 + 2 + 4 bytes */

#define SL_WIRE_SCOPE_ALL UINT16_MAX /**< scope_bytes: VCODE covers the whole frame */

enum sl_wire_mode {
	SL_WIRE_MODE_FAITHFUL = 0, /**< frame ID implicit, never sent (RIFL) */
	SL_WIRE_MODE_EXTENDED = 1, /**< explicit 32-bit ID after the 16-bit header */
};

/* A link's format settings: both ends of a lane must agree. */
struct sl_wire_fmt {
	enum sl_wire_mode mode;
	uint16_t scope_bytes; /**< data body bytes covered by VCODE, SL_WIRE_SCOPE_ALL = all */
};

enum sl_wire_reject {
	SL_WIRE_OK = 0,
	SL_WIRE_ERR_SHORT,     /**< shorter than the link header, ID or defined body */
	SL_WIRE_ERR_SYN,       /**< SYN 00 or 11 */
	SL_WIRE_ERR_CTRL_META, /**< control frame with META != 00 */
	SL_WIRE_ERR_KEY,       /**< control key is none of the SL_WIRE_KEY_* */
	SL_WIRE_ERR_FC,        /**< filler frame with an FC code other than 0, 1, 2 */
	SL_WIRE_ERR_EMPTY,     /**< data frame (META != 00) without a body */
	SL_WIRE_ERR_LONG,      /**< longer than 65535 bytes */
	SL_WIRE_ERR__MAX
};

/* A decoded frame; offsets index the buffer given to sl_wire_decode(). */
struct sl_wire_frame {
	uint8_t syn;       /**< SL_WIRE_SYN_DATA or SL_WIRE_SYN_CTRL */
	uint8_t meta;      /**< SL_WIRE_META_* */
	uint16_t vcode;    /**< received VCODE, 12 bits */
	uint16_t crc;      /**< CRC-12 of the covered bytes with VCODE zeroed */
	uint16_t key;      /**< control key (control frames) */
	uint8_t fc;        /**< FC code (filler frames) */
	uint16_t body_off; /**< bytes: offset of the body (after link header and ID) */
	uint16_t body_len; /**< bytes: body length, padding included */
	uint32_t id;       /**< explicit frame ID (extended mode), 0 in faithful mode */
	uint32_t arg;      /**< control argument (extended mode), 0 in faithful mode */
};

/* Human-readable reason ("short", "syn", ...), for counters and telemetry. */
const char *sl_wire_reject_name(enum sl_wire_reject r);

/* Link header length for the mode: 2 (faithful) or 6 (extended) bytes. */
static inline size_t
sl_wire_hdr_len(const struct sl_wire_fmt *fmt)
{
	return fmt->mode == SL_WIRE_MODE_EXTENDED ? SL_WIRE_HDR_MAX : SL_WIRE_HDR_LEN;
}

/* Does a decoded frame's VCODE match frame ID id (mod 4096)? */
static inline bool
sl_wire_vcode_ok(const struct sl_wire_frame *f, uint32_t id)
{
	return (uint16_t)((f->crc ^ id) & SL_CRC12_MASK) == f->vcode;
}

/*
 * Parse len bytes (starting at the link header, i.e. after the Ethernet header) and compute
 * the CRC of the covered bytes. SL_WIRE_OK, or the first reason the frame is malformed (f is
 * then partially filled). Never reads past buf + len.
 */
enum sl_wire_reject sl_wire_decode(const struct sl_wire_fmt *fmt, const uint8_t *buf, size_t len,
				   struct sl_wire_frame *f);

/*
 * Write the link header of a data frame (META != 00) whose body is body[0, body_len): hdr
 * receives sl_wire_hdr_len() bytes, to be placed right before the body. Returns that length.
 */
size_t sl_wire_encode_data(const struct sl_wire_fmt *fmt, uint8_t *hdr, uint8_t meta, uint32_t id,
			   const uint8_t *body, size_t body_len);

/* Write a whole filler / FC frame (header + FC byte) to out; returns its length (3 or 7). */
size_t sl_wire_encode_filler(const struct sl_wire_fmt *fmt, uint8_t *out, uint32_t id, uint8_t fc);

/*
 * Write a whole control frame carrying the sender's current ID to out (at least
 * SL_WIRE_CTRL_MAX bytes); returns its length (4 faithful, 12 extended). arg is sent in
 * extended mode only.
 */
size_t sl_wire_encode_ctrl(const struct sl_wire_fmt *fmt, uint8_t *out, uint32_t id, uint16_t key,
			   uint32_t arg);

/*
 * Encapsulation: what carries a link frame after the Ethernet addresses (encap.c's essay,
 * docs/wire-format.md section 1): EtherType 0x88B5 and the link frame at once (Ethernet), or
 * IPv4 / IPv6 (EtherType 0x0800 / 0x86DD), UDP, then the link frame (UDP). One setting per port;
 * both ends agree on it.
 */
enum sl_encap_kind {
	SL_ENCAP_ETHERNET = 0, /**< EtherType 0x88B5: one cable, one peer */
	SL_ENCAP_UDP4 = 1,     /**< IPv4 + UDP: 28 bytes more a frame */
	SL_ENCAP_UDP6 = 2,     /**< IPv6 + UDP: 48 bytes more a frame */
};

/* The two ECN bits of the IP header (RFC 3168). */
#define SL_ENCAP_ECN_NOT_ECT 0x0u
#define SL_ENCAP_ECN_ECT1 0x1u
#define SL_ENCAP_ECN_ECT0 0x2u
#define SL_ENCAP_ECN_CE 0x3u
#define SL_ENCAP_ECN_MASK 0x3u

#define SL_ENCAP_HDR_MAX 48u /**< largest encapsulation: IPv6 (40) + UDP (8) bytes */

/* A port's encapsulation and addresses (network order; an IPv4 address in the first 4 bytes). */
struct sl_encap {
	enum sl_encap_kind kind;
	uint8_t local_ip[16]; /**< this port's address: the source sent, the destination taken */
	uint8_t peer_ip[16];  /**< the peer's: the destination sent, the only source taken */
	uint16_t udp_port;    /**< UDP destination port, both ends */
};

enum sl_encap_reject {
	SL_ENCAP_OK = 0,
	SL_ENCAP_ERR_ETHERTYPE,    /**< not this port's EtherType (another protocol's frame) */
	SL_ENCAP_ERR_SHORT,        /**< shorter than the IP header */
	SL_ENCAP_ERR_IP_VERSION,   /**< IP version other than the port's */
	SL_ENCAP_ERR_IP_OPTIONS,   /**< IPv4 options, IPv6 extension headers */
	SL_ENCAP_ERR_IP_LENGTH,    /**< IP length beyond the frame, or below the header */
	SL_ENCAP_ERR_IP_CHECKSUM,  /**< IPv4 header checksum wrong */
	SL_ENCAP_ERR_IP_FRAGMENT,  /**< IPv4 fragment (MF or an offset) */
	SL_ENCAP_ERR_IP_PROTO,     /**< not UDP */
	SL_ENCAP_ERR_IP_DST,       /**< not addressed to this port */
	SL_ENCAP_ERR_IP_SRC,       /**< not from the port's peer */
	SL_ENCAP_ERR_UDP_PORT,     /**< another UDP destination port */
	SL_ENCAP_ERR_UDP_LENGTH,   /**< UDP length other than the IP payload's */
	SL_ENCAP_ERR_UDP_CHECKSUM, /**< a non-zero UDP checksum that is wrong */
	SL_ENCAP_ERR__MAX
};

/* What sl_encap_read() found. */
struct sl_encap_rx {
	uint16_t link_off; /**< bytes: where the link frame starts, from the EtherType's end */
	uint16_t link_len; /**< bytes: the link frame (UDP: Ethernet padding cut off) */
	uint8_t ecn;       /**< SL_ENCAP_ECN_* of the IP header; NOT_ECT for Ethernet */
	uint16_t src_port; /**< UDP source port; 0 for Ethernet */
};

/* Human-readable reason ("ip_checksum", ...), for counters and telemetry. */
const char *sl_encap_reject_name(enum sl_encap_reject r);

/* The EtherType (host order) of e's frames. */
uint16_t sl_encap_ethertype(const struct sl_encap *e);

/* Bytes between the EtherType and the link header: 0, 28 (IPv4 + UDP) or 48 (IPv6 + UDP). */
size_t sl_encap_hdr_len(const struct sl_encap *e);

/* A UDP source port in 49152-65535 from 32 bits of entropy (a QPN, a lane): ECMP's input. */
uint16_t sl_encap_src_port(uint32_t entropy);

/*
 * Write e's headers for a link frame of link_len bytes into out (sl_encap_hdr_len() bytes, right
 * after the EtherType): the IP header with ecn (SL_ENCAP_ECN_*) and, for IPv4, its checksum;
 * UDP from src_port to e->udp_port, checksum 0. Returns the bytes written.
 */
size_t sl_encap_write(const struct sl_encap *e, uint8_t *out, size_t link_len, uint16_t src_port,
		      uint8_t ecn);

/*
 * Check a received frame's encapsulation: ethertype (host order) and the len bytes after it.
 * SL_ENCAP_OK with rx filled, or the first field that is wrong. Never reads past buf + len.
 */
enum sl_encap_reject sl_encap_read(const struct sl_encap *e, uint16_t ethertype, const uint8_t *buf,
				   size_t len, struct sl_encap_rx *rx);

/* ARP for IPv4 over Ethernet (arp.c): a UDP port's neighbour, EtherType 0x0806. */
#define SL_ARP_ETHERTYPE 0x0806u
#define SL_ARP_LEN 28u /**< bytes after the Ethernet header */
#define SL_ARP_REQUEST 1u
#define SL_ARP_REPLY 2u

struct sl_arp {
	uint16_t op;    /**< SL_ARP_REQUEST or SL_ARP_REPLY */
	uint8_t sha[6]; /**< sender MAC */
	uint8_t spa[4]; /**< sender IPv4 address */
	uint8_t tha[6]; /**< target MAC (a request: zeros) */
	uint8_t tpa[4]; /**< target IPv4 address */
};

/* Write a into out (SL_ARP_LEN bytes). Returns SL_ARP_LEN. */
size_t sl_arp_write(uint8_t *out, const struct sl_arp *a);

/* An Ethernet / IPv4 request or reply of len bytes at buf into a; false for anything else. */
bool sl_arp_read(const uint8_t *buf, size_t len, struct sl_arp *a);

/*
 * The transport header and the feedback formats, after the link header
 * (docs/wire-format.md, "Transport header", is the specification with worked examples).
 *
 * Every transport frame starts with the 20-byte base header, modelled on RoCE's BTH:
 *
 *   0      opcode   SEND / WRITE / READ (the InfiniBand RC opcode values 0x00-0x10), ACK 0x11,
 *                   and sluice's NACK 0x12, CNP 0x13, PULL 0x14, NAK 0x15
 *   1      flags    SL_XHDR_F_*: ACK request, retransmission, ECN CE, timestamp, trimmed
 *   2-3    tx_id    data: the sender's retransmission count of this PSN, 0 on the first
 *                   transmission, 1..3 after, staying at 3 (rtx-cnt, Tonic (NSDI 2020),
 *                   section 3.2.3); flag RTX is set exactly when it is not 0; feedback: 0
 *   4      pad      data: zero bytes after the payload (the Ethernet minimum), as BTH's
 *                   PadCnt; feedback: zero
 *   5-7    qpn      destination queue pair, 24 bits, as BTH
 *   8-11   token    the destination QP's connection token: drawn at random by its daemon for
 *                   this connection and learned by the sender when it connected; the receiver
 *                   refuses a frame that does not carry it (docs/wire-format.md, "Connections")
 *   12-15  psn      data: the packet sequence number; feedback: the cumulative ACK (RCV.NXT)
 *   16-19  msn      data: the message sequence number; feedback: 0
 *
 * then, for data, in this order and only where the opcode or a flag asks for them:
 *   RETH   16 B     remote address (8), rkey (4), length (4): WRITE FIRST / ONLY, READ request
 *   IMM     4 B     immediate data: SEND / WRITE LAST or ONLY "with immediate"
 *   TS      8 B     the sender's send time, ns (flag TS), echoed by ACKs for RTT samples
 * and the payload; for feedback, the opcode's body (ACK 20 B, NACK 8 + 4 per hole, CNP none,
 * PULL 4 B, NAK 8 B: the refused message's MSN, the syndrome, 3 reserved bytes).
 * PSNs are 32-bit and wrap (the scheduler's sequence space), not BTH's 24 bits: at 100 Gbit/s
 * and 4 KB segments 24 bits wrap in 5 s, and nothing here needs the 8 bits back.
 *
 * Decoders check every length, opcode, reserved bit and count; each rejection has a reason
 * (enum sl_xhdr_reject) counted in a struct the caller owns. Encoding is canonical (fields the
 * flags do not announce are zero), so decode(encode(x)) == x and encode(decode(b)) == b.
 * Pure C, no DPDK, no allocation.
 */
/* Opcodes (byte 0). 0x00-0x11 are InfiniBand's RC opcodes. */
enum sl_xhdr_op {
	SL_XOP_SEND_FIRST = 0x00,
	SL_XOP_SEND_MIDDLE = 0x01,
	SL_XOP_SEND_LAST = 0x02,
	SL_XOP_SEND_LAST_IMM = 0x03,
	SL_XOP_SEND_ONLY = 0x04,
	SL_XOP_SEND_ONLY_IMM = 0x05,
	SL_XOP_WRITE_FIRST = 0x06,
	SL_XOP_WRITE_MIDDLE = 0x07,
	SL_XOP_WRITE_LAST = 0x08,
	SL_XOP_WRITE_LAST_IMM = 0x09,
	SL_XOP_WRITE_ONLY = 0x0A,
	SL_XOP_WRITE_ONLY_IMM = 0x0B,
	SL_XOP_READ_REQ = 0x0C,
	SL_XOP_READ_RESP_FIRST = 0x0D,
	SL_XOP_READ_RESP_MIDDLE = 0x0E,
	SL_XOP_READ_RESP_LAST = 0x0F,
	SL_XOP_READ_RESP_ONLY = 0x10,
	SL_XOP_ACK = 0x11,  /**< cumulative ACK (+ SACK, echo, ECN count) */
	SL_XOP_NACK = 0x12, /**< cumulative ACK + up to 3 holes (MELO) or go-back-N */
	SL_XOP_CNP = 0x13,  /**< DCQCN congestion notification */
	SL_XOP_PULL = 0x14, /**< NDP pull: one more packet may be sent */
	SL_XOP_NAK = 0x15,  /**< the receiver refused a message: its MSN and why (syndrome) */
	SL_XOP_MAX = SL_XOP_NAK,
};

/* Base header flags (byte 1). */
#define SL_XHDR_F_ACKREQ (1u << 0)  /**< data: answer with an ACK now */
#define SL_XHDR_F_RTX (1u << 1)     /**< data: a retransmission */
#define SL_XHDR_F_CE (1u << 2)      /**< data: ECN Congestion Experienced on the way */
#define SL_XHDR_F_TS (1u << 3)      /**< data: an 8-byte send timestamp follows */
#define SL_XHDR_F_TRIMMED (1u << 4) /**< data: the payload was cut in the network (NDP) */
#define SL_XHDR_F_DATA_ALL 0x1Fu

#define SL_XHDR_BASE_LEN 20u
#define SL_XHDR_RETH_LEN 16u
#define SL_XHDR_IMM_LEN 4u
#define SL_XHDR_TS_LEN 8u
#define SL_XHDR_MAX_LEN (SL_XHDR_BASE_LEN + SL_XHDR_RETH_LEN + SL_XHDR_IMM_LEN + SL_XHDR_TS_LEN)
#define SL_XHDR_QPN_MAX 0xFFFFFFu /**< 24-bit queue pair numbers */

/* Feedback bodies after the base header. */
#define SL_XFB_ACK_LEN 20u
#define SL_XFB_NACK_LEN(nholes) (8u + 4u * (nholes))
#define SL_XFB_PULL_LEN 4u
#define SL_XFB_NAK_LEN 8u
#define SL_XFB_HOLES 3u /**< holes per NACK: the 3 most recent, as MELO */
#define SL_XFB_MAX_LEN (SL_XHDR_BASE_LEN + SL_XFB_ACK_LEN) /**< longest feedback frame */

/*
 * NAK syndromes (feedback body byte 4), 1..SL_XFB_SYN_MAX: why the receiver refused a message.
 * The transport endpoint names them (enum sl_xport_syndrome); the wire only bounds them.
 */
#define SL_XFB_SYN_MAX 4u

/* ACK flags (feedback body). */
#define SL_XFB_F_SACK (1u << 0) /**< sack_psn is valid */
#define SL_XFB_F_ECHO (1u << 1) /**< echo_tx_ns (and echo_tx_id) are valid */
#define SL_XFB_F_ECN (1u << 2)  /**< ce_pkts is valid */
#define SL_XFB_F_ALL 0x07u

/* A data (or READ request) frame's header, decoded. */
struct sl_xhdr {
	uint8_t opcode;      /**< enum sl_xhdr_op, data opcodes only */
	uint8_t flags;       /**< SL_XHDR_F_* */
	uint16_t tx_id;      /**< retransmissions of this PSN: 0 first sent, saturates at 3 */
	uint8_t pad_bytes;   /**< zero bytes after the payload, to the frame minimum */
	uint32_t qpn;        /**< destination queue pair, < 2^24 */
	uint32_t token;      /**< the destination QP's connection token */
	uint32_t psn;        /**< packet sequence number */
	uint32_t msn;        /**< message sequence number */
	uint64_t raddr;      /**< RETH: remote address */
	uint32_t rkey;       /**< RETH: remote key */
	uint32_t rlen_bytes; /**< RETH: length of the whole operation, bytes */
	uint32_t imm;        /**< IMM: immediate data */
	uint64_t ts_ns;      /**< TS: send time, ns */
};

struct sl_xfb_hole {
	uint32_t start_psn; /**< first missing PSN */
	uint16_t len_pkts;  /**< missing packets, >= 1 */
};

/* A feedback frame, decoded. */
struct sl_xfb {
	uint8_t opcode;      /**< SL_XOP_ACK, NACK, CNP, PULL or NAK */
	uint8_t flags;       /**< ACK: SL_XFB_F_*; 0 otherwise */
	uint8_t nholes;      /**< NACK: holes, newest first, <= SL_XFB_HOLES; 0 otherwise */
	uint32_t qpn;        /**< the queue pair the feedback is for (the data's sender's) */
	uint32_t token;      /**< that queue pair's connection token */
	uint32_t ack_psn;    /**< cumulative: every PSN before it was delivered (NAK: the first
			      *   PSN of the refused message) */
	uint16_t acked_pkts; /**< ACK, NACK: packets accepted since the previous ACK or NACK */
	uint16_t ce_pkts;    /**< ACK with ECN, NACK: of those, ECN-CE marked */
	uint32_t sack_psn;   /**< ACK with SACK: the out-of-order PSN that caused it */
	uint16_t echo_tx_id; /**< ACK with SACK or ECHO: tx_id of the newest packet covered */
	uint64_t echo_tx_ns; /**< ACK with ECHO: send time of the newest packet covered, ns */
	struct sl_xfb_hole hole[SL_XFB_HOLES]; /**< NACK holes */
	uint32_t pull_seq;                     /**< PULL: per-QP pull counter, from 1 */
	uint32_t nak_msn;                      /**< NAK: MSN of the refused message */
	uint8_t syndrome;                      /**< NAK: 1..SL_XFB_SYN_MAX */
};

/* Why a decoder refused a frame. */
enum sl_xhdr_reject {
	SL_XREJ_SHORT,         /**< shorter than its opcode, flags, hole count or pad need */
	SL_XREJ_OPCODE,        /**< unknown opcode, or feedback where data was expected (or back) */
	SL_XREJ_RESERVED,      /**< a reserved bit or byte is not zero */
	SL_XREJ_QPN,           /**< feedback: QPN above 24 bits (byte 4 not zero) */
	SL_XREJ_FLAGS,         /**< a flag this opcode cannot carry */
	SL_XREJ_STRAY,         /**< a field the flags do not announce is not zero */
	SL_XREJ_HOLES,         /**< more than 3 holes */
	SL_XREJ_HOLE_RANGE,    /**< a hole of length 0 or past the window */
	SL_XREJ_RETH_LEN_ZERO, /**< a READ request for 0 bytes */
	SL_XREJ_SYNDROME,      /**< a NAK with syndrome 0 or above SL_XFB_SYN_MAX */
	SL_XREJ_MAX,
};

/* Rejections by reason; the caller owns it (a lane, a QP table, a test). */
struct sl_xhdr_rejects {
	uint64_t n[SL_XREJ_MAX];
};

/* Counter name of a reason ("short", "opcode", ...), for telemetry. */
const char *sl_xhdr_reject_name(enum sl_xhdr_reject r);

/* The opcode is a data opcode (SEND, WRITE, READ request or response). */
bool sl_xhdr_op_is_data(uint8_t opcode);

/* Header bytes a data frame with this opcode and flags takes: base + RETH + IMM + TS. */
size_t sl_xhdr_len(uint8_t opcode, uint8_t flags);

/*
 * Encode a data header into buf. Returns the bytes written, -EINVAL (not a data opcode, a QPN
 * above 24 bits, an unknown flag) or -ENOSPC (len too small).
 */
int sl_xhdr_encode(const struct sl_xhdr *h, uint8_t *buf, size_t len);

/*
 * The 20-byte base header alone, into buf (SL_XHDR_BASE_LEN bytes): what sl_xhdr_encode writes
 * for a data opcode without RETH or IMM and flags without TS, and the base of a feedback frame.
 * Nothing is checked: the caller holds a QPN of 24 bits and flags the opcode allows. Inline, for
 * the transmit path of every data packet.
 */
static inline void
sl_xhdr_put_base(uint8_t *buf, uint8_t opcode, uint8_t flags, uint16_t tx_id, uint8_t pad_bytes,
		 uint32_t qpn, uint32_t token, uint32_t psn, uint32_t msn)
{
	sl_put_be32(buf + 4, qpn);
	buf[0] = opcode;
	buf[1] = flags;
	sl_put_be16(buf + 2, tx_id);
	buf[4] = pad_bytes;
	sl_put_be32(buf + 8, token);
	sl_put_be32(buf + 12, psn);
	sl_put_be32(buf + 16, msn);
}

/* The destination QPN of a transport frame of at least SL_XHDR_BASE_LEN bytes at buf. */
static inline uint32_t
sl_xhdr_qpn(const uint8_t *buf)
{
	return (uint32_t)buf[5] << 16 | (uint32_t)buf[6] << 8 | buf[7];
}

/*
 * The path marked the frame at buf (len bytes) Congestion Experienced: set SL_XHDR_F_CE on a
 * data frame, as a marking switch would (feedback frames carry no mark).
 */
static inline void
sl_xhdr_mark_ce(uint8_t *buf, size_t len)
{
	if (len >= SL_XHDR_BASE_LEN && buf[0] < SL_XOP_ACK)
		buf[1] |= SL_XHDR_F_CE;
}

/*
 * Decode a data header from buf (len bytes: header, payload and pad). Returns the header bytes
 * (the payload starts there and is len - that - h->pad_bytes long) or -EBADMSG; each rejection
 * is counted in rej (may be NULL).
 */
int sl_xhdr_decode(const uint8_t *buf, size_t len, struct sl_xhdr *h, struct sl_xhdr_rejects *rej);

/*
 * Encode a feedback frame (base header and body) into buf. Returns the bytes written, -EINVAL
 * (not a feedback opcode, more than 3 holes, a hole of length 0 or more than 65535 PSNs past
 * ack_psn, a QPN above 24 bits, a NAK syndrome outside 1..SL_XFB_SYN_MAX) or -ENOSPC.
 */
int sl_xfb_encode(const struct sl_xfb *fb, uint8_t *buf, size_t len);

/*
 * Decode a feedback frame of len bytes. window_pkts bounds each hole (offset from ack_psn +
 * length). Returns the bytes consumed or -EBADMSG, counting the reason in rej (may be NULL).
 */
int sl_xfb_decode(const uint8_t *buf, size_t len, uint32_t window_pkts, struct sl_xfb *fb,
		  struct sl_xhdr_rejects *rej);

#endif /* SL_WIRE_H */
