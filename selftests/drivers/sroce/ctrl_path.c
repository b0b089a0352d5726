// SPDX-License-Identifier: GPL-2.0
/*
 * Control-path selftests for sroce: device and port attributes, the GID and
 * P_Key tables, port events, user contexts, protection domains, the user
 * ABI, and the errors for verbs that are not implemented.
 *
 * Each test runs in its own process with a fresh veth pair and sroce
 * device, so tests cannot disturb each other. Needs root.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/sroce-abi.h>

#include "kselftest_harness.h"
#include "sroce_test.h"

/* Mirrors SROCE_MAX_WIRE_OVERHEAD: IPv6 + UDP + BTH + RETH + ImmDt + ICRC. */
#define WIRE_OVERHEAD 84

/* Largest IB MTU that fits a netdev MTU after the RoCEv2 headers. */
static enum ibv_mtu expected_mtu(int netdev_mtu)
{
	int room = netdev_mtu - WIRE_OVERHEAD;

	if (room >= 4096)
		return IBV_MTU_4096;
	if (room >= 2048)
		return IBV_MTU_2048;
	if (room >= 1024)
		return IBV_MTU_1024;
	if (room >= 512)
		return IBV_MTU_512;
	return IBV_MTU_256;
}

FIXTURE(dev) {
	struct sroce_tdev d;
	char ip4[32];
	char ip6[64];
};

FIXTURE_SETUP(dev)
{
	int tag = getpid() % 100000;
	const char *why;
	int ret;

	snprintf(self->ip4, sizeof(self->ip4), "198.18.%d.1", tag % 250);
	snprintf(self->ip6, sizeof(self->ip6), "2001:db8:%x::1", tag);
	ret = sroce_tdev_up(&self->d, "c", &why);
	if (ret == -1)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, ret) TH_LOG("%s", why);
}

FIXTURE_TEARDOWN(dev)
{
	sroce_tdev_down(&self->d);
}

static int read_netdev_mac(const char *ndev, unsigned char mac[6])
{
	char path[128];
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/sys/class/net/%s/address", ndev);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fscanf(f, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0], &mac[1],
		   &mac[2], &mac[3], &mac[4], &mac[5]);
	fclose(f);
	return n == 6 ? 0 : -1;
}

TEST_F(dev, device_attrs)
{
	struct ibv_device_attr_ex ax = {};
	struct ibv_device_attr *a = &ax.orig_attr;
	unsigned char mac[6], guid[8];

	ASSERT_EQ(0, ibv_query_device_ex(self->d.ctx, NULL, &ax));
	EXPECT_EQ(1, a->phys_port_cnt);
	EXPECT_EQ(0xffffff, a->vendor_id);
	EXPECT_STREQ("0.1.0", a->fw_ver);
	EXPECT_EQ(1 << 16, a->max_pd);
	EXPECT_EQ(1, a->max_pkeys);
	EXPECT_EQ(a->node_guid, a->sys_image_guid);
	EXPECT_TRUE(a->device_cap_flags & IBV_DEVICE_PORT_ACTIVE_EVENT);

	/* Node GUID is the EUI-64 of the netdev's MAC (U/L bit flipped). */
	ASSERT_EQ(0, read_netdev_mac(self->d.veth, mac));
	memcpy(guid, &a->node_guid, 8);
	EXPECT_EQ(mac[0] ^ 2, guid[0]);
	EXPECT_EQ(mac[2], guid[2]);
	EXPECT_EQ(0xff, guid[3]);
	EXPECT_EQ(0xfe, guid[4]);
	EXPECT_EQ(mac[5], guid[7]);

	/* Honest limits: objects that cannot be created are not offered. */
	EXPECT_EQ(1 << 18, a->max_mr);
	EXPECT_EQ(1ULL << 34, a->max_mr_size);
	EXPECT_EQ(1 << 14, a->max_cq);
	EXPECT_EQ(1 << 18, a->max_cqe);
	EXPECT_EQ(1 << 16, a->max_qp);
	EXPECT_EQ(1 << 14, a->max_srq);
	EXPECT_EQ(1 << 16, a->max_ah);
	EXPECT_EQ(1 << 18, a->max_mw);
	EXPECT_EQ(IBV_ATOMIC_HCA, a->atomic_cap);
}

TEST_F(dev, port_attrs)
{
	struct ibv_port_attr pa;
	uint16_t pkey;

	ASSERT_EQ(0, ibv_query_port(self->d.ctx, 1, &pa));
	EXPECT_EQ(IBV_PORT_ACTIVE, pa.state);
	EXPECT_EQ(5, pa.phys_state);		/* LinkUp */
	EXPECT_EQ(IBV_LINK_LAYER_ETHERNET, pa.link_layer);
	EXPECT_EQ(expected_mtu(1500), pa.active_mtu);
	EXPECT_EQ(IBV_MTU_4096, pa.max_mtu);	/* veth allows jumbo MTUs */
	EXPECT_EQ(1024, pa.gid_tbl_len);
	EXPECT_EQ(1, pa.pkey_tbl_len);
	EXPECT_EQ(0, pa.lid);

	EXPECT_EQ(0, ibv_query_pkey(self->d.ctx, 1, 0, &pkey));
	EXPECT_EQ(0xffff, ntohs(pkey));
	EXPECT_NE(0, ibv_query_pkey(self->d.ctx, 1, 1, &pkey));
	EXPECT_NE(0, ibv_query_port(self->d.ctx, 2, &pa));
}

static int find_gid(struct ibv_context *ctx, const void *raw, int ifindex,
		    int *type)
{
	struct ibv_gid_entry ents[64];
	ssize_t n, i;

	n = ibv_query_gid_table(ctx, ents, 64, 0);
	for (i = 0; i < n; i++) {
		if (memcmp(ents[i].gid.raw, raw, 16))
			continue;
		*type = ents[i].gid_type;
		return ents[i].ndev_ifindex == (uint32_t)ifindex;
	}
	return 0;
}

static int wait_gid(struct ibv_context *ctx, const void *raw, int ifindex,
		    int present)
{
	int i, type = -1;

	/* The core updates GIDs from a workqueue: give it a moment. */
	for (i = 0; i < 100; i++) {
		if (find_gid(ctx, raw, ifindex, &type) == present)
			return present ? type : 0;
		usleep(50000);
	}
	return -1;
}

TEST_F(dev, gid_table_follows_addresses)
{
	struct ibv_gid_entry ents[64];
	unsigned char g4[16] = { [10] = 0xff, [11] = 0xff };
	unsigned char g6[16];
	int ifindex = if_nametoindex(self->d.veth);
	ssize_t n, i;

	ASSERT_EQ(1, inet_pton(AF_INET, self->ip4, g4 + 12));
	ASSERT_EQ(1, inet_pton(AF_INET6, self->ip6, g6));

	ASSERT_EQ(0, sh("ip addr add %s/24 dev %s", self->ip4, self->d.veth));
	ASSERT_EQ(0, sh("ip addr add %s/64 dev %s nodad", self->ip6,
			self->d.veth));
	EXPECT_EQ(IBV_GID_TYPE_ROCE_V2, wait_gid(self->d.ctx, g4, ifindex, 1));
	EXPECT_EQ(IBV_GID_TYPE_ROCE_V2, wait_gid(self->d.ctx, g6, ifindex, 1));

	/* RoCEv2 only: no IB or RoCE v1 entries anywhere in the table. */
	n = ibv_query_gid_table(self->d.ctx, ents, 64, 0);
	ASSERT_GE(n, 3);	/* link-local, IPv4, IPv6 */
	for (i = 0; i < n; i++)
		EXPECT_EQ(IBV_GID_TYPE_ROCE_V2, ents[i].gid_type);

	ASSERT_EQ(0, sh("ip addr del %s/24 dev %s", self->ip4, self->d.veth));
	ASSERT_EQ(0, sh("ip addr del %s/64 dev %s", self->ip6, self->d.veth));
	EXPECT_EQ(0, wait_gid(self->d.ctx, g4, ifindex, 0));
	EXPECT_EQ(0, wait_gid(self->d.ctx, g6, ifindex, 0));
}

static int wait_port_event(struct ibv_context *ctx, enum ibv_event_type want)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	int i;

	for (i = 0; i < 50; i++) {
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		if (ibv_get_async_event(ctx, &ev))
			continue;
		ibv_ack_async_event(&ev);
		if (ev.event_type == want && ev.element.port_num == 1)
			return 0;
	}
	return -1;
}

TEST_F(dev, port_events_follow_carrier)
{
	struct ibv_port_attr pa;

	/* The peer going down takes our carrier away. */
	ASSERT_EQ(0, sh("ip link set %s down", self->d.peer));
	EXPECT_EQ(0, wait_port_event(self->d.ctx, IBV_EVENT_PORT_ERR));
	ASSERT_EQ(0, ibv_query_port(self->d.ctx, 1, &pa));
	EXPECT_EQ(IBV_PORT_DOWN, pa.state);
	EXPECT_EQ(2, pa.phys_state);		/* Polling: up, no carrier */

	ASSERT_EQ(0, sh("ip link set %s up", self->d.peer));
	EXPECT_EQ(0, wait_port_event(self->d.ctx, IBV_EVENT_PORT_ACTIVE));
	ASSERT_EQ(0, ibv_query_port(self->d.ctx, 1, &pa));
	EXPECT_EQ(IBV_PORT_ACTIVE, pa.state);

	/* Administratively down is down too. */
	ASSERT_EQ(0, sh("ip link set %s down", self->d.veth));
	EXPECT_EQ(0, wait_port_event(self->d.ctx, IBV_EVENT_PORT_ERR));
	ASSERT_EQ(0, ibv_query_port(self->d.ctx, 1, &pa));
	EXPECT_EQ(3, pa.phys_state);		/* Disabled */
	ASSERT_EQ(0, sh("ip link set %s up", self->d.veth));
	EXPECT_EQ(0, wait_port_event(self->d.ctx, IBV_EVENT_PORT_ACTIVE));
}

TEST_F(dev, active_mtu_follows_netdev_mtu)
{
	static const int mtus[] = { 9000, 4180, 4179, 2132, 2131, 1500,
				    600, 596, 340 };
	struct ibv_port_attr pa;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(mtus); i++) {
		ASSERT_EQ(0, sh("ip link set %s mtu %d", self->d.veth,
				mtus[i]));
		ASSERT_EQ(0, ibv_query_port(self->d.ctx, 1, &pa));
		EXPECT_EQ(expected_mtu(mtus[i]), pa.active_mtu)
			TH_LOG("netdev mtu %d", mtus[i]);
		EXPECT_EQ(IBV_PORT_ACTIVE, pa.state);
	}

	/* Too small for a 256-byte IB MTU: the port goes down, and back. */
	ASSERT_EQ(0, sh("ip link set %s mtu 339", self->d.veth));
	EXPECT_EQ(0, wait_port_event(self->d.ctx, IBV_EVENT_PORT_ERR));
	ASSERT_EQ(0, ibv_query_port(self->d.ctx, 1, &pa));
	EXPECT_EQ(IBV_PORT_DOWN, pa.state);
	ASSERT_EQ(0, sh("ip link set %s mtu 1500", self->d.veth));
	EXPECT_EQ(0, wait_port_event(self->d.ctx, IBV_EVENT_PORT_ACTIVE));
}

TEST_F(dev, pd_alloc_free)
{
	struct ibv_pd *a, *b;

	a = ibv_alloc_pd(self->d.ctx);
	ASSERT_NE(NULL, a);
	b = ibv_alloc_pd(self->d.ctx);
	ASSERT_NE(NULL, b);
	EXPECT_NE(a->handle, b->handle);
	EXPECT_EQ(0, ibv_dealloc_pd(b));
	EXPECT_EQ(0, ibv_dealloc_pd(a));
}

TEST_F_TIMEOUT(dev, pd_limit_enforced, 300)
{
	struct ibv_device_attr a;
	struct ibv_pd **pds;
	int i, n = 0, kernel_pds;

	ASSERT_EQ(0, ibv_query_device(self->d.ctx, &a));
	/* Kernel clients (the MAD layer for QP1) hold PDs of their own. */
	kernel_pds = sh("exit $(rdma resource show pd dev %s | grep -c .)",
			self->d.ibdev);
	ASSERT_LE(0, kernel_pds);
	TH_LOG("kernel PDs %d: they do not count against the users' share",
	       kernel_pds);
	pds = calloc(a.max_pd + 1, sizeof(*pds));
	ASSERT_NE(NULL, pds);
	for (i = 0; i <= a.max_pd; i++) {
		pds[i] = ibv_alloc_pd(self->d.ctx);
		if (!pds[i])
			break;
		n++;
	}
	EXPECT_EQ(sroce_user_share(a.max_pd), n);
	EXPECT_EQ(ENOMEM, errno);
	/* Freeing one makes room for exactly one more. */
	ASSERT_EQ(0, ibv_dealloc_pd(pds[0]));
	pds[0] = ibv_alloc_pd(self->d.ctx);
	EXPECT_NE(NULL, pds[0]);
	for (i = 0; i < n; i++)
		if (pds[i])
			EXPECT_EQ(0, ibv_dealloc_pd(pds[i]));
	free(pds);
}

/*
 * The legacy write() interface lets the test reach the kernel directly,
 * with driver data the provider would never send.
 */
struct raw_alloc_pd {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_alloc_pd cmd;
	__u64 driver_in;
};

struct raw_alloc_pd_resp {
	struct ib_uverbs_alloc_pd_resp base;
	struct sroce_alloc_pd_resp drv;
};

static int raw_alloc_pd(struct ibv_context *ctx, __u64 driver_in,
			struct raw_alloc_pd_resp *resp)
{
	struct raw_alloc_pd req = {
		.hdr.command = IB_USER_VERBS_CMD_ALLOC_PD,
		.hdr.in_words = sizeof(req) / 4,
		.hdr.out_words = sizeof(*resp) / 4,
		.cmd.response = (uintptr_t)resp,
		.driver_in = driver_in,
	};

	memset(resp, 0, sizeof(*resp));
	return uverbs_write(ctx, &req, sizeof(req));
}

static int raw_dealloc_pd(struct ibv_context *ctx, __u32 handle)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_dealloc_pd cmd;
	} req = {
		.hdr.command = IB_USER_VERBS_CMD_DEALLOC_PD,
		.hdr.in_words = sizeof(req) / 4,
		.cmd.pd_handle = handle,
	};

	return uverbs_write(ctx, &req, sizeof(req));
}

TEST_F(dev, uabi_pd_response_and_input_checks)
{
	struct raw_alloc_pd_resp r1, r2, r3;

	ASSERT_EQ(0, raw_alloc_pd(self->d.ctx, 0, &r1));
	ASSERT_EQ(0, raw_alloc_pd(self->d.ctx, 0, &r2));
	/* The driver part of the response carries distinct PD numbers. */
	EXPECT_NE(0, r1.drv.pdn);
	EXPECT_NE(0, r2.drv.pdn);
	EXPECT_NE(r1.drv.pdn, r2.drv.pdn);
	EXPECT_EQ(0, r1.drv.reserved);

	/* Unknown input bits are refused, not ignored. */
	EXPECT_EQ(-EINVAL, raw_alloc_pd(self->d.ctx, 1, &r3));

	EXPECT_EQ(0, raw_dealloc_pd(self->d.ctx, r1.base.pd_handle));
	/* A stale handle is refused by the core (which errno is its call). */
	EXPECT_GT(0, raw_dealloc_pd(self->d.ctx, r1.base.pd_handle));
	EXPECT_EQ(0, raw_dealloc_pd(self->d.ctx, r2.base.pd_handle));
}

/* GET_CONTEXT on a fresh uverbs fd, with @driver_in as driver data. */
static int raw_get_context(struct ibv_context *ctx, __u64 driver_in,
			   struct sroce_alloc_ucontext_resp *drv)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_get_context cmd;
		__u64 driver_in;
	} req = {
		.hdr.command = IB_USER_VERBS_CMD_GET_CONTEXT,
		.hdr.in_words = sizeof(req) / 4,
		.driver_in = driver_in,
	};
	struct {
		struct ib_uverbs_get_context_resp base;
		struct sroce_alloc_ucontext_resp drv;
	} resp = {};
	char path[128];
	int fd, ret;

	req.hdr.out_words = sizeof(resp) / 4;
	req.cmd.response = (uintptr_t)&resp;
	/* dev_name is the uverbs character device, e.g. "uverbs0". */
	snprintf(path, sizeof(path), "/dev/infiniband/%s",
		 ctx->device->dev_name);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = write(fd, &req, sizeof(req)) == sizeof(req) ? 0 : -errno;
	if (!ret) {
		*drv = resp.drv;
		close(resp.base.async_fd);
	}
	close(fd);
	return ret;
}

TEST_F(dev, uabi_ucontext_response_and_input_checks)
{
	struct sroce_alloc_ucontext_resp drv;

	ASSERT_EQ(0, raw_get_context(self->d.ctx, 0, &drv));
	EXPECT_EQ(SROCE_UVERBS_ABI_VERSION, drv.abi_version);
	EXPECT_EQ(0, drv.reserved);
	/* Driver input the module does not know is refused. */
	EXPECT_EQ(-EINVAL, raw_get_context(self->d.ctx, 1, &drv));
}

TEST_F(dev, unimplemented_verbs_eopnotsupp)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_open_xrcd cmd;
	} req = {
		.hdr.command = IB_USER_VERBS_CMD_OPEN_XRCD,
		.hdr.in_words = sizeof(req) / 4,
		.hdr.out_words = sizeof(struct ib_uverbs_open_xrcd_resp) / 4,
		.cmd.fd = -1,
		.cmd.oflags = O_CREAT,
	};
	struct ib_uverbs_open_xrcd_resp resp;
	struct ibv_xrcd_init_attr xattr = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1,
		.oflags = O_CREAT,
	};
	struct ibv_qp_init_attr qattr = {
		.qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_pd *pd;
	struct ibv_cq *cq;

	req.cmd.response = (uintptr_t)&resp;
	/* The kernel itself refuses, whatever the provider does. */
	EXPECT_EQ(-1, write(self->d.ctx->cmd_fd, &req, sizeof(req)));
	EXPECT_EQ(EOPNOTSUPP, errno);

	/* And through libibverbs. */
	pd = ibv_alloc_pd(self->d.ctx);
	ASSERT_NE(NULL, pd);
	cq = ibv_create_cq(self->d.ctx, 4, NULL, NULL, 0);
	ASSERT_NE(NULL, cq);
	qattr.send_cq = cq;
	qattr.recv_cq = cq;
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_qp(pd, &qattr));
	EXPECT_EQ(EOPNOTSUPP, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibv_open_xrcd(self->d.ctx, &xattr));
	EXPECT_EQ(EOPNOTSUPP, errno);
	EXPECT_EQ(0, ibv_destroy_cq(cq));
	EXPECT_EQ(0, ibv_dealloc_pd(pd));
}

TEST_F(dev, counters_exposed)
{
	char path[256];

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/1/hw_counters/rx_drop_malformed",
		 self->d.ibdev);
	EXPECT_EQ(0, access(path, R_OK));
}

TEST_HARNESS_MAIN
