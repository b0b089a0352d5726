// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Address handles for UD and GSI queue pairs. A UD send WQE names its AH
 * by number, from user space as from the kernel, and the requester looks
 * the number up when it builds the packet. The addressing lives in a
 * struct sroce_av of its own, freed after an RCU grace period: the core
 * frees the ib_ah right after destroy_ah, which may run in atomic context
 * and so cannot wait for a sender that still holds the address.
 */
#include <rdma/ib_cache.h>

#include "sroce.h"

static struct sroce_ah *to_sah(struct ib_ah *ibah)
{
	return container_of(ibah, struct sroce_ah, ibah);
}

u32 sroce_ah_num(struct ib_ah *ibah)
{
	return to_sah(ibah)->ah_num;
}

/**
 * sroce_av_lookup_rcu() - the address behind an AH number.
 * @sdev: the device
 * @ah_num: number from a send WQE
 * @pd: the sending QP's PD, which the AH must belong to
 *
 * Context: RCU read side; the address stays valid until the caller leaves.
 * Return: the address, or NULL for an unknown number or another PD's AH.
 */
const struct sroce_av *sroce_av_lookup_rcu(struct sroce_dev *sdev,
					   u32 ah_num, struct ib_pd *pd)
{
	const struct sroce_av *av = xa_load(&sdev->ah_xa, ah_num);

	return av && av->pd == pd ? av : NULL;
}

static int sroce_create_ah_common(struct ib_ah *ibah,
				  struct rdma_ah_init_attr *init)
{
	struct sroce_dev *sdev = to_sdev(ibah->device);
	struct rdma_ah_attr *attr = init->ah_attr;
	bool sleep = init->flags & RDMA_CREATE_AH_SLEEPABLE;
	gfp_t gfp = sleep ? GFP_KERNEL : GFP_ATOMIC;
	struct sroce_ah *ah = to_sah(ibah);
	struct sroce_av *av;
	unsigned long flags;
	int err;

	if (attr->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(attr) & IB_AH_GRH) ||
	    !rdma_ah_read_grh(attr)->sgid_attr)
		return -EINVAL;
	if (!sroce_budget_take(&sdev->num_ah, sdev->max_ah, ah->user))
		return -ENOMEM;
	av = kzalloc(sizeof(*av), gfp);
	if (!av) {
		err = -ENOMEM;
		goto err_count;
	}
	av->pd = ibah->pd;
	err = sroce_path_from_ah(sdev, attr, &av->path);
	if (err)
		goto err_free;

	/* May run with interrupts off: the table's lock is IRQ-safe. */
	xa_lock_irqsave(&sdev->ah_xa, flags);
	err = __xa_alloc_cyclic(&sdev->ah_xa, &ah->ah_num, av,
				XA_LIMIT(1, SROCE_MAX_AH), &sdev->ah_next, gfp);
	xa_unlock_irqrestore(&sdev->ah_xa, flags);
	if (err < 0)
		goto err_free;
	ah->av = av;
	return 0;

err_free:
	kfree(av);
err_count:
	sroce_budget_put(&sdev->num_ah, ah->user);
	return err == -EBUSY ? -ENOMEM : err;
}

int sroce_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		    struct ib_udata *udata)
{
	struct sroce_create_ah_resp resp = {};
	int err;

	if (udata && (!sroce_udata_input_ok(udata) ||
		      udata->outlen < sizeof(resp)))
		return -EINVAL;
	to_sah(ibah)->user = udata;
	err = sroce_create_ah_common(ibah, init);
	if (err || !udata)
		return err;
	resp.ah_num = to_sah(ibah)->ah_num;
	err = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (err)
		sroce_destroy_ah(ibah, 0);
	return err;
}

int sroce_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct sroce_dev *sdev = to_sdev(ibah->device);
	struct sroce_ah *ah = to_sah(ibah);
	unsigned long irqflags;

	xa_lock_irqsave(&sdev->ah_xa, irqflags);
	__xa_erase(&sdev->ah_xa, ah->ah_num);
	xa_unlock_irqrestore(&sdev->ah_xa, irqflags);
	kfree_rcu(ah->av, rcu);
	sroce_budget_put(&sdev->num_ah, ah->user);
	return 0;
}

int sroce_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	const struct sroce_path *p = &to_sah(ibah)->av->path;
	union ib_gid dgid;

	memset(attr, 0, sizeof(*attr));
	attr->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(attr, SROCE_PORT);
	memcpy(&dgid, &p->daddr, sizeof(dgid));
	rdma_ah_set_grh(attr, &dgid, p->flow_label, p->sgid_index, p->ttl,
			p->tos);
	memcpy(attr->roce.dmac, p->dmac, ETH_ALEN);
	return 0;
}
