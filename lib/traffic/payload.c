/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * payload.c - link test traffic generator and checker (see sl_traffic.h for the payload
 * format and the checker's rules). Rates are token buckets one burst deep (struct
 * sl_traffic_throttle): credit accrues at rate / body bits since an anchor, and when more than
 * SL_DP_BURST payloads are owed the anchor moves up so that exactly a burst is. A generator
 * held back by a flow-control pause therefore resumes at its rate, not with a line-rate burst
 * of everything it could have sent meanwhile: such a burst arrives faster than the peer's
 * pause can stop it, which is not the source the link's S_FC is sized for.
 */
#include <errno.h>
#include <string.h>

#include <rte_hash_crc.h>

#include "sl_traffic.h"
#include "sl_time.h"

#define TRAFFIC_MAGIC 0x31544c53u /* "SLT1" little-endian */
#define OFF_CRC 4
#define OFF_SEQ 8
#define OFF_LEN 16
#define OFF_PATTERN 18

static const struct sl_stat_desc stat_desc[] = {
	SL_STAT(struct sl_traffic_link_stats, generated, "payloads generated"),
	SL_STAT(struct sl_traffic_link_stats, gen_nombuf, "generation skipped: pool empty"),
	SL_STAT(struct sl_traffic_link_stats, delivered, "payloads checked in order"),
	SL_STAT(struct sl_traffic_link_stats, first_seq, "sequence number of the first payload"),
	SL_STAT(struct sl_traffic_link_stats, lost, "sequence numbers missing"),
	SL_STAT(struct sl_traffic_link_stats, duplicated, "payloads seen twice"),
	SL_STAT(struct sl_traffic_link_stats, reordered, "payloads after a later one"),
	SL_STAT(struct sl_traffic_link_stats, corrupted_accepted, "damaged payloads delivered"),
	SL_STAT(struct sl_traffic_link_stats, bytes, "body bytes checked"),
	SL_STAT(struct sl_traffic_link_stats, first_ns, "time of the first delivery, ns"),
	SL_STAT(struct sl_traffic_link_stats, last_ns, "time of the last delivery, ns"),
};
SL_STAT_TABLE_DEFINE(sl_traffic_link_stat_table, struct sl_traffic_link_stats, stat_desc);

int
sl_traffic_link_init(struct sl_traffic_link *t, const struct sl_traffic_link_conf *conf)
{
	/* Payloads start after the mbuf's default headroom, where the lane writes its headers. */
	if (conf->body_bytes < SL_TRAFFIC_LINK_MIN_BODY ||
	    (uint32_t)conf->body_bytes + RTE_PKTMBUF_HEADROOM >
		    rte_pktmbuf_data_room_size(conf->pool))
		return -EINVAL;
	memset(t, 0, sizeof(*t));
	t->conf = *conf;
	return 0;
}

static uint32_t
body_crc(const uint8_t *b, uint16_t len)
{
	return rte_hash_crc(b + OFF_SEQ, len - OFF_SEQ, 0xffffffffu);
}

/* The next word of a payload's pattern: xorshift64 (Marsaglia 2003, shifts 13, 7, 17). */
static inline uint64_t
pattern_next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* A payload: header, then the pattern of seq written 8 bytes at a time (the tail in part). */
static void
fill(uint8_t *b, uint16_t len, uint64_t seq)
{
	uint32_t magic = TRAFFIC_MAGIC, crc;
	uint64_t x = seq * UINT64_C(0x9e3779b97f4a7c15) + 1, w;
	uint16_t i = OFF_PATTERN;

	memcpy(b, &magic, 4);
	memcpy(b + OFF_SEQ, &seq, 8);
	memcpy(b + OFF_LEN, &len, 2);
	for (; i + sizeof(w) <= len; i += sizeof(w)) {
		w = pattern_next(&x);
		memcpy(b + i, &w, sizeof(w));
	}
	if (i < len) {
		w = pattern_next(&x);
		memcpy(b + i, &w, len - i);
	}
	crc = body_crc(b, len);
	memcpy(b + OFF_CRC, &crc, 4);
}

/* How many events a rate of rate_bps allows for items of len_bytes since start_ns. */
static uint64_t
credit(uint64_t rate_bps, uint64_t start_ns, uint64_t now_ns, uint16_t len_bytes)
{
	return sl_bytes_in_ns(rate_bps, now_ns - start_ns) / len_bytes + 1;
}

/* Payloads of len_bytes that rate_bps allows at now_ns, at most SL_DP_BURST. */
static uint64_t
throttle_allow(struct sl_traffic_throttle *th, uint64_t rate_bps, uint16_t len_bytes,
	       uint64_t now_ns)
{
	uint64_t owed;

	if (th->anchor_ns == 0)
		th->anchor_ns = now_ns;
	owed = credit(rate_bps, th->anchor_ns, now_ns, len_bytes) - th->taken;
	if ((int64_t)owed <= 0)
		return 0;
	if (owed > SL_DP_BURST) {
		/* Held back: keep one burst of credit, the bucket's depth. */
		uint64_t back_ns = sl_tx_ns_ceil((uint64_t)(SL_DP_BURST - 1) * len_bytes, rate_bps);

		th->anchor_ns = now_ns - SL_MIN(back_ns, now_ns);
		th->taken = 0;
		owed = SL_MIN(credit(rate_bps, th->anchor_ns, now_ns, len_bytes), SL_DP_BURST);
	}
	return owed;
}

unsigned
sl_traffic_link_produce(void *ctx, uint64_t now_ns, struct rte_mbuf **m, unsigned max)
{
	struct sl_traffic_link *t = ctx;
	uint64_t allow = max;
	unsigned n = 0;

	if (!t->conf.send)
		return 0;
	if (t->conf.frames)
		allow = SL_MIN(allow, t->conf.frames - t->stats.generated);
	if (t->conf.rate_bps)
		allow = SL_MIN(allow, throttle_allow(&t->gen, t->conf.rate_bps, t->conf.body_bytes,
						     now_ns));
	while (n < allow) {
		struct rte_mbuf *p = rte_pktmbuf_alloc(t->conf.pool);
		uint8_t *b;

		if (p == NULL) {
			t->stats.gen_nombuf++;
			break;
		}
		b = (uint8_t *)rte_pktmbuf_append(p, t->conf.body_bytes);
		fill(b, t->conf.body_bytes, t->next_seq++);
		m[n++] = p;
	}
	t->stats.generated += n;
	t->gen.taken += n;
	return n;
}

static void
check_one(struct sl_traffic_link *t, const uint8_t *b, uint16_t len, uint64_t now_ns)
{
	struct sl_traffic_link_stats *s = &t->stats;
	uint32_t magic, crc;
	uint64_t seq;
	uint16_t blen;

	memcpy(&magic, b, 4);
	memcpy(&blen, b + OFF_LEN, 2);
	memcpy(&crc, b + OFF_CRC, 4);
	if (len < SL_TRAFFIC_LINK_MIN_BODY || magic != TRAFFIC_MAGIC || blen != len ||
	    crc != body_crc(b, len)) {
		s->corrupted_accepted++;
		return;
	}
	memcpy(&seq, b + OFF_SEQ, 8);
	if (s->delivered == 0) {
		/* The first payload: nothing before it is judged (a restarted receiver). */
		s->first_seq = seq;
		t->expected = seq;
	}
	if (seq >= t->expected) {
		uint64_t gap = seq - t->expected;

		for (uint64_t k = 0; k < SL_MIN(gap, (uint64_t)SL_TRAFFIC_LINK_WINDOW); k++) {
			uint64_t q = t->expected + k;

			t->seen[(q / 64) % SL_ARRAY_SIZE(t->seen)] &= ~(UINT64_C(1) << (q % 64));
		}
		s->lost += gap;
		t->expected = seq + 1;
	} else {
		uint64_t *w = &t->seen[(seq / 64) % SL_ARRAY_SIZE(t->seen)];
		uint64_t bit = UINT64_C(1) << (seq % 64);

		if (t->expected - seq > SL_TRAFFIC_LINK_WINDOW || (*w & bit)) {
			s->duplicated++;
			return;
		}
		s->reordered++;
		s->lost--;
	}
	t->seen[(seq / 64) % SL_ARRAY_SIZE(t->seen)] |= UINT64_C(1) << (seq % 64);
	s->delivered++;
	s->bytes += len;
	if (s->first_ns == 0)
		s->first_ns = now_ns;
	s->last_ns = now_ns;
}

unsigned
sl_traffic_link_consume(void *ctx, uint64_t now_ns, struct rte_mbuf **m, unsigned n)
{
	struct sl_traffic_link *t = ctx;

	if (t->conf.consume_bps)
		n = (unsigned)SL_MIN((uint64_t)n, throttle_allow(&t->take, t->conf.consume_bps,
								 t->conf.body_bytes, now_ns));
	for (unsigned i = 0; i < n; i++) {
		if (t->conf.check)
			check_one(t, rte_pktmbuf_mtod(m[i], const uint8_t *), m[i]->data_len,
				  now_ns);
		rte_pktmbuf_free(m[i]);
	}
	t->take.taken += n;
	return n;
}

uint64_t
sl_traffic_link_goodput_bps(const struct sl_traffic_link_stats *s, uint64_t until_ns)
{
	if (s->delivered == 0 || until_ns <= s->first_ns)
		return 0;
	return sl_rate_bps(s->bytes, until_ns - s->first_ns);
}
