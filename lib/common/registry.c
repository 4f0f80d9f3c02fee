/* SPDX-License-Identifier: BSD-3-Clause */
/* registry.c - named ops tables, registered from constructors (sl_registry.h). */
#include <errno.h>
#include <string.h>

#include "sl_registry.h"

const void *
sl_registry_find(const struct sl_registry *r, const char *name)
{
	if (name == NULL)
		return NULL;
	for (unsigned int i = 0; i < r->n; i++)
		if (strncmp(sl_registry_name(r, r->slot[i]), name, r->name_len) == 0)
			return r->slot[i];
	return NULL;
}

/* The function pointer at byte offset off of ops is set. */
static int
hook_set(const void *ops, size_t off)
{
	void (*fn)(void);

	memcpy(&fn, (const char *)ops + off, sizeof(fn));
	return fn != NULL;
}

int
sl_registry_add(struct sl_registry *r, const void *ops)
{
	const char *name;

	if (ops == NULL)
		return -EINVAL;
	if (r->check != NULL && r->check(ops) != 0)
		return -EINVAL;
	for (unsigned int i = 0; i < r->n_required; i++)
		if (!hook_set(ops, r->required[i]))
			return -EINVAL;
	name = sl_registry_name(r, ops);
	if (name[0] == '\0' || memchr(name, '\0', r->name_len) == NULL)
		return -EINVAL;
	if (sl_registry_find(r, name) != NULL)
		return -EEXIST;
	if (r->n == r->max)
		return -ENOSPC;
	r->slot[r->n++] = ops;
	return 0;
}

void
sl_registry_add_ctor(struct sl_registry *r, const void *ops)
{
	if (sl_registry_add(r, ops) != 0)
		r->ctor_failure++;
}
