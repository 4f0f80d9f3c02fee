/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wire.c - encode and decode lib/recv's feedback packets (layout in sl_recv_wire.h and
 * docs/recv.md, section 4.2). Every length is checked before it is read; nothing outside the
 * format is accepted.
 */
#include <errno.h>
#include <string.h>

#include "sl_recv_wire.h"

#define FBF_ALL (SL_RECV_FBF_SACK | SL_RECV_FBF_ECHO | SL_RECV_FBF_ECN)

static void
put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void
put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

static uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

static const uint8_t op_of[] = {
	[SL_RECV_ACT_ACK] = SL_RECV_OP_ACK,
	[SL_RECV_ACT_NACK] = SL_RECV_OP_NACK,
	[SL_RECV_ACT_CNP] = SL_RECV_OP_CNP,
	[SL_RECV_ACT_PULL] = SL_RECV_OP_PULL,
};

static size_t
len_of(uint8_t type, unsigned nholes)
{
	switch (type) {
	case SL_RECV_ACT_ACK:
		return SL_RECV_WIRE_ACK_LEN;
	case SL_RECV_ACT_NACK:
		return SL_RECV_WIRE_NACK_LEN(nholes);
	case SL_RECV_ACT_CNP:
		return SL_RECV_WIRE_CNP_LEN;
	default:
		return SL_RECV_WIRE_PULL_LEN;
	}
}

int
sl_recv_fb_encode(const struct sl_recv_action *a, uint8_t *buf, size_t len)
{
	const struct sl_recv_fb *fb = &a->fb;
	uint8_t flags = a->type == SL_RECV_ACT_ACK ? fb->flags & FBF_ALL : 0;
	unsigned nholes = a->type == SL_RECV_ACT_NACK ? fb->nholes : 0;
	size_t n;

	if (a->type < SL_RECV_ACT_ACK || a->type > SL_RECV_ACT_PULL || nholes > SL_RECV_NACK_HOLES)
		return -EINVAL;
	for (unsigned i = 0; i < nholes; i++)
		if (fb->hole[i].len_pkts == 0 || fb->hole[i].start_psn - fb->ack_psn > UINT16_MAX)
			return -EINVAL;
	n = len_of(a->type, nholes);
	if (len < n)
		return -ENOSPC;
	memset(buf, 0, n);
	buf[0] = op_of[a->type];
	buf[1] = flags;
	buf[2] = (uint8_t)nholes;
	put32(buf + 4, a->conn);
	put32(buf + 8, fb->ack_psn);
	switch (a->type) {
	case SL_RECV_ACT_ACK:
		put16(buf + 12, fb->acked_pkts);
		if (flags & SL_RECV_FBF_ECN)
			put16(buf + 14, fb->ce_pkts);
		if (flags & SL_RECV_FBF_SACK)
			put32(buf + 16, fb->sack_psn);
		if (flags & (SL_RECV_FBF_SACK | SL_RECV_FBF_ECHO))
			put16(buf + 20, fb->echo_tx_id);
		if (flags & SL_RECV_FBF_ECHO) {
			put32(buf + 24, (uint32_t)(fb->echo_tx_ns >> 32));
			put32(buf + 28, (uint32_t)fb->echo_tx_ns);
		}
		break;
	case SL_RECV_ACT_NACK:
		put16(buf + 12, fb->acked_pkts);
		put16(buf + 14, fb->ce_pkts);
		for (unsigned i = 0; i < nholes; i++) {
			put16(buf + 16 + 4 * i, fb->hole[i].start_psn - fb->ack_psn);
			put16(buf + 18 + 4 * i, fb->hole[i].len_pkts);
		}
		break;
	case SL_RECV_ACT_PULL:
		put32(buf + 12, fb->pull_seq);
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
decode_ack(const uint8_t *buf, struct sl_recv_fb *fb)
{
	fb->acked_pkts = get16(buf + 12);
	fb->ce_pkts = get16(buf + 14);
	fb->sack_psn = get32(buf + 16);
	fb->echo_tx_id = get16(buf + 20);
	fb->echo_tx_ns = (uint64_t)get32(buf + 24) << 32 | get32(buf + 28);
	if (!zero(buf, 22, 24) || (!(fb->flags & SL_RECV_FBF_ECN) && fb->ce_pkts) ||
	    (!(fb->flags & SL_RECV_FBF_SACK) && fb->sack_psn) ||
	    (!(fb->flags & (SL_RECV_FBF_SACK | SL_RECV_FBF_ECHO)) && fb->echo_tx_id) ||
	    (!(fb->flags & SL_RECV_FBF_ECHO) && fb->echo_tx_ns))
		return -EPROTO;
	return SL_RECV_WIRE_ACK_LEN;
}

static int
decode_nack(const uint8_t *buf, size_t len, uint32_t window_pkts, struct sl_recv_fb *fb)
{
	size_t n = SL_RECV_WIRE_NACK_LEN(fb->nholes);

	if (len < n)
		return -EMSGSIZE;
	fb->acked_pkts = get16(buf + 12);
	fb->ce_pkts = get16(buf + 14);
	for (unsigned i = 0; i < fb->nholes; i++) {
		uint32_t off = get16(buf + 16 + 4 * i), l = get16(buf + 18 + 4 * i);

		if (l == 0 || off + l > window_pkts)
			return -EBADMSG;
		fb->hole[i] = (struct sl_recv_hole){fb->ack_psn + off, (uint16_t)l};
	}
	return (int)n;
}

int
sl_recv_fb_decode(const uint8_t *buf, size_t len, uint32_t window_pkts, struct sl_recv_action *a)
{
	struct sl_recv_fb *fb = &a->fb;

	memset(a, 0, sizeof(*a));
	if (len < SL_RECV_WIRE_COMMON_LEN)
		return -EMSGSIZE;
	fb->flags = buf[1];
	fb->nholes = buf[2];
	a->conn = get32(buf + 4);
	fb->ack_psn = get32(buf + 8);
	if (buf[3] || (fb->flags & ~FBF_ALL) || (buf[0] != SL_RECV_OP_ACK && fb->flags) ||
	    (buf[0] != SL_RECV_OP_NACK && fb->nholes) || fb->nholes > SL_RECV_NACK_HOLES)
		return -EPROTO;
	switch (buf[0]) {
	case SL_RECV_OP_ACK:
		a->type = SL_RECV_ACT_ACK;
		if (len < SL_RECV_WIRE_ACK_LEN)
			return -EMSGSIZE;
		return decode_ack(buf, fb);
	case SL_RECV_OP_NACK:
		a->type = SL_RECV_ACT_NACK;
		return decode_nack(buf, len, window_pkts, fb);
	case SL_RECV_OP_CNP:
		a->type = SL_RECV_ACT_CNP;
		return SL_RECV_WIRE_CNP_LEN;
	case SL_RECV_OP_PULL:
		a->type = SL_RECV_ACT_PULL;
		if (len < SL_RECV_WIRE_PULL_LEN)
			return -EMSGSIZE;
		fb->pull_seq = get32(buf + 12);
		return SL_RECV_WIRE_PULL_LEN;
	default:
		return -EPROTO;
	}
}
