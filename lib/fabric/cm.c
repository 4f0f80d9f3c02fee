/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cm.c - connection management of FI_EP_MSG endpoints: the passive endpoint, fi_connect,
 * fi_accept / fi_reject, fi_shutdown, and the events of the EQ they are bound to.
 *
 * A MSG connection is one sluice QP pair, made by the handshake an RDM endpoint makes on first
 * send (peer.c), in the order libfabric's connection-oriented providers (tcp, verbs) follow:
 *
 *   client (fi_endpoint, fi_enable)           server (fi_passive_ep, fi_pep_bind, fi_listen)
 *   fi_connect: its QP, connect() to the      the passive endpoint's listener accepts,
 *   listener, HELLO (name, qpn, psn, token)   reads the HELLO: FI_CONNREQ (info->handle)
 *                                             fi_endpoint(info), fi_enable, fi_accept: its
 *                                             QP, sl_qp_connect, ACCEPT ->, FI_CONNECTED
 *   reads ACCEPT, sl_qp_connect, FI_CONNECTED
 *
 * As with tcp's provider, the server reports FI_CONNECTED once its ACCEPT is sent; a frame its
 * QP sends before the client's QP is connected is recovered as any lost frame is. The TCP
 * connection stays open for the connection's life and carries nothing more: its close is the
 * peer's fi_shutdown or fi_close (or the peer process's end), which the other side reports as
 * FI_SHUTDOWN and its sends then fail with FI_ESHUTDOWN. A handshake that fails (nobody listens
 * on the port: FI_ECONNREFUSED; fi_reject: FI_ECONNREFUSED; no ACCEPT within
 * FI_SLUICE_CONNECT_MS: FI_ETIMEDOUT) is an error event on the EQ (fi_eq_readerr), never a wait
 * without end; a QP that fails after the connection is made (its sends time out) is reported as
 * FI_SHUTDOWN too, with its sends completing in error.
 *
 * Progress is manual here as everywhere in the provider: fi_eq_read and fi_eq_sread move the
 * listeners and handshakes of the objects bound to the EQ (and an endpoint's own progress,
 * fi_cq_read, moves its handshake too). Names are those of RDM endpoints: a passive endpoint's
 * is its listener's address, a MSG endpoint's its connection's local address (the client) or
 * the listener's (the server), and fi_getpeer gives the other side's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fab_priv.h"

struct sl_fab_pep {
	struct fid_pep fid;
	struct fi_info *info; /**< what it was opened with: FI_CONNREQ's info is a copy */
	struct sl_fab_eq *eq;
	struct sl_fab_addr name; /**< its listener's address (port 0 until fi_listen) */
	struct sl_fab_listener lis;
	int wait_fd;                 /**< epoll set: the listener and HELLOs being read */
	struct sl_fab_connreq *reqs; /**< reported, not answered yet */
};

/* A name into the caller's buffer, as fi_getname and fi_getpeer give it. */
static int
name_out(const struct sl_fab_addr *a, void *addr, size_t *addrlen)
{
	char buf[SL_FAB_ADDR_STRLEN];
	size_t len = sl_fab_addr_format(a, buf, sizeof(buf)) + 1;

	if (*addrlen < len) {
		*addrlen = len;
		return -FI_ETOOSMALL;
	}
	memcpy(addr, buf, len);
	*addrlen = len;
	return 0;
}

/* --- connection requests ------------------------------------------------------------------ */

void
sl_fab_connreq_free(struct sl_fab_connreq *cr)
{
	struct sl_fab_connreq **q = &cr->pep->reqs;

	while (*q != cr)
		q = &(*q)->next;
	*q = cr->next;
	if (cr->ep != NULL)
		cr->ep->connreq = NULL; /* its fi_accept finds no request: -FI_EOPBADSTATE */
	if (cr->fd >= 0)
		close(cr->fd);
	free(cr);
}

static int
connreq_close(struct fid *fid)
{
	sl_fab_connreq_free(container_of(fid, struct sl_fab_connreq, fid));
	return 0;
}

static struct fi_ops connreq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = connreq_close,
	.bind = sl_fab_no_bind,
	.control = sl_fab_no_control,
	.ops_open = sl_fab_no_ops_open,
};

/* A HELLO on the passive endpoint's listener: FI_CONNREQ, whose info names both sides and
 * carries the request as its handle. Returns 1: the request keeps the socket. */
static int
pep_hello(void *owner, int fd, const struct sl_fab_hs *m)
{
	struct sl_fab_pep *pep = owner;
	struct sl_fab_connreq *cr;
	struct fi_info *info;

	if (pep->eq == NULL)
		return 0;
	cr = calloc(1, sizeof(*cr));
	info = fi_dupinfo(pep->info);
	if (cr == NULL || info == NULL)
		goto fail;
	free(info->src_addr);
	free(info->dest_addr);
	info->src_addr = info->dest_addr = NULL;
	if (sl_fab_info_addr(&info->src_addr, &info->src_addrlen, &pep->name) != 0 ||
	    sl_fab_info_addr(&info->dest_addr, &info->dest_addrlen, &m->name) != 0)
		goto fail;
	cr->fid.fclass = FI_CLASS_CONNREQ;
	cr->fid.ops = &connreq_fi_ops;
	cr->pep = pep;
	cr->fd = fd;
	cr->hello = *m;
	info->handle = &cr->fid;
	if (sl_fab_eq_report(pep->eq, FI_CONNREQ, &pep->fid.fid, info) != 0)
		goto fail;
	cr->next = pep->reqs;
	pep->reqs = cr;
	return 1;
fail:
	SL_FAB_WARN(FI_LOG_EP_CTRL, "a connection request dropped: no memory or a full EQ\n");
	fi_freeinfo(info);
	free(cr);
	return 0;
}

/* --- passive endpoint --------------------------------------------------------------------- */

static int
pep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct sl_fab_pep *pep = container_of(fid, struct sl_fab_pep, fid.fid);

	if (pep->lis.fd < 0)
		return -FI_EOPBADSTATE; /* the port comes with fi_listen */
	return name_out(&pep->name, addr, addrlen);
}

static int
pep_listen(struct fid_pep *fid)
{
	struct sl_fab_pep *pep = container_of(fid, struct sl_fab_pep, fid);

	if (pep->lis.fd >= 0)
		return -FI_EOPBADSTATE;
	if (pep->eq == NULL)
		return -FI_ENOEQ;
	return sl_fab_listener_open(&pep->lis, &pep->name, pep->wait_fd);
}

static int
pep_reject(struct fid_pep *fid, fid_t handle, const void *param, size_t paramlen)
{
	(void)fid;
	if (handle == NULL || handle->fclass != FI_CLASS_CONNREQ || paramlen > 0 || param != NULL)
		return -FI_EINVAL;
	/* The client reads the socket's close: FI_ECONNREFUSED. */
	sl_fab_connreq_free(container_of(handle, struct sl_fab_connreq, fid));
	return 0;
}

static struct fi_ops_cm pep_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = sl_fab_no_setname,
	.getname = pep_getname,
	.getpeer = sl_fab_no_getpeer,
	.connect = sl_fab_no_connect,
	.listen = pep_listen,
	.accept = sl_fab_no_accept,
	.reject = pep_reject,
	.shutdown = sl_fab_no_shutdown,
	.join = sl_fab_no_join,
};

static int
pep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct sl_fab_pep *pep = container_of(fid, struct sl_fab_pep, fid.fid);

	if (bfid->fclass != FI_CLASS_EQ || flags != 0)
		return -FI_EINVAL;
	return sl_fab_eq_bind(&pep->eq, bfid, &pep->fid.fid, pep->wait_fd);
}

static int
pep_close(struct fid *fid)
{
	struct sl_fab_pep *pep = container_of(fid, struct sl_fab_pep, fid.fid);

	while (pep->reqs != NULL)
		sl_fab_connreq_free(pep->reqs);
	sl_fab_listener_close(&pep->lis);
	if (pep->eq != NULL)
		sl_fab_eq_detach(pep->eq, &pep->fid.fid);
	close(pep->wait_fd);
	fi_freeinfo(pep->info);
	free(pep);
	return 0;
}

static struct fi_ops pep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = pep_close,
	.bind = pep_bind,
	.control = sl_fab_no_control,
	.ops_open = sl_fab_no_ops_open,
};

static struct fi_ops_ep pep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = sl_fab_no_cancel,
	.getopt = sl_fab_no_getopt,
	.setopt = sl_fab_no_setopt,
	.tx_ctx = sl_fab_no_tx_ctx,
	.rx_ctx = sl_fab_no_rx_ctx,
	.rx_size_left = sl_fab_no_size_left,
	.tx_size_left = sl_fab_no_size_left,
};

int
sl_fab_pep_open(struct fid_fabric *fabric, struct fi_info *info, struct fid_pep **out,
		void *context)
{
	struct sl_fab_pep *pep;

	(void)fabric;
	if (info == NULL || info->ep_attr == NULL || info->ep_attr->type != FI_EP_MSG)
		return -FI_EINVAL;
	pep = calloc(1, sizeof(*pep));
	if (pep == NULL)
		return -FI_ENOMEM;
	pep->lis.fd = -1;
	pep->wait_fd = epoll_create1(EPOLL_CLOEXEC);
	pep->info = fi_dupinfo(info);
	if (pep->wait_fd < 0 || pep->info == NULL ||
	    (info->src_addr != NULL &&
	     sl_fab_addr_parse(info->src_addr, info->src_addrlen, &pep->name) != 0)) {
		if (pep->wait_fd >= 0)
			close(pep->wait_fd);
		fi_freeinfo(pep->info);
		free(pep);
		return info->src_addr != NULL ? -FI_EINVAL : -FI_ENOMEM;
	}
	pep->fid.fid.fclass = FI_CLASS_PEP;
	pep->fid.fid.context = context;
	pep->fid.fid.ops = &pep_fi_ops;
	pep->fid.ops = &pep_ops;
	pep->fid.cm = &pep_cm_ops;
	*out = &pep->fid;
	return 0;
}

/* --- a MSG endpoint's connection ---------------------------------------------------------- */

static struct sl_fab_ep *
ep_of(struct fid_ep *fid)
{
	return container_of(fid, struct sl_fab_ep, fid);
}

static int
ep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct sl_fab_ep *ep = container_of(fid, struct sl_fab_ep, fid.fid);

	if (!ep->enabled)
		return -FI_EOPBADSTATE; /* an RDM listener's port comes with fi_enable */
	return name_out(&ep->name, addr, addrlen);
}

static int
ep_getpeer(struct fid_ep *fid, void *addr, size_t *addrlen)
{
	struct sl_fab_ep *ep = ep_of(fid);

	if (ep->type != FI_EP_MSG)
		return -FI_ENOSYS;
	if (ep->n_peers == 0 || ep->peers[0].state == SL_FAB_PEER_IDLE)
		return -FI_ENOTCONN;
	return name_out(&ep->peers[0].addr, addr, addrlen);
}

static int
ep_connect(struct fid_ep *fid, const void *addr, const void *param, size_t paramlen)
{
	struct sl_fab_ep *ep = ep_of(fid);
	struct sl_fab_addr a;
	struct sl_fab_peer *p;

	if (ep->type != FI_EP_MSG)
		return -FI_ENOSYS;
	if (param != NULL || paramlen > 0)
		return -FI_EINVAL; /* no private data */
	if (!ep->enabled || ep->connreq != NULL)
		return -FI_EOPBADSTATE;
	if (addr == NULL || sl_fab_addr_parse(addr, SL_FAB_ADDR_STRLEN, &a) != 0)
		return -FI_EINVAL;
	if (ep->n_peers > 0 && ep->peers[0].state != SL_FAB_PEER_IDLE)
		return -FI_EISCONN;
	ep->n_peers = 0; /* a connect that failed at once left its peer IDLE: forget it */
	p = sl_fab_peer_get(ep, &a);
	if (p == NULL)
		return -FI_ENOMEM;
	return sl_fab_peer_connect(ep, p);
}

static int
ep_accept(struct fid_ep *fid, const void *param, size_t paramlen)
{
	struct sl_fab_ep *ep = ep_of(fid);
	struct sl_fab_connreq *cr = ep->connreq;
	struct epoll_event ev = {.events = EPOLLIN};
	struct sl_fab_peer *p;
	int ret;

	if (ep->type != FI_EP_MSG)
		return -FI_ENOSYS;
	if (param != NULL || paramlen > 0)
		return -FI_EINVAL;
	if (cr == NULL || !ep->enabled || ep->n_peers > 0)
		return -FI_EOPBADSTATE; /* made from a FI_CONNREQ's info, enabled, once */
	p = sl_fab_peer_get(ep, &cr->hello.name);
	if (p == NULL)
		return -FI_ENOMEM;
	ret = sl_fab_peer_setup(ep, p);
	if (ret == 0)
		ret = sl_fab_peer_answer(ep, p, cr->fd, &cr->hello);
	ev.data.fd = cr->fd;
	if (ret == 0 && epoll_ctl(ep->wait_fd, EPOLL_CTL_ADD, cr->fd, &ev) != 0)
		ret = sl_fab_errno(-errno);
	ep->connreq = NULL;
	if (ret != 0) {
		/* The request is answered with its socket's close; the peer's QP stays until the
		 * endpoint is closed, and the endpoint cannot be used again. */
		p->state = SL_FAB_PEER_FAILED;
		p->err = -ret;
		sl_fab_connreq_free(cr);
		return ret;
	}
	ep->conn_fd = cr->fd;
	cr->fd = -1;
	sl_fab_connreq_free(cr);
	p->state = SL_FAB_PEER_READY;
	return sl_fab_eq_report(ep->eq, FI_CONNECTED, &ep->fid.fid, NULL);
}

static void
conn_close(struct sl_fab_ep *ep)
{
	if (ep->conn_fd < 0)
		return;
	epoll_ctl(ep->wait_fd, EPOLL_CTL_DEL, ep->conn_fd, NULL);
	close(ep->conn_fd);
	ep->conn_fd = -1;
}

static int
ep_shutdown(struct fid_ep *fid, uint64_t flags)
{
	struct sl_fab_ep *ep = ep_of(fid);

	if (ep->type != FI_EP_MSG)
		return -FI_ENOSYS;
	if (flags != 0)
		return -FI_EINVAL;
	if (ep->n_peers == 0 || ep->peers[0].state == SL_FAB_PEER_IDLE)
		return -FI_ENOTCONN;
	conn_close(ep); /* the peer reads the close: FI_SHUTDOWN */
	ep->peers[0].state = SL_FAB_PEER_FAILED;
	ep->peers[0].err = FI_ESHUTDOWN;
	return 0;
}

struct fi_ops_cm sl_fab_ep_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = sl_fab_no_setname,
	.getname = ep_getname,
	.getpeer = ep_getpeer,
	.connect = ep_connect,
	.listen = sl_fab_no_listen,
	.accept = ep_accept,
	.reject = sl_fab_no_reject,
	.shutdown = ep_shutdown,
	.join = sl_fab_no_join,
};

void
sl_fab_msg_connected(struct sl_fab_ep *ep, int fd)
{
	ep->conn_fd = fd;
	if (sl_fab_eq_report(ep->eq, FI_CONNECTED, &ep->fid.fid, NULL) != 0)
		SL_FAB_WARN(FI_LOG_EP_CTRL, "FI_CONNECTED lost: the EQ is full\n");
}

void
sl_fab_msg_lost(struct sl_fab_ep *ep, enum sl_fab_peer_state was, int err)
{
	int ret;

	conn_close(ep);
	if (was == SL_FAB_PEER_READY)
		ret = sl_fab_eq_report(ep->eq, FI_SHUTDOWN, &ep->fid.fid, NULL);
	else
		ret = sl_fab_eq_report_err(ep->eq, &ep->fid.fid, err);
	if (ret != 0)
		SL_FAB_WARN(FI_LOG_EP_CTRL, "a connection's end not reported: the EQ is full\n");
}

void
sl_fab_msg_watch(struct sl_fab_ep *ep)
{
	char b[64];
	ssize_t n = recv(ep->conn_fd, b, sizeof(b), MSG_DONTWAIT);

	/* The peer sends nothing after its ACCEPT or HELLO: bytes are ignored, a close ends the
	 * connection. */
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
		sl_fab_peer_fail(ep, &ep->peers[0], FI_ESHUTDOWN);
}

void
sl_fab_cm_progress(struct fid *fid)
{
	if (fid->fclass == FI_CLASS_PEP) {
		struct sl_fab_pep *pep = container_of(fid, struct sl_fab_pep, fid.fid);

		if (pep->lis.fd >= 0)
			sl_fab_listener_step(&pep->lis, sl_fab_now_ns(), pep_hello, pep);
	} else if (fid->fclass == FI_CLASS_EP) {
		sl_fab_progress(container_of(fid, struct sl_fab_ep, fid.fid));
	}
}
