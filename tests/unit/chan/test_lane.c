/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_lane.c - the lane half of the channel (lib/chan/lane.c) between two daemons in one
 * process: on each side a fake application (its "shared memory" a malloc'ed block, its rings
 * and buffers in it), a real key table, a real endpoint and a lane half; the endpoints are
 * joined by an in-memory wire (each side's tx_burst frames are the other's rx_burst the next
 * step). Commands go through sl_chan_lane_call on a second thread while the test's thread
 * polls the lane, as the control thread and the lane's lcore do in the daemon.
 *
 * Two groups: `send` needs only what the endpoint serves today (SEND); `rdma` (argument
 * "rdma") needs the endpoint's WRITE / READ and its refusals (a syndrome reaching the sender).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "sl_chan.h"
#include "sl_rng.h"

#define MEM_BYTES (UINT64_C(1) << 20)
#define BASE_VA UINT64_C(0x7f0000000000) /* where the fake application "mapped" its memory */
#define QPN_BASE 4u
#define LANE_QPS 8u
#define XPORT_QPS 16u
#define XPORT_SQ 8u /* the endpoint's send queue: smaller than the QPs' */
#define SEG 256u
#define STEP_NS 1000u
#define WIRE_MAX 4096u
#define CLIENT 1u
#define ALIAS (CLIENT + (UINT64_C(1) << 32)) /* another client, alike in the low 32 bits */
#define RUN 3000u /* steps: 3 ms of virtual time, plenty for a few messages */

struct frame {
	uint32_t len;
	uint8_t buf[];
};

struct wire {
	struct frame *f[WIRE_MAX];
	unsigned n;
};

struct side {
	struct sl_xport *x;
	struct sl_chan_lane *cl;
	struct sl_chan_mrs *mrs;
	uint8_t *mem;
	uint64_t used; /**< bytes of mem handed out */
};

struct pair {
	struct side s[2];
	struct wire w[2]; /**< [i]: frames side i sent */
	uint64_t now;
};

/* A QP as its application sees it. */
struct app_qp {
	struct side *s;
	struct sl_chan_qp_conf qc;
	struct sl_chan_cq cq[2]; /**< send, receive */
	uint32_t sq_prod, rq_prod, cq_cons[2];
};

static struct pair P;
static struct sl_rng rng; /* the tests' draws, reproducible: seeded by pair_setup */
static uint64_t stash_bytes = 1u << 16;
static uint64_t stash_qp_bytes = 1u << 16;     /* one QP may fill the stash, unless a test says */
static uint64_t client_stash_bytes = 1u << 16; /* so may one application, unless a test says */

/* --- the harness -------------------------------------------------------------------------- */

/* 32 random bits, as the daemon's CSPRNG draws them, reproducibly (tests only). */
static uint32_t
draw(void)
{
	return (uint32_t)(sl_rng_next(&rng) >> 32);
}

/* A frame of len bytes, zeroed, appended to wire w: its bytes. */
static uint8_t *
wire_put(struct wire *w, uint32_t len)
{
	struct frame *f = calloc(1, sizeof(*f) + len);

	assert_non_null(f);
	assert_true(w->n < WIRE_MAX);
	f->len = len;
	w->f[w->n++] = f;
	return f->buf;
}

static const uint8_t *
frame_bytes(void *ctx, void *handle, uint32_t *len)
{
	(void)ctx;
	*len = ((struct frame *)handle)->len;
	return ((struct frame *)handle)->buf;
}

static void
frame_release(void *ctx, void *handle)
{
	(void)ctx;
	free(handle);
}

static int
on_recv(void *ctx, const struct sl_xport_rx_seg *seg, uint64_t now_ns)
{
	struct side *s = ctx;

	assert_true(sl_chan_lane_owns(s->cl, seg->qpn));
	return sl_chan_lane_on_recv(s->cl, seg, now_ns);
}

static void
on_complete(void *ctx, const struct sl_xport_cqe *c, uint64_t now_ns)
{
	struct side *s = ctx;

	assert_true(sl_chan_lane_owns(s->cl, c->qpn));
	sl_chan_lane_on_complete(s->cl, c, now_ns);
}

static int
read_src(void *ctx, uint32_t qpn, uint64_t raddr, uint32_t rkey, uint32_t len, const uint8_t **src)
{
	return sl_chan_lane_read_src(((struct side *)ctx)->cl, qpn, raddr, rkey, len, src);
}

static void
side_init(struct side *s)
{
	struct sl_xport_conf xc = {.max_qps = XPORT_QPS,
				   .sq_depth = XPORT_SQ,
				   .frame = frame_bytes,
				   .release = frame_release,
				   .on_recv = on_recv,
				   .read_src = read_src,
				   .on_complete = on_complete,
				   .ctx = s};
	struct sl_chan_lane_conf lc = {.qpn_base = QPN_BASE,
				       .qps = LANE_QPS,
				       .sq_depth_max = 64,
				       .rq_depth_max = 64,
				       .stash_bytes = stash_bytes,
				       .stash_qp_bytes = stash_qp_bytes,
				       .client_stash_bytes = client_stash_bytes};

	memset(s, 0, sizeof(*s));
	s->mrs = sl_chan_mrs_create(64);
	assert_non_null(s->mrs);
	lc.mrs = s->mrs;
	s->x = sl_xport_create(&xc);
	assert_non_null(s->x);
	s->cl = sl_chan_lane_create(&lc);
	assert_non_null(s->cl);
	s->mem = aligned_alloc(4096, MEM_BYTES);
	assert_non_null(s->mem);
	memset(s->mem, 0, MEM_BYTES);
}

static int
pair_setup(void **state)
{
	(void)state;
	memset(&P, 0, sizeof(P));
	sl_rng_seed(&rng, 7);
	side_init(&P.s[0]);
	side_init(&P.s[1]);
	return 0;
}

static int
pair_teardown(void **state)
{
	(void)state;
	for (int i = 0; i < 2; i++) {
		for (unsigned k = 0; k < P.w[i].n; k++)
			free(P.w[i].f[k]);
		sl_chan_lane_free(P.s[i].cl);
		sl_xport_free(P.s[i].x);
		sl_chan_mrs_free(P.s[i].mrs);
		free(P.s[i].mem);
	}
	stash_bytes = 1u << 16;
	stash_qp_bytes = 1u << 16;
	client_stash_bytes = 1u << 16;
	return 0;
}

/* One step: each side's lane polls, takes what the wire brought, sends what it may. */
static void
step(void)
{
	for (int i = 0; i < 2; i++) {
		struct side *s = &P.s[i];
		struct wire *in = &P.w[1 - i], *out = &P.w[i];
		struct sl_xport_rx_frame rx[WIRE_MAX];
		struct sl_xport_tx_frame tx[32];
		unsigned n = in->n;

		sl_chan_lane_poll(s->cl, s->x, P.now);
		for (unsigned k = 0; k < n; k++)
			rx[k] = (struct sl_xport_rx_frame){
				.buf = in->f[k]->buf, .len = in->f[k]->len, .handle = in->f[k]};
		in->n = 0;
		sl_xport_rx_burst(s->x, P.now, rx, n);
		n = sl_xport_tx_burst(s->x, P.now, tx, SL_ARRAY_SIZE(tx));
		for (unsigned k = 0; k < n; k++) {
			uint8_t *b =
				wire_put(out, tx[k].hdr_len + tx[k].payload_len + tx[k].pad_bytes);

			memcpy(b, tx[k].hdr, tx[k].hdr_len);
			if (tx[k].payload_len)
				memcpy(b + tx[k].hdr_len, tx[k].payload, tx[k].payload_len);
		}
	}
	P.now += STEP_NS;
}

static void
run(unsigned steps)
{
	while (steps--)
		step();
}

static void *
app_alloc(struct side *s, uint64_t bytes)
{
	void *p = s->mem + s->used;

	s->used += (bytes + 63) & ~UINT64_C(63);
	assert_true(s->used <= MEM_BYTES);
	return p;
}

static uint64_t
va(const struct side *s, const void *p)
{
	return BASE_VA + (uint64_t)((const uint8_t *)p - s->mem);
}

static uint32_t
mr_reg_keys(struct side *s, uint64_t client, void *p, uint64_t len, uint32_t access, uint32_t *rkey)
{
	uint32_t lkey;

	assert_int_equal(sl_chan_mrs_add(s->mrs, client, va(s, p), len, p, access, &lkey, rkey), 0);
	return lkey;
}

/* A region's lkey, for its owner's work requests. */
static uint32_t
mr_reg(struct side *s, uint64_t client, void *p, uint64_t len, uint32_t access)
{
	uint32_t rkey;

	return mr_reg_keys(s, client, p, len, access, &rkey);
}

/* A region's rkey, for its peers' WRITEs and READs. */
static uint32_t
mr_reg_remote(struct side *s, uint64_t client, void *p, uint64_t len, uint32_t access)
{
	uint32_t rkey;

	mr_reg_keys(s, client, p, len, access, &rkey);
	return rkey;
}

struct call {
	struct sl_chan_lane *cl;
	struct sl_chan_cmd *cmd;
	int rc;
	_Atomic bool over;
};

static void *
call_main(void *arg)
{
	struct call *c = arg;

	c->rc = sl_chan_lane_call(c->cl, c->cmd, 5 * SL_NS_PER_S);
	atomic_store(&c->over, true);
	return NULL;
}

/* The control thread's call, answered by this thread polling side's lane (no time passes). */
static int
lane_cmd(struct side *s, struct sl_chan_cmd *cmd)
{
	struct call c = {.cl = s->cl, .cmd = cmd};
	pthread_t t;

	assert_int_equal(pthread_create(&t, NULL, call_main, &c), 0);
	while (!atomic_load(&c.over))
		sl_chan_lane_poll(s->cl, s->x, P.now);
	assert_int_equal(pthread_join(t, NULL), 0);
	return c.rc;
}

/* An application QP on side s (client, qpn), its rings and CQs in s's memory (one ring each:
 * the lane is lane 0); the lane takes it at qp_connect(). */
static struct app_qp *
qp_new(struct side *s, uint64_t client, uint32_t qpn, uint32_t sq_depth, uint32_t rq_depth,
       uint32_t send_cq_depth)
{
	struct app_qp *a = calloc(1, sizeof(*a));
	uint32_t cq_depth[2] = {send_cq_depth, 64};

	assert_non_null(a);
	a->s = s;
	for (int k = 0; k < 2; k++)
		a->cq[k] = (struct sl_chan_cq){
			.id = qpn * 2 + (uint32_t)k,
			.client = client,
			.depth = cq_depth[k],
			.event_fd = -1,
			.rings = 1,
			.lane[0].ring = app_alloc(
				s, SL_CHAN_RING_BYTES(cq_depth[k], sizeof(struct sl_chan_cqe)))};
	a->qc = (struct sl_chan_qp_conf){
		.client = client,
		.mrs = s->mrs,
		.mem = s->mem,
		.mem_bytes = MEM_BYTES,
		.base_va = BASE_VA,
		.send_cq = &a->cq[0],
		.recv_cq = &a->cq[1],
		.sq = app_alloc(s, SL_CHAN_RING_BYTES(sq_depth, sizeof(struct sl_chan_sqe))),
		.rq = app_alloc(s, SL_CHAN_RING_BYTES(rq_depth, sizeof(struct sl_chan_rqe))),
		.sq_depth = sq_depth,
		.rq_depth = rq_depth,
		.max_msg_bytes = 1u << 16,
		.program = "reno",
	};
	/* a connection identity drawn as the control half draws it (srv_req.c's qp_identity) */
	a->qc.xqp = (struct sl_xport_qp_conf){.qpn = qpn,
					      .token = draw(),
					      .send_psn = draw(),
					      .proto = a->qc.program,
					      .seg_bytes = SEG,
					      .rto_ns = 200 * SL_NS_PER_US,
					      .timeout_ns = SL_NS_PER_S};
	return a;
}

static int
qp_connect(struct app_qp *a, uint32_t peer_qpn)
{
	a->qc.xqp.peer_qpn = peer_qpn;
	return lane_cmd(a->s, &(struct sl_chan_cmd){.type = SL_CHAN_CMD_QP_CONNECT,
						    .client = a->qc.client,
						    .qpn = a->qc.xqp.qpn,
						    .qp = &a->qc});
}

/* Connect a to b as an application does with b's sl_qp_info: its QPN, first PSN and token. */
static int
qp_join(struct app_qp *a, const struct app_qp *b)
{
	a->qc.xqp.recv_psn = b->qc.xqp.send_psn;
	a->qc.xqp.peer_token = b->qc.xqp.token;
	return qp_connect(a, b->qc.xqp.qpn);
}

/* A connected pair: a on side 0 (qpn), b on side 1 (qpn + 1). */
/* QP qpn of side 0 (CLIENT's) connected to qpn + 1 of side 1, b_client's. */
static void
qp_pair_to(struct app_qp **a, struct app_qp **b, uint32_t qpn, uint32_t sq_depth, uint32_t cq_depth,
	   uint64_t b_client)
{
	*a = qp_new(&P.s[0], CLIENT, qpn, sq_depth, 64, cq_depth);
	*b = qp_new(&P.s[1], b_client, qpn + 1, sq_depth, 64, cq_depth);
	assert_int_equal(qp_join(*a, *b), 0);
	assert_int_equal(qp_join(*b, *a), 0);
}

static void
qp_pair(struct app_qp **a, struct app_qp **b, uint32_t qpn, uint32_t sq_depth, uint32_t cq_depth)
{
	qp_pair_to(a, b, qpn, sq_depth, cq_depth, CLIENT);
}

static int
qp_destroy(struct app_qp *a)
{
	return lane_cmd(a->s, &(struct sl_chan_cmd){.type = SL_CHAN_CMD_QP_DESTROY,
						    .client = a->qc.client,
						    .qpn = a->qc.xqp.qpn});
}

static void
post_send(struct app_qp *a, struct sl_chan_sqe e)
{
	*(struct sl_chan_sqe *)sl_chan_ring_entry(a->qc.sq, a->sq_prod++, a->qc.sq_depth,
						  sizeof(e)) = e;
	__atomic_store_n(&a->qc.sq->prod, a->sq_prod, __ATOMIC_RELEASE);
}

static void
post_recv(struct app_qp *a, uint64_t wr_id, void *buf, uint32_t len, uint32_t lkey)
{
	*(struct sl_chan_rqe *)sl_chan_ring_entry(a->qc.rq, a->rq_prod++, a->qc.rq_depth,
						  sizeof(struct sl_chan_rqe)) =
		(struct sl_chan_rqe){
			.wr_id = wr_id, .addr = va(a->s, buf), .len = len, .lkey = lkey};
	__atomic_store_n(&a->qc.rq->prod, a->rq_prod, __ATOMIC_RELEASE);
}

/* Up to max completions of CQ k (0 send, 1 receive). */
static unsigned
cq_poll(struct app_qp *a, int k, struct sl_chan_cqe *out, unsigned max)
{
	struct sl_chan_cq *cq = &a->cq[k];
	uint32_t prod = __atomic_load_n(&cq->lane[0].ring->prod, __ATOMIC_ACQUIRE);
	unsigned n = 0;

	while (a->cq_cons[k] != prod && n < max)
		out[n++] = *(struct sl_chan_cqe *)sl_chan_ring_entry(
			cq->lane[0].ring, a->cq_cons[k]++, cq->depth, sizeof(*out));
	__atomic_store_n(&cq->lane[0].ring->cons, a->cq_cons[k], __ATOMIC_RELEASE);
	return n;
}

static void
expect_cqe(const struct sl_chan_cqe *e, uint64_t wr_id, uint8_t status, uint8_t opcode,
	   uint32_t byte_len)
{
	assert_int_equal(e->wr_id, wr_id);
	assert_int_equal(e->status, status);
	assert_int_equal(e->opcode, opcode);
	assert_int_equal(e->byte_len, byte_len);
}

static uint64_t
lane_stat(const struct side *s, size_t offset)
{
	struct sl_chan_lane_stats st;

	sl_chan_lane_stats_get(s->cl, &st);
	return *(const uint64_t *)((const uint8_t *)&st + offset);
}

#define STAT(s, member) lane_stat(s, offsetof(struct sl_chan_lane_stats, member))

static void
fill(uint8_t *p, uint32_t len, uint32_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed * 31 + i * 7 + (i >> 8));
}

static struct sl_chan_sqe
sqe(uint64_t wr_id, uint8_t opcode, const struct side *s, const void *buf, uint32_t len,
    uint32_t lkey, bool signaled)
{
	return (struct sl_chan_sqe){.wr_id = wr_id,
				    .opcode = opcode,
				    .addr = va(s, buf),
				    .len = len,
				    .lkey = lkey,
				    .flags = signaled ? SL_WR_F_SIGNALED : 0};
}

/* --- SEND / RECV -------------------------------------------------------------------------- */

static void
lane_poll__send_recv_bytes_and_cqes(void **state)
{
	static const uint32_t len[] = {1, 255, 256, 257, 1000, 4096};
	struct app_qp *a, *b;
	uint8_t *src = app_alloc(&P.s[0], 4096 * 6), *dst = app_alloc(&P.s[1], 4096 * 6);
	uint32_t skey = mr_reg(&P.s[0], CLIENT, src, 4096 * 6, 0);
	uint32_t rkey = mr_reg(&P.s[1], CLIENT, dst, 4096 * 6, SL_ACCESS_LOCAL_WRITE);
	struct sl_chan_cqe c[16];
	unsigned n;

	(void)state;
	qp_pair(&a, &b, QPN_BASE, 16, 16);
	for (unsigned i = 0; i < 6; i++) {
		fill(src + 4096 * i, len[i], i);
		post_recv(b, 100 + i, dst + 4096 * i, 4096, rkey);
		post_send(a, (struct sl_chan_sqe){.wr_id = i,
						  .opcode = SL_WR_SEND,
						  .addr = va(&P.s[0], src + 4096 * i),
						  .len = len[i],
						  .lkey = skey,
						  .flags = i % 2 ? SL_WR_F_SIGNALED : 0});
	}
	run(RUN);
	n = cq_poll(b, 1, c, 16);
	assert_int_equal(n, 6);
	for (unsigned i = 0; i < 6; i++) {
		expect_cqe(&c[i], 100 + i, SL_WC_SUCCESS, SL_WC_RECV, len[i]);
		assert_int_equal(c[i].qpn, QPN_BASE + 1);
		assert_int_equal(c[i].flags, 0);
		assert_memory_equal(dst + 4096 * i, src + 4096 * i, len[i]);
		assert_int_equal(dst[4096 * i + len[i]], 0); /* nothing past the message */
	}
	n = cq_poll(a, 0, c, 16); /* only the signaled ones */
	assert_int_equal(n, 3);
	for (unsigned i = 0; i < 3; i++) {
		expect_cqe(&c[i], 2 * i + 1, SL_WC_SUCCESS, SL_WC_SEND, len[2 * i + 1]);
		assert_int_equal(c[i].qpn, QPN_BASE);
	}
	assert_int_equal(STAT(&P.s[0], wr_posted), 6);
	assert_int_equal(STAT(&P.s[1], recv_posted), 6);
	assert_int_equal(STAT(&P.s[0], cqes), 3);
	assert_int_equal(STAT(&P.s[1], cqes), 6);
	assert_int_equal(a->cq[0].lane[0].reserved + b->cq[1].lane[0].reserved, 0);
	assert_int_equal(a->qc.sq->cons, 6);
	assert_int_equal(b->qc.rq->cons, 6);
	free(a);
	free(b);
}

static void
lane_on_recv__send_before_recv_is_stashed_in_order(void **state)
{
	static const uint32_t len[] = {300, 10, 700};
	struct app_qp *a, *b;
	uint8_t *src = app_alloc(&P.s[0], 3 * 1024), *dst = app_alloc(&P.s[1], 3 * 1024);
	uint32_t skey = mr_reg(&P.s[0], CLIENT, src, 3 * 1024, 0);
	uint32_t rkey = mr_reg(&P.s[1], CLIENT, dst, 3 * 1024, SL_ACCESS_LOCAL_WRITE);
	struct sl_chan_cqe c[8];

	(void)state;
	qp_pair(&a, &b, QPN_BASE, 16, 16);
	for (unsigned i = 0; i < 3; i++) {
		fill(src + 1024 * i, len[i], 10 + i);
		post_send(a, (struct sl_chan_sqe){.wr_id = i,
						  .opcode = SL_WR_SEND,
						  .addr = va(&P.s[0], src + 1024 * i),
						  .len = len[i],
						  .lkey = skey,
						  .flags = SL_WR_F_SIGNALED});
	}
	run(RUN);
	assert_int_equal(cq_poll(a, 0, c, 8), 3); /* held by the daemon: acknowledged */
	for (unsigned i = 0; i < 3; i++)
		expect_cqe(&c[i], i, SL_WC_SUCCESS, SL_WC_SEND, len[i]);
	assert_int_equal(cq_poll(b, 1, c, 8), 0);
	assert_int_equal(STAT(&P.s[1], stash_msgs), 3);
	/* one RECV: the oldest message; then two: the rest, in order */
	post_recv(b, 50, dst, 1024, rkey);
	run(2);
	assert_int_equal(cq_poll(b, 1, c, 8), 1);
	expect_cqe(&c[0], 50, SL_WC_SUCCESS, SL_WC_RECV, len[0]);
	post_recv(b, 51, dst + 1024, 1024, rkey);
	post_recv(b, 52, dst + 2048, 1024, rkey);
	run(2);
	assert_int_equal(cq_poll(b, 1, c, 8), 2);
	expect_cqe(&c[0], 51, SL_WC_SUCCESS, SL_WC_RECV, len[1]);
	expect_cqe(&c[1], 52, SL_WC_SUCCESS, SL_WC_RECV, len[2]);
	for (unsigned i = 0; i < 3; i++)
		assert_memory_equal(dst + 1024 * i, src + 1024 * i, len[i]);
	/* the stash is empty again: a message now goes straight into a RECV */
	post_recv(b, 53, dst, 1024, rkey);
	post_send(a, (struct sl_chan_sqe){.wr_id = 9,
					  .opcode = SL_WR_SEND,
					  .addr = va(&P.s[0], src + 2048),
					  .len = len[2],
					  .lkey = skey});
	run(RUN);
	assert_int_equal(cq_poll(b, 1, c, 8), 1);
	expect_cqe(&c[0], 53, SL_WC_SUCCESS, SL_WC_RECV, len[2]);
	assert_int_equal(STAT(&P.s[1], stash_msgs), 3);
	free(a);
	free(b);
}

static void
lane_on_recv__stash_serves_each_qp_in_its_order(void **state)
{
	struct app_qp *a1, *b1, *a2, *b2;
	uint8_t *src = app_alloc(&P.s[0], 3 * 1024), *dst = app_alloc(&P.s[1], 3 * 1024);
	uint32_t skey = mr_reg(&P.s[0], CLIENT, src, 3 * 1024, 0);
	uint32_t rkey = mr_reg(&P.s[1], CLIENT, dst, 3 * 1024, SL_ACCESS_LOCAL_WRITE);
	struct sl_chan_cqe c[8];

	(void)state;
	qp_pair(&a1, &b1, QPN_BASE, 16, 16);
	qp_pair(&a2, &b2, QPN_BASE + 2, 16, 16);
	fill(src, 3 * 1024, 4);
	post_send(a1, sqe(1, SL_WR_SEND, &P.s[0], src, 600, skey, false));
	run(RUN);
	post_send(a2, sqe(2, SL_WR_SEND, &P.s[0], src + 1024, 300, skey, false));
	run(RUN);
	post_send(a1, sqe(3, SL_WR_SEND, &P.s[0], src + 2048, 700, skey, false));
	run(RUN);
	assert_int_equal(STAT(&P.s[1], stash_msgs), 3);
	/* the second QP's message first, though the first QP's lies before it */
	post_recv(b2, 20, dst + 1024, 1024, rkey);
	run(2);
	assert_int_equal(cq_poll(b2, 1, c, 8), 1);
	expect_cqe(&c[0], 20, SL_WC_SUCCESS, SL_WC_RECV, 300);
	assert_int_equal(cq_poll(b1, 1, c, 8), 0);
	post_recv(b1, 10, dst, 1024, rkey);
	post_recv(b1, 11, dst + 2048, 1024, rkey);
	run(2);
	assert_int_equal(cq_poll(b1, 1, c, 8), 2);
	expect_cqe(&c[0], 10, SL_WC_SUCCESS, SL_WC_RECV, 600);
	expect_cqe(&c[1], 11, SL_WC_SUCCESS, SL_WC_RECV, 700);
	assert_memory_equal(dst, src, 600);
	assert_memory_equal(dst + 1024, src + 1024, 300);
	assert_memory_equal(dst + 2048, src + 2048, 700);
	free(a1);
	free(b1);
	free(a2);
	free(b2);
}

static void
lane_on_recv__stash_space_comes_back(void **state)
{
	enum { LEN = 40000 }; /* two of them do not fit the 64 KiB stash at once */
	struct app_qp *a, *b;
	uint8_t *src = app_alloc(&P.s[0], LEN), *dst = app_alloc(&P.s[1], LEN);
	uint32_t skey = mr_reg(&P.s[0], CLIENT, src, LEN, 0);
	uint32_t rkey = mr_reg(&P.s[1], CLIENT, dst, LEN, SL_ACCESS_LOCAL_WRITE);
	struct sl_chan_cqe c[4];

	(void)state;
	qp_pair(&a, &b, QPN_BASE, 16, 16);
	for (unsigned r = 0; r < 4; r++) {
		fill(src, LEN, 20 + r);
		post_send(a, sqe(r, SL_WR_SEND, &P.s[0], src, LEN, skey, true));
		run(RUN);
		assert_int_equal(cq_poll(a, 0, c, 4), 1);
		expect_cqe(&c[0], r, SL_WC_SUCCESS, SL_WC_SEND, LEN);
		post_recv(b, 100 + r, dst, LEN, rkey);
		run(2);
		assert_int_equal(cq_poll(b, 1, c, 4), 1);
		expect_cqe(&c[0], 100 + r, SL_WC_SUCCESS, SL_WC_RECV, LEN);
		assert_memory_equal(dst, src, LEN);
	}
	assert_int_equal(STAT(&P.s[1], stash_msgs), 4);
	assert_int_equal(STAT(&P.s[1], rnr_refused), 0);
	free(a);
	free(b);
}

/*
 * n SENDs of 4 KiB from a, its peer having posted no RECV: how many the peer's stash took (they
 * complete, in order, successfully; the others are refused for now and wait, not failed).
 */
static unsigned
send_early(struct app_qp *a, uint8_t *src, uint32_t skey, unsigned n)
{
	struct sl_chan_cqe c[8];
	unsigned got;

	for (unsigned i = 0; i < n; i++) {
		fill(src + 4096 * i, 4096, 30 + i);
		post_send(a, sqe(i, SL_WR_SEND, &P.s[0], src + 4096 * i, 4096, skey, true));
	}
	run(RUN);
	got = cq_poll(a, 0, c, 8);
	for (unsigned i = 0; i < got; i++)
		expect_cqe(&c[i], i, SL_WC_SUCCESS, SL_WC_SEND, 4096);
	return got;
}

/*
 * A QP whose application never posts a RECV holds its share of the stash (a quarter: 16 KiB of
 * 64) at the front; another QP's early SENDs, more bytes in all than the whole stash, still go
 * through the rest, and the first QP's messages are then delivered intact, in order.
 */
static void
lane_on_recv__a_qp_without_recvs_keeps_no_one_else_out(void **state)
{
	enum { LEN = 4000, ROUNDS = 20 }; /* 80000 bytes through a 64 KiB stash */
	struct app_qp *a1, *b1, *a2, *b2;
	uint8_t *src = app_alloc(&P.s[0], 4 * 4096), *dst = app_alloc(&P.s[1], 4 * 4096);
	uint32_t skey = mr_reg(&P.s[0], CLIENT, src, 4 * 4096, 0);
	uint32_t rkey = mr_reg(&P.s[1], CLIENT, dst, 4 * 4096, SL_ACCESS_LOCAL_WRITE);
	struct sl_chan_cqe c[8];

	(void)state;
	qp_pair(&a1, &b1, QPN_BASE, 16, 16);
	qp_pair(&a2, &b2, QPN_BASE + 2, 16, 16);
	assert_int_equal(send_early(a1, src, skey, 4), 4); /* its whole share */
	for (unsigned r = 0; r < ROUNDS; r++) {
		fill(src, LEN, 60 + r);
		post_send(a2, sqe(r, SL_WR_SEND, &P.s[0], src, LEN, skey, true));
		run(RUN);
		assert_int_equal(cq_poll(a2, 0, c, 8), 1);
		expect_cqe(&c[0], r, SL_WC_SUCCESS, SL_WC_SEND, LEN);
		post_recv(b2, 100 + r, dst, LEN, rkey);
		run(2);
		assert_int_equal(cq_poll(b2, 1, c, 8), 1);
		expect_cqe(&c[0], 100 + r, SL_WC_SUCCESS, SL_WC_RECV, LEN);
		assert_memory_equal(dst, src, LEN);
	}
	assert_int_equal(STAT(&P.s[1], rnr_refused), 0);
	assert_int_equal(STAT(&P.s[1], stash_qp_refused), 0);
	for (unsigned i = 0; i < 4; i++) {
		fill(src + 4096 * i, 4096, 30 + i);
		post_recv(b1, 10 + i, dst + 4096 * i, 4096, rkey);
	}
	run(2);
	assert_int_equal(cq_poll(b1, 1, c, 8), 4);
	for (unsigned i = 0; i < 4; i++)
		expect_cqe(&c[i], 10 + i, SL_WC_SUCCESS, SL_WC_RECV, 4096);
	assert_memory_equal(dst, src, 4 * 4096);
	free(a1);
	free(b1);
	free(a2);
	free(b2);
}

/*
 * A SEND past its QP's share of the stash is refused for now (an RNR NAK, counted in
 * stash_qp_refused, not rnr_refused) though the stash has room: it waits at the sender, sent
 * again after each backoff, and another QP has its own share meanwhile. Once the first QP's
 * application posts RECVs, all five arrive intact, in order, and the fifth completes: nothing
 * failed, nothing was delivered twice.
 */
static void
lane_on_recv__a_send_past_its_qps_share_is_refused(void **state)
{
	struct app_qp *a1, *b1, *a2, *b2;
	uint8_t *src = app_alloc(&P.s[0], 5 * 4096), *dst = app_alloc(&P.s[1], 5 * 4096);
	uint32_t skey = mr_reg(&P.s[0], CLIENT, src, 5 * 4096, 0);
	uint32_t rkey = mr_reg(&P.s[1], CLIENT, dst, 5 * 4096, SL_ACCESS_LOCAL_WRITE);
	struct sl_chan_cqe c[8];
	uint64_t refused;

	(void)state;
	qp_pair(&a1, &b1, QPN_BASE, 16, 16);
	assert_int_equal(send_early(a1, src, skey, 5), 4);
	refused = STAT(&P.s[1], stash_qp_refused);
	assert_true(refused >= 2); /* refused, sent again after its backoff, refused again */
	assert_int_equal(STAT(&P.s[1], rnr_refused), 0);
	assert_int_equal(cq_poll(b1, 1, c, 8), 0);
	qp_pair(&a2, &b2, QPN_BASE + 2, 16, 16);
	assert_int_equal(send_early(a2, src, skey, 4), 4);
	for (unsigned i = 0; i < 4; i++)
		post_recv(b2, 20 + i, dst + 4096 * i, 4096, rkey);
	run(2);
	assert_int_equal(cq_poll(b2, 1, c, 8), 4);
	for (unsigned i = 0; i < 4; i++)
		expect_cqe(&c[i], 20 + i, SL_WC_SUCCESS, SL_WC_RECV, 4096);
	assert_memory_equal(dst, src, 4 * 4096);
	for (unsigned i = 0; i < 5; i++) {
		fill(src + 4096 * i, 4096, 30 + i); /* a1's five, as send_early wrote them */
		post_recv(b1, 40 + i, dst + 4096 * i, 4096, rkey);
	}
	run(RUN);
	assert_int_equal(cq_poll(b1, 1, c, 8), 5);
	for (unsigned i = 0; i < 5; i++)
		expect_cqe(&c[i], 40 + i, SL_WC_SUCCESS, SL_WC_RECV, 4096);
	assert_memory_equal(dst, src, 5 * 4096);
	assert_int_equal(cq_poll(a1, 0, c, 8), 1);
	expect_cqe(&c[0], 4, SL_WC_SUCCESS, SL_WC_SEND, 4096);
	assert_int_equal(cq_poll(b1, 1, c, 8), 0);
	free(a1);
	free(b1);
	free(a2);
	free(b2);
}

/*
 * An application's QPs on a lane hold at most its share of the stash together (a quarter, 16
 * KiB of 64, in this test's setup): one that never posts RECVs fills it through one QP and is
 * refused on its second (stash_client_refused) though that QP and the lane have room; another
 * application's early SENDs take their own share, and are delivered intact once it posts
 * RECVs. Destroying the first application's QPs gives its share back.
 */
static void
lane_on_recv__an_application_holds_its_share_over_all_its_qps(void **state)
{
	enum { HOG = CLIENT + 1 };
	struct app_qp *a1, *b1, *a2, *b2, *a3, *b3;
	uint64_t refused;
	uint8_t *src = app_alloc(&P.s[0], 4 * 4096), *dst = app_alloc(&P.s[1], 4 * 4096);
	uint32_t skey = mr_reg(&P.s[0], CLIENT, src, 4 * 4096, 0);
	uint32_t rkey = mr_reg(&P.s[1], CLIENT, dst, 4 * 4096, SL_ACCESS_LOCAL_WRITE);
	struct sl_chan_cqe c[8];

	(void)state;
	qp_pair_to(&a1, &b1, QPN_BASE, 16, 16, HOG);
	qp_pair_to(&a2, &b2, QPN_BASE + 2, 16, 16, HOG);
	qp_pair(&a3, &b3, QPN_BASE + 4, 16, 16);
	assert_int_equal(send_early(a1, src, skey, 4), 4); /* the hog's whole share */
	assert_int_equal(send_early(a2, src, skey, 1), 0); /* refused for now, waiting */
	assert_true(STAT(&P.s[1], stash_client_refused) >= 1);
	assert_int_equal(send_early(a3, src, skey, 4), 4);
	for (unsigned i = 0; i < 4; i++)
		post_recv(b3, 20 + i, dst + 4096 * i, 4096, rkey);
	run(2);
	assert_int_equal(cq_poll(b3, 1, c, 8), 4);
	for (unsigned i = 0; i < 4; i++)
		expect_cqe(&c[i], 20 + i, SL_WC_SUCCESS, SL_WC_RECV, 4096);
	assert_memory_equal(dst, src, 4 * 4096);
	assert_int_equal(STAT(&P.s[1], rnr_refused), 0);
	assert_int_equal(STAT(&P.s[1], stash_qp_refused), 0);
	/* the hog goes: its share is free for its next QP (the lanes poll no QP that was freed) */
	assert_int_equal(qp_destroy(b1), 0);
	assert_int_equal(qp_destroy(b2), 0);
	assert_int_equal(qp_destroy(a1), 0);
	assert_int_equal(qp_destroy(a2), 0);
	free(a1);
	free(b1);
	refused = STAT(&P.s[1], stash_client_refused);
	qp_pair_to(&a1, &b1, QPN_BASE + 6, 16, 16, HOG);
	assert_int_equal(send_early(a1, src, skey, 4), 4);
	assert_int_equal(STAT(&P.s[1], stash_client_refused), refused);
	free(a1);
	free(b1);
	free(a2);
	free(b2);
	free(a3);
	free(b3);
}

static void
lane_poll__budget_bounds_each_ring(void **state)
{
	struct app_qp *a = qp_new(&P.s[0], CLIENT, QPN_BASE, 16, 64, 16);
	struct app_qp *b = qp_new(&P.s[0], CLIENT, QPN_BASE + 1, 16, 64, 16);
	uint8_t *buf = app_alloc(&P.s[0], 64);
	uint32_t key = mr_reg(&P.s[0], CLIENT, buf, 64, SL_ACCESS_LOCAL_WRITE);

	(void)state;
	assert_int_equal(qp_connect(a, 9), 0);
	assert_int_equal(qp_connect(b, 10), 0);
	for (unsigned i = 0; i < 64; i++)
		post_recv(a, i, buf, 64, key);
	post_recv(b, 99, buf, 64, key);
	sl_chan_lane_poll(P.s[0].cl, P.s[0].x, P.now);
	assert_int_equal(a->qc.rq->cons, 32); /* LANE_BUDGET a poll */
	assert_int_equal(b->qc.rq->cons, 1);
	sl_chan_lane_poll(P.s[0].cl, P.s[0].x, P.now);
	assert_int_equal(a->qc.rq->cons, 64);
	assert_int_equal(STAT(&P.s[0], recv_posted), 65);
	free(a);
	free(b);
}

static void
lane_create__bad_conf_is_einval(void **state)
{
	struct sl_chan_lane_conf ok = {
		.qpn_base = 1, .qps = 4, .sq_depth_max = 16, .rq_depth_max = 16, .mrs = P.s[0].mrs};
	struct sl_chan_lane_conf bad[] = {ok, ok, ok, ok, ok};
	struct sl_chan_lane *cl;

	(void)state;
	bad[0].qps = 0;
	bad[1].mrs = NULL;
	bad[2].sq_depth_max = 24;
	bad[3].rq_depth_max = SL_CHAN_RING_MAX * 2;
	bad[4].qpn_base = UINT32_MAX - 2;
	for (unsigned k = 0; k < SL_ARRAY_SIZE(bad); k++) {
		errno = 0;
		assert_null(sl_chan_lane_create(&bad[k]));
		assert_int_equal(errno, EINVAL);
	}
	cl = sl_chan_lane_create(&ok); /* no stash at all is allowed */
	assert_non_null(cl);
	assert_true(sl_chan_lane_owns(cl, 4));
	assert_false(sl_chan_lane_owns(cl, 5));
	assert_false(sl_chan_lane_owns(cl, 0));
	sl_chan_lane_free(cl);
}

static void
lane_on_recv__recv_too_short_is_loc_len_err(void **state)
{
	struct app_qp *a, *b;
	uint8_t *src = app_alloc(&P.s[0], 1024), *dst = app_alloc(&P.s[1], 1024);
	uint32_t skey = mr_reg(&P.s[0], CLIENT, src, 1024, 0);
	uint32_t rkey = mr_reg(&P.s[1], CLIENT, dst, 1024, SL_ACCESS_LOCAL_WRITE);
	struct sl_xport_qp_stats xst;
	struct sl_chan_cqe c[8];

	(void)state;
	qp_pair(&a, &b, QPN_BASE, 16, 16);
	post_recv(b, 7, dst, 100, rkey);
	post_send(a, sqe(1, SL_WR_SEND, &P.s[0], src, 300, skey, true));
	run(RUN);
	assert_int_equal(cq_poll(b, 1, c, 8), 1);
	assert_int_equal(c[0].wr_id, 7);
	assert_int_equal(c[0].status, SL_WC_LOC_LEN_ERR);
	assert_int_equal(STAT(&P.s[1], len_refused), 1);
	/* b is in error: a RECV posted now is flushed */
	post_recv(b, 8, dst, 100, rkey);
	run(2);
	assert_int_equal(cq_poll(b, 1, c, 8), 1);
	expect_cqe(&c[0], 8, SL_WC_WR_FLUSH_ERR, SL_WC_RECV, 100);
	/* ... but open on its endpoint, whose receiver goes on refusing the peer, until destroyed
	 */
	assert_int_equal(sl_xport_qp_stats_get(P.s[1].x, QPN_BASE + 1, &xst), 0);
	assert_int_equal(qp_destroy(b), 0);
	assert_int_equal(sl_xport_qp_stats_get(P.s[1].x, QPN_BASE + 1, &xst), -ENOENT);
	free(a);
	free(b);
}

static void
lane_poll__bad_lkey_is_loc_prot_err_and_later_wrs_flush(void **state)
{
	struct app_qp *a, *b;
	uint8_t *src = app_alloc(&P.s[0], 1024), *dst = app_alloc(&P.s[1], 1024);
	uint32_t skey = mr_reg(&P.s[0], CLIENT, src, 512, 0);
	uint32_t other = mr_reg(&P.s[0], ALIAS, src, 512, 0); /* another client's */
	uint32_t rkey = mr_reg(&P.s[1], CLIENT, dst, 1024, SL_ACCESS_LOCAL_WRITE);
	uint32_t ro = mr_reg(&P.s[1], CLIENT, dst, 1024, 0); /* no LOCAL_WRITE */
	struct sl_xport_qp_stats xst;
	struct sl_chan_cqe c[8];

	(void)state;
	qp_pair(&a, &b, QPN_BASE, 16, 16);
	post_recv(b, 1, dst, 1024, rkey);
	post_send(a, sqe(1, SL_WR_SEND, &P.s[0], src, 100, skey, true));
	run(RUN);
	assert_int_equal(cq_poll(a, 0, c, 8), 1);
	expect_cqe(&c[0], 1, SL_WC_SUCCESS, SL_WC_SEND, 100);
	assert_int_equal(cq_poll(b, 1, c, 8), 1);
	post_send(a, sqe(2, SL_WR_SEND, &P.s[0], src, 100, skey ^ 0x10000, true)); /* stale */
	post_send(a, sqe(3, SL_WR_SEND, &P.s[0], src, 100, skey, false));
	post_send(a, sqe(4, SL_WR_WRITE, &P.s[0], src, 100, skey, true));
	run(2);
	assert_int_equal(cq_poll(a, 0, c, 8), 3);
	expect_cqe(&c[0], 2, SL_WC_LOC_PROT_ERR, SL_WC_SEND, 100);
	expect_cqe(&c[1], 3, SL_WC_WR_FLUSH_ERR, SL_WC_SEND, 100); /* unsignaled: errors show */
	expect_cqe(&c[2], 4, SL_WC_WR_FLUSH_ERR, SL_WC_WRITE, 100);
	assert_int_equal(STAT(&P.s[0], wr_loc_prot), 1);
	assert_int_equal(sl_xport_qp_stats_get(P.s[0].x, QPN_BASE, &xst), -ENOENT); /* closed */
	/* out of its range, another client's key, READ into memory without LOCAL_WRITE */
	for (unsigned k = 0; k < 3; k++) {
		struct app_qp *x = qp_new(&P.s[0], CLIENT, QPN_BASE + 2 + k, 16, 64, 16);
		struct sl_chan_sqe bad[] = {sqe(5, SL_WR_SEND, &P.s[0], src + 400, 200, skey, true),
					    sqe(6, SL_WR_SEND, &P.s[0], src, 100, other, true),
					    sqe(7, SL_WR_READ, &P.s[0], src, 100, skey, true)};

		assert_int_equal(qp_connect(x, QPN_BASE + 1), 0);
		post_send(x, bad[k]);
		run(2);
		assert_int_equal(cq_poll(x, 0, c, 8), 1);
		assert_int_equal(c[0].wr_id, 5 + k);
		assert_int_equal(c[0].status, SL_WC_LOC_PROT_ERR);
		assert_int_equal(qp_destroy(x), 0);
		free(x);
	}
	assert_int_equal(STAT(&P.s[0], wr_loc_prot), 4);
	/* a RECV into memory without LOCAL_WRITE */
	post_recv(b, 2, dst, 100, ro);
	post_recv(b, 3, dst, 100, rkey);
	run(2);
	assert_int_equal(cq_poll(b, 1, c, 8), 2);
	expect_cqe(&c[0], 2, SL_WC_LOC_PROT_ERR, SL_WC_RECV, 100);
	expect_cqe(&c[1], 3, SL_WC_WR_FLUSH_ERR, SL_WC_RECV, 100);
	free(a);
	free(b);
}

static void
lane_poll__bad_opcode_or_length_is_general_err(void **state)
{
	struct app_qp *a, *b;
	uint8_t *src = app_alloc(&P.s[0], 1024);
	uint32_t skey = mr_reg(&P.s[0], CLIENT, src, 1024, 0);
	uint32_t dkey = mr_reg(&P.s[0], CLIENT, src, 1024, SL_ACCESS_LOCAL_WRITE); /* READ into */
	struct sl_chan_cqe c[8];

	(void)state;
	qp_pair(&a, &b, QPN_BASE, 16, 16);
	a->qc.max_msg_bytes = 512;
	post_send(a, sqe(1, 99, &P.s[0], src, 10, skey, false));
	post_send(a, sqe(2, SL_WR_SEND, &P.s[0], src, 10, skey, true));
	run(2);
	assert_int_equal(cq_poll(a, 0, c, 8), 2);
	assert_int_equal(c[0].status, SL_WC_GENERAL_ERR);
	assert_int_equal(c[1].status, SL_WC_WR_FLUSH_ERR);
	assert_int_equal(qp_destroy(a), 0);
	free(a);
	a = qp_new(&P.s[0], CLIENT, QPN_BASE, 16, 64, 16);
	a->qc.max_msg_bytes = 512;
	assert_int_equal(qp_connect(a, QPN_BASE + 1), 0);
	post_send(a, sqe(3, SL_WR_SEND, &P.s[0], src, 513, skey, false));
	run(2);
	assert_int_equal(cq_poll(a, 0, c, 8), 1);
	expect_cqe(&c[0], 3, SL_WC_GENERAL_ERR, SL_WC_SEND, 513);
	assert_int_equal(STAT(&P.s[0], wr_bad), 2);
	/* a READ asking the peer for more than max_msg_bytes, the same cap */
	assert_int_equal(qp_destroy(a), 0);
	free(a);
	a = qp_new(&P.s[0], CLIENT, QPN_BASE, 16, 64, 16);
	a->qc.max_msg_bytes = 512;
	assert_int_equal(qp_connect(a, QPN_BASE + 1), 0);
	post_send(a, sqe(4, SL_WR_READ, &P.s[0], src, 513, dkey, false));
	run(2);
	assert_int_equal(cq_poll(a, 0, c, 8), 1);
	expect_cqe(&c[0], 4, SL_WC_GENERAL_ERR, SL_WC_READ, 513);
	assert_int_equal(STAT(&P.s[0], wr_bad), 3);
	free(a);
	free(b);
}

static void
lane_poll__corrupt_sq_index_fails_only_its_qp(void **state)
{
	struct app_qp *a1, *b1, *a2, *b2;
	uint8_t *src = app_alloc(&P.s[0], 1024), *dst = app_alloc(&P.s[1], 1024);
	uint8_t *adst = app_alloc(&P.s[0], 1024);
	uint32_t skey = mr_reg(&P.s[0], CLIENT, src, 1024, SL_ACCESS_LOCAL_WRITE);
	uint32_t akey = mr_reg(&P.s[0], CLIENT, adst, 1024, SL_ACCESS_LOCAL_WRITE);
	uint32_t rkey = mr_reg(&P.s[1], CLIENT, dst, 1024, SL_ACCESS_LOCAL_WRITE);
	struct sl_chan_cqe c[8];

	(void)state;
	qp_pair(&a1, &b1, QPN_BASE, 16, 16);
	qp_pair(&a2, &b2, QPN_BASE + 2, 16, 16);
	post_recv(a1, 40, adst, 100, akey);
	post_recv(b2, 41, dst, 1024, rkey);
	run(2);
	/* the application writes a producer index far ahead of what it posted */
	__atomic_store_n(&a1->qc.sq->prod, a1->sq_prod + 1000, __ATOMIC_RELEASE);
	fill(src, 500, 3);
	post_send(a2, sqe(1, SL_WR_SEND, &P.s[0], src, 500, skey, true));
	run(RUN);
	assert_int_equal(STAT(&P.s[0], bad_ring), 1);
	assert_int_equal(cq_poll(a1, 1, c, 8), 1); /* a1 failed: its RECV flushed */
	expect_cqe(&c[0], 40, SL_WC_WR_FLUSH_ERR, SL_WC_RECV, 100);
	assert_int_equal(a1->qc.sq->cons, 0);      /* nothing taken from the bad ring */
	assert_int_equal(cq_poll(a2, 0, c, 8), 1); /* the other QP goes on */
	expect_cqe(&c[0], 1, SL_WC_SUCCESS, SL_WC_SEND, 500);
	assert_int_equal(cq_poll(b2, 1, c, 8), 1);
	expect_cqe(&c[0], 41, SL_WC_SUCCESS, SL_WC_RECV, 500);
	assert_memory_equal(dst, src, 500);
	/* a receive ring too */
	__atomic_store_n(&a2->qc.rq->prod, a2->rq_prod - 1, __ATOMIC_RELEASE);
	run(2);
	assert_int_equal(STAT(&P.s[0], bad_ring), 2);
	assert_int_equal(qp_destroy(a1), 0);
	assert_int_equal(qp_destroy(a2), 0);
	free(a1);
	free(b1);
	free(a2);
	free(b2);
}

static void
lane_poll__tiny_cq_loses_no_completion(void **state)
{
	enum { N = 40 };
	struct app_qp *a, *b;
	uint8_t *src = app_alloc(&P.s[0], 1024), *dst = app_alloc(&P.s[1], 1024 * 64);
	uint32_t skey = mr_reg(&P.s[0], CLIENT, src, 1024, 0);
	uint32_t rkey = mr_reg(&P.s[1], CLIENT, dst, 1024 * 64, SL_ACCESS_LOCAL_WRITE);
	struct sl_chan_cqe c[8];
	unsigned got = 0;

	(void)state;
	qp_pair(&a, &b, QPN_BASE, 64, 4);
	for (unsigned i = 0; i < N; i++) {
		post_recv(b, 1000 + i, dst + 1024 * i, 1024, rkey);
		post_send(a, sqe(i, SL_WR_SEND, &P.s[0], src, 10 + i, skey, true));
	}
	for (unsigned t = 0; t < 50 * RUN && got < N; t++) {
		step();
		if (t % 50 == 0 && cq_poll(a, 0, c, 1) == 1) { /* a slow consumer */
			expect_cqe(&c[0], got, SL_WC_SUCCESS, SL_WC_SEND, 10 + got);
			got++;
		}
		assert_true(a->cq[0].lane[0].reserved <= 4);
	}
	assert_int_equal(got, N);
	assert_true(STAT(&P.s[0], cq_full_waits) > 0);
	assert_int_equal(a->cq[0].lane[0].reserved, 0);
	free(a);
	free(b);
}

static void
lane_call__destroy_flushes_everything_taken(void **state)
{
	enum { N = 16 };
	struct app_qp *a, *b;
	uint8_t *src = app_alloc(&P.s[0], 4096), *dst = app_alloc(&P.s[1], 4096);
	uint32_t skey = mr_reg(&P.s[0], CLIENT, src, 4096, 0);
	uint32_t rkey = mr_reg(&P.s[1], CLIENT, dst, 4096, SL_ACCESS_LOCAL_WRITE);
	struct sl_chan_cqe c[2 * N];
	unsigned n, flushed = 0;

	(void)state;
	qp_pair(&a, &b, QPN_BASE, N, 2 * N);
	for (unsigned i = 0; i < N; i++) {
		post_recv(b, 100 + i, dst, 4096, rkey);
		post_send(a, sqe(i, SL_WR_SEND, &P.s[0], src, 4096, skey, i % 2));
	}
	run(5); /* XPORT_SQ in the endpoint, the rest still in the ring */
	assert_true(a->qc.sq->cons < N);
	assert_int_equal(qp_destroy(a), 0);
	n = cq_poll(a, 0, c, 2 * N); /* on the CQ when destroy returns */
	/* in order: the signaled ones that completed, then every later one flushed */
	for (unsigned i = 0, wr = 0; i < n; i++, wr++) {
		if (c[i].status == SL_WC_SUCCESS) {
			while (wr % 2 == 0) /* unsignaled successes leave no CQE */
				wr++;
			assert_int_equal(flushed, 0);
		} else {
			assert_int_equal(c[i].status, SL_WC_WR_FLUSH_ERR);
			flushed++;
		}
		expect_cqe(&c[i], wr, c[i].status, SL_WC_SEND, 4096);
	}
	assert_true(flushed >= N - XPORT_SQ);
	assert_int_equal(c[n - 1].wr_id, N - 1);
	assert_int_equal(a->cq[0].lane[0].reserved, 0);
	/* the receiver's RECVs still held are flushed too */
	run(RUN);
	n = cq_poll(b, 1, c, 2 * N);
	assert_int_equal(qp_destroy(b), 0);
	n += cq_poll(b, 1, c + n, 2 * N - n);
	assert_int_equal(n, N);
	assert_int_equal(b->cq[1].lane[0].reserved, 0);
	/* gone: a second destroy finds nothing */
	assert_int_equal(qp_destroy(b), -ENOENT);
	free(a);
	free(b);
}

/* A CQ's event socket pair as srv_req.c makes it: [0] the daemon's end, [1] the application's. */
static void
event_pair(int sv[2])
{
	assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0, sv), 0);
	assert_int_equal(shutdown(sv[0], SHUT_RD), 0);
}

static void
cq__event_fd_written_when_armed(void **state)
{
	struct app_qp *a, *b;
	uint8_t *src = app_alloc(&P.s[0], 1024), *dst = app_alloc(&P.s[1], 1024);
	uint32_t skey = mr_reg(&P.s[0], CLIENT, src, 1024, 0);
	uint32_t rkey = mr_reg(&P.s[1], CLIENT, dst, 1024, SL_ACCESS_LOCAL_WRITE);
	struct sl_chan_cqe c[8];
	uint64_t v = 0;
	int sv[2];

	(void)state;
	event_pair(sv);
	qp_pair(&a, &b, QPN_BASE, 16, 16);
	b->cq[1].event_fd = sv[0];
	post_recv(b, 1, dst, 512, rkey);
	post_recv(b, 2, dst + 512, 512, rkey);
	post_send(a, sqe(1, SL_WR_SEND, &P.s[0], src, 10, skey, false));
	run(RUN);
	assert_int_equal(read(sv[1], &v, 8), -1); /* not armed: no event */
	__atomic_store_n(&b->cq[1].lane[0].ring->armed, 1, __ATOMIC_RELEASE);
	post_send(a, sqe(2, SL_WR_SEND, &P.s[0], src, 10, skey, false));
	run(RUN);
	assert_int_equal(read(sv[1], &v, 8), 8);
	assert_int_equal(v, 1);
	assert_int_equal(read(sv[1], &v, 8), -1); /* one event per arm */
	assert_int_equal(b->cq[1].lane[0].ring->armed, 0);
	assert_int_equal(STAT(&P.s[1], events), 1);
	assert_int_equal(cq_poll(b, 1, c, 8), 2);
	/* the application's end cannot queue data at the daemon's */
	assert_int_equal(send(sv[1], &v, 8, MSG_DONTWAIT | MSG_NOSIGNAL), -1);
	close(sv[0]);
	close(sv[1]);
	free(a);
	free(b);
}

/*
 * Whatever the application does with its end of the event socket (never read it, close it),
 * the lane's signal neither blocks nor raises SIGPIPE; even a daemon's end in blocking mode
 * (which the application cannot reach) does not block it. The unsent events are counted. A
 * lane that blocked would hang this test (meson's timeout fails it); SIGPIPE would kill it.
 */
static void
cq__event_never_blocks_the_lane(void **state)
{
	struct app_qp *a, *b;
	uint8_t *src = app_alloc(&P.s[0], 1024), *dst = app_alloc(&P.s[1], 1024);
	uint32_t skey = mr_reg(&P.s[0], CLIENT, src, 1024, 0);
	uint32_t rkey = mr_reg(&P.s[1], CLIENT, dst, 1024, SL_ACCESS_LOCAL_WRITE);
	struct sl_chan_cqe c[8];
	uint64_t v = 0, queued = 0;
	int sv[2];

	(void)state;
	event_pair(sv);
	assert_int_equal(fcntl(sv[0], F_SETFL, 0), 0);
	while (send(sv[0], &v, 8, MSG_DONTWAIT) == 8) /* the application never reads */
		queued++;
	assert_true(errno == EAGAIN && queued > 0);
	qp_pair(&a, &b, QPN_BASE, 16, 16);
	b->cq[1].event_fd = sv[0];
	for (uint64_t i = 1; i <= 2; i++) {
		post_recv(b, i, dst + 512 * (i - 1), 512, rkey);
		__atomic_store_n(&b->cq[1].lane[0].ring->armed, 1, __ATOMIC_RELEASE);
		post_send(a, sqe(i, SL_WR_SEND, &P.s[0], src, 10, skey, false));
		run(RUN);
		assert_int_equal(cq_poll(b, 1, c, 8), 1);
		assert_int_equal(c[0].status, SL_WC_SUCCESS);
		assert_int_equal(STAT(&P.s[1], events_unsent), i);
		if (i == 1)
			close(sv[1]); /* the second round: the application's end is gone */
	}
	assert_int_equal(STAT(&P.s[1], events), 0);
	close(sv[0]);
	free(a);
	free(b);
}

static void
lane_call__client_gone_destroys_only_its_qps(void **state)
{
	struct app_qp *mine = qp_new(&P.s[0], CLIENT, QPN_BASE, 16, 64, 16);
	struct app_qp *theirs = qp_new(&P.s[0], CLIENT + 1, QPN_BASE + 1, 16, 64, 16);
	uint8_t *buf = app_alloc(&P.s[0], 1024);
	uint32_t k1 = mr_reg(&P.s[0], CLIENT, buf, 512, SL_ACCESS_LOCAL_WRITE);
	uint32_t k2 = mr_reg(&P.s[0], CLIENT + 1, buf + 512, 512, SL_ACCESS_LOCAL_WRITE);
	struct sl_chan_cqe c[8];

	(void)state;
	assert_int_equal(qp_connect(mine, 9), 0);
	assert_int_equal(qp_connect(theirs, 10), 0);
	/* one client cannot reach the other's QP */
	assert_int_equal(lane_cmd(&P.s[0], &(struct sl_chan_cmd){.type = SL_CHAN_CMD_QP_DESTROY,
								 .client = CLIENT,
								 .qpn = QPN_BASE + 1}),
			 -ENOENT);
	/* nor can a client whose number shares CLIENT's low 32 bits, nor does its leaving touch
	 * CLIENT's QPs */
	assert_int_equal(lane_cmd(&P.s[0], &(struct sl_chan_cmd){.type = SL_CHAN_CMD_QP_DESTROY,
								 .client = ALIAS,
								 .qpn = QPN_BASE}),
			 -ENOENT);
	assert_int_equal(lane_cmd(&P.s[0], &(struct sl_chan_cmd){.type = SL_CHAN_CMD_CLIENT_GONE,
								 .client = ALIAS}),
			 0);
	post_recv(mine, 1, buf, 512, k1);
	post_recv(theirs, 2, buf + 512, 512, k2);
	run(2);
	assert_int_equal(lane_cmd(&P.s[0], &(struct sl_chan_cmd){.type = SL_CHAN_CMD_CLIENT_GONE,
								 .client = CLIENT}),
			 0);
	assert_int_equal(cq_poll(mine, 1, c, 8), 1);
	expect_cqe(&c[0], 1, SL_WC_WR_FLUSH_ERR, SL_WC_RECV, 512);
	assert_int_equal(cq_poll(theirs, 1, c, 8), 0);
	assert_int_equal(qp_destroy(mine), -ENOENT);
	/* the QPN is free again */
	free(mine);
	mine = qp_new(&P.s[0], CLIENT, QPN_BASE, 16, 64, 16);
	assert_int_equal(qp_connect(mine, 9), 0);
	assert_int_equal(qp_destroy(theirs), 0);
	assert_int_equal(cq_poll(theirs, 1, c, 8), 1);
	expect_cqe(&c[0], 2, SL_WC_WR_FLUSH_ERR, SL_WC_RECV, 512);
	assert_int_equal(qp_destroy(mine), 0);
	free(mine);
	free(theirs);
}

static void
lane_call__commands_are_checked(void **state)
{
	struct app_qp *a = qp_new(&P.s[0], CLIENT, QPN_BASE, 16, 64, 16);
	struct sl_chan_qp_conf qc = a->qc;
	struct sl_chan_cmd connect = {.type = SL_CHAN_CMD_QP_CONNECT, .client = CLIENT, .qp = &qc};
	struct sl_chan_cq one_ring = a->cq[0];

	(void)state;
	qc.xqp.peer_qpn = 5;
	assert_int_equal(qp_connect(a, 5), 0);
	connect.qpn = qc.xqp.qpn;
	assert_int_equal(lane_cmd(&P.s[0], &connect), -EEXIST);
	qc.xqp.qpn = connect.qpn = QPN_BASE + LANE_QPS; /* not this lane's */
	assert_int_equal(lane_cmd(&P.s[0], &connect), -ERANGE);
	qc.xqp.qpn = connect.qpn = QPN_BASE - 1;
	assert_int_equal(lane_cmd(&P.s[0], &connect), -ERANGE);
	qc.xqp.qpn = connect.qpn = QPN_BASE + 1;
	connect.qpn = QPN_BASE + 2; /* not the QP it names */
	assert_int_equal(lane_cmd(&P.s[0], &connect), -EINVAL);
	connect.qpn = QPN_BASE + 1;
	connect.client = ALIAS; /* not its client */
	assert_int_equal(lane_cmd(&P.s[0], &connect), -EINVAL);
	connect.client = CLIENT;
	qc.sq_depth = 128; /* over sq_depth_max */
	assert_int_equal(lane_cmd(&P.s[0], &connect), -EINVAL);
	qc.sq_depth = 24; /* not a power of two */
	assert_int_equal(lane_cmd(&P.s[0], &connect), -EINVAL);
	qc.sq_depth = 16;
	one_ring.rings = 0; /* a CQ with no ring for this lane */
	qc.send_cq = &one_ring;
	assert_int_equal(lane_cmd(&P.s[0], &connect), -EINVAL);
	assert_int_equal(lane_cmd(&P.s[0], &(struct sl_chan_cmd){.type = 77}), -EINVAL);
	assert_int_equal(lane_cmd(&P.s[0], &(struct sl_chan_cmd){.type = SL_CHAN_CMD_QP_CONNECT,
								 .client = CLIENT,
								 .qpn = QPN_BASE + 3}),
			 -EINVAL); /* names no QP */
	assert_int_equal(STAT(&P.s[0], cmds), 11);
	assert_int_equal(qp_destroy(a), 0);
	free(a);
}

static void
lane_call__times_out_without_a_poll_then_is_answered(void **state)
{
	struct app_qp *a = qp_new(&P.s[0], CLIENT, QPN_BASE, 16, 64, 16);
	struct sl_chan_cmd cmd = {
		.type = SL_CHAN_CMD_QP_DESTROY, .client = CLIENT, .qpn = QPN_BASE};

	(void)state;
	assert_int_equal(qp_connect(a, 5), 0);
	assert_int_equal(sl_chan_lane_call(P.s[0].cl, &cmd, SL_NS_PER_MS), -ETIMEDOUT);
	assert_false(atomic_load(&cmd.done));
	sl_chan_lane_poll(P.s[0].cl, P.s[0].x, P.now);
	assert_true(atomic_load(&cmd.done));
	assert_int_equal(cmd.result, 0);
	free(a);
}

/*
 * A lane that does not poll: commands time out and stay queued until its mailbox is full; then
 * a command is refused at once with -EAGAIN, not posted, and goes through once the lane drains.
 */
static void
lane_call__a_full_mailbox_refuses_at_once_then_takes_again(void **state)
{
	enum { TRIES = 256 }; /* well above the mailbox's size */
	struct app_qp *a = qp_new(&P.s[0], CLIENT, QPN_BASE, 16, 64, 16);
	struct sl_chan_cmd stuck[TRIES];
	struct sl_chan_cmd destroy = {
		.type = SL_CHAN_CMD_QP_DESTROY, .client = CLIENT, .qpn = QPN_BASE};
	unsigned n = 0;
	int rc;

	(void)state;
	assert_int_equal(qp_connect(a, 5), 0);
	do { /* harmless commands (another client's goodbye) that time out at once */
		assert_true(n < TRIES);
		stuck[n] = (struct sl_chan_cmd){.type = SL_CHAN_CMD_CLIENT_GONE, .client = ALIAS};
		rc = sl_chan_lane_call(P.s[0].cl, &stuck[n++], 0);
	} while (rc == -ETIMEDOUT);
	assert_int_equal(rc, -EAGAIN);
	n--; /* stuck[n] was refused: the mailbox holds stuck[0 .. n - 1] */
	assert_true(n > 0);
	assert_int_equal(sl_chan_lane_call(P.s[0].cl, &destroy, SL_NS_PER_S), -EAGAIN);
	sl_chan_lane_poll(P.s[0].cl, P.s[0].x, P.now);
	for (unsigned i = 0; i < n; i++)
		assert_true(atomic_load(&stuck[i].done));
	assert_false(atomic_load(&stuck[n].done));
	assert_false(atomic_load(&destroy.done));
	assert_int_equal(STAT(&P.s[0], cmds), 1 + n); /* QP_CONNECT and the ones queued */
	assert_int_equal(lane_cmd(&P.s[0], &destroy), 0);
	assert_int_equal(qp_destroy(a), -ENOENT);
	free(a);
}

static void
lane_session__fails_every_qp(void **state)
{
	struct app_qp *a, *b;
	uint8_t *src = app_alloc(&P.s[0], 1024);
	uint32_t key = mr_reg(&P.s[0], CLIENT, src, 1024, SL_ACCESS_LOCAL_WRITE);
	struct sl_chan_cqe c[8];

	(void)state;
	qp_pair(&a, &b, QPN_BASE, 16, 16);
	post_recv(a, 1, src, 100, key);
	run(2);
	sl_chan_lane_session(P.s[0].cl, P.s[0].x, P.now);
	assert_int_equal(cq_poll(a, 1, c, 8), 1);
	expect_cqe(&c[0], 1, SL_WC_WR_FLUSH_ERR, SL_WC_RECV, 100);
	post_send(a, sqe(2, SL_WR_SEND, &P.s[0], src, 10, key, false));
	run(2);
	assert_int_equal(cq_poll(a, 0, c, 8), 1);
	expect_cqe(&c[0], 2, SL_WC_WR_FLUSH_ERR, SL_WC_SEND, 10);
	assert_int_equal(qp_destroy(a), 0); /* the application destroys it */
	free(a);
	free(b);
}

/* --- placement at the target (the lane's callbacks, called as the endpoint would) --------- */

static struct sl_xport_rx_seg
write_seg(uint32_t qpn, uint64_t raddr, uint32_t rkey, const uint8_t *data, uint32_t off,
	  uint32_t len, uint32_t total)
{
	return (struct sl_xport_rx_seg){.qpn = qpn,
					.op = SL_XPORT_OP_WRITE,
					.offset = off,
					.data = data,
					.len = len,
					.first = off == 0,
					.last = off + len == total,
					.raddr = raddr,
					.rkey = rkey,
					.total_len = total};
}

static void
lane_on_recv__write_checks_key_range_and_access(void **state)
{
	struct side *s = &P.s[1];
	uint8_t *mem = app_alloc(s, 1024), data[600], zero[1024] = {0};
	uint32_t key, nokey, other, lkey;
	uint64_t base = va(s, mem);

	lkey = mr_reg_keys(s, CLIENT, mem, 512, SL_ACCESS_LOCAL_WRITE | SL_ACCESS_REMOTE_WRITE,
			   &key);
	nokey = mr_reg_remote(s, CLIENT, mem, 512, SL_ACCESS_LOCAL_WRITE);
	other = mr_reg_remote(s, ALIAS, mem, 512, SL_ACCESS_LOCAL_WRITE | SL_ACCESS_REMOTE_WRITE);
	struct {
		uint64_t raddr;
		uint32_t rkey, len;
	} bad[] = {
		{base, key ^ 0x10000, 100}, /* its random bits wrong */
		{base, key + 1, 100},       /* a key nobody has */
		{base, lkey, 100},          /* its lkey: for its owner's own work only */
		{base, other, 100},         /* another client's */
		{base + 400, key, 200},     /* past the end */
		{base - 1, key, 10},        /* before the start */
		{UINT64_MAX - 5, key, 100}, /* wraps */
		{base, nokey, 100},         /* no REMOTE_WRITE */
	};
	struct sl_xport_rx_seg seg;
	struct app_qp *q;

	(void)state;
	fill(data, sizeof(data), 5);
	for (unsigned k = 0; k < SL_ARRAY_SIZE(bad); k++) {
		q = qp_new(s, CLIENT, QPN_BASE, 16, 64, 16);
		assert_int_equal(qp_connect(q, 3), 0);
		seg = write_seg(QPN_BASE, bad[k].raddr, bad[k].rkey, data, 0, SEG,
				bad[k].len + SEG);
		assert_int_equal(sl_chan_lane_on_recv(s->cl, &seg, P.now), SL_XPORT_SYN_ACCESS);
		assert_memory_equal(mem, zero, 1024);
		assert_int_equal(qp_destroy(q), 0);
		free(q);
	}
	assert_int_equal(STAT(s, write_refused), SL_ARRAY_SIZE(bad));
	/* a good one in two segments, the last with an immediate that takes a RECV */
	q = qp_new(s, CLIENT, QPN_BASE, 16, 64, 16);
	assert_int_equal(qp_connect(q, 3), 0);
	post_recv(q, 77, mem, 0, 0);
	sl_chan_lane_poll(s->cl, s->x, P.now);
	for (uint32_t off = 0; off < 400; off += SEG) {
		seg = write_seg(QPN_BASE, base + 100, key, data + off, off, SL_MIN(SEG, 400 - off),
				400);
		seg.has_imm = seg.last;
		seg.imm = 0xabcd;
		assert_int_equal(sl_chan_lane_on_recv(s->cl, &seg, P.now), 0);
	}
	assert_memory_equal(mem, zero, 100);
	assert_memory_equal(mem + 100, data, 400);
	assert_memory_equal(mem + 500, zero, 524);
	{
		struct sl_chan_cqe c[4];

		assert_int_equal(cq_poll(q, 1, c, 4), 1);
		expect_cqe(&c[0], 77, SL_WC_SUCCESS, SL_WC_RECV_RDMA_IMM, 400);
		assert_int_equal(c[0].flags, SL_WC_F_IMM);
		assert_int_equal(c[0].imm, 0xabcd);
		/* no RECV: the notice waits in the stash, then completes the next RECV */
		seg = write_seg(QPN_BASE, base, key, data, 0, 8, 8);
		seg.has_imm = true;
		seg.imm = 5;
		assert_int_equal(sl_chan_lane_on_recv(s->cl, &seg, P.now), 0);
		assert_int_equal(cq_poll(q, 1, c, 4), 0);
		post_recv(q, 78, mem, 0, 0);
		sl_chan_lane_poll(s->cl, s->x, P.now);
		assert_int_equal(cq_poll(q, 1, c, 4), 1);
		expect_cqe(&c[0], 78, SL_WC_SUCCESS, SL_WC_RECV_RDMA_IMM, 8);
		assert_int_equal(c[0].imm, 5);
	}
	assert_int_equal(qp_destroy(q), 0);
	free(q);
}

static void
lane_read_src__checks_key_range_and_access(void **state)
{
	struct side *s = &P.s[1];
	uint8_t *mem = app_alloc(s, 1024);
	uint32_t key, lkey = mr_reg_keys(s, CLIENT, mem, 512, SL_ACCESS_REMOTE_READ, &key);
	uint32_t nokey = mr_reg_remote(s, CLIENT, mem, 512, SL_ACCESS_LOCAL_WRITE);
	uint32_t other = mr_reg_remote(s, ALIAS, mem, 512, SL_ACCESS_REMOTE_READ);
	uint64_t base = va(s, mem);
	struct app_qp *q = qp_new(s, CLIENT, QPN_BASE, 16, 64, 16);
	const uint8_t *src = NULL;

	(void)state;
	assert_int_equal(sl_chan_lane_read_src(s->cl, QPN_BASE, base, key, 10, &src),
			 SL_XPORT_SYN_OP); /* not connected */
	assert_int_equal(qp_connect(q, 3), 0);
	assert_int_equal(sl_chan_lane_read_src(s->cl, QPN_BASE, base + 12, key, 500, &src), 0);
	assert_ptr_equal(src, mem + 12);
	assert_int_equal(sl_chan_lane_read_src(s->cl, QPN_BASE, base + 12, key, 501, &src),
			 SL_XPORT_SYN_ACCESS);
	assert_int_equal(qp_destroy(q), 0);
	free(q);
	{
		const uint32_t keys[] = {nokey, other, key ^ 0x10000, lkey};

		for (unsigned k = 0; k < SL_ARRAY_SIZE(keys); k++) {
			q = qp_new(s, CLIENT, QPN_BASE, 16, 64, 16);
			assert_int_equal(qp_connect(q, 3), 0);
			assert_int_equal(
				sl_chan_lane_read_src(s->cl, QPN_BASE, base, keys[k], 10, &src),
				SL_XPORT_SYN_ACCESS);
			assert_int_equal(qp_destroy(q), 0);
			free(q);
		}
	}
	assert_int_equal(STAT(s, read_refused), 5);
}

/*
 * A peer's READ is held to the QP's max_msg_bytes, the cap of what the QP posts: one asking for
 * more is refused though its range lies inside the region, counted apart from key refusals, and
 * the QP fails like any that refuses an arrival.
 */
static void
lane_read_src__longer_than_max_msg_bytes_is_refused(void **state)
{
	struct side *s = &P.s[1];
	uint8_t *mem = app_alloc(s, 1024);
	uint32_t key =
		mr_reg_remote(s, CLIENT, mem, 1024, SL_ACCESS_LOCAL_WRITE | SL_ACCESS_REMOTE_READ);
	uint64_t base = va(s, mem);
	struct app_qp *q = qp_new(s, CLIENT, QPN_BASE, 16, 64, 16);
	const uint8_t *src = NULL;
	struct sl_chan_cqe c[4];

	(void)state;
	q->qc.max_msg_bytes = 512;
	assert_int_equal(qp_connect(q, 3), 0);
	assert_int_equal(sl_chan_lane_read_src(s->cl, QPN_BASE, base + 8, key, 512, &src), 0);
	assert_ptr_equal(src, mem + 8);
	src = NULL;
	assert_int_equal(sl_chan_lane_read_src(s->cl, QPN_BASE, base, key, 513, &src),
			 SL_XPORT_SYN_INVALID);
	assert_null(src);
	assert_int_equal(STAT(s, read_len_refused), 1);
	assert_int_equal(STAT(s, read_refused), 0);
	post_recv(q, 1, mem, 16, key); /* failed: flushed */
	sl_chan_lane_poll(s->cl, s->x, P.now);
	assert_int_equal(cq_poll(q, 1, c, 4), 1);
	expect_cqe(&c[0], 1, SL_WC_WR_FLUSH_ERR, SL_WC_RECV, 16);
	assert_int_equal(qp_destroy(q), 0);
	free(q);
}

/* --- WRITE / READ end to end (need lib/xport's WRITE / READ and refusals) ----------------- */

static void
rdma__write_write_imm_read_land(void **state)
{
	struct app_qp *a, *b;
	uint8_t *abuf = app_alloc(&P.s[0], 4096), *bbuf = app_alloc(&P.s[1], 4096);
	uint32_t akey = mr_reg(&P.s[0], CLIENT, abuf, 4096, SL_ACCESS_LOCAL_WRITE);
	uint32_t bkey = mr_reg_remote(&P.s[1], CLIENT, bbuf, 4096,
				      SL_ACCESS_LOCAL_WRITE | SL_ACCESS_REMOTE_WRITE |
					      SL_ACCESS_REMOTE_READ);
	struct sl_chan_sqe e;
	struct sl_chan_cqe c[8];

	(void)state;
	qp_pair(&a, &b, QPN_BASE, 16, 16);
	fill(abuf, 1000, 1);
	fill(bbuf + 2048, 700, 2);
	e = sqe(1, SL_WR_WRITE, &P.s[0], abuf, 1000, akey, true);
	e.raddr = va(&P.s[1], bbuf + 10);
	e.rkey = bkey;
	post_send(a, e);
	post_recv(b, 9, bbuf, 0, 0);
	e = sqe(2, SL_WR_WRITE_WITH_IMM, &P.s[0], abuf, 300, akey, true);
	e.raddr = va(&P.s[1], bbuf + 1100);
	e.rkey = bkey;
	e.imm = 0x1234;
	post_send(a, e);
	e = sqe(3, SL_WR_READ, &P.s[0], abuf + 2048, 700, akey, true);
	e.raddr = va(&P.s[1], bbuf + 2048);
	e.rkey = bkey;
	post_send(a, e);
	run(RUN);
	assert_int_equal(cq_poll(a, 0, c, 8), 3);
	expect_cqe(&c[0], 1, SL_WC_SUCCESS, SL_WC_WRITE, 1000);
	expect_cqe(&c[1], 2, SL_WC_SUCCESS, SL_WC_WRITE, 300);
	expect_cqe(&c[2], 3, SL_WC_SUCCESS, SL_WC_READ, 700);
	assert_memory_equal(bbuf + 10, abuf, 1000);
	assert_memory_equal(bbuf + 1100, abuf, 300);
	assert_memory_equal(abuf + 2048, bbuf + 2048, 700);
	assert_int_equal(cq_poll(b, 1, c, 8), 1);
	expect_cqe(&c[0], 9, SL_WC_SUCCESS, SL_WC_RECV_RDMA_IMM, 300);
	assert_int_equal(c[0].imm, 0x1234);
	free(a);
	free(b);
}

static void
rdma__refused_keys_are_rem_access_err_and_touch_nothing(void **state)
{
	uint8_t *abuf = app_alloc(&P.s[0], 4096), *bbuf = app_alloc(&P.s[1], 4096);
	uint8_t *snap = malloc(4096);
	uint32_t akey = mr_reg(&P.s[0], CLIENT, abuf, 4096, SL_ACCESS_LOCAL_WRITE);
	uint32_t bkey = mr_reg_remote(&P.s[1], CLIENT, bbuf, 2048,
				      SL_ACCESS_LOCAL_WRITE | SL_ACCESS_REMOTE_WRITE |
					      SL_ACCESS_REMOTE_READ);
	uint32_t bro = mr_reg_remote(&P.s[1], CLIENT, bbuf, 2048, SL_ACCESS_LOCAL_WRITE);
	uint32_t bother = mr_reg_remote(&P.s[1], CLIENT + 1, bbuf, 2048,
					SL_ACCESS_LOCAL_WRITE | SL_ACCESS_REMOTE_WRITE |
						SL_ACCESS_REMOTE_READ);
	const struct {
		uint32_t rkey;
		uint32_t off, len;
	} bad[] = {{bkey ^ 0x10000, 0, 100}, {bother, 0, 100}, {bkey, 2000, 100}, {bro, 0, 100}};
	struct sl_chan_cqe c[8];

	(void)state;
	assert_non_null(snap);
	fill(abuf, 4096, 7);
	fill(bbuf, 4096, 8);
	memcpy(snap, bbuf, 4096);
	for (unsigned k = 0; k < SL_ARRAY_SIZE(bad); k++)
		for (uint8_t op = SL_WR_WRITE; op <= SL_WR_READ; op += SL_WR_READ - SL_WR_WRITE) {
			struct app_qp *a, *b;
			struct sl_chan_sqe e =
				sqe(k, op, &P.s[0], abuf + 2048, bad[k].len, akey, false);

			qp_pair(&a, &b, QPN_BASE, 16, 16);
			e.raddr = va(&P.s[1], bbuf + bad[k].off);
			e.rkey = bad[k].rkey;
			post_send(a, e);
			run(RUN);
			assert_int_equal(cq_poll(a, 0, c, 8), 1);
			assert_int_equal(c[0].wr_id, k); /* byte_len: undefined on error */
			assert_int_equal(c[0].status, SL_WC_REM_ACCESS_ERR);
			assert_int_equal(c[0].opcode, op == SL_WR_READ ? SL_WC_READ : SL_WC_WRITE);
			assert_memory_equal(bbuf, snap, 4096);
			assert_int_equal(qp_destroy(a), 0);
			assert_int_equal(qp_destroy(b), 0);
			run(10); /* what was on the wire is dropped: no stale frame for the next
				    pair */
			free(a);
			free(b);
		}
	free(snap);
}

static void
rdma__sends_without_room_wait_short_recvs_are_rem_op_err(void **state)
{
	struct app_qp *a, *b;
	uint8_t *src = app_alloc(&P.s[0], 1024), *dst = app_alloc(&P.s[1], 1024);
	uint32_t skey = mr_reg(&P.s[0], CLIENT, src, 1024, 0);
	uint32_t rkey = mr_reg(&P.s[1], CLIENT, dst, 1024, SL_ACCESS_LOCAL_WRITE);
	struct sl_chan_cqe c[8];

	(void)state;
	/*
	 * stash_bytes is 512 in this test: the second message has no room. It is refused for now
	 * (RNR) and waits at a, sent again after each backoff, until b posts RECVs: then both
	 * arrive, in order, and both complete successfully.
	 */
	qp_pair(&a, &b, QPN_BASE, 16, 16);
	fill(src, 400, 7);
	post_send(a, sqe(1, SL_WR_SEND, &P.s[0], src, 400, skey, true));
	post_send(a, sqe(2, SL_WR_SEND, &P.s[0], src + 400, 400, skey, true));
	run(RUN);
	assert_int_equal(cq_poll(a, 0, c, 8), 1);
	expect_cqe(&c[0], 1, SL_WC_SUCCESS, SL_WC_SEND, 400);
	assert_true(STAT(&P.s[1], rnr_refused) >= 2);
	post_recv(b, 7, dst, 400, rkey);
	post_recv(b, 8, dst + 400, 400, rkey);
	run(RUN);
	assert_int_equal(cq_poll(a, 0, c, 8), 1);
	expect_cqe(&c[0], 2, SL_WC_SUCCESS, SL_WC_SEND, 400);
	assert_int_equal(cq_poll(b, 1, c, 8), 2);
	expect_cqe(&c[0], 7, SL_WC_SUCCESS, SL_WC_RECV, 400);
	expect_cqe(&c[1], 8, SL_WC_SUCCESS, SL_WC_RECV, 400);
	assert_memory_equal(dst, src, 800);
	assert_int_equal(qp_destroy(a), 0);
	assert_int_equal(qp_destroy(b), 0);
	run(10); /* what was on the wire is dropped: no stale frame for the next pair */
	free(a);
	free(b);
	/* a RECV too short: LOC_LEN_ERR there, REM_OP_ERR here */
	qp_pair(&a, &b, QPN_BASE, 16, 16);
	post_recv(b, 5, dst, 100, rkey);
	post_send(a, sqe(3, SL_WR_SEND, &P.s[0], src, 300, skey, true));
	run(RUN);
	assert_int_equal(cq_poll(a, 0, c, 8), 1);
	expect_cqe(&c[0], 3, SL_WC_REM_OP_ERR, SL_WC_SEND, 300);
	/* SEND with immediate */
	assert_int_equal(qp_destroy(a), 0);
	assert_int_equal(qp_destroy(b), 0);
	run(10); /* what was on the wire is dropped: no stale frame for the next pair */
	free(a);
	free(b);
	qp_pair(&a, &b, QPN_BASE, 16, 16);
	post_recv(b, 6, dst, 1024, rkey);
	{
		struct sl_chan_sqe e = sqe(4, SL_WR_SEND_WITH_IMM, &P.s[0], src, 30, skey, true);

		e.imm = 99;
		post_send(a, e);
	}
	run(RUN);
	assert_int_equal(cq_poll(b, 1, c, 8), 1);
	expect_cqe(&c[0], 6, SL_WC_SUCCESS, SL_WC_RECV, 30);
	assert_int_equal(c[0].flags, SL_WC_F_IMM);
	assert_int_equal(c[0].imm, 99);
	free(a);
	free(b);
}

/*
 * A READ or WRITE of 600 bytes between 1024-byte regions whose target QP's max_msg_bytes is 512:
 * REM_OP_ERR at the requester (verbs' remote invalid request), no byte placed where it would
 * have gone (the requester's buffer for a READ, the target's for a WRITE). The caller checks
 * the target's counter.
 */
static void
over_the_targets_max_msg_bytes(uint8_t opcode)
{
	bool read = opcode == SL_WR_READ;
	struct app_qp *a, *b;
	uint8_t *abuf = app_alloc(&P.s[0], 1024), *bbuf = app_alloc(&P.s[1], 1024);
	uint8_t zero[1024] = {0};
	uint32_t akey = mr_reg(&P.s[0], CLIENT, abuf, 1024, read ? SL_ACCESS_LOCAL_WRITE : 0);
	uint32_t bkey = mr_reg_remote(&P.s[1], CLIENT, bbuf, 1024,
				      read ? SL_ACCESS_REMOTE_READ : SL_ACCESS_REMOTE_WRITE);
	struct sl_chan_sqe e;
	struct sl_chan_cqe c[4];

	qp_pair(&a, &b, QPN_BASE, 16, 16);
	b->qc.max_msg_bytes = 512;
	fill(read ? bbuf : abuf, 1024, read ? 3 : 5);
	e = sqe(1, opcode, &P.s[0], abuf, 600, akey, true);
	e.raddr = va(&P.s[1], bbuf);
	e.rkey = bkey;
	post_send(a, e);
	run(RUN);
	assert_int_equal(cq_poll(a, 0, c, 4), 1);
	assert_int_equal(c[0].wr_id, 1);
	assert_int_equal(c[0].status, SL_WC_REM_OP_ERR);
	assert_int_equal(c[0].opcode, read ? SL_WC_READ : SL_WC_WRITE);
	assert_memory_equal(read ? abuf : bbuf, zero, sizeof(zero));
	assert_int_equal(qp_destroy(a), 0);
	assert_int_equal(qp_destroy(b), 0);
	free(a);
	free(b);
}

static void
rdma__read_over_the_targets_max_msg_bytes_is_rem_op_err(void **state)
{
	(void)state;
	over_the_targets_max_msg_bytes(SL_WR_READ);
	assert_int_equal(STAT(&P.s[1], read_len_refused), 1);
}

static void
rdma__write_over_the_targets_max_msg_bytes_is_rem_op_err(void **state)
{
	(void)state;
	over_the_targets_max_msg_bytes(SL_WR_WRITE);
	assert_int_equal(STAT(&P.s[1], write_len_refused), 1);
}

/* --- the peer host's guesses --------------------------------------------------------------- */

#define FORGED 100000u   /* frames the attacker forges */
#define FORGED_BYTES 64u /* payload of each data frame it forges */
#define LEGIT 8u         /* messages each way between the victim and its connected peer */

/* Frame i of the attack on victim v (side 0), into buf: its length. */
static uint32_t
forge(uint8_t *buf, unsigned i, const struct app_qp *v, uint32_t vrkey, uint64_t vaddr)
{
	static const uint8_t ops[] = {SL_XOP_SEND_ONLY, SL_XOP_SEND_FIRST, SL_XOP_WRITE_ONLY,
				      SL_XOP_READ_REQ,  SL_XOP_ACK,        SL_XOP_NAK};
	uint8_t op = ops[i % SL_ARRAY_SIZE(ops)];
	/* half at the victim's QPN, the rest at every QPN of the endpoint and past it, and now and
	 * then anywhere in the 24 bits */
	uint32_t qpn = i % 2 == 0    ? v->qc.xqp.qpn
		       : i % 14 == 1 ? draw() & SL_XHDR_QPN_MAX
				     : (i / 2) % (XPORT_QPS * 4);
	uint32_t token = draw();
	int n;

	if (token == v->qc.xqp.token) /* the one guess in 2^32 that is right is not forged */
		token++;
	if (sl_xhdr_op_is_data(op)) {
		/* PSNs all around the one the victim expects next, its real rkey a third of the
		 * time and a guessed one otherwise */
		struct sl_xhdr h = {.opcode = op,
				    .qpn = qpn,
				    .token = token,
				    .psn = v->qc.xqp.recv_psn + (i % 256) - 128,
				    .msn = i % 16,
				    .raddr = vaddr + (i % 8) * FORGED_BYTES,
				    .rkey = i % 3 == 0 ? vrkey : draw(),
				    .rlen_bytes = FORGED_BYTES};

		n = sl_xhdr_encode(&h, buf, SL_XHDR_MAX_LEN);
		assert_true(n > 0);
		if (op == SL_XOP_READ_REQ)
			return (uint32_t)n;
		memset(buf + n, 0xEE, FORGED_BYTES);
		return (uint32_t)n + FORGED_BYTES;
	}
	/* feedback to the victim as a sender: ACKs that would complete its messages, NAKs that
	 * would fail its QP */
	n = sl_xfb_encode(&(struct sl_xfb){.opcode = op,
					   .qpn = qpn,
					   .token = token,
					   .ack_psn = v->qc.xqp.send_psn + (i % 256) - 128,
					   .acked_pkts = 1,
					   .nak_msn = i % 16,
					   .syndrome = 1},
			  buf, SL_XFB_MAX_LEN);
	assert_true(n > 0);
	return (uint32_t)n;
}

/* Put frame buf (len bytes) on the wire from side 1 to side 0. */
static void
inject(const uint8_t *buf, uint32_t len)
{
	memcpy(wire_put(&P.w[1], len), buf, len);
}

/*
 * An application on the peer host forges FORGED frames at the victim's QP v (side 0), which is
 * connected to p (side 1) and busy with it: every QPN, PSNs around the victim's next ones, its
 * real rkey and guessed ones, SENDs, WRITEs, READ requests, ACKs and NAKs, each with a token
 * that is not v's. Nothing is delivered, completed or failed: v's receive buffers and memory
 * stay as they were, its traffic with p completes intact, and each forged frame is counted as
 * refused. Then one SEND with v's token at its next PSN is delivered, so the checks do see a
 * delivery when there is one.
 */
static void
rdma__forged_frames_reach_nothing(void **state)
{
	struct app_qp *v, *p;
	uint8_t *vmem = app_alloc(&P.s[0], 4096), *vrecv = app_alloc(&P.s[0], 2 * LEGIT * SEG);
	uint8_t *vsrc = app_alloc(&P.s[0], SEG), *psrc = app_alloc(&P.s[1], LEGIT * SEG);
	uint8_t *precv = app_alloc(&P.s[1], LEGIT * SEG), before[4096];
	uint8_t *zero = calloc(1, LEGIT * SEG), frame[SL_XHDR_MAX_LEN + FORGED_BYTES];
	uint32_t vrkey, vkey = mr_reg_keys(&P.s[0], CLIENT, vmem, 4096,
					   SL_ACCESS_LOCAL_WRITE | SL_ACCESS_REMOTE_WRITE |
						   SL_ACCESS_REMOTE_READ,
					   &vrkey);
	uint32_t vrkey_recv =
		mr_reg(&P.s[0], CLIENT, vrecv, 2 * LEGIT * SEG, SL_ACCESS_LOCAL_WRITE);
	uint32_t vskey = mr_reg(&P.s[0], CLIENT, vsrc, SEG, 0);
	uint32_t pskey = mr_reg(&P.s[1], CLIENT, psrc, LEGIT * SEG, 0);
	uint32_t prkey = mr_reg(&P.s[1], CLIENT, precv, LEGIT * SEG, SL_ACCESS_LOCAL_WRITE);
	struct sl_xport_stats st;
	struct sl_chan_cqe c[2 * LEGIT];
	unsigned injected = 0;

	(void)state;
	(void)vkey;
	assert_non_null(zero);
	qp_pair(&v, &p, QPN_BASE, 16, 16);
	fill(vmem, 4096, 7);
	memcpy(before, vmem, sizeof(before));
	fill(vsrc, SEG, 8);
	for (unsigned k = 0; k < 2 * LEGIT; k++)
		post_recv(v, k, vrecv + k * SEG, SEG, vrkey_recv);
	for (unsigned k = 0; k < LEGIT; k++) {
		fill(psrc + k * SEG, SEG, 100 + k);
		post_recv(p, k, precv + k * SEG, SEG, prkey);
		post_send(p, sqe(k, SL_WR_SEND, &P.s[1], psrc + k * SEG, SEG, pskey, true));
		post_send(v, sqe(k, SL_WR_SEND, &P.s[0], vsrc, SEG, vskey, true));
	}
	while (injected < FORGED) {
		unsigned batch = SL_MIN(FORGED - injected, WIRE_MAX / 2 - P.w[1].n);

		for (unsigned k = 0; k < batch; k++, injected++)
			inject(frame, forge(frame, injected, v, vrkey, va(&P.s[0], vmem)));
		step();
	}
	run(RUN);
	/* the victim's traffic, both ways, and nothing else */
	assert_int_equal(cq_poll(v, 1, c, SL_ARRAY_SIZE(c)), LEGIT);
	for (unsigned k = 0; k < LEGIT; k++) {
		expect_cqe(&c[k], k, SL_WC_SUCCESS, SL_WC_RECV, SEG);
		assert_memory_equal(vrecv + k * SEG, psrc + k * SEG, SEG);
	}
	assert_memory_equal(vrecv + LEGIT * SEG, zero, LEGIT * SEG);
	assert_memory_equal(vmem, before, sizeof(before));
	assert_int_equal(cq_poll(v, 0, c, SL_ARRAY_SIZE(c)), LEGIT);
	for (unsigned k = 0; k < LEGIT; k++)
		expect_cqe(&c[k], k, SL_WC_SUCCESS, SL_WC_SEND, SEG);
	assert_int_equal(cq_poll(p, 1, c, SL_ARRAY_SIZE(c)), LEGIT);
	for (unsigned k = 0; k < LEGIT; k++)
		assert_memory_equal(precv + k * SEG, vsrc, SEG);
	assert_int_equal(STAT(&P.s[0], stash_msgs), 0);
	sl_xport_stats_get(P.s[0].x, &st);
	assert_int_equal(st.rx_bad_token + st.rx_bad_qpn, FORGED);
	assert_true(st.rx_bad_token >= FORGED / 2); /* half named the victim's QPN */
	assert_int_equal(st.rx_bad_header, 0);
	assert_int_equal(st.rx_refused + st.rx_nak, 0);
	/* the same SEND with the victim's token, at the PSN and MSN it expects next: delivered */
	{
		struct sl_xhdr h = {.opcode = SL_XOP_SEND_ONLY,
				    .qpn = v->qc.xqp.qpn,
				    .token = v->qc.xqp.token,
				    .psn = v->qc.xqp.recv_psn + LEGIT,
				    .msn = LEGIT};
		int n = sl_xhdr_encode(&h, frame, SL_XHDR_MAX_LEN);

		assert_true(n > 0);
		memset(frame + n, 0xEE, FORGED_BYTES);
		inject(frame, (uint32_t)n + FORGED_BYTES);
	}
	run(RUN);
	assert_int_equal(cq_poll(v, 1, c, SL_ARRAY_SIZE(c)), 1);
	expect_cqe(&c[0], LEGIT, SL_WC_SUCCESS, SL_WC_RECV, FORGED_BYTES);
	assert_int_equal(vrecv[LEGIT * SEG], 0xEE);
	free(zero);
	free(v);
	free(p);
}

/* A share per QP of a quarter of the stash, as a deployment whose applications share a lane
 * would set it. */
static int
qp_share_setup(void **state)
{
	stash_qp_bytes = stash_bytes / 4;
	return pair_setup(state);
}

/* An application's share of a quarter of the stash, sluiced's default. */
static int
client_share_setup(void **state)
{
	client_stash_bytes = stash_bytes / 4;
	return pair_setup(state);
}

static int
small_stash_setup(void **state)
{
	stash_bytes = 512;
	stash_qp_bytes = 512;
	return pair_setup(state);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest send[] = {
		cmocka_unit_test_setup_teardown(lane_poll__send_recv_bytes_and_cqes, pair_setup,
						pair_teardown),
		cmocka_unit_test_setup_teardown(lane_on_recv__send_before_recv_is_stashed_in_order,
						pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(lane_on_recv__stash_serves_each_qp_in_its_order,
						pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(lane_on_recv__stash_space_comes_back, pair_setup,
						pair_teardown),
		cmocka_unit_test_setup_teardown(
			lane_on_recv__a_qp_without_recvs_keeps_no_one_else_out, qp_share_setup,
			pair_teardown),
		cmocka_unit_test_setup_teardown(lane_on_recv__a_send_past_its_qps_share_is_refused,
						qp_share_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(
			lane_on_recv__an_application_holds_its_share_over_all_its_qps,
			client_share_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(lane_poll__budget_bounds_each_ring, pair_setup,
						pair_teardown),
		cmocka_unit_test_setup_teardown(lane_create__bad_conf_is_einval, pair_setup,
						pair_teardown),
		cmocka_unit_test_setup_teardown(lane_on_recv__recv_too_short_is_loc_len_err,
						pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(
			lane_poll__bad_lkey_is_loc_prot_err_and_later_wrs_flush, pair_setup,
			pair_teardown),
		cmocka_unit_test_setup_teardown(lane_poll__bad_opcode_or_length_is_general_err,
						pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(lane_poll__corrupt_sq_index_fails_only_its_qp,
						pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(lane_poll__tiny_cq_loses_no_completion, pair_setup,
						pair_teardown),
		cmocka_unit_test_setup_teardown(lane_call__destroy_flushes_everything_taken,
						pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(cq__event_never_blocks_the_lane, pair_setup,
						pair_teardown),
		cmocka_unit_test_setup_teardown(cq__event_fd_written_when_armed, pair_setup,
						pair_teardown),
		cmocka_unit_test_setup_teardown(lane_call__client_gone_destroys_only_its_qps,
						pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(lane_call__commands_are_checked, pair_setup,
						pair_teardown),
		cmocka_unit_test_setup_teardown(
			lane_call__times_out_without_a_poll_then_is_answered, pair_setup,
			pair_teardown),
		cmocka_unit_test_setup_teardown(
			lane_call__a_full_mailbox_refuses_at_once_then_takes_again, pair_setup,
			pair_teardown),
		cmocka_unit_test_setup_teardown(lane_session__fails_every_qp, pair_setup,
						pair_teardown),
		cmocka_unit_test_setup_teardown(lane_on_recv__write_checks_key_range_and_access,
						pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(lane_read_src__checks_key_range_and_access,
						pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(lane_read_src__longer_than_max_msg_bytes_is_refused,
						pair_setup, pair_teardown),
	};
	const struct CMUnitTest rdma[] = {
		cmocka_unit_test_setup_teardown(rdma__write_write_imm_read_land, pair_setup,
						pair_teardown),
		cmocka_unit_test_setup_teardown(
			rdma__refused_keys_are_rem_access_err_and_touch_nothing, pair_setup,
			pair_teardown),
		cmocka_unit_test_setup_teardown(
			rdma__sends_without_room_wait_short_recvs_are_rem_op_err, small_stash_setup,
			pair_teardown),
		cmocka_unit_test_setup_teardown(
			rdma__read_over_the_targets_max_msg_bytes_is_rem_op_err, pair_setup,
			pair_teardown),
		cmocka_unit_test_setup_teardown(
			rdma__write_over_the_targets_max_msg_bytes_is_rem_op_err, pair_setup,
			pair_teardown),
		cmocka_unit_test_setup_teardown(rdma__forged_frames_reach_nothing, pair_setup,
						pair_teardown),
	};

	if (argc > 1 && strcmp(argv[1], "rdma") == 0)
		return cmocka_run_group_tests_name("rdma", rdma, NULL, NULL);
	return cmocka_run_group_tests_name("send", send, NULL, NULL);
}
