/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_ecn_mark.h - the map value of the test beds' ECN marker (ecn_mark.c), shared by the BPF
 * program and its loader (tests/integration/lib/ecn_marker.c).
 */
#ifndef SL_ECN_MARK_H
#define SL_ECN_MARK_H

#include <linux/bpf.h>
#include <linux/types.h>

#define SL_ECN_MARK_MAP "sl_phantom_queue"
#define SL_ECN_MARK_PROG "sl_ecn_mark"

/* The phantom queue (ecn_mark.c's essay): settings, state and counters, under the lock. */
struct sl_phantom_queue {
	struct bpf_spin_lock lock;
	__u64 drain_bps;  /**< bit/s the phantom drains at (0: the program marks nothing) */
	__u64 mark_bytes; /**< bytes: mark above this occupancy */
	__u64 vq_bytes;   /**< bytes in the phantom after the last packet */
	__u64 last_ns;    /**< ns: the last packet's time */
	__u64 pkts;       /**< packets seen */
	__u64 marks;      /**< packets marked CE */
	__u64 vq_max;     /**< bytes: the phantom's largest occupancy */
};

#endif /* SL_ECN_MARK_H */
