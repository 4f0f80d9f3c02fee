/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * unsupported.c - the answers to operations the provider does not offer. libfabric's inline
 * calls (fi_write, fi_tsend, ...) jump through an object's tables without checking them, so
 * every table an application can reach is filled: an operation sluice does not do (tagged
 * messages, binding what cannot be bound, a connection call on an object of the other
 * kind: fi_connect on a passive endpoint, fi_listen on an endpoint) returns -FI_ENOSYS (options:
 * -FI_ENOPROTOOPT), and fi_getinfo never offered it (info.c). Nothing here pretends to work.
 */
#include "fab_priv.h"

int
sl_fab_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	(void)fid, (void)bfid, (void)flags;
	return -FI_ENOSYS;
}

int
sl_fab_no_control(struct fid *fid, int command, void *arg)
{
	(void)fid, (void)command, (void)arg;
	return -FI_ENOSYS;
}

int
sl_fab_no_ops_open(struct fid *fid, const char *name, uint64_t flags, void **ops, void *context)
{
	(void)fid, (void)name, (void)flags, (void)ops, (void)context;
	return -FI_ENOSYS;
}

static ssize_t
no_t_recv(struct fid_ep *ep, void *buf, size_t len, void *desc, fi_addr_t addr, uint64_t tag,
	  uint64_t ignore, void *context)
{
	(void)ep, (void)buf, (void)len, (void)desc, (void)addr, (void)tag, (void)ignore;
	(void)context;
	return -FI_ENOSYS;
}

static ssize_t
no_t_recvv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t addr,
	   uint64_t tag, uint64_t ignore, void *context)
{
	(void)ep, (void)iov, (void)desc, (void)count, (void)addr, (void)tag, (void)ignore;
	(void)context;
	return -FI_ENOSYS;
}

static ssize_t
no_t_msg(struct fid_ep *ep, const struct fi_msg_tagged *msg, uint64_t flags)
{
	(void)ep, (void)msg, (void)flags;
	return -FI_ENOSYS;
}

static ssize_t
no_t_send(struct fid_ep *ep, const void *buf, size_t len, void *desc, fi_addr_t addr, uint64_t tag,
	  void *context)
{
	return no_t_recv(ep, (void *)buf, len, desc, addr, tag, 0, context);
}

static ssize_t
no_t_sendv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t addr,
	   uint64_t tag, void *context)
{
	return no_t_recvv(ep, iov, desc, count, addr, tag, 0, context);
}

static ssize_t
no_t_inject(struct fid_ep *ep, const void *buf, size_t len, fi_addr_t addr, uint64_t tag)
{
	return no_t_recv(ep, (void *)buf, len, NULL, addr, tag, 0, NULL);
}

static ssize_t
no_t_senddata(struct fid_ep *ep, const void *buf, size_t len, void *desc, uint64_t data,
	      fi_addr_t addr, uint64_t tag, void *context)
{
	(void)data;
	return no_t_recv(ep, (void *)buf, len, desc, addr, tag, 0, context);
}

static ssize_t
no_t_injectdata(struct fid_ep *ep, const void *buf, size_t len, uint64_t data, fi_addr_t addr,
		uint64_t tag)
{
	(void)data;
	return no_t_recv(ep, (void *)buf, len, NULL, addr, tag, 0, NULL);
}

struct fi_ops_tagged sl_fab_no_tagged = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = no_t_recv,
	.recvv = no_t_recvv,
	.recvmsg = no_t_msg,
	.send = no_t_send,
	.sendv = no_t_sendv,
	.sendmsg = no_t_msg,
	.inject = no_t_inject,
	.senddata = no_t_senddata,
	.injectdata = no_t_injectdata,
};

/* --- endpoint operations no sluice endpoint has, and a passive endpoint's ------------------- */

ssize_t
sl_fab_no_cancel(fid_t fid, void *context)
{
	(void)fid, (void)context;
	return -FI_ENOSYS;
}

int
sl_fab_no_getopt(fid_t fid, int level, int optname, void *optval, size_t *optlen)
{
	(void)fid, (void)level, (void)optname, (void)optval, (void)optlen;
	return -FI_ENOPROTOOPT;
}

int
sl_fab_no_setopt(fid_t fid, int level, int optname, const void *optval, size_t optlen)
{
	(void)fid, (void)level, (void)optname, (void)optval, (void)optlen;
	return -FI_ENOPROTOOPT;
}

int
sl_fab_no_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr, struct fid_ep **tx,
		 void *context)
{
	(void)sep, (void)index, (void)attr, (void)tx, (void)context;
	return -FI_ENOSYS;
}

int
sl_fab_no_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr, struct fid_ep **rx,
		 void *context)
{
	(void)sep, (void)index, (void)attr, (void)rx, (void)context;
	return -FI_ENOSYS;
}

ssize_t
sl_fab_no_size_left(struct fid_ep *ep)
{
	(void)ep;
	return -FI_ENOSYS;
}

/* --- connection management: what an endpoint of the other kind does -------------------------- */

int
sl_fab_no_setname(fid_t fid, void *addr, size_t addrlen)
{
	(void)fid, (void)addr, (void)addrlen;
	return -FI_ENOSYS;
}

int
sl_fab_no_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen)
{
	(void)ep, (void)addr, (void)addrlen;
	return -FI_ENOSYS;
}

int
sl_fab_no_connect(struct fid_ep *ep, const void *addr, const void *param, size_t paramlen)
{
	(void)ep, (void)addr, (void)param, (void)paramlen;
	return -FI_ENOSYS;
}

int
sl_fab_no_listen(struct fid_pep *pep)
{
	(void)pep;
	return -FI_ENOSYS;
}

int
sl_fab_no_accept(struct fid_ep *ep, const void *param, size_t paramlen)
{
	(void)ep, (void)param, (void)paramlen;
	return -FI_ENOSYS;
}

int
sl_fab_no_reject(struct fid_pep *pep, fid_t handle, const void *param, size_t paramlen)
{
	(void)pep, (void)handle, (void)param, (void)paramlen;
	return -FI_ENOSYS;
}

int
sl_fab_no_shutdown(struct fid_ep *ep, uint64_t flags)
{
	(void)ep, (void)flags;
	return -FI_ENOSYS;
}

int
sl_fab_no_join(struct fid_ep *ep, const void *addr, uint64_t flags, struct fid_mc **mc,
	       void *context)
{
	(void)ep, (void)addr, (void)flags, (void)mc, (void)context;
	return -FI_ENOSYS;
}
