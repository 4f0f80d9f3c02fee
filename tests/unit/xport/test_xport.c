/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_xport.c - two transport endpoints joined by an in-memory wire that can lose, duplicate,
 * reorder and damage frames (seeded), with the built-in traffic on both: for every registered
 * transport program and both receiver modes, every message arrives exactly once, in order, with
 * the right length and bytes, and every message posted completes. Hostile frames are counted
 * and dropped without a byte delivered twice.
 *
 * Then an application with memory on each side (struct app): a posts SEND, WRITE and READ,
 * b serves them from and into its memory, and every segment is checked against what a posted
 * (operation, offset, RETH fields, immediate, bytes), every completion against what happened
 * (status, order, READ after its answer). Refusals (on_recv or read_src says no) fail exactly
 * the refused message and cancel the rest, also when the NAK is lost.
 *
 * The wire: each direction carries at most WIRE_PKTS_PER_STEP frames per 1 us step (about
 * 16 Gbit/s of 1 KB packets) and delivers them WIRE_DELAY_NS later; a lost frame is freed, a
 * reordered one is held up to WIRE_REORDER_NS longer, a duplicate is delivered twice.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sl_rng.h"
#include "sl_xport.h"
#include "sl_traffic.h"

#define STEP_NS 1000u
#define WIRE_PKTS_PER_STEP 2u
#define WIRE_DELAY_NS 10000u
#define WIRE_REORDER_NS 30000u
#define WIRE_SLOTS 65536u
#define MIN_FRAME 44u /* the daemon's link body minimum */
#define QPS 3u

struct frame {
	uint64_t at_ns; /**< arrival time */
	uint32_t len;
	uint8_t buf[];
};

struct wire {
	struct frame *slot[WIRE_SLOTS]; /**< in flight, unordered */
	unsigned n;
	double loss, dup, reorder;
	unsigned drop_naks; /**< lose this many NAKs first */
	bool drop_answers;  /**< lose every READ answer packet */
	struct sl_rng rng;
	uint64_t sent, lost;
};

struct app;

struct side {
	struct sl_xport *x;
	struct sl_traffic_msg *t; /**< the built-in traffic, or NULL ... */
	struct app *app;          /**< ... an application (a posts, b serves), or neither: */
	uint64_t ok, failed;      /**< ... completions counted, everything accepted */
	int who;                  /**< app: 0 a, 1 b */
	uint64_t live_frames;     /**< handles the endpoint holds or the wire carries */
	double rnr;               /**< traffic: share of messages refused for now (RNR) ... */
	struct sl_rng rnr_rng;    /**< ... drawn from this at their first segment */
};

static uint64_t frames_alive;

static const uint8_t *
frame_bytes(void *ctx, void *handle, uint32_t *len)
{
	struct frame *f = handle;

	(void)ctx;
	*len = f->len;
	return f->buf;
}

static void
frame_release(void *ctx, void *handle)
{
	(void)ctx;
	free(handle);
	frames_alive--;
}

static struct frame *
frame_new(uint32_t len)
{
	struct frame *f = malloc(sizeof(*f) + len);

	assert_non_null(f);
	f->len = len;
	frames_alive++;
	return f;
}

/* The wire loses f: the first drop_naks NAKs, every answer with drop_answers, else by chance. */
static bool
wire_loses(struct wire *w, const struct frame *f)
{
	if (w->drop_naks && f->buf[0] == SL_XOP_NAK) {
		w->drop_naks--;
		return true;
	}
	if (w->drop_answers && f->buf[0] >= SL_XOP_READ_RESP_FIRST &&
	    f->buf[0] <= SL_XOP_READ_RESP_ONLY)
		return true;
	return sl_rng_double(&w->rng) < w->loss;
}

static void
wire_put(struct wire *w, struct frame *f, uint64_t now_ns)
{
	w->sent++;
	if (wire_loses(w, f)) {
		w->lost++;
		free(f);
		frames_alive--;
		return;
	}
	f->at_ns = now_ns + WIRE_DELAY_NS;
	if (sl_rng_double(&w->rng) < w->reorder)
		f->at_ns += sl_rng_below(&w->rng, WIRE_REORDER_NS);
	assert_true(w->n < WIRE_SLOTS);
	w->slot[w->n++] = f;
	if (sl_rng_double(&w->rng) < w->dup && w->n < WIRE_SLOTS) {
		struct frame *d = frame_new(f->len);

		memcpy(d->buf, f->buf, f->len);
		d->at_ns = f->at_ns + STEP_NS;
		w->slot[w->n++] = d;
	}
}

/*
 * Frames due by now_ns into rx (at most max) in the order they were put: the wire reorders only
 * what `reorder` delays.
 */
static unsigned
wire_take(struct wire *w, uint64_t now_ns, struct sl_xport_rx_frame *rx, unsigned max)
{
	unsigned n = 0, kept = 0;

	for (unsigned i = 0; i < w->n; i++) {
		struct frame *f = w->slot[i];

		if (f->at_ns <= now_ns && n < max)
			rx[n++] = (struct sl_xport_rx_frame){
				.buf = f->buf, .len = f->len, .handle = f};
		else
			w->slot[kept++] = f;
	}
	w->n = kept;
	return n;
}

static void
wire_free(struct wire *w)
{
	for (unsigned i = 0; i < w->n; i++) {
		free(w->slot[i]);
		frames_alive--;
	}
	w->n = 0;
}

/*
 * A hostile frame into w: random bytes, a truncated header, an unknown QPN, a PSN far outside
 * the window, or feedback for QP 0 (ACK, NACK, CNP) naming random PSNs.
 */
static void
forge(struct wire *w, uint64_t now_ns)
{
	uint8_t b[64] = {0};
	uint32_t len = SL_XHDR_BASE_LEN + SL_XFB_ACK_LEN, psn = (uint32_t)sl_rng_next(&w->rng);
	struct frame *f;
	struct sl_xfb fb = {.qpn = 0, .ack_psn = psn};
	struct sl_xhdr h = {.opcode = SL_XOP_SEND_ONLY, .qpn = 0, .psn = psn};

	switch (sl_rng_below(&w->rng, 7)) {
	case 0: /* random bytes, random length */
		len = (uint32_t)sl_rng_below(&w->rng, sizeof(b));
		for (uint32_t i = 0; i < len; i++)
			b[i] = (uint8_t)sl_rng_next(&w->rng);
		break;
	case 1: /* a data header cut short */
		sl_xhdr_encode(&h, b, sizeof(b));
		len = (uint32_t)sl_rng_below(&w->rng, SL_XHDR_BASE_LEN);
		break;
	case 2: /* a QP that does not exist */
		h.qpn = 999;
		len = (uint32_t)sl_xhdr_encode(&h, b, sizeof(b)) + 8;
		break;
	case 3: /* a PSN far outside the window */
		h.psn = psn | 0x40000000u;
		len = (uint32_t)sl_xhdr_encode(&h, b, sizeof(b)) + 8;
		break;
	case 4:
		fb.opcode = SL_XOP_ACK;
		len = (uint32_t)sl_xfb_encode(&fb, b, sizeof(b));
		break;
	case 5:
		fb.opcode = SL_XOP_NACK;
		fb.nholes = 1;
		fb.hole[0] = (struct sl_xfb_hole){psn + 3, 2};
		len = (uint32_t)sl_xfb_encode(&fb, b, sizeof(b));
		break;
	default:
		fb.opcode = SL_XOP_CNP;
		len = (uint32_t)sl_xfb_encode(&fb, b, sizeof(b));
		break;
	}
	f = frame_new(len);
	memcpy(f->buf, b, len);
	f->at_ns = now_ns + WIRE_DELAY_NS;
	if (w->n < WIRE_SLOTS)
		w->slot[w->n++] = f;
	else
		frame_release(NULL, f);
}

/* One step of one side: receive what arrived, post, send what the wire takes (max frames). */
static void
side_step(struct side *s, struct wire *in, struct wire *out, uint64_t now_ns, unsigned max)
{
	struct sl_xport_rx_frame rx[64];
	struct sl_xport_tx_frame tx[WIRE_PKTS_PER_STEP];
	unsigned n;

	while ((n = wire_take(in, now_ns, rx, SL_ARRAY_SIZE(rx))) > 0)
		sl_xport_rx_burst(s->x, now_ns, rx, n);
	if (s->t)
		sl_traffic_msg_post(s->t, s->x, now_ns, 64);
	n = max ? sl_xport_tx_burst(s->x, now_ns, tx, SL_MIN(max, WIRE_PKTS_PER_STEP)) : 0;
	for (unsigned i = 0; i < n; i++) {
		uint32_t len = tx[i].hdr_len + tx[i].payload_len + tx[i].pad_bytes;
		struct frame *f = frame_new(len);

		assert_true(len >= MIN_FRAME);
		memcpy(f->buf, tx[i].hdr, tx[i].hdr_len);
		if (tx[i].payload_len)
			memcpy(f->buf + tx[i].hdr_len, tx[i].payload, tx[i].payload_len);
		memset(f->buf + tx[i].hdr_len + tx[i].payload_len, 0, tx[i].pad_bytes);
		wire_put(out, f, now_ns);
	}
}

struct run {
	const char *proto;
	uint8_t recv_mode;
	double loss, dup, reorder;
	double hostile;          /**< chance per step and direction of one forged frame */
	uint32_t qps;            /**< QPs each way (0: QPS) */
	uint64_t qp_timeout_ns;  /**< a QP fails after this long without progress (0: default) */
	uint64_t rto_ns;         /**< every QP's RTO, IRN's RTO_low and RTO_high too (0: 200 us) */
	uint64_t stall_ns;       /**< b sends nothing for this long ... */
	uint64_t stall_every_ns; /**< ... at the start of every period this long (0: never) */
	uint32_t min_bytes, max_bytes;
	uint64_t msgs;
	uint64_t seed;
	uint64_t ec_drain_bps; /**< with recv_mode SL_XPORT_RECV_EC: the target's host rate */
	bool ec_policy;        /**< the target sends DACKs (dack) or not (opt, aimd) */
	uint64_t opt_bytes;    /**< param[1]: the EC programs' outstanding-byte threshold */
	double rnr; /**< both consumers refuse this share of messages for now, at their first
		     *   segment, before the traffic sees them (SL_XPORT_SYN_RNR) */
};

struct result {
	struct sl_traffic_msg_stats t[2];
	struct sl_xport_stats x[2];
	struct sl_ec_stats ec[2]; /**< the EC targets' (zeros without) */
	struct sl_hist recovery;  /**< both endpoints' loss to delivery */
	uint64_t rtx;
	uint64_t relost; /**< the QPs' pkts_relost, both ends */
	uint64_t rtos;   /**< the QPs' RTOs, both ends */
	uint64_t end_ns;
	bool done;
};

static uint32_t
nqps(const struct run *r)
{
	return r->qps ? r->qps : QPS;
}

/*
 * Open the QPs of s at now, their PSNs starting from epoch's quarter of the 32-bit space (a
 * connection manager gives each incarnation of a QP a fresh initial PSN), and register them
 * with the traffic.
 */
static struct sl_xport_qp_conf
qp_conf(const struct run *r, uint32_t q, uint32_t epoch)
{
	struct sl_xport_qp_conf qc = {.qpn = q,
				      .peer_qpn = q,
				      .proto = r->proto,
				      .seg_bytes = 1024,
				      .recv_mode = r->recv_mode,
				      .send_psn = (UINT32_MAX - 100 * q) + epoch * 0x40000000u,
				      .recv_psn = (UINT32_MAX - 100 * q) + epoch * 0x40000000u,
				      .init_rate_bps = 4 * SL_BPS_PER_GBPS,
				      .rto_ns = r->rto_ns ? r->rto_ns : 200 * SL_NS_PER_US,
				      .timeout_ns = r->qp_timeout_ns,
				      .param = {0, r->opt_bytes}};

	if (r->rto_ns && strcmp(r->proto, "irn") == 0)
		qc.param[1] = qc.param[2] = r->rto_ns; /* IRN times out on its own */
	return qc;
}

static void
open_qps(struct side *s, const struct run *r, uint32_t epoch, uint64_t now)
{
	for (uint32_t q = 0; q < nqps(r); q++) {
		struct sl_xport_qp_conf qc = qp_conf(r, q, epoch);

		assert_int_equal(sl_xport_qp_open(s->x, &qc, now), 0);
		assert_int_equal(
			sl_traffic_msg_qp(s->t, q, q, SL_TRAFFIC_MSG_SEND | SL_TRAFFIC_MSG_CHECK),
			0);
	}
}

static struct sl_traffic_msg *
traffic_new(const struct run *r)
{
	struct sl_traffic_msg_conf tc = {.max_qps = nqps(r),
					 .min_bytes = r->min_bytes,
					 .max_bytes = r->max_bytes,
					 .msgs = r->msgs,
					 .seed = r->seed,
					 .check = true};
	struct sl_traffic_msg *t = sl_traffic_msg_create(&tc);

	assert_non_null(t);
	return t;
}

static int app_recv(struct side *s, const struct sl_xport_rx_seg *seg);
static void app_complete(struct side *s, const struct sl_xport_cqe *c);

/*
 * An endpoint whose callbacks feed s->app, or s->t (read at each call, so the traffic can be
 * replaced).
 */
static int
on_recv(void *ctx, const struct sl_xport_rx_seg *seg, uint64_t now_ns)
{
	struct side *s = ctx;

	if (s->app)
		return app_recv(s, seg);
	if (s->rnr > 0 && seg->first && sl_rng_double(&s->rnr_rng) < s->rnr)
		return SL_XPORT_SYN_RNR; /* no room yet: its sender sends it again */
	return s->t ? sl_traffic_msg_on_recv(s->t, seg, now_ns) : 0;
}

static void
on_complete(void *ctx, const struct sl_xport_cqe *c, uint64_t now_ns)
{
	struct side *s = ctx;

	if (s->app)
		app_complete(s, c);
	else if (s->t)
		sl_traffic_msg_on_complete(s->t, c, now_ns);
	else if (c->status == 0)
		s->ok++;
	else
		s->failed++;
}

static void
side_init(struct side *s, const struct run *r, uint32_t epoch, uint64_t now)
{
	struct sl_xport_conf xc = {.max_qps = nqps(r),
				   .min_frame_bytes = MIN_FRAME,
				   .frame = frame_bytes,
				   .release = frame_release,
				   .on_recv = on_recv,
				   .on_complete = on_complete,
				   .ec_drain_bps = r->ec_drain_bps,
				   .ec = {.policy = r->ec_policy, .nack = true},
				   .ctx = s};

	s->t = traffic_new(r);
	s->rnr = r->rnr;
	sl_rng_seed(&s->rnr_rng, r->seed * 3 + 1);
	s->x = sl_xport_create(&xc);
	assert_non_null(s->x);
	open_qps(s, r, epoch, now);
}

static void
run_pair(const struct run *r, struct result *res)
{
	static struct wire w[2]; /* [0]: a -> b, [1]: b -> a */
	struct side s[2] = {0};
	uint64_t now = 0, limit = 2 * SL_NS_PER_S;

	memset(res, 0, sizeof(*res));
	for (int i = 0; i < 2; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].loss = r->loss;
		w[i].dup = r->dup;
		w[i].reorder = r->reorder;
		sl_rng_seed(&w[i].rng, r->seed * 2 + (uint64_t)i);
		side_init(&s[i], r, 0, 0);
		assert_false(sl_traffic_msg_finished(s[i].t));
	}
	for (; now < limit; now += STEP_NS) {
		for (int i = 0; i < 2 && r->hostile > 0; i++)
			if (sl_rng_double(&w[i].rng) < r->hostile)
				forge(&w[i], now);
		bool stalled = r->stall_every_ns && now % r->stall_every_ns < r->stall_ns;

		side_step(&s[0], &w[1], &w[0], now, WIRE_PKTS_PER_STEP);
		side_step(&s[1], &w[0], &w[1], now, stalled ? 0 : WIRE_PKTS_PER_STEP);
		if (sl_traffic_msg_done(s[0].t) && sl_traffic_msg_done(s[1].t)) {
			struct sl_traffic_msg_stats a, b;

			sl_traffic_msg_stats_get(s[0].t, &a);
			sl_traffic_msg_stats_get(s[1].t, &b);
			if (a.received == r->msgs * nqps(r) && b.received == r->msgs * nqps(r)) {
				assert_true(sl_traffic_msg_finished(s[0].t));
				assert_true(sl_traffic_msg_finished(s[1].t));
				break;
			}
			/* Done sending is not done: a side still receiving has not finished. */
			assert_false(
				sl_traffic_msg_finished(a.received < b.received ? s[0].t : s[1].t));
		}
	}
	res->end_ns = now;
	res->done = now < limit;
	print_message("{\"proto\": \"%s\", \"recv\": %u, \"loss\": %.3f, \"dup\": %.3f, "
		      "\"reorder\": %.3f, \"done_us\": %" PRIu64 ", \"tx_data\": %" PRIu64
		      ", \"tx_rtx\": %" PRIu64 ", \"wire_lost\": %" PRIu64 "}\n",
		      r->proto, r->recv_mode, r->loss, r->dup, r->reorder, now / SL_NS_PER_US,
		      SL_STAT_READ(sl_xport_stats_get, struct sl_xport_stats, s[0].x, tx_data),
		      SL_STAT_READ(sl_xport_stats_get, struct sl_xport_stats, s[0].x, tx_rtx),
		      w[0].lost + w[1].lost);
	for (int i = 0; i < 2; i++) {
		sl_traffic_msg_stats_get(s[i].t, &res->t[i]);
		sl_xport_stats_get(s[i].x, &res->x[i]);
		assert_int_equal(sl_xport_ec_stats_get(s[i].x, &res->ec[i]),
				 r->ec_drain_bps ? 0 : -ENOENT);
		sl_hist_merge(&res->recovery, sl_xport_recovery_hist(s[i].x));
		res->rtx += res->x[i].tx_rtx;
		{ /* the QPs' shares add up to the endpoint's counters */
			struct sl_traffic_msg_stats q;
			uint64_t checked = 0, bytes = 0;

			for (uint32_t k = 0; k < nqps(r); k++) {
				struct sl_xport_qp_stats qs;
				struct sl_xport_qp_info qi;

				assert_int_equal(sl_xport_qp_stats_get(s[i].x, k, &qs), 0);
				assert_int_equal(sl_xport_qp_info_get(s[i].x, k, &qi), 0);
				res->relost += qs.pkts_relost;
				res->rtos += qi.rto_fired;
				assert_int_equal(sl_traffic_msg_qp_stats_get(s[i].t, k, &q), 0);
				checked += q.checked;
				bytes += q.bytes_received;
				assert_true(q.last_rx_ns >= q.first_rx_ns);
			}
			assert_int_equal(checked, res->t[i].checked);
			assert_int_equal(bytes, res->t[i].bytes_received);
		}
		assert_int_equal(res->x[i].fb_encode_errors, 0);
		assert_int_equal(res->x[i].tx_stale, 0);
	}
	for (int i = 0; i < 2; i++) {
		wire_free(&w[i]);
		sl_xport_free(s[i].x);
		sl_traffic_msg_free(s[i].t);
	}
	assert_int_equal(frames_alive, 0); /* every handle released exactly once */
}

/* Every message exactly once, in order, right length and bytes; every post completed. */
static void
expect_all_delivered(const struct run *r, const struct result *res)
{
	if (!res->done)
		for (int i = 0; i < 2; i++)
			for (unsigned k = 0; k < sl_xport_stat_table.n; k++)
				if (sl_stat_get(&res->x[i], &sl_xport_stat_table.desc[k]))
					print_error("side %d %s %" PRIu64 "\n", i,
						    sl_xport_stat_table.desc[k].name,
						    sl_stat_get(&res->x[i],
								&sl_xport_stat_table.desc[k]));
	if (!res->done)
		print_error("%s mode %u loss %.3f: not done by %" PRIu64 " ns: a %" PRIu64
			    "/%" PRIu64 " b %" PRIu64 "/%" PRIu64 "\n",
			    r->proto, r->recv_mode, r->loss, res->end_ns, res->t[0].checked,
			    res->t[0].completed, res->t[1].checked, res->t[1].completed);
	assert_true(res->done);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(res->t[i].posted, r->msgs * nqps(r));
		assert_int_equal(res->t[i].completed, r->msgs * nqps(r));
		assert_int_equal(res->t[i].received, r->msgs * nqps(r));
		assert_int_equal(res->t[i].checked, r->msgs * nqps(r));
		assert_int_equal(res->t[i].out_of_order, 0);
		assert_int_equal(res->t[i].bad_length, 0);
		assert_int_equal(res->t[i].bad_content, 0);
		assert_int_equal(res->x[i].rx_bad_sequence, 0);
		assert_int_equal(res->t[i].bytes_received, res->t[1 - i].bytes_completed);
	}
}

static void
xport__every_program_lossless_no_retransmission(void **state)
{
	(void)state;
	for (unsigned i = 0; i < sl_proto_count(); i++) {
		struct run r = {.proto = sl_proto_at(i)->name,
				.recv_mode = SL_RECV_MELO,
				.min_bytes = 1,
				.max_bytes = 65536,
				.msgs = 200,
				.seed = 11 + i};
		struct result res;

		run_pair(&r, &res);
		expect_all_delivered(&r, &res);
		assert_int_equal(res.recovery.count, 0); /* in order: no gap ever opened */
		/* Nothing lost: nothing resent (the link-reliability contract). */
		if (res.rtx)
			print_error("%s: %" PRIu64 " retransmissions on a lossless wire\n", r.proto,
				    res.rtx);
		assert_int_equal(res.rtx, 0);
	}
}

/*
 * A port that cannot send for a while (a link replaying or paused) while data keeps arriving:
 * b's feedback outgrows the endpoint's ring of frames, and none of it may be lost. Two shapes,
 * every program, RTO 20 ms, nothing lost on the wire, so no retransmission:
 *   - b stalls for the first 2 ms, and a's 4 messages on each of 320 QPs (less than a window
 *     each; the ring coalesces each QP's in-order ACKs into one frame, and 320 QPs are more than
 *     its 256 frames) arrive inside the stall: the newest ACKs are the ones past the ring, and
 *     nothing after them would repair their loss before the RTO;
 *   - b stalls 1 ms of every 3 ms under 200 messages per QP: held feedback merges, again and
 *     again, with everything the programs read from it.
 * (A window program sends little before its first ACK and NDP only what b's PULLs grant, so
 * their ring does not always fill; the others' does.)
 */
static void
xport__feedback_outlives_a_stalled_port(void **state)
{
	static const struct {
		uint64_t stall_ns, every_ns, msgs;
		uint32_t qps, max_bytes;
	} shape[] = {
		{2 * SL_NS_PER_MS, SL_NS_PER_S, 4, 320, 16384},
		{SL_NS_PER_MS, 3 * SL_NS_PER_MS, 200, QPS, 65536},
	};
	uint64_t held = 0;

	(void)state;
	for (unsigned k = 0; k < SL_ARRAY_SIZE(shape); k++) {
		for (unsigned i = 0; i < sl_proto_count(); i++) {
			struct run r = {.proto = sl_proto_at(i)->name,
					.recv_mode = SL_RECV_MELO,
					.rto_ns = 20 * SL_NS_PER_MS,
					.stall_ns = shape[k].stall_ns,
					.stall_every_ns = shape[k].every_ns,
					.qps = shape[k].qps,
					.min_bytes = 1,
					.max_bytes = shape[k].max_bytes,
					.msgs = shape[k].msgs,
					.seed = 61 + i};
			struct result res;

			run_pair(&r, &res);
			expect_all_delivered(&r, &res);
			print_message(
				"stall %" PRIu64 " us every %" PRIu64 " us, %s: b held %" PRIu64
				" feedback frames, merged %" PRIu64 "\n",
				shape[k].stall_ns / SL_NS_PER_US, shape[k].every_ns / SL_NS_PER_US,
				r.proto, res.x[1].fb_held, res.x[1].fb_merged);
			held += res.x[1].fb_held;
			if (res.rtx)
				print_error("%s: %" PRIu64 " retransmissions with nothing lost\n",
					    r.proto, res.rtx);
			assert_int_equal(res.rtx, 0);
		}
	}
	assert_true(held > 0); /* the ring did fill */
}

/*
 * Run r for every registered program (its seed + the program's index), in the receiver modes
 * [r.recv_mode, last_mode], each run's messages all delivered, then check(r, result).
 */
static void
every_program(struct run r, uint8_t last_mode,
	      void (*check)(const struct run *r, const struct result *res))
{
	for (unsigned i = 0; i < sl_proto_count(); i++) {
		for (uint8_t mode = r.recv_mode; mode <= last_mode; mode++) {
			struct run ri = r;
			struct result res;

			ri.proto = sl_proto_at(i)->name;
			ri.recv_mode = mode;
			ri.seed = r.seed + i;
			run_pair(&ri, &res);
			expect_all_delivered(&ri, &res);
			if (check)
				check(&ri, &res);
		}
	}
}

/* Every run resent something, and its gaps were repaired no sooner than a wire delay. */
static void
expect_repaired(const struct run *r, const struct result *res)
{
	(void)r;
	assert_true(res->rtx > 0);
	assert_true(res->recovery.count > 0);
	assert_true(sl_hist_quantile(&res->recovery, 0.5) >= WIRE_DELAY_NS);
}

static void
xport__every_program_one_percent_loss(void **state)
{
	(void)state;
	every_program((struct run){.recv_mode = SL_RECV_MELO,
				   .loss = 0.01,
				   .min_bytes = 1,
				   .max_bytes = 65536,
				   .msgs = 200,
				   .seed = 101},
		      SL_RECV_GBN, expect_repaired);
}

/*
 * MELO at 2 % loss each way, RTO 20 ms: a retransmission is lost as often as any packet, and the
 * sender sees it by send order (a later NACK still names the hole after an arrival sent after
 * its repair) and resends it at once, so no recovery waits for the RTO but the transfer's last
 * packets' (nothing after them shows their loss): p99 of loss to delivery under 1 ms, a twentieth
 * of the RTO. Without the rule each lost retransmission took the RTO.
 */
static void
xport__a_lost_retransmission_is_resent_without_the_rto(void **state)
{
	struct run r = {.proto = "melo",
			.recv_mode = SL_RECV_MELO,
			.loss = 0.02,
			.rto_ns = 20 * SL_NS_PER_MS,
			.min_bytes = 1024,
			.max_bytes = 65536,
			.msgs = 400,
			.seed = 7};
	struct result res;

	(void)state;
	run_pair(&r, &res);
	expect_all_delivered(&r, &res);
	print_message("lost retransmissions resent: %" PRIu64 " PSNs, RTOs %" PRIu64
		      ", recovery p50 %" PRIu64 " us, p99 %" PRIu64 " us over %" PRIu64 "\n",
		      res.relost, res.rtos, sl_hist_quantile(&res.recovery, 0.5) / SL_NS_PER_US,
		      sl_hist_quantile(&res.recovery, 0.99) / SL_NS_PER_US, res.recovery.count);
	assert_true(res.relost > 0);
	assert_true(sl_hist_quantile(&res.recovery, 0.99) < SL_NS_PER_MS);
}

/* Both ends refused messages for now and sent them again; nothing failed for good. */
static void
expect_refused_for_now(const struct run *r, const struct result *res)
{
	(void)r;
	for (int k = 0; k < 2; k++) {
		assert_true(res->x[k].rx_rnr > 0);
		assert_true(res->x[k].rnr_resends > 0);
		assert_int_equal(res->x[k].qps_failed, 0);
		assert_int_equal(res->x[k].rx_refused, 0);
	}
}

/*
 * Consumers with no room (RNR) for 5 % of the messages, on top of 1 % loss and reordering, for
 * every program and both receiver modes: each refused message is forgotten with what followed
 * it and sent again after a backoff, and every message still arrives exactly once, in order,
 * intact, and completes successfully; no QP fails.
 */
static void
xport__messages_refused_for_now_arrive_once_in_order(void **state)
{
	(void)state;
	every_program((struct run){.recv_mode = SL_RECV_MELO,
				   .loss = 0.01,
				   .reorder = 0.01,
				   .rnr = 0.05,
				   .min_bytes = 1,
				   .max_bytes = 16384,
				   .msgs = 200,
				   .seed = 31},
		      SL_RECV_GBN, expect_refused_for_now);
}

static void
xport__reorder_duplicate_and_loss(void **state)
{
	(void)state;
	every_program((struct run){.recv_mode = SL_RECV_MELO,
				   .loss = 0.005,
				   .dup = 0.01,
				   .reorder = 0.02,
				   .min_bytes = 1,
				   .max_bytes = 16384,
				   .msgs = 200,
				   .seed = 7},
		      SL_RECV_MELO, NULL);
}

static void
xport__hostile_frames_are_counted_and_dropped(void **state)
{
	(void)state;
	for (unsigned i = 0; i < sl_proto_count(); i++) {
		struct run r = {.proto = sl_proto_at(i)->name,
				.recv_mode = SL_RECV_MELO,
				.loss = 0.005,
				.hostile = 0.05,
				.min_bytes = 1,
				.max_bytes = 16384,
				.msgs = 200,
				.seed = 31 + i};
		struct result res;

		run_pair(&r, &res);
		expect_all_delivered(&r, &res);
		for (int k = 0; k < 2; k++)
			assert_true(res.x[k].rx_bad_header + res.x[k].rx_bad_qpn +
					    res.x[k].rx_fb_out_of_range >
				    0);
	}
}

/* A thousand QPs each way on one endpoint pair, each delivering its messages; the memory an
 * idle QP costs is printed. */
static void
xport__a_thousand_qps(void **state)
{
	struct run r = {.proto = "dcqcn",
			.recv_mode = SL_RECV_MELO,
			.loss = 0.001,
			.min_bytes = 1,
			.max_bytes = 4096,
			.msgs = 5,
			.qps = 1000,
			.seed = 5};
	struct result res;
	struct sl_xport_conf xc = {.max_qps = 1000, .frame = frame_bytes, .release = frame_release};
	struct sl_xport *x = sl_xport_create(&xc);

	(void)state;
	assert_non_null(x);
	print_message("{\"qps\": 1000, \"bytes_per_qp\": %zu}\n", sl_xport_bytes_per_qp(x));
	sl_xport_free(x);
	run_pair(&r, &res);
	expect_all_delivered(&r, &res);
}

static uint64_t
xstat_qps_failed(const struct side *s)
{
	return SL_STAT_READ(sl_xport_stats_get, struct sl_xport_stats, s->x, qps_failed);
}

/* Step both sides from *now until done(s) or limit_ns; true when done. */
static bool
run_until(struct side *s, struct wire *w, uint64_t *now, uint64_t limit_ns,
	  bool (*done)(struct side *s))
{
	for (; *now < limit_ns; *now += STEP_NS) {
		side_step(&s[0], &w[1], &w[0], *now, WIRE_PKTS_PER_STEP);
		side_step(&s[1], &w[0], &w[1], *now, WIRE_PKTS_PER_STEP);
		if (done(s))
			return true;
	}
	return false;
}

static bool
both_failed(struct side *s)
{
	return xstat_qps_failed(&s[0]) == QPS && xstat_qps_failed(&s[1]) == QPS;
}

static bool
both_checked_all(struct side *s)
{
	for (int i = 0; i < 2; i++) {
		struct sl_traffic_msg_stats st;

		sl_traffic_msg_stats_get(s[i].t, &st);
		if (!sl_traffic_msg_done(s[i].t) || st.checked < (uint64_t)QPS * 100)
			return false;
	}
	return true;
}

static bool
running_a_while(struct side *s)
{
	struct sl_traffic_msg_stats st;

	sl_traffic_msg_stats_get(s[0].t, &st);
	return st.checked >= 20;
}

/*
 * Both sides start r's traffic (the wires seeded from wire_seed), run a while, then side 1
 * restarts mid-stream (its endpoint freed and created again, its QPs from a new initial PSN;
 * frames in flight stay on the wire), until both sides' QPs have failed.
 */
static void
start_then_restart_side_1(struct side s[2], struct wire w[2], const struct run *r,
			  uint64_t wire_seed, uint64_t *now)
{
	for (int k = 0; k < 2; k++) {
		memset(&w[k], 0, sizeof(w[k]));
		sl_rng_seed(&w[k].rng, wire_seed + (uint64_t)k);
		side_init(&s[k], r, 0, 0);
	}
	assert_true(run_until(s, w, now, SL_NS_PER_S, running_a_while));
	sl_xport_free(s[1].x);
	sl_traffic_msg_free(s[1].t);
	side_init(&s[1], r, 1, *now);
	assert_true(run_until(s, w, now, *now + SL_NS_PER_S, both_failed));
}

/*
 * A peer restarted mid-stream (endpoint freed and created again; its QPs start afresh from a new
 * initial PSN, as a connection manager gives each incarnation): no message is delivered twice;
 * the survivor's QPs, acknowledged no more, fail after their timeout and report every message not
 * acknowledged as failed (-ETIMEDOUT), so each posted message is either completed or failed; the
 * restarted side's QPs fail the same way; and once both sides close and reopen their QPs (a new
 * incarnation), messages flow again, every one checked.
 */
static void
xport__peer_restart_fails_qps_and_the_survivor_goes_on(void **state)
{
	static struct wire w[2];

	(void)state;
	for (unsigned i = 0; i < sl_proto_count(); i++) {
		struct run r = {.proto = sl_proto_at(i)->name,
				.recv_mode = SL_RECV_MELO,
				.min_bytes = 1,
				.max_bytes = 16384,
				.msgs = 100,
				.qp_timeout_ns = 5 * SL_NS_PER_MS,
				.seed = 51 + i};
		struct side s[2] = {0};
		struct sl_traffic_msg_stats st;
		uint64_t now = 0;

		start_then_restart_side_1(s, w, &r, 77, &now);
		for (int k = 0; k < 2; k++) {
			sl_traffic_msg_stats_get(s[k].t, &st);
			/* Every message posted was completed or reported failed; none twice. */
			assert_int_equal(st.completed + st.failed, st.posted);
			assert_true(k == 1 || st.failed > 0);
			assert_int_equal(st.out_of_order, 0);
			assert_int_equal(st.bad_length, 0);
			assert_int_equal(st.bad_content, 0);
			assert_int_equal(st.checked, st.received);
			assert_int_equal(sl_xport_post_send(s[k].x, 0, "x", 1, 0, now), -EPIPE);
		}
		/* Both close and reopen (a new incarnation, fresh streams): traffic flows again. */
		for (int k = 0; k < 2; k++) {
			for (uint32_t q = 0; q < QPS; q++)
				assert_int_equal(sl_xport_qp_close(s[k].x, q, now), 0);
			sl_traffic_msg_free(s[k].t);
			s[k].t = traffic_new(&r);
			open_qps(&s[k], &r, 2, now);
		}
		assert_true(run_until(s, w, &now, now + SL_NS_PER_S, both_checked_all));
		for (int k = 0; k < 2; k++) {
			sl_traffic_msg_stats_get(s[k].t, &st);
			assert_int_equal(st.checked, (uint64_t)QPS * r.msgs);
			assert_int_equal(st.failed, 0);
		}
		print_message("{\"proto\": \"%s\", \"restart\": true, \"done_us\": %" PRIu64 "}\n",
			      r.proto, now / SL_NS_PER_US);
		for (int k = 0; k < 2; k++) {
			wire_free(&w[k]);
			sl_xport_free(s[k].x);
			sl_traffic_msg_free(s[k].t);
		}
		assert_int_equal(frames_alive, 0);
	}
}

static bool
both_done(struct side *s)
{
	return sl_traffic_msg_done(s[0].t) && sl_traffic_msg_done(s[1].t);
}

/*
 * The daemon's restart of a session (lib/dp/qp.c, sl_dp_qp_session()) with the same traffic: QPs
 * that failed (the peer restarted and their timeout passed) are closed and reopened, and the
 * traffic told (sl_traffic_msg_qp_restart()). A failed QP refuses the traffic's next post,
 * which then waits for a completion that a failed QP never brings: the restart itself queues the
 * QP again, so it posts the rest of its msgs in the new session (it used to post nothing more:
 * qp-restart-memif-kill stalled with a's stream short of one QP's messages).
 */
static void
xport__traffic_posts_again_after_a_failed_qp_restarts(void **state)
{
	static struct wire w[2];
	struct run r = {.proto = "dcqcn",
			.recv_mode = SL_RECV_MELO,
			.min_bytes = 1,
			.max_bytes = 16384,
			.msgs = 1000, /* more than a send queue holds: some wait to be posted */
			.qp_timeout_ns = 5 * SL_NS_PER_MS,
			.seed = 71};
	struct side s[2] = {0};
	struct sl_traffic_msg_stats st;
	uint64_t now = 0;

	(void)state;
	start_then_restart_side_1(s, w, &r, 79, &now);
	/* The failed QPs' traffic has tried to post and been refused. */
	now += STEP_NS;
	for (int k = 0; k < 2; k++)
		sl_traffic_msg_post(s[k].t, s[k].x, now, 64);
	for (int k = 0; k < 2; k++)
		for (uint32_t q = 0; q < QPS; q++) {
			struct sl_xport_qp_conf qc = qp_conf(&r, q, 2);

			assert_int_equal(sl_xport_qp_close(s[k].x, q, now), 0);
			assert_int_equal(sl_xport_qp_open(s[k].x, &qc, now), 0);
			assert_int_equal(sl_traffic_msg_qp_restart(s[k].t, q), 0);
		}
	assert_true(run_until(s, w, &now, now + SL_NS_PER_S, both_done));
	for (int k = 0; k < 2; k++) {
		sl_traffic_msg_stats_get(s[k].t, &st);
		assert_int_equal(st.posted, (uint64_t)QPS * r.msgs);
		assert_int_equal(st.completed + st.failed, st.posted);
		assert_true(st.failed > 0 && st.completed > 0);
		assert_int_equal(st.out_of_order + st.bad_length + st.bad_content, 0);
	}
	for (int k = 0; k < 2; k++) {
		wire_free(&w[k]);
		sl_xport_free(s[k].x);
		sl_traffic_msg_free(s[k].t);
	}
	assert_int_equal(frames_alive, 0);
}

/* --- WRITE, READ and refusals: an application with memory ------------------------------- */

#define SEG 1024u
#define MIB (1u << 20)
#define MEM_BASE UINT64_C(0x7f0000000000) /* b's address of mem[0] */
#define WRITE_AREA (2 * MIB)              /* mem[0, 2 MiB): WRITEs land here ... */
#define MEM_BYTES (4 * MIB)               /* ... mem[2 MiB, 4 MiB): READs read this */
#define RKEY 0x5eedu
#define PAT_BYTES (2 * MIB)
#define OPS_MAX 4096u

/* One message a posts, and what became of it. */
struct op_rec {
	struct sl_xport_wr wr;
	const uint8_t *src; /**< the bytes it carries (READ: b's memory at raddr) */
	uint32_t rx_bytes;  /**< bytes b was given (SEND, WRITE) or a was (READ) */
	uint32_t segs;      /**< segments given */
	bool delivered;     /**< its last segment was given */
	bool completed;
	int status;
};

struct app {
	struct op_rec op[OPS_MAX];
	unsigned nops, nposted, ncompleted;
	uint8_t mem[MEM_BYTES]; /**< b's memory */
	uint8_t pat[PAT_BYTES]; /**< a's bytes to send */
	uint32_t b_next;        /**< the message b expects next (its MSN: a posts all of them) */
	uint32_t a_next;        /**< the READ a expects an answer for next */
	int refuse_op;          /**< b's on_recv (or read_src, for a READ) refuses this one ... */
	uint8_t refuse_syn;     /**< ... with this syndrome (0: none) */
	uint64_t refused_calls; /**< b's calls for the refused message or later */
};

/* b is given message msn (a segment, a READ): is it the one to refuse, or after it? */
static bool
b_refuses(struct app *app, uint32_t msn)
{
	if (!app->refuse_syn || msn < (uint32_t)app->refuse_op)
		return false;
	app->refused_calls++;
	assert_int_equal(msn, app->refuse_op); /* nothing after it is given */
	return true;
}

/* Segment seg of op r, given to its receiver: offset, first / last, immediate, bytes. */
static void
check_seg(struct op_rec *r, const struct sl_xport_rx_seg *seg)
{
	bool last = seg->offset + seg->len == r->wr.len;

	assert_int_equal(seg->offset, r->rx_bytes);
	assert_int_equal(seg->first, seg->offset == 0);
	assert_int_equal(seg->last, last);
	assert_true(seg->len == SEG || last);
	assert_int_equal(seg->has_imm, last && r->wr.has_imm);
	if (seg->has_imm)
		assert_int_equal(seg->imm, r->wr.imm);
	assert_memory_equal(seg->data, r->src + seg->offset, seg->len);
	r->rx_bytes += seg->len;
	r->segs++;
	r->delivered = last;
}

/* b: a SEND or WRITE of a's, in order; a WRITE lands in mem if its key and range are right. */
static int
b_recv(struct app *app, const struct sl_xport_rx_seg *seg)
{
	struct op_rec *r;

	if (b_refuses(app, seg->msn)) {
		assert_true(seg->first); /* nor the rest of it */
		return app->refuse_syn;
	}
	assert_int_equal(seg->msn, app->b_next); /* in order, once */
	r = &app->op[seg->msn];
	assert_int_equal(seg->op, r->wr.op);
	if (r->wr.op == SL_XPORT_OP_WRITE) {
		assert_int_equal(seg->raddr, r->wr.raddr);
		assert_int_equal(seg->rkey, r->wr.rkey);
		assert_int_equal(seg->total_len, r->wr.len);
		if (seg->rkey != RKEY || seg->raddr < MEM_BASE ||
		    seg->raddr - MEM_BASE + seg->total_len > WRITE_AREA)
			return SL_XPORT_SYN_ACCESS;
		memcpy(app->mem + (seg->raddr - MEM_BASE) + seg->offset, seg->data, seg->len);
	} else {
		assert_int_equal(seg->op, SL_XPORT_OP_SEND);
		assert_int_equal(seg->total_len, 0);
	}
	check_seg(r, seg);
	if (seg->last)
		app->b_next = seg->msn + 1;
	return 0;
}

/* a: a piece of the answer to its oldest READ not yet answered. */
static void
a_recv(struct app *app, const struct sl_xport_rx_seg *seg)
{
	uint32_t i = app->a_next;
	struct op_rec *r;

	while (i < app->nops && app->op[i].wr.op != SL_XPORT_OP_READ)
		i++;
	assert_true(i < app->nops);
	r = &app->op[i];
	assert_int_equal(seg->op, SL_XPORT_OP_READ_RESP);
	assert_int_equal(seg->cookie, r->wr.cookie);
	assert_int_equal(seg->total_len, r->wr.len);
	assert_false(r->completed);
	check_seg(r, seg);
	if (seg->last)
		app->a_next = i + 1;
}

static int
app_recv(struct side *s, const struct sl_xport_rx_seg *seg)
{
	if (s->who == 1)
		return b_recv(s->app, seg);
	a_recv(s->app, seg);
	return 0;
}

/* b's memory behind a READ: the key and the READ area, or a refusal. */
static int
read_src(void *ctx, uint32_t qpn, uint64_t raddr, uint32_t rkey, uint32_t len, const uint8_t **src)
{
	static const uint8_t anything[4 * SEG];
	struct side *s = ctx;
	struct app *app = s->app;
	const struct op_rec *r;

	if (app == NULL) { /* neither traffic nor app: every READ is served */
		assert_true(len <= sizeof(anything));
		*src = anything;
		return 0;
	}
	r = &app->op[app->b_next]; /* READs are served in order too */
	assert_int_equal(s->who, 1);
	assert_int_equal(qpn, 0);
	if (b_refuses(app, app->b_next))
		return app->refuse_syn;
	assert_int_equal(r->wr.op, SL_XPORT_OP_READ);
	assert_int_equal(raddr, r->wr.raddr);
	assert_int_equal(rkey, r->wr.rkey);
	assert_int_equal(len, r->wr.len);
	if (rkey != RKEY || raddr < MEM_BASE + WRITE_AREA || raddr - MEM_BASE + len > MEM_BYTES)
		return SL_XPORT_SYN_ACCESS;
	*src = app->mem + (raddr - MEM_BASE);
	app->b_next++;
	return 0;
}

/* a: its messages complete in order, once each; a READ only after its whole answer. */
static void
app_complete(struct side *s, const struct sl_xport_cqe *c)
{
	struct app *app = s->app;
	struct op_rec *r;

	assert_int_equal(s->who, 0);
	assert_int_equal(c->cookie, app->ncompleted); /* in order */
	r = &app->op[c->cookie];
	assert_false(r->completed);
	assert_int_equal(c->op, r->wr.op);
	assert_int_equal(c->len, r->wr.len);
	r->completed = true;
	r->status = c->status;
	app->ncompleted++;
	if (c->status == 0) /* acknowledged: given whole (a READ's answer included) */
		assert_true(r->delivered && r->rx_bytes == r->wr.len);
}

/* Append a message of a's: op, len bytes, with immediate or not; it gets a place and bytes. */
static struct op_rec *
app_add(struct app *app, uint8_t op, uint32_t len, bool imm)
{
	struct op_rec *r = &app->op[app->nops];
	uint32_t i = app->nops++;
	uint64_t raddr = 0;

	assert_true(i < OPS_MAX);
	if (op == SL_XPORT_OP_WRITE) /* anywhere in the WRITE area: each byte lands once */
		raddr = MEM_BASE + (i * UINT64_C(7919)) % (WRITE_AREA - len + 1);
	else if (op == SL_XPORT_OP_READ)
		raddr = MEM_BASE + WRITE_AREA +
			(i * UINT64_C(4111)) % (MEM_BYTES - WRITE_AREA - len + 1);
	r->src = op == SL_XPORT_OP_READ ? app->mem + (raddr - MEM_BASE)
					: app->pat + (i * UINT64_C(4099)) % (PAT_BYTES - len + 1);
	r->wr = (struct sl_xport_wr){.op = op,
				     .has_imm = imm,
				     .imm = imm ? 0xabc00000u + i : 0,
				     .buf = op == SL_XPORT_OP_READ ? NULL : r->src,
				     .len = len,
				     .raddr = raddr,
				     .rkey = op == SL_XPORT_OP_SEND ? 0 : RKEY,
				     .cookie = i};
	return r;
}

static struct app *
app_new(uint64_t seed)
{
	struct app *app = calloc(1, sizeof(*app));
	struct sl_rng rng;

	assert_non_null(app);
	sl_rng_seed(&rng, seed);
	for (uint32_t i = 0; i < PAT_BYTES; i++)
		app->pat[i] = (uint8_t)sl_rng_next(&rng);
	for (uint32_t i = WRITE_AREA; i < MEM_BYTES; i++)
		app->mem[i] = (uint8_t)sl_rng_next(&rng);
	return app;
}

struct app_run {
	const char *proto;         /**< [dcqcn] */
	double loss, dup, reorder; /**< both ways */
	unsigned drop_naks;        /**< b -> a loses this many NAKs first */
	bool drop_answers;         /**< b -> a loses every answer */
	uint64_t qp_timeout_ns;    /**< [default] */
	uint64_t close_at_ns;      /**< a closes its QP then (0: never) */
	uint32_t forge_answer_len; /**< a READ answer ONLY of this many bytes, b's first PSN and
				    *   MSN, reaches a first (0: none) */
	uint64_t seed;
};

struct app_result {
	struct sl_xport_stats x[2];
	struct sl_xport_qp_stats q[2];
	int post_rc; /**< why a stopped posting early (0: it posted everything) */
	uint64_t end_ns;
	bool done; /**< every message a posted completed */
};

/* Into w, due at once: a READ answer ONLY of len bytes with b's first PSN and MSN 0. */
static void
forge_answer(struct wire *w, uint32_t len)
{
	struct sl_xhdr h = {.opcode = SL_XOP_READ_RESP_ONLY, .psn = UINT32_MAX - 40};
	struct frame *f = frame_new(SL_XHDR_BASE_LEN + len);
	int n = sl_xhdr_encode(&h, f->buf, f->len);

	assert_int_equal(n, SL_XHDR_BASE_LEN);
	memset(f->buf + n, 0x77, len);
	f->at_ns = 0;
	w->slot[w->n++] = f;
}

/*
 * Endpoints for s[0] and s[1] with send queues of sq_depth (0: the default) and every callback,
 * QP 0 open on each with qc; the wires between them empty and seeded from seed.
 */
static void
pair_open(struct side *s, struct wire *w, uint32_t sq_depth, const struct sl_xport_qp_conf *qc,
	  uint64_t seed)
{
	for (int i = 0; i < 2; i++) {
		struct sl_xport_conf xc = {.max_qps = 1,
					   .sq_depth = sq_depth,
					   .min_frame_bytes = MIN_FRAME,
					   .frame = frame_bytes,
					   .release = frame_release,
					   .on_recv = on_recv,
					   .read_src = read_src,
					   .on_complete = on_complete,
					   .ctx = &s[i]};

		memset(&w[i], 0, sizeof(w[i]));
		sl_rng_seed(&w[i].rng, seed * 2 + (uint64_t)i);
		s[i].x = sl_xport_create(&xc);
		assert_non_null(s[i].x);
		assert_int_equal(sl_xport_qp_open(s[i].x, qc, 0), 0);
	}
}

/*
 * a and b with one QP each, a posting app's messages as its send queue takes them, until each
 * posted one completed (or 2 s). Counters and every frame handle are accounted for after.
 */
static void
app_run(struct app *app, const struct app_run *ar, struct app_result *res)
{
	static struct wire w[2];
	struct side s[2] = {0};
	uint64_t now = 0;

	struct sl_xport_qp_conf qc = {.proto = ar->proto ? ar->proto : "dcqcn",
				      .seg_bytes = SEG,
				      .send_psn = UINT32_MAX - 40,
				      .recv_psn = UINT32_MAX - 40,
				      .rto_ns = 200 * SL_NS_PER_US,
				      .timeout_ns = ar->qp_timeout_ns};

	memset(res, 0, sizeof(*res));
	for (int i = 0; i < 2; i++) {
		s[i].app = app;
		s[i].who = i;
	}
	pair_open(s, w, 0, &qc, ar->seed);
	for (int i = 0; i < 2; i++) {
		w[i].loss = ar->loss;
		w[i].dup = ar->dup;
		w[i].reorder = ar->reorder;
	}
	w[1].drop_naks = ar->drop_naks;
	w[1].drop_answers = ar->drop_answers;
	if (ar->forge_answer_len)
		forge_answer(&w[1], ar->forge_answer_len);
	for (; now < 2 * SL_NS_PER_S; now += STEP_NS) {
		if (ar->close_at_ns && now == ar->close_at_ns)
			assert_int_equal(sl_xport_qp_close(s[0].x, 0, now), 0);
		while (!res->post_rc && app->nposted < app->nops) {
			int rc = sl_xport_post(s[0].x, 0, &app->op[app->nposted].wr, now);

			if (rc == -ENOBUFS)
				break;
			res->post_rc = rc;
			app->nposted += rc == 0;
		}
		side_step(&s[0], &w[1], &w[0], now, WIRE_PKTS_PER_STEP);
		side_step(&s[1], &w[0], &w[1], now, WIRE_PKTS_PER_STEP);
		if (app->ncompleted == app->nposted && (res->post_rc || app->nposted == app->nops))
			break;
	}
	res->end_ns = now;
	res->done = app->ncompleted == app->nposted;
	for (int i = 0; i < 2; i++) {
		sl_xport_stats_get(s[i].x, &res->x[i]);
		(void)sl_xport_qp_stats_get(s[i].x, 0, &res->q[i]); /* a closed QP reads 0 */
		wire_free(&w[i]);
		sl_xport_free(s[i].x);
	}
	assert_int_equal(frames_alive, 0);
	assert_int_equal(res->x[0].fb_encode_errors, 0);
	assert_int_equal(res->x[1].fb_encode_errors, 0);
}

/* Every message completed with 0, given whole and in order, the right bytes in b's memory. */
static void
expect_all_done(const struct app *app, const struct app_result *res)
{
	assert_true(res->done);
	assert_int_equal(res->post_rc, 0);
	assert_int_equal(app->ncompleted, app->nops);
	for (unsigned i = 0; i < app->nops; i++) {
		const struct op_rec *r = &app->op[i];

		assert_int_equal(r->status, 0);
		assert_true(r->delivered);
	}
	for (int i = 0; i < 2; i++) {
		assert_int_equal(res->x[i].rx_bad_sequence, 0);
		assert_int_equal(res->x[i].rx_refused, 0);
		assert_int_equal(res->x[i].qps_failed, 0);
		assert_int_equal(res->x[i].msgs_failed, 0);
	}
	assert_int_equal(res->x[0].msgs_completed, app->nops);
}

/* The sizes around a segment and far past it. */
static const uint32_t sizes[] = {0, 1, SEG - 1, SEG, SEG + 1, MIB};

/*
 * WRITEs (with and without immediate) and SENDs of every size: each segment carries the
 * message's raddr, rkey and length, its offset and its bytes; the immediate rides on the last;
 * the bytes end up where raddr said.
 */
static void
xport_post__write_and_send_every_size(void **state)
{
	struct app *app = app_new(1);
	struct app_result res;

	(void)state;
	for (unsigned i = 0; i < SL_ARRAY_SIZE(sizes); i++) {
		app_add(app, SL_XPORT_OP_WRITE, sizes[i], false);
		app_add(app, SL_XPORT_OP_WRITE, sizes[i], true);
		app_add(app, SL_XPORT_OP_SEND, sizes[i], true);
	}
	app_run(app, &(struct app_run){.seed = 1}, &res);
	expect_all_done(app, &res);
	for (unsigned i = 0; i < app->nops; i++) {
		const struct op_rec *r = &app->op[i];

		assert_int_equal(r->segs, r->wr.len ? (r->wr.len + SEG - 1) / SEG : 1);
		if (i == app->nops - 2) /* the last WRITE (1 MiB): nothing landed over it */
			assert_memory_equal(app->mem + (r->wr.raddr - MEM_BASE), r->src, r->wr.len);
	}
	assert_int_equal(res.x[1].msgs_received, app->nops);
	free(app);
}

/* READs of every size: the answer's bytes are b's memory, and each completes after them. */
static void
xport_post__read_every_size(void **state)
{
	struct app *app = app_new(2);
	struct app_result res;

	(void)state;
	for (unsigned i = 1; i < SL_ARRAY_SIZE(sizes); i++)
		app_add(app, SL_XPORT_OP_READ, sizes[i], false);
	app_add(app, SL_XPORT_OP_SEND, 5, false); /* after the READs, in order */
	app_run(app, &(struct app_run){.seed = 2}, &res);
	expect_all_done(app, &res);
	assert_int_equal(res.x[1].reads_served, SL_ARRAY_SIZE(sizes) - 1);
	assert_int_equal(res.x[0].msgs_received, SL_ARRAY_SIZE(sizes) - 1); /* the answers */
	free(app);
}

/* An endpoint with no peer and no callbacks, its QP 0 open (of max_qps 1). */
static struct sl_xport *
lone_endpoint(void)
{
	struct sl_xport_conf xc = {.max_qps = 1, .frame = frame_bytes, .release = frame_release};
	struct sl_xport_qp_conf qc = {.proto = "dcqcn", .seg_bytes = SEG};
	struct sl_xport *x = sl_xport_create(&xc);

	assert_non_null(x);
	assert_int_equal(sl_xport_qp_open(x, &qc, 0), 0);
	return x;
}

/* Invalid posts: a READ of nothing or with immediate, an unknown op, no bytes to send. */
static void
xport_post__refuses_bad_requests(void **state)
{
	struct app *app = app_new(3);
	struct sl_xport *x = lone_endpoint();
	struct sl_xport_wr wr = {.op = SL_XPORT_OP_READ, .len = 0, .raddr = MEM_BASE};

	(void)state;
	assert_int_equal(sl_xport_post(x, 1, &wr, 0), -ENOENT);
	assert_int_equal(sl_xport_post(x, 0, &wr, 0), -EINVAL);
	wr.len = 8;
	wr.has_imm = true;
	assert_int_equal(sl_xport_post(x, 0, &wr, 0), -EINVAL);
	wr.op = SL_XPORT_OP_READ_RESP;
	wr.has_imm = false;
	assert_int_equal(sl_xport_post(x, 0, &wr, 0), -EINVAL);
	wr.op = SL_XPORT_OP_WRITE; /* 8 bytes from nowhere */
	assert_int_equal(sl_xport_post(x, 0, &wr, 0), -EINVAL);
	wr.len = SL_XPORT_MSG_MAX + 1;
	wr.buf = app->pat;
	assert_int_equal(sl_xport_post(x, 0, &wr, 0), -EINVAL);
	wr.len = 0;
	wr.buf = NULL;
	assert_int_equal(sl_xport_post(x, 0, &wr, 0), 0); /* an empty WRITE is one */
	assert_int_equal(sl_xport_post_send(x, 0, NULL, 0, 0, 0), 0);
	sl_xport_free(x);
	free(app);
}

/*
 * A QP whose port never has room (tx_burst is never called, so no resend is built) still
 * fails once nothing was acknowledged for its timeout: sl_xport_expire, not before, and only
 * a QP with messages out.
 */
static void
xport_expire__fails_a_qp_that_could_not_send(void **state)
{
	struct sl_xport *x = lone_endpoint();
	struct sl_xport_stats st;
	uint64_t t0 = SL_NS_PER_MS, timeout = SL_XPORT_QP_TIMEOUT_NS;

	(void)state;
	assert_int_equal(sl_xport_expire(x, 10 * timeout), 0); /* nothing out: nothing to fail */
	assert_int_equal(sl_xport_post_send(x, 0, NULL, 0, 0, t0), 0);
	assert_int_equal(sl_xport_expire(x, t0 + timeout - 1), 0);
	assert_int_equal(sl_xport_expire(x, t0 + timeout), 1);
	assert_int_equal(sl_xport_expire(x, t0 + 2 * timeout), 0); /* failed once */
	sl_xport_stats_get(x, &st);
	assert_int_equal(st.qps_failed, 1);
	assert_int_equal(sl_xport_post_send(x, 0, NULL, 0, 0, t0 + timeout), -EPIPE);
	sl_xport_free(x);
}

/*
 * Random SEND / WRITE / READ sequences (sizes 0 to 5 segments, immediates) under 1 % loss,
 * duplication and reordering, several programs and seeds: every message given exactly once,
 * in order, and every completion status 0.
 */
static void
xport_post__mixed_under_loss_duplication_and_reordering(void **state)
{
	static const char *const protos[] = {"dcqcn", "irn", "reno", "swift"};

	(void)state;
	for (uint64_t seed = 1; seed <= 6; seed++) {
		struct app *app = app_new(seed);
		struct app_result res;
		struct sl_rng rng;
		unsigned n[3] = {0};

		sl_rng_seed(&rng, seed + 1000);
		for (unsigned i = 0; i < 600; i++) {
			uint8_t op = (uint8_t)sl_rng_below(&rng, 3);
			uint32_t len = (uint32_t)sl_rng_below(&rng, 5 * SEG + 1);

			if (op == SL_XPORT_OP_READ && len == 0)
				len = 1;
			app_add(app, op, len, op != SL_XPORT_OP_READ && sl_rng_below(&rng, 2));
			n[op]++;
		}
		app_run(app,
			&(struct app_run){.proto = protos[seed % SL_ARRAY_SIZE(protos)],
					  .loss = 0.01,
					  .dup = 0.01,
					  .reorder = 0.01,
					  .seed = seed},
			&res);
		print_message("{\"mixed\": %" PRIu64 ", \"proto\": \"%s\", \"done_us\": %" PRIu64
			      ", \"sends\": %u, \"writes\": %u, \"reads\": %u, \"rtx\": %" PRIu64
			      "}\n",
			      seed, protos[seed % SL_ARRAY_SIZE(protos)], res.end_ns / SL_NS_PER_US,
			      n[0], n[1], n[2], res.x[0].tx_rtx + res.x[1].tx_rtx);
		expect_all_done(app, &res);
		assert_int_equal(res.x[1].reads_served, n[SL_XPORT_OP_READ]);
		assert_true(res.x[0].tx_rtx + res.x[1].tx_rtx > 0); /* the loss was felt */
		free(app);
	}
}

/*
 * b refuses message k of n (on_recv returns SL_XPORT_SYN_ACCESS at its first segment): a's
 * messages before k complete with 0, k with -EACCES, the rest with -ECANCELED; b gave nothing
 * of k's after the refusal nor anything later; a's QP failed. The same with the first NAK (or
 * the first three) lost, and under 1 % loss.
 */
static void
xport_post__refusal_fails_that_message_and_cancels_the_rest(void **state)
{
	static const struct {
		unsigned drop_naks;
		double loss;
	} how[] = {{0, 0}, {1, 0}, {3, 0}, {0, 0.01}, {2, 0.01}};

	(void)state;
	for (unsigned h = 0; h < SL_ARRAY_SIZE(how); h++) {
		for (unsigned k = 0; k < 40; k += 13) {
			struct app *app = app_new(h * 100 + k);
			struct app_result res;

			for (unsigned i = 0; i < 40; i++)
				app_add(app, i % 2 ? SL_XPORT_OP_WRITE : SL_XPORT_OP_SEND,
					(i * 977) % (3 * SEG), i % 3 == 0);
			app->refuse_op = (int)k;
			app->refuse_syn = SL_XPORT_SYN_ACCESS;
			app_run(app,
				&(struct app_run){.loss = how[h].loss,
						  .drop_naks = how[h].drop_naks,
						  .seed = 10 + h},
				&res);
			assert_true(res.done);
			assert_int_equal(app->ncompleted, app->nposted);
			for (unsigned i = 0; i < app->nposted; i++)
				assert_int_equal(app->op[i].status, i < k    ? 0
								    : i == k ? -EACCES
									     : -ECANCELED);
			assert_int_equal(app->refused_calls, 1);
			assert_int_equal(app->b_next, k);
			assert_int_equal(res.post_rc, app->nposted < app->nops ? -EPIPE : 0);
			assert_int_equal(res.x[1].rx_refused, 1);
			assert_int_equal(res.q[1].refusals, 1);
			assert_true(res.q[1].naks_sent > how[h].drop_naks);
			assert_int_equal(res.x[1].tx_nak, res.q[1].naks_sent);
			assert_true(res.q[0].naks_received >= 1);
			assert_int_equal(res.x[0].rx_nak, res.q[0].naks_received);
			assert_int_equal(res.x[0].qps_failed, 1);
			free(app);
		}
	}
}

/* A WRITE with a key b does not know, a READ b's read_src refuses: -EACCES at a. */
static void
xport_post__bad_key_and_read_src_refusal(void **state)
{
	static const uint8_t ops[] = {SL_XPORT_OP_WRITE, SL_XPORT_OP_READ};

	(void)state;
	for (unsigned o = 0; o < SL_ARRAY_SIZE(ops); o++) {
		struct app *app = app_new(o + 40);
		struct app_result res;

		for (unsigned i = 0; i < 12; i++)
			app_add(app, i == 5 ? ops[o] : SL_XPORT_OP_SEND, 3000, false);
		app->op[5].wr.rkey = RKEY + 1;
		app_run(app, &(struct app_run){.seed = 40 + o}, &res);
		assert_true(res.done);
		for (unsigned i = 0; i < app->nposted; i++)
			assert_int_equal(app->op[i].status, i < 5    ? 0
							    : i == 5 ? -EACCES
								     : -ECANCELED);
		assert_int_equal(app->b_next, 5);
		assert_int_equal(res.x[1].rx_refused, 1);
		assert_int_equal(res.x[1].reads_served, 0);
		free(app);
	}
}

/*
 * SL_XPORT_READS_MAX READs out at most: one more is refused (-ENOBUFS, post_refused), each
 * completes, and then READs go on.
 */
static void
xport_post__reads_max(void **state)
{
	struct app *app = app_new(50);
	struct sl_xport *x = lone_endpoint();
	struct app_result res;
	struct sl_xport_stats st;

	(void)state;
	for (unsigned i = 0; i < 3 * SL_XPORT_READS_MAX; i++)
		app_add(app, SL_XPORT_OP_READ, 2 * SEG, false);
	for (unsigned i = 0; i < SL_XPORT_READS_MAX; i++)
		assert_int_equal(sl_xport_post(x, 0, &app->op[i].wr, 0), 0);
	assert_int_equal(sl_xport_post(x, 0, &app->op[0].wr, 0), -ENOBUFS);
	assert_int_equal(sl_xport_post_send(x, 0, "s", 1, 0, 0), 0); /* SENDs still go */
	sl_xport_stats_get(x, &st);
	assert_int_equal(st.post_refused, 1);
	sl_xport_free(x);
	app_run(app, &(struct app_run){.seed = 50}, &res);
	expect_all_done(app, &res);
	assert_true(res.x[0].post_refused > 0); /* a had to wait for completions */
	free(app);
}

/*
 * A READ whose answer never comes (b -> a loses every answer): the request is acknowledged,
 * nothing more happens, and the QP timeout fails the QP (-ETIMEDOUT) at about timeout_ns
 * after the last progress; the endpoint's deadline said when.
 */
static void
xport_post__timeout_while_a_read_waits(void **state)
{
	struct app *app = app_new(60);
	struct app_result res;

	(void)state;
	app_add(app, SL_XPORT_OP_SEND, 100, false);
	app_add(app, SL_XPORT_OP_READ, 3 * SEG, false);
	app_add(app, SL_XPORT_OP_SEND, 100, false);
	app_run(app,
		&(struct app_run){
			.drop_answers = true, .qp_timeout_ns = 5 * SL_NS_PER_MS, .seed = 60},
		&res);
	assert_true(res.done);
	assert_int_equal(app->op[0].status, 0);
	assert_int_equal(app->op[1].status, -ETIMEDOUT);
	assert_int_equal(app->op[2].status, -ETIMEDOUT); /* completions stay in order */
	assert_int_equal(res.x[0].qps_failed, 1);
	assert_true(res.end_ns >= 5 * SL_NS_PER_MS && res.end_ns < 6 * SL_NS_PER_MS);
	assert_int_equal(res.x[0].tx_rtx, 0); /* nothing to resend: the timer did it */
	free(app);
}

/* Closing a QP with WRITEs and READs out cancels each of them (-ECANCELED), in order. */
static void
xport_qp_close__flushes_reads(void **state)
{
	struct app *app = app_new(70);
	struct app_result res;

	(void)state;
	for (unsigned i = 0; i < 8; i++)
		app_add(app, i % 2 ? SL_XPORT_OP_READ : SL_XPORT_OP_WRITE, 64 * SEG, false);
	app_run(app, &(struct app_run){.close_at_ns = 40 * SL_NS_PER_US, .seed = 70}, &res);
	assert_true(res.done);
	assert_int_equal(app->nposted, app->nops);
	for (unsigned i = 0; i < app->nops; i++)
		assert_int_equal(app->op[i].status, -ECANCELED);
	free(app);
}

/*
 * Both sides post a READ and three SENDs over and over into send queues of 4: each queue fills
 * with messages that cannot complete before the READ at their head is answered, and each
 * answer needs a slot at the peer. The slots only answers use get every answer out; without
 * them both QPs would wait for each other until their timeout.
 */
static void
xport_post__answers_never_wait_behind_full_send_queues(void **state)
{
	static struct wire w[2];
	static uint8_t buf[3 * SEG];
	struct side s[2] = {0};
	unsigned posted[2] = {0};
	struct sl_xport_qp_conf qc = {.proto = "dcqcn", .seg_bytes = SEG};
	uint64_t now;

	(void)state;
	pair_open(s, w, 4, &qc, 45);
	for (now = 0; now < 100 * SL_NS_PER_MS; now += STEP_NS) {
		for (int i = 0; i < 2; i++) {
			while (posted[i] < 200) {
				struct sl_xport_wr wr = {
					.op = posted[i] % 4 ? SL_XPORT_OP_SEND : SL_XPORT_OP_READ,
					.buf = posted[i] % 4 ? buf : NULL,
					.len = posted[i] % 4 ? sizeof(buf) : 2 * SEG};

				if (sl_xport_post(s[i].x, 0, &wr, now) != 0)
					break;
				posted[i]++;
			}
		}
		side_step(&s[0], &w[1], &w[0], now, WIRE_PKTS_PER_STEP);
		side_step(&s[1], &w[0], &w[1], now, WIRE_PKTS_PER_STEP);
		if (s[0].ok == 200 && s[1].ok == 200)
			break;
	}
	print_message("{\"full_queues_done_us\": %" PRIu64 "}\n", now / SL_NS_PER_US);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(s[i].ok, 200);
		assert_int_equal(s[i].failed, 0);
		wire_free(&w[i]);
		sl_xport_free(s[i].x);
	}
	assert_int_equal(frames_alive, 0);
}

/*
 * Answers a did not ask for: one when no READ waits (as long as a's first message, a SEND), one
 * shorter than the READ waiting (forged ahead of b's real answer). a refuses each (rx_bad_answer),
 * gives none of it to on_recv, and NAKs b; a NAK naming no message of b's is refused there, one
 * naming b's answer fails b's QP. a's READ, never answered, fails at the QP timeout; its SENDs are
 * unaffected.
 */
static void
xport_rx__answers_that_match_no_read_are_refused(void **state)
{
	static const uint8_t op0[] = {SL_XPORT_OP_SEND, SL_XPORT_OP_READ};

	(void)state;
	for (unsigned k = 0; k < SL_ARRAY_SIZE(op0); k++) {
		struct app *app = app_new(80 + k);
		struct app_result res;

		app_add(app, op0[k], 100, false);
		for (unsigned i = 0; i < 5; i++)
			app_add(app, SL_XPORT_OP_SEND, 2 * SEG, false);
		app_run(app,
			&(struct app_run){.forge_answer_len = k ? 50 : 100, /* 100: op 0's */
					  .qp_timeout_ns = 5 * SL_NS_PER_MS,
					  .seed = 80 + k},
			&res);
		assert_true(res.done);
		assert_int_equal(res.x[0].rx_bad_answer, 1);
		assert_int_equal(res.x[0].rx_refused, 1);
		assert_true(res.x[0].tx_nak >= 1);
		for (unsigned i = 0; i < app->nops; i++)
			assert_int_equal(app->op[i].status, k == 1 ? -ETIMEDOUT : 0);
		if (k == 0) {
			assert_true(res.x[1].rx_fb_out_of_range >= 1); /* b has no message 0 */
			assert_int_equal(res.x[1].qps_failed, 0);
		} else {
			assert_int_equal(res.x[1].qps_failed, 1); /* its answer was refused */
			assert_false(app->op[0].delivered);
		}
		free(app);
	}
}

/*
 * The endpoint-congestion receive mode (lib/ec, Chong and Krishnan's target): both endpoints' hosts
 * drain their target queue (81 KiB, 9 KiB threshold) at 6 Gbit/s while the wire brings about 16.
 * Messages of 1 B to 16 KiB both ways, all delivered exactly once, in order, content-checked, and
 * every frame handle released (also those still queued when the endpoints are freed).
 *   - dack over a DACK-sending target, one QP, 64 KiB outstanding at most: the DACKs hold the
 *     queue under its capacity, so no EC drop and no retransmission;
 *   - opt over a plain go-back-N target, three QPs of 64 KiB each into the same queue: it
 *     overflows, the target drops and NACKs, and opt resends (the paper's waste);
 *   - an EC QP on an endpoint without a target is refused.
 */
static void
xport__ec_target_dacks_throttle_and_opt_overflows(void **state)
{
	struct run r = {.recv_mode = SL_XPORT_RECV_EC,
			.min_bytes = 1,
			.max_bytes = 16384,
			.msgs = 300,
			.seed = 41,
			.ec_drain_bps = 6 * SL_BPS_PER_GBPS,
			.opt_bytes = 64 * 1024,
			.rto_ns = SL_NS_PER_MS};
	struct result res;

	(void)state;
	r.proto = "dack";
	r.qps = 1;
	r.ec_policy = true;
	run_pair(&r, &res);
	expect_all_delivered(&r, &res);
	print_message("dack: dacks %" PRIu64 " iacks %" PRIu64 " max_queue %" PRIu64
		      " drop_full %" PRIu64 " rtx %" PRIu64 "\n",
		      res.ec[1].dacks, res.ec[1].iacks, res.ec[1].max_queue_bytes,
		      res.ec[1].drop_full, res.rtx);
	for (int i = 0; i < 2; i++) {
		assert_true(res.ec[i].dacks > 0);
		assert_int_equal(res.ec[i].drop_full, 0);
		assert_int_equal(res.ec[i].drop_order, 0);
		assert_int_equal(res.ec[i].nacks, 0);
		assert_int_equal(res.ec[i].processed, res.ec[i].accepted);
	}
	assert_int_equal(res.rtx, 0);

	r.proto = "opt";
	r.qps = 3;
	r.ec_policy = false;
	run_pair(&r, &res);
	expect_all_delivered(&r, &res);
	print_message("opt: drop_full %" PRIu64 " nacks %" PRIu64 " rtx %" PRIu64 "\n",
		      res.ec[1].drop_full, res.ec[1].nacks, res.rtx);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(res.ec[i].dacks, 0);
		assert_true(res.ec[i].drop_full > 0);
		assert_true(res.ec[i].nacks > 0);
	}
	assert_true(res.rtx > 0);

	{
		struct sl_xport_conf xc = {
			.max_qps = 1, .frame = frame_bytes, .release = frame_release};
		struct sl_xport_qp_conf qc = {
			.proto = "dack", .seg_bytes = 1024, .recv_mode = SL_XPORT_RECV_EC};
		struct sl_xport *x = sl_xport_create(&xc);

		assert_non_null(x);
		assert_int_equal(sl_xport_qp_open(x, &qc, 0), -EINVAL);
		qc.recv_mode = SL_XPORT_RECV_EC + 1;
		assert_int_equal(sl_xport_qp_open(x, &qc, 0), -EINVAL);
		sl_xport_free(x);
		/* The target's selective repeat needs placement, which in-order delivery lacks. */
		xc.ec_drain_bps = SL_BPS_PER_GBPS;
		xc.ec.sr_pkts = 8;
		errno = 0;
		assert_null(sl_xport_create(&xc));
		assert_int_equal(errno, EINVAL);
	}
}

/*
 * A lane's lcore on a shared host: it runs, then is away (descheduled) for a gap drawn uniformly
 * from (0, max_gap_ns], with runs drawn so that the gaps take share of the time. While away, its
 * endpoint does nothing at all: no receive, no send, no posting.
 */
struct lcore {
	struct sl_rng rng;
	double share;
	uint64_t max_gap_ns;
	uint64_t back_ns; /**< away until then */
	uint64_t next_ns; /**< the next gap starts then */
	uint64_t away_ns; /**< time away in all */
};

static bool
lcore_away(struct lcore *c, uint64_t now)
{
	uint64_t gap, run_mean;

	if (now < c->back_ns)
		return true;
	if (c->share <= 0 || now < c->next_ns)
		return false;
	gap = 1 + sl_rng_below(&c->rng, c->max_gap_ns);
	run_mean = (uint64_t)((double)gap * (1 - c->share) / c->share);
	c->back_ns = now + gap;
	c->away_ns += gap;
	c->next_ns = c->back_ns + sl_rng_below(&c->rng, 2 * run_mean + 1);
	return true;
}

struct stall_run {
	double share;        /**< of each side's time away */
	uint64_t max_gap_ns; /**< longest gap */
	uint32_t sq_depth;   /**< messages in flight per QP */
	uint32_t window_pkts;
};

/*
 * The daemon's pacing case (tests/integration/qp/test_qp_pacing.sh limits) in virtual time: a
 * sends 4 KiB messages on 3 reno QPs limited to 10, 100 and 1000 Mbit/s (10 ms of catch-up) to b,
 * both lcores away share of the time. err_out: each QP's rate over [0.5 s, 3 s] on b's side,
 * relative to its limit.
 */
static void
paced_through_stalls(const struct stall_run *r, uint64_t seed, double err_out[3])
{
	static struct wire w[2];
	static const uint64_t limit_bps[] = {10 * SL_BPS_PER_MBPS, 100 * SL_BPS_PER_MBPS,
					     SL_BPS_PER_GBPS};
	struct side s[2] = {0};
	struct lcore cpu[2] = {{.share = r->share, .max_gap_ns = r->max_gap_ns},
			       {.share = r->share, .max_gap_ns = r->max_gap_ns}};
	uint64_t t0 = SL_NS_PER_S / 2, t1 = 3 * SL_NS_PER_S, wire0[3] = {0};
	struct sl_traffic_msg_conf tc = {
		.max_qps = 3, .min_bytes = 4096, .max_bytes = 4096, .seed = seed, .check = true};

	for (int i = 0; i < 2; i++) {
		struct sl_xport_conf xc = {.max_qps = 3,
					   .sq_depth = r->sq_depth,
					   .window_pkts = r->window_pkts,
					   .min_frame_bytes = MIN_FRAME,
					   .line_bps = 10 * SL_BPS_PER_GBPS,
					   .pace_catchup_ns = 10 * SL_NS_PER_MS,
					   .frame = frame_bytes,
					   .release = frame_release,
					   .on_recv = on_recv,
					   .on_complete = on_complete,
					   .ctx = &s[i]};

		memset(&w[i], 0, sizeof(w[i]));
		sl_rng_seed(&w[i].rng, seed * 2 + (uint64_t)i);
		sl_rng_seed(&cpu[i].rng, seed * 7 + (uint64_t)i);
		s[i].t = sl_traffic_msg_create(&tc);
		s[i].x = sl_xport_create(&xc);
		assert_non_null(s[i].t);
		assert_non_null(s[i].x);
		for (uint32_t q = 0; q < 3; q++) {
			struct sl_xport_qp_conf qc = {.qpn = q,
						      .peer_qpn = q,
						      .proto = "reno",
						      .seg_bytes = 1024,
						      .max_rate_bps = limit_bps[q],
						      .rto_ns = SL_NS_PER_S,
						      .timeout_ns = 10 * SL_NS_PER_S};

			assert_int_equal(sl_xport_qp_open(s[i].x, &qc, 0), 0);
			assert_int_equal(sl_traffic_msg_qp(s[i].t, q, q,
							   i == 0 ? SL_TRAFFIC_MSG_SEND
								  : SL_TRAFFIC_MSG_CHECK),
					 0);
		}
	}
	for (uint64_t now = 0; now < t1; now += STEP_NS) {
		for (uint32_t q = 0; q < 3 && now == t0; q++) {
			struct sl_xport_qp_stats qs;

			assert_int_equal(sl_xport_qp_stats_get(s[1].x, q, &qs), 0);
			wire0[q] = qs.wire_bytes_received;
		}
		if (!lcore_away(&cpu[0], now))
			side_step(&s[0], &w[1], &w[0], now, WIRE_PKTS_PER_STEP);
		if (!lcore_away(&cpu[1], now))
			side_step(&s[1], &w[0], &w[1], now, WIRE_PKTS_PER_STEP);
	}
	for (uint32_t q = 0; q < 3; q++) {
		struct sl_traffic_msg_stats ts;
		struct sl_xport_qp_stats qs;
		double bps;

		assert_int_equal(sl_xport_qp_stats_get(s[1].x, q, &qs), 0);
		assert_int_equal(sl_traffic_msg_qp_stats_get(s[1].t, q, &ts), 0);
		assert_int_equal(ts.checked, ts.received); /* in order, right length and bytes */
		bps = (double)(qs.wire_bytes_received - wire0[q]) * 8 / ((double)(t1 - t0) / 1e9);
		err_out[q] = bps / (double)limit_bps[q] - 1;
		print_message("{\"share\": %.2f, \"max_gap_us\": %" PRIu64 ", \"sq_depth\": %u, "
			      "\"window_pkts\": %u, \"qp\": %u, \"limit_mbps\": %" PRIu64
			      ", \"mbps\": %.3f, \"err_pct\": %.3f, \"a_away_pct\": %.1f, "
			      "\"b_away_pct\": %.1f}\n",
			      r->share, r->max_gap_ns / SL_NS_PER_US, r->sq_depth, r->window_pkts,
			      q, limit_bps[q] / SL_BPS_PER_MBPS, bps / 1e6, err_out[q] * 100,
			      100.0 * (double)cpu[0].away_ns / (double)t1,
			      100.0 * (double)cpu[1].away_ns / (double)t1);
	}
	for (int i = 0; i < 2; i++) {
		wire_free(&w[i]);
		sl_xport_free(s[i].x);
		sl_traffic_msg_free(s[i].t);
	}
}

/*
 * Pacing holds while both lcores are away up to 30 % of the time in gaps of up to 6 ms: each
 * QP within 1 % of its limit. A late QP catches up (the pacer's catch-up, 10 ms); one whose
 * messages are all in flight while b is away runs dry on schedule, and idling earns no credit,
 * so the QP's messages in flight must cover its rate over b's gap: a send queue of 512 messages
 * (16.8 ms at 1 Gbit/s) and a window of 2048 packets do. With 128 messages (4.2 ms) the
 * 1 Gbit/s QP falls short once gaps reach 6 ms: that budget, not the pacer, sets the bound.
 */
static void
xport__paced_rates_hold_through_stalls(void **state)
{
	static const struct stall_run holds[] = {
		{.share = 0, .max_gap_ns = SL_NS_PER_MS},
		{.share = 0.2, .max_gap_ns = SL_NS_PER_MS},
		{.share = 0.2, .max_gap_ns = 3 * SL_NS_PER_MS},
		{.share = 0.2, .max_gap_ns = 6 * SL_NS_PER_MS},
		{.share = 0.3, .max_gap_ns = 6 * SL_NS_PER_MS},
	};
	struct stall_run shallow = {.share = 0.2, .max_gap_ns = 6 * SL_NS_PER_MS, 128, 2048};
	double err[3];

	(void)state;
	for (unsigned k = 0; k < SL_ARRAY_SIZE(holds); k++) {
		struct stall_run r = holds[k];

		r.sq_depth = 512;
		r.window_pkts = 2048;
		paced_through_stalls(&r, 1 + k, err);
		for (unsigned q = 0; q < 3; q++)
			assert_true(err[q] >= -0.01 && err[q] <= 0.01);
	}
	paced_through_stalls(&shallow, 1, err);
	assert_true(err[2] < -0.01);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(xport__every_program_lossless_no_retransmission),
		cmocka_unit_test(xport__feedback_outlives_a_stalled_port),
		cmocka_unit_test(xport__paced_rates_hold_through_stalls),
		cmocka_unit_test(xport__every_program_one_percent_loss),
		cmocka_unit_test(xport__a_lost_retransmission_is_resent_without_the_rto),
		cmocka_unit_test(xport__reorder_duplicate_and_loss),
		cmocka_unit_test(xport__messages_refused_for_now_arrive_once_in_order),
		cmocka_unit_test(xport__hostile_frames_are_counted_and_dropped),
		cmocka_unit_test(xport__peer_restart_fails_qps_and_the_survivor_goes_on),
		cmocka_unit_test(xport__traffic_posts_again_after_a_failed_qp_restarts),
		cmocka_unit_test(xport__a_thousand_qps),
		cmocka_unit_test(xport__ec_target_dacks_throttle_and_opt_overflows),
		cmocka_unit_test(xport_post__write_and_send_every_size),
		cmocka_unit_test(xport_post__read_every_size),
		cmocka_unit_test(xport_post__refuses_bad_requests),
		cmocka_unit_test(xport_expire__fails_a_qp_that_could_not_send),
		cmocka_unit_test(xport_post__mixed_under_loss_duplication_and_reordering),
		cmocka_unit_test(xport_post__refusal_fails_that_message_and_cancels_the_rest),
		cmocka_unit_test(xport_post__bad_key_and_read_src_refusal),
		cmocka_unit_test(xport_post__reads_max),
		cmocka_unit_test(xport_post__timeout_while_a_read_waits),
		cmocka_unit_test(xport_qp_close__flushes_reads),
		cmocka_unit_test(xport_post__answers_never_wait_behind_full_send_queues),
		cmocka_unit_test(xport_rx__answers_that_match_no_read_are_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
