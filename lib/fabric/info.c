/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * info.c - fi_getinfo's answer: what the provider offers, held against the application's hints.
 *
 * The rule is libfabric's own: whatever the hints ask for that the provider does not do is a
 * refusal (-FI_ENODATA, the reason logged at FI_LOG_LEVEL=info), never an answer that
 * pretends. What is offered (one fi_info per endpoint type the hints allow, RDM first):
 *   - FI_EP_RDM, caps FI_MSG | FI_SEND | FI_RECV | FI_REMOTE_COMM, no mode bits needed, and
 *     FI_SOURCE (a receive's fi_addr_t, found in the AV by the sending peer's name);
 *   - FI_EP_MSG (cm.c: passive endpoints, fi_connect / fi_accept through the EQ), the same
 *     caps but FI_SOURCE (a connection has one peer) and every other answer the same;
 *   - sends from one endpoint to another arrive in order (FI_ORDER_SAS: one QP per pair);
 *   - FI_PROGRESS_MANUAL: the application's calls into the provider move the data;
 *   - FI_THREAD_DOMAIN: the application serializes its calls on a domain;
 *   - FI_RM_DISABLED: a peer's messages that find no posted receive wait in bounce buffers and
 *     in sluiced's stash, which are bounded; beyond them the sender's daemon resends after a
 *     backoff (receiver not ready), and the QP fails if there is no room for its timeout;
 *   - FI_RMA (fi_write, fi_writedata, fi_read, rma.c) with FI_READ, FI_WRITE, FI_REMOTE_READ,
 *     FI_REMOTE_WRITE, when the application takes mr_mode FI_MR_VIRT_ADDR | FI_MR_PROV_KEY
 *     (domain.c: a target's registration adopts its pages, the key is libsluice's rkey, the
 *     remote address the target's own); one iov and one RMA iov of at most FI_SLUICE_MAX_MSG;
 *     an application that asks nothing of RMA gets caps without it and mr_mode 0: it registers
 *     nothing, as sends and receives bounce through the provider's registered memory;
 *   - names are FI_ADDR_STR, "fi_sluice://A.B.C.D:PORT" (fab_addr.h);
 *   - 4 bytes of remote CQ data (libsluice's immediate).
 * The daemon is not asked: getinfo only checks that its socket exists, and fi_domain reports
 * one that does not answer.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fab_priv.h"

#define RMA_CAPS (FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE)
#define CAPS (FI_MSG | FI_SEND | FI_RECV | FI_REMOTE_COMM | FI_SOURCE | RMA_CAPS)
#define TX_CAPS (FI_MSG | FI_SEND | FI_RMA | FI_READ | FI_WRITE)
#define RX_CAPS (FI_MSG | FI_RECV | FI_SOURCE | FI_RMA | FI_REMOTE_READ | FI_REMOTE_WRITE)
/* What FI_RMA asks of the application: keys the provider chose, remote virtual addresses. */
#define RMA_MR_MODE (FI_MR_VIRT_ADDR | FI_MR_PROV_KEY)
/* A type's caps: a MSG endpoint's receives come from its one peer, no FI_SOURCE. */
#define TYPE_CAPS(type, caps) ((type) == FI_EP_MSG ? (caps) & ~(uint64_t)FI_SOURCE : (caps))
#define MSG_ORDER FI_ORDER_SAS

#define REFUSE(...)                                                                                \
	do {                                                                                       \
		SL_FAB_INFO(FI_LOG_CORE, __VA_ARGS__);                                             \
		return -FI_ENODATA;                                                                \
	} while (0)

/* The settings make sense, or getinfo refuses with the one that does not. */
static int
check_params(void)
{
	const struct sl_fab_params *p = &sl_fab_params;

	if (p->max_msg_bytes == 0 || p->max_msg_bytes > (1u << 30)) {
		SL_FAB_WARN(FI_LOG_CORE, "FI_SLUICE_MAX_MSG=%zu: 1 to 1073741824 bytes\n",
			    p->max_msg_bytes);
		return -FI_ENODATA;
	}
	if (p->tx_slots == 0 || p->tx_slots > 4096 || p->rx_slots == 0 || p->rx_slots > 4096) {
		SL_FAB_WARN(FI_LOG_CORE, "FI_SLUICE_TX_SLOTS / RX_SLOTS: 1 to 4096\n");
		return -FI_ENODATA;
	}
	if (p->receiver != NULL && strcmp(p->receiver, "melo") != 0 &&
	    strcmp(p->receiver, "gbn") != 0) {
		SL_FAB_WARN(FI_LOG_CORE, "FI_SLUICE_RECEIVER=%s: melo or gbn\n", p->receiver);
		return -FI_ENODATA;
	}
	if (p->program != NULL && strlen(p->program) >= SL_NAME_MAX) {
		SL_FAB_WARN(FI_LOG_CORE, "FI_SLUICE_PROGRAM=%s: longer than a program name\n",
			    p->program);
		return -FI_ENODATA;
	}
	return 0;
}

static const char *
socket_path(void)
{
	const char *s = sl_fab_params.socket;

	if (s == NULL)
		s = getenv("SLUICE_SOCKET");
	return s != NULL ? s : SL_SOCKET_DEFAULT;
}

/* node [service] as fi_getinfo gives them: a name, or an IPv4 address and a port. */
static int
parse_node(const char *node, const char *service, struct sl_fab_addr *a)
{
	struct in_addr in;
	char *end;
	unsigned long port = 0;

	if (node != NULL && strncmp(node, SL_FAB_ADDR_PREFIX, strlen(SL_FAB_ADDR_PREFIX)) == 0)
		return service == NULL ? sl_fab_addr_parse(node, strlen(node) + 1, a) : -EINVAL;
	if (node == NULL || inet_pton(AF_INET, node, &in) != 1)
		return -EINVAL;
	if (service != NULL) {
		errno = 0;
		port = strtoul(service, &end, 10);
		if (errno != 0 || *service == '\0' || *end != '\0' || port > 65535)
			return -EINVAL;
	}
	a->ip4 = ntohl(in.s_addr);
	a->port = (uint16_t)port;
	return 0;
}

int
sl_fab_info_addr(void **where, size_t *len, const struct sl_fab_addr *a)
{
	char *s = calloc(1, SL_FAB_ADDR_STRLEN);

	if (s == NULL)
		return -FI_ENOMEM;
	sl_fab_addr_format(a, s, SL_FAB_ADDR_STRLEN);
	*where = s;
	*len = strlen(s) + 1;
	return 0;
}

/* A name the hints carry (FI_ADDR_STR), checked. */
static int
hint_addr(const void *addr, size_t len, struct sl_fab_addr *a)
{
	return addr != NULL ? sl_fab_addr_parse(addr, len, a) : -ENOENT;
}

/* Whether the hints' mr_mode lets FI_RMA be offered: the application supports
 * RMA_MR_MODE (FI_MR_BASIC, the old name for these with FI_MR_ALLOCATED, does too). */
static bool
rma_mr_ok(const struct fi_info *h)
{
	int m = h != NULL && h->domain_attr != NULL ? h->domain_attr->mr_mode : RMA_MR_MODE;

	return m == FI_MR_BASIC || (m & RMA_MR_MODE) == RMA_MR_MODE;
}

/* The hints against endpoint type type. */
static int
check_hints(const struct fi_info *h, enum fi_ep_type type)
{
	if (h->caps & ~TYPE_CAPS(type, CAPS))
		REFUSE("caps 0x%llx: sluice offers only FI_MSG, FI_SEND, FI_RECV, FI_REMOTE_COMM, "
		       "FI_RMA, FI_READ, FI_WRITE, FI_REMOTE_READ, FI_REMOTE_WRITE, and FI_SOURCE "
		       "on FI_EP_RDM\n",
		       (unsigned long long)h->caps);
	if ((h->caps & RMA_CAPS) && !rma_mr_ok(h))
		REFUSE("FI_RMA needs mr_mode FI_MR_VIRT_ADDR | FI_MR_PROV_KEY (hints: 0x%x)\n",
		       h->domain_attr->mr_mode);
	if (h->addr_format != FI_FORMAT_UNSPEC && h->addr_format != FI_ADDR_STR)
		REFUSE("address format %u: sluice names are FI_ADDR_STR\n", h->addr_format);
	if (h->ep_attr != NULL) {
		const struct fi_ep_attr *e = h->ep_attr;

		if (e->type != FI_EP_UNSPEC && e->type != type)
			REFUSE("endpoint type %d: sluice offers FI_EP_RDM and FI_EP_MSG\n",
			       e->type);
		if (e->protocol != FI_PROTO_UNSPEC)
			REFUSE("protocol %u: sluice's is its own\n", e->protocol);
		if (e->max_msg_size > sl_fab_params.max_msg_bytes)
			REFUSE("max_msg_size %zu: above FI_SLUICE_MAX_MSG (%zu)\n", e->max_msg_size,
			       sl_fab_params.max_msg_bytes);
		if (e->msg_prefix_size > 0)
			REFUSE("message prefixes are not used\n");
		if (e->tx_ctx_cnt > 1 || e->rx_ctx_cnt > 1)
			REFUSE("one transmit and one receive context per endpoint\n");
		if (e->auth_key_size > 0)
			REFUSE("no authorization keys\n");
	}
	if (h->domain_attr != NULL) {
		const struct fi_domain_attr *d = h->domain_attr;

		if (d->name != NULL && strcmp(d->name, SL_FAB_NAME) != 0)
			REFUSE("domain %s: sluice's is \"sluice\"\n", d->name);
		if (d->threading != FI_THREAD_UNSPEC && d->threading != FI_THREAD_DOMAIN)
			REFUSE("threading %d: sluice offers FI_THREAD_DOMAIN\n", d->threading);
		if (d->control_progress == FI_PROGRESS_AUTO || d->data_progress == FI_PROGRESS_AUTO)
			REFUSE("FI_PROGRESS_AUTO: sluice's progress is manual\n");
		if (d->resource_mgmt == FI_RM_ENABLED)
			REFUSE("FI_RM_ENABLED: receivers can be overrun\n");
		if (d->av_type != FI_AV_UNSPEC && d->av_type != FI_AV_TABLE &&
		    d->av_type != FI_AV_MAP)
			REFUSE("av_type %d\n", d->av_type);
		if (d->cq_data_size > 4)
			REFUSE("cq_data_size %zu: sluice carries 4 bytes\n", d->cq_data_size);
		if (d->caps & ~(uint64_t)FI_REMOTE_COMM)
			REFUSE("domain caps 0x%llx\n", (unsigned long long)d->caps);
		if (d->auth_key_size > 0)
			REFUSE("no authorization keys\n");
	}
	if (h->fabric_attr != NULL && h->fabric_attr->name != NULL &&
	    strcmp(h->fabric_attr->name, SL_FAB_NAME) != 0)
		REFUSE("fabric %s: sluice's is \"sluice\"\n", h->fabric_attr->name);
	if (h->tx_attr != NULL) {
		const struct fi_tx_attr *t = h->tx_attr;

		if (t->caps & ~(uint64_t)TX_CAPS)
			REFUSE("tx caps 0x%llx\n", (unsigned long long)t->caps);
		if (t->msg_order & ~(uint64_t)MSG_ORDER)
			REFUSE("tx msg_order 0x%llx: sluice keeps FI_ORDER_SAS\n",
			       (unsigned long long)t->msg_order);
		if (t->comp_order & ~(uint64_t)FI_ORDER_NONE)
			REFUSE("tx comp_order: completions are not ordered across peers\n");
		if (t->inject_size > SL_FAB_INJECT_BYTES)
			REFUSE("inject_size %zu: at most %u\n", t->inject_size,
			       SL_FAB_INJECT_BYTES);
		if (t->size > sl_fab_params.tx_slots)
			REFUSE("tx size %zu: above FI_SLUICE_TX_SLOTS (%zu)\n", t->size,
			       sl_fab_params.tx_slots);
		if (t->rma_iov_limit > 1)
			REFUSE("rma_iov_limit %zu: one remote range\n", t->rma_iov_limit);
		if (t->iov_limit > 1)
			REFUSE("iov_limit %zu: one buffer\n", t->iov_limit);
	}
	if (h->rx_attr != NULL) {
		const struct fi_rx_attr *r = h->rx_attr;

		if (r->caps & ~TYPE_CAPS(type, RX_CAPS))
			REFUSE("rx caps 0x%llx\n", (unsigned long long)r->caps);
		if (r->msg_order & ~(uint64_t)MSG_ORDER)
			REFUSE("rx msg_order 0x%llx: sluice keeps FI_ORDER_SAS\n",
			       (unsigned long long)r->msg_order);
		if (r->comp_order & ~(uint64_t)FI_ORDER_NONE)
			REFUSE("rx comp_order: completions are not ordered across peers\n");
		if (r->total_buffered_recv > 0)
			REFUSE("no buffered receives\n");
		if (r->size > SL_FAB_RXQ_DEPTH)
			REFUSE("rx size %zu: at most %u\n", r->size, SL_FAB_RXQ_DEPTH);
	}
	return 0;
}

static void
fill(struct fi_info *fi, const struct fi_info *h, enum fi_ep_type t)
{
	uint64_t caps = h != NULL && h->caps != 0 ? h->caps : TYPE_CAPS(t, CAPS);

	/* Unasked, RMA is offered only to an application that takes its mr_mode. */
	if (!rma_mr_ok(h))
		caps &= ~(uint64_t)RMA_CAPS;
	/* FI_RMA alone means both directions, FI_READ or FI_WRITE alone one. */
	if ((caps & FI_RMA) && !(caps & (FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE)))
		caps |= FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;

	fi->caps = caps | FI_REMOTE_COMM;
	fi->mode = 0;
	fi->addr_format = FI_ADDR_STR;
	fi->tx_attr->caps = caps & TX_CAPS;
	fi->tx_attr->op_flags = h != NULL && h->tx_attr != NULL ? h->tx_attr->op_flags : 0;
	fi->tx_attr->msg_order = MSG_ORDER;
	fi->tx_attr->comp_order = FI_ORDER_NONE;
	fi->tx_attr->inject_size = SL_FAB_INJECT_BYTES;
	fi->tx_attr->size = sl_fab_params.tx_slots;
	fi->tx_attr->iov_limit = 1;
	fi->tx_attr->rma_iov_limit = caps & FI_RMA ? 1 : 0;
	fi->rx_attr->caps = caps & RX_CAPS;
	fi->rx_attr->op_flags = h != NULL && h->rx_attr != NULL ? h->rx_attr->op_flags : 0;
	fi->rx_attr->msg_order = MSG_ORDER;
	fi->rx_attr->comp_order = FI_ORDER_NONE;
	fi->rx_attr->size = SL_FAB_RXQ_DEPTH;
	fi->rx_attr->iov_limit = 1;
	fi->ep_attr->type = t;
	fi->ep_attr->protocol = FI_PROTO_UNSPEC;
	fi->ep_attr->protocol_version = 1;
	fi->ep_attr->max_msg_size = sl_fab_params.max_msg_bytes;
	fi->ep_attr->tx_ctx_cnt = 1;
	fi->ep_attr->rx_ctx_cnt = 1;
	fi->domain_attr->name = strdup(SL_FAB_NAME);
	fi->domain_attr->threading = FI_THREAD_DOMAIN;
	fi->domain_attr->control_progress = FI_PROGRESS_MANUAL;
	fi->domain_attr->data_progress = FI_PROGRESS_MANUAL;
	fi->domain_attr->resource_mgmt = FI_RM_DISABLED;
	fi->domain_attr->av_type =
		h != NULL && h->domain_attr != NULL && h->domain_attr->av_type == FI_AV_MAP
			? FI_AV_MAP
			: FI_AV_TABLE;
	fi->domain_attr->mr_mode = caps & FI_RMA ? RMA_MR_MODE : 0;
	fi->domain_attr->mr_key_size = 4;
	fi->domain_attr->cq_data_size = 4;
	fi->domain_attr->cq_cnt = 64;
	fi->domain_attr->ep_cnt = 64;
	fi->domain_attr->tx_ctx_cnt = 64;
	fi->domain_attr->rx_ctx_cnt = 64;
	fi->domain_attr->max_ep_tx_ctx = 1;
	fi->domain_attr->max_ep_rx_ctx = 1;
	fi->domain_attr->mr_cnt = 1024;
	fi->domain_attr->caps = FI_REMOTE_COMM;
	fi->fabric_attr->name = strdup(SL_FAB_NAME);
	fi->fabric_attr->prov_version = SL_FAB_VERSION;
}

int
sl_fab_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
	       const struct fi_info *hints, struct fi_info **info)
{
	static const enum fi_ep_type types[] = {FI_EP_RDM, FI_EP_MSG};
	struct sl_fab_addr src = {0}, dst = {0};
	bool have_src = false, have_dst = false;
	struct fi_info *head = NULL, **tail = &head;
	enum fi_ep_type want =
		hints != NULL && hints->ep_attr != NULL ? hints->ep_attr->type : FI_EP_UNSPEC;
	struct stat st;
	int ret;

	if (FI_MAJOR(version) < 1 || (FI_MAJOR(version) == 1 && FI_MINOR(version) < 5))
		REFUSE("API version %u.%u: sluice needs 1.5 or later\n", FI_MAJOR(version),
		       FI_MINOR(version));
	ret = check_params();
	if (ret != 0)
		return ret;
	if (stat(socket_path(), &st) != 0 || !S_ISSOCK(st.st_mode))
		REFUSE("no sluiced socket at %s (FI_SLUICE_SOCKET)\n", socket_path());
	if (hints != NULL) {
		if (hints->src_addr != NULL) {
			if (hint_addr(hints->src_addr, hints->src_addrlen, &src) != 0)
				REFUSE("src_addr is no sluice name\n");
			have_src = true;
		}
		if (hints->dest_addr != NULL) {
			if (hint_addr(hints->dest_addr, hints->dest_addrlen, &dst) != 0)
				REFUSE("dest_addr is no sluice name\n");
			have_dst = true;
		}
	}
	if (node != NULL || service != NULL) {
		struct sl_fab_addr a;

		if (parse_node(node, service, &a) != 0)
			REFUSE("node %s service %s: an IPv4 address and a port, or a sluice name\n",
			       node ? node : "-", service ? service : "-");
		if (flags & FI_SOURCE) {
			src = a;
			have_src = true;
		} else {
			dst = a;
			have_dst = true;
		}
	}
	/* One answer per type the hints allow, in the order of types[]; a type the hints
	 * refuse is left out, and with none left the answer is -FI_ENODATA. */
	ret = -FI_ENODATA;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		struct fi_info *fi;

		if (want != types[i] && (want == FI_EP_RDM || want == FI_EP_MSG))
			continue; /* the hints name the other type */
		if (hints != NULL && check_hints(hints, types[i]) != 0)
			continue;
		fi = fi_allocinfo();
		if (fi == NULL) {
			ret = -FI_ENOMEM;
			break;
		}
		*tail = fi;
		tail = &fi->next;
		fill(fi, hints, types[i]);
		if ((fi->domain_attr->name == NULL || fi->fabric_attr->name == NULL) ||
		    (have_src && sl_fab_info_addr(&fi->src_addr, &fi->src_addrlen, &src) != 0) ||
		    (have_dst && sl_fab_info_addr(&fi->dest_addr, &fi->dest_addrlen, &dst) != 0)) {
			ret = -FI_ENOMEM;
			break;
		}
		ret = 0;
	}
	if (ret != 0 || head == NULL) {
		fi_freeinfo(head);
		return ret != 0 ? ret : -FI_ENODATA;
	}
	*info = head;
	return 0;
}
