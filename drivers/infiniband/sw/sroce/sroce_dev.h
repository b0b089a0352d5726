/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The device: its state, object limits, user contexts and PDs, and the
 * module's life cycle (sroce_main.c, sroce_device.c, sroce_pd.c).
 */
#ifndef SROCE_DEV_H
#define SROCE_DEV_H

/*
 * Life of a device. Moves only under RTNL so the netdev notifier and the
 * link-add path agree on who tears the device down.
 */
enum sroce_dev_state {
	SROCE_DEV_NEW,		/* allocated, ib_register_device() in flight */
	SROCE_DEV_LIVE,		/* registered; the notifier may unregister it */
	SROCE_DEV_NETDEV_GONE,	/* netdev vanished while still NEW */
};

/**
 * struct sroce_budget - objects of one kind on a device, against its limit.
 * @all: every object of the kind
 * @user: those that user space created
 *
 * User space together may hold a limit less a share kept for kernel
 * consumers (sroce_budget_take()), so that no user can starve the MAD
 * layer, the RDMA CM or a storage ULP of the device.
 */
struct sroce_budget {
	atomic_t all;
	atomic_t user;
};

/* Queues of looped-back packets (sroce_loop.c): a power of two. */
#define SROCE_LO_SHARDS		16

struct sroce_gid_set;

/**
 * struct sroce_lo_shard - one queue of looped-back packets
 * @queue: packets for the queue pairs whose number selects this queue,
 *	in sending order
 * @queued: packets given to @queue, counted under its lock while the
 *	lo_drop_every test knob is set
 * @drain_lock: held by whoever delivers @queue: one drainer at a time
 *	keeps the order, whichever CPU sent the packets
 * @work: delivers @queue when no sender does it itself
 * @sdev: the device
 */
struct sroce_lo_shard {
	struct sk_buff_head queue;
	u32 queued;
	spinlock_t drain_lock;	/* one drainer of queue */
	struct work_struct work;
	struct sroce_dev *sdev;
} ____cacheline_aligned_in_smp;

/**
 * struct sroce_dev - one sroce RDMA device bound to one Ethernet netdev.
 * @ibdev: the core's device; must stay first (ib_alloc_device)
 * @ndev: the bound netdev, referenced for as long as @ibdev exists
 * @ndev_tracker: reference tracker for @ndev
 * @list: entry in the module's device list, which holds a reference
 * @dead: sroce_dealloc_driver() has run; under the device list lock
 * @unreg_work: unregisters the device after its netdev went away
 * @state: see enum sroce_dev_state; written under RTNL
 * @rx_attached: our rx_handler is installed on @ndev; written under RTNL
 * @ndev_veth: @ndev is a veth, which reports its peer; set on attach
 * @last_port_state: port state last reported with an event; under RTNL
 * @active_speed: IB speed for the netdev's link speed; written under RTNL
 * @active_width: IB width to go with @active_speed
 * @link_mbps: the netdev's link speed in Mb/s, 0 unknown; under RTNL
 * @cc_np_enable: answer CE marks with CNPs (sysfs cc/np_enable)
 * @cc_rp_enable: cut the rate on CNPs (sysfs cc/rp_enable)
 * @pd_ida: allocator of protection domain numbers, bounds the PD count
 * @mr_xa: memory regions and windows by key index (key >> 8)
 * @mr_next: next MR table slot to try, so slots are not reused at once
 * @num_mr: entries in @mr_xa, bounded by @max_mr
 * @num_cq: completion queues in existence, bounded by @max_cq
 * @num_srq: shared receive queues in existence, bounded by SROCE_MAX_SRQ
 * @num_pd: protection domains in existence, bounded by @max_pd
 * @ah_xa: address vectors by AH number; IRQ-safe lock (see sroce_ah.c)
 * @ah_next: next AH number to try
 * @num_ah: address handles in existence, bounded by @max_ah
 * @qp_xa: queue pairs by QP number
 * @qp_next: next QP number to try, so numbers are not reused at once
 * @num_qp: queue pairs in existence, bounded by @max_qp
 * @max_qp: limit on queue pairs (module parameter, at creation)
 * @max_cq: limit on completion queues (likewise)
 * @max_mr: limit on MR table entries: regions and windows (likewise)
 * @max_ah: limit on address handles (likewise)
 * @max_pd: limit on protection domains (likewise)
 * @counters: per-CPU counters, summed on read
 * @counter_sets: the per-CPU counter sets of rdma counters that queue
 *	pairs are bound to (rdma statistic qp), by counter id
 * @lo: queues of packets this device sent to itself, by destination QP
 * @gids: the RoCEv2 GIDs of @ndev the receive hook takes packets for
 *	(RCU; sroce_gid.c)
 * @gid_lock: serialises replacing @gids
 * @local_dma_mr: the region the local DMA lkey 0 names (kernel PDs only)
 * @mw_lock: serialises binding memory windows with deregistering the
 *	regions and windows involved
 * @mcast_list: multicast groups with attached QPs (RCU; sroce_mcast.c)
 * @mcast_lock: serialises attach and detach
 * @num_mcg: groups in @mcast_list
 */
struct sroce_dev {
	struct ib_device ibdev;
	struct net_device *ndev;
	netdevice_tracker ndev_tracker;
	struct list_head list;
	bool dead;
	struct work_struct unreg_work;
	enum sroce_dev_state state;
	bool rx_attached;
	bool ndev_veth;
	enum ib_port_state last_port_state;
	u16 active_speed;
	u8 active_width;
	u32 link_mbps;
	bool cc_np_enable;
	bool cc_rp_enable;
	struct ida pd_ida;
	struct xarray mr_xa;
	u32 mr_next;
	struct sroce_budget num_mr;
	struct sroce_budget num_cq;
	struct sroce_budget num_srq;
	struct sroce_budget num_pd;
	struct xarray ah_xa;
	u32 ah_next;
	struct sroce_budget num_ah;
	struct xarray qp_xa;
	u32 qp_next;
	struct sroce_budget num_qp;
	u32 max_qp;
	u32 max_cq;
	u32 max_mr;
	u32 max_ah;
	u32 max_pd;
	struct sroce_pcpu_counters __percpu *counters;
	struct xarray counter_sets;
	struct sroce_lo_shard lo[SROCE_LO_SHARDS];
	struct sroce_gid_set __rcu *gids;
	struct mutex gid_lock;	/* replacing gids */
	struct sroce_mr local_dma_mr;
	spinlock_t mw_lock;	/* bindings against deregistration */
	struct list_head mcast_list;
	spinlock_t mcast_lock;	/* attach and detach */
	u32 num_mcg;
};

struct sroce_ucontext {
	struct ib_ucontext ibuctx;
};

/* A protection domain; @user: user space made it (its budget share). */
struct sroce_pd {
	struct ib_pd ibpd;
	u32 pdn;
	bool user;
};

static inline struct sroce_dev *to_sdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct sroce_dev, ibdev);
}

static inline struct sroce_pd *to_spd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct sroce_pd, ibpd);
}

/*
 * No request carries driver input yet: accept none or all-zero input, and
 * refuse anything else rather than silently ignore it.
 */
static inline bool sroce_udata_input_ok(struct ib_udata *udata)
{
	return !udata || !udata->inlen ||
	       ib_is_udata_cleared(udata, 0, udata->inlen);
}

/* The user context a verb was called in, from its udata. */
static inline struct ib_ucontext *sroce_udata_ucontext(struct ib_udata *udata)
{
	return &rdma_udata_to_drv_context(udata, struct sroce_ucontext,
					  ibuctx)->ibuctx;
}

/*
 * May the caller disable softirqs and run data-path work itself? Not in
 * hard interrupt context or with interrupts off: then a work item does.
 */
static inline bool sroce_can_disable_bh(void)
{
	return !in_hardirq() && !in_nmi() && !irqs_disabled();
}

/*
 * Softirq context or BH disabled, where sroce_can_disable_bh() holds: the
 * network stack's per-CPU cache of packet heads (SKB_ALLOC_NAPI,
 * napi_consume_skb()) may be used, as NAPI drivers do. Not with
 * interrupts off: 6.1 refills the cache with kmem_cache_alloc_bulk(),
 * which turns them back on.
 */
static inline bool sroce_in_bh(void)
{
	return in_softirq() && sroce_can_disable_bh();
}

static inline void sroce_count(struct sroce_dev *sdev, enum sroce_counter c)
{
	this_cpu_inc(sdev->counters->cnt[c]);
}

/* sroce_restrack.c */
int sroce_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp);
int sroce_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq);
int sroce_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr);
int sroce_fill_res_qp_entry_raw(struct sk_buff *msg, struct ib_qp *ibqp);
int sroce_fill_res_cq_entry_raw(struct sk_buff *msg, struct ib_cq *ibcq);
int sroce_fill_res_mr_entry_raw(struct sk_buff *msg, struct ib_mr *ibmr);

/* sroce_device.c */
int sroce_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		       struct ib_udata *udata);
int sroce_query_port(struct ib_device *ibdev, u32 port,
		     struct ib_port_attr *attr);
enum rdma_link_layer sroce_get_link_layer(struct ib_device *ibdev, u32 port);
int sroce_get_port_immutable(struct ib_device *ibdev, u32 port,
			     struct ib_port_immutable *immutable);
int sroce_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey);
void sroce_get_dev_fw_str(struct ib_device *ibdev, char *str);
int sroce_alloc_ucontext(struct ib_ucontext *ibuctx, struct ib_udata *udata);
void sroce_dealloc_ucontext(struct ib_ucontext *ibuctx);
void sroce_disassociate_ucontext(struct ib_ucontext *ibuctx);
bool sroce_budget_take(struct sroce_budget *b, u32 max, bool user);
void sroce_budget_put(struct sroce_budget *b, bool user);

/* sroce_pd.c */
int sroce_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int sroce_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);

/* sroce_main.c */
void sroce_dev_netdev_gone(struct sroce_dev *sdev);
extern struct workqueue_struct *sroce_data_wq;
extern struct workqueue_struct *sroce_kernel_wq;
extern struct workqueue_struct *sroce_poll_wq;

#endif /* SROCE_DEV_H */
