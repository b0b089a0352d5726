/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Limits and protocol constants of the device.
 */
#ifndef SROCE_PARAM_H
#define SROCE_PARAM_H

#include <linux/bits.h>
#include <linux/sizes.h>

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
/* Passes of SROCE_TX_BUDGET a data-path work item makes before it yields. */
#define SROCE_WORK_PASSES	8
/*
 * A queue pair pauses while the stack below it (qdisc, NIC ring, loopback
 * queue) holds this many of its packets, and resumes once it holds at
 * most the low mark: a slow link then queues instead of dropping.
 */
#define SROCE_TX_INFLIGHT_HIGH	64
#define SROCE_TX_INFLIGHT_LOW	32
/*
 * RC payloads from this size on are sent as references to the user's
 * pages; below it, copying costs less than taking page references.
 */
#define SROCE_TX_ZCOPY_MIN	1024
/*
 * An RC SEND, WRITE or READ response to a queue pair of the same device
 * goes in units of up to SROCE_LO_UNIT_NPSN path MTUs and
 * SROCE_LO_UNIT_BYTES, each unit one packet through the loop
 * (sroce_loop.c) that stands for as many PSNs: the per-packet work is
 * paid once per unit. A unit's pages fill all fragments of its packet but
 * two: the ICRC trailer and the page a misaligned buffer spills into; the
 * IP length field bounds it too.
 */
#define SROCE_LO_UNIT_NPSN	SROCE_ACKREQ_EVERY
#define SROCE_LO_UNIT_BYTES	min_t(u32, (MAX_SKB_FRAGS - 2) * PAGE_SIZE, \
				      SZ_64K - SZ_4K)
/*
 * A train (sroce_tx_train_add()) holds at most SROCE_TX_TRAIN_SEGS packets
 * (one ACK request's worth) and SROCE_TX_TRAIN_BYTES from the IP header
 * on: IP's 16-bit length must hold it, and with its Ethernet header it
 * stays below the 64 KiB a netdev takes whole (gso_max_size).
 */
#define SROCE_TX_TRAIN_SEGS	SROCE_ACKREQ_EVERY
#define SROCE_TX_TRAIN_BYTES	(SZ_64K - 1 - ETH_HLEN)
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

#endif /* SROCE_PARAM_H */
