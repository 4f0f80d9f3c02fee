/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * eq.c - the event queue: a ring of events with an eventfd that is readable while the ring holds
 * any. An RDM endpoint reports nothing here (its connections are made under the covers, on
 * first send: peer.c), so the events are those the application writes itself (fi_eq_write);
 * applications open an EQ on every fabric (fi_pingpong does), and a real one costs little.
 * Errors: the provider raises none, so fi_eq_readerr has none to give.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "fab_priv.h"

#define EQ_DATA_BYTES 64u /**< largest event fi_eq_write takes, bytes */

struct eq_event {
	uint32_t event;
	size_t len;
	uint8_t data[EQ_DATA_BYTES];
};

struct sl_fab_eq {
	struct fid_eq fid;
	struct eq_event *ring;
	size_t cap;        /**< events, a power of two */
	size_t head, tail; /**< free-running */
	int efd;           /**< eventfd: readable while events are queued */
};

static ssize_t
eq_read(struct fid_eq *fid, uint32_t *event, void *buf, size_t len, uint64_t flags)
{
	struct sl_fab_eq *eq = container_of(fid, struct sl_fab_eq, fid);
	const struct eq_event *e;
	uint64_t v;

	if (flags & ~(uint64_t)FI_PEEK)
		return -FI_EINVAL;
	if (eq->head == eq->tail)
		return -FI_EAGAIN;
	e = &eq->ring[eq->head & (eq->cap - 1)];
	if (len < e->len)
		return -FI_ETOOSMALL;
	*event = e->event;
	memcpy(buf, e->data, e->len);
	if (!(flags & FI_PEEK) && ++eq->head == eq->tail &&
	    read(eq->efd, &v, sizeof(v)) != sizeof(v))
		return -FI_EOTHER;
	return (ssize_t)e->len;
}

static ssize_t
eq_readerr(struct fid_eq *fid, struct fi_eq_err_entry *buf, uint64_t flags)
{
	(void)fid, (void)buf, (void)flags;
	return -FI_EAGAIN;
}

static ssize_t
eq_write(struct fid_eq *fid, uint32_t event, const void *buf, size_t len, uint64_t flags)
{
	struct sl_fab_eq *eq = container_of(fid, struct sl_fab_eq, fid);
	struct eq_event *e;
	uint64_t one = 1;

	if (flags != 0 || len > EQ_DATA_BYTES)
		return -FI_EINVAL;
	if (eq->tail - eq->head == eq->cap)
		return -FI_EAGAIN;
	e = &eq->ring[eq->tail & (eq->cap - 1)];
	e->event = event;
	e->len = len;
	memcpy(e->data, buf, len);
	if (eq->tail++ == eq->head && write(eq->efd, &one, sizeof(one)) != sizeof(one))
		return -FI_EOTHER;
	return (ssize_t)len;
}

static ssize_t
eq_sread(struct fid_eq *fid, uint32_t *event, void *buf, size_t len, int timeout, uint64_t flags)
{
	struct sl_fab_eq *eq = container_of(fid, struct sl_fab_eq, fid);
	struct pollfd pfd = {.fd = eq->efd, .events = POLLIN};
	int r;

	if (eq->head == eq->tail) {
		r = poll(&pfd, 1, timeout);
		if (r < 0)
			return sl_fab_errno(-errno);
		if (r == 0)
			return -FI_EAGAIN;
	}
	return eq_read(fid, event, buf, len, flags);
}

static const char *
eq_strerror(struct fid_eq *fid, int prov_errno, const void *err_data, char *buf, size_t len)
{
	(void)fid, (void)err_data;
	return sl_fab_strerror(fi_strerror(prov_errno), buf, len);
}

static struct fi_ops_eq eq_ops = {
	.size = sizeof(struct fi_ops_eq),
	.read = eq_read,
	.readerr = eq_readerr,
	.write = eq_write,
	.sread = eq_sread,
	.strerror = eq_strerror,
};

static int
eq_control(struct fid *fid, int command, void *arg)
{
	struct sl_fab_eq *eq = container_of(fid, struct sl_fab_eq, fid.fid);

	return sl_fab_wait_control(eq->efd, command, arg);
}

static int
eq_close(struct fid *fid)
{
	struct sl_fab_eq *eq = container_of(fid, struct sl_fab_eq, fid.fid);

	close(eq->efd);
	free(eq->ring);
	free(eq);
	return 0;
}

static struct fi_ops eq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = eq_close,
	.bind = sl_fab_no_bind,
	.control = eq_control,
	.ops_open = sl_fab_no_ops_open,
};

int
sl_fab_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr, struct fid_eq **out,
	       void *context)
{
	struct sl_fab_eq *eq;
	size_t cap = 64;

	(void)fabric;
	if (attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC &&
	    attr->wait_obj != FI_WAIT_FD)
		return -FI_ENOSYS;
	if (attr->flags != 0 || attr->size > (1u << 16))
		return -FI_EINVAL;
	while (cap < attr->size)
		cap *= 2;
	eq = calloc(1, sizeof(*eq));
	if (eq == NULL)
		return -FI_ENOMEM;
	eq->cap = cap;
	eq->ring = calloc(cap, sizeof(*eq->ring));
	eq->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (eq->ring == NULL || eq->efd < 0) {
		if (eq->efd >= 0)
			close(eq->efd);
		free(eq->ring);
		free(eq);
		return -FI_ENOMEM;
	}
	eq->fid.fid.fclass = FI_CLASS_EQ;
	eq->fid.fid.context = context;
	eq->fid.fid.ops = &eq_fi_ops;
	eq->fid.ops = &eq_ops;
	*out = &eq->fid;
	return 0;
}
