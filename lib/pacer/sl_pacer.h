/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_pacer.h - the pacer: per-flow rate limits, departures in time order.
 *
 * A pacer owns flows [0, max_flows). Each flow has a rate (set at any time by congestion
 * control) and a FIFO of packets that the caller announces with sl_pacer_backlog() (counts and
 * lengths only: the pacer never sees payloads). sl_pacer_dequeue_burst(now_ns) hands back the
 * packets whose departure time has come, in departure order, each stamped with the time it
 * starts on the modelled link (tx_ns <= now_ns). sl_pacer_next_deadline() says when to call
 * again, so a virtual clock can jump straight to it and a poll loop can sleep until it.
 *
 * Units: rates in bps of wire bits, lengths in frame bytes; each packet costs
 * len_bytes + wire_overhead_bytes on the link and against its flow's rate (24 B for Ethernet:
 * preamble, start delimiter and inter-frame gap 20 B, FCS 4 B). Times are 64-bit ns and never
 * wrap (a 9000 B packet at 100 Kbps is 720 ms apart).
 *
 * The implementation is chosen by name at create time: "tassel" (the default, lib/pacer/
 * tassel.c) or a baseline registered from drivers/pacer/. The pacer is single-threaded: one
 * per TX lcore, like Carousel's per-core shapers.
 */
#ifndef SL_PACER_H
#define SL_PACER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sl_common.h"
#include "sl_stats.h"

#define SL_PACER_RATE_MIN_BPS (100 * SL_BPS_PER_KBPS) /**< lowest settable rate, bps */
#define SL_PACER_LEN_MAX 9600u                        /**< largest frame, bytes (jumbo) */
#define SL_PACER_NEVER UINT64_MAX                     /**< next_deadline when idle */
#define SL_PACER_NAME_MAX 16u

struct sl_pacer;

/* One departure. */
struct sl_pkt {
	uint64_t tx_ns;     /**< time the packet starts on the modelled link, ns */
	uint32_t flow;      /**< flow id */
	uint32_t len_bytes; /**< frame length as given to sl_pacer_backlog, bytes */
};

struct sl_pacer_conf {
	const char *impl;             /**< registered pacer name; NULL means "tassel" */
	uint32_t max_flows;           /**< flows are [0, max_flows); >= 1 */
	uint64_t link_bps;            /**< modelled link, bps of wire bits; >= 100 Kbps */
	uint32_t wire_overhead_bytes; /**< bytes per packet beyond len_bytes (24 for Ethernet) */
	uint32_t runs;                /**< spare length runs for all flows; 0: max_flows/4+64 */
	uint64_t lookahead_ns;        /**< Tassel L; 0: measured from the dequeue call period */
	uint64_t lookahead_max_ns;    /**< Tassel L cap and wheel span, ns; 0: 20 us */
	uint32_t batch_max;    /**< Tassel cap on packets per flow decision; 0: adaptive only */
	uint32_t imminent_max; /**< Tassel W, packet-tier capacity; 0: 64 B packet rate x L_max */
	uint64_t slot_ns;      /**< wheel slot width, ns (tassel 1, carousel/cffs 1000 if 0) */
	uint64_t horizon_ns;   /**< carousel / cffs horizon, ns; 0: 1 s */
	uint64_t bucket_bytes; /**< tbucket depth, bytes; 0: one 1500 B frame + overhead */
	uint64_t catchup_ns;   /**< Tassel: a flow that runs dry and is backlogged again restarts
				*   at most this far behind the system time, so time its caller
				*   lost (a descheduled lcore) is sent back to back until the flow
				*   is on schedule again: a token bucket's depth, in time; <= 1 s;
				*   0: at the system time (WF2Q+, no credit for idling) */
};

/* Per-flow view (slow path: tests, telemetry). */
struct sl_pacer_flow_stats {
	uint64_t rate_bps;    /**< current rate, bps (0: never set) */
	uint64_t tx_pkts;     /**< packets dequeued */
	uint64_t tx_bytes;    /**< frame bytes dequeued */
	uint64_t queued_pkts; /**< packets announced and not yet dequeued */
};

/* Pacer-wide counters, described once in sl_pacer_stat_table (docs/counters.md). */
struct sl_pacer_stats {
	uint64_t tx_pkts;
	uint64_t decisions;
	uint64_t bad_flow;
	uint64_t bad_rate;
	uint64_t bad_len;
	uint64_t no_rate;
	uint64_t runs_exhausted;
	uint64_t imminent_full;
	uint64_t clock_backwards;
	uint64_t paused_calls;
	uint64_t beyond_horizon;
	uint64_t catchup_restarts;
	uint64_t catchup_lost_ns;
	uint64_t idle_ns;
};

extern const struct sl_stat_table sl_pacer_stat_table;

/* Create a pacer; NULL with errno EINVAL (bad conf), ENOENT (unknown impl) or ENOMEM. */
struct sl_pacer *sl_pacer_create(const struct sl_pacer_conf *conf);
void sl_pacer_free(struct sl_pacer *p);

/*
 * Set a flow's rate, effective from its next packet. 0, -EINVAL (bad flow) or -ERANGE (below
 * 100 Kbps or above the link rate); each failure is counted.
 */
int sl_pacer_set_rate(struct sl_pacer *p, uint32_t flow, uint64_t rate_bps);

/*
 * A new owner takes the flow (the QP that used it closed and another opened in its slot):
 * forget what the flow's past earned or owes, so that the new one starts as a flow that never
 * sent (Tassel: no catch-up credit from a predecessor that ran dry late, no schedule to wait
 * for). Packets still queued from the old owner leave as they would. 0 or -EINVAL (bad flow).
 */
int sl_pacer_flow_reset(struct sl_pacer *p, uint32_t flow);

/*
 * Append npkts packets of len_bytes each to a flow's FIFO. 0, -EINVAL (bad flow, length or
 * count), -ENOEXEC (rate never set) or -ENOBUFS (no spare length run for a new length behind
 * packets of another length).
 */
int sl_pacer_backlog(struct sl_pacer *p, uint32_t flow, uint32_t npkts, uint32_t len_bytes);

/*
 * The caller's time is now_ns: a flow that becomes active from here on (sl_pacer_backlog on a
 * flow with nothing queued) starts its schedule no earlier. A caller that stops dequeuing
 * while nothing is due (its deadline far or SL_PACER_NEVER) tells the time before it backlogs;
 * else the activation starts at its last dequeue, maybe seconds back, and the flow's first
 * packets are all due at once (Tassel: then up to catchup_ns of them back to back).
 */
void sl_pacer_clock(struct sl_pacer *p, uint64_t now_ns);

/* Packets due by now_ns, in departure order, at most max. */
unsigned sl_pacer_dequeue_burst(struct sl_pacer *p, uint64_t now_ns, struct sl_pkt *out,
				unsigned max);

/* Earliest time a dequeue call can return a packet or must run the flow tier; SL_PACER_NEVER. */
uint64_t sl_pacer_next_deadline(const struct sl_pacer *p);

/*
 * TX stall (ring full, pause frame) starting or ending at now_ns. While stalled nothing is
 * dequeued; Tassel also freezes its system time, so nothing bursts on resume.
 */
void sl_pacer_pause(struct sl_pacer *p, uint64_t now_ns, bool paused);

/* 0 or -EINVAL. */
int sl_pacer_flow_stats_get(const struct sl_pacer *p, uint32_t flow,
			    struct sl_pacer_flow_stats *st);
void sl_pacer_stats_get(const struct sl_pacer *p, struct sl_pacer_stats *out);

/* One counter, for tests and slow paths: sl_pacer_stat(p, decisions). */
#define sl_pacer_stat(p, member) SL_STAT_READ(sl_pacer_stats_get, struct sl_pacer_stats, p, member)

/* Name of the implementation in use, and its state in bytes (fixed + per flow x max_flows). */
const char *sl_pacer_impl_name(const struct sl_pacer *p);
size_t sl_pacer_mem_bytes(const struct sl_pacer *p);

/* Lookahead L in use, ns (measured when conf.lookahead_ns is 0). */
uint64_t sl_pacer_lookahead_ns(const struct sl_pacer *p);

#endif /* SL_PACER_H */
