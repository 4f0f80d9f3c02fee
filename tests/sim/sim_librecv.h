/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sim_librecv.h - the real receiver, lib/recv (MELO or go-back-N per connection), behind
 * struct sim_receiver_ops: the simulator's alternative to the reference receiver (sim_recv.h).
 *
 * Model. Every receiving host runs one sl_recv instance (one lcore: one shared bits pool, one
 * set of reorder buffers); a flow is connection `flow id` of its destination's instance. Each
 * data packet becomes one struct sl_recv_pkt (ECN-CE, a retransmission when tx_id > 0, ACK
 * request on the last segment of a push, trimmed header) and goes through sl_recv_burst; the
 * actions come back as deliveries (counted as received bytes, in PSN order), reorder-buffer
 * stores, drops (counted by reason inside lib/recv) and feedback. Every feedback action is
 * converted (sl_xport_fb_from_recv) and encoded with sl_xfb_encode into the control packet's fb
 * bytes, exactly as it would go on the wire, and the sender decodes it (sim_sched.c); cumack and
 * seq are filled too, so traces and the reference-shaped counters keep working. Delayed ACKs are
 * sent from a simulator event at sl_recv_next_deadline. The simulator carries no payload: a handle
 * is the payload length.
 *
 * Units: ns, bytes, PSNs = segment numbers.
 */
#ifndef SIM_LIBRECV_H
#define SIM_LIBRECV_H

#include "sim.h"
#include "sim_recv.h"
#include "sim_sched.h"
#include "sl_recv.h"

struct sim_librecv_conf {
	uint32_t nflows;         /**< flow ids [0, nflows) */
	struct sl_recv_conf rc;  /**< per receiving host; max_conns is set to nflows */
	uint32_t ack_every_pkts; /**< override the program's ACK ratio (1..255); 0: keep it */
};

struct sim_librecv;

extern const struct sim_receiver_ops sim_librecv_ops;

struct sim_librecv *sim_librecv_create(struct sim *s, const struct sim_librecv_conf *c);
void sim_librecv_free(struct sim_librecv *lr);

/*
 * Open flow as a connection of host sp->dst, first PSN sp->fc.first_seq, in mode sp->recovery
 * (enum sl_recv_mode), with the feedback of program sp->proto (melo and gbn: NACKs and CNPs,
 * MELO's evaluation setting; a program lib/recv does not know gets DCQCN's, the same).
 * 0, -EINVAL, -ENOMEM or sl_recv_conn_open's error.
 */
int sim_librecv_add_flow(struct sim_librecv *lr, uint32_t flow, const struct sim_flow_spec *sp);

/* Reference-shaped counters of one flow (segs, bytes, duplicates, feedback, cumack). */
const struct sim_recv_flow_stats *sim_librecv_flow(const struct sim_librecv *lr, uint32_t flow);

/* lib/recv's counters of host h's instance (zeros when h receives nothing). 0 or -ENOENT. */
int sim_librecv_host_stats(const struct sim_librecv *lr, uint32_t h, struct sl_recv_stats *st);
/* Pool size of h's instance, blocks (0 when h receives nothing). */
uint32_t sim_librecv_pool_blocks(const struct sim_librecv *lr, uint32_t h);
/* Feedback actions that could not be encoded (must stay 0). */
uint64_t sim_librecv_encode_errors(const struct sim_librecv *lr);

#endif /* SIM_LIBRECV_H */
