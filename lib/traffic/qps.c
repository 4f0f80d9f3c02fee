/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qps.c - the built-in QPs of a lane: message traffic (msg.c) as the user of the lane's QP
 * adapter (sl_dp_qp_serve()). The adapter calls back on the lane's lcore: arrivals and
 * completions go to the checker and the generator, each poll posts at most
 * SL_TRAFFIC_POST_BUDGET messages, and a QP reopened in a new link session restarts its stream.
 * Whether the traffic has finished is published with a release store for --exit-when-done,
 * which the main lcore reads.
 *
 * The budget is one transmit burst of one-packet messages: posting more than a poll can send
 * only lengthens the send queues (with 1000 QPs, 64 a poll halved the rate of 64 B messages over
 * memif against 32), and 16 left a single QP unable to fill a burst.
 */
#include <errno.h>
#include <stdlib.h>

#include "sl_traffic.h"

struct sl_traffic_qps {
	struct sl_dp_qp *a;
	struct sl_traffic_msg *t;
	bool finished; /**< the traffic finished (written by the lane's lcore) */
};

static int
qps_on_recv(void *ctx, const struct sl_xport_rx_seg *seg, uint64_t now_ns)
{
	struct sl_traffic_qps *q = ctx;

	return sl_traffic_msg_on_recv(q->t, seg, now_ns);
}

static void
qps_on_complete(void *ctx, const struct sl_xport_cqe *c, uint64_t now_ns)
{
	struct sl_traffic_qps *q = ctx;

	sl_traffic_msg_on_complete(q->t, c, now_ns);
}

static void
qps_poll(void *ctx, struct sl_xport *x, uint64_t now_ns)
{
	struct sl_traffic_qps *q = ctx;

	sl_traffic_msg_post(q->t, x, now_ns, SL_TRAFFIC_POST_BUDGET);
	if (sl_unlikely(!q->finished) && sl_traffic_msg_finished(q->t))
		__atomic_store_n(&q->finished, true, __ATOMIC_RELEASE);
}

static void
qps_restart(void *ctx, uint32_t qpn)
{
	struct sl_traffic_qps *q = ctx;

	sl_traffic_msg_qp_restart(q->t, qpn);
}

struct sl_traffic_qps *
sl_traffic_qps_create(struct sl_dp_qp *a, const struct sl_traffic_msg_conf *conf)
{
	struct sl_traffic_msg_conf tc = *conf;
	struct sl_traffic_qps *q;
	int err;

	if (a == NULL) {
		errno = EINVAL;
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (q == NULL)
		return NULL;
	tc.pattern = sl_dp_qp_region(a);
	q->a = a;
	q->t = sl_traffic_msg_create(&tc);
	if (q->t == NULL) {
		err = errno;
		free(q);
		errno = err;
		return NULL;
	}
	sl_dp_qp_serve(a, &(struct sl_dp_qp_user){
				  .on_recv = qps_on_recv,
				  .on_complete = qps_on_complete,
				  .poll = qps_poll,
				  .restart = qps_restart,
				  .ctx = q,
			  });
	return q;
}

void
sl_traffic_qps_free(struct sl_traffic_qps *q)
{
	if (q == NULL)
		return;
	sl_dp_qp_serve(q->a, &(struct sl_dp_qp_user){0});
	sl_traffic_msg_free(q->t);
	free(q);
}

int
sl_traffic_qps_open(struct sl_traffic_qps *q, const struct sl_xport_qp_conf *xc, unsigned roles,
		    uint64_t now_ns)
{
	int rc = sl_dp_qp_open(q->a, xc, now_ns);

	return rc != 0 ? rc : sl_traffic_msg_qp(q->t, xc->qpn, xc->peer_qpn, roles);
}

const struct sl_traffic_msg *
sl_traffic_qps_msgs(const struct sl_traffic_qps *q)
{
	return q->t;
}

bool
sl_traffic_qps_finished(const struct sl_traffic_qps *q)
{
	return __atomic_load_n(&q->finished, __ATOMIC_ACQUIRE);
}
