/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * perf_run.h - sluice-perf's runs on libsluice: set up QPs with the peer, measure, report.
 */
#ifndef SL_PERF_RUN_H
#define SL_PERF_RUN_H

#include "perf_args.h"

/* One whole run as a (parsed) command line asks. 0, or -1 after printing what failed. */
int sl_perf_run(const struct sl_perf_args *a);

#endif /* SL_PERF_RUN_H */
