/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xhdr.c - encode and decode the transport header and the feedback formats (sl_wire.h;
 * docs/wire-format.md, "Transport header").
 *
 * Both decoders read the 20-byte base header first: opcode, flags, tx_id, a 24-bit QPN, the
 * destination QP's connection token, PSN and MSN. A data opcode then decides which extensions
 * follow (RETH for WRITE FIRST / ONLY and READ requests, IMM for the "with immediate" opcodes) and
 * flag TS adds the timestamp; a feedback opcode decides its body. Nothing is read before its length
 * was checked, and every field the opcode or flags do not announce must be zero, so that one frame
 * has exactly one encoding (the fuzz targets check encode(decode(b)) == b).
 */
#include <errno.h>
#include <string.h>

#include "sl_common.h"
#include "sl_wire.h"

static const char *const reject_names[SL_XREJ_MAX] = {
	[SL_XREJ_SHORT] = "short",
	[SL_XREJ_OPCODE] = "opcode",
	[SL_XREJ_RESERVED] = "reserved",
	[SL_XREJ_QPN] = "qpn",
	[SL_XREJ_FLAGS] = "flags",
	[SL_XREJ_STRAY] = "stray",
	[SL_XREJ_HOLES] = "holes",
	[SL_XREJ_HOLE_RANGE] = "hole_range",
	[SL_XREJ_RETH_LEN_ZERO] = "reth_len_zero",
	[SL_XREJ_SYNDROME] = "syndrome",
};

const char *
sl_xhdr_reject_name(enum sl_xhdr_reject r)
{
	return (unsigned)r < SL_XREJ_MAX ? reject_names[r] : "?";
}

static int
reject(struct sl_xhdr_rejects *rej, enum sl_xhdr_reject r)
{
	if (rej != NULL)
		rej->n[r]++;
	return -EBADMSG;
}

bool
sl_xhdr_op_is_data(uint8_t opcode)
{
	return opcode <= SL_XOP_READ_RESP_ONLY;
}

static bool
has_reth(uint8_t op)
{
	return op == SL_XOP_WRITE_FIRST || op == SL_XOP_WRITE_ONLY || op == SL_XOP_WRITE_ONLY_IMM ||
	       op == SL_XOP_READ_REQ;
}

static bool
has_imm(uint8_t op)
{
	return op == SL_XOP_SEND_LAST_IMM || op == SL_XOP_SEND_ONLY_IMM ||
	       op == SL_XOP_WRITE_LAST_IMM || op == SL_XOP_WRITE_ONLY_IMM;
}

size_t
sl_xhdr_len(uint8_t opcode, uint8_t flags)
{
	return SL_XHDR_BASE_LEN + (has_reth(opcode) ? SL_XHDR_RETH_LEN : 0) +
	       (has_imm(opcode) ? SL_XHDR_IMM_LEN : 0) +
	       ((flags & SL_XHDR_F_TS) ? SL_XHDR_TS_LEN : 0);
}

int
sl_xhdr_encode(const struct sl_xhdr *h, uint8_t *buf, size_t len)
{
	size_t n, off = SL_XHDR_BASE_LEN;

	if (!sl_xhdr_op_is_data(h->opcode) || h->qpn > SL_XHDR_QPN_MAX ||
	    (h->flags & ~SL_XHDR_F_DATA_ALL))
		return -EINVAL;
	n = sl_xhdr_len(h->opcode, h->flags);
	if (len < n)
		return -ENOSPC;
	sl_xhdr_put_base(buf, h->opcode, h->flags, h->tx_id, h->pad_bytes, h->qpn, h->token, h->psn,
			 h->msn);
	if (has_reth(h->opcode)) {
		sl_put_be64(buf + off, h->raddr);
		sl_put_be32(buf + off + 8, h->rkey);
		sl_put_be32(buf + off + 12, h->rlen_bytes);
		off += SL_XHDR_RETH_LEN;
	}
	if (has_imm(h->opcode)) {
		sl_put_be32(buf + off, h->imm);
		off += SL_XHDR_IMM_LEN;
	}
	if (h->flags & SL_XHDR_F_TS)
		sl_put_be64(buf + off, h->ts_ns);
	return (int)n;
}

int
sl_xhdr_decode(const uint8_t *buf, size_t len, struct sl_xhdr *h, struct sl_xhdr_rejects *rej)
{
	size_t n, off = SL_XHDR_BASE_LEN;

	memset(h, 0, sizeof(*h));
	if (len < SL_XHDR_BASE_LEN)
		return reject(rej, SL_XREJ_SHORT);
	h->opcode = buf[0];
	h->flags = buf[1];
	if (!sl_xhdr_op_is_data(h->opcode))
		return reject(rej, SL_XREJ_OPCODE);
	if (h->flags & ~SL_XHDR_F_DATA_ALL)
		return reject(rej, SL_XREJ_FLAGS);
	h->pad_bytes = buf[4];
	n = sl_xhdr_len(h->opcode, h->flags);
	if (len < n + h->pad_bytes)
		return reject(rej, SL_XREJ_SHORT);
	h->tx_id = sl_get_be16(buf + 2);
	h->qpn = sl_get_be32(buf + 4) & SL_XHDR_QPN_MAX;
	h->token = sl_get_be32(buf + 8);
	h->psn = sl_get_be32(buf + 12);
	h->msn = sl_get_be32(buf + 16);
	if (has_reth(h->opcode)) {
		h->raddr = sl_get_be64(buf + off);
		h->rkey = sl_get_be32(buf + off + 8);
		h->rlen_bytes = sl_get_be32(buf + off + 12);
		off += SL_XHDR_RETH_LEN;
		if (h->opcode == SL_XOP_READ_REQ && h->rlen_bytes == 0)
			return reject(rej, SL_XREJ_RETH_LEN_ZERO);
	}
	if (has_imm(h->opcode)) {
		h->imm = sl_get_be32(buf + off);
		off += SL_XHDR_IMM_LEN;
	}
	if (h->flags & SL_XHDR_F_TS)
		h->ts_ns = sl_get_be64(buf + off);
	return (int)n;
}

static size_t
fb_body_len(uint8_t op, unsigned nholes)
{
	switch (op) {
	case SL_XOP_ACK:
		return SL_XFB_ACK_LEN;
	case SL_XOP_NACK:
		return SL_XFB_NACK_LEN(nholes);
	case SL_XOP_PULL:
		return SL_XFB_PULL_LEN;
	case SL_XOP_NAK:
		return SL_XFB_NAK_LEN;
	default:
		return 0;
	}
}

static bool
is_fb(uint8_t op)
{
	return op >= SL_XOP_ACK && op <= SL_XOP_NAK;
}

int
sl_xfb_encode(const struct sl_xfb *fb, uint8_t *buf, size_t len)
{
	uint8_t flags = fb->opcode == SL_XOP_ACK ? fb->flags & SL_XFB_F_ALL : 0;
	unsigned nholes = fb->opcode == SL_XOP_NACK ? fb->nholes : 0;
	uint8_t *b = buf + SL_XHDR_BASE_LEN;
	size_t n;

	if (!is_fb(fb->opcode) || nholes > SL_XFB_HOLES || fb->qpn > SL_XHDR_QPN_MAX ||
	    (fb->opcode == SL_XOP_NAK && (fb->syndrome == 0 || fb->syndrome > SL_XFB_SYN_MAX)))
		return -EINVAL;
	for (unsigned i = 0; i < nholes; i++)
		if (fb->hole[i].len_pkts == 0 || fb->hole[i].start_psn - fb->ack_psn > UINT16_MAX)
			return -EINVAL;
	n = SL_XHDR_BASE_LEN + fb_body_len(fb->opcode, nholes);
	if (len < n)
		return -ENOSPC;
	memset(buf, 0, n);
	sl_xhdr_put_base(buf, fb->opcode, 0, 0, 0, fb->qpn, fb->token, fb->ack_psn, 0);
	switch (fb->opcode) {
	case SL_XOP_ACK:
		b[0] = flags;
		sl_put_be16(b + 2, fb->acked_pkts);
		if (flags & SL_XFB_F_ECN)
			sl_put_be16(b + 4, fb->ce_pkts);
		if (flags & (SL_XFB_F_SACK | SL_XFB_F_ECHO))
			sl_put_be16(b + 6, fb->echo_tx_id);
		if (flags & SL_XFB_F_SACK)
			sl_put_be32(b + 8, fb->sack_psn);
		if (flags & SL_XFB_F_ECHO)
			sl_put_be64(b + 12, fb->echo_tx_ns);
		break;
	case SL_XOP_NACK:
		b[0] = (uint8_t)nholes;
		sl_put_be16(b + 2, fb->acked_pkts);
		sl_put_be16(b + 4, fb->ce_pkts);
		for (unsigned i = 0; i < nholes; i++) {
			sl_put_be16(b + 8 + 4 * i, (uint16_t)(fb->hole[i].start_psn - fb->ack_psn));
			sl_put_be16(b + 10 + 4 * i, fb->hole[i].len_pkts);
		}
		break;
	case SL_XOP_PULL:
		sl_put_be32(b, fb->pull_seq);
		break;
	case SL_XOP_NAK:
		sl_put_be32(b, fb->nak_msn);
		b[4] = fb->syndrome;
		break;
	default:
		break;
	}
	return (int)n;
}

/* Every byte of [from, to) is zero. */
static bool
zero(const uint8_t *buf, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		if (buf[i])
			return false;
	return true;
}

static int
decode_ack(const uint8_t *b, struct sl_xfb *fb, struct sl_xhdr_rejects *rej)
{
	fb->flags = b[0];
	if (fb->flags & ~SL_XFB_F_ALL)
		return reject(rej, SL_XREJ_FLAGS);
	if (b[1] != 0)
		return reject(rej, SL_XREJ_RESERVED);
	fb->acked_pkts = sl_get_be16(b + 2);
	fb->ce_pkts = sl_get_be16(b + 4);
	fb->echo_tx_id = sl_get_be16(b + 6);
	fb->sack_psn = sl_get_be32(b + 8);
	fb->echo_tx_ns = sl_get_be64(b + 12);
	if ((!(fb->flags & SL_XFB_F_ECN) && fb->ce_pkts) ||
	    (!(fb->flags & SL_XFB_F_SACK) && fb->sack_psn) ||
	    (!(fb->flags & (SL_XFB_F_SACK | SL_XFB_F_ECHO)) && fb->echo_tx_id) ||
	    (!(fb->flags & SL_XFB_F_ECHO) && fb->echo_tx_ns))
		return reject(rej, SL_XREJ_STRAY);
	return (int)(SL_XHDR_BASE_LEN + SL_XFB_ACK_LEN);
}

static int
decode_nack(const uint8_t *b, size_t blen, uint32_t window_pkts, struct sl_xfb *fb,
	    struct sl_xhdr_rejects *rej)
{
	if (blen < SL_XFB_NACK_LEN(0))
		return reject(rej, SL_XREJ_SHORT);
	fb->nholes = b[0];
	if (fb->nholes > SL_XFB_HOLES)
		return reject(rej, SL_XREJ_HOLES);
	if (b[1] != 0 || !zero(b, 6, 8))
		return reject(rej, SL_XREJ_RESERVED);
	if (blen < SL_XFB_NACK_LEN(fb->nholes))
		return reject(rej, SL_XREJ_SHORT);
	fb->acked_pkts = sl_get_be16(b + 2);
	fb->ce_pkts = sl_get_be16(b + 4);
	for (unsigned i = 0; i < fb->nholes; i++) {
		uint32_t off = sl_get_be16(b + 8 + 4 * i), l = sl_get_be16(b + 10 + 4 * i);

		if (l == 0 || off + l > window_pkts)
			return reject(rej, SL_XREJ_HOLE_RANGE);
		fb->hole[i] = (struct sl_xfb_hole){fb->ack_psn + off, (uint16_t)l};
	}
	return (int)(SL_XHDR_BASE_LEN + SL_XFB_NACK_LEN(fb->nholes));
}

int
sl_xfb_decode(const uint8_t *buf, size_t len, uint32_t window_pkts, struct sl_xfb *fb,
	      struct sl_xhdr_rejects *rej)
{
	const uint8_t *b = buf + SL_XHDR_BASE_LEN;
	size_t blen;

	memset(fb, 0, sizeof(*fb));
	if (len < SL_XHDR_BASE_LEN)
		return reject(rej, SL_XREJ_SHORT);
	fb->opcode = buf[0];
	if (!is_fb(fb->opcode))
		return reject(rej, SL_XREJ_OPCODE);
	if (buf[1] != 0 || !zero(buf, 2, 4) || !zero(buf, 16, 20))
		return reject(rej, SL_XREJ_RESERVED);
	if (buf[4] != 0)
		return reject(rej, SL_XREJ_QPN);
	fb->qpn = sl_get_be32(buf + 4);
	fb->token = sl_get_be32(buf + 8);
	fb->ack_psn = sl_get_be32(buf + 12);
	blen = len - SL_XHDR_BASE_LEN;
	switch (fb->opcode) {
	case SL_XOP_ACK:
		if (blen < SL_XFB_ACK_LEN)
			return reject(rej, SL_XREJ_SHORT);
		return decode_ack(b, fb, rej);
	case SL_XOP_NACK:
		return decode_nack(b, blen, window_pkts, fb, rej);
	case SL_XOP_PULL:
		if (blen < SL_XFB_PULL_LEN)
			return reject(rej, SL_XREJ_SHORT);
		fb->pull_seq = sl_get_be32(b);
		return (int)(SL_XHDR_BASE_LEN + SL_XFB_PULL_LEN);
	case SL_XOP_NAK:
		if (blen < SL_XFB_NAK_LEN)
			return reject(rej, SL_XREJ_SHORT);
		if (!zero(b, 5, 8))
			return reject(rej, SL_XREJ_RESERVED);
		fb->nak_msn = sl_get_be32(b);
		fb->syndrome = b[4];
		if (fb->syndrome == 0 || fb->syndrome > SL_XFB_SYN_MAX)
			return reject(rej, SL_XREJ_SYNDROME);
		return (int)(SL_XHDR_BASE_LEN + SL_XFB_NAK_LEN);
	default: /* CNP: the base header alone */
		return (int)SL_XHDR_BASE_LEN;
	}
}
