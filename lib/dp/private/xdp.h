/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xdp.h - claiming a kernel interface for AF_XDP (xdp_claim.c says why).
 */
#ifndef DP_XDP_H
#define DP_XDP_H

#include <stddef.h>

#include "sl_dp.h"

/*
 * Claim ifname for this process before its AF_XDP queues are set up: 0 with c held (a
 * steering program a killed sluiced left attached is detached), -EBUSY if another sluiced
 * holds it, or -errno; on error a message naming the interface is in err.
 */
int sl_dp_xdp_claim(const char *ifname, struct sl_dp_xdp_claim *c, char *err, size_t errlen);

/* Give the claim back (after the port has closed); the lock file goes. No-op if none held. */
void sl_dp_xdp_release(struct sl_dp_xdp_claim *c);

#endif /* DP_XDP_H */
