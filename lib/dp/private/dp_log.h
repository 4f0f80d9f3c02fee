/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_log.h - lib/dp's log type, "sluice.dp": lane state changes and learned peers, never
 * anything per packet. Raise it at run time with EAL's --log-level 'sluice.dp:debug' (or
 * 'sluice.*:debug' for every sluice module).
 */
#ifndef DP_LOG_H
#define DP_LOG_H

#include <rte_log.h>

extern int sl_dp_logtype;

#define SL_DP_LOG(level, fmt, ...)                                                                 \
	rte_log(RTE_LOG_##level, sl_dp_logtype, "sluice.dp: " fmt "\n", ##__VA_ARGS__)

#endif /* DP_LOG_H */
