// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Queue pairs: creation with send and receive rings shared with user space,
 * the IBA state machine (IBA 10.3, table 91, checked by the core's
 * ib_modify_qp_is_ok()), attribute validation, query, destroy, the
 * doorbells and the move to the error state with its flush.
 *
 * The provider posts work requests by writing the rings, so for user QPs
 * post_send and post_recv are only doorbells (no work requests). Kernel
 * QPs get the same rings in kernel memory, filled by sroce_kverbs.c.
 */
#include <rdma/ib_cache.h>

#include "sroce_sq.h"
#include "sroce_trace.h"

static u32 sroce_wqe_size(u32 hdr, u32 max_sge, u32 max_inline)
{
	u32 body = max_t(u32, max_sge * sizeof(struct sroce_sge), max_inline);

	return roundup_pow_of_two(hdr + body);
}

static int sroce_qp_check_init_attr(struct ib_qp_init_attr *init,
				    struct ib_udata *udata)
{
	struct ib_qp_cap *cap = &init->cap;

	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
		break;
	case IB_QPT_GSI:
		/* QP1 belongs to the kernel's MAD layer. */
		if (udata)
			return -EINVAL;
		if (init->port_num != SROCE_PORT)
			return -EINVAL;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (init->create_flags || init->rwq_ind_tbl)
		return -EOPNOTSUPP;
	if (init->srq && init->qp_type == IB_QPT_GSI)
		return -EINVAL;
	if (!init->send_cq || !init->recv_cq)
		return -EINVAL;
	/*
	 * No send WRs (a receive-only QP, as qperf's server makes) still
	 * gets a one-entry ring: rxe accepts it too.
	 */
	if (cap->max_send_wr > SROCE_MAX_QP_WR ||
	    cap->max_recv_wr > SROCE_MAX_QP_WR ||
	    cap->max_send_sge > SROCE_MAX_SGE ||
	    cap->max_recv_sge > SROCE_MAX_SGE ||
	    cap->max_inline_data > SROCE_MAX_INLINE)
		return -EINVAL;
	return 0;
}

/* Complete everything outstanding of a QP in the error state. */
static void sroce_qp_flush(struct sroce_qp *qp)
{
	enum ib_qp_state state;

	spin_lock_bh(&qp->req_lock);
	state = sroce_qp_state(qp);
	if (state == IB_QPS_ERR || state == IB_QPS_SQE)
		sroce_sq_flush(qp);
	spin_unlock_bh(&qp->req_lock);
	spin_lock_bh(&qp->resp_lock);
	if (sroce_qp_state(qp) == IB_QPS_ERR)
		sroce_resp_flush(qp);
	spin_unlock_bh(&qp->resp_lock);
}

static void sroce_qp_err_work(struct work_struct *work)
{
	sroce_qp_flush(container_of(work, struct sroce_qp, err_work));
}

/**
 * sroce_qp_set_error() - move a QP to the error state from the data path.
 * @qp: the queue pair
 *
 * The flush runs from a work item, outside the caller's lock.
 * Context: req_lock or resp_lock held.
 */
void sroce_qp_set_error(struct sroce_qp *qp)
{
	enum ib_qp_state old;

	lockdep_assert(lockdep_is_held(&qp->req_lock) ||
		       lockdep_is_held(&qp->resp_lock));
	/* Atomic: the requester and the responder may race here. */
	old = xchg(&qp->state, IB_QPS_ERR);
	if (old == IB_QPS_ERR)
		return;
	trace_sroce_qp_state(&qp->ibqp, old, IB_QPS_ERR);
	if (!qp->dead)
		queue_work(sroce_data_wq, &qp->err_work);
}

/**
 * sroce_qp_set_sq_error() - a datagram QP's send failed locally.
 * @qp: a UD or GSI queue pair
 *
 * IBA 10.3.1: the send queue stops (SQE) and what is posted to it is
 * flushed, while receives go on; the consumer moves it back to RTS (the
 * MAD layer does so for QP1).
 * Context: req_lock held.
 */
void sroce_qp_set_sq_error(struct sroce_qp *qp)
{
	lockdep_assert_held(&qp->req_lock);
	/* Only from RTS: the responder may fail the QP (ERR) meanwhile. */
	if (cmpxchg(&qp->state, IB_QPS_RTS, IB_QPS_SQE) != IB_QPS_RTS)
		return;
	trace_sroce_qp_state(&qp->ibqp, IB_QPS_RTS, IB_QPS_SQE);
	if (!qp->dead)
		queue_work(sroce_data_wq, &qp->err_work);
}

static void sroce_qp_deliver(struct sroce_qp *qp, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = type,
	};

	qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

static void sroce_qp_event_work(struct work_struct *work)
{
	struct sroce_qp *qp = container_of(work, struct sroce_qp, event_work);
	unsigned long bit;

	for_each_set_bit(bit, &qp->events_pending, BITS_PER_LONG)
		if (test_and_clear_bit(bit, &qp->events_pending))
			sroce_qp_deliver(qp, bit);
}

/**
 * sroce_qp_event() - raise an affiliated async event on a QP.
 * @qp: the queue pair
 * @type: the event
 *
 * The data path raises events with QP locks held. A kernel consumer's
 * handler may post to the QP (or, as with hardware, expect no driver lock
 * held), so its events go through a work item; uverbs's handler only
 * queues the event, and gets it at once.
 * Context: any.
 */
void sroce_qp_event(struct sroce_qp *qp, enum ib_event_type type)
{
	if (!qp->ibqp.event_handler)
		return;
	if (!qp->kernel) {
		sroce_qp_deliver(qp, type);
		return;
	}
	set_bit(type, &qp->events_pending);
	queue_work(sroce_data_wq, &qp->event_work);
}

/**
 * sroce_qp_bad_ring() - the user's ring indices make no sense.
 * @qp: the queue pair whose send or receive ring they are in
 *
 * The kernel stops trusting the QP: it moves to the error state and its
 * owner gets IB_EVENT_QP_FATAL.
 * Context: req_lock or resp_lock held.
 */
void sroce_qp_bad_ring(struct sroce_qp *qp)
{
	lockdep_assert(lockdep_is_held(&qp->req_lock) ||
		       lockdep_is_held(&qp->resp_lock));
	sroce_qp_count(qp, SROCE_CNT_BAD_WQE);
	sroce_qp_set_error(qp);
	sroce_qp_event(qp, IB_EVENT_QP_FATAL);
}

/* Context: RCU read side; the QP stays valid until the caller leaves it. */
struct sroce_qp *sroce_qp_lookup_rcu(struct sroce_dev *sdev, u32 qpn)
{
	return xa_load(&sdev->qp_xa, qpn);
}

/* Stop the timer and the work items; the QP must be dead or in RESET. */
static void sroce_qp_quiesce(struct sroce_qp *qp)
{
	hrtimer_cancel(&qp->timer);
	hrtimer_cancel(&qp->rp.pace_timer);
	sroce_sq_poll_cancel(qp);
	/* It may queue req_work. */
	hrtimer_cancel(&qp->handoff_watchdog);
	cancel_work_sync(&qp->req_work);
	cancel_work_sync(&qp->resp_work);
	cancel_work_sync(&qp->err_work);
	hrtimer_cancel(&qp->timer);
	hrtimer_cancel(&qp->rp.pace_timer);
}

int sroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibqp->device);
	struct sroce_qp *qp = to_sqp(ibqp);
	struct ib_qp_cap *cap = &init->cap;
	struct sroce_create_qp_resp resp = {};
	u32 qpn, sq_wqe_size, rq_wqe_size;
	struct ib_ucontext *uctx;
	int err;

	err = sroce_qp_check_init_attr(init, udata);
	if (err)
		return err;
	if (udata &&
	    (!sroce_udata_input_ok(udata) || udata->outlen < sizeof(resp)))
		return -EINVAL;

	mutex_init(&qp->lock);
	qp->kernel = !udata;
	INIT_LIST_HEAD(&qp->mw_bound);
	spin_lock_init(&qp->sq_post_lock);
	spin_lock_init(&qp->rq_post_lock);
	qp->state = IB_QPS_RESET;
	/* The receive path may find the QP as soon as it has a number. */
	spin_lock_init(&qp->req_lock);
	spin_lock_init(&qp->resp_lock);
	hrtimer_init(&qp->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	qp->timer.function = sroce_comp_timer;
	sroce_cc_rp_init(qp);
	INIT_WORK(&qp->req_work, sroce_sq_work);
	INIT_LIST_HEAD(&qp->req.poll_node);
	hrtimer_init(&qp->poll_watchdog, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	qp->poll_watchdog.function = sroce_sq_poll_watchdog;
	hrtimer_init(&qp->handoff_watchdog, CLOCK_MONOTONIC,
		     HRTIMER_MODE_REL_SOFT);
	qp->handoff_watchdog.function = sroce_sq_handoff_watchdog;
	INIT_WORK(&qp->resp_work, sroce_resp_work);
	INIT_WORK(&qp->err_work, sroce_qp_err_work);
	INIT_WORK(&qp->event_work, sroce_qp_event_work);
	sq_wqe_size = sroce_wqe_size(sizeof(struct sroce_send_wqe),
				     max_t(u32, cap->max_send_sge, 1),
				     cap->max_inline_data);
	rq_wqe_size = sroce_wqe_size(sizeof(struct sroce_recv_wqe),
				     max_t(u32, cap->max_recv_sge, 1), 0);
	qp->counters = sdev->counters;
	err = sroce_tx_credit_init(qp);
	if (err)
		return err;

	if (init->qp_type == IB_QPT_GSI) {
		qpn = 1;
		err = xa_insert(&sdev->qp_xa, qpn, qp, GFP_KERNEL);
	} else {
		err = xa_alloc_cyclic(&sdev->qp_xa, &qpn, qp,
				      XA_LIMIT(SROCE_MIN_QPN, SROCE_MAX_QPN),
				      &sdev->qp_next, GFP_KERNEL);
		if (err == -EBUSY)
			err = -ENOMEM;
	}
	if (err < 0) {
		sroce_tx_credit_put(qp->credit);
		return err;
	}
	if (!sroce_budget_take(&sdev->num_qp, sdev->max_qp, !qp->kernel)) {
		err = -ENOMEM;
		goto err_budget;
	}
	ibqp->qp_num = qpn;

	uctx = udata ? sroce_udata_ucontext(udata) : NULL;
	err = sroce_sq_create(qp, cap->max_send_wr, sq_wqe_size, uctx);
	if (err)
		goto err_count;
	/* The WQE copy must hold the largest WQE: the SRQ's if attached. */
	err = sroce_rq_create(qp, cap->max_recv_wr, rq_wqe_size,
			      init->srq ? max(rq_wqe_size,
					      to_ssrq(init->srq)->ring.entry_size) :
					  rq_wqe_size, uctx);
	if (err)
		goto err_sq;

	/* Report what the rings really hold. */
	cap->max_send_wr = qp->sq.num_entries;
	cap->max_recv_wr = qp->rq.num_entries;
	cap->max_send_sge = (sq_wqe_size - sizeof(struct sroce_send_wqe)) /
			    sizeof(struct sroce_sge);
	cap->max_send_sge = min_t(u32, cap->max_send_sge, SROCE_MAX_SGE);
	cap->max_recv_sge = (rq_wqe_size - sizeof(struct sroce_recv_wqe)) /
			    sizeof(struct sroce_sge);
	cap->max_recv_sge = min_t(u32, cap->max_recv_sge, SROCE_MAX_SGE);
	cap->max_inline_data = min_t(u32, SROCE_MAX_INLINE,
				     sq_wqe_size -
				     sizeof(struct sroce_send_wqe));
	qp->cap = *cap;
	qp->sq_sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	if (!udata)
		return 0;

	resp.sq_mmap_offset = qp->sq.mmap_offset;
	resp.sq_mmap_length = qp->sq.mmap_length;
	resp.sq_num_entries = qp->sq.num_entries;
	resp.sq_wqe_size = sq_wqe_size;
	resp.rq_mmap_offset = qp->rq.mmap_offset;
	resp.rq_mmap_length = qp->rq.mmap_length;
	resp.rq_num_entries = qp->rq.num_entries;
	resp.rq_wqe_size = rq_wqe_size;
	err = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (err)
		goto err_rq;
	return 0;

err_rq:
	sroce_rq_destroy(qp);
err_sq:
	sroce_sq_destroy(qp);
err_count:
	sroce_budget_put(&sdev->num_qp, !qp->kernel);
err_budget:
	xa_erase(&sdev->qp_xa, qpn);
	sroce_tx_credit_detach(qp);
	/* A receiver may have found the QP; the core frees it on return. */
	synchronize_rcu_expedited();
	sroce_qp_quiesce(qp);
	sroce_tx_credit_put(qp->credit);
	return err;
}

int sroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibqp->device);
	struct sroce_qp *qp = to_sqp(ibqp);

	spin_lock_bh(&qp->req_lock);
	spin_lock(&qp->resp_lock);
	qp->dead = true;
	spin_unlock(&qp->resp_lock);
	spin_unlock_bh(&qp->req_lock);
	sroce_mcast_detach_all(qp);
	sroce_mw_unbind_qp(qp);
	xa_erase(&sdev->qp_xa, ibqp->qp_num);
	sroce_tx_credit_detach(qp);
	/* Receivers and destructors found the QP under RCU; wait for them. */
	synchronize_rcu_expedited();
	sroce_qp_quiesce(qp);
	/* Not in quiesce: modify holds qp->lock there, a handler may take it. */
	cancel_work_sync(&qp->event_work);
	sroce_tx_credit_put(qp->credit);
	if (qp->kernel) {
		sroce_cq_purge_qp(to_scq(ibqp->send_cq), ibqp->qp_num);
		if (ibqp->recv_cq != ibqp->send_cq)
			sroce_cq_purge_qp(to_scq(ibqp->recv_cq), ibqp->qp_num);
	}
	if (qp->av_valid)
		rdma_destroy_ah_attr(&qp->av);
	sroce_rq_destroy(qp);
	sroce_sq_destroy(qp);
	sroce_budget_put(&sdev->num_qp, !qp->kernel);
	return 0;
}

/* Attribute checks beyond the core's mask rules (ib_modify_qp_is_ok). */
static int sroce_qp_check_attr(struct sroce_qp *qp, struct ib_qp_attr *attr,
			       int mask)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);

	if (mask & (IB_QP_ALT_PATH | IB_QP_PATH_MIG_STATE | IB_QP_RATE_LIMIT))
		return -EOPNOTSUPP;
	if ((mask & IB_QP_PKEY_INDEX) &&
	    attr->pkey_index >= SROCE_PKEY_TABLE_LEN)
		return -EINVAL;
	if ((mask & IB_QP_PORT) && attr->port_num != SROCE_PORT)
		return -EINVAL;
	/*
	 * Local write means nothing for a QP, but consumers do pass it. The
	 * CM grants both FLUSH rights to any device with a FLUSH capability;
	 * persistence then still fails at the region, which cannot hold it.
	 */
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~(IB_ACCESS_LOCAL_WRITE |
				       IB_ACCESS_REMOTE_WRITE |
				       IB_ACCESS_REMOTE_READ |
				       IB_ACCESS_REMOTE_ATOMIC |
				       SROCE_ACCESS_FLUSH_GLOBAL |
				       SROCE_ACCESS_FLUSH_PERSISTENT)))
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 ||
	     attr->path_mtu > sroce_max_mtu(sdev->ndev)))
		return -EINVAL;
	if ((mask & IB_QP_DEST_QPN) && attr->dest_qp_num > SROCE_MAX_QPN)
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > SROCE_MAX_INIT_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > SROCE_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && attr->timeout > 31)
		return -EINVAL;
	if (mask & IB_QP_AV) {
		/* RoCE addresses are GIDs: a GRH is mandatory. */
		if (attr->ah_attr.type != RDMA_AH_ATTR_TYPE_ROCE ||
		    !(rdma_ah_get_ah_flags(&attr->ah_attr) & IB_AH_GRH) ||
		    !rdma_ah_read_grh(&attr->ah_attr)->sgid_attr)
			return -EINVAL;
	}
	return 0;
}

/* Address, MTU and responder state for a QP on its way to RTR. */
static int sroce_qp_to_rtr(struct sroce_qp *qp)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	enum ib_mtu active = sroce_active_mtu(sdev->ndev);
	enum ib_mtu mtu = qp->attr.path_mtu ? qp->attr.path_mtu : active;

	if (!qp->av_valid)
		return -EINVAL;
	qp->mtu = ib_mtu_enum_to_int(min(mtu, active));
	return sroce_path_init(qp);
}

/*
 * Make the new state visible to the data path, starting the requester or
 * responder where it begins to run. The data path may have moved the QP
 * on (to SQE or ERR) since the checks: then only a move to ERR or RESET
 * goes on, any other modify fails.
 */
static int sroce_qp_commit_state(struct sroce_qp *qp, enum ib_qp_state cur,
				 enum ib_qp_state next)
{
	int err = 0;

	spin_lock_bh(&qp->req_lock);
	spin_lock(&qp->resp_lock);
	/*
	 * The data path may have moved the QP on (to SQE or ERR) since @cur
	 * was read; a move to the error state or to reset is still one to
	 * make (a ULP's ib_drain_qp() must not fail because the QP failed
	 * first).
	 */
	if (qp->state != cur && next != IB_QPS_ERR && next != IB_QPS_RESET) {
		err = -EINVAL;
		goto out;
	}
	switch (next) {
	case IB_QPS_RESET:
		sroce_sq_reset(qp);
		sroce_resp_reset(qp);
		sroce_cc_rp_reset(qp);
		break;
	case IB_QPS_RTR:
		if (cur != IB_QPS_RTR) {
			sroce_resp_init(qp);
			/* A CNP that raced the reset is not the new peer's. */
			sroce_cc_rp_reset(qp);
		}
		break;
	case IB_QPS_RTS:
		if (cur == IB_QPS_RTR)
			sroce_req_init(qp);
		/*
		 * Drained with packets outstanding, or with an RNR wait whose
		 * timer expired meanwhile: time them again.
		 */
		else if (cur == IB_QPS_SQD && qp->ibqp.qp_type == IB_QPT_RC &&
			 (qp->req.una != qp->req.psn || qp->req.rnr_wait))
			sroce_req_arm_timer(qp);
		break;
	default:
		break;
	}
	if (next != qp->state)
		trace_sroce_qp_state(&qp->ibqp, qp->state, next);
	WRITE_ONCE(qp->state, next);
out:
	spin_unlock(&qp->resp_lock);
	spin_unlock_bh(&qp->req_lock);
	return err;
}

int sroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	enum ib_qp_state cur, next;
	int err;

	if (!sroce_udata_input_ok(udata))
		return -EINVAL;

	mutex_lock(&qp->lock);
	cur = mask & IB_QP_CUR_STATE ? attr->cur_qp_state : qp->state;
	next = mask & IB_QP_STATE ? attr->qp_state : cur;
	err = -EINVAL;
	if (cur != qp->state ||
	    !ib_modify_qp_is_ok(cur, next, ibqp->qp_type, mask))
		goto out;
	err = sroce_qp_check_attr(qp, attr, mask);
	if (err)
		goto out;

	if (mask & IB_QP_ACCESS_FLAGS)
		qp->attr.qp_access_flags = attr->qp_access_flags;
	if (mask & IB_QP_PKEY_INDEX)
		qp->attr.pkey_index = attr->pkey_index;
	if (mask & IB_QP_PORT)
		qp->attr.port_num = attr->port_num;
	if (mask & IB_QP_AV) {
		if (qp->av_valid)
			rdma_replace_ah_attr(&qp->av, &attr->ah_attr);
		else
			rdma_copy_ah_attr(&qp->av, &attr->ah_attr);
		qp->av_valid = true;
	}
	if (mask & IB_QP_PATH_MTU)
		qp->attr.path_mtu = attr->path_mtu;
	if (mask & IB_QP_TIMEOUT)
		qp->attr.timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		qp->attr.retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		qp->attr.rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_RQ_PSN)
		qp->attr.rq_psn = attr->rq_psn & SROCE_PSN_MASK;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		qp->attr.max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MIN_RNR_TIMER)
		qp->attr.min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_SQ_PSN)
		qp->attr.sq_psn = attr->sq_psn & SROCE_PSN_MASK;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		qp->attr.max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_DEST_QPN)
		qp->attr.dest_qp_num = attr->dest_qp_num;
	if (mask & IB_QP_EN_SQD_ASYNC_NOTIFY)
		qp->attr.en_sqd_async_notify = attr->en_sqd_async_notify;
	if (mask & IB_QP_QKEY)
		qp->attr.qkey = attr->qkey;

	if (next == IB_QPS_RTR && cur != IB_QPS_RTR) {
		struct net_device *ndev = to_sdev(ibqp->device)->ndev;

		/* Datagrams go anywhere, up to the port's MTU. */
		if (sroce_qp_connected(qp))
			err = sroce_qp_to_rtr(qp);
		else
			qp->mtu = ib_mtu_enum_to_int(sroce_active_mtu(ndev));
		if (err)
			goto out;
	}
	if (next == IB_QPS_RESET) {
		sroce_qp_quiesce(qp);
		if (qp->av_valid) {
			rdma_destroy_ah_attr(&qp->av);
			qp->av_valid = false;
		}
	}
	err = sroce_qp_commit_state(qp, cur, next);
	if (!err && next == IB_QPS_ERR)
		sroce_qp_flush(qp);
	if (!err && next == IB_QPS_RTS)
		sroce_sq_kick(qp);
out:
	mutex_unlock(&qp->lock);
	return err;
}

/* The stored address vector, without the GID attribute reference. */
static void sroce_qp_av_to_attr(struct sroce_qp *qp, struct rdma_ah_attr *ah)
{
	const struct ib_global_route *grh = rdma_ah_read_grh(&qp->av);
	union ib_gid dgid = grh->dgid;

	memset(ah, 0, sizeof(*ah));
	ah->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(ah, SROCE_PORT);
	rdma_ah_set_sl(ah, rdma_ah_get_sl(&qp->av));
	rdma_ah_set_grh(ah, &dgid, grh->flow_label, grh->sgid_index,
			grh->hop_limit, grh->traffic_class);
	memcpy(ah->roce.dmac, qp->av.roce.dmac, ETH_ALEN);
}

int sroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init)
{
	struct sroce_qp *qp = to_sqp(ibqp);

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));
	mutex_lock(&qp->lock);
	*attr = qp->attr;
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->cap = qp->cap;
	attr->sq_draining = 0;
	if (qp->av_valid)
		sroce_qp_av_to_attr(qp, &attr->ah_attr);
	mutex_unlock(&qp->lock);

	init->qp_type = ibqp->qp_type;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->cap = qp->cap;
	init->sq_sig_type = qp->sq_sig_all ? IB_SIGNAL_ALL_WR :
					     IB_SIGNAL_REQ_WR;
	return 0;
}

/**
 * sroce_qp_sq_doorbell() - the send queue has new entries.
 * @qp: the queue pair
 *
 * Context: any (user doorbells come from process context).
 */
void sroce_qp_sq_doorbell(struct sroce_qp *qp)
{
	sroce_ring_disarm(&qp->sq);
	switch (sroce_qp_state(qp)) {
	case IB_QPS_RTS:
		if (qp->kernel)
			sroce_sq_kick_any(qp);
		else
			sroce_sq_doorbell(qp);
		break;
	case IB_QPS_ERR:
	case IB_QPS_SQE:
		if (sroce_can_disable_bh())
			sroce_qp_flush(qp);
		else
			queue_work(sroce_data_wq, &qp->err_work);
		break;
	default:
		/* Nothing is sent before RTS; keep asking for doorbells. */
		sroce_ring_arm(&qp->sq);
		break;
	}
}

/**
 * sroce_qp_rq_doorbell() - receive entries were posted to a QP in error.
 * @qp: the queue pair
 *
 * The responder reads the receive ring when a message arrives; a doorbell
 * is needed only to flush receive WQEs posted to a QP in error.
 * Context: any.
 */
void sroce_qp_rq_doorbell(struct sroce_qp *qp)
{
	if (sroce_qp_state(qp) != IB_QPS_ERR)
		return;
	if (sroce_can_disable_bh())
		sroce_qp_flush(qp);
	else
		queue_work(sroce_data_wq, &qp->err_work);
}

/**
 * sroce_post_send() - post send work requests, or ring the doorbell.
 * @ibqp: the queue pair
 * @wr: work requests of a kernel consumer; NULL for the user doorbell
 * @bad_wr: set to the first request not posted
 *
 * Return: 0 or a negative errno; -EOPNOTSUPP for work requests on a user
 * QP, which posts through its ring.
 */
int sroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);

	if (qp->kernel)
		return wr ? sroce_kpost_send(qp, wr, bad_wr) : 0;
	if (wr) {
		*bad_wr = wr;
		return -EOPNOTSUPP;
	}
	sroce_qp_count(qp, SROCE_CNT_SQ_DOORBELL);
	trace_sroce_doorbell(ibqp, true);
	sroce_qp_sq_doorbell(qp);
	return 0;
}

/**
 * sroce_post_recv() - post receive work requests, or ring the doorbell.
 * @ibqp: the queue pair
 * @wr: work requests of a kernel consumer; NULL for the user doorbell
 * @bad_wr: set to the first request not posted
 *
 * Return: 0 or a negative errno; -EOPNOTSUPP for work requests on a user
 * QP.
 */
int sroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);

	if (qp->kernel)
		return wr ? sroce_kpost_recv(qp, wr, bad_wr) : 0;
	if (wr) {
		*bad_wr = wr;
		return -EOPNOTSUPP;
	}
	trace_sroce_doorbell(ibqp, false);
	sroce_qp_rq_doorbell(qp);
	return 0;
}
