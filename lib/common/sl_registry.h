/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_registry.h - a registry of named const ops tables, filled by constructors before main()
 * and read by name afterwards: the one implementation behind the transport programs
 * (lib/sched, SL_PROTO_REGISTER) and the pacers (lib/pacer, SL_PACER_REGISTER).
 *
 * A module declares one registry over its ops type, naming where the type keeps its name (a
 * char array), and may add which of its function pointers are required and a check of its
 * own fields:
 *
 *   static const size_t required[] = {offsetof(struct sl_pacer_ops, dequeue), ...};
 *   static const void *slots[16];
 *   static struct sl_registry pacers = SL_REGISTRY_INIT(slots, struct sl_pacer_ops, name,
 *           SL_REGISTRY_REQUIRED(required));
 *
 * sl_registry_add() checks in this order: a NULL table, the module's check, a missing
 * required hook, an empty or unterminated name (-EINVAL), a name already taken (-EEXIST), a
 * full table (-ENOSPC). Every table is registered as it is (never copied), so the module can
 * compare pointers. Registration is not thread-safe: it happens in constructors, before any
 * thread starts.
 */
#ifndef SL_REGISTRY_H
#define SL_REGISTRY_H

#include <stddef.h>

struct sl_registry {
	const void **slot;             /**< [max] registered tables, in registration order */
	unsigned int max;              /**< capacity */
	unsigned int n;                /**< registered */
	size_t name_off;               /**< offset of the char name[name_len] member */
	size_t name_len;               /**< bytes of that array, with the NUL */
	const size_t *required;        /**< offsets of function pointers that must not be NULL */
	unsigned int n_required;       /**< entries of required */
	int (*check)(const void *ops); /**< the module's own rules: 0 or -EINVAL; may be NULL */
	unsigned int ctor_failure;     /**< sl_registry_add_ctor() calls that failed */
};

/* A registry over ops tables of type, named by name_member; the optional arguments are more
 * designated initializers (SL_REGISTRY_REQUIRED(...), .check = fn). */
#define SL_REGISTRY_INIT(slots, type, name_member, ...)                                            \
	{                                                                                          \
		.slot = (slots), .max = sizeof(slots) / sizeof((slots)[0]),                        \
		.name_off = offsetof(type, name_member),                                           \
		.name_len = sizeof(((type *)0)->name_member), __VA_ARGS__                          \
	}

/* The function pointers at the offsets in the size_t array required_offsets must be set. */
#define SL_REGISTRY_REQUIRED(required_offsets)                                                     \
	.required = (required_offsets), .n_required = sizeof(required_offsets) / sizeof(size_t)

/* Register ops: 0, -EINVAL, -EEXIST or -ENOSPC (see above). */
int sl_registry_add(struct sl_registry *r, const void *ops);

/* The same from a constructor, where nobody can see the error: failures are counted. */
void sl_registry_add_ctor(struct sl_registry *r, const void *ops);

/* The table registered under name, or NULL (also for a NULL name). */
const void *sl_registry_find(const struct sl_registry *r, const char *name);

/* The i-th registered table (i < r->n), in registration order. */
static inline const void *
sl_registry_at(const struct sl_registry *r, unsigned int i)
{
	return i < r->n ? r->slot[i] : NULL;
}

/* The name of a registered table. */
static inline const char *
sl_registry_name(const struct sl_registry *r, const void *ops)
{
	return (const char *)ops + r->name_off;
}

#endif /* SL_REGISTRY_H */
