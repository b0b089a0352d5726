// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce: a software RoCEv2 RDMA device.
 *
 * Module life cycle, the device life cycle (rdma link add/del, netdev
 * removal, module unload) and the ib_device_ops table.
 *
 * Who tears a device down:
 *  - "rdma link del" and module unload call ib_unregister_device();
 *  - NETDEV_UNREGISTER queues ib_unregister_device_queued() because the
 *    notifier runs under RTNL and unregistration may need it;
 *  - in every case the core then calls sroce_dealloc_driver(), the one
 *    place that releases what sroce_newlink() acquired.
 */
#include <linux/if_arp.h>
#include <linux/module.h>
#include <net/addrconf.h>
#include <rdma/rdma_netlink.h>

#include "sroce.h"

/* Every device of this module; ib_unregister_driver() cannot be used
 * because out-of-tree drivers share RDMA_DRIVER_UNKNOWN.
 */
static LIST_HEAD(sroce_dev_list);
static DEFINE_MUTEX(sroce_dev_list_lock);

static void sroce_dealloc_driver(struct ib_device *ibdev)
{
	struct sroce_dev *sdev = to_sdev(ibdev);

	sroce_net_detach(sdev);

	mutex_lock(&sroce_dev_list_lock);
	list_del_init(&sdev->list);
	mutex_unlock(&sroce_dev_list_lock);

	ida_destroy(&sdev->pd_ida);
	/* The core destroyed every user object before calling us. */
	WARN_ON(!xa_empty(&sdev->mr_xa));
	xa_destroy(&sdev->mr_xa);
	free_percpu(sdev->counters);
	sdev->counters = NULL;
	netdev_put(sdev->ndev, &sdev->ndev_tracker);
	sdev->ndev = NULL;
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
		ib_unregister_device_queued(&sdev->ibdev);
		break;
	case SROCE_DEV_NEW:
		/* sroce_newlink() sees this and unregisters. */
		sdev->state = SROCE_DEV_NETDEV_GONE;
		break;
	case SROCE_DEV_NETDEV_GONE:
		break;
	}
}

static const struct ib_device_ops sroce_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = SROCE_UVERBS_ABI_VERSION,
	/* Our driver id is meaningless to rdma-core: match providers by name. */
	.uverbs_no_driver_id_binding = 1,

	.alloc_hw_port_stats = sroce_alloc_hw_port_stats,
	.alloc_pd = sroce_alloc_pd,
	.alloc_ucontext = sroce_alloc_ucontext,
	.dealloc_driver = sroce_dealloc_driver,
	.dealloc_pd = sroce_dealloc_pd,
	.dealloc_ucontext = sroce_dealloc_ucontext,
	.dereg_mr = sroce_dereg_mr,
	.disassociate_ucontext = sroce_disassociate_ucontext,
	.get_dev_fw_str = sroce_get_dev_fw_str,
	.get_hw_stats = sroce_get_hw_stats,
	.get_link_layer = sroce_get_link_layer,
	.get_port_immutable = sroce_get_port_immutable,
	.query_device = sroce_query_device,
	.query_pkey = sroce_query_pkey,
	.query_port = sroce_query_port,
	.reg_user_mr = sroce_reg_user_mr,

	INIT_RDMA_OBJ_SIZE(ib_pd, sroce_pd, ibpd),
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
 * receive hook, or an error from the rdma core.
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

	sdev = ib_alloc_device(sroce_dev, ibdev);
	if (!sdev)
		return -ENOMEM;
	ibdev = &sdev->ibdev;
	/*
	 * From here on every failure goes through ib_dealloc_device(), which
	 * calls sroce_dealloc_driver(); it copes with a half-built device.
	 */
	ib_set_device_ops(ibdev, &sroce_dev_ops);
	INIT_LIST_HEAD(&sdev->list);
	ida_init(&sdev->pd_ida);
	xa_init_flags(&sdev->mr_xa, XA_FLAGS_ALLOC1);
	sdev->state = SROCE_DEV_NEW;
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
	addrconf_addr_eui48((unsigned char *)&ibdev->node_guid,
			    ndev->dev_addr);

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
		goto err_dealloc;
	}

	mutex_lock(&sroce_dev_list_lock);
	list_add_tail(&sdev->list, &sroce_dev_list);
	mutex_unlock(&sroce_dev_list_lock);

	/*
	 * Once registered, "rdma link del" may free the device at any time;
	 * pin the memory until we are done looking at it.
	 */
	get_device(&ibdev->dev);
	err = ib_register_device(ibdev, ibdev_name, NULL);
	if (err) {
		put_device(&ibdev->dev);
		goto err_dealloc;
	}

	rtnl_lock();
	netdev_gone = sdev->state == SROCE_DEV_NETDEV_GONE;
	if (!netdev_gone)
		sdev->state = SROCE_DEV_LIVE;
	rtnl_unlock();

	if (netdev_gone) {
		ib_unregister_device(ibdev);
		err = -ENODEV;
	}
	put_device(&ibdev->dev);
	return err;

err_dealloc:
	ib_dealloc_device(ibdev);
	return err;
}

static struct rdma_link_ops sroce_link_ops = {
	.type = "sroce",
	.newlink = sroce_newlink,
};

/* Unregister every device; each leaves the list in sroce_dealloc_driver(). */
static void sroce_unregister_all(void)
{
	struct sroce_dev *sdev;

	mutex_lock(&sroce_dev_list_lock);
	while ((sdev = list_first_entry_or_null(&sroce_dev_list,
						struct sroce_dev, list))) {
		get_device(&sdev->ibdev.dev);
		mutex_unlock(&sroce_dev_list_lock);

		/* Also waits for a queued unregistration of this device. */
		ib_unregister_device(&sdev->ibdev);

		mutex_lock(&sroce_dev_list_lock);
		/* Impossible by the state rules; never loop forever. */
		if (WARN_ON(!list_empty(&sdev->list)))
			list_del_init(&sdev->list);
		mutex_unlock(&sroce_dev_list_lock);
		put_device(&sdev->ibdev.dev);
		mutex_lock(&sroce_dev_list_lock);
	}
	mutex_unlock(&sroce_dev_list_lock);
}

static int __init sroce_init(void)
{
	int err;

	err = sroce_net_init();
	if (err)
		return err;
	rdma_link_register(&sroce_link_ops);
	return 0;
}

static void __exit sroce_exit(void)
{
	/* Waits for in-flight "rdma link add" calls; no new ones start. */
	rdma_link_unregister(&sroce_link_ops);
	sroce_unregister_all();
	sroce_net_exit();
}

module_init(sroce_init);
module_exit(sroce_exit);

MODULE_AUTHOR("The sroce developers");
MODULE_DESCRIPTION("Software RoCEv2 RDMA device");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_ALIAS_RDMA_LINK("sroce");
