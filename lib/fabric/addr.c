/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * addr.c - endpoint names and handshake messages (fab_addr.h): the only code of the provider
 * that reads bytes a peer or an application chose, so it is written to be fuzzed
 * (tests/fuzz/fabric) and trusts nothing: every length is checked before a byte is read, the
 * parser accepts one spelling of each name (so two spellings of one endpoint never become two
 * peers), and a handshake with a bad field is refused whole.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fab_addr.h"

/* A decimal number of 1..max_digits digits at s[*i], no leading zero unless it is "0". */
static int
parse_dec(const char *s, size_t len, size_t *i, unsigned max_digits, uint32_t max, uint32_t *out)
{
	size_t start = *i;
	uint32_t v = 0;

	while (*i < len && s[*i] >= '0' && s[*i] <= '9' && *i - start < max_digits) {
		v = v * 10 + (uint32_t)(s[*i] - '0');
		(*i)++;
	}
	if (*i == start || v > max)
		return -EINVAL;
	if (s[start] == '0' && *i - start > 1)
		return -EINVAL;
	if (*i < len && s[*i] >= '0' && s[*i] <= '9')
		return -EINVAL; /* more digits than max_digits */
	*out = v;
	return 0;
}

int
sl_fab_addr_parse(const char *s, size_t len, struct sl_fab_addr *out)
{
	const size_t plen = sizeof(SL_FAB_ADDR_PREFIX) - 1;
	size_t n = 0, i;
	uint32_t ip = 0, v;

	if (s == NULL || out == NULL)
		return -EINVAL;
	while (n < len && s[n] != '\0')
		n++;
	if (n < plen || memcmp(s, SL_FAB_ADDR_PREFIX, plen) != 0)
		return -EINVAL;
	i = plen;
	for (int octet = 0; octet < 4; octet++) {
		if (parse_dec(s, n, &i, 3, 255, &v) != 0)
			return -EINVAL;
		ip = ip << 8 | v;
		if (i >= n || s[i] != (octet < 3 ? '.' : ':'))
			return -EINVAL;
		i++;
	}
	if (parse_dec(s, n, &i, 5, 65535, &v) != 0 || i != n)
		return -EINVAL;
	out->ip4 = ip;
	out->port = (uint16_t)v;
	return 0;
}

size_t
sl_fab_addr_format(const struct sl_fab_addr *a, char *buf, size_t bytes)
{
	int n = snprintf(buf, bytes, SL_FAB_ADDR_PREFIX "%u.%u.%u.%u:%u", a->ip4 >> 24 & 0xff,
			 a->ip4 >> 16 & 0xff, a->ip4 >> 8 & 0xff, a->ip4 & 0xff, a->port);
	return n < 0 ? 0 : (size_t)n;
}

int
sl_fab_addr_eq(const struct sl_fab_addr *a, const struct sl_fab_addr *b)
{
	return a->ip4 == b->ip4 && a->port == b->port;
}

int
sl_fab_addr_lt(const struct sl_fab_addr *a, const struct sl_fab_addr *b)
{
	return a->ip4 < b->ip4 || (a->ip4 == b->ip4 && a->port < b->port);
}

static void
put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

void
sl_fab_hs_encode(const struct sl_fab_hs *m, uint8_t out[SL_FAB_HS_BYTES])
{
	memset(out, 0, SL_FAB_HS_BYTES);
	put32(out, SL_FAB_HS_MAGIC);
	out[4] = SL_FAB_HS_VERSION >> 8;
	out[5] = SL_FAB_HS_VERSION & 0xff;
	out[6] = (uint8_t)(m->kind >> 8);
	out[7] = (uint8_t)m->kind;
	put32(out + 8, m->qpn);
	put32(out + 12, m->psn);
	put32(out + 16, m->token);
	sl_fab_addr_format(&m->name, (char *)out + 20, SL_FAB_ADDR_STRLEN);
}

int
sl_fab_hs_decode(const uint8_t in[SL_FAB_HS_BYTES], struct sl_fab_hs *m)
{
	uint16_t version = (uint16_t)(in[4] << 8 | in[5]);

	if (get32(in) != SL_FAB_HS_MAGIC || version != SL_FAB_HS_VERSION)
		return -EPROTO;
	m->kind = (uint16_t)(in[6] << 8 | in[7]);
	if (m->kind != SL_FAB_HS_HELLO && m->kind != SL_FAB_HS_ACCEPT)
		return -EPROTO;
	m->qpn = get32(in + 8);
	m->psn = get32(in + 12);
	m->token = get32(in + 16);
	if (m->token == 0)
		return -EPROTO;
	if (memchr(in + 20, '\0', SL_FAB_ADDR_STRLEN) == NULL ||
	    sl_fab_addr_parse((const char *)in + 20, SL_FAB_ADDR_STRLEN, &m->name) != 0)
		return -EPROTO;
	return 0;
}
