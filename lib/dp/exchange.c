/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * exchange.c - how two QP adapters agree on their QPs' identities (private/exchange.h), as two
 * applications do through their out-of-band exchange (docs/wire-format.md, "Connections").
 *
 * The QPs a daemon runs on its own (the built-in [qp] traffic) have no application to hand
 * their token and first PSN to the peer. So each adapter does it over the wire itself, as
 * InfiniBand's connection manager does over QP1: a reserved QP of the endpoint, the exchange QP,
 * which both ends know by its QPN and reach with token 0 (which no application can connect to:
 * no application's frame reaches it through its daemon).
 *
 * A round, once per session of the link (qp.c, "Sessions"): each end draws a token (never 0,
 * never the QP's previous one) and a first PSN for each of its QPs from the kernel's CSPRNG
 * (getrandom; the pool is initialized once the host has booted, so it does not wait) once the
 * link's peer is up, and SENDs its offer on the exchange QP: the magic, the count, and per QP
 * its QPN, token and first PSN. The exchange QP (PSN 0 both ways: it lives one session) opens
 * before that, as the session begins, so that a peer quicker to offer finds it. The QPs stay
 * closed. Once the peer's offer has
 * arrived whole, each QP takes the token and first PSN of the entry naming its peer QP and
 * opens; it sends nothing until the peer has acknowledged our offer too. The order makes the
 * first data frame find the peer's QP open: the adapter opens its QPs in the poll before its
 * transmit burst, so the acknowledgment of an offer never leaves before the QPs it names are
 * open, and a sender waits for that acknowledgment. An offer that does not name every QP's
 * peer exactly once, with a token, is refused (the QPs stay closed, counted by the adapter); an
 * exchange QP that fails (the peer never answers: it runs no exchange, or went away) ends the
 * round, and the next poll begins another with new draws. The exchange QP stays open for the
 * rest of the session, so the peer's offer is acknowledged whatever is lost on the way.
 *
 * Offer format, big-endian: magic SL_EXCHANGE_MAGIC (u32), count (u32), then count entries of
 * qpn, token, psn (u32 each): 8 + 12 x count bytes. Units: bytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <rte_byteorder.h>
#include <rte_malloc.h>

#include "exchange.h"

#define SL_EXCHANGE_MAGIC 0x534c5843u /**< "SLXC" */
#define OFFER_HDR 8u                  /**< bytes before the entries */
#define OFFER_ENTRY 12u               /**< bytes per QP */

/*
 * Our half of a round; the peer's offer arrives independently, in any open state (arrived).
 *
 *   CLOSED    -> LISTENING  the session begins: the exchange QP opens
 *   LISTENING -> OFFERED    the peer is up: our offer is posted
 *   OFFERED   -> ACKED      it completed: the peer read it
 *   OFFERED   -> FAILED     it failed: the exchange QP gave up
 *   any       -> CLOSED     the round ends
 */
enum round_state {
	ROUND_CLOSED,
	ROUND_LISTENING,
	ROUND_OFFERED,
	ROUND_ACKED,
	ROUND_FAILED,
};

struct qp_exchange {
	uint32_t qpn;     /**< the exchange QP's, the same at both ends */
	uint32_t max_qps; /**< QPs an offer may name, at most */
	uint8_t state;    /**< enum round_state */
	bool arrived;     /**< the peer's offer arrived whole: rx_len bytes */
	uint32_t rx_len;
	uint32_t *prev_token; /**< [max_qps] each QP's token of the last round (0: none) */
	uint8_t *tx;          /**< our offer, unchanged until its completion */
	uint8_t *rx;          /**< the peer's */
};

static uint32_t
offer_bytes(uint32_t n)
{
	return OFFER_HDR + OFFER_ENTRY * n;
}

static void
put32(uint8_t *p, uint32_t v)
{
	v = rte_cpu_to_be_32(v);
	memcpy(p, &v, sizeof(v));
}

static uint32_t
get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return rte_be_to_cpu_32(v);
}

struct qp_exchange *
qp_exchange_create(uint32_t qpn, uint32_t max_qps, int socket_id)
{
	struct qp_exchange *e = rte_zmalloc_socket("sl_dp_exchange", sizeof(*e), 0, socket_id);

	if (e == NULL)
		goto fail;
	e->qpn = qpn;
	e->max_qps = max_qps;
	e->prev_token =
		rte_zmalloc_socket("sl_dp_exchange", sizeof(uint32_t) * max_qps, 0, socket_id);
	e->tx = rte_zmalloc_socket("sl_dp_exchange", offer_bytes(max_qps), 0, socket_id);
	e->rx = rte_zmalloc_socket("sl_dp_exchange", offer_bytes(max_qps), 0, socket_id);
	if (e->prev_token == NULL || e->tx == NULL || e->rx == NULL)
		goto fail;
	return e;
fail:
	qp_exchange_free(e);
	errno = ENOMEM;
	return NULL;
}

void
qp_exchange_free(struct qp_exchange *e)
{
	if (e == NULL)
		return;
	rte_free(e->rx);
	rte_free(e->tx);
	rte_free(e->prev_token);
	rte_free(e);
}

uint32_t
qp_exchange_qpn(const struct qp_exchange *e)
{
	return e->qpn;
}

/* A new token and first PSN for QP c. 0 or -errno. */
static int
draw(struct qp_exchange *e, struct sl_xport_qp_conf *c)
{
	uint32_t w[2];

	do {
		ssize_t n = getrandom(w, sizeof(w), GRND_NONBLOCK);

		if (n != (ssize_t)sizeof(w))
			return n < 0 ? -errno : -EIO;
	} while (w[1] == 0 || w[1] == e->prev_token[c->qpn]);
	c->token = w[1];
	c->send_psn = w[0];
	e->prev_token[c->qpn] = w[1];
	return 0;
}

int
qp_exchange_listen(struct qp_exchange *e, struct sl_xport *x, const struct sl_xport_qp_conf *tmpl,
		   uint64_t now_ns)
{
	struct sl_xport_qp_conf xq = *tmpl;
	int rc;

	if (e->state != ROUND_CLOSED)
		return 0;
	xq.qpn = xq.peer_qpn = e->qpn;
	xq.token = xq.peer_token = 0;
	xq.send_psn = xq.recv_psn = 0;
	rc = sl_xport_qp_open(x, &xq, now_ns);
	if (rc != 0)
		return rc;
	e->state = ROUND_LISTENING;
	e->arrived = false;
	e->rx_len = 0;
	return 0;
}

int
qp_exchange_offer(struct qp_exchange *e, struct sl_xport *x, struct sl_xport_qp_conf *conf,
		  const uint32_t *qpns, uint32_t n, uint64_t now_ns)
{
	int rc;

	if (e->state != ROUND_LISTENING || n > e->max_qps)
		return -EINVAL;
	put32(e->tx, SL_EXCHANGE_MAGIC);
	put32(e->tx + 4, n);
	for (uint32_t i = 0; i < n; i++) {
		struct sl_xport_qp_conf *c = &conf[qpns[i]];
		uint8_t *p = e->tx + offer_bytes(i);

		rc = draw(e, c);
		if (rc != 0)
			return rc;
		put32(p, c->qpn);
		put32(p + 4, c->token);
		put32(p + 8, c->send_psn);
	}
	rc = sl_xport_post_send(x, e->qpn, e->tx, offer_bytes(n), 0, now_ns);
	if (rc != 0)
		return rc;
	e->state = ROUND_OFFERED;
	return 0;
}

int
qp_exchange_on_recv(struct qp_exchange *e, const struct sl_xport_rx_seg *seg)
{
	uint32_t room = offer_bytes(e->max_qps);

	if (e->state == ROUND_CLOSED || e->arrived || seg->op != SL_XPORT_OP_SEND ||
	    seg->offset > room || seg->len > room - seg->offset)
		return SL_XPORT_SYN_INVALID; /* one offer a round, no longer than max_qps make */
	memcpy(e->rx + seg->offset, seg->data, seg->len);
	if (seg->last) {
		e->rx_len = seg->offset + seg->len;
		e->arrived = true;
	}
	return 0;
}

void
qp_exchange_on_complete(struct qp_exchange *e, const struct sl_xport_cqe *c)
{
	if (e->state == ROUND_OFFERED)
		e->state = c->status == 0 ? ROUND_ACKED : ROUND_FAILED;
}

/* The entry of the peer's offer (count entries, in the peer's QPN order) naming qpn, or NULL. */
static const uint8_t *
entry_of(const struct qp_exchange *e, uint32_t count, uint32_t qpn)
{
	for (uint32_t i = 0; i < count; i++) {
		const uint8_t *p = e->rx + offer_bytes(i);

		if (get32(p) == qpn)
			return p;
	}
	return NULL;
}

enum qp_exchange_result
qp_exchange_poll(struct qp_exchange *e, struct sl_xport_qp_conf *conf, const uint32_t *qpns,
		 uint32_t n)
{
	uint32_t count;

	if (e->state == ROUND_FAILED)
		return QP_EXCHANGE_FAILED;
	if (!e->arrived)
		return QP_EXCHANGE_PENDING;
	count = e->rx_len >= OFFER_HDR ? get32(e->rx + 4) : 0;
	if (e->rx_len < OFFER_HDR || get32(e->rx) != SL_EXCHANGE_MAGIC || count != n ||
	    e->rx_len != offer_bytes(count))
		return QP_EXCHANGE_REFUSED;
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *p = entry_of(e, count, conf[qpns[i]].peer_qpn);

		if (p == NULL || get32(p + 4) == 0)
			return QP_EXCHANGE_REFUSED;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct sl_xport_qp_conf *c = &conf[qpns[i]];
		const uint8_t *p = entry_of(e, count, c->peer_qpn);

		c->peer_token = get32(p + 4);
		c->recv_psn = get32(p + 8);
	}
	return QP_EXCHANGE_ARRIVED;
}

bool
qp_exchange_acked(const struct qp_exchange *e)
{
	return e->state == ROUND_ACKED;
}

bool
qp_exchange_failed(const struct qp_exchange *e)
{
	return e->state == ROUND_FAILED;
}

void
qp_exchange_end(struct qp_exchange *e, struct sl_xport *x, uint64_t now_ns)
{
	if (e->state != ROUND_CLOSED)
		(void)sl_xport_qp_close(x, e->qpn, now_ns);
	e->state = ROUND_CLOSED;
}
