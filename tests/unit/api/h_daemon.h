/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * h_daemon.h - a fake sluiced for libsluice's tests: a thread that listens on a SOCK_SEQPACKET
 * socket, answers its clients' requests as sl_chan_abi.h says, maps each client's memory through
 * the fd its HELLO brings, and, while its lane runs, consumes the QPs' send and receive rings
 * and produces completions. A QP's peer is any other QP it serves, of the same client or of
 * another (two processes on one fake daemon stand for two hosts): work between them moves
 * bytes (SEND / RECV, WRITE, WRITE with immediate, READ) with the keys checked as the real
 * daemon checks them, each key only within its own client. A wrong lkey completes with
 * SL_WC_LOC_PROT_ERR, a wrong rkey with SL_WC_REM_ACCESS_ERR, and either fails the QP. Work to
 * a peer not connected yet, and a SEND that finds no RECV posted, fail the QP too, or wait
 * (rnr_wait).
 */
#ifndef H_DAEMON_H
#define H_DAEMON_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "sl_chan_abi.h"

#define H_MAX 16                    /**< MRs and CQs per client, QPs in all */
#define H_CLIENTS 4                 /**< clients at once */
#define H_DAEMON_SEG_BYTES 1024u    /**< segment size the fake daemon tells (QP_CREATE) */
#define H_DAEMON_PKT_WIRE_BYTES 60u /**< and wire bytes per packet beyond it */

struct h_mr {
	uint32_t key; /**< 0: free */
	uint64_t va, len;
	uint64_t off; /**< in the client's memory, bytes */
	uint32_t access;
};

/* The fake daemon's lanes: a CQ has a ring for each, and a QP completes into ring qpn mod
 * H_CQ_RINGS, as QPs on several lanes of sluiced do. */
#define H_CQ_RINGS 2u

struct h_cq {
	bool used;
	struct sl_chan_ring *ring; /**< the first of H_CQ_RINGS */
	uint32_t depth;            /**< of each ring */
	uint32_t prod[H_CQ_RINGS];
	int event_fd;
};

struct h_client {
	int fd; /**< its socket; -1: slot free */
	uint8_t *mem;
	uint64_t mem_bytes, base_va;
	struct h_mr mrs[H_MAX];
	struct h_cq cqs[H_MAX];
};

struct h_qp {
	uint32_t qpn; /**< 0: free */
	struct h_client *cl;
	uint32_t peer_qpn;
	bool connected, failed;
	struct sl_chan_ring *sq, *rq;
	uint32_t sq_depth, rq_depth, sq_cons, rq_cons;
	uint32_t send_cq, recv_cq;
	uint32_t max_msg_bytes;
	char program[SL_NAME_MAX];
	uint8_t receiver;
};

struct h_daemon {
	char dir[64];
	char path[128];
	pthread_t thread;
	int lfd;
	atomic_bool stop;
	atomic_bool lane; /**< consume rings and complete work (cleared, then d->lock taken
			   *   and released: no pass runs any more) */
	/* behaviour, set before a client connects */
	uint16_t version;                     /**< answered in every response [SL_CHAN_VERSION] */
	int32_t refuse[SL_CHAN_TYPE_MAX + 1]; /**< status answered by type (0: serve) */
	/** status answered to a new connection before it asks, seq 0, as sluiced refuses one
	 *  over its limits (0: serve it) */
	int32_t refuse_connect;
	/** work to a peer QP not connected yet waits until it is, as sluiced retransmits it,
	 *  and a SEND (or WRITE with immediate) to a QP with no RECV posted waits for one, as
	 *  sluiced's stash holds it, instead of failing the QP (false) */
	bool rnr_wait;
	/* what it saw */
	atomic_uint requests[SL_CHAN_TYPE_MAX + 1];
	atomic_uint hellos;
	atomic_int seals;              /**< the last memfd's F_GET_SEALS */
	atomic_uint_least64_t fs_type; /**< and its fstatfs f_type (0: unknown) */
	struct h_client cl[H_CLIENTS]; /**< the first client takes cl[0] */
	struct h_qp qps[H_MAX];
	pthread_mutex_t lock; /**< the state above, between the thread and the test */
};

/* Start a fake daemon at path (NULL: a socket in a new temporary directory). */
void h_daemon_start(struct h_daemon *d, const char *path);
/* Start a fake daemon in a new temporary directory and open a context of mem_bytes on it;
 * aborts if either fails. */
struct sl_ctx *h_daemon_start_ctx(struct h_daemon *d, uint64_t mem_bytes);
/* Stop it, remove its socket (and the directory it made). */
void h_daemon_stop(struct h_daemon *d);

/* Wait up to timeout_ms until the fake has no client left (each has hung up): true if so. */
bool h_daemon_wait_no_client(struct h_daemon *d, int timeout_ms);

/* The fake's QP qpn (locked by the caller with d->lock), or NULL. */
struct h_qp *h_daemon_qp(struct h_daemon *d, uint32_t qpn);

#endif /* H_DAEMON_H */
