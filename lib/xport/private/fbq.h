/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fbq.h - the endpoint's outgoing feedback: what the receiver decided to answer, kept
 * until tx_burst has room to send it, and never lost (fbq.c explains how).
 */
#ifndef XPORT_FBQ_H
#define XPORT_FBQ_H

#include "sl_wire.h"
#include "sl_xport.h"

struct sl_xport_fbq;

/*
 * A queue for QPs 0 .. max_qps - 1 with a ring of ring_slots frames (a power of two), each
 * frame padded to min_frame_bytes. It counts in st (the endpoint's): fb_held, fb_merged,
 * fb_coalesced, fb_encode_errors, tx_nak. NULL with errno EINVAL or ENOMEM.
 */
struct sl_xport_fbq *sl_xport_fbq_create(uint32_t max_qps, uint32_t ring_slots,
					 uint32_t min_frame_bytes, struct sl_xport_stats *st);
void sl_xport_fbq_free(struct sl_xport_fbq *q);

/* Feedback fb (its qpn the peer's QP) of local QP qpn, to be sent after everything queued. */
void sl_xport_fbq_push(struct sl_xport_fbq *q, uint32_t qpn, const struct sl_xfb *fb);

/*
 * QP qpn refused a message: push nak (opcode SL_XOP_NAK, its qpn the peer's QP), and from now
 * until sl_xport_fbq_forget turn every feedback pushed for qpn into that NAK. Never merged
 * into anything else, never dropped.
 */
void sl_xport_fbq_nak(struct sl_xport_fbq *q, uint32_t qpn, const struct sl_xfb *nak);

/*
 * QP qpn takes messages again after refusing one for now (SL_XPORT_SYN_RNR): feedback pushed
 * from now on is its own again. A NAK already made stays and is sent.
 */
void sl_xport_fbq_nak_end(struct sl_xport_fbq *q, uint32_t qpn);

/* Up to max frames, oldest first. Returns how many. */
unsigned sl_xport_fbq_pop(struct sl_xport_fbq *q, struct sl_xport_tx_frame *out, unsigned max);

/* NAK frames of QP qpn made ready to send since it was last forgotten (tx_nak: all QPs'). */
uint64_t sl_xport_fbq_naks_sent(const struct sl_xport_fbq *q, uint32_t qpn);

/* Something is waiting to be sent. */
bool sl_xport_fbq_busy(const struct sl_xport_fbq *q);

/*
 * QP qpn closed: what it still holds is not sent (frames already in the ring are), and its
 * NAK is no longer sticky.
 */
void sl_xport_fbq_forget(struct sl_xport_fbq *q, uint32_t qpn);

/* Bytes the queue keeps per QP. */
size_t sl_xport_fbq_bytes_per_qp(void);

#endif /* XPORT_FBQ_H */
