/* SPDX-License-Identifier: BSD-3-Clause */
/* sim_librecv.c - lib/recv behind struct sim_receiver_ops (see sim_librecv.h). */
#include <errno.h>
#include <stdlib.h>

#include "sim_fb.h"
#include "sim_librecv.h"
#include "sl_xport.h"

struct lr_flow {
	struct sim_recv_flow_stats st;
	uint32_t psn0;      /**< first PSN: the application address counts from it */
	uint32_t seg_bytes; /**< segment size: the application address step, bytes */
	uint16_t src;       /**< sending host, learned from its data */
	uint16_t dst;       /**< receiving host */
	bool open;
};

struct sim_librecv {
	struct sim *s;
	struct sim_librecv_conf c;
	struct lr_flow *f;
	struct sl_recv *r[SIM_MAX_HOSTS];
	uint64_t armed_ns[SIM_MAX_HOSTS]; /**< the earliest poll event pending, SIM_NEVER none */
	struct sl_recv_action *act;
	unsigned act_max;
	uint64_t encode_errors;
};

struct sim_librecv *
sim_librecv_create(struct sim *s, const struct sim_librecv_conf *c)
{
	struct sim_librecv *lr;

	if (s == NULL || c == NULL || c->nflows == 0 || c->ack_every_pkts > 255) {
		errno = EINVAL;
		return NULL;
	}
	lr = calloc(1, sizeof(*lr));
	if (lr == NULL)
		return NULL;
	lr->s = s;
	lr->c = *c;
	lr->c.rc.max_conns = c->nflows;
	for (uint32_t h = 0; h < SIM_MAX_HOSTS; h++)
		lr->armed_ns[h] = SIM_NEVER;
	lr->f = calloc(c->nflows, sizeof(*lr->f));
	lr->act_max = lr->c.rc.window_pkts + 3;
	lr->act = calloc(lr->act_max, sizeof(*lr->act));
	if (lr->f == NULL || lr->act == NULL) {
		sim_librecv_free(lr);
		errno = ENOMEM;
		return NULL;
	}
	return lr;
}

void
sim_librecv_free(struct sim_librecv *lr)
{
	if (lr == NULL)
		return;
	for (uint32_t h = 0; h < SIM_MAX_HOSTS; h++)
		sl_recv_free(lr->r[h]);
	free(lr->act);
	free(lr->f);
	free(lr);
}

int
sim_librecv_add_flow(struct sim_librecv *lr, uint32_t flow, const struct sim_flow_spec *sp)
{
	struct sl_recv_conn_conf cc = {.isn = sp->fc.first_seq, .mode = sp->recovery};
	uint32_t dst = sp->dst;
	int rc;

	if (flow >= lr->c.nflows || dst >= SIM_MAX_HOSTS || lr->f[flow].open)
		return -EINVAL;
	if (lr->r[dst] == NULL) {
		lr->r[dst] = sl_recv_create(&lr->c.rc);
		if (lr->r[dst] == NULL)
			return -errno;
		if (sl_recv_actions_max(lr->r[dst]) > lr->act_max)
			return -EINVAL;
	}
	if (sl_xport_recv_conf_for_proto(sp->proto, &cc) != 0 &&
	    (rc = sl_xport_recv_conf_for_proto("dcqcn", &cc)) != 0)
		return rc;
	if (lr->c.ack_every_pkts)
		cc.ack_every_pkts = (uint8_t)lr->c.ack_every_pkts;
	rc = sl_recv_conn_open(lr->r[dst], flow, &cc);
	if (rc)
		return rc;
	lr->f[flow] = (struct lr_flow){.psn0 = sp->fc.first_seq,
				       .seg_bytes = sp->fc.seg_bytes,
				       .dst = (uint16_t)dst,
				       .open = true};
	lr->f[flow].st.cumack = sp->fc.first_seq;
	return 0;
}

const struct sim_recv_flow_stats *
sim_librecv_flow(const struct sim_librecv *lr, uint32_t flow)
{
	return flow < lr->c.nflows ? &lr->f[flow].st : NULL;
}

int
sim_librecv_host_stats(const struct sim_librecv *lr, uint32_t h, struct sl_recv_stats *st)
{
	if (h >= SIM_MAX_HOSTS || lr->r[h] == NULL)
		return -ENOENT;
	sl_recv_stats_get(lr->r[h], st);
	return 0;
}

uint32_t
sim_librecv_pool_blocks(const struct sim_librecv *lr, uint32_t h)
{
	return h < SIM_MAX_HOSTS && lr->r[h] ? sl_recv_pool_total_blocks(lr->r[h]) : 0;
}

uint64_t
sim_librecv_encode_errors(const struct sim_librecv *lr)
{
	return lr->encode_errors;
}

/* One feedback action onto host's link, encoded as on the wire. */
static void
send_fb(struct sim_librecv *lr, uint32_t host, const struct sl_recv_action *a)
{
	static const uint8_t type_of[] = {
		[SL_RECV_ACT_ACK] = SIM_PKT_ACK,
		[SL_RECV_ACT_NACK] = SIM_PKT_NACK,
		[SL_RECV_ACT_CNP] = SIM_PKT_CNP,
		[SL_RECV_ACT_PULL] = SIM_PKT_PULL,
	};
	struct lr_flow *f = &lr->f[a->conn];
	struct sl_xfb fb;
	int n;

	n = sl_xport_fb_from_recv(a, &fb);
	if (n == 0)
		n = sim_fb_send(lr->s, host, f->src, type_of[a->type], &fb,
				a->type == SL_RECV_ACT_NACK && a->fb.nholes
					? a->fb.hole[0].start_psn
					: a->fb.ack_psn);
	if (n == -ENOMEM)
		return;
	if (n < 0) {
		lr->encode_errors++;
		return;
	}
	if (a->type == SL_RECV_ACT_NACK)
		f->st.nacks++;
	else if (a->type == SL_RECV_ACT_CNP)
		f->st.cnps++;
	else if (a->type == SL_RECV_ACT_PULL)
		f->st.pulls++;
}

static void
apply(struct sim_librecv *lr, uint32_t host, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		const struct sl_recv_action *a = &lr->act[i];
		struct lr_flow *f = &lr->f[a->conn];

		switch (a->type) {
		case SL_RECV_ACT_DELIVER:
			f->st.segs++;
			f->st.bytes += (uintptr_t)a->data.handle;
			f->st.cumack = a->psn + 1;
			break;
		case SL_RECV_ACT_STORE:
			break;
		case SL_RECV_ACT_DROP:
			if (a->reason == SL_RECV_DROP_DUPLICATE)
				f->st.dup_segs++;
			else if (a->reason == SL_RECV_DROP_OUT_OF_WINDOW)
				f->st.beyond_win++;
			break;
		default:
			send_fb(lr, host, a);
			break;
		}
	}
}

static void poll_event(struct sim *s, void *obj, uint64_t host);

/* Make sure a poll event runs at host's next ACK deadline. */
static void
arm(struct sim_librecv *lr, uint32_t host)
{
	uint64_t t = sl_recv_next_deadline(lr->r[host]);

	if (t == UINT64_MAX || t >= lr->armed_ns[host])
		return;
	lr->armed_ns[host] = t;
	sim_schedule(lr->s, SL_MAX(t, sim_now(lr->s)), poll_event, lr, host);
}

static void
poll_event(struct sim *s, void *obj, uint64_t host)
{
	struct sim_librecv *lr = obj;
	unsigned n;

	if (sim_now(s) < lr->armed_ns[host])
		return; /* superseded by an earlier deadline that already ran */
	lr->armed_ns[host] = SIM_NEVER;
	n = sl_recv_poll(lr->r[host], sim_now(s), lr->act, lr->act_max);
	apply(lr, (uint32_t)host, n);
	arm(lr, (uint32_t)host);
}

static void
librecv_input(void *ctx, struct sim_pkt *d, uint64_t now_ns)
{
	struct sim_librecv *lr = ctx;
	struct lr_flow *f;
	struct sl_recv_pkt p;
	unsigned n;

	if (d->flow >= lr->c.nflows || !lr->f[d->flow].open || lr->f[d->flow].dst != d->dst)
		return;
	f = &lr->f[d->flow];
	f->src = d->src;
	p = (struct sl_recv_pkt){
		.conn = d->flow,
		.psn = d->seq,
		.flags = (d->ecn_ce ? SL_RECV_F_ECN_CE : 0) | (d->tx_id ? SL_RECV_F_RTX : 0) |
			 (d->last ? SL_RECV_F_ACK_REQ : 0) | (d->trimmed ? SL_RECV_F_TRIMMED : 0),
		.tx_id = d->tx_id,
		.tx_ns = d->ts_ns,
		.handle = (void *)(uintptr_t)d->len_bytes,
		.app_addr = (uint64_t)(d->seq - f->psn0) * f->seg_bytes,
	};
	n = sl_recv_burst(lr->r[d->dst], &p, 1, now_ns, lr->act, lr->act_max, NULL);
	apply(lr, d->dst, n);
	arm(lr, d->dst);
}

const struct sim_receiver_ops sim_librecv_ops = {
	.input = librecv_input,
};
