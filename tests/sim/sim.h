/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sim.h - the deterministic discrete-event network simulator.
 *
 * Model. Time is a virtual clock in ns. Everything that happens is an event in one binary heap
 * keyed by (time, insertion order): two events at the same ns run in the order they were
 * scheduled, so a run is a pure function of its scenario and seed. There is no wall clock and
 * no thread.
 *
 * Topology: a star. Every host has one full-duplex link to a single switch; the switch has
 * one output port per host. A port is a link transmitter: rate (bps), propagation delay (ns),
 * a data FIFO with a byte limit, a control FIFO served first (acks, NACKs, pulls, CNPs and NDP
 * trimmed headers), ECN marking on the data queue depth (RED ramp from kmin to kmax with
 * marking probability pmax at kmax; kmin == kmax is a step at K), and NDP trimming (a data
 * packet that does not fit loses its payload and joins the control FIFO). Marking happens on
 * arrival against the depth found, or (ecn_dequeue) on departure against the depth left
 * behind, which feeds congestion back without the queueing delay. PFC (802.1Qbb, what RoCE
 * runs on) is modelled per ingress: when the switch holds more than pfc_xoff_bytes of data
 * from one host, a PAUSE reaches that host one propagation delay later and its data stops
 * (control packets still flow); at pfc_xon_bytes a RESUME follows. A packet occupies
 * the port for ceil(wire_bytes x 8 / rate) ns, then arrives at the far node prop_ns later.
 *
 * Hosts. A host port never queues data: when it goes idle it asks the host's sender for the
 * next packet (the sender is lib/sched behind struct sim_sender_ops, or a reference sender in
 * a test), and if there is none it sleeps until the sender's next deadline or the next
 * incoming control packet. Data arriving at a host first passes the receive impairment
 * (seeded random loss per packet or per segment transmission, scripted drops by flow/seq/tx_id
 * or by the nth data packet) and then goes to the host's receiver behind struct
 * sim_receiver_ops (the reference receiver in sim_recv.c, or lib/recv in sim_librecv.c).
 *
 * Units: times in ns, rates in bps, sizes in bytes, sequence numbers in segments.
 */
#ifndef SIM_H
#define SIM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sl_rng.h"

#define SIM_NEVER UINT64_MAX
#define SIM_MAX_HOSTS 64u
#define SIM_MAX_DROPS 64u
#define SIM_FB_MAX_BYTES 40u /**< room for one feedback frame (SL_XFB_MAX_LEN), bytes */

struct sim;

enum sim_pkt_type {
	SIM_PKT_DATA,
	SIM_PKT_ACK,  /**< cumack + one SACK block (the segment that caused it) + tx_id echo */
	SIM_PKT_NACK, /**< NDP: the segment in seq was trimmed or lost */
	SIM_PKT_PULL, /**< NDP: grant of pull_bytes to the sender */
	SIM_PKT_CNP,  /**< DCQCN congestion notification */
	SIM_PKT_NTYPES,
};

struct sim_pkt {
	struct sim_pkt *next; /**< queue link */
	uint8_t type;         /**< enum sim_pkt_type */
	uint8_t tx_id;        /**< data: retransmission count (0 first); ack/nack: echo */
	uint8_t ecn_ce;       /**< data: marked by a switch; ack: echo of the mark */
	uint8_t trimmed;      /**< data: payload cut by an NDP switch */
	uint16_t src;         /**< sending host */
	uint16_t dst;         /**< destination host */
	uint32_t flow;        /**< global flow id */
	uint32_t seq;         /**< data: segment; ack: SACKed segment; nack: lost segment */
	uint32_t cumack;      /**< ack/nack: next segment the receiver expects */
	uint32_t len_bytes;   /**< data payload bytes (0 once trimmed) */
	uint32_t wire_bytes;  /**< bytes on the wire, headers included */
	uint32_t pull_bytes;  /**< pull: credit granted, bytes */
	uint64_t ts_ns;       /**< data: send time; ack: its echo */
	uint8_t last;         /**< data: the last segment of a push (the sender wants an ACK) */
	uint8_t fb_len;       /**< control from lib/recv: bytes of fb, 0 for the reference */
	uint8_t fb[SIM_FB_MAX_BYTES]; /**< feedback frame as on the wire (sl_wire.h) */
};

/* ---- event core ---- */

typedef void (*sim_event_fn)(struct sim *s, void *obj, uint64_t arg);

/* Run fn(s, obj, arg) at t_ns (>= now). Events at one instant run in scheduling order. */
void sim_schedule(struct sim *s, uint64_t t_ns, sim_event_fn fn, void *obj, uint64_t arg);
uint64_t sim_now(const struct sim *s);

/* ---- packets ---- */
struct sim_pkt *sim_pkt_alloc(struct sim *s);
void sim_pkt_free(struct sim *s, struct sim_pkt *p);

/* ---- plug-in interfaces ---- */

/* A host's sending side. */
struct sim_sender_ops {
	/* Fill p with the next packet to send at now_ns; false when nothing may go now. */
	bool (*next_pkt)(void *ctx, uint64_t now_ns, struct sim_pkt *p);
	/* Earliest time next_pkt may say yes without new input (SIM_NEVER: only after input). */
	uint64_t (*next_ns)(void *ctx, uint64_t now_ns);
	/* A control packet (ack, nack, pull, cnp) for one of this host's flows. */
	void (*input)(void *ctx, const struct sim_pkt *p, uint64_t now_ns);
};

/* A host's receiving side: data packets that passed the receive impairment. */
struct sim_receiver_ops {
	void (*input)(void *ctx, struct sim_pkt *data, uint64_t now_ns);
};

/* Queue a control packet on host h's link (the receiver's way out). Takes ownership. */
void sim_host_send_ctrl(struct sim *s, uint32_t host, struct sim_pkt *p);
/* Tell host h that its sender may have something to send now (after a push, a pull, ...). */
void sim_host_kick(struct sim *s, uint32_t host);

/* ---- configuration ---- */

struct sim_port_conf {
	uint64_t rate_bps;
	uint64_t prop_ns;
	uint64_t jitter_ns;      /**< extra propagation delay, uniform in [0, jitter), FIFO kept:
				  *   breaks the lock-step of equal-rate senders (drop-tail phase
				  *   effects), ns */
	uint64_t limit_bytes;    /**< data queue limit, bytes (0: unlimited) */
	uint64_t ecn_kmin_bytes; /**< marking starts above this depth, bytes (0: no ECN) */
	uint64_t ecn_kmax_bytes; /**< marking probability reaches pmax here, bytes */
	uint32_t ecn_pmax_ppm;   /**< marking probability at kmax, parts per million */
	bool trim;               /**< NDP: trim instead of dropping when full */
	bool ecn_dequeue;        /**< mark on departure against the depth left behind (as
				  *   DCQCN's NS3 switch does) instead of on arrival */
	uint64_t pfc_xoff_bytes; /**< host -> switch only: PFC pauses the host's data when the
				  *   switch holds more than this from it, bytes (0: no PFC) */
	uint64_t pfc_xon_bytes;  /**< ... and resumes it at or below this, bytes */
};

/* One scripted drop: flow/seq/tx_id, or the nth data packet arriving at any host. */
struct sim_drop {
	uint32_t flow;
	uint32_t seq;
	uint32_t tx_id;
	uint64_t nth; /**< 0: match flow/seq/tx_id; else the nth data packet (1-based) */
};

enum sim_loss_mode {
	SIM_LOSS_PACKET,  /**< one draw from the sim RNG per data packet */
	SIM_LOSS_SEGMENT, /**< a hash of (seed, flow, seq, tx_id): senders that send the same
			       segments see the same losses, whatever the timing. tx_id saturates
			       at 3, so the 4th and later transmissions draw from the RNG */
};

struct sim_conf {
	uint64_t seed;
	uint32_t nhosts;
	struct sim_port_conf host_port[SIM_MAX_HOSTS];   /**< host -> switch */
	struct sim_port_conf switch_port[SIM_MAX_HOSTS]; /**< switch -> host */
	uint32_t hdr_bytes;                              /**< per-packet header bytes on the wire */
	uint32_t ctrl_bytes; /**< wire size of acks, nacks, pulls, CNPs */
	double loss;         /**< receive-side random loss of data packets, [0, 1] */
	double ctrl_loss;    /**< receive-side random loss of control packets (ACK, NACK, PULL,
			      *   CNP) at their sender, [0, 1]: the feedback path */
	enum sim_loss_mode loss_mode;
	uint32_t ndrops;
	struct sim_drop drops[SIM_MAX_DROPS];
};

/* Counters of one port. */
struct sim_port_stats {
	uint64_t tx_pkts;
	uint64_t tx_bytes;
	uint64_t drops_full; /**< data packets dropped at the byte limit */
	uint64_t trims;      /**< data packets trimmed to a header */
	uint64_t ecn_marks;
	uint64_t max_q_bytes; /**< deepest data queue seen, bytes */
	uint64_t pfc_pauses;  /**< host ports: PAUSEs received */
};

/* Network-wide counters. */
struct sim_stats {
	uint64_t events;
	uint64_t drops_random;   /**< receive impairment, random */
	uint64_t drops_ctrl;     /**< control packets lost to ctrl_loss */
	uint64_t drops_scripted; /**< receive impairment, scripted */
	uint64_t drops_queue;    /**< switch or host queues full */
	uint64_t trims;
	uint64_t ecn_marks;
	uint64_t ctrl_pkts[SIM_PKT_NTYPES]; /**< packets delivered to senders, by type */
	uint64_t data_pkts_rx;              /**< data packets handed to receivers */
};

struct sim *sim_create(const struct sim_conf *conf); /* NULL + errno */
void sim_free(struct sim *s);

void sim_set_sender(struct sim *s, uint32_t host, const struct sim_sender_ops *ops, void *ctx);
void sim_set_receiver(struct sim *s, uint32_t host, const struct sim_receiver_ops *ops, void *ctx);

/* Run events until the clock would pass end_ns or the heap is empty. Returns events run. */
uint64_t sim_run(struct sim *s, uint64_t end_ns);

const struct sim_stats *sim_stats(const struct sim *s);
const struct sim_port_stats *sim_port_stats(const struct sim *s, uint32_t host, bool at_switch);
const struct sim_conf *sim_conf(const struct sim *s);
/* Bytes in a port's data queue now. */
uint64_t sim_port_queue_bytes(const struct sim *s, uint32_t host, bool at_switch);
struct sl_rng *sim_rng(struct sim *s);
/* 0, or the errno of the allocation failure that stopped the run. */
int sim_error(const struct sim *s);

/* What an observer sees: every data packet a host sends, and every network loss or mark. */
enum sim_obs {
	SIM_OBS_TX,            /**< a host put a data packet on its link */
	SIM_OBS_DROP_QUEUE,    /**< a full queue dropped it */
	SIM_OBS_DROP_RANDOM,   /**< the receive impairment dropped it at random */
	SIM_OBS_DROP_SCRIPTED, /**< a scripted drop matched it */
	SIM_OBS_TRIM,          /**< an NDP switch cut its payload */
	SIM_OBS_MARK,          /**< a switch set ECN CE */
	SIM_OBS_N,
};

typedef void (*sim_observer)(void *ctx, enum sim_obs what, const struct sim_pkt *p,
			     uint64_t now_ns);
void sim_set_observer(struct sim *s, sim_observer fn, void *ctx);
extern const char *const sim_obs_names[SIM_OBS_N];

#endif /* SIM_H */
