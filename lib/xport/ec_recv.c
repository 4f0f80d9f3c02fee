/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ec_recv.c - the endpoint-congestion receive mode (SL_XPORT_RECV_EC): a QP's data goes into the
 * endpoint's target queue (lib/ec, the endpoint-congestion paper's target) instead of lib/recv, and
 * a host stage drains that queue at a fixed rate, handing each packet it finishes to the
 * application.
 *
 * The paper's target is a receiving NIC whose buffer the host empties more slowly than the link
 * fills it. Here the buffer is the lib/ec queue, shared by every EC QP of the endpoint (as one
 * NIC buffer is shared by all connections to a host), and the host is a server that takes the
 * head packet, works on it for (frame bytes + frame_overhead_bytes) x 8 / ec_drain_bps, then
 * delivers it (on_recv, through the same in-order path as lib/recv's deliveries) and tells the
 * target, whose crossing DACKs and IACKs go out as feedback. The server runs on the caller's
 * clock: sl_xport_tx_burst() finishes every packet whose time is up, back to back from the
 * previous one, so a poll that comes late catches up exactly as a host that kept working would,
 * and sl_xport_next_deadline() names the next finish time.
 *
 * A poll hands over at once what arrived since the previous one, but a NIC cannot have received
 * it faster than its line rate, and the host was working meanwhile (the caller's lcore may even
 * have been descheduled: a whole window then waits in the port's ring). So the frames of one
 * sl_xport_rx_burst() are taken to have arrived back to back at line_bps, the last one now, and
 * not before the previous burst's last: before each arrival the host finishes what it would
 * have by then. A backlog longer than one burst keeps arriving at line rate into the next
 * bursts, so the arrival clock may run ahead of now by the backlog's wire time (its frames are
 * still "on the wire"); the target's answers to them then leave that much early. Arrivals that
 * really came earlier found the queue emptier, so the model errs toward a fuller queue (more
 * DACKs, more drops), never toward processing a frame before it was there.
 *
 * The target's actions become ordinary feedback frames: an IACK or a DACK is an ACK (SL_XOP_ACK)
 * carrying the cumulative ACK only (a DACK repeats the previous one: lib/ec's contract), a NACK
 * is a go-back-N NACK (SL_XOP_NACK, no holes) naming the expected PSN (sl_xport_fb_from_ec()).
 * They join the endpoint's feedback queue in the order lib/ec made them. The target's selective
 * repeat (sr_pkts) is refused: its packets past a hole would reach the application out of
 * order, and delivery here is in order (the simulator runs it: docs/ec.md).
 *
 * The queue accounts each packet's frame bytes (transport header onwards, as the endpoint holds
 * them). Packets still queued when their QP closes come back stale and are released without
 * being delivered; sl_xport_free() releases whatever is still queued.
 *
 * Units: ns, bytes, bits/s.
 */
#include <errno.h>
#include <stdlib.h>

#include "sl_time.h"
#include "fbq.h"
#include "xport_priv.h"

int
sl_xp_ec_create(struct sl_xport *x)
{
	struct sl_ec_conf c = x->c.ec;

	if (x->c.ec_drain_bps == 0)
		return 0;
	if (c.sr_pkts) /* its out-of-order packets would need placement; delivery is in order */
		return -EINVAL;
	c.max_conns = x->c.max_qps;
	x->ec = sl_ec_create(&c);
	if (x->ec == NULL)
		return -errno;
	x->ec_act_max = sl_ec_actions_max(x->ec);
	x->ec_act = calloc(x->ec_act_max, sizeof(*x->ec_act));
	return x->ec_act ? 0 : -ENOMEM;
}

void
sl_xp_ec_free(struct sl_xport *x)
{
	struct sl_ec_pkt p;
	unsigned nact;

	if (x->ec == NULL)
		return;
	if (x->ec_act)
		while (sl_ec_process(x->ec, 0, &p, x->ec_act, &nact) == 0)
			x->c.release(x->c.ctx, p.handle);
	sl_ec_free(x->ec);
	free(x->ec_act);
}

int
sl_xp_ec_open(struct sl_xport *x, uint32_t qpn, uint32_t first_psn)
{
	return x->ec ? sl_ec_conn_open(x->ec, qpn, first_psn) : -EINVAL;
}

void
sl_xp_ec_close(struct sl_xport *x, uint32_t qpn)
{
	sl_ec_conn_close(x->ec, qpn);
}

/* The target's acknowledgments act[0..n) as feedback frames. */
static void
send_actions(struct sl_xport *x, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		const struct sl_ec_action *a = &x->ec_act[i];
		struct sl_xfb fb;

		sl_xport_fb_from_ec(a, a->conn, &fb);
		sl_xp_fb_to_peer(&x->qp[a->conn], &fb);
		sl_xport_fbq_push(x->fbq, a->conn, &fb);
	}
}

/* How long the host works on a packet the queue accounts as frame_bytes, ns. */
static uint64_t
work_ns(const struct sl_xport *x, uint32_t frame_bytes)
{
	return sl_tx_ns_ceil((uint64_t)frame_bytes + x->c.frame_overhead_bytes, x->c.ec_drain_bps);
}

/* How long the port takes to receive a frame of frame_bytes at its line rate, ns. */
static uint64_t
wire_ns(const struct sl_xport *x, uint32_t frame_bytes)
{
	return sl_tx_ns_ceil((uint64_t)frame_bytes + x->c.frame_overhead_bytes, x->c.line_bps);
}

void
sl_xp_ec_burst(struct sl_xport *x, const struct sl_xport_rx_frame *in, unsigned n, uint64_t now_ns)
{
	uint64_t burst_ns = 0;

	for (unsigned i = 0; i < n; i++)
		if (in[i].len && sl_xhdr_op_is_data(in[i].buf[0]))
			burst_ns += wire_ns(x, in[i].len);
	x->arrival_ns = SL_MAX(x->arrival_ns, now_ns > burst_ns ? now_ns - burst_ns : 0);
}

void
sl_xp_ec_arrive(struct sl_xport *x, uint32_t qpn, uint32_t psn, const struct sl_xport_rx_frame *f)
{
	uint64_t at_ns = x->arrival_ns + wire_ns(x, f->len);
	unsigned nact;

	x->arrival_ns = at_ns;
	sl_xp_ec_drain(x, at_ns);
	if (sl_ec_arrive(x->ec, qpn, psn, f->len, f->handle, at_ns, x->ec_act, &nact) !=
	    SL_EC_ACCEPTED) {
		x->c.release(x->c.ctx, f->handle);
	} else if (!x->drain_busy) {
		x->drain_busy = true;
		x->drain_done_ns = at_ns + work_ns(x, f->len);
	}
	send_actions(x, nact);
}

void
sl_xp_ec_drain(struct sl_xport *x, uint64_t now_ns)
{
	struct sl_ec_pkt p;
	unsigned nact;

	while (x->drain_busy && x->drain_done_ns <= now_ns) {
		sl_ec_process(x->ec, now_ns, &p, x->ec_act, &nact);
		if (p.stale)
			x->c.release(x->c.ctx, p.handle);
		else
			sl_xp_deliver(x, p.conn, p.handle, now_ns);
		send_actions(x, nact);
		if (sl_ec_peek(x->ec, &p) == 0)
			x->drain_done_ns += work_ns(x, p.bytes);
		else
			x->drain_busy = false;
	}
}

uint64_t
sl_xp_ec_deadline(const struct sl_xport *x)
{
	return x->drain_busy ? x->drain_done_ns : UINT64_MAX;
}

int
sl_xport_ec_stats_get(const struct sl_xport *x, struct sl_ec_stats *st)
{
	if (x->ec == NULL)
		return -ENOENT;
	sl_ec_stats_get(x->ec, st);
	return 0;
}
