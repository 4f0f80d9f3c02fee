/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_xport_fb.h - where the receiver's feedback meets the wire: lib/recv decides what to
 * answer (struct sl_recv_action, struct sl_recv_fb) and lib/wire owns how it looks on the wire
 * (struct sl_xfb, sl_xhdr.h); neither includes the other, and the transport endpoint, which
 * uses both, converts between them here. Field for field; nothing is computed.
 */
#ifndef SL_XPORT_FB_H
#define SL_XPORT_FB_H

#include "sl_recv.h"
#include "sl_xhdr.h"

/*
 * The wire form of a feedback action (type ACK, NACK, CNP or PULL; conn is the QPN).
 * 0, or -EINVAL for a data action.
 */
int sl_xport_fb_from_recv(const struct sl_recv_action *a, struct sl_xfb *fb);

/* The receiver's form of a decoded feedback frame, as lib/recv's sender-side tracker takes it. */
void sl_xport_fb_to_recv(const struct sl_xfb *fb, struct sl_recv_fb *out);

#endif /* SL_XPORT_FB_H */
