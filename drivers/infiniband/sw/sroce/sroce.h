/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce: software RoCEv2 device. Private types, limits and helpers shared
 * by the files of the module. Wire formats live in sroce_hdr.h.
 */
#ifndef SROCE_H
#define SROCE_H

#include <linux/bits.h>
#include <linux/hrtimer.h>
#include <linux/interrupt.h>
#include <linux/irq_work.h>
#include <linux/in6.h>
#include <linux/list.h>
#include <linux/netdevice.h>
#include <linux/percpu.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/sroce-abi.h>

#include "sroce_compat.h"
#include "sroce_ring.h"

#define SROCE_FW_MAJOR		0
#define SROCE_FW_MINOR		1
#define SROCE_FW_SUBMINOR	0

/* RoCE has no real vendor id; 0xffffff is what soft devices report. */
#define SROCE_VENDOR_ID		0xffffff
#define SROCE_VENDOR_PART_ID	0x5372	/* "Sr" */

#define SROCE_PORT		1
#define SROCE_MAX_PD		BIT(16)
#define SROCE_MAX_MR		BIT(18)
#define SROCE_MAX_CQ		BIT(14)
/*
 * What real clients ask for: libfabric's ofi_rxm opens a CQ of (tx + rx
 * queue size) * 256 entries, beyond rxe's 32767 (on which it fails) and
 * beyond 2^17. 16 MiB of ring, charged to its user like all ring memory.
 */
#define SROCE_MAX_CQE		BIT(18)
#define SROCE_RING_MAX_ENTRIES	BIT(24)
#define SROCE_MAX_QP		BIT(16)
#define SROCE_MAX_QP_WR		BIT(14)
#define SROCE_MAX_AH		BIT(16)
#define SROCE_MAX_SRQ		BIT(14)
#define SROCE_MAX_MCAST_GRP	256
#define SROCE_MAX_MCAST_QP_ATTACH	16
/* The destination QPN of datagrams to multicast groups. */
#define SROCE_MCAST_QPN		0xffffff
#define SROCE_MAX_SRQ_WR	BIT(16)
/* Pages one fast-register MR maps (max_fast_reg_page_list_len). */
#define SROCE_MAX_FRMR_PAGES	1024
/*
 * IB_WR_REG_MR as a send WQE opcode, kernel QPs only. Its WQE carries the
 * MR's table index in wr.rdma.remote_addr, the new key in wr.rdma.rkey and
 * the access flags in ex.
 */
#define SROCE_WR_REG_MR		0xf0
/* The GSI QP's well-known Q_Key (IBA 15.4.2). */
#define SROCE_QP1_QKEY		0x80010000
#define SROCE_MAX_SGE		32
#define SROCE_MAX_INLINE	256
/*
 * Reads and atomics: a responder keeps answers for SROCE_MAX_RD_ATOMIC
 * outstanding requests; a requester may have SROCE_MAX_INIT_RD_ATOMIC
 * outstanding, a count only, so it can match deeper responders (rxe: 128).
 */
#define SROCE_MAX_RD_ATOMIC	16
#define SROCE_MAX_INIT_RD_ATOMIC	128
/* Largest message: reported as the port's max_msg_sz and enforced. */
#define SROCE_MAX_MSG_SIZE	BIT(30)
/* Packets a requester may have unacknowledged, and how often it asks. */
#define SROCE_TX_WINDOW		128
#define SROCE_ACKREQ_EVERY	32
/* Packets one pass sends before letting softirqs drain the backlog. */
#define SROCE_TX_BUDGET		32
/*
 * A queue pair pauses while the stack below it (qdisc, NIC ring, loopback
 * queue) holds this many of its packets, and resumes once it holds at
 * most the low mark: a slow link then queues instead of dropping.
 */
#define SROCE_TX_INFLIGHT_HIGH	64
#define SROCE_TX_INFLIGHT_LOW	32
/* QPN 0 and 1 are the SMI and GSI QPs; keep a few more for the future. */
#define SROCE_MIN_QPN		16
#define SROCE_MAX_QPN		0xffffff
#define SROCE_PSN_MASK		0xffffff
/* One page pointer per page: 16 GiB costs a 32 MiB array at most. */
#define SROCE_MAX_MR_SIZE	BIT_ULL(34)
#define SROCE_GID_TABLE_LEN	1024
#define SROCE_PKEY_TABLE_LEN	1

/*
 * Worst-case bytes a data packet adds around an IB MTU of payload: IPv6
 * (40) + UDP (8) + BTH (12) + RETH (16) + ImmDt (4) + ICRC (4). The active
 * IB MTU is the largest one that fits the netdev MTU after this.
 */
#define SROCE_MAX_WIRE_OVERHEAD	84
/* Smallest netdev MTU that carries a 256-byte IB MTU: below it, port down. */
#define SROCE_MIN_NETDEV_MTU	(256 + SROCE_MAX_WIRE_OVERHEAD)

/**
 * enum sroce_counter - device counters, exported through rdma statistic.
 * @SROCE_CNT_RX_ROCE_PACKETS: UDP/4791 packets taken from the netdev
 * @SROCE_CNT_RX_DROP_MALFORMED: dropped: lengths, version or pad inconsistent
 * @SROCE_CNT_RX_DROP_BAD_OPCODE: dropped: opcode sroce does not accept
 * @SROCE_CNT_RX_DROP_BAD_PKEY: dropped: P_Key outside the default partition
 * @SROCE_CNT_RX_DROP_BAD_ICRC: dropped: invariant CRC mismatch
 * @SROCE_CNT_RX_DROP_NO_QP: dropped: valid, but no queue pair to take it
 * @SROCE_CNT_RX_DROP_QP_STATE: dropped: the queue pair cannot take it now
 * @SROCE_CNT_RX_DROP_WRONG_PEER: dropped: not from the connected peer
 * @SROCE_CNT_RX_DROP_BAD_QKEY: dropped: datagram with the wrong Q_Key
 * @SROCE_CNT_RX_DROP_NO_RECV: dropped: datagram, no receive WQE posted
 * @SROCE_CNT_RX_QP_PACKETS: valid packets handed to a queue pair (or to a
 *	multicast group); with the drops above it adds up to RX_ROCE_PACKETS
 * @SROCE_CNT_RX_DROP_STALE: dropped by a requester: a response outside its
 *	PSN window or matching no outstanding request
 * @SROCE_CNT_RX_DUPLICATE: duplicate requests answered again
 * @SROCE_CNT_RX_OUT_OF_SEQ: requests ahead of the expected PSN
 * @SROCE_CNT_PORT_EVENTS: port state changes dispatched to consumers
 * @SROCE_CNT_TX_PACKETS: packets sent
 * @SROCE_CNT_TX_DROP: packets that could not be built or queued
 * @SROCE_CNT_TX_PAUSE: times a queue pair paused with SROCE_TX_INFLIGHT_HIGH
 *	of its packets still queued below it
 * @SROCE_CNT_RETRANSMIT_TIMEOUT: retransmissions after a local ACK timeout
 * @SROCE_CNT_SEQ_NAK_RCVD: PSN sequence error NAKs received
 * @SROCE_CNT_READ_GAP_REASK: reads asked again from a response missing
 *	in the middle of later ones, without waiting for the timer
 * @SROCE_CNT_RNR_NAK_RCVD: RNR NAKs received
 * @SROCE_CNT_RNR_NAK_SENT: RNR NAKs sent (no receive WQE posted)
 * @SROCE_CNT_NAK_SENT: error NAKs sent (access, request, operation)
 * @SROCE_CNT_CQ_OVERFLOW: completions lost to a full completion queue
 * @SROCE_CNT_BAD_WQE: work queue entries or indices refused from user space
 * @SROCE_CNT_RX_DROP_DUP_UNMATCHED: dropped by a responder: a read, atomic,
 *	ATOMIC WRITE or FLUSH behind the expected PSN that matches none it
 *	executed (forged, or older than it remembers)
 * @SROCE_CNT_RX_DROP_UC_ERROR: dropped by a UC responder with the rest of
 *	its message: a request it could not execute (UC has no NAK)
 * @SROCE_CNT_RX_GRO_SEGMENTS: packets that UDP GRO on the netdev had merged
 *	into one (each also counted in RX_ROCE_PACKETS), taken one by one
 * @SROCE_NUM_COUNTERS: number of counters
 */
enum sroce_counter {
	SROCE_CNT_RX_ROCE_PACKETS,
	SROCE_CNT_RX_DROP_MALFORMED,
	SROCE_CNT_RX_DROP_BAD_OPCODE,
	SROCE_CNT_RX_DROP_BAD_PKEY,
	SROCE_CNT_RX_DROP_BAD_ICRC,
	SROCE_CNT_RX_DROP_NO_QP,
	SROCE_CNT_RX_DROP_QP_STATE,
	SROCE_CNT_RX_DROP_WRONG_PEER,
	SROCE_CNT_RX_DROP_BAD_QKEY,
	SROCE_CNT_RX_DROP_NO_RECV,
	SROCE_CNT_RX_QP_PACKETS,
	SROCE_CNT_RX_DROP_STALE,
	SROCE_CNT_RX_DUPLICATE,
	SROCE_CNT_RX_OUT_OF_SEQ,
	SROCE_CNT_PORT_EVENTS,
	SROCE_CNT_TX_PACKETS,
	SROCE_CNT_TX_DROP,
	SROCE_CNT_TX_PAUSE,
	SROCE_CNT_RETRANSMIT_TIMEOUT,
	SROCE_CNT_SEQ_NAK_RCVD,
	SROCE_CNT_READ_GAP_REASK,
	SROCE_CNT_RNR_NAK_RCVD,
	SROCE_CNT_RNR_NAK_SENT,
	SROCE_CNT_NAK_SENT,
	SROCE_CNT_CQ_OVERFLOW,
	SROCE_CNT_BAD_WQE,
	SROCE_CNT_RX_DROP_DUP_UNMATCHED,
	SROCE_CNT_RX_DROP_UC_ERROR,
	SROCE_CNT_RX_GRO_SEGMENTS,
	SROCE_NUM_COUNTERS
};

struct sroce_pcpu_counters {
	u64 cnt[SROCE_NUM_COUNTERS];
};

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
 * struct sroce_mr - a memory region: pinned user pages, or kernel memory.
 * @ibmr: the core's MR
 * @key: the key the data path accepts (lkey and rkey alike); a fast-reg
 *	MR's consumer changes @ibmr's keys before it posts the registration
 * @dma: a DMA MR: addresses are kernel virtual addresses (no pages)
 * @frmr: a fast-register MR: @pages and the range change with IB_WR_REG_MR
 * @valid: a fast-register MR is registered (not free or invalidated)
 * @users: a fast-register MR's accesses between sroce_mr_lookup() and
 *	sroce_mr_put(): invalidation waits for them (see sroce_mr.c)
 * @map: a fast-register MR's page addresses from map_mr_sg, for the next
 *	registration
 * @map_len: entries in @map
 * @max_pages: room in @map and @pages
 * @mw: this is the record of a memory window (see sroce_mw.c): @key is its
 *	rkey, @iova, @length and @access its binding, @valid whether bound
 * @mw_type: IB_MW_TYPE_1 or IB_MW_TYPE_2
 * @mw_qpn: type 2: the QP it was bound through, the only one it serves
 * @mw_qp_entry: type 2, bound: entry in that QP's &sroce_qp.mw_bound
 * @mw_mr: the region it is bound to
 * @mw_binds: windows bound to this region (deregistration is refused)
 * @dying: being deregistered or deallocated: no new binding (mw_lock)
 * @umem: the pinned user memory
 * @pages: the page behind each PAGE_SIZE step of the region
 * @npages: entries in @pages
 * @page_offset: offset of the region's first byte in @pages[0]
 * @iova: address the region is accessed by
 * @length: bytes in the region
 * @access: IB_ACCESS_* flags
 * @user: user space made it (it counts against the users' share)
 */
struct sroce_mr {
	struct ib_mr ibmr;
	u32 key;
	bool dma;
	bool frmr;
	bool valid;
	atomic_t users;
	u64 *map;
	u32 map_len;
	u32 max_pages;
	bool mw;
	u8 mw_type;
	u32 mw_qpn;
	struct list_head mw_qp_entry;
	struct sroce_mr *mw_mr;
	atomic_t mw_binds;
	bool dying;
	struct ib_umem *umem;
	struct page **pages;
	size_t npages;
	unsigned int page_offset;
	u64 iova;
	u64 length;
	int access;
	bool user;
};

/* A memory window: the core's object, and its record in the MR table. */
struct sroce_mw {
	struct ib_mw ibmw;
	struct sroce_mr *win;
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
 * @last_port_state: port state last reported with an event; under RTNL
 * @active_speed: IB speed for the netdev's link speed; written under RTNL
 * @active_width: IB width to go with @active_speed
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
 * @lo_queue: packets this device sent to itself, in sending order
 * @lo_tasklet: delivers @lo_queue when no sender does it itself
 * @lo_drain_lock: held by whoever delivers @lo_queue: one drainer at a
 *	time keeps looped-back packets in order whichever CPU sent them
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
	enum ib_port_state last_port_state;
	u16 active_speed;
	u8 active_width;
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
	struct sk_buff_head lo_queue;
	struct tasklet_struct lo_tasklet;
	spinlock_t lo_drain_lock;	/* one drainer of lo_queue */
	struct sroce_mr local_dma_mr;
	spinlock_t mw_lock;	/* bindings against deregistration */
	struct list_head mcast_list;
	spinlock_t mcast_lock;	/* attach and detach */
	u32 num_mcg;
};

struct sroce_qp;
struct sroce_pkt;

struct sroce_ucontext {
	struct ib_ucontext ibuctx;
};

/* A protection domain; @user: user space made it (its budget share). */
struct sroce_pd {
	struct ib_pd ibpd;
	u32 pdn;
	bool user;
};

/**
 * struct sroce_cq - a completion queue.
 * @ibcq: the core's CQ
 * @lock: serialises producers, arming and resizing
 * @ring: the CQE ring
 * @prod: the kernel's own producer index; the shared copy is output only
 * @notify: armed event type (IB_CQ_SOLICITED or IB_CQ_NEXT_COMP), or 0
 * @overrun: a completion was lost (CQ overrun, or a consumer index from
 *	user space that makes no sense) and IB_EVENT_CQ_ERR was raised; it
 *	is raised once, so a consumer that never reads its events cannot
 *	make the kernel queue one per lost completion
 * @user: user space made it (it counts against the users' share)
 * @kernel_events: a kernel CQ's SROCE_CQ_EV_* bits raised, not delivered
 * @notify_work: delivers them from interrupt context, away from the data
 *	path's locks, as a hardware CQ's interrupt would
 */
struct sroce_cq {
	struct ib_cq ibcq;
	spinlock_t lock;	/* producers, arming and resize */
	struct sroce_ring ring;
	u32 prod;
	u8 notify;
	bool overrun;
	bool user;
	unsigned long kernel_events;
	struct irq_work notify_work;
};

enum {
	SROCE_CQ_EV_COMP,	/* comp_handler */
	SROCE_CQ_EV_ERR,	/* IB_EVENT_CQ_ERR */
};

/**
 * struct sroce_srq - a shared receive queue.
 * @ibsrq: the core's SRQ
 * @lock: serialises the responders taking WQEs, and the limit
 * @post_lock: serialises kernel posters
 * @ring: the receive WQE ring (user or kernel consumer produces)
 * @cons: the kernel's own consumer index
 * @limit: armed limit, 0 when not armed
 * @max_sge: SGEs a WQE may carry
 * @broken: its producer index made no sense once; nothing more is taken
 *	from it, and every QP that tries fails (IB_EVENT_SRQ_ERR was raised)
 * @user: user space made it (it counts against the users' share)
 */
struct sroce_srq {
	struct ib_srq ibsrq;
	spinlock_t lock;	/* consumers and limit */
	spinlock_t post_lock;	/* kernel posters */
	struct sroce_ring ring;
	u32 cons;
	u32 limit;
	u32 max_sge;
	bool broken;
	bool user;
};

/**
 * struct sroce_path - how packets of a connected QP are addressed.
 * @dmac: destination MAC from the address vector
 * @ipv6: the GIDs are IPv6 (else IPv4-mapped)
 * @loopback: the destination is this device: bypass the wire
 * @saddr: source address (an IPv4 address in its mapped form)
 * @daddr: destination address
 * @tos: traffic class, with ECT(0) set
 * @ttl: hop limit
 * @flow_label: IPv6 flow label
 * @sport: UDP source port, spreading QPs over flows
 * @sgid_index: index of the source GID (for query_ah)
 * @mcast: the destination is a multicast group
 */
struct sroce_path {
	u8 dmac[ETH_ALEN];
	bool ipv6;
	bool loopback;
	struct in6_addr saddr;
	struct in6_addr daddr;
	u8 tos;
	u8 ttl;
	u32 flow_label;
	__be16 sport;
	u8 sgid_index;
	bool mcast;
};

/**
 * struct sroce_av - the address an AH stands for; see sroce_ah.c.
 * @rcu: frees it after the senders that found it are done
 * @pd: protection domain of the AH
 * @path: packet addressing (the UDP source port is set per packet)
 */
struct sroce_av {
	struct rcu_head rcu;
	struct ib_pd *pd;
	struct sroce_path path;
};

struct sroce_ah {
	struct ib_ah ibah;
	u32 ah_num;
	struct sroce_av *av;
	bool user;
};

/* Per send-queue-slot state the requester keeps beside its WQE copy. */
struct sroce_swqe_state {
	u32 first_psn;		/* PSN of the WQE's first packet */
	u32 npsn;		/* PSNs it spans (a read: its responses) */
	u32 length;		/* message bytes */
	u32 read_off;		/* read/atomic: response bytes placed */
	int status;		/* IB_WC_SUCCESS, or an error found locally */
};

/**
 * struct sroce_req - requester state, under &sroce_qp.req_lock.
 * @fetched: SQ index up to which WQEs were copied into @shadow
 * @head: oldest WQE not yet completed
 * @next: WQE being sent
 * @started: WQEs before it were sent at least once (later sends resend)
 * @off: bytes of @next already sent
 * @sge: SGE of @next that byte @off is in
 * @sge_off: offset of byte @off within that SGE
 * @psn: PSN of the next packet
 * @una: oldest PSN not yet acknowledged
 * @rd_pending: reads and atomics sent and not yet completed
 * @since_ackreq: packets sent since the last one asking for an ACK
 * @retry_left: retransmissions left before the QP fails
 * @rnr_left: RNR retries left (7: unlimited)
 * @rnr_wait: waiting out an RNR NAK's timer before resending
 * @timer_una: @una when the timer was armed, to detect progress
 * @shadow: kernel copies of the send WQEs, the SQ's stride apart
 * @st: per-slot state of the WQEs in @shadow
 */
struct sroce_req {
	u32 fetched;
	u32 head;
	u32 next;
	u32 started;
	u32 off;
	u32 sge;
	u32 sge_off;
	u32 psn;
	u32 una;
	u32 rd_pending;
	u32 since_ackreq;
	u8 retry_left;
	u8 rnr_left;
	bool rnr_wait;
	u32 timer_una;
	u32 gap_psn;		/* read response last asked again ... */
	bool gap_reasked;	/* ... at a gap, if any */
	void *shadow;
	struct sroce_swqe_state *st;
};

/* Replies a responder queues: read responses and atomic acknowledgments. */
enum sroce_reply_kind {
	SROCE_REPLY_READ,
	SROCE_REPLY_ATOMIC,
};

/*
 * A reply the responder still has to send. Replies leave in PSN order, so
 * ACKs for later requests wait behind them (see &sroce_resp.aeth_valid).
 */
struct sroce_reply {
	enum sroce_reply_kind kind;
	u32 psn;		/* PSN of the next packet */
	u64 va;			/* read: where the next payload comes from */
	u32 rkey;
	u32 left;		/* read: bytes still to send */
	bool first;		/* read: no response packet sent yet */
	u64 orig;		/* atomic: the value before the operation */
};

/*
 * A read, atomic, ATOMIC WRITE or FLUSH the responder executed, kept so
 * that a duplicate of it, and nothing else behind the expected PSN, is
 * answered again (IBA 9.9.1.1: a duplicate that matches no request is
 * dropped). An atomic is answered from here, not executed again.
 */
struct sroce_rd_record {
	u32 psn;		/* its first PSN */
	u32 npsn;		/* PSNs it took: for a read, one per response */
	u8 op;			/* SROCE_OP_* of the request */
	bool valid;
	u32 rkey;		/* read: what was asked for */
	u64 va;
	u32 len;
	u64 orig;		/* atomic: the value before the operation */
};

#define SROCE_REPLY_SLOTS	(2 * SROCE_MAX_RD_ATOMIC)
/*
 * Executed reads, atomics, ATOMIC WRITEs and FLUSHes remembered for their
 * duplicates: more than can be outstanding, since a peer may count ATOMIC
 * WRITE and FLUSH outside its read limit.
 */
#define SROCE_RD_RECORDS	(4 * SROCE_MAX_RD_ATOMIC)

/**
 * struct sroce_resp - responder state, under &sroce_qp.resp_lock.
 * @epsn: expected PSN
 * @msn: messages completed
 * @nak_seq_sent: a sequence NAK for @epsn is out; do not repeat it
 * @in_send: a multi-packet SEND is in progress into @rwqe
 * @in_write: a multi-packet RDMA WRITE is in progress
 * @rq_cons: RQ index of the next receive WQE to take
 * @rwqe: copy of the receive WQE a SEND in progress fills
 * @recv_off: bytes placed into @rwqe so far
 * @write_va: where the next WRITE payload goes
 * @write_rkey: the WRITE's rkey
 * @write_left: WRITE bytes still expected
 * @write_len: the WRITE's total length (for WRITE_WITH_IMM completions)
 * @replies: replies waiting to be sent, a ring
 * @rp_head: next reply to send
 * @rp_tail: next free reply slot
 * @aeth_valid: an ACK or RNR NAK waits for @replies to drain
 * @aeth_syn: its syndrome
 * @aeth_psn: its PSN
 * @last_wqe_event: IB_EVENT_QP_LAST_WQE_REACHED was raised (SRQ QPs)
 * @uc_reuse: UC: @rwqe is left from a message lost midway, for the next
 * @rd_done: the last reads, atomics, ATOMIC WRITEs and FLUSHes executed
 * @rd_next: slot of @rd_done for the next one
 */
struct sroce_resp {
	u32 epsn;
	u32 msn;
	bool nak_seq_sent;
	bool in_send;
	bool in_write;
	u32 rq_cons;
	struct sroce_recv_wqe *rwqe;
	u32 recv_off;
	u64 write_va;
	u32 write_rkey;
	u32 write_left;
	u32 write_len;
	struct sroce_reply replies[SROCE_REPLY_SLOTS];
	u32 rp_head;
	u32 rp_tail;
	bool aeth_valid;
	u8 aeth_syn;
	u32 aeth_psn;
	bool last_wqe_event;
	bool uc_reuse;
	struct sroce_rd_record rd_done[SROCE_RD_RECORDS];
	u32 rd_next;
};

/* Who waits in sroce_tx_credit.paused. */
enum {
	SROCE_TX_PAUSED_REQ,
	SROCE_TX_PAUSED_RESP,
};

/**
 * struct sroce_tx_credit - a queue pair's packets still queued below it.
 * @held: those packets, plus one while the queue pair lives
 * @paused: SROCE_TX_PAUSED_* bits: who waits for the packets to drain
 * @qp: the queue pair (RCU); NULL once it is being destroyed
 * @rcu: frees the credit after the last packet and the queue pair
 *
 * Packets can outlive their queue pair in a qdisc or a NIC ring, so the
 * count lives apart from it and goes when both are gone.
 */
struct sroce_tx_credit {
	atomic_t held;
	unsigned long paused;
	struct sroce_qp __rcu *qp;
	struct rcu_head rcu;
};

/**
 * struct sroce_qp - a queue pair.
 * @ibqp: the core's QP
 * @lock: serialises modify and query
 * @state: current IBA state; changed under both data-path locks
 * @attr: attributes as last set (qp_state and cap are kept separately)
 * @av: primary path, holding a GID attribute reference while @av_valid
 * @av_valid: @av has been set
 * @cap: capabilities granted at creation
 * @sq_sig_all: every send WQE completes
 * @kernel: created by a kernel consumer, which posts through the verbs
 * @mcast_attached: multicast groups it is attached to (mcast_lock)
 * @mw_bound: type 2 memory windows bound through it (the device's
 *	mw_lock); they are invalidated when it is destroyed
 * @sq_post_lock: serialises kernel posters to @sq
 * @rq_post_lock: serialises kernel posters to @rq
 * @sq: send ring (user or kernel consumer produces)
 * @rq: receive ring (user or kernel consumer produces)
 * @path: packet addressing, set on the way to RTR
 * @credit: its packets queued below it (transmit backpressure)
 * @mtu: path MTU in bytes
 * @dead: being destroyed: arm no timer, queue no work
 * @req_lock: requester and completer state
 * @req: requester state
 * @resp_lock: responder state
 * @resp: responder state
 * @timer: retransmission and RNR timer
 * @req_work: continues sending where a softirq pass stopped
 * @resp_work: sends read responses too large for one softirq pass
 * @err_work: completes everything outstanding after a data-path error
 * @event_work: delivers a kernel QP's async events (@events_pending)
 * @events_pending: enum ib_event_type bits raised and not yet delivered
 */
struct sroce_qp {
	struct ib_qp ibqp;
	struct mutex lock;	/* modify and query */
	enum ib_qp_state state;
	struct ib_qp_attr attr;
	struct rdma_ah_attr av;
	bool av_valid;
	struct ib_qp_cap cap;
	bool sq_sig_all;
	bool kernel;
	u32 mcast_attached;
	struct list_head mw_bound;
	spinlock_t sq_post_lock;	/* kernel posters to sq */
	spinlock_t rq_post_lock;	/* kernel posters to rq */
	struct sroce_ring sq;
	struct sroce_ring rq;
	struct sroce_path path;
	struct sroce_tx_credit *credit;
	u32 mtu;
	bool dead;
	spinlock_t req_lock;	/* requester */
	struct sroce_req req;
	spinlock_t resp_lock;	/* responder */
	struct sroce_resp resp;
	struct hrtimer timer;
	struct work_struct req_work;
	struct work_struct resp_work;
	struct work_struct err_work;
	struct work_struct event_work;
	unsigned long events_pending;
};

static inline struct sroce_qp *to_sqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct sroce_qp, ibqp);
}

static inline struct sroce_cq *to_scq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct sroce_cq, ibcq);
}

static inline struct sroce_srq *to_ssrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct sroce_srq, ibsrq);
}

static inline struct sroce_mr *to_smr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct sroce_mr, ibmr);
}

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

static inline void sroce_count(struct sroce_dev *sdev, enum sroce_counter c)
{
	this_cpu_inc(sdev->counters->cnt[c]);
}

u64 sroce_counter_read(struct sroce_dev *sdev, enum sroce_counter c);

/* sroce_verbs.c */
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
int sroce_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int sroce_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
struct ib_mr *sroce_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata);
int sroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
struct ib_mr *sroce_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *sroce_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			     u32 max_num_sg);
int sroce_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset);
int sroce_mr_fast_reg(struct sroce_qp *qp, u32 mr_index, u32 key, int access);
int sroce_mr_invalidate(struct sroce_qp *qp, u32 key);
void sroce_mr_init_local_dma(struct sroce_dev *sdev);
int sroce_mr_insert(struct sroce_dev *sdev, struct sroce_mr *mr, bool user);
void sroce_mr_remove(struct sroce_dev *sdev, struct sroce_mr *mr);
bool sroce_budget_take(struct sroce_budget *b, u32 max, bool user);
void sroce_budget_put(struct sroce_budget *b, bool user);
struct sroce_mr *sroce_mr_lookup(struct sroce_qp *qp, u32 key, u64 va,
				 u64 len, int access);
void sroce_mr_put(struct sroce_mr *mr);
bool sroce_mr_check(struct sroce_qp *qp, u32 key, u64 va, u64 len, int access);
struct sroce_mr *sroce_mr_lookup_region(struct sroce_qp *qp, u32 key,
					int access);
void sroce_mr_copy_from(struct sroce_mr *mr, u64 va, void *dst, u32 len);
void sroce_mr_write(struct sroce_mr *mr, u64 va, const void *src, u32 len);
int sroce_mr_copy_to_skb(struct sroce_mr *mr, u64 va,
			 const struct sk_buff *skb, int off, u32 len);
u64 *sroce_mr_map_u64(struct sroce_mr *mr, u64 va);
int sroce_sgl_place(struct sroce_qp *qp, const struct sroce_sge *sge,
		    u32 nsge, u32 pos, const struct sk_buff *skb, int off,
		    u32 len);
int sroce_sgl_place_buf(struct sroce_qp *qp, const struct sroce_sge *sge,
			u32 nsge, u32 pos, const void *buf, u32 len);
int sroce_sgl_gather(struct sroce_qp *qp, const struct sroce_sge *sge,
		     u32 nsge, u32 *sge_idx, u32 *sge_off, void *dst, u32 len);
struct rdma_hw_stats *sroce_alloc_hw_port_stats(struct ib_device *ibdev,
						u32 port);
int sroce_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port, int index);

/* sroce_ah.c */
int sroce_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		    struct ib_udata *udata);
int sroce_destroy_ah(struct ib_ah *ibah, u32 flags);
int sroce_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr);
u32 sroce_ah_num(struct ib_ah *ibah);
const struct sroce_av *sroce_av_lookup_rcu(struct sroce_dev *sdev,
					   u32 ah_num, struct ib_pd *pd);

/* sroce_mw.c */
int sroce_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int sroce_dealloc_mw(struct ib_mw *ibmw);
int sroce_mw_bind(struct sroce_qp *qp, const struct sroce_send_wqe *w);
void sroce_mw_unbind_qp(struct sroce_qp *qp);
int sroce_mw_invalidate(struct sroce_qp *qp, struct sroce_mr *win);
struct sroce_mr *sroce_mw_resolve(struct sroce_mr *win, struct sroce_qp *qp,
				  u64 va, u64 end, int access);
bool sroce_mr_unbindable(struct sroce_dev *sdev, struct sroce_mr *mr);

/* sroce_mcast.c */
int sroce_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int sroce_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
void sroce_mcast_detach_all(struct sroce_qp *qp);
bool sroce_mcast_has(struct sroce_dev *sdev, const union ib_gid *gid);
void sroce_mcast_rcv(struct sroce_dev *sdev, struct sroce_pkt *pkt);

/* sroce_srq.c */
int sroce_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata);
int sroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int sroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata);
int sroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int sroce_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr);
bool sroce_srq_take(struct sroce_qp *qp);

/* sroce_cq.c */
int sroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    sroce_create_cq_arg_t *arg);
int sroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int sroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
void sroce_cq_purge_qp(struct sroce_cq *cq, u32 qpn);
int sroce_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
void sroce_cq_post(struct sroce_cq *cq, const struct sroce_cqe *cqe,
		   bool solicited);

/* sroce_kverbs.c */
int sroce_kpost_send(struct sroce_qp *qp, const struct ib_send_wr *wr,
		     const struct ib_send_wr **bad_wr);
int sroce_kpost_recv(struct sroce_qp *qp, const struct ib_recv_wr *wr,
		     const struct ib_recv_wr **bad_wr);
int sroce_kpost_recv_ring(struct sroce_ring *ring, spinlock_t *lock,
			  u32 max_sge, const struct ib_recv_wr *wr,
			  const struct ib_recv_wr **bad_wr);
int sroce_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);

/* sroce_qp.c */
int sroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata);
int sroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
int sroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata);
int sroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init);
int sroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr);
int sroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr);
void sroce_qp_set_error(struct sroce_qp *qp);
void sroce_qp_sq_doorbell(struct sroce_qp *qp);
void sroce_qp_rq_doorbell(struct sroce_qp *qp);
void sroce_qp_event(struct sroce_qp *qp, enum ib_event_type type);
void sroce_qp_set_sq_error(struct sroce_qp *qp);
void sroce_qp_bad_ring(struct sroce_qp *qp);
struct sroce_qp *sroce_qp_lookup_rcu(struct sroce_dev *sdev, u32 qpn);

/*
 * Queue pair state as the data path sees it; changed under both data-path
 * locks, so holding either one keeps it stable.
 */
static inline enum ib_qp_state sroce_qp_state(struct sroce_qp *qp)
{
	return READ_ONCE(qp->state);
}

/* PSNs a SEND or WRITE takes, or a READ's responses: one per path MTU. */
static inline u32 sroce_msg_npsn(const struct sroce_qp *qp, u32 len)
{
	return max_t(u32, 1, DIV_ROUND_UP(len, qp->mtu));
}

/* Compare 24-bit PSNs: negative, zero or positive as a is before b. */
static inline int sroce_psn_cmp(u32 a, u32 b)
{
	return (s32)((a - b) << 8);
}

/**
 * struct sroce_pkt - a received packet that passed validation.
 * @skb: the packet, IP header at skb->data, headers through the payload
 *	start in the linear area
 * @hdr: the BTH and extension headers (in the linear area)
 * @opcode: BTH opcode
 * @psn: BTH PSN
 * @ackreq: the sender asks for an acknowledgment
 * @se: solicited event
 * @hdr_len: bytes of BTH and extension headers
 * @payload_off: offset of the payload from skb->data
 * @payload_len: payload bytes, without pad and ICRC
 * @saddr: source IP address (IPv4 in its mapped form)
 */
struct sroce_pkt {
	struct sk_buff *skb;
	struct in6_addr saddr;
	const u8 *hdr;
	u8 opcode;
	u32 psn;
	bool ackreq;
	bool se;
	unsigned int hdr_len;
	unsigned int payload_off;
	unsigned int payload_len;
};

/* sroce_ud.c */
void sroce_ud_rcv(struct sroce_qp *qp, struct sroce_pkt *pkt);

/* sroce_rq.c */
void sroce_recv_wqe_copy(struct sroce_dev *sdev, const struct sroce_ring *ring,
			 u32 idx, u32 max_sge, struct sroce_recv_wqe *dst);
bool sroce_rq_take(struct sroce_qp *qp);
void sroce_rq_release(struct sroce_qp *qp);
void sroce_rq_flush(struct sroce_qp *qp);
void sroce_rq_reset(struct sroce_qp *qp);

/* sroce_resp.c */
void sroce_resp_init(struct sroce_qp *qp);
void sroce_resp_reset(struct sroce_qp *qp);
void sroce_resp_rcv(struct sroce_qp *qp, struct sroce_pkt *pkt);
void sroce_resp_work(struct work_struct *work);
void sroce_resp_flush(struct sroce_qp *qp);

/* sroce_tx.c */
int sroce_path_from_ah(struct sroce_dev *sdev, const struct rdma_ah_attr *av,
		       struct sroce_path *p);
int sroce_path_init(struct sroce_qp *qp);
struct sk_buff *sroce_tx_alloc_to(struct sroce_dev *sdev,
				  const struct sroce_path *p, u32 dqpn,
				  u8 opcode, u32 psn, bool ackreq, bool se,
				  unsigned int ext_len, unsigned int payload,
				  void **ext, void **payload_buf);
void sroce_tx_send_to(struct sroce_dev *sdev, const struct sroce_path *p,
		      struct sk_buff *skb);

/* A connected QP's packets go along its path to its one peer. */
static inline struct sk_buff *
sroce_tx_alloc(struct sroce_qp *qp, u8 opcode, u32 psn, bool ackreq, bool se,
	       unsigned int ext_len, unsigned int payload, void **ext,
	       void **payload_buf)
{
	return sroce_tx_alloc_to(to_sdev(qp->ibqp.device), &qp->path,
				 qp->attr.dest_qp_num, opcode, psn, ackreq, se,
				 ext_len, payload, ext, payload_buf);
}

int sroce_tx_credit_init(struct sroce_qp *qp);
void sroce_tx_credit_detach(struct sroce_qp *qp);
void sroce_tx_credit_put(struct sroce_tx_credit *c);
void sroce_tx_credit_wait_all(void);
bool sroce_tx_may_send(struct sroce_qp *qp, int who);
void sroce_tx_charge(struct sroce_qp *qp, struct sk_buff *skb);

static inline void sroce_tx_send(struct sroce_qp *qp, struct sk_buff *skb)
{
	sroce_tx_charge(qp, skb);
	sroce_tx_send_to(to_sdev(qp->ibqp.device), &qp->path, skb);
}

void sroce_lo_init(struct sroce_dev *sdev);
void sroce_lo_drain(struct sroce_dev *sdev);
void sroce_lo_exit(struct sroce_dev *sdev);

/* sroce_net.c */
enum ib_port_state sroce_port_state(struct net_device *ndev);
enum ib_mtu sroce_active_mtu(struct net_device *ndev);
enum ib_mtu sroce_max_mtu(struct net_device *ndev);
u8 sroce_phys_state(struct net_device *ndev);
int sroce_net_attach(struct sroce_dev *sdev);
void sroce_net_detach(struct sroce_dev *sdev);
struct sroce_dev *sroce_dev_from_netdev_rtnl(struct net_device *ndev);
void sroce_port_sync_rtnl(struct sroce_dev *sdev);
int sroce_net_init(void);
void sroce_net_exit(void);

/* sroce_recv.c, sroce_icrc.c */
void sroce_rcv(struct sroce_dev *sdev, struct sk_buff *skb);
void sroce_rcv_gso(struct sroce_dev *sdev, struct sk_buff *skb);
__le32 sroce_icrc(const struct sk_buff *skb, unsigned int bth_off,
		  unsigned int icrc_off);

/* sroce_main.c */
void sroce_dev_netdev_gone(struct sroce_dev *sdev);
extern struct workqueue_struct *sroce_data_wq;
extern struct workqueue_struct *sroce_kernel_wq;

#endif /* SROCE_H */
