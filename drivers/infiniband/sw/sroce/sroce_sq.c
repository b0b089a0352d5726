// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The send queue engine, for every QP type: posted WQEs are copied out of
 * the ring once and checked (the copy is what the kernel follows; the
 * user may rewrite the ring at any time), handed to the QP type's
 * transmitter (RC and UC: sroce_req.c; UD and GSI: sroce_ud.c), completed
 * in order, and flushed in the error states.
 *
 * Work runs where it is triggered: in the doorbell system call, in the
 * receive softirq for ACKs, or in the timer; a pass sends at most
 * SROCE_TX_BUDGET packets and leaves the rest to req_work. A user QP's
 * ring that drained is watched for a while by a poller on an idle CPU,
 * so that a stream of small posts needs no doorbell at all. A CPU's
 * poller watches the rings of many QPs in turn (its poll list), so that
 * one thread posting to many QPs needs no doorbells either.
 */
#include "sroce_sq.h"
#include <linux/sched/clock.h>
#include <linux/sched/stat.h>
#include <linux/wait_bit.h>
#include "sroce_hdr.h"

static enum ib_wc_opcode sroce_wc_opcode(u32 op)
{
	switch (op) {
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_UVERBS_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	case IB_UVERBS_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case SROCE_WR_REG_MR:
		return IB_WC_REG_MR;
	case IB_UVERBS_WR_BIND_MW:
		return IB_WC_BIND_MW;
	case SROCE_WR_ATOMIC_WRITE:
		return SROCE_WC_ATOMIC_WRITE;
	default:
		return IB_WC_SEND;
	}
}

static void sroce_sq_post_cqe(struct sroce_qp *qp, u64 wr_id, u32 op,
			      u32 len, int status)
{
	struct sroce_cqe cqe = {
		.wr_id = wr_id,
		.status = status,
		.opcode = sroce_wc_opcode(op),
		.byte_len = len,
		.qp_num = qp->ibqp.qp_num,
		.port_num = SROCE_PORT,
	};

	sroce_cq_post(to_scq(qp->ibqp.send_cq), &cqe, false);
}

/*
 * Complete the WQE at the head; successful unsignaled ones stay silent.
 * The slot is released before the completion appears: a consumer that
 * sees the completion may post into the slot at once. The completion is
 * built from the kernel's copy, which the next fetch alone overwrites.
 * Context: req_lock held.
 */
void sroce_sq_complete(struct sroce_qp *qp, int status)
{
	struct sroce_req *req = &qp->req;
	struct sroce_send_wqe *w = sroce_swqe(qp, req->head);
	struct sroce_swqe_state *st = sroce_sst(qp, req->head);

	lockdep_assert_held(&qp->req_lock);
	if (sroce_op_is_rdatomic(w->opcode) && req->head != req->next &&
	    req->rd_pending)
		req->rd_pending--;
	req->head++;
	/* The slot's last use (our copy of it) is done. */
	sroce_ring_release(&qp->sq, req->head);
	if (status != IB_WC_SUCCESS || qp->sq_sig_all ||
	    (w->send_flags & SROCE_SEND_F_SIGNALED))
		sroce_sq_post_cqe(qp, w->wr_id, w->opcode, st->length, status);
}

/* A locally detected error: complete the head with it, fail the QP. */
void sroce_sq_fail(struct sroce_qp *qp, int status)
{
	if (qp->req.head != qp->req.fetched)
		sroce_sq_complete(qp, status);
	sroce_qp_set_error(qp);
}

static u32 sroce_wqe_npsn(struct sroce_qp *qp, u32 op, u32 len)
{
	if (sroce_op_is_local(op))
		return 0;
	if (sroce_op_is_atomic(op) || op == SROCE_WR_ATOMIC_WRITE)
		return 1;
	return sroce_msg_npsn(qp, len);
}

/* Check a copied WQE; return the completion status it earns locally. */
static int sroce_sq_check(struct sroce_qp *qp, struct sroce_send_wqe *w,
			  const void *src, u64 *len)
{
	const struct sroce_sge *sge;
	u32 op = w->opcode, i;
	bool data_op;

	data_op = op == IB_UVERBS_WR_SEND ||
		  op == IB_UVERBS_WR_SEND_WITH_IMM ||
		  op == IB_UVERBS_WR_SEND_WITH_INV ||
		  op == IB_UVERBS_WR_RDMA_WRITE ||
		  op == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM;
	*len = 0;
	if (sroce_op_is_local(op)) {
		/* Registrations come from kernel consumers alone. */
		if ((qp->ibqp.qp_type != IB_QPT_RC &&
		     qp->ibqp.qp_type != IB_QPT_UC) ||
		    (op == SROCE_WR_REG_MR && !qp->kernel))
			return IB_WC_LOC_QP_OP_ERR;
		return IB_WC_SUCCESS;
	}
	if (!data_op && !sroce_op_is_rdatomic(op))
		return IB_WC_LOC_QP_OP_ERR;
	/* Its 8 bytes are in the WQE; the target must be aligned (A19). */
	if (op == SROCE_WR_ATOMIC_WRITE)
		return qp->ibqp.qp_type == IB_QPT_RC &&
		       !(w->wr.atomic.remote_addr & 7) ?
		       IB_WC_SUCCESS : IB_WC_LOC_QP_OP_ERR;
	/* Datagrams are sends, one packet each. */
	if ((qp->ibqp.qp_type == IB_QPT_UD ||
	     qp->ibqp.qp_type == IB_QPT_GSI) &&
	    op != IB_UVERBS_WR_SEND && op != IB_UVERBS_WR_SEND_WITH_IMM)
		return IB_WC_LOC_QP_OP_ERR;
	/* UC: sends and writes, no reads, atomics or invalidation. */
	if (qp->ibqp.qp_type == IB_QPT_UC &&
	    (sroce_op_is_rdatomic(op) || op == IB_UVERBS_WR_SEND_WITH_INV))
		return IB_WC_LOC_QP_OP_ERR;

	if (w->send_flags & SROCE_SEND_F_INLINE) {
		if (!data_op || w->inline_len > qp->cap.max_inline_data)
			return IB_WC_LOC_QP_OP_ERR;
		memcpy(w + 1, src + sizeof(*w), w->inline_len);
		*len = w->inline_len;
		return IB_WC_SUCCESS;
	}
	if (w->num_sge > qp->cap.max_send_sge)
		return IB_WC_LOC_QP_OP_ERR;
	memcpy(w + 1, src + sizeof(*w), w->num_sge * sizeof(*sge));
	sge = sroce_swqe_sge(w);
	for (i = 0; i < w->num_sge; i++)
		*len += sge[i].length;
	if (sroce_op_is_atomic(op) && (w->num_sge != 1 || *len != 8))
		return IB_WC_LOC_QP_OP_ERR;
	if (*len > SROCE_MAX_MSG_SIZE)
		return IB_WC_LOC_LEN_ERR;
	return IB_WC_SUCCESS;
}

/* Copy and check the next posted WQE; false when none is posted. */
bool sroce_sq_fetch(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;
	struct sroce_swqe_state *st;
	struct sroce_send_wqe *w;
	const void *src;
	int avail;
	u64 len;

	/* Our copies of the WQEs from head on are in use. */
	avail = sroce_ring_avail(&qp->sq, req->head, req->fetched);
	if (avail <= 0) {
		if (avail < 0)
			sroce_qp_bad_ring(qp);
		return false;
	}
	src = sroce_ring_entry(&qp->sq, req->fetched);
	w = sroce_swqe(qp, req->fetched);
	st = sroce_sst(qp, req->fetched);
	memcpy(w, src, sizeof(*w));
	st->status = sroce_sq_check(qp, w, src, &len);
	if (st->status != IB_WC_SUCCESS) {
		sroce_qp_count(qp, SROCE_CNT_BAD_WQE);
		len = 0;
	}
	st->length = len;
	st->npsn = sroce_wqe_npsn(qp, w->opcode, len);
	st->read_off = 0;
	req->fetched++;
	return true;
}

/*
 * A doorbell costs a system call of a few microseconds; polling costs a
 * CPU nobody else wants (sroce_sq_poller_work() gives it up at once).
 */
static unsigned int sq_poll_us = 50;
module_param(sq_poll_us, uint, 0644);
MODULE_PARM_DESC(sq_poll_us, "Microseconds a user QP's drained send ring is polled, on an otherwise idle CPU, before a doorbell is asked for (default: 50; 0: never; at most 10000)");
#define SROCE_SQ_POLL_MAX_US		10000

/* A QP whose polls keep saving nothing tries once in 2^this drains. */
#define SROCE_SQ_POLL_MAX_BACKOFF	14
/*
 * Soon after a poll took posts, the backoff of polls that took nothing
 * stops here: a CPU busy for a moment, or a stream that paused, says
 * little about later. A short task (a shell's fork) would otherwise leave
 * a stream on doorbells for up to 16384 drains after it ended: beside a
 * shell loop forking every 200 ms, a quarter of a 64 B WRITE stream's
 * posts rang, and it ran 40 % slower than alone. Whether a fruitless
 * session yielded or found its window closed is a race with the tasks
 * that take the CPU, so the cap holds for both. Past the grace, or with
 * no poll ever fruitful (a receiver busy polling on the only other CPU),
 * the backoff goes on growing: waking a poller that yields at once every
 * 64 drains cost such a 64 B SEND stream 14 %.
 */
#define SROCE_SQ_POLL_YIELD_MAX_BACKOFF	6
#define SROCE_SQ_POLL_YIELD_GRACE_NS	(2 * NSEC_PER_SEC)
/* Pollers tried, from the one a QP last used on. */
#define SROCE_SQ_POLL_TRIES		4
/*
 * Rings one poller watches at most: a round over them costs a post on
 * each up to this many looks at the others before it is sent.
 */
#define SROCE_SQ_POLL_QPS		64
/*
 * A poller that has not looped for this long, outside its passes (a
 * real-time task has its CPU), loses its session to poll_watchdog: the
 * ring is its doorbell's again. Above the softirq time a pass may leave
 * behind (MAX_SOFTIRQ_TIME, 2 ms).
 */
#define SROCE_SQ_POLL_WATCHDOG_NS	(4 * NSEC_PER_MSEC)
/*
 * A pass runs with BH off, so it is not preempted, except on PREEMPT_RT:
 * one that lasts this long is taken for a stalled poller too.
 */
#define SROCE_SQ_POLL_PASS_MAX_NS	(50 * NSEC_PER_MSEC)

/**
 * struct sroce_sq_poller - a CPU's poller: it watches the send rings of
 * the QPs on its list in turn, sending what is posted.
 * @lock: guards @qps, @nr, @running and @cur; taken inside req_lock
 * @qps: the QPs in a poll session here (by req.poll_node), the one to
 *	look at next first
 * @nr: how many are on @qps
 * @running: @work is queued or runs, and will look at @qps again
 * @cur: the QP the poller looks at, outside @lock: a session may end
 *	meanwhile, and sroce_sq_poll_cancel() waits for the poller to move on
 * @beat: local_clock() of the poller's last look or pass start, for the
 *	sessions' watchdogs; written without @lock
 * @in_pass: the poller is in a pass (BH off), begun at @beat
 * @last_ns: local_clock() when a ring on @qps last gave posts or was
 *	taken over; written by the poller only
 * @paused: the poller gave its CPU up for a moment, its rings handed back
 *	to their doorbells, and has not looked at a ring since
 * @cpu: the CPU it runs on
 * @work: the poller, queued on @cpu
 */
struct sroce_sq_poller {
	spinlock_t lock;	/* see above */
	struct list_head qps;
	u32 nr;
	bool running;
	struct sroce_qp *cur;
	u64 beat;
	bool in_pass;
	u64 last_ns;
	bool paused;
	int cpu;
	struct work_struct work;
};

/*
 * At most one poller per CPU, of any device, and one CPU always left
 * without: a user cannot make the kernel spin on every CPU.
 */
static DEFINE_PER_CPU(struct sroce_sq_poller, sroce_sq_pollers);
static atomic_t sroce_sq_busy_pollers = ATOMIC_INIT(0);

static void sroce_sq_poller_work(struct work_struct *work);

void __init sroce_sq_poll_init(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct sroce_sq_poller *p = per_cpu_ptr(&sroce_sq_pollers, cpu);

		spin_lock_init(&p->lock);
		INIT_LIST_HEAD(&p->qps);
		p->cpu = cpu;
		INIT_WORK(&p->work, sroce_sq_poller_work);
	}
}

/* The next CPU online after @cpu, round the end. */
static int sroce_next_online_cpu(int cpu)
{
	cpu = cpumask_next(cpu, cpu_online_mask);
	return cpu < nr_cpu_ids ? cpu : cpumask_first(cpu_online_mask);
}

/*
 * Put @qp on @cpu's poll list if there is room: a poller that runs takes
 * up to SROCE_SQ_POLL_QPS, an idle one starts if fewer pollers run than
 * CPUs are online, less one. Context: req_lock held, BH disabled.
 */
static bool sroce_sq_poll_join(struct sroce_qp *qp, int cpu)
{
	struct sroce_sq_poller *p = per_cpu_ptr(&sroce_sq_pollers, cpu);
	struct sroce_req *req = &qp->req;
	bool joined = false;

	spin_lock(&p->lock);
	if (p->nr >= SROCE_SQ_POLL_QPS)
		goto out;
	if (!p->nr && atomic_inc_return(&sroce_sq_busy_pollers) >=
		      num_online_cpus()) {
		atomic_dec(&sroce_sq_busy_pollers);
		goto out;
	}
	/* The session, before the poller can find it (it takes p->lock). */
	req->poller = p;
	req->poll_cpu = cpu;
	req->polling = true;
	req->poll_more = false;
	req->poll_fruitful = false;
	list_add_tail(&req->poll_node, &p->qps);
	p->nr++;
	joined = true;
	if (!p->running) {
		/* Its watchdogs count from now while it gets its CPU. */
		WRITE_ONCE(p->beat, local_clock());
		WRITE_ONCE(p->in_pass, false);
		p->running = true;
		queue_work_on(cpu, sroce_poll_wq, &p->work);
	}
out:
	spin_unlock(&p->lock);
	return joined;
}

/*
 * The ring drained: start a poll session, on another CPU than this one,
 * where the posting thread or the softirq that drained the ring is. The
 * doorbell stays armed until the poller looks at the ring and takes it
 * over: a post never waits for the poller to get a CPU.
 * Context: req_lock held, BH disabled.
 * Return: true when the poller watches the ring (no doorbell is needed).
 */
static bool sroce_sq_poll_start(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;
	int this_cpu = smp_processor_id(), cpu, i;

	lockdep_assert_held(&qp->req_lock);
	if (req->polling)
		return req->poll_watching;
	if (!READ_ONCE(sq_poll_us) || qp->kernel || qp->dead ||
	    req->poll_barred)
		return false;
	if (req->poll_skip) {
		req->poll_skip--;
		return false;
	}
	/*
	 * The poller of an ended session may still be looking at the QP
	 * (and would take the new session's state for its own); it moves
	 * on at once.
	 */
	if (req->poller && READ_ONCE(req->poller->cur) == qp)
		return false;
	cpu = req->poll_cpu;
	if (!cpu_online(cpu))
		cpu = sroce_next_online_cpu(this_cpu);
	for (i = 0; i < SROCE_SQ_POLL_TRIES; i++) {
		if (cpu != this_cpu && sroce_sq_poll_join(qp, cpu))
			break;
		cpu = sroce_next_online_cpu(cpu);
	}
	if (i == SROCE_SQ_POLL_TRIES)
		return false;
	hrtimer_start(&qp->poll_watchdog, ns_to_ktime(SROCE_SQ_POLL_WATCHDOG_NS),
		      HRTIMER_MODE_REL_SOFT);
	return false;
}

/*
 * Past the grace of the last poll pass that took posts? Signed: the pass
 * may have read another CPU's clock, a little ahead of this one's.
 */
static bool sroce_sq_poll_grace_over(const struct sroce_req *req)
{
	return (s64)(local_clock() - READ_ONCE(req->poll_fruit_ns)) >
	       SROCE_SQ_POLL_YIELD_GRACE_NS;
}

/*
 * End the poll session: its slot is free again. A session that took
 * nothing backs off; one that took nothing or gave its CPU up moves on.
 * Context: req_lock held.
 */
static void sroce_sq_poll_end(struct sroce_qp *qp, bool fruitful,
			      bool yielded)
{
	struct sroce_req *req = &qp->req;
	struct sroce_sq_poller *p = req->poller;

	lockdep_assert_held(&qp->req_lock);
	req->polling = false;
	req->poll_watching = false;
	spin_lock(&p->lock);
	list_del_init(&req->poll_node);
	if (!--p->nr)
		atomic_dec(&sroce_sq_busy_pollers);
	spin_unlock(&p->lock);
	/* Not hrtimer_cancel(): the watchdog takes req_lock. */
	hrtimer_try_to_cancel(&qp->poll_watchdog);
	if (fruitful) {
		req->poll_backoff = 0;
	} else if (req->poll_backoff < SROCE_SQ_POLL_YIELD_MAX_BACKOFF ||
		   (req->poll_backoff < SROCE_SQ_POLL_MAX_BACKOFF &&
		    sroce_sq_poll_grace_over(req))) {
		req->poll_backoff++;
	}
	if (!fruitful || yielded)
		req->poll_cpu = sroce_next_online_cpu(req->poll_cpu);
	req->poll_skip = (1U << req->poll_backoff) - 1;
}

/**
 * sroce_sq_next_ready() - make sure a WQE is at req->next.
 * @qp: the queue pair, in RTS
 *
 * Fetches the next posted WQE when req->next has none; with nothing
 * posted, starts a poll session or asks for a doorbell (and fetches what
 * arrived meanwhile).
 * Context: req_lock held, BH disabled.
 * Return: false when nothing is posted (the doorbell is armed then, or a
 * poller watches the ring).
 */
bool sroce_sq_next_ready(struct sroce_qp *qp)
{
	lockdep_assert_held(&qp->req_lock);
	while (qp->req.next == qp->req.fetched && !sroce_sq_fetch(qp))
		if (sroce_qp_state(qp) != IB_QPS_RTS ||
		    sroce_sq_poll_start(qp) ||
		    sroce_ring_idle(&qp->sq, qp->req.fetched))
			return false;
	return true;
}

/*
 * Hand posted WQEs to the QP type's transmitter, at most @budget packets.
 * Return true when it stopped only for the budget (or for memory).
 * Context: req_lock held, BH disabled.
 */
static bool sroce_sq_progress(struct sroce_qp *qp, int budget)
{
	if (qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI)
		return sroce_ud_progress(qp, budget);
	return sroce_req_progress(qp, budget);
}

/* Continue sending from softirq context; the rest goes to req_work. */
void sroce_sq_progress_bh(struct sroce_qp *qp)
{
	if (sroce_sq_progress(qp, SROCE_TX_BUDGET) && !qp->dead)
		queue_work_on(raw_smp_processor_id(), sroce_data_wq,
			      &qp->req_work);
}

/*
 * Up to @passes passes of sroce_sq_kick(); with one pass, BH may be off
 * already (the poller). Return: true if it stopped at @passes with more
 * to do (a signal hands the rest to req_work itself).
 */
static bool sroce_sq_kick_passes(struct sroce_qp *qp, int passes)
{
	bool more, loops;

	for (;;) {
		if (signal_pending(current)) {
			if (!qp->dead)
				queue_work(sroce_data_wq, &qp->req_work);
			return false;
		}
		/* Datagrams may go anywhere, this device included. */
		loops = READ_ONCE(qp->path.loopback) ||
			qp->ibqp.qp_type == IB_QPT_UD ||
			qp->ibqp.qp_type == IB_QPT_GSI;
		local_bh_disable();
		if (loops)
			sroce_lo_will_drain();
		spin_lock(&qp->req_lock);
		more = sroce_sq_progress(qp, SROCE_TX_BUDGET);
		spin_unlock(&qp->req_lock);
		if (loops)
			sroce_lo_drain(to_sdev(qp->ibqp.device));
		local_bh_enable();
		if (!more || !--passes)
			return more;
		cond_resched();
	}
}

/**
 * sroce_sq_kick() - send what is posted, from process context.
 * @qp: the queue pair
 *
 * Runs in passes of SROCE_TX_BUDGET packets with softirqs allowed in
 * between, so looped-back packets are consumed as they are produced. A
 * user who keeps posting keeps a doorbell call busy only until a signal
 * comes; req_work goes on from there.
 */
void sroce_sq_kick(struct sroce_qp *qp)
{
	sroce_sq_kick_passes(qp, INT_MAX);
}

/**
 * sroce_sq_kick_any() - send what is posted, from any context.
 * @qp: the queue pair
 *
 * Where sleeping is allowed this is sroce_sq_kick(); with softirqs
 * allowed one budgeted pass runs here and req_work does the rest; in hard
 * interrupt context or with interrupts off, req_work does it all.
 */
void sroce_sq_kick_any(struct sroce_qp *qp)
{
	if (preemptible()) {
		sroce_sq_kick(qp);
	} else if (sroce_can_disable_bh()) {
		spin_lock_bh(&qp->req_lock);
		sroce_sq_progress_bh(qp);
		spin_unlock_bh(&qp->req_lock);
	} else if (!qp->dead) {
		queue_work(sroce_data_wq, &qp->req_work);
	}
}

static bool sq_handoff = true;
module_param(sq_handoff, bool, 0644);
MODULE_PARM_DESC(sq_handoff, "Hand the sending of a user's loopback stream from its doorbell to a worker on the next CPU (default: on)");

/*
 * Doorbells in a row, each sooner after the kernel went idle than half
 * what sending took, before a doorbell hands its sending off: a request
 * answered by two posts is not a stream.
 */
#define SROCE_SQ_STREAK			2
/*
 * A handed-off stream that has sent nothing for this long has a worker
 * kept from its CPU (a real-time task): the poster's CPU sends instead,
 * and the QP's next this many streaming doorbells send inline. Well
 * above the time a worker may wait behind others in its pool: at 4 ms,
 * 64 KiB writes over 8 QPs from one thread were taken for stalled 554
 * times in a bench run and fell from 754 to 343 MB/s.
 */
#define SROCE_SQ_HANDOFF_WAIT_NS	(50 * NSEC_PER_MSEC)
#define SROCE_SQ_HANDOFF_BACKOFF	64

/*
 * Does user space stream? It came back with more posts at @now sooner
 * than half of what the kernel last took to send, SROCE_SQ_STREAK times
 * in a row: it posts as fast as it can and waits for nothing in between.
 * Someone waiting for an answer comes back no sooner than the peer took
 * to send it, about as long as sending took here (signed: another CPU's
 * clock may be a little ahead). An answer the doorbell itself brought
 * (a loopback READ, complete when the call returns) comes back at once,
 * though: what tells that user apart is that it reaped every completion
 * of the send CQ between its doorbells, where a stream leaves them for
 * later or asks for few. The CQ's lock keeps its ring from a resize.
 */
static bool sroce_sq_streams(struct sroce_qp *qp, u64 now)
{
	struct sroce_cq *cq = to_scq(qp->ibqp.send_cq);
	struct sroce_req *req = &qp->req;
	s64 gap = now - READ_ONCE(req->db_idle_ns);
	u8 streak = READ_ONCE(req->db_streak);
	unsigned long flags;
	bool reaped;
	u32 cons;

	spin_lock_irqsave(&cq->lock, flags);
	cons = READ_ONCE(cq->ring.hdr->cons);
	reaped = cons != READ_ONCE(req->db_cq_cons) &&
		 !sroce_ring_pending(&cq->ring, cq->prod);
	spin_unlock_irqrestore(&cq->lock, flags);
	if (gap < (s64)(READ_ONCE(req->db_cost_ns) / 2) && !reaped)
		streak = min_t(u8, streak + 1, SROCE_SQ_STREAK);
	else
		streak = 0;
	WRITE_ONCE(req->db_cq_cons, cons);
	WRITE_ONCE(req->db_streak, streak);
	return streak >= SROCE_SQ_STREAK;
}

/* What the requester has fetched and sent: it changes as a stream goes. */
static u64 sroce_sq_handoff_mark(const struct sroce_req *req)
{
	return (u64)READ_ONCE(req->fetched) << 32 | READ_ONCE(req->psn);
}

/* What sending from @start until now took, for the next doorbell. */
static void sroce_sq_sent(struct sroce_req *req, u64 start)
{
	u64 end = local_clock();

	/* Signed: the task may have moved to a CPU whose clock is behind. */
	WRITE_ONCE(req->db_cost_ns, clamp_t(s64, end - start, 0, U32_MAX));
	WRITE_ONCE(req->db_idle_ns, end);
}

/**
 * sroce_sq_doorbell() - a user's send doorbell: send what is posted.
 * @qp: the queue pair, in RTS
 *
 * A lone message is sent (and, in loopback, delivered and completed)
 * inside the system call, with no wakeup on its way. A stream to a QP of
 * this device is handed to req_work on the next CPU online instead: the
 * caller goes back to posting at once, the worker sends and delivers
 * while it does, and as long as it finds more posted it needs no further
 * doorbell. Inline, each message cost a system call and its delivery on
 * the poster's CPU, one after the other. The next CPU, not the send CQ's
 * completion vector's: most users leave every CQ on vector 0, and
 * posters on different CPUs then hand their streams to different CPUs.
 * Not a stream to the wire: while packets are in flight, a QP sends only
 * from the CPU it last sent from (sroce_tx_credit.c), which would send
 * the work back.
 * Context: process.
 */
void sroce_sq_doorbell(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;
	u64 start = local_clock();
	int cpu;
	u8 skip;

	if (READ_ONCE(sq_handoff) && READ_ONCE(qp->path.loopback) &&
	    num_online_cpus() > 1 && sroce_sq_streams(qp, start)) {
		skip = READ_ONCE(req->handoff_skip);
		if (skip) {
			WRITE_ONCE(req->handoff_skip, skip - 1);
		} else {
			WRITE_ONCE(req->handoff_mark, sroce_sq_handoff_mark(req));
			WRITE_ONCE(req->handoff_ns, start);
			cpu = get_cpu();
			hrtimer_start(&qp->handoff_watchdog,
				      ns_to_ktime(SROCE_SQ_HANDOFF_WAIT_NS),
				      HRTIMER_MODE_REL_PINNED_SOFT);
			queue_work_on(sroce_next_online_cpu(cpu), sroce_data_wq,
				      &qp->req_work);
			put_cpu();
			sroce_qp_count(qp, SROCE_CNT_SQ_HANDOFF);
			return;
		}
	}
	sroce_sq_kick(qp);
	sroce_sq_sent(req, start);
}

/**
 * sroce_sq_handoff_watchdog() - send from here what a worker cannot.
 * @timer: the queue pair's handoff_watchdog, on the poster's CPU
 *
 * The ring is not armed while a worker has the sending, so posts whose
 * worker is kept from its CPU for good (a real-time task, before it
 * began or between its passes) would wait with it. Every
 * SROCE_SQ_HANDOFF_WAIT_NS after a handoff this checks that the
 * requester fetched or sent something. If not, and req_work is still
 * queued or running, the worker is stalled: one not yet begun comes to
 * this CPU, where the poster ran a moment ago (one preempted between
 * passes stays with its CPU), and a budget is sent from here; with more
 * left the ring is armed, so that the poster's next post rings and its
 * doorbell sends inline. With nothing sent and no worker, the stream
 * ended or waits for ACKs: the watch ends.
 * Context: softirq (hrtimer).
 * Return: HRTIMER_NORESTART (it restarts itself while the watch lasts).
 */
enum hrtimer_restart sroce_sq_handoff_watchdog(struct hrtimer *timer)
{
	struct sroce_qp *qp = container_of(timer, struct sroce_qp,
					   handoff_watchdog);
	struct sroce_req *req = &qp->req;
	u64 mark = sroce_sq_handoff_mark(req);

	/* Signed: a new handoff on another CPU may have stamped it. */
	if (mark != READ_ONCE(req->handoff_mark) ||
	    (s64)(local_clock() - READ_ONCE(req->handoff_ns)) <
	    SROCE_SQ_HANDOFF_WAIT_NS) {
		WRITE_ONCE(req->handoff_mark, mark);
		goto again;
	}
	if (!work_busy(&qp->req_work))
		return HRTIMER_NORESTART;
	sroce_qp_count(qp, SROCE_CNT_SQ_HANDOFF_LATE);
	WRITE_ONCE(req->handoff_skip, SROCE_SQ_HANDOFF_BACKOFF);
	if (cancel_work(&qp->req_work))
		queue_work_on(smp_processor_id(), sroce_data_wq,
			      &qp->req_work);
	spin_lock(&qp->req_lock);
	if (sroce_sq_progress(qp, SROCE_TX_BUDGET))
		sroce_ring_arm(&qp->sq);
	spin_unlock(&qp->req_lock);
	WRITE_ONCE(req->handoff_mark, sroce_sq_handoff_mark(req));
again:
	/* Not hrtimer_forward_now(): a doorbell may start it meanwhile. */
	hrtimer_start(timer, ns_to_ktime(SROCE_SQ_HANDOFF_WAIT_NS),
		      HRTIMER_MODE_REL_PINNED_SOFT);
	return HRTIMER_NORESTART;
}

/*
 * A work item yields after SROCE_WORK_PASSES: other items of the CPU's
 * pool (other queue pairs) wait while it runs, as a pass never sleeps.
 */
void sroce_sq_work(struct work_struct *work)
{
	struct sroce_qp *qp = container_of(work, struct sroce_qp, req_work);
	u64 start = local_clock();

	if (!sroce_sq_kick_passes(qp, SROCE_WORK_PASSES)) {
		sroce_sq_sent(&qp->req, start);
		return;
	}
	if (qp->dead)
		return;
	/* A kernel consumer's loopback sends run unbound (sroce_kverbs.c). */
	if (rdma_is_kernel_res(&qp->ibqp.res) && qp->path.loopback)
		queue_work(sroce_kernel_wq, &qp->req_work);
	else
		queue_work_on(raw_smp_processor_id(), sroce_data_wq,
			      &qp->req_work);
}

/*
 * The ring goes back to its doorbell: armed if idle, and what is left
 * undone (entries posted meanwhile, a message the window holds, a budget
 * used up) goes to req_work, which ends in sroce_sq_next_ready(). Out of
 * RTS the flush arms the ring; RTS again kicks the QP.
 * Context: req_lock held.
 */
static void sroce_sq_poll_hand_back(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;

	lockdep_assert_held(&qp->req_lock);
	if (sroce_qp_state(qp) == IB_QPS_RTS && !qp->dead &&
	    (req->next != req->fetched ||
	     !sroce_ring_idle(&qp->sq, req->fetched)))
		queue_work(sroce_data_wq, &qp->req_work);
}

/*
 * End a poll session, the ring back to its doorbell (hand_back()).
 * Context: req_lock held.
 */
static void sroce_sq_poll_stop(struct sroce_qp *qp, bool fruitful,
			       bool yielded)
{
	struct sroce_req *req = &qp->req;

	lockdep_assert_held(&qp->req_lock);
	if (!req->polling)	/* ended meanwhile */
		return;
	if (yielded)
		sroce_qp_count(qp, SROCE_CNT_SQ_POLL_YIELD);
	sroce_sq_poll_hand_back(qp);
	sroce_sq_poll_end(qp, fruitful, yielded);
}

/**
 * sroce_sq_poll_watchdog() - end a session whose poller does not run.
 * @timer: the queue pair's poll_watchdog
 *
 * The poller is queued on another CPU and may be kept from it (a
 * real-time task, preemption mid-loop) while the ring, unarmed, collects
 * posts nobody sends. Every SROCE_SQ_POLL_WATCHDOG_NS this checks that
 * the poller looked at a ring since (any ring: it looks at all in
 * turn); if not, the session ends as a fruitless yield.
 * Context: softirq (hrtimer).
 * Return: HRTIMER_RESTART while the session goes on.
 */
enum hrtimer_restart sroce_sq_poll_watchdog(struct hrtimer *timer)
{
	struct sroce_qp *qp = container_of(timer, struct sroce_qp,
					   poll_watchdog);
	const ktime_t period = ns_to_ktime(SROCE_SQ_POLL_WATCHDOG_NS);
	enum hrtimer_restart ret = HRTIMER_NORESTART;
	struct sroce_sq_poller *p;
	bool in_pass;
	s64 quiet;

	spin_lock(&qp->req_lock);
	/* A new session started it again while this one waited for the lock. */
	if (hrtimer_is_queued(timer))
		goto out;
	if (qp->req.polling) {
		p = qp->req.poller;
		in_pass = READ_ONCE(p->in_pass);
		/* The flag first: a pass's end writes the beat before it. */
		smp_rmb();
		/* Signed: the beat may come from another CPU's clock. */
		quiet = local_clock() - READ_ONCE(p->beat);
		if (quiet > (in_pass ? SROCE_SQ_POLL_PASS_MAX_NS :
			     SROCE_SQ_POLL_WATCHDOG_NS)) {
			sroce_sq_poll_stop(qp, false, true);
		} else {
			hrtimer_forward_now(timer, period);
			ret = HRTIMER_RESTART;
		}
	}
out:
	spin_unlock(&qp->req_lock);
	return ret;
}

/* The poller has its CPU: take the ring over from the doorbell. */
static bool sroce_sq_poll_watch(struct sroce_qp *qp)
{
	bool on;

	spin_lock_bh(&qp->req_lock);
	on = qp->req.polling && sroce_qp_state(qp) == IB_QPS_RTS;
	if (on) {
		qp->req.poll_watching = true;
		/* Posts from now on are ours to see; earlier ones rang. */
		sroce_ring_disarm(&qp->sq);
	}
	spin_unlock_bh(&qp->req_lock);
	return on;
}

/* The poller's look at one ring ends the QP's session. */
static void sroce_sq_poll_leave(struct sroce_qp *qp, bool yielded)
{
	spin_lock_bh(&qp->req_lock);
	sroce_sq_poll_stop(qp, qp->req.poll_fruitful, yielded);
	spin_unlock_bh(&qp->req_lock);
}

/*
 * Send what @qp has posted, and end its session when no ring on the list
 * has had posts for @limit_ns, the QP waits for something other than
 * posts (a closed window, an RNR wait, which ACKs and timers resume), or
 * it left RTS. While posts come to any ring, all stay: a thread that
 * posts to many QPs in turn comes back to each one as many times less
 * often. The session's poll_* fields are this poller's while it looks
 * (@p->cur).
 */
static void sroce_sq_poll_look(struct sroce_sq_poller *p, struct sroce_qp *qp,
			       u64 limit_ns)
{
	struct sroce_req *req = &qp->req;
	bool took = false;
	u32 fetched;
	u64 now;

	if (!READ_ONCE(req->polling) || sroce_qp_state(qp) != IB_QPS_RTS)
		goto leave;
	if (!READ_ONCE(req->poll_watching)) {
		if (!sroce_sq_poll_watch(qp))
			goto leave;
		/* The idle time counts from the takeover, not the join. */
		p->last_ns = local_clock();
	}
	fetched = READ_ONCE(req->fetched);
	if (req->poll_more || (READ_ONCE(qp->sq.hdr->prod) != fetched &&
			       READ_ONCE(req->next) == fetched)) {
		/* A pass may outlast the watchdog; it cannot stall. */
		local_bh_disable();
		WRITE_ONCE(p->beat, local_clock());
		WRITE_ONCE(p->in_pass, true);
		req->poll_more = sroce_sq_kick_passes(qp, 1);
		WRITE_ONCE(p->beat, local_clock());
		/* The beat before the flag: the watchdog's smp_rmb(). */
		smp_wmb();
		WRITE_ONCE(p->in_pass, false);
		took = READ_ONCE(req->fetched) != fetched;
		/*
		 * Here, not at the session's end, and before BH is on
		 * again: the watchdog may end a session that took posts
		 * as one that did not.
		 */
		if (took)
			WRITE_ONCE(req->poll_fruit_ns, local_clock());
		local_bh_enable();
		/* The RNR timer, not the poller, sends them. */
		if (!took && READ_ONCE(req->rnr_wait))
			goto leave;
		if (took) {
			sroce_qp_count(qp, SROCE_CNT_SQ_POLLED);
			req->poll_fruitful = true;
		}
	}
	now = local_clock();
	WRITE_ONCE(p->beat, now);
	if (took)
		p->last_ns = now;
	if (!req->poll_more &&
	    (READ_ONCE(req->next) != READ_ONCE(req->fetched) ||
	     now - p->last_ns > limit_ns))
		goto leave;
	return;
leave:
	sroce_sq_poll_leave(qp, false);
}

/*
 * Hand @qp's ring back to its doorbell (hand_back()) while the poller
 * lets another task have its CPU; the session stays, and the poller takes
 * the ring over again when it is back.
 */
static void sroce_sq_poll_unwatch(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;

	spin_lock_bh(&qp->req_lock);
	if (req->polling && req->poll_watching) {
		req->poll_watching = false;
		req->poll_more = false;
		sroce_sq_poll_hand_back(qp);
	}
	spin_unlock_bh(&qp->req_lock);
}

/*
 * The QP to look at next, rotated to the list's end, or NULL when the
 * list is empty: the poller stops (a join queues it again).
 */
static struct sroce_qp *sroce_sq_poller_next(struct sroce_sq_poller *p)
{
	struct sroce_qp *qp;

	spin_lock_bh(&p->lock);
	qp = list_first_entry_or_null(&p->qps, struct sroce_qp, req.poll_node);
	if (qp) {
		list_move_tail(&qp->req.poll_node, &p->qps);
	} else {
		p->running = false;
		p->paused = false;
	}
	p->cur = qp;
	spin_unlock_bh(&p->lock);
	return qp;
}

/* Done with @qp; its canceller may go on once its session has ended. */
static void sroce_sq_poller_done(struct sroce_sq_poller *p,
				 struct sroce_qp *qp)
{
	bool ended;

	spin_lock_bh(&p->lock);
	/* @qp may be freed as soon as cur moves on: decide before. */
	ended = list_empty(&qp->req.poll_node);
	p->cur = NULL;
	spin_unlock_bh(&p->lock);
	if (ended) {
		/* cur's store before the waiter's check: wake_up_var(). */
		smp_mb();
		wake_up_var(&p->cur);
	}
}

/*
 * Step aside for a moment: hand every ring on the list back to its
 * doorbell (@qp, which the poller holds, first), then run again after
 * what wants the CPU. Every QP on the list now was there at the start
 * or joined behind those, so as many looks as it held reach them all.
 */
static void sroce_sq_poller_pause(struct sroce_sq_poller *p,
				  struct sroce_qp *qp)
{
	/* One more: @qp's session may have ended since, leaving the count. */
	u32 left = READ_ONCE(p->nr) + 1;

	do {
		sroce_sq_poll_unwatch(qp);
		sroce_sq_poller_done(p, qp);
		if (!--left)
			break;
		qp = sroce_sq_poller_next(p);
	} while (qp);
	/* A list found empty stopped the poller; a join starts it afresh. */
	if (!qp)
		return;
	p->paused = true;
	queue_work_on(p->cpu, sroce_poll_wq, &p->work);
}

/**
 * sroce_sq_poller_work() - send what users post without doorbells.
 * @work: a CPU's sroce_sq_poller
 *
 * Looks at the rings on its list in turn, while its CPU has nothing else
 * to run: as soon as another task wants the CPU it ends every session (on
 * a busy machine a doorbell costs less than the time the poller would
 * take from others). A look that finds posts sends one budgeted pass, so
 * that a QP with much to send does not hold up the others.
 */
static void sroce_sq_poller_work(struct work_struct *work)
{
	struct sroce_sq_poller *p = container_of(work, struct sroce_sq_poller,
						 work);
	u64 limit_ns;
	struct sroce_qp *qp;

	while ((qp = sroce_sq_poller_next(p))) {
		/*
		 * First thing, even before a ring's first look: posts found
		 * on a CPU that another task wanted waited for the poller,
		 * and would have fared better with a doorbell. The first
		 * time, the rings go back to their doorbells and the poller
		 * steps aside (a work item of the data path, woken on this
		 * CPU, runs for a moment); if the CPU is still wanted when
		 * it is back, another task needs it: the sessions end.
		 */
		if (need_resched() || !single_task_running()) {
			if (p->paused) {
				sroce_sq_poll_leave(qp, true);
			} else {
				sroce_sq_poller_pause(p, qp);
				return;
			}
		} else {
			p->paused = false;
			/*
			 * A thread that posts to n QPs in turn takes about n
			 * times as long to come round: so does the window,
			 * up to the parameter's own limit.
			 */
			limit_ns = min_t(u64, (u64)READ_ONCE(sq_poll_us) *
					 READ_ONCE(p->nr),
					 SROCE_SQ_POLL_MAX_US) * NSEC_PER_USEC;
			sroce_sq_poll_look(p, qp, limit_ns);
		}
		sroce_sq_poller_done(p, qp);
		cpu_relax();
	}
}

/**
 * sroce_sq_poll_cancel() - end the poll session and wait for its poller.
 * @qp: the queue pair, dead or about to be reset
 *
 * The ring's doorbell is left unarmed: a reset arms it, a dead QP has none.
 * Afterwards no poller looks at @qp, and no session starts until the
 * reset (sroce_sq_reset()).
 */
void sroce_sq_poll_cancel(struct sroce_qp *qp)
{
	struct sroce_sq_poller *p;

	spin_lock_bh(&qp->req_lock);
	/* An ACK would otherwise start another until the reset (or ever). */
	qp->req.poll_barred = true;
	if (qp->req.polling)
		sroce_sq_poll_end(qp, true, false);
	/* Only the last session's poller may still look (poll_start()). */
	p = qp->req.poller;
	spin_unlock_bh(&qp->req_lock);
	hrtimer_cancel(&qp->poll_watchdog);
	if (p)
		wait_var_event(&p->cur, READ_ONCE(p->cur) != qp);
}

/**
 * sroce_sq_reset() - discard whatever is posted (a move to RESET).
 * @qp: the queue pair
 *
 * The send queue starts idle: the first post rings.
 * Context: req_lock held.
 */
void sroce_sq_reset(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;

	lockdep_assert_held(&qp->req_lock);
	/* The quiesce barred polling (sroce_sq_poll_cancel()) until now. */
	if (req->polling)
		sroce_sq_poll_end(qp, true, false);
	req->poll_barred = false;
	req->head = sroce_ring_discard(&qp->sq);
	req->fetched = req->head;
	req->next = req->head;
	req->started = req->head;
	sroce_ring_arm(&qp->sq);
}

/**
 * sroce_sq_flush() - complete every outstanding and posted send WQE.
 * @qp: queue pair in the error state
 *
 * In the error state every WQE completes, signaled or not, with a flush
 * error. Entries never copied are read from the ring for their wr_id.
 * Context: req_lock held.
 */
void sroce_sq_flush(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;
	const struct sroce_send_wqe *src;
	int avail;
	u32 op;
	u64 wr_id;

	lockdep_assert_held(&qp->req_lock);
	/* Ask for doorbells first, so a WQE posted after prod is read rings. */
	sroce_ring_arm(&qp->sq);
	while (req->head != req->fetched)
		sroce_sq_complete(qp, IB_WC_WR_FLUSH_ERR);
	/* A broken ring has nothing more to flush: the QP failed already. */
	avail = sroce_ring_avail(&qp->sq, req->head, req->head);
	for (; avail > 0; avail--) {
		src = sroce_ring_entry(&qp->sq, req->head);
		wr_id = READ_ONCE(src->wr_id);
		op = READ_ONCE(src->opcode);
		/* The slot is read; free it before completing it. */
		sroce_ring_release(&qp->sq, ++req->head);
		sroce_sq_post_cqe(qp, wr_id, op, 0, IB_WC_WR_FLUSH_ERR);
	}
	req->fetched = req->head;
	req->next = req->head;
	req->started = req->head;
	req->off = 0;
	req->rd_pending = 0;
	req->una = req->psn;
}

/**
 * sroce_sq_create() - a send queue: its ring and the kernel's WQE copies.
 * @qp: the queue pair being created
 * @num_wr: WQEs asked for (the ring rounds up)
 * @wqe_size: bytes per WQE, a power of two
 * @uctx: the user context, NULL for a kernel QP
 *
 * Memory a user makes the kernel keep is charged to the user.
 * Return: 0 or -ENOMEM.
 */
int sroce_sq_create(struct sroce_qp *qp, u32 num_wr, u32 wqe_size,
		    struct ib_ucontext *uctx)
{
	int err;

	err = sroce_ring_alloc(&qp->sq, max_t(u32, num_wr, 1), wqe_size, uctx);
	if (err)
		return err;
	qp->req.shadow = kvcalloc(qp->sq.num_entries, qp->sq.entry_size,
				  GFP_KERNEL_ACCOUNT);
	qp->req.st = kvcalloc(qp->sq.num_entries, sizeof(*qp->req.st),
			      GFP_KERNEL_ACCOUNT);
	if (!qp->req.shadow || !qp->req.st) {
		sroce_sq_destroy(qp);
		return -ENOMEM;
	}
	/* The kernel side starts idle: the first post rings. */
	sroce_ring_arm(&qp->sq);
	return 0;
}

/* Free what sroce_sq_create() allocated; the QP is quiesced. */
void sroce_sq_destroy(struct sroce_qp *qp)
{
	kvfree(qp->req.shadow);
	kvfree(qp->req.st);
	qp->req.shadow = NULL;
	qp->req.st = NULL;
	sroce_ring_free(&qp->sq);
}
