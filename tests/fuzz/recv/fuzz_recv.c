/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_recv.c - random arrival sequences across many connections into lib/recv (the
 * invariants of docs/recv.md), with the receiver's NACKs and ACKs fed to the sender-side tracker
 * and raw NACKs built from the input thrown at the tracker too.
 *
 * Input: 2 header bytes choose the window, pool, block size, connection count, the middle-walk
 * ablation and a per-connection block cap; then 3-byte operations: [conn | kind << 5] [d0] [d1].
 * Kinds: new data (with skipped = lost PSNs), a resend of RCV.NXT, a PSN near the window, a PSN
 * anywhere (or a raw NACK), an ACK-timer poll, close and reopen, new data with flags, tracker
 * take/RTO. Checked after every operation: each payload handle comes back exactly once
 * (delivered, or dropped, or stored then delivered or dropped at close), deliveries are in PSN
 * order per connection, every ACK and NACK names the next PSN to deliver, a SACK only a PSN
 * held or delivered, a NACK hole only missing PSNs, and no operation reads more next_ptr links
 * than it frees blocks (no list walk: requirement 4 of melo.md section 6). Every 64 operations
 * and at the end, both audits (free + allocated = pool size, no block reachable from two
 * owners, chains exact).
 * Any violation aborts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sl_recv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_CONNS 32
#define MAX_OPS 768 /**< operations per input (each sends at most one packet) */

#define SLOTS 1024 /**< largest window the header selects */

struct model {
	uint32_t next_new;          /**< next PSN never sent */
	uint32_t delivered;         /**< next PSN to be delivered */
	uint8_t stored[SLOTS];      /**< PSN mod SLOTS is held in the reorder buffer */
	uint32_t stored_psn[SLOTS]; /**< ... and which PSN it is */
};

struct fuzz {
	struct sl_recv *r;
	struct sl_recv_rtx *t;
	struct model m[MAX_CONNS];
	uint8_t state[MAX_OPS + 1]; /**< per handle: 0 sent, 1 stored, 2 returned */
	uint32_t handles;
	uint64_t now_ns;
	struct sl_recv_action act[SL_RECV_WINDOW_MAX + 8];
};

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond))                                                                       \
			abort();                                                                   \
	} while (0)

static void
apply(struct fuzz *f, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		const struct sl_recv_action *a = &f->act[i];
		uintptr_t h = (uintptr_t)a->data.handle;
		struct model *m = &f->m[a->conn];

		switch (a->type) {
		case SL_RECV_ACT_STORE:
			CHECK(h <= f->handles && f->state[h] == 0);
			f->state[h] = 1;
			m->stored[a->psn % SLOTS] = 1;
			m->stored_psn[a->psn % SLOTS] = a->psn;
			break;
		case SL_RECV_ACT_DELIVER:
			CHECK(h <= f->handles && f->state[h] <= 1);
			CHECK(a->psn == m->delivered);
			m->delivered++;
			m->stored[a->psn % SLOTS] = 0;
			f->state[h] = 2;
			break;
		case SL_RECV_ACT_DROP:
			CHECK(h <= f->handles);
			CHECK(f->state[h] == (a->reason == SL_RECV_DROP_CLOSED ? 1 : 0));
			if (a->reason == SL_RECV_DROP_CLOSED)
				m->stored[a->psn % SLOTS] = 0;
			f->state[h] = 2;
			break;
		case SL_RECV_ACT_NACK:
			CHECK(a->fb.nholes <= SL_RECV_NACK_HOLES);
			CHECK(a->fb.ack_psn == m->delivered);
			/* Every PSN of every hole is missing: not delivered, not held. */
			for (unsigned k = 0; k < a->fb.nholes; k++) {
				for (uint32_t j = 0; j < a->fb.hole[k].len_pkts; j++) {
					uint32_t p = a->fb.hole[k].start_psn + j;

					CHECK((int32_t)(p - m->delivered) >= 0);
					CHECK(!m->stored[p % SLOTS] ||
					      m->stored_psn[p % SLOTS] != p);
				}
			}
			CHECK(sl_recv_rtx_nack(f->t, a->conn, &a->fb) >= 0);
			break;
		case SL_RECV_ACT_ACK:
			CHECK(a->fb.ack_psn == m->delivered);
			/* A SACK names a PSN the receiver holds or has delivered. */
			CHECK(!(a->fb.flags & SL_RECV_FBF_SACK) ||
			      (int32_t)(a->fb.sack_psn - m->delivered) < 0 ||
			      (m->stored[a->fb.sack_psn % SLOTS] &&
			       m->stored_psn[a->fb.sack_psn % SLOTS] == a->fb.sack_psn));
			CHECK(sl_recv_rtx_ack(f->t, a->conn, a->fb.ack_psn) == 0);
			break;
		default:
			break;
		}
	}
}

static void
send_pkt(struct fuzz *f, uint32_t conn, uint32_t psn, uint32_t flags)
{
	struct sl_recv_pkt p = {.conn = conn, .psn = psn, .flags = flags, .tx_ns = f->now_ns};
	unsigned used, n;

	p.handle = (void *)(uintptr_t)++f->handles;
	n = sl_recv_burst(f->r, &p, 1, f->now_ns, f->act, SL_ARRAY_SIZE(f->act), &used);
	CHECK(used == 1);
	apply(f, n);
}

static void
conn_open(struct fuzz *f, uint32_t conn, uint32_t isn, uint8_t d)
{
	struct sl_recv_conn_conf cc = {.isn = isn,
				       .mode = d & 1 ? SL_RECV_GBN : SL_RECV_MELO,
				       .fb = (uint8_t)(d >> 2),
				       .ack_every_pkts = (uint8_t)(1 + (d & 2))};

	CHECK(sl_recv_conn_open(f->r, conn, &cc) == 0);
	CHECK(sl_recv_rtx_flow_open(f->t, conn, isn) == 0);
	memset(&f->m[conn], 0, sizeof(f->m[conn]));
	f->m[conn].next_new = isn;
	f->m[conn].delivered = isn;
}

static void
op(struct fuzz *f, uint32_t nconns, uint32_t window, const uint8_t *o)
{
	uint32_t conn = (o[0] & 31u) % nconns, kind = o[0] >> 5;
	uint16_t d = (uint16_t)(o[1] | o[2] << 8);
	/* RCV.NXT is the model's delivery cursor (checked against every ACK, NACK and audit). */
	uint32_t rcv_nxt = f->m[conn].delivered;
	struct sl_recv_range rg[2];
	struct sl_recv_fb fb;

	switch (kind) {
	case 0:
	case 1: /* new data; d & 3 PSNs before it lost */
		f->m[conn].next_new += d & 3;
		send_pkt(f, conn, f->m[conn].next_new++, 0);
		break;
	case 2: /* resend from the front (RTO style) */
		send_pkt(f, conn, rcv_nxt, SL_RECV_F_RTX);
		break;
	case 3: /* near the window: duplicates, holes, the middle, just beyond */
		send_pkt(f, conn, rcv_nxt - 4 + d % (window + 8), d >> 13);
		break;
	case 4: /* anywhere, or a raw NACK at the tracker */
		if (d & 1) {
			memset(&fb, 0, sizeof(fb));
			fb.ack_psn = rcv_nxt + (d >> 12) - 8;
			fb.nholes = (uint8_t)((d >> 1) & 7);
			for (unsigned i = 0; i < SL_RECV_NACK_HOLES; i++)
				fb.hole[i] = (struct sl_recv_hole){rcv_nxt + o[1] * i * 7u,
								   (uint16_t)(d >> (4 * i))};
			sl_recv_rtx_nack(f->t, conn, &fb);
		} else {
			send_pkt(f, conn, (uint32_t)d << 16 | o[0], 0);
		}
		break;
	case 5: /* time passes; delayed ACKs */
		f->now_ns += (uint64_t)d * 16;
		apply(f, sl_recv_poll(f->r, f->now_ns, f->act, 64));
		break;
	case 6: /* close (stored handles come back) and reopen */
		apply(f, sl_recv_conn_close(f->r, conn, f->act, SL_ARRAY_SIZE(f->act)));
		sl_recv_rtx_flow_close(f->t, conn);
		conn_open(f, conn, (uint32_t)d * 65599u, o[1]);
		break;
	default: /* new data with flags, or tracker take / RTO */
		if (d & 0x100) {
			if (d & 0x200)
				sl_recv_rtx_rto(f->t, conn, rcv_nxt);
			else
				sl_recv_rtx_take(f->t, conn, rg, 2, d & 15);
		} else {
			send_pkt(f, conn, f->m[conn].next_new++, d & 15);
		}
		break;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fuzz f;
	static const uint32_t windows[] = {16, 64, 256, 1024};
	struct sl_recv_conf rc;
	struct sl_recv_rtx_conf tc;
	uint32_t nconns, nops;

	if (size < 2)
		return 0;
	nconns = 1 + (data[1] & (MAX_CONNS - 1));
	rc = SL_RECV_CONF_DEFAULT(nconns);
	rc.middle_walk = data[1] & 0x20;
	rc.conn_max_blocks = data[1] & 0x40 ? 2 : 0;
	rc.window_pkts = windows[data[0] & 3];
	rc.block_bits = 8u << ((data[0] >> 2) & 1);
	rc.pool_bits = rc.block_bits * (1 + (data[0] >> 3));
	rc.ack_delay_ns = 1000;
	tc = (struct sl_recv_rtx_conf){nconns, rc.window_pkts, rc.pool_bits, rc.block_bits};
	f.r = sl_recv_create(&rc);
	f.t = sl_recv_rtx_create(&tc);
	CHECK(f.r != NULL && f.t != NULL);
	f.handles = 0;
	f.now_ns = 0;
	memset(f.state, 0, sizeof(f.state));
	for (uint32_t c = 0; c < nconns; c++)
		conn_open(&f, c, c * 0x9e3779b9u, (uint8_t)c);
	nops = (uint32_t)SL_MIN((size - 2) / 3, MAX_OPS);
	for (uint32_t i = 0; i < nops; i++) {
		struct sl_recv_stats a, b;
		struct sl_recv_rtx_stats ta, tb;

		sl_recv_stats_get(f.r, &a);
		sl_recv_rtx_stats_get(f.t, &ta);
		op(&f, nconns, rc.window_pkts, data + 2 + 3 * i);
		/* No list walk: every next_ptr read shrinks a chain at its head. */
		sl_recv_stats_get(f.r, &b);
		sl_recv_rtx_stats_get(f.t, &tb);
		CHECK(rc.middle_walk || b.pool_next_hops - a.pool_next_hops <=
						b.pool_blocks_freed - a.pool_blocks_freed);
		CHECK(tb.pool_next_hops - ta.pool_next_hops <=
		      tb.pool_blocks_freed - ta.pool_blocks_freed);
		if (i % 64 == 0) {
			struct sl_recv_conn_info in;

			CHECK(sl_recv_audit(f.r) == 0);
			CHECK(sl_recv_rtx_audit(f.t) == 0);
			for (uint32_t c = 0; c < nconns; c++)
				CHECK(sl_recv_conn_info(f.r, c, &in) == 0 &&
				      in.rcv_nxt == f.m[c].delivered);
		}
	}
	CHECK(sl_recv_audit(f.r) == 0);
	CHECK(sl_recv_rtx_audit(f.t) == 0);
	for (uint32_t c = 0; c < nconns; c++)
		apply(&f, sl_recv_conn_close(f.r, c, f.act, SL_ARRAY_SIZE(f.act)));
	for (uint32_t h = 1; h <= f.handles; h++)
		CHECK(f.state[h] == 2);
	CHECK(sl_recv_pool_used_blocks(f.r) == 0);
	sl_recv_rtx_free(f.t);
	sl_recv_free(f.r);
	return 0;
}
