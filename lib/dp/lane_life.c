/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lane_life.c - a lane's whole life: created with its port, polled through one state machine,
 * freed with its port (docs/link.md, "Leave" and "The lane's life", which has the table).
 *
 * Model. A lane is one RX/TX queue pair and the reliable link over it, owned by one worker
 * lcore. Everything below runs on that lcore; the state is read by no other thread. Each poll
 * does the work of the lane's state (lane.c), then turns what the link and the port report into
 * events, and sl_dp_lane_transition() turns each event into the next state and the actions the
 * lane performs. The transition function is pure (an event with its guards and its time in, a
 * state, a timer and actions out), so the unit tests walk every row without a port.
 *
 * States, and why each exists:
 *   RUNNING     receive, deliver, produce, transmit.
 *   QUIET       this end answered its peer's LEAVE on a port whose memory the two share (memif):
 *               the peer closes as soon as it has the answer, and its close unmaps the rings
 *               under any burst still running here, so the lane touches nothing but the port's
 *               link status. Frames in the TX backlog are dropped (tx_drop_quiet).
 *   QUIET_DOWN  quiet, and the link has gone down since: the peer has closed, so the next "up"
 *               is a new peer and wakes the lane at once, while in QUIET an "up" wakes it only
 *               after SL_DP_QUIET_MAX_NS (the peer may still be between its answer and its close).
 *   DRAINING    the daemon stops: for SL_DP_DRAIN_NS receive, deliver, send what the TX queue
 *               refused and flush the driver, so what a driver accepted leaves before the port
 *               stops; nothing new from the link or the producer.
 *   LEAVING     the goodbye: the link sends only LEAVE, for SL_DP_LEAVE_WAIT_NS at most, until
 *               the peer answers (or leaves too, and this end answers it), or its port goes
 *               down (the peer has closed: nobody to answer, and what the TX queue refused
 *               would be offered to a closed port on every poll).
 *   LEFT        the port is not touched again and may close from the state's timer on: at once,
 *               or SL_DP_LEAVE_GRACE_NS after this end answered a peer that leaves at the same
 *               time over shared memory, so that the peer reads the answer before the close.
 * A quiet lane that is stopped goes straight to LEFT: its peer has gone, there is nobody to
 * drain to or say goodbye to, and the port must stay untouched until it closes. A lane whose
 * peer is not up when its drain ends has nobody to answer its LEAVE and goes to LEFT too.
 *
 * Time is the poll's now_ns (ns, TSC clock in the daemon, any clock in tests); every timer is a
 * deadline in the same unit.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_malloc.h>

#include "lane.h"
#include "lane_life.h"
#include "dp_log.h"

RTE_LOG_REGISTER(sl_dp_logtype, sluice.dp, INFO);

/* --- The state machine (pure) -------------------------------------------------------------- */

static const char *const state_names[] = {
	[SL_DP_LANE_RUNNING] = "running",       [SL_DP_LANE_QUIET] = "quiet",
	[SL_DP_LANE_QUIET_DOWN] = "quiet_down", [SL_DP_LANE_DRAINING] = "draining",
	[SL_DP_LANE_LEAVING] = "leaving",       [SL_DP_LANE_LEFT] = "left",
};

const char *
sl_dp_lane_state_name(enum sl_dp_lane_state s)
{
	return (unsigned int)s < SL_ARRAY_SIZE(state_names) ? state_names[s] : "?";
}

static unsigned int
enter(struct sl_dp_lane_life *life, enum sl_dp_lane_state state, uint64_t timer_ns,
      unsigned int actions)
{
	life->state = state;
	life->timer_ns = timer_ns;
	return actions;
}

unsigned int
sl_dp_lane_transition(struct sl_dp_lane_life *life, const struct sl_dp_lane_input *in)
{
	enum sl_dp_lane_event ev = in->event;
	uint64_t now = in->now_ns;

	switch (life->state) {
	case SL_DP_LANE_RUNNING:
		if (ev == SL_DP_LANE_EV_STOP)
			return enter(life, SL_DP_LANE_DRAINING, now + SL_DP_DRAIN_NS, 0);
		if (ev == SL_DP_LANE_EV_PEER_LEFT && in->shares_memory)
			return enter(life, SL_DP_LANE_QUIET, now + SL_DP_QUIET_MAX_NS,
				     SL_DP_LANE_ACT_SILENCE);
		return 0;
	case SL_DP_LANE_QUIET:
		if (ev == SL_DP_LANE_EV_LINK_DOWN)
			return enter(life, SL_DP_LANE_QUIET_DOWN, 0, 0);
		if (ev == SL_DP_LANE_EV_LINK_UP && now >= life->timer_ns)
			return enter(life, SL_DP_LANE_RUNNING, 0, 0);
		if (ev == SL_DP_LANE_EV_STOP)
			return enter(life, SL_DP_LANE_LEFT, now, SL_DP_LANE_ACT_LINK_LEAVE);
		return 0;
	case SL_DP_LANE_QUIET_DOWN:
		if (ev == SL_DP_LANE_EV_LINK_UP)
			return enter(life, SL_DP_LANE_RUNNING, 0, 0);
		if (ev == SL_DP_LANE_EV_STOP)
			return enter(life, SL_DP_LANE_LEFT, now, SL_DP_LANE_ACT_LINK_LEAVE);
		return 0;
	case SL_DP_LANE_DRAINING:
		if (ev != SL_DP_LANE_EV_TICK || now < life->timer_ns)
			return 0;
		if (in->peer_up)
			return enter(life, SL_DP_LANE_LEAVING, now + SL_DP_LEAVE_WAIT_NS,
				     SL_DP_LANE_ACT_LINK_LEAVE);
		return enter(life, SL_DP_LANE_LEFT, now, SL_DP_LANE_ACT_LINK_LEAVE);
	case SL_DP_LANE_LEAVING:
		if (ev == SL_DP_LANE_EV_PEER_LEFT && in->shares_memory)
			return enter(life, SL_DP_LANE_LEFT, now + SL_DP_LEAVE_GRACE_NS,
				     SL_DP_LANE_ACT_SILENCE);
		/* (LINK_DOWN: the peer has closed its port, nobody is left to answer.) */
		if (ev == SL_DP_LANE_EV_PEER_LEFT || ev == SL_DP_LANE_EV_LEAVE_ACKED ||
		    ev == SL_DP_LANE_EV_LINK_DOWN ||
		    (ev == SL_DP_LANE_EV_TICK && now >= life->timer_ns))
			return enter(life, SL_DP_LANE_LEFT, now, 0);
		return 0;
	case SL_DP_LANE_LEFT:
		return 0;
	}
	return 0;
}

/* --- Creation and teardown ----------------------------------------------------------------- */

/* The link gives back its references: evicted ring frames, frames not delivered. */
static void
lane_release(void *ctx, void *const *handles, unsigned n)
{
	(void)ctx;
	rte_pktmbuf_free_bulk((struct rte_mbuf **)(uintptr_t)handles, n);
}

/*
 * The replay ring must outlast the receive rings. A frame that a peer's full receive ring
 * dropped is found missing only once the peer has worked through that ring (R frames), and
 * the NACK reaches this end only once it has worked through its own ring of the peer's frames
 * (R more, the peer's ring taken to be the size of ours); all that time this end goes on
 * sending, up to twice as fast as the peer takes frames (the rate halves each time a replay
 * repeats, link_rate.c). So the lost frame is some R + 2R + 2R frames back, and 16 more for the
 * rollback, when its replay begins: in a replay ring of fewer than 8 R it may have been
 * evicted, and then no replay can bring it (faithful mode: the episode never ends; extended:
 * nack_outside_ring): over veth + AF_PACKET with a 2^11 ring and a CPU hog, receive rings of
 * 1024 and 512 frames left the link stuck in some runs, 256 in none (docs/results/link.md).
 * Only where the receiver can be overrun (adapt_rate) and frames are replayed; a warning, not
 * a refusal: a deeper ring is a risk under overload, not a certain loss.
 */
#define RX_RINGS_PER_REPLAY_RING 8u

static void
check_rx_ring(const struct sl_dp_port *p, const struct sl_link_conf *lc)
{
	uint64_t ring = UINT64_C(1) << lc->ring_order;

	if (!lc->adapt_rate || lc->replay == SL_LINK_REPLAY_NONE ||
	    ring >= (uint64_t)RX_RINGS_PER_REPLAY_RING * p->rx_ring_frames)
		return;
	SL_DP_LOG(WARNING,
		  "%s: receive rings of %u frames, more than the link's replay ring of %" PRIu64
		  " frames outlasts (%" PRIu64 " at most): a frame lost at the end of a full ring "
		  "may be evicted before its NACK comes, and then never recovered (docs/link.md, "
		  "\"Short receive rings\")",
		  p->name, p->rx_ring_frames, ring, ring / RX_RINGS_PER_REPLAY_RING);
}

int
sl_dp_lane_init(struct sl_dp_port *p, uint16_t q, const struct sl_dp_port_conf *conf,
		struct rte_mempool *pool, char *err, size_t errlen)
{
	struct sl_dp_lane *l = &p->lane[q];
	struct sl_link_conf lc = conf->link;

	l->port = p;
	l->queue = q;
	l->pool = pool;
	l->life = (struct sl_dp_lane_life){.state = SL_DP_LANE_RUNNING};
	l->src_port = sl_encap_src_port(q);
	l->peer_known = conf->peer_mode == SL_DP_PEER_STATIC;
	if (l->peer_known)
		l->peer = conf->peer;
	else
		memset(&l->peer, 0xff, sizeof(l->peer)); /* learning: broadcast until learned */
	l->arp_next_ns = 0;
	l->arp_asked = 0;
	lc.wire_overhead_bytes = sl_dp_port_wire_overhead(p);
	lc.release = lane_release;
	lc.release_ctx = l;
	/*
	 * Into a silent peer (sl_link_conf.silent_frames): a memif peer cannot be overrun (the TX
	 * waits for room in the shared ring), so nothing is held; any other peer's receive ring
	 * can, so no more than half of one goes into its silence (the peer's ring is taken to be
	 * the size of ours).
	 */
	lc.silent_frames = p->shares_memory ? 0 : SL_MIN(lc.silent_frames, p->rx_ring_frames / 2u);
	/* Likewise a memif receiver never drops for overload: its losses are the wire's. */
	lc.adapt_rate = lc.adapt_rate && !p->shares_memory;
	if (q == 0)
		check_rx_ring(p, &lc);
	l->link = sl_link_create(&lc);
	if (l->link == NULL) {
		snprintf(err, errlen, "%s: lane %u: link settings rejected: %s", p->name, q,
			 strerror(errno));
		return -errno;
	}
	l->session = sl_link_sessions(l->link);
	l->deliv_cap = lc.fc_frames;
	l->delivered = rte_zmalloc_socket("sl_deliv", sizeof(*l->delivered) * l->deliv_cap,
					  RTE_CACHE_LINE_SIZE, p->socket_id);
	if (l->delivered == NULL) {
		snprintf(err, errlen, "%s: lane %u: no memory for %u delivered frames", p->name, q,
			 l->deliv_cap);
		return -ENOMEM;
	}
	return 0;
}

void
sl_dp_lane_fini(struct sl_dp_lane *l)
{
	rte_pktmbuf_free_bulk(l->pending, l->n_pending);
	rte_pktmbuf_free_bulk(l->backlog, l->n_backlog);
	l->n_pending = l->n_backlog = 0;
	for (uint32_t i = 0; i < l->deliv_count; i++)
		rte_pktmbuf_free(l->delivered[(l->deliv_head + i) % l->deliv_cap]);
	l->deliv_count = 0;
	rte_free(l->delivered);
	l->delivered = NULL;
	sl_link_free(l->link);
	l->link = NULL;
}

/* --- Events in, actions out ---------------------------------------------------------------- */

/*
 * The link is established: NORMAL, or repairing a loss (a replay either way). Not while either
 * end is (re)initializing (INIT, SEND_PAUSE, PAUSE) or saying goodbye.
 */
static bool
link_established(enum sl_link_state s)
{
	return s == SL_LINK_NORMAL || s == SL_LINK_RETRANS || s == SL_LINK_SEND_RETRANS;
}

bool
sl_dp_lane_peer_up(const struct sl_dp_lane *l, uint64_t now_ns)
{
	uint64_t last = __atomic_load_n(&l->last_rx_ns, __ATOMIC_RELAXED);

	return l->link && link_established(sl_link_state(l->link)) && last != 0 &&
	       (int64_t)(now_ns - last) <= (int64_t)l->port->peer_timeout_ns;
}

static void
lane_event(struct sl_dp_lane *l, enum sl_dp_lane_event ev, uint64_t now_ns)
{
	struct sl_dp_lane_input in = {
		.event = ev,
		.now_ns = now_ns,
		.peer_up = sl_dp_lane_peer_up(l, now_ns),
		.shares_memory = l->port->shares_memory,
	};
	enum sl_dp_lane_state was = l->life.state;
	unsigned int act = sl_dp_lane_transition(&l->life, &in);

	if (l->life.state != was)
		SL_DP_LOG(DEBUG, "%s: lane %u: %s -> %s", l->port->name, l->queue,
			  sl_dp_lane_state_name(was), sl_dp_lane_state_name(l->life.state));
	if (act & SL_DP_LANE_ACT_LINK_LEAVE)
		sl_link_leave(l->link);
	if (act & SL_DP_LANE_ACT_SILENCE)
		sl_dp_lane_silence(l);
}

/* A quiet lane reads the port's link status only: it touches no ring. Unreadable: no event. */
static void
link_status_event(struct sl_dp_lane *l, uint64_t now_ns)
{
	struct rte_eth_link link;

	if (rte_eth_link_get_nowait(l->port->port_id, &link) != 0)
		return;
	lane_event(l,
		   link.link_status == RTE_ETH_LINK_DOWN ? SL_DP_LANE_EV_LINK_DOWN
							 : SL_DP_LANE_EV_LINK_UP,
		   now_ns);
}

void
sl_dp_lane_poll(struct sl_dp_lane *l, uint64_t now_ns)
{
	if (sl_unlikely(now_ns - l->last_poll_ns > SL_DP_POLL_GAP_NS) && l->last_poll_ns) {
		sl_stat_add(&l->stats.poll_gaps, 1);
		sl_stat_add(&l->stats.poll_gap_ns, now_ns - l->last_poll_ns);
	}
	l->last_poll_ns = now_ns;
	if (l->app.tick)
		l->app.tick(l->app.ctx, now_ns);
	switch (l->life.state) {
	case SL_DP_LANE_QUIET:
	case SL_DP_LANE_QUIET_DOWN:
		link_status_event(l, now_ns);
		if (l->life.state != SL_DP_LANE_RUNNING)
			return;
		/* Woken: poll it as running at once. */
		/* fallthrough */
	case SL_DP_LANE_RUNNING:
		sl_dp_lane_run(l, now_ns);
		/* The answer to the peer's LEAVE went out in that burst: nothing after it. */
		if (sl_unlikely(sl_link_peer_left(l->link)))
			lane_event(l, SL_DP_LANE_EV_PEER_LEFT, now_ns);
		return;
	case SL_DP_LANE_DRAINING:
		sl_dp_lane_drain(l, now_ns);
		lane_event(l, SL_DP_LANE_EV_TICK, now_ns);
		return;
	case SL_DP_LANE_LEAVING:
		sl_dp_lane_goodbye(l, now_ns);
		if (sl_link_peer_left(l->link))
			lane_event(l, SL_DP_LANE_EV_PEER_LEFT, now_ns);
		if (sl_link_leave_acked(l->link))
			lane_event(l, SL_DP_LANE_EV_LEAVE_ACKED, now_ns);
		link_status_event(l, now_ns);
		lane_event(l, SL_DP_LANE_EV_TICK, now_ns);
		return;
	case SL_DP_LANE_LEFT:
		return;
	}
}

void
sl_dp_lane_stop(struct sl_dp_lane *l, uint64_t now_ns)
{
	lane_event(l, SL_DP_LANE_EV_STOP, now_ns);
}

uint64_t
sl_dp_lane_close_ns(const struct sl_dp_lane *l)
{
	return l->life.state == SL_DP_LANE_LEFT ? l->life.timer_ns : UINT64_MAX;
}

/* --- A worker's lanes ---------------------------------------------------------------------- */

void
sl_dp_worker_stop(struct sl_dp_worker *w, uint64_t now_ns)
{
	for (unsigned int i = 0; i < w->nb_ports; i++)
		sl_dp_lane_stop(&w->ports[i]->lane[w->queue], now_ns);
}

uint64_t
sl_dp_worker_close_ns(const struct sl_dp_worker *w)
{
	uint64_t close_ns = 0;

	for (unsigned int i = 0; i < w->nb_ports; i++)
		close_ns = SL_MAX(close_ns, sl_dp_lane_close_ns(&w->ports[i]->lane[w->queue]));
	return close_ns;
}
