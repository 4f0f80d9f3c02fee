/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qp.c - queue pairs on a lane (sl_dp.h): the endpoint's frames in and out of mbufs.
 *
 * TX. A poll lets the user post (sl_dp_qp_user.poll; not until the lane has seen its peer up
 * once: a QP whose first packets waited for a peer still starting would time out), then,
 * when the endpoint may have work (sl_xport_next_deadline() <= now), tops the spare mbufs up to
 * what the lane asked for in one bulk allocation (halving the request while the pool is short),
 * asks tx_burst for at most as many frames as there are spares, and copies each frame into its
 * mbuf: transport header, payload, zero padding, after the headroom the lane fills with Ethernet
 * and link headers. So the endpoint hands out no frame the adapter cannot build, and spares left
 * over wait for the next poll instead of going back to the pool.
 *
 * Payload by reference. The user's payload region (conf.region_bytes: the built-in traffic's
 * pattern, which every one of its messages is a slice of) lives in an IOVA-contiguous memzone the
 * adapter owns (struct payload_region). On a port that sends
 * chained mbufs (conf.tx_attach_mbufs), a frame with at least SL_DP_QP_ATTACH_MIN bytes of payload
 * is two mbufs: the first holds the transport header and the payload up to SL_DP_QP_HEAD_BYTES of
 * body (what the link's integrity check reads must be contiguous; SL_DP_VCODE_HDR_BYTES of it), the
 * second is attached to the rest of the payload where it lies in the pattern, as an external
 * buffer: no copy, however large. The region counts its references (rte_mbuf_ext_shared_info: one
 * per attached mbuf, one for the adapter), so it outlives every frame that points into it, in the
 * link's replay ring or in a PMD, whichever frees last, and is freed by that last free. A frame
 * whose payload is elsewhere (an application's) or small is copied as above, and so is any
 * frame while the adapter's pool of attach mbufs (no data room: they cost the packet pool
 * nothing) is empty.
 *
 * RX. Delivered bodies go to sl_xport_rx_burst() SL_DP_BURST at a time, each with its mbuf as
 * the handle: conf.frame reads the mbuf's data, conf.release frees it.
 *
 * Sessions. A QP lives within one session of its lane's link (sl_link_sessions()). When the link
 * begins a new one, the peer restarted or left, or one end gave a stuck episode up and made the
 * other re-initialize too: either way both ends' links start afresh, so both ends' adapters
 * restart every QP with them (sl_dp_qp_session(), the lane's session hook). Each QP is closed
 * (its outstanding messages complete as failed: sent, perhaps delivered, never confirmed; its
 * reorder buffer is released) and its user told (user.restart: the built-in traffic's count
 * toward msgs goes on; its checker expects the peer's stream from MSN 0). Without a connection
 * exchange it reopens at once from the configuration it was opened with (PSNs and MSNs from the
 * start); with one (conf.exchange_qpn, exchange.c), it stays closed until the session's round
 * has agreed a new token and first PSN with the peer (enum user_qps), so the old session's
 * frames are refused by their token. Posting waits for the peer again, as at start. So every
 * message is delivered or reported failed to its sender, and none is delivered twice: nothing
 * is resent across sessions.
 *
 * Users. The endpoint's callbacks come to the adapter, which hands each to the lane half of the
 * channel (conf.chan) when it owns the QP and to the user (sl_dp_qp_serve()) otherwise; with
 * no user, what arrives for its QPs is refused as an invalid request, and a READ for one of its
 * QPs is refused likewise (the built-in traffic serves none). The lane's tick
 * (sl_dp_qp_tick) polls the lane half on every poll in every state of the lane's life, so its
 * commands are answered while the peer is still away or the port is down; once a millisecond it
 * also fails the QPs whose timeout passed (sl_xport_expire), which produce would only see when
 * it builds their resends: a port with no room (a link whose peer went away, its replay ring
 * full; a port down) builds none.
 *
 * QP info. sl_xport_qp_info_get() reads the scheduler's state, which only the lane's lcore may
 * touch; produce copies it into a per-QP slot every SL_DP_QP_INFO_NS, SL_DP_QP_INFO_PER_POLL QPs
 * at a time, under a sequence lock (odd while written). The slot's words are stored and loaded
 * with relaxed atomics between acquire / release fences, so a reader on the telemetry thread
 * sees either a whole snapshot or a changed sequence, never a torn one it accepts.
 */
#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_memcpy.h>
#include <rte_memzone.h>

#include "dp_log.h"
#include "exchange.h"
#include "sl_dp.h"

#define INFO_WORDS ((sizeof(struct sl_xport_qp_info) + 7) / 8)
#define REGION_REFS_MAX 60000u /**< attach no more while the region has this many (uint16_t) */

static_assert(SL_DP_VCODE_HDR_BYTES <= SL_DP_QP_HEAD_BYTES,
	      "what the link's check reads of a body lies in the first mbuf of a chain");

static const struct sl_stat_desc stat_desc[] = {
	SL_STAT(struct sl_dp_qp_stats, tx_frames, "transport frames built into mbufs"),
	SL_STAT(struct sl_dp_qp_stats, tx_bytes, "transport frame bytes built (the link bodies)"),
	SL_STAT(struct sl_dp_qp_stats, tx_attached,
		"frames whose payload went by reference (an external buffer in the pattern)"),
	SL_STAT(struct sl_dp_qp_stats, tx_lost,
		"frames the endpoint gave that did not fit an mbuf: lost"),
	SL_STAT(struct sl_dp_qp_stats, pool_short,
		"polls that got fewer mbufs than asked (sending waits)"),
	SL_STAT(struct sl_dp_qp_stats, rx_frames, "transport frames handed to the endpoint"),
	SL_STAT(struct sl_dp_qp_stats, rx_bytes, "transport frame bytes handed to the endpoint"),
	SL_STAT(struct sl_dp_qp_stats, info_refreshes, "QP info snapshots taken"),
	SL_STAT(struct sl_dp_qp_stats, qp_restarts,
		"QPs closed and reopened because the link began a new session"),
	SL_STAT(struct sl_dp_qp_stats, qp_restart_failed,
		"QPs the endpoint would not reopen (closed for good)"),
	SL_STAT(struct sl_dp_qp_stats, exchanges,
		"connection exchanges agreed with the peer: the QPs opened with its tokens and "
		"first PSNs"),
	SL_STAT(struct sl_dp_qp_stats, exchange_failed,
		"connection exchanges whose exchange QP failed (the peer did not answer): begun "
		"again with new draws"),
	SL_STAT(struct sl_dp_qp_stats, exchange_refused,
		"peer offers refused: not naming each QP's peer exactly once with a token (the "
		"QPs stay closed until the next session)"),
};
SL_STAT_TABLE_DEFINE(sl_dp_qp_stat_table, struct sl_dp_qp_stats, stat_desc);

/*
 * Where the user's QPs stand. Without an exchange they open at once (OPEN); with one, each
 * session's round (exchange.c) opens them:
 *
 *   IDLE     -> OFFERED   the peer is up: identities drawn, our offer posted
 *   OFFERED  -> OPENED    the peer's offer arrived: each QP opened with its peer's token and
 *                         first PSN; nothing is posted yet
 *   OPENED   -> OPEN      the peer acknowledged our offer: its QPs are open, messages flow
 *   OFFERED  -> REFUSED   the peer's offer did not fit our QPs: they stay closed
 *   OFFERED, OPENED -> IDLE   the exchange QP failed: the QPs close, the next poll begins
 *                         another round
 *   any      -> IDLE      a new session of the link (sl_dp_qp_session())
 */
enum user_qps {
	USER_QPS_IDLE,
	USER_QPS_OFFERED,
	USER_QPS_OPENED,
	USER_QPS_OPEN,
	USER_QPS_REFUSED,
};

/*
 * The user's payload region, in an IOVA-contiguous memzone that begins with this header; frames
 * attach to it by reference (see the top).
 */
struct payload_region {
	struct rte_mbuf_ext_shared_info shinfo; /**< refcnt: attached mbufs, + 1 for the adapter */
	const struct rte_memzone *mz;           /**< the memzone this lies at the start of */
	rte_iova_t iova;                        /**< of buf */
	size_t len;                             /**< bytes of buf */
	uint8_t buf[];
};

/* One QP's info snapshot, under a sequence lock. */
struct info_slot {
	uint32_t seq; /**< even: stable; odd: being written; 0: never written */
	uint64_t w[INFO_WORDS];
};

struct sl_dp_qp {
	struct sl_dp_lane *lane;   /**< posting waits for its peer (NULL: does not wait) */
	struct sl_chan_lane *chan; /**< applications' QPs (NULL: none) */
	bool started;              /**< the peer was up once: messages flow */
	struct sl_dp_qp_user user; /**< the QPs opened with sl_dp_qp_open() (no callbacks: none) */
	struct qp_exchange *ex;    /**< their connection exchange (NULL: none) */
	uint8_t user_qps;          /**< enum user_qps */
	struct sl_xport *x;
	struct rte_mempool *pool;
	uint32_t max_qps;
	uint32_t *qpns; /**< [max_qps] QPs open here, n_qps of them */
	uint32_t n_qps;
	uint32_t app_base, n_app; /**< the applications' QPNs (the lane half's), [base, base + n) */
	bool *open;               /**< [max_qps] */
	struct sl_xport_qp_conf *conf;    /**< [max_qps] how each open QP was opened, to reopen it
					   *   (with an exchange, its identity of this session) */
	struct sl_xport_qp_stats *before; /**< [max_qps] counters of the sessions that ended */
	struct info_slot *info;           /**< [max_qps] */
	uint32_t info_next;               /**< index into qpns of the next snapshot */
	uint64_t info_due_ns;             /**< next round of snapshots starts here */
	uint64_t expire_due_ns;           /**< next sl_xport_expire, ns (one a millisecond) */
	struct payload_region *region;    /**< the user's payload region (NULL: attach nothing) */
	struct rte_mempool *attach_pool;  /**< mbufs without data room, for attached payloads */
	struct rte_mbuf *spare[SL_DP_BURST];
	unsigned int n_spare;
	struct rte_mbuf *attach_spare[SL_DP_BURST];
	unsigned int n_attach_spare;
	struct sl_xport_tx_frame tx[SL_DP_BURST];
	struct sl_xport_rx_frame rx[SL_DP_BURST];
	struct sl_dp_qp_stats stats sl_cache_aligned; /**< written by the lane's lcore only */
};

static const uint8_t *
frame_bytes(void *ctx, void *handle, uint32_t *len)
{
	struct rte_mbuf *m = handle;

	(void)ctx;
	*len = m->data_len;
	return rte_pktmbuf_mtod(m, const uint8_t *);
}

static void
frame_release(void *ctx, void *handle)
{
	(void)ctx;
	rte_pktmbuf_free(handle);
}

/* The endpoint's callbacks: the applications' QPs to the lane half, the rest to the user. */
static int
on_recv(void *ctx, const struct sl_xport_rx_seg *seg, uint64_t now_ns)
{
	struct sl_dp_qp *a = ctx;

	if (a->chan != NULL && sl_chan_lane_owns(a->chan, seg->qpn))
		return sl_chan_lane_on_recv(a->chan, seg, now_ns);
	if (a->ex != NULL && seg->qpn == qp_exchange_qpn(a->ex))
		return qp_exchange_on_recv(a->ex, seg);
	if (a->user.on_recv == NULL)
		return SL_XPORT_SYN_INVALID;
	return a->user.on_recv(a->user.ctx, seg, now_ns);
}

static void
on_complete(void *ctx, const struct sl_xport_cqe *c, uint64_t now_ns)
{
	struct sl_dp_qp *a = ctx;

	if (a->chan != NULL && sl_chan_lane_owns(a->chan, c->qpn))
		sl_chan_lane_on_complete(a->chan, c, now_ns);
	else if (a->ex != NULL && c->qpn == qp_exchange_qpn(a->ex))
		qp_exchange_on_complete(a->ex, c);
	else if (a->user.on_complete != NULL)
		a->user.on_complete(a->user.ctx, c, now_ns);
}

static int
read_src(void *ctx, uint32_t qpn, uint64_t raddr, uint32_t rkey, uint32_t len, const uint8_t **src)
{
	struct sl_dp_qp *a = ctx;

	if (a->chan != NULL && sl_chan_lane_owns(a->chan, qpn))
		return sl_chan_lane_read_src(a->chan, qpn, raddr, rkey, len, src);
	return SL_XPORT_SYN_INVALID;
}

/* The shared info's free_cb: the last attached mbuf (or the adapter) let the region go. */
static void
region_free(void *addr, void *opaque)
{
	const struct payload_region *r = opaque;

	(void)addr;
	rte_memzone_free(r->mz);
}

static struct payload_region *
region_create(size_t len, int socket_id, uint32_t serial)
{
	char name[RTE_MEMZONE_NAMESIZE];
	const struct rte_memzone *mz;
	struct payload_region *r;

	snprintf(name, sizeof(name), "sl_qp_pattern_%u", serial);
	mz = rte_memzone_reserve_aligned(name, sizeof(*r) + len, socket_id, RTE_MEMZONE_IOVA_CONTIG,
					 RTE_CACHE_LINE_SIZE);
	if (mz == NULL) {
		errno = rte_errno;
		return NULL;
	}
	r = mz->addr;
	memset(r, 0, sizeof(*r));
	r->mz = mz;
	r->len = len;
	r->iova = mz->iova + offsetof(struct payload_region, buf);
	r->shinfo.free_cb = region_free;
	r->shinfo.fcb_opaque = r;
	rte_mbuf_ext_refcnt_set(&r->shinfo, 1);
	return r;
}

/* The adapter's reference goes; the region goes with the last. */
static void
region_put(struct payload_region *r)
{
	if (r != NULL && rte_mbuf_ext_refcnt_update(&r->shinfo, -1) == 0)
		region_free(NULL, r);
}

struct sl_dp_qp *
sl_dp_qp_create(const struct sl_dp_qp_conf *conf)
{
	struct sl_dp_qp *a;
	struct sl_xport_conf xc;
	int err = ENOMEM;

	if (conf->pool == NULL || conf->max_qps == 0) {
		errno = EINVAL;
		return NULL;
	}
	a = rte_zmalloc_socket("sl_dp_qp", sizeof(*a), RTE_CACHE_LINE_SIZE, conf->socket_id);
	if (a == NULL)
		goto fail_errno;
	a->lane = conf->lane;
	a->chan = conf->chan;
	if (a->chan != NULL)
		sl_chan_lane_range(a->chan, &a->app_base, &a->n_app);
	a->started = conf->lane == NULL;
	a->user_qps = conf->exchange_qpn ? USER_QPS_IDLE : USER_QPS_OPEN;
	a->pool = conf->pool;
	a->max_qps = conf->max_qps;
	a->qpns = rte_zmalloc_socket("sl_dp_qp", sizeof(a->qpns[0]) * conf->max_qps, 0,
				     conf->socket_id);
	a->open = rte_zmalloc_socket("sl_dp_qp", sizeof(a->open[0]) * conf->max_qps, 0,
				     conf->socket_id);
	a->info = rte_zmalloc_socket("sl_dp_qp", sizeof(a->info[0]) * conf->max_qps,
				     RTE_CACHE_LINE_SIZE, conf->socket_id);
	a->conf = rte_zmalloc_socket("sl_dp_qp", sizeof(a->conf[0]) * conf->max_qps, 0,
				     conf->socket_id);
	a->before = rte_zmalloc_socket("sl_dp_qp", sizeof(a->before[0]) * conf->max_qps, 0,
				       conf->socket_id);
	if (a->qpns == NULL || a->open == NULL || a->info == NULL || a->conf == NULL ||
	    a->before == NULL)
		goto fail;
	if (conf->exchange_qpn) {
		if (conf->exchange_qpn >= conf->max_qps ||
		    (a->chan != NULL && sl_chan_lane_owns(a->chan, conf->exchange_qpn))) {
			err = EINVAL;
			goto fail;
		}
		a->ex = qp_exchange_create(conf->exchange_qpn, conf->max_qps, conf->socket_id);
		if (a->ex == NULL)
			goto fail;
	}
	if (conf->tx_attach_mbufs && conf->region_bytes) {
		static uint32_t adapters; /* memzone and mempool names are process-wide */
		uint32_t serial = __atomic_fetch_add(&adapters, 1, __ATOMIC_RELAXED);
		char name[RTE_MEMPOOL_NAMESIZE];

		a->region = region_create(conf->region_bytes, conf->socket_id, serial);
		if (a->region == NULL) {
			err = errno;
			goto fail;
		}
		snprintf(name, sizeof(name), "sl_qp_attach_%u", serial);
		a->attach_pool = rte_pktmbuf_pool_create(name, conf->tx_attach_mbufs, 0, 0, 0,
							 conf->socket_id);
		if (a->attach_pool == NULL) {
			err = rte_errno;
			goto fail;
		}
	}
	memset(&xc, 0, sizeof(xc));
	xc.max_qps = conf->max_qps;
	xc.window_pkts = conf->window_pkts;
	xc.sq_depth = conf->sq_depth;
	xc.min_frame_bytes = SL_DP_MIN_BODY;
	xc.line_bps = conf->line_bps;
	xc.pace_catchup_ns = conf->pace_catchup_ns;
	xc.line_bypass = conf->line_bypass;
	xc.frame_overhead_bytes = conf->frame_overhead_bytes;
	xc.ec_drain_bps = conf->ec_drain_bps;
	xc.ec = conf->ec;
	xc.frame = frame_bytes;
	xc.release = frame_release;
	xc.on_recv = on_recv;
	xc.on_complete = on_complete;
	xc.read_src = read_src;
	xc.ctx = a;
	a->x = sl_xport_create(&xc);
	if (a->x == NULL) {
		err = errno;
		goto fail;
	}
	return a;
fail:
	sl_dp_qp_free(a);
fail_errno:
	errno = err;
	return NULL;
}

void
sl_dp_qp_free(struct sl_dp_qp *a)
{
	if (a == NULL)
		return;
	sl_xport_free(a->x);
	qp_exchange_free(a->ex);
	region_put(a->region);
	rte_pktmbuf_free_bulk(a->spare, a->n_spare);
	rte_pktmbuf_free_bulk(a->attach_spare, a->n_attach_spare);
	if (a->attach_pool != NULL) {
		unsigned int out = rte_mempool_in_use_count(a->attach_pool);

		if (out == 0)
			rte_mempool_free(a->attach_pool);
		else
			SL_DP_LOG(WARNING,
				  "QP adapter freed with %u frames out that carry its region by "
				  "reference: their pool is left allocated",
				  out);
	}
	rte_free(a->before);
	rte_free(a->conf);
	rte_free(a->info);
	rte_free(a->open);
	rte_free(a->qpns);
	rte_free(a);
}

void
sl_dp_qp_serve(struct sl_dp_qp *a, const struct sl_dp_qp_user *u)
{
	a->user = *u;
}

uint8_t *
sl_dp_qp_region(const struct sl_dp_qp *a)
{
	return a->region != NULL ? a->region->buf : NULL;
}

int
sl_dp_qp_open(struct sl_dp_qp *a, const struct sl_xport_qp_conf *qc, uint64_t now_ns)
{
	int rc;

	if (qc->qpn >= a->max_qps || (a->ex != NULL && qc->qpn == qp_exchange_qpn(a->ex)))
		return -EINVAL;
	rc = sl_xport_qp_open(a->x, qc, now_ns); /* with an exchange: only to check qc */
	if (rc != 0)
		return rc;
	a->open[qc->qpn] = true;
	a->conf[qc->qpn] = *qc;
	a->qpns[a->n_qps++] = qc->qpn;
	if (a->user_qps == USER_QPS_OPEN)
		return 0;
	(void)sl_xport_qp_close(a->x, qc->qpn, now_ns); /* it opens once a round agrees */
	/* the exchange QP listens from the first QP on (its program and timers) */
	return a->n_qps == 1 ? qp_exchange_listen(a->ex, a->x, qc, now_ns) : 0;
}

/* --- QP info snapshots --------------------------------------------------------------------- */

static void
info_write(struct info_slot *s, const struct sl_xport_qp_info *info)
{
	uint64_t w[INFO_WORDS] = {0};
	uint32_t seq = s->seq;

	memcpy(w, info, sizeof(*info));
	__atomic_store_n(&s->seq, seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	for (unsigned int i = 0; i < INFO_WORDS; i++)
		__atomic_store_n(&s->w[i], w[i], __ATOMIC_RELAXED);
	__atomic_store_n(&s->seq, seq + 2, __ATOMIC_RELEASE);
}

int
sl_dp_qp_info_get(const struct sl_dp_qp *a, uint32_t qpn, struct sl_xport_qp_info *info)
{
	const struct info_slot *s;
	uint64_t w[INFO_WORDS];

	if (!sl_dp_qp_has(a, qpn))
		return -ENOENT;
	s = &a->info[qpn];
	for (int tries = 0; tries < 100; tries++) {
		uint32_t seq = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);

		if (seq == 0)
			return -EAGAIN;
		if (seq & 1)
			continue;
		for (unsigned int i = 0; i < INFO_WORDS; i++)
			w[i] = __atomic_load_n(&s->w[i], __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&s->seq, __ATOMIC_RELAXED) == seq) {
			memcpy(info, w, sizeof(*info));
			return 0;
		}
	}
	return -EAGAIN;
}

/* A few QPs' snapshots per poll, a round every SL_DP_QP_INFO_NS. */
static void
info_refresh(struct sl_dp_qp *a, uint64_t now_ns)
{
	struct sl_xport_qp_info info;
	unsigned int k;

	uint32_t n = a->n_qps + a->n_app, done = 0;

	if (now_ns < a->info_due_ns || n == 0)
		return;
	for (k = 0; k < SL_DP_QP_INFO_PER_POLL && a->info_next < n; k++) {
		uint32_t i = a->info_next++;
		uint32_t qpn = i < a->n_qps ? a->qpns[i] : a->app_base + (i - a->n_qps);

		memset(&info, 0, sizeof(info));
		if (sl_xport_qp_info_get(a->x, qpn, &info) == 0) {
			info_write(&a->info[qpn], &info);
			done++;
		}
	}
	sl_stat_add(&a->stats.info_refreshes, done);
	if (a->info_next == n) {
		a->info_next = 0;
		a->info_due_ns = now_ns + SL_DP_QP_INFO_NS;
	}
}
/* The user's QPs close on the endpoint (with an exchange: before a new round). */
static void
user_qps_close(struct sl_dp_qp *a, uint64_t now_ns)
{
	for (uint32_t i = 0; i < a->n_qps; i++)
		(void)sl_xport_qp_close(a->x, a->qpns[i], now_ns);
}

/* With an exchange: end its round and listen for the next one, the user's QPs closed. */
static void
exchange_restart(struct sl_dp_qp *a, uint64_t now_ns)
{
	qp_exchange_end(a->ex, a->x, now_ns);
	if (a->n_qps)
		(void)qp_exchange_listen(a->ex, a->x, &a->conf[a->qpns[0]], now_ns);
	a->user_qps = USER_QPS_IDLE;
}

/* With an exchange: carry this session's round one step further (the states: user_qps). */
static void
exchange_step(struct sl_dp_qp *a, uint64_t now_ns)
{
	switch (a->user_qps) {
	case USER_QPS_IDLE:
		if (a->n_qps == 0)
			a->user_qps = USER_QPS_OPEN;
		else if (qp_exchange_listen(a->ex, a->x, &a->conf[a->qpns[0]], now_ns) == 0 &&
			 qp_exchange_offer(a->ex, a->x, a->conf, a->qpns, a->n_qps, now_ns) == 0)
			a->user_qps = USER_QPS_OFFERED;
		return;
	case USER_QPS_OFFERED:
		switch (qp_exchange_poll(a->ex, a->conf, a->qpns, a->n_qps)) {
		case QP_EXCHANGE_PENDING:
			return;
		case QP_EXCHANGE_FAILED:
			break;
		case QP_EXCHANGE_REFUSED:
			a->user_qps = USER_QPS_REFUSED;
			sl_stat_add(&a->stats.exchange_refused, 1);
			return;
		case QP_EXCHANGE_ARRIVED:
			for (uint32_t i = 0; i < a->n_qps; i++)
				if (sl_xport_qp_open(a->x, &a->conf[a->qpns[i]], now_ns) != 0)
					sl_stat_add(&a->stats.qp_restart_failed, 1);
			a->user_qps = USER_QPS_OPENED;
			return;
		}
		break;
	case USER_QPS_OPENED:
		if (qp_exchange_acked(a->ex)) {
			a->user_qps = USER_QPS_OPEN;
			sl_stat_add(&a->stats.exchanges, 1);
			return;
		}
		if (!qp_exchange_failed(a->ex))
			return;
		user_qps_close(a, now_ns);
		break;
	default:
		return;
	}
	/* the exchange QP failed: another round, with new draws */
	exchange_restart(a, now_ns);
	sl_stat_add(&a->stats.exchange_failed, 1);
}

void
sl_dp_qp_tick(void *ctx, uint64_t now_ns)
{
	struct sl_dp_qp *a = ctx;

	if (a->chan != NULL)
		sl_chan_lane_poll(a->chan, a->x, now_ns);
	/* A port with no room builds no resend, where QP timeouts are looked at: look here. */
	if (now_ns >= a->expire_due_ns) {
		sl_xport_expire(a->x, now_ns);
		a->expire_due_ns = now_ns + SL_NS_PER_MS;
	}
}

void
sl_dp_qp_session(void *ctx, uint64_t now_ns)
{
	struct sl_dp_qp *a = ctx;
	bool was_open = a->user_qps == USER_QPS_OPEN || a->user_qps == USER_QPS_OPENED;

	for (uint32_t i = 0; i < a->n_qps; i++) {
		const struct sl_xport_qp_conf *c = &a->conf[a->qpns[i]];
		struct sl_xport_qp_stats st;
		struct sl_xport_qp_info info;

		/* The session's counters, with what the close fails (its posted, uncompleted). */
		if (was_open && sl_xport_qp_stats_get(a->x, c->qpn, &st) == 0 &&
		    sl_xport_qp_info_get(a->x, c->qpn, &info) == 0) {
			st.msgs_failed += info.sq_used;
			sl_stats_accumulate(&a->before[c->qpn], &st, &sl_xport_qp_stat_table);
			/* a QP that waits for a round stays closed: its info is the session's last
			 */
			info_write(&a->info[c->qpn], &info);
		}
		if (was_open && sl_xport_qp_close(a->x, c->qpn, now_ns) != 0) {
			sl_stat_add(&a->stats.qp_restart_failed, 1); /* refused from now on */
			continue;
		}
		/* without an exchange, it reopens from its configuration; with one, a round does */
		if (a->ex == NULL && sl_xport_qp_open(a->x, c, now_ns) != 0) {
			sl_stat_add(&a->stats.qp_restart_failed, 1);
			continue;
		}
		if (a->user.restart != NULL)
			a->user.restart(a->user.ctx, c->qpn);
		sl_stat_add(&a->stats.qp_restarts, 1);
	}
	if (a->ex != NULL)
		exchange_restart(a, now_ns);
	if (a->chan != NULL)
		sl_chan_lane_session(a->chan, a->x, now_ns);
	a->started = a->lane == NULL;
}

bool
sl_dp_qp_has(const struct sl_dp_qp *a, uint32_t qpn)
{
	struct sl_xport_qp_stats st;

	if (qpn >= a->max_qps)
		return false;
	if (a->open[qpn])
		return true;
	/* an application's QP while it is open on the endpoint (connected, or failed and not yet
	 * destroyed) */
	return a->chan != NULL && sl_chan_lane_owns(a->chan, qpn) &&
	       sl_xport_qp_stats_get(a->x, qpn, &st) == 0;
}

const struct sl_xport *
sl_dp_qp_xport(const struct sl_dp_qp *a)
{
	return a->x;
}

int
sl_dp_qp_lifetime_stats(const struct sl_dp_qp *a, uint32_t qpn, struct sl_xport_qp_stats *st)
{
	struct sl_xport_qp_stats before;
	int rc = sl_xport_qp_stats_get(a->x, qpn, st);

	if (rc != 0)
		memset(st, 0, sizeof(*st));
	if (qpn >= a->max_qps)
		return rc;
	sl_stats_snapshot(&before, &a->before[qpn], sl_xport_qp_stat_table.n);
	sl_stats_accumulate(st, &before, &sl_xport_qp_stat_table);
	return rc;
}

void
sl_dp_qp_stats_get(const struct sl_dp_qp *a, struct sl_dp_qp_stats *st)
{
	sl_stats_snapshot(st, &a->stats, sl_dp_qp_stat_table.n);
}

/* --- the lane's producer and consumer ------------------------------------------------------ */

/* Spares in spare[*n..] from mp up to want, in bulk; fewer when the pool is short (then false). */
static bool
fill(struct rte_mempool *mp, struct rte_mbuf **spare, unsigned int *n, unsigned int want)
{
	unsigned int need = want > *n ? want - *n : 0;

	while (need > 0 && rte_pktmbuf_alloc_bulk(mp, spare + *n, need) != 0)
		need /= 2;
	*n += need;
	return *n >= want;
}

/* Spare mbufs up to want; attach mbufs too where payloads may go by reference. */
static void
top_up(struct sl_dp_qp *a, unsigned int want)
{
	if (!fill(a->pool, a->spare, &a->n_spare, want))
		sl_stat_add(&a->stats.pool_short, 1);
	if (a->attach_pool != NULL) /* short: payloads are copied meanwhile */
		fill(a->attach_pool, a->attach_spare, &a->n_attach_spare, want);
}

/* Does f's payload go by reference (see the top)? */
static bool
attachable(const struct sl_dp_qp *a, const struct sl_xport_tx_frame *f)
{
	const struct payload_region *r = a->region;

	return r != NULL && f->payload_len >= SL_DP_QP_ATTACH_MIN && f->pad_bytes == 0 &&
	       f->payload >= r->buf && f->payload_len <= r->len &&
	       (size_t)(f->payload - r->buf) <= r->len - f->payload_len &&
	       rte_mbuf_ext_refcnt_read(&r->shinfo) < REGION_REFS_MAX;
}

/*
 * Build f into p, or into p and tail (attached to the payload's rest in the region) when tail is
 * not NULL. The frame's bytes on the wire, or 0 if p has no room for them (p unchanged).
 */
static uint32_t
build(struct sl_dp_qp *a, const struct sl_xport_tx_frame *f, struct rte_mbuf *p,
      struct rte_mbuf *tail)
{
	uint32_t len = (uint32_t)f->hdr_len + f->payload_len + f->pad_bytes;
	uint32_t inline_payload = f->payload_len;
	uint8_t *b;

	if (tail != NULL)
		inline_payload =
			f->hdr_len < SL_DP_QP_HEAD_BYTES ? SL_DP_QP_HEAD_BYTES - f->hdr_len : 0;
	b = len <= UINT16_MAX ? (uint8_t *)rte_pktmbuf_append(
					p, (uint16_t)(len - (f->payload_len - inline_payload)))
			      : NULL;
	if (b == NULL)
		return 0;
	rte_memcpy(b, f->hdr, f->hdr_len); /* inlined: a call costs more than these few bytes */
	if (inline_payload)
		rte_memcpy(b + f->hdr_len, f->payload, inline_payload);
	if (f->pad_bytes)
		memset(b + f->hdr_len + f->payload_len, 0, f->pad_bytes);
	if (tail != NULL) {
		struct payload_region *r = a->region;
		const uint8_t *rest = f->payload + inline_payload;
		uint16_t rest_len = (uint16_t)(f->payload_len - inline_payload);

		rte_mbuf_ext_refcnt_update(&r->shinfo, 1);
		rte_pktmbuf_attach_extbuf(tail, (void *)(uintptr_t)rest,
					  r->iova + (rte_iova_t)(rest - r->buf), rest_len,
					  &r->shinfo);
		tail->data_len = rest_len;
		tail->pkt_len = rest_len;
		rte_pktmbuf_chain(p, tail);
	}
	return len;
}

unsigned
sl_dp_qp_produce(void *ctx, uint64_t now_ns, struct rte_mbuf **m, unsigned max)
{
	struct sl_dp_qp *a = ctx;
	unsigned int n, built = 0, lost_room = 0, attached = 0;
	uint64_t bytes = 0;

	info_refresh(a, now_ns);
	if (sl_unlikely(!a->started))
		a->started = sl_dp_lane_peer_up(a->lane, now_ns);
	if (sl_unlikely(a->user_qps != USER_QPS_OPEN) && a->started)
		exchange_step(a, now_ns);
	if (a->started && a->user_qps == USER_QPS_OPEN && a->user.poll != NULL)
		a->user.poll(a->user.ctx, a->x, now_ns);
	if (max == 0 || sl_xport_next_deadline(a->x) > now_ns)
		return 0;
	max = SL_MIN(max, (unsigned int)SL_DP_BURST);
	top_up(a, max);
	if (a->n_spare == 0) {
		/* Nothing asked of the endpoint, so nothing is lost; the next poll retries. */
		return 0;
	}
	n = sl_xport_tx_burst(a->x, now_ns, a->tx, SL_MIN(max, a->n_spare));
	for (unsigned int i = 0; i < n; i++) {
		const struct sl_xport_tx_frame *f = &a->tx[i];
		struct rte_mbuf *p = a->spare[a->n_spare - 1];
		struct rte_mbuf *tail = a->n_attach_spare > 0 && attachable(a, f)
						? a->attach_spare[a->n_attach_spare - 1]
						: NULL;
		uint32_t len = build(a, f, p, tail);

		if (len == 0) {
			lost_room++;
			continue;
		}
		a->n_spare--;
		a->n_attach_spare -= tail != NULL;
		attached += tail != NULL;
		bytes += len;
		m[built++] = p;
	}
	if (lost_room)
		sl_stat_add(&a->stats.tx_lost, lost_room);
	if (built) {
		sl_stat_add(&a->stats.tx_frames, built);
		sl_stat_add(&a->stats.tx_bytes, bytes);
	}
	if (attached)
		sl_stat_add(&a->stats.tx_attached, attached);
	return built;
}

unsigned
sl_dp_qp_consume(void *ctx, uint64_t now_ns, struct rte_mbuf **m, unsigned n)
{
	struct sl_dp_qp *a = ctx;
	/* a frame the path marked CE (encap = udp, lane.c): the mark goes where the transport
	 * reads it, now that the link has verified the frame */
	uint64_t ce = a->lane != NULL ? a->lane->port->ce_flag : 0;
	uint64_t bytes = 0;

	for (unsigned int done = 0; done < n;) {
		unsigned int k = SL_MIN(n - done, (unsigned int)SL_DP_BURST);

		for (unsigned int i = 0; i < k; i++) {
			struct rte_mbuf *p = m[done + i];

			if (sl_unlikely(p->ol_flags & ce))
				sl_xhdr_mark_ce(rte_pktmbuf_mtod(p, uint8_t *), p->data_len);

			a->rx[i] = (struct sl_xport_rx_frame){
				.buf = rte_pktmbuf_mtod(p, const uint8_t *),
				.len = p->data_len,
				.handle = p,
			};
			bytes += p->data_len;
		}
		sl_xport_rx_burst(a->x, now_ns, a->rx, k);
		done += k;
	}
	sl_stat_add(&a->stats.rx_frames, n);
	sl_stat_add(&a->stats.rx_bytes, bytes);
	return n;
}
