/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ec_window.h - the pieces the endpoint-congestion programs (Chong and Krishnan, "Addressing
 * Endpoint-induced Congestion for Accelerator Scale-Out in a Medium-Scale Domain": opt, aimd, dack)
 * share:
 *   - OPT's window (section III.A: transmission is unlimited while the outstanding packets stay
 *     under "a specified threshold for data size and packet count"): min(param[0] segments [W],
 *     param[1] bytes / seg_bytes [no byte limit]), at least 1; param[0] above W is a configuration
 *     error (-EINVAL);
 *   - go-back-N on a NACK (section II.A): [nack_seq, snd_max) is marked. lib/ec's NACK names the
 *     next expected segment; a NACK naming a hole (SL_EVF_HOLE: lib/ec with selective repeat,
 *     lib/recv's MELO) marks the hole alone, since the receiver holds what follows it.
 * The flow parameters are laid out once for the three programs, so one flow configuration runs
 * any of them: param[0] outstanding segments, param[1] outstanding bytes, param[2] aimd's
 * initial window, bytes, param[3] dack's H(1) counter threshold, IACKs. Units: segments, bytes.
 */
#ifndef SL_PROTO_EC_WINDOW_H
#define SL_PROTO_EC_WINDOW_H

#include <errno.h>

#include "sl_proto.h"
#include "sl_sched.h"

/* OPT's window, segments, into *wnd_segs: 0, or -EINVAL for param[0] above W. */
static inline int
ec_opt_wnd(const struct sl_flow_view *f, const struct sl_flow_conf *fc, uint32_t *wnd_segs)
{
	uint64_t segs = fc->param[0] ? fc->param[0] : f->max_wnd_segs;

	if (segs > f->max_wnd_segs)
		return -EINVAL;
	if (fc->param[1])
		segs = SL_MIN(segs, fc->param[1] / f->seg_bytes);
	*wnd_segs = (uint32_t)SL_MAX(segs, 1u);
	return 0;
}

/*
 * A NACK marks [nack_seq, snd_max), go-back-N, or its hole alone (SL_EVF_HOLE); the engine
 * clips the range to what is unacked.
 */
static inline void
ec_nack_mark(const struct sl_flow_view *f, const struct sl_incoming *in, struct sl_proto_out *out)
{
	if (in->ev->type != SL_EV_NACK)
		return;
	out->mark_from = in->ev->nack_seq;
	out->mark_to =
		(in->ev->flags & SL_EVF_HOLE) ? in->ev->nack_seq + in->ev->nack_len : f->snd_max;
}

#endif /* SL_PROTO_EC_WINDOW_H */
