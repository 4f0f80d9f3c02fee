/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * domain.c - a domain is one libsluice context: one connection to sluiced (FI_SLUICE_SOCKET)
 * and one shared memory file of FI_SLUICE_MEM_MB, from which every bounce buffer of the
 * domain's endpoints is carved. It opens the AVs, CQs and endpoints, and registers memory.
 *
 * Memory registration. libsluice can register only memory it allocated (sl_mem_alloc: the
 * daemon maps that one file and nothing else), and an application's own buffers (malloc, the
 * stack) cannot be moved into it after the fact. So the provider registers its bounce buffers
 * with libsluice and copies each message through them: one memcpy on each side, measured in
 * docs/libfabric.md. fi_getinfo asks for no mr_mode bit, and fi_mr_reg makes a local record
 * (the range and a key, 8 bytes, counted up from 1) that no data path reads: it exists so that
 * an application that registers anyway runs unchanged. No remote key is ever valid (no RMA).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fab_priv.h"

struct sl_fab_mr {
	struct fid_mr fid;
	struct sl_fab_domain *domain;
};

static int
mr_close(struct fid *fid)
{
	struct sl_fab_mr *mr = container_of(fid, struct sl_fab_mr, fid.fid);

	mr->domain->refs--;
	free(mr);
	return 0;
}

static struct fi_ops mr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = mr_close,
	.bind = sl_fab_no_bind,
	.control = sl_fab_no_control,
	.ops_open = sl_fab_no_ops_open,
};

static int
mr_regattr(struct fid *fid, const struct fi_mr_attr *attr, uint64_t flags, struct fid_mr **out)
{
	struct sl_fab_domain *d = container_of(fid, struct sl_fab_domain, fid.fid);
	struct sl_fab_mr *mr;

	if (flags != 0 || attr->iov_count > 1 || attr->iface != FI_HMEM_SYSTEM)
		return -FI_EINVAL;
	if (attr->access & (FI_REMOTE_READ | FI_REMOTE_WRITE | FI_READ | FI_WRITE))
		return -FI_EINVAL; /* no RMA: no access for the peer to grant */
	mr = calloc(1, sizeof(*mr));
	if (mr == NULL)
		return -FI_ENOMEM;
	mr->domain = d;
	mr->fid.fid.fclass = FI_CLASS_MR;
	mr->fid.fid.context = attr->context;
	mr->fid.fid.ops = &mr_fi_ops;
	mr->fid.key = d->next_key++;
	d->refs++;
	*out = &mr->fid;
	return 0;
}

static int
mr_regv(struct fid *fid, const struct iovec *iov, size_t count, uint64_t access, uint64_t offset,
	uint64_t requested_key, uint64_t flags, struct fid_mr **mr, void *context)
{
	struct fi_mr_attr attr = {
		.mr_iov = iov,
		.iov_count = count,
		.access = access,
		.offset = offset,
		.requested_key = requested_key,
		.context = context,
	};

	return mr_regattr(fid, &attr, flags, mr);
}

static int
mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access, uint64_t offset,
       uint64_t requested_key, uint64_t flags, struct fid_mr **mr, void *context)
{
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};

	return mr_regv(fid, &iov, 1, access, offset, requested_key, flags, mr, context);
}

static struct fi_ops_mr domain_mr_ops = {
	.size = sizeof(struct fi_ops_mr),
	.reg = mr_reg,
	.regv = mr_regv,
	.regattr = mr_regattr,
};

static int
domain_close(struct fid *fid)
{
	struct sl_fab_domain *d = container_of(fid, struct sl_fab_domain, fid.fid);

	if (d->refs > 0)
		return -FI_EBUSY;
	sl_ctx_close(d->ctx);
	free(d);
	return 0;
}

static struct fi_ops domain_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = domain_close,
	.bind = sl_fab_no_bind,
	.control = sl_fab_no_control,
	.ops_open = sl_fab_no_ops_open,
};

/* What a domain does not open: scalable endpoints, counters, poll sets, shared contexts,
 * atomics, collectives. */
static int
no_scalable_ep(struct fid_domain *d, struct fi_info *info, struct fid_ep **sep, void *context)
{
	(void)d, (void)info, (void)sep, (void)context;
	return -FI_ENOSYS;
}

static int
no_cntr_open(struct fid_domain *d, struct fi_cntr_attr *attr, struct fid_cntr **c, void *context)
{
	(void)d, (void)attr, (void)c, (void)context;
	return -FI_ENOSYS;
}

static int
no_poll_open(struct fid_domain *d, struct fi_poll_attr *attr, struct fid_poll **p)
{
	(void)d, (void)attr, (void)p;
	return -FI_ENOSYS;
}

static int
no_stx_ctx(struct fid_domain *d, struct fi_tx_attr *attr, struct fid_stx **stx, void *context)
{
	(void)d, (void)attr, (void)stx, (void)context;
	return -FI_ENOSYS;
}

static int
no_srx_ctx(struct fid_domain *d, struct fi_rx_attr *attr, struct fid_ep **rx, void *context)
{
	(void)d, (void)attr, (void)rx, (void)context;
	return -FI_ENOSYS;
}

static int
no_query_atomic(struct fid_domain *d, enum fi_datatype t, enum fi_op op,
		struct fi_atomic_attr *attr, uint64_t flags)
{
	(void)d, (void)t, (void)op, (void)attr, (void)flags;
	return -FI_ENOSYS;
}

static int
no_query_collective(struct fid_domain *d, enum fi_collective_op op, struct fi_collective_attr *attr,
		    uint64_t flags)
{
	(void)d, (void)op, (void)attr, (void)flags;
	return -FI_ENOSYS;
}

static int
endpoint2(struct fid_domain *d, struct fi_info *info, struct fid_ep **ep, uint64_t flags,
	  void *context)
{
	return flags != 0 ? -FI_EINVAL : sl_fab_ep_open(d, info, ep, context);
}

static struct fi_ops_domain domain_ops = {
	.size = sizeof(struct fi_ops_domain),
	.av_open = sl_fab_av_open,
	.cq_open = sl_fab_cq_open,
	.endpoint = sl_fab_ep_open,
	.scalable_ep = no_scalable_ep,
	.cntr_open = no_cntr_open,
	.poll_open = no_poll_open,
	.stx_ctx = no_stx_ctx,
	.srx_ctx = no_srx_ctx,
	.query_atomic = no_query_atomic,
	.query_collective = no_query_collective,
	.endpoint2 = endpoint2,
};

int
sl_fab_domain_open(struct fid_fabric *fabric, struct fi_info *info, struct fid_domain **dom,
		   void *context)
{
	struct sl_ctx_attr attr = {.mem_bytes = sl_fab_params.mem_mb << 20};
	struct sl_fab_domain *d;
	int err;

	if (info->domain_attr != NULL && info->domain_attr->name != NULL &&
	    strcmp(info->domain_attr->name, SL_FAB_NAME) != 0)
		return -FI_EINVAL;
	d = calloc(1, sizeof(*d));
	if (d == NULL)
		return -FI_ENOMEM;
	d->ctx = sl_ctx_open(sl_fab_params.socket, &attr);
	if (d->ctx == NULL) {
		err = errno;
		SL_FAB_WARN(FI_LOG_DOMAIN, "cannot attach to sluiced at %s: %s\n",
			    sl_fab_params.socket ? sl_fab_params.socket : "(libsluice's default)",
			    strerror(err));
		free(d);
		return sl_fab_errno(-err);
	}
	d->fabric = container_of(fabric, struct sl_fab_fabric, fid);
	d->next_key = 1;
	d->fid.fid.fclass = FI_CLASS_DOMAIN;
	d->fid.fid.context = context;
	d->fid.fid.ops = &domain_fi_ops;
	d->fid.ops = &domain_ops;
	d->fid.mr = &domain_mr_ops;
	*dom = &d->fid;
	return 0;
}
