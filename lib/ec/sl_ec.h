/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_ec.h - the endpoint-congestion target (Chong and Krishnan, "Addressing Endpoint-induced
 * Congestion for Accelerator Scale-Out in a Medium-Scale Domain"): a receiving host's processing
 * queue, and the acknowledgments that turn its occupancy into a "slow down" signal.
 *
 * Contract. One struct sl_ec is one target queue (the receiving NIC's buffer in front of a host
 * that drains slower than the link), shared by connections [0, max_conns). The caller hands it
 * each arriving data packet (sl_ec_arrive) and tells it each time the host finished processing
 * the packet at the head of the queue (sl_ec_process); the target answers with actions, each an
 * acknowledgment to send to one connection's initiator:
 *   - IACK: a cumulative ACK whose ack_psn is greater than the previous one sent on the
 *     connection ("incremented");
 *   - DACK: a cumulative ACK whose ack_psn equals the previous one sent (a duplicate): not a
 *     loss signal here but "slow down". It needs no new wire field: on the wire it is an ACK
 *     (SL_XOP_ACK) like any other;
 *   - NACK: go-back-N: ack_psn is the next expected PSN (last accepted + 1).
 * ack_psn always names the next PSN expected (every PSN below it acknowledged), as lib/recv's
 * ACKs do. The rules (the paper's section 2.3, docs/ec.md):
 *   - an arrival whose PSN is not the expected one is dropped and NACKed with the expected PSN,
 *     once per drop episode: later out-of-order arrivals are dropped silently until the
 *     expected PSN is accepted (nack = false: all dropped silently; the `timeout` baseline);
 *     with selective repeat (sr_pkts > 0, beyond the paper) one up to sr_pkts past the expected
 *     PSN joins the queue instead (the host places it, as MELO's receiver does) and every hole
 *     it reveals is NACKed by range, once; a hole the queue's own drop made is NACKed by the
 *     next packet accepted out of order; only an arrival past that reach goes back N;
 *   - an in-order arrival that does not fit the queue (bytes + len > queue_bytes) is dropped
 *     (an EC drop; the next arrival is then out of order and NACKed);
 *   - an accepted arrival joins the queue; if the queue is then congested (occupancy >
 *     threshold_bytes) the target sends a standalone DACK at once, else an IACK covering it
 *     (or, with iack_at_processing, nothing until it is processed);
 *   - when the host processes the head packet, every packet that moves from above to below
 *     the threshold position (the bytes ahead of it plus its own <= threshold_bytes) produces,
 *     in queue order, a DACK then an IACK of that packet, so an IACK never acknowledges a packet
 *     still above the threshold (with selective repeat the IACK names the end of the run of
 *     the connection's PSNs that have crossed: never past a hole; a crossing that does not
 *     extend the run sends only its DACK);
 *   - while a connection recovers (a NACK sent, the missing PSN not yet accepted), each of its
 *     packets that arrived before the drop (queued when the NACK went out) produces a DACK
 *     when processed, unless that call already sent the connection one (a crossing): the
 *     clock of its one-per-DACK retransmissions;
 *   - fairness (fair_period_ns > 0): every period the target compares the packets each
 *     connection had accepted; a connection above fair_ratio_pct % of the slowest active one's
 *     count has its IACKs coalesced (every other one skipped) and the slowest ones their DACKs
 *     suppressed, until the next sample;
 *   - policy = false: a plain go-back-N target (the `opt` and `aimd` baselines): an IACK for
 *     each accepted packet (at acceptance, or at processing with iack_at_processing), never a
 *     DACK; the queue and its drops are the same.
 * The target never reads a clock (now_ns is an argument), allocates only in sl_ec_create, and
 * holds each accepted packet's handle until sl_ec_process returns it.
 *
 * Units: bytes, ns, PSNs (32-bit, wrapping: sl_seq.h).
 */
#ifndef SL_EC_H
#define SL_EC_H

#include <stdbool.h>
#include <stdint.h>

#include "sl_common.h"
#include "sl_stats.h"

#define SL_EC_QUEUE_BYTES_DEFAULT (81u * 1024u)    /**< the paper's target queue, bytes */
#define SL_EC_THRESHOLD_BYTES_DEFAULT (9u * 1024u) /**< the paper's threshold (= MSS), bytes */

struct sl_ec_conf {
	uint32_t max_conns;       /**< connections [0, max_conns) */
	uint32_t queue_bytes;     /**< queue capacity, bytes [SL_EC_QUEUE_BYTES_DEFAULT] */
	uint32_t threshold_bytes; /**< congested above this occupancy, bytes
				   *   [SL_EC_THRESHOLD_BYTES_DEFAULT] */
	uint32_t min_pkt_bytes;   /**< smallest packet the caller hands in, bytes [64]: sizes the
				   *   queue's slots and sl_ec_actions_max() */
	bool policy;              /**< send DACKs and hold IACKs (the paper's scheme) */
	bool nack;                /**< NACK out-of-order arrivals (false: drop silently) */
	bool iack_at_processing;  /**< not congested: IACK when processed, not when accepted */
	uint64_t fair_period_ns;  /**< fairness sampling period, ns (0: no fairness knobs) */
	uint32_t fair_ratio_pct;  /**< "much higher": above this % of the slowest's count [150] */
	uint32_t sr_pkts;         /**< selective repeat: accept arrivals up to this many PSNs past
				   *   the expected one, 0..SL_EC_SR_PKTS_MAX (0: go-back-N, the
				   *   paper's target) */
};

#define SL_EC_NACK_HOLES_MAX 4u /**< holes one arrival NACKs at most (selective repeat) */
#define SL_EC_SR_PKTS_MAX 64u   /**< selective repeat's reach, PSNs (a 64-bit map per connection) */

enum sl_ec_act_type {
	SL_EC_IACK = 0,
	SL_EC_DACK,
	SL_EC_NACK,
};

/* One acknowledgment to send. */
struct sl_ec_action {
	uint8_t type;      /**< enum sl_ec_act_type */
	uint32_t conn;     /**< connection */
	uint32_t ack_psn;  /**< next PSN expected: every PSN below it acknowledged */
	uint32_t hole_psn; /**< NACK with hole_len > 0: the first PSN of a hole (selective) */
	uint32_t hole_len; /**< NACK: the hole's PSNs, to resend alone; 0: go back to ack_psn */
};

/* What sl_ec_arrive did with a packet. */
enum sl_ec_verdict {
	SL_EC_ACCEPTED = 0, /**< in the queue; its handle comes back from sl_ec_process */
	SL_EC_DROP_ORDER,   /**< not the expected PSN (one NACK per episode unless nack = false) */
	SL_EC_DROP_FULL,    /**< in order, but the queue had no room: an EC drop */
	SL_EC_DROP_BAD,     /**< conn not open, or bytes 0 or above queue_bytes */
	SL_EC_DROP_DUP,     /**< selective repeat: a PSN already accepted */
};

/* A processed packet. */
struct sl_ec_pkt {
	uint32_t conn;
	uint32_t psn;
	uint32_t bytes;
	void *handle;
	bool stale; /**< its connection was closed or reopened since it arrived: it sent nothing,
		     *   and the caller should not deliver it */
};

/* Counters, each described once in sl_ec_stat_table (docs/counters.md). */
struct sl_ec_stats {
	uint64_t accepted;          /**< packets that joined the queue */
	uint64_t processed;         /**< packets the host processed */
	uint64_t drop_order;        /**< out-of-order arrivals dropped */
	uint64_t drop_full;         /**< in-order arrivals dropped for room (EC drops) */
	uint64_t drop_bad;          /**< arrivals for no open connection or of a bad size */
	uint64_t drop_dup;          /**< selective repeat: arrivals of a PSN already accepted */
	uint64_t iacks;             /**< IACKs sent */
	uint64_t dacks;             /**< DACKs sent */
	uint64_t nacks;             /**< NACKs sent (a selective one per hole) */
	uint64_t dacks_suppressed;  /**< DACKs the fairness knob did not send */
	uint64_t iacks_coalesced;   /**< IACKs the fairness knob skipped */
	uint64_t congested_accepts; /**< packets accepted while the queue was congested */
	uint64_t max_queue_bytes;   /**< deepest occupancy seen, bytes */
};
extern const struct sl_stat_table sl_ec_stat_table;

struct sl_ec;

/*
 * NULL with errno EINVAL (conf NULL, max_conns 0, threshold_bytes >= queue_bytes, a queue that
 * cannot hold one min_pkt_bytes packet, fair_ratio_pct 1..99, more than 2^31 - 1 slots) or
 * ENOMEM. Zeros take the defaults in brackets above.
 */
struct sl_ec *sl_ec_create(const struct sl_ec_conf *conf);
void sl_ec_free(struct sl_ec *ec);

/* Open conn expecting first_psn next (reopening resets it). 0, or -EINVAL. */
int sl_ec_conn_open(struct sl_ec *ec, uint32_t conn, uint32_t first_psn);

/*
 * Close conn: its arrivals are dropped (drop_bad) until it is opened again, and its packets
 * still queued leave the queue stale (struct sl_ec_pkt.stale), sending nothing. 0, or -EINVAL.
 */
int sl_ec_conn_close(struct sl_ec *ec, uint32_t conn);

/* The most actions one call can write (a processed packet can move many below the threshold;
 * an arrival out of order can NACK SL_EC_NACK_HOLES_MAX holes). */
unsigned sl_ec_actions_max(const struct sl_ec *ec);

/*
 * A data packet of `bytes` (what the queue accounts: the caller chooses payload or wire bytes)
 * for conn arrives. Writes its actions (at most sl_ec_actions_max) to act and their number to
 * *nact. Returns the verdict; the handle of a packet not accepted stays the caller's.
 */
enum sl_ec_verdict sl_ec_arrive(struct sl_ec *ec, uint32_t conn, uint32_t psn, uint32_t bytes,
				void *handle, uint64_t now_ns, struct sl_ec_action *act,
				unsigned *nact);

/*
 * The host finished the head packet: it leaves the queue into *out. Writes the actions it
 * causes. Returns 0, or -ENOENT when the queue is empty.
 */
int sl_ec_process(struct sl_ec *ec, uint64_t now_ns, struct sl_ec_pkt *out,
		  struct sl_ec_action *act, unsigned *nact);

/* The head packet without taking it (its bytes time the host's drain). -ENOENT if empty. */
int sl_ec_peek(const struct sl_ec *ec, struct sl_ec_pkt *out);

/* Bytes in the queue now. */
uint32_t sl_ec_queue_bytes(const struct sl_ec *ec);

void sl_ec_stats_get(const struct sl_ec *ec, struct sl_ec_stats *st);

#endif /* SL_EC_H */
