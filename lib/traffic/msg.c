/* SPDX-License-Identifier: BSD-3-Clause */
/* msg.c - built-in message generator and checker of an endpoint (sl_traffic.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sl_traffic.h"

static const struct sl_stat_desc stat_desc[] = {
	SL_STAT(struct sl_traffic_msg_stats, posted, "messages posted"),
	SL_STAT(struct sl_traffic_msg_stats, completed, "messages acknowledged whole"),
	SL_STAT(struct sl_traffic_msg_stats, failed,
		"messages completed with an error (QP failed)"),
	SL_STAT(struct sl_traffic_msg_stats, bytes_completed, "message bytes acknowledged"),
	SL_STAT(struct sl_traffic_msg_stats, received, "messages delivered to the checker"),
	SL_STAT(struct sl_traffic_msg_stats, checked,
		"messages delivered once, in order, length and bytes right"),
	SL_STAT(struct sl_traffic_msg_stats, bytes_received, "message bytes delivered"),
	SL_STAT(struct sl_traffic_msg_stats, out_of_order,
		"segments whose msn or offset does not continue the stream"),
	SL_STAT(struct sl_traffic_msg_stats, bad_length, "messages of the wrong length"),
	SL_STAT(struct sl_traffic_msg_stats, bad_content, "messages with a wrong byte"),
	SL_STAT(struct sl_traffic_msg_stats, first_rx_ns, "time of the first delivery, ns"),
	SL_STAT(struct sl_traffic_msg_stats, last_rx_ns, "time of the last delivery, ns"),
};
SL_STAT_TABLE_DEFINE(sl_traffic_msg_stat_table, struct sl_traffic_msg_stats, stat_desc);

struct tqp {
	bool send, recv;
	bool queued;        /**< in the ready ring */
	uint32_t peer_qpn;  /**< the receiver's QP: names the stream this QP sends */
	uint64_t posted;    /**< messages posted */
	uint64_t msn_base;  /**< posted when the session began: the next one's msn is the rest */
	uint64_t completed; /**< completions, successful or not */
	/* checker: the message in progress */
	uint32_t rx_msn;
	uint32_t rx_off;
	bool rx_bad;                    /**< it already failed a check */
	struct sl_traffic_msg_stats st; /**< this QP's share of the counters */
};

struct sl_traffic_msg {
	struct sl_traffic_msg_conf c;
	uint8_t *pattern; /**< sl_traffic_msg_pattern_bytes(), filled once */
	bool own_pattern; /**< allocated here (conf.pattern was NULL) */
	struct tqp *q;    /**< [max_qps] */
	/* Sending QPs that may have room and messages left, each once, served in turn: posting
	 * costs what it posts, not a scan of every QP. A completion puts its QP back. */
	uint32_t *ready; /**< [max_qps] ring of QPNs */
	uint32_t ready_head, ready_count;
	uint32_t nsend; /**< sending QPs */
	uint32_t nrecv; /**< receiving QPs */
	uint64_t done_qps;
	struct sl_traffic_msg_stats st;
	struct sl_hist latency_ns;
};

/* Count n in member m of the endpoint's counters and of QP q's. */
#define COUNT(t, q, m, n)                                                                          \
	do {                                                                                       \
		sl_stat_add(&(t)->st.m, n);                                                        \
		sl_stat_add(&(q)->st.m, n);                                                        \
	} while (0)

/* A delivery at now_ns in a window of counters. */
static void
rx_time(struct sl_traffic_msg_stats *st, uint64_t now_ns)
{
	if (st->first_rx_ns == 0)
		__atomic_store_n(&st->first_rx_ns, now_ns, __ATOMIC_RELAXED);
	__atomic_store_n(&st->last_rx_ns, now_ns, __ATOMIC_RELAXED);
}

/* splitmix64 (Steele et al. 2014): a message's size and start from (seed, stream, msn). */
static uint64_t
mix(uint64_t z)
{
	z += UINT64_C(0x9e3779b97f4a7c15);
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static uint64_t
msg_hash(const struct sl_traffic_msg *t, uint32_t stream, uint32_t msn)
{
	return mix(t->c.seed ^ mix(((uint64_t)stream << 32) | msn));
}

/* Log-uniform: a power-of-two band first, then a size within it. */
static uint32_t
msg_size(const struct sl_traffic_msg *t, uint64_t h)
{
	uint32_t lo = t->c.min_bytes, hi = t->c.max_bytes, e_lo, e_hi, e, b_lo, b_hi;

	if (lo == hi)
		return lo;
	e_lo = 31 - (uint32_t)__builtin_clz(lo);
	e_hi = 31 - (uint32_t)__builtin_clz(hi);
	e = e_lo + (uint32_t)(h % (e_hi - e_lo + 1));
	b_lo = SL_MAX(lo, UINT32_C(1) << e);
	b_hi = e >= 31 ? hi : SL_MIN(hi, (UINT32_C(1) << (e + 1)) - 1);
	return b_lo + (uint32_t)((h >> 32) % (b_hi - b_lo + 1));
}

static uint32_t
msg_start(uint64_t h)
{
	return (uint32_t)((h >> 8) % (SL_TRAFFIC_MSG_START_SPAN / 8)) * 8;
}

struct sl_traffic_msg *
sl_traffic_msg_create(const struct sl_traffic_msg_conf *conf)
{
	struct sl_traffic_msg *t;
	uint64_t x;
	size_t n;

	if (conf->max_qps == 0 || conf->min_bytes == 0 || conf->min_bytes > conf->max_bytes ||
	    conf->max_bytes > SL_XPORT_MSG_MAX) {
		errno = EINVAL;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return NULL;
	t->c = *conf;
	n = sl_traffic_msg_pattern_bytes(conf);
	t->own_pattern = conf->pattern == NULL;
	t->pattern = t->own_pattern ? malloc(n) : conf->pattern;
	t->q = calloc(conf->max_qps, sizeof(*t->q));
	t->ready = calloc(conf->max_qps, sizeof(*t->ready));
	if (t->pattern == NULL || t->q == NULL || t->ready == NULL) {
		sl_traffic_msg_free(t);
		errno = ENOMEM;
		return NULL;
	}
	x = mix(conf->seed);
	for (size_t i = 0; i < n; i += 8) {
		x = mix(x);
		memcpy(t->pattern + i, &x, SL_MIN(8, n - i));
	}
	sl_hist_reset(&t->latency_ns);
	return t;
}

void
sl_traffic_msg_free(struct sl_traffic_msg *t)
{
	if (t == NULL)
		return;
	if (t->own_pattern)
		free(t->pattern);
	free(t->ready);
	free(t->q);
	free(t);
}

/* Queue a sending QP that has messages left, unless it is queued already. */
static void
ready_push(struct sl_traffic_msg *t, uint32_t qpn)
{
	struct tqp *q = &t->q[qpn];

	if (!q->send || q->queued || (t->c.msgs && q->posted >= t->c.msgs))
		return;
	q->queued = true;
	t->ready[(t->ready_head + t->ready_count++) % t->c.max_qps] = qpn;
}

int
sl_traffic_msg_qp(struct sl_traffic_msg *t, uint32_t qpn, uint32_t peer_qpn, unsigned roles)
{
	const unsigned all = SL_TRAFFIC_MSG_SEND | SL_TRAFFIC_MSG_CHECK;
	struct tqp *q;

	if (qpn >= t->c.max_qps || peer_qpn > SL_XHDR_QPN_MAX || t->q[qpn].send || t->q[qpn].recv ||
	    roles == 0 || (roles & ~all) != 0)
		return -EINVAL;
	q = &t->q[qpn];
	q->send = (roles & SL_TRAFFIC_MSG_SEND) != 0;
	q->recv = (roles & SL_TRAFFIC_MSG_CHECK) != 0;
	q->peer_qpn = peer_qpn;
	t->nsend += q->send;
	t->nrecv += q->recv;
	ready_push(t, qpn);
	return 0;
}

int
sl_traffic_msg_qp_restart(struct sl_traffic_msg *t, uint32_t qpn)
{
	struct tqp *q;

	if (qpn >= t->c.max_qps || !(t->q[qpn].send || t->q[qpn].recv))
		return -EINVAL;
	q = &t->q[qpn];
	q->msn_base = q->posted;
	q->rx_msn = 0;
	q->rx_off = 0;
	q->rx_bad = false;
	/* Its send queue is empty again. A QP that failed before (timeout) had its last post
	 * refused, and waits for a completion that only a message out would bring. */
	ready_push(t, qpn);
	return 0;
}

unsigned
sl_traffic_msg_post(struct sl_traffic_msg *t, struct sl_xport *x, uint64_t now_ns, unsigned budget)
{
	unsigned posted = 0;

	while (posted < budget && t->ready_count) {
		uint32_t qpn = t->ready[t->ready_head];
		struct tqp *q = &t->q[qpn];
		uint32_t room = sl_xport_sq_room(x, qpn); /* never post into a full queue */

		t->ready_head = (t->ready_head + 1) % t->c.max_qps;
		t->ready_count--;
		q->queued = false;
		while (room && posted < budget && (t->c.msgs == 0 || q->posted < t->c.msgs)) {
			uint64_t h = msg_hash(t, q->peer_qpn, (uint32_t)(q->posted - q->msn_base));

			if (sl_xport_post_send(x, qpn, t->pattern + msg_start(h), msg_size(t, h),
					       q->posted, now_ns) != 0) {
				room = 0; /* refused (failed QP): a completion brings it back */
				break;
			}
			q->posted++;
			sl_stat_add(&q->st.posted, 1);
			posted++;
			room--;
		}
		if (room)
			ready_push(t, qpn); /* the budget ran out first: its turn comes again */
	}
	sl_stat_add(&t->st.posted, posted);
	return posted;
}

void
sl_traffic_msg_on_complete(void *ctx, const struct sl_xport_cqe *c, uint64_t now_ns)
{
	struct sl_traffic_msg *t = ctx;
	struct tqp *q = &t->q[c->qpn];

	q->completed++;
	if (t->c.msgs && q->completed == t->c.msgs)
		t->done_qps++;
	ready_push(t, c->qpn); /* its send queue has room again */
	if (c->status != 0) {
		COUNT(t, q, failed, 1);
		return;
	}
	COUNT(t, q, completed, 1);
	COUNT(t, q, bytes_completed, c->len);
	sl_hist_add(&t->latency_ns, now_ns - c->post_ns);
}

int
sl_traffic_msg_on_recv(void *ctx, const struct sl_xport_rx_seg *seg, uint64_t now_ns)
{
	struct sl_traffic_msg *t = ctx;
	struct tqp *q = &t->q[seg->qpn];
	uint64_t h;
	uint32_t size;

	if (seg->first) {
		if (seg->msn != q->rx_msn)
			COUNT(t, q, out_of_order, 1);
		q->rx_msn = seg->msn; /* judge this message on its own */
		q->rx_off = 0;
		q->rx_bad = false;
	} else if (seg->msn != q->rx_msn || seg->offset != q->rx_off) {
		COUNT(t, q, out_of_order, 1);
		q->rx_bad = true;
	}
	h = msg_hash(t, seg->qpn, seg->msn);
	size = msg_size(t, h);
	if (q->rx_off + seg->len > size) {
		if (!q->rx_bad)
			COUNT(t, q, bad_length, 1);
		q->rx_bad = true;
	} else if (t->c.check &&
		   memcmp(seg->data, t->pattern + msg_start(h) + q->rx_off, seg->len) != 0) {
		if (!q->rx_bad)
			COUNT(t, q, bad_content, 1);
		q->rx_bad = true;
	}
	q->rx_off += seg->len;
	COUNT(t, q, bytes_received, seg->len);
	rx_time(&t->st, now_ns);
	rx_time(&q->st, now_ns);
	if (!seg->last)
		return 0;
	if (q->rx_off != size && !q->rx_bad) {
		COUNT(t, q, bad_length, 1);
		q->rx_bad = true;
	}
	COUNT(t, q, received, 1);
	if (!q->rx_bad) {
		COUNT(t, q, checked, 1);
	}
	q->rx_msn = seg->msn + 1;
	q->rx_off = 0;
	q->rx_bad = false;
	return 0;
}

bool
sl_traffic_msg_done(const struct sl_traffic_msg *t)
{
	return t->c.msgs && t->done_qps == t->nsend;
}

bool
sl_traffic_msg_finished(const struct sl_traffic_msg *t)
{
	return sl_traffic_msg_done(t) && t->st.received >= t->c.msgs * t->nrecv;
}

void
sl_traffic_msg_stats_get(const struct sl_traffic_msg *t, struct sl_traffic_msg_stats *st)
{
	sl_stats_snapshot(st, &t->st, sl_traffic_msg_stat_table.n);
}

uint64_t
sl_traffic_msg_qp_checked(const struct sl_traffic_msg *t, uint32_t qpn)
{
	return qpn < t->c.max_qps ? __atomic_load_n(&t->q[qpn].st.checked, __ATOMIC_RELAXED) : 0;
}

int
sl_traffic_msg_qp_stats_get(const struct sl_traffic_msg *t, uint32_t qpn,
			    struct sl_traffic_msg_stats *st)
{
	if (qpn >= t->c.max_qps)
		return -ENOENT;
	sl_stats_snapshot(st, &t->q[qpn].st, sl_traffic_msg_stat_table.n);
	return 0;
}

const struct sl_hist *
sl_traffic_msg_latency(const struct sl_traffic_msg *t)
{
	return &t->latency_ns;
}
