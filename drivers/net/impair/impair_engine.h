/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * impair_engine.h - the impairment engine behind net_impair: pure C, no DPDK, no clock.
 *
 * One engine impairs one stream of frames (one direction of one queue). Frames are opaque
 * handles with a length; the engine never touches frame bytes itself: the owner supplies ops
 * to free, clone and corrupt a frame (for mbufs: rte_pktmbuf_free, rte_pktmbuf_copy, and a bit
 * flip on a private copy). Time is the now_ns argument, so the statistics are tested on a
 * virtual clock and the PMD drives the same code from the TSC.
 *
 * The configuration (struct sl_impair_conf) and its key=value parser live in impair_conf.c;
 * docs/impair.md lists every key with its unit and default.
 */
#ifndef SL_IMPAIR_ENGINE_H
#define SL_IMPAIR_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "sl_common.h"
#include "sl_rng.h"
#include "sl_stats.h"

#define SL_IMPAIR_REORDER_GAP_MAX 1024u /**< largest reorder_gap, frames */
#define SL_IMPAIR_REORDER_HELD 64u      /**< frames held back for reordering at once */
#define SL_IMPAIR_DROP_IDX_MAX 1024u    /**< entries in drop_idx */
#define SL_IMPAIR_FLIP_CHUNK 32u        /**< bit offsets handed to ops->corrupt per call */

/* Independent random streams: one per impairment. */
enum sl_impair_stream {
	SL_IMPAIR_RNG_LOSS,
	SL_IMPAIR_RNG_GE,
	SL_IMPAIR_RNG_BER,
	SL_IMPAIR_RNG_DUP,
	SL_IMPAIR_RNG_REORDER,
	SL_IMPAIR_RNG_JITTER,
	SL_IMPAIR_RNG_COUNT,
};

/* What happens to a frame with flipped bits. */
enum sl_impair_corrupt {
	SL_IMPAIR_CORRUPT_DROP,    /**< dropped, as a NIC that checks the FCS does (default) */
	SL_IMPAIR_CORRUPT_DELIVER, /**< delivered with the flipped bits */
};

struct sl_impair_conf {
	uint64_t seed;        /**< base seed; each stream derives its own */
	double loss;          /**< Bernoulli loss probability, [0, 1] */
	double ge_p;          /**< Gilbert-Elliott P(good -> bad) per frame; 0 disables GE */
	double ge_r;          /**< Gilbert-Elliott P(bad -> good) per frame */
	double ge_h;          /**< P(frame survives) in the bad state */
	double ge_k;          /**< P(frame survives) in the good state */
	double ber;           /**< bit error rate: P(each bit flips), [0, 1) */
	double dup;           /**< duplication probability, [0, 1] */
	double reorder;       /**< probability that a frame is held back, [0, 1] */
	uint32_t reorder_gap; /**< frames that overtake a held-back frame, >= 1 */
	enum sl_impair_corrupt corrupt;
	uint64_t delay_ns;    /**< fixed one-way delay, ns */
	uint64_t jitter_ns;   /**< delay varies uniformly in [delay - jitter, delay + jitter], ns */
	uint64_t rate_bps;    /**< token-bucket rate, bits/s; 0 = no cap */
	uint64_t burst_bytes; /**< token-bucket depth, bytes */
	uint64_t queue_bytes; /**< backlog allowed behind the rate cap, bytes */
	uint32_t queue_frames; /**< frames the engine can hold (delay + rate + reorder); power of 2
				*/
	uint32_t n_drop_idx;   /**< entries in drop_idx */
	uint64_t drop_idx[SL_IMPAIR_DROP_IDX_MAX]; /**< frame indexes to drop, ascending */
};

/* Defaults: everything off; docs/impair.md. */
void sl_impair_conf_init(struct sl_impair_conf *c);

/*
 * Set one key (without its tx_/rx_ prefix) from its text value. 0, or -EINVAL with a message
 * naming the key in err, or -ENOENT for an unknown key.
 */
int sl_impair_conf_set(struct sl_impair_conf *c, const char *key, const char *value, char *err,
		       size_t err_len);

/* Check cross-key constraints (ge_r with ge_p, ...). 0 or -EINVAL with a message in err. */
int sl_impair_conf_check(const struct sl_impair_conf *c, char *err, size_t err_len);

/* Print c as "key=value,..." (only keys that differ from the defaults). Length as snprintf. */
int sl_impair_conf_format(const struct sl_impair_conf *c, char *buf, size_t len);

/* NULL-terminated list of the keys sl_impair_conf_set accepts. */
extern const char *const sl_impair_conf_keys[];

/* The owner's frame operations. */
struct sl_impair_ops {
	/** (required) Release a dropped frame. */
	void (*free)(void *ctx, void *handle);
	/** (required) A copy of the frame for duplication, or NULL when out of buffers. */
	void *(*clone)(void *ctx, void *handle);
	/**
	 * (required) Flip the listed bits (offsets from the first byte, bit 0 = MSB of byte 0,
	 * all < 8 * len) of a frame about to be delivered corrupted. Returns the handle to deliver
	 * (a private copy when the frame was shared), or NULL when no copy could be made; the
	 * original is released by the op in both cases when it differs from the result.
	 */
	void *(*corrupt)(void *ctx, void *handle, const uint32_t *bit_off, unsigned n);
};

/* A frame handed to the engine. */
struct sl_impair_frame {
	void *handle;
	uint32_t len_bytes; /**< whole frame length, bytes */
};

/* Counters, per engine, each described once in sl_impair_stat_table (docs/counters.md). */
struct sl_impair_stats {
	uint64_t frames;
	uint64_t drop_idx;
	uint64_t drop_loss;
	uint64_t drop_ge;
	uint64_t drop_corrupt;
	uint64_t corrupted;
	uint64_t bits_flipped;
	uint64_t duplicated;
	uint64_t reordered;
	uint64_t delayed;
	uint64_t queued;
	uint64_t drop_queue;
	uint64_t drop_full;
	uint64_t drop_nobuf;
	uint64_t released;
	uint64_t released_bytes;
};

extern const struct sl_stat_table sl_impair_stat_table;

struct sl_impair;

/* NULL + errno (EINVAL: bad conf or ops; ENOMEM). */
struct sl_impair *sl_impair_create(const struct sl_impair_conf *conf,
				   const struct sl_impair_ops *ops, void *ops_ctx);

/* Frees the engine and every frame it holds (through ops->free). */
void sl_impair_free(struct sl_impair *e);

/*
 * Change the parameters of a running engine (same thread as the burst calls). Random streams
 * and the Gilbert-Elliott state carry on; a new seed reseeds them. queue_frames cannot change
 * (the running value is kept). 0 or -EINVAL.
 */
int sl_impair_reconfigure(struct sl_impair *e, const struct sl_impair_conf *conf);

/* True when no impairment is set and no frame is held: the owner may bypass the engine. */
bool sl_impair_idle(const struct sl_impair *e);

/*
 * Offer n frames at now_ns. Each is dropped (freed and counted), or kept to be released by
 * sl_impair_peek at its due time. The engine takes every frame.
 */
void sl_impair_admit(struct sl_impair *e, const struct sl_impair_frame *frames, unsigned n,
		     uint64_t now_ns);

/* Up to max handles due at now_ns, in release order, without removing them. */
unsigned sl_impair_peek(struct sl_impair *e, uint64_t now_ns, void **out, unsigned max);

/* Remove the first n handles returned by the last sl_impair_peek (the owner sent them). */
void sl_impair_consume(struct sl_impair *e, unsigned n);

/* Earliest time a held frame falls due, UINT64_MAX when none is queued. */
uint64_t sl_impair_next_due_ns(const struct sl_impair *e);

/* Frames held (queued for release, plus held back for reordering). */
unsigned sl_impair_held(const struct sl_impair *e);

void sl_impair_stats_get(const struct sl_impair *e, struct sl_impair_stats *out);

/* One counter, for tests: sl_impair_stat(e, drop_loss). */
#define sl_impair_stat(e, member)                                                                  \
	SL_STAT_READ(sl_impair_stats_get, struct sl_impair_stats, e, member)
void sl_impair_stats_reset(struct sl_impair *e);

#endif /* SL_IMPAIR_ENGINE_H */
