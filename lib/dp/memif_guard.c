/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memif_guard.c - no burst on a memif port runs into memory the PMD unmapped under it.
 *
 * The hazard, in DPDK 22.11's net_memif. When the peer's control socket closes (an orderly
 * stop, or a peer killed with SIGKILL, whose socket the kernel closes), the EAL interrupt
 * thread runs memif_disconnect() (drivers/net/memif/memif_socket.c). It clears
 * ETH_MEMIF_FLAG_CONNECTED, then calls memif_free_regions() (rte_eth_memif.c), which munmap()s
 * the shared regions that hold the rings and buffers and rte_free()s their descriptors. Nothing
 * in between waits for a burst already running: eth_memif_rx() and eth_memif_tx() test the
 * flag once on entry and then read the rings. An lcore descheduled inside a burst wakes into
 * unmapped memory and the daemon dies of SIGSEGV. An orderly peer is covered by the lane's
 * QUIET state (lane_life.c: it answers the peer's LEAVE and then touches nothing until the
 * link goes down); a killed peer says nothing first.
 *
 * The guard. Between clearing the flag and freeing the regions, memif_disconnect() takes and
 * releases the device's control-channel spinlock (struct pmd_internals, cc_lock), and nothing
 * on the PMD's data path takes it. A lane holds that lock across each burst on the port
 * (lane.c). A burst that began before the disconnect reached the lock then ends before the
 * regions go; a burst that begins after it finds the flag clear (the lock orders the
 * interrupt thread's store before the lcore's load) and returns 0 without touching the rings.
 * Cost: one uncontended lock and unlock per burst; the lanes of one port contend with each
 * other for it only when several lcores poll the same memif port.
 *
 * The connect. eth_memif_rx() and eth_memif_tx() compute a queue's ring from the peer's region
 * (its address plus the ring's offset) before they test ETH_MEMIF_FLAG_CONNECTED. While a peer
 * connects, the interrupt thread creates each region with no address (ADD_REGION), maps it in
 * memif_connect() and sets the flag last. A burst that reads the region in between and the
 * flag after it (an lcore descheduled between two loads) goes on with a ring at the bare
 * offset: a host b of the two-lane memif test died of SIGSEGV so in the PMD's RX burst,
 * reading address 0x4084 (queue 1's ring offset, 0x4080, plus 4). So a lane, holding the lock,
 * also loads the flag itself (acquire) and bursts only once it is set: everything the
 * interrupt thread wrote before setting it, the mapped regions included, is then visible, and
 * a disconnect that clears it meanwhile still waits for the lock before it unmaps. A burst the
 * lane leaves out would have returned 0 anyway.
 *
 * The lock lives in the PMD's private data, whose layout DPDK does not export, so this file
 * declares the head of struct pmd_internals as 22.11 lays it out (rte_eth_memif.h) and trusts
 * it only when, for the port at hand, the members before the lock say what the port's devargs
 * say: its id, its role, its socket path, flags within the defined bits, a lock that is 0 or
 * 1. On any other DPDK release, or on a mismatch, the port runs unguarded and the daemon says
 * so in its log. The right fix is in the PMD (wait for the datapath to quiesce, e.g. with
 * rte_rcu_qsbr, before memif_free_regions()); this file goes when DPDK has it.
 *
 * The close. The same thread handles the peer's hang-up (memif_disconnect(): its rings' event
 * handles, memif_free_regions(), which reads dev->process_private) while the daemon's main
 * thread may be closing the port (memif_dev_close() releases the queues and rte_free()s
 * process_private); under AddressSanitizer that race crashed a stopping daemon inside the
 * interrupt thread (rte_free of freed memory, from memif, in CI's lanes case). So a memif port
 * is stopped and closed on that thread itself, from an EAL alarm (sl_dp_memif_close()): its
 * hang-up handling and the close then come one after the other.
 */
#define ALLOW_INTERNAL_API /* rte_eth_dev_allocated() where DPDK's driver headers exist */

#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_alarm.h>
#include <rte_version.h>

#include "sl_dp.h"
#include "sl_dp_driver.h"
#include "lane.h"
#include "dp_log.h"

#define CLOSE_WAIT_US (10u * 1000u * 1000u) /**< longest wait for the alarm's close, us */

struct memif_close {
	uint16_t port_id;
	atomic_bool done;
};

/* On the EAL interrupt thread: the port's stop and close, after whatever it was handling. */
static void
memif_close_alarm(void *arg)
{
	struct memif_close *c = arg;

	rte_eth_dev_stop(c->port_id);
	rte_eth_dev_close(c->port_id);
	atomic_store_explicit(&c->done, true, memory_order_release);
}

void
sl_dp_memif_close(uint16_t port_id)
{
	struct memif_close *c = malloc(sizeof(*c));

	if (c != NULL) {
		c->port_id = port_id;
		atomic_init(&c->done, false);
	}
	if (c == NULL || rte_eal_alarm_set(1, memif_close_alarm, c) != 0) {
		free(c);
		SL_DP_LOG(WARNING, "port %u: closing from this thread: no EAL alarm", port_id);
		rte_eth_dev_stop(port_id);
		rte_eth_dev_close(port_id);
		return;
	}
	if (sl_dp_eal_wait_for(&c->done, CLOSE_WAIT_US)) {
		free(c);
		return;
	}
	/* Left to the alarm, which may still come: c is not freed. */
	SL_DP_LOG(WARNING, "port %u: the EAL interrupt thread did not close it within %u s",
		  port_id, CLOSE_WAIT_US / 1000000u);
}

#if RTE_VERSION >= RTE_VERSION_NUM(22, 11, 0, 0) && RTE_VERSION < RTE_VERSION_NUM(23, 0, 0, 0)

/* The head of DPDK 22.11's struct pmd_internals (drivers/net/memif/rte_eth_memif.h). */
struct memif_pmd_head {
	uint32_t id;                 /* memif_interface_id_t */
	uint32_t role;               /* enum memif_role_t */
	uint32_t flags;              /* ETH_MEMIF_FLAG_* */
	const char *socket_filename; /* the socket's, as given by "socket=" */
	char secret[24];             /* ETH_MEMIF_SECRET_SIZE */
	void *cc;                    /* struct memif_control_channel * */
	rte_spinlock_t cc_lock;
};

enum { MEMIF_ROLE_SERVER, MEMIF_ROLE_CLIENT }; /* enum memif_role_t */
#define MEMIF_FLAG_CONNECTED 0x2u              /* ETH_MEMIF_FLAG_CONNECTED */
#define MEMIF_FLAGS_DEFINED 0x1fu              /* ETH_MEMIF_FLAG_CONNECTING .. _SOCKET_ABSTRACT */
#define MEMIF_DEFAULT_SOCKET "/run/memif.sock" /* ETH_MEMIF_DEFAULT_SOCKET_FILENAME */

/* Does head read as the port whose devargs are args? If not, why not, in why. */
static bool
memif_guard_check(const struct memif_pmd_head *head, const char *args, char *why, size_t len)
{
	char value[256];
	uint32_t role = MEMIF_ROLE_CLIENT, id = 0;
	const char *socket = MEMIF_DEFAULT_SOCKET;

	if (args != NULL && sl_dp_devarg(args, "role", value, sizeof(value)))
		role = strstr(value, "server") || strstr(value, "master") ? MEMIF_ROLE_SERVER
									  : MEMIF_ROLE_CLIENT;
	if (args != NULL && sl_dp_devarg(args, "id", value, sizeof(value)))
		id = (uint32_t)strtoul(value, NULL, 10);
	if (args != NULL && sl_dp_devarg(args, "socket", value, sizeof(value)))
		socket = value;
	if (head->id != id || head->role != role || (head->flags & ~MEMIF_FLAGS_DEFINED) != 0 ||
	    (uint32_t)head->cc_lock.locked > 1) {
		snprintf(why, len,
			 "its private data does not read as DPDK 22.11's memif (id %u role %u "
			 "flags %#x)",
			 head->id, head->role, head->flags);
		return false;
	}
	if (head->socket_filename == NULL || strcmp(head->socket_filename, socket) != 0) {
		snprintf(why, len, "its private data does not name its socket %s", socket);
		return false;
	}
	return true;
}

rte_spinlock_t *
sl_dp_memif_guard(const char *name, const char *args, char *why, size_t len)
{
	struct rte_eth_dev *dev = rte_eth_dev_allocated(name);
	struct memif_pmd_head *head;

	if (dev == NULL || dev->data == NULL || dev->data->dev_private == NULL ||
	    strcmp(dev->data->name, name) != 0) {
		snprintf(why, len, "no ethdev named %s", name);
		return NULL;
	}
	head = dev->data->dev_private;
	return memif_guard_check(head, args, why, len) ? &head->cc_lock : NULL;
}

bool
sl_dp_memif_connected(const rte_spinlock_t *guard)
{
	const struct memif_pmd_head *head =
		(const struct memif_pmd_head *)(const void *)((const char *)guard -
							      offsetof(struct memif_pmd_head,
								       cc_lock));

	return __atomic_load_n(&head->flags, __ATOMIC_ACQUIRE) & MEMIF_FLAG_CONNECTED;
}

#else

rte_spinlock_t *
sl_dp_memif_guard(const char *name, const char *args, char *why, size_t len)
{
	(void)name;
	(void)args;
	snprintf(why, len, "the guard knows DPDK 22.11's memif only, not %s", rte_version());
	return NULL;
}

bool
sl_dp_memif_connected(const rte_spinlock_t *guard)
{
	(void)guard;
	return false; /* no guard is ever handed out */
}

#endif
