// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_check: which provider owns each verbs device, and a smoke test of
 * the control verbs the provider implements.
 *
 *   sroce_check                      list "<device> <provider>" lines
 *   sroce_check -d DEV [-p PROVIDER] open DEV, query it, allocate a PD;
 *                                    with -p, fail unless PROVIDER owns DEV
 *   sroce_check -a                   check the provider's ABI assumptions
 *                                    (no device needed)
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

#include "sroce.h"

/*
 * The uapi layouts the data path writes and reads: offsets the kernel
 * relies on, identical on 32- and 64-bit builds.
 */
static_assert(sizeof(struct sroce_ring_hdr) == 128, "ring header");
static_assert(offsetof(struct sroce_ring_hdr, cons) == 64, "ring cons");
static_assert(offsetof(struct sroce_ring_hdr, flags) == 68, "ring flags");
static_assert(sizeof(struct sroce_sge) == 16, "sge");
static_assert(sizeof(struct sroce_send_wqe) == 64, "send wqe");
static_assert(offsetof(struct sroce_send_wqe, ex) == 20, "send wqe ex");
static_assert(offsetof(struct sroce_send_wqe, wr.rdma.rkey) == 32,
	      "send wqe rkey");
static_assert(offsetof(struct sroce_send_wqe, wr.atomic.rkey) == 48,
	      "send wqe atomic rkey");
static_assert(offsetof(struct sroce_send_wqe, inline_len) == 56,
	      "send wqe inline_len");
static_assert(sizeof(struct sroce_recv_wqe) == 16, "recv wqe");
static_assert(sizeof(struct sroce_cqe) == 64, "cqe");

/*
 * The values the provider copies between ibverbs and the rings unchanged
 * are pinned where they are copied (sroce_post.c, sroce_cq.c).
 */

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

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

	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	report(!!cq, "ibv_create_cq", errno);
	if (cq) {
		ret = ibv_destroy_cq(cq);
		report(!ret, "ibv_destroy_cq", ret);
	}

	pd = ibv_alloc_pd(ctx);
	report(!!pd, "ibv_alloc_pd", errno);
	if (pd) {
		printf("  pd handle %u\n", pd->handle);
		/*
		 * sroce has no shared receive queues yet: the verb must fail
		 * cleanly with EOPNOTSUPP rather than pretend.
		 */
		if (!strcmp(prov, "sroce")) {
			struct ibv_srq_init_attr sattr = {
				.attr = { .max_wr = 16, .max_sge = 1 },
			};
			struct ibv_srq *srq;

			errno = 0;
			srq = ibv_create_srq(pd, &sattr);
			report(!srq && errno == EOPNOTSUPP,
			       "unimplemented ibv_create_srq fails with EOPNOTSUPP",
			       srq ? EEXIST : errno);
			if (srq)
				ibv_destroy_srq(srq);
		}
		ret = ibv_dealloc_pd(pd);
		report(!ret, "ibv_dealloc_pd", ret);
	}

	ret = ibv_close_device(ctx);
	report(!ret, "ibv_close_device", ret);
}

/* The CQE flag conversion of the poll paths, over every combination. */
static void check_abi(void)
{
	static const struct {
		uint32_t sroce;
		unsigned int ibv;
	} map[] = {
		{ SROCE_WC_F_GRH, IBV_WC_GRH },
		{ SROCE_WC_F_WITH_IMM, IBV_WC_WITH_IMM },
		{ SROCE_WC_F_WITH_INV, IBV_WC_WITH_INV },
	};
	const unsigned int n = ARRAY_SIZE(map);
	unsigned int combo, i, want, bad = 0;
	uint32_t in;

	for (combo = 0; combo < 1U << n; combo++) {
		in = 0;
		want = 0;
		for (i = 0; i < n; i++) {
			if (combo & (1U << i)) {
				in |= map[i].sroce;
				want |= map[i].ibv;
			}
		}
		if (sroce_wc_flags(in) != want)
			bad++;
	}
	/* Bits the provider does not know are dropped, not passed on. */
	if (sroce_wc_flags(~0U) != (IBV_WC_GRH | IBV_WC_WITH_IMM |
				    IBV_WC_WITH_INV))
		bad++;
	report(!bad, "abi: SROCE_WC_F_* convert to ibv_wc_flags", EINVAL);
	/* The static_asserts above held, or this would not have built. */
	printf("ok: abi: uapi layouts, opcodes and send flags\n");
}

int main(int argc, char **argv)
{
	const char *devname = NULL, *want = NULL;
	struct ibv_device **list;
	int i, n, opt, found = 0;

	while ((opt = getopt(argc, argv, "ad:p:")) != -1) {
		switch (opt) {
		case 'a':
			check_abi();
			return failures ? 1 : 0;
		case 'd':
			devname = optarg;
			break;
		case 'p':
			want = optarg;
			break;
		default:
			fprintf(stderr,
				"usage: %s [-a | -d DEV [-p PROVIDER]]\n",
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
