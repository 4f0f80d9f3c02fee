/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * exchange.h - how the QP adapter (qp.c) and its connection exchange (exchange.c) meet. Not part
 * of any contract: sl_dp.h is.
 */
#ifndef SL_DP_EXCHANGE_H
#define SL_DP_EXCHANGE_H

#include <stdbool.h>
#include <stdint.h>

#include "sl_xport.h"

struct qp_exchange;

/*
 * An exchange on QP qpn of the endpoint, for at most max_qps QPs: NULL and errno (ENOMEM) on
 * failure.
 */
struct qp_exchange *qp_exchange_create(uint32_t qpn, uint32_t max_qps, int socket_id);
void qp_exchange_free(struct qp_exchange *e);

uint32_t qp_exchange_qpn(const struct qp_exchange *e);

/*
 * Open the exchange QP on x (its program, segment size and timers from tmpl), ready for the
 * peer's offer, as a session begins (nothing if it is open). 0 or -errno.
 */
int qp_exchange_listen(struct qp_exchange *e, struct sl_xport *x,
		       const struct sl_xport_qp_conf *tmpl, uint64_t now_ns);

/*
 * The round's offer, once the peer is up: draw a new token and first PSN for each of the n QPs
 * conf[qpns[i]] (the token never 0 nor the QP's previous one) and post the offer naming them.
 * 0, or -errno: nothing posted (the next poll tries again).
 */
int qp_exchange_offer(struct qp_exchange *e, struct sl_xport *x, struct sl_xport_qp_conf *conf,
		      const uint32_t *qpns, uint32_t n, uint64_t now_ns);

/* The endpoint's callbacks for the exchange QP. */
int qp_exchange_on_recv(struct qp_exchange *e, const struct sl_xport_rx_seg *seg);
void qp_exchange_on_complete(struct qp_exchange *e, const struct sl_xport_cqe *c);

enum qp_exchange_result {
	QP_EXCHANGE_PENDING, /**< the peer's offer is still due */
	QP_EXCHANGE_ARRIVED, /**< it arrived: conf[] has the peer's token and first PSN per QP */
	QP_EXCHANGE_REFUSED, /**< it does not name each QP's peer once with a token */
	QP_EXCHANGE_FAILED,  /**< the exchange QP failed (the peer never answered): begin again */
};

/*
 * Where the round stands, as long as the peer's offer has not been read; once it has arrived
 * whole, reads it into conf[] (each QP's peer_token and recv_psn, from the entry naming its
 * peer_qpn): QP_EXCHANGE_ARRIVED, once.
 */
enum qp_exchange_result qp_exchange_poll(struct qp_exchange *e, struct sl_xport_qp_conf *conf,
					 const uint32_t *qpns, uint32_t n);

/* The peer acknowledged our offer: it has read it, and opened its QPs before it acknowledged. */
bool qp_exchange_acked(const struct qp_exchange *e);

/* The exchange QP failed this round. */
bool qp_exchange_failed(const struct qp_exchange *e);

/* The round ends (failed, or the link's session did): the exchange QP closes. */
void qp_exchange_end(struct qp_exchange *e, struct sl_xport *x, uint64_t now_ns);

#endif /* SL_DP_EXCHANGE_H */
