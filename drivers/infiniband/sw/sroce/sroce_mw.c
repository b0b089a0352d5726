// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory windows (IBA 10.6.7), types 1 and 2B. A window is a record in the
 * MR table with an rkey of its own; a bind WQE, executed in send-queue
 * order like a fast registration, opens it onto a range of a registered
 * region with remote rights of its own. Remote access through its rkey is
 * checked against the window and then served by the region. Type 2
 * windows serve only the QP they were bound through and are invalidated
 * with LOCAL_INV or SEND_WITH_INV; type 1 windows are rebound instead. A
 * region with windows bound to it cannot be deregistered.
 */
#include "sroce.h"

static struct sroce_mw *to_smw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct sroce_mw, ibmw);
}

int sroce_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibmw->device);
	struct sroce_mr *win;
	int err;

	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;
	if (!sroce_udata_input_ok(udata))
		return -EINVAL;
	win = kzalloc(sizeof(*win), GFP_KERNEL_ACCOUNT);
	if (!win)
		return -ENOMEM;
	win->mw = true;
	win->mw_type = ibmw->type;
	INIT_LIST_HEAD(&win->mw_qp_entry);
	win->ibmr.pd = ibmw->pd;
	err = sroce_mr_insert(sdev, win, true);
	if (err) {
		kfree(win);
		return err;
	}
	ibmw->rkey = win->key;
	to_smw(ibmw)->win = win;
	return 0;
}

/* Drop a window's binding. Context: mw_lock held. */
static void sroce_mw_unbind_locked(struct sroce_mr *win)
{
	if (!win->valid)
		return;
	list_del_init(&win->mw_qp_entry);
	WRITE_ONCE(win->valid, false);
	atomic_dec(&win->mw_mr->mw_binds);
	win->mw_mr = NULL;
}

int sroce_dealloc_mw(struct ib_mw *ibmw)
{
	struct sroce_dev *sdev = to_sdev(ibmw->device);
	struct sroce_mr *win = to_smw(ibmw)->win;

	spin_lock_bh(&sdev->mw_lock);
	win->dying = true;	/* binds refuse it from now on */
	sroce_mw_unbind_locked(win);
	spin_unlock_bh(&sdev->mw_lock);
	/*
	 * Not under mw_lock: binds take that in softirq context, and the
	 * table's lock is also taken with softirqs enabled (lockdep).
	 */
	sroce_mr_remove(sdev, win);
	/* Responders found the window under RCU. */
	synchronize_rcu_expedited();
	kfree(win);
	return 0;
}

/**
 * sroce_mr_unbindable() - mark a region for deregistration, unless a
 *	memory window is bound to it.
 * @sdev: the device
 * @mr: the region
 *
 * Return: true when it may go: no window is bound, and none can be now.
 */
bool sroce_mr_unbindable(struct sroce_dev *sdev, struct sroce_mr *mr)
{
	bool ok;

	spin_lock_bh(&sdev->mw_lock);
	ok = !atomic_read(&mr->mw_binds);
	if (ok)
		mr->dying = true;
	spin_unlock_bh(&sdev->mw_lock);
	return ok;
}

#define SROCE_MW_ACCESS	(IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_ATOMIC)

/**
 * sroce_mw_bind() - execute a bind WQE.
 * @qp: the QP it was posted to
 * @w: the WQE (the kernel's copy)
 *
 * Context: req_lock held, BH disabled (an RCU read side).
 * Return: a completion status; IB_WC_MW_BIND_ERR for a bind IBA forbids.
 */
int sroce_mw_bind(struct sroce_qp *qp, const struct sroce_send_wqe *w)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	u32 mw_rkey = w->wr.bind.mw_rkey, new_rkey = w->wr.bind.new_rkey;
	u64 addr = w->wr.bind.addr, len = w->wr.bind.length, end;
	int access = w->wr.bind.access;
	struct sroce_mr *win, *mr;
	int status = IB_WC_MW_BIND_ERR;

	lockdep_assert_held(&qp->req_lock);
	if (qp->ibqp.qp_type != IB_QPT_RC && qp->ibqp.qp_type != IB_QPT_UC)
		return IB_WC_LOC_QP_OP_ERR;
	/*
	 * Applications (pyverbs' tests among them) pass the access set they
	 * gave the region, LOCAL_WRITE included, and rxe accepts it; a window
	 * only grants remote rights, so local ones are accepted and dropped.
	 */
	if (access & ~(SROCE_MW_ACCESS | IB_ACCESS_LOCAL_WRITE))
		return IB_WC_MW_BIND_ERR;
	access &= SROCE_MW_ACCESS;
	if (new_rkey >> 8 != mw_rkey >> 8 ||
	    check_add_overflow(addr, len, &end))
		return IB_WC_MW_BIND_ERR;

	spin_lock(&sdev->mw_lock);
	/*
	 * The window by its index: a type 2 window's owner tracks its rkey
	 * itself, and the PD check is what authorises the bind.
	 */
	win = xa_load(&sdev->mr_xa, mw_rkey >> 8);
	if (!win || !win->mw || win->dying || win->ibmr.pd != qp->ibqp.pd)
		goto out;
	/* A type 2 window is invalidated before it is bound again. */
	if (win->mw_type == IB_MW_TYPE_2 && win->valid)
		goto out;
	if (win->mw_type == IB_MW_TYPE_1 && !len) {
		sroce_mw_unbind_locked(win);
		WRITE_ONCE(win->key, new_rkey);
		status = IB_WC_SUCCESS;
		goto out;
	}
	mr = xa_load(&sdev->mr_xa, w->wr.bind.mr_lkey >> 8);
	if (!mr || mr->mw || mr->frmr || mr->dma || mr->dying ||
	    mr->key != w->wr.bind.mr_lkey || mr->ibmr.pd != qp->ibqp.pd ||
	    !(mr->access & IB_ACCESS_MW_BIND))
		goto out;
	if (addr < mr->iova || end - mr->iova > mr->length)
		goto out;
	/* Writers through the window need a region writable locally. */
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & IB_ACCESS_LOCAL_WRITE))
		goto out;
	sroce_mw_unbind_locked(win);
	atomic_inc(&mr->mw_binds);
	win->mw_mr = mr;
	win->iova = addr;
	win->length = len;
	win->access = access;
	win->mw_qpn = qp->ibqp.qp_num;
	if (win->mw_type == IB_MW_TYPE_2)
		list_add(&win->mw_qp_entry, &qp->mw_bound);
	WRITE_ONCE(win->key, new_rkey);
	/* Release: the binding is complete before the window is valid. */
	smp_store_release(&win->valid, true);
	status = IB_WC_SUCCESS;
out:
	spin_unlock(&sdev->mw_lock);
	return status;
}

/**
 * sroce_mw_invalidate() - invalidate a type 2 window (LOCAL_INV or
 *	SEND_WITH_INV).
 * @qp: the QP asking; it must be the one the window was bound through
 * @win: the window, its key and PD already matched
 *
 * Context: RCU read side, BH disabled or softirq.
 * Return: 0, or -EINVAL for a type 1 window or another QP's.
 */
int sroce_mw_invalidate(struct sroce_qp *qp, struct sroce_mr *win)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	int err = 0;

	spin_lock(&sdev->mw_lock);
	if (win->mw_type != IB_MW_TYPE_2 ||
	    (win->valid && win->mw_qpn != qp->ibqp.qp_num))
		err = -EINVAL;
	else
		sroce_mw_unbind_locked(win);
	spin_unlock(&sdev->mw_lock);
	return err;
}

/**
 * sroce_mw_unbind_qp() - invalidate the type 2 windows bound through a QP.
 * @qp: the QP, being destroyed
 *
 * They serve only that QP, and a later QP with its number must not
 * inherit them; their regions become free to deregister.
 */
void sroce_mw_unbind_qp(struct sroce_qp *qp)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	struct sroce_mr *win, *next;

	spin_lock_bh(&sdev->mw_lock);
	list_for_each_entry_safe(win, next, &qp->mw_bound, mw_qp_entry)
		sroce_mw_unbind_locked(win);
	spin_unlock_bh(&sdev->mw_lock);
}

/**
 * sroce_mw_resolve() - check a remote access through a window.
 * @win: the window the rkey named
 * @qp: the QP the access came through
 * @va: first byte
 * @end: one past the last byte (no overflow)
 * @access: the rights the access needs
 *
 * Context: RCU read side.
 * Return: the region to serve the access from, or NULL.
 */
struct sroce_mr *sroce_mw_resolve(struct sroce_mr *win, struct sroce_qp *qp,
				  u64 va, u64 end, int access)
{
	/* Acquire: pairs with the bind's release of valid. */
	if (!smp_load_acquire(&win->valid) || !(access & SROCE_MW_ACCESS) ||
	    (win->access & access) != access)
		return NULL;
	if (win->mw_type == IB_MW_TYPE_2 && win->mw_qpn != qp->ibqp.qp_num)
		return NULL;
	if (va < win->iova || end - win->iova > win->length)
		return NULL;
	return READ_ONCE(win->mw_mr);
}
