/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for lib/link/link.c, one or more per rule of RIFL as sluice implements it (RIFL (OSA 2022),
 * sections 3 and 4; the software differences in link.c's essay), plus adversarial cases: frames
 * whose ID is off by one, white noise, corrupted control and FC frames, one corrupted frame inside
 * a run of 8 control frames. Frames are built with lib/wire and fed to the link directly; the peer
 * is either hand-written frames or a second link.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "sl_link.h"
#include "sl_rng.h"

#define BODY 46u
#define ORDER 5u /* ring of 32 */
#define KEEPALIVE_NS 1000u
#define CTRL_NS 500u
#define FC_FRAMES 30u
#define CLOCK_LINE_BPS (8 * SL_BPS_PER_GBPS) /* slot-clock tests: a byte per ns */

static const struct sl_wire_fmt faithful = {SL_WIRE_MODE_FAITHFUL, SL_WIRE_SCOPE_ALL};
static const struct sl_wire_fmt extended = {SL_WIRE_MODE_EXTENDED, SL_WIRE_SCOPE_ALL};

static unsigned n_released;
static void *released[4096];

static void
release_cb(void *ctx, void *const *h, unsigned n)
{
	(void)ctx;
	for (unsigned i = 0; i < n; i++)
		released[n_released++ % 4096] = h[i];
}

static bool
was_released(void *h)
{
	for (unsigned i = 0; i < SL_MIN(n_released, 4096u); i++)
		if (released[i] == h)
			return true;
	return false;
}

static struct sl_link *
mk(const struct sl_wire_fmt *fmt, enum sl_link_replay replay)
{
	struct sl_link_conf c = {
		.fmt = *fmt,
		.ring_order = ORDER,
		.replay = replay,
		.keepalive_ns = KEEPALIVE_NS,
		.ctrl_interval_ns = CTRL_NS,
		.fc_frames = FC_FRAMES,
		.release = release_cb,
	};
	struct sl_link *l = sl_link_create(&c);

	assert_non_null(l);
	n_released = 0;
	return l;
}

/* A padded frame in a buffer. */
struct fr {
	uint8_t b[64];
	uint16_t len;
};

static struct fr
data_frame(const struct sl_wire_fmt *fmt, uint32_t id, uint8_t tag)
{
	struct fr f;
	size_t h = sl_wire_hdr_len(fmt);

	memset(&f, 0, sizeof(f));
	memset(f.b + h, tag, BODY);
	sl_wire_encode_data(fmt, f.b, SL_WIRE_META_VALID, id, f.b + h, BODY);
	f.len = (uint16_t)(h + BODY);
	return f;
}

static struct fr
ctrl_frame(const struct sl_wire_fmt *fmt, uint32_t id, uint16_t key, uint32_t arg)
{
	struct fr f;

	memset(&f, 0, sizeof(f));
	sl_wire_encode_ctrl(fmt, f.b, id, key, arg);
	f.len = 46;
	return f;
}

static struct fr
filler_frame(const struct sl_wire_fmt *fmt, uint32_t id, uint8_t fc)
{
	struct fr f;

	memset(&f, 0, sizeof(f));
	sl_wire_encode_filler(fmt, f.b, id, fc);
	f.len = 46;
	return f;
}

/* Feed one frame; returns the number delivered (0 or 1). */
static unsigned
feed(struct sl_link *l, uint64_t now, const struct fr *f, void *handle)
{
	struct sl_link_rx_frame in = {.buf = f->b, .len = f->len, .handle = handle};
	struct sl_link_delivery out;

	return sl_link_rx_burst(l, now, &in, 1, &out);
}

static unsigned
feed_ctrl_n(struct sl_link *l, const struct sl_wire_fmt *fmt, uint32_t id, uint16_t key,
	    uint32_t arg, unsigned n)
{
	struct fr f = ctrl_frame(fmt, id, key, arg);
	unsigned d = 0;

	for (unsigned i = 0; i < n; i++)
		d += feed(l, 0, &f, NULL);
	return d;
}

/* Bring the RX of a fresh link in sync with a fresh peer: 16 IDLE, then the 16 warm-up fillers. */
static void
sync_rx(struct sl_link *l, const struct sl_wire_fmt *fmt)
{
	feed_ctrl_n(l, fmt, 0, SL_WIRE_KEY_IDLE, 0, 16);
	for (uint32_t id = 0; id < SL_LINK_ROLLBACK; id++) {
		struct fr f = filler_frame(fmt, id, SL_WIRE_FC_FILLER);

		assert_int_equal(feed(l, 0, &f, NULL), 0);
	}
}

/* Run tx_burst with no input. */
static unsigned
tx(struct sl_link *l, uint64_t now, struct sl_link_tx_frame *out, unsigned max)
{
	unsigned taken;

	return sl_link_tx_burst(l, now, NULL, 0, &taken, out, max);
}

static void
sl_link_create__rejects_bad_conf(void **state)
{
	struct sl_link_conf ok = {.fmt = faithful,
				  .ring_order = ORDER,
				  .keepalive_ns = 1,
				  .ctrl_interval_ns = 1,
				  .fc_frames = 30,
				  .release = release_cb};
	struct sl_link_conf c;
	struct sl_link *l;

	(void)state;
	l = sl_link_create(&ok);
	assert_non_null(l);
	sl_link_free(l);
	assert_null(sl_link_create(NULL));
	assert_int_equal(errno, EINVAL);
#define REJECT(field, value)                                                                       \
	do {                                                                                       \
		c = ok;                                                                            \
		c.field = value;                                                                   \
		errno = 0;                                                                         \
		assert_null(sl_link_create(&c));                                                   \
		assert_int_equal(errno, EINVAL);                                                   \
	} while (0)
	REJECT(release, NULL);
	REJECT(keepalive_ns, 0);
	REJECT(ctrl_interval_ns, 0);
	REJECT(fc_frames, 2);
	REJECT(ring_order, SL_LINK_ORDER_MIN - 1);
	REJECT(ring_order, SL_LINK_ORDER_MAX_FAITHFUL + 1);
	REJECT(replay, SL_LINK_REPLAY_MISSING); /* needs the NACK's ID: extended only */
	REJECT(replay, SL_LINK_REPLAY_NONE);    /* delivers by explicit ID: extended only */
	REJECT(replay, 3);
	REJECT(fc_off_frames, 25); /* off above the default on (20) */
	REJECT(fc_on_frames, 31);  /* on above S_FC */
	REJECT(fmt.mode, 7);
#undef REJECT
	c = ok;
	c.fmt = extended;
	c.ring_order = SL_LINK_ORDER_MAX_FAITHFUL + 1;
	c.replay = SL_LINK_REPLAY_MISSING;
	l = sl_link_create(&c);
	assert_non_null(l);
	sl_link_free(l);
}

static void
sl_link_ring_order__rifl_sizing_rule(void **state)
{
	(void)state;
	/* 100 Gbps x 10 us = 125000 B = 84 frames of 1500 B, + 32 margin = 116 -> 128 (k = 7). */
	assert_int_equal(
		sl_link_ring_order(&faithful, 100 * SL_BPS_PER_GBPS, 10 * SL_NS_PER_US, 1500), 7);
	/* Digest sec. 6(b): 100 Gbps x 10 us in 32 B cells = 3907 + 32 frames: beyond 2^11 for
	 * faithful mode (12-bit IDs must not alias), 2^12 in extended mode. */
	assert_int_equal(
		sl_link_ring_order(&faithful, 100 * SL_BPS_PER_GBPS, 10 * SL_NS_PER_US, 32),
		-ERANGE);
	assert_int_equal(
		sl_link_ring_order(&extended, 100 * SL_BPS_PER_GBPS, 10 * SL_NS_PER_US, 32), 12);
	/* Tiny links still get the minimum ring. */
	assert_int_equal(sl_link_ring_order(&faithful, SL_BPS_PER_MBPS, 1, 1500),
			 SL_LINK_ORDER_MIN);
	assert_int_equal(sl_link_ring_order(&faithful, SL_BPS_PER_MBPS, SL_NS_PER_US, 1500), 6);
	assert_int_equal(sl_link_ring_order(&faithful, 1, 1, 0), -EINVAL);
	/* S_FC: 3 x BDP (84 frames) = 252 >= RIFL's 1.5 x BDP. */
	assert_int_equal(sl_link_fc_frames(100 * SL_BPS_PER_GBPS, 10 * SL_NS_PER_US, 1500), 252);
	assert_int_equal(sl_link_fc_frames(1, 1, 1500), 3);
}

static void
sl_link_rx_burst__warmup_then_exactly_once_in_order(void **state)
{
	struct sl_link *l = mk(&faithful, SL_LINK_REPLAY_RING);
	int h[4];

	(void)state;
	feed_ctrl_n(l, &faithful, 0, SL_WIRE_KEY_IDLE, 0, 8);
	/* The first 16 frames after init are never delivered, even valid data. */
	for (uint32_t id = 0; id < 16; id++) {
		struct fr f = data_frame(&faithful, id, 1);

		assert_int_equal(feed(l, 0, &f, &h[0]), 0);
	}
	for (uint32_t id = 16; id < 19; id++) {
		struct fr f = data_frame(&faithful, id, 2);

		assert_int_equal(feed(l, 0, &f, &h[1]), 1);
	}
	assert_int_equal(sl_link_stat(l, rx_delivered), 3);
	assert_int_equal(sl_link_stat(l, rx_errors), 0);
	/* The same frame again (ID 18) no longer verifies: one delivery per ID. */
	{
		struct fr f = data_frame(&faithful, 18, 2);

		assert_int_equal(feed(l, 0, &f, &h[2]), 0);
		assert_true(was_released(&h[2]));
	}
	sl_link_free(l);
}

/*
 * End-to-end mode: a frame verified against its own explicit ID is delivered wherever it falls;
 * a gap is counted (rx_lost), never NACKed: the sender is never asked to replay, and a late or
 * duplicate frame is handed up for the transport to judge. A frame that fails is dropped.
 */
static void
sl_link_rx_burst__end_to_end_mode_delivers_by_id_and_never_nacks(void **state)
{
	struct sl_link *l = mk(&extended, SL_LINK_REPLAY_NONE);
	struct sl_link_tx_frame out[8];
	int h[8];
	struct fr f;

	(void)state;
	sync_rx(l, &extended);
	f = data_frame(&extended, 16, 1);
	assert_int_equal(feed(l, 0, &f, &h[0]), 1);
	f = data_frame(&extended, 20, 2); /* 17..19 lost on the way */
	assert_int_equal(feed(l, 0, &f, &h[1]), 1);
	assert_int_equal(sl_link_stat(l, rx_lost), 3);
	f = data_frame(&extended, 18, 3); /* late: still handed up */
	assert_int_equal(feed(l, 0, &f, &h[2]), 1);
	assert_int_equal(sl_link_stat(l, rx_late), 1);
	f = data_frame(&extended, 21, 4);
	f.b[8] ^= 0x10; /* damaged in the body VCODE covers: dropped, nothing else */
	assert_int_equal(feed(l, 0, &f, &h[3]), 0);
	assert_true(was_released(&h[3]));
	assert_int_equal(sl_link_stat(l, rx_bad_data), 1);
	/* Control frames do not move the stream (the peer's old incarnation may send them); the
	 * next data frame, 25, counts 21..24 lost. */
	feed_ctrl_n(l, &extended, 9999, SL_WIRE_KEY_IDLE, 0, 1);
	assert_int_equal(sl_link_stat(l, rx_lost), 3);
	f = data_frame(&extended, 25, 5);
	assert_int_equal(feed(l, 0, &f, &h[4]), 1);
	assert_int_equal(sl_link_stat(l, rx_lost), 7);
	assert_int_equal(sl_link_stat(l, rx_errors), 0);
	assert_int_equal(sl_link_stat(l, rx_rollbacks), 0);
	/* Nothing asks the peer for a replay: the TX side sends no RETRANS_REQ. */
	for (int i = 0; i < 64; i++)
		tx(l, 0, out, SL_ARRAY_SIZE(out));
	assert_int_equal(sl_link_stat(l, tx_retrans_req), 0);
	assert_int_equal(sl_link_state(l), SL_LINK_NORMAL);
	sl_link_free(l);
}

/*
 * An error episode no replay can end (the frame the RX rolled back to is gone from the peer's
 * ring, so nothing verifies) is given up after stuck_ns without a verified frame: the link
 * re-initializes and asks the peer to, with PAUSE_REQ from ID 0, instead of NACKing for ever.
 */
static void
sl_link_tx_burst__stuck_error_episode_reinitializes(void **state)
{
	struct sl_link_conf c = {.fmt = faithful,
				 .ring_order = ORDER,
				 .keepalive_ns = KEEPALIVE_NS,
				 .ctrl_interval_ns = CTRL_NS,
				 .fc_frames = FC_FRAMES,
				 .stuck_ns = SL_LINK_STUCK_NS_TRANSPORT,
				 .release = release_cb};
	struct sl_link *l = sl_link_create(&c);
	struct sl_link_tx_frame out[4];
	uint64_t t0 = 1000, dups;
	struct fr f;

	(void)state;
	assert_non_null(l);
	sync_rx(l, &faithful);
	f = data_frame(&faithful, 16, 1);
	assert_int_equal(feed(l, t0, &f, NULL), 1);
	f = data_frame(&faithful, 18, 1); /* 17 missing: error episode from t0 */
	assert_int_equal(feed(l, t0, &f, NULL), 0);
	assert_int_equal(sl_link_stat(l, rx_errors), 1);
	tx(l, t0 + SL_LINK_STUCK_NS_TRANSPORT - 1, out, 1);
	assert_int_equal(sl_link_state(l), SL_LINK_SEND_RETRANS);
	assert_int_equal(sl_link_stat(l, stuck_reinits), 0);
	/* A replayed frame that verifies (ID 1, a duplicate on the way back) is progress: the
	 * episode is given up only stuck_ns after it. */
	t0 += SL_LINK_STUCK_NS_TRANSPORT / 2;
	dups = sl_link_stat(l, rx_duplicates);
	f = data_frame(&faithful, 1, 1);
	assert_int_equal(feed(l, t0, &f, NULL), 0);
	assert_int_equal(sl_link_stat(l, rx_duplicates), dups + 1);
	tx(l, t0 + SL_LINK_STUCK_NS_TRANSPORT - 1, out, 1);
	assert_int_equal(sl_link_stat(l, stuck_reinits), 0);
	tx(l, t0 + SL_LINK_STUCK_NS_TRANSPORT, out, 1);
	assert_int_equal(sl_link_stat(l, stuck_reinits), 1);
	assert_int_equal(sl_link_state(l), SL_LINK_SEND_PAUSE);
	assert_int_equal(out[0].kind, SL_LINK_FRAME_CTRL);
	assert_int_equal(out[0].id, 0); /* PAUSE_REQ from ID 0: the peer starts afresh too */
	sl_link_free(l);
	/* With nothing above to recover the rings (stuck_ns 0, RIFL), the link never gives up. */
	l = mk(&faithful, SL_LINK_REPLAY_RING);
	sync_rx(l, &faithful);
	f = data_frame(&faithful, 16, 1);
	assert_int_equal(feed(l, t0, &f, NULL), 1);
	f = data_frame(&faithful, 18, 1);
	assert_int_equal(feed(l, t0, &f, NULL), 0);
	tx(l, t0 + 1000 * SL_LINK_STUCK_NS_TRANSPORT, out, 1);
	assert_int_equal(sl_link_stat(l, stuck_reinits), 0);
	assert_int_equal(sl_link_state(l), SL_LINK_SEND_RETRANS);
	sl_link_free(l);
}

static void
sl_link_rx_burst__data_ignored_until_the_lane_is_up(void **state)
{
	struct sl_link *l = mk(&faithful, SL_LINK_REPLAY_RING);

	(void)state;
	/*
	 * A peer that has not re-initialized still sends its old stream; IDs 4096.. alias the
	 * fresh 0.. modulo 4096. None of it may move the fresh receiver.
	 */
	for (uint32_t id = 4096; id < 4096 + 40; id++) {
		struct fr f = data_frame(&faithful, id, 7);

		assert_int_equal(feed(l, 0, &f, NULL), 0);
	}
	assert_int_equal(sl_link_stat(l, rx_not_up), 40);
	assert_int_equal(sl_link_stat(l, rx_duplicates), 0);
	assert_int_equal(sl_link_stat(l, rx_errors), 0);
	/* Nor do its keepalives, even with an ID just behind the fresh threshold (4096 + 10). */
	feed_ctrl_n(l, &faithful, 4096 + 10, SL_WIRE_KEY_IDLE, 0, 16);
	assert_int_equal(sl_link_stat(l, rx_stale), 0);
	assert_int_equal(sl_link_state(l), SL_LINK_SEND_PAUSE);
	/* 7 verified control frames are not enough, the 8th brings the lane up. */
	feed_ctrl_n(l, &faithful, 0, SL_WIRE_KEY_PAUSE_REQ, 0, 7);
	assert_int_equal(sl_link_state(l), SL_LINK_SEND_PAUSE);
	feed_ctrl_n(l, &faithful, 0, SL_WIRE_KEY_PAUSE_REQ, 0, 1);
	assert_int_equal(sl_link_state(l), SL_LINK_PAUSE);
	sl_link_free(l);
}

static void
sl_link_rx_burst__id_off_by_one_never_accepted(void **state)
{
	struct sl_link *l;
	const struct sl_wire_fmt *fmts[] = {&faithful, &extended};

	(void)state;
	for (int m = 0; m < 2; m++) {
		struct fr first = data_frame(fmts[m], 16, 3);

		l = mk(fmts[m], SL_LINK_REPLAY_RING);
		sync_rx(l, fmts[m]);
		assert_int_equal(feed(l, 0, &first, NULL), 1); /* thr = 17 */
		/*
		 * Behind thr: stale copies from a replay. The first moves the RX back (no error,
		 * no NACK), the next verify as duplicates: nothing is delivered.
		 */
		for (int delta = -3; delta < 0; delta++) {
			struct fr f = data_frame(fmts[m], (uint32_t)(17 + delta), 3);

			assert_int_equal(feed(l, 0, &f, NULL), 0);
		}
		assert_int_equal(sl_link_stat(l, rx_stale), 1);
		assert_int_equal(sl_link_stat(l, rx_duplicates), 16 + 2);
		assert_int_equal(sl_link_stat(l, rx_errors), 0);
		/* Ahead of rx_id: a frame went missing, an error. */
		for (int delta = 1; delta <= 3; delta++) {
			struct fr f = data_frame(fmts[m], (uint32_t)(17 + delta), 3);

			assert_int_equal(feed(l, 0, &f, NULL), 0);
		}
		assert_int_equal(sl_link_stat(l, rx_delivered), 1);
		assert_int_equal(sl_link_stat(l, rx_bad_data), 3);
		assert_int_equal(sl_link_stat(l, rx_errors), 1);
		assert_int_equal(sl_link_state(l), SL_LINK_SEND_RETRANS);
		/*
		 * In error, a frame behind thr is a plain failure again (RIFL); in extended mode
		 * its verified ID places it (rx_resync: the duplicates before it were lost).
		 */
		{
			struct fr f = data_frame(fmts[m], 16, 3);

			assert_int_equal(feed(l, 0, &f, NULL), 0);
			assert_int_equal(sl_link_stat(l, rx_bad_data), 4 - m);
			assert_int_equal(sl_link_stat(l, rx_resyncs), m);
		}
		sl_link_free(l);
	}
	/* Extended mode: a right VCODE with a wrong explicit ID (ID + 4096) is refused. */
	l = mk(&extended, SL_LINK_REPLAY_RING);
	sync_rx(l, &extended);
	{
		struct fr f = data_frame(&extended, 16 + 4096, 3);

		assert_int_equal(feed(l, 0, &f, NULL), 0);
		assert_int_equal(sl_link_stat(l, rx_bad_data), 1);
	}
	sl_link_free(l);
}

/*
 * Extended mode: a replay that loses some of the duplicates it re-sends below thr is still
 * taken (rx_resync), so its NACK, which names the same rollback point, never has to be
 * repeated; one that loses all of them is taken from thr. Frames past thr, or whose CRC fails
 * at their own ID, are failures as before, and nothing is delivered twice or out of order.
 */
static void
sl_link_rx_burst__extended_replay_survives_lost_duplicates(void **state)
{
	static const uint32_t kept[][6] = {{16, 17, 30, 31, 32, 33}, {32, 33, 34, 35, 36, 37}};

	(void)state;
	for (unsigned k = 0; k < 2; k++) {
		struct sl_link *l = mk(&extended, SL_LINK_REPLAY_MISSING);
		struct fr f, bad;
		unsigned got = 0;

		sync_rx(l, &extended);
		for (uint32_t id = 16; id < 32; id++) {
			f = data_frame(&extended, id, (uint8_t)id);
			got += feed(l, 0, &f, NULL);
		}
		f = data_frame(&extended, 33, 33); /* 32 lost: roll back to 16, NACK names 16 */
		feed(l, 0, &f, NULL);
		assert_int_equal(sl_link_stat(l, rx_errors), 1);
		assert_int_equal(sl_link_state(l), SL_LINK_SEND_RETRANS);
		/* A frame past thr, or one whose CRC fails at its ID, does not resync. */
		f = data_frame(&extended, 34, 34);
		feed(l, 0, &f, NULL);
		bad = data_frame(&extended, 25, 25);
		bad.b[5] ^= 0x02; /* the explicit ID now says 27, which its CRC does not */
		feed(l, 0, &bad, NULL);
		assert_int_equal(sl_link_stat(l, rx_resyncs), 0);
		assert_int_equal(sl_link_stat(l, rx_bad_data), 3);
		/* The replay from 16, with only the frames in kept[k] arriving. */
		for (unsigned i = 0; i < 6; i++) {
			f = data_frame(&extended, kept[k][i], (uint8_t)kept[k][i]);
			got += feed(l, 0, &f, NULL);
		}
		assert_int_equal(sl_link_stat(l, rx_resyncs), 1);
		assert_int_equal(sl_link_stat(l, rx_recoveries), 1);
		assert_int_equal(sl_link_stat(l, rx_delivered), 16 + (k == 0 ? 2 : 6));
		assert_int_equal(got, sl_link_stat(l, rx_delivered));
		assert_int_equal(sl_link_stat(l, rx_errors), 1);
		assert_int_equal(sl_link_state(l), SL_LINK_NORMAL);
		sl_link_free(l);
	}
}

static void
sl_link_rx_burst__repeated_replay_is_harmless_in_sync(void **state)
{
	const struct sl_wire_fmt *fmts[] = {&faithful, &extended};

	(void)state;
	for (int m = 0; m < 2; m++) {
		struct sl_link *l = mk(fmts[m], SL_LINK_REPLAY_RING);
		struct fr f;

		sync_rx(l, fmts[m]);
		for (uint32_t id = 16; id < 40; id++) {
			f = data_frame(fmts[m], id, 9);
			assert_int_equal(feed(l, 0, &f, NULL), 1);
		}
		/* The peer repeats its replay (ring of 32: IDs 8..39) with IDLE in odd slots. */
		for (uint32_t id = 8; id < 40; id++) {
			struct fr idle = ctrl_frame(fmts[m], id + 1, SL_WIRE_KEY_IDLE, 0);

			f = data_frame(fmts[m], id, 9);
			assert_int_equal(feed(l, 0, &f, NULL), 0);
			feed(l, 0, &idle, NULL);
		}
		/* The RX followed the repeat from ID 8: 31 duplicates, no error, no NACK. */
		assert_int_equal(sl_link_stat(l, rx_errors), 0);
		assert_int_equal(sl_link_stat(l, rx_stale), 1);
		assert_int_equal(sl_link_stat(l, rx_duplicates), 16 + 31);
		assert_int_equal(sl_link_state(l), SL_LINK_NORMAL);
		f = data_frame(fmts[m], 40, 9);
		assert_int_equal(feed(l, 0, &f, NULL), 1);
		/* A PAUSE_REQ behind rx_id is never stale: a restarting peer sends ID 0. */
		{
			struct fr p = ctrl_frame(fmts[m], 0, SL_WIRE_KEY_PAUSE_REQ, 0);

			feed(l, 0, &p, NULL);
			assert_int_equal(sl_link_stat(l, rx_errors), 1);
		}
		sl_link_free(l);
	}
}

/*
 * While following a repeated replay, a corrupted stale frame whose CRC happens to verify at
 * thr is not delivered: the RX is not at thr. (Faithful mode: the implied ID is all the RX has.)
 */
static void
sl_link_rx_burst__corrupted_stale_frame_cannot_pass_for_thr(void **state)
{
	struct sl_link *l = mk(&faithful, SL_LINK_REPLAY_RING);
	struct fr f;

	(void)state;
	sync_rx(l, &faithful);
	for (uint32_t id = 16; id < 40; id++) {
		f = data_frame(&faithful, id, 9);
		assert_int_equal(feed(l, 0, &f, NULL), 1);
	}
	f = data_frame(&faithful, 20, 9); /* the repeat starts: the RX follows from 21 */
	assert_int_equal(feed(l, 0, &f, NULL), 0);
	/* A frame that verifies at thr = 40 (as a corrupted stale frame might) arrives now. */
	f = data_frame(&faithful, 40, 9);
	assert_int_equal(feed(l, 0, &f, NULL), 0);
	assert_int_equal(sl_link_stat(l, rx_delivered), 24);
	assert_int_equal(sl_link_stat(l, rx_errors), 1);
	sl_link_free(l);
}

static void
sl_link_rx_burst__rollback_needs_16_verified_frames(void **state)
{
	struct sl_link *l = mk(&faithful, SL_LINK_REPLAY_RING);
	struct fr f;

	(void)state;
	sync_rx(l, &faithful);
	for (uint32_t id = 16; id < 40; id++) {
		f = data_frame(&faithful, id, 4);
		assert_int_equal(feed(l, 0, &f, NULL), 1);
	}
	/* Frame 40 lost: 41 fails, the RX rolls back to thr - 16 = 24. */
	f = data_frame(&faithful, 41, 4);
	assert_int_equal(feed(l, 100, &f, NULL), 0);
	/* 40 alone is not enough: it fails at rx_id 24. */
	f = data_frame(&faithful, 40, 4);
	assert_int_equal(feed(l, 200, &f, NULL), 0);
	assert_int_equal(sl_link_stat(l, rx_rollbacks), 2);
	/* Replay from 24: 24..39 are verified duplicates, then 40 is delivered once. */
	for (uint32_t id = 24; id < 40; id++) {
		f = data_frame(&faithful, id, 4);
		assert_int_equal(feed(l, 300, &f, NULL), 0);
	}
	assert_int_equal(sl_link_stat(l, rx_duplicates), 16 + 16); /* warm-up + replay */
	assert_int_equal(sl_link_stat(l, rx_recoveries), 1);
	f = data_frame(&faithful, 40, 4);
	assert_int_equal(feed(l, 1100, &f, NULL), 1);
	/* Recovery time: first failure (t = 100) to the next in-order frame (t = 1100). */
	assert_int_equal(sl_link_recovery_hist(l)->count, 1);
	assert_int_equal(sl_link_recovery_hist(l)->max, 1000);
	sl_link_free(l);
}

static void
sl_link_rx_burst__white_noise_never_accepted(void **state)
{
	const struct sl_wire_fmt *fmts[] = {&faithful, &extended};
	struct sl_rng r;

	(void)state;
	sl_rng_seed(&r, 99);
	for (int m = 0; m < 2; m++) {
		struct sl_link *l = mk(fmts[m], SL_LINK_REPLAY_RING);
		struct sl_link_stats s;

		sync_rx(l, fmts[m]);
		for (int i = 0; i < 200000; i++) {
			struct fr f;

			f.len = (uint16_t)sl_rng_below(&r, sizeof(f.b) + 1);
			for (unsigned j = 0; j < sizeof(f.b); j++)
				f.b[j] = (uint8_t)sl_rng_next(&r);
			assert_int_equal(feed(l, (uint64_t)i, &f, NULL), 0);
		}
		sl_link_stats_get(l, &s);
		assert_int_equal(s.rx_delivered, 0);
		assert_int_equal(s.flag_pause, 0);
		assert_int_equal(s.flag_retrans, 0);
		assert_int_equal(s.rx_fc_pause, 0);
		assert_false(sl_link_tx_fc_paused(l));
		assert_int_equal(s.peer_restarts, 0);
		assert_true(s.rx_malformed[SL_WIRE_ERR_SYN - 1] > 0);
		assert_true(s.rx_malformed[SL_WIRE_ERR_KEY - 1] > 0);
		sl_link_free(l);
	}
}

static void
sl_link_rx_burst__flag_needs_8_consecutive_identical_keys(void **state)
{
	struct sl_link *l = mk(&faithful, SL_LINK_REPLAY_RING);
	struct sl_link_tx_frame out[4];

	(void)state;
	sync_rx(l, &faithful);
	/* 7 PAUSE_REQ, an IDLE, 7 more: never 8 in a row. */
	feed_ctrl_n(l, &faithful, 16, SL_WIRE_KEY_PAUSE_REQ, 0, 7);
	feed_ctrl_n(l, &faithful, 16, SL_WIRE_KEY_IDLE, 0, 1);
	feed_ctrl_n(l, &faithful, 16, SL_WIRE_KEY_PAUSE_REQ, 0, 7);
	assert_int_equal(sl_link_stat(l, flag_pause), 0);
	assert_int_equal(sl_link_state(l), SL_LINK_NORMAL);
	/* The 8th consecutive raises it: TX sends IDLE only. */
	feed_ctrl_n(l, &faithful, 16, SL_WIRE_KEY_PAUSE_REQ, 0, 1);
	assert_int_equal(sl_link_stat(l, flag_pause), 1);
	assert_int_equal(sl_link_state(l), SL_LINK_PAUSE);
	assert_true(tx(l, 0, out, 4) > 0);
	assert_int_equal(out[0].kind, SL_LINK_FRAME_CTRL);
	assert_int_equal(out[0].hdr[3], SL_WIRE_KEY_IDLE);
	/* 16 regular frames lower it. */
	feed_ctrl_n(l, &faithful, 16, SL_WIRE_KEY_IDLE, 0, 15);
	assert_int_equal(sl_link_state(l), SL_LINK_PAUSE);
	feed_ctrl_n(l, &faithful, 16, SL_WIRE_KEY_IDLE, 0, 1);
	assert_int_equal(sl_link_state(l), SL_LINK_NORMAL);
	/* Extended mode: NACKs naming different IDs are not identical. */
	sl_link_free(l);
	l = mk(&extended, SL_LINK_REPLAY_MISSING);
	sync_rx(l, &extended);
	for (int i = 0; i < 16; i++)
		feed_ctrl_n(l, &extended, 16, SL_WIRE_KEY_RETRANS_REQ, (uint32_t)i % 2, 1);
	assert_int_equal(sl_link_stat(l, flag_retrans), 0);
	sl_link_free(l);
}

/*
 * A run of 8 control frames with one corrupted bit anywhere in the covered bytes (every bit
 * position tried) never raises the flag, and no corrupted control frame ever counts.
 */
static void
sl_link_rx_burst__corrupted_frame_in_a_run_of_8_never_accepted(void **state)
{
	static const uint16_t keys[] = {SL_WIRE_KEY_PAUSE_REQ, SL_WIRE_KEY_RETRANS_REQ};
	const struct sl_wire_fmt *fmts[] = {&faithful, &extended};

	(void)state;
	for (int m = 0; m < 2; m++)
		for (int k = 0; k < 2; k++) {
			size_t len = fmts[m]->mode == SL_WIRE_MODE_EXTENDED ? 12 : 4;

			for (unsigned bit = 0; bit < len * 8; bit++) {
				struct sl_link *l = mk(fmts[m], SL_LINK_REPLAY_RING);
				struct fr good = ctrl_frame(fmts[m], 16, keys[k], 0), bad = good;
				struct sl_link_tx_frame out[8];

				sync_rx(l, fmts[m]);
				bad.b[bit / 8] ^= (uint8_t)(0x80u >> (bit % 8));
				for (unsigned i = 0; i < 8; i++)
					feed(l, 0, i == bit % 8 ? &bad : &good, NULL);
				assert_int_equal(sl_link_stat(l, flag_pause), 0);
				assert_int_equal(sl_link_stat(l, flag_retrans), 0);
				/* No replay starts: the TX asks for one (the bad frame is an
				 * error on this side) but never re-sends its ring. */
				tx(l, 0, out, 8);
				assert_int_equal(sl_link_stat(l, replays), 0);
				assert_int_equal(sl_link_stat(l, tx_replayed), 0);
				sl_link_free(l);
			}
		}
}

static void
sl_link_rx_burst__corrupted_fc_frame_is_delayed_not_accepted(void **state)
{
	struct sl_link *l = mk(&faithful, SL_LINK_REPLAY_RING);
	struct fr good = filler_frame(&faithful, 16, SL_WIRE_FC_PAUSE), bad;

	(void)state;
	sync_rx(l, &faithful);
	for (unsigned bit = 0; bit < 24; bit++) {
		bad = good;
		bad.b[bit / 8] ^= (uint8_t)(0x80u >> (bit % 8));
		feed(l, 0, &bad, NULL);
		assert_false(sl_link_tx_fc_paused(l));
	}
	assert_int_equal(sl_link_stat(l, rx_fc_pause), 0);
	/* The replay brings the real FC frame after 16 verified ones: now it takes effect. */
	for (uint32_t id = 0; id < 16; id++) {
		struct fr f = filler_frame(&faithful, id, SL_WIRE_FC_FILLER);

		feed(l, 0, &f, NULL);
	}
	feed(l, 0, &good, NULL);
	assert_true(sl_link_tx_fc_paused(l));
	assert_int_equal(sl_link_stat(l, rx_fc_pause), 1);
	sl_link_free(l);
}

static void
sl_link_tx_burst__warmup_fillers_then_data_in_ring(void **state)
{
	struct sl_link *l = mk(&faithful, SL_LINK_REPLAY_RING);
	struct sl_link_tx_frame out[64];
	struct sl_link_tx_desc in[40];
	uint8_t body[BODY] = {0};
	int h[40];
	unsigned taken, n;

	(void)state;
	/* A fresh link with no peer: PAUSE_REQ runs only, at most one run per interval. */
	n = tx(l, 0, out, 64);
	assert_int_equal(n, SL_LINK_CTRL_RUN);
	assert_int_equal(out[0].hdr[3], SL_WIRE_KEY_PAUSE_REQ);
	assert_int_equal(sl_link_state(l), SL_LINK_SEND_PAUSE);
	assert_int_equal(tx(l, CTRL_NS - 1, out, 64), 0);
	assert_int_equal(sl_link_next_tx_ns(l), CTRL_NS);
	assert_int_equal(tx(l, CTRL_NS, out, 64), SL_LINK_CTRL_RUN);
	sync_rx(l, &faithful);
	for (int i = 0; i < 40; i++)
		in[i] = (struct sl_link_tx_desc){&h[i], body, BODY, SL_WIRE_META_VALID};
	n = sl_link_tx_burst(l, 2000, in, 40, &taken, out, 64);
	assert_int_equal(n, 56);
	assert_int_equal(taken, 40);
	for (unsigned i = 0; i < 16; i++) {
		assert_int_equal(out[i].kind, SL_LINK_FRAME_FILLER);
		assert_int_equal(out[i].id, i);
		assert_null(out[i].handle);
	}
	for (unsigned i = 16; i < 56; i++) {
		struct sl_wire_frame f;
		uint8_t frame[64];

		assert_int_equal(out[i].kind, SL_LINK_FRAME_DATA);
		assert_int_equal(out[i].id, i);
		assert_ptr_equal(out[i].handle, &h[i - 16]);
		assert_false(out[i].is_replay);
		/* The header verifies at its ID over header + body. */
		memcpy(frame, out[i].hdr, out[i].hdr_len);
		memcpy(frame + out[i].hdr_len, body, BODY);
		assert_int_equal(sl_wire_decode(&faithful, frame, out[i].hdr_len + BODY, &f),
				 SL_WIRE_OK);
		assert_true(sl_wire_vcode_ok(&f, i));
	}
	/* Ring of 32: frames 0..23 were evicted, 8 of them payloads (IDs 16..23). */
	assert_int_equal(sl_link_stat(l, ring_evictions), 8);
	assert_true(was_released(&h[0]) && was_released(&h[7]) && !was_released(&h[8]));
	/* Freeing the link releases what the ring still holds. */
	sl_link_free(l);
	assert_true(was_released(&h[8]) && was_released(&h[39]));
	assert_int_equal(n_released, 40);
}

/* Put a link in NORMAL with n payloads sent (IDs 16 .. 16 + n - 1). */
static struct sl_link *
sender(const struct sl_wire_fmt *fmt, enum sl_link_replay replay, unsigned n, int *h)
{
	struct sl_link *l = mk(fmt, replay);
	struct sl_link_tx_frame out[64];
	struct sl_link_tx_desc in[64];
	static uint8_t body[BODY];
	unsigned taken;

	sync_rx(l, fmt);
	for (unsigned i = 0; i < n; i++)
		in[i] = (struct sl_link_tx_desc){&h[i], body, BODY, SL_WIRE_META_VALID};
	assert_int_equal(sl_link_tx_burst(l, 0, in, n, &taken, out, 64), 16 + n);
	assert_int_equal(taken, n);
	return l;
}

/* Line time of a frame in bytes: its own, and at least a data frame's (link_rate.c). */
static uint64_t
slot_bytes(const struct sl_link_tx_frame *f, uint64_t data_bytes)
{
	uint64_t own = f->hdr_len + 38u + (f->kind == SL_LINK_FRAME_DATA ? f->body_len : 0);

	return SL_MAX(own, data_bytes);
}

/*
 * A link starts at the line / SL_LINK_RATE_STEP_DIV and NORMAL raises it a step every
 * SL_LINK_RATE_STEP_NS (link_rate.c): run it idle until it is at the line. Returns the steps.
 */
static unsigned
ramp_to_line(struct sl_link *l, uint64_t *now, uint64_t line_bps)
{
	struct sl_link_tx_frame out[64];
	unsigned steps = 0;

	for (unsigned calls = 0; sl_link_send_bps(l) < line_bps; *now += SL_LINK_RATE_STEP_NS) {
		uint64_t before = sl_link_send_bps(l), after;

		tx(l, *now, out, 64);
		after = sl_link_send_bps(l);
		/* A step at most per call, none when the last was under a step ago. */
		assert_true(after == before ||
			    after == SL_MIN(before + line_bps / SL_LINK_RATE_STEP_DIV, line_bps));
		steps += after != before;
		assert_true(++calls <= 2 * SL_LINK_RATE_STEP_DIV);
	}
	return steps;
}

/*
 * A link of format fmt on an 8 Gbit/s slot clock (a byte per ns, 38 B of framing a frame) with
 * a ring of 2^order, in sync, at the line (with adapt_rate: ramped there from its start at the
 * line / 64), that has sent its warm-up fillers and 8 payloads (IDs 16..23). *data_bytes: a
 * data frame's line bytes. Faithful mode replays the ring, extended mode what is missing.
 */
static struct sl_link *
clocked_sender_fmt(const struct sl_wire_fmt *fmt, uint8_t order, bool adapt, uint64_t *now,
		   uint64_t *data_bytes)
{
	struct sl_link_conf c = {
		.fmt = *fmt,
		.ring_order = order,
		.replay = fmt->mode == SL_WIRE_MODE_EXTENDED ? SL_LINK_REPLAY_MISSING
							     : SL_LINK_REPLAY_RING,
		.keepalive_ns = KEEPALIVE_NS,
		.ctrl_interval_ns = CTRL_NS,
		.fc_frames = FC_FRAMES,
		.line_bps = CLOCK_LINE_BPS,
		.wire_overhead_bytes = 38,
		.adapt_rate = adapt,
		.release = release_cb,
	};
	struct sl_link *l = sl_link_create(&c);
	struct sl_link_tx_frame out[8];
	struct sl_link_tx_desc in[8];
	static uint8_t body[BODY];
	static int h[8];
	unsigned taken;

	assert_non_null(l);
	n_released = 0;
	sync_rx(l, fmt);
	if (adapt) {
		assert_int_equal(sl_link_send_bps(l), CLOCK_LINE_BPS / SL_LINK_RATE_STEP_DIV);
		assert_int_equal(ramp_to_line(l, now, CLOCK_LINE_BPS), SL_LINK_RATE_STEP_DIV - 1);
	}
	assert_int_equal(sl_link_send_bps(l), CLOCK_LINE_BPS);
	while (tx(l, *now, out, 8)) /* the 16 warm-up fillers, if the ramp did not send them */
		;
	for (unsigned i = 0; i < 8; i++)
		in[i] = (struct sl_link_tx_desc){&h[i], body, BODY, SL_WIRE_META_VALID};
	assert_int_equal(sl_link_tx_burst(l, *now, in, 8, &taken, out, 8), 8);
	*data_bytes = out[0].hdr_len + 38u + BODY;
	return l;
}

static struct sl_link *
clocked_sender(uint8_t order, bool adapt, uint64_t *now, uint64_t *data_bytes)
{
	return clocked_sender_fmt(&faithful, order, adapt, now, data_bytes);
}

/*
 * Run a replay of the 8 frames from ID 16 until its tail has lasted wait_ns (0: until the replay
 * ends by itself, the flag still up). Returns the tail's length so far, ns.
 */
static uint64_t
run_tail(struct sl_link *l, uint64_t *now, uint64_t wait_ns)
{
	struct sl_link_tx_frame out[64];
	uint64_t start = 0, repeats = sl_link_stat(l, replay_repeats);
	unsigned slots = 0;

	feed_ctrl_n(l, &extended, 16, SL_WIRE_KEY_RETRANS_REQ, 16, 8);
	for (;; *now += 100) {
		unsigned n = tx(l, *now, out, 64);

		for (unsigned i = 0; i < n; i++)
			if (slots++ == 2 * 8)
				start = *now;
		if (start &&
		    (wait_ns ? *now >= start + wait_ns : sl_link_stat(l, replay_repeats) > repeats))
			return *now - start;
		assert_true(slots < 100000);
	}
}

/*
 * Extended mode learns how long its tails must wait: a tail that ended as the peer's flag fell
 * 5.1 us after it began makes the next one, whose flag stays up, end after the smoothed wait
 * plus four deviations (RFC 6298's estimator: 5.1 + 4 x 2.55 us), and repeat; without a sample it
 * is RIFL's 2^k / 2 IDLE slots (1024 IDLE frames at 8 Gbit/s, over 40 us).
 */
static void
sl_link_tx_burst__an_extended_tail_lasts_the_measured_wait(void **state)
{
	uint64_t now = SL_NS_PER_MS, data_bytes, rifl_ns, tail_ns;
	struct sl_link *l = clocked_sender_fmt(&extended, 11, false, &now, &data_bytes);
	struct sl_link_tx_frame out[64];

	(void)state;
	rifl_ns = 1024 * data_bytes;
	tail_ns = run_tail(l, &now, 0); /* nothing measured yet: an IDLE is 40 line bytes or more */
	assert_true(tail_ns >= 1024 * 40 && tail_ns <= rifl_ns);
	assert_int_equal(sl_link_replay_tail_ns(l), 0);
	feed_ctrl_n(l, &extended, 16, SL_WIRE_KEY_IDLE, 0, 16);
	tx(l, now += 100, out, 64);
	assert_int_equal(sl_link_state(l), SL_LINK_NORMAL);
	run_tail(l, &now, 5 * SL_NS_PER_US);
	feed_ctrl_n(l, &extended, 16, SL_WIRE_KEY_IDLE, 0, 16); /* the flag falls */
	tx(l, now += 100, out, 64);                             /* the next slot: 5.1 us */
	assert_int_equal(sl_link_state(l), SL_LINK_NORMAL);
	assert_true(sl_link_replay_tail_ns(l) >= 15 * SL_NS_PER_US &&
		    sl_link_replay_tail_ns(l) <= 16 * SL_NS_PER_US);
	tail_ns = run_tail(l, &now, 0);
	assert_true(tail_ns >= 15 * SL_NS_PER_US && tail_ns <= 16 * SL_NS_PER_US);
	sl_link_free(l);
}

/*
 * RIFL's slot clock: with line_bps set, a replay (ring frames and IDLE slots) leaves at the
 * line's pace after one burst's credit, never as fast as the caller asks; an IDLE slot takes
 * as long as a data frame, as on RIFL's wire of equal slots.
 */
static void
sl_link_tx_burst__replay_paced_at_the_line(void **state)
{
	uint64_t bytes = 0, now = SL_NS_PER_MS, t, data_bytes;
	/* a replay of 2 x 24 + 1024 slots outlasts the 50 us below */
	struct sl_link *l = clocked_sender(11, false, &now, &data_bytes);
	struct sl_link_tx_frame out[512];
	unsigned n, sent = 0, idle = 0;

	(void)state;
	feed_ctrl_n(l, &faithful, 16, SL_WIRE_KEY_RETRANS_REQ, 0, 8);
	assert_int_equal(sl_link_state(l), SL_LINK_RETRANS);
	now += SL_NS_PER_MS;
	/* One call: only what SL_LINK_SLOT_BURST_NS of line time holds. */
	n = tx(l, now, out, 512);
	for (unsigned i = 0; i < n; i++)
		bytes += slot_bytes(&out[i], data_bytes);
	assert_true(n > 0 && n < 512);
	assert_true(bytes >= SL_LINK_SLOT_BURST_NS && bytes < SL_LINK_SLOT_BURST_NS + data_bytes);
	t = sl_link_next_tx_ns(l);
	assert_true(t > now);
	assert_int_equal(tx(l, t - 1, out, 512), 0);
	/* Then one slot per data frame time: over 50 us, about 50 us of line bytes. */
	bytes = 0;
	for (now = t; now < t + 50 * SL_NS_PER_US; now += 1000) {
		n = tx(l, now, out, 512);
		sent += n;
		for (unsigned i = 0; i < n; i++) {
			bytes += slot_bytes(&out[i], data_bytes);
			idle += out[i].kind == SL_LINK_FRAME_CTRL;
		}
	}
	assert_true(sent > 0 && idle > 0);
	assert_true(bytes >= 49 * 1000 && bytes <= 51 * 1000 + data_bytes);
	/* No slot cheaper than a data frame: at most 50 us / (its line time) + one. */
	assert_true(sent <= 50 * 1000 / data_bytes + 1);
	assert_int_equal(sl_link_stat(l, rate_cuts), 0);
	assert_int_equal(sl_link_send_bps(l), CLOCK_LINE_BPS);
	sl_link_free(l);
}

/*
 * sl_link_tx_budget is what the slot clock sends now: after an idle millisecond, the burst
 * credit's worth of data frames (one now, one for each frame time of SL_LINK_SLOT_BURST_NS);
 * offered more, the link takes exactly that many; then none until the line is free, and one
 * more for each frame time after. With no clock there is no bound.
 */
static void
sl_link_tx_budget__is_what_the_slot_clock_sends_now(void **state)
{
	enum { MAX = 512 };
	uint64_t now = SL_NS_PER_MS, data_bytes, free_ns;
	struct sl_link *l = clocked_sender(11, false, &now, &data_bytes);
	struct sl_link_conf c = {.fmt = faithful,
				 .ring_order = 11,
				 .replay = SL_LINK_REPLAY_RING,
				 .keepalive_ns = KEEPALIVE_NS,
				 .ctrl_interval_ns = CTRL_NS,
				 .fc_frames = FC_FRAMES,
				 .release = release_cb};
	static struct sl_link_tx_frame out[MAX];
	static struct sl_link_tx_desc in[MAX];
	static uint8_t body[BODY];
	static int h[MAX];
	struct sl_link *free_running;
	unsigned taken, budget;

	(void)state;
	now += SL_NS_PER_MS;
	budget = sl_link_tx_budget(l, now);
	/* a byte per ns: a data frame's time is data_bytes ns */
	assert_int_equal(budget, 1 + SL_LINK_SLOT_BURST_NS / data_bytes);
	assert_true(budget + 8 <= MAX);
	for (unsigned i = 0; i < budget + 8; i++)
		in[i] = (struct sl_link_tx_desc){&h[i], body, BODY, SL_WIRE_META_VALID};
	sl_link_tx_burst(l, now, in, budget + 8, &taken, out, MAX);
	assert_int_equal(taken, budget);
	/* the line is free again once budget frames have taken their time after the credit */
	free_ns = now - SL_LINK_SLOT_BURST_NS + budget * data_bytes;
	assert_true(free_ns > now && free_ns <= now + data_bytes);
	assert_int_equal(sl_link_tx_budget(l, now), 0);
	assert_int_equal(sl_link_tx_budget(l, free_ns - 1), 0);
	assert_int_equal(sl_link_tx_budget(l, free_ns), 1);
	assert_int_equal(sl_link_tx_budget(l, free_ns + 2 * data_bytes), 3);
	sl_link_free(l);
	free_running = sl_link_create(&c);
	assert_non_null(free_running);
	assert_int_equal(sl_link_tx_budget(free_running, now), UINT32_MAX);
	sl_link_free(free_running);
}

/*
 * silent_frames: once that many new frames went out with nothing from the peer meanwhile (its
 * lcore stalled: more would pile up in front of it and outrun the ring before it could NACK),
 * new data waits; any well-formed frame from the peer lets it go again. Control frames are not
 * held, and time alone holds nothing.
 */
static void
sl_link_tx_burst__new_data_waits_for_a_silent_peer(void **state)
{
	struct sl_link_conf c = {
		.fmt = faithful,
		.ring_order = ORDER,
		.replay = SL_LINK_REPLAY_RING,
		.keepalive_ns = KEEPALIVE_NS,
		.silent_frames = 20,
		.ctrl_interval_ns = CTRL_NS,
		.fc_frames = FC_FRAMES,
		.release = release_cb,
	};
	struct sl_link *l = sl_link_create(&c);
	struct sl_link_tx_frame out[64];
	struct sl_link_tx_desc in[8];
	static uint8_t body[BODY];
	struct fr idle;
	unsigned taken;
	int h[8];

	(void)state;
	assert_non_null(l);
	n_released = 0;
	sync_rx(l, &faithful);
	for (unsigned i = 0; i < 8; i++)
		in[i] = (struct sl_link_tx_desc){&h[i], body, BODY, SL_WIRE_META_VALID};
	/* 16 warm-up fillers and 4 payloads: 20 unanswered; the rest waits, however long. */
	assert_int_equal(sl_link_tx_burst(l, 0, in, 8, &taken, out, 64), 16 + 4);
	assert_int_equal(taken, 4);
	assert_int_equal(sl_link_tx_burst(l, 10 * KEEPALIVE_NS, in + 4, 4, &taken, out, 64), 1);
	assert_int_equal(taken, 0);
	assert_int_equal(out[0].kind, SL_LINK_FRAME_CTRL); /* the keepalive still goes */
	assert_int_equal(sl_link_stat(l, silent_holds), 1);
	/* The peer is heard (any well-formed frame): the payloads go, the hold counted once. */
	idle = ctrl_frame(&faithful, 16, SL_WIRE_KEY_IDLE, 0);
	feed(l, 11 * KEEPALIVE_NS, &idle, NULL);
	assert_int_equal(sl_link_tx_burst(l, 11 * KEEPALIVE_NS, in + 4, 4, &taken, out, 64), 4);
	assert_int_equal(taken, 4);
	assert_int_equal(sl_link_stat(l, silent_holds), 1);
	sl_link_free(l);
}

/* Without adapt_rate (RIFL; memif in sluiced) the clock starts at the line and a repeat keeps it.
 */
static void
sl_link_tx_burst__without_adapt_rate_the_clock_keeps_the_line(void **state)
{
	uint64_t now = SL_NS_PER_MS, data_bytes;
	struct sl_link *l = clocked_sender(ORDER, false, &now, &data_bytes);
	struct sl_link_tx_frame out[64];

	(void)state;
	feed_ctrl_n(l, &faithful, 16, SL_WIRE_KEY_RETRANS_REQ, 0, 8);
	for (; sl_link_stat(l, replay_repeats) < 3; now += 100)
		tx(l, now, out, 1);
	assert_int_equal(sl_link_stat(l, rate_cuts), 0);
	assert_int_equal(sl_link_send_bps(l), CLOCK_LINE_BPS);
	sl_link_free(l);
}

/* Run tx_burst every step_ns over span_ns from *now; the frames' line bytes (slot_bytes()). */
static uint64_t
tx_for(struct sl_link *l, uint64_t *now, uint64_t span_ns, uint64_t step_ns, uint64_t data_bytes)
{
	struct sl_link_tx_frame out[512];
	uint64_t end = *now + span_ns, bytes = 0;

	for (; *now < end; *now += step_ns) {
		unsigned n = tx(l, *now, out, 512);

		for (unsigned i = 0; i < n; i++)
			bytes += slot_bytes(&out[i], data_bytes);
	}
	return bytes;
}

/*
 * link_rate.c, adapt_rate: each replay that ends with the peer's flag still up halves the slot
 * clock's rate, down to the line / SL_LINK_RATE_FLOOR_DIV, and frames then leave at that rate; once
 * the peer recovers, NORMAL adds the line / SL_LINK_RATE_STEP_DIV each SL_LINK_RATE_STEP_NS
 * until the line again. A replay the peer recovers from costs nothing.
 */
static void
sl_link_tx_burst__repeated_replays_halve_the_rate_normal_restores_it(void **state)
{
	uint64_t now = SL_NS_PER_MS, data_bytes, bytes, cuts = 0, steps;
	struct sl_link *l = clocked_sender(ORDER, true, &now, &data_bytes);
	struct sl_link_tx_frame out[64];

	(void)state;
	feed_ctrl_n(l, &faithful, 16, SL_WIRE_KEY_RETRANS_REQ, 0, 8);
	/* Each replay is 2 x 24 + 16 = 64 slots; the flag stays up through all of them. */
	while (sl_link_send_bps(l) > CLOCK_LINE_BPS / SL_LINK_RATE_FLOOR_DIV) {
		uint64_t before = sl_link_send_bps(l);

		for (; sl_link_stat(l, rate_cuts) == cuts; now += 100)
			tx(l, now, out, 1); /* one frame a call: the cut is seen when it happens */
		assert_int_equal(sl_link_stat(l, rate_cuts), ++cuts);
		assert_int_equal(sl_link_stat(l, replay_repeats), cuts);
		assert_int_equal(sl_link_send_bps(l), before / 2);
	}
	assert_int_equal(cuts, 6); /* 64 = 2^6 */
	/* At the floor (125 Mbit/s, a byte per 64 ns): 1 ms holds 15 625 line bytes. */
	now = sl_link_next_tx_ns(l);
	bytes = tx_for(l, &now, SL_NS_PER_MS, 1000, data_bytes);
	assert_true(bytes >= 15625 - data_bytes && bytes <= 15625 + data_bytes);
	cuts = sl_link_stat(l, rate_cuts); /* the replays of that millisecond repeated too */
	/* The next replay that repeats: the floor holds. */
	while (sl_link_stat(l, rate_cuts) == cuts)
		tx_for(l, &now, 1000, 1000, data_bytes);
	assert_int_equal(sl_link_send_bps(l), CLOCK_LINE_BPS / SL_LINK_RATE_FLOOR_DIV);
	cuts++;
	/* The peer recovers (16 regular frames lower the flag); the replay runs out, no cut. */
	feed_ctrl_n(l, &faithful, 16, SL_WIRE_KEY_IDLE, 0, 16);
	tx_for(l, &now, 64 * data_bytes * 1024 + 1000, 1000, data_bytes);
	assert_int_equal(sl_link_state(l), SL_LINK_NORMAL);
	assert_int_equal(sl_link_stat(l, rate_cuts), cuts);
	/* NORMAL (it began as the replay ran out): a step per SL_LINK_RATE_STEP_NS, back to the
	 * line in at most 64 steps from the floor. */
	steps = ramp_to_line(l, &now, CLOCK_LINE_BPS);
	assert_true(steps > 0 && steps <= SL_LINK_RATE_STEP_DIV);
	sl_link_free(l);
}

static void
sl_link_tx_burst__replay_whole_ring_interleaved_with_tail(void **state)
{
	struct sl_link_tx_frame out[128];
	int h[48];
	struct sl_link *l = sender(&faithful, SL_LINK_REPLAY_RING, 48, h); /* IDs 0..63 sent */
	unsigned n;

	(void)state;
	feed_ctrl_n(l, &faithful, 16, SL_WIRE_KEY_RETRANS_REQ, 0, 7);
	assert_int_equal(sl_link_state(l), SL_LINK_NORMAL);
	feed_ctrl_n(l, &faithful, 16, SL_WIRE_KEY_RETRANS_REQ, 0, 1);
	assert_int_equal(sl_link_state(l), SL_LINK_RETRANS);
	assert_int_equal(tx(l, 0, out, 1), 1);
	/* The peer recovers: 16 regular frames lower the flag; the replay still runs out. */
	feed_ctrl_n(l, &faithful, 16, SL_WIRE_KEY_IDLE, 0, 16);
	n = 1 + tx(l, 0, out + 1, 127);
	/* 2 x 32 interleaved slots + 16 tail slots, then nothing more to send. */
	assert_int_equal(n, 2 * 32 + 16);
	for (unsigned s = 0; s < 64; s++) {
		if (s % 2 == 0) {
			assert_true(out[s].is_replay);
			assert_int_equal(out[s].id, 32 + s / 2); /* oldest first */
			assert_ptr_equal(out[s].handle, &h[16 + s / 2]);
		} else {
			assert_int_equal(out[s].kind, SL_LINK_FRAME_CTRL);
			assert_int_equal(out[s].hdr[3], SL_WIRE_KEY_IDLE);
			assert_int_equal(out[s].id, 32 + (s + 1) / 2); /* next data frame's ID */
		}
	}
	for (unsigned s = 64; s < 80; s++) {
		assert_int_equal(out[s].kind, SL_LINK_FRAME_CTRL);
		assert_int_equal(out[s].id, 64);
	}
	assert_int_equal(sl_link_stat(l, replays), 1);
	assert_int_equal(sl_link_stat(l, tx_replayed), 32);
	assert_int_equal(sl_link_stat(l, replay_repeats), 0);
	assert_int_equal(sl_link_state(l), SL_LINK_NORMAL);
	sl_link_free(l);
}

static void
sl_link_tx_burst__replay_repeats_while_nack_keeps_arriving(void **state)
{
	struct sl_link_tx_frame out[128];
	int h[48];
	struct sl_link *l = sender(&faithful, SL_LINK_REPLAY_RING, 48, h);

	(void)state;
	feed_ctrl_n(l, &faithful, 16, SL_WIRE_KEY_RETRANS_REQ, 0, 8);
	assert_int_equal(tx(l, 0, out, 80), 80);
	assert_int_equal(sl_link_stat(l, replay_repeats), 1);
	assert_int_equal(tx(l, 0, out, 1), 1); /* second round starts with the oldest frame */
	assert_true(out[0].is_replay);
	assert_int_equal(out[0].id, 32);
	assert_int_equal(sl_link_stat(l, replays), 2);
	sl_link_free(l);
}

static void
sl_link_tx_burst__replay_from_first_missing_in_extended_mode(void **state)
{
	struct sl_link_tx_frame out[128];
	int h[48];
	struct sl_link *l = sender(&extended, SL_LINK_REPLAY_MISSING, 48, h);

	(void)state;
	/*
	 * The peer needs 50 onwards (its thr - 16): 14 frames in 28 slots. Its flag fell during
	 * them, so no tail follows (in faithful mode it would: RIFL's 2^k / 2 slots).
	 */
	feed_ctrl_n(l, &extended, 16, SL_WIRE_KEY_RETRANS_REQ, 50, 8);
	assert_int_equal(tx(l, 0, out, 1), 1);
	feed_ctrl_n(l, &extended, 16, SL_WIRE_KEY_IDLE, 0, 16);
	assert_int_equal(1 + tx(l, 0, out + 1, 127), 2 * 14);
	assert_int_equal(out[0].id, 50);
	assert_int_equal(out[26].id, 63);
	assert_int_equal(sl_link_stat(l, tx_replayed), 14);
	assert_int_equal(sl_link_stat(l, nack_outside_ring), 0);
	assert_int_equal(sl_link_state(l), SL_LINK_NORMAL);
	sl_link_free(l);
	/* With the flag still up, the tail runs: 16 slots. */
	l = sender(&extended, SL_LINK_REPLAY_MISSING, 48, h);
	feed_ctrl_n(l, &extended, 16, SL_WIRE_KEY_RETRANS_REQ, 50, 8);
	assert_int_equal(tx(l, 0, out, 2 * 14 + 16), 2 * 14 + 16);
	assert_int_equal(sl_link_stat(l, replay_repeats), 1);
	sl_link_free(l);
	/*
	 * The peer took the replay up to 55 and failed again there (a replayed frame was lost):
	 * its NACK now names 55, and the replay starts again from it rather than sending the rest
	 * of a replay the peer can no longer take.
	 */
	l = sender(&extended, SL_LINK_REPLAY_MISSING, 48, h);
	feed_ctrl_n(l, &extended, 16, SL_WIRE_KEY_RETRANS_REQ, 50, 8);
	assert_int_equal(tx(l, 0, out, 1), 1);
	assert_int_equal(out[0].id, 50);
	feed_ctrl_n(l, &extended, 16, SL_WIRE_KEY_RETRANS_REQ, 55, 8);
	assert_int_equal(tx(l, 0, out, 1), 1);
	assert_true(out[0].is_replay);
	assert_int_equal(out[0].id, 55);
	assert_int_equal(sl_link_stat(l, replays), 2);
	/* A NACK behind the replay (queued, older) does not restart it. */
	feed_ctrl_n(l, &extended, 16, SL_WIRE_KEY_RETRANS_REQ, 52, 8);
	assert_int_equal(tx(l, 0, out, 2), 2);
	assert_int_equal(out[1].id, 56);
	assert_int_equal(sl_link_stat(l, replays), 2);
	sl_link_free(l);
	/*
	 * The peer's data goes on after its NACK run (its TX is not in error): the flag stays up
	 * through those frames, and the replay still starts from the run's ID, not the data
	 * frames' argument 0 (which fell outside the ring and replayed all of it).
	 */
	l = sender(&extended, SL_LINK_REPLAY_MISSING, 48, h);
	feed_ctrl_n(l, &extended, 16, SL_WIRE_KEY_RETRANS_REQ, 50, 8);
	{
		struct fr d = data_frame(&extended, 16, 0x5a);

		feed(l, 0, &d, NULL);
	}
	assert_int_equal(tx(l, 0, out, 1), 1);
	assert_true(out[0].is_replay);
	assert_int_equal(out[0].id, 50);
	assert_int_equal(sl_link_stat(l, nack_outside_ring), 0);
	sl_link_free(l);
	/* An ID outside the ring falls back to the whole ring. */
	l = sender(&extended, SL_LINK_REPLAY_MISSING, 48, h);
	feed_ctrl_n(l, &extended, 16, SL_WIRE_KEY_RETRANS_REQ, 5, 8);
	tx(l, 0, out, 1);
	assert_int_equal(out[0].id, 32);
	assert_int_equal(sl_link_stat(l, nack_outside_ring), 1);
	sl_link_free(l);
}

static void
sl_link_tx_burst__replay_during_warmup_carries_all_16_fillers(void **state)
{
	struct sl_link_tx_frame out[64];
	struct sl_link *l = mk(&faithful, SL_LINK_REPLAY_RING);

	(void)state;
	sync_rx(l, &faithful);
	assert_int_equal(tx(l, 0, out, 8), 8); /* fillers 0..7 sent */
	/* The peer lost one of them: it rolls back to 0 and needs 0..15 before it can recover. */
	feed_ctrl_n(l, &faithful, 16, SL_WIRE_KEY_RETRANS_REQ, 0, 8);
	assert_int_equal(tx(l, 0, out, 1), 1);
	feed_ctrl_n(l, &faithful, 16, SL_WIRE_KEY_IDLE, 0, 16);
	assert_int_equal(1 + tx(l, 0, out + 1, 63), 2 * 16 + 16);
	for (unsigned i = 0; i < 16; i++) {
		assert_true(out[2 * i].is_replay);
		assert_int_equal(out[2 * i].kind, SL_LINK_FRAME_FILLER);
		assert_int_equal(out[2 * i].id, i);
	}
	assert_int_equal(sl_link_stat(l, tx_filler), 16);
	sl_link_free(l);
}

static void
sl_link_tx_burst__nack_runs_while_rx_in_error(void **state)
{
	struct sl_link_tx_frame out[2 * SL_LINK_CTRL_RUN];
	int h[1];
	struct sl_link *l = sender(&extended, SL_LINK_REPLAY_RING, 1, h);
	struct fr f = data_frame(&extended, 17, 0);
	uint64_t every = CTRL_NS; /* the sender's ctrl_interval_ns */

	(void)state;
	feed(l, 0, &f, NULL); /* 16 missing */
	assert_int_equal(sl_link_state(l), SL_LINK_SEND_RETRANS);
	/* One run at once: more than the peer's filter needs, then nothing until the next. */
	assert_int_equal(tx(l, 0, out, 2 * SL_LINK_CTRL_RUN), SL_LINK_CTRL_RUN);
	for (unsigned i = 0; i < SL_LINK_CTRL_RUN; i++) {
		struct sl_wire_frame d;

		assert_int_equal(sl_wire_decode(&extended, out[i].hdr, out[i].hdr_len, &d),
				 SL_WIRE_OK);
		assert_int_equal(d.key, SL_WIRE_KEY_RETRANS_REQ);
		assert_int_equal(d.arg, 0); /* thr 16 - 16: the first ID this end needs */
	}
	assert_int_equal(sl_link_next_tx_ns(l), every);
	assert_int_equal(tx(l, every - 1, out, 2 * SL_LINK_CTRL_RUN), 0);
	assert_int_equal(tx(l, every, out, 2 * SL_LINK_CTRL_RUN), SL_LINK_CTRL_RUN);
	assert_int_equal(sl_link_stat(l, tx_retrans_req), 2 * SL_LINK_CTRL_RUN);
	/*
	 * The replay brings this end back in step (0..15 again, then 16 delivered) and 17 is lost:
	 * a new episode, whose NACK names a new rollback point and goes at once, not an interval
	 * after the last run.
	 */
	for (uint32_t id = 0; id <= 16; id++) {
		f = data_frame(&extended, id, 0);
		feed(l, every, &f, NULL);
	}
	assert_int_equal(sl_link_stat(l, rx_recoveries), 1);
	f = data_frame(&extended, 18, 0);
	feed(l, every, &f, NULL);
	assert_int_equal(tx(l, every + 1, out, 2 * SL_LINK_CTRL_RUN), SL_LINK_CTRL_RUN);
	for (unsigned i = 0; i < SL_LINK_CTRL_RUN; i++) {
		struct sl_wire_frame d;

		assert_int_equal(sl_wire_decode(&extended, out[i].hdr, out[i].hdr_len, &d),
				 SL_WIRE_OK);
		assert_int_equal(d.key, SL_WIRE_KEY_RETRANS_REQ);
		assert_int_equal(d.arg, 1); /* thr 17 - 16 */
	}
	assert_int_equal(tx(l, every + 2, out, 2 * SL_LINK_CTRL_RUN), 0);
	sl_link_free(l);
}

/*
 * A NACK run that brings no replay is repeated after the answer time learnt on earlier
 * episodes, not ctrl_interval_ns: the first run of an episode answered 100 ns later (its first
 * replayed frame verifies) gives a wait of 100 + 4 x 50 ns; the next episode's run that goes
 * unanswered is repeated after it, then after twice it, then never later than the interval.
 * An answer to a repeated run is no sample (Karn's rule): it may answer either run.
 */
static void
sl_link_tx_burst__lost_nack_runs_repeat_after_the_measured_wait(void **state)
{
	struct sl_link_tx_frame out[2 * SL_LINK_CTRL_RUN];
	int h[1];
	struct sl_link *l = sender(&extended, SL_LINK_REPLAY_MISSING, 1, h);
	struct fr f = data_frame(&extended, 17, 0);
	uint64_t t = 1000;

	(void)state;
	feed(l, t, &f, NULL); /* 16 missing: NACK from 0 */
	assert_int_equal(tx(l, t, out, 2 * SL_LINK_CTRL_RUN), SL_LINK_CTRL_RUN);
	assert_int_equal(sl_link_next_tx_ns(l), t + CTRL_NS); /* nothing learnt yet */
	assert_int_equal(sl_link_nack_wait_ns(l), 0);
	for (uint32_t id = 0; id <= 17; id++) {
		f = data_frame(&extended, id, 0);
		feed(l, t + 100, &f, NULL);
	}
	assert_int_equal(sl_link_stat(l, rx_recoveries), 1);
	assert_int_equal(sl_link_nack_wait_ns(l), 300);
	/* A new episode (18 missing), unanswered: repeats at +300, +600, then the interval. */
	t = 5000;
	f = data_frame(&extended, 19, 0);
	feed(l, t, &f, NULL);
	assert_int_equal(tx(l, t, out, 2 * SL_LINK_CTRL_RUN), SL_LINK_CTRL_RUN);
	assert_int_equal(sl_link_next_tx_ns(l), t + 300);
	assert_int_equal(tx(l, t + 299, out, 2 * SL_LINK_CTRL_RUN), 0);
	assert_int_equal(tx(l, t += 300, out, 2 * SL_LINK_CTRL_RUN), SL_LINK_CTRL_RUN);
	assert_int_equal(sl_link_next_tx_ns(l), t + 500); /* 600, capped at CTRL_NS */
	assert_int_equal(tx(l, t += 500, out, 2 * SL_LINK_CTRL_RUN), SL_LINK_CTRL_RUN);
	assert_int_equal(sl_link_next_tx_ns(l), t + CTRL_NS);
	/* The answer, long after the first run: not a sample. */
	for (uint32_t id = 3; id <= 19; id++) {
		f = data_frame(&extended, id, 0);
		feed(l, t + 10000, &f, NULL);
	}
	assert_int_equal(sl_link_stat(l, rx_recoveries), 2);
	assert_int_equal(sl_link_nack_wait_ns(l), 300);
	sl_link_free(l);
}

static void
sl_link_tx_burst__keepalive_bounds_idle_gaps(void **state)
{
	struct sl_link_tx_frame out[4];
	int h[1];
	struct sl_link *l = sender(&faithful, SL_LINK_REPLAY_RING, 1, h);
	struct sl_link *peer = mk(&faithful, SL_LINK_REPLAY_RING);

	(void)state;
	assert_int_equal(tx(l, KEEPALIVE_NS - 1, out, 4), 0);
	assert_int_equal(sl_link_next_tx_ns(l), KEEPALIVE_NS);
	assert_int_equal(tx(l, KEEPALIVE_NS, out, 4), 1);
	assert_int_equal(out[0].kind, SL_LINK_FRAME_CTRL);
	assert_int_equal(out[0].id, 17);
	assert_int_equal(sl_link_stat(l, tx_keepalive), 1);
	assert_int_equal(tx(l, KEEPALIVE_NS + 1, out, 4), 0);
	/* A receiver that lost the last frame (17's predecessor) learns it from the keepalive. */
	sync_rx(peer, &faithful);
	{
		struct fr f;

		f.len = 46;
		memset(f.b, 0, sizeof(f.b));
		memcpy(f.b, out[0].hdr, out[0].hdr_len);
		feed(peer, 0, &f, NULL);
	}
	assert_int_equal(sl_link_stat(peer, rx_bad_ctrl), 1);
	assert_int_equal(sl_link_state(peer), SL_LINK_SEND_RETRANS);
	sl_link_free(l);
	sl_link_free(peer);
}

static void
sl_link_rx_burst__flow_control_thresholds(void **state)
{
	struct sl_link *l = mk(&faithful, SL_LINK_REPLAY_RING);
	struct sl_link_tx_frame out[64];
	int h[64];
	uint32_t id = 16;

	(void)state;
	sync_rx(l, &faithful);
	tx(l, 0, out, 64); /* warm-up fillers */
	/* Thr_ON = 2/3 x 30 = 20: the 20th undelivered frame triggers a pause frame. */
	for (; id < 16 + 19; id++) {
		struct fr f = data_frame(&faithful, id, 5);

		assert_int_equal(feed(l, 0, &f, &h[id - 16]), 1);
	}
	assert_int_equal(tx(l, 0, out, 64), 0);
	{
		struct fr f = data_frame(&faithful, id++, 5);

		assert_int_equal(feed(l, 0, &f, &h[19]), 1);
	}
	assert_int_equal(sl_link_rx_occupancy(l), 20);
	assert_int_equal(tx(l, 0, out, 64), 1);
	assert_int_equal(out[0].kind, SL_LINK_FRAME_FILLER);
	assert_int_equal(out[0].hdr[2], SL_WIRE_FC_PAUSE);
	/* Frames up to S_FC = 30 are still taken; the 31st is refused, not dropped. */
	for (; id < 16 + 30; id++) {
		struct fr f = data_frame(&faithful, id, 5);

		assert_int_equal(feed(l, 0, &f, &h[id - 16]), 1);
	}
	{
		struct fr f = data_frame(&faithful, id, 5);

		assert_int_equal(feed(l, 0, &f, &h[30]), 0);
		assert_int_equal(sl_link_stat(l, rx_fc_overflow), 1);
		assert_int_equal(sl_link_state(l), SL_LINK_SEND_RETRANS);
	}
	/* Consuming down to Thr_OFF = 10 sends resume. */
	sl_link_rx_consumed(l, 19);
	assert_int_equal(sl_link_stat(l, tx_fc_resume), 0);
	sl_link_rx_consumed(l, 1);
	assert_int_equal(sl_link_rx_occupancy(l), 10);
	/* The RX is in error (the refused frame): the resume waits behind the NACKs... */
	assert_int_equal(tx(l, 0, out, 4), 4);
	assert_int_equal(out[0].kind, SL_LINK_FRAME_CTRL);
	/* ...and goes out once the replay has brought the RX back (16 verified frames). */
	for (uint32_t r = id - 16; r < id; r++) {
		struct fr f = data_frame(&faithful, r, 5);

		assert_int_equal(feed(l, 0, &f, NULL), 0);
	}
	assert_int_equal(tx(l, 0, out, 1), 1);
	assert_int_equal(out[0].hdr[2], SL_WIRE_FC_RESUME);
	sl_link_free(l);
}

static void
sl_link_tx_burst__remote_fc_pause_stops_new_data(void **state)
{
	struct sl_link_tx_frame out[64];
	struct sl_link_tx_desc in[2];
	uint8_t body[BODY] = {0};
	int h[2];
	unsigned taken;
	struct sl_link *l = mk(&faithful, SL_LINK_REPLAY_RING);
	struct fr f;

	(void)state;
	sync_rx(l, &faithful);
	tx(l, 0, out, 64);
	f = filler_frame(&faithful, 16, SL_WIRE_FC_PAUSE);
	feed(l, 0, &f, NULL);
	assert_true(sl_link_tx_fc_paused(l));
	in[0] = (struct sl_link_tx_desc){&h[0], body, BODY, SL_WIRE_META_VALID};
	in[1] = (struct sl_link_tx_desc){&h[1], body, BODY, SL_WIRE_META_EOM_FULL};
	assert_int_equal(sl_link_tx_burst(l, 1, in, 2, &taken, out, 64), 0);
	assert_int_equal(taken, 0);
	/* Keepalives still flow (they detect a lost resume). */
	assert_int_equal(sl_link_tx_burst(l, KEEPALIVE_NS, in, 2, &taken, out, 64), 1);
	assert_int_equal(out[0].kind, SL_LINK_FRAME_CTRL);
	f = filler_frame(&faithful, 17, SL_WIRE_FC_RESUME);
	feed(l, 0, &f, NULL);
	assert_false(sl_link_tx_fc_paused(l));
	assert_int_equal(sl_link_tx_burst(l, KEEPALIVE_NS, in, 2, &taken, out, 64), 2);
	assert_int_equal(taken, 2);
	sl_link_free(l);
}

static void
sl_link_rx_burst__peer_restart_reinitializes(void **state)
{
	struct sl_link_tx_frame out[64];
	int h[8];
	struct sl_link *l = sender(&faithful, SL_LINK_REPLAY_RING, 8, h);
	struct fr f = data_frame(&faithful, 16, 6);

	(void)state;
	/* Before anything is delivered from the peer, its PAUSE_REQs are a startup, not a restart.
	 */
	feed_ctrl_n(l, &faithful, 16, SL_WIRE_KEY_PAUSE_REQ, 0, 8);
	assert_int_equal(sl_link_stat(l, peer_restarts), 0);
	feed_ctrl_n(l, &faithful, 16, SL_WIRE_KEY_IDLE, 0, 16);
	assert_int_equal(feed(l, 0, &f, NULL), 1);
	/* The peer restarts: PAUSE_REQ with ID 0 fails in sync (error), then counts: 8 -> reinit.
	 */
	feed_ctrl_n(l, &faithful, 0, SL_WIRE_KEY_PAUSE_REQ, 0, 9);
	assert_int_equal(sl_link_stat(l, peer_restarts), 1);
	assert_int_equal(sl_link_state(l), SL_LINK_INIT);
	n_released = 0;
	tx(l, 0, out, 64);
	assert_int_equal(sl_link_stat(l, reinit_aborted), 8);
	assert_int_equal(n_released, 8);
	/* Fresh again: the peer's next PAUSE_REQs (ID 0) verify and bring the RX up. */
	feed_ctrl_n(l, &faithful, 0, SL_WIRE_KEY_PAUSE_REQ, 0, 8);
	assert_int_equal(sl_link_state(l), SL_LINK_PAUSE);
	assert_int_equal(sl_link_stat(l, peer_restarts), 1);
	sl_link_free(l);
}

static void
sl_link_rx_burst__pause_told_again_to_a_restarted_peer(void **state)
{
	struct sl_link_tx_frame out[64];
	struct sl_link *l = mk(&faithful, SL_LINK_REPLAY_RING);

	(void)state;
	sync_rx(l, &faithful);
	for (uint32_t id = 16; id < 36; id++) {
		struct fr f = data_frame(&faithful, id, 8);

		assert_int_equal(feed(l, 0, &f, NULL), 1);
	}
	assert_int_equal(tx(l, 0, out, 64), 17); /* FC pause first, then the warm-up */
	assert_int_equal(out[0].hdr[2], SL_WIRE_FC_PAUSE);
	/* The peer restarts while the consumer queue is still full (20 of 30). */
	feed_ctrl_n(l, &faithful, 0, SL_WIRE_KEY_PAUSE_REQ, 0, 9);
	assert_int_equal(sl_link_stat(l, peer_restarts), 1);
	feed_ctrl_n(l, &faithful, 0, SL_WIRE_KEY_PAUSE_REQ, 0, 8);
	feed_ctrl_n(l, &faithful, 0, SL_WIRE_KEY_IDLE, 0, 16);
	assert_int_equal(tx(l, 0, out, 64), 17);
	assert_int_equal(out[0].id, 0);
	assert_int_equal(out[0].hdr[2], SL_WIRE_FC_PAUSE);
	assert_int_equal(sl_link_stat(l, tx_fc_pause), 2);
	sl_link_free(l);
}

static void
sl_link_rx_burst__extended_ctrl_checked_even_in_error(void **state)
{
	struct sl_link *l = mk(&extended, SL_LINK_REPLAY_RING);
	struct fr bad = ctrl_frame(&extended, 16, SL_WIRE_KEY_RETRANS_REQ, 0);
	struct fr gap = data_frame(&extended, 17, 0);

	(void)state;
	sync_rx(l, &extended);
	feed(l, 0, &gap, NULL); /* now in error: the peer's current ID is unknown */
	bad.b[2] ^= 0x01;       /* explicit ID 16 -> 16 ^ 2^24: CRC no longer matches */
	for (int i = 0; i < 8; i++)
		feed(l, 0, &bad, NULL);
	assert_int_equal(sl_link_stat(l, flag_retrans), 0);
	assert_int_equal(sl_link_stat(l, rx_bad_ctrl), 8);
	/* Intact NACKs with any ID are taken while in error (the peer may be replaying). */
	feed_ctrl_n(l, &extended, 500, SL_WIRE_KEY_RETRANS_REQ, 0, 8);
	assert_int_equal(sl_link_stat(l, flag_retrans), 1);
	sl_link_free(l);
}

/*
 * Hand every frame a's tx_burst gives at now to b's rx_burst (control and filler frames only:
 * these tests send no payload). Returns the frames moved.
 */
static unsigned
pump(struct sl_link *a, struct sl_link *b, uint64_t now)
{
	struct sl_link_tx_frame out[64];
	unsigned n = tx(a, now, out, 64);

	for (unsigned i = 0; i < n; i++) {
		struct sl_link_rx_frame in = {.buf = out[i].hdr, .len = out[i].hdr_len};
		struct sl_link_delivery d;

		assert_null(out[i].handle);
		assert_int_equal(sl_link_rx_burst(b, now, &in, 1, &d), 0);
	}
	return n;
}

/* Two fresh links brought up against each other on a clock stepping 100 ns. */
static uint64_t
pair_up(struct sl_link *a, struct sl_link *b)
{
	uint64_t now = 0;

	for (int i = 0; i < 200; i++, now += 100) {
		pump(a, b, now);
		pump(b, a, now);
	}
	assert_int_equal(sl_link_state(a), SL_LINK_NORMAL);
	assert_int_equal(sl_link_state(b), SL_LINK_NORMAL);
	return now;
}

/*
 * The goodbye: a leaves and sends only LEAVE; b answers 8 of them with one run of LEAVE_ACK,
 * says so once, and starts afresh; a takes 8 LEAVE_ACK as the answer. A fresh b then asks for
 * a new peer (PAUSE_REQ from ID 0), as at startup.
 */
static void
sl_link_leave__answered_once_then_the_peer_starts_afresh(void **state)
{
	const struct sl_wire_fmt *fmts[] = {&faithful, &extended};

	(void)state;
	for (int m = 0; m < 2; m++) {
		struct sl_link *a = mk(fmts[m], SL_LINK_REPLAY_RING),
			       *b = mk(fmts[m], SL_LINK_REPLAY_RING);
		struct sl_link_tx_frame out[64];
		uint64_t now = pair_up(a, b);
		unsigned n;

		assert_false(sl_link_peer_left(b));
		sl_link_leave(a);
		assert_int_equal(sl_link_state(a), SL_LINK_LEAVE);
		/* a's run: all LEAVE, and it takes no payload. */
		n = tx(a, now, out, 64);
		assert_int_equal(n, SL_LINK_CTRL_RUN);
		for (unsigned i = 0; i < n; i++) {
			struct sl_link_rx_frame in = {.buf = out[i].hdr, .len = out[i].hdr_len};
			struct sl_link_delivery d;

			assert_int_equal(out[i].kind, SL_LINK_FRAME_CTRL);
			sl_link_rx_burst(b, now, &in, 1, &d);
			/* b answers after the 8th, not before. */
			assert_int_equal(sl_link_state(b), i + 1 < SL_LINK_CTRL_ACCEPT
								   ? SL_LINK_NORMAL
								   : SL_LINK_ACK_LEAVE);
		}
		assert_int_equal(sl_link_stat(a, tx_leave), SL_LINK_CTRL_RUN);
		assert_false(sl_link_leave_acked(a));
		/* b's burst is the answer and ends with it. */
		assert_int_equal(pump(b, a, now), SL_LINK_CTRL_RUN);
		assert_int_equal(sl_link_stat(b, tx_leave_ack), SL_LINK_CTRL_RUN);
		assert_int_equal(sl_link_stat(b, peer_leaves), 1);
		assert_true(sl_link_peer_left(b));
		assert_false(sl_link_peer_left(b));
		assert_true(sl_link_leave_acked(a));
		assert_int_equal(sl_link_stat(a, leave_acks), 1);
		/* b starts over: INIT, then PAUSE_REQ runs carrying ID 0. */
		assert_int_equal(sl_link_state(b), SL_LINK_INIT);
		n = tx(b, now + 100, out, 64);
		assert_true(n > 0);
		assert_int_equal(out[0].hdr[sl_wire_hdr_len(fmts[m]) + 1], SL_WIRE_KEY_PAUSE_REQ);
		assert_int_equal(out[0].id, 0);
		/* a keeps sending LEAVE, never data, whatever it is offered. */
		assert_int_equal(sl_link_state(a), SL_LINK_LEAVE);
		sl_link_free(a);
		sl_link_free(b);
	}
}

/* Hand frames[from, to) of a's output to b's rx_burst at now. */
static void
deliver_range(struct sl_link *b, uint64_t now, const struct sl_link_tx_frame *frames, unsigned from,
	      unsigned to)
{
	for (unsigned i = from; i < to; i++) {
		struct sl_link_rx_frame in = {.buf = frames[i].hdr, .len = frames[i].hdr_len};
		struct sl_link_delivery d;

		assert_int_equal(sl_link_rx_burst(b, now, &in, 1, &d), 0);
	}
}

/*
 * One goodbye is one new session, however its LEAVE arrives: b answers the first 8 of a's run
 * and starts afresh, then takes the run's other 8 and a second run (a repeats every
 * ctrl_interval_ns until answered). With IDs checked (ring replay), b's fresh RX rejects them
 * (they carry a's IDs, not 0) without an error episode, which stuck_ns would give up: another
 * session. End to end, where a control frame verifies on its own ID, b answers them again (a
 * may have missed the first answer) but does not start afresh again. Either way b's sessions
 * stay at 2 and peer_leaves at 1; a new peer then brings b up as at startup, and its own
 * goodbye is a new session.
 */
static void
sl_link_leave__a_repeated_leave_starts_no_second_session(void **state)
{
	const struct sl_wire_fmt *fmts[] = {&faithful, &extended, &extended};
	const enum sl_link_replay replays[] = {SL_LINK_REPLAY_RING, SL_LINK_REPLAY_RING,
					       SL_LINK_REPLAY_NONE};

	(void)state;
	for (int m = 0; m < 3; m++) {
		struct sl_link_conf conf = {.fmt = *fmts[m],
					    .ring_order = ORDER,
					    .replay = replays[m],
					    .keepalive_ns = KEEPALIVE_NS,
					    .ctrl_interval_ns = CTRL_NS,
					    .fc_frames = FC_FRAMES,
					    .stuck_ns = SL_LINK_STUCK_NS_TRANSPORT,
					    .release = release_cb};
		bool e2e = replays[m] == SL_LINK_REPLAY_NONE;
		struct sl_link *a = sl_link_create(&conf), *b = sl_link_create(&conf), *c;
		struct sl_link_tx_frame run1[64], run2[64], out[64];
		uint64_t now = pair_up(a, b), errors;

		assert_int_equal(sl_link_sessions(b), 1);
		sl_link_leave(a);
		assert_int_equal(tx(a, now, run1, 64), SL_LINK_CTRL_RUN);
		deliver_range(b, now, run1, 0, SL_LINK_CTRL_ACCEPT);
		assert_int_equal(sl_link_state(b), SL_LINK_ACK_LEAVE);
		assert_int_equal(tx(a, now + CTRL_NS, run2, 64), SL_LINK_CTRL_RUN); /* unanswered */
		assert_int_equal(tx(b, now, out, 64), SL_LINK_CTRL_RUN);            /* the answer */
		assert_int_equal(sl_link_stat(b, peer_leaves), 1);
		assert_true(sl_link_peer_left(b));
		tx(b, now + 100, out, 64); /* INIT, then PAUSE_REQ: a new session */
		assert_int_equal(sl_link_sessions(b), 2);
		/* The departed a's other LEAVE. */
		errors = sl_link_stat(b, rx_errors);
		deliver_range(b, now + 200, run1, SL_LINK_CTRL_ACCEPT, SL_LINK_CTRL_RUN);
		deliver_range(b, now + 200, run2, 0, SL_LINK_CTRL_RUN);
		assert_int_equal(sl_link_state(b), e2e ? SL_LINK_ACK_LEAVE : SL_LINK_SEND_PAUSE);
		tx(b, now + 300, out, 64);
		assert_int_equal(sl_link_stat(b, tx_leave_ack), (e2e ? 2 : 1) * SL_LINK_CTRL_RUN);
		assert_int_equal(sl_link_peer_left(b), e2e);
		assert_int_equal(sl_link_stat(b, rx_errors), errors);
		now += 2 * SL_LINK_STUCK_NS_TRANSPORT;
		tx(b, now, out, 64);
		assert_int_equal(sl_link_stat(b, stuck_reinits), 0);
		assert_int_equal(sl_link_stat(b, peer_leaves), 1);
		assert_int_equal(sl_link_sessions(b), 2);
		/* A new peer: up as at startup; its goodbye starts b afresh. */
		c = sl_link_create(&conf);
		for (int i = 0; i < 400; i++, now += 100) {
			pump(b, c, now);
			pump(c, b, now);
		}
		assert_int_equal(sl_link_state(b), SL_LINK_NORMAL);
		assert_int_equal(sl_link_state(c), SL_LINK_NORMAL);
		assert_int_equal(sl_link_sessions(b), 2);
		sl_link_leave(c);
		for (int i = 0; i < 4; i++, now += 100) {
			pump(c, b, now);
			pump(b, c, now);
		}
		assert_true(sl_link_leave_acked(c));
		assert_int_equal(sl_link_stat(b, peer_leaves), 2);
		assert_int_equal(sl_link_sessions(b), 3);
		sl_link_free(a);
		sl_link_free(b);
		sl_link_free(c);
	}
}

/*
 * No goodbye from noise: 7 LEAVE, an IDLE, 7 more are never answered; a run of 8 with one
 * corrupted bit anywhere is neither answered (LEAVE) nor taken as an answer (LEAVE_ACK); and a
 * LEAVE_ACK is no answer to an end that is not leaving.
 */
static void
sl_link_leave__needs_8_consecutive_verified_keys(void **state)
{
	const struct sl_wire_fmt *fmts[] = {&faithful, &extended};
	struct sl_link_tx_frame out[64];
	struct sl_link *l = mk(&faithful, SL_LINK_REPLAY_RING);

	(void)state;
	sync_rx(l, &faithful);
	feed_ctrl_n(l, &faithful, 16, SL_WIRE_KEY_LEAVE, 0, 7);
	feed_ctrl_n(l, &faithful, 16, SL_WIRE_KEY_IDLE, 0, 1);
	feed_ctrl_n(l, &faithful, 16, SL_WIRE_KEY_LEAVE, 0, 7);
	assert_int_equal(sl_link_state(l), SL_LINK_NORMAL);
	feed_ctrl_n(l, &faithful, 16, SL_WIRE_KEY_LEAVE_ACK, 0, 16);
	assert_false(sl_link_leave_acked(l));
	tx(l, 0, out, 64);
	assert_int_equal(sl_link_stat(l, tx_leave_ack), 0);
	assert_false(sl_link_peer_left(l));
	sl_link_free(l);
	for (int m = 0; m < 2; m++) {
		size_t len = fmts[m]->mode == SL_WIRE_MODE_EXTENDED ? 12 : 4;

		for (int k = 0; k < 2; k++) {
			uint16_t key = k ? SL_WIRE_KEY_LEAVE_ACK : SL_WIRE_KEY_LEAVE;

			for (unsigned bit = 0; bit < len * 8; bit++) {
				struct fr good = ctrl_frame(fmts[m], 16, key, 0), bad = good;

				l = mk(fmts[m], SL_LINK_REPLAY_RING);
				sync_rx(l, fmts[m]);
				if (k)
					sl_link_leave(l);
				bad.b[bit / 8] ^= (uint8_t)(0x80u >> (bit % 8));
				for (unsigned i = 0; i < 8; i++)
					feed(l, 0, i == bit % 8 ? &bad : &good, NULL);
				assert_false(sl_link_leave_acked(l));
				assert_int_not_equal(sl_link_state(l), SL_LINK_ACK_LEAVE);
				tx(l, 0, out, 64);
				assert_int_equal(sl_link_stat(l, tx_leave_ack), 0);
				assert_int_equal(sl_link_stat(l, peer_leaves), 0);
				sl_link_free(l);
			}
		}
	}
}

static void
sl_link_state_name__every_state_named(void **state)
{
	(void)state;
	for (int s = 0; s < SL_LINK_STATE__MAX; s++)
		assert_string_not_equal(sl_link_state_name(s), "unknown");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sl_link_create__rejects_bad_conf),
		cmocka_unit_test(sl_link_ring_order__rifl_sizing_rule),
		cmocka_unit_test(sl_link_rx_burst__warmup_then_exactly_once_in_order),
		cmocka_unit_test(sl_link_rx_burst__end_to_end_mode_delivers_by_id_and_never_nacks),
		cmocka_unit_test(sl_link_tx_burst__stuck_error_episode_reinitializes),
		cmocka_unit_test(sl_link_rx_burst__data_ignored_until_the_lane_is_up),
		cmocka_unit_test(sl_link_rx_burst__id_off_by_one_never_accepted),
		cmocka_unit_test(sl_link_rx_burst__extended_replay_survives_lost_duplicates),
		cmocka_unit_test(sl_link_rx_burst__repeated_replay_is_harmless_in_sync),
		cmocka_unit_test(sl_link_rx_burst__corrupted_stale_frame_cannot_pass_for_thr),
		cmocka_unit_test(sl_link_rx_burst__rollback_needs_16_verified_frames),
		cmocka_unit_test(sl_link_rx_burst__white_noise_never_accepted),
		cmocka_unit_test(sl_link_rx_burst__flag_needs_8_consecutive_identical_keys),
		cmocka_unit_test(sl_link_rx_burst__corrupted_frame_in_a_run_of_8_never_accepted),
		cmocka_unit_test(sl_link_rx_burst__corrupted_fc_frame_is_delayed_not_accepted),
		cmocka_unit_test(sl_link_tx_burst__warmup_fillers_then_data_in_ring),
		cmocka_unit_test(sl_link_tx_burst__replay_whole_ring_interleaved_with_tail),
		cmocka_unit_test(sl_link_tx_burst__an_extended_tail_lasts_the_measured_wait),
		cmocka_unit_test(sl_link_tx_burst__replay_repeats_while_nack_keeps_arriving),
		cmocka_unit_test(sl_link_tx_burst__replay_from_first_missing_in_extended_mode),
		cmocka_unit_test(sl_link_tx_burst__replay_during_warmup_carries_all_16_fillers),
		cmocka_unit_test(sl_link_tx_burst__nack_runs_while_rx_in_error),
		cmocka_unit_test(sl_link_tx_burst__replay_paced_at_the_line),
		cmocka_unit_test(sl_link_tx_budget__is_what_the_slot_clock_sends_now),
		cmocka_unit_test(
			sl_link_tx_burst__repeated_replays_halve_the_rate_normal_restores_it),
		cmocka_unit_test(sl_link_tx_burst__new_data_waits_for_a_silent_peer),
		cmocka_unit_test(sl_link_tx_burst__without_adapt_rate_the_clock_keeps_the_line),
		cmocka_unit_test(sl_link_tx_burst__lost_nack_runs_repeat_after_the_measured_wait),
		cmocka_unit_test(sl_link_tx_burst__keepalive_bounds_idle_gaps),
		cmocka_unit_test(sl_link_rx_burst__flow_control_thresholds),
		cmocka_unit_test(sl_link_tx_burst__remote_fc_pause_stops_new_data),
		cmocka_unit_test(sl_link_rx_burst__peer_restart_reinitializes),
		cmocka_unit_test(sl_link_rx_burst__pause_told_again_to_a_restarted_peer),
		cmocka_unit_test(sl_link_leave__answered_once_then_the_peer_starts_afresh),
		cmocka_unit_test(sl_link_leave__needs_8_consecutive_verified_keys),
		cmocka_unit_test(sl_link_leave__a_repeated_leave_starts_no_second_session),
		cmocka_unit_test(sl_link_rx_burst__extended_ctrl_checked_even_in_error),
		cmocka_unit_test(sl_link_state_name__every_state_named),
	};

	return cmocka_run_group_tests_name("link", tests, NULL, NULL);
}
