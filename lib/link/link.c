/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * link.c - a RIFL-like reliable link in software (RIFL (OSA 2022), section 3 for the frames,
 * section 4 for the protocol; its RTL, github.com/swift-link/RIFL, for what the paper leaves out).
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
 * (tx_state()).
 *
 * RX states (enum rx_state, rx_transition()), the receiver's place in the peer's stream:
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
 *   any       -> DOWN     a new session (rx_reset(): the peer restarted or left, an episode was
 *                         given up)
 *
 * Every state but DOWN rolls back on a failure; only ERROR sends NACKs. End to end
 * (SL_LINK_REPLAY_NONE) nothing fails: DOWN -> IN_STEP is the whole machine.
 *
 * TX life (enum tx_life, tx_transition()), this end's session and its own goodbye:
 *
 *   INIT      -> RUNNING  the TX ran INIT (tx_init(): ring released, IDs from 0)
 *   RUNNING   -> INIT     re-initialize: the peer restarted (its pause flag rose once it was
 *                         known up), it left and was answered, or an episode was stuck
 *   INIT, RUNNING -> LEAVING  sl_link_leave()
 *   LEAVING   -> LEFT     the peer's LEAVE_ACK x 8 (leave_acks); LEAVE_ACK elsewhere is no answer
 *   LEAVING, LEFT         keep sending LEAVE: a re-initialization is moot, the ring is not
 *                         sent from again
 *
 * Answer (enum answer, tx_transition()), this end's answer to the peer's goodbye:
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
 * TX states (enum sl_link_state, tx_state()), highest priority first (RIFL RTL
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

#include "link_rate.h"
#include "sl_link.h"
#include "sl_seq.h"
#include "sl_time.h"

#define RELEASE_BATCH 32u
#define NACK_BACKOFF_MAX 16u /* doublings of the NACK wait, before ctrl_interval_ns caps it */

/*
 * A wait the link learns by measuring it, smoothed as TCP smooths round trips (RFC 6298: gain
 * 1/8, deviation gain 1/4). Both fields are stored whole: telemetry reads them from another
 * thread.
 */
struct wait_est {
	uint64_t mean_ns; /**< ns; 0: nothing measured yet */
	uint64_t var_ns;  /**< ns: mean deviation */
};

struct ring_slot {
	void *handle;        /**< NULL for fillers */
	const uint8_t *body; /**< payload body */
	uint16_t body_len;   /**< bytes */
	uint8_t hdr_len;     /**< bytes in hdr */
	uint8_t kind;        /**< SL_LINK_FRAME_DATA or SL_LINK_FRAME_FILLER */
	uint8_t hdr[SL_WIRE_HDR_MAX + SL_WIRE_FC_LEN]; /**< link header or whole filler frame */
};
_Static_assert(sizeof(((struct ring_slot *)0)->hdr) <= sizeof(((struct sl_link_tx_frame *)0)->hdr),
	       "slot_out() copies a slot's whole header");

/* The receive state: the essay's "RX states"; rx_transition() is its one way to change. */
enum rx_state {
	RX_DOWN = 0, /**< since (re)init: data ignored until 8 control frames verify */
	RX_IN_STEP,  /**< delivering at thr */
	RX_ERROR,    /**< a frame failed: rolled back to thr - 16, NACKing until thr */
	RX_BACK,     /**< back at thr after an error; the episode ends at the next frame taken */
};

enum rx_event {
	RX_EV_RESET,    /**< a new session (rx_reset()) */
	RX_EV_VERIFIED, /**< a control frame verified at rx_id, or any frame counted as good */
	RX_EV_FAIL,     /**< a frame failed (or found the consumer queue full): roll back */
	RX_EV_AT_THR,   /**< in error, the replay brought rx_id back to thr */
	RX_EV_TAKEN,    /**< a frame was taken at thr (delivered, or a filler's FC word) */
};

/* This end's session and goodbye: the essay's "TX life"; tx_transition() changes it. */
enum tx_life {
	LIFE_INIT = 0, /**< the ring and IDs restart at the next slot (TX state INIT) */
	LIFE_RUNNING,  /**< RIFL's states, chosen from the RX state and the peer's flags */
	LIFE_LEAVING,  /**< sl_link_leave() was called: runs of LEAVE, for good */
	LIFE_LEFT,     /**< and the peer answered it (8 LEAVE_ACK): still runs of LEAVE */
};

/* This end's answer to the peer's goodbye: the essay's "answer"; tx_transition() changes it. */
enum answer {
	ANSWER_NONE = 0,  /**< the peer has not left */
	ANSWER_SENDING,   /**< 8 LEAVE came: LEAVE_ACK going out (ack_left), then a new session */
	ANSWER_SENT,      /**< answered, a new session begun; nothing but LEAVE came since */
	ANSWER_RESENDING, /**< 8 more LEAVE of the same goodbye: answered again, same session */
};

enum tx_event {
	TX_EV_RESTART,    /**< re-initialize: the peer restarted or left, or an episode got stuck */
	TX_EV_RING_READY, /**< tx_init() has emptied the ring and restarted the IDs */
	TX_EV_LEAVE,      /**< the glue called sl_link_leave() */
	TX_EV_LEAVE_ACK,  /**< 8 consecutive LEAVE_ACK */
	TX_EV_PEER_LEAVE, /**< 8 consecutive LEAVE */
	TX_EV_PEER_HERE,  /**< any other control key, or a data frame: the peer has not left */
	TX_EV_ANSWERED,   /**< the last LEAVE_ACK of a run went out */
};

struct sl_link {
	struct sl_link_conf conf;
	enum sl_link_state state; /**< the TX's state at its last slot (tx_state()) */
	enum rx_state rx;         /**< the receive state (rx_transition()) */
	enum tx_life life;        /**< this end's session and goodbye (tx_transition()) */
	enum answer answer;       /**< this end's answer to the peer's goodbye (tx_transition()) */

	/* TX */
	uint32_t ring_mask;          /**< 2^k - 1 */
	uint32_t tx_next;            /**< ID of the next new data frame */
	uint32_t ring_used;          /**< frames in the ring, <= 2^k */
	uint32_t warmup_left;        /**< fillers still owed before user data */
	uint32_t clear_left;         /**< regular frames to send to lower the peer's flags */
	uint8_t fc_pending;          /**< FC code to send, SL_WIRE_FC_FILLER when none */
	bool fc_remote_paused;       /**< the peer's last FC word was pause (a fact received) */
	bool replay_active;          /**< replay_* describe a replay in progress (outlives PAUSE) */
	uint32_t replay_first;       /**< ID of the first frame of the replay */
	uint32_t replay_arg;         /**< the peer's NACK argument the replay answers */
	uint32_t replay_count;       /**< ring frames in the replay */
	uint32_t replay_slot;        /**< slots sent, of 2 x count + 2^k / 2 */
	uint64_t replay_tail_end_ns; /**< ns: with a slot clock, the tail ends here */
	uint64_t replay_tail_start_ns; /**< ns: the tail's first slot went out */
	struct wait_est tail_wait;     /**< extended: a tail's start to the peer's flag falling */
	uint16_t run_key;              /**< key of the control run in progress */
	uint32_t run_arg;              /**< its argument (a NACK's rollback point) */
	uint32_t run_left;             /**< frames left in it */
	uint64_t run_next_ns;          /**< ns: earliest start of the next run of run_key */
	uint64_t last_tx_ns;           /**< ns: last frame handed out */
	struct link_rate rate;         /**< the slot clock (conf.line_bps) */

	/* RX */
	uint32_t rx_id;            /**< ID the next data frame must carry */
	uint32_t thr;              /**< ID of the next frame to deliver */
	bool peer_delivered;       /**< something past the warm-up was delivered from the peer */
	bool peer_was_up;          /**< a verified IDLE came since (re)init: the peer's RX was up */
	bool pause_from_zero;      /**< the last PAUSE_REQ carried ID 0: a peer starting afresh */
	uint64_t err_start_ns;     /**< ns: first failure of the episode */
	uint64_t verified_ns;      /**< ns: last data frame that verified (delivered or not) */
	struct wait_est nack_wait; /**< an episode's first NACK run to a replayed frame verifying */
	uint64_t nack_out_ns;      /**< ns: that run started (valid while nack_timed) */
	bool nack_timed;           /**< the episode's one NACK run awaits its answer (Karn) */
	uint8_t nack_backoff;      /**< NACK runs repeated in this episode, each wait doubled */
	uint32_t unanswered;       /**< new frames sent since the last well-formed one came */
	bool silent;               /**< new data held: silent_frames went out unanswered */
	uint32_t good_run;         /**< verified control frames in RX_DOWN */
	uint32_t pause_cnt;        /**< consecutive PAUSE_REQ, saturates at 8 */
	uint32_t retrans_cnt;      /**< consecutive identical RETRANS_REQ, saturates at 8 */
	uint32_t retrans_arg;      /**< argument of that run */
	uint32_t regular_cnt;      /**< consecutive data / IDLE frames, saturates at 16 */
	uint32_t leave_cnt;        /**< consecutive LEAVE, saturates at 8 */
	uint32_t leave_ack_cnt;    /**< consecutive LEAVE_ACK, saturates at 8 */
	uint32_t ack_left;         /**< LEAVE_ACK frames still to send (ANSWER_*SENDING) */
	bool peer_left;            /**< an answer to the peer's LEAVE went out, not yet asked */
	bool flag_pause;           /**< peer asked us to pause (it is initializing) */
	bool flag_retrans;         /**< peer asked for a replay */
	uint32_t flag_retrans_arg; /**< ID the peer needs (extended mode) */
	uint32_t occupancy;        /**< frames delivered, not yet consumed */
	bool fc_sent_pause;        /**< our last FC word to the peer was pause */

	unsigned n_release;
	void *release_buf[RELEASE_BATCH];
	struct sl_link_stats stats;
	struct sl_hist recovery_ns;
	struct ring_slot ring[];
};

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

/* One more measured wait of sample_ns. */
static void
wait_est_add(struct wait_est *e, uint64_t sample_ns)
{
	uint64_t mean = e->mean_ns, var = e->var_ns, dev;

	if (mean == 0) {
		mean = SL_MAX(sample_ns, 1);
		var = sample_ns / 2;
	} else {
		dev = sample_ns > mean ? sample_ns - mean : mean - sample_ns;
		var = (3 * var + dev) / 4;
		mean = SL_MAX((7 * mean + sample_ns) / 8, 1);
	}
	__atomic_store_n(&e->mean_ns, mean, __ATOMIC_RELAXED);
	__atomic_store_n(&e->var_ns, var, __ATOMIC_RELAXED);
}

/* The wait to allow: the mean plus four deviations, ns; 0 while nothing was measured. */
static uint64_t
wait_est_bound(const struct wait_est *e)
{
	uint64_t mean = __atomic_load_n(&e->mean_ns, __ATOMIC_RELAXED);

	return mean ? mean + 4 * __atomic_load_n(&e->var_ns, __ATOMIC_RELAXED) : 0;
}

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

static void
release_flush(struct sl_link *l)
{
	if (l->n_release) {
		l->conf.release(l->conf.release_ctx, l->release_buf, l->n_release);
		l->n_release = 0;
	}
}

static void
release_one(struct sl_link *l, void *h)
{
	if (h == NULL)
		return;
	l->release_buf[l->n_release++] = h;
	if (l->n_release == RELEASE_BATCH)
		release_flush(l);
}

/* --------------------------------------------------------- The states */

static void rx_reset(struct sl_link *l);

/*
 * The receive state's one transition function (the essay's "RX states" has the table). The
 * callers do the verification; this says what a verified, failed or taken frame does to the
 * state, and counts the episode. An event a state cannot receive is a bug in the caller.
 */
static void
rx_transition(struct sl_link *l, enum rx_event ev, uint64_t now_ns)
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
 * tx_state(), RIFL's priorities over these, the receive state and the peer's flags.
 */
static void
tx_transition(struct sl_link *l, enum tx_event ev)
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
			tx_transition(l, TX_EV_RESTART);
			rx_reset(l);
		}
		l->answer = ANSWER_SENT;
		return;
	}
}

/*
 * The TX state of the next slot, RIFL's priorities (RTL tx_controller.sv) under sluice's
 * goodbye: the table in the essay, "TX states". Pure: sl_link_state() reads it too.
 */
static enum sl_link_state
tx_state(const struct sl_link *l)
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
static void
rx_reset(struct sl_link *l)
{
	rx_transition(l, RX_EV_RESET, 0);
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

/* Queue an FC pause or resume when the consumer queue crosses Thr_ON or Thr_OFF. */
static void
fc_update(struct sl_link *l)
{
	if (!l->fc_sent_pause && l->occupancy >= l->conf.fc_on_frames) {
		l->fc_sent_pause = true;
		l->fc_pending = SL_WIRE_FC_PAUSE;
	} else if (l->fc_sent_pause && l->occupancy <= l->conf.fc_off_frames) {
		l->fc_sent_pause = false;
		/* A pause not yet sent is simply withdrawn. */
		l->fc_pending =
			l->fc_pending == SL_WIRE_FC_PAUSE ? SL_WIRE_FC_FILLER : SL_WIRE_FC_RESUME;
	}
}

/* INIT: empty the ring and restart the TX side from ID 0. */
static void
tx_init(struct sl_link *l, uint64_t *aborted)
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
	link_rate_init(&l->rate, conf->line_bps, false); /* until INIT (tx_init()) */
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
	tx_init(l, &l->stats.reinit_aborted);
	tx_transition(l, TX_EV_RING_READY);
	rx_reset(l);
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
	tx_init(l, &aborted);
	free(l);
}

/* ---------------------------------------------------------------- TX */

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
	tx_transition(l, TX_EV_RESTART);
	rx_reset(l);
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
		enum sl_link_state st = tx_state(l);

		if (link_rate_busy(&l->rate, now_ns))
			break; /* the line is still busy with what went before */

		if (st != l->state) {
			l->state = st;
			l->stats.enter_state[st]++;
		}
		switch (st) {
		case SL_LINK_INIT:
			tx_init(l, &l->stats.reinit_aborted);
			tx_transition(l, TX_EV_RING_READY);
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
				tx_transition(l, TX_EV_ANSWERED);
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
	switch (tx_state(l)) {
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

uint64_t
sl_link_next_tx_ns(const struct sl_link *l)
{
	uint64_t t = next_frame_ns(l);

	return l->rate.line_bps ? SL_MAX(t, l->rate.free_ns) : t;
}

/* ---------------------------------------------------------------- RX */

/* A failure (or a full consumer queue) rolls back to thr - 16: RIFL's Listing 1. */
static void
rx_fail(struct sl_link *l, uint64_t now_ns)
{
	rx_transition(l, RX_EV_FAIL, now_ns);
	l->rx_id = l->thr - SL_LINK_ROLLBACK;
	l->stats.rx_rollbacks++;
}

/* Peer restarted: release the ring, restart IDs, and go back through the handshake. */
static void
link_reinit(struct sl_link *l)
{
	l->stats.peer_restarts++;
	tx_transition(l, TX_EV_RESTART);
	rx_reset(l);
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
		tx_transition(l, TX_EV_PEER_HERE); /* one that has not left (or a new one) */
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
			tx_transition(l, TX_EV_PEER_LEAVE);
		l->leave_cnt = SL_MIN(l->leave_cnt, SL_LINK_CTRL_ACCEPT);
	} else if (key != 0 || l->regular_cnt == SL_LINK_REGULAR_CLEAR) {
		l->leave_cnt = 0;
	}
	if (key == SL_WIRE_KEY_LEAVE_ACK) {
		if (++l->leave_ack_cnt == SL_LINK_CTRL_ACCEPT)
			tx_transition(l, TX_EV_LEAVE_ACK);
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
	rx_transition(l, RX_EV_VERIFIED, 0);
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
			rx_transition(l, RX_EV_AT_THR, now_ns);
		return false;
	}
	if (f->meta != SL_WIRE_META_FILLER && l->occupancy >= l->conf.fc_frames) {
		l->stats.rx_fc_overflow++;
		rx_fail(l, now_ns);
		return false;
	}
	if (l->rx == RX_ERROR) /* rx_resync() went straight to thr: every duplicate was lost */
		rx_transition(l, RX_EV_AT_THR, now_ns);
	l->thr++;
	l->rx_id++;
	l->peer_delivered = true;
	rx_transition(l, RX_EV_TAKEN, now_ns);
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

enum sl_link_state
sl_link_state(const struct sl_link *l)
{
	return tx_state(l);
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
	tx_transition(l, TX_EV_LEAVE);
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
