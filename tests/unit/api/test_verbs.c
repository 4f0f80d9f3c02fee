/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for lib/api/verbs.c against the fake daemon (h_daemon.c), whose "wire" joins two QPs of
 * one context: MR validation and access flags, CQ and QP creation as the daemon sees them,
 * posting until a ring is full, completions in order with every field, SEND / WRITE with
 * immediate / READ moving bytes, a failed QP refusing posts, the event fd after an arm.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "h_daemon.h"
#include "api_priv.h"

#define BUF 65536

struct fx {
	struct h_daemon d;
	struct sl_ctx *ctx;
	uint8_t *buf;
	struct sl_mr *mr;
	struct sl_cq *cq;
	struct sl_qp *a, *b;
};

static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	f->ctx = h_daemon_start_ctx(&f->d, 4 << 20);
	f->buf = sl_mem_alloc(f->ctx, BUF);
	f->mr = sl_mr_reg(f->ctx, f->buf, BUF,
			  SL_ACCESS_LOCAL_WRITE | SL_ACCESS_REMOTE_WRITE | SL_ACCESS_REMOTE_READ);
	f->cq = sl_cq_create(f->ctx, 64);
	assert_non_null(f->mr);
	assert_non_null(f->cq);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;

	sl_ctx_close(f->ctx);
	h_daemon_stop(&f->d);
	free(f);
	return 0;
}

/* Two QPs on the fixture's CQ, connected to each other through the fake. */
static void
pair(struct fx *f, uint32_t sq_depth)
{
	struct sl_qp_attr at = {.send_cq = f->cq, .recv_cq = f->cq, .sq_depth = sq_depth};
	struct sl_qp_info ia, ib;

	f->a = sl_qp_create(f->ctx, &at);
	f->b = sl_qp_create(f->ctx, &at);
	assert_non_null(f->a);
	assert_non_null(f->b);
	sl_qp_info(f->a, NULL, &ia);
	sl_qp_info(f->b, f->mr, &ib);
	assert_int_equal(sl_qp_connect(f->a, &ib), 0);
	assert_int_equal(sl_qp_connect(f->b, &ia), 0);
}

/* Poll until n completions have come (2 s at most). */
static void
poll_n(struct sl_cq *cq, struct sl_wc *wc, int n)
{
	int got = 0;

	for (int i = 0; got < n && i < 2000000; i++) {
		int k = sl_cq_poll(cq, wc + got, n - got);

		assert_true(k >= 0);
		got += k;
		if (!k)
			usleep(1);
	}
	assert_int_equal(got, n);
}

static void
mr_reg__refuses_outside_memory_and_bad_flags(void **state)
{
	struct fx *f = *state;
	unsigned before = atomic_load(&f->d.requests[SL_CHAN_MR_REG]);
	uint8_t local[64];
	uint8_t *end = f->ctx->mem + f->ctx->mem_bytes;

	struct {
		void *addr;
		size_t len;
		unsigned access;
	} bad[] = {
		{local, sizeof(local), 0},
		{end, 1, 0},
		{end - 64, 65, 0},
		{f->buf, SIZE_MAX, 0},
		{f->buf, 0, 0},
		{f->buf, 64, 1u << 3},
		{f->buf, 64, SL_ACCESS_REMOTE_WRITE},
	};

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		assert_null(sl_mr_reg(f->ctx, bad[i].addr, bad[i].len, bad[i].access));
		assert_int_equal(errno, EINVAL);
	}
	/* none of them reached the daemon */
	assert_int_equal(atomic_load(&f->d.requests[SL_CHAN_MR_REG]), before);
}

static void
mr_reg__the_daemon_sees_range_and_flags(void **state)
{
	struct fx *f = *state;
	struct sl_mr *mr = sl_mr_reg(f->ctx, f->buf + 128, 256, SL_ACCESS_REMOTE_READ);
	unsigned i = sl_mr_lkey(mr) - 0x1000;

	assert_non_null(mr);
	assert_int_equal(sl_mr_rkey(mr), sl_mr_lkey(mr));
	assert_ptr_equal(sl_mr_addr(mr), f->buf + 128);
	assert_int_equal(sl_mr_len(mr), 256);
	assert_int_equal(f->d.cl[0].mrs[i].va, (uint64_t)(uintptr_t)(f->buf + 128));
	assert_int_equal(f->d.cl[0].mrs[i].len, 256);
	assert_int_equal(f->d.cl[0].mrs[i].access, SL_ACCESS_REMOTE_READ);
	assert_int_equal(sl_mr_dereg(mr), 0);
	assert_int_equal(f->d.cl[0].mrs[i].key, 0);
}

static void
mr_reg__the_daemons_refusal(void **state)
{
	struct fx *f = *state;

	f->d.refuse[SL_CHAN_MR_REG] = -ENOSPC;
	errno = 0;
	assert_null(sl_mr_reg(f->ctx, f->buf, 64, 0));
	assert_int_equal(errno, ENOSPC);
}

static void
cq_create__rounds_depth_and_hands_over_the_ring(void **state)
{
	struct fx *f = *state;
	struct sl_cq *cq = sl_cq_create(f->ctx, 100);
	struct h_cq *h;
	uint32_t handle;

	assert_non_null(cq);
	handle = cq->handle;
	h = &f->d.cl[0].cqs[handle];
	assert_int_equal(h->depth, 128);
	assert_ptr_equal((uint8_t *)h->ring - f->d.cl[0].mem, (uint8_t *)cq->ring - f->ctx->mem);
	assert_int_equal((uintptr_t)cq->ring % 64, 0);
	assert_true(h->event_fd >= 0);
	errno = 0;
	assert_null(sl_cq_create(f->ctx, 0));
	assert_int_equal(errno, EINVAL);
	assert_null(sl_cq_create(f->ctx, SL_CHAN_RING_MAX + 1));
	assert_int_equal(sl_cq_destroy(cq), 0);
	assert_false(f->d.cl[0].cqs[handle].used);
}

static void
qp_create__defaults_and_validation(void **state)
{
	struct fx *f = *state;
	struct sl_qp_attr at = {.send_cq = f->cq, .recv_cq = f->cq, .program = "dcqcn"};
	struct sl_qp *qp = sl_qp_create(f->ctx, &at);
	struct h_qp *h;

	assert_non_null(qp);
	h = h_daemon_qp(&f->d, sl_qp_num(qp));
	assert_non_null(h);
	assert_int_equal(h->sq_depth, 128);
	assert_int_equal(h->rq_depth, 128);
	assert_int_equal(h->max_msg_bytes, 1 << 20);
	assert_string_equal(h->program, "dcqcn");
	assert_int_equal(h->receiver, SL_RECEIVER_MELO);
	assert_int_equal(sl_cq_destroy(f->cq), -EBUSY);
	/* what the daemon told: one packet for 0 .. 1024 bytes, then one more per 1024 */
	assert_int_equal(sl_qp_wire_bytes(qp, 0), 1024 + 60);
	assert_int_equal(sl_qp_wire_bytes(qp, 64), 1024 + 60);
	assert_int_equal(sl_qp_wire_bytes(qp, 1024), 1024 + 60);
	assert_int_equal(sl_qp_wire_bytes(qp, 1025), 2 * (1024 + 60));
	assert_int_equal(sl_qp_wire_bytes(qp, 65536), 64 * (1024 + 60));

	at.sq_depth = 100; /* not a power of two */
	assert_null(sl_qp_create(f->ctx, &at));
	at.sq_depth = 0;
	at.receiver = 2;
	assert_null(sl_qp_create(f->ctx, &at));
	at.receiver = 0;
	memset(at.pacer, 'x', sizeof(at.pacer)); /* no NUL */
	assert_null(sl_qp_create(f->ctx, &at));
	at = (struct sl_qp_attr){.send_cq = f->cq};
	errno = 0;
	assert_null(sl_qp_create(f->ctx, &at));
	assert_int_equal(errno, EINVAL);

	f->d.refuse[SL_CHAN_QP_CREATE] = -ENOENT;
	at.recv_cq = f->cq;
	errno = 0;
	assert_null(sl_qp_create(f->ctx, &at));
	assert_int_equal(errno, ENOENT);
	assert_int_equal(sl_qp_destroy(qp), 0);
	assert_int_equal(sl_cq_destroy(f->cq), 0);
	f->cq = NULL;
}

static void
post_send__before_connect_and_malformed(void **state)
{
	struct fx *f = *state;
	struct sl_qp *qp = sl_qp_create(
		f->ctx,
		&(struct sl_qp_attr){.send_cq = f->cq, .recv_cq = f->cq, .max_msg_bytes = 4096});
	struct sl_qp_info me;
	struct sl_wr w[3] = {{.opcode = SL_WR_SEND, .len = 4096},
			     {.opcode = SL_WR_READ + 1},
			     {.opcode = SL_WR_SEND, .len = 4097}};
	struct sl_recv_wr r = {.wr_id = 1};

	atomic_store(&f->d.lane, false);
	assert_int_equal(sl_post_send(qp, w, 1), -ENOTCONN);
	assert_int_equal(sl_post_recv(qp, &r, 1), 1); /* receives may wait for the connection */
	sl_qp_info(qp, NULL, &me);
	assert_int_equal(sl_qp_connect(qp, &me), 0);
	assert_int_equal(sl_qp_connect(qp, &me), -EISCONN);
	assert_int_equal(sl_post_send(qp, w, 3), 1); /* stops at the bad opcode */
	assert_int_equal(sl_post_send(qp, &w[1], 1), -EINVAL);
	assert_int_equal(sl_post_send(qp, &w[2], 1), -EINVAL);
	w[0].flags = 0x80;
	assert_int_equal(sl_post_send(qp, w, 1), -EINVAL);
	assert_int_equal(sl_post_send(qp, w, 0), 0);
	assert_int_equal(qp->sq->prod, 1);
}

static void
post_send__until_the_ring_is_full(void **state)
{
	struct fx *f = *state;
	struct sl_wr w[20];
	struct sl_recv_wr r[9];

	atomic_store(&f->d.lane, false); /* nothing is consumed */
	pair(f, 16);
	for (int i = 0; i < 20; i++)
		w[i] = (struct sl_wr){.wr_id = i, .opcode = SL_WR_SEND};
	assert_int_equal(sl_post_send(f->a, w, 10), 10);
	assert_int_equal(sl_post_send(f->a, w + 10, 10), 6);
	assert_int_equal(sl_post_send(f->a, w, 1), -ENOBUFS);
	/* the daemon taking 3 makes room for 3 */
	__atomic_store_n(&f->a->sq->cons, 3, __ATOMIC_RELEASE);
	assert_int_equal(sl_post_send(f->a, w, 5), 3);
	/* a consumer index claiming more room than the ring has is taken as none */
	__atomic_store_n(&f->a->sq->cons, 40, __ATOMIC_RELEASE);
	assert_int_equal(sl_post_send(f->a, w, 1), -ENOBUFS);
	/* the receive queue likewise */
	memset(r, 0, sizeof(r));
	for (int i = 0; i < 14; i++)
		assert_int_equal(sl_post_recv(f->b, r, 9), 9);
	assert_int_equal(sl_post_recv(f->b, r, 9), 128 - 14 * 9);
	assert_int_equal(sl_post_recv(f->b, r, 1), -ENOBUFS);
}

static void
cq_poll__completions_in_order_with_fields_intact(void **state)
{
	struct fx *f = *state;
	struct sl_recv_wr r[8];
	struct sl_wr w[8];
	struct sl_wc wc[16], rcv[16] = {0}, snd[16] = {0};
	uint32_t lkey = sl_mr_lkey(f->mr);

	pair(f, 0);
	for (int i = 0; i < 8; i++) {
		r[i] = (struct sl_recv_wr){.wr_id = 1000 + i,
					   .lkey = lkey,
					   .addr = f->buf + 32768 + 1024 * i,
					   .len = 1024};
		w[i] = (struct sl_wr){.wr_id = 2000 + i,
				      .lkey = lkey,
				      .addr = f->buf + 100 * i,
				      .len = 10 + i,
				      .flags = SL_WR_F_SIGNALED,
				      .opcode = i % 2 ? SL_WR_SEND_WITH_IMM : SL_WR_SEND,
				      .imm = 0xabc00 + i};
		memset(f->buf + 100 * i, 'a' + i, 10 + i);
	}
	assert_int_equal(sl_post_recv(f->b, r, 8), 8);
	assert_int_equal(sl_post_send(f->a, w, 8), 8);
	poll_n(f->cq, wc, 16);
	/* each QP's completions in order; a's and b's come through rings of their own (lanes), so
	 * the two are in order each, not against each other */
	for (int i = 0, nr = 0, ns = 0; i < 16; i++) {
		if (wc[i].qpn == sl_qp_num(f->b))
			rcv[nr++] = wc[i];
		else
			snd[ns++] = wc[i];
	}
	for (int i = 0; i < 8; i++) {
		const struct sl_wc *rc = &rcv[i], *sc = &snd[i];

		assert_int_equal(rc->wr_id, 1000 + i);
		assert_int_equal(rc->status, SL_WC_SUCCESS);
		assert_int_equal(rc->opcode, SL_WC_RECV);
		assert_int_equal(rc->qpn, sl_qp_num(f->b));
		assert_int_equal(rc->byte_len, 10 + i);
		assert_int_equal(rc->flags, i % 2 ? SL_WC_F_IMM : 0);
		if (i % 2)
			assert_int_equal(rc->imm, 0xabc00 + i);
		assert_memory_equal(f->buf + 32768 + 1024 * i, f->buf + 100 * i, 10 + i);
		assert_int_equal(sc->wr_id, 2000 + i);
		assert_int_equal(sc->opcode, SL_WC_SEND);
		assert_int_equal(sc->qpn, sl_qp_num(f->a));
		assert_int_equal(sc->byte_len, 10 + i);
	}
	assert_int_equal(sl_cq_poll(f->cq, wc, 16), 0);
	/* a's and b's completions came through the ring of each one's lane, all consumed */
	assert_int_equal(sl_chan_cq_ring(f->cq->ring, f->cq->depth, 0)->cons +
				 sl_chan_cq_ring(f->cq->ring, f->cq->depth, 1)->cons,
			 16);
	assert_int_not_equal(sl_qp_num(f->a) % H_CQ_RINGS, sl_qp_num(f->b) % H_CQ_RINGS);
}

static void
post_send__write_with_imm_and_read_move_bytes(void **state)
{
	struct fx *f = *state;
	uint32_t key = sl_mr_lkey(f->mr);
	struct sl_recv_wr r = {.wr_id = 7, .lkey = key, .addr = f->buf, .len = 0};
	struct sl_wr w = {.wr_id = 8,
			  .opcode = SL_WR_WRITE_WITH_IMM,
			  .flags = SL_WR_F_SIGNALED,
			  .lkey = key,
			  .addr = f->buf,
			  .len = 4000,
			  .raddr = 0,
			  .rkey = key,
			  .imm = 0x12345678};
	struct sl_wc wc[2];

	pair(f, 0);
	for (int i = 0; i < 4000; i++)
		f->buf[i] = (uint8_t)(i * 7);
	w.raddr = (uint64_t)(uintptr_t)(f->buf + 8192);
	assert_int_equal(sl_post_recv(f->b, &r, 1), 1);
	assert_int_equal(sl_post_send(f->a, &w, 1), 1);
	poll_n(f->cq, wc, 2);
	/* b's and a's completions come through rings of their own (lanes): in no fixed order */
	if (wc[0].qpn != sl_qp_num(f->b)) {
		struct sl_wc first = wc[1];

		wc[1] = wc[0];
		wc[0] = first;
	}
	assert_int_equal(wc[0].qpn, sl_qp_num(f->b));
	assert_int_equal(wc[1].qpn, sl_qp_num(f->a));
	assert_int_equal(wc[0].opcode, SL_WC_RECV_RDMA_IMM);
	assert_int_equal(wc[0].imm, 0x12345678);
	assert_int_equal(wc[0].byte_len, 4000);
	assert_int_equal(wc[1].opcode, SL_WC_WRITE);
	assert_int_equal(wc[1].status, SL_WC_SUCCESS);
	assert_memory_equal(f->buf + 8192, f->buf, 4000);

	w = (struct sl_wr){.wr_id = 9,
			   .opcode = SL_WR_READ,
			   .flags = SL_WR_F_SIGNALED,
			   .lkey = key,
			   .addr = f->buf + 16384,
			   .len = 4000,
			   .rkey = key,
			   .raddr = (uint64_t)(uintptr_t)f->buf};
	assert_int_equal(sl_post_send(f->a, &w, 1), 1);
	poll_n(f->cq, wc, 1);
	assert_int_equal(wc[0].opcode, SL_WC_READ);
	assert_int_equal(wc[0].wr_id, 9);
	assert_memory_equal(f->buf + 16384, f->buf, 4000);
}

static void
post_send__after_a_failed_completion_is_epipe(void **state)
{
	struct fx *f = *state;
	struct sl_wr w = {.wr_id = 1,
			  .opcode = SL_WR_WRITE,
			  .lkey = sl_mr_lkey(f->mr),
			  .addr = f->buf,
			  .len = 64,
			  .rkey = 0xdead,
			  .raddr = 0};
	struct sl_recv_wr r = {.wr_id = 2};
	struct sl_wc wc;

	pair(f, 0);
	assert_int_equal(sl_post_send(f->a, &w, 1), 1); /* unsignalled, but errors complete */
	poll_n(f->cq, &wc, 1);
	assert_int_equal(wc.status, SL_WC_REM_ACCESS_ERR);
	assert_string_equal(sl_wc_status_str(wc.status), "remote access error");
	assert_int_equal(sl_post_send(f->a, &w, 1), -EPIPE);
	assert_int_equal(sl_post_recv(f->a, &r, 1), -EPIPE);
	assert_int_equal(sl_post_recv(f->b, &r, 1), 1); /* the other QP is fine */
	/* destroy flushes b's RECV */
	assert_int_equal(sl_qp_destroy(f->b), 0);
	poll_n(f->cq, &wc, 1);
	assert_int_equal(wc.status, SL_WC_WR_FLUSH_ERR);
	assert_int_equal(wc.wr_id, 2);
}

static void
cq_arm__the_event_fd_after_a_completion(void **state)
{
	struct fx *f = *state;
	int fd = sl_cq_event_fd(f->cq);
	struct pollfd p = {.fd = fd, .events = POLLIN};
	struct sl_wr w = {.wr_id = 5,
			  .opcode = SL_WR_WRITE,
			  .flags = SL_WR_F_SIGNALED,
			  .lkey = sl_mr_lkey(f->mr),
			  .addr = f->buf,
			  .len = 64,
			  .rkey = sl_mr_rkey(f->mr),
			  .raddr = (uint64_t)(uintptr_t)(f->buf + 64)};
	struct sl_wc wc;
	uint64_t v;

	pair(f, 0);
	/* unarmed: a completion does not signal */
	assert_int_equal(sl_post_send(f->a, &w, 1), 1);
	poll_n(f->cq, &wc, 1);
	assert_int_equal(poll(&p, 1, 0), 0);
	/* armed: it does, once */
	assert_int_equal(sl_cq_arm(f->cq), 0);
	assert_int_equal(f->cq->ring->armed, 1);
	assert_int_equal(sl_cq_poll(f->cq, &wc, 1), 0);
	assert_int_equal(sl_post_send(f->a, &w, 1), 1);
	assert_int_equal(poll(&p, 1, 2000), 1);
	assert_int_equal(read(fd, &v, sizeof(v)), sizeof(v));
	assert_int_equal(v, 1);
	assert_int_equal(sl_cq_poll(f->cq, &wc, 1), 1);
	assert_int_equal(wc.wr_id, 5);
	assert_int_equal(f->cq->ring->armed, 0);
	assert_int_equal(sl_post_send(f->a, &w, 1), 1);
	poll_n(f->cq, &wc, 1);
	assert_int_equal(poll(&p, 1, 0), 0);
}

static void
wc_status_str__every_status_named(void **state)
{
	(void)state;
	for (int s = SL_WC_SUCCESS; s <= SL_WC_RNR_RETRY_EXC_ERR; s++)
		assert_string_not_equal(sl_wc_status_str(s), "unknown status");
	assert_string_equal(sl_wc_status_str(SL_WC_SUCCESS), "success");
	assert_string_equal(sl_wc_status_str(SL_WC_RNR_RETRY_EXC_ERR + 1), "unknown status");
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(mr_reg__refuses_outside_memory_and_bad_flags),
		T(mr_reg__the_daemon_sees_range_and_flags),
		T(mr_reg__the_daemons_refusal),
		T(cq_create__rounds_depth_and_hands_over_the_ring),
		T(qp_create__defaults_and_validation),
		T(post_send__before_connect_and_malformed),
		T(post_send__until_the_ring_is_full),
		T(cq_poll__completions_in_order_with_fields_intact),
		T(post_send__write_with_imm_and_read_move_bytes),
		T(post_send__after_a_failed_completion_is_epipe),
		T(cq_arm__the_event_fd_after_a_completion),
		cmocka_unit_test(wc_status_str__every_status_named),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
