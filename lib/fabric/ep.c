/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ep.c - the endpoint, RDM or MSG: its libfabric face (bind, enable, the message calls) over
 * the state fab_priv.h describes. The data path itself is progress.c's; connections peer.c's,
 * and a MSG endpoint's connection management (connect, accept, getname) cm.c's. Both types
 * share everything here: a MSG endpoint is one with a single peer, its connection's, whom
 * every send goes to, and no listener of its own.
 *
 * fi_enable makes what the endpoint needs whatever its peers: one libsluice CQ for all its
 * QPs (its depth covers every send slot and every peer's receive slots, so it never
 * overflows), the send bounce buffers (FI_SLUICE_TX_SLOTS of FI_SLUICE_MAX_MSG bytes, one
 * registered region), and the connection listener (peer.c).
 *
 * A send copies the application's bytes into a free send slot (so the buffer is the
 * application's again on return, and fi_inject costs what fi_send does) and posts it on the
 * peer's QP, or queues it behind the peer's handshake; RMA (rma.c) takes the same path, a
 * WRITE's bytes copied into the slot, a READ's landing there (sl_fab_tx_submit). A receive is
 * matched, oldest first, with the oldest message waiting in a bounce buffer, or queued until one
 * arrives. With no free slot or a full queue the call progresses once and then answers -FI_EAGAIN,
 * libfabric's "try again after reading the CQ".
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "fab_priv.h"

#define SCQ_DEPTH 4096u /**< the libsluice CQ's entries: sends plus every peer's receives */

/* --- receives ----------------------------------------------------------------------------- */

static ssize_t
ep_recv_one(struct sl_fab_ep *ep, void *buf, size_t len, void *context, uint64_t flags)
{
	struct sl_fab_rx *rx;

	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if (ep->rxq_tail - ep->rxq_head == ep->rxq_cap) {
		sl_fab_progress(ep);
		if (ep->rxq_tail - ep->rxq_head == ep->rxq_cap)
			return -FI_EAGAIN;
	}
	rx = &ep->rxq[ep->rxq_tail++ & (ep->rxq_cap - 1)];
	rx->buf = buf;
	rx->len = len;
	rx->context = context;
	rx->completion = !(ep->rx_flags & FI_SELECTIVE_COMPLETION) || (flags & FI_COMPLETION);
	/* A message may be waiting for it already. */
	sl_fab_progress(ep);
	return 0;
}

static ssize_t
ep_recv(struct fid_ep *fid, void *buf, size_t len, void *desc, fi_addr_t src, void *context)
{
	struct sl_fab_ep *ep = sl_fab_ep_of(fid);

	(void)desc, (void)src; /* no FI_DIRECTED_RECV: any peer's message matches */
	return ep_recv_one(ep, buf, len, context, ep->rx_op_flags);
}

static ssize_t
ep_recvv(struct fid_ep *fid, const struct iovec *iov, void **desc, size_t count, fi_addr_t src,
	 void *context)
{
	struct sl_fab_ep *ep = sl_fab_ep_of(fid);

	(void)desc, (void)src;
	if (count > 1)
		return -FI_EINVAL; /* iov_limit 1 */
	return ep_recv_one(ep, count ? iov[0].iov_base : NULL, count ? iov[0].iov_len : 0, context,
			   ep->rx_op_flags);
}

static ssize_t
ep_recvmsg(struct fid_ep *fid, const struct fi_msg *msg, uint64_t flags)
{
	struct sl_fab_ep *ep = sl_fab_ep_of(fid);

	if (msg->iov_count > 1)
		return -FI_EINVAL;
	return ep_recv_one(ep, msg->iov_count ? msg->msg_iov[0].iov_base : NULL,
			   msg->iov_count ? msg->msg_iov[0].iov_len : 0, msg->context, flags);
}

/* --- sends -------------------------------------------------------------------------------- */

static int32_t
tx_take(struct sl_fab_ep *ep)
{
	int32_t i = ep->tx_free;

	if (i < 0) {
		sl_fab_progress(ep);
		i = ep->tx_free;
		if (i < 0)
			return -1;
	}
	ep->tx_free = ep->tx[i].next;
	ep->tx_busy++;
	ep->tx[i].next = -1;
	return i;
}

ssize_t
sl_fab_tx_submit(struct sl_fab_ep *ep, const struct sl_fab_op_req *r)
{
	const struct sl_fab_addr *a;
	struct sl_fab_peer *p;
	struct sl_fab_tx *t;
	int32_t i;
	int ret;

	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if (r->len > sl_fab_params.max_msg_bytes)
		return -FI_EMSGSIZE;
	if ((r->flags & FI_INJECT) && r->len > SL_FAB_INJECT_BYTES)
		return -FI_EMSGSIZE;
	if ((r->flags & FI_REMOTE_CQ_DATA) && r->data > UINT32_MAX)
		return -FI_EINVAL; /* 4 bytes of CQ data */
	if (r->op != SL_FAB_OP_SEND && r->key > UINT32_MAX)
		return -FI_EINVAL; /* no key of ours has more than 32 bits */
	if (ep->type == FI_EP_MSG) {
		/* The connection's one peer; dest means nothing. */
		if (ep->n_peers == 0 || ep->peers[0].state == SL_FAB_PEER_IDLE)
			return -FI_ENOTCONN;
		p = &ep->peers[0];
	} else {
		a = sl_fab_av_addr(ep->av, r->dest);
		if (a == NULL)
			return -FI_EINVAL;
		p = sl_fab_peer_get(ep, a);
		if (p == NULL)
			return -FI_ENOSPC;
	}
	if (p->state == SL_FAB_PEER_FAILED)
		return -p->err;
	i = tx_take(ep);
	if (i < 0)
		return -FI_EAGAIN;
	t = &ep->tx[i];
	if (r->op != SL_FAB_OP_READ && r->len > 0)
		memcpy((char *)ep->tx_mem + (size_t)i * sl_fab_params.max_msg_bytes, r->buf,
		       r->len);
	t->context = r->context;
	t->op = r->op;
	t->rbuf = r->op == SL_FAB_OP_READ ? r->buf : NULL;
	t->raddr = r->raddr;
	t->rkey = (uint32_t)r->key;
	t->len = (uint32_t)r->len;
	t->data = (uint32_t)r->data;
	t->has_data = (r->flags & FI_REMOTE_CQ_DATA) != 0;
	t->peer = (uint32_t)(p - ep->peers);
	t->completion = !(r->flags & FI_INJECT) &&
			(!(ep->tx_flags & FI_SELECTIVE_COMPLETION) || (r->flags & FI_COMPLETION));
	if (p->state == SL_FAB_PEER_IDLE) {
		ret = sl_fab_peer_connect(ep, p);
		if (ret != 0) {
			/* The operation is refused here, not completed: its slot goes back, and
			 * the peer stays IDLE for a later one to try again. */
			t->next = ep->tx_free;
			ep->tx_free = i;
			ep->tx_busy--;
			return ret;
		}
	}
	if (p->wait_tail >= 0)
		ep->tx[p->wait_tail].next = i;
	else
		p->wait_head = i;
	p->wait_tail = i;
	if (p->state == SL_FAB_PEER_READY)
		sl_fab_tx_flush(ep, p);
	return 0;
}

/* A message of len bytes from buf. */
static ssize_t
ep_send_one(struct sl_fab_ep *ep, const void *buf, size_t len, fi_addr_t dest, void *context,
	    uint64_t data, uint64_t flags)
{
	struct sl_fab_op_req r = {.op = SL_FAB_OP_SEND,
				  .buf = (void *)buf,
				  .len = len,
				  .dest = dest,
				  .context = context,
				  .data = data,
				  .flags = flags};

	return sl_fab_tx_submit(ep, &r);
}

static ssize_t
ep_send(struct fid_ep *fid, const void *buf, size_t len, void *desc, fi_addr_t dest, void *context)
{
	struct sl_fab_ep *ep = sl_fab_ep_of(fid);

	(void)desc;
	return ep_send_one(ep, buf, len, dest, context, 0, ep->tx_op_flags);
}

static ssize_t
ep_sendv(struct fid_ep *fid, const struct iovec *iov, void **desc, size_t count, fi_addr_t dest,
	 void *context)
{
	struct sl_fab_ep *ep = sl_fab_ep_of(fid);

	(void)desc;
	if (count > 1)
		return -FI_EINVAL;
	return ep_send_one(ep, count ? iov[0].iov_base : NULL, count ? iov[0].iov_len : 0, dest,
			   context, 0, ep->tx_op_flags);
}

static ssize_t
ep_sendmsg(struct fid_ep *fid, const struct fi_msg *msg, uint64_t flags)
{
	struct sl_fab_ep *ep = sl_fab_ep_of(fid);

	if (msg->iov_count > 1)
		return -FI_EINVAL;
	return ep_send_one(ep, msg->iov_count ? msg->msg_iov[0].iov_base : NULL,
			   msg->iov_count ? msg->msg_iov[0].iov_len : 0, msg->addr, msg->context,
			   msg->data, flags);
}

static ssize_t
ep_inject(struct fid_ep *fid, const void *buf, size_t len, fi_addr_t dest)
{
	struct sl_fab_ep *ep = sl_fab_ep_of(fid);

	return ep_send_one(ep, buf, len, dest, NULL, 0, FI_INJECT);
}

static ssize_t
ep_senddata(struct fid_ep *fid, const void *buf, size_t len, void *desc, uint64_t data,
	    fi_addr_t dest, void *context)
{
	struct sl_fab_ep *ep = sl_fab_ep_of(fid);

	(void)desc;
	return ep_send_one(ep, buf, len, dest, context, data, ep->tx_op_flags | FI_REMOTE_CQ_DATA);
}

static ssize_t
ep_injectdata(struct fid_ep *fid, const void *buf, size_t len, uint64_t data, fi_addr_t dest)
{
	struct sl_fab_ep *ep = sl_fab_ep_of(fid);

	return ep_send_one(ep, buf, len, dest, NULL, data, FI_INJECT | FI_REMOTE_CQ_DATA);
}

static struct fi_ops_msg ep_msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = ep_recv,
	.recvv = ep_recvv,
	.recvmsg = ep_recvmsg,
	.send = ep_send,
	.sendv = ep_sendv,
	.sendmsg = ep_sendmsg,
	.inject = ep_inject,
	.senddata = ep_senddata,
	.injectdata = ep_injectdata,
};

/* --- endpoint options and sizes ----------------------------------------------------------- */

static ssize_t
ep_rx_size_left(struct fid_ep *fid)
{
	struct sl_fab_ep *ep = sl_fab_ep_of(fid);

	return (ssize_t)(ep->rxq_cap - (ep->rxq_tail - ep->rxq_head));
}

static ssize_t
ep_tx_size_left(struct fid_ep *fid)
{
	struct sl_fab_ep *ep = sl_fab_ep_of(fid);
	ssize_t n = 0;

	for (int32_t i = ep->tx_free; i >= 0; i = ep->tx[i].next)
		n++;
	return n;
}

static struct fi_ops_ep ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = sl_fab_no_cancel,
	.getopt = sl_fab_no_getopt,
	.setopt = sl_fab_no_setopt,
	.tx_ctx = sl_fab_no_tx_ctx,
	.rx_ctx = sl_fab_no_rx_ctx,
	.rx_size_left = ep_rx_size_left,
	.tx_size_left = ep_tx_size_left,
};

/* --- lifetime ----------------------------------------------------------------------------- */

static int
ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct sl_fab_ep *ep = container_of(fid, struct sl_fab_ep, fid.fid);
	struct sl_fab_cq *cq;
	int ret;

	if (ep->enabled)
		return -FI_EOPBADSTATE;
	switch (bfid->fclass) {
	case FI_CLASS_AV:
		if (ep->av != NULL)
			return -FI_EINVAL;
		ep->av = container_of(bfid, struct sl_fab_av, fid.fid);
		ep->av->refs++;
		return 0;
	case FI_CLASS_CQ:
		cq = container_of(bfid, struct sl_fab_cq, fid.fid);
		if (flags & ~(uint64_t)(FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION))
			return -FI_EINVAL;
		if (((flags & FI_TRANSMIT) && ep->tx_cq != NULL) ||
		    ((flags & FI_RECV) && ep->rx_cq != NULL))
			return -FI_EINVAL;
		ret = sl_fab_cq_attach(cq, ep);
		if (ret != 0)
			return ret;
		if (flags & FI_TRANSMIT) {
			ep->tx_cq = cq;
			ep->tx_flags = flags & FI_SELECTIVE_COMPLETION;
		}
		if (flags & FI_RECV) {
			ep->rx_cq = cq;
			ep->rx_flags = flags & FI_SELECTIVE_COMPLETION;
		}
		return 0;
	case FI_CLASS_EQ:
		if (ep->type != FI_EP_MSG)
			return 0; /* an RDM endpoint raises no events */
		return sl_fab_eq_bind(&ep->eq, bfid, &ep->fid.fid, ep->wait_fd);
	default:
		return -FI_ENOSYS; /* counters, STX / SRX contexts */
	}
}

/* Give back what fi_enable made (what of it was made). */
static void
ep_release(struct sl_fab_ep *ep)
{
	struct sl_ctx *ctx = ep->domain->ctx;

	if (ep->peers != NULL)
		sl_fab_peers_close(ep);
	sl_fab_listener_close(&ep->lis);
	if (ep->tx_mr != NULL)
		sl_mr_dereg(ep->tx_mr);
	sl_mem_free(ctx, ep->tx_mem);
	if (ep->scq != NULL)
		sl_cq_destroy(ep->scq);
	free(ep->tx);
	free(ep->peers);
	free(ep->unexp);
	ep->tx_mr = NULL;
	ep->tx_mem = NULL;
	ep->scq = NULL;
	ep->tx = NULL;
	ep->peers = NULL;
	ep->unexp = NULL;
}

static int
ep_make(struct sl_fab_ep *ep)
{
	const size_t slot = sl_fab_params.max_msg_bytes;
	struct sl_ctx *ctx = ep->domain->ctx;
	struct epoll_event ev = {.events = EPOLLIN};

	ep->scq = sl_cq_create(ctx, SCQ_DEPTH);
	if (ep->scq == NULL)
		return sl_fab_errno(-errno);
	if (epoll_ctl(ep->wait_fd, EPOLL_CTL_ADD, sl_cq_event_fd(ep->scq), &ev) != 0)
		return sl_fab_errno(-errno);
	/* No events asked: only sluiced's hang-up wakes a waiter (progress.c). */
	ev.events = 0;
	if (epoll_ctl(ep->wait_fd, EPOLL_CTL_ADD, sl_ctx_fd(ctx), &ev) != 0)
		return sl_fab_errno(-errno);
	ep->n_tx = (uint32_t)sl_fab_params.tx_slots;
	/* A MSG endpoint has its connection's one peer. */
	ep->peers_cap = ep->type == FI_EP_MSG
				? 1
				: (SCQ_DEPTH - ep->n_tx) / (uint32_t)sl_fab_params.rx_slots;
	ep->tx = calloc(ep->n_tx, sizeof(*ep->tx));
	ep->peers = calloc(ep->peers_cap, sizeof(*ep->peers));
	if (ep->tx == NULL || ep->peers == NULL)
		return -FI_ENOMEM;
	ep->tx_mem = sl_mem_alloc(ctx, ep->n_tx * slot);
	if (ep->tx_mem == NULL) {
		SL_FAB_WARN(FI_LOG_EP_CTRL,
			    "no room for %u send buffers of %zu bytes in the domain's %zu MiB "
			    "(FI_SLUICE_MEM_MB)\n",
			    ep->n_tx, slot, sl_fab_params.mem_mb);
		return -FI_ENOMEM;
	}
	ep->tx_mr = sl_mr_reg(ctx, ep->tx_mem, ep->n_tx * slot, SL_ACCESS_LOCAL_WRITE);
	if (ep->tx_mr == NULL)
		return sl_fab_errno(-errno);
	ep->unexp_cap = 1;
	while (ep->unexp_cap < ep->peers_cap * sl_fab_params.rx_slots)
		ep->unexp_cap *= 2;
	ep->unexp = calloc(ep->unexp_cap, sizeof(*ep->unexp));
	if (ep->unexp == NULL)
		return -FI_ENOMEM;
	for (uint32_t i = 0; i < ep->n_tx; i++)
		ep->tx[i].next = i + 1 < ep->n_tx ? (int32_t)i + 1 : -1;
	ep->tx_free = 0;
	return ep->type == FI_EP_MSG ? 0 : sl_fab_listener_open(&ep->lis, &ep->name, ep->wait_fd);
}

static int
ep_enable(struct sl_fab_ep *ep)
{
	int ret;

	if (ep->enabled)
		return 0;
	if (ep->tx_cq == NULL || ep->rx_cq == NULL)
		return -FI_ENOCQ; /* both CQs */
	if (ep->type == FI_EP_RDM && ep->av == NULL)
		return -FI_ENOAV;
	if (ep->type == FI_EP_MSG && ep->eq == NULL)
		return -FI_ENOEQ; /* its connection's events go there */
	ret = ep_make(ep);
	if (ret != 0) {
		ep_release(ep);
		return ret;
	}
	ep->enabled = true;
	return 0;
}

static int
ep_control(struct fid *fid, int command, void *arg)
{
	struct sl_fab_ep *ep = container_of(fid, struct sl_fab_ep, fid.fid);

	(void)arg;
	switch (command) {
	case FI_ENABLE:
		return ep_enable(ep);
	default:
		return -FI_ENOSYS;
	}
}

static int
ep_close(struct fid *fid)
{
	struct sl_fab_ep *ep = container_of(fid, struct sl_fab_ep, fid.fid);

	ep_release(ep);
	if (ep->tx_cq != NULL)
		sl_fab_cq_detach(ep->tx_cq, ep);
	if (ep->rx_cq != NULL && ep->rx_cq != ep->tx_cq)
		sl_fab_cq_detach(ep->rx_cq, ep);
	if (ep->av != NULL)
		ep->av->refs--;
	if (ep->eq != NULL)
		sl_fab_eq_detach(ep->eq, &ep->fid.fid);
	if (ep->connreq != NULL)
		ep->connreq->ep = NULL;
	if (ep->conn_fd >= 0)
		close(ep->conn_fd);
	close(ep->wait_fd);
	ep->domain->refs--;
	free(ep->rxq);
	free(ep);
	return 0;
}

static struct fi_ops ep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = ep_close,
	.bind = ep_bind,
	.control = ep_control,
	.ops_open = sl_fab_no_ops_open,
};

int
sl_fab_ep_open(struct fid_domain *domain, struct fi_info *info, struct fid_ep **out, void *context)
{
	struct sl_fab_domain *d = container_of(domain, struct sl_fab_domain, fid);
	struct sl_fab_ep *ep;

	if (info == NULL || info->ep_attr == NULL ||
	    (info->ep_attr->type != FI_EP_RDM && info->ep_attr->type != FI_EP_MSG))
		return -FI_EINVAL;
	if (info->handle != NULL &&
	    (info->ep_attr->type != FI_EP_MSG || info->handle->fclass != FI_CLASS_CONNREQ))
		return -FI_EINVAL;
	if (info->handle != NULL &&
	    container_of(info->handle, struct sl_fab_connreq, fid)->ep != NULL)
		return -FI_EBUSY; /* another endpoint answers that request */
	ep = calloc(1, sizeof(*ep));
	if (ep == NULL)
		return -FI_ENOMEM;
	ep->lis.fd = -1;
	ep->conn_fd = -1;
	ep->wait_fd = epoll_create1(EPOLL_CLOEXEC);
	ep->rxq_cap = SL_FAB_RXQ_DEPTH;
	ep->rxq = calloc(ep->rxq_cap, sizeof(*ep->rxq));
	if (ep->wait_fd < 0 || ep->rxq == NULL) {
		if (ep->wait_fd >= 0)
			close(ep->wait_fd);
		free(ep->rxq);
		free(ep);
		return -FI_ENOMEM;
	}
	if (info->src_addr != NULL &&
	    sl_fab_addr_parse(info->src_addr, info->src_addrlen, &ep->name) != 0) {
		close(ep->wait_fd);
		free(ep->rxq);
		free(ep);
		return -FI_EINVAL;
	}
	ep->domain = d;
	ep->type = info->ep_attr->type;
	if (info->handle != NULL) {
		/* The endpoint that answers the request; the request tells it when it goes. */
		ep->connreq = container_of(info->handle, struct sl_fab_connreq, fid);
		ep->connreq->ep = ep;
	}
	ep->source = ep->type == FI_EP_RDM && (info->caps & FI_SOURCE) != 0;
	ep->tx_op_flags = info->tx_attr != NULL ? info->tx_attr->op_flags : 0;
	ep->rx_op_flags = info->rx_attr != NULL ? info->rx_attr->op_flags : 0;
	ep->fid.fid.fclass = FI_CLASS_EP;
	ep->fid.fid.context = context;
	ep->fid.fid.ops = &ep_fi_ops;
	ep->fid.ops = &ep_ops;
	ep->fid.cm = &sl_fab_ep_cm_ops;
	ep->fid.msg = &ep_msg_ops;
	ep->fid.rma = &sl_fab_ep_rma_ops;
	ep->fid.tagged = &sl_fab_no_tagged;
	d->refs++;
	*out = &ep->fid;
	return 0;
}
