// SPDX-License-Identifier: GPL-2.0
/*
 * sroce kernel-verbs selftest: a kernel consumer of an sroce device.
 *
 * Loading the module runs the tests once and reports them in the kernel
 * log as "sroce_kverbs_test: ok|not ok N name"; the load fails with -EIO
 * when a test failed, so insmod's status is the verdict (on success the
 * module stays loaded, with nothing left to do, until rmmod). Two RC QPs, one
 * on "ibdev" and one on "peer" (the same device by default: loopback),
 * move data between kmalloc buffers the way ULPs do: DMA-mapped with
 * ib_dma_map_single(), addressed through the local DMA lkey and the PD's
 * global rkey (a DMA MR), completions through ib_alloc_cq() and ib_cqe.
 */
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/kprobes.h>
#include <linux/delay.h>
#include <linux/workqueue.h>
#include <linux/completion.h>
#include <linux/etherdevice.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_cache.h>

static char *ibdev = "sroce0";
module_param(ibdev, charp, 0444);
MODULE_PARM_DESC(ibdev, "RDMA device of the first QP");
static char *peer;
module_param(peer, charp, 0444);
MODULE_PARM_DESC(peer, "RDMA device of the second QP (default: ibdev)");

#define KT_BUF		(64 * 1024)
#define KT_NBUF		4
#define KT_TIMEOUT	(10 * HZ)
#define KT_SQ_DEPTH	64

/* One completion the test waits for. */
struct kt_wait {
	struct ib_cqe cqe;
	struct completion done;
	struct ib_wc wc;
};

struct kt_side {
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	const struct ib_gid_attr *gid;
	u8 mac[ETH_ALEN];
	void *buf[KT_NBUF];
	u64 dma[KT_NBUF];
};

static struct kt_side kt_a, kt_b;
/*
 * Static, not on the stack: a completion that arrives after its test gave
 * up waiting must not write into a dead stack frame.
 */
static struct kt_wait kt_send_wait, kt_recv_wait;
static int kt_num, kt_failed;

#define kt_expect(cond, fmt, ...)					\
	({								\
		bool __ok = (cond);					\
		if (!__ok)						\
			pr_err("sroce_kverbs_test: %s: " fmt "\n",	\
			       __func__, ##__VA_ARGS__);		\
		__ok;							\
	})

static void kt_report(const char *name, bool ok)
{
	kt_num++;
	if (!ok)
		kt_failed++;
	pr_info("sroce_kverbs_test: %s %d %s\n", ok ? "ok" : "not ok",
		kt_num, name);
}

static void kt_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kt_wait *w = container_of(wc->wr_cqe, struct kt_wait, cqe);

	w->wc = *wc;
	complete(&w->done);
}

/* Unsignaled requests carry one too: a flush completes them all. */
static void kt_ignore_done(struct ib_cq *cq, struct ib_wc *wc)
{
}

static struct ib_cqe kt_ignore = { .done = kt_ignore_done };

static void kt_wait_init(struct kt_wait *w)
{
	w->cqe.done = kt_done;
	init_completion(&w->done);
	memset(&w->wc, 0, sizeof(w->wc));
	w->wc.status = -1;
}

static bool kt_wait_for(struct kt_wait *w)
{
	return kt_expect(wait_for_completion_timeout(&w->done, KT_TIMEOUT),
			 "no completion within %d s", KT_TIMEOUT / HZ);
}

/* A RoCEv2 GID of the port with an IPv4 address. */
static const struct ib_gid_attr *kt_find_gid(struct ib_device *dev)
{
	const struct ib_gid_attr *attr;
	struct ib_port_attr pa;
	int i;

	if (ib_query_port(dev, 1, &pa))
		return NULL;
	for (i = 0; i < pa.gid_tbl_len; i++) {
		attr = rdma_get_gid_attr(dev, 1, i);
		if (IS_ERR(attr))
			continue;
		if (attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP &&
		    ipv6_addr_v4mapped((struct in6_addr *)attr->gid.raw))
			return attr;
		rdma_put_gid_attr(attr);
	}
	return NULL;
}

static int kt_side_init(struct kt_side *s, const char *name)
{
	struct ib_qp_init_attr init = {};
	struct net_device *ndev;
	int i;

	s->dev = ib_device_get_by_name(name, RDMA_DRIVER_UNKNOWN);
	if (!s->dev) {
		pr_err("sroce_kverbs_test: no RDMA device %s\n", name);
		return -ENODEV;
	}
	s->gid = kt_find_gid(s->dev);
	if (!s->gid) {
		pr_err("sroce_kverbs_test: %s has no IPv4 RoCEv2 GID\n", name);
		return -ENODEV;
	}
	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(s->gid);
	if (!IS_ERR(ndev))
		ether_addr_copy(s->mac, ndev->dev_addr);
	rcu_read_unlock();
	if (IS_ERR(ndev))
		return PTR_ERR(ndev);

	/* The global rkey comes from a DMA MR (get_dma_mr). */
	s->pd = ib_alloc_pd(s->dev, IB_PD_UNSAFE_GLOBAL_RKEY);
	if (IS_ERR(s->pd)) {
		pr_err("sroce_kverbs_test: ib_alloc_pd: %ld\n", PTR_ERR(s->pd));
		return PTR_ERR(s->pd);
	}
	s->cq = ib_alloc_cq(s->dev, s, 2 * KT_SQ_DEPTH, 0, IB_POLL_SOFTIRQ);
	if (IS_ERR(s->cq)) {
		pr_err("sroce_kverbs_test: ib_alloc_cq: %ld\n", PTR_ERR(s->cq));
		return PTR_ERR(s->cq);
	}
	init.qp_type = IB_QPT_RC;
	init.send_cq = s->cq;
	init.recv_cq = s->cq;
	init.sq_sig_type = IB_SIGNAL_REQ_WR;
	init.cap.max_send_wr = KT_SQ_DEPTH;
	init.cap.max_recv_wr = KT_SQ_DEPTH;
	init.cap.max_send_sge = KT_NBUF;
	init.cap.max_recv_sge = KT_NBUF;
	init.cap.max_inline_data = 64;
	s->qp = ib_create_qp(s->pd, &init);
	if (IS_ERR(s->qp)) {
		pr_err("sroce_kverbs_test: ib_create_qp: %ld\n", PTR_ERR(s->qp));
		return PTR_ERR(s->qp);
	}
	for (i = 0; i < KT_NBUF; i++) {
		s->buf[i] = kzalloc(KT_BUF, GFP_KERNEL);
		if (!s->buf[i])
			return -ENOMEM;
		s->dma[i] = ib_dma_map_single(s->dev, s->buf[i], KT_BUF,
					      DMA_BIDIRECTIONAL);
		if (ib_dma_mapping_error(s->dev, s->dma[i])) {
			kfree(s->buf[i]);
			s->buf[i] = NULL;
			return -ENOMEM;
		}
	}
	return 0;
}

static void kt_side_fini(struct kt_side *s)
{
	int i;

	for (i = 0; i < KT_NBUF; i++) {
		if (!s->buf[i])
			continue;
		ib_dma_unmap_single(s->dev, s->dma[i], KT_BUF,
				    DMA_BIDIRECTIONAL);
		kfree(s->buf[i]);
	}
	if (!IS_ERR_OR_NULL(s->qp))
		ib_destroy_qp(s->qp);
	if (!IS_ERR_OR_NULL(s->cq))
		ib_free_cq(s->cq);
	if (!IS_ERR_OR_NULL(s->pd))
		ib_dealloc_pd(s->pd);
	if (s->gid)
		rdma_put_gid_attr(s->gid);
	if (s->dev)
		ib_device_put(s->dev);
	memset(s, 0, sizeof(*s));
}

static int kt_connect(struct kt_side *s, struct kt_side *d, u32 sq_psn,
		      u32 rq_psn)
{
	union ib_gid dgid = d->gid->gid;
	struct ib_qp_attr a = {};
	int err;

	a.qp_state = IB_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = 1;
	a.qp_access_flags = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ |
			    IB_ACCESS_REMOTE_ATOMIC;
	err = ib_modify_qp(s->qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (err) {
		pr_err("sroce_kverbs_test: modify to INIT: %d\n", err);
		return err;
	}

	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTR;
	a.path_mtu = IB_MTU_1024;
	a.dest_qp_num = d->qp->qp_num;
	a.rq_psn = rq_psn;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	a.ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&a.ah_attr, 1);
	rdma_ah_set_grh(&a.ah_attr, &dgid, 0, s->gid->index, 64, 0);
	/* Kernel consumers hand over a resolved destination MAC. */
	memcpy(a.ah_attr.roce.dmac, d->mac, ETH_ALEN);
	err = ib_modify_qp(s->qp, &a, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			   IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (err) {
		pr_err("sroce_kverbs_test: modify to RTR: %d\n", err);
		return err;
	}

	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTS;
	a.timeout = 10;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = sq_psn;
	a.max_rd_atomic = 4;
	err = ib_modify_qp(s->qp, &a, IB_QP_STATE | IB_QP_TIMEOUT |
			   IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
			   IB_QP_MAX_QP_RD_ATOMIC);
	if (err)
		pr_err("sroce_kverbs_test: modify to RTS: %d\n", err);
	return err;
}

static void kt_fill(void *buf, size_t len, u8 seed)
{
	u8 *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (u8)(seed + i * 7 + (i >> 9));
}

static int kt_post_recv(struct kt_side *s, struct kt_wait *w, int nsge,
			u32 len)
{
	struct ib_sge sge[KT_NBUF];
	struct ib_recv_wr wr = {};
	const struct ib_recv_wr *bad;
	int i;

	for (i = 0; i < nsge; i++) {
		sge[i].addr = s->dma[i];
		sge[i].length = len;
		sge[i].lkey = s->pd->local_dma_lkey;
	}
	kt_wait_init(w);
	wr.wr_cqe = &w->cqe;
	wr.sg_list = sge;
	wr.num_sge = nsge;
	return ib_post_recv(s->qp, &wr, &bad);
}

/* Post one signaled work request on @s and wait for its completion. */
static bool kt_run_on(struct kt_side *s, struct ib_send_wr *wr,
		      struct kt_wait *w)
{
	const struct ib_send_wr *bad;
	int err;

	kt_wait_init(w);
	wr->wr_cqe = &w->cqe;
	wr->send_flags |= IB_SEND_SIGNALED;
	err = ib_post_send(s->qp, wr, &bad);
	if (!kt_expect(!err, "ib_post_send: %d", err))
		return false;
	return kt_wait_for(w);
}

static bool kt_run(struct ib_send_wr *wr, struct kt_wait *w)
{
	return kt_run_on(&kt_a, wr, w);
}

static bool kt_wc_ok(struct kt_wait *w, enum ib_wc_opcode op, u32 len,
		     struct ib_qp *qp)
{
	return kt_expect(w->wc.status == IB_WC_SUCCESS, "status %d (%s)",
			 w->wc.status, ib_wc_status_msg(w->wc.status)) &&
	       kt_expect(w->wc.opcode == op, "opcode %d, want %d",
			 w->wc.opcode, op) &&
	       kt_expect(op & IB_WC_RECV ? w->wc.byte_len == len : true,
			 "byte_len %u, want %u", w->wc.byte_len, len) &&
	       kt_expect(w->wc.qp == qp, "completion names another QP");
}

/* SEND of two SGEs into a receive of two SGEs, with the local DMA lkey. */
static bool kt_send_multi_sge(void)
{
	struct kt_wait *sw = &kt_send_wait, *rw = &kt_recv_wait;
	struct ib_sge sge[2];
	struct ib_send_wr wr = { .opcode = IB_WR_SEND_WITH_IMM };
	u32 len = 3000;

	kt_fill(kt_a.buf[0], len, 1);
	kt_fill(kt_a.buf[1], len, 2);
	memset(kt_b.buf[0], 0, KT_BUF);
	memset(kt_b.buf[1], 0, KT_BUF);
	if (!kt_expect(!kt_post_recv(&kt_b, rw, 2, len), "post_recv"))
		return false;
	sge[0] = (struct ib_sge){ kt_a.dma[0], len, kt_a.pd->local_dma_lkey };
	sge[1] = (struct ib_sge){ kt_a.dma[1], len, kt_a.pd->local_dma_lkey };
	wr.sg_list = sge;
	wr.num_sge = 2;
	wr.ex.imm_data = cpu_to_be32(0x5eed1234);
	if (!kt_run(&wr, sw) || !kt_wait_for(rw))
		return false;
	return kt_wc_ok(sw, IB_WC_SEND, 0, kt_a.qp) &&
	       kt_wc_ok(rw, IB_WC_RECV, 2 * len, kt_b.qp) &&
	       kt_expect(rw->wc.wc_flags & IB_WC_WITH_IMM, "no immediate") &&
	       kt_expect(rw->wc.ex.imm_data == cpu_to_be32(0x5eed1234),
			 "immediate %08x", be32_to_cpu(rw->wc.ex.imm_data)) &&
	       kt_expect(!memcmp(kt_a.buf[0], kt_b.buf[0], len) &&
			 !memcmp(kt_a.buf[1], kt_b.buf[1], len),
			 "received data differs");
}

/* Inline data comes from a kernel virtual address, here the stack. */
static bool kt_send_inline(void)
{
	char msg[48] = "inline from a kernel stack buffer";
	struct ib_sge sge = { (uintptr_t)msg, sizeof(msg), 0 };
	struct ib_send_wr wr = { .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_INLINE };
	struct kt_wait *sw = &kt_send_wait, *rw = &kt_recv_wait;

	memset(kt_b.buf[0], 0, sizeof(msg));
	if (!kt_expect(!kt_post_recv(&kt_b, rw, 1, KT_BUF), "post_recv"))
		return false;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	if (!kt_run(&wr, sw) || !kt_wait_for(rw))
		return false;
	return kt_wc_ok(sw, IB_WC_SEND, 0, kt_a.qp) &&
	       kt_wc_ok(rw, IB_WC_RECV, sizeof(msg), kt_b.qp) &&
	       kt_expect(!memcmp(kt_b.buf[0], msg, sizeof(msg)),
			 "received data differs");
}

/*
 * RDMA WRITE of 4 x 64 KiB through the peer's global rkey (its DMA MR),
 * then READ it back into other buffers and compare.
 */
static bool kt_write_read_global_rkey(void)
{
	struct ib_rdma_wr wr = {};
	struct ib_sge sge[KT_NBUF];
	struct kt_wait *w = &kt_send_wait;
	int i;

	for (i = 0; i < KT_NBUF; i++) {
		kt_fill(kt_a.buf[i], KT_BUF, 10 + i);
		memset(kt_b.buf[i], 0, KT_BUF);
		sge[i] = (struct ib_sge){ kt_a.dma[i], KT_BUF,
					  kt_a.pd->local_dma_lkey };
	}
	/* The peer's buffers are separate allocations: one WRITE each. */
	for (i = 0; i < KT_NBUF; i++) {
		memset(&wr, 0, sizeof(wr));
		wr.wr.opcode = IB_WR_RDMA_WRITE;
		wr.wr.sg_list = &sge[i];
		wr.wr.num_sge = 1;
		wr.remote_addr = kt_b.dma[i];
		wr.rkey = kt_b.pd->unsafe_global_rkey;
		if (!kt_run(&wr.wr, w) ||
		    !kt_wc_ok(w, IB_WC_RDMA_WRITE, 0, kt_a.qp))
			return false;
	}
	for (i = 0; i < KT_NBUF; i++)
		if (!kt_expect(!memcmp(kt_a.buf[i], kt_b.buf[i], KT_BUF),
			       "written data differs in buffer %d", i))
			return false;

	for (i = 0; i < KT_NBUF; i++) {
		kt_fill(kt_b.buf[i], KT_BUF, 50 + i);
		memset(kt_a.buf[i], 0, KT_BUF);
		memset(&wr, 0, sizeof(wr));
		wr.wr.opcode = IB_WR_RDMA_READ;
		wr.wr.sg_list = &sge[i];
		wr.wr.num_sge = 1;
		wr.remote_addr = kt_b.dma[i];
		wr.rkey = kt_b.pd->unsafe_global_rkey;
		if (!kt_run(&wr.wr, w) ||
		    !kt_wc_ok(w, IB_WC_RDMA_READ, 0, kt_a.qp) ||
		    !kt_expect(!memcmp(kt_a.buf[i], kt_b.buf[i], KT_BUF),
			       "read data differs in buffer %d", i))
			return false;
	}
	return true;
}

static bool kt_write_imm(void)
{
	struct ib_rdma_wr wr = {};
	struct ib_sge sge = { kt_a.dma[0], 777, kt_a.pd->local_dma_lkey };
	struct kt_wait *sw = &kt_send_wait, *rw = &kt_recv_wait;

	kt_fill(kt_a.buf[0], 777, 99);
	memset(kt_b.buf[2], 0, 1024);
	if (!kt_expect(!kt_post_recv(&kt_b, rw, 0, 0), "post_recv"))
		return false;
	wr.wr.opcode = IB_WR_RDMA_WRITE_WITH_IMM;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.wr.ex.imm_data = cpu_to_be32(0xabcdef01);
	wr.remote_addr = kt_b.dma[2] + 13;
	wr.rkey = kt_b.pd->unsafe_global_rkey;
	if (!kt_run(&wr.wr, sw) || !kt_wait_for(rw))
		return false;
	return kt_wc_ok(sw, IB_WC_RDMA_WRITE, 0, kt_a.qp) &&
	       kt_wc_ok(rw, IB_WC_RECV_RDMA_WITH_IMM, 777, kt_b.qp) &&
	       kt_expect(rw->wc.ex.imm_data == cpu_to_be32(0xabcdef01),
			 "immediate %08x", be32_to_cpu(rw->wc.ex.imm_data)) &&
	       kt_expect(!memcmp(kt_a.buf[0], kt_b.buf[2] + 13, 777),
			 "written data differs");
}

/*
 * The global rkey grants remote read and write only (ib_alloc_pd()): an
 * atomic through it is a remote access error and leaves the target alone.
 */
static bool kt_atomic_needs_right(void)
{
	u64 *target = kt_b.buf[3];
	struct ib_sge sge = { kt_a.dma[3], 8, kt_a.pd->local_dma_lkey };
	struct kt_wait *w = &kt_send_wait;
	struct ib_atomic_wr wr = {};

	*target = 1000;
	wr.wr.opcode = IB_WR_ATOMIC_FETCH_AND_ADD;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.remote_addr = kt_b.dma[3];
	wr.rkey = kt_b.pd->unsafe_global_rkey;
	wr.compare_add = 234;
	return kt_run(&wr.wr, w) &&
	       kt_expect(w->wc.status == IB_WC_REM_ACCESS_ERR,
			 "status %d (%s), want remote access error",
			 w->wc.status, ib_wc_status_msg(w->wc.status)) &&
	       kt_expect(*target == 1000, "target changed to %llu", *target);
}

/*
 * A batch of unsignaled writes with the last one signaled, posted as one
 * list while interrupts are off: the post must not start sending in that
 * context, and everything must still arrive.
 */
static bool kt_post_irqs_off(void)
{
	static struct ib_rdma_wr wrs[32];
	struct ib_sge sge = { kt_a.dma[0], 2048, kt_a.pd->local_dma_lkey };
	const struct ib_send_wr *bad;
	unsigned long flags;
	struct kt_wait *w = &kt_send_wait;
	int i, err;

	kt_fill(kt_a.buf[0], 2048, 7);
	memset(kt_b.buf[0], 0, KT_BUF);
	for (i = 0; i < ARRAY_SIZE(wrs); i++) {
		memset(&wrs[i], 0, sizeof(wrs[i]));
		wrs[i].wr.opcode = IB_WR_RDMA_WRITE;
		wrs[i].wr.wr_cqe = &kt_ignore;
		wrs[i].wr.sg_list = &sge;
		wrs[i].wr.num_sge = 1;
		wrs[i].wr.next = i + 1 < ARRAY_SIZE(wrs) ? &wrs[i + 1].wr :
							  NULL;
		wrs[i].remote_addr = kt_b.dma[0] + i * 2048;
		wrs[i].rkey = kt_b.pd->unsafe_global_rkey;
	}
	kt_wait_init(w);
	wrs[ARRAY_SIZE(wrs) - 1].wr.wr_cqe = &w->cqe;
	wrs[ARRAY_SIZE(wrs) - 1].wr.send_flags = IB_SEND_SIGNALED;
	local_irq_save(flags);
	err = ib_post_send(kt_a.qp, &wrs[0].wr, &bad);
	local_irq_restore(flags);
	if (!kt_expect(!err, "ib_post_send: %d", err) || !kt_wait_for(w) ||
	    !kt_wc_ok(w, IB_WC_RDMA_WRITE, 0, kt_a.qp))
		return false;
	for (i = 0; i < ARRAY_SIZE(wrs); i++)
		if (!kt_expect(!memcmp(kt_a.buf[0], kt_b.buf[0] + i * 2048,
				       2048), "write %d differs", i))
			return false;
	return true;
}

/* A full send queue refuses the request that does not fit, and only it. */
static bool kt_sq_full(void)
{
	static struct ib_send_wr wrs[KT_SQ_DEPTH + 1];
	const struct ib_send_wr *bad = NULL;
	struct kt_wait *w = &kt_send_wait;
	int i, err;

	/* Zero-length writes: no memory needed, and quick to complete. */
	for (i = 0; i < ARRAY_SIZE(wrs); i++) {
		memset(&wrs[i], 0, sizeof(wrs[i]));
		wrs[i].opcode = IB_WR_RDMA_WRITE;
		wrs[i].wr_cqe = &kt_ignore;
		wrs[i].next = i + 1 < ARRAY_SIZE(wrs) ? &wrs[i + 1] : NULL;
	}
	kt_wait_init(w);
	wrs[KT_SQ_DEPTH - 1].wr_cqe = &w->cqe;
	wrs[KT_SQ_DEPTH - 1].send_flags = IB_SEND_SIGNALED;
	err = ib_post_send(kt_a.qp, &wrs[0], &bad);
	if (!kt_expect(err == -ENOMEM && bad == &wrs[KT_SQ_DEPTH],
		       "post of %d into %d slots: %d, bad at %ld", KT_SQ_DEPTH + 1,
		       KT_SQ_DEPTH, err, bad ? (long)(bad - wrs) : -1L))
		return false;
	return kt_wait_for(w) && kt_wc_ok(w, IB_WC_RDMA_WRITE, 0, kt_a.qp);
}

/* Memory outside the direct map is not addressable through lkey 0. */
static bool kt_bad_address(void)
{
	void *vbuf = vmalloc(PAGE_SIZE);
	struct ib_sge sge = { (uintptr_t)vbuf, 64, kt_a.pd->local_dma_lkey };
	struct ib_rdma_wr wr = {};
	struct kt_wait *w = &kt_send_wait;
	bool ok;

	if (!vbuf)
		return false;
	wr.wr.opcode = IB_WR_RDMA_WRITE;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.remote_addr = kt_b.dma[0];
	wr.rkey = kt_b.pd->unsafe_global_rkey;
	ok = kt_run(&wr.wr, w) &&
	     kt_expect(w->wc.status == IB_WC_LOC_PROT_ERR,
		       "status %d (%s), want local protection error",
		       w->wc.status, ib_wc_status_msg(w->wc.status));
	vfree(vbuf);
	return ok;
}

/* A bad rkey: a NAK, a remote access error, and the QPs drain. */
static bool kt_bad_rkey_and_drain(void)
{
	struct ib_sge sge = { kt_a.dma[0], 64, kt_a.pd->local_dma_lkey };
	struct ib_rdma_wr wr = {};
	struct kt_wait *w = &kt_send_wait, *rw = &kt_recv_wait;

	if (!kt_expect(!kt_post_recv(&kt_b, rw, 1, KT_BUF), "post_recv"))
		return false;
	wr.wr.opcode = IB_WR_RDMA_WRITE;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.remote_addr = kt_b.dma[0];
	wr.rkey = kt_b.pd->unsafe_global_rkey ^ 0x80;
	if (!kt_run(&wr.wr, w) ||
	    !kt_expect(w->wc.status == IB_WC_REM_ACCESS_ERR,
		       "status %d (%s), want remote access error",
		       w->wc.status, ib_wc_status_msg(w->wc.status)))
		return false;
	/* The responder failed too: its posted receive is flushed. */
	if (!kt_wait_for(rw) ||
	    !kt_expect(rw->wc.status == IB_WC_WR_FLUSH_ERR,
		       "receive status %d, want flush", rw->wc.status))
		return false;
	/* ib_drain_qp() posts to a QP in error and waits for the flushes. */
	ib_drain_qp(kt_a.qp);
	ib_drain_qp(kt_b.qp);
	return true;
}

static bool kt_reconnect(u32 psn);

/* B's fast-register MR over its buffer 3 (two pages from offset 100). */
static struct ib_mr *kt_frmr;
static struct scatterlist kt_frmr_sg;

/*
 * Register @len bytes of B's buffer 3 from offset @off. A nonzero
 * @iova_high replaces the upper 32 bits of the iova ib_map_mr_sg() chose,
 * as xprtrdma does with each RPC's XID.
 */
static bool kt_frmr_register_at(u8 key, int access, u32 off, u32 len,
				u32 iova_high)
{
	struct kt_wait *w = &kt_send_wait;
	struct ib_reg_wr wr = {};
	int n;

	sg_init_table(&kt_frmr_sg, 1);
	sg_dma_address(&kt_frmr_sg) = kt_b.dma[3] + off;
	sg_dma_len(&kt_frmr_sg) = len;
	n = ib_map_mr_sg(kt_frmr, &kt_frmr_sg, 1, NULL, PAGE_SIZE);
	if (!kt_expect(n == 1, "ib_map_mr_sg: %d", n))
		return false;
	if (iova_high)
		kt_frmr->iova = (kt_frmr->iova & 0xffffffff) |
				(u64)iova_high << 32;
	ib_update_fast_reg_key(kt_frmr, key);
	wr.wr.opcode = IB_WR_REG_MR;
	wr.mr = kt_frmr;
	wr.key = kt_frmr->rkey;
	wr.access = access;
	return kt_run_on(&kt_b, &wr.wr, w) &&
	       kt_expect(w->wc.status == IB_WC_SUCCESS &&
			 w->wc.opcode == IB_WC_REG_MR,
			 "REG_MR: status %d opcode %d", w->wc.status,
			 w->wc.opcode);
}

static bool kt_frmr_register(u8 key, int access)
{
	return kt_frmr_register_at(key, access, 100, 2 * PAGE_SIZE, 0);
}

/*
 * A fast-register MR: WRITE and READ through its rkey at its iova, both
 * atomics (which the global rkey cannot do), then SEND with invalidate
 * from A, after which the rkey is refused.
 */
static bool kt_fast_reg(void)
{
	struct ib_sge sge = { kt_a.dma[0], 2 * PAGE_SIZE,
			      kt_a.pd->local_dma_lkey };
	struct kt_wait *w = &kt_send_wait, *rw = &kt_recv_wait;
	u64 *target = kt_b.buf[3] + 100 + PAGE_SIZE + 4;
	u64 *result = kt_a.buf[1];
	struct ib_atomic_wr awr = {};
	struct ib_rdma_wr wr = {};
	struct ib_send_wr swr = {};
	u32 rkey;

	kt_frmr = ib_alloc_mr(kt_b.pd, IB_MR_TYPE_MEM_REG, 4);
	if (!kt_expect(!IS_ERR(kt_frmr), "ib_alloc_mr: %ld",
		       PTR_ERR(kt_frmr))) {
		kt_frmr = NULL;
		return false;
	}
	if (!kt_frmr_register(0x42, IB_ACCESS_LOCAL_WRITE |
			      IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ |
			      IB_ACCESS_REMOTE_ATOMIC))
		return false;
	rkey = kt_frmr->rkey;
	if (!kt_expect((rkey & 0xff) == 0x42, "rkey %08x", rkey))
		return false;

	kt_fill(kt_a.buf[0], 2 * PAGE_SIZE, 77);
	memset(kt_b.buf[3], 0, KT_BUF);
	wr.wr.opcode = IB_WR_RDMA_WRITE;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.remote_addr = kt_frmr->iova;
	wr.rkey = rkey;
	if (!kt_run(&wr.wr, w) || !kt_wc_ok(w, IB_WC_RDMA_WRITE, 0, kt_a.qp) ||
	    !kt_expect(!memcmp(kt_a.buf[0], kt_b.buf[3] + 100, 2 * PAGE_SIZE),
		       "write through the FRMR differs") ||
	    !kt_expect(!*(u8 *)(kt_b.buf[3] + 99) &&
		       !*(u8 *)(kt_b.buf[3] + 100 + 2 * PAGE_SIZE),
		       "write spilled outside the FRMR"))
		return false;
	memset(kt_a.buf[0], 0, 2 * PAGE_SIZE);
	wr.wr.opcode = IB_WR_RDMA_READ;
	if (!kt_run(&wr.wr, w) || !kt_wc_ok(w, IB_WC_RDMA_READ, 0, kt_a.qp) ||
	    !kt_expect(!memcmp(kt_a.buf[0], kt_b.buf[3] + 100, 2 * PAGE_SIZE),
		       "read through the FRMR differs"))
		return false;
	/* One byte past the region is refused. */
	wr.wr.opcode = IB_WR_RDMA_WRITE;
	wr.remote_addr = kt_frmr->iova + 1;
	if (!kt_run(&wr.wr, w) ||
	    !kt_expect(w->wc.status == IB_WC_REM_ACCESS_ERR,
		       "write past the FRMR: status %d", w->wc.status))
		return false;
	if (!kt_reconnect(0x2000))
		return false;

	*target = 5;
	sge = (struct ib_sge){ kt_a.dma[1], 8, kt_a.pd->local_dma_lkey };
	awr.wr.opcode = IB_WR_ATOMIC_FETCH_AND_ADD;
	awr.wr.sg_list = &sge;
	awr.wr.num_sge = 1;
	awr.remote_addr = kt_frmr->iova + PAGE_SIZE + 4;
	awr.rkey = rkey;
	awr.compare_add = 10;
	if (!kt_run(&awr.wr, w) ||
	    !kt_wc_ok(w, IB_WC_FETCH_ADD, 0, kt_a.qp) ||
	    !kt_expect(*result == 5 && *target == 15,
		       "fetch-add: got %llu, target %llu", *result, *target))
		return false;
	awr.wr.opcode = IB_WR_ATOMIC_CMP_AND_SWP;
	awr.wr.send_flags = 0;
	awr.compare_add = 15;
	awr.swap = 99;
	if (!kt_run(&awr.wr, w) ||
	    !kt_wc_ok(w, IB_WC_COMP_SWAP, 0, kt_a.qp) ||
	    !kt_expect(*result == 15 && *target == 99,
		       "cmp-swap: got %llu, target %llu", *result, *target))
		return false;

	/* SEND with invalidate: B's receive reports it, the rkey dies. */
	if (!kt_expect(!kt_post_recv(&kt_b, rw, 1, KT_BUF), "post_recv"))
		return false;
	swr.opcode = IB_WR_SEND_WITH_INV;
	swr.ex.invalidate_rkey = rkey;
	if (!kt_run(&swr, w) || !kt_wait_for(rw) ||
	    !kt_wc_ok(w, IB_WC_SEND, 0, kt_a.qp) ||
	    !kt_wc_ok(rw, IB_WC_RECV, 0, kt_b.qp) ||
	    !kt_expect(rw->wc.wc_flags & IB_WC_WITH_INVALIDATE,
		       "receive does not report the invalidation") ||
	    !kt_expect(rw->wc.ex.invalidate_rkey == rkey,
		       "invalidated %08x, want %08x",
		       rw->wc.ex.invalidate_rkey, rkey))
		return false;
	sge = (struct ib_sge){ kt_a.dma[0], 64, kt_a.pd->local_dma_lkey };
	wr.remote_addr = kt_frmr->iova;
	return kt_run(&wr.wr, w) &&
	       kt_expect(w->wc.status == IB_WC_REM_ACCESS_ERR,
			 "write after invalidation: status %d", w->wc.status);
}

/* Re-register under a new key, then LOCAL_INV on B: the key is refused. */
static bool kt_local_inv(void)
{
	struct ib_sge sge = { kt_a.dma[0], 64, kt_a.pd->local_dma_lkey };
	struct kt_wait *w = &kt_send_wait;
	struct ib_send_wr iwr = {};
	struct ib_rdma_wr wr = {};

	if (!kt_frmr || !kt_frmr_register(0x43, IB_ACCESS_LOCAL_WRITE |
					  IB_ACCESS_REMOTE_WRITE))
		return false;
	wr.wr.opcode = IB_WR_RDMA_WRITE;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.remote_addr = kt_frmr->iova;
	wr.rkey = kt_frmr->rkey;
	if (!kt_run(&wr.wr, w) || !kt_wc_ok(w, IB_WC_RDMA_WRITE, 0, kt_a.qp))
		return false;
	iwr.opcode = IB_WR_LOCAL_INV;
	iwr.ex.invalidate_rkey = kt_frmr->rkey;
	if (!kt_run_on(&kt_b, &iwr, w) ||
	    !kt_expect(w->wc.status == IB_WC_SUCCESS &&
		       w->wc.opcode == IB_WC_LOCAL_INV,
		       "LOCAL_INV: status %d opcode %d", w->wc.status,
		       w->wc.opcode))
		return false;
	return kt_run(&wr.wr, w) &&
	       kt_expect(w->wc.status == IB_WC_REM_ACCESS_ERR,
			 "write after LOCAL_INV: status %d", w->wc.status);
}

/*
 * Registrations as NFS over RDMA makes them: the iova's upper half is the
 * RPC's XID, not an address, and a region may be a few bytes inside a
 * page. WRITE and READ at that iova reach the right bytes; LOCAL_INV ends
 * each registration.
 */
static bool kt_frmr_iova_as_xprtrdma(void)
{
	static const u32 offs[] = { 0x33c, 100 }, lens[] = { 4, 5000 };
	struct ib_sge sge = { kt_a.dma[0], 0, kt_a.pd->local_dma_lkey };
	struct kt_wait *w = &kt_send_wait;
	struct ib_send_wr iwr = {};
	struct ib_rdma_wr wr = {};
	unsigned int i;

	if (!kt_frmr)
		return false;
	for (i = 0; i < ARRAY_SIZE(offs); i++) {
		if (!kt_frmr_register_at(0x50 + i, IB_ACCESS_LOCAL_WRITE |
					 IB_ACCESS_REMOTE_WRITE |
					 IB_ACCESS_REMOTE_READ, offs[i],
					 lens[i], 0xc0de0000 + i))
			return false;
		if (!kt_expect(kt_frmr->iova >> 32 == 0xc0de0000 + i,
			       "iova %llx", kt_frmr->iova))
			return false;
		kt_fill(kt_a.buf[0], lens[i], 30 + i);
		memset(kt_b.buf[3], 0, KT_BUF);
		sge.length = lens[i];
		wr.wr.opcode = IB_WR_RDMA_WRITE;
		wr.wr.sg_list = &sge;
		wr.wr.num_sge = 1;
		wr.remote_addr = kt_frmr->iova;
		wr.rkey = kt_frmr->rkey;
		if (!kt_run(&wr.wr, w) ||
		    !kt_wc_ok(w, IB_WC_RDMA_WRITE, 0, kt_a.qp) ||
		    !kt_expect(!memcmp(kt_a.buf[0], kt_b.buf[3] + offs[i],
				       lens[i]),
			       "write at an XID iova differs") ||
		    !kt_expect(!*(u8 *)(kt_b.buf[3] + offs[i] - 1) &&
			       !*(u8 *)(kt_b.buf[3] + offs[i] + lens[i]),
			       "write at an XID iova spilled"))
			return false;
		memset(kt_a.buf[0], 0, lens[i]);
		wr.wr.opcode = IB_WR_RDMA_READ;
		if (!kt_run(&wr.wr, w) ||
		    !kt_wc_ok(w, IB_WC_RDMA_READ, 0, kt_a.qp) ||
		    !kt_expect(!memcmp(kt_a.buf[0], kt_b.buf[3] + offs[i],
				       lens[i]),
			       "read at an XID iova differs"))
			return false;
		iwr.opcode = IB_WR_LOCAL_INV;
		iwr.ex.invalidate_rkey = kt_frmr->rkey;
		if (!kt_run_on(&kt_b, &iwr, w) ||
		    !kt_expect(w->wc.status == IB_WC_SUCCESS,
			       "LOCAL_INV: status %d", w->wc.status))
			return false;
	}
	return true;
}

/*
 * Re-registration racing the peer's traffic. Each round B registers its
 * FRMR over buffer 2 at a fixed iova and A streams WRITEs and READs
 * through that rkey from a work item on one CPU, while this thread, on
 * another, posts LOCAL_INV and a REG_MR over buffer 3 at the same iova
 * under a key A never learns. An access that was admitted under the old
 * registration must finish in the old pages: buffer 3 must never see A's
 * bytes, and A's reads must never see buffer 3's. (SEND with invalidate
 * ends a registration through the same code as LOCAL_INV.)
 *
 * A copy takes microseconds, too short a window for a test to hit by
 * chance; kprobes on sroce's two region copy functions hold each copy
 * for KT_RACE_HOLD_US after its access was admitted, and the
 * re-registration is posted as soon as a copy through the FRMR (whose
 * struct begins with its ib_mr) is held, so it lands inside that copy.
 */
#define KT_RACE_ROUNDS	40
#define KT_RACE_WRS	8
#define KT_RACE_LEN	(16 * 1024)
#define KT_RACE_HOLD_US	200
#define KT_RACE_IOVA	0x5a0000000000ull
#define KT_RACE_X	0xa5	/* buffer 2 and A's writes */
#define KT_RACE_Y	0x3c	/* buffer 3: nobody may read or write it */

static struct ib_mr *kt_race_mr;
static u32 kt_race_rkey;	/* the key A uses: the registration of buffer 2 */
static struct work_struct kt_race_work;
static atomic_t kt_race_done;	/* A's requests of this round completed */

static atomic_t kt_race_holds;	/* copies through the FRMR held */

static int kt_race_hold(struct kprobe *p, struct pt_regs *regs)
{
	/* The copy functions take the region first. */
	if ((void *)regs->di != kt_race_mr)
		return 0;
	atomic_inc(&kt_race_holds);
	udelay(KT_RACE_HOLD_US);
	return 0;
}

static struct kprobe kt_race_probes[] = {
	{ .symbol_name = "sroce_mr_copy_to_skb", .pre_handler = kt_race_hold },
	{ .symbol_name = "sroce_mr_copy_from", .pre_handler = kt_race_hold },
};

static void kt_race_one_done(struct ib_cq *cq, struct ib_wc *wc)
{
	atomic_inc(&kt_race_done);
}

static struct ib_cqe kt_race_cqe = { .done = kt_race_one_done };

static void kt_race_burst(struct work_struct *work)
{
	struct ib_sge wsge = { kt_a.dma[0], KT_RACE_LEN,
			       kt_a.pd->local_dma_lkey };
	struct ib_sge rsge = { kt_a.dma[1], KT_RACE_LEN,
			       kt_a.pd->local_dma_lkey };
	struct ib_rdma_wr wr[KT_RACE_WRS] = {};
	const struct ib_send_wr *bad;
	int i;

	for (i = 0; i < KT_RACE_WRS; i++) {
		wr[i].wr.wr_cqe = &kt_race_cqe;
		wr[i].wr.send_flags = IB_SEND_SIGNALED;
		wr[i].wr.opcode = i & 1 ? IB_WR_RDMA_READ : IB_WR_RDMA_WRITE;
		wr[i].wr.sg_list = i & 1 ? &rsge : &wsge;
		wr[i].wr.num_sge = 1;
		wr[i].wr.next = i + 1 < KT_RACE_WRS ? &wr[i + 1].wr : NULL;
		wr[i].remote_addr = KT_RACE_IOVA;
		wr[i].rkey = kt_race_rkey;
	}
	ib_post_send(kt_a.qp, &wr[0].wr, &bad);
}

/* Map B's buffer @buf at KT_RACE_IOVA under key byte @key. */
static void kt_race_reg_wr(struct ib_reg_wr *wr, int buf, u8 key)
{
	static struct scatterlist sg;
	int n;

	sg_init_table(&sg, 1);
	sg_dma_address(&sg) = kt_b.dma[buf];
	sg_dma_len(&sg) = KT_BUF;
	n = ib_map_mr_sg(kt_race_mr, &sg, 1, NULL, PAGE_SIZE);
	WARN_ON(n != 1);
	kt_race_mr->iova = KT_RACE_IOVA;
	ib_update_fast_reg_key(kt_race_mr, key);
	memset(wr, 0, sizeof(*wr));
	wr->wr.opcode = IB_WR_REG_MR;
	wr->mr = kt_race_mr;
	wr->key = kt_race_mr->rkey;
	wr->access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
		     IB_ACCESS_REMOTE_READ;
}

static bool kt_race_clean(void)
{
	const u8 *x = kt_a.buf[1];
	size_t i;

	if (!kt_expect(!memchr_inv(kt_b.buf[3], KT_RACE_Y, KT_BUF),
		       "a write admitted under the old registration reached its successor's pages"))
		return false;
	for (i = 0; i < KT_BUF; i++)
		if (x[i] == KT_RACE_Y)
			break;
	return kt_expect(i == KT_BUF,
			 "a read admitted under the old registration returned its successor's bytes");
}

static struct kt_wait kt_inv_wait;
/*
 * B's registrations go through a QP of B's PD of their own, connected to
 * itself: the stale accesses that follow an invalidation fail B's QP, and
 * must not flush the REG_MR behind the LOCAL_INV.
 */
static struct kt_side kt_race_ops;

/* LOCAL_INV of @rkey on B, waited for; true if it completed well. */
static bool kt_race_inv(u32 rkey)
{
	struct ib_send_wr iwr = { .opcode = IB_WR_LOCAL_INV,
				  .ex.invalidate_rkey = rkey };

	return kt_run_on(&kt_race_ops, &iwr, &kt_inv_wait) &&
	       kt_expect(kt_inv_wait.wc.status == IB_WC_SUCCESS,
			 "LOCAL_INV: %d", kt_inv_wait.wc.status);
}

static bool kt_frmr_race_rounds(void);

static bool kt_frmr_race(void)
{
	struct kprobe *kp[ARRAY_SIZE(kt_race_probes)];
	unsigned int i;
	bool ok;
	int err;

	for (i = 0; i < ARRAY_SIZE(kt_race_probes); i++)
		kp[i] = &kt_race_probes[i];
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_RC, .sq_sig_type = IB_SIGNAL_REQ_WR,
		.send_cq = kt_b.cq, .recv_cq = kt_b.cq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	kt_race_ops = kt_b;
	kt_race_ops.qp = ib_create_qp(kt_b.pd, &init);
	if (!kt_expect(!IS_ERR(kt_race_ops.qp), "ib_create_qp: %ld",
		       PTR_ERR(kt_race_ops.qp)))
		return false;
	ok = kt_expect(!kt_connect(&kt_race_ops, &kt_race_ops, 21, 21),
		       "connect the registration QP");
	err = ok ? register_kprobes(kp, ARRAY_SIZE(kp)) : 0;
	if (ok && kt_expect(!err, "register_kprobes: %d", err)) {
		ok = kt_frmr_race_rounds();
		unregister_kprobes(kp, ARRAY_SIZE(kp));
	} else {
		ok = false;
	}
	ib_destroy_qp(kt_race_ops.qp);
	return ok;
}

static bool kt_frmr_race_rounds(void)
{
	struct kt_wait *w = &kt_send_wait, *iw = &kt_inv_wait;
	struct ib_send_wr iwr;
	const struct ib_send_wr *bad;
	struct ib_reg_wr rwr;
	int round, overlapped = 0, valid_key = -1, holds, spins;

	if (num_online_cpus() < 2)
		return kt_expect(false, "needs two CPUs");
	kt_race_mr = ib_alloc_mr(kt_b.pd, IB_MR_TYPE_MEM_REG,
				 KT_BUF / PAGE_SIZE);
	if (!kt_expect(!IS_ERR(kt_race_mr), "ib_alloc_mr: %ld",
		       PTR_ERR(kt_race_mr))) {
		kt_race_mr = NULL;
		return false;
	}
	INIT_WORK(&kt_race_work, kt_race_burst);
	memset(kt_a.buf[0], KT_RACE_X, KT_BUF);
	if (!kt_reconnect(0x5000))
		return false;
	for (round = 0; round < KT_RACE_ROUNDS; round++) {
		/* What the last round left registered goes first. */
		if (valid_key >= 0 &&
		    !kt_race_inv((kt_race_mr->rkey & ~0xff) | valid_key))
			return false;
		memset(kt_a.buf[1], 0, KT_BUF);
		memset(kt_b.buf[2], KT_RACE_X, KT_BUF);
		memset(kt_b.buf[3], KT_RACE_Y, KT_BUF);
		kt_race_reg_wr(&rwr, 2, 2 * round);
		if (!kt_run_on(&kt_race_ops, &rwr.wr, w) ||
		    !kt_expect(w->wc.status == IB_WC_SUCCESS, "REG_MR: %d",
			       w->wc.status))
			return false;
		valid_key = 2 * round;
		kt_race_rkey = kt_race_mr->rkey;
		atomic_set(&kt_race_done, 0);
		/* The burst on one CPU, the re-registration on another. */
		queue_work_on(cpumask_any_but(cpu_online_mask,
					      raw_smp_processor_id()),
			      system_highpri_wq, &kt_race_work);
		/*
		 * Post once a copy through the FRMR is held (or the burst
		 * ended); a loaded host may start the burst late.
		 */
		holds = atomic_read(&kt_race_holds);
		for (spins = 0; spins < 10000000 &&
		     atomic_read(&kt_race_holds) == holds &&
		     atomic_read(&kt_race_done) < KT_RACE_WRS; spins++)
			udelay(1);
		kt_wait_init(iw);
		kt_wait_init(w);
		iwr = (struct ib_send_wr){ .opcode = IB_WR_LOCAL_INV,
					    .wr_cqe = &iw->cqe,
					    .send_flags = IB_SEND_SIGNALED,
					    .ex.invalidate_rkey = kt_race_mr->rkey };
		kt_race_reg_wr(&rwr, 3, 2 * round + 1);
		rwr.wr.wr_cqe = &w->cqe;
		rwr.wr.send_flags = IB_SEND_SIGNALED;
		iwr.next = &rwr.wr;
		if (!kt_expect(!ib_post_send(kt_race_ops.qp, &iwr, &bad),
			       "post LOCAL_INV, REG_MR") ||
		    !kt_wait_for(iw) || !kt_wait_for(w))
			return false;
		if (iw->wc.status == IB_WC_SUCCESS)
			valid_key = -1;
		if (w->wc.status == IB_WC_SUCCESS) {
			valid_key = 2 * round + 1;
			overlapped += atomic_read(&kt_race_holds) != holds;
		}
		/* Drained: every access of the round has ended. */
		flush_work(&kt_race_work);
		if (!kt_reconnect(0x5800 + round * 0x1000) || !kt_race_clean())
			return false;
	}
	pr_info("sroce_kverbs_test: frmr_race: %d of %d re-registrations during a held copy (%d copies held)\n",
		overlapped, KT_RACE_ROUNDS, atomic_read(&kt_race_holds));
	return kt_expect(overlapped >= KT_RACE_ROUNDS / 4,
			 "only %d rounds raced: the test tested nothing",
			 overlapped);
}

/*
 * A completion handler that posts to the QP whose completion it handles,
 * as a hardware driver allows (it calls handlers from its interrupt, with
 * no lock of its own held): each WRITE's completion posts the next, on a
 * CQ made with ib_create_cq() and a handler of the test's own.
 */
#define KT_H_WRITES	16

static struct ib_qp *kt_h_qp;
static atomic_t kt_h_writes;
static int kt_h_status;
static struct completion kt_h_done;

static int kt_h_post(void)
{
	struct ib_sge sge = { kt_a.dma[0], 64, kt_a.pd->local_dma_lkey };
	struct ib_rdma_wr wr = {
		.wr = { .opcode = IB_WR_RDMA_WRITE, .sg_list = &sge,
			.num_sge = 1, .send_flags = IB_SEND_SIGNALED },
		.remote_addr = kt_b.dma[0],
		.rkey = kt_b.pd->unsafe_global_rkey,
	};
	const struct ib_send_wr *bad;

	return ib_post_send(kt_h_qp, &wr.wr, &bad);
}

static void kt_h_comp(struct ib_cq *cq, void *ctx)
{
	struct ib_wc wc;

	do {
		while (ib_poll_cq(cq, 1, &wc) == 1) {
			if (wc.status != IB_WC_SUCCESS) {
				kt_h_status = wc.status;
				complete(&kt_h_done);
				return;
			}
			if (atomic_inc_return(&kt_h_writes) == KT_H_WRITES) {
				complete(&kt_h_done);
				return;
			}
			kt_h_status = kt_h_post();
			if (kt_h_status) {
				complete(&kt_h_done);
				return;
			}
		}
	} while (ib_req_notify_cq(cq, IB_CQ_NEXT_COMP |
				  IB_CQ_REPORT_MISSED_EVENTS) > 0);
}

static bool kt_handler_posts(void)
{
	struct ib_cq_init_attr cattr = { .cqe = 16 };
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_RC, .sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 8, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ib_qp *qb = NULL, *save_a = kt_a.qp, *save_b = kt_b.qp;
	struct ib_cq *cq;
	bool ok = false;

	cq = ib_create_cq(kt_a.dev, kt_h_comp, NULL, NULL, &cattr);
	if (!kt_expect(!IS_ERR(cq), "ib_create_cq: %ld", PTR_ERR(cq)))
		return false;
	init.send_cq = cq;
	init.recv_cq = kt_a.cq;
	kt_h_qp = ib_create_qp(kt_a.pd, &init);
	init.send_cq = kt_b.cq;
	init.recv_cq = kt_b.cq;
	qb = ib_create_qp(kt_b.pd, &init);
	if (!kt_expect(!IS_ERR(kt_h_qp) && !IS_ERR(qb), "ib_create_qp")) {
		kt_h_qp = IS_ERR(kt_h_qp) ? NULL : kt_h_qp;
		qb = IS_ERR(qb) ? NULL : qb;
		goto out;
	}
	kt_a.qp = kt_h_qp;
	kt_b.qp = qb;
	if (!kt_expect(!kt_connect(&kt_a, &kt_b, 11, 13) &&
		       !kt_connect(&kt_b, &kt_a, 13, 11), "connect"))
		goto out;
	init_completion(&kt_h_done);
	atomic_set(&kt_h_writes, 0);
	kt_h_status = 0;
	ib_req_notify_cq(cq, IB_CQ_NEXT_COMP);
	if (!kt_expect(!kt_h_post(), "first post"))
		goto out;
	ok = kt_expect(wait_for_completion_timeout(&kt_h_done, KT_TIMEOUT),
		       "%d of %d WRITEs completed: the handler's post hung",
		       atomic_read(&kt_h_writes), KT_H_WRITES) &&
	     kt_expect(!kt_h_status, "status %d", kt_h_status);
out:
	kt_a.qp = save_a;
	kt_b.qp = save_b;
	if (kt_h_qp)
		ib_destroy_qp(kt_h_qp);
	kt_h_qp = NULL;
	if (qb)
		ib_destroy_qp(qb);
	ib_destroy_cq(cq);
	return ok;
}

/*
 * An SRQ on B, filled with ib_post_srq_recv: a second pair of QPs, B's
 * receiving through the SRQ, takes two SENDs from it in posting order; a
 * post beyond the SRQ's size is refused with -ENOMEM at that request.
 */
static bool kt_srq(void)
{
	struct ib_srq_init_attr sattr = { .attr = { .max_wr = 2, .max_sge = 1 } };
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_RC, .sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 8, .max_recv_wr = 0,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct kt_wait *sw = &kt_send_wait, *rw = &kt_recv_wait;
	struct ib_qp *qa = NULL, *qb = NULL, *save_a = kt_a.qp, *save_b = kt_b.qp;
	struct ib_sge rs[3], ss;
	struct ib_recv_wr rwr[3] = {};
	const struct ib_recv_wr *bad = NULL;
	struct ib_send_wr wr = { .opcode = IB_WR_SEND };
	struct ib_srq *srq;
	bool ok = false;
	int i, err;

	srq = ib_create_srq(kt_b.pd, &sattr);
	if (!kt_expect(!IS_ERR(srq), "ib_create_srq: %ld", PTR_ERR(srq)))
		return false;
	kt_wait_init(rw);
	for (i = 0; i < 3; i++) {
		rs[i] = (struct ib_sge){ kt_b.dma[i], 1024,
					 kt_b.pd->local_dma_lkey };
		rwr[i].wr_cqe = &rw->cqe;
		rwr[i].sg_list = &rs[i];
		rwr[i].num_sge = 1;
		rwr[i].next = i < 2 ? &rwr[i + 1] : NULL;
	}
	err = ib_post_srq_recv(srq, rwr, &bad);
	if (!kt_expect(err == -ENOMEM && bad == &rwr[2],
		       "posting 3 into an SRQ of 2: %d", err))
		goto out;

	init.send_cq = kt_a.cq;
	init.recv_cq = kt_a.cq;
	qa = ib_create_qp(kt_a.pd, &init);
	init.send_cq = kt_b.cq;
	init.recv_cq = kt_b.cq;
	init.srq = srq;
	qb = ib_create_qp(kt_b.pd, &init);
	if (!kt_expect(!IS_ERR(qa) && !IS_ERR(qb), "ib_create_qp with SRQ")) {
		qa = IS_ERR(qa) ? NULL : qa;
		qb = IS_ERR(qb) ? NULL : qb;
		goto out;
	}
	kt_a.qp = qa;
	kt_b.qp = qb;
	if (!kt_expect(!kt_connect(&kt_a, &kt_b, 7, 9) &&
		       !kt_connect(&kt_b, &kt_a, 9, 7), "connect"))
		goto out;
	for (i = 0; i < 2; i++) {
		kt_fill(kt_a.buf[0], 512, 30 + i);
		memset(kt_b.buf[i], 0, 1024);
		ss = (struct ib_sge){ kt_a.dma[0], 512,
				      kt_a.pd->local_dma_lkey };
		wr.sg_list = &ss;
		wr.num_sge = 1;
		wr.send_flags = 0;
		kt_wait_init(rw);
		if (!kt_run(&wr, sw) || !kt_wait_for(rw) ||
		    !kt_wc_ok(rw, IB_WC_RECV, 512, qb) ||
		    !kt_expect(!memcmp(kt_a.buf[0], kt_b.buf[i], 512),
			       "SEND %d did not land in SRQ WQE %d", i, i))
			goto out;
	}
	ok = true;
out:
	kt_a.qp = save_a;
	kt_b.qp = save_b;
	if (qa)
		ib_destroy_qp(qa);
	if (qb)
		ib_destroy_qp(qb);
	ib_destroy_srq(srq);
	return ok;
}

/* A QP on @cq in the error state with two flushed receives. */
static struct ib_qp *kt_flushed_qp(struct ib_cq *cq)
{
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_RC, .send_cq = cq, .recv_cq = cq,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ib_sge sge = { kt_a.dma[0], 64, kt_a.pd->local_dma_lkey };
	struct ib_recv_wr wr = { .wr_cqe = &kt_ignore, .sg_list = &sge,
				 .num_sge = 1 };
	struct ib_qp_attr a = { .qp_state = IB_QPS_INIT, .port_num = 1 };
	const struct ib_recv_wr *bad;
	struct ib_qp *qp;

	qp = ib_create_qp(kt_a.pd, &init);
	if (IS_ERR(qp))
		return qp;
	if (ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT |
			 IB_QP_ACCESS_FLAGS) ||
	    ib_post_recv(qp, &wr, &bad) || ib_post_recv(qp, &wr, &bad)) {
		ib_destroy_qp(qp);
		return ERR_PTR(-EIO);
	}
	a.qp_state = IB_QPS_ERR;
	ib_modify_qp(qp, &a, IB_QP_STATE);
	return qp;
}

/*
 * Completions of a QP destroyed before they were polled go with it: none
 * may name a QP that no longer exists (or, its number reused, another).
 * Those of other QPs on the CQ stay, in order.
 */
static bool kt_destroy_purges_completions(void)
{
	struct ib_qp *q1, *q2 = NULL;
	struct ib_cq *cq;
	struct ib_wc wc[8];
	bool ok = false;
	int n;

	cq = ib_alloc_cq(kt_a.dev, NULL, 16, 0, IB_POLL_DIRECT);
	if (!kt_expect(!IS_ERR(cq), "ib_alloc_cq: %ld", PTR_ERR(cq)))
		return false;
	q1 = kt_flushed_qp(cq);
	if (!kt_expect(!IS_ERR(q1), "first QP: %ld", PTR_ERR(q1)))
		goto out;
	q2 = kt_flushed_qp(cq);
	if (!kt_expect(!IS_ERR(q2), "second QP: %ld", PTR_ERR(q2))) {
		q2 = NULL;
		goto out_q1;
	}
	ib_destroy_qp(q1);
	q1 = NULL;
	n = ib_poll_cq(cq, ARRAY_SIZE(wc), wc);
	ok = kt_expect(n == 2, "%d completions left, want the second QP's 2",
		       n) &&
	     kt_expect(wc[0].qp == q2 && wc[1].qp == q2 &&
		       wc[0].status == IB_WC_WR_FLUSH_ERR,
		       "completions name %p and %p (status %d), want %p",
		       wc[0].qp, wc[1].qp, wc[0].status, q2);
out_q1:
	if (q1)
		ib_destroy_qp(q1);
	if (q2)
		ib_destroy_qp(q2);
out:
	ib_free_cq(cq);
	return ok;
}

/* After an error: drain both QPs, reset them and connect them again. */
static bool kt_reconnect(u32 psn)
{
	struct ib_qp_attr a = { .qp_state = IB_QPS_RESET };

	ib_drain_qp(kt_a.qp);
	ib_drain_qp(kt_b.qp);
	return kt_expect(!ib_modify_qp(kt_a.qp, &a, IB_QP_STATE) &&
			 !ib_modify_qp(kt_b.qp, &a, IB_QP_STATE),
			 "reset failed") &&
	       kt_expect(!kt_connect(&kt_a, &kt_b, psn, psn + 1000) &&
			 !kt_connect(&kt_b, &kt_a, psn + 1000, psn),
			 "reconnect failed");
}

static int __init kt_init(void)
{
	int err;

	err = kt_side_init(&kt_a, ibdev);
	if (!err)
		err = kt_side_init(&kt_b, peer ? peer : ibdev);
	if (!err)
		err = kt_connect(&kt_a, &kt_b, 0xfffff0, 0x100);
	if (!err)
		err = kt_connect(&kt_b, &kt_a, 0x100, 0xfffff0);
	if (err) {
		pr_err("sroce_kverbs_test: setup failed: %d\n", err);
		goto out;
	}
	kt_report("send_multi_sge_imm", kt_send_multi_sge());
	kt_report("send_inline", kt_send_inline());
	kt_report("write_read_global_rkey", kt_write_read_global_rkey());
	kt_report("write_imm", kt_write_imm());
	kt_report("post_irqs_off", kt_post_irqs_off());
	kt_report("srq", kt_srq());
	kt_report("sq_full", kt_sq_full());
	kt_report("bad_address", kt_bad_address());
	kt_report("drain_reset_reconnect", kt_reconnect(0x1000) &&
		  kt_send_inline());
	kt_report("atomic_needs_remote_atomic", kt_atomic_needs_right());
	kt_report("drain_reset_reconnect_again", kt_reconnect(0xffff00) &&
		  kt_write_imm());
	kt_report("fast_reg_write_read_atomics_send_inv", kt_fast_reg());
	kt_report("reconnect_after_send_inv", kt_reconnect(0x3000));
	kt_report("local_inv", kt_local_inv());
	kt_report("reconnect_after_local_inv", kt_reconnect(0x4000));
	kt_report("frmr_iova_as_xprtrdma", kt_frmr_iova_as_xprtrdma());
	kt_report("bad_rkey_and_drain", kt_bad_rkey_and_drain());
	kt_report("frmr_reregistration_races_access", kt_frmr_race());
	kt_report("destroy_purges_completions", kt_destroy_purges_completions());
	kt_report("completion_handler_posts", kt_handler_posts());
	pr_info("sroce_kverbs_test: %d tests, %d failed\n", kt_num, kt_failed);
	err = kt_failed ? -EIO : 0;
out:
	if (kt_frmr)
		ib_dereg_mr(kt_frmr);
	if (kt_race_mr)
		ib_dereg_mr(kt_race_mr);
	kt_side_fini(&kt_b);
	kt_side_fini(&kt_a);
	return err;
}

static void __exit kt_exit(void)
{
}

module_init(kt_init);
module_exit(kt_exit);
MODULE_DESCRIPTION("sroce kernel verbs selftest");
MODULE_LICENSE("GPL");
