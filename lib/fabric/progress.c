/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * progress.c - an endpoint's data path: libsluice completions become libfabric ones.
 *
 * Progress is manual (FI_PROGRESS_MANUAL): it runs inside the application's fi_cq_read, its
 * sends and its receives. Each pass moves the handshakes (peer.c), then takes at most as many
 * libsluice completions as both bound CQs have room for (a completion makes at most one
 * entry), so an unread CQ holds the endpoint back instead of losing entries:
 *   - a send slot's completion reports the send, RMA write or read (when it asked for a
 *     completion; a read's bytes are copied from the slot to the application's buffer first)
 *     and frees the slot; an error also fails the peer (its QP is in error from then on, as a
 *     verbs QP is after a remote access error);
 *   - a peer's fi_writedata takes a receive bounce buffer (libsluice's WRITE with immediate)
 *     and writes nothing there: it completes on the receive CQ as FI_REMOTE_WRITE with its
 *     CQ data, consuming none of the application's receives, and the buffer is posted again;
 *   - a receive bounce buffer's completion is copied into the oldest posted receive, which
 *     completes (FI_ETRUNC with olen when it is shorter), and the buffer is posted again; with
 *     no receive posted it waits, in arrival order, in the unexpected ring, and the receive
 *     posted next takes it (FI_RM_DISABLED: a peer that keeps sending into an endpoint that
 *     posts nothing fills its bounce buffers and then sluiced's stash, is then held off by
 *     receiver-not-ready retries, and its QP fails after its timeout: FI_ENORX).
 * The libsluice CQ's event fd is drained only after an arm (fi_cq_sread, fi_trywait), and the
 * listener is looked at once a millisecond unless a handshake is under way, so busy polling
 * makes no system call.
 *
 * Failure. A peer that fails (its QP's error, a handshake's) completes its sends that waited for
 * it in error, and sluiced completes those it held in error too. sluiced itself going away is
 * seen nowhere on the data path (its rings just stop moving), so the same once-a-millisecond
 * look asks libsluice whether its control socket hung up (sl_ctx_status), and the socket is in
 * the wait set, so a sleeping reader wakes for it. Then every peer fails with FI_ECONNABORTED
 * and the endpoint completes itself what sluiced held: the sends on its QPs and the receives
 * posted, each with FI_ECONNABORTED (prov_errno SL_WC_WR_FLUSH_ERR, as libsluice's flush of a
 * destroyed QP). Every error completion, like every other, waits for room in its CQ: a CQ is
 * never written past its size (no FI_EOVERRUN), and a full one holds the rest back until read.
 *
 * Error codes: a libsluice status maps to the FI_E* code nearest in meaning, and the status
 * itself is the entry's prov_errno (fi_cq_strerror names it).
 */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "fab_priv.h"

#define POLL_BURST 32 /**< libsluice completions taken per pass at most */
/** The listener is looked at this often when nothing else calls for it (each look is a system
 *  call, which a busy-polling pass should not pay), ns: a HELLO waits for it at most. */
#define ACCEPT_EVERY_NS 1000000u

static int
status_err(enum sl_wc_status s)
{
	switch (s) {
	case SL_WC_SUCCESS:
		return 0;
	case SL_WC_LOC_LEN_ERR:
		return FI_ETRUNC;
	case SL_WC_REM_ACCESS_ERR:
		return FI_EACCES;
	case SL_WC_REM_OP_ERR:
		return FI_EREMOTEIO;
	case SL_WC_RETRY_EXC_ERR:
		return FI_ETIMEDOUT;
	case SL_WC_RNR_RETRY_EXC_ERR:
		return FI_ENORX;
	case SL_WC_WR_FLUSH_ERR:
		return FI_ECANCELED;
	default:
		return FI_EIO;
	}
}

static size_t
cq_free(const struct sl_fab_cq *cq)
{
	size_t a = cq->cap - (cq->tail - cq->head), b = cq->cap - (cq->err_tail - cq->err_head);

	return a < b ? a : b;
}

/* A send slot's completion flags by what it carried. */
static const uint64_t op_flags[] = {
	[SL_FAB_OP_SEND] = FI_SEND | FI_MSG,
	[SL_FAB_OP_WRITE] = FI_RMA | FI_WRITE,
	[SL_FAB_OP_READ] = FI_RMA | FI_READ,
};

/* The libsluice work request a slot's operation posts. */
static uint8_t
op_opcode(const struct sl_fab_tx *t)
{
	switch (t->op) {
	case SL_FAB_OP_WRITE:
		return t->has_data ? SL_WR_WRITE_WITH_IMM : SL_WR_WRITE;
	case SL_FAB_OP_READ:
		return SL_WR_READ;
	default:
		return t->has_data ? SL_WR_SEND_WITH_IMM : SL_WR_SEND;
	}
}

void
sl_fab_tx_done(struct sl_fab_ep *ep, uint32_t i, int err, int prov_errno)
{
	struct sl_fab_tx *t = &ep->tx[i];

	if (err == 0 && t->op == SL_FAB_OP_READ && t->len > 0)
		memcpy(t->rbuf, (char *)ep->tx_mem + (size_t)i * sl_fab_params.max_msg_bytes,
		       t->len);
	if (t->completion || err != 0) {
		struct sl_fab_cqe e = {
			.op_context = t->context,
			.flags = op_flags[t->op],
			.len = err ? 0 : t->len,
			.src = FI_ADDR_NOTAVAIL,
			.err = err,
			.prov_errno = prov_errno,
		};

		sl_fab_cq_push(ep->tx_cq, &e);
	}
	t->next = ep->tx_free;
	t->posted = false;
	ep->tx_free = (int32_t)i;
	ep->tx_busy--;
}

void
sl_fab_tx_flush(struct sl_fab_ep *ep, struct sl_fab_peer *p)
{
	while (p->wait_head >= 0) {
		uint32_t i = (uint32_t)p->wait_head;
		struct sl_fab_tx *t = &ep->tx[i];
		struct sl_wr wr = {
			.wr_id = i,
			.opcode = op_opcode(t),
			.flags = SL_WR_F_SIGNALED,
			.lkey = sl_mr_lkey(ep->tx_mr),
			.addr = (char *)ep->tx_mem + (size_t)i * sl_fab_params.max_msg_bytes,
			.len = t->len,
			.raddr = t->raddr,
			.rkey = t->rkey,
			.imm = t->data,
		};
		int ret = sl_post_send(p->qp, &wr, 1);

		if (ret != 1) {
			/* The send queue holds every slot, so only a QP in error refuses. */
			sl_fab_peer_fail(ep, p, ret == -EPIPE ? FI_ECONNRESET : FI_EIO);
			return;
		}
		p->wait_head = t->next;
		t->next = -1;
		t->posted = true;
	}
	p->wait_tail = -1;
}

/* Post peer p's receive bounce buffer slot again (its QP fails if it cannot be). */
static void
repost(struct sl_fab_ep *ep, struct sl_fab_peer *p, uint32_t peer, uint32_t slot)
{
	const size_t bytes = sl_fab_params.max_msg_bytes;
	struct sl_recv_wr wr = {
		.wr_id = SL_FAB_WR_RX_ID(peer, slot),
		.lkey = sl_mr_lkey(p->rx_mr),
		.addr = (char *)p->rx_mem + (size_t)slot * bytes,
		.len = (uint32_t)bytes,
	};

	if (p->state != SL_FAB_PEER_FAILED && sl_post_recv(p->qp, &wr, 1) != 1)
		sl_fab_peer_fail(ep, p, FI_ECONNRESET);
}

/* Copy peer's bounce buffer slot into the oldest posted receive, complete it, repost slot. */
static void
deliver(struct sl_fab_ep *ep, const struct sl_fab_unexp *m)
{
	struct sl_fab_peer *p = &ep->peers[m->peer];
	struct sl_fab_rx *rx = &ep->rxq[ep->rxq_head++ & (ep->rxq_cap - 1)];
	const size_t slot = sl_fab_params.max_msg_bytes;
	char *src = (char *)p->rx_mem + (size_t)m->slot * slot;
	size_t n = m->len < rx->len ? m->len : rx->len;
	struct sl_fab_cqe e = {
		.op_context = rx->context,
		.flags = FI_RECV | FI_MSG | (m->has_imm ? FI_REMOTE_CQ_DATA : 0),
		.len = n,
		.buf = rx->buf,
		.data = m->imm,
		.src = ep->source ? sl_fab_av_find(ep->av, &p->addr) : FI_ADDR_NOTAVAIL,
	};

	if (n > 0)
		memcpy(rx->buf, src, n);
	if (m->len > rx->len) {
		e.err = FI_ETRUNC;
		e.olen = m->len - rx->len;
	}
	if (rx->completion || e.err != 0)
		sl_fab_cq_push(ep->rx_cq, &e);
	repost(ep, p, m->peer, m->slot);
}

/* A peer's fi_writedata arrived (libsluice's WRITE with immediate, which took a receive bounce
 * buffer and wrote nothing there): the data completion, with no receive of the application's
 * consumed, and the buffer posted again. */
static void
write_data_arrived(struct sl_fab_ep *ep, const struct sl_wc *wc, uint32_t peer, uint32_t slot)
{
	struct sl_fab_peer *p = &ep->peers[peer];
	struct sl_fab_cqe e = {
		.flags = FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA,
		.len = wc->byte_len,
		.data = wc->imm,
		.src = ep->source ? sl_fab_av_find(ep->av, &p->addr) : FI_ADDR_NOTAVAIL,
	};

	sl_fab_cq_push(ep->rx_cq, &e);
	repost(ep, p, peer, slot);
}

static void
on_recv(struct sl_fab_ep *ep, const struct sl_wc *wc)
{
	uint32_t peer = (uint32_t)(wc->wr_id >> 32 & 0x7fffffff), slot = (uint32_t)wc->wr_id;
	struct sl_fab_unexp m = {
		.peer = peer,
		.slot = slot,
		.len = wc->byte_len,
		.imm = wc->imm,
		.has_imm = (wc->flags & SL_WC_F_IMM) != 0,
	};

	if (peer >= ep->n_peers || slot >= sl_fab_params.rx_slots)
		return; /* not a wr_id this endpoint posted */
	if (wc->status != SL_WC_SUCCESS) {
		/* The QP is in error: its buffers come back flushed. */
		sl_fab_peer_fail(ep, &ep->peers[peer], status_err(wc->status));
		return;
	}
	if (wc->opcode == SL_WC_RECV_RDMA_IMM) {
		write_data_arrived(ep, wc, peer, slot);
		return;
	}
	if (ep->unexp_head == ep->unexp_tail && ep->rxq_head != ep->rxq_tail)
		deliver(ep, &m);
	else
		ep->unexp[ep->unexp_tail++ & (ep->unexp_cap - 1)] = m;
}

/* sluiced hung up: every peer fails with FI_ECONNABORTED, and its hang-up, which would keep
 * the wait set readable from now on, leaves it. */
static void
ep_lost(struct sl_fab_ep *ep, int why)
{
	SL_FAB_WARN(FI_LOG_EP_DATA, "sluiced is gone (%s): the endpoint's work ends in error\n",
		    strerror(-why));
	ep->lost_err = FI_ECONNABORTED;
	epoll_ctl(ep->wait_fd, EPOLL_CTL_DEL, sl_ctx_fd(ep->domain->ctx), NULL);
	for (uint32_t i = 0; i < ep->n_peers; i++)
		sl_fab_peer_fail(ep, &ep->peers[i], ep->lost_err);
}

/* What can no longer complete by itself, completed in error as far as the CQs have room: the
 * sends waiting on failed peers; once sluiced is gone, the sends it held (its completions
 * for them will never come) and the receives posted. */
static void
drain_failed(struct sl_fab_ep *ep)
{
	for (uint32_t k = 0; k < ep->n_peers && ep->tx_doomed > 0; k++) {
		struct sl_fab_peer *p = &ep->peers[k];

		if (p->state != SL_FAB_PEER_FAILED)
			continue;
		while (p->wait_head >= 0 && sl_fab_cq_room(ep->tx_cq)) {
			uint32_t i = (uint32_t)p->wait_head;

			p->wait_head = ep->tx[i].next;
			ep->tx_doomed--;
			sl_fab_tx_done(ep, i, p->err, 0);
		}
		if (p->wait_head < 0)
			p->wait_tail = -1;
	}
	if (ep->lost_err == 0)
		return;
	for (uint32_t i = 0; i < ep->n_tx && ep->tx_busy > ep->tx_doomed; i++)
		if (ep->tx[i].posted && sl_fab_cq_room(ep->tx_cq))
			sl_fab_tx_done(ep, i, ep->lost_err, SL_WC_WR_FLUSH_ERR);
	while (ep->unexp_head == ep->unexp_tail && ep->rxq_head != ep->rxq_tail &&
	       sl_fab_cq_room(ep->rx_cq)) {
		struct sl_fab_rx *rx = &ep->rxq[ep->rxq_head++ & (ep->rxq_cap - 1)];
		struct sl_fab_cqe e = {
			.op_context = rx->context,
			.flags = FI_RECV | FI_MSG,
			.buf = rx->buf,
			.src = FI_ADDR_NOTAVAIL,
			.err = ep->lost_err,
			.prov_errno = SL_WC_WR_FLUSH_ERR,
		};

		sl_fab_cq_push(ep->rx_cq, &e);
	}
}

bool
sl_fab_ep_busy(const struct sl_fab_ep *ep)
{
	return ep->enabled && (ep->tx_busy > 0 || ep->rxq_head != ep->rxq_tail);
}

int
sl_fab_ep_arm(struct sl_fab_ep *ep)
{
	if (ep->scq == NULL)
		return 0;
	ep->armed = true;
	return sl_cq_arm(ep->scq);
}

void
sl_fab_progress(struct sl_fab_ep *ep)
{
	struct sl_wc wc[POLL_BURST];
	uint64_t now;
	size_t room;
	int n;

	if (!ep->enabled)
		return;
	now = sl_fab_now_ns();
	if (ep->lis.n > 0 || ep->n_connecting > 0 || ep->armed ||
	    now - ep->hs_last_ns >= ACCEPT_EVERY_NS) {
		int why = ep->lost_err == 0 ? sl_ctx_status(ep->domain->ctx) : 0;

		if (why != 0)
			ep_lost(ep, why);
		sl_fab_handshakes(ep, now);
		ep->hs_last_ns = now;
	}
	if (ep->armed) {
		uint64_t v;

		while (recv(sl_cq_event_fd(ep->scq), &v, sizeof(v), MSG_DONTWAIT) > 0)
			;
		ep->armed = false;
	}
	room = cq_free(ep->tx_cq);
	if (cq_free(ep->rx_cq) < room)
		room = cq_free(ep->rx_cq);
	if (room > POLL_BURST)
		room = POLL_BURST;
	n = room > 0 ? sl_cq_poll(ep->scq, wc, (int)room) : 0;
	for (int k = 0; k < n; k++) {
		if (wc[k].wr_id & SL_FAB_WR_RX) {
			on_recv(ep, &wc[k]);
		} else if (wc[k].wr_id < ep->n_tx && ep->tx[wc[k].wr_id].posted) {
			uint32_t i = (uint32_t)wc[k].wr_id, peer = ep->tx[i].peer;
			int err = status_err((enum sl_wc_status)wc[k].status);

			sl_fab_tx_done(ep, i, err, wc[k].status);
			if (err != 0)
				sl_fab_peer_fail(ep, &ep->peers[peer], err);
		}
	}
	/* Messages waiting for receives the application posted since. */
	while (ep->unexp_head != ep->unexp_tail && ep->rxq_head != ep->rxq_tail &&
	       cq_free(ep->rx_cq) > 0)
		deliver(ep, &ep->unexp[ep->unexp_head++ & (ep->unexp_cap - 1)]);
	if (ep->tx_doomed > 0 || ep->lost_err != 0)
		drain_failed(ep);
}
