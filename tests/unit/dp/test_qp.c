/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for lib/dp/qp.c: two adapters joined back to back (what one produces the other
 * consumes, as a perfect link would deliver it): every message arrives checked, frames sit
 * after the headroom and fill a minimum body, a short pool delays and loses nothing, a frame
 * that does not fit an mbuf is counted lost, every mbuf returns to the pool, a new link session
 * restarts every QP without a message lost track of or delivered twice, the QP info
 * snapshot appears once the lane has polled, and on a port that sends chains a large payload
 * goes by reference into the pattern, which a frame still out keeps until it is freed; with a
 * connection exchange, each session's QPs carry tokens drawn anew, and a frame with another
 * token (forged, or of an earlier session) is refused.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "dp_eal.h"
#include "sl_dp.h"
#include "sl_traffic.h"
#include "sl_wire.h"

#define MSGS 40
#define QPS 3

static struct rte_mempool *pool;

static int
setup(void **state)
{
	(void)state;
	pool = test_dp_eal_pool("test_dp_qp", 4095);
	return pool ? 0 : -1;
}

static int
teardown(void **state)
{
	(void)state;
	return test_dp_eal_pool_free(pool);
}

/* The adapters of a test and the built-in traffic serving each. */
static struct {
	struct sl_dp_qp *a;
	struct sl_traffic_qps *t;
} users[4];

static const struct sl_traffic_msg *
traffic_of(const struct sl_dp_qp *a)
{
	for (unsigned int i = 0; i < SL_ARRAY_SIZE(users); i++)
		if (users[i].a == a)
			return sl_traffic_qps_msgs(users[i].t);
	fail_msg("no traffic serves the adapter");
	return NULL;
}

/* The adapter and its traffic go. */
static void
qp_free(struct sl_dp_qp *a)
{
	for (unsigned int i = 0; i < SL_ARRAY_SIZE(users); i++)
		if (users[i].a == a) {
			sl_traffic_qps_free(users[i].t);
			users[i].a = NULL;
			users[i].t = NULL;
		}
	sl_dp_qp_free(a);
}

/*
 * An adapter whose QPs 0..qps-1 (at most QPS) carry the built-in traffic (msgs messages each),
 * its frames with at least SL_DP_QP_ATTACH_MIN bytes of payload by reference if
 * tx_attach_mbufs; with exchange, the QPs' identities agreed on QP QPS each session.
 */
static struct sl_dp_qp *
adapter_qps(struct rte_mempool *mp, uint32_t qps, uint64_t msgs, uint32_t tx_attach_mbufs,
	    bool exchange)
{
	const struct sl_traffic_msg_conf tc = {
		.max_qps = QPS,
		.min_bytes = 1,
		.max_bytes = 20000,
		.msgs = msgs,
		.seed = 3,
		.check = true,
	};
	struct sl_dp_qp_conf c = {
		.tx_attach_mbufs = tx_attach_mbufs,
		.region_bytes = sl_traffic_msg_pattern_bytes(&tc),
		.pool = mp,
		.socket_id = SOCKET_ID_ANY,
		.max_qps = exchange ? QPS + 1 : QPS,
		.exchange_qpn = exchange ? QPS : 0,
	};
	struct sl_dp_qp *a = sl_dp_qp_create(&c);
	struct sl_traffic_qps *t;
	unsigned int slot = 0;

	assert_non_null(a);
	t = sl_traffic_qps_create(a, &tc);
	assert_non_null(t);
	while (slot < SL_ARRAY_SIZE(users) && users[slot].a != NULL)
		slot++;
	assert_true(slot < SL_ARRAY_SIZE(users));
	users[slot].a = a;
	users[slot].t = t;
	for (uint32_t q = 0; q < qps; q++) {
		struct sl_xport_qp_conf qc = {
			.qpn = q,
			.peer_qpn = q,
			.proto = q % 2 ? "reno" : "dcqcn",
			.seg_bytes = 1024,
			.rto_ns = SL_NS_PER_S,
		};

		assert_int_equal(
			sl_traffic_qps_open(t, &qc, SL_TRAFFIC_MSG_SEND | SL_TRAFFIC_MSG_CHECK, 0),
			0);
	}
	return a;
}

static struct sl_dp_qp *
adapter_conf(struct rte_mempool *mp, uint64_t msgs, uint32_t tx_attach_mbufs, bool exchange)
{
	return adapter_qps(mp, QPS, msgs, tx_attach_mbufs, exchange);
}

static struct sl_dp_qp *
adapter_msgs(struct rte_mempool *mp, uint64_t msgs)
{
	return adapter_conf(mp, msgs, 0, false);
}

static struct sl_dp_qp *
adapter(struct rte_mempool *mp)
{
	return adapter_msgs(mp, MSGS);
}

/*
 * A chain as a wire delivers it: one mbuf of the same bytes (the chain freed). Checks its shape
 * on the way: SL_DP_QP_HEAD_BYTES of body in the first mbuf, the rest of the payload attached.
 */
static struct rte_mbuf *
flatten(struct rte_mbuf *m)
{
	struct rte_mbuf *one = rte_pktmbuf_alloc(m->pool);
	uint8_t *b;

	assert_int_equal(m->nb_segs, 2);
	assert_int_equal(m->data_len, SL_DP_QP_HEAD_BYTES);
	assert_true(RTE_MBUF_HAS_EXTBUF(m->next));
	assert_true(m->pkt_len >= SL_DP_QP_ATTACH_MIN);
	assert_non_null(one);
	b = (uint8_t *)rte_pktmbuf_append(one, (uint16_t)m->pkt_len);
	assert_non_null(b);
	assert_ptr_equal(rte_pktmbuf_read(m, 0, m->pkt_len, b), b); /* the bytes of both mbufs */
	rte_pktmbuf_free(m);
	return one;
}

/*
 * What carry() notes of the frames into one adapter (the view of someone on the wire): the
 * token the last frame to each QP carried (transport header bytes 8-11, big-endian, after the
 * QPN in bytes 5-7) and a copy of the first data frame to QP 0 (op below SL_XOP_ACK).
 */
static struct {
	const struct sl_dp_qp *to; /**< NULL: note nothing */
	uint32_t token[QPS + 1];
	struct rte_mbuf *data0;
} wire;

static void
note(const struct rte_mbuf *m)
{
	const uint8_t *h = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t qpn = (uint32_t)h[5] << 16 | (uint32_t)h[6] << 8 | h[7];

	if (qpn > QPS)
		return;
	wire.token[qpn] = rte_be_to_cpu_32(*(const unaligned_uint32_t *)(h + 8));
	if (qpn == 0 && h[0] < SL_XOP_ACK && wire.data0 == NULL) {
		wire.data0 = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);
		assert_non_null(wire.data0);
	}
}

/* Move what from produces to to; check every frame's place and size. */
static unsigned
carry(struct sl_dp_qp *from, struct sl_dp_qp *to, uint64_t now)
{
	struct rte_mbuf *m[SL_DP_BURST];
	unsigned n = sl_dp_qp_produce(from, now, m, SL_DP_BURST);

	for (unsigned i = 0; i < n; i++) {
		assert_int_equal(m[i]->data_off, RTE_PKTMBUF_HEADROOM);
		assert_true(m[i]->data_len >= SL_DP_MIN_BODY);
		if (m[i]->nb_segs > 1)
			m[i] = flatten(m[i]);
		if (to == wire.to)
			note(m[i]);
	}
	assert_int_equal(sl_dp_qp_consume(to, now, m, n), n);
	return n;
}

/* Poll both polls times, 1 us apart from now; returns the time after. */
static uint64_t
run_polls(struct sl_dp_qp *a, struct sl_dp_qp *b, uint64_t now, int polls)
{
	for (int poll = 0; poll < polls; poll++, now += 1000) {
		carry(a, b, now);
		carry(b, a, now);
	}
	return now;
}

/* Both ends' counts of agreed exchanges reach n (or too many polls); returns the time then. */
static uint64_t
run_until_exchanged(struct sl_dp_qp *a, struct sl_dp_qp *b, uint64_t now, uint64_t n)
{
	for (int poll = 0; poll < 1000; poll++, now += 1000) {
		struct sl_dp_qp_stats as, bs;

		carry(a, b, now);
		carry(b, a, now);
		sl_dp_qp_stats_get(a, &as);
		sl_dp_qp_stats_get(b, &bs);
		if (as.exchanges == n && bs.exchanges == n)
			return now;
	}
	fail_msg("no exchange number %" PRIu64 " within 1000 polls", n);
	return now;
}

/* Poll both until the traffic of both is done (or too many polls). */
static uint64_t
run_until_done(struct sl_dp_qp *a, struct sl_dp_qp *b, uint64_t now)
{
	for (int poll = 0; poll < 200000 && !(sl_traffic_msg_done(traffic_of(a)) &&
					      sl_traffic_msg_done(traffic_of(b)));
	     poll++, now += 1000) {
		carry(a, b, now);
		carry(b, a, now);
	}
	assert_true(sl_traffic_msg_done(traffic_of(a)) && sl_traffic_msg_done(traffic_of(b)));
	return now;
}

static uint64_t
rx_bad_token(const struct sl_dp_qp *a)
{
	struct sl_xport_stats xs;

	sl_xport_stats_get(sl_dp_qp_xport(a), &xs);
	return xs.rx_bad_token;
}

/* Poll both until every QP of both has checked MSGS messages (or too many polls). */
static void
run_until_checked(struct sl_dp_qp *a, struct sl_dp_qp *b)
{
	uint64_t now = 1000;

	for (int poll = 0; poll < 200000; poll++, now += 1000) {
		bool done = true;

		carry(a, b, now);
		carry(b, a, now);
		for (uint32_t q = 0; q < QPS; q++)
			done &= sl_traffic_msg_qp_checked(traffic_of(a), q) == MSGS &&
				sl_traffic_msg_qp_checked(traffic_of(b), q) == MSGS;
		if (done && sl_traffic_msg_done(traffic_of(a)) &&
		    sl_traffic_msg_done(traffic_of(b)))
			return;
	}
	fail_msg("not every QP checked %d messages", MSGS);
}

static void
check_clean(const struct sl_dp_qp *a)
{
	struct sl_traffic_msg_stats ts;
	struct sl_dp_qp_stats as;

	sl_traffic_msg_stats_get(traffic_of(a), &ts);
	sl_dp_qp_stats_get(a, &as);
	assert_int_equal(ts.checked, QPS * MSGS);
	assert_int_equal(ts.out_of_order + ts.bad_length + ts.bad_content, 0);
	assert_int_equal(as.tx_lost, 0);
	for (uint32_t q = 0; q < QPS; q++) {
		struct sl_xport_qp_stats qs;

		assert_int_equal(sl_xport_qp_stats_get(sl_dp_qp_xport(a), q, &qs), 0);
		assert_int_equal(qs.pkts_rtx, 0);
		assert_int_equal(qs.msgs_completed, MSGS);
	}
}

/*
 * A new link session mid-stream (the lane's session hook on both ends, as when the peer
 * restarts): every QP restarts on both; every message is still either completed or reported
 * failed, none is delivered twice or wrong, and the traffic goes on to its count; each QP's
 * lifetime counters add both sessions up, the messages the restart cancelled as failed.
 */
static void
sl_dp_qp_session__restart_mid_stream_loses_track_of_nothing(void **state)
{
	const uint64_t msgs = 400; /* more than a send queue holds: posting goes on after */
	unsigned avail = rte_mempool_avail_count(pool);
	struct sl_dp_qp *a = adapter_msgs(pool, msgs), *b = adapter_msgs(pool, msgs);
	struct sl_dp_qp *ends[2] = {a, b};
	uint64_t now = 1000;

	(void)state;
	now = run_polls(a, b, now, 40);
	sl_dp_qp_session(a, now);
	sl_dp_qp_session(b, now);
	run_until_done(a, b, now);
	for (int i = 0; i < 2; i++) {
		struct sl_traffic_msg_stats ts, peer;
		struct sl_dp_qp_stats as;

		sl_traffic_msg_stats_get(traffic_of(ends[i]), &ts);
		sl_traffic_msg_stats_get(traffic_of(ends[1 - i]), &peer);
		sl_dp_qp_stats_get(ends[i], &as);
		assert_int_equal(as.qp_restarts, QPS);
		assert_int_equal(as.qp_restart_failed, 0);
		assert_int_equal(ts.posted, QPS * msgs);
		assert_int_equal(ts.completed + ts.failed, QPS * msgs);
		assert_true(ts.failed > 0);                 /* what was in flight at the restart */
		assert_true(ts.completed > QPS * msgs / 2); /* posting went on after it */
		assert_int_equal(ts.out_of_order + ts.bad_length + ts.bad_content, 0);
		/* at most what the peer posted, at least what it saw completed */
		assert_true(ts.checked >= peer.completed && ts.checked <= QPS * msgs);
		/* Each QP's counters span both sessions and agree with the traffic's. */
		uint64_t posted = 0, completed = 0, failed = 0;

		for (uint32_t q = 0; q < QPS; q++) {
			struct sl_xport_qp_stats qs;

			assert_int_equal(sl_dp_qp_lifetime_stats(ends[i], q, &qs), 0);
			posted += qs.msgs_posted;
			completed += qs.msgs_completed;
			failed += qs.msgs_failed;
		}
		assert_int_equal(posted, ts.posted);
		assert_int_equal(completed, ts.completed);
		assert_int_equal(failed, ts.failed);
	}
	qp_free(a);
	qp_free(b);
	assert_int_equal(rte_mempool_avail_count(pool), avail);
}

/*
 * With a connection exchange, each session's QPs open with tokens the two ends drew for it and
 * agreed on the exchange QP (which alone carries token 0): none 0, none a previous session's. A
 * frame of the session before, replayed, is refused and counted, and so is one whose token was
 * forged to 0; neither reaches the traffic, which completes every message or reports it failed
 * and checks every one it receives.
 */
static void
sl_dp_qp_session__each_session_agrees_new_tokens(void **state)
{
	const uint64_t msgs = 400; /* more than a send queue holds: some in flight at the restart */
	unsigned avail = rte_mempool_avail_count(pool);
	struct sl_dp_qp *a = adapter_conf(pool, msgs, 0, true);
	struct sl_dp_qp *b = adapter_conf(pool, msgs, 0, true);
	uint32_t first[QPS + 1];
	struct rte_mbuf *replayed, *forged;
	uint64_t now;

	(void)state;
	wire.to = b;
	now = run_polls(a, b, run_until_exchanged(a, b, 1000, 1), 40);
	memcpy(first, wire.token, sizeof(first));
	assert_int_equal(first[QPS], 0); /* the exchange QP's */
	for (uint32_t q = 0; q < QPS; q++)
		assert_int_not_equal(first[q], 0);
	assert_non_null(wire.data0);
	replayed = wire.data0;

	sl_dp_qp_session(a, now);
	sl_dp_qp_session(b, now);
	now = run_polls(a, b, run_until_exchanged(a, b, now, 2), 40);
	for (uint32_t q = 0; q < QPS; q++)
		assert_true(wire.token[q] != 0 && wire.token[q] != first[q]);
	forged = rte_pktmbuf_copy(replayed, pool, 0, UINT32_MAX);
	assert_non_null(forged);
	memset(rte_pktmbuf_mtod_offset(forged, uint8_t *, 8), 0, 4);
	assert_int_equal(rx_bad_token(b), 0);
	assert_int_equal(sl_dp_qp_consume(b, now, &replayed, 1), 1);
	assert_int_equal(rx_bad_token(b), 1);
	assert_int_equal(sl_dp_qp_consume(b, now, &forged, 1), 1);
	assert_int_equal(rx_bad_token(b), 2);
	wire.to = NULL;
	run_until_done(a, b, now);

	for (int i = 0; i < 2; i++) {
		const struct sl_dp_qp *end = i ? b : a;
		struct sl_traffic_msg_stats ts;
		struct sl_dp_qp_stats as;

		sl_traffic_msg_stats_get(traffic_of(end), &ts);
		sl_dp_qp_stats_get(end, &as);
		assert_int_equal(as.exchanges, 2);
		assert_int_equal(as.exchange_failed + as.exchange_refused, 0);
		assert_int_equal(as.qp_restarts, QPS);
		assert_int_equal(ts.posted, QPS * msgs);
		assert_int_equal(ts.completed + ts.failed, QPS * msgs);
		assert_int_equal(ts.out_of_order + ts.bad_length + ts.bad_content, 0);
	}
	wire.data0 = NULL;
	qp_free(a);
	qp_free(b);
	assert_int_equal(rte_mempool_avail_count(pool), avail);
}

/*
 * Two ends whose offers do not fit each other (one names QPS QPs, the other QPS - 1): each
 * refuses the other's, counts it, and keeps its QPs closed: no message is posted, no data frame
 * leaves but the offer, and a new session tries again.
 */
static void
sl_dp_qp_session__an_offer_that_does_not_fit_keeps_the_qps_closed(void **state)
{
	struct sl_dp_qp *a = adapter_conf(pool, MSGS, 0, true);
	struct sl_dp_qp *b = adapter_qps(pool, QPS - 1, MSGS, 0, true);
	uint64_t now = 1000;

	(void)state;
	for (int round = 1; round <= 2; round++) {
		now = run_polls(a, b, now, 200);
		for (int i = 0; i < 2; i++) {
			const struct sl_dp_qp *end = i ? b : a;
			struct sl_traffic_msg_stats ts;
			struct sl_dp_qp_stats as;
			struct sl_xport_stats xs;

			sl_traffic_msg_stats_get(traffic_of(end), &ts);
			sl_dp_qp_stats_get(end, &as);
			sl_xport_stats_get(sl_dp_qp_xport(end), &xs);
			assert_int_equal(as.exchange_refused, round);
			assert_int_equal(as.exchanges + as.exchange_failed, 0);
			assert_int_equal(ts.posted, 0);
			assert_int_equal(xs.tx_data, round); /* the offers */
		}
		sl_dp_qp_session(a, now);
		sl_dp_qp_session(b, now);
	}
	qp_free(a);
	qp_free(b);
}

/* A pool smaller than a burst: sending waits for mbufs, nothing is lost. */
static void
sl_dp_qp_produce__short_pool_delays_loses_nothing(void **state)
{
	struct rte_mempool *small = rte_pktmbuf_pool_create(
		"test_qp_small", 12, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	struct sl_dp_qp *a, *b;
	struct sl_dp_qp_stats as;

	(void)state;
	assert_non_null(small);
	a = adapter(small);
	b = adapter(pool);
	run_until_checked(a, b);
	check_clean(a);
	check_clean(b);
	sl_dp_qp_stats_get(a, &as);
	assert_true(as.pool_short > 0);
	qp_free(a);
	qp_free(b);
	assert_int_equal(rte_mempool_avail_count(small), 12);
	rte_mempool_free(small);
}

/* mbufs with room for feedback but not for a 1024-byte packet: data frames are lost, counted. */
static void
sl_dp_qp_produce__frame_longer_than_an_mbuf_is_lost(void **state)
{
	struct rte_mempool *tiny = rte_pktmbuf_pool_create(
		"test_qp_tiny", 255, 0, 0, RTE_PKTMBUF_HEADROOM + 256, SOCKET_ID_ANY);
	struct rte_mbuf *m[SL_DP_BURST];
	struct sl_dp_qp *a;
	struct sl_dp_qp_stats as;
	unsigned n = 0;

	(void)state;
	assert_non_null(tiny);
	a = adapter(tiny);
	for (uint64_t now = 1000; now < 100000; now += 1000) {
		unsigned k = sl_dp_qp_produce(a, now, m, SL_DP_BURST);

		n += k;
		rte_pktmbuf_free_bulk(m, k);
	}
	sl_dp_qp_stats_get(a, &as);
	assert_true(as.tx_lost > 0);
	assert_int_equal(n, as.tx_frames);
	qp_free(a);
	assert_int_equal(rte_mempool_avail_count(tiny), 255);
	rte_mempool_free(tiny);
}

static void
sl_dp_qp_info_get__snapshot_once_polled(void **state)
{
	struct sl_dp_qp *a = adapter(pool), *b = adapter(pool);
	struct sl_xport_qp_info info;

	(void)state;
	assert_int_equal(sl_dp_qp_info_get(a, 1, &info), -EAGAIN);
	assert_int_equal(sl_dp_qp_info_get(a, QPS, &info), -ENOENT);
	assert_true(sl_dp_qp_has(a, 0));
	assert_false(sl_dp_qp_has(a, QPS));
	carry(a, b, 1000);
	assert_int_equal(sl_dp_qp_info_get(a, 1, &info), 0);
	assert_string_equal(info.proto, "reno");
	assert_int_equal(info.peer_qpn, 1);
	assert_int_equal(info.seg_bytes, 1024);
	assert_int_equal(info.rto_ns, SL_NS_PER_S);
	assert_false(info.failed);
	qp_free(a);
	qp_free(b);
}

/* Blocks allocated from DPDK's heaps, every socket. */
static size_t
heap_blocks(void)
{
	size_t n = 0;

	for (unsigned int i = 0; i < rte_socket_count(); i++) {
		struct rte_malloc_socket_stats st;

		assert_int_equal(rte_malloc_get_socket_stats(rte_socket_id_by_idx(i), &st), 0);
		n += st.alloc_count;
	}
	return n;
}

/*
 * Two adapters back to back (attach_mbufs as their conf's tx_attach_mbufs): every message
 * checked, what one built the other took, and every mbuf and heap block back at the end. Their
 * counters in as, bs.
 */
static void
back_to_back(uint32_t attach_mbufs, struct sl_dp_qp_stats *as, struct sl_dp_qp_stats *bs)
{
	unsigned avail = rte_mempool_avail_count(pool);
	size_t blocks = heap_blocks();
	struct sl_dp_qp *a = adapter_conf(pool, MSGS, attach_mbufs, false);
	struct sl_dp_qp *b = adapter_conf(pool, MSGS, attach_mbufs, false);

	run_until_checked(a, b);
	check_clean(a);
	check_clean(b);
	sl_dp_qp_stats_get(a, as);
	sl_dp_qp_stats_get(b, bs);
	assert_int_equal(as->tx_frames, bs->rx_frames);
	assert_int_equal(as->tx_bytes, bs->rx_bytes);
	assert_int_equal(bs->tx_frames, as->rx_frames);
	qp_free(a);
	qp_free(b);
	assert_int_equal(rte_mempool_avail_count(pool), avail);
	assert_int_equal(heap_blocks(), blocks);
}

static void
sl_dp_qp_produce__back_to_back_every_message_checked(void **state)
{
	struct sl_dp_qp_stats as, bs;

	(void)state;
	back_to_back(0, &as, &bs);
	assert_int_equal(as.tx_attached + bs.tx_attached, 0);
}

/* On a port that sends chains, large payloads go attached; every message still arrives checked. */
static void
sl_dp_qp_produce__large_payloads_go_by_reference(void **state)
{
	struct sl_dp_qp_stats as, bs;

	(void)state;
	back_to_back(255, &as, &bs);
	assert_true(as.tx_attached > 0 && as.tx_attached < as.tx_frames);
	assert_true(bs.tx_attached > 0);
}

/*
 * A frame that points into the pattern keeps it: freeing the adapter while one is held (against
 * the contract: as if a replay ring still had it) leaves the pattern allocated, its bytes in
 * place, and the frame's free releases it.
 */
static void
sl_dp_qp_free__a_frame_out_keeps_the_pattern(void **state)
{
	struct sl_dp_qp *a = adapter_conf(pool, MSGS, 255, false);
	struct rte_mbuf *m[SL_DP_BURST], *held = NULL;
	static uint8_t before[UINT16_MAX], after[UINT16_MAX];
	size_t blocks;

	(void)state;
	for (uint64_t now = 1000; held == NULL && now < 1000000; now += 1000) {
		unsigned n = sl_dp_qp_produce(a, now, m, SL_DP_BURST);

		for (unsigned i = 0; i < n; i++) {
			if (held == NULL && m[i]->nb_segs == 2)
				held = m[i];
			else
				rte_pktmbuf_free(m[i]);
		}
	}
	assert_non_null(held);
	rte_pktmbuf_read(held, 0, held->pkt_len, before);
	qp_free(a);
	rte_pktmbuf_read(held, 0, held->pkt_len, after);
	assert_memory_equal(before, after, held->pkt_len);
	blocks = heap_blocks();
	rte_pktmbuf_free(held);
	assert_int_equal(heap_blocks(), blocks - 1); /* the pattern went with its last frame */
}

static void
sl_dp_qp_create__rejects_bad_conf(void **state)
{
	struct sl_dp_qp_conf c = {
		.pool = pool,
		.socket_id = SOCKET_ID_ANY,
		.max_qps = 0,
	};
	const struct sl_traffic_msg_conf tc = {.max_qps = 2, .min_bytes = 0, .max_bytes = 10};
	struct sl_dp_qp *a;

	(void)state;
	errno = 0;
	assert_null(sl_dp_qp_create(&c)); /* no QP */
	assert_int_equal(errno, EINVAL);
	c.max_qps = 2;
	c.pool = NULL;
	errno = 0;
	assert_null(sl_dp_qp_create(&c)); /* no pool */
	assert_int_equal(errno, EINVAL);
	c.pool = pool;
	a = sl_dp_qp_create(&c);
	assert_non_null(a);
	errno = 0;
	assert_null(sl_traffic_qps_create(a, &tc)); /* the traffic refuses */
	assert_int_equal(errno, EINVAL);
	sl_dp_qp_free(a);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sl_dp_qp_produce__back_to_back_every_message_checked),
		cmocka_unit_test(sl_dp_qp_produce__short_pool_delays_loses_nothing),
		cmocka_unit_test(sl_dp_qp_produce__frame_longer_than_an_mbuf_is_lost),
		cmocka_unit_test(sl_dp_qp_session__restart_mid_stream_loses_track_of_nothing),
		cmocka_unit_test(sl_dp_qp_session__each_session_agrees_new_tokens),
		cmocka_unit_test(sl_dp_qp_session__an_offer_that_does_not_fit_keeps_the_qps_closed),
		cmocka_unit_test(sl_dp_qp_info_get__snapshot_once_polled),
		cmocka_unit_test(sl_dp_qp_produce__large_payloads_go_by_reference),
		cmocka_unit_test(sl_dp_qp_free__a_frame_out_keeps_the_pattern),
		cmocka_unit_test(sl_dp_qp_create__rejects_bad_conf),
	};

	return cmocka_run_group_tests_name("dp/qp", tests, setup, teardown);
}
