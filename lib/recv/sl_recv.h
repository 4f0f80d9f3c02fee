/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_recv.h - the sluice receiver: MELO selective retransmission with a shared bits pool
 * (Lu et al., "Memory Efficient Loss Recovery for Hardware-based Transport in Datacenter",
 * APNet'17), go-back-N as a per-connection mode, and the feedback every transport program of
 * drivers/proto needs (cumulative ACK, SACK, tx_id and send-time echo, ECN counts, NACK with up
 * to 3 holes, DCQCN CNP, NDP PULL).
 *
 * One instance per lcore owns connections [0, max_conns). The caller feeds it data packets as
 * descriptors (struct sl_recv_pkt: connection, PSN, flags, an opaque payload handle and the
 * application address the payload belongs at) and gets back actions (struct sl_recv_action):
 * payload handles to deliver in PSN order, handles it stored in a reorder buffer, handles it
 * refused (with the reason), and feedback packets to send. It never reads a clock (now_ns is an
 * argument), never frees a handle, and allocates memory only the first time a reorder buffer is
 * needed (lazily, then recycled). docs/recv.md documents the design, the per-connection context
 * byte by byte, the feedback formats on the wire, the ACK coalescing policy and every counter.
 */
#ifndef SL_RECV_H
#define SL_RECV_H

#include <stdint.h>

#include "sl_common.h"
#include "sl_stats.h"

/** Loss recovery of a connection. */
enum sl_recv_mode {
	SL_RECV_MELO = 0, /**< selective: bits pool + reorder buffer, NACK new holes */
	SL_RECV_GBN = 1,  /**< RoCE go-back-N: drop out-of-order, NACK the expected PSN once */
};

/* Feedback features of a connection (struct sl_recv_conn_conf.fb): the sending program's
 * (sl_xport_recv_conf_for_proto(), from struct sl_proto_ops.feedback). */
#define SL_RECV_FB_SACK (1u << 0) /**< ACKs name the out-of-order PSN that caused them */
#define SL_RECV_FB_ECHO (1u << 1) /**< ACKs echo the sender's tx_id and send timestamp */
#define SL_RECV_FB_ECN (1u << 2)  /**< ACKs count the ECN-CE marked packets they cover */
#define SL_RECV_FB_CNP (1u << 3)  /**< a CNP for ECN-CE data, at most one per cnp_interval */
#define SL_RECV_FB_PULL (1u << 4) /**< a PULL for every data arrival (NDP) */
/** NACK new holes and go-back-N gaps (and, like PULL, trimmed packets) */
#define SL_RECV_FB_NACK (1u << 5)

/* Flags of an arriving packet (struct sl_recv_pkt.flags). */
#define SL_RECV_F_ECN_CE (1u << 0)  /**< the network marked it Congestion Experienced */
#define SL_RECV_F_RTX (1u << 1)     /**< the sender marked it a retransmission */
#define SL_RECV_F_ACK_REQ (1u << 2) /**< acknowledge at once (last segment of a message) */
#define SL_RECV_F_TRIMMED (1u << 3) /**< payload cut by the network, header only (NDP) */

#define SL_RECV_NACK_HOLES 3      /**< holes per NACK: the 3 most recent, as the paper */
#define SL_RECV_WINDOW_MAX 32768u /**< largest window: hole offsets and lengths are 16-bit */

struct sl_recv_conf {
	uint32_t max_conns;       /**< connections [0, max_conns) */
	uint32_t window_pkts;     /**< reorder-buffer slots per connection, BDP / MTU, power of 2 */
	uint32_t pool_bits;       /**< shared bits pool size, bits (paper: 1024) */
	uint32_t block_bits;      /**< pool block size, bits (paper: 8) */
	uint32_t rob_max;         /**< reorder buffers; 0: min(max_conns, pool blocks) */
	uint32_t conn_max_blocks; /**< beyond the paper: blocks one connection may hold; 0: all */
	bool middle_walk;         /**< ablation, beyond the paper: reach a middle block by walking
				   *   the chain instead of dropping the packet */
	uint64_t ack_delay_ns;    /**< a coalesced ACK waits at most this long, ns */
	uint64_t cnp_interval_ns; /**< DCQCN: one CNP per connection per interval at most, ns */
	uint64_t nack_interval_ns; /**< go-back-N: a drop repeats the NACK of the same RCV.NXT
				    *   once this long has passed since it, ns; 0: never (one
				    *   NACK per gap episode, RoCE style; the default) */
};

/** Defaults: the paper's pool, a 1 MB BDP of 1 KB packets, DCQCN's 50 us CNP interval. */
#define SL_RECV_CONF_DEFAULT(conns)                                                                \
	((struct sl_recv_conf){.max_conns = (conns),                                               \
			       .window_pkts = 1024,                                                \
			       .pool_bits = 1024,                                                  \
			       .block_bits = 8,                                                    \
			       .rob_max = 0,                                                       \
			       .conn_max_blocks = 0,                                               \
			       .middle_walk = false,                                               \
			       .ack_delay_ns = 10 * SL_NS_PER_US,                                  \
			       .cnp_interval_ns = 50 * SL_NS_PER_US,                               \
			       .nack_interval_ns = 0})

struct sl_recv_conn_conf {
	uint32_t isn;           /**< PSN of the first packet expected */
	uint8_t mode;           /**< enum sl_recv_mode */
	uint8_t fb;             /**< SL_RECV_FB_* */
	uint8_t ack_every_pkts; /**< one ACK per this many in-order packets (1..255) */
};

/** An arriving data packet. */
struct sl_recv_pkt {
	uint32_t conn;     /**< connection id */
	uint32_t psn;      /**< packet sequence number */
	uint32_t flags;    /**< SL_RECV_F_* */
	uint16_t tx_id;    /**< sender's retransmission count of this PSN (0: first sent), echoed */
	uint64_t tx_ns;    /**< sender's send timestamp, ns, echoed */
	void *handle;      /**< opaque payload handle (an mbuf, a simulator packet) */
	uint64_t app_addr; /**< where the payload belongs in the application buffer */
};

enum sl_recv_act_type {
	SL_RECV_ACT_DELIVER = 1, /**< data: hand the payload to the application, in PSN order */
	SL_RECV_ACT_STORE,       /**< data: kept in the reorder buffer, do not free it */
	SL_RECV_ACT_DROP,        /**< data: refused, free it; reason is enum sl_recv_drop */
	SL_RECV_ACT_ACK,         /**< feedback: cumulative ACK (+ SACK, echo, ECN count) */
	SL_RECV_ACT_NACK,        /**< feedback: cumulative ACK + up to 3 holes */
	SL_RECV_ACT_CNP,         /**< feedback: DCQCN congestion notification */
	SL_RECV_ACT_PULL,        /**< feedback: NDP pull (one more packet may be sent) */
};

enum sl_recv_drop {
	SL_RECV_DROP_DUPLICATE = 1,  /**< already received (below RCV.NXT or bit set) */
	SL_RECV_DROP_OUT_OF_WINDOW,  /**< PSN at or past RCV.NXT + window */
	SL_RECV_DROP_MIDDLE_ACCESS,  /**< bit in neither the head nor the tail block (MELO) */
	SL_RECV_DROP_POOL_EXHAUSTED, /**< no free block in the bits pool (MELO) */
	SL_RECV_DROP_NO_ROB,         /**< no free reorder buffer */
	SL_RECV_DROP_OUT_OF_ORDER,   /**< go-back-N mode drops every out-of-order packet */
	SL_RECV_DROP_TRIMMED,        /**< header only: the payload was trimmed */
	SL_RECV_DROP_BAD_CONN,       /**< connection id out of range or not open */
	SL_RECV_DROP_CLOSED,         /**< still in the reorder buffer when the connection closed */
	SL_RECV_DROP_CONN_CAP,       /**< the connection would hold more than conn_max_blocks */
};

struct sl_recv_hole {
	uint32_t start_psn; /**< first missing PSN */
	uint16_t len_pkts;  /**< missing PSNs from start_psn */
};

/** Fields of a feedback action; which are meaningful depends on type and flags. */
struct sl_recv_fb {
	uint32_t ack_psn;    /**< cumulative: every PSN before it was delivered (RCV.NXT) */
	uint32_t sack_psn;   /**< with SL_RECV_FBF_SACK: the out-of-order PSN that caused it */
	uint64_t echo_tx_ns; /**< with SL_RECV_FBF_ECHO: tx_ns of the newest packet covered */
	uint16_t echo_tx_id; /**< with ECHO or SACK: tx_id of the newest packet covered
			      *   (with SACK, of the SACKed one) */
	uint16_t acked_pkts; /**< ACK, NACK: packets accepted (delivered, stored or duplicate)
			      *   since the previous ACK or NACK */
	uint16_t ce_pkts;    /**< with SL_RECV_FBF_ECN: of those, ECN-CE marked */
	uint8_t flags;       /**< SL_RECV_FBF_* */
	uint8_t nholes;      /**< NACK: holes used, newest first */
	struct sl_recv_hole hole[SL_RECV_NACK_HOLES]; /**< NACK holes */
	uint32_t pull_seq; /**< PULL: per-connection pull counter, from 1 */
};

#define SL_RECV_FBF_SACK (1u << 0) /**< sack_psn is valid */
#define SL_RECV_FBF_ECHO (1u << 1) /**< echo_tx_ns (and echo_tx_id) are valid */
#define SL_RECV_FBF_ECN (1u << 2)  /**< ce_pkts is valid */

struct sl_recv_action {
	uint8_t type;   /**< enum sl_recv_act_type */
	uint8_t reason; /**< DROP: enum sl_recv_drop */
	uint32_t conn;  /**< connection id */
	uint32_t psn;   /**< data actions: the packet's PSN */
	union {
		struct {
			void *handle;      /**< the payload handle given with the packet */
			uint64_t app_addr; /**< its application address */
		} data;
		struct sl_recv_fb fb;
	};
};

/* Counters, each described once in sl_recv_stat_table (docs/counters.md). */
struct sl_recv_stats {
	uint64_t rx_pkts;
	uint64_t delivered_pkts;
	uint64_t delivered_fast_pkts;
	uint64_t delivered_rob_pkts;
	uint64_t stored_pkts;
	uint64_t drop_duplicate;
	uint64_t drop_out_of_window;
	uint64_t drop_middle_access;
	uint64_t drop_pool_exhausted;
	uint64_t drop_no_rob;
	uint64_t drop_out_of_order;
	uint64_t drop_trimmed;
	uint64_t drop_bad_conn;
	uint64_t drop_closed;
	uint64_t holes_formed;
	uint64_t holes_untracked;
	uint64_t acks;
	uint64_t acks_delayed;
	uint64_t nacks;
	uint64_t nacks_repeated;
	uint64_t nacks_suppressed;
	uint64_t nack_holes[SL_RECV_NACK_HOLES + 1];
	uint64_t cnps;
	uint64_t cnps_suppressed;
	uint64_t pulls;
	uint64_t robs_allocated;
	uint64_t pool_peak_blocks;
	uint64_t pool_block_ns;
	uint64_t rtx_redundant_pkts;
	uint64_t drop_conn_cap;
	uint64_t middle_walks;
	uint64_t middle_walk_blocks;
	uint64_t pool_blocks_freed;
	uint64_t pool_next_hops;
};

/** Name, help and offset of every counter (nack_holes as nack_holes_0 .. nack_holes_3). */
extern const struct sl_stat_table sl_recv_stat_table;

struct sl_recv;

/* Receiver for conf; NULL and errno EINVAL (bad conf) or ENOMEM. */
struct sl_recv *sl_recv_create(const struct sl_recv_conf *conf);
void sl_recv_free(struct sl_recv *r);

/* Open connection conn: 0, -EINVAL (bad id or conf), -EEXIST (already open). */
int sl_recv_conn_open(struct sl_recv *r, uint32_t conn, const struct sl_recv_conn_conf *cc);

/*
 * Close conn: its blocks and reorder buffer go back to their pools, and each handle still stored
 * comes back as a DROP (reason CLOSED) action. Returns the number of actions written; act must
 * hold window_pkts entries. 0 for a connection that is not open.
 */
unsigned sl_recv_conn_close(struct sl_recv *r, uint32_t conn, struct sl_recv_action *act,
			    unsigned max);

/*
 * Actions one packet can produce at most: a whole reorder buffer of deliveries plus the packet's
 * own data action and its feedback. sl_recv_burst needs max >= this.
 */
unsigned sl_recv_actions_max(const struct sl_recv *r);

/*
 * Process up to n data packets at time now_ns, writing actions to act. Packets are taken while
 * at least sl_recv_actions_max() entries remain free; *consumed (may be NULL) says how many
 * were. Returns the number of actions written.
 */
unsigned sl_recv_burst(struct sl_recv *r, const struct sl_recv_pkt *pkts, unsigned n,
		       uint64_t now_ns, struct sl_recv_action *act, unsigned max,
		       unsigned *consumed);

/* Coalesced ACKs whose delay has expired at now_ns; returns the number of actions written. */
unsigned sl_recv_poll(struct sl_recv *r, uint64_t now_ns, struct sl_recv_action *act, unsigned max);

/* Earliest time sl_recv_poll has work, ns; UINT64_MAX when no ACK is pending. */
uint64_t sl_recv_next_deadline(const struct sl_recv *r);

/** What tests, the simulator and telemetry may read about one connection. */
struct sl_recv_conn_info {
	uint32_t rcv_nxt;                             /**< next expected PSN */
	uint32_t rcv_high;                            /**< highest received PSN */
	uint32_t blocks;                              /**< pool blocks held */
	uint32_t nholes;                              /**< recent holes tracked */
	struct sl_recv_hole hole[SL_RECV_NACK_HOLES]; /**< newest first */
	bool has_rob;                                 /**< holds a reorder buffer */
	bool open;                                    /**< opened and not closed */
};

/*
 * Fill info for conn: 0, -EINVAL, -ENOMEM, or -EFAULT when its chain is malformed. It counts
 * blocks by walking the chain: for tests and telemetry, not for every packet.
 */
int sl_recv_conn_info(const struct sl_recv *r, uint32_t conn, struct sl_recv_conn_info *info);

/* Blocks in use now, and the pool's size in blocks. */
uint32_t sl_recv_pool_used_blocks(const struct sl_recv *r);
uint32_t sl_recv_pool_total_blocks(const struct sl_recv *r);

void sl_recv_stats_get(const struct sl_recv *r, struct sl_recv_stats *st);
void sl_recv_stats_reset(struct sl_recv *r);

/*
 * Invariant audit (tests and fuzzing; walks every chain): free + allocated blocks = pool size,
 * no block reachable from two connections, every chain exactly as long as RCV.NXT..RCV.HIGH
 * needs, reorder buffers each owned once. 0, or -EFAULT naming nothing (the test says which).
 */
int sl_recv_audit(const struct sl_recv *r);

/** Memory accounting (docs/recv.md section 8), bytes. */
struct sl_recv_mem {
	uint32_t melo_fields_bytes; /**< the paper's per-connection fields, as laid out here */
	uint32_t conn_ctx_bytes;    /**< the whole per-connection context */
	uint64_t pool_bytes;        /**< bits + next_ptr + avail arrays of one side's pool */
	uint64_t rob_bytes;         /**< one reorder buffer ("off-chip") */
};

void sl_recv_mem(const struct sl_recv_conf *conf, struct sl_recv_mem *m);

/*
 * MELO's sender side (Lu et al., APNet'17, section 3.2.4): rebuild the receiver's
 * bitmap from its NACKs and hand the scheduler only the holes to resend.
 *
 * Each flow keeps a bitmap of PSNs "marked for retransmission", drawn from the tracker's own
 * shared bits pool (the same pool design and size as the receiver's: the sender's bitmap is
 * never larger than the receiver's). A NACK carries the cumulative ACK and up to 3 recent holes,
 * newest first. Holes grow the bitmap only at its tail; the scheduler takes marked PSNs from the
 * head as ranges (for lib/sched's marked_for_rtx), and cumulative ACKs shrink it at the head.
 *
 * A NACK repeats older holes for redundancy, so a PSN below nack_high (one past the highest PSN
 * any NACK marked) is never marked twice: without retransmission loss every resend is needed.
 * A lost retransmission is therefore not resent on a NACK; the RTO resends from the front
 * (sl_recv_rtx_rto clears the bitmap and the scheduler goes back to snd_una), as in the paper.
 * When the pool has no block for a hole, the hole is left unmarked (counted) and nack_high stays,
 * so a later NACK that repeats it can still mark it.
 */
struct sl_recv_rtx_conf {
	uint32_t max_flows;   /**< flows [0, max_flows) */
	uint32_t window_pkts; /**< largest distance from the cumulative ACK to a hole's end, pkts */
	uint32_t pool_bits;   /**< bits pool size, bits (paper: 1024, same as the receiver's) */
	uint32_t block_bits;  /**< block size, bits (paper: 8) */
};

/** PSNs [start_psn, start_psn + len_pkts) to retransmit. */
struct sl_recv_range {
	uint32_t start_psn;
	uint32_t len_pkts;
};

/* Counters, each described once in sl_recv_rtx_stat_table (docs/counters.md). */
struct sl_recv_rtx_stats {
	uint64_t nacks;
	uint64_t holes;
	uint64_t bad_holes;
	uint64_t bad_nacks;
	uint64_t pkts_marked;
	uint64_t pkts_repeated;
	uint64_t pkts_pool_exhausted;
	uint64_t pkts_taken;
	uint64_t pkts_acked_marked;
	uint64_t rtos;
	uint64_t pool_peak_blocks;
	uint64_t pool_blocks_freed;
	uint64_t pool_next_hops;
};

extern const struct sl_stat_table sl_recv_rtx_stat_table;

struct sl_recv_rtx;

/* Tracker for conf; NULL and errno EINVAL or ENOMEM. */
struct sl_recv_rtx *sl_recv_rtx_create(const struct sl_recv_rtx_conf *conf);
void sl_recv_rtx_free(struct sl_recv_rtx *t);

/* Start tracking flow, whose first PSN is isn: 0, -EINVAL, -EEXIST. */
int sl_recv_rtx_flow_open(struct sl_recv_rtx *t, uint32_t flow, uint32_t isn);
/* Stop tracking flow; its blocks go back to the pool. */
void sl_recv_rtx_flow_close(struct sl_recv_rtx *t, uint32_t flow);

/*
 * A NACK for flow (fb of an SL_RECV_ACT_NACK, after the wire decode): applies its cumulative ACK,
 * then marks the new part of each hole. Returns the PSNs newly marked, or -EINVAL.
 */
int sl_recv_rtx_nack(struct sl_recv_rtx *t, uint32_t flow, const struct sl_recv_fb *fb);

/* A cumulative ACK: marks before ack_psn are dropped, blocks freed at the head. 0 or -EINVAL. */
int sl_recv_rtx_ack(struct sl_recv_rtx *t, uint32_t flow, uint32_t ack_psn);

/*
 * Take marked PSNs from the head, at most max_pkts of them, as up to max ranges in PSN order;
 * they are unmarked. Returns the number of ranges.
 */
unsigned sl_recv_rtx_take(struct sl_recv_rtx *t, uint32_t flow, struct sl_recv_range *out,
			  unsigned max, uint32_t max_pkts);

/* RTO: clear the flow's bitmap; the scheduler resends from snd_una_psn. 0 or -EINVAL. */
int sl_recv_rtx_rto(struct sl_recv_rtx *t, uint32_t flow, uint32_t snd_una_psn);

/* One past the highest PSN a NACK of flow ever marked (0 for a flow not open). */
uint32_t sl_recv_rtx_nack_high(const struct sl_recv_rtx *t, uint32_t flow);

/* PSNs marked and not yet taken (0 for a flow not open). */
uint32_t sl_recv_rtx_marked(const struct sl_recv_rtx *t, uint32_t flow);

uint32_t sl_recv_rtx_pool_used_blocks(const struct sl_recv_rtx *t);
void sl_recv_rtx_stats_get(const struct sl_recv_rtx *t, struct sl_recv_rtx_stats *st);

/* Bytes of one flow's tracker state (the sender's share of the per-connection memory). */
uint32_t sl_recv_rtx_flow_bytes(void);

/*
 * Invariant audit (tests): free + allocated = pool size, no block in two flows, each chain
 * exactly covers its marks, the count of set bits equals marked. 0 or -EFAULT.
 */
int sl_recv_rtx_audit(const struct sl_recv_rtx *t);

#endif /* SL_RECV_H */
