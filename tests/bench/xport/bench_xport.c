/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_xport.c - the two reliability layers on one wire and one load (docs/transport.md,
 * "Link replay against end-to-end recovery"), as JSON lines.
 *
 * Two hosts, each a transport endpoint (lib/xport, with its built-in message traffic) over a
 * link (lib/link), joined by a modelled wire in virtual time: a rate, a one-way delay, and a
 * seeded independent loss per frame in each direction. Every layer is the product's code; only
 * the wire is modelled. Modes, on the same seeded workload and loss sequence:
 *   link            reliability = link: RIFL replay (faithful IDs, the ring sized from rate x
 *                   RTT), the transport above with a MELO receiver (it should see no loss)
 *   link-missing    the same with extended IDs, replaying from the first missing frame
 *   end-to-end      reliability = end-to-end: the link verifies and drops (no replay), the
 *                   transport recovers with MELO selective retransmission
 *   end-to-end-gbn  the same with go-back-N receivers, RoCE's recovery
 * Per (mode, loss): goodput of checked messages over the delivery span, message completion
 * latency (post to every packet acknowledged) p50 / p99, and the bytes sent again (link
 * replays, transport retransmissions) against the bytes of messages. goodput_gbps is per
 * direction (both carry the same load). The transport's send queues hold SQ_DEPTH messages per
 * QP, so latency is the transport's and not a deep queue's. A mode that cannot finish within
 * the virtual time limit (RIFL's replay past its bound N_stall x FER < 1) says "done": false; a
 * message delivered twice, out of order or damaged, or a leaked buffer, fails the run (exit 1).
 *
 *   bench-xport [--quick] [--msgs N] [--proto NAME] [--rate-gbps G] [--delay-us D] [--seed N]
 *               [--sizing-rtt-us R]
 * The link's ring and flow-control buffer are sized by RIFL's rule from R (default 50 us): the
 * round trip a NACK really takes, which a receiver that is itself replaying stretches well past
 * the wire's 2 x D (a ring sized from the bare wire RTT, 14 us here, loses the frame a receiver
 * needs and the link never recovers: docs/transport.md).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sl_link.h"
#include "sl_rng.h"
#include "sl_xport.h"
#include "sl_traffic.h"

#define QPS 4u
#define SEG_BYTES 1024u
#define MIN_BODY 44u     /* the daemon's smallest link body (60 B frame) */
#define MIN_LINK 46u     /* smallest link frame: 60 B Ethernet frame less its header */
#define WIRE_EXTRA 38u   /* Ethernet header, FCS, preamble and inter-frame gap, bytes */
#define STEP_NS 50u      /* virtual time step */
#define PENDING_MAX 32u  /* transport frames waiting for the link */
#define WIRE_SLOTS 8192u /* frames in flight per direction */
#define SQ_DEPTH 16u     /* messages outstanding per QP */

enum mode { MODE_LINK, MODE_LINK_MISSING, MODE_E2E, MODE_E2E_GBN, MODE_N };
static const char *const mode_name[MODE_N] = {"link", "link-missing", "end-to-end",
					      "end-to-end-gbn"};

struct opts {
	uint64_t msgs;
	const char *proto;
	uint64_t rate_bps;
	uint64_t delay_ns;
	uint64_t limit_ns;      /**< virtual time a mode gets to deliver everything */
	uint64_t sizing_rtt_ns; /**< the RTT the link's ring and S_FC are sized from */
	uint64_t seed;          /**< the wire's loss sequences: seed and seed + 1 */
};

/* A buffer the wire, the link or the endpoint holds: a link body or a received link frame. */
struct buf {
	uint64_t at_ns; /**< wire: arrival time */
	uint16_t len;
	uint8_t b[];
};

struct wire {
	struct buf *q[WIRE_SLOTS]; /**< FIFO: constant delay keeps arrival order */
	uint32_t head, count;
	uint64_t free_ns; /**< the wire is busy serializing until then */
	double loss;
	struct sl_rng rng;
};

struct host {
	struct sl_xport *x;
	struct sl_traffic_msg *t;
	struct sl_link *l;
	struct sl_link_tx_desc pending[PENDING_MAX];
	unsigned n_pending;
	uint64_t resent_link_bytes, resent_xport_bytes, wire_bytes;
};

static uint64_t bufs_alive;

static struct buf *
buf_new(uint16_t len)
{
	struct buf *b = malloc(sizeof(*b) + len);

	if (b == NULL) {
		perror("malloc");
		exit(1);
	}
	b->len = len;
	bufs_alive++;
	return b;
}

static void
buf_free(struct buf *b)
{
	free(b);
	bufs_alive--;
}

static void
link_release(void *ctx, void *const *h, unsigned n)
{
	(void)ctx;
	for (unsigned i = 0; i < n; i++)
		buf_free(h[i]);
}

/* A received frame the endpoint holds: host_rx moved the transport frame to its front. */
static const uint8_t *
frame_bytes(void *ctx, void *handle, uint32_t *len)
{
	(void)ctx;
	*len = ((struct buf *)handle)->len;
	return ((struct buf *)handle)->b;
}

static void
frame_release(void *ctx, void *handle)
{
	(void)ctx;
	buf_free(handle);
}

static void
host_init(struct host *h, enum mode m, const struct opts *o, uint64_t rtt_ns)
{
	struct sl_xport_conf xc = {.max_qps = QPS,
				   .sq_depth = SQ_DEPTH,
				   .min_frame_bytes = MIN_BODY,
				   .frame = frame_bytes,
				   .release = frame_release};
	struct sl_traffic_msg_conf tc = {.max_qps = QPS,
					 .min_bytes = 1,
					 .max_bytes = 65536,
					 .msgs = o->msgs,
					 .seed = 42,
					 .check = true};
	struct sl_link_conf lc = {.fmt = {SL_WIRE_MODE_FAITHFUL, MIN_BODY},
				  .replay = SL_LINK_REPLAY_RING,
				  .keepalive_ns = 100 * SL_NS_PER_US,
				  .ctrl_interval_ns = 10 * SL_NS_PER_US,
				  .stuck_ns = 20 * SL_NS_PER_MS, /* no descheduled lcores here */
				  .release = link_release};
	int order;

	memset(h, 0, sizeof(*h));
	if (m == MODE_E2E || m == MODE_E2E_GBN) {
		lc.fmt.mode = SL_WIRE_MODE_EXTENDED;
		lc.replay = SL_LINK_REPLAY_NONE;
		order = SL_LINK_ORDER_MIN;
	} else {
		if (m == MODE_LINK_MISSING) {
			lc.fmt.mode = SL_WIRE_MODE_EXTENDED;
			lc.replay = SL_LINK_REPLAY_MISSING;
		}
		order = sl_link_ring_order(&lc.fmt, o->rate_bps, rtt_ns, SEG_BYTES);
	}
	lc.ring_order = (uint8_t)order;
	/* the endpoint's pacer shares the wire among the QPs, charged what the wire carries */
	xc.line_bps = o->rate_bps;
	xc.frame_overhead_bytes = (uint32_t)sl_wire_hdr_len(&lc.fmt) + WIRE_EXTRA;
	lc.fc_frames = sl_link_fc_frames(o->rate_bps, rtt_ns, SEG_BYTES) + 64;
	lc.line_bps = o->rate_bps; /* the link's own frames keep to the wire, as the daemon's */
	lc.wire_overhead_bytes = WIRE_EXTRA;
	h->l = sl_link_create(&lc);
	h->t = sl_traffic_msg_create(&tc);
	xc.on_recv = sl_traffic_msg_on_recv;
	xc.on_complete = sl_traffic_msg_on_complete;
	xc.ctx = h->t;
	h->x = sl_xport_create(&xc);
	if (h->l == NULL || h->t == NULL || h->x == NULL) {
		fprintf(stderr, "bench-xport: cannot create a host (order %d)\n", order);
		exit(1);
	}
	for (uint32_t q = 0; q < QPS; q++) {
		struct sl_xport_qp_conf qc = {.qpn = q,
					      .peer_qpn = q,
					      .proto = o->proto,
					      .seg_bytes = SEG_BYTES,
					      .recv_mode = m == MODE_E2E_GBN ? SL_RECV_GBN
									     : SL_RECV_MELO,
					      .init_rate_bps = o->rate_bps / QPS,
					      .rto_ns = 200 * SL_NS_PER_US};

		if (sl_xport_qp_open(h->x, &qc, 0) != 0 ||
		    sl_traffic_msg_qp(h->t, q, q, SL_TRAFFIC_MSG_SEND | SL_TRAFFIC_MSG_CHECK) !=
			    0) {
			fprintf(stderr, "bench-xport: cannot open QP %u with %s\n", q, o->proto);
			exit(1);
		}
	}
}

static void
host_fini(struct host *h)
{
	for (unsigned i = 0; i < h->n_pending; i++)
		buf_free(h->pending[i].handle);
	sl_xport_free(h->x);
	sl_link_free(h->l);
	sl_traffic_msg_free(h->t);
}

/* Receive what the wire delivered by now: link first, then the transport. */
static void
host_rx(struct host *h, struct wire *w, uint64_t now)
{
	struct sl_link_rx_frame in[32];
	struct sl_link_delivery d[32];
	struct sl_xport_rx_frame xf[32];
	unsigned n = 0, nd;

	while (w->count && n < SL_ARRAY_SIZE(in) && w->q[w->head]->at_ns <= now) {
		struct buf *b = w->q[w->head];

		in[n++] = (struct sl_link_rx_frame){.buf = b->b, .len = b->len, .handle = b};
		w->head = (w->head + 1) % WIRE_SLOTS;
		w->count--;
	}
	if (n == 0)
		return;
	nd = sl_link_rx_burst(h->l, now, in, n, d);
	for (unsigned i = 0; i < nd; i++) {
		struct buf *b = d[i].handle;

		/* The transport frame is the body: move it to the front of the buffer. */
		memmove(b->b, b->b + d[i].body_off, d[i].body_len);
		b->len = d[i].body_len;
		xf[i] = (struct sl_xport_rx_frame){.buf = b->b, .len = b->len, .handle = b};
	}
	sl_xport_rx_burst(h->x, now, xf, nd);
	sl_link_rx_consumed(h->l, nd);
}

/* Transport frames into link bodies, while the link may take them. */
static void
host_fill(struct host *h, uint64_t now)
{
	struct sl_xport_tx_frame tx[PENDING_MAX];
	unsigned n;

	if (h->n_pending == PENDING_MAX)
		return;
	n = sl_xport_tx_burst(h->x, now, tx, PENDING_MAX - h->n_pending);
	for (unsigned i = 0; i < n; i++) {
		uint16_t len = (uint16_t)(tx[i].hdr_len + tx[i].payload_len + tx[i].pad_bytes);
		struct buf *b = buf_new(len);

		memcpy(b->b, tx[i].hdr, tx[i].hdr_len);
		if (tx[i].payload_len)
			memcpy(b->b + tx[i].hdr_len, tx[i].payload, tx[i].payload_len);
		memset(b->b + tx[i].hdr_len + tx[i].payload_len, 0, tx[i].pad_bytes);
		h->pending[h->n_pending++] = (struct sl_link_tx_desc){
			.handle = b, .body = b->b, .body_len = len, .meta = SL_WIRE_META_EOM_FULL};
	}
}

/* Send frames while the wire is free: one link frame at a time, serialized at the rate. */
static void
host_tx(struct host *h, struct wire *w, const struct opts *o, uint64_t now)
{
	while (w->free_ns <= now) {
		struct sl_link_tx_frame f;
		unsigned taken, n;
		uint16_t len;
		struct buf *b;

		host_fill(h, now);
		n = sl_link_tx_burst(h->l, now, h->pending, h->n_pending, &taken, &f, 1);
		h->n_pending -= taken;
		memmove(h->pending, h->pending + taken, h->n_pending * sizeof(h->pending[0]));
		if (n == 0)
			return;
		len = (uint16_t)SL_MAX((unsigned)f.hdr_len + (f.handle ? f.body_len : 0u),
				       MIN_LINK);
		b = buf_new(len);
		memset(b->b, 0, len);
		memcpy(b->b, f.hdr, f.hdr_len);
		if (f.handle) {
			memcpy(b->b + f.hdr_len, f.body, f.body_len);
			if (f.is_replay)
				h->resent_link_bytes += f.body_len;
			else if (sl_xhdr_op_is_data(f.body[0]) && (f.body[1] & SL_XHDR_F_RTX))
				h->resent_xport_bytes += f.body_len;
		}
		h->wire_bytes += len;
		w->free_ns = SL_MAX(w->free_ns, now) +
			     (uint64_t)(len + WIRE_EXTRA) * 8 * SL_NS_PER_S / o->rate_bps;
		if (sl_rng_double(&w->rng) < w->loss || w->count == WIRE_SLOTS) {
			buf_free(b);
			continue;
		}
		b->at_ns = w->free_ns + o->delay_ns;
		w->q[(w->head + w->count++) % WIRE_SLOTS] = b;
	}
}

static bool
finished(struct host *hs, uint64_t msgs)
{
	for (int i = 0; i < 2; i++) {
		struct sl_traffic_msg_stats st;

		sl_traffic_msg_stats_get(hs[i].t, &st);
		if (!sl_traffic_msg_done(hs[i].t) || st.received < msgs * QPS)
			return false;
	}
	return true;
}

static int
run(enum mode m, double loss, const struct opts *o)
{
	static struct wire w[2];
	struct host hs[2];
	struct sl_traffic_msg_stats st[2];
	struct sl_hist lat;
	uint64_t now = 0, limit = o->limit_ns, rtt_ns = o->sizing_rtt_ns;
	uint64_t bytes = 0, resent_link = 0, resent_xport = 0, wire_bytes = 0, first = UINT64_MAX,
		 last = 0, rtx_pkts = 0, lost = 0;
	int bad = 0;

	for (int i = 0; i < 2; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].loss = loss;
		sl_rng_seed(&w[i].rng, o->seed + (uint64_t)i);
		host_init(&hs[i], m, o, rtt_ns);
	}
	for (; now < limit && !finished(hs, o->msgs); now += STEP_NS)
		for (int i = 0; i < 2; i++) {
			host_rx(&hs[i], &w[1 - i], now);
			sl_traffic_msg_post(hs[i].t, hs[i].x, now, 64);
			host_tx(&hs[i], &w[i], o, now);
		}
	sl_hist_reset(&lat);
	for (int i = 0; i < 2; i++) {
		struct sl_xport_stats xs;

		sl_traffic_msg_stats_get(hs[i].t, &st[i]);
		sl_xport_stats_get(hs[i].x, &xs);
		sl_hist_merge(&lat, sl_traffic_msg_latency(hs[i].t));
		bytes += st[i].bytes_received;
		first = SL_MIN(first, st[i].first_rx_ns);
		last = SL_MAX(last, st[i].last_rx_ns);
		resent_link += hs[i].resent_link_bytes;
		resent_xport += hs[i].resent_xport_bytes;
		wire_bytes += hs[i].wire_bytes;
		rtx_pkts += xs.tx_rtx;
		lost += sl_link_stat(hs[i].l, rx_lost);
		bad |= st[i].checked != st[i].received || st[i].received > o->msgs * QPS ||
		       st[i].out_of_order || st[i].bad_length || st[i].bad_content;
	}
	printf("{\"bench\": \"xport\", \"mode\": \"%s\", \"proto\": \"%s\", \"loss\": %g, "
	       "\"rate_gbps\": %.1f, \"delay_us\": %.1f, \"qps\": %u, \"msgs\": %" PRIu64
	       ", \"checked\": %" PRIu64 ", \"goodput_gbps\": %.3f, \"msg_p50_us\": %.1f, "
	       "\"msg_p99_us\": %.1f, \"bytes\": %" PRIu64 ", \"resent_link_bytes\": %" PRIu64
	       ", \"resent_xport_bytes\": %" PRIu64
	       ", \"resent_ratio\": %.4f, \"xport_rtx_pkts\": %" PRIu64
	       ", \"link_rx_lost\": %" PRIu64 ", \"wire_bytes\": %" PRIu64 ", \"done\": %s}\n",
	       mode_name[m], o->proto, loss, (double)o->rate_bps / 1e9, (double)o->delay_ns / 1e3,
	       QPS, 2 * o->msgs * QPS, st[0].checked + st[1].checked,
	       last > first ? (double)bytes * 4 / (double)(last - first) : 0.0,
	       (double)sl_hist_quantile(&lat, 0.5) / 1e3,
	       (double)sl_hist_quantile(&lat, 0.99) / 1e3, bytes, resent_link, resent_xport,
	       bytes ? (double)(resent_link + resent_xport) / (double)bytes : 0.0, rtx_pkts, lost,
	       wire_bytes, now < limit ? "true" : "false");
	for (int i = 0; i < 2; i++) {
		while (w[i].count) {
			buf_free(w[i].q[w[i].head]);
			w[i].head = (w[i].head + 1) % WIRE_SLOTS;
			w[i].count--;
		}
		host_fini(&hs[i]);
	}
	if (bufs_alive != 0) {
		fprintf(stderr, "bench-xport: %" PRIu64 " buffers leaked\n", bufs_alive);
		bad = 1;
	}
	if (bad)
		fprintf(stderr,
			"bench-xport: %s at loss %g delivered a message twice, out of order or "
			"damaged\n",
			mode_name[m], loss);
	return bad;
}

int
main(int argc, char **argv)
{
	struct opts o = {.msgs = 1000,
			 .proto = "dcqcn",
			 .rate_bps = 10 * SL_BPS_PER_GBPS,
			 .delay_ns = 2 * SL_NS_PER_US,
			 .limit_ns = 2 * SL_NS_PER_S,
			 .sizing_rtt_ns = 50 * SL_NS_PER_US,
			 .seed = 1000};
	static const double losses[] = {0, 1e-4, 1e-3, 1e-2};
	int fail = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick")) {
			o.msgs = 150;
			o.limit_ns = SL_NS_PER_S / 4;
		} else if (!strcmp(argv[i], "--msgs") && i + 1 < argc)
			o.msgs = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--proto") && i + 1 < argc)
			o.proto = argv[++i];
		else if (!strcmp(argv[i], "--rate-gbps") && i + 1 < argc)
			o.rate_bps = (uint64_t)(strtod(argv[++i], NULL) * 1e9);
		else if (!strcmp(argv[i], "--delay-us") && i + 1 < argc)
			o.delay_ns = (uint64_t)(strtod(argv[++i], NULL) * 1e3);
		else if (!strcmp(argv[i], "--sizing-rtt-us") && i + 1 < argc)
			o.sizing_rtt_ns = (uint64_t)(strtod(argv[++i], NULL) * 1e3);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			o.seed = strtoull(argv[++i], NULL, 0);
		else {
			fprintf(stderr, "usage: bench-xport [--quick] [--msgs N] [--proto NAME] "
					"[--rate-gbps G] [--delay-us D] [--sizing-rtt-us R] "
					"[--seed N]\n");
			return 2;
		}
	}
	if (o.msgs == 0 || o.rate_bps == 0 || sl_proto_find(o.proto) == NULL) {
		fprintf(stderr, "bench-xport: --msgs and --rate-gbps must be > 0 and --proto a "
				"registered program\n");
		return 2;
	}
	for (unsigned li = 0; li < SL_ARRAY_SIZE(losses); li++)
		for (int m = 0; m < MODE_N; m++)
			fail |= run((enum mode)m, losses[li], &o);
	return fail;
}
