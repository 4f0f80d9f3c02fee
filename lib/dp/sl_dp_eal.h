/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_dp_eal.h - leave nothing behind: every DPDK process of the project removes its EAL runtime
 * directory (/var/run/dpdk/<file-prefix>, or $XDG_RUNTIME_DIR/dpdk/... without root) when it
 * exits, normally or on SIGINT / SIGTERM.
 *
 * rte_eal_cleanup() releases memory and the multi-process socket but leaves the directory and
 * its config and fbarray files, so each run of a test or benchmark with a unique --file-prefix
 * leaves one directory more. Call sl_dp_eal_cleanup() where rte_eal_cleanup() was called, and
 * sl_dp_eal_remove_on_signal() right after rte_eal_init() in programs that do not handle
 * SIGINT / SIGTERM themselves (sluiced does: its stop path ends in sl_dp_eal_cleanup()).
 */
#ifndef SL_DP_EAL_H
#define SL_DP_EAL_H

#include <stdatomic.h>
#include <stdbool.h>

/*
 * Park the EAL interrupt thread (eal.c says why), rte_eal_cleanup(), then remove the runtime
 * directory and the files in it; once (atexit-safe). No EAL call may follow, alarms included.
 */
void sl_dp_eal_cleanup(void);

/*
 * On SIGINT or SIGTERM, remove the runtime directory's files as they are now (and the
 * directory), then die of the signal. The handler only calls unlink(), rmdir() and raise(),
 * which are async-signal-safe; the file names are read here, once.
 */
void sl_dp_eal_remove_on_signal(void);

/*
 * Wait, polling every 100 us, until the EAL interrupt thread sets *flag (release), for up to
 * timeout_us; true if it did. For work handed to that thread (an alarm, a parked callback).
 */
bool sl_dp_eal_wait_for(const atomic_bool *flag, unsigned int timeout_us);

#endif /* SL_DP_EAL_H */
