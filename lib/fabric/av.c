/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * av.c - the address vector: peers' names (fab_addr.h) in a table, fi_addr_t being the index,
 * for FI_AV_TABLE and FI_AV_MAP alike (a map's fi_addr_t is opaque, so the index serves both).
 * Inserting a name costs nothing on the network: the endpoint connects to a peer on its first
 * send (peer.c). A name that does not parse is refused entry by entry: its fi_addr is
 * FI_ADDR_NOTAVAIL and it is not counted (with FI_SYNC_ERR, the context's array gets
 * -FI_EINVAL for it). fi_av_remove frees the index's name, not the index.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fab_priv.h"

const struct sl_fab_addr *
sl_fab_av_addr(const struct sl_fab_av *av, fi_addr_t fi_addr)
{
	if (av == NULL || fi_addr >= av->n || !av->used[fi_addr])
		return NULL;
	return &av->addrs[fi_addr];
}

fi_addr_t
sl_fab_av_find(const struct sl_fab_av *av, const struct sl_fab_addr *a)
{
	if (av == NULL)
		return FI_ADDR_NOTAVAIL;
	for (size_t i = 0; i < av->n; i++)
		if (av->used[i] && sl_fab_addr_eq(&av->addrs[i], a))
			return i;
	return FI_ADDR_NOTAVAIL;
}

static int
grow(struct sl_fab_av *av, size_t want)
{
	size_t cap = av->cap ? av->cap : 16;
	struct sl_fab_addr *addrs;
	bool *used;

	while (cap < want)
		cap *= 2;
	if (cap == av->cap)
		return 0;
	addrs = realloc(av->addrs, cap * sizeof(*addrs));
	if (addrs == NULL)
		return -FI_ENOMEM;
	av->addrs = addrs;
	used = realloc(av->used, cap * sizeof(*used));
	if (used == NULL)
		return -FI_ENOMEM;
	av->used = used;
	av->cap = cap;
	return 0;
}

static int
av_insert(struct fid_av *fid, const void *addr, size_t count, fi_addr_t *fi_addr, uint64_t flags,
	  void *context)
{
	struct sl_fab_av *av = container_of(fid, struct sl_fab_av, fid);
	const char *s = addr;
	int *sync_err = (flags & FI_SYNC_ERR) ? context : NULL;
	int inserted = 0;

	if (flags & ~(uint64_t)FI_SYNC_ERR)
		return -FI_EINVAL;
	if (count > 0 && addr == NULL)
		return -FI_EINVAL;
	if (grow(av, av->n + count) != 0)
		return -FI_ENOMEM;
	/* FI_ADDR_STR: count NUL-terminated names back to back. */
	for (size_t i = 0; i < count; i++) {
		size_t len = strnlen(s, SL_FAB_ADDR_STRLEN);
		struct sl_fab_addr a;
		int ret = sl_fab_addr_parse(s, len, &a);

		if (ret == 0) {
			av->addrs[av->n] = a;
			av->used[av->n] = true;
			if (fi_addr != NULL)
				fi_addr[i] = av->n;
			av->n++;
			inserted++;
		} else {
			SL_FAB_WARN(FI_LOG_AV, "address %zu is no sluice name (%s...)\n", i,
				    SL_FAB_ADDR_PREFIX);
			if (fi_addr != NULL)
				fi_addr[i] = FI_ADDR_NOTAVAIL;
		}
		if (sync_err != NULL)
			sync_err[i] = ret == 0 ? 0 : -FI_EINVAL;
		s += len + 1;
		if (len == SL_FAB_ADDR_STRLEN) /* no NUL where a name must end: stop here */
			break;
	}
	return inserted;
}

static int
av_insertsvc(struct fid_av *fid, const char *node, const char *service, fi_addr_t *fi_addr,
	     uint64_t flags, void *context)
{
	(void)fid, (void)node, (void)service, (void)fi_addr, (void)flags, (void)context;
	return -FI_ENOSYS;
}

static int
av_insertsym(struct fid_av *fid, const char *node, size_t nodecnt, const char *service,
	     size_t svccnt, fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	(void)fid, (void)node, (void)nodecnt, (void)service, (void)svccnt, (void)fi_addr;
	(void)flags, (void)context;
	return -FI_ENOSYS;
}

static int
av_remove(struct fid_av *fid, fi_addr_t *fi_addr, size_t count, uint64_t flags)
{
	struct sl_fab_av *av = container_of(fid, struct sl_fab_av, fid);

	if (flags != 0)
		return -FI_EINVAL;
	for (size_t i = 0; i < count; i++)
		if (sl_fab_av_addr(av, fi_addr[i]) == NULL)
			return -FI_EINVAL;
	for (size_t i = 0; i < count; i++)
		av->used[fi_addr[i]] = false;
	return 0;
}

static int
av_lookup(struct fid_av *fid, fi_addr_t fi_addr, void *addr, size_t *addrlen)
{
	struct sl_fab_av *av = container_of(fid, struct sl_fab_av, fid);
	const struct sl_fab_addr *a = sl_fab_av_addr(av, fi_addr);
	char buf[SL_FAB_ADDR_STRLEN];
	size_t len;

	if (a == NULL)
		return -FI_EINVAL;
	len = sl_fab_addr_format(a, buf, sizeof(buf)) + 1;
	memcpy(addr, buf, *addrlen < len ? *addrlen : len);
	*addrlen = len;
	return 0;
}

static const char *
av_straddr(struct fid_av *fid, const void *addr, char *buf, size_t *len)
{
	struct sl_fab_addr a;
	char s[SL_FAB_ADDR_STRLEN];
	size_t n;

	(void)fid;
	if (sl_fab_addr_parse(addr, SL_FAB_ADDR_STRLEN, &a) != 0)
		snprintf(s, sizeof(s), "(not a sluice name)");
	else
		sl_fab_addr_format(&a, s, sizeof(s));
	n = strlen(s) + 1;
	if (*len > 0) {
		memcpy(buf, s, *len < n ? *len : n);
		buf[(*len < n ? *len : n) - 1] = '\0';
	}
	*len = n;
	return buf;
}

static int
av_set(struct fid_av *fid, struct fi_av_set_attr *attr, struct fid_av_set **set, void *context)
{
	(void)fid, (void)attr, (void)set, (void)context;
	return -FI_ENOSYS;
}

static struct fi_ops_av av_ops = {
	.size = sizeof(struct fi_ops_av),
	.insert = av_insert,
	.insertsvc = av_insertsvc,
	.insertsym = av_insertsym,
	.remove = av_remove,
	.lookup = av_lookup,
	.straddr = av_straddr,
	.av_set = av_set,
};

static int
av_close(struct fid *fid)
{
	struct sl_fab_av *av = container_of(fid, struct sl_fab_av, fid.fid);

	if (av->refs > 0)
		return -FI_EBUSY;
	av->domain->refs--;
	free(av->addrs);
	free(av->used);
	free(av);
	return 0;
}

static struct fi_ops av_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = av_close,
	.bind = sl_fab_no_bind,
	.control = sl_fab_no_control,
	.ops_open = sl_fab_no_ops_open,
};

int
sl_fab_av_open(struct fid_domain *domain, struct fi_av_attr *attr, struct fid_av **out,
	       void *context)
{
	struct sl_fab_domain *d = container_of(domain, struct sl_fab_domain, fid);
	struct sl_fab_av *av;

	if (attr->type != FI_AV_UNSPEC && attr->type != FI_AV_TABLE && attr->type != FI_AV_MAP)
		return -FI_EINVAL;
	if (attr->name != NULL || attr->rx_ctx_bits != 0 || attr->flags != 0)
		return -FI_ENOSYS; /* no shared, named or scalable AVs, no AV events */
	av = calloc(1, sizeof(*av));
	if (av == NULL)
		return -FI_ENOMEM;
	if (grow(av, attr->count ? attr->count : 16) != 0) {
		free(av->addrs);
		free(av);
		return -FI_ENOMEM;
	}
	av->domain = d;
	av->fid.fid.fclass = FI_CLASS_AV;
	av->fid.fid.context = context;
	av->fid.fid.ops = &av_fi_ops;
	av->fid.ops = &av_ops;
	d->refs++;
	*out = &av->fid;
	return 0;
}
