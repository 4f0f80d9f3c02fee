/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ec.c - the endpoint-congestion target (Chong and Krishnan, "Addressing Endpoint-induced
 * Congestion for Accelerator Scale-Out in a Medium-Scale Domain", sections II.D, II.G, II.H;
 * docs/ec.md): a processing queue whose occupancy is told to the initiators by duplicate ACKs.
 *
 * Model. The queue is a FIFO ring of entries {conn, psn, bytes, handle}, sized for
 * queue_bytes / min_pkt_bytes + 1 packets, with its occupancy in bytes. The threshold position
 * splits it in two: an entry is below the threshold when the bytes ahead of it plus its own are
 * <= threshold_bytes. Those bytes only shrink while it waits, so the entries below form a
 * prefix of the queue, tracked as below_pkts entries from the head holding below_bytes. An
 * arrival that leaves the queue at or under the threshold makes every entry below; processing
 * the head lets the entries after the prefix cross one by one while below_bytes plus their
 * bytes stays <= threshold_bytes, so a call costs O(packets that cross), never O(queue).
 *
 * Per connection: the expected PSN, the ack_psn of the last IACK or DACK sent (first_psn at
 * open), a recovering flag (a NACK sent, the expected PSN not accepted since), its packets in
 * the queue, how many of those arrived before the drop, and the fairness state.
 *
 * Per arrival (p: the packet, q: the queue), the paper's on_arrival:
 *   bad conn or bytes                  drop (SL_EC_DROP_BAD)
 *   p.psn != expected                  drop (SL_EC_DROP_ORDER); NACK(expected) unless nack is
 *                                      off or a NACK already went out this episode
 *   q full (bytes, or slots)           drop (SL_EC_DROP_FULL): an EC drop; the next arrival is
 *                                      out of order and is NACKed
 *   else                               enqueue, expected++, recovery over; congested (occupancy
 *                                      > threshold): DACK(last sent) at once, else IACK(psn + 1)
 *                                      now, or at processing with iack_at_processing
 * Per processed head h, the paper's on_processed:
 *   h left while above the threshold   it crosses as it leaves: DACK, IACK(h.psn + 1)
 *   else, iack_at_processing           IACK(h.psn + 1) unless an IACK already covers it
 *   then each entry x that crosses     DACK, IACK(x.psn + 1), in queue order
 *   h's conn recovering and h queued   a recovery DACK, the clock of one retransmission, unless
 *   when its NACK went out             the call already gave that connection a DACK (the
 *                                      paper's "elif": one DACK per drained packet)
 * So an IACK never names a packet still above the threshold: it goes out at acceptance only
 * when the packet is below, at processing, or when the packet crosses. A connection's PSNs
 * increase in queue order, so its IACKs strictly increase.
 *
 * Our choices where the paper is silent or loose:
 *   - one NACK per drop episode. The paper's pseudo-code NACKs every out-of-order arrival, but
 *     behind one drop a go-back-N window arrives out of order packet after packet and the
 *     initiator ignores the repeats: the first out-of-order arrival NACKs and sets the
 *     connection recovering; later ones are dropped silently (counted in drop_order) until
 *     the expected PSN is accepted. A lost NACK is recovered by the initiator's timeout.
 *   - "arrived before the drop": the connection's packets in the queue when its NACK went out
 *     (none of its packets is accepted between an EC drop and that NACK). The queue is FIFO, so
 *     they are the next ones of that connection to be processed: a count is enough. Recovery
 *     DACKs stop when the recovery does (the expected PSN accepted), as the paper's "while
 *     recovering" says.
 *   - a NACK carries the expected PSN but is not an IACK or a DACK: the last ack_psn sent,
 *     which DACKs repeat, is that of the last IACK or DACK.
 *   - a packet of more than threshold_bytes is never below the threshold: it crosses when it
 *     leaves the queue, so its connection still gets its IACK.
 *   - fairness (section 2.7: period and "much higher" not given). Only with policy and
 *     fair_period_ns > 0. The first arrive or process call at or after the period's end
 *     samples: among the connections that accepted a packet in the period (the active ones),
 *     those that accepted more than fair_ratio_pct % (default 150) of the slowest one's count
 *     have their IACKs coalesced, and, when there is such a fast one, those at the slowest
 *     count have their DACKs suppressed, until the next sample; the next period starts then
 *     (the first one with the first call). A sample walks every connection: O(max_conns) once
 *     a period.
 *     Coalescing skips every other IACK, but never the IACK of the connection's last accepted
 *     packet (no later IACK would cover it: the initiator would wait for its timeout).
 *     Suppression drops three congestion DACKs in four (at acceptance and before a crossing
 *     IACK): enough IACKs in a row for H1, never enough for H-infinity, whose whole window
 *     would overflow the shared queue (all of them suppressed did, in the simulator); it keeps
 *     the recovery DACKs, which clock retransmissions.
 *   - closing or reopening a connection with packets queued: the old packets still leave the
 *     queue and their handles come back, marked stale, but they send nothing (each entry holds
 *     its connection's generation).
 *
 * Selective repeat (sr_pkts > 0; beyond the paper: composed with MELO's selective retransmission,
 * MELO (APNet 2017), section 3). The paper's target is go-back-N, so a network loss costs it every
 * packet behind the hole and, for dack, a recovery clocked by DACKs that an uncongested target does
 * not send. Here an arrival up to sr_pkts past the expected PSN joins the queue like an in-order
 * one (the host places it: an RDMA WRITE needs no order), recorded in the connection's ooo map (bit
 * i: expected + 1 + i accepted); when the expected PSN comes, expected jumps over the run that
 * follows it. Each arrival that lands past the highest PSN accepted + 1 reveals one new hole,
 * NACKed by range (hole_psn, hole_len; ack_psn still the expected PSN); a hole is NACKed once, as
 * MELO's receiver does. The queue's own drop (EC drop) of any PSN makes a hole the sender cannot
 * see: it marks the connection, and the next arrival accepted out of order NACKs every hole below
 * it, or, past SL_EC_NACK_HOLES_MAX holes, goes back N with one NACK naming the expected PSN
 * (MELO's fallback). A repeat of an accepted PSN is dropped (drop_dup). An arrival past the reach
 * (or whose crossing the crossed map could not hold) falls back to the go-back-N rule above:
 * drop_order, one NACK per episode, recovery DACKs.
 *   IACKs then name the end of the run of the connection's PSNs that have crossed (crossed_psn,
 *   with a map of those crossed beyond it): a packet crossing out of order sends its DACK, and
 *   an IACK only if the run grew, so an IACK covers no hole and no packet above the threshold.
 *   In order the run grows by exactly the crossing packet, which is the go-back-N rule's IACK.
 *   Congestion DACKs are as above, whatever the order.
 *
 * Units: bytes, ns, PSNs (32-bit, wrapping: sl_seq.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include "sl_ec.h"
#include "sl_seq.h"

#define EC_MIN_PKT_BYTES_DEFAULT 64u  /**< bytes: a header-only packet in the paper */
#define EC_FAIR_RATIO_PCT_DEFAULT 150 /**< "much higher": 1.5 x the slowest's packets */
/** Suppression: congestion DACKs skipped in a row. With a DACK and its IACK per drained packet
 *  the initiator sees a DACK, then 4 IACKs (H(-1) -> H(0) -> H1, 2 and 2): 6 packets per 4
 *  drained, and never the 6 IACKs in H1 (dack's default) that end in H-infinity. */
#define EC_SUPPRESS_RUN 3

/** One queued packet. */
struct sl_ec_entry {
	void *handle;   /**< the caller's, returned by sl_ec_process */
	uint32_t conn;  /**< connection */
	uint32_t psn;   /**< PSN */
	uint32_t bytes; /**< what the queue accounts, bytes */
	uint32_t gen;   /**< its connection's generation when accepted */
};
static_assert(sizeof(struct sl_ec_entry) == 24, "a queue slot is 24 B");

/* struct sl_ec_conn.flags */
#define CONN_OPEN 0x01       /**< opened */
#define CONN_RECOVERING 0x02 /**< a NACK sent, the expected PSN not accepted since */
#define CONN_COALESCE 0x04   /**< fairness: fast, every other IACK skipped */
#define CONN_SUPPRESS 0x08   /**< fairness: slowest, congestion DACKs not sent */
#define CONN_SKIPPED 0x10    /**< coalescing: the last IACK due was skipped, send the next */
/* selective repeat: the queue dropped one of its PSNs; the next arrival accepted out of order
 * NACKs every hole below it */
#define CONN_RENACK 0x20

struct sl_ec_conn {
	uint64_t ooo_bits;         /**< selective repeat: bit i, expected_psn + 1 + i accepted */
	uint64_t crossed_bits;     /**< selective repeat: bit i, crossed_psn + 1 + i crossed */
	uint32_t crossed_psn;      /**< selective repeat: every PSN below it has crossed */
	uint32_t expected_psn;     /**< PSN: next to accept */
	uint32_t last_ack_psn;     /**< PSN: ack_psn of the last IACK or DACK sent */
	uint32_t queued_pkts;      /**< its packets in the queue (this generation) */
	uint32_t before_drop_pkts; /**< of those, queued when its NACK went out */
	uint32_t period_pkts;      /**< packets accepted in this fairness period */
	uint32_t gen;              /**< generation: bumped by every open and close */
	uint8_t flags;             /**< CONN_* */
	uint8_t suppressed_run;    /**< CONN_SUPPRESS: congestion DACKs skipped since one went */
};

struct sl_ec {
	struct sl_ec_conf conf;   /**< the defaults applied */
	struct sl_ec_entry *ring; /**< slots entries, the queue from head on */
	struct sl_ec_conn *conns; /**< max_conns */
	uint32_t slots;           /**< ring entries */
	uint32_t head;            /**< ring index of the oldest entry */
	uint32_t len_pkts;        /**< entries in the queue */
	uint32_t occupancy_bytes; /**< bytes in the queue */
	uint32_t below_pkts;      /**< entries from the head at or below the threshold position */
	uint32_t below_bytes;     /**< their bytes: <= threshold_bytes */
	uint64_t fair_next_ns;    /**< end of the fairness period, ns */
	struct sl_ec_stats st;
};

#define STAT(m, h) SL_STAT(struct sl_ec_stats, m, h)

static const struct sl_stat_desc stat_desc[] = {
	STAT(accepted, "data packets that joined the queue"),
	STAT(processed, "data packets the host processed (left the queue)"),
	STAT(drop_order, "dropped: not the expected PSN (NACKed once per drop episode)"),
	STAT(drop_full, "dropped: in order but no room in the queue, bytes or slots (EC drops)"),
	STAT(drop_bad, "dropped: connection not open, or bytes 0 or above the queue's size"),
	STAT(drop_dup, "dropped: selective repeat, a PSN already accepted"),
	STAT(iacks, "IACKs sent (ack_psn above the last sent)"),
	STAT(dacks, "DACKs sent (ack_psn equal to the last sent): congestion and recovery"),
	STAT(nacks, "NACKs sent (ack_psn: the expected PSN; selective repeat: one per hole)"),
	STAT(dacks_suppressed, "fairness: congestion DACKs not sent to the slowest connections"),
	STAT(iacks_coalesced, "fairness: IACKs skipped for the fastest connections"),
	STAT(congested_accepts, "data packets accepted with the queue above the threshold"),
	STAT(max_queue_bytes, "deepest queue occupancy seen, bytes"),
};
SL_STAT_TABLE_DEFINE(sl_ec_stat_table, struct sl_ec_stats, stat_desc);

/* The conf with its defaults, or -EINVAL. */
static int
conf_resolve(const struct sl_ec_conf *in, struct sl_ec_conf *out, uint32_t *slots)
{
	uint64_t n;

	if (in == NULL || in->max_conns == 0)
		return -EINVAL;
	*out = *in;
	if (out->queue_bytes == 0)
		out->queue_bytes = SL_EC_QUEUE_BYTES_DEFAULT;
	if (out->threshold_bytes == 0)
		out->threshold_bytes = SL_EC_THRESHOLD_BYTES_DEFAULT;
	if (out->min_pkt_bytes == 0)
		out->min_pkt_bytes = EC_MIN_PKT_BYTES_DEFAULT;
	if (out->fair_ratio_pct == 0)
		out->fair_ratio_pct = EC_FAIR_RATIO_PCT_DEFAULT;
	n = out->queue_bytes / out->min_pkt_bytes + 1;
	/* n > 1: one min packet fits; 2n + 1 actions must fit an unsigned. */
	if (out->threshold_bytes >= out->queue_bytes || n < 2 || n > (UINT_MAX - 1) / 2 ||
	    out->fair_ratio_pct < 100 || out->sr_pkts > SL_EC_SR_PKTS_MAX)
		return -EINVAL;
	*slots = (uint32_t)n;
	return 0;
}

struct sl_ec *
sl_ec_create(const struct sl_ec_conf *conf)
{
	struct sl_ec_conf c;
	struct sl_ec *ec;
	uint32_t slots;
	int err = -conf_resolve(conf, &c, &slots);

	if (err)
		goto fail_errno;
	err = ENOMEM;
	ec = calloc(1, sizeof(*ec));
	if (ec == NULL)
		goto fail_errno;
	ec->conf = c;
	ec->slots = slots;
	ec->ring = calloc(slots, sizeof(*ec->ring));
	ec->conns = calloc(c.max_conns, sizeof(*ec->conns));
	if (ec->ring == NULL || ec->conns == NULL)
		goto fail;
	return ec;
fail:
	sl_ec_free(ec);
fail_errno:
	errno = err;
	return NULL;
}

void
sl_ec_free(struct sl_ec *ec)
{
	if (ec == NULL)
		return;
	free(ec->ring);
	free(ec->conns);
	free(ec);
}

int
sl_ec_conn_open(struct sl_ec *ec, uint32_t conn, uint32_t first_psn)
{
	struct sl_ec_conn *c;

	if (conn >= ec->conf.max_conns)
		return -EINVAL;
	c = &ec->conns[conn];
	*c = (struct sl_ec_conn){.crossed_psn = first_psn,
				 .expected_psn = first_psn,
				 .last_ack_psn = first_psn,
				 .gen = c->gen + 1,
				 .flags = CONN_OPEN};
	return 0;
}

int
sl_ec_conn_close(struct sl_ec *ec, uint32_t conn)
{
	struct sl_ec_conn *c;

	if (conn >= ec->conf.max_conns)
		return -EINVAL;
	c = &ec->conns[conn];
	*c = (struct sl_ec_conn){.gen = c->gen + 1};
	return 0;
}

unsigned
sl_ec_actions_max(const struct sl_ec *ec)
{
	/* The head: DACK + IACK + recovery DACK; every other entry may cross: DACK + IACK. An
	 * arrival: a DACK or an IACK, and its NACKs (slots >= 2, so that is less). */
	return SL_MAX(2 * ec->slots + 1, 1 + SL_EC_NACK_HOLES_MAX);
}

/* ---- actions ------------------------------------------------------------------------------ */

static inline void
put(struct sl_ec_action *act, unsigned *nact, enum sl_ec_act_type type, uint32_t conn,
    uint32_t ack_psn)
{
	act[(*nact)++] =
		(struct sl_ec_action){.type = (uint8_t)type, .conn = conn, .ack_psn = ack_psn};
}

static void
dack(struct sl_ec *ec, uint32_t conn, struct sl_ec_action *act, unsigned *nact)
{
	put(act, nact, SL_EC_DACK, conn, ec->conns[conn].last_ack_psn);
	sl_stat_add(&ec->st.dacks, 1);
}

/*
 * A congestion DACK. To a connection whose DACKs the fairness knob suppresses, only one in
 * EC_SUPPRESS_RUN + 1 goes: the IACKs between reach H1 (two packets per IACK), and the one DACK
 * keeps them from the six IACKs in a row that would open the initiator's whole window.
 */
static void
congestion_dack(struct sl_ec *ec, uint32_t conn, struct sl_ec_action *act, unsigned *nact)
{
	struct sl_ec_conn *c = &ec->conns[conn];

	if ((c->flags & CONN_SUPPRESS) && c->suppressed_run < EC_SUPPRESS_RUN) {
		c->suppressed_run++;
		sl_stat_add(&ec->st.dacks_suppressed, 1);
		return;
	}
	c->suppressed_run = 0;
	dack(ec, conn, act, nact);
}

/* IACK(psn + 1), unless coalescing skips it (never the last accepted packet's, see above). */
static void
iack(struct sl_ec *ec, uint32_t conn, uint32_t psn, struct sl_ec_action *act, unsigned *nact)
{
	struct sl_ec_conn *c = &ec->conns[conn];

	if ((c->flags & (CONN_COALESCE | CONN_SKIPPED)) == CONN_COALESCE &&
	    psn + 1 != c->expected_psn) {
		c->flags |= CONN_SKIPPED;
		sl_stat_add(&ec->st.iacks_coalesced, 1);
		return;
	}
	c->flags &= (uint8_t)~CONN_SKIPPED;
	c->last_ack_psn = psn + 1;
	put(act, nact, SL_EC_IACK, conn, psn + 1);
	sl_stat_add(&ec->st.iacks, 1);
}

/* *base arrived: it moves past it and the run of set bits after it (bit i: *base + 1 + i). */
static inline void
run_advance(uint32_t *base, uint64_t *bits)
{
	uint64_t b0;

	do {
		b0 = *bits & 1;
		*bits >>= 1;
		(*base)++;
	} while (b0);
}

/*
 * PSN psn of conn crossed (below the threshold, or processed): its IACK. With selective repeat,
 * the IACK of the run of crossed PSNs if psn extended it (the file's essay).
 */
static void
iack_crossed(struct sl_ec *ec, uint32_t conn, uint32_t psn, struct sl_ec_action *act,
	     unsigned *nact)
{
	struct sl_ec_conn *c = &ec->conns[conn];
	uint32_t d = psn - c->crossed_psn;

	if (ec->conf.sr_pkts == 0) {
		iack(ec, conn, psn, act, nact);
		return;
	}
	if (d != 0) { /* out of order: recorded (the arrival's reach keeps d <= 64), or old */
		if (d - 1 < SL_EC_SR_PKTS_MAX)
			c->crossed_bits |= 1ull << (d - 1);
		return;
	}
	run_advance(&c->crossed_psn, &c->crossed_bits);
	iack(ec, conn, c->crossed_psn - 1, act, nact);
}

/* e moved below the threshold (or left the queue from above): DACK, then its IACK. */
static void
cross(struct sl_ec *ec, const struct sl_ec_entry *e, struct sl_ec_action *act, unsigned *nact)
{
	if (e->gen != ec->conns[e->conn].gen)
		return;
	congestion_dack(ec, e->conn, act, nact);
	iack_crossed(ec, e->conn, e->psn, act, nact);
}

/* ---- fairness ----------------------------------------------------------------------------- */

/* Close the period: mark the fast connections and, when there is one, the slowest. */
static void
fair_sample(struct sl_ec *ec, uint64_t now_ns)
{
	uint64_t ratio = ec->conf.fair_ratio_pct;
	uint32_t min_pkts = UINT32_MAX, max_pkts = 0;
	bool biased;

	for (uint32_t i = 0; i < ec->conf.max_conns; i++) {
		uint32_t n = ec->conns[i].period_pkts;

		if (n) {
			min_pkts = SL_MIN(min_pkts, n);
			max_pkts = SL_MAX(max_pkts, n);
		}
	}
	biased = max_pkts && (uint64_t)max_pkts * 100 > (uint64_t)min_pkts * ratio;
	for (uint32_t i = 0; i < ec->conf.max_conns; i++) {
		struct sl_ec_conn *c = &ec->conns[i];

		c->flags &= (uint8_t) ~(CONN_COALESCE | CONN_SUPPRESS);
		if (biased && c->period_pkts) {
			if ((uint64_t)c->period_pkts * 100 > (uint64_t)min_pkts * ratio)
				c->flags |= CONN_COALESCE;
			else if (c->period_pkts == min_pkts)
				c->flags |= CONN_SUPPRESS;
		}
		c->period_pkts = 0;
	}
	ec->fair_next_ns = now_ns + ec->conf.fair_period_ns;
}

static inline void
fair_tick(struct sl_ec *ec, uint64_t now_ns)
{
	if (ec->conf.policy && ec->conf.fair_period_ns && now_ns >= ec->fair_next_ns)
		fair_sample(ec, now_ns);
}

/* ---- arrival ------------------------------------------------------------------------------ */

/* Out of order: the episode's first drop NACKs; the connection's queued packets clock it. */
static enum sl_ec_verdict
drop_order(struct sl_ec *ec, uint32_t conn, struct sl_ec_action *act, unsigned *nact)
{
	struct sl_ec_conn *c = &ec->conns[conn];

	sl_stat_add(&ec->st.drop_order, 1);
	if (ec->conf.nack && !(c->flags & CONN_RECOVERING)) {
		c->flags |= CONN_RECOVERING;
		c->before_drop_pkts = ec->conf.policy ? c->queued_pkts : 0;
		put(act, nact, SL_EC_NACK, conn, c->expected_psn);
		sl_stat_add(&ec->st.nacks, 1);
	}
	return SL_EC_DROP_ORDER;
}

/* ---- selective repeat --------------------------------------------------------------------- */

/* Has conn accepted PSN p, p at or past the expected one and within the ooo map? */
static inline bool
sr_accepted(const struct sl_ec_conn *c, uint32_t p)
{
	uint32_t d = p - c->expected_psn;

	return d != 0 && ((c->ooo_bits >> (d - 1)) & 1);
}

/* A selective NACK: [hole_psn, hole_psn + hole_len) is missing; ack_psn the expected PSN. */
static void
nack_hole(struct sl_ec *ec, uint32_t conn, uint32_t hole_psn, uint32_t hole_len,
	  struct sl_ec_action *act, unsigned *nact)
{
	act[(*nact)++] = (struct sl_ec_action){.type = SL_EC_NACK,
					       .conn = conn,
					       .ack_psn = ec->conns[conn].expected_psn,
					       .hole_psn = hole_psn,
					       .hole_len = hole_len};
	sl_stat_add(&ec->st.nacks, 1);
}

/*
 * NACK the holes in [from, to), one per range; more than SL_EC_NACK_HOLES_MAX of them, a
 * go-back-N NACK instead (MELO's fallback: that many holes are cheaper resent whole).
 */
static void
nack_holes(struct sl_ec *ec, uint32_t conn, uint32_t from, uint32_t to, struct sl_ec_action *act,
	   unsigned *nact)
{
	const struct sl_ec_conn *c = &ec->conns[conn];
	uint32_t start[SL_EC_NACK_HOLES_MAX], len[SL_EC_NACK_HOLES_MAX];
	unsigned k = 0;

	for (uint32_t p = from; p != to; k++) {
		while (p != to && sr_accepted(c, p))
			p++;
		if (p == to)
			break;
		if (k == SL_EC_NACK_HOLES_MAX) {
			put(act, nact, SL_EC_NACK, conn, c->expected_psn);
			sl_stat_add(&ec->st.nacks, 1);
			return;
		}
		start[k] = p;
		while (p != to && !sr_accepted(c, p))
			p++;
		len[k] = p - start[k];
	}
	for (unsigned i = 0; i < k; i++)
		nack_hole(ec, conn, start[i], len[i], act, nact);
}

/*
 * An arrival off the expected PSN, with selective repeat: SL_EC_ACCEPTED when it may join the
 * queue out of order, SL_EC_DROP_DUP for a PSN already accepted, SL_EC_DROP_ORDER past the
 * reach (go-back-N then).
 */
static enum sl_ec_verdict
sr_fit(const struct sl_ec *ec, const struct sl_ec_conn *c, uint32_t psn)
{
	uint32_t d = psn - c->expected_psn;

	if (sl_seq_lt(psn, c->expected_psn))
		return SL_EC_DROP_DUP;
	if (d > ec->conf.sr_pkts || psn - c->crossed_psn > SL_EC_SR_PKTS_MAX)
		return SL_EC_DROP_ORDER;
	return sr_accepted(c, psn) ? SL_EC_DROP_DUP : SL_EC_ACCEPTED;
}

/* PSN psn joins the queue out of order: map it, and NACK what its arrival reveals. */
static void
sr_accept(struct sl_ec *ec, uint32_t conn, uint32_t psn, struct sl_ec_action *act, unsigned *nact)
{
	struct sl_ec_conn *c = &ec->conns[conn];
	/* One past the highest PSN accepted (the expected one when the map is empty). */
	uint32_t high =
		c->ooo_bits ? c->expected_psn + 2 + (63 - (uint32_t)__builtin_clzll(c->ooo_bits))
			    : c->expected_psn;

	c->ooo_bits |= 1ull << (psn - c->expected_psn - 1);
	if (!ec->conf.nack)
		return;
	if (c->flags & CONN_RENACK) {
		c->flags &= (uint8_t)~CONN_RENACK;
		nack_holes(ec, conn, c->expected_psn, psn, act, nact);
	} else if (sl_seq_gt(psn, high)) {
		nack_hole(ec, conn, high, psn - high, act, nact);
	}
}

enum sl_ec_verdict
sl_ec_arrive(struct sl_ec *ec, uint32_t conn, uint32_t psn, uint32_t bytes, void *handle,
	     uint64_t now_ns, struct sl_ec_action *act, unsigned *nact)
{
	struct sl_ec_entry *e;
	struct sl_ec_conn *c;
	uint32_t tail;
	bool congested, in_order;

	*nact = 0;
	fair_tick(ec, now_ns);
	if (sl_unlikely(conn >= ec->conf.max_conns) ||
	    sl_unlikely(!(ec->conns[conn].flags & CONN_OPEN)) || sl_unlikely(bytes == 0) ||
	    sl_unlikely(bytes > ec->conf.queue_bytes)) {
		sl_stat_add(&ec->st.drop_bad, 1);
		return SL_EC_DROP_BAD;
	}
	c = &ec->conns[conn];
	in_order = psn == c->expected_psn;
	if (!in_order) {
		enum sl_ec_verdict v = ec->conf.sr_pkts ? sr_fit(ec, c, psn) : SL_EC_DROP_ORDER;

		if (v == SL_EC_DROP_ORDER)
			return drop_order(ec, conn, act, nact);
		if (v == SL_EC_DROP_DUP) {
			sl_stat_add(&ec->st.drop_dup, 1);
			return v;
		}
	}
	if (bytes > ec->conf.queue_bytes - ec->occupancy_bytes || ec->len_pkts == ec->slots) {
		/* A new drop episode, also for a retransmission dropped while recovering: the next
		 * arrival is out of order and NACKed again (else only the initiator's timeout
		 * would repair the drop). With selective repeat, the next accepted out of order. */
		c->flags &= (uint8_t)~CONN_RECOVERING;
		if (ec->conf.sr_pkts)
			c->flags |= CONN_RENACK;
		sl_stat_add(&ec->st.drop_full, 1);
		return SL_EC_DROP_FULL;
	}
	tail = ec->head + ec->len_pkts;
	if (tail >= ec->slots)
		tail -= ec->slots;
	e = &ec->ring[tail];
	*e = (struct sl_ec_entry){
		.handle = handle, .conn = conn, .psn = psn, .bytes = bytes, .gen = c->gen};
	ec->len_pkts++;
	ec->occupancy_bytes += bytes;
	if (ec->occupancy_bytes > ec->st.max_queue_bytes)
		sl_stat_add(&ec->st.max_queue_bytes, ec->occupancy_bytes - ec->st.max_queue_bytes);
	sl_stat_add(&ec->st.accepted, 1);
	if (in_order) {
		run_advance(&c->expected_psn, &c->ooo_bits);
		c->flags &= (uint8_t)~CONN_RECOVERING;
		c->before_drop_pkts = 0;
	} else {
		sr_accept(ec, conn, psn, act, nact);
	}
	c->queued_pkts++;
	c->period_pkts++;
	congested = ec->occupancy_bytes > ec->conf.threshold_bytes;
	if (congested) {
		sl_stat_add(&ec->st.congested_accepts, 1);
	} else {
		/* At or under the threshold: the whole queue is below it. */
		ec->below_pkts = ec->len_pkts;
		ec->below_bytes = ec->occupancy_bytes;
	}
	if (ec->conf.policy && congested)
		congestion_dack(ec, conn, act, nact);
	else if (!ec->conf.iack_at_processing)
		iack_crossed(ec, conn, psn, act, nact);
	return SL_EC_ACCEPTED;
}

/* ---- processing --------------------------------------------------------------------------- */

/*
 * The processed head's own acknowledgments: its crossing if it leaves from above, or its IACK
 * at processing. True when it owes its recovering connection a DACK.
 */
static bool
head_acks(struct sl_ec *ec, const struct sl_ec_entry *h, bool was_below, struct sl_ec_action *act,
	  unsigned *nact)
{
	struct sl_ec_conn *c = &ec->conns[h->conn];

	if (h->gen != c->gen)
		return false;
	c->queued_pkts--;
	if (ec->conf.policy && !was_below)
		cross(ec, h, act, nact);
	else if (ec->conf.iack_at_processing && ec->conf.sr_pkts)
		iack_crossed(ec, h->conn, h->psn, act, nact);
	else if (ec->conf.iack_at_processing && sl_seq_gt(h->psn + 1, c->last_ack_psn))
		iack(ec, h->conn, h->psn, act, nact);
	if (c->before_drop_pkts == 0)
		return false;
	c->before_drop_pkts--;
	return true;
}

/* Entries after the below-threshold prefix that now fit under the threshold cross, in order. */
static void
advance_threshold(struct sl_ec *ec, struct sl_ec_action *act, unsigned *nact)
{
	while (ec->below_pkts < ec->len_pkts) {
		uint32_t i = ec->head + ec->below_pkts;
		const struct sl_ec_entry *e;

		if (i >= ec->slots)
			i -= ec->slots;
		e = &ec->ring[i];
		if ((uint64_t)ec->below_bytes + e->bytes > ec->conf.threshold_bytes)
			return;
		ec->below_pkts++;
		ec->below_bytes += e->bytes;
		if (ec->conf.policy)
			cross(ec, e, act, nact);
	}
}

/* Did this call's actions already give conn a DACK? */
static bool
dacked(const struct sl_ec_action *act, unsigned nact, uint32_t conn)
{
	for (unsigned i = 0; i < nact; i++)
		if (act[i].type == SL_EC_DACK && act[i].conn == conn)
			return true;
	return false;
}

int
sl_ec_process(struct sl_ec *ec, uint64_t now_ns, struct sl_ec_pkt *out, struct sl_ec_action *act,
	      unsigned *nact)
{
	const struct sl_ec_entry *h;
	bool was_below, recovery_dack;

	*nact = 0;
	fair_tick(ec, now_ns);
	if (ec->len_pkts == 0)
		return -ENOENT;
	h = &ec->ring[ec->head];
	*out = (struct sl_ec_pkt){.conn = h->conn,
				  .psn = h->psn,
				  .bytes = h->bytes,
				  .handle = h->handle,
				  .stale = h->gen != ec->conns[h->conn].gen};
	was_below = ec->below_pkts > 0;
	if (was_below) {
		ec->below_pkts--;
		ec->below_bytes -= h->bytes;
	}
	if (++ec->head == ec->slots)
		ec->head = 0;
	ec->len_pkts--;
	ec->occupancy_bytes -= h->bytes;
	sl_stat_add(&ec->st.processed, 1);
	recovery_dack = head_acks(ec, h, was_below, act, nact);
	advance_threshold(ec, act, nact);
	if (recovery_dack && !dacked(act, *nact, out->conn))
		dack(ec, out->conn, act, nact);
	return 0;
}

int
sl_ec_peek(const struct sl_ec *ec, struct sl_ec_pkt *out)
{
	const struct sl_ec_entry *h = &ec->ring[ec->head];

	if (ec->len_pkts == 0)
		return -ENOENT;
	*out = (struct sl_ec_pkt){.conn = h->conn,
				  .psn = h->psn,
				  .bytes = h->bytes,
				  .handle = h->handle,
				  .stale = h->gen != ec->conns[h->conn].gen};
	return 0;
}

uint32_t
sl_ec_queue_bytes(const struct sl_ec *ec)
{
	return ec->occupancy_bytes;
}

void
sl_ec_stats_get(const struct sl_ec *ec, struct sl_ec_stats *st)
{
	sl_stats_snapshot(st, &ec->st, sl_ec_stat_table.n);
}
