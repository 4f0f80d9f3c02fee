/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fake_sluice.c - sluice.h in one process, for test_perf_run: both sides of a sluice-perf run
 * are threads, their "daemon" is this file. Every call takes one lock. Work requests execute
 * when posted (WRITE and READ copy at once, with the rkey, range and access checked; a SEND
 * waits in its QP's queue until the peer has a RECV posted), completions go to the CQs as
 * verbs would put them (only signaled requests, every RECV), and a request holds its send
 * queue slot until its completion is polled, so sq_depth limits what is outstanding as on the
 * real daemon. The out-of-band exchange is real TCP on the loopback, as libsluice's is.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fake_sluice.h"
#include "sluice.h"

#define FAKE_MAX 64

struct sl_ctx {
	char host[32];
};

struct sl_mr {
	uint8_t *addr;
	size_t len;
	unsigned access;
	uint32_t key;
};

struct sl_cq {
	struct sl_wc *wc;
	uint32_t depth, head, tail; /**< head: next to poll; tail: next to fill */
	int event_fd;               /**< written when a completion comes to an armed CQ */
	bool armed;
};

struct sl_qp {
	uint32_t qpn, peer;
	struct sl_qp_attr attr;
	uint32_t sq_used;      /**< requests whose completion was not polled yet */
	struct sl_recv_wr *rq; /**< posted RECVs, a ring */
	uint32_t rq_head, rq_tail;
	struct sl_wr *pend; /**< SENDs waiting for a RECV, a ring */
	uint32_t pend_head, pend_tail;
	uint32_t unsignaled; /**< requests since the last signaled one */
};

struct sl_oob {
	int fd;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct sl_mr *mrs[FAKE_MAX];
static struct sl_qp *qps[FAKE_MAX];
unsigned fake_sluice_flushes;
unsigned fake_sluice_events;
uint64_t fake_sluice_rate_bps;
char fake_sluice_program[SL_NAME_MAX];

static void *
zalloc(size_t n)
{
	return calloc(1, n);
}

struct sl_ctx *
sl_ctx_open(const char *path, const struct sl_ctx_attr *attr)
{
	struct sl_ctx *c = zalloc(sizeof(*c));

	(void)path;
	(void)attr;
	if (c != NULL)
		strcpy(c->host, "fakehost");
	return c;
}

void
sl_ctx_close(struct sl_ctx *ctx)
{
	free(ctx);
}

const char *
sl_ctx_host(const struct sl_ctx *ctx)
{
	return ctx->host;
}

void *
sl_mem_alloc(struct sl_ctx *ctx, size_t bytes)
{
	void *p = NULL;

	(void)ctx;
	if (posix_memalign(&p, 4096, bytes) != 0)
		return NULL;
	memset(p, 0, bytes);
	return p;
}

void
sl_mem_free(struct sl_ctx *ctx, void *p)
{
	(void)ctx;
	free(p);
}

struct sl_mr *
sl_mr_reg(struct sl_ctx *ctx, void *addr, size_t len, unsigned access)
{
	struct sl_mr *mr = NULL;

	(void)ctx;
	pthread_mutex_lock(&lock);
	for (uint32_t k = 1; k < FAKE_MAX; k++)
		if (mrs[k] == NULL) {
			mr = zalloc(sizeof(*mr));
			if (mr != NULL)
				*mr = (struct sl_mr){addr, len, access, k};
			mrs[k] = mr;
			break;
		}
	pthread_mutex_unlock(&lock);
	if (mr == NULL)
		errno = ENOSPC;
	return mr;
}

int
sl_mr_dereg(struct sl_mr *mr)
{
	pthread_mutex_lock(&lock);
	mrs[mr->key] = NULL;
	pthread_mutex_unlock(&lock);
	free(mr);
	return 0;
}

uint32_t
sl_mr_lkey(const struct sl_mr *mr)
{
	return mr->key;
}

uint32_t
sl_mr_rkey(const struct sl_mr *mr)
{
	return mr->key;
}

void *
sl_mr_addr(const struct sl_mr *mr)
{
	return mr->addr;
}

size_t
sl_mr_len(const struct sl_mr *mr)
{
	return mr->len;
}

const char *
sl_wc_status_str(enum sl_wc_status s)
{
	return s == SL_WC_SUCCESS ? "success" : "fake error";
}

struct sl_cq *
sl_cq_create(struct sl_ctx *ctx, uint32_t depth)
{
	struct sl_cq *cq = zalloc(sizeof(*cq));

	(void)ctx;
	if (cq == NULL)
		return NULL;
	cq->depth = depth;
	cq->wc = calloc(depth, sizeof(*cq->wc));
	cq->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	return cq;
}

int
sl_cq_destroy(struct sl_cq *cq)
{
	close(cq->event_fd);
	free(cq->wc);
	free(cq);
	return 0;
}

int
sl_cq_event_fd(const struct sl_cq *cq)
{
	return cq->event_fd;
}

int
sl_cq_arm(struct sl_cq *cq)
{
	__atomic_store_n(&cq->armed, true, __ATOMIC_SEQ_CST);
	return 0;
}

/* Add a completion; a full CQ is the application's bug, as with verbs: abort the test. */
static void
cq_put(struct sl_cq *cq, const struct sl_wc *wc)
{
	if (cq->tail - cq->head >= cq->depth)
		abort();
	cq->wc[cq->tail++ % cq->depth] = *wc;
	if (__atomic_exchange_n(&cq->armed, false, __ATOMIC_SEQ_CST)) {
		uint64_t one = 1;

		if (write(cq->event_fd, &one, sizeof(one)) != sizeof(one))
			abort();
		__atomic_add_fetch(&fake_sluice_events, 1, __ATOMIC_RELAXED);
	}
}

static struct sl_mr *
mr_check(uint32_t key, const void *addr, uint64_t len, unsigned access)
{
	struct sl_mr *mr = key < FAKE_MAX ? mrs[key] : NULL;

	if (mr == NULL || (mr->access & access) != access || (const uint8_t *)addr < mr->addr ||
	    (const uint8_t *)addr + len > mr->addr + mr->len)
		return NULL;
	return mr;
}

static void
complete(struct sl_qp *qp, const struct sl_wr *wr, uint8_t status, uint8_t opcode)
{
	struct sl_wc wc = {.wr_id = wr->wr_id,
			   .status = status,
			   .opcode = opcode,
			   .qpn = qp->qpn,
			   .byte_len = wr->len};

	if ((wr->flags & SL_WR_F_SIGNALED) || status != SL_WC_SUCCESS)
		cq_put(qp->attr.send_cq, &wc);
	else
		qp->sq_used--; /* nobody polls it: its slot frees now */
}

/* Deliver qp's waiting SENDs (and WRITEs with immediate, placed already) into its peer's
 * RECVs. */
static void
progress(struct sl_qp *qp)
{
	struct sl_qp *peer = qps[qp->peer];

	while (peer != NULL && qp->pend_head != qp->pend_tail && peer->rq_head != peer->rq_tail) {
		struct sl_wr *wr = &qp->pend[qp->pend_head++ % qp->attr.sq_depth];
		struct sl_recv_wr *rw = &peer->rq[peer->rq_head++ % peer->attr.rq_depth];
		bool imm = wr->opcode == SL_WR_WRITE_WITH_IMM;
		struct sl_wc wc = {.wr_id = rw->wr_id,
				   .opcode = imm ? SL_WC_RECV_RDMA_IMM : SL_WC_RECV,
				   .flags = imm ? SL_WC_F_IMM : 0,
				   .qpn = peer->qpn,
				   .byte_len = wr->len,
				   .imm = wr->imm};

		if (imm) {
			/* the bytes went to raddr when it was posted */
		} else if (wr->len > rw->len) {
			wc.status = SL_WC_LOC_LEN_ERR;
		} else {
			memcpy(rw->addr, wr->addr, wr->len);
		}
		cq_put(peer->attr.recv_cq, &wc);
		complete(qp, wr, wc.status == SL_WC_SUCCESS ? SL_WC_SUCCESS : SL_WC_REM_OP_ERR,
			 imm ? SL_WC_WRITE : SL_WC_SEND);
	}
}

int
sl_cq_poll(struct sl_cq *cq, struct sl_wc *wc, int max)
{
	int n = 0;

	pthread_mutex_lock(&lock);
	while (n < max && cq->head != cq->tail) {
		wc[n] = cq->wc[cq->head++ % cq->depth];
		struct sl_qp *qp = qps[wc[n].qpn];

		/* a send queue slot frees when its request's completion is polled; a RECV's and
		 * a WRITE with immediate's arrival hold none */
		if (qp != NULL && wc[n].opcode != SL_WC_RECV && wc[n].opcode != SL_WC_RECV_RDMA_IMM)
			qp->sq_used--;
		n++;
	}
	pthread_mutex_unlock(&lock);
	return n;
}

struct sl_qp *
sl_qp_create(struct sl_ctx *ctx, const struct sl_qp_attr *attr)
{
	struct sl_qp *qp = NULL;

	(void)ctx;
	pthread_mutex_lock(&lock);
	for (uint32_t n = 1; n < FAKE_MAX; n++)
		if (qps[n] == NULL) {
			qp = zalloc(sizeof(*qp));
			if (qp == NULL)
				break;
			qp->qpn = n;
			qp->attr = *attr;
			fake_sluice_rate_bps = attr->rate_limit_bps;
			memcpy(fake_sluice_program, attr->program, SL_NAME_MAX);
			if (qp->attr.sq_depth == 0)
				qp->attr.sq_depth = 128;
			if (qp->attr.rq_depth == 0)
				qp->attr.rq_depth = 128;
			qp->rq = calloc(qp->attr.rq_depth, sizeof(*qp->rq));
			qp->pend = calloc(qp->attr.sq_depth, sizeof(*qp->pend));
			qps[n] = qp;
			break;
		}
	pthread_mutex_unlock(&lock);
	if (qp == NULL)
		errno = EMFILE;
	return qp;
}

int
sl_qp_destroy(struct sl_qp *qp)
{
	pthread_mutex_lock(&lock);
	qps[qp->qpn] = NULL;
	fake_sluice_flushes += qp->pend_tail - qp->pend_head;
	pthread_mutex_unlock(&lock);
	free(qp->rq);
	free(qp->pend);
	free(qp);
	return 0;
}

uint32_t
sl_qp_num(const struct sl_qp *qp)
{
	return qp->qpn;
}

void
sl_qp_info(const struct sl_qp *qp, const struct sl_mr *mr, struct sl_qp_info *info)
{
	memset(info, 0, sizeof(*info));
	info->qpn = qp->qpn;
	if (mr != NULL) {
		info->rkey = mr->key;
		info->addr = (uint64_t)(uintptr_t)mr->addr;
		info->len = mr->len;
	}
	strcpy(info->host, "fakehost");
}

int
sl_qp_connect(struct sl_qp *qp, const struct sl_qp_info *peer)
{
	if (peer->qpn == 0 || peer->qpn >= FAKE_MAX)
		return -EINVAL;
	qp->peer = peer->qpn;
	return 0;
}

int
sl_post_send(struct sl_qp *qp, const struct sl_wr *wr, int n)
{
	int i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < n; i++) {
		const struct sl_wr *w = &wr[i];
		void *raddr = (void *)(uintptr_t)w->raddr;

		if (qp->sq_used == qp->attr.sq_depth)
			break;
		if (w->len > qp->attr.max_msg_bytes) {
			if (i == 0)
				i = -EINVAL;
			break;
		}
		qp->sq_used++;
		switch (w->opcode) {
		case SL_WR_WRITE:
		case SL_WR_WRITE_WITH_IMM:
			if (mr_check(w->rkey, raddr, w->len, SL_ACCESS_REMOTE_WRITE) == NULL) {
				complete(qp, w, SL_WC_REM_ACCESS_ERR, SL_WC_WRITE);
				break;
			}
			memcpy(raddr, w->addr, w->len);
			if (w->opcode == SL_WR_WRITE) {
				complete(qp, w, SL_WC_SUCCESS, SL_WC_WRITE);
				break;
			}
			qp->pend[qp->pend_tail++ % qp->attr.sq_depth] = *w; /* waits for a RECV */
			progress(qp);
			break;
		case SL_WR_READ:
			if (mr_check(w->rkey, raddr, w->len, SL_ACCESS_REMOTE_READ) == NULL ||
			    mr_check(w->lkey, w->addr, w->len, SL_ACCESS_LOCAL_WRITE) == NULL) {
				complete(qp, w, SL_WC_REM_ACCESS_ERR, SL_WC_READ);
				break;
			}
			memcpy(w->addr, raddr, w->len);
			complete(qp, w, SL_WC_SUCCESS, SL_WC_READ);
			break;
		case SL_WR_SEND:
			qp->pend[qp->pend_tail++ % qp->attr.sq_depth] = *w;
			progress(qp);
			break;
		default:
			complete(qp, w, SL_WC_GENERAL_ERR, SL_WC_SEND);
		}
	}
	pthread_mutex_unlock(&lock);
	return i == 0 && n > 0 ? -ENOBUFS : i;
}

int
sl_post_recv(struct sl_qp *qp, const struct sl_recv_wr *wr, int n)
{
	int i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < n && qp->rq_tail - qp->rq_head < qp->attr.rq_depth; i++)
		qp->rq[qp->rq_tail++ % qp->attr.rq_depth] = wr[i];
	if (qps[qp->peer] != NULL)
		progress(qps[qp->peer]);
	pthread_mutex_unlock(&lock);
	return i == 0 && n > 0 ? -ENOBUFS : i;
}

/* --- out of band: TCP on the loopback ----------------------------------------------------- */

static struct sl_oob *
oob_of(int fd)
{
	struct sl_oob *o = zalloc(sizeof(*o));
	int one = 1;

	if (o == NULL) {
		close(fd);
		return NULL;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	o->fd = fd;
	return o;
}

struct sl_oob *
sl_oob_accept(uint16_t port, int timeout_ms)
{
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int one = 1, lfd = socket(AF_INET, SOCK_STREAM, 0), fd;

	(void)timeout_ms;
	if (lfd < 0)
		return NULL;
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(lfd, 1) != 0) {
		close(lfd);
		return NULL;
	}
	fd = accept(lfd, NULL, NULL);
	close(lfd);
	return fd < 0 ? NULL : oob_of(fd);
}

struct sl_oob *
sl_oob_connect(const char *host, uint16_t port, int timeout_ms)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};

	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
		errno = EINVAL;
		return NULL;
	}
	for (int waited_ms = 0; waited_ms < timeout_ms; waited_ms += 10) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		if (fd < 0)
			return NULL;
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			return oob_of(fd);
		close(fd);
		nanosleep(&(struct timespec){0, 10000000}, NULL);
	}
	errno = ETIMEDOUT;
	return NULL;
}

static int
io_all(int fd, void *p, size_t n, bool out)
{
	uint8_t *b = p;

	while (n > 0) {
		ssize_t k = out ? write(fd, b, n) : read(fd, b, n);

		if (k <= 0)
			return k == 0 ? -ECONNRESET : -errno;
		b += k;
		n -= (size_t)k;
	}
	return 0;
}

int
sl_oob_swap(struct sl_oob *o, const void *mine, void *theirs, size_t n)
{
	int rc = io_all(o->fd, (void *)(uintptr_t)mine, n, true);

	return rc != 0 ? rc : io_all(o->fd, theirs, n, false);
}

int
sl_oob_exchange(struct sl_oob *o, const struct sl_qp_info *mine, struct sl_qp_info *theirs,
		unsigned n)
{
	return sl_oob_swap(o, mine, theirs, n * sizeof(*mine));
}

int
sl_oob_sync(struct sl_oob *o)
{
	uint8_t a = 1, b;

	return sl_oob_swap(o, &a, &b, 1);
}

void
sl_oob_close(struct sl_oob *o)
{
	close(o->fd);
	free(o);
}
