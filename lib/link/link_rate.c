/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * link_rate.c - RIFL's slots kept in time, at a rate a software receiver can take.
 *
 * Slots. On RIFL's wire every frame, data or IDLE, takes one fixed slot of the line, so a
 * replay (ring frames alternating with IDLE slots) and a NACK run leave at the line's pace.
 * In software a frame is handed to a queue, and "the next slot" is as soon as the lcore loops;
 * so the link keeps the slots in time: a frame occupies the line for its length at the current
 * rate and the next one leaves once the line is free, with SL_LINK_SLOT_BURST_NS of idle time
 * credited so a poll can send a burst. A frame costs at least what the last data frame cost
 * (slot_bytes): RIFL's slots are all one size, and a receiver's work is per frame, so an IDLE
 * slot of a replay must give the receiver the time a frame would, not the few nanoseconds its
 * header takes at line rate (that made a replay twice the frame rate of the data it repeats).
 *
 * Rate. RIFL's receiver keeps up with its line by construction. A software receiver is an
 * lcore behind a kernel ring (veth + AF_XDP or AF_PACKET) or a NIC queue, and on a shared
 * machine it takes less than the configured line (and nothing while its lcore is descheduled:
 * link.c's silent_frames covers that). The kernel drops the excess before the link sees it, so
 * every replay arrives with holes, the receiver's flag stays up and the sender replays for
 * ever (docs/link.md, "Rate"). So the slot clock's rate adapts, on the one signal RIFL already
 * has:
 *
 *   - a replay that ends with the peer's NACK flag still up (replay_repeats) lost frames of
 *     its own: halve the rate (rate_cuts), down to line_bps / SL_LINK_RATE_FLOOR_DIV;
 *   - every SL_LINK_RATE_STEP_NS the link spends in NORMAL below the line, add line_bps /
 *     SL_LINK_RATE_STEP_DIV, up to line_bps;
 *   - a replaying link starts one step up from zero, at every new session (a restarted peer
 *     is a new receiver, and the replays that repeated to a gone one cut the rate to the
 *     floor), and so approaches a slow receiver from below. Started at the line, its first
 *     overrun sends a receiver that is slower from the start so many frames while the loss
 *     sits unseen in the receiver's queue that the ring has evicted the lost frame before the
 *     NACK comes (lp_run__slow_receiver_cuts_the_rate: no recovery ever). An end-to-end
 *     link (SL_LINK_REPLAY_NONE) replays nothing, so nothing would cut it, and it starts at
 *     the line; its transport paces and backs off.
 *
 * Only where the receiver can be overrun (conf.adapt_rate; sluiced: every port but memif, whose
 * sender waits for room in the shared ring). There a repeat is the path's loss, not the
 * receiver's: cutting on it under Gilbert-Elliott bursts took four QPs over memif from about
 * 200 to 53-165 Mbit/s (qp-two-hosts-memif-faults), and waiting for four repeats in a row
 * before cutting, which kept memif's goodput, left veth receivers overrun for so long that a
 * NACK named a frame the ring no longer held (link-rates-af-xdp failed 3 runs of 4).
 *
 * A replay's tail (the IDLE slots that give the peer time to lower its flag, 2^k / 2 of RIFL's
 * slots) is time: with a clock it lasts as long as 2^k / 2 IDLE frames take at the line,
 * whatever the rate, so a cut rate puts fewer IDLEs in it rather than making every replay (and
 * its chance of meeting a loss, and so of another cut) longer. IDLE frames, not data-frame
 * slots: a ring is often sized well beyond the round trip (2^14 frames for the fault suites),
 * and a tail of 2^13 data-frame slots held new data back 6.7 ms per replay at 10 Gbit/s.
 *
 * One sender owns each direction of a lane, so there is no fairness to keep and the step is a
 * fixed share of the line: from the floor back to the line takes 64 steps. The link never
 * needs to know the receiver's capacity or the path's RTT.
 *
 * Units: bits/s, ns, bytes.
 */
#include "link_rate.h"

#include "sl_common.h"
#include "sl_link.h"
#include "sl_time.h"

void
link_rate_init(struct link_rate *r, uint64_t line_bps, bool slow_start)
{
	*r = (struct link_rate){
		.line_bps = line_bps,
		.bps = slow_start ? SL_MAX(line_bps / SL_LINK_RATE_STEP_DIV, 1u) : line_bps,
	};
}

void
link_rate_take(struct link_rate *r, uint64_t now_ns, uint32_t wire_bytes, bool data)
{
	uint64_t from = now_ns > SL_LINK_SLOT_BURST_NS ? now_ns - SL_LINK_SLOT_BURST_NS : 0;

	if (r->line_bps == 0)
		return;
	if (data)
		r->slot_bytes = wire_bytes;
	wire_bytes = SL_MAX(wire_bytes, r->slot_bytes);
	r->free_ns = SL_MAX(r->free_ns, from) + sl_tx_ns_ceil(wire_bytes, r->bps);
}

uint32_t
link_rate_frames(const struct link_rate *r, uint64_t now_ns)
{
	uint64_t from = now_ns > SL_LINK_SLOT_BURST_NS ? now_ns - SL_LINK_SLOT_BURST_NS : 0;
	uint64_t slot_ns;

	if (r->line_bps == 0)
		return UINT32_MAX;
	if (now_ns < r->free_ns)
		return 0;
	/* one may leave now, and one more for each slot of idle time credited */
	slot_ns = sl_tx_ns_ceil(SL_MAX(r->slot_bytes, 1u), r->bps);
	return (uint32_t)SL_MIN(1 + (now_ns - SL_MAX(r->free_ns, from)) / slot_ns, UINT32_MAX);
}

uint64_t
link_rate_line_ns(const struct link_rate *r, uint32_t n, uint32_t wire_bytes)
{
	if (r->line_bps == 0)
		return 0;
	return n * sl_tx_ns_ceil(wire_bytes, r->line_bps);
}

void
link_rate_cut(struct link_rate *r, uint64_t now_ns)
{
	uint64_t floor_bps = SL_MAX(r->line_bps / SL_LINK_RATE_FLOOR_DIV, 1u);

	if (r->line_bps == 0)
		return;
	r->bps = SL_MAX(r->bps / 2, floor_bps);
	r->grow_ns = now_ns + SL_LINK_RATE_STEP_NS;
}

void
link_rate_grow(struct link_rate *r, uint64_t now_ns)
{
	if (r->bps >= r->line_bps || now_ns < r->grow_ns)
		return;
	r->bps = SL_MIN(r->bps + SL_MAX(r->line_bps / SL_LINK_RATE_STEP_DIV, 1u), r->line_bps);
	r->grow_ns = now_ns + SL_LINK_RATE_STEP_NS;
}
