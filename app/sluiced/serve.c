/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * serve.c - what sluiced's lanes carry, from its configuration: the link test traffic
 * ([traffic]), the built-in queue pairs and their transport programs ([qp], [ec]), and the
 * applications' channel ([api]: a lane half on each of port 0's lanes, the control half's
 * server).
 * Each step returns 0, or -1 after a `file:line:` message on stderr.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <rte_ethdev.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "sluiced.h"

/* Test traffic on every lane of every port, when [traffic] mode is not off. 0 or -1. */
int
sluiced_setup_traffic(struct sluiced *d)
{
	const struct sluiced_traffic_conf *tc = &d->conf.traffic;

	if (tc->mode == SLUICED_TRAFFIC_OFF)
		return 0;
	for (unsigned int i = 0; i < d->nb_ports; i++) {
		struct sl_dp_port *p = &d->port[i];
		struct sl_traffic_link_conf c = {
			.send = tc->mode == SLUICED_TRAFFIC_SEND ||
				tc->mode == SLUICED_TRAFFIC_BOTH,
			.check = tc->mode == SLUICED_TRAFFIC_CHECK ||
				 tc->mode == SLUICED_TRAFFIC_BOTH,
			.body_bytes = (uint16_t)tc->body_bytes,
			.rate_bps = tc->rate_bps,
			.frames = tc->frames,
			.consume_bps = tc->consume_bps,
			.pool = p->lane[0].pool,
		};

		d->traffic[i] =
			rte_zmalloc_socket("sl_traffic", sizeof(*d->traffic[i]) * p->nb_queues,
					   RTE_CACHE_LINE_SIZE, p->socket_id);
		if (d->traffic[i] == NULL) {
			LOG(ERR, "no memory for test traffic state");
			return -1;
		}
		for (uint16_t q = 0; q < p->nb_queues; q++) {
			if (sl_traffic_link_init(&d->traffic[i][q], &c) != 0) {
				fprintf(stderr,
					"%s:%u: body_bytes: %u bytes do not fit in one mbuf "
					"of mbuf_data_room = %u after %u bytes of headroom\n",
					d->conf.path, tc->body_line, tc->body_bytes,
					d->conf.mbuf_data_room, RTE_PKTMBUF_HEADROOM);
				return -1;
			}
			p->lane[q].app = (struct sl_dp_app){
				.produce = sl_traffic_link_produce,
				.consume = sl_traffic_link_consume,
				.ctx = &d->traffic[i][q],
			};
		}
	}
	return 0;
}

/* What the built-in traffic does with each QP of a [qp] direction (enum sl_traffic_msg_role). */
static unsigned
qp_roles(unsigned int direction)
{
	switch ((enum sluiced_qp_direction)direction) {
	case SLUICED_QP_SEND:
		return SL_TRAFFIC_MSG_SEND;
	case SLUICED_QP_RECV:
		return SL_TRAFFIC_MSG_CHECK;
	case SLUICED_QP_BOTH:
		break;
	}
	return SL_TRAFFIC_MSG_SEND | SL_TRAFFIC_MSG_CHECK;
}

/*
 * The mbufs port p's QP adapters attach payloads to (lib/dp/qp.c), per lane: as many as a lane
 * can hold frames (its replay ring, a TX ring, the adapter's and the lane's bursts), each an
 * mbuf with no data room, 128 B. 0 (every payload copied) unless the port sends chains and the
 * link's check reads no more of a body than the first mbuf of a chain holds.
 */
static uint32_t
attach_mbufs(const struct sluiced *d, const struct sl_dp_port *p,
	     const struct sluiced_port_conf *pc)
{
	if (!p->tx_chains || d->link.fmt.scope_bytes > SL_DP_VCODE_HDR_BYTES)
		return 0;
	return (UINT32_C(1) << d->link.ring_order) + pc->tx_desc + 3 * SL_DP_BURST;
}

/* The QP conf of qpn from [qp]. */
static struct sl_xport_qp_conf
qp_conf(const struct sluiced_qp_conf *qc, uint32_t qpn)
{
	const struct sl_proto_ops *ops = sl_proto_find(qc->proto_name[qpn % qc->nb_protos]);
	bool grant = ops != NULL && ops->credit == SL_CREDIT_GRANT;

	return (struct sl_xport_qp_conf){
		.qpn = qpn,
		.peer_qpn = qpn,
		.proto = qc->proto_name[qpn % qc->nb_protos],
		.seg_bytes = qc->seg_bytes,
		.recv_mode = (uint8_t)qc->recv, /* melo|gbn|ec: SL_RECV_MELO, SL_RECV_GBN,
						 * SL_XPORT_RECV_EC */
		.init_rate_bps = qc->rate_bps,
		.max_rate_bps = grant ? 0 : qc->rate_limit_bps[qpn % qc->nb_limits],
		.rto_ns = qc->rto_ns,
		.timeout_ns = qc->timeout_ns,
		.param = {qc->param[0], qc->param[1], qc->param[2], qc->param[3]},
	};
}

/*
 * seg_bytes of payload and a transport header of up to SL_XHDR_MAX_LEN fit one mbuf after its
 * headroom. 0, or -1 after a `file:line: seg_bytes:` message.
 */
static int
seg_fits(const struct sluiced *d, uint32_t seg_bytes, unsigned int line)
{
	uint32_t room = (uint32_t)d->conf.mbuf_data_room - RTE_PKTMBUF_HEADROOM;

	if (room >= SL_XHDR_MAX_LEN && seg_bytes <= room - SL_XHDR_MAX_LEN)
		return 0;
	fprintf(stderr,
		"%s:%u: seg_bytes: %u payload bytes and a transport header of up to %u do not fit "
		"in one mbuf of mbuf_data_room = %u after %u bytes of headroom\n",
		d->conf.path, line, seg_bytes, SL_XHDR_MAX_LEN, d->conf.mbuf_data_room,
		RTE_PKTMBUF_HEADROOM);
	return -1;
}

/*
 * [api]: the key table and a lane half on each of port 0's lanes, each able to carry any of the
 * applications' QPNs, which follow [qp]'s and their exchange QP (sluiced_app_qpn_base()): a QP
 * is placed on its lane when it connects (lib/chan/srv.c, "Lanes").
 * 0, or -1 after a message.
 */
static int
setup_chan(struct sluiced *d)
{
	const struct sluiced_api_conf *ac = &d->conf.api;
	struct sl_chan_lane_conf c = {
		.qpn_base = sluiced_app_qpn_base(&d->conf),
		.qps = ac->qps,
		.sq_depth_max = SL_CHAN_QP_DEPTH_MAX,
		.rq_depth_max = SL_CHAN_QP_DEPTH_MAX,
		.stash_bytes = ac->stash_bytes,
		.stash_qp_bytes = ac->stash_qp_bytes,
		.client_stash_bytes = ac->client_stash_bytes,
	};

	if (seg_fits(d, ac->seg_bytes, ac->seg_line ? ac->seg_line : ac->line) != 0)
		return -1;
	d->mrs = sl_chan_mrs_create(ac->mrs);
	if (d->mrs == NULL) {
		fprintf(stderr, "%s:%u: [api]: cannot create the key table: %s\n", d->conf.path,
			ac->line, strerror(errno));
		return -1;
	}
	c.mrs = d->mrs;
	for (uint16_t q = 0; q < d->port[0].nb_queues; q++) {
		c.index = q;
		d->chan[q] = sl_chan_lane_create(&c);
		if (d->chan[q] == NULL) {
			fprintf(stderr,
				"%s:%u: [api]: cannot create the lane half of lane %u: %s\n",
				d->conf.path, ac->line, q, strerror(errno));
			return -1;
		}
		d->nb_chans = q + 1u;
	}
	return 0;
}

/* [ec]'s drain rate, bits/s: the link's rate when 0. */
static uint64_t
ec_drain_bps(const struct sluiced *d)
{
	return d->conf.ec.drain_bps ? d->conf.ec.drain_bps : d->conf.link.rate_bps;
}

/* The endpoint-congestion target of [ec] (max_conns is the endpoint's). */
static struct sl_ec_conf
ec_conf(const struct sluiced_ec_conf *ec)
{
	return (struct sl_ec_conf){
		.queue_bytes = ec->queue_bytes,
		.threshold_bytes = ec->threshold_bytes,
		.policy = ec->policy == SLUICED_EC_DACK,
		.nack = ec->policy != SLUICED_EC_TIMEOUT,
		.iack_at_processing = ec->iack_at == 1,
		.fair_period_ns = ec->fair_period_ns,
		.fair_ratio_pct = ec->fair_ratio_pct,
	};
}

/*
 * The send queue of the built-in traffic's QPs: messages one may have posted and not completed.
 * A paced QP that runs dry on schedule restarts at the pacer's system time, idling earns no
 * credit (docs/pacer.md, "Catch-up"), so a QP whose messages are all in flight while its peer's
 * lcore is descheduled, holding the acknowledgments, loses that time for good. Enough messages
 * that the fastest QP limited below the line has pace_catchup_us plus the link's RTT of them in
 * flight (at the mean message size) keep it sending through such a stall; at least the
 * endpoint's default, at most SLUICED_QP_SQ_MAX (memory: that many send-queue entries per QP).
 */
static uint32_t
qp_sq_depth(const struct sluiced *d)
{
	const struct sluiced_qp_conf *qc = &d->conf.qp;
	uint64_t msg_bytes = ((uint64_t)qc->msg_min_bytes + qc->msg_max_bytes + 1) / 2, fastest = 0;
	uint64_t in_flight_bytes, msgs;

	for (unsigned int i = 0; i < qc->nb_limits; i++)
		if (qc->rate_limit_bps[i] < d->conf.link.rate_bps)
			fastest = SL_MAX(fastest, qc->rate_limit_bps[i]);
	in_flight_bytes = fastest / 8 * ((qc->catchup_ns + d->conf.link.rtt_ns) / SL_NS_PER_US) /
			  (SL_NS_PER_S / SL_NS_PER_US);
	msgs = (in_flight_bytes + msg_bytes - 1) / msg_bytes;
	return (uint32_t)sl_align_pow2(
		SL_MIN(SL_MAX(msgs, SL_XPORT_SQ_DEFAULT), SLUICED_QP_SQ_MAX));
}

/*
 * Queue pairs: with [qp] count, on every port, lane q of a port gets an endpoint with the QPNs
 * that are q modulo the lanes, each talking to the peer's QP of the same number; with [api],
 * each of port 0's lanes gets one in any case, able to carry any of the applications' QPNs.
 * 0, or -1 after a message (configuration errors name the file and line).
 */
int
sluiced_setup_qps(struct sluiced *d)
{
	const struct sluiced_qp_conf *qc = &d->conf.qp;
	uint64_t now = sl_tsc_clock_now_ns(&d->clock);

	if (qc->count && seg_fits(d, qc->seg_bytes, qc->seg_line) != 0)
		return -1;
	if (d->conf.api.enable && setup_chan(d) != 0)
		return -1;
	for (unsigned int i = 0; i < d->nb_ports; i++) {
		struct sl_dp_port *p = &d->port[i];

		for (uint16_t q = 0; q < p->nb_queues; q++) {
			struct sl_chan_lane *chan = i == 0 && q < d->nb_chans ? d->chan[q] : NULL;
			uint32_t max_qps =
				sluiced_app_qpn_base(&d->conf) + (chan ? d->conf.api.qps : 0);
			struct sl_traffic_msg_conf tc = {
				.max_qps = max_qps,
				.min_bytes = qc->msg_min_bytes,
				.max_bytes = qc->msg_max_bytes,
				.msgs = qc->msgs,
				.seed = qc->seed,
				.check = qc->check != 0,
			};
			struct sl_dp_qp_conf c = {
				.lane = &p->lane[q],
				.pool = p->lane[q].pool,
				.socket_id = p->socket_id,
				.max_qps = max_qps,
				.chan = chan,
				.exchange_qpn = sluiced_exchange_qpn(&d->conf),
				.window_pkts = qc->window_pkts,
				.sq_depth = qp_sq_depth(d),
				.line_bps = d->conf.link.rate_bps,
				.pace_catchup_ns = qc->catchup_ns,
				.line_bypass = qc->line_bypass != 0,
				.frame_overhead_bytes = (uint32_t)sl_wire_hdr_len(&d->link.fmt) +
							sl_dp_port_wire_overhead(p),
				.ec_drain_bps = qc->recv == SL_XPORT_RECV_EC ? ec_drain_bps(d) : 0,
				.ec = ec_conf(&d->conf.ec),
				.region_bytes = sl_traffic_msg_pattern_bytes(&tc),
				.tx_attach_mbufs = attach_mbufs(d, p, &d->conf.port[i]),
			};
			struct sl_traffic_qps *t = NULL;
			struct sl_dp_qp *a;

			if (q >= qc->count && chan == NULL)
				continue;
			a = sl_dp_qp_create(&c);
			if (a == NULL) {
				fprintf(stderr,
					"%s:%u: count: %s: cannot create the endpoint of lane "
					"%u: %s\n",
					d->conf.path, qc->count_line, p->name, q, strerror(errno));
				return -1;
			}
			d->qp[i][q] = a;
			if (q < qc->count) {
				t = sl_traffic_qps_create(a, &tc);
				if (t == NULL) {
					fprintf(stderr,
						"%s:%u: count: %s: cannot create the traffic of "
						"lane %u: %s\n",
						d->conf.path, qc->count_line, p->name, q,
						strerror(errno));
					return -1;
				}
				d->msgs[i][q] = t;
			}
			for (uint32_t qpn = q; qpn < qc->count; qpn += p->nb_queues) {
				struct sl_xport_qp_conf xc = qp_conf(qc, qpn);
				int rc = sl_traffic_qps_open(t, &xc, qp_roles(qc->direction), now);

				if (rc != 0) {
					fprintf(stderr, "%s:%u: count: %s: QP %u (%s): %s\n",
						d->conf.path, qc->count_line, p->name, qpn,
						xc.proto, strerror(-rc));
					return -1;
				}
			}
			p->lane[q].app = (struct sl_dp_app){
				.produce = sl_dp_qp_produce,
				.consume = sl_dp_qp_consume,
				.session = sl_dp_qp_session,
				.tick = sl_dp_qp_tick,
				.ctx = a,
			};
		}
	}
	return 0;
}

/* lib/chan's log lines, at its syslog level, into sluice.daemon's log. */
static void
api_log(void *ctx, int level, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	(void)ctx;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	rte_log((uint32_t)level + 1, sluiced_logtype, "sluiced: api: %s\n", buf);
}

/* [api]: listen on the control socket (the thread starts with the lanes). 0 or -1. */
int
sluiced_setup_srv(struct sluiced *d)
{
	const struct sluiced_api_conf *ac = &d->conf.api;
	struct sl_chan_srv_conf c = {
		.socket_path = ac->socket,
		.mode = (mode_t)ac->mode_bits,
		.uid = ac->uid < 0 ? (uid_t)-1 : (uid_t)ac->uid,
		.gid = ac->gid < 0 ? (gid_t)-1 : (gid_t)ac->gid,
		.n_allow_uids = ac->n_allow_uids,
		.n_allow_gids = ac->n_allow_gids,
		.max_clients = ac->clients,
		.max_mrs = ac->mrs,
		.max_cqs = ac->cqs,
		.client_mrs = ac->client_mrs,
		.client_mr_bytes = ac->client_mr_bytes,
		.client_cqs = ac->client_cqs,
		.client_qps = ac->client_qps,
		.uid_clients = ac->uid_clients,
		.hello_timeout_ns = ac->hello_timeout_ns,
		.host = d->conf.name,
		.default_program = ac->program,
		.seg_bytes = ac->seg_bytes,
		.stash_bytes = ac->stash_bytes,
		.frame_overhead_bytes = sl_wire_hdr_len(&d->link.fmt) + SL_DP_ETH_WIRE_BYTES,
		.rto_ns = ac->rto_ns,
		.timeout_ns = ac->timeout_ns,
		.qpn_base = sluiced_app_qpn_base(&d->conf),
		.qps = ac->qps,
		.log = api_log,
	};

	static_assert(SLUICED_API_ALLOW_MAX == SL_CHAN_ALLOW_MAX, "the allow lists' bound");
	if (!ac->enable)
		return 0;
	for (uint32_t i = 0; i < ac->n_allow_uids; i++)
		c.allow_uids[i] = (uid_t)ac->allow_uids[i];
	for (uint32_t i = 0; i < ac->n_allow_gids; i++)
		c.allow_gids[i] = (gid_t)ac->allow_gids[i];
	d->srv = sl_chan_srv_create(&c, d->chan, d->nb_chans, d->mrs);
	if (d->srv == NULL) {
		fprintf(stderr, "%s:%u: socket: cannot listen at '%s': %s\n", d->conf.path,
			ac->line, ac->socket, strerror(errno));
		return -1;
	}
	LOG(INFO, "api: applications attach at %s (QPN %u..%u)", ac->socket, c.qpn_base,
	    c.qpn_base + c.qps - 1);
	return 0;
}
