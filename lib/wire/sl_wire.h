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

#include <stddef.h>
#include <stdint.h>

#include "sl_common.h"
#include "sl_crc12.h"

#define SL_WIRE_ETHERTYPE 0x88B5u /**< IEEE 802 local experimental EtherType 1 */

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

#endif /* SL_WIRE_H */
