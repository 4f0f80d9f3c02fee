/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * link.c - a RIFL-like reliable link in software (RIFL (OSA 2022), section 3 for the frames,
 * section 4 for the protocol; its RTL, github.com/swift-link/RIFL, for what the paper leaves out).
 * This file has the model and the states (their transition functions), sizing, create and free;
 * link_tx.c the transmit half, link_rx.c the receive half, private/link_priv.h what they share.
 *
 * Model. Each direction of a lane is a stream of data frames numbered 0, 1, 2, ... (the frame
 * ID; new payloads, fillers and FC frames all take one). The ID is never sent in faithful mode:
 * VCODE = CRC12 XOR (ID mod 4096), so a frame verifies only at the position the receiver
 * expects, and a missing or corrupted frame makes the next frame fail. The sender keeps the
 * last 2^k data frames in a ring indexed by ID mod 2^k. The receiver never acknowledges; on a
 * failure it asks for a replay (NACK), and the sender replays the ring oldest first. Replayed
 * frames carry their original ID: RIFL's wire IDs are k bits wide, and a replay that re-sends
 * 2^k frames "with the next IDs" re-sends exactly the original IDs modulo 2^k, so this is the
 * same sequence, kept unwrapped in 32 bits. Control frames (IDLE, PAUSE_REQ, RETRANS_REQ) carry
 * the sender's current ID (the next data frame's) and do not advance it.
 *
 * States. Three small machines, each an enum changed by one transition function ("The states"
 * below; an event a state cannot take trips an assertion), and the TX state each slot sends
 * from, which is not kept but read off them and the peer's two flags in RIFL's priority order
 * (sl_lk_tx_state()).
 *
 * RX states (enum rx_state, sl_lk_rx_transition()), the receiver's place in the peer's stream:
 *
 *   DOWN      -> IN_STEP  8 control frames verified at rx_id since the session began (data
 *                         frames before that are ignored, rx_not_up: the handshake)
 *   IN_STEP   -> ERROR    a frame fails, or finds the consumer queue full: a new episode
 *                         (rx_errors; its start is the recovery time's and stuck_ns's origin)
 *   ERROR     -> ERROR    another failure: roll back again, the same episode
 *   ERROR     -> BACK     the replay brought rx_id back to thr (rx_recoveries; 16 IDLEs owed to
 *                         lower the peer's NACK flag)
 *   BACK      -> IN_STEP  a frame taken at thr: the episode is over (recovery_ns)
 *   BACK      -> ERROR    a failure first: the same episode again (rx_errors)
 *   any       -> DOWN     a new session (sl_lk_rx_reset(): the peer restarted or left, an episode
 * was given up)
 *
 * Every state but DOWN rolls back on a failure; only ERROR sends NACKs. End to end
 * (SL_LINK_REPLAY_NONE) nothing fails: DOWN -> IN_STEP is the whole machine.
 *
 * TX life (enum tx_life, sl_lk_tx_transition()), this end's session and its own goodbye:
 *
 *   INIT      -> RUNNING  the TX ran INIT (sl_lk_tx_init(): ring released, IDs from 0)
 *   RUNNING   -> INIT     re-initialize: the peer restarted (its pause flag rose once it was
 *                         known up), it left and was answered, or an episode was stuck
 *   INIT, RUNNING -> LEAVING  sl_link_leave()
 *   LEAVING   -> LEFT     the peer's LEAVE_ACK x 8 (leave_acks); LEAVE_ACK elsewhere is no answer
 *   LEAVING, LEFT         keep sending LEAVE: a re-initialization is moot, the ring is not
 *                         sent from again
 *
 * Answer (enum answer, sl_lk_tx_transition()), this end's answer to the peer's goodbye:
 *
 *   NONE, SENDING   -> SENDING    the peer's LEAVE x 8: a run of 16 LEAVE_ACK (ack_left)
 *   SENDING         -> SENT       its last frame went out: a new session (peer_leaves)
 *   SENT, RESENDING -> RESENDING  LEAVE x 8 again with nothing but LEAVE since: the same
 *                                 goodbye, answered again
 *   RESENDING       -> SENT       its last frame went out: no new session (the one begun stands)
 *   SENT            -> NONE       any other key or a data frame: the peer is there again
 *   RESENDING       -> SENDING    the same, mid-answer: this answer begins a new session
 *
 * The peer's flags (flag_pause, flag_retrans) are RIFL's, the output of its control filter
 * (rx_flags()): raised and lowered by their own counts, both up at once at times, read by the TX.
 *
 * TX states (enum sl_link_state, sl_lk_tx_state()), highest priority first (RIFL RTL
 * tx_controller.sv), and first two of sluice's own orderly goodbye (RIFL links never close):
 *
 *   ACK_LEAVE    answer SENDING or       one run of LEAVE_ACK, then INIT (the peer's ring and
 *                RESENDING               IDs are gone; it will start afresh from ID 0)
 *   LEAVE        life LEAVING or LEFT    runs of LEAVE every ctrl_interval_ns, nothing else,
 *                                        until the glue has the peer's LEAVE_ACK x 8 and closes
 *   INIT         life INIT               release the ring, restart IDs at 0 (at create, and
 *                                        after the peer restarted)
 *   SEND_PAUSE   RX DOWN                 runs of PAUSE_REQ every ctrl_interval_ns
 *   PAUSE        peer's PAUSE_REQ x 8    runs of IDLE, nothing else
 *   RETRANS      peer's RETRANS_REQ x 8  replay: 2 x n slots alternating ring frame / IDLE (or
 *                or replay running       RETRANS_REQ if the local RX is in error too), then
 *                (replay_active: it      2^k / 2 slots of IDLE / RETRANS_REQ (the tail covers
 *                resumes after a PAUSE   the half RTT the peer needs to lower its flag); repeat
 *                or an ACK_LEAVE)        while the flag is up (with adapt_rate at half the
 *                                        rate each time, link_rate.c); n = 2^k (RIFL) or
 *                                        from the NACK's ID (SL_LINK_REPLAY_MISSING, extended).
 *                                        The paper's 2.5 x 2^k; the RTL's tail is 2^k slots
 *   SEND_RETRANS RX ERROR                runs of RETRANS_REQ (the NACK), again after the
 *                                        measured answer time (at most ctrl_interval_ns)
 *   NORMAL                               FC frame > warm-up filler > new data (unless
 *                                        silent_frames went out unanswered, peer_silent()) > IDLE
 *                                        (flag-clearing run, or keepalive after keepalive_ns).
 *                                        16 warm-up fillers (the receiver's warm-up; the RTL
 *                                        sends 2^k to fill its shift register)
 *
 * A TX state counts as entered (enter_state) when a burst works from it: states the machines
 * pass through between two bursts are not counted, and a session begins (sl_link_sessions())
 * when INIT runs.
 *
 * The goodbye exists for ports whose two ends share memory (memif): the end that stays must
 * not be inside its receive or transmit call when the leaving end's close unmaps the rings, so
 * it answers, stops touching the port (lib/dp) and only then lets the other end close.
 *
 * RX (RIFL Listing 1 as the RTL vcode_val does it): rx_id = 0, thr = 16. A data frame verifies
 * when VCODE == CRC ^ rx_id (extended mode: and its explicit ID == rx_id). Verified at
 * rx_id == thr: delivered (filler / FC frames take effect instead), thr++, rx_id++; verified
 * below thr: a duplicate of a replay, dropped, rx_id++. A failure sets the error flag and rolls
 * rx_id back to thr - 16, so 16 consecutive verified 12-bit codes are needed before anything
 * is delivered again (white noise passes with probability 2^-192); the flag clears when the
 * frame at thr - 1 verifies. In extended mode the explicit ID is the place those 16 find, so a
 * replayed frame whose ID verifies between rx_id and thr is taken there, the duplicates lost
 * before it notwithstanding (rx_resync). The first 16 frames after (re)initialization are never
 * delivered: the sender sends 16 fillers first.
 *
 * Software differences (RIFL's constraint C, section 2, has frames corrupted, never lost): the NIC
 * drops frames with a bad FCS, so corruption arrives as a gap, which the next frame's VCODE
 * exposes; so control frames are verified too while the RX is in sync (a control frame that fails
 * there is an error, like a data frame), and the sender emits an IDLE when it has sent nothing for
 * keepalive_ns. A lost last frame is therefore detected within keepalive_ns + one-way delay, and
 * recovered within that plus a one-way delay, 8 NACK slots and the replay up to the missing frame
 * (at most 2 x 2^k slots).
 * While the RX is in error the peer's current ID is
 * unknown, so control keys are taken on their syntax (faithful mode; the RTL never checks
 * them) or on CRC with their explicit ID (extended mode); RIFL's filter applies in every case:
 * a flag rises only after 8 identical keys with no other control key, malformed or failing
 * frame between them, and 16 consecutive regular frames (data or IDLE) reset the count and
 * lower the flags (RIFL (OSA 2022), section 4.B).
 *
 * NACK runs: RIFL's receiver sends RETRANS_REQ in every slot while in error, which on a wire
 * of fixed slots costs nothing; in software "every slot" is as fast as the lcore loops, and a
 * veth fed millions of NACKs a second drops the very replay they ask for (the episode never
 * ends: docs/link.md). So an end in error sends runs of SL_LINK_CTRL_RUN RETRANS_REQ (twice the
 * 8 the peer's filter needs), as it does PAUSE_REQ; a run whose rollback point has moved (a new
 * episode: frames were delivered since the last run) goes at once, as only progress moves it,
 * and one that brought no replay is repeated after the answer time measured on earlier
 * episodes, doubled per repeat, at most every ctrl_interval_ns (run_interval). The peer's flag,
 * once up, stays up without more of them (only 16 regular frames lower it), so its replays repeat
 * until this end recovers and its flag-clearing IDLEs arrive. In extended mode a replay also ends
 * when that happens, tail or not, one overtaken by a NACK naming a later frame starts again from
 * there, and a tail lasts the wait for the flag measured on earlier tails rather than half a ring
 * (replay_step, replay_overtaken, tail_ns): docs/link.md, "Replay" and "Recovery time".
 *
 * Stale frames: in software the NACKs a receiver sends queue up, so its peer may
 * repeat a replay after the receiver has recovered. While in sync, a frame that fails but
 * carries an ID up to ring + 16 behind thr (faithful: the ID its CRC implies; extended: its
 * explicit ID, CRC verified) is not an error: the RX follows the replay from there (rx_id
 * moves back, the next frames verify as duplicates) and delivers again only once back in step
 * at thr. A frame really missing at thr is still exposed by the next frame or keepalive, and
 * a corrupted stale frame cannot pass for thr because the RX is not at thr while following
 * (rx_stale()).
 *
 * Startup and restart: the local RX is up after 8 consecutive verified control frames; until
 * then data frames are ignored (they come from a peer that has not re-initialized yet, whose
 * 12-bit IDs could alias the fresh ones). A fresh end sends PAUSE_REQ runs carrying ID 0, which
 * a fresh peer verifies, and a peer in PAUSE answers with IDLE runs carrying its ID 0. If an
 * end that has already delivered data from its peer sees the peer's pause flag rise, the peer
 * has restarted: it re-initializes too (ring contents are released and counted in
 * reinit_aborted: they may or may not have been delivered, and the layer above owns end-to-end
 * recovery). An error episode in which no data frame verifies for stuck_ns (when set: only a
 * link with a transport above can afford to lose what its rings hold) cannot end by replay
 * (the frame the RX rolled back to has left the peer's ring: its NACKs took longer than the ring
 * lasts); the RX gives up and re-initializes the same way (stuck_reinits), and the peer follows
 * on its PAUSE_REQ.
 *
 * Flow control (RIFL sec. 3): the consumer queue holds fc_frames = S_FC frames; crossing
 * 2/3 S_FC sends an FC pause frame, falling to 1/3 sends resume. FC frames are data frames
 * (ring, replay), so they are never lost. RIFL asks S_FC >= 1.5 x rate x RTT, budgeting half
 * an RTT of frames above Thr_ON; but after the pause leaves, a full RTT of frames still comes
 * in (half already on the wire, half sent before the pause arrives), so sl_link_fc_frames()
 * gives 3 x rate x RTT, which meets RIFL's bound and leaves a full RTT above 2/3. A frame
 * that would overflow the queue anyway is refused like a bad frame (rollback and NACK), so it
 * comes back later: the queue never overflows and nothing is dropped.
 *
 * Units: times in ns, sizes in frames unless named _bytes; IDs are uint32_t with wrap.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "link_priv.h"

static const char *const state_names[SL_LINK_STATE__MAX] = {
	[SL_LINK_INIT] = "init",       [SL_LINK_SEND_PAUSE] = "send_pause",
	[SL_LINK_PAUSE] = "pause",     [SL_LINK_SEND_RETRANS] = "send_retrans",
	[SL_LINK_RETRANS] = "retrans", [SL_LINK_NORMAL] = "normal",
	[SL_LINK_LEAVE] = "leave",     [SL_LINK_ACK_LEAVE] = "ack_leave",
};

const char *
sl_link_state_name(enum sl_link_state s)
{
	return (unsigned)s < SL_LINK_STATE__MAX ? state_names[s] : "unknown";
}

#define S(m, h) SL_STAT(struct sl_link_stats, m, h)
#define SA(m, i, name_, h)                                                                         \
	{                                                                                          \
		.name = name_, .help = h,                                                          \
		.offset = offsetof(struct sl_link_stats, m) + (i) * sizeof(uint64_t)               \
	}
static const struct sl_stat_desc stat_desc[] = {
	SA(enter_state, SL_LINK_INIT, "enter_init", "TX entered INIT"),
	SA(enter_state, SL_LINK_SEND_PAUSE, "enter_send_pause", "TX entered SEND_PAUSE"),
	SA(enter_state, SL_LINK_PAUSE, "enter_pause", "TX entered PAUSE"),
	SA(enter_state, SL_LINK_SEND_RETRANS, "enter_send_retrans", "TX entered SEND_RETRANS"),
	SA(enter_state, SL_LINK_RETRANS, "enter_retrans", "TX entered RETRANS"),
	SA(enter_state, SL_LINK_NORMAL, "enter_normal", "TX entered NORMAL"),
	SA(enter_state, SL_LINK_LEAVE, "enter_leave", "TX entered LEAVE"),
	SA(enter_state, SL_LINK_ACK_LEAVE, "enter_ack_leave", "TX entered ACK_LEAVE"),
	S(tx_data, "new payload frames sent"),
	S(tx_filler, "warm-up filler frames sent"),
	S(tx_fc_pause, "FC pause frames sent"),
	S(tx_fc_resume, "FC resume frames sent"),
	S(tx_replayed, "ring frames sent again"),
	S(tx_idle, "IDLE control frames sent"),
	S(tx_keepalive, "IDLE frames sent as keepalives"),
	S(tx_pause_req, "PAUSE_REQ control frames sent"),
	S(tx_retrans_req, "RETRANS_REQ control frames sent"),
	S(tx_leave, "LEAVE control frames sent"),
	S(tx_leave_ack, "LEAVE_ACK control frames sent"),
	S(replays, "replays started"),
	S(replay_repeats, "replays restarted while the NACK flag stayed up"),
	S(rate_cuts, "halvings of the send rate: a replay repeated (link_rate.c)"),
	S(silent_holds, "times new data waited: silent_frames went out with nothing from the peer"),
	S(nack_outside_ring, "NACKs naming a frame no longer in the ring (extended mode)"),
	S(ring_evictions, "ring handles released by newer frames"),
	S(reinit_aborted, "ring handles released by a re-initialization"),
	S(peer_restarts, "re-initializations after the peer restarted"),
	S(stuck_reinits, "error episodes given up after stuck_ns: link re-initialized"),
	S(rx_frames, "frames received"),
	S(rx_delivered, "payload frames delivered"),
	S(rx_duplicates, "verified duplicates dropped"),
	S(rx_not_up, "data frames ignored before the lane was up"),
	S(rx_stale, "frames from a repeated replay dropped while in sync"),
	S(rx_resyncs, "extended mode, in error: replayed frames taken after lost duplicates"),
	SA(rx_malformed, SL_WIRE_ERR_SHORT - 1, "rx_malformed_short", "frames too short"),
	SA(rx_malformed, SL_WIRE_ERR_SYN - 1, "rx_malformed_syn", "frames with SYN 00 or 11"),
	SA(rx_malformed, SL_WIRE_ERR_CTRL_META - 1, "rx_malformed_ctrl_meta",
	   "control frames with META != 00"),
	SA(rx_malformed, SL_WIRE_ERR_KEY - 1, "rx_malformed_key",
	   "control frames with unknown key"),
	SA(rx_malformed, SL_WIRE_ERR_FC - 1, "rx_malformed_fc_code",
	   "fillers with unknown FC code"),
	SA(rx_malformed, SL_WIRE_ERR_EMPTY - 1, "rx_malformed_empty", "data frames without body"),
	SA(rx_malformed, SL_WIRE_ERR_LONG - 1, "rx_malformed_long", "frames over 65535 bytes"),
	S(rx_bad_data, "data frames failing verification"),
	S(rx_bad_ctrl, "control frames failing verification"),
	S(rx_errors, "error episodes"),
	S(rx_rollbacks, "rollbacks to threshold - 16"),
	S(rx_recoveries, "error episodes recovered"),
	S(rx_fc_overflow, "frames refused: consumer queue full"),
	S(rx_lost, "end-to-end mode: frame IDs skipped (frames lost on the way)"),
	S(rx_late, "end-to-end mode: frames behind the newest ID, delivered"),
	S(rx_fc_pause, "FC pause frames accepted"),
	S(rx_fc_resume, "FC resume frames accepted"),
	SA(rx_ctrl, 0, "rx_ctrl_idle", "IDLE frames counted"),
	SA(rx_ctrl, 1, "rx_ctrl_pause_req", "PAUSE_REQ frames counted"),
	SA(rx_ctrl, 2, "rx_ctrl_retrans_req", "RETRANS_REQ frames counted"),
	SA(rx_ctrl, 3, "rx_ctrl_leave", "LEAVE frames counted"),
	SA(rx_ctrl, 4, "rx_ctrl_leave_ack", "LEAVE_ACK frames counted"),
	S(flag_pause, "pause flag raised"),
	S(flag_retrans, "retransmit flag raised"),
	S(peer_leaves, "peer's LEAVE accepted, answered, link re-initialized"),
	S(leave_acks, "peer's LEAVE_ACK accepted"),
};
#undef S
#undef SA

SL_STAT_TABLE_DEFINE(sl_link_stat_table, struct sl_link_stats, stat_desc);

static uint32_t
fmt_max_order(const struct sl_wire_fmt *fmt)
{
	return fmt->mode == SL_WIRE_MODE_EXTENDED ? SL_LINK_ORDER_MAX_EXTENDED
						  : SL_LINK_ORDER_MAX_FAITHFUL;
}

/* Frames in flight over one RTT at rate_bps, rounded up. */
static uint64_t
bdp_frames(uint64_t rate_bps, uint64_t rtt_ns, uint32_t frame_bytes)
{
	uint64_t bits = (uint64_t)((unsigned __int128)rate_bps * rtt_ns / SL_NS_PER_S);

	return SL_DIV_ROUND_UP(bits, (uint64_t)frame_bytes * 8);
}

int
sl_link_ring_order(const struct sl_wire_fmt *fmt, uint64_t rate_bps, uint64_t rtt_ns,
		   uint32_t frame_bytes)
{
	uint64_t need;
	int k;

	if (fmt == NULL || frame_bytes == 0)
		return -EINVAL;
	need = bdp_frames(rate_bps, rtt_ns, frame_bytes) + SL_LINK_RING_MARGIN;
	if (need > (UINT64_C(1) << fmt_max_order(fmt)))
		return -ERANGE;
	k = 64 - __builtin_clzll(sl_align_pow2(need)) - 1;
	return SL_MAX(k, (int)SL_LINK_ORDER_MIN);
}

uint32_t
sl_link_fc_frames(uint64_t rate_bps, uint64_t rtt_ns, uint32_t frame_bytes)
{
	uint64_t f = frame_bytes ? SL_LINK_FC_RTTS * bdp_frames(rate_bps, rtt_ns, frame_bytes) : 0;

	return (uint32_t)SL_MIN(SL_MAX(f, 3), UINT32_MAX);
}

/* --------------------------------------------------------- The states */

/*
 * The receive state's one transition function (the essay's "RX states" has the table). The
 * callers do the verification; this says what a verified, failed or taken frame does to the
 * state, and counts the episode. An event a state cannot receive is a bug in the caller.
 */
void
sl_lk_rx_transition(struct sl_link *l, enum rx_event ev, uint64_t now_ns)
{
	switch (ev) {
	case RX_EV_RESET:
		l->rx = RX_DOWN;
		l->good_run = 0;
		return;
	case RX_EV_VERIFIED:
		if (l->rx == RX_DOWN && ++l->good_run >= SL_LINK_CTRL_ACCEPT)
			l->rx = RX_IN_STEP;
		return; /* up: nothing to count */
	case RX_EV_FAIL:
		assert(l->rx != RX_DOWN);  /* no stream to fail in yet: callers check */
		if (l->rx == RX_IN_STEP) { /* a new episode */
			l->stats.rx_errors++;
			l->err_start_ns = now_ns;
		} else if (l->rx == RX_BACK) { /* the same episode fails again before it ended */
			l->stats.rx_errors++;
		}
		l->rx = RX_ERROR;
		return;
	case RX_EV_AT_THR:
		assert(l->rx == RX_ERROR);
		l->rx = RX_BACK;
		l->stats.rx_recoveries++;
		l->clear_left = SL_LINK_REGULAR_CLEAR; /* IDLEs to lower the peer's NACK flag */
		return;
	case RX_EV_TAKEN:
		assert(l->rx == RX_IN_STEP || l->rx == RX_BACK);
		if (l->rx == RX_BACK)
			sl_hist_add(&l->recovery_ns, now_ns - l->err_start_ns);
		l->rx = RX_IN_STEP;
		return;
	}
}

/*
 * The TX's own transition function: its life (session and goodbye) and its answer to the
 * peer's goodbye (the essay's "TX life" and "answer" tables). The TX state a slot sends from is
 * sl_lk_tx_state(), RIFL's priorities over these, the receive state and the peer's flags.
 */
void
sl_lk_tx_transition(struct sl_link *l, enum tx_event ev)
{
	switch (ev) {
	case TX_EV_RESTART:
		/* A leaving end never sends from its ring again: nothing to restart. */
		if (l->life == LIFE_RUNNING)
			l->life = LIFE_INIT;
		return;
	case TX_EV_RING_READY:
		assert(l->life == LIFE_INIT);
		l->life = LIFE_RUNNING;
		return;
	case TX_EV_LEAVE:
		if (l->life == LIFE_INIT || l->life == LIFE_RUNNING)
			l->life = LIFE_LEAVING;
		return;
	case TX_EV_LEAVE_ACK:
		/* No answer to an end that is not leaving, nor twice to one that is. */
		if (l->life == LIFE_LEAVING) {
			l->life = LIFE_LEFT;
			l->stats.leave_acks++;
		}
		return;
	case TX_EV_PEER_LEAVE:
		/* (Again while answering: the run starts over.) */
		l->answer = l->answer == ANSWER_NONE || l->answer == ANSWER_SENDING
				    ? ANSWER_SENDING
				    : ANSWER_RESENDING;
		l->ack_left = SL_LINK_CTRL_RUN;
		return;
	case TX_EV_PEER_HERE:
		if (l->answer == ANSWER_SENT)
			l->answer = ANSWER_NONE;
		else if (l->answer == ANSWER_RESENDING)
			l->answer = ANSWER_SENDING; /* the answer is to a peer that has come back */
		return;
	case TX_EV_ANSWERED:
		/*
		 * The peer's LEAVE is answered: start afresh, as the peer will when it comes back.
		 * A LEAVE that comes after that answer, with nothing but LEAVE in between, is the
		 * same peer's goodbye: the rest of the run answered (the answer can go out between
		 * two RX bursts of it), or a run the leaving end repeated while the answer was on
		 * its way (with IDs checked the fresh RX rejects them, rx_ctrl(); end to end it
		 * takes them). It is answered again, but this end has already started afresh:
		 * doing so again would begin another session with no peer (the queue pairs above
		 * restarted twice for one departure).
		 */
		assert(l->answer == ANSWER_SENDING || l->answer == ANSWER_RESENDING);
		assert(l->ack_left == 0);
		l->peer_left = true;
		if (l->answer == ANSWER_RESENDING) {
			l->leave_cnt = 0; /* and the next 8 are answered too */
		} else {
			l->stats.peer_leaves++;
			sl_lk_tx_transition(l, TX_EV_RESTART);
			sl_lk_rx_reset(l);
		}
		l->answer = ANSWER_SENT;
		return;
	}
}

/*
 * The TX state of the next slot, RIFL's priorities (RTL tx_controller.sv) under sluice's
 * goodbye: the table in the essay, "TX states". Pure: sl_link_state() reads it too.
 */
enum sl_link_state
sl_lk_tx_state(const struct sl_link *l)
{
	if (l->answer == ANSWER_SENDING || l->answer == ANSWER_RESENDING)
		return SL_LINK_ACK_LEAVE;
	switch (l->life) {
	case LIFE_INIT:
		return SL_LINK_INIT;
	case LIFE_LEAVING:
	case LIFE_LEFT:
		return SL_LINK_LEAVE;
	case LIFE_RUNNING:
		break;
	}
	if (l->rx == RX_DOWN)
		return SL_LINK_SEND_PAUSE;
	if (l->flag_pause)
		return SL_LINK_PAUSE;
	if (l->flag_retrans || l->replay_active)
		return SL_LINK_RETRANS;
	if (l->rx == RX_ERROR)
		return SL_LINK_SEND_RETRANS;
	return SL_LINK_NORMAL;
}

/* A new session's receive side: nothing verified, no flags, no counts. */
void
sl_lk_rx_reset(struct sl_link *l)
{
	sl_lk_rx_transition(l, RX_EV_RESET, 0);
	l->rx_id = 0;
	l->thr = SL_LINK_ROLLBACK;
	l->peer_delivered = false;
	l->peer_was_up = false;
	l->pause_from_zero = false;
	l->nack_timed = false; /* an answer to the old session's NACK would time nothing */
	l->pause_cnt = 0;
	l->retrans_cnt = 0;
	l->retrans_arg = 0;
	l->regular_cnt = 0;
	l->leave_cnt = 0;
	l->leave_ack_cnt = 0;
	l->flag_pause = false;
	l->flag_retrans = false;
	l->flag_retrans_arg = 0;
	l->fc_remote_paused = false;
}

/* INIT: empty the ring and restart the TX side from ID 0. */
void
sl_lk_tx_init(struct sl_link *l, uint64_t *aborted)
{
	for (uint32_t i = 0; i <= l->ring_mask; i++) {
		if (l->ring[i].handle != NULL)
			(*aborted)++;
		release_one(l, l->ring[i].handle);
		memset(&l->ring[i], 0, sizeof(l->ring[i]));
	}
	release_flush(l);
	l->tx_next = 0;
	l->ring_used = 0;
	l->warmup_left = SL_LINK_ROLLBACK;
	l->clear_left = 0;
	l->replay_active = false;
	l->run_left = 0;
	l->run_next_ns = 0;
	/*
	 * A new session may face a new receiver (the peer restarted), and the cuts of the old one
	 * (whose replays repeated to a peer that was gone) say nothing of it: start low again.
	 * Nothing is replayed end to end, so nothing would ever cut a rate started low there.
	 */
	link_rate_init(&l->rate, l->conf.line_bps,
		       l->conf.adapt_rate && l->conf.replay != SL_LINK_REPLAY_NONE);
	/* A restarted peer forgot any pause: tell it again if the queue is still full. */
	l->fc_pending = SL_WIRE_FC_FILLER;
	l->fc_sent_pause = false;
	fc_update(l);
}

struct sl_link *
sl_link_create(const struct sl_link_conf *conf)
{
	struct sl_link *l = NULL;
	size_t slots;

	if (conf == NULL || conf->release == NULL || conf->keepalive_ns == 0 ||
	    conf->ctrl_interval_ns == 0 || conf->fc_frames < 3 ||
	    (conf->fmt.mode != SL_WIRE_MODE_FAITHFUL && conf->fmt.mode != SL_WIRE_MODE_EXTENDED) ||
	    conf->ring_order < SL_LINK_ORDER_MIN || conf->ring_order > fmt_max_order(&conf->fmt) ||
	    conf->replay > SL_LINK_REPLAY_NONE ||
	    (conf->replay != SL_LINK_REPLAY_RING && conf->fmt.mode != SL_WIRE_MODE_EXTENDED))
		goto fail_inval;
	slots = (size_t)1 << conf->ring_order;
	l = calloc(1, sizeof(*l) + slots * sizeof(struct ring_slot));
	if (l == NULL)
		return NULL; /* errno = ENOMEM from calloc */
	l->conf = *conf;
	link_rate_init(&l->rate, conf->line_bps, false); /* until INIT (sl_lk_tx_init()) */
	if (l->conf.fc_on_frames == 0)
		l->conf.fc_on_frames = SL_DIV_ROUND_UP(2 * conf->fc_frames, 3);
	if (l->conf.fc_off_frames == 0)
		l->conf.fc_off_frames = conf->fc_frames / 3;
	if (l->conf.fc_on_frames > l->conf.fc_frames ||
	    l->conf.fc_off_frames >= l->conf.fc_on_frames)
		goto fail_inval;
	l->ring_mask = (uint32_t)slots - 1;
	l->state = SL_LINK_INIT;
	l->stats.enter_state[SL_LINK_INIT]++;
	sl_lk_tx_init(l, &l->stats.reinit_aborted);
	sl_lk_tx_transition(l, TX_EV_RING_READY);
	sl_lk_rx_reset(l);
	sl_hist_reset(&l->recovery_ns);
	return l;
fail_inval:
	free(l);
	errno = EINVAL;
	return NULL;
}

void
sl_link_free(struct sl_link *l)
{
	uint64_t aborted = 0;

	if (l == NULL)
		return;
	sl_lk_tx_init(l, &aborted);
	free(l);
}

enum sl_link_state
sl_link_state(const struct sl_link *l)
{
	return sl_lk_tx_state(l);
}

uint64_t
sl_link_sessions(const struct sl_link *l)
{
	return l->stats.enter_state[SL_LINK_INIT];
}

void
sl_link_stats_get(const struct sl_link *l, struct sl_link_stats *out)
{
	sl_stats_snapshot(out, &l->stats, sl_link_stat_table.n); /* telemetry reads other lanes */
}

const struct sl_hist *
sl_link_recovery_hist(const struct sl_link *l)
{
	return &l->recovery_ns;
}

uint64_t
sl_link_replay_tail_ns(const struct sl_link *l)
{
	return wait_est_bound(&l->tail_wait);
}

uint64_t
sl_link_nack_wait_ns(const struct sl_link *l)
{
	return wait_est_bound(&l->nack_wait);
}

uint64_t
sl_link_send_bps(const struct sl_link *l)
{
	return l->rate.bps;
}

uint32_t
sl_link_rx_occupancy(const struct sl_link *l)
{
	return l->occupancy;
}

bool
sl_link_tx_fc_paused(const struct sl_link *l)
{
	return l->fc_remote_paused;
}

void
sl_link_leave(struct sl_link *l)
{
	sl_lk_tx_transition(l, TX_EV_LEAVE);
}

bool
sl_link_leave_acked(const struct sl_link *l)
{
	return l->life == LIFE_LEFT;
}

bool
sl_link_peer_left(struct sl_link *l)
{
	bool left = l->peer_left;

	l->peer_left = false;
	return left;
}
