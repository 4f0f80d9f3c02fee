/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * api_priv.h - what libsluice's files share (ctx.c, verbs.c, adopt.c): the objects behind
 * sluice.h's opaque types and the control channel's call. Private to lib/api.
 */
#ifndef API_API_PRIV_H
#define API_API_PRIV_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "heap.h"
#include "sl_chan_abi.h"
#include "sluice.h"

/* The functions of sluice.h: the only symbols libsluice.so exports (-fvisibility=hidden). */
#define SL_API_EXPORT __attribute__((visibility("default")))

/* Membership in one of a context's object lists (doubly linked, for sl_ctx_close). */
struct sl_api_link {
	struct sl_api_link *prev, *next;
};

struct sl_ctx {
	int sock;     /**< the control socket (SOCK_SEQPACKET) */
	uint8_t *mem; /**< the shared memory, our mapping */
	uint64_t mem_bytes;
	struct sl_api_heap *heap; /**< over [mem, mem + mem_bytes) */
	uint32_t seq;             /**< of the last request */
	int broken;               /**< 0, or -errno: the channel failed, every call returns it */
	uint64_t client;          /**< the daemon's number for us */
	uint32_t cq_rings;        /**< rings of every CQ (HELLO) */
	char host[SL_CHAN_HOST_MAX + 1];
	struct sl_api_link mrs, cqs, qps; /**< list heads: what sl_ctx_close destroys */
	dev_t mem_dev;                    /**< the memfd's device and inode, to know its pages */
	uint64_t mem_ino;                 /*   in /proc/self/maps (adopt.c) */
	struct sl_api_adopt *adopted;     /**< the application's pages in the file (adopt.c) */
};

/* Pages of the application mapped from the file (adopt.c): [lo, lo + bytes) at off. */
struct sl_api_adopt {
	struct sl_ctx *ctx;
	struct sl_api_adopt *next;
	uintptr_t lo;   /**< the application's address, page-aligned */
	uint64_t bytes; /**< whole pages */
	uint64_t off;   /**< in the file, bytes */
	unsigned refs;  /**< sl_mem_adopt calls not undone yet */
	unsigned mrs;   /**< regions registered in it */
};

struct sl_mr {
	struct sl_api_link link; /**< first: the list's entry is the object */
	struct sl_ctx *ctx;
	struct sl_api_adopt *adopt; /**< the adopted pages it lies in, NULL: sl_mem_alloc memory */
	uint32_t lkey, rkey;
	void *addr;
	size_t len;
};

struct sl_cq {
	struct sl_api_link link;
	struct sl_ctx *ctx;
	struct sl_chan_ring *ring; /**< the first of its rings, in the shared memory; we consume */
	uint32_t rings;            /**< rings, one a lane (sl_chan_abi.h) */
	uint32_t depth;            /**< entries of each ring, power of two */
	uint32_t next;             /**< the ring the next poll starts at */
	uint32_t cons[SL_CHAN_CQ_RINGS_MAX]; /**< our copies of the consumer indexes */
	uint32_t handle;                     /**< the daemon's, from CQ_CREATE */
	int event_fd;
	struct sl_qp **qps; /**< the QPs completing here (to mark them failed) */
	uint32_t n_qps, cap_qps;
};

struct sl_qp {
	struct sl_api_link link;
	struct sl_ctx *ctx;
	struct sl_cq *send_cq, *recv_cq;
	struct sl_chan_ring *sq, *rq; /**< in the shared memory; we produce */
	uint32_t sq_depth, rq_depth;  /**< entries, powers of two */
	uint32_t sq_prod, rq_prod;    /**< our copies of the producer indexes */
	uint32_t qpn;
	uint32_t psn;   /**< its first packet's PSN, the daemon's draw */
	uint32_t token; /**< its connection token, the daemon's draw */
	uint32_t max_msg_bytes;
	uint32_t seg_bytes;      /**< the daemon's payload bytes per packet */
	uint32_t pkt_wire_bytes; /**< wire bytes charged per packet beyond its segment */
	bool connected;
	atomic_bool failed; /**< a completion with an error was polled (any thread) */
};

/*
 * One request and its response on ctx's control socket, passing fd (-1: none) with it; the fd
 * a successful response carries goes to *rsp_fd (NULL: the request expects none; a response
 * that carries one where none is due, or none where one is, is a protocol error). req's
 * magic, version and seq are filled here. Returns the daemon's status (0 or -errno), or -errno
 * if the channel failed (then ctx->broken holds it and every later call returns it).
 */
int sl_api_call(struct sl_ctx *ctx, struct sl_chan_req *req, int fd, struct sl_chan_rsp *rsp,
		int *rsp_fd);

/* A zeroed block of the shared memory (the rings come from here too); NULL if none. */
void *sl_api_mem_alloc(struct sl_ctx *ctx, uint64_t bytes);

/* The offset of p in ctx's memory. */
static inline uint64_t
sl_api_off(const struct sl_ctx *ctx, const void *p)
{
	return (uint64_t)((const uint8_t *)p - ctx->mem);
}

/* sl_ctx_close's first step: destroy every QP, CQ and MR of ctx (verbs.c), whatever the daemon
 * answers. */
void sl_api_objects_close(struct sl_ctx *ctx);

/* The adoption whose pages hold [addr, addr + len), or NULL (adopt.c). */
struct sl_api_adopt *sl_api_adopt_find(const struct sl_ctx *ctx, const void *addr, size_t len);
/* sl_ctx_close's: every adopted range given back to the application as private pages. */
void sl_api_adopt_close(struct sl_ctx *ctx);

void sl_api_link_add(struct sl_api_link *head, struct sl_api_link *l);
void sl_api_link_del(struct sl_api_link *l);

#endif /* API_API_PRIV_H */
