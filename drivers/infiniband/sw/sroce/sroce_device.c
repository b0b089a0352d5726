// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The device as the core and its users see it: device and port queries,
 * user contexts, and the device-wide object limits with the share kept
 * for kernel consumers. Verbs that are not implemented are left out of
 * the ops table (sroce_main.c) so the rdma core answers them with
 * -EOPNOTSUPP.
 */
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>
#include <rdma/uverbs_ioctl.h>

#include "sroce.h"

int sroce_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		       struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibdev);

	/* No driver-specific input is defined; output room is left alone. */
	if (udata && udata->inlen)
		return -EINVAL;

	memset(attr, 0, sizeof(*attr));
	attr->fw_ver = (u64)SROCE_FW_MAJOR << 32 | SROCE_FW_MINOR << 16 |
		       SROCE_FW_SUBMINOR;
	attr->sys_image_guid = ibdev->node_guid;
	attr->vendor_id = SROCE_VENDOR_ID;
	attr->vendor_part_id = SROCE_VENDOR_PART_ID;
	attr->page_size_cap = PAGE_SIZE;
	/* Fast registration, local invalidate and send with invalidate. */
	attr->device_cap_flags = IB_DEVICE_PORT_ACTIVE_EVENT |
				 IB_DEVICE_SYS_IMAGE_GUID |
				 IB_DEVICE_MEM_MGT_EXTENSIONS |
				 IB_DEVICE_MEM_WINDOW |
				 IB_DEVICE_MEM_WINDOW_TYPE_2B |
				 SROCE_DEVICE_ATOMIC_WRITE |
				 SROCE_DEVICE_FLUSH_GLOBAL;
	attr->max_fast_reg_page_list_len = SROCE_MAX_FRMR_PAGES;
	/* Kernel consumers may use lkey 0 in any of their PDs. */
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG | IBK_LOCAL_DMA_LKEY;
	/* Objects sroce does not implement (XRC) keep a limit of zero. */
	attr->max_pd = sdev->max_pd;
	attr->max_mr = sdev->max_mr;
	/* Windows share the MR table (and its key space) with regions. */
	attr->max_mw = sdev->max_mr;
	attr->max_mr_size = SROCE_MAX_MR_SIZE;
	attr->max_cq = sdev->max_cq;
	attr->max_cqe = SROCE_MAX_CQE;
	attr->max_qp = sdev->max_qp;
	attr->max_qp_wr = SROCE_MAX_QP_WR;
	attr->max_send_sge = SROCE_MAX_SGE;
	attr->max_recv_sge = SROCE_MAX_SGE;
	attr->max_sge_rd = SROCE_MAX_SGE;
	attr->max_qp_rd_atom = SROCE_MAX_RD_ATOMIC;
	attr->max_qp_init_rd_atom = SROCE_MAX_INIT_RD_ATOMIC;
	attr->max_ah = sdev->max_ah;
	attr->max_srq = SROCE_MAX_SRQ;
	attr->max_mcast_grp = SROCE_MAX_MCAST_GRP;
	attr->max_mcast_qp_attach = SROCE_MAX_MCAST_QP_ATTACH;
	attr->max_total_mcast_qp_attach = SROCE_MAX_MCAST_GRP *
					  SROCE_MAX_MCAST_QP_ATTACH;
	attr->max_srq_wr = SROCE_MAX_SRQ_WR;
	attr->max_srq_sge = SROCE_MAX_SGE;
	attr->max_pkeys = SROCE_PKEY_TABLE_LEN;
	/* Responder atomics are CPU atomics on the target: atomic HCA-wide. */
	attr->atomic_cap = IB_ATOMIC_HCA;
	attr->masked_atomic_cap = IB_ATOMIC_NONE;
	attr->local_ca_ack_delay = 15;
	return 0;
}

int sroce_query_port(struct ib_device *ibdev, u32 port,
		     struct ib_port_attr *attr)
{
	struct sroce_dev *sdev = to_sdev(ibdev);
	struct net_device *ndev = sdev->ndev;

	/* The core zeroes @attr before calling us. */
	attr->state = sroce_port_state(ndev);
	attr->phys_state = sroce_phys_state(ndev);
	attr->max_mtu = sroce_max_mtu(ndev);
	attr->active_mtu = sroce_active_mtu(ndev);
	if (attr->active_mtu > attr->max_mtu)
		attr->active_mtu = attr->max_mtu;
	attr->gid_tbl_len = SROCE_GID_TABLE_LEN;
	attr->pkey_tbl_len = SROCE_PKEY_TABLE_LEN;
	attr->port_cap_flags = 0;
	attr->max_msg_sz = SROCE_MAX_MSG_SIZE;
	attr->bad_pkey_cntr = min_t(u64, U16_MAX,
				    sroce_counter_read(sdev,
						       SROCE_CNT_RX_DROP_BAD_PKEY));
	attr->qkey_viol_cntr = 0;
	attr->lid = 0;
	attr->sm_lid = 0;
	attr->lmc = 0;
	attr->max_vl_num = 1;
	attr->sm_sl = 0;
	attr->subnet_timeout = 0;
	attr->init_type_reply = 0;

	attr->active_speed = READ_ONCE(sdev->active_speed);
	attr->active_width = READ_ONCE(sdev->active_width);
	return 0;
}

enum rdma_link_layer sroce_get_link_layer(struct ib_device *ibdev, u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

int sroce_get_port_immutable(struct ib_device *ibdev, u32 port,
			     struct ib_port_immutable *immutable)
{
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->pkey_tbl_len = SROCE_PKEY_TABLE_LEN;
	immutable->gid_tbl_len = SROCE_GID_TABLE_LEN;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

int sroce_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey)
{
	if (index >= SROCE_PKEY_TABLE_LEN)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

void sroce_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	snprintf(str, IB_FW_VERSION_NAME_MAX, "%d.%d.%d", SROCE_FW_MAJOR,
		 SROCE_FW_MINOR, SROCE_FW_SUBMINOR);
}

int sroce_alloc_ucontext(struct ib_ucontext *ibuctx, struct ib_udata *udata)
{
	struct sroce_alloc_ucontext_resp resp = {
		.abi_version = SROCE_UVERBS_ABI_VERSION,
		.caps = SROCE_UCTX_CAP_SQ_DOORBELL_METHOD,
	};

	/* Requests carry no input yet; refuse bits we would silently drop. */
	if (!sroce_udata_input_ok(udata))
		return -EINVAL;
	return ib_copy_to_udata(udata, &resp, min(udata->outlen, sizeof(resp)));
}

void sroce_dealloc_ucontext(struct ib_ucontext *ibuctx)
{
}

/*
 * Having the op lets device removal proceed while user contexts are open.
 * Ring mappings (remap_vmalloc_range) are not zapped by the core; they stay
 * valid memory, held by their page references, until the process unmaps.
 */
void sroce_disassociate_ucontext(struct ib_ucontext *ibuctx)
{
}

/*
 * The share of a limit kept for kernel consumers: an eighth, but at least
 * 16 (half of a small limit), which covers the MAD layer and the RDMA CM
 * with a storage ULP's few queues beside them.
 */
static u32 sroce_kernel_share(u32 max)
{
	return max_t(u32, max / 8, min_t(u32, max / 2, 16));
}

/**
 * sroce_budget_take() - count a new object against its device-wide limit.
 * @b: the kind's budget
 * @max: the limit
 * @user: user space asks; it may not take the kernel's share
 *
 * Return: false when the limit is reached (the caller fails with ENOMEM).
 */
bool sroce_budget_take(struct sroce_budget *b, u32 max, bool user)
{
	if (user && atomic_inc_return(&b->user) > max - sroce_kernel_share(max))
		goto err_user;
	if (atomic_inc_return(&b->all) > max)
		goto err_all;
	return true;

err_all:
	atomic_dec(&b->all);
err_user:
	if (user)
		atomic_dec(&b->user);
	return false;
}

void sroce_budget_put(struct sroce_budget *b, bool user)
{
	atomic_dec(&b->all);
	if (user)
		atomic_dec(&b->user);
}
