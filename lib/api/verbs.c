/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs.c - memory regions, completion queues, queue pairs and the work requests that flow
 * through their rings (sluice.h; the rings' layout is sl_chan_abi.h's).
 *
 * Rings. The library produces into a QP's SQ and RQ and consumes its CQs; it keeps its own copy
 * of the index it owns and reads the daemon's with an acquire load, so an entry is reused only
 * after the daemon has published that it copied it out. Posting writes whole entries, then
 * publishes prod once for the batch (release): the daemon, reading prod with acquire, sees every
 * entry below it complete. Never more than a ring's size is outstanding: room is size - (prod -
 * cons), and a cons that claims more room than that (the daemon's bug) is taken as none.
 *
 * Completion queues. A CQ is one ring per lane of the daemon (sl_chan_abi.h); a poll takes
 * what each ring holds, starting one ring further each time, so that no lane's completions
 * wait behind another's.
 *
 * Events. sl_cq_arm sets the first ring's armed word; a lane, after publishing a completion,
 * reads armed and, if set, clears it and writes 8 bytes to the CQ's event fd. A completion
 * published before the arm is not signalled, hence the loop: poll until empty, arm, poll again,
 * then wait on the fd. For that loop to lose nothing, "store armed, then load prod" here and
 * "store prod, then load armed" in the daemon must not be reordered: the arm is a sequentially
 * consistent store (a full barrier on x86), and the daemon fences likewise (docs/api.md).
 *
 * Failure. The daemon fails a QP (its peer gone, a bad ring, a retry timeout, destruction) by
 * completing its work with a status other than success; from the first such completion polled
 * here the QP refuses further posts with -EPIPE. Its QPN is found through the CQ's list of the
 * QPs that complete there (a short list, looked at only on errors).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api_priv.h"
#include "sl_common.h"

#define QP_DEPTH_DEFAULT 128u                  /**< sq_depth, rq_depth when 0 */
#define QP_MAX_MSG_DEFAULT (UINT32_C(1) << 20) /**< max_msg_bytes when 0, bytes */

#define ACCESS_ALL (SL_ACCESS_LOCAL_WRITE | SL_ACCESS_REMOTE_WRITE | SL_ACCESS_REMOTE_READ)

/* Entries the producer at prod may still write into r of depth entries. */
static uint32_t
ring_room(struct sl_chan_ring *r, uint32_t prod, uint32_t depth)
{
	uint32_t used = prod - __atomic_load_n(&r->cons, __ATOMIC_ACQUIRE);

	return used <= depth ? depth - used : 0;
}

/* A destroy's outcome: the library lets go unless the daemon (a working channel) said no. */
static bool
let_go(const struct sl_ctx *ctx, int rc)
{
	return !rc || ctx->broken;
}

/* --- memory regions ----------------------------------------------------------------------- */

SL_API_EXPORT struct sl_mr *
sl_mr_reg(struct sl_ctx *ctx, void *addr, size_t len, unsigned access)
{
	struct sl_chan_req req = {.type = SL_CHAN_MR_REG};
	struct sl_chan_rsp rsp;
	struct sl_api_adopt *adopt = NULL;
	uint8_t *p = addr;
	struct sl_mr *mr;
	uint64_t off = 0;
	int rc;

	if (ctx && len && p >= ctx->mem && p < ctx->mem + ctx->mem_bytes &&
	    len <= (size_t)(ctx->mem + ctx->mem_bytes - p))
		off = sl_api_off(ctx, p);
	else if (ctx && (adopt = sl_api_adopt_find(ctx, p, len)) != NULL)
		off = adopt->off + ((uintptr_t)p - adopt->lo);
	else
		ctx = NULL; /* neither the context's memory nor adopted pages */
	if (!ctx || (access & ~ACCESS_ALL) ||
	    ((access & SL_ACCESS_REMOTE_WRITE) && !(access & SL_ACCESS_LOCAL_WRITE))) {
		errno = EINVAL;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return NULL;
	req.u.mr_reg.addr = (uint64_t)(uintptr_t)p;
	req.u.mr_reg.len = len;
	req.u.mr_reg.access = access;
	req.u.mr_reg.off = off;
	rc = sl_api_call(ctx, &req, -1, &rsp, NULL);
	if (rc) {
		free(mr);
		errno = -rc;
		return NULL;
	}
	mr->ctx = ctx;
	mr->adopt = adopt;
	if (adopt)
		adopt->mrs++;
	mr->lkey = rsp.u.mr_reg.lkey;
	mr->rkey = rsp.u.mr_reg.rkey;
	mr->addr = addr;
	mr->len = len;
	sl_api_link_add(&ctx->mrs, &mr->link);
	return mr;
}

static void
mr_release(struct sl_mr *mr)
{
	if (mr->adopt)
		mr->adopt->mrs--;
	sl_api_link_del(&mr->link);
	free(mr);
}

SL_API_EXPORT int
sl_mr_dereg(struct sl_mr *mr)
{
	struct sl_chan_req req = {.type = SL_CHAN_MR_DEREG};
	struct sl_chan_rsp rsp;
	int rc;

	if (!mr)
		return -EINVAL;
	req.u.mr_dereg.lkey = mr->lkey;
	rc = sl_api_call(mr->ctx, &req, -1, &rsp, NULL);
	if (!let_go(mr->ctx, rc))
		return rc;
	mr_release(mr);
	return rc;
}

SL_API_EXPORT uint32_t
sl_mr_lkey(const struct sl_mr *mr)
{
	return mr->lkey;
}

SL_API_EXPORT uint32_t
sl_mr_rkey(const struct sl_mr *mr)
{
	return mr->rkey;
}

SL_API_EXPORT void *
sl_mr_addr(const struct sl_mr *mr)
{
	return mr->addr;
}

SL_API_EXPORT size_t
sl_mr_len(const struct sl_mr *mr)
{
	return mr->len;
}

/* --- completion queues -------------------------------------------------------------------- */

static const char *const wc_status_name[] = {
	[SL_WC_SUCCESS] = "success",
	[SL_WC_LOC_LEN_ERR] = "local length error",
	[SL_WC_LOC_PROT_ERR] = "local protection error",
	[SL_WC_REM_ACCESS_ERR] = "remote access error",
	[SL_WC_REM_OP_ERR] = "remote operation error",
	[SL_WC_RETRY_EXC_ERR] = "transport retry counter exceeded",
	[SL_WC_WR_FLUSH_ERR] = "work request flushed",
	[SL_WC_GENERAL_ERR] = "general error",
	[SL_WC_RNR_RETRY_EXC_ERR] = "RNR retry counter exceeded",
};

SL_API_EXPORT const char *
sl_wc_status_str(enum sl_wc_status s)
{
	if ((unsigned)s < sizeof(wc_status_name) / sizeof(wc_status_name[0]))
		return wc_status_name[s];
	return "unknown status";
}

static int
cq_add_qp(struct sl_cq *cq, struct sl_qp *qp)
{
	if (cq->n_qps == cq->cap_qps) {
		uint32_t cap = cq->cap_qps ? cq->cap_qps * 2 : 4;
		struct sl_qp **q = realloc(cq->qps, cap * sizeof(*q));

		if (!q)
			return -ENOMEM;
		cq->qps = q;
		cq->cap_qps = cap;
	}
	cq->qps[cq->n_qps++] = qp;
	return 0;
}

static void
cq_del_qp(struct sl_cq *cq, const struct sl_qp *qp)
{
	for (uint32_t i = 0; i < cq->n_qps; i++)
		if (cq->qps[i] == qp) {
			cq->qps[i] = cq->qps[--cq->n_qps];
			return;
		}
}

static void
cq_release(struct sl_cq *cq)
{
	if (cq->event_fd >= 0)
		close(cq->event_fd);
	sl_mem_free(cq->ctx, cq->ring);
	sl_api_link_del(&cq->link);
	free(cq->qps);
	free(cq);
}

SL_API_EXPORT struct sl_cq *
sl_cq_create(struct sl_ctx *ctx, uint32_t depth)
{
	struct sl_chan_req req = {.type = SL_CHAN_CQ_CREATE};
	struct sl_chan_rsp rsp;
	struct sl_cq *cq;
	int rc;

	if (!ctx || !depth || depth > SL_CHAN_RING_MAX) {
		errno = EINVAL;
		return NULL;
	}
	depth = sl_align_pow2_u32(depth);
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	cq->ctx = ctx;
	cq->depth = depth;
	cq->link.prev = cq->link.next = &cq->link;
	cq->event_fd = -1;
	cq->rings = ctx->cq_rings;
	cq->ring = sl_api_mem_alloc(
		ctx, cq->rings * SL_CHAN_RING_BYTES(depth, sizeof(struct sl_chan_cqe)));
	if (!cq->ring) {
		rc = -errno;
		goto fail;
	}
	req.u.cq_create.ring_off = sl_api_off(ctx, cq->ring);
	req.u.cq_create.depth = depth;
	rc = sl_api_call(ctx, &req, -1, &rsp, &cq->event_fd);
	if (rc)
		goto fail;
	cq->handle = rsp.u.cq_create.cq;
	sl_api_link_add(&ctx->cqs, &cq->link);
	return cq;
fail:
	cq_release(cq);
	errno = -rc;
	return NULL;
}

SL_API_EXPORT int
sl_cq_destroy(struct sl_cq *cq)
{
	struct sl_chan_req req = {.type = SL_CHAN_CQ_DESTROY};
	struct sl_chan_rsp rsp;
	int rc;

	if (!cq)
		return -EINVAL;
	if (cq->n_qps)
		return -EBUSY;
	req.u.cq_destroy.cq = cq->handle;
	rc = sl_api_call(cq->ctx, &req, -1, &rsp, NULL);
	if (let_go(cq->ctx, rc))
		cq_release(cq);
	return rc;
}

/* The first failed completion of a QP: it refuses posts from now on. */
static void
cq_qp_failed(const struct sl_cq *cq, uint32_t qpn)
{
	for (uint32_t i = 0; i < cq->n_qps; i++)
		if (cq->qps[i]->qpn == qpn)
			atomic_store_explicit(&cq->qps[i]->failed, true, memory_order_relaxed);
}

/* Up to max completions of ring i of cq into wc; how many. */
static uint32_t
cq_ring_poll(struct sl_cq *cq, uint32_t i, struct sl_wc *wc, uint32_t max)
{
	struct sl_chan_ring *r = sl_chan_cq_ring(cq->ring, cq->depth, i);
	uint32_t avail = __atomic_load_n(&r->prod, __ATOMIC_ACQUIRE) - cq->cons[i];
	uint32_t n = avail < max ? avail : max;

	for (uint32_t k = 0; k < n; k++) {
		const struct sl_chan_cqe *e =
			sl_chan_ring_entry(r, cq->cons[i] + k, cq->depth, sizeof(*e));

		wc[k] = (struct sl_wc){.wr_id = e->wr_id,
				       .status = e->status,
				       .opcode = e->opcode,
				       .flags = e->flags,
				       .qpn = e->qpn,
				       .byte_len = e->byte_len,
				       .imm = e->imm};
		if (e->status != SL_WC_SUCCESS)
			cq_qp_failed(cq, e->qpn);
	}
	if (n) {
		cq->cons[i] += n;
		__atomic_store_n(&r->cons, cq->cons[i], __ATOMIC_RELEASE);
	}
	return n;
}

SL_API_EXPORT int
sl_cq_poll(struct sl_cq *cq, struct sl_wc *wc, int max)
{
	uint32_t n = 0;

	if (!cq || max < 0 || (max && !wc))
		return -EINVAL;
	for (uint32_t k = 0, i = cq->next; k < cq->rings && n < (uint32_t)max; k++) {
		n += cq_ring_poll(cq, i, wc + n, (uint32_t)max - n);
		i = i + 1 == cq->rings ? 0 : i + 1;
	}
	cq->next = cq->next + 1 == cq->rings ? 0 : cq->next + 1;
	return (int)n;
}

SL_API_EXPORT int
sl_cq_event_fd(const struct sl_cq *cq)
{
	return cq->event_fd;
}

SL_API_EXPORT int
sl_cq_arm(struct sl_cq *cq)
{
	if (!cq)
		return -EINVAL;
	__atomic_store_n(&cq->ring->armed, 1, __ATOMIC_SEQ_CST);
	return 0;
}

/* --- queue pairs -------------------------------------------------------------------------- */

static bool
name_ok(const char *name)
{
	return memchr(name, '\0', SL_NAME_MAX) != NULL;
}

static int
qp_attr_check(const struct sl_ctx *ctx, const struct sl_qp_attr *a, uint32_t *sq_depth,
	      uint32_t *rq_depth)
{
	*sq_depth = a->sq_depth ? a->sq_depth : QP_DEPTH_DEFAULT;
	*rq_depth = a->rq_depth ? a->rq_depth : QP_DEPTH_DEFAULT;
	if (!a->send_cq || !a->recv_cq || a->send_cq->ctx != ctx || a->recv_cq->ctx != ctx ||
	    !sl_is_pow2(*sq_depth) || *sq_depth > SL_CHAN_RING_MAX || !sl_is_pow2(*rq_depth) ||
	    *rq_depth > SL_CHAN_RING_MAX || a->receiver > SL_RECEIVER_GBN || !name_ok(a->program) ||
	    !name_ok(a->pacer))
		return -EINVAL;
	return 0;
}

static void
qp_release(struct sl_qp *qp)
{
	cq_del_qp(qp->send_cq, qp);
	if (qp->recv_cq != qp->send_cq)
		cq_del_qp(qp->recv_cq, qp);
	sl_mem_free(qp->ctx, qp->sq);
	sl_mem_free(qp->ctx, qp->rq);
	sl_api_link_del(&qp->link);
	free(qp);
}

SL_API_EXPORT struct sl_qp *
sl_qp_create(struct sl_ctx *ctx, const struct sl_qp_attr *attr)
{
	struct sl_chan_req req = {.type = SL_CHAN_QP_CREATE};
	struct sl_chan_rsp rsp;
	uint32_t sq_depth, rq_depth;
	struct sl_qp *qp;
	int rc;

	if (!ctx || !attr || qp_attr_check(ctx, attr, &sq_depth, &rq_depth)) {
		errno = EINVAL;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	qp->ctx = ctx;
	qp->link.prev = qp->link.next = &qp->link;
	qp->send_cq = attr->send_cq;
	qp->recv_cq = attr->recv_cq;
	qp->sq_depth = sq_depth;
	qp->rq_depth = rq_depth;
	qp->max_msg_bytes = attr->max_msg_bytes ? attr->max_msg_bytes : QP_MAX_MSG_DEFAULT;
	qp->sq = sl_api_mem_alloc(ctx, SL_CHAN_RING_BYTES(sq_depth, sizeof(struct sl_chan_sqe)));
	qp->rq = sl_api_mem_alloc(ctx, SL_CHAN_RING_BYTES(rq_depth, sizeof(struct sl_chan_rqe)));
	if (!qp->sq || !qp->rq) {
		rc = -ENOMEM;
		goto fail_rings;
	}
	rc = cq_add_qp(qp->send_cq, qp);
	if (!rc && qp->recv_cq != qp->send_cq && (rc = cq_add_qp(qp->recv_cq, qp)))
		cq_del_qp(qp->send_cq, qp);
	if (rc)
		goto fail_rings;
	req.u.qp_create.send_cq = qp->send_cq->handle;
	req.u.qp_create.recv_cq = qp->recv_cq->handle;
	req.u.qp_create.sq_off = sl_api_off(ctx, qp->sq);
	req.u.qp_create.rq_off = sl_api_off(ctx, qp->rq);
	req.u.qp_create.sq_depth = sq_depth;
	req.u.qp_create.rq_depth = rq_depth;
	memcpy(req.u.qp_create.program, attr->program, SL_NAME_MAX);
	memcpy(req.u.qp_create.pacer, attr->pacer, SL_NAME_MAX);
	req.u.qp_create.receiver = attr->receiver;
	req.u.qp_create.rate_limit_bps = attr->rate_limit_bps;
	req.u.qp_create.rate_msg_bytes = attr->rate_limit_msg_bytes;
	req.u.qp_create.max_msg_bytes = qp->max_msg_bytes;
	rc = sl_api_call(ctx, &req, -1, &rsp, NULL);
	if (rc)
		goto fail;
	qp->qpn = rsp.u.qp_create.qpn;
	qp->psn = rsp.u.qp_create.psn;
	qp->token = rsp.u.qp_create.token;
	qp->seg_bytes = rsp.u.qp_create.seg_bytes;
	qp->pkt_wire_bytes = rsp.u.qp_create.pkt_wire_bytes;
	sl_api_link_add(&ctx->qps, &qp->link);
	return qp;
fail_rings:
	sl_mem_free(ctx, qp->sq);
	sl_mem_free(ctx, qp->rq);
	free(qp);
	errno = -rc;
	return NULL;
fail:
	qp_release(qp);
	errno = -rc;
	return NULL;
}

SL_API_EXPORT uint64_t
sl_qp_wire_bytes(const struct sl_qp *qp, uint64_t msg_bytes)
{
	return sl_chan_wire_bytes(qp->seg_bytes, qp->pkt_wire_bytes, msg_bytes);
}

SL_API_EXPORT int
sl_qp_destroy(struct sl_qp *qp)
{
	struct sl_chan_req req = {.type = SL_CHAN_QP_DESTROY};
	struct sl_chan_rsp rsp;
	int rc;

	if (!qp)
		return -EINVAL;
	req.u.qp_destroy.qpn = qp->qpn;
	rc = sl_api_call(qp->ctx, &req, -1, &rsp, NULL);
	if (let_go(qp->ctx, rc))
		qp_release(qp);
	return rc;
}

SL_API_EXPORT uint32_t
sl_qp_num(const struct sl_qp *qp)
{
	return qp->qpn;
}

SL_API_EXPORT void
sl_qp_info(const struct sl_qp *qp, const struct sl_mr *mr, struct sl_qp_info *info)
{
	memset(info, 0, sizeof(*info));
	info->qpn = qp->qpn;
	info->psn = qp->psn;
	info->token = qp->token;
	if (mr) {
		info->rkey = mr->rkey;
		info->addr = (uint64_t)(uintptr_t)mr->addr;
		info->len = mr->len;
	}
	memcpy(info->host, qp->ctx->host, sizeof(info->host) - 1); /* info zeroed: NUL-ended */
}

SL_API_EXPORT int
sl_qp_connect(struct sl_qp *qp, const struct sl_qp_info *peer)
{
	struct sl_chan_req req = {.type = SL_CHAN_QP_CONNECT};
	struct sl_chan_rsp rsp;
	int rc;

	if (!qp || !peer)
		return -EINVAL;
	if (qp->connected)
		return -EISCONN;
	req.u.qp_connect.qpn = qp->qpn;
	req.u.qp_connect.peer_qpn = peer->qpn;
	req.u.qp_connect.peer_psn = peer->psn;
	req.u.qp_connect.peer_token = peer->token;
	rc = sl_api_call(qp->ctx, &req, -1, &rsp, NULL);
	if (!rc)
		qp->connected = true;
	return rc;
}

void
sl_api_objects_close(struct sl_ctx *ctx)
{
	struct sl_chan_req req;
	struct sl_chan_rsp rsp;

	while (ctx->qps.next != &ctx->qps) {
		struct sl_qp *qp = (struct sl_qp *)ctx->qps.next;

		req = (struct sl_chan_req){.type = SL_CHAN_QP_DESTROY, .u.qp_destroy.qpn = qp->qpn};
		sl_api_call(ctx, &req, -1, &rsp, NULL);
		qp_release(qp);
	}
	while (ctx->cqs.next != &ctx->cqs) {
		struct sl_cq *cq = (struct sl_cq *)ctx->cqs.next;

		req = (struct sl_chan_req){.type = SL_CHAN_CQ_DESTROY,
					   .u.cq_destroy.cq = cq->handle};
		sl_api_call(ctx, &req, -1, &rsp, NULL);
		cq_release(cq);
	}
	while (ctx->mrs.next != &ctx->mrs) {
		struct sl_mr *mr = (struct sl_mr *)ctx->mrs.next;

		req = (struct sl_chan_req){.type = SL_CHAN_MR_DEREG, .u.mr_dereg.lkey = mr->lkey};
		sl_api_call(ctx, &req, -1, &rsp, NULL);
		mr_release(mr);
	}
}

/* --- work requests ------------------------------------------------------------------------ */

/* What a post returns: how many went, or, if none, why the first did not. */
static int
posted(struct sl_chan_ring *r, uint32_t *prod, uint32_t n, int why)
{
	if (!n)
		return why;
	*prod += n;
	__atomic_store_n(&r->prod, *prod, __ATOMIC_RELEASE);
	return (int)n;
}

static int
post_check(const struct sl_qp *qp, const void *wr, int n)
{
	if (!qp || n < 0 || (n && !wr))
		return -EINVAL;
	if (atomic_load_explicit(&qp->failed, memory_order_relaxed))
		return -EPIPE;
	return 0;
}

SL_API_EXPORT int
sl_post_send(struct sl_qp *qp, const struct sl_wr *wr, int n)
{
	uint32_t room, i;
	int rc = post_check(qp, wr, n);

	if (rc)
		return rc;
	if (!qp->connected)
		return -ENOTCONN;
	room = ring_room(qp->sq, qp->sq_prod, qp->sq_depth);
	for (i = 0; i < (uint32_t)n; i++) {
		const struct sl_wr *w = &wr[i];
		struct sl_chan_sqe e = {.wr_id = w->wr_id,
					.addr = (uint64_t)(uintptr_t)w->addr,
					.raddr = w->raddr,
					.len = w->len,
					.lkey = w->lkey,
					.rkey = w->rkey,
					.imm = w->imm,
					.opcode = w->opcode,
					.flags = w->flags};

		if (w->opcode > SL_WR_READ || w->len > qp->max_msg_bytes ||
		    (w->flags & ~SL_WR_F_SIGNALED)) {
			rc = -EINVAL;
			break;
		}
		if (i == room) {
			rc = -ENOBUFS;
			break;
		}
		memcpy(sl_chan_ring_entry(qp->sq, qp->sq_prod + i, qp->sq_depth, sizeof(e)), &e,
		       sizeof(e));
	}
	return posted(qp->sq, &qp->sq_prod, i, rc);
}

SL_API_EXPORT int
sl_post_recv(struct sl_qp *qp, const struct sl_recv_wr *wr, int n)
{
	uint32_t room, i;
	int rc = post_check(qp, wr, n);

	if (rc)
		return rc;
	room = ring_room(qp->rq, qp->rq_prod, qp->rq_depth);
	for (i = 0; i < (uint32_t)n && i < room; i++) {
		struct sl_chan_rqe e = {.wr_id = wr[i].wr_id,
					.addr = (uint64_t)(uintptr_t)wr[i].addr,
					.len = wr[i].len,
					.lkey = wr[i].lkey};

		memcpy(sl_chan_ring_entry(qp->rq, qp->rq_prod + i, qp->rq_depth, sizeof(e)), &e,
		       sizeof(e));
	}
	return posted(qp->rq, &qp->rq_prod, i, i < (uint32_t)n ? -ENOBUFS : 0);
}
