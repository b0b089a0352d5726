// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_check: which provider owns each verbs device, and a smoke test of
 * the control verbs the provider implements.
 *
 *   sroce_check                      list "<device> <provider>" lines
 *   sroce_check -d DEV [-p PROVIDER] open DEV, query it, allocate a PD;
 *                                    with -p, fail unless PROVIDER owns DEV
 *
 * The provider name is read from libibverbs' private verbs_device, so this
 * test tool shares ibverbs-provider.h with the provider (and its ABI
 * check); applications must never do this.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibverbs-provider.h"

static int failures;

static void report(int ok, const char *what, int err)
{
	if (ok) {
		printf("ok: %s\n", what);
	} else {
		printf("FAIL: %s: %s\n", what, strerror(err));
		failures++;
	}
}

static const char *provider_of(struct ibv_device *dev)
{
	return verbs_get_device(dev)->ops->name;
}

static void check_device(struct ibv_device *dev, const char *want)
{
	const char *prov = provider_of(dev);
	struct ibv_device_attr_ex dattr = {};
	struct ibv_port_attr pattr = {};
	struct ibv_context *ctx;
	struct ibv_cq *cq;
	struct ibv_pd *pd;
	char what[128];
	int ret;

	printf("device %s provider %s\n", ibv_get_device_name(dev), prov);
	if (want) {
		snprintf(what, sizeof(what), "%s is driven by provider %s",
			 ibv_get_device_name(dev), want);
		report(!strcmp(prov, want), what, EINVAL);
	}

	ctx = ibv_open_device(dev);
	report(!!ctx, "ibv_open_device", errno);
	if (!ctx)
		return;

	ret = ibv_query_device_ex(ctx, NULL, &dattr);
	report(!ret, "ibv_query_device_ex", ret);
	if (!ret)
		printf("  fw_ver %s vendor_id 0x%x part 0x%x ports %u max_pd %d\n",
		       dattr.orig_attr.fw_ver, dattr.orig_attr.vendor_id,
		       dattr.orig_attr.vendor_part_id,
		       dattr.orig_attr.phys_port_cnt, dattr.orig_attr.max_pd);

	ret = ibv_query_port(ctx, 1, &pattr);
	report(!ret, "ibv_query_port 1", ret);
	if (!ret)
		printf("  port 1 state %s link_layer %s active_mtu %d gids %d\n",
		       ibv_port_state_str(pattr.state),
		       pattr.link_layer == IBV_LINK_LAYER_ETHERNET ?
		       "Ethernet" : "other",
		       128 << pattr.active_mtu, pattr.gid_tbl_len);

	pd = ibv_alloc_pd(ctx);
	report(!!pd, "ibv_alloc_pd", errno);
	if (pd) {
		printf("  pd handle %u\n", pd->handle);
		ret = ibv_dealloc_pd(pd);
		report(!ret, "ibv_dealloc_pd", ret);
	}

	/*
	 * sroce does not implement CQs yet: the verb must fail cleanly with
	 * EOPNOTSUPP rather than pretend.
	 */
	if (!strcmp(prov, "sroce")) {
		errno = 0;
		cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
		report(!cq && errno == EOPNOTSUPP,
		       "unimplemented ibv_create_cq fails with EOPNOTSUPP",
		       cq ? EEXIST : errno);
		if (cq)
			ibv_destroy_cq(cq);
	}

	ret = ibv_close_device(ctx);
	report(!ret, "ibv_close_device", ret);
}

int main(int argc, char **argv)
{
	const char *devname = NULL, *want = NULL;
	struct ibv_device **list;
	int i, n, opt, found = 0;

	while ((opt = getopt(argc, argv, "d:p:")) != -1) {
		switch (opt) {
		case 'd':
			devname = optarg;
			break;
		case 'p':
			want = optarg;
			break;
		default:
			fprintf(stderr, "usage: %s [-d DEV [-p PROVIDER]]\n",
				argv[0]);
			return 2;
		}
	}

	list = ibv_get_device_list(&n);
	if (!list) {
		perror("ibv_get_device_list");
		return 1;
	}

	for (i = 0; i < n; i++) {
		if (!devname) {
			printf("%s %s\n", ibv_get_device_name(list[i]),
			       provider_of(list[i]));
			continue;
		}
		if (strcmp(ibv_get_device_name(list[i]), devname))
			continue;
		found = 1;
		check_device(list[i], want);
	}
	ibv_free_device_list(list);

	if (devname && !found) {
		printf("FAIL: no verbs device %s\n", devname);
		return 1;
	}
	return failures ? 1 : 0;
}
