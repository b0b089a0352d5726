// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Congestion control, the notification point (RoCEv2, IBA annex A17.9):
 * a switch or qdisc that would rather not drop marks an ECN-capable packet
 * Congestion Experienced; the receiving queue pair answers with a
 * Congestion Notification Packet to the queue pair that sent it, at most
 * one per interval, so that the sender can slow down. CNPs from any peer
 * (hardware RNICs send them) are taken and counted by the queue pair they
 * name.
 *
 * Only connected queue pairs (RC, UC) send CNPs: they know their peer's
 * queue pair and path. A UD receiver counts the mark and sends nothing.
 * What a CNP does to the sender's rate is the reaction point's
 * (sroce_dcqcn.c). Each half can be turned off per device, in sysfs:
 * /sys/class/infiniband/<dev>/cc/{np,rp}_enable.
 */
#include <linux/moduleparam.h>

#include "sroce.h"
#include "sroce_hdr.h"

/* IBA A17.9.3: the CNP's BTH is followed by 16 reserved bytes. */
#define SROCE_CNP_RESERVED_BYTES	16

static unsigned int cnp_interval_us = 50;
module_param(cnp_interval_us, uint, 0644);
MODULE_PARM_DESC(cnp_interval_us,
		 "Least time between two CNPs a queue pair sends, in microseconds (0: one per marked packet; default 50, as hardware)");

/*
 * Claim the right to send a CNP now. Receivers of one queue pair may run
 * on several CPUs at once; one of them wins an interval.
 */
static bool sroce_cc_cnp_due(struct sroce_qp *qp)
{
	u64 interval = (u64)READ_ONCE(cnp_interval_us) * NSEC_PER_USEC;
	u64 now = ktime_get_ns();
	s64 last = atomic64_read(&qp->cnp_sent_ns);

	if (!interval)
		return true;
	/* Signed: another CPU may have stored a later now than ours. */
	if (last && (s64)(now - last) < (s64)interval)
		return false;
	return atomic64_try_cmpxchg(&qp->cnp_sent_ns, &last, now);
}

static void sroce_cc_send_cnp(struct sroce_qp *qp)
{
	struct sroce_bth *bth;
	struct sk_buff *skb;
	void *ext, *payload;

	skb = sroce_tx_alloc(qp, SROCE_OPCODE_CNP, 0, false, false,
			     SROCE_CNP_RESERVED_BYTES, 0, &ext, &payload);
	if (!skb) {
		sroce_qp_count(qp, SROCE_CNT_TX_DROP);
		return;
	}
	memset(ext, 0, SROCE_CNP_RESERVED_BYTES);
	/* A17.9.3: BECN set, the rest of the BTH as for any packet. */
	bth = (struct sroce_bth *)ext - 1;
	bth->qpn |= cpu_to_be32(SROCE_BTH_BECN);
	sroce_qp_count(qp, SROCE_CNT_TX_CNP);
	sroce_tx_send(qp, skb);
}

/**
 * sroce_cc_ce_rcv() - a packet for @qp arrived marked Congestion Experienced.
 * @qp: the receiving queue pair, whose peer sent it
 *
 * Counts it, and for a connected queue pair in a state that talks to its
 * peer answers with a CNP unless one went out within cnp_interval_us.
 * Context: softirq or BH disabled; no queue pair lock held.
 */
void sroce_cc_ce_rcv(struct sroce_qp *qp)
{
	enum ib_qp_state state;

	sroce_qp_count(qp, SROCE_CNT_RX_ECN_CE);
	if (!sroce_qp_connected(qp))
		return;
	if (!READ_ONCE(to_sdev(qp->ibqp.device)->cc_np_enable))
		return;
	if (!sroce_cc_cnp_due(qp))
		return;
	/*
	 * The path is written only on the way into RTR, before the new state
	 * is published under both data-path locks: seen in RTR or later
	 * under one of them, it is complete.
	 */
	spin_lock(&qp->resp_lock);
	state = sroce_qp_state(qp);
	if (state == IB_QPS_RTR || state == IB_QPS_RTS ||
	    state == IB_QPS_SQD)
		sroce_cc_send_cnp(qp);
	spin_unlock(&qp->resp_lock);
}

/**
 * sroce_cc_cnp_rcv() - take a CNP addressed to @qp.
 * @qp: the queue pair it names; for a connected one, the CNP came from
 *	its peer
 *
 * A connected queue pair that sends slows down; a datagram one, whose
 * CNP could come from any of its peers, only counts it.
 * Context: softirq or BH disabled; no queue pair lock held.
 */
void sroce_cc_cnp_rcv(struct sroce_qp *qp)
{
	enum ib_qp_state state = sroce_qp_state(qp);

	sroce_qp_count(qp, SROCE_CNT_RX_CNP);
	if (!sroce_qp_connected(qp))
		return;
	/* Late ones for a queue pair that no longer sends change nothing. */
	if (state == IB_QPS_RTR || state == IB_QPS_RTS ||
	    state == IB_QPS_SQD || state == IB_QPS_SQE)
		sroce_cc_rp_cnp(qp);
}

/*
 * The per-device switches, "1" or "0" in cc/np_enable and cc/rp_enable:
 * one show and one store for both, the attribute naming the flag.
 */
struct sroce_cc_switch {
	struct device_attribute attr;
	size_t flag;		/* offset of the bool in struct sroce_dev */
};

static bool *sroce_cc_switch_flag(struct device *dev,
				  struct device_attribute *attr)
{
	struct sroce_dev *sdev = rdma_device_to_drv_device(dev,
							  struct sroce_dev,
							  ibdev);

	return (bool *)((u8 *)sdev +
			container_of(attr, struct sroce_cc_switch, attr)->flag);
}

static ssize_t sroce_cc_switch_show(struct device *dev,
				    struct device_attribute *attr, char *buf)
{
	bool on = READ_ONCE(*sroce_cc_switch_flag(dev, attr));

	return sysfs_emit(buf, "%d\n", on);
}

static ssize_t sroce_cc_switch_store(struct device *dev,
				     struct device_attribute *attr,
				     const char *buf, size_t count)
{
	bool v;
	int err = kstrtobool(buf, &v);

	if (err)
		return err;
	WRITE_ONCE(*sroce_cc_switch_flag(dev, attr), v);
	return count;
}

#define SROCE_CC_SWITCH(_name, _flag)					\
	static struct sroce_cc_switch sroce_cc_##_name = {		\
		.attr = __ATTR(_name, 0644, sroce_cc_switch_show,	\
			       sroce_cc_switch_store),			\
		.flag = offsetof(struct sroce_dev, _flag),		\
	}

SROCE_CC_SWITCH(np_enable, cc_np_enable);
SROCE_CC_SWITCH(rp_enable, cc_rp_enable);

static struct attribute *sroce_cc_attrs[] = {
	&sroce_cc_np_enable.attr.attr,
	&sroce_cc_rp_enable.attr.attr,
	NULL,
};

/*
 * The rdma core asks new drivers for netlink rather than sysfs, but its
 * netlink has no command for a driver's own settings; this is the one
 * place sroce has them.
 */
const struct attribute_group sroce_cc_attr_group = {
	.name = "cc",
	.attrs = sroce_cc_attrs,
};
