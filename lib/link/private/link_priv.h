/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * link_priv.h - the link's state, which its three files share: link.c (the model, the states
 * and their transition functions, sizing, create and free), link_tx.c (the transmit half,
 * sl_link_tx_burst()) and link_rx.c (the receive half, sl_link_rx_burst()). link.c's essay is
 * the design; the helpers below are inline because both halves call them per frame.
 */
#ifndef LINK_LINK_PRIV_H
#define LINK_LINK_PRIV_H

#include <stdbool.h>
#include <stdint.h>

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

/* The receive state: the essay's "RX states"; sl_lk_rx_transition() is its one way to change. */
enum rx_state {
	RX_DOWN = 0, /**< since (re)init: data ignored until 8 control frames verify */
	RX_IN_STEP,  /**< delivering at thr */
	RX_ERROR,    /**< a frame failed: rolled back to thr - 16, NACKing until thr */
	RX_BACK,     /**< back at thr after an error; the episode ends at the next frame taken */
};

enum rx_event {
	RX_EV_RESET,    /**< a new session (sl_lk_rx_reset()) */
	RX_EV_VERIFIED, /**< a control frame verified at rx_id, or any frame counted as good */
	RX_EV_FAIL,     /**< a frame failed (or found the consumer queue full): roll back */
	RX_EV_AT_THR,   /**< in error, the replay brought rx_id back to thr */
	RX_EV_TAKEN,    /**< a frame was taken at thr (delivered, or a filler's FC word) */
};

/* This end's session and goodbye: the essay's "TX life"; sl_lk_tx_transition() changes it. */
enum tx_life {
	LIFE_INIT = 0, /**< the ring and IDs restart at the next slot (TX state INIT) */
	LIFE_RUNNING,  /**< RIFL's states, chosen from the RX state and the peer's flags */
	LIFE_LEAVING,  /**< sl_link_leave() was called: runs of LEAVE, for good */
	LIFE_LEFT,     /**< and the peer answered it (8 LEAVE_ACK): still runs of LEAVE */
};

/* This end's answer to the peer's goodbye: the essay's "answer"; sl_lk_tx_transition() changes it.
 */
enum answer {
	ANSWER_NONE = 0,  /**< the peer has not left */
	ANSWER_SENDING,   /**< 8 LEAVE came: LEAVE_ACK going out (ack_left), then a new session */
	ANSWER_SENT,      /**< answered, a new session begun; nothing but LEAVE came since */
	ANSWER_RESENDING, /**< 8 more LEAVE of the same goodbye: answered again, same session */
};

enum tx_event {
	TX_EV_RESTART,    /**< re-initialize: the peer restarted or left, or an episode got stuck */
	TX_EV_RING_READY, /**< sl_lk_tx_init() has emptied the ring and restarted the IDs */
	TX_EV_LEAVE,      /**< the glue called sl_link_leave() */
	TX_EV_LEAVE_ACK,  /**< 8 consecutive LEAVE_ACK */
	TX_EV_PEER_LEAVE, /**< 8 consecutive LEAVE */
	TX_EV_PEER_HERE,  /**< any other control key, or a data frame: the peer has not left */
	TX_EV_ANSWERED,   /**< the last LEAVE_ACK of a run went out */
};

struct sl_link {
	struct sl_link_conf conf;
	enum sl_link_state state; /**< the TX's state at its last slot (sl_lk_tx_state()) */
	enum rx_state rx;         /**< the receive state (sl_lk_rx_transition()) */
	enum tx_life life;        /**< this end's session and goodbye (sl_lk_tx_transition()) */
	enum answer answer; /**< this end's answer to the peer's goodbye (sl_lk_tx_transition()) */

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

/* link.c: the states' transition functions (the essay's "The states") and INIT. */
void sl_lk_rx_transition(struct sl_link *l, enum rx_event ev, uint64_t now_ns);
void sl_lk_tx_transition(struct sl_link *l, enum tx_event ev);
/* The TX state of the next slot (pure: sl_link_state() reads it too). */
enum sl_link_state sl_lk_tx_state(const struct sl_link *l);
/* A new session's receive side: nothing verified, no flags, no counts. */
void sl_lk_rx_reset(struct sl_link *l);
/* INIT: empty the ring (counting what it held in *aborted) and restart the TX from ID 0. */
void sl_lk_tx_init(struct sl_link *l, uint64_t *aborted);

/* One more measured wait of sample_ns. */
static inline void
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
static inline uint64_t
wait_est_bound(const struct wait_est *e)
{
	uint64_t mean = __atomic_load_n(&e->mean_ns, __ATOMIC_RELAXED);

	return mean ? mean + 4 * __atomic_load_n(&e->var_ns, __ATOMIC_RELAXED) : 0;
}

static inline void
release_flush(struct sl_link *l)
{
	if (l->n_release) {
		l->conf.release(l->conf.release_ctx, l->release_buf, l->n_release);
		l->n_release = 0;
	}
}

static inline void
release_one(struct sl_link *l, void *h)
{
	if (h == NULL)
		return;
	l->release_buf[l->n_release++] = h;
	if (l->n_release == RELEASE_BATCH)
		release_flush(l);
}

/* Queue an FC pause or resume when the consumer queue crosses Thr_ON or Thr_OFF. */
static inline void
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

#endif /* LINK_LINK_PRIV_H */
