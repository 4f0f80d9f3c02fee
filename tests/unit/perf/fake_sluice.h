/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fake_sluice.h - what test_perf_run can ask fake_sluice.c (sluice.h in one process).
 */
#ifndef FAKE_SLUICE_H
#define FAKE_SLUICE_H

#include <stdint.h>

/* SENDs still waiting for a RECV when their QP was destroyed, since the process started. */
extern unsigned fake_sluice_flushes;
/* Event fd writes: completions that came to an armed CQ. */
extern unsigned fake_sluice_events;
/* The rate limit and program of the last QP created. */
extern uint64_t fake_sluice_rate_bps;
extern char fake_sluice_program[];

#endif /* FAKE_SLUICE_H */
