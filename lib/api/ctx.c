/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctx.c - a libsluice context (sluice.h): the shared memory, the control socket and the HELLO
 * that joins them, the allocator's public face, and the request / response call every control
 * operation goes through.
 *
 * The memory is a memfd sealed against shrinking (F_SEAL_SHRINK, and against growing): the
 * daemon maps it for as long as the client lives, and a file that could shrink under that
 * mapping would SIGBUS the daemon. A plain memfd, on tmpfs, never MFD_HUGETLB: HELLO refuses
 * huge pages, whose pool may have none left to refill a hole punched in them (docs/api.md). It
 * is mapped here MAP_SHARED, its fd handed over once in HELLO (SCM_RIGHTS) with the address of
 * our mapping, then closed: the mapping keeps it alive.
 *
 * A request is one struct sl_chan_req, its response one struct sl_chan_rsp, one outstanding at a
 * time (sl_chan_abi.h). A response that is not exactly one well-formed answer to the request just
 * sent (size, magic, version, type, seq, status <= 0), a hang-up or a timeout break the channel:
 * the context can then only be closed, every call returns the error that broke it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "api_priv.h"
#include "sl_fdmsg.h"

#define CTX_CALL_TIMEOUT_S 30 /**< a response takes at most this long, s (QP_DESTROY flushes) */

void
sl_api_link_add(struct sl_api_link *head, struct sl_api_link *l)
{
	l->prev = head;
	l->next = head->next;
	head->next->prev = l;
	head->next = l;
}

void
sl_api_link_del(struct sl_api_link *l)
{
	l->prev->next = l->next;
	l->next->prev = l->prev;
	l->prev = l->next = l;
}

static int
broken(struct sl_ctx *ctx, int err)
{
	ctx->broken = err;
	return err;
}

/* The fd a response carried (SCM_RIGHTS), or -1; -2 if it carried more than one. */
static int
rsp_fd_of(struct msghdr *m)
{
	int fd = -1, got;

	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c != NULL; c = CMSG_NXTHDR(m, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (fd != -1) {
				close(got);
				if (fd >= 0)
					close(fd);
				fd = -2;
			} else {
				fd = got;
			}
		}
	}
	return fd;
}

int
sl_api_call(struct sl_ctx *ctx, struct sl_chan_req *req, int fd, struct sl_chan_rsp *rsp,
	    int *rsp_fd)
{
	struct iovec iov = {.iov_base = rsp, .iov_len = sizeof(*rsp)};
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct msghdr m = {.msg_iov = &iov,
			   .msg_iovlen = 1,
			   .msg_control = ctl.buf,
			   .msg_controllen = sizeof(ctl.buf)};
	bool hung_up;
	int got;
	ssize_t n;

	if (ctx->broken)
		return ctx->broken;
	req->magic = SL_CHAN_MAGIC;
	req->version = SL_CHAN_VERSION;
	req->seq = ++ctx->seq;
	n = sl_fdmsg_send(ctx->sock, req, sizeof(*req), fd, MSG_NOSIGNAL);
	/* A daemon that refused the connection answered (seq 0) and hung up: read why. */
	hung_up = n < 0 && (errno == EPIPE || errno == ECONNRESET);
	if (n < 0 && !hung_up)
		return broken(ctx, -errno);
	if (n >= 0 && (size_t)n != sizeof(*req))
		return broken(ctx, -EPROTO);
	for (int tries = 0;; tries++) {
		m.msg_controllen = sizeof(ctl.buf);
		do
			n = recvmsg(ctx->sock, &m, MSG_CMSG_CLOEXEC | (hung_up ? MSG_DONTWAIT : 0));
		while (n < 0 && errno == EINTR);
		/* The kernel reports a hang-up (once) before what was queued ahead of it. */
		if (n >= 0 || errno != ECONNRESET || tries > 0)
			break;
		hung_up = true;
	}
	if (n < 0 && !hung_up)
		return broken(ctx, errno == EAGAIN || errno == EWOULDBLOCK ? -ETIMEDOUT : -errno);
	if (n <= 0)
		return broken(ctx, -ECONNRESET);
	if ((size_t)n == sizeof(*rsp) && rsp->magic == SL_CHAN_MAGIC &&
	    rsp->version == SL_CHAN_VERSION && rsp->type == SL_CHAN_HELLO && rsp->seq == 0 &&
	    rsp->status < 0)
		return broken(ctx, rsp->status); /* refused at connect (EMFILE, EACCES) */
	if (hung_up)
		return broken(ctx, -ECONNRESET);
	got = rsp_fd_of(&m);
	/* An fd comes with a successful answer that promises one (sl_chan_abi.h), and only then. */
	if ((size_t)n != sizeof(*rsp) || (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
	    rsp->magic != SL_CHAN_MAGIC || rsp->version != SL_CHAN_VERSION ||
	    rsp->type != req->type || rsp->seq != req->seq || rsp->status > 0 || got == -2 ||
	    (got >= 0) != (rsp_fd != NULL && rsp->status == 0)) {
		if (got >= 0)
			close(got);
		return broken(ctx, -EPROTO);
	}
	if (rsp_fd != NULL)
		*rsp_fd = got;
	return rsp->status;
}

static int
ctx_connect(struct sl_ctx *ctx, const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = CTX_CALL_TIMEOUT_S};

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	ctx->sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (ctx->sock < 0 || setsockopt(ctx->sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    connect(ctx->sock, (struct sockaddr *)&sa, sizeof(sa)))
		return -errno;
	return 0;
}

static int
ctx_hello(struct sl_ctx *ctx, int memfd)
{
	struct sl_chan_req req = {.type = SL_CHAN_HELLO};
	struct sl_chan_rsp rsp;
	int rc;

	req.u.hello.mem_bytes = ctx->mem_bytes;
	req.u.hello.base_va = (uint64_t)(uintptr_t)ctx->mem;
	rc = sl_api_call(ctx, &req, memfd, &rsp, NULL);
	if (rc)
		return rc;
	memcpy(ctx->host, rsp.u.hello.host, SL_CHAN_HOST_MAX);
	ctx->host[SL_CHAN_HOST_MAX] = '\0';
	ctx->client = rsp.u.hello.client;
	ctx->cq_rings = rsp.u.hello.cq_rings;
	if (ctx->cq_rings == 0 || ctx->cq_rings > SL_CHAN_CQ_RINGS_MAX)
		return -EPROTO;
	return 0;
}

SL_API_EXPORT struct sl_ctx *
sl_ctx_open(const char *path, const struct sl_ctx_attr *attr)
{
	uint64_t bytes = attr && attr->mem_bytes ? attr->mem_bytes : SL_MEM_DEFAULT_BYTES;
	struct sl_ctx *ctx;
	struct stat st;
	int memfd = -1, rc;

	if (!path)
		path = getenv("SLUICE_SOCKET");
	if (!path || !*path)
		path = SL_SOCKET_DEFAULT;
	if (bytes > SL_CHAN_MEM_MAX) {
		errno = EINVAL;
		return NULL;
	}
	bytes = (bytes + SL_API_HEAP_PAGE_ALIGN - 1) & ~(uint64_t)(SL_API_HEAP_PAGE_ALIGN - 1);
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return NULL;
	ctx->sock = -1;
	ctx->mem = MAP_FAILED;
	ctx->mem_bytes = bytes;
	ctx->mrs.prev = ctx->mrs.next = &ctx->mrs;
	ctx->cqs.prev = ctx->cqs.next = &ctx->cqs;
	ctx->qps.prev = ctx->qps.next = &ctx->qps;
	memfd = memfd_create("sluice", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (memfd < 0 || ftruncate(memfd, (off_t)bytes) ||
	    fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) || fstat(memfd, &st))
		goto fail_errno;
	ctx->mem_dev = st.st_dev;
	ctx->mem_ino = st.st_ino;
	ctx->mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (ctx->mem == MAP_FAILED)
		goto fail_errno;
	ctx->heap = sl_api_heap_create(bytes);
	if (!ctx->heap)
		goto fail_errno;
	rc = ctx_connect(ctx, path);
	if (!rc)
		rc = ctx_hello(ctx, memfd);
	if (rc)
		goto fail;
	close(memfd);
	return ctx;
fail_errno:
	rc = -errno;
fail:
	if (memfd >= 0)
		close(memfd);
	ctx->broken = rc;
	sl_ctx_close(ctx);
	errno = -rc;
	return NULL;
}

SL_API_EXPORT void
sl_ctx_close(struct sl_ctx *ctx)
{
	if (!ctx)
		return;
	sl_api_objects_close(ctx);
	if (ctx->mem != MAP_FAILED)
		sl_api_adopt_close(ctx);
	if (ctx->sock >= 0)
		close(ctx->sock);
	if (ctx->mem != MAP_FAILED)
		munmap(ctx->mem, ctx->mem_bytes);
	sl_api_heap_free(ctx->heap);
	free(ctx);
}

SL_API_EXPORT const char *
sl_ctx_host(const struct sl_ctx *ctx)
{
	return ctx->host;
}

SL_API_EXPORT int
sl_ctx_status(struct sl_ctx *ctx)
{
	struct pollfd p = {.fd = ctx->sock, .events = POLLIN};

	if (ctx->broken)
		return ctx->broken;
	if (poll(&p, 1, 0) <= 0)
		return 0;
	/* Requests are answered within sl_api_call: anything readable now is a hang-up or
	 * something the daemon was not asked for. */
	return broken(ctx, p.revents & (POLLHUP | POLLERR) ? -ECONNRESET : -EPROTO);
}

SL_API_EXPORT int
sl_ctx_fd(const struct sl_ctx *ctx)
{
	return ctx->sock;
}

void *
sl_api_mem_alloc(struct sl_ctx *ctx, uint64_t bytes)
{
	uint64_t off = sl_api_heap_alloc(ctx->heap, bytes);

	if (off == SL_API_HEAP_NONE) {
		errno = ENOMEM;
		return NULL;
	}
	memset(ctx->mem + off, 0, bytes);
	return ctx->mem + off;
}

SL_API_EXPORT void *
sl_mem_alloc(struct sl_ctx *ctx, size_t bytes)
{
	if (!ctx || !bytes) {
		errno = EINVAL;
		return NULL;
	}
	return sl_api_mem_alloc(ctx, bytes);
}

SL_API_EXPORT void
sl_mem_free(struct sl_ctx *ctx, void *p)
{
	/* A pointer that is not the start of a block in use changes nothing. */
	if (ctx && p && (uint8_t *)p >= ctx->mem && (uint8_t *)p < ctx->mem + ctx->mem_bytes)
		sl_api_heap_release(ctx->heap, sl_api_off(ctx, p));
}
