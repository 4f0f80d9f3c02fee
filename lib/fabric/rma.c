/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma.c - FI_RMA on an endpoint: fi_write, fi_writev, fi_writemsg, fi_inject_write,
 * fi_writedata, fi_inject_writedata, fi_read, fi_readv, fi_readmsg, over libsluice's WRITE,
 * WRITE with immediate and READ.
 *
 * The target's side is its memory registration (domain.c): its pages adopted into its
 * domain's shared memory file and registered with libsluice, the MR's key libsluice's rkey
 * (FI_MR_PROV_KEY), and the remote address the target's own virtual address
 * (FI_MR_VIRT_ADDR), which is what libsluice's WRITE and READ name. The initiator's side
 * is a send slot (ep.c's path, sl_fab_tx_submit): a write's bytes are copied into it when the
 * call is made (so the buffer is the application's again on return, the local descriptor is
 * not needed: no FI_MR_LOCAL, and fi_inject_write costs what fi_write does), and a read's
 * bytes land in it and are copied into the application's buffer when the read completes
 * (progress.c). An operation is at most FI_SLUICE_MAX_MSG bytes (a slot), one iov, one RMA
 * iov; it goes to the peer's QP, made on first use as a send's is (RDM), or to the
 * connection's (MSG), and is ordered with the sends to that peer.
 *
 * Errors: a key that is not a live region of the target's, a range outside it or an access it
 * does not grant completes with FI_EACCES (libsluice's remote access error, no byte written
 * at the target), and, as with verbs, the QP to that peer is then in error: the peer's later
 * operations fail with it.
 */
#include "fab_priv.h"

/* One operation with one local buffer and one remote range. */
static ssize_t
rma_one(struct fid_ep *fid, enum sl_fab_op op, const void *buf, size_t len, fi_addr_t dest,
	uint64_t raddr, uint64_t key, void *context, uint64_t data, uint64_t flags)
{
	struct sl_fab_op_req r = {.op = op,
				  .buf = (void *)buf,
				  .len = len,
				  .dest = dest,
				  .context = context,
				  .data = data,
				  .flags = flags,
				  .raddr = raddr,
				  .key = key};

	return sl_fab_tx_submit(sl_fab_ep_of(fid), &r);
}

/* An fi_msg_rma's one buffer and one remote range; -FI_EINVAL past one of either. */
static ssize_t
rma_msg(struct fid_ep *fid, enum sl_fab_op op, const struct fi_msg_rma *msg, uint64_t flags)
{
	if (msg->iov_count > 1 || msg->rma_iov_count != 1 ||
	    (msg->iov_count == 1 && msg->msg_iov[0].iov_len != msg->rma_iov[0].len))
		return -FI_EINVAL;
	return rma_one(fid, op, msg->iov_count ? msg->msg_iov[0].iov_base : NULL,
		       msg->rma_iov[0].len, msg->addr, msg->rma_iov[0].addr, msg->rma_iov[0].key,
		       msg->context, msg->data, flags);
}

static ssize_t
rma_v(struct fid_ep *fid, enum sl_fab_op op, const struct iovec *iov, size_t count, fi_addr_t dest,
      uint64_t raddr, uint64_t key, void *context)
{
	if (count > 1)
		return -FI_EINVAL; /* iov_limit 1 */
	return rma_one(fid, op, count ? iov[0].iov_base : NULL, count ? iov[0].iov_len : 0, dest,
		       raddr, key, context, 0, sl_fab_ep_of(fid)->tx_op_flags);
}

static ssize_t
rma_read(struct fid_ep *fid, void *buf, size_t len, void *desc, fi_addr_t src, uint64_t raddr,
	 uint64_t key, void *context)
{
	(void)desc; /* the bytes land in a registered bounce buffer first */
	return rma_one(fid, SL_FAB_OP_READ, buf, len, src, raddr, key, context, 0,
		       sl_fab_ep_of(fid)->tx_op_flags);
}

static ssize_t
rma_readv(struct fid_ep *fid, const struct iovec *iov, void **desc, size_t count, fi_addr_t src,
	  uint64_t raddr, uint64_t key, void *context)
{
	(void)desc;
	return rma_v(fid, SL_FAB_OP_READ, iov, count, src, raddr, key, context);
}

static ssize_t
rma_readmsg(struct fid_ep *fid, const struct fi_msg_rma *msg, uint64_t flags)
{
	if (flags & (FI_INJECT | FI_REMOTE_CQ_DATA))
		return -FI_EINVAL; /* neither means anything for a read */
	return rma_msg(fid, SL_FAB_OP_READ, msg, flags);
}

static ssize_t
rma_write(struct fid_ep *fid, const void *buf, size_t len, void *desc, fi_addr_t dest,
	  uint64_t raddr, uint64_t key, void *context)
{
	(void)desc; /* copied into a registered bounce buffer */
	return rma_one(fid, SL_FAB_OP_WRITE, buf, len, dest, raddr, key, context, 0,
		       sl_fab_ep_of(fid)->tx_op_flags);
}

static ssize_t
rma_writev(struct fid_ep *fid, const struct iovec *iov, void **desc, size_t count, fi_addr_t dest,
	   uint64_t raddr, uint64_t key, void *context)
{
	(void)desc;
	return rma_v(fid, SL_FAB_OP_WRITE, iov, count, dest, raddr, key, context);
}

static ssize_t
rma_writemsg(struct fid_ep *fid, const struct fi_msg_rma *msg, uint64_t flags)
{
	return rma_msg(fid, SL_FAB_OP_WRITE, msg, flags);
}

static ssize_t
rma_inject(struct fid_ep *fid, const void *buf, size_t len, fi_addr_t dest, uint64_t raddr,
	   uint64_t key)
{
	return rma_one(fid, SL_FAB_OP_WRITE, buf, len, dest, raddr, key, NULL, 0, FI_INJECT);
}

static ssize_t
rma_writedata(struct fid_ep *fid, const void *buf, size_t len, void *desc, uint64_t data,
	      fi_addr_t dest, uint64_t raddr, uint64_t key, void *context)
{
	(void)desc;
	return rma_one(fid, SL_FAB_OP_WRITE, buf, len, dest, raddr, key, context, data,
		       sl_fab_ep_of(fid)->tx_op_flags | FI_REMOTE_CQ_DATA);
}

static ssize_t
rma_injectdata(struct fid_ep *fid, const void *buf, size_t len, uint64_t data, fi_addr_t dest,
	       uint64_t raddr, uint64_t key)
{
	return rma_one(fid, SL_FAB_OP_WRITE, buf, len, dest, raddr, key, NULL, data,
		       FI_INJECT | FI_REMOTE_CQ_DATA);
}

struct fi_ops_rma sl_fab_ep_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = rma_read,
	.readv = rma_readv,
	.readmsg = rma_readmsg,
	.write = rma_write,
	.writev = rma_writev,
	.writemsg = rma_writemsg,
	.inject = rma_inject,
	.writedata = rma_writedata,
	.injectdata = rma_injectdata,
};
