/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_xport.c - two transport endpoints joined by an in-memory wire that can lose, duplicate,
 * reorder and damage frames (seeded), with the built-in traffic on both: for every registered
 * transport program and both receiver modes, every message arrives exactly once, in order, with
 * the right length and bytes, and every message posted completes. Hostile frames are counted
 * and dropped without a byte delivered twice.
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
#include "sl_xport_traffic.h"

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
	struct sl_rng rng;
	uint64_t sent, lost;
};

struct side {
	struct sl_xport *x;
	struct sl_xport_traffic *t;
	uint64_t live_frames; /**< handles the endpoint holds or the wire carries */
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

static void
wire_put(struct wire *w, struct frame *f, uint64_t now_ns)
{
	w->sent++;
	if (sl_rng_double(&w->rng) < w->loss) {
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
	sl_xport_traffic_post(s->t, s->x, now_ns, 64);
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
};

struct result {
	struct sl_xport_traffic_stats t[2];
	struct sl_xport_stats x[2];
	uint64_t rtx;
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
static void
open_qps(struct side *s, const struct run *r, uint32_t epoch, uint64_t now)
{
	for (uint32_t q = 0; q < nqps(r); q++) {
		struct sl_xport_qp_conf qc = {.qpn = q,
					      .peer_qpn = q,
					      .proto = r->proto,
					      .seg_bytes = 1024,
					      .recv_mode = r->recv_mode,
					      .first_psn =
						      (UINT32_MAX - 100 * q) + epoch * 0x40000000u,
					      .init_rate_bps = 4 * SL_BPS_PER_GBPS,
					      .rto_ns = r->rto_ns ? r->rto_ns : 200 * SL_NS_PER_US,
					      .timeout_ns = r->qp_timeout_ns};

		if (r->rto_ns && strcmp(r->proto, "irn") == 0)
			qc.param[1] = qc.param[2] = r->rto_ns; /* IRN times out on its own */
		assert_int_equal(sl_xport_qp_open(s->x, &qc, now), 0);
		assert_int_equal(sl_xport_traffic_qp(s->t, q, q, true, true), 0);
	}
}

static struct sl_xport_traffic *
traffic_new(const struct run *r)
{
	struct sl_xport_traffic_conf tc = {.max_qps = nqps(r),
					   .min_bytes = r->min_bytes,
					   .max_bytes = r->max_bytes,
					   .msgs = r->msgs,
					   .seed = r->seed,
					   .check = true};
	struct sl_xport_traffic *t = sl_xport_traffic_create(&tc);

	assert_non_null(t);
	return t;
}

/* An endpoint whose callbacks feed s->t (read at each call, so the traffic can be replaced). */
static int
on_recv(void *ctx, const struct sl_xport_rx_seg *seg, uint64_t now_ns)
{
	return sl_xport_traffic_on_recv(((struct side *)ctx)->t, seg, now_ns);
}

static void
on_complete(void *ctx, const struct sl_xport_cqe *c, uint64_t now_ns)
{
	sl_xport_traffic_on_complete(((struct side *)ctx)->t, c, now_ns);
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
				   .ctx = s};

	s->t = traffic_new(r);
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
	}
	for (; now < limit; now += STEP_NS) {
		for (int i = 0; i < 2 && r->hostile > 0; i++)
			if (sl_rng_double(&w[i].rng) < r->hostile)
				forge(&w[i], now);
		bool stalled = r->stall_every_ns && now % r->stall_every_ns < r->stall_ns;

		side_step(&s[0], &w[1], &w[0], now, WIRE_PKTS_PER_STEP);
		side_step(&s[1], &w[0], &w[1], now, stalled ? 0 : WIRE_PKTS_PER_STEP);
		if (sl_xport_traffic_done(s[0].t) && sl_xport_traffic_done(s[1].t)) {
			struct sl_xport_traffic_stats a, b;

			sl_xport_traffic_stats_get(s[0].t, &a);
			sl_xport_traffic_stats_get(s[1].t, &b);
			if (a.received == r->msgs * nqps(r) && b.received == r->msgs * nqps(r))
				break;
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
		sl_xport_traffic_stats_get(s[i].t, &res->t[i]);
		sl_xport_stats_get(s[i].x, &res->x[i]);
		res->rtx += res->x[i].tx_rtx;
		{ /* the QPs' shares add up to the endpoint's counters */
			struct sl_xport_traffic_stats q;
			uint64_t checked = 0, bytes = 0;

			for (uint32_t k = 0; k < nqps(r); k++) {
				assert_int_equal(sl_xport_traffic_qp_stats_get(s[i].t, k, &q), 0);
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
		sl_xport_traffic_free(s[i].t);
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
 *   - b stalls for the first 2 ms, and a's 10 messages on each of 6 QPs (less than a window
 *     each, more than the ring's worth in all) arrive inside the stall: the newest ACKs are the
 *     ones past the ring, and nothing after them would repair their loss before the RTO;
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
		{2 * SL_NS_PER_MS, SL_NS_PER_S, 24, 6, 16384},
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

static void
xport__every_program_one_percent_loss(void **state)
{
	(void)state;
	for (unsigned i = 0; i < sl_proto_count(); i++) {
		for (uint8_t mode = SL_RECV_MELO; mode <= SL_RECV_GBN; mode++) {
			struct run r = {.proto = sl_proto_at(i)->name,
					.recv_mode = mode,
					.loss = 0.01,
					.min_bytes = 1,
					.max_bytes = 65536,
					.msgs = 200,
					.seed = 101 + i};
			struct result res;

			run_pair(&r, &res);
			expect_all_delivered(&r, &res);
			assert_true(res.rtx > 0);
		}
	}
}

static void
xport__reorder_duplicate_and_loss(void **state)
{
	(void)state;
	for (unsigned i = 0; i < sl_proto_count(); i++) {
		struct run r = {.proto = sl_proto_at(i)->name,
				.recv_mode = SL_RECV_MELO,
				.loss = 0.005,
				.dup = 0.01,
				.reorder = 0.02,
				.min_bytes = 1,
				.max_bytes = 16384,
				.msgs = 200,
				.seed = 7 + i};
		struct result res;

		run_pair(&r, &res);
		expect_all_delivered(&r, &res);
	}
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
		struct sl_xport_traffic_stats st;

		sl_xport_traffic_stats_get(s[i].t, &st);
		if (!sl_xport_traffic_done(s[i].t) || st.checked < (uint64_t)QPS * 100)
			return false;
	}
	return true;
}

static bool
running_a_while(struct side *s)
{
	struct sl_xport_traffic_stats st;

	sl_xport_traffic_stats_get(s[0].t, &st);
	return st.checked >= 20;
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
		struct sl_xport_traffic_stats st;
		uint64_t now = 0;

		for (int k = 0; k < 2; k++) {
			memset(&w[k], 0, sizeof(w[k]));
			sl_rng_seed(&w[k].rng, 77 + (uint64_t)k);
			side_init(&s[k], &r, 0, 0);
		}
		assert_true(run_until(s, w, &now, SL_NS_PER_S, running_a_while));
		/* Side 1 restarts: all its state is gone; frames in flight stay on the wire. */
		sl_xport_free(s[1].x);
		sl_xport_traffic_free(s[1].t);
		side_init(&s[1], &r, 1, now);
		assert_true(run_until(s, w, &now, now + SL_NS_PER_S, both_failed));
		for (int k = 0; k < 2; k++) {
			sl_xport_traffic_stats_get(s[k].t, &st);
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
			sl_xport_traffic_free(s[k].t);
			s[k].t = traffic_new(&r);
			open_qps(&s[k], &r, 2, now);
		}
		assert_true(run_until(s, w, &now, now + SL_NS_PER_S, both_checked_all));
		for (int k = 0; k < 2; k++) {
			sl_xport_traffic_stats_get(s[k].t, &st);
			assert_int_equal(st.checked, (uint64_t)QPS * r.msgs);
			assert_int_equal(st.failed, 0);
		}
		print_message("{\"proto\": \"%s\", \"restart\": true, \"done_us\": %" PRIu64 "}\n",
			      r.proto, now / SL_NS_PER_US);
		for (int k = 0; k < 2; k++) {
			wire_free(&w[k]);
			sl_xport_free(s[k].x);
			sl_xport_traffic_free(s[k].t);
		}
		assert_int_equal(frames_alive, 0);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(xport__every_program_lossless_no_retransmission),
		cmocka_unit_test(xport__feedback_outlives_a_stalled_port),
		cmocka_unit_test(xport__every_program_one_percent_loss),
		cmocka_unit_test(xport__reorder_duplicate_and_loss),
		cmocka_unit_test(xport__hostile_frames_are_counted_and_dropped),
		cmocka_unit_test(xport__peer_restart_fails_qps_and_the_survivor_goes_on),
		cmocka_unit_test(xport__a_thousand_qps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
