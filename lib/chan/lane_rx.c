/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lane_rx.c - the lane half's arrivals (sl_chan.h): what the endpoint delivers on an
 * application QP goes into the application's memory and receive CQ, and READs are answered
 * from its memory (read_src).
 *
 * The model: the endpoint hands each QP's messages over one at a time, in order, segment by
 * segment (on_recv); the lane places them like a verbs responder. A SEND goes into the oldest RECV,
 * segment by segment at its offset; one longer than its buffer completes the RECV with
 * LOC_LEN_ERR and is refused (SL_XPORT_SYN_OP: the sender sees REM_OP_ERR). With no RECV posted
 * (or older messages of the QP still stashed, to keep the order) the segments are copied into
 * the lane's stash (below). A SEND the stash has no room for is refused for now with
 * SL_XPORT_SYN_RNR (rnr_refused; stash_client_refused, stash_qp_refused past a share): what
 * the stash took of it is given back, the QP stays connected, and the endpoint forgets the
 * message and waits for its sender to send it again, as an RDMA NIC answers RNR (the QP's
 * RECVs or the stash have room by then, else it is refused again; see sl_xport.h). A WRITE's
 * first segment is checked against the QP's max_msg_bytes (else SL_XPORT_SYN_INVALID:
 * REM_OP_ERR at the sender, nothing written) and against the key table for the whole range with
 * REMOTE_WRITE (else SL_XPORT_SYN_ACCESS); with an immediate, its last segment consumes a RECV
 * (or leaves a zero-byte notice in the stash) that completes as RECV_RDMA_IMM with byte_len =
 * the WRITE's length (a notice the stash has no room for refuses the WRITE for now after its
 * bytes were placed: sent again, it places the same bytes again). A READ's answer is placed into
 * the destination recorded with the READ (its cookie names it). read_src serves a READ no longer
 * than the QP's max_msg_bytes, the cap of what the QP posts (else SL_XPORT_SYN_INVALID: the
 * requester sees REM_OP_ERR, as verbs' invalid request), over a range its key grants REMOTE_READ
 * (else SL_XPORT_SYN_ACCESS). A QP that refuses a message for good fails too (lane.c keeps it open
 * on the endpoint, whose receiver goes on refusing the peer's later packets), and a stashed SEND
 * longer than the RECV that takes it completes that RECV with LOC_LEN_ERR and fails the QP (its
 * sender saw success: the lane held the message, as an RDMA NIC's receive queue would have refused
 * it only with RNR).
 *
 * The stash (per lane): stash_bytes cut into chunks of STASH_CHUNK_BYTES, each with a small
 * header (struct stash_chunk), and linked into lists by index: one free list (a stack) and one
 * list per QP, oldest first, of the chunks holding its stashed messages back to back (a segment
 * fills the room left in its message's newest chunk, then takes new ones; a message's last chunk
 * says SE_LAST and carries its immediate; a zero-byte message or notice takes one empty chunk).
 * A RECV takes its QP's oldest message off the front of the QP's list and frees its chunks,
 * which any QP may take next: no QP's message waits in front of another's space, so a QP that
 * never posts a RECV holds its own chunks and no more. Three bounds, checked in this order: the
 * lane's free chunks (rnr_refused past them); an application's share, client_chunks
 * (client_stash_bytes rounded up to chunks) over all its QPs on the lane, kept in a holder entry
 * its QPs share (stash_client_refused), so that an application that never posts RECVs, however
 * many QPs it opens, leaves the rest of the stash to the others; and a QP's share, qp_chunks
 * (stash_qp_bytes; stash_qp_refused). A refusal is for now (RNR): the chunks the refused
 * message took are freed (stash_unput: they are the QP's newest, after its last whole message),
 * the older messages stay. A failed QP's chunks are all freed at once. Invariants: every chunk is
 * on exactly one list; n_free plus the QPs' st_chunks is n; a holder's chunks is the sum of its
 * QPs' st_chunks; per QP the list is in arrival order, so delivery order is kept. Cost: O(1) per
 * chunk to take, deliver or free; a message's end is found by a walk of its own chunks.
 *
 * Units: bytes; stash space is counted in chunks (STASH_CHUNK_BYTES each).
 */
#include <errno.h>
#include <string.h>

#include "lane_priv.h"

/* Chunk i's bytes. */
static uint8_t *
chunk_bytes(const struct stash *s, uint32_t i)
{
	return s->buf + (size_t)i * STASH_CHUNK_BYTES;
}

/* Take q's oldest chunk off its list onto the free list. */
static void
chunk_free_oldest(struct stash *s, struct lqp *q)
{
	uint32_t i = q->st_head;

	q->st_head = s->ch[i].next;
	q->st_chunks--;
	q->holder->chunks--;
	s->ch[i].next = s->free;
	s->free = i;
	s->n_free++;
}

/*
 * Copy one segment of q's arriving message (or a notice, len 0) in: the room left in the
 * message's newest chunk first, then new chunks. A segment past the free chunks, or else past
 * q's share, is refused whole (counted): -ENOSPC.
 */
static int
stash_put(struct sl_chan_lane *cl, struct lqp *q, const uint8_t *data, uint32_t len, uint8_t flags,
	  uint32_t imm, uint32_t byte_len)
{
	struct stash *s = &cl->st;
	bool cont = q->st_chunks && !(s->ch[q->st_tail].flags & SE_LAST); /* the message goes on */
	uint32_t done = cont ? SL_MIN(len, STASH_CHUNK_BYTES - s->ch[q->st_tail].len) : 0;
	uint32_t need = len > done ? SL_DIV_ROUND_UP(len - done, STASH_CHUNK_BYTES) : !cont;
	struct stash_chunk *t;

	if (need > s->n_free) {
		sl_stat_add(&cl->stats.rnr_refused, 1);
		return -ENOSPC;
	}
	if (q->holder->chunks + (uint64_t)need > s->client_chunks) {
		sl_stat_add(&cl->stats.stash_client_refused, 1);
		return -ENOSPC;
	}
	if (q->st_chunks + (uint64_t)need > s->qp_chunks) {
		sl_stat_add(&cl->stats.stash_qp_refused, 1);
		return -ENOSPC;
	}
	if (done) {
		t = &s->ch[q->st_tail];
		memcpy(chunk_bytes(s, q->st_tail) + t->len, data, done);
		t->len += done;
	}
	for (; need; need--) {
		uint32_t i = s->free, n = SL_MIN(len - done, STASH_CHUNK_BYTES);

		s->free = s->ch[i].next;
		s->n_free--;
		s->ch[i] = (struct stash_chunk){.len = (uint16_t)n};
		if (n)
			memcpy(chunk_bytes(s, i), data + done, n);
		done += n;
		q->holder->chunks++;
		if (q->st_chunks++)
			s->ch[q->st_tail].next = i;
		else
			q->st_head = i;
		q->st_tail = i;
	}
	t = &s->ch[q->st_tail];
	t->flags = flags;
	t->imm = imm;
	t->byte_len = byte_len;
	return 0;
}

/*
 * Give back the chunks of q's message in progress (those after its newest SE_LAST chunk), which
 * was refused for now: its sender sends it again from its first segment.
 */
static void
stash_unput(struct stash *s, struct lqp *q)
{
	uint32_t keep = 0, pos = 0, i = q->st_head, tail = q->st_head;

	for (; pos < q->st_chunks; pos++, i = s->ch[i].next)
		if (s->ch[i].flags & SE_LAST) {
			keep = pos + 1;
			tail = i;
		}
	i = keep ? s->ch[tail].next : q->st_head;
	for (pos = keep; pos < q->st_chunks; pos++) {
		uint32_t next = s->ch[i].next;

		s->ch[i].next = s->free;
		s->free = i;
		s->n_free++;
		q->holder->chunks--;
		i = next;
	}
	q->st_chunks = keep;
	if (keep)
		q->st_tail = tail;
}

void
sl_chan_lane_stash_drop(struct sl_chan_lane *cl, struct lqp *q)
{
	while (q->st_chunks)
		chunk_free_oldest(&cl->st, q);
	q->stashed = 0;
}

/*
 * Deliver q's stashed messages, oldest first, while it has RECVs and the oldest has arrived
 * whole.
 */
void
sl_chan_lane_stash_drain(struct sl_chan_lane *cl, struct lqp *q)
{
	struct stash *s = &cl->st;

	while (q->stashed && q->rcv_head != q->rcv_tail && q->state == LQP_CONNECTED) {
		struct lrecv *r = &q->rcv[q->rcv_head & (q->c->rq_depth - 1)];
		uint32_t last = q->st_head, total = s->ch[last].len, k = 1, i;
		struct stash_chunk l;

		while (!(s->ch[last].flags & SE_LAST)) {
			if (k++ == q->st_chunks)
				return; /* still arriving */
			last = s->ch[last].next;
			total += s->ch[last].len;
		}
		l = s->ch[last];
		q->stashed--;
		q->rcv_head++;
		if (total > r->len) {
			sl_stat_add(&cl->stats.len_refused, 1);
			sl_chan_lane_cq_put(cl, q, SL_CHAN_PUT_RECV_CQ, r->wr_id, SL_WC_LOC_LEN_ERR,
					    SL_WC_RECV, total, 0);
			sl_chan_lane_stash_drop(cl, q);
			lqp_refused(q);
			return;
		}
		total = 0;
		do {
			i = q->st_head;
			if (s->ch[i].len)
				memcpy(r->ptr + total, chunk_bytes(s, i), s->ch[i].len);
			total += s->ch[i].len;
			chunk_free_oldest(s, q);
		} while (i != last);
		if (l.flags & SE_WRITE_IMM)
			sl_chan_lane_cq_put(cl, q, SL_CHAN_PUT_RECV_CQ | SL_CHAN_PUT_IMM, r->wr_id,
					    SL_WC_SUCCESS, SL_WC_RECV_RDMA_IMM, l.byte_len, l.imm);
		else if (l.flags & SE_IMM)
			sl_chan_lane_cq_put(cl, q, SL_CHAN_PUT_RECV_CQ | SL_CHAN_PUT_IMM, r->wr_id,
					    SL_WC_SUCCESS, SL_WC_RECV, total, l.imm);
		else
			sl_chan_lane_cq_put(cl, q, SL_CHAN_PUT_RECV_CQ, r->wr_id, SL_WC_SUCCESS,
					    SL_WC_RECV, total, 0);
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
	if (stash_put(cl, q, NULL, 0, SE_LAST | SE_IMM | SE_WRITE_IMM, imm, byte_len))
		return SL_XPORT_SYN_RNR;
	q->stashed++;
	sl_stat_add(&cl->stats.stash_msgs, 1);
	return 0;
}

static int
recv_send(struct sl_chan_lane *cl, struct lqp *q, const struct sl_xport_rx_seg *seg)
{
	uint8_t flags = (seg->last ? SE_LAST : 0) | (seg->has_imm ? SE_IMM : 0);
	struct lrecv *r;
	uint8_t to;

	if (seg->first) {
		q->rx_to = q->stashed == 0 && q->rcv_head != q->rcv_tail ? RX_RECV : RX_STASH;
		if (q->rx_to == RX_STASH)
			q->stashed++;
	}
	to = q->rx_to;
	if (seg->last)
		q->rx_to = RX_NONE;
	if (to != RX_RECV && to != RX_STASH)
		return SL_XPORT_SYN_INVALID; /* not the message in progress */
	if (to == RX_STASH) {
		if (stash_put(cl, q, seg->data, seg->len, flags, seg->imm, 0) == 0) {
			if (seg->last) {
				sl_stat_add(&cl->stats.stash_msgs, 1);
				sl_chan_lane_stash_drain(cl, q);
			}
			return 0;
		}
		/* refused for now: it comes again from its first segment */
		stash_unput(&cl->st, q);
		q->stashed--;
		q->rx_to = RX_NONE;
		return SL_XPORT_SYN_RNR;
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
		if (!lqp_msg_fits(q, seg->total_len)) {
			q->rx_to = RX_NONE;
			sl_stat_add(&cl->stats.write_len_refused, 1);
			return SL_XPORT_SYN_INVALID;
		}
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
	if (syn && syn != SL_XPORT_SYN_RNR)
		lqp_refused(q);
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
		lqp_refused(q);
		return SL_XPORT_SYN_INVALID;
	}
	*src = sl_chan_mrs_find(q->c->mrs, q->c->client, SL_CHAN_RKEY, rkey, raddr, len,
				SL_ACCESS_REMOTE_READ);
	if (*src == NULL) {
		sl_stat_add(&cl->stats.read_refused, 1);
		lqp_refused(q);
		return SL_XPORT_SYN_ACCESS;
	}
	return 0;
}
