/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * h_fabric.h - what the provider's unit tests share. They are libfabric applications: the
 * provider is the build tree's libsluice-fi.so, which libfabric loads (FI_PROVIDER_PATH and
 * FI_PROVIDER=sluice, from meson), on libsluice's fake daemon (tests/unit/api/h_daemon.h)
 * in the test's own process. The provider reads its settings once, when libfabric loads it, so
 * the socket (FI_SLUICE_SOCKET) is one path for the whole run: h_fabric_init sets it, and each
 * test starts and stops its fake daemon there. Handshakes go over loopback (FI_SLUICE_ADDR).
 */
#ifndef H_FABRIC_H
#define H_FABRIC_H

#include <stddef.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include "h_daemon.h"

#define H_NAME_BYTES 64

/* One RDM endpoint and what it stands on, opened through libfabric. */
struct h_side {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *tx_cq, *rx_cq; /**< the same CQ unless opened apart */
	struct fid_ep *ep;
	char name[H_NAME_BYTES];
	size_t name_len;
};

/* Pick the run's socket path and export it as FI_SLUICE_SOCKET: first thing in main. */
const char *h_fabric_init(void);
/* The run's socket path. */
const char *h_fabric_socket(void);

/* cmocka's setup and teardown: a fake daemon at the run's socket (*state), which stashes a
 * SEND that finds no RECV as sluiced does (rnr_wait). */
int h_fabric_setup(void **state);
int h_fabric_teardown(void **state);

/* fi_getinfo for FI_EP_RDM and FI_MSG, the answer of the sluice provider itself (not
 * ofi_rxm layered over it): 0 and *info set, or the error. */
int h_fabric_getinfo(struct fi_info **info);

/* Open and enable s with one CQ (rx_attr NULL) or two; every call must succeed. */
void h_side_open(struct h_side *s, const struct fi_cq_attr *tx_attr,
		 const struct fi_cq_attr *rx_attr);
/* Close what h_side_open opened; every close must return 0. */
void h_side_close(struct h_side *s);
/* peer's name in s's AV: its fi_addr_t. */
fi_addr_t h_side_insert(struct h_side *s, const struct h_side *peer);

#endif /* H_FABRIC_H */
