/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lane_rx.c - the lane half's arrivals (sl_chan_srv.h): what the endpoint delivers on an
 * application QP goes into the application's memory and receive CQ, and READs are answered
 * from its memory (read_src).
 *
 * The model: the endpoint hands each QP's messages over one at a time, in order, segment by
 * segment (on_recv); the lane places them like a verbs responder. A SEND goes into the oldest RECV,
 * segment by segment at its offset; one longer than its buffer completes the RECV with
 * LOC_LEN_ERR and is refused (SL_XPORT_SYN_OP: the sender sees REM_OP_ERR). With no RECV posted
 * (or older messages of the QP still stashed, to keep the order) the segments are copied into
 * the lane's stash: a ring of stash_bytes bytes and an index with one entry per segment, freed
 * from the front as RECVs take the messages (a QP whose messages wait at the front holds the
 * space behind it). A SEND the stash has no room for is refused with SL_XPORT_SYN_OP
 * (rnr_refused). A WRITE's first segment is checked against the key table for the whole range
 * with REMOTE_WRITE (else SL_XPORT_SYN_ACCESS, nothing written); with an immediate, its last
 * segment consumes a RECV (or leaves a zero-byte notice in the stash) that completes as
 * RECV_RDMA_IMM with byte_len = the WRITE's length (a notice the stash has no room for refuses
 * the WRITE after its bytes were placed: the sender sees REM_OP_ERR). A READ's answer is placed
 * into the destination recorded with the READ (its cookie names it). read_src serves a READ no
 * longer than the QP's max_msg_bytes, the cap of what the QP posts (else SL_XPORT_SYN_INVALID:
 * the requester sees REM_OP_ERR, as verbs' invalid request), over a range its key grants
 * REMOTE_READ (else SL_XPORT_SYN_ACCESS). A QP that refuses a message fails too (lane.c keeps it
 * open on the endpoint, whose receiver goes on refusing the peer's later packets), and a stashed
 * SEND longer than the RECV that takes it completes that RECV with LOC_LEN_ERR and fails the QP
 * (its sender saw success: the lane held the message, as an RDMA NIC's receive queue would have
 * refused it only with RNR).
 *
 * The stash (per lane): byte positions and index entries count up freely; a segment never
 * wraps the byte ring (the bytes left at the end are skipped); an entry is freed in place and
 * the front moves past freed entries only, so the index stays in arrival order and a QP's
 * messages are found by a scan from the front (the index is small: one entry per
 * STASH_BYTES_PER_ENTRY bytes, lane.c).
 *
 * Units: bytes.
 */
#include <errno.h>
#include <string.h>

#include "lane_priv.h"

/* Copy one segment of q's arriving message (or a notice, len 0) in; -ENOSPC if no room. */
static int
stash_put(struct sl_chan_lane *cl, struct lqp *q, const uint8_t *data, uint32_t len, uint8_t flags,
	  uint32_t imm, uint32_t byte_len)
{
	struct stash *s = &cl->st;
	uint64_t pos = s->tail, off;

	if (s->etail - s->ehead == s->n || len > s->bytes)
		return -ENOSPC;
	off = s->bytes ? pos % s->bytes : 0;
	if (off + len > s->bytes)
		pos += s->bytes - off; /* a segment never wraps: skip to the start */
	if (pos + len - s->head > s->bytes)
		return -ENOSPC;
	if (len)
		memcpy(s->buf + pos % s->bytes, data, len);
	s->e[s->etail & (s->n - 1)] = (struct stash_ent){.end = pos + len,
							 .lqp = (uint32_t)(q - cl->qp),
							 .len = len,
							 .imm = imm,
							 .byte_len = byte_len,
							 .flags = flags};
	s->etail++;
	s->tail = pos + len;
	return 0;
}

/* Move the front past freed entries. */
static void
stash_reclaim(struct stash *s)
{
	while (s->ehead != s->etail && (s->e[s->ehead & (s->n - 1)].flags & SE_FREE))
		s->head = s->e[s->ehead++ & (s->n - 1)].end;
	if (s->ehead == s->etail)
		s->head = s->tail;
}

/* Free q's entries from index entry `from` on (all of them: from = ehead). */
void
sl_chan_lane_stash_drop(struct sl_chan_lane *cl, struct lqp *q, uint32_t from)
{
	struct stash *s = &cl->st;

	for (uint32_t i = from; i != s->etail; i++)
		if (s->e[i & (s->n - 1)].lqp == (uint32_t)(q - cl->qp))
			s->e[i & (s->n - 1)].flags |= SE_FREE;
	stash_reclaim(s);
}

/*
 * Deliver q's stashed messages, oldest first, while it has RECVs and the oldest has arrived
 * whole.
 */
void
sl_chan_lane_stash_drain(struct sl_chan_lane *cl, struct lqp *q)
{
	struct stash *s = &cl->st;
	uint32_t me = (uint32_t)(q - cl->qp), mask = s->n - 1;

	while (q->stashed && q->rcv_head != q->rcv_tail && q->state == LQP_CONNECTED) {
		struct lrecv *r = &q->rcv[q->rcv_head & (q->c->rq_depth - 1)];
		uint32_t first = s->ehead, i, total = 0;
		const struct stash_ent *last;

		while (first != s->etail &&
		       (s->e[first & mask].lqp != me || (s->e[first & mask].flags & SE_FREE)))
			first++;
		for (i = first; i != s->etail; i++) {
			const struct stash_ent *e = &s->e[i & mask];

			if (e->lqp != me || (e->flags & SE_FREE))
				continue;
			total += e->len;
			if (e->flags & SE_LAST)
				break;
		}
		if (i == s->etail)
			return; /* still arriving */
		last = &s->e[i & mask];
		q->stashed--;
		q->rcv_head++;
		if (total > r->len) {
			sl_stat_add(&cl->stats.len_refused, 1);
			sl_chan_lane_cq_put(cl, q, SL_CHAN_PUT_RECV_CQ, r->wr_id, SL_WC_LOC_LEN_ERR,
					    SL_WC_RECV, total, 0);
			sl_chan_lane_stash_drop(cl, q, first);
			lqp_error(q, true);
			return;
		}
		total = 0;
		for (uint32_t j = first; j != i + 1; j++) {
			struct stash_ent *e = &s->e[j & mask];

			if (e->lqp != me || (e->flags & SE_FREE))
				continue;
			if (e->len)
				memcpy(r->ptr + total, s->buf + (e->end - e->len) % s->bytes,
				       e->len);
			total += e->len;
			e->flags |= SE_FREE;
		}
		if (last->flags & SE_WRITE_IMM)
			sl_chan_lane_cq_put(cl, q, SL_CHAN_PUT_RECV_CQ | SL_CHAN_PUT_IMM, r->wr_id,
					    SL_WC_SUCCESS, SL_WC_RECV_RDMA_IMM, last->byte_len,
					    last->imm);
		else if (last->flags & SE_IMM)
			sl_chan_lane_cq_put(cl, q, SL_CHAN_PUT_RECV_CQ | SL_CHAN_PUT_IMM, r->wr_id,
					    SL_WC_SUCCESS, SL_WC_RECV, total, last->imm);
		else
			sl_chan_lane_cq_put(cl, q, SL_CHAN_PUT_RECV_CQ, r->wr_id, SL_WC_SUCCESS,
					    SL_WC_RECV, total, 0);
		stash_reclaim(s);
	}
}

/* A WRITE with immediate arrived whole: complete a RECV, or leave a notice in the stash. */
static int
write_imm_arrived(struct sl_chan_lane *cl, struct lqp *q, uint32_t imm, uint32_t byte_len)
{
	if (q->stashed == 0 && q->rcv_head != q->rcv_tail) {
		struct lrecv *r = &q->rcv[q->rcv_head++ & (q->c->rq_depth - 1)];

		sl_chan_lane_cq_put(cl, q, SL_CHAN_PUT_RECV_CQ | SL_CHAN_PUT_IMM, r->wr_id,
				    SL_WC_SUCCESS, SL_WC_RECV_RDMA_IMM, byte_len, imm);
		return 0;
	}
	if (stash_put(cl, q, NULL, 0, SE_FIRST | SE_LAST | SE_IMM | SE_WRITE_IMM, imm, byte_len)) {
		sl_stat_add(&cl->stats.rnr_refused, 1);
		return SL_XPORT_SYN_OP;
	}
	q->stashed++;
	sl_stat_add(&cl->stats.stash_msgs, 1);
	return 0;
}

static int
recv_send(struct sl_chan_lane *cl, struct lqp *q, const struct sl_xport_rx_seg *seg)
{
	uint8_t flags = (seg->first ? SE_FIRST : 0) | (seg->last ? SE_LAST : 0) |
			(seg->has_imm ? SE_IMM : 0);
	struct lrecv *r;
	uint8_t to;

	if (seg->first) {
		q->rx_to = q->stashed == 0 && q->rcv_head != q->rcv_tail ? RX_RECV : RX_STASH;
		if (q->rx_to == RX_STASH) {
			q->stashed++;
			q->stash_cur = cl->st.etail;
			sl_stat_add(&cl->stats.stash_msgs, 1);
		}
	}
	to = q->rx_to;
	if (seg->last)
		q->rx_to = RX_NONE;
	if (to != RX_RECV && to != RX_STASH)
		return SL_XPORT_SYN_INVALID; /* not the message in progress */
	if (to == RX_STASH) {
		if (stash_put(cl, q, seg->data, seg->len, flags, seg->imm, 0) == 0) {
			if (seg->last)
				sl_chan_lane_stash_drain(cl, q);
			return 0;
		}
		sl_chan_lane_stash_drop(cl, q, q->stash_cur);
		q->stashed--;
		sl_stat_add(&cl->stats.rnr_refused, 1);
		return SL_XPORT_SYN_OP;
	}
	r = &q->rcv[q->rcv_head & (q->c->rq_depth - 1)];
	if ((uint64_t)seg->offset + seg->len > r->len) {
		q->rcv_head++;
		sl_stat_add(&cl->stats.len_refused, 1);
		sl_chan_lane_cq_put(cl, q, SL_CHAN_PUT_RECV_CQ, r->wr_id, SL_WC_LOC_LEN_ERR,
				    SL_WC_RECV, seg->offset + seg->len, 0);
		return SL_XPORT_SYN_OP;
	}
	if (seg->len)
		memcpy(r->ptr + seg->offset, seg->data, seg->len);
	if (seg->last) {
		unsigned put = SL_CHAN_PUT_RECV_CQ | (seg->has_imm ? SL_CHAN_PUT_IMM : 0);

		q->rcv_head++;
		sl_chan_lane_cq_put(cl, q, put, r->wr_id, SL_WC_SUCCESS, SL_WC_RECV,
				    seg->offset + seg->len, seg->imm);
	}
	return 0;
}

static int
recv_write(struct sl_chan_lane *cl, struct lqp *q, const struct sl_xport_rx_seg *seg)
{
	if (seg->first) {
		q->rx_to = RX_WRITE;
		q->rx_len = seg->total_len;
		q->rx_ptr = sl_chan_mrs_find(q->c->mrs, q->c->client, SL_CHAN_RKEY, seg->rkey,
					     seg->raddr, seg->total_len, SL_ACCESS_REMOTE_WRITE);
		if (q->rx_ptr == NULL && seg->total_len) {
			q->rx_to = RX_NONE;
			sl_stat_add(&cl->stats.write_refused, 1);
			return SL_XPORT_SYN_ACCESS;
		}
	}
	if (q->rx_to != RX_WRITE || (uint64_t)seg->offset + seg->len > q->rx_len)
		return SL_XPORT_SYN_INVALID;
	if (seg->last)
		q->rx_to = RX_NONE;
	if (seg->len)
		memcpy(q->rx_ptr + seg->offset, seg->data, seg->len);
	if (seg->last && seg->has_imm)
		return write_imm_arrived(cl, q, seg->imm, q->rx_len);
	return 0;
}

static int
recv_read_resp(struct lqp *q, const struct sl_xport_rx_seg *seg)
{
	uint32_t idx = (uint32_t)seg->cookie;
	const struct lwr *w = &q->wr[idx & (q->c->sq_depth - 1)];

	if (idx - q->wr_head >= q->wr_tail - q->wr_head || w->done || w->opcode != SL_WR_READ ||
	    (uint64_t)seg->offset + seg->len > w->len)
		return SL_XPORT_SYN_INVALID;
	if (seg->len)
		memcpy(w->dst + seg->offset, seg->data, seg->len);
	return 0;
}

int
sl_chan_lane_on_recv(struct sl_chan_lane *cl, const struct sl_xport_rx_seg *seg, uint64_t now_ns)
{
	struct lqp *q = lqp_of(cl, seg->qpn, 1u << LQP_CONNECTED);
	int syn;

	(void)now_ns;
	if (q == NULL)
		return SL_XPORT_SYN_OP;
	switch (seg->op) {
	case SL_XPORT_OP_SEND:
		syn = recv_send(cl, q, seg);
		break;
	case SL_XPORT_OP_WRITE:
		syn = recv_write(cl, q, seg);
		break;
	case SL_XPORT_OP_READ_RESP:
		syn = recv_read_resp(q, seg);
		break;
	default:
		syn = SL_XPORT_SYN_INVALID;
		break;
	}
	if (syn)
		lqp_error(q, true);
	return syn;
}

int
sl_chan_lane_read_src(struct sl_chan_lane *cl, uint32_t qpn, uint64_t raddr, uint32_t rkey,
		      uint32_t len, const uint8_t **src)
{
	struct lqp *q = lqp_of(cl, qpn, 1u << LQP_CONNECTED);

	if (q == NULL)
		return SL_XPORT_SYN_OP;
	if (!lqp_msg_fits(q, len)) {
		sl_stat_add(&cl->stats.read_len_refused, 1);
		lqp_error(q, true);
		return SL_XPORT_SYN_INVALID;
	}
	*src = sl_chan_mrs_find(q->c->mrs, q->c->client, SL_CHAN_RKEY, rkey, raddr, len,
				SL_ACCESS_REMOTE_READ);
	if (*src == NULL) {
		sl_stat_add(&cl->stats.read_refused, 1);
		lqp_error(q, true);
		return SL_XPORT_SYN_ACCESS;
	}
	return 0;
}
