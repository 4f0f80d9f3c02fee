/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * capture.h - packet capture of a running sluiced: DPDK's multi-process capture for
 * dpdk-dumpcap, and --capture FILE (capture.c has the details).
 */
#ifndef SLUICED_CAPTURE_H
#define SLUICED_CAPTURE_H

#include <stddef.h>
#include <stdio.h>

#include "sluiced.h"

/*
 * After the ports start: let dpdk-dumpcap attach, and with path (not NULL) capture every frame
 * of every port into that pcapng file. 0 or -errno with a message in err (size errlen).
 */
int sluiced_capture_start(struct sluiced *d, const char *path, char *err, size_t errlen);

/* Once no lcore polls the ports any more (idempotent): stop, flush, close, log the counters. */
void sluiced_capture_stop(struct sluiced *d);

/*
 * With --capture, after sluiced_capture_stop(): one JSON line of the exit report with the
 * capture's counters, capture/captured, dropped, held, written (frames) and bytes (capture.c).
 */
void sluiced_capture_report(FILE *f);

#endif /* SLUICED_CAPTURE_H */
