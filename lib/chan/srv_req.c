/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * srv_req.c - the control half's requests (srv.c says the rules they keep): HELLO and the
 * application's memory, memory regions, CQs and their event fds, QPs and the commands that
 * open, connect and destroy them on a lane. Every address and ring a request names is checked
 * against the client's memory, without overflow, before a pointer is computed from it; every
 * resource against the client's quota (srv_quota_check()).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>

#include "sl_pacer.h"
#include "sl_proto.h"
#include "sl_recv.h"
#include "srv_priv.h"

/* [off, off + bytes) lies in a memory of mem_bytes. */
static bool
in_mem(uint64_t off, uint64_t bytes, uint64_t mem_bytes)
{
	return off <= mem_bytes && bytes <= mem_bytes - off;
}

static bool
overlap(uint64_t a, uint64_t a_bytes, uint64_t b, uint64_t b_bytes)
{
	return a < b + b_bytes && b < a + a_bytes;
}

/* (srv_priv.h) */
int
srv_quota_check(uint64_t held, uint64_t n, uint64_t limit, uint64_t *refusals)
{
	if (limit != 0 && (n > limit || held > limit - n)) {
		srv_count(refusals, 1);
		return -EDQUOT;
	}
	return 0;
}

/* Wire bytes the pacer charges a packet of a QP running ops beyond its segment. */
static uint32_t
pkt_wire_bytes(const struct sl_chan_srv *s, const struct sl_proto_ops *ops)
{
	return sl_xport_hdr_bytes(ops) + s->conf.frame_overhead_bytes;
}

/* A ring of depth entries of esize bytes at off: aligned, inside the memory, depth 2^k. */
static bool
ring_ok(const struct client *cl, uint64_t off, uint32_t depth, uint32_t esize)
{
	return depth >= 1 && depth <= SL_CHAN_RING_MAX && sl_is_pow2(depth) &&
	       off % RING_ALIGN == 0 &&
	       in_mem(off, SL_CHAN_RING_BYTES(depth, esize), cl->mem_bytes);
}

/*
 * The lanes touch an application's memory (its rings, the buffers its MRs name) with plain loads
 * and stores on their lcores: a page of it must never vanish under them (SIGBUS kills the
 * daemon), nor may a touch sleep on anything the application controls (the lane would stall
 * every QP it serves). Only a memfd on tmpfs (shmem) holds to both:
 *
 *  - tmpfs: a hole the application punches (fallocate PUNCH_HOLE, madvise MADV_REMOVE) is
 *    filled with a fresh zeroed page at the next touch: the application loses its own data, the
 *    daemon takes an ordinary fault. Only a truncation would leave the mapping past the end of
 *    the file (SIGBUS there): hence F_SEAL_SHRINK, required. A tmpfs file carrying it is a
 *    memfd (every other is born sealed with F_SEAL_SEAL alone), and memfds live on the kernel's
 *    own tmpfs mount, which has no size limit: the fill cannot fail for want of space.
 *  - hugetlbfs (a memfd made with MFD_HUGETLB): F_SEAL_SHRINK does not stop a punched hole,
 *    which returns the page to the huge page pool, and the next touch is a SIGBUS when the pool
 *    is empty. Its f_type is HUGETLBFS_MAGIC, not TMPFS_MAGIC: refused by the type check.
 *  - any other file system (a disk, NFS, FUSE): a fault may wait on a device, a server or a
 *    process the application runs (a FUSE server that never answers). Such a file cannot carry
 *    seals at all (F_GET_SEALS fails), which refuses it before any question to its file system.
 *
 * F_SEAL_GROW is not required: the daemon maps mem_bytes once, and growth past that changes
 * nothing it maps. Nor is F_SEAL_SEAL: seals are never removed, and none added later reaches the
 * daemon's mapping (F_SEAL_WRITE cannot be added while a shared writable mapping exists,
 * F_SEAL_FUTURE_WRITE spares the mappings made before it).
 */
int
sl_chan_srv_mem_check(int seals, uint64_t fs_type, mode_t mode, uint64_t size, uint64_t bytes)
{
	if (seals < 0 || fs_type != TMPFS_MAGIC || !S_ISREG(mode) || size != bytes)
		return -EINVAL;
	return seals & F_SEAL_SHRINK ? 0 : -EPERM;
}

/*
 * What sl_chan_srv_mem_check decides on, read in an order the application cannot turn against
 * the daemon: the seals first, since F_GET_SEALS asks no file system and only shmem and
 * hugetlbfs files answer it (fstatfs or fstat of a file on FUSE could wait on its server); the
 * size last, once F_SEAL_SHRINK is known, so that the file cannot shrink after it was read.
 */
static int
mem_check(int fd, uint64_t bytes)
{
	int seals = fcntl(fd, F_GET_SEALS);
	struct statfs fs = {0};
	struct stat st = {0};

	if (seals >= 0 && (fstatfs(fd, &fs) != 0 || fstat(fd, &st) != 0))
		return -errno;
	return sl_chan_srv_mem_check(seals, (uint64_t)fs.f_type, st.st_mode, (uint64_t)st.st_size,
				     bytes);
}

static int
do_hello(struct sl_chan_srv *s, struct client *cl, const struct sl_chan_req *q, int *fd,
	 struct sl_chan_rsp *r)
{
	uint64_t bytes = q->u.hello.mem_bytes;
	void *mem;
	int rc;

	if (cl->state != SL_CHAN_CLIENT_ACCEPTED)
		return -EPROTO;
	rc = bytes == 0 || bytes > SL_CHAN_MEM_MAX || q->u.hello.base_va > UINT64_MAX - bytes
		     ? -EINVAL
		     : mem_check(*fd, bytes);
	if (rc != 0) {
		srv_count(&s->stats.hello_mem_refused, 1);
		return rc;
	}
	mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
	if (mem == MAP_FAILED)
		return -errno;
	cl->mem = mem;
	cl->mem_bytes = bytes;
	cl->base_va = q->u.hello.base_va;
	cl->memfd = *fd;
	*fd = -1;
	cl->state = SL_CHAN_CLIENT_ATTACHED;
	snprintf(r->u.hello.host, sizeof(r->u.hello.host), "%s", s->host);
	r->u.hello.client = cl->id;
	r->u.hello.cq_rings = s->n_lanes;
	return 0;
}

static int
do_mr_reg(struct sl_chan_srv *s, struct client *cl, const struct sl_chan_req *q,
	  struct sl_chan_rsp *r)
{
	uint64_t va = q->u.mr_reg.addr, len = q->u.mr_reg.len, off = q->u.mr_reg.off;
	uint32_t access = q->u.mr_reg.access;
	int rc;

	/* The address is the application's name for the region; only off says what it is. */
	if (len == 0 || va > UINT64_MAX - len || !in_mem(off, len, cl->mem_bytes) ||
	    (access & ~ACCESS_ALL) ||
	    ((access & SL_ACCESS_REMOTE_WRITE) && !(access & SL_ACCESS_LOCAL_WRITE)))
		return -EINVAL;
	rc = srv_quota_check(cl->mrs, 1, s->conf.client_mrs, &s->stats.quota_mrs);
	if (rc == 0)
		rc = srv_quota_check(cl->mr_bytes, len, s->conf.client_mr_bytes,
				     &s->stats.quota_mr_bytes);
	if (rc == 0)
		rc = sl_chan_mrs_add(s->mrs, cl->id, va, len, cl->mem + off, access,
				     &r->u.mr_reg.lkey, &r->u.mr_reg.rkey);
	if (rc != 0)
		return rc;
	cl->mrs++;
	cl->mr_bytes += len;
	srv_count(&s->stats.mrs, 1);
	return 0;
}

static int
do_mr_dereg(struct sl_chan_srv *s, struct client *cl, const struct sl_chan_req *q)
{
	uint64_t len;
	int rc = sl_chan_mrs_del(s->mrs, cl->id, q->u.mr_dereg.lkey, &len);

	if (rc != 0)
		return rc;
	cl->mrs--;
	cl->mr_bytes -= len;
	srv_count(&s->stats.mrs, -1);
	return 0;
}

/*
 * A CQ's event fd (see the top of this file): *mine, the daemon's end, never blocks a send and
 * takes no data; *theirs goes to the application.
 */
static int
event_pair(int *mine, int *theirs)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) != 0)
		return -errno;
	if (shutdown(sv[0], SHUT_RD) != 0) {
		int rc = -errno;

		close(sv[0]);
		close(sv[1]);
		return rc;
	}
	*mine = sv[0];
	*theirs = sv[1];
	return 0;
}

static int
do_cq_create(struct sl_chan_srv *s, struct client *cl, const struct sl_chan_req *q, int *rsp_fd,
	     struct sl_chan_rsp *r)
{
	uint64_t off = q->u.cq_create.ring_off;
	uint32_t depth = q->u.cq_create.depth;
	uint64_t ring_bytes = SL_CHAN_RING_BYTES(depth, sizeof(struct sl_chan_cqe));
	struct cq *c = NULL;
	int event_fd, rc;

	/* one ring a lane, one after the other (sl_chan_abi.h) */
	for (unsigned i = 0; i < s->n_lanes; i++)
		if (!ring_ok(cl, off + i * ring_bytes, depth, sizeof(struct sl_chan_cqe)))
			return -EINVAL;
	rc = srv_quota_check(cl->cqs, 1, s->conf.client_cqs, &s->stats.quota_cqs);
	if (rc != 0)
		return rc;
	for (uint32_t i = 0; i < s->conf.max_cqs && c == NULL; i++)
		if (!s->cqs[i].used)
			c = &s->cqs[i];
	if (c == NULL)
		return -ENOSPC;
	rc = event_pair(&event_fd, rsp_fd);
	if (rc != 0)
		return rc;
	*c = (struct cq){
		.cq = {.id = (uint32_t)(c - s->cqs) + 1,
		       .client = cl->id,
		       .depth = depth,
		       .event_fd = event_fd,
		       .rings = s->n_lanes},
		.used = true,
		.off = off,
		.bytes = s->n_lanes * ring_bytes,
	};
	for (unsigned i = 0; i < s->n_lanes; i++)
		c->cq.lane[i].ring = sl_chan_cq_ring(sl_chan_ring_at(cl->mem, off), depth, i);
	cl->cqs++;
	srv_count(&s->stats.cqs, 1);
	r->u.cq_create.cq = c->cq.id;
	return 0;
}

/* The client's CQ with handle id, or NULL. */
static struct cq *
cq_of(struct sl_chan_srv *s, const struct client *cl, uint32_t id)
{
	struct cq *c = id >= 1 && id <= s->conf.max_cqs ? &s->cqs[id - 1] : NULL;

	return c != NULL && c->used && c->cq.client == cl->id ? c : NULL;
}

static int
do_cq_destroy(struct sl_chan_srv *s, struct client *cl, const struct sl_chan_req *q)
{
	struct cq *c = cq_of(s, cl, q->u.cq_destroy.cq);

	if (c == NULL)
		return -ENOENT;
	if (c->qps != 0)
		return -EBUSY;
	srv_cq_free(s, cl, c);
	return 0;
}

/* The client's QP qpn, or NULL. */
static struct qp *
qp_of(struct sl_chan_srv *s, const struct client *cl, uint32_t qpn)
{
	struct qp *q =
		qpn - s->conf.qpn_base < s->conf.qps ? &s->qps[qpn - s->conf.qpn_base] : NULL;

	return q != NULL && q->state != QP_FREE && q->cl == cl ? q : NULL;
}

/* Check QP_CREATE's request and fill conf from it; 0 or -errno. */
static int
qp_check(struct sl_chan_srv *s, struct client *cl, const struct sl_chan_req *q,
	 struct sl_chan_qp_conf *conf)
{
	const __typeof__(q->u.qp_create) *a = &q->u.qp_create;
	uint64_t sq_bytes = SL_CHAN_RING_BYTES(a->sq_depth, sizeof(struct sl_chan_sqe));
	uint64_t rq_bytes = SL_CHAN_RING_BYTES(a->rq_depth, sizeof(struct sl_chan_rqe));
	struct cq *scq = cq_of(s, cl, a->send_cq), *rcq = cq_of(s, cl, a->recv_cq);
	const struct sl_proto_ops *ops;
	char program[SL_NAME_MAX];
	uint64_t wire_bps;

	if (scq == NULL || rcq == NULL ||
	    !ring_ok(cl, a->sq_off, a->sq_depth, sizeof(struct sl_chan_sqe)) ||
	    !ring_ok(cl, a->rq_off, a->rq_depth, sizeof(struct sl_chan_rqe)) ||
	    overlap(a->sq_off, sq_bytes, a->rq_off, rq_bytes) ||
	    overlap(a->sq_off, sq_bytes, scq->off, scq->bytes) ||
	    overlap(a->sq_off, sq_bytes, rcq->off, rcq->bytes) ||
	    overlap(a->rq_off, rq_bytes, scq->off, scq->bytes) ||
	    overlap(a->rq_off, rq_bytes, rcq->off, rcq->bytes) ||
	    a->max_msg_bytes > SL_XPORT_MSG_MAX ||
	    (a->rate_limit_bps != 0 && a->rate_limit_bps < SL_PACER_RATE_MIN_BPS) ||
	    memchr(a->program, '\0', sizeof(a->program)) == NULL ||
	    memchr(a->pacer, '\0', sizeof(a->pacer)) == NULL ||
	    (a->receiver != SL_RECEIVER_MELO && a->receiver != SL_RECEIVER_GBN))
		return -EINVAL;
	snprintf(program, sizeof(program), "%s", a->program[0] ? a->program : s->program);
	ops = sl_proto_find(program);
	if (ops == NULL || (a->pacer[0] != '\0' && strcmp(a->pacer, "tassel") != 0))
		return -ENOENT;
	wire_bps = a->rate_limit_bps;
	if (a->rate_msg_bytes != 0) {
		/* a payload rate for messages of rate_msg_bytes: what the wire carries for them */
		unsigned __int128 w = (unsigned __int128)a->rate_limit_bps *
				      sl_chan_wire_bytes(s->conf.seg_bytes, pkt_wire_bytes(s, ops),
							 a->rate_msg_bytes) /
				      a->rate_msg_bytes;

		wire_bps = w > UINT64_MAX ? UINT64_MAX : (uint64_t)w;
	}
	*conf = (struct sl_chan_qp_conf){
		.client = cl->id,
		.mrs = s->mrs,
		.mem = cl->mem,
		.mem_bytes = cl->mem_bytes,
		.base_va = cl->base_va,
		.send_cq = &scq->cq,
		.recv_cq = &rcq->cq,
		.sq = sl_chan_ring_at(cl->mem, a->sq_off),
		.rq = sl_chan_ring_at(cl->mem, a->rq_off),
		.sq_depth = a->sq_depth,
		.rq_depth = a->rq_depth,
		.max_msg_bytes = a->max_msg_bytes ? a->max_msg_bytes : SL_CHAN_MSG_DEFAULT,
		.xqp = {.seg_bytes = s->conf.seg_bytes,
			.rto_ns = s->conf.rto_ns,
			.timeout_ns = s->conf.timeout_ns,
			.recv_mode = a->receiver == SL_RECEIVER_GBN ? SL_RECV_GBN : SL_RECV_MELO,
			.max_rate_bps = ops->credit == SL_CREDIT_GRANT ? 0 : wire_bps},
	};
	memcpy(conf->program, program, sizeof(program));
	return 0;
}

/*
 * qp's connection identity, from the kernel's CSPRNG: the PSN of its first packet and its token,
 * which every frame for it must carry. The token is never the slot's previous one, so the QPN
 * reused refuses whatever its predecessor's peer still sends, and never 0, the built-in [qp]
 * traffic's (an application cannot connect to token 0: do_qp_connect). 0, or -errno.
 */
static int
qp_identity(struct qp *qp)
{
	uint32_t w[2];

	do {
		ssize_t n = getrandom(w, sizeof(w), 0);

		if (n != (ssize_t)sizeof(w))
			return n < 0 ? -errno : -EIO;
	} while (w[1] == qp->last_token || w[1] == 0);
	qp->conf.xqp.send_psn = w[0];
	qp->conf.xqp.token = w[1];
	qp->last_token = w[1];
	return 0;
}

static int
do_qp_create(struct sl_chan_srv *s, struct client *cl, const struct sl_chan_req *q,
	     struct sl_chan_rsp *r)
{
	struct sl_chan_qp_conf conf;
	struct qp *qp = NULL;
	int rc = qp_check(s, cl, q, &conf);

	if (rc == 0)
		rc = srv_quota_check(cl->qps, 1, s->conf.client_qps, &s->stats.quota_qps);
	if (rc != 0)
		return rc;
	for (uint32_t i = 0; i < s->conf.qps && qp == NULL; i++)
		if (s->qps[i].state == QP_FREE)
			qp = &s->qps[i];
	if (qp == NULL)
		return -EMFILE;
	qp->conf = conf;
	rc = qp_identity(qp);
	if (rc != 0)
		return rc;
	qp->state = QP_OPEN;
	qp->cl = cl;
	qp->conf.xqp.qpn = s->conf.qpn_base + (uint32_t)(qp - s->qps);
	qp->conf.xqp.proto = qp->conf.program;
	cl->qps++;
	s->cqs[conf.send_cq->id - 1].qps++;
	s->cqs[conf.recv_cq->id - 1].qps++;
	srv_count(&s->stats.qps, 1);
	r->u.qp_create.qpn = qp->conf.xqp.qpn;
	r->u.qp_create.seg_bytes = qp->conf.xqp.seg_bytes;
	r->u.qp_create.pkt_wire_bytes = pkt_wire_bytes(s, sl_proto_find(qp->conf.program));
	r->u.qp_create.psn = qp->conf.xqp.send_psn;
	r->u.qp_create.token = qp->conf.xqp.token;
	return 0;
}

static int
do_qp_connect(struct sl_chan_srv *s, struct client *cl, const struct sl_chan_req *q)
{
	struct qp *qp = qp_of(s, cl, q->u.qp_connect.qpn);
	int rc;

	if (qp == NULL || q->u.qp_connect.peer_qpn >= (1u << 24) || q->u.qp_connect.peer_token == 0)
		return -EINVAL;
	if (!srv_answered(&qp->p))
		return -EBUSY;
	if (qp->state == QP_CONNECTED)
		return -EISCONN;
	/* the lane reads the peer from the conf once it takes the command (the mailbox orders
	 * these stores before it); nothing of the lane's reads them before */
	qp->conf.xqp.peer_qpn = q->u.qp_connect.peer_qpn;
	qp->conf.xqp.recv_psn = q->u.qp_connect.peer_psn;
	qp->conf.xqp.peer_token = q->u.qp_connect.peer_token;
	qp->lane = sl_chan_srv_lane_of(s->n_lanes, qp->conf.xqp.qpn, qp->conf.xqp.peer_qpn);
	rc = srv_call(s, s->lanes[qp->lane], &qp->p, SL_CHAN_CMD_QP_CONNECT, cl->id,
		      qp->conf.xqp.qpn, &qp->conf);
	if (rc == 0)
		qp->state = QP_CONNECTED;
	return rc; /* -ETIMEDOUT: connected when the lane answers (qp_reap) */
}

static int
do_qp_destroy(struct sl_chan_srv *s, struct client *cl, const struct sl_chan_req *q)
{
	struct qp *qp = qp_of(s, cl, q->u.qp_destroy.qpn);
	int rc;

	if (qp == NULL)
		return -ENOENT;
	if (!srv_answered(&qp->p))
		return -EBUSY;
	if (qp->state == QP_OPEN) { /* on no lane */
		srv_qp_free(s, qp);
		return 0;
	}
	rc = srv_call(s, s->lanes[qp->lane], &qp->p, SL_CHAN_CMD_QP_DESTROY, cl->id,
		      qp->conf.xqp.qpn, NULL);
	if (rc == -ETIMEDOUT)
		return rc; /* freed when the lane answers (qp_reap) */
	if (qp->p.unposted)
		return rc; /* the lane never saw it: the QP is still open there */
	srv_qp_free(s, qp);
	return rc;
}

/* (srv_priv.h) */
unsigned
srv_fds_wanted(uint16_t type)
{
	return type == SL_CHAN_HELLO;
}

/* (srv_priv.h) */
int
srv_serve(struct sl_chan_srv *s, struct client *cl, const struct sl_chan_req *q, int *fd,
	  struct sl_chan_rsp *r, int *rsp_fd)
{
	if (q->type == SL_CHAN_HELLO)
		return do_hello(s, cl, q, fd, r);
	if (cl->state != SL_CHAN_CLIENT_ATTACHED)
		return -EPROTO;
	switch (q->type) {
	case SL_CHAN_MR_REG:
		return do_mr_reg(s, cl, q, r);
	case SL_CHAN_MR_DEREG:
		return do_mr_dereg(s, cl, q);
	case SL_CHAN_CQ_CREATE:
		return do_cq_create(s, cl, q, rsp_fd, r);
	case SL_CHAN_CQ_DESTROY:
		return do_cq_destroy(s, cl, q);
	case SL_CHAN_QP_CREATE:
		return do_qp_create(s, cl, q, r);
	case SL_CHAN_QP_CONNECT:
		return do_qp_connect(s, cl, q);
	default:
		return do_qp_destroy(s, cl, q);
	}
}
