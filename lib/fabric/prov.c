/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prov.c - the provider's entry: fi_prov_ini (the one symbol libsluice-fi.so exports), the
 * FI_SLUICE_* settings, and the fabric object.
 *
 * libfabric loads lib<name>-fi.so from its provider directory or FI_PROVIDER_PATH and calls
 * fi_prov_ini, which returns the provider table (name, getinfo, fabric, cleanup). The settings
 * are defined here with fi_param_define so that `fi_info -e` lists them with their help, and read
 * once: libfabric reads them from the environment as FI_SLUICE_<NAME>.
 *
 * The fabric is a plain handle: it opens domains (each one libsluice context, domain.c), event
 * queues (eq.c) and passive endpoints (cm.c). Everything that costs anything is opened below it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fab_priv.h"

struct sl_fab_params sl_fab_params = {
	.max_msg_bytes = 1u << 20,
	.tx_slots = 16,
	.rx_slots = 4,
	.mem_mb = 64,
	.connect_ms = 10000,
	.idle_wait_us = 1000,
};

int
sl_fab_errno(int neg_errno)
{
	/* libfabric's FI_E* codes below 256 are errno's. */
	return neg_errno < 0 ? neg_errno : -FI_EOTHER;
}

const char *
sl_fab_strerror(const char *s, char *buf, size_t len)
{
	if (buf == NULL || len == 0)
		return s;
	strncpy(buf, s, len - 1);
	buf[len - 1] = '\0';
	return buf;
}

int
sl_fab_wait_control(int fd, int command, void *arg)
{
	switch (command) {
	case FI_GETWAIT:
		if (fd < 0)
			return -FI_ENODATA;
		*(int *)arg = fd;
		return 0;
	case FI_GETWAITOBJ:
		*(enum fi_wait_obj *)arg = fd < 0 ? FI_WAIT_NONE : FI_WAIT_FD;
		return 0;
	default:
		return -FI_ENOSYS;
	}
}

static int
fabric_close(struct fid *fid)
{
	free(container_of(fid, struct sl_fab_fabric, fid.fid));
	return 0;
}

static struct fi_ops fabric_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = fabric_close,
	.bind = sl_fab_no_bind,
	.control = sl_fab_no_control,
	.ops_open = sl_fab_no_ops_open,
};

static int
no_wait_open(struct fid_fabric *fabric, struct fi_wait_attr *attr, struct fid_wait **waitset)
{
	(void)fabric, (void)attr, (void)waitset;
	return -FI_ENOSYS; /* wait sets are not provided: each CQ has its own fd */
}

static int
fabric_trywait(struct fid_fabric *fabric, struct fid **fids, int count)
{
	(void)fabric;
	/* A CQ may be waited on once progress left nothing in it and its endpoints' libsluice
	 * CQs are armed (a completion that raced the arm makes the fd readable). */
	for (int i = 0; i < count; i++) {
		struct sl_fab_cq *cq;

		if (fids[i]->fclass != FI_CLASS_CQ)
			return -FI_EINVAL;
		cq = container_of(fids[i], struct sl_fab_cq, fid.fid);
		for (unsigned j = 0; j < cq->n_eps; j++) {
			sl_fab_progress(cq->eps[j]);
			if (sl_fab_ep_arm(cq->eps[j]) != 0)
				return -FI_EAGAIN;
		}
		if (cq->head != cq->tail || cq->err_head != cq->err_tail)
			return -FI_EAGAIN;
	}
	return 0;
}

static struct fi_ops_fabric fabric_ops = {
	.size = sizeof(struct fi_ops_fabric),
	.domain = sl_fab_domain_open,
	.passive_ep = sl_fab_pep_open,
	.eq_open = sl_fab_eq_open,
	.wait_open = no_wait_open,
	.trywait = fabric_trywait,
};

int
sl_fab_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context)
{
	struct sl_fab_fabric *f;

	if (attr->name != NULL && strcmp(attr->name, SL_FAB_NAME) != 0)
		return -FI_EINVAL;
	f = calloc(1, sizeof(*f));
	if (f == NULL)
		return -FI_ENOMEM;
	f->fid.fid.fclass = FI_CLASS_FABRIC;
	f->fid.fid.context = context;
	f->fid.fid.ops = &fabric_fi_ops;
	f->fid.ops = &fabric_ops;
	*fabric = &f->fid;
	return 0;
}

static void
prov_cleanup(void)
{
}

struct fi_provider sl_fab_prov = {
	.version = SL_FAB_VERSION,
	.fi_version = SL_FAB_FI_VERSION,
	.name = SL_FAB_NAME,
	.getinfo = sl_fab_getinfo,
	.fabric = sl_fab_fabric_open,
	.cleanup = prov_cleanup,
};

/* A setting: FI_SLUICE_<name>, read into a size_t or a string of sl_fab_params. */
struct param {
	const char *name;
	size_t *size; /**< FI_PARAM_SIZE_T, or */
	char **str;   /**< FI_PARAM_STRING */
	const char *help;
};

FI_EXT_INI
{
	struct sl_fab_params *p = &sl_fab_params;
	const struct param params[] = {
		{"socket", NULL, &p->socket,
		 "sluiced's application socket (default: $SLUICE_SOCKET, else " SL_SOCKET_DEFAULT
		 ")"},
		{"addr", NULL, &p->addr,
		 "IPv4 address an endpoint listens on for connections and names itself by "
		 "(default: the first address of an interface that is up and not loopback)"},
		{"max_msg", &p->max_msg_bytes, NULL,
		 "largest message, bytes: each bounce buffer is this long"},
		{"tx_slots", &p->tx_slots, NULL,
		 "send bounce buffers per endpoint (its transmit queue size)"},
		{"rx_slots", &p->rx_slots, NULL,
		 "receive bounce buffers posted per peer queue pair"},
		{"mem_mb", &p->mem_mb, NULL,
		 "shared memory of a domain's libsluice context, MiB: bounce buffers come from it"},
		{"program", NULL, &p->program,
		 "transport program of the queue pairs, as sluiced names it (dcqcn, reno, ...; "
		 "default: the daemon's)"},
		{"rate_mbps", &p->rate_mbps, NULL,
		 "rate limit of each queue pair, Mbit/s on the wire (0: none)"},
		{"receiver", NULL, &p->receiver,
		 "receiver of the queue pairs: melo (selective retransmit) or gbn (go-back-N)"},
		{"connect_ms", &p->connect_ms, NULL,
		 "time a connection handshake with a peer may take, ms"},
		{"idle_wait_us", &p->idle_wait_us, NULL,
		 "an fi_cq_read that finds nothing while sends or receives are outstanding sleeps "
		 "on the daemon's completion event this long at most, us, leaving the core to "
		 "sluiced (0: it returns at once, and an application polling on a core the daemon "
		 "polls on takes turns with it by the scheduler's time slice)"},
	};

	for (size_t i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
		const struct param *q = &params[i];

		if (q->size != NULL) {
			fi_param_define(&sl_fab_prov, q->name, FI_PARAM_SIZE_T, "%s (default: %zu)",
					q->help, *q->size);
			fi_param_get_size_t(&sl_fab_prov, q->name, q->size);
		} else {
			fi_param_define(&sl_fab_prov, q->name, FI_PARAM_STRING, "%s", q->help);
			fi_param_get_str(&sl_fab_prov, q->name, q->str);
		}
	}
	return &sl_fab_prov;
}
