// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Device counters: per-CPU, summed on read, exported as the port's hw
 * counters (rdma statistic). What each counts: enum sroce_counter.
 */
#include "sroce.h"

static const struct rdma_stat_desc sroce_counter_descs[] = {
	[SROCE_CNT_RX_ROCE_PACKETS].name = "rx_roce_packets",
	[SROCE_CNT_RX_DROP_MALFORMED].name = "rx_drop_malformed",
	[SROCE_CNT_RX_DROP_BAD_OPCODE].name = "rx_drop_bad_opcode",
	[SROCE_CNT_RX_DROP_BAD_PKEY].name = "rx_drop_bad_pkey",
	[SROCE_CNT_RX_DROP_BAD_ICRC].name = "rx_drop_bad_icrc",
	[SROCE_CNT_RX_DROP_NO_QP].name = "rx_drop_no_qp",
	[SROCE_CNT_RX_DROP_QP_STATE].name = "rx_drop_qp_state",
	[SROCE_CNT_RX_DROP_BAD_QKEY].name = "rx_drop_bad_qkey",
	[SROCE_CNT_RX_DROP_NO_RECV].name = "rx_drop_no_recv_wqe",
	[SROCE_CNT_RX_DROP_WRONG_PEER].name = "rx_drop_wrong_peer",
	[SROCE_CNT_RX_QP_PACKETS].name = "rx_qp_packets",
	[SROCE_CNT_RX_DROP_STALE].name = "rx_drop_stale_response",
	[SROCE_CNT_RX_DUPLICATE].name = "rx_duplicate_request",
	[SROCE_CNT_RX_OUT_OF_SEQ].name = "rx_out_of_sequence",
	[SROCE_CNT_TX_PACKETS].name = "tx_roce_packets",
	[SROCE_CNT_TX_DROP].name = "tx_drop",
	[SROCE_CNT_TX_PAUSE].name = "tx_pause",
	[SROCE_CNT_RETRANSMIT_TIMEOUT].name = "retransmit_timeout",
	[SROCE_CNT_SEQ_NAK_RCVD].name = "seq_nak_received",
	[SROCE_CNT_READ_GAP_REASK].name = "read_gap_reask",
	[SROCE_CNT_RNR_NAK_RCVD].name = "rnr_nak_received",
	[SROCE_CNT_RNR_NAK_SENT].name = "rnr_nak_sent",
	[SROCE_CNT_CREDIT_WAIT].name = "credit_wait",
	[SROCE_CNT_NAK_SENT].name = "nak_sent",
	[SROCE_CNT_CQ_OVERFLOW].name = "cq_overflow",
	[SROCE_CNT_BAD_WQE].name = "bad_wqe",
	[SROCE_CNT_RX_DROP_DUP_UNMATCHED].name = "rx_drop_unmatched_duplicate",
	[SROCE_CNT_RX_DROP_UC_ERROR].name = "rx_drop_uc_error",
	[SROCE_CNT_RX_GRO_SEGMENTS].name = "rx_gro_segments",
	[SROCE_CNT_TX_CPU_HANDOFF].name = "tx_cpu_handoff",
	[SROCE_CNT_SQ_DOORBELL].name = "sq_doorbell",
	[SROCE_CNT_SQ_POLLED].name = "sq_polled",
	[SROCE_CNT_SQ_POLL_YIELD].name = "sq_poll_yield",
	[SROCE_CNT_RX_ECN_CE].name = "rx_ecn_ce",
	[SROCE_CNT_TX_CNP].name = "tx_cnp",
	[SROCE_CNT_RX_CNP].name = "rx_cnp",
	[SROCE_CNT_CC_RATE_CUT].name = "cc_rate_cut",
	[SROCE_CNT_CC_PACE_WAIT].name = "cc_pace_wait",
	[SROCE_CNT_TLP_PROBE].name = "tlp_probe",
	[SROCE_CNT_READ_RESP_HELD].name = "read_resp_held",
	[SROCE_CNT_RX_LOCAL_NO_ICRC].name = "rx_local_no_icrc",
	[SROCE_CNT_TX_LOCAL_NO_ICRC].name = "tx_local_no_icrc",
	[SROCE_CNT_TX_LOCAL_UNITS].name = "tx_local_units",
	[SROCE_CNT_TX_TRAINS].name = "tx_trains",
	[SROCE_CNT_SQ_HANDOFF].name = "sq_handoff",
	[SROCE_CNT_SQ_HANDOFF_LATE].name = "sq_handoff_late",
	[SROCE_CNT_ACK_PAST_RESEND].name = "ack_past_resend",
	[SROCE_CNT_PORT_EVENTS].name = "port_events",
};

static_assert(ARRAY_SIZE(sroce_counter_descs) == SROCE_NUM_COUNTERS);

/* The counter's name as rdma statistic shows it. */
const char *sroce_counter_name(enum sroce_counter c)
{
	return sroce_counter_descs[c].name;
}

u64 sroce_counter_read(struct sroce_dev *sdev, enum sroce_counter c)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu_ptr(sdev->counters, cpu)->cnt[c];
	return sum;
}

struct rdma_hw_stats *sroce_alloc_hw_port_stats(struct ib_device *ibdev,
						u32 port)
{
	return rdma_alloc_hw_stats_struct(sroce_counter_descs,
					  SROCE_NUM_COUNTERS,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

/* Sum a set of per-CPU counters into @value, one per enum sroce_counter. */
static void sroce_counters_sum(struct sroce_pcpu_counters __percpu *set,
			       u64 *value)
{
	int cpu, i;

	memset(value, 0, SROCE_NUM_COUNTERS * sizeof(*value));
	for_each_possible_cpu(cpu)
		for (i = 0; i < SROCE_NUM_COUNTERS; i++)
			value[i] += per_cpu_ptr(set, cpu)->cnt[i];
}

int sroce_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port, int index)
{
	sroce_counters_sum(to_sdev(ibdev)->counters, stats->value);
	return SROCE_NUM_COUNTERS;
}

/*
 * Per-QP counters ("rdma statistic qp"): the core's rdma_counter objects.
 * Each has a set of per-CPU counters like the device's, in
 * &sroce_dev.counter_sets under the counter's id. A queue pair counts its
 * events into one set (&sroce_qp.counters): the device's, or that of
 * the counter it is bound to, never both. The core adds the counters,
 * running and released, to the port's figures, so those still count
 * every event once. Events that belong to no queue pair (malformed
 * packets, port events) count on the device only.
 */
struct sroce_counter_set {
	struct sroce_pcpu_counters __percpu *pcpu;
	bool unbound;			/* since the last wait for readers */
	unsigned long unbind_gp;	/* RCU state at the last unbind */
};

/*
 * Wait, if a QP was unbound since the last wait, until no CPU can still
 * count into @set: its figures are final then, and it may be freed.
 * Context: process, the counter's mutex held by the core.
 */
static void sroce_counter_set_settle(struct sroce_counter_set *set)
{
	if (set->unbound) {
		cond_synchronize_rcu(set->unbind_gp);
		set->unbound = false;
	}
}

struct rdma_hw_stats *sroce_counter_alloc_stats(struct rdma_counter *counter)
{
	return sroce_alloc_hw_port_stats(counter->device, counter->port);
}

/**
 * sroce_counter_bind_qp() - count @ibqp's events in @counter from now on.
 * @counter: the core's counter; id 0 when it has no set yet
 * @ibqp: the queue pair, bound to no counter
 *
 * Context: process, the counter's mutex held by the core.
 * Return: 0, -ENOMEM, or an xarray allocation error.
 */
int sroce_counter_bind_qp(struct rdma_counter *counter, struct ib_qp *ibqp)
{
	struct sroce_dev *sdev = to_sdev(ibqp->device);
	struct sroce_counter_set *set;
	u32 id;
	int err;

	if (!counter->id) {
		set = kzalloc(sizeof(*set), GFP_KERNEL_ACCOUNT);
		if (!set)
			return -ENOMEM;
		set->pcpu = alloc_percpu_gfp(struct sroce_pcpu_counters,
					     GFP_KERNEL_ACCOUNT);
		if (!set->pcpu) {
			kfree(set);
			return -ENOMEM;
		}
		err = xa_alloc(&sdev->counter_sets, &id, set, xa_limit_31b,
			       GFP_KERNEL);
		if (err) {
			free_percpu(set->pcpu);
			kfree(set);
			return err;
		}
		counter->id = id;
	} else {
		set = xa_load(&sdev->counter_sets, counter->id);
		if (WARN_ON_ONCE(!set))
			return -EINVAL;
	}
	WRITE_ONCE(to_sqp(ibqp)->counters, set->pcpu);
	ibqp->counter = counter;
	return 0;
}

/**
 * sroce_counter_unbind_qp() - @ibqp counts on the device again.
 * @ibqp: a bound queue pair
 *
 * Does not wait for CPUs still counting into the old set: the next read
 * of the set, or its freeing, does (sroce_counter_set_settle()), so that
 * destroying many QPs of one counter costs no grace period each.
 * Context: process, the counter's mutex held by the core.
 * Return: 0.
 */
int sroce_counter_unbind_qp(struct ib_qp *ibqp)
{
	struct sroce_dev *sdev = to_sdev(ibqp->device);
	struct sroce_counter_set *set;

	set = xa_load(&sdev->counter_sets, ibqp->counter->id);
	WRITE_ONCE(to_sqp(ibqp)->counters, sdev->counters);
	ibqp->counter = NULL;
	if (set) {
		set->unbind_gp = get_state_synchronize_rcu();
		set->unbound = true;
	}
	return 0;
}

int sroce_counter_update_stats(struct rdma_counter *counter)
{
	struct sroce_dev *sdev = to_sdev(counter->device);
	struct sroce_counter_set *set;

	set = xa_load(&sdev->counter_sets, counter->id);
	if (!set)
		return -EINVAL;
	sroce_counter_set_settle(set);
	sroce_counters_sum(set->pcpu, counter->stats->value);
	return 0;
}

/* Context: process; every queue pair is unbound from @counter. */
int sroce_counter_dealloc(struct rdma_counter *counter)
{
	struct sroce_dev *sdev = to_sdev(counter->device);
	struct sroce_counter_set *set;

	set = xa_erase(&sdev->counter_sets, counter->id);
	if (set) {
		sroce_counter_set_settle(set);
		free_percpu(set->pcpu);
		kfree(set);
	}
	return 0;
}
