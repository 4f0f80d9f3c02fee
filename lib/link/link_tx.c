/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * link_tx.c - the link's transmit half: each slot's frame from the TX state (link.c's essay,
 * "TX states"): control runs and the NACK's timing ("NACK runs"), the replay ring and its
 * replays with their tails ("Replay"), warm-up fillers, FC words and new data in NORMAL, the
 * silent-peer guard, and the slot clock's pace (link_rate.c).
 */
#include <assert.h>
#include <errno.h>
#include <string.h>

#include "link_priv.h"

/* ID the next data frame will carry: control frames carry it. */
static uint32_t
tx_cur_id(const struct sl_link *l)
{
	if (l->replay_active && l->replay_slot < 2 * l->replay_count)
		return l->replay_first + (l->replay_slot + 1) / 2;
	return l->tx_next;
}

/* A NACK names the first frame this end needs: the rollback point, fixed per episode. */
static uint32_t
ctrl_arg(const struct sl_link *l, uint16_t key)
{
	return key == SL_WIRE_KEY_RETRANS_REQ ? l->thr - SL_LINK_ROLLBACK : 0;
}

static void
emit_ctrl(struct sl_link *l, uint64_t now_ns, uint16_t key, struct sl_link_tx_frame *f)
{
	uint32_t arg = ctrl_arg(l, key);

	memset(f, 0, offsetof(struct sl_link_tx_frame, hdr));
	f->kind = SL_LINK_FRAME_CTRL;
	f->id = tx_cur_id(l);
	f->hdr_len = (uint8_t)sl_wire_encode_ctrl(&l->conf.fmt, f->hdr, f->id, key, arg);
	if (key == SL_WIRE_KEY_IDLE) {
		l->stats.tx_idle++;
		if (l->clear_left)
			l->clear_left--;
	} else if (key == SL_WIRE_KEY_PAUSE_REQ) {
		l->stats.tx_pause_req++;
	} else if (key == SL_WIRE_KEY_RETRANS_REQ) {
		l->stats.tx_retrans_req++;
	} else if (key == SL_WIRE_KEY_LEAVE) {
		l->stats.tx_leave++;
	} else {
		l->stats.tx_leave_ack++;
	}
	l->last_tx_ns = now_ns;
}

/*
 * The wait before a run of key may be sent again. PAUSE_REQ, IDLE and LEAVE runs repeat every
 * ctrl_interval_ns, which exists so that an end whose peer is down does not flood the port. A
 * NACK run is answered by a replay whose first frame arrives about a round trip later; a run
 * that brings no answer was lost (one frame lost in the middle of it leaves the peer fewer than
 * 8 in a row), and waiting ctrl_interval_ns (1 ms by default) to say it again made those
 * episodes the slowest by far. So a NACK run repeats after the answer time learnt on earlier
 * episodes (nack_run_start(), wait_est: mean plus four deviations), doubled for each repeat in
 * the episode, never later than ctrl_interval_ns: a peer that does not answer at all gets what
 * it got before.
 */
static uint64_t
run_interval(const struct sl_link *l, uint16_t key)
{
	uint64_t learnt = wait_est_bound(&l->nack_wait);

	if (key != SL_WIRE_KEY_RETRANS_REQ || learnt == 0)
		return l->conf.ctrl_interval_ns;
	return SL_MIN(learnt << l->nack_backoff, l->conf.ctrl_interval_ns);
}

/*
 * A NACK run starts at now_ns (again: the episode's rollback point is the one the last run
 * named). The first run of an episode is timed to its answer (rx_data: the first replayed frame
 * that verifies); after a repeat an answer may be either run's, so none is (Karn's rule).
 */
static void
nack_run_start(struct sl_link *l, uint64_t now_ns, bool again)
{
	l->nack_timed = !again;
	l->nack_out_ns = now_ns;
	l->nack_backoff = again ? SL_MIN(l->nack_backoff + 1u, NACK_BACKOFF_MAX) : 0;
}

/*
 * One frame of a control run of key, if one is in progress or due: runs of SL_LINK_CTRL_RUN
 * frames, at most one run per run_interval() of the same key and argument; a new key, or a
 * NACK whose rollback point has moved (a new error episode), starts at once.
 */
static bool
ctrl_run(struct sl_link *l, uint64_t now_ns, uint16_t key, struct sl_link_tx_frame *f)
{
	uint32_t arg = ctrl_arg(l, key);

	if (l->run_left == 0 || l->run_key != key || l->run_arg != arg) {
		bool again = l->run_key == key && l->run_arg == arg;

		if (again && now_ns < l->run_next_ns)
			return false;
		l->run_key = key;
		l->run_arg = arg;
		l->run_left = SL_LINK_CTRL_RUN;
		if (key == SL_WIRE_KEY_RETRANS_REQ)
			nack_run_start(l, now_ns, again);
		l->run_next_ns = now_ns + run_interval(l, key);
	}
	l->run_left--;
	emit_ctrl(l, now_ns, key, f);
	return true;
}

/* Describe ring slot s, holding frame id, as a frame to send. */
static void
slot_out(const struct ring_slot *s, uint32_t id, bool replay, struct sl_link_tx_frame *f)
{
	f->handle = s->handle;
	f->body = s->body;
	f->body_len = s->body_len;
	f->kind = s->kind;
	f->hdr_len = s->hdr_len;
	f->is_replay = replay;
	f->id = id;
	memcpy(f->hdr, s->hdr, sizeof(s->hdr)); /* whole: a fixed size, inlined */
}

/* Put a new data or filler frame into the ring at tx_next and describe it in f (if not NULL). */
static void
ring_push(struct sl_link *l, uint64_t now_ns, const struct sl_link_tx_desc *d, uint8_t fc,
	  struct sl_link_tx_frame *f)
{
	struct ring_slot *s = &l->ring[l->tx_next & l->ring_mask];

	if (s->handle != NULL) {
		l->stats.ring_evictions++;
		release_one(l, s->handle);
	}
	if (d != NULL) {
		s->handle = d->handle;
		s->body = d->body;
		s->body_len = d->body_len;
		s->kind = SL_LINK_FRAME_DATA;
		s->hdr_len = (uint8_t)sl_wire_encode_data(&l->conf.fmt, s->hdr, d->meta, l->tx_next,
							  d->body, d->body_len);
	} else {
		s->handle = NULL;
		s->body = NULL;
		s->body_len = 0;
		s->kind = SL_LINK_FRAME_FILLER;
		s->hdr_len = (uint8_t)sl_wire_encode_filler(&l->conf.fmt, s->hdr, l->tx_next, fc);
	}
	l->tx_next++;
	if (l->ring_used <= l->ring_mask)
		l->ring_used++;
	if (f == NULL)
		return;
	l->unanswered++;
	slot_out(s, l->tx_next - 1, false, f);
	if (l->clear_left)
		l->clear_left--;
	l->last_tx_ns = now_ns;
}

static void
replay_start(struct sl_link *l)
{
	uint32_t first;

	/*
	 * A receiver that failed during its warm-up rolls back to 0 and needs IDs 0..15 to
	 * recover; complete the warm-up fillers in the ring so this replay carries them (else
	 * repeated replays of a shorter ring would never get it there).
	 */
	for (; l->warmup_left; l->warmup_left--) {
		l->stats.tx_filler++;
		ring_push(l, 0, NULL, SL_WIRE_FC_FILLER, NULL);
	}
	first = l->tx_next - l->ring_used;
	if (l->conf.fmt.mode == SL_WIRE_MODE_EXTENDED &&
	    !sl_seq_in_window(l->flag_retrans_arg, first, l->ring_used + 1))
		l->stats.nack_outside_ring++; /* the peer cannot recover: ring too small */
	else if (l->conf.replay == SL_LINK_REPLAY_MISSING)
		first = l->flag_retrans_arg;
	l->replay_first = first;
	l->replay_arg = l->flag_retrans_arg;
	l->replay_count = l->tx_next - first;
	l->replay_slot = 0;
	l->replay_active = true;
	l->stats.replays++;
}

/*
 * Replaying only what is missing (extended mode: sl_link_create() refuses it otherwise), and the
 * peer's NACK now names a later frame than the one this replay answers: the peer took the replay
 * up to there and failed again (a frame of the replay was lost). The rest of this replay would
 * fail there too; start again from the new point.
 */
static bool
replay_overtaken(const struct sl_link *l)
{
	return l->conf.replay == SL_LINK_REPLAY_MISSING && l->flag_retrans &&
	       sl_seq_gt(l->flag_retrans_arg, l->replay_arg);
}

/*
 * The replay's frames are out and the peer's flag is down: the tail covers the time before the
 * flag can fall (RIFL), so in extended mode the replay ends here, with nothing left to wait for.
 * (Faithful mode keeps RIFL's fixed 2^k / 2 slots.)
 */
static bool
replay_settled(const struct sl_link *l)
{
	return l->conf.fmt.mode == SL_WIRE_MODE_EXTENDED && !l->flag_retrans &&
	       l->replay_slot >= 2 * l->replay_count;
}

/*
 * The tail's length. RIFL's 2^k / 2 slots are half a ring, so half the round trip the ring was
 * sized for; a ring larger than the path needs (or sized for an assumed round trip far above the
 * real one) makes every tail that long, and a replay that must repeat (its first frame lost
 * again, or the peer still in error) waits all of it first: with a 2^14 ring at 10 Gbit/s
 * 0.55 ms, against a 10 us memif round trip. In extended mode the tail ends as soon as the flag
 * falls (replay_settled), so the time it actually takes is measurable: each tail that ends that
 * way is a sample of the wait from its first slot to the flag falling (wait_est), and a tail
 * lasts that mean plus four deviations: at least the 2 x SL_LINK_REGULAR_CLEAR slots the peer's
 * flag needs to fall, at most RIFL's. Tails cut short by a flag that stays up give no sample (the
 * repeat follows).
 */
static uint64_t
tail_ns(const struct sl_link *l, uint32_t frame_bytes)
{
	uint64_t rifl = link_rate_line_ns(&l->rate, (l->ring_mask + 1) / 2, frame_bytes);
	uint64_t floor = link_rate_line_ns(&l->rate, 2 * SL_LINK_REGULAR_CLEAR, frame_bytes);
	uint64_t learnt = wait_est_bound(&l->tail_wait);

	if (l->conf.fmt.mode != SL_WIRE_MODE_EXTENDED || learnt == 0)
		return rifl;
	return SL_MIN(rifl, SL_MAX(floor, learnt));
}

/*
 * One replay slot: even slots (while frames remain) re-send the ring, the others IDLE/NACK; then
 * the tail: 2^k / 2 IDLE slots, or with a slot clock as long as tail_ns() (link_rate.c).
 */
static void
replay_step(struct sl_link *l, uint64_t now_ns, struct sl_link_tx_frame *f)
{
	uint32_t slot = l->replay_slot++, tail = (l->ring_mask + 1) / 2;
	bool clock = l->rate.line_bps != 0;

	if (slot < 2 * l->replay_count && slot % 2 == 0) {
		uint32_t id = l->replay_first + slot / 2;

		slot_out(&l->ring[id & l->ring_mask], id, true, f);
		l->stats.tx_replayed++;
		l->last_tx_ns = now_ns;
	} else {
		emit_ctrl(l, now_ns, l->rx == RX_ERROR ? SL_WIRE_KEY_RETRANS_REQ : SL_WIRE_KEY_IDLE,
			  f);
	}
	if (slot == 2 * l->replay_count) { /* the tail's first IDLE */
		l->replay_tail_start_ns = now_ns;
		l->replay_tail_end_ns =
			now_ns + tail_ns(l, f->hdr_len + l->conf.wire_overhead_bytes);
	}
	if (clock ? slot >= 2 * l->replay_count && now_ns >= l->replay_tail_end_ns
		  : l->replay_slot == 2 * l->replay_count + tail) {
		l->replay_active = false;
		if (l->flag_retrans) {
			l->stats.replay_repeats++;
			if (l->conf.adapt_rate) {
				l->stats.rate_cuts++;
				link_rate_cut(&l->rate, now_ns);
			}
		}
	}
}

/*
 * silent_frames new frames have gone out and nothing has come from the peer meanwhile: its lcore
 * (or the path) has stalled, and what this end sends piles up in front of it. A frame dropped
 * there is NACKed only once the peer runs again and works through the pile, and by then a
 * sender that kept going has evicted it from its ring: a NACK-only link cannot recover that
 * (nack_outside_ring). So new data waits until the peer is heard again; each wait counts once.
 * A count, not a time: two ends that share one core hear nothing from each other for a whole
 * time slice, and must still fill their queues meanwhile.
 */
static bool
peer_silent(struct sl_link *l)
{
	bool silent = l->conf.silent_frames && l->unanswered >= l->conf.silent_frames;

	if (silent && !l->silent)
		l->stats.silent_holds++;
	l->silent = silent;
	return silent;
}

/* NORMAL: FC word > warm-up filler > new data > flag-clearing or keepalive IDLE. */
static bool
normal_step(struct sl_link *l, uint64_t now_ns, const struct sl_link_tx_desc *in, unsigned n_in,
	    unsigned *taken, struct sl_link_tx_frame *f)
{
	if (l->fc_pending != SL_WIRE_FC_FILLER) {
		if (l->fc_pending == SL_WIRE_FC_PAUSE)
			l->stats.tx_fc_pause++;
		else
			l->stats.tx_fc_resume++;
		ring_push(l, now_ns, NULL, l->fc_pending, f);
		l->fc_pending = SL_WIRE_FC_FILLER;
	} else if (l->warmup_left) {
		l->warmup_left--;
		l->stats.tx_filler++;
		ring_push(l, now_ns, NULL, SL_WIRE_FC_FILLER, f);
	} else if (*taken < n_in && !l->fc_remote_paused && !peer_silent(l)) {
		l->stats.tx_data++;
		ring_push(l, now_ns, &in[(*taken)++], 0, f);
	} else if (l->clear_left) {
		emit_ctrl(l, now_ns, SL_WIRE_KEY_IDLE, f);
	} else if (now_ns - l->last_tx_ns >= l->conf.keepalive_ns) {
		l->stats.tx_keepalive++;
		emit_ctrl(l, now_ns, SL_WIRE_KEY_IDLE, f);
	} else {
		return false;
	}
	return true;
}

/*
 * An error episode in which no data frame has verified for stuck_ns cannot end by replay: the
 * frame this end rolled back to has left the peer's ring (its NACKs took longer than the ring
 * lasts: a peer replaying itself, NACKs lost), so every replayed frame fails. Start afresh, as
 * after a restart: this end's PAUSE_REQ from ID 0 makes the peer re-initialize too, and the layer
 * above recovers what the two rings held. A long episode whose replays still verify (duplicates
 * on the way back to the threshold) is progress, and is left alone.
 */
static void
give_up_if_stuck(struct sl_link *l, uint64_t now_ns)
{
	if (l->conf.stuck_ns == 0 || l->rx != RX_ERROR ||
	    now_ns - SL_MAX(l->err_start_ns, l->verified_ns) < l->conf.stuck_ns)
		return;
	l->stats.stuck_reinits++;
	sl_lk_tx_transition(l, TX_EV_RESTART);
	sl_lk_rx_reset(l);
}

/* The frame out[] just received takes its slot on the line (link_rate.c). */
static void
slot_take(struct sl_link *l, uint64_t now_ns, const struct sl_link_tx_frame *f)
{
	bool data = f->kind == SL_LINK_FRAME_DATA;
	uint32_t bytes = f->hdr_len + l->conf.wire_overhead_bytes + (data ? f->body_len : 0);

	link_rate_take(&l->rate, now_ns, bytes, data);
}

unsigned
sl_link_tx_burst(struct sl_link *l, uint64_t now_ns, const struct sl_link_tx_desc *in,
		 unsigned n_in, unsigned *taken, struct sl_link_tx_frame *out, unsigned max)
{
	unsigned n = 0;
	bool more = true;

	*taken = 0;
	give_up_if_stuck(l, now_ns);
	while (n < max && more) {
		enum sl_link_state st = sl_lk_tx_state(l);

		if (link_rate_busy(&l->rate, now_ns))
			break; /* the line is still busy with what went before */

		if (st != l->state) {
			l->state = st;
			l->stats.enter_state[st]++;
		}
		switch (st) {
		case SL_LINK_INIT:
			sl_lk_tx_init(l, &l->stats.reinit_aborted);
			sl_lk_tx_transition(l, TX_EV_RING_READY);
			continue;
		case SL_LINK_SEND_PAUSE:
			more = ctrl_run(l, now_ns, SL_WIRE_KEY_PAUSE_REQ, &out[n]);
			break;
		case SL_LINK_PAUSE:
			more = ctrl_run(l, now_ns, SL_WIRE_KEY_IDLE, &out[n]);
			break;
		case SL_LINK_RETRANS:
			if (replay_settled(l)) {
				if (l->replay_slot > 2 * l->replay_count && l->rate.line_bps)
					wait_est_add(&l->tail_wait,
						     now_ns - l->replay_tail_start_ns);
				l->replay_active = false;
				continue;
			}
			if (!l->replay_active || replay_overtaken(l))
				replay_start(l);
			replay_step(l, now_ns, &out[n]);
			break;
		case SL_LINK_SEND_RETRANS:
			/* Runs, not RIFL's back-to-back stream (see the essay, "NACK runs"). */
			more = ctrl_run(l, now_ns, SL_WIRE_KEY_RETRANS_REQ, &out[n]);
			break;
		case SL_LINK_LEAVE:
			more = ctrl_run(l, now_ns, SL_WIRE_KEY_LEAVE, &out[n]);
			break;
		case SL_LINK_ACK_LEAVE:
			emit_ctrl(l, now_ns, SL_WIRE_KEY_LEAVE_ACK, &out[n]);
			if (--l->ack_left == 0) {
				/* The burst ends with the answer: the glue may stop after it. */
				sl_lk_tx_transition(l, TX_EV_ANSWERED);
				n++;
				more = false;
				continue;
			}
			break;
		default:
			link_rate_grow(&l->rate, now_ns); /* a no-op at the line */
			more = normal_step(l, now_ns, in, n_in, taken, &out[n]);
			break;
		}
		if (more)
			slot_take(l, now_ns, &out[n]);
		n += more;
	}
	release_flush(l);
	return n;
}

/* When the state machine next has a frame to send, the slot clock aside. */
static uint64_t
next_frame_ns(const struct sl_link *l)
{
	switch (sl_lk_tx_state(l)) {
	case SL_LINK_INIT:
	case SL_LINK_RETRANS:
		return 0;
	case SL_LINK_ACK_LEAVE:
		return 0;
	case SL_LINK_SEND_PAUSE:
	case SL_LINK_PAUSE:
	case SL_LINK_SEND_RETRANS:
	case SL_LINK_LEAVE:
		return l->run_left ? 0 : l->run_next_ns;
	default:
		if (l->fc_pending != SL_WIRE_FC_FILLER || l->warmup_left || l->clear_left)
			return 0;
		return l->last_tx_ns + l->conf.keepalive_ns;
	}
}

uint32_t
sl_link_tx_budget(const struct sl_link *l, uint64_t now_ns)
{
	return link_rate_frames(&l->rate, now_ns);
}

uint64_t
sl_link_next_tx_ns(const struct sl_link *l)
{
	uint64_t t = next_frame_ns(l);

	return l->rate.line_bps ? SL_MAX(t, l->rate.free_ns) : t;
}
