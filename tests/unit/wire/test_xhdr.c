/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for lib/wire/xhdr.c: the worked examples of docs/wire-format.md ("Transport header")
 * byte for byte, seeded random round trips of every opcode and flag, every encoder error and
 * every rejection reason of both decoders, each counted once.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sl_common.h"
#include "sl_wire.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t
next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint64_t
total(const struct sl_xhdr_rejects *rej)
{
	uint64_t t = 0;

	for (unsigned r = 0; r < SL_XREJ_MAX; r++)
		t += rej->n[r];
	return t;
}

/* Field by field: the structs have padding an initializer need not zero. */
static void
expect_same_xhdr(const struct sl_xhdr *a, const struct sl_xhdr *b)
{
	assert_int_equal(a->opcode, b->opcode);
	assert_int_equal(a->flags, b->flags);
	assert_int_equal(a->tx_id, b->tx_id);
	assert_int_equal(a->pad_bytes, b->pad_bytes);
	assert_int_equal(a->qpn, b->qpn);
	assert_int_equal(a->token, b->token);
	assert_int_equal(a->psn, b->psn);
	assert_int_equal(a->msn, b->msn);
	assert_int_equal(a->raddr, b->raddr);
	assert_int_equal(a->rkey, b->rkey);
	assert_int_equal(a->rlen_bytes, b->rlen_bytes);
	assert_int_equal(a->imm, b->imm);
	assert_int_equal(a->ts_ns, b->ts_ns);
}

static void
expect_same_xfb(const struct sl_xfb *a, const struct sl_xfb *b)
{
	assert_int_equal(a->opcode, b->opcode);
	assert_int_equal(a->flags, b->flags);
	assert_int_equal(a->nholes, b->nholes);
	assert_int_equal(a->qpn, b->qpn);
	assert_int_equal(a->token, b->token);
	assert_int_equal(a->ack_psn, b->ack_psn);
	assert_int_equal(a->acked_pkts, b->acked_pkts);
	assert_int_equal(a->ce_pkts, b->ce_pkts);
	assert_int_equal(a->sack_psn, b->sack_psn);
	assert_int_equal(a->echo_tx_id, b->echo_tx_id);
	assert_int_equal(a->echo_tx_ns, b->echo_tx_ns);
	for (unsigned i = 0; i < a->nholes; i++) {
		assert_int_equal(a->hole[i].start_psn, b->hole[i].start_psn);
		assert_int_equal(a->hole[i].len_pkts, b->hole[i].len_pkts);
	}
	assert_int_equal(a->pull_seq, b->pull_seq);
	assert_int_equal(a->nak_msn, b->nak_msn);
	assert_int_equal(a->syndrome, b->syndrome);
}

/* Decoding buf as data is refused for reason r alone. */
static void
expect_data_reject(const uint8_t *buf, size_t len, enum sl_xhdr_reject r)
{
	struct sl_xhdr_rejects rej = {0};
	struct sl_xhdr h;

	assert_int_equal(sl_xhdr_decode(buf, len, &h, &rej), -EBADMSG);
	assert_int_equal(rej.n[r], 1);
	assert_int_equal(total(&rej), 1);
}

static void
expect_fb_reject(const uint8_t *buf, size_t len, uint32_t window, enum sl_xhdr_reject r)
{
	struct sl_xhdr_rejects rej = {0};
	struct sl_xfb fb;

	assert_int_equal(sl_xfb_decode(buf, len, window, &fb, &rej), -EBADMSG);
	assert_int_equal(rej.n[r], 1);
	assert_int_equal(total(&rej), 1);
}

/*
 * docs/wire-format.md, example X1: a SEND ONLY asking for an ACK, with a timestamp, as first
 * sent: tx_id 0 (the scheduler's count of earlier transmissions), flag RTX clear.
 */
static const uint8_t send_only_ts[] = {0x04, 0x09, 0x00, 0x00, 0x00, 0x00, 0x01, 0x02, 0x1f, 0x2e,
				       0x3d, 0x4c, 0xff, 0xff, 0xff, 0xf0, 0x00, 0x00, 0x00, 0x07,
				       0x00, 0x00, 0x00, 0x12, 0x34, 0x56, 0x78, 0x90};

/* Example X2: a WRITE ONLY with immediate: RETH, then IMM. */
static const uint8_t write_only_imm[] = {
	0x0b, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0xa0, 0xb0, 0xc0, 0xd0, 0x00, 0x00,
	0x00, 0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00,
	0x00, 0x00, 0xab, 0xcd, 0x00, 0x00, 0x10, 0x00, 0xde, 0xad, 0xbe, 0xef};

/* Example X3: an ACK with SACK, echo and ECN count. */
static const uint8_t ack_all[] = {0x11, 0x00, 0x00, 0x00, 0x00, 0x01, 0x02, 0x03, 0x0c, 0x0f,
				  0xfe, 0xe0, 0xff, 0xff, 0xff, 0xf0, 0x00, 0x00, 0x00, 0x00,
				  0x07, 0x00, 0x00, 0x03, 0x00, 0x01, 0x00, 0x02, 0xff, 0xff,
				  0xff, 0xf5, 0x00, 0x00, 0x00, 0x12, 0x34, 0x56, 0x78, 0x9a};

/* Example X4: a NACK with two holes, newest first, as offsets from the cumulative ACK. */
static const uint8_t nack_two[] = {0x12, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05, 0x00,
				   0xbe, 0xef, 0x00, 0x00, 0x00, 0x00, 0x64, 0x00, 0x00,
				   0x00, 0x00, 0x02, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00,
				   0x00, 0x00, 0x0a, 0x00, 0x02, 0x00, 0x04, 0x00, 0x03};

/* Example X5: a PULL. */
static const uint8_t pull9[] = {0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07,
				0x5e, 0xed, 0x00, 0x05, 0x00, 0x00, 0x00, 0x32,
				0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x09};

static void
sl_xhdr_encode__worked_examples(void **state)
{
	struct sl_xhdr a = {.opcode = SL_XOP_SEND_ONLY,
			    .flags = SL_XHDR_F_ACKREQ | SL_XHDR_F_TS,
			    .tx_id = 0,
			    .qpn = 0x102,
			    .token = 0x1f2e3d4c,
			    .psn = 0xfffffff0,
			    .msn = 7,
			    .ts_ns = 0x1234567890ull};
	struct sl_xhdr b = {.opcode = SL_XOP_WRITE_ONLY_IMM,
			    .qpn = 0x10,
			    .token = 0xa0b0c0d0,
			    .psn = 1,
			    .msn = 2,
			    .raddr = 0x1000,
			    .rkey = 0xabcd,
			    .rlen_bytes = 4096,
			    .imm = 0xdeadbeef};
	struct sl_xhdr d;
	uint8_t out[SL_XHDR_MAX_LEN];

	(void)state;
	assert_int_equal(sl_xhdr_encode(&a, out, sizeof(out)), sizeof(send_only_ts));
	assert_memory_equal(out, send_only_ts, sizeof(send_only_ts));
	assert_int_equal(sl_xhdr_decode(send_only_ts, sizeof(send_only_ts), &d, NULL), 28);
	expect_same_xhdr(&d, &a);
	/* X1's first retransmission: flag RTX and tx_id 1, every other byte the same. */
	a.flags |= SL_XHDR_F_RTX;
	a.tx_id = 1;
	assert_int_equal(sl_xhdr_encode(&a, out, sizeof(out)), sizeof(send_only_ts));
	assert_int_equal(out[1], 0x0b);
	assert_int_equal(out[2], 0x00);
	assert_int_equal(out[3], 0x01);
	assert_memory_equal(out + 4, send_only_ts + 4, sizeof(send_only_ts) - 4);
	assert_int_equal(sl_xhdr_encode(&b, out, sizeof(out)), sizeof(write_only_imm));
	assert_memory_equal(out, write_only_imm, sizeof(write_only_imm));
	assert_int_equal(sl_xhdr_decode(write_only_imm, sizeof(write_only_imm), &d, NULL), 40);
	expect_same_xhdr(&d, &b);
}

/* Example X6: a NAK: QP 7 refused message 9 (first PSN 100) with syndrome 1 (access). */
static const uint8_t nak9[] = {0x15, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, 0x5e, 0xed,
			       0x00, 0x07, 0x00, 0x00, 0x00, 0x64, 0x00, 0x00, 0x00, 0x00,
			       0x00, 0x00, 0x00, 0x09, 0x01, 0x00, 0x00, 0x00};

static void
sl_xfb_encode__worked_examples(void **state)
{
	struct sl_xfb ack = {.opcode = SL_XOP_ACK,
			     .flags = SL_XFB_F_SACK | SL_XFB_F_ECHO | SL_XFB_F_ECN,
			     .qpn = 0x10203,
			     .token = 0x0c0ffee0,
			     .ack_psn = 0xfffffff0,
			     .acked_pkts = 3,
			     .ce_pkts = 1,
			     .sack_psn = 0xfffffff5,
			     .echo_tx_id = 2,
			     .echo_tx_ns = 0x123456789aull};
	struct sl_xfb nack = {.opcode = SL_XOP_NACK,
			      .nholes = 2,
			      .qpn = 5,
			      .token = 0x00beef00,
			      .ack_psn = 100,
			      .acked_pkts = 4,
			      .hole = {{110, 2}, {104, 3}}};
	struct sl_xfb pull = {
		.opcode = SL_XOP_PULL, .qpn = 7, .token = 0x5eed0005, .ack_psn = 50, .pull_seq = 9};
	struct sl_xfb nak = {.opcode = SL_XOP_NAK,
			     .qpn = 7,
			     .token = 0x5eed0007,
			     .ack_psn = 100,
			     .nak_msn = 9,
			     .syndrome = 1};
	struct sl_xfb cnp = {.opcode = SL_XOP_CNP, .qpn = 7}, d;
	uint8_t out[SL_XFB_MAX_LEN];
	const struct {
		const struct sl_xfb *fb;
		const uint8_t *bytes;
		size_t len;
	} ex[] = {{&ack, ack_all, sizeof(ack_all)},
		  {&nack, nack_two, sizeof(nack_two)},
		  {&pull, pull9, sizeof(pull9)},
		  {&nak, nak9, sizeof(nak9)}};

	(void)state;
	for (unsigned i = 0; i < SL_ARRAY_SIZE(ex); i++) {
		assert_int_equal(sl_xfb_encode(ex[i].fb, out, sizeof(out)), ex[i].len);
		assert_memory_equal(out, ex[i].bytes, ex[i].len);
		assert_int_equal(sl_xfb_decode(ex[i].bytes, ex[i].len, 1024, &d, NULL), ex[i].len);
		expect_same_xfb(&d, ex[i].fb);
	}
	assert_int_equal(sl_xfb_encode(&cnp, out, sizeof(out)), SL_XHDR_BASE_LEN);
	assert_int_equal(out[0], 0x13);
	assert_int_equal(out[7], 7);
	assert_int_equal(sl_xfb_decode(out, SL_XHDR_BASE_LEN, 1024, &d, NULL), SL_XHDR_BASE_LEN);
	expect_same_xfb(&d, &cnp);
}

static void
sl_xhdr__random_headers_round_trip(void **state)
{
	uint8_t buf[SL_XHDR_MAX_LEN + 8], again[SL_XHDR_MAX_LEN];

	(void)state;
	for (int i = 0; i < 20000; i++) {
		struct sl_xhdr h = {0}, d;
		int n;

		h.opcode = (uint8_t)(next() % (SL_XOP_READ_RESP_ONLY + 1));
		h.flags = (uint8_t)(next() & SL_XHDR_F_DATA_ALL);
		h.tx_id = (uint16_t)next();
		h.qpn = (uint32_t)next() & SL_XHDR_QPN_MAX;
		h.token = (uint32_t)next();
		h.psn = (uint32_t)next();
		h.msn = (uint32_t)next();
		h.pad_bytes = (uint8_t)(next() % 9); /* buf has 8 bytes after the longest header */
		if (sl_xhdr_len(h.opcode, 0) >= SL_XHDR_BASE_LEN + SL_XHDR_RETH_LEN) {
			h.raddr = next();
			h.rkey = (uint32_t)next();
			h.rlen_bytes = (uint32_t)next() | 1;
		}
		if (h.opcode == SL_XOP_SEND_LAST_IMM || h.opcode == SL_XOP_SEND_ONLY_IMM ||
		    h.opcode == SL_XOP_WRITE_LAST_IMM || h.opcode == SL_XOP_WRITE_ONLY_IMM)
			h.imm = (uint32_t)next();
		if (h.flags & SL_XHDR_F_TS)
			h.ts_ns = next();
		n = sl_xhdr_encode(&h, buf, sizeof(buf));
		assert_int_equal(n, sl_xhdr_len(h.opcode, h.flags));
		/* The payload after the header is not the decoder's business. */
		memset(buf + n, 0xa5, sizeof(buf) - (size_t)n);
		assert_int_equal(sl_xhdr_decode(buf, sizeof(buf), &d, NULL), n);
		expect_same_xhdr(&d, &h);
		assert_int_equal(sl_xhdr_encode(&d, again, sizeof(again)), n);
		assert_memory_equal(again, buf, (size_t)n);
		/* One byte short of its extensions and pad: refused, never read past. */
		expect_data_reject(buf, (size_t)n + h.pad_bytes - 1, SL_XREJ_SHORT);
	}
}

static void
sl_xfb__random_feedback_round_trips(void **state)
{
	static const uint8_t ops[] = {SL_XOP_ACK, SL_XOP_NACK, SL_XOP_CNP, SL_XOP_PULL, SL_XOP_NAK};
	uint8_t buf[SL_XFB_MAX_LEN];

	(void)state;
	for (int i = 0; i < 20000; i++) {
		struct sl_xfb fb = {0}, d;
		int n;

		fb.opcode = ops[next() % SL_ARRAY_SIZE(ops)];
		fb.qpn = (uint32_t)next() & SL_XHDR_QPN_MAX;
		fb.token = (uint32_t)next();
		if (fb.opcode != SL_XOP_CNP)
			fb.ack_psn = (uint32_t)next();
		if (fb.opcode == SL_XOP_ACK) {
			fb.flags = (uint8_t)(next() & SL_XFB_F_ALL);
			fb.acked_pkts = (uint16_t)next();
			if (fb.flags & SL_XFB_F_ECN)
				fb.ce_pkts = (uint16_t)next();
			if (fb.flags & (SL_XFB_F_SACK | SL_XFB_F_ECHO))
				fb.echo_tx_id = (uint16_t)next();
			if (fb.flags & SL_XFB_F_SACK)
				fb.sack_psn = (uint32_t)next();
			if (fb.flags & SL_XFB_F_ECHO)
				fb.echo_tx_ns = next();
		} else if (fb.opcode == SL_XOP_NACK) {
			fb.nholes = (uint8_t)(next() % (SL_XFB_HOLES + 1));
			fb.acked_pkts = (uint16_t)next();
			fb.ce_pkts = (uint16_t)next();
			for (unsigned k = 0; k < fb.nholes; k++)
				fb.hole[k] =
					(struct sl_xfb_hole){fb.ack_psn + (uint32_t)(next() % 1000),
							     (uint16_t)(1 + next() % 24)};
		} else if (fb.opcode == SL_XOP_PULL) {
			fb.pull_seq = (uint32_t)next();
		} else if (fb.opcode == SL_XOP_NAK) {
			fb.nak_msn = (uint32_t)next();
			fb.syndrome = (uint8_t)(1 + next() % SL_XFB_SYN_MAX);
		}
		n = sl_xfb_encode(&fb, buf, sizeof(buf));
		assert_true(n >= (int)SL_XHDR_BASE_LEN);
		assert_int_equal(sl_xfb_decode(buf, (size_t)n, 1024, &d, NULL), n);
		expect_same_xfb(&d, &fb);
		if (n > (int)SL_XHDR_BASE_LEN)
			expect_fb_reject(buf, (size_t)n - 1, 1024, SL_XREJ_SHORT);
	}
}

static void
sl_xhdr_encode__refuses_what_it_cannot_encode(void **state)
{
	struct sl_xhdr h = {.opcode = SL_XOP_SEND_ONLY};
	uint8_t out[SL_XHDR_MAX_LEN];

	(void)state;
	h.opcode = SL_XOP_ACK;
	assert_int_equal(sl_xhdr_encode(&h, out, sizeof(out)), -EINVAL);
	h.opcode = SL_XOP_SEND_ONLY;
	h.qpn = SL_XHDR_QPN_MAX + 1;
	assert_int_equal(sl_xhdr_encode(&h, out, sizeof(out)), -EINVAL);
	h.qpn = 1;
	h.flags = 0x20;
	assert_int_equal(sl_xhdr_encode(&h, out, sizeof(out)), -EINVAL);
	h.flags = SL_XHDR_F_TS;
	assert_int_equal(sl_xhdr_encode(&h, out, SL_XHDR_BASE_LEN + SL_XHDR_TS_LEN - 1), -ENOSPC);
}

static void
sl_xfb_encode__refuses_what_it_cannot_encode(void **state)
{
	struct sl_xfb fb = {.opcode = SL_XOP_NACK, .nholes = 1, .ack_psn = 0xfffffff0};
	uint8_t out[SL_XFB_MAX_LEN];

	(void)state;
	fb.hole[0] = (struct sl_xfb_hole){0xfffffff8, 0};
	assert_int_equal(sl_xfb_encode(&fb, out, sizeof(out)), -EINVAL); /* length 0 */
	fb.hole[0] = (struct sl_xfb_hole){0xfffffff0 + 65536, 1};
	assert_int_equal(sl_xfb_encode(&fb, out, sizeof(out)), -EINVAL); /* offset > 16 bits */
	fb.hole[0] = (struct sl_xfb_hole){0xfffffff0 + 65535, 1};
	assert_int_equal(sl_xfb_encode(&fb, out, sizeof(out)), SL_XHDR_BASE_LEN + 12);
	assert_int_equal(sl_xfb_encode(&fb, out, SL_XHDR_BASE_LEN + 11), -ENOSPC);
	fb.nholes = 4;
	assert_int_equal(sl_xfb_encode(&fb, out, sizeof(out)), -EINVAL);
	fb.nholes = 0;
	fb.qpn = SL_XHDR_QPN_MAX + 1;
	assert_int_equal(sl_xfb_encode(&fb, out, sizeof(out)), -EINVAL);
	fb.qpn = 0;
	fb.opcode = SL_XOP_SEND_ONLY;
	assert_int_equal(sl_xfb_encode(&fb, out, sizeof(out)), -EINVAL);
	/* A NAK names a reason, one the wire knows. */
	fb.opcode = SL_XOP_NAK;
	fb.syndrome = 0;
	assert_int_equal(sl_xfb_encode(&fb, out, sizeof(out)), -EINVAL);
	fb.syndrome = SL_XFB_SYN_MAX + 1;
	assert_int_equal(sl_xfb_encode(&fb, out, sizeof(out)), -EINVAL);
	fb.syndrome = SL_XFB_SYN_MAX;
	assert_int_equal(sl_xfb_encode(&fb, out, sizeof(out)), SL_XHDR_BASE_LEN + SL_XFB_NAK_LEN);
	assert_int_equal(sl_xfb_encode(&fb, out, SL_XHDR_BASE_LEN + SL_XFB_NAK_LEN - 1), -ENOSPC);
}

static void
sl_xhdr_decode__every_reason(void **state)
{
	uint8_t b[64];

	(void)state;
	memcpy(b, send_only_ts, sizeof(send_only_ts));
	expect_data_reject(b, SL_XHDR_BASE_LEN - 1, SL_XREJ_SHORT);
	expect_data_reject(b, sizeof(send_only_ts) - 1, SL_XREJ_SHORT); /* TS announced */
	b[0] = SL_XOP_ACK;
	expect_data_reject(b, sizeof(send_only_ts), SL_XREJ_OPCODE);
	b[0] = 0xff;
	expect_data_reject(b, sizeof(send_only_ts), SL_XREJ_OPCODE);
	b[0] = SL_XOP_SEND_ONLY;
	b[1] = 0x20;
	expect_data_reject(b, sizeof(send_only_ts), SL_XREJ_FLAGS);
	b[1] = 0;
	b[4] = 9; /* 9 pad bytes announced, 8 after the 20-byte header */
	expect_data_reject(b, sizeof(send_only_ts), SL_XREJ_SHORT);
	/* A READ request for nothing. */
	memcpy(b, write_only_imm, sizeof(write_only_imm));
	b[0] = SL_XOP_READ_REQ;
	b[32] = b[33] = b[34] = b[35] = 0;
	expect_data_reject(b, sizeof(write_only_imm), SL_XREJ_RETH_LEN_ZERO);
}

static void
sl_xfb_decode__every_reason(void **state)
{
	uint8_t b[64];

	(void)state;
	memcpy(b, ack_all, sizeof(ack_all));
	expect_fb_reject(b, SL_XHDR_BASE_LEN - 1, 1024, SL_XREJ_SHORT);
	expect_fb_reject(b, sizeof(ack_all) - 1, 1024, SL_XREJ_SHORT);
	b[0] = SL_XOP_SEND_ONLY; /* data where feedback was expected */
	expect_fb_reject(b, sizeof(ack_all), 1024, SL_XREJ_OPCODE);
	b[0] = SL_XOP_MAX + 1;
	expect_fb_reject(b, sizeof(ack_all), 1024, SL_XREJ_OPCODE);
	b[0] = SL_XOP_ACK;
	b[1] = SL_XHDR_F_ACKREQ; /* base flags are data's */
	expect_fb_reject(b, sizeof(ack_all), 1024, SL_XREJ_RESERVED);
	b[1] = 0;
	b[17] = 1; /* MSN */
	expect_fb_reject(b, sizeof(ack_all), 1024, SL_XREJ_RESERVED);
	b[17] = 0;
	b[4] = 1;
	expect_fb_reject(b, sizeof(ack_all), 1024, SL_XREJ_QPN);
	b[4] = 0;
	b[20] = 0x08; /* unknown ACK flag */
	expect_fb_reject(b, sizeof(ack_all), 1024, SL_XREJ_FLAGS);
	b[20] = SL_XFB_F_SACK | SL_XFB_F_ECHO; /* no ECN flag, but a CE count */
	expect_fb_reject(b, sizeof(ack_all), 1024, SL_XREJ_STRAY);
	b[20] = 0x07;
	b[21] = 1;
	expect_fb_reject(b, sizeof(ack_all), 1024, SL_XREJ_RESERVED);

	memcpy(b, nack_two, sizeof(nack_two));
	b[20] = 3; /* three holes announced, two present */
	expect_fb_reject(b, sizeof(nack_two), 1024, SL_XREJ_SHORT);
	b[20] = 4;
	expect_fb_reject(b, sizeof(nack_two), 1024, SL_XREJ_HOLES);
	b[20] = 2;
	b[26] = 1;
	expect_fb_reject(b, sizeof(nack_two), 1024, SL_XREJ_RESERVED);
	b[26] = 0;
	b[31] = 0; /* first hole of length 0 */
	expect_fb_reject(b, sizeof(nack_two), 1024, SL_XREJ_HOLE_RANGE);
	b[31] = 2;
	/* The first hole ends at offset 12: inside a window of 12, outside one of 11. */
	assert_int_equal(sl_xfb_decode(b, sizeof(nack_two), 12, &(struct sl_xfb){0}, NULL), 36);
	expect_fb_reject(b, sizeof(nack_two), 11, SL_XREJ_HOLE_RANGE);

	memcpy(b, nak9, sizeof(nak9));
	expect_fb_reject(b, sizeof(nak9) - 1, 1024, SL_XREJ_SHORT);
	b[17] = 9; /* the MSN goes in the body, not the base header */
	expect_fb_reject(b, sizeof(nak9), 1024, SL_XREJ_RESERVED);
	b[17] = 0;
	for (unsigned k = 25; k < 28; k++) { /* each reserved byte of the body */
		b[k] = 0x80;
		expect_fb_reject(b, sizeof(nak9), 1024, SL_XREJ_RESERVED);
		b[k] = 0;
	}
	b[24] = 0; /* no reason given */
	expect_fb_reject(b, sizeof(nak9), 1024, SL_XREJ_SYNDROME);
	b[24] = SL_XFB_SYN_MAX + 1;
	expect_fb_reject(b, sizeof(nak9), 1024, SL_XREJ_SYNDROME);
	b[24] = SL_XFB_SYN_MAX;
	assert_int_equal(sl_xfb_decode(b, sizeof(nak9), 1024, &(struct sl_xfb){0}, NULL),
			 sizeof(nak9));
	assert_string_equal(sl_xhdr_reject_name(SL_XREJ_HOLE_RANGE), "hole_range");
	for (unsigned r = 0; r < SL_XREJ_MAX; r++)
		assert_string_not_equal(sl_xhdr_reject_name((enum sl_xhdr_reject)r), "?");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sl_xhdr_encode__worked_examples),
		cmocka_unit_test(sl_xfb_encode__worked_examples),
		cmocka_unit_test(sl_xhdr__random_headers_round_trip),
		cmocka_unit_test(sl_xfb__random_feedback_round_trips),
		cmocka_unit_test(sl_xhdr_encode__refuses_what_it_cannot_encode),
		cmocka_unit_test(sl_xfb_encode__refuses_what_it_cannot_encode),
		cmocka_unit_test(sl_xhdr_decode__every_reason),
		cmocka_unit_test(sl_xfb_decode__every_reason),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
