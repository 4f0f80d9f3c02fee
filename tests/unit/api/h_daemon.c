/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * h_daemon.c - the fake sluiced of libsluice's tests (h_daemon.h). It follows sl_chan_abi.h as the
 * real daemon must, in one thread and without a transport: "the wire" between two QPs is a
 * memcpy from one client's memory to another's (or the same one's).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "h_daemon.h"
#include "sl_fdmsg.h"

#define H_QPN_BASE 100u
#define H_KEY_BASE 0x1000u
#define H_PSN_BASE 0x100u
#define H_TOKEN_BASE 0x70000u

static uint8_t *
h_ptr(struct h_client *cl, uint64_t va, uint64_t len)
{
	if (!cl->mem || va < cl->base_va || va - cl->base_va > cl->mem_bytes ||
	    len > cl->mem_bytes - (va - cl->base_va))
		return NULL;
	return cl->mem + (va - cl->base_va);
}

/* cl's pointer to [va, va + len) under key, if one of cl's regions grants need there. */
static uint8_t *
h_mr_find(struct h_client *cl, uint32_t key, uint64_t va, uint64_t len, uint32_t need)
{
	for (unsigned i = 0; i < H_MAX; i++) {
		const struct h_mr *m = &cl->mrs[i];

		if (key && m->key == key && va >= m->va && va - m->va <= m->len &&
		    len <= m->len - (va - m->va) && (m->access & need) == need)
			return cl->mem + m->off + (va - m->va);
	}
	return NULL;
}

struct h_qp *
h_daemon_qp(struct h_daemon *d, uint32_t qpn)
{
	if (qpn < H_QPN_BASE || qpn >= H_QPN_BASE + H_MAX || !d->qps[qpn - H_QPN_BASE].qpn)
		return NULL;
	return &d->qps[qpn - H_QPN_BASE];
}

/* Room in the ring of cq that QP qpn completes into. */
static bool
h_cq_room(const struct h_cq *cq, uint32_t qpn)
{
	uint32_t i = qpn % H_CQ_RINGS;

	return cq->prod[i] - __atomic_load_n(&sl_chan_cq_ring(cq->ring, cq->depth, i)->cons,
					     __ATOMIC_ACQUIRE) <
	       cq->depth;
}

/* Produce one completion into its QP's ring; signal the event fd if the application armed the
 * CQ (the first ring's word). */
static void
h_cq_push(struct h_cq *cq, const struct sl_chan_cqe *c)
{
	uint32_t i = c->qpn % H_CQ_RINGS;
	struct sl_chan_ring *r = sl_chan_cq_ring(cq->ring, cq->depth, i);
	uint64_t one = 1;

	memcpy(sl_chan_ring_entry(r, cq->prod[i], cq->depth, sizeof(*c)), c, sizeof(*c));
	cq->prod[i]++;
	__atomic_store_n(&r->prod, cq->prod[i], __ATOMIC_SEQ_CST);
	if (__atomic_exchange_n(&cq->ring->armed, 0, __ATOMIC_SEQ_CST) &&
	    send(cq->event_fd, &one, sizeof(one), MSG_DONTWAIT | MSG_NOSIGNAL) != sizeof(one) &&
	    errno != EAGAIN)
		abort();
}

/* Take the next RECV of qp: its entry, or false if none is posted. */
static bool
h_rq_take(struct h_qp *qp, struct sl_chan_rqe *r)
{
	if (__atomic_load_n(&qp->rq->prod, __ATOMIC_ACQUIRE) == qp->rq_cons)
		return false;
	memcpy(r, sl_chan_ring_entry(qp->rq, qp->rq_cons, qp->rq_depth, sizeof(*r)), sizeof(*r));
	qp->rq_cons++;
	__atomic_store_n(&qp->rq->cons, qp->rq_cons, __ATOMIC_RELEASE);
	return true;
}

/* A message arriving at peer that consumes a RECV (SEND, WRITE with immediate). */
static uint8_t
h_deliver(struct h_qp *peer, const struct sl_chan_sqe *e, const uint8_t *src)
{
	struct sl_chan_cqe c = {.qpn = peer->qpn, .byte_len = e->len, .imm = e->imm};
	bool write = e->opcode == SL_WR_WRITE_WITH_IMM;
	struct sl_chan_rqe r;
	uint8_t *dst = NULL;

	if (!h_rq_take(peer, &r))
		return SL_WC_REM_OP_ERR;
	c.wr_id = r.wr_id;
	c.opcode = write ? SL_WC_RECV_RDMA_IMM : SL_WC_RECV;
	c.flags = write || e->opcode == SL_WR_SEND_WITH_IMM ? SL_WC_F_IMM : 0;
	if (!write && e->len > r.len)
		c.status = SL_WC_LOC_LEN_ERR;
	else if (!write &&
		 !(dst = h_mr_find(peer->cl, r.lkey, r.addr, e->len, SL_ACCESS_LOCAL_WRITE)))
		c.status = SL_WC_LOC_PROT_ERR;
	if (dst)
		memcpy(dst, src, e->len);
	h_cq_push(&peer->cl->cqs[peer->recv_cq], &c);
	return c.status == SL_WC_SUCCESS ? SL_WC_SUCCESS : SL_WC_REM_OP_ERR;
}

static uint8_t
h_execute(struct h_daemon *d, struct h_qp *qp, const struct sl_chan_sqe *e, uint8_t *wc_op)
{
	uint32_t need = e->opcode == SL_WR_READ ? SL_ACCESS_LOCAL_WRITE : 0;
	struct h_qp *peer = h_daemon_qp(d, qp->peer_qpn);
	uint8_t *local, *remote;

	*wc_op = e->opcode == SL_WR_READ    ? SL_WC_READ
		 : e->opcode >= SL_WR_WRITE ? SL_WC_WRITE
					    : SL_WC_SEND;
	if (e->opcode > SL_WR_READ || e->len > qp->max_msg_bytes)
		return SL_WC_GENERAL_ERR;
	local = h_mr_find(qp->cl, e->lkey, e->addr, e->len, need);
	if (!local)
		return SL_WC_LOC_PROT_ERR;
	if (!peer || !peer->connected)
		return SL_WC_REM_OP_ERR;
	switch (e->opcode) {
	case SL_WR_SEND:
	case SL_WR_SEND_WITH_IMM:
		return h_deliver(peer, e, local);
	case SL_WR_READ:
		remote = h_mr_find(peer->cl, e->rkey, e->raddr, e->len, SL_ACCESS_REMOTE_READ);
		if (!remote)
			return SL_WC_REM_ACCESS_ERR;
		memcpy(local, remote, e->len);
		return SL_WC_SUCCESS;
	default:
		remote = h_mr_find(peer->cl, e->rkey, e->raddr, e->len, SL_ACCESS_REMOTE_WRITE);
		if (!remote)
			return SL_WC_REM_ACCESS_ERR;
		memcpy(remote, local, e->len);
		return e->opcode == SL_WR_WRITE ? SL_WC_SUCCESS : h_deliver(peer, e, local);
	}
}

/* With rnr_wait, e is to wait: its peer QP is not connected yet (sluiced would retransmit
 * until it is), or e needs a RECV there and none is posted (sluiced would stash it). */
static bool
h_rnr(const struct h_daemon *d, const struct h_qp *peer, const struct sl_chan_sqe *e)
{
	bool consumes = e->opcode == SL_WR_SEND || e->opcode == SL_WR_SEND_WITH_IMM ||
			e->opcode == SL_WR_WRITE_WITH_IMM;

	return d->rnr_wait && peer &&
	       (!peer->connected ||
		(consumes && __atomic_load_n(&peer->rq->prod, __ATOMIC_ACQUIRE) == peer->rq_cons));
}

/* The lane: every connected QP's send queue, as far as its CQs have room (and, with rnr_wait,
 * its peer's RECVs). */
static void
h_lane(struct h_daemon *d)
{
	for (unsigned i = 0; i < H_MAX; i++) {
		struct h_qp *qp = &d->qps[i];
		struct h_qp *peer = h_daemon_qp(d, qp->peer_qpn);

		if (!qp->qpn || !qp->connected || qp->failed)
			continue;
		while (__atomic_load_n(&qp->sq->prod, __ATOMIC_ACQUIRE) != qp->sq_cons &&
		       h_cq_room(&qp->cl->cqs[qp->send_cq], qp->qpn) &&
		       (!peer || h_cq_room(&peer->cl->cqs[peer->recv_cq], peer->qpn))) {
			struct sl_chan_sqe e;
			struct sl_chan_cqe c = {.qpn = qp->qpn};

			memcpy(&e, sl_chan_ring_entry(qp->sq, qp->sq_cons, qp->sq_depth, sizeof(e)),
			       sizeof(e));
			if (h_rnr(d, peer, &e))
				break;
			qp->sq_cons++;
			__atomic_store_n(&qp->sq->cons, qp->sq_cons, __ATOMIC_RELEASE);
			c.wr_id = e.wr_id;
			c.byte_len = e.len;
			c.status = h_execute(d, qp, &e, &c.opcode);
			if (c.status != SL_WC_SUCCESS || (e.flags & SL_WR_F_SIGNALED))
				h_cq_push(&qp->cl->cqs[qp->send_cq], &c);
			if (c.status != SL_WC_SUCCESS) {
				qp->failed = true;
				break;
			}
		}
	}
}

/* Destroy: what the QP still holds completes flushed, as sl_qp_destroy promises. */
static void
h_qp_flush(struct h_qp *qp)
{
	struct sl_chan_cqe c = {.qpn = qp->qpn, .status = SL_WC_WR_FLUSH_ERR};
	struct h_cq *scq = &qp->cl->cqs[qp->send_cq], *rcq = &qp->cl->cqs[qp->recv_cq];
	struct sl_chan_rqe r;

	while (__atomic_load_n(&qp->sq->prod, __ATOMIC_ACQUIRE) != qp->sq_cons &&
	       h_cq_room(scq, qp->qpn)) {
		const struct sl_chan_sqe *e =
			sl_chan_ring_entry(qp->sq, qp->sq_cons++, qp->sq_depth, sizeof(*e));

		c.wr_id = e->wr_id;
		c.opcode = SL_WC_SEND;
		h_cq_push(scq, &c);
	}
	while (h_cq_room(rcq, qp->qpn) && h_rq_take(qp, &r)) {
		c.wr_id = r.wr_id;
		c.opcode = SL_WC_RECV;
		h_cq_push(rcq, &c);
	}
}

/*
 * Request q of client cl (with fd, -1: none) into r: its status; 1: served, fd kept. An fd to
 * send with the response goes to *rsp_fd.
 */
static int32_t
h_serve(struct h_daemon *d, struct h_client *cl, const struct sl_chan_req *q, int fd,
	struct sl_chan_rsp *r, int *rsp_fd)
{
	struct statfs fs;
	unsigned i;

	if (d->refuse[q->type])
		return d->refuse[q->type];
	if (q->type != SL_CHAN_HELLO && !cl->mem)
		return -EPROTO;
	switch (q->type) {
	case SL_CHAN_HELLO:
		if (fd < 0 || cl->mem)
			return -EINVAL;
		atomic_store(&d->seals, fcntl(fd, F_GET_SEALS));
		atomic_store(&d->fs_type, fstatfs(fd, &fs) == 0 ? (uint64_t)fs.f_type : 0);
		cl->mem =
			mmap(NULL, q->u.hello.mem_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (cl->mem == MAP_FAILED) {
			cl->mem = NULL;
			return -ENOMEM;
		}
		cl->mem_bytes = q->u.hello.mem_bytes;
		cl->base_va = q->u.hello.base_va;
		snprintf(r->u.hello.host, sizeof(r->u.hello.host), "fake-host");
		r->u.hello.client = (uint64_t)(cl - d->cl);
		r->u.hello.cq_rings = H_CQ_RINGS;
		atomic_fetch_add(&d->hellos, 1);
		return 0;
	case SL_CHAN_MR_REG:
		if (!h_ptr(cl, cl->base_va + q->u.mr_reg.off, q->u.mr_reg.len))
			return -EINVAL;
		for (i = 0; i < H_MAX && cl->mrs[i].key; i++)
			;
		if (i == H_MAX)
			return -ENOSPC;
		cl->mrs[i] = (struct h_mr){.key = H_KEY_BASE + i,
					   .va = q->u.mr_reg.addr,
					   .len = q->u.mr_reg.len,
					   .off = q->u.mr_reg.off,
					   .access = q->u.mr_reg.access};
		r->u.mr_reg.lkey = r->u.mr_reg.rkey = cl->mrs[i].key;
		return 0;
	case SL_CHAN_MR_DEREG:
		for (i = 0; i < H_MAX; i++)
			if (cl->mrs[i].key && cl->mrs[i].key == q->u.mr_dereg.lkey) {
				cl->mrs[i].key = 0;
				return 0;
			}
		return -ENOENT;
	case SL_CHAN_CQ_CREATE: {
		int sv[2];

		for (i = 0; i < H_MAX && cl->cqs[i].used; i++)
			;
		if (fd >= 0 || i == H_MAX ||
		    !h_ptr(cl, cl->base_va + q->u.cq_create.ring_off,
			   H_CQ_RINGS * SL_CHAN_RING_BYTES(q->u.cq_create.depth,
							   sizeof(struct sl_chan_cqe))))
			return fd >= 0 ? -EPROTO : -ENOSPC;
		if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) != 0)
			return -errno;
		cl->cqs[i] =
			(struct h_cq){.used = true,
				      .ring = sl_chan_ring_at(cl->mem, q->u.cq_create.ring_off),
				      .depth = q->u.cq_create.depth,
				      .event_fd = sv[0]};
		*rsp_fd = sv[1];
		r->u.cq_create.cq = i;
		return 0;
	}
	case SL_CHAN_CQ_DESTROY:
		i = q->u.cq_destroy.cq;
		if (i >= H_MAX || !cl->cqs[i].used)
			return -ENOENT;
		close(cl->cqs[i].event_fd);
		cl->cqs[i].used = false;
		return 0;
	case SL_CHAN_QP_CREATE:
		for (i = 0; i < H_MAX && d->qps[i].qpn; i++)
			;
		if (i == H_MAX)
			return -EMFILE;
		if (q->u.qp_create.send_cq >= H_MAX || !cl->cqs[q->u.qp_create.send_cq].used ||
		    q->u.qp_create.recv_cq >= H_MAX || !cl->cqs[q->u.qp_create.recv_cq].used)
			return -EINVAL;
		d->qps[i] = (struct h_qp){.qpn = H_QPN_BASE + i,
					  .cl = cl,
					  .sq = sl_chan_ring_at(cl->mem, q->u.qp_create.sq_off),
					  .rq = sl_chan_ring_at(cl->mem, q->u.qp_create.rq_off),
					  .sq_depth = q->u.qp_create.sq_depth,
					  .rq_depth = q->u.qp_create.rq_depth,
					  .send_cq = q->u.qp_create.send_cq,
					  .recv_cq = q->u.qp_create.recv_cq,
					  .max_msg_bytes = q->u.qp_create.max_msg_bytes,
					  .receiver = q->u.qp_create.receiver};
		memcpy(d->qps[i].program, q->u.qp_create.program, SL_NAME_MAX);
		r->u.qp_create.qpn = d->qps[i].qpn;
		/* as sluiced's: never 0 (a peer refuses token 0), here not random */
		r->u.qp_create.psn = H_PSN_BASE + i;
		r->u.qp_create.token = H_TOKEN_BASE + i;
		r->u.qp_create.seg_bytes = H_DAEMON_SEG_BYTES;
		r->u.qp_create.pkt_wire_bytes = H_DAEMON_PKT_WIRE_BYTES;
		return 0;
	case SL_CHAN_QP_CONNECT: {
		struct h_qp *qp = h_daemon_qp(d, q->u.qp_connect.qpn);

		if (!qp || qp->cl != cl || !h_daemon_qp(d, q->u.qp_connect.peer_qpn))
			return -EINVAL;
		if (qp->connected)
			return -EISCONN;
		qp->peer_qpn = q->u.qp_connect.peer_qpn;
		qp->connected = true;
		return 0;
	}
	case SL_CHAN_QP_DESTROY: {
		struct h_qp *qp = h_daemon_qp(d, q->u.qp_destroy.qpn);

		if (!qp || qp->cl != cl)
			return -ENOENT;
		h_qp_flush(qp);
		qp->qpn = 0;
		return 0;
	}
	}
	return -EINVAL;
}

/* cl hung up: its QPs, CQs, MRs and memory go; the slot is free. */
static void
h_client_gone(struct h_daemon *d, struct h_client *cl)
{
	close(cl->fd);
	for (unsigned i = 0; i < H_MAX; i++) {
		if (cl->cqs[i].used)
			close(cl->cqs[i].event_fd);
		if (d->qps[i].qpn && d->qps[i].cl == cl)
			d->qps[i].qpn = 0;
	}
	if (cl->mem)
		munmap(cl->mem, cl->mem_bytes);
	memset(cl, 0, sizeof(*cl));
	cl->fd = -1;
}

/* One request from cl, or its hang-up. */
static void
h_request(struct h_daemon *d, struct h_client *cl)
{
	struct sl_chan_req q;
	struct sl_chan_rsp r = {.magic = SL_CHAN_MAGIC};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = &q, .iov_len = sizeof(q)};
	struct msghdr m = {.msg_iov = &iov,
			   .msg_iovlen = 1,
			   .msg_control = u.buf,
			   .msg_controllen = sizeof(u.buf)};
	struct cmsghdr *c;
	ssize_t n = recvmsg(cl->fd, &m, MSG_CMSG_CLOEXEC);
	int fd = -1, rsp_fd = -1;
	int32_t st;

	if (n > 0 && (c = CMSG_FIRSTHDR(&m)) && c->cmsg_level == SOL_SOCKET &&
	    c->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(c), sizeof(fd));
	if (n != sizeof(q) || q.magic != SL_CHAN_MAGIC || !q.type || q.type > SL_CHAN_TYPE_MAX) {
		if (fd >= 0)
			close(fd);
		h_client_gone(d, cl);
		return;
	}
	atomic_fetch_add(&d->requests[q.type], 1);
	r.version = d->version;
	r.type = q.type;
	r.seq = q.seq;
	st = h_serve(d, cl, &q, fd, &r, &rsp_fd);
	if (st > 0)
		st = 0;
	else if (fd >= 0)
		close(fd);
	r.status = st;
	n = sl_fdmsg_send(cl->fd, &r, sizeof(r), rsp_fd, MSG_NOSIGNAL);
	if (rsp_fd >= 0)
		close(rsp_fd);
	if (n != sizeof(r))
		h_client_gone(d, cl);
}

/* Answer cl with d->refuse_connect (seq 0) and hang up, before it asks anything. */
static void
h_refuse(struct h_daemon *d, struct h_client *cl)
{
	struct sl_chan_rsp r = {.magic = SL_CHAN_MAGIC,
				.version = d->version,
				.type = SL_CHAN_HELLO,
				.status = d->refuse_connect};

	if (send(cl->fd, &r, sizeof(r), MSG_NOSIGNAL) != sizeof(r))
		abort();
	close(cl->fd);
	cl->fd = -1;
}

static void *
h_run(void *arg)
{
	struct h_daemon *d = arg;

	while (!atomic_load(&d->stop)) {
		struct pollfd p[1 + H_CLIENTS] = {{.fd = d->lfd, .events = POLLIN}};

		for (unsigned i = 0; i < H_CLIENTS; i++)
			p[1 + i] = (struct pollfd){.fd = d->cl[i].fd, .events = POLLIN};
		if (poll(p, 1 + H_CLIENTS, 1) > 0) {
			pthread_mutex_lock(&d->lock);
			for (unsigned i = 0; i < H_CLIENTS; i++)
				if (d->cl[i].fd >= 0 && p[1 + i].revents)
					h_request(d, &d->cl[i]);
			for (unsigned i = 0; i < H_CLIENTS && (p[0].revents & POLLIN); i++)
				if (d->cl[i].fd < 0) {
					d->cl[i].fd = accept4(d->lfd, NULL, NULL, SOCK_CLOEXEC);
					if (d->cl[i].fd >= 0 && d->refuse_connect != 0)
						h_refuse(d, &d->cl[i]);
					break;
				}
			pthread_mutex_unlock(&d->lock);
		}
		/* lane is read under the lock: a test that clears it and then takes the lock
		 * knows that no pass is under way or to come */
		pthread_mutex_lock(&d->lock);
		if (atomic_load(&d->lane))
			h_lane(d);
		pthread_mutex_unlock(&d->lock);
	}
	for (unsigned i = 0; i < H_CLIENTS; i++)
		if (d->cl[i].fd >= 0)
			h_client_gone(d, &d->cl[i]);
	return NULL;
}

void
h_daemon_start(struct h_daemon *d, const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	memset(d, 0, sizeof(*d));
	d->version = SL_CHAN_VERSION;
	for (unsigned i = 0; i < H_CLIENTS; i++)
		d->cl[i].fd = -1;
	atomic_store(&d->lane, true);
	pthread_mutex_init(&d->lock, NULL);
	if (path) {
		snprintf(d->path, sizeof(d->path), "%s", path);
	} else {
		snprintf(d->dir, sizeof(d->dir), "/tmp/sl_api_test.XXXXXX");
		if (!mkdtemp(d->dir))
			abort();
		snprintf(d->path, sizeof(d->path), "%s/sluiced.sock", d->dir);
	}
	strcpy(sa.sun_path, d->path);
	unlink(d->path);
	d->lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (d->lfd < 0 || bind(d->lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(d->lfd, 4) ||
	    pthread_create(&d->thread, NULL, h_run, d))
		abort();
}

struct sl_ctx *
h_daemon_start_ctx(struct h_daemon *d, uint64_t mem_bytes)
{
	struct sl_ctx *ctx;

	h_daemon_start(d, NULL);
	ctx = sl_ctx_open(d->path, &(struct sl_ctx_attr){.mem_bytes = mem_bytes});
	if (!ctx)
		abort();
	return ctx;
}

void
h_daemon_stop(struct h_daemon *d)
{
	atomic_store(&d->stop, true);
	pthread_join(d->thread, NULL);
	close(d->lfd);
	unlink(d->path);
	if (d->dir[0])
		rmdir(d->dir);
	pthread_mutex_destroy(&d->lock);
}

bool
h_daemon_wait_no_client(struct h_daemon *d, int timeout_ms)
{
	for (int i = 0; i < timeout_ms; i++) {
		bool none = true;

		pthread_mutex_lock(&d->lock);
		for (unsigned k = 0; k < H_CLIENTS; k++)
			none = none && d->cl[k].mem == NULL;
		pthread_mutex_unlock(&d->lock);
		if (none)
			return true;
		usleep(1000);
	}
	return false;
}
