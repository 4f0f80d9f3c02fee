/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * domain.c - a domain is one libsluice context: one connection to sluiced (FI_SLUICE_SOCKET)
 * and one shared memory file of FI_SLUICE_MEM_MB, from which every bounce buffer of the
 * domain's endpoints is carved. It opens the AVs, CQs and endpoints, and registers memory.
 *
 * Memory registration. libsluice's daemon reads and writes one file, the context's shared
 * memory, and an application registers its own buffers (malloc, mmap). Messages never need
 * the application's memory registered: they are copied through the provider's bounce buffers
 * (one memcpy on each side, measured in docs/libfabric.md). An RMA target's memory must be
 * written where the application reads it, though, so a registration that grants a peer access
 * (FI_REMOTE_WRITE, FI_REMOTE_READ) adopts the buffer's pages into the file (sl_mem_adopt: the
 * pages are copied into the file and the file's pages mapped at the same address, so the
 * application's pointer and bytes stay) and registers the buffer with libsluice. Its key is
 * libsluice's rkey (FI_MR_PROV_KEY, 32 bits drawn by the daemon), and peers address it by the
 * target's virtual address (FI_MR_VIRT_ADDR), as libsluice's WRITE and READ do. fi_close gives
 * the pages back as private anonymous memory (sl_mem_unadopt). Two registrations may share
 * pages when one's pages lie within the other's (two small buffers on one page); one whose
 * pages overlap another's only in part is refused (FI_EBUSY). A registration for local access
 * only (FI_SEND, FI_RECV, FI_READ, FI_WRITE) is a record: the key is counted up from 1 and no
 * data path reads it, since the initiator's buffers are copied through bounce buffers (no
 * FI_MR_LOCAL).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fab_priv.h"

#define REMOTE_ACCESS (FI_REMOTE_READ | FI_REMOTE_WRITE)

struct sl_fab_mr {
	struct fid_mr fid;
	struct sl_fab_domain *domain;
	struct sl_mr *smr; /**< remote access: the libsluice region; NULL: a local record */
	void *buf;         /**< remote access: the adopted buffer */
	size_t len;        /**< bytes */
};

static int
mr_close(struct fid *fid)
{
	struct sl_fab_mr *mr = container_of(fid, struct sl_fab_mr, fid.fid);
	struct sl_ctx *ctx = mr->domain->ctx;
	int rc;

	if (mr->smr != NULL) {
		rc = sl_mr_dereg(mr->smr);
		if (rc != 0)
			return sl_fab_errno(rc);
		mr->smr = NULL;
		rc = sl_mem_unadopt(ctx, mr->buf, mr->len);
		if (rc != 0)
			SL_FAB_WARN(FI_LOG_MR, "pages at %p stay in the shared memory: %s\n",
				    mr->buf, strerror(-rc));
	}
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

/* Adopt [buf, buf + len) and register it for the peers' access: mr's key is its rkey. */
static int
mr_remote(struct sl_fab_mr *mr, void *buf, size_t len, uint64_t access)
{
	struct sl_ctx *ctx = mr->domain->ctx;
	unsigned sl_access = SL_ACCESS_LOCAL_WRITE;
	int rc;

	if (access & FI_REMOTE_WRITE)
		sl_access |= SL_ACCESS_REMOTE_WRITE;
	if (access & FI_REMOTE_READ)
		sl_access |= SL_ACCESS_REMOTE_READ;
	rc = sl_mem_adopt(ctx, buf, len);
	if (rc != 0) {
		SL_FAB_WARN(FI_LOG_MR,
			    "cannot register %zu bytes at %p for remote access: %s (only private, "
			    "anonymous, writable memory, not overlapping another registration's "
			    "pages in part, and room in FI_SLUICE_MEM_MB)\n",
			    len, buf, strerror(-rc));
		return sl_fab_errno(rc);
	}
	mr->smr = sl_mr_reg(ctx, buf, len, sl_access);
	if (mr->smr == NULL) {
		rc = -errno;
		sl_mem_unadopt(ctx, buf, len);
		return sl_fab_errno(rc);
	}
	mr->buf = buf;
	mr->len = len;
	mr->fid.key = sl_mr_rkey(mr->smr);
	return 0;
}

static int
mr_regattr(struct fid *fid, const struct fi_mr_attr *attr, uint64_t flags, struct fid_mr **out)
{
	struct sl_fab_domain *d = container_of(fid, struct sl_fab_domain, fid.fid);
	struct sl_fab_mr *mr;
	int rc;

	if (flags != 0 || attr->iov_count > 1 || attr->iface != FI_HMEM_SYSTEM)
		return -FI_EINVAL;
	if ((attr->access & REMOTE_ACCESS) &&
	    (attr->iov_count != 1 || attr->mr_iov[0].iov_len == 0))
		return -FI_EINVAL;
	mr = calloc(1, sizeof(*mr));
	if (mr == NULL)
		return -FI_ENOMEM;
	mr->domain = d;
	mr->fid.fid.fclass = FI_CLASS_MR;
	mr->fid.fid.context = attr->context;
	mr->fid.fid.ops = &mr_fi_ops;
	if (attr->access & REMOTE_ACCESS) {
		rc = mr_remote(mr, attr->mr_iov[0].iov_base, attr->mr_iov[0].iov_len, attr->access);
		if (rc != 0) {
			free(mr);
			return rc;
		}
	} else {
		mr->fid.key = d->next_key++;
	}
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
