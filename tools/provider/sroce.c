// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce rdma-core provider: device matching, context and PD verbs.
 *
 * Everything not set in sroce_ctx_ops is left to libibverbs' stubs, which
 * fail with EOPNOTSUPP; nothing here pretends to support a verb.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sroce.h"

/*
 * What the kernel sees as driver data (udata) is everything past the core
 * command and response; pin those offsets and sizes.
 */
static_assert(sizeof(struct usroce_get_context) == 16, "get_context cmd");
static_assert(offsetof(struct usroce_get_context_resp, drv_payload) == 8,
	      "ucontext udata must start after ib_uverbs_get_context_resp");
static_assert(sizeof(struct usroce_get_context_resp) == 8 + 16,
	      "get_context resp");
static_assert(sizeof(struct usroce_alloc_pd) == 16, "alloc_pd cmd");
static_assert(offsetof(struct usroce_alloc_pd_resp, drv_payload) == 4,
	      "pd udata must start after ib_uverbs_alloc_pd_resp");
static_assert(sizeof(struct usroce_alloc_pd_resp) == 4 + 8, "alloc_pd resp");
static_assert(sizeof(struct ibv_query_port) == 24, "query_port cmd");

static int sroce_query_device_ex(struct ibv_context *ibctx,
				 const struct ibv_query_device_ex_input *input,
				 struct ibv_device_attr_ex *attr,
				 size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	uint64_t fw;
	int ret;

	ret = ibv_cmd_query_device_any(ibctx, input, attr, attr_size, &resp,
				       &resp_size);
	if (ret)
		return ret;

	/* The kernel reports the version packed as 16-bit fields. */
	fw = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		 "%u.%u.%u", (unsigned int)(fw >> 32) & 0xffff,
		 (unsigned int)(fw >> 16) & 0xffff, (unsigned int)fw & 0xffff);
	return 0;
}

static int sroce_query_port(struct ibv_context *ibctx, uint8_t port,
			    struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd = {};

	return ibv_cmd_query_port(ibctx, port, attr, &cmd, sizeof(cmd));
}

static struct ibv_pd *sroce_alloc_pd(struct ibv_context *ibctx)
{
	struct usroce_alloc_pd cmd = {};
	struct usroce_alloc_pd_resp resp = {};
	struct sroce_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;

	ret = ibv_cmd_alloc_pd(ibctx, &pd->ibv_pd, &cmd.ibv_cmd, sizeof(cmd),
			       &resp.ibv_resp, sizeof(resp));
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}

	pd->pdn = resp.drv_payload.pdn;
	return &pd->ibv_pd;
}

static int sroce_dealloc_pd(struct ibv_pd *ibpd)
{
	int ret;

	ret = ibv_cmd_dealloc_pd(ibpd);
	if (ret)
		return ret;

	free(to_spd(ibpd));
	return 0;
}

static void sroce_free_context(struct ibv_context *ibctx)
{
	struct sroce_context *sctx = to_sctx(ibctx);

	verbs_uninit_context(&sctx->vctx);
	free(sctx);
}

static struct ibv_mr *sroce_reg_mr(struct ibv_pd *pd, void *addr,
				   size_t length, uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct ibv_reg_mr cmd = {};
	struct verbs_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;
	ret = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd,
			     sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

static int sroce_dereg_mr(struct verbs_mr *vmr)
{
	int ret = ibv_cmd_dereg_mr(vmr);

	if (ret)
		return ret;
	free(vmr);
	return 0;
}

struct ibv_ah *sroce_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct usroce_create_ah_resp resp = {};
	struct sroce_ah *ah;
	int ret;

	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;
	ret = ibv_cmd_create_ah(pd, &ah->ibv_ah, attr, &resp.ibv_resp,
				sizeof(resp));
	if (ret) {
		free(ah);
		errno = ret;
		return NULL;
	}
	ah->ah_num = resp.drv_payload.ah_num;
	return &ah->ibv_ah;
}

int sroce_destroy_ah(struct ibv_ah *ibah)
{
	int ret = ibv_cmd_destroy_ah(ibah);

	if (ret)
		return ret;
	free(to_sah(ibah));
	return 0;
}

static struct ibv_mw *sroce_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp = {};
	struct ibv_alloc_mw cmd = {};
	struct ibv_mw *mw;
	int ret;

	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return NULL;
	ret = ibv_cmd_alloc_mw(pd, type, mw, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		free(mw);
		errno = ret;
		return NULL;
	}
	return mw;
}

static int sroce_dealloc_mw(struct ibv_mw *mw)
{
	int ret = ibv_cmd_dealloc_mw(mw);

	if (!ret)
		free(mw);
	return ret;
}

/*
 * Type 1 binds: a BIND_MW WQE on the QP's send queue, under the next rkey
 * of the window, which the window carries once the bind is posted.
 */
static int sroce_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
			 struct ibv_mw_bind *mw_bind)
{
	struct ibv_send_wr wr = {
		.wr_id = mw_bind->wr_id,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = mw_bind->send_flags,
	}, *bad;
	uint32_t rkey = ibv_inc_rkey(mw->rkey);
	int ret;

	if (mw->type != IBV_MW_TYPE_1)
		return EINVAL;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info = mw_bind->bind_info;
	ret = sroce_post_send(qp, &wr, &bad);
	if (!ret)
		mw->rkey = rkey;
	return ret;
}

static const struct verbs_context_ops sroce_ctx_ops = {
	.alloc_mw = sroce_alloc_mw,
	/* Multicast membership is kernel state alone. */
	.attach_mcast = ibv_cmd_attach_mcast,
	.bind_mw = sroce_bind_mw,
	.dealloc_mw = sroce_dealloc_mw,
	.alloc_pd = sroce_alloc_pd,
	.create_ah = sroce_create_ah,
	.create_cq = sroce_create_cq,
	.create_cq_ex = sroce_create_cq_ex,
	.create_qp = sroce_create_qp,
	.create_qp_ex = sroce_create_qp_ex,
	.create_srq = sroce_create_srq,
	.dealloc_pd = sroce_dealloc_pd,
	.dereg_mr = sroce_dereg_mr,
	.destroy_ah = sroce_destroy_ah,
	.destroy_cq = sroce_destroy_cq,
	.destroy_qp = sroce_destroy_qp,
	.destroy_srq = sroce_destroy_srq,
	.detach_mcast = ibv_cmd_detach_mcast,
	.free_context = sroce_free_context,
	.modify_qp = sroce_modify_qp,
	.modify_srq = sroce_modify_srq,
	.poll_cq = sroce_poll_cq,
	.post_recv = sroce_post_recv,
	.post_send = sroce_post_send,
	.post_srq_recv = sroce_post_srq_recv,
	.query_device_ex = sroce_query_device_ex,
	.query_port = sroce_query_port,
	.query_qp = sroce_query_qp,
	.query_srq = sroce_query_srq,
	.reg_mr = sroce_reg_mr,
	.req_notify_cq = sroce_req_notify_cq,
	.resize_cq = sroce_resize_cq,
};

static struct verbs_context *sroce_alloc_context(struct ibv_device *ibdev,
						 int cmd_fd,
						 void *private_data)
{
	struct usroce_get_context cmd = {};
	struct usroce_get_context_resp resp = {};
	struct sroce_context *sctx;
	uint32_t kabi;
	int ret;

	(void)private_data;

	/* On failure this closes cmd_fd, as alloc_context must. */
	sctx = verbs_init_and_alloc_context(ibdev, cmd_fd, sctx, vctx,
					    RDMA_DRIVER_UNKNOWN);
	if (!sctx)
		return NULL;

	ret = ibv_cmd_get_context(&sctx->vctx, &cmd.ibv_cmd, sizeof(cmd),
				  &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err;

	/*
	 * sysfs already told libibverbs the device's ABI, but a module that
	 * answers with a different (or no) response layout must not be
	 * driven by this provider.
	 */
	kabi = resp.drv_payload.abi_version;
	if (kabi != SROCE_UVERBS_ABI_VERSION) {
		fprintf(stderr,
			"sroce: %s: kernel module speaks sroce ABI %u, this provider speaks %u; install a matching module and provider\n",
			ibdev->name, kabi, SROCE_UVERBS_ABI_VERSION);
		ret = EPROTO;
		goto err;
	}
	sctx->caps = resp.drv_payload.caps;

	verbs_set_ops(&sctx->vctx, &sroce_ctx_ops);
	return &sctx->vctx;

err:
	/* Closes cmd_fd, which also tears down any kernel ucontext. */
	verbs_uninit_context(&sctx->vctx);
	free(sctx);
	errno = ret;
	return NULL;
}

static struct verbs_device *
sroce_alloc_device(struct verbs_sysfs_dev *sysfs_dev)
{
	struct sroce_device *sdev;

	sdev = calloc(1, sizeof(*sdev));
	if (!sdev)
		return NULL;

	sdev->abi_version = sysfs_dev->abi_ver;
	return &sdev->vdev;
}

static void sroce_uninit_device(struct verbs_device *vdev)
{
	free(container_of(vdev, struct sroce_device, vdev));
}

/*
 * The module registers as RDMA_DRIVER_UNKNOWN (the driver-id enum is closed
 * to out-of-tree drivers) and asks the kernel not to report a driver id at
 * all, so devices cannot be recognised by id. Names are not reliable either
 * ("rdma link add" takes any name, "rdma dev set" renames). The node
 * description is: the module sets it to SROCE_NODE_DESC and offers no way
 * to change it. The table entry lets libibverbs' name pass flag the usual
 * "sroce*" names; the decision is taken in sroce_match_device().
 */
static const struct verbs_match_ent sroce_match_table[] = {
	VERBS_MODALIAS_MATCH("rdma_device:N" SROCE_DEVICE_NAME_PREFIX "*",
			     NULL),
	{}
};

static bool sroce_node_desc_is_ours(const char *ibdev_path)
{
	char path[IBV_SYSFS_PATH_MAX + 16], desc[64];
	size_t len;
	FILE *f;

	if (snprintf(path, sizeof(path), "%s/node_desc", ibdev_path) >=
	    (int)sizeof(path))
		return false;
	f = fopen(path, "re");
	if (!f)
		return false;
	len = fread(desc, 1, sizeof(desc) - 1, f);
	fclose(f);
	desc[len] = 0;
	desc[strcspn(desc, "\n")] = 0;
	return !strcmp(desc, SROCE_NODE_DESC);
}

/*
 * Called for every device after the table lookup. A device that a kernel
 * driver registered under a known id (say an rxe device named "sroce0") is
 * never ours; otherwise the node description decides, whatever the name.
 */
static bool sroce_match_device(struct verbs_sysfs_dev *sysfs_dev)
{
	return sysfs_dev->driver_id == RDMA_DRIVER_UNKNOWN &&
	       sroce_node_desc_is_ours(sysfs_dev->ibdev_path);
}

static const struct verbs_device_ops sroce_dev_ops = {
	.name = "sroce",
	.match_min_abi_version = SROCE_UVERBS_ABI_VERSION,
	.match_max_abi_version = SROCE_UVERBS_ABI_VERSION,
	.match_table = sroce_match_table,
	.match_device = sroce_match_device,
	.alloc_device = sroce_alloc_device,
	.uninit_device = sroce_uninit_device,
	.alloc_context = sroce_alloc_context,
};

PROVIDER_DRIVER(sroce, sroce_dev_ops);
