/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * link_rate.h - the link's slot clock and the rate it keeps (internal to lib/link; link.c is
 * its one user, link_rate.c says why it adapts).
 */
#ifndef SL_LINK_RATE_H
#define SL_LINK_RATE_H

#include <stdbool.h>
#include <stdint.h>

struct link_rate {
	uint64_t line_bps; /**< bits/s: the ceiling, conf.line_bps; 0: no clock at all */
	uint64_t bps;      /**< bits/s: the rate frames leave at now, line_bps / 1024 .. line_bps */
	uint64_t free_ns;  /**< ns: the line is free from here */
	uint64_t grow_ns;  /**< ns: the next increase is due (0 before any cut) */
	uint32_t slot_bytes; /**< bytes on the wire of the last data frame: what any frame costs */
};

/*
 * A clock for a line of line_bps (0: frames go as fast as the caller takes them), starting one
 * step up from zero (slow_start) or at the line.
 */
void link_rate_init(struct link_rate *r, uint64_t line_bps, bool slow_start);

/* True while the line is still busy with what went before: no frame may leave at now_ns. */
static inline bool
link_rate_busy(const struct link_rate *r, uint64_t now_ns)
{
	return r->line_bps && now_ns < r->free_ns;
}

/* Frames of the last data frame's size the clock lets leave by now_ns, the burst credit
 * included; UINT32_MAX without a clock. */
uint32_t link_rate_frames(const struct link_rate *r, uint64_t now_ns);

/* ns that n frames of wire_bytes take at the line (not the current rate); 0 without a clock. */
uint64_t link_rate_line_ns(const struct link_rate *r, uint32_t n, uint32_t wire_bytes);

/* A frame of wire_bytes (data: a ring frame, new or replayed) left at now_ns. */
void link_rate_take(struct link_rate *r, uint64_t now_ns, uint32_t wire_bytes, bool data);

/* The receiver did not take what was sent at this rate (a replay repeated): halve it. */
void link_rate_cut(struct link_rate *r, uint64_t now_ns);

/* The link runs clean at now_ns (NORMAL): raise the rate by a step if one is due. */
void link_rate_grow(struct link_rate *r, uint64_t now_ns);

#endif /* SL_LINK_RATE_H */
