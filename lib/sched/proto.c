/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proto.c - the registry of transport programs (sl_proto.h), on lib/common's sl_registry:
 * filled by SL_PROTO_REGISTER constructors before main() and read by sl_sched_flow_add().
 * Registration validates the table the way tcp_register_congestion_control does: the
 * program's own fields here (a known credit scheme, a private state that fits the scratch
 * area), then the generic rules in sl_registry_add() (a non-empty NUL-terminated name, no
 * duplicate name). Every hook is optional: the engine supplies the defaults.
 */
#include <errno.h>

#include "sl_proto.h"
#include "sl_registry.h"

/* The program's own fields: a known credit scheme, a private state that fits. */
static int
program_check(const void *p)
{
	const struct sl_proto_ops *ops = p;

	if (ops->credit != SL_CREDIT_WINDOW && ops->credit != SL_CREDIT_RATE &&
	    ops->credit != SL_CREDIT_GRANT)
		return -EINVAL;
	return ops->priv_size > SL_PROTO_PRIV_MAX ? -EINVAL : 0;
}

static const void *slots[SL_PROTO_MAX];
static struct sl_registry programs =
	SL_REGISTRY_INIT(slots, struct sl_proto_ops, name, .check = program_check);

const struct sl_proto_ops *
sl_proto_find(const char *name)
{
	return sl_registry_find(&programs, name);
}

unsigned
sl_proto_count(void)
{
	return programs.n;
}

const struct sl_proto_ops *
sl_proto_at(unsigned i)
{
	return sl_registry_at(&programs, i);
}

int
sl_proto_register(const struct sl_proto_ops *ops)
{
	return sl_registry_add(&programs, ops);
}

void
sl_proto_register_ctor(const struct sl_proto_ops *ops)
{
	sl_registry_add_ctor(&programs, ops);
}

unsigned
sl_proto_register_failures(void)
{
	return programs.ctor_failure;
}
