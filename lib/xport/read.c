/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * read.c - the transport endpoint's WRITE placement and READ (sl_xport.h; docs/transport.md,
 * "WRITE, READ and refusals").
 *
 * WRITE. A WRITE's first packet carries RETH (address, key, length of the whole message); the
 * receive side keeps it for the message in progress and gives every segment the message's
 * raddr, rkey and total length. The bytes must end exactly where RETH said: a segment that
 * would run past it, or a last one short of it, refuses the message (INVALID) before the
 * consumer sees it.
 *
 * READ, responder. The request is one packet; when the receiver delivers it in order,
 * read_src names the bytes and the QP owes an answer: a message of its own send direction
 * (READ RESPONSE opcodes, its own PSNs and MSN), acknowledged by the requester like any
 * message, completed silently. Owed answers wait, in request order, in a queue of
 * SL_XPORT_READS_MAX for a slot of the send queue, whose ring has SL_XPORT_READS_MAX slots
 * beyond sq_depth that posts never take: completions are in order, so messages posted behind
 * a READ cannot retire before its answer arrives, and two QPs whose send queues are full of
 * them would otherwise wait for each other's answer forever.
 *
 * READ, requester. The peer answers in request order, so an answer belongs to the oldest READ
 * without one (a ring of their send-queue positions); it must be that READ's length, or it is
 * refused (rx_bad_answer). A READ completes when its answer was delivered and its request
 * acknowledged (sl_xp_complete). While READs await answers the QP is on a list that tx_burst
 * checks against the QP timeout: no ACK and no answer segment for that long fails it, as a
 * resend without progress does.
 */
#include "xport_priv.h"

void
sl_xp_serve_owed(struct sl_xport *x, uint32_t qpn, struct xqp *q, uint64_t now_ns)
{
	while (q->owed_n && q->sq_tail - q->sq_head <= x->sq_mask) {
		const struct owed *o = &q->owed[q->owed_head & XP_RD_MASK];
		struct sq_ent e = {.op = SL_XPORT_OP_READ_RESP, .buf = o->src, .len = o->len};

		if (sl_xp_sq_push(x, qpn, q, &e, now_ns) != 0)
			return; /* the scheduler is full: a later completion retries */
		q->owed_head++;
		q->owed_n--;
	}
}

int
sl_xp_serve_read(struct sl_xport *x, uint32_t qpn, struct xqp *q, const struct sl_xhdr *h,
		 uint64_t now_ns)
{
	const uint8_t *src = NULL;
	int syn;

	if (x->c.read_src == NULL) {
		sl_stat_add(&x->st.rx_unsupported, 1);
		return SL_XPORT_SYN_INVALID;
	}
	if (q->owed_n == SL_XPORT_READS_MAX)
		return SL_XPORT_SYN_INVALID; /* the peer has more READs out than it may */
	syn = x->c.read_src(x->c.ctx, qpn, h->raddr, h->rkey, h->rlen_bytes, &src);
	if (syn)
		return syn;
	sl_stat_add(&x->st.reads_served, 1);
	if (q->failed)
		return 0; /* our sender is gone: the peer's READ times out */
	q->owed[(q->owed_head + q->owed_n++) & XP_RD_MASK] = (struct owed){src, h->rlen_bytes};
	sl_xp_serve_owed(x, qpn, q, now_ns);
	return 0;
}

void
sl_xp_answered(struct sl_xport *x, uint32_t qpn, struct xqp *q, uint64_t now_ns)
{
	q->sq[q->rd[q->rd_head++ & XP_RD_MASK] & x->sq_mask].answered = true;
	if (q->rd_head == q->rd_tail)
		sl_xp_set_del(&x->reading, qpn);
	sl_xp_complete(x, qpn, q, now_ns);
}

int
sl_xp_place(struct sl_xport *x, struct xqp *q, const struct sl_xhdr *h, struct sl_xport_rx_seg *seg,
	    uint64_t now_ns)
{
	bool answer = seg->op == SL_XPORT_OP_READ_RESP;

	if (seg->first && !answer) {
		q->rx_raddr = h->raddr;
		q->rx_rkey = h->rkey;
		q->rx_total = h->rlen_bytes;
	} else if (seg->first) {
		const struct sq_ent *m;

		if (q->rd_head == q->rd_tail)
			goto bad_answer;
		m = &q->sq[q->rd[q->rd_head & XP_RD_MASK] & x->sq_mask];
		q->rx_total = m->len;
		q->rx_cookie = m->cookie;
	}
	if (seg->offset + seg->len > q->rx_total ||
	    seg->last != (seg->offset + seg->len == q->rx_total)) {
		if (answer)
			goto bad_answer;
		return SL_XPORT_SYN_INVALID;
	}
	seg->total_len = q->rx_total;
	if (answer) {
		seg->cookie = q->rx_cookie;
		q->progress_ns = now_ns; /* an answer segment is progress of our READ */
	} else {
		seg->raddr = q->rx_raddr;
		seg->rkey = q->rx_rkey;
	}
	return 0;
bad_answer:
	sl_stat_add(&x->st.rx_bad_answer, 1);
	return SL_XPORT_SYN_INVALID;
}

void
sl_xp_reads_timeout(struct sl_xport *x, uint64_t now_ns)
{
	for (uint32_t i = 0; i < x->reading.n;) {
		uint32_t qpn = x->reading.qpn[i];

		if (!sl_xp_timed_out(x, qpn, &x->qp[qpn], now_ns))
			i++; /* else it left the list, and another took its place */
	}
}

uint64_t
sl_xp_reads_deadline(const struct sl_xport *x)
{
	uint64_t d = UINT64_MAX;

	for (uint32_t i = 0; i < x->reading.n; i++) {
		const struct xqp *q = &x->qp[x->reading.qpn[i]];

		d = SL_MIN(d, q->progress_ns + q->timeout_ns);
	}
	return d;
}
