/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_api.c - what the application channel costs (docs/api.md, "Cost"), as JSON lines.
 *
 * One process, one core, no DPDK. Two "hosts", each a transport endpoint (lib/xport) with the
 * daemon's side of the channel in front of it: the control half (sl_chan_srv) on a unix socket
 * in a temporary directory and the lane half (sl_chan_lane) that consumes the rings into the
 * endpoint. The endpoints are joined by an in-memory wire: every step, each side's tx_burst
 * frames become the other's rx_burst (tests/unit/chan/test_lane.c's harness), in virtual time
 * (STEP_NS a step: one round trip, long enough that the pacer and the window never bind, so
 * what limits the rate is the CPU). The application is real libsluice: a context on each host
 * through the real socket protocol (HELLO with the memfd, MR_REG, CQ_CREATE, QP_CREATE,
 * QP_CONNECT), one QP pair connected across the hosts. While the application sets up and tears
 * down, one thread serves both sockets and another polls both lanes (sl_chan_lane_call waits
 * for a lane's poll, as in the daemon); while it measures, the main thread alone does
 * everything, one core: post a batch (sl_post_send of up to BATCH WRITEs or SENDs, all
 * signalled; the receiver's RECVs re-posted one per RECV completion with sl_post_recv), one
 * step of both lanes and both endpoints, then sl_cq_poll.
 *
 * The baseline ("direct") is the same workload in the same process: the same endpoints, QP
 * configuration, wire, steps and seeded buffer offsets, with the messages posted straight to
 * the endpoint (sl_xport_post) and completed through on_complete, and the receiver's on_recv
 * copying each segment into place with a bounds check: no rings, no lane, no library. So
 * 1 - channel / direct (rates) is the share of the work the channel takes.
 *
 * Timing (default, --quick): for each verb (write, send) and size (64 B, 4 KiB), ROUNDS rounds
 * of a channel run and a direct run back to back (one with --quick); each row gives the median
 * work requests per second of each and the median of the rounds' ratios. Noisy on shared
 * cores.
 *
 * Instructions (--callgrind): this binary runs again as a child (--cg-child) under callgrind,
 * once per function of interest, collecting only inside that function (--toggle-collect:
 * inclusive of what it calls) and dumping the counters around each case's measured part.
 * Instructions of a function in a case, divided by the case's work requests or completions:
 *   post_send_instr_per_wr     sl_post_send (library)
 *   post_recv_instr_per_wr     sl_post_recv (library; send only)
 *   lane_poll_instr_per_wr     sl_chan_lane_poll of both lanes less the endpoint calls made in
 *                              it (sl_xport_post, sl_xport_sq_room): the SQ (and, for send, RQ)
 *                              consumption, empty polls included
 *   lane_complete_instr_per_cqe  sl_chan_lane_on_complete: the lane's send completion, with
 *                              the completion write (sl_chan_lane_cq_put) in it
 *   cq_put_instr_per_cqe       sl_chan_lane_cq_put alone (every completion, send and recv;
 *                              null when the compiler inlined it everywhere)
 *   lane_recv_instr_per_msg    sl_chan_lane_on_recv: placement of arriving segments, key
 *                              checks, RECV completions
 *   cq_poll_instr_per_cqe      sl_cq_poll (library), empty polls included
 *   channel_instr_per_wr       the channel's own work per work request: post_send + post_recv
 *                              + lane_poll + lane_complete + cq_poll x completions per WR
 *   loop_instr_per_wr          the whole measured loop, channel and direct, and their
 *                              difference: everything the channel adds, endpoint steps it
 *                              causes included
 * The full fence in sl_chan_lane_cq_put (no lost wake-up) is one instruction to callgrind;
 * its time is measured apart (seq_cst_fence: a store and a fence against a store alone).
 *
 *   bench-api [--quick] [--callgrind] [--wrs N]
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef BENCH_HAVE_CALLGRIND_H
#include <valgrind/callgrind.h>
#endif

#include "bench_callgrind.h"
#include "sl_chan.h"
#include "sl_rng.h"
#include "sl_time.h"
#include "sluice.h"

#define PROGRAM "reno"                   /* a window program: no initial rate to ramp */
#define SEG_BYTES 4096u                  /* the daemon's [api] seg_bytes by default */
#define LINE_BPS (400 * SL_BPS_PER_GBPS) /* the endpoints' line: never the limit here */
#define STEP_NS (20 * SL_NS_PER_US)      /* virtual time a step, ns (an RTT, > ACK delay) */
#define QPN_BASE 4u                      /* application QPNs of each lane */
#define LANE_QPS 4u
#define XPORT_QPS (QPN_BASE + LANE_QPS)
#define DEPTH 128u              /* SQ and RQ of the QPs and the endpoints */
#define CQ_DEPTH 512u           /* >= SQ + RQ: one CQ per host */
#define BATCH 32u               /* work requests posted per step, at most */
#define REGION_BYTES (1u << 20) /* each host's registered buffer */
#define MEM_BYTES (8u << 20)    /* each context's shared memory */
#define FRAME_MAX (SL_XHDR_MAX_LEN + SEG_BYTES)
#define WIRE_MAX 1024u   /* frames in flight per direction and step */
#define STEPS_PER_WR 64u /* a run that needs more steps is stuck */
#define ROUNDS 5u
#define SEED 42u
#define FENCE_LOOPS 2000000u

enum verb { VERB_WRITE, VERB_SEND, VERB_N };
enum impl { IMPL_CHANNEL, IMPL_DIRECT };

static const char *const verb_name[VERB_N] = {"write", "send"};
static const uint32_t sizes[] = {64, 4096};
#define N_SIZES (sizeof(sizes) / sizeof(sizes[0]))
#define N_CASES (VERB_N * N_SIZES)

struct frame {
	struct frame *next; /**< on the free list */
	uint32_t len;
	uint8_t buf[FRAME_MAX];
};

struct wire {
	struct frame *f[WIRE_MAX];
	unsigned n;
};

struct host {
	struct bench *b;
	struct sl_xport *x;
	/* channel: the daemon's side */
	struct sl_chan_mrs *mrs;
	struct sl_chan_lane *cl;
	struct sl_chan_srv *srv;
	char path[96];
	/* channel: the application's side */
	struct sl_ctx *ctx;
	struct sl_mr *mr;
	struct sl_cq *cq;
	struct sl_qp *qp;
	uint8_t *buf; /**< REGION_BYTES: sources (host 0), WRITE targets and RECVs (host 1) */
	/* direct: the endpoint's consumer */
	uint64_t completed, received, failed;
};

struct pump {
	pthread_t t;
	atomic_bool stop;
	bool running;
};

struct bench {
	enum impl impl;
	struct host h[2];
	struct wire w[2]; /**< [i]: frames host i sent */
	struct frame *free_frames;
	uint64_t frames_alive;
	uint64_t now;
	char dir[64];
	struct pump srv_pump, lane_pump;
	/* the workload: offsets of each work request's source and target, seeded */
	uint32_t *src_off, *dst_off;
	uint64_t recv_posted; /**< channel, send: RECVs posted on host 1 */
};

static void
die(const char *what)
{
	fprintf(stderr, "bench-api: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* --- the wire and the endpoints' callbacks ------------------------------------------------ */

static struct frame *
frame_get(struct bench *b)
{
	struct frame *f = b->free_frames;

	if (f != NULL)
		b->free_frames = f->next;
	else if ((f = malloc(sizeof(*f))) == NULL)
		die("malloc");
	b->frames_alive++;
	return f;
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
	struct bench *b = ((struct host *)ctx)->b;
	struct frame *f = handle;

	f->next = b->free_frames;
	b->free_frames = f;
	b->frames_alive--;
}

/* Direct: a segment lands at its target offset (WRITE) or in the next RECV slot (SEND). */
static int
direct_recv(struct host *h, const struct sl_xport_rx_seg *seg)
{
	uint64_t at = seg->op == SL_XPORT_OP_WRITE
			      ? seg->raddr + seg->offset
			      : (h->received % DEPTH) * SEG_BYTES + seg->offset;

	if (at > REGION_BYTES || seg->len > REGION_BYTES - at)
		return SL_XPORT_SYN_ACCESS;
	memcpy(h->buf + at, seg->data, seg->len);
	h->received += seg->last;
	return 0;
}

static int
on_recv(void *ctx, const struct sl_xport_rx_seg *seg, uint64_t now_ns)
{
	struct host *h = ctx;

	if (h->b->impl == IMPL_DIRECT)
		return direct_recv(h, seg);
	return sl_chan_lane_on_recv(h->cl, seg, now_ns);
}

static void
on_complete(void *ctx, const struct sl_xport_cqe *c, uint64_t now_ns)
{
	struct host *h = ctx;

	if (h->b->impl == IMPL_CHANNEL) {
		sl_chan_lane_on_complete(h->cl, c, now_ns);
		return;
	}
	h->completed++;
	h->failed += c->status != 0;
}

static int
read_src(void *ctx, uint32_t qpn, uint64_t raddr, uint32_t rkey, uint32_t len, const uint8_t **src)
{
	return sl_chan_lane_read_src(((struct host *)ctx)->cl, qpn, raddr, rkey, len, src);
}

/* One step: each host's lane polls, its endpoint takes what the wire brought and sends. */
static void
step(struct bench *b)
{
	for (int i = 0; i < 2; i++) {
		struct host *h = &b->h[i];
		struct wire *in = &b->w[1 - i], *out = &b->w[i];
		struct sl_xport_rx_frame rx[WIRE_MAX];
		struct sl_xport_tx_frame tx[64];
		unsigned n = in->n;

		if (b->impl == IMPL_CHANNEL)
			sl_chan_lane_poll(h->cl, h->x, b->now);
		for (unsigned k = 0; k < n; k++)
			rx[k] = (struct sl_xport_rx_frame){
				.buf = in->f[k]->buf, .len = in->f[k]->len, .handle = in->f[k]};
		in->n = 0;
		sl_xport_rx_burst(h->x, b->now, rx, n);
		do {
			n = sl_xport_tx_burst(h->x, b->now, tx, SL_ARRAY_SIZE(tx));
			for (unsigned k = 0; k < n; k++) {
				struct frame *f = frame_get(b);

				if (out->n == WIRE_MAX) {
					fprintf(stderr, "bench-api: wire full\n");
					exit(1);
				}
				f->len = tx[k].hdr_len + tx[k].payload_len + tx[k].pad_bytes;
				memcpy(f->buf, tx[k].hdr, tx[k].hdr_len);
				if (tx[k].payload_len)
					memcpy(f->buf + tx[k].hdr_len, tx[k].payload,
					       tx[k].payload_len);
				memset(f->buf + tx[k].hdr_len + tx[k].payload_len, 0,
				       tx[k].pad_bytes);
				out->f[out->n++] = f;
			}
		} while (n == SL_ARRAY_SIZE(tx));
	}
	b->now += STEP_NS;
}

/* --- set up and tear down ----------------------------------------------------------------- */

static void *
srv_main(void *arg)
{
	struct bench *b = arg;

	while (!atomic_load(&b->srv_pump.stop))
		for (int i = 0; i < 2; i++)
			sl_chan_srv_poll(b->h[i].srv, 1);
	return NULL;
}

/* The lanes' lcore while the application talks to the control half (commands need a poll). */
static void *
lane_main(void *arg)
{
	struct bench *b = arg;

	while (!atomic_load(&b->lane_pump.stop)) {
		for (int i = 0; i < 2; i++)
			sl_chan_lane_poll(b->h[i].cl, b->h[i].x, b->now);
		sched_yield();
	}
	return NULL;
}

static void
pump_start(struct bench *b, struct pump *p, void *(*fn)(void *))
{
	atomic_store(&p->stop, false);
	errno = pthread_create(&p->t, NULL, fn, b);
	if (errno)
		die("pthread_create");
	p->running = true;
}

static void
pump_stop(struct pump *p)
{
	if (!p->running)
		return;
	atomic_store(&p->stop, true);
	pthread_join(p->t, NULL);
	p->running = false;
}

static void
host_endpoint(struct bench *b, struct host *h)
{
	struct sl_xport_conf xc = {.max_qps = XPORT_QPS,
				   .sq_depth = DEPTH,
				   .line_bps = LINE_BPS,
				   .frame = frame_bytes,
				   .release = frame_release,
				   .on_recv = on_recv,
				   .read_src = b->impl == IMPL_CHANNEL ? read_src : NULL,
				   .on_complete = on_complete,
				   .ctx = h};

	h->b = b;
	h->x = sl_xport_create(&xc);
	if (h->x == NULL)
		die("sl_xport_create");
}

/* The daemon's side of host i: key table, lane half, control half on its socket. */
static void
host_daemon(struct bench *b, int i)
{
	struct host *h = &b->h[i];
	struct sl_chan_lane_conf lc = {.qpn_base = QPN_BASE,
				       .qps = LANE_QPS,
				       .sq_depth_max = DEPTH,
				       .rq_depth_max = DEPTH,
				       .stash_bytes = 1u << 20};
	struct sl_chan_srv_conf sc = {.mode = 0600,
				      .uid = (uid_t)-1,
				      .gid = (gid_t)-1,
				      .max_clients = 2,
				      .max_mrs = 16,
				      .max_cqs = 8,
				      .host = i ? "bench-host-1" : "bench-host-0",
				      .default_program = PROGRAM,
				      .seg_bytes = SEG_BYTES,
				      .stash_bytes = lc.stash_bytes,
				      .qpn_base = QPN_BASE,
				      .qps = LANE_QPS};

	snprintf(h->path, sizeof(h->path), "%s/host%d.sock", b->dir, i);
	sc.socket_path = h->path;
	h->mrs = sl_chan_mrs_create(16);
	if (h->mrs == NULL)
		die("sl_chan_mrs_create");
	lc.mrs = h->mrs;
	h->cl = sl_chan_lane_create(&lc);
	if (h->cl == NULL)
		die("sl_chan_lane_create");
	h->srv = sl_chan_srv_create(&sc, &h->cl, 1, h->mrs);
	if (h->srv == NULL)
		die("sl_chan_srv_create");
}

/* The application on host i: context, buffer, MR, CQ, QP (libsluice over the socket). */
static void
host_app(struct host *h)
{
	struct sl_qp_attr qa = {.sq_depth = DEPTH,
				.rq_depth = DEPTH,
				.program = PROGRAM,
				.max_msg_bytes = SEG_BYTES};

	h->ctx = sl_ctx_open(h->path, &(struct sl_ctx_attr){.mem_bytes = MEM_BYTES});
	if (h->ctx == NULL)
		die("sl_ctx_open");
	h->buf = sl_mem_alloc(h->ctx, REGION_BYTES);
	if (h->buf == NULL)
		die("sl_mem_alloc");
	h->mr = sl_mr_reg(h->ctx, h->buf, REGION_BYTES,
			  SL_ACCESS_LOCAL_WRITE | SL_ACCESS_REMOTE_WRITE);
	h->cq = sl_cq_create(h->ctx, CQ_DEPTH);
	if (h->mr == NULL || h->cq == NULL)
		die("sl_mr_reg / sl_cq_create");
	qa.send_cq = qa.recv_cq = h->cq;
	h->qp = sl_qp_create(h->ctx, &qa);
	if (h->qp == NULL)
		die("sl_qp_create");
}

/* Direct: the same QP opened straight on the endpoint, as the control half would open it. */
static void
host_direct(struct host *h)
{
	struct sl_xport_qp_conf qc = {
		.qpn = QPN_BASE, .peer_qpn = QPN_BASE, .proto = PROGRAM, .seg_bytes = SEG_BYTES};

	h->buf = aligned_alloc(4096, REGION_BYTES);
	if (h->buf == NULL)
		die("aligned_alloc");
	memset(h->buf, 0, REGION_BYTES);
	errno = -sl_xport_qp_open(h->x, &qc, 0);
	if (errno)
		die("sl_xport_qp_open");
}

/* Channel: a RECV buffer on h, the next slot round the receive queue (one per RECV used). */
static void
recv_repost(struct bench *b, struct host *h)
{
	struct sl_recv_wr r = {.wr_id = b->recv_posted,
			       .lkey = sl_mr_lkey(h->mr),
			       .addr = h->buf + (b->recv_posted % DEPTH) * SEG_BYTES,
			       .len = SEG_BYTES};

	if (sl_post_recv(h->qp, &r, 1) != 1) {
		fprintf(stderr, "bench-api: sl_post_recv refused\n");
		exit(1);
	}
	b->recv_posted++;
}

static void
bench_setup(struct bench *b, enum impl impl, enum verb v)
{
	struct frame *keep = b->free_frames;
	uint64_t keep_alive = b->frames_alive;

	memset(b->h, 0, sizeof(b->h));
	memset(b->w, 0, sizeof(b->w));
	b->free_frames = keep;
	b->frames_alive = keep_alive;
	b->impl = impl;
	b->now = 0;
	b->recv_posted = 0;
	for (int i = 0; i < 2; i++)
		host_endpoint(b, &b->h[i]);
	if (impl == IMPL_DIRECT) {
		for (int i = 0; i < 2; i++)
			host_direct(&b->h[i]);
		return;
	}
	for (int i = 0; i < 2; i++)
		host_daemon(b, i);
	pump_start(b, &b->srv_pump, srv_main);
	pump_start(b, &b->lane_pump, lane_main);
	for (int i = 0; i < 2; i++)
		host_app(&b->h[i]);
	for (int i = 0; i < 2; i++) {
		struct sl_qp_info peer;

		sl_qp_info(b->h[1 - i].qp, b->h[1 - i].mr, &peer);
		errno = -sl_qp_connect(b->h[i].qp, &peer);
		if (errno)
			die("sl_qp_connect");
	}
	for (uint32_t k = 0; v == VERB_SEND && k < DEPTH; k++)
		recv_repost(b, &b->h[1]);
	/* connected (the lanes answered): from here on the main thread alone polls them */
	pump_stop(&b->lane_pump);
}

static void
wire_drop(struct bench *b)
{
	for (int i = 0; i < 2; i++) {
		for (unsigned k = 0; k < b->w[i].n; k++)
			frame_release(&b->h[i], b->w[i].f[k]);
		b->w[i].n = 0;
	}
}

static void
bench_teardown(struct bench *b)
{
	if (b->impl == IMPL_CHANNEL) {
		pump_start(b, &b->lane_pump, lane_main);
		for (int i = 0; i < 2; i++)
			sl_ctx_close(b->h[i].ctx);
		pump_stop(&b->srv_pump);
		for (int i = 0; i < 2; i++)
			sl_chan_srv_free(b->h[i].srv);
		pump_stop(&b->lane_pump);
	}
	wire_drop(b);
	for (int i = 0; i < 2; i++) {
		struct host *h = &b->h[i];

		sl_xport_free(h->x);
		if (b->impl == IMPL_CHANNEL) {
			sl_chan_lane_free(h->cl);
			sl_chan_mrs_free(h->mrs);
		} else {
			free(h->buf);
		}
	}
	if (b->frames_alive != 0) {
		fprintf(stderr, "bench-api: %" PRIu64 " frames leaked\n", b->frames_alive);
		exit(1);
	}
}

/* --- the measured loop -------------------------------------------------------------------- */

/* Channel: post work requests [from, from + n) with one sl_post_send; how many went. */
static uint32_t
post_channel(struct bench *b, enum verb v, uint32_t size, uint64_t from, uint32_t n)
{
	struct host *s = &b->h[0], *t = &b->h[1];
	struct sl_wr wr[BATCH];
	int rc;

	for (uint32_t k = 0; k < n; k++)
		wr[k] = (struct sl_wr){.wr_id = from + k,
				       .opcode = v == VERB_WRITE ? SL_WR_WRITE : SL_WR_SEND,
				       .flags = SL_WR_F_SIGNALED,
				       .lkey = sl_mr_lkey(s->mr),
				       .addr = s->buf + b->src_off[from + k],
				       .len = size,
				       .raddr = (uint64_t)(uintptr_t)t->buf + b->dst_off[from + k],
				       .rkey = sl_mr_rkey(t->mr)};
	rc = sl_post_send(s->qp, wr, (int)n);
	if (rc < 0 && rc != -ENOBUFS) {
		fprintf(stderr, "bench-api: sl_post_send: %s\n", strerror(-rc));
		exit(1);
	}
	return rc < 0 ? 0 : (uint32_t)rc;
}

/* Direct: the same work requests straight to the endpoint, while it takes them. */
static uint32_t
post_direct(struct bench *b, enum verb v, uint32_t size, uint64_t from, uint32_t n)
{
	struct host *s = &b->h[0];
	uint32_t k;

	for (k = 0; k < n; k++) {
		struct sl_xport_wr wr = {.op = v == VERB_WRITE ? SL_XPORT_OP_WRITE
							       : SL_XPORT_OP_SEND,
					 .buf = s->buf + b->src_off[from + k],
					 .len = size,
					 .raddr = b->dst_off[from + k],
					 .cookie = from + k};
		int rc = sl_xport_post(s->x, QPN_BASE, &wr, b->now);

		if (rc == -ENOBUFS)
			break;
		if (rc != 0) {
			fprintf(stderr, "bench-api: sl_xport_post: %s\n", strerror(-rc));
			exit(1);
		}
	}
	return k;
}

/* Channel: reap both CQs (re-posting a RECV per RECV completion); send completions reaped. */
static uint64_t
reap_channel(struct bench *b, uint64_t *received)
{
	struct sl_wc wc[BATCH];
	uint64_t sent = 0;

	for (int i = 0; i < 2; i++) {
		struct host *h = &b->h[i];
		int n;

		while ((n = sl_cq_poll(h->cq, wc, BATCH)) > 0)
			for (int k = 0; k < n; k++) {
				if (wc[k].status != SL_WC_SUCCESS) {
					fprintf(stderr, "bench-api: completion %s\n",
						sl_wc_status_str(wc[k].status));
					exit(1);
				}
				if (wc[k].opcode != SL_WC_RECV) {
					sent++;
					continue;
				}
				(*received)++;
				recv_repost(b, h);
			}
	}
	return sent;
}

/*
 * n work requests of verb v and size bytes from host 0 to host 1, every one completed (and,
 * for SENDs, received). Kept out of line: callgrind's children count inside it.
 */
__attribute__((noinline)) void bench_api_measured(struct bench *b, enum verb v, uint32_t size,
						  uint64_t n);

void
bench_api_measured(struct bench *b, enum verb v, uint32_t size, uint64_t n)
{
	uint64_t posted = 0, sent = 0, received = 0, steps = 0;
	struct host *s = &b->h[0], *t = &b->h[1];

	while (sent < n || (v == VERB_SEND && received < n)) {
		if (posted < n) {
			uint32_t k = (uint32_t)SL_MIN((uint64_t)BATCH, n - posted);

			posted += b->impl == IMPL_CHANNEL ? post_channel(b, v, size, posted, k)
							  : post_direct(b, v, size, posted, k);
		}
		step(b);
		if (b->impl == IMPL_CHANNEL) {
			sent += reap_channel(b, &received);
		} else {
			sent = s->completed;
			received = t->received;
		}
		if (++steps > STEPS_PER_WR * n + 1000 || s->failed) {
			fprintf(stderr,
				"bench-api: %s %s %u B stuck: %" PRIu64 " of %" PRIu64
				" completed, %" PRIu64 " failed\n",
				b->impl == IMPL_CHANNEL ? "channel" : "direct", verb_name[v], size,
				sent, n, s->failed);
			exit(1);
		}
	}
}

/* The seeded workload: n sources and targets, size-aligned offsets in the regions. */
static void
workload(struct bench *b, uint32_t size, uint64_t n)
{
	struct sl_rng r;

	free(b->src_off);
	free(b->dst_off);
	b->src_off = malloc(n * sizeof(*b->src_off));
	b->dst_off = malloc(n * sizeof(*b->dst_off));
	if (b->src_off == NULL || b->dst_off == NULL)
		die("malloc");
	sl_rng_seed(&r, SEED + size);
	for (uint64_t k = 0; k < n; k++) {
		b->src_off[k] = (uint32_t)sl_rng_below(&r, REGION_BYTES / size) * size;
		b->dst_off[k] = (uint32_t)sl_rng_below(&r, REGION_BYTES / size) * size;
	}
}

static void
bench_fini(struct bench *b)
{
	while (b->free_frames != NULL) {
		struct frame *f = b->free_frames;

		b->free_frames = f->next;
		free(f);
	}
	free(b->src_off);
	free(b->dst_off);
	rmdir(b->dir);
}

static void
bench_init(struct bench *b)
{
	memset(b, 0, sizeof(*b));
	snprintf(b->dir, sizeof(b->dir), "/tmp/bench-api.XXXXXX");
	if (mkdtemp(b->dir) == NULL)
		die("mkdtemp");
}

/* Wall time of one run, ns. */
static uint64_t
timed_run(struct bench *b, enum impl impl, enum verb v, uint32_t size, uint64_t n)
{
	uint64_t t0, t1;

	bench_setup(b, impl, v);
	t0 = sl_monotonic_ns();
	bench_api_measured(b, v, size, n);
	t1 = sl_monotonic_ns();
	bench_teardown(b);
	return t1 - t0;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median of v[0..n) (sorts v). */
static double
median(double *v, unsigned n)
{
	qsort(v, n, sizeof(v[0]), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * Each case: rounds of a channel run and a direct run back to back; medians of the times, and
 * of each round's ratio (drift on shared cores moves both runs of a round alike).
 */
static void
timing(struct bench *b, uint64_t n, unsigned rounds)
{
	for (int v = 0; v < VERB_N; v++)
		for (unsigned s = 0; s < N_SIZES; s++) {
			double ns[2][ROUNDS], ratio[ROUNDS], per_wr[2];

			workload(b, sizes[s], n);
			for (unsigned r = 0; r < rounds; r++) {
				for (int impl = 0; impl < 2; impl++)
					ns[impl][r] = (double)timed_run(b, (enum impl)impl,
									(enum verb)v, sizes[s], n);
				ratio[r] = ns[IMPL_DIRECT][r] / ns[IMPL_CHANNEL][r];
			}
			for (int impl = 0; impl < 2; impl++)
				per_wr[impl] = median(ns[impl], rounds) / (double)n;
			printf("{\"bench\": \"api\", \"kind\": \"rate\", \"verb\": \"%s\", "
			       "\"bytes\": %u, \"wrs\": %" PRIu64 ", \"rounds\": %u, "
			       "\"channel_wr_per_s\": %.0f, \"direct_wr_per_s\": %.0f, "
			       "\"channel_over_direct\": %.3f, \"channel_ns_per_wr\": %.1f, "
			       "\"direct_ns_per_wr\": %.1f, \"added_ns_per_wr\": %.1f}\n",
			       verb_name[v], sizes[s], n, rounds, 1e9 / per_wr[IMPL_CHANNEL],
			       1e9 / per_wr[IMPL_DIRECT], median(ratio, rounds),
			       per_wr[IMPL_CHANNEL], per_wr[IMPL_DIRECT],
			       per_wr[IMPL_CHANNEL] - per_wr[IMPL_DIRECT]);
		}
}

/* A store, then a full fence, against the store alone: the fence of sl_chan_lane_cq_put. */
__attribute__((noinline)) static uint64_t
fence_loop(_Atomic uint32_t *word, unsigned loops, bool fence)
{
	uint64_t t0 = sl_monotonic_ns();

	for (unsigned i = 0; i < loops; i++) {
		atomic_store_explicit(word, i, memory_order_release);
		if (fence)
			atomic_thread_fence(memory_order_seq_cst);
		(void)atomic_load_explicit(word + 16, memory_order_relaxed);
	}
	return sl_monotonic_ns() - t0;
}

static void
fence_cost(unsigned loops)
{
	static _Atomic uint32_t words[32];
	double with[ROUNDS], without[ROUNDS];

	for (unsigned r = 0; r < ROUNDS; r++) {
		without[r] = (double)fence_loop(words, loops, false);
		with[r] = (double)fence_loop(words, loops, true);
	}
	printf("{\"bench\": \"api\", \"kind\": \"seq_cst_fence\", \"loops\": %u, "
	       "\"ns_per_fence\": %.2f}\n",
	       loops, (median(with, ROUNDS) - median(without, ROUNDS)) / loops);
}

/* --- instruction counts ------------------------------------------------------------------- */

/* The child under callgrind: every case once, a dump before and after its measured part. */
static int
callgrind_child(enum impl impl, uint64_t n)
{
	struct bench b;

	bench_init(&b);
	for (int v = 0; v < VERB_N; v++)
		for (unsigned s = 0; s < N_SIZES; s++) {
			workload(&b, sizes[s], n);
			bench_setup(&b, impl, (enum verb)v);
#ifdef BENCH_HAVE_CALLGRIND_H
			CALLGRIND_DUMP_STATS;
#endif
			bench_api_measured(&b, (enum verb)v, sizes[s], n);
#ifdef BENCH_HAVE_CALLGRIND_H
			CALLGRIND_DUMP_STATS;
#endif
			bench_teardown(&b);
		}
	bench_fini(&b);
	return 0;
}

/* What the children count: instructions inside one function, per case. */
enum fn {
	FN_LOOP,
	FN_LOOP_DIRECT, /**< the loop again, in the direct child */
	FN_POST_SEND,
	FN_POST_RECV,
	FN_CQ_POLL,
	FN_LANE_POLL,
	FN_XPORT_POST,
	FN_XPORT_SQ_ROOM,
	FN_ON_COMPLETE,
	FN_CQ_PUT,
	FN_ON_RECV,
	FN_N
};

static const char *const fn_name[FN_N] = {
	"bench_api_measured",  "bench_api_measured",   "sl_post_send",
	"sl_post_recv",        "sl_cq_poll",           "sl_chan_lane_poll",
	"sl_xport_post",       "sl_xport_sq_room",     "sl_chan_lane_on_complete",
	"sl_chan_lane_cq_put", "sl_chan_lane_on_recv",
};

/* ir[f][case]: instructions inside fn f in each case's measured part; -1 if unavailable. */
static bool
callgrind_all(const char *self, uint64_t n, double ir[FN_N][N_CASES])
{
	char n_s[24];

	snprintf(n_s, sizeof(n_s), "%" PRIu64, n);
	for (int f = 0; f < FN_N; f++) {
		char *const argv[] = {(char *)self, "--cg-child",
				      f == FN_LOOP_DIRECT ? "direct" : "channel", n_s, NULL};
		double totals[2 * N_CASES];
		int parts = bench_callgrind(fn_name[f], argv, totals, 2 * N_CASES);

		if (parts != 2 * N_CASES) {
			fprintf(stderr, "bench-api: callgrind of %s failed (%d parts)\n",
				fn_name[f], parts);
			return false;
		}
		for (unsigned c = 0; c < N_CASES; c++)
			ir[f][c] = totals[2 * c + 1];
	}
	return true;
}

/* A figure per unit, or null in JSON when the function left no trace (inlined). */
static void
per(char *out, size_t len, double total, double units)
{
	if (total > 0)
		snprintf(out, len, "%.1f", total / units);
	else
		snprintf(out, len, "null");
}

static int
instructions(const char *self, uint64_t n)
{
	static double ir[FN_N][N_CASES];

#ifndef BENCH_HAVE_CALLGRIND_H
	fprintf(stderr, "bench-api: built without valgrind/callgrind.h, no instruction counts\n");
	return 1;
#endif
	if (!callgrind_all(self, n, ir))
		return 1;
	for (int v = 0; v < VERB_N; v++)
		for (unsigned s = 0; s < N_SIZES; s++) {
			unsigned c = (unsigned)v * N_SIZES + s;
			double wrs = (double)n, cqes = v == VERB_SEND ? 2.0 * wrs : wrs;
			double lane = ir[FN_LANE_POLL][c] - ir[FN_XPORT_POST][c] -
				      ir[FN_XPORT_SQ_ROOM][c];
			double channel = (ir[FN_POST_SEND][c] + ir[FN_POST_RECV][c] + lane +
					  ir[FN_ON_COMPLETE][c] + ir[FN_CQ_POLL][c]) /
					 wrs;
			char cq_put[32];

			per(cq_put, sizeof(cq_put), ir[FN_CQ_PUT][c], cqes);
			printf("{\"bench\": \"api\", \"kind\": \"instr\", \"verb\": \"%s\", "
			       "\"bytes\": %u, \"wrs\": %" PRIu64 ", \"cqes\": %.0f, "
			       "\"post_send_instr_per_wr\": %.1f, \"post_recv_instr_per_wr\": "
			       "%.1f, "
			       "\"lane_poll_instr_per_wr\": %.1f, "
			       "\"lane_complete_instr_per_cqe\": %.1f, \"cq_put_instr_per_cqe\": "
			       "%s, "
			       "\"lane_recv_instr_per_msg\": %.1f, \"cq_poll_instr_per_cqe\": "
			       "%.1f, "
			       "\"channel_instr_per_wr\": %.1f, \"loop_instr_per_wr\": %.1f, "
			       "\"direct_loop_instr_per_wr\": %.1f, \"loop_added_instr_per_wr\": "
			       "%.1f}\n",
			       verb_name[v], sizes[s], n, cqes, ir[FN_POST_SEND][c] / wrs,
			       ir[FN_POST_RECV][c] / wrs, lane / wrs, ir[FN_ON_COMPLETE][c] / wrs,
			       cq_put, ir[FN_ON_RECV][c] / wrs, ir[FN_CQ_POLL][c] / cqes, channel,
			       ir[FN_LOOP][c] / wrs, ir[FN_LOOP_DIRECT][c] / wrs,
			       (ir[FN_LOOP][c] - ir[FN_LOOP_DIRECT][c]) / wrs);
		}
	return 0;
}

int
main(int argc, char **argv)
{
	uint64_t n = 200000, cg_n = 20000;
	unsigned rounds = ROUNDS, fence_loops = FENCE_LOOPS;
	bool callgrind = false;
	struct bench b;

	if (argc == 4 && strcmp(argv[1], "--cg-child") == 0)
		return callgrind_child(strcmp(argv[2], "direct") ? IMPL_CHANNEL : IMPL_DIRECT,
				       strtoull(argv[3], NULL, 10));
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0) {
			n = 5000;
			cg_n = 2000;
			rounds = 1;
			fence_loops = FENCE_LOOPS / 10;
		} else if (strcmp(argv[i], "--callgrind") == 0) {
			callgrind = true;
		} else if (strcmp(argv[i], "--wrs") == 0 && i + 1 < argc) {
			n = strtoull(argv[++i], NULL, 10);
			cg_n = n;
		} else {
			fprintf(stderr, "usage: bench-api [--quick] [--callgrind] [--wrs N]\n");
			return 2;
		}
	}
	if (n == 0) {
		fprintf(stderr, "bench-api: --wrs must be > 0\n");
		return 2;
	}
	if (callgrind)
		return instructions(argv[0], cg_n);
	bench_init(&b);
	timing(&b, n, rounds);
	bench_fini(&b);
	fence_cost(fence_loops);
	return 0;
}
