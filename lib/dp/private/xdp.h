/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xdp.h - claiming a kernel interface for AF_XDP (xdp_claim.c says why), and steering sluice's
 * UDP port to it (xdp_udp.c).
 */
#ifndef DP_XDP_H
#define DP_XDP_H

#include <stddef.h>

#include "sl_dp.h"

#define SL_DP_XDP_STEER_PROG "sl_xdp_steer" /**< drivers/bpf/xdp_steer.c's program */

/*
 * Claim ifname for this process before its AF_XDP queues are set up: 0 with c held (a
 * steering program a killed sluiced left attached is detached), -EBUSY if another sluiced
 * holds it, or -errno; on error a message naming the interface is in err.
 */
int sl_dp_xdp_claim(const char *ifname, struct sl_dp_xdp_claim *c, char *err, size_t errlen);

/* Give the claim back (after the port has closed); the lock file goes. No-op if none held. */
void sl_dp_xdp_release(struct sl_dp_xdp_claim *c);

/*
 * After the AF_XDP PMD has attached drivers/bpf/xdp_steer.c to ifname: have it redirect UDP
 * datagrams to udp_port as well. 0 (also when ifname has no program of ours), or -errno with a
 * message naming the interface in err.
 */
int sl_dp_xdp_steer_udp(const char *ifname, uint16_t udp_port, char *err, size_t errlen);

#endif /* DP_XDP_H */
