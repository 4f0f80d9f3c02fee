/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lane.c - the lane half of the daemon's application channel (sl_chan.h): on the lane's
 * lcore, the applications' rings go into the transport endpoint and what the endpoint hands
 * back goes into the applications' memory and completion queues. No lock, no allocation after
 * create, no system call but the event fd's write.
 *
 * Mailbox. The control thread hands commands over a bounded single-producer single-consumer
 * ring of pointers (tail released by the producer, head by the lane); the lane runs them at the
 * start of a poll and answers each with a release store of cmd->done. The control thread waits
 * for each answer, so only commands that timed out accumulate: a full mailbox means the lane has
 * not polled for LANE_MBOX timeouts, and a command finding it full is refused at once (-EAGAIN)
 * rather than holding the control thread for room that is not coming.
 *
 * A QP's life: FREE -> CONNECTED (QP_CONNECT: its conf kept, opened on the endpoint, its rings
 * read from now on) -> ERROR -> FREE (QP_DESTROY or CLIENT_GONE). A QP comes to the lane only
 * when it connects: the control half places it then on the lane its two QPNs name (srv.c). It
 * goes to ERROR like a verbs QP: a work request the lane refuses, a completion with an error,
 * a message it refuses to place, a ring index out of range, or a new link session. Failing
 * closes it on the endpoint (the messages there complete with -ECANCELED: flushed; a QP that
 * refused an arrival stays open there until destroyed, so that the endpoint's receiver goes
 * on answering the peer with the refusal instead of leaving it to time out), flushes
 * the work request waiting for endpoint room and every RECV held, and drops what it has in the
 * stash; in ERROR every later ring entry is taken and completes as flushed. A failure noticed
 * inside an endpoint callback (on_recv, on_complete, read_src) is only marked there, since the
 * endpoint is in the middle of that QP, and carried out at the next poll.
 *
 * Send queue, per poll and QP (at most LANE_BUDGET entries per ring, so one QP cannot starve
 * the others): prod is read once (acquire) and refused if more than sq_depth ahead of the
 * lane's cons. An entry is taken only when the QP has fewer than sq_depth work requests out,
 * the endpoint has room, and the send CQ has a slot nobody else was promised: that slot is
 * reserved for its completion, so a completion is never dropped (a QP that waits counts
 * cq_full_waits). The entry is copied out, then checked (opcode, len <= max_msg_bytes, the
 * local buffer through the key table: any access for SEND / WRITE sources, LOCAL_WRITE for READ
 * destinations); a bad one fails the QP and completes with LOC_PROT_ERR or GENERAL_ERR after
 * the flushes of the ones before it. A good one is recorded in the QP's ring of work requests
 * (the cookie given to the endpoint is its index there) and posted; one the endpoint refuses
 * with -ENOBUFS (too many READs out) waits in the QP for the next poll. cons is published
 * (release) once per poll. The receive queue is read the same way into a FIFO of at most
 * rq_depth RECV buffers, each checked for LOCAL_WRITE and holding a slot of the receive CQ.
 * A CQ slot is also reserved for RECVs, so a CQ shared by both queues must hold both depths,
 * as in verbs; else the send side waits for RECVs to complete.
 *
 * Completions. The endpoint's statuses map to verbs': 0 SUCCESS, -ETIMEDOUT RETRY_EXC_ERR,
 * -ECANCELED WR_FLUSH_ERR, -EACCES REM_ACCESS_ERR, -EREMOTEIO and -EBADMSG REM_OP_ERR (the
 * peer does not serve the request: verbs would say remote invalid request, which sluice.h folds
 * into the remote operation error). A success writes a CQE only for a SIGNALED request; errors
 * always do. A CQE is written at the lane's copy of the CQ's prod, then prod is published
 * (release); if the application armed the CQ (its armed word is 1) the lane clears the word and
 * writes 8 bytes to the event fd.
 *
 * Arrivals: lane_rx.c.
 *
 * Units: bytes, ns.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>

#include "lane_priv.h"
#include "sl_time.h"

#define LANE_BUDGET 32u           /**< ring entries one QP's ring gives per poll, at most */
#define LANE_CALL_SLEEP_NS 50000u /**< sl_chan_lane_call's sleep between checks */

static const struct sl_stat_desc stat_desc[] = {
	SL_STAT(struct sl_chan_lane_stats, cmds, "mailbox commands answered"),
	SL_STAT(struct sl_chan_lane_stats, wr_posted,
		"work requests taken from SQs into the endpoint"),
	SL_STAT(struct sl_chan_lane_stats, wr_loc_prot,
		"work requests refused at once: lkey, range or access (LOC_PROT_ERR)"),
	SL_STAT(struct sl_chan_lane_stats, wr_bad,
		"work requests refused at once: opcode or length (GENERAL_ERR)"),
	SL_STAT(struct sl_chan_lane_stats, recv_posted, "RECV buffers taken from RQs"),
	SL_STAT(struct sl_chan_lane_stats, cqes, "completions written to CQs"),
	SL_STAT(struct sl_chan_lane_stats, cq_full_waits,
		"polls a QP's ring waited for an unreserved CQ slot"),
	SL_STAT(struct sl_chan_lane_stats, events, "CQ events signalled (armed CQs)"),
	SL_STAT(struct sl_chan_lane_stats, events_unsent,
		"CQ events not queued: the application's end was full (it had not read the "
		"earlier ones, so it was readable already) or closed"),
	SL_STAT(struct sl_chan_lane_stats, bad_ring,
		"QPs failed because a ring index was out of range"),
	SL_STAT(struct sl_chan_lane_stats, write_refused,
		"WRITEs refused: key, range or access (REM_ACCESS_ERR at the sender)"),
	SL_STAT(struct sl_chan_lane_stats, write_len_refused,
		"WRITEs refused: longer than the QP's max_msg_bytes (REM_OP_ERR at the sender)"),
	SL_STAT(struct sl_chan_lane_stats, read_refused,
		"READs refused: key, range or access (REM_ACCESS_ERR at the sender)"),
	SL_STAT(struct sl_chan_lane_stats, read_len_refused,
		"READs refused: asking for more than the QP's max_msg_bytes (REM_OP_ERR at the "
		"sender)"),
	SL_STAT(struct sl_chan_lane_stats, stash_msgs,
		"SENDs (and WRITE-with-immediate notices) held in the stash until a RECV came"),
	SL_STAT(struct sl_chan_lane_stats, rnr_refused,
		"SENDs (or WRITEs with immediate) refused for now: no RECV and no stash room "
		"(an RNR NAK: the sender sends them again)"),
	SL_STAT(struct sl_chan_lane_stats, stash_client_refused,
		"SENDs (or WRITEs with immediate) refused for now: its application's QPs held "
		"client_stash_bytes already (an RNR NAK)"),
	SL_STAT(struct sl_chan_lane_stats, stash_qp_refused,
		"SENDs (or WRITEs with immediate) refused for now: no RECV and their QP held its "
		"stash_qp_bytes already (an RNR NAK)"),
	SL_STAT(struct sl_chan_lane_stats, len_refused,
		"SENDs longer than their RECV buffer (LOC_LEN_ERR)"),
};
SL_STAT_TABLE_DEFINE(sl_chan_lane_stat_table, struct sl_chan_lane_stats, stat_desc);

struct sl_chan_lane *
sl_chan_lane_create(const struct sl_chan_lane_conf *conf)
{
	struct sl_chan_lane *cl;
	uint64_t chunks = SL_DIV_ROUND_UP(conf->stash_bytes, STASH_CHUNK_BYTES);
	uint64_t qp_bytes = conf->stash_qp_bytes ? conf->stash_qp_bytes : conf->stash_bytes;
	uint64_t client_bytes =
		conf->client_stash_bytes ? conf->client_stash_bytes : conf->stash_bytes;

	if (conf->qps == 0 || conf->mrs == NULL || conf->index >= SL_CHAN_CQ_RINGS_MAX ||
	    !sl_is_pow2(conf->sq_depth_max) || !sl_is_pow2(conf->rq_depth_max) ||
	    conf->sq_depth_max > SL_CHAN_RING_MAX || conf->rq_depth_max > SL_CHAN_RING_MAX ||
	    conf->qpn_base + (uint64_t)conf->qps > UINT32_MAX || chunks > UINT32_MAX) {
		errno = EINVAL;
		return NULL;
	}
	cl = calloc(1, sizeof(*cl));
	if (cl == NULL)
		return NULL;
	cl->c = *conf;
	cl->st.n = (uint32_t)chunks;
	cl->st.qp_chunks = (uint32_t)SL_MIN(SL_DIV_ROUND_UP(qp_bytes, STASH_CHUNK_BYTES), chunks);
	cl->st.client_chunks =
		(uint32_t)SL_MIN(SL_DIV_ROUND_UP(client_bytes, STASH_CHUNK_BYTES), chunks);
	cl->st.holder = calloc(conf->qps, sizeof(*cl->st.holder));
	cl->qp = calloc(conf->qps, sizeof(*cl->qp));
	cl->active = calloc(conf->qps, sizeof(*cl->active));
	cl->wr_mem = calloc((size_t)conf->qps * conf->sq_depth_max, sizeof(*cl->wr_mem));
	cl->rcv_mem = calloc((size_t)conf->qps * conf->rq_depth_max, sizeof(*cl->rcv_mem));
	cl->st.ch = cl->st.n ? calloc(cl->st.n, sizeof(*cl->st.ch)) : NULL;
	cl->st.buf = cl->st.n ? malloc((size_t)cl->st.n * STASH_CHUNK_BYTES) : NULL;
	if (cl->qp == NULL || cl->active == NULL || cl->wr_mem == NULL || cl->rcv_mem == NULL ||
	    cl->st.holder == NULL || (cl->st.n && (cl->st.ch == NULL || cl->st.buf == NULL)))
		goto fail;
	for (uint32_t i = 0; i < cl->st.n; i++)
		cl->st.ch[i].next = i + 1;
	cl->st.n_free = cl->st.n;
	for (uint32_t i = 0; i < conf->qps; i++) {
		cl->qp[i].qpn = conf->qpn_base + i;
		cl->qp[i].wr = &cl->wr_mem[(size_t)i * conf->sq_depth_max];
		cl->qp[i].rcv = &cl->rcv_mem[(size_t)i * conf->rq_depth_max];
	}
	return cl;
fail:
	sl_chan_lane_free(cl);
	errno = ENOMEM;
	return NULL;
}

void
sl_chan_lane_free(struct sl_chan_lane *cl)
{
	if (cl == NULL)
		return;
	free(cl->st.buf);
	free(cl->st.ch);
	free(cl->st.holder);
	free(cl->rcv_mem);
	free(cl->wr_mem);
	free(cl->active);
	free(cl->qp);
	free(cl);
}

uint32_t
sl_chan_lane_index(const struct sl_chan_lane *cl)
{
	return cl->c.index;
}

bool
sl_chan_lane_owns(const struct sl_chan_lane *cl, uint32_t qpn)
{
	return qpn - cl->c.qpn_base < cl->c.qps;
}

void
sl_chan_lane_range(const struct sl_chan_lane *cl, uint32_t *qpn_base, uint32_t *qps)
{
	*qpn_base = cl->c.qpn_base;
	*qps = cl->c.qps;
}

void
sl_chan_lane_stats_get(const struct sl_chan_lane *cl, struct sl_chan_lane_stats *st)
{
	sl_stats_snapshot(st, &cl->stats, sl_chan_lane_stat_table.n);
}

/* --- completion queues -------------------------------------------------------------------- */

/* This lane's ring of q's send (recv false) or receive CQ. */
static struct sl_chan_cq_ring *
cq_ring(const struct sl_chan_lane *cl, const struct lqp *q, bool recv)
{
	return &(recv ? q->c->recv_cq : q->c->send_cq)->lane[cl->c.index];
}

/* Free slots of ring r of depth entries nobody was promised (0 if the application moved its
 * cons out of range). */
static uint32_t
cq_room(const struct sl_chan_cq_ring *r, uint32_t depth)
{
	uint32_t cons = __atomic_load_n(&r->ring->cons, __ATOMIC_ACQUIRE);
	uint32_t used = r->prod - cons, free_slots;

	if (used > depth)
		return 0;
	free_slots = depth - used;
	return free_slots > r->reserved ? free_slots - r->reserved : 0;
}

/* Promise one slot of q's send (recv false) or receive CQ; false (and a wait counted) if none. */
static bool
cq_reserve(struct sl_chan_lane *cl, struct lqp *q, bool recv)
{
	struct sl_chan_cq *cq = recv ? q->c->recv_cq : q->c->send_cq;
	struct sl_chan_cq_ring *r = &cq->lane[cl->c.index];

	if (cq_room(r, cq->depth) == 0) {
		sl_stat_add(&cl->stats.cq_full_waits, 1);
		return false;
	}
	r->reserved++;
	(*(recv ? &q->res_recv : &q->res_send))++;
	return true;
}

/* Give back a promised slot (a completion that is not written: unsignaled success). */
static void
cq_unreserve(const struct sl_chan_lane *cl, struct lqp *q, bool recv)
{
	cq_ring(cl, q, recv)->reserved--;
	(*(recv ? &q->res_recv : &q->res_send))--;
}

/* Write a completion into a promised slot of q's send or receive CQ; signal it if armed. */
void
sl_chan_lane_cq_put(struct sl_chan_lane *cl, struct lqp *q, unsigned put, uint64_t wr_id,
		    uint8_t status, uint8_t opcode, uint32_t byte_len, uint32_t imm)
{
	bool recv = (put & SL_CHAN_PUT_RECV_CQ) != 0, has_imm = (put & SL_CHAN_PUT_IMM) != 0;
	struct sl_chan_cq *cq = recv ? q->c->recv_cq : q->c->send_cq;
	struct sl_chan_cq_ring *r = &cq->lane[cl->c.index];
	struct sl_chan_ring *first = cq->lane[0].ring;
	struct sl_chan_cqe *e = sl_chan_ring_entry(r->ring, r->prod, cq->depth, sizeof(*e));
	static const uint64_t one = 1;

	*e = (struct sl_chan_cqe){.wr_id = wr_id,
				  .qpn = q->qpn,
				  .byte_len = byte_len,
				  .imm = has_imm ? imm : 0,
				  .status = status,
				  .opcode = opcode,
				  .flags = has_imm ? SL_WC_F_IMM : 0};
	__atomic_store_n(&r->ring->prod, ++r->prod, __ATOMIC_RELEASE);
	cq_unreserve(cl, q, recv);
	sl_stat_add(&cl->stats.cqes, 1);
	/* Store-load order (sl_chan_abi.h, "no lost wake-up"): the application arms, then reads
	 * prod; we publish prod, then read armed. Without a full fence both could read the old
	 * value. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&first->armed, __ATOMIC_RELAXED) == 1 &&
	    __atomic_exchange_n(&first->armed, 0, __ATOMIC_ACQ_REL) == 1 && cq->event_fd >= 0) {
		/* Never blocks (srv.c, "CQ events"); a full queue is readable already. */
		if (send(cq->event_fd, &one, sizeof(one), MSG_DONTWAIT | MSG_NOSIGNAL) ==
		    (ssize_t)sizeof(one))
			sl_stat_add(&cl->stats.events, 1);
		else
			sl_stat_add(&cl->stats.events_unsent, 1);
	}
}

static uint8_t
wc_opcode(uint8_t wr_opcode)
{
	switch (wr_opcode) {
	case SL_WR_WRITE:
	case SL_WR_WRITE_WITH_IMM:
		return SL_WC_WRITE;
	case SL_WR_READ:
		return SL_WC_READ;
	default:
		return SL_WC_SEND;
	}
}

static uint8_t
wc_status(int xport_status)
{
	switch (xport_status) {
	case 0:
		return SL_WC_SUCCESS;
	case -ETIMEDOUT:
		return SL_WC_RETRY_EXC_ERR;
	case -EBUSY:
		return SL_WC_RNR_RETRY_EXC_ERR;
	case -ECANCELED:
		return SL_WC_WR_FLUSH_ERR;
	case -EACCES:
		return SL_WC_REM_ACCESS_ERR;
	case -EREMOTEIO:
	case -EBADMSG:
		return SL_WC_REM_OP_ERR;
	default:
		return SL_WC_GENERAL_ERR;
	}
}

/* --- failing and forgetting a QP ---------------------------------------------------------- */

/* Drop taken work requests that completed from the front of q's ring. */
static void
wr_retire(struct lqp *q)
{
	while (q->wr_head != q->wr_tail && q->wr[q->wr_head & (q->c->sq_depth - 1)].done)
		q->wr_head++;
}

/*
 * q goes to ERROR, or to REFUSING (it refused an arrival and stays open on the endpoint): its
 * messages there complete as flushed through on_complete once it is closed, the work request
 * waiting for room and every RECV held complete as flushed, its stash entries are dropped.
 */
static void
qp_fail(struct sl_chan_lane *cl, struct lqp *q, struct sl_xport *x, uint64_t now_ns,
	enum lqp_state to)
{
	bool on_endpoint = (LQP_ON_ENDPOINT >> q->state) & 1;

	q->state = (uint8_t)to;
	q->rx_to = RX_NONE;
	if (on_endpoint && to == LQP_ERROR)
		(void)sl_xport_qp_close(x, q->qpn, now_ns);
	if (q->has_pend) {
		struct lwr *w = &q->wr[(q->wr_tail - 1) & (q->c->sq_depth - 1)];

		q->has_pend = false;
		w->done = true;
		sl_chan_lane_cq_put(cl, q, SL_CHAN_PUT_SEND_CQ, w->wr_id, SL_WC_WR_FLUSH_ERR,
				    wc_opcode(w->opcode), w->len, 0);
	}
	wr_retire(q);
	while (q->rcv_head != q->rcv_tail) {
		struct lrecv *r = &q->rcv[q->rcv_head++ & (q->c->rq_depth - 1)];

		sl_chan_lane_cq_put(cl, q, SL_CHAN_PUT_RECV_CQ, r->wr_id, SL_WC_WR_FLUSH_ERR,
				    SL_WC_RECV, r->len, 0);
	}
	sl_chan_lane_stash_drop(cl, q);
}

/* Carry out a failure a callback marked (FAILED, REFUSED); nothing in other states. */
static void
qp_fail_marked(struct sl_chan_lane *cl, struct lqp *q, struct sl_xport *x, uint64_t now_ns)
{
	if (q->state == LQP_FAILED)
		qp_fail(cl, q, x, now_ns, LQP_ERROR);
	else if (q->state == LQP_REFUSED)
		qp_fail(cl, q, x, now_ns, LQP_REFUSING);
}

static void sq_poll(struct sl_chan_lane *cl, struct lqp *q, struct sl_xport *x, uint64_t now_ns,
		    uint32_t budget);
static void rq_poll(struct sl_chan_lane *cl, struct lqp *q, struct sl_xport *x, uint64_t now_ns,
		    uint32_t budget);

/*
 * Destroy q: failed and flushed, the entries still in its rings flushed while its CQs have
 * room, and then forgotten with whatever CQ slots it still held.
 */
static void
qp_destroy(struct sl_chan_lane *cl, struct lqp *q, struct sl_xport *x, uint64_t now_ns)
{
	qp_fail(cl, q, x, now_ns, LQP_ERROR);
	sq_poll(cl, q, x, now_ns, q->c->sq_depth);
	rq_poll(cl, q, x, now_ns, q->c->rq_depth);
	cq_ring(cl, q, false)->reserved -= q->res_send;
	cq_ring(cl, q, true)->reserved -= q->res_recv;
	for (uint32_t i = 0; i < cl->n_active; i++)
		if (cl->active[i] == (uint32_t)(q - cl->qp)) {
			cl->active[i] = cl->active[--cl->n_active];
			break;
		}
	q->holder->qps--;
	*q = (struct lqp){.qpn = q->qpn, .wr = q->wr, .rcv = q->rcv};
}

/* --- commands ----------------------------------------------------------------------------- */

/*
 * The stash holder of client's QPs: the entry its other QPs here hold, else a free one (one of
 * qps entries is always free to a QP being opened: the lane has qps QP slots).
 */
static struct stash_holder *
stash_holder_of(struct stash *s, uint32_t qps, uint64_t client)
{
	struct stash_holder *free_one = NULL;

	for (uint32_t i = 0; i < qps; i++) {
		struct stash_holder *h = &s->holder[i];

		if (h->qps && h->client == client)
			return h;
		if (!h->qps && free_one == NULL)
			free_one = h;
	}
	*free_one = (struct stash_holder){.client = client};
	return free_one;
}

/* QP_CONNECT: take the QP of cmd->qp, which names its rings, CQs and peer, and open it on the
 * endpoint. */
static int
cmd_connect(struct sl_chan_lane *cl, const struct sl_chan_cmd *cmd, struct sl_xport *x,
	    uint64_t now_ns)
{
	struct sl_chan_qp_conf *qc = cmd->qp;
	struct lqp *q;
	int rc;

	if (qc == NULL || qc->sq == NULL || qc->rq == NULL || qc->send_cq == NULL ||
	    qc->recv_cq == NULL || qc->mrs == NULL || !sl_is_pow2(qc->sq_depth) ||
	    !sl_is_pow2(qc->rq_depth) || qc->sq_depth > cl->c.sq_depth_max ||
	    qc->rq_depth > cl->c.rq_depth_max || !sl_is_pow2(qc->send_cq->depth) ||
	    !sl_is_pow2(qc->recv_cq->depth) || qc->send_cq->rings <= cl->c.index ||
	    qc->recv_cq->rings <= cl->c.index || qc->client != cmd->client ||
	    qc->xqp.qpn != cmd->qpn)
		return -EINVAL;
	if (!sl_chan_lane_owns(cl, qc->xqp.qpn))
		return -ERANGE;
	q = &cl->qp[qc->xqp.qpn - cl->c.qpn_base];
	if (q->state != LQP_FREE)
		return -EEXIST;
	rc = sl_xport_qp_open(x, &qc->xqp, now_ns);
	if (rc)
		return rc;
	q->c = qc;
	q->holder = stash_holder_of(&cl->st, cl->c.qps, qc->client);
	q->holder->qps++;
	q->state = LQP_CONNECTED;
	cl->active[cl->n_active++] = (uint32_t)(q - cl->qp);
	return 0;
}

static int
cmd_run(struct sl_chan_lane *cl, struct sl_chan_cmd *cmd, struct sl_xport *x, uint64_t now_ns)
{
	struct lqp *q;

	switch (cmd->type) {
	case SL_CHAN_CMD_QP_CONNECT:
		return cmd_connect(cl, cmd, x, now_ns);
	case SL_CHAN_CMD_QP_DESTROY:
		q = lqp_of(cl, cmd->qpn, LQP_LIVE);
		if (q == NULL || q->c->client != cmd->client)
			return -ENOENT;
		qp_destroy(cl, q, x, now_ns);
		return 0;
	case SL_CHAN_CMD_CLIENT_GONE:
		for (uint32_t i = 0; i < cl->c.qps; i++)
			if (cl->qp[i].state != LQP_FREE && cl->qp[i].c->client == cmd->client)
				qp_destroy(cl, &cl->qp[i], x, now_ns);
		return 0;
	default:
		return -EINVAL;
	}
}

int
sl_chan_lane_call(struct sl_chan_lane *cl, struct sl_chan_cmd *cmd, uint64_t timeout_ns)
{
	const struct timespec nap = {.tv_nsec = LANE_CALL_SLEEP_NS};
	uint64_t deadline = sl_monotonic_ns() + timeout_ns;
	uint32_t tail = atomic_load_explicit(&cl->mb_tail, memory_order_relaxed);

	if (tail - atomic_load_explicit(&cl->mb_head, memory_order_acquire) == LANE_MBOX)
		return -EAGAIN;
	atomic_store_explicit(&cmd->done, false, memory_order_relaxed);
	cmd->result = 0;
	cl->mbox[tail & (LANE_MBOX - 1)] = cmd;
	atomic_store_explicit(&cl->mb_tail, tail + 1, memory_order_release);
	while (!atomic_load_explicit(&cmd->done, memory_order_acquire)) {
		if (sl_monotonic_ns() >= deadline)
			return -ETIMEDOUT;
		nanosleep(&nap, NULL);
	}
	return cmd->result;
}

/* --- rings -------------------------------------------------------------------------------- */

/* Check a work request copied out of the SQ; SUCCESS and, for a buffer, *buf. */
static uint8_t
wr_check(struct sl_chan_lane *cl, const struct lqp *q, const struct sl_chan_sqe *e, uint8_t **buf)
{
	*buf = NULL;
	if (e->opcode > SL_WR_READ || !lqp_msg_fits(q, e->len)) {
		sl_stat_add(&cl->stats.wr_bad, 1);
		return SL_WC_GENERAL_ERR;
	}
	if (e->len == 0)
		return SL_WC_SUCCESS;
	*buf = sl_chan_mrs_find(q->c->mrs, q->c->client, SL_CHAN_LKEY, e->lkey, e->addr, e->len,
				e->opcode == SL_WR_READ ? SL_ACCESS_LOCAL_WRITE : 0);
	if (*buf == NULL) {
		sl_stat_add(&cl->stats.wr_loc_prot, 1);
		return SL_WC_LOC_PROT_ERR;
	}
	return SL_WC_SUCCESS;
}

/* Post q's waiting work request: 0, or -ENOBUFS (it waits on), or it failed and so did q. */
static int
post_pend(struct sl_chan_lane *cl, struct lqp *q, struct sl_xport *x, uint64_t now_ns)
{
	struct lwr *w = &q->wr[(q->wr_tail - 1) & (q->c->sq_depth - 1)];
	int rc = sl_xport_post(x, q->qpn, &q->pend, now_ns);

	if (rc == 0) {
		q->has_pend = false;
		sl_stat_add(&cl->stats.wr_posted, 1);
	} else if (rc == -EPIPE) {
		/* the endpoint failed the QP: this one flushes */
		qp_fail(cl, q, x, now_ns, LQP_ERROR);
	} else if (rc != -ENOBUFS) {
		/* the endpoint does not serve it: GENERAL_ERR after the flushes before it */
		sl_stat_add(&cl->stats.wr_bad, 1);
		q->has_pend = false;
		q->wr_tail--;
		qp_fail(cl, q, x, now_ns, LQP_ERROR);
		sl_chan_lane_cq_put(cl, q, SL_CHAN_PUT_SEND_CQ, w->wr_id, SL_WC_GENERAL_ERR,
				    wc_opcode(w->opcode), w->len, 0);
	}
	return rc;
}

/* Take a read index out of the application's memory; false (and q failed) if out of range. */
static bool
ring_prod(struct sl_chan_lane *cl, struct lqp *q, struct sl_chan_ring *r, uint32_t cons,
	  uint32_t depth, uint32_t *prod)
{
	*prod = __atomic_load_n(&r->prod, __ATOMIC_ACQUIRE);
	if (*prod - cons <= depth)
		return true;
	q->ring_bad = true;
	sl_stat_add(&cl->stats.bad_ring, 1);
	lqp_failed(q);
	return false;
}

static void
sq_poll(struct sl_chan_lane *cl, struct lqp *q, struct sl_xport *x, uint64_t now_ns,
	uint32_t budget)
{
	uint32_t prod, mask = q->c->sq_depth - 1;

	if (q->ring_bad || !ring_prod(cl, q, q->c->sq, q->sq_cons, q->c->sq_depth, &prod))
		return;
	if (q->has_pend && post_pend(cl, q, x, now_ns) == -ENOBUFS)
		return;
	while (q->sq_cons != prod && budget-- > 0) {
		struct sl_chan_sqe e;
		struct lwr *w;
		uint8_t status, *buf;

		if (q->state == LQP_CONNECTED &&
		    (q->wr_tail - q->wr_head == q->c->sq_depth || sl_xport_sq_room(x, q->qpn) == 0))
			break;
		if (!cq_reserve(cl, q, false))
			break;
		memcpy(&e, sl_chan_ring_entry(q->c->sq, q->sq_cons++, q->c->sq_depth, sizeof(e)),
		       sizeof(e));
		if (q->state != LQP_CONNECTED) {
			sl_chan_lane_cq_put(cl, q, SL_CHAN_PUT_SEND_CQ, e.wr_id, SL_WC_WR_FLUSH_ERR,
					    wc_opcode(e.opcode), e.len, 0);
			continue;
		}
		status = wr_check(cl, q, &e, &buf);
		if (status != SL_WC_SUCCESS) {
			qp_fail(cl, q, x, now_ns, LQP_ERROR);
			sl_chan_lane_cq_put(cl, q, SL_CHAN_PUT_SEND_CQ, e.wr_id, status,
					    wc_opcode(e.opcode), e.len, 0);
			continue;
		}
		w = &q->wr[q->wr_tail & mask];
		*w = (struct lwr){.wr_id = e.wr_id,
				  .dst = e.opcode == SL_WR_READ ? buf : NULL,
				  .len = e.len,
				  .opcode = e.opcode,
				  .flags = e.flags};
		q->pend = (struct sl_xport_wr){
			.op = e.opcode == SL_WR_READ ? SL_XPORT_OP_READ
			      : e.opcode == SL_WR_WRITE || e.opcode == SL_WR_WRITE_WITH_IMM
				      ? SL_XPORT_OP_WRITE
				      : SL_XPORT_OP_SEND,
			.has_imm =
				e.opcode == SL_WR_SEND_WITH_IMM || e.opcode == SL_WR_WRITE_WITH_IMM,
			.imm = e.imm,
			.buf = e.opcode == SL_WR_READ ? NULL : buf,
			.len = e.len,
			.raddr = e.raddr,
			.rkey = e.rkey,
			.cookie = q->wr_tail,
		};
		q->wr_tail++;
		q->has_pend = true;
		if (post_pend(cl, q, x, now_ns) == -ENOBUFS)
			break;
	}
	__atomic_store_n(&q->c->sq->cons, q->sq_cons, __ATOMIC_RELEASE);
}

static void
rq_poll(struct sl_chan_lane *cl, struct lqp *q, struct sl_xport *x, uint64_t now_ns,
	uint32_t budget)
{
	uint32_t prod;

	if (q->ring_bad || !ring_prod(cl, q, q->c->rq, q->rq_cons, q->c->rq_depth, &prod))
		return;
	while (q->rq_cons != prod && budget-- > 0) {
		struct sl_chan_rqe e;
		uint8_t *ptr = NULL;

		if (q->state == LQP_CONNECTED && q->rcv_tail - q->rcv_head == q->c->rq_depth)
			break;
		if (!cq_reserve(cl, q, true))
			break;
		memcpy(&e, sl_chan_ring_entry(q->c->rq, q->rq_cons++, q->c->rq_depth, sizeof(e)),
		       sizeof(e));
		if (q->state != LQP_CONNECTED) {
			sl_chan_lane_cq_put(cl, q, SL_CHAN_PUT_RECV_CQ, e.wr_id, SL_WC_WR_FLUSH_ERR,
					    SL_WC_RECV, e.len, 0);
			continue;
		}
		if (e.len)
			ptr = sl_chan_mrs_find(q->c->mrs, q->c->client, SL_CHAN_LKEY, e.lkey,
					       e.addr, e.len, SL_ACCESS_LOCAL_WRITE);
		if (e.len && ptr == NULL) {
			sl_stat_add(&cl->stats.wr_loc_prot, 1);
			qp_fail(cl, q, x, now_ns, LQP_ERROR);
			sl_chan_lane_cq_put(cl, q, SL_CHAN_PUT_RECV_CQ, e.wr_id, SL_WC_LOC_PROT_ERR,
					    SL_WC_RECV, e.len, 0);
			continue;
		}
		q->rcv[q->rcv_tail++ & (q->c->rq_depth - 1)] =
			(struct lrecv){.wr_id = e.wr_id, .ptr = ptr, .len = e.len};
		sl_stat_add(&cl->stats.recv_posted, 1);
	}
	__atomic_store_n(&q->c->rq->cons, q->rq_cons, __ATOMIC_RELEASE);
	sl_chan_lane_stash_drain(cl, q);
}

static void
run_cmds(struct sl_chan_lane *cl, struct sl_xport *x, uint64_t now_ns)
{
	uint32_t head = atomic_load_explicit(&cl->mb_head, memory_order_relaxed);
	uint32_t tail = atomic_load_explicit(&cl->mb_tail, memory_order_acquire);

	for (; head != tail; head++) {
		struct sl_chan_cmd *cmd = cl->mbox[head & (LANE_MBOX - 1)];

		cmd->result = cmd_run(cl, cmd, x, now_ns);
		sl_stat_add(&cl->stats.cmds, 1);
		atomic_store_explicit(&cmd->done, true, memory_order_release);
	}
	atomic_store_explicit(&cl->mb_head, head, memory_order_release);
}

void
sl_chan_lane_poll(struct sl_chan_lane *cl, struct sl_xport *x, uint64_t now_ns)
{
	run_cmds(cl, x, now_ns);
	for (uint32_t i = 0; i < cl->n_active; i++) {
		struct lqp *q = &cl->qp[cl->active[i]];

		qp_fail_marked(cl, q, x, now_ns);
		rq_poll(cl, q, x, now_ns, LANE_BUDGET);
		qp_fail_marked(cl, q, x, now_ns);
		sq_poll(cl, q, x, now_ns, LANE_BUDGET);
		qp_fail_marked(cl, q, x, now_ns);
	}
}

void
sl_chan_lane_session(struct sl_chan_lane *cl, struct sl_xport *x, uint64_t now_ns)
{
	for (uint32_t i = 0; i < cl->n_active; i++) {
		struct lqp *q = &cl->qp[cl->active[i]];

		/* The endpoint's QP belongs to the old session. */
		if ((LQP_ON_ENDPOINT >> q->state) & 1)
			qp_fail(cl, q, x, now_ns, LQP_ERROR);
	}
}

/* --- the endpoint's callbacks ------------------------------------------------------------- */

void
sl_chan_lane_on_complete(struct sl_chan_lane *cl, const struct sl_xport_cqe *c, uint64_t now_ns)
{
	struct lqp *q = lqp_of(cl, c->qpn, LQP_LIVE);
	uint32_t idx = (uint32_t)c->cookie;
	uint8_t status = wc_status(c->status);
	struct lwr *w;

	(void)now_ns;
	if (q == NULL || idx - q->wr_head >= q->wr_tail - q->wr_head)
		return;
	w = &q->wr[idx & (q->c->sq_depth - 1)];
	if (w->done)
		return;
	w->done = true;
	if (status != SL_WC_SUCCESS || (w->flags & SL_WR_F_SIGNALED))
		sl_chan_lane_cq_put(cl, q, SL_CHAN_PUT_SEND_CQ, w->wr_id, status,
				    wc_opcode(w->opcode), w->opcode == SL_WR_READ ? c->len : w->len,
				    0);
	else
		cq_unreserve(cl, q, false);
	if (status != SL_WC_SUCCESS)
		lqp_failed(q);
	wr_retire(q);
}
