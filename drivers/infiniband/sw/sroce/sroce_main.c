// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce: a software RoCEv2 RDMA device.
 *
 * Module life cycle, the device life cycle (rdma link add/del, netdev
 * removal, module unload) and the ib_device_ops table.
 *
 * Who tears a device down:
 *  - "rdma link del" and module unload call ib_unregister_device();
 *  - NETDEV_UNREGISTER queues sroce_unreg_work on sroce_wq, because the
 *    notifier runs under RTNL and unregistration may need it;
 *  - in every case the core then calls sroce_dealloc_driver(), the one
 *    place that releases what sroce_newlink() acquired.
 *
 * Module unload must not finish while another thread still runs our code
 * for a device. The device list therefore holds a reference on every
 * device until module exit or the next "rdma link add" reaps it with
 * ib_unregister_device(), which waits on the core's unregistration lock
 * until any concurrent sroce_dealloc_driver() has returned; sroce_wq is
 * drained before the module goes.
 */
#include <linux/if_arp.h>
#include <linux/module.h>
#include <linux/workqueue.h>
#include <net/addrconf.h>
#include <rdma/rdma_netlink.h>

#include "sroce.h"
#include "sroce_sq.h"

/*
 * Object limits of devices created from now on (0444: fixed at load). The
 * QP limit counts the MAD layer's QP1; the MR limit regions and windows.
 * User space together may fill each only up to a share that leaves room
 * for kernel consumers (sroce_budget_take()).
 */
static unsigned int max_qp = SROCE_MAX_QP;
module_param(max_qp, uint, 0444);
MODULE_PARM_DESC(max_qp, "Queue pairs per device (2 to 65536)");
static unsigned int max_cq = SROCE_MAX_CQ;
module_param(max_cq, uint, 0444);
MODULE_PARM_DESC(max_cq, "Completion queues per device (2 to 16384)");
static unsigned int max_mr = SROCE_MAX_MR;
module_param(max_mr, uint, 0444);
MODULE_PARM_DESC(max_mr, "Memory regions and windows per device (1 to 262144)");
static unsigned int max_ah = SROCE_MAX_AH;
module_param(max_ah, uint, 0444);
MODULE_PARM_DESC(max_ah, "Address handles per device (2 to 65536)");
static unsigned int max_pd = SROCE_MAX_PD;
module_param(max_pd, uint, 0444);
MODULE_PARM_DESC(max_pd, "Protection domains per device (2 to 65536)");

/*
 * Every device of this module, live or already deallocated; see above.
 * ib_unregister_driver() cannot be used because out-of-tree drivers share
 * RDMA_DRIVER_UNKNOWN.
 */
static LIST_HEAD(sroce_dev_list);
static DEFINE_MUTEX(sroce_dev_list_lock);
static struct workqueue_struct *sroce_wq;
/* Data-path work: continued sending, read responses, flushes. */
struct workqueue_struct *sroce_data_wq;
struct workqueue_struct *sroce_kernel_wq;
/*
 * Send-ring pollers, each on a CPU sroce_sq.c picks (not the one whose
 * drain started it, which the scheduler would pick), at normal priority;
 * not concurrency-managed, so other work on that CPU starts, and the
 * poller then yields.
 */
struct workqueue_struct *sroce_poll_wq;

static void sroce_dealloc_driver(struct ib_device *ibdev)
{
	struct sroce_dev *sdev = to_sdev(ibdev);

	sroce_net_detach(sdev);
	sroce_gid_exit(sdev);
	sroce_lo_exit(sdev);
	ida_destroy(&sdev->pd_ida);
	/* The core destroyed every user object before calling us. */
	WARN_ON(!xa_empty(&sdev->mr_xa));
	xa_destroy(&sdev->mr_xa);
	WARN_ON(!list_empty(&sdev->mcast_list));
	WARN_ON(!xa_empty(&sdev->ah_xa));
	xa_destroy(&sdev->ah_xa);
	WARN_ON(!xa_empty(&sdev->qp_xa));
	xa_destroy(&sdev->qp_xa);
	WARN_ON(!xa_empty(&sdev->counter_sets));
	xa_destroy(&sdev->counter_sets);
	free_percpu(sdev->counters);
	sdev->counters = NULL;
	netdev_put(sdev->ndev, &sdev->ndev_tracker);
	sdev->ndev = NULL;

	mutex_lock(&sroce_dev_list_lock);
	sdev->dead = true;
	mutex_unlock(&sroce_dev_list_lock);
}

static void sroce_unreg_work(struct work_struct *work)
{
	struct sroce_dev *sdev = container_of(work, struct sroce_dev,
					      unreg_work);

	ib_unregister_device(&sdev->ibdev);
	put_device(&sdev->ibdev.dev);
}

/**
 * sroce_dev_netdev_gone() - the bound netdev is being unregistered.
 * @sdev: device bound to it
 *
 * Context: RTNL held (netdev notifier), rx handler already removed.
 */
void sroce_dev_netdev_gone(struct sroce_dev *sdev)
{
	ASSERT_RTNL();
	switch (sdev->state) {
	case SROCE_DEV_LIVE:
		/*
		 * ib_unregister_device() copes with a device that "rdma link
		 * del" is already removing, where the core's queued variant
		 * would warn.
		 */
		get_device(&sdev->ibdev.dev);
		if (!queue_work(sroce_wq, &sdev->unreg_work))
			put_device(&sdev->ibdev.dev);
		break;
	case SROCE_DEV_NEW:
		/* sroce_newlink() sees this and unregisters. */
		WRITE_ONCE(sdev->state, SROCE_DEV_NETDEV_GONE);
		break;
	case SROCE_DEV_NETDEV_GONE:
		break;
	}
}

/*
 * Drop the list's hold on devices whose teardown has finished, or on every
 * device when @all. ib_unregister_device() unregisters a live device and,
 * for one being torn down elsewhere, returns only after that is done.
 */
static void sroce_reap_devices(bool all)
{
	struct sroce_dev *sdev, *tmp;
	LIST_HEAD(reap);

	mutex_lock(&sroce_dev_list_lock);
	list_for_each_entry_safe(sdev, tmp, &sroce_dev_list, list)
		if (all || sdev->dead)
			list_move_tail(&sdev->list, &reap);
	mutex_unlock(&sroce_dev_list_lock);

	list_for_each_entry_safe(sdev, tmp, &reap, list) {
		list_del_init(&sdev->list);
		ib_unregister_device(&sdev->ibdev);
		put_device(&sdev->ibdev.dev);
	}
}

static const struct ib_device_ops sroce_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = SROCE_UVERBS_ABI_VERSION,
	/* Our driver id is meaningless to rdma-core: match providers by name. */
	.uverbs_no_driver_id_binding = 1,

	.alloc_hw_port_stats = sroce_alloc_hw_port_stats,
	.alloc_mr = sroce_alloc_mr,
	.alloc_mw = sroce_alloc_mw,
	.alloc_pd = sroce_alloc_pd,
	.alloc_ucontext = sroce_alloc_ucontext,
	.attach_mcast = sroce_attach_mcast,
	.counter_alloc_stats = sroce_counter_alloc_stats,
	.counter_bind_qp = sroce_counter_bind_qp,
	.counter_dealloc = sroce_counter_dealloc,
	.counter_unbind_qp = sroce_counter_unbind_qp,
	.counter_update_stats = sroce_counter_update_stats,
	.add_gid = sroce_add_gid,
	.create_ah = sroce_create_ah,
	.create_cq = sroce_create_cq,
	.create_user_ah = sroce_create_ah,
	.create_qp = sroce_create_qp,
	.create_srq = sroce_create_srq,
	.dealloc_driver = sroce_dealloc_driver,
	.dealloc_mw = sroce_dealloc_mw,
	.dealloc_pd = sroce_dealloc_pd,
	.dealloc_ucontext = sroce_dealloc_ucontext,
	.del_gid = sroce_del_gid,
	.dereg_mr = sroce_dereg_mr,
	.device_group = &sroce_cc_attr_group,
	.fill_res_cq_entry = sroce_fill_res_cq_entry,
	.fill_res_cq_entry_raw = sroce_fill_res_cq_entry_raw,
	.fill_res_mr_entry = sroce_fill_res_mr_entry,
	.fill_res_mr_entry_raw = sroce_fill_res_mr_entry_raw,
	.fill_res_qp_entry = sroce_fill_res_qp_entry,
	.fill_res_qp_entry_raw = sroce_fill_res_qp_entry_raw,
	.destroy_ah = sroce_destroy_ah,
	.destroy_cq = sroce_destroy_cq,
	.destroy_qp = sroce_destroy_qp,
	.destroy_srq = sroce_destroy_srq,
	.detach_mcast = sroce_detach_mcast,
	.disassociate_ucontext = sroce_disassociate_ucontext,
	.get_dev_fw_str = sroce_get_dev_fw_str,
	.get_dma_mr = sroce_get_dma_mr,
	.post_recv = sroce_post_recv,
	.post_send = sroce_post_send,
	.post_srq_recv = sroce_post_srq_recv,
	.get_hw_stats = sroce_get_hw_stats,
	.get_link_layer = sroce_get_link_layer,
	.get_port_immutable = sroce_get_port_immutable,
	.map_mr_sg = sroce_map_mr_sg,
	.mmap = sroce_mmap,
	.mmap_free = sroce_mmap_free,
	.modify_qp = sroce_modify_qp,
	.modify_srq = sroce_modify_srq,
	.poll_cq = sroce_poll_cq,
	.query_device = sroce_query_device,
	.query_pkey = sroce_query_pkey,
	.query_port = sroce_query_port,
	.query_ah = sroce_query_ah,
	.query_qp = sroce_query_qp,
	.query_srq = sroce_query_srq,
	.reg_user_mr = sroce_reg_user_mr,
	.req_notify_cq = sroce_req_notify_cq,
	.resize_cq = sroce_resize_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, sroce_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, sroce_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, sroce_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, sroce_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, sroce_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, sroce_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, sroce_ucontext, ibuctx),
};

static bool sroce_netdev_is_ethernet(struct net_device *ndev)
{
	return ndev->type == ARPHRD_ETHER && !(ndev->flags & IFF_LOOPBACK) &&
	       ndev->addr_len == ETH_ALEN;
}

/**
 * sroce_newlink() - "rdma link add NAME type sroce netdev NDEV".
 * @ibdev_name: requested device name
 * @ndev: netdev to bind; the caller holds a reference for the call
 *
 * Return: 0, or -EINVAL for a netdev that is not Ethernet, -EEXIST when the
 * netdev is already bound to sroce, -EBUSY when another driver owns its
 * receive hook or another RDMA device is bound to it, -ENODEV when the
 * netdev went away during registration, or an error from the rdma core.
 */
static int sroce_newlink(const char *ibdev_name, struct net_device *ndev)
{
	struct ib_device *ibdev, *other;
	struct sroce_dev *sdev;
	bool netdev_gone;
	int err;

	if (!sroce_netdev_is_ethernet(ndev)) {
		pr_info_ratelimited("sroce: %s is not an Ethernet netdev\n",
				    netdev_name(ndev));
		return -EINVAL;
	}

	/*
	 * Another RDMA device on this netdev (rdma_rxe, a RoCE NIC) would
	 * lose its RoCEv2 traffic to our receive hook. RDMA_DRIVER_UNKNOWN
	 * matches a registered device of any driver; our own devices are
	 * refused below, with a clearer error.
	 */
	other = ib_device_get_by_netdev(ndev, RDMA_DRIVER_UNKNOWN);
	if (other && other->ops.dealloc_driver == sroce_dealloc_driver) {
		ib_device_put(other);
		other = NULL;
	}
	if (other) {
		pr_info_ratelimited("sroce: %s already carries RDMA device %s\n",
				    netdev_name(ndev), dev_name(&other->dev));
		ib_device_put(other);
		return -EBUSY;
	}

	sroce_reap_devices(false);

	sdev = ib_alloc_device(sroce_dev, ibdev);
	if (!sdev)
		return -ENOMEM;
	ibdev = &sdev->ibdev;
	/*
	 * From here on every failure goes through ib_dealloc_device(), which
	 * calls sroce_dealloc_driver(); it copes with a half-built device.
	 */
	ib_set_device_ops(ibdev, &sroce_dev_ops);
	ibdev->driver_def = sroce_uapi_defs;
	INIT_LIST_HEAD(&sdev->list);
	INIT_WORK(&sdev->unreg_work, sroce_unreg_work);
	sroce_lo_init(sdev);
	sroce_gid_init(sdev);
	ida_init(&sdev->pd_ida);
	xa_init_flags(&sdev->mr_xa, XA_FLAGS_ALLOC1);
	xa_init_flags(&sdev->ah_xa, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&sdev->qp_xa, XA_FLAGS_ALLOC);
	xa_init_flags(&sdev->counter_sets, XA_FLAGS_ALLOC1);
	sdev->max_qp = clamp_t(u32, max_qp, 2, SROCE_MAX_QP);
	sdev->max_cq = clamp_t(u32, max_cq, 2, SROCE_MAX_CQ);
	sdev->max_mr = clamp_t(u32, max_mr, 1, SROCE_MAX_MR);
	sdev->max_ah = clamp_t(u32, max_ah, 2, SROCE_MAX_AH);
	sdev->max_pd = clamp_t(u32, max_pd, 2, SROCE_MAX_PD);
	sdev->state = SROCE_DEV_NEW;
	sdev->cc_np_enable = true;
	sdev->cc_rp_enable = true;
	sdev->ndev = ndev;
	netdev_hold(ndev, &sdev->ndev_tracker, GFP_KERNEL);

	sdev->counters = alloc_percpu(struct sroce_pcpu_counters);
	if (!sdev->counters) {
		err = -ENOMEM;
		goto err_dealloc;
	}

	strscpy(ibdev->node_desc, SROCE_NODE_DESC, sizeof(ibdev->node_desc));
	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = num_possible_cpus();
	ibdev->local_dma_lkey = 0;
	sroce_mr_init_local_dma(sdev);
	spin_lock_init(&sdev->mw_lock);
	INIT_LIST_HEAD(&sdev->mcast_list);
	spin_lock_init(&sdev->mcast_lock);
	addrconf_addr_eui48((unsigned char *)&ibdev->node_guid,
			    ndev->dev_addr);
	/* Legacy write() commands outside the core's default set. */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ) |
				  BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				  BIT_ULL(IB_USER_VERBS_CMD_POST_RECV);

	err = ib_device_set_netdev(ibdev, ndev, SROCE_PORT);
	if (err)
		goto err_dealloc;

	err = sroce_net_attach(sdev);
	if (err) {
		if (err == -EEXIST)
			pr_info_ratelimited("sroce: %s is already bound to an sroce device\n",
					    netdev_name(ndev));
		else if (err == -EBUSY)
			pr_info_ratelimited("sroce: %s has another receive handler (bridge, bond or macvlan port?)\n",
					    netdev_name(ndev));
		else
			pr_info_ratelimited("sroce: cannot attach to %s: %d\n",
					    netdev_name(ndev), err);
		goto err_dealloc;
	}

	err = ib_register_device(ibdev, ibdev_name, NULL);
	if (err)
		goto err_dealloc;

	/*
	 * From here "rdma link del" may tear the device down at any time;
	 * the list's reference keeps the memory until the list drops it.
	 */
	get_device(&ibdev->dev);
	mutex_lock(&sroce_dev_list_lock);
	list_add_tail(&sdev->list, &sroce_dev_list);
	mutex_unlock(&sroce_dev_list_lock);

	rtnl_lock();
	netdev_gone = sdev->state == SROCE_DEV_NETDEV_GONE;
	if (!netdev_gone) {
		WRITE_ONCE(sdev->state, SROCE_DEV_LIVE);
		sroce_port_sync_rtnl(sdev);
	}
	rtnl_unlock();

	if (netdev_gone) {
		ib_unregister_device(ibdev);
		return -ENODEV;
	}
	return 0;

err_dealloc:
	ib_dealloc_device(ibdev);
	return err;
}

static struct rdma_link_ops sroce_link_ops = {
	.type = "sroce",
	.newlink = sroce_newlink,
};

static int __init sroce_init(void)
{
	int err;

	sroce_wq = alloc_workqueue("sroce", WQ_UNBOUND, 0);
	if (!sroce_wq)
		return -ENOMEM;
	/*
	 * Per-CPU: continued sending stays on the CPU that started it, so
	 * its packets share one receive backlog and stay in order.
	 */
	sroce_data_wq = alloc_workqueue("sroce_data", WQ_HIGHPRI, 0);
	if (!sroce_data_wq) {
		err = -ENOMEM;
		goto err_wq;
	}
	/* Kernel consumers' loopback sending, off their CPUs (kverbs.c). */
	sroce_kernel_wq = alloc_workqueue("sroce_kernel",
					  WQ_HIGHPRI | WQ_UNBOUND, 0);
	if (!sroce_kernel_wq) {
		err = -ENOMEM;
		goto err_data_wq;
	}
	sroce_poll_wq = alloc_workqueue("sroce_poll", WQ_CPU_INTENSIVE, 0);
	if (!sroce_poll_wq) {
		err = -ENOMEM;
		goto err_kernel_wq;
	}
	sroce_sq_poll_init();
	sroce_icrc_init();
	err = sroce_net_init();
	if (err)
		goto err_icrc;
	rdma_link_register(&sroce_link_ops);
	return 0;

err_icrc:
	sroce_icrc_exit();
	destroy_workqueue(sroce_poll_wq);
err_kernel_wq:
	destroy_workqueue(sroce_kernel_wq);
err_data_wq:
	destroy_workqueue(sroce_data_wq);
err_wq:
	destroy_workqueue(sroce_wq);
	return err;
}

static void __exit sroce_exit(void)
{
	/* Waits for in-flight "rdma link add" calls; no new ones start. */
	rdma_link_unregister(&sroce_link_ops);
	sroce_reap_devices(true);
	/* No device has our rx_handler now, so no new unregister work. */
	sroce_net_exit();
	/* Packets of destroyed QPs may still name our skb destructor. */
	sroce_tx_credit_wait_all();
	sroce_icrc_exit();
	destroy_workqueue(sroce_poll_wq);
	destroy_workqueue(sroce_kernel_wq);
	destroy_workqueue(sroce_data_wq);
	destroy_workqueue(sroce_wq);
}

module_init(sroce_init);
module_exit(sroce_exit);

MODULE_AUTHOR("The sroce developers");
MODULE_DESCRIPTION("Software RoCEv2 RDMA device");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_ALIAS_RDMA_LINK("sroce");
