// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The device's own RoCEv2 addresses, as the receive hook needs them.
 *
 * Every packet on the bound netdev is classified by its destination
 * address. The core's GID table answers that only with a scan of all
 * SROCE_GID_TABLE_LEN slots under the table's lock, and a reference taken
 * and dropped on the entry. Instead the core tells us each GID it adds or
 * deletes (the add_gid and del_gid operations), and we keep the RoCEv2
 * ones of the bound netdev in a small array that readers walk under RCU
 * alone. Writers replace the array whole.
 */
#include <rdma/ib_cache.h>

#include "sroce.h"

/**
 * struct sroce_gid_set - the RoCEv2 addresses packets may be sent to
 * @rcu: frees a replaced set after its readers
 * @n: entries in @gid
 * @gid: the addresses, with their GID table index to delete them by
 */
struct sroce_gid_set {
	struct rcu_head rcu;
	unsigned int n;
	struct {
		struct in6_addr addr;
		unsigned int index;
	} gid[];
};

/* Only GIDs of the receive hook's netdev: upper devices see their own. */
static bool sroce_gid_wanted(struct sroce_dev *sdev,
			     const struct ib_gid_attr *attr)
{
	return attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP &&
	       rcu_access_pointer(attr->ndev) == sdev->ndev;
}

/*
 * Publish a copy of the current set with @attr added, or without @index.
 * Context: process; sdev->gid_lock held.
 */
static int sroce_gid_replace(struct sroce_dev *sdev,
			     const struct ib_gid_attr *attr, int index)
{
	struct sroce_gid_set *old, *set;
	unsigned int i, n = 0;

	lockdep_assert_held(&sdev->gid_lock);
	old = rcu_dereference_protected(sdev->gids,
					lockdep_is_held(&sdev->gid_lock));
	if (!attr) {
		for (i = 0; old && i < old->n; i++)
			if (old->gid[i].index == index)
				break;
		if (!old || i == old->n)
			return 0;	/* not one we kept */
	}
	/*
	 * The core ignores a failed deletion, which would leave us taking
	 * packets for an address that is gone: deleting must not fail.
	 */
	set = kmalloc(struct_size(set, gid, (old ? old->n : 0) + !!attr),
		      attr ? GFP_KERNEL : GFP_KERNEL | __GFP_NOFAIL);
	if (!set)
		return -ENOMEM;
	for (i = 0; old && i < old->n; i++)
		if (old->gid[i].index != index)
			set->gid[n++] = old->gid[i];
	if (attr) {
		memcpy(&set->gid[n].addr, attr->gid.raw,
		       sizeof(set->gid[n].addr));
		set->gid[n++].index = attr->index;
	}
	set->n = n;
	rcu_assign_pointer(sdev->gids, set);
	if (old)
		kfree_rcu(old, rcu);
	return 0;
}

/* ib_device_ops.add_gid: the core added @attr to the port's table. */
int sroce_add_gid(const struct ib_gid_attr *attr, void **context)
{
	struct sroce_dev *sdev = to_sdev(attr->device);
	int err;

	if (!sroce_gid_wanted(sdev, attr))
		return 0;
	mutex_lock(&sdev->gid_lock);
	err = sroce_gid_replace(sdev, attr, -1);
	mutex_unlock(&sdev->gid_lock);
	return err;
}

/*
 * ib_device_ops.del_gid: the core removes @attr from the port's table.
 * Some kernels (6.1) clear attr->ndev first, so the index alone says
 * whether we kept it; the core reuses no index before deleting it.
 */
int sroce_del_gid(const struct ib_gid_attr *attr, void **context)
{
	struct sroce_dev *sdev = to_sdev(attr->device);
	int err;

	if (attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return 0;
	mutex_lock(&sdev->gid_lock);
	err = sroce_gid_replace(sdev, NULL, attr->index);
	mutex_unlock(&sdev->gid_lock);
	return err;
}

/**
 * sroce_gid_is_local() - is @addr a RoCEv2 GID of the device?
 * @sdev: the device
 * @addr: a unicast destination address (IPv4 in its mapped form)
 *
 * Context: RCU read side (the receive hook).
 * Return: true when it is.
 */
bool sroce_gid_is_local(struct sroce_dev *sdev, const struct in6_addr *addr)
{
	const struct sroce_gid_set *set = rcu_dereference(sdev->gids);
	unsigned int i;

	for (i = 0; set && i < set->n; i++)
		if (ipv6_addr_equal(&set->gid[i].addr, addr))
			return true;
	return false;
}

void sroce_gid_init(struct sroce_dev *sdev)
{
	mutex_init(&sdev->gid_lock);
	RCU_INIT_POINTER(sdev->gids, NULL);
}

/* Context: the receive hook is gone, so no reader is left. */
void sroce_gid_exit(struct sroce_dev *sdev)
{
	kfree(rcu_dereference_protected(sdev->gids, true));
	RCU_INIT_POINTER(sdev->gids, NULL);
	mutex_destroy(&sdev->gid_lock);
}
