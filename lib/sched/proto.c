/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proto.c - the registry of transport programs (sl_proto.h): a fixed table of const ops
 * pointers, filled by SL_PROTO_REGISTER constructors before main() and read by
 * sl_sched_flow_add(). Registration validates the table the way tcp_register_congestion_control
 * does: a known credit scheme, a private state that fits
 * the scratch area, a non-empty NUL-terminated name, and no duplicate name (-EEXIST).
 */
#include <errno.h>
#include <string.h>

#include "sl_proto.h"

static const struct sl_proto_ops *registry[SL_PROTO_MAX];
static unsigned registered;
static unsigned ctor_failures;

const struct sl_proto_ops *
sl_proto_find(const char *name)
{
	if (name == NULL)
		return NULL;
	for (unsigned i = 0; i < registered; i++)
		if (strncmp(registry[i]->name, name, SL_PROTO_NAME_MAX) == 0)
			return registry[i];
	return NULL;
}

int
sl_proto_register(const struct sl_proto_ops *ops)
{
	if (ops == NULL)
		return -EINVAL;
	if (ops->credit != SL_CREDIT_WINDOW && ops->credit != SL_CREDIT_RATE &&
	    ops->credit != SL_CREDIT_GRANT)
		return -EINVAL;
	if (ops->priv_size > SL_PROTO_PRIV_MAX)
		return -EINVAL;
	if (ops->name[0] == '\0' || memchr(ops->name, '\0', SL_PROTO_NAME_MAX) == NULL)
		return -EINVAL;
	if (sl_proto_find(ops->name) != NULL)
		return -EEXIST;
	if (registered == SL_PROTO_MAX)
		return -ENOSPC;
	registry[registered++] = ops;
	return 0;
}

void
sl_proto_register_ctor(const struct sl_proto_ops *ops)
{
	if (sl_proto_register(ops) != 0)
		ctor_failures++;
}

unsigned
sl_proto_register_failures(void)
{
	return ctor_failures;
}
