/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_chan_harness.h - what the channel's fuzz targets share: one real server (lib/chan/srv.c)
 * on a socket in a temporary directory, serving one lane (the target's own double, since each
 * checks different things of what the lane is told), removed at exit; and the check that
 * aborts on a violation.
 */
#ifndef FUZZ_CHAN_HARNESS_H
#define FUZZ_CHAN_HARNESS_H

#include <stdbool.h>
#include <stdint.h>

#include "sl_chan.h"

extern struct sl_chan_srv *fuzz_srv; /**< the server, once fuzz_srv_start returned */
extern struct sl_chan_mrs *fuzz_mrs; /**< its key table */
extern char fuzz_srv_path[96];       /**< its socket */

/* Abort with "name: what" unless ok (name: the target's, given to fuzz_srv_start). */
void fuzz_check(bool ok, const char *what);

/*
 * Start the server on lane (QPNs [qpn_base, qpn_base + qps)) with room for max_mrs MRs and
 * max_cqs CQs; name names the target in messages and its directory. Aborts on failure.
 */
void fuzz_srv_start(const char *name, struct sl_chan_lane *lane, uint32_t max_mrs, uint32_t max_cqs,
		    uint32_t qpn_base, uint32_t qps);

/* The server's counters now. */
struct sl_chan_srv_stats fuzz_srv_stats(void);

#endif /* FUZZ_CHAN_HARNESS_H */
