/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_recv_wire.h - the feedback packets of lib/recv on the wire (docs/recv.md, section 4.2):
 * ACK, NACK (the cumulative ACK and up to 3 holes, each a 2 B offset from it and a 2 B
 * length, as MELO's 4 B per hole), CNP and PULL, big-endian, after the link header.
 *
 * The encoding is canonical: fields the flags do not announce are zero, and the decoder
 * refuses anything else (unknown opcode, short buffer, reserved bits, stray fields, bad holes),
 * so decoding an encoded action gives back every field the format carries, and encoding a
 * decoded body gives back the same bytes. Flags (SACK, ECHO, ECN) exist on ACKs only; a NACK
 * always carries its acked and CE counts.
 */
#ifndef SL_RECV_WIRE_H
#define SL_RECV_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "sl_recv.h"

/* Opcodes: byte 0 of a feedback body. */
#define SL_RECV_OP_ACK 0x11
#define SL_RECV_OP_NACK 0x12
#define SL_RECV_OP_CNP 0x13
#define SL_RECV_OP_PULL 0x14

#define SL_RECV_WIRE_COMMON_LEN 12u /**< opcode, flags, nholes, reserved, conn, ack_psn */
#define SL_RECV_WIRE_ACK_LEN 32u
#define SL_RECV_WIRE_NACK_LEN(nholes) (16u + 4u * (nholes))
#define SL_RECV_WIRE_CNP_LEN 12u
#define SL_RECV_WIRE_PULL_LEN 16u
#define SL_RECV_WIRE_MAX_LEN SL_RECV_WIRE_ACK_LEN /**< longest feedback body */

/*
 * Encode feedback action a (type ACK, NACK, CNP or PULL) into buf. Returns the bytes written,
 * -EINVAL for a data action, more than 3 holes or a hole that does not fit the format (offset
 * from ack_psn or length beyond 16 bits, length 0), -ENOSPC when len is too small.
 */
int sl_recv_fb_encode(const struct sl_recv_action *a, uint8_t *buf, size_t len);

/*
 * Decode a feedback body of len bytes into a. window_pkts bounds each hole (offset + length).
 * Returns the bytes consumed, -EMSGSIZE when the buffer is shorter than its opcode needs,
 * -EPROTO for an unknown opcode or a reserved bit or field that is not zero, -EBADMSG for a
 * bad hole (length 0, or past the window).
 */
int sl_recv_fb_decode(const uint8_t *buf, size_t len, uint32_t window_pkts,
		      struct sl_recv_action *a);

#endif /* SL_RECV_WIRE_H */
