/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_chan_tenants.c - two applications on one channel server (lib/chan/fuzz_srv.c), checked
 * against a model of what each owns: a client is a protection domain, so nothing one of them
 * asks may reach or change what the other holds.
 *
 * Set-up, per input: a real server on a socket in a temporary directory (made once), a lane
 * double that answers every command at once with success, and two clients, A and B, each saying
 * HELLO with its own sealed 1 MiB memfd mapped at its own base VA (the two VA windows do not
 * overlap, so an address of one is never inside the other's memory).
 *
 * Input: records of REC_BYTES (a short tail is dropped), at most RECS_MAX per input. Byte 0
 * (ctl): bit 0, the sender (A or B); bits 1-3, the request (MR_REG, MR_DEREG, CQ_CREATE,
 * CQ_DESTROY, QP_CREATE, QP_CONNECT, QP_DESTROY, or HELLO again); bits 4-5, where the fields that
 * name objects come from: 0 and 1 the sender's own model (a handle it was given), 2 the other
 * client's model (the attack), 3 the input's bytes (random); bits 6-7 = 3, and the last
 * parameter byte a multiple of 4: the request goes malformed (a byte short, or a magic bit
 * flipped), one in sixteen. Bytes 1-16 are parameters: which handle, offsets, depths, raw
 * values. Magic, version, type and seq are filled in, and offsets, depths and lengths are drawn
 * so that most requests are well-formed and many succeed, which is what lets the model grow and
 * the checks bite.
 *
 * The model keeps, per client, from the answers it got: MRs (lkey, rkey, va, len), CQ handles,
 * QPs (QPN, its two CQs, whether it connected). The lane double keeps which client's QP it
 * took for each QPN (a QP reaches the lane when it connects). Checked after
 * every request (any violation aborts):
 *  - a request naming an object of the other client (its lkey or rkey in MR_DEREG, its CQ in
 *    CQ_DESTROY or in QP_CREATE's send_cq / recv_cq, its QPN in QP_CONNECT or QP_DESTROY) is
 *    refused, and the lane is told nothing (MR_REG names no memory but by an offset into the
 *    sender's own, so an address in the other's VA window is only a name);
 *  - a refused request changes nothing: the server's counts of MRs, CQs and QPs stay;
 *  - a success is consistent: MR_DEREG, CQ_DESTROY, QP_CONNECT and QP_DESTROY succeed only on the
 *    sender's own objects (MR_DEREG only with an lkey, never an rkey); CQ_DESTROY never while a
 *    QP of the model names the CQ; new keys, CQ handles and QPNs are unlike every live one; a CQ
 *    comes with exactly one fd (closed here; no other answer carries any);
 *  - every key of a client resolves for it (sl_chan_mrs_find, its region's whole range, each
 *    kind under its own kind only) and for the other client never, neither kind;
 *  - the server's counts (stats mrs, cqs, qps) equal the model's sums, and the lane double's
 *    QPs are exactly the model's connected ones, each under its owner; every command the lane
 *    gets about a QP carries the client that owns it, and a QP_CONNECT's CQs belong to that
 *    client.
 * At the end one client hangs up (which one, the input's length decides): the other's MRs,
 * CQs and QPs are intact (keys resolve, counts and the lane's QPs are its own) and it is still
 * served; the gone one's keys resolve for no one. Then the other hangs up and everything is
 * released.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "fuzz_chan_harness.h"
#include "sl_fdmsg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MEM_BYTES (1u << 20)
#define BASE_VA_A UINT64_C(0x7f0000000000)
#define BASE_VA_B UINT64_C(0x7e0000000000)
#define QPN_BASE 100u
#define QPS 8u
#define MAX_MRS 16u
#define MAX_CQS 8u
#define REC_BYTES 17u
#define RECS_MAX 64u
#define SLOT_BYTES (16u << 10) /**< rings are drawn at multiples of this */
#define CQ_SLOTS 16u           /**< CQ rings in the first CQ_SLOTS slots */
#define QP_SLOTS 24u           /**< SQs after them, then RQs, QP_SLOTS slots each */

/* --- the lane double ----------------------------------------------------------------------- */

/* Every command is answered at once, with success; the client of QP_CONNECT is kept per QPN. */
struct sl_chan_lane {
	uint32_t base, n;     /**< QPNs it owns */
	uint64_t owner[QPS];  /**< the client whose QP it took; 0: none */
	uint64_t cmds;        /**< commands taken */
	uint64_t gone_client; /**< the last CLIENT_GONE's */
};

int
sl_chan_lane_call(struct sl_chan_lane *cl, struct sl_chan_cmd *cmd, uint64_t timeout_ns)
{
	uint32_t i = cmd->qpn - cl->base;

	(void)timeout_ns;
	cl->cmds++;
	switch (cmd->type) {
	case SL_CHAN_CMD_QP_CONNECT:
		fuzz_check(i < cl->n && cl->owner[i] == 0, "QP_CONNECT of a QPN the lane holds");
		fuzz_check(cmd->qp != NULL && cmd->qp->client == cmd->client &&
				   cmd->qp->xqp.qpn == cmd->qpn &&
				   cmd->qp->send_cq->client == cmd->client &&
				   cmd->qp->recv_cq->client == cmd->client,
			   "QP_CONNECT with another client's CQ, or a conf not the client's");
		cl->owner[i] = cmd->client;
		break;
	case SL_CHAN_CMD_QP_DESTROY:
		fuzz_check(i < cl->n && cl->owner[i] == cmd->client,
			   "QP_DESTROY of a QP for a client whose QP the lane did not take");
		cl->owner[i] = 0;
		break;
	case SL_CHAN_CMD_CLIENT_GONE:
		for (uint32_t k = 0; k < cl->n; k++)
			if (cl->owner[k] == cmd->client)
				cl->owner[k] = 0;
		cl->gone_client = cmd->client;
		break;
	default:
		fuzz_check(false, "an unknown command");
	}
	cmd->result = 0;
	atomic_store_explicit(&cmd->done, true, memory_order_release);
	return 0;
}

bool
sl_chan_lane_owns(const struct sl_chan_lane *cl, uint32_t qpn)
{
	return qpn - cl->base < cl->n;
}

/* The server's one lane. */
uint32_t
sl_chan_lane_index(const struct sl_chan_lane *cl)
{
	(void)cl;
	return 0;
}

/* --- the model ----------------------------------------------------------------------------- */

struct mr {
	uint32_t lkey, rkey;
	uint64_t va, len; /**< bytes */
};

struct qp {
	uint32_t qpn, send_cq, recv_cq;
	bool connected; /**< on the lane */
};

/* A client and what it owns, as its answers told it. */
struct tenant {
	int fd, memfd;
	uint64_t id;
	uint64_t base_va;
	struct mr mr[MAX_MRS];
	unsigned n_mr;
	uint32_t cq[MAX_CQS];
	unsigned n_cq;
	struct qp qp[QPS];
	unsigned n_qp;
	uint32_t seq;
};

static struct sl_chan_lane lane = {.base = QPN_BASE, .n = QPS};

/* --- the clients' side of the socket ------------------------------------------------------- */

/* Send len bytes, with fd (SCM_RIGHTS) unless it is -1. */
static void
send_msg(int fd, const void *buf, size_t len, int with_fd)
{
	fuzz_check(sl_fdmsg_send(fd, buf, len, with_fd, MSG_NOSIGNAL) == (ssize_t)len, "send");
}

/* Read one answer into r if there is one; every fd it carried is closed. Returns the number of
 * fds (-1: no answer). */
static int
recv_rsp(int fd, struct sl_chan_rsp *r)
{
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = {.iov_base = r, .iov_len = sizeof(*r)};
	struct msghdr m = {.msg_iov = &iov,
			   .msg_iovlen = 1,
			   .msg_control = ctl.buf,
			   .msg_controllen = sizeof(ctl.buf)};
	int n_fds = 0;

	if (recvmsg(fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) != (ssize_t)sizeof(*r))
		return -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c != NULL; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			int rfd;

			memcpy(&rfd, CMSG_DATA(c) + i * sizeof(int), sizeof(rfd));
			close(rfd);
			n_fds++;
		}
	}
	return n_fds;
}

/* Serve until the client's answer comes; every request sent here has a header to answer. */
static int
await(const struct tenant *t, struct sl_chan_rsp *r)
{
	for (int i = 0; i < 8; i++) {
		struct pollfd p = {.fd = t->fd, .events = POLLIN};

		fuzz_check(sl_chan_srv_poll(fuzz_srv, 0) == 0, "poll failed");
		if (poll(&p, 1, 0) == 1) {
			int n = recv_rsp(t->fd, r);

			fuzz_check(n >= 0, "an answer of the wrong size");
			return n;
		}
	}
	fuzz_check(false, "a request went unanswered");
	return -1;
}

static int
memfd(void)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	fuzz_check(fd >= 0 && ftruncate(fd, MEM_BYTES) == 0 &&
			   fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) == 0,
		   "memfd");
	return fd;
}

static void
attach(struct tenant *t, uint64_t base_va)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	struct sl_chan_req q = {.magic = SL_CHAN_MAGIC,
				.version = SL_CHAN_VERSION,
				.type = SL_CHAN_HELLO,
				.u.hello = {MEM_BYTES, base_va}};
	struct sl_chan_rsp r;

	memset(t, 0, sizeof(*t));
	t->base_va = base_va;
	t->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", fuzz_srv_path);
	fuzz_check(t->fd >= 0 && connect(t->fd, (struct sockaddr *)&a, sizeof(a)) == 0, "connect");
	t->memfd = memfd();
	send_msg(t->fd, &q, sizeof(q), t->memfd);
	fuzz_check(await(t, &r) == 0 && r.status == 0 && r.type == SL_CHAN_HELLO &&
			   r.u.hello.client != 0,
		   "HELLO refused");
	t->id = r.u.hello.client;
}

/* --- what a tenant owns -------------------------------------------------------------------- */

static int
mr_by_lkey(const struct tenant *t, uint32_t lkey)
{
	for (unsigned i = 0; i < t->n_mr; i++)
		if (t->mr[i].lkey == lkey)
			return (int)i;
	return -1;
}

static bool
owns_key(const struct tenant *t, uint32_t key)
{
	for (unsigned i = 0; i < t->n_mr; i++)
		if (t->mr[i].lkey == key || t->mr[i].rkey == key)
			return true;
	return false;
}

static int
cq_idx(const struct tenant *t, uint32_t cq)
{
	for (unsigned i = 0; i < t->n_cq; i++)
		if (t->cq[i] == cq)
			return (int)i;
	return -1;
}

static int
qp_idx(const struct tenant *t, uint32_t qpn)
{
	for (unsigned i = 0; i < t->n_qp; i++)
		if (t->qp[i].qpn == qpn)
			return (int)i;
	return -1;
}

static bool
cq_named(const struct tenant *t, uint32_t cq)
{
	for (unsigned i = 0; i < t->n_qp; i++)
		if (t->qp[i].send_cq == cq || t->qp[i].recv_cq == cq)
			return true;
	return false;
}

/* Whether key of kind resolves for client over [va, va + len). */
static bool
found(uint64_t client, enum sl_chan_key_kind kind, uint32_t key, uint64_t va, uint64_t len)
{
	return sl_chan_mrs_find(fuzz_mrs, client, kind, key, va, len, 0) != NULL;
}

/* t's keys resolve for t (each under its own kind only) and, if other is live, never for it;
 * with t gone (live false), for no one. */
static void
check_keys(const struct tenant *t, const struct tenant *other, bool live)
{
	for (unsigned i = 0; i < t->n_mr; i++) {
		const struct mr *m = &t->mr[i];

		fuzz_check(found(t->id, SL_CHAN_LKEY, m->lkey, m->va, m->len) == live &&
				   found(t->id, SL_CHAN_RKEY, m->rkey, m->va, m->len) == live,
			   live ? "a client's key does not resolve for it"
				: "a gone client's key resolves");
		fuzz_check(!found(t->id, SL_CHAN_LKEY, m->rkey, m->va, m->len) &&
				   !found(t->id, SL_CHAN_RKEY, m->lkey, m->va, m->len),
			   "an rkey resolves as an lkey or an lkey as an rkey");
		fuzz_check(!found(other->id, SL_CHAN_LKEY, m->lkey, m->va, m->len) &&
				   !found(other->id, SL_CHAN_RKEY, m->rkey, m->va, m->len) &&
				   !found(other->id, SL_CHAN_LKEY, m->lkey, m->va, 1) &&
				   !found(other->id, SL_CHAN_RKEY, m->rkey, m->va, 1),
			   "a client's key resolves for the other client");
	}
}

/* The lane's QPs are exactly the live tenants' (n of them) connected ones, each its owner's. */
static void
check_lane(const struct tenant *const *live, unsigned n)
{
	unsigned open = 0, modelled = 0;

	for (uint32_t k = 0; k < QPS; k++)
		open += lane.owner[k] != 0;
	for (unsigned j = 0; j < n; j++) {
		for (unsigned i = 0; i < live[j]->n_qp; i++) {
			uint32_t k = live[j]->qp[i].qpn - QPN_BASE;

			modelled += live[j]->qp[i].connected;
			fuzz_check(k < QPS && lane.owner[k] ==
						      (live[j]->qp[i].connected ? live[j]->id : 0),
				   "a client's connected QP is not on the lane under its name, or "
				   "one not connected is");
		}
	}
	fuzz_check(open == modelled, "the lane holds a QP no live client connected");
}

/* Everything the model says of both (b, c of the checks above). */
static void
check_all(const struct tenant *t)
{
	const struct tenant *live[] = {&t[0], &t[1]};
	struct sl_chan_srv_stats st = fuzz_srv_stats();

	check_keys(&t[0], &t[1], true);
	check_keys(&t[1], &t[0], true);
	fuzz_check(st.mrs == t[0].n_mr + t[1].n_mr, "the server's MR count is not the model's");
	fuzz_check(st.cqs == t[0].n_cq + t[1].n_cq, "the server's CQ count is not the model's");
	fuzz_check(st.qps == t[0].n_qp + t[1].n_qp, "the server's QP count is not the model's");
	check_lane(live, 2);
}

/* --- requests from the input --------------------------------------------------------------- */

static uint32_t
u32_at(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t
u64_at(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* A CQ handle: one of t's (src 0), of the other's (src 1), or small and random (src 2). */
static uint32_t
pick_cq(const struct tenant *t, const struct tenant *o, unsigned src, uint8_t p)
{
	if (src == 0 && t->n_cq)
		return t->cq[p % t->n_cq];
	if (src == 1 && o->n_cq)
		return o->cq[p % o->n_cq];
	return p % (MAX_CQS + 3);
}

static uint32_t
pick_qpn(const struct tenant *t, const struct tenant *o, unsigned src, uint8_t p)
{
	if (src == 0 && t->n_qp)
		return t->qp[p % t->n_qp].qpn;
	if (src == 1 && o->n_qp)
		return o->qp[p % o->n_qp].qpn;
	return QPN_BASE - 2 + p % (QPS + 4);
}

/* Whether the request names an object of o, the other client (it must be refused). */
static bool
names_other(const struct sl_chan_req *q, const struct tenant *o)
{
	switch (q->type) {
	case SL_CHAN_MR_REG:
		/* An address is only a region's name and the offset is into the client's own
		 * memory: no MR_REG can name the other's memory. */
		return false;
	case SL_CHAN_MR_DEREG:
		return owns_key(o, q->u.mr_dereg.lkey);
	case SL_CHAN_CQ_DESTROY:
		return cq_idx(o, q->u.cq_destroy.cq) >= 0;
	case SL_CHAN_QP_CREATE:
		return cq_idx(o, q->u.qp_create.send_cq) >= 0 ||
		       cq_idx(o, q->u.qp_create.recv_cq) >= 0;
	case SL_CHAN_QP_CONNECT:
		return qp_idx(o, q->u.qp_connect.qpn) >= 0;
	case SL_CHAN_QP_DESTROY:
		return qp_idx(o, q->u.qp_destroy.qpn) >= 0;
	default:
		return false;
	}
}

/* Fill q's type and fields from ctl and the parameters p[16]. */
static void
build(struct sl_chan_req *q, uint8_t ctl, const uint8_t *p, const struct tenant *t,
      const struct tenant *o)
{
	static const uint16_t types[] = {SL_CHAN_MR_REG,     SL_CHAN_MR_DEREG,  SL_CHAN_CQ_CREATE,
					 SL_CHAN_CQ_DESTROY, SL_CHAN_QP_CREATE, SL_CHAN_QP_CONNECT,
					 SL_CHAN_QP_DESTROY, SL_CHAN_HELLO};
	unsigned src = (ctl >> 4) & 3; /* 0, 1: own; 2: the other's; 3: random */
	unsigned pick = src < 2 ? 0 : src - 1;

	q->type = types[(ctl >> 1) & 7];
	switch (q->type) {
	case SL_CHAN_MR_REG: {
		const struct tenant *w = src == 2 ? o : t;

		q->u.mr_reg.addr = src == 3 ? u64_at(p) : w->base_va + (u32_at(p) % MEM_BYTES);
		q->u.mr_reg.off = src == 3 ? u64_at(p + 4) : q->u.mr_reg.addr - w->base_va;
		q->u.mr_reg.len = src == 3 ? u64_at(p + 8) : 1 + u32_at(p + 4) % (64u << 10);
		q->u.mr_reg.access = p[8] & (src == 3 ? 0xff : 7);
		if (src != 3 && (q->u.mr_reg.access & SL_ACCESS_REMOTE_WRITE))
			q->u.mr_reg.access |= SL_ACCESS_LOCAL_WRITE;
		break;
	}
	case SL_CHAN_MR_DEREG: {
		const struct tenant *w = src == 2 ? o : t;

		if (src == 3 || w->n_mr == 0)
			q->u.mr_dereg.lkey = u32_at(p);
		else if (p[1] & 0x10) /* an rkey where an lkey belongs */
			q->u.mr_dereg.lkey = w->mr[p[0] % w->n_mr].rkey;
		else
			q->u.mr_dereg.lkey = w->mr[p[0] % w->n_mr].lkey;
		break;
	}
	case SL_CHAN_CQ_CREATE:
		q->u.cq_create.ring_off =
			src == 3 ? u64_at(p) : (uint64_t)(p[0] % CQ_SLOTS) * SLOT_BYTES;
		q->u.cq_create.depth = src == 3 ? u32_at(p + 8) : 1u << (p[1] % 9);
		break;
	case SL_CHAN_CQ_DESTROY:
		q->u.cq_destroy.cq = pick_cq(t, o, pick, p[0]);
		break;
	case SL_CHAN_QP_CREATE:
		/* with src 2, one of the two CQs (or both) is the other's */
		q->u.qp_create.send_cq = pick_cq(t, o, src == 2 && (p[2] & 1) ? 1 : pick % 2, p[0]);
		q->u.qp_create.recv_cq = pick_cq(t, o, src == 2 && (p[2] & 2) ? 1 : pick % 2, p[1]);
		if (src == 2 && !(p[2] & 3))
			q->u.qp_create.send_cq = pick_cq(t, o, 1, p[0]);
		q->u.qp_create.sq_off = (uint64_t)(CQ_SLOTS + p[3] % QP_SLOTS) * SLOT_BYTES;
		q->u.qp_create.rq_off =
			(uint64_t)(CQ_SLOTS + QP_SLOTS + p[4] % QP_SLOTS) * SLOT_BYTES;
		q->u.qp_create.sq_depth = 1u << (p[5] % 8);
		q->u.qp_create.rq_depth = 1u << (p[6] % 8);
		q->u.qp_create.receiver = p[7] & 1 ? SL_RECEIVER_GBN : SL_RECEIVER_MELO;
		if (src == 3) { /* offsets, depths, limits as the input has them */
			q->u.qp_create.sq_off = u32_at(p + 8);
			q->u.qp_create.rq_depth = u32_at(p + 12);
			q->u.qp_create.max_msg_bytes = u32_at(p + 4);
			q->u.qp_create.rate_limit_bps = p[7];
		}
		break;
	case SL_CHAN_QP_CONNECT:
		q->u.qp_connect.qpn = pick_qpn(t, o, pick, p[0]);
		q->u.qp_connect.peer_qpn = p[1] & 0x80 ? u32_at(p + 4) : u32_at(p + 4) & 0xffffff;
		q->u.qp_connect.peer_psn = u32_at(p + 8);
		q->u.qp_connect.peer_token = p[1] & 0x40 ? 0 : u32_at(p + 8) | 1;
		break;
	case SL_CHAN_QP_DESTROY:
		q->u.qp_destroy.qpn = pick_qpn(t, o, pick, p[0]);
		break;
	default: /* HELLO again */
		q->u.hello.mem_bytes = MEM_BYTES;
		q->u.hello.base_va = t->base_va;
		break;
	}
}

/* The model learns from a successful answer r to q from t (o: the other client). */
static void
learn(struct tenant *t, const struct tenant *o, const struct sl_chan_req *q,
      const struct sl_chan_rsp *r, int n_fds)
{
	int i;

	fuzz_check(n_fds == (q->type == SL_CHAN_CQ_CREATE),
		   "an fd missing from or extra in an answer");
	switch (q->type) {
	case SL_CHAN_MR_REG:
		fuzz_check(r->u.mr_reg.lkey != 0 && r->u.mr_reg.rkey != 0 &&
				   r->u.mr_reg.lkey != r->u.mr_reg.rkey &&
				   !owns_key(t, r->u.mr_reg.lkey) &&
				   !owns_key(t, r->u.mr_reg.rkey) &&
				   !owns_key(o, r->u.mr_reg.lkey) &&
				   !owns_key(o, r->u.mr_reg.rkey) && t->n_mr < MAX_MRS,
			   "MR_REG gave a key 0, twice, or unlike no live key");
		t->mr[t->n_mr++] = (struct mr){.lkey = r->u.mr_reg.lkey,
					       .rkey = r->u.mr_reg.rkey,
					       .va = q->u.mr_reg.addr,
					       .len = q->u.mr_reg.len};
		break;
	case SL_CHAN_MR_DEREG:
		i = mr_by_lkey(t, q->u.mr_dereg.lkey);
		fuzz_check(i >= 0, "MR_DEREG of no lkey the client owns succeeded");
		t->mr[i] = t->mr[--t->n_mr];
		break;
	case SL_CHAN_CQ_CREATE:
		fuzz_check(r->u.cq_create.cq != 0 && cq_idx(t, r->u.cq_create.cq) < 0 &&
				   cq_idx(o, r->u.cq_create.cq) < 0 && t->n_cq < MAX_CQS,
			   "CQ_CREATE gave a handle already live");
		t->cq[t->n_cq++] = r->u.cq_create.cq;
		break;
	case SL_CHAN_CQ_DESTROY:
		i = cq_idx(t, q->u.cq_destroy.cq);
		fuzz_check(i >= 0, "CQ_DESTROY of no CQ the client owns succeeded");
		fuzz_check(!cq_named(t, q->u.cq_destroy.cq),
			   "CQ_DESTROY of a CQ a QP names succeeded");
		t->cq[i] = t->cq[--t->n_cq];
		break;
	case SL_CHAN_QP_CREATE:
		fuzz_check(cq_idx(t, q->u.qp_create.send_cq) >= 0 &&
				   cq_idx(t, q->u.qp_create.recv_cq) >= 0,
			   "QP_CREATE on CQs the client does not own succeeded");
		fuzz_check(qp_idx(t, r->u.qp_create.qpn) < 0 && qp_idx(o, r->u.qp_create.qpn) < 0 &&
				   t->n_qp < QPS,
			   "QP_CREATE gave a QPN already live");
		fuzz_check(r->u.qp_create.token != 0, "QP_CREATE drew token 0");
		t->qp[t->n_qp++] = (struct qp){.qpn = r->u.qp_create.qpn,
					       .send_cq = q->u.qp_create.send_cq,
					       .recv_cq = q->u.qp_create.recv_cq};
		break;
	case SL_CHAN_QP_CONNECT:
		i = qp_idx(t, q->u.qp_connect.qpn);
		fuzz_check(i >= 0, "QP_CONNECT of no QP the client owns succeeded");
		fuzz_check(!t->qp[i].connected, "QP_CONNECT of a connected QP succeeded");
		fuzz_check(q->u.qp_connect.peer_token != 0,
			   "QP_CONNECT to token 0 (the built-in traffic's) succeeded");
		t->qp[i].connected = true;
		break;
	case SL_CHAN_QP_DESTROY:
		i = qp_idx(t, q->u.qp_destroy.qpn);
		fuzz_check(i >= 0, "QP_DESTROY of no QP the client owns succeeded");
		t->qp[i] = t->qp[--t->n_qp];
		break;
	default:
		fuzz_check(false, "a second HELLO succeeded");
	}
}

/* Send t's request q (len bytes of it) and check what the answer did. */
static void
request(struct tenant *t, const struct tenant *o, struct sl_chan_req *q, size_t len)
{
	struct sl_chan_srv_stats before = fuzz_srv_stats(), after;
	uint64_t cmds = lane.cmds;
	bool other = names_other(q, o),
	     well_formed = len == sizeof(*q) && q->magic == SL_CHAN_MAGIC;
	struct sl_chan_rsp r;
	int n_fds;

	q->seq = ++t->seq;
	send_msg(t->fd, q, len, q->type == SL_CHAN_HELLO ? t->memfd : -1);
	n_fds = await(t, &r);
	after = fuzz_srv_stats();
	fuzz_check(r.seq == q->seq, "an answer to another request");
	if (other)
		fuzz_check(r.status != 0 && lane.cmds == cmds,
			   "a request naming the other client's object was served");
	if (r.status != 0 || !well_formed) {
		fuzz_check(r.status != 0, "a malformed request was served");
		fuzz_check(n_fds == 0, "a refusal carried an fd");
		fuzz_check(after.mrs == before.mrs && after.cqs == before.cqs &&
				   after.qps == before.qps,
			   "a refused request changed the server's MRs, CQs or QPs");
		return;
	}
	learn(t, o, q, &r, n_fds);
}

/* The gone client g's objects are released, the survivor s's intact and still served. */
static void
check_hang_up(struct tenant *s, struct tenant *g)
{
	const struct tenant *live[] = {s};
	struct sl_chan_srv_stats st;
	uint64_t gone = fuzz_srv_stats().clients_gone;

	close(g->fd);
	close(g->memfd);
	for (int i = 0; i < 50 && fuzz_srv_stats().clients_gone == gone; i++)
		fuzz_check(sl_chan_srv_poll(fuzz_srv, 1) == 0, "poll failed");
	st = fuzz_srv_stats();
	fuzz_check(st.clients_gone == gone + 1, "a client's hang-up went unnoticed");
	fuzz_check(lane.gone_client == g->id, "the lane was not told which client left");
	check_keys(g, s, false);
	check_keys(s, g, true);
	fuzz_check(st.mrs == s->n_mr && st.cqs == s->n_cq && st.qps == s->n_qp,
		   "after a hang-up the counts are not the survivor's");
	check_lane(live, 1);
	/* still served: it lets go of one of its objects */
	if (s->n_qp) {
		struct sl_chan_req q = {.magic = SL_CHAN_MAGIC,
					.version = SL_CHAN_VERSION,
					.type = SL_CHAN_QP_DESTROY,
					.u.qp_destroy.qpn = s->qp[0].qpn};

		g->n_mr = g->n_cq = g->n_qp = 0; /* its handles are nobody's now */
		request(s, g, &q, sizeof(q));
		fuzz_check(qp_idx(s, q.u.qp_destroy.qpn) < 0, "the survivor was not served");
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tenant t[2];
	uint64_t gone;
	unsigned first;

	if (fuzz_srv == NULL)
		fuzz_srv_start("fuzz_chan_tenants", &lane, MAX_MRS, MAX_CQS, QPN_BASE, QPS);
	gone = fuzz_srv_stats().clients_gone;
	attach(&t[0], BASE_VA_A);
	attach(&t[1], BASE_VA_B);
	fuzz_check(t[0].id != t[1].id, "two clients with one number");
	for (size_t off = 0, n = 0; off + REC_BYTES <= size && n < RECS_MAX;
	     off += REC_BYTES, n++) {
		const uint8_t ctl = data[off], *p = data + off + 1;
		struct tenant *me = &t[ctl & 1], *other = &t[!(ctl & 1)];
		struct sl_chan_req q = {.magic = SL_CHAN_MAGIC, .version = SL_CHAN_VERSION};
		size_t len = sizeof(q);

		build(&q, ctl, p, me, other);
		if ((ctl >> 6) == 3 && p[15] % 4 == 0) { /* malformed: one byte short, or magic */
			if (p[15] & 0x10)
				len--;
			else
				q.magic ^= 1u << (p[14] % 32);
		}
		request(me, other, &q, len);
		check_all(t);
	}
	first = size & 1;
	check_hang_up(&t[!first], &t[first]);
	close(t[!first].fd);
	close(t[!first].memfd);
	for (int i = 0; i < 50 && fuzz_srv_stats().clients_gone != gone + 2; i++)
		fuzz_check(sl_chan_srv_poll(fuzz_srv, 1) == 0, "poll failed");
	fuzz_check(fuzz_srv_stats().clients_gone == gone + 2, "the second hang-up went unnoticed");
	check_keys(&t[!first], &t[first], false);
	fuzz_check(fuzz_srv_stats().qps == 0 && fuzz_srv_stats().cqs == 0 &&
			   fuzz_srv_stats().mrs == 0,
		   "a gone client's QPs, CQs or MRs are still held");
	for (uint32_t k = 0; k < QPS; k++)
		fuzz_check(lane.owner[k] == 0, "the lane still holds a gone client's QP");
	return 0;
}
