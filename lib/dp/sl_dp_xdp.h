/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_dp_xdp.h - claiming a kernel interface for AF_XDP (xdp_claim.c says why).
 */
#ifndef SL_DP_XDP_H
#define SL_DP_XDP_H

#include <stddef.h>

struct sl_dp_xdp_claim {
	int fd;         /**< the locked file, -1 when nothing is claimed */
	char path[128]; /**< its name */
};

/*
 * Claim ifname for this process before its AF_XDP queues are set up: 0 with c held (a
 * steering program a killed sluiced left attached is detached), -EBUSY if another sluiced
 * holds it, or -errno; on error a message naming the interface is in err.
 */
int sl_dp_xdp_claim(const char *ifname, struct sl_dp_xdp_claim *c, char *err, size_t errlen);

/* Give the claim back (after the port has closed); the lock file goes. No-op if none held. */
void sl_dp_xdp_release(struct sl_dp_xdp_claim *c);

#endif /* SL_DP_XDP_H */
