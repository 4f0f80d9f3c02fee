/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fab_addr.h - the sluice provider's endpoint names and its connection handshake, as bytes:
 * pure functions over buffers, no libfabric and no socket, so that the unit tests and the fuzz
 * target reach them alone (addr.c).
 *
 * A name (FI_ADDR_STR) is "fi_sluice://A.B.C.D:PORT": the IPv4 address and TCP port of the
 * endpoint's connection listener. A peer that holds the name can ask the endpoint for a queue
 * pair; the QP's own numbers (QPN, first PSN, token) travel only in the handshake.
 */
#ifndef SL_FAB_ADDR_H
#define SL_FAB_ADDR_H

#include <stddef.h>
#include <stdint.h>

#define SL_FAB_ADDR_PREFIX "fi_sluice://"
/** Longest name with its NUL: the prefix, 15 for the address, ':' and 5 for the port. */
#define SL_FAB_ADDR_STRLEN (sizeof(SL_FAB_ADDR_PREFIX) - 1 + 15 + 1 + 5 + 1)

/* An endpoint's name, host byte order. */
struct sl_fab_addr {
	uint32_t ip4;  /**< IPv4 address */
	uint16_t port; /**< the listener's TCP port (0: not bound yet) */
};

/*
 * Parse a name from at most len bytes of s (it must end with a NUL within them, or at len).
 * 0, or -EINVAL for anything but the exact form above (no spaces, no leading zeros beyond a
 * lone 0, each octet <= 255, port <= 65535).
 */
int sl_fab_addr_parse(const char *s, size_t len, struct sl_fab_addr *out);

/* Write a's name into buf (bytes >= SL_FAB_ADDR_STRLEN); its length without the NUL. */
size_t sl_fab_addr_format(const struct sl_fab_addr *a, char *buf, size_t bytes);

/* Equal names. */
int sl_fab_addr_eq(const struct sl_fab_addr *a, const struct sl_fab_addr *b);

/* Strict order (ip4, then port): the tie-break when two endpoints connect to each other. */
int sl_fab_addr_lt(const struct sl_fab_addr *a, const struct sl_fab_addr *b);

/*
 * The handshake, one message each way over a TCP connection to the listener: the connecting
 * side sends HELLO with its name and its new QP's numbers, the listening side answers ACCEPT
 * with its QP's numbers (or closes the connection: it refuses). SL_FAB_HS_BYTES, network order:
 *   magic u32 "SLFI" | version u16 | kind u16 | qpn u32 | psn u32 | token u32 |
 *   name SL_FAB_ADDR_STRLEN bytes, NUL-padded
 */
#define SL_FAB_HS_MAGIC 0x534C4649u /**< "SLFI" */
#define SL_FAB_HS_VERSION 1u
#define SL_FAB_HS_BYTES (20u + SL_FAB_ADDR_STRLEN)

enum sl_fab_hs_kind {
	SL_FAB_HS_HELLO = 1,
	SL_FAB_HS_ACCEPT = 2,
};

struct sl_fab_hs {
	uint16_t kind;           /**< enum sl_fab_hs_kind */
	uint32_t qpn;            /**< the sender's QP */
	uint32_t psn;            /**< its first PSN */
	uint32_t token;          /**< its connection token (never 0) */
	struct sl_fab_addr name; /**< the sender's endpoint */
};

void sl_fab_hs_encode(const struct sl_fab_hs *m, uint8_t out[SL_FAB_HS_BYTES]);

/* 0, or -EPROTO: wrong magic, version or kind, token 0, a name that does not parse. */
int sl_fab_hs_decode(const uint8_t in[SL_FAB_HS_BYTES], struct sl_fab_hs *m);

#endif /* SL_FAB_ADDR_H */
