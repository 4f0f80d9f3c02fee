/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * srv_priv.h - what the control half's two files share (srv.c: the socket, the clients' life,
 * commands to lanes; srv_req.c: each request). Not part of any contract: sl_chan.h is.
 */
#ifndef SL_CHAN_SRV_PRIV_H
#define SL_CHAN_SRV_PRIV_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/un.h>

#include "sl_chan.h"
#include "sl_common.h"
#include "sl_time.h"

#define SL_CHAN_SRV_CMD_NS (1 * SL_NS_PER_S) /**< a lane answers a command within this, ns */
#define SL_CHAN_MSG_DEFAULT (1u << 20)       /**< max_msg_bytes when a QP names none, bytes */
#define RING_ALIGN 64u                       /**< a ring's offset is a multiple of this */
#define ACCESS_ALL (SL_ACCESS_LOCAL_WRITE | SL_ACCESS_REMOTE_WRITE | SL_ACCESS_REMOTE_READ)

/* A command and whether a lane may still answer it (it timed out). */
struct pending {
	struct sl_chan_cmd c;
	bool queued;   /**< posted, not answered yet: c must stay where it is */
	bool unposted; /**< c was not posted: the lane's mailbox was full (a CLIENT_GONE: or
			*   the client just left); the slot is free */
};

struct client {
	enum sl_chan_client_state state;
	int fd;       /**< the connection while ACCEPTED or ATTACHED, else -1 */
	uint64_t id;  /**< protection domain, from first_client, never reused */
	int memfd;    /**< -1: none */
	uint8_t *mem; /**< the daemon's mapping */
	uint64_t mem_bytes;
	uint64_t base_va;
	struct pending *bye;  /**< [n_lanes] CLIENT_GONE */
	pid_t pid;            /**< SO_PEERCRED at accept */
	uid_t uid;            /**< SO_PEERCRED at accept: uid_clients counts by it */
	uint64_t hello_by_ns; /**< monotonic: closed if no HELLO by then (0: no deadline) */
	/* what it holds, against its quotas */
	uint32_t mrs;      /**< memory regions */
	uint64_t mr_bytes; /**< the sum of their lengths, bytes */
	uint32_t cqs;
	uint32_t qps;
	uint64_t requests; /**< requests served */
	uint64_t refused;  /**< of them, answered with an error */
	/* what other threads read of it (sl_chan_srv_clients): a copy, under a sequence count */
	uint64_t view_seq; /**< odd while view is being written */
	struct sl_chan_client_view view;
};

struct cq {
	struct sl_chan_cq cq;
	bool used;
	uint32_t qps; /**< QPs that name it */
	uint64_t off; /**< its ring in the client's memory, bytes */
	uint64_t bytes;
};

/* A QP's life in the control half: created on no lane (OPEN), placed on its lane by CONNECT. */
enum qp_state { QP_FREE, QP_OPEN, QP_CONNECTED };

struct qp {
	enum qp_state state;
	struct client *cl;
	uint32_t lane; /**< CONNECTED, or a CONNECT still queued: the lane it was given to */
	struct sl_chan_qp_conf conf; /**< what the lane was given (it keeps a pointer) */
	struct pending p;            /**< the last command */
	uint32_t last_token;         /**< the token of this slot's previous QP: not drawn again */
};

struct sl_chan_srv {
	struct sl_chan_srv_conf conf;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char host[SL_CHAN_HOST_MAX];
	char program[SL_NAME_MAX];
	int lfd;
	struct sl_chan_lane **lanes;
	unsigned n_lanes;
	struct sl_chan_mrs *mrs;
	uint64_t next_id;
	struct client *clients; /**< [max_clients] */
	struct cq *cqs;         /**< [max_cqs]: handle = index + 1 */
	struct qp *qps;         /**< [qps]: QPN = qpn_base + index */
	struct pollfd *pfd;     /**< [1 + max_clients] */
	struct client **pcl;    /**< [1 + max_clients]: the client of pfd[i] */
	struct sl_chan_srv_stats stats;
};

/* Log through the embedder's callback (conf.log), if any. */
void srv_log(const struct sl_chan_srv *s, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Add n (may be negative) to one of s's counters. */
void srv_count(uint64_t *counter, int64_t n);

/* The lane answered p (or it was never posted). */
bool srv_answered(struct pending *p);

/*
 * Post a command in p to lane and wait for its answer: the lane's answer, -ETIMEDOUT (p stays
 * queued until the lane answers), or -EAGAIN (the lane's mailbox was full: p was not posted,
 * p->unposted says so, and p is free again).
 */
int srv_call(struct sl_chan_srv *s, struct sl_chan_lane *lane, struct pending *p, uint8_t type,
	     uint64_t client, uint32_t qpn, struct sl_chan_qp_conf *qp);

/* Forget QP q and CQ c, and what they count against their client. */
void srv_qp_free(struct sl_chan_srv *s, struct qp *q);
void srv_cq_free(struct sl_chan_srv *s, struct client *cl, struct cq *c);

/*
 * May a client holding held (of anything) take n more under limit (0: no limit)? 0, or -EDQUOT
 * counted in *refusals. The one check of every quota.
 */
int srv_quota_check(uint64_t held, uint64_t n, uint64_t limit, uint64_t *refusals);

/* The fds a request of type must carry. */
unsigned srv_fds_wanted(uint16_t type);

/* Serve q into r; *fd is the fd q carried (taken: set to -1), *rsp_fd one to send with r. */
int srv_serve(struct sl_chan_srv *s, struct client *cl, const struct sl_chan_req *q, int *fd,
	      struct sl_chan_rsp *r, int *rsp_fd);

#endif /* SL_CHAN_SRV_PRIV_H */
