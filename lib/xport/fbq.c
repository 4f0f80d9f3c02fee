/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fbq.c - the endpoint's outgoing feedback (fbq.h): a ring of frames, and per QP what
 * the ring had no room for.
 *
 * The receiver answers data as it arrives: an ACK per ack_every_pkts packets or ack_delay_ns, a
 * NACK per new hole, a CNP per cnp_interval, a PULL per arrival. tx_burst sends those frames
 * before any data, oldest first, from a ring of encoded frames. The ring fills when the port
 * cannot send for a while (a link replaying or paused, a peer draining slowly) while data keeps
 * arriving. Dropping feedback then loses, sooner or later, the one ACK a QP at a window of one
 * segment waits for: nothing later repairs it, and the sender's RTO fires under a link that
 * lost nothing. So nothing is dropped. Feedback the ring has no room for is held per QP and
 * merged with what that QP already holds, the way a delayed ACK merges arrivals:
 *   - an ACK onto a held ACK: the newer one stands (cumulative ACK, SACK, echoed send time),
 *     the packet and ECN-CE counts add up, so every accepted packet is still counted once;
 *   - a NACK: a held ACK is older, so its counts fold into the NACK; a held NACK merges with
 *     it, the newer holes first, then the older ones still at or above its cumulative ACK, up
 *     to SL_XFB_HOLES;
 *   - a CNP: one held CNP stands for several (a DCQCN sender cuts at most once per CNP
 *     interval anyway);
 *   - a PULL: each one grants a segment, so they are counted, and each is sent in order;
 *   - a NAK (the QP's receive side refused a message, sl_xport_fbq_nak): it supersedes
 *     everything the QP holds (the sender fails on it; the NAK's cumulative ACK covers every
 *     message before the refused one) and is never folded into anything else.
 * A NAK is also sticky: from sl_xport_fbq_nak until the QP is forgotten (or, for a refusal for
 * now, until it takes the message after all: sl_xport_fbq_nak_end), every feedback frame
 * pushed for the QP leaves as that NAK, in the ring or held, so each ACK the receiver still
 * makes (for a later packet or a retransmission) repeats the NAK and a lost one is repaired.
 * Every fold is counted in fb_merged (it may supersede an older SACK, echo or hole); the
 * cumulative state is never lost.
 *
 * ACKs are coalesced in the ring too: an ACK that advances the cumulative ACK of the QP's
 * latest frame in the ring, itself an ACK not yet sent, takes that frame's place with the
 * counts added (fb_coalesced), the way a delayed ACK covers several arrivals. So a receive
 * burst of one QP's messages, each asking for an answer (ACKREQ), is answered by one ACK in the
 * next transmit burst, not one per message: as early, with the same cumulative ACK and counts,
 * at a fraction of the frames both ends build, check and parse. Only plain in-order ACKs fold:
 * a duplicate ACK (the same cumulative ACK, Reno's and dack's signal) or a SACK names something
 * an ACK after it does not, and is sent as made. Once anything is held, new feedback is held too,
 * so frames leave in the order the receiver made them: the ring first, then each holding QP (its
 * NACK, ACK, CNP, then its PULLs) in the order it began to hold. A QP is in the holding FIFO at
 * most once, so the FIFO cannot overflow.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sl_common.h"
#include "sl_seq.h"
#include "fbq.h"

/*
 * An ACK frame covers at most this many PSNs past the cumulative ACK it was pushed with, so a
 * run of messages gets an ACK at least every 16 packets (TCP ACKs at least every second segment
 * for the same reason): if the last one is lost, the earlier ones have already freed part of the
 * sender's send queue and window, and the data that follows brings the next ACK. One ACK for a
 * whole send queue of answers, lost, would leave the sender nothing to send and nothing to
 * learn from until its RTO.
 */
#define SL_XPORT_FBQ_COALESCE_PSNS 16u

enum { HELD_NACK = 1u << 0, HELD_ACK = 1u << 1, HELD_CNP = 1u << 2, HELD_NAK = 1u << 3 };

/* What one QP holds. */
struct held {
	struct sl_xfb nack;  /**< HELD_NACK; older than ack */
	struct sl_xfb ack;   /**< HELD_ACK */
	uint32_t peer_qpn;   /**< the QP every held frame names */
	uint32_t peer_token; /**< and its connection token */
	uint32_t cnp_ack;    /**< HELD_CNP: the newest CNP's cumulative ACK */
	uint32_t pull_ack;   /**< the newest held PULL's cumulative ACK (every one carries it) */
	uint32_t pull_seq;   /**< pull_seq of the newest held PULL */
	uint32_t pulls;      /**< PULLs held, the last one pull_seq */
	uint32_t nak_ack;    /**< sticky NAK: the refused message's first PSN */
	uint32_t nak_msn;    /**< sticky NAK: its MSN */
	uint8_t nak_syn;     /**< the last NAK: its syndrome (0: the QP refused nothing) */
	bool nak_sticky;     /**< every feedback pushed leaves as that NAK */
	uint32_t naks_sent;  /**< NAK frames encoded since the QP was forgotten last */
	uint8_t bits;        /**< HELD_* */
	bool queued;         /**< in the holding FIFO */
	bool ring_ack;       /**< the QP's latest frame in the ring is last_ack, at ring_pos */
	bool ring_stale;     /**< ring_ack: the frame there is older; pop encodes last_ack */
	uint32_t ring_first_psn; /**< ring_ack: the cumulative ACK the frame was pushed with */
	uint32_t ring_pos;       /**< ring_ack: its position (pushes counted, not masked) */
	struct sl_xfb last_ack;  /**< ring_ack: that ACK, decoded */
};

struct sl_xport_fbq {
	struct sl_xport_tx_frame *ring; /**< [ring_mask + 1] encoded frames */
	uint32_t ring_mask, ring_count;
	uint32_t ring_head; /**< position of the oldest frame (pops counted, not masked) */
	struct held *held;  /**< [max_qps] */
	uint32_t *fifo;     /**< [max_qps] QPs holding, in the order they began */
	uint32_t max_qps, fifo_head, fifo_count;
	uint32_t min_frame_bytes;
	struct sl_xport_stats *st;
};

struct sl_xport_fbq *
sl_xport_fbq_create(uint32_t max_qps, uint32_t ring_slots, uint32_t min_frame_bytes,
		    struct sl_xport_stats *st)
{
	struct sl_xport_fbq *q;

	if (max_qps == 0 || ring_slots == 0 || (ring_slots & (ring_slots - 1)) || st == NULL) {
		errno = EINVAL;
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (q == NULL)
		return NULL;
	q->ring = calloc(ring_slots, sizeof(*q->ring));
	q->held = calloc(max_qps, sizeof(*q->held));
	q->fifo = calloc(max_qps, sizeof(*q->fifo));
	if (q->ring == NULL || q->held == NULL || q->fifo == NULL) {
		sl_xport_fbq_free(q);
		errno = ENOMEM;
		return NULL;
	}
	q->ring_mask = ring_slots - 1;
	q->max_qps = max_qps;
	q->min_frame_bytes = min_frame_bytes;
	q->st = st;
	return q;
}

void
sl_xport_fbq_free(struct sl_xport_fbq *q)
{
	if (q == NULL)
		return;
	free(q->ring);
	free(q->held);
	free(q->fifo);
	free(q);
}

static bool
encode(struct sl_xport_fbq *q, uint32_t qpn, const struct sl_xfb *fb, struct sl_xport_tx_frame *f)
{
	int n = sl_xfb_encode(fb, f->hdr, sizeof(f->hdr));

	if (n < 0) {
		sl_stat_add(&q->st->fb_encode_errors, 1);
		return false;
	}
	if (fb->opcode == SL_XOP_NAK) {
		q->held[qpn].naks_sent++;
		sl_stat_add(&q->st->tx_nak, 1);
	}
	f->hdr_len = (uint16_t)n;
	f->pad_bytes = (uint16_t)(q->min_frame_bytes > (uint32_t)n ? q->min_frame_bytes - n : 0);
	f->payload = NULL;
	f->payload_len = 0;
	f->qpn = qpn;
	return true;
}

static uint16_t
add_sat16(uint16_t a, uint16_t b)
{
	return (uint16_t)SL_MIN((uint32_t)a + b, UINT16_MAX);
}

/* The counts of older feedback into newer: every accepted packet still counted once. */
static void
add_counts(struct sl_xfb *newer, const struct sl_xfb *older)
{
	newer->acked_pkts = add_sat16(newer->acked_pkts, older->acked_pkts);
	newer->ce_pkts = add_sat16(newer->ce_pkts, older->ce_pkts);
}

/* Older NACK holes that the newer NACK does not name and its cumulative ACK has not passed. */
static void
merge_holes(struct sl_xfb *newer, const struct sl_xfb *older)
{
	for (unsigned i = 0; i < older->nholes && newer->nholes < SL_XFB_HOLES; i++) {
		const struct sl_xfb_hole *o = &older->hole[i];
		bool named = false;

		if (sl_seq_lt(o->start_psn, newer->ack_psn))
			continue;
		for (unsigned j = 0; j < newer->nholes; j++)
			named |= sl_seq_lt(o->start_psn,
					   newer->hole[j].start_psn + newer->hole[j].len_pkts) &&
				 sl_seq_lt(newer->hole[j].start_psn, o->start_psn + o->len_pkts);
		if (!named)
			newer->hole[newer->nholes++] = *o;
	}
}

static void
hold(struct sl_xport_fbq *q, uint32_t qpn, const struct sl_xfb *fb)
{
	struct held *h = &q->held[qpn];
	struct sl_xfb n = *fb;
	unsigned folded = 0;

	h->peer_qpn = fb->qpn;
	h->peer_token = fb->token;
	switch (fb->opcode) {
	case SL_XOP_ACK:
		if (h->bits & HELD_ACK) {
			add_counts(&n, &h->ack);
			n.flags |= h->ack.flags & SL_XFB_F_ECN;
			folded++;
		}
		h->ack = n;
		h->bits |= HELD_ACK;
		break;
	case SL_XOP_NACK:
		if (h->bits & HELD_ACK) {
			add_counts(&n, &h->ack);
			h->bits &= (uint8_t)~HELD_ACK;
			folded++;
		}
		if (h->bits & HELD_NACK) {
			add_counts(&n, &h->nack);
			merge_holes(&n, &h->nack);
			folded++;
		}
		h->nack = n;
		h->bits |= HELD_NACK;
		break;
	case SL_XOP_NAK:
		folded += (unsigned)__builtin_popcount(h->bits) + h->pulls;
		h->bits = HELD_NAK;
		h->pulls = 0;
		break;
	case SL_XOP_CNP:
		folded += (h->bits & HELD_CNP) != 0;
		h->bits |= HELD_CNP;
		h->cnp_ack = fb->ack_psn;
		break;
	default: /* SL_XOP_PULL */
		h->pulls++;
		h->pull_seq = fb->pull_seq;
		h->pull_ack = fb->ack_psn;
		break;
	}
	sl_stat_add(&q->st->fb_held, 1);
	if (folded)
		sl_stat_add(&q->st->fb_merged, folded);
	if (!h->queued) {
		q->fifo[(q->fifo_head + q->fifo_count) % q->max_qps] = qpn;
		q->fifo_count++;
		h->queued = true;
	}
}

/* An ACK that names nothing but its cumulative ACK, counts and echo: a later one covers it. */
static bool
plain_ack(const struct sl_xfb *fb)
{
	return fb->opcode == SL_XOP_ACK && !(fb->flags & SL_XFB_F_SACK);
}

/* fb folded into the QP's ACK still waiting in the ring, if it can be (the essay atop). */
static bool
coalesce(struct sl_xport_fbq *q, uint32_t qpn, const struct sl_xfb *fb)
{
	struct held *h = &q->held[qpn];
	struct sl_xfb n;

	if (!h->ring_ack || !plain_ack(fb) || h->ring_pos - q->ring_head >= q->ring_count ||
	    !sl_seq_gt(fb->ack_psn, h->last_ack.ack_psn) ||
	    fb->ack_psn - h->ring_first_psn > SL_XPORT_FBQ_COALESCE_PSNS)
		return false;
	n = *fb;
	add_counts(&n, &h->last_ack);
	n.flags |= h->last_ack.flags & SL_XFB_F_ECN;
	h->last_ack = n;
	h->ring_stale = true;
	sl_stat_add(&q->st->fb_coalesced, 1);
	return true;
}

/* QP qpn's ACK in the ring encoded again if ACKs were coalesced into it since. */
static void
settle(struct sl_xport_fbq *q, uint32_t qpn)
{
	struct held *h = &q->held[qpn];

	if (h->ring_stale) {
		h->ring_stale = false;
		/* an ACK that encoded once encodes */
		encode(q, qpn, &h->last_ack, &q->ring[h->ring_pos & q->ring_mask]);
	}
}

/* QP qpn's ACK in the ring takes no more coalesced ACKs: it is encoded as it stands. */
static void
close_ring_ack(struct sl_xport_fbq *q, uint32_t qpn)
{
	settle(q, qpn);
	q->held[qpn].ring_ack = false;
}

/* The ring's frame at pos, brought up to date before it leaves. */
static void
refresh(struct sl_xport_fbq *q, uint32_t pos)
{
	uint32_t qpn = q->ring[pos & q->ring_mask].qpn;

	if (q->held[qpn].ring_pos == pos)
		settle(q, qpn);
}

/* The sticky NAK of QP qpn's held state h, naming peer QP peer_qpn with its token. */
static struct sl_xfb
nak_of(const struct held *h, uint32_t peer_qpn, uint32_t peer_token)
{
	return (struct sl_xfb){.opcode = SL_XOP_NAK,
			       .qpn = peer_qpn,
			       .token = peer_token,
			       .ack_psn = h->nak_ack,
			       .nak_msn = h->nak_msn,
			       .syndrome = h->nak_syn};
}

void
sl_xport_fbq_push(struct sl_xport_fbq *q, uint32_t qpn, const struct sl_xfb *fb)
{
	struct sl_xfb nak;

	if (q->held[qpn].nak_sticky) { /* refused: whatever the receiver says, it says NAK */
		nak = nak_of(&q->held[qpn], fb->qpn, fb->token);
		fb = &nak;
	}
	if (q->fifo_count == 0 && coalesce(q, qpn, fb))
		return;
	close_ring_ack(q, qpn);
	if (q->fifo_count == 0 && q->ring_count <= q->ring_mask) {
		uint32_t pos = q->ring_head + q->ring_count;

		if (!encode(q, qpn, fb, &q->ring[pos & q->ring_mask]))
			return;
		q->ring_count++;
		if (plain_ack(fb)) {
			q->held[qpn].ring_ack = true; /* not stale: close_ring_ack() settled it */
			q->held[qpn].ring_first_psn = fb->ack_psn;
			q->held[qpn].ring_pos = pos;
			q->held[qpn].last_ack = *fb;
		}
		return;
	}
	hold(q, qpn, fb);
}

/* QP qpn's held frames, oldest first, up to max. */
static unsigned
drain(struct sl_xport_fbq *q, uint32_t qpn, struct held *h, struct sl_xport_tx_frame *out,
      unsigned max)
{
	unsigned n = 0;

	if ((h->bits & HELD_NAK) && n < max) {
		struct sl_xfb nak = nak_of(h, h->peer_qpn, h->peer_token);

		n += encode(q, qpn, &nak, &out[n]);
		h->bits &= (uint8_t)~HELD_NAK;
	}
	if ((h->bits & HELD_NACK) && n < max) {
		n += encode(q, qpn, &h->nack, &out[n]);
		h->bits &= (uint8_t)~HELD_NACK;
	}
	if ((h->bits & HELD_ACK) && n < max) {
		n += encode(q, qpn, &h->ack, &out[n]);
		h->bits &= (uint8_t)~HELD_ACK;
	}
	if ((h->bits & HELD_CNP) && n < max) {
		struct sl_xfb cnp = {.opcode = SL_XOP_CNP,
				     .qpn = h->peer_qpn,
				     .token = h->peer_token,
				     .ack_psn = h->cnp_ack};

		n += encode(q, qpn, &cnp, &out[n]);
		h->bits &= (uint8_t)~HELD_CNP;
	}
	while (h->pulls && n < max) {
		struct sl_xfb pull = {.opcode = SL_XOP_PULL,
				      .qpn = h->peer_qpn,
				      .token = h->peer_token,
				      .ack_psn = h->pull_ack,
				      .pull_seq = h->pull_seq - --h->pulls};

		n += encode(q, qpn, &pull, &out[n]);
	}
	return n;
}

unsigned
sl_xport_fbq_pop(struct sl_xport_fbq *q, struct sl_xport_tx_frame *out, unsigned max)
{
	unsigned n = 0;

	while (n < max && q->ring_count) {
		refresh(q, q->ring_head);
		out[n++] = q->ring[q->ring_head++ & q->ring_mask];
		q->ring_count--;
	}
	while (n < max && q->fifo_count) {
		uint32_t qpn = q->fifo[q->fifo_head];
		struct held *h = &q->held[qpn];

		n += drain(q, qpn, h, &out[n], max - n);
		if (h->bits || h->pulls)
			break; /* no room for the rest */
		h->queued = false;
		q->fifo_head = (q->fifo_head + 1) % q->max_qps;
		q->fifo_count--;
	}
	return n;
}

bool
sl_xport_fbq_busy(const struct sl_xport_fbq *q)
{
	return q->ring_count || q->fifo_count;
}

void
sl_xport_fbq_nak(struct sl_xport_fbq *q, uint32_t qpn, const struct sl_xfb *nak)
{
	struct held *h = &q->held[qpn];

	h->nak_ack = nak->ack_psn;
	h->nak_msn = nak->nak_msn;
	h->nak_syn = nak->syndrome;
	h->nak_sticky = true;
	sl_xport_fbq_push(q, qpn, nak);
}

void
sl_xport_fbq_nak_end(struct sl_xport_fbq *q, uint32_t qpn)
{
	q->held[qpn].nak_sticky = false; /* a NAK held or in the ring is still sent, as made */
}

void
sl_xport_fbq_forget(struct sl_xport_fbq *q, uint32_t qpn)
{
	q->held[qpn].bits = 0;
	close_ring_ack(q, qpn);
	q->held[qpn].pulls = 0;
	q->held[qpn].nak_syn = 0;
	q->held[qpn].nak_sticky = false;
	q->held[qpn].naks_sent = 0;
}

uint64_t
sl_xport_fbq_naks_sent(const struct sl_xport_fbq *q, uint32_t qpn)
{
	return q->held[qpn].naks_sent;
}

size_t
sl_xport_fbq_bytes_per_qp(void)
{
	return sizeof(struct held) + sizeof(uint32_t);
}
