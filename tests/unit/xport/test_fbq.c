/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_fbq.c - the endpoint's feedback queue loses nothing a sender reads: after any sequence
 * of pushes and pops of every size, per QP, the frames that come out decode, keep the order
 * the receiver made them in (cumulative ACKs never go back), end on the newest cumulative
 * ACK, count every accepted and ECN-CE packet exactly once, carry every PULL in order, and
 * name every hole of the newest NACK that its cumulative ACK has not passed. A QP that refused
 * a message gets its NAK out, and nothing but that NAK from then on, however full the queue.
 * In-order ACKs coalesce in the ring; nothing else does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sl_rng.h"
#include "sl_seq.h"
#include "fbq.h"

#define QPS 8u
#define RING 16u
#define MIN_FRAME 44u
#define WINDOW 1024u

/* What the receiver of one QP made, and what came out of the queue. */
struct qp_model {
	uint32_t first;     /**< its first cumulative ACK */
	uint32_t rcv_nxt;   /**< the receiver's cumulative ACK */
	uint32_t pull_seq;  /**< PULLs made */
	uint64_t acked, ce; /**< packets counted in pushed ACKs and NACKs */
	uint64_t cnps;      /**< CNPs pushed */
	struct sl_xfb last; /**< the newest ACK or NACK pushed */
	bool any;           /**< one was pushed */
	/* out */
	uint32_t out_ack;  /**< cumulative ACK of the newest frame out */
	uint32_t out_pull; /**< pull_seq of the newest PULL out */
	uint64_t out_acked, out_ce, out_cnps;
	struct sl_xfb out_last; /**< the newest ACK or NACK out */
	/* a refusal (sl_xport_fbq_nak) */
	struct sl_xfb nak;   /**< the NAK pushed (opcode 0: none) */
	uint64_t pushed_nak; /**< feedback pushed since, the NAK included */
	uint64_t out_naks;   /**< NAK frames out */
};

static void
check_out(struct qp_model *m, const struct sl_xport_tx_frame *f, uint32_t qpn)
{
	struct sl_xfb fb;

	assert_int_equal(f->qpn, qpn);
	assert_int_equal(f->payload_len, 0);
	assert_true(f->hdr_len + f->pad_bytes >= MIN_FRAME);
	assert_true(sl_xfb_decode(f->hdr, f->hdr_len, WINDOW, &fb, NULL) > 0);
	assert_int_equal(fb.qpn, qpn + 100); /* the peer's QP */
	if (m->out_naks) /* sticky: once a NAK is out, nothing else of this QP */
		assert_int_equal(fb.opcode, SL_XOP_NAK);
	if (fb.opcode == SL_XOP_NAK) {
		assert_int_equal(m->nak.opcode, SL_XOP_NAK);
		assert_int_equal(fb.ack_psn, m->nak.ack_psn);
		assert_int_equal(fb.nak_msn, m->nak.nak_msn);
		assert_int_equal(fb.syndrome, m->nak.syndrome);
		m->out_naks++;
		return;
	}
	/* every frame carries a cumulative ACK the receiver had (the sender range-checks it) */
	assert_true(sl_seq_ge(fb.ack_psn, m->first) && sl_seq_le(fb.ack_psn, m->rcv_nxt));
	switch (fb.opcode) {
	case SL_XOP_ACK:
	case SL_XOP_NACK:
		assert_true(sl_seq_ge(fb.ack_psn, m->out_ack)); /* never back */
		m->out_ack = fb.ack_psn;
		m->out_acked += fb.acked_pkts;
		m->out_ce += fb.ce_pkts;
		m->out_last = fb;
		for (unsigned i = 0; i < fb.nholes; i++)
			assert_true(sl_seq_ge(fb.hole[i].start_psn, fb.ack_psn));
		break;
	case SL_XOP_CNP:
		m->out_cnps++;
		break;
	default:
		assert_int_equal(fb.opcode, SL_XOP_PULL);
		assert_int_equal(fb.pull_seq, m->out_pull + 1); /* every one, in order */
		m->out_pull = fb.pull_seq;
		break;
	}
}

/* One feedback the receiver of QP q might make: the cumulative ACK moves 0-3 packets. */
static void
make(struct sl_rng *rng, struct qp_model *m, uint32_t q, struct sl_xfb *fb)
{
	unsigned kind = (unsigned)sl_rng_below(rng, 10);

	memset(fb, 0, sizeof(*fb));
	fb->qpn = q + 100;
	fb->ack_psn = m->rcv_nxt;
	if (kind == 8) {
		fb->opcode = SL_XOP_CNP;
		m->cnps++;
		return;
	}
	if (kind == 9) {
		fb->opcode = SL_XOP_PULL;
		fb->pull_seq = ++m->pull_seq;
		return;
	}
	m->rcv_nxt += (uint32_t)sl_rng_below(rng, 4);
	fb->ack_psn = m->rcv_nxt;
	fb->acked_pkts = (uint16_t)sl_rng_below(rng, 5);
	if (kind < 6) {
		fb->opcode = SL_XOP_ACK;
		fb->flags = SL_XFB_F_ECN | SL_XFB_F_ECHO;
		fb->ce_pkts = (uint16_t)sl_rng_below(rng, fb->acked_pkts + 1u);
		fb->echo_tx_ns = 1000 + m->rcv_nxt;
		fb->echo_tx_id = 1;
	} else {
		fb->opcode = SL_XOP_NACK;
		fb->ce_pkts = (uint16_t)sl_rng_below(rng, fb->acked_pkts + 1u);
		fb->nholes = (uint8_t)(1 + sl_rng_below(rng, SL_XFB_HOLES));
		for (unsigned i = 0; i < fb->nholes; i++)
			fb->hole[i] = (struct sl_xfb_hole){m->rcv_nxt + 1 + 10 * i, 1 + i};
	}
	m->acked += fb->acked_pkts;
	m->ce += fb->ce_pkts;
	m->last = *fb;
	m->any = true;
}

/* A refused QP's model: NAK frames out, at least one and at most one per push since. */
static void
check_refused(const struct qp_model *m)
{
	assert_true(m->out_naks >= 1 && m->out_naks <= m->pushed_nak);
}

static void
check_model(const struct qp_model *m)
{
	if (m->nak.opcode) {
		check_refused(m);
		return;
	}
	assert_int_equal(m->out_ack, m->rcv_nxt);
	assert_int_equal(m->out_acked, m->acked);
	assert_int_equal(m->out_ce, m->ce);
	assert_int_equal(m->out_pull, m->pull_seq);
	assert_true(m->out_cnps <= m->cnps && (m->out_cnps > 0) == (m->cnps > 0));
	if (m->any && m->last.opcode == SL_XOP_NACK) {
		/* the newest NACK's holes all come out */
		assert_int_equal(m->out_last.opcode, SL_XOP_NACK);
		for (unsigned h = 0; h < m->last.nholes; h++)
			assert_true(m->out_last.nholes > h &&
				    m->out_last.hole[h].start_psn == m->last.hole[h].start_psn);
	}
}

static void
pop_and_check(struct sl_xport_fbq *q, struct qp_model *m, unsigned room)
{
	struct sl_xport_tx_frame out[8];
	unsigned n = sl_xport_fbq_pop(q, out, SL_MIN(room, SL_ARRAY_SIZE(out)));

	assert_true(n <= room);
	for (unsigned k = 0; k < n; k++)
		check_out(&m[out[k].qpn], &out[k], out[k].qpn);
}

/*
 * 2000 steps of random pushes and pops for seed; with refuse, QP 3 refuses a message at step
 * 1000 (its cumulative ACK then goes back to that message's first PSN, as the endpoint's does).
 */
static void
random_run(uint64_t seed, bool refuse)
{
	struct sl_xport_stats st = {0};
	struct qp_model m[QPS];
	struct sl_xport_fbq *q;
	struct sl_rng rng;

	memset(m, 0, sizeof(m));
	sl_rng_seed(&rng, seed);
	for (uint32_t i = 0; i < QPS; i++)
		m[i].first = m[i].rcv_nxt = m[i].out_ack = (uint32_t)sl_rng_next(&rng);
	q = sl_xport_fbq_create(QPS, RING, MIN_FRAME, &st);
	assert_non_null(q);
	for (unsigned step = 0; step < 2000; step++) {
		/* bursts of pushes (the receiver) against pops of any size (the port) */
		unsigned pushes = (unsigned)sl_rng_below(&rng, seed % 3 ? 8 : 40);

		if (refuse && step == 1000) {
			m[3].nak = (struct sl_xfb){.opcode = SL_XOP_NAK,
						   .qpn = 103,
						   .ack_psn = m[3].rcv_nxt - 2,
						   .nak_msn = (uint32_t)seed,
						   .syndrome = 1 + seed % SL_XFB_SYN_MAX};
			sl_xport_fbq_nak(q, 3, &m[3].nak);
			m[3].pushed_nak++;
		}
		for (unsigned k = 0; k < pushes; k++) {
			uint32_t qpn = (uint32_t)sl_rng_below(&rng, QPS);
			struct sl_xfb fb;

			make(&rng, &m[qpn], qpn, &fb);
			sl_xport_fbq_push(q, qpn, &fb);
			m[qpn].pushed_nak += m[qpn].nak.opcode != 0;
		}
		pop_and_check(q, m, (unsigned)sl_rng_below(&rng, 9));
	}
	while (sl_xport_fbq_busy(q))
		pop_and_check(q, m, 8);
	for (uint32_t i = 0; i < QPS; i++) {
		check_model(&m[i]);
		assert_int_equal(sl_xport_fbq_naks_sent(q, i), m[i].out_naks);
	}
	assert_int_equal(st.tx_nak, m[3].out_naks);
	assert_int_equal(st.fb_encode_errors, 0);
	if (seed % 3 == 0)
		assert_true(st.fb_held > 0 && st.fb_merged > 0); /* the ring overflowed */
	sl_xport_fbq_free(q);
}

static void
fbq__random_pushes_and_pops_lose_nothing(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 200; seed++)
		random_run(seed, false);
}

/*
 * The same with a refusal: the NAK comes out whether the ring had room or the QP held an ACK,
 * NACK, CNP or PULLs, every frame of that QP after it is the NAK, and the others lose nothing.
 */
static void
fbq__a_nak_is_sticky_and_never_merged_away(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 200; seed++)
		random_run(seed, true);
}

/* A NAK held behind a full ring supersedes the QP's held ACK and PULLs; later ACKs repeat it. */
static void
fbq__a_held_nak_supersedes_and_repeats(void **state)
{
	struct sl_xport_stats st = {0};
	struct sl_xport_fbq *q = sl_xport_fbq_create(2, 1, MIN_FRAME, &st);
	struct sl_xfb ack = {.opcode = SL_XOP_ACK, .qpn = 100, .ack_psn = 9};
	struct sl_xfb pull = {.opcode = SL_XOP_PULL, .qpn = 100, .ack_psn = 9, .pull_seq = 1};
	struct sl_xfb nak = {
		.opcode = SL_XOP_NAK, .qpn = 100, .ack_psn = 5, .nak_msn = 2, .syndrome = 2};
	struct sl_xport_tx_frame out[8];
	struct sl_xfb fb;

	(void)state;
	assert_non_null(q);
	sl_xport_fbq_push(q, 1, &ack); /* the ring's one slot */
	sl_xport_fbq_push(q, 0, &ack); /* held from here on */
	sl_xport_fbq_push(q, 0, &pull);
	sl_xport_fbq_nak(q, 0, &nak);
	assert_int_equal(st.fb_merged, 2); /* the ACK and the PULL */
	assert_int_equal(sl_xport_fbq_pop(q, out, SL_ARRAY_SIZE(out)), 2);
	assert_int_equal(out[0].qpn, 1);
	assert_int_equal(out[1].qpn, 0);
	assert_true(sl_xfb_decode(out[1].hdr, out[1].hdr_len, WINDOW, &fb, NULL) > 0);
	assert_int_equal(fb.opcode, SL_XOP_NAK);
	assert_int_equal(fb.ack_psn, 5);
	assert_int_equal(fb.nak_msn, 2);
	assert_int_equal(fb.syndrome, 2);
	/* an ACK for a later packet leaves as the NAK again, until the QP is forgotten */
	ack.ack_psn = 12;
	sl_xport_fbq_push(q, 0, &ack);
	assert_int_equal(sl_xport_fbq_pop(q, out, SL_ARRAY_SIZE(out)), 1);
	assert_true(sl_xfb_decode(out[0].hdr, out[0].hdr_len, WINDOW, &fb, NULL) > 0);
	assert_int_equal(fb.opcode, SL_XOP_NAK);
	assert_int_equal(fb.ack_psn, 5);
	sl_xport_fbq_forget(q, 0);
	sl_xport_fbq_push(q, 0, &ack);
	assert_int_equal(sl_xport_fbq_pop(q, out, SL_ARRAY_SIZE(out)), 1);
	assert_true(sl_xfb_decode(out[0].hdr, out[0].hdr_len, WINDOW, &fb, NULL) > 0);
	assert_int_equal(fb.opcode, SL_XOP_ACK);
	sl_xport_fbq_free(q);
}

/* A closed QP's held feedback is not sent; the others' is. */
static void
fbq__forget_drops_only_the_closed_qp(void **state)
{
	struct sl_xport_stats st = {0};
	struct sl_xport_fbq *q = sl_xport_fbq_create(2, 2, MIN_FRAME, &st);
	struct sl_xport_tx_frame out[8];
	struct sl_xfb ack = {.opcode = SL_XOP_ACK, .ack_psn = 7};
	unsigned n;

	(void)state;
	assert_non_null(q);
	for (unsigned i = 0; i < 4; i++) {
		ack.qpn = 100 + i % 2;
		sl_xport_fbq_push(q, i % 2, &ack); /* two in the ring, one held per QP */
	}
	assert_int_equal(st.fb_held, 2);
	sl_xport_fbq_forget(q, 1);
	n = sl_xport_fbq_pop(q, out, SL_ARRAY_SIZE(out));
	assert_int_equal(n, 3);
	assert_int_equal(out[0].qpn, 0);
	assert_int_equal(out[1].qpn, 1);
	assert_int_equal(out[2].qpn, 0);
	assert_false(sl_xport_fbq_busy(q));
	sl_xport_fbq_free(q);
	assert_null(sl_xport_fbq_create(2, 3, MIN_FRAME, &st)); /* ring not a power of two */
}

static struct sl_xfb
pop_one(struct sl_xport_fbq *q, uint32_t qpn)
{
	struct sl_xport_tx_frame out[1];
	struct sl_xfb fb;

	assert_int_equal(sl_xport_fbq_pop(q, out, 1), 1);
	assert_int_equal(out[0].qpn, qpn);
	assert_true(sl_xfb_decode(out[0].hdr, out[0].hdr_len, WINDOW, &fb, NULL) > 0);
	return fb;
}

/*
 * In-order ACKs of a QP fold into its ACK still in the ring, counts added, however many other
 * QPs' frames lie between, up to 16 PSNs past the ACK the frame was pushed with; a duplicate
 * ACK, a SACK, an ACK after the QP's NACK and an ACK after the older one left each stay a frame
 * of their own.
 */
static void
fbq__in_order_acks_coalesce_in_the_ring(void **state)
{
	struct sl_xport_stats st = {0};
	struct sl_xport_fbq *q = sl_xport_fbq_create(2, 16, MIN_FRAME, &st);
	struct sl_xfb ack = {.opcode = SL_XOP_ACK, .qpn = 100, .ack_psn = 1, .acked_pkts = 1};
	struct sl_xfb other = {.opcode = SL_XOP_ACK, .qpn = 101, .ack_psn = 50, .acked_pkts = 1};
	struct sl_xfb nack = {.opcode = SL_XOP_NACK, .qpn = 100, .nholes = 1, .acked_pkts = 1};
	struct sl_xfb fb;

	(void)state;
	assert_non_null(q);
	sl_xport_fbq_push(q, 0, &ack);
	sl_xport_fbq_push(q, 1, &other);
	ack.ack_psn = 4, ack.acked_pkts = 3, ack.flags = SL_XFB_F_ECN, ack.ce_pkts = 2;
	sl_xport_fbq_push(q, 0, &ack);
	ack.ack_psn = 5, ack.acked_pkts = 1, ack.flags = 0, ack.ce_pkts = 0;
	sl_xport_fbq_push(q, 0, &ack);
	assert_int_equal(st.fb_coalesced, 2);
	fb = pop_one(q, 0);
	assert_int_equal(fb.ack_psn, 5);
	assert_int_equal(fb.acked_pkts, 5);
	assert_int_equal(fb.ce_pkts, 2);
	assert_true(fb.flags & SL_XFB_F_ECN);
	assert_int_equal(pop_one(q, 1).ack_psn, 50);
	/* popped: the next ACK is a frame of its own; a duplicate of it stays one too */
	ack.ack_psn = 6;
	sl_xport_fbq_push(q, 0, &ack);
	sl_xport_fbq_push(q, 0, &ack);
	/* a SACK is not folded, nor an ACK into it */
	ack.ack_psn = 7, ack.flags = SL_XFB_F_SACK, ack.sack_psn = 9;
	sl_xport_fbq_push(q, 0, &ack);
	ack.ack_psn = 8, ack.flags = 0;
	sl_xport_fbq_push(q, 0, &ack);
	/* an ACK after the QP's NACK does not jump over it */
	nack.ack_psn = 8, nack.hole[0] = (struct sl_xfb_hole){9, 1};
	sl_xport_fbq_push(q, 0, &nack);
	ack.ack_psn = 11;
	sl_xport_fbq_push(q, 0, &ack);
	assert_int_equal(st.fb_coalesced, 2);
	assert_int_equal(pop_one(q, 0).ack_psn, 6);
	assert_int_equal(pop_one(q, 0).ack_psn, 6);
	assert_true(pop_one(q, 0).flags & SL_XFB_F_SACK);
	assert_int_equal(pop_one(q, 0).ack_psn, 8);
	assert_int_equal(pop_one(q, 0).opcode, SL_XOP_NACK);
	assert_int_equal(pop_one(q, 0).ack_psn, 11);
	/* a frame after a coalesced ACK leaves after it, the ACK as coalesced */
	ack.ack_psn = 12;
	sl_xport_fbq_push(q, 0, &ack);
	ack.ack_psn = 13;
	sl_xport_fbq_push(q, 0, &ack);
	nack.ack_psn = 13, nack.hole[0] = (struct sl_xfb_hole){14, 1};
	sl_xport_fbq_push(q, 0, &nack);
	fb = pop_one(q, 0);
	assert_int_equal(fb.ack_psn, 13);
	assert_int_equal(fb.acked_pkts, 2);
	assert_int_equal(pop_one(q, 0).opcode, SL_XOP_NACK);
	/* an ACK frame covers at most 16 PSNs past the ACK it was pushed with */
	ack.ack_psn = 20;
	sl_xport_fbq_push(q, 0, &ack);
	ack.ack_psn = 36;
	sl_xport_fbq_push(q, 0, &ack);
	ack.ack_psn = 37;
	sl_xport_fbq_push(q, 0, &ack);
	assert_int_equal(pop_one(q, 0).ack_psn, 36);
	assert_int_equal(pop_one(q, 0).ack_psn, 37);
	assert_false(sl_xport_fbq_busy(q));
	sl_xport_fbq_free(q);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fbq__random_pushes_and_pops_lose_nothing),
		cmocka_unit_test(fbq__a_nak_is_sticky_and_never_merged_away),
		cmocka_unit_test(fbq__a_held_nak_supersedes_and_repeats),
		cmocka_unit_test(fbq__forget_drops_only_the_closed_qp),
		cmocka_unit_test(fbq__in_order_acks_coalesce_in_the_ring),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
