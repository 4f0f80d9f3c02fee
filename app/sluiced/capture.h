/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * capture.h - packet capture of a running sluiced: DPDK's multi-process capture for
 * dpdk-dumpcap, and --capture FILE (capture.c has the details).
 */
#ifndef SLUICED_CAPTURE_H
#define SLUICED_CAPTURE_H

#include <stddef.h>

#include "sluiced.h"

/*
 * After the ports start: let dpdk-dumpcap attach, and with path (not NULL) capture every frame
 * of every port into that pcapng file. 0 or -errno with a message in err (size errlen).
 */
int sluiced_capture_start(struct sluiced *d, const char *path, char *err, size_t errlen);

/* Once no lcore polls the ports any more (idempotent): stop, flush, close, log the counters. */
void sluiced_capture_stop(struct sluiced *d);

#endif /* SLUICED_CAPTURE_H */
