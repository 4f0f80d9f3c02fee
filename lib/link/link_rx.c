/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * link_rx.c - the link's receive half: RIFL's verification and rollback (link.c's essay, "RX"),
 * the control filter that raises and lowers the peer's flags, stale frames of a repeated replay
 * ("Stale frames"), the handshake and restarts ("Startup and restart"), and flow control on
 * the consumer queue ("Flow control").
 */
#include <assert.h>
#include <errno.h>
#include <string.h>

#include "link_priv.h"

/* A failure (or a full consumer queue) rolls back to thr - 16: RIFL's Listing 1. */
static void
rx_fail(struct sl_link *l, uint64_t now_ns)
{
	sl_lk_rx_transition(l, RX_EV_FAIL, now_ns);
	l->rx_id = l->thr - SL_LINK_ROLLBACK;
	l->stats.rx_rollbacks++;
}

/* Peer restarted: release the ring, restart IDs, and go back through the handshake. */
static void
link_reinit(struct sl_link *l)
{
	l->stats.peer_restarts++;
	sl_lk_tx_transition(l, TX_EV_RESTART);
	sl_lk_rx_reset(l);
}

/*
 * RIFL's control filter (RIFL (OSA 2022), section 4.B; RTL rx_controller): 8 consecutive identical
 * keys raise a flag; another control key resets the count, data frames reset it only once 16
 * consecutive regular frames (data, IDLE) have arrived, and those 16 also lower the flags. So the
 * NACKs a replaying peer puts in its odd slots still add up, while a verified stream clears them.
 * key is 0 for a data frame.
 */
static void
rx_flags(struct sl_link *l, uint16_t key, uint32_t arg)
{
	bool was_pause = l->flag_pause;

	if (key != SL_WIRE_KEY_LEAVE)
		sl_lk_tx_transition(l, TX_EV_PEER_HERE); /* one that has not left (or a new one) */
	if (key == 0 || key == SL_WIRE_KEY_IDLE)
		l->regular_cnt = SL_MIN(l->regular_cnt + 1, SL_LINK_REGULAR_CLEAR);
	else
		l->regular_cnt = 0;
	if (key == SL_WIRE_KEY_PAUSE_REQ)
		l->pause_cnt = SL_MIN(l->pause_cnt + 1, SL_LINK_CTRL_ACCEPT);
	else if (key != 0 || l->regular_cnt == SL_LINK_REGULAR_CLEAR)
		l->pause_cnt = 0;
	if (key == SL_WIRE_KEY_LEAVE) {
		/* Answer once per 8 (the answer re-initializes, which restarts the count). */
		if (++l->leave_cnt == SL_LINK_CTRL_ACCEPT)
			sl_lk_tx_transition(l, TX_EV_PEER_LEAVE);
		l->leave_cnt = SL_MIN(l->leave_cnt, SL_LINK_CTRL_ACCEPT);
	} else if (key != 0 || l->regular_cnt == SL_LINK_REGULAR_CLEAR) {
		l->leave_cnt = 0;
	}
	if (key == SL_WIRE_KEY_LEAVE_ACK) {
		if (++l->leave_ack_cnt == SL_LINK_CTRL_ACCEPT)
			sl_lk_tx_transition(l, TX_EV_LEAVE_ACK);
		l->leave_ack_cnt = SL_MIN(l->leave_ack_cnt, SL_LINK_CTRL_ACCEPT);
	} else if (key != 0 || l->regular_cnt == SL_LINK_REGULAR_CLEAR) {
		l->leave_ack_cnt = 0;
	}
	if (key == SL_WIRE_KEY_RETRANS_REQ) {
		l->retrans_cnt = l->retrans_cnt && arg == l->retrans_arg
					 ? SL_MIN(l->retrans_cnt + 1, SL_LINK_CTRL_ACCEPT)
					 : 1;
		l->retrans_arg = arg;
	} else if (key != 0 || l->regular_cnt == SL_LINK_REGULAR_CLEAR) {
		l->retrans_cnt = 0;
	}

	if (l->pause_cnt == SL_LINK_CTRL_ACCEPT) {
		if (!l->flag_pause)
			l->stats.flag_pause++;
		l->flag_pause = true;
	} else if (l->retrans_cnt == SL_LINK_CTRL_ACCEPT ||
		   l->regular_cnt == SL_LINK_REGULAR_CLEAR) {
		l->flag_pause = false;
	}
	if (l->regular_cnt == SL_LINK_REGULAR_CLEAR) {
		l->flag_retrans = false;
	} else if (l->retrans_cnt == SL_LINK_CTRL_ACCEPT) {
		if (!l->flag_retrans)
			l->stats.flag_retrans++;
		l->flag_retrans = true;
		/* The run's argument: the count outlives the run through data frames (arg 0). */
		l->flag_retrans_arg = l->retrans_arg;
	}
	/*
	 * A peer sends PAUSE_REQ only while its RX is not up, and IDLE or data only once it is: so
	 * the pause flag rising after data from the peer, or after a verified IDLE when the
	 * PAUSE_REQs carry ID 0 (a fresh start), means the peer re-initialized. The IDLE matters
	 * for a restarted receiver of a one-way stream, which never sent data. A fresh pair never
	 * re-initializes each other: until a peer's RX is up it sends nothing but PAUSE_REQ.
	 */
	if (!was_pause && l->flag_pause &&
	    (l->peer_delivered || (l->peer_was_up && l->pause_from_zero)))
		link_reinit(l);
}

/*
 * Is f, which fails verification while the RX is in sync (and has delivered from this peer, so
 * a fresh RX never locks onto an old stream), a stale copy of a frame this end has already
 * taken (a repeated replay)? RIFL treats it as an error; in software a peer's NACKs
 * queue behind each other, so a replay may repeat after this end has recovered, and treating
 * its frames as errors would NACK again and never end. The ID f implies (faithful: the one its
 * CRC verifies at; extended: its explicit ID, CRC verified) is returned in *id when it lies in
 * [thr - ring - 16, thr - 1] for a data frame, [thr - ring - 16, thr] for a control frame (which
 * carries the next data frame's ID).
 */
static bool
rx_stale(const struct sl_link *l, const struct sl_wire_frame *f, bool ctrl, uint32_t *id)
{
	uint32_t window = l->ring_mask + 1 + SL_LINK_ROLLBACK, last = l->thr - !ctrl, behind;

	if (l->conf.fmt.mode == SL_WIRE_MODE_EXTENDED) {
		if (!sl_wire_vcode_ok(f, f->id))
			return false;
		behind = last - f->id;
	} else {
		behind = (last - (uint32_t)(f->crc ^ f->vcode)) & SL_CRC12_MASK;
	}
	*id = last - behind;
	return behind < window;
}

static void
rx_good(struct sl_link *l)
{
	sl_lk_rx_transition(l, RX_EV_VERIFIED, 0);
}

/* Index of a (known) control key in stats.rx_ctrl. */
static unsigned
ctrl_index(uint16_t key)
{
	switch (key) {
	case SL_WIRE_KEY_IDLE:
		return 0;
	case SL_WIRE_KEY_PAUSE_REQ:
		return 1;
	case SL_WIRE_KEY_RETRANS_REQ:
		return 2;
	case SL_WIRE_KEY_LEAVE:
		return 3;
	default:
		return 4;
	}
}

/*
 * End-to-end mode: a verified data or filler frame with ID id moves the stream past it: IDs
 * skipped were lost on the way, an ID behind is a late frame. Only these frames count: a
 * control frame may come from the peer's previous incarnation (its LEAVE after this end
 * answered and re-initialized), whose IDs say nothing of the new stream.
 */
static void
e2e_follow(struct sl_link *l, uint32_t id)
{
	if (sl_seq_ge(id, l->rx_id)) {
		l->stats.rx_lost += id - l->rx_id;
		l->rx_id = l->thr = id + 1;
	} else {
		l->stats.rx_late++;
	}
}

static void
rx_ctrl(struct sl_link *l, uint64_t now_ns, const struct sl_wire_frame *f)
{
	bool ext = l->conf.fmt.mode == SL_WIRE_MODE_EXTENDED;
	bool e2e = l->conf.replay == SL_LINK_REPLAY_NONE;
	bool at_id = e2e ? sl_wire_vcode_ok(f, f->id)
			 : sl_wire_vcode_ok(f, l->rx_id) && (!ext || f->id == l->rx_id);
	uint32_t id;

	if (!e2e && l->rx != RX_ERROR && l->peer_delivered && !at_id &&
	    f->key != SL_WIRE_KEY_PAUSE_REQ && rx_stale(l, f, true, &id)) {
		/*
		 * From a repeated replay: follow it (its next data frame is id) without counting
		 * the key. PAUSE_REQ is never stale: a restarting peer sends it with ID 0.
		 */
		l->stats.rx_stale++;
		l->rx_id = id;
		return;
	}
	if ((ext && !sl_wire_vcode_ok(f, f->id)) || (l->rx != RX_ERROR && !at_id)) {
		/*
		 * Corrupted, or a gap before it: never counted; in sync it is an error. Before the
		 * RX is up there is no stream to be out of step with: such a frame comes from a
		 * peer that has not started afresh (a departed peer's LEAVE after this end answered
		 * it). An error episode would then take any ID and count that peer's keys, and be
		 * given up after stuck_ns: another session, with no peer.
		 */
		l->stats.rx_bad_ctrl++;
		l->pause_cnt = l->retrans_cnt = l->regular_cnt = 0;
		l->leave_cnt = l->leave_ack_cnt = 0;
		if ((l->rx == RX_IN_STEP || l->rx == RX_BACK) && !e2e)
			rx_fail(l, now_ns);
		return;
	}
	if (at_id)
		rx_good(l);
	if (at_id && f->key == SL_WIRE_KEY_IDLE)
		l->peer_was_up = true;
	if (f->key == SL_WIRE_KEY_PAUSE_REQ)
		l->pause_from_zero = sl_wire_vcode_ok(f, 0) && (!ext || f->id == 0);
	l->stats.rx_ctrl[ctrl_index(f->key)]++;
	rx_flags(l, f->key, f->arg);
}

/* A filler's flow-control word takes effect. */
static void
rx_fc(struct sl_link *l, const struct sl_wire_frame *f)
{
	if (f->fc == SL_WIRE_FC_PAUSE) {
		l->stats.rx_fc_pause++;
		l->fc_remote_paused = true;
	} else if (f->fc == SL_WIRE_FC_RESUME) {
		l->stats.rx_fc_resume++;
		l->fc_remote_paused = false;
	}
}

/*
 * End-to-end mode: a frame that verifies against its own ID is taken wherever it falls (late
 * ones too: the transport sorts them out); one that does not is dropped, never NACKed. A full
 * consumer queue drops too: with nothing replayed, the transport resends.
 */
static bool
rx_data_e2e(struct sl_link *l, const struct sl_wire_frame *f)
{
	if (!sl_wire_vcode_ok(f, f->id)) {
		l->stats.rx_bad_data++;
		return false;
	}
	rx_good(l);
	e2e_follow(l, f->id);
	if (f->meta == SL_WIRE_META_FILLER) {
		rx_fc(l, f);
		return false;
	}
	if (l->occupancy >= l->conf.fc_frames) {
		l->stats.rx_fc_overflow++;
		return false;
	}
	l->peer_delivered = true;
	l->occupancy++;
	l->stats.rx_delivered++;
	fc_update(l);
	return true;
}

/*
 * Extended mode, in error: f does not verify at rx_id, but it verifies on its explicit ID, which
 * lies after rx_id and no later than thr. It is a frame of the replay, and the ones between
 * were lost: duplicates of frames already delivered, which the rollback re-verifies only to
 * find its place in a stream of implicit IDs. An explicit ID that verifies is that place, so
 * the RX takes f there. RIFL's rule would fail again at the same rollback point, and the
 * replay, whose NACK names the same frame, could not tell: it would run to its end and repeat
 * (about a quarter of the replays at 1 % loss each way, 16 duplicates in each).
 */
static bool
rx_resync(struct sl_link *l, const struct sl_wire_frame *f)
{
	if (l->conf.fmt.mode != SL_WIRE_MODE_EXTENDED || l->rx != RX_ERROR ||
	    !sl_seq_gt(f->id, l->rx_id) || sl_seq_gt(f->id, l->thr) || !sl_wire_vcode_ok(f, f->id))
		return false;
	l->stats.rx_resyncs++;
	l->rx_id = f->id;
	return true;
}

/* A data or filler frame; returns true when it is delivered. */
static bool
rx_data(struct sl_link *l, uint64_t now_ns, const struct sl_wire_frame *f)
{
	bool ext = l->conf.fmt.mode == SL_WIRE_MODE_EXTENDED;
	uint32_t id;

	if (l->rx == RX_DOWN) {
		/* From a peer that has not re-initialized yet: its IDs may alias ours. */
		l->stats.rx_not_up++;
		return false;
	}
	rx_flags(l, 0, 0);
	if (l->conf.replay == SL_LINK_REPLAY_NONE)
		return rx_data_e2e(l, f);
	if ((!sl_wire_vcode_ok(f, l->rx_id) || (ext && f->id != l->rx_id)) && !rx_resync(l, f)) {
		if (l->rx != RX_ERROR && l->peer_delivered && rx_stale(l, f, false, &id)) {
			/*
			 * Follow the repeated replay from the frame after id: its next frames
			 * verify as duplicates, and nothing is delivered until this end is back
			 * in step at thr, so a corrupted stale frame cannot pass for thr.
			 */
			l->stats.rx_stale++;
			l->rx_id = id + 1;
			return false;
		}
		l->stats.rx_bad_data++;
		rx_fail(l, now_ns);
		return false;
	}
	l->verified_ns = now_ns;
	if (l->rx == RX_ERROR && l->nack_timed) {
		l->nack_timed = false;
		wait_est_add(&l->nack_wait, now_ns - l->nack_out_ns);
	}
	if (l->rx_id != l->thr) {
		l->stats.rx_duplicates++;
		l->rx_id++;
		rx_good(l);
		if (l->rx == RX_ERROR && l->rx_id == l->thr)
			sl_lk_rx_transition(l, RX_EV_AT_THR, now_ns);
		return false;
	}
	if (f->meta != SL_WIRE_META_FILLER && l->occupancy >= l->conf.fc_frames) {
		l->stats.rx_fc_overflow++;
		rx_fail(l, now_ns);
		return false;
	}
	if (l->rx == RX_ERROR) /* rx_resync() went straight to thr: every duplicate was lost */
		sl_lk_rx_transition(l, RX_EV_AT_THR, now_ns);
	l->thr++;
	l->rx_id++;
	l->peer_delivered = true;
	sl_lk_rx_transition(l, RX_EV_TAKEN, now_ns);
	if (f->meta == SL_WIRE_META_FILLER) {
		rx_fc(l, f);
		return false;
	}
	l->occupancy++;
	l->stats.rx_delivered++;
	fc_update(l);
	return true;
}

unsigned
sl_link_rx_burst(struct sl_link *l, uint64_t now_ns, const struct sl_link_rx_frame *in, unsigned n,
		 struct sl_link_delivery *out)
{
	unsigned nd = 0;

	for (unsigned i = 0; i < n; i++) {
		struct sl_wire_frame f;
		enum sl_wire_reject r;

		l->stats.rx_frames++;
		r = sl_wire_decode(&l->conf.fmt, in[i].buf, in[i].len, &f);
		if (r == SL_WIRE_OK)
			l->unanswered = 0;
		if (r != SL_WIRE_OK) {
			l->stats.rx_malformed[r - 1]++;
			l->pause_cnt = l->retrans_cnt = l->regular_cnt = 0;
			release_one(l, in[i].handle);
		} else if (f.syn == SL_WIRE_SYN_CTRL) {
			rx_ctrl(l, now_ns, &f);
			release_one(l, in[i].handle);
		} else if (rx_data(l, now_ns, &f)) {
			out[nd].handle = in[i].handle;
			out[nd].body_off = f.body_off;
			out[nd].body_len = f.body_len;
			out[nd].meta = f.meta;
			nd++;
		} else {
			release_one(l, in[i].handle);
		}
	}
	release_flush(l);
	return nd;
}

void
sl_link_rx_consumed(struct sl_link *l, unsigned n)
{
	l->occupancy -= SL_MIN(n, l->occupancy);
	fc_update(l);
}
